//! The scoring policy every front end applies the same way: which trained model answers, where
//! the verdict cut-offs lie, and how the verdict is written into a message's header.
//!
//! `classify`, `filter`, `explain`, `learn --if-wrong`, the maildir daemon and the spamd server
//! all take one [`Policy`] (built by the CLI from the system config, the user's config,
//! `--config FILE` and flags, each over the one before) and ask it, so one message gets one
//! verdict and one score whichever way it arrives.
//!
//! **One score scale.** *Probability* is P(spam), what every model answers. *Score* is a
//! spamd-style score derived from it ([`score`]): `5 + ln(P/(1−P)) − ln(t/(1−t))` for the
//! spam threshold `t`, rounded to one decimal and bounded to
//! [[`MIN_SCORE`], [`MAX_SCORE`]]. So a message is spam exactly when its score reaches
//! [`REQUIRED_SCORE`] (5.0, spamd's), each point is a factor of e in the odds, and graded
//! MTA rules (Exim's tag at 5, reject at 15) mean the same for every model, Naive Bayes
//! included. Headers, `classify`, `explain` and spamd answers all print this score.
//!
//! [`HeaderStyle`] says which fields go in (SpamAssassin's `X-Spam-Flag`, `X-Spam-Level`,
//! `X-Spam-Status`, an unsure marker, optionally a subject tag and a bogofilter-style
//! `X-Bogosity`) under which name prefix; [`crate::filter::stamp`] puts them in without
//! touching any other byte.

use super::stamp::{self, Unmarkable};
use super::{Classification, SpamFilter};
use crate::error::{Error, Result};
use crate::label::{Thresholds, Verdict};
use crate::models::ModelKind;
use crate::tokenize::VERDICT_PREFIX;

/// The score at and above which a message is spam: spamd's `required`.
pub const REQUIRED_SCORE: f64 = 5.0;
/// The lowest score: 25 points (a factor of e^25 in the odds) below [`REQUIRED_SCORE`].
pub const MIN_SCORE: f64 = -20.0;
/// The highest score: 25 points above [`REQUIRED_SCORE`], room for graded rules up to 30.
pub const MAX_SCORE: f64 = 30.0;

/// The default field-name prefix, SpamAssassin's.
pub const DEFAULT_PREFIX: &str = "X-Spam-";
/// The subject tag `--subject-tag` gives without a value, SpamAssassin's usual one.
pub const DEFAULT_SUBJECT_TAG: &str = "***SPAM***";
/// The longest header prefix or subject tag accepted, in bytes.
const MAX_SETTING_BYTES: usize = 64;
/// The suffixes of the fields a [`HeaderStyle`] writes after its prefix (besides
/// `X-Bogosity`, which has no prefix): each is removed from incoming mail first.
const OWNED_SUFFIXES: [&str; 4] = ["Flag", "Level", "Status", "Unsure"];

/// The spamd-style score of a classification under a spam threshold (see the module docs):
/// bounded, rounded to one decimal, and consistent with the verdict (a spam's score is at
/// least 5.0, anything else's at most 4.9, also when rounding or a model that has not learned
/// both classes would say otherwise).
pub fn score(c: &Classification, spam_threshold: f64) -> f64 {
    let t = spam_threshold;
    let raw = REQUIRED_SCORE + c.log_odds - (t / (1.0 - t)).ln();
    let bounded = if raw.is_nan() {
        0.0
    } else {
        raw.clamp(MIN_SCORE, MAX_SCORE)
    };
    let rounded = (bounded * 10.0).round() / 10.0;
    if c.verdict == Verdict::Spam {
        rounded.max(REQUIRED_SCORE)
    } else {
        rounded.min(REQUIRED_SCORE - 0.1)
    }
}

/// Which model answers, where the verdict cut-offs lie, and how verdicts are written.
/// Unset parts fall back to the model file's (its active model, its thresholds).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Policy {
    classifier: Option<ModelKind>,
    spam_threshold: Option<f64>,
    ham_threshold: Option<f64>,
    /// How verdicts are written into headers.
    pub headers: HeaderStyle,
}

impl Policy {
    /// A policy; thresholds given are checked against each other and, for one given alone,
    /// against the default of the other (the model file's is checked when it is applied).
    pub fn new(
        classifier: Option<ModelKind>,
        spam_threshold: Option<f64>,
        ham_threshold: Option<f64>,
        headers: HeaderStyle,
    ) -> Result<Policy> {
        let policy = Policy {
            classifier,
            spam_threshold,
            ham_threshold,
            headers,
        };
        policy.thresholds(Thresholds::default())?;
        Ok(policy)
    }

    /// The model asked for, if not the model file's active one.
    pub fn classifier(&self) -> Option<ModelKind> {
        self.classifier
    }

    /// The thresholds to use with a model file whose own are `file`: the policy's where set.
    pub fn thresholds(&self, file: Thresholds) -> Result<Thresholds> {
        if self.spam_threshold.is_none() && self.ham_threshold.is_none() {
            return Ok(file);
        }
        Thresholds::new(
            self.spam_threshold.unwrap_or(file.spam()),
            self.ham_threshold.unwrap_or(file.ham()),
        )
    }

    /// The model that answers for `filter`, checked to be in it.
    fn model(&self, filter: &SpamFilter) -> Result<ModelKind> {
        let kind = self.classifier.unwrap_or(filter.active());
        if filter.has(kind) {
            return Ok(kind);
        }
        Err(Error::Config(format!(
            "the classifier {kind} is not in the model file (it holds {}): train it with \
                 `spamsort train --models ...` or choose another",
            filter
                .model_kinds()
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// Makes `filter` answer as the policy says (its active model and thresholds replaced in
    /// memory; a filter changed so must not be saved). What the long-running front ends do
    /// with each filter they load.
    pub fn apply(&self, filter: &mut SpamFilter) -> Result<()> {
        let kind = self.model(filter)?;
        let thresholds = self.thresholds(filter.thresholds())?;
        filter.set_active(kind)?;
        filter.set_thresholds(thresholds);
        Ok(())
    }

    /// Classifies a message with `filter` as the policy says, leaving the filter as it is
    /// (what `learn --if-wrong` does with the filter it is about to save).
    pub fn classify(&self, filter: &SpamFilter, raw: &[u8]) -> Result<Classification> {
        let kind = self.model(filter)?;
        let thresholds = self.thresholds(filter.thresholds())?;
        let c = filter.classify_with(raw, kind).ok_or_else(|| {
            Error::Config(format!("the classifier {kind} is not in the model file"))
        })?;
        Ok(c.judged(thresholds, filter.summary().messages))
    }

    /// Opens the scorer of the policy's model over `file` with the policy's thresholds.
    pub fn scorer<'a>(
        &self,
        file: &'a super::scorer::ScorerFile,
    ) -> Result<super::scorer::Scorer<'a>> {
        let mut scorer = file.scorer()?;
        let thresholds = self.thresholds(scorer.thresholds())?;
        scorer.set_thresholds(thresholds);
        Ok(scorer)
    }
}

/// How a verdict is written into a message's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderStyle {
    prefix: String,
    subject_tag: Option<String>,
    bogosity: bool,
}

impl Default for HeaderStyle {
    /// SpamAssassin's field names, no subject tag, no `X-Bogosity`.
    fn default() -> Self {
        HeaderStyle {
            prefix: DEFAULT_PREFIX.to_string(),
            subject_tag: None,
            bogosity: false,
        }
    }
}

impl HeaderStyle {
    /// A header style: `prefix` starts every field name (`X-Spam-` gives `X-Spam-Flag`; only
    /// fields of these names are removed from incoming mail, so a prefix such as `X-Spamsort-`
    /// leaves an upstream SpamAssassin's fields alone); `subject_tag` is put before the
    /// subject of spam (`None` or empty: subjects are left alone); `bogosity` adds a
    /// bogofilter-style `X-Bogosity` field. Refuses a prefix that cannot start a field name
    /// (printable ASCII but `:`) and a tag that is not printable ASCII, and either over 64
    /// bytes.
    ///
    /// Also refuses a prefix that does not start with `X-Spam` (in any case): the tokenizer
    /// leaves out fields of such names (see `crate::tokenize`), so spamsort's verdicts, its
    /// own and a sender's forged ones, are no evidence about a message and a marked copy is
    /// the message it was marked from. Under another prefix they would teach the models and
    /// move their scores. It also keeps spamsort from taking other programs' fields for its
    /// own, which it removes from every message: `X-` would give `X-Status`, where mbox
    /// readers keep a message's answered and deleted marks. Refusing the setting leaves mail
    /// as it is (`filter` passes it through unchanged, the daemon does not start).
    pub fn new(prefix: &str, subject_tag: Option<&str>, bogosity: bool) -> Result<HeaderStyle> {
        let field_char = |b: u8| b.is_ascii_graphic() && b != b':';
        if prefix.is_empty() || prefix.len() > MAX_SETTING_BYTES || !prefix.bytes().all(field_char)
        {
            return Err(Error::Config(format!(
                "header prefix {prefix:?}: give 1 to {MAX_SETTING_BYTES} printable ASCII \
                 characters without ':' or spaces, such as \"X-Spamsort-\""
            )));
        }
        if !prefix
            .get(..VERDICT_PREFIX.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(VERDICT_PREFIX))
        {
            return Err(Error::Config(format!(
                "header prefix {prefix:?}: give one that starts with {VERDICT_PREFIX}, such as \
                 \"X-Spamsort-\": spamsort leaves fields of such names out of what it learns \
                 from, and under another prefix its verdicts (and a sender's forged ones) \
                 would count as evidence about a message (it would also remove other \
                 programs' fields, such as mbox readers' X-Status under \"X-\")"
            )));
        }
        let subject_tag = subject_tag.filter(|t| !t.is_empty());
        if let Some(tag) = subject_tag {
            let ok = tag.len() <= MAX_SETTING_BYTES
                && tag.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
                && tag.trim() == tag;
            if !ok {
                return Err(Error::Config(format!(
                    "subject tag {tag:?}: give up to {MAX_SETTING_BYTES} printable ASCII \
                     characters, not starting or ending with a space, such as \"***SPAM***\""
                )));
            }
        }
        Ok(HeaderStyle {
            prefix: prefix.to_string(),
            subject_tag: subject_tag.map(str::to_string),
            bogosity,
        })
    }

    /// The field-name prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The subject tag, if spam subjects are tagged.
    pub fn subject_tag(&self) -> Option<&str> {
        self.subject_tag.as_deref()
    }

    /// The names of the fields this style writes and so removes from incoming mail first.
    pub fn owned_fields(&self) -> Vec<String> {
        let mut names: Vec<String> = OWNED_SUFFIXES
            .iter()
            .map(|s| format!("{}{s}", self.prefix))
            .collect();
        if self.bogosity {
            names.push("X-Bogosity".into());
        }
        names
    }

    /// The header fields for a result under `thresholds`, in order, without line endings; a
    /// `\n\t` inside one is a fold (written in the message's line ending). For example:
    ///
    /// ```text
    /// X-Spam-Flag: YES
    /// X-Spam-Level: *******
    /// X-Spam-Status: Yes, score=7.3 required=5.0 tests=SPAMSORT_LINEAR_SVM,SPAMSORT_SPAM
    ///     autolearn=no version=spamsort-0.1.0 probability=0.9890
    /// ```
    ///
    /// An unsure message also gets `X-Spam-Unsure: YES` (and `SPAMSORT_UNSURE` in `tests=`);
    /// with `bogosity`, `X-Bogosity: Spam, tests=bogofilter, spamicity=0.988983,
    /// version=spamsort-0.1.0` follows (`Ham`, `Unsure`).
    pub fn lines(&self, c: &Classification, thresholds: Thresholds) -> Vec<String> {
        let p = &self.prefix;
        let version = concat!("spamsort-", env!("CARGO_PKG_VERSION"));
        let score = score(c, thresholds.spam());
        let spam = c.verdict == Verdict::Spam;
        // SpamAssassin's stars: one per whole point, at most 50.
        let stars = "*".repeat(score.clamp(0.0, 50.0) as usize);
        let model = c.model.name().to_ascii_uppercase().replace('-', "_");
        let verdict = c.verdict.as_str().to_ascii_uppercase();
        let probability = c.score.p_spam();
        let mut lines = vec![
            format!("{p}Flag: {}", if spam { "YES" } else { "NO" }),
            format!(
                "{p}Level:{}{stars}",
                if stars.is_empty() { "" } else { " " }
            ),
            format!(
                "{p}Status: {}, score={score:.1} required={REQUIRED_SCORE:.1} \
                 tests=SPAMSORT_{model},SPAMSORT_{verdict}\n\tautolearn=no version={version} \
                 probability={probability:.4}",
                if spam { "Yes" } else { "No" },
            ),
        ];
        if c.verdict == Verdict::Unsure {
            lines.push(format!("{p}Unsure: YES"));
        }
        if self.bogosity {
            let word = match c.verdict {
                Verdict::Spam => "Spam",
                Verdict::Ham => "Ham",
                Verdict::Unsure => "Unsure",
            };
            lines.push(format!(
                "X-Bogosity: {word}, tests=bogofilter, spamicity={probability:.6}, \
                 version={version}"
            ));
        }
        lines
    }

    /// The subject tag to apply to a result: the style's, for spam only.
    fn tag_for(&self, c: &Classification) -> Option<&str> {
        self.subject_tag().filter(|_| c.verdict == Verdict::Spam)
    }

    /// The whole message marked with the fields for `c` (see [`stamp`]), every other byte
    /// unchanged but the subject tag's, or why it cannot be marked safely.
    pub fn mark(
        &self,
        message: &[u8],
        c: &Classification,
        thresholds: Thresholds,
    ) -> Result<Vec<u8>, Unmarkable> {
        stamp::mark(
            message,
            &self.stamp(c, thresholds),
            stamp::Extent::WholeMessage,
        )
    }

    /// [`HeaderStyle::mark`] for `head`, the start of a longer message whose other bytes
    /// follow unchanged; fails also when the header block does not end inside `head`.
    pub fn mark_head(
        &self,
        head: &[u8],
        c: &Classification,
        thresholds: Thresholds,
    ) -> Result<Vec<u8>, Unmarkable> {
        stamp::mark(head, &self.stamp(c, thresholds), stamp::Extent::Head)
    }

    /// The message as it would be before this style marked it, for telling whether two files
    /// hold the same message and for learning what was marked: this style's fields removed and
    /// the subject tag this style put before a subject's text taken off, which gives that
    /// subject line back byte for byte; a subject without the tag is kept as it is.
    pub fn unmarked(&self, message: &[u8]) -> Vec<u8> {
        stamp::unmarked(message, &self.owned_fields(), self.subject_tag())
    }

    fn stamp(&self, c: &Classification, thresholds: Thresholds) -> stamp::Stamp {
        stamp::Stamp {
            lines: self.lines(c, thresholds),
            owned: self.owned_fields(),
            subject_tag: self.tag_for(c).map(str::to_string),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::SpamScore;

    fn classification(log_odds: f64, verdict: Verdict) -> Classification {
        Classification {
            verdict,
            score: SpamScore::new(crate::models::math::sigmoid(log_odds)),
            decision: log_odds,
            log_odds,
            model: ModelKind::LinearSvm,
            tokens: 3,
        }
    }

    #[test]
    fn score_puts_the_spam_threshold_at_five_and_is_bounded() {
        let t = 0.9;
        let at = (0.9f64 / 0.1).ln();
        assert_eq!(score(&classification(at, Verdict::Spam), t), 5.0);
        // One nat more odds is one point more.
        assert_eq!(score(&classification(at + 1.0, Verdict::Spam), t), 6.0);
        assert_eq!(score(&classification(at + 2.3, Verdict::Spam), t), 7.3);
        assert_eq!(score(&classification(1e9, Verdict::Spam), t), MAX_SCORE);
        assert_eq!(score(&classification(-1e9, Verdict::Ham), t), MIN_SCORE);
        assert_eq!(score(&classification(f64::NAN, Verdict::Ham), t), 0.0);
    }

    #[test]
    fn score_agrees_with_the_verdict_near_the_threshold() {
        let at = (0.9f64 / 0.1).ln();
        // Just below the threshold would round to 5.0 but is not spam.
        assert_eq!(score(&classification(at - 0.01, Verdict::Unsure), 0.9), 4.9);
        // A model that has not learned both classes is unsure whatever its odds.
        assert_eq!(score(&classification(at + 10.0, Verdict::Unsure), 0.9), 4.9);
    }

    #[test]
    fn header_lines_for_spam_unsure_and_ham() {
        let style = HeaderStyle::new("X-Spam-", None, true).unwrap();
        let t = Thresholds::new(0.9, 0.5).unwrap();
        let v = env!("CARGO_PKG_VERSION");
        let at = (0.9f64 / 0.1).ln();
        let spam = style.lines(&classification(at + 2.3, Verdict::Spam), t);
        assert_eq!(spam[0], "X-Spam-Flag: YES");
        assert_eq!(spam[1], "X-Spam-Level: *******");
        assert_eq!(
            spam[2],
            format!(
                "X-Spam-Status: Yes, score=7.3 required=5.0 tests=SPAMSORT_LINEAR_SVM,SPAMSORT_SPAM\n\tautolearn=no version=spamsort-{v} probability=0.9890"
            )
        );
        assert_eq!(
            spam[3],
            format!("X-Bogosity: Spam, tests=bogofilter, spamicity=0.988983, version=spamsort-{v}")
        );
        let unsure = style.lines(&classification(0.5, Verdict::Unsure), t);
        assert_eq!(unsure[1], "X-Spam-Level: ***");
        assert!(unsure[2].contains("SPAMSORT_UNSURE"), "{}", unsure[2]);
        assert_eq!(unsure[3], "X-Spam-Unsure: YES");
        assert!(unsure[4].starts_with("X-Bogosity: Unsure,"));
        let ham = style.lines(&classification(-30.0, Verdict::Ham), t);
        assert_eq!(ham[0], "X-Spam-Flag: NO");
        assert_eq!(ham[1], "X-Spam-Level:");
        assert!(ham[2].starts_with("X-Spam-Status: No, score=-20.0 required=5.0"));
    }

    #[test]
    fn header_settings_that_would_break_a_header_are_refused() {
        for prefix in ["", "X Spam-", "X-Spam:", "X-\u{e9}-", &"X".repeat(65)] {
            assert!(HeaderStyle::new(prefix, None, false).is_err(), "{prefix:?}");
        }
        for tag in ["a\r\nBcc: x", " tag", "\u{e9}", &"*".repeat(65)] {
            assert!(
                HeaderStyle::new("X-Spam-", Some(tag), false).is_err(),
                "{tag:?}"
            );
        }
        assert_eq!(
            HeaderStyle::new("X-Spam-", Some(""), false).unwrap(),
            HeaderStyle::default()
        );
    }

    #[test]
    fn a_header_prefix_whose_fields_the_tokenizer_would_read_is_refused() {
        // `X-` made spamsort remove mbox readers' X-Status (their answered and deleted marks)
        // from every message it marked; `X-Junk-` made its verdicts, and forged ones, teach
        // the models.
        for prefix in [
            "X-",
            "x-",
            "X-Mozilla-",
            "X-VIRUS-",
            "X-Junk-",
            "X-Stat",
            "X",
            "X-Spa",
        ] {
            let err = HeaderStyle::new(prefix, None, false)
                .unwrap_err()
                .to_string();
            assert!(err.contains("starts with X-Spam"), "{prefix:?}: {err}");
        }
        // Under the prefixes it takes, spamsort's fields add no token to a message.
        let tokenizer = crate::Tokenizer::default();
        let message = "From: a@example.org\nSubject: lunch\n\nsee you at noon\n";
        let alone = tokenizer.tokenize(message.as_bytes()).tokens;
        for prefix in [
            "X-Spam-",
            "X-Spamsort-",
            "x-spam-",
            "X-SPAM",
            "X-Spam-Sort-",
        ] {
            let style = HeaderStyle::new(prefix, None, true).unwrap();
            for field in style.owned_fields() {
                let marked = format!("{field}: No, score=-3.1 verdict forged\n{message}");
                let tokens = tokenizer.tokenize(marked.as_bytes()).tokens;
                assert_eq!(tokens, alone, "{prefix:?}: {field}");
            }
        }
    }

    #[test]
    fn thresholds_fill_from_the_model_file() {
        let file = Thresholds::new(0.8, 0.3).unwrap();
        let only_spam = Policy::new(None, Some(0.95), None, HeaderStyle::default()).unwrap();
        assert_eq!(
            only_spam.thresholds(file).unwrap(),
            Thresholds::new(0.95, 0.3).unwrap()
        );
        assert_eq!(Policy::default().thresholds(file).unwrap(), file);
        assert!(Policy::new(None, Some(0.4), None, HeaderStyle::default()).is_err());
    }
}
