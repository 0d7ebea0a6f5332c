//! FIFOs where mail is expected are refused without blocking, by every command that reads
//! mail: a TREC index line naming a FIFO, a FIFO inside a maildir, an mbox path that is a
//! FIFO. The rest of the mail is still read. Each command gets a generous timeout, so a hang
//! fails the test instead of stalling CI.

use crate::util::{TestDir, mkfifo, sample, sample_files, spamsort, trained_model};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(120);

/// A folder of a few sample messages of each class, a FIFO `fifo` beside them, and a TREC
/// index `index` listing them, the FIFO among them.
fn index_with_a_fifo(t: &TestDir) -> PathBuf {
    let files = sample_files();
    let mut lines = String::new();
    for (i, path) in files
        .iter()
        .take(4)
        .chain(files.iter().rev().take(4))
        .enumerate()
    {
        let label = if i < 4 { "spam" } else { "ham" };
        t.write(&format!("mail/{i}"), &std::fs::read(path).unwrap());
        lines.push_str(&format!("{label} mail/{i}\n"));
        if i == 1 {
            lines.push_str("spam mail/fifo\n");
        }
    }
    mkfifo(&t.path().join("mail/fifo"));
    t.write("index", lines.as_bytes())
}

/// A maildir of a few sample spam messages with a FIFO in `new/` and one in `cur/`.
fn maildir_with_fifos(t: &TestDir) -> PathBuf {
    let md = t.maildir("Spam");
    for (i, path) in sample_files().iter().take(4).enumerate() {
        t.write(&format!("Spam/cur/{i}:2,S"), &std::fs::read(path).unwrap());
    }
    mkfifo(&md.join("new/1700000000.fifo.host"));
    mkfifo(&md.join("cur/1700000001.fifo.host:2,S"));
    md
}

/// Runs `spamsort ARGS` with the timeout; fails if it did not finish.
fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    spamsort()
        .args(args)
        .timeout(TIMEOUT)
        .output()
        .expect("the command finishes")
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// The FIFO was reported as refused (not merely skipped silently) and nothing hung.
fn assert_refused_fifo(out: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fifo") && stderr.contains("FIFO"),
        "the FIFO is named and refused: {stderr}"
    );
}

#[test]
fn fifo_in_a_trec_index_is_refused_by_learn_classify_train_and_eval_online() {
    let t = TestDir::new();
    let index = index_with_a_fifo(&t);
    let model = t.path().join("model.spamsort");
    std::fs::copy(trained_model(), &model).unwrap();

    let out = run(&[
        os("classify"),
        os("--model"),
        model.as_os_str(),
        index.as_os_str(),
    ]);
    assert_refused_fifo(&out);
    assert_eq!(
        out.status.code(),
        Some(3),
        "an unreadable message is an error"
    );

    let out = run(&[
        os("learn"),
        os("--spam"),
        os("--model"),
        model.as_os_str(),
        index.as_os_str(),
    ]);
    assert_refused_fifo(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("learned 8 message(s)"));

    let trained = t.path().join("trained.spamsort");
    let out = run(&[
        os("train"),
        os("--spam"),
        index.as_os_str(),
        os("--ham"),
        sample("ham").as_os_str(),
        os("--model"),
        trained.as_os_str(),
    ]);
    assert_refused_fifo(&out);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("(1 skipped)"));

    let out = run(&[
        os("eval"),
        os("--format"),
        os("json"),
        os("--online"),
        index.as_os_str(),
    ]);
    assert_refused_fifo(&out);
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (report["spam"].as_u64(), report["ham"].as_u64()),
        (Some(4), Some(4))
    );
}

#[test]
fn fifos_in_a_maildir_never_block_learn_classify_train_or_eval_online() {
    let t = TestDir::new();
    let md = maildir_with_fifos(&t);
    let model = t.path().join("model.spamsort");
    std::fs::copy(trained_model(), &model).unwrap();
    // A maildir's messages are its regular files: the FIFOs are passed over when listing.
    let out = run(&[
        os("classify"),
        os("--model"),
        model.as_os_str(),
        md.as_os_str(),
    ]);
    assert!(out.status.code().is_some(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        4,
        "{out:?}"
    );
    let out = run(&[
        os("learn"),
        os("--spam"),
        os("--model"),
        model.as_os_str(),
        md.as_os_str(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("learned 4 message(s)"));
    let ham = sample("ham");
    let trained = t.path().join("trained.spamsort");
    let out = run(&[
        os("train"),
        os("--spam"),
        md.as_os_str(),
        os("--ham"),
        ham.as_os_str(),
        os("--model"),
        trained.as_os_str(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("trained on 4 spam"));
    let out = run(&[
        os("eval"),
        os("--online"),
        os("--format"),
        os("json"),
        os("--spam"),
        md.as_os_str(),
        os("--ham"),
        ham.as_os_str(),
    ]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn fifo_given_as_a_mailbox_is_refused_without_blocking() {
    let t = TestDir::new();
    let fifo = t.path().join("mbox");
    mkfifo(&fifo);
    let model: &Path = trained_model();
    let out = run(&[
        os("classify"),
        os("--model"),
        model.as_os_str(),
        fifo.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mbox"),
        "{out:?}"
    );
}
