//! The bytes handed to mail-parser, in two steps.
//!
//! First the header/body boundary is made plain. mail-parser ends lines at LF only and reads
//! header fields up to a blank line, so a CR-only message would be one long header line, and a
//! body that follows the fields without a blank line would be read as more (misnamed or
//! dropped) fields. Only for such mail a copy is made, with the lone CRs as LFs and the missing
//! blank line inserted where the header-block scanner ([`crate::corpus::header_block`]) says
//! the body starts. Ordinary mail is not copied.
//!
//! Then the message is cut before the structure whose parsing cost grows faster than its bytes.
//! mail-parser looks for each declared multipart boundary by scanning ahead, to the end of the
//! message when it never comes, so n declarations cost n times the message (40,000 nested
//! declarations in 2 MB took minutes); it keeps a record of a few hundred bytes for every
//! header field, continuation line and MIME part (300,000 one-line fields in 2 MB took 126 MB,
//! a Subject folded over 600,000 lines 88 MB); and it parses an address list or a parameter
//! list into 15-35 times its bytes. Real mail has a handful of boundaries, a few hundred such
//! lines and header fields of a few kilobytes, so past the caps below the rest of the message
//! is not parsed, and the part of a header field past its caps (or header fields past theirs,
//! in the message's header and its MIME parts' together) is left out of what is parsed (the
//! tokens of the rest are kept; the tokenizer reads at most 8 KiB of a field's text anyway;
//! and the result says it was truncated).
//!
//! Header fields are where mail-parser reads them: the message's, a part's after a line of a
//! declared boundary, and an attached message's after a part typed `message/` (or a digest's
//! part without a type); a body's other `--` lines (a signature, a rule, a patch) are body
//! text, handed on whole. An attached message encoded in base64 or quoted-printable (which
//! RFC 2046 does not allow) mail-parser would decode and parse apart, where these caps do not
//! reach: its type is made `messagx/` in the copy, so it stays an attachment.

use super::find_ascii_ci;
use crate::corpus::header_block::{self, HeaderBlock};
use std::borrow::Cow;

/// `raw` as mail-parser should see it (see the module docs), and whether the caps cut it.
pub(crate) fn parser_input(raw: &[u8]) -> (Cow<'_, [u8]>, bool) {
    match plain_boundary(raw) {
        Cow::Borrowed(plain) => within_caps(plain),
        Cow::Owned(mut plain) => {
            // The plain copy cut to what is kept of it, not copied again.
            let (kept, cut) = within_caps(&plain);
            let kept = match kept {
                Cow::Borrowed(prefix) => Err(prefix.len()),
                Cow::Owned(copy) => Ok(copy),
            };
            match kept {
                Ok(copy) => (Cow::Owned(copy), cut),
                Err(len) => {
                    plain.truncate(len);
                    (Cow::Owned(plain), cut)
                }
            }
        }
    }
}

/// `raw` with its header/body boundary made plain for mail-parser (the module docs' first step).
fn plain_boundary(raw: &[u8]) -> Cow<'_, [u8]> {
    let block = HeaderBlock::scan(raw);
    let missing_blank = !block.has_separator() && block.body_start < raw.len();
    if !block.lone_cr && !missing_blank {
        return Cow::Borrowed(raw);
    }
    let blank: &[u8] = if header_block::line_ending(raw) == b"\r\n" {
        b"\r\n"
    } else {
        b"\n"
    };
    let mut out = Vec::with_capacity(raw.len() + blank.len());
    let (head, body) = raw.split_at(block.fields_end);
    push_lines(&mut out, head, block.lone_cr);
    if missing_blank {
        out.extend_from_slice(blank);
    }
    push_lines(&mut out, body, block.lone_cr);
    Cow::Owned(out)
}

/// Appends `bytes`, with every lone CR turned into an LF if `lone_cr_to_lf`.
fn push_lines(out: &mut Vec<u8>, bytes: &[u8], lone_cr_to_lf: bool) {
    if !lone_cr_to_lf {
        out.extend_from_slice(bytes);
        return;
    }
    for line in header_block::lines(bytes, header_block::LineEnds::LfOrCr) {
        match line.strip_suffix(b"\r") {
            Some(text) => {
                out.extend_from_slice(text);
                out.push(b'\n');
            }
            None => out.extend_from_slice(line),
        }
    }
}

/// Most `boundary=` declarations (case-insensitive, anywhere) handed to mail-parser; its
/// scanning then costs at most this many passes over the input.
const MAX_BOUNDARIES: usize = 64;

/// Most structure lines (a header field `Name:...` or a `--` boundary line, anywhere, and a
/// continuation line of a header field) handed to mail-parser; its records then take a few MB
/// at most.
const MAX_STRUCTURE_LINES: usize = 20_000;

/// Most bytes of one header field (its first line and continuation lines) handed to
/// mail-parser, in the message's header or a MIME part's.
const MAX_FIELD_BYTES: usize = 64 * 1024;

/// Most lines of one header field handed to mail-parser (a list of 500 addresses one a line
/// fits).
const MAX_FIELD_LINES: usize = 1_000;

/// Most bytes of header fields, the message's and its MIME parts' together, handed to
/// mail-parser.
const MAX_HEADER_BYTES: usize = 256 * 1024;

/// `raw` within the caps (see the module docs): its longest prefix within the boundary and
/// structure caps, cut at a line start, without what the field caps leave out (a field's
/// lines and bytes past its caps, header fields past theirs: a copy is made only then); and
/// whether anything was left out.
fn within_caps(raw: &[u8]) -> (Cow<'_, [u8]>, bool) {
    let mut out = Output::default();
    let (mut boundaries, mut structure) = (0, 0);
    let mut declared = Declared::default();
    let mut block = Block::Fields(Fields::default());
    // Bytes and lines of the field being read, and the bytes of header fields handed on.
    let (mut field, mut field_lines, mut header) = (0, 0, 0);
    let mut start = 0;
    while start < raw.len() {
        let end = memchr::memchr(b'\n', &raw[start..]).map_or(raw.len(), |n| start + n + 1);
        let line = &raw[start..end];
        // How much of the line the field caps let through.
        let mut room = line.len();
        let mut continuation = false;
        match &mut block {
            // A line that is no field in what may be an attached message's header (a part's
            // type was only taken to be a message): its body, or the next part's boundary.
            Block::Fields(fields) if fields.nested && !fields.continues(line) => {
                block = match declared.boundary_line(line) {
                    Some(Boundary::Opens) => Block::Fields(Fields::in_a_part()),
                    Some(Boundary::Closes) | None => Block::Body,
                };
            }
            Block::Fields(fields) if !matches!(line, b"\n" | b"\r\n") => {
                continuation = header_block::is_continuation(line);
                if !continuation {
                    (field, field_lines) = (0, 0);
                }
                room = room.min(MAX_FIELD_BYTES.saturating_sub(field));
                if field_lines >= MAX_FIELD_LINES {
                    room = 0;
                }
                room = room.min(MAX_HEADER_BYTES.saturating_sub(header));
                header += room;
                field += line.len();
                field_lines += 1;
                fields.read(&line[..room], continuation, out.len());
                declared.digest |= fields.reading == Reading::Type
                    && find_ascii_ci(&line[..room], b"multipart/digest").is_some();
            }
            // An attached message's header (or a digest's part without a type) ends. An
            // encoded message mail-parser would decode and parse apart, past these caps: it is
            // made an attachment it does not parse. An unencoded one's own header follows,
            // which mail-parser reads as it reads any.
            Block::Fields(fields) if fields.heads_a_message(declared.digest) => {
                block = match (fields.encoded, fields.message) {
                    // A typed one, made of a type mail-parser keeps as it comes.
                    (true, true) => {
                        out.patch(raw, &fields.type_spans, b"message/", b"messagx/");
                        Block::Body
                    }
                    // A digest's part without a type: not decoded, so read as it comes.
                    (true, false) => {
                        let unnamed = b"content-transfer-encodinx";
                        out.patch(raw, &fields.encoding_spans, ENCODING, unnamed);
                        Block::Fields(Fields::nested())
                    }
                    (false, _) => Block::Fields(Fields::nested()),
                };
            }
            Block::Fields(_) => block = Block::Body,
            Block::Body => {
                if let Some(Boundary::Opens) = declared.boundary_line(line) {
                    block = Block::Fields(Fields::in_a_part());
                }
            }
        }
        let kept = &line[..room];
        boundaries += declared.read(kept);
        structure += usize::from(is_structure(kept) || (continuation && !kept.is_empty()));
        if boundaries > MAX_BOUNDARIES || structure > MAX_STRUCTURE_LINES {
            return out.finish(raw, start, true);
        }
        if kept.len() < line.len() {
            out.leave_out(raw, start, kept);
        } else {
            out.keep(line);
        }
        start = end;
    }
    out.finish(raw, start, false)
}

/// Which lines [`within_caps`] is reading.
enum Block {
    /// Header fields (mail-parser reads them up to a blank line): the message's, a MIME
    /// part's after a boundary line, or an attached message's.
    Fields(Fields),
    /// Anything else: a body, up to a line of a declared boundary.
    Body,
}

/// The name of the field that says how a part is encoded.
const ENCODING: &[u8] = b"content-transfer-encoding";

/// What a block of header fields says of what follows it.
#[derive(Default)]
struct Fields {
    /// They are a MIME part's.
    part: bool,
    /// A `Content-Type` field was read.
    typed: bool,
    /// Its type is a message (`message/...`): the part is an attached message.
    message: bool,
    /// Its `Content-Transfer-Encoding` is base64 or quoted-printable: mail-parser decodes it.
    encoded: bool,
    /// The field being read.
    reading: Reading,
    /// Where the lines of `Content-Type` fields were handed on (start, length).
    type_spans: Vec<(usize, usize)>,
    /// Where the lines of `Content-Transfer-Encoding` fields were handed on.
    encoding_spans: Vec<(usize, usize)>,
    /// They are an attached message's, or what was taken for one.
    nested: bool,
    /// A field line was read (a continuation line continues it).
    any: bool,
}

/// Which field a block of header fields is reading.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Reading {
    #[default]
    Other,
    Type,
    Encoding,
}

impl Fields {
    /// A MIME part's header fields, after a boundary line.
    fn in_a_part() -> Fields {
        Fields {
            part: true,
            ..Fields::default()
        }
    }

    /// An attached message's header fields.
    fn nested() -> Fields {
        Fields {
            nested: true,
            ..Fields::default()
        }
    }

    /// True if `line` goes on with these fields: a blank line (which ends them), a field, or
    /// a continuation line after one.
    fn continues(&self, line: &[u8]) -> bool {
        matches!(line, b"\n" | b"\r\n")
            || header_block::field_name(line).is_some()
            || (self.any && header_block::is_continuation(line))
    }

    /// Takes note of a line of header fields, what the caps let through of it, handed on at
    /// `at`.
    fn read(&mut self, line: &[u8], continuation: bool, at: usize) {
        if !continuation {
            let name = header_block::field_name(line).unwrap_or_default();
            self.reading = match () {
                _ if name.eq_ignore_ascii_case(b"content-type") => Reading::Type,
                _ if name.eq_ignore_ascii_case(ENCODING) => Reading::Encoding,
                _ => Reading::Other,
            };
            self.typed |= self.reading == Reading::Type;
            self.any = true;
        }
        // Every spelling counts (the way mail-parser reads a folded or commented value does
        // not have to be followed): at worst a part is read as a message here and its body's
        // first lines are capped as header fields, or an attachment is not parsed.
        let has = |word: &[u8]| find_ascii_ci(line, word).is_some();
        match self.reading {
            Reading::Type => {
                self.message |= has(b"message/");
                self.type_spans.push((at, line.len()));
            }
            Reading::Encoding => {
                self.encoded |= has(b"base64") || has(b"quoted-printable");
                self.encoding_spans.push((at, line.len()));
            }
            Reading::Other => {}
        }
    }

    /// True if an attached message's header follows these fields: their type is a message,
    /// or they are a part of a digest (`digest`: one is declared) and have no type, which
    /// makes a message there.
    fn heads_a_message(&self, digest: bool) -> bool {
        self.message || (self.part && digest && !self.typed)
    }
}

/// The multipart boundaries declared so far (at most [`MAX_BOUNDARIES`] are handed on), and
/// whether a digest was (in a `Content-Type` field).
#[derive(Default)]
struct Declared {
    boundaries: Vec<Vec<u8>>,
    digest: bool,
}

/// A line of a declared boundary.
enum Boundary {
    /// `--` and the boundary: a part's header fields follow.
    Opens,
    /// `--`, the boundary and `--`: the multipart ends.
    Closes,
}

impl Declared {
    /// Takes note of the boundaries `line` declares; returns how many it declares.
    fn read(&mut self, line: &[u8]) -> usize {
        let values = boundary_values(line);
        let n = values.len();
        for value in values {
            if self.boundaries.len() <= MAX_BOUNDARIES && !value.is_empty() {
                self.boundaries.push(value.to_vec());
            }
        }
        n
    }

    /// Whether `line` is a line of a declared boundary (`--` then it, perhaps `--` after it,
    /// then only white space), as mail-parser finds parts.
    fn boundary_line(&self, line: &[u8]) -> Option<Boundary> {
        let rest = line.strip_prefix(b"--")?;
        self.boundaries.iter().find_map(|b| {
            let after = rest.strip_prefix(b.as_slice())?;
            let (after, closes) = match after.strip_prefix(b"--") {
                Some(after) => (after, true),
                None => (after, false),
            };
            after
                .iter()
                .all(u8::is_ascii_whitespace)
                .then_some(if closes {
                    Boundary::Closes
                } else {
                    Boundary::Opens
                })
        })
    }
}

/// The values of the `boundary` parameters `line` declares (`boundary`, optional blanks,
/// `=`, optional blanks, then a quoted string or a token), in any case.
fn boundary_values(line: &[u8]) -> Vec<&[u8]> {
    const NAME: &[u8] = b"boundary";
    memchr::memchr2_iter(b'b', b'B', line)
        .filter_map(|at| {
            let rest = &line[at..];
            let rest = rest
                .get(..NAME.len())
                .filter(|name| name.eq_ignore_ascii_case(NAME))
                .map(|_| &rest[NAME.len()..])?;
            let rest = rest
                .trim_ascii_start()
                .strip_prefix(b"=")?
                .trim_ascii_start();
            Some(match rest.strip_prefix(b"\"") {
                Some(quoted) => &quoted[..memchr::memchr(b'"', quoted).unwrap_or(quoted.len())],
                None => {
                    let token = |b: &u8| !(b.is_ascii_whitespace() || matches!(b, b';' | b'"'));
                    &rest[..rest.iter().position(|b| !token(b)).unwrap_or(rest.len())]
                }
            })
        })
        .collect()
}

/// What [`within_caps`] hands on so far: the input's first `kept` bytes as they are, until
/// the field caps leave something out; from then on a copy.
#[derive(Default)]
struct Output {
    kept: usize,
    copy: Option<Vec<u8>>,
}

impl Output {
    /// How many bytes were handed on.
    fn len(&self) -> usize {
        self.copy.as_ref().map_or(self.kept, Vec::len)
    }

    /// In what was handed on at `spans` (of the input `raw`), every `word` (in any case)
    /// made `instead` (as long), in a copy made now if there is none yet.
    fn patch(&mut self, raw: &[u8], spans: &[(usize, usize)], word: &[u8], instead: &[u8]) {
        debug_assert_eq!(word.len(), instead.len());
        if spans.is_empty() {
            return;
        }
        let bytes = self.copied(raw);
        for &(at, len) in spans {
            let Some(line) = bytes.get_mut(at..at + len) else {
                continue;
            };
            let mut from = 0;
            while let Some(found) = find_ascii_ci(&line[from..], word) {
                line[from + found..from + found + word.len()].copy_from_slice(instead);
                from += found + word.len();
            }
        }
    }

    /// The copy of what was handed on, made now from the input `raw` if there is none yet.
    fn copied(&mut self, raw: &[u8]) -> &mut Vec<u8> {
        let kept = self.kept;
        self.copy.get_or_insert_with(|| raw[..kept].to_vec())
    }

    /// Hands on `line`, the input's next line.
    fn keep(&mut self, line: &[u8]) {
        match &mut self.copy {
            Some(bytes) => bytes.extend_from_slice(line),
            None => self.kept += line.len(),
        }
    }

    /// Hands on only `part` of the line at `start` of `raw` (ended by a line feed if it is
    /// not empty), from a copy made now if there is none yet.
    fn leave_out(&mut self, raw: &[u8], start: usize, part: &[u8]) {
        debug_assert!(self.copy.is_some() || self.kept == start);
        let bytes = self.copied(raw);
        if !part.is_empty() {
            bytes.extend_from_slice(part);
            bytes.push(b'\n');
        }
    }

    /// What was handed on, once the input was read up to `end` (the rest dropped), and
    /// whether anything was left out (`cut`, or a line by [`Output::leave_out`] or
    /// [`Output::patch`]).
    fn finish(self, raw: &[u8], end: usize, cut: bool) -> (Cow<'_, [u8]>, bool) {
        match self.copy {
            None => {
                debug_assert_eq!(self.kept, end);
                (Cow::Borrowed(&raw[..self.kept]), cut)
            }
            Some(bytes) => (Cow::Owned(bytes), true),
        }
    }
}

/// A boundary line (`--...`) or a header field (as the header-block scanner reads one).
fn is_structure(line: &[u8]) -> bool {
    line.starts_with(b"--") || header_block::field_name(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that `m` is handed on as it is, uncopied and uncut.
    fn assert_whole(m: &str) {
        assert_eq!(
            within_caps(m.as_bytes()),
            (Cow::Borrowed(m.as_bytes()), false)
        );
    }

    /// A `Subject` folded over `lines` more lines, and what the field caps keep of it.
    fn folded_subject(lines: usize) -> (String, String) {
        let subject = |lines| format!("Subject: x\n{}", " y\n".repeat(lines));
        (subject(lines), subject(MAX_FIELD_LINES - 1))
    }

    #[test]
    fn ordinary_mail_is_not_copied() {
        for raw in [&b"A: 1\n\nbody\r"[..], b"A: 1\r\n\r\nbody", b"A: 1", b""] {
            assert!(matches!(plain_boundary(raw), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn lone_crs_become_lfs_and_the_missing_blank_line_is_inserted() {
        assert_eq!(
            &*plain_boundary(b"A: 1\rB: 2\r\rbody\rend\r"),
            b"A: 1\nB: 2\n\nbody\nend\n"
        );
        // With an LF anywhere a lone CR ends no line (see `header_block`): a stray one in a
        // field changes nothing.
        let stray = b"A: 1\rB: 2\r\rbody\rend\r\n";
        assert!(matches!(plain_boundary(stray), Cow::Borrowed(_)));
        assert_eq!(
            &*plain_boundary(b"A: 1\r\nsome body\r\n"),
            b"A: 1\r\n\r\nsome body\r\n"
        );
        assert_eq!(&*plain_boundary(b"A: 1\rbody"), b"A: 1\n\nbody");
    }

    #[test]
    fn ordinary_mail_is_given_whole() {
        let m = b"From: a@b\nContent-Type: multipart/mixed; Boundary = \"x\"\n\n--x\n\
                  Content-Type: text/plain\n\nnote: hi\n--x--\n";
        assert_eq!(within_caps(m), (Cow::Borrowed(&m[..]), false));
        assert_eq!(
            boundary_values(b"a; Boundary = \"x y\"; BOUNDARY=z;w"),
            [&b"x y"[..], b"z"]
        );
        assert!(boundary_values(b"the boundary is here").is_empty());
    }

    #[test]
    fn cut_before_the_boundary_declaration_past_the_cap() {
        let line = "Content-Type: multipart/mixed; boundary=\"b\"\n";
        let m = line.repeat(MAX_BOUNDARIES + 10);
        let (kept, cut) = within_caps(m.as_bytes());
        assert!(cut);
        assert_eq!(&*kept, line.repeat(MAX_BOUNDARIES).as_bytes());
    }

    #[test]
    fn cut_before_the_structure_line_past_the_cap() {
        let m = "X: a\n--b\n".repeat(MAX_STRUCTURE_LINES);
        let (kept, cut) = within_caps(m.as_bytes());
        assert!(cut && matches!(kept, Cow::Borrowed(_)));
        assert_eq!(&*kept, &m.as_bytes()[..MAX_STRUCTURE_LINES / 2 * 9]);
        // Body text is not structure, however long, indented or not.
        let text = "\nplain words, no colon\n  indented\n".repeat(100_000);
        assert_whole(&text);
    }

    #[test]
    fn a_field_past_its_caps_is_cut_and_the_rest_kept() {
        // Folded over 600,000 lines (88 MB in mail-parser): its first lines are kept.
        let (folded, first) = folded_subject(600_000);
        let m = format!("{folded}To: b@c\n\nbody\n");
        let (kept, cut) = within_caps(m.as_bytes());
        assert!(cut);
        assert!(
            *kept == *format!("{first}To: b@c\n\nbody\n").as_bytes(),
            "{}",
            kept.len()
        );
        // One line of 2 MB: its first bytes are, ended by a line feed.
        let long = format!("To: {}\r\nX: 1\r\n\r\nbody", "a@b, ".repeat(400_000));
        let (kept, cut) = within_caps(long.as_bytes());
        let first = &long[..MAX_FIELD_BYTES];
        assert!(cut);
        assert!(
            *kept == *format!("{first}\nX: 1\r\n\r\nbody").as_bytes(),
            "{}",
            kept.len()
        );
        // In a MIME part's header too.
        let part = format!(
            "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain;\n{}\
             \nthe part\n--b--\n",
            " x=y;\n".repeat(5_000)
        );
        let (kept, cut) = within_caps(part.as_bytes());
        let lines = " x=y;\n".repeat(MAX_FIELD_LINES - 1);
        let expected = format!(
            "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain;\n\
             {lines}\nthe part\n--b--\n"
        );
        assert!(cut);
        assert!(*kept == *expected.as_bytes(), "{}", kept.len());
    }

    #[test]
    fn body_lines_that_begin_with_two_dashes_are_body_text() {
        // They were read as a part's header fields when any `--` line began one: a signature
        // followed by a long quote, a rule followed by a table, a patch's context lines.
        for m in [
            format!(
                "Subject: a\n\nhi\n-- \n{}",
                "> quoted line\n".repeat(40_000)
            ),
            format!(
                "Subject: a\n\n------\n{}",
                "   a row of the table\n".repeat(20_000)
            ),
            format!(
                "Subject: a\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n{}",
                " \n".repeat(1_200)
            ),
        ] {
            assert_whole(&m);
        }
        // A line of a boundary that was not declared is no part's either.
        let m = format!(
            "Content-Type: multipart/mixed; boundary=\"b\"\n\n--c\n{}--b\nX: 1\n\nend\n--b--\n",
            " indented\n".repeat(2_000)
        );
        assert_whole(&m);
    }

    #[test]
    fn an_attached_messages_header_is_capped_as_any_header() {
        let (folded, capped) = folded_subject(600_000);
        let forms = [
            // The message's body is a message.
            "Content-Type: message/rfc822\n\n{}\nbody\n",
            // A part is a message.
            "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: Message/RFC822\n\n\
             {}\nbody\n--b--\n",
            // A part of a digest without a type is a message.
            "Content-Type: multipart/digest; boundary=b\n\n--b\n\n{}\nbody\n--b--\n",
        ];
        for form in forms {
            let message = form.replace("{}", &folded);
            let (kept, cut) = within_caps(message.as_bytes());
            let expected = form.replace("{}", &capped);
            assert!(
                cut && *kept == *expected.as_bytes(),
                "{form}: {}",
                kept.len()
            );
        }
    }

    #[test]
    fn an_encoded_attached_message_is_made_an_attachment_mail_parser_does_not_parse() {
        // mail-parser decodes and parses it apart, where these caps do not reach.
        let part =
            "Content-Type: Message/RFC822\nContent-Transfer-Encoding: BASE64\n\nU3ViamVjdDog\n";
        let m = format!("Content-Type: multipart/mixed; boundary=b\n\n--b\n{part}--b--\n");
        let (kept, cut) = within_caps(m.as_bytes());
        assert!(cut);
        assert_eq!(&*kept, m.replace("Message/", "messagx/").as_bytes());
        // A digest's part without a type is a message: its encoding is hidden instead, and it
        // is read as it comes, as a message whose header is capped.
        let (folded, capped) = folded_subject(5_000);
        let m = format!(
            "Content-Type: multipart/digest; boundary=b\n\n--b\n\
             Content-Transfer-Encoding: quoted-printable\n\n{folded}\nbody\n--b--\n"
        );
        let (kept, cut) = within_caps(m.as_bytes());
        let expected = m
            .replace("Content-Transfer-Encoding", "content-transfer-encodinx")
            .replace(&folded, &capped);
        assert!(cut && *kept == *expected.as_bytes(), "{}", kept.len());
        // An attached message that is only a boundary line away from the next part: that
        // part's header is capped as any.
        let m = format!(
            "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/rfc822\n\n\
             --b\n{folded}\nbody\n--b--\n"
        );
        let (kept, cut) = within_caps(m.as_bytes());
        assert!(
            cut && *kept == *m.replace(&folded, &capped).as_bytes(),
            "{}",
            kept.len()
        );
        // Unencoded, a part whose type only mentions a message has its body kept whole.
        let m = format!(
            "Content-Type: multipart/mixed; boundary=b\n\n--b\n\
             Content-Type: text/plain; name=\"message/x\"\n\nline one\n{}--b--\n",
            " indented\n".repeat(3_000)
        );
        assert_whole(&m);
    }

    #[test]
    fn header_fields_past_the_header_cap_are_left_out_and_the_body_kept() {
        // The field that reaches the cap is cut there, ended by a line feed.
        let field = format!("X: {}\n", "a".repeat(1000));
        let m = format!("{}\nbody\n", field.repeat(300));
        let (kept, cut) = within_caps(m.as_bytes());
        assert!(cut);
        let fields = MAX_HEADER_BYTES / field.len();
        let part = &field[..MAX_HEADER_BYTES % field.len()];
        let expected = format!("{}{part}\n\nbody\n", field.repeat(fields));
        assert!(*kept == *expected.as_bytes(), "{}", kept.len());
        // Fields within both caps are handed on as they are.
        let m = format!("{}\nbody\n", field.repeat(fields));
        assert_whole(&m);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// Mail within the caps (however its fields, boundaries, attached messages, bodies
        /// and `--` lines are mixed) is handed on as it is, uncopied and uncut.
        #[test]
        fn mail_within_the_caps_is_handed_on_as_it_is(
            text in crate::tokenize::text_of_pieces(
                &[
                    "X: a\n", " folded\n", "\n", "\r\n", "--b\n", "--b--\n", "-- \n",
                    "--c\n", "body text\n", "Subject: hi\r\n",
                    "Content-Type: multipart/mixed; boundary=b\n",
                    "Content-Type: multipart/digest; boundary=\"c\"\n",
                    "Content-Type: message/rfc822\n", "Content-Type: text/plain\n",
                    "Content-Transfer-Encoding: 7bit\n", "no newline",
                ],
                200,
            )
        ) {
            let (kept, cut) = within_caps(text.as_bytes());
            proptest::prop_assert!(matches!(kept, Cow::Borrowed(_)) && !cut);
            proptest::prop_assert_eq!(&*kept, text.as_bytes());
        }
    }

    #[test]
    fn the_caps_count_lines_of_the_plain_copy() {
        // CR-only lines are counted as lines once they are LFs: a CR-only message past the
        // structure cap is cut, though it has no LF at all.
        let m = "X: a\r".repeat(MAX_STRUCTURE_LINES + 5);
        let (input, cut) = parser_input(m.as_bytes());
        assert!(cut);
        assert_eq!(&*input, "X: a\n".repeat(MAX_STRUCTURE_LINES).as_bytes());
        assert_eq!(
            parser_input(b"A: 1\n\nbody"),
            (Cow::Borrowed(&b"A: 1\n\nbody"[..]), false)
        );
    }
}
