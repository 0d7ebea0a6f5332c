//! [`SpamFilter`]: tokenizer settings + vocabulary + the models + thresholds + the record of
//! learned messages. It is what `train` builds (or [`SpamFilter::empty`] starts from nothing),
//! what the model file holds, what every front end asks for verdicts, and the one learner every
//! path uses (`learn`, spamd TELL, the daemon, `eval --online`), so they can never disagree
//! about a message.
//!
//! The folder is the filter tier: `active.rs` tells which models a filter holds and which one
//! answers, `layout.rs` says how the filter lies in its model file (loading and saving),
//! [`scorer`] scores with one model straight from the file's bytes (the pipe filter's fast path), [`shared`] is the filter shared by the long-running
//! front ends, [`policy`] is the model, thresholds, score scale and header settings every
//! front end applies the same way, [`stamp`] inserts the X-Spam-* fields, [`learned`] keeps the
//! record of learned messages, [`store`] is the learned state's interface (and "learn once"
//! over it), [`journal`] learns by appending to the model file's journal, [`dump`] writes the
//! whole learned state as text and rebuilds it, and [`update`] is the one way a model file is
//! changed whole.

mod active;
pub mod dump;
mod hashed_weights;
pub mod journal;
mod layout;
pub mod learned;
mod paired;
mod patch;
pub mod policy;
mod score_table;
pub mod scorer;
pub mod shared;
mod sparse;
pub mod stamp;
pub mod store;
mod train;
pub mod update;

use crate::error::{Error, Result};
use crate::features::{
    FeatureId, FeatureRemap, PruneRule, SparseVector, TokenTable, Vocabulary, VocabularyParams,
    hashed,
};
use crate::label::{Label, SpamScore, Thresholds, Verdict};
use crate::model_file::packed::Elements;
use crate::models::auc::auc;
use crate::models::{
    Calibration, Classifier, FoldDecisions, Fusion, ModelKind, ModelParams, TrainedModel,
};
use crate::tokenize::{Tokenizer, TokenizerConfig, Tokens};
use active::{resolve_active, split_fusion, with_fusion};
use learned::LearnedMessages;
pub(crate) use paired::PairedModels;
use serde::{Deserialize, Serialize};
use store::LearnedStore;

/// How to train a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainParams {
    /// Tokenizer settings, stored in the filter.
    pub tokenizer: TokenizerConfig,
    /// Vocabulary settings.
    pub vocabulary: VocabularyParams,
    /// The models to fit (default: all four and their fusion, with their defaults). Fusion
    /// (at most once) stacks the others, at least two of them.
    pub models: Vec<ModelParams>,
    /// How to pick the model whose verdicts count (default: fusion if among the models, else
    /// linear-svm if fitted, else the first).
    pub active: Option<ActiveModel>,
    /// Seed for everything random in training.
    pub seed: u64,
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            tokenizer: TokenizerConfig::default(),
            vocabulary: VocabularyParams::default(),
            models: ModelKind::WITH_FUSION
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
    /// messages (models fitted without calibration, which does not change a ranking; fusion
    /// scored on each fold by a fuser fitted on the other folds' held-out decisions).
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
    /// The verdict of `fusion` on the stacked models' log-odds (in its models' order): its
    /// decision value is the fused log-odds, P(spam) their logistic.
    pub(crate) fn fused(
        fusion: &Fusion,
        log_odds: &[f64],
        thresholds: Thresholds,
        messages: [u64; 2],
        tokens: usize,
    ) -> Self {
        Classification::new(
            fusion.decision(log_odds),
            Calibration::IDENTITY,
            thresholds,
            messages,
            ModelKind::Fusion,
            tokens,
        )
    }

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
            verdict: Verdict::Unsure,
            score,
            decision,
            log_odds: calibration.log_odds(decision),
            model,
            tokens,
        }
        .judged(thresholds, messages)
    }

    /// The same result with its verdict under `thresholds`, for a filter that has learned
    /// `messages` per class (ham first; with a 0 the verdict is unsure).
    pub(crate) fn judged(self, thresholds: Thresholds, messages: [u64; 2]) -> Self {
        Classification {
            verdict: if messages.contains(&0) {
                Verdict::Unsure
            } else {
                thresholds.verdict(self.score)
            },
            ..self
        }
    }
}

/// A message's count vector over a vocabulary, and how many tokens it yielded. The hashed
/// byte 4-grams are counted straight from the bytes, not made into `b4:` strings (the same
/// vector: see [`Tokenizer::byte_ngram_ids`]).
pub(crate) fn count_vector(
    tokenizer: &TokenizerConfig,
    vocabulary: TokenTable<'_, impl Elements<u32> + ?Sized>,
    raw: &[u8],
) -> (SparseVector, usize) {
    let (words, hashed) = words_and_hashed(tokenizer);
    let tokens = words.tokenize(raw).tokens;
    let hashed = hashed.byte_ngram_ids(raw);
    let n = tokens.len() + hashed.len();
    (vocabulary.count_vector(&tokens).with_hashed(hashed), n)
}

/// Two tokenizers that together do what one of `config` does: the first makes every token
/// but the hashed byte 4-grams, whose ids the second's [`Tokenizer::byte_ngram_ids`] gives.
pub(crate) fn words_and_hashed(config: &TokenizerConfig) -> (Tokenizer, Tokenizer) {
    let words = TokenizerConfig {
        byte_ngrams: 0,
        ..config.clone()
    };
    (Tokenizer::new(words), Tokenizer::new(config.clone()))
}

/// Counts one learned message of class `label` in `messages` (per class, ham first), or with
/// `unlearn` takes it away.
pub(crate) fn count_message(messages: &mut [u64; 2], label: Label, unlearn: bool) {
    let n = &mut messages[label.index()];
    *n = if unlearn {
        n.saturating_sub(1)
    } else {
        n.saturating_add(1)
    };
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
    /// Tokens produced, all training messages together (`train`'s; learning adds none).
    pub tokens: u64,
    /// Training messages the MIME parser could not read (tokenized as text instead).
    pub fallbacks: u64,
    /// Training messages cut short by the tokenizer's caps.
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

/// The smallest [`SpamFilter::max_model_bytes`]: 4 MiB, well above what the parts of a model
/// file that no save prunes can take (the hashed 4-gram weights, 1 MiB with both linear
/// models, and a full record of learned messages, about 1.3 MB, 1.6 MB once a prune has
/// marked its entries). Below what those take, every save would drop the whole vocabulary; at
/// 4 MiB about 1.5 MB (some 18,000 tokens) is left for it.
pub const MIN_MAX_MODEL_BYTES: u64 = 4 << 20;

/// Checks a model file size limit (see [`SpamFilter::set_max_model_bytes`]): one below
/// [`MIN_MAX_MODEL_BYTES`] is refused with a reason that names the smallest accepted.
pub fn check_max_model_bytes(bytes: u64) -> std::result::Result<(), String> {
    if bytes >= MIN_MAX_MODEL_BYTES {
        return Ok(());
    }
    Err(format!(
        "a model file size limit of {bytes} bytes is too small: give at least \
         {MIN_MAX_MODEL_BYTES} bytes (4 MiB), as below what the parts no save prunes take \
         (the hashed weights, the record of learned messages: up to about 2 MiB) every save \
         would drop all the tokens"
    ))
}

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
    /// Why `fusion` decides as it does: each stacked model's share of the fused log-odds,
    /// named by the model.
    pub(crate) fn fused(classification: Classification, fusion: &Fusion, log_odds: &[f64]) -> Self {
        let shares = fusion.shares(log_odds).into_iter();
        Explanation::new(
            classification,
            Calibration::IDENTITY,
            fusion.bias(),
            (0..).zip(shares).collect(),
            |i| fusion.models()[i as usize].name(),
        )
    }

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

    /// Both sides of the verdict: the `top` strongest tokens toward spam and toward ham, each
    /// strongest first, and what the remaining tokens of each side add up to. The bias, both
    /// sides' shown tokens and both rests sum to the decision value.
    pub fn sides(&self, top: usize) -> [Side<'_>; 2] {
        let side = |toward: Label| {
            let pulls = |c: f64| match toward {
                Label::Spam => c > 0.0,
                Label::Ham => c < 0.0,
            };
            let all = self.contributions.iter().filter(|(_, c)| pulls(*c));
            let strongest: Vec<&(String, f64)> = all.clone().take(top).collect();
            let rest: Vec<f64> = all.skip(top).map(|(_, c)| *c).collect();
            Side {
                toward,
                strongest,
                rest_count: rest.len(),
                rest_sum: rest.iter().sum(),
            }
        };
        [side(Label::Spam), side(Label::Ham)]
    }
}

/// One side of an [`Explanation`]: the tokens that pushed toward one class.
#[derive(Debug, Clone, PartialEq)]
pub struct Side<'e> {
    /// The class these tokens push toward.
    pub toward: Label,
    /// The strongest of them, strongest first: (token, share of the decision value).
    pub strongest: Vec<&'e (String, f64)>,
    /// How many more tokens push this way.
    pub rest_count: usize,
    /// Their shares summed (0 if none).
    pub rest_sum: f64,
}

/// A trained filter: the unit that is saved, loaded and asked for verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct SpamFilter {
    // Crate-visible for `crate::filter::dump`, which writes and rebuilds every field.
    pub(crate) tokenizer: TokenizerConfig,
    pub(crate) vocabulary: Vocabulary,
    pub(crate) models: Vec<TrainedModel>,
    /// The fusion of `models`, if it is among the filter's models.
    pub(crate) fusion: Option<Fusion>,
    pub(crate) active: ModelKind,
    pub(crate) thresholds: Thresholds,
    pub(crate) summary: TrainingSummary,
    pub(crate) learned: LearnedMessages,
    /// The vocabulary's size after `train`: the features training messages were counted in.
    pub(crate) trained_features: u64,
    /// A save prunes the least useful tokens while the file would be larger; at least
    /// [`MIN_MAX_MODEL_BYTES`] (every way in checks it, or raises a file's to it).
    pub(crate) max_model_bytes: u64,
}

impl SpamFilter {
    /// A filter that has learned nothing, with the tokenizer, vocabulary and model settings of
    /// `params` (as `bogofilter -s` starts an empty database): every decision is 0 and every
    /// verdict unsure until it has learned a message of each class. No model has Platt
    /// calibration, so P(spam) is the logistic of the decision value. The active model is
    /// `params.active` if fixed, else fusion if among the models, else logistic-regression if
    /// among them (the best single model learning from nothing: see the README), else the
    /// first. Fails on invalid model parameters.
    pub fn empty(params: &TrainParams) -> Result<SpamFilter> {
        params.tokenizer.check().map_err(Error::Config)?;
        let (others, fusion) = split_fusion(&params.models)?;
        let models: Vec<TrainedModel> = others
            .iter()
            .map(ModelParams::empty)
            .collect::<Result<_>>()?;
        let kinds: Vec<ModelKind> = models.iter().map(|m| m.model.kind()).collect();
        let fusion = fusion.map(|p| p.empty(&kinds)).transpose()?;
        let available = with_fusion(&kinds, fusion.is_some());
        let active = resolve_active(
            params.active,
            &available,
            &[ModelKind::Fusion, ModelKind::LogisticRegression],
        )?;
        Ok(SpamFilter {
            tokenizer: params.tokenizer.clone(),
            vocabulary: Vocabulary::default(),
            models,
            fusion,
            active,
            thresholds: Thresholds::default(),
            summary: TrainingSummary::default(),
            learned: LearnedMessages::default(),
            trained_features: 0,
            max_model_bytes: DEFAULT_MAX_MODEL_BYTES,
        })
    }

    /// Classifies one raw message with the active model.
    pub fn classify(&self, raw: &[u8]) -> Classification {
        self.classify_with(raw, self.active)
            .expect("the active model is always fitted")
    }

    /// Classifies one raw message with the named model (or fusion), if it was fitted.
    pub fn classify_with(&self, raw: &[u8], kind: ModelKind) -> Option<Classification> {
        if !self.has(kind) {
            return None;
        }
        let (x, tokens) = self.count_vector(raw);
        self.classify_vector(kind, &x, tokens)
    }

    /// Classifies one tokenized message with the named model (or fusion), if it was fitted
    /// (what `eval --online` does before it learns the message).
    pub fn classify_tokens(&self, tokens: &Tokens, kind: ModelKind) -> Option<Classification> {
        if !self.has(kind) {
            return None;
        }
        let x = self.vocabulary.vectorize(tokens);
        self.classify_vector(kind, &x, tokens.len())
    }

    /// Brings every model's cached decision function up to date with what it learned (see
    /// [`AnyModel::refresh`](crate::models::AnyModel::refresh)): what a save writes, and what scoring then reads.
    pub(crate) fn refresh(&mut self) {
        for m in &mut self.models {
            m.model.refresh();
        }
    }

    /// True if the filter holds the named model (or fusion).
    pub fn has(&self, kind: ModelKind) -> bool {
        match kind {
            ModelKind::Fusion => self.fusion.is_some(),
            kind => self.model(kind).is_some(),
        }
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

    /// The verdict of the named model (or fusion) on a count vector, if it was fitted; each
    /// decision value is computed once.
    fn classify_vector(
        &self,
        kind: ModelKind,
        x: &SparseVector,
        tokens: usize,
    ) -> Option<Classification> {
        self.classify_vector_paired(kind, x, tokens, None)
    }

    /// [`SpamFilter::classify_vector`], fusion's paired linear models (this filter's: see
    /// [`SpamFilter::paired_models`]) scored together where given: the same verdict.
    fn classify_vector_paired(
        &self,
        kind: ModelKind,
        x: &SparseVector,
        tokens: usize,
        paired: Option<&PairedModels>,
    ) -> Option<Classification> {
        let (thresholds, messages) = (self.thresholds, self.summary.messages);
        if kind == ModelKind::Fusion {
            let fusion = self.fusion.as_ref()?;
            let log_odds = self.fusion_inputs(fusion, x, paired);
            return Some(Classification::fused(
                fusion, &log_odds, thresholds, messages, tokens,
            ));
        }
        let model = self.model(kind)?;
        Some(Classification::new(
            model.decision(x),
            model.calibration,
            thresholds,
            messages,
            kind,
            tokens,
        ))
    }

    /// The log-odds of each model `fusion` stacks, in its order (a loaded filter holds them
    /// all: see `Fusion::validate`); the decisions of `paired` (this filter's) from it.
    fn fusion_inputs(
        &self,
        fusion: &Fusion,
        x: &SparseVector,
        paired: Option<&PairedModels>,
    ) -> Vec<f64> {
        let decisions = paired.map(|p| p.decisions(x));
        fusion
            .models()
            .iter()
            .map(|&k| {
                self.model(k).map_or(0.0, |m| {
                    let paired = decisions.as_ref().and_then(|d| d.of(k));
                    m.calibration
                        .log_odds(paired.unwrap_or_else(|| m.decision(x)))
                })
            })
            .collect()
    }

    /// Why the named model (or the active one) scores a message as it does: the bias and each
    /// known token's share of the decision value, strongest first; for fusion, each stacked
    /// model's share of the fused log-odds.
    pub fn explain(&self, raw: &[u8], kind: Option<ModelKind>) -> Option<Explanation> {
        let kind = kind.unwrap_or(self.active);
        if !self.has(kind) {
            return None;
        }
        let (x, tokens) = self.count_vector(raw);
        self.explain_vector(kind, &x, tokens)
    }

    /// The explanation of the named model (or fusion) of a count vector of `tokens` tokens.
    fn explain_vector(
        &self,
        kind: ModelKind,
        x: &SparseVector,
        tokens: usize,
    ) -> Option<Explanation> {
        let classification = self.classify_vector(kind, x, tokens)?;
        if let Some(fusion) = self.fusion.as_ref().filter(|_| kind == ModelKind::Fusion) {
            let log_odds = self.fusion_inputs(fusion, x, None);
            return Some(Explanation::fused(classification, fusion, &log_odds));
        }
        let model = self.model(kind)?;
        let (contributions, bias) = model.model.contributions(x);
        Some(Explanation::new(
            classification,
            model.calibration,
            bias,
            contributions,
            |id| self.vocabulary.token(id),
        ))
    }

    /// Learns one raw message as `label`, once: see [`SpamFilter::learn_tokens`].
    pub fn learn(&mut self, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        self.learn_message(raw, label)
    }

    /// Learns one tokenized message as `label` in the vocabulary (a token not seen before
    /// gets an id and counts from now on) and in every model (see [`AnyModel::learn`]), once:
    /// a message in the record of learned messages with the same label is left alone, one
    /// learned with the other label is unlearned first (as sa-learn does).
    ///
    /// [`AnyModel::learn`]: crate::models::AnyModel::learn
    pub fn learn_tokens(&mut self, tokens: &Tokens, label: Label) -> Result<LearnOutcome> {
        self.learn_once(tokens, label, now_utc())
    }

    /// Forgets one raw message learned before (no label needed: the record of learned
    /// messages has it); returns the label it was learned as, or `None` (nothing changed) if
    /// it is not in the record. The Naive Bayes models forget it exactly; the SVM and logistic
    /// regression take the opposite step (see [`AnyModel::learn`]).
    ///
    /// [`AnyModel::learn`]: crate::models::AnyModel::learn
    pub fn unlearn(&mut self, raw: &[u8]) -> Result<Option<Label>> {
        self.unlearn_message(raw)
    }

    /// Adds (or with `unlearn` removes) one message in the vocabulary and every model (see
    /// [`Vocabulary::learn`] for `known`), at time `at` (seconds since 1970-01-01 UTC). The
    /// fuser steps on the log-odds the models gave the message before they learned it (what
    /// classifying it showed); unlearning is its opposite step, as for the SVM and logistic
    /// regression.
    fn add_message(
        &mut self,
        tokens: &Tokens,
        label: Label,
        unlearn: bool,
        known: usize,
        at: u64,
    ) -> Result<()> {
        let before = self
            .fusion
            .as_ref()
            .map(|f| self.fusion_inputs(f, &self.vocabulary.vectorize(tokens), None));
        let x = self.vocabulary.learn(tokens, label, unlearn, known);
        for m in &mut self.models {
            m.model.learn(&x, label, unlearn)?;
        }
        if let (Some(fusion), Some(log_odds)) = (&mut self.fusion, before) {
            fusion.learn(&log_odds, if unlearn { label.other() } else { label });
        }
        count_message(&mut self.summary.messages, label, unlearn);
        self.summary.learned_at = Some(at);
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
    /// Naive Bayes models), the count of trained features, and which tokens each remembered
    /// message's counts are in (see [`LearnedAs::kept_below`]). Message counts are unchanged;
    /// unlearning a message later forgets it from the tokens that remain, not from one pruned
    /// and brought back by a newer message.
    ///
    /// [`LearnedAs::kept_below`]: learned::LearnedAs::kept_below
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
        self.learned.remap(remap);
        outcome
    }

    /// The model file size past which a save prunes (see [`SpamFilter::save`]).
    pub fn max_model_bytes(&self) -> u64 {
        self.max_model_bytes
    }

    /// Sets the model file size past which a save prunes; it is saved in the model file.
    /// Fails, changing nothing, on a size below [`MIN_MAX_MODEL_BYTES`] (see
    /// [`check_max_model_bytes`]).
    pub fn set_max_model_bytes(&mut self, bytes: u64) -> Result<()> {
        check_max_model_bytes(bytes).map_err(Error::Config)?;
        self.max_model_bytes = bytes;
        Ok(())
    }

    /// The record of learned messages.
    pub fn learned(&self) -> &LearnedMessages {
        &self.learned
    }

    /// Replaces the verdict thresholds (from flags or the config file).
    pub fn set_thresholds(&mut self, thresholds: Thresholds) {
        self.thresholds = thresholds;
    }

    /// Makes `kind` the active model, if it was fitted (fusion: if the filter has it).
    pub fn set_active(&mut self, kind: ModelKind) -> Result<()> {
        if !self.has(kind) {
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

    /// The kinds of the models fitted on tokens (fusion, if present, is [`SpamFilter::fusion`]).
    pub fn model_kinds(&self) -> Vec<ModelKind> {
        self.models.iter().map(|m| m.model.kind()).collect()
    }

    /// The fusion of the models, if the filter has it.
    pub fn fusion(&self) -> Option<&Fusion> {
        self.fusion.as_ref()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explanation_sides_show_the_strongest_each_way_and_sum_the_rest() {
        let contributions: Vec<(String, f64)> = [
            ("a", 3.0),
            ("b", -2.0),
            ("c", 1.5),
            ("d", -1.0),
            ("e", 0.5),
            ("f", -0.25),
        ]
        .map(|(t, c)| (t.to_string(), c))
        .to_vec();
        let decision = 0.5 + contributions.iter().map(|(_, c)| c).sum::<f64>();
        let e = Explanation {
            classification: Classification {
                verdict: Verdict::Spam,
                score: SpamScore::new(0.9),
                decision,
                log_odds: decision,
                model: ModelKind::LinearSvm,
                tokens: 6,
            },
            bias: 0.5,
            contributions,
            log_odds_per_unit: 1.0,
        };
        let [spam, ham] = e.sides(1);
        assert_eq!((spam.toward, ham.toward), (Label::Spam, Label::Ham));
        assert_eq!(spam.strongest, [&("a".to_string(), 3.0)]);
        assert_eq!(ham.strongest, [&("b".to_string(), -2.0)]);
        assert_eq!((spam.rest_count, spam.rest_sum), (2, 2.0));
        assert_eq!((ham.rest_count, ham.rest_sum), (2, -1.25));
        let shown: f64 = [&spam, &ham]
            .iter()
            .map(|s| s.strongest.iter().map(|(_, c)| c).sum::<f64>() + s.rest_sum)
            .sum();
        assert_eq!(e.bias + shown, decision);
        let [spam, _] = e.sides(10);
        assert_eq!(
            (spam.strongest.len(), spam.rest_count, spam.rest_sum),
            (3, 0, 0.0)
        );
    }
}
