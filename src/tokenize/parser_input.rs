//! The bytes handed to mail-parser: the message itself, or, only when mail-parser would
//! misread where its header block ends, a copy that makes the boundary plain.
//!
//! mail-parser ends lines at LF only and reads header fields up to a blank line, so a CR-only
//! message would be one long header line, and a body that follows the fields without a blank
//! line would be read as more (misnamed or dropped) fields. The copy has the lone CRs as LFs
//! and the missing blank line inserted where the header-block scanner
//! ([`crate::corpus::header_block`]) says the body starts. Ordinary mail is not copied.

use crate::corpus::header_block::{self, HeaderBlock};
use std::borrow::Cow;

/// `raw` as mail-parser should see it (see the module docs).
pub(crate) fn parser_input(raw: &[u8]) -> Cow<'_, [u8]> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_mail_is_not_copied() {
        for raw in [&b"A: 1\n\nbody\r"[..], b"A: 1\r\n\r\nbody", b"A: 1", b""] {
            assert!(matches!(parser_input(raw), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn lone_crs_become_lfs_and_the_missing_blank_line_is_inserted() {
        assert_eq!(
            &*parser_input(b"A: 1\rB: 2\r\rbody\rend\r\n"),
            b"A: 1\nB: 2\n\nbody\nend\r\n"
        );
        assert_eq!(
            &*parser_input(b"A: 1\r\nsome body\r\n"),
            b"A: 1\r\n\r\nsome body\r\n"
        );
        assert_eq!(&*parser_input(b"A: 1\rbody"), b"A: 1\n\nbody");
    }
}
