//! `spamsort serve` against Debian's real spamc client on 127.0.0.1: ping, CHECK exit codes,
//! REPORT, PROCESS output equal to `spamsort filter`, learning with -L, and SIGTERM.
//!
//! These tests need `spamc` (Debian package spamc; `.ci/run` and `tests/deps.sh` install it).
//! Without it they fail and say so, unless SPAMSORT_TESTS_WITHOUT_SPAMC=1 is set, in which
//! case they are skipped with a warning.

use crate::util::{
    Served, TestDir, copy_of_trained_model, loopback_buffer_bytes, sample_files, serve,
    sigterm_and_wait, spamsort, to_crlf, trained_model, transparent_huge_pages,
};
use std::process::Command;

/// spamc, or `None` (after a loud warning) when the environment says to skip.
pub(crate) fn spamc() -> Option<()> {
    let found = Command::new("spamc").arg("-V").output().is_ok();
    if found {
        return Some(());
    }
    if std::env::var_os("SPAMSORT_TESTS_WITHOUT_SPAMC").is_some() {
        eprintln!("WARNING: spamc is not installed; the spamc tests are SKIPPED");
        return None;
    }
    panic!(
        "spamc is not installed: run tests/deps.sh (apt-get install spamc), or set \
         SPAMSORT_TESTS_WITHOUT_SPAMC=1 to skip these tests knowingly"
    );
}

/// Runs spamc against the server with `args`, the message on stdin.
pub(crate) fn run_spamc(s: &Served, args: &[&str], message: &[u8]) -> std::process::Output {
    let mut cmd = assert_cmd::Command::new("spamc");
    cmd.args(["-d", "127.0.0.1", "-p", &s.port])
        .args(args)
        .write_stdin(message.to_vec());
    cmd.output().unwrap()
}

fn spamc_score(s: &Served, message: &[u8]) -> f64 {
    let out = run_spamc(s, &["-c"], message);
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim().split('/').next().unwrap().parse().unwrap()
}

#[test]
fn a_timeout_of_zero_seconds_is_refused_not_a_server_that_answers_nothing() {
    // With no time at all, every request was answered EX_TIMEOUT before it was read, so
    // spamc passed every message on unfiltered.
    let out = spamsort()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--timeout",
            "0",
            "--model",
        ])
        .arg(trained_model())
        .timeout(std::time::Duration::from_secs(10))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("--timeout"), "{stderr}");
}

#[test]
fn spamc_check_report_ping_and_process() {
    let Some(()) = spamc() else { return };
    let served = serve(trained_model(), &[]);
    let ping = run_spamc(&served, &["-K"], b"");
    assert!(ping.status.success(), "{ping:?}");
    assert!(String::from_utf8_lossy(&ping.stdout).contains("SPAMD/1.5 0"));
    let files = sample_files();
    let (spam, ham) = (&files[0], files.last().unwrap());
    // spamc -c: "score/threshold", exit 1 for spam and 0 for ham.
    for (path, code) in [(spam, 1), (ham, 0)] {
        let out = run_spamc(&served, &["-c"], &std::fs::read(path).unwrap());
        assert_eq!(out.status.code(), Some(code), "{}", path.display());
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .ends_with("/5.0")
        );
    }
    let report = run_spamc(&served, &["-R"], &std::fs::read(spam).unwrap());
    let report = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.contains("/5.0") && report.contains("points, 5.0 required"),
        "{report}"
    );
    // PROCESS (spamc's default) gives byte for byte what `spamsort filter` gives.
    for path in files.iter().step_by(10) {
        let lf = std::fs::read(path).unwrap();
        for message in [lf.clone(), to_crlf(&lf)] {
            let via_spamc = run_spamc(&served, &[], &message);
            assert!(via_spamc.status.success());
            let via_filter = spamsort()
                .args(["filter", "--model"])
                .arg(trained_model())
                .write_stdin(message.clone())
                .output()
                .unwrap();
            assert_eq!(via_spamc.stdout, via_filter.stdout, "{}", path.display());
        }
    }
}

#[test]
fn spamc_learns_and_sigterm_stops_the_server() {
    let Some(()) = spamc() else { return };
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    let refusing = serve(&model, &[]);
    let out = run_spamc(&refusing, &["-L", "spam"], &ham);
    assert!(
        !out.status.success(),
        "TELL must be refused without --allow-tell"
    );
    drop(refusing);
    let mut served = serve(&model, &["--allow-tell"]);
    let before = spamc_score(&served, &ham);
    // Learned once; told again, spamc reports it as spamd's answer says.
    for said in ["successfully", "already", "already"] {
        let out = run_spamc(&served, &["-L", "spam"], &ham);
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(said), "{said}: {stdout}");
    }
    let after = spamc_score(&served, &ham);
    assert!(
        after > before,
        "learning as spam raised the score: {before} -> {after}"
    );
    // And the other way: a spam message learned as ham scores lower.
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    let spam_before = spamc_score(&served, &spam);
    let out = run_spamc(&served, &["-L", "ham"], &spam);
    assert!(out.status.success(), "{out:?}");
    assert!(spamc_score(&served, &spam) < spam_before);
    let last = spamc_score(&served, &ham);
    sigterm_and_wait(&mut served.child);
    // The learning was saved: a new server scores the message as the old one last did.
    let restarted = serve(&model, &[]);
    assert_eq!(spamc_score(&restarted, &ham), last);
}

#[test]
fn spamc_headers_gives_what_process_gives_also_past_a_line_that_is_not_a_field() {
    let Some(()) = spamc() else { return };
    let served = serve(trained_model(), &[]);
    // spamc --headers puts the original's body after the answer from its first blank line on.
    let broken_fold: &[u8] = b"From: a@example.com\nTo: a@example.com,\ncarol@example.com\n\
        Subject: broken fold\n\nbody\n";
    let mut messages = vec![broken_fold.to_vec(), to_crlf(broken_fold)];
    messages.extend(
        sample_files()
            .iter()
            .step_by(20)
            .map(|p| std::fs::read(p).unwrap()),
    );
    for message in messages {
        let process = run_spamc(&served, &[], &message);
        let headers = run_spamc(&served, &["--headers"], &message);
        assert!(process.status.success() && headers.status.success());
        assert_eq!(
            String::from_utf8_lossy(&headers.stdout),
            String::from_utf8_lossy(&process.stdout)
        );
    }
}

#[test]
fn cr_only_message_with_forged_flag_first_is_kept_by_spamc_process() {
    use crate::line_endings::{CR_ONLY_FORGED_FLAG, assert_marked_byte_exact};
    let Some(()) = spamc() else { return };
    let served = serve(trained_model(), &[]);
    let out = run_spamc(&served, &[], CR_ONLY_FORGED_FLAG);
    assert!(out.status.success());
    assert_marked_byte_exact(&out.stdout, CR_ONLY_FORGED_FLAG);
}

#[test]
fn spamc_oversize_process_over_max_size_comes_back_unchanged_without_deadlock() {
    let Some(()) = spamc() else { return };
    let served = serve(
        trained_model(),
        &["--max-size", "100000", "--timeout", "30"],
    );
    // More than the kernel can buffer, so a server answering before spamc finished sending
    // would deadlock with it (spamc reads only after sending everything); within spamc's own
    // 256 MiB limit.
    let size = (loopback_buffer_bytes() + (8 << 20)).min(250 << 20);
    let line = b"a long and dull line of an oversize newsletter\n";
    let mut message = b"From: a@example.org\nSubject: big\n\n".to_vec();
    message.extend(line.iter().cycle().take(size));
    let limit = (size + (1 << 20)).to_string();
    // With -x spamc does not fall back to printing its own copy: exit 0 and the same bytes
    // mean the server returned the message.
    for flags in [&["-s", &*limit][..], &["-x", "-s", &limit]] {
        let out = assert_cmd::Command::new("spamc")
            .args(["-d", "127.0.0.1", "-p", &served.port])
            .args(flags)
            .write_stdin(message.clone())
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "spamc {flags:?}: {:?}",
            out.status
        );
        assert!(
            out.stdout == message,
            "spamc {flags:?}: the message changed"
        );
    }
}

#[test]
fn per_user_tells_land_in_each_users_model_file_and_path_tricks_are_refused() {
    let Some(()) = spamc() else { return };
    let t = TestDir::new();
    let shared = copy_of_trained_model(&t);
    let shared_before = std::fs::read(&shared).unwrap();
    std::fs::create_dir(t.path().join("users")).unwrap();
    let template = t.path().join("users/%u.spamsort");
    let s = serve(
        &shared,
        &["--allow-tell", "--user-models", template.to_str().unwrap()],
    );
    let file = |user: &str| t.path().join(format!("users/{user}.spamsort"));
    let (ham, spam) = (
        std::fs::read(sample_files().last().unwrap()).unwrap(),
        std::fs::read(&sample_files()[0]).unwrap(),
    );
    // Before any TELL, a user without a file is answered with the shared model.
    let out = run_spamc(&s, &["-u", "alice", "-c"], &ham);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!file("alice").exists());
    // alice's TELL and bob's land in two files; the shared model is untouched.
    let out = run_spamc(&s, &["-u", "alice", "-L", "spam"], &ham);
    assert!(out.status.success(), "{out:?}");
    let out = run_spamc(&s, &["-u", "bob", "-L", "ham"], &spam);
    assert!(out.status.success(), "{out:?}");
    let (alice, bob) = (
        spamsort::SpamFilter::load(&file("alice")).unwrap(),
        spamsort::SpamFilter::load(&file("bob")).unwrap(),
    );
    let label_of = |f: &spamsort::SpamFilter, m: &[u8]| {
        let tokens = spamsort::Tokenizer::new(f.tokenizer_config().clone())
            .tokenize(m)
            .tokens;
        let digest = spamsort::filter::learned::digest(&tokens);
        f.learned().get(digest).map(|l| l.label)
    };
    assert_eq!(label_of(&alice, &ham), Some(spamsort::Label::Spam));
    assert_eq!(label_of(&bob, &spam), Some(spamsort::Label::Ham));
    // Each file holds only its own user's TELL: the other message is as the shared model has it.
    let shared_model = spamsort::SpamFilter::load(&shared).unwrap();
    assert_eq!(label_of(&alice, &spam), label_of(&shared_model, &spam));
    assert_eq!(label_of(&bob, &ham), label_of(&shared_model, &ham));
    assert_ne!(label_of(&shared_model, &ham), Some(spamsort::Label::Spam));
    // Each user is now answered with the user's own file: alice taught that ham is spam.
    let score = |user: &str| -> f64 {
        let out = run_spamc(&s, &["-u", user, "-c"], &ham);
        let text = String::from_utf8(out.stdout).unwrap();
        text.trim().split('/').next().unwrap().parse().unwrap()
    };
    assert!(
        score("alice") > score("bob"),
        "{} {}",
        score("alice"),
        score("bob")
    );
    assert_eq!(std::fs::read(&shared).unwrap(), shared_before);
    // A user name that is a path trick is refused, and no file appears outside users/.
    for bad in ["../x", "a/b", ".."] {
        let answer = crate::util::spamd_exchange(
            std::net::TcpStream::connect(format!("127.0.0.1:{}", s.port)).unwrap(),
            format!(
                "TELL SPAMC/1.5\r\nContent-length: {}\r\nUser: {bad}\r\nMessage-class: spam\r\nSet: local\r\n\r\n",
                ham.len()
            )
            .into_bytes()
            .into_iter()
            .chain(ham.iter().copied())
            .collect::<Vec<u8>>()
            .as_slice(),
        );
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("SPAMD/1.5 67 "), "{bad}: {answer}");
        assert!(answer.contains("refused"), "{bad}: {answer}");
    }
    assert!(!t.path().join("x.spamsort").exists());
    let mut names: Vec<String> = std::fs::read_dir(t.path().join("users"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".spamsort"))
        .collect();
    names.sort();
    assert_eq!(names, ["alice.spamsort", "bob.spamsort"]);
}

#[test]
fn spamc_z_check_and_process_answer_as_without_z() {
    let Some(()) = spamc() else { return };
    let served = serve(trained_model(), &[]);
    let files = sample_files();
    let (spam, ham) = (&files[0], files.last().unwrap());
    // Debian's spamc is built without zlib: its -z exits EX_USAGE before connecting.
    // (tests/spamd_server.rs sends the same compressed requests over raw sockets.)
    if run_spamc(&served, &["-z"], b"Subject: x\n\nx\n")
        .status
        .code()
        == Some(64)
    {
        eprintln!(
            "WARNING: this spamc is built without zlib support; the spamc -z test is SKIPPED"
        );
        return;
    }
    for path in [spam, ham] {
        let message = std::fs::read(path).unwrap();
        for args in [&["-c"][..], &[]] {
            let plain = run_spamc(&served, args, &message);
            let packed = run_spamc(&served, &[args, &["-z"]].concat(), &message);
            assert_eq!(packed.status.code(), plain.status.code(), "{args:?}");
            assert_eq!(packed.stdout, plain.stdout, "{args:?} {}", path.display());
        }
    }
}

#[test]
fn serve_keeps_its_memory_in_small_pages() {
    // Huge pages held about four times the resident memory at 16 workers (benches/spamd_load).
    let served = serve(trained_model(), &[]);
    assert!(!transparent_huge_pages(served.child.id()));
}
