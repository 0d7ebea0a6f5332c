//! The daemon's change notices: an inotify watch (through notify) on each directory it reads
//! (the inbox's `new/`, the move tracker's folders), kept on the directory that is there now.
//! A directory renamed away and back, or replaced by another (a backup tool, a restore), is
//! watched again; while one is missing its parent is watched instead, so that its return is
//! noticed at once. The periodic rescan stays the safety net for what inotify cannot tell (a
//! watch that could not be made, a directory replaced between two passes by one that took
//! its inode number).

use crate::corpus::file_id;
use notify::Watcher;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How many times [`Watches::refresh`] looks again at directories that change while it looks.
const MAX_ROUNDS: usize = 3;

/// The watches of a set of directories.
pub(super) struct Watches {
    watcher: notify::RecommendedWatcher,
    /// The directories to watch.
    dirs: Vec<PathBuf>,
    /// Each path watched (or tried: a failure is not tried again until it changes), with the
    /// identity (device and inode) it had then.
    watched: HashMap<PathBuf, (u64, u64)>,
}

impl Watches {
    /// Watches `dirs` (see [`Watches::refresh`]), calling `changed` on every change notice
    /// (opening and reading files, our own scans among them, are not changes). Fails only if
    /// no watcher can be made at all.
    pub fn new(dirs: Vec<PathBuf>, changed: impl Fn() + Send + 'static) -> crate::Result<Watches> {
        let watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
            if e.is_ok_and(|e| !matches!(e.kind, notify::EventKind::Access(_))) {
                changed();
            }
        })
        .map_err(|e| watch_error(dirs.first().map_or(Path::new("."), |d| d), e))?;
        let mut watches = Watches {
            watcher,
            dirs,
            watched: HashMap::new(),
        };
        let _ = watches.refresh();
        Ok(watches)
    }

    /// Brings the watches up to date with what is on disk now: each directory watched as the
    /// directory there now, or, while it is missing, its parent. Costs a `stat` per directory
    /// when nothing changed. A watch that cannot be made is logged (once, until the directory
    /// changes) and left to the rescan. Returns false if the directories kept changing while
    /// it looked: then look again soon, as a change may have gone unnoticed.
    pub fn refresh(&mut self) -> bool {
        // What is on disk is looked at again after each change of watches: a directory that
        // came back between the look and its parent's watch made no notice to wait for.
        for _ in 0..MAX_ROUNDS {
            let wanted = self.wanted();
            if wanted == self.watched {
                return true;
            }
            self.watch(wanted);
        }
        self.wanted() == self.watched
    }

    /// What should be watched now: each directory, or its parent while it is missing, with
    /// its identity.
    fn wanted(&self) -> HashMap<PathBuf, (u64, u64)> {
        let mut wanted = HashMap::new();
        for dir in &self.dirs {
            let here = file_id(dir).map(|id| (dir.clone(), id));
            let parent = || {
                let parent = dir.parent()?;
                Some((parent.to_path_buf(), file_id(parent)?))
            };
            if let Some((path, id)) = here.or_else(parent) {
                wanted.insert(path, id);
            }
        }
        wanted
    }

    /// Drops the watches not in `wanted` (or on another directory now) and makes the missing
    /// ones.
    fn watch(&mut self, wanted: HashMap<PathBuf, (u64, u64)>) {
        let Watches {
            watcher, watched, ..
        } = self;
        watched.retain(|path, id| {
            let same = wanted.get(path) == Some(id);
            if !same {
                // Its watch may be gone with the directory already.
                let _ = watcher.unwatch(path);
            }
            same
        });
        for (path, id) in wanted {
            if watched.contains_key(&path) {
                continue;
            }
            match watcher.watch(&path, notify::RecursiveMode::NonRecursive) {
                Ok(()) => tracing::debug!("watching {} for changes", path.display()),
                Err(e) => tracing::warn!(
                    "{}: changes not watched, looked at on every rescan: {e}",
                    path.display()
                ),
            }
            watched.insert(path, id);
        }
    }
}

fn watch_error(path: &Path, e: notify::Error) -> crate::Error {
    crate::Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Waits for a change notice (at most a minute, a bound, not a timing).
    fn noticed(rx: &mpsc::Receiver<()>) -> bool {
        rx.recv_timeout(Duration::from_secs(60)).is_ok()
    }

    /// `DIR/inbox/new`, made and watched, with the receiver of its change notices.
    fn watched_inbox_new(dir: &Path) -> (PathBuf, Watches, mpsc::Receiver<()>) {
        let new = dir.join("inbox/new");
        std::fs::create_dir_all(&new).unwrap();
        let (tx, rx) = mpsc::channel();
        let watches = Watches::new(vec![new.clone()], move || {
            let _ = tx.send(());
        })
        .unwrap();
        (new, watches, rx)
    }

    #[test]
    fn a_directory_renamed_away_and_replaced_is_watched_again() {
        let dir = tempfile::tempdir().unwrap();
        let (new, mut watches, rx) = watched_inbox_new(dir.path());
        std::fs::write(new.join("1"), "x").unwrap();
        assert!(noticed(&rx));
        // Renamed away: its parent is watched, and its return is noticed.
        std::fs::rename(&new, dir.path().join("inbox/away")).unwrap();
        assert!(watches.refresh());
        while rx.try_recv().is_ok() {}
        std::fs::create_dir(&new).unwrap();
        assert!(noticed(&rx));
        // Another directory now: watched as itself.
        assert!(watches.refresh());
        assert!(watches.watched.contains_key(&new) && watches.watched.len() == 1);
        while rx.try_recv().is_ok() {}
        std::fs::write(new.join("2"), "y").unwrap();
        assert!(noticed(&rx));
    }

    #[test]
    fn a_directory_back_before_its_parent_was_watched_is_watched_itself() {
        // Seen missing, back before the parent's watch was made: no notice comes of its
        // return, so the watches must be checked against the disk again.
        let dir = tempfile::tempdir().unwrap();
        let (new, mut watches, rx) = watched_inbox_new(dir.path());
        std::fs::rename(&new, dir.path().join("inbox/away")).unwrap();
        let seen_missing = watches.wanted();
        std::fs::create_dir(&new).unwrap();
        watches.watch(seen_missing);
        assert!(!watches.watched.contains_key(&new));
        assert!(watches.refresh());
        assert!(watches.watched.contains_key(&new) && watches.watched.len() == 1);
        while rx.try_recv().is_ok() {}
        std::fs::write(new.join("1"), "x").unwrap();
        assert!(noticed(&rx));
    }
}
