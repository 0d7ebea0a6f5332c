//! Multivariate Bernoulli Naive Bayes: each vocabulary token is a binary event, present or
//! absent. With n_jy the number of class-y training messages containing token j and n_y the
//! number of class-y messages, phi_jy = (n_jy + alpha) / (n_y + 2 alpha) (Laplace smoothing at
//! alpha = 1), and
//!
//! ln P(x, y) = ln P(y) + sum_{j present} ln phi_jy + sum_{j absent} ln(1 - phi_jy)
//!            = ln P(y) + B_y + sum_{j present} [ln phi_jy - ln(1 - phi_jy)],
//!
//! where B_y = sum_j ln(1 - phi_jy) over the whole vocabulary is kept up to date from a histogram
//! of counts, so the absent-word factors are part of the model yet scoring costs O(tokens
//! present). Learning and unlearning one message update the counts exactly; until both classes
//! have messages the prior term is 0. The model covers the `max_features` tokens of highest
//! information gain (see [`super::selection`]); the selection is fixed at fit time.

use super::ModelKind;
use super::check::{require_both_classes, require_positive};
use super::linear::LinearFunction;
use super::math::{gather, gather_held, log_prior_ratio_so_far, overlay};
use super::nb_scoring::NbScoring;
use super::selection::select_top;
use crate::error::{Error, Result};
use crate::features::{Dataset, FeatureConfig, FeatureId, FeatureRemap, SparseVector};
use crate::label::Label;
use crate::model_file::packed::{Elements, Packed};
use serde::{Deserialize, Serialize};

/// Hyperparameters of [`BernoulliNb`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BernoulliNbParams {
    /// Additive smoothing; 1 is Laplace. Default 0.01, chosen by measurement: on the
    /// SpamAssassin corpus (5-fold) (1-AUC)% was 0.64 at alpha = 1 and 0.22 at 0.01, because
    /// Laplace smoothing drowns the many rare header tokens.
    pub alpha: f64,
    /// Model only this many tokens, those of highest information gain; `None` (default) models
    /// the whole vocabulary, which measured better than any cut from 1,000 to 10,000.
    pub max_features: Option<usize>,
    /// How a message is scored from the token weights (see [`NbScoring`]).
    #[serde(default = "NbScoring::textbook")]
    pub scoring: NbScoring,
}

impl Default for BernoulliNbParams {
    fn default() -> Self {
        BernoulliNbParams {
            alpha: 0.01,
            max_features: None,
            scoring: NbScoring::default(),
        }
    }
}

/// A fitted multivariate Bernoulli Naive Bayes model, kept as counts so it learns and unlearns
/// exactly and grows with the vocabulary.
///
/// The absent-feature term B_y = sum_j ln(1 - phi_jy) depends on each feature only through its
/// count n_jy, so it is computed from a histogram of counts per class: scoring from the counts
/// costs O(|x|) and learning O(|x| + N_y), never O(|V|). The cached [`LinearFunction`] (what a
/// scorer borrows from the model file) is brought up to date by [`BernoulliNb::refresh`] (at
/// fit time and before a save), with the same arithmetic, so it gives bit-identical decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BernoulliNb {
    /// The log-odds as a linear function of presence, cached from the counts. First, so a
    /// scorer can read it without decoding the rest (see `crate::filter::scorer`).
    function: LinearFunction,
    /// How a message is scored from the weights: second, so a scorer reads it too.
    #[serde(default = "NbScoring::textbook")]
    scoring: NbScoring,
    alpha: f64,
    /// Messages per class, ham first.
    class_counts: [f64; 2],
    /// n_jy: per class (ham, spam), messages containing each feature.
    #[serde(with = "crate::model_file::packed::f64s")]
    df_ham: Vec<f64>,
    #[serde(with = "crate::model_file::packed::f64s")]
    df_spam: Vec<f64>,
    /// 1 for the modeled (selected) features; others weigh 0.
    #[serde(with = "serde_bytes")]
    selected: Vec<u8>,
    /// Whether features added later are modeled: true unless fitted with `max_features`.
    select_new: bool,
    /// Per class (ham, spam): `histogram[y][k]` = selected features with n_jy = k.
    histogram: [Vec<u64>; 2],
    /// B_y per class (ham, spam), from the histogram: recomputed when the counts change, so
    /// scoring from the counts costs O(|x|).
    absent: [f64; 2],
    /// The counts changed since the cached function was last refreshed (never true in a
    /// loaded or fitted model).
    #[serde(skip)]
    stale: bool,
}

/// A serialized [`BernoulliNb`] (the same fields in the same order) with its per-feature
/// counts borrowed where they lie, for [`BernoulliNbSection::restricted`].
#[derive(Debug, Deserialize)]
pub(crate) struct BernoulliNbSection<'a> {
    function: LinearFunction,
    scoring: NbScoring,
    alpha: f64,
    class_counts: [f64; 2],
    #[serde(borrow)]
    df_ham: Packed<'a, f64>,
    #[serde(borrow)]
    df_spam: Packed<'a, f64>,
    #[serde(borrow)]
    selected: &'a [u8],
    select_new: bool,
    histogram: [Vec<u64>; 2],
    absent: [f64; 2],
}

impl BernoulliNbSection<'_> {
    /// The number of features it holds counts for.
    pub fn width(&self) -> usize {
        self.df_ham.len()
    }

    /// The model with the counts of the features `ids` alone (ascending), renumbered
    /// `0..ids.len()` in that order, and what depends on every feature (message counts, the
    /// histograms of counts, the absent-word terms): a message whose features are among
    /// `ids`, or new ones numbered after them, scores, learns and unlearns in it bit for bit
    /// as in the whole model, if that covered the whole vocabulary (so that new features are
    /// numbered after it in both). Its cached function is the section's, and where the score
    /// table holds the counts (the section's are empty) so are its counts: the caller gives
    /// it the same features' weights and counts.
    pub fn restricted(self, ids: &[FeatureId]) -> BernoulliNb {
        BernoulliNb {
            function: self.function,
            scoring: self.scoring,
            alpha: self.alpha,
            class_counts: self.class_counts,
            df_ham: gather_held(&self.df_ham, ids),
            df_spam: gather_held(&self.df_spam, ids),
            selected: gather(self.selected, ids, 0),
            select_new: self.select_new,
            histogram: self.histogram,
            absent: self.absent,
            stale: false,
        }
    }
}

impl BernoulliNb {
    /// Takes into this restricted model (see [`BernoulliNbSection::restricted`]) what `from`,
    /// the same model restricted to other features and since changed by learning, holds: the
    /// counts and selection of its features `theirs` as this one's `ours` for each
    /// `(theirs, ours)` of `pairs`, and everything that depends on every feature (message
    /// counts, absent-word terms; the histograms only if `from` has them, see
    /// [`BernoulliNb::take_histograms`]). The counts are what the decision reads from now on:
    /// the cached function is stale (and `from`'s is not read).
    pub(crate) fn overlay(&mut self, from: &BernoulliNb, pairs: &[(usize, usize)]) {
        overlay(&mut self.df_ham, &from.df_ham, pairs, 0.0);
        overlay(&mut self.df_spam, &from.df_spam, pairs, 0.0);
        overlay(&mut self.selected, &from.selected, pairs, 0);
        self.class_counts = from.class_counts;
        if from.histogram.iter().any(|h| !h.is_empty()) {
            self.histogram.clone_from(&from.histogram);
        }
        self.absent = from.absent;
        self.stale = true;
    }

    /// Takes the histograms of counts out (left empty): only learning reads them (scoring
    /// reads the absent-word terms kept from them), so a journal patch keeps them apart, for
    /// a scorer to skip.
    pub(crate) fn take_histograms(&mut self) -> [Vec<u64>; 2] {
        std::mem::take(&mut self.histogram)
    }

    /// Puts histograms of counts back (see [`BernoulliNb::take_histograms`]).
    pub(crate) fn set_histograms(&mut self, histograms: [Vec<u64>; 2]) {
        self.histogram = histograms;
    }
}

impl BernoulliNbParams {
    /// Counts document frequencies per class. Needs at least one message of each class.
    pub fn fit(&self, data: &Dataset) -> Result<BernoulliNb> {
        require_positive(ModelKind::BernoulliNb, "alpha", self.alpha)?;
        self.scoring.check(ModelKind::BernoulliNb)?;
        let counts = require_both_classes(ModelKind::BernoulliNb, data)?;
        let mut df = [vec![0.0; data.n_features], vec![0.0; data.n_features]];
        for (row, label) in data.rows.iter().zip(&data.labels) {
            for &id in row.words().ids() {
                df[label.index()][id as usize] += 1.0;
            }
        }
        let [df_ham, df_spam] = df;
        let selected = select_top(
            &df_ham,
            &df_spam,
            counts,
            self.max_features.unwrap_or(usize::MAX),
        );
        let mut model = BernoulliNb {
            scoring: self.scoring,
            alpha: self.alpha,
            class_counts: counts,
            df_ham,
            df_spam,
            selected,
            select_new: self.max_features.is_none(),
            histogram: [Vec::new(), Vec::new()],
            absent: [0.0; 2],
            stale: false,
            function: LinearFunction::new(FeatureConfig::BINARY.fit(data), Vec::new(), 0.0),
        };
        model.histogram = [Label::Ham, Label::Spam].map(|l| model.count_histogram(l));
        model.absent = [Label::Ham, Label::Spam].map(|l| model.absent_term(l));
        model.refresh();
        Ok(model)
    }

    /// A model that has learned nothing (every decision 0 until it learns), for a filter that
    /// starts from nothing. Fails on invalid parameters; `max_features` does not apply.
    pub fn empty(&self) -> Result<BernoulliNb> {
        require_positive(ModelKind::BernoulliNb, "alpha", self.alpha)?;
        self.scoring.check(ModelKind::BernoulliNb)?;
        Ok(BernoulliNb {
            scoring: self.scoring,
            alpha: self.alpha,
            class_counts: [0.0; 2],
            df_ham: Vec::new(),
            df_spam: Vec::new(),
            selected: Vec::new(),
            select_new: true,
            histogram: [Vec::new(), Vec::new()],
            absent: [0.0; 2],
            stale: false,
            function: LinearFunction::zero(FeatureConfig::BINARY),
        })
    }
}

impl BernoulliNb {
    fn phi(&self, n_jy: f64, label: Label) -> f64 {
        (n_jy + self.alpha) / (self.class_counts[label.index()] + 2.0 * self.alpha)
    }

    fn df(&self, label: Label) -> &[f64] {
        match label {
            Label::Ham => &self.df_ham,
            Label::Spam => &self.df_spam,
        }
    }

    fn count_histogram(&self, label: Label) -> Vec<u64> {
        let mut h = Vec::new();
        for (j, &n) in self.df(label).iter().enumerate() {
            if self.selected.get(j) == Some(&1) {
                let k = n as usize;
                if h.len() <= k {
                    h.resize(k + 1, 0);
                }
                h[k] += 1;
            }
        }
        h
    }

    /// ln phi - ln(1 - phi) of a feature with count `n_jy` in class `label`.
    fn presence_log_odds(&self, n_jy: f64, label: Label) -> f64 {
        let p = self.phi(n_jy, label);
        p.ln() - (1.0 - p).ln()
    }

    /// Feature j's weight (0 if it is not modeled): under [`NbScoring::TEXTBOOK`] its share
    /// of the textbook log-odds, ln phi_js/(1 - phi_js) - ln phi_jh/(1 - phi_jh) (the
    /// absent-word terms are in the bias); under any other scoring only present tokens are
    /// evidence, and each weighs its presence likelihood ratio ln phi_js - ln phi_jh, as
    /// [`NbScoring::token_weight`] shrinks and clips it.
    fn weight(&self, j: usize) -> f64 {
        if self.selected.get(j) != Some(&1) {
            return 0.0;
        }
        let count = |df: &[f64]| df.get(j).copied().unwrap_or(0.0);
        let (spam, ham) = (count(&self.df_spam), count(&self.df_ham));
        let log_ratio = if self.scoring == NbScoring::TEXTBOOK {
            self.presence_log_odds(spam, Label::Spam) - self.presence_log_odds(ham, Label::Ham)
        } else {
            // Only present tokens are evidence: each weighs its presence likelihood ratio.
            self.phi(spam, Label::Spam).ln() - self.phi(ham, Label::Ham).ln()
        };
        self.scoring.token_weight(log_ratio, spam + ham)
    }

    /// B_y = sum over modeled features of ln(1 - phi_jy), from the histogram: O(N_y).
    fn absent_term(&self, label: Label) -> f64 {
        self.histogram[label.index()]
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(k, &c)| c as f64 * (1.0 - self.phi(k as f64, label)).ln())
            .sum()
    }

    /// The decision's constant term: ln P(spam)/P(ham) (0 until both classes have messages)
    /// plus B_spam - B_ham under [`NbScoring::TEXTBOOK`]; the prior alone under any other
    /// scoring, which leaves the absent tokens' evidence out.
    fn bias(&self) -> f64 {
        if self.scoring != NbScoring::TEXTBOOK {
            return log_prior_ratio_so_far(self.class_counts);
        }
        log_prior_ratio_so_far(self.class_counts)
            + (self.absent[Label::Spam.index()] - self.absent[Label::Ham.index()])
    }

    /// Recomputes the cached decision function from the counts: O(|V|).
    pub fn refresh(&mut self) {
        self.function.weights = (0..self.df_ham.len()).map(|j| self.weight(j)).collect();
        self.function.bias = self.bias();
        self.stale = false;
    }

    /// The decision function as last refreshed (at fit, load, or [`BernoulliNb::refresh`]).
    pub fn function(&self) -> &LinearFunction {
        &self.function
    }

    /// The decision function, to move its vocabulary arrays out of and back into a model file
    /// (see `crate::filter::score_table`).
    pub(crate) fn function_mut(&mut self) -> &mut LinearFunction {
        &mut self.function
    }

    /// The per-feature counts (ham, spam), to move them out of and back into a model file
    /// (see `crate::filter::score_table`).
    pub(crate) fn counts_mut(&mut self) -> [&mut Vec<f64>; 2] {
        [&mut self.df_ham, &mut self.df_spam]
    }

    /// How a message is scored from the weights.
    pub fn scoring(&self) -> NbScoring {
        self.scoring
    }

    /// Refuses values no learning makes (see [`super::check::nb_values`]).
    pub(crate) fn check_values(&self) -> std::result::Result<(), String> {
        let counts = [&self.df_ham[..], &self.df_spam];
        super::check::nb_values(
            ModelKind::BernoulliNb,
            self.alpha,
            &self.class_counts,
            &counts,
        )?;
        match self
            .absent
            .iter()
            .find(|a| !super::check::within_magnitude(**a))
        {
            Some(a) => Err(format!("the bernoulli-nb model's absent-word term is {a}")),
            None => Ok(()),
        }
    }

    /// The decision value in O(|x|): the log-odds ln P(spam, x) - ln P(ham, x) under
    /// [`NbScoring::TEXTBOOK`], else the model's [`NbScoring`] of it. By the cached function
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

    /// Whether [`BernoulliNb::decision`] combines the cached function's terms: while the
    /// function is fresh.
    pub(crate) fn reads_function(&self) -> bool {
        !self.stale
    }

    /// Each present feature's share of [`BernoulliNb::decision`] (0 for a token the scoring
    /// leaves out), and its constant term. Hashed entries of `counts` are not read.
    pub fn contributions(&self, counts: &SparseVector) -> (Vec<(FeatureId, f64)>, f64) {
        let (mut terms, bias) = self.terms(counts);
        self.scoring.combine(bias, &mut terms);
        (terms, bias)
    }

    /// Each present feature's weight, before selection, and the constant term.
    fn terms(&self, counts: &SparseVector) -> (Vec<(FeatureId, f64)>, f64) {
        if !self.stale {
            return (self.function.contributions(counts), self.function.bias);
        }
        let terms = (counts.vocabulary_ids().iter())
            .map(|&id| (id, self.weight(id as usize) * 1.0))
            .collect();
        (terms, self.bias())
    }

    /// ln P(x, y) for each class (ham, spam), computed from the formula directly.
    pub fn joint_log_likelihood(&self, counts: &SparseVector) -> [f64; 2] {
        let total = self.class_counts[0] + self.class_counts[1];
        let mut jll = [0.0; 2];
        for label in Label::ALL {
            let prior = (self.class_counts[label.index()] / total).ln();
            jll[label.index()] = prior
                + self.absent[label.index()]
                + counts
                    .iter()
                    .filter(|&(id, _)| self.selected.get(id as usize) == Some(&1))
                    .map(|(id, _)| self.presence_log_odds(self.df(label)[id as usize], label))
                    .sum::<f64>();
        }
        jll
    }

    /// Counts per class, ham first, for checks that learning is exact.
    pub fn counts(&self) -> ([f64; 2], &[f64], &[f64]) {
        (self.class_counts, &self.df_ham, &self.df_spam)
    }

    /// Adds (`unlearn == false`) or removes one message's counts, exactly, in O(|x| + N_y).
    /// Features beyond the model's width grow it (modeled unless fitted with `max_features`).
    /// Unlearning a message that was never learned is refused. The cached function goes stale
    /// until [`BernoulliNb::refresh`].
    pub fn learn(&mut self, counts: &SparseVector, label: Label, unlearn: bool) -> Result<()> {
        let y = label.index();
        let width = counts
            .ids()
            .last()
            .map_or(0, |&id| id as usize + 1)
            .max(self.df_ham.len());
        let df = if label == Label::Spam {
            &self.df_spam
        } else {
            &self.df_ham
        };
        if unlearn
            && (self.class_counts[y] < 1.0
                || counts
                    .ids()
                    .iter()
                    .any(|&id| df.get(id as usize).is_none_or(|&n| n < 1.0)))
        {
            return Err(Error::NotLearned {
                model: crate::models::ModelKind::BernoulliNb,
                label,
            });
        }
        let added = width - self.df_ham.len();
        // All three resized every time, so a malformed file's mismatched lengths cannot make
        // an index below go out of bounds.
        self.df_ham.resize(width, 0.0);
        self.df_spam.resize(width, 0.0);
        self.selected
            .resize(width, if self.select_new { 1 } else { 0 });
        if added > 0 && self.select_new {
            for h in &mut self.histogram {
                bump(h, 0, added as i64);
            }
        }
        let delta = if unlearn { -1.0 } else { 1.0 };
        for &id in counts.ids() {
            let j = id as usize;
            let df = if label == Label::Spam {
                &mut self.df_spam
            } else {
                &mut self.df_ham
            };
            let before = df[j];
            df[j] += delta;
            if self.selected[j] == 1 {
                bump(&mut self.histogram[y], before as usize, -1);
                bump(&mut self.histogram[y], df[j] as usize, 1);
            }
        }
        self.class_counts[y] += delta;
        // Both: new features change the other class's term too.
        self.absent = [Label::Ham, Label::Spam].map(|l| self.absent_term(l));
        self.stale = true;
        Ok(())
    }

    /// Drops and renumbers features by `remap`. The model is then exactly the one the kept
    /// counts give: the absent-word terms cover the kept features only (histograms rebuilt),
    /// the message counts are unchanged. Refreshes the cached function.
    pub fn remap(&mut self, remap: &FeatureRemap) {
        remap.apply(&mut self.df_ham);
        remap.apply(&mut self.df_spam);
        remap.apply(&mut self.selected);
        self.function.remap(remap);
        self.histogram = [Label::Ham, Label::Spam].map(|l| self.count_histogram(l));
        self.absent = [Label::Ham, Label::Spam].map(|l| self.absent_term(l));
        self.refresh();
    }
}

/// `histogram[k] += by`. A count changes by one at a time, so k is at most one past the
/// histogram's end; a larger k (only from a malformed file) is ignored rather than grown to.
fn bump(histogram: &mut Vec<u64>, k: usize, by: i64) {
    if k == histogram.len() {
        histogram.push(0);
    }
    if let Some(h) = histogram.get_mut(k) {
        *h = h.saturating_add_signed(by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learning_from_empty_scores_as_the_batch_model() {
        use crate::models::AnyModel;
        let data = three_messages();
        let batch = BernoulliNbParams::default().fit(&data).unwrap();
        let online = BernoulliNbParams::default().empty().unwrap();
        assert_eq!(online.decision(&SparseVector::from_ids(vec![5])), 0.0);
        crate::models::testutil::assert_learned_equals_fitted(
            &data,
            &AnyModel::BernoulliNb(batch),
            AnyModel::BernoulliNb(online),
            &[vec![], vec![0], vec![1], vec![0, 2], vec![0, 1, 2]],
        );
    }

    /// Features: 0 free, 1 meeting, 2 money. Spam: {free, money}, {free}; ham: {meeting}.
    fn three_messages() -> Dataset {
        Dataset::new(
            vec![
                SparseVector::from_ids(vec![0, 2]),
                SparseVector::from_ids(vec![0]),
                SparseVector::from_ids(vec![1]),
            ],
            vec![Label::Spam, Label::Spam, Label::Ham],
            3,
        )
    }

    #[test]
    fn hand_computed_laplace_example() {
        let model = BernoulliNbParams {
            alpha: 1.0,
            max_features: None,
            scoring: NbScoring::TEXTBOOK,
        }
        .fit(&three_messages())
        .unwrap();
        // phi|spam: free (2+1)/(2+2), meeting (0+1)/4 (never seen in spam), money (1+1)/4.
        // phi|ham:  free (0+1)/(1+2), meeting (1+1)/3, money (0+1)/3. Priors 2/3, 1/3.
        let x = SparseVector::from_ids(vec![0]);
        let jll = model.joint_log_likelihood(&x);
        let spam = (2.0f64 / 3.0 * 3.0 / 4.0 * (1.0 - 1.0 / 4.0) * (1.0 - 1.0 / 2.0)).ln();
        let ham = (1.0f64 / 3.0 * 1.0 / 3.0 * (1.0 - 2.0 / 3.0) * (1.0 - 1.0 / 3.0)).ln();
        assert!((jll[Label::Spam.index()] - spam).abs() < 1e-12);
        assert!((jll[Label::Ham.index()] - ham).abs() < 1e-12);
        assert!((model.function().decision(&x) - (spam - ham)).abs() < 1e-12);
        // "meeting" alone: absent-word factors still count.
        let m = SparseVector::from_ids(vec![1]);
        let spam_m = (2.0f64 / 3.0 * (1.0 - 3.0 / 4.0) * 1.0 / 4.0 * (1.0 - 1.0 / 2.0)).ln();
        assert!((model.joint_log_likelihood(&m)[Label::Spam.index()] - spam_m).abs() < 1e-12);
    }

    #[test]
    fn scored_beyond_the_textbook_only_present_tokens_count_by_their_likelihood_ratio() {
        let scoring = NbScoring {
            max_tokens: 10,
            ..NbScoring::TEXTBOOK
        };
        let model = BernoulliNbParams {
            alpha: 1.0,
            max_features: None,
            scoring,
        }
        .fit(&three_messages())
        .unwrap();
        // Prior 2/3 : 1/3; "free" in 2 of 2 spam and 0 of 1 ham: phi 3/4 and 1/3.
        let d = model.decision(&SparseVector::from_ids(vec![0]));
        let expected = 2f64.ln() + (3.0f64 / 4.0).ln() - (1.0f64 / 3.0).ln();
        assert!((d - expected).abs() < 1e-12, "{d} vs {expected}");
    }

    #[test]
    fn learn_then_unlearn_restores_the_exact_model() {
        let fitted = BernoulliNbParams::default().fit(&three_messages()).unwrap();
        let mut model = fitted.clone();
        let x = SparseVector::from_ids(vec![1, 2]);
        let grown = SparseVector::from_ids(vec![1, 2, 4]);
        model.learn(&grown, Label::Spam, false).unwrap();
        assert!(model.decision(&x) > fitted.decision(&x));
        model.learn(&grown, Label::Spam, true).unwrap();
        assert_eq!(model.counts().0, fitted.counts().0);
        assert_eq!(&model.counts().1[..3], fitted.counts().1);
        assert_eq!(&model.counts().2[..3], fitted.counts().2);
        // The features the message added stay, with count 0.
        assert_eq!(model.counts().2[3..], [0.0, 0.0]);
        assert!(
            model
                .learn(&SparseVector::from_ids(vec![1]), Label::Spam, true)
                .is_err()
        );
    }

    #[test]
    fn rejects_bad_alpha_and_one_class() {
        assert!(
            BernoulliNbParams {
                alpha: 0.0,
                ..BernoulliNbParams::default()
            }
            .fit(&three_messages())
            .is_err()
        );
        let mut one = three_messages();
        one.labels = vec![Label::Spam; 3];
        assert!(BernoulliNbParams::default().fit(&one).is_err());
    }
}
