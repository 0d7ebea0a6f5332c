//! Reading an mbox under the locks its writers take. A delivery agent appending a message
//! (Postfix's local(8), procmail, mutt) holds an `fcntl` write lock on the file and a dot-lock
//! file beside it (`NAME.lock`); a reader that went on meanwhile would read the message half
//! written, learn it cut off, and learn it whole as another message the next time.
//! [`wait_for_writers`] takes a shared `fcntl` lock, which the reader keeps while it reads (so
//! no writer that takes the `fcntl` lock starts meanwhile; one that takes only a dot-lock or
//! `flock` is not kept out), once no fresh dot-lock is there: waiting a bounded time, never
//! hanging on a lock a program left behind.

use super::CorpusError;
use rustix::fs::{FlockOperation, fcntl_lock};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How long a reader waits for a mailbox's writer (a delivery takes milliseconds).
pub(crate) const WRITER_WAIT: Duration = Duration::from_secs(10);

/// A dot-lock older than this is one a crashed program left behind, and is ignored (as
/// mutt and procmail take over a stale one).
const STALE_DOT_LOCK: Duration = Duration::from_secs(300);

/// How often a waiting reader looks again.
const POLL: Duration = Duration::from_millis(20);

/// Waits, at most `wait`, until no writer holds the mailbox `file` (at `path`), and takes a
/// shared `fcntl` lock on it, released when `file` is closed. A file system that cannot lock
/// (`ENOLCK`, some network mounts) is read unlocked, as before. An error names the file when
/// a writer still holds it after `wait`.
pub(crate) fn wait_for_writers(
    file: &std::fs::File,
    path: &Path,
    wait: Duration,
) -> Result<(), CorpusError> {
    let deadline = Instant::now() + wait;
    let dot_lock = dot_lock_of(path);
    loop {
        // While the dot-lock is there, the shared lock is not taken: a writer holding the
        // dot-lock may be waiting for its `fcntl` lock.
        if !fresh(&dot_lock) {
            match fcntl_lock(file, FlockOperation::NonBlockingLockShared) {
                Ok(()) => return Ok(()),
                Err(e) if e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::ACCESS => {}
                // No locking here: read as before.
                Err(_) => return Ok(()),
            }
        }
        if Instant::now() >= deadline {
            return Err(CorpusError::Locked {
                path: path.to_path_buf(),
                waited: wait,
            });
        }
        std::thread::sleep(POLL);
    }
}

/// The dot-lock of the mailbox at `path`: its name with `.lock` added.
fn dot_lock_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Whether the dot-lock at `path` exists and is not stale: changed less than
/// [`STALE_DOT_LOCK`] ago, or as far ahead (a clock set back, or a lock restored from a
/// backup, is no writer at work).
fn fresh(path: &Path) -> bool {
    let Ok(modified) = std::fs::symlink_metadata(path).and_then(|m| m.modified()) else {
        return false;
    };
    let age = match SystemTime::now().duration_since(modified) {
        Ok(age) => age,
        Err(ahead) => ahead.duration(),
    };
    age < STALE_DOT_LOCK
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh dot-lock makes the reader wait, and give up with an error after the wait; a
    /// stale one (old, or dated far ahead) is ignored; with none the shared lock is taken at
    /// once.
    #[test]
    fn a_fresh_dot_lock_holds_the_reader_a_bounded_time_and_a_stale_one_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox");
        std::fs::write(&path, b"From a Mon Jan  1 00:00:00 2024\n\nx\n").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert!(wait_for_writers(&file, &path, Duration::ZERO).is_ok());
        let lock = dir.path().join("inbox.lock");
        std::fs::write(&lock, b"").unwrap();
        let err = wait_for_writers(&file, &path, Duration::from_millis(50)).unwrap_err();
        assert!(matches!(err, CorpusError::Locked { .. }), "{err}");
        assert!(err.to_string().contains("held the mailbox locked"), "{err}");
        let dated = |when: SystemTime| {
            let lock = std::fs::File::options().write(true).open(&lock).unwrap();
            lock.set_modified(when).unwrap();
        };
        dated(SystemTime::now() - STALE_DOT_LOCK - Duration::from_secs(1));
        assert!(wait_for_writers(&file, &path, Duration::ZERO).is_ok());
        dated(SystemTime::now() + STALE_DOT_LOCK + Duration::from_secs(60));
        assert!(wait_for_writers(&file, &path, Duration::ZERO).is_ok());
    }
}
