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

/// Back from a model input id to the count vector's id, for a model of this feature config.
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
    // Vocabulary ids start at `shift` in a hashed model's input; the idf table is the
    // vocabulary's, and hashed features have none (idf 1).
    let (mut x, shift) = if config.hashed {
        (counts.hashed_first(), HASHED_BUCKETS)
    } else {
        (counts.without_hashed().into_owned(), 0)
    };
    match config.weighting {
        Weighting::Binary => x.map_values(|_, _| 1.0),
        Weighting::Counts => {}
        Weighting::LogTf => x.map_values(|_, tf| 1.0 + tf.ln()),
        Weighting::TfIdf => x.map_values(|id, tf| {
            let idf = id
                .checked_sub(shift)
                .and_then(|v| idf.at(v as usize))
                .unwrap_or(1.0);
            (1.0 + tf.ln()) * idf
        }),
    }
    if config.l2_normalize {
        x.l2_normalize();
    }
    x
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
