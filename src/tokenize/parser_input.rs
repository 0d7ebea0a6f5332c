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
//! declarations in 2 MB took minutes); and it keeps a record of a few hundred bytes for every
//! header field and MIME part (300,000 one-line fields in 2 MB took 126 MB). Real mail has a
//! handful of boundaries and a few hundred such lines, so past the caps below the rest of the
//! message is not parsed (the tokens of what came before are kept, and the result says it was
//! truncated).

use crate::corpus::header_block::{self, HeaderBlock};
use std::borrow::Cow;

/// `raw` as mail-parser should see it (see the module docs), and whether the caps cut it.
pub(crate) fn parser_input(raw: &[u8]) -> (Cow<'_, [u8]>, bool) {
    let plain = plain_boundary(raw);
    let kept = within_caps(&plain).len();
    if kept == plain.len() {
        return (plain, false);
    }
    let cut = match plain {
        Cow::Borrowed(bytes) => Cow::Borrowed(&bytes[..kept]),
        Cow::Owned(mut bytes) => {
            bytes.truncate(kept);
            Cow::Owned(bytes)
        }
    };
    (cut, true)
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
    for line in header_block::lines(bytes) {
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

/// Most structure lines (a header field `Name:...` or a `--` boundary line, anywhere) handed
/// to mail-parser; its records then take a few MB at most.
const MAX_STRUCTURE_LINES: usize = 20_000;

/// The longest prefix of `raw` within both caps, cut at a line start.
fn within_caps(raw: &[u8]) -> &[u8] {
    let (mut boundaries, mut structure) = (0, 0);
    let mut start = 0;
    while start < raw.len() {
        let end = memchr::memchr(b'\n', &raw[start..]).map_or(raw.len(), |n| start + n + 1);
        let line = &raw[start..end];
        boundaries += boundary_declarations(line);
        structure += usize::from(is_structure(line));
        if boundaries > MAX_BOUNDARIES || structure > MAX_STRUCTURE_LINES {
            return &raw[..start];
        }
        start = end;
    }
    raw
}

/// How many times `boundary`, then optional blanks, then `=` occurs in `line`, in any case.
fn boundary_declarations(line: &[u8]) -> usize {
    const NAME: &[u8] = b"boundary";
    memchr::memchr2_iter(b'b', b'B', line)
        .filter(|&at| {
            let rest = &line[at..];
            rest.len() > NAME.len()
                && rest[..NAME.len()].eq_ignore_ascii_case(NAME)
                && rest[NAME.len()..]
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t'))
                    == Some(&b'=')
        })
        .count()
}

/// A boundary line (`--...`) or a header field (as the header-block scanner reads one).
fn is_structure(line: &[u8]) -> bool {
    line.starts_with(b"--") || header_block::field_name(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_mail_is_not_copied() {
        for raw in [&b"A: 1\n\nbody\r"[..], b"A: 1\r\n\r\nbody", b"A: 1", b""] {
            assert!(matches!(plain_boundary(raw), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn lone_crs_become_lfs_and_the_missing_blank_line_is_inserted() {
        assert_eq!(
            &*plain_boundary(b"A: 1\rB: 2\r\rbody\rend\r\n"),
            b"A: 1\nB: 2\n\nbody\nend\r\n"
        );
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
        assert_eq!(within_caps(m), m);
        assert_eq!(boundary_declarations(b"a; Boundary = \"x\"; BOUNDARY=y"), 2);
        assert_eq!(boundary_declarations(b"the boundary is here"), 0);
    }

    #[test]
    fn cut_before_the_boundary_declaration_past_the_cap() {
        let line = "Content-Type: multipart/mixed; boundary=\"b\"\n";
        let m = line.repeat(MAX_BOUNDARIES + 10);
        assert_eq!(
            within_caps(m.as_bytes()),
            line.repeat(MAX_BOUNDARIES).as_bytes()
        );
    }

    #[test]
    fn cut_before_the_structure_line_past_the_cap() {
        let m = "X: a\n--b\n".repeat(MAX_STRUCTURE_LINES);
        let kept = within_caps(m.as_bytes());
        assert_eq!(kept, &m.as_bytes()[..MAX_STRUCTURE_LINES / 2 * 9]);
        // Body text is not structure, however long.
        let text = "plain words, no colon\n".repeat(100_000);
        assert_eq!(within_caps(text.as_bytes()).len(), text.len());
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
