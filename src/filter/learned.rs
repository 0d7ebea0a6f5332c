//! The record of learned messages that makes learning idempotent ("learn once"): each message's
//! identity, a digest of its token list, with the label it was learned as. The tokenizer never
//! sees spamsort's own `X-Spam-*` fields (nor the mbox `From ` line), so a copy of a message
//! that went through `spamsort filter`, or was delivered twice, has the same digest.
//!
//! The record is bounded: it keeps the [`LearnedMessages::CAPACITY`] most recently learned
//! messages and drops the oldest first. A message that fell out of it is a new message again.
//! It lives in the model file, in its own section (only learners read it).

use crate::features::hashed::hashed_id;
use crate::label::Label;
use crate::tokenize::Token;
use foldhash::HashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A message's identity: a 64-bit SipHash-1-3 (fixed key, so a file reads the same in every
/// build) of its tokens, each followed by a byte that never occurs in UTF-8.
pub type Digest = u64;

/// The digest of a message's token list. The hashed byte 4-grams are left out: they see the
/// raw header block byte for byte, so digests stay what the word tokens make them (a copy
/// that differs only in bytes the word tokenizer ignores is the same message).
pub fn digest(tokens: &[Token]) -> Digest {
    use std::hash::Hasher;
    let mut h =
        siphasher::sip::SipHasher13::new_with_keys(0x6c65_6172_6e65_645f, 0x6d65_7373_6167_6573);
    for t in tokens.iter().filter(|t| hashed_id(t).is_none()) {
        h.write(t.as_bytes());
        h.write_u8(0xff);
    }
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
}

/// The learned messages, oldest first, with an index by digest. Serialized as the list alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LearnedMessages {
    order: VecDeque<(Digest, LearnedAs)>,
    index: HashMap<Digest, LearnedAs>,
}

impl LearnedMessages {
    /// At most this many messages are remembered (10 bytes each in the model file, so about
    /// 1 MB); past it the oldest are dropped first.
    pub const CAPACITY: usize = 100_000;

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
            self.order.retain(|&(d, _)| d != digest);
        }
        self.order.push_back((digest, label));
        while self.order.len() > Self::CAPACITY {
            if let Some((d, _)) = self.order.pop_front() {
                self.index.remove(&d);
            }
        }
    }

    /// The remembered messages, oldest first (the order [`LearnedMessages::insert`] keeps).
    pub fn iter(&self) -> impl Iterator<Item = (Digest, LearnedAs)> + '_ {
        self.order.iter().copied()
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
        self.order.retain(|&(d, _)| d != digest);
        Some(label)
    }
}

impl Serialize for LearnedMessages {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(&self.order)
    }
}

impl<'de> Deserialize<'de> for LearnedMessages {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let list: Vec<(Digest, LearnedAs)> = Vec::deserialize(deserializer)?;
        // Sized once: `learn` reads the record at every run.
        let n = list.len().min(Self::CAPACITY);
        let mut learned = LearnedMessages {
            order: VecDeque::with_capacity(n),
            index: HashMap::with_capacity_and_hasher(n, Default::default()),
        };
        // Through `insert`, so a malformed list (repeats, too long) still gives a valid record.
        for (d, l) in list {
            learned.insert(d, l);
        }
        Ok(learned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPAM: LearnedAs = LearnedAs {
        label: Label::Spam,
        in_training: false,
    };
    const HAM: LearnedAs = LearnedAs {
        label: Label::Ham,
        in_training: false,
    };

    #[test]
    fn relabel_moves_to_the_end_and_the_oldest_is_dropped_past_capacity() {
        let mut r = LearnedMessages::default();
        r.insert(1, SPAM);
        r.insert(2, HAM);
        r.insert(1, HAM);
        assert_eq!(r.order, [(2, HAM), (1, HAM)]);
        assert_eq!(r.remove(2), Some(HAM));
        assert_eq!((r.get(2), r.len()), (None, 1));
        for d in 10..10 + LearnedMessages::CAPACITY as u64 {
            r.insert(d, SPAM);
        }
        assert_eq!(r.len(), LearnedMessages::CAPACITY);
        assert_eq!(r.get(1), None, "the oldest went first");
        assert_eq!(r.get(10), Some(SPAM));
        let tokens = |s: &str| s.split(' ').map(String::from).collect::<Vec<Token>>();
        assert_ne!(digest(&tokens("ab c")), digest(&tokens("a bc")));
    }
}
