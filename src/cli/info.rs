//! `spamsort info`: what a model file holds.

use super::ExitStatus;
use super::args::ModelArgs;
use anyhow::Context;
use spamsort::model_file::{FORMAT_VERSION, ModelFileError, ModelFileReader, OLDEST_READ};
use spamsort::{Label, SpamFilter};
use std::io::Write;

// Arguments of `spamsort info` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    #[command(flatten)]
    model: ModelArgs,
}

/// Seconds since 1970-01-01 UTC as `YYYY-MM-DD HH:MM:SS UTC` ("never" for `None`).
fn utc(seconds: Option<u64>) -> String {
    let Some(s) = seconds else {
        return "never".into();
    };
    // Days to a proleptic Gregorian date (Howard Hinnant's civil_from_days).
    let z = (s / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let t = s % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

pub fn run(args: InfoArgs) -> anyhow::Result<ExitStatus> {
    // Written with `?`, not println!: a closed pipe (`spamsort info | true`) is success.
    let path = args.model.path(&args.model.config()?)?;
    let mut out = super::output::stdout();
    let filter = match SpamFilter::load(&path) {
        Ok(filter) => filter,
        // A file of another version is still worth naming: say which version it is.
        Err(e @ ModelFileError::OtherVersion { found, .. }) => {
            writeln!(out, "model file:      {}", path.display())?;
            writeln!(
                out,
                "format version:  {found} (this spamsort reads {OLDEST_READ} to {FORMAT_VERSION})"
            )?;
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    let meta = std::fs::metadata(&path)
        .with_context(|| format!("reading the size of {}", path.display()))?;
    let size = meta.len();
    let modified = meta
        .modified()
        .ok()
        .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let s = filter.summary();
    let t = filter.thresholds();
    writeln!(out, "model file:      {}", path.display())?;
    // The file's own version (an older one the loader reads is rewritten at the next save).
    let version = ModelFileReader::open(&path)?.version();
    writeln!(out, "format version:  {version}")?;
    writeln!(
        out,
        "file size:       {size} bytes (pruned when over {} bytes)",
        filter.max_model_bytes()
    )?;
    writeln!(
        out,
        "messages:        {} spam, {} ham (trained and learned)",
        s.messages[Label::Spam.index()],
        s.messages[Label::Ham.index()]
    )?;
    writeln!(out, "trained at:      {}", utc(s.trained_at))?;
    writeln!(out, "last learned at: {}", utc(s.learned_at))?;
    writeln!(out, "file modified:   {}", utc(modified))?;
    writeln!(
        out,
        "tokens seen:     {} by train ({} parser fallbacks, {} truncated)",
        s.tokens, s.fallbacks, s.truncated
    )?;
    writeln!(out, "vocabulary:      {} tokens", filter.vocabulary().len())?;
    writeln!(
        out,
        "learned record:  {} messages (learn once; the newest {} are kept)",
        filter.learned().len(),
        spamsort::filter::learned::LearnedMessages::CAPACITY
    )?;
    // [by train, by learn] x [ham, spam], as Label::index orders classes.
    let mut by = [[0usize; 2]; 2];
    for (_, l) in filter.learned().iter() {
        by[usize::from(!l.in_training)][l.label.index()] += 1;
    }
    for (how, [ham, spam]) in ["by train", "by learn"].iter().zip(by) {
        writeln!(out, "  {how}:        {spam} spam, {ham} ham")?;
    }
    let (records, bytes) = spamsort::filter::journal::pending(&path)?;
    writeln!(
        out,
        "journal:         {records} learn runs, {bytes} bytes, applied at load (saved whole past {} runs or {} bytes)",
        spamsort::filter::journal::COMPACT_RECORDS,
        spamsort::filter::journal::COMPACT_BYTES
    )?;
    if let Some(reason) = spamsort::filter::journal::damaged_tail(&path)? {
        writeln!(out, "journal damage:  {reason}")?;
    }
    let kinds: Vec<&str> = filter.model_kinds().iter().map(|k| k.name()).collect();
    writeln!(out, "models:          {}", kinds.join(", "))?;
    if let Some(f) = filter.fusion() {
        let weights: Vec<String> = f
            .models()
            .iter()
            .zip(f.weights())
            .map(|(k, w)| format!("{k} {w:.3}"))
            .collect();
        writeln!(
            out,
            "fusion:          {}, bias {:.3}",
            weights.join(", "),
            f.bias()
        )?;
    }
    writeln!(out, "active model:    {}", filter.active())?;
    writeln!(
        out,
        "thresholds:      spam >= {}, ham < {}",
        t.spam(),
        t.ham()
    )?;
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_formats_seconds_as_a_calendar_date() {
        assert_eq!(utc(Some(0)), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(Some(951_782_400 + 3_661)), "2000-02-29 01:01:01 UTC");
        assert_eq!(utc(Some(1_795_305_600)), "2026-11-22 00:00:00 UTC");
        assert_eq!(utc(None), "never");
    }
}
