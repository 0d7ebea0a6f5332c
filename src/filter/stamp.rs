//! X-Spam-* header insertion that leaves every other byte of a message as it was.
//!
//! [`add_spam_headers`] removes the `X-Spam-Flag`, `X-Spam-Status` and `X-Spam-Level` fields
//! already in the header block (with their folded continuation lines), so a sender cannot
//! forge a verdict for later Sieve or procmail rules, and inserts fresh `X-Spam-Flag` and
//! `X-Spam-Status` fields at the top of the header block (after an mbox `From ` envelope line
//! if there is one), in the message's own line ending. Everything else is copied unchanged.
//! Where the header block ends, and which line ending a message uses (LF, CRLF or a lone CR),
//! is decided by the one scanner in [`crate::corpus::header_block`].

use crate::corpus::header_block::{self, HeaderBlock, field_name, is_continuation};
use crate::filter::Classification;
use crate::label::Verdict;

/// Header fields spamsort owns: removed from incoming mail before its own are added.
pub const OWNED_FIELDS: [&str; 3] = ["x-spam-flag", "x-spam-status", "x-spam-level"];

/// The two header lines for a result, without line endings.
pub fn spam_header_lines(result: &Classification, required: f64) -> [String; 2] {
    let yes = result.verdict == Verdict::Spam;
    [
        format!("X-Spam-Flag: {}", if yes { "YES" } else { "NO" }),
        format!(
            "X-Spam-Status: {}, score={:.3} required={:.3} model={} tokens={}",
            if yes { "Yes" } else { "No" },
            result.score.p_spam(),
            required,
            result.model,
            result.tokens
        ),
    ]
}

/// Length of the header block: up to and including the blank line that ends it; without one,
/// up to the first line that is neither a field nor a continuation, or the whole message.
pub fn header_block_len(message: &[u8]) -> usize {
    HeaderBlock::scan(message).body_start
}

/// True if `line` starts a header field named one of [`OWNED_FIELDS`].
fn is_owned_field(line: &[u8]) -> bool {
    field_name(line).is_some_and(|name| {
        OWNED_FIELDS
            .iter()
            .any(|f| name.eq_ignore_ascii_case(f.as_bytes()))
    })
}

/// Removes the owned fields (and their continuation lines) from the header block and
/// returns the rest of the message, byte for byte.
pub fn strip_owned_fields(message: &[u8]) -> Vec<u8> {
    strip_block(message, &HeaderBlock::scan(message)).0
}

/// [`strip_owned_fields`] for a scanned message; the flag is set when a removal brought a line
/// ending in a lone CR next to one starting with LF ([`Unmarkable::MergedLineEndings`]).
fn strip_block(message: &[u8], block: &HeaderBlock) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(message.len());
    out.extend_from_slice(&message[..block.envelope_end]);
    let mut joined = false;
    let mut keep = |out: &mut Vec<u8>, bytes: &[u8]| {
        // Lines of the input never split a CRLF, so a CR then LF here follows a removal.
        joined |= out.last() == Some(&b'\r') && bytes.first() == Some(&b'\n');
        out.extend_from_slice(bytes);
    };
    let mut skipping = false;
    for line in header_block::lines(&message[block.envelope_end..block.fields_end]) {
        if !is_continuation(line) {
            skipping = is_owned_field(line);
        }
        if !skipping {
            keep(&mut out, line);
        }
    }
    keep(&mut out, &message[block.fields_end..]);
    (out, joined)
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
    /// Removing a forged X-Spam-* field would leave a line ending in a lone CR before one
    /// starting with LF, which would then read as one CRLF and lose a line.
    #[error(
        "removing a forged X-Spam-* field would merge a lone CR and an LF into one line ending"
    )]
    MergedLineEndings,
    /// The header block does not certainly end inside the head that was read.
    #[error("the header block does not end within the first {head} bytes")]
    HeaderBlockTooLong {
        /// How many bytes were read.
        head: usize,
    },
}

/// The message with owned fields removed and `lines` inserted at the top of the header block,
/// or why that cannot be done without changing the rest ([`Unmarkable`]).
pub fn add_header_lines(message: &[u8], lines: &[String]) -> Result<Vec<u8>, Unmarkable> {
    insert(message, &HeaderBlock::scan(message), lines)
}

/// [`add_header_lines`] for `head`, the start of a longer message whose other bytes follow
/// unchanged: the marked head followed by them is the marked message. Fails also when the
/// header block does not certainly end inside `head`.
pub fn add_header_lines_to_head(head: &[u8], lines: &[String]) -> Result<Vec<u8>, Unmarkable> {
    let block = HeaderBlock::scan(head);
    if !block.terminated {
        return Err(Unmarkable::HeaderBlockTooLong { head: head.len() });
    }
    insert(head, &block, lines)
}

fn insert(message: &[u8], block: &HeaderBlock, lines: &[String]) -> Result<Vec<u8>, Unmarkable> {
    let (stripped, joined) = strip_block(message, block);
    let insert_at = block.envelope_end;
    let rest = &stripped[insert_at..];
    if joined {
        return Err(Unmarkable::MergedLineEndings);
    }
    if is_continuation(rest) {
        return Err(Unmarkable::FoldedFirstLine);
    }
    // The ending of the line the fields go before (an LF there must not follow a lone CR of
    // ours), else of the first line.
    let eol = if memchr::memchr2(b'\n', b'\r', rest).is_some() {
        header_block::line_ending(rest)
    } else {
        header_block::line_ending(message)
    };
    let mut out = Vec::with_capacity(stripped.len() + 160);
    out.extend_from_slice(&stripped[..insert_at]);
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(rest);
    Ok(out)
}

/// The message with spamsort's verdict headers for `result` (see the module docs), or why it
/// cannot be marked safely (see [`add_header_lines`]).
pub fn add_spam_headers(
    message: &[u8],
    result: &Classification,
    required: f64,
) -> Result<Vec<u8>, Unmarkable> {
    add_header_lines(message, &spam_header_lines(result, required))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> Vec<String> {
        vec!["X-Spam-Flag: YES".into(), "X-Spam-Status: Yes".into()]
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
        let at = header_block::envelope_len(out);
        let mut rest = header_block::lines(&out[at..]);
        let (flag, status) = (rest.next()?, rest.next()?);
        let eol = &flag[b"X-Spam-Flag: YES".len()..];
        if flag != [&b"X-Spam-Flag: YES"[..], eol].concat()
            || status != [&b"X-Spam-Status: Yes"[..], eol].concat()
        {
            return None;
        }
        Some([&out[..at], &out[at + flag.len() + status.len()..]].concat())
    }

    proptest::proptest! {
        /// Whatever the bytes and line endings (LF, CRLF, lone CR), the output minus the two
        /// added lines is the input minus the owned fields, the body starts at the same
        /// bytes, and the header block carries exactly one of each field added.
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
            let Ok(out) = add_header_lines(&input, &lines()) else {
                // Refused only when a folded line opens the header block or a removal would
                // merge a lone CR with an LF.
                let block = HeaderBlock::scan(&input);
                let (stripped, joined) = strip_block(&input, &block);
                proptest::prop_assert!(
                    joined || is_continuation(&stripped[block.envelope_end..])
                );
                return Ok(());
            };
            proptest::prop_assert_eq!(without_added_lines(&out), Some(strip_owned_fields(&input)));
            proptest::prop_assert_eq!(strip_owned_fields(&out), strip_owned_fields(&input));
            proptest::prop_assert_eq!(
                &out[header_block_len(&out)..],
                &input[header_block_len(&input)..]
            );
            let head = &out[..header_block_len(&out)];
            let count = |name: &[u8]| {
                header_block::lines(head)
                    .filter(|l| field_name(l).is_some_and(|n| n.eq_ignore_ascii_case(name)))
                    .count()
            };
            proptest::prop_assert_eq!(count(b"X-Spam-Flag"), 1);
            proptest::prop_assert_eq!(count(b"X-Spam-Status"), 1);
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
    fn body_without_blank_line_keeps_its_field_like_lines() {
        // The body starts at the first non-field line; a forged field after it is body text.
        let msg = b"Subject: s\nmeeting moved to 3 : 30\nX-Spam-Flag: NO\n\nmore\n";
        let out = add_header_lines(msg, &lines()).unwrap();
        assert_eq!(
            out,
            [&b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"[..], msg].concat()
        );
    }

    #[test]
    fn removal_that_would_merge_a_lone_cr_with_an_lf_is_refused() {
        // Without the forged field, "s\r" and the blank "\n" would read as one CRLF.
        assert_eq!(
            add_header_lines(b"Subject: s\rX-Spam-Flag: NO\n\nbody", &lines()),
            Err(Unmarkable::MergedLineEndings)
        );
        // A lone-CR first line before a blank LF line: the inserted fields take the LF.
        assert_eq!(
            add_header_lines(b"X-Spam-Flag: NO\rX-Spam-Level: x\n\nbody", &lines()).unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n\nbody"
        );
    }

    #[test]
    fn a_head_is_marked_only_when_its_header_block_ends_inside_it() {
        for head in [&b"Subject: s\nX-Spam-Fl"[..], b"Subject: s\r"] {
            assert_eq!(
                add_header_lines_to_head(head, &lines()),
                Err(Unmarkable::HeaderBlockTooLong { head: head.len() })
            );
        }
        assert_eq!(
            add_header_lines_to_head(b"X-Spam-Flag: NO\rSubject: s\r\rbo", &lines()).unwrap(),
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
}
