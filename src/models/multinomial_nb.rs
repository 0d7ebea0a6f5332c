//! Multinomial Naive Bayes, the event model where a message is a bag of token draws. With
//! c_ky the total (weighted) count of token k in class y and c_y = sum_k c_ky,
//! phi_ky = (c_ky + alpha) / (c_y + alpha |V|), and ln P(x, y) = ln P(y) + sum_k x_k ln phi_ky.
//!
//! The counts x may be raw term frequencies, presence (the Boolean multinomial NB that Metsis et
//! al. 2006 found best for spam), or any [`FeatureConfig`]. [`NbVariant::Complement`] is
//! Rennie et al. 2003's weight-normalized complement NB: each class is scored with the
//! parameters of its complement, normalized by their total magnitude; it is meant for
//! length-normalized tf-idf input and needs calibration for P(spam).

use super::ModelKind;
use super::check::{require_both_classes, require_positive};
use super::linear::LinearFunction;
use super::math::{log_prior_ratio, log_prior_ratio_so_far};
use crate::error::{Error, Result};
use crate::features::{Dataset, FeatureConfig, FeatureTransform, SparseVector};
use crate::label::Label;
use serde::{Deserialize, Serialize};

/// Which multinomial model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NbVariant {
    /// The textbook multinomial event model.
    Multinomial,
    /// Weight-normalized complement NB (Rennie et al. 2003).
    Complement,
}

/// Hyperparameters of [`MultinomialNb`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MultinomialNbParams {
    /// Additive smoothing; 1 is Laplace.
    pub alpha: f64,
    /// How token counts become the x_k of the model.
    pub features: FeatureConfig,
    /// Multinomial or complement.
    pub variant: NbVariant,
}

impl Default for MultinomialNbParams {
    /// Boolean multinomial NB, alpha = 0.01. Measured on the SpamAssassin corpus (5-fold,
    /// (1-AUC)%): presence 0.15 beat raw counts 0.34 and complement NB on tf-idf 0.18; alpha
    /// 0.01 beat 1 (0.45).
    fn default() -> Self {
        MultinomialNbParams {
            alpha: 0.01,
            features: FeatureConfig::BINARY,
            variant: NbVariant::Multinomial,
        }
    }
}

/// A fitted multinomial (or complement) Naive Bayes model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultinomialNb {
    /// The log-odds as a linear function of the features, cached from the counts. First, so a
    /// scorer can read it without decoding the rest (see `crate::scorer`).
    function: LinearFunction,
    alpha: f64,
    variant: NbVariant,
    class_counts: [f64; 2],
    /// c_ky per class (ham, spam).
    #[serde(with = "crate::packed::f64s")]
    counts_ham: Vec<f64>,
    #[serde(with = "crate::packed::f64s")]
    counts_spam: Vec<f64>,
}

impl MultinomialNbParams {
    /// Sums the weighted counts per class. Needs at least one message of each class.
    pub fn fit(&self, data: &Dataset) -> Result<MultinomialNb> {
        require_positive(ModelKind::MultinomialNb, "alpha", self.alpha)?;
        let class_counts = require_both_classes(ModelKind::MultinomialNb, data)?;
        let transform = self.features.fit(data);
        let mut counts = [vec![0.0; data.n_features], vec![0.0; data.n_features]];
        for (row, label) in data.rows.iter().zip(&data.labels) {
            for (id, v) in transform.apply(row).iter() {
                counts[label.index()][id as usize] += v;
            }
        }
        let [counts_ham, counts_spam] = counts;
        let mut model = MultinomialNb {
            alpha: self.alpha,
            variant: self.variant,
            class_counts,
            counts_ham,
            counts_spam,
            function: LinearFunction {
                transform,
                weights: Vec::new(),
                bias: 0.0,
            },
        };
        model.refresh();
        Ok(model)
    }
}

impl MultinomialNb {
    /// ln phi_ky for every k, for class `label`.
    fn log_phi(&self, label: Label) -> Vec<f64> {
        let counts = if label == Label::Spam {
            &self.counts_spam
        } else {
            &self.counts_ham
        };
        let v = counts.len() as f64;
        let total: f64 = counts.iter().sum();
        let denom = (total + self.alpha * v).ln();
        counts
            .iter()
            .map(|&c| (c + self.alpha).ln() - denom)
            .collect()
    }

    fn refresh(&mut self) {
        let (spam, ham) = (self.log_phi(Label::Spam), self.log_phi(Label::Ham));
        match self.variant {
            NbVariant::Multinomial => {
                self.function.weights = spam.iter().zip(&ham).map(|(s, h)| s - h).collect();
                self.function.bias = log_prior_ratio(self.class_counts);
            }
            NbVariant::Complement => {
                // Class y is scored with its complement's parameters; for two classes the
                // complement of spam is ham. Each is normalized by its total magnitude.
                let (norm_s, norm_h) = (ham.iter().sum::<f64>(), spam.iter().sum::<f64>());
                self.function.weights = spam
                    .iter()
                    .zip(&ham)
                    .map(|(s, h)| h / norm_s - s / norm_h)
                    .collect();
                self.function.bias = 0.0;
            }
        }
    }

    /// The decision function (log-odds for the multinomial variant).
    pub fn function(&self) -> &LinearFunction {
        &self.function
    }

    /// ln P(x, y) for each class (ham, spam) of the multinomial variant, from the formula.
    pub fn joint_log_likelihood(&self, counts: &SparseVector) -> [f64; 2] {
        let x = self.function.transform.apply(counts);
        let total = self.class_counts[0] + self.class_counts[1];
        let mut jll = [0.0; 2];
        for label in Label::ALL {
            let log_phi = self.log_phi(label);
            jll[label.index()] = (self.class_counts[label.index()] / total).ln()
                + x.iter()
                    .map(|(id, v)| v * log_phi.get(id as usize).copied().unwrap_or(0.0))
                    .sum::<f64>();
        }
        jll
    }

    /// Adds (`unlearn == false`) or removes one message's counts, exactly. Unlearning a
    /// message that was never learned is refused.
    pub fn learn(&mut self, counts: &SparseVector, label: Label, unlearn: bool) -> Result<()> {
        let x = self.function.transform.apply(counts);
        let width = x
            .ids()
            .last()
            .map_or(0, |&id| id as usize + 1)
            .max(self.counts_ham.len());
        self.counts_ham.resize(width, 0.0);
        self.counts_spam.resize(width, 0.0);
        let sign = if unlearn { -1.0 } else { 1.0 };
        let c = if label == Label::Spam {
            &mut self.counts_spam
        } else {
            &mut self.counts_ham
        };
        if unlearn
            && (self.class_counts[label.index()] < 2.0
                || x.iter().any(|(id, v)| c[id as usize] < v - 1e-9))
        {
            return Err(Error::Config(
                "cannot unlearn a message that was not learned".into(),
            ));
        }
        for (id, v) in x.iter() {
            c[id as usize] = (c[id as usize] + sign * v).max(0.0);
        }
        self.class_counts[label.index()] += sign;
        self.refresh();
        Ok(())
    }
}

/// The multinomial event model kept as counts, for learning one message at a time from
/// nothing (the TREC online protocol): [`MultinomialNb`]'s formula over every feature seen so
/// far, scored straight from the counts (O(|x|)) instead of through cached weights, which would
/// cost O(|V|) per message learned. The message's values (presence, by default) are the counts
/// under the parameters' feature weighting without fitted statistics (no idf); only the
/// multinomial variant is supported. Until both classes have messages the prior term is 0.
#[derive(Debug, Clone)]
pub struct OnlineMultinomialNb {
    alpha: f64,
    transform: FeatureTransform,
    class_counts: [u32; 2],
    /// c_ky per class, and their sums c_y.
    counts: [Vec<f64>; 2],
    totals: [f64; 2],
}

impl OnlineMultinomialNb {
    /// An empty model with these parameters.
    pub fn new(params: &MultinomialNbParams) -> Self {
        OnlineMultinomialNb {
            alpha: params.alpha,
            transform: FeatureTransform::unfitted(params.features),
            class_counts: [0; 2],
            counts: [Vec::new(), Vec::new()],
            totals: [0.0; 2],
        }
    }

    /// ln P(spam, x) - ln P(ham, x); features not seen in training yet are ignored.
    pub fn decision(&self, x: &SparseVector) -> f64 {
        let v = self.counts[0].len();
        let mut d = log_prior_ratio_so_far(self.class_counts);
        let values = self.transform.apply(x);
        for (id, value) in values.iter().filter(|&(id, _)| (id as usize) < v) {
            for label in Label::ALL {
                let y = label.index();
                let sign = if label == Label::Spam { 1.0 } else { -1.0 };
                let log_phi = (self.counts[y][id as usize] + self.alpha).ln()
                    - (self.totals[y] + self.alpha * v as f64).ln();
                d += sign * value * log_phi;
            }
        }
        d
    }

    /// Adds one message to class `label`.
    pub fn learn(&mut self, x: &SparseVector, label: Label) {
        let width = x.ids().last().map_or(0, |&id| id as usize + 1);
        for c in &mut self.counts {
            if c.len() < width {
                c.resize(width, 0.0);
            }
        }
        let y = label.index();
        for (id, value) in self.transform.apply(x).iter() {
            self.counts[y][id as usize] += value;
            self.totals[y] += value;
        }
        self.class_counts[y] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn online_counts_score_as_the_batch_model() {
        let data = Dataset {
            rows: vec![
                SparseVector::from_ids(vec![0, 2]),
                SparseVector::from_ids(vec![0, 0]),
                SparseVector::from_ids(vec![1, 2]),
            ],
            labels: vec![Label::Spam, Label::Spam, Label::Ham],
            n_features: 3,
        };
        for features in [FeatureConfig::BINARY, FeatureConfig::COUNTS] {
            let params = MultinomialNbParams {
                features,
                ..MultinomialNbParams::default()
            };
            let batch = params.fit(&data).unwrap();
            let mut online = OnlineMultinomialNb::new(&params);
            for (x, &label) in data.rows.iter().zip(&data.labels) {
                online.learn(x, label);
            }
            for ids in [vec![], vec![0], vec![1, 1], vec![0, 2]] {
                let x = SparseVector::from_ids(ids);
                let (a, b) = (batch.function().decision(&x), online.decision(&x));
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
            }
        }
    }

    /// Features: 0 free, 1 meeting, 2 money. Spam: free x2 + money, free; ham: meeting.
    fn data() -> Dataset {
        Dataset {
            rows: vec![
                SparseVector::from_ids(vec![0, 0, 2]),
                SparseVector::from_ids(vec![0]),
                SparseVector::from_ids(vec![1]),
            ],
            labels: vec![Label::Spam, Label::Spam, Label::Ham],
            n_features: 3,
        }
    }

    #[test]
    fn hand_computed_counts_example() {
        let params = MultinomialNbParams {
            alpha: 1.0,
            features: FeatureConfig::COUNTS,
            variant: NbVariant::Multinomial,
        };
        let model = params.fit(&data()).unwrap();
        // Spam counts free 3, meeting 0, money 1 (total 4): phi = 4/7, 1/7, 2/7.
        // Ham counts 0, 1, 0 (total 1): phi = 1/4, 2/4, 1/4. Priors 2/3, 1/3.
        let x = SparseVector::from_ids(vec![0, 2]);
        let jll = model.joint_log_likelihood(&x);
        assert!(
            (jll[Label::Spam.index()] - (2.0f64 / 3.0 * 4.0 / 7.0 * 2.0 / 7.0).ln()).abs() < 1e-12
        );
        assert!(
            (jll[Label::Ham.index()] - (1.0f64 / 3.0 * 1.0 / 4.0 * 1.0 / 4.0).ln()).abs() < 1e-12
        );
        assert!((model.function().decision(&x) - (jll[1] - jll[0])).abs() < 1e-12);
    }

    #[test]
    fn learn_then_unlearn_restores_the_exact_model() {
        let fitted = MultinomialNbParams::default().fit(&data()).unwrap();
        let mut model = fitted.clone();
        let x = SparseVector::from_ids(vec![1, 1, 2]);
        model.learn(&x, Label::Ham, false).unwrap();
        assert!(model.function().decision(&x) < fitted.function().decision(&x));
        model.learn(&x, Label::Ham, true).unwrap();
        assert_eq!(model, fitted);
    }

    #[test]
    fn complement_ranks_spam_words_up() {
        let params = MultinomialNbParams {
            variant: NbVariant::Complement,
            ..MultinomialNbParams::default()
        };
        let model = params.fit(&data()).unwrap();
        let spammy = model.function().decision(&SparseVector::from_ids(vec![0]));
        let hammy = model.function().decision(&SparseVector::from_ids(vec![1]));
        assert!(spammy > hammy, "{spammy} vs {hammy}");
    }
}
