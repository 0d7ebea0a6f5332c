//! `spamsort daemon` on temporary maildirs: messages delivered while it runs are each filed
//! exactly once, byte for byte, where `classify` says; SIGKILL at random moments and crashes in
//! the middle of a move lose and duplicate nothing, and the restart after a crash recovers;
//! the layouts people use work (separate folders, the inbox as ham folder with `.Junk` inside,
//! however spelled) and unsafe ones are refused before anything is touched; corrections moved
//! by the user are learned.

use crate::util::{
    Running, TestDir, copy_of_trained_model, sample_files, sigterm_and_wait, spamsort,
    trained_model, transparent_huge_pages,
};
use rand::{Rng, SeedableRng};
use spamsort::daemon::CRASH_POINT_VAR;
use spamsort::filter::policy::HeaderStyle;
use spamsort::{SpamFilter, Verdict};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The folders as given to the daemon (spelled as a user might).
pub(crate) struct Maildirs {
    pub(crate) inbox: PathBuf,
    pub(crate) spam: PathBuf,
    pub(crate) ham: PathBuf,
}

impl Maildirs {
    /// Separate folders: inbox, spam, ham.
    pub(crate) fn new(t: &TestDir) -> Self {
        Maildirs {
            inbox: t.maildir("inbox"),
            spam: t.path().join("spam"),
            ham: t.path().join("ham"),
        }
    }

    /// Dovecot's layout: the inbox `M` is the ham folder, spam goes to `M/.Junk`. `spelling`
    /// is how the ham and spam folders are named: `plain`, through a `symlink` to `M`, or
    /// with a `trailing-slash`.
    fn inbox_as_ham(t: &TestDir, spelling: &str) -> Self {
        let inbox = t.maildir("M");
        let (inbox, ham, spam) = match spelling {
            "plain" => (inbox.clone(), inbox.clone(), inbox.join(".Junk")),
            "symlink" => {
                let link = t.path().join("L");
                std::os::unix::fs::symlink(&inbox, &link).unwrap();
                (inbox, link.clone(), link.join(".Junk"))
            }
            "trailing-slash" => {
                let slash = |p: &Path| PathBuf::from(format!("{}/", p.display()));
                (slash(&inbox), inbox.clone(), slash(&inbox.join(".Junk")))
            }
            _ => unreachable!("{spelling}"),
        };
        Maildirs { inbox, spam, ham }
    }
}

/// The daemon's command line for `dirs`, not yet started.
pub(crate) fn daemon_command(model: &Path, dirs: &Maildirs, extra: &[&str]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("spamsort"));
    cmd.arg("daemon")
        .arg("--model")
        .arg(model)
        .arg("--inbox")
        .arg(&dirs.inbox)
        .arg("--spam")
        .arg(&dirs.spam)
        .arg("--ham")
        .arg(&dirs.ham)
        .args(extra);
    cmd
}

/// Starts the daemon and waits until it watches the inbox. Its log goes to `log`.
pub(crate) fn start(model: &Path, dirs: &Maildirs, extra: &[&str], log: &Path) -> Running {
    start_command(daemon_command(model, dirs, extra), log)
}

/// Starts `cmd` and waits until the daemon watches the inbox (or exits); its log, up to that
/// line at once and the rest as it comes, goes to `log`.
pub(crate) fn start_command(mut cmd: Command, log: &Path) -> Running {
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
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
    Running(child)
}

/// Stops the daemon with SIGTERM and waits until its log is complete: its last line, `stopped`,
/// is in `log` (the log is copied by a thread that may lag behind the process's exit).
pub(crate) fn stop(daemon: &mut Child, log: &Path) {
    let stopped = || {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.ends_with("stopped"))
            .count()
    };
    let before = stopped();
    sigterm_and_wait(daemon);
    wait_until("the daemon's last log line", || stopped() > before);
}

/// Delivers as an MTA does: written to tmp/, then renamed into new/.
pub(crate) fn deliver(inbox: &Path, name: &str, bytes: &[u8]) {
    let tmp = inbox.join("tmp").join(name);
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, inbox.join("new").join(name)).unwrap();
}

pub(crate) fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn files_in(dir: &Path) -> Vec<PathBuf> {
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

/// Asserts every message is exactly once in the folders, in `new/` of the folder its verdict
/// sends it to (ham to the inbox when the inbox is the ham folder), with the bytes `expected`
/// gives, and that nothing else is in the maildirs.
fn assert_filed_once(
    dirs: &Maildirs,
    sent: &[(String, Vec<u8>)],
    expected: impl Fn(&[u8]) -> Vec<u8>,
) {
    let filter = SpamFilter::load(trained_model()).unwrap();
    let canonical = |p: &Path| p.canonicalize().unwrap();
    let (inbox, spam, ham) = (
        canonical(&dirs.inbox),
        canonical(&dirs.spam),
        canonical(&dirs.ham),
    );
    let mut roots = vec![inbox.clone(), spam.clone(), ham.clone()];
    roots.sort();
    roots.dedup();
    let mut filed: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for root in &roots {
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
        assert_eq!(copies.len(), 1, "{name} in two places: {copies:?}");
        let verdict = filter.classify(bytes).verdict;
        let folder = if verdict == Verdict::Spam {
            &spam
        } else {
            &ham
        };
        assert_eq!(
            copies[0].parent().unwrap(),
            folder.join("new"),
            "{name} in the wrong folder"
        );
        assert!(
            std::fs::read(&copies[0]).unwrap() == expected(bytes),
            "{name} changed"
        );
    }
}

/// How many spam messages among `sent`.
fn spam_count(sent: &[(String, Vec<u8>)]) -> usize {
    let filter = SpamFilter::load(trained_model()).unwrap();
    sent.iter()
        .filter(|(_, b)| filter.classify(b).verdict == Verdict::Spam)
        .count()
}

/// Spam messages (the sample's first, which the model calls spam) named for crash points.
fn crash_messages(n: usize) -> Vec<(String, Vec<u8>)> {
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    (0..n)
        .map(|k| (format!("{}.C{k}P1.test", 1_800_000_000 + k), spam.clone()))
        .collect()
}

/// Delivers `sent` (the first `backlog` before, the rest trickling in) and starts the daemon
/// 30 times: each fifth start runs into a crash point (`stages`, in turn) at a crash message
/// delivered just before it, and the start after it must log a recovery; the others are
/// SIGKILLed at seeded random moments. Returns with the daemon stopped, everything delivered.
fn crash_and_kill_loop(
    dirs: &Maildirs,
    extra: &[&str],
    sent: &[(String, Vec<u8>)],
    backlog: usize,
    crashes: &[(String, Vec<u8>)],
    stages: &[&str],
    log: &Path,
) {
    for (name, bytes) in &sent[..backlog] {
        deliver(&dirs.inbox, name, bytes);
    }
    let inbox = dirs.inbox.clone();
    let to_send = sent[backlog..].to_vec();
    let delivery = std::thread::spawn(move || {
        for (name, bytes) in &to_send {
            deliver(&inbox, name, bytes);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let recoveries = || {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .matches("recovered from an interruption")
            .count()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut crashed = None;
    let mut crashes = crashes.iter().zip(stages.iter().cycle());
    for i in 0..30 {
        if i % 5 == 0
            && let Some(((name, bytes), stage)) = crashes.next()
        {
            deliver(&dirs.inbox, name, bytes);
            let mut cmd = daemon_command(trained_model(), dirs, extra);
            cmd.env(CRASH_POINT_VAR, format!("{stage}:{name}"));
            let mut daemon = start_command(cmd, log);
            // It exits at the crash point, unless the message is lost before it gets there.
            let held = dirs.inbox.join("tmp/spamsort-taken").join(name);
            let present = || {
                held.exists()
                    || [&dirs.inbox, &dirs.spam]
                        .iter()
                        .any(|d| d.join("new").join(name).exists())
            };
            let mut status = None;
            wait_until("the crash point", || {
                status = daemon.try_wait().unwrap();
                status.is_some() || !present()
            });
            if status.is_none() {
                daemon.kill().unwrap();
                daemon.wait().unwrap();
                panic!("{name} lost before the crash point");
            }
            let status = status.unwrap();
            assert_eq!(status.signal(), Some(6), "aborted at {name}: {status:?}");
            // Caught in the middle: taken from the inbox's new/ and held, and filed or
            // half-written in the target's tmp/.
            let half = match *stage {
                "placed" => dirs.spam.join("new").join(name),
                _ => dirs.spam.join("tmp").join(format!("spamsort.{name}")),
            };
            assert!(half.exists(), "{} after the crash", half.display());
            assert!(held.exists() && !dirs.inbox.join("new").join(name).exists());
            crashed = Some(*stage);
            continue;
        }
        let before = recoveries();
        let mut daemon = start(trained_model(), dirs, extra, log);
        if let Some(stage) = crashed.take() {
            assert_eq!(recoveries(), before + 1, "the start after a crash recovers");
            let text = std::fs::read_to_string(log).unwrap();
            let line = text
                .lines()
                .rfind(|l| l.contains("recovered from"))
                .unwrap();
            let count = |what: &str| -> usize {
                let before = line.split(what).next().unwrap();
                before
                    .trim_end()
                    .rsplit(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            match stage {
                "placed" => assert!(count(" moves finished") >= 1, "{line}"),
                _ => assert!(count(" rolled back") >= 1, "{line}"),
            }
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(0..60)));
        daemon.kill().unwrap();
        daemon.wait().unwrap();
    }
    delivery.join().unwrap();
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
    stop(&mut daemon, &log_path);
    assert_filed_once(&dirs, &sent, |b| b.to_vec());
    let log = std::fs::read_to_string(t.path().join("log")).unwrap();
    assert!(
        log.lines().filter(|l| l.contains(" P(spam) ")).count() >= 400,
        "one line per message"
    );
}

#[test]
fn a_message_written_straight_into_new_is_classified_once_whole_not_by_its_first_part() {
    // Regression: a message written straight into new/ (a `cp`, an MDA that skips tmp/) was
    // classified as far as it was written and linked on that verdict: the empty file `cp`
    // makes first read as ham, so a spam went to the ham folder, its writer filling it there.
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    let filter = SpamFilter::load(trained_model()).unwrap();
    assert_eq!(filter.classify(&spam).verdict, Verdict::Spam);
    assert_ne!(filter.classify(b"").verdict, Verdict::Spam);
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let log = t.path().join("log");
    let mut daemon = start(trained_model(), &dirs, &[], &log);
    let name = "1.M1P1.slow";
    let mut writer = std::fs::File::create(dirs.inbox.join("new").join(name)).unwrap();
    // Passes come and go while it is open and empty: it stays in the inbox.
    std::thread::sleep(Duration::from_millis(2500));
    let early = [&dirs.ham, &dirs.spam].map(|d| files_in(&d.join("new")));
    writer.write_all(&spam).unwrap();
    drop(writer);
    let filed = dirs.spam.join("new").join(name);
    let start = Instant::now();
    while !filed.exists() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop(&mut daemon, &log);
    assert!(
        early.iter().all(Vec::is_empty),
        "filed half written: {early:?}"
    );
    assert_eq!(std::fs::read(&filed).unwrap(), spam);
    assert!(files_in(&dirs.ham.join("new")).is_empty());
    assert!(files_in(&dirs.inbox.join("new")).is_empty());
}

#[test]
fn a_learn_beside_the_daemon_counts_from_the_next_message_without_a_reload() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let model = crate::util::copy_of_trained_model(&t);
    // A spam the model calls spam, and calls ham once it is relearned as ham.
    let spam = crate::util::sample_class_files("spam")
        .into_iter()
        .find(|f| {
            let bytes = std::fs::read(f).unwrap();
            let mut filter = SpamFilter::load(&model).unwrap();
            let before = filter.classify(&bytes).verdict;
            filter.learn(&bytes, spamsort::Label::Ham).unwrap();
            before == Verdict::Spam && filter.classify(&bytes).verdict == Verdict::Ham
        })
        .expect("a spam one correction turns to ham");
    let bytes = std::fs::read(&spam).unwrap();
    let log = t.path().join("log");
    let mut daemon = start(&model, &dirs, &[], &log);
    let filed_in = |dir: &Path, name: &str| {
        ["new", "cur"]
            .iter()
            .flat_map(|s| files_in(&dir.join(s)))
            .any(|f| f.file_name().unwrap().to_string_lossy().starts_with(name))
    };
    deliver(&dirs.inbox, "first", &bytes);
    wait_until("the first copy filed", || filed_in(&dirs.spam, "first"));
    crate::util::spamsort()
        .args(["learn", "--ham", "--model"])
        .arg(&model)
        .arg(&spam)
        .assert()
        .success();
    deliver(&dirs.inbox, "second", &bytes);
    wait_until("the second copy filed", || {
        filed_in(&dirs.spam, "second") || filed_in(&dirs.ham, "second")
    });
    stop(&mut daemon, &log);
    assert!(
        filed_in(&dirs.ham, "second"),
        "the learn counted for the next message"
    );
}

#[test]
fn sigkill_at_random_moments_and_crashes_mid_move_lose_and_duplicate_nothing() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let mut sent = messages(1000);
    let crashes = crash_messages(6);
    let filter = SpamFilter::load(trained_model()).unwrap();
    let marked = |b: &[u8]| {
        HeaderStyle::default()
            .mark(b, &filter.classify(b), filter.thresholds())
            .unwrap()
    };
    let log = t.path().join("log");
    // A backlog, so kills land inside batches, and a trickle while the kills go on.
    let extra = ["--add-headers"];
    let stages = ["placed", "written"];
    crash_and_kill_loop(&dirs, &extra, &sent, 700, &crashes, &stages, &log);
    let mut daemon = start(trained_model(), &dirs, &extra, &log);
    wait_until("the inbox to empty", || {
        files_in(&dirs.inbox.join("new")).is_empty()
    });
    sigterm_and_wait(&mut daemon);
    sent.extend(crashes);
    assert_filed_once(&dirs, &sent, marked);
}

/// The SIGKILL loop with the inbox as ham folder, its folders spelled as `spelling`.
fn inbox_as_ham_survives_sigkill(spelling: &str) {
    let t = TestDir::new();
    let dirs = Maildirs::inbox_as_ham(&t, spelling);
    let mut sent = messages(400);
    let crashes = crash_messages(6);
    let log = t.path().join("log");
    crash_and_kill_loop(&dirs, &[], &sent, 250, &crashes, &["placed"], &log);
    sent.extend(crashes);
    let spam = spam_count(&sent);
    let mut daemon = start(trained_model(), &dirs, &[], &log);
    // Ham never moves, and a kill may have come after the last spam moved but before its
    // batch's ham was recorded: then the counts are right at once, so wait for the record
    // too (a SIGTERM before the first batch would rightly leave that ham for the next start).
    let recorded = || {
        std::fs::read_to_string(dirs.inbox.join(spamsort::daemon::RECORD_NAME))
            .unwrap_or_default()
            .lines()
            .count()
    };
    wait_until("the spam to be filed and the ham recorded", || {
        files_in(&dirs.spam.join("new")).len() == spam
            && files_in(&dirs.inbox.join("new")).len() == sent.len() - spam
            && recorded() == sent.len() - spam
    });
    stop(&mut daemon, &log);
    assert_filed_once(&dirs, &sent, |b| b.to_vec());
    // Ham is on record before it is reported: never reported twice, however the kills fell.
    let log = std::fs::read_to_string(&log).unwrap();
    let mut kept: HashMap<&str, usize> = HashMap::new();
    for line in log.lines().filter(|l| l.contains(" kept in ")) {
        let name = line
            .split(" kept in ")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap();
        *kept.entry(name).or_default() += 1;
    }
    assert!(kept.values().all(|&n| n == 1), "ham classified twice");
    // However the kills fell (under load a start may be killed after recording its batch's ham
    // but before logging it, so the log alone may hold no kept line), every ham message left
    // in the inbox is on record, so no restart would classify it again.
    let record = std::fs::read_to_string(dirs.inbox.join(spamsort::daemon::RECORD_NAME)).unwrap();
    let recorded: std::collections::HashSet<&str> = record.lines().collect();
    let ham = files_in(&dirs.inbox.join("new"));
    assert_eq!(ham.len(), sent.len() - spam);
    for path in &ham {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(recorded.contains(name), "{name} is not on record");
    }
}

#[test]
fn inbox_as_ham_folder_survives_sigkill_with_every_message_once() {
    inbox_as_ham_survives_sigkill("plain");
}

#[test]
fn inbox_as_ham_folder_spelled_through_a_symlink_survives_sigkill() {
    inbox_as_ham_survives_sigkill("symlink");
}

#[test]
fn inbox_as_ham_folder_spelled_with_a_trailing_slash_survives_sigkill() {
    inbox_as_ham_survives_sigkill("trailing-slash");
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
    // A training spam: relabeled, so unlearned as spam and learned as ham.
    assert_eq!(
        after.summary().messages[0],
        filter.summary().messages[0] + 1
    );
    assert_eq!(
        after.summary().messages[1],
        filter.summary().messages[1] - 1
    );
}

#[test]
fn an_unread_message_moved_out_of_junk_into_dovecots_inbox_is_learned_and_kept() {
    // Dovecot puts an unread message moved to INBOX in its new/, where the daemon sorts new
    // mail: it was sorted back into Junk and not learned.
    let t = TestDir::new();
    let dirs = Maildirs::inbox_as_ham(&t, "plain");
    let model = copy_of_trained_model(&t);
    let before = SpamFilter::load(&model).unwrap();
    let files = sample_files();
    let spam: Vec<Vec<u8>> = files[..3]
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    for s in &spam {
        assert_eq!(before.classify(s).verdict, Verdict::Spam);
    }
    let log = t.path().join("log");
    let mut cmd = daemon_command(&model, &dirs, &["--learn-from-moves"]);
    cmd.env("SPAMSORT_LOG", "debug");
    let mut daemon = start_command(cmd, &log);
    let said = |what: &str| std::fs::read_to_string(&log).unwrap().matches(what).count();
    let junk_new = dirs.spam.join("new");
    let inbox_new = dirs.inbox.join("new");
    let filed = |name: &str| junk_new.join(name).exists();
    // Two copies of one spam (the second, the same bytes delivered again while the first is in
    // Junk, is new mail, not learned) and another spam.
    for (name, bytes) in [("1.a", &spam[0]), ("2.a", &spam[0]), ("3.b", &spam[1])] {
        deliver(&dirs.inbox, name, bytes);
        wait_until("filed in Junk", || filed(name));
    }
    // All moved back to INBOX unread at once, as Dovecot's MOVE does: renamed, or linked and
    // deleted from Junk a moment later.
    std::fs::rename(junk_new.join("1.a"), inbox_new.join("4.moved-a")).unwrap();
    std::fs::rename(junk_new.join("3.b"), inbox_new.join("5.moved-b")).unwrap();
    std::fs::hard_link(junk_new.join("2.a"), inbox_new.join("6.linked-a")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::remove_file(junk_new.join("2.a")).unwrap();
    let kept = ["4.moved-a", "5.moved-b", "6.linked-a"];
    wait_until("all kept in the inbox", || {
        kept.iter().all(|n| said(&format!("{n} kept in")) == 1)
    });
    // A spam deleted from Junk, then fetched again (the same bytes): new mail, back to Junk.
    deliver(&dirs.inbox, "7.c", &spam[2]);
    wait_until("filed in Junk", || filed("7.c"));
    let gone = said("gone from the spam folder");
    std::fs::remove_file(junk_new.join("7.c")).unwrap();
    wait_until("the deletion seen", || {
        said("gone from the spam folder") > gone
    });
    deliver(&dirs.inbox, "8.c-again", &spam[2]);
    wait_until("the copy fetched again filed in Junk", || {
        filed("8.c-again")
    });
    stop(&mut daemon, &log);
    let text = std::fs::read_to_string(&log).unwrap();
    for name in ["4.moved-a", "5.moved-b"] {
        let learned = format!("learned {name} as ham (moved out of the spam folder by the user)");
        assert!(text.contains(&learned), "{text}");
    }
    assert_eq!(files_in(&junk_new), vec![junk_new.join("8.c-again")]);
    for (name, bytes) in [("4.moved-a", &spam[0]), ("5.moved-b", &spam[1])] {
        assert_eq!(&std::fs::read(inbox_new.join(name)).unwrap(), bytes);
    }
    // Two training spam relabeled, each once (the second copy is the same message); the one
    // fetched again not learned.
    let after = SpamFilter::load(&model).unwrap();
    assert_eq!(
        after.summary().messages,
        [
            before.summary().messages[0] + 2,
            before.summary().messages[1] - 2
        ]
    );
    // Not sorted again after a restart: on the record of ham kept in the inbox.
    let mut daemon = start(&model, &dirs, &["--learn-from-moves"], &log);
    stop(&mut daemon, &log);
    assert_eq!(files_in(&junk_new), vec![junk_new.join("8.c-again")]);
}

#[test]
fn a_move_made_while_the_daemon_was_stopped_is_learned_when_it_starts_again() {
    // The tracker knew where messages were only while it ran: a correction made while the
    // daemon was stopped (an upgrade, a reboot) was taken for where the message had always
    // been, and never learned.
    for dovecot in [false, true] {
        let t = TestDir::new();
        let dirs = if dovecot {
            Maildirs::inbox_as_ham(&t, "plain")
        } else {
            Maildirs::new(&t)
        };
        let model = copy_of_trained_model(&t);
        let before = SpamFilter::load(&model).unwrap();
        let files = sample_files();
        let (spam, other) = (
            std::fs::read(&files[0]).unwrap(),
            std::fs::read(&files[1]).unwrap(),
        );
        let log = t.path().join("log");
        let mut daemon = start(&model, &dirs, &["--learn-from-moves"], &log);
        deliver(&dirs.inbox, "1.s", &spam);
        deliver(&dirs.inbox, "2.o", &other);
        let junk_new = dirs.spam.join("new");
        wait_until("both filed in the spam folder", || {
            junk_new.join("1.s").exists() && junk_new.join("2.o").exists()
        });
        stop(&mut daemon, &log);
        // Moved out of the spam folder while it is stopped: renamed into the ham folder's
        // cur/ (read), or, with Dovecot, into INBOX's new/ (unread).
        let moved = if dovecot {
            dirs.inbox.join("new/3.moved")
        } else {
            dirs.ham.join("cur/3.moved:2,S")
        };
        std::fs::rename(junk_new.join("1.s"), &moved).unwrap();
        let mut daemon = start(&model, &dirs, &["--learn-from-moves"], &log);
        wait_until("the move learned", || {
            std::fs::read_to_string(&log).unwrap().contains("3.moved")
                && std::fs::read_to_string(&log)
                    .unwrap()
                    .contains("as ham (moved")
        });
        stop(&mut daemon, &log);
        assert_eq!(std::fs::read(&moved).unwrap(), spam, "dovecot: {dovecot}");
        assert!(junk_new.join("2.o").exists());
        // One training spam relabeled; the message left in place not learned again.
        let after = SpamFilter::load(&model).unwrap();
        assert_eq!(
            after.summary().messages,
            [
                before.summary().messages[0] + 1,
                before.summary().messages[1] - 1
            ],
            "dovecot: {dovecot}"
        );
    }
}

#[test]
fn moving_a_message_over_64_mib_into_spam_learns_its_head() {
    // Regression: the daemon files a message over the 64 MiB it reads as ham, unclassified,
    // but then refused to learn it when the user moved it into the spam folder.
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let model = copy_of_trained_model(&t);
    let before = SpamFilter::load(&model).unwrap();
    let big = crate::bounded_cost::sparse_message(
        &t,
        "big.eml",
        "Subject: huge offer\n\ncheap pills zqxhugeword\n",
        spamsort::corpus::MAX_MESSAGE_BYTES + 1,
    );
    std::fs::copy(&big, dirs.inbox.join("tmp/1.big.test")).unwrap();
    std::fs::rename(
        dirs.inbox.join("tmp/1.big.test"),
        dirs.inbox.join("new/1.big.test"),
    )
    .unwrap();
    let log = t.path().join("log");
    let mut daemon = start(&model, &dirs, &["--learn-from-moves"], &log);
    let filed = dirs.ham.join("new/1.big.test");
    wait_until("the message to be filed", || filed.exists());
    std::fs::rename(&filed, dirs.spam.join("cur/1.big.test:2,S")).unwrap();
    let learned = || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("as spam (moved by the user)")
    };
    wait_until("the correction to be learned", learned);
    sigterm_and_wait(&mut daemon);
    let after = SpamFilter::load(&model).unwrap();
    assert_eq!(
        after.summary().messages[1],
        before.summary().messages[1] + 1
    );
    // The same message as `spamsort learn` learns it: learned once.
    let out = spamsort()
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg(&big)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("1 already learned as spam"), "{stderr}");
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
    stop(&mut daemon, &log);
    assert_eq!(std::fs::metadata(&filed).unwrap().len(), 65 * 1024 * 1024);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("unclassified (unreadable: larger than"),
        "{text}"
    );
}

#[test]
fn a_second_daemon_on_the_same_inbox_is_refused_while_the_first_runs() {
    // Two would both file most messages (a link each), leaving them twice.
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let log = t.path().join("log");
    let mut first = start(trained_model(), &dirs, &[], &log);
    let other = Maildirs {
        inbox: t.path().join("inbox/"),
        spam: t.path().join("spam2"),
        ham: t.path().join("ham2"),
    };
    assert_refused(
        t.path(),
        &other,
        &[],
        "another spamsort daemon sorts this inbox",
    );
    stop(&mut first, &log);
    // Its lock went with it.
    let mut second = start(trained_model(), &other, &[], &log);
    stop(&mut second, &log);
}

#[test]
fn daemon_keeps_its_memory_in_small_pages() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let log = t.path().join("log");
    let mut daemon = start(trained_model(), &dirs, &[], &log);
    let huge = transparent_huge_pages(daemon.id());
    stop(&mut daemon, &log);
    assert!(!huge);
}

/// The ham and spam of the sample's first messages of each class, named as maildir files.
fn some_ham_and_spam(ham: usize, spam: usize) -> Vec<(String, Vec<u8>)> {
    let files = sample_files();
    let n_spam = files
        .iter()
        .filter(|f| f.to_string_lossy().contains("/spam/"))
        .count();
    files[..spam]
        .iter()
        .chain(&files[n_spam..n_spam + ham])
        .enumerate()
        .map(|(i, f)| {
            let name = format!("{}.M{i}P2.test", 1_600_000_000 + i);
            (name, std::fs::read(f).unwrap())
        })
        .collect()
}

#[test]
fn inbox_that_is_the_ham_folder_deletes_nothing_and_sorts_ham_once() {
    let t = TestDir::new();
    let dirs = Maildirs::inbox_as_ham(&t, "plain");
    let sent = some_ham_and_spam(3, 2);
    for (name, bytes) in &sent {
        deliver(&dirs.inbox, name, bytes);
    }
    let log = t.path().join("log");
    let kept = |log: &Path| {
        std::fs::read_to_string(log)
            .unwrap()
            .matches(" kept in ")
            .count()
    };
    for _ in 0..2 {
        let mut daemon = start(trained_model(), &dirs, &[], &log);
        wait_until("the spam to be filed and the ham kept", || {
            files_in(&dirs.spam.join("new")).len() == 2 && kept(&log) == 3
        });
        stop(&mut daemon, &log);
        assert_filed_once(&dirs, &sent, |b| b.to_vec());
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("recovered"), "{text}");
    assert_eq!(kept(&log), 3, "ham classified again after a restart");
}

#[test]
fn spam_folder_inside_the_ham_maildir_is_a_folder_of_its_own() {
    let t = TestDir::new();
    let dirs = Maildirs {
        inbox: t.maildir("incoming"),
        ham: t.maildir("Maildir"),
        spam: t.path().join("Maildir/.Junk"),
    };
    let sent = some_ham_and_spam(3, 2);
    for (name, bytes) in &sent {
        deliver(&dirs.inbox, name, bytes);
    }
    let mut daemon = start(trained_model(), &dirs, &[], &t.path().join("log"));
    wait_until("the inbox to empty", || {
        files_in(&dirs.inbox.join("new")).is_empty()
    });
    sigterm_and_wait(&mut daemon);
    assert_filed_once(&dirs, &sent, |b| b.to_vec());
}

/// Every path under `root` with its bytes (files) or target (links), to show nothing changed.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let meta = p.symlink_metadata().unwrap();
            let content = if meta.is_symlink() {
                std::fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_dir() {
                stack.push(p.clone());
                Vec::new()
            } else {
                std::fs::read(&p).unwrap()
            };
            out.push((p, content));
        }
    }
    out.sort();
    out
}

/// Runs the daemon on `dirs` with `extra` and asserts it refuses, saying `why`, and touched
/// nothing under `root`.
fn assert_refused(root: &Path, dirs: &Maildirs, extra: &[&str], why: &str) {
    let before = snapshot(root);
    let out = daemon_command(trained_model(), dirs, extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert_eq!(snapshot(root), before, "touched something: {stderr}");
}

#[test]
fn spam_or_unsure_folder_that_is_the_inbox_is_refused_before_anything_is_touched() {
    let t = TestDir::new();
    let inbox = t.maildir("M");
    std::os::unix::fs::symlink(&inbox, t.path().join("L")).unwrap();
    let sent = some_ham_and_spam(2, 2);
    for (name, bytes) in &sent {
        deliver(&inbox, name, bytes);
    }
    for same in ["M", "M/", "L", "L/", "M/.Junk/.."] {
        let same = t.path().join(same);
        let dirs = Maildirs {
            inbox: inbox.clone(),
            spam: same.clone(),
            ham: t.path().join("ham"),
        };
        assert_refused(t.path(), &dirs, &[], "the spam folder");
        let dirs = Maildirs {
            inbox: inbox.clone(),
            spam: t.path().join("spam"),
            ham: inbox.clone(),
        };
        let unsure = same.to_str().unwrap();
        assert_refused(t.path(), &dirs, &["--unsure", unsure], "the unsure folder");
    }
}

#[test]
fn unsure_or_ham_folder_that_is_the_spam_folder_is_refused_when_learning_from_moves() {
    let t = TestDir::new();
    let inbox = t.maildir("in");
    let spam = t.maildir("spam");
    std::os::unix::fs::symlink(&spam, t.path().join("junk")).unwrap();
    for same in ["spam", "spam/", "junk"] {
        let same = t.path().join(same);
        let dirs = Maildirs {
            inbox: inbox.clone(),
            spam: spam.clone(),
            ham: same.clone(),
        };
        assert_refused(
            t.path(),
            &dirs,
            &["--learn-from-moves"],
            "is the spam folder",
        );
        let dirs = Maildirs {
            inbox: inbox.clone(),
            spam: spam.clone(),
            ham: t.path().join("ham"),
        };
        let unsure = same.to_str().unwrap();
        assert_refused(
            t.path(),
            &dirs,
            &["--unsure", unsure, "--learn-from-moves"],
            "is the spam folder",
        );
    }
}

#[test]
fn missing_inbox_is_refused_and_not_created() {
    let t = TestDir::new();
    let dirs = Maildirs {
        inbox: t.path().join("nonexistent/x"),
        spam: t.path().join("spam"),
        ham: t.path().join("ham"),
    };
    assert_refused(t.path(), &dirs, &[], "does not exist");
    assert!(!t.path().join("nonexistent").exists());
}

/// auditF repro-2: a line tracing-subscriber cannot write to stderr it reports with
/// `eprintln!` on that same stderr, which panics: a daemon whose stderr cannot be written (a
/// full disk under its log, a closed pipe to a logger; here /dev/full) died at its first log
/// line, exit 101, sorting nothing. The lines are lost now, not the daemon.
#[test]
fn a_daemon_whose_log_cannot_be_written_sorts_on() {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let sent = messages(4);
    for (name, bytes) in &sent {
        deliver(&dirs.inbox, name, bytes);
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut daemon = daemon_command(trained_model(), &dirs, &[])
        .stderr(full)
        .spawn()
        .unwrap();
    let filed = || files_in(&dirs.spam.join("new")).len() + files_in(&dirs.ham.join("new")).len();
    wait_until("the inbox to be sorted, or the daemon to die", || {
        filed() == sent.len() || daemon.try_wait().unwrap().is_some()
    });
    assert_eq!(daemon.try_wait().unwrap(), None, "the daemon died");
    sigterm_and_wait(&mut daemon);
    assert_eq!(filed(), sent.len());
    assert!(files_in(&dirs.inbox.join("new")).is_empty());
}
