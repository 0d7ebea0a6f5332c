//! A labeled set of count vectors, and seeded stratified fold splits.

use super::SparseVector;
use crate::label::Label;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::sync::Arc;

/// Count vectors with their labels. `n_features` is the vocabulary size they index into.
/// Rows are shared ([`Arc`]): a [`Dataset::subset`] (an internal fold's training rows) holds
/// its parent's rows instead of copies, so the folds of several models fitted at once cost
/// no more memory than the data they share.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// One count vector per message.
    pub rows: Vec<Arc<SparseVector>>,
    /// The label of each row.
    pub labels: Vec<Label>,
    /// Width of the feature space.
    pub n_features: usize,
}

impl Dataset {
    /// The data set of `rows` labeled `labels`, over `n_features` features.
    pub fn new(
        rows: impl IntoIterator<Item = SparseVector>,
        labels: Vec<Label>,
        n_features: usize,
    ) -> Dataset {
        Dataset {
            rows: rows.into_iter().map(Arc::new).collect(),
            labels,
            n_features,
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True if there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Number of rows labeled `label`.
    pub fn count(&self, label: Label) -> usize {
        self.labels.iter().filter(|&&l| l == label).count()
    }

    /// The rows at `indices`, in that order (shared with this data set, not copied).
    pub fn subset(&self, indices: &[usize]) -> Dataset {
        Dataset {
            rows: indices.iter().map(|&i| Arc::clone(&self.rows[i])).collect(),
            labels: indices.iter().map(|&i| self.labels[i]).collect(),
            n_features: self.n_features,
        }
    }
}

/// The indices of every fold but fold `k`, fold by fold: the training rows when fold `k` is
/// held out.
pub fn training_indices(folds: &[Vec<usize>], k: usize) -> Vec<usize> {
    folds
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != k)
        .flat_map(|(_, f)| f.iter().copied())
        .collect()
}

/// Splits row indices into `k` folds, each class spread evenly: every fold gets the same share
/// of spam and of ham (to within one message). Deterministic for a given seed (ChaCha8, whose
/// stream is fixed across platforms and versions). Each fold's indices are increasing.
pub fn stratified_folds(labels: &[Label], k: usize, seed: u64) -> Vec<Vec<usize>> {
    let k = k.max(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut folds = vec![Vec::new(); k];
    let mut next = 0;
    for label in Label::ALL {
        let mut idx: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == label).collect();
        idx.shuffle(&mut rng);
        for i in idx {
            folds[next % k].push(i);
            next += 1;
        }
    }
    for fold in &mut folds {
        fold.sort_unstable();
    }
    folds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subset_holds_its_parents_rows_not_copies() {
        let data = Dataset::new(
            (0..4).map(|i| SparseVector::from_ids(vec![i])),
            vec![Label::Spam, Label::Ham, Label::Spam, Label::Ham],
            4,
        );
        let part = data.subset(&[3, 1]);
        assert_eq!(part.labels, [Label::Ham, Label::Ham]);
        assert!(Arc::ptr_eq(&part.rows[0], &data.rows[3]));
        assert!(Arc::ptr_eq(&part.rows[1], &data.rows[1]));
    }

    #[test]
    fn folds_partition_and_stratify() {
        let labels: Vec<Label> = (0..103)
            .map(|i| if i % 3 == 0 { Label::Spam } else { Label::Ham })
            .collect();
        let folds = stratified_folds(&labels, 5, 42);
        let mut all: Vec<usize> = folds.concat();
        all.sort_unstable();
        assert_eq!(all, (0..103).collect::<Vec<_>>());
        for fold in &folds {
            let spam = fold.iter().filter(|&&i| labels[i] == Label::Spam).count();
            assert!((6..=7).contains(&spam), "spam per fold {spam}");
            assert!((20..=21).contains(&fold.len()));
        }
        assert_eq!(folds, stratified_folds(&labels, 5, 42));
        assert_ne!(folds, stratified_folds(&labels, 5, 43));
    }
}
