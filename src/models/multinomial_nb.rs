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
use super::math::{gather_held, log_prior_ratio_so_far, overlay};
use super::nb_scoring::NbScoring;
use crate::error::{Error, Result};
use crate::features::{Dataset, FeatureConfig, FeatureId, FeatureRemap, SparseVector};
use crate::label::Label;
use crate::model_file::packed::{Elements, Packed};
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
    /// How a message is scored from the token weights (see [`NbScoring`]; the complement
    /// variant's weights are not shrunk or clipped, only selected and combined).
    #[serde(default = "NbScoring::textbook")]
    pub scoring: NbScoring,
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
            scoring: NbScoring::default(),
        }
    }
}

/// A fitted multinomial (or complement) Naive Bayes model, kept as counts so it learns and
/// unlearns exactly and grows with the vocabulary. The multinomial variant scores from the
/// counts in O(|x|) and learns in O(|x|); its cached [`LinearFunction`] (what a scorer borrows
/// from the model file) is brought up to date by [`MultinomialNb::refresh`] (at fit time and
/// before a save) with the same arithmetic, so it gives bit-identical decisions. The
/// complement variant's weights all depend on global norms: it refreshes on every learn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultinomialNb {
    /// The log-odds as a linear function of the features, cached from the counts. First, so a
    /// scorer can read it without decoding the rest (see `crate::filter::scorer`).
    function: LinearFunction,
    /// How a message is scored from the weights: second, so a scorer reads it too.
    #[serde(default = "NbScoring::textbook")]
    scoring: NbScoring,
    alpha: f64,
    variant: NbVariant,
    class_counts: [f64; 2],
    /// c_ky per class (ham, spam).
    #[serde(with = "crate::model_file::packed::f64s")]
    counts_ham: Vec<f64>,
    #[serde(with = "crate::model_file::packed::f64s")]
    counts_spam: Vec<f64>,
    /// c_y = sum_k c_ky per class (ham, spam), kept as the counts change.
    totals: [f64; 2],
    /// The counts changed since the cached function was last refreshed (never true in a
    /// loaded or fitted model).
    #[serde(skip)]
    stale: bool,
    /// Features left out by [`MultinomialNbSection::restricted`] that still count in |V| (0 but in a
    /// scorer's restricted copy; never saved).
    #[serde(skip)]
    features_elsewhere: usize,
}

/// A serialized [`MultinomialNb`] (the same fields in the same order) with its per-feature
/// counts borrowed where they lie, for [`MultinomialNbSection::restricted`].
#[derive(Debug, Deserialize)]
pub(crate) struct MultinomialNbSection<'a> {
    function: LinearFunction,
    scoring: NbScoring,
    alpha: f64,
    variant: NbVariant,
    class_counts: [f64; 2],
    #[serde(borrow)]
    counts_ham: Packed<'a, f64>,
    #[serde(borrow)]
    counts_spam: Packed<'a, f64>,
    totals: [f64; 2],
}

impl MultinomialNbSection<'_> {
    /// The number of features it holds counts for.
    pub fn width(&self) -> usize {
        self.counts_ham.len()
    }

    /// The model with the counts of the features `ids` alone (ascending), renumbered
    /// `0..ids.len()` in that order, and what depends on every feature (class totals, |V|):
    /// a message whose features are among `ids`, or new ones numbered after them, scores,
    /// learns and unlearns in it bit for bit as in the whole model, if that covered the whole
    /// vocabulary (so that new features are numbered after it in both). `None` for the
    /// complement variant, whose every learn reads every feature. `width` is the number of
    /// features the whole model holds counts for (the section's, or the score table's where
    /// that holds them). Its cached function is the section's, and where the score table
    /// holds the counts (the section's are empty) so are its counts: the caller gives it the
    /// same features' weights and counts.
    pub fn restricted(self, ids: &[FeatureId], width: usize) -> Option<MultinomialNb> {
        if self.variant == NbVariant::Complement {
            return None;
        }
        let features_elsewhere = width.saturating_sub(ids.len());
        Some(MultinomialNb {
            function: self.function,
            scoring: self.scoring,
            alpha: self.alpha,
            variant: self.variant,
            class_counts: self.class_counts,
            counts_ham: gather_held(&self.counts_ham, ids),
            counts_spam: gather_held(&self.counts_spam, ids),
            totals: self.totals,
            stale: false,
            features_elsewhere,
        })
    }
}

impl MultinomialNb {
    /// Whether this is the complement variant (whose weights depend on every feature).
    pub(crate) fn is_complement(&self) -> bool {
        self.variant == NbVariant::Complement
    }

    /// Takes into this restricted model (see [`MultinomialNbSection::restricted`]) what
    /// `from`, the same model restricted to other features and since changed by learning,
    /// holds: the counts of its features `theirs` as this one's `ours` for each
    /// `(theirs, ours)` of `pairs`, and everything that depends on every feature (message
    /// counts, class totals); `features` is how many features the whole model now counts
    /// (|V|). The counts are what the decision reads from now on: the cached function is
    /// stale (and `from`'s is not read).
    pub(crate) fn overlay(
        &mut self,
        from: &MultinomialNb,
        pairs: &[(usize, usize)],
        features: usize,
    ) {
        overlay(&mut self.counts_ham, &from.counts_ham, pairs, 0.0);
        overlay(&mut self.counts_spam, &from.counts_spam, pairs, 0.0);
        self.class_counts = from.class_counts;
        self.totals = from.totals;
        self.stale = true;
        self.features_elsewhere = features.saturating_sub(self.counts_ham.len());
    }
}

impl MultinomialNbParams {
    /// Sums the weighted counts per class. Needs at least one message of each class.
    pub fn fit(&self, data: &Dataset) -> Result<MultinomialNb> {
        require_positive(ModelKind::MultinomialNb, "alpha", self.alpha)?;
        self.scoring.check(ModelKind::MultinomialNb)?;
        let class_counts = require_both_classes(ModelKind::MultinomialNb, data)?;
        let transform = self.features.fit(data);
        let mut counts = [vec![0.0; data.n_features], vec![0.0; data.n_features]];
        for (row, label) in data.rows.iter().zip(&data.labels) {
            for (id, v) in transform.apply(row.words()).iter() {
                counts[label.index()][id as usize] += v;
            }
        }
        let totals = [counts[0].iter().sum(), counts[1].iter().sum()];
        let [counts_ham, counts_spam] = counts;
        let mut model = MultinomialNb {
            scoring: self.scoring,
            alpha: self.alpha,
            variant: self.variant,
            class_counts,
            counts_ham,
            counts_spam,
            totals,
            stale: false,
            features_elsewhere: 0,
            function: LinearFunction::new(transform, Vec::new(), 0.0),
        };
        model.refresh();
        Ok(model)
    }

    /// A model that has learned nothing (every decision 0 until it learns), for a filter that
    /// starts from nothing; the feature weighting has no fitted statistics (idf 1). Fails on
    /// invalid parameters.
    pub fn empty(&self) -> Result<MultinomialNb> {
        require_positive(ModelKind::MultinomialNb, "alpha", self.alpha)?;
        self.scoring.check(ModelKind::MultinomialNb)?;
        Ok(MultinomialNb {
            scoring: self.scoring,
            alpha: self.alpha,
            variant: self.variant,
            class_counts: [0.0; 2],
            counts_ham: Vec::new(),
            counts_spam: Vec::new(),
            totals: [0.0; 2],
            stale: false,
            features_elsewhere: 0,
            function: LinearFunction::zero(self.features),
        })
    }
}

impl MultinomialNb {
    fn class(&self, label: Label) -> &[f64] {
        match label {
            Label::Ham => &self.counts_ham,
            Label::Spam => &self.counts_spam,
        }
    }

    /// ln(c_y + alpha |V|), the normalizer of phi_ky.
    fn log_denominator(&self, label: Label) -> f64 {
        let features = self.counts_ham.len() + self.features_elsewhere;
        (self.totals[label.index()] + self.alpha * features as f64).ln()
    }

    /// ln phi_ky for every k, for class `label`.
    fn log_phi(&self, label: Label) -> Vec<f64> {
        let denom = self.log_denominator(label);
        self.class(label)
            .iter()
            .map(|&c| (c + self.alpha).ln() - denom)
            .collect()
    }

    /// The multinomial variant's weight of feature k, given both classes' normalizers: its
    /// textbook log-ratio as [`NbScoring::token_weight`] shrinks and clips it.
    fn weight(&self, k: usize, denominators: [f64; 2]) -> Option<f64> {
        let (s, h) = (self.counts_spam.get(k)?, self.counts_ham.get(k)?);
        let log_ratio = ((s + self.alpha).ln() - denominators[Label::Spam.index()])
            - ((h + self.alpha).ln() - denominators[Label::Ham.index()]);
        Some(self.scoring.token_weight(log_ratio, s + h))
    }

    fn denominators(&self) -> [f64; 2] {
        [Label::Ham, Label::Spam].map(|l| self.log_denominator(l))
    }

    /// Recomputes the cached decision function from the counts: O(|V|).
    pub fn refresh(&mut self) {
        match self.variant {
            NbVariant::Multinomial => {
                let d = self.denominators();
                self.function.weights = (0..self.counts_ham.len())
                    .map(|k| self.weight(k, d).unwrap_or(0.0))
                    .collect();
                self.function.bias = log_prior_ratio_so_far(self.class_counts);
            }
            NbVariant::Complement => {
                let (spam, ham) = (self.log_phi(Label::Spam), self.log_phi(Label::Ham));
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
        self.stale = false;
    }

    /// The decision function as last refreshed (at fit, load, or [`MultinomialNb::refresh`]).
    pub fn function(&self) -> &LinearFunction {
        &self.function
    }

    /// The decision function, to move its vocabulary arrays out of and back into a model file
    /// (see `crate::filter::score_table`).
    pub(crate) fn function_mut(&mut self) -> &mut LinearFunction {
        &mut self.function
    }

    /// The per-feature counts c_ky (ham, spam), to move them out of and back into a model
    /// file (see `crate::filter::score_table`).
    pub(crate) fn counts_mut(&mut self) -> [&mut Vec<f64>; 2] {
        [&mut self.counts_ham, &mut self.counts_spam]
    }

    /// How a message is scored from the weights.
    pub fn scoring(&self) -> NbScoring {
        self.scoring
    }

    /// Refuses values no learning makes (see [`super::check::nb_values`]).
    pub(crate) fn check_values(&self) -> std::result::Result<(), String> {
        let counts = [&self.totals[..], &self.counts_ham, &self.counts_spam];
        super::check::nb_values(
            ModelKind::MultinomialNb,
            self.alpha,
            &self.class_counts,
            &counts,
        )
    }

    /// The decision value in O(|x|) (the log-odds for the multinomial variant under
    /// [`NbScoring::TEXTBOOK`], else the model's [`NbScoring`] of it): by the cached function
    /// while it is fresh, else from the counts, which give the refreshed function's value bit
    /// for bit. Hashed entries of `counts` are not its features: they are not read.
    pub fn decision(&self, counts: &SparseVector) -> f64 {
        if self.reads_function() {
            let terms = self.function.terms(counts).map(|(_, t)| t);
            if let Some(d) = self.scoring.decision(self.function.bias, terms) {
                return d;
            }
        }
        let (mut terms, bias) = self.terms(counts);
        self.scoring.combine(bias, &mut terms)
    }

    /// Whether a message's terms come from the counts rather than the cached function: the
    /// multinomial variant's while the function is stale (the complement variant's weights
    /// depend on every feature's counts, so it always reads the function).
    fn computes_weights(&self) -> bool {
        self.variant == NbVariant::Multinomial && self.stale
    }

    /// Whether [`MultinomialNb::decision`] combines the cached function's terms.
    pub(crate) fn reads_function(&self) -> bool {
        !self.computes_weights()
    }

    /// Each present feature's share of [`MultinomialNb::decision`] (0 for a token the scoring
    /// leaves out), and its constant term. Hashed entries of `counts` are not read.
    pub fn contributions(&self, counts: &SparseVector) -> (Vec<(FeatureId, f64)>, f64) {
        let (mut terms, bias) = self.terms(counts);
        self.scoring.combine(bias, &mut terms);
        (terms, bias)
    }

    /// Each present feature's term (weight times value), before selection, and the constant
    /// term.
    fn terms(&self, counts: &SparseVector) -> (Vec<(FeatureId, f64)>, f64) {
        if !self.computes_weights() {
            return (self.function.contributions(counts), self.function.bias);
        }
        let d = self.denominators();
        let terms = (self.function.transform.weighed(counts))
            .map(|(id, v)| (id, self.weight(id as usize, d).map_or(0.0, |w| w * v)))
            .collect();
        (terms, log_prior_ratio_so_far(self.class_counts))
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

    /// Counts per class, ham first, for checks that learning is exact.
    pub fn counts(&self) -> ([f64; 2], &[f64], &[f64]) {
        (self.class_counts, &self.counts_ham, &self.counts_spam)
    }

    /// Adds (`unlearn == false`) or removes one message's counts, exactly (for whole-number
    /// feature values, as presence and raw counts are). Features beyond the model's width grow
    /// it. Unlearning a message that was never learned is refused. The multinomial variant's
    /// cached function goes stale until [`MultinomialNb::refresh`].
    pub fn learn(&mut self, counts: &SparseVector, label: Label, unlearn: bool) -> Result<()> {
        let x = self.function.transform.apply(counts);
        let y = label.index();
        if unlearn
            && (self.class_counts[y] < 1.0
                || x.iter().any(|(id, v)| {
                    self.class(label)
                        .get(id as usize)
                        .is_none_or(|&c| c < v - 1e-9)
                }))
        {
            return Err(Error::NotLearned {
                model: crate::models::ModelKind::MultinomialNb,
                label,
            });
        }
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
        for (id, v) in x.iter() {
            c[id as usize] = (c[id as usize] + sign * v).max(0.0);
            self.totals[y] += sign * v;
        }
        self.class_counts[y] += sign;
        self.stale = true;
        if self.variant == NbVariant::Complement {
            self.refresh();
        }
        Ok(())
    }

    /// Drops and renumbers features by `remap`. The model is then exactly the one the kept
    /// counts give: class totals are the kept counts' sums, |V| the kept features, the message
    /// counts unchanged. Refreshes the cached function.
    pub fn remap(&mut self, remap: &FeatureRemap) {
        remap.apply(&mut self.counts_ham);
        remap.apply(&mut self.counts_spam);
        self.function.remap(remap);
        self.totals = [self.counts_ham.iter().sum(), self.counts_spam.iter().sum()];
        self.refresh();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learning_from_empty_scores_as_the_batch_model() {
        let data = Dataset::new(
            vec![
                SparseVector::from_ids(vec![0, 2]),
                SparseVector::from_ids(vec![0, 0]),
                SparseVector::from_ids(vec![1, 2]),
            ],
            vec![Label::Spam, Label::Spam, Label::Ham],
            3,
        );
        for features in [FeatureConfig::BINARY, FeatureConfig::COUNTS] {
            let params = MultinomialNbParams {
                features,
                ..MultinomialNbParams::default()
            };
            let batch = params.fit(&data).unwrap();
            crate::models::testutil::assert_learned_equals_fitted(
                &data,
                &crate::models::AnyModel::MultinomialNb(batch),
                crate::models::AnyModel::MultinomialNb(params.empty().unwrap()),
                &[vec![], vec![0], vec![1, 1], vec![0, 2]],
            );
        }
    }

    /// Features: 0 free, 1 meeting, 2 money. Spam: free x2 + money, free; ham: meeting.
    fn data() -> Dataset {
        Dataset::new(
            vec![
                SparseVector::from_ids(vec![0, 0, 2]),
                SparseVector::from_ids(vec![0]),
                SparseVector::from_ids(vec![1]),
            ],
            vec![Label::Spam, Label::Spam, Label::Ham],
            3,
        )
    }

    #[test]
    fn hand_computed_counts_example() {
        let params = MultinomialNbParams {
            alpha: 1.0,
            features: FeatureConfig::COUNTS,
            variant: NbVariant::Multinomial,
            scoring: NbScoring::TEXTBOOK,
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
        assert!(model.decision(&x) < fitted.decision(&x));
        model.learn(&x, Label::Ham, true).unwrap();
        model.refresh();
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
