//! Messages named on the command line: files, mailboxes of any format, or `-` for one message
//! on standard input.

use anyhow::Context;
use spamsort::corpus::{CorpusError, MAX_MESSAGE_BYTES, Mailbox};
use spamsort::{Message, Source};
use std::io::Read;
use std::path::PathBuf;

/// A lazy stream of messages, one read at a time.
type Messages = Box<dyn Iterator<Item = Result<Message, CorpusError>> + Send>;

/// Every message of every input, in order, read one at a time as the stream is taken, so
/// memory holds one message (at most [`MAX_MESSAGE_BYTES`]) however many there are;
/// unreadable ones, and longer ones, as `Err` items. Every mailbox is opened, and standard
/// input read (see [`read_stdin`]), before this returns, so a path that cannot be opened fails
/// before any message is read.
pub fn messages(
    paths: &[PathBuf],
) -> anyhow::Result<impl Iterator<Item = Result<Message, CorpusError>> + Send + use<>> {
    inputs(paths, None)
}

/// The first `head` bytes of every message of every input, read lazily, one message at a time,
/// so memory stays bounded by `head` however large the messages or mailboxes (for commands that
/// only tokenize; see `TokenizerConfig::head_bytes`). Every mailbox is opened first, so a path
/// that cannot be opened fails before any output.
pub fn message_heads(
    paths: &[PathBuf],
    head: u64,
) -> anyhow::Result<impl Iterator<Item = Result<Message, CorpusError>> + Send + use<>> {
    inputs(paths, Some(head))
}

/// [`messages`], or with `head` [`message_heads`].
fn inputs(
    paths: &[PathBuf],
    head: Option<u64>,
) -> anyhow::Result<impl Iterator<Item = Result<Message, CorpusError>> + Send + use<>> {
    let mut inputs: Vec<Messages> = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            let message = match head {
                Some(head) => Ok(Message {
                    bytes: read_stdin_head(head)?,
                    source: Source::file("-"),
                }),
                None => read_stdin()?,
            };
            inputs.push(Box::new(std::iter::once(message)));
        } else {
            let mailbox = Mailbox::open(path)?;
            inputs.push(match head {
                Some(head) => Box::new(mailbox.heads(head)),
                None => Box::new(mailbox),
            });
        }
    }
    Ok(inputs.into_iter().flatten())
}

/// The first `head` bytes of standard input; the rest is read and dropped, so the writer
/// (a pipe) is not cut off with an error.
pub fn read_stdin_head(head: u64) -> anyhow::Result<Vec<u8>> {
    let mut stdin = std::io::stdin().lock();
    let mut buf = Vec::new();
    (&mut stdin)
        .take(head)
        .read_to_end(&mut buf)
        .context("reading standard input")?;
    std::io::copy(&mut stdin, &mut std::io::sink()).context("reading standard input")?;
    Ok(buf)
}

/// Standard input as one message, at most [`MAX_MESSAGE_BYTES`], as a message file is read: a
/// longer one is a [`CorpusError::TooLarge`] item naming standard input, read no further than
/// the byte past the limit (the rest is left unread: draining input without end would never
/// finish).
fn read_stdin() -> anyhow::Result<Result<Message, CorpusError>> {
    let limit = usize::try_from(MAX_MESSAGE_BYTES).unwrap_or(usize::MAX);
    // A file (`< FILE`) is read into room for all of it, as `corpus::read_regular` reads one:
    // grown by doubling, a buffer of the limit would take three times it at its peak (with the
    // smaller ones before it, freed but not yet given back).
    let len = stdin_file_len().unwrap_or(0);
    let room = usize::try_from(len)
        .unwrap_or(limit)
        .min(limit.saturating_add(1));
    let mut bytes = Vec::with_capacity(room);
    if !read_head(&mut std::io::stdin().lock(), limit, &mut bytes)
        .context("reading standard input")?
    {
        return Ok(Err(CorpusError::TooLarge {
            message: Source::file("standard input"),
            limit: MAX_MESSAGE_BYTES,
        }));
    }
    Ok(Ok(Message {
        bytes,
        source: Source::file("-"),
    }))
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
