//! A labeled set of count vectors, and seeded stratified fold splits.

use super::hashed::HASHED_BUCKETS;
use super::{Buckets, FeatureConfig, FeatureId, SparseVector, Weighting};
use crate::label::Label;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::borrow::Cow;
use std::sync::Arc;

/// One message's features as a data set holds them: the counts of its vocabulary ids, and the
/// hashed buckets it has, present or not (see [`Buckets`]: some 1,700 byte 4-grams a
/// message took twelve bytes each as count-vector entries, two here). A model weighs hashed
/// features by presence unless told otherwise; in a data set their repeats are not counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    words: SparseVector,
    buckets: Buckets,
}

impl Row {
    /// The row of a count vector: its hashed ids kept as buckets, each once.
    pub fn new(counts: SparseVector) -> Row {
        let words = counts.vocabulary_ids().len();
        if words == counts.nnz() {
            return Row {
                words: counts,
                buckets: Buckets::default(),
            };
        }
        Row {
            buckets: Buckets::from_ids(counts.ids()[words..].iter().copied()),
            // Copied at their exact size: the hashed entries' memory goes with `counts`.
            words: SparseVector::from_sorted(
                counts.ids()[..words].to_vec(),
                counts.values()[..words].to_vec(),
            ),
        }
    }

    /// The row of the counts `words` (of vocabulary ids only) and `buckets`.
    pub fn from_parts(words: SparseVector, buckets: Buckets) -> Row {
        debug_assert!(words.vocabulary_ids().len() == words.nnz());
        Row { words, buckets }
    }

    /// The counts of its vocabulary ids (no hashed ones).
    pub fn words(&self) -> &SparseVector {
        &self.words
    }

    /// Its hashed buckets.
    pub fn buckets(&self) -> &Buckets {
        &self.buckets
    }

    /// Its count vector as a model reads it: the words' counts, then, for a model that sees
    /// the hashed features, each bucket's count id counted once (borrowed when that adds
    /// nothing).
    pub fn counts(&self, hashed: bool) -> Cow<'_, SparseVector> {
        if !hashed || self.buckets.is_empty() {
            Cow::Borrowed(&self.words)
        } else {
            Cow::Owned(self.buckets.added_to(&self.words))
        }
    }

    /// The entries of `config`'s input of this row, that is of
    /// `config.fit(..).apply(&self.counts(config.hashed))`, entry for entry and bit for bit,
    /// without building it, where the weighting is binary (every value then is one number: 1,
    /// or 1 over the root of the number of entries when normalized, as
    /// [`SparseVector::l2_normalize`] makes it); `None` under any other weighting. In `apply`'s
    /// order: the buckets first if `config.hashed`, then the words past them. A solver's pass
    /// reads these in place of a copy of the row (some 1,700 entries of twelve bytes).
    pub(crate) fn binary_input(
        &self,
        config: FeatureConfig,
    ) -> Option<impl Iterator<Item = (FeatureId, f64)> + Clone + '_> {
        if config.weighting != Weighting::Binary {
            return None;
        }
        let hashed = config.hashed;
        let shift = if hashed { HASHED_BUCKETS } else { 0 };
        let n = self.words.nnz() + if hashed { self.buckets.len() } else { 0 };
        let buckets = hashed.then(|| self.buckets.iter()).into_iter().flatten();
        let value = if config.l2_normalize && n > 0 {
            1.0 / (n as f64).sqrt()
        } else {
            1.0
        };
        let words = self.words.ids().iter().map(move |&id| id + shift);
        Some(buckets.chain(words).map(move |id| (id, value)))
    }
}

/// Count rows with their labels. `n_features` is the vocabulary size they index into.
/// Rows are shared ([`Arc`]): a [`Dataset::subset`] (an internal fold's training rows) holds
/// its parent's rows instead of copies, so the folds of several models fitted at once cost
/// no more memory than the data they share.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// One row per message.
    pub rows: Vec<Arc<Row>>,
    /// The label of each row.
    pub labels: Vec<Label>,
    /// Width of the feature space.
    pub n_features: usize,
}

impl Dataset {
    /// The data set of the count vectors `rows` (see [`Row::new`]) labeled `labels`, over
    /// `n_features` features.
    pub fn new(
        rows: impl IntoIterator<Item = SparseVector>,
        labels: Vec<Label>,
        n_features: usize,
    ) -> Dataset {
        Dataset {
            rows: rows.into_iter().map(|r| Arc::new(Row::new(r))).collect(),
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
    fn a_row_keeps_its_hashed_ids_as_buckets_counted_once() {
        let base = crate::features::hashed::HASHED_BASE;
        let counts =
            SparseVector::from_pairs(vec![(0, 2.0), (5, 1.0), (base + 9, 3.0), (base, 1.0)]);
        let row = Row::new(counts);
        assert_eq!(row.words().ids(), [0, 5]);
        assert_eq!(row.buckets().iter().collect::<Vec<_>>(), [0, 9]);
        assert_eq!(
            row.counts(true).iter().collect::<Vec<_>>(),
            [(0, 2.0), (5, 1.0), (base, 1.0), (base + 9, 1.0)]
        );
        assert_eq!(*row.counts(false), *row.words());
        let plain = Row::new(SparseVector::from_ids(vec![1, 1]));
        assert!(matches!(plain.counts(true), Cow::Borrowed(_)));
    }

    /// A row's binary input is `apply`'s, bit for bit, under every binary config; `None`
    /// under the others.
    #[test]
    fn a_rows_binary_input_is_the_applied_counts() {
        let base = crate::features::hashed::HASHED_BASE;
        let rows = [
            (1..40).map(|i| (i, f64::from(i % 4 + 1))).collect(),
            vec![
                (0, 2.0),
                (5, 1.0),
                (base + 9, 3.0),
                (base, 1.0),
                (base + 70_000, 1.0),
            ],
            vec![(base + 3, 1.0)],
            vec![],
        ];
        let data = Dataset::new(rows.map(SparseVector::from_pairs), vec![Label::Ham; 4], 40);
        for config in crate::features::weighting::every_config() {
            let hashed = config.hashed;
            let transform = config.fit(&data);
            for row in &data.rows {
                let input = row.binary_input(config).map(Iterator::collect::<Vec<_>>);
                let applied = transform.apply(&row.counts(hashed));
                let expected = applied.iter().map(|(id, v)| (id, v.to_bits()));
                let bits = |x: Vec<(FeatureId, f64)>| {
                    x.into_iter()
                        .map(|(id, v)| (id, v.to_bits()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(
                    input.map(bits),
                    (config.weighting == Weighting::Binary).then(|| expected.collect()),
                    "{config:?}"
                );
            }
        }
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
