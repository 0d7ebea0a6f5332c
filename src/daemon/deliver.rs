//! Filing messages from the inbox into target maildirs so that each ends up in exactly one
//! place and none is ever lost.
//!
//! A move first *takes* the message from the inbox's `new/`: one rename into the daemon's own
//! directory [`TAKEN_DIR`] under the inbox's `tmp/` (same file system, never read by mail
//! readers, never cleaned by them: Dovecot skips directories there). That rename is the one
//! moment that decides who has the message. A mail reader that renamed it first (marked it
//! seen into `cur/`, moved it to another folder, deleted it) keeps it as it left it and nothing
//! is filed ([`is_taken_by_reader`]); a reader that comes after finds it gone, as after any
//! move. Only then is the message made complete in its target's `new/` (a hard link, or a copy
//! written to `tmp/`, fsynced and linked into place), the target directories are fsynced, and
//! the taken names are removed. Whatever fails after the take (the copy, the fsync, a message
//! that changed while it was copied) takes the copy back out of the target and puts the
//! message back into `new/`, so a message is filed or left in the inbox, never both: a message
//! that cannot be taken from `new/` (a directory the daemon may not change) is never filed.
//! A crash in between leaves a message taken, and maybe complete in its target too:
//! `recover.rs` puts it back into `new/` or finishes the move at the next start.
//!
//! Hard links instead of `rename` into the targets because a link never replaces an existing
//! file: a name already taken in the target (maildir names are unique, so this is a repeat of
//! an interrupted move or a real clash) is detected instead of silently overwriting a message.
//! Where the kernel refuses the link (a message owned by another user under
//! `fs.protected_hardlinks`, or a file system without hard links), the message is filed as a
//! copy, and put back into `new/` by a rename that refuses to replace a file.

use crate::corpus::file_id;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Prefix of the temporary files spamsort writes into a target's `tmp/`; `recover.rs` removes
/// leftovers, and no other program's files are touched.
pub const TMP_PREFIX: &str = "spamsort.";
/// Marker of a name changed to avoid a clash: `UNIQUE.dupN[:2,FLAGS]`.
pub const CLASH_MARK: &str = ".dup";

/// The environment variable naming a test-only crash point (see [`CrashPoint`]).
pub const CRASH_POINT_VAR: &str = "SPAMSORT_TEST_CRASH";

/// A test-only crash point: the process aborts in the middle of filing one chosen message, so
/// a test can make the next start recover it without depending on a kill's timing. Read once
/// at start from [`CRASH_POINT_VAR`] as `STAGE:NAME`, NAME the message's file name in the
/// inbox's `new/`; never set outside tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashPoint {
    stage: CrashStage,
    name: String,
}

/// Where in a move a [`CrashPoint`] aborts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CrashStage {
    /// `written`: the message is taken from the inbox and its copy complete in the target's
    /// `tmp/`, not yet linked into `new/` (only moves with added headers write copies). The
    /// restart rolls it back: the message goes back into the inbox's `new/`.
    Written,
    /// `placed`: the batch holding the message is durable in its targets, the messages taken
    /// from the inbox not yet removed from [`TAKEN_DIR`]. The restart finishes the moves.
    Placed,
}

impl CrashPoint {
    /// The crash point the environment asks for: `None` if unset, an error if malformed.
    pub fn from_env() -> crate::Result<Option<CrashPoint>> {
        Self::parse(std::env::var_os(CRASH_POINT_VAR))
    }

    fn parse(value: Option<std::ffi::OsString>) -> crate::Result<Option<CrashPoint>> {
        let Some(value) = value else {
            return Ok(None);
        };
        let bad = || {
            crate::Error::Config(format!(
                "{CRASH_POINT_VAR} must be written:NAME or placed:NAME (a test-only crash point)"
            ))
        };
        let value = value.into_string().map_err(|_| bad())?;
        let (stage, name) = value.split_once(':').ok_or_else(bad)?;
        let stage = match stage {
            "written" => CrashStage::Written,
            "placed" => CrashStage::Placed,
            _ => return Err(bad()),
        };
        Ok(Some(CrashPoint {
            stage,
            name: name.to_string(),
        }))
    }

    /// Aborts the process if this is the crash point's stage and message.
    fn reached(crash: Option<&CrashPoint>, stage: CrashStage, name: &OsStr) {
        if let Some(c) = crash.filter(|c| c.stage == stage && name == c.name.as_str()) {
            eprintln!("{CRASH_POINT_VAR}: aborting at {}, as asked", c.name);
            std::process::abort();
        }
    }
}

/// Creates a maildir (and its parents) with mode 0700 where missing.
pub fn create_maildir(root: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    for sub in ["cur", "new", "tmp"] {
        builder.create(root.join(sub))?;
    }
    Ok(())
}

/// One message to file.
#[derive(Debug)]
pub struct Move {
    /// The message in the inbox's `new/`.
    pub source: PathBuf,
    /// Its file name (kept in the target, info suffix and all), whatever its bytes.
    pub name: OsString,
    /// The target maildir.
    pub target: PathBuf,
    /// Bytes to write instead of linking the source (the message with headers added).
    pub content: Option<Vec<u8>>,
    /// With `content`: the source as those bytes were made from it (see [`Source::of`]).
    pub read: Option<Source>,
}

/// How long after its last write a message is copied (and then only if no process has it
/// open for writing, see [`Source::may_be_written`]): one written less than this ago may be
/// written still, and is left for a later pass.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// The error of a move left for a later pass because its message may still be written (see
/// [`Source::may_be_written`]); [`is_not_yet`] tells it.
pub(super) fn not_yet() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        "still being written (open for writing by another process, or written less than a \
         second ago): left for the next pass",
    )
}

/// True for the error of a move left for a later pass (see [`SETTLE`]).
pub fn is_not_yet(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::WouldBlock
}

/// What a message file in the inbox was when it was read: its length (the bytes read, or its
/// length then, for a copy streamed from it) and modification time. A copy is made only of a
/// message no process may still be writing ([`Source::may_be_written`]), and filed only if the
/// taken message is still as read when it is about to be removed: a message written straight into `new/` (a `cp` or a `mv` from
/// another file system, instead of through `tmp/`) may have been read half written, and
/// removing it would lose the rest, which its writer goes on writing into the unlinked file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    len: u64,
    modified: std::time::SystemTime,
}

impl Source {
    /// The source as it was when `len` bytes were read (or, for a streamed copy, are to be
    /// read) from it, with `before` its metadata taken before the read (a write in between
    /// changes the modification time, so the copy is not filed).
    pub fn of(before: &std::fs::Metadata, len: u64) -> std::io::Result<Source> {
        Ok(Source {
            len,
            modified: before.modified()?,
        })
    }

    /// True if it was written less than [`SETTLE`] ago: it may be written still.
    fn fresh(&self) -> bool {
        std::time::SystemTime::now()
            .duration_since(self.modified)
            .is_ok_and(|age| age < SETTLE)
    }

    /// True if the file at `path` (the source as read, [`Source::unchanged`]) may still be
    /// written: another process has it open for writing (where the kernel says, see
    /// `writers.rs`), or it was written less than [`SETTLE`] ago (a writer that opens it anew
    /// for each part, `cat a > f; cat b >> f`, holds nothing open in between).
    fn may_be_written(&self, path: &Path) -> bool {
        self.fresh() || super::writers::open_for_writing(path) == Some(true)
    }

    /// True if the message at `path`, just read as `self`, may have been read before it was
    /// whole: another process has it open for writing (where the kernel says, see
    /// `writers.rs`), or it changed since it was read. Asked of every message before it is
    /// classified, however it is filed: a link keeps the writer's file, but its verdict would
    /// be of the part written so far (an empty file that `cp` has just made reads as ham).
    /// Not its age: a message delivered through `tmp/` is seldom a second old when it arrives,
    /// and a link waits for no writer.
    pub fn read_half_written(&self, path: &Path) -> bool {
        super::writers::open_for_writing(path) == Some(true) || !self.unchanged(path)
    }

    /// True if the file at `path` is still as read.
    fn unchanged(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|now| {
            now.len() == self.len && now.modified().is_ok_and(|m| m == self.modified)
        })
    }
}

/// The directory under the inbox's `tmp/` where the daemon holds the messages it has taken
/// from `new/` while it files them (see the module docs). Made for a batch and removed once
/// empty; anything left in it (by a crash) is put back or finished by `recover.rs`.
pub const TAKEN_DIR: &str = "spamsort-taken";

/// Where the messages taken from the inbox whose `new/` is `inbox_new` are held.
pub fn taken_dir(inbox_new: &Path) -> PathBuf {
    inbox_new.with_file_name("tmp").join(TAKEN_DIR)
}

/// The cause of a move's error when another program (a mail reader) renamed or deleted the
/// message in the inbox's `new/` before the daemon took it: nothing was filed, and the message
/// is wherever that program put it.
#[derive(Debug)]
struct TakenByReader;

impl std::fmt::Display for TakenByReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "renamed or deleted by another program (a mail reader) before it was filed: not \
             filed, left as that program left it",
        )
    }
}

impl std::error::Error for TakenByReader {}

/// True for the error of a move whose message another program took from the inbox's `new/`
/// first (see the module docs): the message was not filed, and is not in the inbox's `new/`.
pub fn is_taken_by_reader(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<TakenByReader>())
}

/// Files a batch of moves (see the module docs). Returns, per move, where the message now is,
/// or the error that left it in the inbox's `new/` (or with the program that took it first,
/// [`is_taken_by_reader`]). `crash` is the test-only [`CrashPoint`].
pub fn file_batch(
    moves: &[Move],
    inbox_new: &Path,
    crash: Option<&CrashPoint>,
) -> Vec<std::io::Result<PathBuf>> {
    file_batch_with(moves, inbox_new, crash, &mut |_| {})
}

/// A message taken from the inbox and placed in its target, not yet durable there.
struct Filed {
    /// Where the message is held meanwhile (in [`TAKEN_DIR`]).
    taken: PathBuf,
    placed: Placed,
}

/// [`file_batch`], calling `meanwhile` with each move as soon as its message is placed in its
/// target: where a test plays a mail reader acting in the middle of a move.
fn file_batch_with(
    moves: &[Move],
    inbox_new: &Path,
    crash: Option<&CrashPoint>,
    meanwhile: &mut dyn FnMut(&Move),
) -> Vec<std::io::Result<PathBuf>> {
    if moves.is_empty() {
        return Vec::new();
    }
    let held = taken_dir(inbox_new);
    if let Err(e) = make_taken_dir(&held) {
        let why =
            |e: &std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", held.display()));
        return moves.iter().map(|_| Err(why(&e))).collect();
    }
    // Which targets lie on another file system than the inbox (their messages are copied):
    // looked up once per target, not per message.
    let device = |path: &Path| file_id(path).map(|(device, _)| device);
    let inbox_device = device(inbox_new);
    let mut elsewhere: std::collections::HashMap<&Path, bool> = std::collections::HashMap::new();
    let mut filed: Vec<std::io::Result<Filed>> = moves
        .iter()
        .map(|m| {
            let copied = m.content.is_some()
                || *elsewhere.entry(m.target.as_path()).or_insert_with(|| {
                    // Directory to directory: on overlayfs a file and a directory may tell
                    // other devices. Unknown: not known to be a copy (the link, tried, tells).
                    match (inbox_device, device(&m.target.join("new"))) {
                        (Some(from), Some(to)) => from != to,
                        _ => false,
                    }
                });
            let taken = take(m, &held, copied)?;
            match place(m, &taken, crash) {
                Ok(placed) => {
                    meanwhile(m);
                    Ok(Filed { taken, placed })
                }
                Err(e) => Err(give_back(m, &taken, None, e)),
            }
        })
        .collect();
    let mut targets: Vec<&Path> = moves.iter().map(|m| m.target.as_path()).collect();
    targets.sort();
    targets.dedup();
    for t in targets {
        if let Err(e) = sync_dir(&t.join("new")) {
            // Not durable in the target: those messages go back to the inbox.
            for (m, r) in moves.iter().zip(&mut filed) {
                if m.target == t
                    && let Ok(f) = r
                {
                    let why = std::io::Error::new(e.kind(), e.to_string());
                    *r = Err(give_back(m, &f.taken, Some(&f.placed.path), why));
                }
            }
        }
    }
    for (m, r) in moves.iter().zip(&filed) {
        if r.is_ok() {
            CrashPoint::reached(crash, CrashStage::Placed, &m.name);
        }
    }
    let results = moves
        .iter()
        .zip(filed)
        .map(|(m, r)| {
            let f = r?;
            if let Some(read) = f.placed.copied {
                if !read.unchanged(&f.taken) {
                    // Changed since it was read (still being written): the copy goes, the
                    // message goes back for the next pass.
                    let why = std::io::Error::other(
                        "it changed while it was filed (still being written?): left for the \
                         next pass",
                    );
                    return Err(give_back(m, &f.taken, Some(&f.placed.path), why));
                }
                if super::writers::open_for_writing(&f.taken) == Some(true) {
                    // Unchanged, but a writer opened it since it was checked before the copy
                    // (see `place`): removing it now would lose what that writer writes next.
                    let why = not_yet();
                    return Err(give_back(m, &f.taken, Some(&f.placed.path), why));
                }
            }
            if let Err(e) = std::fs::remove_file(&f.taken) {
                // Filed; the held name goes at the next start (recovery finds the copy).
                tracing::warn!(
                    "{}: filed, but its taken copy {} could not be removed (the next start \
                     removes it): {e}",
                    m.source.display(),
                    f.taken.display()
                );
            }
            Ok(f.placed.path)
        })
        .collect();
    // Fails while it holds a message that could not be put back: recovery's to finish.
    let _ = std::fs::remove_dir(&held);
    let _ = sync_dir(inbox_new);
    results
}

/// Makes [`TAKEN_DIR`] at `held` (and the inbox's `tmp/` if that went missing; mode 0700)
/// unless it is there, durably: a message renamed into it must not vanish with it in a crash.
fn make_taken_dir(held: &Path) -> std::io::Result<()> {
    if held.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(held)?;
    for dir in held.ancestors().skip(1).take(2) {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Takes `m`'s message from the inbox's `new/` into `held` under its own name (see the module
/// docs). Fails with a [`TakenByReader`] cause if another program had it first; never
/// replaces a message held already (one a failure could not put back). `copied`: the message
/// is known to be filed as a copy, so one that may still be written is not taken.
fn take(m: &Move, held: &Path, copied: bool) -> std::io::Result<PathBuf> {
    // A copy is checked here, before the message leaves `new/`, where that is known to be
    // one: taken only to be put back, its link and unlink would wake the next pass at once.
    if copied && m.read.is_some_and(|r| r.may_be_written(&m.source)) {
        return Err(not_yet());
    }
    let taken = held.join(&m.name);
    match std::fs::symlink_metadata(&taken) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "a message of this name is held in {} already (the next start puts it back)",
                    taken.display()
                ),
            ));
        }
        Err(e) => return Err(e),
    }
    match std::fs::rename(&m.source, &taken) {
        Ok(()) => Ok(taken),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                && std::fs::symlink_metadata(&m.source).is_err() =>
        {
            Err(std::io::Error::other(TakenByReader))
        }
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("cannot take it from the inbox's new/: {e}"),
        )),
    }
}

/// Undoes `m` after its message was taken to `taken`: removes what was `placed` in the target
/// (if anything: the message's own link or copy) and puts the message back into the inbox's
/// `new/`. Returns `why`, the error that stopped the move, saying also what could not be
/// undone (a copy a reader of the target took meanwhile stays: two copies; a message that
/// cannot be put back stays held until the next start puts it back).
fn give_back(m: &Move, taken: &Path, placed: Option<&Path>, why: std::io::Error) -> std::io::Error {
    let mut said = why.to_string();
    if let Some(path) = placed
        && let Err(e) = std::fs::remove_file(path)
    {
        said.push_str(&format!(
            "; its copy {} could not be taken back ({e}), so the message is in two places",
            path.display()
        ));
    }
    let Some(inbox_new) = m.source.parent() else {
        return std::io::Error::new(why.kind(), said);
    };
    if let Err(e) = put_back(taken, inbox_new, &m.name) {
        said.push_str(&format!(
            "; it could not be put back into the inbox's new/ ({e}): it is held in {} until \
             the next start puts it back",
            taken.display()
        ));
        return std::io::Error::new(why.kind(), Held(said));
    }
    std::io::Error::new(why.kind(), said)
}

/// The cause of a move's error when its message could not be put back into the inbox's
/// `new/` after it was taken: it is held in [`TAKEN_DIR`] (the text says where) until the
/// next start puts it back.
#[derive(Debug)]
struct Held(String);

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Held {}

/// True for the error of a move whose message is held in [`TAKEN_DIR`], not in the inbox's
/// `new/` (see [`Held`]).
pub fn is_held(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Held>())
}

/// Puts the message held at `taken` back into `inbox_new` under `name`, or a clash-free
/// variant of it if another file has that name; never replaces a file (a hard link, then the
/// held name removed; where the kernel refuses the link, a rename that refuses to replace a
/// file). Returns where it is now.
pub(super) fn put_back(taken: &Path, inbox_new: &Path, name: &OsStr) -> std::io::Result<PathBuf> {
    for attempt in 0..MAX_CLASHES {
        let dest = inbox_new.join(variant(name, attempt));
        match std::fs::hard_link(taken, &dest) {
            Ok(()) => {}
            // Put back before, its held name not removed.
            Err(e)
                if e.kind() == std::io::ErrorKind::AlreadyExists
                    && file_id(&dest).is_some_and(|id| file_id(taken) == Some(id)) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) if link_refused(&e) => match rename_no_replace(taken, &dest) {
                Ok(()) => return Ok(dest),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
        std::fs::remove_file(taken)?;
        return Ok(dest);
    }
    Err(std::io::Error::other("no free name in the inbox's new/"))
}

/// True for a hard link the kernel refuses for the file itself, not for where it would go:
/// `EPERM`, as `fs.protected_hardlinks` answers for another user's file, and as a file system
/// without hard links does.
fn link_refused(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EPERM)
}

/// Renames `from` to `to` unless `to` exists (then fails with `AlreadyExists`), in one step
/// (`renameat2` with `RENAME_NOREPLACE`). On a file system that cannot do that, `to` is looked
/// for first and the rename done if it is free: a maildir's names are unique, and nothing but
/// the daemon puts a message back under a name taken from it.
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
            match std::fs::symlink_metadata(to) {
                Ok(_) => Err(std::io::ErrorKind::AlreadyExists.into()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::rename(from, to),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// Where [`place`] put a message, and for a copy, the source it was made from.
struct Placed {
    path: PathBuf,
    copied: Option<Source>,
}

/// Puts `m`'s message, taken to `taken`, into its target's `new/` under its own name (or a
/// clash-free variant): a link, or `m`'s content written there. Where the link cannot be made
/// (another file system, a link the kernel refuses), a copy of the file, streamed: a message
/// of any size is copied in bounded memory.
fn place(m: &Move, taken: &Path, crash: Option<&CrashPoint>) -> std::io::Result<Placed> {
    let made = match &m.content {
        None => Made::Link,
        Some(bytes) => Made::Bytes(bytes),
    };
    let copied = m.content.as_ref().and(m.read);
    match place_as(m, taken, made, crash) {
        Err(e)
            if (e.kind() == std::io::ErrorKind::CrossesDevices || link_refused(&e))
                && m.content.is_none() =>
        {
            let before = std::fs::metadata(taken)?;
            let read = Source::of(&before, before.len())?;
            if read.may_be_written(taken) {
                return Err(not_yet());
            }
            let path = place_as(m, taken, Made::Copy, crash)?;
            Ok(Placed {
                path,
                copied: Some(read),
            })
        }
        placed => placed.map(|path| Placed { path, copied }),
    }
}

/// What a target's file of a message is made as.
#[derive(Debug, Clone, Copy)]
enum Made<'a> {
    /// A hard link to the taken file.
    Link,
    /// These bytes, written through the target's `tmp/`.
    Bytes(&'a [u8]),
    /// A copy of the taken file's bytes, streamed through the target's `tmp/`.
    Copy,
}

/// [`place`] made as `made`: where it was put.
fn place_as(
    m: &Move,
    taken: &Path,
    made: Made<'_>,
    crash: Option<&CrashPoint>,
) -> std::io::Result<PathBuf> {
    let new = m.target.join("new");
    for attempt in 0u32.. {
        let dest = new.join(variant(&m.name, attempt));
        let put = match made {
            Made::Link => std::fs::hard_link(taken, &dest),
            Made::Bytes(bytes) => write_via_tmp(m, taken, &dest, crash, |f| f.write_all(bytes)),
            Made::Copy => write_via_tmp(m, taken, &dest, crash, |f| {
                std::io::copy(&mut crate::corpus::open_regular(taken)?, f).map(drop)
            }),
        };
        match put {
            Ok(()) => return Ok(dest),
            // Placed by an earlier move that a crash interrupted: that copy serves, instead of
            // one more under another name.
            Err(e)
                if e.kind() == std::io::ErrorKind::AlreadyExists && holds(&dest, made, taken) =>
            {
                return Ok(dest);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < MAX_CLASHES => {}
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// True if `dest` already is what [`place_as`] would make of the message taken to `taken`:
/// that file itself (a link), or a file of the same bytes (a copy).
fn holds(dest: &Path, made: Made<'_>, taken: &Path) -> bool {
    match made {
        Made::Link => file_id(dest).is_some_and(|id| file_id(taken) == Some(id)),
        Made::Bytes(bytes) => {
            let limit = bytes.len() as u64;
            crate::corpus::read_regular(dest, limit).is_ok_and(|held| held == *bytes)
        }
        Made::Copy => same_bytes(dest, taken).unwrap_or(false),
    }
}

/// True if the regular files `a` and `b` hold the same bytes, read in bounded chunks.
pub(super) fn same_bytes(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let (mut a, mut b) = (
        crate::corpus::open_regular(a)?,
        crate::corpus::open_regular(b)?,
    );
    if a.metadata()?.len() != b.metadata()?.len() {
        return Ok(false);
    }
    let (mut x, mut y) = ([0u8; 8192], [0u8; 8192]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(b.read(&mut y)? == 0);
        }
        let mut got = 0;
        while got < n {
            match b.read(&mut y[got..n])? {
                0 => return Ok(false),
                k => got += k,
            }
        }
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

/// A maildir file name's unique part: the bytes before its info suffix (`:2,FLAGS`), all of
/// them if it has none.
pub(super) fn unique_part(name: &[u8]) -> &[u8] {
    name.iter()
        .rposition(|&b| b == b':')
        .map_or(name, |colon| &name[..colon])
}

/// The longest file name the file systems take, in bytes.
const NAME_MAX: usize = 255;

/// The most clash variants [`place_as`] and [`put_back`] try (`.dup1` to `.dup1000`).
const MAX_CLASHES: u32 = 1000;

/// `name` itself, or for a clash, `UNIQUE.dupN` with the info suffix kept, UNIQUE cut short
/// where the name would be longer than a file name may be (see [`clash_bases`]).
fn variant(name: &OsStr, attempt: u32) -> OsString {
    if attempt == 0 {
        return name.to_os_string();
    }
    let unique = unique_part(name.as_bytes());
    let info = &name.as_bytes()[unique.len()..];
    let mark = format!("{CLASH_MARK}{attempt}");
    let keep = kept_of_unique(unique.len(), mark.len(), info.len());
    OsString::from_vec([&unique[..keep], mark.as_bytes(), info].concat())
}

/// How many bytes of a unique part `unique` bytes long a clash variant with a mark `mark`
/// bytes long and an info suffix `info` bytes long keeps: all of them, or as many as leave
/// the name within [`NAME_MAX`] (at least one).
fn kept_of_unique(unique: usize, mark: usize, info: usize) -> usize {
    unique.min(NAME_MAX.saturating_sub(mark + info).max(1))
}

/// The unique parts (see [`unique_part`], clash mark taken off) the file a message named
/// `name` was filed as may have: `unique`, its own, and where a clash variant of it was cut
/// short (a name near [`NAME_MAX`]), the starts of it such a variant keeps.
pub(super) fn clash_bases<'a>(
    unique: &'a [u8],
    name: &[u8],
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let info = name.len().saturating_sub(unique_part(name).len());
    let marks = (1..=MAX_CLASHES.ilog10() + 1).map(|digits| CLASH_MARK.len() + digits as usize);
    let mut kept: Vec<usize> = marks
        .map(|mark| kept_of_unique(unique.len(), mark, info))
        .filter(|&keep| keep < unique.len())
        .collect();
    kept.dedup();
    std::iter::once(unique).chain(kept.into_iter().map(move |keep| &unique[..keep]))
}

/// Makes a file in `m`'s target's `tmp/` with the permission bits of `taken` (the message
/// taken from the inbox), has `write` fill it, fsyncs, and links the result to `dest`
/// (failing if `dest` exists; where the file system refuses links, renames it there, failing
/// as well).
fn write_via_tmp(
    m: &Move,
    taken: &Path,
    dest: &Path,
    crash: Option<&CrashPoint>,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mode = std::fs::metadata(taken)?.permissions().mode() & 0o777;
    let tmp = m.target.join("tmp").join(tmp_name(&m.name));
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        write(&mut file)?;
        file.sync_all()?;
        CrashPoint::reached(crash, CrashStage::Written, &m.name);
        match std::fs::hard_link(&tmp, dest) {
            // A file system without hard links: the copy renamed into place instead, never
            // over a file.
            Err(e) if link_refused(&e) => rename_no_replace(&tmp, dest),
            linked => linked,
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

/// The name of the copy of `name` in a target's `tmp/`: [`TMP_PREFIX`] and `name`, or where
/// that would be longer than a file name may be (255 bytes), the prefix and a hash of `name`.
fn tmp_name(name: &OsStr) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    let plain = [TMP_PREFIX.as_bytes(), name.as_bytes()].concat();
    if plain.len() <= 255 {
        return OsString::from_vec(plain);
    }
    let mut h = foldhash::fast::FixedState::with_seed(0x746d_706e).build_hasher();
    h.write(name.as_bytes());
    OsString::from(format!("{TMP_PREFIX}{:016x}", h.finish()))
}

/// fsyncs a directory, making the entries created or removed in it durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_rename_that_puts_a_message_back_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("held"), dir.path().join("back"));
        std::fs::write(&from, b"message").unwrap();
        std::fs::write(&to, b"another").unwrap();
        let refused = rename_no_replace(&from, &to).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&to).unwrap(), b"another");
        std::fs::remove_file(&to).unwrap();
        rename_no_replace(&from, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"message");
        assert!(!from.exists());
    }

    /// A temporary directory holding two new maildirs, the inbox `inbox` and the target
    /// `target` (paths below it), and their paths.
    pub(in crate::daemon) fn maildirs(
        inbox: &str,
        target: &str,
    ) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let (inbox, target) = (dir.path().join(inbox), dir.path().join(target));
        create_maildir(&inbox).unwrap();
        create_maildir(&target).unwrap();
        (dir, inbox, target)
    }

    #[test]
    fn link_and_copy_moves_keep_names_modes_and_bytes() {
        let (_dir, inbox, target) = maildirs("inbox", "deep/spam");
        assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o777, 0o700);
        let names = ["1.a.host", "2.b.host:2,S", "3.c.host"];
        for (i, n) in names.iter().enumerate() {
            let p = inbox.join("new").join(n);
            std::fs::write(&p, format!("Subject: {i}\n\nbody\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        // A clash: the target already holds another message named like the third.
        std::fs::write(target.join("new/3.c.host"), "other").unwrap();
        let moves: Vec<Move> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Move {
                source: inbox.join("new").join(n),
                name: (*n).into(),
                target: target.clone(),
                content: (i == 1).then(|| b"X-Added: 1\nSubject: 1\n\nbody\n".to_vec()),
                read: None,
            })
            .collect();
        let placed = file_batch(&moves, &inbox.join("new"), None);
        let placed: Vec<PathBuf> = placed.into_iter().map(Result::unwrap).collect();
        assert_eq!(placed[0], target.join("new/1.a.host"));
        assert_eq!(placed[1], target.join("new/2.b.host:2,S"));
        assert_eq!(placed[2], target.join("new/3.c.host.dup1"));
        assert_eq!(std::fs::read(&placed[0]).unwrap(), b"Subject: 0\n\nbody\n");
        assert_eq!(
            std::fs::read(&placed[1]).unwrap(),
            b"X-Added: 1\nSubject: 1\n\nbody\n"
        );
        assert_eq!(
            std::fs::read(target.join("new/3.c.host")).unwrap(),
            b"other"
        );
        for p in &placed {
            assert_eq!(std::fs::metadata(p).unwrap().mode() & 0o777, 0o640);
        }
        assert_eq!(std::fs::read_dir(inbox.join("new")).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(target.join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn a_copy_of_a_message_still_being_written_is_not_filed_and_the_message_stays() {
        let (_dir, inbox, target) = maildirs("inbox", "spam");
        let source = inbox.join("new/1.a.host");
        std::fs::write(&source, "Subject: 1\n\nfirst half\n").unwrap();
        let age = |secs| {
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            let f = std::fs::File::open(&source).unwrap();
            f.set_modified(then).unwrap();
        };
        // Just written and still open for writing: not copied yet, whatever it holds (the
        // kernel says it is open; where it will not say, it was written too recently).
        let writer = std::fs::File::options().append(true).open(&source).unwrap();
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let fresh = Move {
            source: source.clone(),
            name: "1.a.host".into(),
            target: target.clone(),
            content: Some(bytes.clone()),
            read: Some(Source::of(&before, bytes.len() as u64).unwrap()),
        };
        let placed = file_batch(&[fresh], &inbox.join("new"), None);
        assert!(placed[0].as_ref().is_err_and(is_not_yet), "{placed:?}");
        drop(writer);
        let _ = super::super::writers::tests::no_writer_soon(&source);
        age(10);
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let read = Some(Source::of(&before, bytes.len() as u64).unwrap());
        let copy = |read, bytes: &[u8]| Move {
            source: source.clone(),
            name: "1.a.host".into(),
            target: target.clone(),
            content: Some([b"X-Added: 1\n", bytes].concat()),
            read,
        };
        // Its writer went on after it was read (a `cp` straight into new/), and is done now:
        // the half copy must not replace it.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&source)
            .unwrap();
        f.write_all(b"second half\n").unwrap();
        drop(f);
        let _ = super::super::writers::tests::no_writer_soon(&source);
        age(10);
        let placed = file_batch(&[copy(read, &bytes)], &inbox.join("new"), None);
        assert!(
            placed[0].as_ref().is_err_and(|e| !is_not_yet(e)),
            "{placed:?}"
        );
        assert_eq!(
            std::fs::read(&source).unwrap(),
            b"Subject: 1\n\nfirst half\nsecond half\n"
        );
        assert_eq!(std::fs::read_dir(target.join("new")).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(target.join("tmp")).unwrap().count(), 0);
        // Read again, it is filed.
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let read = Some(Source::of(&before, bytes.len() as u64).unwrap());
        let placed = file_batch(&[copy(read, &bytes)], &inbox.join("new"), None);
        assert!(placed[0].is_ok(), "{placed:?}");
        assert!(!source.exists());
        assert!(
            std::fs::read(placed[0].as_ref().unwrap())
                .unwrap()
                .ends_with(b"second half\n")
        );
    }

    /// A message written straight into `inbox`'s `new/` by a writer that paused for longer
    /// than [`SETTLE`] with the file still open, read as it is then, and the writer. `None`
    /// where the kernel will not say who writes a file (no leases here): the test is skipped.
    fn paused_writer(inbox: &Path) -> Option<(PathBuf, Vec<u8>, Source, File)> {
        let source = inbox.join("new/1.paused.host");
        let mut writer = File::create(&source).unwrap();
        writer.write_all(b"Subject: 1\n\nfirst half\n").unwrap();
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        writer.set_modified(then).unwrap();
        if super::super::writers::open_for_writing(&source).is_none() {
            eprintln!("skipped: this file system or user cannot take leases");
            return None;
        }
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let read = Source::of(&before, bytes.len() as u64).unwrap();
        Some((source, bytes, read, writer))
    }

    /// Ends `paused_writer`'s message and closes it; returns its bytes, read anew, and how.
    fn finish(source: &Path, mut writer: File) -> (Vec<u8>, Source) {
        writer.write_all(b"second half\n").unwrap();
        drop(writer);
        assert_eq!(
            super::super::writers::tests::no_writer_soon(source),
            Some(false)
        );
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        let f = File::open(source).unwrap();
        f.set_modified(then).unwrap();
        let before = std::fs::metadata(source).unwrap();
        let bytes = std::fs::read(source).unwrap();
        (
            bytes.clone(),
            Source::of(&before, bytes.len() as u64).unwrap(),
        )
    }

    #[test]
    fn a_marked_copy_waits_while_its_message_is_open_for_writing_however_long_it_paused() {
        // Regression: a message last written over a second ago was copied with its headers
        // and removed, though its writer (paused, file still open) went on writing the rest
        // into the unlinked file: the rest was lost.
        let (_dir, inbox, target) = maildirs("inbox", "spam");
        let Some((source, bytes, read, writer)) = paused_writer(&inbox) else {
            return;
        };
        let copy = |bytes: &[u8], read| Move {
            source: source.clone(),
            name: "1.paused.host".into(),
            target: target.clone(),
            content: Some([b"X-Added: 1\n", bytes].concat()),
            read: Some(read),
        };
        let placed = file_batch(&[copy(&bytes, read)], &inbox.join("new"), None);
        assert!(placed[0].as_ref().is_err_and(is_not_yet), "{placed:?}");
        assert_eq!(std::fs::read(&source).unwrap(), bytes);
        assert_eq!(std::fs::read_dir(target.join("new")).unwrap().count(), 0);
        let (bytes, read) = finish(&source, writer);
        let placed = file_batch(&[copy(&bytes, read)], &inbox.join("new"), None);
        let filed = std::fs::read(placed[0].as_ref().unwrap()).unwrap();
        assert_eq!(
            filed,
            b"X-Added: 1\nSubject: 1\n\nfirst half\nsecond half\n"
        );
        assert!(!source.exists());
    }

    #[test]
    fn a_message_open_for_writing_is_not_copied_to_another_file_system() {
        // Regression: where the target is on another file system the link fails and the
        // message is copied, with no check at all that its writer was done: a pause of 0.3 s
        // lost the rest of the message.
        let Some((_dirs, inbox, target)) = inbox_and_target_elsewhere() else {
            return;
        };
        let Some((source, _, _, writer)) = paused_writer(&inbox) else {
            return;
        };
        let link = || Move {
            source: source.clone(),
            name: "1.paused.host".into(),
            target: target.clone(),
            content: None,
            read: None,
        };
        let placed = file_batch(&[link()], &inbox.join("new"), None);
        assert!(placed[0].as_ref().is_err_and(is_not_yet), "{placed:?}");
        assert!(source.exists());
        assert_eq!(std::fs::read_dir(target.join("new")).unwrap().count(), 0);
        let (bytes, _) = finish(&source, writer);
        let placed = file_batch(&[link()], &inbox.join("new"), None);
        assert_eq!(std::fs::read(placed[0].as_ref().unwrap()).unwrap(), bytes);
        assert!(!source.exists());
    }

    /// An inbox maildir, and a spam maildir on another file system (under `/dev/shm`), with the
    /// directories that hold them; `None` (said) where there is no other file system.
    fn inbox_and_target_elsewhere() -> Option<([tempfile::TempDir; 2], PathBuf, PathBuf)> {
        let (dir, inbox, _) = maildirs("inbox", "unused");
        let device = |p: &Path| file_id(p).map(|(dev, _)| dev);
        let other = match tempfile::tempdir_in("/dev/shm") {
            Ok(other) if device(other.path()) != device(dir.path()) => other,
            _ => {
                eprintln!("skipped: no other file system at /dev/shm");
                return None;
            }
        };
        let target = other.path().join("spam");
        create_maildir(&target).unwrap();
        Some(([dir, other], inbox, target))
    }

    #[test]
    fn a_message_of_any_size_is_copied_whole_to_another_file_system_once() {
        // Regression: the copy read the message whole, bounded by the 64 MiB a message may
        // have to be classified, so a larger one was never filed there ("larger than ...").
        let Some((_dirs, inbox, target)) = inbox_and_target_elsewhere() else {
            return;
        };
        let line = b"a line of a message larger than any the daemon reads whole 0123456\n";
        let lines = (crate::corpus::MAX_MESSAGE_BYTES as usize) / line.len() + 1000;
        let big = [&b"Subject: big\n\n"[..], &line.repeat(lines)].concat();
        let room = rustix::fs::statvfs(&target).map(|s| s.f_bavail * s.f_frsize);
        if room.is_ok_and(|room| room < 2 * big.len() as u64) {
            eprintln!("skipped: no room for {} bytes twice on /dev/shm", big.len());
            return;
        }
        let small = b"Subject: small\n\nbody\n".to_vec();
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        let put = |name: &str, bytes: &[u8]| {
            let source = inbox.join("new").join(name);
            std::fs::write(&source, bytes).unwrap();
            File::options()
                .write(true)
                .open(&source)
                .unwrap()
                .set_modified(then)
                .unwrap();
            Move {
                source,
                name: name.into(),
                target: target.clone(),
                content: None,
                read: None,
            }
        };
        let first = put("1.big.host", &big);
        // And one an earlier pass copied but could not take out of the inbox: that copy
        // serves, no second one is made.
        let second = put("2.small.host", &small);
        std::fs::write(target.join("new/2.small.host"), &small).unwrap();
        let placed = file_batch(&[first, second], &inbox.join("new"), None);
        for (p, (name, bytes)) in placed
            .iter()
            .zip([("1.big.host", &big), ("2.small.host", &small)])
        {
            let p = p.as_ref().unwrap();
            assert_eq!(p, &target.join("new").join(name));
            assert!(std::fs::read(p).unwrap() == *bytes, "{name}");
        }
        assert_eq!(std::fs::read_dir(target.join("new")).unwrap().count(), 2);
        assert_eq!(std::fs::read_dir(inbox.join("new")).unwrap().count(), 0);
    }

    #[test]
    fn a_message_an_earlier_pass_placed_is_not_filed_again_under_another_name() {
        let (_dir, inbox, target) = maildirs("inbox", "spam");
        let (link, copy) = (inbox.join("new/1.a.host"), inbox.join("new/2.b.host"));
        for (path, text) in [
            (&link, "Subject: 1\n\nbody\n"),
            (&copy, "Subject: 2\n\nbody\n"),
        ] {
            std::fs::write(path, text).unwrap();
        }
        let marked = b"X-Added: 1\nSubject: 2\n\nbody\n".to_vec();
        // What an earlier pass left when it could not remove the inbox entries (or make the
        // target durable): a link to the first, a copy of the second.
        std::fs::hard_link(&link, target.join("new/1.a.host")).unwrap();
        std::fs::write(target.join("new/2.b.host"), &marked).unwrap();
        let moves = [
            Move {
                source: link.clone(),
                name: "1.a.host".into(),
                target: target.clone(),
                content: None,
                read: None,
            },
            Move {
                source: copy.clone(),
                name: "2.b.host".into(),
                target: target.clone(),
                content: Some(marked),
                read: None,
            },
        ];
        let placed = file_batch(&moves, &inbox.join("new"), None);
        let placed: Vec<PathBuf> = placed.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            placed,
            [target.join("new/1.a.host"), target.join("new/2.b.host")]
        );
        assert_eq!(std::fs::read_dir(target.join("new")).unwrap().count(), 2);
        assert!(!link.exists() && !copy.exists());
    }

    /// Every file under the maildirs `roots` (their `new/`, `cur/` and `tmp/`, and the daemon's
    /// own directories there), with its bytes.
    fn all_files(roots: &[&Path]) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut dirs: Vec<PathBuf> = roots.iter().map(|r| r.to_path_buf()).collect();
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    out.push((p.clone(), std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_reader_renaming_a_message_while_its_marked_copy_is_filed_leaves_one_copy() {
        // Regression: a reader that marked the message seen (renamed it into cur/) after the
        // marked copy was linked into the target and before the daemon removed the inbox entry
        // kept the original in cur/, and the copy stayed in the target: two copies.
        let (_dir, inbox, target) = maildirs("M", "spam");
        for link in [false, true] {
            let name = if link { "2.b.host" } else { "1.a.host" };
            let source = inbox.join("new").join(name);
            let original = format!("Subject: {name}\n\nbody\n").into_bytes();
            std::fs::write(&source, &original).unwrap();
            let m = Move {
                source: source.clone(),
                name: name.into(),
                target: target.clone(),
                content: (!link).then(|| [&b"X-Spam-Flag: YES\n"[..], &original].concat()),
                read: None,
            };
            let seen = inbox.join("cur").join(format!("{name}:2,S"));
            let mut reader = |_: &Move| {
                // What a reader does; it finds the message gone if the daemon has it.
                let _ = std::fs::rename(&source, &seen);
            };
            let placed = file_batch_with(&[m], &inbox.join("new"), None, &mut reader);
            let copies: Vec<_> = all_files(&[&inbox, &target])
                .into_iter()
                .filter(|(_, bytes)| bytes.ends_with(&original))
                .collect();
            assert_eq!(copies.len(), 1, "{placed:?}: {copies:?}");
            let filed = target.join("new").join(name);
            assert_eq!(placed[0].as_ref().ok(), Some(&filed), "{placed:?}");
            assert_eq!(copies[0].0, filed);
            assert!(!seen.exists() && !source.exists());
        }
    }

    #[test]
    fn a_message_a_reader_took_first_is_not_filed_and_one_that_fails_is_given_back() {
        let (dir, inbox, target) = maildirs("M", "spam");
        let copy = |name: &str| Move {
            source: inbox.join("new").join(name),
            name: name.into(),
            target: target.clone(),
            content: Some(b"X-Spam-Flag: YES\nSubject: 1\n\nbody\n".to_vec()),
            read: None,
        };
        // Read and classified, then marked seen by a reader before the daemon takes it.
        std::fs::write(inbox.join("cur/1.a.host:2,S"), "Subject: 1\n\nbody\n").unwrap();
        // A message whose copy cannot be placed: its target's new/ is a file.
        std::fs::write(inbox.join("new/2.b.host"), "Subject: 2\n\nbody\n").unwrap();
        let other = dir.path().join("other");
        create_maildir(&other).unwrap();
        std::fs::remove_dir(other.join("new")).unwrap();
        std::fs::write(other.join("new"), "").unwrap();
        let stuck = Move {
            target: other.clone(),
            ..copy("2.b.host")
        };
        let placed = file_batch(&[copy("1.a.host"), stuck], &inbox.join("new"), None);
        assert!(
            placed[0].as_ref().is_err_and(is_taken_by_reader),
            "{placed:?}"
        );
        assert!(
            placed[1].as_ref().is_err_and(|e| !is_taken_by_reader(e)),
            "{placed:?}"
        );
        assert_eq!(std::fs::read_dir(target.join("new")).unwrap().count(), 0);
        assert!(inbox.join("cur/1.a.host:2,S").exists());
        assert_eq!(
            std::fs::read(inbox.join("new/2.b.host")).unwrap(),
            b"Subject: 2\n\nbody\n"
        );
        assert_eq!(std::fs::read_dir(inbox.join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn a_copy_of_a_message_with_a_name_of_250_bytes_is_filed() {
        let (_dir, inbox, target) = maildirs("inbox", "spam");
        let name = format!("1.{}.host", "x".repeat(243));
        assert_eq!(name.len(), 250);
        std::fs::write(inbox.join("new").join(&name), "Subject: 1\n\nbody\n").unwrap();
        let copy = Move {
            source: inbox.join("new").join(&name),
            name: name.clone().into(),
            target: target.clone(),
            content: Some(b"X-Added: 1\nSubject: 1\n\nbody\n".to_vec()),
            read: None,
        };
        let placed = file_batch(&[copy], &inbox.join("new"), None);
        assert_eq!(placed[0].as_ref().unwrap(), &target.join("new").join(&name));
        assert_eq!(std::fs::read_dir(target.join("tmp")).unwrap().count(), 0);
        assert!(tmp_name(name.as_ref()).len() <= 255);
        assert_eq!(tmp_name("a".as_ref()), "spamsort.a");
    }

    #[test]
    fn names_that_are_not_utf8_keep_their_bytes_in_clash_and_temporary_names() {
        let name = OsStr::from_bytes(b"1.\xff\xfe.host:2,S");
        assert_eq!(unique_part(name.as_bytes()), b"1.\xff\xfe.host");
        assert_eq!(variant(name, 0), name);
        assert_eq!(variant(name, 2).as_bytes(), b"1.\xff\xfe.host.dup2:2,S");
        assert_eq!(variant(OsStr::new("1.a"), 1), "1.a.dup1");
        assert_eq!(tmp_name(name).as_bytes(), b"spamsort.1.\xff\xfe.host:2,S");
        let long = OsString::from_vec([&b"1."[..], &[0xff; 250]].concat());
        assert!(tmp_name(&long).len() <= 255 && tmp_name(&long) != tmp_name(name));
    }

    #[test]
    fn crash_point_is_read_as_stage_and_name_and_malformed_ones_refused() {
        let parse = |v: &str| CrashPoint::parse(Some(v.into()));
        assert_eq!(CrashPoint::parse(None).unwrap(), None);
        assert_eq!(
            parse("placed:1.a:2,S").unwrap(),
            Some(CrashPoint {
                stage: CrashStage::Placed,
                name: "1.a:2,S".into()
            })
        );
        assert_eq!(
            parse("written:x").unwrap().unwrap().stage,
            CrashStage::Written
        );
        for bad in ["", "placed", "later:x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
