//! `spamsort tokens FILE|-`: what the tokenizer makes of a message, with the default settings
//! or a model file's.

use super::terminal::escape_for_terminal;
use super::{ExitStatus, input};
use anyhow::Context;
use spamsort::{Tokenizer, TokenizerConfig};
use std::io::Write;
use std::path::PathBuf;

// Arguments of `spamsort tokens` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct TokensArgs {
    /// The message file, or `-` for standard input.
    #[arg(value_name = "FILE|-")]
    message: PathBuf,
    /// Also emit word bigrams (osb:...).
    #[arg(long)]
    word_bigrams: bool,
    /// Also emit hashed character 4-grams (c4:...).
    #[arg(long)]
    char_ngrams: bool,
    /// Tokenize with this model file's settings (as `filter`, `classify` and `explain` do)
    /// instead of the defaults (a model `train` builds reads fewer bytes for its 4-grams).
    #[arg(long, short = 'm', value_name = "FILE", conflicts_with_all = ["word_bigrams", "char_ngrams"])]
    model: Option<PathBuf>,
}

pub fn run(args: TokensArgs) -> anyhow::Result<ExitStatus> {
    let config = match &args.model {
        Some(path) => spamsort::filter::scorer::ScorerFile::open(path, None)?
            .scorer()?
            .tokenizer_config()
            .clone(),
        None => TokenizerConfig {
            word_bigrams: args.word_bigrams,
            char_ngrams: args.char_ngrams,
            ..TokenizerConfig::default()
        },
    };
    // Only what the tokenizer reads is held, however large the message.
    let head = config.head_bytes();
    let bytes = if args.message.as_os_str() == "-" {
        input::read_stdin_head(head)?
    } else {
        // A regular file only: a FIFO (named pipe) without a writer hung `open` for good.
        spamsort::corpus::read_regular_head(&args.message, head)
            .with_context(|| format!("reading {}", args.message.display()))?
    };
    let out = Tokenizer::new(config).tokenize(&bytes);
    if out.own_panic {
        super::say(format_args!(
            "spamsort: internal error: the tokenizer panicked on this message (a bug in \
             spamsort, please report it); tokenized as plain text"
        ));
    } else if out.fallback {
        super::say(format_args!(
            "spamsort: the MIME parser could not read this message; tokenized as plain text"
        ));
    }
    if out.truncated {
        super::say(format_args!(
            "spamsort: message exceeds the tokenizer's caps; only its start was tokenized"
        ));
    }
    let mut stdout = std::io::BufWriter::new(super::output::stdout());
    for token in &out.tokens {
        writeln!(stdout, "{}", escape_for_terminal(token))?;
    }
    stdout.flush()?;
    Ok(ExitStatus::Success)
}
