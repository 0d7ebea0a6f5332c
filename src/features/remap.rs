//! [`FeatureRemap`]: the one renumbering of feature ids that pruning applies to everything
//! indexed by id (the vocabulary's tables, every model's arrays, the count of trained
//! features), so they all stay aligned.

use super::{FeatureId, SparseVector};

/// Which features survive a pruning. Kept features keep their order and are renumbered
/// `0..kept()`: old id `i` becomes the number of kept ids below `i`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureRemap {
    /// For each old id `i`, and the end: the number of kept ids below it (so `i` is kept if
    /// the next entry is larger, and this is its new id).
    kept_before: Vec<FeatureId>,
}

impl FeatureRemap {
    /// The remap that keeps the features whose `keep` entry is true (one entry per old id).
    pub fn new(keep: &[bool]) -> FeatureRemap {
        let mut kept: FeatureId = 0;
        let mut kept_before = Vec::with_capacity(keep.len() + 1);
        kept_before.push(0);
        kept_before.extend(keep.iter().map(|&k| {
            kept += FeatureId::from(k);
            kept
        }));
        FeatureRemap { kept_before }
    }

    /// Number of features kept.
    pub fn kept(&self) -> usize {
        self.kept_below(usize::MAX)
    }

    /// Number of features dropped.
    pub fn dropped(&self) -> usize {
        self.kept_before.len() - 1 - self.kept()
    }

    /// The new id of old id `id`, or `None` if it is dropped (or beyond the remap).
    pub fn new_id(&self, id: FeatureId) -> Option<FeatureId> {
        let i = id as usize;
        match self.kept_before.get(i..i.saturating_add(2))? {
            &[before, after] if after > before => Some(before),
            _ => None,
        }
    }

    /// How many of the old ids `0..n` are kept: the new length of an array that covered them.
    pub fn kept_below(&self, n: usize) -> usize {
        let end = n.min(self.kept_before.len() - 1);
        self.kept_before[end] as usize
    }

    /// Drops the entries of an array indexed by old id whose feature is dropped, so it is
    /// indexed by new id. An array shorter than the remap (features added after it was sized
    /// weigh a default) stays correspondingly shorter; entries beyond the remap are dropped.
    pub fn apply<T>(&self, values: &mut Vec<T>) {
        let mut i = 0;
        values.retain(|_| {
            i += 1;
            self.new_id((i - 1) as FeatureId).is_some()
        });
    }

    /// A count vector over the new ids: dropped features' entries removed.
    pub fn vector(&self, x: &SparseVector) -> SparseVector {
        SparseVector::from_pairs(
            x.iter()
                .filter_map(|(id, v)| Some((self.new_id(id)?, v)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_ids_are_renumbered_in_order_and_arrays_follow() {
        let r = FeatureRemap::new(&[true, false, true, false, true]);
        assert_eq!((r.kept(), r.dropped()), (3, 2));
        assert_eq!(
            (0..6).map(|i| r.new_id(i)).collect::<Vec<_>>(),
            [Some(0), None, Some(1), None, Some(2), None]
        );
        let mut full = vec!['a', 'b', 'c', 'd', 'e'];
        r.apply(&mut full);
        assert_eq!(full, ['a', 'c', 'e']);
        let mut short = vec!['a', 'b', 'c'];
        r.apply(&mut short);
        assert_eq!((short, r.kept_below(3)), (vec!['a', 'c'], 2));
        let x = r.vector(&SparseVector::from_ids(vec![1, 2, 2, 4]));
        assert_eq!((x.ids(), x.values()), (&[1, 2][..], &[2.0, 1.0][..]));
    }
}
