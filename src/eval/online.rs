//! The TREC spam track's immediate-feedback protocol (Cormack and Lynam 2005): messages are
//! taken in order; each is first classified by a filter that has learned every earlier message
//! and nothing else, then learned with its true label. This is [`SpamFilter`] itself, the code
//! every user's `learn` runs: each model starts as [`SpamFilter::empty`] and for each message
//! [`SpamFilter::classify_tokens`] then [`SpamFilter::learn_tokens`], so the vocabulary grows
//! as messages are learned (a message is scored on the tokens seen before it), a message seen
//! before with the same label is not learned twice, and the figures are what a user gets. No
//! model learned from nothing has Platt calibration: P(spam) is the logistic of the decision
//! value, so the threshold measures cut every model at decision 0.

use super::FoldResult;
use crate::error::Result;
use crate::filter::{ActiveModel, SpamFilter, TrainParams};
use crate::label::Label;
use crate::models::ModelParams;
use crate::tokenize::{Token, TokenizerConfig};
use rayon::prelude::*;
use std::time::Instant;

/// Runs the protocol over messages in the given order for every model (each in its own
/// filter, models in parallel; the result does not depend on the thread count), with the
/// filters' tokenizer settings `tokenizer` (the messages were tokenized with them). Each result
/// covers all messages, as one "fold" numbered 0: `train_seconds` is the time spent learning,
/// summed over messages. Fails on invalid model parameters.
pub fn run(
    models: &[ModelParams],
    tokenizer: &TokenizerConfig,
    tokens: &[Vec<Token>],
    labels: &[Label],
) -> Result<Vec<FoldResult>> {
    models
        .par_iter()
        .map(|params| {
            let kind = params.kind();
            let mut filter = SpamFilter::empty(&TrainParams {
                tokenizer: tokenizer.clone(),
                models: vec![*params],
                active: Some(ActiveModel::Fixed(kind)),
                ..TrainParams::default()
            })?;
            let (mut learn_seconds, mut score_seconds) = (0.0, 0.0);
            let (mut decisions, mut p_spam) = (Vec::new(), Vec::new());
            for (message, &label) in tokens.iter().zip(labels) {
                let started = Instant::now();
                let c = filter
                    .classify_tokens(message, kind)
                    .expect("the filter holds this model");
                decisions.push(c.decision);
                p_spam.push(c.score.p_spam());
                score_seconds += started.elapsed().as_secs_f64();
                let started = Instant::now();
                filter.learn_tokens(message, label)?;
                learn_seconds += started.elapsed().as_secs_f64();
            }
            Ok(FoldResult {
                model: kind,
                fold: 0,
                p_spam,
                decisions,
                labels: labels.to_vec(),
                train_seconds: learn_seconds,
                score_seconds,
            })
        })
        .collect()
}

/// The learning curve of an online run: (1-AUC)% of the decisions of each successive `window`
/// messages (the last window may be shorter), so a learner that improves with the stream's
/// length shows it. A window holding one class only has no ROC area: `None`.
pub fn learning_curve(result: &FoldResult, window: usize) -> Vec<Option<f64>> {
    result
        .decisions
        .chunks(window.max(1))
        .zip(result.labels.chunks(window.max(1)))
        .map(|(d, l)| {
            let both = l.contains(&Label::Spam) && l.contains(&Label::Ham);
            both.then(|| 100.0 * (1.0 - crate::models::auc::auc(d, l)))
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
        let tokens: Vec<Vec<Token>> = ["a b", "c d b", "a b g", "c d h", "a b e", "c d f"]
            .into_iter()
            .map(toks)
            .collect();
        let labels = [Label::Spam, Label::Ham].repeat(3);
        let params: Vec<ModelParams> = ModelKind::ALL
            .iter()
            .map(|&k| ModelParams::default_for(k))
            .collect();
        for r in run(&params, &TokenizerConfig::default(), &tokens, &labels).unwrap() {
            // Nothing learned yet: the first message is a coin toss for every model.
            assert_eq!(r.decisions[0], 0.0, "{}", r.model);
            assert_eq!(r.p_spam[0], 0.5, "{}", r.model);
            // Like the spam before them ("e" is new, "g" and "h" learned once), the fifth leans to spam; the last, like
            // the ham, to ham.
            assert!(r.decisions[4] > 0.0, "{}: {:?}", r.model, r.decisions);
            assert!(r.decisions[5] < 0.0, "{}: {:?}", r.model, r.decisions);
            assert_eq!(r.labels, labels);
            assert_eq!(r.p_spam.len(), 6);
        }
    }

    #[test]
    fn learning_curve_scores_each_window_alone() {
        let result = FoldResult {
            model: ModelKind::LinearSvm,
            fold: 0,
            // First window ranked backwards, second perfectly, third holds one class.
            decisions: vec![1.0, -1.0, -1.0, 1.0, 0.0],
            p_spam: vec![0.5; 5],
            labels: vec![
                Label::Ham,
                Label::Spam,
                Label::Ham,
                Label::Spam,
                Label::Spam,
            ],
            train_seconds: 0.0,
            score_seconds: 0.0,
        };
        assert_eq!(learning_curve(&result, 2), [Some(100.0), Some(0.0), None]);
    }
}
