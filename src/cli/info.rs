//! `spamsort info`: what a model file holds.

use super::ExitStatus;
use super::args::ModelArgs;
use anyhow::Context;
use spamsort::{Label, SpamFilter};

/// Arguments of `spamsort info`.
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
    let path = args.model.path(&super::config::Config::load()?)?;
    let filter = SpamFilter::load(&path)?;
    let size = std::fs::metadata(&path)
        .with_context(|| format!("reading the size of {}", path.display()))?
        .len();
    let s = filter.summary();
    let t = filter.thresholds();
    println!("model file:      {}", path.display());
    println!("format version:  {}", spamsort::model_file::FORMAT_VERSION);
    println!(
        "file size:       {size} bytes (pruned past {} bytes)",
        filter.max_model_bytes()
    );
    println!(
        "messages:        {} spam, {} ham (trained and learned)",
        s.messages[Label::Spam.index()],
        s.messages[Label::Ham.index()]
    );
    println!("trained at:      {}", utc(s.trained_at));
    println!("last learned at: {}", utc(s.learned_at));
    println!(
        "tokens seen:     {} ({} parser fallbacks, {} truncated)",
        s.tokens, s.fallbacks, s.truncated
    );
    println!("vocabulary:      {} tokens", filter.vocabulary().len());
    println!(
        "learned record:  {} messages (learn once; the newest {} are kept)",
        filter.learned().len(),
        spamsort::filter::learned::LearnedMessages::CAPACITY
    );
    let kinds: Vec<&str> = filter.model_kinds().iter().map(|k| k.name()).collect();
    println!("models:          {}", kinds.join(", "));
    if let Some(f) = filter.fusion() {
        let weights: Vec<String> = f
            .models()
            .iter()
            .zip(f.weights())
            .map(|(k, w)| format!("{k} {w:.3}"))
            .collect();
        println!(
            "fusion:          {}, bias {:.3}",
            weights.join(", "),
            f.bias()
        );
    }
    println!("active model:    {}", filter.active());
    println!("thresholds:      spam >= {}, ham < {}", t.spam(), t.ham());
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
