//! Opening files that must be regular files, without ever blocking: every reader of mail or
//! of a model file goes through here. A FIFO, device or socket where a message, mailbox, index
//! or model file is expected would otherwise hang `open` (a FIFO without a writer) or `read`
//! (a terminal, a FIFO whose writer never writes) forever, or stream without end
//! (`/dev/zero`). Such paths are refused with an [`std::io::ErrorKind::InvalidInput`] error
//! whose message says what the path is instead; callers add the path.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` read-only if it is a regular file (symbolic links followed); see
/// [`open_regular_with`].
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_with(OpenOptions::new().read(true), path)
}

/// Opens `path` with `options` (which may create the file) if it is a regular file, never
/// blocking: the type is checked before opening (so a device is not even opened, nor a FIFO
/// that would block the open), then the file is opened with `O_NONBLOCK` and checked again on
/// the open descriptor (so a path swapped for a FIFO in between is refused too). `O_NONBLOCK`
/// changes nothing for a regular file, so the file is returned as opened.
pub fn open_regular_with(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    open_checked(options, path).map(|(file, _)| file)
}

/// [`open_regular_with`], with the open file's length (from the check on its descriptor).
fn open_checked(options: &mut OpenOptions, path: &Path) -> io::Result<(File, u64)> {
    // Nothing there is left to `open`, which fails or creates the file as `options` say.
    refuse_irregular_at(path)?;
    // O_NOCTTY: a terminal opened by mistake must not become the controlling terminal.
    let file = options
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    refuse_irregular(&meta)?;
    Ok((file, meta.len()))
}

/// Fails as [`open_regular_with`] does unless `path` (symbolic links followed) is a regular
/// file or names nothing: for a caller that makes other files for it first (a lock beside it),
/// so a directory or FIFO in its place is refused before anything is created.
pub fn refuse_irregular_at(path: &Path) -> io::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) => refuse_irregular(&meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// All bytes of the regular file at `path`, at most `limit` of them: a longer file is an
/// [`std::io::ErrorKind::FileTooLarge`] error, read no further than `limit + 1` bytes.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let bytes = read_regular_head(path, limit.saturating_add(1))?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

/// The first `most` bytes of the regular file at `path` (all of it, if it is shorter), read
/// into room for them from the start: a message read from nothing grew its buffer about seven
/// times.
pub fn read_regular_head(path: &Path, most: u64) -> io::Result<Vec<u8>> {
    let (file, len) = open_checked(OpenOptions::new().read(true), path)?;
    // The length is a hint only (the file may grow or shrink while read); `take` is the bound.
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(most)).unwrap_or(0));
    file.take(most).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn refuse_irregular(meta: &std::fs::Metadata) -> io::Result<()> {
    let t = meta.file_type();
    let what = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file: refused"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        // Without a writer, a blocking open of a FIFO would never return.
        let err = open_regular(&fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("FIFO"), "{err}");
        let err = open_regular_with(OpenOptions::new().write(true).create(true), &fifo);
        assert_eq!(err.unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert!(read_regular(&fifo, 10).is_err());
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for path in [Path::new("/dev/zero"), Path::new("/dev/null"), dir.path()] {
            let err = read_regular(path, 10).unwrap_err();
            assert_eq!(
                err.kind(),
                io::ErrorKind::InvalidInput,
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn regular_files_are_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_regular(&path, 10).unwrap(), b"0123456789");
        let err = read_regular(&path, 9).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_regular(&link, 10).unwrap(), b"0123456789");
    }
}
