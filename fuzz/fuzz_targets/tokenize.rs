//! The tokenizer on arbitrary bytes: never a panic escapes, no panic in spamsort's own code
//! (those are caught so mail is never lost, but they are bugs and fail this target), and the
//! configured caps hold: token count, and token bytes within a multiple of the input's bytes,
//! besides the hashed byte 4-grams, which stand outside both caps (at most `byte_ngrams` tokens
//! of `HASHED_TOKEN_BYTES` each, see `TokenizerConfig::max_tokens`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use spamsort::tokenize::{TOKEN_BYTES_BASE, TOKEN_BYTES_PER_INPUT_BYTE, own_panics};
use spamsort::{Tokenizer, TokenizerConfig};
use std::sync::Once;

/// Bytes of one hashed byte 4-gram token (`features::hashed::HASHED_TOKEN_BYTES`, crate-private).
const HASHED_TOKEN_BYTES: usize = 8;

static QUIET_EXPECTED_PANICS: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    QUIET_EXPECTED_PANICS.call_once(|| {
        // libfuzzer-sys aborts on every panic, even one that is caught. mail-parser's panics
        // are expected and caught by the tokenizer, so put back the standard hook (the first
        // take_hook removes libfuzzer's, the second returns the standard one) and keep it
        // quiet for them; a panic in spamsort's code shows up as `own_panic` below.
        let _ = std::panic::take_hook();
        let standard = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info
                .location()
                .is_some_and(|l| l.file().contains("mail-parser"))
            {
                standard(info);
            }
        }));
    });
    let config = TokenizerConfig::default();
    let max_tokens = config.max_tokens;
    let byte_ngrams = config.byte_ngrams;
    let before = own_panics();
    let tokenized = Tokenizer::new(config).tokenize(data);
    assert!(
        !tokenized.own_panic && own_panics() == before,
        "spamsort's own tokenizer code panicked (see the panic message above)"
    );
    assert!(tokenized.tokens.len() <= max_tokens + byte_ngrams);
    let bytes: usize = tokenized.tokens.iter().map(str::len).sum();
    assert!(
        bytes
            <= data.len() * TOKEN_BYTES_PER_INPUT_BYTE
                + TOKEN_BYTES_BASE
                + byte_ngrams * HASHED_TOKEN_BYTES
    );
});
