//! [`SpamFilter`]: tokenizer settings + vocabulary + the models + thresholds + the record of
//! learned messages. It is what `train` builds (or [`SpamFilter::empty`] starts from nothing),
//! what the model file holds, what every front end asks for verdicts, and the one learner every
//! path uses (`learn`, spamd TELL, the daemon, `eval --online`), so they can never disagree
//! about a message.
//!
//! The folder is the filter tier: `layout.rs` says how the filter lies in its model file
//! (loading and saving), [`scorer`] scores with one model straight from the file's
//! bytes (the pipe filter's fast path), [`shared`] is the filter shared by the long-running
//! front ends, [`stamp`] inserts the X-Spam-* fields, [`learned`] keeps the record of learned
//! messages, [`dump`] writes the whole learned state as text and rebuilds it, and [`update`]
//! is the one way a model file changes in place.

pub mod dump;
mod layout;
pub mod learned;
pub mod scorer;
pub mod shared;
pub mod stamp;
pub mod update;

use crate::corpus::LabeledCorpus;
use crate::error::{Error, Result};
use crate::features::{
    Dataset, FeatureId, FeatureRemap, PruneRule, SparseVector, TokenTable, Vocabulary,
    VocabularyParams, hashed,
};
use crate::label::{Label, SpamScore, Thresholds, Verdict};
use crate::model_file::packed::Elements;
use crate::models::auc::auc;
use crate::models::{Calibration, Classifier, FoldDecisions, ModelKind, ModelParams, TrainedModel};
use crate::tokenize::{Token, Tokenized, Tokenizer, TokenizerConfig};
use learned::{LearnedAs, LearnedMessages, digest};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// How to train a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainParams {
    /// Tokenizer settings, stored in the filter.
    pub tokenizer: TokenizerConfig,
    /// Vocabulary settings.
    pub vocabulary: VocabularyParams,
    /// The models to fit (default: all four with their defaults).
    pub models: Vec<ModelParams>,
    /// How to pick the model whose verdicts count (default: linear-svm if fitted, else the
    /// first).
    pub active: Option<ActiveModel>,
    /// Seed for everything random in training.
    pub seed: u64,
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            tokenizer: TokenizerConfig::default(),
            vocabulary: VocabularyParams::default(),
            models: ModelKind::ALL
                .iter()
                .map(|&k| ModelParams::default_for(k))
                .collect(),
            active: None,
            seed: 42,
        }
    }
}

/// How training picks the active model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveModel {
    /// This one.
    Fixed(ModelKind),
    /// The best mean ROC area over [`crate::models::INTERNAL_FOLDS`]-fold cross-validation on the training
    /// messages (models fitted without calibration, which does not change a ranking).
    BestByCrossValidation,
}

/// One message's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Classification {
    /// Spam, ham or unsure under the filter's thresholds.
    pub verdict: Verdict,
    /// P(spam).
    pub score: SpamScore,
    /// The model's raw decision value (log-odds or margin).
    pub decision: f64,
    /// ln(P(spam) / P(ham)) after calibration: unlike `score` it never rounds to 0 or 1.
    pub log_odds: f64,
    /// The model that answered.
    pub model: ModelKind,
    /// Tokens the message yielded.
    pub tokens: usize,
}

impl Classification {
    /// The verdict for a decision value. A filter that has not learned both classes (`messages`
    /// per class, ham first, has a 0) cannot tell them apart: its verdict is unsure.
    pub(crate) fn new(
        decision: f64,
        calibration: Calibration,
        thresholds: Thresholds,
        messages: [u64; 2],
        model: ModelKind,
        tokens: usize,
    ) -> Self {
        let score = SpamScore::new(calibration.p_spam(decision));
        Classification {
            verdict: if messages.contains(&0) {
                Verdict::Unsure
            } else {
                thresholds.verdict(score)
            },
            score,
            decision,
            log_odds: calibration.log_odds(decision),
            model,
            tokens,
        }
    }
}

/// A message's count vector over a vocabulary, and how many tokens it yielded.
pub(crate) fn count_vector(
    tokenizer: &TokenizerConfig,
    vocabulary: TokenTable<'_, impl Elements<u32> + ?Sized>,
    raw: &[u8],
) -> (SparseVector, usize) {
    let tokens = Tokenizer::new(tokenizer.clone()).tokenize(raw).tokens;
    (vocabulary.count_vector(&tokens), tokens.len())
}

/// What [`SpamFilter::learn`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnOutcome {
    /// The message was new to the filter and is learned.
    Learned,
    /// It was learned with this label before: nothing changed.
    AlreadyLearned,
    /// It was learned with the other label before: that was unlearned, this learned.
    Relabeled,
}

/// What training saw, for `info` and the end-of-training summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Messages per class, ham first: trained, plus learned, minus unlearned.
    pub messages: [u64; 2],
    /// Tokens produced, all messages together.
    pub tokens: u64,
    /// Messages the MIME parser could not read (tokenized as text instead).
    pub fallbacks: u64,
    /// Messages cut short by the tokenizer's caps.
    pub truncated: u64,
    /// When `train` built the filter, in seconds since 1970-01-01 UTC (`None`: it started
    /// empty).
    pub trained_at: Option<u64>,
    /// When a message was last learned or unlearned, in seconds since 1970-01-01 UTC.
    pub learned_at: Option<u64>,
}

/// Now, in seconds since 1970-01-01 UTC (0 if the clock is before it).
fn now_utc() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The default [`SpamFilter::max_model_bytes`]: 32 MiB, well above a model of the whole
/// SpamAssassin corpus (about 7 MB), so pruning by size is for models fed for years.
pub const DEFAULT_MAX_MODEL_BYTES: u64 = 32 << 20;

/// What a pruning did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneOutcome {
    /// Tokens dropped.
    pub removed: usize,
    /// Tokens left.
    pub kept: usize,
}

/// Mean ROC area over the internal folds that have both classes. The folds reuse the training
/// set's vectors: the vocabulary was built on all of it, a small optimism shared by every
/// model, which does not change their ranking and saves re-tokenizing per fold.
fn mean_auc(folds: &[FoldDecisions]) -> f64 {
    let aucs: Vec<f64> = folds
        .iter()
        .filter(|f| !f.is_empty())
        .map(|f| {
            let (decisions, labels): (Vec<f64>, Vec<Label>) = f.iter().copied().unzip();
            auc(&decisions, &labels)
        })
        .collect();
    aucs.iter().sum::<f64>() / aucs.len().max(1) as f64
}

/// The answer of [`SpamFilter::explain`].
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The verdict and scores.
    pub classification: Classification,
    /// The decision function's constant term.
    pub bias: f64,
    /// (token, share of the decision value), largest magnitude first; positive means spam.
    pub contributions: Vec<(String, f64)>,
    /// How much the calibrated log-odds move per unit of decision value: a contribution times
    /// this is the token's share of ln(P(spam) / P(ham)).
    pub log_odds_per_unit: f64,
}

impl Explanation {
    /// Names and orders the per-feature contributions: largest magnitude first, ties by token.
    pub(crate) fn new<'v>(
        classification: Classification,
        calibration: Calibration,
        bias: f64,
        contributions: Vec<(FeatureId, f64)>,
        token: impl Fn(FeatureId) -> &'v str,
    ) -> Self {
        let mut contributions: Vec<(String, f64)> = contributions
            .into_iter()
            .map(|(id, c)| {
                let name = if hashed::is_hashed(id) {
                    hashed::hashed_token(id)
                } else {
                    token(id).to_owned()
                };
                (name, c)
            })
            .collect();
        contributions.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then_with(|| a.0.cmp(&b.0)));
        Explanation {
            classification,
            bias,
            contributions,
            log_odds_per_unit: -calibration.a,
        }
    }
}

/// A trained filter: the unit that is saved, loaded and asked for verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct SpamFilter {
    // Crate-visible for `crate::filter::dump`, which writes and rebuilds every field.
    pub(crate) tokenizer: TokenizerConfig,
    pub(crate) vocabulary: Vocabulary,
    pub(crate) models: Vec<TrainedModel>,
    pub(crate) active: ModelKind,
    pub(crate) thresholds: Thresholds,
    pub(crate) summary: TrainingSummary,
    pub(crate) learned: LearnedMessages,
    /// The vocabulary's size after `train`: the features training messages were counted in.
    pub(crate) trained_features: u64,
    /// A save prunes the least useful tokens while the file would be larger.
    pub(crate) max_model_bytes: u64,
}

impl SpamFilter {
    /// A filter that has learned nothing, with the tokenizer, vocabulary and model settings of
    /// `params` (as `bogofilter -s` starts an empty database): every decision is 0 and every
    /// verdict unsure until it has learned a message of each class. No model has Platt
    /// calibration, so P(spam) is the logistic of the decision value. The active model is
    /// `params.active` if fixed, else logistic-regression if among the models (the best
    /// learning from nothing: see the README), else the first. Fails on invalid model parameters.
    pub fn empty(params: &TrainParams) -> Result<SpamFilter> {
        let models: Vec<TrainedModel> = params
            .models
            .iter()
            .map(ModelParams::empty)
            .collect::<Result<_>>()?;
        let kinds: Vec<ModelKind> = models.iter().map(|m| m.model.kind()).collect();
        let active = match params.active {
            Some(ActiveModel::Fixed(kind)) if kinds.contains(&kind) => kind,
            Some(ActiveModel::Fixed(kind)) => {
                return Err(Error::Config(format!(
                    "active model {kind} is not among the models"
                )));
            }
            _ if kinds.contains(&ModelKind::LogisticRegression) => ModelKind::LogisticRegression,
            _ => *kinds
                .first()
                .ok_or_else(|| Error::Config("no model to learn".into()))?,
        };
        Ok(SpamFilter {
            tokenizer: params.tokenizer.clone(),
            vocabulary: Vocabulary::default(),
            models,
            active,
            thresholds: Thresholds::default(),
            summary: TrainingSummary::default(),
            learned: LearnedMessages::default(),
            trained_features: 0,
            max_model_bytes: DEFAULT_MAX_MODEL_BYTES,
        })
    }

    /// Tokenizes the corpus (in parallel; the result does not depend on the thread count),
    /// builds the vocabulary and fits the models (in parallel). Fails on invalid model
    /// parameters, a missing class, or an active model that is not among those fitted.
    pub fn train(corpus: &LabeledCorpus, params: &TrainParams) -> Result<SpamFilter> {
        SpamFilter::train_with_progress(corpus, params, || {})
    }

    /// [`SpamFilter::train`], calling `tokenized` once per message as tokenizing proceeds
    /// (from any thread), for a progress display.
    pub fn train_with_progress(
        corpus: &LabeledCorpus,
        params: &TrainParams,
        tokenized: impl Fn() + Sync,
    ) -> Result<SpamFilter> {
        // Byte 4-grams feed only models that see hashed features, which no batch fit does by
        // default: tokenizing them would triple training's time and memory, and slow every
        // `filter`, for nothing. The stored settings say so, so `learn` agrees.
        let mut config = params.tokenizer.clone();
        if !params.models.iter().any(ModelParams::sees_hashed) {
            config.byte_ngrams = 0;
        }
        let tokenizer = Tokenizer::new(config.clone());
        let tokenized: Vec<(Tokenized, Label)> = corpus
            .messages
            .par_iter()
            .map(|(m, label)| {
                let t = tokenizer.tokenize(&m.bytes);
                tokenized();
                (t, *label)
            })
            .collect();
        let mut summary = TrainingSummary {
            trained_at: Some(now_utc()),
            ..TrainingSummary::default()
        };
        for (t, label) in &tokenized {
            summary.messages[label.index()] += 1;
            summary.tokens += t.tokens.len() as u64;
            summary.fallbacks += u64::from(t.fallback);
            summary.truncated += u64::from(t.truncated);
        }
        let vocabulary = params
            .vocabulary
            .fit(tokenized.iter().map(|(t, l)| (t.tokens.as_slice(), *l)));
        // Training messages count as learned: learning one of them again is a no-op.
        let mut learned = LearnedMessages::default();
        for (t, label) in &tokenized {
            let how = LearnedAs {
                label: *label,
                in_training: true,
            };
            learned.insert(digest(&t.tokens), how);
        }
        let vocabulary_len = vocabulary.len() as u64;
        let data = Dataset {
            rows: tokenized
                .par_iter()
                .map(|(t, _)| vocabulary.vectorize(&t.tokens))
                .collect(),
            labels: tokenized.iter().map(|(_, l)| *l).collect(),
            n_features: vocabulary.len(),
        };
        // The tokens are the largest thing training holds: freed while the models are fitted.
        std::thread::spawn(move || drop(tokenized));
        // Choosing the active model by cross-validation uses the internal folds of Platt
        // scaling (see `ModelParams::fit_with_folds`).
        let select = matches!(params.active, Some(ActiveModel::BestByCrossValidation))
            && params.models.len() > 1;
        let fitted: Vec<(TrainedModel, f64)> = params
            .models
            .par_iter()
            .map(|p| {
                let (model, folds) = p.fit_with_folds(&data, params.seed, select)?;
                Ok((model, folds.as_deref().map_or(0.0, mean_auc)))
            })
            .collect::<Result<_>>()?;
        let kinds: Vec<ModelKind> = fitted.iter().map(|(m, _)| m.model.kind()).collect();
        let active = match params.active {
            Some(ActiveModel::Fixed(kind)) if kinds.contains(&kind) => kind,
            Some(ActiveModel::Fixed(kind)) => {
                return Err(Error::Config(format!(
                    "active model {kind} is not among the models trained"
                )));
            }
            Some(ActiveModel::BestByCrossValidation) if select => {
                // The highest mean ROC area; ties go to the earlier model.
                let mut best = &fitted[0];
                for f in &fitted[1..] {
                    if f.1 > best.1 {
                        best = f;
                    }
                }
                best.0.model.kind()
            }
            _ if kinds.contains(&ModelKind::LinearSvm) => ModelKind::LinearSvm,
            _ => *kinds
                .first()
                .ok_or_else(|| Error::Config("no model to train".into()))?,
        };
        Ok(SpamFilter {
            tokenizer: config,
            vocabulary,
            models: fitted.into_iter().map(|(m, _)| m).collect(),
            active,
            thresholds: Thresholds::default(),
            summary,
            learned,
            trained_features: vocabulary_len,
            max_model_bytes: DEFAULT_MAX_MODEL_BYTES,
        })
    }

    /// Classifies one raw message with the active model.
    pub fn classify(&self, raw: &[u8]) -> Classification {
        self.classify_with(raw, self.active)
            .expect("the active model is always fitted")
    }

    /// Classifies one raw message with the named model, if it was fitted.
    pub fn classify_with(&self, raw: &[u8], kind: ModelKind) -> Option<Classification> {
        let model = self.model(kind)?;
        let (x, tokens) = self.count_vector(raw);
        Some(self.classify_vector(model, &x, tokens))
    }

    /// Classifies one tokenized message with the named model, if it was fitted (what
    /// `eval --online` does before it learns the message).
    pub fn classify_tokens(&self, tokens: &[Token], kind: ModelKind) -> Option<Classification> {
        let model = self.model(kind)?;
        let x = self.vocabulary.vectorize(tokens);
        Some(self.classify_vector(model, &x, tokens.len()))
    }

    /// The class with no message learned, if there is one: then every verdict is unsure.
    pub fn missing_class(&self) -> Option<Label> {
        Label::ALL
            .into_iter()
            .find(|l| self.summary.messages[l.index()] == 0)
    }

    /// The message's count vector over the vocabulary, and how many tokens it yielded.
    fn count_vector(&self, raw: &[u8]) -> (SparseVector, usize) {
        count_vector(&self.tokenizer, self.vocabulary.tokens(), raw)
    }

    /// The verdict of `model` on a count vector; the decision value is computed once.
    fn classify_vector(
        &self,
        model: &TrainedModel,
        x: &SparseVector,
        tokens: usize,
    ) -> Classification {
        Classification::new(
            model.decision(x),
            model.calibration,
            self.thresholds,
            self.summary.messages,
            model.model.kind(),
            tokens,
        )
    }

    /// Why the named model (or the active one) scores a message as it does: the bias and each
    /// known token's share of the decision value, strongest first.
    pub fn explain(&self, raw: &[u8], kind: Option<ModelKind>) -> Option<Explanation> {
        let kind = kind.unwrap_or(self.active);
        let model = self.model(kind)?;
        let (x, tokens) = self.count_vector(raw);
        let (contributions, bias) = model.model.contributions(&x);
        Some(Explanation::new(
            self.classify_vector(model, &x, tokens),
            model.calibration,
            bias,
            contributions,
            |id| self.vocabulary.token(id),
        ))
    }

    /// Learns one raw message as `label`, once: see [`SpamFilter::learn_tokens`].
    pub fn learn(&mut self, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        let tokens = Tokenizer::new(self.tokenizer.clone()).tokenize(raw).tokens;
        self.learn_tokens(&tokens, label)
    }

    /// Learns one tokenized message as `label` in the vocabulary (a token not seen before
    /// gets an id and counts from now on) and in every model (see [`AnyModel::learn`]), once:
    /// a message in the record of learned messages with the same label is left alone, one
    /// learned with the other label is unlearned first (as sa-learn does).
    ///
    /// [`AnyModel::learn`]: crate::models::AnyModel::learn
    pub fn learn_tokens(&mut self, tokens: &[Token], label: Label) -> Result<LearnOutcome> {
        let id = digest(tokens);
        let outcome = match self.learned.get(id) {
            Some(how) if how.label == label => return Ok(LearnOutcome::AlreadyLearned),
            Some(how) => {
                self.forget(tokens, how)?;
                LearnOutcome::Relabeled
            }
            None => LearnOutcome::Learned,
        };
        self.update(tokens, label, false, usize::MAX)?;
        let how = LearnedAs {
            label,
            in_training: false,
        };
        self.learned.insert(id, how);
        Ok(outcome)
    }

    /// Forgets one raw message learned before (no label needed: the record of learned
    /// messages has it); returns the label it was learned as, or `None` (nothing changed) if
    /// it is not in the record. The Naive Bayes models forget it exactly; the SVM and logistic
    /// regression take the opposite step (see [`AnyModel::learn`]).
    ///
    /// [`AnyModel::learn`]: crate::models::AnyModel::learn
    pub fn unlearn(&mut self, raw: &[u8]) -> Result<Option<Label>> {
        let tokens = Tokenizer::new(self.tokenizer.clone()).tokenize(raw).tokens;
        let id = digest(&tokens);
        let Some(how) = self.learned.get(id) else {
            return Ok(None);
        };
        self.forget(&tokens, how)?;
        self.learned.remove(id);
        Ok(Some(how.label))
    }

    /// Removes a remembered message from the vocabulary's and the models' counts: a training
    /// message only from the features it was counted in.
    fn forget(&mut self, tokens: &[Token], how: LearnedAs) -> Result<()> {
        let known = if how.in_training {
            usize::try_from(self.trained_features).unwrap_or(usize::MAX)
        } else {
            usize::MAX
        };
        self.update(tokens, how.label, true, known)
    }

    /// Adds (or with `unlearn` removes) one message in the vocabulary and every model (see
    /// [`Vocabulary::learn`] for `known`).
    fn update(
        &mut self,
        tokens: &[Token],
        label: Label,
        unlearn: bool,
        known: usize,
    ) -> Result<()> {
        let x = self.vocabulary.learn(tokens, label, unlearn, known);
        for m in &mut self.models {
            m.model.learn(&x, label, unlearn)?;
        }
        let n = &mut self.summary.messages[label.index()];
        *n = if unlearn { n.saturating_sub(1) } else { *n + 1 };
        self.summary.learned_at = Some(now_utc());
        Ok(())
    }

    /// Drops the tokens `rule` says (see [`PruneRule`]) from the vocabulary and every model,
    /// renumbering the rest (see [`SpamFilter::remap`]).
    pub fn prune(&mut self, rule: PruneRule) -> PruneOutcome {
        self.remap(&FeatureRemap::new(&self.vocabulary.prune_rule(rule)))
    }

    /// Keeps only the `keep` most useful tokens (see [`Vocabulary::keep_most_useful`]).
    pub fn prune_to(&mut self, keep: usize) -> PruneOutcome {
        self.remap(&FeatureRemap::new(&self.vocabulary.keep_most_useful(keep)))
    }

    /// Drops and renumbers tokens by `remap` in everything indexed by token id: the
    /// vocabulary, every model (see [`AnyModel::remap`]: a message whose tokens were all kept
    /// scores as before in the SVM and logistic regression, and as the kept counts say in the
    /// Naive Bayes models), and the count of trained features. Message counts and the record
    /// of learned messages are unchanged; unlearning a message later forgets it from the
    /// tokens that remain.
    ///
    /// [`AnyModel::remap`]: crate::models::AnyModel::remap
    pub fn remap(&mut self, remap: &FeatureRemap) -> PruneOutcome {
        let outcome = PruneOutcome {
            removed: remap.dropped(),
            kept: remap.kept(),
        };
        if outcome.removed == 0 {
            return outcome;
        }
        self.vocabulary.remap(remap);
        for m in &mut self.models {
            m.model.remap(remap);
        }
        let trained = usize::try_from(self.trained_features).unwrap_or(usize::MAX);
        self.trained_features = remap.kept_below(trained) as u64;
        outcome
    }

    /// The model file size past which a save prunes (see [`SpamFilter::save`]).
    pub fn max_model_bytes(&self) -> u64 {
        self.max_model_bytes
    }

    /// Sets the model file size past which a save prunes; it is saved in the model file.
    pub fn set_max_model_bytes(&mut self, bytes: u64) {
        self.max_model_bytes = bytes;
    }

    /// The record of learned messages.
    pub fn learned(&self) -> &LearnedMessages {
        &self.learned
    }

    /// Replaces the verdict thresholds (from flags or the config file).
    pub fn set_thresholds(&mut self, thresholds: Thresholds) {
        self.thresholds = thresholds;
    }

    /// Makes `kind` the active model, if it was fitted.
    pub fn set_active(&mut self, kind: ModelKind) -> Result<()> {
        if self.model(kind).is_none() {
            return Err(Error::Config(format!(
                "model {kind} is not in this model file"
            )));
        }
        self.active = kind;
        Ok(())
    }

    /// The fitted model of a kind.
    pub fn model(&self, kind: ModelKind) -> Option<&TrainedModel> {
        self.models.iter().find(|m| m.model.kind() == kind)
    }

    /// The kinds of the fitted models.
    pub fn model_kinds(&self) -> Vec<ModelKind> {
        self.models.iter().map(|m| m.model.kind()).collect()
    }

    /// The model whose verdicts count.
    pub fn active(&self) -> ModelKind {
        self.active
    }

    /// The tokenizer settings used in training.
    pub fn tokenizer_config(&self) -> &TokenizerConfig {
        &self.tokenizer
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// The verdict thresholds.
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// What training saw.
    pub fn summary(&self) -> &TrainingSummary {
        &self.summary
    }
}
