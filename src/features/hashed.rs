//! Hashed features: tokens that name a hash bucket (`b4:XXXXX`, the byte 4-grams of
//! `tokenize::ngrams`) get no vocabulary entry. Their number is bounded by the bucket count
//! whatever the mail, so they need no strings, no document frequencies and no pruning. In a
//! count vector they take the ids from [`HASHED_BASE`] up, above every vocabulary id, so they
//! are always its last entries. A [`FeatureConfig`](super::FeatureConfig) with `hashed` set
//! moves them to the front of its model's input (bucket `b` at id `b`, vocabulary id `v` at
//! `v + HASHED_BUCKETS`); without it a model never sees them.

use super::{Dataset, FeatureId, SparseVector};
use std::borrow::Cow;

/// Number of hash buckets of byte 4-grams (a power of two, at most 16^5 for five hex digits).
pub const HASHED_BUCKETS: u32 = 1 << 18;

/// The count-vector id of bucket 0; vocabulary ids stay below it.
pub const HASHED_BASE: FeatureId = 1 << 31;

/// The prefix of hashed tokens.
pub const HASHED_PREFIX: &str = "b4:";

/// The count-vector id of a hashed token (`b4:` and five hex digits naming a bucket), if
/// `token` is one.
pub fn hashed_id(token: &str) -> Option<FeatureId> {
    let hex = token.strip_prefix(HASHED_PREFIX)?;
    if hex.len() != 5 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bucket = u32::from_str_radix(hex, 16).ok()?;
    (bucket < HASHED_BUCKETS).then_some(HASHED_BASE + bucket)
}

/// The token of a hashed count-vector id (`b4:XXXXX`), for explanations.
pub fn hashed_token(id: FeatureId) -> String {
    format!("{HASHED_PREFIX}{:05x}", id.wrapping_sub(HASHED_BASE))
}

/// True for a hashed count-vector id.
pub fn is_hashed(id: FeatureId) -> bool {
    id >= HASHED_BASE
}

impl SparseVector {
    /// The vector without its hashed entries (borrowed when it has none).
    pub fn without_hashed(&self) -> Cow<'_, SparseVector> {
        let vocabulary = self.ids().partition_point(|&id| !is_hashed(id));
        if vocabulary == self.nnz() {
            return Cow::Borrowed(self);
        }
        Cow::Owned(SparseVector::from_sorted(
            self.ids()[..vocabulary].to_vec(),
            self.values()[..vocabulary].to_vec(),
        ))
    }

    /// The vector with the hashed ids `ids` (from
    /// [`Tokenizer::byte_ngram_ids`](crate::tokenize::Tokenizer::byte_ngram_ids), repeats
    /// counted) added: what the count vector of the same tokens with their `b4:` tokens is.
    pub fn with_hashed(self, ids: Vec<FeatureId>) -> SparseVector {
        if ids.is_empty() {
            return self;
        }
        let hashed = SparseVector::from_ids(ids);
        if self.ids().last().is_none_or(|&id| !is_hashed(id))
            && hashed.ids().iter().all(|&id| is_hashed(id))
        {
            // Every id of `self` is below every hashed one: the entries follow each other.
            let ids = self.ids().iter().chain(hashed.ids()).copied().collect();
            let values = self
                .values()
                .iter()
                .chain(hashed.values())
                .copied()
                .collect();
            return SparseVector::from_sorted(ids, values);
        }
        let pairs = self.iter().chain(hashed.iter()).collect();
        SparseVector::from_pairs(pairs)
    }

    /// The vector in a hashed model's input ids: buckets first, vocabulary ids after them
    /// (see the module doc).
    pub(crate) fn hashed_first(&self) -> SparseVector {
        let vocabulary = self.ids().partition_point(|&id| !is_hashed(id));
        let (words, buckets) = self.ids().split_at(vocabulary);
        let ids = buckets
            .iter()
            .map(|&id| id - HASHED_BASE)
            .chain(words.iter().map(|&id| id + HASHED_BUCKETS))
            .collect();
        let (wv, bv) = self.values().split_at(vocabulary);
        SparseVector::from_sorted(ids, bv.iter().chain(wv).copied().collect())
    }
}

impl Dataset {
    /// The data set without hashed features (borrowed when it has none), for a model that
    /// does not see them.
    pub fn without_hashed(&self) -> Cow<'_, Dataset> {
        if self
            .rows
            .iter()
            .all(|r| r.ids().last().is_none_or(|&id| !is_hashed(id)))
        {
            return Cow::Borrowed(self);
        }
        Cow::Owned(Dataset {
            rows: self
                .rows
                .iter()
                .map(|r| r.without_hashed().into_owned())
                .collect(),
            labels: self.labels.clone(),
            n_features: self.n_features,
        })
    }
}

/// Back from a hashed model's input id to its count-vector id (the inverse of the map in
/// [`SparseVector::hashed_first`]).
pub(crate) fn count_id(input_id: FeatureId) -> FeatureId {
    if input_id < HASHED_BUCKETS {
        HASHED_BASE + input_id
    } else {
        input_id - HASHED_BUCKETS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_tokens_round_trip_and_others_are_not_hashed() {
        let id = hashed_id("b4:3ffff").unwrap();
        assert_eq!(id, HASHED_BASE + 0x3ffff);
        assert_eq!(hashed_token(id), "b4:3ffff");
        for t in [
            "b4:40000",
            "b4:fff",
            "b4:0000g",
            "c4:00001",
            "b4:000001",
            "word",
        ] {
            assert_eq!(hashed_id(t), None, "{t}");
        }
    }

    #[test]
    fn hashed_entries_move_to_the_front_and_back() {
        let x = SparseVector::from_pairs(vec![(3, 2.0), (HASHED_BASE + 7, 1.0), (0, 1.0)]);
        let input = x.hashed_first();
        assert_eq!(input.ids(), [7, HASHED_BUCKETS, HASHED_BUCKETS + 3]);
        assert_eq!(input.values(), [1.0, 1.0, 2.0]);
        let back: Vec<FeatureId> = input.ids().iter().map(|&i| count_id(i)).collect();
        assert_eq!(back, [HASHED_BASE + 7, 0, 3]);
        assert_eq!(x.without_hashed().ids(), [0, 3]);
        let plain = SparseVector::from_ids(vec![1]);
        assert!(matches!(plain.without_hashed(), Cow::Borrowed(_)));
        let added = x
            .without_hashed()
            .into_owned()
            .with_hashed(vec![HASHED_BASE + 7]);
        assert_eq!(added, x);
        let twice = x.clone().with_hashed(vec![HASHED_BASE + 7, 2]);
        assert_eq!(twice.ids(), [0, 2, 3, HASHED_BASE + 7]);
        assert_eq!(twice.values(), [1.0, 1.0, 2.0, 2.0]);
    }
}
