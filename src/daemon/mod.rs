//! The maildir daemon: files every message arriving in an inbox maildir's `new/` into a spam,
//! ham or unsure maildir by its verdict, and (optionally) learns from the user's corrections.
//!
//! `deliver.rs` moves messages so that none is ever lost or left in two places, `recover.rs`
//! finishes or rolls back what a crash interrupted, `moves.rs` recognizes corrections,
//! `layout.rs` checks which folder is which (refusing unsafe overlaps) and `kept.rs` records the
//! ham left in place when the inbox is also the ham folder. The loop
//! waits on inotify (`watch.rs`) with a periodic rescan as a safety net, so it reacts
//! within milliseconds and uses no CPU while idle. Only `new/` is read: a message still being
//! delivered is in `tmp/` until its MTA renames it, complete, into `new/`.
//!
//! Once running, the daemon stops only when asked to. An inbox that cannot be read for a while
//! (its `new/` renamed away and back by a backup tool, a file system mounted late, a
//! permission changed) is said once and waited out, sorting again as soon as it is back, since
//! a daemon under systemd that exited would be restarted into the same condition (or not at
//! all) and sort nothing meanwhile either; only at start is a missing inbox refused, as the
//! likely slip of a wrong path. Per-message failures are logged (each once, see
//! `notices.rs`) and leave the message where it is.

mod deliver;
mod kept;
mod layout;
mod moves;
mod notices;
mod recover;
mod watch;
mod writers;

pub use deliver::{CRASH_POINT_VAR, CrashPoint, create_maildir};
pub use kept::{MAX_RECORD_BYTES, RECORD_NAME};
pub use layout::LayoutError;
pub use moves::Place;
pub use recover::{Recovery, recover};

use crate::corpus::MAX_MESSAGE_BYTES;
use crate::error::ErrorChain;
use crate::filter::Classification;
use crate::filter::shared::SharedFilter;
use crate::label::{Label, Verdict};
use deliver::{Move, Source, file_batch};
use kept::KeptRecord;
use layout::Layout;
use moves::MoveTracker;
use notices::{Notices, Shown, Topic};
use rayon::prelude::*;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use watch::Watches;

/// A message of the inbox's `new/` that could not be filed when last tried.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    /// When it first could not be.
    since: Instant,
    /// When to try it again, whatever wakes a pass before (the loop wakes then too).
    retry_at: Instant,
    /// How many times in a row it failed for another cause than its writer: each doubles the
    /// wait, from [`deliver::SETTLE`] up to the rescan interval.
    failures: u32,
}

/// How long a message may wait for its writer ([`deliver::is_not_yet`]) before that is said.
const WAITED_LONG: Duration = Duration::from_secs(300);

/// Messages classified and filed together: their directory fsyncs are shared.
const BATCH: usize = 256;
/// A batch holds at most this many bytes of messages (besides one message, whatever its
/// size, up to [`MAX_MESSAGE_BYTES`]): all are in memory at once while it is filed, and with
/// `--add-headers` their marked copies too, which count as much again (a copy is its message
/// and a few short fields). Each message is read no further than its length when the batch was
/// made ([`next_batch`], [`read_within`]), so files that grow meanwhile cannot make a batch
/// read more.
const BATCH_BYTES: u64 = 128 * 1024 * 1024;

/// Where the daemon reads and files mail, and how.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    /// The maildir whose `new/` is sorted; it must exist (it is never created).
    pub inbox: PathBuf,
    /// Where spam goes; never the inbox. Folders are compared by what they are, however
    /// spelled (see [`LayoutError`]).
    pub spam: PathBuf,
    /// Where ham goes. It may be the inbox (dovecot's INBOX): ham then stays in the inbox's
    /// `new/` untouched, even with `add_headers`, and is recorded in [`RECORD_NAME`] so it is
    /// never classified again.
    pub ham: PathBuf,
    /// Where unsure messages go (`None`: to ham, so nothing wanted is hidden); never the
    /// inbox.
    pub unsure: Option<PathBuf>,
    /// Add the X-Spam-* headers of `spamsort filter` to filed messages (written as copies;
    /// without it messages are moved untouched, by link).
    pub add_headers: bool,
    /// Learn from messages the user moves into or out of the spam folder (refused when the
    /// ham or unsure folder is the spam folder).
    pub learn_from_moves: bool,
    /// Rescan this often even without a change notice.
    pub rescan: Duration,
}

enum Event {
    Changed,
    Reload,
    Stop,
}

/// Control of a running daemon from another thread (a signal handler's, or a test's).
#[derive(Clone)]
pub struct DaemonHandle {
    tx: mpsc::Sender<Event>,
    stop: Arc<AtomicBool>,
}

impl DaemonHandle {
    /// Finishes the batch at hand, then [`Daemon::run`] returns.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Event::Stop);
    }

    /// Reloads the model file before the next message.
    pub fn reload(&self) {
        let _ = self.tx.send(Event::Reload);
    }
}

/// The daemon; [`Daemon::run`] serves until stopped.
pub struct Daemon {
    config: DaemonConfig,
    layout: Layout,
    /// The record of ham left in the inbox, when the inbox is the ham folder.
    kept: Option<KeptRecord>,
    crash: Option<CrashPoint>,
    filter: Arc<SharedFilter>,
    tracker: Option<MoveTracker>,
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
    stop: Arc<AtomicBool>,
    /// The inbox's lock (see [`Daemon::new`]), held until the daemon is dropped.
    _inbox_lock: std::fs::File,
    /// The last pass left work for a moment later: a message to copy once settled
    /// ([`deliver::SETTLE`]), corrections to learn once the model file's update lock is free,
    /// or watches of directories that kept changing. Look again after [`deliver::SETTLE`], not
    /// only at the next notice or rescan.
    again_soon: bool,
    /// Learning from moves waits for another writer of the model file (said once, when it
    /// began to).
    learning_deferred: bool,
    /// Messages the user moved could not be read for a cause that may pass (said once, when
    /// it began).
    reading_deferred: bool,
    /// Why learning from moves failed last (said once while it lasts); `None` once it learns.
    learning_failed: Option<String>,
    /// Inbox messages could not be read for a cause that may pass (said once, when it began).
    reading_inbox_deferred: bool,
    /// This pass's inbox messages that could not be read for a cause that may pass: how many,
    /// and the first cause.
    unread: Option<(usize, String)>,
    /// The messages of the inbox's `new/` that could not be filed the last time they were
    /// tried (see [`Waiting`]), by name.
    waiting: std::collections::HashMap<OsString, Waiting>,
    /// Inbox messages that were also in the spam folder at the last scan, by name, with when
    /// first seen so: each waits up to [`MOVE_SETTLES`] for the spam folder's copy to go (a
    /// move out of it) before it is sorted as mail delivered again (see
    /// [`Daemon::taken_out_of_spam`]).
    in_spam_too: std::collections::HashMap<OsString, Instant>,
    /// Inbox messages found to be moved out of the spam folder by the user and not learned as
    /// ham yet (the model file's update lock was held), by name: left in place, not sorted,
    /// until they are (see [`Daemon::learn_taken_back`]).
    out_of_spam: HashSet<OsString>,
    /// What was said about the files left in the inbox's `new/`.
    notices: Notices,
    /// Why the inbox's `new/` could not be read at the last pass, as said (once).
    inbox_trouble: Option<String>,
}

/// One inbox message, read and judged.
struct Planned {
    name: OsString,
    source: PathBuf,
    bytes: Option<Vec<u8>>,
    /// The source as `bytes` were read from it.
    read: Option<Source>,
    verdict: Result<Classification, String>,
    millis: f64,
    /// Its fingerprint ([`MoveTracker::fingerprint`]) with `--learn-from-moves`, read whole.
    fingerprint: Option<u64>,
}

impl Daemon {
    /// Checks the folders (refusing an unsafe layout, see [`LayoutError`], before anything is
    /// touched), takes the inbox (refusing one another daemon sorts: two would file most
    /// messages twice), creates missing target maildirs (mode 0700) and the inbox's missing
    /// `cur/` and `tmp/`, then finishes or rolls back any move a crash interrupted.
    pub fn new(config: DaemonConfig, filter: Arc<SharedFilter>) -> crate::Result<Daemon> {
        let layout = Layout::check(&config)?;
        let crash = CrashPoint::from_env()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| crate::Error::Io { path, source }
        };
        // A lock on the inbox directory itself (flock), held while the daemon lives: no file
        // is made in the user's maildir, and a killed daemon's lock goes with its process.
        let inbox_lock = std::fs::File::open(&layout.inbox).map_err(io(&layout.inbox))?;
        match inbox_lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(crate::Error::Config(format!(
                    "{}: another spamsort daemon sorts this inbox",
                    layout.inbox.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&layout.inbox)(e)),
        }
        for dir in std::iter::once(&layout.inbox).chain(&layout.targets) {
            create_maildir(dir).map_err(io(dir))?;
        }
        let style = &filter.policy().headers;
        let recovered =
            recover(&layout.inbox, &layout.targets, style).map_err(io(&config.inbox))?;
        if recovered != Recovery::default() {
            tracing::info!(
                "recovered from an interruption: {} moves finished, {} rolled back",
                recovered.finished,
                recovered.rolled_back
            );
        }
        let kept = layout
            .ham_is_inbox
            .then(|| KeptRecord::load(&layout.inbox))
            .transpose()
            .map_err(io(&layout.inbox.join(kept::RECORD_NAME)))?;
        let tracker = config.learn_from_moves.then(|| {
            let record = layout.inbox.join(moves::PLACES_NAME);
            MoveTracker::new(&layout.tracked, style.clone(), Some(record))
        });
        let (tx, rx) = mpsc::channel();
        Ok(Daemon {
            config,
            layout,
            kept,
            crash,
            filter,
            tracker,
            tx,
            rx,
            stop: Arc::new(AtomicBool::new(false)),
            _inbox_lock: inbox_lock,
            again_soon: false,
            learning_deferred: false,
            reading_deferred: false,
            reading_inbox_deferred: false,
            learning_failed: None,
            unread: None,
            waiting: std::collections::HashMap::new(),
            in_spam_too: std::collections::HashMap::new(),
            out_of_spam: HashSet::new(),
            notices: Notices::default(),
            inbox_trouble: None,
        })
    }

    /// A handle to stop the daemon or reload its model from another thread.
    pub fn handle(&self) -> DaemonHandle {
        DaemonHandle {
            tx: self.tx.clone(),
            stop: self.stop.clone(),
        }
    }

    /// Sorts what is in the inbox, then every change as it comes, until stopped. Fails only if
    /// no change notices can be had at all; an inbox that cannot be read for a while is waited
    /// out (see the module docs).
    pub fn run(mut self) -> crate::Result<()> {
        let tx = self.tx.clone();
        let mut dirs = vec![self.config.inbox.join("new")];
        dirs.extend(
            self.tracker
                .iter()
                .flat_map(|t| t.watched().map(Path::to_path_buf)),
        );
        let mut watches = Watches::new(dirs, move || {
            let _ = tx.send(Event::Changed);
        })?;
        tracing::info!("sorting {}", self.config.inbox.display());
        loop {
            let settled = watches.refresh();
            self.sort_inbox();
            self.learn_from_moves();
            self.again_soon |= !settled;
            let wait = if self.again_soon {
                self.config.rescan.min(deliver::SETTLE)
            } else {
                self.config.rescan
            };
            // Awake when a message that could not be filed is due again.
            let now = Instant::now();
            let due = self
                .waiting
                .values()
                .map(|w| w.retry_at.saturating_duration_since(now));
            let wait = due.fold(wait, Duration::min);
            let event = match self.rx.recv_timeout(wait) {
                Ok(e) => e,
                Err(mpsc::RecvTimeoutError::Timeout) => Event::Changed,
                Err(mpsc::RecvTimeoutError::Disconnected) => Event::Stop,
            };
            // Coalesce a burst of notices into one pass.
            let mut reload = false;
            for e in std::iter::once(event).chain(self.rx.try_iter()) {
                match e {
                    Event::Stop => self.stop.store(true, Ordering::SeqCst),
                    Event::Reload => reload = true,
                    Event::Changed => {}
                }
            }
            if self.stop.load(Ordering::SeqCst) {
                if let Some(tracker) = &mut self.tracker {
                    tracker.save(true);
                }
                tracing::info!("stopped");
                return Ok(());
            }
            if reload {
                match self.filter.reload() {
                    Ok(()) => tracing::info!("model reloaded"),
                    Err(e) => tracing::error!(
                        "reload failed, keeping the model in use: {}",
                        ErrorChain(&e)
                    ),
                }
            }
        }
    }

    /// [`Daemon::sort_pending`], saying once when the inbox's `new/` cannot be read, and when
    /// it can again, instead of stopping.
    fn sort_inbox(&mut self) {
        match self.sort_pending() {
            Ok(_) => {
                if self.inbox_trouble.take().is_some() {
                    tracing::info!("the inbox can be read again: sorting");
                }
            }
            Err(e) => {
                // Nothing is tried while the inbox cannot be read: nothing is due either.
                self.waiting.clear();
                let why = ErrorChain(&e).to_string();
                if self.inbox_trouble.as_ref() != Some(&why) {
                    tracing::error!(
                        "the inbox cannot be read ({why}): sorting waits until it can, looking \
                         again on any change and every {} s",
                        self.config.rescan.as_secs()
                    );
                    self.inbox_trouble = Some(why);
                }
            }
        }
    }

    /// Files every message now in the inbox's `new/` (except ham already kept there), in
    /// batches, stopping between batches if asked to. Returns how many were filed or kept.
    /// A message is a regular file whose name does not start with a dot, whatever the bytes
    /// of its name; anything else there (a symbolic link, which was not delivered as a message
    /// and is not followed, a FIFO, a directory) is left in place and reported once.
    pub fn sort_pending(&mut self) -> crate::Result<usize> {
        let inbox_new = self.config.inbox.join("new");
        let entries = std::fs::read_dir(&inbox_new).map_err(|source| crate::Error::Io {
            path: inbox_new.clone(),
            source,
        })?;
        let mut names: Vec<OsString> = Vec::new();
        let mut others: Vec<(OsString, std::fs::FileType)> = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            match entry.file_type() {
                _ if name.as_bytes().starts_with(b".") => {}
                Ok(t) if t.is_file() => names.push(name),
                Ok(t) => others.push((name, t)),
                // Gone meanwhile.
                Err(_) => {}
            }
        }
        let present: HashSet<&OsStr> = (names.iter().map(OsString::as_os_str))
            .chain(others.iter().map(|(n, _)| n.as_os_str()))
            .collect();
        self.notices.retain_present(&present);
        for (name, kind) in &others {
            let what = if kind.is_symlink() {
                "a symbolic link, not a delivered message"
            } else {
                "not a regular file"
            };
            if self.notices.is_news(name, Topic::Entry, what) {
                tracing::warn!(
                    "{} in {}: {what}: left in place",
                    Shown(name),
                    inbox_new.display()
                );
            }
        }
        if let Some(kept) = &mut self.kept {
            kept.retain_present(&names.iter().map(OsString::as_os_str).collect());
            names.retain(|n| !kept.contains(n));
        }
        // Only the messages a pass tries keep a wait: one for anything else (a name that became
        // a link, ham kept in the inbox) would be due forever.
        let tried: HashSet<&OsStr> = names.iter().map(OsString::as_os_str).collect();
        self.waiting
            .retain(|name, _| tried.contains(name.as_os_str()));
        self.in_spam_too
            .retain(|name, _| tried.contains(name.as_os_str()));
        self.out_of_spam
            .retain(|name| tried.contains(name.as_os_str()));
        drop(tried);
        // A message whose filing failed waits its turn (see `Waiting`) before it is tried again,
        // whatever woke this pass (putting it back into new/ wakes the next one).
        let now = Instant::now();
        names.retain(|n| self.waiting.get(n).is_none_or(|w| now >= w.retry_at));
        names.sort();
        self.again_soon = false;
        self.unread = None;
        let mut filed = 0;
        let mut rest = &names[..];
        while !rest.is_empty() {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            let bounds = next_batch(rest, &inbox_new, self.config.add_headers);
            let (chunk, after) = rest.split_at(bounds.len());
            filed += self.sort_batch(chunk, &bounds, &inbox_new);
            rest = after;
        }
        // Said once while it lasts, not for every message of every pass.
        match &self.unread {
            Some((n, why)) if !self.reading_inbox_deferred => {
                tracing::warn!(
                    "{n} message(s) cannot be read now ({why}): left in the inbox, tried again \
                     every second"
                );
                self.reading_inbox_deferred = true;
            }
            Some(_) => {}
            None => self.reading_inbox_deferred = false,
        }
        Ok(filed)
    }

    /// Files the messages `names` (in `inbox_new`), each read no further than its bound in
    /// `bounds` (see [`next_batch`]). Returns how many were filed or kept.
    fn sort_batch(&mut self, names: &[OsString], bounds: &[u64], inbox_new: &Path) -> usize {
        // Their waits come out: only a message that fails again gets one back (so one gone
        // meanwhile leaves none due), with its count of failures and since when.
        let mut waited: std::collections::HashMap<OsString, Waiting> = names
            .iter()
            .filter_map(|n| self.waiting.remove_entry(n))
            .collect();
        let filter = self.filter.current();
        let planning: Vec<Planning> = names
            .par_iter()
            .zip(bounds)
            .map(|(name, &bound)| plan(name, inbox_new, &filter, bound))
            .collect();
        let mut planned = Vec::with_capacity(planning.len());
        for p in planning {
            match p {
                Planning::Ready(mut p) => {
                    // Once a message: both whether it was taken out of spam and where it is filed
                    // need it.
                    p.fingerprint = (self.tracker.as_ref())
                        .zip(p.bytes.as_deref())
                        .map(|(t, bytes)| t.fingerprint(bytes));
                    planned.push(p)
                }
                Planning::Gone => {}
                Planning::Later(name, why) => {
                    // Tried again a second from now (`again_soon`), its wait kept. One still
                    // being written starts one if it had none, so that a writer that never lets
                    // go of it is said once it waited long, as for a copy (see `sort_batch`'s
                    // filing).
                    let now = Instant::now();
                    let not_yet = deliver::is_not_yet(&why);
                    let fresh = || Waiting {
                        since: now,
                        retry_at: now,
                        failures: 0,
                    };
                    if let Some(mut w) = waited.remove(&name).or_else(|| not_yet.then(fresh)) {
                        w.retry_at = now + deliver::SETTLE;
                        let long = not_yet && w.since.elapsed() >= WAITED_LONG;
                        if long && self.notices.is_news(&name, Topic::Filing, &why.to_string()) {
                            let secs = WAITED_LONG.as_secs();
                            tracing::warn!("{} not filed for {secs} s: {why}", Shown(&name));
                        }
                        self.waiting.insert(name.clone(), w);
                    }
                    self.again_soon = true;
                    tracing::debug!("{} {why}", Shown(&name));
                    // Not yet settled is routine; a cause that may pass is counted, to be said.
                    if !deliver::is_not_yet(&why) {
                        let unread = self.unread.get_or_insert((0, why.to_string()));
                        unread.0 += 1;
                    }
                }
            }
        }
        let thresholds = filter.thresholds();
        // Each message's place and folder; ham stays where it is when the inbox is the ham
        // folder (no headers added: it is not rewritten).
        let mut sorted = Vec::with_capacity(planned.len());
        let mut moves = Vec::with_capacity(planned.len());
        let mut judged: Vec<OutOfSpam> =
            planned.iter().map(|p| self.taken_out_of_spam(p)).collect();
        self.learn_taken_back(&planned, &mut judged);
        for (p, out_of_spam) in planned.iter().zip(judged) {
            let taken_back = matches!(out_of_spam, OutOfSpam::Yes);
            let (place, target) = match (out_of_spam, &p.verdict) {
                (OutOfSpam::NotYet, _) => {
                    self.again_soon = true;
                    continue;
                }
                (OutOfSpam::Yes, _) | (OutOfSpam::No, Err(_)) => (Place::Ham, &self.config.ham),
                (OutOfSpam::No, Ok(c)) => match c.verdict {
                    Verdict::Spam => (Place::Spam, &self.config.spam),
                    Verdict::Ham => (Place::Ham, &self.config.ham),
                    Verdict::Unsure => match &self.config.unsure {
                        Some(u) => (Place::Unsure, u),
                        None => (Place::Ham, &self.config.ham),
                    },
                },
            };
            if place == Place::Ham && self.layout.ham_is_inbox {
                sorted.push((p, place, None, taken_back));
                continue;
            }
            let content = match (&p.verdict, &p.bytes) {
                // One the user took back is filed as it is: its verdict was overruled.
                (Ok(c), Some(b)) if self.config.add_headers && !taken_back => {
                    match self.filter.policy().headers.mark(b, c, thresholds) {
                        Ok(marked) => Some(marked),
                        Err(why) => {
                            // Said once: a message that cannot be filed is marked every pass.
                            if self
                                .notices
                                .is_news(&p.name, Topic::Marking, &why.to_string())
                            {
                                let name = Shown(&p.name);
                                tracing::warn!("{name} filed without X-Spam-* fields: {why}");
                            }
                            None
                        }
                    }
                }
                _ => None,
            };
            sorted.push((p, place, Some(moves.len()), taken_back));
            moves.push(Move {
                source: p.source.clone(),
                name: p.name.clone(),
                target: target.clone(),
                content,
                read: p.read,
            });
        }
        let mut results: Vec<Option<std::io::Result<PathBuf>>> =
            file_batch(&moves, inbox_new, self.crash.as_ref())
                .into_iter()
                .map(Some)
                .collect();
        // Kept ham goes on record before it is reported, so a restart never sorts it again.
        let kept: Vec<&OsStr> = sorted
            .iter()
            .filter(|s| s.2.is_none())
            .map(|s| s.0.name.as_os_str())
            .collect();
        if let Some(record) = &mut self.kept
            && !kept.is_empty()
            && let Err(e) = record.keep(kept)
        {
            tracing::error!(
                "ham kept in the inbox, but it may be sorted again after a restart: {}",
                ErrorChain(&e)
            );
        }
        let mut count = 0;
        for (p, place, index, taken_back) in sorted {
            let (result, folder) = match index {
                Some(i) => (
                    results[i].take().expect("one result per move"),
                    moves[i].target.display(),
                ),
                None => (Ok(p.source.clone()), self.config.inbox.display()),
            };
            let how = if index.is_some() { "->" } else { "kept in" };
            let name = Shown(&p.name);
            if let (Some(t), Some(fp), Ok(dest)) = (&mut self.tracker, p.fingerprint, &result) {
                t.filed(dest.clone(), fp, place);
            }
            match &result {
                Ok(_) => self.notices.forget(&p.name),
                Err(e) if deliver::is_taken_by_reader(e) => {}
                // Putting the message back into new/ wakes the next pass at once: it waits its
                // turn instead (a second for its writer, or twice as long as the last time).
                Err(e) => {
                    let now = Instant::now();
                    let w = self.waiting.entry(p.name.clone()).or_insert(
                        waited.remove(&p.name).unwrap_or(Waiting {
                            since: now,
                            retry_at: now,
                            failures: 0,
                        }),
                    );
                    let after = if deliver::is_not_yet(e) {
                        w.failures = 0;
                        deliver::SETTLE
                    } else {
                        w.failures = w.failures.saturating_add(1);
                        let doublings = (w.failures - 1).min(16);
                        let doubled = deliver::SETTLE.saturating_mul(1 << doublings);
                        doubled.min(self.config.rescan)
                    };
                    w.retry_at = now + after;
                }
            }
            match (&p.verdict, result) {
                (_, Ok(_)) if taken_back => {
                    count += 1;
                    tracing::info!("ham (moved out of the spam folder) {name} {how} {folder}");
                }
                (Ok(c), Ok(_)) => {
                    count += 1;
                    tracing::info!(
                        "{} P(spam) {:.4} {:.1} ms {name} {how} {folder}",
                        c.verdict,
                        c.score.p_spam(),
                        p.millis,
                    );
                }
                (Err(why), Ok(_)) => {
                    count += 1;
                    tracing::warn!("unclassified ({why}) {name} {how} {folder}");
                }
                (_, Err(e)) if deliver::is_not_yet(&e) => {
                    self.again_soon = true;
                    // Said once if it waits long: a writer that never lets go of it.
                    let long = self
                        .waiting
                        .get(&p.name)
                        .is_some_and(|w| w.since.elapsed() >= WAITED_LONG);
                    if long && self.notices.is_news(&p.name, Topic::Filing, &e.to_string()) {
                        tracing::warn!("{name} not filed for {} s: {e}", WAITED_LONG.as_secs());
                    } else {
                        tracing::debug!("{name} {e}");
                    }
                }
                // Gone from new/: said once.
                (_, Err(e)) if deliver::is_taken_by_reader(&e) => tracing::info!("{name} {e}"),
                // Said once, and again when the error changes or after it was filed: a message
                // that cannot be filed (its target not writable) is tried again after a second,
                // then after twice as long each time, up to the rescan interval.
                (_, Err(e)) if self.notices.is_news(&p.name, Topic::Filing, &e.to_string()) => {
                    let left = if deliver::is_held(&e) {
                        "not filed"
                    } else {
                        "left in the inbox"
                    };
                    // The folder too: its name says which folder went missing or is not
                    // writable (a Junk folder deleted over IMAP).
                    tracing::error!("{name} {left} (for {folder}): {e}");
                }
                (_, Err(e)) => tracing::debug!("{name} not filed: {e}"),
            }
        }
        count
    }

    /// Whether the inbox message `p` is one the user moved out of the spam folder (with
    /// `--learn-from-moves` only): Dovecot puts an unread message moved back to INBOX in its
    /// `new/`, where the daemon sorts new mail. It is when a tracker scan found the same
    /// message gone from the spam folder ([`MoveTracker::left_spam`]) and the file was in
    /// `new/`, under its name, right after that scan: mail delivered after the scan (the same
    /// spam, deleted from the spam folder, fetched again) is new mail. Such a message is to be learned
    /// as ham and filed as ham (kept, where the inbox is the ham folder), not sorted back into
    /// the spam folder (see [`Daemon::learn_taken_back`]). One whose copy is still in the spam
    /// folder waits up to [`MOVE_SETTLES`] for it to go (a move may copy before it deletes);
    /// after that it is the same message delivered twice, sorted as new mail and never learned.
    fn taken_out_of_spam(&mut self, p: &Planned) -> OutOfSpam {
        let (Some(tracker), Some(fp)) = (&self.tracker, p.fingerprint) else {
            return OutOfSpam::No;
        };
        if self.out_of_spam.contains(&p.name) {
            return OutOfSpam::Yes;
        }
        // Every copy: the same message moved back twice is learned once.
        if tracker
            .left_spam(fp)
            .is_some_and(|names| names.contains(&p.name))
        {
            self.in_spam_too.remove(&p.name);
            self.out_of_spam.insert(p.name.clone());
            return OutOfSpam::Yes;
        }
        if tracker.in_spam(fp) {
            let since = *self
                .in_spam_too
                .entry(p.name.clone())
                .or_insert_with(Instant::now);
            if since.elapsed() < MOVE_SETTLES {
                return OutOfSpam::NotYet;
            }
        }
        self.in_spam_too.remove(&p.name);
        OutOfSpam::No
    }

    /// Learns as ham, in one update of the model file, the messages of `planned` that `judged`
    /// (one per message) finds moved out of the spam folder ([`OutOfSpam::Yes`]). While another
    /// writer holds the model file they turn [`OutOfSpam::NotYet`]: left in `new/`, learned at
    /// a later pass (each stays taken back by name meanwhile). A failure to learn is said, and
    /// they are filed as ham all the same (the user's move said so).
    fn learn_taken_back(&mut self, planned: &[Planned], judged: &mut [OutOfSpam]) {
        let taken: Vec<&Planned> = (planned.iter().zip(judged.iter()))
            .filter(|(_, j)| matches!(j, OutOfSpam::Yes))
            .map(|(p, _)| p)
            .collect();
        if taken.is_empty() {
            return;
        }
        let messages: Vec<&[u8]> = taken.iter().filter_map(|p| p.bytes.as_deref()).collect();
        match self.filter.try_learn_all(&messages, Label::Ham) {
            Ok(None) => {
                tracing::debug!(
                    "{} message(s) moved out of the spam folder wait for the model file",
                    taken.len()
                );
                self.again_soon = true;
                for j in judged.iter_mut().filter(|j| matches!(j, OutOfSpam::Yes)) {
                    *j = OutOfSpam::NotYet;
                }
                return;
            }
            Ok(Some(_)) => {
                for p in &taken {
                    let name = Shown(&p.name);
                    tracing::info!(
                        "learned {name} as ham (moved out of the spam folder by the user)"
                    );
                }
            }
            Err(e) => tracing::error!(
                "{} message(s) moved out of the spam folder by the user, but learning them as ham \
                 failed: {}",
                taken.len(),
                ErrorChain(&e)
            ),
        }
        for p in &taken {
            self.out_of_spam.remove(&p.name);
        }
    }

    /// Learns from messages the user moved into or out of the spam folder, until stopped.
    /// Never waits for the model file's update lock: while another writer holds it (a long
    /// `spamsort learn`), the corrections stay queued and are tried again a moment later, and
    /// new mail goes on being sorted meanwhile.
    fn learn_from_moves(&mut self) {
        let Some(tracker) = &mut self.tracker else {
            return;
        };
        let scanned = tracker.scan();
        tracker.save(false);
        match scanned {
            // A message still being written: read at the next pass, soon.
            Some(e) if deliver::is_not_yet(&e) => self.again_soon = true,
            Some(e) => {
                self.again_soon = true;
                if !self.reading_deferred {
                    tracing::warn!(
                        "messages moved by the user cannot be read now ({e}): trying again \
                         every second"
                    );
                    self.reading_deferred = true;
                }
            }
            None => self.reading_deferred = false,
        }
        while let Some(c) = tracker.next_correction() {
            if self.stop.load(Ordering::SeqCst) {
                return;
            }
            // Only what the tokenizer reads, as `spamsort learn` reads it: a message of any
            // size (one over MAX_MESSAGE_BYTES was filed unclassified) is learned as it would
            // be classified.
            let head = self.filter.current().tokenizer_config().head_bytes();
            let bytes = match crate::corpus::read_regular_head(&c.path, head) {
                Ok(bytes) => bytes,
                // Renamed since the scan: the next one finds it again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.again_soon = true;
                    return;
                }
                Err(e) if may_pass(&e) => {
                    tracing::debug!("{}: not read now, tried again soon: {e}", c.path.display());
                    self.again_soon = true;
                    return;
                }
                Err(e) => {
                    tracing::warn!("{}: moved but unreadable: {e}", c.path.display());
                    tracker.done();
                    continue;
                }
            };
            let (path, label) = (c.path.display(), c.label);
            match self.filter.try_learn(&bytes, label) {
                Ok(None) => {
                    if !self.learning_deferred {
                        tracing::warn!(
                            "learning from moves deferred: another writer holds the update lock \
                             of {}; trying again every second",
                            self.filter.path().display()
                        );
                        self.learning_deferred = true;
                    }
                    tracing::debug!("{path}: not learned yet, the model file is still locked");
                    self.again_soon = true;
                    return;
                }
                Ok(Some(outcome)) => {
                    if self.learning_deferred {
                        tracing::info!("learning from moves resumed");
                        self.learning_deferred = false;
                    }
                    match outcome {
                        crate::LearnOutcome::AlreadyLearned => {
                            tracing::info!("{path} moved by the user was learned as {label} before")
                        }
                        _ => tracing::info!("learned {path} as {label} (moved by the user)"),
                    }
                }
                // The model file could not be written (damaged, its file system full, no
                // descriptor left): the correction stays queued, tried again at the next pass,
                // and that is said once while it lasts.
                Err(e) => {
                    let why = ErrorChain(&e).to_string();
                    if self.learning_failed.as_ref() != Some(&why) {
                        tracing::error!(
                            "learning {path} as {label} failed: {why}; the corrections wait, \
                             tried again at each pass"
                        );
                        self.learning_failed = Some(why);
                    }
                    return;
                }
            }
            self.learning_failed = None;
            tracker.done();
        }
        // Nothing waits any more (the messages left the folders): a lock met later is news.
        self.learning_deferred = false;
    }
}

/// The next batch of the messages `names` (in `inbox_new`): for each message it takes, the
/// most bytes reading it may find ([`read_within`]): its length now, at most
/// [`MAX_MESSAGE_BYTES`]. It takes at most [`BATCH`] messages, and at most [`BATCH_BYTES`] of
/// what reading them can hold (each bound and the one byte more that tells a longer file;
/// twice that with `marked_copies`, for the copy each message is filed as), but always one.
fn next_batch(names: &[OsString], inbox_new: &Path, marked_copies: bool) -> Vec<u64> {
    let held_per_byte = if marked_copies { 2 } else { 1 };
    let mut bounds = Vec::new();
    let mut bytes = 0u64;
    for name in names.iter().take(BATCH) {
        // A file that is gone or unreadable holds nothing.
        let len = std::fs::metadata(inbox_new.join(name)).map_or(0, |m| m.len());
        let bound = len.min(MAX_MESSAGE_BYTES);
        bytes = bytes.saturating_add((bound + 1) * held_per_byte);
        if bytes > BATCH_BYTES && !bounds.is_empty() {
            break;
        }
        bounds.push(bound);
    }
    bounds
}

/// How long an inbox message whose copy is in the spam folder waits for that copy to go, as
/// a move out of the spam folder that copies before it deletes leaves it for a moment (see
/// [`Daemon::taken_out_of_spam`]).
const MOVE_SETTLES: Duration = Duration::from_secs(2);

/// Whether an inbox message is one the user moved out of the spam folder.
#[derive(Debug, Clone, Copy)]
enum OutOfSpam {
    /// It is: learned as ham (or learning it failed and was said), filed as ham.
    Yes,
    /// It is not: sorted as new mail.
    No,
    /// Not known yet (its copy in the spam folder may still go), or its learning waits for the
    /// model file: left in place for the next pass.
    NotYet,
}

/// An inbox message, read and judged, or why not this pass.
enum Planning {
    Ready(Planned),
    /// It vanished meanwhile (a mail reader took it).
    Gone,
    /// It changed since its batch was made (its name, and why): left for the next pass.
    Later(OsString, std::io::Error),
}

/// Reads an inbox message for a batch that bounded it at `bound` bytes ([`next_batch`]),
/// reading no more than `bound + 1` bytes of it, with how the source was when read. A message
/// over [`MAX_MESSAGE_BYTES`] is a [`std::io::ErrorKind::FileTooLarge`] error, as the other
/// mailbox readers give (it is then filed unclassified); one that grew past `bound` since the
/// batch was made (still being written) is an error [`deliver::is_not_yet`] tells, left for a
/// later pass, which bounds it anew.
fn read_within(source: &Path, bound: u64) -> std::io::Result<(Source, Vec<u8>)> {
    // A FIFO or device dropped into new/ is refused at once instead of blocking the loop.
    let before = std::fs::metadata(source)?;
    match crate::corpus::read_regular(source, bound) {
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge && bound < MAX_MESSAGE_BYTES => {
            Err(std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                format!(
                    "grew past the {bound} bytes it had when its batch was made (still being \
                     written?): left for the next pass"
                ),
            ))
        }
        read => {
            let bytes = read?;
            Ok((Source::of(&before, bytes.len() as u64)?, bytes))
        }
    }
}

/// True for an error reading a message that says nothing of the message and may pass: too
/// many open files (in the process or the system), memory or buffers short, an interrupted
/// call. Such a message is looked at again later, never filed unclassified for it (nor taken
/// for one that is no message to learn from).
fn may_pass(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM | libc::ENOBUFS | libc::EINTR)
    )
}

/// Reads (see [`read_within`]) and classifies one inbox message; one still being written
/// ([`Source::read_half_written`]) is left for a later pass, never judged by its first part.
fn plan(name: &OsStr, inbox_new: &Path, filter: &crate::SpamFilter, bound: u64) -> Planning {
    let source = inbox_new.join(name);
    let start = Instant::now();
    let (read, bytes, verdict) = match read_within(&source, bound) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Planning::Gone,
        Err(e) if deliver::is_not_yet(&e) || may_pass(&e) => {
            return Planning::Later(name.to_os_string(), e);
        }
        Err(e) => (None, None, Err(format!("unreadable: {e}"))),
        // Still being written (straight into new/, not through tmp/): its verdict would be of
        // the part written so far. Read again at a later pass.
        Ok((read, _)) if read.read_half_written(&source) => {
            return Planning::Later(name.to_os_string(), deliver::not_yet());
        }
        Ok((read, bytes)) => {
            let verdict = std::panic::catch_unwind(|| filter.classify(&bytes))
                .map_err(|_| "internal error while classifying (please report it)".to_string());
            (Some(read), Some(bytes), verdict)
        }
    };
    Planning::Ready(Planned {
        name: name.to_os_string(),
        source,
        bytes,
        read,
        verdict,
        millis: start.elapsed().as_secs_f64() * 1000.0,
        fingerprint: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_at_most_its_bytes_and_always_one_message() {
        let dir = tempfile::tempdir().unwrap();
        let sized = |name: &str, len: u64| {
            let f = std::fs::File::create(dir.path().join(name)).unwrap();
            f.set_len(len).unwrap();
            OsString::from(name)
        };
        let mib = 1024 * 1024;
        // Sparse files: their length is what counts.
        let names = [
            sized("1", 60 * mib),
            sized("2", 60 * mib),
            sized("3", 60 * mib),
            sized("4", 1024),
        ];
        assert_eq!(next_batch(&names, dir.path(), false), [60 * mib, 60 * mib]);
        assert_eq!(next_batch(&names[2..], dir.path(), false), [60 * mib, 1024]);
        // A file over the readers' bound is read only that far.
        let huge = [sized("5", 200 * mib), sized("6", 200 * mib), sized("7", 10)];
        assert_eq!(next_batch(&huge, dir.path(), false), [MAX_MESSAGE_BYTES]);
        assert_eq!(
            next_batch(&huge[1..], dir.path(), false),
            [MAX_MESSAGE_BYTES, 10]
        );
        let small: Vec<OsString> = (0..300).map(|i| sized(&format!("s{i}"), 100)).collect();
        assert_eq!(next_batch(&small, dir.path(), false).len(), BATCH);
        // Regression: with `--add-headers` a batch also holds each message's marked copy, and
        // held twice the bytes its bound allowed. The copies now count: half the messages.
        let names = [
            sized("c1", 40 * mib),
            sized("c2", 40 * mib),
            sized("c3", 1024),
        ];
        assert_eq!(
            next_batch(&names, dir.path(), false),
            [40 * mib, 40 * mib, 1024]
        );
        assert_eq!(next_batch(&names, dir.path(), true), [40 * mib]);
        assert_eq!(next_batch(&names[1..], dir.path(), true), [40 * mib, 1024]);
    }

    #[test]
    fn a_message_that_grew_after_its_batch_was_made_is_read_no_further_than_its_bound() {
        // Regression: a message was read up to MAX_MESSAGE_BYTES whatever its batch had counted
        // for it at its stat, so a batch of files that grew meanwhile could read 256 times that.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.grows");
        std::fs::write(&path, vec![b'a'; 100]).unwrap();
        let names = [OsString::from("1.grows")];
        let bounds = next_batch(&names, dir.path(), false);
        assert_eq!(bounds, [100]);
        let grown = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        grown.set_len(10 * 1024 * 1024).unwrap();
        let read = read_within(&path, bounds[0]);
        assert!(
            read.as_ref().is_err_and(deliver::is_not_yet),
            "{:?}",
            read.map(|r| r.1.len())
        );
        // The next pass bounds it anew and reads it whole.
        let bounds = next_batch(&names, dir.path(), false);
        assert_eq!(
            read_within(&path, bounds[0]).unwrap().1.len(),
            10 * 1024 * 1024
        );
        // Grown past the per-message limit, it is the case of a file that was over it: too
        // large (filed unclassified), however far it grew.
        grown.set_len(MAX_MESSAGE_BYTES + 1).unwrap();
        let bounds = next_batch(&names, dir.path(), false);
        assert_eq!(bounds, [MAX_MESSAGE_BYTES]);
        grown.set_len(MAX_MESSAGE_BYTES * 4).unwrap();
        let err = read_within(&path, bounds[0]).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
    }
}
