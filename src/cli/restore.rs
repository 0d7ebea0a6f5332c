//! `spamsort restore [INPUT] [--force]`: rebuilds a model file from a `spamsort dump` (see
//! [`spamsort::filter::dump`]), saved atomically under the model's update lock. An existing model file
//! is kept unless `--force` is given.

use super::ExitStatus;
use super::args::{ModelArgs, lock_model};
use anyhow::{Context, bail};
use std::io::BufReader;
use std::path::PathBuf;

// Arguments of `spamsort restore` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The dump to read; `-` or nothing: stdin.
    #[arg(value_name = "INPUT|-")]
    input: Option<PathBuf>,
    /// Replace the model file if it exists.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: RestoreArgs) -> anyhow::Result<ExitStatus> {
    let path = args.model.path(&args.model.config()?)?;
    // Before the dump is read, and before the update lock is made beside the file (`NAME.lock`
    // beside a mailbox `NAME` named by mistake is the dot-lock mail programs wait on).
    refuse_existing(&path, args.force)?;
    let (mut filter, name) = match args.input.filter(|i| i.as_os_str() != "-") {
        Some(input) => {
            let file = std::fs::File::open(&input)
                .with_context(|| format!("opening {}", input.display()))?;
            let filter = spamsort::filter::dump::read_dump(&mut BufReader::new(file))
                .with_context(|| format!("reading {}", input.display()))?;
            (filter, input.display().to_string())
        }
        None => {
            let stdin = super::waiting::Waiting(std::io::stdin().lock());
            let filter = spamsort::filter::dump::read_dump(&mut std::io::BufReader::new(stdin))
                .context("reading the dump on stdin")?;
            (filter, "stdin".to_owned())
        }
    };
    super::args::make_model_dir(&path)?;
    let lock = lock_model(&path)?;
    // Checked again under the lock, so a model written meanwhile is not overwritten either.
    refuse_existing(&path, args.force)?;
    filter.save(&lock)?;
    super::say(format_args!(
        "restored {} tokens, {} models, {} learned messages from {name} -> {}",
        filter.vocabulary().len(),
        filter.model_kinds().len(),
        filter.learned().len(),
        path.display()
    ));
    Ok(ExitStatus::Success)
}

/// Fails if a file is at `path` and restore is not `force`d to replace it.
fn refuse_existing(path: &std::path::Path, force: bool) -> anyhow::Result<()> {
    if path.exists() && !force {
        bail!(
            "{} exists: restore would replace it (give --force to do so)",
            path.display()
        );
    }
    Ok(())
}
