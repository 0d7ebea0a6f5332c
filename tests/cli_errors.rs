//! How the command line fails: each cause printed once, hints where they help, and a closed
//! standard output (`spamsort info | true`) taken as success by every command.

use crate::util::{
    TestDir, copy_of_trained_model, message, sample, sample_files, spamsort_bin, trained_model,
};
use std::process::{Command, Stdio};

/// Runs `spamsort ARGS` with standard output a pipe whose reading end is already closed, so
/// its first write fails with EPIPE however fast or slow it is. Returns the exit code and
/// standard error.
fn run_into_closed_pipe(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(spamsort_bin())
        .args(args)
        .stdin(std::fs::File::open(&sample_files()[0]).unwrap())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn missing_model_says_so_once_and_hints_to_train() {
    let t = TestDir::new();
    let missing = t.path().join("none.spamsort");
    let message = &sample_files()[0];
    for (command, with_message) in [
        ("info", false),
        ("classify", true),
        ("explain", true),
        ("dump", false),
    ] {
        let mut cmd = Command::new(spamsort_bin());
        cmd.arg(command).arg("--model").arg(&missing);
        if with_message {
            cmd.arg(message);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{command}: {stderr}");
        assert!(stderr.contains("none.spamsort"), "{command}: {stderr}");
        assert!(
            stderr.contains("run `spamsort train` first"),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("os error"), "{command}: {stderr}");
    }
}

#[test]
fn unreadable_mailbox_error_prints_its_cause_once() {
    let t = TestDir::new();
    let out = Command::new(spamsort_bin())
        .arg("train")
        .arg("--spam")
        .arg(t.path().join("nope"))
        .arg("--ham")
        .arg(sample("ham"))
        .arg("--model")
        .arg(t.path().join("m.spamsort"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
}

#[test]
fn closed_standard_output_is_success_for_every_command_but_filter() {
    let t = TestDir::new();
    let model = trained_model().as_os_str();
    let message = sample_files()[0].clone();
    let (spam, ham) = (sample("spam"), sample("ham"));
    let copy = t.path().join("learn.spamsort");
    std::fs::copy(trained_model(), &copy).unwrap();
    let commands: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec!["info".as_ref(), "--model".as_ref(), model],
        vec![
            "classify".as_ref(),
            "--model".as_ref(),
            model,
            spam.as_os_str(),
        ],
        vec![
            "classify".as_ref(),
            "--model".as_ref(),
            model,
            message.as_os_str(),
        ],
        vec![
            "explain".as_ref(),
            "--model".as_ref(),
            model,
            message.as_os_str(),
        ],
        // Not `filter`: its output is the message, and one not delivered whole is its failure
        // (`cli_filter::a_reader_that_closes_early_makes_the_filter_fail_classified_or_not`).
        vec!["tokens".as_ref(), message.as_os_str()],
        vec!["dump".as_ref(), "--model".as_ref(), model],
        vec!["completions".as_ref(), "bash".as_ref()],
        vec![
            "learn".as_ref(),
            "--model".as_ref(),
            copy.as_os_str(),
            "--ham".as_ref(),
            message.as_os_str(),
        ],
        vec![
            "eval".as_ref(),
            "--folds".as_ref(),
            "2".as_ref(),
            "--models".as_ref(),
            "multinomial-nb".as_ref(),
            "--spam".as_ref(),
            spam.as_os_str(),
            "--ham".as_ref(),
            ham.as_os_str(),
        ],
    ];
    for args in commands {
        let (code, stderr) = run_into_closed_pipe(&args);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        // A single message's verdict is its exit code (bogofilter's); anything else is 0.
        let single = args[0] == "classify" && args.last() == Some(&message.as_os_str());
        if single {
            assert!(matches!(code, Some(0..=2)), "{args:?}: {code:?} {stderr}");
        } else {
            assert_eq!(code, Some(0), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn unknown_model_name_is_a_usage_error_listing_every_kind() {
    for args in [
        &["train", "--models", "linear-svm,nope"][..],
        &["train", "--active", "nope"][..],
        &["classify", "--classifier", "nope", "-"][..],
        &["eval", "--models", "nope"][..],
    ] {
        let out = Command::new(spamsort_bin()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            stderr.contains("invalid value 'nope'"),
            "{args:?}: {stderr}"
        );
        for kind in spamsort::models::ModelKind::ALL {
            assert!(stderr.contains(kind.name()), "{args:?}: {stderr}");
        }
    }
}

/// spamsort under a file-size limit of `bytes` (`ulimit -f`): a write past it fails with
/// `EFBIG`, as a full disk fails it with `ENOSPC`.
fn with_file_size_limit(bytes: u64) -> Command {
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--fsize={bytes}"))
        .arg("--")
        .arg(spamsort_bin());
    command
}

/// Runs `command`, expecting exit code 3 for a file too large; its stderr.
fn too_large(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{:?}: {stderr}", out.status);
    assert!(stderr.contains("File too large"), "{stderr}");
    stderr
}

/// Regression: a write past the file-size limit (`ulimit -f`, a full quota on some systems)
/// killed spamsort with SIGXFSZ in the middle of it, without a word and leaving the dump's
/// temporary file behind; it is an error like a full disk: said once, exit code 3, nothing
/// left behind.
#[test]
fn a_write_past_the_file_size_limit_is_an_error_not_a_kill() {
    let t = TestDir::new();
    let backup = t.path().join("backup.txt");
    // The sample model's dump is a few megabytes: far past 64 KiB.
    let mut dump = with_file_size_limit(65536);
    let stderr = too_large(
        dump.arg("dump")
            .arg("--model")
            .arg(trained_model())
            .arg(&backup),
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Regression: a `learn` whose journal append ran out of room (a full disk; here the
/// file-size limit, which fails the write the same way) left the cut record in the model file
/// until the next learn trimmed it. The append is now cut back at once: the file is as it was.
#[test]
fn a_learn_whose_append_runs_out_of_room_leaves_no_cut_record() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = std::fs::read(&model).unwrap();
    let new = t.write(
        "new.eml",
        &message("Offer", "cheap pills zqxappend now, and much more to say\n"),
    );
    // Room for a record's header and a few bytes of its payload, not for all of it.
    let mut learn = with_file_size_limit(before.len() as u64 + 20);
    too_large(
        learn
            .args(["learn", "--ham", "--model"])
            .arg(&model)
            .arg(&new),
    );
    assert!(
        std::fs::read(&model).unwrap() == before,
        "the model file changed"
    );
}

/// Regression: a command whose standard output could not be written (a full disk, `>
/// /dev/full`) said only "spamsort: No space left on device (os error 28)", not what it was
/// writing. Each now names standard output, once, and exits 3.
#[test]
fn a_full_standard_output_is_named_in_the_error() {
    let model = trained_model().as_os_str();
    let message = sample_files()[0].clone();
    let commands: [&[&std::ffi::OsStr]; 6] = [
        &["info".as_ref(), "--model".as_ref(), model],
        &[
            "classify".as_ref(),
            "--model".as_ref(),
            model,
            message.as_os_str(),
        ],
        &[
            "explain".as_ref(),
            "--model".as_ref(),
            model,
            message.as_os_str(),
        ],
        &["tokens".as_ref(), message.as_os_str()],
        &["completions".as_ref(), "bash".as_ref()],
        &["man".as_ref()],
    ];
    for args in commands {
        let out = Command::new(spamsort_bin())
            .args(args)
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            stderr.contains("writing to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn a_model_path_that_names_a_directory_is_refused_before_anything_is_made() {
    // Regression: `-m x/new/` made `x/` before the path was refused, and `-m new/.` left
    // `new.lock` behind.
    let t = TestDir::new();
    let message = t.write("m.eml", &message("hi", "a b c"));
    for model in ["x/new/", "new/.", "new/.."] {
        crate::util::spamsort()
            .current_dir(t.path())
            .args(["learn", "--spam", "-m", model])
            .arg(&message)
            .assert()
            .failure()
            .stderr(predicates::str::contains("must name a file"));
    }
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 1);
}
