//! How a [`SpamFilter`] lies in its model file: section 0 (the head: settings, the model list,
//! the fuser, vocabulary, record of learned messages), then one section per model; loading checks it
//! before it is trusted, saving prunes first if the file would be over its size limit.

use super::learned::LearnedMessages;
use super::{SpamFilter, TrainingSummary};
use crate::features::{Vocabulary, VocabularyView};
use crate::label::Thresholds;
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{Fusion, ModelKind, TrainedModel};
use crate::tokenize::TokenizerConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A save that finds the file over its limit prunes to this share of the tokens the limit
/// allows, so that it does not prune again at the next few messages learned.
const PRUNE_HEADROOM: f64 = 0.9;

/// Most rounds of pruning one save does: each shrinks the tokens in proportion to the
/// excess; a file whose fixed part (settings, record of learned messages) alone is over the
/// limit stops when no token is left.
const MAX_PRUNE_ROUNDS: usize = 16;

/// Section 0 of a model file, as written.
#[derive(Serialize)]
struct HeadRef<'a> {
    tokenizer: &'a TokenizerConfig,
    active: ModelKind,
    thresholds: Thresholds,
    summary: &'a TrainingSummary,
    /// The model in each following section, in order.
    kinds: Vec<ModelKind>,
    /// The fusion of those models, if the filter has it (small: read by every scorer).
    fusion: &'a Option<Fusion>,
    /// Then, so a scorer can borrow its lookup arrays (see `crate::filter::scorer`) and stop there.
    vocabulary: &'a Vocabulary,
    learned: &'a LearnedMessages,
    trained_features: u64,
    max_model_bytes: u64,
}

/// Section 0 of a model file, as read.
#[derive(Deserialize)]
struct Head {
    tokenizer: TokenizerConfig,
    active: ModelKind,
    thresholds: Thresholds,
    summary: TrainingSummary,
    kinds: Vec<ModelKind>,
    fusion: Option<Fusion>,
    vocabulary: Vocabulary,
    learned: LearnedMessages,
    trained_features: u64,
    max_model_bytes: u64,
}

/// Section 0 of a model file, as a scorer reads it: the vocabulary's lookup arrays borrowed,
/// its document frequencies not read at all.
#[derive(Deserialize)]
pub(crate) struct HeadView<'a> {
    pub tokenizer: TokenizerConfig,
    pub active: ModelKind,
    pub thresholds: Thresholds,
    pub summary: TrainingSummary,
    pub kinds: Vec<ModelKind>,
    pub fusion: Option<Fusion>,
    #[serde(borrow)]
    pub vocabulary: VocabularyView<'a>,
}

/// Checks that the head's model list matches the file's sections, and its fuser (if any) the
/// models.
pub(crate) fn check_directory(
    path: &Path,
    sections: usize,
    kinds: &[ModelKind],
    fusion: Option<&Fusion>,
    active: ModelKind,
) -> std::result::Result<(), ModelFileError> {
    if let Some(f) = fusion {
        f.validate(kinds)
            .map_err(|reason| ModelFileError::invalid(path, reason))?;
    }
    let active_held = kinds.contains(&active) || (active == ModelKind::Fusion && fusion.is_some());
    if sections == kinds.len() + 1 && active_held {
        Ok(())
    } else {
        Err(ModelFileError::invalid(
            path,
            "the model directory does not match its sections",
        ))
    }
}

pub(crate) fn wrong_model(path: &Path) -> ModelFileError {
    ModelFileError::invalid(path, "a model section holds the wrong model")
}

impl SpamFilter {
    /// Loads a filter saved by [`SpamFilter::save`], every model in it, checking it before it
    /// is trusted. (Scoring alone needs much less: see [`crate::filter::scorer::ScorerFile`].)
    pub fn load(path: &Path) -> std::result::Result<SpamFilter, ModelFileError> {
        let reader = ModelFileReader::open(path)?;
        let head: Head = reader.read(0)?;
        head.vocabulary
            .validate()
            .map_err(|reason| ModelFileError::invalid(path, reason))?;
        check_directory(
            path,
            reader.sections(),
            &head.kinds,
            head.fusion.as_ref(),
            head.active,
        )?;
        let mut models = Vec::with_capacity(head.kinds.len());
        for (i, kind) in head.kinds.iter().enumerate() {
            let model: TrainedModel = reader.read(i + 1)?;
            if model.model.kind() != *kind {
                return Err(wrong_model(path));
            }
            models.push(model);
        }
        Ok(SpamFilter {
            tokenizer: head.tokenizer,
            vocabulary: head.vocabulary,
            models,
            fusion: head.fusion,
            active: head.active,
            thresholds: head.thresholds,
            summary: head.summary,
            learned: head.learned,
            trained_features: head.trained_features,
            max_model_bytes: head.max_model_bytes,
        })
    }

    /// Saves the filter atomically to the model file whose update lock is held: one section for
    /// the settings, vocabulary and record of learned messages, one per model (see
    /// [`model_file::save_bytes`]). Each model's cached decision function is brought up to
    /// date first, so the file's scorer agrees with this filter. A file that would be larger
    /// than [`SpamFilter::max_model_bytes`] is pruned first: the least useful tokens go (see
    /// [`Vocabulary::keep_most_useful`]) until it is under the limit with some room, or no
    /// token is left (the settings and the record of learned messages are never pruned).
    pub fn save(
        &mut self,
        lock: &model_file::UpdateLock,
    ) -> std::result::Result<(), ModelFileError> {
        let mut bytes = self.encode();
        for _ in 0..MAX_PRUNE_ROUNDS {
            let size = bytes.len() as u64;
            if size <= self.max_model_bytes || self.vocabulary.is_empty() {
                break;
            }
            let tokens = self.vocabulary.len();
            let allowed = tokens as f64 * self.max_model_bytes as f64 / size as f64;
            self.prune_to(((allowed * PRUNE_HEADROOM) as usize).min(tokens - 1));
            bytes = self.encode();
        }
        model_file::save_bytes(&bytes, lock)
    }

    /// The model file's bytes, the models' cached functions refreshed first.
    fn encode(&mut self) -> Vec<u8> {
        for m in &mut self.models {
            m.model.refresh();
        }
        let head = HeadRef {
            tokenizer: &self.tokenizer,
            vocabulary: &self.vocabulary,
            learned: &self.learned,
            trained_features: self.trained_features,
            max_model_bytes: self.max_model_bytes,
            active: self.active,
            thresholds: self.thresholds,
            summary: &self.summary,
            kinds: self.model_kinds(),
            fusion: &self.fusion,
        };
        let mut sections = vec![model_file::encode_section(&head)];
        sections.extend(self.models.iter().map(model_file::encode_section));
        model_file::encode_sections(&sections)
    }
}
