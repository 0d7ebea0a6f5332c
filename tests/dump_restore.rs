//! `spamsort dump` / `spamsort restore`: the text backup of a model file rebuilds it exactly
//! (same file bytes, same verdicts), refuses to overwrite a model without `--force`, and a
//! damaged dump is refused with its line number, writing nothing.

use crate::util::{TestDir, copy_of_trained_model, message, sample, sample_files, spamsort};
use spamsort::SpamFilter;
use spamsort::models::ModelKind;
use std::path::{Path, PathBuf};

/// Dumps `model` into `out`, which must succeed; returns what it said on stderr.
fn dump(model: &Path, out: &Path) -> String {
    let done = spamsort()
        .args(["dump", "--model"])
        .arg(model)
        .arg(out)
        .assert()
        .success();
    String::from_utf8_lossy(&done.get_output().stderr).into_owned()
}

fn restore(dump: &Path, model: &Path) -> assert_cmd::assert::Assert {
    spamsort()
        .args(["restore", "--model"])
        .arg(model)
        .arg(dump)
        .assert()
}

/// Restores `dump` into `model` with `--force`, which must succeed.
fn restore_forced(dump: &Path, model: &Path) {
    spamsort()
        .args(["restore", "--force", "--model"])
        .arg(model)
        .arg(dump)
        .assert()
        .success();
}

/// A private copy of the trained sample model and its dump, in `dir`.
fn dumped_copy(dir: &TestDir) -> (PathBuf, PathBuf) {
    let model = copy_of_trained_model(dir);
    let text = dir.path().join("model.dump");
    dump(&model, &text);
    (model, text)
}

/// Restores `dump` into `model`, expecting a failure; returns stderr.
fn restore_fails(dump: &Path, model: &Path) -> String {
    let out = restore(dump, model).failure();
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

/// `classify --format tsv` of both sample folders: one line per message.
fn classify_sample(model: &Path) -> Vec<u8> {
    let out = spamsort()
        .args(["classify", "--format", "tsv", "--model"])
        .arg(model)
        .arg(sample("spam"))
        .arg(sample("ham"))
        .output()
        .unwrap();
    assert!(!out.stdout.is_empty());
    out.stdout
}

#[test]
fn dump_restore_round_trip_is_exact_after_learning_new_tokens() {
    let dir = TestDir::new();
    let model = copy_of_trained_model(&dir);
    // Learned after training: tokens the trained vocabulary lacks, a relabel, and a ham.
    let fresh = dir.write(
        "fresh.eml",
        &message(
            "zorblax quuxify",
            "zorblax frobnicate wibblewobble \"quoted\" caf\u{e9}",
        ),
    );
    let ham = dir.write(
        "ham.eml",
        &message("lunch plans", "see you at noon, zorblax"),
    );
    let relabeled = &sample_files()[0];
    for (label, file) in [("--spam", &fresh), ("--ham", &ham), ("--ham", relabeled)] {
        spamsort()
            .args(["learn", label, "--model"])
            .arg(&model)
            .arg(file)
            .assert()
            .success();
    }
    let first = dir.path().join("first.dump");
    dump(&model, &first);
    let restored = dir.path().join("restored.spamsort");
    restore(&first, &restored).success();

    // `learn` appended to the model file's journal; restore writes the state whole, as a save
    // does: byte for byte the model file saved with its journal applied.
    let mut saved = SpamFilter::load(&model).unwrap();
    saved
        .save(&spamsort::model_file::lock_for_update(&model).unwrap())
        .unwrap();
    assert!(
        std::fs::read(&model).unwrap() == std::fs::read(&restored).unwrap(),
        "the restored model file differs from the original"
    );
    let second = dir.path().join("second.dump");
    dump(&restored, &second);
    assert!(
        std::fs::read(&first).unwrap() == std::fs::read(&second).unwrap(),
        "dump(restore(dump)) differs from dump"
    );
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.starts_with("spamsort-dump 3\n"));
    assert!(text.contains("\"zorblax\""), "a learned token is listed");

    let (a, b) = (
        SpamFilter::load(&model).unwrap(),
        SpamFilter::load(&restored).unwrap(),
    );
    assert_eq!(a, b);
    assert!(
        a.fusion().is_some(),
        "the fuser, which learned too, is in the round trip"
    );
    for file in sample_files().iter().chain([&fresh, &ham]) {
        let raw = std::fs::read(file).unwrap();
        for kind in ModelKind::WITH_FUSION {
            assert_eq!(a.classify_with(&raw, kind), b.classify_with(&raw, kind));
        }
    }
    assert_eq!(classify_sample(&model), classify_sample(&restored));
}

#[test]
fn restore_keeps_an_existing_model_unless_forced() {
    let dir = TestDir::new();
    let (model, text) = dumped_copy(&dir);
    let other = dir.write("other.spamsort", b"not a model");
    let stderr = restore_fails(&text, &other);
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read(&other).unwrap(), b"not a model");
    // Regression (auditC repro-6): refused after its update lock was made beside the file, so
    // `INBOX.lock`, the dot-lock mail programs wait on, was left beside a mailbox `INBOX`.
    let inbox = dir.write("INBOX", b"From a@b Mon Jan  1 00:00:00 2024\n\nhi\n");
    assert!(restore_fails(&text, &inbox).contains("--force"));
    assert!(
        !dir.path().join("INBOX.lock").exists(),
        "a lock left beside it"
    );
    restore_forced(&text, &other);
    assert!(std::fs::read(&other).unwrap() == std::fs::read(&model).unwrap());
}

#[test]
fn restore_force_over_a_mode_000_model_leaves_it_readable_and_writable_by_its_owner() {
    // Review: the restored file took the replaced file's mode as it was, 000 included. (As
    // root, access is not checked, so the mode bits are.)
    use std::os::unix::fs::PermissionsExt;
    let dir = TestDir::new();
    let (_, text) = dumped_copy(&dir);
    let broken = dir.write("broken.spamsort", b"not a model");
    for (old, new) in [
        (0o000, 0o600),
        (0o400, 0o600),
        (0o040, 0o640),
        (0o664, 0o664),
    ] {
        std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(old)).unwrap();
        restore_forced(&text, &broken);
        let mode = std::fs::metadata(&broken).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, new, "replacing a file of mode {old:o}");
    }
}

#[test]
fn damaged_dump_is_refused_with_its_line_number_and_writes_no_model() {
    let dir = TestDir::new();
    let (_, text) = dumped_copy(&dir);
    let good = std::fs::read_to_string(&text).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let mut bad_token = lines.clone();
    bad_token[5] = "token 1 x \"word\"";
    let cut = &good[..good.len() / 2];
    for (damaged, line) in [
        (bad_token.join("\n") + "\n", "line 6:"),
        (cut.to_owned(), &*format!("line {}:", cut.lines().count())),
    ] {
        let file = dir.write("damaged.dump", damaged.as_bytes());
        let target = dir.path().join("target.spamsort");
        let stderr = restore_fails(&file, &target);
        assert!(stderr.contains(line), "{line} not in {stderr}");
        assert!(!target.exists(), "a damaged dump wrote a model");
    }
}

/// `dumped_copy`'s dump with its lines passed through `edit`, written to `damaged.dump`.
fn edited_dump(dir: &TestDir, edit: impl FnOnce(&mut Vec<String>)) -> PathBuf {
    let (_, text) = dumped_copy(dir);
    let mut lines: Vec<String> = std::fs::read_to_string(&text)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    edit(&mut lines);
    dir.write("damaged.dump", (lines.join("\n") + "\n").as_bytes())
}

/// `dumped_copy`'s dump with `good` replaced by `bad` in its `settings` line.
fn with_settings(dir: &TestDir, good: &str, bad: &str) -> PathBuf {
    edited_dump(dir, |lines| {
        let settings = lines
            .iter_mut()
            .find(|l| l.starts_with("settings "))
            .unwrap();
        assert!(settings.contains(good), "{settings}");
        *settings = settings.replace(good, bad);
    })
}

/// Restores `text`, expecting a refusal that gives `reason` and writes no model.
fn refused_for(dir: &TestDir, text: &Path, reason: &str) {
    let target = dir.path().join("target.spamsort");
    let stderr = restore_fails(text, &target);
    assert!(stderr.contains(reason), "{stderr}");
    assert!(!target.exists(), "a damaged dump wrote a model");
}

/// Regression: the `settings` line's thresholds were taken as they came, so a hand-edited dump
/// with a spam cut-off above 1 (or below the ham one) restored a model that called certain
/// spam unsure (score 0.0) without a word.
#[test]
fn restore_refuses_thresholds_out_of_order_or_range() {
    let dir = TestDir::new();
    for (spam, ham) in [(7.0, -3.0), (0.1, 0.9)] {
        let good = "\"thresholds\":{\"spam\":0.98,\"ham\":0.5}";
        let bad = format!("\"thresholds\":{{\"spam\":{spam},\"ham\":{ham}}}");
        let text = with_settings(&dir, good, &bad);
        refused_for(&dir, &text, "line 2: thresholds need");
    }
}

/// The end line that counts `lines`' token, model and learned lines.
fn recount(lines: &mut [String]) {
    let count = |kind: &str| lines.iter().filter(|l| l.starts_with(kind)).count();
    let end = format!(
        "end {} {} {}",
        count("token "),
        count("model "),
        count("learned ")
    );
    *lines.last_mut().unwrap() = end;
}

/// Regression: restore took a dump whose token lines and models disagree, as a hand edit
/// leaves them, and wrote a model that read fine but was wrong: with a token line deleted, every
/// token after it took the next one's counts (the models' arrays, one entry longer than the
/// tokens, are by token id), and relearning a trained message then failed with "invalid
/// configuration: cannot unlearn a message that was not learned"; with a model line
/// repeated, the file held two models of one kind.
#[test]
fn restore_refuses_models_that_do_not_match_the_tokens() {
    let dir = TestDir::new();
    let deleted_token = edited_dump(&dir, |lines| {
        let first = lines.iter().position(|l| l.starts_with("token ")).unwrap();
        lines.remove(first);
        recount(lines);
    });
    refused_for(&dir, &deleted_token, "token lines complete");
    let repeated_model = edited_dump(&dir, |lines| {
        let model = lines.iter().position(|l| l.starts_with("model ")).unwrap();
        let line = lines[model].clone();
        lines.insert(model, line);
        recount(lines);
    });
    refused_for(&dir, &repeated_model, "twice");
}

/// Regression: `dump OUTPUT` renamed its temporary file over whatever OUTPUT was, so a
/// FIFO, a device node or a symbolic link there (`spamsort dump /dev/stdout` as root replaced
/// the system's `/dev/stdout` link) became a regular file holding the dump, and the error of a
/// directory there printed its cause twice. Now a link is followed (the file it leads to gets
/// the dump, the link stays), a link to nothing and anything but a regular file are refused,
/// untouched, and every error says its cause once.
#[test]
fn dump_follows_links_and_refuses_to_replace_what_is_not_a_file() {
    let dir = TestDir::new();
    let model = crate::util::trained_model();
    let expected = dir.path().join("expected.dump");
    dump(model, &expected);
    let expected_text = std::fs::read(&expected).unwrap();
    // An older dump (only a dump, or an empty file, is replaced without --force).
    let target = dir.write("backups/target.dump", b"spamsort-dump 2\nold backup\n");
    let link = dir.path().join("link.dump");
    std::os::unix::fs::symlink("backups/target.dump", &link).unwrap();
    dump(model, &link);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), expected_text);
    let fifo = dir.path().join("fifo");
    crate::util::mkfifo(&fifo);
    let dangling = dir.path().join("dangling.dump");
    std::os::unix::fs::symlink("nowhere.dump", &dangling).unwrap();
    let a_dir = dir.path().join("a-dir");
    std::fs::create_dir(&a_dir).unwrap();
    for (out, cause) in [
        (&fifo, "FIFO"),
        (&dangling, "does not exist"),
        (&a_dir, "directory"),
    ] {
        let result = spamsort()
            .args(["dump", "--model"])
            .arg(model)
            .arg(out)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&result.get_output().stderr).into_owned();
        assert_eq!(stderr.matches(cause).count(), 1, "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &fifo.metadata().unwrap().file_type()
    ));
    assert!(
        dangling
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!dir.path().join("nowhere.dump").exists());
    // Nothing else was left beside them (no temporary file).
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a-dir",
            "backups",
            "dangling.dump",
            "expected.dump",
            "fifo",
            "link.dump"
        ]
    );
}

/// Regression: `dump` of a model whose journal has a damaged record header (which no reader
/// can tell from a torn append, so every reader stops before it) wrote a backup of the records
/// before the damage only, and said nothing: restoring that backup, as `info` suggests,
/// silently loses the records after it. The dump is still written (it is the way to rebuild
/// the file), with a warning naming the damage.
#[test]
fn dump_of_a_journal_damaged_past_a_record_warns_what_it_leaves_out() {
    let dir = TestDir::new();
    let model = copy_of_trained_model(&dir);
    let mut ends = vec![std::fs::metadata(&model).unwrap().len()];
    for word in ["alpha", "bravo", "charlie"] {
        let new = dir.write(
            &format!("{word}.eml"),
            &message(
                &format!("Offer {word}"),
                &format!("cheap pills {word} now\n"),
            ),
        );
        // The model calls them spam, so learning them as ham is a correction: each appends.
        spamsort()
            .args(["learn", "--ham", "--model"])
            .arg(&model)
            .arg(&new)
            .assert()
            .success();
        ends.push(std::fs::metadata(&model).unwrap().len());
    }
    assert!(ends.windows(2).all(|w| w[0] < w[1]), "{ends:?}");
    // The second record's length field made to claim a mebibyte more.
    let mut bytes = std::fs::read(&model).unwrap();
    bytes[ends[1] as usize + 2] ^= 0x10;
    std::fs::write(&model, &bytes).unwrap();
    let text = dir.path().join("backup.dump");
    let stderr = dump(&model, &text);
    assert!(stderr.contains("warning"), "{stderr}");
    assert!(stderr.contains("journal record 2"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let learned = std::fs::read_to_string(&text).unwrap();
    assert_eq!(learned.matches(" ham learned\n").count(), 1, "{learned}");
    // A healthy model dumps without a word.
    let other = TestDir::new();
    let healthy = copy_of_trained_model(&other);
    assert_eq!(dump(&healthy, &text), "");
}

/// Regression: the tokenizer's settings came back from a dump (or a model file) unchecked, so
/// one edited to read 2^63 bytes of a message made `filter` and `classify` hold any message
/// whole (a 180 MB one took 900 MB) instead of its first 2 MiB. Now a `max_input_bytes` past
/// the 64 MiB any message may have is refused.
#[test]
fn restore_refuses_a_tokenizer_that_would_read_messages_of_any_size_whole() {
    let dir = TestDir::new();
    let text = with_settings(
        &dir,
        "\"max_input_bytes\":2097152,",
        "\"max_input_bytes\":9223372036854775808,",
    );
    refused_for(&dir, &text, "the tokenizer would read");
}

/// Regression: a dump's `max_model_bytes` came back unchecked, so one edited to 0 restored a
/// model whose every later save dropped the whole vocabulary. A limit below the floor is
/// refused, naming the smallest accepted.
#[test]
fn restore_refuses_a_size_limit_that_would_empty_the_vocabulary_at_every_save() {
    let dir = TestDir::new();
    let text = with_settings(
        &dir,
        "\"max_model_bytes\":33554432",
        "\"max_model_bytes\":0",
    );
    refused_for(&dir, &text, "at least 4194304 bytes");
}

/// Regression (auditC repro-4): `dump MODEL` with the model file itself as the output renamed
/// the dump over the model file, exit 0: every command but `restore` then refused the file as
/// not a model, and a `learn` saving meanwhile was lost.
#[test]
fn dump_refuses_to_write_over_the_model_file() {
    let dir = TestDir::new();
    let model = copy_of_trained_model(&dir);
    let before = std::fs::read(&model).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&model, &link).unwrap();
    for out in [&model, &link] {
        let result = spamsort()
            .args(["dump", "--model"])
            .arg(&model)
            .arg(out)
            .assert()
            .code(3);
        let stderr = String::from_utf8_lossy(&result.get_output().stderr).into_owned();
        assert!(stderr.contains("is the model file"), "{stderr}");
        assert_eq!(std::fs::read(&model).unwrap(), before, "the model is kept");
    }
}

/// Regression (auditE repro-3): `dump FILE` replaced whatever regular file FILE was, so
/// `spamsort dump ~/Mail/INBOX` (a mailbox named by mistake) replaced the mbox with the dump,
/// every message in it lost. Now a file that is not empty and does not start as a dump is
/// refused, before the model is read, unless `--force` is given; an earlier dump and an empty
/// file are still replaced.
#[test]
fn dump_never_replaces_a_mailbox_without_force() {
    let dir = TestDir::new();
    let model = crate::util::trained_model();
    let mbox = b"From a@b Mon Jan  1 00:00:00 2024\nSubject: keep me\n\nhello\n";
    let inbox = dir.write("INBOX", mbox);
    let not_a_model = dir.write("not-a-model", b"no model file");
    for model in [model, &not_a_model] {
        let result = spamsort()
            .args(["dump", "--model"])
            .arg(model)
            .arg(&inbox)
            .assert()
            .code(3);
        let stderr = String::from_utf8_lossy(&result.get_output().stderr).into_owned();
        // Refused before the model is read: a file that is no model is not what is said.
        assert!(stderr.contains("INBOX is not a spamsort dump"), "{stderr}");
        assert!(stderr.contains("--force"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(std::fs::read(&inbox).unwrap(), mbox, "the mailbox is kept");
    }
    // An empty file, then the dump written there, are replaced.
    let backup = dir.write("backup.txt", b"");
    for _ in 0..2 {
        dump(model, &backup);
        assert!(
            std::fs::read(&backup)
                .unwrap()
                .starts_with(b"spamsort-dump ")
        );
    }
    // --force replaces anything regular.
    spamsort()
        .args(["dump", "--force", "--model"])
        .arg(model)
        .arg(&inbox)
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&inbox).unwrap(),
        std::fs::read(&backup).unwrap()
    );
}
