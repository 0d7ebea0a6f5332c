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
pub fn add_header_lines(message: &[u8], lines: &[String]) -> Vec<u8> {
    let eol = line_ending(message);
    let stripped = strip_owned_fields(message);
    let insert_at = if stripped.starts_with(b"From ") {
        memchr::memchr(b'\n', &stripped).map_or(stripped.len(), |i| i + 1)
    } else {
        0
    };
    let mut out = Vec::with_capacity(stripped.len() + 160);
    out.extend_from_slice(&stripped[..insert_at]);
    if insert_at == stripped.len() && insert_at > 0 && !stripped.ends_with(b"\n") {
        // An envelope line without a line ending: end it before the fields that follow.
        out.extend_from_slice(eol);
    }
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(&stripped[insert_at..]);
    out
}

/// The message with spamsort's verdict headers for `result` (see the module docs).
pub fn add_spam_headers(message: &[u8], result: &Classification, required: f64) -> Vec<u8> {
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
        let out = add_header_lines(msg, &lines());
        assert_eq!(out, b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: hi\nTo: a\n\nX-Spam-Flag: body stays\n");
    }

    #[test]
    fn follows_crlf_and_keeps_envelope_line_first() {
        let msg = b"From a@b Mon Jan  1 00:00:00 2024\r\nSubject: x\r\n\r\nbody\r\n";
        let out = add_header_lines(msg, &lines());
        assert_eq!(out, b"From a@b Mon Jan  1 00:00:00 2024\r\nX-Spam-Flag: YES\r\nX-Spam-Status: Yes\r\nSubject: x\r\n\r\nbody\r\n");
    }

    #[test]
    fn no_separator_and_empty_input() {
        assert_eq!(
            add_header_lines(b"Subject: only", &lines()),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\nSubject: only"
        );
        assert_eq!(
            add_header_lines(b"", &lines()),
            b"X-Spam-Flag: YES\nX-Spam-Status: Yes\n"
        );
        assert_eq!(header_block_len(b"A: b\n\nbody"), 6);
        assert_eq!(header_block_len(b"no blank line"), 13);
    }
}
