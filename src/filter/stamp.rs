//! Verdict header insertion that leaves every other byte of a message as it was.
//!
//! [`mark`] removes the fields a [`Stamp`] owns (by default `X-Spam-Flag`, `X-Spam-Level`,
//! `X-Spam-Status` and `X-Spam-Unsure`, see [`OWNED_FIELDS`]) already in the header section,
//! with their folded continuation lines, so a sender cannot forge a verdict for later Sieve or
//! procmail rules; inserts the stamp's fields at the top of the header block (after an mbox
//! `From ` envelope line if there is one), in the message's own line ending; and, for a stamp
//! with a subject tag, puts the tag before the first `Subject` field's text (keeping that text,
//! its folds and encoded words as they were; a subject that already starts with the tag, and a
//! message without a `Subject`, are left alone). Everything else is copied unchanged. Which
//! fields a front end writes is [`crate::filter::policy::HeaderStyle`]'s business. Where the
//! header block ends, and which line ending a message uses (LF, CRLF or a lone CR), is decided
//! by the one scanner in [`crate::corpus::header_block`].
//!
//! The header section is every line up to the first blank line (the whole message without
//! one), as Dovecot's Sieve, procmail, maildrop and spamc read it
//! ([`HeaderBlock::section_end`]), not only the fields before a line that is not one, where
//! the scanner ends the header block for the tokenizer: a field after such a line (RFC 5322
//! gives it no place; the message is malformed) is a field to those readers, so a forged
//! verdict there would decide their rules. The fields spamsort owns are removed from all of
//! the section; every other line of it, the non-field lines included, stays as it was.
//!
//! Marking ends a line at a lone CR in any message ([`LineEnds::LfOrCr`]), where the
//! tokenizer does so only in a CR-only message: the owned fields it removes are then those of
//! either reading. The fields it inserts end as the message's kind ends lines, so the kind,
//! and what the tokenizer reads, stays.
//!
//! Readers such as Sieve's also end lines at LF alone, where marking ends one at a lone CR too: a line
//! ending in a lone CR before a CRLF (`Subject: x\r\r\n`), or a lone CR after an LF, is a blank
//! line to spamsort and none to them, so their header section runs on to their own blank line
//! (an LF followed by LF or CRLF). The owned fields they read as fields there (lines that start
//! after an LF) are removed too; every other byte there stays.

use crate::corpus::header_block::{self, HeaderBlock, LineEnds, field_name, is_continuation};

/// Header fields spamsort owns with the default header style: removed from incoming mail
/// before its own are added.
pub const OWNED_FIELDS: [&str; 4] = [
    "x-spam-flag",
    "x-spam-status",
    "x-spam-level",
    "x-spam-unsure",
];

/// What to put into a message's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The fields to insert, in order, without line endings; `\n` inside one starts a folded
    /// continuation line (written in the message's line ending).
    pub lines: Vec<String>,
    /// Names of the fields removed first: whole names, ASCII case ignored, never a prefix
    /// match (a field that merely starts like one stays). A header style's names are its
    /// prefix and fixed suffixes, and it refuses a prefix that would name another program's
    /// field (see [`HeaderStyle::new`](crate::filter::policy::HeaderStyle::new)).
    pub owned: Vec<String>,
    /// Put before the text of the message's first `Subject` field.
    pub subject_tag: Option<String>,
}

/// How much of the message [`mark`] is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// All of it.
    WholeMessage,
    /// Its start; the rest follows unchanged. The header block must end inside it.
    Head,
}

/// Length of the header block: up to and including the blank line that ends it; without one,
/// up to the first line that is neither a field nor a continuation, or the whole message.
pub fn header_block_len(message: &[u8]) -> usize {
    HeaderBlock::scan_as(message, LineEnds::LfOrCr).body_start
}

/// Length of the header section whose owned fields [`mark`] removes (see the module docs): up
/// to the first blank line (not including it), or the whole message without one; past a blank
/// line that readers ending lines at LF alone do not see as one, up to theirs.
pub fn header_section_len(message: &[u8]) -> usize {
    Section::of(message).lf_end
}

/// The part of a message that marking works on.
struct Section {
    /// End of an mbox `From ` envelope line at the very start; 0 if none.
    envelope_end: usize,
    /// End of the header section (see the module docs): the start of its first blank line, or
    /// the end of the message.
    end: usize,
    /// End of the header section as readers that end lines at LF alone see it (see the module
    /// docs, [`lf_section_end`]): at least `end`.
    lf_end: usize,
    /// No byte after the message's can move `end` or `lf_end` (see
    /// [`HeaderBlock::section_end`]).
    certain: bool,
}

impl Section {
    fn of(message: &[u8]) -> Section {
        let block = HeaderBlock::scan_as(message, LineEnds::LfOrCr);
        let (end, certain) = block.section_end(message);
        let (lf_end, lf_certain) = lf_section_end(message, end);
        Section {
            envelope_end: block.envelope_end,
            end,
            lf_end,
            certain: certain && lf_certain,
        }
    }
}

/// True if a line starts at `at` for readers that end lines at LF alone: the message's start,
/// or right after an LF.
fn starts_lf_line(message: &[u8], at: usize) -> bool {
    at == 0 || message.get(at - 1) == Some(&b'\n')
}

/// Where the header section ends for readers that end lines at LF alone, given `end`, where it
/// ends for spamsort (the start of its first blank line, or the message's end): the start of
/// the first of their lines from `end` on that is empty or a CR alone, or the end of the
/// message without one. With whether no byte after the message's can move it. Every such line
/// is also a blank line to spamsort, so this is `end` itself unless `end`'s blank line is one
/// only to spamsort (a lone CR).
fn lf_section_end(message: &[u8], end: usize) -> (usize, bool) {
    let mut start = end;
    if !starts_lf_line(message, start) {
        match memchr::memchr(b'\n', &message[start..]) {
            Some(i) => start += i + 1,
            None => return (message.len(), false),
        }
    }
    loop {
        match &message[start..] {
            [b'\n', ..] | [b'\r', b'\n', ..] => return (start, true),
            // A CR at the end may yet be followed by an LF.
            [] | [b'\r'] => return (message.len(), false),
            rest => match memchr::memchr(b'\n', rest) {
                Some(i) => start += i + 1,
                None => return (message.len(), false),
            },
        }
    }
}

/// True if `line` starts a header field named one of `owned`.
fn is_owned_field(line: &[u8], owned: &[impl AsRef<str>]) -> bool {
    field_name(line).is_some_and(|name| {
        owned
            .iter()
            .any(|f| name.eq_ignore_ascii_case(f.as_ref().as_bytes()))
    })
}

/// Removes the default owned fields ([`OWNED_FIELDS`], with their continuation lines) from
/// the header section and returns the rest of the message, byte for byte.
pub fn strip_owned_fields(message: &[u8]) -> Vec<u8> {
    strip_block(message, &Section::of(message), &OWNED_FIELDS, Subject::Keep).0
}

/// The message with the fields named `owned` removed and a subject tag `tag` taken off its
/// first `Subject` (with the white space around it: see
/// [`HeaderStyle::unmarked`](crate::filter::policy::HeaderStyle::unmarked)), for comparing
/// messages before and after marking.
pub fn unmarked(message: &[u8], owned: &[String], tag: Option<&str>) -> Vec<u8> {
    let subject = tag.map_or(Subject::Keep, Subject::Untag);
    strip_block(message, &Section::of(message), owned, subject).0
}

/// What to do with the first `Subject` field while stripping.
#[derive(Clone, Copy)]
enum Subject<'a> {
    Keep,
    /// Put this tag before its text, unless the text starts with it.
    Tag(&'a str),
    /// Take off what `Tag` put before the text (a space and this tag, or this tag and a space
    /// after a colon it was glued to), if it is there; a subject without it is kept as it is.
    Untag(&'a str),
}

/// Spaces and tabs at the start of `bytes`.
fn blank_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

/// The first line of a `Subject` field edited as `edit` says, or `None` to keep it.
fn edit_subject(line: &[u8], edit: Subject<'_>) -> Option<Vec<u8>> {
    // field_name found a name and a colon, so there is one.
    let colon = memchr::memchr(b':', line)?;
    let (name, after) = line.split_at(colon + 1);
    let text = &after[blank_len(after)..];
    match edit {
        Subject::Keep => None,
        Subject::Tag(tag) if text.starts_with(tag.as_bytes()) => None,
        Subject::Tag(tag) => {
            // The tag goes where the text starts, a space keeping it apart from the text (and an
            // encoded word after it valid): after the field's own white space, or glued to the
            // colon as the text was. Either way `Untag` gives the line back byte for byte.
            let glued = after
                .first()
                .is_some_and(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
            Some(if glued {
                [name, tag.as_bytes(), b" ", after].concat()
            } else {
                [name, b" ", tag.as_bytes(), after].concat()
            })
        }
        Subject::Untag(tag) => {
            let tag = tag.as_bytes();
            let rest = match after.strip_prefix(b" ").and_then(|a| a.strip_prefix(tag)) {
                Some(rest) => rest,
                None => after.strip_prefix(tag)?.strip_prefix(b" ")?,
            };
            Some([name, rest].concat())
        }
    }
}

/// The owned fields (and their continuation lines) removed from the header section, the first
/// `Subject` edited, the rest of the message byte for byte. The flag is as [`strip_head`]'s.
fn strip_block(
    message: &[u8],
    section: &Section,
    owned: &[impl AsRef<str>],
    subject: Subject<'_>,
) -> (Vec<u8>, bool) {
    let rest = &message[section.lf_end..];
    let (mut out, joined) = strip_head(message, section, owned, subject, rest.len());
    out.extend_from_slice(rest);
    (out, joined)
}

/// [`strip_block`] up to the end of the header section (`section.lf_end`), whose bytes from
/// there on follow unchanged: only the head is copied, into a buffer with `room` bytes to
/// spare. Between `section.end` and `section.lf_end` only the owned fields that readers ending
/// lines at LF alone see (see the module docs) are removed, with their continuations. The
/// flag is set when a removal brought a line ending in a lone CR next to one starting with LF,
/// the one that starts the rest of the message included (they would read as one CRLF: a line
/// lost), or next to a blank CRLF line (see [`Kept::joined`]).
fn strip_head(
    message: &[u8],
    section: &Section,
    owned: &[impl AsRef<str>],
    subject: Subject<'_>,
    room: usize,
) -> (Vec<u8>, bool) {
    let mut out = Kept::with_capacity(section.lf_end + 64 + room);
    out.bytes
        .extend_from_slice(&message[..section.envelope_end]);
    let mut skipping = false;
    let mut subject_seen = false;
    for line in header_block::lines(
        &message[section.envelope_end..section.end],
        LineEnds::LfOrCr,
    ) {
        if !is_continuation(line) {
            skipping = is_owned_field(line, owned);
            let is_subject = field_name(line).is_some_and(|n| n.eq_ignore_ascii_case(b"subject"));
            if !skipping && is_subject && !subject_seen {
                subject_seen = true;
                if let Some(edited) = edit_subject(line, subject) {
                    out.keep(&edited);
                    continue;
                }
            }
        }
        out.keep_unless(skipping, line);
    }
    strip_lf_lines(message, section, owned, &mut out);
    out.check_before(&message[section.lf_end..]);
    (out.bytes, out.joined)
}

/// The head being stripped, and whether a removal made a line ending of it read otherwise.
struct Kept {
    bytes: Vec<u8>,
    /// A line was removed since bytes were last kept.
    removed: bool,
    /// A removal brought a line ending in a lone CR next to one starting with LF (they would
    /// read as one CRLF: a line lost), or next to a blank CRLF line (which readers ending lines
    /// at LF alone would then no longer see as blank, so what follows it would become header
    /// to them).
    joined: bool,
}

impl Kept {
    fn with_capacity(capacity: usize) -> Kept {
        Kept {
            bytes: Vec::with_capacity(capacity),
            removed: false,
            joined: false,
        }
    }

    /// Notes whether `next`, the bytes kept next, meet a lone CR across a removal.
    fn check_before(&mut self, next: &[u8]) {
        // Lines of the input never split a CRLF, so a CR then LF here follows a removal; a line
        // ending in a lone CR before a blank CRLF line is the input's own unless one went.
        let after_cr = self.bytes.last() == Some(&b'\r');
        self.joined |= after_cr && next.first() == Some(&b'\n')
            || after_cr && self.removed && next.starts_with(b"\r\n");
    }

    fn keep(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.check_before(bytes);
        self.removed = false;
        self.bytes.extend_from_slice(bytes);
    }

    /// Keeps `line`, or notes its removal if `remove`.
    fn keep_unless(&mut self, remove: bool, line: &[u8]) {
        if remove {
            self.removed = true;
        } else {
            self.keep(line);
        }
    }
}

/// The part of the header section past spamsort's blank line that readers ending lines at LF
/// alone still read as header (`section.end` to `section.lf_end`), kept in `out` without the
/// owned fields among their lines (those that start after an LF) and those fields'
/// continuations. The start of a line of theirs that began before `section.end` stays.
fn strip_lf_lines(message: &[u8], section: &Section, owned: &[impl AsRef<str>], out: &mut Kept) {
    let part = &message[section.end..section.lf_end];
    let mut skipping = false;
    let mut start = 0;
    while start < part.len() {
        let end = memchr::memchr(b'\n', &part[start..]).map_or(part.len(), |i| start + i + 1);
        let line = &part[start..end];
        if !starts_lf_line(message, section.end + start) {
            skipping = false;
        } else if !is_continuation(line) {
            skipping = is_owned_field(line, owned);
        }
        out.keep_unless(skipping, line);
        start = end;
    }
}

/// Why a message cannot be marked without changing its other bytes; it is then passed on
/// unmarked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unmarkable {
    /// The header block opens with a folded (white-space) line: inserted fields would absorb
    /// it, and a later strip of them would lose it.
    #[error("the header block starts with a folded line, so no field can be added safely")]
    FoldedFirstLine,
    /// The header section (see the module docs) does not certainly end inside the head that
    /// was read.
    #[error("the header block does not end within the first {head} bytes")]
    HeaderBlockTooLong {
        /// How many bytes were read.
        head: usize,
    },
}

/// The message (or its head, see [`Extent`]) marked with `stamp` (see the module docs), or why
/// that cannot be done without changing the rest ([`Unmarkable`]).
pub fn mark(message: &[u8], stamp: &Stamp, extent: Extent) -> Result<Vec<u8>, Unmarkable> {
    let section = Section::of(message);
    if extent == Extent::Head && !section.certain {
        return Err(Unmarkable::HeaderBlockTooLong {
            head: message.len(),
        });
    }
    let subject = stamp
        .subject_tag
        .as_deref()
        .map_or(Subject::Keep, Subject::Tag);
    insert(message, &section, &stamp.owned, subject, &stamp.lines)
}

/// The message with the default owned fields removed and `lines` inserted at the top of the
/// header block, or why that cannot be done without changing the rest ([`Unmarkable`]).
pub fn add_header_lines(message: &[u8], lines: &[String]) -> Result<Vec<u8>, Unmarkable> {
    insert(
        message,
        &Section::of(message),
        &OWNED_FIELDS,
        Subject::Keep,
        lines,
    )
}

/// [`add_header_lines`] for `head`, the start of a longer message whose other bytes follow
/// unchanged: the marked head followed by them is the marked message. Fails also when the
/// header section does not certainly end inside `head`.
pub fn add_header_lines_to_head(head: &[u8], lines: &[String]) -> Result<Vec<u8>, Unmarkable> {
    let stamp = Stamp {
        lines: lines.to_vec(),
        owned: OWNED_FIELDS.map(String::from).to_vec(),
        subject_tag: None,
    };
    mark(head, &stamp, Extent::Head)
}

/// The line ending of the fields inserted into `message` before `after` (then `body`): that
/// of the line they go before (an LF there must not follow a lone CR of ours), else of the
/// first line, as the message's kind ends lines ([`LineEnds::of`]). So a message with LF never
/// gets a lone CR there: readers ending lines at LF (and the tokenizer) would read the fields
/// and the line after them as one field, a verdict holding the Subject.
fn inserted_line_ending(message: &[u8], after: &[u8], body: &[u8]) -> &'static [u8] {
    let ends = LineEnds::of(message);
    let has_eol = |bytes: &[u8]| match ends {
        LineEnds::Lf => memchr::memchr(b'\n', bytes).is_some(),
        LineEnds::LfOrCr => memchr::memchr2(b'\n', b'\r', bytes).is_some(),
    };
    if has_eol(after) {
        header_block::first_line_ending(after, ends)
    } else if has_eol(body) {
        header_block::first_line_ending(body, ends)
    } else {
        header_block::line_ending(message)
    }
}

fn insert(
    message: &[u8],
    section: &Section,
    owned: &[impl AsRef<str>],
    subject: Subject<'_>,
    lines: &[String],
) -> Result<Vec<u8>, Unmarkable> {
    // Only the head is copied into a new buffer before `out`: the body is copied once, into
    // `out` (a 1 MiB message took three times its size at once when the whole was stripped
    // into a copy first).
    let (mut head, joined) = strip_head(message, section, owned, subject, 0);
    if joined {
        // Removing a forged field would leave a line ending in a lone CR before one starting
        // with LF, which would then read as one CRLF and lose a line: every field is kept
        // instead, and the message is still marked, its verdict's fields first. Left unmarked,
        // it would pass any filter that reads them (a sender's way past the filter).
        head = strip_head(message, section, &[] as &[&str], subject, 0).0;
    }
    let body = &message[section.lf_end..];
    let insert_at = section.envelope_end;
    // What follows the inserted fields: the head's rest, then the body.
    let after = &head[insert_at..];
    if is_continuation(if after.is_empty() { body } else { after }) {
        return Err(Unmarkable::FoldedFirstLine);
    }
    // A line ending never spans `after` and `body`: a lone CR ending `after` before an LF is
    // `joined`.
    let eol = inserted_line_ending(message, after, body);
    let mut out = Vec::with_capacity(head.len() + body.len() + 320);
    out.extend_from_slice(&head[..insert_at]);
    for line in lines {
        for (i, part) in line.split('\n').enumerate() {
            if i > 0 {
                out.extend_from_slice(eol);
            }
            out.extend_from_slice(part.as_bytes());
        }
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(after);
    out.extend_from_slice(body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> Vec<String> {
        vec!["X-Spam-Flag: YES".into(), "X-Spam-Status: Yes".into()]
    }

    /// `insert` as it was before it copied only the head, from the stripping on: the whole
    /// message stripped into a copy first ([`strip_block`], which still makes it), the fields
    /// inserted before the copy's rest. It checks the refusals and the line ending chosen from
    /// two parts; the flag of a lone CR ending the head before an LF opening the body comes
    /// from `strip_head` on both sides, and has its own test
    /// (`a_removal_that_would_merge_a_lone_cr_with_an_lf_keeps_the_fields_and_marks`).
    fn insert_whole(
        message: &[u8],
        subject: Subject<'_>,
        lines: &[String],
    ) -> Result<Vec<u8>, Unmarkable> {
        let section = Section::of(message);
        let (mut stripped, joined) = strip_block(message, &section, &OWNED_FIELDS, subject);
        if joined {
            stripped = strip_block(message, &section, &[] as &[&str], subject).0;
        }
        let rest = &stripped[section.envelope_end..];
        if is_continuation(rest) {
            return Err(Unmarkable::FoldedFirstLine);
        }
        let eol = inserted_line_ending(message, rest, b"");
        let mut out = stripped[..section.envelope_end].to_vec();
        for line in lines {
            let parts: Vec<&[u8]> = line.split('\n').map(str::as_bytes).collect();
            out.extend(parts.join(eol));
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(rest);
        Ok(out)
    }

    #[test]
    fn inserts_at_top_and_removes_forged_fields() {
        let msg = b"Subject: hi\nX-Spam-Flag: NO\nx-spam-status: No,\n\tscore=0.0\nTo: a\n\nX-Spam-Flag: body stays\n";
        let out = add_header_lines(msg, &lines()).unwrap();
        assert_eq!(out, b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: hi\nTo: a\n\nX-Spam-Flag: body stays\n");
    }

    #[test]
    fn follows_crlf_and_keeps_envelope_line_first() {
        let msg = b"From a@b Mon Jan  1 00:00:00 2024\r\nSubject: x\r\n\r\nbody\r\n";
        let out = add_header_lines(msg, &lines()).unwrap();
        assert_eq!(out, b"From a@b Mon Jan  1 00:00:00 2024\r\nX-Spam-Flag: YES\r\nX-Spam-Status: Yes\r\nSubject: x\r\n\r\nbody\r\n");
    }

    /// The two lines `add_header_lines` put in `out`, taken out again; `None` unless they
    /// are there, right after the envelope line, in one line ending.
    fn without_added_lines(out: &[u8]) -> Option<Vec<u8>> {
        let at = header_block::envelope_len(out, LineEnds::LfOrCr);
        let mut rest = header_block::lines(&out[at..], LineEnds::LfOrCr);
        let (flag, status) = (rest.next()?, rest.next()?);
        let eol = &flag[b"X-Spam-Flag: YES".len()..];
        if flag != [&b"X-Spam-Flag: YES"[..], eol].concat()
            || status != [&b"X-Spam-Status: Yes"[..], eol].concat()
        {
            return None;
        }
        Some([&out[..at], &out[at + flag.len() + status.len()..]].concat())
    }

    /// The lines of `message`'s header section that a reader may take for fields: spamsort's
    /// lines up to its blank line, then those that start after an LF up to the blank line of
    /// readers ending lines at LF alone (see the module docs).
    fn section_lines(message: &[u8]) -> Vec<&[u8]> {
        let section = Section::of(message);
        let mut lines: Vec<&[u8]> = header_block::lines(
            &message[section.envelope_end..section.end],
            LineEnds::LfOrCr,
        )
        .collect();
        let mut at = section.end;
        for line in message[section.end..section.lf_end].split_inclusive(|&b| b == b'\n') {
            if starts_lf_line(message, at) {
                lines.push(line);
            }
            at += line.len();
        }
        lines
    }

    #[test]
    fn a_forged_field_past_a_blank_line_only_spamsort_sees_is_removed() {
        // Regression: "\r\r\n" is a line ending in a lone CR, then a blank line, to spamsort;
        // Dovecot's Sieve, procmail, maildrop and spamc end lines at LF alone and read the
        // forged fields after it as fields, which stayed.
        let msg = b"Subject: s\r\r\nX-Spam-Flag: NO\nX-Spam-Status: No,\n\tscore=-9\nTo: a\n\nX-Spam-Flag: NO\n";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            b"X-Spam-Flag: YES\r\nX-Spam-Status: Yes\r\nSubject: s\r\r\nTo: a\n\nX-Spam-Flag: NO\n"
        );
        assert_eq!(
            header_section_len(msg),
            msg.len() - b"\nX-Spam-Flag: NO\n".len()
        );
        // A lone CR blank line after an LF; a CR-only message has no LF line after its first.
        let msg = b"Subject: s\n\rX-Spam-Flag: NO\nX-Spam-Flag: NO\r\n\r\nb";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: s\n\rX-Spam-Flag: NO\n\r\nb"
        );
        let msg = b"Subject: s\r\rX-Spam-Flag: NO\r";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            [&b"X-Spam-Flag: YES\rX-Spam-Status: Yes\r"[..], msg].concat()
        );
        // Removing a forged field must not make such a blank line either: the body's field
        // would become header to them. Every field is kept instead, the verdict's first.
        let msg = b"Subject: s\rX-Spam-Flag: NO\n\r\nX-Spam-Flag: NO\n";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            [&b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"[..], msg].concat()
        );
        // A head is marked only once their blank line is in it too.
        let head = b"Subject: s\r\r\nbody";
        assert_eq!(
            add_header_lines_to_head(head, &lines()),
            Err(Unmarkable::HeaderBlockTooLong { head: head.len() })
        );
        assert_eq!(
            add_header_lines_to_head(b"Subject: s\r\r\nX-Spam-Flag: NO\n\nbo", &lines()).unwrap(),
            b"X-Spam-Flag: YES\r\nX-Spam-Status: Yes\r\nSubject: s\r\r\n\nbo"
        );
    }

    proptest::proptest! {
        /// Whatever the bytes and line endings (LF, CRLF, lone CR), the output minus the two
        /// added lines is the input minus the owned fields (the input itself where removing
        /// them would merge a lone CR with an LF), everything from the first blank line on is
        /// the same bytes, and the header section (up to that line, past lines that are not
        /// fields) carries the fields added first, and no other (but such kept ones).
        #[test]
        fn passthrough_is_byte_exact(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(b"From a@b x\n".to_vec()),
                    proptest::strategy::Just(b"From a@b x\r".to_vec()),
                    proptest::strategy::Just(b"X-Spam-Flag: NO\n".to_vec()),
                    proptest::strategy::Just(b"X-Spam-Flag: NO\r".to_vec()),
                    proptest::strategy::Just(b"x-spam-status: No,\r\n\tscore=1\r\n".to_vec()),
                    proptest::strategy::Just(b"X-Spam-Level :\r **\r".to_vec()),
                    proptest::strategy::Just(b"Subject: s\n".to_vec()),
                    proptest::strategy::Just(b"Subject: s\r".to_vec()),
                    proptest::strategy::Just(b"body line: not a field\n".to_vec()),
                    proptest::strategy::Just(b"\n".to_vec()),
                    proptest::strategy::Just(b"\r\n".to_vec()),
                    proptest::strategy::Just(b"\r".to_vec()),
                    proptest::strategy::Just(b" folded\n".to_vec()),
                    proptest::strategy::Just(b" folded\r".to_vec()),
                    proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
                ],
                0..12,
            )
        ) {
            let input: Vec<u8> = parts.concat();
            proptest::prop_assert_eq!(
                add_header_lines(&input, &lines()),
                insert_whole(&input, Subject::Keep, &lines())
            );
            let section = Section::of(&input);
            let (stripped, joined) = strip_block(&input, &section, &OWNED_FIELDS, Subject::Keep);
            let Ok(out) = add_header_lines(&input, &lines()) else {
                // Refused only when a folded line opens the header block.
                let kept = if joined { &input } else { &stripped };
                proptest::prop_assert!(is_continuation(&kept[section.envelope_end..]));
                return Ok(());
            };
            let rest = if joined { input.clone() } else { stripped };
            // The kind of line ends stays, so the tokenizer reads the copy as the original.
            proptest::prop_assert_eq!(LineEnds::of(&out), LineEnds::of(&input));
            proptest::prop_assert_eq!(without_added_lines(&out), Some(rest));
            proptest::prop_assert_eq!(strip_owned_fields(&out), strip_owned_fields(&input));
            // Everything from the blank line that ends the header section for every reader on
            // is the same bytes (its own ending included, unless a blank line only spamsort
            // sees became one for all: `\r\r\n` after its forged field went).
            proptest::prop_assert!(out.ends_with(&input[header_section_len(&input)..]));
            let head = section_lines(&out);
            let count = |name: &[u8]| {
                head.iter()
                    .filter(|l| field_name(l).is_some_and(|n| n.eq_ignore_ascii_case(name)))
                    .count()
            };
            if !joined {
                proptest::prop_assert_eq!(count(b"X-Spam-Flag"), 1);
                proptest::prop_assert_eq!(count(b"X-Spam-Status"), 1);
            }
        }
    }

    #[test]
    fn cr_only_message_with_forged_flag_first_is_kept() {
        let msg = b"X-Spam-Flag: NO\rFrom: a@b\rSubject: s\r\rbody\r";
        let out = add_header_lines(msg, &lines()).unwrap();
        assert_eq!(
            out,
            b"X-Spam-Flag: YES\rX-Spam-Status: Yes\rFrom: a@b\rSubject: s\r\rbody\r"
        );
        assert_eq!(header_block_len(&out), out.len() - b"body\r".len());
    }

    #[test]
    fn a_forged_field_after_a_line_that_is_not_a_field_is_removed_up_to_the_blank_line() {
        // Regression: the header block ends at the line that is not a field, and the forged
        // verdict after it stayed, where Dovecot's Sieve, procmail and spamc, reading fields up
        // to the blank line, read it as a field.
        let msg = b"Subject: s\nmeeting moved to 3 : 30\nX-Spam-Flag: NO\n\nX-Spam-Flag: NO\n";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: s\nmeeting moved to 3 : 30\n\n\
              X-Spam-Flag: NO\n"
        );
        // Without a blank line, the whole message is that section.
        let msg = b"Subject: s\r\nhello\r\nX-Spam-Status: No,\r\n\tscore=0\r\nbye\r\n";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            b"X-Spam-Flag: YES\r\nX-Spam-Status: Yes\r\nSubject: s\r\nhello\r\nbye\r\n"
        );
        // A head is marked only once that section ends inside it.
        let head = b"Subject: s\nhello\nX-Spam-Flag: NO\n";
        assert_eq!(
            add_header_lines_to_head(head, &lines()),
            Err(Unmarkable::HeaderBlockTooLong { head: head.len() })
        );
        assert_eq!(
            add_header_lines_to_head(b"Subject: s\nhello\nX-Spam-Flag: NO\n\nbo", &lines())
                .unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: s\nhello\n\nbo"
        );
        assert_eq!(header_section_len(b"A: 1\nhello\nB: 2\n\nbody"), 16);
    }

    #[test]
    fn a_removal_that_would_merge_a_lone_cr_with_an_lf_keeps_the_fields_and_marks() {
        // Without the forged field, "s\r" and the blank "\n" would read as one CRLF: it stays,
        // and the verdict's fields come first (the message was passed on unmarked, a sender's
        // way past the filter), ended by LF as the message's lines are: ended by a lone CR they
        // swallowed the Subject into the verdict's first field for readers ending lines at LF.
        let msg = b"Subject: s\rX-Spam-Flag: NO\n\nbody";
        assert_eq!(
            add_header_lines(msg, &lines()).unwrap(),
            [&b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"[..], msg].concat()
        );
        for head in [&msg[..], b"Subject: s\rX-Spam-Flag: NO\n\n"] {
            assert_eq!(
                add_header_lines_to_head(head, &lines()).unwrap(),
                [&b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"[..], head].concat()
            );
        }
        // A lone-CR first line before a blank LF line: the inserted fields take the LF.
        assert_eq!(
            add_header_lines(b"X-Spam-Flag: NO\rX-Spam-Level: x\n\nbody", &lines()).unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n\nbody"
        );
    }

    #[test]
    fn the_fields_of_a_message_with_lf_never_end_in_a_lone_cr() {
        // Regression: a stray CR in the first field (`Subject: hello\rthere`) made the added
        // fields end in lone CRs, so readers ending lines at LF (Dovecot, procmail, the user's
        // mail program) read the verdict, and the Subject after it, as one field: the message
        // lost its Subject.
        for (msg, eol) in [
            (
                &b"Subject: hello\rthere\nFrom: a@b\n\nbody\n"[..],
                &b"\n"[..],
            ),
            (
                b"Subject: hello\rthere\r\nFrom: a@b\r\n\r\nbody\r\n",
                b"\r\n",
            ),
            (b"Subject: hello\rthere\rFrom: a@b\r\rbody\r", b"\r"),
        ] {
            let marked = [
                &b"X-Spam-Flag: YES"[..],
                eol,
                b"X-Spam-Status: Yes",
                eol,
                msg,
            ]
            .concat();
            assert_eq!(add_header_lines(msg, &lines()).unwrap(), marked);
        }
    }

    #[test]
    fn a_head_is_marked_only_when_its_header_block_ends_inside_it() {
        for head in [&b"Subject: s\nX-Spam-Fl"[..], b"Subject: s\r"] {
            assert_eq!(
                add_header_lines_to_head(head, &lines()),
                Err(Unmarkable::HeaderBlockTooLong { head: head.len() })
            );
        }
        // A CR-only head: its blank line is none to readers ending lines at LF alone, who
        // read a field that starts after an LF later on as header (see the module docs).
        let head = b"X-Spam-Flag: NO\rSubject: s\r\rbo";
        assert_eq!(
            add_header_lines_to_head(head, &lines()),
            Err(Unmarkable::HeaderBlockTooLong { head: head.len() })
        );
        assert_eq!(
            add_header_lines(head, &lines()).unwrap(),
            b"X-Spam-Flag: YES\rX-Spam-Status: Yes\rSubject: s\r\rbo"
        );
    }

    #[test]
    fn no_separator_and_empty_input() {
        let cases: [(&[u8], &[u8]); 4] = [
            (
                b"Subject: only",
                b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: only",
            ),
            (b"", b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"),
            // Regression (found by the stamp fuzz target): fields after an envelope line
            // without a line ending would have extended it.
            (b"From ", b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nFrom "),
            (b"\rFrom ", b"X-Spam-Flag: YES\rX-Spam-Status: Yes\r\rFrom "),
        ];
        for (input, expected) in cases {
            assert_eq!(add_header_lines(input, &lines()).unwrap(), expected);
        }
        // Regression (found by the proptest): a folded line opening the message would be
        // absorbed into the inserted field and lost when the field is later stripped; such a
        // message is left unmarked instead.
        assert_eq!(
            add_header_lines(b" folded\nSubject: x\n\nbody", &lines()),
            Err(Unmarkable::FoldedFirstLine)
        );
        assert_eq!(
            add_header_lines(b"From a\n\tfolded\n", &lines()),
            Err(Unmarkable::FoldedFirstLine)
        );
        assert_eq!(header_block_len(b"A: b\n\nbody"), 6);
        assert_eq!(header_block_len(b"A: b\nno blank line"), 5);
        assert_eq!(header_block_len(b"A: b"), 4);
    }

    fn tag_stamp(owned: &[&str]) -> Stamp {
        Stamp {
            lines: vec!["X-Spam-Flag: YES".into()],
            owned: owned.iter().map(|s| s.to_string()).collect(),
            subject_tag: Some("***SPAM***".into()),
        }
    }

    #[test]
    fn subject_tag_keeps_folded_encoded_and_cr_only_subjects_byte_for_byte() {
        let stamp = tag_stamp(&OWNED_FIELDS);
        let cases: [(&[u8], &[u8]); 7] = [
            (
                b"Subject: cheap pills\nTo: a\n\nbody\n",
                b"X-Spam-Flag: YES\nSubject: ***SPAM*** cheap pills\nTo: a\n\nbody\n",
            ),
            // Folded, CRLF: the continuation line stays as it was.
            (
                b"Subject: cheap\r\n\tpills\r\n\r\nbody\r\n",
                b"X-Spam-Flag: YES\r\nSubject: ***SPAM*** cheap\r\n\tpills\r\n\r\nbody\r\n",
            ),
            // An encoded word stays an encoded word, apart from the tag.
            (
                b"Subject: =?UTF-8?B?w6lk?=\n\nb",
                b"X-Spam-Flag: YES\nSubject: ***SPAM*** =?UTF-8?B?w6lk?=\n\nb",
            ),
            // CR-only line endings, no space after the colon.
            (
                b"Subject:x\rTo: a\r\rbody\r",
                b"X-Spam-Flag: YES\rSubject:***SPAM*** x\rTo: a\r\rbody\r",
            ),
            // An empty subject whose text is all on the folded line.
            (
                b"Subject:\n cheap\n\nb",
                b"X-Spam-Flag: YES\nSubject: ***SPAM***\n cheap\n\nb",
            ),
            // Tagged already (filtered twice): left alone; only the first Subject is tagged.
            (
                b"Subject:  ***SPAM*** x\nSubject: y\n\nb",
                b"X-Spam-Flag: YES\nSubject:  ***SPAM*** x\nSubject: y\n\nb",
            ),
            // No Subject: none is made up; a Subject line in the body is body.
            (
                b"To: a\n\nSubject: body\n",
                b"X-Spam-Flag: YES\nTo: a\n\nSubject: body\n",
            ),
        ];
        for (input, expected) in cases {
            let out = mark(input, &stamp, Extent::WholeMessage).unwrap();
            assert_eq!(
                out,
                expected,
                "{}",
                String::from_utf8_lossy(&out).escape_debug()
            );
            let owned = OWNED_FIELDS.map(String::from);
            assert_eq!(
                unmarked(&out, &owned, Some("***SPAM***")),
                unmarked(input, &owned, Some("***SPAM***"))
            );
        }
    }

    #[test]
    fn a_header_prefix_leaves_upstream_spamassassin_fields_alone() {
        let stamp = Stamp {
            lines: vec!["X-Spamsort-Flag: YES".into()],
            owned: vec!["X-Spamsort-Flag".into(), "X-Spamsort-Status".into()],
            subject_tag: None,
        };
        let msg = b"X-Spam-Flag: NO\nX-Spamsort-Status: forged\n\tfolded\nX-Spam-Status: No, score=1.0\n\nb";
        assert_eq!(
            mark(msg, &stamp, Extent::WholeMessage).unwrap(),
            b"X-Spamsort-Flag: YES\nX-Spam-Flag: NO\nX-Spam-Status: No, score=1.0\n\nb"
        );
    }

    #[test]
    fn folded_stamp_lines_take_the_message_line_ending() {
        let stamp = Stamp {
            lines: vec!["X-Spam-Status: Yes\n\tautolearn=no".into()],
            owned: OWNED_FIELDS.map(String::from).to_vec(),
            subject_tag: None,
        };
        assert_eq!(
            mark(b"A: b\r\rc", &stamp, Extent::WholeMessage).unwrap(),
            b"X-Spam-Status: Yes\r\tautolearn=no\rA: b\r\rc"
        );
    }

    #[test]
    fn setting_a_tag_aside_leaves_an_untagged_subject_byte_for_byte() {
        let owned = OWNED_FIELDS.map(String::from);
        for msg in [
            &b"Subject: hi\n\nb"[..],
            b"Subject:hi\r\n\r\nb",
            b"Subject:\tx\n\nb",
        ] {
            assert_eq!(unmarked(msg, &owned, Some("***SPAM***")), msg);
        }
    }

    proptest::proptest! {
        /// With a subject tag, marking changes nothing but the added fields and the subject's
        /// start: setting the marks aside gives the input with them set aside, the body is
        /// the same bytes, and marking a head then appending the rest is marking the whole.
        #[test]
        fn subject_tag_changes_only_the_subject_start(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(b"From a@b x\r".to_vec()),
                    proptest::strategy::Just(b"Subject: s\n".to_vec()),
                    proptest::strategy::Just(b"subject:s\r".to_vec()),
                    proptest::strategy::Just(b"Subject:\r\n".to_vec()),
                    proptest::strategy::Just(b"Subject: ***SPAM***\n".to_vec()),
                    proptest::strategy::Just(b" folded\n".to_vec()),
                    proptest::strategy::Just(b"\tfolded\r\n".to_vec()),
                    proptest::strategy::Just(b"X-Spam-Flag: NO\r".to_vec()),
                    proptest::strategy::Just(b"To: a\n".to_vec()),
                    proptest::strategy::Just(b"\n".to_vec()),
                    proptest::strategy::Just(b"\r\n".to_vec()),
                    proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8),
                ],
                0..10,
            ),
            split in 0usize..100,
        ) {
            let input: Vec<u8> = parts.concat();
            let stamp = tag_stamp(&OWNED_FIELDS);
            let owned = OWNED_FIELDS.map(String::from);
            let whole = mark(&input, &stamp, Extent::WholeMessage);
            proptest::prop_assert_eq!(
                &whole,
                &insert_whole(&input, Subject::Tag("***SPAM***"), &stamp.lines)
            );
            if let Ok(out) = &whole {
                proptest::prop_assert_eq!(
                    unmarked(out, &owned, Some("***SPAM***")),
                    unmarked(&input, &owned, Some("***SPAM***"))
                );
                // The line ending of a blank line the stripped fields came before may be
                // taken by the fields added (see the test above): what follows it is the same.
                proptest::prop_assert!(out.ends_with(&input[header_section_len(&input)..]));
            }
            let k = input.len() * split / 100;
            match mark(&input[..k], &stamp, Extent::Head) {
                Ok(head) => proptest::prop_assert_eq!(Ok([&head[..], &input[k..]].concat()), whole),
                Err(Unmarkable::HeaderBlockTooLong { head }) => proptest::prop_assert_eq!(head, k),
                Err(why) => proptest::prop_assert_eq!(Err(why), whole),
            }
        }
    }
}
