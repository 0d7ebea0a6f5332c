//! Text to word tokens: normalize, pull out URLs, split words by UAX #29, lowercase, bucket
//! over-long words (`skip:x 30`, as SpamBayes does, so random strings do not flood the
//! vocabulary), and add character bigrams for Chinese and Japanese runs.

use super::normalize::{is_cjk, normalize};
use super::url::{self, Segment};
use super::{Sink, ngrams, word_split};

/// Emits the tokens of a piece of decoded text. `prefix` is empty for body text and the
/// header name plus `:` for header fields. Only body text feeds the optional n-gram features.
/// The caller bounds the text's length (see `Sink::take_text`).
pub(crate) fn push_text(sink: &mut Sink<'_>, prefix: &str, text: &str) {
    if text.is_empty() || sink.is_full() {
        return;
    }
    let text = normalize(text);
    let body = prefix.is_empty();
    if body && sink.config().char_ngrams {
        ngrams::push_char_ngrams(sink, &text);
    }
    // The words kept, for the word bigrams only: a copy of each otherwise made for nothing.
    let bigrams = body && sink.config().word_bigrams;
    let mut words = Vec::new();
    for segment in url::split_urls(&text) {
        match segment {
            Segment::Text(plain) => push_plain(sink, prefix, plain, bigrams.then_some(&mut words)),
            Segment::Url(u) => url::push_url(sink, u),
        }
    }
    if bigrams {
        ngrams::push_word_bigrams(sink, &words);
    }
}

/// Words of text that holds no URL. Collects the kept words into `words` when asked.
fn push_plain(sink: &mut Sink<'_>, prefix: &str, text: &str, mut words: Option<&mut Vec<String>>) {
    let (min, max) = (sink.config().min_word_chars, sink.config().max_word_chars);
    // UAX #29 keeps `:` inside words ("c:a"); splitting on it keeps body words from ever
    // looking like prefixed header tokens.
    for word in word_split::words(text) {
        let Some(first) = word.chars().next() else {
            continue;
        };
        // Most words are ASCII: a byte is a char and none is CJK.
        let ascii = word.is_ascii();
        let chars = if ascii {
            word.len()
        } else {
            word.chars().count()
        };
        if (!ascii && is_cjk(first)) || (chars >= min && chars <= max) {
            let kept = sink.push_lower(prefix, word);
            if let (Some(words), true) = (words.as_deref_mut(), kept) {
                words.extend(sink.tokens.last().map(str::to_owned));
            }
        } else if chars > max {
            use std::fmt::Write;
            let bucket = chars / 10 * 10;
            sink.push_with(|token| {
                token.push_str(prefix);
                token.push_str("skip:");
                token.extend(first.to_lowercase());
                // Writing to a String cannot fail.
                let _ = write!(token, " {bucket}");
            });
        }
    }
    push_cjk_bigrams(sink, prefix, text);
}

/// Overlapping character bigrams over each run of Han / Hiragana / Katakana characters.
fn push_cjk_bigrams(sink: &mut Sink<'_>, prefix: &str, text: &str) {
    if text.is_ascii() {
        return;
    }
    let mut prev: Option<char> = None;
    for c in text.chars() {
        let cur = is_cjk(c).then_some(c);
        if let (Some(a), Some(b)) = (prev, cur) {
            sink.push_with(|token| {
                token.push_str(prefix);
                token.extend([a, b]);
            });
        }
        prev = cur;
    }
}

#[cfg(test)]
mod tests {
    use super::super::TokenizerConfig;
    use super::*;

    fn text_tokens(prefix: &str, text: &str) -> Vec<String> {
        let cfg = TokenizerConfig::default();
        let mut sink = Sink::new(&cfg, 1 << 20);
        push_text(&mut sink, prefix, text);
        sink.tokens.to_vec()
    }

    #[test]
    fn invisible_characters_do_not_split_words() {
        assert_eq!(
            text_tokens("", "Buy VI\u{200B}AG\u{200D}RA now"),
            ["buy", "viagra", "now"]
        );
        assert_eq!(text_tokens("", "ｆｒｅｅ ｍｏｎｅｙ"), ["free", "money"]);
    }

    #[test]
    fn cyrillic_greek_whole_and_cjk_bigrams() {
        assert_eq!(text_tokens("", "Привет κόσμε"), ["привет", "κόσμε"]);
        assert_eq!(
            text_tokens("", "免费发票"),
            ["免", "费", "发", "票", "免费", "费发", "发票"]
        );
    }

    #[test]
    fn long_words_are_bucketed_and_ips_kept() {
        let long = "x".repeat(57);
        assert_eq!(text_tokens("", &long), ["skip:x 50"]);
        assert_eq!(
            text_tokens("", "from 192.168.10.1 a"),
            ["from", "192.168.10.1"]
        );
        assert_eq!(
            text_tokens("subject:", "Cheap Meds"),
            ["subject:cheap", "subject:meds"]
        );
    }
}
