//! [`SharedFilter`]: the filter of one model file, shared by the threads of a long-running
//! front end (the spamd server, the maildir daemon). Scoring threads take a cheap snapshot;
//! reloading (on SIGHUP, after `train` or `learn` replaced the file) and learning swap in a new
//! filter without stopping them. Every filter it holds answers as its [`Policy`] says (the
//! model and thresholds chosen by the config file and flags, applied in memory; the file keeps
//! its own).

use super::policy::Policy;
use super::update::{self, IfMissing, Updated};
use super::{LearnOutcome, SpamFilter};
use crate::corpus::file_id;
use crate::error::{Error, Result};
use crate::label::Label;
use crate::model_file::{self, UpdateLock};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// A model file's filter, replaceable while in use.
#[derive(Debug)]
pub struct SharedFilter {
    path: PathBuf,
    policy: Policy,
    current: RwLock<Arc<SpamFilter>>,
    /// Held from reading the file to swapping in what was read (a reload, a learn's save), so
    /// swaps come in the order of the file's states: a reload that read the file before a
    /// learn saved it cannot swap its older filter in after the learn's.
    swapping: Mutex<()>,
}

impl SharedFilter {
    /// Loads the model file (every model: learning needs them all) and applies `policy` to
    /// it; fails if the file lacks the policy's model or its thresholds do not fit the file's.
    pub fn load(path: &Path, policy: Policy) -> Result<SharedFilter> {
        let filter = Self::load_under(path, &policy)?;
        Ok(SharedFilter {
            path: path.to_path_buf(),
            policy,
            current: RwLock::new(Arc::new(filter)),
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
    pub fn current(&self) -> Arc<SpamFilter> {
        // A writer that panicked left a whole filter behind (swaps are one assignment).
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Loads the model file again. On failure (the policy's model gone from it included) the
    /// filter in use stays.
    pub fn reload(&self) -> Result<()> {
        let _swapping = self.swapping();
        let filter = Self::load_under(&self.path, &self.policy)?;
        self.swap(filter);
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
        self.learn_under(model_file::lock_for_update(&self.path)?, raw, label)
    }

    /// [`SharedFilter::learn`] if the model file's update lock is free now; `None`, at once
    /// and with nothing learned, if another writer holds it (see
    /// [`model_file::try_lock_for_update`]): for a caller that must not wait behind it.
    pub fn try_learn(&self, raw: &[u8], label: Label) -> Result<Option<LearnOutcome>> {
        let _swapping = self.swapping();
        match model_file::try_lock_for_update(&self.path)? {
            Some(lock) => self.learn_under(lock, raw, label).map(Some),
            None => Ok(None),
        }
    }

    /// [`SharedFilter::learn`] under `lock`, the model file's update lock, with `swapping`
    /// held.
    fn learn_under(&self, lock: UpdateLock, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        // The policy's own marks (a subject tag) are not part of the message.
        let raw = self.policy.headers.unmarked(raw);
        let updated = update::learn(lock, IfMissing::Fail, &raw, label)?;
        Ok(self.swap_in(updated))
    }

    /// Forgets one message learned before (see [`SpamFilter::unlearn`]) and saves the model
    /// file as [`SharedFilter::learn`] does; `None` (and no save) if it was not learned.
    pub fn unlearn(&self, raw: &[u8]) -> Result<Option<Label>> {
        let raw = self.policy.headers.unmarked(raw);
        let _swapping = self.swapping();
        let lock = model_file::lock_for_update(&self.path)?;
        let updated = update::unlearn(lock, IfMissing::Fail, &raw)?;
        Ok(self.swap_in(updated))
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
        Ok(update::learn(lock, if_missing, &raw, label)?.answer)
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
        Ok(update::unlearn(lock, IfMissing::Fail, &raw)?.answer)
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

    /// Swaps in the filter an update saved (a missing file was an error), if it saved one.
    fn swap_in<T>(&self, updated: Updated<T>) -> T {
        if let Some(mut filter) = updated.saved {
            // It learned in memory: refreshed, as at load.
            filter.refresh();
            // The saved file has the same models, so the policy applied at load fits it; if it
            // somehow does not, the filter in use stays until a reload says why.
            if self.policy.apply(&mut filter).is_ok() {
                self.swap(filter);
            }
        }
        updated.answer
    }

    fn swap(&self, filter: SpamFilter) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(filter);
    }
}
