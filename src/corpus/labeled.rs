//! Labeled mail: spam and ham mailboxes read as one stream of `(message, label)` pairs
//! ([`LabeledMail`], what `train` reads without holding it whole), or held whole
//! ([`LabeledCorpus`], for evaluation). Both refuse mail given as spam and as ham.

use super::{CorpusError, Mailbox, MailboxFormat, Message, Source, read_message_file, trec};
use crate::label::Label;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Messages with their true labels, as used for training and evaluation.
#[derive(Debug, Default, Clone)]
pub struct LabeledCorpus {
    /// The messages, in reading order (all spam paths first, then all ham paths).
    pub messages: Vec<(Message, Label)>,
}

/// The messages of one mailbox, read as they are asked for.
type Messages = Box<dyn Iterator<Item = Result<Message, CorpusError>> + Send>;

/// The messages below spam and ham mailboxes, read one at a time as the iterator is advanced,
/// in the order [`LabeledCorpus::read`] holds them (all spam paths first, then all ham paths).
/// Unreadable messages, and empty ones ([`CorpusError::Empty`]), are handed to the `warn`
/// callback and skipped. A fatal error (a mailbox
/// that cannot be opened, a TREC index that disagrees with its class, a file read in both
/// classes) comes out as an `Err` item, after which the stream ends.
pub struct LabeledMail<W> {
    /// Mailboxes not opened yet, in order.
    pending: std::vec::IntoIter<(PathBuf, Label)>,
    /// The mailbox being read.
    current: Option<(Messages, Label)>,
    warn: W,
    /// The identity of every spam file read, and where it was read, to refuse the same file
    /// as ham ([`CorpusError::InBothClasses`]).
    spam_files: HashMap<(u64, u64), Source>,
    /// The file of the last message checked, with its class: an mbox's messages need one
    /// look-up. The class is part of the key: the same file read next as the other class
    /// (the spam folder's last message named again as ham) must be looked up.
    previous: Option<(PathBuf, Label)>,
    /// A fatal error ended the stream.
    ended: bool,
}

impl<W: FnMut(&CorpusError)> LabeledMail<W> {
    /// Opens the stream. Refuses at once a mailbox given both as spam and as ham
    /// ([`CorpusError::SameMailbox`]); the rest is found as the mail is read.
    pub fn open(spam: &[PathBuf], ham: &[PathBuf], warn: W) -> Result<Self, CorpusError> {
        for s in spam {
            for h in ham {
                if file_id(s).is_some_and(|id| file_id(h) == Some(id)) {
                    return Err(CorpusError::SameMailbox {
                        spam: s.clone(),
                        ham: h.clone(),
                    });
                }
            }
        }
        let pending: Vec<(PathBuf, Label)> = (spam.iter().map(|p| (p.clone(), Label::Spam)))
            .chain(ham.iter().map(|p| (p.clone(), Label::Ham)))
            .collect();
        Ok(LabeledMail {
            pending: pending.into_iter(),
            current: None,
            warn,
            spam_files: HashMap::new(),
            previous: None,
            ended: false,
        })
    }

    /// The messages of mailbox `path` given as mail of class `label`.
    fn open_mailbox(path: &Path, label: Label) -> Result<Messages, CorpusError> {
        if MailboxFormat::detect(path)? != MailboxFormat::TrecIndex {
            return Ok(Box::new(Mailbox::open(path)?));
        }
        // An index keeps its own labels: one that lists a message of the other class is
        // refused before any message is read from it.
        let entries = trec::read_index(path)?;
        entries.check_class(label)?;
        Ok(Box::new(entries.map(|entry| {
            entry.and_then(|e| read_message_file(&e.path))
        })))
    }

    /// Refuses a ham file already read as spam (by device and inode: links and other spellings
    /// of a path count as the same), as when one folder lies inside the other or a message is
    /// named in both. Trained on, such mail teaches nothing but noise.
    fn check_classes(&mut self, source: &Source, label: Label) -> Result<(), CorpusError> {
        // The messages of an mbox file follow each other: one look-up per file and class.
        if (self.previous.as_ref()).is_some_and(|(path, l)| *path == source.path && *l == label) {
            return Ok(());
        }
        self.previous = Some((source.path.clone(), label));
        let Some(id) = file_id(&source.path) else {
            return Ok(());
        };
        match label {
            Label::Spam => {
                self.spam_files.entry(id).or_insert_with(|| source.clone());
            }
            Label::Ham => {
                if let Some(first) = self.spam_files.get(&id) {
                    return Err(CorpusError::InBothClasses {
                        spam: first.clone(),
                        ham: source.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    fn next_message(&mut self) -> Option<Result<(Message, Label), CorpusError>> {
        loop {
            let Some((messages, label)) = &mut self.current else {
                let (path, label) = self.pending.next()?;
                match Self::open_mailbox(&path, label) {
                    Ok(messages) => self.current = Some((messages, label)),
                    Err(e) => return Some(Err(e)),
                }
                continue;
            };
            let label = *label;
            match messages.next() {
                None => self.current = None,
                Some(Err(e)) => (self.warn)(&e),
                // No mail: counted, it moved its class's counts as `learn` never does.
                Some(Ok(message)) if super::is_blank(&message.bytes) => {
                    (self.warn)(&CorpusError::Empty {
                        message: message.source,
                    });
                }
                Some(Ok(message)) => {
                    return Some(
                        self.check_classes(&message.source, label)
                            .map(|()| (message, label)),
                    );
                }
            }
        }
    }
}

impl<W: FnMut(&CorpusError)> Iterator for LabeledMail<W> {
    type Item = Result<(Message, Label), CorpusError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        let item = self.next_message();
        self.ended = matches!(item, None | Some(Err(_)));
        item
    }
}

/// A file's identity (device and inode, symbolic links followed), if it can be looked up.
pub(crate) fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl LabeledCorpus {
    /// Reads every message below the given spam and ham mailboxes (all of [`LabeledMail`],
    /// held). Unreadable and empty messages are handed to `warn` and skipped; a mailbox that
    /// cannot be opened at all is an error, and so is mail given both as spam and as ham: the
    /// same mailbox ([`CorpusError::SameMailbox`], found before reading) or one file read in both
    /// classes ([`CorpusError::InBothClasses`]). A TREC index keeps its own labels: one given
    /// as spam (or ham) that lists a message of the other class is refused
    /// ([`CorpusError::IndexLabelDisagrees`]) before any message is read from it.
    pub fn read(
        spam: &[PathBuf],
        ham: &[PathBuf],
        warn: impl FnMut(&CorpusError),
    ) -> Result<Self, CorpusError> {
        let messages = LabeledMail::open(spam, ham, warn)?.collect::<Result<_, _>>()?;
        Ok(LabeledCorpus { messages })
    }

    /// Reads the messages a TREC index lists, with the labels it gives them, in index order
    /// (all of [`LabeledCorpus::stream_trec`], held). Unreadable and empty messages are handed
    /// to `warn` and skipped.
    pub fn read_trec(index: &Path, warn: impl FnMut(&CorpusError)) -> Result<Self, CorpusError> {
        let messages = Self::stream_trec(index, warn)?.collect::<Result<_, _>>()?;
        Ok(LabeledCorpus { messages })
    }

    /// The messages a TREC index lists, with the labels it gives them, in index order, each
    /// read when the iterator gets to it, so a caller that keeps less than the messages (their
    /// tokens) never holds them all: held whole, an index that lists large messages, or one
    /// large message many times, took their bytes summed (20 lines naming one 40 MB message,
    /// 0.8 GB). Unreadable and empty messages are handed to `warn` and skipped; the items are
    /// never `Err` (the type is that of [`LabeledMail`]'s stream). Fails if the index itself
    /// cannot be read.
    pub fn stream_trec<W: FnMut(&CorpusError)>(
        index: &Path,
        mut warn: W,
    ) -> Result<impl Iterator<Item = Result<(Message, Label), CorpusError>> + use<W>, CorpusError>
    {
        let entries = trec::read_index(index)?;
        Ok(entries.filter_map(move |entry| {
            match entry.and_then(|e| Ok((read_message_file(&e.path)?, e.label))) {
                // No mail, as [`LabeledMail`] leaves it out.
                Ok((message, _)) if super::is_blank(&message.bytes) => {
                    warn(&CorpusError::Empty {
                        message: message.source,
                    });
                    None
                }
                Ok(pair) => Some(Ok(pair)),
                Err(e) => {
                    warn(&e);
                    None
                }
            }
        }))
    }

    /// How many messages carry `label`.
    pub fn count(&self, label: Label) -> usize {
        self.messages.iter().filter(|(_, l)| *l == label).count()
    }
}
