//! A data set's rows as a linear model's solver sees them: each count row through a fitted
//! [`FeatureTransform`], without a transformed copy of the rows' ids.
//!
//! The input ids are the count rows' own, moved (hashed ones to the front of the input if the
//! model sees them, else dropped). Under binary weighting every value of a row is the same
//! number (1, or 1 over the root of its number of entries when normalized): one number per
//! row. A copy of the rows with the hashed byte 4-grams (some 1,700 entries a message) was as
//! large as the data, once per fit running at a time. Other weightings compute each value (a
//! logarithm, an idf), which the solvers' many passes would repeat (computed at every pass,
//! they doubled `train`'s time): those values are computed once and kept as `f32`, a third of
//! the ids and `f64` values a transformed copy held. The solvers' sums stay in `f64`; rounding
//! to `f32` moves each input value (in `f32`'s normal range) by at most one part in 2^24.

use super::hashed::HASHED_BUCKETS;
use super::{Dataset, FeatureTransform, Row, Weighting, squared_scale_at};
use std::sync::Arc;

/// The model input of every row of a data set (see the module doc). Row `i`'s entries are
/// those of `transform.apply(&data.rows[i].counts(hashed))` (their values rounded to `f32`
/// but under binary weighting), in another order if the model sees the hashed features:
/// the row's words, then its buckets.
pub(crate) struct InputRows<'a> {
    rows: &'a [Arc<Row>],
    /// The model sees the hashed features.
    hashed: bool,
    /// Per row, its values: `Some` (one per entry the model sees) unless the weighting is
    /// binary.
    values: Option<Vec<Box<[f32]>>>,
    /// Per row, the one value of its entries under binary weighting (else empty).
    scales: Vec<f64>,
    /// Per input id, the square of its column's scale, if the solver fits the scaled problem
    /// (see [`InputRows::scaled`]).
    column_weights: Option<Vec<f64>>,
}

impl<'a> InputRows<'a> {
    /// The input rows of `data` under `transform`.
    pub fn new(transform: &FeatureTransform, data: &'a Dataset) -> InputRows<'a> {
        let config = transform.config();
        let hashed = config.hashed;
        let (values, scales) = if config.weighting == Weighting::Binary {
            let scales = data
                .rows
                .iter()
                .map(|row| {
                    let n = row.words().nnz() + if hashed { row.buckets().len() } else { 0 };
                    if config.l2_normalize && n > 0 {
                        // What `SparseVector::l2_normalize` makes of n ones.
                        1.0 / (n as f64).sqrt()
                    } else {
                        1.0
                    }
                })
                .collect();
            (None, scales)
        } else {
            let values = data
                .rows
                .iter()
                .map(|row| {
                    // `apply` orders the hashed entries first: back to words, then buckets.
                    let x = transform.apply(&row.counts(hashed));
                    let split = x.nnz() - row.words().nnz();
                    let (front, back) = x.values().split_at(split);
                    back.iter().chain(front).map(|&v| v as f32).collect()
                })
                .collect();
            (Some(values), Vec::new())
        };
        InputRows {
            rows: &data.rows,
            hashed,
            values,
            scales,
            column_weights: None,
        }
    }

    /// These rows with each input column j scaled by s_j, for a solver that fits the weights
    /// u = s ∘ w of the scaled problem directly (what a model then scores its unscaled input
    /// with): a scaled row dotted with w is the unscaled row dotted with u, so [`InputRows::dot`]
    /// is unchanged, while [`InputRows::add_to`] adds `step` times s² ∘ row to u and
    /// [`InputRows::squared_norm`] is the scaled row's. `squared_scales` holds s_j² per input
    /// id; columns past it scale by 1.
    pub fn scaled(self, squared_scales: Vec<f64>) -> InputRows<'a> {
        InputRows {
            column_weights: Some(squared_scales),
            ..self
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Calls `f(input id, value)` for each of row `i`'s entries, its words' then its
    /// buckets'. Loops without a branch per entry: a solver's passes are much of `train`'s
    /// time.
    #[inline]
    fn for_each(&self, i: usize, mut f: impl FnMut(usize, f64)) {
        let row = &self.rows[i];
        let words = row.words().ids();
        let shift = if self.hashed { HASHED_BUCKETS } else { 0 };
        match &self.values {
            None => {
                let scale = self.scales[i];
                for &id in words {
                    f((id + shift) as usize, scale);
                }
                if self.hashed {
                    row.buckets().for_each(|b| f(b as usize, scale));
                }
            }
            Some(values) => {
                let (word_values, bucket_values) = values[i].split_at(words.len());
                for (&id, &v) in words.iter().zip(word_values) {
                    f((id + shift) as usize, f64::from(v));
                }
                if self.hashed {
                    let mut values = bucket_values.iter();
                    row.buckets().for_each(|b| {
                        f(b as usize, values.next().map_or(0.0, |&v| f64::from(v)));
                    });
                }
            }
        }
    }

    /// Row `i` dotted with `w` (input ids beyond `w` count as 0).
    pub fn dot(&self, i: usize, w: &[f64]) -> f64 {
        if self.values.is_some() {
            let mut sum = 0.0;
            self.for_each(i, |id, v| sum += w.get(id).map_or(0.0, |w| w * v));
            return sum;
        }
        // Binary weighting: the sum of the row's weights, times its one value.
        let row = &self.rows[i];
        let shift = if self.hashed { HASHED_BUCKETS } else { 0 };
        let shift = shift as usize;
        let mut sum = gathered_sum(row.words().ids(), |id| at(w, shift + id as usize));
        if self.hashed {
            for (high, low) in row.buckets().groups() {
                let base = high as usize;
                // A group's weights as an array its `u16` ids index without a bounds check.
                let block = w.get(base..base + (1 << 16));
                sum += match block.and_then(|b| <&[f64; 1 << 16]>::try_from(b).ok()) {
                    Some(block) => gathered_sum(low, |id| block[usize::from(id)]),
                    None => gathered_sum(low, |id| at(w, base + usize::from(id))),
                };
            }
        }
        sum * self.scales[i]
    }

    /// `w += step * row i` (of the scaled problem: `step` times s² ∘ row i, see
    /// [`InputRows::scaled`]); `w` covers every input id.
    pub fn add_to(&self, i: usize, step: f64, w: &mut [f64]) {
        if let Some(c) = &self.column_weights {
            self.for_each(i, |id, v| w[id] += step * v * squared_scale_at(c, id));
            return;
        }
        if self.values.is_some() || !self.hashed {
            self.for_each(i, |id, v| w[id] += step * v);
            return;
        }
        // Binary weighting: the words as `for_each` gives them, then each bucket group through
        // an array its `u16` ids index without a bounds check.
        let row = &self.rows[i];
        let add = step * self.scales[i];
        for &id in row.words().ids() {
            w[(id + HASHED_BUCKETS) as usize] += add;
        }
        for (high, low) in row.buckets().groups() {
            let base = high as usize;
            let end = base + (1 << 16);
            if let Some(Ok(block)) = w.get_mut(base..end).map(<&mut [f64; 1 << 16]>::try_from) {
                low.iter().for_each(|&id| block[usize::from(id)] += add);
            } else {
                low.iter().for_each(|&id| w[base + usize::from(id)] += add);
            }
        }
    }

    /// Row `i`'s squared Euclidean norm (scaled, see [`InputRows::scaled`]).
    pub fn squared_norm(&self, i: usize) -> f64 {
        let mut sum = 0.0;
        match &self.column_weights {
            Some(c) => self.for_each(i, |id, v| sum += v * v * squared_scale_at(c, id)),
            None => self.for_each(i, |_, v| sum += v * v),
        }
        sum
    }
}

/// The weight at `id`, 0 past the end of `w`.
#[inline]
fn at(w: &[f64], id: usize) -> f64 {
    w.get(id).copied().unwrap_or(0.0)
}

/// The sum of `weight(id)` for each of `ids`, in four interleaved partial sums: the additions
/// do not wait for one another, so a row's thousands of scattered loads overlap (one running
/// sum made the dot products of the SVM's dual coordinate descent on byte 4-grams a chain of
/// dependent additions).
#[inline]
fn gathered_sum<T: Copy>(ids: &[T], weight: impl Fn(T) -> f64) -> f64 {
    let mut partial = [0.0; 4];
    let mut chunks = ids.chunks_exact(4);
    for chunk in &mut chunks {
        for (p, &id) in partial.iter_mut().zip(chunk) {
            *p += weight(id);
        }
    }
    let rest: f64 = chunks.remainder().iter().map(|&id| weight(id)).sum();
    (partial[0] + partial[1]) + (partial[2] + partial[3]) + rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Label;
    use crate::features::SparseVector;
    use crate::features::hashed::HASHED_BASE;

    /// Every config's input rows agree with `apply`: the same dot products, updates and norms.
    #[test]
    fn input_rows_are_the_applied_rows() {
        let base = HASHED_BASE;
        let data = Dataset::new(
            vec![
                SparseVector::from_pairs(vec![
                    (0, 2.0),
                    (2, 1.0),
                    (base + 1, 3.0),
                    (base + 7, 1.0),
                ]),
                SparseVector::from_pairs(vec![(1, 1.0), (base + 7, 2.0)]),
                SparseVector::default(),
            ],
            vec![Label::Spam, Label::Ham, Label::Ham],
            3,
        );
        for config in crate::features::weighting::every_config() {
            let hashed = config.hashed;
            let transform = config.fit(&data);
            let rows = InputRows::new(&transform, &data);
            assert_eq!(rows.len(), 3);
            let width = config.input_width(3);
            let w: Vec<f64> = (0..width).map(|j| (j % 5) as f64 - 1.5).collect();
            for (i, row) in data.rows.iter().enumerate() {
                let x = transform.apply(&row.counts(hashed));
                let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
                assert!(close(rows.dot(i, &w), x.dot(&w)), "{config:?} row {i}");
                assert!(close(rows.squared_norm(i), x.squared_norm()));
                let mut added = vec![0.0; width];
                rows.add_to(i, 2.0, &mut added);
                let mut expected = vec![0.0; width];
                for (id, v) in x.iter() {
                    expected[id as usize] += 2.0 * v;
                }
                assert!(added.iter().zip(&expected).all(|(a, b)| close(*a, *b)));
            }
        }
    }
}
