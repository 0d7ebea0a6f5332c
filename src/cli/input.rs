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
/// `Err` items. Every path is looked at first (its format detected), so one that is not there
/// fails before any output; each mailbox is then opened only when its turn comes and closed
/// when it is read, so a run holds one open (and an mbox locked against its writers) at a
/// time: opened all at once, a thousand mailboxes ran out of file descriptors (`classify
/// ~/Mail/*.mbox`: "Too many open files", nothing classified) and every mbox stayed locked,
/// its deliveries waiting, until the whole run ended. One that cannot be opened when its turn
/// comes (a writer holding it past the wait) is an `Err` item.
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
            spamsort::corpus::MailboxFormat::detect(path)?;
            let path = path.clone();
            let opened = std::iter::once(()).flat_map(move |()| -> Messages {
                match Mailbox::open(&path) {
                    Ok(mailbox) => Box::new(mailbox.heads(head)),
                    Err(e) => Box::new(std::iter::once(Err(e))),
                }
            });
            inputs.push(Box::new(opened));
        }
    }
    Ok(inputs.into_iter().flatten())
}

/// Fails if `path` is a TREC index that lists a message of another class than `label`: an
/// index keeps its own labels, as `train` reads it, so `learn --spam INDEX` of an index that
/// lists ham is refused before anything is learned (it learned every message listed as spam).
/// A path that cannot be looked at is left to [`message_heads`] to report.
pub fn refuse_other_class(path: &std::path::Path, label: spamsort::Label) -> anyhow::Result<()> {
    use spamsort::corpus::{MailboxFormat, trec};
    if path.as_os_str() == "-"
        || !matches!(MailboxFormat::detect(path), Ok(MailboxFormat::TrecIndex))
    {
        return Ok(());
    }
    trec::read_index(path)?.check_class(label)?;
    Ok(())
}

/// The first `head` bytes of standard input; the rest is read and dropped, so the writer
/// (a pipe) is not cut off with an error. Memory: `head` bytes (see [`stdin_buffer`]).
pub fn read_stdin_head(head: u64) -> anyhow::Result<Vec<u8>> {
    let mut stdin = super::waiting::Waiting(std::io::stdin().lock());
    let head = usize::try_from(head).unwrap_or(usize::MAX);
    let mut buf = stdin_buffer(head);
    if let Some(limit) = head.checked_sub(1) {
        read_head(&mut stdin, limit, &mut buf)
            .map_err(|e| e.error)
            .context("reading standard input")?;
    }
    drain(&mut stdin)?;
    Ok(buf)
}

/// An empty buffer for the first `most` bytes of standard input. A file (`< FILE`) gets room
/// for all of it up front (no more than `most`), as `corpus::read_regular` reads one, so
/// [`read_head`] reads it without growing the buffer. A pipe gets none: [`read_head`] grows
/// the buffer as bytes come, never past `most`. Room for `most` reserved up front for a pipe
/// (64 MiB and a byte for `learn -`, the `--max-size` for the pipe filter) would take that much
/// address space for every message, however short: under a mail server's memory limit
/// (`RLIMIT_AS`, say 70 MB) it left too little for classifying a short message, and the filter
/// aborted on an allocation failure instead of marking the message or passing it through.
/// Where the room for a file cannot be had the buffer starts empty, and reading grows it as
/// for a pipe (an error, not an abort, where that fails too).
pub fn stdin_buffer(most: usize) -> Vec<u8> {
    let room = stdin_file_len()
        .and_then(|len| usize::try_from(len).ok())
        .map_or(0, |len| len.min(most));
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

/// How far [`read_head`] grows a buffer step by step: past it, to its limit at once.
const SMALL_INPUT: usize = 1 << 20;

/// Reads from `reader` into `buf` until the input ends or `buf` holds more than `limit` bytes;
/// true if the input ended (`buf` then holds all of it). On an error `buf` keeps what was read.
/// A full `buf` grows only once more bytes came, so a buffer with room for its whole input
/// (see [`stdin_buffer`]) is never grown; and never past `limit` and a byte (grown by
/// `read_to_end`'s doubling, the room for a limit and a byte was twice the limit, all of it
/// touched). Up to [`SMALL_INPUT`] it grows four times at a time: a message on a pipe,
/// usually a few kilobytes, takes address space for what it holds, not for the limit. Past
/// that it grows to the limit at once: the allocator keeps the pages of the buffers grown out
/// of, so growing step by step to 64 MiB would hold half as much again (learn - of 64 MiB and
/// a byte: 158 MB resident, against 71 MB); where that room cannot be had (a memory limit),
/// by doubling. A buffer that cannot grow is an error
/// ([`std::io::ErrorKind::OutOfMemory`]), not an abort, which holds the bytes read last that
/// the buffer could not take ([`HeadError::unheld`]): `buf` and they are all that was read.
// The error holds the bytes read last by value: boxing them would allocate, and it is made
// where memory ran short.
#[allow(clippy::result_large_err)]
pub fn read_head(
    reader: &mut impl Read,
    limit: usize,
    buf: &mut Vec<u8>,
) -> Result<bool, HeadError> {
    let most = limit.saturating_add(1);
    while buf.len() < most {
        let want = most - buf.len();
        if buf.len() == buf.capacity() {
            // Full: a few bytes first, so a buffer that holds its whole input is not grown to
            // find its end.
            let mut probe = [0; PROBE_BYTES];
            let n = match reader.read(&mut probe[..want.min(PROBE_BYTES)]) {
                Ok(0) => return Ok(true),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(HeadError::of(error)),
            };
            // Past a small input, the limit at once if there is room for it; else (a memory
            // limit) doubling, as far as there is room.
            let large = buf.capacity() >= SMALL_INPUT;
            let step = buf.capacity().saturating_mul(if large { 2 } else { 4 });
            let step = step.max(64 << 10);
            let at_once = large && buf.try_reserve_exact(want).is_ok();
            if !at_once {
                let room = step.min(buf.len().saturating_add(want)) - buf.len();
                if buf.try_reserve_exact(room).is_err() {
                    // Read already: handed back, so the caller loses none of the input.
                    return Err(HeadError {
                        error: std::io::ErrorKind::OutOfMemory.into(),
                        probe,
                        len: n,
                    });
                }
            }
            buf.extend_from_slice(&probe[..n]);
            continue;
        }
        // Read into the room there is, and no further: `read_to_end` grows a full buffer by
        // doubling.
        let room = (buf.capacity() - buf.len()).min(want);
        match (&mut *reader).take(room as u64).read_to_end(buf) {
            Ok(n) if n < room => return Ok(true),
            Ok(_) => {}
            Err(error) => return Err(HeadError::of(error)),
        }
    }
    Ok(false)
}

/// How much [`read_head`] reads of a full buffer's input before growing the buffer.
const PROBE_BYTES: usize = 8192;

/// Why [`read_head`] failed, with the bytes it had read and the buffer could not take.
#[derive(Debug)]
pub struct HeadError {
    /// What failed: reading, or growing the buffer ([`std::io::ErrorKind::OutOfMemory`]).
    pub error: std::io::Error,
    probe: [u8; PROBE_BYTES],
    len: usize,
}

impl HeadError {
    fn of(error: std::io::Error) -> HeadError {
        HeadError {
            error,
            probe: [0; PROBE_BYTES],
            len: 0,
        }
    }

    /// The bytes read after those in the buffer, which it could not take: they come next.
    pub fn unheld(&self) -> &[u8] {
        &self.probe[..self.len]
    }
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
            super::say(format_args!(
                "spamsort: {}",
                super::terminal::escape_for_terminal(&spamsort::error::ErrorChain(e).to_string())
            ));
            *failed = true;
            None
        }
    }
}
