//! `spamsort prune [--min-count N] [--unseen-for M] [--max-model-bytes BYTES]`: drops rare
//! tokens not seen for a while from the model file (as `bogoutil -m` maintenance does), and
//! optionally sets the size past which every save prunes by itself.

use super::ExitStatus;
use super::args::{ModelArgs, waiting};
use spamsort::PruneRule;
use spamsort::filter::update::{IfMissing, update};

// Arguments of `spamsort prune` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// Keep every token in at least this many messages (spam and ham together).
    #[arg(long, value_name = "N", default_value_t = PruneRule::default().min_count)]
    min_count: u32,
    /// Keep every token seen in one of the last M messages learned.
    #[arg(long, value_name = "M", default_value_t = PruneRule::default().unseen_for)]
    unseen_for: u32,
    /// Also set the model file's size limit, stored in it: from now on a save that would pass
    /// it drops the least useful tokens first; at least 4194304 (4 MiB) [default: unchanged;
    /// 32 MiB for a new model].
    #[arg(long, value_name = "BYTES", value_parser = max_model_bytes)]
    max_model_bytes: Option<u64>,
    #[command(flatten)]
    model: ModelArgs,
}

/// A `--max-model-bytes` value, refused before any I/O if below the floor.
fn max_model_bytes(s: &str) -> Result<u64, String> {
    let bytes: u64 = s.parse().map_err(|e| format!("{e}"))?;
    spamsort::check_max_model_bytes(bytes)?;
    Ok(bytes)
}

pub fn run(args: PruneArgs) -> anyhow::Result<ExitStatus> {
    let path = args.model.path(&args.model.config()?)?;
    let rule = PruneRule {
        min_count: args.min_count,
        unseen_for: args.unseen_for,
    };
    // What is no model file (a mailbox named by mistake) is refused before the update lock is
    // made beside it: `NAME.lock` beside a mailbox `NAME` is the dot-lock mail programs wait on.
    spamsort::model_file::ModelFileReader::open(&path)?;
    let updated = update(&path, IfMissing::Fail, waiting(&path), |filter| {
        if let Some(bytes) = args.max_model_bytes {
            filter.set_max_model_bytes(bytes)?;
        }
        // Always saved: the save is what prunes to the (maybe new) size limit.
        Ok((filter.prune(rule), true))
    })?;
    let outcome = updated.answer;
    let Some(filter) = updated.saved else {
        anyhow::bail!("{}: the pruned model was not saved", path.display());
    };
    // The save prunes further if the file would still be over its limit.
    let by_size = outcome.kept.saturating_sub(filter.vocabulary().len());
    super::say(format_args!(
        "pruned {} token(s) in fewer than {} messages and not seen in the last {}, and {by_size} more to stay under {} bytes; {} left -> {}",
        outcome.removed,
        rule.min_count,
        rule.unseen_for,
        filter.max_model_bytes(),
        filter.vocabulary().len(),
        path.display()
    ));
    Ok(ExitStatus::Success)
}
