//! [`SharedFilter`]: the filter of one model file, shared by the threads of a long-running
//! front end (the spamd server, the maildir daemon). Scoring threads take a cheap snapshot;
//! reloading (on SIGHUP, after `train` or `learn` replaced the file) and learning swap in a new
//! filter without stopping them.

use super::update::{self, IfMissing, Updated};
use super::{LearnOutcome, SpamFilter};
use crate::error::Result;
use crate::label::Label;
use crate::model_file::ModelFileError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// A model file's filter, replaceable while in use.
#[derive(Debug)]
pub struct SharedFilter {
    path: PathBuf,
    current: RwLock<Arc<SpamFilter>>,
}

impl SharedFilter {
    /// Loads the model file (every model: learning needs them all).
    pub fn load(path: &Path) -> Result<SharedFilter, ModelFileError> {
        Ok(SharedFilter {
            path: path.to_path_buf(),
            current: RwLock::new(Arc::new(SpamFilter::load(path)?)),
        })
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The filter as it is now; later reloads and learning do not change it.
    pub fn current(&self) -> Arc<SpamFilter> {
        // A writer that panicked left a whole filter behind (swaps are one assignment).
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Loads the model file again. On failure the filter in use stays.
    pub fn reload(&self) -> Result<(), ModelFileError> {
        let filter = SpamFilter::load(&self.path)?;
        self.swap(filter);
        Ok(())
    }

    /// Learns one message once (see [`SpamFilter::learn`]) and saves the model file
    /// atomically through [`update`], as `spamsort learn` does: under the file's
    /// [`UpdateLock`](crate::model_file::UpdateLock), starting from the file as it is on disk,
    /// so no update by another writer is lost. A message already learned with this label saves
    /// nothing.
    pub fn learn(&self, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        let updated = update::learn(&self.path, IfMissing::Fail, raw, label)?;
        Ok(self.swap_in(updated))
    }

    /// Forgets one message learned before (see [`SpamFilter::unlearn`]) and saves the model
    /// file as [`SharedFilter::learn`] does; `None` (and no save) if it was not learned.
    pub fn unlearn(&self, raw: &[u8]) -> Result<Option<Label>> {
        let updated = update::unlearn(&self.path, IfMissing::Fail, raw)?;
        Ok(self.swap_in(updated))
    }

    /// Swaps in the filter an update saved (a missing file was an error), if it saved one.
    fn swap_in<T>(&self, updated: Updated<T>) -> T {
        if let Some(filter) = updated.saved {
            self.swap(filter);
        }
        updated.answer
    }

    fn swap(&self, filter: SpamFilter) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(filter);
    }
}
