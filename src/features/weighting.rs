//! Feature weighting: how a message's token counts become the values a model sees.

use super::{SparseVector, Vocabulary};
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

/// Weighting plus optional normalization: turns a count vector into model input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureConfig {
    /// How counts become values.
    pub weighting: Weighting,
    /// Scale each vector to unit Euclidean length.
    pub l2_normalize: bool,
}

impl FeatureConfig {
    /// Applies the weighting (and normalization) to a count vector.
    pub fn apply(&self, vocabulary: &Vocabulary, counts: &SparseVector) -> SparseVector {
        let mut x = counts.clone();
        match self.weighting {
            Weighting::Binary => x.map_values(|_, _| 1.0),
            Weighting::Counts => {}
            Weighting::LogTf => x.map_values(|_, tf| 1.0 + tf.ln()),
            Weighting::TfIdf => x.map_values(|id, tf| (1.0 + tf.ln()) * vocabulary.idf(id)),
        }
        if self.l2_normalize {
            x.l2_normalize();
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Label, VocabularyParams};

    #[test]
    fn weightings() {
        let doc: Vec<String> = vec!["a".into(), "b".into()];
        let vocab = VocabularyParams {
            min_df: 1,
            max_features: None,
        }
        .fit([(&doc[..], Label::Ham)]);
        let counts = SparseVector::from_ids(vec![0, 0, 0, 1]);
        let w = |weighting, l2_normalize| {
            FeatureConfig {
                weighting,
                l2_normalize,
            }
            .apply(&vocab, &counts)
        };
        assert_eq!(w(Weighting::Binary, false).values(), [1.0, 1.0]);
        assert_eq!(w(Weighting::Counts, false).values(), [3.0, 1.0]);
        assert_eq!(w(Weighting::LogTf, false).values(), [1.0 + 3f64.ln(), 1.0]);
        // idf = ln(2/2) + 1 = 1 for both tokens.
        assert_eq!(w(Weighting::TfIdf, false).values(), [1.0 + 3f64.ln(), 1.0]);
        let n = w(Weighting::Counts, true);
        assert!((n.values()[0] - 3.0 / 10f64.sqrt()).abs() < 1e-12);
    }
}
