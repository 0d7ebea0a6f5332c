//! Optional features beyond single words. Orthogonal sparse bigrams (OSB, as CRM114 and rspamd
//! use): each word paired with each of the next four, with the gap in the token. Hashed
//! character 4-grams over the start of the body text, the representation of the strongest
//! TREC 2005-2007 filters; hashing bounds their number to 2^20 distinct features.

use super::Sink;

/// Words ahead that each word is paired with.
const OSB_WINDOW: usize = 4;
/// How much text (bytes) feeds the character 4-grams.
const CHAR_NGRAM_BYTES: usize = 3 * 1024;
/// Number of hash buckets for character 4-grams (a power of two).
const CHAR_NGRAM_BUCKETS: u64 = 1 << 20;

/// `osb:a <gap> b` tokens for every pair of words at most [`OSB_WINDOW`] apart.
pub(crate) fn push_word_bigrams(sink: &mut Sink<'_>, words: &[String]) {
    for (i, a) in words.iter().enumerate() {
        for (gap, b) in words[i + 1..].iter().take(OSB_WINDOW).enumerate() {
            sink.push_joined(&["osb:", a, " ", &gap.to_string(), " ", b]);
        }
    }
}

/// `c4:XXXXX` tokens: FNV-1a hashes of every 4-byte window of the lowercased text start.
pub(crate) fn push_char_ngrams(sink: &mut Sink<'_>, text: &str) {
    let end = floor_char_boundary(text, CHAR_NGRAM_BYTES);
    let lower = text[..end].to_lowercase();
    for window in lower.as_bytes().windows(4) {
        if window.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let hash = window.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        sink.push_joined(&["c4:", &format!("{:05x}", hash % CHAR_NGRAM_BUCKETS)]);
    }
}

/// The largest index `<= max` that lies on a char boundary of `text`.
pub(crate) fn floor_char_boundary(text: &str, max: usize) -> usize {
    if max >= text.len() {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::TokenizerConfig;
    use super::*;

    #[test]
    fn osb_pairs_carry_the_gap() {
        let cfg = TokenizerConfig::default();
        let mut sink = Sink::new(&cfg, 1 << 20);
        let words: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        push_word_bigrams(&mut sink, &words);
        assert_eq!(sink.tokens, ["osb:a 0 b", "osb:a 1 c", "osb:b 0 c"]);
    }

    #[test]
    fn char_ngrams_are_bounded_and_stable() {
        let cfg = TokenizerConfig::default();
        let mut sink = Sink::new(&cfg, 1 << 20);
        push_char_ngrams(&mut sink, &"abcdefgh".repeat(1000));
        assert_eq!(sink.tokens.len(), CHAR_NGRAM_BYTES - 3);
        assert_eq!(sink.tokens[0], sink.tokens[8]);
        assert!(sink.tokens[0].starts_with("c4:") && sink.tokens[0].len() == 8);
        assert_eq!(floor_char_boundary("añb", 2), 1);
    }
}
