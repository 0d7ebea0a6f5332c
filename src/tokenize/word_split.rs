//! Where words start and end: UAX #29 word boundaries (`unicode_words`) with every word also
//! split at its colons, as [`super::words`] wants them. Lines of ASCII text take a fast path
//! that applies the standard's rules for the ASCII characters directly, without its tables;
//! lines with any other character take `unicode-segmentation`. Both give the same words (a
//! property test below checks the fast path against the reference on generated text).
//!
//! A line end is a word boundary whatever surrounds it (rules WB3a and WB3b come before every
//! rule that looks past a character), so each line can take its own path.

use std::iter::FlatMap;
use std::str::Split;
use unicode_segmentation::{UnicodeSegmentation, UnicodeWords};

/// The words of `text` in order: exactly what
/// `text.unicode_words().flat_map(|w| w.split(':'))` yields.
pub(crate) fn words(text: &str) -> Words<'_> {
    // Whole-text check first: most mail text is ASCII and then needs no line splitting.
    if text.is_ascii() {
        Words {
            rest: "",
            line: Line::Ascii(AsciiWords::new(text)),
        }
    } else {
        Words {
            rest: text,
            line: Line::Ascii(AsciiWords::new("")),
        }
    }
}

/// Iterator of [`words`].
pub(crate) struct Words<'t> {
    /// The lines not yet started.
    rest: &'t str,
    /// The words of the current line.
    line: Line<'t>,
}

/// The reference splitter: UAX #29 words split at colons.
type UnicodePieces<'t> = FlatMap<UnicodeWords<'t>, Split<'t, char>, fn(&'t str) -> Split<'t, char>>;

/// The words of one line, by the path its characters allow.
enum Line<'t> {
    Ascii(AsciiWords<'t>),
    Unicode(UnicodePieces<'t>),
}

fn split_colons(word: &str) -> Split<'_, char> {
    word.split(':')
}

impl<'t> Iterator for Words<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        loop {
            let word = match &mut self.line {
                Line::Ascii(words) => words.next(),
                Line::Unicode(words) => words.next(),
            };
            if word.is_some() {
                return word;
            }
            if self.rest.is_empty() {
                return None;
            }
            let end =
                memchr::memchr(b'\n', self.rest.as_bytes()).map_or(self.rest.len(), |i| i + 1);
            let (line, rest) = self.rest.split_at(end);
            self.rest = rest;
            self.line = if line.is_ascii() {
                Line::Ascii(AsciiWords::new(line))
            } else {
                let split: fn(&'t str) -> Split<'t, char> = split_colons;
                Line::Unicode(line.unicode_words().flat_map(split))
            };
        }
    }
}

/// UAX #29 words of ASCII text, split at colons. In ASCII the standard's classes are: letters
/// (ALetter), digits (Numeric), `_` (ExtendNumLet), `:` (MidLetter), `,` and `;` (MidNum), `.`
/// (MidNumLet) and `'` (Single_Quote); every other character stands alone. Letters, digits
/// and `_` always join (WB5, WB8-WB10, WB13a, WB13b); `:` `.` `'` join two letters (WB6,
/// WB7); `,` `;` `.` `'` join two digits (WB11, WB12); everything else is a boundary (WB999).
/// `unicode_words` keeps the segments with a letter or digit, so a run of `_` alone is no word.
struct AsciiWords<'t> {
    text: &'t str,
    /// Where the search for the next word starts.
    pos: usize,
}

impl<'t> AsciiWords<'t> {
    fn new(text: &'t str) -> Self {
        AsciiWords { text, pos: 0 }
    }
}

/// Byte classes of the ASCII rules, as bits of [`CLASSES`].
const WORD: u8 = 1;
const LETTER: u8 = 2;
const DIGIT: u8 = 4;
/// Joins two letters (MidLetter and MidNumLetQ: `:` `.` `'`).
const MID_LETTER: u8 = 8;
/// Joins two digits (MidNum and MidNumLetQ: `,` `;` `.` `'`).
const MID_NUM: u8 = 16;

/// The class bits of every byte (none for non-ASCII bytes, which the fast path never sees).
const CLASSES: [u8; 256] = {
    let mut classes = [0; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        classes[b] = if c.is_ascii_alphabetic() {
            WORD | LETTER
        } else if c.is_ascii_digit() {
            WORD | DIGIT
        } else {
            match c {
                b'_' => WORD,
                b':' => MID_LETTER,
                b'.' | b'\'' => MID_LETTER | MID_NUM,
                b',' | b';' => MID_NUM,
                _ => 0,
            }
        };
        b += 1;
    }
    classes
};

/// True for the bytes that join each other into a word: letters, digits and `_`.
fn is_word_byte(b: u8) -> bool {
    CLASSES[usize::from(b)] & WORD != 0
}

/// True if `mid` between `before` and `after` stays inside a word (WB6/WB7, WB11/WB12).
fn joins(before: u8, mid: u8, after: u8) -> bool {
    let both = CLASSES[usize::from(before)] & CLASSES[usize::from(after)];
    let mid = CLASSES[usize::from(mid)];
    (mid & MID_LETTER != 0 && both & LETTER != 0) || (mid & MID_NUM != 0 && both & DIGIT != 0)
}

impl<'t> Iterator for AsciiWords<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let bytes = self.text.as_bytes();
        let mut i = self.pos;
        loop {
            while i < bytes.len() && !is_word_byte(bytes[i]) {
                i += 1;
            }
            if i == bytes.len() {
                self.pos = i;
                return None;
            }
            let start = i;
            loop {
                while i < bytes.len() && is_word_byte(bytes[i]) {
                    i += 1;
                }
                // `i > start`: the run above took at least the byte at `start`.
                if i + 1 < bytes.len() && joins(bytes[i - 1], bytes[i], bytes[i + 1]) {
                    if bytes[i] == b':' {
                        // The piece before the colon ends in a letter: it is a word, and
                        // the piece after it starts the next one.
                        self.pos = i + 1;
                        return Some(&self.text[start..i]);
                    }
                    i += 1;
                    continue;
                }
                break;
            }
            self.pos = i;
            // A word joined at a mid character holds letters or digits; a run of `_` alone
            // is no word.
            if bytes[start..i].iter().any(|&b| b != b'_') {
                return Some(&self.text[start..i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(text: &str) -> Vec<&str> {
        text.unicode_words().flat_map(|w| w.split(':')).collect()
    }

    fn fast(text: &str) -> Vec<&str> {
        words(text).collect()
    }

    #[test]
    fn ascii_rules_match_the_reference_on_their_tricky_cases() {
        let cases: &[(&str, &[&str])] = &[
            ("a.b", &["a.b"]),
            ("1,000.5", &["1,000.5"]),
            ("don't", &["don't"]),
            ("a'", &["a"]),
            ("'a'", &["a"]),
            ("_x_", &["_x_"]),
            ("___ _ x", &["x"]),
            ("3a", &["3a"]),
            ("a3.b", &["a3", "b"]),
            ("a.3", &["a", "3"]),
            ("3.a", &["3", "a"]),
            ("a:b", &["a", "b"]),
            ("a::b", &["a", "b"]),
            ("1:2", &["1", "2"]),
            ("a,b 1;2 1'2", &["a", "b", "1;2", "1'2"]),
            ("end. Then, more!", &["end", "Then", "more"]),
            ("a_.b _1._2", &["a_", "b", "_1", "_2"]),
            ("x..y 1..2", &["x", "y", "1", "2"]),
            ("192.168.10.1", &["192.168.10.1"]),
            ("e-mail\tme\r\nnow:", &["e", "mail", "me", "now"]),
            ("", &[]),
        ];
        for &(text, want) in cases {
            assert_eq!(reference(text), want, "reference on {text:?}");
            assert_eq!(fast(text), want, "fast path on {text:?}");
        }
    }

    #[test]
    fn lines_with_other_characters_take_the_reference_path() {
        for text in [
            "plain line\ncafé au lait\nplain again",
            "a\u{00A0}b\r\nc.d\n",
            "x\n\u{0301}y\n:z",
            "日本語のテキスト\nand ascii",
        ] {
            assert_eq!(fast(text), reference(text), "on {text:?}");
        }
    }

    /// Text biased to the characters the ASCII rules treat specially, with a few others
    /// (accented and CJK letters, a combining mark, a zero-width joiner, a no-break space, a
    /// Hebrew letter, an ideographic space) so lines of both paths and their ends are mixed.
    fn texts() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            8 => proptest::sample::select(vec!['a', 'B', 'z', 'Q']),
            4 => proptest::sample::select(vec!['0', '5', '9']),
            6 => proptest::sample::select(vec!['.', '\'', ':', ',', ';', '_']),
            3 => proptest::sample::select(vec![' ', '\t', '\n', '\r']),
            1 => proptest::sample::select(vec!['"', '-', '!', '\u{b}', '\u{c}']),
            1 => proptest::sample::select(vec![
                'é', '日', 'カ', '\u{0301}', '\u{200D}', '\u{00A0}', 'א', '\u{3000}', '\u{2028}'
            ]),
            1 => any::<char>(),
        ];
        proptest::collection::vec(pieces, 0..48).prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// The fast path yields exactly the reference's words, whatever the text.
        #[test]
        fn words_equal_unicode_words_split_at_colons(text in texts()) {
            prop_assert_eq!(fast(&text), reference(&text));
        }
    }
}
