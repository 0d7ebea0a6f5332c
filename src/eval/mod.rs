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
use crate::models::fusion::Stack;
use crate::models::{Calibration, Classifier, ModelKind, ModelParams};
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
    /// The models to compare (each fitted with its Platt scaling where it needs one). Fusion
    /// stacks the others, fitted as `train` fits it: on their internal folds' held-out
    /// decisions within the training fold.
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
    /// Seconds to fit the model (calibration included; vocabulary excluded); for fusion, to fit
    /// the fuser on the other models' held-out decisions.
    pub train_seconds: f64,
    /// Seconds to score the held-out count vectors.
    pub score_seconds: f64,
}

impl FoldResult {
    /// The result of `model` on held-out messages from their decision values, P(spam) through
    /// `calibration`; labels and timings are left for the caller to fill.
    fn held_out(
        fold: usize,
        model: ModelKind,
        decisions: Vec<f64>,
        calibration: Calibration,
    ) -> Self {
        let p_spam = decisions
            .iter()
            .map(|&d| SpamScore::new(calibration.p_spam(d)).p_spam())
            .collect();
        FoldResult {
            model,
            fold,
            decisions,
            p_spam,
            labels: Vec::new(),
            train_seconds: 0.0,
            score_seconds: 0.0,
        }
    }
}

impl CrossValidation {
    /// Runs the folds on tokenized messages. Results are ordered by fold, then model.
    pub fn run(&self, tokens: &[Vec<Token>], labels: &[Label]) -> Result<Vec<FoldResult>> {
        let folds = stratified_folds(labels, self.folds.max(2), self.seed);
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
        let fusion = self.models.iter().find_map(|p| match p {
            ModelParams::Fusion(f) => Some(*f),
            _ => None,
        });
        let mut results = Vec::new();
        // The fitted models with their internal folds' held-out decisions, kept for fusion.
        let mut fitted = Vec::new();
        for params in self.models.iter().filter(|p| p.kind() != ModelKind::Fusion) {
            let started = Instant::now();
            let (model, folds) = params.fit_with_folds(&train_set, self.seed, fusion.is_some())?;
            let train_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let decisions = test_set.rows.iter().map(|x| model.decision(x)).collect();
            let mut r = FoldResult::held_out(k, params.kind(), decisions, model.calibration);
            (r.labels, r.train_seconds) = (test_set.labels.clone(), train_seconds);
            r.score_seconds = started.elapsed().as_secs_f64();
            results.push(r);
            fitted.push((model, folds));
        }
        if let Some(params) = fusion {
            let started = Instant::now();
            let fuser = params.fit_stack(&Stack::of_fitted(&fitted)?)?;
            let train_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let decisions = test_set
                .rows
                .iter()
                .map(|x| {
                    let log_odds: Vec<f64> = fitted
                        .iter()
                        .map(|(m, _)| m.calibration.log_odds(m.decision(x)))
                        .collect();
                    fuser.decision(&log_odds)
                })
                .collect();
            let mut r =
                FoldResult::held_out(k, ModelKind::Fusion, decisions, Calibration::IDENTITY);
            (r.labels, r.train_seconds) = (test_set.labels.clone(), train_seconds);
            r.score_seconds = started.elapsed().as_secs_f64();
            // In the order the models were asked for.
            let before = self
                .models
                .iter()
                .take_while(|p| p.kind() != ModelKind::Fusion);
            results.insert(before.count(), r);
        }
        Ok(results)
    }
}
