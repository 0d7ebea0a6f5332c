//! Mailbox readers. Every format yields the same thing: raw message bytes, never modified,
//! plus where they came from. Unreadable messages come out as `Err` items naming the path, so
//! a caller can report and skip them; only a mailbox that cannot be opened at all is fatal.
//!
//! Formats: [`maildir`] (two of `cur/`, `new/`, `tmp/`), [`mh`] (a directory tree of one-message files),
//! [`mbox`] (mboxo / mboxrd, LF or CRLF) and [`trec`] (TREC spam-track index files). The format
//! is detected from the path by [`MailboxFormat::detect`]. [`header_block`] finds where a
//! message's header fields end and its body starts, for every reader of header fields.
//! [`LabeledMail`] reads spam and ham mailboxes as one stream of labeled messages (what `train`
//! reads, one window at a time), [`LabeledCorpus`] holds such a stream whole.

pub mod header_block;
mod labeled;
pub mod maildir;
pub mod mbox;
mod mbox_lock;
pub mod mh;
pub mod regular_file;
pub mod trec;

use crate::label::Label;
use std::fmt;
use std::path::{Path, PathBuf};

pub(crate) use labeled::file_id;
pub use labeled::{LabeledCorpus, LabeledMail};
pub use regular_file::{open_regular, read_regular, read_regular_head};

/// Messages larger than this are reported and skipped by the readers, so one absurd file
/// cannot exhaust memory. Real mail is far smaller; spam filters look at the first part only.
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// Errors from reading mailboxes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// A file or directory could not be read (why is the [`source`](std::error::Error::source)).
    #[error("{path}")]
    Io {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A message is larger than [`MAX_MESSAGE_BYTES`].
    // What becomes of the message is for the caller to say: `train` and `eval` print
    // "skipped: " before this, which the text once said again.
    #[error("{message}: message larger than {limit} bytes")]
    TooLarge {
        /// Which message.
        message: Source,
        /// The limit in bytes.
        limit: u64,
    },
    /// A line of a TREC index is not `spam PATH` or `ham PATH`.
    #[error("{path}:{line}: expected `spam PATH` or `ham PATH`, got {text:?}")]
    BadIndexLine {
        /// The index file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending line (truncated).
        text: String,
    },
    /// The same mailbox was given as spam and as ham.
    #[error(
        "{spam} (spam) and {ham} (ham) are the same mailbox: give spam and ham in separate mailboxes"
    )]
    SameMailbox {
        /// The mailbox as given for spam.
        spam: PathBuf,
        /// The mailbox as given for ham.
        ham: PathBuf,
    },
    /// One message file was read as spam and as ham (the mailboxes overlap).
    #[error(
        "{ham} would be both spam (read as {spam}) and ham: the spam and ham mailboxes overlap; give each message one label"
    )]
    InBothClasses {
        /// The file as read for spam.
        spam: Source,
        /// The same file as read for ham.
        ham: Source,
    },
    /// A TREC index given as the mail of one class lists a message as the other class.
    #[error(
        "{index}: the TREC index lists {message} as {listed}, but the index was given as {given}: an index keeps its own labels, so give --{given} only an index of {given} (or the whole index to `spamsort eval --online`)"
    )]
    IndexLabelDisagrees {
        /// The index file.
        index: PathBuf,
        /// The message it lists with the other label.
        message: PathBuf,
        /// The label the index gives it.
        listed: Label,
        /// The class the index was given as.
        given: Label,
    },
    /// The labeled mail has no message of one class (training needs both).
    #[error("at least one spam and one ham message are needed (found {spam} spam, {ham} ham)")]
    OneClassOnly {
        /// Spam messages read.
        spam: u64,
        /// Ham messages read.
        ham: u64,
    },
    /// The path is neither a mailbox directory nor a message file.
    #[error("{path}: not a maildir, message directory, mbox, TREC index or message file")]
    UnknownFormat {
        /// The path given.
        path: PathBuf,
    },
    /// Another program held the mailbox locked (writing to it) for as long as a reader waits.
    #[error(
        "{path}: another program has held the mailbox locked for {seconds} s (a delivery in progress?); try again",
        seconds = waited.as_secs_f64()
    )]
    Locked {
        /// The mailbox.
        path: PathBuf,
        /// How long the reader waited.
        waited: std::time::Duration,
    },
    /// A message holds nothing but white space ([`is_blank`]): no mail, which labeled mail
    /// leaves out rather than count as a message of its class (a file a failed delivery left
    /// empty, two envelope lines in a row in an mbox).
    #[error("{message}: no mail (nothing but white space)")]
    Empty {
        /// Which message.
        message: Source,
    },
    /// The file is an MMDF mailbox, which is not read (rather than taken for one message).
    #[error(
        "{path}: an MMDF mailbox (messages between lines of four ^A bytes), which spamsort does not read: convert it to mbox or maildir first"
    )]
    Mmdf {
        /// The file.
        path: PathBuf,
    },
}

impl CorpusError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        CorpusError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where a message came from: a file, and for mbox files its 1-based position in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    /// The file holding the message.
    pub path: PathBuf,
    /// Position inside an mbox (1-based), `None` for one-message files.
    pub index: Option<usize>,
}

impl Source {
    /// A one-message file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Source {
            path: path.into(),
            index: None,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}#{i}", self.path.display()),
            None => write!(f, "{}", self.path.display()),
        }
    }
}

/// One message: its raw bytes, exactly as stored (mbox `>From ` unescaping aside), and origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The raw RFC 5322 bytes.
    pub bytes: Vec<u8>,
    /// Where it was read from.
    pub source: Source,
}

/// True if `raw` holds nothing but white space: no mail at all (standard input read a second
/// time, a fetch that failed, an empty file), which learning must not count as a message of
/// its class. Classifying it still gives a verdict.
pub fn is_blank(raw: &[u8]) -> bool {
    raw.trim_ascii().is_empty()
}

/// The mailbox formats spamsort reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailboxFormat {
    /// A directory with two of the subdirectories `cur/`, `new/` and `tmp/`.
    Maildir,
    /// Any other directory: every regular, non-hidden file below it is one message.
    MessageTree,
    /// One file holding many messages separated by `From ` lines.
    Mbox,
    /// A TREC spam-track index: `spam PATH` / `ham PATH` lines.
    TrecIndex,
    /// One file holding one message.
    MessageFile,
}

impl MailboxFormat {
    /// Detects the format of `path` from what it is and how the file starts.
    pub fn detect(path: &Path) -> Result<Self, CorpusError> {
        let meta = std::fs::metadata(path).map_err(|e| CorpusError::io(path, e))?;
        if meta.is_dir() {
            return Ok(if maildir::is_maildir(path) {
                MailboxFormat::Maildir
            } else {
                MailboxFormat::MessageTree
            });
        }
        if !meta.is_file() {
            return Err(CorpusError::UnknownFormat {
                path: path.to_path_buf(),
            });
        }
        const HEAD: usize = 512;
        let head = read_regular_head(path, HEAD as u64).map_err(|e| CorpusError::io(path, e))?;
        // An mbox's envelope line ends in a line feed: a file without one (lone CR line
        // endings) would be read as one envelope line and nothing else, so it is one message.
        // A byte order mark and empty lines before it are framing (see `mbox`).
        let envelope = &head[mbox::leading_framing_len(&head)..];
        // All its messages would be read as one: an MMDF file opens with its first
        // message's delimiter line.
        if [&b"\x01\x01\x01\x01\n"[..], b"\x01\x01\x01\x01\r\n"]
            .iter()
            .any(|delimiter| envelope.starts_with(delimiter))
        {
            return Err(CorpusError::Mmdf {
                path: path.to_path_buf(),
            });
        }
        Ok(
            if envelope.starts_with(b"From ") && envelope.contains(&b'\n') {
                MailboxFormat::Mbox
            } else if trec::is_index(path, &head, head.len() < HEAD) {
                MailboxFormat::TrecIndex
            } else {
                MailboxFormat::MessageFile
            },
        )
    }
}

/// An open mailbox of any format: an iterator over its messages in a stable order.
pub struct Mailbox {
    inner: Inner,
    /// Keep only this many leading bytes of each message (see [`Mailbox::heads`]).
    head: Option<u64>,
    /// Finds maildir messages renamed since they were listed.
    renames: maildir::Renames,
    /// Messages read where a maildir message listed under another name had gone (see
    /// [`maildir::Renames`]): each is read once, also where it was listed as well.
    renamed: std::collections::HashSet<PathBuf>,
}

enum Inner {
    Files(Box<dyn Iterator<Item = Result<PathBuf, CorpusError>> + Send>),
    Mbox(Box<mbox::MboxReader<std::io::BufReader<std::fs::File>>>),
}

impl Mailbox {
    /// Opens `path`, detecting its format. Fails only if the mailbox itself cannot be read.
    pub fn open(path: &Path) -> Result<Self, CorpusError> {
        let files: Box<dyn Iterator<Item = _> + Send> = match MailboxFormat::detect(path)? {
            MailboxFormat::Maildir => Box::new(maildir::message_paths(path)?.into_iter()),
            MailboxFormat::MessageTree => Box::new(mh::message_paths(path).into_iter()),
            // Read as the messages are: an index is not held as a list of its entries.
            MailboxFormat::TrecIndex => {
                Box::new(trec::read_index(path)?.map(|entry| entry.map(|e| e.path)))
            }
            MailboxFormat::MessageFile => Box::new(std::iter::once(Ok(path.to_path_buf()))),
            MailboxFormat::Mbox => {
                let reader = mbox::MboxReader::open(path)?;
                return Ok(Mailbox {
                    inner: Inner::Mbox(Box::new(reader)),
                    head: None,
                    renames: Default::default(),
                    renamed: Default::default(),
                });
            }
        };
        Ok(Mailbox {
            inner: Inner::Files(files),
            head: None,
            renames: Default::default(),
            renamed: Default::default(),
        })
    }

    /// Yields only the first `bytes` bytes of each message: longer messages are cut there
    /// rather than refused as [`CorpusError::TooLarge`], and never held whole. For callers that
    /// only tokenize (see [`TokenizerConfig::head_bytes`](crate::TokenizerConfig::head_bytes)).
    pub fn heads(mut self, bytes: u64) -> Self {
        self.head = Some(bytes);
        if let Inner::Mbox(reader) = &mut self.inner {
            reader.set_head(bytes);
        }
        self
    }
}

impl Iterator for Mailbox {
    type Item = Result<Message, CorpusError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Files(paths) => loop {
                let path = match paths.next()? {
                    Ok(path) => path,
                    Err(e) => return Some(Err(e)),
                };
                if self.renamed.remove(&path) {
                    continue;
                }
                let read = read_file(&path, self.head);
                // A maildir message a mail reader renamed since it was listed (marked seen,
                // moved from new/ to cur/) is read under its new name.
                let gone = matches!(&read, Err(CorpusError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound);
                if let Some(now) = gone.then(|| self.renames.find(&path)).flatten() {
                    let message = read_file(&now, self.head);
                    self.renamed.insert(now);
                    return Some(message);
                }
                return Some(read);
            },
            Inner::Mbox(reader) => reader.next(),
        }
    }
}

/// Reads one message file, refusing files over [`MAX_MESSAGE_BYTES`] and anything but a
/// regular file (a FIFO or device is refused at once, never waited on: see [`open_regular`]).
pub fn read_message_file(path: &Path) -> Result<Message, CorpusError> {
    read_file(path, None)
}

/// Reads one message file: its first `head` bytes if given, else all of it up to
/// [`MAX_MESSAGE_BYTES`]. Anything but a regular file is refused without blocking.
fn read_file(path: &Path, head: Option<u64>) -> Result<Message, CorpusError> {
    let bytes = match head {
        Some(head) => read_regular_head(path, head).map_err(|e| CorpusError::io(path, e))?,
        None => read_regular(path, MAX_MESSAGE_BYTES).map_err(|e| {
            if e.kind() == std::io::ErrorKind::FileTooLarge {
                CorpusError::TooLarge {
                    message: Source::file(path),
                    limit: MAX_MESSAGE_BYTES,
                }
            } else {
                CorpusError::io(path, e)
            }
        })?,
    };
    Ok(Message {
        bytes,
        source: Source::file(path),
    })
}
