//! Learning from the user's corrections, as dovecot-antispam does for other filters: a message
//! that turns up in the spam folder from anywhere else is learned as spam; one the daemon (or
//! the user) had in the spam folder that turns up in the ham folder or the inbox's `cur/` is
//! learned as ham. The inbox's `new/` is new mail, which the daemon sorts; one there that a
//! scan found gone from the spam folder a moment before ([`MoveTracker::left_spam`]) is the
//! user's move out of it (an unread message moved back to Dovecot's INBOX lands in `new/`),
//! which the daemon learns as ham and keeps (see `Daemon::taken_out_of_spam`). Messages are
//! recognized by their content (spamsort's own header fields set aside), since mail programs
//! rename files when they move them; renames within a folder (read flags, `new/` to `cur/`)
//! are not moves.

use crate::corpus::MAX_MESSAGE_BYTES;
use crate::filter::policy::HeaderStyle;
use crate::label::Label;
use std::collections::HashSet;
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A folder the tracker watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// How much of a message over [`MAX_MESSAGE_BYTES`] its fingerprint reads (see
/// [`MoveTracker::huge_fingerprint`]): enough to tell messages apart by their header fields.
const HUGE_HEAD_BYTES: u64 = 1024 * 1024;

/// How long a message gone from the spam folder (and from every other watched folder) is
/// taken for one the user moved out of it when it turns up in the inbox's `new/`. A move shows
/// both within a pass or two (a second apart); past this, the same bytes in `new/` are mail
/// delivered again, sorted as new.
pub const LEFT_SPAM_FOR: Duration = Duration::from_secs(60);

/// The tracker's record in the inbox's root (beside `spamsort-kept`): where each message of
/// the watched folders was at the last scan, one line a file, `FINGERPRINT PATH` (sixteen hex
/// digits, a space, the path's bytes), rewritten atomically at most every [`SAVE_EVERY`] while
/// the daemon runs and when it stops. A restart reads it instead of every message, and learns
/// the moves made while it was stopped (see [`MoveTracker::new`]). The corrections found and
/// not yet learned follow, one a line, `LABEL FINGERPRINT PATH` (`spam` or `ham`): the record
/// already places their messages where the user put them, so a restart learns them from
/// these lines (a line an earlier release cannot read as a file's, so passes over).
pub const PLACES_NAME: &str = "spamsort-places";

/// How much of the record is read (some 500,000 messages); beyond it, messages are read and
/// their moves while the daemon was stopped not learned.
const MAX_PLACES_BYTES: u64 = 64 * 1024 * 1024;

/// How often the record is rewritten at most while the daemon runs.
const SAVE_EVERY: Duration = Duration::from_secs(10);

/// What a scan learns from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// The first, with no record: nothing (what is there was put there before the daemon
    /// watched).
    First,
    /// The first after a restart, from the record: only moves of messages the record places
    /// elsewhere (one it does not know may have been filed by the daemon just before it
    /// stopped, after the record was last written).
    Resumed,
    /// Every later one: every move.
    Running,
}

/// Where each message was last seen.
#[derive(Debug)]
pub struct MoveTracker {
    /// Each watched directory with its place.
    dirs: Vec<(PathBuf, Place)>,
    /// Last place of each message, by content fingerprint: only of messages in a watched
    /// folder at the last scan (or filed since), so it is bounded by the folders' contents.
    place_of: HashMap<u64, Place>,
    /// Files already looked at, with their fingerprints ([`UNREAD`] for one that could not be):
    /// only files present at the last scan (or in a directory it could not read, or filed
    /// since).
    known: HashMap<PathBuf, u64>,
    /// Messages that were in the spam folder and that a scan found in no watched folder (or a
    /// file of which it found gone from the spam folder, not renamed there), with when, and the
    /// names in the inbox's `new/` right after that scan: for [`LEFT_SPAM_FOR`] only (so
    /// bounded by what leaves the folder in that time).
    left_spam: HashMap<u64, (Instant, Arc<HashSet<OsString>>)>,
    /// The inbox's `new/`, listed when messages leave the spam folder.
    inbox_new: Option<PathBuf>,
    /// The record's file ([`PLACES_NAME`]), if kept.
    record: Option<PathBuf>,
    /// `known` changed since the record was written.
    dirty: bool,
    /// When the record was last written.
    saved_at: Option<Instant>,
    /// The last write of the record failed (said once).
    save_failed: bool,
    /// Corrections found and not yet learned, oldest first: at most one per message (a later
    /// move replaces it), and only of messages in a watched folder at the last scan.
    pending: VecDeque<Correction>,
    /// The header style of the copies the daemon files, set aside in fingerprints.
    style: HeaderStyle,
    /// Files there before the daemon watched that the first scan could not read for a cause
    /// that may pass: a later scan records where they are, as the first would have, without
    /// taking them for moves.
    unread_at_start: std::collections::HashSet<PathBuf>,
    /// Directories the first scan could not list: every file of their first listing is
    /// recorded as [`MoveTracker::unread_at_start`] files are.
    unlisted_at_start: std::collections::HashSet<PathBuf>,
    /// How long after its last write a new file is read ([`deliver::SETTLE`]): one written
    /// more recently may be half written.
    ///
    /// [`deliver::SETTLE`]: super::deliver::SETTLE
    settle: Duration,
    /// Files the first scan after a restart found still being written: judged when settled as
    /// that scan would have (one the record does not know, which the daemon may have filed
    /// just before it stopped, is no move).
    unsettled_at_resume: HashSet<PathBuf>,
}

/// What the record `spamsort-places` holds (see [`PLACES_NAME`]).
struct Record {
    /// Each file of the watched folders, with its fingerprint and place.
    places: Vec<(PathBuf, u64, Place)>,
    /// The corrections found and not yet learned, oldest first.
    waiting: Vec<Correction>,
}

/// A correction: learn the message at `path` as `label`.
#[derive(Debug, Clone)]
pub struct Correction {
    /// The moved message.
    pub path: PathBuf,
    /// What it is, by the user's move.
    pub label: Label,
    /// The message's fingerprint, by which it is found again if renamed.
    fingerprint: u64,
}

impl MoveTracker {
    /// Watches the maildirs (their `new/` and `cur/`; the inbox's `cur/` only) and records
    /// where every message already is. `style` is how the daemon marks the copies it files:
    /// what fingerprints set aside. With a `record` file ([`PLACES_NAME`]) left by an earlier
    /// run, the messages it lists where they still are are not read again, and a message it
    /// places elsewhere than where it is now was moved while the daemon was stopped: learned
    /// (queued) as a move seen running would be. Without one, nothing already there is learned.
    pub fn new(
        folders: &[(PathBuf, Place)],
        style: HeaderStyle,
        record: Option<PathBuf>,
    ) -> MoveTracker {
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
            left_spam: HashMap::new(),
            inbox_new: (folders.iter())
                .find(|(_, place)| *place == Place::Inbox)
                .map(|(root, _)| root.join("new")),
            pending: VecDeque::new(),
            style,
            unread_at_start: std::collections::HashSet::new(),
            unlisted_at_start: std::collections::HashSet::new(),
            settle: super::deliver::SETTLE,
            unsettled_at_resume: HashSet::new(),
            record,
            dirty: false,
            saved_at: None,
            save_failed: false,
        };
        match tracker.load_record() {
            Some(Record { places, waiting }) => {
                for (path, fp, place) in places {
                    tracker.place_of.insert(fp, place);
                    tracker.known.insert(path, fp);
                }
                tracker.scan_as(Scan::Resumed);
                // Found before the restart and not learned then (the model file was held, the
                // daemon stopped or crashed first): learned first, unless the message moved
                // again meanwhile (its later move is queued); the next scan drops those of
                // messages that left the folders, as it drops any.
                for c in waiting.into_iter().rev() {
                    let queued = tracker
                        .pending
                        .iter()
                        .any(|q| q.fingerprint == c.fingerprint);
                    if !queued {
                        tracker.pending.push_front(c);
                    }
                }
            }
            None => {
                // What is already there was put there before we watched: nothing to learn.
                // What could not be read yet is learned from nothing either when it is (see
                // `unread_at_start`).
                tracker.scan_as(Scan::First);
                tracker.pending.clear();
            }
        }
        tracker.dirty = true;
        tracker
    }

    /// The place of the watched directory `dir`.
    fn place_of_dir(&self, dir: Option<&Path>) -> Option<Place> {
        let dir = dir?;
        self.dirs.iter().find(|(d, _)| d == dir).map(|&(_, p)| p)
    }

    /// The record's files in the watched directories with their fingerprints and places, and
    /// its corrections not yet learned, or `None` without a record (none yet, unreadable:
    /// said). A line that is neither `FINGERPRINT PATH` nor `LABEL FINGERPRINT PATH` of a
    /// watched directory (the folders given differently since) is passed over.
    fn load_record(&self) -> Option<Record> {
        use std::os::unix::ffi::OsStrExt;
        let path = self.record.as_ref()?;
        let complete = match super::kept::read_record(path, MAX_PLACES_BYTES) {
            Ok(bytes) => bytes?,
            Err(e) => {
                tracing::warn!("{}: not read ({e}): every message is read", path.display());
                return None;
            }
        };
        let entry = |line: &[u8]| {
            let (hex, file) = (line.get(..16)?, line.get(17..)?);
            let fp = u64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            let file = PathBuf::from(std::ffi::OsStr::from_bytes(file));
            let place = self.place_of_dir(file.parent())?;
            (line[16] == b' ' && fp != UNREAD).then_some((file, fp, place))
        };
        let (mut known, mut waiting) = (Vec::new(), Vec::new());
        for line in complete.split(|&b| b == b'\n') {
            let labeled = [Label::Spam, Label::Ham].into_iter().find_map(|label| {
                let rest = line.strip_prefix(label.as_str().as_bytes())?;
                Some((label, rest.strip_prefix(b" ")?))
            });
            match labeled {
                Some((label, rest)) => {
                    if let Some((path, fingerprint, _)) = entry(rest) {
                        waiting.push(Correction {
                            path,
                            label,
                            fingerprint,
                        });
                    }
                }
                None => known.extend(entry(line)),
            }
        }
        Some(Record {
            places: known,
            waiting,
        })
    }

    /// Writes the record if `known` changed since it was written, at most every
    /// [`SAVE_EVERY`] unless `now`. A failure is said (once while it lasts) and tried again.
    pub fn save(&mut self, now: bool) {
        use std::os::unix::ffi::OsStrExt;
        let Some(path) = &self.record else {
            return;
        };
        let due = now || self.saved_at.is_none_or(|at| at.elapsed() >= SAVE_EVERY);
        if !self.dirty || !due {
            return;
        }
        let mut text = Vec::new();
        for (file, &fp) in &self.known {
            let bytes = file.as_os_str().as_bytes();
            if fp != UNREAD && !bytes.contains(&b'\n') {
                text.extend_from_slice(format!("{fp:016x} ").as_bytes());
                text.extend_from_slice(bytes);
                text.push(b'\n');
            }
        }
        for c in &self.pending {
            let bytes = c.path.as_os_str().as_bytes();
            if !bytes.contains(&b'\n') {
                text.extend_from_slice(format!("{} {:016x} ", c.label, c.fingerprint).as_bytes());
                text.extend_from_slice(bytes);
                text.push(b'\n');
            }
        }
        // Said once while it lasts (a failure is retried every SAVE_EVERY).
        let failed_before = self.save_failed;
        self.saved_at = Some(Instant::now());
        match super::kept::write_record(path, &text) {
            Ok(()) => (self.dirty, self.save_failed) = (false, false),
            Err(e) => {
                if !failed_before {
                    tracing::warn!(
                        "{}: not written ({e}): a restart reads every message again",
                        path.display()
                    );
                }
                self.save_failed = true;
            }
        }
    }

    /// A message's fingerprint: its bytes as they were before the daemon marked them (see
    /// [`HeaderStyle::unmarked`]).
    pub fn fingerprint(&self, message: &[u8]) -> u64 {
        self.unmarked_hasher(message).finish()
    }

    /// A hasher fed the bytes of `message` as they were before the daemon marked them: the
    /// start of every fingerprint.
    fn unmarked_hasher(&self, message: &[u8]) -> impl Hasher {
        let mut h = foldhash::fast::FixedState::with_seed(0x7370_616d).build_hasher();
        h.write(&self.style.unmarked(message));
        h
    }

    /// The fingerprint of the message file at `path`, over [`MAX_MESSAGE_BYTES`]: its first
    /// [`HUGE_HEAD_BYTES`] (unmarked) and its length. The daemon files such a message
    /// unclassified, so never marked, and learns its head when the user moves it (as every
    /// learner learns what the tokenizer reads): it is known by these, not read whole.
    fn huge_fingerprint(&self, path: &Path) -> std::io::Result<u64> {
        use std::io::Read;
        let file = crate::corpus::open_regular(path)?;
        let len = file.metadata()?.len();
        let mut head = Vec::with_capacity(HUGE_HEAD_BYTES as usize);
        file.take(HUGE_HEAD_BYTES).read_to_end(&mut head)?;
        let mut h = self.unmarked_hasher(&head);
        h.write_u64(len);
        Ok(h.finish())
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
        self.dirty = true;
    }

    /// Looks at files not seen before and queues the corrections they make (see
    /// [`MoveTracker::next_correction`]). Files gone from the folders are forgotten, and so is
    /// the place of a message no longer in any of them (a message deleted from the spam folder
    /// and delivered again later is new mail, not one the user moved out of spam) and its
    /// queued correction; one gone from the spam folder is noted for [`LEFT_SPAM_FOR`] (see
    /// [`MoveTracker::left_spam`]). A directory that cannot be read now (renamed away for a while by a
    /// backup tool) keeps what was known of it: when it is back, its messages are where they
    /// were, not moved there.
    ///
    /// Returns the error of a file that could not be read now for a cause that may pass (too
    /// many open files): it is read at a later scan, which should come soon.
    pub fn scan(&mut self) -> Option<std::io::Error> {
        self.scan_as(Scan::Running)
    }

    /// [`MoveTracker::scan`], learning what `scan` says.
    fn scan_as(&mut self, scan: Scan) -> Option<std::io::Error> {
        let at_start = scan != Scan::Running;
        let known_before = self.known.len();
        let mut again = None;
        let mut present = std::collections::HashSet::new();
        let mut unread: Vec<PathBuf> = Vec::new();
        // The fingerprints of files left for a later scan, still being written.
        let mut unsettled = HashSet::new();
        // Every directory listed first, so the directory is closed before its files are read
        // (one descriptor at a time, where few are left), and so what left each place since
        // the last scan is known before any new file is judged.
        let mut listings = Vec::new();
        for (dir, place) in &self.dirs {
            match std::fs::read_dir(dir).and_then(|d| d.collect::<Result<Vec<_>, _>>()) {
                Ok(entries) => {
                    present.extend(entries.iter().map(std::fs::DirEntry::path));
                    listings.push((dir, *place, entries));
                }
                Err(e) => {
                    if at_start {
                        self.unlisted_at_start.insert(dir.clone());
                    }
                    if super::may_pass(&e) {
                        again.get_or_insert(e);
                    }
                    unread.push(dir.clone());
                }
            }
        }
        // Files of the last scan gone now, by message and place: a new file of the same
        // message in the same place is one of them renamed there (a mail reader's `new/` to
        // `cur/`, a flag changed), not a move, even while a copy of the message (delivered
        // twice) is in another folder.
        // A file gone: not there now, its directory listed (one that could not be read keeps
        // what was known of it).
        let gone = |p: &Path| {
            !present.contains(p) && !p.parent().is_some_and(|d| unread.iter().any(|u| u == d))
        };
        let mut renamed: HashMap<(u64, Place), usize> = HashMap::new();
        for (path, &fp) in &self.known {
            if let Some(place) = self.place_of_dir(path.parent())
                && fp != UNREAD
                && gone(path)
            {
                *renamed.entry((fp, place)).or_default() += 1;
            }
        }
        for (dir, place, entries) in listings {
            let first_listing = self.unlisted_at_start.remove(dir);
            for entry in entries {
                let path = entry.path();
                if self.known.contains_key(&path) {
                    continue;
                }
                // One written straight into the folder (a `cp`, not through `tmp/`) may be half
                // written: read once it is settled, at a later scan, as the inbox's new mail is.
                if still_written(&path, self.settle) {
                    // A message renamed here (moved, its time kept from a write a moment ago)
                    // keeps its place meanwhile, so it is judged as moved from there once read.
                    if let Ok(bytes) = crate::corpus::read_regular(&path, MAX_MESSAGE_BYTES) {
                        unsettled.insert(self.fingerprint(&bytes));
                    }
                    if scan == Scan::First || first_listing {
                        self.unread_at_start.insert(path);
                    } else if scan == Scan::Resumed {
                        self.unsettled_at_resume.insert(path);
                    }
                    again.get_or_insert_with(super::deliver::not_yet);
                    continue;
                }
                // A FIFO, device or endless file (a link to /dev/zero) is refused: not read
                // again while it stays.
                let fp = match crate::corpus::read_regular(&path, MAX_MESSAGE_BYTES) {
                    Ok(bytes) => self.fingerprint(&bytes),
                    Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                        match self.huge_fingerprint(&path) {
                            Ok(fp) => fp,
                            Err(e) if super::may_pass(&e) => {
                                if at_start || first_listing {
                                    self.unread_at_start.insert(path);
                                }
                                again.get_or_insert(e);
                                continue;
                            }
                            Err(e) => {
                                tracing::warn!(
                                    "{}: not a message to learn from: {e}",
                                    path.display()
                                );
                                self.known.insert(path, UNREAD);
                                continue;
                            }
                        }
                    }
                    Err(e) if super::may_pass(&e) => {
                        tracing::debug!("{}: not read now, read again soon: {e}", path.display());
                        if at_start || first_listing {
                            self.unread_at_start.insert(path);
                        }
                        again.get_or_insert(e);
                        continue;
                    }
                    Err(e) => {
                        if e.kind() != std::io::ErrorKind::NotFound {
                            tracing::warn!("{}: not a message to learn from: {e}", path.display());
                            self.known.insert(path, UNREAD);
                        }
                        continue;
                    }
                };
                self.known.insert(path.clone(), fp);
                self.dirty = true;
                let before = self.place_of.insert(fp, place);
                let was_here = renamed.get_mut(&(fp, place)).is_some_and(|n| {
                    let here = *n > 0;
                    *n = n.saturating_sub(1);
                    here
                });
                // A rename leaves the message where the user last put it (a copy moved out of
                // the spam folder stays learned as moved there: moved back, it is a move).
                if was_here && let Some(before) = before {
                    self.place_of.insert(fp, before);
                }
                let settled_since_resume = self.unsettled_at_resume.remove(&path);
                if self.unread_at_start.remove(&path) || first_listing || was_here {
                    continue;
                }
                let label = match (before, place) {
                    (None, _) if scan == Scan::Resumed || settled_since_resume => None,
                    (before, Place::Spam) if before != Some(Place::Spam) => Some(Label::Spam),
                    (Some(Place::Spam), Place::Ham | Place::Inbox) => Some(Label::Ham),
                    _ => None,
                };
                if let Some(label) = label {
                    self.dirty = true;
                    self.pending.retain(|c| c.fingerprint != fp);
                    self.pending.push_back(Correction {
                        path,
                        label,
                        fingerprint: fp,
                    });
                }
            }
        }
        self.known.retain(|p, _| !gone(p));
        self.dirty |= self.known.len() != known_before;
        self.unread_at_start.retain(|p| !gone(p));
        self.unsettled_at_resume.retain(|p| !gone(p));
        let live: std::collections::HashSet<u64> =
            (self.known.values().copied()).chain(unsettled).collect();
        let now = Instant::now();
        self.left_spam
            .retain(|_, (at, _)| now.duration_since(*at) < LEFT_SPAM_FOR);
        let mut gone: Vec<u64> = (self.place_of.iter())
            .filter(|&(fp, place)| *place == Place::Spam && !live.contains(fp))
            .map(|(&fp, _)| fp)
            .collect();
        // A file gone from the spam folder and not renamed there, while a copy of its message
        // (delivered twice) stays in a folder: as much a move out of it.
        gone.extend(
            (renamed.iter())
                .filter(|&(&(_, place), &n)| place == Place::Spam && n > 0)
                .map(|(&(fp, _), _)| fp),
        );
        gone.sort_unstable();
        gone.dedup();
        if !gone.is_empty() {
            // What a move out of the spam folder has put in the inbox's `new/` by now: a file
            // put there later is mail delivered later. (Names, not times: a file's times come
            // from the file system's clock, a network server's on NFS.)
            let names: HashSet<OsString> = (self.inbox_new.iter())
                .filter_map(|dir| std::fs::read_dir(dir).ok())
                .flatten()
                .filter_map(|entry| entry.ok().map(|e| e.file_name()))
                .collect();
            let names = Arc::new(names);
            tracing::debug!("{} message(s) gone from the spam folder", gone.len());
            for fp in gone {
                self.left_spam.insert(fp, (now, names.clone()));
            }
        }
        self.place_of.retain(|fp, _| live.contains(fp));
        self.pending.retain(|c| live.contains(&c.fingerprint));
        again
    }

    /// If a scan less than [`LEFT_SPAM_FOR`] ago found the message of fingerprint `fp`, which
    /// was in the spam folder, in no watched folder: the names in the inbox's `new/` right
    /// after that scan. A file of the message under one of them is the user's move out of the
    /// spam folder; one put there later, mail delivered again.
    pub fn left_spam(&self, fp: u64) -> Option<&HashSet<OsString>> {
        self.left_spam
            .get(&fp)
            .filter(|(at, _)| at.elapsed() < LEFT_SPAM_FOR)
            .map(|(_, names)| names.as_ref())
    }

    /// True if the message of fingerprint `fp` was in the spam folder at the last scan (or was
    /// filed there since).
    pub fn in_spam(&self, fp: u64) -> bool {
        self.place_of.get(&fp) == Some(&Place::Spam)
    }

    /// The oldest correction not yet learned, with the path its message had at the last scan
    /// (another if the message was renamed since it was found: a mail reader's `new/` to
    /// `cur/`). It stays queued until [`MoveTracker::done`].
    pub fn next_correction(&self) -> Option<Correction> {
        let c = self.pending.front()?;
        if self.known.get(&c.path) == Some(&c.fingerprint) {
            return Some(c.clone());
        }
        let renamed = self.known.iter().find(|(_, fp)| **fp == c.fingerprint);
        renamed.map(|(path, _)| Correction {
            path: path.clone(),
            ..c.clone()
        })
    }

    /// Takes the oldest correction off the queue: learned, or given up.
    pub fn done(&mut self) {
        self.dirty |= self.pending.pop_front().is_some();
    }
}

/// True if the file at `path` may still be written: written less than `settle` ago, or open
/// for writing by another process (where the kernel says, see `writers.rs`).
fn still_written(path: &Path, settle: Duration) -> bool {
    let fresh = (std::fs::metadata(path).and_then(|m| m.modified())).is_ok_and(|m| {
        (std::time::SystemTime::now().duration_since(m)).is_ok_and(|age| age < settle)
    });
    fresh || super::writers::open_for_writing(path) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a scan finds: the corrections it queued, taken off the queue.
    fn scanned(tracker: &mut MoveTracker) -> Vec<Correction> {
        tracker.scan();
        let mut found = Vec::new();
        while let Some(c) = tracker.next_correction() {
            found.push(c);
            tracker.done();
        }
        found
    }

    #[test]
    fn devices_fifos_and_links_to_them_are_not_read_as_moved_mail() {
        let dir = tempfile::tempdir().unwrap();
        let spam = dir.path().join("spam");
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(spam.join(sub)).unwrap();
        }
        let mut tracker = settled(&[(spam.clone(), Place::Spam)], None);
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
        let corrections = scanned(&mut tracker);
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].path, cur.join("3.mail.host:2,S"));
        assert_eq!(corrections[0].label, Label::Spam);
        // Looked at once: the next scan finds nothing new.
        assert!(scanned(&mut tracker).is_empty());
    }

    /// Maildirs `spam` and `ham` in `dir`.
    fn spam_and_ham(dir: &Path) -> (PathBuf, PathBuf) {
        let (spam, ham) = (dir.join("spam"), dir.join("ham"));
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(spam.join(sub)).unwrap();
            std::fs::create_dir_all(ham.join(sub)).unwrap();
        }
        (spam, ham)
    }

    /// A tracker over `folders` that reads a file as soon as it is there (no settling).
    fn settled(folders: &[(PathBuf, Place)], record: Option<PathBuf>) -> MoveTracker {
        let mut tracker = MoveTracker::new(folders, HeaderStyle::default(), record);
        tracker.settle = Duration::ZERO;
        tracker
    }

    #[test]
    fn messages_gone_from_every_folder_are_forgotten() {
        // The map of places kept every message ever seen, so it grew for good; and a spam the
        // user deleted, delivered again later and filed as ham, was learned as ham.
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = spam_and_ham(dir.path());
        let folders = [(spam.clone(), Place::Spam), (ham.clone(), Place::Ham)];
        let mut tracker = settled(&folders, None);
        let message = b"Subject: cheap\n\nbuy now\n";
        for i in 0..10 {
            let path = spam.join(format!("cur/{i}.x:2,S"));
            std::fs::write(&path, [&message[..], format!("{i}\n").as_bytes()].concat()).unwrap();
        }
        assert_eq!(scanned(&mut tracker).len(), 10);
        assert_eq!((tracker.place_of.len(), tracker.known.len()), (10, 10));
        for i in 0..10 {
            std::fs::remove_file(spam.join(format!("cur/{i}.x:2,S"))).unwrap();
        }
        assert!(scanned(&mut tracker).is_empty());
        assert!(tracker.place_of.is_empty() && tracker.known.is_empty());
        std::fs::write(ham.join("new/3.y"), [&message[..], b"3\n"].concat()).unwrap();
        let corrections = scanned(&mut tracker);
        assert!(corrections.is_empty(), "{corrections:?}");
        // A message still in a folder keeps its place: moved out of spam, it is learned.
        std::fs::write(spam.join("cur/4.z:2,S"), b"Subject: 4\n\n4\n").unwrap();
        assert_eq!(scanned(&mut tracker)[0].label, Label::Spam);
        std::fs::rename(spam.join("cur/4.z:2,S"), ham.join("cur/4.z:2,S")).unwrap();
        let corrections = scanned(&mut tracker);
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].label, Label::Ham);
    }

    /// A tracker of `spam` and `other` (as `place`) after the same message was delivered
    /// twice and filed twice into `spam`, as `new/1.a` and `new/2.b`, and scanned; with the
    /// message's fingerprint.
    fn filed_twice_into_spam(spam: &Path, (other, place): (&Path, Place)) -> (MoveTracker, u64) {
        let folders = [
            (spam.to_path_buf(), Place::Spam),
            (other.to_path_buf(), place),
        ];
        let mut tracker = settled(&folders, None);
        let message = b"Subject: twice\n\nthe same bytes\n";
        let fp = tracker.fingerprint(message);
        for name in ["new/1.a", "new/2.b"] {
            std::fs::write(spam.join(name), message).unwrap();
            tracker.filed(spam.join(name), fp, Place::Spam);
        }
        assert!(scanned(&mut tracker).is_empty());
        (tracker, fp)
    }

    #[test]
    fn a_rename_within_a_folder_is_no_move_while_a_copy_is_elsewhere() {
        // Regression: of a message delivered twice and filed twice into the spam folder, the
        // user moved one copy into the ham folder (learned as ham), then only read the other
        // one (`new/` to `cur/`): that rename was taken for a move into the spam folder and
        // learned as spam, undoing the user's correction.
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = spam_and_ham(dir.path());
        let (mut tracker, _) = filed_twice_into_spam(&spam, (&ham, Place::Ham));
        std::fs::rename(spam.join("new/1.a"), ham.join("cur/1.a:2,S")).unwrap();
        let corrections = scanned(&mut tracker);
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].label, Label::Ham);
        std::fs::rename(spam.join("new/2.b"), spam.join("cur/2.b:2,S")).unwrap();
        let corrections = scanned(&mut tracker);
        assert!(corrections.is_empty(), "{corrections:?}");
        // Moved back into the spam folder, it is a move again (the other copy stays there).
        std::fs::rename(ham.join("cur/1.a:2,S"), spam.join("cur/1.a:2,S")).unwrap();
        let corrections = scanned(&mut tracker);
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].label, Label::Spam);
    }

    #[test]
    fn a_copy_moved_out_of_spam_into_the_inbox_while_another_stays_is_seen_leaving() {
        // Regression: of a spam delivered twice and filed twice into the spam folder, the copy
        // the user moved into the inbox's `new/` (Dovecot's INBOX, unread) was not seen leaving
        // the spam folder while the other copy stayed: it was sorted back into the spam folder
        // as new mail and never learned as ham.
        let dir = tempfile::tempdir().unwrap();
        let (spam, inbox) = spam_and_ham(dir.path());
        let (mut tracker, fp) = filed_twice_into_spam(&spam, (&inbox, Place::Inbox));
        // Read in the spam folder: a rename there, not a move out of it.
        std::fs::rename(spam.join("new/2.b"), spam.join("cur/2.b:2,S")).unwrap();
        assert!(scanned(&mut tracker).is_empty());
        assert!(tracker.left_spam(fp).is_none());
        std::fs::rename(spam.join("new/1.a"), inbox.join("new/3.c")).unwrap();
        assert!(scanned(&mut tracker).is_empty());
        assert!(
            tracker
                .left_spam(fp)
                .is_some_and(|names| names.contains(std::ffi::OsStr::new("3.c")))
        );
    }

    #[test]
    fn a_folder_away_for_a_while_is_no_move_when_it_is_back() {
        // Its messages were forgotten while it could not be read, and when it was back, every
        // one in the spam folder was taken for one moved there and learned as spam.
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = spam_and_ham(dir.path());
        std::fs::write(spam.join("cur/1.a:2,S"), b"Subject: 1\n\n1\n").unwrap();
        std::fs::write(ham.join("cur/2.b:2,S"), b"Subject: 2\n\n2\n").unwrap();
        let folders = [(spam.clone(), Place::Spam), (ham.clone(), Place::Ham)];
        let mut tracker = settled(&folders, None);
        for away in [&spam, &ham] {
            let elsewhere = away.with_extension("away");
            std::fs::rename(away, &elsewhere).unwrap();
            assert!(scanned(&mut tracker).is_empty());
            std::fs::rename(&elsewhere, away).unwrap();
            let corrections = scanned(&mut tracker);
            assert!(corrections.is_empty(), "{corrections:?}");
        }
    }

    #[test]
    fn a_correction_not_learned_when_the_daemon_stopped_is_learned_after_the_restart() {
        // Regression: a move found while another writer held the model file (or just before a
        // crash) was still queued when the daemon stopped, but the record it saved placed the
        // message where the user had put it: the restart saw no move, and it was never learned.
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = spam_and_ham(dir.path());
        let folders = [(spam.clone(), Place::Spam), (ham.clone(), Place::Ham)];
        let record = Some(dir.path().join(PLACES_NAME));
        std::fs::write(ham.join("cur/1.a:2,S"), b"Subject: 1\n\n1\n").unwrap();
        let mut tracker = settled(&folders, record.clone());
        std::fs::rename(ham.join("cur/1.a:2,S"), spam.join("cur/1.a:2,S")).unwrap();
        tracker.scan();
        assert!(tracker.next_correction().is_some());
        // Stopped before it was learned (the model file was held), renamed by a mail reader
        // while the daemon was stopped.
        tracker.save(true);
        std::fs::rename(spam.join("cur/1.a:2,S"), spam.join("cur/1.a:2,RS")).unwrap();
        let mut tracker = settled(&folders, record.clone());
        tracker.scan();
        let c = tracker.next_correction().expect("still to be learned");
        assert_eq!((c.path, c.label), (spam.join("cur/1.a:2,RS"), Label::Spam));
        // Learned: not again after the next restart.
        tracker.done();
        tracker.save(true);
        let mut tracker = settled(&folders, record);
        assert!(scanned(&mut tracker).is_empty());
    }

    #[test]
    fn a_message_written_straight_into_the_spam_folder_is_read_once_settled() {
        // Regression: a message written into the spam folder's `cur/` by a slow `cp` (not
        // through `tmp/`) was read at once, half written, and learned as spam; the whole
        // message never was, and its move out of the spam folder was no move (its fingerprint
        // was of the first bytes).
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = spam_and_ham(dir.path());
        let folders = [(spam.clone(), Place::Spam), (ham.clone(), Place::Ham)];
        let mut tracker = MoveTracker::new(&folders, HeaderStyle::default(), None);
        let path = spam.join("cur/1.a:2,S");
        std::fs::write(&path, b"Subject: half\n").unwrap();
        let again = tracker.scan().expect("read again soon");
        assert!(super::super::deliver::is_not_yet(&again), "{again}");
        assert!(tracker.next_correction().is_none());
        // The rest written, and settled.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, b"\nthe whole body\n").unwrap();
        let past = std::time::SystemTime::now() - super::super::deliver::SETTLE * 2;
        file.set_modified(past).unwrap();
        drop(file);
        let corrections = scanned(&mut tracker);
        assert_eq!(corrections.len(), 1, "{corrections:?}");
        assert_eq!(corrections[0].label, Label::Spam);
        assert_eq!(
            corrections[0].fingerprint,
            tracker.fingerprint(b"Subject: half\n\nthe whole body\n")
        );
    }

    #[test]
    fn a_correction_stays_queued_until_done_and_follows_its_message() {
        let dir = tempfile::tempdir().unwrap();
        let (spam, ham) = spam_and_ham(dir.path());
        let folders = [(spam.clone(), Place::Spam), (ham.clone(), Place::Ham)];
        let mut tracker = settled(&folders, None);
        std::fs::write(spam.join("new/1.a"), b"Subject: 1\n\n1\n").unwrap();
        std::fs::write(spam.join("new/2.b"), b"Subject: 2\n\n2\n").unwrap();
        tracker.scan();
        // Not learned yet (the model was locked): still there after the next scan, found
        // where a mail reader renamed it meanwhile.
        let first = tracker.next_correction().unwrap();
        std::fs::rename(&first.path, spam.join("cur/moved:2,S")).unwrap();
        tracker.scan();
        let again = tracker.next_correction().unwrap();
        assert_eq!(again.path, spam.join("cur/moved:2,S"));
        assert_eq!(again.label, Label::Spam);
        // A message moved on before it was learned: only its last move counts.
        std::fs::rename(spam.join("cur/moved:2,S"), ham.join("cur/moved:2,S")).unwrap();
        // A message gone from every folder: its correction goes too.
        let other = spam.join(if first.path.ends_with("1.a") {
            "new/2.b"
        } else {
            "new/1.a"
        });
        std::fs::remove_file(other).unwrap();
        let left = scanned(&mut tracker);
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(left[0].path, ham.join("cur/moved:2,S"));
        assert_eq!(left[0].label, Label::Ham);
    }
}
