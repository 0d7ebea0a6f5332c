//! `spamsort explain PATH|-`: the verdict and the tokens that pushed it (with fusion: the
//! models), both ways: the strongest toward spam and toward ham, and what the rest of each
//! side adds up to.

use super::args::{ModelArgs, VerdictArgs, open_model};
use super::terminal::escape_for_terminal;
use super::{ExitStatus, input};
use spamsort::filter::policy::score;
use spamsort::models::ModelKind;
use std::io::Write;
use std::path::PathBuf;

// Arguments of `spamsort explain` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The message file, or `-` for standard input.
    #[arg(value_name = "PATH|-", default_value = "-")]
    path: PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    verdict: VerdictArgs,
    /// How many tokens (with fusion: models) to show on each side (toward spam, toward ham).
    #[arg(long, short = 'n', default_value_t = 15)]
    top: usize,
}

pub fn run(args: ExplainArgs) -> anyhow::Result<ExitStatus> {
    let config = args.model.config()?;
    let policy = args.verdict.policy(&config, None)?;
    let file = open_model(&args.model, &policy, &config)?;
    let scorer = policy.scorer(&file)?.for_many_messages();
    let head = scorer.tokenizer_config().head_bytes();
    let messages = input::message_heads(std::slice::from_ref(&args.path), head)?;
    let mut out = std::io::BufWriter::new(super::output::stdout());
    let mut failed = false;
    for item in messages {
        // An unreadable one is reported and the rest explained, as `classify` does.
        let Some(message) = input::readable(&item, &mut failed) else {
            continue;
        };
        let e = scorer.explain(&message.bytes)?;
        let c = e.classification;
        writeln!(
            out,
            "{}: {} (score {:.1}, probability {:.3}, decision {:.3}, {}, {} tokens)",
            escape_for_terminal(&message.source.to_string()),
            c.verdict,
            score(&c, scorer.thresholds().spam()),
            c.score.p_spam(),
            c.decision,
            c.model,
            c.tokens
        )?;
        writeln!(out, "  {:>10}  (bias)", format!("{:+.4}", e.bias))?;
        // Fusion's inputs are the other models' answers, so its parts are models.
        let parts = if c.model == ModelKind::Fusion {
            "models"
        } else {
            "tokens"
        };
        for side in e.sides(args.top) {
            writeln!(out, "  toward {}:", side.toward)?;
            for (token, weight) in &side.strongest {
                writeln!(
                    out,
                    "  {:>10}  {}",
                    format!("{weight:+.4}"),
                    escape_for_terminal(token)
                )?;
            }
            if side.rest_count > 0 {
                writeln!(
                    out,
                    "  {:>10}  (the other {} {parts} toward {})",
                    format!("{:+.4}", side.rest_sum),
                    side.rest_count,
                    side.toward
                )?;
            }
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    })
}
