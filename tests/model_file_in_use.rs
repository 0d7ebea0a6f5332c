//! The model file while others use it: rewritten in place (`cp`) under running filters and a
//! reloading server, a FIFO where the model should be, `train` and the update lock, and the
//! temporary files a killed save leaves behind, and a journal record damaged after it was
//! written.

use crate::util::{
    TestDir, copy_in_place, copy_of_trained_model, is_message_marked_or_unchanged, message, mkfifo,
    sample_files, serve, sigterm_and_wait, spamd_exchange, spamd_request, spamsort,
};
use spamsort::models::ModelKind;
use spamsort::{Label, SpamFilter, model_file};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Generous bound for one command, so a hang fails the test instead of stalling CI.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Two different valid model files: the trained sample model, and one that learned a message
/// and answers with another model (so another section is read).
fn two_models(t: &TestDir) -> (Vec<u8>, Vec<u8>) {
    let a = copy_of_trained_model(t);
    let b = t.path().join("b.spamsort");
    let mut filter = SpamFilter::load(&a).unwrap();
    filter
        .learn(&std::fs::read(&sample_files()[0]).unwrap(), Label::Ham)
        .unwrap();
    filter.set_active(ModelKind::BernoulliNb).unwrap();
    filter
        .save(&model_file::lock_for_update(&b).unwrap())
        .unwrap();
    (std::fs::read(a).unwrap(), std::fs::read(b).unwrap())
}

/// Rewrites `model` in place with `a` and `b` in turn until stopped; counts the copies.
struct Rewriter {
    stop: Arc<AtomicBool>,
    copies: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Rewriter {
    fn start(model: &Path, a: Vec<u8>, b: Vec<u8>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let copies = Arc::new(AtomicUsize::new(0));
        let (model, s, c) = (model.to_path_buf(), stop.clone(), copies.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                for bytes in [&a, &b] {
                    copy_in_place(bytes, &model);
                    c.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Rewriter {
            stop,
            copies,
            thread: Some(thread),
        }
    }

    /// Stops and returns how many copies were made.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
        self.copies.load(Ordering::SeqCst)
    }
}

/// `spamsort filter --model MODEL` on `message`, within the timeout.
fn filter(model: &Path, message: &[u8]) -> std::process::Output {
    spamsort()
        .args(["filter", "--model"])
        .arg(model)
        .write_stdin(message.to_vec())
        .timeout(TIMEOUT)
        .output()
        .expect("filter finishes")
}

/// A sample message without X-Spam-* fields or an mbox `From ` line.
fn plain_message() -> Vec<u8> {
    sample_files()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .find(|m| !m.starts_with(b"From ") && !m.windows(7).any(|w| w == b"X-Spam-"))
        .expect("a plain sample message")
}

#[test]
fn in_place_copies_under_running_filters_kill_none_and_lose_no_message() {
    let t = TestDir::new();
    let (a, b) = two_models(&t);
    let model = t.path().join("model.spamsort");
    std::fs::write(&model, &a).unwrap();
    let message = plain_message();
    let rewriter = Rewriter::start(&model, a, b);
    let (filters, marked) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..20 {
                    let out = filter(&model, &message);
                    // `None` is death by a signal (SIGBUS when a mapped file shrinks).
                    assert_eq!(out.status.code(), Some(0), "{out:?}");
                    assert!(
                        is_message_marked_or_unchanged(&out.stdout, &message),
                        "message lost or mangled; stderr: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    filters.fetch_add(1, Ordering::SeqCst);
                    if out.stdout.len() > message.len() {
                        marked.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    let copies = rewriter.stop();
    assert_eq!(filters.load(Ordering::SeqCst), 80);
    assert!(copies > 0, "the model was rewritten while the filters ran");
    eprintln!(
        "{} of 80 messages marked, the rest passed through, during {copies} copies",
        marked.load(Ordering::SeqCst)
    );
}

#[test]
fn in_place_copies_during_serve_reloads_kill_nothing() {
    let t = TestDir::new();
    let (a, b) = two_models(&t);
    let model = t.path().join("model.spamsort");
    std::fs::write(&model, &a).unwrap();
    let mut served = serve(&model, &[]);
    let message = plain_message();
    let process = || {
        let stream = std::net::TcpStream::connect(format!("127.0.0.1:{}", served.port)).unwrap();
        let answer = spamd_exchange(stream, &spamd_request("PROCESS", "", &message));
        assert!(
            answer.starts_with(b"SPAMD/1.5 0 EX_OK\r\n"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        let head = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert!(is_message_marked_or_unchanged(&answer[head..], &message));
    };
    // An answer means the server runs, so its SIGHUP handler is in place.
    process();
    let rewriter = Rewriter::start(&model, a, b);
    let pid = served.child.id().to_string();
    for _ in 0..40 {
        for _ in 0..5 {
            let hup = Command::new("kill").args(["-HUP", &pid]).status().unwrap();
            assert!(hup.success(), "the server is alive to be signalled");
            std::thread::sleep(Duration::from_millis(2));
        }
        // A SIGBUS in a reload kills the whole server.
        assert!(
            served.child.try_wait().unwrap().is_none(),
            "the server died"
        );
        process();
    }
    let copies = rewriter.stop();
    assert!(
        copies > 0,
        "the model was rewritten while the server reloaded"
    );
    sigterm_and_wait(&mut served.child);
    let log = served.log.lock().unwrap().clone();
    assert!(log.contains("reload"), "{log}");
}

#[test]
fn fifo_model_path_passes_the_message_through_promptly() {
    let t = TestDir::new();
    let fifo = t.path().join("model.spamsort");
    mkfifo(&fifo);
    let message = plain_message();
    let out = filter(&fifo, &message);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, message, "passed through unchanged");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("passed through unchanged") && stderr.contains("FIFO"),
        "{stderr}"
    );
    assert!(
        stderr.contains("model.spamsort"),
        "the path is named: {stderr}"
    );
}

#[test]
fn fifo_update_lock_is_refused_without_blocking() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    mkfifo(&t.path().join("model.lock"));
    let out = spamsort()
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg(&sample_files()[0])
        .timeout(TIMEOUT)
        .output()
        .expect("learn finishes");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("model.lock") && stderr.contains("FIFO"),
        "{stderr}"
    );
}

#[test]
fn train_waits_for_the_update_lock_before_saving() {
    let t = TestDir::new();
    let model = t.path().join("model.spamsort");
    let lock = model_file::lock_for_update(&model).unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("spamsort"));
    cmd.arg("train")
        .arg("--spam")
        .arg(crate::util::sample("spam"))
        .arg("--ham")
        .arg(crate::util::sample("ham"))
        .arg("--model")
        .arg(&model)
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting for another writer") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "train ended without waiting for the lock: {:?}",
            child.wait()
        );
    }
    // Train is blocked on the lock now, its model trained but not saved.
    assert!(!model.exists(), "train saved while the lock was held");
    drop(lock);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    assert!(rest.contains("trained on"), "{rest}");
    SpamFilter::load(&model).expect("the trained model was saved");
}

/// Files in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn stale_temp_files_of_a_killed_save_are_removed_by_the_next_save() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    // What a save killed between writing and renaming leaves: its temporary file.
    let stale: PathBuf = t.write(".model.spamsort.spamsort-tmp.Ab12Cd", b"half a model");
    // Not this model's temporary files: another model's, and names that only look alike.
    let keep = [
        ".other.spamsort.spamsort-tmp.Ab12Cd",
        ".model.spamsort.spamsort-tmp.Ab12Cde",
        ".model.spamsort.spamsort-tmp.Ab-2Cd",
        "model.spamsort.spamsort-tmp.Ab12Cd",
        ".spamsort-model-Ab12Cd",
    ];
    for name in keep {
        t.write(name, b"not ours to remove");
    }
    learn_one_spam(&model);
    assert!(!stale.exists(), "the stale temporary file is removed");
    let mut expected: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
    expected.extend(["model.lock".into(), "model.spamsort".into()]);
    expected.sort();
    assert_eq!(names_in(t.path()), expected);
}

/// Runs `spamsort learn --spam` on one sample message against `model`.
fn learn_one_spam(model: &Path) {
    // A training ham, so learning it as spam changes the model (a relabel) and saves.
    spamsort()
        .args(["learn", "--spam", "--model"])
        .arg(model)
        .arg(sample_files().last().unwrap())
        .timeout(TIMEOUT)
        .assert()
        .success();
}

#[test]
fn a_damaged_journal_record_stops_learn_and_filter_and_the_file_keeps_every_record() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let mut ends = vec![std::fs::metadata(&model).unwrap().len()];
    for (k, word) in ["alpha", "bravo", "charlie", "delta"]
        .into_iter()
        .enumerate()
    {
        // Distinct words: numbers alone are no tokens, so they would make one message.
        let new = t.write(
            &format!("new{k}.eml"),
            &message(
                &format!("Offer {word}"),
                &format!("cheap pills {word} now\n"),
            ),
        );
        // Learned as ham: the model calls them spam, so each is a correction (a message it
        // already gets right is not learned) and appends a record.
        if k < 3 {
            spamsort()
                .args(["learn", "--ham", "--model"])
                .arg(&model)
                .arg(&new)
                .timeout(TIMEOUT)
                .assert()
                .success();
            ends.push(std::fs::metadata(&model).unwrap().len());
        }
    }
    assert!(
        ends.windows(2).all(|w| w[0] < w[1]),
        "each learn appended: {ends:?}"
    );
    let clean = std::fs::read(&model).unwrap();
    // One bit flipped in the payload of the first of the three records; or the second's length
    // field made to claim a mebibyte more, past the file's end (where a torn append ends too).
    let damaged = |at: u64, bit: u8| {
        let mut bytes = clean.clone();
        bytes[at as usize] ^= bit;
        bytes
    };
    let info = || {
        let out = spamsort()
            .args(["info", "--model"])
            .arg(&model)
            .timeout(TIMEOUT)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, healthy) = info();
    assert_eq!(code, Some(0));
    assert!(!healthy.contains("journal damage"), "{healthy}");
    for (bytes, what) in [
        (damaged(ends[1] + 2, 0x10), "journal record 2"),
        (damaged(ends[0] + 20, 0x04), "journal record 1"),
    ] {
        std::fs::write(&model, &bytes).unwrap();
        // `info` names damage that readers cannot tell from a torn tail (the length field);
        // the checksum's stops it.
        let (code, stdout) = info();
        if what == "journal record 2" {
            assert_eq!(code, Some(0));
            assert!(stdout.contains("1 learn runs"), "{stdout}");
            assert!(
                stdout.contains("journal damage:  journal record 2"),
                "{stdout}"
            );
        } else {
            assert_eq!(code, Some(3));
        }
        // A learn refuses and changes nothing, whether it would append a record (a new ham)
        // or save the file whole (a relabel, which unlearns, in the learner's own loop; a
        // prune, through the load-change-save path spamd's TELL and the daemon take too): the
        // records after the damage stay.
        let new = |name: &str| t.path().join(name).display().to_string();
        for args in [
            vec!["learn".to_string(), "--ham".into(), new("new3.eml")],
            vec!["learn".into(), "--spam".into(), new("new0.eml")],
            vec!["prune".into()],
        ] {
            let out = spamsort()
                .args(&args)
                .arg("--model")
                .arg(&model)
                .timeout(TIMEOUT)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{what} {args:?}: {stderr}");
            assert!(stderr.contains(what), "{stderr}");
            assert_eq!(std::fs::read(&model).unwrap(), bytes, "{what} {args:?}");
        }
    }
    // With the checksum damage (the last case above) the filter passes mail through unchanged
    // and says why. (A damaged length field reads as a torn tail to every reader, which then
    // answers from the records before it.)
    let mail = message("Hello", "see you at lunch\n");
    let out = filter(&model, &mail);
    assert_eq!(out.stdout, mail);
    assert!(String::from_utf8_lossy(&out.stderr).contains("damaged"));
}

/// Regression: a flipped bit in the journal's last record (whole, its checksum failing) read
/// as a torn append: every reader dropped it without a word, and the next learn cut it off
/// and appended in its place. Only a record cut short (fewer bytes than its header declares)
/// is a torn append, dropped in silence and cut off by the next learn; a whole one that fails
/// its checksum is damage: `info` names it, `dump` warns of it, and a learn refuses, changing
/// nothing.
#[test]
fn a_flipped_bit_in_the_last_journal_record_is_damage_and_a_cut_one_a_torn_append() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let start = std::fs::metadata(&model).unwrap().len() as usize;
    let mail = |word: &str| {
        t.write(
            &format!("{word}.eml"),
            &message(
                &format!("Offer {word}"),
                &format!("cheap pills {word} now\n"),
            ),
        )
    };
    let (first, second) = (mail("alpha"), mail("bravo"));
    let run = |args: &[&str], extra: &Path| {
        let out = spamsort()
            .args(args)
            .arg("--model")
            .arg(&model)
            .arg(extra)
            .timeout(TIMEOUT)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let info = || run(&["info"], Path::new("--"));
    let dump = || run(&["dump"], &t.path().join("backup.dump"));
    // The model calls it spam: learned as ham, a correction, appended as one record.
    assert_eq!(run(&["learn", "--ham"], &first).0, Some(0));
    let clean = std::fs::read(&model).unwrap();
    assert!(clean.len() > start + 24, "a record was appended");

    // Cut inside the last record: a torn append.
    std::fs::write(&model, &clean[..clean.len() - 5]).unwrap();
    let (code, stdout, _) = info();
    assert_eq!(code, Some(0));
    assert!(stdout.contains("0 learn runs"), "{stdout}");
    assert!(!stdout.contains("journal damage"), "{stdout}");
    assert_eq!(dump().2, "", "no warning");
    let (code, _, stderr) = run(&["learn", "--ham"], &second);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        std::fs::read(&model).unwrap()[..start],
        clean[..start],
        "the torn record was cut off and the learn appended"
    );

    // A bit flipped inside it: damage.
    let mut flipped = clean.clone();
    flipped[(start + clean.len()) / 2] ^= 0x10;
    std::fs::write(&model, &flipped).unwrap();
    let (code, stdout, _) = info();
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("journal damage:  journal record 1") && stdout.contains("checksum"),
        "{stdout}"
    );
    let (code, _, stderr) = dump();
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("warning") && stderr.contains("fails its checksum"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["learn", "--ham"], &second);
    assert_eq!(code, Some(3), "{stderr}");
    for needle in ["fails its checksum", "spamsort dump"] {
        assert!(stderr.contains(needle), "{needle} in {stderr}");
    }
    assert_eq!(std::fs::read(&model).unwrap(), flipped, "nothing changed");
}
