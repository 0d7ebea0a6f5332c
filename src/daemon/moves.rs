//! Learning from the user's corrections, as dovecot-antispam does for other filters: a message
//! that turns up in the spam folder from anywhere else is learned as spam; one the daemon (or
//! the user) had in the spam folder that turns up in the ham folder or the inbox's `cur/` is
//! learned as ham. (The inbox's `new/` is new mail, which is sorted, never learned.) Messages are recognized by their content (spamsort's own header fields set aside),
//! since mail programs rename files when they move them; renames within a folder (read flags,
//! `new/` to `cur/`) are not moves.

use crate::filter::policy::HeaderStyle;
use crate::label::Label;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

/// A folder the tracker watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The inbox (its `cur/`: `new/` is what the daemon sorts).
    Inbox,
    /// The spam folder.
    Spam,
    /// The ham folder.
    Ham,
    /// The unsure folder.
    Unsure,
}

/// Where each message was last seen.
#[derive(Debug)]
pub struct MoveTracker {
    /// Each watched directory with its place.
    dirs: Vec<(PathBuf, Place)>,
    /// Last place of each message, by content fingerprint.
    place_of: HashMap<u64, Place>,
    /// Files already looked at, with their fingerprints.
    known: HashMap<PathBuf, u64>,
    /// The header style of the copies the daemon files, set aside in fingerprints.
    style: HeaderStyle,
}

/// A correction: learn `message` as `label`.
#[derive(Debug)]
pub struct Correction {
    /// The moved message.
    pub path: PathBuf,
    /// What it is, by the user's move.
    pub label: Label,
}

impl MoveTracker {
    /// Watches the maildirs (their `new/` and `cur/`; the inbox's `cur/` only) and records
    /// where every message already is, learning nothing from them.
    /// `style` is how the daemon marks the copies it files: what fingerprints set aside.
    pub fn new(folders: &[(PathBuf, Place)], style: HeaderStyle) -> MoveTracker {
        let mut dirs = Vec::new();
        for (root, place) in folders {
            if *place != Place::Inbox {
                dirs.push((root.join("new"), *place));
            }
            dirs.push((root.join("cur"), *place));
        }
        let mut tracker = MoveTracker {
            dirs,
            place_of: HashMap::new(),
            known: HashMap::new(),
            style,
        };
        // What is already there was put there before we watched: nothing to learn.
        let _ = tracker.scan();
        tracker
    }

    /// A message's fingerprint: its bytes as they were before the daemon marked them (see
    /// [`HeaderStyle::unmarked`]).
    pub fn fingerprint(&self, message: &[u8]) -> u64 {
        let mut h = foldhash::fast::FixedState::with_seed(0x7370_616d).build_hasher();
        h.write(&self.style.unmarked(message));
        h.finish()
    }

    /// The directories to watch for changes.
    pub fn watched(&self) -> impl Iterator<Item = &Path> {
        self.dirs.iter().map(|(d, _)| d.as_path())
    }

    /// Records that the daemon itself filed the message with this fingerprint at `path` in
    /// `place`: not a move by the user, and not a file to read again.
    pub fn filed(&mut self, path: PathBuf, fp: u64, place: Place) {
        self.place_of.insert(fp, place);
        self.known.insert(path, fp);
    }

    /// Looks at files not seen before and returns the corrections they make.
    pub fn scan(&mut self) -> Vec<Correction> {
        let mut corrections = Vec::new();
        let mut present = std::collections::HashSet::new();
        for (dir, place) in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                present.insert(path.clone());
                if self.known.contains_key(&path) {
                    continue;
                }
                let Ok(bytes) = std::fs::read(&path) else {
                    continue;
                };
                let fp = self.fingerprint(&bytes);
                self.known.insert(path.clone(), fp);
                let before = self.place_of.insert(fp, *place);
                let label = match (before, place) {
                    (before, Place::Spam) if before != Some(Place::Spam) => Some(Label::Spam),
                    (Some(Place::Spam), Place::Ham | Place::Inbox) => Some(Label::Ham),
                    _ => None,
                };
                if let Some(label) = label {
                    corrections.push(Correction { path, label });
                }
            }
        }
        self.known.retain(|p, _| present.contains(p));
        corrections
    }
}
