//! Learning from the user's corrections, as dovecot-antispam does for other filters: a message
//! that turns up in the spam folder from anywhere else is learned as spam; one the daemon (or
//! the user) had in the spam folder that turns up in the ham folder or the inbox's `cur/` is
//! learned as ham. (The inbox's `new/` is new mail, which is sorted, never learned.) Messages are recognized by their content (spamsort's own header fields set aside),
//! since mail programs rename files when they move them; renames within a folder (read flags,
//! `new/` to `cur/`) are not moves.

use crate::corpus::MAX_MESSAGE_BYTES;
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

/// The fingerprint [`MoveTracker`] keeps for a file it could not read as a message (a FIFO, a
/// device, a file over the readers' bound): never one of a message's places.
const UNREAD: u64 = 0;

/// Where each message was last seen.
#[derive(Debug)]
pub struct MoveTracker {
    /// Each watched directory with its place.
    dirs: Vec<(PathBuf, Place)>,
    /// Last place of each message, by content fingerprint: only of messages in a watched
    /// folder at the last scan (or filed since), so it is bounded by the folders' contents.
    place_of: HashMap<u64, Place>,
    /// Files already looked at, with their fingerprints ([`UNREAD`] for one that could not be):
    /// only files present at the last scan (or filed since).
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

    /// Looks at files not seen before and returns the corrections they make. Files gone from
    /// the folders are forgotten, and so is the place of a message no longer in any of them: a
    /// message deleted from the spam folder and delivered again later is new mail, not one the
    /// user moved out of spam.
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
                // A FIFO, device or endless file (a link to /dev/zero) is refused, a file over
                // the readers' bound too: not read again while it stays.
                let bytes = match crate::corpus::read_regular(&path, MAX_MESSAGE_BYTES) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        if e.kind() != std::io::ErrorKind::NotFound {
                            tracing::warn!("{}: not a message to learn from: {e}", path.display());
                            self.known.insert(path, UNREAD);
                        }
                        continue;
                    }
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
        let live: std::collections::HashSet<u64> = self.known.values().copied().collect();
        self.place_of.retain(|fp, _| live.contains(fp));
        corrections
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_links_to_them_are_not_read_as_moved_mail() {
        let dir = tempfile::tempdir().unwrap();
        let spam = dir.path().join("spam");
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(spam.join(sub)).unwrap();
        }
        let mut tracker = MoveTracker::new(&[(spam.clone(), Place::Spam)], HeaderStyle::default());
        let cur = spam.join("cur");
        // An endless device behind a link would be read until memory ran out; a FIFO without
        // a writer would block the daemon for good.
        std::os::unix::fs::symlink("/dev/zero", cur.join("1.zero.host:2,S")).unwrap();
        let fifo = cur.join("2.fifo.host:2,S");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        std::fs::write(cur.join("3.mail.host:2,S"), b"Subject: x\n\nbody\n").unwrap();
        let corrections = tracker.scan();
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].path, cur.join("3.mail.host:2,S"));
        assert_eq!(corrections[0].label, Label::Spam);
        // Looked at once: the next scan finds nothing new.
        assert!(tracker.scan().is_empty());
    }

    #[test]
    fn messages_gone_from_every_folder_are_forgotten() {
        // The map of places kept every message ever seen, so it grew for good; and a spam the
        // user deleted, delivered again later and filed as ham, was learned as ham.
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = (dir.path().join("spam"), dir.path().join("ham"));
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(spam.join(sub)).unwrap();
            std::fs::create_dir_all(ham.join(sub)).unwrap();
        }
        let folders = [(spam.clone(), Place::Spam), (ham.clone(), Place::Ham)];
        let mut tracker = MoveTracker::new(&folders, HeaderStyle::default());
        let message = b"Subject: cheap\n\nbuy now\n";
        for i in 0..10 {
            let path = spam.join(format!("cur/{i}.x:2,S"));
            std::fs::write(&path, [&message[..], format!("{i}\n").as_bytes()].concat()).unwrap();
        }
        assert_eq!(tracker.scan().len(), 10);
        assert_eq!((tracker.place_of.len(), tracker.known.len()), (10, 10));
        for i in 0..10 {
            std::fs::remove_file(spam.join(format!("cur/{i}.x:2,S"))).unwrap();
        }
        assert!(tracker.scan().is_empty());
        assert!(tracker.place_of.is_empty() && tracker.known.is_empty());
        std::fs::write(ham.join("new/3.y"), [&message[..], b"3\n"].concat()).unwrap();
        let corrections = tracker.scan();
        assert!(corrections.is_empty(), "{corrections:?}");
        // A message still in a folder keeps its place: moved out of spam, it is learned.
        std::fs::write(spam.join("cur/4.z:2,S"), b"Subject: 4\n\n4\n").unwrap();
        assert_eq!(tracker.scan()[0].label, Label::Spam);
        std::fs::rename(spam.join("cur/4.z:2,S"), ham.join("cur/4.z:2,S")).unwrap();
        let corrections = tracker.scan();
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].label, Label::Ham);
    }
}
