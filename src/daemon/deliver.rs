//! Filing messages from the inbox into target maildirs so that none is ever lost: each
//! message is first made complete in its target's `new/` (a hard link, or a copy written to
//! `tmp/`, fsynced and linked into place), the target directories are fsynced, and only then are
//! the inbox entries removed and the inbox directory fsynced. A crash in between leaves a
//! message in both places, never in none; `recover.rs` finishes such moves on restart.
//!
//! Hard links instead of `rename` because a link never replaces an existing file: a name
//! already taken in the target (maildir names are unique, so this is a repeat of an interrupted
//! move or a real clash) is detected instead of silently overwriting a message.

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
    /// `written`: the copy is complete in the target's `tmp/`, not yet linked into `new/`
    /// (only moves with added headers write copies). The restart rolls it back.
    Written,
    /// `placed`: the batch holding the message is durable in its targets, the inbox entries
    /// not yet removed. The restart finishes the moves.
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

/// How long after its last write a message is copied: one written less than this ago may be
/// written still (by a writer that paused), and is left for a later pass ([`not_yet`]).
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// The error of a move left for a later pass because its message was written too recently to
/// be copied ([`SETTLE`]); [`is_not_yet`] tells it.
fn not_yet() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        "written less than a second ago: left for the next pass",
    )
}

/// True for the error of a move left for a later pass (see [`SETTLE`]).
pub fn is_not_yet(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::WouldBlock
}

/// What a message file in the inbox was when it was read: its length (the bytes read) and
/// modification time. A copy is filed only if the source is still so when the inbox entry is
/// about to be removed: a message written straight into `new/` (a `cp` or a `mv` from another
/// file system, instead of through `tmp/`) may have been read half written, and removing the
/// entry would lose the rest, which its writer goes on writing into the unlinked file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    len: u64,
    modified: std::time::SystemTime,
}

impl Source {
    /// The source as `bytes` were read from it, with `before` its metadata taken before the
    /// read (a write in between changes the modification time, so the copy is not filed).
    pub fn of(before: &std::fs::Metadata, bytes: &[u8]) -> std::io::Result<Source> {
        Ok(Source {
            len: bytes.len() as u64,
            modified: before.modified()?,
        })
    }

    /// True if it was written less than [`SETTLE`] ago: it may be written still.
    fn fresh(&self) -> bool {
        std::time::SystemTime::now()
            .duration_since(self.modified)
            .is_ok_and(|age| age < SETTLE)
    }

    /// True if the file at `path` is still as read.
    fn unchanged(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|now| {
            now.len() == self.len && now.modified().is_ok_and(|m| m == self.modified)
        })
    }
}

/// Files a batch of moves (see the module docs). Returns, per move, where the message now is,
/// or the error that left it in the inbox. `crash` is the test-only [`CrashPoint`].
pub fn file_batch(
    moves: &[Move],
    inbox_new: &Path,
    crash: Option<&CrashPoint>,
) -> Vec<std::io::Result<PathBuf>> {
    let mut placed: Vec<std::io::Result<Placed>> = moves.iter().map(|m| place(m, crash)).collect();
    let mut targets: Vec<&Path> = moves.iter().map(|m| m.target.as_path()).collect();
    targets.sort();
    targets.dedup();
    for t in targets {
        if let Err(e) = sync_dir(&t.join("new")) {
            // Not durable in the target: leave those messages in the inbox too.
            for (m, r) in moves.iter().zip(&mut placed) {
                if m.target == t && r.is_ok() {
                    *r = Err(std::io::Error::new(e.kind(), e.to_string()));
                }
            }
        }
    }
    for (m, r) in moves.iter().zip(&placed) {
        if r.is_ok() {
            CrashPoint::reached(crash, CrashStage::Placed, &m.name);
        }
    }
    for (m, r) in moves.iter().zip(&mut placed) {
        if let Ok(Placed {
            path,
            copied: Some(read),
        }) = r
            && !read.unchanged(&m.source)
        {
            // Changed since it was read (still being written): the copy goes, the message stays
            // for the next pass.
            let _ = std::fs::remove_file(&*path);
            *r = Err(std::io::Error::other(
                "it changed while it was filed (still being written?): left for the next pass",
            ));
        }
        let Ok(placed) = r else { continue };
        match std::fs::remove_file(&m.source) {
            Ok(()) => {}
            // A mail reader renamed it into cur/ meanwhile (marked it seen): that name is
            // the filed message itself (a link), not a second copy.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                remove_seen_twin(inbox_new, &m.name, &placed.path);
            }
            // Filed, but the inbox copy stays: recovery removes it on the next start.
            Err(e) => tracing::warn!(
                "{}: filed but not removed from the inbox: {e}",
                m.source.display()
            ),
        }
    }
    let _ = sync_dir(inbox_new);
    placed.into_iter().map(|r| r.map(|p| p.path)).collect()
}

/// Removes the inbox's `cur/` entry that a mail reader made of the message `name` from
/// `new/` (its unique part, with the reader's `:2,FLAGS`) while it was filed to `filed`, if it
/// is the same file as `filed` (a hard link: nothing is lost); without it the message would be
/// in both folders, and with learning from moves, taken for one the user moved back.
fn remove_seen_twin(inbox_new: &Path, name: &OsStr, filed: &Path) {
    let Some(cur) = inbox_new.parent().map(|inbox| inbox.join("cur")) else {
        return;
    };
    let unique = unique_part(name.as_bytes());
    let Ok(entries) = std::fs::read_dir(&cur) else {
        return;
    };
    let Some(ours) = file_id(filed) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let twin = unique_part(file_name.as_bytes()) == unique;
        if twin
            && file_id(&entry.path()) == Some(ours)
            && std::fs::remove_file(entry.path()).is_ok()
        {
            let _ = sync_dir(&cur);
        }
    }
}

/// Where [`place`] put a message, and for a copy, the source it was made from.
struct Placed {
    path: PathBuf,
    copied: Option<Source>,
}

/// Puts one message into its target's `new/` under its own name (or a clash-free variant).
fn place(m: &Move, crash: Option<&CrashPoint>) -> std::io::Result<Placed> {
    if m.content.is_some() && m.read.is_some_and(|r| r.fresh()) {
        return Err(not_yet());
    }
    let new = m.target.join("new");
    for attempt in 0u32.. {
        let dest = new.join(variant(&m.name, attempt));
        let linked = match &m.content {
            None => std::fs::hard_link(&m.source, &dest),
            Some(bytes) => write_via_tmp(m, bytes, &dest, crash),
        };
        match linked {
            Ok(()) => {
                return Ok(Placed {
                    path: dest,
                    copied: m.content.as_ref().and(m.read),
                });
            }
            // Placed by an earlier pass that could not remove the inbox entry or make the
            // target durable: that copy serves, instead of one more under another name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && holds(&dest, m) => {
                return Ok(Placed {
                    path: dest,
                    copied: m.content.as_ref().and(m.read),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => {}
            Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices && m.content.is_none() => {
                // Another file system: a copy, read as the inbox's readers read (bounded).
                let before = std::fs::metadata(&m.source)?;
                let bytes =
                    crate::corpus::read_regular(&m.source, crate::corpus::MAX_MESSAGE_BYTES)?;
                let read = Some(Source::of(&before, &bytes)?);
                return place(
                    &Move {
                        source: m.source.clone(),
                        name: m.name.clone(),
                        target: m.target.clone(),
                        content: Some(bytes),
                        read,
                    },
                    crash,
                );
            }
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// True if `dest` already is what [`place`] would make of `m`: the source itself (a link), or
/// a file of the same bytes (a copy).
fn holds(dest: &Path, m: &Move) -> bool {
    match &m.content {
        None => file_id(dest).is_some_and(|id| file_id(&m.source) == Some(id)),
        Some(bytes) => {
            let limit = bytes.len() as u64;
            crate::corpus::read_regular(dest, limit).is_ok_and(|held| held == *bytes)
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

/// `name` itself, or for a clash, `UNIQUE.dupN` with the info suffix kept.
fn variant(name: &OsStr, attempt: u32) -> OsString {
    if attempt == 0 {
        return name.to_os_string();
    }
    let unique = unique_part(name.as_bytes());
    let info = &name.as_bytes()[unique.len()..];
    let mark = format!("{CLASH_MARK}{attempt}");
    OsString::from_vec([unique, mark.as_bytes(), info].concat())
}

/// Writes `bytes` to `m`'s target's `tmp/` with the source's permission bits, fsyncs, and
/// links the result to `dest` (failing if `dest` exists).
fn write_via_tmp(
    m: &Move,
    bytes: &[u8],
    dest: &Path,
    crash: Option<&CrashPoint>,
) -> std::io::Result<()> {
    let mode = std::fs::metadata(&m.source)?.permissions().mode() & 0o777;
    let tmp = m.target.join("tmp").join(tmp_name(&m.name));
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        CrashPoint::reached(crash, CrashStage::Written, &m.name);
        std::fs::hard_link(&tmp, dest)
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
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn link_and_copy_moves_keep_names_modes_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("inbox");
        let target = dir.path().join("deep/spam");
        create_maildir(&inbox).unwrap();
        create_maildir(&target).unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let (inbox, target) = (dir.path().join("inbox"), dir.path().join("spam"));
        create_maildir(&inbox).unwrap();
        create_maildir(&target).unwrap();
        let source = inbox.join("new/1.a.host");
        std::fs::write(&source, "Subject: 1\n\nfirst half\n").unwrap();
        let age = |secs| {
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            let f = std::fs::File::options().append(true).open(&source).unwrap();
            f.set_modified(then).unwrap();
        };
        // Just written: not copied yet, whatever it holds.
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let fresh = Move {
            source: source.clone(),
            name: "1.a.host".into(),
            target: target.clone(),
            content: Some(bytes.clone()),
            read: Some(Source::of(&before, &bytes).unwrap()),
        };
        let placed = file_batch(&[fresh], &inbox.join("new"), None);
        assert!(placed[0].as_ref().is_err_and(is_not_yet), "{placed:?}");
        age(10);
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let read = Some(Source::of(&before, &bytes).unwrap());
        let copy = |read, bytes: &[u8]| Move {
            source: source.clone(),
            name: "1.a.host".into(),
            target: target.clone(),
            content: Some([b"X-Added: 1\n", bytes].concat()),
            read,
        };
        // Its writer goes on (a `cp` straight into new/): the half copy must not replace it.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&source)
            .unwrap();
        f.write_all(b"second half\n").unwrap();
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
        // Read again once written, it is filed.
        age(10);
        let before = std::fs::metadata(&source).unwrap();
        let bytes = std::fs::read(&source).unwrap();
        let read = Some(Source::of(&before, &bytes).unwrap());
        let placed = file_batch(&[copy(read, &bytes)], &inbox.join("new"), None);
        assert!(placed[0].is_ok(), "{placed:?}");
        assert!(!source.exists());
        assert!(
            std::fs::read(placed[0].as_ref().unwrap())
                .unwrap()
                .ends_with(b"second half\n")
        );
    }

    #[test]
    fn a_message_an_earlier_pass_placed_is_not_filed_again_under_another_name() {
        let dir = tempfile::tempdir().unwrap();
        let (inbox, target) = (dir.path().join("inbox"), dir.path().join("spam"));
        create_maildir(&inbox).unwrap();
        create_maildir(&target).unwrap();
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

    #[test]
    fn a_reader_marking_a_message_seen_while_it_is_filed_leaves_no_second_copy() {
        let dir = tempfile::tempdir().unwrap();
        let (inbox, target) = (dir.path().join("M"), dir.path().join("M/.Junk"));
        create_maildir(&inbox).unwrap();
        create_maildir(&target).unwrap();
        let source = inbox.join("new/1.a.host");
        std::fs::write(&source, "Subject: 1\n\nbody\n").unwrap();
        let filed = target.join("new/1.a.host");
        std::fs::hard_link(&source, &filed).unwrap();
        // The reader's rename, between the link and the daemon's unlink.
        std::fs::rename(&source, inbox.join("cur/1.a.host:2,S")).unwrap();
        // Another message of a name that starts alike, and one of the same name but other bytes.
        std::fs::write(inbox.join("cur/1.a.hostx:2,S"), "other").unwrap();
        remove_seen_twin(&inbox.join("new"), "1.a.host".as_ref(), &filed);
        assert!(!inbox.join("cur/1.a.host:2,S").exists());
        assert!(inbox.join("cur/1.a.hostx:2,S").exists());
        assert_eq!(std::fs::read(&filed).unwrap(), b"Subject: 1\n\nbody\n");
        std::fs::write(inbox.join("cur/1.a.host:2,S"), "a different message").unwrap();
        remove_seen_twin(&inbox.join("new"), "1.a.host".as_ref(), &filed);
        assert!(inbox.join("cur/1.a.host:2,S").exists());
    }

    #[test]
    fn a_copy_of_a_message_with_a_name_of_250_bytes_is_filed() {
        let dir = tempfile::tempdir().unwrap();
        let (inbox, target) = (dir.path().join("inbox"), dir.path().join("spam"));
        create_maildir(&inbox).unwrap();
        create_maildir(&target).unwrap();
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
