//! [`SharedFilter`]: the filter of one model file, shared by the threads of a long-running
//! front end (the spamd server, the maildir daemon). Scoring threads take a cheap snapshot;
//! reloading (when the file changed on disk: `spamsort learn`, `train`, another learner; and
//! on SIGHUP) and learning swap in a new filter without stopping them. Every filter it holds
//! answers as its [`Policy`] says (the model and thresholds chosen by the config file and
//! flags, applied in memory; the file keeps its own).

use super::policy::Policy;
use super::update::{self, IfMissing, Updated};
use super::{LearnOutcome, SpamFilter};
use crate::corpus::file_id;
use crate::error::{Error, Result};
use crate::label::Label;
use crate::model_file::{self, FileStamp, UpdateLock};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, TryLockError};

/// A model file's filter, replaceable while in use.
#[derive(Debug)]
pub struct SharedFilter {
    path: PathBuf,
    policy: Policy,
    /// The filter in use and the state of the file it was read from or saved as.
    current: RwLock<(Arc<SpamFilter>, Option<FileStamp>)>,
    /// Held from reading the file to swapping in what was read (a reload, a learn's save), so
    /// swaps come in the order of the file's states: a reload that read the file before a
    /// learn saved it cannot swap its older filter in after the learn's.
    swapping: Mutex<()>,
}

impl SharedFilter {
    /// Loads the model file (every model: learning needs them all) and applies `policy` to
    /// it; fails if the file lacks the policy's model or its thresholds do not fit the file's.
    pub fn load(path: &Path, policy: Policy) -> Result<SharedFilter> {
        // Stamped before it is read: a change in between is read again at the next message.
        let stamp = FileStamp::of(path);
        let filter = Self::load_under(path, &policy)?;
        Ok(SharedFilter {
            path: path.to_path_buf(),
            policy,
            current: RwLock::new((Arc::new(filter), stamp)),
            swapping: Mutex::new(()),
        })
    }

    /// The file's filter under `policy`, its cached functions refreshed: a journal applied at
    /// load leaves the Naive Bayes models computing each weight from the counts at every
    /// decision instead.
    fn load_under(path: &Path, policy: &Policy) -> Result<SpamFilter> {
        let mut filter = SpamFilter::load(path)?;
        filter.refresh();
        policy
            .apply(&mut filter)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        Ok(filter)
    }

    /// The policy every verdict follows (its header style included).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The filter as it is now, under the policy; later reloads and learning do not change it.
    /// If the model file changed on disk since the filter in use was read or saved (a
    /// `spamsort learn` appended to it, `train` or another learner replaced it), it is read
    /// again first, so what they learned counts from the next message on. A file that cannot
    /// be read then (damaged, gone, without the policy's model) leaves the filter in use, with
    /// a warning, until it changes again. While another thread reloads or learns, this one
    /// does not wait: it gets the filter in use.
    pub fn current(&self) -> Arc<SpamFilter> {
        let (filter, stamp) = self.in_use();
        if FileStamp::of(&self.path) == stamp {
            return filter;
        }
        drop(filter);
        self.follow_file();
        self.in_use().0
    }

    /// The filter in use and the state of the file it came from.
    fn in_use(&self) -> (Arc<SpamFilter>, Option<FileStamp>) {
        // A writer that panicked left a whole pair behind (swaps are one assignment).
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reads the model file again, found no longer in the state the filter in use came from
    /// (see [`SharedFilter::current`]), unless another thread swaps meanwhile.
    fn follow_file(&self) {
        let _swapping = match self.swapping.try_lock() {
            Ok(guard) => guard,
            // It guards no data: a holder that panicked left nothing half done.
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            // A reload or a learn under way swaps in the newer state itself.
            Err(TryLockError::WouldBlock) => return,
        };
        // Again, now that no swap can come in between: a learn may have saved this state.
        let stamp = FileStamp::of(&self.path);
        let (filter, in_use) = self.in_use();
        if stamp == in_use {
            return;
        }
        let path = self.path.display();
        match Self::load_under(&self.path, &self.policy) {
            Ok(loaded) => {
                tracing::info!("{path}: the model file changed on disk and was read again");
                self.swap(loaded, stamp);
            }
            Err(e) => {
                tracing::warn!(
                    "{path}: the model file changed on disk but cannot be read, keeping the \
                     model in use: {e}"
                );
                // Not read again until it changes again.
                self.swap_arc(filter, stamp);
            }
        }
    }

    /// Loads the model file again. On failure (the policy's model gone from it included) the
    /// filter in use stays.
    pub fn reload(&self) -> Result<()> {
        let _swapping = self.swapping();
        let stamp = FileStamp::of(&self.path);
        let filter = Self::load_under(&self.path, &self.policy)?;
        self.swap(filter, stamp);
        Ok(())
    }

    /// Learns one message once (see [`SpamFilter::learn`]), as it was before the policy's
    /// header style marked it ([`HeaderStyle::unmarked`](super::policy::HeaderStyle::unmarked)),
    /// and saves the model file
    /// atomically through [`update`], as `spamsort learn` does: under the file's
    /// [`UpdateLock`], starting from the file as it is on disk,
    /// so no update by another writer is lost. A message already learned with this label saves
    /// nothing.
    pub fn learn(&self, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        let _swapping = self.swapping();
        let lock = model_file::lock_for_update(&self.path)?;
        Ok(self.learn_under(lock, &[raw], label)?[0])
    }

    /// [`SharedFilter::learn`] if the model file's update lock is free now; `None`, at once
    /// and with nothing learned, if another writer holds it (see
    /// [`model_file::try_lock_for_update`]): for a caller that must not wait behind it.
    pub fn try_learn(&self, raw: &[u8], label: Label) -> Result<Option<LearnOutcome>> {
        Ok(self
            .try_learn_all(&[raw], label)?
            .map(|outcomes| outcomes[0]))
    }

    /// [`SharedFilter::try_learn`] of several messages in one update (one load and one save
    /// of the model file, all or nothing), with each one's outcome.
    pub fn try_learn_all(&self, raws: &[&[u8]], label: Label) -> Result<Option<Vec<LearnOutcome>>> {
        let _swapping = self.swapping();
        match model_file::try_lock_for_update(&self.path)? {
            Some(lock) => self.learn_under(lock, raws, label).map(Some),
            None => Ok(None),
        }
    }

    /// Learns `raws` in one update under `lock`, the model file's update lock, with `swapping`
    /// held (see [`SharedFilter::learn`]); each message's outcome.
    fn learn_under(
        &self,
        lock: UpdateLock,
        raws: &[&[u8]],
        label: Label,
    ) -> Result<Vec<LearnOutcome>> {
        // The policy's own marks (a subject tag) are not part of a message.
        let raws: Vec<Vec<u8>> = raws
            .iter()
            .map(|r| self.policy.headers.unmarked(r))
            .collect();
        let updated = update::update_under(&lock, IfMissing::Fail, |filter| {
            let outcomes = (raws.iter())
                .map(|raw| filter.learn(raw, label))
                .collect::<Result<Vec<_>>>()?;
            let changed = outcomes.iter().any(|&o| o != LearnOutcome::AlreadyLearned);
            Ok((outcomes, changed))
        })?;
        Ok(self.swap_in(updated, &lock))
    }

    /// Forgets one message learned before (see [`SpamFilter::unlearn`]) and saves the model
    /// file as [`SharedFilter::learn`] does; `None` (and no save) if it was not learned.
    pub fn unlearn(&self, raw: &[u8]) -> Result<Option<Label>> {
        let raw = self.policy.headers.unmarked(raw);
        let _swapping = self.swapping();
        let lock = model_file::lock_for_update(&self.path)?;
        let updated = update::unlearn(&lock, IfMissing::Fail, &raw)?;
        Ok(self.swap_in(updated, &lock))
    }

    /// Learns one message once, as [`SharedFilter::learn`] does, into another model file
    /// `path` (a spamd user's): a missing one starts as a copy of this filter's model file as
    /// it is on disk (its own active model and thresholds, not the policy's, which apply in
    /// memory only). The filter in use is not changed, unless `path` is its own model file
    /// (by another name): then this is [`SharedFilter::learn`].
    pub fn learn_into(&self, path: &Path, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        if self.is_own_file(path) {
            return self.learn(raw, label);
        }
        let raw = self.policy.headers.unmarked(raw);
        let base = if path.exists() {
            None
        } else {
            Some(SpamFilter::load(&self.path)?)
        };
        let if_missing = base.as_ref().map_or(IfMissing::Fail, IfMissing::StartFrom);
        let lock = model_file::lock_for_update(path)?;
        Ok(update::learn(&lock, if_missing, &raw, label)?.answer)
    }

    /// Forgets one message learned before in another model file `path`, as
    /// [`SharedFilter::unlearn`] does; a missing file has learned nothing (`None`, and no file
    /// is made). Its own model file (by another name) is [`SharedFilter::unlearn`].
    pub fn unlearn_from(&self, path: &Path, raw: &[u8]) -> Result<Option<Label>> {
        if !path.exists() {
            return Ok(None);
        }
        if self.is_own_file(path) {
            return self.unlearn(raw);
        }
        let raw = self.policy.headers.unmarked(raw);
        let lock = model_file::lock_for_update(path)?;
        Ok(update::unlearn(&lock, IfMissing::Fail, &raw)?.answer)
    }

    /// True if `path` names the file this filter was loaded from (the same file, whatever the
    /// name: a spamd user named after it, a link).
    fn is_own_file(&self, path: &Path) -> bool {
        file_id(path).is_some_and(|id| file_id(&self.path) == Some(id))
    }

    /// The guard that orders swaps (the `swapping` field).
    fn swapping(&self) -> MutexGuard<'_, ()> {
        // It guards no data: a holder that panicked left nothing half done.
        self.swapping.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Swaps in the filter an update under `lock` saved (a missing file was an error), if it
    /// saved one, with the state of the file it saved (the lock still keeps other writers out).
    fn swap_in<T>(&self, updated: Updated<T>, lock: &UpdateLock) -> T {
        if let Some(mut filter) = updated.saved {
            // It learned in memory: refreshed, as at load.
            filter.refresh();
            // The saved file has the same models, so the policy applied at load fits it; if it
            // somehow does not, the filter in use stays until a reload says why.
            if self.policy.apply(&mut filter).is_ok() {
                self.swap(filter, FileStamp::of(lock.model_path()));
            }
        }
        updated.answer
    }

    /// Puts `filter`, read from or saved as the file's state `stamp`, in use.
    fn swap(&self, filter: SpamFilter, stamp: Option<FileStamp>) {
        self.swap_arc(Arc::new(filter), stamp);
    }

    /// [`SharedFilter::swap`] of a filter already shared (the one in use, kept).
    fn swap_arc(&self, filter: Arc<SpamFilter>, stamp: Option<FileStamp>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = (filter, stamp);
    }
}
