//! [`SpamFilter`]: tokenizer settings + vocabulary + (from the models issue on) the fitted
//! models and thresholds. It is what `train` builds, what the model file holds, and what every
//! front end asks for verdicts, so they can never disagree about a message.

use crate::corpus::LabeledCorpus;
use crate::error::{Error, Result};
use crate::eval::metrics::auc;
use crate::features::{
    Dataset, SparseVector, Vocabulary, VocabularyParams, stratified_folds, training_indices,
};
use crate::label::{Label, SpamScore, Thresholds, Verdict};
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{Classifier, ModelKind, ModelParams, TrainedModel};
use crate::tokenize::{Tokenized, Tokenizer, TokenizerConfig};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

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
    /// The best mean ROC area over [`SELECTION_FOLDS`]-fold cross-validation on the training
    /// messages (models fitted without calibration, which does not change a ranking).
    BestByCrossValidation,
}

/// Folds used by [`ActiveModel::BestByCrossValidation`].
pub const SELECTION_FOLDS: usize = 3;

/// One message's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Classification {
    /// Spam, ham or unsure under the filter's thresholds.
    pub verdict: Verdict,
    /// P(spam).
    pub score: SpamScore,
    /// The model's raw decision value (log-odds or margin).
    pub decision: f64,
    /// The model that answered.
    pub model: ModelKind,
    /// Tokens the message yielded.
    pub tokens: usize,
}

/// What training saw, for `info` and the end-of-training summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Messages per class, ham first.
    pub messages: [u64; 2],
    /// Tokens produced, all messages together.
    pub tokens: u64,
    /// Messages the MIME parser could not read (tokenized as text instead).
    pub fallbacks: u64,
    /// Messages cut short by the tokenizer's caps.
    pub truncated: u64,
}

/// The model of highest mean ROC area over [`SELECTION_FOLDS`] folds; ties go to the earlier
/// model in `params.models`. Folds reuse the training set's vectors: the vocabulary was built
/// on all of it, a small optimism shared by every model, which does not change their ranking
/// and saves re-tokenizing and re-vectorizing per fold. Folds and models run in parallel.
fn best_by_cross_validation(data: &Dataset, params: &TrainParams) -> Result<ModelKind> {
    let folds = stratified_folds(&data.labels, SELECTION_FOLDS, params.seed);
    let jobs: Vec<(usize, &ModelParams)> = (0..folds.len())
        .flat_map(|k| params.models.iter().map(move |p| (k, p)))
        .collect();
    let aucs: Vec<(ModelKind, f64)> = jobs
        .par_iter()
        .map(|&(k, p)| {
            let model = p.fit_uncalibrated(&data.subset(&training_indices(&folds, k)))?;
            let test = &folds[k];
            let decisions: Vec<f64> = test
                .iter()
                .map(|&i| model.decision(&data.rows[i]))
                .collect();
            let labels: Vec<Label> = test.iter().map(|&i| data.labels[i]).collect();
            Ok((p.kind(), auc(&decisions, &labels)))
        })
        .collect::<Result<_>>()?;
    let mean_auc = |kind: ModelKind| {
        let v: Vec<f64> = aucs
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, a)| *a)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let mut best = params.models[0].kind();
    for p in &params.models[1..] {
        if mean_auc(p.kind()) > mean_auc(best) {
            best = p.kind();
        }
    }
    Ok(best)
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
}

/// Section 0 of a model file, as written.
#[derive(Serialize)]
struct HeadRef<'a> {
    tokenizer: &'a TokenizerConfig,
    vocabulary: &'a Vocabulary,
    active: ModelKind,
    thresholds: Thresholds,
    summary: &'a TrainingSummary,
    /// The model in each following section, in order.
    kinds: Vec<ModelKind>,
}

/// Section 0 of a model file, as read.
#[derive(Deserialize)]
struct Head {
    tokenizer: TokenizerConfig,
    vocabulary: Vocabulary,
    active: ModelKind,
    thresholds: Thresholds,
    summary: TrainingSummary,
    kinds: Vec<ModelKind>,
}

/// A trained filter: the unit that is saved, loaded and asked for verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct SpamFilter {
    tokenizer: TokenizerConfig,
    vocabulary: Vocabulary,
    models: Vec<TrainedModel>,
    active: ModelKind,
    thresholds: Thresholds,
    summary: TrainingSummary,
}

impl SpamFilter {
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
        let tokenizer = Tokenizer::new(params.tokenizer.clone());
        let tokenized: Vec<(Tokenized, Label)> = corpus
            .messages
            .par_iter()
            .map(|(m, label)| {
                let t = tokenizer.tokenize(&m.bytes);
                tokenized();
                (t, *label)
            })
            .collect();
        let mut summary = TrainingSummary::default();
        for (t, label) in &tokenized {
            summary.messages[label.index()] += 1;
            summary.tokens += t.tokens.len() as u64;
            summary.fallbacks += u64::from(t.fallback);
            summary.truncated += u64::from(t.truncated);
        }
        let vocabulary = params
            .vocabulary
            .fit(tokenized.iter().map(|(t, l)| (t.tokens.as_slice(), *l)));
        let data = Dataset {
            rows: tokenized
                .par_iter()
                .map(|(t, _)| vocabulary.vectorize(&t.tokens))
                .collect(),
            labels: tokenized.iter().map(|(_, l)| *l).collect(),
            n_features: vocabulary.len(),
        };
        let models: Vec<TrainedModel> = params
            .models
            .par_iter()
            .map(|p| p.fit(&data, params.seed))
            .collect::<Result<_>>()?;
        let fitted: Vec<ModelKind> = models.iter().map(|m| m.model.kind()).collect();
        let active = match params.active {
            Some(ActiveModel::Fixed(kind)) if fitted.contains(&kind) => kind,
            Some(ActiveModel::Fixed(kind)) => {
                return Err(Error::Config(format!(
                    "active model {kind} is not among the models trained"
                )));
            }
            Some(ActiveModel::BestByCrossValidation) if fitted.len() > 1 => {
                best_by_cross_validation(&data, params)?
            }
            _ if fitted.contains(&ModelKind::LinearSvm) => ModelKind::LinearSvm,
            _ => *fitted
                .first()
                .ok_or_else(|| Error::Config("no model to train".into()))?,
        };
        Ok(SpamFilter {
            tokenizer: params.tokenizer.clone(),
            vocabulary,
            models,
            active,
            thresholds: Thresholds::default(),
            summary,
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

    /// The message's count vector over the vocabulary, and how many tokens it yielded.
    fn count_vector(&self, raw: &[u8]) -> (SparseVector, usize) {
        let tokens = Tokenizer::new(self.tokenizer.clone()).tokenize(raw).tokens;
        (self.vocabulary.vectorize(&tokens), tokens.len())
    }

    /// The verdict of `model` on a count vector; the decision value is computed once.
    fn classify_vector(
        &self,
        model: &TrainedModel,
        x: &SparseVector,
        tokens: usize,
    ) -> Classification {
        let decision = model.decision(x);
        let score = SpamScore::new(model.calibration.p_spam(decision));
        Classification {
            verdict: self.thresholds.verdict(score),
            score,
            decision,
            model: model.model.kind(),
            tokens,
        }
    }

    /// Why the named model (or the active one) scores a message as it does: the bias and each
    /// known token's share of the decision value, strongest first.
    pub fn explain(&self, raw: &[u8], kind: Option<ModelKind>) -> Option<Explanation> {
        let kind = kind.unwrap_or(self.active);
        let model = self.model(kind)?;
        let (x, tokens) = self.count_vector(raw);
        let classification = self.classify_vector(model, &x, tokens);
        let mut contributions: Vec<(String, f64)> = model
            .contributions(&x)
            .into_iter()
            .map(|(id, c)| (self.vocabulary.token(id).to_owned(), c))
            .collect();
        contributions.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then_with(|| a.0.cmp(&b.0)));
        Some(Explanation {
            classification,
            bias: model.model.function().bias,
            contributions,
        })
    }

    /// Learns one message as `label` (or, with `unlearn`, forgets it) in every model. The Naive
    /// Bayes models update their counts exactly; the SVM and logistic regression take one
    /// online step and cannot unlearn (they are left unchanged then). Tokens outside the
    /// vocabulary are not learned. Returns the models that changed.
    pub fn learn(&mut self, raw: &[u8], label: Label, unlearn: bool) -> Result<Vec<ModelKind>> {
        let (x, _) = self.count_vector(raw);
        let mut changed = Vec::new();
        for m in &mut self.models {
            let kind = m.model.kind();
            let exact = matches!(kind, ModelKind::BernoulliNb | ModelKind::MultinomialNb);
            if unlearn && !exact {
                continue;
            }
            m.model.learn(&x, label, unlearn)?;
            changed.push(kind);
        }
        let n = &mut self.summary.messages[label.index()];
        *n = if unlearn { n.saturating_sub(1) } else { *n + 1 };
        Ok(changed)
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

    /// Loads a filter saved by [`SpamFilter::save`], every model in it, checking it before it
    /// is trusted.
    pub fn load(path: &Path) -> std::result::Result<SpamFilter, ModelFileError> {
        SpamFilter::load_models(path, None)
    }

    /// Loads what scoring with one model needs: the settings, the vocabulary and that model
    /// (`None`: the active one), and leaves the other models' sections unread. This is what
    /// the one-process-per-message filter pays for, so it reads a fraction of the file.
    pub fn load_for_scoring(
        path: &Path,
        model: Option<ModelKind>,
    ) -> std::result::Result<SpamFilter, ModelFileError> {
        SpamFilter::load_models(path, Some(model))
    }

    /// `only`: `None` loads every model; `Some(kind)` loads one (`Some(None)`: the active).
    fn load_models(
        path: &Path,
        only: Option<Option<ModelKind>>,
    ) -> std::result::Result<SpamFilter, ModelFileError> {
        let mut reader = ModelFileReader::open(path)?;
        let head: Head = reader.read(0)?;
        head.vocabulary
            .validate()
            .map_err(|reason| ModelFileError::invalid(path, reason))?;
        if reader.sections() != head.kinds.len() + 1 || !head.kinds.contains(&head.active) {
            return Err(ModelFileError::invalid(
                path,
                "the model directory does not match its sections",
            ));
        }
        let wanted: Vec<ModelKind> = match only {
            None => head.kinds.clone(),
            Some(kind) => {
                let kind = kind.unwrap_or(head.active);
                if !head.kinds.contains(&kind) {
                    return Err(ModelFileError::invalid(
                        path,
                        format!("it holds no {kind} model"),
                    ));
                }
                vec![kind]
            }
        };
        let mut models = Vec::with_capacity(wanted.len());
        for (i, kind) in head.kinds.iter().enumerate() {
            if wanted.contains(kind) {
                let model: TrainedModel = reader.read(i + 1)?;
                if model.model.kind() != *kind {
                    return Err(ModelFileError::invalid(
                        path,
                        "a model section holds the wrong model",
                    ));
                }
                models.push(model);
            }
        }
        // Sections left undecoded are still checked: a damaged file is never used.
        reader.verify_unread()?;
        let active = if models.iter().any(|m| m.model.kind() == head.active) {
            head.active
        } else {
            wanted[0]
        };
        Ok(SpamFilter {
            tokenizer: head.tokenizer,
            vocabulary: head.vocabulary,
            models,
            active,
            thresholds: head.thresholds,
            summary: head.summary,
        })
    }

    /// Saves the filter atomically: one section for the settings and vocabulary, one per model.
    pub fn save(&self, path: &Path) -> std::result::Result<(), ModelFileError> {
        let head = HeadRef {
            tokenizer: &self.tokenizer,
            vocabulary: &self.vocabulary,
            active: self.active,
            thresholds: self.thresholds,
            summary: &self.summary,
            kinds: self.model_kinds(),
        };
        let mut sections = vec![model_file::encode_section(&head)];
        sections.extend(self.models.iter().map(model_file::encode_section));
        model_file::save_bytes(&model_file::encode_sections(&sections), path)
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
