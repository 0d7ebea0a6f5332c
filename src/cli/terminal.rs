//! Text taken from mail is untrusted: escape control characters before it reaches a terminal,
//! so a message cannot move the cursor, retitle the window or hide lines.

/// `text` with control characters (C0, DEL, C1) and bidi/format controls written as `\u{..}`
/// escapes; everything else unchanged.
pub fn escape_for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() || spamsort::tokenize::normalize::is_format(c);
    if !text.chars().any(unsafe_char) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if unsafe_char(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_only() {
        assert_eq!(escape_for_terminal("plain é 中"), "plain é 中");
        assert_eq!(escape_for_terminal("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(escape_for_terminal("x\u{202e}y"), "x\\u{202e}y");
    }
}
