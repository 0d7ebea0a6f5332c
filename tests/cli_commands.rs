//! classify, learn, explain, info, completions, config: behaviour and exit codes.

use crate::util::{TestDir, copy_of_trained_model, sample, sample_files, spamsort, trained_model};
use spamsort::SpamFilter;

#[test]
fn classify_one_message_exit_codes() {
    let spam = &sample_files()[0];
    let ham = sample_files().last().unwrap().clone();
    spamsort()
        .arg("classify")
        .arg("--model")
        .arg(trained_model())
        .arg(spam)
        .assert()
        .code(0);
    spamsort()
        .arg("classify")
        .arg("--model")
        .arg(trained_model())
        .arg(&ham)
        .assert()
        .code(1);
    spamsort()
        .args([
            "classify",
            "--spam-threshold",
            "0.9999999",
            "--ham-threshold",
            "0",
            "--model",
        ])
        .arg(trained_model())
        .arg(&ham)
        .assert()
        .code(2)
        .stdout(predicates::str::contains("unsure"));
    let t = TestDir::new();
    spamsort()
        .arg("classify")
        .arg("--model")
        .arg(t.path().join("none.spamsort"))
        .arg(spam)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("none.spamsort"));
    spamsort()
        .args(["classify", "--spam-threshold", "2", "--model"])
        .arg(trained_model())
        .arg(spam)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("thresholds"));
}

#[test]
fn classify_mailbox_tsv_and_json() {
    let out = spamsort()
        .args(["classify", "--format", "tsv", "--model"])
        .arg(trained_model())
        .arg(sample("spam"))
        .arg(sample("ham"))
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 204);
    let mut right = 0;
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 5, "{row:?}");
        assert!(["spam", "ham", "unsure"].contains(&row[1]));
        let p: f64 = row[2].parse().unwrap();
        let score: f64 = row[3].parse().unwrap();
        let decision: f64 = row[4].parse().unwrap();
        assert!((0.0..=1.0).contains(&p) && (-20.0..=30.0).contains(&score));
        assert!(decision.is_finite());
        let is_spam = i < 104;
        right += usize::from((row[1] == "spam") == is_spam);
    }
    assert!(right >= 200, "{right}/204 right on the training data");
    let out = spamsort()
        .args([
            "classify",
            "--format",
            "json",
            "--classifier",
            "bernoulli-nb",
            "--model",
        ])
        .arg(trained_model())
        .arg(&sample_files()[0])
        .assert()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["model"], "bernoulli-nb");
    assert!(v["probability"].as_f64().unwrap() >= 0.0 && v["tokens"].as_u64().unwrap() > 10);
    spamsort()
        .args(["classify", "--classifier", "naive", "--model"])
        .arg(trained_model())
        .assert()
        .code(3)
        .stderr(predicates::str::contains("invalid value 'naive'"));
}

#[test]
fn learn_if_wrong_skips_messages_already_right() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    spamsort()
        .args(["learn", "--spam", "--if-wrong", "--model"])
        .arg(&model)
        .arg(&sample_files()[0])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "learned 0 message(s) as spam, 0 already learned as spam, 1 already right",
        ));
    // A usage error is exit code 3, never 2 (which means unsure).
    spamsort()
        .args(["learn", "--model"])
        .arg(&model)
        .assert()
        .code(3);
}

#[test]
fn an_empty_message_is_not_learned() {
    // Audit: `learn --spam < /dev/null`, or standard input named twice (`-` read empty the
    // second time), learned an empty message and moved the class counts.
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let counts = || SpamFilter::load(&model).unwrap().summary().messages;
    let spam = spamsort::Label::Spam.index();
    let before = counts();
    let learn = |args: &[&str], stdin: &[u8]| {
        spamsort()
            .args(["learn", "--spam", "--model"])
            .arg(&model)
            .args(args)
            .write_stdin(stdin)
            .assert()
            .code(3)
            .stderr(predicates::str::contains("-: not learned: it is empty"));
    };
    learn(&["-"], b"");
    assert_eq!(counts(), before);
    // Named twice: the message is learned once, the second read finds nothing.
    learn(
        &["-", "-"],
        b"Subject: not in the sample\n\nfresh words, never trained on\n",
    );
    let mut expected = before;
    expected[spam] += 1;
    assert_eq!(counts(), expected);
    // A blank file among real messages is said and refused.
    let blank = t.write("blank.eml", b" \r\n\n\t\n");
    spamsort()
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg(&blank)
        .assert()
        .code(3)
        .stderr(predicates::str::contains(
            "blank.eml: not learned: it is empty",
        ));
    assert_eq!(counts(), expected);
}

#[test]
fn concurrent_learns_keep_every_update() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = SpamFilter::load(&model).unwrap().summary().messages;
    // Messages not in the training set: each one is learned.
    let children: Vec<_> = (0..4)
        .map(|i| {
            let fruit = ["apple", "banana", "cherry", "damson"][i];
            let message = t.write(
                &format!("new-{i}.eml"),
                format!("Subject: {fruit}\n\nminutes of the {fruit} meeting\n").as_bytes(),
            );
            let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("spamsort"));
            cmd.args(["learn", "--ham", "--model"])
                .arg(&model)
                .arg(&message);
            cmd.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let after = SpamFilter::load(&model).unwrap().summary().messages;
    assert_eq!(after[0], before[0] + 4, "no update lost");
    // Serialized on the update lock, each appended its own whole record to the journal.
    let (records, _) = spamsort::filter::journal::pending(&model).unwrap();
    assert_eq!(records, 4);
}

/// Makes `dir` take no new file (as a folder owned by another user does) until the guard is
/// dropped: mode 0555, and as root (whom modes do not stop) the immutable attribute. `None`
/// where neither can be had here (a file system without the attribute).
fn folder_taking_no_new_file(dir: &std::path::Path) -> Option<impl Drop> {
    use std::os::unix::fs::PermissionsExt;
    struct Restore(std::path::PathBuf, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            if self.1 {
                let _ = std::process::Command::new("chattr")
                    .arg("-i")
                    .arg(&self.0)
                    .status();
            }
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let root = rustix::process::geteuid().is_root();
    let immutable = root
        && std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
    let guard = Restore(dir.to_path_buf(), immutable);
    let probe = dir.join("probe");
    if std::fs::write(&probe, b"").is_ok() {
        let _ = std::fs::remove_file(&probe);
        return None;
    }
    Some(guard)
}

#[test]
fn learning_goes_on_by_appending_where_the_model_folder_takes_no_new_file() {
    // Audit: a model file others may write in a folder they may not (shared through a group)
    // took 16 learns, appended, and refused every learn after them: compacting the journal
    // saves the file whole, which needs a new file in the folder.
    let t = TestDir::new();
    let dir = t.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let model = dir.join("model.spamsort");
    std::fs::copy(trained_model(), &model).unwrap();
    let learn = |n: usize| {
        let message = t.write(
            &format!("m{n}.eml"),
            &crate::util::message(&format!("note {n}"), &format!("words of note number {n}")),
        );
        spamsort()
            .args(["learn", "--ham", "--model"])
            .arg(&model)
            .arg(&message)
            .assert()
    };
    let records = || spamsort::filter::journal::pending(&model).unwrap().0;
    let hams =
        || SpamFilter::load(&model).unwrap().summary().messages[spamsort::Label::Ham.index()];
    // Learned until the next learn is due to compact the journal.
    let full = spamsort::filter::journal::COMPACT_RECORDS;
    let mut n = 0;
    while records() < full {
        assert!(n < 4 * full, "the journal never filled");
        learn(n).success();
        n += 1;
    }
    let before = hams();
    let Some(guard) = folder_taking_no_new_file(&dir) else {
        eprintln!("SKIPPED: no way to make a folder refuse new files here");
        return;
    };
    let out = learn(n).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("spamsort: warning:") && stderr.contains("cannot be compacted"),
        "{stderr}"
    );
    assert_eq!((records(), hams()), (full + 1, before + 1));
    drop(guard);
    // The folder writable again, the next learn compacts.
    learn(n + 1).success();
    assert_eq!((records(), hams()), (0, before + 2));
}

#[test]
fn many_mailboxes_are_opened_one_at_a_time() {
    // Audit: every mailbox named was opened (an mbox locked) before the first was read, so
    // `classify ~/Mail/*.mbox` with more mailboxes than file descriptors failed ("Too many open
    // files") with nothing classified, and `learn` learned nothing.
    let t = TestDir::new();
    let boxes: Vec<std::path::PathBuf> = (0..200)
        .map(|i| {
            let text = format!(
                "From a@example.org Mon Jan  1 00:00:00 2024\nSubject: box b{i}b\n\nnote n{i}n\n"
            );
            t.write(&format!("box{i:03}.mbox"), text.as_bytes())
        })
        .collect();
    let model = copy_of_trained_model(&t);
    // At most 64 descriptors open at once: a fraction of the mailboxes.
    let limited = |args: &[&str]| {
        let mut cmd = std::process::Command::new("prlimit");
        cmd.arg("--nofile=64")
            .arg("--")
            .arg(crate::util::spamsort_bin());
        cmd.args(args).arg("--model").arg(&model).args(&boxes);
        cmd.output().unwrap()
    };
    let out = limited(&["classify", "--format", "tsv"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(lines.lines().count(), boxes.len());
    assert!(
        lines
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("{}#1\t", boxes[199].display()))
    );
    let out = limited(&["learn", "--ham"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("learned 200 message(s) as ham"), "{stderr}");
}

#[test]
fn explain_lists_the_strongest_tokens_each_way_and_sums_the_rest() {
    let out = spamsort()
        .arg("explain")
        .arg("--model")
        .arg(trained_model())
        .arg(&sample_files()[0])
        .args(["-n", "5", "--classifier", "logistic-regression"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("spam") && lines[0].contains("logistic-regression"),
        "{text}"
    );
    assert!(lines[1].contains("(bias)"));
    let weight = |l: &str| -> f64 { l.split_whitespace().next().unwrap().parse().unwrap() };
    let to_ham = lines
        .iter()
        .position(|l| l.trim() == "toward ham:")
        .expect("a ham side");
    assert_eq!(lines[2].trim(), "toward spam:", "{text}");
    let (spam, ham) = (&lines[3..to_ham], &lines[to_ham + 1..]);
    for (side, sign) in [(spam, 1.0), (ham, -1.0)] {
        // Five tokens strongest first, then the rest of the side summed on one line.
        assert_eq!(side.len(), 6, "{text}");
        assert!(side[5].contains("(the other "), "{text}");
        let weights: Vec<f64> = side.iter().map(|l| weight(l)).collect();
        assert!(weights.iter().all(|w| w * sign > 0.0), "{text}");
        assert!(
            weights[..5].windows(2).all(|w| w[0].abs() >= w[1].abs()),
            "{weights:?}"
        );
    }
    // That they add up to the decision value is pinned beside Explanation::sides.
}

#[test]
fn info_config_file_and_completions() {
    let out = spamsort()
        .arg("info")
        .arg("--model")
        .arg(trained_model())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for needle in [
        "format version",
        "104 spam, 100 ham",
        "active model:    fusion",
        "bernoulli-nb, multinomial-nb",
        "spam >= 0.9",
    ] {
        assert!(text.contains(needle), "{needle} in {text}");
    }
    let t = TestDir::new();
    let config = t.write(
        "config.toml",
        format!(
            "model = {:?}\nspam_threshold = 0.9999999\nham_threshold = 0.0\n",
            trained_model()
        )
        .as_bytes(),
    );
    spamsort()
        .arg("classify")
        .env("SPAMSORT_CONFIG", &config)
        .arg(sample_files().last().unwrap())
        .assert()
        .code(2);
    // `~/` in the config's model is the home directory (it was a folder named `~`).
    std::fs::copy(trained_model(), t.path().join("home.spamsort")).unwrap();
    let tilde = t.write(
        "tilde.toml",
        b"model = \"~/home.spamsort\"\nspam_threshold = 0.9999999\nham_threshold = 0.0\n",
    );
    spamsort()
        .arg("classify")
        .env("SPAMSORT_CONFIG", &tilde)
        .env("HOME", t.path())
        .arg(sample_files().last().unwrap())
        .assert()
        .code(2);
    let bad = t.write("bad.toml", b"spam_treshold = 0.5\n");
    spamsort()
        .arg("classify")
        .env("SPAMSORT_CONFIG", &bad)
        .arg(sample_files().last().unwrap())
        .assert()
        .code(3)
        .stderr(predicates::str::contains("bad.toml"));
    let out = spamsort().args(["completions", "bash"]).assert().success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("spamsort"));
}

/// Every subcommand's --help opens with the description `spamsort --help` lists for it (the
/// subcommands are built lazily, and an argument struct's doc comment once replaced it).
#[test]
fn every_command_has_help_that_opens_with_its_description() {
    let top = spamsort().arg("--help").assert().success();
    let top = String::from_utf8_lossy(&top.get_output().stdout).into_owned();
    let commands: Vec<(String, String)> = top
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| {
            let (name, about) = line.trim().split_once(char::is_whitespace)?;
            Some((name.to_owned(), about.trim().to_owned()))
        })
        .filter(|(name, _)| name != "help")
        .collect();
    assert!(commands.len() >= 15, "commands listed: {commands:?}");
    for (name, about) in &commands {
        let help = spamsort()
            .args([name.as_str(), "--help"])
            .assert()
            .success();
        let help = String::from_utf8_lossy(&help.get_output().stdout).into_owned();
        assert_eq!(
            help.lines().next(),
            Some(about.as_str()),
            "spamsort {name} --help"
        );
    }
}

/// Regression: asking a model file for a model it was not trained with was reported as a
/// corrupt file ("retrain or restore it"), so a user could throw away what they had learned
/// over a setting. It says which models the file holds.
#[test]
fn a_model_the_file_does_not_hold_is_named_with_those_it_holds() {
    let t = TestDir::new();
    let model = t.path().join("two.spamsort");
    let (spam, ham) = (sample("spam"), sample("ham"));
    spamsort()
        .args(["train", "--models", "bernoulli-nb,linear-svm", "--spam"])
        .arg(&spam)
        .arg("--ham")
        .arg(&ham)
        .arg("--model")
        .arg(&model)
        .assert()
        .success();
    let message = sample_files().last().unwrap().clone();
    for kind in ["fusion", "multinomial-nb"] {
        let out = spamsort()
            .args(["classify", "--classifier", kind, "--model"])
            .arg(&model)
            .arg(&message)
            .assert()
            .code(3);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        let expected = format!("holds no {kind} model (it holds bernoulli-nb, linear-svm)");
        assert!(err.contains(&expected) && !err.contains("corrupt"), "{err}");
    }
}
