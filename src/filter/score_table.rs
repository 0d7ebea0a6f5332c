//! The score table: every vocabulary token with what each model's decision function holds
//! for it, laid out so that the one-process-per-message filter reads only the few kilobytes
//! a message's tokens need instead of the vocabulary's and the models' whole arrays (which
//! for a model trained on the SpamAssassin corpus are some 6 MB: reading, zeroing and
//! checksumming them was most of `filter`'s time).
//!
//! Two sections (see [`super::layout`]):
//! - the index ([`ScoreIndex`], small, read whole): per model what its function needs besides
//!   per-token values (calibration, feature settings, bias, Naive Bayes scoring, and which
//!   columns hold its weights, idf and, for a Naive Bayes model, its per-token counts), and
//!   the blocks' fences: the first hash of each block and where each block ends;
//! - the blocks, read one block at a time: the tokens sorted by [`slot_hash`] and cut into
//!   blocks of about [`BLOCK_BYTES`], each block a CRC-32 of the rest of it, then its records:
//!   token length (`u32` LE), the token's bytes, its vocabulary id (`u32` LE), then one `f64`
//!   LE per column. Tokens with equal hashes are never split across blocks, so a token is in
//!   the last block whose first hash is at most its own, or nowhere.
//!
//! Columns hold the values the model's [`LinearFunction`](crate::models::LinearFunction)
//! would give (a weight beyond its array as 0, an idf beyond its table as 1, which the
//! function treats the same way), so a scorer computes bit for bit the decision the filter
//! saved. Models that see the hashed byte 4-grams keep their hashed weights in their own
//! section (see [`super::scorer`]). A Naive Bayes model's per-token counts (ham, spam) are
//! columns too, so a journal's sparse replay (see [`super::sparse`]) takes them from the rows
//! it looked up rather than reading the model's whole section; its section keeps what depends
//! on every token. A model's idf or counts column is shared with an earlier column if their
//! values are equal bit for bit (the Bernoulli model's and the Boolean multinomial model's
//! counts are).
//!
//! A block is fetched with one positioned read and its checksum checked; adjacent blocks a
//! message needs are fetched in one read. (A reader of many messages loads the models whole
//! instead: see `super::scorer`.)

use crate::features::{CountsSection, FeatureConfig, FeatureId, Vocabulary, slot_hash};
use crate::model_file::packed::{Elements, Packed};
use crate::model_file::{ModelFileError, ModelFileReader};
use crate::models::{Calibration, ModelKind, NbScoring, TrainedModel};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Blocks are cut once they reach this many bytes: small enough that a message's few hundred
/// tokens read little, large enough that the index stays a few kilobytes per 100,000 tokens.
const BLOCK_BYTES: usize = 1024;

/// Bytes of a block's checksum.
const CRC_BYTES: usize = 4;

/// What a model's decision function needs besides its per-token columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScoreModel {
    /// Which model.
    pub kind: ModelKind,
    /// Decision value to P(spam).
    pub calibration: Calibration,
    /// How counts become the model's input.
    pub config: FeatureConfig,
    /// The function's constant term.
    pub bias: f64,
    /// How a Naive Bayes model combines its terms (`None`: a plain linear function).
    pub scoring: Option<NbScoring>,
    /// The column of its weights.
    pub weights: u32,
    /// The column of its idf table, if it has one.
    pub idf: Option<u32>,
    /// The length of its weight array (hashed features included).
    pub weights_len: u64,
    /// The length of its idf table.
    pub idf_len: u64,
    /// The columns of a Naive Bayes model's per-token counts (ham, spam), if the table holds
    /// them (`None`: a linear model, or counts its section keeps; see [`strip`]).
    pub counts: Option<[u32; 2]>,
    /// The length of its count arrays (if the table holds them).
    pub counts_len: u64,
}

impl ScoreModel {
    /// Its section holds hashed weights (see `super::hashed_weights`): a linear model that
    /// sees the hashed features.
    pub(crate) fn has_hashed_weights(&self) -> bool {
        self.config.hashed && self.kind.is_linear()
    }

    /// This entry for the model restricted to the tokens of vocabulary ids `ids` (ascending),
    /// renumbered `0..ids.len()` in that order: its weights and idf cover the same of them.
    pub fn restricted(&self, ids: &[FeatureId]) -> ScoreModel {
        let below = |len: u64| ids.partition_point(|&id| u64::from(id) < len) as u64;
        let front = self.config.input_width(0) as u64;
        let weights_len = match self.weights_len.checked_sub(front) {
            Some(vocabulary) if vocabulary > 0 => front + below(vocabulary),
            _ => self.weights_len,
        };
        ScoreModel {
            weights_len,
            idf_len: below(self.idf_len),
            counts_len: below(self.counts_len),
            ..self.clone()
        }
    }
}

/// The score table's index section: its head, then the blocks' fences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScoreIndex {
    /// Everything but the fences (encoded first: the head's fields are the index's first).
    pub head: IndexHead,
    /// The first hash of each block.
    #[serde(with = "crate::model_file::packed::u64s")]
    fences: Vec<u64>,
    /// Where each block ends in the blocks section.
    #[serde(with = "crate::model_file::packed::u32s")]
    ends: Vec<u32>,
}

/// What the score table's index holds besides the blocks' fences: the models' settings and
/// the vocabulary's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexHead {
    /// The models, in the head's order.
    pub models: Vec<ScoreModel>,
    /// Values per record.
    pub columns: u32,
    /// Slots of the vocabulary's hash table (see `Vocabulary::from_parts`).
    pub slots: u64,
    /// How many tokens the vocabulary holds: a token learned later is numbered from here.
    pub tokens: u64,
}

/// The index section as [`ScoreTable`] reads it: the head, and the fences borrowed where they
/// lie in the section's bytes. postcard encodes a struct as its fields in order, so this pair
/// reads [`ScoreIndex`]'s encoding (a unit test checks it).
type IndexView<'a> = (IndexHead, Fences<'a>);

/// Why an index that does not hold together is refused.
const MALFORMED: &str = "the score table's index is malformed";

/// Checks what a reader relies on before it trusts an index: a fence per block, fences
/// rising, blocks in order, at most four columns per model (its weights, idf and two count
/// arrays) and every column a model names among them.
fn check(
    head: &IndexHead,
    fences: &impl Elements<u64>,
    ends: &impl Elements<u32>,
) -> Result<(), &'static str> {
    if fences.len() != ends.len() {
        return Err(MALFORMED);
    }
    for i in 1..fences.len() {
        if fences.at(i - 1) >= fences.at(i) || ends.at(i - 1) > ends.at(i) {
            return Err(MALFORMED);
        }
    }
    if head.columns as usize > 4 * head.models.len() {
        return Err("the score table has more columns than its models");
    }
    let named = |c: u32| c < head.columns;
    if !head.models.iter().all(|m| {
        named(m.weights)
            && m.idf.is_none_or(named)
            && m.counts.is_none_or(|c| c.map(named) == [true; 2])
    }) {
        return Err("the score table names a column it does not have");
    }
    Ok(())
}

impl ScoreIndex {
    /// [`check`] of this index.
    fn check(&self) -> Result<(), &'static str> {
        check(&self.head, &self.fences, &self.ends)
    }
}

/// Builds the score table of a vocabulary and its models: the index and the blocks section's
/// bytes.
pub(crate) fn build(vocabulary: &Vocabulary, models: &[TrainedModel]) -> (ScoreIndex, Vec<u8>) {
    let n = vocabulary.len();
    // Columns by vocabulary id: each model's weights, its idf and a Naive Bayes model's counts
    // unless an earlier column holds the same values.
    let mut columns: Vec<Vec<f64>> = Vec::new();
    let mut score_models = Vec::with_capacity(models.len());
    for m in models {
        let f = m.model.function();
        let config = f.transform.config();
        let front = config.input_width(0).min(f.weights.len());
        let weights = (0..n)
            .map(|id| f.weights.get(front + id).copied().unwrap_or(0.0))
            .collect();
        columns.push(weights);
        let weights = columns.len() as u32 - 1;
        let table = f.transform.idf();
        let idf = (!table.is_empty()).then(|| {
            let idf = (0..n).map(|id| table.get(id).copied().unwrap_or(1.0));
            shared_column(&mut columns, idf.collect(), Some(weights))
        });
        let counts = moved_counts(m, n);
        let counts_len = counts.map_or(0, |[ham, _]| ham.len() as u64);
        let counts = counts.map(|arrays| {
            arrays.map(|a| {
                let values = (0..n).map(|id| a.get(id).copied().unwrap_or(0.0));
                shared_column(&mut columns, values.collect(), None)
            })
        });
        score_models.push(ScoreModel {
            kind: m.model.kind(),
            calibration: m.calibration,
            config,
            bias: f.bias,
            scoring: m.model.scoring(),
            weights,
            idf,
            // A weight or idf beyond the vocabulary belongs to no token: not kept.
            weights_len: f.weights.len().min(front + n) as u64,
            idf_len: table.len().min(n) as u64,
            counts,
            counts_len,
        });
    }
    let tokens = vocabulary.tokens();
    // The vocabulary's tokens are UTF-8 (it holds `str`s): their bytes need no checking.
    let bytes_of = |id: FeatureId| tokens.bytes_of(id).unwrap_or_default();
    let mut order: Vec<(u64, FeatureId)> = (0..n as FeatureId)
        .map(|id| (slot_hash(bytes_of(id)), id))
        .collect();
    order.sort_unstable();
    // Each record: its length, bytes and id, and a value per column; each block its checksum.
    let records: usize = (0..n as FeatureId)
        .map(|id| 8 + bytes_of(id).len() + 8 * columns.len())
        .sum();
    let mut blocks = Vec::with_capacity(records + records / BLOCK_BYTES * CRC_BYTES + CRC_BYTES);
    let (mut fences, mut ends) = (Vec::new(), Vec::new());
    let mut block: Vec<u8> = Vec::new();
    let mut last_hash = None;
    let close = |block: &mut Vec<u8>, blocks: &mut Vec<u8>, ends: &mut Vec<u32>| {
        blocks.extend_from_slice(&crc32fast::hash(block).to_le_bytes());
        blocks.append(block);
        ends.push(blocks.len() as u32);
    };
    for (hash, id) in order {
        if block.len() >= BLOCK_BYTES && last_hash != Some(hash) {
            close(&mut block, &mut blocks, &mut ends);
        }
        if block.is_empty() {
            fences.push(hash);
        }
        last_hash = Some(hash);
        let token = bytes_of(id);
        // The vocabulary's offsets are `u32`, so every token's length is one too.
        let len = u32::try_from(token.len()).unwrap_or(u32::MAX);
        block.extend_from_slice(&len.to_le_bytes());
        block.extend_from_slice(token);
        block.extend_from_slice(&id.to_le_bytes());
        for c in &columns {
            block.extend_from_slice(&c[id as usize].to_le_bytes());
        }
    }
    if !block.is_empty() {
        close(&mut block, &mut blocks, &mut ends);
    }
    let index = ScoreIndex {
        head: IndexHead {
            models: score_models,
            columns: columns.len() as u32,
            slots: vocabulary.slots() as u64,
            tokens: n as u64,
        },
        fences,
        ends,
    };
    (index, blocks)
}

/// Whether `a` and `b` hold the same values bit for bit (so a column or an array can be kept
/// once for both).
pub(crate) fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.iter()
        .map(|v| v.to_bits())
        .eq(b.iter().map(|v| v.to_bits()))
}

/// The column of `values` among `columns`: an earlier one (other than `avoid`) holding the
/// same values bit for bit, else `values` added as a new one.
fn shared_column(columns: &mut Vec<Vec<f64>>, values: Vec<f64>, avoid: Option<u32>) -> u32 {
    match columns.iter().position(|c| same_bits(c, &values)) {
        Some(i) if Some(i as u32) != avoid => i as u32,
        _ => {
            columns.push(values);
            columns.len() as u32 - 1
        }
    }
}

/// A Naive Bayes model's per-token counts (ham, spam) if the score table of a vocabulary of
/// `n` tokens holds them: if they cover at most its tokens (they cover exactly them in every
/// file spamsort writes; counts of more stay in the model's section, as would counts of
/// unequal lengths).
fn moved_counts(model: &TrainedModel, n: usize) -> Option<[&[f64]; 2]> {
    model
        .model
        .count_arrays()
        .filter(|[ham, spam]| ham.len() <= n && spam.len() == ham.len())
}

/// Takes out of a model what the score table of a vocabulary of `n` tokens holds: its
/// function's weights past the hashed ones, its idf table and a Naive Bayes model's
/// per-token counts (see [`Columns::restore`]). What a model file stores in its section;
/// [`unstrip`] puts back what this returns.
pub(crate) fn strip(model: &mut TrainedModel, n: usize) -> Stripped {
    let counts = match moved_counts(model, n) {
        Some(_) => model
            .model
            .count_arrays_mut()
            .map(|a| a.map(std::mem::take)),
        None => None,
    };
    let f = model.model.function_mut();
    debug_assert!(
        f.held_buckets().is_none(),
        "a restricted function is never saved"
    );
    let front = f.transform.config().input_width(0);
    let weights = if front == 0 {
        std::mem::take(&mut f.weights)
    } else {
        f.weights.split_off(front.min(f.weights.len()))
    };
    let idf = std::mem::take(f.transform.idf_mut());
    Stripped {
        weights,
        idf,
        counts,
    }
}

/// What [`strip`] took out of a model.
pub(crate) struct Stripped {
    /// The weights past the hashed ones.
    weights: Vec<f64>,
    /// The idf table.
    idf: Vec<f64>,
    /// A Naive Bayes model's per-token counts, if they were taken.
    counts: Option<[Vec<f64>; 2]>,
}

/// Puts back into `model` what [`strip`] took out of it.
pub(crate) fn unstrip(model: &mut TrainedModel, stripped: Stripped) {
    let Stripped {
        mut weights,
        idf,
        counts,
    } = stripped;
    if let (Some(counts), Some(arrays)) = (counts, model.model.count_arrays_mut()) {
        for (a, c) in arrays.into_iter().zip(counts) {
            *a = c;
        }
    }
    let f = model.model.function_mut();
    if f.weights.is_empty() {
        f.weights = weights;
    } else {
        f.weights.append(&mut weights);
    }
    *f.transform.idf_mut() = idf;
}

/// The tokens and columns of a whole score table, by vocabulary id: what a full load rebuilds
/// the vocabulary's lookup arrays and the models' functions from.
pub(crate) struct Contents {
    /// The tokens' bytes, in id order.
    pub blob: Vec<u8>,
    /// Where each token ends in `blob`.
    pub ends: Vec<u32>,
    /// Each column's values, by id.
    pub columns: Columns,
}

/// The columns of a whole score table: each one's values, by vocabulary id.
pub(crate) struct Columns(Vec<Vec<f64>>);

/// A block's records, once its checksum (its first [`CRC_BYTES`] bytes) matches them.
fn checked_records(block: &[u8]) -> Result<&[u8], &'static str> {
    let (crc, records) = block
        .split_at_checked(CRC_BYTES)
        .ok_or("a score table block is empty")?;
    if crc32fast::hash(records).to_le_bytes() != crc {
        return Err("a score table block's checksum does not match");
    }
    Ok(records)
}

/// A record's values, from their little-endian bytes.
fn values_of(bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("chunks of 8")))
}

/// One record of a score table block.
struct Record<'b> {
    token: &'b [u8],
    id: FeatureId,
    /// The values' bytes, 8 per column.
    values: &'b [u8],
}

/// The next record of a score table block (`rest`, advanced past it): `None` at the end of the
/// block; an error if the block ends inside a record.
fn next_record<'b>(
    rest: &mut &'b [u8],
    record_values: usize,
) -> Result<Option<Record<'b>>, String> {
    let Some((len, after)) = rest.split_first_chunk::<4>() else {
        return if rest.is_empty() {
            Ok(None)
        } else {
            Err("a score table block ends inside a record".into())
        };
    };
    let len = u32::from_le_bytes(*len) as usize;
    let (record, after) = len
        .checked_add(4 + record_values)
        .and_then(|n| after.split_at_checked(n))
        .ok_or("a score table record is cut short")?;
    *rest = after;
    let (token, record) = record.split_at(len);
    let (id, values) = record.split_at(4);
    Ok(Some(Record {
        token,
        id: u32::from_le_bytes(id.try_into().expect("4 bytes")),
        values,
    }))
}

impl Contents {
    /// Reads every record of the blocks section `blocks` (its checksum checked by the reader),
    /// checking each block's checksum and that the ids are exactly `0..n`. Each record is put
    /// in its place by id (one pass counts them, the next places them): no sort, and nothing
    /// held per record but its token's place.
    pub fn read(index: &ScoreIndex, blocks: &[u8]) -> Result<Contents, String> {
        index.check()?;
        let columns = index.head.columns as usize;
        let record_values = 8 * columns;
        let mut n = 0usize;
        let mut start = 0usize;
        for &end in &index.ends {
            let block = blocks
                .get(start..end as usize)
                .ok_or("a score table block lies outside its section")?;
            let mut rest = checked_records(block)?;
            start = end as usize;
            while next_record(&mut rest, record_values)?.is_some() {
                n += 1;
            }
        }
        // Per id: where its token lies in `blocks` (start, length); u32::MAX: no record yet.
        let mut places = vec![(u32::MAX, 0u32); n];
        let mut values = vec![vec![0.0; n]; columns];
        let mut start = 0usize;
        for &end in &index.ends {
            // Checked in the first pass.
            let mut rest = &blocks[start + CRC_BYTES..end as usize];
            start = end as usize;
            while let Some(Record {
                token,
                id,
                values: bytes,
            }) = next_record(&mut rest, record_values)?
            {
                let place = places
                    .get_mut(id as usize)
                    .filter(|p| p.0 == u32::MAX)
                    .ok_or("the score table's ids are not one per token")?;
                let at = token.as_ptr() as usize - blocks.as_ptr() as usize;
                *place = (at as u32, token.len() as u32);
                for (column, v) in values.iter_mut().zip(values_of(bytes)) {
                    column[id as usize] = v;
                }
            }
        }
        // n records, each id below n and none twice: every id in 0..n has its record.
        let mut blob = Vec::with_capacity(places.iter().map(|p| p.1 as usize).sum());
        let mut ends = Vec::with_capacity(n);
        for (at, len) in places {
            blob.extend_from_slice(&blocks[at as usize..(at + len) as usize]);
            ends.push(blob.len() as u32);
        }
        Ok(Contents {
            blob,
            ends,
            columns: Columns(values),
        })
    }

    /// The vocabulary of these tokens with `counts` (the tokens move into it), and the columns
    /// to [`Columns::restore`] the models from.
    pub fn into_vocabulary(
        self,
        index: &ScoreIndex,
        counts: CountsSection,
    ) -> (Vocabulary, Columns) {
        let slots = usize::try_from(index.head.slots).unwrap_or(usize::MAX);
        let vocabulary = Vocabulary::from_parts(self.blob, self.ends, counts, slots);
        (vocabulary, self.columns)
    }
}

impl Columns {
    /// Puts back into a model read from its section what [`strip`] took out of it, after
    /// checking that the index's copy of its settings (what the pipe filter scores with) is
    /// the section's. A Naive Bayes model whose counts the table holds must come with its
    /// count arrays empty (as [`strip`] left them, or a sparse replay restricted them).
    pub fn restore(&self, model: &mut TrainedModel, entry: &ScoreModel) -> Result<(), String> {
        let same = entry.kind == model.model.kind()
            && entry.calibration == model.calibration
            && entry.scoring == model.model.scoring()
            && entry.config == model.model.function().transform.config()
            && entry.bias.to_bits() == model.model.function().bias.to_bits();
        if !same {
            return Err(
                "the score table's copy of a model's settings differs from the model".into(),
            );
        }
        let f = model.model.function_mut();
        let width = f.transform.config().input_width(0);
        let weights_len = usize::try_from(entry.weights_len).unwrap_or(usize::MAX);
        let column = |c: u32, len: usize| -> Result<&[f64], String> {
            self.0
                .get(c as usize)
                .and_then(|c| c.get(..len))
                .ok_or_else(|| "a model's per-token values do not fit the score table".to_string())
        };
        // The hashed places come first: all of them, or the buckets a function restricted to
        // some of them holds, which stand for all as the table counts weights.
        let front = f.weights.len();
        let hashed = f.vocabulary_start();
        if weights_len > front + width.saturating_sub(hashed) {
            if front != hashed {
                return Err("a model's hashed weights are cut short".into());
            }
            f.weights
                .extend_from_slice(column(entry.weights, weights_len - width)?);
        }
        if let Some(idf) = entry.idf {
            let len = usize::try_from(entry.idf_len).unwrap_or(usize::MAX);
            *f.transform.idf_mut() = column(idf, len)?.to_vec();
        }
        if let Some(counts) = entry.counts {
            let Some(arrays) = model.model.count_arrays_mut() else {
                return Err("the score table holds counts of a model that keeps none".into());
            };
            // Counts in both places: one of them would be silently dropped.
            if arrays.iter().any(|a| !a.is_empty()) {
                return Err("a model's counts are both in its section and the score table".into());
            }
            let len = usize::try_from(entry.counts_len).unwrap_or(usize::MAX);
            for (a, c) in arrays.into_iter().zip(counts) {
                *a = column(c, len)?.to_vec();
            }
        }
        Ok(())
    }
}

/// The rows of a message's vocabulary tokens found in the table, sorted by id: each token's
/// id, bytes and values (one per column).
#[derive(Debug, Default)]
pub(crate) struct Rows<'t> {
    ids: Vec<FeatureId>,
    tokens: Vec<&'t [u8]>,
    /// Where each row's values start in `values`.
    starts: Vec<usize>,
    /// `columns` values per row, the rows in the order they were found (sorting them by id
    /// would copy them: a message's rows are tens of kilobytes, which the pipe filter pays
    /// for in fresh pages).
    values: Vec<f64>,
    columns: usize,
}

impl<'t> Rows<'t> {
    /// The row of token `id`, if found.
    fn row(&self, id: FeatureId) -> Option<usize> {
        self.ids.binary_search(&id).ok()
    }

    /// Value `column` of row `row`.
    fn value(&self, row: usize, column: usize) -> Option<f64> {
        if column >= self.columns {
            return None;
        }
        self.values.get(self.starts.get(row)? + column).copied()
    }

    /// The ids of the tokens found, ascending.
    pub fn ids(&self) -> &[FeatureId] {
        &self.ids
    }

    /// The bytes of the tokens found, in the order of their ids.
    pub fn tokens(&self) -> &[&'t [u8]] {
        &self.tokens
    }

    /// The rows as the columns of a table of these tokens alone, renumbered `0..` in the order
    /// of their ids: what [`Columns::restore`] reads a model restricted to them from (with
    /// [`ScoreModel::restricted`]).
    pub fn columns(&self) -> Columns {
        Columns(
            (0..self.columns)
                .map(|c| {
                    (0..self.ids.len())
                        .map(|r| self.value(r, c).unwrap_or_default())
                        .collect()
                })
                .collect(),
        )
    }

    /// The bytes of token `id` ("" if not found or not UTF-8).
    pub fn token(&self, id: FeatureId) -> &'t str {
        self.row(id)
            .and_then(|r| std::str::from_utf8(self.tokens[r]).ok())
            .unwrap_or("")
    }
}

/// A score table read from a model file, block by block as messages need them.
///
/// Its fences are read where the file's reader holds the index section's bytes, not decoded
/// into arrays of their own: a table of 60,000 tokens has some 3,800 blocks, and their
/// fences' 46 KB, copied, were a dozen fresh pages for every `filter` process to fault in.
#[derive(Debug)]
pub(crate) struct ScoreTable {
    /// The blocks section.
    section: usize,
    /// The index section, which the reader holds once read.
    index_section: usize,
    head: IndexHead,
    /// Where the fences and the blocks' ends lie in the bytes of section `index_section` of
    /// the reader the table was opened from.
    fences: Range<usize>,
    ends: Range<usize>,
}

/// The fences and the blocks' ends of a score table's index, borrowed from its section.
#[derive(Deserialize)]
struct Fences<'a> {
    #[serde(borrow)]
    fences: Packed<'a, u64>,
    #[serde(borrow)]
    ends: Packed<'a, u32>,
}

impl Fences<'_> {
    /// The block a token of this hash is in, if any.
    fn block_of(&self, hash: u64) -> Option<usize> {
        // The number of fences at most `hash` (they rise), by bisection.
        let (mut low, mut high) = (0, self.fences.len());
        while low < high {
            let mid = low + (high - low) / 2;
            if self.fences.at(mid).is_some_and(|f| f <= hash) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low.checked_sub(1)
    }

    /// Where block `i` lies in the blocks section (`None` past the last block).
    fn span(&self, i: usize) -> Option<(u64, u64)> {
        let start = match i.checked_sub(1) {
            Some(before) => self.ends.at(before)?,
            None => 0,
        };
        Some((u64::from(start), u64::from(self.ends.at(i)?)))
    }
}

impl ScoreTable {
    /// Reads the index (section `index`) of the table whose blocks are section `blocks` of
    /// `file`, the file later lookups read from.
    pub fn open(
        file: &ModelFileReader,
        index: usize,
        blocks: usize,
    ) -> Result<ScoreTable, ModelFileError> {
        let bytes = file.section(index)?;
        let (head, Fences { fences, ends }): IndexView<'_> =
            crate::model_file::decode_exact(bytes, file.path())?;
        check(&head, &fences, &ends)
            .map_err(|reason| ModelFileError::invalid(file.path(), reason))?;
        // Where a borrowed array lies in `bytes`.
        let within = |part: &[u8]| {
            let start = part.as_ptr() as usize - bytes.as_ptr() as usize;
            start..start + part.len()
        };
        Ok(ScoreTable {
            section: blocks,
            index_section: index,
            fences: within(fences.bytes()),
            ends: within(ends.bytes()),
            head,
        })
    }

    /// The index but its fences: the models' settings and the vocabulary's size.
    pub fn index(&self) -> &IndexHead {
        &self.head
    }

    /// The fences, from the index section that `file`, the reader the table was opened from,
    /// holds since then. Another reader's section is refused where it is too short for them
    /// (and gives wrong blocks, refused by their checksums, where it is not).
    fn fences<'f>(&self, file: &'f ModelFileReader) -> Result<Fences<'f>, ModelFileError> {
        let bytes = file.section(self.index_section)?;
        let malformed = || ModelFileError::invalid(file.path(), MALFORMED);
        let part = |range: &Range<usize>| bytes.get(range.clone()).ok_or_else(malformed);
        Ok(Fences {
            fences: Packed::from_bytes(part(&self.fences)?).map_err(|_| malformed())?,
            ends: Packed::from_bytes(part(&self.ends)?).map_err(|_| malformed())?,
        })
    }

    /// Looks up `tokens` (distinct): the ids of those in the vocabulary (`None` for the
    /// others), in their order, and their rows. Their blocks are read from `file` (the one the
    /// table was opened from), adjacent ones in one read, each checked against its checksum.
    pub fn lookup<'t, T: AsRef<[u8]> + ?Sized>(
        &self,
        file: &ModelFileReader,
        tokens: &[&'t T],
    ) -> Result<(Vec<Option<FeatureId>>, Rows<'t>), ModelFileError> {
        let token = |t: usize| -> &'t [u8] { tokens[t].as_ref() };
        let columns = self.head.columns as usize;
        let fences = self.fences(file)?;
        // (block, token) for each token that falls in a block, block by block.
        let mut wanted: Vec<(usize, usize)> = Vec::with_capacity(tokens.len());
        wanted.extend(
            (0..tokens.len()).filter_map(|t| Some((fences.block_of(slot_hash(token(t)))?, t))),
        );
        wanted.sort_unstable();
        let mut ids = vec![None; tokens.len()];
        // (id, token, where its values start in `values`) of each token found.
        let mut found: Vec<(FeatureId, usize, usize)> = Vec::with_capacity(wanted.len());
        let mut values: Vec<f64> = Vec::with_capacity(wanted.len() * columns);
        let mut find_in = |records: &[u8], of_block: &[(usize, usize)]| {
            for &(_, t) in of_block {
                if let Some((id, bytes)) = find(records, token(t), columns) {
                    ids[t] = Some(id);
                    found.push((id, t, values.len()));
                    values.extend(values_of(bytes));
                }
            }
        };
        let mut bytes = Vec::new();
        let mut rest = &wanted[..];
        while let Some(&(first, _)) = rest.first() {
            let mut n = rest.partition_point(|w| w.0 == first);
            // The run of wanted blocks from `first` on that are adjacent.
            let mut last = first;
            while let Some(&(next, _)) = rest.get(n) {
                if next != last + 1 {
                    break;
                }
                last = next;
                n += rest[n..].partition_point(|w| w.0 == next);
            }
            // The index was checked when the table was opened: these hold for its blocks.
            let malformed = || ModelFileError::invalid(file.path(), MALFORMED);
            let (start, _) = fences.span(first).ok_or_else(malformed)?;
            let (_, end) = fences.span(last).ok_or_else(malformed)?;
            file.read_range(self.section, start, end.saturating_sub(start), &mut bytes)?;
            for of_block in rest[..n].chunk_by(|a, b| a.0 == b.0) {
                let span = fences.span(of_block[0].0).ok_or_else(malformed)?;
                let block = span_in(&bytes, start, span).ok_or_else(malformed)?;
                let records = checked_records(block)
                    .map_err(|reason| ModelFileError::invalid(file.path(), reason))?;
                find_in(records, of_block);
            }
            rest = &rest[n..];
        }
        found.sort_unstable_by_key(|f| f.0);
        found.dedup_by_key(|f| f.0);
        let rows = Rows {
            ids: found.iter().map(|f| f.0).collect(),
            tokens: found.iter().map(|f| token(f.1)).collect(),
            starts: found.iter().map(|f| f.2).collect(),
            values,
            columns,
        };
        Ok((ids, rows))
    }
}

/// The bytes of `span` (of the blocks section) within `bytes`, the section's bytes read from
/// `start` on; `None` if they are not all there.
fn span_in(bytes: &[u8], start: u64, (from, to): (u64, u64)) -> Option<&[u8]> {
    let at = |x: u64| usize::try_from(x.checked_sub(start)?).ok();
    bytes.get(at(from)?..at(to)?)
}

/// The id and the values' bytes of `token` among a block's records, if it is there (a
/// malformed block ends the search: no panic).
fn find<'b>(mut records: &'b [u8], token: &[u8], columns: usize) -> Option<(FeatureId, &'b [u8])> {
    while let Ok(Some(record)) = next_record(&mut records, 8 * columns) {
        if record.token == token {
            return Some((record.id, record.values));
        }
    }
    None
}

/// One column of the rows a message's tokens found, by vocabulary id (ids not among them: none,
/// which a decision function reads as weight 0 or idf 1), shifted by `shift` as a model that
/// sees hashed features numbers its input.
pub(crate) struct Column<'r> {
    pub rows: &'r Rows<'r>,
    pub column: usize,
    pub shift: usize,
}

impl Elements<f64> for Column<'_> {
    fn at(&self, i: usize) -> Option<f64> {
        let id = FeatureId::try_from(i.checked_sub(self.shift)?).ok()?;
        self.rows.value(self.rows.row(id)?, self.column)
    }

    fn len(&self) -> usize {
        self.rows
            .ids
            .last()
            .map_or(0, |&id| id as usize + 1 + self.shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_file;

    #[test]
    fn encode_decode_index_round_trip() {
        let index = ScoreIndex {
            head: head(2),
            fences: vec![1, u64::MAX],
            ends: vec![10, 20],
        };
        let bytes = model_file::encode_section(&index);
        let back: ScoreIndex = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, index);
        // Its head's fields are the index's first, its fences as a table borrows them.
        let (head, Fences { fences, ends }): IndexView<'_> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(head, index.head);
        assert_eq!((fences.len(), fences.at(1)), (2, Some(u64::MAX)));
        assert_eq!((ends.len(), ends.at(1)), (2, Some(20)));
    }

    /// The head of an index of no models and no tokens with `columns` columns.
    fn head(columns: u32) -> IndexHead {
        IndexHead {
            models: Vec::new(),
            columns,
            slots: 0,
            tokens: 0,
        }
    }

    /// A saved filter that learned messages of many distinct words (so its table has many
    /// blocks), with its file open.
    fn saved_filter(dir: &std::path::Path) -> (crate::SpamFilter, ModelFileReader) {
        use crate::label::Label;
        let mut filter = crate::SpamFilter::empty(&crate::TrainParams::default()).unwrap();
        for i in 0..40 {
            let words: Vec<String> = (0..50).map(|w| format!("w{i}x{w}")).collect();
            let raw = format!("Subject: m{i}\n\n{}\n", words.join(" "));
            let label = if i % 2 == 0 { Label::Spam } else { Label::Ham };
            filter.learn(raw.as_bytes(), label).unwrap();
        }
        let path = dir.join("m.spamsort");
        filter
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        (filter, ModelFileReader::open(&path).unwrap())
    }

    /// The score table of an open file.
    fn open_table(file: &ModelFileReader) -> ScoreTable {
        ScoreTable::open(
            file,
            super::super::layout::SCORE_INDEX_SECTION,
            super::super::layout::SCORE_BLOCKS_SECTION,
        )
        .unwrap()
    }

    /// Every token of a vocabulary, in id order.
    fn tokens_by_id(vocabulary: &Vocabulary) -> Vec<&[u8]> {
        (0..vocabulary.len() as FeatureId)
            .map(|id| vocabulary.token(id).as_bytes())
            .collect()
    }

    /// The score table's index and blocks section of an open file.
    fn index_and_blocks(file: &ModelFileReader) -> (ScoreIndex, &[u8]) {
        let index = file
            .read(super::super::layout::SCORE_INDEX_SECTION)
            .unwrap();
        let blocks = file
            .section(super::super::layout::SCORE_BLOCKS_SECTION)
            .unwrap();
        (index, blocks)
    }

    #[test]
    fn every_token_is_found_in_its_block_with_its_id_and_no_other_token_is() {
        let dir = tempfile::tempdir().unwrap();
        let (filter, file) = saved_filter(dir.path());
        let table = open_table(&file);
        assert!(table.fences(&file).unwrap().ends.len() > 10, "many blocks");
        let vocabulary = filter.vocabulary();
        let n = vocabulary.len() as FeatureId;
        let tokens = tokens_by_id(vocabulary);
        let (ids, rows) = table.lookup(&file, &tokens).unwrap();
        assert_eq!(ids, (0..n).map(Some).collect::<Vec<_>>());
        assert_eq!(rows.token(7), vocabulary.token(7));
        let (ids, _) = table.lookup(&file, &["w0x0z", "", "nope"]).unwrap();
        assert_eq!(ids, [None, None, None]);
    }

    #[test]
    fn a_lookup_through_another_reader_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let (_, file) = saved_filter(dir.path());
        let table = open_table(&file);
        // A file whose index section is shorter than the table's fences reach.
        let mut small = crate::SpamFilter::empty(&crate::TrainParams::default()).unwrap();
        small
            .learn(b"Subject: one\n\nfew words\n", crate::label::Label::Spam)
            .unwrap();
        let path = dir.path().join("small.spamsort");
        small
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        let other = ModelFileReader::open(&path).unwrap();
        other
            .section(super::super::layout::SCORE_INDEX_SECTION)
            .unwrap();
        assert!(table.lookup(&other, &["w0x0", "few"]).is_err());
    }

    /// The index of a table of no models and no columns whose one block, starting at hash
    /// `fence`, is `block`.
    fn one_block_index(fence: u64, block: &[u8]) -> ScoreIndex {
        ScoreIndex {
            head: head(0),
            fences: vec![fence],
            ends: vec![block.len() as u32],
        }
    }

    /// A block of one record per (token, id), its checksum in front.
    fn block_of_records(records: &[(&[u8], u32)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (token, id) in records {
            bytes.extend_from_slice(&(token.len() as u32).to_le_bytes());
            bytes.extend_from_slice(token);
            bytes.extend_from_slice(&id.to_le_bytes());
        }
        let mut block = crc32fast::hash(&bytes).to_le_bytes().to_vec();
        block.extend_from_slice(&bytes);
        block
    }

    #[test]
    fn a_table_whose_ids_repeat_or_reach_past_its_records_is_refused() {
        let index = |block: &[u8]| one_block_index(0, block);
        let good = block_of_records(&[(b"a", 1), (b"b", 0)]);
        let contents = Contents::read(&index(&good), &good).unwrap();
        assert_eq!((contents.blob, contents.ends), (b"ba".to_vec(), vec![1, 2]));
        for bad in [
            block_of_records(&[(b"a", 0), (b"b", 0)]),
            block_of_records(&[(b"a", 0), (b"b", 2)]),
            block_of_records(&[(b"a", u32::MAX)]),
        ] {
            let err = Contents::read(&index(&bad), &bad).err().unwrap();
            assert_eq!(err, "the score table's ids are not one per token");
        }
    }

    #[test]
    fn contents_give_back_the_tokens_in_id_order_and_refuse_a_damaged_block() {
        let dir = tempfile::tempdir().unwrap();
        let (filter, file) = saved_filter(dir.path());
        let (index, blocks) = index_and_blocks(&file);
        let contents = Contents::read(&index, blocks).unwrap();
        let vocabulary = filter.vocabulary();
        assert_eq!(contents.ends.len(), vocabulary.len());
        for id in 0..vocabulary.len() as FeatureId {
            let start = if id == 0 {
                0
            } else {
                contents.ends[id as usize - 1]
            };
            let token = &contents.blob[start as usize..contents.ends[id as usize] as usize];
            assert_eq!(token, vocabulary.token(id).as_bytes());
        }
        let mut damaged = blocks.to_vec();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(Contents::read(&index, &damaged).is_err());
    }

    #[test]
    fn an_index_claiming_more_columns_than_its_models_or_unordered_blocks_is_refused() {
        let index = |columns, ends: Vec<u32>| ScoreIndex {
            head: head(columns),
            fences: vec![0; ends.len()],
            ends,
        };
        // No records to read, so nothing else would stop the columns' allocation.
        assert!(Contents::read(&index(u32::MAX, Vec::new()), &[]).is_err());
        assert!(Contents::read(&index(0, vec![8, 4]), &[0; 8]).is_err());
        assert!(Contents::read(&index(0, Vec::new()), &[]).is_ok());
    }

    #[test]
    fn a_model_whose_settings_differ_from_the_index_copy_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (_, file) = saved_filter(dir.path());
        let (index, blocks) = index_and_blocks(&file);
        let contents = Contents::read(&index, blocks).unwrap();
        let section = super::super::layout::FIRST_MODEL_SECTION;
        let mut model: TrainedModel = file.read(section).unwrap();
        let mut entry = index.head.models[0].clone();
        entry.bias += 1.0;
        assert!(contents.columns.restore(&mut model, &entry).is_err());
        let mut model: TrainedModel = file.read(section).unwrap();
        contents
            .columns
            .restore(&mut model, &index.head.models[0])
            .unwrap();
    }

    #[test]
    fn naive_bayes_counts_leave_their_sections_for_shared_columns_and_a_full_load_restores_them() {
        let dir = tempfile::tempdir().unwrap();
        let (mut filter, file) = saved_filter(dir.path());
        let (index, _) = index_and_blocks(&file);
        let entry = |kind| index.head.models.iter().find(|m| m.kind == kind).unwrap();
        let (bernoulli, multinomial) = (
            entry(ModelKind::BernoulliNb),
            entry(ModelKind::MultinomialNb),
        );
        let n = filter.vocabulary().len() as u64;
        assert_eq!((bernoulli.counts_len, multinomial.counts_len), (n, n));
        // Boolean multinomial counts are the Bernoulli model's document frequencies: the
        // arrays move into the table once, they are not copied.
        assert_eq!(bernoulli.counts, Some([1, 2]), "after its weights (no idf)");
        assert_eq!(bernoulli.counts, multinomial.counts);
        for (i, m) in index.head.models.iter().enumerate() {
            let section = file
                .section(super::super::layout::FIRST_MODEL_SECTION + i)
                .unwrap();
            let view: crate::models::TrainedModelSection<'_> =
                model_file::decode_prefix(section, file.path()).unwrap();
            let width = view.count_width();
            assert_eq!(
                width,
                m.counts.map(|_| 0),
                "{}: no counts in its section",
                m.kind
            );
        }
        let mut loaded = crate::SpamFilter::load(file.path()).unwrap();
        assert_eq!(loaded.models, filter.models);
        let dump = |f: &mut crate::SpamFilter| {
            let mut out = Vec::new();
            crate::filter::dump::write_dump(f, &mut out).unwrap();
            out
        };
        assert_eq!(dump(&mut loaded), dump(&mut filter));
    }

    #[test]
    fn strip_takes_out_what_the_table_holds_and_unstrip_puts_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let (filter, _) = saved_filter(dir.path());
        let n = filter.vocabulary().len();
        // Naive Bayes models (no hashed weights) and linear ones that see hashed features.
        for model in &filter.models {
            let mut m = model.clone();
            let stripped = strip(&mut m, n);
            let f = m.model.function();
            assert!(f.weights.len() <= f.transform.config().input_width(0));
            assert!(
                m.model
                    .count_arrays()
                    .is_none_or(|[h, s]| h.is_empty() && s.is_empty())
            );
            unstrip(&mut m, stripped);
            assert_eq!(&m, model, "{}", model.model.kind());
        }
    }

    #[test]
    fn counts_both_in_a_section_and_the_table_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (filter, file) = saved_filter(dir.path());
        let (index, blocks) = index_and_blocks(&file);
        let contents = Contents::read(&index, blocks).unwrap();
        let i = index
            .head
            .models
            .iter()
            .position(|m| m.kind == ModelKind::BernoulliNb)
            .unwrap();
        let whole = filter.model(ModelKind::BernoulliNb).unwrap();
        let mut model = whole.clone();
        strip(&mut model, filter.vocabulary().len());
        contents
            .columns
            .restore(&mut model, &index.head.models[i])
            .unwrap();
        assert_eq!(&model, whole);
        let mut unstripped = whole.clone();
        let err = contents
            .columns
            .restore(&mut unstripped, &index.head.models[i]);
        assert_eq!(
            err.unwrap_err(),
            "a model's counts are both in its section and the score table"
        );
    }

    #[test]
    fn a_token_longer_than_64_kib_is_kept_whole() {
        let long = "é".repeat(40_000);
        let block = block_of_records(&[(long.as_bytes(), 0)]);
        let records = checked_records(&block).unwrap();
        assert_eq!(find(records, long.as_bytes(), 0).map(|r| r.0), Some(0));
        let index = one_block_index(slot_hash(long.as_bytes()), &block);
        let contents = Contents::read(&index, &block).unwrap();
        assert_eq!(contents.blob, long.as_bytes());
    }

    #[test]
    fn find_reads_the_matching_record_and_stops_at_malformed_bytes() {
        let mut block = Vec::new();
        for (token, id, v) in [(&b"ab"[..], 7u32, 1.5f64), (b"abc", 9, -2.0)] {
            block.extend_from_slice(&(token.len() as u32).to_le_bytes());
            block.extend_from_slice(token);
            block.extend_from_slice(&id.to_le_bytes());
            block.extend_from_slice(&v.to_le_bytes());
        }
        let (id, values) = find(&block, b"abc", 1).unwrap();
        assert_eq!((id, values), (9, &(-2.0f64).to_le_bytes()[..]));
        assert_eq!(find(&block, b"zz", 1), None);
        // Cut short in its second record: the first is still found, the second not.
        let cut = &block[..block.len() - 3];
        assert_eq!(find(cut, b"ab", 1).map(|r| r.0), Some(7));
        assert_eq!(find(cut, b"abc", 1), None);
    }
}
