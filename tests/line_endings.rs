//! Line endings and the header/body boundary through every front end: a body that follows the
//! header fields without a blank line is tokenized as body, and a message with lone-CR line
//! endings (whose first field is a forged X-Spam-Flag) keeps every other byte through
//! `filter` and `daemon --add-headers`. (The spamd PROCESS cases sit with the other spamd
//! tests in spamd_server.rs and cli_serve.rs.)

use crate::util::{TestDir, sigterm_and_wait, spamsort, to_crlf, trained_model};
use rand::{Rng, SeedableRng};
use spamsort::corpus::header_block::{LineEnds, field_name, lines};
use spamsort::filter::stamp::{header_section_len, strip_owned_fields};
use spamsort::{Tokenizer, TokenizerConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The message of the reliability issue: a forged verdict first, lone CRs ending every line.
pub const CR_ONLY_FORGED_FLAG: &[u8] = b"X-Spam-Flag: NO\rFrom: a@b\rSubject: s\r\rbody\r";

/// How many header fields of `message` are named `name`.
pub fn count_fields(message: &[u8], name: &str) -> usize {
    let end = spamsort::filter::stamp::header_block_len(message);
    // Read as marking reads lines (`spamsort::filter::stamp`).
    lines(&message[..end], LineEnds::LfOrCr)
        .filter(|l| field_name(l).is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes())))
        .count()
}

/// Asserts `out` is `input` with its owned fields replaced by one X-Spam-Flag and one
/// X-Spam-Status, every other byte as it was.
pub fn assert_marked_byte_exact(out: &[u8], input: &[u8]) {
    assert_eq!(
        strip_owned_fields(out),
        strip_owned_fields(input),
        "{:?}",
        String::from_utf8_lossy(out)
    );
    assert_eq!(count_fields(out, "X-Spam-Flag"), 1);
    assert_eq!(count_fields(out, "X-Spam-Status"), 1);
}

/// `n` pseudo-random lowercase words of 2 to 10 letters, seeded.
fn words(n: usize) -> Vec<String> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1500);
    (0..n)
        .map(|_| {
            let len = rng.random_range(2..=10);
            (0..len)
                .map(|_| char::from(b'a' + rng.random_range(0..26u8)))
                .collect()
        })
        .collect()
}

#[test]
fn every_word_of_a_body_without_blank_line_is_a_token() {
    let body_words = words(1500);
    let mut body = String::from("meeting moved to 3 : 30 p . m . on friday , see you there\n");
    for line in body_words.chunks(12) {
        body.push_str(&line.join(" "));
        body.push('\n');
    }
    let lf = format!("From: a@example.org\nSubject: schedule\n{body}").into_bytes();
    let cr: Vec<u8> = lf
        .iter()
        .map(|&b| if b == b'\n' { b'\r' } else { b })
        .collect();
    let tokenizer = Tokenizer::new(TokenizerConfig::default());
    for (ending, message) in [("LF", lf.clone()), ("CRLF", to_crlf(&lf)), ("CR", cr)] {
        let tokens = tokenizer.tokenize(&message).tokens;
        let expected = body_words.iter().map(String::as_str).chain([
            "meeting", "moved", "to", "30", "on", "friday", "see", "you", "there",
        ]);
        for word in expected {
            assert!(
                tokens.iter().any(|t| t == word),
                "{ending}: body word {word:?} is not a token"
            );
        }
        assert!(
            tokens.iter().any(|t| t == "subject:schedule"),
            "{ending}: the header is still read as header"
        );
        assert!(
            !tokens.iter().any(|t| t.starts_with("header:meeting")),
            "{ending}: a body line was taken for a field"
        );
    }
}

#[test]
fn cr_only_message_with_forged_flag_first_is_kept_by_filter() {
    let assert = spamsort()
        .arg("filter")
        .arg("--model")
        .arg(trained_model())
        .write_stdin(CR_ONLY_FORGED_FLAG)
        .assert()
        .success();
    let out = &assert.get_output().stdout;
    assert_marked_byte_exact(out, CR_ONLY_FORGED_FLAG);
    assert!(out.ends_with(b"\rFrom: a@b\rSubject: s\r\rbody\r"));
    assert!(
        out.starts_with(b"X-Spam-Flag: ") && !out.contains(&b'\n'),
        "the added fields end in the message's lone CR"
    );
}

#[test]
fn body_without_blank_line_passes_filter_whole() {
    let input = b"Subject: s\nmeeting moved to 3 : 30 p . m .\nlast line\n";
    let assert = spamsort()
        .arg("filter")
        .arg("--model")
        .arg(trained_model())
        .write_stdin(&input[..])
        .assert()
        .success();
    let out = &assert.get_output().stdout;
    assert!(out.ends_with(input), "{:?}", String::from_utf8_lossy(out));
    assert_marked_byte_exact(out, input);
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map_or_else(|_| Vec::new(), |d| d.map(|e| e.unwrap().path()).collect())
}

/// The copy of `message` that `daemon --add-headers` files (the message waiting in the inbox's
/// `new/` when it starts), once it is filed; the only file in the spam and ham folders then.
fn filed_by_daemon_add_headers(message: &[u8]) -> Vec<u8> {
    let t = TestDir::new();
    let inbox = t.maildir("inbox");
    let (spam, ham) = (t.path().join("spam"), t.path().join("ham"));
    // Waiting in new/ before the daemon starts: its first sort files it.
    let name = "1700000000.M1P1.test";
    std::fs::write(inbox.join("new").join(name), message).unwrap();
    let mut daemon = Command::new(assert_cmd::cargo::cargo_bin!("spamsort"))
        .args(["daemon", "--add-headers", "--model"])
        .arg(trained_model())
        .arg("--inbox")
        .arg(&inbox)
        .arg("--spam")
        .arg(&spam)
        .arg("--ham")
        .arg(&ham)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let filed_copies = || -> Vec<PathBuf> {
        [&spam, &ham]
            .iter()
            .flat_map(|root| ["new", "cur"].map(|sub| root.join(sub)))
            .flat_map(|dir| files_in(&dir))
            .collect()
    };
    let start = Instant::now();
    while !files_in(&inbox.join("new")).is_empty() || filed_copies().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "not filed");
        std::thread::sleep(Duration::from_millis(20));
    }
    sigterm_and_wait(&mut daemon);
    let filed = filed_copies();
    assert_eq!(filed.len(), 1, "{filed:?}");
    assert!(
        filed[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(name)
    );
    std::fs::read(&filed[0]).unwrap()
}

#[test]
fn cr_only_message_with_forged_flag_first_is_kept_by_daemon_add_headers() {
    let out = filed_by_daemon_add_headers(CR_ONLY_FORGED_FLAG);
    assert_marked_byte_exact(&out, CR_ONLY_FORGED_FLAG);
    assert!(out.ends_with(b"\rFrom: a@b\rSubject: s\r\rbody\r"));
}

/// A forged verdict after a line that is not a field (a fold that lost its indent), before the
/// blank line: a field to Dovecot's Sieve, procmail and spamc, which read fields up to that
/// line; and field-like body text after it.
const FORGED_AFTER_A_LINE_NOT_A_FIELD: &[u8] = b"From: a@example.org\nTo: b@example.org,\n\
    c@example.org\nX-Spam-Flag: YES\nX-Spam-Status: Yes, score=30.0 required=5.0\n\
    Subject: lunch\n\nsee you there\nX-Spam-Flag: body text\n";

#[test]
fn a_forged_verdict_after_a_line_that_is_not_a_field_is_removed_by_filter_serve_and_daemon() {
    // Regression: the header block ends at the line that is not a field, so the forged fields
    // after it stayed in the marked message, where the rules of Sieve and procmail read them.
    let input = FORGED_AFTER_A_LINE_NOT_A_FIELD;
    let filtered = spamsort()
        .args(["filter", "--model"])
        .arg(trained_model())
        .write_stdin(input)
        .output()
        .unwrap()
        .stdout;
    let served = crate::util::serve(trained_model(), &[]);
    let stream = std::net::TcpStream::connect(("127.0.0.1", served.port.parse().unwrap())).unwrap();
    let answer =
        crate::util::spamd_exchange(stream, &crate::util::spamd_request("PROCESS", "", input));
    let body = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(answer.starts_with(b"SPAMD/1.5 0 EX_OK"), "{answer:?}");
    let processed = &answer[body..];
    let filed = filed_by_daemon_add_headers(input);
    for (front_end, out) in [
        ("filter", &filtered[..]),
        ("serve", processed),
        ("daemon", &filed),
    ] {
        let shown = String::from_utf8_lossy(out);
        assert_eq!(
            out,
            &filtered[..],
            "{front_end} disagrees with filter: {shown}"
        );
        let section = &out[..header_section_len(out)];
        let count = |name: &str| {
            lines(section, LineEnds::LfOrCr)
                .filter(|l| field_name(l).is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes())))
                .count()
        };
        assert_eq!(
            (count("X-Spam-Flag"), count("X-Spam-Status")),
            (1, 1),
            "{shown}"
        );
        assert!(
            !shown.contains("score=30.0"),
            "the forged verdict stayed: {shown}"
        );
        assert_eq!(strip_owned_fields(out), strip_owned_fields(input));
        assert!(out.ends_with(
            b"\nc@example.org\nSubject: lunch\n\nsee you there\nX-Spam-Flag: body text\n"
        ));
    }
}
