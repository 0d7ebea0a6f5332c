//! Whether another process still has a message file open for writing: a message written
//! straight into the inbox's `new/` (a `cp`, an MDA that skips `tmp/`) may be read half
//! written, and filing a *copy* of it (`--add-headers`, or a target on another file system)
//! then removing it would lose the rest, which its writer goes on writing into the unlinked
//! file however long it paused. A hard link keeps the writer's file, so only copies ask.
//!
//! The kernel knows, and says so through a read lease (`fcntl(F_SETLEASE, F_RDLCK)`, Linux):
//! it is refused with `EAGAIN` while any process has the file open for writing (or mapped
//! writable), and granted otherwise; it is released at once. No safe crate offers leases
//! (rustix and nix do not), hence the one `unsafe` call of the library, below. A process may
//! take a lease only on a file it owns (or with `CAP_LEASE`, as root), and the answer means
//! that only on a local file system, where the kernel sees every open: an NFS v4 or SMB
//! client refuses a lease with the same `EAGAIN` whenever the server gave it no delegation or
//! oplock, whoever writes. So leases are asked only on the local file systems listed in
//! [`LOCAL_FILE_SYSTEMS`]; elsewhere (and for another user's file) the answer is "cannot
//! tell", and the caller goes by the file's age alone (which it asks in any case: a writer
//! that opens the file anew for each part holds nothing open in between).
//!
//! While a lease is held, a process opening the file for writing makes the kernel signal the
//! holder (`SIGIO`, whose default action ends the process) and waits for it to let go. So a
//! lease is taken only once a handler that does nothing is installed for `SIGIO` (safe code,
//! through signal-hook, as for `SIGXFSZ`), and let go right after it was granted.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::OnceLock;

/// The `statfs` magic numbers of the file systems whose leases answer for every writer: local
/// ones, where the kernel itself sees each open (`<linux/magic.h>`): ext2/3/4, XFS, Btrfs,
/// tmpfs, ramfs, overlayfs, F2FS, ZFS, bcachefs, JFS, ReiserFS, NILFS.
const LOCAL_FILE_SYSTEMS: [u32; 12] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0x8584_58F6,
    0x794C_7630,
    0xF2F5_2010,
    0x2FC1_2FC1,
    0xCA45_1A4E,
    0x3153_464A,
    0x5265_4973,
    0x3434,
];

/// True if `file` lies on one of the [`LOCAL_FILE_SYSTEMS`].
fn on_local_file_system(file: &std::fs::File) -> bool {
    rustix::fs::fstatfs(file).is_ok_and(|fs| {
        // The magic numbers are 32 bits wide; `f_type` is a signed word on some targets.
        #[allow(clippy::unnecessary_cast)]
        let magic = fs.f_type as u64 as u32;
        LOCAL_FILE_SYSTEMS.contains(&magic)
    })
}

/// True once a handler that does nothing is installed for `SIGIO` (installed at the first
/// call), so that a broken lease cannot end the process; false if it could not be.
fn lease_breaks_handled() -> bool {
    static HANDLED: OnceLock<bool> = OnceLock::new();
    *HANDLED.get_or_init(|| {
        let unread = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        match signal_hook::flag::register(signal_hook::consts::SIGIO, unread) {
            Ok(_) => true,
            Err(e) => {
                tracing::debug!("no SIGIO handler, so no leases: {e}");
                false
            }
        }
    })
}

/// `Some(true)` if a process has the regular file at `path` open for writing now,
/// `Some(false)` if none has, `None` if the kernel will not say (see the module docs: another
/// user's file, a file system not known to be local, no `SIGIO` handler) or the file cannot be
/// opened.
pub(super) fn open_for_writing(path: &Path) -> Option<bool> {
    if !lease_breaks_handled() {
        return None;
    }
    // Read-only (a read lease needs it), never blocking on a FIFO, never following a link.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() || !on_local_file_system(&file) {
        return None;
    }
    match set_lease(&file, libc::F_RDLCK) {
        Ok(()) => {
            // Closing the file lets go of the lease too; this only says so at once.
            let _ = set_lease(&file, libc::F_UNLCK);
            Some(false)
        }
        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Some(true),
        Err(_) => None,
    }
}

/// `fcntl(file, F_SETLEASE, lease)`.
#[allow(unsafe_code)]
fn set_lease(file: &std::fs::File, lease: libc::c_int) -> std::io::Result<()> {
    // SAFETY: F_SETLEASE takes an int argument and reads or writes no memory of the caller;
    // the descriptor is open for the whole call, as `file` is borrowed.
    let done = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, lease) };
    if done == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// [`open_for_writing`] of a file whose writer just closed it, asked again for a moment
    /// while it says `Some(true)`: a process another test thread spawns shares the writer's
    /// descriptor between its fork and its exec.
    pub(in crate::daemon) fn no_writer_soon(path: &Path) -> Option<bool> {
        for _ in 0..500 {
            match open_for_writing(path) {
                Some(true) => std::thread::sleep(std::time::Duration::from_millis(2)),
                other => return other,
            }
        }
        Some(true)
    }

    #[test]
    fn a_file_open_for_writing_is_told_from_one_that_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("message");
        std::fs::write(&path, b"Subject: x\n\nbody\n").unwrap();
        let Some(idle) = open_for_writing(&path) else {
            eprintln!("skipped: this file system or user cannot take leases");
            return;
        };
        assert!(!idle, "no writer yet");
        let writer = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        assert_eq!(open_for_writing(&path), Some(true));
        // A reader is no writer.
        let _reader = std::fs::File::open(&path).unwrap();
        drop(writer);
        assert_eq!(no_writer_soon(&path), Some(false));
        // Asked twice, the lease let go in between.
        assert_eq!(open_for_writing(&path), Some(false));
        assert_eq!(open_for_writing(&dir.path().join("absent")), None);
    }
}
