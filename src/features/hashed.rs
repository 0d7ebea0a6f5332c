//! Hashed features: tokens that name a hash bucket (`b4:XXXXX`, the byte 4-grams of
//! `tokenize::ngrams`) get no vocabulary entry. Their number is bounded by the bucket count
//! whatever the mail, so they need no strings, no document frequencies and no pruning. In a
//! count vector they take the ids from [`HASHED_BASE`] up, above every vocabulary id, so they
//! are always its last entries. A [`FeatureConfig`](super::FeatureConfig) with `hashed` set
//! moves them to the front of its model's input (bucket `b` at id `b`, vocabulary id `v` at
//! `v + HASHED_BUCKETS`); without it a model never sees them.

use super::sparse::sort_ids;
use super::{FeatureId, SparseVector};
use std::borrow::Cow;

/// Number of hash buckets of byte 4-grams (a power of two, at most 16^5 for five hex digits):
/// 2^17. In 5-fold cross-validation on the SpamAssassin corpus (`examples/sweep.rs` with
/// `B4_BITS`, the default models, seeds 7 and 3) the SVM's (1-AUC)% was 0.0086 and 0.0102
/// against 0.0095 and 0.0105 with 2^18, fusion's 0.0061 and 0.0079 against 0.0064 and 0.0084;
/// online (seed 7) each model within 2% of 2^18's (fusion 0.0677 against 0.0670). A linear model's
/// hashed weights (`f32`, 512 KiB) and its solver's (`f64`, 1 MiB) then fit a core's cache
/// beside the vocabulary's: `train` took 0.80 of its time with 2^18.
pub const HASHED_BUCKETS: u32 = 1 << 17;

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
    bucket_token(HASHED_PREFIX, id.wrapping_sub(HASHED_BASE))
}

/// The length of the token of every bucket below [`HASHED_BUCKETS`]: the prefix and five hex
/// digits.
pub(crate) const HASHED_TOKEN_BYTES: usize = HASHED_PREFIX.len() + 5;

/// The token of `bucket` (below [`HASHED_BUCKETS`]), `hashed_token(HASHED_BASE + bucket)`,
/// as ASCII bytes in a fixed-size array: the tokenizer writes a message's few thousand of them
/// into one buffer (a bucket at or past 16^5 would lose its high digits here; none is).
pub(crate) fn hashed_token_bytes(bucket: u32) -> [u8; HASHED_TOKEN_BYTES] {
    const _: () = assert!(HASHED_TOKEN_BYTES == 8, "a token fills one u64");
    debug_assert!(bucket < HASHED_BUCKETS, "bucket {bucket}");
    // All five digits at once, in the five low bytes of a u64 (a loop over a table of digits
    // cost three times as much): nibble i of the bucket goes to byte i, and each byte n to
    // '0' + n, plus ('a' - '0' - 10) where n > 9, which no byte carries out of.
    let b = u64::from(bucket);
    let nibbles = (b & 0xf)
        | (b >> 4 & 0xf) << 8
        | (b >> 8 & 0xf) << 16
        | (b >> 12 & 0xf) << 24
        | (b >> 16 & 0xf) << 32;
    let over_9 = (nibbles + 0x06_0606_0606) >> 4 & 0x01_0101_0101;
    let digits = nibbles + 0x30_3030_3030 + over_9 * u64::from(b'a' - b'0' - 10);
    let mut token = digits.to_be_bytes();
    token[..HASHED_PREFIX.len()].copy_from_slice(HASHED_PREFIX.as_bytes());
    token
}

/// Appends [`hashed_token`]`(id)` to `out`.
pub(crate) fn write_hashed_token(out: &mut String, id: FeatureId) {
    write_bucket_token(out, HASHED_PREFIX, id.wrapping_sub(HASHED_BASE));
}

/// `prefix` followed by `bucket` in lowercase hex, at least five digits (as `{:05x}` writes
/// it): the form of every hashed token (`b4:` here, `c4:` of the tokenizer's character
/// 4-grams).
pub fn bucket_token(prefix: &str, bucket: u32) -> String {
    let mut token = String::with_capacity(prefix.len() + 8);
    write_bucket_token(&mut token, prefix, bucket);
    token
}

/// Appends [`bucket_token`]`(prefix, bucket)` to `out`.
pub(crate) fn write_bucket_token(out: &mut String, prefix: &str, bucket: u32) {
    // Written digit by digit rather than with `format!`: the tokenizer makes one per byte
    // 4-gram (about 3,000 a message), and the formatting machinery cost more than all its
    // other tokens.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = (u32::BITS - bucket.leading_zeros()).div_ceil(4).max(5);
    out.push_str(prefix);
    for shift in (0..digits).rev() {
        out.push(char::from(HEX[(bucket >> (4 * shift)) as usize & 0xf]));
    }
}

/// True for a hashed count-vector id.
pub fn is_hashed(id: FeatureId) -> bool {
    id >= HASHED_BASE
}

impl SparseVector {
    /// The ids below the hashed ones: the vocabulary's, its first entries.
    pub(crate) fn vocabulary_ids(&self) -> &[FeatureId] {
        &self.ids()[..self.ids().partition_point(|&id| !is_hashed(id))]
    }

    /// The vector without its hashed entries (borrowed when it has none).
    pub fn without_hashed(&self) -> Cow<'_, SparseVector> {
        let vocabulary = self.vocabulary_ids().len();
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
    /// counted; any other id is ignored) added: what the count vector of the same tokens with
    /// their `b4:` tokens is.
    pub fn with_hashed(mut self, ids: Vec<FeatureId>) -> SparseVector {
        if ids.is_empty() {
            return self;
        }
        let ids = sorted_hashed_ids(ids);
        if self.ids().last().is_none_or(|&id| !is_hashed(id)) {
            // Every id of `self` is below every hashed one: the entries follow its own.
            self.push_counted(&ids);
            return self;
        }
        let mut hashed = SparseVector::default();
        hashed.push_counted(&ids);
        SparseVector::from_pairs(self.iter().chain(hashed.iter()).collect())
    }

    /// The buckets of the hashed entries (its last ones), ascending.
    pub(crate) fn buckets(&self) -> impl Iterator<Item = u32> + '_ {
        let vocabulary = self.vocabulary_ids().len();
        self.ids()[vocabulary..].iter().map(|&id| id - HASHED_BASE)
    }
}

/// The buckets of the hashed ids among `ids` (an id that is not hashed is dropped), repeats
/// kept, increasing (sorted by [`sort_ids`]'s radix passes).
pub(crate) fn sorted_buckets(ids: impl IntoIterator<Item = FeatureId>) -> Vec<u32> {
    let mut buckets: Vec<u32> = ids
        .into_iter()
        .filter(|&id| is_hashed(id) && id - HASHED_BASE < HASHED_BUCKETS)
        .map(|id| id - HASHED_BASE)
        .collect();
    sort_ids(&mut buckets);
    buckets
}

/// The hashed ids among `ids` (an id that is not hashed is dropped), repeats kept,
/// increasing: sorted by [`sorted_buckets`].
fn sorted_hashed_ids(ids: Vec<FeatureId>) -> Vec<FeatureId> {
    let mut ids = sorted_buckets(ids);
    for id in &mut ids {
        *id += HASHED_BASE;
    }
    ids
}

/// Back from a hashed model's input id to its count-vector id (the inverse of the input ids
/// the module doc describes).
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
    fn hashed_token_is_the_prefix_and_bucket_as_five_or_more_hex_digits() {
        let ids = (HASHED_BASE..HASHED_BASE + HASHED_BUCKETS).chain([
            0,
            1,
            0xabcd,
            HASHED_BASE - 1,
            HASHED_BASE + 0xfffff,
            u32::MAX,
        ]);
        for id in ids {
            let want = format!("{HASHED_PREFIX}{:05x}", id.wrapping_sub(HASHED_BASE));
            assert_eq!(hashed_token(id), want);
        }
    }

    #[test]
    fn hashed_token_bytes_are_the_hashed_token() {
        for bucket in 0..HASHED_BUCKETS {
            let token = hashed_token_bytes(bucket);
            assert_eq!(
                token.as_slice(),
                hashed_token(HASHED_BASE + bucket).as_bytes()
            );
        }
    }

    #[test]
    fn hashed_tokens_round_trip_and_others_are_not_hashed() {
        let last = format!("{HASHED_PREFIX}{:05x}", HASHED_BUCKETS - 1);
        let id = hashed_id(&last).unwrap();
        assert_eq!(id, HASHED_BASE + HASHED_BUCKETS - 1);
        assert_eq!(hashed_token(id), last);
        let past = format!("{HASHED_PREFIX}{HASHED_BUCKETS:05x}");
        for t in [
            past.as_str(),
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
    fn hashed_ids_are_counted_as_from_ids_counts_them() {
        let mut state = 12345u64;
        let ids: Vec<FeatureId> = (0..5000)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // A narrow range too, so repeats are many.
                let bucket = (state >> 33) as u32
                    % if state.is_multiple_of(2) {
                        HASHED_BUCKETS
                    } else {
                        300
                    };
                HASHED_BASE + bucket
            })
            .collect();
        let counted = |ids| SparseVector::default().with_hashed(ids);
        assert_eq!(counted(ids.clone()), SparseVector::from_ids(ids));
        assert_eq!(counted(vec![5, HASHED_BASE + 1]).ids(), [HASHED_BASE + 1]);
        assert_eq!(counted(Vec::new()), SparseVector::default());
    }

    #[test]
    fn hashed_entries_move_to_the_front_and_back() {
        let x = SparseVector::from_pairs(vec![(3, 2.0), (HASHED_BASE + 7, 1.0), (0, 1.0)]);
        let counts = super::super::FeatureConfig {
            weighting: super::super::Weighting::Counts,
            l2_normalize: false,
            hashed: true,
        };
        let input = super::super::weigh(counts, &[][..], &x);
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
        assert_eq!(twice.ids(), [0, 3, HASHED_BASE + 7]);
        assert_eq!(twice.values(), [1.0, 2.0, 2.0]);
    }
}
