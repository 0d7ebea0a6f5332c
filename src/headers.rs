//! X-Spam-* header insertion that leaves every other byte of a message as it was.
//!
//! [`add_spam_headers`] removes the `X-Spam-Flag`, `X-Spam-Status` and `X-Spam-Level` fields
//! already in the header block (with their folded continuation lines), so a sender cannot
//! forge a verdict for later Sieve or procmail rules, and inserts fresh `X-Spam-Flag` and
//! `X-Spam-Status` fields at the top of the header block (after an mbox `From ` envelope line
//! if there is one), in the message's own line ending. Everything else is copied unchanged.

use crate::label::Verdict;
use crate::spam_filter::Classification;

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

/// The line ending the message uses: CRLF if its first line ends in CRLF, else LF.
pub fn line_ending(message: &[u8]) -> &'static [u8] {
    match memchr::memchr(b'\n', message) {
        Some(i) if i > 0 && message[i - 1] == b'\r' => b"\r\n",
        _ => b"\n",
    }
}

/// Length of the header block: up to and including the empty line that ends it, or the whole
/// message if it has none.
pub fn header_block_len(message: &[u8]) -> usize {
    let mut start = 0;
    while start < message.len() {
        let end = memchr::memchr(b'\n', &message[start..]).map_or(message.len(), |i| start + i + 1);
        let line = &message[start..end];
        if line == b"\n" || line == b"\r\n" {
            return end;
        }
        start = end;
    }
    message.len()
}

/// True if `line` starts a header field named one of [`OWNED_FIELDS`].
fn is_owned_field(line: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', line) else {
        return false;
    };
    let name = line[..colon].trim_ascii_end();
    OWNED_FIELDS
        .iter()
        .any(|f| name.eq_ignore_ascii_case(f.as_bytes()))
}

/// Removes the owned fields (and their continuation lines) from the header block and
/// returns the rest of the message, byte for byte.
pub fn strip_owned_fields(message: &[u8]) -> Vec<u8> {
    let header_end = header_block_len(message);
    let mut out = Vec::with_capacity(message.len());
    let mut skipping = false;
    let mut start = 0;
    while start < header_end {
        let end = memchr::memchr(b'\n', &message[start..header_end])
            .map_or(header_end, |i| start + i + 1);
        let line = &message[start..end];
        let continuation = matches!(line.first(), Some(b' ' | b'\t'));
        if !continuation {
            skipping = is_owned_field(line);
        }
        if !skipping {
            out.extend_from_slice(line);
        }
        start = end;
    }
    out.extend_from_slice(&message[header_end..]);
    out
}

/// The message with owned fields removed and `lines` inserted at the top of the header block.
/// `None` when the header block does not start with a field but with a folded (white-space)
/// line: inserted fields would absorb it, and a later strip of them would lose it, so such a
/// message is left unmarked.
pub fn add_header_lines(message: &[u8], lines: &[String]) -> Option<Vec<u8>> {
    let eol = line_ending(message);
    let stripped = strip_owned_fields(message);
    // After an mbox envelope line, if it is a complete line; otherwise at the very top.
    let insert_at = match memchr::memchr(b'\n', &stripped) {
        Some(i) if stripped.starts_with(b"From ") => i + 1,
        _ => 0,
    };
    if matches!(stripped.get(insert_at), Some(b' ' | b'\t')) {
        return None;
    }
    let mut out = Vec::with_capacity(stripped.len() + 160);
    out.extend_from_slice(&stripped[..insert_at]);
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(&stripped[insert_at..]);
    Some(out)
}

/// The message with spamsort's verdict headers for `result` (see the module docs); `None` if
/// it cannot be marked safely (see [`add_header_lines`]).
pub fn add_spam_headers(message: &[u8], result: &Classification, required: f64) -> Option<Vec<u8>> {
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

    proptest::proptest! {
        /// Whatever the bytes, the output minus the owned fields is the input minus the owned
        /// fields, and the header block carries exactly one of each field added.
        #[test]
        fn passthrough_is_byte_exact(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(b"From a@b x\n".to_vec()),
                    proptest::strategy::Just(b"X-Spam-Flag: NO\n".to_vec()),
                    proptest::strategy::Just(b"x-spam-status: No,\r\n\tscore=1\r\n".to_vec()),
                    proptest::strategy::Just(b"Subject: s\n".to_vec()),
                    proptest::strategy::Just(b"\n".to_vec()),
                    proptest::strategy::Just(b"\r\n".to_vec()),
                    proptest::strategy::Just(b" folded\n".to_vec()),
                    proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
                ],
                0..12,
            )
        ) {
            let input: Vec<u8> = parts.concat();
            let Some(out) = add_header_lines(&input, &lines()) else {
                // Refused only when a folded line opens the header block.
                let stripped = strip_owned_fields(&input);
                let start = if stripped.starts_with(b"From ") {
                    memchr::memchr(b'\n', &stripped).map_or(0, |i| i + 1)
                } else {
                    0
                };
                proptest::prop_assert!(matches!(stripped.get(start), Some(b' ' | b'\t')));
                return Ok(());
            };
            proptest::prop_assert_eq!(strip_owned_fields(&out), strip_owned_fields(&input));
            let head = &out[..header_block_len(&out)];
            let count = |name: &[u8]| head.split(|&b| b == b'\n').filter(|l| l.starts_with(name)).count();
            proptest::prop_assert_eq!(count(b"X-Spam-Flag: YES"), 1);
            proptest::prop_assert_eq!(count(b"X-Spam-Status: Yes"), 1);
        }
    }

    #[test]
    fn no_separator_and_empty_input() {
        assert_eq!(
            add_header_lines(b"Subject: only", &lines()).unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: only"
        );
        assert_eq!(
            add_header_lines(b"", &lines()).unwrap(),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"
        );
        // Regression (found by the proptest): a folded line opening the message would be
        // absorbed into the inserted field and lost when the field is later stripped; such a
        // message is left unmarked instead.
        assert_eq!(
            add_header_lines(b" folded\nSubject: x\n\nbody", &lines()),
            None
        );
        assert_eq!(add_header_lines(b"From a\n\tfolded\n", &lines()), None);
        assert_eq!(header_block_len(b"A: b\n\nbody"), 6);
        assert_eq!(header_block_len(b"no blank line"), 13);
    }
}
