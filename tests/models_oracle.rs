//! The four models against scikit-learn on the same small count matrix. The reference values
//! come from tests/oracle/make_fixtures.py (committed with its output, fixtures.json), so these
//! tests need no Python.

use crate::util::repo_path;
use spamsort::Label;
use spamsort::features::{Dataset, FeatureConfig, SparseVector};
use spamsort::models::*;

struct Oracle {
    data: Dataset,
    json: serde_json::Value,
}

fn oracle() -> Oracle {
    let text = std::fs::read_to_string(repo_path("tests/oracle/fixtures.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let x: Vec<Vec<f64>> = serde_json::from_value(json["X"].clone()).unwrap();
    let y: Vec<u8> = serde_json::from_value(json["y"].clone()).unwrap();
    let rows: Vec<SparseVector> = x
        .iter()
        .map(|r| {
            SparseVector::from_pairs(r.iter().enumerate().map(|(j, &v)| (j as u32, v)).collect())
        })
        .collect();
    let labels = y
        .iter()
        .map(|&c| if c == 1 { Label::Spam } else { Label::Ham })
        .collect();
    let n_features = x[0].len();
    Oracle {
        data: Dataset::new(rows, labels, n_features),
        json,
    }
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    serde_json::from_value(v.clone()).unwrap()
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// Compares a Naive Bayes model's per-class joint log likelihoods with scikit-learn's
/// `predict_joint_log_proba` (relative 1e-9), and its cached linear decision with their
/// difference.
fn assert_jll_matches(
    o: &Oracle,
    key: &str,
    jll: impl Fn(&SparseVector) -> [f64; 2],
    decision: impl Fn(&SparseVector) -> f64,
) {
    let expected: Vec<Vec<f64>> = serde_json::from_value(o.json[key].clone()).unwrap();
    for (row, exp) in o.data.rows.iter().map(|r| r.words()).zip(&expected) {
        let got = jll(row);
        for c in 0..2 {
            assert!(
                rel_close(got[c], exp[c], 1e-9),
                "{key} class {c}: {} vs sklearn {}",
                got[c],
                exp[c]
            );
        }
        // The cached linear form gives the same log-odds in O(tokens present).
        let d = decision(row);
        assert!(
            (d - (exp[1] - exp[0])).abs() < 1e-9 * (1.0 + exp[0].abs()),
            "{key} decision {d}"
        );
    }
}

#[test]
fn bernoulli_nb_joint_log_likelihood_matches_sklearn() {
    let o = oracle();
    let model = BernoulliNbParams {
        alpha: 1.0,
        max_features: None,
        scoring: NbScoring::TEXTBOOK,
    }
    .fit(&o.data)
    .unwrap();
    assert_jll_matches(
        &o,
        "bernoulli_jll",
        |x| model.joint_log_likelihood(x),
        |x| model.function().decision(x),
    );
}

#[test]
fn multinomial_nb_joint_log_likelihood_matches_sklearn() {
    let o = oracle();
    let params = MultinomialNbParams {
        alpha: 1.0,
        features: FeatureConfig::COUNTS,
        variant: NbVariant::Multinomial,
        scoring: NbScoring::TEXTBOOK,
    };
    let model = params.fit(&o.data).unwrap();
    assert_jll_matches(
        &o,
        "multinomial_jll",
        |x| model.joint_log_likelihood(x),
        |x| model.function().decision(x),
    );
}

#[test]
fn logistic_regression_coefficients_match_sklearn() {
    let o = oracle();
    let c = o.json["C"].as_f64().unwrap();
    {
        let solver = LogisticSolver::NewtonCg;
        let params = LogisticRegressionParams {
            c,
            tol: 1e-12,
            max_iter: 200,
            solver,
            features: FeatureConfig::COUNTS,
            ..LogisticRegressionParams::default()
        };
        let model = params.fit(&o.data).unwrap();
        let f = model.function();
        for (j, (w, e)) in f
            .weights
            .iter()
            .zip(floats(&o.json["logistic_coef"]))
            .enumerate()
        {
            assert!((w - e).abs() < 1e-4, "coef {j}: {w} vs sklearn {e}");
        }
        let b = o.json["logistic_intercept"].as_f64().unwrap();
        assert!(
            (f.bias - b).abs() < 1e-4,
            "intercept {} vs sklearn {b}",
            f.bias
        );
    }
}

#[test]
fn gradient_ascent_solver_approaches_the_same_optimum() {
    let o = oracle();
    let c = o.json["C"].as_f64().unwrap();
    let params = LogisticRegressionParams {
        c,
        tol: 1e-9,
        max_iter: 200_000,
        solver: LogisticSolver::GradientAscent { learning_rate: 0.5 },
        features: FeatureConfig::COUNTS,
        ..LogisticRegressionParams::default()
    };
    let f = params.fit(&o.data).unwrap();
    for (w, e) in f
        .function()
        .weights
        .iter()
        .zip(floats(&o.json["logistic_coef"]))
    {
        assert!((w - e).abs() < 1e-3, "{w} vs {e}");
    }
}

#[test]
fn linear_svc_hinge_decision_values_match_sklearn() {
    let o = oracle();
    let c = o.json["C"].as_f64().unwrap();
    let params = LinearSvmParams {
        c,
        loss: SvmLoss::Hinge,
        tol: 1e-10,
        max_iter: 1_000_000,
        features: FeatureConfig::COUNTS,
        // scikit-learn's LinearSVC: the textbook SVM on its input, unscaled.
        nb_scale: None,
        ..LinearSvmParams::default()
    };
    let model = params.fit(&o.data).unwrap();
    for (row, e) in (o.data.rows.iter().map(|r| r.words())).zip(floats(&o.json["svc_decision"])) {
        let d = model.function().decision(row);
        assert!((d - e).abs() < 1e-3, "decision {d} vs sklearn {e}");
    }
}
