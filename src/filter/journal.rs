//! Learning by appending: [`learn`] records what learning changes as [`StoreOp`]s in the model
//! file's journal (one record per run, see [`crate::model_file::Journal`]) instead of loading
//! every model and rewriting the whole file. It reads the head (for the tokenizer settings),
//! the record of learned messages (for "learn once"), the journal, and the score table's rows
//! and the models' small sections for the run's tokens, to work out the record's patch (what
//! the run changed, for the pipe filter: see `crate::filter::patch`); it appends and `fdatasync`s:
//! the cost of `bogofilter -s` rather than of a 7 MB save.
//!
//! Every full load ([`SpamFilter::load`]: `info`, `dump`, `serve`, the daemon, the next update)
//! applies the journal's operations in order through the same [`LearnedStore::apply`], so the
//! state is exactly the one learning in memory gives; the pipe filter's scorer takes the
//! records' patches into what a message needs instead (see `crate::filter::sparse`). Once
//! the journal holds [`COMPACT_RECORDS`] records or [`COMPACT_BYTES`] bytes, or a run
//! unlearns (unlearning reads document frequencies, which patches do not carry), the learn
//! saves the whole filter instead (the journal applied, the file pruned if over its limit, an
//! empty journal), so a reader never applies more than that (but where the model's folder takes
//! no new file, which a whole save needs: the journal then grows past [`COMPACT_RECORDS`],
//! said at every learn, up to [`COMPACT_BYTES`]). A run whose operations outgrow
//! [`RECORD_MEMORY`] goes on in the whole filter, loaded, and saves it: what a run holds is
//! bounded in bytes, whatever its number of messages.

use super::learned::{Digest, LearnedAs, LearnedLookup};
use super::patch::Patch;
use super::score_table::ScoreTable;
use super::sparse::{buckets, composed_for};
use super::store::{LearnedStore, StoreOp};
use super::update::{IfMissing, Updated, update};
use super::{SpamFilter, layout};
use crate::error::Result;
use crate::features::hashed::hashed_id;
use crate::label::Label;
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::tokenize::{TokenizerConfig, Tokens};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A journal of this many records is compacted by the next [`learn`]. The pipe filter takes
/// each record's patch into what a message needs (see `crate::filter::patch`), at a cost that
/// grows slowly with the journal (`benches/pipe_latency.sh 600`, whole SpamAssassin corpus,
/// the static build, the default models: 1.48 ms a message with no record, 1.79 with 1, 2.19
/// with 8, 2.57 with 16, against 3.22 for `bogofilter -p`), while a compaction costs the learn
/// that does it about 40 ms of CPU: filtering runs far more often than learning, so the
/// journal stays short, and one learn in 17 compacts (rarer than one in ten, so the learn's
/// 90th percentile stays that of an append).
pub const COMPACT_RECORDS: usize = 16;

/// A journal of this many bytes is compacted by the next [`learn`].
pub const COMPACT_BYTES: u64 = 1 << 20;

/// The records in the journal of the model file at `path` and the bytes they take: what a
/// full load applies and the next compaction folds into the sections.
pub fn pending(path: &Path) -> std::result::Result<(usize, u64), ModelFileError> {
    let reader = ModelFileReader::open(path)?;
    let journal = reader.journal()?;
    Ok((journal.len(), journal.bytes()))
}

/// Why the bytes after the journal's records in the model file at `path` are no interrupted
/// append (see [`ModelFileReader::check_tail`]), if they are not: every reader stops before
/// them, and learning refuses until the file is rebuilt. Without the update lock: the file is
/// opened and checked twice, and damage is what both checks find, as a learner that cut a torn
/// tail and appended records in between can make one check see bytes no append leaves (or
/// bytes no longer there, which ends the check).
pub fn damaged_tail(path: &Path) -> std::result::Result<Option<String>, ModelFileError> {
    let mut damage = None;
    for _ in 0..2 {
        match ModelFileReader::open(path)?.check_tail() {
            Ok(()) | Err(ModelFileError::Truncated { .. }) => return Ok(None),
            Err(ModelFileError::Corrupt { reason, .. }) => damage = Some(reason),
            Err(e) => return Err(e),
        }
    }
    Ok(damage)
}

/// One journal record: the changes of one learn run. The record of learned messages' entries
/// come first, so a learner reads them ([`RecordEntries`]) without decoding its patch or the
/// messages' tokens; they commute with the count changes (which never read the record), so
/// applying the counts first and then the entries, each in order, gives the state of applying
/// the run's ops in order.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Record<'a> {
    /// The [`StoreOp::SetLearned`] changes, in order.
    learned: Vec<(Digest, Option<LearnedAs>)>,
    /// What the changes did, for a scorer of one message (see [`super::patch`]), if the
    /// learn could work that out exactly.
    patch: Option<Patch>,
    /// The [`StoreOp::AddMessage`] changes, in order.
    counts: Vec<StoreOp<'a>>,
}

/// The leading fields of a [`Record`]: all but its messages.
#[derive(Debug, Deserialize)]
pub(crate) struct RecordHead {
    /// The record's entries, decoded on the way to its patch (a learner reads them as
    /// [`RecordEntries`], without the patch).
    _entries: RecordEntries,
    /// The record's patch.
    pub patch: Option<Patch>,
}

/// The first field of a [`Record`]: what a learner reads of every record before it learns
/// (the patches it reads after, for its messages' byte 4-grams, see [`heads_for_message`]).
#[derive(Debug, Deserialize)]
struct RecordEntries {
    learned: Vec<(Digest, Option<LearnedAs>)>,
}

/// The heads of the journal records of the open file `reader`, in order, their patches
/// whole. A head that does not decode makes the file corrupt.
#[cfg(test)]
pub(crate) fn heads(
    reader: &ModelFileReader,
) -> std::result::Result<Vec<RecordHead>, ModelFileError> {
    decode_each(reader, |record, path| {
        model_file::decode_prefix(record, path)
    })
}

/// The heads of the journal records of the open file `reader`, in order, as a scorer or a
/// learner of messages whose byte 4-grams fall in `buckets` (ascending) needs them: each
/// patch that fits the one before (the first, a vocabulary of `tokens`, the score table's;
/// see [`Patch::fits`]) kept for those buckets alone ([`Patch::for_message`]), one that does
/// not kept whole (for the caller to find that it does not fit); and the histograms of counts
/// of the newest patch alone (only a learner reads them, of the newest, see
/// [`Patch::restore_histograms`]). Each record's patch is held whole only while it is decoded:
/// with 16 records, memory would otherwise hold a megabyte of them.
pub(crate) fn heads_for_message(
    reader: &ModelFileReader,
    tokens: u64,
    buckets: &[u32],
) -> std::result::Result<Vec<RecordHead>, ModelFileError> {
    let path = reader.path();
    let mut before = Some(tokens);
    let mut heads: Vec<RecordHead> = Vec::new();
    reader.for_each_record(|record| {
        let mut head: RecordHead = model_file::decode_prefix(record, path)?;
        before = match (&mut head.patch, before) {
            (Some(patch), Some(b)) if patch.fits(b) => {
                patch.for_message(buckets);
                Some(patch.vocabulary_len())
            }
            _ => None,
        };
        if let Some(older) = heads.last_mut().and_then(|h| h.patch.as_mut()) {
            older.drop_histograms();
        }
        heads.push(head);
        Ok::<_, ModelFileError>(())
    })?;
    Ok(heads)
}

/// Each journal record of the open file `reader`, in order, decoded by `decode` (see
/// [`ModelFileReader::for_each_record`]).
fn decode_each<T>(
    reader: &ModelFileReader,
    mut decode: impl FnMut(&[u8], &Path) -> std::result::Result<T, ModelFileError>,
) -> std::result::Result<Vec<T>, ModelFileError> {
    let path = reader.path();
    let mut decoded = Vec::new();
    reader.for_each_record(|record| {
        decoded.push(decode(record, path)?);
        Ok::<_, ModelFileError>(())
    })?;
    Ok(decoded)
}

/// The patches of journal records `heads`, if every one has one.
pub(crate) fn patches(heads: &[RecordHead]) -> Option<Vec<&Patch>> {
    heads.iter().map(|h| h.patch.as_ref()).collect()
}

impl Record<'_> {
    /// Applies the record to a store: the count changes, then the record's entries.
    fn apply_to(&self, store: &mut dyn LearnedStore) -> Result<()> {
        for op in &self.counts {
            store.apply(op.reborrow())?;
        }
        for &(digest, how) in &self.learned {
            store.apply(StoreOp::SetLearned { digest, how })?;
        }
        Ok(())
    }

    /// Whether the record takes a message's counts away.
    pub(crate) fn unlearns(&self) -> bool {
        self.messages().any(|m| m.2)
    }

    /// The record's [`StoreOp::AddMessage`] changes, in order: each message's tokens, its
    /// label and whether it is unlearned.
    pub(crate) fn messages(&self) -> impl Iterator<Item = (&Tokens, Label, bool)> {
        self.counts.iter().filter_map(|op| match op {
            StoreOp::AddMessage {
                tokens,
                label,
                unlearn,
                ..
            } => Some((tokens.as_ref(), *label, *unlearn)),
            StoreOp::SetLearned { .. } => None,
        })
    }
}

/// The journal of the open file `reader`, its records decoded, in order. A record that does
/// not decode makes the file corrupt.
pub(crate) fn records(
    reader: &ModelFileReader,
) -> std::result::Result<Vec<Record<'static>>, ModelFileError> {
    decode_each(reader, |bytes, path| {
        model_file::decode_payload(bytes, path)
    })
}

/// Applies the journal of the open file `reader` to `filter` (the file's sections, loaded).
/// A record that does not decode, or whose operations do not apply, makes the file corrupt.
/// Bytes after the records that no interrupted append leaves (see [`damaged_tail`]) are
/// left out, as every reader leaves them, and warned of.
/// (The warning reaches the log of `serve` and the daemon; `dump` and `info` say it
/// themselves.)
pub(crate) fn replay(
    reader: &ModelFileReader,
    filter: &mut SpamFilter,
) -> std::result::Result<(), ModelFileError> {
    // Read whole first, for where its records end (the records are decoded from it).
    let end = reader.journal()?.end();
    // Only a file with bytes after its records (rare: a torn or damaged tail) is checked again.
    if reader.file_len() > end
        && let Ok(Some(damage)) = damaged_tail(reader.path())
    {
        tracing::warn!(
            "{}: loaded without what follows the journal's damage: {damage}",
            reader.path().display()
        );
    }
    apply(reader.path(), &records(reader)?, filter)
}

/// Applies decoded journal `records` of the file at `path` to `filter`, in order. A record
/// whose operations do not apply makes the file corrupt.
pub(crate) fn apply(
    path: &Path,
    records: &[Record<'_>],
    filter: &mut SpamFilter,
) -> std::result::Result<(), ModelFileError> {
    for (i, record) in records.iter().enumerate() {
        record.apply_to(filter).map_err(|e| {
            ModelFileError::invalid(
                path,
                format!("journal record {} does not apply: {e}", i + 1),
            )
        })?;
    }
    Ok(())
}

/// The most bytes, about, that the operations of one [`learn`] run hold in memory (their
/// messages' tokens, see [`held_by`]) before the run goes on in the whole filter: past it,
/// [`JournalStore`] loads the filter, applies what it holds and every later operation to it,
/// and [`learn`] saves it as a compaction does. So a run of any number of messages holds at
/// most this besides the filter and the message it learns, never every message's tokens. A
/// record this large would mostly be compacted anyway: tokens of two bytes or more that take
/// this much in memory encode to over [`COMPACT_BYTES`].
pub const RECORD_MEMORY: usize = 4 << 20;

/// The learned state as [`learn`] sees it: the tokenizer settings and the record of learned
/// messages (the file's, with its journal applied); the counts are not read. Applying an
/// operation keeps the record up to date and queues the operation for the journal, until the
/// queue holds [`RECORD_MEMORY`]: from then on the store is the whole filter (the file's state,
/// the queued operations applied) and operations are applied to it.
pub struct JournalStore<'r> {
    reader: &'r ModelFileReader,
    tokenizer: TokenizerConfig,
    learned: LearnedLookup,
    record: Record<'static>,
    /// What `record` and the changes to `learned` take in memory, about (see [`held_by`]); 0
    /// once the store is `whole`.
    held: usize,
    /// The whole filter, once `record` outgrew [`RECORD_MEMORY`] (`record` is then empty).
    whole: Option<SpamFilter>,
}

impl LearnedStore for JournalStore<'_> {
    fn tokenizer_config(&self) -> &TokenizerConfig {
        &self.tokenizer
    }

    fn learned_as(&self, digest: Digest) -> Option<LearnedAs> {
        match &self.whole {
            Some(filter) => filter.learned_as(digest),
            None => self.learned.get(digest),
        }
    }

    fn apply(&mut self, op: StoreOp<'_>) -> Result<()> {
        if let Some(filter) = &mut self.whole {
            return filter.apply(op);
        }
        self.held = self.held.saturating_add(held_by(&op));
        match op {
            StoreOp::SetLearned { digest, how } => {
                self.learned.set(digest, how);
                self.record.learned.push((digest, how));
            }
            add => self.record.counts.push(add.into_owned()),
        }
        if self.held > RECORD_MEMORY {
            let filter = whole(self.reader, &std::mem::take(&mut self.record))?;
            (self.learned, self.held) = (LearnedLookup::new(Vec::new()), 0);
            self.whole = Some(filter);
        }
        Ok(())
    }
}

/// The bytes `op` takes in memory once a [`JournalStore`] holds it, about: its message's
/// tokens (their text and where each ends) and the op itself; for a record entry, the entry in
/// the record and in the lookup of learned messages.
fn held_by(op: &StoreOp<'_>) -> usize {
    let entry = std::mem::size_of::<(Digest, Option<LearnedAs>)>();
    match op {
        StoreOp::AddMessage { tokens, .. } => {
            let ends = tokens.len().saturating_mul(std::mem::size_of::<usize>());
            std::mem::size_of::<StoreOp<'static>>()
                .saturating_add(tokens.bytes())
                .saturating_add(ends)
        }
        StoreOp::SetLearned { .. } => 4 * entry,
    }
}

/// The whole filter of the open file `reader` (its journal applied) with `record` applied.
fn whole(reader: &ModelFileReader, record: &Record<'_>) -> Result<SpamFilter> {
    let mut filter = SpamFilter::read(reader, None)?;
    record.apply_to(&mut filter)?;
    Ok(filter)
}

impl<'r> JournalStore<'r> {
    /// The store of an open model file, and its head.
    fn open(
        reader: &'r ModelFileReader,
    ) -> std::result::Result<(Self, layout::Head), ModelFileError> {
        let head = layout::Head::read(reader)?;
        // Read as a list, not indexed: a learn looks up a message or a few (see
        // `LearnedLookup`), and indexing a record of many thousands would cost more.
        let mut learned = LearnedLookup::new(layout::read_learned(reader)?);
        // Only the record of learned messages matters here: neither the patches nor the
        // counts are decoded.
        let records: Vec<RecordEntries> = decode_each(reader, |record, path| {
            model_file::decode_prefix(record, path)
        })?;
        for record in &records {
            for &(digest, how) in &record.learned {
                learned.set(digest, how);
            }
        }
        let store = JournalStore {
            reader,
            tokenizer: head.tokenizer.clone(),
            learned,
            record: Record::default(),
            held: 0,
            whole: None,
        };
        Ok((store, head))
    }
}

/// The patch of `record`, to be appended to the journal of the open file `reader` (its head
/// `head`, its score table `table`, its journal's records `before` as
/// [`heads_for_message`] gives them for `buckets`, those of the record's messages' byte
/// 4-grams, see `super::sparse::buckets`): `record` applied to the file
/// restricted to its tokens with the patches before it taken in (see [`super::patch`]).
/// `None` where that would not be exact, or a record before has none; an error where a
/// model's section or the newest patch's histograms do not read.
fn patch_of(
    reader: &ModelFileReader,
    head: &layout::Head,
    table: &ScoreTable,
    before: &[RecordHead],
    buckets: &[u32],
    record: &Record<'_>,
) -> Result<Option<Patch>> {
    let Some(patches) = patches(before) else {
        return Ok(None);
    };
    let messages: Vec<&Tokens> = record.messages().map(|m| m.0).collect();
    let Some((mut filter, ids)) =
        composed_for(reader, head, table, &patches, None, &messages, buckets)?
    else {
        return Ok(None);
    };
    if let Some(newest) = patches.last() {
        newest.restore_histograms(&mut filter, reader.path())?;
    }
    record.apply_to(&mut filter)?;
    let next_id = patches
        .last()
        .map_or(table.index().tokens, |p| p.vocabulary_len());
    Ok(Some(Patch::of(filter, &ids, next_id)))
}

/// Changes the learned state of the model file at `path` as `change` says, through a
/// [`LearnedStore`], under the file's update lock (calling `waiting` if another writer holds
/// it). The operations `change` applies are appended to the journal as one record (all of a
/// run or none of it); if the journal would then pass [`COMPACT_RECORDS`] or
/// [`COMPACT_BYTES`], or the file its size limit, the whole filter is loaded instead, the
/// operations applied to it and the file saved (compacted, pruned if over its limit; `saved`
/// is then the filter). The same happens, as soon as they would, to operations that outgrow
/// [`RECORD_MEMORY`] in memory before `change` returns: the run goes on in the whole filter,
/// saved at its end (one save, all of the run or none of it). A missing file is started empty and changed through [`update`]
/// ([`IfMissing::StartEmpty`]). `change` returns its answer and whether it changed anything;
/// nothing is written if not. A file whose sections fail their checksums (which no load could
/// read) is refused before `change` runs. On any error the file's state is as it was (a torn
/// append is ignored by every reader).
pub fn learn<T>(
    path: &Path,
    waiting: impl FnOnce(),
    change: impl FnOnce(&mut dyn LearnedStore) -> Result<(T, bool)>,
) -> Result<Updated<T>> {
    let lock = model_file::lock_for_update_with(path, waiting)?;
    // The file the lock is for (a link's target as the lock was taken): read from it, not from
    // `path`, which may lead elsewhere by now.
    let path = &lock.model_path().to_path_buf();
    if !path.exists() {
        // `update` takes the lock again and checks again: a file created meanwhile is loaded.
        drop(lock);
        return update(path, IfMissing::StartEmpty, || {}, |filter| change(filter));
    }
    let reader = ModelFileReader::open(path)?;
    // Nothing after the records may be lost, by an append's cut or a compaction's save.
    reader.check_tail()?;
    // Nor may a learn be acknowledged into a file no load can read (which `patch_of` and the
    // learned state's sections alone would not show).
    reader.check_sections().map_err(unreadable)?;
    // Read whole first: the append needs where it ends, and the records are decoded from it.
    let journal = reader.journal()?;
    let (mut store, head) = JournalStore::open(&reader)?;
    let (answer, changed) = change(&mut store)?;
    let mut updated = Updated {
        answer,
        created: false,
        saved: None,
    };
    if !changed {
        return Ok(updated);
    }
    if let Some(mut filter) = store.whole {
        filter.save(&lock)?;
        updated.saved = Some(filter);
        return Ok(updated);
    }
    let mut record = store.record;
    if record.learned.is_empty() && record.counts.is_empty() {
        return Ok(updated);
    }
    // A record that unlearns is not journaled (see `super::patch`). Compacting saves the file
    // whole, which needs a new file in its folder: where the folder takes none (the file
    // writable to a group, its folder not), learning goes on by appending past
    // COMPACT_RECORDS, said at every learn, until a bound in bytes or an unlearn makes a
    // compaction unavoidable (and the learn fails, saying why).
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    let compactable = takes_new_files(folder);
    if !compactable {
        tracing::warn!(
            "{}: its folder {} takes no new file, so its journal ({} records, {} bytes) \
             cannot be compacted: learning goes on by appending, and fails once the journal \
             reaches {COMPACT_BYTES} bytes or a message is unlearned: let the users who learn \
             write to the folder",
            path.display(),
            folder.display(),
            journal.len(),
            journal.bytes(),
        );
    }
    let due = journal.len() + 1 > COMPACT_RECORDS;
    let mut compact = (due && compactable) || record.unlearns();
    let mut payload = Vec::new();
    if !compact {
        // A patch that cannot be worked out (a damaged section or histograms) is left out:
        // the record is still right, and a scorer then replays the journal instead. A record
        // before it that does not decode makes the file corrupt: an error.
        let worked = match ScoreTable::open(
            &reader,
            layout::SCORE_INDEX_SECTION,
            layout::SCORE_BLOCKS_SECTION,
        ) {
            Ok(table) => {
                let hashed = (record.messages()).flat_map(|m| m.0.iter().filter_map(hashed_id));
                let buckets = buckets(hashed);
                let before = heads_for_message(&reader, table.index().tokens, &buckets)?;
                patch_of(&reader, &head, &table, &before, &buckets, &record)
            }
            Err(e) => Err(e.into()),
        };
        record.patch = worked.unwrap_or_else(|e| {
            tracing::warn!("{}: journaled without a patch: {e}", path.display());
            None
        });
        payload = model_file::encode_section(&record);
        let bytes = model_file::record_len(&payload);
        compact = journal.bytes() + bytes > COMPACT_BYTES
            || reader.file_len() + bytes > head.max_model_bytes
            || payload.len() > model_file::MAX_RECORD;
    }
    if compact {
        let mut filter = whole(&reader, &record)?;
        filter.save(&lock)?;
        updated.saved = Some(filter);
    } else {
        reader.append(journal, &payload, &lock)?;
    }
    Ok(updated)
}

/// True if this process may make files in the folder `dir` (write and search access), as
/// saving a model file whole needs (a new file beside it, renamed over it).
fn takes_new_files(dir: &Path) -> bool {
    use rustix::fs::{Access, access};
    access(dir, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

/// The error of a model file whose sections fail their checksums (`damage`), refused by
/// [`learn`] before it learns anything: what it appended could never be loaded, nor saved by
/// `spamsort dump`, which loads the file too.
fn unreadable(damage: ModelFileError) -> ModelFileError {
    match damage {
        ModelFileError::Corrupt { path, reason } => ModelFileError::Corrupt {
            reason: format!(
                "{reason}; nothing was learned, as no load nor `spamsort dump` could read it \
                 back: `spamsort restore` a dump made before, or `spamsort train` again"
            ),
            path,
        },
        other => other,
    }
}

/// Rewrites the journal of the model file at `path` with each record's patch as `change`
/// leaves it (its checksum made right): a damaged or forged record, for tests.
#[cfg(test)]
pub(crate) fn rewrite_patches(path: &Path, change: impl Fn(&mut Option<Patch>)) {
    let bytes = std::fs::read(path).unwrap();
    let reader = ModelFileReader::open(path).unwrap();
    let start = reader.sections_end() as usize;
    let header_crc = u32::from_le_bytes(bytes[start + 4..start + 8].try_into().unwrap());
    let mut out = bytes[..start].to_vec();
    for mut record in records(&reader).unwrap() {
        change(&mut record.patch);
        let payload = model_file::encode_section(&record);
        out.extend(model_file::encode_record(header_crc, &payload));
    }
    std::fs::write(path, out).unwrap();
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::label::Label;
    use crate::models::ModelKind;
    use crate::tokenize::{Tokenizer, Tokens};
    use crate::{LearnOutcome, TrainParams};

    const MESSAGES: [(&str, Label); 4] = [
        (
            "Subject: cheap meds\n\nbuy cheap meds now, zorblax",
            Label::Spam,
        ),
        ("Subject: lunch\n\nsee you at noon for lunch", Label::Ham),
        ("Subject: offer\n\nfree offer, click now, quux", Label::Spam),
        (
            "Subject: notes\n\nmeeting notes attached, zorblax",
            Label::Ham,
        ),
    ];

    fn tokens(raw: &str) -> Tokens {
        Tokenizer::new(TrainParams::default().tokenizer)
            .tokenize(raw.as_bytes())
            .tokens
    }

    /// A saved model file that learned the first two messages, and the filter it holds.
    fn saved(dir: &Path) -> (std::path::PathBuf, SpamFilter) {
        let path = dir.join("m.spamsort");
        let mut filter = SpamFilter::empty(&TrainParams::default()).unwrap();
        for (raw, label) in &MESSAGES[..2] {
            filter.learn_once(&tokens(raw), *label, 1).unwrap();
        }
        filter
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        (path, filter)
    }

    /// [`saved`], then a third message learned as spam through the journal: a file whose
    /// journal holds one record. Returns the state before that record.
    fn saved_with_a_record(dir: &Path) -> (std::path::PathBuf, SpamFilter) {
        let (path, before) = saved(dir);
        journal_learn(&path, MESSAGES[2].0, Some(Label::Spam));
        (path, before)
    }

    /// Learns through the journal at a fixed time; returns what learning said.
    fn journal_learn(
        path: &Path,
        raw: &str,
        label: Option<Label>,
    ) -> Updated<Option<LearnOutcome>> {
        try_journal_learn(path, raw, label).unwrap()
    }

    /// [`journal_learn`], its error returned.
    fn try_journal_learn(
        path: &Path,
        raw: &str,
        label: Option<Label>,
    ) -> Result<Updated<Option<LearnOutcome>>> {
        learn(
            path,
            || {},
            |store| {
                let t = tokens(raw);
                let outcome = match label {
                    Some(label) => Some(store.learn_once(&t, label, 2)?),
                    None => store.unlearn_once(&t, 2)?.map(|_| LearnOutcome::Learned),
                };
                let changed = outcome.is_some_and(|o| o != LearnOutcome::AlreadyLearned);
                Ok((outcome, changed))
            },
        )
    }

    /// Both scorers of the file at `path` (of many messages: the models loaded whole; of one:
    /// the journal's patches taken in, or the journal replayed, sparsely) explain each of
    /// `messages` as `filter` does, bit for bit, for every model and fusion it holds.
    pub(crate) fn assert_scorers_explain_as(path: &Path, filter: &SpamFilter, messages: &[&[u8]]) {
        use crate::filter::scorer::ScorerFile;
        for kind in ModelKind::WITH_FUSION
            .into_iter()
            .filter(|&k| filter.has(k))
        {
            let file = ScorerFile::open(path, Some(kind)).unwrap();
            let many = file.scorer().unwrap().for_many_messages();
            for raw in messages {
                let expected = filter.explain(raw, Some(kind)).unwrap();
                assert_eq!(many.explain(raw).unwrap(), expected, "{kind}");
                let one = file.scorer().unwrap();
                assert_eq!(one.explain(raw).unwrap(), expected, "{kind}, one message");
                let one = file.scorer().unwrap();
                assert_eq!(
                    one.classify(raw).unwrap(),
                    expected.classification,
                    "{kind}, one message"
                );
            }
        }
    }

    #[test]
    fn journaled_learning_loads_as_the_state_learning_in_memory_gives() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut memory) = saved(dir.path());
        let size = std::fs::metadata(&path).unwrap().len();
        // A relabel, an unlearn, new tokens, a repeat (no-op), new tokens. A run that
        // unlearns (a relabel does) saves the file instead of journaling.
        let steps = [
            (MESSAGES[0].0, Some(Label::Ham), true),
            (MESSAGES[1].0, None, true),
            (MESSAGES[2].0, Some(Label::Spam), false),
            (MESSAGES[2].0, Some(Label::Spam), false),
            (MESSAGES[3].0, Some(Label::Ham), false),
        ];
        for (raw, label, saves) in steps {
            let t = tokens(raw);
            let expected = match label {
                Some(label) => Some(memory.learn_once(&t, label, 2).unwrap()),
                None => memory
                    .unlearn_once(&t, 2)
                    .unwrap()
                    .map(|_| LearnOutcome::Learned),
            };
            let got = journal_learn(&path, raw, label);
            assert_eq!(got.answer, expected, "{raw}");
            assert_eq!(got.saved.is_some(), saves, "{raw}: saved, not appended");
            if saves {
                // A save brings the models' cached functions up to date: so here.
                let scratch = dir.path().join("scratch.spamsort");
                memory
                    .save(&model_file::lock_for_update(&scratch).unwrap())
                    .unwrap();
            }
        }
        let reader = ModelFileReader::open(&path).unwrap();
        assert_eq!(reader.journal().unwrap().len(), 2, "two appended");
        assert!(
            std::fs::metadata(&path).unwrap().len() > size,
            "the file grew"
        );
        let loaded = SpamFilter::load(&path).unwrap();
        assert_eq!(loaded, memory);
        // The pipe filter's scorer applies the journal too, for every model.
        let messages = MESSAGES.map(|(raw, _)| raw.as_bytes());
        assert_scorers_explain_as(&path, &memory, &messages);
        // A save compacts: same state, no journal.
        let mut compacted = loaded.clone();
        compacted
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        let reader = ModelFileReader::open(&path).unwrap();
        assert!(reader.journal().unwrap().is_empty());
        assert_eq!(SpamFilter::load(&path).unwrap(), compacted);
    }

    #[test]
    fn a_torn_append_is_ignored_and_cut_off_by_the_next_learn() {
        let dir = tempfile::tempdir().unwrap();
        let (path, before) = saved_with_a_record(dir.path());
        let whole = std::fs::read(&path).unwrap();
        let mut after = before.clone();
        after
            .learn_once(&tokens(MESSAGES[2].0), Label::Spam, 2)
            .unwrap();
        // A learner killed mid-append left part of its record: every cut reads as before it.
        let start = ModelFileReader::open(&path).unwrap().sections_end() as usize;
        for cut in [
            start + 1,
            start + 11,
            (start + whole.len()) / 2,
            whole.len() - 1,
        ] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert_eq!(SpamFilter::load(&path).unwrap(), before, "cut at {cut}");
            // The scorers too: a file with bytes after its sections but no record whole.
            let raws = MESSAGES.map(|m| m.0.as_bytes());
            assert_scorers_explain_as(&path, &before, &raws);
        }
        // The next learn cuts the torn bytes off before it appends.
        journal_learn(&path, MESSAGES[2].0, Some(Label::Spam));
        assert_eq!(std::fs::read(&path).unwrap(), whole);
        assert_eq!(SpamFilter::load(&path).unwrap(), after);
    }

    #[test]
    fn a_record_whose_patch_does_not_decode_stops_the_next_learn() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = saved_with_a_record(dir.path());
        // A record (its checksum right) whose entries decode and whose patch does not.
        let bytes = std::fs::read(&path).unwrap();
        let start = ModelFileReader::open(&path).unwrap().sections_end() as usize;
        let header_crc = u32::from_le_bytes(bytes[start + 4..start + 8].try_into().unwrap());
        let entries: Vec<(Digest, Option<LearnedAs>)> = Vec::new();
        let payload = [model_file::encode_section(&entries), vec![0xff; 16]].concat();
        let record = model_file::encode_record(header_crc, &payload);
        std::fs::write(&path, [&bytes[..start], &record[..]].concat()).unwrap();
        let learned = try_journal_learn(&path, MESSAGES[3].0, Some(Label::Ham));
        assert!(learned.is_err(), "learned into a corrupt journal");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [&bytes[..start], &record[..]].concat()
        );
        assert!(SpamFilter::load(&path).is_err());
    }

    #[test]
    fn a_damaged_section_stops_learn_before_it_appends_anything() {
        // Review: with one damaged byte in its sections (which a load, so `info` and `dump`,
        // refuses), `learn` appended and acknowledged 16 runs that no load could ever read.
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = saved_with_a_record(dir.path());
        let clean = std::fs::read(&path).unwrap();
        let reader = ModelFileReader::open(&path).unwrap();
        let mut start = model_file::header_len(reader.sections());
        for i in 0..reader.sections() {
            let len = reader.section_len(i) as usize;
            for at in [start, start + len / 2, start + len - 1] {
                let mut damaged = clean.clone();
                damaged[at] ^= 0x20;
                std::fs::write(&path, &damaged).unwrap();
                assert!(SpamFilter::load(&path).is_err(), "byte {at} of section {i}");
                let learned = try_journal_learn(&path, MESSAGES[3].0, Some(Label::Ham));
                let err = learned.err().map(|e| e.to_string()).unwrap_or_default();
                let named = format!("section {i} of {}: checksum mismatch", reader.sections());
                assert!(err.contains(&named), "byte {at} of section {i}: {err:?}");
                assert!(err.contains("spamsort restore"), "{err}");
                assert_eq!(std::fs::read(&path).unwrap(), damaged, "byte {at}: changed");
            }
            start += len;
        }
        assert_eq!(start, reader.sections_end() as usize);
    }

    #[test]
    fn a_run_holds_at_most_record_memory_and_learns_each_message_once_as_in_memory() {
        // Review: a run held every message's tokens until its end (1.2 GB for a maildir of
        // 188 MB). Messages of 3,000 distinct words: about 100 KB of tokens held each.
        let message = |i: usize| {
            let words: Vec<String> = (0..3_000).map(|j| format!("w{i}x{j}")).collect();
            format!("Subject: bulk {i}\n\n{}\n", words.join(" "))
        };
        let dir = tempfile::tempdir().unwrap();
        let (path, mut memory) = saved_with_a_record(dir.path());
        memory
            .learn_once(&tokens(MESSAGES[2].0), Label::Spam, 2)
            .unwrap();
        // Past the bound, then a repeat of the run's first message, one of an earlier run, a
        // message learned before relabeled, and the first again as the other class.
        let mut run: Vec<(String, Label)> = (0..60).map(|i| (message(i), Label::Spam)).collect();
        run.extend([
            (message(0), Label::Spam),
            (MESSAGES[2].0.to_string(), Label::Spam),
            (MESSAGES[0].0.to_string(), Label::Ham),
            (message(0), Label::Ham),
        ]);
        let mut outcomes = Vec::new();
        for (raw, label) in &run {
            outcomes.push(memory.learn_once(&tokens(raw), *label, 2).unwrap());
        }
        let reader = ModelFileReader::open(&path).unwrap();
        let (mut store, _) = JournalStore::open(&reader).unwrap();
        for (i, (raw, label)) in run.iter().enumerate() {
            let outcome = store.learn_once(&tokens(raw), *label, 2).unwrap();
            assert_eq!(outcome, outcomes[i], "message {i}");
            assert!(
                store.held <= RECORD_MEMORY,
                "message {i}: {} held",
                store.held
            );
        }
        assert!(store.whole.is_some(), "the run went on in the whole filter");
        drop(store);
        // Through `learn`: one save, the state learning in memory gives.
        let updated = learn(
            &path,
            || {},
            |store| {
                let mut got = Vec::new();
                for (raw, label) in &run {
                    got.push(store.learn_once(&tokens(raw), *label, 2)?);
                }
                Ok((got, true))
            },
        )
        .unwrap();
        assert_eq!(updated.answer, outcomes);
        assert!(updated.saved.is_some(), "saved, not appended");
        let scratch = dir.path().join("scratch.spamsort");
        memory
            .save(&model_file::lock_for_update(&scratch).unwrap())
            .unwrap();
        assert_eq!(SpamFilter::load(&path).unwrap(), memory);
        let reader = ModelFileReader::open(&path).unwrap();
        assert!(reader.journal().unwrap().is_empty(), "compacted");
    }

    #[test]
    fn a_link_pointed_elsewhere_while_learn_waits_changes_the_file_it_locked_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = saved(dir.path());
        let b = dir.path().join("b.spamsort");
        std::fs::copy(&a, &b).unwrap();
        journal_learn(&b, MESSAGES[3].0, Some(Label::Ham));
        let b_bytes = std::fs::read(&b).unwrap();
        let link = dir.path().join("link.spamsort");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let held = model_file::lock_for_update(&a).unwrap();
        let (repointed, go) = std::sync::mpsc::channel();
        let learner = std::thread::spawn(move || {
            learn(
                &link,
                // Waiting for `a`'s lock: the link is pointed at `b` meanwhile.
                || {
                    std::fs::remove_file(&link).unwrap();
                    std::os::unix::fs::symlink(&b, &link).unwrap();
                    repointed.send(()).unwrap();
                },
                |store| {
                    let t = tokens(MESSAGES[2].0);
                    Ok((store.learn_once(&t, Label::Spam, 2)?, true))
                },
            )
            .unwrap()
        });
        go.recv().unwrap();
        drop(held);
        learner.join().unwrap();
        // `a`, whose lock it took, learned the message; `b` is untouched.
        assert_eq!(
            std::fs::read(dir.path().join("b.spamsort")).unwrap(),
            b_bytes
        );
        let learned = SpamFilter::load(&a).unwrap();
        let digest = super::super::learned::digest(&tokens(MESSAGES[2].0));
        assert!(learned.learned.get(digest).is_some());
    }

    #[test]
    fn a_reader_opened_before_an_append_sees_the_state_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let (path, before) = saved(dir.path());
        let reader = ModelFileReader::open(&path).unwrap();
        journal_learn(&path, MESSAGES[2].0, Some(Label::Spam));
        assert_eq!(SpamFilter::read(&reader, None).unwrap(), before);
        assert_ne!(SpamFilter::load(&path).unwrap(), before);
    }

    #[test]
    fn a_full_journal_is_compacted_by_the_next_learn() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut memory) = saved(dir.path());
        // The journal holds COMPACT_RECORDS records; the learn after that compacts.
        for i in 0..=COMPACT_RECORDS {
            let raw = format!("Subject: n{i}\n\nmessage number w{i}x");
            let label = if i % 2 == 0 { Label::Spam } else { Label::Ham };
            memory.learn_once(&tokens(&raw), label, 2).unwrap();
            let updated = journal_learn(&path, &raw, Some(label));
            let records = ModelFileReader::open(&path)
                .unwrap()
                .journal()
                .unwrap()
                .len();
            if i < COMPACT_RECORDS {
                assert!(updated.saved.is_none() && records == i + 1, "{i}");
            } else {
                assert!(updated.saved.is_some() && records == 0, "compacted");
            }
        }
        memory
            .save(&model_file::lock_for_update(&dir.path().join("memory.spamsort")).unwrap())
            .unwrap();
        assert_eq!(SpamFilter::load(&path).unwrap(), memory);
    }
}
