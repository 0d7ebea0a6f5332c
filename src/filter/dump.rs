//! Backup and restore of a filter's whole learned state as text (`spamsort dump` /
//! `spamsort restore`, as `bogoutil -d/-l` and `sa-learn --backup/--restore` do). The round
//! trip is exact: [`read_dump`] of [`write_dump`]'s text gives a filter equal to the one dumped,
//! which saves to the same model file bytes.
//!
//! # Format (version 3)
//! UTF-8 text, one record per line (`\n`), each line a keyword, one space, then its fields:
//! ```text
//! spamsort-dump 3
//! settings {"tokenizer":{..},"active":"MultinomialNb","thresholds":{..},"summary":{..},"trained_features":N,"max_model_bytes":N,"fusion":{..}}
//! docs HAM SPAM CLOCK
//! token DF_HAM DF_SPAM LAST_SEEN "TOKEN"
//! model {"calibration":{..},"model":{..}}
//! learned DIGEST LABEL HOW [KEPT_BELOW]
//! end TOKENS MODELS LEARNED
//! ```
//! - `settings`: one JSON object, the tokenizer settings, active model, verdict thresholds,
//!   training summary, the vocabulary's size after `train`, the file-size limit that pruning
//!   keeps and the fuser (`null` without one; a dump without the field has none) (serde's
//!   names, so every setting is written without a hand-written list).
//! - `docs`: messages per class counted in the vocabulary, ham first, then the number of the
//!   newest message learned (the clock pruning's "not seen since" counts on).
//! - `token`: one line per token in id order (the order the models' per-feature arrays use):
//!   in how many ham and spam messages it occurred, the number of the last message that
//!   contained it, then the token as a JSON string, so any character (space, control, quote)
//!   survives.
//! - `model`: one line per model, in the file's order, as JSON: its Platt calibration and its
//!   state (Naive Bayes counts, or SVM / logistic regression weights), per-feature arrays as
//!   lists indexed by token id. Numbers are written in shortest round-trip form, which parse
//!   back to the same bits.
//! - `learned`: the record of learned messages, oldest first: the digest (16 hex digits), the
//!   label (`ham`/`spam`), `trained` (learned by `train`) or `learned`, and, once a prune has
//!   dropped tokens since the message was learned, the number of tokens (from the first)
//!   that can hold its counts (see `LearnedAs::kept_below`). A version 2 dump has none: each
//!   of its messages is marked with the number of its `token` lines when it is read.
//! - `end`: the number of `token`, `model` and `learned` lines, so a cut-off dump is refused.
//!
//! The sections come in this order. [`read_dump`] refuses anything else with the line number.

use crate::features::Vocabulary;
use crate::filter::learned::{LearnedAs, LearnedMessages};
use crate::filter::{SpamFilter, TrainingSummary};
use crate::label::{Label, Thresholds};
use crate::models::{Fusion, ModelKind, TrainedModel};
use crate::tokenize::TokenizerConfig;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};

/// The first line of every dump this version writes. Version 2: byte 4-grams hash into 2^17
/// buckets. Version 3: a `learned` line may end with its mark (see `LearnedAs::kept_below`).
/// Version 2 dumps are read too ([`HEADER_2`]); version 1 dumps (2^18 buckets) are refused,
/// all of them: their hashed weights would be read as other buckets.
pub const HEADER: &str = "spamsort-dump 3";

/// The first line of a version 2 dump, which has no marks: a prune may have dropped tokens of
/// the messages it lists since they were learned, so each is marked with the dump's tokens, as
/// a model file of format 9 is read.
const HEADER_2: &str = "spamsort-dump 2";

/// The most bytes read of a dump's first line: its header, or something near it to name as
/// not a dump this version reads (another version, CRLF line endings).
const FIRST_LINE_MOST: u64 = 64;

/// The longest line a dump may have before any `token` line: a `settings` line, or a `model`
/// line of a vocabulary still empty (hashed weights alone, 2^17 of them, about 3 MB as text).
const LINE_BASE: u64 = 64 << 20;

/// How much longer a dump's line may be for each `token` line before it: a `model` line holds a
/// few numbers per token (weights, counts, idf), each at most about 25 bytes of JSON.
const LINE_PER_TOKEN: u64 = 1024;

/// Why a dump could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// Writing or reading the text failed (why is the [`source`](std::error::Error::source)).
    #[error("reading or writing the dump")]
    Io(#[from] std::io::Error),
    /// A line of the dump is malformed or out of place; `line` counts from 1.
    #[error(
        "line {line}: {reason} (is this a complete `spamsort dump`, starting `{header}`?)",
        header = HEADER
    )]
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The dump's lines are each well formed but do not make a valid filter.
    #[error("the dump does not make a valid filter: {0}")]
    Invalid(String),
}

/// The `settings` line.
#[derive(Serialize, Deserialize)]
struct Settings {
    tokenizer: TokenizerConfig,
    active: ModelKind,
    thresholds: Thresholds,
    summary: TrainingSummary,
    trained_features: u64,
    max_model_bytes: u64,
    #[serde(default)]
    fusion: Option<Fusion>,
}

/// Writes `filter`'s whole state as a dump (see the module doc). Each model's cached decision
/// function is brought up to date first, as [`SpamFilter::save`] does, so a filter that learned
/// since it was loaded dumps what it would save.
pub fn write_dump(filter: &mut SpamFilter, out: &mut impl Write) -> Result<(), DumpError> {
    filter.refresh();
    let f = &*filter;
    writeln!(out, "{HEADER}")?;
    let settings = Settings {
        tokenizer: f.tokenizer.clone(),
        active: f.active,
        thresholds: f.thresholds,
        summary: f.summary.clone(),
        trained_features: f.trained_features,
        max_model_bytes: f.max_model_bytes,
        fusion: f.fusion.clone(),
    };
    writeln!(out, "settings {}", json(&settings)?)?;
    let v = &f.vocabulary;
    let (ham, spam) = (v.docs(Label::Ham), v.docs(Label::Spam));
    writeln!(out, "docs {ham} {spam} {}", v.clock())?;
    for id in 0..v.len() as u32 {
        let (ham, spam, seen) = (v.df(id, Label::Ham), v.df(id, Label::Spam), v.last_seen(id));
        writeln!(out, "token {ham} {spam} {seen} {}", json(v.token(id))?)?;
    }
    for m in &f.models {
        writeln!(out, "model {}", json(m)?)?;
    }
    for (digest, how) in f.learned.iter() {
        let source = if how.in_training {
            "trained"
        } else {
            "learned"
        };
        write!(out, "learned {digest:016x} {} {source}", how.label)?;
        match how.kept_below {
            Some(k) => writeln!(out, " {k}")?,
            None => writeln!(out)?,
        }
    }
    writeln!(
        out,
        "end {} {} {}",
        v.len(),
        f.models.len(),
        f.learned.len()
    )?;
    out.flush()?;
    Ok(())
}

fn json(value: &(impl Serialize + ?Sized)) -> Result<String, DumpError> {
    serde_json::to_string(value).map_err(|e| DumpError::Invalid(e.to_string()))
}

/// The sections of a dump, in the order they must come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Header,
    Settings,
    Docs,
    Token,
    Model,
    Learned,
    End,
}

/// Rebuilds a filter from a dump written by [`write_dump`], checking every line (errors name
/// the line) and the filter it makes (as [`SpamFilter::load`] checks a model file).
pub fn read_dump(input: &mut impl BufRead) -> Result<SpamFilter, DumpError> {
    let mut settings: Option<Settings> = None;
    let mut docs = [0u32; 2];
    let mut clock = 0u32;
    let mut tokens: Vec<(String, [u32; 2], u32)> = Vec::new();
    let mut models: Vec<TrainedModel> = Vec::new();
    let mut learned = LearnedMessages::default();
    // A version 2 dump: its `learned` lines have no marks.
    let mut unmarked = false;
    let mut at = None;
    let mut buf = String::new();
    let mut n = 0;
    loop {
        buf.clear();
        n += 1;
        let err = |reason: String| DumpError::Line { line: n, reason };
        // Bounded, so that what is no dump (a binary file, /dev/zero) is refused after a few
        // bytes, and a long line after at most the longest a dump of its tokens may hold.
        let most = match at {
            None => FIRST_LINE_MOST,
            Some(_) => LINE_BASE + LINE_PER_TOKEN * tokens.len() as u64,
        };
        let read = (&mut *input)
            .take(most)
            .read_line(&mut buf)
            .map_err(|e| err(e.to_string()))?;
        if read == 0 {
            break;
        }
        if read as u64 == most && !buf.ends_with('\n') {
            return Err(err(format!(
                "longer than the {most} bytes a dump's line may be here"
            )));
        }
        if at == Some(Section::End) {
            return Err(err("text after the end line".into()));
        }
        let line = buf
            .strip_suffix('\n')
            .ok_or_else(|| err("the last line is cut off".into()))?;
        let (keyword, rest) = line.split_once(' ').unwrap_or((line, ""));
        let section = match keyword {
            "spamsort-dump" => Section::Header,
            "settings" => Section::Settings,
            "docs" => Section::Docs,
            "token" => Section::Token,
            "model" => Section::Model,
            "learned" => Section::Learned,
            "end" => Section::End,
            _ => return Err(err(format!("unknown record {keyword:?}"))),
        };
        // Each section comes once, in order; tokens, models and learned lines repeat.
        let repeats = matches!(section, Section::Token | Section::Model | Section::Learned);
        let in_order = match at {
            None => section == Section::Header,
            Some(prev) => section > prev || (section == prev && repeats),
        };
        if !in_order {
            return Err(err(format!("{keyword} record out of place")));
        }
        let fields: Vec<&str> = rest.split(' ').collect();
        match section {
            Section::Header if line == HEADER_2 => unmarked = true,
            Section::Header if line != HEADER => {
                return Err(err(format!(
                    "not a dump this spamsort reads (expected {HEADER:?}, or {HEADER_2:?})"
                )));
            }
            Section::Header => {}
            Section::Settings => {
                settings = Some(serde_json::from_str(rest).map_err(|e| err(e.to_string()))?);
            }
            Section::Docs => {
                let [ham, spam, newest] = fields[..] else {
                    return Err(err("expected: docs HAM SPAM CLOCK".into()));
                };
                docs = counts(&[ham, spam]).map_err(err)?;
                clock = count(newest).map_err(err)?;
            }
            Section::Token => {
                let mut parts = rest.splitn(4, ' ');
                let (Some(ham), Some(spam), Some(seen), Some(token)) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    return Err(err(
                        "expected: token DF_HAM DF_SPAM LAST_SEEN \"TOKEN\"".into()
                    ));
                };
                let df = counts(&[ham, spam]).map_err(err)?;
                let seen = count(seen).map_err(err)?;
                let token: String = serde_json::from_str(token).map_err(|e| err(e.to_string()))?;
                tokens.push((token, df, seen));
            }
            Section::Model => {
                models.push(serde_json::from_str(rest).map_err(|e| err(e.to_string()))?);
            }
            Section::Learned => {
                let (digest, label, source, kept_below) = match fields[..] {
                    [digest, label, source] if unmarked => {
                        (digest, label, source, Some(Ok(tokens.len() as u32)))
                    }
                    [digest, label, source] => (digest, label, source, None),
                    [digest, label, source, k] if !unmarked => {
                        (digest, label, source, Some(count(k)))
                    }
                    _ => {
                        return Err(err(
                            "expected: learned DIGEST LABEL trained|learned [KEPT_BELOW]".into(),
                        ));
                    }
                };
                let kept_below = kept_below.transpose().map_err(err)?;
                let digest = u64::from_str_radix(digest, 16)
                    .ok()
                    .filter(|_| digest.len() == 16)
                    .ok_or_else(|| err(format!("bad digest {digest:?}")))?;
                let in_training = match source {
                    "trained" => true,
                    "learned" => false,
                    other => {
                        return Err(err(format!("expected trained or learned, not {other:?}")));
                    }
                };
                let label: Label = label.parse().map_err(err)?;
                if learned.get(digest).is_some() {
                    return Err(err(format!("digest {digest:016x} is listed twice")));
                }
                let how = LearnedAs {
                    kept_below,
                    ..LearnedAs::new(label, in_training)
                };
                learned.insert(digest, how);
            }
            Section::End => {
                let expected = [tokens.len(), models.len(), learned.len()];
                let listed: Option<Vec<usize>> = fields.iter().map(|f| f.parse().ok()).collect();
                if listed.as_deref() != Some(&expected[..]) {
                    return Err(err(format!(
                        "the end line does not match the {} tokens, {} models and {} learned \
                         messages read",
                        expected[0], expected[1], expected[2]
                    )));
                }
            }
        }
        at = Some(section);
    }
    if at != Some(Section::End) {
        return Err(DumpError::Line {
            line: n,
            reason: "the dump ends before its end line (cut off?)".into(),
        });
    }
    let settings = settings.ok_or_else(|| DumpError::Invalid("no settings line".into()))?;
    settings.tokenizer.check().map_err(DumpError::Invalid)?;
    super::check_max_model_bytes(settings.max_model_bytes).map_err(DumpError::Invalid)?;
    let vocabulary = Vocabulary::from_tokens(tokens, docs, clock).map_err(DumpError::Invalid)?;
    learned
        .check(vocabulary.len())
        .map_err(DumpError::Invalid)?;
    let kinds: Vec<ModelKind> = models.iter().map(|m| m.model.kind()).collect();
    for (i, m) in models.iter().enumerate() {
        if kinds[..i].contains(&kinds[i]) {
            return Err(DumpError::Invalid(format!("{} is listed twice", kinds[i])));
        }
        check_widths(m, vocabulary.len()).map_err(DumpError::Invalid)?;
        m.model.check_values().map_err(DumpError::Invalid)?;
    }
    if let Some(f) = &settings.fusion {
        f.validate(&kinds).map_err(DumpError::Invalid)?;
    }
    let fused = settings.fusion.is_some() && settings.active == ModelKind::Fusion;
    if !kinds.contains(&settings.active) && !fused {
        return Err(DumpError::Invalid(format!(
            "the active model {} is not among the models",
            settings.active
        )));
    }
    Ok(SpamFilter {
        tokenizer: settings.tokenizer,
        vocabulary,
        models,
        fusion: settings.fusion,
        active: settings.active,
        thresholds: settings.thresholds,
        summary: settings.summary,
        learned,
        trained_features: settings.trained_features,
        max_model_bytes: settings.max_model_bytes,
    })
}

/// Refuses a model with more per-token values (weights past the hashed ones, idf, Naive Bayes
/// counts) than there are `tokens`: a value past the last token belongs to none, the mark of a
/// `token` line lost or added by hand, after which every token would take another's values (a
/// model may hold fewer: a token it has not learned yet has none).
fn check_widths(model: &TrainedModel, tokens: usize) -> Result<(), String> {
    let f = model.model.function();
    let counts = model.model.count_arrays().unwrap_or_default();
    let widths = [
        (
            "weights",
            f.weights.len(),
            f.transform.config().input_width(tokens),
        ),
        ("idf values", f.transform.idf().len(), tokens),
        ("ham counts", counts[0].len(), tokens),
        ("spam counts", counts[1].len(), tokens),
    ];
    match widths.iter().find(|(_, len, most)| len > most) {
        Some((what, len, most)) => Err(format!(
            "the {} model holds {len} {what}, where {tokens} tokens have at most {most}: are \
             the token lines complete?",
            model.model.kind()
        )),
        None => Ok(()),
    }
}

/// Two counts, ham first.
fn counts(fields: &[&str]) -> Result<[u32; 2], String> {
    match fields {
        [ham, spam] => Ok([count(ham)?, count(spam)?]),
        _ => Err("expected two counts (ham, spam)".into()),
    }
}

/// One count.
fn count(field: &str) -> Result<u32, String> {
    field
        .parse()
        .map_err(|_| format!("expected a count, not {field:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::TrainParams;

    /// An empty filter that learned two messages, a prune between them (which drops the
    /// first one's tokens), with tokens that need escaping put in its vocabulary.
    fn filter() -> SpamFilter {
        let mut f = SpamFilter::empty(&TrainParams::default()).unwrap();
        f.learn(b"Subject: cheap pills\n\nbuy now\n", Label::Spam)
            .unwrap();
        f.prune(crate::PruneRule {
            min_count: 2,
            unseen_for: 0,
        });
        f.learn(b"Subject: lunch\n\nsee you at noon\n", Label::Ham)
            .unwrap();
        let odd = [
            "with space",
            "new\nline",
            "quote\"back\\slash",
            "tab\t\u{e9}\u{2028}",
            "",
        ];
        let mut tokens: Vec<(String, [u32; 2], u32)> = (0..f.vocabulary.len() as u32)
            .map(|id| {
                let v = &f.vocabulary;
                (
                    v.token(id).to_owned(),
                    [v.df(id, Label::Ham), v.df(id, Label::Spam)],
                    v.last_seen(id),
                )
            })
            .collect();
        tokens.extend(odd.iter().map(|t| (t.to_string(), [3, 4], 1)));
        let docs = [
            f.vocabulary.docs(Label::Ham),
            f.vocabulary.docs(Label::Spam),
        ];
        let clock = f.vocabulary.clock();
        f.vocabulary = Vocabulary::from_tokens(tokens, docs, clock).unwrap();
        f
    }

    fn dump_of(f: &mut SpamFilter) -> String {
        let mut out = Vec::new();
        write_dump(f, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn read(text: &str) -> Result<SpamFilter, DumpError> {
        read_dump(&mut text.as_bytes())
    }

    #[test]
    fn tokens_with_spaces_newlines_and_quotes_round_trip() {
        let mut f = filter();
        let text = dump_of(&mut f);
        let back = read(&text).unwrap();
        assert_eq!(back, f);
        assert_eq!(
            back.vocabulary.id("new\nline"),
            f.vocabulary.id("new\nline")
        );
        assert_eq!(dump_of(&mut back.clone()), text);
    }

    /// Regression: a version 2 dump (no marks) was restored as if no prune had dropped any
    /// of its messages' tokens, so unlearning one after the restore took the counts newer
    /// mail had given a token pruned since. Each entry is marked with the dump's tokens, as a
    /// model file of format 9 is read; a mark in a version 2 dump is refused.
    #[test]
    fn a_version_2_dump_marks_every_message_with_its_tokens() {
        let mut f = filter();
        let text = dump_of(&mut f);
        let version_2: String = text
            .replacen(HEADER, HEADER_2, 1)
            .lines()
            .map(|l| match l.strip_prefix("learned ") {
                Some(rest) => format!(
                    "learned {}\n",
                    rest.splitn(4, ' ').take(3).collect::<Vec<_>>().join(" ")
                ),
                None => format!("{l}\n"),
            })
            .collect();
        assert!(!version_2.contains(" learned 0\n"), "{version_2}");
        let back = read(&version_2).unwrap();
        let tokens = Some(f.vocabulary.len() as u32);
        assert!(back.learned.iter().all(|(_, how)| how.kept_below == tokens));
        assert_eq!(back.learned.len(), f.learned.len());
        let marked = version_2.replacen(" spam learned\n", " spam learned 0\n", 1);
        assert!(
            matches!(read(&marked), Err(DumpError::Line { reason, .. }) if reason.contains("expected"))
        );
    }

    #[test]
    fn endless_input_without_line_feeds_is_refused_after_a_bounded_read() {
        // Regression: a line was read whole, however long: `restore /dev/zero` (or a binary
        // file given by mistake) held all it read until memory ran out.
        let zeros = std::io::repeat(0);
        match read_dump(&mut std::io::BufReader::new(zeros)) {
            Err(DumpError::Line { line: 1, reason }) => {
                assert!(reason.contains("longer"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        let endless = format!("{HEADER}\nsettings ").into_bytes();
        let endless = std::io::Read::chain(&endless[..], std::io::repeat(b'a'));
        match read_dump(&mut std::io::BufReader::new(endless)) {
            Err(DumpError::Line { line: 2, reason }) => {
                assert!(
                    reason.contains(&format!("the {LINE_BASE} bytes")),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_lines_are_refused_with_their_line_number() {
        let text = dump_of(&mut filter());
        let lines: Vec<&str> = text.lines().collect();
        let token = lines.iter().position(|l| l.starts_with("token ")).unwrap();
        let learned = lines
            .iter()
            .position(|l| l.starts_with("learned "))
            .unwrap();
        let edit = |at: usize, with: &str| {
            let mut l = lines.clone();
            l[at] = with;
            l.join("\n") + "\n"
        };
        let cases = [
            (
                edit(0, "spamsort-dump 1"),
                1,
                "not a dump this spamsort reads",
            ),
            (edit(token, "token 1 2"), token + 1, "expected: token"),
            (edit(token, "token 1 2 bare"), token + 1, "expected"),
            (edit(token, "tokens 1 2 \"x\""), token + 1, "unknown record"),
            (
                edit(learned, "learned 12 spam learned"),
                learned + 1,
                "bad digest",
            ),
            (edit(learned, lines[1]), learned + 1, "out of place"),
            (
                edit(learned, &lines[learned].replace("learned 0", "learned x")),
                learned + 1,
                "expected a count",
            ),
            (
                edit(lines.len() - 1, "end 1 2 3"),
                lines.len(),
                "does not match",
            ),
            (
                text.clone() + "docs 1 1\n",
                lines.len() + 1,
                "after the end line",
            ),
            (text[..text.len() - 1].to_owned(), lines.len(), "cut off"),
        ];
        for (bad, line, reason) in cases {
            match read(&bad) {
                Err(DumpError::Line { line: l, reason: r }) => {
                    assert_eq!((l, r.contains(reason)), (line, true), "{r}");
                }
                other => panic!("expected a line error for {reason}, got {other:?}"),
            }
        }
        // Regression: the hint named version 1 while the dumps read were version 2.
        let hint = DumpError::Line {
            line: 3,
            reason: "x".into(),
        };
        assert!(hint.to_string().contains(HEADER), "{hint}");
        let twice = edit(token + 1, lines[token]);
        assert!(matches!(read(&twice), Err(DumpError::Invalid(r)) if r.contains("twice")));
        // The first message's mark (no token holds its counts) is written; one past the
        // tokens there are is refused.
        assert!(
            lines[learned].ends_with(" spam learned 0"),
            "{}",
            lines[learned]
        );
        let past = edit(learned, &lines[learned].replace("learned 0", "learned 99"));
        assert!(matches!(read(&past), Err(DumpError::Invalid(r)) if r.contains("in 99 tokens")),);
    }

    #[test]
    fn model_values_no_learning_makes_are_refused() {
        // Regression: a negative count or alpha was restored, and every decision was NaN.
        let text = dump_of(&mut filter());
        let nb = text
            .lines()
            .find(|l| l.starts_with("model ") && l.contains("MultinomialNb"))
            .unwrap();
        // A numeric array field's opening and first value, and the same made `value`.
        let first = |field: &str, value: &str| {
            let open = format!("\"{field}\":[");
            let at = nb.find(&open).unwrap() + open.len();
            let first = &nb[at..at + nb[at..].find(',').unwrap()];
            (format!("{open}{first},"), format!("{open}{value},"))
        };
        let (class_counts, negative) = first("class_counts", "-3.0");
        // Review: the multinomial model's totals were not checked.
        let (totals, minus_infinite) = first("totals", "-1e300");
        for (from, to, says) in [
            (
                "\"alpha\":0.01".to_string(),
                "\"alpha\":-0.01".to_string(),
                "alpha",
            ),
            (
                "\"alpha\":0.01".to_string(),
                "\"alpha\":0.0".to_string(),
                "alpha",
            ),
            (class_counts, negative, "count of -3"),
            (totals, minus_infinite, "count of -1"),
        ] {
            let (from, to) = (from.as_str(), to.as_str());
            assert!(nb.contains(from), "{from} in {nb}");
            let bad = text.replacen(nb, &nb.replacen(from, to, 1), 1);
            match read(&bad) {
                Err(DumpError::Invalid(r)) => assert!(r.contains(says), "{r}"),
                other => panic!("{to}: expected it refused, got {other:?}"),
            }
        }
    }

    #[test]
    fn finite_values_whose_sums_overflow_and_runaway_steps_are_refused() {
        // Regression: fusion weights of 1e308 and -1e308 were restored, and every fused
        // decision, their clipped inputs' products summed, was inf - inf = NaN, shown as
        // P(spam) 0.5; an online step of 1e308 was restored, and the first learn made the
        // weights infinite, a file no reader would load again.
        let text = dump_of(&mut filter());
        let settings = text.lines().find(|l| l.starts_with("settings ")).unwrap();
        let lr = text
            .lines()
            .find(|l| l.starts_with("model ") && l.contains("LogisticRegression"))
            .unwrap();
        let weights = |line: &str| {
            let open = "\"weights\":[";
            let at = line.find(open).unwrap() + open.len();
            let end = at + line[at..].find(']').unwrap();
            (line.to_string(), line[at..end].to_string())
        };
        // A line with its first `field:value` pair's value (up to `,` or `}`) replaced.
        let set = |line: &str, field: &str, value: &str| {
            let open = format!("\"{field}\":");
            let at = line.find(&open).unwrap() + open.len();
            let end = at + line[at..].find([',', '}']).unwrap();
            format!("{}{value}{}", &line[..at], &line[end..])
        };
        let (fusion_line, fusion_weights) =
            weights(&settings[settings.find("\"fusion\"").unwrap()..]);
        let n = fusion_weights.split(',').count();
        let hostile = ["1e308", "-1e308"].repeat(n.div_ceil(2))[..n].join(",");
        let fused = settings.replacen(
            &fusion_line,
            &fusion_line.replacen(&fusion_weights, &hostile, 1),
            1,
        );
        let fusion_at = settings.find("\"fusion\"").unwrap();
        let fusion_step = format!(
            "{}{}",
            &settings[..fusion_at],
            set(&settings[fusion_at..], "online_rate", "1e308")
        );
        for (from, to, says) in [
            (settings, fused, "fusion"),
            (settings, fusion_step, "fusion"),
            (lr, set(lr, "online_rate", "1e308"), "online step"),
            (lr, set(lr, "bias", "1e200"), "weight of 1e200"),
        ] {
            assert_ne!(from, to);
            match read(&text.replacen(from, &to, 1)) {
                Err(DumpError::Invalid(r)) => assert!(r.contains(says), "{r}"),
                Err(e) => panic!("expected it refused as invalid ({says}), got {e}"),
                Ok(_) => panic!("expected it refused ({says}), but it was read"),
            }
        }
        // The values learning makes read back.
        assert!(read(&text).is_ok());
    }

    #[test]
    fn finite_nb_values_that_make_decisions_nan_or_infinite_are_refused() {
        // Regression: an alpha of 1e308 (multinomial) or 1e-323 (Bernoulli) was restored and
        // every decision was NaN; a class count of 1e-308 made every decision +inf (every
        // message spam at score 30).
        let text = dump_of(&mut filter());
        assert!(read(&text).is_ok());
        for kind in ["BernoulliNb", "MultinomialNb"] {
            let nb = text
                .lines()
                .find(|l| l.starts_with("model ") && l.contains(kind))
                .unwrap();
            let open = "\"class_counts\":[";
            let at = nb.find(open).unwrap() + open.len();
            let first = &nb[at..at + nb[at..].find(',').unwrap()];
            let class_counts = format!("{open}{first},");
            for (from, to, says) in [
                ("\"alpha\":0.01".to_string(), "\"alpha\":1e308", "alpha"),
                ("\"alpha\":0.01".to_string(), "\"alpha\":1e-323", "alpha"),
                (class_counts.clone(), &format!("{open}1e-308,")[..], "whole"),
                (class_counts, &format!("{open}2.5,")[..], "whole"),
            ] {
                assert!(nb.contains(&from), "{from} in {nb}");
                let bad = text.replacen(nb, &nb.replacen(&from, to, 1), 1);
                match read(&bad) {
                    Err(DumpError::Invalid(r)) => assert!(r.contains(says), "{kind} {to}: {r}"),
                    Err(e) => panic!("{kind} {to}: expected it refused as invalid, got {e}"),
                    Ok(_) => panic!("{kind} {to}: expected it refused, but it was read"),
                }
            }
        }
    }
}
