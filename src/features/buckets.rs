//! The hashed buckets one message has, as a data set keeps them: present or not, two bytes a
//! bucket. A message has some 1,700 byte 4-grams; as entries of a count vector (a 4-byte id
//! and an 8-byte count each) they were most of a data set's memory.

use super::hashed::{HASHED_BASE, HASHED_BUCKETS, sorted_buckets};
use super::{FeatureId, SparseVector};

/// Buckets share their high bits in groups of 2^16, so each is stored by its low 16 bits.
const GROUP_BITS: u32 = 16;
/// Number of groups: the bucket count over 2^16, at least one.
const GROUPS: usize = {
    let n = (HASHED_BUCKETS >> GROUP_BITS) as usize;
    if n == 0 { 1 } else { n }
};

/// A set of hash buckets (`0..HASHED_BUCKETS`), increasing. Each is kept as its low 16 bits,
/// grouped by the bits above them: two bytes a bucket, plus a fixed 16.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Buckets {
    /// Where each group's buckets end in `low`.
    ends: [u32; GROUPS],
    /// The low 16 bits of every bucket, group by group, each group increasing.
    low: Box<[u16]>,
}

impl Buckets {
    /// The distinct buckets of the hashed count ids among `ids` (repeats and ids that are not
    /// hashed are dropped).
    pub fn from_ids(ids: impl IntoIterator<Item = FeatureId>) -> Buckets {
        let mut buckets = sorted_buckets(ids);
        buckets.dedup();
        let mut ends = [0u32; GROUPS];
        for &b in &buckets {
            ends[(b >> GROUP_BITS) as usize] += 1;
        }
        for g in 1..GROUPS {
            ends[g] += ends[g - 1];
        }
        Buckets {
            ends,
            // Truncation keeps the low 16 bits, which is the point.
            low: buckets.iter().map(|&b| b as u16).collect(),
        }
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.low.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.low.is_empty()
    }

    /// The buckets, increasing.
    pub fn iter(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.groups()
            .flat_map(|(high, low)| low.iter().map(move |&l| high | u32::from(l)))
    }

    /// Calls `f` on each bucket, increasing: [`Buckets::iter`] as plain loops, for the
    /// solvers' passes.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(u32)) {
        for (high, low) in self.groups() {
            for &l in low {
                f(high | u32::from(l));
            }
        }
    }

    /// Each group's high bits and the low bits of its buckets.
    pub(crate) fn groups(&self) -> impl Iterator<Item = (u32, &[u16])> + Clone + '_ {
        let starts = std::iter::once(0).chain(self.ends);
        (0..GROUPS)
            .zip(starts.zip(self.ends))
            .map(|(g, (start, end))| {
                (
                    (g as u32) << GROUP_BITS,
                    &self.low[start as usize..end as usize],
                )
            })
    }

    /// `words` (a count vector without hashed ids) with these buckets' count ids added, each
    /// counted once.
    pub fn added_to(&self, words: &SparseVector) -> SparseVector {
        let mut ids = Vec::with_capacity(words.nnz() + self.len());
        ids.extend_from_slice(words.ids());
        ids.extend(self.iter().map(|b| HASHED_BASE + b));
        let mut values = Vec::with_capacity(ids.len());
        values.extend_from_slice(words.values());
        values.resize(ids.len(), 1.0);
        SparseVector::from_sorted(ids, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_each_hashed_id_once_in_order_in_every_group() {
        let picked = [
            HASHED_BUCKETS - 1,
            0,
            65_535,
            65_536,
            5,
            5,
            HASHED_BUCKETS - 2,
            65_537,
        ];
        let ids = picked
            .iter()
            .map(|&b| HASHED_BASE + b)
            .chain([3, 7]) // vocabulary ids: dropped
            .chain([HASHED_BASE + HASHED_BUCKETS]); // past the buckets: dropped
        let b = Buckets::from_ids(ids);
        let mut expected: Vec<u32> = picked.to_vec();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(b.iter().collect::<Vec<_>>(), expected);
        assert_eq!(b.len(), expected.len());
        assert!(Buckets::from_ids([1, 2]).is_empty());
        assert_eq!(Buckets::from_ids([]).iter().count(), 0);
        // Added to a row of words, they are its hashed entries, counted once.
        let words = SparseVector::from_pairs(vec![(1, 2.0), (4, 1.0)]);
        let row = b.added_to(&words);
        assert_eq!(row.vocabulary_ids(), [1, 4]);
        assert_eq!(row.nnz(), 2 + expected.len());
        assert!(row.iter().skip(2).all(|(_, v)| v == 1.0));
        assert_eq!(
            row.ids()[2..].to_vec(),
            expected
                .iter()
                .map(|&b| HASHED_BASE + b)
                .collect::<Vec<_>>()
        );
    }
}
