//! `spamsort daemon` on temporary maildirs: messages delivered while it runs are each filed
//! exactly once, byte for byte, where `classify` says; SIGKILL at random moments loses and
//! duplicates nothing; corrections moved by the user are learned.

use crate::util::{TestDir, copy_of_trained_model, sample_files, sigterm_and_wait, trained_model};
use rand::{Rng, SeedableRng};
use spamsort::headers::add_spam_headers;
use spamsort::{SpamFilter, Verdict};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Maildirs {
    inbox: PathBuf,
    spam: PathBuf,
    ham: PathBuf,
}

impl Maildirs {
    fn new(t: &TestDir) -> Self {
        Maildirs {
            inbox: t.maildir("inbox"),
            spam: t.path().join("spam"),
            ham: t.path().join("ham"),
        }
    }
}

/// Starts the daemon and waits until it watches the inbox. Its log goes to `log`.
fn start(model: &Path, dirs: &Maildirs, extra: &[&str], log: &Path) -> Child {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("spamsort"))
        .arg("daemon")
        .arg("--model")
        .arg(model)
        .arg("--inbox")
        .arg(&dirs.inbox)
        .arg("--spam")
        .arg(&dirs.spam)
        .arg("--ham")
        .arg(&dirs.ham)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let mut line = String::new();
    while !line.contains("sorting ") {
        line.clear();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        out.write_all(line.as_bytes()).unwrap();
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut out));
    child
}

/// Delivers as an MTA does: written to tmp/, then renamed into new/.
fn deliver(inbox: &Path, name: &str, bytes: &[u8]) {
    let tmp = inbox.join("tmp").join(name);
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, inbox.join("new").join(name)).unwrap();
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map_or_else(|_| Vec::new(), |d| d.map(|e| e.unwrap().path()).collect())
}

/// 500 messages cycled from the sample, with unique maildir names.
fn messages(n: usize) -> Vec<(String, Vec<u8>)> {
    let files = sample_files();
    (0..n)
        .map(|i| {
            let bytes = std::fs::read(&files[i % files.len()]).unwrap();
            (format!("{}.M{i}P1.test", 1_700_000_000 + i), bytes)
        })
        .collect()
}

/// Asserts every message is filed exactly once, where its verdict sends it, with the bytes
/// `expected` gives, and that nothing else is in the maildirs.
fn assert_filed_once(
    dirs: &Maildirs,
    sent: &[(String, Vec<u8>)],
    expected: impl Fn(&[u8]) -> Vec<u8>,
) {
    let filter = SpamFilter::load(trained_model()).unwrap();
    assert!(
        files_in(&dirs.inbox.join("new")).is_empty(),
        "inbox not empty"
    );
    let mut filed: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for root in [&dirs.spam, &dirs.ham] {
        for sub in ["new", "cur"] {
            for p in files_in(&root.join(sub)) {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                filed.entry(name).or_default().push(p);
            }
        }
        let leftovers = files_in(&root.join("tmp"));
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
    assert_eq!(filed.len(), sent.len(), "extra or missing files");
    for (name, bytes) in sent {
        let copies = filed.get(name).unwrap_or_else(|| panic!("{name} lost"));
        assert_eq!(copies.len(), 1, "{name} filed twice: {copies:?}");
        let verdict = filter.classify(bytes).verdict;
        let folder = if verdict == Verdict::Spam {
            &dirs.spam
        } else {
            &dirs.ham
        };
        assert!(copies[0].starts_with(folder), "{name} in the wrong folder");
        assert!(
            std::fs::read(&copies[0]).unwrap() == expected(bytes),
            "{name} changed"
        );
    }
}

#[test]
fn messages_delivered_while_it_runs_are_filed_once_as_classify_says() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let sent = messages(500);
    // Some are waiting before it starts, the rest arrive while it runs.
    for (name, bytes) in &sent[..100] {
        deliver(&dirs.inbox, name, bytes);
    }
    let mut daemon = start(trained_model(), &dirs, &[], &t.path().join("log"));
    for (name, bytes) in &sent[100..] {
        deliver(&dirs.inbox, name, bytes);
    }
    wait_until("the inbox to empty", || {
        files_in(&dirs.inbox.join("new")).is_empty()
    });
    // SIGHUP reloads the model without stopping.
    let pid = daemon.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let log_path = t.path().join("log");
    wait_until("the reload", || {
        std::fs::read_to_string(&log_path)
            .unwrap()
            .contains("model reloaded")
    });
    sigterm_and_wait(&mut daemon);
    assert_filed_once(&dirs, &sent, |b| b.to_vec());
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    assert!(
        log.lines().filter(|l| l.contains(" P(spam) ")).count() >= 400,
        "one line per message"
    );
}

#[test]
fn sigkill_at_random_moments_loses_and_duplicates_nothing() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let sent = messages(1000);
    let filter = SpamFilter::load(trained_model()).unwrap();
    let marked =
        |b: &[u8]| add_spam_headers(b, &filter.classify(b), filter.thresholds().spam()).unwrap();
    let log = t.path().join("log");
    // A backlog, so kills land inside batches, and a trickle while the kills go on.
    for (name, bytes) in &sent[..700] {
        deliver(&dirs.inbox, name, bytes);
    }
    let inbox = dirs.inbox.clone();
    let to_send = sent[700..].to_vec();
    let delivery = std::thread::spawn(move || {
        for (name, bytes) in &to_send {
            deliver(&inbox, name, bytes);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for _ in 0..30 {
        let mut daemon = start(trained_model(), &dirs, &["--add-headers"], &log);
        std::thread::sleep(Duration::from_millis(rng.random_range(0..60)));
        daemon.kill().unwrap();
        daemon.wait().unwrap();
    }
    delivery.join().unwrap();
    let mut daemon = start(trained_model(), &dirs, &["--add-headers"], &log);
    wait_until("the inbox to empty", || {
        files_in(&dirs.inbox.join("new")).is_empty()
    });
    sigterm_and_wait(&mut daemon);
    assert_filed_once(&dirs, &sent, marked);
    let log = std::fs::read_to_string(&log).unwrap();
    eprintln!(
        "{} of 31 starts recovered an interrupted move",
        log.matches("recovered from an interruption").count()
    );
}

#[test]
fn moving_a_message_out_of_spam_teaches_the_model() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let model = copy_of_trained_model(&t);
    let filter = SpamFilter::load(&model).unwrap();
    let files = sample_files();
    let spam = std::fs::read(&files[0]).unwrap();
    assert_eq!(filter.classify(&spam).verdict, Verdict::Spam);
    let log = t.path().join("log");
    let mut daemon = start(&model, &dirs, &["--learn-from-moves"], &log);
    deliver(&dirs.inbox, "1.spam.test", &spam);
    let filed = dirs.spam.join("new/1.spam.test");
    wait_until("the message to be filed as spam", || filed.exists());
    // The same spam delivered again is new mail, not a correction: filed as spam, not learned.
    deliver(&dirs.inbox, "2.spam.test", &spam);
    let again = dirs.spam.join("new/2.spam.test");
    wait_until("the second copy to be filed as spam", || again.exists());
    // The user says it is not spam: an IMAP server moves it into the ham folder, renamed and
    // marked as read.
    std::fs::rename(&filed, dirs.ham.join("cur/1.renamed.test:2,S")).unwrap();
    let learned = || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("as ham (moved by the user)")
    };
    wait_until("the correction to be learned", learned);
    sigterm_and_wait(&mut daemon);
    let after = SpamFilter::load(&model).unwrap();
    let kind = spamsort::models::ModelKind::BernoulliNb;
    // The log-odds, not P(spam), which rounds to 1 for this message either way.
    let (d0, d1) = (
        filter.classify_with(&spam, kind).unwrap().decision,
        after.classify_with(&spam, kind).unwrap().decision,
    );
    assert!(d1 < d0, "the score moved towards ham: {d0} -> {d1}");
    assert_eq!(
        after.summary().messages[0],
        filter.summary().messages[0] + 1
    );
    assert_eq!(after.summary().messages[1], filter.summary().messages[1]);
}

#[test]
fn a_message_it_cannot_classify_is_filed_as_ham_untouched() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    // Over the 64 MiB the daemon reads (sparse, so cheap to make).
    let big = dirs.inbox.join("tmp/1.big.test");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(65 * 1024 * 1024).unwrap();
    drop(file);
    std::fs::rename(&big, dirs.inbox.join("new/1.big.test")).unwrap();
    let log = t.path().join("log");
    let mut daemon = start(trained_model(), &dirs, &["--add-headers"], &log);
    let filed = dirs.ham.join("new/1.big.test");
    wait_until("the message to be filed", || filed.exists());
    sigterm_and_wait(&mut daemon);
    assert_eq!(std::fs::metadata(&filed).unwrap().len(), 65 * 1024 * 1024);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("unclassified (unreadable: larger than"),
        "{text}"
    );
}
