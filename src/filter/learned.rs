//! The record of learned messages that makes learning idempotent ("learn once"): each message's
//! identity, a digest of its token list, with the label it was learned as. The tokenizer never
//! sees spamsort's own `X-Spam-*` fields (nor the mbox `From ` line), so a copy of a message
//! that went through `spamsort filter`, or was delivered twice, has the same digest.
//!
//! The record is bounded: it keeps the [`LearnedMessages::CAPACITY`] most recently learned
//! messages and drops the oldest first. A message that fell out of it is a new message again.
//! It lives in the model file, in its own section (only learners read it).

use crate::features::FeatureRemap;
use crate::features::hashed::hashed_id;
use crate::label::Label;
use crate::tokenize::Tokens;
use foldhash::HashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A message's identity: a 64-bit SipHash-1-3 (fixed key, so a file reads the same in every
/// build) of its tokens, each followed by a byte that never occurs in UTF-8.
pub type Digest = u64;

/// The digest of a message's token list. The hashed byte 4-grams are left out: they see the
/// raw header block byte for byte, so digests stay what the word tokens make them (a copy
/// that differs only in bytes the word tokenizer ignores is the same message).
pub fn digest(tokens: &Tokens) -> Digest {
    use std::hash::Hasher;
    let mut h =
        siphasher::sip::SipHasher13::new_with_keys(0x6c65_6172_6e65_645f, 0x6d65_7373_6167_6573);
    // The stream of bytes goes to the hasher a block at a time: SipHash reads one byte stream
    // however it is cut, and two writes per token cost more than hashing its bytes.
    let mut block = [0u8; 256];
    let mut len = 0;
    for t in tokens.iter().filter(|t| hashed_id(t).is_none()) {
        let bytes = t.as_bytes();
        if len + bytes.len() >= block.len() {
            h.write(&block[..len]);
            len = 0;
            if bytes.len() >= block.len() {
                h.write(bytes);
                h.write_u8(0xff);
                continue;
            }
        }
        block[len..len + bytes.len()].copy_from_slice(bytes);
        block[len + bytes.len()] = 0xff;
        len += bytes.len() + 1;
    }
    h.write(&block[..len]);
    h.finish()
}

/// How a remembered message was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearnedAs {
    /// The label it was learned with.
    pub label: Label,
    /// Learned by `train`, so counted only in the tokens of the trained vocabulary (rarer ones
    /// were left out), not by `learn`, which counts all of them.
    pub in_training: bool,
    /// Once a prune has dropped tokens since the message was learned: the number of tokens
    /// that prune kept, renumbered by every later prune as the tokens are (see
    /// [`LearnedMessages::remap`]). The message's counts are only in tokens with ids below it:
    /// one from there on was pruned and seen again since, so its counts are newer messages'.
    /// `None` until such a prune. Not written where the entry is (the journal's entries are all
    /// learned after the last prune, so `None`); the model file's record writes it beside
    /// the entry.
    #[serde(skip)]
    pub kept_below: Option<u32>,
}

impl LearnedAs {
    /// Learned now with `label`, by `train` (`in_training`) or not.
    pub const fn new(label: Label, in_training: bool) -> Self {
        LearnedAs {
            label,
            in_training,
            kept_below: None,
        }
    }
}

/// The learned messages, oldest first, with an index by digest. Serialized as the list alone,
/// each entry (digest, label, in training, [`LearnedAs::kept_below`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LearnedMessages {
    /// The digests, oldest first.
    order: VecDeque<Digest>,
    index: HashMap<Digest, LearnedAs>,
}

impl LearnedMessages {
    /// At most this many messages are remembered (about 13 bytes each in the model file, 16
    /// once a prune has marked them, so 1.3 to 1.6 MB); past it the oldest are dropped first.
    pub const CAPACITY: usize = 100_000;

    /// The record of a saved list, oldest first (as a model file holds it). Through
    /// [`LearnedMessages::insert`], so a malformed list (repeats, too long) still gives a
    /// valid record.
    pub(crate) fn from_list(list: &[(Digest, LearnedAs)]) -> Self {
        // Sized once: a full load reads records of many thousands.
        let n = list.len().min(Self::CAPACITY);
        let mut learned = LearnedMessages {
            order: VecDeque::with_capacity(n),
            index: HashMap::with_capacity_and_hasher(n, Default::default()),
        };
        for &(digest, how) in list {
            learned.insert(digest, how);
        }
        learned
    }

    /// How `digest` was learned, if it is remembered.
    pub fn get(&self, digest: Digest) -> Option<LearnedAs> {
        self.index.get(&digest).copied()
    }

    /// Number of messages remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True if no message is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Remembers `digest` as learned with `label`, as the newest entry (a relabeled message
    /// moves to the end), dropping the oldest past [`LearnedMessages::CAPACITY`].
    pub fn insert(&mut self, digest: Digest, label: LearnedAs) {
        if self.index.insert(digest, label).is_some() {
            self.order.retain(|&d| d != digest);
        }
        self.order.push_back(digest);
        while self.order.len() > Self::CAPACITY {
            if let Some(d) = self.order.pop_front() {
                self.index.remove(&d);
            }
        }
    }

    /// The remembered messages, oldest first (the order [`LearnedMessages::insert`] keeps).
    pub fn iter(&self) -> impl Iterator<Item = (Digest, LearnedAs)> + '_ {
        self.order.iter().map(|d| (*d, self.index[d]))
    }

    /// Renumbers each entry's [`LearnedAs::kept_below`] after a prune that kept the tokens
    /// `remap` says and renumbered them in order: an entry without one gets the number of
    /// tokens kept (every token from there on is new since), one with one the number of kept
    /// tokens below it.
    pub fn remap(&mut self, remap: &FeatureRemap) {
        let id = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        for how in self.index.values_mut() {
            how.kept_below = Some(id(match how.kept_below {
                None => remap.kept(),
                Some(k) => remap.kept_below(k as usize),
            }));
        }
    }

    /// Why the record does not fit a vocabulary of `tokens` tokens, if it does not: an entry
    /// whose counts it says are in tokens the vocabulary does not have (no prune leaves one).
    pub fn check(&self, tokens: usize) -> Result<(), String> {
        match self.index.values().filter_map(|how| how.kept_below).max() {
            Some(k) if k as usize > tokens => Err(format!(
                "a learned message's counts are said to be in {k} tokens, of {tokens}"
            )),
            _ => Ok(()),
        }
    }

    /// Remembers `digest` as learned (`Some`, see [`LearnedMessages::insert`]) or forgets it
    /// (`None`).
    pub fn set(&mut self, digest: Digest, how: Option<LearnedAs>) {
        match how {
            Some(how) => self.insert(digest, how),
            None => {
                self.remove(digest);
            }
        }
    }

    /// Forgets `digest`; returns how it was learned.
    pub fn remove(&mut self, digest: Digest) -> Option<LearnedAs> {
        let label = self.index.remove(&digest)?;
        self.order.retain(|&d| d != digest);
        Some(label)
    }
}

/// The record of learned messages as a learner of a few messages reads it (see
/// `crate::filter::journal`): the saved list as it is decoded, with no index built (a lookup
/// scans it, newest first), and the changes made since, by digest. It answers as the
/// [`LearnedMessages`] of the same list and changes would while they cannot have pushed its
/// oldest entries out ([`LearnedMessages::CAPACITY`]); past that it builds that record whole.
#[derive(Debug)]
pub(crate) struct LearnedLookup {
    /// The saved list, oldest first.
    saved: Vec<(Digest, LearnedAs)>,
    /// The newest change of each digest since.
    changes: HashMap<Digest, Option<LearnedAs>>,
    /// Every change since, in order.
    history: Vec<(Digest, Option<LearnedAs>)>,
    /// The record built whole, once the changes could have pushed entries out.
    whole: Option<LearnedMessages>,
}

impl LearnedLookup {
    /// The lookup of the saved list `saved` (oldest first, as a model file holds it).
    pub fn new(saved: Vec<(Digest, LearnedAs)>) -> Self {
        let mut lookup = LearnedLookup {
            saved,
            changes: HashMap::default(),
            history: Vec::new(),
            whole: None,
        };
        lookup.build_if_full();
        lookup
    }

    /// How `digest` was learned, if it is remembered (see [`LearnedMessages::get`]).
    pub fn get(&self, digest: Digest) -> Option<LearnedAs> {
        if let Some(whole) = &self.whole {
            return whole.get(digest);
        }
        match self.changes.get(&digest) {
            Some(&how) => how,
            // The newest entry of a digest is the one a record read from the list keeps.
            None => self.saved.iter().rev().find(|e| e.0 == digest).map(|e| e.1),
        }
    }

    /// Remembers or forgets `digest` (see [`LearnedMessages::set`]).
    pub fn set(&mut self, digest: Digest, how: Option<LearnedAs>) {
        if let Some(whole) = &mut self.whole {
            whole.set(digest, how);
            return;
        }
        self.changes.insert(digest, how);
        self.history.push((digest, how));
        self.build_if_full();
    }

    /// Builds the record whole once the saved entries and the changes together could pass
    /// [`LearnedMessages::CAPACITY`] (only then does an entry drop out).
    fn build_if_full(&mut self) {
        if self.whole.is_none() && self.saved.len() + self.history.len() > LearnedMessages::CAPACITY
        {
            let mut whole = LearnedMessages::from_list(&self.saved);
            for &(digest, how) in &self.history {
                whole.set(digest, how);
            }
            self.whole = Some(whole);
        }
    }
}

/// An entry as the model file's record holds it (see [`LearnedMessages`]'s serialization).
pub(crate) type SavedEntry = (Digest, LearnedAs, Option<u32>);

impl Serialize for LearnedMessages {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(|(d, how)| (d, how, how.kept_below)))
    }
}

/// The entries of a saved record (see [`LearnedMessages`]'s serialization), each with its
/// [`LearnedAs::kept_below`] in place.
pub(crate) fn from_saved(saved: Vec<SavedEntry>) -> Vec<(Digest, LearnedAs)> {
    let entry = |(digest, how, kept_below): SavedEntry| (digest, LearnedAs { kept_below, ..how });
    saved.into_iter().map(entry).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest is the SipHash of each token's bytes then 0xff, written one token at a time
    /// (as it was first computed), whatever the tokens' lengths.
    #[test]
    fn a_digest_hashes_each_token_then_its_end_byte() {
        use std::hash::Hasher;
        let by_token = |tokens: &Tokens| {
            let mut h = siphasher::sip::SipHasher13::new_with_keys(
                0x6c65_6172_6e65_645f,
                0x6d65_7373_6167_6573,
            );
            for t in tokens.iter().filter(|t| hashed_id(t).is_none()) {
                h.write(t.as_bytes());
                h.write_u8(0xff);
            }
            h.finish()
        };
        let mut tokens = Tokens::new();
        assert_eq!(digest(&tokens), by_token(&tokens));
        for i in 0..600 {
            let token = "x".repeat(i * 7 % 300) + &i.to_string();
            tokens.push(&token);
            if i % 13 == 0 {
                tokens.push("b4:1234");
            }
            assert_eq!(digest(&tokens), by_token(&tokens), "{i} tokens");
        }
    }

    const SPAM: LearnedAs = LearnedAs::new(Label::Spam, false);
    const HAM: LearnedAs = LearnedAs::new(Label::Ham, false);

    /// Applies `changes` to the lookup of `saved` and to the record read from it, checking
    /// after each that both answer alike for every digest in play.
    fn assert_lookup_answers_as_the_record(
        saved: Vec<(Digest, LearnedAs)>,
        changes: &[(Digest, Option<LearnedAs>)],
    ) {
        let mut record = LearnedMessages::from_list(&saved);
        let mut lookup = LearnedLookup::new(saved.clone());
        let digests: Vec<Digest> = (saved.iter().map(|e| e.0).take(8))
            .chain(changes.iter().map(|c| c.0))
            .collect();
        for &(digest, how) in changes {
            record.set(digest, how);
            lookup.set(digest, how);
            for &d in &digests {
                assert_eq!(lookup.get(d), record.get(d), "digest {d}");
            }
        }
    }

    #[test]
    fn a_lookup_answers_as_the_record_read_whole_even_past_its_capacity() {
        // Repeats in the saved list (the newest counts), relabels, removals, new entries.
        let saved = vec![(1, SPAM), (2, HAM), (1, HAM), (3, SPAM)];
        let changes = [
            (3, Some(HAM)),
            (2, None),
            (4, Some(SPAM)),
            (1, None),
            (2, Some(SPAM)),
        ];
        assert_lookup_answers_as_the_record(saved, &changes);
        // A full record: the changes push the oldest entries out.
        let full: Vec<(Digest, LearnedAs)> = (0..LearnedMessages::CAPACITY as u64 - 2)
            .map(|d| (d, SPAM))
            .collect();
        let changes = [
            (1, Some(HAM)),
            (1_000_000, Some(HAM)),
            (1_000_001, Some(HAM)),
            (1_000_002, Some(SPAM)),
            (2, None),
            (1_000_003, Some(SPAM)),
        ];
        assert_lookup_answers_as_the_record(full, &changes);
    }

    #[test]
    fn relabel_moves_to_the_end_and_the_oldest_is_dropped_past_capacity() {
        let mut r = LearnedMessages::default();
        r.insert(1, SPAM);
        r.insert(2, HAM);
        r.insert(1, HAM);
        assert_eq!(r.iter().collect::<Vec<_>>(), [(2, HAM), (1, HAM)]);
        assert_eq!(r.remove(2), Some(HAM));
        assert_eq!((r.get(2), r.len()), (None, 1));
        for d in 10..10 + LearnedMessages::CAPACITY as u64 {
            r.insert(d, SPAM);
        }
        assert_eq!(r.len(), LearnedMessages::CAPACITY);
        assert_eq!(r.get(1), None, "the oldest went first");
        assert_eq!(r.get(10), Some(SPAM));
        let tokens = |s: &str| s.split(' ').collect::<Tokens>();
        assert_ne!(digest(&tokens("ab c")), digest(&tokens("a bc")));
    }

    /// A prune marks every entry without a mark with the tokens it kept, and renumbers the
    /// marks it finds as it renumbers the tokens; the marks are saved with the entries.
    #[test]
    fn a_prune_marks_the_entries_and_renumbers_their_marks() {
        let mut r = LearnedMessages::default();
        r.insert(1, SPAM);
        // Of tokens 0..6, the first prune keeps 0, 2, 3 and 5.
        r.remap(&FeatureRemap::new(&[true, false, true, true, false, true]));
        r.insert(2, HAM);
        assert_eq!(r.get(1).unwrap().kept_below, Some(4));
        assert_eq!(r.get(2).unwrap().kept_below, None);
        // Of the 6 tokens then, the second keeps 0, 3 and 4: one of the first 4, and 2 after.
        r.remap(&FeatureRemap::new(&[true, false, false, true, true, false]));
        let marks: Vec<_> = r.iter().map(|(d, how)| (d, how.kept_below)).collect();
        assert_eq!(marks, [(1, Some(2)), (2, Some(3))]);
        assert!(r.check(3).is_ok());
        assert!(r.check(2).unwrap_err().contains("3 tokens, of 2"));
        let bytes = postcard::to_stdvec(&r).unwrap();
        let saved: Vec<SavedEntry> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(LearnedMessages::from_list(&from_saved(saved)), r);
    }
}
