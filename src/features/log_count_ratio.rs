//! Naive Bayes log-count ratios of a data set's input columns, the feature scaling of NBSVM
//! (Wang and Manning, "Baselines and Bigrams", ACL 2012): a linear model fitted on each
//! binary input column j scaled by |r_j|, with
//! r_j = ln((a + spam rows with j) / P) - ln((a + ham rows with j) / Q)
//! (P and Q the sums of the numerators over every column, `a` the smoothing), weighs a
//! column that tells the classes apart more cheaply than one both classes share: the
//! regularizer's cost of a weight falls with the column's ratio. The scale is folded into the
//! fitted weights (the solver fits u = s ∘ w, see [`InputRows::scaled`](super::InputRows)),
//! so a model scores its unscaled input as before and keeps no table of ratios.

use super::Dataset;
use super::hashed::HASHED_BUCKETS;
use crate::label::Label;

/// Per input id of a model over `data` (the hashed buckets first when `hashed`, then the
/// vocabulary's ids, as [`super::FeatureConfig::input_width`] counts them), the square of
/// its log-count ratio with smoothing `alpha` (see the module doc), by the rows (those at
/// `rows`, or all) where the column is present: what the solver of the scaled problem weighs
/// each column's steps and norms by. `alpha` must be positive, so every ratio is finite.
pub(crate) fn squared_log_count_ratios(
    data: &Dataset,
    rows: Option<&[usize]>,
    hashed: bool,
    alpha: f64,
) -> Vec<f64> {
    let shift = if hashed { HASHED_BUCKETS as usize } else { 0 };
    let width = shift + data.n_features;
    // Rows with each column present, per class (ham first).
    let mut present = [vec![0_u32; width], vec![0_u32; width]];
    let all: Vec<usize>;
    let rows = match rows {
        Some(rows) => rows,
        None => {
            all = (0..data.len()).collect();
            &all
        }
    };
    for &i in rows {
        let (row, label) = (&data.rows[i], data.labels[i]);
        let counts = &mut present[label.index()];
        for &id in row.words().ids() {
            if let Some(n) = counts.get_mut(shift + id as usize) {
                *n += 1;
            }
        }
        if hashed {
            row.buckets().for_each(|b| counts[b as usize] += 1);
        }
    }
    let total = |counts: &[u32]| {
        let sum: f64 = counts.iter().map(|&n| f64::from(n)).sum();
        sum + alpha * width as f64
    };
    let ln_p = total(&present[Label::Spam.index()]).ln();
    let ln_q = total(&present[Label::Ham.index()]).ln();
    let (ham, spam) = (&present[Label::Ham.index()], &present[Label::Spam.index()]);
    // ln(alpha + n) for the counts up to the largest a column has, each computed once: a
    // logarithm per column and class, some 400,000 a fit with the hashed buckets, was most of
    // this function's time. No more of them than there are columns (a data set of many rows
    // and few columns would otherwise tabulate more than it looks up); a count past the table
    // takes its own. The same numbers either way, so the same bits.
    let ln_of = |n: u32| (alpha + f64::from(n)).ln();
    let most = ham.iter().chain(spam).copied().max().unwrap_or(0);
    let table: Vec<f64> = (0..=most.min(u32::try_from(width).unwrap_or(u32::MAX)))
        .map(ln_of)
        .collect();
    let ln = |n: u32| table.get(n as usize).copied().unwrap_or_else(|| ln_of(n));
    ham.iter()
        .zip(spam)
        .map(|(&h, &s)| {
            let r = (ln(s) - ln_p) - (ln(h) - ln_q);
            r * r
        })
        .collect()
}

/// The squared scale of input id `id` in `squared` (from [`squared_log_count_ratios`]): 1
/// past its end, for a column the ratios were not counted for.
pub(crate) fn squared_scale_at(squared: &[f64], id: usize) -> f64 {
    squared.get(id).copied().unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::SparseVector;
    use crate::features::hashed::HASHED_BASE;

    #[test]
    fn a_column_of_one_class_weighs_more_than_a_shared_one() {
        // Word 0 in every spam, word 1 in every message, word 2 in one ham; a bucket in both
        // spam.
        let spam = SparseVector::from_ids(vec![0, 1, HASHED_BASE + 5]);
        let ham = SparseVector::from_ids(vec![1]);
        let odd_ham = SparseVector::from_ids(vec![1, 2]);
        let data = Dataset::new(
            vec![spam.clone(), spam, ham.clone(), ham, odd_ham],
            vec![Label::Spam, Label::Spam, Label::Ham, Label::Ham, Label::Ham],
            3,
        );
        let words = squared_log_count_ratios(&data, None, false, 1.0);
        assert_eq!(words.len(), 3);
        assert!(words[0] > words[2] && words[2] > words[1], "{words:?}");
        let both = squared_log_count_ratios(&data, None, true, 1.0);
        let shift = HASHED_BUCKETS as usize;
        assert_eq!(both.len(), shift + 3);
        assert!(
            both[5] > both[shift + 1],
            "the spam bucket outweighs the shared word"
        );
        // An absent column's ratio is that of the classes' totals alone.
        assert!((both[6] - both[7]).abs() < 1e-12 && both[6] > 0.0);
        // Counted over the rows asked for alone: word 2's one ham left out, it is absent.
        let some = squared_log_count_ratios(&data, Some(&[0, 1, 2, 3]), false, 1.0);
        assert!(
            (some[2] - (5.0_f64 / 7.0).ln().powi(2)).abs() < 1e-12,
            "{some:?}"
        );
    }
}
