//! Feature weighting: how a message's token counts become the values a model sees.

use super::hashed::{self, HASHED_BUCKETS};
use super::{Dataset, FeatureId, FeatureRemap, SparseVector};
use crate::model_file::packed::{Elements, Packed};
use serde::{Deserialize, Serialize};

/// Per-feature value from the token's count `tf` in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Weighting {
    /// 1 if present (set-of-words).
    Binary,
    /// The raw count.
    Counts,
    /// `1 + ln(tf)`: sublinear counts.
    LogTf,
    /// `(1 + ln(tf)) * idf`: sublinear tf-idf.
    TfIdf,
}

/// Weighting plus optional normalization: the recipe. [`FeatureConfig::fit`] turns it into a
/// [`FeatureTransform`] (idf learned from the training rows) that a model stores and applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureConfig {
    /// How counts become values.
    pub weighting: Weighting,
    /// Scale each vector to unit Euclidean length.
    pub l2_normalize: bool,
    /// The model sees the hashed features (byte 4-grams), in front of the vocabulary's (see
    /// [`super::hashed`]); without it they are dropped. A batch fit sees each present once
    /// (a [`Dataset`] keeps them by presence, see [`super::Row`]).
    // Absent from dumps of older versions, which had no hashed features.
    #[serde(default)]
    pub hashed: bool,
}

impl FeatureConfig {
    /// Raw counts, unnormalized: what the multinomial event model expects.
    pub const COUNTS: FeatureConfig = FeatureConfig {
        weighting: Weighting::Counts,
        l2_normalize: false,
        hashed: false,
    };
    /// Presence only: the multivariate Bernoulli model's view.
    pub const BINARY: FeatureConfig = FeatureConfig {
        weighting: Weighting::Binary,
        l2_normalize: false,
        hashed: false,
    };
    /// Sublinear tf-idf, unit length: the usual input of linear SVMs and logistic regression.
    pub const TF_IDF_L2: FeatureConfig = FeatureConfig {
        weighting: Weighting::TfIdf,
        l2_normalize: true,
        hashed: false,
    };
    /// Presence of every word and hashed byte 4-gram, unnormalized: the input of the online
    /// learners that start from nothing (Waterloo's binary features with a small fixed step)
    /// and of logistic regression's batch fit; L2-normalized, the SVM's.
    pub const BINARY_HASHED: FeatureConfig = FeatureConfig {
        weighting: Weighting::Binary,
        l2_normalize: false,
        hashed: true,
    };

    /// The width of the model input for count vectors over `n_features` vocabulary ids.
    pub fn input_width(&self, n_features: usize) -> usize {
        if self.hashed {
            n_features + HASHED_BUCKETS as usize
        } else {
            n_features
        }
    }

    /// Learns what the weighting needs from count rows (the idf table for tf-idf).
    pub fn fit(&self, data: &Dataset) -> FeatureTransform {
        let idf = match self.weighting {
            Weighting::TfIdf => {
                let mut df = vec![0u32; data.n_features];
                for row in &data.rows {
                    for &id in row.words().ids() {
                        df[id as usize] += 1;
                    }
                }
                let n = data.len() as f64;
                // Smoothed idf, ln((1 + N) / (1 + df)) + 1, as scikit-learn computes it.
                df.iter()
                    .map(|&d| ((1.0 + n) / (1.0 + f64::from(d))).ln() + 1.0)
                    .collect()
            }
            _ => Vec::new(),
        };
        FeatureTransform { config: *self, idf }
    }
}

/// A fitted [`FeatureConfig`]: turns count vectors into model input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureTransform {
    config: FeatureConfig,
    #[serde(with = "crate::model_file::packed::f64s")]
    idf: Vec<f64>,
}

impl FeatureTransform {
    /// This transform without its idf table (so every idf reads as 1): what a journal patch
    /// keeps of it, as learning never changes the idf (see `crate::filter::patch`).
    pub(crate) fn without_idf(&self) -> FeatureTransform {
        FeatureTransform::unfitted(self.config)
    }

    /// The transform of `config` fitted on no data (idf 1 throughout), for models that learn
    /// one message at a time from nothing.
    pub fn unfitted(config: FeatureConfig) -> FeatureTransform {
        FeatureTransform {
            config,
            idf: Vec::new(),
        }
    }

    /// The recipe this transform was fitted from.
    pub fn config(&self) -> FeatureConfig {
        self.config
    }

    /// Applies the weighting (and normalization) to a count vector, in the model's input ids
    /// (see [`super::hashed`]). Features beyond the idf table (added to the vocabulary after
    /// fitting, and hashed ones) get idf 1.
    pub fn apply(&self, counts: &SparseVector) -> SparseVector {
        weigh(self.config, &self.idf, counts)
    }

    /// The entries of [`FeatureTransform::apply`]'s vector, in order, mostly without building
    /// it (see [`weighed`]).
    pub(crate) fn weighed<'a>(
        &'a self,
        counts: &'a SparseVector,
    ) -> Weighed<impl Iterator<Item = (FeatureId, f64)> + Clone + 'a> {
        weighed(self.config, &self.idf, counts)
    }

    /// The idf table, by vocabulary id (empty unless the weighting is tf-idf and was fitted);
    /// features beyond it have idf 1.
    pub(crate) fn idf(&self) -> &[f64] {
        &self.idf
    }

    /// The idf table, to move out of and back into a model file.
    pub(crate) fn idf_mut(&mut self) -> &mut Vec<f64> {
        &mut self.idf
    }

    /// Back from a model input id to the count vector's id.
    pub fn count_id(&self, input_id: FeatureId) -> FeatureId {
        count_id(self.config, input_id)
    }

    /// Renumbers the idf table by `remap` (see [`FeatureRemap::apply`]).
    pub fn remap(&mut self, remap: &FeatureRemap) {
        remap.apply(&mut self.idf);
    }
}

/// A serialized [`FeatureTransform`], decoded only to step over it (its idf table borrowed,
/// not copied).
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct FeatureTransformView<'a> {
    _config: FeatureConfig,
    #[serde(borrow)]
    _idf: Packed<'a, f64>,
}

/// Every feature configuration: each weighting, normalized or not, with hashed features or
/// not (for tests that check a way of computing the input against `apply` under all).
#[cfg(test)]
pub(crate) fn every_config() -> impl Iterator<Item = FeatureConfig> {
    let weightings = [
        Weighting::Binary,
        Weighting::Counts,
        Weighting::LogTf,
        Weighting::TfIdf,
    ];
    weightings.into_iter().flat_map(|weighting| {
        [(false, false), (false, true), (true, false), (true, true)].map(
            |(l2_normalize, hashed)| FeatureConfig {
                weighting,
                l2_normalize,
                hashed,
            },
        )
    })
}

/// Back from a model input id to the count vector's id, for a model of this feature config.
pub(crate) fn count_id(config: FeatureConfig, input_id: FeatureId) -> FeatureId {
    if config.hashed {
        hashed::count_id(input_id)
    } else {
        input_id
    }
}

/// The transform of `config` with this idf table, owned or borrowed.
pub(crate) fn weigh(
    config: FeatureConfig,
    idf: &(impl Elements<f64> + ?Sized),
    counts: &SparseVector,
) -> SparseVector {
    let (ids, values) = weighted(config, idf, counts).unzip();
    let mut x = SparseVector::from_sorted(ids, values);
    if config.l2_normalize {
        x.l2_normalize();
    }
    x
}

/// The entries of [`weigh`]'s vector, (input id, value) in order, without building it where
/// that is exact and costs less: each value computed as it is read, the norm of an
/// L2-normalized one from a pass of its own (of a binary one, from its number of entries).
/// Where normalizing would compute each logarithm twice (`LogTf`, `TfIdf`), the vector is
/// built and read.
pub(crate) fn weighed<'a>(
    config: FeatureConfig,
    idf: &'a (impl Elements<f64> + ?Sized),
    counts: &'a SparseVector,
) -> Weighed<impl Iterator<Item = (FeatureId, f64)> + Clone + 'a> {
    if !config.l2_normalize {
        return Weighed::Read(weighted(config, idf, counts), None);
    }
    let squared_norm = match config.weighting {
        // Every value is 1, so the sum of their squares is their number (exact below 2^53,
        // as adding 1.0 that many times is).
        Weighting::Binary => weighted(config, idf, counts).count() as f64,
        Weighting::Counts => weighted(config, idf, counts).map(|(_, v)| v * v).sum(),
        Weighting::LogTf | Weighting::TfIdf => {
            return Weighed::Built(weigh(config, idf, counts).into_pairs());
        }
    };
    // As `SparseVector::l2_normalize` divides (a zero vector stays zero).
    let norm = squared_norm.sqrt();
    Weighed::Read(weighted(config, idf, counts), (norm > 0.0).then_some(norm))
}

/// The entries of a count vector weighted by `config`, not normalized, in the model's input
/// ids and order: with `hashed`, the buckets first and the vocabulary ids after them (see
/// [`super::hashed`]), else the vocabulary ids alone.
fn weighted<'a>(
    config: FeatureConfig,
    idf: &'a (impl Elements<f64> + ?Sized),
    counts: &'a SparseVector,
) -> impl ExactSizeIterator<Item = (FeatureId, f64)> + Clone + 'a {
    let words = counts.vocabulary_ids().len();
    let (word_ids, hashed_ids) = counts.ids().split_at(words);
    let (word_values, hashed_values) = counts.values().split_at(words);
    // Vocabulary ids start at `shift` in a hashed model's input; the idf table is the
    // vocabulary's, and hashed features have none (idf 1).
    let (hashed, shift) = if config.hashed {
        (hashed_ids.iter().zip(hashed_values), HASHED_BUCKETS)
    } else {
        (hashed_ids[..0].iter().zip(&hashed_values[..0]), 0)
    };
    let buckets = hashed.map(|(&id, &tf)| (id - hashed::HASHED_BASE, tf));
    let words = (word_ids.iter().zip(word_values)).map(move |(&id, &tf)| (id + shift, tf));
    let value = move |(id, tf): (FeatureId, f64)| {
        let v = match config.weighting {
            Weighting::Binary => 1.0,
            Weighting::Counts => tf,
            Weighting::LogTf => 1.0 + tf.ln(),
            Weighting::TfIdf => {
                let idf = id
                    .checked_sub(shift)
                    .and_then(|v| idf.at(v as usize))
                    .unwrap_or(1.0);
                (1.0 + tf.ln()) * idf
            }
        };
        (id, v)
    };
    ExactChain(buckets, words).map(value)
}

/// Two iterators one after the other, whose length is known ([`std::iter::Chain`] does not
/// say it, so a vector collected from it would grow by doubling).
#[derive(Clone)]
struct ExactChain<A, B>(A, B);

impl<A: ExactSizeIterator, B: ExactSizeIterator<Item = A::Item>> Iterator for ExactChain<A, B> {
    type Item = A::Item;

    fn next(&mut self) -> Option<A::Item> {
        self.0.next().or_else(|| self.1.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.len() + self.1.len();
        (n, Some(n))
    }

    fn fold<T, F: FnMut(T, A::Item) -> T>(self, init: T, mut f: F) -> T {
        let first = self.0.fold(init, &mut f);
        self.1.fold(first, f)
    }
}

impl<A: ExactSizeIterator, B: ExactSizeIterator<Item = A::Item>> ExactSizeIterator
    for ExactChain<A, B>
{
}

/// The entries [`weighed`] gives.
#[derive(Clone)]
pub(crate) enum Weighed<I> {
    /// Each value computed as it is read, then divided by the norm, if given.
    Read(I, Option<f64>),
    /// Read from the vector built.
    Built(std::iter::Zip<std::vec::IntoIter<FeatureId>, std::vec::IntoIter<f64>>),
}

impl<I: Iterator<Item = (FeatureId, f64)>> Iterator for Weighed<I> {
    type Item = (FeatureId, f64);

    fn next(&mut self) -> Option<(FeatureId, f64)> {
        match self {
            Weighed::Read(entries, None) => entries.next(),
            Weighed::Read(entries, Some(norm)) => entries.next().map(|(id, v)| (id, v / *norm)),
            Weighed::Built(entries) => entries.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Weighed::Read(entries, _) => entries.size_hint(),
            Weighed::Built(entries) => entries.size_hint(),
        }
    }

    // Sums and collections fold: each variant's own fold, not a match per entry.
    fn fold<T, F: FnMut(T, (FeatureId, f64)) -> T>(self, init: T, mut f: F) -> T {
        match self {
            Weighed::Read(entries, None) => entries.fold(init, f),
            Weighed::Read(entries, Some(norm)) => {
                entries.fold(init, |acc, (id, v)| f(acc, (id, v / norm)))
            }
            Weighed::Built(entries) => entries.fold(init, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Label;

    #[test]
    fn weightings() {
        let counts = SparseVector::from_ids(vec![0, 0, 0, 1]);
        let other = SparseVector::from_ids(vec![1]);
        let data = Dataset::new(vec![counts.clone(), other], vec![Label::Ham; 2], 2);
        let w = |weighting, l2_normalize| {
            FeatureConfig {
                weighting,
                l2_normalize,
                hashed: false,
            }
            .fit(&data)
            .apply(&counts)
        };
        assert_eq!(w(Weighting::Binary, false).values(), [1.0, 1.0]);
        assert_eq!(w(Weighting::Counts, false).values(), [3.0, 1.0]);
        assert_eq!(w(Weighting::LogTf, false).values(), [1.0 + 3f64.ln(), 1.0]);
        // idf(0) = ln(3/2) + 1 (in one of two rows), idf(1) = ln(3/3) + 1 = 1.
        let idf0 = 1.5f64.ln() + 1.0;
        assert_eq!(
            w(Weighting::TfIdf, false).values(),
            [(1.0 + 3f64.ln()) * idf0, 1.0]
        );
        let n = w(Weighting::Counts, true);
        assert!((n.values()[0] - 3.0 / 10f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn weighed_entries_are_those_of_the_weighed_vector_bit_for_bit() {
        let base = hashed::HASHED_BASE;
        let counts = SparseVector::from_pairs(vec![
            (0, 3.0),
            (2, 1.0),
            (5, 7.0),
            (base + 1, 2.0),
            (base + 9, 1.0),
        ]);
        let idf = [1.5, 2.0, 0.5, 1.0];
        for config in every_config() {
            for x in [&counts, &SparseVector::default()] {
                let built = weigh(config, &idf[..], x);
                let read: Vec<(FeatureId, f64)> = weighed(config, &idf[..], x).collect();
                let bits = |v: &[(FeatureId, f64)]| -> Vec<(FeatureId, u64)> {
                    v.iter().map(|&(id, v)| (id, v.to_bits())).collect()
                };
                assert_eq!(bits(&read), bits(&built.iter().collect::<Vec<_>>()));
                // Folded, as sums read them, too.
                let folded = weighed(config, &idf[..], x).fold(Vec::new(), |mut v, e| {
                    v.push(e);
                    v
                });
                assert_eq!(bits(&folded), bits(&read), "{config:?}");
            }
        }
    }

    #[test]
    fn hashed_features_go_first_or_nowhere() {
        let base = hashed::HASHED_BASE;
        let counts = SparseVector::from_pairs(vec![(1, 2.0), (base + 5, 3.0)]);
        let hashed = FeatureTransform::unfitted(FeatureConfig::BINARY_HASHED);
        let x = hashed.apply(&counts);
        assert_eq!(x.ids(), [5, HASHED_BUCKETS + 1]);
        assert_eq!(x.values(), [1.0, 1.0]);
        assert_eq!(hashed.count_id(5), base + 5);
        assert_eq!(hashed.count_id(HASHED_BUCKETS + 1), 1);
        let plain = FeatureTransform::unfitted(FeatureConfig::COUNTS).apply(&counts);
        assert_eq!(plain.ids(), [1]);
        assert_eq!(
            FeatureConfig::BINARY_HASHED.input_width(3),
            HASHED_BUCKETS as usize + 3
        );
    }
}
