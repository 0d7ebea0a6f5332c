//! The TREC spam track's immediate-feedback protocol (Cormack and Lynam 2005): messages are
//! taken in order; each is first classified by a filter that has learned every earlier message
//! and nothing else, then learned with its true label. This is [`SpamFilter`] itself, the code
//! every user's `learn` runs: one filter holding every model (and their fusion, if asked for)
//! starts as [`SpamFilter::empty`] and for each message [`SpamFilter::classify_tokens`] with
//! each model, then [`SpamFilter::learn_tokens`], so the vocabulary grows
//! as messages are learned (a message is scored on the tokens seen before it), a message seen
//! before with the same label is not learned twice, and the figures are what a user gets. No
//! model learned from nothing has Platt calibration: P(spam) is the logistic of the decision
//! value, so the threshold measures cut every model at decision 0.

use super::{FoldResult, TokenizedMail};
use crate::error::Result;
use crate::filter::{SpamFilter, TrainParams};
use crate::label::Label;
use crate::models::{ModelKind, ModelParams};
use crate::tokenize::TokenizerConfig;
use std::time::Instant;

/// Runs the protocol over messages in the given order with one filter holding `models` (as a
/// user's does: the models learn from the same messages alone, so each model's figures are
/// those of a filter holding only it), with the filter's tokenizer settings `tokenizer` (the
/// messages were tokenized with them). One result per model, in the order of `models`, each
/// covering all messages as one "fold" numbered 0: `classify_seconds` is the model's own
/// classifying time, `train_seconds` the filter's learning time (all its models together),
/// summed over messages. Fails on invalid model parameters.
pub fn run(
    models: &[ModelParams],
    tokenizer: &TokenizerConfig,
    mail: &TokenizedMail,
) -> Result<Vec<FoldResult>> {
    let labels = &mail.labels;
    let mut filter = SpamFilter::empty(&TrainParams {
        tokenizer: tokenizer.clone(),
        models: models.to_vec(),
        active: None,
        ..TrainParams::default()
    })?;
    let kinds: Vec<ModelKind> = models.iter().map(ModelParams::kind).collect();
    let mut results: Vec<FoldResult> = kinds
        .iter()
        .map(|&model| FoldResult {
            model,
            fold: 0,
            p_spam: Vec::with_capacity(labels.len()),
            decisions: Vec::with_capacity(labels.len()),
            labels: labels.to_vec(),
            messages: (0..labels.len()).collect(),
            undecided: 0,
            train_seconds: 0.0,
            classify_seconds: 0.0,
        })
        .collect();
    let mut learn_seconds = 0.0;
    for (i, (&label, tokenized)) in labels.iter().zip(&mail.tokenize_seconds).enumerate() {
        let message = &mail.all_tokens(i);
        let decided = !filter.summary().messages.contains(&0);
        for r in &mut results {
            if !decided {
                r.undecided = i + 1;
            }
            let started = Instant::now();
            let c = filter
                .classify_tokens(message, r.model)
                .expect("the filter holds every model asked for");
            r.decisions.push(c.decision);
            r.p_spam.push(c.score.p_spam());
            r.classify_seconds += tokenized + started.elapsed().as_secs_f64();
        }
        let started = Instant::now();
        filter.learn_tokens(message, label)?;
        learn_seconds += started.elapsed().as_secs_f64();
    }
    for r in &mut results {
        r.train_seconds = learn_seconds;
    }
    Ok(results)
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
    use crate::tokenize::Tokens;

    fn toks(s: &str) -> Tokens {
        s.split_whitespace().collect()
    }

    /// The messages `texts` (words split at spaces) with `labels`, untimed.
    fn mail(texts: &[&str], labels: &[Label]) -> TokenizedMail {
        TokenizedMail {
            tokens: texts.iter().map(|t| toks(t)).collect(),
            hashed: vec![Vec::new(); texts.len()],
            labels: labels.to_vec(),
            tokenize_seconds: vec![0.0; texts.len()],
            ..TokenizedMail::default()
        }
    }

    #[test]
    fn each_message_is_scored_before_it_is_learned() {
        let labels = [Label::Spam, Label::Ham].repeat(3);
        let mail = mail(
            &["a b", "c d b", "a b g", "c d h", "a b e", "c d f"],
            &labels,
        );
        let params: Vec<ModelParams> = ModelKind::WITH_FUSION
            .iter()
            .map(|&k| ModelParams::default_for(k))
            .collect();
        for r in run(&params, &TokenizerConfig::default(), &mail).unwrap() {
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
    fn each_models_figures_are_those_of_a_filter_holding_it_alone() {
        let labels = [Label::Spam, Label::Ham].repeat(4)[..7].to_vec();
        let mail = mail(
            &["a b", "c d b", "a b g", "c d h", "a b e", "c d f", "a b"],
            &labels,
        );
        let params: Vec<ModelParams> = ModelKind::WITH_FUSION
            .iter()
            .map(|&k| ModelParams::default_for(k))
            .collect();
        let together = run(&params, &TokenizerConfig::default(), &mail).unwrap();
        assert_eq!(together.len(), 5);
        for (p, r) in params.iter().zip(&together) {
            assert_eq!(r.model, p.kind());
            if p.kind() == ModelKind::Fusion {
                continue;
            }
            let alone = run(&[*p], &TokenizerConfig::default(), &mail).unwrap();
            assert_eq!(alone[0].decisions, r.decisions, "{}", r.model);
            assert_eq!(alone[0].p_spam, r.p_spam, "{}", r.model);
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
            messages: (0..5).collect(),
            undecided: 0,
            train_seconds: 0.0,
            classify_seconds: 0.0,
        };
        assert_eq!(learning_curve(&result, 2), [Some(100.0), Some(0.0), None]);
    }
}
