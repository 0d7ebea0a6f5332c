//! The measures of each held-out fold and their summary across folds, in the stable shape that
//! `spamsort eval --format json` prints (field names are part of the interface), and the
//! report's renderings: JSON, CSV, an aligned table with a legend, and the pooled ROC curves
//! (`spamsort eval` only picks one, as hyperfine's exporters do).

use super::FoldResult;
use super::metrics::{Confusion, auc, spam_miss_at_ham_pct};
use super::roc::RocCurve;
use crate::models::ModelKind;
use serde::Serialize;
use std::io::Write;

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
    /// Spam called ham, %, where 0.1% of ham is called spam, on the ROC curve interpolated as
    /// TREC reads it (see [`spam_miss_at_ham_pct`]).
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
    /// Held-out messages classified per second on one thread, as `spamsort classify` does
    /// it: parse, tokenize, look up and score ([`FoldResult::classify_seconds`]).
    pub classify_messages_per_second: f64,
}

const FIELDS: usize = 12;

impl Metrics {
    /// Measures one fold's predictions; the binary measures (hm%, sm%, lam%, accuracy,
    /// precision, recall, F1) call a message spam at P(spam) `spam_threshold` or above, as a
    /// verdict does.
    pub fn of(r: &FoldResult, spam_threshold: f64) -> Metrics {
        let called = r.called_spam(spam_threshold);
        let c = Confusion::of_calls(called.zip(r.labels.iter().copied()));
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
            classify_messages_per_second: r.labels.len() as f64 / r.classify_seconds.max(1e-9),
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
            self.classify_messages_per_second,
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
            classify_messages_per_second,
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
            classify_messages_per_second,
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
    /// bernoulli-nb, multinomial-nb, linear-svm, logistic-regression or fusion.
    pub name: &'static str,
    /// Means over folds.
    #[serde(flatten)]
    pub mean: Metrics,
    /// Sample standard deviations over folds.
    pub spread: Metrics,
    /// Per-fold values.
    pub folds: Vec<FoldMetrics>,
    /// Online only (empty for cross-validation): (1-AUC)% over each successive
    /// [`LEARNING_CURVE_WINDOW`] messages (see [`super::online::learning_curve`]); `null` for a
    /// window holding one class only.
    pub learning_curve: Vec<Option<f64>>,
}

/// Messages per point of an online run's learning curve.
pub const LEARNING_CURVE_WINDOW: usize = 1000;

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
    /// P(spam) at or above which the binary measures call a message spam (the verdict's
    /// threshold: `eval --spam-threshold`, by default the one `train` gives a model file).
    pub spam_threshold: f64,
    /// Spam messages evaluated.
    pub spam: usize,
    /// Ham messages evaluated.
    pub ham: usize,
    /// One entry per model, in the order requested.
    pub models: Vec<ModelReport>,
}

impl EvalReport {
    /// Summarizes the results of either protocol, the binary measures taken at
    /// `spam_threshold` (see [`Metrics::of`]).
    pub fn new(
        results: &[FoldResult],
        protocol: Protocol,
        folds: usize,
        seed: u64,
        spam_threshold: f64,
    ) -> EvalReport {
        let models = model_order(results)
            .into_iter()
            .map(|kind| {
                let per_fold: Vec<FoldMetrics> = results
                    .iter()
                    .filter(|r| r.model == kind)
                    .map(|r| FoldMetrics {
                        fold: r.fold,
                        metrics: Metrics::of(r, spam_threshold),
                    })
                    .collect();
                let all: Vec<Metrics> = per_fold.iter().map(|f| f.metrics).collect();
                let (mean, spread) = Metrics::mean_and_spread(&all);
                let learning_curve = match (protocol, results.iter().find(|r| r.model == kind)) {
                    (Protocol::Online, Some(r)) => {
                        super::online::learning_curve(r, LEARNING_CURVE_WINDOW)
                    }
                    _ => Vec::new(),
                };
                ModelReport {
                    name: kind.name(),
                    mean,
                    spread,
                    folds: per_fold,
                    learning_curve,
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
            spam_threshold,
            spam: count(crate::Label::Spam),
            ham: count(crate::Label::Ham),
            models,
        }
    }
}

/// The models of `results`, each once, in the order they first appear.
fn model_order(results: &[FoldResult]) -> Vec<ModelKind> {
    let mut kinds = Vec::new();
    for r in results {
        if !kinds.contains(&r.model) {
            kinds.push(r.model);
        }
    }
    kinds
}

/// Each model's ROC curve over the held-out decisions of all its folds pooled, in the order
/// the models appear in `results`.
pub fn pooled_roc_curves(results: &[FoldResult]) -> Vec<RocCurve> {
    model_order(results)
        .into_iter()
        .map(|kind| {
            let (scores, labels): (Vec<f64>, Vec<_>) = results
                .iter()
                .filter(|r| r.model == kind)
                .flat_map(|r| r.decisions.iter().copied().zip(r.labels.iter().copied()))
                .unzip();
            RocCurve::new(kind.name(), &scores, &labels)
        })
        .collect()
}

/// The CSV header: one column per field of a row of [`EvalReport::write_csv`].
const CSV_HEADER: &str = "model,one_minus_auc_pct,one_minus_auc_pct_sd,lam_pct,ham_miss_pct,spam_miss_pct,spam_miss_at_0_1pct_ham_pct,accuracy_pct,precision,recall,f1,train_seconds,classify_messages_per_second,spam_threshold";

/// What each column of the table means, printed under it, for binary measures taken at
/// `spam_threshold`.
fn table_legend(spam_threshold: f64) -> String {
    format!(
        "\
1-AUC %            100 (1 - area under the ROC curve), TREC's (1-ROCA)%: lower is better;
                   (sd) its standard deviation over folds
lam %              logistic average misclassification of ham and spam (TREC)
ham miss %         ham called spam: P(spam) at or above {spam_threshold} (--spam-threshold)
spam miss %        spam not called spam (called ham or unsure)
spam miss % @0.1%  spam called ham where 0.1% of ham is called spam (ROC curve interpolated,
                   a tie one straight segment, as TREC reads it)
train s            seconds to fit each model (online: to learn every message, one by one)
classified/s       messages classified a second on one thread as `spamsort classify` does:
                   parse, tokenize, look up and score
"
    )
}

impl EvalReport {
    /// Writes the whole report as pretty-printed JSON (the stable interface for scripts).
    pub fn write_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        writeln!(out)
    }

    /// Writes a header row, then one row of means per model (`one_minus_auc_pct_sd` the one
    /// spread given), each ending with the threshold the binary measures were taken at.
    pub fn write_csv(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "{CSV_HEADER}")?;
        for m in &self.models {
            let (v, sd) = (m.mean, m.spread);
            writeln!(
                out,
                "{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.1},{}",
                m.name,
                v.one_minus_auc_pct,
                sd.one_minus_auc_pct,
                v.lam_pct,
                v.ham_miss_pct,
                v.spam_miss_pct,
                v.spam_miss_at_0_1pct_ham_pct,
                v.accuracy_pct,
                v.precision,
                v.recall,
                v.f1,
                v.train_seconds,
                v.classify_messages_per_second,
                self.spam_threshold
            )?;
        }
        Ok(())
    }

    /// Writes a line saying what was measured, an aligned table of means per model, and a
    /// legend of the columns: for people.
    pub fn write_table(&self, out: &mut impl Write) -> std::io::Result<()> {
        match self.protocol {
            Protocol::CrossValidation => writeln!(
                out,
                "{} folds, seed {}, {} spam + {} ham; mean over folds; spam at P(spam) >= {}",
                self.folds, self.seed, self.spam, self.ham, self.spam_threshold
            )?,
            Protocol::Online => writeln!(
                out,
                "TREC online (immediate feedback), {} spam + {} ham in order; spam at P(spam) \
                 >= {}",
                self.spam, self.ham, self.spam_threshold
            )?,
        }
        writeln!(
            out,
            "{:<20} {:>18} {:>7} {:>10} {:>11} {:>18} {:>8} {:>12}",
            "model",
            "1-AUC % (sd)",
            "lam %",
            "ham miss %",
            "spam miss %",
            "spam miss % @0.1%",
            "train s",
            "classified/s"
        )?;
        for m in &self.models {
            let v = m.mean;
            // One column, as wide as its widest value (100.0000 (57.7350)), so that an sd of
            // 10 or more does not push the rest of the row right of its header.
            let auc = format!(
                "{:.4} ({:.4})",
                v.one_minus_auc_pct, m.spread.one_minus_auc_pct
            );
            writeln!(
                out,
                "{:<20} {auc:>18} {:>7.3} {:>10.3} {:>11.3} {:>18.3} {:>8.3} {:>12.0}",
                m.name,
                v.lam_pct,
                v.ham_miss_pct,
                v.spam_miss_pct,
                v.spam_miss_at_0_1pct_ham_pct,
                v.train_seconds,
                v.classify_messages_per_second
            )?;
        }
        if self.protocol == Protocol::Online {
            writeln!(
                out,
                "\nlearning curve: 1-AUC % of each successive {LEARNING_CURVE_WINDOW} messages"
            )?;
            for m in &self.models {
                let curve: Vec<String> = m
                    .learning_curve
                    .iter()
                    .map(|v| v.map_or("-".into(), |v| format!("{v:.3}")))
                    .collect();
                writeln!(out, "{:<20} {}", m.name, curve.join(" "))?;
            }
        }
        writeln!(out)?;
        write!(out, "{}", table_legend(self.spam_threshold))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(model: ModelKind, fold: usize) -> FoldResult {
        FoldResult {
            model,
            fold,
            decisions: vec![1.0, -1.0],
            p_spam: vec![0.9, 0.1],
            labels: vec![crate::Label::Spam, crate::Label::Ham],
            messages: vec![0, 1],
            undecided: 0,
            train_seconds: 0.5,
            classify_seconds: 0.01,
        }
    }

    fn report() -> EvalReport {
        let results = [
            result(ModelKind::LinearSvm, 0),
            result(ModelKind::MultinomialNb, 0),
        ];
        EvalReport::new(&results, Protocol::Online, 1, 7, 0.98)
    }

    #[test]
    fn table_explains_every_column_in_its_legend() {
        let mut out = Vec::new();
        report().write_table(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let legend = table_legend(0.98);
        let legend_keys: Vec<&str> = legend
            .lines()
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.split("  ").next().unwrap())
            .collect();
        for column in [
            "1-AUC %",
            "lam %",
            "ham miss %",
            "spam miss %",
            "spam miss % @0.1%",
            "train s",
            "classified/s",
        ] {
            assert!(text.lines().nth(1).unwrap().contains(column), "{text}");
            assert!(
                legend_keys.contains(&column),
                "{column} not in {legend_keys:?}"
            );
        }
        assert!(
            text.contains("linear-svm") && text.contains("multinomial-nb"),
            "{text}"
        );
        // 2 messages in 0.01 s.
        assert!(text.contains(" 200\n"), "{text}");
    }

    #[test]
    fn table_rows_line_up_with_the_header_whatever_the_spread() {
        // Audit: an sd of (1-AUC)% of 10 or more (small corpora) pushed the row one column right.
        let mut report = report();
        report.models[0].mean.one_minus_auc_pct = 100.0;
        report.models[0].spread.one_minus_auc_pct = 57.735;
        let mut out = Vec::new();
        report.write_table(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for row in &lines[2..4] {
            assert_eq!(row.len(), lines[1].len(), "{text}");
        }
    }

    #[test]
    fn csv_rows_have_as_many_fields_as_the_header() {
        let mut out = Vec::new();
        report().write_csv(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let fields = lines[0].split(',').count();
        assert!(lines[0].ends_with(",spam_threshold"));
        for row in &lines[1..] {
            assert_eq!(row.split(',').count(), fields, "{row}");
            assert!(row.ends_with(",0.98"), "{row}");
        }
    }

    #[test]
    fn pooled_roc_curves_one_per_model_in_the_results_order() {
        let results = [
            result(ModelKind::LinearSvm, 0),
            result(ModelKind::BernoulliNb, 0),
            result(ModelKind::LinearSvm, 1),
            result(ModelKind::BernoulliNb, 1),
        ];
        let curves = pooled_roc_curves(&results);
        let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["linear-svm", "bernoulli-nb"]);
        assert!(pooled_roc_curves(&[]).is_empty());
    }

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
