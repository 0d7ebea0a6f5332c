//! `spamsort daemon`: sorts an inbox maildir into spam and ham maildirs in the foreground.
//! SIGTERM and SIGINT stop it after the batch at hand; SIGHUP reloads the model file. Nothing
//! else stops it once running: an inbox that cannot be read for a while is logged once and
//! waited out.

use super::ExitStatus;
use super::args::{HeaderArgs, ModelArgs, VerdictArgs};
use super::logging;
use super::signals::run_with_signals;
use spamsort::daemon::{Daemon, DaemonConfig};
use spamsort::filter::shared::SharedFilter;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

// Arguments of `spamsort daemon` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct DaemonArgs {
    /// The maildir whose new/ is sorted (where the MTA or fetchmail delivers).
    #[arg(long, value_name = "MAILDIR")]
    inbox: PathBuf,
    /// Maildir for spam (created, mode 0700, if missing).
    #[arg(long, value_name = "MAILDIR")]
    spam: PathBuf,
    /// Maildir for ham.
    #[arg(long, value_name = "MAILDIR")]
    ham: PathBuf,
    /// Maildir for unsure messages [default: they go to the ham maildir].
    #[arg(long, value_name = "MAILDIR")]
    unsure: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    verdict: VerdictArgs,
    #[command(flatten)]
    headers: HeaderArgs,
    /// Add the X-Spam-* headers of `spamsort filter` to every filed message.
    #[arg(long)]
    add_headers: bool,
    /// Learn from the user's corrections: messages moved out of or into the spam maildir.
    /// While another writer (a `spamsort learn`) holds the model file, they wait, and new
    /// mail is sorted meanwhile.
    #[arg(long)]
    learn_from_moves: bool,
    /// Rescan the inbox this often (seconds) even without a change notice (and look this often
    /// for an inbox that cannot be read for a while).
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    rescan: u64,
}

pub fn run(args: DaemonArgs) -> anyhow::Result<ExitStatus> {
    logging::init();
    let config = args.model.config()?;
    let policy = args.verdict.policy(&config, Some(&args.headers))?;
    let path = args.model.path(&config)?;
    // Each message read or filed at once holds a file descriptor or two: as serve, take what
    // the hard limit allows (a message that cannot be opened for want of one waits anyway).
    if let Err(e) = spamsort::spamd::raise_open_file_limit() {
        tracing::warn!("cannot raise the open-file limit: {e}");
    }
    let filter = Arc::new(SharedFilter::load(&path, policy)?);
    let daemon = Daemon::new(
        DaemonConfig {
            inbox: args.inbox,
            spam: args.spam,
            ham: args.ham,
            unsure: args.unsure,
            add_headers: args.add_headers,
            learn_from_moves: args.learn_from_moves,
            rescan: Duration::from_secs(args.rescan.max(1)),
        },
        filter,
    )?;
    let (reload, stop) = (daemon.handle(), daemon.handle());
    run_with_signals(
        move || reload.reload(),
        move || stop.stop(),
        || daemon.run(),
    )??;
    Ok(ExitStatus::Success)
}
