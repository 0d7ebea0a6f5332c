//! Class labels and the currency every model answers in: [`SpamScore`], P(spam) in [0, 1], and
//! the [`Thresholds`] that turn it into a [`Verdict`].

use serde::{Deserialize, Serialize};
use std::fmt;

/// The true class of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Label {
    /// Wanted mail.
    Ham,
    /// Unwanted mail.
    Spam,
}

impl Label {
    /// Both labels, ham first; `Label::index` agrees with this order.
    pub const ALL: [Label; 2] = [Label::Ham, Label::Spam];

    /// 0 for ham, 1 for spam: the index used for per-class arrays.
    pub fn index(self) -> usize {
        match self {
            Label::Ham => 0,
            Label::Spam => 1,
        }
    }

    /// The other class.
    pub fn other(self) -> Label {
        match self {
            Label::Ham => Label::Spam,
            Label::Spam => Label::Ham,
        }
    }

    /// Lowercase name, as used on the command line and in TREC index files.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Ham => "ham",
            Label::Spam => "spam",
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Label {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "ham" => Ok(Label::Ham),
            "spam" => Ok(Label::Spam),
            other => Err(format!("unknown label {other:?} (expected spam or ham)")),
        }
    }
}

/// P(spam) for one message. Always finite and inside [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct SpamScore(f64);

impl SpamScore {
    /// Wraps a probability, clamping it into [0, 1]; NaN becomes 0.5 (no opinion).
    pub fn new(p: f64) -> Self {
        if p.is_nan() {
            SpamScore(0.5)
        } else {
            SpamScore(p.clamp(0.0, 1.0))
        }
    }

    /// The probability.
    pub fn p_spam(self) -> f64 {
        self.0
    }
}

/// What the filter says about a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// P(spam) at or above the spam threshold.
    Spam,
    /// P(spam) below the ham threshold.
    Ham,
    /// In between: the filter is not sure.
    Unsure,
}

impl Verdict {
    /// Lowercase name as printed by `classify`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Spam => "spam",
            Verdict::Ham => "ham",
            Verdict::Unsure => "unsure",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Cut-offs on P(spam): `p >= spam` is spam, `p < ham` is ham, anything between is unsure.
/// Invariant: `0 <= ham <= spam < 1`; `ham == spam` means there is no unsure band. Checked
/// when read back too (a model file, a dump's `settings` line), as [`Thresholds::new`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ThresholdFields")]
pub struct Thresholds {
    spam: f64,
    ham: f64,
}

/// The fields of [`Thresholds`] as stored, before they are checked (the same encoding).
#[derive(Deserialize)]
struct ThresholdFields {
    spam: f64,
    ham: f64,
}

impl TryFrom<ThresholdFields> for Thresholds {
    type Error = String;

    fn try_from(t: ThresholdFields) -> Result<Self, String> {
        Thresholds::new(t.spam, t.ham).map_err(|e| match e {
            crate::Error::Config(reason) => reason,
            other => other.to_string(),
        })
    }
}

impl Default for Thresholds {
    /// Spam at 0.98 and above (ham first: chosen so that at most about 0.1% of ham is called spam; see the README), ham below 0.5, unsure between.
    fn default() -> Self {
        Thresholds {
            spam: 0.98,
            ham: 0.5,
        }
    }
}

impl Thresholds {
    /// Builds thresholds, refusing values outside [0, 1], `ham > spam`, and a spam cut-off of
    /// 1: it is no cut-off (a P(spam) rounds to 1 as readily as to 0.99999), and the spamd
    /// score, the distance from the cut-off in log-odds, would put every message at the bottom
    /// of its scale, an unsure one among the surest ham.
    pub fn new(spam: f64, ham: f64) -> crate::Result<Self> {
        let ok = (0.0..1.0).contains(&spam) && (0.0..=1.0).contains(&ham) && ham <= spam;
        if ok {
            Ok(Thresholds { spam, ham })
        } else {
            Err(crate::Error::Config(format!(
                "thresholds need 0 <= ham <= spam < 1, got ham={ham} spam={spam}"
            )))
        }
    }

    /// The spam cut-off.
    pub fn spam(&self) -> f64 {
        self.spam
    }

    /// The ham cut-off.
    pub fn ham(&self) -> f64 {
        self.ham
    }

    /// The verdict for a score.
    pub fn verdict(&self, score: SpamScore) -> Verdict {
        let p = score.p_spam();
        if p >= self.spam {
            Verdict::Spam
        } else if p < self.ham {
            Verdict::Ham
        } else {
            Verdict::Unsure
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_bands() {
        let t = Thresholds::new(0.9, 0.5).unwrap();
        assert_eq!(t.verdict(SpamScore::new(0.95)), Verdict::Spam);
        assert_eq!(t.verdict(SpamScore::new(0.9)), Verdict::Spam);
        assert_eq!(t.verdict(SpamScore::new(0.7)), Verdict::Unsure);
        assert_eq!(t.verdict(SpamScore::new(0.49)), Verdict::Ham);
        assert!(Thresholds::new(0.4, 0.5).is_err());
        assert!(Thresholds::new(1.5, 0.5).is_err());
        // Regression: a spam cut-off of 1 gave every message the score -20.0.
        assert!(Thresholds::new(1.0, 0.5).is_err());
        assert!(Thresholds::new(0.999_999, 0.5).is_ok());
    }

    /// Regression: thresholds were read back unchecked (a hand-edited dump, a crafted model
    /// file), so a spam cut-off of 7 made every message unsure.
    #[test]
    fn thresholds_are_checked_when_read_back() {
        let good: Thresholds = serde_json::from_str(r#"{"spam":0.9,"ham":0.5}"#).unwrap();
        assert_eq!(good, Thresholds::new(0.9, 0.5).unwrap());
        for bad in [r#"{"spam":7.0,"ham":-3.0}"#, r#"{"spam":0.1,"ham":0.9}"#] {
            let err = serde_json::from_str::<Thresholds>(bad).unwrap_err();
            assert!(err.to_string().contains("thresholds need"), "{err}");
        }
        // The stored encoding is unchanged, and checked in a model file's encoding too.
        let bytes = postcard::to_stdvec(&Thresholds::default()).unwrap();
        let back: Thresholds = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, Thresholds::default());
        let nan = postcard::to_stdvec(&(f64::NAN, 0.5)).unwrap();
        assert!(postcard::from_bytes::<Thresholds>(&nan).is_err());
    }

    #[test]
    fn score_is_clamped() {
        assert_eq!(SpamScore::new(f64::NAN).p_spam(), 0.5);
        assert_eq!(SpamScore::new(2.0).p_spam(), 1.0);
        assert_eq!(SpamScore::new(-1.0).p_spam(), 0.0);
    }
}
