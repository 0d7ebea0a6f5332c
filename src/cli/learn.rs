//! `spamsort learn --spam|--ham [--unlearn] [--if-wrong] PATH...`: incremental training, saved
//! atomically. A lock file beside the model serializes concurrent runs, so two `learn`s never
//! lose each other's updates.

use super::args::{ModelArgs, lock_model};
use super::config::Config;
use super::{ExitStatus, input};
use spamsort::{Label, SpamFilter, Verdict};
use std::path::PathBuf;

/// Arguments of `spamsort learn`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("class").required(true).args(["spam", "ham"])))]
pub struct LearnArgs {
    /// The messages are spam.
    #[arg(long)]
    spam: bool,
    /// The messages are ham.
    #[arg(long)]
    ham: bool,
    /// Forget messages learned before with the same label (exact for the Naive Bayes models).
    #[arg(long)]
    unlearn: bool,
    /// Learn only messages the active model gets wrong or is unsure about (train on error).
    #[arg(long, conflicts_with = "unlearn")]
    if_wrong: bool,
    /// Message files or mailboxes; `-` or nothing: one message on stdin.
    #[arg(value_name = "PATH|-")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: LearnArgs) -> anyhow::Result<ExitStatus> {
    let label = if args.spam { Label::Spam } else { Label::Ham };
    let config = Config::load()?;
    let path = args.model.path(&config)?;
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.paths
    };
    let messages = input::messages(&paths)?;
    let lock = lock_model(&path)?;
    let mut filter = SpamFilter::load(&path)?;
    let (mut learned, mut skipped, mut failed) = (0, 0, false);
    for item in &messages {
        let Some(message) = input::readable(item, &mut failed) else {
            continue;
        };
        if args.if_wrong {
            let verdict = filter.classify(&message.bytes).verdict;
            let right = matches!(
                (verdict, label),
                (Verdict::Spam, Label::Spam) | (Verdict::Ham, Label::Ham)
            );
            if right {
                skipped += 1;
                continue;
            }
        }
        filter.learn(&message.bytes, label, args.unlearn)?;
        learned += 1;
    }
    filter.save(&lock)?;
    drop(lock);
    let verb = if args.unlearn { "unlearned" } else { "learned" };
    eprintln!(
        "{verb} {learned} message(s) as {label}, {skipped} already right -> {}",
        path.display()
    );
    if args.unlearn {
        eprintln!(
            "note: linear-svm and logistic-regression cannot unlearn; retrain to remove a message from them"
        );
    }
    Ok(if failed {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    })
}
