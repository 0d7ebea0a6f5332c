//! Sparse vectors: strictly increasing feature ids with their values.

use super::FeatureId;
use crate::model_file::packed::Elements;

/// A sparse row. Invariant: `ids` strictly increasing, `ids.len() == values.len()`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseVector {
    ids: Vec<FeatureId>,
    values: Vec<f64>,
}

impl SparseVector {
    /// Counts the ids in an unsorted list with repeats: the bag-of-words count vector.
    pub fn from_ids(mut ids: Vec<FeatureId>) -> Self {
        sort_ids(&mut ids);
        let mut out = SparseVector::default();
        out.push_counted(&ids);
        out
    }

    /// Appends the count vector of `sorted` (ascending ids, repeats counted: each id once,
    /// valued its number of repeats), whose ids all exceed this vector's. The storage grows
    /// once, to its size: grown by doubling, each size passed through is more memory to
    /// allocate and copy (and, in a short-lived `filter`, fresh pages to fault in).
    ///
    /// Without a branch on the ids: a message's hashed 4-grams are thousands of short runs of
    /// random length, on which a comparison's branch mispredicts (a loop over `chunk_by` was
    /// a tenth of `classify`'s time).
    pub(crate) fn push_counted(&mut self, sorted: &[FeatureId]) {
        debug_assert!(sorted.is_sorted());
        debug_assert!(
            self.ids
                .last()
                .zip(sorted.first())
                .is_none_or(|(a, b)| a < b)
        );
        let Some(&last) = sorted.last() else {
            return;
        };
        let differs = |w: &[FeatureId]| usize::from(w[0] != w[1]);
        let distinct = 1 + sorted.windows(2).map(differs).sum::<usize>();
        let start = self.ids.len();
        self.ids.reserve_exact(distinct);
        self.values.reserve_exact(distinct);
        self.ids.resize(start + distinct, 0);
        self.values.resize(start + distinct, 0.0);
        let (ids, ends) = (&mut self.ids[start..], &mut self.values[start..]);
        // Every id is written to its run's slot with the position after it; the slot moves
        // on after a run's last id, so each slot ends with its run's id and end.
        let mut k = 0;
        for (i, w) in sorted.windows(2).enumerate() {
            ids[k] = w[0];
            ends[k] = (i + 1) as f64;
            k += differs(w);
        }
        ids[k] = last;
        ends[k] = sorted.len() as f64;
        // A run's count is its end less the one before it. Counts and ends are far below
        // 2^53, so exact: the same numbers adding 1.0 per repeat gives.
        let mut before = 0.0;
        for end in ends {
            (before, *end) = (*end, *end - before);
        }
    }

    /// Builds a vector from (id, value) pairs; pairs are sorted, repeated ids summed and zeros
    /// dropped.
    pub fn from_pairs(mut pairs: Vec<(FeatureId, f64)>) -> Self {
        pairs.sort_unstable_by_key(|&(id, _)| id);
        // Sized once: training holds thousands of these at a time.
        let mut out = SparseVector {
            ids: Vec::with_capacity(pairs.len()),
            values: Vec::with_capacity(pairs.len()),
        };
        for (id, v) in pairs {
            if out.ids.last() == Some(&id) {
                *out.values.last_mut().expect("values track ids") += v;
            } else {
                out.ids.push(id);
                out.values.push(v);
            }
        }
        out.retain(|_, v| v != 0.0);
        out
    }

    /// A vector of ids already strictly increasing with their values.
    pub(crate) fn from_sorted(ids: Vec<FeatureId>, values: Vec<f64>) -> Self {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]) && ids.len() == values.len());
        SparseVector { ids, values }
    }

    /// The ids and the values, taken apart.
    pub(crate) fn into_pairs(
        self,
    ) -> std::iter::Zip<std::vec::IntoIter<FeatureId>, std::vec::IntoIter<f64>> {
        self.ids.into_iter().zip(self.values)
    }

    /// Feature ids, increasing.
    pub fn ids(&self) -> &[FeatureId] {
        &self.ids
    }

    /// Values, aligned with [`Self::ids`].
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// (id, value) pairs in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (FeatureId, f64)> + Clone + '_ {
        self.ids.iter().copied().zip(self.values.iter().copied())
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.ids.len()
    }

    /// True if no entry is stored.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Dot product with a dense weight vector; ids beyond its length count as zero.
    pub fn dot(&self, weights: &[f64]) -> f64 {
        self.dot_with(weights)
    }

    /// [`SparseVector::dot`] with weights owned or borrowed as packed bytes.
    pub(crate) fn dot_with(&self, weights: &(impl Elements<f64> + ?Sized)) -> f64 {
        dot(self.iter(), weights)
    }

    /// Squared Euclidean norm.
    pub fn squared_norm(&self) -> f64 {
        self.values.iter().map(|v| v * v).sum()
    }

    /// Replaces every value by `f(id, value)`.
    pub fn map_values(&mut self, mut f: impl FnMut(FeatureId, f64) -> f64) {
        for (id, v) in self.ids.iter().zip(self.values.iter_mut()) {
            *v = f(*id, *v);
        }
    }

    /// Keeps only entries for which `keep(id, value)` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(FeatureId, f64) -> bool) {
        let mut w = 0;
        for r in 0..self.ids.len() {
            if keep(self.ids[r], self.values[r]) {
                self.ids[w] = self.ids[r];
                self.values[w] = self.values[r];
                w += 1;
            }
        }
        self.ids.truncate(w);
        self.values.truncate(w);
    }

    /// Scales the vector to unit Euclidean length (a zero vector stays zero).
    pub fn l2_normalize(&mut self) {
        let norm = self.squared_norm().sqrt();
        if norm > 0.0 {
            self.map_values(|_, v| v / norm);
        }
    }
}

/// Sorts `ids` ascending. A message's few hundred word ids or few thousand hashed ones sort
/// several times faster by radix passes than by comparisons: least significant digit first,
/// over the bits the largest id uses (two passes below 2^22). A list too short to repay a
/// pass's counting is sorted by comparisons.
pub(crate) fn sort_ids(ids: &mut Vec<FeatureId>) {
    if ids.len() < 64 {
        ids.sort_unstable();
        return;
    }
    let bits = u32::BITS - ids.iter().copied().max().unwrap_or(0).leading_zeros();
    // Digits of a width known when compiled: a pass costs less.
    match bits {
        0 => {}
        1..=16 => radix_passes::<{ 1 << 8 }>(ids, 2),
        17..=18 => radix_passes::<{ 1 << 9 }>(ids, 2),
        19..=22 => radix_passes::<{ 1 << 11 }>(ids, 2),
        _ => radix_passes::<{ 1 << 11 }>(ids, 3),
    }
}

/// Sorts `ids` (all below `RADIX^passes`, `RADIX` a power of two) by `passes` counting
/// passes over their digits in base `RADIX`, least significant first.
fn radix_passes<const RADIX: usize>(ids: &mut Vec<FeatureId>, passes: u32) {
    let mut sorted = vec![0; ids.len()];
    for pass in 0..passes {
        let shift = pass * RADIX.trailing_zeros();
        let digit = |id: FeatureId| (id >> shift) as usize & (RADIX - 1);
        let mut starts = [0u32; RADIX];
        for &id in ids.iter() {
            starts[digit(id)] += 1;
        }
        let mut sum = 0;
        for s in &mut starts {
            (*s, sum) = (sum, sum + *s);
        }
        for &id in ids.iter() {
            let start = &mut starts[digit(id)];
            sorted[*start as usize] = id;
            *start += 1;
        }
        std::mem::swap(ids, &mut sorted);
    }
}

/// The dot product of (id, value) entries with weights by id; ids beyond the weights count
/// as zero. Summed in the entries' order, so the same entries give the same bits however
/// they are held.
pub(crate) fn dot(
    entries: impl Iterator<Item = (FeatureId, f64)>,
    weights: &(impl Elements<f64> + ?Sized),
) -> f64 {
    entries
        .map(|(id, v)| weights.at(id as usize).map_or(0.0, |w| w * v))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sorted_and_dot() {
        let v = SparseVector::from_ids(vec![5, 1, 5, 3, 5]);
        assert_eq!(v.ids(), [1, 3, 5]);
        assert_eq!(v.values(), [1.0, 1.0, 3.0]);
        assert_eq!(v.dot(&[0.0, 2.0, 0.0, 1.0]), 3.0);
        let mut n = v.clone();
        n.l2_normalize();
        assert!((n.squared_norm() - 1.0).abs() < 1e-12);
        let p = SparseVector::from_pairs(vec![(4, 1.0), (2, 0.5), (4, -1.0)]);
        assert_eq!((p.ids(), p.values()), (&[2][..], &[0.5][..]));
    }

    proptest::proptest! {
        #[test]
        fn radix_sorting_sorts_as_comparisons_do(
            ids in proptest::collection::vec(proptest::prop_oneof![0u32..300, 0u32..70_000, 0u32..(1 << 20), proptest::num::u32::ANY], 0..3000),
        ) {
            let mut expected = ids.clone();
            expected.sort_unstable();
            let mut sorted = ids;
            sort_ids(&mut sorted);
            proptest::prop_assert_eq!(sorted, expected);
        }

        #[test]
        fn ids_are_counted_once_each_and_appended(
            ids in proptest::collection::vec(0u32..50, 0..200),
            more in proptest::collection::vec(50u32..80, 0..100),
        ) {
            let mut counts = std::collections::BTreeMap::new();
            for &id in ids.iter().chain(&more) {
                *counts.entry(id).or_insert(0.0) += 1.0;
            }
            let mut v = SparseVector::from_ids(ids);
            let mut more = more;
            more.sort_unstable();
            v.push_counted(&more);
            proptest::prop_assert!(v.ids().iter().copied().eq(counts.keys().copied()));
            proptest::prop_assert!(v.values().iter().copied().eq(counts.values().copied()));
        }
    }
}
