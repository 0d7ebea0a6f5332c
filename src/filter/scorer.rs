//! Scoring with one model straight from a model file's bytes: what the one-process-per-message
//! `filter` (and `classify`, `explain`) use. [`ScorerFile::open`] reads the file's head and
//! checks its checksum; [`ScorerFile::scorer`] reads and checks the chosen model's section
//! (for fusion: the fuser from the head and the section of each model it stacks),
//! then borrows the vocabulary's lookup arrays and the model's weights where they lie in the
//! bytes read instead of decoding them into new arrays, and never decodes the document
//! frequencies or the Naive Bayes counts, nor reads the other models' sections. The file
//! layout puts those borrowed fields first in each section for this reason (see
//! `SpamFilter::save`). The file is read, not mapped (see
//! [`ModelFileReader`]), so rewriting it in place under a
//! running scorer gives an error, never a crash.
//!
//! Every access into the borrowed arrays is bounds-checked, so a file whose checksums match
//! but whose contents are malformed gives wrong scores at worst, never a panic; the full
//! [`SpamFilter::load`](crate::SpamFilter::load) validates everything.

use super::layout::{HeadView, check_directory, wrong_model};
use crate::features::{SparseVector, VocabularyView};
use crate::filter::{Classification, Explanation, count_vector};
use crate::label::{Label, Thresholds};
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{Calibration, Fusion, LinearFunctionView, ModelKind, TrainedModelView};
use crate::tokenize::TokenizerConfig;
use std::path::Path;

/// A model file opened for scoring with one model: its head checked, that model's section found
/// (for fusion, those of the models it stacks).
pub struct ScorerFile {
    file: ModelFileReader,
    /// The sections of the models read: the chosen one, or those fusion stacks, in its order.
    models: Vec<usize>,
    /// The model that answers.
    kind: ModelKind,
}

impl ScorerFile {
    /// Opens the file, checks its head and finds the section of `model` (`None`: the file's
    /// active model), leaving the other sections untouched; [`ScorerFile::scorer`] checks and
    /// reads that section. Fails if the file has no such model.
    pub fn open(path: &Path, model: Option<ModelKind>) -> Result<ScorerFile, ModelFileError> {
        let file = ModelFileReader::open(path)?;
        let head: HeadView = model_file::decode_prefix(file.section(0)?, path)?;
        check_directory(
            path,
            file.sections(),
            &head.kinds,
            head.fusion.as_ref(),
            head.active,
        )?;
        let kind = model.unwrap_or(head.active);
        let missing = || ModelFileError::invalid(path, format!("it holds no {kind} model"));
        let read = match (kind, &head.fusion) {
            (ModelKind::Fusion, Some(fusion)) => fusion.models().to_vec(),
            (ModelKind::Fusion, None) => return Err(missing()),
            (kind, _) => vec![kind],
        };
        let models = read
            .iter()
            .map(|k| head.kinds.iter().position(|h| h == k).map(|i| i + 1))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(missing)?;
        Ok(ScorerFile { file, models, kind })
    }

    /// The scorer over the file: a few small fields decoded, the arrays borrowed.
    pub fn scorer(&self) -> Result<Scorer<'_>, ModelFileError> {
        let path = self.file.path();
        let head: HeadView = model_file::decode_prefix(self.file.section(0)?, path)?;
        let mut models = Vec::with_capacity(self.models.len());
        for &section in &self.models {
            let model: TrainedModelView =
                model_file::decode_prefix(self.file.section(section)?, path)?;
            if head.kinds.get(section - 1) != Some(&model.kind()) {
                return Err(wrong_model(path));
            }
            models.push((model.calibration, *model.function()));
        }
        let answer = match (self.kind, head.fusion, models.as_slice()) {
            (ModelKind::Fusion, Some(fusion), _) => Answer::Fused(fusion, models),
            (_, _, &[(calibration, function)]) => Answer::One(calibration, function),
            _ => return Err(wrong_model(path)),
        };
        Ok(Scorer {
            tokenizer: head.tokenizer,
            thresholds: head.thresholds,
            messages: head.summary.messages,
            vocabulary: head.vocabulary,
            kind: self.kind,
            answer,
        })
    }
}

/// Verdicts of one model, borrowing its arrays from a [`ScorerFile`]. Gives the same
/// classification and explanation as the [`SpamFilter`](crate::SpamFilter) saved in the file.
#[derive(Debug, Clone)]
pub struct Scorer<'a> {
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
    /// One model: its calibration and decision function.
    One(Calibration, LinearFunctionView<'a>),
    /// Fusion, and the calibration and decision function of each model it stacks, in its order.
    Fused(Fusion, Vec<(Calibration, LinearFunctionView<'a>)>),
}

/// Each model's calibrated log-odds of a count vector, in order.
fn log_odds(models: &[(Calibration, LinearFunctionView<'_>)], x: &SparseVector) -> Vec<f64> {
    models
        .iter()
        .map(|(c, f)| c.log_odds(f.decision(x)))
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
        let (x, tokens) = count_vector(&self.tokenizer, self.vocabulary.tokens(), raw);
        self.classify_vector(&x, tokens)
    }

    /// Why the model scores a message as it does, as [`SpamFilter::explain`](crate::SpamFilter::explain).
    pub fn explain(&self, raw: &[u8]) -> Explanation {
        let (x, tokens) = count_vector(&self.tokenizer, self.vocabulary.tokens(), raw);
        let classification = self.classify_vector(&x, tokens);
        match &self.answer {
            Answer::One(calibration, function) => Explanation::new(
                classification,
                *calibration,
                function.bias,
                function.contributions(&x),
                |id| self.vocabulary.tokens().token(id),
            ),
            Answer::Fused(fusion, models) => {
                Explanation::fused(classification, fusion, &log_odds(models, &x))
            }
        }
    }

    fn classify_vector(&self, x: &SparseVector, tokens: usize) -> Classification {
        match &self.answer {
            Answer::One(calibration, function) => Classification::new(
                function.decision(x),
                *calibration,
                self.thresholds,
                self.messages,
                self.kind,
                tokens,
            ),
            Answer::Fused(fusion, models) => Classification::fused(
                fusion,
                &log_odds(models, x),
                self.thresholds,
                self.messages,
                tokens,
            ),
        }
    }
}
