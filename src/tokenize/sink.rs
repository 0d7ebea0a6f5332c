//! The collector every token producer writes to, and the per-message caps it enforces: decoded
//! text (`max_text_bytes`), token count (`max_tokens`) and total token bytes (a multiple of the
//! input's length, [`TOKEN_BYTES_PER_INPUT_BYTE`] and [`TOKEN_BYTES_BASE`]). Text and input
//! are measured with every CRLF counted as one byte ([`lf_len`]), so a message's LF and CRLF
//! copies reach the caps at the same place and keep the same tokens. The byte budget is
//! the backstop behind the producers' own bounds (host length and parent domains in `url`,
//! header text in `headers`, word length in `words`, values kept whole by [`capped`]): whatever
//! a producer does, a message of N bytes yields at most
//! `TOKEN_BYTES_PER_INPUT_BYTE * N + TOKEN_BYTES_BASE` bytes of tokens.

use super::{TokenizerConfig, Tokens, ngrams};
use crate::features::hashed;

/// Token bytes allowed per byte of (capped) input. Ordinary mail yields about 1 to 3 (header
/// prefixes, Chinese and Japanese character bigrams); with `word_bigrams` on, short words yield
/// up to about 15, which this still allows.
pub const TOKEN_BYTES_PER_INPUT_BYTE: usize = 16;

/// Token bytes allowed whatever the input's length: a short message's header tokens can
/// outweigh it, and `max_tokens` ordinary tokens (20,000 of about 10 bytes) fit in this.
pub const TOKEN_BYTES_BASE: usize = 256 * 1024;

/// Most token bytes a sink reserves before its first token: on the SpamAssassin corpus a
/// message yields about 0.8 bytes of tokens (besides its hashed byte 4-grams) per byte, so
/// reserving the input's length, up to this, spares most messages every regrowth.
const RESERVED_TOKEN_BYTES: usize = 64 * 1024;

/// Input bytes per token reserved for (the corpus's messages yield one per 12 bytes).
const INPUT_BYTES_PER_TOKEN: usize = 8;

/// Most tokens a sink reserves room for before its first token.
const RESERVED_TOKENS: usize = 8 * 1024;

/// Longest value (bytes) kept whole as one token: an address, a transfer encoding, a charset, a
/// content type, a file name's extension, a Message-ID's domain, an HTML tag's name. Longer
/// ones are cut there (see [`capped`]). Real ones are far shorter (an address has at most 254
/// bytes); uncut, a 2 MB value would be a 2 MB token, and the string of a message's tokens
/// would grow to twice that to hold it.
const MAX_VALUE_BYTES: usize = 256;

/// `value` cut to at most [`MAX_VALUE_BYTES`], at a character boundary.
pub(crate) fn capped(value: &str) -> &str {
    &value[..ngrams::floor_char_boundary(value, MAX_VALUE_BYTES)]
}

/// The bytes of `bytes` with the CR of every CRLF left out: the length that the caps charge
/// for a message or a text, the same for its LF and CRLF copies. (A message that is only
/// stored or sent with CRLF line endings, an `.eml` file or spamd's input, is the same message
/// as its LF copy in a maildir; charged by its raw length, a CRLF copy that reached a cap
/// kept other tokens, and "learn once" counted the two copies twice.) The cut at
/// `max_input_bytes` stays one of raw bytes: readers hold only that much of a message (see
/// [`TokenizerConfig::head_bytes`]), so a message past it may still yield other tokens as CRLF.
pub(crate) fn lf_len(bytes: &[u8]) -> usize {
    bytes.len() - memchr::memmem::find_iter(bytes, b"\r\n").count()
}

/// Where `text` is cut to fit a budget of `budget` bytes, a CRLF charged as one byte (its LF,
/// see [`lf_len`]), at a character boundary and never between a CR and its LF: the cut's
/// length in `text`, and the bytes charged for it (its [`lf_len`]). The LF and CRLF copies of
/// a text are cut at the same line and character.
pub(crate) fn text_cut(text: &str, budget: usize) -> (usize, usize) {
    if budget == 0 {
        return (0, 0);
    }
    let bytes = text.as_bytes();
    let (mut at, mut left) = (0, budget);
    for crlf in memchr::memmem::find_iter(bytes, b"\r\n") {
        // Bytes from `at` up to the CR, each charged; then the CRLF, charged as one.
        let run = crlf - at;
        if run >= left {
            break;
        }
        // At least a byte left for the LF: the CRLF is taken whole.
        left -= run + 1;
        at = crlf + 2;
    }
    let end = ngrams::floor_char_boundary(text, at.saturating_add(left).min(text.len()));
    // `end` is at or after `at`: `at` follows an LF, a character boundary.
    (end, budget - left + (end - at))
}

/// Collects tokens and enforces the per-message caps.
pub(crate) struct Sink<'c> {
    config: &'c TokenizerConfig,
    pub(crate) tokens: Tokens,
    text_left: usize,
    bytes_left: usize,
    /// Tokens kept outside the caps (see [`Sink::push_uncapped_fixed_width`]).
    uncapped: usize,
    pub(crate) truncated: bool,
}

impl<'c> Sink<'c> {
    /// An empty sink for a message of `input_len` bytes (after the `max_input_bytes` cut).
    pub(crate) fn new(config: &'c TokenizerConfig, input_len: usize) -> Self {
        // Room for what most messages yield, so the token list is not grown a dozen times
        // from nothing, but bounded: a block as large as a big message's tokens, reserved up
        // front, made the server exceed its address-space bound (tests/bounded_cost.rs)
        // where growing did not. The hashed byte 4-grams come on top, first: at most one
        // token of `HASHED_TOKEN_BYTES` per byte of their input, bounded by `byte_ngrams`.
        let byte_ngrams = config.byte_ngrams.min(input_len);
        let tokens = Tokens::with_capacity(
            input_len.min(RESERVED_TOKEN_BYTES) + byte_ngrams * hashed::HASHED_TOKEN_BYTES,
            (input_len / INPUT_BYTES_PER_TOKEN).min(RESERVED_TOKENS) + byte_ngrams,
        );
        Sink {
            config,
            tokens,
            text_left: config.max_text_bytes,
            bytes_left: input_len
                .saturating_mul(TOKEN_BYTES_PER_INPUT_BYTE)
                .saturating_add(TOKEN_BYTES_BASE),
            uncapped: 0,
            truncated: false,
        }
    }

    pub(crate) fn config(&self) -> &'c TokenizerConfig {
        self.config
    }

    /// True once `max_tokens` tokens (besides the uncapped ones) were collected or the
    /// token-bytes budget is spent.
    pub(crate) fn is_full(&self) -> bool {
        self.tokens.len() - self.uncapped >= self.config.max_tokens || self.bytes_left == 0
    }

    /// Keeps the tokens of `text`, each `width` bytes long (see
    /// [`Tokens::push_fixed_width`]), outside the caps: for the hashed byte 4-grams, bounded by
    /// their own byte count (`byte_ngrams`). Left out of the caps, they leave the other tokens
    /// the same with or without them, so `train` may count them straight from the bytes
    /// instead (see [`super::Tokenizer::byte_ngram_ids`]).
    pub(crate) fn push_uncapped_fixed_width(&mut self, text: &str, width: usize) {
        let before = self.tokens.len();
        self.tokens.push_fixed_width(text, width);
        self.uncapped += self.tokens.len() - before;
    }

    /// Charges `text` against the decoded-text budget and returns the part that fits. The CR
    /// of a CRLF is not charged (see [`text_cut`]): a message's text costs the same whether
    /// its lines end in LF or CRLF, so both copies keep the same text, and so the same tokens
    /// and the same identity for "learn once".
    pub(crate) fn take_text<'t>(&mut self, text: &'t str) -> &'t str {
        let (end, charged) = text_cut(text, self.text_left);
        if end < text.len() {
            self.truncated = true;
        }
        self.text_left -= charged;
        &text[..end]
    }

    /// Keeps the token `write` appends to the string it is given (see [`Tokens::push_with`]) if
    /// the caps allow, and says whether it did; a token over the bytes left ends the
    /// collection, as the count cap does, so the tokens kept are always a prefix of the full
    /// list.
    pub(crate) fn push_with(&mut self, write: impl FnOnce(&mut String)) -> bool {
        if self.is_full() {
            self.truncated = true;
            return false;
        }
        let before = self.tokens.bytes();
        self.tokens.push_with(write);
        let len = self.tokens.bytes() - before;
        if len > self.bytes_left {
            self.tokens.pop();
            self.truncated = true;
            self.bytes_left = 0;
            return false;
        }
        self.bytes_left -= len;
        true
    }

    /// Keeps the concatenation of `parts` as one token if the caps allow.
    pub(crate) fn push_joined(&mut self, parts: &[&str]) {
        self.push_with(|text| parts.iter().for_each(|part| text.push_str(part)));
    }

    /// Keeps `prefix` followed by `word` lowercased if the caps allow; says whether it did.
    pub(crate) fn push_lower(&mut self, prefix: &str, word: &str) -> bool {
        self.push_lower_joined(prefix, &[word])
    }

    /// Keeps `prefix` followed by the concatenation of `parts` lowercased (character by
    /// character) if the caps allow; says whether it did.
    pub(crate) fn push_lower_joined(&mut self, prefix: &str, parts: &[&str]) -> bool {
        self.push_with(|text| {
            text.push_str(prefix);
            for part in parts {
                if part.is_ascii() {
                    let start = text.len();
                    text.push_str(part);
                    text[start..].make_ascii_lowercase();
                } else {
                    text.extend(part.chars().flat_map(char::to_lowercase));
                }
            }
        })
    }

    /// Total bytes of the tokens collected.
    #[cfg(test)]
    pub(crate) fn token_bytes(&self) -> usize {
        self.tokens.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::{Tokenized, Tokenizer};

    /// Asserts that `bytes` of tokens are at most `k` times the bytes of `raw`.
    fn assert_at_most(k: usize, bytes: usize, raw: &str) {
        assert!(
            bytes <= k * raw.len(),
            "{bytes} token bytes from {}",
            raw.len()
        );
    }

    /// Tokenizes `raw` with the default settings but no byte 4-grams (the producers under test
    /// here are the word tokens'; the 4-grams are bounded by their own byte count, see
    /// `ngrams`); returns the result and its token bytes.
    fn tokenize(raw: &str) -> (Tokenized, usize) {
        let config = TokenizerConfig {
            byte_ngrams: 0,
            ..TokenizerConfig::default()
        };
        let out = Tokenizer::new(config).tokenize(raw.as_bytes());
        let bytes = out.tokens.bytes();
        assert!(!out.own_panic);
        assert!(bytes <= raw.len() * TOKEN_BYTES_PER_INPUT_BYTE + TOKEN_BYTES_BASE);
        (out, bytes)
    }

    #[test]
    fn url_host_of_32000_labels_yields_fewer_token_bytes_than_input_bytes() {
        let raw = format!("Subject: hi\n\nhttp://{}com/xy\n", "a.".repeat(32_000));
        let (out, bytes) = tokenize(&raw);
        assert!(
            bytes < raw.len() / 10,
            "{bytes} token bytes from {}",
            raw.len()
        );
        for t in [
            "url:com",
            "url:a.com",
            "url:a.a.a.a.a.a.a.a.com",
            "url-path:xy",
        ] {
            assert!(
                out.tokens.iter().any(|x| x == t),
                "missing {t}: {:?}",
                out.tokens
            );
        }
        assert!(out.tokens.iter().all(|t| t.len() <= "url:".len() + 253));
    }

    #[test]
    fn hosts_in_received_and_addresses_are_bounded_like_urls() {
        let host = format!("{}example.com", "a.".repeat(20_000));
        let raw = format!(
            "Received: from {host} (HELO {host}) by {host}; Mon, 1 Jan 2024 00:00:00 +0000\n\
             From: Someone <x@{host}>\nSubject: hi\n\nbody\n"
        );
        let (_, bytes) = tokenize(&raw);
        // The address is kept once (`from:addr:`, cut to `MAX_VALUE_BYTES`); the hosts add
        // little.
        assert_at_most(1, bytes, &raw);
    }

    #[test]
    fn long_field_name_is_cut_before_it_prefixes_every_word() {
        let name = format!("X{}", "n".repeat(5000));
        let raw = format!("Subject: hi\n{name}: {}\n\nbody\n", ["ab"; 3000].join(" "));
        let (out, bytes) = tokenize(&raw);
        assert!(out.tokens.iter().all(|t| t.len() <= "header:".len() + 64));
        assert_at_most(16, bytes, &raw);
        assert!(out.tokens.iter().any(|t| t == "body"));
    }

    #[test]
    fn many_distinct_html_tags_yield_tokens_linear_in_input() {
        let tags: String = (0..40_000).map(|i| format!("<t{i}>")).collect();
        let raw = format!("Subject: hi\nContent-Type: text/html\n\n{tags}\n");
        let (out, bytes) = tokenize(&raw);
        assert!(out.truncated, "more tags than max_tokens");
        assert_at_most(2, bytes, &raw);
    }

    #[test]
    fn long_values_kept_whole_are_cut_to_a_short_token() {
        // Far past the cut, within what mail-parser is handed of a header field (see
        // `parser_input`'s caps: a longer value would reach the sink cut already).
        let long = "v".repeat(30_000);
        let raw = format!(
            "Subject: hi\nMessage-ID: <a@{long}>\nFrom: <x@{long}.example>\n\
             Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\n\
             Content-Type: text/html; charset={long}\nContent-Transfer-Encoding: {long}\n\n\
             <{long}>body</{long}>\n--b\n\
             Content-Type: application/{long}\n\
             Content-Disposition: attachment; filename=\"a.{long}\"\n\nzz\n--b--\n"
        );
        let (out, bytes) = tokenize(&raw);
        assert_at_most(1, bytes, &raw);
        let longest = out.tokens.iter().map(str::len).max().unwrap_or(0);
        assert!(
            longest <= "filename:ext:".len() + 4 * MAX_VALUE_BYTES,
            "{longest}"
        );
        for prefix in [
            "message-id:",
            "from:addr:x@",
            "charset:",
            "encoding:",
            "html:",
            "content-type:application/",
            "filename:ext:",
        ] {
            let cut = format!("{prefix}{}", "v".repeat(MAX_VALUE_BYTES));
            assert!(
                out.tokens
                    .iter()
                    .any(|t| t.starts_with(&cut[..cut.len() - 10])),
                "no {prefix} token: {:?}",
                out.tokens
                    .iter()
                    .map(|t| &t[..t.len().min(40)])
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn many_urls_of_ten_labels_stay_within_the_multiple() {
        let raw = format!(
            "Subject: hi\n\n{}\n",
            "http://a.b.c.d.e.f.g.h.i.example/p ".repeat(2000)
        );
        let (_, bytes) = tokenize(&raw);
        assert_at_most(8, bytes, &raw);
    }

    /// Regression (auditA): the text budget charged the CR of every CRLF, so a message of
    /// over `max_text_bytes` of text kept less of it as CRLF than as LF: the two copies had
    /// other tokens, and "learn once" learned the same message twice.
    #[test]
    fn the_text_budget_cuts_lf_and_crlf_copies_at_the_same_place() {
        let lf = "ab cd\n\u{e9}f gh\nij\n\nkl";
        let crlf = lf.replace('\n', "\r\n");
        for budget in 0..=lf.len() + 2 {
            let (end, charged) = text_cut(lf, budget);
            let (end2, charged2) = text_cut(&crlf, budget);
            assert_eq!(
                &crlf[..end2].replace("\r\n", "\n"),
                &lf[..end],
                "budget {budget}"
            );
            assert_eq!((charged, charged2), (end, end), "budget {budget}");
            assert!(!crlf[..end2].ends_with('\r'), "budget {budget}");
            assert_eq!(lf_len(&crlf.as_bytes()[..end2]), end);
        }
        let config = TokenizerConfig {
            max_text_bytes: 4096,
            byte_ngrams: 0,
            ..TokenizerConfig::default()
        };
        let body: String = (0..3000).map(|i| format!("w{i} x{i}\n")).collect();
        let raw = format!("Subject: long\nFrom: a@b.example\n\n{body}");
        let tokenizer = Tokenizer::new(config);
        let lf = tokenizer.tokenize(raw.as_bytes());
        let crlf = tokenizer.tokenize(raw.replace('\n', "\r\n").as_bytes());
        assert!(lf.truncated);
        assert_eq!(lf.tokens, crlf.tokens);
        // The token-bytes budget, reached here by many long-named fields: measured on the raw
        // length, the CRLF copy's was larger and it kept more tokens.
        let words = vec!["ab"; 2700].join(" ");
        let fields: String = (b'A'..b'I')
            .map(|c| format!("X-{}: {words}\n", (c as char).to_string().repeat(62)))
            .collect();
        let raw = format!("From: a@b.example\nSubject: hi\n{fields}\nbody\n");
        let tokenizer = Tokenizer::default();
        let lf = tokenizer.tokenize(raw.as_bytes());
        let crlf = tokenizer.tokenize(raw.replace('\n', "\r\n").as_bytes());
        assert!(lf.truncated);
        assert_eq!(lf.tokens, crlf.tokens);
    }

    #[test]
    fn token_bytes_stop_at_the_budget_of_the_input_length() {
        let cfg = TokenizerConfig {
            max_tokens: usize::MAX,
            ..TokenizerConfig::default()
        };
        let input_len = 1000;
        let budget = input_len * TOKEN_BYTES_PER_INPUT_BYTE + TOKEN_BYTES_BASE;
        let mut sink = Sink::new(&cfg, input_len);
        let word = "x".repeat(1000);
        for _ in 0..budget {
            sink.push_joined(&["p:", &word]);
        }
        assert!(sink.truncated);
        assert!(sink.is_full());
        assert!(sink.token_bytes() <= budget);
        assert!(sink.token_bytes() > budget - 1002, "{}", sink.token_bytes());
        // Once full, even a short token is refused: the kept tokens are a prefix.
        let kept = sink.tokens.len();
        sink.push_joined(&["a"]);
        assert_eq!(sink.tokens.len(), kept);
    }
}
