//! Messages named on the command line: files, mailboxes of any format, or `-` for one message
//! on standard input.

use anyhow::Context;
use spamsort::corpus::{CorpusError, Mailbox};
use spamsort::{Message, Source};
use std::io::Read;
use std::path::PathBuf;

/// Every message of every input, in order; unreadable ones as `Err` items.
pub fn messages(paths: &[PathBuf]) -> anyhow::Result<Vec<Result<Message, CorpusError>>> {
    let mut out = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            out.push(Ok(Message {
                bytes: read_stdin()?,
                source: Source::file("-"),
            }));
        } else {
            out.extend(Mailbox::open(path)?);
        }
    }
    Ok(out)
}

/// The first `head` bytes of every message of every input, read lazily, one message at a time,
/// so memory stays bounded by `head` however large the messages or mailboxes (for commands that
/// only tokenize; see `TokenizerConfig::head_bytes`). Every mailbox is opened first, so a path
/// that cannot be opened fails before any output.
pub fn message_heads(
    paths: &[PathBuf],
    head: u64,
) -> anyhow::Result<impl Iterator<Item = Result<Message, CorpusError>> + Send + use<>> {
    let mut inputs: Vec<Box<dyn Iterator<Item = Result<Message, CorpusError>> + Send>> = Vec::new();
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

/// All of standard input.
pub fn read_stdin() -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut buf)
        .context("reading standard input")?;
    Ok(buf)
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
