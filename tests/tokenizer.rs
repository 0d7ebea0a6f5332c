//! Tokenizer tests: golden files, concrete tokens from real sample messages, and a property
//! test that arbitrary bytes never panic and respect the caps.

use crate::util::{repo_path, to_crlf};
use proptest::prelude::*;
use spamsort::features::hashed::hashed_id;
use spamsort::tokenize::{TOKEN_BYTES_BASE, TOKEN_BYTES_PER_INPUT_BYTE};
use spamsort::{Tokenized, Tokenizer, TokenizerConfig};
use std::path::Path;

fn tokens_of(bytes: &[u8]) -> Vec<String> {
    let out = Tokenizer::new(TokenizerConfig::default()).tokenize(bytes);
    assert_sound(&out, bytes);
    out.tokens.to_vec()
}

fn tokens_of_file(rel: &str) -> Vec<String> {
    tokens_of(&std::fs::read(repo_path(rel)).unwrap())
}

fn assert_has(tokens: &[String], expected: &[&str]) {
    for e in expected {
        assert!(
            tokens.iter().any(|t| t == e),
            "missing token {e:?} in {tokens:?}"
        );
    }
}

/// Every `tests/data/eml/**/NAME.eml` must tokenize, as LF and as CRLF, to `NAME.tokens`.
/// A mismatch writes `NAME.tokens.actual` beside it (copy it over once reviewed). The hashed
/// byte 4-grams (`b4:`, thousands of opaque buckets) are left out of the files; they must be
/// the same for LF and CRLF.
#[test]
fn golden_token_files() {
    let root = repo_path("tests/data/eml");
    let mut ran = 0;
    let mut failures = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let path = entry.unwrap().into_path();
        if path.extension().is_none_or(|e| e != "eml") {
            continue;
        }
        let raw = std::fs::read(&path).unwrap();
        let expected_path = path.with_extension("tokens");
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        let mut hashed_per_ending = Vec::new();
        for (ending, bytes) in [("LF", raw.clone()), ("CRLF", to_crlf(&raw))] {
            let (hashed, words): (Vec<String>, Vec<String>) = tokens_of(&bytes)
                .into_iter()
                .partition(|t| hashed_id(t).is_some());
            hashed_per_ending.push(hashed);
            let actual: String = words.iter().map(|t| format!("{t}\n")).collect();
            if actual != expected {
                std::fs::write(path.with_extension("tokens.actual"), &actual).unwrap();
                failures.push(format!("{} ({ending})", rel(&root, &path)));
            }
        }
        assert!(!hashed_per_ending[0].is_empty(), "{}", rel(&root, &path));
        assert_eq!(
            hashed_per_ending[0],
            hashed_per_ending[1],
            "{}",
            rel(&root, &path)
        );
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} golden fixtures ran");
    assert!(
        failures.is_empty(),
        "golden mismatches (see *.tokens.actual): {failures:?}"
    );
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap().display().to_string()
}

#[test]
fn base64_html_spam_is_decoded() {
    // Real spam whose multipart never closes: mail-parser gives up, our second pass decodes.
    let t = tokens_of_file("corpus/sample/spam/spam-1.00023.b6d27c684f5fc803cfa1060adb2d0805.txt");
    assert_has(
        &t,
        &[
            "enlargement",
            "guaranteed",
            "subject:penile",
            "content-type:text/html",
            "encoding:base64",
        ],
    );
    assert_has(
        &t,
        &[
            "url:a2200.tripod.com.co",
            "url:tripod.com.co",
            "url-path:photo",
            "html:font",
        ],
    );
    assert!(
        !t.iter().any(|x| x.starts_with("pgh0")),
        "base64 text must not leak as words"
    );
}

#[test]
fn a_stray_cr_in_a_header_field_hides_neither_the_mime_fields_nor_the_body() {
    // Found by audit: in a CRLF message, `Subject: hello\rthere` ended the header block at
    // `there` for spamsort alone, so `Content-Type` and the base64 body were read as plain
    // text: a sender's way to hide a body from every model.
    let body = "PGh0bWw+PGJvZHk+Y2hlYXAgdmlhZ3JhIHBpbGxzPC9ib2R5PjwvaHRtbD4=";
    for eol in ["\r\n", "\n"] {
        let message = format!(
            "From: a@b.example{eol}Subject: hello\rthere{eol}MIME-Version: 1.0{eol}\
             Content-Type: text/html{eol}Content-Transfer-Encoding: base64{eol}{eol}{body}{eol}"
        );
        let t = tokens_of(message.as_bytes());
        assert_has(
            &t,
            &[
                "content-type:text/html",
                "encoding:base64",
                "viagra",
                "pills",
            ],
        );
        // The filtered copy reads as the original.
        let marked = spamsort::filter::stamp::add_header_lines(
            message.as_bytes(),
            &["X-Spam-Flag: YES".into(), "X-Spam-Status: Yes".into()],
        )
        .unwrap();
        let words = |t: Vec<String>| {
            t.into_iter()
                .filter(|w| !w.starts_with("b4:"))
                .collect::<Vec<_>>()
        };
        assert_eq!(words(tokens_of(&marked)), words(t), "{eol:?}");
    }
}

#[test]
fn quoted_printable_is_decoded() {
    let t =
        tokens_of_file("corpus/sample/ham/easy-ham-1.00062.009f5a1a8fa88f0b38299ad01562bb37.txt");
    assert_has(
        &t,
        &[
            "encoding:quoted-printable",
            "charset:windows-1252",
            "subject:tiny",
            "subject:dns",
        ],
    );
    assert!(
        !t.iter().any(|x| x.contains("=20") || x.ends_with('=')),
        "QP escapes decoded"
    );
}

#[test]
fn gb2312_chinese_gives_characters_and_bigrams() {
    let t = tokens_of_file("corpus/sample/spam/spam-2.00909.be44baf9966a96b2154b207cc56fe558.txt");
    assert_has(&t, &["charset:gb2312", "血", "癌", "血癌", "病人"]);
    let from =
        tokens_of_file("corpus/sample/spam/spam-1.00397.1a99f98a5b996f99f3661e9609782932.txt");
    assert_has(&from, &["from:全球", "from:销售"]);
}

#[test]
fn koi8r_cyrillic_is_decoded_whole() {
    let t = tokens_of_file("tests/data/eml/crafted/koi8-r.eml");
    assert_has(
        &t,
        &[
            "subject:скидки",
            "здравствуйте",
            "лекарства",
            "charset:koi8-r",
        ],
    );
}

#[test]
fn invisible_characters_and_full_width_letters() {
    let t = tokens_of_file("tests/data/eml/crafted/zero-width.eml");
    assert_has(
        &t,
        &["subject:viagra", "viagra", "cialis", "url:pharma.example"],
    );
    let t = tokens_of_file("tests/data/eml/crafted/full-width.eml");
    assert_has(&t, &["subject:winner", "free", "money", "lucky"]);
}

#[test]
fn attachments_give_only_type_and_name() {
    let t = tokens_of_file("tests/data/eml/crafted/attachments.eml");
    assert_has(
        &t,
        &[
            "content-type:application/pdf",
            "filename:ext:pdf",
            "quarterly",
        ],
    );
    assert_has(
        &t,
        &[
            "subject:original",
            "url:docs.else.example",
            "url-path:share",
        ],
    );
    assert!(
        !t.iter().any(|x| x.contains("secretwordinsidepdf")),
        "attachment bytes are not words"
    );
}

#[test]
fn x_spam_headers_are_ignored() {
    let t =
        tokens_of(b"X-Spam-Flag: YES\nX-Spam-Status: Yes, score=1.0\nSubject: hi\n\nhello there\n");
    assert!(
        t.iter()
            .all(|x| !x.contains("x-spam") && !x.contains("score")),
        "{t:?}"
    );
    assert_has(&t, &["subject:hi", "hello", "there"]);
}

#[test]
fn huge_and_deeply_nested_messages_are_bounded() {
    let cfg = TokenizerConfig::default();
    let mut big = b"Subject: big\n\n".to_vec();
    while big.len() < 20 * 1024 * 1024 {
        big.extend_from_slice(b"lorem ipsum dolor sit amet consectetur adipiscing elit\n");
    }
    let out = Tokenizer::new(cfg.clone()).tokenize(&big);
    assert_sound(&out, &big);
    assert!(out.truncated);
    assert_eq!(capped(&out), cfg.max_tokens);

    let mut nested = String::from("Subject: nest\n");
    for i in 0..1000 {
        nested.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=\"b{i}\"\n\n--b{i}\n"
        ));
    }
    nested.push_str("Content-Type: text/plain\n\ndeep inside\n");
    let out = Tokenizer::new(cfg).tokenize(nested.as_bytes());
    assert_sound(&out, nested.as_bytes());
    assert!(capped(&out) <= 20_000);
}

#[test]
fn byte_4grams_counted_from_the_bytes_are_the_b4_tokens_even_past_the_token_cap() {
    use spamsort::features::hashed::hashed_token;
    let mut big = b"From a@b Mon Jan  1 00:00:00 2024\nSubject: big\n\n".to_vec();
    while big.len() < 64 * 1024 {
        big.extend_from_slice(b"lorem ipsum dolor sit amet consectetur adipiscing elit\n");
    }
    let mut messages = vec![big];
    for rel in ["corpus/sample/spam", "corpus/sample/ham"] {
        let mut files: Vec<_> = std::fs::read_dir(repo_path(rel)).unwrap().collect();
        files.truncate(5);
        for f in files {
            messages.push(std::fs::read(f.unwrap().path()).unwrap());
        }
    }
    for max_tokens in [50, 20_000] {
        let cfg = TokenizerConfig {
            max_tokens,
            ..TokenizerConfig::default()
        };
        let words = TokenizerConfig {
            byte_ngrams: 0,
            ..cfg.clone()
        };
        for raw in &messages {
            let mut whole = Tokenizer::new(cfg.clone()).tokenize(raw).tokens.to_vec();
            let ids = Tokenizer::new(cfg.clone()).byte_ngram_ids(raw);
            assert!(!ids.is_empty());
            let mut split = Tokenizer::new(words.clone()).tokenize(raw).tokens.to_vec();
            split.extend(ids.into_iter().map(hashed_token));
            whole.sort();
            split.sort();
            assert_eq!(whole, split, "max_tokens {max_tokens}");
        }
    }
}

/// The result holds no panic of spamsort's own code (those are bugs: caught so mail is never
/// lost, but they must fail tests), its token bytes stay within the budget for `input`, and
/// the hashed byte 4-grams, outside that budget, within theirs.
fn assert_sound(out: &Tokenized, input: &[u8]) {
    assert!(!out.own_panic, "spamsort's own tokenizer code panicked");
    let (hashed, others): (Vec<&str>, Vec<&str>) =
        out.tokens.iter().partition(|t| hashed_id(t).is_some());
    let bytes: usize = others.iter().map(|t| t.len()).sum();
    assert!(bytes <= input.len() * TOKEN_BYTES_PER_INPUT_BYTE + TOKEN_BYTES_BASE);
    assert!(hashed.len() <= TokenizerConfig::default().byte_ngrams.max(3) - 3);
}

/// The tokens besides the hashed byte 4-grams (which stand outside `max_tokens`).
fn capped(out: &Tokenized) -> usize {
    out.tokens.iter().filter(|t| hashed_id(t).is_none()).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_and_respect_caps(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let cfg = TokenizerConfig { max_tokens: 50, max_text_bytes: 1024, ..TokenizerConfig::default() };
        let out = Tokenizer::new(cfg).tokenize(&bytes);
        prop_assert!(capped(&out) <= 50);
        assert_sound(&out, &bytes);
    }

    #[test]
    fn mime_shaped_input_never_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("Content-Type: multipart/mixed; boundary=\"x\"\n".to_string()),
                Just("Content-Transfer-Encoding: base64\n".to_string()),
                Just("Content-Transfer-Encoding: quoted-printable\n".to_string()),
                Just("Content-Type: text/html; charset=gb2312\n".to_string()),
                Just("Content-Type: message/rfc822\n".to_string()),
                Just("\n--x\n".to_string()),
                Just("--x--\n".to_string()),
                Just("=?utf-8?B?4oCL?= =?koi8-r?Q?=F0?=\n".to_string()),
                Just("<a href='http://[::1]:80/'>&#x110000;&amp</a>\n".to_string()),
                Just(format!("http://{}example.com/ ", "a.".repeat(500))),
                Just(format!("X-{}: ab ab ab ab\n", "n".repeat(300))),
                Just("Received: from a.b.c.d.e.f.g.h.i.j.k.l (x.y.z [192.0.2.1])\n".to_string()),
                Just("<t1><t2><script>x</script><!-- y --><style>".to_string()),
                "[ -~\u{80}-\u{10FFFF}]{0,40}\n",
            ],
            0..40,
        )
    ) {
        let text: String = parts.concat();
        let cfg = TokenizerConfig { max_tokens: 200, ..TokenizerConfig::default() };
        let out = Tokenizer::new(cfg).tokenize(text.as_bytes());
        prop_assert!(capped(&out) <= 200);
        assert_sound(&out, text.as_bytes());
    }
}

#[test]
fn html_without_header_charset_uses_its_meta_charset() {
    // Regression (spam-2/00789 of the SpamAssassin corpus): KOI8-R HTML whose charset is named
    // only in <meta> lost every Cyrillic word.
    let t = tokens_of_file("tests/data/eml/crafted/html-meta-charset.eml");
    assert_has(&t, &["здесь", "реальные", "деньги"]);
}
