//! The four classifiers, behind one trait, and [`fusion`], the fifth verdict stacking them.
//! Each has a hyperparameter type (`XParams`, with documented defaults, validated in `fit`) and a fitted type. All four, once fitted, are a
//! [`LinearFunction`] over transformed features: the decision itself for the SVM and logistic
//! regression, the per-token weights for the Naive Bayes models, which [`NbScoring`] selects
//! and combines per message (the plain sum, their exact log-odds, under
//! [`NbScoring::TEXTBOOK`]). All answer in the same currency, P(spam), so thresholds mean the
//! same for every model.
//!
//! [`AnyModel`] is a plain enum: it dispatches, and it is what the model file stores.

pub mod auc;
mod bernoulli_nb;
mod calibration;
mod check;
pub mod fusion;
mod linear;
mod linear_pair;
mod linear_svm;
mod logistic;
pub mod math;
mod multinomial_nb;
mod nb_scoring;
mod passes;
pub mod selection;
#[cfg(test)]
mod testutil;

pub use bernoulli_nb::{BernoulliNb, BernoulliNbParams};
pub use calibration::Calibration;
pub use fusion::{Fusion, FusionParams, Squash};
pub use linear::LinearFunction;
use linear::LinearSection;
pub(crate) use linear::{LinearFunctionView, terms};
pub(crate) use linear_pair::LinearPair;
pub use linear_svm::{LinearSvm, LinearSvmParams, SvmLoss, SvmSolver};
pub use logistic::{LogisticRegression, LogisticRegressionParams, LogisticSolver};
pub use multinomial_nb::{MultinomialNb, MultinomialNbParams, NbVariant};
pub use nb_scoring::{NbScoring, TermScale};

use crate::error::{Error, Result};
use crate::features::{Dataset, FeatureId, Row, SparseVector, stratified_folds, training_indices};
use crate::label::{Label, SpamScore};
use crate::model_file::packed::Elements;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A fitted model that scores count vectors.
pub trait Classifier {
    /// The raw decision value: larger means more spam-like. The log-odds for the Naive Bayes
    /// models and logistic regression, the margin for the SVM. It does not saturate, so it
    /// ranks messages without ties where P(spam) would round to 0 or 1.
    fn decision(&self, counts: &SparseVector) -> f64;
    /// P(spam).
    fn score(&self, counts: &SparseVector) -> SpamScore;
    /// Each present feature's additive share of the decision value.
    fn contributions(&self, counts: &SparseVector) -> Vec<(FeatureId, f64)>;
}

/// Fitting: hyperparameters in, a fitted model out (as linfa separates them).
pub trait Train {
    /// The fitted model.
    type Model;
    /// Fits on count vectors and labels. Fails on invalid hyperparameters or a missing class.
    fn fit(&self, data: &Dataset) -> Result<Self::Model>;
}

macro_rules! impl_train {
    ($($params:ty => $model:ty),* $(,)?) => {$(
        impl Train for $params {
            type Model = $model;
            fn fit(&self, data: &Dataset) -> Result<$model> {
                <$params>::fit(self, data)
            }
        }
    )*};
}

impl_train!(
    BernoulliNbParams => BernoulliNb,
    MultinomialNbParams => MultinomialNb,
    LinearSvmParams => LinearSvm,
    LogisticRegressionParams => LogisticRegression,
);

/// The four models and their fusion, by their command-line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ModelKind {
    /// `bernoulli-nb`
    BernoulliNb,
    /// `multinomial-nb`
    MultinomialNb,
    /// `linear-svm`
    LinearSvm,
    /// `logistic-regression`
    LogisticRegression,
    /// `fusion`: the other models' verdicts stacked (see [`fusion`]); it reads no tokens.
    Fusion,
}

impl ModelKind {
    /// The four models fitted on tokens, in a fixed order.
    pub const ALL: [ModelKind; 4] = [
        ModelKind::BernoulliNb,
        ModelKind::MultinomialNb,
        ModelKind::LinearSvm,
        ModelKind::LogisticRegression,
    ];

    /// The four, then their fusion: every verdict a filter can give.
    pub const WITH_FUSION: [ModelKind; 5] = [
        ModelKind::BernoulliNb,
        ModelKind::MultinomialNb,
        ModelKind::LinearSvm,
        ModelKind::LogisticRegression,
        ModelKind::Fusion,
    ];

    /// The SVM or logistic regression: a linear function of their own (whose weights, of the
    /// hashed features where they see them, their section holds).
    pub fn is_linear(self) -> bool {
        matches!(self, ModelKind::LinearSvm | ModelKind::LogisticRegression)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::BernoulliNb => "bernoulli-nb",
            ModelKind::MultinomialNb => "multinomial-nb",
            ModelKind::LinearSvm => "linear-svm",
            ModelKind::LogisticRegression => "logistic-regression",
            ModelKind::Fusion => "fusion",
        }
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ModelKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        ModelKind::WITH_FUSION
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown model {s:?} (expected one of: {})",
                    ModelKind::WITH_FUSION.map(ModelKind::name).join(", ")
                ))
            })
    }
}

/// Hyperparameters of any one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ModelParams {
    /// Multivariate Bernoulli NB.
    BernoulliNb(BernoulliNbParams),
    /// Multinomial (or complement) NB.
    MultinomialNb(MultinomialNbParams),
    /// Linear SVM.
    LinearSvm(LinearSvmParams),
    /// Logistic regression.
    LogisticRegression(LogisticRegressionParams),
    /// The fusion of the other models (fitted on their decisions, not on tokens: see
    /// [`fusion`]).
    Fusion(FusionParams),
}

/// The most leading bytes of a message whose byte 4-grams a batch fit sees: 2048. In 5-fold
/// cross-validation on the SpamAssassin corpus (`examples/sweep.rs`, seeds 7 and 3, the
/// default models, 2^18 buckets) the SVM's (1-AUC)% was 0.0098 and 0.0104 on 2048 bytes
/// against 0.0154 and 0.0141 on 3072 (the online learners'
/// [`TokenizerConfig::byte_ngrams`]): on unit-length rows the body's 4-grams dilute the
/// header's. Online, from nothing, 3072 measured better.
///
/// [`TokenizerConfig::byte_ngrams`]: crate::tokenize::TokenizerConfig::byte_ngrams
pub const BATCH_BYTE_NGRAMS: usize = 2048;

/// `config` as a batch fit of `models` needs it: byte 4-grams of at most
/// [`BATCH_BYTE_NGRAMS`] bytes, and none (`byte_ngrams` 0) when no model sees hashed features
/// ([`ModelParams::sees_hashed`]): their tokens would be dropped before any model saw them,
/// after tokenizing them had cost time and memory (`train` and `eval` both tokenize so).
pub fn tokenizer_for(
    models: &[ModelParams],
    config: &crate::tokenize::TokenizerConfig,
) -> crate::tokenize::TokenizerConfig {
    let mut config = config.clone();
    config.byte_ngrams = if models.iter().any(ModelParams::sees_hashed) {
        config.byte_ngrams.min(BATCH_BYTE_NGRAMS)
    } else {
        0
    };
    config
}

/// One internal fold's held-out messages: each one's decision value (from the model fitted on
/// the other folds) and true label.
pub type FoldDecisions = Vec<(f64, Label)>;

/// Internal folds whose held-out decision values fit Platt scaling (and, in training, choose
/// the active model).
pub const INTERNAL_FOLDS: usize = 3;

impl ModelParams {
    /// The documented defaults of a model.
    pub fn default_for(kind: ModelKind) -> ModelParams {
        match kind {
            ModelKind::BernoulliNb => ModelParams::BernoulliNb(BernoulliNbParams::default()),
            ModelKind::MultinomialNb => ModelParams::MultinomialNb(MultinomialNbParams::default()),
            ModelKind::LinearSvm => ModelParams::LinearSvm(LinearSvmParams::default()),
            ModelKind::LogisticRegression => {
                ModelParams::LogisticRegression(LogisticRegressionParams::default())
            }
            ModelKind::Fusion => ModelParams::Fusion(FusionParams::default()),
        }
    }

    /// Which model these parameters are for.
    pub fn kind(&self) -> ModelKind {
        match self {
            ModelParams::BernoulliNb(_) => ModelKind::BernoulliNb,
            ModelParams::MultinomialNb(_) => ModelKind::MultinomialNb,
            ModelParams::LinearSvm(_) => ModelKind::LinearSvm,
            ModelParams::LogisticRegression(_) => ModelKind::LogisticRegression,
            ModelParams::Fusion(_) => ModelKind::Fusion,
        }
    }

    /// True if the fitted model sees the hashed features (see [`crate::features::hashed`]);
    /// the Naive Bayes models never do, nor does fusion, which sees the models' log-odds.
    pub fn sees_hashed(&self) -> bool {
        match self {
            ModelParams::LinearSvm(p) => p.features.hashed,
            ModelParams::LogisticRegression(p) => p.features.hashed,
            ModelParams::BernoulliNb(_)
            | ModelParams::MultinomialNb(_)
            | ModelParams::Fusion(_) => false,
        }
    }

    /// True if the decision value is not a log-odds estimate and P(spam) needs Platt scaling:
    /// so for the SVM, complement NB, a Naive Bayes model scored other than by the textbook,
    /// and logistic regression fitted by online passes.
    fn needs_calibration(&self) -> bool {
        match self {
            ModelParams::LinearSvm(_) => true,
            ModelParams::MultinomialNb(p) => {
                p.variant == NbVariant::Complement || p.scoring != NbScoring::TEXTBOOK
            }
            ModelParams::BernoulliNb(p) => p.scoring != NbScoring::TEXTBOOK,
            // A few online steps from nothing are no fitted log-odds: too timid.
            ModelParams::LogisticRegression(p) => {
                matches!(p.solver, LogisticSolver::OnlinePasses { .. })
            }
            ModelParams::Fusion(_) => false,
        }
    }

    /// The model before it has learned anything (every decision 0), for a filter that starts
    /// from nothing and learns one message at a time. It has no Platt calibration: P(spam) is
    /// the logistic of the decision value (`Calibration::IDENTITY`), the SVM's margin times its
    /// `empty_slope` (see [`LinearSvmParams::empty_slope`]). Fails on invalid parameters.
    pub fn empty(&self) -> Result<TrainedModel> {
        let mut calibration = Calibration::IDENTITY;
        let model = match self {
            ModelParams::BernoulliNb(p) => AnyModel::BernoulliNb(p.empty()?),
            ModelParams::MultinomialNb(p) => AnyModel::MultinomialNb(p.empty()?),
            ModelParams::LinearSvm(p) => {
                check::require_positive(ModelKind::LinearSvm, "empty_slope", p.empty_slope)?;
                calibration.a *= p.empty_slope;
                AnyModel::LinearSvm(p.untrained())
            }
            ModelParams::LogisticRegression(p) => {
                check::require_rate(ModelKind::LogisticRegression, "empty_rate", p.empty_rate)?;
                AnyModel::LogisticRegression(p.untrained())
            }
            ModelParams::Fusion(_) => return Err(not_on_tokens()),
        };
        Ok(TrainedModel { model, calibration })
    }

    /// Fits the model alone, without calibration.
    pub fn fit_uncalibrated(&self, data: &Dataset) -> Result<AnyModel> {
        // The Naive Bayes models count vocabulary tokens only (see `features::hashed`): they
        // read the rows' words.
        Ok(match self {
            ModelParams::BernoulliNb(p) => AnyModel::BernoulliNb(p.fit(data)?),
            ModelParams::MultinomialNb(p) => AnyModel::MultinomialNb(p.fit(data)?),
            ModelParams::LinearSvm(p) => AnyModel::LinearSvm(p.fit(data)?),
            ModelParams::LogisticRegression(p) => AnyModel::LogisticRegression(p.fit(data)?),
            ModelParams::Fusion(_) => return Err(not_on_tokens()),
        })
    }

    /// [`ModelParams::fit_uncalibrated`] on the rows of `data` at `rows`: logistic regression
    /// fitted by online passes reads them in place, the others fit a copy (a row with hashed
    /// features holds thousands of entries, and the internal folds fit in parallel).
    fn fit_part(&self, data: &Dataset, rows: &[usize]) -> Result<AnyModel> {
        if let ModelParams::LogisticRegression(p) = self
            && let Some(model) = p.fit_in_place(data, Some(rows))?
        {
            return Ok(AnyModel::LogisticRegression(model));
        }
        self.fit_uncalibrated(&data.subset(rows))
    }

    /// Fits the model, and where its decision value is no log-odds, Platt scaling on
    /// [`INTERNAL_FOLDS`] internal stratified folds (seeded by `seed`).
    pub fn fit(&self, data: &Dataset, seed: u64) -> Result<TrainedModel> {
        Ok(self.fit_with_folds(data, seed, false)?.0)
    }

    /// [`ModelParams::fit`], also returning the internal folds' held-out decisions (see
    /// [`ModelParams::held_out_decisions`]) when `keep_folds`, for a caller that compares models
    /// on them: a model that needs them for Platt scaling too fits its fold models once. The
    /// fold models and the final model are fitted in parallel.
    pub fn fit_with_folds(
        &self,
        data: &Dataset,
        seed: u64,
        keep_folds: bool,
    ) -> Result<(TrainedModel, Option<Vec<FoldDecisions>>)> {
        let (held_out, model) = rayon::join(
            || {
                (keep_folds || self.needs_calibration())
                    .then(|| self.held_out_decisions(data, seed))
                    .transpose()
            },
            || self.fit_uncalibrated(data),
        );
        let held_out = held_out?;
        let model = self.calibrate(model?, held_out.as_deref());
        Ok((model, held_out.filter(|_| keep_folds)))
    }

    /// Pairs a model fitted on all the data with the map from its decision values to P(spam):
    /// Platt scaling fitted on the internal folds' held-out decisions (from
    /// [`ModelParams::held_out_decisions`]) where the decision value is no log-odds, else the
    /// identity.
    fn calibrate(&self, model: AnyModel, held_out: Option<&[FoldDecisions]>) -> TrainedModel {
        let calibration = match held_out {
            Some(folds) if self.needs_calibration() => {
                let (decisions, labels): (Vec<f64>, Vec<Label>) =
                    folds.iter().flatten().copied().unzip();
                if decisions.is_empty() {
                    Calibration::IDENTITY
                } else {
                    Calibration::fit(&decisions, &labels)
                }
            }
            _ => Calibration::IDENTITY,
        };
        TrainedModel { model, calibration }
    }

    /// Per internal fold ([`INTERNAL_FOLDS`] stratified folds seeded by `seed`), the decision
    /// value and label of each of its messages, from the model fitted (uncalibrated) on the
    /// other folds. A fold whose complement lacks a class is empty. Folds run in parallel.
    pub fn held_out_decisions(&self, data: &Dataset, seed: u64) -> Result<Vec<FoldDecisions>> {
        let folds = stratified_folds(&data.labels, INTERNAL_FOLDS, seed);
        folds
            .par_iter()
            .enumerate()
            .map(|(k, held_out)| {
                let rows = training_indices(&folds, k);
                let has = |label| rows.iter().any(|&i| data.labels[i] == label);
                if !Label::ALL.into_iter().all(has) {
                    return Ok(Vec::new());
                }
                let inner = self.fit_part(data, &rows)?;
                let hashed = self.sees_hashed();
                Ok(held_out
                    .iter()
                    .map(|&i| (inner.decision_of_row(&data.rows[i], hashed), data.labels[i]))
                    .collect())
            })
            .collect()
    }
}

/// The error of asking fusion for what only the models fitted on tokens do.
fn not_on_tokens() -> Error {
    Error::Config("fusion is fitted on the other models' decisions, not on tokens".into())
}

/// Any one fitted model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AnyModel {
    /// Multivariate Bernoulli NB.
    BernoulliNb(BernoulliNb),
    /// Multinomial (or complement) NB.
    MultinomialNb(MultinomialNb),
    /// Linear SVM.
    LinearSvm(LinearSvm),
    /// Logistic regression.
    LogisticRegression(LogisticRegression),
}

impl AnyModel {
    /// Which model this is.
    pub fn kind(&self) -> ModelKind {
        match self {
            AnyModel::BernoulliNb(_) => ModelKind::BernoulliNb,
            AnyModel::MultinomialNb(_) => ModelKind::MultinomialNb,
            AnyModel::LinearSvm(_) => ModelKind::LinearSvm,
            AnyModel::LogisticRegression(_) => ModelKind::LogisticRegression,
        }
    }

    /// The linear decision function as last refreshed: the Naive Bayes models learn into their
    /// counts and bring it up to date in [`AnyModel::refresh`] (a save does), so read
    /// [`AnyModel::decision`] and [`AnyModel::contributions`] for the current model.
    pub fn function(&self) -> &LinearFunction {
        match self {
            AnyModel::BernoulliNb(m) => m.function(),
            AnyModel::MultinomialNb(m) => m.function(),
            AnyModel::LinearSvm(m) => m.function(),
            AnyModel::LogisticRegression(m) => m.function(),
        }
    }

    /// [`AnyModel::function`], to move its vocabulary arrays out of and back into a model
    /// file (see `crate::filter::score_table`).
    pub(crate) fn function_mut(&mut self) -> &mut LinearFunction {
        match self {
            AnyModel::BernoulliNb(m) => m.function_mut(),
            AnyModel::MultinomialNb(m) => m.function_mut(),
            AnyModel::LinearSvm(m) => m.function_mut(),
            AnyModel::LogisticRegression(m) => m.function_mut(),
        }
    }

    /// Refuses values no fit or learning makes (read from a dump edited by hand, a crafted
    /// file): weights, a constant term or idf values past [`check::MAX_MAGNITUDE`] (or not
    /// finite), a Naive Bayes model's values [`check::nb_values`] refuses, and a logistic
    /// regression's online step outside (0, [`check::MAX_RATE`]]. Its decisions would be NaN,
    /// or would be after it learned.
    pub(crate) fn check_values(&self) -> std::result::Result<(), String> {
        let f = self.function();
        let values = f.weights.iter().chain([&f.bias]).chain(f.transform.idf());
        if let Some(w) = values.into_iter().find(|w| !check::within_magnitude(**w)) {
            return Err(format!("the {} model holds a weight of {w:e}", self.kind()));
        }
        match self {
            AnyModel::BernoulliNb(m) => m.check_values(),
            AnyModel::MultinomialNb(m) => m.check_values(),
            AnyModel::LogisticRegression(m) => {
                check::require_rate(self.kind(), "its online step", m.online_rate())
                    .map_err(|e| e.to_string())
            }
            AnyModel::LinearSvm(_) => Ok(()),
        }
    }

    /// A Naive Bayes model's per-feature counts (ham, spam); `None` for the linear models,
    /// which hold none.
    pub(crate) fn count_arrays(&self) -> Option<[&[f64]; 2]> {
        match self {
            AnyModel::BernoulliNb(m) => Some(m.counts()),
            AnyModel::MultinomialNb(m) => Some(m.counts()),
            AnyModel::LinearSvm(_) | AnyModel::LogisticRegression(_) => None,
        }
        .map(|(_, ham, spam)| [ham, spam])
    }

    /// [`AnyModel::count_arrays`], to move them out of and back into a model file (see
    /// `crate::filter::score_table`).
    pub(crate) fn count_arrays_mut(&mut self) -> Option<[&mut Vec<f64>; 2]> {
        match self {
            AnyModel::BernoulliNb(m) => Some(m.counts_mut()),
            AnyModel::MultinomialNb(m) => Some(m.counts_mut()),
            AnyModel::LinearSvm(_) | AnyModel::LogisticRegression(_) => None,
        }
    }

    /// Whether [`AnyModel::decision`] reads [`AnyModel::function`] alone: the linear models'
    /// always (their decision is it), the Naive Bayes models' while it is fresh (their
    /// [`NbScoring`] combining its terms).
    pub(crate) fn reads_function(&self) -> bool {
        match self {
            AnyModel::BernoulliNb(m) => m.reads_function(),
            AnyModel::MultinomialNb(m) => m.reads_function(),
            AnyModel::LinearSvm(_) | AnyModel::LogisticRegression(_) => true,
        }
    }

    /// How a Naive Bayes model combines its token weights; `None` for the linear models,
    /// whose decision is their plain linear function.
    pub fn scoring(&self) -> Option<NbScoring> {
        match self {
            AnyModel::BernoulliNb(m) => Some(m.scoring()),
            AnyModel::MultinomialNb(m) => Some(m.scoring()),
            AnyModel::LinearSvm(_) | AnyModel::LogisticRegression(_) => None,
        }
    }

    /// The decision value of the model as it is now (the Naive Bayes models from their counts,
    /// in O(|x|), their token weights combined by their [`NbScoring`]); after
    /// [`AnyModel::refresh`], equal bit for bit to the value computed from the cached function.
    pub fn decision(&self, counts: &SparseVector) -> f64 {
        match self {
            AnyModel::BernoulliNb(m) => m.decision(counts),
            AnyModel::MultinomialNb(m) => m.decision(counts),
            AnyModel::LinearSvm(m) => m.function().decision(counts),
            AnyModel::LogisticRegression(m) => m.function().decision(counts),
        }
    }

    /// [`AnyModel::decision`] of a data set's row (with its hashed features if `hashed`, see
    /// [`Row::counts`]), bit for bit; a linear model on binary inputs reads the row in place
    /// (see [`Row::binary_input`]) instead of building its counts and input.
    fn decision_of_row(&self, row: &Row, hashed: bool) -> f64 {
        if let AnyModel::LinearSvm(_) | AnyModel::LogisticRegression(_) = self {
            let f = self.function();
            let config = f.transform.config();
            if config.hashed == hashed
                && f.held_buckets().is_none()
                && let Some(x) = row.binary_input(config)
            {
                return f.decision_of_input(x);
            }
        }
        self.decision(&row.counts(hashed))
    }

    /// Each present feature's share of [`AnyModel::decision`], and its constant term.
    pub fn contributions(&self, counts: &SparseVector) -> (Vec<(FeatureId, f64)>, f64) {
        match self {
            AnyModel::BernoulliNb(m) => m.contributions(counts),
            AnyModel::MultinomialNb(m) => m.contributions(counts),
            AnyModel::LinearSvm(m) => (m.function().contributions(counts), m.function().bias),
            AnyModel::LogisticRegression(m) => {
                (m.function().contributions(counts), m.function().bias)
            }
        }
    }

    /// Drops and renumbers features by `remap` (see [`crate::features::FeatureRemap`]): the
    /// linear models keep the weights of the kept features, so a message whose tokens were all
    /// kept scores as before; the Naive Bayes models become exactly the models of the kept
    /// counts (their normalizers and absent-word terms change). Leaves the cached function
    /// fresh.
    pub fn remap(&mut self, remap: &crate::features::FeatureRemap) {
        match self {
            AnyModel::BernoulliNb(m) => m.remap(remap),
            AnyModel::MultinomialNb(m) => m.remap(remap),
            AnyModel::LinearSvm(m) => m.remap(remap),
            AnyModel::LogisticRegression(m) => m.remap(remap),
        }
    }

    /// Brings the cached [`AnyModel::function`] up to date with what the model learned:
    /// O(|V|) for the Naive Bayes models, nothing to do for the others.
    pub fn refresh(&mut self) {
        match self {
            AnyModel::BernoulliNb(m) => m.refresh(),
            AnyModel::MultinomialNb(m) => m.refresh(),
            AnyModel::LinearSvm(_) | AnyModel::LogisticRegression(_) => {}
        }
    }

    /// Learns one message (`unlearn`: forgets it). The Naive Bayes models add or remove its
    /// counts exactly (unlearning a message they never learned is refused). The SVM takes a
    /// passive-aggressive step and logistic regression a stochastic-gradient step, on top of
    /// their batch fit; their weight vectors grow for new features. They keep no per-message
    /// state to undo, so unlearning is the opposite step: learning the message as the other
    /// class, which moves its score back (not exactly to where it was).
    pub fn learn(&mut self, counts: &SparseVector, label: Label, unlearn: bool) -> Result<()> {
        let step = if unlearn { label.other() } else { label };
        match self {
            AnyModel::BernoulliNb(m) => m.learn(&counts.without_hashed(), label, unlearn)?,
            AnyModel::MultinomialNb(m) => m.learn(&counts.without_hashed(), label, unlearn)?,
            AnyModel::LinearSvm(m) => m.learn(counts, step),
            AnyModel::LogisticRegression(m) => m.learn(counts, step),
        }
        Ok(())
    }
}

/// A fitted model with the map from its decision values to P(spam).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainedModel {
    /// Decision value to P(spam). Serialized first, then the model's variant and its decision
    /// function, so a scorer can read those three without decoding the rest.
    pub calibration: Calibration,
    /// The model.
    pub model: AnyModel,
}

impl TrainedModel {
    /// True if the model sees the hashed features (see [`crate::features::hashed`]).
    pub fn sees_hashed(&self) -> bool {
        self.model.function().transform.config().hashed
    }

    /// Whether [`TrainedModel::overlay`] can take changes into this model: a learn changes
    /// only the values of the message's features (its tokens and, for a model that sees them,
    /// its hashed buckets): it is not complement Naive Bayes.
    pub(crate) fn overlays(&self) -> bool {
        !matches!(&self.model, AnyModel::MultinomialNb(m) if m.is_complement())
    }

    /// This model as a journal patch keeps it (see `crate::filter::patch`): what
    /// [`TrainedModel::overlay`] reads, without what learning never changes (the idf) or a
    /// Naive Bayes model's cached function, stale once it learned (its decision then reads
    /// the counts), and of the hashed features' weights only those of the buckets it holds
    /// (see [`LinearFunction::keep_held`]); and apart, the Bernoulli model's histograms of
    /// counts, which only learning reads (see [`BernoulliNb::take_histograms`]).
    pub(crate) fn for_patch(mut self) -> (TrainedModel, Option<[Vec<u64>; 2]>) {
        let naive_bayes = matches!(
            self.model,
            AnyModel::BernoulliNb(_) | AnyModel::MultinomialNb(_)
        );
        let function = self.model.function_mut();
        function.transform = function.transform.without_idf();
        function.keep_held();
        if naive_bayes {
            function.weights = Vec::new();
        }
        let histograms = match &mut self.model {
            AnyModel::BernoulliNb(m) => Some(m.take_histograms()),
            _ => None,
        };
        (self, histograms)
    }

    /// Puts the histograms [`TrainedModel::for_patch`] kept apart back into a Bernoulli model
    /// (another model has none: ignored).
    pub(crate) fn set_histograms(&mut self, histograms: [Vec<u64>; 2]) {
        if let AnyModel::BernoulliNb(m) = &mut self.model {
            m.set_histograms(histograms);
        }
    }

    /// Takes into this model, restricted to some features (see
    /// [`TrainedModelSection::restricted`]; a model that sees the hashed features holds the
    /// weights of its messages' buckets alone, see [`LinearFunction::input`]), what `from`
    /// holds: the same model restricted to other features and since changed by learning, as
    /// [`TrainedModel::for_patch`] keeps it. For each `(theirs, ours)` of `pairs` its
    /// vocabulary feature `theirs` is this one's `ours` (grown into if past its end), and a
    /// model that sees the hashed features takes `from`'s weights of those of the hashed
    /// `buckets` it holds; everything that depends on every feature is `from`'s; `features` is
    /// how many vocabulary features the whole model now has. Learning never changes the
    /// calibration or a linear model's idf. `false` (nothing changed) where that cannot be
    /// exact: another kind of model, or complement Naive Bayes (its weights depend on every
    /// feature), or `from` sees the hashed features where this one does not or the other way
    /// round (a forged patch: `from`'s weights would be read in another layout than they were
    /// kept in, see [`LinearFunction::keep_patch_buckets`]).
    pub(crate) fn overlay(
        &mut self,
        from: &TrainedModel,
        pairs: &[(usize, usize)],
        buckets: &[u32],
        features: usize,
    ) -> bool {
        if self.model.kind() != from.model.kind()
            || !self.overlays()
            || !from.overlays()
            || self.sees_hashed() != from.sees_hashed()
        {
            return false;
        }
        match (&mut self.model, &from.model) {
            (AnyModel::BernoulliNb(m), AnyModel::BernoulliNb(f)) => m.overlay(f, pairs),
            (AnyModel::MultinomialNb(m), AnyModel::MultinomialNb(f)) => {
                m.overlay(f, pairs, features);
            }
            (AnyModel::LinearSvm(_), _) | (AnyModel::LogisticRegression(_), _) => {
                self.model
                    .function_mut()
                    .overlay(from.model.function(), pairs, buckets);
            }
            _ => return false,
        }
        true
    }
}

/// A serialized [`TrainedModel`] read only as far as a scorer needs of a model that sees the
/// hashed features: which model it is and its weights, borrowed where they lie (the score table
/// holds everything else it needs; see `crate::filter::score_table`).
/// `W` is how the weights are read: [`Reals`](crate::model_file::packed::Reals), borrowed, or
/// [`RealsHead`](crate::model_file::packed::RealsHead), their element size and number alone
/// (see `crate::filter::hashed_weights`).
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct TrainedModelView<'a, W = crate::model_file::packed::Reals<'a>> {
    _calibration: Calibration,
    #[serde(borrow)]
    model: AnyModelView<'a, W>,
}

/// [`AnyModel`]'s variants, in the same order: the linear models read up to the weights of
/// their leading function (a struct's fields are encoded one after the other, so the function
/// is read as if it were the model), the Naive Bayes models, which never see hashed features,
/// not at all.
#[derive(Debug, Clone, Copy, Deserialize)]
enum AnyModelView<'a, W> {
    BernoulliNb,
    MultinomialNb,
    LinearSvm(#[serde(borrow)] LinearFunctionView<'a, W>),
    LogisticRegression(#[serde(borrow)] LinearFunctionView<'a, W>),
}

impl<W: Copy> TrainedModelView<'_, W> {
    /// Which model this is.
    pub fn kind(&self) -> ModelKind {
        match self.model {
            AnyModelView::BernoulliNb => ModelKind::BernoulliNb,
            AnyModelView::MultinomialNb => ModelKind::MultinomialNb,
            AnyModelView::LinearSvm(_) => ModelKind::LinearSvm,
            AnyModelView::LogisticRegression(_) => ModelKind::LogisticRegression,
        }
    }

    /// The weights of a linear model, by input id (hashed features first when it sees them).
    pub fn weights(&self) -> Option<W> {
        match self.model {
            AnyModelView::LinearSvm(f) | AnyModelView::LogisticRegression(f) => Some(f.weights),
            AnyModelView::BernoulliNb | AnyModelView::MultinomialNb => None,
        }
    }
}

/// A serialized [`TrainedModel`] with a Naive Bayes model's per-feature counts and a linear
/// model's weights (its section holds only its settings and hashed weights) borrowed where
/// they lie, for a scorer that restricts it to a message's features (see
/// `crate::filter::sparse`). `W` is how a linear model's weights are read, as in
/// [`TrainedModelView`]: with [`RealsHead`](crate::model_file::packed::RealsHead) this decodes
/// the section's bytes but its weights'.
#[derive(Debug, Deserialize)]
pub(crate) struct TrainedModelSection<'a, W = crate::model_file::packed::Reals<'a>> {
    calibration: Calibration,
    #[serde(borrow)]
    model: AnyModelSection<'a, W>,
}

/// [`AnyModel`]'s variants, in the same order, as [`TrainedModelSection`] reads them.
#[derive(Debug, Deserialize)]
enum AnyModelSection<'a, W> {
    BernoulliNb(#[serde(borrow)] bernoulli_nb::BernoulliNbSection<'a>),
    MultinomialNb(#[serde(borrow)] multinomial_nb::MultinomialNbSection<'a>),
    LinearSvm(LinearSection<W>),
    LogisticRegression(LinearSection<W>),
}

impl<'a> TrainedModelSection<'a> {
    /// A linear model's weights, as the section holds them; `None` for the Naive Bayes models.
    pub fn weights(&self) -> Option<crate::model_file::packed::Reals<'a>> {
        match &self.model {
            AnyModelSection::LinearSvm(m) | AnyModelSection::LogisticRegression(m) => {
                Some(m.weights())
            }
            AnyModelSection::BernoulliNb(_) | AnyModelSection::MultinomialNb(_) => None,
        }
    }
}

impl<W> TrainedModelSection<'_, W> {
    /// Which model this is.
    pub fn kind(&self) -> ModelKind {
        match self.model {
            AnyModelSection::BernoulliNb(_) => ModelKind::BernoulliNb,
            AnyModelSection::MultinomialNb(_) => ModelKind::MultinomialNb,
            AnyModelSection::LinearSvm(_) => ModelKind::LinearSvm,
            AnyModelSection::LogisticRegression(_) => ModelKind::LogisticRegression,
        }
    }

    /// The number of features a Naive Bayes model holds counts for (`None` for the linear
    /// models, which hold none).
    pub fn count_width(&self) -> Option<usize> {
        match &self.model {
            AnyModelSection::BernoulliNb(m) => Some(m.width()),
            AnyModelSection::MultinomialNb(m) => Some(m.width()),
            AnyModelSection::LinearSvm(_) | AnyModelSection::LogisticRegression(_) => None,
        }
    }

    /// The model with a Naive Bayes model's counts of the features `ids` alone (ascending),
    /// renumbered `0..ids.len()`, and what depends on every feature, so that a message over
    /// those features (or new ones after them) scores, learns and unlearns in it bit for bit
    /// as in the whole model (see `BernoulliNbSection::restricted`); `width` is the number of
    /// features the whole model counts (its section's [`TrainedModelSection::count_width`],
    /// or the score table's where that holds the counts, which are then left empty here for
    /// the caller to give). The linear models hold no counts: as decoded, with room in their
    /// weights' array for `room` more (the weights of `ids`, which the caller gives, and of
    /// the tokens a learn will add), and of the hashed features' weights those of `buckets`
    /// alone (the bucket numbers of the messages' byte 4-grams, ascending; see
    /// [`LinearFunction::input`]), which `hashed` gives by bucket (the section's own weights,
    /// or those read apart). `None` where that cannot be exact (complement NB reads every
    /// feature at each learn).
    pub fn restricted(
        self,
        ids: &[FeatureId],
        width: usize,
        room: usize,
        buckets: &[u32],
        hashed: &(impl Elements<f64> + ?Sized),
    ) -> Option<TrainedModel> {
        let model = match self.model {
            AnyModelSection::BernoulliNb(m) => AnyModel::BernoulliNb(m.restricted(ids)),
            AnyModelSection::MultinomialNb(m) => AnyModel::MultinomialNb(m.restricted(ids, width)?),
            AnyModelSection::LinearSvm(m) => {
                let (function, c) = m.decoded(room, buckets, hashed);
                AnyModel::LinearSvm(LinearSvm::from_parts(function, c))
            }
            AnyModelSection::LogisticRegression(m) => {
                let (function, rate) = m.decoded(room, buckets, hashed);
                AnyModel::LogisticRegression(LogisticRegression::from_parts(function, rate))
            }
        };
        Some(TrainedModel {
            calibration: self.calibration,
            model,
        })
    }
}

impl Classifier for TrainedModel {
    fn decision(&self, counts: &SparseVector) -> f64 {
        self.model.decision(counts)
    }

    fn score(&self, counts: &SparseVector) -> SpamScore {
        SpamScore::new(self.calibration.p_spam(self.decision(counts)))
    }

    fn contributions(&self, counts: &SparseVector) -> Vec<(FeatureId, f64)> {
        self.model.contributions(counts).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::TokenizerConfig;

    #[test]
    fn an_svm_from_nothing_reads_its_margin_so_it_can_call_spam() {
        // Regression: P(spam) was the logistic of the margin, 0.98 only at a margin of 3.9,
        // which the online SVM seldom reaches: learning from nothing, it called no spam at the
        // default threshold.
        let svm = ModelParams::default_for(ModelKind::LinearSvm)
            .empty()
            .unwrap();
        let spam_at = crate::label::Thresholds::default().spam();
        assert!((svm.calibration.p_spam(1.0) - spam_at).abs() < 1e-12);
        assert!((svm.calibration.p_spam(-1.0) - (1.0 - spam_at)).abs() < 1e-12);
        let lr = ModelParams::default_for(ModelKind::LogisticRegression)
            .empty()
            .unwrap();
        assert_eq!(lr.calibration, Calibration::IDENTITY);
    }

    /// A held-out decision read from the row is the model's decision on its counts, bit for
    /// bit, for every model fitted on tokens.
    #[test]
    fn a_rows_decision_is_the_decision_on_its_counts() {
        let base = crate::features::hashed::HASHED_BASE;
        let rows = (0..12u32).map(|i| {
            let ids = [i % 3, 3 + i % 2, base + i, base + 70_000 + i % 4, base + 9];
            SparseVector::from_pairs(ids.iter().map(|&id| (id, f64::from(1 + i % 3))).collect())
        });
        let labels = (0..12)
            .map(|i| if i % 2 == 0 { Label::Spam } else { Label::Ham })
            .collect();
        let data = Dataset::new(rows, labels, 5);
        for kind in ModelKind::ALL {
            let params = ModelParams::default_for(kind);
            let model = params.fit_uncalibrated(&data).unwrap();
            for hashed in [false, true] {
                for row in &data.rows {
                    let d = model.decision_of_row(row, hashed);
                    assert_eq!(d.to_bits(), model.decision(&row.counts(hashed)).to_bits());
                }
            }
        }
    }

    /// Regression: a Naive Bayes model asked to unlearn a message its counts do not hold
    /// (after a hand-edited dump was restored, say) failed with "invalid configuration: cannot
    /// unlearn a message that was not learned", which names no configuration and says neither
    /// what happened nor what to do.
    #[test]
    fn unlearning_a_message_the_counts_do_not_hold_says_what_happened_and_what_to_do() {
        let x = SparseVector::from_pairs(vec![(0, 1.0), (1, 2.0)]);
        for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
            let mut model = ModelParams::default_for(kind).empty().unwrap().model;
            let err = model.learn(&x, Label::Spam, true).unwrap_err();
            assert!(
                matches!(err, crate::Error::NotLearned { model, label: Label::Spam } if model == kind),
                "{err:?}"
            );
            let shown = err.to_string();
            assert!(!shown.contains("invalid configuration"), "{shown}");
            for needle in [
                format!("cannot unlearn this message as spam from the {kind} model"),
                "spamsort train".to_owned(),
            ] {
                assert!(shown.contains(&needle), "{needle} in {shown}");
            }
        }
    }

    #[test]
    fn batch_fits_see_byte_ngrams_of_at_most_their_bytes_and_none_unless_a_model_sees_them() {
        let config = TokenizerConfig::default();
        assert!(config.byte_ngrams > BATCH_BYTE_NGRAMS);
        let batch: Vec<ModelParams> = ModelKind::WITH_FUSION
            .iter()
            .map(|&k| ModelParams::default_for(k))
            .collect();
        assert!(batch.iter().any(ModelParams::sees_hashed));
        let tokenized = tokenizer_for(&batch, &config);
        assert_eq!(tokenized.byte_ngrams, BATCH_BYTE_NGRAMS);
        assert_eq!(
            TokenizerConfig {
                byte_ngrams: config.byte_ngrams,
                ..tokenized
            },
            config,
            "only byte_ngrams changes"
        );
        // A smaller setting is kept.
        let small = TokenizerConfig {
            byte_ngrams: 512,
            ..config.clone()
        };
        assert_eq!(tokenizer_for(&batch, &small).byte_ngrams, 512);
        // No model sees them: none are made.
        let words_only: Vec<ModelParams> =
            batch.iter().filter(|p| !p.sees_hashed()).cloned().collect();
        assert!(!words_only.is_empty());
        assert_eq!(tokenizer_for(&words_only, &config).byte_ngrams, 0);
    }
}
