//! `spamsort learn --spam|--ham|--unlearn [--if-wrong] PATH...`: learning one message at a
//! time, each once (see [`SpamFilter::learn`]), appended to the model file's journal (with
//! `--if-wrong`, which needs every model's verdict, the whole file is loaded and saved
//! atomically); a missing model file is created empty first (default settings), as
//! `bogofilter -s` does. A lock file beside the model
//! serializes concurrent runs, so two `learn`s never lose each other's updates.
//!
//! Of each message only its head is read, what the model's tokenizer reads of it (see
//! [`TokenizerConfig::head_bytes`]), as `classify` reads it: a message of any size is learned
//! as it is classified, and "learn once" knows it again, since a message's identity is a
//! digest of its tokens. The messages are read one at a time under that lock (standard input
//! before it, the rest of it drained), so a run holds one message's head, whatever the size of
//! its messages and mailboxes; a run is still one journal record or one save, all of it or
//! none, and what it holds until then is bounded too (see [`journal::RECORD_MEMORY`]).
//!
//! [`SpamFilter::learn`]: spamsort::SpamFilter::learn
//! [`TokenizerConfig::head_bytes`]: spamsort::TokenizerConfig::head_bytes

use super::args::{HeaderArgs, ModelArgs, VerdictArgs, waiting};
use super::{ExitStatus, input};
use spamsort::filter::journal;
use spamsort::filter::policy::HeaderStyle;
use spamsort::filter::store::LearnedStore;
use spamsort::filter::update::{IfMissing, update};
use spamsort::{Label, LearnOutcome, Verdict};
use std::path::PathBuf;

// Arguments of `spamsort learn` (not a doc comment: see `Command`).
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
    /// Learn only messages the classifier gets wrong or is unsure about (train on error),
    /// judged as `classify` would with the same config file and flags.
    #[arg(long, conflicts_with = "unlearn")]
    if_wrong: bool,
    /// Message files or mailboxes; `-` or nothing: one message on stdin.
    #[arg(value_name = "PATH|-")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// The verdict settings `--if-wrong` judges by (those of `classify` and `filter`).
    #[command(flatten)]
    verdict: VerdictArgs,
    /// How `filter` marked the messages: its marks (a subject tag) are taken off first.
    #[command(flatten)]
    headers: HeaderArgs,
}

/// Learns (or with `unlearn` forgets) every readable message of `messages`, read one at a
/// time, each at most its first `head` bytes, in `store`, as it was before `filter` marked it
/// in `style` (a subject tag is no evidence), skipping those `right` says the filter already
/// gets right; returns the counts and whether anything changed.
fn learn_all<S: LearnedStore + ?Sized>(
    store: &mut S,
    messages: impl Iterator<Item = Result<spamsort::corpus::Message, spamsort::corpus::CorpusError>>,
    head: u64,
    style: &HeaderStyle,
    label: Label,
    unlearn: bool,
    right: impl Fn(&S, &[u8]) -> spamsort::Result<bool>,
) -> spamsort::Result<(Counts, bool)> {
    let mut counts = Counts::default();
    for item in messages {
        let Some(message) = input::readable(&item, &mut counts.failed) else {
            continue;
        };
        // `head` came from the settings the file had before the lock was taken: a message cut
        // there whose tokens the settings now read past (another writer retrained meanwhile)
        // would be learned as a message it is not.
        if message.bytes.len() as u64 >= head && store.tokenizer_config().head_bytes() > head {
            super::say(format_args!(
                "spamsort: {}: not learned: the model's tokenizer settings changed while it was \
                 read; learn it again",
                super::terminal::escape_for_terminal(&message.source.to_string())
            ));
            counts.failed = true;
            continue;
        }
        if spamsort::corpus::is_blank(&message.bytes) {
            super::say(format_args!(
                "spamsort: {}: not learned: it is empty, no message",
                super::terminal::escape_for_terminal(&message.source.to_string())
            ));
            counts.failed = true;
            continue;
        }
        let bytes = style.unmarked(&message.bytes);
        if unlearn {
            match store.unlearn_message(&bytes)? {
                Some(_) => counts.changed += 1,
                None => counts.unchanged += 1,
            }
            continue;
        }
        if right(store, &bytes)? {
            counts.skipped += 1;
            continue;
        }
        match store.learn_message(&bytes, label)? {
            LearnOutcome::AlreadyLearned => counts.unchanged += 1,
            LearnOutcome::Learned | LearnOutcome::Relabeled => counts.changed += 1,
        }
    }
    let changed = counts.changed > 0;
    Ok((counts, changed))
}

/// How many messages one run changed, found already learned (or not learned, for
/// `--unlearn`), skipped as already right, and whether any could not be read.
#[derive(Debug, Default)]
struct Counts {
    changed: usize,
    unchanged: usize,
    skipped: usize,
    failed: bool,
}

pub fn run(args: LearnArgs) -> anyhow::Result<ExitStatus> {
    let label = if args.spam { Label::Spam } else { Label::Ham };
    let config = args.model.config()?;
    let policy = args.verdict.policy(&config, Some(&args.headers))?;
    let path = args.model.path(&config)?;
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.paths
    };
    // Checked against the paths named, before the model is read: the mailboxes are opened
    // one at a time as their turn comes.
    super::args::refuse_model_in(&path, paths.iter())?;
    if !args.unlearn {
        for path in &paths {
            input::refuse_other_class(path, label)?;
        }
    }
    // Only what the tokenizer reads of each message is held (see the module doc).
    let head = IfMissing::StartEmpty.tokenizer_config(&path)?.head_bytes();
    let messages = input::message_heads(&paths, head)?;
    super::args::make_model_dir(&path)?;
    let (unlearn, if_wrong) = (args.unlearn, args.if_wrong);
    let updated = if if_wrong {
        // Train on error needs the verdicts, so every model: the whole file is loaded and saved.
        update(&path, IfMissing::StartEmpty, waiting(&path), |filter| {
            learn_all(
                filter,
                messages,
                head,
                &policy.headers,
                label,
                unlearn,
                |f, raw| {
                    let verdict = policy.classify(f, raw)?.verdict;
                    Ok(matches!(
                        (verdict, label),
                        (Verdict::Spam, Label::Spam) | (Verdict::Ham, Label::Ham)
                    ))
                },
            )
        })?
    } else {
        // Appended to the model file's journal: no model is loaded, the file is not rewritten
        // (unless the run outgrows the journal).
        journal::learn(&path, waiting(&path), |store| {
            learn_all(
                store,
                messages,
                head,
                &policy.headers,
                label,
                unlearn,
                |_, _| Ok(false),
            )
        })?
    };
    if updated.created {
        super::say(format_args!(
            "{}: no model file yet, starting an empty one",
            path.display()
        ));
    }
    let Counts {
        changed,
        unchanged,
        skipped,
        failed,
    } = updated.answer;
    if args.unlearn {
        super::say(format_args!(
            "unlearned {changed} message(s), {unchanged} not learned before -> {}",
            path.display()
        ));
    } else {
        super::say(format_args!(
            "learned {changed} message(s) as {label}, {unchanged} already learned as {label}, {skipped} already right -> {}",
            path.display()
        ));
    }
    Ok(if failed {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    })
}
