//! MIME-aware tokenization: raw message bytes in, a list of feature strings out.
//!
//! The message is parsed with mail-parser (transfer encodings and charsets decoded to UTF-8),
//! then [`body`] walks its parts, [`headers`] tokenizes selected header fields with the field
//! name as prefix, [`html`] turns HTML into text and link targets, [`url`] splits URLs into
//! hosts and path words, [`normalize`] folds NFKC and strips invisible format characters, and
//! [`words`] splits words by UAX #29. Every cost is bounded by [`TokenizerConfig`] and
//! [`sink`]: the input is cut at `max_input_bytes` (and before the MIME structure that would
//! cost mail-parser more than linear time or memory, see [`parser_input`]), decoded text at
//! `max_text_bytes`, output at `max_tokens` tokens and at [`TOKEN_BYTES_PER_INPUT_BYTE`] times
//! the input's bytes (plus [`TOKEN_BYTES_BASE`]); the hashed byte 4-grams, bounded by their
//! own `byte_ngrams`, come on top.
//!
//! Where the header block ends is decided by [`crate::corpus::header_block`], as for every
//! other reader of header fields; [`parser_input`] makes mail-parser see it the same way.
//!
//! Malformed mail is normal input: a message mail-parser rejects, or one that makes it panic,
//! is tokenized as plain text instead, and [`Tokenized::fallback`] says so. A panic in
//! spamsort's own code is a bug: it is caught as well, but reported ([`Tokenized::own_panic`],
//! [`own_panics`]); see [`guard`].

mod body;
mod entities;
mod guard;
mod headers;
mod html;
pub mod ngrams;
pub mod normalize;
mod parser_input;
mod sink;
mod tokens;
mod url;
mod word_split;
mod words;

pub use guard::own_panics;
pub(crate) use headers::VERDICT_PREFIX;
pub use sink::{TOKEN_BYTES_BASE, TOKEN_BYTES_PER_INPUT_BYTE};
pub use tokens::{Tokens, TokensIter};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sink::Sink;

/// Everything that decides which tokens a message yields. Stored in the model file, so
/// training and classifying always tokenize alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenizerConfig {
    /// Only this many leading bytes of a message are parsed (default 2 MiB).
    pub max_input_bytes: usize,
    /// At most this much decoded body text is tokenized per message (default 256 KiB).
    pub max_text_bytes: usize,
    /// At most this many tokens per message (default 20,000), besides the hashed byte 4-grams
    /// (at most `byte_ngrams` of 8 bytes each).
    pub max_tokens: usize,
    /// Shorter words are dropped, except CJK characters (default 2).
    pub min_word_chars: usize,
    /// Longer words become a `skip:C N` bucket token (default 24).
    pub max_word_chars: usize,
    /// How many `Received` headers, counted from the last (the origin side), yield host and IP
    /// tokens (default 10: on the SpamAssassin corpus every model ranked better with all hops
    /// than with the last two; 10 bounds the cost of forged chains).
    pub received_headers: usize,
    /// Emit `header:NAME` for every header field present (default on).
    pub header_names: bool,
    /// Tokenize the text of every header field (name as prefix), not only the selected ones
    /// (default on; `X-Spam-*` fields are never tokenized).
    pub all_headers: bool,
    /// Emit `html:TAG` for each distinct tag of an HTML part (default on).
    pub html_tags: bool,
    /// Emit orthogonal sparse word bigrams `osb:A GAP B` (default off).
    pub word_bigrams: bool,
    /// Emit hashed character 4-grams `c4:HASH` of the first 3 KB of each text part (default off).
    pub char_ngrams: bool,
    /// Emit hashed byte 4-grams `b4:HASH` of this many leading bytes of the raw message, header
    /// fields included (an mbox envelope line, `X-Spam-*` and `X-Bogosity` fields and white
    /// space at the end left out, line endings made LF), before any other
    /// token; 0: none. Only the SVM and logistic regression see them (see `features::hashed`);
    /// `train` makes them of at most [`BATCH_BYTE_NGRAMS`](crate::models::BATCH_BYTE_NGRAMS)
    /// bytes, and none when no model would see them. Default 3072 (a model started from
    /// nothing, which learns online): in
    /// the TREC online protocol on the SpamAssassin corpus (seeded order, `examples/sweep.rs`)
    /// logistic regression's (1-AUC)% on words and these was 0.154, against 0.203 at 2048,
    /// 0.155 at 4096, 0.167 at 6144, 0.176 at 10240, and 0.472 on words alone.
    // Absent from dumps of older versions, which had no byte 4-grams.
    #[serde(default)]
    pub byte_ngrams: usize,
}

impl Default for TokenizerConfig {
    fn default() -> Self {
        TokenizerConfig {
            max_input_bytes: 2 * 1024 * 1024,
            max_text_bytes: 256 * 1024,
            max_tokens: 20_000,
            min_word_chars: 2,
            max_word_chars: 24,
            received_headers: 10,
            header_names: true,
            all_headers: true,
            html_tags: true,
            word_bigrams: false,
            char_ngrams: false,
            byte_ngrams: 3072,
        }
    }
}

/// Room left for an mbox `From ` envelope line in [`TokenizerConfig::head_bytes`].
const ENVELOPE_ROOM: usize = 64 * 1024;

impl TokenizerConfig {
    /// How many leading bytes of a raw message decide its tokens: `max_input_bytes`, one more
    /// (so [`Tokenized::truncated`] still tells), and room for an envelope line. A reader that
    /// only tokenizes may cut messages here without changing their tokens (unless an envelope
    /// line is longer than 64 KiB), and so hold a 100 MB message in a few MB.
    pub fn head_bytes(&self) -> u64 {
        let bytes = self
            .max_input_bytes
            .saturating_add(1)
            .saturating_add(ENVELOPE_ROOM);
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// Refuses a `max_input_bytes` over [`MAX_MESSAGE_BYTES`](crate::corpus::MAX_MESSAGE_BYTES):
    /// what the tokenizer holds and makes of a message grows with the bytes it reads, and
    /// the readers that only tokenize (the pipe filter, `classify`) hold [`head_bytes`] of it,
    /// so these settings, read from a model file or a dump, must not make them hold a message
    /// of any size whole. The other caps need no bound: they count what those bytes yield.
    ///
    /// [`head_bytes`]: TokenizerConfig::head_bytes
    pub fn check(&self) -> Result<(), String> {
        let most = crate::corpus::MAX_MESSAGE_BYTES;
        if self.max_input_bytes as u64 > most {
            return Err(format!(
                "the tokenizer would read {} bytes of a message, more than the {most} any \
                 message may have",
                self.max_input_bytes
            ));
        }
        Ok(())
    }
}

/// The tokens of one message and how they were obtained.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokenized {
    /// Tokens in the order they were found; repeats are kept (counts matter to some models).
    pub tokens: Tokens,
    /// A cap cut the message short (input bytes, text bytes, token count or token bytes).
    pub truncated: bool,
    /// The MIME parser failed or panicked, or spamsort's own walk of the parsed message
    /// panicked; the raw bytes were tokenized as text.
    pub fallback: bool,
    /// spamsort's own tokenizer code panicked (a bug; also counted by [`own_panics`]). The
    /// tokens are then those of the plain-text fallback, or none if that panicked too.
    pub own_panic: bool,
}

/// Turns raw messages into tokens. Cheap to clone; safe to share between threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokenizer {
    config: TokenizerConfig,
}

impl Tokenizer {
    /// A tokenizer with the given settings.
    pub fn new(config: TokenizerConfig) -> Self {
        Tokenizer { config }
    }

    /// The settings.
    pub fn config(&self) -> &TokenizerConfig {
        &self.config
    }

    /// Tokenizes one raw message. Never panics, whatever the bytes; time and memory are bounded
    /// by the config's caps.
    pub fn tokenize(&self, raw: &[u8]) -> Tokenized {
        let (raw, mut input_cut) = self.input(raw);
        let (parsable, cut) = parser_input::parser_input(raw);
        input_cut |= cut;
        let message = guard::parser(|| mail_parser::MessageParser::default().parse(&*parsable));
        let walked = message.map(|message| {
            guard::own_code(|| {
                let mut sink = Sink::new(&self.config, sink::lf_len(raw));
                ngrams::push_byte_ngrams(&mut sink, raw, self.config.byte_ngrams);
                body::push_message(&mut sink, &message, 0);
                sink
            })
        });
        let (sink, fallback, own_panic) = match walked {
            Some(Some(sink)) => (Some(sink), false, false),
            // A bug in spamsort: reported, and the message still gets the fallback's tokens.
            Some(None) => (self.tokenize_as_text(raw), true, true),
            None => (self.tokenize_as_text(raw), true, false),
        };
        // `None` here: the fallback, spamsort's own code too, panicked.
        let own_panic = own_panic || sink.is_none();
        let (tokens, truncated) = sink.map_or((Tokens::new(), false), |s| (s.tokens, s.truncated));
        Tokenized {
            tokens,
            truncated: truncated || input_cut,
            fallback,
            own_panic,
        }
    }

    /// What the tokenizer reads of a raw message: after its envelope line, at most
    /// `max_input_bytes`; and whether that cut it.
    fn input<'r>(&self, raw: &'r [u8]) -> (&'r [u8], bool) {
        let raw = skip_envelope_line(raw);
        match raw.get(..self.config.max_input_bytes) {
            Some(cut) if cut.len() < raw.len() => (cut, true),
            _ => (raw, false),
        }
    }

    /// The count-vector ids (see [`crate::features::hashed`]) of the message's hashed byte
    /// 4-grams, one per window: the ids of the `b4:` tokens [`Tokenizer::tokenize`] yields,
    /// which stand outside its caps, computed without making strings of them (none when
    /// `byte_ngrams` is 0). Tokenizing with `byte_ngrams` 0 and adding these gives the same
    /// count vector as tokenizing with it.
    pub fn byte_ngram_ids(&self, raw: &[u8]) -> Vec<crate::features::FeatureId> {
        let (raw, _) = self.input(raw);
        ngrams::byte_ngram_buckets(raw, self.config.byte_ngrams)
            .into_iter()
            .map(|bucket| crate::features::hashed::HASHED_BASE + bucket)
            .collect()
    }

    /// Tokenizes many messages in parallel; results are in input order.
    pub fn tokenize_all<'m>(
        &self,
        messages: impl IntoParallelIterator<Item = &'m [u8]>,
    ) -> Vec<Tokenized> {
        messages.into_par_iter().map(|m| self.tokenize(m)).collect()
    }

    /// The fallback: the bytes read as (lossy) UTF-8 text, every word a body token. `None` if
    /// this (spamsort's own code too) panicked.
    fn tokenize_as_text(&self, raw: &[u8]) -> Option<Sink<'_>> {
        guard::own_code(|| {
            let mut sink = Sink::new(&self.config, sink::lf_len(raw));
            ngrams::push_byte_ngrams(&mut sink, raw, self.config.byte_ngrams);
            let text = String::from_utf8_lossy(raw);
            let text = sink.take_text(&text);
            words::push_text(&mut sink, "", text);
            sink
        })
    }
}

/// Text of up to `max` of `pieces` in any order: input for the property tests that hold the
/// tokenizer's hand-written scanners to their references.
#[cfg(test)]
fn text_of_pieces(
    pieces: &[&'static str],
    max: usize,
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::strategy::Strategy;
    proptest::collection::vec(proptest::sample::select(pieces.to_vec()), 0..max)
        .prop_map(|parts| parts.concat())
}

/// Where `needle` (not empty) first occurs in `haystack`, ASCII letters matched in any case.
fn find_ascii_ci(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// Skips an mbox `From ` envelope line at the very start: it is not a header field.
fn skip_envelope_line(raw: &[u8]) -> &[u8] {
    use crate::corpus::header_block::{LineEnds, envelope_len};
    &raw[envelope_len(raw, LineEnds::of(raw))..]
}
