//! The vocabulary: token -> dense id, with per-class document frequencies. It grows: a token
//! first seen when a message is learned gets the next id (see [`Vocabulary::learn`]).
//!
//! Tokens are stored in one byte string (training's tokens sorted, learned ones after them in
//! order of arrival) with an end-offset table (a token's id is its
//! rank), plus an open-addressing hash table of ids. All three are flat arrays that load with a
//! copy and are used as loaded: no hash map is built at start-up, which keeps the
//! one-process-per-message filter fast, and a lookup is one hash and about one comparison.

use super::hashed::{hashed_id, is_hashed};
use super::{FeatureRemap, SparseVector};
use crate::label::Label;
use crate::model_file::packed::Elements;
use crate::tokenize::Tokens;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde::{Deserialize, Serialize};

/// Index of a feature (a vocabulary entry) in weight vectors.
pub type FeatureId = u32;

/// How to build a vocabulary from training messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VocabularyParams {
    /// Tokens seen in fewer training messages than this are left out (default 2: a token seen
    /// once cannot generalize, and dropping them halves the model).
    pub min_df: u32,
    /// Keep at most this many tokens, those in the most messages (ties: token order).
    pub max_features: Option<usize>,
}

impl Default for VocabularyParams {
    fn default() -> Self {
        VocabularyParams {
            min_df: 2,
            max_features: None,
        }
    }
}

/// Token ids and document frequencies. Ids are `0..len()`: training's tokens in byte order, then
/// tokens added by [`Vocabulary::learn`] in the order they arrived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Vocabulary {
    #[serde(with = "serde_bytes")]
    blob: Vec<u8>,
    #[serde(with = "crate::model_file::packed::u32s")]
    ends: Vec<u32>,
    /// Open-addressing hash table of ids (`EMPTY` marks a free slot) by [`table_hash`], a power
    /// of two at least twice the token count. Rebuilt at load: the model file holds the tokens
    /// in the score table (see `crate::filter::score_table`).
    #[serde(with = "crate::model_file::packed::u32s")]
    table: Vec<u32>,
    #[serde(with = "crate::model_file::packed::u32s")]
    df_ham: Vec<u32>,
    #[serde(with = "crate::model_file::packed::u32s")]
    df_spam: Vec<u32>,
    docs: [u32; 2],
    /// Per token, the number (on `clock`) of the last message learned that contained it: what
    /// pruning's "not seen in the last N messages" reads.
    #[serde(with = "crate::model_file::packed::u32s")]
    last_seen: Vec<u32>,
    /// Messages learned so far, training included (unlearning does not turn it back); the
    /// newest message is number `clock`.
    clock: u32,
}

/// Which tokens [`Vocabulary::prune_rule`] drops: those in fewer than `min_count` messages
/// (both classes together) that no message among the last `unseen_for` learned contained, as
/// bogoutil's maintenance drops rare tokens not seen for a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneRule {
    /// Tokens in at least this many messages are kept. Default 2: tokens seen once.
    pub min_count: u32,
    /// Tokens seen in one of the last this many messages learned are kept. Default 10,000.
    pub unseen_for: u32,
}

impl Default for PruneRule {
    fn default() -> Self {
        PruneRule {
            min_count: 2,
            unseen_for: 10_000,
        }
    }
}

/// A free slot of the hash table.
const EMPTY: u32 = u32::MAX;

/// The hash table's size for `tokens` tokens when it is (re)built.
fn table_size(tokens: usize) -> usize {
    (2 * tokens).next_power_of_two().max(2)
}

/// The keyed hash of a token's bytes that places it in the score table's blocks: a specified
/// algorithm, so a file reads the same in every build.
pub(crate) fn slot_hash(token: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h =
        siphasher::sip::SipHasher13::new_with_keys(0x7370_616d_736f_7274, 0x766f_6361_6275_6c61);
    h.write(token);
    h.finish()
}

/// The hash of a token's bytes that places it in the vocabulary's hash table, which lives in
/// memory only (a load rebuilds it): foldhash with a fixed seed, several times cheaper than
/// [`slot_hash`] on short tokens, which every message's every token pays. Not keyed, as
/// [`slot_hash`]'s key is public anyway: the table's probes are bounded by its size.
fn table_hash(token: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x7370_616d_736f_7274).hash_one(token)
}

/// The lookup arrays of a [`Vocabulary`] (token bytes, end offsets, hash table). Every access
/// is bounds-checked: a malformed table gives wrong or no ids, never a panic or an endless probe.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenTable<'a, A: ?Sized> {
    blob: &'a [u8],
    ends: &'a A,
    table: &'a A,
}

impl<'a, A: Elements<u32> + ?Sized> TokenTable<'a, A> {
    /// The bytes of token `id`, if it exists.
    pub fn bytes_of(&self, id: FeatureId) -> Option<&'a [u8]> {
        let id = id as usize;
        let start = if id == 0 { 0 } else { self.ends.at(id - 1)? };
        self.blob.get(start as usize..self.ends.at(id)? as usize)
    }

    /// The id of `token`: one hash and, on average, about one comparison.
    pub fn lookup(&self, token: &[u8]) -> Option<FeatureId> {
        let slots = self.table.len();
        let mask = slots.checked_sub(1)?;
        let mut slot = table_hash(token) as usize & mask;
        // A valid table has a free slot, so the probe ends; the bound covers invalid ones.
        for _ in 0..slots {
            match self.table.at(slot)? {
                EMPTY => return None,
                id if self.bytes_of(id) == Some(token) => return Some(id),
                _ => slot = (slot + 1) & mask,
            }
        }
        None
    }

    /// The token with id `id` (empty if there is none, or if a malformed file's bytes are not
    /// UTF-8: a validated vocabulary's always are).
    pub fn token(&self, id: FeatureId) -> &'a str {
        self.bytes_of(id)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }

    /// The count vector of a token list: known tokens' ids with their number of occurrences,
    /// and hashed tokens' ids (see [`super::hashed`]).
    pub fn count_vector(&self, tokens: &Tokens) -> SparseVector {
        SparseVector::from_ids(
            tokens
                .iter()
                .filter_map(|t| hashed_id(t).or_else(|| self.lookup(t.as_bytes())))
                .collect(),
        )
    }
}

/// A `u32` array written packed (see [`crate::model_file::packed`]).
#[derive(Serialize)]
pub(crate) struct Packed32<'a>(#[serde(with = "crate::model_file::packed::u32s")] &'a [u32]);

/// A `u32` array read from its packed form.
#[derive(Deserialize)]
pub(crate) struct PackedVec(#[serde(with = "crate::model_file::packed::u32s")] Vec<u32>);

/// A vocabulary's counts (document frequencies, message counts, last-seen numbers and clock:
/// only learning and pruning read them) as the model file stores them, in a section of their
/// own; the tokens are in the score table (see `crate::filter::score_table`).
pub(crate) type CountsRef<'a> = (Packed32<'a>, Packed32<'a>, [u32; 2], Packed32<'a>, u32);

/// The counts section of a vocabulary, as read back.
pub(crate) type CountsSection = (PackedVec, PackedVec, [u32; 2], PackedVec, u32);

impl Vocabulary {
    /// The counts, as the model file stores them.
    pub(crate) fn counts(&self) -> CountsRef<'_> {
        (
            Packed32(&self.df_ham),
            Packed32(&self.df_spam),
            self.docs,
            Packed32(&self.last_seen),
            self.clock,
        )
    }

    /// The number of slots of the hash table (0 before the first token; otherwise a power of
    /// two at least twice the tokens, as the table grew).
    pub(crate) fn slots(&self) -> usize {
        self.table.len()
    }

    /// The vocabulary of its tokens' bytes (`blob`, cut at `ends`; ids in that order) and its
    /// counts, its hash table of `slots` slots built as learning built it (inserting ids in
    /// order); [`Vocabulary::validate`] checks they fit together. A table of another size than
    /// learning makes is left empty, for `validate` to refuse.
    pub(crate) fn from_parts(
        blob: Vec<u8>,
        ends: Vec<u32>,
        counts: CountsSection,
        slots: usize,
    ) -> Vocabulary {
        let (PackedVec(df_ham), PackedVec(df_spam), docs, PackedVec(last_seen), clock) = counts;
        let mut vocabulary = Vocabulary {
            blob,
            ends,
            table: Vec::new(),
            df_ham,
            df_spam,
            docs,
            last_seen,
            clock,
        };
        // The only sizes learning makes: none before the first token, then the next power of
        // two at least twice the tokens (any other size is refused, never allocated).
        if slots == table_size(vocabulary.len()) {
            vocabulary.fill_table(slots);
        }
        vocabulary
    }
}

/// Token lists written as numbers for [`VocabularyParams::fit_numbered`]: each distinct token
/// once, and each list as the numbers of its tokens (a hashed token as its hashed id).
#[derive(Debug, Clone, Default)]
pub struct NumberedTokens<'a> {
    /// The distinct tokens (hashed ones left out), token `n` at `n`, in order of first
    /// appearance.
    pub tokens: Vec<&'a str>,
    /// Per token list, its tokens' numbers in order.
    pub lists: Vec<Vec<FeatureId>>,
}

impl<'a> NumberedTokens<'a> {
    /// Numbers the tokens of `lists`: one hash lookup per token occurrence, once.
    pub fn of(lists: &'a [Tokens]) -> NumberedTokens<'a> {
        let mut number: HashMap<&'a str, FeatureId> = HashMap::new();
        let mut tokens = Vec::new();
        let lists = lists
            .iter()
            .map(|list| {
                list.iter()
                    .map(|t| {
                        hashed_id(t).unwrap_or_else(|| {
                            *number.entry(t).or_insert_with(|| {
                                tokens.push(t);
                                // Numbers stay below the hashed ids: 2^31 distinct tokens
                                // would not fit in memory first.
                                FeatureId::try_from(tokens.len() - 1)
                                    .ok()
                                    .filter(|&n| !is_hashed(n))
                                    .expect("fewer than 2^31 distinct tokens")
                            })
                        })
                    })
                    .collect()
            })
            .collect();
        NumberedTokens { tokens, lists }
    }

    /// The count vector of list `list` over the vocabulary that
    /// [`VocabularyParams::fit_numbered`] returned `ids` with: what
    /// [`Vocabulary::vectorize`] gives for the tokens themselves.
    pub fn count_vector(&self, list: usize, ids: &[Option<FeatureId>]) -> SparseVector {
        let numbers = self.lists[list].iter();
        SparseVector::from_ids(
            numbers
                .filter_map(|&n| {
                    if is_hashed(n) {
                        Some(n)
                    } else {
                        ids[n as usize]
                    }
                })
                .collect(),
        )
    }
}

/// A token's training statistics: its text, document frequency per class (ham first), the
/// number of the last message with it, and the caller's key for it.
pub(super) type Counted<'a> = (&'a str, [u32; 2], u32, u32);

impl VocabularyParams {
    /// Builds the vocabulary of labeled token lists (each list one message; repeats within a
    /// message count once). The same as counting them one by one with
    /// [`DocumentFrequencies`](super::DocumentFrequencies) and calling its `vocabulary`.
    pub fn fit<'a>(&self, messages: impl IntoIterator<Item = (&'a Tokens, Label)>) -> Vocabulary {
        let mut counts = super::DocumentFrequencies::default();
        let mut seen: HashSet<&'a str> = HashSet::new();
        let mut ids = Vec::new();
        for (tokens, label) in messages {
            seen.clear();
            let distinct = tokens
                .iter()
                .filter(|t| hashed_id(t).is_none() && seen.insert(t));
            counts.add(distinct, label, &mut ids);
        }
        counts.vocabulary(self).0
    }

    /// [`VocabularyParams::fit`] of messages whose tokens are given as numbers (see
    /// [`NumberedTokens`]): `i` for `tokens[i]` (each distinct token listed once), a hashed
    /// token's id ([`super::hashed::hashed_id`]) for itself. Builds the same vocabulary as `fit` on the
    /// token lists they stand for, with each hash lookup of a token string done once instead
    /// of at every occurrence, for a caller that fits many vocabularies on subsets of the same
    /// messages (cross-validation's folds). Also returns, per entry of `tokens`, its id in
    /// the vocabulary (`None` if left out), which turns the numbers into count vectors.
    pub fn fit_numbered<'a, 'm>(
        &self,
        tokens: &[&'a str],
        messages: impl IntoIterator<Item = (&'m [FeatureId], Label)>,
    ) -> (Vocabulary, Vec<Option<FeatureId>>) {
        let mut df = vec![[0u32; 2]; tokens.len()];
        let mut last = vec![0u32; tokens.len()];
        let mut docs = [0u32; 2];
        for (numbers, label) in messages {
            docs[label.index()] += 1;
            let clock = docs[0] + docs[1];
            for &n in numbers.iter().filter(|&&n| !is_hashed(n)) {
                // A token already counted for this message has this message's clock.
                if last[n as usize] != clock {
                    df[n as usize][label.index()] += 1;
                    last[n as usize] = clock;
                }
            }
        }
        let counted = (0..tokens.len())
            .filter(|&n| df[n] != [0, 0])
            .map(|n| (tokens[n], df[n], last[n], n as u32));
        let (vocab, keys) = self.build(counted.collect(), docs);
        let mut ids = vec![None; tokens.len()];
        for (id, key) in keys.into_iter().enumerate() {
            ids[key as usize] = Some(id as FeatureId);
        }
        (vocab, ids)
    }

    /// The vocabulary of the tokens `counted` in messages numbering `docs` per class: those in
    /// at least `min_df` of them, at most `max_features` (those in the most), with ids in
    /// token byte order; with the keys of the kept tokens in id order.
    pub(super) fn build(
        &self,
        mut kept: Vec<Counted<'_>>,
        docs: [u32; 2],
    ) -> (Vocabulary, Vec<u32>) {
        kept.retain(|(_, d, _, _)| d[0] + d[1] >= self.min_df);
        if let Some(max) = self.max_features.filter(|&m| m < kept.len()) {
            kept.sort_unstable_by(|a, b| {
                (b.1[0] + b.1[1]).cmp(&(a.1[0] + a.1[1])).then(a.0.cmp(b.0))
            });
            kept.truncate(max);
        }
        kept.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut vocab = Vocabulary {
            docs,
            clock: docs[0] + docs[1],
            ..Vocabulary::default()
        };
        let mut keys = Vec::with_capacity(kept.len());
        for (token, d, last, key) in kept {
            vocab.blob.extend_from_slice(token.as_bytes());
            vocab
                .ends
                .push(u32::try_from(vocab.blob.len()).expect("vocabulary under 4 GiB"));
            vocab.df_ham.push(d[0]);
            vocab.df_spam.push(d[1]);
            vocab.last_seen.push(last);
            keys.push(key);
        }
        vocab.build_table();
        (vocab, keys)
    }
}

impl Vocabulary {
    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True if there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Counts one learned message's tokens (`unlearn`: forgets them) in the document
    /// frequencies of class `label`, giving a token not seen before the next id (only when
    /// learning), and returns the message's count vector over the grown vocabulary. When
    /// unlearning, only tokens with ids below `known` count (those the vocabulary had when the
    /// message was learned), and only those counted in class `label` (a token pruned since and
    /// seen again in the other class is not). The hash table doubles when it would pass half full, so lookups
    /// stay about one comparison.
    pub fn learn(
        &mut self,
        tokens: &Tokens,
        label: Label,
        unlearn: bool,
        known: usize,
    ) -> SparseVector {
        let mut ids = Vec::with_capacity(tokens.len());
        for t in tokens {
            if let Some(id) = hashed_id(t) {
                ids.push(id);
                continue;
            }
            match self.id(t) {
                Some(id) if !unlearn || ((id as usize) < known && self.df(id, label) > 0) => {
                    ids.push(id)
                }
                Some(_) => {}
                None if !unlearn => ids.push(self.push(t)),
                None => {}
            }
        }
        let x = SparseVector::from_ids(ids);
        let known_ids = x.vocabulary_ids();
        if !unlearn {
            self.clock = self.clock.saturating_add(1);
            for &id in known_ids {
                self.last_seen[id as usize] = self.clock;
            }
        }
        let df = match label {
            Label::Ham => &mut self.df_ham,
            Label::Spam => &mut self.df_spam,
        };
        for &id in known_ids {
            let d = &mut df[id as usize];
            *d = if unlearn {
                d.saturating_sub(1)
            } else {
                d.saturating_add(1)
            };
        }
        let docs = &mut self.docs[label.index()];
        *docs = if unlearn {
            docs.saturating_sub(1)
        } else {
            docs.saturating_add(1)
        };
        x
    }

    /// A vocabulary of `tokens` in id order, each with its document frequencies (ham, spam)
    /// and the number of the last message that contained it, `docs` messages per class, and
    /// `clock` the number of the newest message: what [`Vocabulary::df`],
    /// [`Vocabulary::last_seen`], [`Vocabulary::docs`] and [`Vocabulary::clock`] give back. The
    /// hash table is built as learning builds it, so a vocabulary rebuilt from its own tokens
    /// equals it. Fails on a repeated token or a token seen after the newest message.
    pub fn from_tokens<T: AsRef<str>>(
        tokens: impl IntoIterator<Item = (T, [u32; 2], u32)>,
        docs: [u32; 2],
        clock: u32,
    ) -> Result<Vocabulary, String> {
        let mut vocab = Vocabulary {
            docs,
            ..Vocabulary::default()
        };
        for (token, [ham, spam], last_seen) in tokens {
            let token = token.as_ref();
            if vocab.id(token).is_some() {
                return Err(format!("token {token:?} is listed twice"));
            }
            if last_seen > clock {
                return Err(format!(
                    "token {token:?} was last seen at message {last_seen}, after the last \
                     message ({clock})"
                ));
            }
            let id = vocab.push(token) as usize;
            (vocab.df_ham[id], vocab.df_spam[id]) = (ham, spam);
            vocab.last_seen[id] = last_seen;
        }
        vocab.clock = clock;
        Ok(vocab)
    }

    /// Appends a token not in the vocabulary; returns its id.
    fn push(&mut self, token: &str) -> FeatureId {
        let id = self.len() as FeatureId;
        self.blob.extend_from_slice(token.as_bytes());
        self.ends
            .push(u32::try_from(self.blob.len()).expect("vocabulary under 4 GiB"));
        self.df_ham.push(0);
        self.df_spam.push(0);
        self.last_seen.push(self.clock);
        if 2 * self.len() > self.table.len() {
            self.build_table();
        } else {
            let mask = self.table.len() - 1;
            let mut slot = table_hash(token.as_bytes()) as usize & mask;
            while self.table[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            self.table[slot] = id;
        }
        id
    }

    fn build_table(&mut self) {
        self.fill_table(table_size(self.len()));
    }

    /// Makes the hash table `size` slots (a power of two, more than the tokens) holding every
    /// id, inserted in order.
    fn fill_table(&mut self, size: usize) {
        let mask = size - 1;
        self.table = vec![EMPTY; size];
        for id in 0..self.len() {
            let mut slot = table_hash(self.token_bytes(id as FeatureId)) as usize & mask;
            while self.table[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            self.table[slot] = id as FeatureId;
        }
    }

    /// Lookups into the vocabulary's arrays.
    pub(crate) fn tokens(&self) -> TokenTable<'_, [u32]> {
        TokenTable {
            blob: &self.blob,
            ends: &self.ends[..],
            table: &self.table[..],
        }
    }

    fn token_bytes(&self, id: FeatureId) -> &[u8] {
        self.tokens().bytes_of(id).unwrap_or_default()
    }

    /// The token with id `id` (empty if there is none).
    pub fn token(&self, id: FeatureId) -> &str {
        self.tokens().token(id)
    }

    /// The id of `token`, if it is in the vocabulary: one hash and, on average, about one
    /// comparison.
    pub fn id(&self, token: &str) -> Option<FeatureId> {
        self.tokens().lookup(token.as_bytes())
    }

    /// The count vector of a token list: known tokens' ids (and hashed tokens' bucket ids, see
    /// [`super::hashed`]) with their number of occurrences.
    pub fn vectorize(&self, tokens: &Tokens) -> SparseVector {
        self.tokens().count_vector(tokens)
    }

    /// In how many training messages of class `label` the token `id` occurred.
    pub fn df(&self, id: FeatureId, label: Label) -> u32 {
        match label {
            Label::Ham => self.df_ham[id as usize],
            Label::Spam => self.df_spam[id as usize],
        }
    }

    /// Number of training messages of class `label`.
    pub fn docs(&self, label: Label) -> u32 {
        self.docs[label.index()]
    }

    /// In how many messages (both classes) token `id` occurred.
    fn count(&self, id: usize) -> u32 {
        self.df_ham[id].saturating_add(self.df_spam[id])
    }

    /// The number of the last message learned that contained token `id` (messages are
    /// numbered from 1 as they are learned, training first); 0 if it is not a token.
    pub fn last_seen(&self, id: FeatureId) -> u32 {
        self.last_seen.get(id as usize).copied().unwrap_or(0)
    }

    /// Messages learned so far (training included; unlearning does not turn it back).
    pub fn clock(&self) -> u32 {
        self.clock
    }

    /// Per token, whether `rule` keeps it.
    pub fn prune_rule(&self, rule: PruneRule) -> Vec<bool> {
        (0..self.len())
            .map(|id| {
                self.count(id) >= rule.min_count
                    || self.clock.saturating_sub(self.last_seen[id]) < rule.unseen_for
            })
            .collect()
    }

    /// Per token, whether it is among the `keep` most useful: the least useful are those in
    /// the fewest messages, then those seen least recently, then the newest ids.
    pub fn keep_most_useful(&self, keep: usize) -> Vec<bool> {
        let mut ids: Vec<usize> = (0..self.len()).collect();
        ids.sort_unstable_by_key(|&id| {
            (
                std::cmp::Reverse(self.count(id)),
                std::cmp::Reverse(self.last_seen[id]),
                id,
            )
        });
        let mut kept = vec![false; self.len()];
        for &id in ids.iter().take(keep) {
            kept[id] = true;
        }
        kept
    }

    /// Renumbers the tokens by `remap` (dropping those it drops) and rebuilds the hash table.
    /// Message counts and the clock are unchanged.
    pub fn remap(&mut self, remap: &FeatureRemap) {
        let mut blob = Vec::with_capacity(self.blob.len());
        let mut ends = Vec::with_capacity(remap.kept());
        for id in 0..self.len() {
            if remap.new_id(id as FeatureId).is_some() {
                blob.extend_from_slice(self.token_bytes(id as FeatureId));
                ends.push(u32::try_from(blob.len()).expect("vocabulary under 4 GiB"));
            }
        }
        remap.apply(&mut self.df_ham);
        remap.apply(&mut self.df_spam);
        remap.apply(&mut self.last_seen);
        (self.blob, self.ends) = (blob, ends);
        self.build_table();
    }

    /// Checks the invariants a loaded file must hold before it is trusted, so that no lookup
    /// can index out of bounds or loop: tables aligned, offsets increasing, inside the blob and
    /// on character boundaries, the blob valid UTF-8, the hash table a power of two with free
    /// slots and pointing inside the token table. (Sortedness is not needed for lookups and is
    /// covered by the file checksum.) The pipe filter pays this once per message.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.ends.len();
        if self.df_ham.len() != n || self.df_spam.len() != n || self.last_seen.len() != n {
            return Err("document frequency tables do not match the token table".into());
        }
        if self.ends.last().map_or(0, |&e| e as usize) != self.blob.len() {
            return Err("token table does not cover the token bytes".into());
        }
        let size = self.table.len();
        if n > 0 && (!size.is_power_of_two() || size < 2 * n) {
            return Err("token hash table has the wrong size".into());
        }
        if self.table.iter().any(|&id| id != EMPTY && id as usize >= n) {
            return Err("token hash table points past the token table".into());
        }
        let text = std::str::from_utf8(&self.blob).map_err(|_| "a token is not valid UTF-8")?;
        let mut start = 0u32;
        for &end in &self.ends {
            if end < start || !text.is_char_boundary(end as usize) {
                return Err("token offsets are out of order or split a character".into());
            }
            start = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Tokens {
        s.split_whitespace().collect()
    }

    #[test]
    fn ids_are_sorted_ranks_with_df() {
        let spam = toks("buy now buy cheap");
        let ham = toks("meeting now");
        let ham2 = toks("meeting notes");
        let params = VocabularyParams {
            min_df: 1,
            max_features: None,
        };
        let v = params.fit([
            (&spam, Label::Spam),
            (&ham, Label::Ham),
            (&ham2, Label::Ham),
        ]);
        let all: Vec<&str> = (0..v.len() as u32).map(|i| v.token(i)).collect();
        assert_eq!(all, ["buy", "cheap", "meeting", "notes", "now"]);
        assert_eq!(v.id("meeting"), Some(2));
        assert_eq!(v.id("zzz"), None);
        assert_eq!(v.id(""), None);
        let counts = v.vectorize(&toks("now zzz buy now"));
        assert_eq!(
            (counts.ids(), counts.values()),
            (&[0, 4][..], &[1.0, 2.0][..])
        );
        let buy = v.id("buy").unwrap();
        assert_eq!((v.df(buy, Label::Spam), v.df(buy, Label::Ham)), (1, 0));
        let now = v.id("now").unwrap();
        assert_eq!((v.df(now, Label::Spam), v.df(now, Label::Ham)), (1, 1));
        assert_eq!((v.docs(Label::Ham), v.docs(Label::Spam)), (2, 1));
        v.validate().unwrap();
    }

    #[test]
    fn learned_tokens_get_new_ids_and_counts() {
        let params = VocabularyParams {
            min_df: 1,
            max_features: None,
        };
        let first = toks("old words");
        let mut v = params.fit([(&first, Label::Ham)]);
        let x = v.learn(&toks("brand new old new"), Label::Spam, false, usize::MAX);
        let (old, brand, new) = (v.id("old").unwrap(), v.id("brand").unwrap(), v.id("new"));
        assert_eq!((brand, new), (2, Some(3)));
        assert_eq!(
            (x.ids(), x.values()),
            (&[old, 2, 3][..], &[1.0, 1.0, 2.0][..])
        );
        assert_eq!((v.df(brand, Label::Spam), v.docs(Label::Spam)), (1, 1));
        // Many more tokens: the table grows and every token is still found.
        let many: Tokens = (0..100).map(|i| format!("t{i}")).collect();
        v.learn(&many, Label::Ham, false, usize::MAX);
        v.validate().unwrap();
        assert!(many.iter().all(|t| v.id(t).is_some()));
        // Unlearning adds no token and takes the counts back.
        let y = v.learn(&toks("brand unknown t1"), Label::Spam, true, 3);
        assert_eq!(y.ids(), [brand], "t1 came later");
        assert_eq!((v.df(brand, Label::Spam), v.id("unknown")), (0, None));
    }

    #[test]
    fn remap_keeps_lookups_counts_and_last_seen_aligned() {
        let params = VocabularyParams {
            min_df: 1,
            max_features: None,
        };
        let first = toks("a b c d");
        let mut v = params.fit([(&first, Label::Ham)]);
        v.learn(&toks("d e"), Label::Spam, false, usize::MAX);
        v.remap(&FeatureRemap::new(&[false, true, false, true, true]));
        v.validate().unwrap();
        let ids: Vec<Option<FeatureId>> = ["a", "b", "c", "d", "e"].map(|t| v.id(t)).to_vec();
        assert_eq!(ids, [None, Some(0), None, Some(1), Some(2)]);
        assert_eq!((v.df(1, Label::Spam), v.df(1, Label::Ham)), (1, 1));
        assert_eq!((v.last_seen(0), v.last_seen(1), v.clock()), (1, 2, 2));
        assert_eq!(v.docs(Label::Ham), 1, "message counts are not pruned");
    }

    #[test]
    fn fit_numbered_builds_what_fit_builds_and_maps_numbers_to_its_ids() {
        let lists = [
            toks("buy now buy cheap b4:00001 now"),
            toks("meeting now notes b4:00001"),
            toks("meeting notes cheap zzz"),
            toks("buy buy buy once"),
            toks("notes"),
        ];
        let labels = [Label::Spam, Label::Ham, Label::Ham, Label::Spam, Label::Ham];
        let numbered = NumberedTokens::of(&lists);
        assert!(!numbered.tokens.contains(&"b4:00001"));
        assert_eq!(numbered.lists[0][4], hashed_id("b4:00001").unwrap());
        for (min_df, max_features) in [(1, None), (2, None), (1, Some(3)), (2, Some(2))] {
            let params = VocabularyParams {
                min_df,
                max_features,
            };
            // Fitted on a subset, as a fold is.
            let subset = [0, 1, 3, 4];
            let by_tokens = params.fit(subset.map(|i| (&lists[i], labels[i])));
            let (by_numbers, ids) = params.fit_numbered(
                &numbered.tokens,
                subset.map(|i| (&numbered.lists[i][..], labels[i])),
            );
            assert_eq!(
                by_numbers, by_tokens,
                "min_df {min_df} max {max_features:?}"
            );
            for (n, t) in numbered.tokens.iter().enumerate() {
                assert_eq!(ids[n], by_tokens.id(t), "{t}");
            }
            for (i, list) in lists.iter().enumerate() {
                assert_eq!(numbered.count_vector(i, &ids), by_tokens.vectorize(list));
            }
        }
    }

    #[test]
    fn min_df_and_max_features() {
        let a = toks("x y z");
        let b = toks("x y");
        let c = toks("x");
        let msgs = [(&a, Label::Spam), (&b, Label::Ham), (&c, Label::Ham)];
        let v = VocabularyParams {
            min_df: 2,
            max_features: None,
        }
        .fit(msgs);
        assert_eq!(v.len(), 2);
        let v = VocabularyParams {
            min_df: 1,
            max_features: Some(1),
        }
        .fit(msgs);
        assert_eq!((v.len(), v.token(0)), (1, "x"));
    }
}
