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
