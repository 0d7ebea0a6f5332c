//! `spamsort tokens`: prints tokens, reads stdin, escapes control characters, reports errors.

use crate::util::{TestDir, spamsort, stdout_of};

#[test]
fn prints_tokens_of_a_file_and_of_stdin() {
    let t = TestDir::new();
    let msg = t.write(
        "m.eml",
        b"Subject: Cheap Meds\n\nVisit http://pills.example/buy\n",
    );
    let out = stdout_of(spamsort().arg("tokens").arg(&msg));
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"subject:cheap") && lines.contains(&"url:pills.example"),
        "{lines:?}"
    );
    let piped = spamsort()
        .args(["tokens", "-"])
        .write_stdin(std::fs::read(&msg).unwrap())
        .assert()
        .success();
    assert_eq!(String::from_utf8_lossy(&piped.get_output().stdout), text);
}

#[test]
fn escapes_terminal_controls_and_fails_clearly() {
    let out = stdout_of(
        spamsort()
            .args(["tokens", "-"])
            .write_stdin("Subject: a\u{1b}]0;pwned\u{7}b\n\nx\n"),
    );
    assert!(
        !out.contains(&0x1b),
        "no raw escape byte reaches the terminal"
    );
    spamsort()
        .args(["tokens", "/no/such/file.eml"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("/no/such/file.eml"));
}

#[test]
fn with_a_model_it_prints_the_tokens_that_model_sees() {
    // Regression: `tokens` always tokenized with the defaults, and a model `train` builds reads
    // fewer bytes for its 4-grams: it printed 3,598 tokens where the model saw 2,575.
    let message = crate::util::sample_class_files("spam")[0].clone();
    let model = crate::util::trained_model();
    let seen = stdout_of(
        spamsort()
            .args(["tokens", "--model"])
            .arg(model)
            .arg(&message),
    );
    let count = String::from_utf8(seen).unwrap().lines().count();
    let explained = stdout_of(
        spamsort()
            .args(["explain", "--model"])
            .arg(model)
            .arg(&message),
    );
    let explained = String::from_utf8(explained).unwrap();
    assert!(
        explained
            .lines()
            .next()
            .unwrap()
            .contains(&format!(", {count} tokens)")),
        "{count} tokens printed; {explained}"
    );
    let defaults = stdout_of(spamsort().arg("tokens").arg(&message));
    assert_ne!(String::from_utf8(defaults).unwrap().lines().count(), count);
}
