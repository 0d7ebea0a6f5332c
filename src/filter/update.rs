//! [`update`]: the one way a model file is changed whole (lock, load, change, save), used by
//! `spamsort prune`, `learn --if-wrong`, spamd TELL, the daemon's learning from moves and the
//! journal's compaction (`spamsort learn` appends, see [`super::journal`]), all under the one
//! update lock, so no writer can lose another's update.

use super::{LearnOutcome, SpamFilter, TrainParams};
use crate::error::Result;
use crate::label::Label;
use crate::model_file::{self, ModelFileError, UpdateLock};
use crate::tokenize::TokenizerConfig;
use std::path::Path;

/// What [`update`] does when the model file does not exist.
#[derive(Debug, Clone, Copy)]
pub enum IfMissing<'a> {
    /// Start from an empty filter with default settings ([`SpamFilter::empty`]) and save it,
    /// as `spamsort learn` does (and `bogofilter -s` on an empty database).
    StartEmpty,
    /// Start from a copy of this filter and save it: a spamd user's first TELL starts the
    /// user's model from the shared model that classified the user's mail until then.
    StartFrom(&'a SpamFilter),
    /// Fail with the load error (a long-running front end must not replace its model with an
    /// empty one because the file went away).
    Fail,
}

impl IfMissing<'_> {
    /// The tokenizer settings a change of the model file at `path` would tokenize with, as
    /// they are now: the file's (only its head is read, without the update lock), or with no
    /// file there, those of the filter this starts (`Fail`: the load error). For a learner that
    /// reads only the head of each message (see [`TokenizerConfig::head_bytes`]) before it
    /// takes the lock: another writer may change the settings meanwhile, so the ones under the
    /// lock decide.
    pub fn tokenizer_config(&self, path: &Path) -> Result<TokenizerConfig> {
        let reader = match (model_file::ModelFileReader::open(path), self) {
            (Err(ModelFileError::Missing { .. }), IfMissing::StartEmpty) => {
                return Ok(TrainParams::default().tokenizer);
            }
            (Err(ModelFileError::Missing { .. }), IfMissing::StartFrom(base)) => {
                return Ok(base.tokenizer_config().clone());
            }
            (reader, _) => reader?,
        };
        Ok(super::layout::Head::read(&reader)?.tokenizer)
    }
}

/// What [`update`] did.
#[derive(Debug)]
pub struct Updated<T> {
    /// What the change returned.
    pub answer: T,
    /// The model file did not exist and was started as `if_missing` said
    /// ([`IfMissing::StartEmpty`] or [`IfMissing::StartFrom`]).
    pub created: bool,
    /// The filter as saved (after any pruning the save did), or `None` if nothing was saved:
    /// nothing changed, or [`super::journal::learn`] appended the change to the journal.
    pub saved: Option<SpamFilter>,
}

/// Changes the model file at `path`: takes its [`UpdateLock`]
/// (calling `waiting` once if another writer holds it), loads the file as it is on disk (or,
/// if it does not exist, what `if_missing` says), applies `change`, and saves atomically if
/// `change` says it changed something or the file was just created. `change` returns its
/// answer and whether it changed the filter. On any error the file on disk is left as it was.
pub fn update<T>(
    path: &Path,
    if_missing: IfMissing<'_>,
    waiting: impl FnOnce(),
    change: impl FnOnce(&mut SpamFilter) -> Result<(T, bool)>,
) -> Result<Updated<T>> {
    update_under(
        &model_file::lock_for_update_with(path, waiting)?,
        if_missing,
        change,
    )
}

/// [`update`] of the model file whose update lock `lock` is (taken by the caller, as it
/// chose: waiting, or [`model_file::try_lock_for_update`]).
pub fn update_under<T>(
    lock: &UpdateLock,
    if_missing: IfMissing<'_>,
    change: impl FnOnce(&mut SpamFilter) -> Result<(T, bool)>,
) -> Result<Updated<T>> {
    // The file the lock is for (see `super::journal::learn`).
    let path = &lock.model_path().to_path_buf();
    // Checked under the lock, so a file another writer creates meanwhile is loaded, not lost.
    let created = !matches!(if_missing, IfMissing::Fail) && !path.exists();
    let mut filter = match if_missing {
        IfMissing::StartEmpty if created => SpamFilter::empty(&TrainParams::default())?,
        IfMissing::StartFrom(base) if created => base.clone(),
        _ => {
            let reader = model_file::ModelFileReader::open(path)?;
            // Saved whole from what is read: nothing after the journal's records may be lost.
            reader.check_tail()?;
            SpamFilter::read(&reader, None)?
        }
    };
    let (answer, changed) = change(&mut filter)?;
    let saved = if changed || created {
        filter.save(lock)?;
        Some(filter)
    } else {
        None
    };
    Ok(Updated {
        answer,
        created,
        saved,
    })
}

/// Learns one message once (see [`SpamFilter::learn`]) into the model file of `lock` through
/// [`update_under`]: saved only if it changed the filter (a message already learned with this
/// label saves nothing) or the file was just created.
pub fn learn(
    lock: &UpdateLock,
    if_missing: IfMissing<'_>,
    raw: &[u8],
    label: Label,
) -> Result<Updated<LearnOutcome>> {
    update_under(lock, if_missing, |filter| {
        let outcome = filter.learn(raw, label)?;
        Ok((outcome, outcome != LearnOutcome::AlreadyLearned))
    })
}

/// Forgets one message learned before (see [`SpamFilter::unlearn`]) in the model file of
/// `lock` through [`update_under`]; the answer is the label it was learned as, `None` (and no
/// save unless the file was just created) if it was not learned.
pub fn unlearn(
    lock: &UpdateLock,
    if_missing: IfMissing<'_>,
    raw: &[u8],
) -> Result<Updated<Option<Label>>> {
    update_under(lock, if_missing, |filter| {
        let label = filter.unlearn(raw)?;
        Ok((label, label.is_some()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPAM: &[u8] = b"Subject: cheap meds\r\n\r\nbuy cheap meds now\r\n";

    #[test]
    fn a_missing_file_fails_without_being_created_unless_asked_to_start_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let err = update(&path, IfMissing::Fail, || {}, |_| Ok(((), true)));
        assert!(err.is_err());
        assert!(!path.exists());
        let updated = update(&path, IfMissing::StartEmpty, || {}, |_| Ok(((), false))).unwrap();
        assert!(updated.created && updated.saved.is_some());
        assert!(SpamFilter::load(&path).is_ok());
    }

    #[test]
    fn an_update_that_changes_nothing_leaves_the_file_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let learn = |f: &mut SpamFilter| {
            let outcome = f.learn(SPAM, Label::Spam)?;
            Ok((outcome, outcome != crate::LearnOutcome::AlreadyLearned))
        };
        let first = update(&path, IfMissing::StartEmpty, || {}, learn).unwrap();
        assert!(first.saved.is_some());
        let before = std::fs::read(&path).unwrap();
        let again = update(&path, IfMissing::Fail, || {}, learn).unwrap();
        assert_eq!(again.answer, crate::LearnOutcome::AlreadyLearned);
        assert!(!again.created && again.saved.is_none());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
