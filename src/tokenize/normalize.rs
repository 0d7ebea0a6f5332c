//! Text normalization before word splitting: Unicode NFKC (full-width and other compatibility
//! forms fold to their plain letters) and removal of every format character (category Cf:
//! U+200B zero-width space, U+200D joiner, U+2062 invisible times, soft hyphen, bidi controls,
//! ...), so that a spammer cannot break a word with characters nobody sees.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// NFKC-normalizes `text` and removes Cf characters. ASCII text is returned as is, borrowed:
/// it is already in NFKC and holds no format characters.
pub fn normalize(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    // Most non-ASCII mail text (accents, typographic quotes) is already NFKC and free of
    // format characters: a quick check avoids rebuilding it.
    if unicode_normalization::is_nfkc_quick(text.chars())
        == unicode_normalization::IsNormalized::Yes
        && !text.chars().any(is_format)
    {
        return Cow::Borrowed(text);
    }
    // Strip before and after NFKC: compatibility decomposition can itself produce Cf.
    Cow::Owned(
        text.chars()
            .filter(|&c| !is_format(c))
            .nfkc()
            .filter(|&c| !is_format(c))
            .collect(),
    )
}

/// True for Unicode general category Cf (format characters).
pub fn is_format(c: char) -> bool {
    !c.is_ascii() && c.general_category() == GeneralCategory::Format
}

/// True for the scripts UAX #29 splits into single characters or that carry no spaces between
/// words: Han ideographs, Hiragana and Katakana. Runs of these also yield character bigrams.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x31F0..=0x31FF      // Katakana phonetic extensions
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFF66..=0xFF9F      // half-width Katakana (NFKC folds them, kept for safety)
        | 0x20000..=0x2FA1F) // CJK extensions B..F and supplement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_zero_width_and_folds_full_width() {
        assert_eq!(normalize("vi\u{200B}ag\u{200D}ra"), "viagra");
        assert_eq!(normalize("fr\u{2062}ee\u{00AD}dom\u{FEFF}"), "freedom");
        assert_eq!(normalize("ＦＲＥＥ　ｍｏｎｅｙ"), "FREE money");
        assert_eq!(normalize("ﬁnance"), "finance");
        assert!(matches!(normalize("plain ascii"), Cow::Borrowed(_)));
    }

    #[test]
    fn cjk_ranges() {
        assert!(is_cjk('中') && is_cjk('の') && is_cjk('カ'));
        assert!(!is_cjk('a') && !is_cjk('я') && !is_cjk('한'));
    }
}
