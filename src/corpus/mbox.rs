//! mbox: messages separated by `From ` lines. A `From ` line starts a new message when it opens
//! the file, or when it follows an empty line (LF or CRLF), as every common writer emits it,
//! and looks like an envelope line: a sender, then a date with a month, a time of day and a
//! year (`From alice@example.org  Thu Aug 22 18:28:49 2002`), as mutt and Dovecot check it; a
//! body line that merely starts with `From ` (`From the desk of ...`, left unescaped by a
//! writer or in a one-message file) is text. Body lines that writers escaped as `>From ` are
//! unescaped: mboxrd removes one `>` from `>+From `, mboxo removes it from `>From ` only. The
//! empty line that separates messages is framing and is dropped; everything else, line
//! endings included, is passed through as stored.
//!
//! mboxcl and mboxcl2 (Solaris mail, some older MUAs) give the body's length in a
//! `Content-Length:` field instead of escaping body lines, so a body line starting with `From `
//! after an empty line may be body text. The field is honoured, and the body taken as stored,
//! only where it is consistent, as mutt checks it: the length, counted from the empty line that
//! ends the header block, ends the body with a line feed at the end of the file, or where an
//! empty line and then a `From ` line or the end of the file follow. Spam can carry any field,
//! so a length that does not land so is ignored, and the message is split as mboxrd: a length
//! never makes the reader go past the file. As in mutt, only where the length lands is checked,
//! not what it spans: a length that lands exactly on a later message's envelope line, or on the
//! end of the file, takes in the messages before it (a writer that got it wrong by exactly
//! their size, or a sender who knew their bytes).

use super::{CorpusError, MAX_MESSAGE_BYTES, Message, Source};
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The least of a line [`MboxReader`] reads at once, whatever its head: an envelope line is
/// far shorter (a sender and a date), and one longer is text.
const MIN_LINE_PIECE: u64 = 1024;

/// How body lines beginning with `From ` were escaped by the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MboxVariant {
    /// `>*From ` lines gained one `>`; reading removes one from `>+From `. Also reads mboxo
    /// files correctly except for lines that really began with `>From `.
    #[default]
    Rd,
    /// Only `From ` lines gained a `>`; reading removes it from `>From ` and leaves `>>From `.
    O,
}

/// Streams the messages of one mbox file.
pub struct MboxReader<R> {
    reader: R,
    path: PathBuf,
    variant: MboxVariant,
    /// Number of the next message (1-based).
    next_index: usize,
    /// A separator line was already read for the next message.
    started: bool,
    done: bool,
    line: Vec<u8>,
    /// Keep only this many leading bytes of each message instead of refusing long ones.
    head: Option<u64>,
    /// The last piece read did not end its line (a line longer than the limit comes in
    /// pieces; only a line's first piece can be blank, a separator or escaped).
    mid_line: bool,
    /// The pieces being read continue a separator line, not a message.
    in_separator: bool,
    /// Nothing but [`leading_framing_len`]'s framing was read yet: a byte order mark and
    /// empty lines there are skipped, not read as a first (empty) message.
    at_start: bool,
}

impl MboxReader<std::io::BufReader<std::fs::File>> {
    /// Opens an mbox file (as mboxrd); anything but a regular file is refused. Waits (a
    /// bounded time) for a program writing to it, and holds a shared lock on it while it is
    /// read, as mail readers do (see [`super::mbox_lock`]).
    pub fn open(path: &Path) -> Result<Self, CorpusError> {
        let file = super::open_regular(path).map_err(|e| CorpusError::io(path, e))?;
        super::mbox_lock::wait_for_writers(&file, path, super::mbox_lock::WRITER_WAIT)?;
        Ok(MboxReader::new(
            std::io::BufReader::new(file),
            path,
            MboxVariant::Rd,
        ))
    }
}

impl<R: BufRead + Seek> MboxReader<R> {
    /// Reads messages from `reader`; `path` is used in sources and errors.
    pub fn new(reader: R, path: &Path, variant: MboxVariant) -> Self {
        MboxReader {
            reader,
            path: path.to_path_buf(),
            variant,
            next_index: 1,
            started: false,
            done: false,
            line: Vec::new(),
            head: None,
            mid_line: false,
            in_separator: false,
            at_start: true,
        }
    }

    /// Yields only the first `bytes` bytes of each message: longer ones are cut there, not
    /// refused as too large, and lines are read in pieces of at most `bytes + 1`, so memory
    /// stays bounded by `bytes` whatever the file holds.
    pub fn set_head(&mut self, bytes: u64) {
        self.head = Some(bytes);
    }

    /// Most bytes one message may take: the head if set, else [`MAX_MESSAGE_BYTES`].
    fn limit(&self) -> u64 {
        self.head.unwrap_or(MAX_MESSAGE_BYTES)
    }

    /// Reads one line, or a piece of one: at most the message cap, so a file with no
    /// newlines stays bounded, and at least [`MIN_LINE_PIECE`], so that an envelope line is
    /// read whole to be told from text however small the head.
    fn read_line(&mut self) -> std::io::Result<bool> {
        self.line.clear();
        let limit = self.limit().max(MIN_LINE_PIECE);
        let n = (&mut self.reader)
            .take(limit.saturating_add(1))
            .read_until(b'\n', &mut self.line)?;
        Ok(n > 0)
    }

    fn unescape<'l>(&self, line: &'l [u8]) -> &'l [u8] {
        let quotes = line.iter().take_while(|&&b| b == b'>').count();
        let escaped = match self.variant {
            MboxVariant::Rd => quotes >= 1,
            MboxVariant::O => quotes == 1,
        };
        if escaped && line[quotes..].starts_with(b"From ") {
            &line[1..]
        } else {
            line
        }
    }

    /// Whether a body of `len` bytes from here (just past the empty line ending a header
    /// block) is consistent with the file, as the module doc says. Looks at the few bytes
    /// around where it would end and comes back here, reading nothing else.
    fn length_is_consistent(&mut self, len: u64) -> std::io::Result<bool> {
        let start = self.reader.stream_position()?;
        let Some(end) = start.checked_add(len) else {
            return Ok(false);
        };
        // From the body's last byte, which must exist and end a line: a length past the file
        // or into a line is wrong. Then an empty line (LF or CRLF) and a `From ` line.
        let from = if len == 0 { start } else { end - 1 };
        self.reader.seek(SeekFrom::Start(from))?;
        // The body's last byte, an empty line and `From `: fewer at the end of the file.
        const LOOK: u64 = 1 + 2 + 5;
        let mut look = Vec::with_capacity(LOOK as usize);
        (&mut self.reader).take(LOOK).read_to_end(&mut look)?;
        self.reader.seek(SeekFrom::Start(start))?;
        let at_end = (look.len() as u64) < LOOK;
        let after = match (len, &look[..]) {
            (0, after) => after,
            (_, [b'\n', after @ ..]) => after,
            _ => return Ok(false),
        };
        let next = after
            .strip_prefix(b"\n")
            .or_else(|| after.strip_prefix(b"\r\n"));
        Ok((after.is_empty() && at_end)
            || next.is_some_and(|n| (n.is_empty() && at_end) || n.starts_with(b"From ")))
    }

    /// Reads a body of `len` bytes whose length [`Self::length_is_consistent`] approved into
    /// `bytes`, as much of it as the limit leaves room for, the rest skipped unread; sets
    /// `too_large` as a line over the limit does.
    fn read_body(
        &mut self,
        len: u64,
        bytes: &mut Vec<u8>,
        too_large: &mut bool,
    ) -> std::io::Result<()> {
        let room = self.limit().saturating_sub(bytes.len() as u64);
        let keep = if *too_large {
            0
        } else if len <= room {
            len
        } else if self.head.is_some() {
            *too_large = true;
            room
        } else {
            *too_large = true;
            *bytes = Vec::new();
            0
        };
        // The bytes are there (the length was checked against the file): room for them at
        // once rather than growing by doubling.
        bytes.reserve_exact(usize::try_from(keep).unwrap_or(usize::MAX));
        (&mut self.reader).take(keep).read_to_end(bytes)?;
        let skip = i64::try_from(len - keep).unwrap_or(i64::MAX);
        self.reader.seek(SeekFrom::Current(skip))?;
        Ok(())
    }
}

/// The value of a `Content-Length:` header field line, if `line` is one with a valid number.
fn content_length(line: &[u8]) -> Option<Option<u64>> {
    const NAME: &[u8] = b"content-length:";
    let name = line.get(..NAME.len())?;
    if !name.eq_ignore_ascii_case(NAME) {
        return None;
    }
    let value = line[NAME.len()..].trim_ascii();
    let valid = !value.is_empty() && value.iter().all(u8::is_ascii_digit);
    Some(
        valid
            .then(|| std::str::from_utf8(value).ok()?.parse().ok())
            .flatten(),
    )
}

/// The UTF-8 byte order mark some editors and exporters put at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The bytes of `head` (a file's start) before its first envelope line could begin: a byte
/// order mark and empty lines (LF or CRLF). They frame no message; an mbox whose exporter
/// wrote them is still an mbox.
pub(crate) fn leading_framing_len(head: &[u8]) -> usize {
    let mut at = if head.starts_with(BOM) { BOM.len() } else { 0 };
    loop {
        let rest = &head[at..];
        if rest.starts_with(b"\n") {
            at += 1;
        } else if rest.starts_with(b"\r\n") {
            at += 2;
        } else {
            return at;
        }
    }
}

/// Whether `line` (a whole line) looks like an envelope line: `From `, a sender (a quoted
/// part may hold spaces), then a date that has a month's name (or its first three letters), a
/// time of day (`18:28` or `18:28:49`) and a four-digit year, however the rest is written
/// (ctime's `Thu Aug 22 18:28:49 2002`, with a zone, or RFC 5322's `Thu, 22 Aug 2002
/// 18:28:49 +0000`).
fn is_envelope(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"From ") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    let unquoted = match rest.strip_prefix(b"\"") {
        Some(quoted) => match quoted.iter().position(|&b| b == b'"') {
            Some(end) => &quoted[end + 1..],
            None => return false,
        },
        None => rest,
    };
    let sender_end = (unquoted.iter().position(u8::is_ascii_whitespace)).unwrap_or(unquoted.len());
    if sender_end == 0 && unquoted.len() == rest.len() {
        return false;
    }
    let words = unquoted[sender_end..]
        .split(u8::is_ascii_whitespace)
        .map(|w| w.trim_ascii_end().strip_suffix(b",").unwrap_or(w));
    let digits = |w: &[u8]| !w.is_empty() && w.iter().all(u8::is_ascii_digit);
    let is_time = |w: &[u8]| {
        let mut parts = w.split(|&b| b == b':');
        let hour = parts.next().filter(|h| digits(h) && h.len() <= 2);
        let rest: Vec<&[u8]> = parts.collect();
        hour.is_some()
            && matches!(rest.len(), 1 | 2)
            && rest.iter().all(|p| digits(p) && p.len() == 2)
    };
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let is_month = |w: &[u8]| {
        MONTHS.iter().any(|m| {
            let m = m.as_bytes();
            w.eq_ignore_ascii_case(m) || w.eq_ignore_ascii_case(&m[..3])
        })
    };
    let (mut month, mut time, mut year) = (false, false, false);
    for word in words {
        month |= is_month(word);
        time |= is_time(word);
        year |= word.len() == 4 && digits(word);
    }
    month && time && year
}

fn is_blank(line: &[u8]) -> bool {
    line == b"\n" || line == b"\r\n"
}

/// Drops the one empty line that frames the end of a message.
fn strip_framing(bytes: &mut Vec<u8>) {
    if bytes.ends_with(b"\r\n\r\n") {
        bytes.truncate(bytes.len() - 2);
    } else if bytes.ends_with(b"\n\n") {
        bytes.truncate(bytes.len() - 1);
    }
}

impl<R: BufRead + Seek> Iterator for MboxReader<R> {
    type Item = Result<Message, CorpusError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut bytes = Vec::new();
        let mut too_large = false;
        let mut any_line = self.started;
        let mut prev_blank = true;
        // Until the header block's empty line; the `Content-Length:` fields seen there (all
        // must agree: two lengths are no length).
        let mut in_header = true;
        let mut length: Option<Option<u64>> = None;
        // The body was taken by its length: no framing line ends it. `framing`: the empty
        // line after it is still to come.
        let mut by_length = false;
        let mut framing = false;
        loop {
            match self.read_line() {
                Err(e) => {
                    self.done = true;
                    return Some(Err(CorpusError::io(&self.path, e)));
                }
                Ok(false) => {
                    self.done = true;
                    if !any_line {
                        return None;
                    }
                    break;
                }
                Ok(true) => {}
            }
            let starts_line = !self.mid_line;
            self.mid_line = !self.line.ends_with(b"\n");
            if self.at_start {
                let framing = leading_framing_len(&self.line);
                // A line that is all framing (a mark, an empty line) is skipped; the mark
                // before a first line is dropped from it.
                if framing == self.line.len() && !self.mid_line {
                    continue;
                }
                self.line.drain(..framing);
                self.at_start = false;
            }
            if !starts_line && self.in_separator {
                continue;
            }
            self.in_separator = false;
            if std::mem::take(&mut framing) && starts_line && !self.mid_line && is_blank(&self.line)
            {
                prev_blank = true;
                continue;
            }
            // The file's first line is its envelope whatever its shape (a one-message file
            // stored with one); a later one must look like one.
            if starts_line
                && prev_blank
                && self.line.starts_with(b"From ")
                && (!any_line || (!self.mid_line && is_envelope(&self.line)))
            {
                self.in_separator = self.mid_line;
                if any_line {
                    // This separator opens the next message.
                    self.started = true;
                    break;
                }
                any_line = true;
                prev_blank = false;
                continue;
            }
            any_line = true;
            prev_blank = starts_line && is_blank(&self.line);
            let header_ends = in_header && prev_blank;
            if in_header
                && starts_line
                && !self.mid_line
                && let Some(value) = content_length(&self.line)
            {
                length = match length {
                    Some(seen) if seen != value => Some(None),
                    _ => Some(value),
                };
            }
            if !too_large {
                let line = if starts_line {
                    self.unescape(&self.line)
                } else {
                    &self.line
                };
                let room = usize::try_from(self.limit())
                    .unwrap_or(usize::MAX)
                    .saturating_sub(bytes.len());
                if line.len() <= room {
                    bytes.extend_from_slice(line);
                } else if self.head.is_some() {
                    bytes.extend_from_slice(&line[..room]);
                    too_large = true;
                } else {
                    too_large = true;
                    bytes = Vec::new();
                }
            }
            if header_ends {
                in_header = false;
                let consistent = match length.flatten() {
                    Some(len) => self.length_is_consistent(len).map(|ok| ok.then_some(len)),
                    None => Ok(None),
                };
                let read = match consistent {
                    Ok(Some(len)) => self
                        .read_body(len, &mut bytes, &mut too_large)
                        .map(|()| true),
                    Ok(None) => Ok(false),
                    Err(e) => Err(e),
                };
                match read {
                    Err(e) => {
                        self.done = true;
                        return Some(Err(CorpusError::io(&self.path, e)));
                    }
                    // What follows is the empty line before the next envelope line, or the end.
                    Ok(true) => {
                        (by_length, framing, prev_blank) = (true, true, false);
                    }
                    Ok(false) => {}
                }
            }
        }
        let source = Source {
            path: self.path.clone(),
            index: Some(self.next_index),
        };
        self.next_index += 1;
        if too_large && self.head.is_none() {
            return Some(Err(CorpusError::TooLarge {
                message: source,
                limit: MAX_MESSAGE_BYTES,
            }));
        }
        if !too_large && !by_length {
            strip_framing(&mut bytes);
        }
        Some(Ok(Message { bytes, source }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(data: &[u8], variant: MboxVariant) -> Vec<Vec<u8>> {
        MboxReader::new(std::io::Cursor::new(data), Path::new("test.mbox"), variant)
            .map(|m| m.unwrap().bytes)
            .collect()
    }

    #[test]
    fn splits_on_from_lines_after_blank() {
        let data = b"From a@b Mon Jan 1 00:00:00 2024\nSubject: one\n\nbody\nFrom here\n\nFrom c@d Mon Jan 1 00:00:00 2024\nSubject: two\n\nx\n\n";
        let msgs = read(data, MboxVariant::Rd);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0], b"Subject: one\n\nbody\nFrom here\n");
        assert_eq!(msgs[1], b"Subject: two\n\nx\n");
    }

    /// Regression: any line starting with `From ` after an empty line split the message, so a
    /// one-message file stored with its envelope line was learned as two messages (the real
    /// one cut off, and its tail) and as a third through standard input.
    #[test]
    fn a_from_line_that_is_no_envelope_line_is_text() {
        let body = "S: memo\n\nRead this.\n\nFrom the desk of the president: approved.\n\n";
        let data = format!("From alice@example.org  Thu Aug 22 18:28:49 2002\n{body}");
        assert_eq!(
            read(data.as_bytes(), MboxVariant::Rd),
            [&body.as_bytes()[..body.len() - 1]]
        );
        for envelope in [
            "From alice@example.org  Thu Aug 22 18:28:49 2002",
            "From MAILER-DAEMON Fri Jul  8 12:08:34 2011 +0000",
            "From - Tue Sep 03 12:34 2002",
            "From \"a b\"@example.org Thu, 22 Aug 2002 18:28:49 +0000\r\n",
        ] {
            assert!(is_envelope(envelope.as_bytes()), "{envelope}");
        }
        for text in [
            "From the desk of the president: approved.",
            "From here",
            "From 2002 on",
            "From 9:00 onwards",
            "From 9:30 to 17:00 on weekdays, in 2025 and after.",
            "From  Thu Aug 22 18:28:49",
            "From \"unclosed Thu Aug 22 18:28:49 2002",
        ] {
            assert!(!is_envelope(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn a_byte_order_mark_and_empty_lines_before_the_first_envelope_are_framing() {
        let data = b"\xEF\xBB\xBF\n\r\nFrom a@b\nS: 1\n\none\n\nFrom c@d Mon Jan  1 00:00:00 2024\nS: 2\n\ntwo\n";
        assert_eq!(
            read(data, MboxVariant::Rd),
            vec![b"S: 1\n\none\n".to_vec(), b"S: 2\n\ntwo\n".to_vec()]
        );
        assert_eq!(leading_framing_len(data), 6);
        assert_eq!(leading_framing_len(b"\xEF\xBB\xBFFrom a"), 3);
        assert_eq!(leading_framing_len(b"\r\rFrom a"), 0);
        // Framing alone is no message; a mark before other text is dropped from it.
        assert!(read(b"\xEF\xBB\xBF\n\n", MboxVariant::Rd).is_empty());
        assert_eq!(
            read(b"\xEF\xBB\xBFS: 1\n\nx\n", MboxVariant::Rd),
            vec![b"S: 1\n\nx\n".to_vec()]
        );
    }

    /// An mboxcl2 message: `body` unescaped, its length in the header.
    fn cl2(from: &str, body: &str) -> String {
        format!(
            "From {from} Mon Jan  1 00:00:00 2024\nSubject: {from}\nContent-Length: {}\n\n{body}",
            body.len()
        )
    }

    #[test]
    fn a_consistent_content_length_keeps_a_from_line_in_its_body() {
        let body = "see below\n\nFrom the start, it was\nspam\n\n";
        for (data, ends) in [
            // Between two messages, and last: with its empty line, and without.
            (cl2("a", body) + "\n" + &cl2("b", "two\n") + "\n", "\n"),
            (cl2("a", body) + "\n" + &cl2("b", "two\n"), ""),
        ] {
            let msgs = read(data.as_bytes(), MboxVariant::Rd);
            assert_eq!(msgs.len(), 2, "{data:?}: {msgs:?}");
            let first = format!("Subject: a\nContent-Length: {}\n\n{body}", body.len());
            assert_eq!(String::from_utf8_lossy(&msgs[0]), first, "{ends:?}");
            assert_eq!(msgs[1], b"Subject: b\nContent-Length: 4\n\ntwo\n");
        }
        // CRLF, and an empty body.
        let data = b"From a\r\nContent-Length: 0\r\n\r\n\r\nFrom b Mon Jan  1 00:00:00 2024\r\nContent-Length: 16\r\n\r\nx\r\n\r\nFrom y\r\nz\r\n";
        assert_eq!(
            read(data, MboxVariant::Rd),
            vec![
                b"Content-Length: 0\r\n\r\n".to_vec(),
                b"Content-Length: 16\r\n\r\nx\r\n\r\nFrom y\r\nz\r\n".to_vec()
            ]
        );
    }

    #[test]
    fn an_inconsistent_content_length_is_ignored_and_never_swallows_the_next_messages() {
        let rest = "\nFrom b Mon Jan  1 00:00:00 2024\nSubject: b\n\ntwo\n\nFrom c Mon Jan  1 00:00:00 2024\nSubject: c\n\nthree\n";
        // From the header's empty line to the end of the file: "body\n\n" and the rest but
        // its first line feed.
        let whole = rest.len() as u64 + 5;
        // Past the end of the file (too large for a number, by far, by one), short of its
        // end by one (not at the end of a line), into a line, onto a `From ` line without
        // the empty line (6), into a `From ` line, and no number.
        for length in [
            "99999999999999999999999".to_string(),
            u64::MAX.to_string(),
            (whole + 1).to_string(),
            (whole - 1).to_string(),
            "3".to_string(),
            "7".to_string(),
            "6".to_string(),
            "8".to_string(),
            "-1".to_string(),
            "7 bytes".to_string(),
        ] {
            let data = format!("From a\nContent-Length: {length}\n\nbody\n{rest}");
            let msgs = read(data.as_bytes(), MboxVariant::Rd);
            let subjects: Vec<String> = msgs
                .iter()
                .map(|m| String::from_utf8_lossy(m).into_owned())
                .collect();
            assert_eq!(msgs.len(), 3, "Content-Length {length}: {subjects:?}");
            assert_eq!(msgs[2], b"Subject: c\n\nthree\n", "{length}");
        }
        // Two lengths that disagree are no length.
        let data = format!("From a\nContent-Length: 5\ncontent-length: 6\n\nbody\n{rest}");
        assert_eq!(read(data.as_bytes(), MboxVariant::Rd).len(), 3);
        // The right length, and one to the end of the file exactly (a body ending with a
        // line feed there), are honoured.
        for (length, count) in [(5, 3), (whole, 1)] {
            let data = format!("From a\nContent-Length: {length}\n\nbody\n{rest}");
            assert_eq!(
                read(data.as_bytes(), MboxVariant::Rd).len(),
                count,
                "{length}"
            );
        }
    }

    #[test]
    fn a_content_length_body_over_the_head_is_cut_and_the_next_message_kept() {
        let data = cl2("a", "0123456789\n\nFrom x\n") + "\n" + &cl2("b", "two\n");
        let msgs = heads(data.as_bytes(), 40);
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert_eq!(
            msgs[0],
            b"Subject: a\nContent-Length: 19\n\n012345678".to_vec()
        );
        assert_eq!(msgs[1], b"Subject: b\nContent-Length: 4\n\ntwo\n".to_vec());
    }

    #[test]
    fn mboxrd_unescapes_one_level() {
        let data = b"From a\nS: 1\n\n>From x\n>>From y\n>Fromage\n";
        assert_eq!(
            read(data, MboxVariant::Rd),
            vec![b"S: 1\n\nFrom x\n>From y\n>Fromage\n".to_vec()]
        );
        assert_eq!(
            read(data, MboxVariant::O),
            vec![b"S: 1\n\nFrom x\n>>From y\n>Fromage\n".to_vec()]
        );
    }

    #[test]
    fn crlf_files_keep_crlf() {
        let data = b"From a\r\nS: 1\r\n\r\nbody\r\n\r\nFrom b Mon Jan  1 00:00:00 2024\r\nS: 2\r\n\r\nz\r\n";
        let msgs = read(data, MboxVariant::Rd);
        assert_eq!(
            msgs,
            vec![
                b"S: 1\r\n\r\nbody\r\n".to_vec(),
                b"S: 2\r\n\r\nz\r\n".to_vec()
            ]
        );
    }

    #[test]
    fn empty_and_separator_only() {
        assert!(read(b"", MboxVariant::Rd).is_empty());
        assert_eq!(read(b"From a\n", MboxVariant::Rd), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn numbers_messages_from_one() {
        let data = b"From a\nS: 1\n\nFrom b Mon Jan  1 00:00:00 2024\nS: 2\n";
        let idx: Vec<_> = MboxReader::new(
            std::io::Cursor::new(&data[..]),
            Path::new("m"),
            MboxVariant::Rd,
        )
        .map(|m| m.unwrap().source.index)
        .collect();
        assert_eq!(idx, vec![Some(1), Some(2)]);
    }

    fn heads(data: &[u8], head: u64) -> Vec<Vec<u8>> {
        let mut reader =
            MboxReader::new(std::io::Cursor::new(data), Path::new("m"), MboxVariant::Rd);
        reader.set_head(head);
        reader.map(|m| m.unwrap().bytes).collect()
    }

    #[test]
    fn heads_cut_long_messages_and_keep_the_next_ones() {
        let data = b"From a\nS: 1\n\n0123456789\nabcdefghij\n\nFrom b Mon Jan  1 00:00:00 2024\nS: 2\n\nz\n";
        assert_eq!(
            heads(data, 12),
            vec![b"S: 1\n\n012345".to_vec(), b"S: 2\n\nz\n".to_vec()]
        );
        // Without a head the same messages come whole.
        assert_eq!(heads(data, 1000), read(data, MboxVariant::Rd));
    }

    #[test]
    fn pieces_of_a_line_longer_than_the_head_are_never_separators() {
        // A line is read in pieces of at most 1025 bytes (4 is less than the least piece):
        // 1025 `x`, then "\n" alone, which is not a blank line, so the `From ` line after it
        // is body text.
        let long = "x".repeat(1025);
        let envelope = "From b Mon Jan  1 00:00:00 2024";
        let data = format!("From a\nS: 1\n\n{long}\n{envelope}\n>From x\n\n{envelope}\nS: 2\n");
        let msgs = heads(data.as_bytes(), 4);
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert_eq!(msgs[1], b"S: 2".to_vec());
        // A separator line longer than that is skipped whole, not read as message text.
        let data = format!("From a-{}\nS: 1\n", "x".repeat(3000));
        assert_eq!(heads(data.as_bytes(), 4), vec![b"S: 1".to_vec()]);
    }
}
