//! `spamsort filter`: one message on stdin, the same bytes on stdout with X-Spam-* headers
//! added, for procmail, maildrop, fetchmail and MTAs. Mail is never lost: on any failure (no
//! model, corrupt model, oversize message, internal error) the input goes out unchanged and
//! the reason goes to stderr.

use super::ExitStatus;
use super::args::{ModelArgs, VerdictArgs, open_model};
use super::config::Config;
use spamsort::headers::add_spam_headers;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Arguments of `spamsort filter`.
#[derive(Debug, clap::Args)]
pub struct FilterArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    verdict: VerdictArgs,
    /// Exit 0 for spam, 1 ham, 2 unsure, 3 error (bogofilter's codes) instead of always 0.
    #[arg(long)]
    exit_code: bool,
    /// Messages larger than this many bytes pass through unclassified.
    #[arg(long, value_name = "BYTES", default_value_t = 32 * 1024 * 1024)]
    max_size: u64,
}

pub fn run(args: FilterArgs) -> anyhow::Result<ExitStatus> {
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut message = Vec::new();
    let read = (&mut stdin)
        .take(args.max_size + 1)
        .read_to_end(&mut message);
    let outcome = match read {
        Err(e) => Err(format!(
            "reading standard input failed after {} bytes: {e}",
            message.len()
        )),
        Ok(_) if message.len() as u64 > args.max_size => {
            // Pass the start we hold and stream the rest: bounded memory, nothing lost.
            stdout.write_all(&message)?;
            std::io::copy(&mut stdin, &mut stdout)?;
            stdout.flush()?;
            eprintln!(
                "spamsort: message larger than {} bytes passed through unclassified",
                args.max_size
            );
            return Ok(if args.exit_code {
                ExitStatus::Error
            } else {
                ExitStatus::Success
            });
        }
        Ok(_) => classify_and_mark(&args, &message),
    };
    match outcome {
        Ok((marked, verdict)) => {
            stdout.write_all(&marked)?;
            stdout.flush()?;
            Ok(if args.exit_code {
                ExitStatus::of(verdict)
            } else {
                ExitStatus::Success
            })
        }
        Err(reason) => {
            stdout.write_all(&message)?;
            stdout.flush()?;
            eprintln!("spamsort: message passed through unchanged: {reason}");
            Ok(if args.exit_code {
                ExitStatus::Error
            } else {
                ExitStatus::Success
            })
        }
    }
}

/// The marked message and its verdict, or why it could not be classified.
fn classify_and_mark(
    args: &FilterArgs,
    message: &[u8],
) -> Result<(Vec<u8>, spamsort::Verdict), String> {
    let config = Config::load().map_err(|e| format!("{e:#}"))?;
    let verdicts = args
        .verdict
        .resolve(&config)
        .map_err(|e| format!("{e:#}"))?;
    let file = open_model(&args.model, &verdicts, &config).map_err(|e| format!("{e:#}"))?;
    let scorer = verdicts.scorer(&file).map_err(|e| format!("{e:#}"))?;
    // The tokenizer already contains parser panics; this guards everything else.
    let (marked, verdict) = catch_unwind(AssertUnwindSafe(|| {
        let result = scorer.classify(message);
        (
            add_spam_headers(message, &result, scorer.thresholds().spam()),
            result.verdict,
        )
    }))
    .map_err(|_| "internal error while classifying (please report it)".to_string())?;
    let marked = marked
        .ok_or("the header block starts with a folded line, so no field can be added safely")?;
    Ok((marked, verdict))
}
