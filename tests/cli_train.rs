//! `spamsort train` and `spamsort info` on the sample corpus.

use crate::util::{TestDir, sample, spamsort, with_sample};

#[test]
fn train_then_info_on_the_sample() {
    let t = TestDir::new();
    let model = t.path().join("nested/dir/model.spamsort");
    with_sample(spamsort().arg("train"))
        .arg("--model")
        .arg(&model)
        .assert()
        .success()
        .stderr(predicates::str::contains("trained on 104 spam + 100 ham"));
    let out = spamsort()
        .arg("info")
        .env("SPAMSORT_MODEL", &model)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("104 spam, 100 ham"), "{text}");
    assert!(
        text.contains("by train:        104 spam, 100 ham"),
        "{text}"
    );
    assert!(text.contains("by learn:        0 spam, 0 ham"), "{text}");
    let version = spamsort::model_file::FORMAT_VERSION;
    assert!(
        text.contains(&format!("format version:  {version}\n")),
        "{text}"
    );
    assert!(text.contains("file modified:   20"), "{text}");
    let vocab: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("vocabulary:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(vocab > 1000, "vocabulary of {vocab} tokens");
}

#[test]
fn info_names_the_format_version_of_a_file_of_another_version() {
    let t = TestDir::new();
    let old = t.write("old.spamsort", b"SPAMSORT\x02\x00\x00\x00\x01\x00\x00\x00");
    spamsort()
        .args(["info", "--model"])
        .arg(&old)
        .assert()
        .code(3)
        .stdout(predicates::str::contains(format!(
            "format version:  2 (this spamsort reads {} to {})",
            spamsort::model_file::OLDEST_READ,
            spamsort::model_file::FORMAT_VERSION
        )))
        .stderr(predicates::str::contains("retrain"));
}

#[test]
fn info_on_a_corrupt_model_fails_clearly() {
    let t = TestDir::new();
    let bad = t.write("bad.spamsort", b"SPAMSORT\x01\x00\x00\x00garbage");
    spamsort()
        .args(["info", "--model"])
        .arg(&bad)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("bad.spamsort"));
}

#[test]
fn train_needs_both_classes() {
    let t = TestDir::new();
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    spamsort()
        .arg("train")
        .arg("--spam")
        .arg(&empty)
        .arg("--ham")
        .arg(sample("ham"))
        .arg("--model")
        .arg(t.path().join("m"))
        .assert()
        .code(3)
        .stderr(predicates::str::contains("at least one spam"));
}

/// `spamsort train --spam SPAM --ham HAM` into a model in `t`, with the outcome.
fn train(
    t: &TestDir,
    spam: &[&std::path::Path],
    ham: &[&std::path::Path],
) -> assert_cmd::assert::Assert {
    let mut cmd = spamsort();
    cmd.arg("train");
    for s in spam {
        cmd.arg("--spam").arg(s);
    }
    for h in ham {
        cmd.arg("--ham").arg(h);
    }
    cmd.arg("--model")
        .arg(t.path().join("model.spamsort"))
        .assert()
}

/// Regression (auditC repro-5): an empty message (a file a failed delivery left empty, two
/// envelope lines in a row in an mbox) was trained as a message of its class, which `learn`
/// never counts; it is skipped, said with its path.
#[test]
fn train_skips_empty_messages_as_no_mail() {
    let t = TestDir::new();
    let empty = t.write("Spam/new/1700000000.M1P1.host", b"");
    for (i, path) in crate::util::sample_class_files("spam").iter().enumerate() {
        t.write(&format!("Spam/cur/{i}:2,S"), &std::fs::read(path).unwrap());
    }
    std::fs::create_dir(t.path().join("Spam/tmp")).unwrap();
    let envelope = "From a@example.org Mon Jan  1 00:00:00 2024\n";
    let mbox = t.write(
        "ham.mbox",
        format!("{envelope}Subject: one\n\nhi\n\n{envelope}{envelope}Subject: two\n\nho\n")
            .as_bytes(),
    );
    let out = train(&t, &[&t.path().join("Spam")], &[&sample("ham"), &mbox]).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("trained on 104 spam + 102 ham (2 skipped"),
        "{stderr}"
    );
    let line = format!("skipped: {}: no mail", empty.display());
    assert!(stderr.contains(&line), "{stderr}");
    assert!(stderr.contains("ham.mbox#2: no mail"), "{stderr}");
}

#[test]
fn train_refuses_the_same_mailbox_as_spam_and_ham() {
    let t = TestDir::new();
    let spam = sample("spam");
    train(&t, &[&spam], &[&spam])
        .code(3)
        .stderr(predicates::str::contains("are the same mailbox"));
    // Another spelling of the same folder (a symbolic link) is the same mailbox too.
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&spam, &link).unwrap();
    train(&t, &[&spam], &[&link])
        .code(3)
        .stderr(predicates::str::contains("are the same mailbox"));
    assert!(!t.path().join("model.spamsort").exists(), "nothing saved");
}

#[test]
fn train_refuses_overlapping_mailboxes_and_a_message_in_both() {
    let t = TestDir::new();
    let files = crate::util::sample_files();
    for (i, path) in files.iter().take(3).enumerate() {
        t.write(&format!("all/spam/{i}"), &std::fs::read(path).unwrap());
    }
    for (i, path) in files.iter().rev().take(3).enumerate() {
        t.write(&format!("all/ham/{i}"), &std::fs::read(path).unwrap());
    }
    // One folder inside the other: its messages would be both spam and ham.
    let (all, ham) = (t.path().join("all"), t.path().join("all/ham"));
    train(&t, &[&all], &[&ham])
        .code(3)
        .stderr(predicates::str::contains(
            "the spam and ham mailboxes overlap",
        ));
    // The same message file named in both.
    let one = t.path().join("all/spam/0");
    train(&t, &[&one, &t.path().join("all/spam/1")], &[&ham, &one])
        .code(3)
        .stderr(predicates::str::contains("are the same mailbox"));
    // The same message file in two folders (hard-linked).
    let linked = t.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::fs::hard_link(&one, linked.join("x")).unwrap();
    train(&t, &[&t.path().join("all/spam")], &[&ham, &linked])
        .code(3)
        .stderr(predicates::str::contains("linked/x would be both spam"));
    // Regression (auditC repro-1): the spam folder's last message named again as ham, the
    // same path as the message read just before it, was trained as spam without a word (the
    // look-up an mbox's messages share skipped it across the classes).
    let last = t.path().join("all/spam/2");
    train(&t, &[&t.path().join("all/spam")], &[&last, &ham])
        .code(3)
        .stderr(predicates::str::contains("all/spam/2) and ham"));
    // Separate folders train.
    train(&t, &[&t.path().join("all/spam")], &[&ham]).success();
}

#[test]
fn trec_index_given_as_spam_that_lists_ham_is_refused_not_trained_as_spam() {
    let t = TestDir::new();
    let (mixed, spam) = crate::util::mixed_trec_index(&t);
    let model = t.path().join("m.spamsort");
    let train = |spam_index: &std::path::Path| {
        spamsort()
            .arg("train")
            .arg("--spam")
            .arg(spam_index)
            .arg("--ham")
            .arg(sample("ham"))
            .arg("--model")
            .arg(&model)
            .assert()
    };
    train(&mixed)
        .code(3)
        .stderr(predicates::str::contains("lists"))
        .stderr(predicates::str::contains("as ham"));
    assert!(!model.exists());
    // An index of the flag's own class is read as that class.
    let spam_only = t.write(
        "spam.index",
        format!("spam {}\n", spam.display()).as_bytes(),
    );
    train(&spam_only)
        .success()
        .stderr(predicates::str::contains("trained on 1 spam + 100 ham"));
}

#[test]
fn train_says_skipped_once_for_a_message_over_the_size_limit() {
    // Review: the line read "spamsort: skipped: PATH: message larger than N bytes, skipped".
    let t = TestDir::new();
    let big = t.write("big/1", b"Subject: big\n\nhello\n");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(spamsort::corpus::MAX_MESSAGE_BYTES + 1)
        .unwrap();
    let (spam, ham, big_dir) = (sample("spam"), sample("ham"), t.path().join("big"));
    let out = train(&t, &[&spam, &big_dir], &[&ham]).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let limit = spamsort::corpus::MAX_MESSAGE_BYTES;
    let line = format!(
        "spamsort: skipped: {}: message larger than {limit} bytes\n",
        big.display()
    );
    assert!(stderr.contains(&line), "{stderr}");
    assert!(stderr.contains("(1 skipped, "), "{stderr}");
    for line in stderr.lines() {
        assert!(line.matches("skipped").count() <= 1, "{line}");
    }
}

#[test]
fn train_keeps_a_model_with_corrections_learned_into_it_unless_forced() {
    // Regression: `train` replaced the model file without a word, and every message `learn`
    // had put into it (a user's corrections) was gone.
    let t = TestDir::new();
    let model = t.path().join("model.spamsort");
    let train = |extra: &[&str]| {
        let mut cmd = spamsort();
        with_sample(cmd.arg("train"))
            .arg("--model")
            .arg(&model)
            .args(extra)
            .assert()
    };
    train(&[]).success();
    // A model of nothing but training mail is replaced: retraining is what `train` is for.
    train(&[]).success();
    let learn_spam = |model: &std::path::Path, message: &std::path::Path| {
        spamsort()
            .args(["learn", "--spam", "--model"])
            .arg(model)
            .arg(message)
            .assert()
            .success();
    };
    let correction = t.write("c.eml", b"Subject: a correction\n\nnot in the folders\n");
    learn_spam(&model, &correction);
    let before = std::fs::read(&model).unwrap();
    train(&[]).code(3).stderr(predicates::str::contains(
        "1 message(s) learned by `learn` (corrections) that the training mail does not hold",
    ));
    assert!(
        std::fs::read(&model).unwrap() == before,
        "the model is kept"
    );
    train(&["--force"]).success();
    let out = spamsort()
        .arg("info")
        .arg("--model")
        .arg(&model)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("by learn:        0 spam, 0 ham"), "{text}");
    // Corrections the training mail holds with the same label are kept by the new model: no
    // --force needed to retrain from the folders they were learned from.
    let spam = crate::util::sample_class_files("spam")[0].clone();
    let learned = t.path().join("learned.spamsort");
    learn_spam(&learned, &spam);
    let mut cmd = spamsort();
    with_sample(cmd.arg("train"))
        .arg("--model")
        .arg(&learned)
        .assert()
        .success();
}

/// Regression (auditC repro-3): `train --model FILE` where FILE is a mailbox (as one who took
/// `-m` for "mailbox" would type it) replaced the mail with a model file, exit 0: every message
/// in it lost. A file that does not start as a model file is refused, before anything is read
/// or locked, unless `--force`; an empty one is written. (The mbox given as ham is refused
/// even with `--force`: see `train_and_learn_never_write_a_model_into_the_mail_they_read`.)
#[test]
fn train_refuses_to_replace_a_file_that_is_no_model_file() {
    let t = TestDir::new();
    let mut mbox = Vec::new();
    for path in crate::util::sample_class_files("ham").iter().take(5) {
        mbox.extend_from_slice(b"From a@example.org Mon Jan  1 00:00:00 2024\n");
        mbox.extend(std::fs::read(path).unwrap());
        mbox.extend_from_slice(b"\n");
    }
    let inbox = t.write("INBOX", &mbox);
    let run = |model: &std::path::Path, extra: &[&str]| {
        spamsort()
            .arg("train")
            .args(["--models", "multinomial-nb", "--spam"])
            .arg(sample("spam"))
            .arg("--ham")
            .arg(sample("ham"))
            .arg("--model")
            .arg(model)
            .args(extra)
            .assert()
    };
    run(&inbox, &[]).code(3).stderr(predicates::str::contains(
        "INBOX is not a spamsort model file",
    ));
    assert_eq!(std::fs::read(&inbox).unwrap(), mbox, "the mailbox is kept");
    assert!(
        !t.path().join("INBOX.lock").exists(),
        "no dot-lock left beside it"
    );
    // An empty file holds nothing to lose (a `mktemp` for the model).
    let empty = t.write("empty", b"");
    run(&empty, &[]).success();
    run(&inbox, &["--force"]).success();
    assert!(std::fs::read(&inbox).unwrap().starts_with(b"SPAMSORT"));
}

/// Regression (auditE repro-4): `train --ham MD -m MD/new/model.spamsort` wrote the model file
/// and its lock file into the maildir it read (a mail reader showed them as new messages, and
/// the next `train` learned the old model as ham); `learn` did the same. A model file (or its
/// lock) that would be (in) a mailbox read is refused before anything is read or written,
/// however spelled: through folders not made yet, a symbolic link, `..`; and `--force` does
/// not lift it.
#[test]
fn train_and_learn_never_write_a_model_into_the_mail_they_read() {
    let t = TestDir::new();
    let md = t.maildir("md");
    for (i, path) in crate::util::sample_class_files("ham")
        .iter()
        .take(5)
        .enumerate()
    {
        std::fs::copy(path, md.join(format!("cur/{i}:2,S"))).unwrap();
    }
    std::os::unix::fs::symlink(md.join("new"), t.path().join("link")).unwrap();
    std::fs::create_dir(t.path().join("elsewhere")).unwrap();
    let message = md.join("cur/0:2,S");
    let models = [
        md.join("new/model.spamsort"),
        md.join("new/not/yet/model.spamsort"),
        t.path().join("link/model.spamsort"),
        t.path().join("elsewhere/../md/tmp/model.spamsort"),
        message.clone(),
    ];
    for model in &models {
        let train = |extra: &[&str]| {
            spamsort()
                .arg("train")
                .args(["--models", "multinomial-nb", "--spam"])
                .arg(sample("spam"))
                .arg("--ham")
                .arg(&md)
                .arg("--model")
                .arg(model)
                .args(extra)
                .assert()
                .code(3)
                .stderr(predicates::str::contains("the mail read"))
        };
        train(&[]);
        train(&["--force"]);
        spamsort()
            .args(["learn", "--ham", "--model"])
            .arg(model)
            .arg(&md)
            .assert()
            .code(3)
            .stderr(predicates::str::contains("the mail read"));
    }
    // A model file's lock is `NAME.lock` beside it: a message of that name is refused too.
    let lock_named = md.join("cur/model.lock");
    std::fs::copy(&message, &lock_named).unwrap();
    spamsort()
        .args(["learn", "--ham", "--model"])
        .arg(md.join("cur/model.spamsort"))
        .arg(&lock_named)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("its lock file"));
    for sub in ["new", "tmp"] {
        let names: Vec<_> = std::fs::read_dir(md.join(sub)).unwrap().collect();
        assert!(names.is_empty(), "{sub}: {names:?}");
    }
    let mut cur: Vec<_> = std::fs::read_dir(md.join("cur"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    cur.sort();
    assert_eq!(
        cur,
        ["0:2,S", "1:2,S", "2:2,S", "3:2,S", "4:2,S", "model.lock"]
    );
    assert_eq!(
        std::fs::read(&message).unwrap(),
        std::fs::read(&crate::util::sample_class_files("ham")[0]).unwrap()
    );
    // Beside the maildir, not in it: written.
    let beside = t.path().join("model.spamsort");
    spamsort()
        .args(["learn", "--ham", "--model"])
        .arg(&beside)
        .arg(&md)
        .assert()
        .success();
    assert!(beside.exists());
}

/// auditF repro-5: the one-shot commands said their notes with `eprintln!`, which panics where
/// stderr cannot be written (a full disk under a cron job's log; here /dev/full): `train` with
/// a message it skips (an empty file) died at that note, exit 101, and wrote no model.
#[test]
fn train_goes_on_when_standard_error_cannot_be_written() {
    let t = TestDir::new();
    let ham = t.path().join("ham");
    std::fs::create_dir(&ham).unwrap();
    for file in std::fs::read_dir(sample("ham")).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, ham.join(file.file_name().unwrap())).unwrap();
    }
    std::fs::write(ham.join("empty"), b"").unwrap();
    let model = t.path().join("model.spamsort");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let status = std::process::Command::new(crate::util::spamsort_bin())
        .arg("train")
        .arg("--spam")
        .arg(sample("spam"))
        .arg("--ham")
        .arg(&ham)
        .arg("--model")
        .arg(&model)
        .stdout(std::process::Stdio::null())
        .stderr(full)
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(std::fs::metadata(&model).unwrap().len() > 0);
}
