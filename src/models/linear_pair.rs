//! Two linear decision functions of the same binary input (the linear SVM's, L2-normalized,
//! and logistic regression's, as `train` fits them) scored in one pass: their weights held
//! side by side, so each of a message's features reads one place for both instead of one in
//! each model's array. With the hashed byte 4-grams a message has a thousand or more
//! features, each a random place in arrays of a megabyte per model; reading those places is
//! most of what scoring them costs, and a scorer of many messages pays it once instead of
//! twice. (Holding the hashed weights as `f32`, as the file stores most, saved little more in
//! a cache simulation, and a weight learned since is not always one.)
//!
//! The decisions are those of [`LinearFunction::decision`] bit for bit: the same terms (each
//! weight times one over the norm) summed in the same order.

use super::LinearFunction;
use crate::features::hashed::{HASHED_BASE, HASHED_BUCKETS};
use crate::features::{SparseVector, Weighting};

/// Two linear functions' weights, side by side, by input id (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinearPair {
    /// Both functions' weights of the hashed buckets (none when their input has no hashed
    /// features); a weight past a function's array as 0.
    hashed: Vec<[f64; 2]>,
    /// Both functions' weights of the vocabulary's features, by vocabulary id; a weight past
    /// a function's array as 0.
    words: Vec<[f64; 2]>,
    /// Both constant terms.
    biases: [f64; 2],
    /// Whether each function's input is L2-normalized.
    normalized: [bool; 2],
}

impl LinearPair {
    /// The pair of `a` and `b`, if scoring them together is exact: both read binary input,
    /// both with the hashed features or both without (each L2-normalized or not), and hold
    /// every weight (neither is restricted to some buckets). `None` otherwise: score each on
    /// its own.
    pub(crate) fn new(a: &LinearFunction, b: &LinearFunction) -> Option<LinearPair> {
        let (config, other) = (a.transform.config(), b.transform.config());
        if config.weighting != Weighting::Binary
            || other.weighting != Weighting::Binary
            || config.hashed != other.hashed
            || a.held_buckets().is_some()
            || b.held_buckets().is_some()
        {
            return None;
        }
        let front = config.input_width(0);
        let weight = |f: &LinearFunction, id: usize| f.weights.get(id).copied().unwrap_or(0.0);
        let both = |ids: std::ops::Range<usize>| ids.map(|id| [weight(a, id), weight(b, id)]);
        let hashed = both(0..front).collect();
        let words = both(front..a.weights.len().max(b.weights.len()).max(front)).collect();
        Some(LinearPair {
            hashed,
            words,
            biases: [a.bias, b.bias],
            normalized: [config.l2_normalize, other.l2_normalize],
        })
    }

    /// Both functions' weights of input id `id` (0 past their arrays).
    fn at(&self, id: usize) -> [f64; 2] {
        let word = || {
            id.checked_sub(self.hashed.len())
                .and_then(|w| self.words.get(w))
        };
        *self.hashed.get(id).or_else(word).unwrap_or(&[0.0; 2])
    }

    /// Both constant terms.
    pub(crate) fn biases(&self) -> [f64; 2] {
        self.biases
    }

    /// Each of a count vector's entries' terms in both functions, value times weight, in
    /// the order [`LinearFunction::decision`] sums them (the terms [`LinearFunction::terms`]
    /// gives, bit for bit).
    pub(crate) fn terms<'a>(
        &'a self,
        counts: &'a SparseVector,
    ) -> impl Iterator<Item = [f64; 2]> + 'a {
        let words = counts.vocabulary_ids();
        // Functions without the hashed features (whose pair holds no hashed weights) drop
        // them, as `weighted` does; with them, the vocabulary's ids follow the buckets.
        let (hashed, shift) = if self.hashed.is_empty() {
            (&[][..], 0)
        } else {
            (&counts.ids()[words.len()..], HASHED_BUCKETS)
        };
        // Every value is 1, divided by the norm where the input is L2-normalized: the square
        // root of the number of entries (as `weighed` reads a binary input).
        let norm = ((words.len() + hashed.len()) as f64).sqrt();
        let values = self.normalized.map(|l2| if l2 { 1.0 / norm } else { 1.0 });
        let buckets = hashed.iter().map(|&id| id.wrapping_sub(HASHED_BASE));
        let words = words.iter().map(move |&id| id.wrapping_add(shift));
        buckets.chain(words).map(move |id| {
            let [a, b] = self.at(id as usize);
            [a * values[0], b * values[1]]
        })
    }

    /// [`LinearFunction::decision`] of each function for a count vector, bit for bit.
    pub(crate) fn decisions(&self, counts: &SparseVector) -> [f64; 2] {
        // As `Iterator::sum` does, from -0.0; each absent weight adds 0.0, as `dot` adds it.
        let mut sums = [-0.0_f64; 2];
        for [a, b] in self.terms(counts) {
            sums[0] += a;
            sums[1] += b;
        }
        [self.biases[0] + sums[0], self.biases[1] + sums[1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{FeatureConfig, FeatureTransform};
    use rand::{Rng, SeedableRng};

    /// A function of `config` with `words` vocabulary weights drawn from `rng`, and hashed
    /// ones if it has them (some 0, some -0.0).
    fn function(config: FeatureConfig, words: usize, rng: &mut impl Rng) -> LinearFunction {
        let weights = (0..config.input_width(words))
            .map(|_| match rng.random_range(0..10) {
                0 => 0.0,
                1 => -0.0,
                _ => rng.random_range(-3.0..3.0),
            })
            .collect();
        let bias = rng.random_range(-1.0..1.0);
        LinearFunction::new(FeatureTransform::unfitted(config), weights, bias)
    }

    /// A count vector of up to `n` vocabulary ids below `words` and buckets, with counts.
    fn counts(n: usize, words: u32, rng: &mut impl Rng) -> SparseVector {
        let pairs = (0..rng.random_range(0..=n))
            .map(|_| {
                let id = if rng.random_bool(0.5) {
                    HASHED_BASE + rng.random_range(0..HASHED_BUCKETS)
                } else {
                    rng.random_range(0..words)
                };
                (id, f64::from(rng.random_range(1..4_u8)))
            })
            .collect();
        SparseVector::from_pairs(pairs)
    }

    #[test]
    fn decisions_and_terms_are_each_functions_own_bit_for_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let binary = |l2_normalize, hashed| FeatureConfig {
            weighting: Weighting::Binary,
            l2_normalize,
            hashed,
        };
        for hashed in [true, false] {
            for (l2a, l2b) in [(true, false), (false, true), (true, true), (false, false)] {
                // Arrays of different lengths: a word past one function's array weighs 0 in
                // it, and past both in both (the message's ids reach 60).
                let a = function(binary(l2a, hashed), 40, &mut rng);
                let b = function(binary(l2b, hashed), 55, &mut rng);
                let pair = LinearPair::new(&a, &b).expect("binary functions pair");
                // A bias of -0.0 keeps its sign only over a sum that starts at -0.0, as
                // `Iterator::sum`'s does.
                let mut signed = a.clone();
                signed.bias = -0.0;
                let empty = SparseVector::default();
                let zero = LinearPair::new(&signed, &b).expect("binary functions pair");
                let own = signed.decision(&empty);
                assert_eq!(zero.decisions(&empty)[0].to_bits(), own.to_bits());
                for n in [0, 1, 5, 300] {
                    for _ in 0..20 {
                        let x = counts(n, 60, &mut rng);
                        let [da, db] = pair.decisions(&x);
                        assert_eq!(da.to_bits(), a.decision(&x).to_bits(), "{x:?}");
                        assert_eq!(db.to_bits(), b.decision(&x).to_bits(), "{x:?}");
                        let bits = |f: &LinearFunction| -> Vec<u64> {
                            f.terms(&x).map(|(_, t)| t.to_bits()).collect()
                        };
                        let terms: Vec<[f64; 2]> = pair.terms(&x).collect();
                        let column = |i: usize| -> Vec<u64> {
                            terms.iter().map(|t| t[i].to_bits()).collect()
                        };
                        assert_eq!((column(0), column(1)), (bits(&a), bits(&b)), "{x:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn functions_that_would_not_score_the_same_together_do_not_pair() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let hashed = FeatureConfig::BINARY_HASHED;
        let a = function(hashed, 10, &mut rng);
        assert!(LinearPair::new(&a, &function(hashed, 10, &mut rng)).is_some());
        // Counts or tf-idf are read otherwise; one function with the hashed features and one
        // without read different entries.
        for other in [
            FeatureConfig::COUNTS,
            FeatureConfig::TF_IDF_L2,
            FeatureConfig::BINARY,
        ] {
            assert!(LinearPair::new(&a, &function(other, 10, &mut rng)).is_none());
        }
    }
}
