//! The tokenizer on arbitrary bytes: never a panic, and the configured caps hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spamsort::{Tokenizer, TokenizerConfig};

fuzz_target!(|data: &[u8]| {
    let config = TokenizerConfig::default();
    let max_tokens = config.max_tokens;
    let tokenized = Tokenizer::new(config).tokenize(data);
    assert!(tokenized.tokens.len() <= max_tokens);
});
