//! The one header-block scanner: where a raw message's lines end, where its header fields
//! stop and where its body starts. Every reader and writer of header fields goes through it
//! (the tokenizer, X-Spam-* stamping in `filter/stamp.rs`, the daemon, the spamd server), so they
//! never disagree about a message, but where stamping on purpose also ends a line at every lone
//! CR ([`HeaderBlock::scan_as`], so it removes the forged fields of either reading; its module
//! says why).
//!
//! LF and CRLF end a line. A lone CR ends one only in a CR-only message, one without an LF
//! (old Mac mail, see [`LineEnds`]); elsewhere it is a byte of its line, as
//! every reader that ends lines at LF (mail-parser, Dovecot, procmail, spamc) takes it, so a
//! stray CR inside a header field cannot end the header block early for spamsort alone (which
//! hid a message's MIME fields and decoded body from the tokenizer). An mbox `From ` envelope
//! line may open the message.
//! The header block is the run of lines that are fields (an RFC 5322 field name: printable
//! ASCII without spaces or colon, then `:`, with the obsolete white space before the colon
//! allowed, RFC 5322 4.5.3) or continuations (starting with a space or tab). The body starts
//! after the blank line that ends the block or, when a message lacks that line, at the first
//! line that is neither a field nor a continuation, as Python's email package treats it.
//!
//! Other readers take every line up to the first blank line as header, whatever it holds:
//! Dovecot (so Sieve rules and IMAP searches) reads a line without a colon as a field named by
//! the whole line and goes on, procmail and maildrop match their header rules up to the blank
//! line, and spamc splits header from body there. A field after a non-field line is a field to
//! them: [`HeaderBlock::section_end`] is where their header section ends, which is what a
//! writer that must leave no forged field behind (X-Spam-* stamping) works on.

/// What ends the lines of a message (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnds {
    /// LF, with or without a CR before it; a lone CR is a byte of its line.
    Lf,
    /// LF, CRLF or a lone CR: a CR-only message's.
    LfOrCr,
}

impl LineEnds {
    /// Those of `message`: [`LineEnds::LfOrCr`] if it has a CR and no LF, else
    /// [`LineEnds::Lf`]. Not its first line's ending: a sender could put a stray CR there.
    /// Adding lines ended as this kind ends them (LF or CRLF, or a lone CR in a message
    /// without LF) leaves the kind as it was.
    pub fn of(message: &[u8]) -> LineEnds {
        if memchr::memchr(b'\n', message).is_none() && memchr::memchr(b'\r', message).is_some() {
            LineEnds::LfOrCr
        } else {
            LineEnds::Lf
        }
    }
}

/// Where the scanned parts of a message lie; every offset is into the scanned bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderBlock {
    /// End of an mbox `From ` envelope line at the very start (with its line ending); 0 if none.
    pub envelope_end: usize,
    /// End of the last field or continuation line (with its line ending); at least
    /// `envelope_end`.
    pub fields_end: usize,
    /// Where the body starts: after the blank line ending the header block, else at the first
    /// line that is neither field nor continuation (then equal to `fields_end`), else the end.
    pub body_start: usize,
    /// A line that is certainly not a field (blank, or a complete non-field line) ended the
    /// block, so bytes after the scanned ones cannot change where it ends. False when the
    /// scanned bytes ran out first.
    pub terminated: bool,
    /// Some header line (or the envelope line) ends in a lone CR (then `line_ends` is
    /// [`LineEnds::LfOrCr`]).
    pub lone_cr: bool,
    /// What ends the scanned message's lines.
    pub line_ends: LineEnds,
}

impl HeaderBlock {
    /// Scans `message` (or the start of one: see `terminated`), its lines ended as its kind
    /// ends them ([`LineEnds::of`]).
    pub fn scan(message: &[u8]) -> HeaderBlock {
        HeaderBlock::scan_as(message, LineEnds::of(message))
    }

    /// [`HeaderBlock::scan`] with the lines ended by `line_ends` whatever the message's kind.
    pub fn scan_as(message: &[u8], line_ends: LineEnds) -> HeaderBlock {
        let cr_ends = line_ends == LineEnds::LfOrCr;
        let mut lone_cr = false;
        let envelope_end = envelope_len(message, line_ends);
        if envelope_end > 0 {
            lone_cr = cr_ends && ends_in_lone_cr(&message[..envelope_end]);
        }
        let mut start = envelope_end;
        while start < message.len() {
            let end = line_end(message, start, line_ends);
            let line = &message[start..end];
            let complete = ends_certainly(message, end);
            if is_blank(line) {
                return HeaderBlock {
                    envelope_end,
                    fields_end: start,
                    body_start: end,
                    terminated: complete,
                    lone_cr,
                    line_ends,
                };
            }
            if !(is_continuation(line) || field_name(line).is_some()) {
                return HeaderBlock {
                    envelope_end,
                    fields_end: start,
                    body_start: start,
                    terminated: complete,
                    lone_cr,
                    line_ends,
                };
            }
            lone_cr |= cr_ends && ends_in_lone_cr(line);
            start = end;
        }
        HeaderBlock {
            envelope_end,
            fields_end: message.len(),
            body_start: message.len(),
            terminated: false,
            lone_cr,
            line_ends,
        }
    }

    /// A blank line separates the header block from the body.
    pub fn has_separator(&self) -> bool {
        self.body_start > self.fields_end
    }

    /// Where the header section of `message` (the bytes this block was scanned from) ends for
    /// readers that take every line up to the first blank line as header (see the module
    /// docs): the start of that blank line, or the end of `message` if it has none. The same as
    /// `fields_end` unless a line that is neither a field nor a continuation comes before the
    /// blank line. With it, whether bytes after `message` cannot move it, as `terminated`
    /// says: false when `message` ran out first.
    pub fn section_end(&self, message: &[u8]) -> (usize, bool) {
        if self.has_separator() || self.fields_end == message.len() {
            return (self.fields_end, self.terminated);
        }
        let mut start = self.fields_end;
        while start < message.len() {
            let end = line_end(message, start, self.line_ends);
            if is_blank(&message[start..end]) {
                return (start, ends_certainly(message, end));
            }
            start = end;
        }
        (message.len(), false)
    }
}

/// The line ending a message uses: that of its first line (CRLF, LF, or in a message without
/// LF a lone CR); LF if it has no complete line.
pub fn line_ending(message: &[u8]) -> &'static [u8] {
    first_line_ending(message, LineEnds::of(message))
}

/// The ending of the first line of `bytes`, part of a message whose lines `ends` ends (a lone
/// CR only if that message is CR-only); LF if it has no complete line.
pub fn first_line_ending(bytes: &[u8], ends: LineEnds) -> &'static [u8] {
    let end = line_end(bytes, 0, ends);
    match &bytes[..end] {
        [.., b'\r', b'\n'] => b"\r\n",
        [.., b'\r'] => b"\r",
        _ => b"\n",
    }
}

/// End of the line starting at `start` (after what ends it, by `ends`), or `bytes.len()`.
pub fn line_end(bytes: &[u8], start: usize, ends: LineEnds) -> usize {
    if ends == LineEnds::Lf {
        return memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i + 1);
    }
    match memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
        None => bytes.len(),
        Some(i) => {
            let at = start + i;
            if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                at + 2
            } else {
                at + 1
            }
        }
    }
}

/// The lines of `bytes` (ended by `ends`), each with its line ending (the last one may have
/// none).
pub fn lines(bytes: &[u8], ends: LineEnds) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = line_end(bytes, start, ends);
        let line = &bytes[start..end];
        start = end;
        Some(line)
    })
}

/// Length of an mbox `From ` envelope line at the very start of `message` (its lines ended by
/// `ends`), with its line ending; 0 if there is none. A `From ` line without a line ending is
/// no envelope: nothing could follow it, and fields inserted after it would extend it.
pub fn envelope_len(message: &[u8], ends: LineEnds) -> usize {
    let end = line_end(message, 0, ends);
    if message.starts_with(b"From ") && matches!(message[..end].last(), Some(b'\n' | b'\r')) {
        end
    } else {
        0
    }
}

/// The field name of `line` if it starts a header field: one or more printable ASCII bytes
/// other than `:`, optionally white space (obsolete syntax), then `:`. A line without a colon
/// (most body lines; a base64 line is 76 bytes that could all be a name's) is ruled out by
/// one vectorized search for it rather than a scan byte by byte.
pub fn field_name(line: &[u8]) -> Option<&[u8]> {
    let colon = memchr::memchr(b':', line)?;
    let head = &line[..colon];
    let name_len = head
        .iter()
        .position(|&b| !matches!(b, b'!'..=b'9' | b';'..=b'~'))
        .unwrap_or(colon);
    let blanks = head[name_len..].iter().all(|&b| matches!(b, b' ' | b'\t'));
    (name_len > 0 && blanks).then_some(&line[..name_len])
}

/// True for a continuation (folded) line: it starts with a space or tab.
pub fn is_continuation(line: &[u8]) -> bool {
    matches!(line.first(), Some(b' ' | b'\t'))
}

/// True for an empty line (only a line ending).
fn is_blank(line: &[u8]) -> bool {
    matches!(line, b"\n" | b"\r\n" | b"\r")
}

fn ends_in_lone_cr(line: &[u8]) -> bool {
    line.last() == Some(&b'\r')
}

/// True if the line ending before `end` is certain: the line has an ending, and it is not a CR
/// at the very end of the scanned bytes (which an LF after them would make a CRLF).
fn ends_certainly(bytes: &[u8], end: usize) -> bool {
    match bytes[..end].last() {
        Some(b'\n') => true,
        Some(b'\r') => end < bytes.len(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_crlf_and_lone_cr_end_lines() {
        let all: Vec<&[u8]> = lines(b"a\nb\r\nc\rd\n\re", LineEnds::LfOrCr).collect();
        let expected: Vec<&[u8]> = vec![b"a\n", b"b\r\n", b"c\r", b"d\n", b"\r", b"e"];
        assert_eq!(all, expected);
        // In an LF or CRLF message a lone CR is a byte of its line.
        let all: Vec<&[u8]> = lines(b"a\nb\r\nc\rd\n\re", LineEnds::Lf).collect();
        let expected: Vec<&[u8]> = vec![b"a\n", b"b\r\n", b"c\rd\n", b"\re"];
        assert_eq!(all, expected);
        assert_eq!(LineEnds::of(b"a\nb\rc"), LineEnds::Lf);
        assert_eq!(LineEnds::of(b"a\r\nb\rc"), LineEnds::Lf);
        // A stray CR in the first line does not make a message CR-only.
        assert_eq!(LineEnds::of(b"a\rb\nc"), LineEnds::Lf);
        assert_eq!(LineEnds::of(b"a\rb\rc"), LineEnds::LfOrCr);
        assert_eq!(LineEnds::of(b"abc"), LineEnds::Lf);
        assert_eq!(line_ending(b"A: b\rC: d\r"), b"\r");
        assert_eq!(line_ending(b"A: b\rC: d\r\n"), b"\r\n");
        assert_eq!(line_ending(b"A: b\r\n"), b"\r\n");
        assert_eq!(line_ending(b"A: b"), b"\n");
    }

    /// The definition, read byte by byte: a name's run, blanks, then a colon.
    fn field_name_by_scan(line: &[u8]) -> Option<&[u8]> {
        let name_len = line
            .iter()
            .position(|&b| !matches!(b, b'!'..=b'9' | b';'..=b'~'))
            .unwrap_or(line.len());
        if name_len == 0 {
            return None;
        }
        let colon = name_len
            + line[name_len..]
                .iter()
                .position(|&b| !matches!(b, b' ' | b'\t'))?;
        (line[colon] == b':').then_some(&line[..name_len])
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// The search for a colon finds the names the scan does.
        #[test]
        fn field_names_are_those_of_the_scan(line in proptest::collection::vec(
            proptest::sample::select(b"ab: \t\r\n-\xc3".to_vec()), 0..12)) {
            proptest::prop_assert_eq!(field_name(&line), field_name_by_scan(&line));
        }
    }

    #[test]
    fn field_names_follow_rfc_5322() {
        assert_eq!(field_name(b"Subject: x"), Some(&b"Subject"[..]));
        assert_eq!(field_name(b"X-Spam-Flag :NO"), Some(&b"X-Spam-Flag"[..]));
        assert_eq!(field_name(b"meeting moved to 3 : 30 p . m ."), None);
        assert_eq!(field_name(b": no name"), None);
        assert_eq!(field_name(b"no colon"), None);
        assert_eq!(field_name(b"Caf\xc3\xa9: x"), None);
    }

    #[test]
    fn body_starts_at_blank_line_or_first_non_field_line() {
        let b = HeaderBlock::scan(b"From a b\nA: 1\n folded\n\nbody");
        assert_eq!((b.envelope_end, b.fields_end, b.body_start), (9, 22, 23));
        assert!(b.has_separator() && b.terminated && !b.lone_cr);
        let b = HeaderBlock::scan(b"Subject: s\nmeeting moved to 3 : 30\n\nmore");
        assert_eq!((b.fields_end, b.body_start), (11, 11));
        assert!(!b.has_separator() && b.terminated);
        let b = HeaderBlock::scan(b"X-Spam-Flag: NO\rFrom: a@b\rSubject: s\r\rbody\r");
        assert_eq!((b.fields_end, b.body_start), (37, 38));
        assert!(b.lone_cr);
        assert_eq!(HeaderBlock::scan(b"From a b").envelope_end, 0);
        let b = HeaderBlock::scan(b"Subject: only");
        assert_eq!((b.fields_end, b.body_start, b.terminated), (13, 13, false));
    }

    #[test]
    fn a_stray_cr_in_a_field_of_an_lf_or_crlf_message_ends_no_line() {
        // Found by audit: `hello\rthere` ended the header block at `there`, so the MIME
        // fields after it were body text to the tokenizer and the body was never decoded.
        for eol in ["\n", "\r\n"] {
            let message =
                format!("Subject: hello\rthere{eol}Content-Type: text/html{eol}{eol}body");
            let b = HeaderBlock::scan(message.as_bytes());
            assert_eq!(
                b.fields_end,
                message.find("body").unwrap() - eol.len(),
                "{eol:?}"
            );
            assert!(b.has_separator() && !b.lone_cr && b.line_ends == LineEnds::Lf);
        }
        // Where lone CRs end the lines (a CR-only message), it ends one.
        let b = HeaderBlock::scan(b"Subject: hello\rthere\rContent-Type: x\r\rbody");
        assert_eq!((b.fields_end, b.body_start), (15, 15));
        assert!(b.lone_cr && b.line_ends == LineEnds::LfOrCr);
    }

    #[test]
    fn the_section_runs_to_the_first_blank_line_past_lines_that_are_not_fields() {
        let section = |m: &[u8]| HeaderBlock::scan(m).section_end(m);
        assert_eq!(section(b"A: 1\n\nbody"), (5, true));
        assert_eq!(section(b"A: 1\nnot a field\nB: 2\n\nbody\n\n"), (22, true));
        assert_eq!(
            section(b"A: 1\r\nnot a field\r\nB: 2\r\n\r\nbody"),
            (25, true)
        );
        assert_eq!(section(b"A: 1\rnot a field\r\rbody"), (17, true));
        // No blank line: the whole message; and a prefix is certain only past its blank line.
        assert_eq!(section(b"A: 1\nnot a field\nB: 2\n"), (22, false));
        assert_eq!(section(b"A: 1\nnot a field\r"), (17, false));
        assert_eq!(section(b"A: 1\nnot a field\n\r"), (17, false));
        assert_eq!(section(b"A: 1"), (4, false));
        assert_eq!(section(b""), (0, false));
    }

    #[test]
    fn a_prefix_is_terminated_only_when_no_later_byte_can_move_the_boundary() {
        // The last line may still grow into a field, or its CR into a CRLF.
        assert!(!HeaderBlock::scan(b"A: 1\nB").terminated);
        assert!(!HeaderBlock::scan(b"A: 1\n\r").terminated);
        // In an LF message `\rx` is a line yet to end; in a CR-only one, a blank line.
        assert!(!HeaderBlock::scan(b"A: 1\n\rx").terminated);
        assert!(HeaderBlock::scan(b"A: 1\n\rx\n").terminated);
        assert!(HeaderBlock::scan(b"A: 1\r\rx").terminated);
        assert!(HeaderBlock::scan(b"A: 1\nbody line\n").terminated);
        assert!(!HeaderBlock::scan(b"A: 1\nB: 2\n").terminated);
    }
}
