//! Scoring with one model straight from a model file's bytes: what the one-process-per-message
//! `filter` (and `classify`, `explain`) use. [`ScorerFile::open`] reads the file's small head
//! and checks its checksum; [`ScorerFile::scorer`] reads and checks the vocabulary's lookup
//! section and the chosen model's section (for fusion: the fuser from the head and the section
//! of each model it stacks), then borrows the lookup arrays and the model's
//! weights where they lie in the bytes read instead of decoding them into new arrays, and never
//! reads the vocabulary's counts, the record of learned messages or the other models' sections,
//! nor decodes the Naive Bayes counts. The file layout puts the borrowed fields first in each
//! section for this reason (see `SpamFilter::save`). The file is read, not mapped (see
//! [`ModelFileReader`]), so rewriting it in place under a running scorer gives an error, never
//! a crash.
//!
//! A file whose journal is not empty (messages `spamsort learn` appended since the last save)
//! is scored exactly as [`SpamFilter::load`](crate::SpamFilter::load) would: the chosen model
//! (for fusion, the models it stacks) is loaded whole and the journal applied, which costs more than borrowing until the next
//! save (a compaction) empties the journal.
//!
//! Every access into the borrowed arrays is bounds-checked, so a file whose checksums match
//! but whose contents are malformed gives wrong scores at worst, never a panic; the full
//! [`SpamFilter::load`](crate::SpamFilter::load) validates everything.

use super::SpamFilter;
use super::layout::{FIRST_MODEL_SECTION, Head, VOCABULARY_SECTION, wrong_model};
use crate::features::{FeatureId, SparseVector, VocabularyView};
use crate::filter::{Classification, Explanation, count_vector};
use crate::label::{Label, Thresholds};
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{
    Calibration, Fusion, LinearFunctionView, ModelKind, NbScoring, TrainedModelView,
};
use crate::tokenize::TokenizerConfig;
use std::path::Path;

/// A model file opened for scoring with one model: its head checked, that model's section found
/// (for fusion, those of the models it stacks).
pub struct ScorerFile {
    file: ModelFileReader,
    /// The file's head, read and checked once at open.
    head: Head,
    /// The sections of the models read: the chosen one, or those fusion stacks, in its order.
    models: Vec<usize>,
    /// The model that answers.
    kind: ModelKind,
    /// The chosen model loaded with the journal applied, if the file's journal is not empty.
    replayed: Option<SpamFilter>,
}

impl ScorerFile {
    /// Opens the file, checks its head and finds the section of `model` (`None`: the file's
    /// active model; fusion: the sections of the models it stacks), leaving the other sections
    /// untouched; [`ScorerFile::scorer`] checks and reads them. Fails if the file has no such
    /// model.
    pub fn open(path: &Path, model: Option<ModelKind>) -> Result<ScorerFile, ModelFileError> {
        let file = ModelFileReader::open(path)?;
        let head = Head::read(&file)?;
        let kind = model.unwrap_or(head.active);
        let missing = || ModelFileError::invalid(path, format!("it holds no {kind} model"));
        let read = match (kind, &head.fusion) {
            (ModelKind::Fusion, Some(fusion)) => fusion.models().to_vec(),
            (ModelKind::Fusion, None) => return Err(missing()),
            (kind, _) => vec![kind],
        };
        let models = read
            .iter()
            .map(|k| {
                let i = head.kinds.iter().position(|h| h == k)?;
                Some(FIRST_MODEL_SECTION + i)
            })
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(missing)?;
        // Learned messages in the journal change the counts: this model is loaded and the
        // journal applied (exact, slower; the next compaction makes the journal empty again).
        let replayed = if file.journal()?.records.is_empty() {
            None
        } else {
            Some(SpamFilter::read(&file, Some(kind))?)
        };
        Ok(ScorerFile {
            file,
            head,
            models,
            kind,
            replayed,
        })
    }

    /// The scorer over the file: a few small fields decoded, the arrays borrowed.
    pub fn scorer(&self) -> Result<Scorer<'_>, ModelFileError> {
        let path = self.file.path();
        let head = &self.head;
        let vocabulary: VocabularyView =
            model_file::decode_prefix(self.file.section(VOCABULARY_SECTION)?, path)?;
        let mut models = Vec::with_capacity(self.models.len());
        for &section in &self.models {
            let model: TrainedModelView =
                model_file::decode_prefix(self.file.section(section)?, path)?;
            if head.kinds.get(section - FIRST_MODEL_SECTION) != Some(&model.kind()) {
                return Err(wrong_model(path));
            }
            models.push(ModelView {
                calibration: model.calibration,
                function: *model.function(),
                scoring: model.scoring(),
            });
        }
        let answer = match (self.kind, head.fusion.clone(), models.len()) {
            (ModelKind::Fusion, Some(fusion), _) => Answer::Fused(fusion, models),
            (_, _, 1) => Answer::One(models.swap_remove(0)),
            _ => return Err(wrong_model(path)),
        };
        Ok(Scorer {
            replayed: self.replayed.as_ref(),
            tokenizer: head.tokenizer.clone(),
            thresholds: head.thresholds,
            messages: self
                .replayed
                .as_ref()
                .map_or(head.summary.messages, |f| f.summary.messages),
            vocabulary,
            kind: self.kind,
            answer,
        })
    }
}

/// Verdicts of one model (or fusion), borrowing its arrays from a [`ScorerFile`]. Gives the
/// same classification and explanation as the [`SpamFilter`](crate::SpamFilter) saved in the
/// file.
#[derive(Debug, Clone)]
pub struct Scorer<'a> {
    /// The model with the file's journal applied, which then answers instead of the arrays.
    replayed: Option<&'a SpamFilter>,
    tokenizer: TokenizerConfig,
    thresholds: Thresholds,
    /// Messages learned per class, ham first: with a 0, every verdict is unsure.
    messages: [u64; 2],
    vocabulary: VocabularyView<'a>,
    kind: ModelKind,
    answer: Answer<'a>,
}

/// What gives a [`Scorer`]'s verdicts.
#[derive(Debug, Clone)]
enum Answer<'a> {
    /// One model.
    One(ModelView<'a>),
    /// Fusion, and each model it stacks, in its order.
    Fused(Fusion, Vec<ModelView<'a>>),
}

/// One model as a scorer reads it: its calibration, its decision function borrowed from the
/// file, and for a Naive Bayes model its scoring, which combines the function's terms as the
/// model does.
#[derive(Debug, Clone)]
struct ModelView<'a> {
    calibration: Calibration,
    function: LinearFunctionView<'a>,
    scoring: Option<NbScoring>,
}

impl ModelView<'_> {
    /// The decision value and each present feature's share of it, as the model computes
    /// them (a Naive Bayes model through the same [`NbScoring::combine`]).
    fn contributions(&self, x: &SparseVector) -> (f64, Vec<(FeatureId, f64)>) {
        let mut terms = self.function.contributions(x);
        let decision = match self.scoring {
            Some(scoring) => scoring.combine(self.function.bias, &mut terms),
            None => self.function.decision(x),
        };
        (decision, terms)
    }

    /// The decision value alone.
    fn decision(&self, x: &SparseVector) -> f64 {
        match self.scoring {
            Some(_) => self.contributions(x).0,
            None => self.function.decision(x),
        }
    }
}

/// Each model's calibrated log-odds of a count vector, in order.
fn log_odds(models: &[ModelView<'_>], x: &SparseVector) -> Vec<f64> {
    models
        .iter()
        .map(|m| m.calibration.log_odds(m.decision(x)))
        .collect()
}

impl Scorer<'_> {
    /// The model that answers.
    pub fn model(&self) -> ModelKind {
        self.kind
    }

    /// The tokenizer settings the model was trained with.
    pub fn tokenizer_config(&self) -> &TokenizerConfig {
        &self.tokenizer
    }

    /// The verdict thresholds (the file's, unless replaced).
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// Replaces the verdict thresholds.
    pub fn set_thresholds(&mut self, thresholds: Thresholds) {
        self.thresholds = thresholds;
    }

    /// The class with no message learned, if there is one: then every verdict is unsure.
    pub fn missing_class(&self) -> Option<Label> {
        Label::ALL
            .into_iter()
            .find(|l| self.messages[l.index()] == 0)
    }

    /// Classifies one raw message.
    pub fn classify(&self, raw: &[u8]) -> Classification {
        if let Some(e) = self.replayed_explanation(raw) {
            return e.classification;
        }
        let (x, tokens) = count_vector(&self.tokenizer, self.vocabulary.tokens(), raw);
        match &self.answer {
            Answer::One(m) => self.classification(m.decision(&x), m.calibration, tokens),
            Answer::Fused(fusion, models) => self.fused(fusion, &log_odds(models, &x), tokens),
        }
    }

    /// Why the model scores a message as it does, as [`SpamFilter::explain`].
    pub fn explain(&self, raw: &[u8]) -> Explanation {
        if let Some(e) = self.replayed_explanation(raw) {
            return e;
        }
        let (x, tokens) = count_vector(&self.tokenizer, self.vocabulary.tokens(), raw);
        match &self.answer {
            Answer::One(m) => {
                let (decision, contributions) = m.contributions(&x);
                Explanation::new(
                    self.classification(decision, m.calibration, tokens),
                    m.calibration,
                    m.function.bias,
                    contributions,
                    |id| self.vocabulary.tokens().token(id),
                )
            }
            Answer::Fused(fusion, models) => {
                let log_odds = log_odds(models, &x);
                Explanation::fused(self.fused(fusion, &log_odds, tokens), fusion, &log_odds)
            }
        }
    }

    /// The explanation of the filter loaded with the journal applied (if the file has a
    /// journal), under this scorer's thresholds.
    fn replayed_explanation(&self, raw: &[u8]) -> Option<Explanation> {
        // `SpamFilter::read` with `only` holds that model (and for fusion the models it
        // stacks), so `explain` answers.
        let mut explanation = self.replayed?.explain(raw, Some(self.kind))?;
        let c = &mut explanation.classification;
        let calibration = match &self.answer {
            Answer::One(m) => m.calibration,
            Answer::Fused(..) => Calibration::IDENTITY,
        };
        *c = self.classification(c.decision, calibration, c.tokens);
        Some(explanation)
    }

    fn classification(
        &self,
        decision: f64,
        calibration: Calibration,
        tokens: usize,
    ) -> Classification {
        Classification::new(
            decision,
            calibration,
            self.thresholds,
            self.messages,
            self.kind,
            tokens,
        )
    }

    fn fused(&self, fusion: &Fusion, log_odds: &[f64], tokens: usize) -> Classification {
        Classification::fused(fusion, log_odds, self.thresholds, self.messages, tokens)
    }
}
