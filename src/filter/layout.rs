//! How a [`SpamFilter`] lies in its model file: section 0 (the head: settings, the model list,
//! a few counts), 1 (the vocabulary's counts), 2 (the record of learned messages), 3 and 4
//! (the score table's index and blocks: every token with each model's per-token values, see
//! [`super::score_table`]), then one section per model (from [`FIRST_MODEL_SECTION`]: what
//! the score table does not hold), then the journal of operations `spamsort learn` appended
//! since the last save (see [`super::journal`]). Each reader reads only what it needs: the
//! pipe filter 0, 3 and the blocks of 4 its message needs (and the section of a model that
//! sees hashed features, for those weights), and with a journal also the answering models'
//! sections, the journal and, if it unlearns, 1 (see [`super::sparse`]); `spamsort learn` 0
//! and 2 and the journal; a full
//! load all of them, rebuilding the vocabulary's lookup arrays and the models' functions from
//! the score table. Loading checks it all before it is trusted and applies the journal; saving
//! writes the whole state with an empty journal, pruning first if the file would be over its
//! size limit.
//!
//! The fuser, being small, is in the head. A new section goes before the models (moving
//! [`FIRST_MODEL_SECTION`] on), so "model `i` is section `FIRST_MODEL_SECTION + i`" stays one
//! constant.

use super::learned::{self, Digest, LearnedAs, LearnedMessages};
use super::score_table::{self, Contents, IndexHead, ScoreIndex};
use super::{SpamFilter, TrainingSummary};
use crate::label::Thresholds;
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{Fusion, ModelKind, TrainedModel};
use crate::tokenize::TokenizerConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A save that finds the file over its limit prunes it to this share of the limit, so that
/// it does not prune again at the next few messages learned.
const PRUNE_HEADROOM: f64 = 0.9;

/// Most rounds of pruning one save does: each shrinks the tokens in proportion to the
/// excess; a file whose fixed part (settings, record of learned messages) alone is over the
/// limit stops when no token is left.
const MAX_PRUNE_ROUNDS: usize = 16;

/// Section 0 of a model file, as written: small, so every reader reads it whole.
#[derive(Serialize)]
struct HeadRef<'a> {
    tokenizer: &'a TokenizerConfig,
    active: ModelKind,
    thresholds: Thresholds,
    summary: &'a TrainingSummary,
    /// The model in each section from [`FIRST_MODEL_SECTION`], in order.
    kinds: Vec<ModelKind>,
    /// The fusion of those models, if the filter has it (small: read by every scorer).
    fusion: &'a Option<Fusion>,
    trained_features: u64,
    max_model_bytes: u64,
}

/// Section 0 of a model file, as read.
#[derive(Deserialize)]
pub(crate) struct Head {
    pub tokenizer: TokenizerConfig,
    pub active: ModelKind,
    pub thresholds: Thresholds,
    pub summary: TrainingSummary,
    pub kinds: Vec<ModelKind>,
    pub fusion: Option<Fusion>,
    pub trained_features: u64,
    pub max_model_bytes: u64,
}

/// The section of the vocabulary's counts (document frequencies, last seen); its tokens are
/// in the score table.
pub(crate) const VOCABULARY_COUNTS_SECTION: usize = 1;

/// The section of the record of learned messages.
pub(crate) const LEARNED_SECTION: usize = 2;

/// The section of the score table's index (see [`super::score_table`]).
pub(crate) const SCORE_INDEX_SECTION: usize = 3;

/// The section of the score table's blocks: every token, with each model's per-token values.
pub(crate) const SCORE_BLOCKS_SECTION: usize = 4;

/// The section of the first model the head lists; the others follow in its order. A model's
/// section holds what the score table does not: its calibration, settings and state.
pub(crate) const FIRST_MODEL_SECTION: usize = 5;

impl Head {
    /// Reads and checks the head of an open file, and that its model list matches the file's
    /// sections.
    pub(crate) fn read(reader: &ModelFileReader) -> std::result::Result<Head, ModelFileError> {
        let mut head: Head = reader.read(0)?;
        // A limit below the floor (written before there was one) would make every save drop
        // the whole vocabulary: the file still loads, with the floor as its limit, which its
        // next save writes.
        head.max_model_bytes = head.max_model_bytes.max(super::MIN_MAX_MODEL_BYTES);
        let invalid = |reason| ModelFileError::invalid(reader.path(), reason);
        head.tokenizer.check().map_err(invalid)?;
        if let Some(f) = &head.fusion {
            f.validate(&head.kinds).map_err(invalid)?;
        }
        let active_held = head.kinds.contains(&head.active)
            || (head.active == ModelKind::Fusion && head.fusion.is_some());
        if reader.sections() == head.kinds.len() + FIRST_MODEL_SECTION && active_held {
            Ok(head)
        } else {
            Err(ModelFileError::invalid(
                reader.path(),
                "the model directory does not match its sections",
            ))
        }
    }
}

/// The entries of the record of learned messages (section [`LEARNED_SECTION`]), oldest
/// first, as a file of its version holds them. Format 9 kept no [`LearnedAs::kept_below`],
/// and a prune it made may have dropped a message's tokens: all it says is that each message
/// it remembers counts only in tokens it holds, so each entry is marked with their number
/// (tokens learned from here on come after them).
pub(crate) fn read_learned(
    reader: &ModelFileReader,
) -> std::result::Result<Vec<(Digest, LearnedAs)>, ModelFileError> {
    if reader.version() == 9 {
        let index = reader.section(SCORE_INDEX_SECTION)?;
        let index: IndexHead = model_file::decode_prefix(index, reader.path())?;
        let kept_below = Some(u32::try_from(index.tokens).unwrap_or(u32::MAX));
        let saved: Vec<(Digest, LearnedAs)> = reader.read_owned(LEARNED_SECTION)?;
        let marked = |(digest, how)| (digest, LearnedAs { kept_below, ..how });
        return Ok(saved.into_iter().map(marked).collect());
    }
    Ok(learned::from_saved(reader.read_owned(LEARNED_SECTION)?))
}

/// The error of asking the file at `path`, whose head is `head`, for a `kind` model it does
/// not hold.
pub(crate) fn no_such_model(path: &Path, kind: ModelKind, head: &Head) -> ModelFileError {
    let fused = head.fusion.is_some().then_some(ModelKind::Fusion);
    let held: Vec<&str> = head
        .kinds
        .iter()
        .copied()
        .chain(fused)
        .map(ModelKind::name)
        .collect();
    ModelFileError::NoSuchModel {
        path: path.to_path_buf(),
        model: kind.name().to_owned(),
        held: held.join(", "),
    }
}

pub(crate) fn wrong_model(path: &Path) -> ModelFileError {
    ModelFileError::invalid(path, "a model section holds the wrong model")
}

impl SpamFilter {
    /// Loads a filter saved by [`SpamFilter::save`], every model in it, checking it before it
    /// is trusted, and applies the operations its journal holds (see [`super::journal`]).
    /// (Scoring alone needs much less: see [`crate::filter::scorer::ScorerFile`].)
    pub fn load(path: &Path) -> std::result::Result<SpamFilter, ModelFileError> {
        SpamFilter::read(&ModelFileReader::open(path)?, None)
    }

    /// [`SpamFilter::load`] from an open file; with `only`, of that model alone (for fusion:
    /// the fuser and the models it stacks), made the active one, and without the record of
    /// learned messages, for a scorer that needs the journal applied.
    pub(crate) fn read(
        reader: &ModelFileReader,
        only: Option<ModelKind>,
    ) -> std::result::Result<SpamFilter, ModelFileError> {
        let mut filter = SpamFilter::read_sections(reader, only)?;
        super::journal::replay(reader, &mut filter)?;
        Ok(filter)
    }

    /// [`SpamFilter::read`] without applying the journal: the state its sections hold, for a
    /// caller that has the journal's records decoded already.
    pub(crate) fn read_sections(
        reader: &ModelFileReader,
        only: Option<ModelKind>,
    ) -> std::result::Result<SpamFilter, ModelFileError> {
        let path = reader.path();
        let invalid = |reason: String| ModelFileError::invalid(path, reason);
        let head = Head::read(reader)?;
        if let Some(kind) = only {
            let held = match kind {
                ModelKind::Fusion => head.fusion.is_some(),
                kind => head.kinds.contains(&kind),
            };
            if !held {
                return Err(no_such_model(path, kind, &head));
            }
        }
        let index: ScoreIndex = reader.read(SCORE_INDEX_SECTION)?;
        let table = Contents::read(&index, &reader.section_owned(SCORE_BLOCKS_SECTION)?)
            .map_err(invalid)?;
        if index.head.models.len() != head.kinds.len() {
            return Err(wrong_model(path));
        }
        let (vocabulary, columns) =
            table.into_vocabulary(&index, reader.read_owned(VOCABULARY_COUNTS_SECTION)?);
        vocabulary.validate().map_err(|r| invalid(r.to_string()))?;
        // Scoring never reads the record of learned messages (the journal's record entries then
        // go into an empty one).
        let learned = match only {
            Some(_) => LearnedMessages::default(),
            None => LearnedMessages::from_list(&read_learned(reader)?),
        };
        learned.check(vocabulary.len()).map_err(invalid)?;
        let fusion = match only {
            Some(kind) if kind != ModelKind::Fusion => None,
            _ => head.fusion,
        };
        let needed = |kind: ModelKind| match only {
            None => true,
            Some(ModelKind::Fusion) => fusion.as_ref().is_some_and(|f| f.models().contains(&kind)),
            Some(only) => only == kind,
        };
        let mut models = Vec::with_capacity(head.kinds.len());
        for (i, kind) in head.kinds.iter().enumerate() {
            if !needed(*kind) {
                continue;
            }
            let mut model: TrainedModel = reader.read_owned(FIRST_MODEL_SECTION + i)?;
            if model.model.kind() != *kind || index.head.models[i].kind != *kind {
                return Err(wrong_model(path));
            }
            columns
                .restore(&mut model, &index.head.models[i])
                .map_err(invalid)?;
            models.push(model);
        }
        // Held, as checked above: its models (for fusion, the ones it stacks) are read.
        let active = only.unwrap_or(head.active);
        Ok(SpamFilter {
            tokenizer: head.tokenizer,
            vocabulary,
            models,
            fusion,
            active,
            thresholds: head.thresholds,
            summary: head.summary,
            learned,
            trained_features: head.trained_features,
            max_model_bytes: head.max_model_bytes,
        })
    }

    /// Saves the filter atomically to the model file whose update lock is held: one section for
    /// the settings and vocabulary, one for the record of learned messages, one per model, and
    /// an empty journal (see [`model_file::save_bytes`]): a save compacts what the journal held. Each model's cached decision function is brought up to
    /// date first, so the file's scorer agrees with this filter. A file that would be larger
    /// than [`SpamFilter::max_model_bytes`] is pruned first: the least useful tokens go (see
    /// [`Vocabulary::keep_most_useful`](crate::features::Vocabulary::keep_most_useful)) until it is under the limit with some room, or no
    /// token is left (the settings, the hashed weights and the record of learned messages are
    /// never pruned; the limit is never below [`MIN_MAX_MODEL_BYTES`](super::MIN_MAX_MODEL_BYTES),
    /// well above what those can take, so tokens are always left).
    pub fn save(
        &mut self,
        lock: &model_file::UpdateLock,
    ) -> std::result::Result<(), ModelFileError> {
        let mut sections = self.encode();
        // Every way in keeps the limit at the floor or above; this keeps a save from emptying
        // the vocabulary whatever the field holds.
        let limit = self.max_model_bytes.max(super::MIN_MAX_MODEL_BYTES);
        // Once over the limit, pruned to the headroom's share of it. The bytes a token takes
        // are measured as the rounds go (the file's fixed part does not shrink with the
        // tokens); the first round guesses them as if it all did.
        let target = (limit as f64 * PRUNE_HEADROOM) as u64;
        let mut size = model_file::file_len(&sections) as u64;
        let mut before: Option<(usize, u64)> = None;
        for _ in 0..MAX_PRUNE_ROUNDS {
            let over = if before.is_none() { limit } else { target };
            if size <= over || self.vocabulary.is_empty() {
                break;
            }
            let tokens = self.vocabulary.len();
            let per_token = match before {
                Some((t, s)) if t > tokens && s > size => (s - size) as f64 / (t - tokens) as f64,
                _ => size as f64 / tokens as f64,
            };
            let excess = ((size - target) as f64 / per_token).ceil() as usize;
            before = Some((tokens, size));
            self.prune_to(tokens.saturating_sub(excess.max(1)));
            sections = self.encode();
            size = model_file::file_len(&sections) as u64;
        }
        model_file::save_sections(&sections, lock)
    }

    /// The model file's sections, the models' cached functions refreshed first.
    fn encode(&mut self) -> Vec<Vec<u8>> {
        self.refresh();
        let head = HeadRef {
            tokenizer: &self.tokenizer,
            trained_features: self.trained_features,
            max_model_bytes: self.max_model_bytes,
            active: self.active,
            thresholds: self.thresholds,
            summary: &self.summary,
            kinds: self.model_kinds(),
            fusion: &self.fusion,
        };
        let (score_index, score_blocks) = score_table::build(&self.vocabulary, &self.models);
        let mut sections = vec![
            model_file::encode_section(&head),
            model_file::encode_section(&self.vocabulary.counts()),
            model_file::encode_section(&self.learned),
            model_file::encode_section(&score_index),
            score_blocks,
        ];
        let n = self.vocabulary.len();
        sections.extend(self.models.iter_mut().map(|m| {
            // What the score table holds is taken out for the section and put back.
            let stripped = score_table::strip(m, n);
            let section = model_file::encode_section(&*m);
            score_table::unstrip(m, stripped);
            section
        }));
        sections
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::TrainParams;

    /// Regression: a model file's tokenizer settings were trusted as read, so a crafted one
    /// (or one restored from an edited dump) made the readers that hold a message's head, the
    /// pipe filter first, hold messages of any size whole.
    #[test]
    fn a_tokenizer_that_would_read_messages_of_any_size_whole_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let mut filter = SpamFilter::empty(&TrainParams::default()).unwrap();
        filter.tokenizer.max_input_bytes = usize::MAX;
        filter
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        let err = SpamFilter::load(&path).unwrap_err().to_string();
        assert!(err.contains("the tokenizer would read"), "{err}");
        let mut params = TrainParams::default();
        params.tokenizer.max_input_bytes = usize::MAX;
        assert!(SpamFilter::empty(&params).is_err());
    }

    /// Regression: `spamsort prune --max-model-bytes 0` was stored, and from then on every
    /// save dropped the whole vocabulary. A file that holds such a limit (from before the
    /// floor) still loads, with the floor as its limit, and its saves keep its tokens.
    #[test]
    fn a_file_holding_a_size_limit_below_the_floor_loads_and_saves_with_its_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let mut filter = SpamFilter::empty(&TrainParams::default()).unwrap();
        let tokens: crate::Tokens = "cheap pills now".split(' ').collect();
        filter.learn_tokens(&tokens, crate::Label::Spam).unwrap();
        filter.max_model_bytes = 0;
        let lock = model_file::lock_for_update(&path).unwrap();
        filter.save(&lock).unwrap();
        assert_eq!(filter.vocabulary.len(), 3, "the save kept the tokens");
        let mut loaded = SpamFilter::load(&path).unwrap();
        assert_eq!(loaded.vocabulary.len(), 3);
        assert_eq!(loaded.max_model_bytes(), crate::MIN_MAX_MODEL_BYTES);
        loaded.save(&lock).unwrap();
        assert_eq!(SpamFilter::load(&path).unwrap().vocabulary.len(), 3);
        assert!(filter.set_max_model_bytes(0).is_err());
    }

    /// A file of format 9 (the record of learned messages without which tokens hold each
    /// message's counts) loads, each entry's counts in the tokens the file holds, and its next
    /// save writes this build's format. Regression: its entries were read as if no prune had
    /// been made since they were learned, so unlearning one after the upgrade took a newer
    /// message's counts from a token format 9 had pruned.
    #[test]
    fn a_file_of_the_previous_format_loads_and_unlearns_as_its_prunes_left_it() {
        use crate::filter::sparse::tests::journal_learn;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let mut filter = SpamFilter::empty(&TrainParams::default()).unwrap();
        let (a, b) = ("Subject: a\n\nzqxj alpha", "Subject: b\n\nzqxj beta");
        filter.learn(a.as_bytes(), crate::Label::Spam).unwrap();
        filter
            .learn(b"Subject: c\n\nlunch", crate::Label::Ham)
            .unwrap();
        filter.prune(crate::PruneRule {
            min_count: 2,
            unseen_for: 0,
        });
        assert_eq!(filter.vocabulary.id("zqxj"), None);
        // The file format 9 wrote: its entries without marks.
        let mut sections = filter.encode();
        let entries: Vec<(learned::Digest, LearnedAs)> = filter.learned.iter().collect();
        sections[LEARNED_SECTION] = model_file::encode_section(&entries);
        let mut bytes = model_file::encode_sections(&sections);
        bytes[8..12].copy_from_slice(&9u32.to_le_bytes());
        let crc_at = model_file::header_len(sections.len()) - 4;
        let crc = crc32fast::hash(&bytes[..crc_at]);
        bytes[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(ModelFileReader::open(&path).unwrap().version(), 9);
        let loaded = SpamFilter::load(&path).unwrap();
        let tokens = filter.vocabulary.len() as u32;
        let marked = |(d, how): (learned::Digest, LearnedAs)| (d, how.label, how.kept_below);
        let expected = |(d, how): (learned::Digest, LearnedAs)| (d, how.label, Some(tokens));
        assert_eq!(
            loaded.learned.iter().map(marked).collect::<Vec<_>>(),
            filter.learned.iter().map(expected).collect::<Vec<_>>()
        );
        assert_eq!(loaded.vocabulary, filter.vocabulary);
        // B brings the pruned token back through the journal; unlearning A leaves B's count.
        journal_learn(&path, b, Some(crate::Label::Spam));
        assert_eq!(ModelFileReader::open(&path).unwrap().version(), 9);
        journal_learn(&path, a, None);
        let after = SpamFilter::load(&path).unwrap();
        let id = after.vocabulary.id("zqxj").unwrap();
        assert_eq!(after.vocabulary.df(id, crate::Label::Spam), 1);
        assert_eq!(
            ModelFileReader::open(&path).unwrap().version(),
            model_file::FORMAT_VERSION
        );
    }

    /// Regression: the prune guessed the bytes per token as if the whole file shrank with the
    /// vocabulary, so the file was left just under its limit and pruned again soon after.
    #[test]
    fn a_save_over_the_limit_leaves_the_file_at_its_headroom() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let mut filter = SpamFilter::empty(&TrainParams::default()).unwrap();
        for i in 0..40 {
            let tokens: crate::Tokens = (0..1500).map(|w| format!("w{i}x{w}")).collect();
            let label = [crate::Label::Spam, crate::Label::Ham][i % 2];
            filter.learn_tokens(&tokens, label).unwrap();
        }
        let limit = crate::MIN_MAX_MODEL_BYTES;
        filter.set_max_model_bytes(limit).unwrap();
        let lock = model_file::lock_for_update(&path).unwrap();
        filter.save(&lock).unwrap();
        let size = std::fs::metadata(&path).unwrap().len() as f64;
        let target = limit as f64 * PRUNE_HEADROOM;
        assert!(
            size <= target && size > 0.95 * target,
            "{size} bytes, {target} wanted"
        );
    }
}
