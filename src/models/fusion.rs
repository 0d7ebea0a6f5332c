//! Fusion: a fifth verdict that stacks the other models' verdicts by a second logistic
//! regression over their log-odds, as the best TREC 2007 run fused several online filters
//! (Lynam and Cormack, "On-line spam filter fusion", SIGIR 2006).
//!
//! Its inputs are each model's calibrated log-odds ln(P(spam) / P(ham)) (the decision value
//! through the model's calibration), divided by the mean magnitude that model's log-odds had
//! so far (see [`FusionParams::normalize`]) and clipped: the Naive Bayes models' log-odds reach
//! hundreds, the SVM's a few units, and a model's scale changes when it is retuned, so the
//! fuser measures the scales and learns its weights, it assumes neither. Its
//! decision value is the fused log-odds `bias + sum_i w_i z_i`, so P(spam) is its logistic.
//!
//! - From nothing ([`FusionParams::empty`]) it averages the inputs (the weights `1 / n`), the
//!   rule Lynam and Cormack found nearly as good as stacking.
//! - `train` fits it ([`FusionParams::fit`]) on held-out decision values, those the internal
//!   folds of Platt scaling produce (`ModelParams::fit_with_folds`), never on decisions of
//!   models that saw the message ([`Stack`] lines them up).
//! - Online, each learned message takes one stochastic gradient step ([`Fusion::learn`]) on the
//!   inputs the models gave *before* they learned it, what classifying it showed.

use super::logistic::{LogisticRegressionParams, LogisticSolver};
use super::math::sigmoid;
use super::{FoldDecisions, ModelKind, TrainedModel};
use crate::error::{Error, Result};
use crate::features::{Dataset, FeatureConfig, SparseVector};
use crate::label::Label;
use serde::{Deserialize, Serialize};

/// How a model's log-odds becomes the fuser's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Squash {
    /// Clipped to ±clip: ties beyond the clip.
    Clip,
    /// sign(l) ln(1 + |l|): monotone (no ties), logarithmic in the log-odds.
    Log,
}

/// Hyperparameters of [`Fusion`]. The defaults were chosen on the SpamAssassin corpus in a
/// split fixed first (`examples/sweep.rs`: `ONLINE=1` in the random order of seed 7, and
/// 5-fold cross-validation with seed 7), not on the scoreboard's folds or order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FusionParams {
    /// How each model's log-odds is squashed (default [`Squash::Clip`]; [`Squash::Log`]
    /// measured the same within noise: online (1-AUC)% 0.240 against 0.237).
    pub squash: Squash,
    /// The clip of [`Squash::Clip`], in units of the model's mean magnitude when normalized
    /// (default 3; online (1-AUC)% 0.233 at 2, 0.237 at 3, 0.253 at 10).
    pub clip: f64,
    /// Divide each model's log-odds by its mean magnitude over the messages learned so far
    /// (the newest [`SCALE_WINDOW`] weigh most), before the squash (default true: without it
    /// the Naive Bayes models' log-odds, in the hundreds, drown the others or are clipped
    /// into ties; online (1-AUC)% was 0.277 at best, at clip 100 and step 0.005, and 0.37 to
    /// 1.55 at the other settings tried).
    pub normalize: bool,
    /// Step size of online updates of a fuser started from nothing (default 0.2; online
    /// (1-AUC)% 0.252 at 0.01, 0.244 at 0.05, 0.237 at 0.2, 0.250 at 0.5, 0.285 at 1).
    pub online_rate: f64,
    /// Step size of online updates of a fuser fitted by `train` (default 0.01). A fitted
    /// fuser's weights stand for thousands of messages, and a step moves every message's
    /// fused log-odds by up to step * (1 + clip^2 per model). Trained on half the SpamAssassin
    /// corpus (the split of [`LinearSvmParams::fitted_c`](super::LinearSvmParams::fitted_c)):
    /// after one held-out ham learned, fusion caught 906 of the 948 held-out spam at 0.2 and
    /// 912 at 0.01 (913 before); after ten held-out spam learned it called 7 of the 2,075 ham
    /// spam at 0.2 and 5 at 0.01 (2 before).
    // Settings written before there was a choice used `online_rate`.
    #[serde(default = "fitted_rate")]
    pub fitted_rate: f64,
    /// Inverse regularization strength of the batch fit (default 100; 5-fold (1-AUC)% 0.0236
    /// at 0.1, 0.0184 at 1, 0.0156 at 10, 0.0138 at 100, 0.0136 at 1000).
    pub c: f64,
}

/// The default [`FusionParams::fitted_rate`].
fn fitted_rate() -> f64 {
    0.01
}

impl Default for FusionParams {
    fn default() -> Self {
        FusionParams {
            squash: Squash::Clip,
            clip: 3.0,
            normalize: true,
            online_rate: 0.2,
            fitted_rate: fitted_rate(),
            c: 100.0,
        }
    }
}

/// A fitted fuser: weights over the stacked models' clipped log-odds, and a bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fusion {
    /// The models it stacks, in the order of `weights`.
    models: Vec<ModelKind>,
    weights: Vec<f64>,
    bias: f64,
    squash: Squash,
    clip: f64,
    online_rate: f64,
    /// Per stacked model, the mean magnitude of its log-odds (with `normalize`; else empty).
    scales: Vec<f64>,
    /// Messages the scales were measured on.
    seen: u64,
}

/// Messages over which [`FusionParams::normalize`] averages a model's log-odds magnitude: a
/// running mean until then, a moving average (of this window) after, so a scale keeps up as
/// a model learning from nothing grows more confident.
pub const SCALE_WINDOW: u64 = 1000;

/// The held-out decision values of several models lined up per message: what the fuser is fitted
/// on in training. Every model's internal folds come from the same seeded split of the same
/// labels, so fold `k`'s `j`-th message is the same message for each model.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// The models stacked, in the order of each row.
    pub models: Vec<ModelKind>,
    /// Per message, each model's log-odds (through its calibration), in the models' order.
    pub rows: Vec<Vec<f64>>,
    /// Per message, its label.
    pub labels: Vec<Label>,
    /// Per message, its internal fold.
    pub folds: Vec<usize>,
}

impl Stack {
    /// Lines up the held-out decisions of fitted models (from `ModelParams::fit_with_folds`
    /// with `keep_folds`), each through its model's calibration. Fails if a model has no folds
    /// or the models' folds do not hold the same messages (different sizes or labels).
    pub fn of_fitted(fitted: &[(TrainedModel, Option<Vec<FoldDecisions>>)]) -> Result<Stack> {
        let mismatch = || Error::Config("fusion: the models' internal folds differ".into());
        let models = fitted
            .iter()
            .map(|(m, folds)| Ok((m, folds.as_deref().ok_or_else(mismatch)?)))
            .collect::<Result<Vec<(&TrainedModel, &[FoldDecisions])>>>()?;
        let mut stack = Stack {
            models: models.iter().map(|(m, _)| m.model.kind()).collect(),
            ..Stack::default()
        };
        let Some((_, first)) = models.first() else {
            return Ok(stack);
        };
        for (k, fold) in first.iter().enumerate() {
            for (j, &(_, label)) in fold.iter().enumerate() {
                let row = models
                    .iter()
                    .map(|(model, folds)| match folds.get(k).and_then(|f| f.get(j)) {
                        Some(&(d, l)) if l == label => Ok(model.calibration.log_odds(d)),
                        _ => Err(mismatch()),
                    })
                    .collect::<Result<Vec<f64>>>()?;
                stack.rows.push(row);
                stack.labels.push(label);
                stack.folds.push(k);
            }
        }
        if models
            .iter()
            .any(|(_, folds)| folds.iter().map(Vec::len).sum::<usize>() != stack.rows.len())
        {
            return Err(mismatch());
        }
        Ok(stack)
    }

    /// The rows and labels of the messages whose fold passes `keep`.
    fn subset(&self, keep: impl Fn(usize) -> bool) -> (Vec<&[f64]>, Vec<Label>) {
        (0..self.rows.len())
            .filter(|&i| keep(self.folds[i]))
            .map(|i| (self.rows[i].as_slice(), self.labels[i]))
            .unzip()
    }
}

impl FusionParams {
    /// Refuses settings out of range.
    fn validate(&self, models: &[ModelKind]) -> Result<()> {
        for (name, v) in [("clip", self.clip), ("c", self.c)] {
            super::check::require_positive(ModelKind::Fusion, name, v)?;
        }
        for (name, v) in [
            ("online_rate", self.online_rate),
            ("fitted_rate", self.fitted_rate),
        ] {
            super::check::require_rate(ModelKind::Fusion, name, v)?;
        }
        if models.len() < 2 || models.contains(&ModelKind::Fusion) {
            return Err(Error::Config(format!(
                "fusion stacks at least two of the other models, not [{}]",
                models
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(())
    }

    /// The fuser before it has learned anything: the mean of the models' clipped log-odds.
    /// Fails on invalid settings or fewer than two models.
    pub fn empty(&self, models: &[ModelKind]) -> Result<Fusion> {
        self.validate(models)?;
        Ok(Fusion {
            models: models.to_vec(),
            weights: vec![1.0 / models.len() as f64; models.len()],
            bias: 0.0,
            squash: self.squash,
            clip: self.clip,
            online_rate: self.online_rate,
            scales: if self.normalize {
                vec![0.0; models.len()]
            } else {
                Vec::new()
            },
            seen: 0,
        })
    }

    /// Fits the fuser on held-out log-odds (one row per message, one entry per model, in the
    /// order of `models`) by L2-regularized logistic regression (the intercept unpenalized).
    /// Without a message of each class it stays [`FusionParams::empty`].
    pub fn fit(&self, models: &[ModelKind], rows: &[&[f64]], labels: &[Label]) -> Result<Fusion> {
        let mut fusion = self.empty(models)?;
        for row in rows {
            fusion.measure(row);
        }
        if !Label::ALL.iter().all(|l| labels.contains(l)) {
            return Ok(fusion);
        }
        let data = Dataset::new(
            rows.iter()
                .map(|r| SparseVector::from_pairs((0..).zip(fusion.inputs(r)).collect())),
            labels.to_vec(),
            models.len(),
        );
        let lr = LogisticRegressionParams {
            c: self.c,
            solver: LogisticSolver::NewtonCg,
            features: FeatureConfig::COUNTS,
            ..LogisticRegressionParams::default()
        }
        .fit(&data)?;
        let f = lr.function();
        for (i, w) in fusion.weights.iter_mut().enumerate() {
            *w = f.weights.get(i).copied().unwrap_or(0.0);
        }
        fusion.bias = f.bias;
        fusion.online_rate = self.fitted_rate;
        Ok(fusion)
    }

    /// Fits the fuser on a whole [`Stack`] (what `train` keeps).
    pub fn fit_stack(&self, stack: &Stack) -> Result<Fusion> {
        let (rows, labels) = stack.subset(|_| true);
        self.fit(&stack.models, &rows, &labels)
    }

    /// Per internal fold of `stack`, the fused decision of each of its messages by a fuser
    /// fitted on the other folds: held-out figures comparable to the stacked models' own, for
    /// choosing the active model.
    pub fn held_out_decisions(&self, stack: &Stack) -> Result<Vec<FoldDecisions>> {
        let folds = stack.folds.iter().max().map_or(0, |&k| k + 1);
        (0..folds)
            .map(|k| {
                let (rows, labels) = stack.subset(|f| f != k);
                let fusion = self.fit(&stack.models, &rows, &labels)?;
                let (rows, labels) = stack.subset(|f| f == k);
                Ok(rows
                    .iter()
                    .map(|r| fusion.decision(r))
                    .zip(labels)
                    .collect())
            })
            .collect()
    }
}

impl Fusion {
    /// The models it stacks, in the order its inputs take.
    pub fn models(&self) -> &[ModelKind] {
        &self.models
    }

    /// The weight of each stacked model's scaled input, in [`Fusion::models`]' order.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The constant term.
    pub fn bias(&self) -> f64 {
        self.bias
    }

    /// The inputs: each log-odds over its scale (if normalized), squashed (NaN counts as 0).
    fn inputs(&self, log_odds: &[f64]) -> Vec<f64> {
        let (clip, squash) = (self.clip, self.squash);
        log_odds
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let l = match self.scales.get(i) {
                    Some(&s) if s > 0.0 => l / s,
                    _ => l,
                };
                match squash {
                    _ if l.is_nan() => 0.0,
                    Squash::Clip => l.clamp(-clip, clip),
                    // A finite log-odds' logarithm is at most ln(1 + f64::MAX); one made
                    // infinite by a tiny scale takes that too, so no input is infinite.
                    Squash::Log => l.signum() * l.abs().ln_1p().min(f64::MAX.ln_1p()),
                }
            })
            .collect()
    }

    /// Takes one message's log-odds into the models' scales (with `normalize`).
    fn measure(&mut self, log_odds: &[f64]) {
        if self.scales.is_empty() {
            return;
        }
        self.seen += 1;
        let n = self.seen.min(SCALE_WINDOW) as f64;
        for (s, &l) in self.scales.iter_mut().zip(log_odds) {
            if l.is_finite() {
                *s += (l.abs() - *s) / n;
            }
        }
    }

    /// Each stacked model's share of the fused decision (its weight times its scaled input),
    /// given the models' log-odds in [`Fusion::models`]' order.
    pub fn shares(&self, log_odds: &[f64]) -> Vec<f64> {
        self.inputs(log_odds)
            .into_iter()
            .zip(&self.weights)
            .map(|(z, w)| w * z)
            .collect()
    }

    /// The fused log-odds of a message, given the stacked models' log-odds in
    /// [`Fusion::models`]' order.
    pub fn decision(&self, log_odds: &[f64]) -> f64 {
        self.bias + self.shares(log_odds).iter().sum::<f64>()
    }

    /// One stochastic gradient step on the log loss of (`log_odds`, `label`): the online
    /// update, on the log-odds the models gave before they learned the message.
    pub fn learn(&mut self, log_odds: &[f64], label: Label) {
        let target = if label == Label::Spam { 1.0 } else { 0.0 };
        let step = self.online_rate * (target - sigmoid(self.decision(log_odds)));
        let inputs = self.inputs(log_odds);
        for (w, z) in self.weights.iter_mut().zip(inputs) {
            *w += step * z;
        }
        self.bias += step;
        self.measure(log_odds);
    }

    /// Checks what a loaded fuser must hold: one weight per stacked model, each among
    /// `models`, weights, bias, clip and scales within [`check::MAX_MAGNITUDE`](super::check)
    /// (so a decision, their products summed, is finite) and an online step within
    /// (0, [`check::MAX_RATE`](super::check)].
    pub fn validate(&self, models: &[ModelKind]) -> std::result::Result<(), String> {
        use super::check::{require_rate, within_magnitude};
        let ok = self.weights.len() == self.models.len()
            && self.models.len() >= 2
            && self.models.iter().all(|k| models.contains(k))
            && (self.weights.iter().chain([&self.bias, &self.clip]))
                .chain(&self.scales)
                .all(|&v| within_magnitude(v))
            && self.clip > 0.0
            && require_rate(ModelKind::Fusion, "online_rate", self.online_rate).is_ok();
        if ok {
            Ok(())
        } else {
            Err("the fusion weights do not match the models".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [ModelKind; 2] = [ModelKind::MultinomialNb, ModelKind::LinearSvm];

    #[test]
    fn an_empty_fuser_averages_clipped_log_odds() {
        let raw = FusionParams {
            normalize: false,
            ..FusionParams::default()
        };
        let f = raw.empty(&TWO).unwrap();
        assert_eq!(f.decision(&[0.0, 0.0]), 0.0);
        assert!((f.decision(&[1.0, 2.0]) - 1.5).abs() < 1e-12);
        // A Naive Bayes log-odds of 1000 counts as the clip, 3.
        assert!((f.decision(&[1000.0, -1.0]) - 1.0).abs() < 1e-12);
        assert_eq!(f.decision(&[f64::NAN, 2.0]), 1.0);
    }

    #[test]
    fn normalized_inputs_put_models_of_any_scale_on_one_footing() {
        let mut f = FusionParams::default().empty(&TWO).unwrap();
        // Model 0 speaks in hundreds, model 1 in units; both as sure as they usually are.
        for _ in 0..50 {
            f.learn(&[200.0, 2.0], Label::Spam);
            f.learn(&[-200.0, -2.0], Label::Ham);
        }
        // A hundredfold difference in scale: still about equal shares, not 100 to 1.
        let shares = f.shares(&[200.0, -2.0]);
        let ratio = -shares[0] / shares[1];
        assert!((0.8..1.25).contains(&ratio), "{shares:?}");
        assert_eq!(f.shares(&[1e6, 0.0])[0], f.shares(&[600.0, 0.0])[0]);
    }

    #[test]
    fn fusion_needs_two_other_models() {
        let p = FusionParams::default();
        assert!(p.empty(&[ModelKind::LinearSvm]).is_err());
        assert!(p.empty(&[ModelKind::LinearSvm, ModelKind::Fusion]).is_err());
    }

    #[test]
    fn fitting_weighs_the_informative_model_over_the_noise() {
        // Model 0 separates the classes; model 1 says the opposite half the time.
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for i in 0..200 {
            let spam = i % 2 == 0;
            let noise = if i % 4 < 2 { 5.0 } else { -5.0 };
            rows.push(vec![if spam { 3.0 } else { -3.0 }, noise]);
            labels.push(if spam { Label::Spam } else { Label::Ham });
        }
        let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
        let f = FusionParams::default().fit(&TWO, &refs, &labels).unwrap();
        assert!(
            f.weights()[0] > 10.0 * f.weights()[1].abs(),
            "{:?}",
            f.weights()
        );
        assert!(f.decision(&[3.0, -5.0]) > 0.0 && f.decision(&[-3.0, 5.0]) < 0.0);
    }

    #[test]
    fn an_online_step_moves_the_fused_decision_toward_the_label() {
        let mut f = FusionParams::default().empty(&TWO).unwrap();
        let x = [1.0, -2.0];
        let before = f.decision(&x);
        f.learn(&x, Label::Spam);
        assert!(f.decision(&x) > before);
        let mid = f.decision(&x);
        f.learn(&x, Label::Ham);
        assert!(f.decision(&x) < mid);
    }

    #[test]
    fn held_out_decisions_come_from_fusers_fitted_on_the_other_folds() {
        let mut stack = Stack {
            models: TWO.to_vec(),
            ..Stack::default()
        };
        for i in 0..60 {
            let spam = i % 2 == 0;
            let s = if spam { 1.0 } else { -1.0 };
            stack.rows.push(vec![2.0 * s, 0.5 * s]);
            stack
                .labels
                .push(if spam { Label::Spam } else { Label::Ham });
            stack.folds.push(i % 3);
        }
        let p = FusionParams::default();
        let folds = p.held_out_decisions(&stack).unwrap();
        assert_eq!(folds.iter().map(Vec::len).collect::<Vec<_>>(), [20, 20, 20]);
        for (d, l) in folds.iter().flatten() {
            assert_eq!(*d > 0.0, *l == Label::Spam);
        }
    }

    #[test]
    fn a_stack_lines_up_every_messages_held_out_log_odds_across_models() {
        use crate::models::ModelParams;
        let rows: Vec<SparseVector> = (0..30)
            .map(|i| SparseVector::from_pairs(vec![(i % 2, 1.0), (2 + i % 3, 1.0)]))
            .collect();
        let labels: Vec<Label> = (0..30)
            .map(|i| if i % 2 == 0 { Label::Spam } else { Label::Ham })
            .collect();
        let data = Dataset::new(rows, labels, 5);
        let fitted: Vec<_> = [ModelKind::MultinomialNb, ModelKind::LinearSvm]
            .into_iter()
            .map(|k| {
                ModelParams::default_for(k)
                    .fit_with_folds(&data, 7, true)
                    .unwrap()
            })
            .collect();
        let stack = Stack::of_fitted(&fitted).unwrap();
        assert_eq!(stack.models, TWO);
        assert_eq!(stack.rows.len(), 30);
        let (model, folds) = (&fitted[1].0, fitted[1].1.as_ref().unwrap());
        let (d, label) = folds[1][2];
        let at = folds[0].len() + 2;
        assert_eq!(stack.labels[at], label);
        assert_eq!(stack.folds[at], 1);
        assert_eq!(stack.rows[at][1], model.calibration.log_odds(d));
        let without_folds = vec![fitted[0].clone(), (fitted[1].0.clone(), None)];
        assert!(Stack::of_fitted(&without_folds).is_err());
    }
}
