//! `spamsort train --spam PATH... --ham PATH...`: read mailboxes, tokenize, build the
//! vocabulary, save the model file.

use super::ExitStatus;
use super::args::{LabeledMailArgs, ModelArgs, lock_model, refuse_model_in};
use spamsort::filter::ActiveModel;
use spamsort::model_file::ModelFileError;
use spamsort::models::{ModelKind, ModelParams};
use spamsort::{Label, SpamFilter, TrainParams};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

// Arguments of `spamsort train` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    #[command(flatten)]
    mail: LabeledMailArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// The model whose verdicts count, fusion included [default: the best by 3-fold
    /// cross-validation on the training mail].
    #[arg(long, value_name = "NAME", value_parser = super::args::model_kind())]
    active: Option<ModelKind>,
    /// Replace a model file even if it holds messages learned by `learn` (corrections) that the
    /// training mail does not hold with the same label, which the new model would drop; or a
    /// file there that is no model file at all (a mailbox?)
    #[arg(long)]
    force: bool,
}

pub fn run(args: TrainArgs) -> anyhow::Result<ExitStatus> {
    let model_path = args.model.path(&args.model.config()?)?;
    let models = args.mail.kinds()?;
    let active = args.active;
    if let Some(kind) = active.filter(|k| !models.contains(k)) {
        anyhow::bail!("--active {kind} is not among --models");
    }
    // Before the mail is read: a model (and its lock) among it would be a new message there.
    let inputs = args.mail.spam.iter().chain(&args.mail.ham);
    refuse_model_in(&model_path, inputs)?;
    if !args.force {
        refuse_other_file(&model_path)?;
    }
    let started = Instant::now();
    let mut params = TrainParams {
        models: models
            .iter()
            .map(|&k| ModelParams::default_for(k))
            .collect(),
        active: Some(active.map_or(ActiveModel::BestByCrossValidation, ActiveModel::Fixed)),
        ..TrainParams::default()
    };
    params.vocabulary.min_df = args.mail.min_df;
    let skipped = AtomicUsize::new(0);
    let read = AtomicUsize::new(0);
    let mut filter = {
        let bar = if std::io::stderr().is_terminal() {
            indicatif::ProgressBar::no_length()
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template("tokenizing {pos} messages")
                .expect("valid template"),
        );
        // The mail is read as training goes, a window of messages at a time, never held whole.
        let mail = args.mail.stream(|| {
            skipped.fetch_add(1, Ordering::Relaxed);
        })?;
        let mail = mail.map(|item| {
            read.fetch_add(usize::from(item.is_ok()), Ordering::Relaxed);
            item.map(|(m, label)| (m.bytes, label))
        });
        let filter =
            SpamFilter::train_stream(mail, &params, || bar.inc(1)).map_err(|e| match e {
                spamsort::Error::Corpus(_) => {
                    anyhow::Error::new(e).context("reading the labeled mail")
                }
                e => e.into(),
            })?;
        bar.finish_and_clear();
        filter
    };
    let skipped = skipped.into_inner();
    super::args::make_model_dir(&model_path)?;
    // Taken only now, so a `learn` waits for the save of the retrained model, never for the
    // training: one that started before saves first, and is checked for below.
    let lock = lock_model(&model_path)?;
    if !args.force {
        keeps_every_correction(&model_path, &filter)?;
    }
    filter.save(&lock)?;
    let s = filter.summary();
    // A message found again (another copy of it) counts once.
    let copies = read.into_inner() as u64 - s.messages.iter().sum::<u64>();
    super::say(format_args!(
        "trained on {} spam + {} ham ({} skipped, {} copies counted once): {} tokens, vocabulary {}, models {} (active {}), {:.2} s -> {}",
        s.messages[Label::Spam.index()],
        s.messages[Label::Ham.index()],
        skipped,
        copies,
        s.tokens,
        filter.vocabulary().len(),
        filter
            .model_kinds()
            .iter()
            .chain(filter.fusion().map(|_| &ModelKind::Fusion))
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(","),
        filter.active(),
        started.elapsed().as_secs_f64(),
        model_path.display()
    ));
    Ok(ExitStatus::Success)
}

/// Fails if the model file at `path` holds messages learned by `learn` (a user's corrections:
/// `learn`, spamd TELL, the daemon's moves) that `trained`, the model about to replace it,
/// does not hold with the same label (the training mail lacks them, or has them as the other
/// class): replacing the file would drop them without a word. Fails too if a file there is no
/// model file at all (it does not start as one, and is not empty): `--model ~/Mail/INBOX`, an
/// mbox taken for the option's argument, replaced the mailbox with a model, every message in it
/// lost. Called under the file's update lock, so a correction learned while `train` ran counts
/// too. A missing or empty file, and a model file that cannot be read (damaged, another
/// format version), hold none that could be kept.
fn keeps_every_correction(path: &std::path::Path, trained: &SpamFilter) -> anyhow::Result<()> {
    let old = match SpamFilter::load(path) {
        Ok(old) => old,
        Err(ModelFileError::NotAModel { .. }) => return refuse_other_file(path),
        Err(_) => return Ok(()),
    };
    let kept = |digest, label| {
        trained
            .learned()
            .get(digest)
            .is_some_and(|l| l.label == label)
    };
    let dropped = (old.learned().iter())
        .filter(|(digest, l)| !l.in_training && !kept(*digest, l.label))
        .count();
    if dropped > 0 {
        anyhow::bail!(
            "{} holds {dropped} message(s) learned by `learn` (corrections) that the training \
             mail does not hold with the same label: the new model would drop them, so it was \
             not saved. Put them in the training folders, give --force to replace it anyway, or \
             save it first (`spamsort dump`)",
            path.display()
        );
    }
    Ok(())
}

/// Fails if a file is at `path` that is not empty and does not start as a model file does: no
/// model `train` should replace without `--force` (a mailbox or a message named by mistake).
/// Checked before the mail is read and the update lock taken (whose file, `NAME.lock` beside a
/// mailbox `NAME`, is the dot-lock mail programs wait on), and again under the lock.
fn refuse_other_file(path: &std::path::Path) -> anyhow::Result<()> {
    let magic = spamsort::model_file::MAGIC;
    let start = spamsort::corpus::read_regular_head(path, magic.len() as u64);
    match start {
        Ok(start) if !start.is_empty() && start != magic => {
            anyhow::bail!(
                "{} is not a spamsort model file (a mailbox or message?): train would replace \
                 it, so nothing was saved. Name the model file to write with --model, or give \
                 --force to replace this file anyway",
                path.display()
            )
        }
        // Missing, empty, a model file (sound or not): `train` may write there. Anything but
        // a regular file is refused where the lock and the save look at it.
        _ => Ok(()),
    }
}
