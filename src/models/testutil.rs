//! One checker run against all four models: the contract of [`Classifier`] that every model
//! must keep, on a synthetic corpus where the answer is known.

use super::linear::LinearFunction;
use super::{Classifier, ModelKind, ModelParams};
use crate::features::{Dataset, SparseVector, squared_log_count_ratios};
use crate::label::Label;
use rand::{Rng, SeedableRng};

/// 200 messages over 50 features: features 0..10 lean spam, 10..20 lean ham, the rest noise.
pub fn synthetic() -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for i in 0..200 {
        let label = if i % 3 == 0 { Label::Spam } else { Label::Ham };
        let lean = if label == Label::Spam { 0 } else { 10 };
        let mut ids = Vec::new();
        for _ in 0..rng.random_range(1..12) {
            let id = if rng.random_bool(0.6) {
                lean + rng.random_range(0..10)
            } else {
                rng.random_range(20..50)
            };
            ids.push(id);
        }
        rows.push(SparseVector::from_ids(ids));
        labels.push(label);
    }
    Dataset::new(rows, labels, 50)
}

/// The scales of a Naive Bayes log-count-ratio scaling with smoothing 1 of `data`'s words
/// (|r_j| per vocabulary id, no hashed features), and `data` with every column multiplied by
/// its scale: what a textbook fit on the second must match a scaled fit on `data` by.
pub fn explicitly_scaled(data: &Dataset) -> (Vec<f64>, Dataset) {
    let s: Vec<f64> = squared_log_count_ratios(data, None, false, 1.0)
        .iter()
        .map(|r2| r2.sqrt())
        .collect();
    let rows = (data.rows.iter()).map(|r| {
        let x = r.words().iter().map(|(j, v)| (j, v * s[j as usize]));
        SparseVector::from_pairs(x.collect())
    });
    let scaled = Dataset::new(rows, data.labels.clone(), data.n_features);
    (s, scaled)
}

/// Asserts that `folded`, fitted with scales `s`, is `reference` (fitted on the explicitly
/// scaled rows) with each weight multiplied by its scale, within `tolerance`.
pub fn assert_folded(
    folded: &LinearFunction,
    reference: &LinearFunction,
    s: &[f64],
    tolerance: f64,
) {
    for (j, scale) in s.iter().enumerate() {
        let (u, w) = (folded.weights[j], reference.weights[j]);
        assert!(
            (u - scale * w).abs() < tolerance,
            "weight {j}: {u} vs {}",
            scale * w
        );
    }
    assert!((folded.bias - reference.bias).abs() < tolerance);
}

/// Every model with its defaults, and every other solver. Logistic regression's default, one
/// pass with the small step meant for thousands of hashed 4-grams per message, learns little
/// from 200 messages of a few features: its passes take a step for such rows here.
fn contract_params() -> Vec<ModelParams> {
    use super::{LinearSvmParams, LogisticRegressionParams, LogisticSolver, SvmSolver};
    use crate::features::FeatureConfig;
    let mut all: Vec<ModelParams> = ModelKind::ALL
        .iter()
        .map(|&k| ModelParams::default_for(k))
        .collect();
    all[3] = ModelParams::LogisticRegression(LogisticRegressionParams {
        solver: LogisticSolver::OnlinePasses {
            passes: 3,
            rate: 0.5,
        },
        ..LogisticRegressionParams::default()
    });
    all.push(ModelParams::LogisticRegression(LogisticRegressionParams {
        solver: LogisticSolver::NewtonCg,
        features: FeatureConfig::TF_IDF_L2,
        ..LogisticRegressionParams::default()
    }));
    all.push(ModelParams::LinearSvm(LinearSvmParams {
        solver: SvmSolver::OnlinePasses { passes: 3 },
        features: FeatureConfig::BINARY_HASHED,
        ..LinearSvmParams::default()
    }));
    all
}

#[test]
fn every_model_keeps_the_classifier_contract() {
    let data = synthetic();
    for params in contract_params() {
        let kind = params.kind();
        let model = params.fit(&data, 1).unwrap();
        assert_eq!(model.model.kind(), kind);
        let mut correct = 0;
        for (x, &label) in data.rows.iter().map(|r| r.words()).zip(&data.labels) {
            let d = model.decision(x);
            let p = model.score(x).p_spam();
            assert!(
                d.is_finite() && (0.0..=1.0).contains(&p),
                "{kind}: d={d} p={p}"
            );
            let sum: f64 = model.contributions(x).iter().map(|(_, c)| c).sum();
            let bias = model.model.function().bias;
            assert!(
                (sum + bias - d).abs() < 1e-9 * (1.0 + d.abs()),
                "{kind}: contributions add up"
            );
            if (p >= 0.5) == (label == Label::Spam) {
                correct += 1;
            }
        }
        assert!(
            correct >= 180,
            "{kind}: only {correct}/200 right on easy data"
        );
        // Empty messages and unseen features are scored, not rejected.
        let empty = model.score(&SparseVector::default()).p_spam();
        assert!(empty.is_finite());
        let unseen = SparseVector::from_ids(vec![10_000]);
        assert_eq!(
            model.decision(&unseen),
            model.decision(&SparseVector::default())
        );
        // P(spam) is monotone in the decision value.
        let spammy = SparseVector::from_ids(vec![0, 1, 2, 3]);
        let hammy = SparseVector::from_ids(vec![10, 11, 12, 13]);
        assert!(model.decision(&spammy) > model.decision(&hammy), "{kind}");
        assert!(
            model.score(&spammy).p_spam() >= model.score(&hammy).p_spam(),
            "{kind}"
        );
        // Deterministic.
        assert_eq!(model, params.fit(&data, 1).unwrap(), "{kind}");
    }
}

/// Checks a model that learned `data` one message at a time from nothing against the model
/// fitted on it: the same decisions (to rounding) on `probes`, and, scored from its counts
/// before a refresh and by its refreshed function after, the very same bits.
pub fn assert_learned_equals_fitted(
    data: &Dataset,
    fitted: &super::AnyModel,
    mut learned: super::AnyModel,
    probes: &[Vec<crate::features::FeatureId>],
) {
    for (x, &label) in data.rows.iter().map(|r| r.words()).zip(&data.labels) {
        learned.learn(x, label, false).unwrap();
    }
    let xs: Vec<SparseVector> = probes
        .iter()
        .map(|ids| SparseVector::from_ids(ids.clone()))
        .collect();
    let live: Vec<f64> = xs.iter().map(|x| learned.decision(x)).collect();
    for (x, b) in xs.iter().zip(&live) {
        let a = fitted.decision(x);
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    learned.refresh();
    for (x, b) in xs.iter().zip(&live) {
        assert_eq!(learned.decision(x), *b);
    }
}

/// Drops features 3, 12, 25..40 and 49 of [`synthetic`] (every fifth message's features are
/// all kept): the NB models, pruned, are the models fitted on the pruned data; the linear
/// models score a message over kept features as before.
#[test]
fn pruned_nb_models_equal_models_fitted_on_the_kept_counts_and_linear_scores_stay() {
    use super::multinomial_nb::{MultinomialNbParams, NbVariant};
    use crate::features::FeatureRemap;
    let data = synthetic();
    let keep: Vec<bool> = (0..50)
        .map(|j| ![3, 12, 49].contains(&j) && !(25..40).contains(&j))
        .collect();
    let remap = FeatureRemap::new(&keep);
    let pruned_data = Dataset::new(
        data.rows.iter().map(|x| remap.vector(x.words())),
        data.labels.clone(),
        remap.kept(),
    );
    let kept_rows: Vec<(&SparseVector, SparseVector)> = data
        .rows
        .iter()
        .map(|r| r.words())
        .zip(pruned_data.rows.iter().map(|r| r.words()))
        .filter(|(x, y)| x.nnz() == y.nnz())
        .map(|(x, y)| (x, y.clone()))
        .collect();
    assert!(
        kept_rows.len() > 20,
        "enough messages with every feature kept"
    );
    let complement = ModelParams::MultinomialNb(MultinomialNbParams {
        variant: NbVariant::Complement,
        ..MultinomialNbParams::default()
    });
    let nb = [
        ModelParams::default_for(ModelKind::BernoulliNb),
        ModelParams::default_for(ModelKind::MultinomialNb),
        complement,
    ];
    for params in nb {
        let mut model = params.fit_uncalibrated(&data).unwrap();
        model.remap(&remap);
        let refit = params.fit_uncalibrated(&pruned_data).unwrap();
        for x in pruned_data.rows.iter().map(|r| r.words()) {
            let (a, b) = (model.decision(x), refit.decision(x));
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "{params:?}: {a} vs {b}"
            );
        }
    }
    for kind in [ModelKind::LinearSvm, ModelKind::LogisticRegression] {
        let mut model = ModelParams::default_for(kind)
            .fit_uncalibrated(&data)
            .unwrap();
        let before: Vec<f64> = kept_rows.iter().map(|(x, _)| model.decision(x)).collect();
        model.remap(&remap);
        let after: Vec<f64> = kept_rows.iter().map(|(_, y)| model.decision(y)).collect();
        assert_eq!(before, after, "{kind}");
    }
}
