//! A data set's rows as a linear model's solver sees them: each count row through a fitted
//! [`FeatureTransform`], without a transformed copy of the data where none is needed.
//!
//! Under binary weighting every input value of a row is the same number (1, or 1 over the
//! root of its number of entries when normalized), so the solver reads the count rows
//! themselves and that one number per row. A copy of the rows with the hashed byte 4-grams
//! (some 1,700 entries a message) was as large as the data, once per fit running at a time.
//! Other weightings compute a value per entry (a logarithm, an idf), which the solvers'
//! many passes would repeat: their rows are built once, as [`FeatureTransform::apply`] does.

use super::hashed::{HASHED_BASE, HASHED_BUCKETS, is_hashed};
use super::{Dataset, FeatureTransform, SparseVector, Weighting};
use std::sync::Arc;

/// The model input of every row of a data set (see the module doc). Row `i`'s entries are
/// those of `transform.apply(&data.rows[i])`, in another order.
pub(crate) struct InputRows<'a> {
    rows: Rows<'a>,
}

enum Rows<'a> {
    /// Binary weighting: the count rows, the hashed ones moved to the front of the input if
    /// the model sees them (else dropped), and each row's one value.
    Binary {
        rows: &'a [Arc<SparseVector>],
        hashed: bool,
        values: Vec<f64>,
    },
    /// Any other weighting: the rows built.
    Built(Vec<SparseVector>),
}

impl<'a> InputRows<'a> {
    /// The input rows of `data` under `transform`.
    pub fn new(transform: &FeatureTransform, data: &'a Dataset) -> InputRows<'a> {
        let config = transform.config();
        let rows = if config.weighting == Weighting::Binary {
            let values = data
                .rows
                .iter()
                .map(|row| {
                    let n = entries(row, config.hashed).len();
                    if config.l2_normalize && n > 0 {
                        // What `SparseVector::l2_normalize` makes of n ones.
                        1.0 / (n as f64).sqrt()
                    } else {
                        1.0
                    }
                })
                .collect();
            Rows::Binary {
                rows: &data.rows,
                hashed: config.hashed,
                values,
            }
        } else {
            Rows::Built(data.rows.iter().map(|r| transform.apply(r)).collect())
        };
        InputRows { rows }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match &self.rows {
            Rows::Binary { values, .. } => values.len(),
            Rows::Built(rows) => rows.len(),
        }
    }

    /// Row `i` dotted with `w` (input ids beyond `w` count as 0).
    pub fn dot(&self, i: usize, w: &[f64]) -> f64 {
        match &self.rows {
            Rows::Binary {
                rows,
                hashed,
                values,
            } => {
                let sum: f64 = entries(&rows[i], *hashed)
                    .iter()
                    .map(|&id| w.get(input_id(id, *hashed)).copied().unwrap_or(0.0))
                    .sum();
                sum * values[i]
            }
            Rows::Built(rows) => rows[i].dot(w),
        }
    }

    /// `w += step * row i`; `w` covers every input id.
    pub fn add_to(&self, i: usize, step: f64, w: &mut [f64]) {
        match &self.rows {
            Rows::Binary {
                rows,
                hashed,
                values,
            } => {
                let step = step * values[i];
                for &id in entries(&rows[i], *hashed) {
                    w[input_id(id, *hashed)] += step;
                }
            }
            Rows::Built(rows) => {
                for (id, v) in rows[i].iter() {
                    w[id as usize] += step * v;
                }
            }
        }
    }

    /// Row `i`'s squared Euclidean norm.
    pub fn squared_norm(&self, i: usize) -> f64 {
        match &self.rows {
            Rows::Binary {
                rows,
                hashed,
                values,
            } => entries(&rows[i], *hashed).len() as f64 * values[i] * values[i],
            Rows::Built(rows) => rows[i].squared_norm(),
        }
    }
}

/// The count ids of `row` a model sees: all of them if it sees hashed features, else those
/// below the hashed ones.
fn entries(row: &SparseVector, hashed: bool) -> &[u32] {
    if hashed {
        row.ids()
    } else {
        &row.ids()[..row.ids().partition_point(|&id| !is_hashed(id))]
    }
}

/// The model input id of count id `id` (see [`super::hashed`]).
fn input_id(id: u32, hashed: bool) -> usize {
    if !hashed {
        id as usize
    } else if is_hashed(id) {
        (id - HASHED_BASE) as usize
    } else {
        (id + HASHED_BUCKETS) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Label;
    use crate::features::FeatureConfig;

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
        for weighting in [
            Weighting::Binary,
            Weighting::Counts,
            Weighting::LogTf,
            Weighting::TfIdf,
        ] {
            for l2_normalize in [false, true] {
                for hashed in [false, true] {
                    let config = FeatureConfig {
                        weighting,
                        l2_normalize,
                        hashed,
                    };
                    let transform = config.fit(&data);
                    let rows = InputRows::new(&transform, &data);
                    assert_eq!(rows.len(), 3);
                    let width = config.input_width(3);
                    let w: Vec<f64> = (0..width).map(|j| (j % 5) as f64 - 1.5).collect();
                    for (i, row) in data.rows.iter().enumerate() {
                        let x = transform.apply(row);
                        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
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
    }
}
