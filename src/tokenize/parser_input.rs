//! What mail-parser is given: the message cut before the structure whose parsing cost grows
//! faster than its bytes. mail-parser looks for each declared multipart boundary by scanning
//! ahead, to the end of the message when it never comes, so n declarations cost n times the
//! message (40,000 nested declarations in 2 MB took minutes); and it keeps a record of a few
//! hundred bytes for every header field and MIME part (300,000 one-line fields in 2 MB took
//! 126 MB). Real mail has a handful of boundaries and a few hundred such lines, so past the
//! caps below the rest of the message is not parsed (the tokens of what came before are kept,
//! and the result says it was truncated).

/// Most `boundary=` declarations (case-insensitive, anywhere) handed to mail-parser; its
/// scanning then costs at most this many passes over the input.
const MAX_BOUNDARIES: usize = 64;

/// Most structure lines (a header field `Name:...` or a `--` boundary line, anywhere) handed
/// to mail-parser; its records then take a few MB at most.
const MAX_STRUCTURE_LINES: usize = 20_000;

/// The longest prefix of `raw` within both caps, cut at a line start.
pub(crate) fn parser_input(raw: &[u8]) -> &[u8] {
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

/// A boundary line (`--...`) or a header field (a name of visible characters, then `:`).
fn is_structure(line: &[u8]) -> bool {
    if line.starts_with(b"--") {
        return true;
    }
    let name_end = line
        .iter()
        .position(|&b| !(b.is_ascii_graphic() && b != b':'))
        .unwrap_or(line.len());
    name_end > 0 && line.get(name_end) == Some(&b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_mail_is_given_whole() {
        let m = b"From: a@b\nContent-Type: multipart/mixed; Boundary = \"x\"\n\n--x\n\
                  Content-Type: text/plain\n\nnote: hi\n--x--\n";
        assert_eq!(parser_input(m), m);
        assert_eq!(boundary_declarations(b"a; Boundary = \"x\"; BOUNDARY=y"), 2);
        assert_eq!(boundary_declarations(b"the boundary is here"), 0);
    }

    #[test]
    fn cut_before_the_boundary_declaration_past_the_cap() {
        let line = "Content-Type: multipart/mixed; boundary=\"b\"\n";
        let m = line.repeat(MAX_BOUNDARIES + 10);
        assert_eq!(
            parser_input(m.as_bytes()),
            line.repeat(MAX_BOUNDARIES).as_bytes()
        );
    }

    #[test]
    fn cut_before_the_structure_line_past_the_cap() {
        let m = "X: a\n--b\n".repeat(MAX_STRUCTURE_LINES);
        let kept = parser_input(m.as_bytes());
        assert_eq!(kept, &m.as_bytes()[..MAX_STRUCTURE_LINES / 2 * 9]);
        // Body text is not structure, however long.
        let text = "plain words, no colon\n".repeat(100_000);
        assert_eq!(parser_input(text.as_bytes()).len(), text.len());
    }
}
