//! The measures of the spam-filtering literature, computed from scores and true labels:
//! ROC AUC (ties count half), TREC's (1-AUC)%, ham and spam misclassification at a threshold,
//! and lam%, the logistic average misclassification of the TREC spam track.

use crate::label::Label;

pub use crate::models::auc::auc;

/// Confusion counts at a threshold: a message is called spam when its P(spam) is at or above
/// the threshold, as a verdict calls it ([`crate::Thresholds`]); anything else (ham or unsure)
/// is delivered, as `../shared/bench/metrics.py` counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    /// Spam called spam.
    pub true_spam: usize,
    /// Ham called spam (false positives).
    pub false_spam: usize,
    /// Ham called ham.
    pub true_ham: usize,
    /// Spam called ham (false negatives).
    pub false_ham: usize,
}

impl Confusion {
    /// Counts outcomes of `p_spam` against `labels` at `threshold`.
    pub fn at(p_spam: &[f64], labels: &[Label], threshold: f64) -> Confusion {
        let calls = p_spam.iter().map(|&p| p >= threshold);
        Confusion::of_calls(calls.zip(labels.iter().copied()))
    }

    /// Confusion counts of messages each called spam or not, with its label.
    pub fn of_calls(calls: impl Iterator<Item = (bool, Label)>) -> Confusion {
        let mut c = Confusion::default();
        for (spam, l) in calls {
            match (l, spam) {
                (Label::Spam, true) => c.true_spam += 1,
                (Label::Spam, false) => c.false_ham += 1,
                (Label::Ham, true) => c.false_spam += 1,
                (Label::Ham, false) => c.true_ham += 1,
            }
        }
        c
    }

    /// Ham misclassification: % of ham called spam.
    pub fn ham_miss_pct(&self) -> f64 {
        pct(self.false_spam, self.false_spam + self.true_ham)
    }

    /// Spam misclassification: % of spam called ham.
    pub fn spam_miss_pct(&self) -> f64 {
        pct(self.false_ham, self.false_ham + self.true_spam)
    }

    /// Logistic average misclassification, in %: logit^-1((logit(hm) + logit(sm)) / 2), each
    /// rate smoothed to (misses + 0.5) / (messages + 1), so that neither is 0 or 1 (one
    /// perfect class would make lam% zero) and a class with few misses is not treated as
    /// better than its count shows. This is how the peers' evaluation harness
    /// (`../shared/bench/metrics.py`) counts it, so `eval` and the scoreboard agree.
    pub fn lam_pct(&self) -> f64 {
        let rate = |miss: usize, n: usize| (miss as f64 + 0.5) / (n as f64 + 1.0);
        let hm = rate(self.false_spam, self.false_spam + self.true_ham);
        let sm = rate(self.false_ham, self.false_ham + self.true_spam);
        let logit = |p: f64| (p / (1.0 - p)).ln();
        100.0 * super::super::models::math::sigmoid((logit(hm) + logit(sm)) / 2.0)
    }

    /// % of all messages classified correctly.
    pub fn accuracy_pct(&self) -> f64 {
        let n = self.true_spam + self.false_spam + self.true_ham + self.false_ham;
        pct(self.true_spam + self.true_ham, n)
    }

    /// Of the messages called spam, the fraction that is spam.
    pub fn precision(&self) -> f64 {
        ratio(self.true_spam, self.true_spam + self.false_spam)
    }

    /// Of the spam, the fraction called spam.
    pub fn recall(&self) -> f64 {
        ratio(self.true_spam, self.true_spam + self.false_ham)
    }

    /// Harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

/// Spam misclassification % at the threshold that misclassifies at most `ham_pct` % of ham:
/// the cut is the score of the highest-scoring ham allowed through, ties going against spam.
pub fn spam_miss_at_ham_pct(scores: &[f64], labels: &[Label], ham_pct: f64) -> f64 {
    let mut ham: Vec<f64> = scores
        .iter()
        .zip(labels)
        .filter(|(_, l)| **l == Label::Ham)
        .map(|(s, _)| *s)
        .collect();
    ham.sort_by(|a, b| b.total_cmp(a));
    let allowed = ((ham_pct / 100.0) * ham.len() as f64).floor() as usize;
    // Every score strictly above the cut is called spam; the cut is the (allowed+1)-th highest ham.
    let cut = match ham.get(allowed) {
        Some(&c) => c,
        None => f64::NEG_INFINITY,
    };
    let spam: Vec<f64> = scores
        .iter()
        .zip(labels)
        .filter(|(_, l)| **l == Label::Spam)
        .map(|(s, _)| *s)
        .collect();
    pct(spam.iter().filter(|&&s| s <= cut).count(), spam.len())
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * ratio(a, b)
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Label::{Ham, Spam};

    #[test]
    fn auc_by_hand_with_ties() {
        // Pairs (spam, ham): s=0.9 beats both hams; s=0.4 ties h=0.4 (1/2) and beats h=0.1.
        let scores = [0.9, 0.4, 0.4, 0.1];
        let labels = [Spam, Spam, Ham, Ham];
        assert!((auc(&scores, &labels) - 3.5 / 4.0).abs() < 1e-12);
        assert_eq!(auc(&[1.0, 0.0], &[Spam, Ham]), 1.0);
        assert_eq!(auc(&[0.0, 1.0], &[Spam, Ham]), 0.0);
        assert_eq!(auc(&[0.5, 0.5, 0.5], &[Spam, Ham, Ham]), 0.5);
        assert!(auc(&[0.5], &[Spam]).is_nan());
    }

    #[test]
    fn confusion_and_lam_by_hand() {
        let p = [0.9, 0.8, 0.2, 0.6, 0.1, 0.3, 0.05, 0.4];
        let l = [Spam, Spam, Spam, Ham, Ham, Ham, Ham, Ham];
        let c = Confusion::at(&p, &l, 0.5);
        assert_eq!(
            (c.true_spam, c.false_ham, c.false_spam, c.true_ham),
            (2, 1, 1, 4)
        );
        assert!((c.ham_miss_pct() - 20.0).abs() < 1e-12);
        assert!((c.spam_miss_pct() - 100.0 / 3.0).abs() < 1e-12);
        // Smoothed: hm = 1.5 / 6 = 1/4, sm = 1.5 / 4 = 3/8; lam = logit^-1((logit(1/4) +
        // logit(3/8)) / 2) = 1 / (1 + sqrt(3 * 5/3)) = 1 / (1 + sqrt(5)).
        assert!((c.lam_pct() - 100.0 / (1.0 + 5f64.sqrt())).abs() < 1e-9);
        assert!((c.accuracy_pct() - 75.0).abs() < 1e-12);
        assert!((c.precision() - 2.0 / 3.0).abs() < 1e-12);
        assert!((c.recall() - 2.0 / 3.0).abs() < 1e-12);
        // Perfect classes: zero misses count as half a message out of one more than there are.
        let c = Confusion::at(
            &[0.9, 0.1, 0.1, 0.1, 0.1, 0.1],
            &[Spam, Ham, Ham, Ham, Ham, Ham],
            0.5,
        );
        let hm: f64 = 0.5 / 6.0;
        let sm: f64 = 0.5 / 2.0;
        let expected = 100.0 / (1.0 + ((1.0 - hm) / hm * (1.0 - sm) / sm).sqrt());
        assert!((c.lam_pct() - expected).abs() < 1e-9, "{}", c.lam_pct());
    }

    #[test]
    fn spam_is_what_the_verdict_calls_spam() {
        // A coin toss (P(spam) 0.5: every model learned from nothing scores its first
        // messages so) is unsure under the default verdict, not ham called spam; at the
        // threshold itself a message is spam.
        let c = Confusion::at(&[0.5, 0.5, 0.98, 0.97], &[Ham, Spam, Spam, Ham], 0.98);
        assert_eq!(
            (c.true_spam, c.false_ham, c.false_spam, c.true_ham),
            (1, 1, 0, 2)
        );
    }

    #[test]
    fn spam_miss_at_fixed_ham_rate() {
        // 10 ham; at 10% ham misclassification one ham (the 0.95) may be called spam; the cut is
        // the next ham score, 0.5: spam at or below it are missed.
        let mut scores = vec![0.95, 0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1, 0.0, 0.0];
        let mut labels = vec![Ham; 10];
        scores.extend([0.99, 0.6, 0.5, 0.2]);
        labels.extend([Spam; 4]);
        assert!((spam_miss_at_ham_pct(&scores, &labels, 10.0) - 50.0).abs() < 1e-12);
        assert!((spam_miss_at_ham_pct(&scores, &labels, 0.0) - 75.0).abs() < 1e-12);
    }
}
