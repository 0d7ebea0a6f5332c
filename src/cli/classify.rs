//! `spamsort classify [PATH|-]...`: one result per message, in input order.

use super::args::{ModelArgs, VerdictArgs, open_model};
use super::terminal::escape_for_terminal;
use super::{ExitStatus, input};
use spamsort::Classification;
use spamsort::batch::Window;
use spamsort::filter::policy::score;
use std::io::Write;
use std::path::PathBuf;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `SOURCE: VERDICT (score 7.3, probability 0.998, model)`, for people.
    Text,
    /// `SOURCE<TAB>VERDICT<TAB>PROBABILITY<TAB>SCORE<TAB>DECISION`, stable, for scripts:
    /// P(spam), the spamd-style score (5.0 required) and the model's raw decision value.
    Tsv,
    /// One JSON object per line: source, verdict, probability, score, decision, model, tokens.
    Json,
}

// Arguments of `spamsort classify` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    /// Message files or mailboxes (maildir, mbox, MH, TREC index); `-` or nothing: stdin.
    #[arg(value_name = "PATH|-")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    verdict: VerdictArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(args: ClassifyArgs) -> anyhow::Result<ExitStatus> {
    let config = args.model.config()?;
    let policy = args.verdict.policy(&config, None)?;
    let file = open_model(&args.model, &policy, &config)?;
    let scorer = policy.scorer(&file)?.for_many_messages();
    let required = scorer.thresholds().spam();
    if let Some(class) = scorer.missing_class()? {
        super::say(format_args!(
            "note: the model has learned no {class} yet, so every verdict is unsure; learn some with `spamsort learn --{class}`"
        ));
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.paths
    };
    // Only what the tokenizer reads is held, a window of messages at a time: they are read on
    // one thread and scored on all cores, the results written in input order.
    let messages = input::message_heads(&paths, scorer.tokenizer_config().head_bytes())?;
    let mut out = std::io::BufWriter::new(super::output::stdout());
    let mut failed = false;
    let mut last = None;
    let mut count = 0_usize;
    spamsort::batch::map_in_order(
        messages,
        Window::default(),
        |item| item.as_ref().map_or(0, |m| m.bytes.len()),
        |item| item.as_ref().ok().map(|m| scorer.classify(&m.bytes)),
        |item, r| -> anyhow::Result<()> {
            count += 1;
            let (Some(message), Some(r)) = (input::readable(&item, &mut failed), r) else {
                return Ok(());
            };
            // The model file failing to read (or changing underneath) ends the run.
            let r = r?;
            write_result(
                &mut out,
                args.format,
                &message.source.to_string(),
                &r,
                required,
            )?;
            last = Some(r.verdict);
            Ok(())
        },
    )?;
    out.flush()?;
    Ok(match (count, last, failed) {
        (_, _, true) => ExitStatus::Error,
        (1, Some(verdict), false) => ExitStatus::of(verdict),
        _ => ExitStatus::Success,
    })
}

/// Writes one message's result line in `format`.
fn write_result(
    out: &mut impl Write,
    format: Format,
    source: &str,
    r: &Classification,
    required: f64,
) -> std::io::Result<()> {
    let score = score(r, required);
    match format {
        Format::Text => writeln!(
            out,
            "{}: {} (score {score:.1}, probability {:.3}, {})",
            escape_for_terminal(source),
            r.verdict,
            r.score.p_spam(),
            r.model
        ),
        Format::Tsv => writeln!(
            out,
            "{}\t{}\t{:.6}\t{score:.1}\t{:.6}",
            source.replace(['\t', '\n', '\r'], " "),
            r.verdict,
            r.score.p_spam(),
            r.decision
        ),
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::json!({
                "source": source,
                "verdict": r.verdict.as_str(),
                "probability": r.score.p_spam(),
                "score": score,
                "decision": r.decision,
                "model": r.model.name(),
                "tokens": r.tokens,
            })
        ),
    }
}
