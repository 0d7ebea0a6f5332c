//! Text normalization before word splitting: Unicode NFKC (full-width and other compatibility
//! forms fold to their plain letters) and removal of every invisible character (see
//! [`is_invisible`]: format characters, category Cf: U+200B zero-width space, U+200D joiner,
//! U+2062 invisible times, soft hyphen, bidi controls, ...; and the other default-ignorable
//! code points: variation selectors, the combining grapheme joiner, Hangul fillers), so that a
//! spammer cannot break a word with characters nobody sees.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// NFKC-normalizes `text` and removes invisible characters ([`is_invisible`]). ASCII text is
/// returned as is, borrowed: it is already in NFKC and holds no invisible characters.
pub fn normalize(text: &str) -> Cow<'_, str> {
    if text.is_ascii() || is_normalized(text) {
        return Cow::Borrowed(text);
    }
    // Only the lines that need it are rebuilt (one no-break space or ellipsis would otherwise
    // send the whole text through NFKC). A line end is a normalization boundary: `\n` is a
    // starter that composes with nothing, before or after it, so the lines normalize alone as
    // they do together.
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.is_ascii() || is_normalized(line) {
            out.push_str(line);
        } else {
            // Strip before and after NFKC: compatibility decomposition can itself produce
            // invisible characters (U+3164 HANGUL FILLER folds to U+1160).
            out.extend(
                line.chars()
                    .filter(|&c| !is_invisible(c))
                    .nfkc()
                    .filter(|&c| !is_invisible(c)),
            );
        }
    }
    Cow::Owned(out)
}

/// True if `text` is already NFKC and free of invisible characters: most non-ASCII mail text
/// (accents, typographic quotes) is, and needs no rebuilding.
fn is_normalized(text: &str) -> bool {
    unicode_normalization::is_nfkc_quick(text.chars()) == unicode_normalization::IsNormalized::Yes
        && !text.chars().any(is_invisible)
}

/// True for the characters that show nothing, so that [`normalize`] removes them: format
/// characters ([`is_format`]) and the other Unicode Default_Ignorable_Code_Point characters,
/// which are not Cf (U+034F combining grapheme joiner, the Hangul fillers U+115F, U+1160,
/// U+3164 and U+FFA0, Khmer U+17B4 and U+17B5, the Mongolian free variation selectors, the
/// variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF, and the unassigned default-ignorable
/// ranges). Kept in, `vi\u{FE0F}agra` was a word other than `viagra`.
pub fn is_invisible(c: char) -> bool {
    !c.is_ascii()
        && (is_format(c)
            || matches!(c as u32,
                0x034F
                | 0x115F..=0x1160
                | 0x17B4..=0x17B5
                | 0x180B..=0x180F
                | 0x2065
                | 0x3164
                | 0xFE00..=0xFE0F
                | 0xFFA0
                | 0xFFF0..=0xFFF8
                | 0xE0000..=0xE0FFF))
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
    fn strips_default_ignorable_characters_that_are_not_format_characters() {
        // Variation selectors, the combining grapheme joiner, Hangul fillers (full and half
        // width: NFKC folds both to U+1160), a Khmer inherent vowel, a Mongolian selector.
        for text in [
            "vi\u{FE0F}agra",
            "vi\u{E0100}agra",
            "vi\u{034F}agra",
            "vi\u{3164}agra",
            "vi\u{FFA0}agra",
            "vi\u{115F}agra",
            "vi\u{17B4}agra",
            "vi\u{180B}agra",
        ] {
            assert_eq!(normalize(text), "viagra", "{text:?}");
        }
        // Visible combining marks stay.
        assert_eq!(normalize("e\u{0301}"), "\u{E9}");
    }

    /// `normalize` as it was before it worked line by line: the whole text through NFKC.
    fn normalize_whole(text: &str) -> String {
        text.chars()
            .filter(|&c| !is_invisible(c))
            .nfkc()
            .filter(|&c| !is_invisible(c))
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// Line by line gives what the whole text through NFKC gives, with combining marks,
        /// Hangul jamo, compatibility forms and format characters next to line ends.
        #[test]
        fn lines_normalize_as_the_whole_text(
            chars in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::sample::select(vec![
                        'a', 'e', 'A', ' ', '\n', '\r', '\n', '.', '1',
                    ]),
                    4 => proptest::sample::select(vec![
                        '\u{0301}', '\u{0327}', '\u{0308}', '\u{05B0}', '\u{0F71}',
                        '\u{1100}', '\u{1161}', '\u{11A8}', '\u{AC00}', '\u{00A0}',
                        '\u{2026}', '\u{FB01}', '\u{FF21}', '\u{200B}', '\u{200D}',
                        '\u{00AD}', '\u{FEFF}', '\u{2062}', '\u{3099}', '\u{304B}',
                        '\u{1E9B}', '\u{0344}', '\u{2028}', '\u{0085}', 'é', 'ﬀ',
                        '\u{034F}', '\u{3164}', '\u{FE0F}',
                    ]),
                    1 => proptest::prelude::any::<char>(),
                ],
                0..40,
            )
        ) {
            let text: String = chars.into_iter().collect();
            let (got, want) = (normalize(&text), normalize_whole(&text));
            proptest::prop_assert_eq!(got.as_ref(), want.as_str());
        }
    }

    #[test]
    fn cjk_ranges() {
        assert!(is_cjk('中') && is_cjk('の') && is_cjk('カ'));
        assert!(!is_cjk('a') && !is_cjk('я') && !is_cjk('한'));
    }
}
