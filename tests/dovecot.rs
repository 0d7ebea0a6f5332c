//! The Dovecot IMAPSieve recipe (`contrib/dovecot/`) against a real Dovecot, through
//! `tests/dovecot/run.sh`: a message moved into Junk with a real IMAP client is learned as spam
//! once, moved out again it is learned as ham once, both through `spamc -L` to `serve
//! --allow-tell` and through `spamsort learn`.
//!
//! Needs Debian's dovecot-imapd and dovecot-sieve (`tests/deps.sh --dovecot` installs them, as
//! `.ci/run` does). Without them the script prints a SKIPPED banner and this test passes, unless
//! SPAMSORT_REQUIRE_DOVECOT=1 is set (`.ci/run` sets it when the install worked): then a skip is
//! a failure, so CI cannot skip it silently.

use crate::util::{repo_path, spamsort_bin};
use std::process::Command;

#[test]
fn imapsieve_learns_spam_moved_into_junk_and_ham_moved_out_exactly_once() {
    // coreutils' timeout bounds the whole run; the script bounds each step itself and its trap
    // stops Dovecot and the server on the TERM sent here.
    let output = Command::new("timeout")
        .args(["--kill-after=20", "150", "bash"])
        .arg(repo_path("tests/dovecot/run.sh"))
        .arg(spamsort_bin())
        .output()
        .expect("run tests/dovecot/run.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Shown with --nocapture, and by the harness on failure.
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "tests/dovecot/run.sh failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    if stderr.contains("SKIPPED") {
        return;
    }
    for mode in ["spamc", "spamsort"] {
        assert!(
            stdout.contains(&format!("== LEARN_WITH={mode}\n")),
            "no {mode} round in:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("PASS: Dovecot IMAPSieve learned each move exactly once"),
        "no PASS line in:\n{stdout}"
    );
}
