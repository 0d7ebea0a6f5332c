//! Messages named on the command line: files, mailboxes of any format, or `-` for one message
//! on standard input.

use anyhow::Context;
use spamsort::corpus::{CorpusError, Mailbox};
use spamsort::{Message, Source};
use std::io::Read;
use std::path::PathBuf;

/// A lazy stream of messages, one read at a time.
type Messages = Box<dyn Iterator<Item = Result<Message, CorpusError>> + Send>;

/// The first `head` bytes of every message of every input (`-`: standard input, read, and the
/// rest of it drained, before this returns, see [`read_stdin_head`]), read lazily, one message
/// at a time, so memory stays bounded by `head` however large the messages or mailboxes (for
/// commands that only tokenize; see `TokenizerConfig::head_bytes`); unreadable messages as
/// `Err` items. Every mailbox is opened first, so a path that cannot be opened fails before
/// any output.
pub fn message_heads(
    paths: &[PathBuf],
    head: u64,
) -> anyhow::Result<impl Iterator<Item = Result<Message, CorpusError>> + Send + use<>> {
    let mut inputs: Vec<Messages> = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            let message = Message {
                bytes: read_stdin_head(head)?,
                source: Source::file("-"),
            };
            inputs.push(Box::new(std::iter::once(Ok(message))));
        } else {
            inputs.push(Box::new(Mailbox::open(path)?.heads(head)));
        }
    }
    Ok(inputs.into_iter().flatten())
}

/// The first `head` bytes of standard input; the rest is read and dropped, so the writer
/// (a pipe) is not cut off with an error. Memory: `head` bytes (see [`stdin_buffer`]).
pub fn read_stdin_head(head: u64) -> anyhow::Result<Vec<u8>> {
    let mut stdin = std::io::stdin().lock();
    let mut buf = stdin_buffer(usize::try_from(head).unwrap_or(usize::MAX));
    (&mut stdin)
        .take(head)
        .read_to_end(&mut buf)
        .context("reading standard input")?;
    drain(&mut stdin)?;
    Ok(buf)
}

/// An empty buffer with room for the first `most` bytes of standard input, to read them
/// into without growing it. Grown by doubling as it fills, a buffer would take three times
/// its bound at its peak (the old half and the new whole while one is copied into the other,
/// with the smaller ones before them freed but not yet given back). The room is only
/// reserved: the allocator maps it, and pages not written to are not resident, so a short
/// message costs what it holds. A file (`< FILE`) gets no more room than its length, as
/// `corpus::read_regular` reads one. Where the room cannot be had the buffer starts empty, so
/// reading into it fails as it would (an error, not an abort: the pipe filter must still pass
/// the message through).
pub fn stdin_buffer(most: usize) -> Vec<u8> {
    let room = stdin_file_len()
        .and_then(|len| usize::try_from(len).ok())
        .map_or(most, |len| len.min(most));
    let mut buf = Vec::new();
    let _ = buf.try_reserve_exact(room);
    buf
}

/// Reads standard input to its end and drops it, in small chunks.
fn drain(stdin: &mut impl Read) -> anyhow::Result<()> {
    std::io::copy(stdin, &mut std::io::sink()).context("reading standard input")?;
    Ok(())
}

/// The length of standard input if it is a regular file.
fn stdin_file_len() -> Option<u64> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta.len())
}

/// Reads from `reader` into `buf` until the input ends or `buf` holds more than `limit` bytes;
/// true if the input ended (`buf` then holds all of it). On an error `buf` keeps what was read.
pub fn read_head(reader: &mut impl Read, limit: usize, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let want = limit.saturating_add(1).saturating_sub(buf.len()) as u64;
    let got = reader.take(want).read_to_end(buf)? as u64;
    Ok(got < want)
}

/// The message of a reading result; an unreadable one is reported on stderr, `failed` is set,
/// and `None` comes back so the caller goes on with the next.
pub fn readable<'m>(
    item: &'m Result<Message, CorpusError>,
    failed: &mut bool,
) -> Option<&'m Message> {
    match item {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!(
                "spamsort: {}",
                super::terminal::escape_for_terminal(&spamsort::error::ErrorChain(e).to_string())
            );
            *failed = true;
            None
        }
    }
}
