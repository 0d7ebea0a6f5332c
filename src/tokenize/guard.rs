//! Panic guards for the tokenizer, split by whose code panicked. mail-parser is third-party code
//! fed hostile bytes; its panics are expected and answered by tokenizing the message as plain
//! text ([`parser`]). A panic in spamsort's own walk of the parsed message is a bug in spamsort:
//! it is caught too (a filter must never lose a message), but counted process-wide and flagged
//! in the result ([`own_code`]), so tests and fuzz targets fail on it instead of passing quietly.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

static OWN_PANICS: AtomicU64 = AtomicU64::new(0);

/// How many times spamsort's own tokenizer code panicked in this process (each time the
/// message was tokenized as plain text, or not at all, and [`Tokenized::own_panic`] was set).
/// Zero unless spamsort has a bug.
///
/// [`Tokenized::own_panic`]: super::Tokenized::own_panic
pub fn own_panics() -> u64 {
    OWN_PANICS.load(Ordering::Relaxed)
}

/// Runs a call into mail-parser; `None` if it returned `None` or panicked.
pub(crate) fn parser<T>(call: impl FnOnce() -> Option<T>) -> Option<T> {
    catch_unwind(AssertUnwindSafe(call)).ok().flatten()
}

/// Runs spamsort's own tokenizer code; `None` if it panicked, which is counted in
/// [`own_panics`].
pub(crate) fn own_code<T>(code: impl FnOnce() -> T) -> Option<T> {
    let result = catch_unwind(AssertUnwindSafe(code)).ok();
    if result.is_none() {
        OWN_PANICS.fetch_add(1, Ordering::Relaxed);
    }
    result
}

#[cfg(test)]
thread_local! {
    static PANIC_INJECTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Test hook: makes the next [`injection_point`] on this thread panic.
#[cfg(test)]
pub(crate) fn inject_panic() {
    PANIC_INJECTED.with(|p| p.set(true));
}

/// Panics if a test asked for it with [`inject_panic`]; compiled only into unit tests. Placed
/// at the start of spamsort's own MIME walk.
#[cfg(test)]
pub(crate) fn injection_point() {
    if PANIC_INJECTED.with(|p| p.replace(false)) {
        panic!("panic injected into the tokenizer's own code by a test");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::{Tokenizer, TokenizerConfig};

    #[test]
    fn injected_panic_in_own_code_is_reported_not_hidden() {
        let tokenizer = Tokenizer::new(TokenizerConfig::default());
        let message = b"Subject: hello\n\ncheap pills here\n";
        let clean = tokenizer.tokenize(message);
        assert!(!clean.own_panic && !clean.fallback);

        let before = own_panics();
        inject_panic();
        let out = tokenizer.tokenize(message);
        assert!(out.own_panic, "the injected panic must be flagged");
        assert!(
            out.fallback,
            "the message is still tokenized, as plain text"
        );
        assert!(out.tokens.iter().any(|t| t == "pills"), "{:?}", out.tokens);
        // Counted process-wide (other tests may run meanwhile, but never panic in our code).
        assert_eq!(own_panics(), before + 1);
        // The hook fired once: the next message is tokenized normally again.
        assert_eq!(tokenizer.tokenize(message), clean);
    }

    #[test]
    fn parser_guard_turns_a_mail_parser_panic_into_none() {
        assert_eq!(
            parser(|| -> Option<u8> { panic!("stand-in for a mail-parser bug") }),
            None
        );
        assert_eq!(parser(|| Some(7)), Some(7));
    }
}
