//! The shape all four models share once fitted: a linear decision function over transformed
//! features, d(x) = bias + sum_j w_j * t(x)_j. For the Naive Bayes models this is exact algebra
//! (their log-odds are linear in presence or counts), so scoring, explanation and the model file
//! are one piece of code for every model.

use crate::features::{
    FeatureConfig, FeatureId, FeatureRemap, FeatureTransform, FeatureTransformView, SparseVector,
    dot, sorted_matches,
};
use crate::model_file::packed::{Elements, Reals, stored_f32};
use serde::{Deserialize, Serialize};

/// A linear decision function. Features beyond `weights` (added to the vocabulary later) weigh 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFunction {
    /// How counts become the model's input.
    pub transform: FeatureTransform,
    /// One weight per feature, stored losslessly, as `f32` where every weight is one
    /// (`crate::model_file::packed::reals`). The hashed features' weights (what a model's
    /// section keeps, the score table holding the rest, see
    /// `crate::filter::score_table::strip`) are kept at `f32` precision by every fit and
    /// update (`LinearFunction::fitted`, `linear_svm::grow_and_add`), so they
    /// take half the bytes a pipe filter reads.
    #[serde(with = "crate::model_file::packed::reals")]
    pub weights: Vec<f64>,
    /// The constant term.
    pub bias: f64,
    /// Set only in a function restricted to some of its hashed buckets, which a scorer or a
    /// learner of a few messages builds (see [`LinearSection::decoded`]): those buckets,
    /// ascending, whose weights are held in this order at the array's first places, the
    /// vocabulary's weights right after them (see [`LinearFunction::place_of`]); no other
    /// bucket's weight is held. Never saved.
    #[serde(skip)]
    held_buckets: Option<Vec<u32>>,
}

impl LinearFunction {
    /// Takes `from`'s bias and, for each `(theirs, ours)` of `pairs`, the weight of its
    /// vocabulary feature `theirs` as this one's feature `ours`; where this function sees the
    /// hashed features, `from` holds the weights of the hashed `buckets` (ascending) first, as
    /// [`LinearFunction::keep_held`] keeps them, and this one takes those too (see
    /// [`super::TrainedModel::overlay`]). The transform (idf) is left as it is: learning
    /// never changes it.
    pub(crate) fn overlay(
        &mut self,
        from: &LinearFunction,
        pairs: &[(usize, usize)],
        buckets: &[u32],
    ) {
        if self.transform.config().input_width(0) == 0 {
            super::math::overlay(&mut self.weights, &from.weights, pairs, 0.0);
        } else {
            let kept = buckets.len();
            let front = self.vocabulary_start();
            // A bucket this function does not hold is one its messages do not have.
            let held = match &self.held_buckets {
                Some(held) => sorted_matches(buckets, held),
                None => (buckets.iter().enumerate())
                    .map(|(theirs, &b)| (theirs, b as usize))
                    .collect(),
            };
            let pairs: Vec<(usize, usize)> = held
                .into_iter()
                .chain(
                    pairs
                        .iter()
                        .map(|&(theirs, ours)| (kept + theirs, front + ours)),
                )
                .collect();
            super::math::overlay(&mut self.weights, &from.weights, &pairs, 0.0);
        }
        self.bias = from.bias;
    }

    /// The buckets a function restricted to some of them holds (see
    /// [`LinearFunction::held_buckets`]), ascending; `None` for one that holds every weight.
    pub(crate) fn held_buckets(&self) -> Option<&[u32]> {
        self.held_buckets.as_deref()
    }

    /// Forgets which buckets a function restricted to some of them holds, keeping its weights
    /// as they are: the buckets' in their order, then the vocabulary's. That is the function
    /// as a journal patch keeps it, of the buckets its learn changed (see
    /// `crate::filter::patch`), which [`LinearFunction::overlay`] takes back. A function that
    /// holds every weight is left as it is.
    pub(crate) fn keep_held(&mut self) {
        self.held_buckets = None;
    }

    /// In a function as a journal patch keeps it (see [`LinearFunction::keep_held`]), of
    /// `held` buckets: keeps the weights of the buckets at places `kept` (ascending) among
    /// them alone, then the vocabulary's, so that [`LinearFunction::overlay`] given those
    /// buckets takes what it took given all `held` for them (a weight missing from the array
    /// stays missing: 0, as `overlay` reads one). A function that does not see the hashed
    /// features is left as it is.
    pub(crate) fn keep_patch_buckets(&mut self, held: usize, kept: &[usize]) {
        if self.transform.config().input_width(0) == 0 {
            return;
        }
        let words = self.weights.get(held..).unwrap_or_default();
        self.weights = (kept.iter())
            .map(|&at| self.weights.get(at).copied().unwrap_or(0.0))
            .chain(words.iter().copied())
            .collect();
    }

    /// Where the vocabulary's weights start: after the hashed features' places, or after the
    /// buckets a restricted function holds.
    pub(crate) fn vocabulary_start(&self) -> usize {
        let width = self.transform.config().input_width(0);
        self.held_buckets.as_ref().map_or(width, Vec::len)
    }

    /// Where the weight of input feature `id` is held: at `id`; in a function restricted to
    /// some buckets, a bucket's at its place among them (`None` if it is not one of them) and
    /// a vocabulary feature's that many places after them, its number in the vocabulary on.
    fn place_of(&self, id: FeatureId) -> Option<usize> {
        let Some(held) = &self.held_buckets else {
            return Some(id as usize);
        };
        let width = self.transform.config().input_width(0);
        match (id as usize).checked_sub(width) {
            Some(word) => Some(held.len() + word),
            None => held.binary_search(&id).ok(),
        }
    }

    /// The model's input for a count vector (see [`FeatureTransform::apply`]), each feature at
    /// the place where its weight is held (see [`LinearFunction::place_of`]): what the
    /// decision and learning read and write. In a function restricted to some buckets the
    /// places keep the features' order (its buckets', then the vocabulary's after them), so
    /// every sum runs as in the whole function; a bucket it does not hold (none of the messages
    /// it was restricted for has it) is left out.
    pub(crate) fn input(&self, counts: &SparseVector) -> SparseVector {
        let x = self.transform.apply(counts);
        if self.held_buckets.is_none() {
            return x;
        }
        let (ids, values): (Vec<FeatureId>, Vec<f64>) = x
            .iter()
            .filter_map(|(id, v)| {
                let place = self.place_of(id);
                debug_assert!(place.is_some(), "a message's bucket is held");
                Some((place? as FeatureId, v))
            })
            .unzip();
        SparseVector::from_sorted(ids, values)
    }

    /// The function of these parts, every bucket's weight in its place.
    pub(crate) fn new(transform: FeatureTransform, weights: Vec<f64>, bias: f64) -> Self {
        LinearFunction {
            transform,
            weights,
            bias,
            held_buckets: None,
        }
    }

    /// d(x) = 0 everywhere, with `features` fitted on no data (idf 1 throughout).
    pub fn zero(features: FeatureConfig) -> LinearFunction {
        LinearFunction::new(FeatureTransform::unfitted(features), Vec::new(), 0.0)
    }

    /// Number of leading weights that belong to hashed features (0 for a model that does not
    /// see them; in a function restricted to some buckets, those it holds).
    pub(crate) fn hashed_len(&self) -> usize {
        self.vocabulary_start().min(self.weights.len())
    }

    /// The function an exact solver found: its hashed features' weights rounded to what the
    /// model file stores (see [`LinearFunction::weights`]).
    pub(crate) fn fitted(transform: FeatureTransform, weights: Vec<f64>, bias: f64) -> Self {
        let mut f = LinearFunction::new(transform, weights, bias);
        f.keep_hashed_stored();
        f
    }

    /// Rounds the hashed features' weights to what the model file stores ([`stored_f32`]).
    fn keep_hashed_stored(&mut self) {
        let front = self.hashed_len();
        for w in &mut self.weights[..front] {
            *w = stored_f32(*w);
        }
    }

    /// d(x) for a count vector. The input is read as it is weighted (see
    /// [`FeatureTransform::weighed`]), not built, unless the function is restricted to some
    /// buckets: the same terms summed in the same order.
    pub fn decision(&self, counts: &SparseVector) -> f64 {
        let dot = match self.held_buckets {
            Some(_) => self.input(counts).dot_with(&self.weights),
            None => dot(self.transform.weighed(counts), &self.weights),
        };
        self.bias + dot
    }

    /// `bias + x . weights` for an input `x` given by its entries (ids past the weights count
    /// as 0): [`LinearFunction::decision`] of counts whose [`LinearFunction::input`] has these
    /// entries, bit for bit (the products summed in the same order).
    pub(crate) fn decision_of_input(&self, x: impl Iterator<Item = (FeatureId, f64)>) -> f64 {
        let dot: f64 = x
            .map(|(id, v)| self.weights.get(id as usize).map_or(0.0, |w| w * v))
            .sum();
        self.bias + dot
    }

    /// Each present feature's term w_j * t(x)_j of the decision (the bias is not included),
    /// by the feature's id in `counts`.
    pub fn contributions(&self, counts: &SparseVector) -> Vec<(FeatureId, f64)> {
        self.terms(counts).collect()
    }

    /// [`LinearFunction::contributions`] as they are computed, in input order.
    pub(crate) fn terms<'a>(
        &'a self,
        counts: &'a SparseVector,
    ) -> impl Iterator<Item = (FeatureId, f64)> + Clone + 'a {
        (self.transform.weighed(counts)).map(|(id, v)| {
            let w = self.place_of(id).and_then(|i| self.weights.at(i));
            (self.transform.count_id(id), v * w.unwrap_or(0.0))
        })
    }

    /// Renumbers the weights and the transform by `remap`: a count vector over kept features
    /// gets the same decision, renumbered, as before. Hashed features are not renumbered.
    pub fn remap(&mut self, remap: &FeatureRemap) {
        debug_assert!(
            self.held_buckets.is_none(),
            "a restricted function is never pruned"
        );
        let front = self
            .transform
            .config()
            .input_width(0)
            .min(self.weights.len());
        let mut vocabulary = self.weights.split_off(front);
        remap.apply(&mut vocabulary);
        if !vocabulary.is_empty() {
            self.weights.resize(front, 0.0);
            self.weights.append(&mut vocabulary);
        }
        self.transform.remap(remap);
    }
}

/// A serialized [`LinearFunction`] read up to its weights: `W` is [`Reals`], borrowed where
/// they lie, or [`RealsHead`](crate::model_file::packed::RealsHead), their size and number alone.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct LinearFunctionView<'a, W = Reals<'a>> {
    #[serde(borrow)]
    _transform: FeatureTransformView<'a>,
    pub weights: W,
}

/// A serialized linear model, the SVM or logistic regression (each a [`LinearFunction`], then
/// one number), with its weights borrowed where they lie: what a scorer that restricts the
/// model to a message's features decodes (see `crate::filter::sparse`), building the weights'
/// array once at its final size rather than decoding it and then growing it by the
/// vocabulary's weights (which for 2^17 hashed weights cost a second megabyte of fresh pages).
///
/// `W` is how the weights are read: [`Reals`], borrowed, or
/// [`RealsHead`](crate::model_file::packed::RealsHead), their element size and number alone,
/// for a section whose weights' bytes were left out (and the weights of some buckets read
/// apart; see `crate::filter::hashed_weights`).
#[derive(Debug, Deserialize)]
pub(crate) struct LinearSection<W> {
    transform: FeatureTransform,
    weights: W,
    bias: f64,
    /// The number after the function: the SVM's C, logistic regression's online step.
    parameter: f64,
}

impl<'a> LinearSection<Reals<'a>> {
    /// The weights the section holds.
    pub(crate) fn weights(&self) -> Reals<'a> {
        self.weights
    }
}

impl<W> LinearSection<W> {
    /// The function, its weights' array with room for `room` more, and the number after it.
    /// A function that sees the hashed features holds the weights of `buckets` alone
    /// (ascending bucket numbers: those of the messages it is restricted for; see
    /// [`LinearFunction::input`]) as `hashed` gives them by bucket, at its array's first
    /// places: no place for the other buckets, so no megabyte of zeros to write (mimalloc
    /// zeroed reused memory for it: a fifth of the time of a `filter` with 8 journal records).
    /// One that does not sees `hashed` as its weights.
    pub(crate) fn decoded(
        self,
        room: usize,
        buckets: &[u32],
        hashed: &(impl Elements<f64> + ?Sized),
    ) -> (LinearFunction, f64) {
        let front = self.transform.config().input_width(0);
        let (weights, held_buckets) = if front == 0 {
            let own = hashed.len();
            let mut weights = Vec::with_capacity(own.saturating_add(room));
            weights.extend((0..own).map(|i| hashed.at(i).unwrap_or(0.0)));
            (weights, None)
        } else {
            // The vocabulary's weights go after the buckets' within the capacity.
            let mut weights = Vec::with_capacity(buckets.len().saturating_add(room));
            weights.extend(
                buckets
                    .iter()
                    .map(|&b| hashed.at(b as usize).unwrap_or(0.0)),
            );
            (weights, Some(buckets.to_vec()))
        };
        let function = LinearFunction {
            transform: self.transform,
            weights,
            bias: self.bias,
            held_buckets,
        };
        (function, self.parameter)
    }
}

/// Each present feature's term `w_j * x_j`, by input id; weights beyond the array are 0.
pub(crate) fn terms(
    x: &SparseVector,
    weights: &(impl Elements<f64> + ?Sized),
) -> Vec<(FeatureId, f64)> {
    x.iter()
        .map(|(id, v)| (id, v * weights.at(id as usize).unwrap_or(0.0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::hashed::{HASHED_BASE, HASHED_BUCKETS};

    #[test]
    fn remap_moves_vocabulary_weights_and_leaves_hashed_ones() {
        let mut f = LinearFunction::zero(FeatureConfig::BINARY_HASHED);
        let front = HASHED_BUCKETS as usize;
        f.weights = vec![0.0; front + 3];
        f.weights[7] = 0.5; // bucket 7
        f.weights[front + 1] = 2.0; // vocabulary id 1
        f.weights[front + 2] = -1.0; // vocabulary id 2
        let x = SparseVector::from_pairs(vec![(1, 1.0), (2, 1.0), (HASHED_BASE + 7, 1.0)]);
        assert_eq!(f.decision(&x), 1.5);
        // Drop vocabulary id 0: ids 1 and 2 become 0 and 1.
        f.remap(&FeatureRemap::new(&[false, true, true]));
        assert_eq!(f.weights.len(), front + 2);
        let renumbered = SparseVector::from_pairs(vec![(0, 1.0), (1, 1.0), (HASHED_BASE + 7, 1.0)]);
        assert_eq!(f.decision(&renumbered), 1.5);
        let mut named: Vec<(FeatureId, f64)> = f.contributions(&renumbered);
        named.sort_by_key(|&(id, _)| id);
        assert_eq!(named, [(0, 2.0), (1, -1.0), (HASHED_BASE + 7, 0.5)]);
    }

    #[test]
    fn hashed_weights_are_kept_at_stored_precision_and_the_vocabulary_ones_are_not() {
        let mut f = LinearFunction::zero(FeatureConfig::BINARY_HASHED);
        let front = HASHED_BUCKETS as usize;
        f.weights = vec![0.1; front + 2];
        f.keep_hashed_stored();
        assert!(
            f.weights[..front]
                .iter()
                .all(|&w| w == stored_f32(0.1) && w != 0.1)
        );
        assert_eq!(f.weights[front..], [0.1, 0.1]);
        // A model that does not see hashed features has none to round.
        let mut words = LinearFunction::zero(FeatureConfig::TF_IDF_L2);
        words.weights = vec![0.1; 3];
        words.keep_hashed_stored();
        assert_eq!(words.weights, [0.1; 3]);
    }
}
