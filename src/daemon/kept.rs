//! The record of ham left in place: when the inbox is the ham folder, the daemon leaves ham in
//! the inbox's `new/` (where mail programs look for new mail) under its own name, and remembers
//! it here so that it is never classified again, in this run or after a restart or a crash.
//!
//! The record is the file `spamsort-kept` in the inbox's root (beside dovecot's own
//! `dovecot-uidlist`), one file name a line (its bytes, UTF-8 or not), rewritten atomically
//! (`spamsort-kept.new`, fsync, rename) after each batch that keeps ham. Its bound: it holds only names still in the inbox's
//! `new/` (a message read or deleted there is forgotten at the next write), so it is at most one
//! line of at most 256 bytes per message waiting in `new/`; it is read up to
//! [`MAX_RECORD_BYTES`]. Losing it costs no mail: ham not on record is classified again and
//! stays in place (or moves to spam if the model has changed its mind).

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The record's file name in the inbox's root.
pub const RECORD_NAME: &str = "spamsort-kept";

/// How much of the record is read (some 250,000 names); beyond it names are forgotten.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// The names of the inbox messages left in place as ham (file names, whatever their bytes).
#[derive(Debug)]
pub(super) struct KeptRecord {
    path: PathBuf,
    names: HashSet<OsString>,
}

impl KeptRecord {
    /// Reads the record of the inbox `inbox` (none yet: empty). A last line without its
    /// newline (a record cut at [`MAX_RECORD_BYTES`]) is ignored. Anything there but a
    /// regular file (a FIFO, which would block the open) is refused, never waited on.
    pub fn load(inbox: &Path) -> std::io::Result<KeptRecord> {
        let path = inbox.join(RECORD_NAME);
        let names = read_record(&path, MAX_RECORD_BYTES)?
            .unwrap_or_default()
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| OsString::from_vec(l.to_vec()))
            .collect();
        Ok(KeptRecord { path, names })
    }

    /// True if the message named `name` in the inbox's `new/` was kept as ham.
    pub fn contains(&self, name: &OsStr) -> bool {
        self.names.contains(name)
    }

    /// Forgets the names not in `present` (the inbox's `new/` now), in memory only: the next
    /// [`KeptRecord::keep`] writes it.
    pub fn retain_present(&mut self, present: &HashSet<&OsStr>) {
        self.names.retain(|n| present.contains(n.as_os_str()));
    }

    /// Adds `names` and writes the record atomically. A name holding a newline cannot be a
    /// line: it is remembered for this run only.
    pub fn keep<'a>(&mut self, names: impl IntoIterator<Item = &'a OsStr>) -> crate::Result<()> {
        let before = self.names.len();
        self.names
            .extend(names.into_iter().map(OsStr::to_os_string));
        if self.names.len() == before && self.path.exists() {
            return Ok(());
        }
        let mut sorted: Vec<&[u8]> = (self.names.iter())
            .map(|n| n.as_bytes())
            .filter(|n| !n.contains(&b'\n'))
            .collect();
        sorted.sort();
        let mut text = Vec::with_capacity(sorted.iter().map(|n| n.len() + 1).sum());
        for n in sorted {
            text.extend_from_slice(n);
            text.push(b'\n');
        }
        write_record(&self.path, &text).map_err(|source| crate::Error::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// The lines of the daemon's record file `path` (this one, or the tracker's, see `moves.rs`),
/// read up to `max_bytes`, without the last newline; `None` if there is no such file. A last
/// line without its newline (a record cut at `max_bytes`) is dropped. Anything there but a
/// regular file (a FIFO, which would block the open) is refused, never waited on.
pub(super) fn read_record(path: &Path, max_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    match crate::corpus::open_regular(path) {
        Ok(f) => f.take(max_bytes).read_to_end(&mut bytes)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    bytes.truncate(bytes.iter().rposition(|&b| b == b'\n').unwrap_or(0));
    Ok(Some(bytes))
}

/// Replaces the daemon's record file `path` (this one, or the tracker's, see `moves.rs`) with
/// `bytes` atomically. The temporary file has a fixed name (`NAME.new`, not a random one as
/// `model_file::save_bytes` makes) so that a crash leaves at most one, which the next write
/// removes and makes afresh, in a folder mail programs read: whatever has that name (a FIFO,
/// which an open would wait on) is removed, and the file is made anew or not at all.
pub(super) fn write_record(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("new");
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    match path.parent() {
        Some(dir) => super::deliver::sync_dir(dir),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_names_survive_a_restart_and_names_gone_from_new_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = KeptRecord::load(dir.path()).unwrap();
        let name = |n: &'static str| OsStr::new(n);
        assert!(!r.contains(name("1.a")));
        let not_utf8 = OsStr::from_bytes(b"4.\xff");
        r.keep([name("1.a"), name("2.b"), name("bad\nname"), not_utf8])
            .unwrap();
        assert!(r.contains(name("bad\nname")), "remembered in this run");
        let mut r = KeptRecord::load(dir.path()).unwrap();
        assert!(r.contains(name("1.a")) && r.contains(name("2.b")) && r.contains(not_utf8));
        assert!(!r.contains(name("bad\nname")) && !r.contains(name("bad")));
        // 1.a was read (moved to cur/): forgotten at the next write.
        r.retain_present(&[name("2.b"), name("3.c"), not_utf8].into_iter().collect());
        r.keep([name("3.c")]).unwrap();
        let text = std::fs::read(dir.path().join(RECORD_NAME)).unwrap();
        assert_eq!(text, b"2.b\n3.c\n4.\xff\n");
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(files.len(), 1, "no temporary file left: {files:?}");
    }

    #[test]
    fn a_fifo_in_place_of_the_record_or_its_temporary_file_is_never_waited_on() {
        // Opening either blocked the daemon for good, before its first word or past SIGTERM.
        let dir = tempfile::tempdir().unwrap();
        let fifo = |name: &str| {
            let path = dir.path().join(name);
            rustix::fs::mkfifoat(rustix::fs::CWD, &path, rustix::fs::Mode::RWXU).unwrap();
            path
        };
        let record = fifo(RECORD_NAME);
        let refused = KeptRecord::load(dir.path()).unwrap_err();
        assert!(
            refused.to_string().contains("not a regular file"),
            "{refused}"
        );
        std::fs::remove_file(&record).unwrap();
        let mut r = KeptRecord::load(dir.path()).unwrap();
        fifo(&format!("{RECORD_NAME}.new"));
        r.keep([OsStr::new("1.a")]).unwrap();
        assert!(
            KeptRecord::load(dir.path())
                .unwrap()
                .contains(OsStr::new("1.a"))
        );
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(files.len(), 1, "the FIFO is gone: {files:?}");
    }

    #[test]
    fn a_record_line_cut_short_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RECORD_NAME), "1.a\n2.b").unwrap();
        let r = KeptRecord::load(dir.path()).unwrap();
        assert!(r.contains(OsStr::new("1.a")));
        assert!(!r.contains(OsStr::new("2.b")) && !r.contains(OsStr::new("2.")));
    }
}
