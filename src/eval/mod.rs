//! Comparing models on labeled mail. [`CrossValidation`] runs stratified k-fold
//! cross-validation: each fold builds its own vocabulary from its training messages only (so
//! nothing about the test messages leaks into training), fits every model from scratch and
//! scores the held-out messages. Folds run in parallel; results do not depend on the thread
//! count. [`online`] runs the TREC immediate-feedback protocol instead. [`metrics`] holds the
//! measures, [`report`] their summary, [`roc`] the ROC chart.

pub mod metrics;
pub mod online;
pub mod report;
pub mod roc;

use crate::error::Result;
use crate::features::{Dataset, VocabularyParams, stratified_folds, training_indices};
use crate::label::{Label, SpamScore};
use crate::models::{Classifier, ModelKind, ModelParams};
use crate::tokenize::Token;
use rayon::prelude::*;
use std::time::Instant;

/// How to cross-validate.
#[derive(Debug, Clone)]
pub struct CrossValidation {
    /// Number of folds (at least 2).
    pub folds: usize,
    /// Seed of the fold split (and of the models' internal randomness).
    pub seed: u64,
    /// Vocabulary settings, applied to each training fold.
    pub vocabulary: VocabularyParams,
    /// The models to compare (each fitted with its Platt scaling where it needs one).
    pub models: Vec<ModelParams>,
}

/// One model's predictions on one held-out fold.
#[derive(Debug, Clone)]
pub struct FoldResult {
    /// Which model.
    pub model: ModelKind,
    /// Fold number, from 0.
    pub fold: usize,
    /// Raw decision values of the held-out messages.
    pub decisions: Vec<f64>,
    /// P(spam) of the held-out messages.
    pub p_spam: Vec<f64>,
    /// True labels of the held-out messages.
    pub labels: Vec<Label>,
    /// Seconds to fit the model (calibration included; vocabulary excluded).
    pub train_seconds: f64,
    /// Seconds to score the held-out count vectors.
    pub score_seconds: f64,
}

impl CrossValidation {
    /// Runs the folds on tokenized messages. Results are ordered by fold, then model.
    ///
    /// Refused with [`Error::Config`](crate::Error::Config) unless there are at least 2 folds
    /// and at least as many messages of each class as folds: a fold without a spam or a ham
    /// message has no ROC curve, and its measures would be NaN.
    pub fn run(&self, tokens: &[Vec<Token>], labels: &[Label]) -> Result<Vec<FoldResult>> {
        let [ham, spam] = Label::ALL.map(|l| labels.iter().filter(|&&x| x == l).count());
        if self.folds < 2 || self.folds > ham.min(spam) {
            return Err(crate::Error::Config(format!(
                "cross-validation with {} folds needs at least 2 folds and at least as many \
                 messages of each class as folds, but there are {spam} spam and {ham} ham: \
                 use between 2 and {} folds",
                self.folds,
                ham.min(spam)
            )));
        }
        let folds = stratified_folds(labels, self.folds, self.seed);
        let per_fold: Vec<Result<Vec<FoldResult>>> = folds
            .par_iter()
            .enumerate()
            .map(|(k, test)| self.run_fold(k, test, &folds, tokens, labels))
            .collect();
        let mut out = Vec::new();
        for fold in per_fold {
            out.extend(fold?);
        }
        Ok(out)
    }

    fn run_fold(
        &self,
        k: usize,
        test: &[usize],
        folds: &[Vec<usize>],
        tokens: &[Vec<Token>],
        labels: &[Label],
    ) -> Result<Vec<FoldResult>> {
        let train = training_indices(folds, k);
        let vocab = self
            .vocabulary
            .fit(train.iter().map(|&i| (tokens[i].as_slice(), labels[i])));
        let dataset = |idx: &[usize]| Dataset {
            rows: idx.iter().map(|&i| vocab.vectorize(&tokens[i])).collect(),
            labels: idx.iter().map(|&i| labels[i]).collect(),
            n_features: vocab.len(),
        };
        let (train_set, test_set) = (dataset(&train), dataset(test));
        let mut results = Vec::new();
        for params in &self.models {
            let started = Instant::now();
            let model = params.fit(&train_set, self.seed)?;
            let train_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let decisions: Vec<f64> = test_set.rows.iter().map(|x| model.decision(x)).collect();
            let p_spam: Vec<f64> = decisions
                .iter()
                .map(|&d| SpamScore::new(model.calibration.p_spam(d)).p_spam())
                .collect();
            results.push(FoldResult {
                model: params.kind(),
                fold: k,
                decisions,
                p_spam,
                labels: test_set.labels.clone(),
                train_seconds,
                score_seconds: started.elapsed().as_secs_f64(),
            });
        }
        Ok(results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cross_validation(folds: usize) -> CrossValidation {
        CrossValidation {
            folds,
            seed: 1,
            vocabulary: VocabularyParams::default(),
            models: vec![ModelParams::default_for(ModelKind::MultinomialNb)],
        }
    }

    #[test]
    fn more_folds_than_messages_of_a_class_is_refused() {
        let labels = [Label::Spam, Label::Spam, Label::Ham, Label::Ham, Label::Ham];
        let tokens: Vec<Vec<Token>> = labels.iter().map(|_| Vec::new()).collect();
        let err = cross_validation(3).run(&tokens, &labels).unwrap_err();
        assert!(err.to_string().contains("2 spam and 3 ham"), "{err}");
        assert!(cross_validation(1).run(&tokens, &labels).is_err());
        assert!(cross_validation(2).run(&tokens, &labels).is_ok());
    }
}
