//! The TREC spam track's immediate-feedback protocol (Cormack and Lynam 2005): messages are
//! taken in order; each is first classified by a filter that has learned every earlier message
//! and nothing else, then learned with its true label. Every model starts from nothing. The
//! vocabulary grows as messages are learned: a message is scored on the tokens seen before it.
//! The Naive Bayes models learn exactly ([`OnlineBernoulliNb`], [`OnlineMultinomialNb`]: the
//! batch formulas kept as counts), the SVM by passive-aggressive steps and logistic regression
//! by stochastic gradient steps (their `learn`). P(spam) is the logistic of the decision value,
//! so the threshold measures cut every model at decision 0.

use super::FoldResult;
use crate::features::{FeatureId, SparseVector};
use crate::label::Label;
use crate::models::math::sigmoid;
use crate::models::{
    LinearSvm, LogisticRegression, ModelParams, OnlineBernoulliNb, OnlineMultinomialNb,
};
use crate::tokenize::Token;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

/// One model learning online.
enum OnlineModel {
    BernoulliNb(OnlineBernoulliNb),
    MultinomialNb(OnlineMultinomialNb),
    LinearSvm(LinearSvm),
    LogisticRegression(LogisticRegression),
}

impl OnlineModel {
    fn new(params: &ModelParams) -> OnlineModel {
        match params {
            ModelParams::BernoulliNb(p) => OnlineModel::BernoulliNb(OnlineBernoulliNb::new(p)),
            ModelParams::MultinomialNb(p) => {
                OnlineModel::MultinomialNb(OnlineMultinomialNb::new(p))
            }
            ModelParams::LinearSvm(p) => OnlineModel::LinearSvm(p.untrained()),
            ModelParams::LogisticRegression(p) => OnlineModel::LogisticRegression(p.untrained()),
        }
    }

    fn decision(&self, x: &SparseVector) -> f64 {
        match self {
            OnlineModel::BernoulliNb(m) => m.decision(x),
            OnlineModel::MultinomialNb(m) => m.decision(x),
            OnlineModel::LinearSvm(m) => m.function().decision(x),
            OnlineModel::LogisticRegression(m) => m.function().decision(x),
        }
    }

    fn learn(&mut self, x: &SparseVector, label: Label) {
        match self {
            OnlineModel::BernoulliNb(m) => m.learn(x, label),
            OnlineModel::MultinomialNb(m) => m.learn(x, label),
            OnlineModel::LinearSvm(m) => m.learn(x, label),
            OnlineModel::LogisticRegression(m) => m.learn(x, label),
        }
    }
}

/// Each message's count vector over the growing vocabulary, and the vocabulary size before
/// it was learned (the features it may be scored on).
fn growing_vectors(tokens: &[Vec<Token>]) -> Vec<(SparseVector, FeatureId)> {
    let mut ids: HashMap<&str, FeatureId> = HashMap::new();
    tokens
        .iter()
        .map(|message| {
            let known = ids.len() as FeatureId;
            let row: Vec<FeatureId> = message
                .iter()
                .map(|t| {
                    let next = ids.len() as FeatureId;
                    *ids.entry(t.as_str()).or_insert(next)
                })
                .collect();
            (SparseVector::from_ids(row), known)
        })
        .collect()
}

/// Runs the protocol over messages in the given order for every model (models in parallel;
/// the result does not depend on the thread count). Each result covers all messages, as one
/// "fold" numbered 0: `train_seconds` is the time spent learning, summed over messages.
pub fn run(models: &[ModelParams], tokens: &[Vec<Token>], labels: &[Label]) -> Vec<FoldResult> {
    let vectors = growing_vectors(tokens);
    models
        .par_iter()
        .map(|params| {
            let mut model = OnlineModel::new(params);
            let (mut learn_seconds, mut score_seconds) = (0.0, 0.0);
            let mut decisions = Vec::with_capacity(labels.len());
            for ((x, known), &label) in vectors.iter().zip(labels) {
                let started = Instant::now();
                let mut seen = x.clone();
                seen.retain(|id, _| id < *known);
                decisions.push(model.decision(&seen));
                score_seconds += started.elapsed().as_secs_f64();
                let started = Instant::now();
                model.learn(x, label);
                learn_seconds += started.elapsed().as_secs_f64();
            }
            FoldResult {
                model: params.kind(),
                fold: 0,
                p_spam: decisions.iter().map(|&d| sigmoid(d)).collect(),
                decisions,
                labels: labels.to_vec(),
                train_seconds: learn_seconds,
                score_seconds,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ModelKind;

    fn toks(s: &str) -> Vec<Token> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn each_message_is_scored_before_it_is_learned() {
        let tokens: Vec<Vec<Token>> = ["a b", "c d b", "a b", "c d", "a b e", "c d f"]
            .into_iter()
            .map(toks)
            .collect();
        let vectors = growing_vectors(&tokens);
        let known: Vec<FeatureId> = vectors.iter().map(|(_, k)| *k).collect();
        assert_eq!(known, [0, 2, 4, 4, 4, 5]);
        assert_eq!(vectors[1].0.ids(), [1, 2, 3]);
        let labels = [Label::Spam, Label::Ham].repeat(3);
        let params: Vec<ModelParams> = ModelKind::ALL
            .iter()
            .map(|&k| ModelParams::default_for(k))
            .collect();
        for r in run(&params, &tokens, &labels) {
            // Nothing learned yet: the first message is a coin toss for every model.
            assert_eq!(r.decisions[0], 0.0, "{}", r.model);
            // Like the spam before them ("e" is new), the fifth leans to spam; the last, like
            // the ham, to ham.
            assert!(r.decisions[4] > 0.0, "{}: {:?}", r.model, r.decisions);
            assert!(r.decisions[5] < 0.0, "{}: {:?}", r.model, r.decisions);
            assert_eq!(r.labels, labels);
            assert_eq!(r.p_spam.len(), 6);
        }
    }
}
