//! The measures of each held-out fold and their summary across folds, in the stable shape that
//! `spamsort eval --format json` prints (field names are part of the interface).

use super::FoldResult;
use super::metrics::{Confusion, auc, spam_miss_at_ham_pct};
use serde::Serialize;

/// P(spam) at or above which the binary measures (hm%, sm%, lam%, accuracy, precision, recall,
/// F1) call a message spam: the models are calibrated, so 0.5 is each model's own cut.
pub const BINARY_THRESHOLD: f64 = 0.5;

/// The measures of one model on one set of held-out messages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics {
    /// ROC area (ties count half).
    pub auc: f64,
    /// 100 (1 - AUC): TREC's (1-ROCA)%.
    pub one_minus_auc_pct: f64,
    /// Logistic average misclassification, %.
    pub lam_pct: f64,
    /// Ham called spam, %.
    pub ham_miss_pct: f64,
    /// Spam called ham, %.
    pub spam_miss_pct: f64,
    /// Spam called ham, %, at the cut that calls at most 0.1% of ham spam.
    pub spam_miss_at_0_1pct_ham_pct: f64,
    /// Messages classified right, %.
    pub accuracy_pct: f64,
    /// Of those called spam, the fraction that is spam.
    pub precision: f64,
    /// Of the spam, the fraction called spam.
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
    /// Seconds to fit (calibration included).
    pub train_seconds: f64,
    /// Held-out messages scored per second (count vectors to P(spam), one thread).
    pub messages_per_second: f64,
}

const FIELDS: usize = 12;

impl Metrics {
    /// Measures one fold's predictions.
    pub fn of(r: &FoldResult) -> Metrics {
        let c = Confusion::at(&r.p_spam, &r.labels, BINARY_THRESHOLD);
        let area = auc(&r.decisions, &r.labels);
        Metrics {
            auc: area,
            one_minus_auc_pct: 100.0 * (1.0 - area),
            lam_pct: c.lam_pct(),
            ham_miss_pct: c.ham_miss_pct(),
            spam_miss_pct: c.spam_miss_pct(),
            spam_miss_at_0_1pct_ham_pct: spam_miss_at_ham_pct(&r.decisions, &r.labels, 0.1),
            accuracy_pct: c.accuracy_pct(),
            precision: c.precision(),
            recall: c.recall(),
            f1: c.f1(),
            train_seconds: r.train_seconds,
            messages_per_second: r.labels.len() as f64 / r.score_seconds.max(1e-9),
        }
    }

    fn to_array(self) -> [f64; FIELDS] {
        [
            self.auc,
            self.one_minus_auc_pct,
            self.lam_pct,
            self.ham_miss_pct,
            self.spam_miss_pct,
            self.spam_miss_at_0_1pct_ham_pct,
            self.accuracy_pct,
            self.precision,
            self.recall,
            self.f1,
            self.train_seconds,
            self.messages_per_second,
        ]
    }

    fn from_array(a: [f64; FIELDS]) -> Metrics {
        let [
            auc,
            one_minus_auc_pct,
            lam_pct,
            ham_miss_pct,
            spam_miss_pct,
            spam_miss_at_0_1pct_ham_pct,
            accuracy_pct,
            precision,
            recall,
            f1,
            train_seconds,
            messages_per_second,
        ] = a;
        Metrics {
            auc,
            one_minus_auc_pct,
            lam_pct,
            ham_miss_pct,
            spam_miss_pct,
            spam_miss_at_0_1pct_ham_pct,
            accuracy_pct,
            precision,
            recall,
            f1,
            train_seconds,
            messages_per_second,
        }
    }

    /// Field-wise mean and sample standard deviation (0 for a single fold).
    pub fn mean_and_spread(folds: &[Metrics]) -> (Metrics, Metrics) {
        let n = folds.len().max(1) as f64;
        let mut mean = [0.0; FIELDS];
        for m in folds {
            for (acc, v) in mean.iter_mut().zip(m.to_array()) {
                *acc += v / n;
            }
        }
        let mut var = [0.0; FIELDS];
        if folds.len() > 1 {
            for m in folds {
                for ((acc, v), mu) in var.iter_mut().zip(m.to_array()).zip(mean) {
                    *acc += (v - mu) * (v - mu) / (n - 1.0);
                }
            }
        }
        (
            Metrics::from_array(mean),
            Metrics::from_array(var.map(f64::sqrt)),
        )
    }
}

/// One fold's measures.
#[derive(Debug, Clone, Serialize)]
pub struct FoldMetrics {
    /// Fold number, from 0.
    pub fold: usize,
    /// Its measures.
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// One model across all folds: the means (flattened into this object), their standard
/// deviations, and every fold.
#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    /// bernoulli-nb, multinomial-nb, linear-svm or logistic-regression.
    pub name: &'static str,
    /// Means over folds.
    #[serde(flatten)]
    pub mean: Metrics,
    /// Sample standard deviations over folds.
    pub spread: Metrics,
    /// Per-fold values.
    pub folds: Vec<FoldMetrics>,
}

/// How the held-out scores were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// Stratified k-fold cross-validation: one result per fold.
    CrossValidation,
    /// TREC immediate feedback (see `eval::online`): one result over all messages.
    Online,
}

/// A whole evaluation: what `eval --format json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// `cross-validation` or `online`.
    pub protocol: Protocol,
    /// Number of folds (1 for the online protocol).
    pub folds: usize,
    /// Seed of the split.
    pub seed: u64,
    /// Spam messages evaluated.
    pub spam: usize,
    /// Ham messages evaluated.
    pub ham: usize,
    /// One entry per model, in the order requested.
    pub models: Vec<ModelReport>,
}

impl EvalReport {
    /// Summarizes the results of either protocol.
    pub fn new(results: &[FoldResult], protocol: Protocol, folds: usize, seed: u64) -> EvalReport {
        let mut kinds = Vec::new();
        for r in results {
            if !kinds.contains(&r.model) {
                kinds.push(r.model);
            }
        }
        let models = kinds
            .into_iter()
            .map(|kind| {
                let per_fold: Vec<FoldMetrics> = results
                    .iter()
                    .filter(|r| r.model == kind)
                    .map(|r| FoldMetrics {
                        fold: r.fold,
                        metrics: Metrics::of(r),
                    })
                    .collect();
                let all: Vec<Metrics> = per_fold.iter().map(|f| f.metrics).collect();
                let (mean, spread) = Metrics::mean_and_spread(&all);
                ModelReport {
                    name: kind.name(),
                    mean,
                    spread,
                    folds: per_fold,
                }
            })
            .collect();
        let first = results.first().map(|r| r.model);
        let count = |label| {
            results
                .iter()
                .filter(|r| Some(r.model) == first)
                .flat_map(|r| &r.labels)
                .filter(|&&l| l == label)
                .count()
        };
        EvalReport {
            protocol,
            folds,
            seed,
            spam: count(crate::Label::Spam),
            ham: count(crate::Label::Ham),
            models,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_spread() {
        let mut a = Metrics::from_array([1.0; FIELDS]);
        let b = Metrics::from_array([3.0; FIELDS]);
        a.lam_pct = 2.0;
        let (mean, spread) = Metrics::mean_and_spread(&[a, b]);
        assert_eq!(mean.auc, 2.0);
        assert_eq!(mean.lam_pct, 2.5);
        assert!((spread.auc - 2f64.sqrt()).abs() < 1e-12);
        assert!((spread.lam_pct - 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(Metrics::mean_and_spread(&[a]).1.auc, 0.0);
    }
}
