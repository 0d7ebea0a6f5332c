//! [`FileStamp`]: which state of a model file a long-running reader holds, so it can notice
//! that the file changed on disk (a `spamsort learn` appended to its journal, a `train` or
//! another learner's save replaced it) without reading it again.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One state of a file on disk as `stat` gives it: which file the path names (device and
/// inode: a save renames a new file over the path), its length (a learn appends to the
/// journal), and its modification and status-change times (a copy over it in place). Two
/// stamps of one path taken before and after a save, an append or a rewrite differ, except
/// for a rewrite in place to the same length within one tick of the file system's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileStamp {
    /// The stamp of the file `path` names now (symbolic links followed), or `None` if it
    /// cannot be looked up (missing, unreadable directory).
    pub fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_stamp_changes_with_an_append_a_replacement_and_a_removal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        std::fs::write(&path, b"sections").unwrap();
        let first = FileStamp::of(&path).unwrap();
        assert_eq!(FileStamp::of(&path), Some(first), "nothing changed");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(b"record").unwrap();
        let appended = FileStamp::of(&path).unwrap();
        assert_ne!(appended, first);
        // A save: a new file renamed over the path, of the same length.
        let new = dir.path().join("new");
        std::fs::write(&new, b"sectionsrecord").unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert_ne!(FileStamp::of(&path).unwrap(), appended);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(FileStamp::of(&path), None);
    }
}
