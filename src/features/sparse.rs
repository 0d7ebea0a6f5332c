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
        ids.sort_unstable();
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
        self.iter()
            .map(|(id, v)| weights.at(id as usize).map_or(0.0, |w| w * v))
            .sum()
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
