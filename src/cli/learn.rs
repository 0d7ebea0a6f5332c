//! `spamsort learn --spam|--ham|--unlearn [--if-wrong] PATH...`: learning one message at a
//! time, each once (see [`SpamFilter::learn`]), saved atomically; a missing model file is
//! created empty first (default settings), as `bogofilter -s` does. A lock file beside the model
//! serializes concurrent runs, so two `learn`s never lose each other's updates.

use super::args::{ModelArgs, lock_model};
use super::config::Config;
use super::{ExitStatus, input};
use anyhow::Context;
use spamsort::{Label, LearnOutcome, SpamFilter, TrainParams, Verdict};
use std::path::PathBuf;

/// Arguments of `spamsort learn`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("class").args(["spam", "ham"])))]
pub struct LearnArgs {
    /// The messages are spam.
    #[arg(long, required_unless_present_any = ["ham", "unlearn"])]
    spam: bool,
    /// The messages are ham.
    #[arg(long)]
    ham: bool,
    /// Forget messages learned before, with whatever label they were learned (exact for the
    /// Naive Bayes models; an opposite step for the others). Needs no --spam/--ham (one given
    /// is not needed: the record of learned messages has the label).
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
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let lock = lock_model(&path)?;
    let mut filter = if path.exists() {
        SpamFilter::load(&path)?
    } else {
        eprintln!(
            "{}: no model file yet, starting an empty one",
            path.display()
        );
        SpamFilter::empty(&TrainParams::default())?
    };
    let (mut changed, mut unchanged, mut skipped, mut failed) = (0, 0, 0, false);
    for item in &messages {
        let Some(message) = input::readable(item, &mut failed) else {
            continue;
        };
        if args.unlearn {
            match filter.unlearn(&message.bytes)? {
                Some(_) => changed += 1,
                None => unchanged += 1,
            }
            continue;
        }
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
        match filter.learn(&message.bytes, label)? {
            LearnOutcome::AlreadyLearned => unchanged += 1,
            LearnOutcome::Learned | LearnOutcome::Relabeled => changed += 1,
        }
    }
    if changed > 0 || !path.exists() {
        filter.save(&lock)?;
    }
    drop(lock);
    if args.unlearn {
        eprintln!(
            "unlearned {changed} message(s), {unchanged} not learned before -> {}",
            path.display()
        );
    } else {
        eprintln!(
            "learned {changed} message(s) as {label}, {unchanged} already learned as {label}, {skipped} already right -> {}",
            path.display()
        );
    }
    Ok(if failed {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    })
}
