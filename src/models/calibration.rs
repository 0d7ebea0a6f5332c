//! Platt scaling: P(spam) = 1 / (1 + exp(A d + B)) fitted to held-out decision values d, with
//! Platt's smoothed targets and the Newton method with backtracking of Lin, Lin and Weng
//! (2007), which is stable where Platt's original was not. Turns an SVM margin (or any score)
//! into a probability, so thresholds mean the same for every model.

use crate::label::Label;
use serde::{Deserialize, Serialize};

/// A sigmoid map from decision values to P(spam).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Slope (negative when larger decisions mean spam).
    pub a: f64,
    /// Offset.
    pub b: f64,
}

impl Calibration {
    /// P(spam) = sigmoid(d): for models whose decision value already is a log-odds.
    pub const IDENTITY: Calibration = Calibration { a: -1.0, b: 0.0 };

    /// P(spam) for a decision value.
    pub fn p_spam(&self, decision: f64) -> f64 {
        super::math::sigmoid(self.log_odds(decision))
    }

    /// ln(P(spam) / P(ham)) for a decision value: P(spam) before the sigmoid, so it keeps
    /// ranking messages where P(spam) rounds to 0 or 1.
    pub fn log_odds(&self, decision: f64) -> f64 {
        -(self.a * decision + self.b)
    }

    /// Fits A and B to decision values with their true labels.
    pub fn fit(decisions: &[f64], labels: &[Label]) -> Calibration {
        let n_pos = labels.iter().filter(|&&l| l == Label::Spam).count() as f64;
        let n_neg = labels.len() as f64 - n_pos;
        let hi = (n_pos + 1.0) / (n_pos + 2.0);
        let lo = 1.0 / (n_neg + 2.0);
        let t: Vec<f64> = labels
            .iter()
            .map(|&l| if l == Label::Spam { hi } else { lo })
            .collect();
        let objective = |a: f64, b: f64| -> f64 {
            decisions
                .iter()
                .zip(&t)
                .map(|(&d, &ti)| {
                    let f = a * d + b;
                    // -[t ln p + (1 - t) ln(1 - p)] with p = 1 / (1 + e^f), stably.
                    if f >= 0.0 {
                        ti * f + (-f).exp().ln_1p()
                    } else {
                        (ti - 1.0) * f + f.exp().ln_1p()
                    }
                })
                .sum()
        };
        let (mut a, mut b) = (0.0, ((n_neg + 1.0) / (n_pos + 1.0)).ln());
        let mut fval = objective(a, b);
        let sigma = 1e-12;
        for _ in 0..100 {
            let (mut h11, mut h22, mut h21, mut g1, mut g2) = (sigma, sigma, 0.0, 0.0, 0.0);
            for (&d, &ti) in decisions.iter().zip(&t) {
                let f = a * d + b;
                let (p, q) = if f >= 0.0 {
                    let e = (-f).exp();
                    (e / (1.0 + e), 1.0 / (1.0 + e))
                } else {
                    let e = f.exp();
                    (1.0 / (1.0 + e), e / (1.0 + e))
                };
                let d2 = p * q;
                h11 += d * d * d2;
                h22 += d2;
                h21 += d * d2;
                let d1 = ti - p;
                g1 += d * d1;
                g2 += d1;
            }
            if g1.abs() < 1e-5 && g2.abs() < 1e-5 {
                break;
            }
            let det = h11 * h22 - h21 * h21;
            let (da, db) = (-(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det);
            let gd = g1 * da + g2 * db;
            let mut step = 1.0;
            while step >= 1e-10 {
                let (na, nb) = (a + step * da, b + step * db);
                let nf = objective(na, nb);
                if nf < fval + 1e-4 * step * gd {
                    (a, b, fval) = (na, nb, nf);
                    break;
                }
                step /= 2.0;
            }
            if step < 1e-10 {
                break;
            }
        }
        Calibration { a, b }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separable_scores_map_to_confident_probabilities() {
        let d = [-3.0, -2.0, -1.5, -1.0, 1.0, 1.5, 2.0, 3.0, -0.2, 0.3];
        let l = [
            Label::Ham,
            Label::Ham,
            Label::Ham,
            Label::Ham,
            Label::Spam,
            Label::Spam,
            Label::Spam,
            Label::Spam,
            Label::Spam,
            Label::Ham,
        ];
        let c = Calibration::fit(&d, &l);
        assert!(c.a < 0.0, "larger margins mean spam: {c:?}");
        assert!(c.p_spam(3.0) > 0.9 && c.p_spam(-3.0) < 0.1);
        assert!(c.p_spam(1.0) > c.p_spam(0.0) && c.p_spam(0.0) > c.p_spam(-1.0));
        assert_eq!(Calibration::IDENTITY.p_spam(0.0), 0.5);
        assert!(
            (Calibration::IDENTITY.p_spam(2.0) - super::super::math::sigmoid(2.0)).abs() < 1e-15
        );
    }
}
