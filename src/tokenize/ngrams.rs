//! Optional features beyond single words. Orthogonal sparse bigrams (OSB, as CRM114 and rspamd
//! use): each word paired with each of the next four, with the gap in the token. Hashed
//! character 4-grams over the start of the body text, the representation of the strongest
//! TREC 2005-2007 filters; hashing bounds their number to 2^20 distinct features. Hashed byte
//! 4-grams of the start of the raw message, header fields included (Waterloo's representation:
//! what the sender's software wrote, encodings and all, before any decoding).

use super::Sink;
use crate::corpus::header_block::{self, HeaderBlock};
use crate::features::hashed;

/// Words ahead that each word is paired with.
const OSB_WINDOW: usize = 4;
/// How much text (bytes) feeds the character 4-grams.
const CHAR_NGRAM_BYTES: usize = 3 * 1024;
/// Number of hash buckets for character 4-grams (a power of two).
const CHAR_NGRAM_BUCKETS: u32 = 1 << 20;

/// `osb:a <gap> b` tokens for every pair of words at most [`OSB_WINDOW`] apart.
pub(crate) fn push_word_bigrams(sink: &mut Sink<'_>, words: &[String]) {
    const GAPS: [&str; OSB_WINDOW] = ["0", "1", "2", "3"];
    for (i, a) in words.iter().enumerate() {
        for (gap, b) in words[i + 1..].iter().take(OSB_WINDOW).enumerate() {
            sink.push_joined(&["osb:", a, " ", GAPS[gap], " ", b]);
        }
    }
}

/// `c4:XXXXX` tokens: FNV-1a hashes of every 4-byte window of the lowercased text start.
pub(crate) fn push_char_ngrams(sink: &mut Sink<'_>, text: &str) {
    let end = floor_char_boundary(text, CHAR_NGRAM_BYTES);
    let lower = text[..end].to_lowercase();
    for bucket in hashed_windows(lower.as_bytes(), CHAR_NGRAM_BUCKETS) {
        sink.push_with(|text| hashed::write_bucket_token(text, "c4:", bucket));
    }
}

/// `b4:XXXXX` tokens (see [`crate::features::hashed`]), one per bucket of
/// [`byte_ngram_buckets`], outside the token caps (see `Sink::push_uncapped_fixed_width`).
pub(crate) fn push_byte_ngrams(sink: &mut Sink<'_>, raw: &[u8], max_bytes: usize) {
    // A message's few thousand tokens of the same length, written into one buffer and appended
    // at once: token by token, growing the token list and appending each character, cost as
    // much as all the message's other tokens.
    let buckets = byte_ngram_buckets(raw, max_bytes);
    let mut text = vec![0; buckets.len() * hashed::HASHED_TOKEN_BYTES];
    for (token, &bucket) in text
        .chunks_exact_mut(hashed::HASHED_TOKEN_BYTES)
        .zip(&buckets)
    {
        token.copy_from_slice(&hashed::hashed_token_bytes(bucket));
    }
    let text = String::from_utf8(text).expect("hashed tokens are ASCII");
    sink.push_uncapped_fixed_width(&text, hashed::HASHED_TOKEN_BYTES);
}

/// The hash buckets of the byte 4-grams: FNV-1a hashes of every 4-byte window of the first
/// `max_bytes` of the raw message `raw` (after its envelope line) as [`byte_ngram_input`] gives
/// it, except windows of white space only: at most `max_bytes - 3`, whatever the message holds.
pub(crate) fn byte_ngram_buckets(raw: &[u8], max_bytes: usize) -> Vec<u32> {
    // No window fits: spare the scan of the header block (`train` sets 0 when no model
    // sees 4-grams).
    if max_bytes < 4 {
        return Vec::new();
    }
    hashed_windows(&byte_ngram_input(raw, max_bytes), hashed::HASHED_BUCKETS)
}

/// The bytes byte 4-grams are taken from: the first `max_bytes` of `raw` with every `X-Spam-*`
/// and `X-Bogosity` header field left out (verdicts, ours or another filter's, that a sender can forge and that
/// `spamsort filter` adds, so a filtered copy yields the tokens of the original) and each line
/// ending (CRLF, LF, a lone CR in a CR-only message: see [`header_block`]) made one LF, and
/// white space at the message's end left out (so
/// the message's transport form does not matter: an mbox drops the blank line that ends a
/// message, a file keeps it).
pub(crate) fn byte_ngram_input(raw: &[u8], max_bytes: usize) -> Vec<u8> {
    let raw = raw.trim_ascii_end();
    let block = HeaderBlock::scan(raw);
    let mut out = Vec::with_capacity(max_bytes.min(raw.len()));
    let mut skipping = false;
    // An mbox `From ` envelope line is transport, not message: a copy read from a maildir or
    // through spamc has none.
    let fields = header_block::lines(&raw[block.envelope_end..block.fields_end], block.line_ends);
    let rest = header_block::lines(&raw[block.fields_end..], block.line_ends);
    for line in fields.map(|l| (l, true)).chain(rest.map(|l| (l, false))) {
        let (line, in_header) = line;
        if in_header && !header_block::is_continuation(line) {
            skipping = header_block::field_name(line).is_some_and(super::headers::is_verdict_field);
        }
        if in_header && skipping {
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let ended = text.len() < line.len();
        let take = text.len().min(max_bytes - out.len());
        out.extend_from_slice(&text[..take]);
        if take < text.len() || out.len() == max_bytes {
            return out;
        }
        if ended {
            out.push(b'\n');
        }
    }
    out
}

/// The bucket (of `buckets`, a power of two) of every 4-byte window of `bytes` that is not all
/// white space, in order. Written as one pass that keeps every window's bucket in a list of
/// them all and moves on past a window of white space only, without a branch: the iterator
/// chain it replaces (windows, a filter, a map, each bucket pushed) cost 42 instructions a
/// window, the scan of `classify`'s 4-grams more than counting them.
fn hashed_windows(bytes: &[u8], buckets: u32) -> Vec<u32> {
    debug_assert!(buckets.is_power_of_two());
    let Some(windows) = bytes.len().checked_sub(3) else {
        return Vec::new();
    };
    let space = |b: &u8| b.is_ascii_whitespace();
    // How many bytes in a row, up to the window's last, are white space.
    let mut run = bytes[..3]
        .iter()
        .fold(0_u32, |run, b| if space(b) { run + 1 } else { 0 });
    let mut out = vec![0; windows];
    let mut kept = 0;
    for w in bytes.windows(4) {
        run = if space(&w[3]) { run + 1 } else { 0 };
        // The bucket is below `buckets`, a u32.
        out[kept] = (fnv1a(w) & u64::from(buckets - 1)) as u32;
        kept += usize::from(run < 4);
    }
    out.truncate(kept);
    out
}

/// The 64-bit FNV-1a hash.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
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

    /// The windows' buckets as a chain of iterator adapters gives them.
    fn hashed_windows_by_filter(bytes: &[u8], buckets: u32) -> Vec<u32> {
        bytes
            .windows(4)
            .filter(|w| !w.iter().all(u8::is_ascii_whitespace))
            .map(|w| (fnv1a(w) % u64::from(buckets)) as u32)
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// Every window not all white space, in order, whatever the runs of white space.
        #[test]
        fn hashed_windows_are_those_of_every_window_not_all_white_space(
            bytes in proptest::collection::vec(
                proptest::sample::select(b" \t\r\n\x0cab\xff".to_vec()), 0..200)) {
            for buckets in [hashed::HASHED_BUCKETS, CHAR_NGRAM_BUCKETS, 1] {
                proptest::prop_assert_eq!(
                    hashed_windows(&bytes, buckets),
                    hashed_windows_by_filter(&bytes, buckets)
                );
            }
        }
    }

    #[test]
    fn byte_ngram_input_is_cut_at_max_bytes_mid_line_or_at_its_end() {
        let raw = b"A: b\r\n\r\ncd\r\nef";
        let cuts: [&[u8]; 8] = [
            b"",
            b"A",
            b"A: b",
            b"A: b\n",
            b"A: b\n\n",
            b"A: b\n\nc",
            b"A: b\n\ncd\n",
            b"A: b\n\ncd\nef",
        ];
        for (max, want) in [0, 1, 4, 5, 6, 7, 9, 1000].into_iter().zip(cuts) {
            assert_eq!(byte_ngram_input(raw, max), want, "max {max}");
        }
    }

    #[test]
    fn byte_ngram_input_skips_x_spam_fields_and_unifies_line_endings() {
        let lf = b"X-Spam-Flag: YES\nSubject: hi\nx-spam-status: No,\n\tscore=1\n\nbody\n";
        assert_eq!(byte_ngram_input(lf, 1000), b"Subject: hi\n\nbody");
        let crlf = b"Subject: hi\r\nX-Spam-Level: **\r\n\r\nbody\r\n\r\n";
        assert_eq!(byte_ngram_input(crlf, 1000), b"Subject: hi\n\nbody");
        assert_eq!(
            byte_ngram_input(b"Subject: a\r\rb", 1000),
            b"Subject: a\n\nb"
        );
        // An X-Spam field in the body is body text.
        assert_eq!(
            byte_ngram_input(b"A: b\n\nX-Spam-Flag: x", 1000),
            b"A: b\n\nX-Spam-Flag: x"
        );
        // An mbox envelope line and X-Bogosity are left out too.
        let mbox = b"From a@b Mon Jun 24 17:03:50 2002\nSubject: hi\nX-Bogosity: Ham\n\nbody\n";
        assert_eq!(byte_ngram_input(mbox, 1000), b"Subject: hi\n\nbody");
    }

    #[test]
    fn byte_ngrams_are_bounded_by_their_bytes_and_name_buckets() {
        let cfg = TokenizerConfig::default();
        let mut sink = Sink::new(&cfg, 1 << 20);
        let raw = format!("Subject: x\n\n{}", "abcdefgh".repeat(10_000));
        push_byte_ngrams(&mut sink, raw.as_bytes(), 100);
        assert_eq!(sink.tokens.len(), 100 - 3);
        assert!(
            sink.tokens.iter().all(|t| hashed::hashed_id(t).is_some()),
            "{:?}",
            sink.tokens
        );
        let mut again = Sink::new(&cfg, 1 << 20);
        push_byte_ngrams(&mut again, raw.as_bytes(), 100);
        assert_eq!(sink.tokens, again.tokens);
        let mut none = Sink::new(&cfg, 1 << 20);
        push_byte_ngrams(&mut none, raw.as_bytes(), 0);
        assert!(none.tokens.is_empty());
    }
}
