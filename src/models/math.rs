//! The numerics every model shares, written once: a numerically safe sigmoid and log-sum-exp,
//! log(1 + e^x) without overflow, and class log priors.

use crate::features::Dataset;
use crate::label::Label;

/// 1 / (1 + e^-z), exact in both tails (no overflow for any finite z).
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// ln(1 + e^z) without overflow: z + ln(1 + e^-z) for large z.
pub fn log1p_exp(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// ln(e^a + e^b), stable for any magnitudes.
pub fn log_sum_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        m
    } else {
        m + ((a - m).exp() + (b - m).exp()).ln()
    }
}

/// Messages per class in a dataset, ham first.
pub fn class_counts(data: &Dataset) -> [f64; 2] {
    let mut n = [0.0; 2];
    for label in &data.labels {
        n[label.index()] += 1.0;
    }
    n
}

/// ln P(spam) - ln P(ham) from class counts (maximum likelihood priors).
pub fn log_prior_ratio(counts: [f64; 2]) -> f64 {
    (counts[Label::Spam.index()] / counts[Label::Ham.index()]).ln()
}

/// [`log_prior_ratio`] of message counts for a model learning from nothing: 0 (even odds) until
/// both classes have a message.
pub fn log_prior_ratio_so_far(counts: [f64; 2]) -> f64 {
    if counts.iter().any(|&n| n <= 0.0) {
        0.0
    } else {
        log_prior_ratio(counts)
    }
}

/// Dense dot product.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Squared Euclidean norm of a dense vector.
pub fn norm2(a: &[f64]) -> f64 {
    dot(a, a)
}

/// y += a * x.
pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// +1 for spam, -1 for ham: the sign convention of the linear models.
pub fn sign(label: Label) -> f64 {
    match label {
        Label::Spam => 1.0,
        Label::Ham => -1.0,
    }
}

/// The elements of `values` at `ids`, in that order (`missing` for an id past the end).
pub(crate) fn gather<T: Copy>(
    values: &(impl crate::model_file::packed::Elements<T> + ?Sized),
    ids: &[crate::features::FeatureId],
    missing: T,
) -> Vec<T> {
    ids.iter()
        .map(|&id| values.at(id as usize).unwrap_or(missing))
        .collect()
}

/// A Naive Bayes section's per-feature counts `values` at `ids` ([`gather`], 0 past the end),
/// or none if the section holds none: the score table holds them (see
/// `crate::filter::score_table`), and its rows give them.
pub(crate) fn gather_held(
    values: &impl crate::model_file::packed::Elements<f64>,
    ids: &[crate::features::FeatureId],
) -> Vec<f64> {
    if values.len() == 0 {
        Vec::new()
    } else {
        gather(values, ids, 0.0)
    }
}

/// Copies, for each `(theirs, ours)` of `pairs`, `theirs`' value at `theirs` (`missing` past its
/// end) into `ours` at `ours`, growing `ours` with `missing` as needed: one restricted model's
/// per-feature values taken into another restricted to other features (see
/// [`super::TrainedModel::overlay`]).
pub(crate) fn overlay<T: Copy>(
    ours: &mut Vec<T>,
    theirs: &[T],
    pairs: &[(usize, usize)],
    missing: T,
) {
    for &(from, to) in pairs {
        if to >= ours.len() {
            ours.resize(to + 1, missing);
        }
        ours[to] = theirs.get(from).copied().unwrap_or(missing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_in_the_tails() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert!(sigmoid(-800.0) >= 0.0 && sigmoid(-800.0) < 1e-300);
        assert_eq!(sigmoid(800.0), 1.0);
        assert!((log1p_exp(1000.0) - 1000.0).abs() < 1e-12);
        assert!((log1p_exp(-1000.0)).abs() < 1e-300);
        assert!((log1p_exp(0.0) - 2f64.ln()).abs() < 1e-15);
        assert!((log_sum_exp(1000.0, 1000.0) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert!((log_sum_exp(-1e5, 0.0)).abs() < 1e-12);
    }
}
