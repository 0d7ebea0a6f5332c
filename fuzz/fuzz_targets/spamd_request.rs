//! The spamd request parser on arbitrary bytes: it must return a request or a protocol error,
//! never panic, and never read past its line and header limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spamsort::spamd::protocol::{MAX_HEAD, MAX_HEADERS, MAX_LINE, read_request};

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    let parsed = read_request(&mut input);
    let consumed = data.len() - input.len();
    // Each line read is capped at MAX_LINE + 1 bytes; there are at most MAX_HEADERS + 2; the
    // whole head at MAX_HEAD + 1.
    assert!(consumed <= (MAX_HEADERS + 2) * (MAX_LINE + 1));
    assert!(consumed <= MAX_HEAD + 1);
    if let Err(e) = parsed {
        assert!(e.response().starts_with(b"SPAMD/1.5 "));
    }
});
