//! Batch fits by online passes: a linear model fitted by feeding the training messages to its
//! online update (`learn`) a few times, each pass in a seeded random order, from all weights 0.
//! What a model started from nothing would have learned from the training set (unless the
//! fit scales each column's steps, see [`super::LogisticRegressionParams::nb_scale`]); on wide binary
//! inputs (the hashed byte 4-grams) one pass costs one sparse sweep, far less than an exact
//! solver (see [`super::LogisticSolver::OnlinePasses`] and [`super::SvmSolver::OnlinePasses`]).

use crate::features::{Dataset, Row};
use crate::label::Label;
use rand::SeedableRng;
use rand::seq::SliceRandom;

/// Calls `learn` on the rows of `data` at `rows` (every row if `None`) with their labels,
/// `passes` times, each pass in a random order seeded by `seed` (the same orders for
/// the same seed and rows).
pub(crate) fn online_passes(
    data: &Dataset,
    rows: Option<&[usize]>,
    passes: usize,
    seed: u64,
    mut learn: impl FnMut(&Row, Label),
) {
    let mut order: Vec<usize> = rows.map_or_else(|| (0..data.len()).collect(), <[usize]>::to_vec);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..passes {
        order.shuffle(&mut rng);
        for &i in &order {
            learn(&data.rows[i], data.labels[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::SparseVector;

    #[test]
    fn every_row_is_learned_once_per_pass_in_a_seeded_order() {
        let data = Dataset::new(
            (0..5).map(|i| SparseVector::from_ids(vec![i])),
            vec![Label::Spam, Label::Ham, Label::Spam, Label::Ham, Label::Ham],
            5,
        );
        let seen = |seed| {
            let mut seen = Vec::new();
            online_passes(&data, None, 2, seed, |x, l| {
                seen.push((x.words().ids()[0], l))
            });
            seen
        };
        let first = seen(1);
        assert_eq!(first.len(), 10);
        for pass in first.chunks(5) {
            let mut ids: Vec<u32> = pass.iter().map(|(id, _)| *id).collect();
            ids.sort_unstable();
            assert_eq!(ids, [0, 1, 2, 3, 4]);
        }
        assert!(first.iter().all(|&(id, l)| data.labels[id as usize] == l));
        assert_eq!(first, seen(1));
        assert_ne!(first, seen(2));
        let mut some = Vec::new();
        online_passes(&data, Some(&[3, 1]), 1, 1, |x, _| {
            some.push(x.words().ids()[0])
        });
        some.sort_unstable();
        assert_eq!(some, [1, 3]);
    }
}
