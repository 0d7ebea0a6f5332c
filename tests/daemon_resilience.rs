//! `spamsort daemon` when things around it go wrong: the model file locked by another writer
//! while it learns from moves; odd entries in the inbox's `new/` (names that are not UTF-8,
//! symbolic links); a message it cannot file; the inbox's `new/` renamed away for a while or
//! replaced. Nothing is lost, the daemon goes on sorting and heeds signals, and it says
//! each thing once, not on every pass.

use crate::daemon::{Maildirs, daemon_command, deliver, files_in, start_command, wait_until};
use crate::util::Running;
use crate::util::{TestDir, copy_of_trained_model, sample_class_files};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Starts the daemon on `dirs` with `extra` flags, logging at debug level into `log`.
fn start_debug(model: &Path, dirs: &Maildirs, extra: &[&str], log: &Path) -> Running {
    let mut cmd = daemon_command(model, dirs, extra);
    cmd.env("SPAMSORT_LOG", "debug");
    start_command(cmd, log)
}

/// Starts the daemon on `dirs` with the trained model and no extra flags, logging into `log`.
fn start_trained(dirs: &Maildirs, log: &Path) -> Running {
    crate::daemon::start(crate::util::trained_model(), dirs, &[], log)
}

/// How many times the log says `what`.
fn said(log: &Path, what: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches(what)
        .count()
}

/// A test's directory, its maildirs (separate folders), a copy of the trained model there,
/// and a message the model calls spam.
fn maildirs_model_and_spam() -> (TestDir, Maildirs, std::path::PathBuf, Vec<u8>) {
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let model = copy_of_trained_model(&t);
    let spam = std::fs::read(&crate::util::sample_files()[0]).unwrap();
    (t, dirs, model, spam)
}

/// `n` sample ham messages the trained model does not call spam.
fn hams(n: usize) -> Vec<Vec<u8>> {
    let filter = spamsort::SpamFilter::load(crate::util::trained_model()).unwrap();
    let hams: Vec<Vec<u8>> = sample_class_files("ham")
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .filter(|m| filter.classify(m).verdict != spamsort::Verdict::Spam)
        .take(n)
        .collect();
    assert_eq!(hams.len(), n);
    hams
}

/// Sends SIGTERM and waits until the daemon exits, which must be with success.
fn sigterm_and_wait_for_exit(daemon: &mut Running) {
    let pid = rustix::process::Pid::from_raw(daemon.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let mut status = None;
    wait_until("the daemon to exit after SIGTERM", || {
        status = daemon.try_wait().unwrap();
        status.is_some()
    });
    assert!(status.unwrap().success(), "{status:?}");
}

#[test]
fn learning_from_moves_waits_for_a_locked_model_while_mail_is_sorted_and_sigterm_heeded() {
    // Learning waited on the model file's update lock: while a long `spamsort learn` held
    // it, new mail stayed unsorted and SIGTERM went unheeded.
    let (t, dirs, model, spam) = maildirs_model_and_spam();
    let ham = sample_class_files("ham");
    let log = t.path().join("log");
    let mut daemon = start_debug(&model, &dirs, &["--learn-from-moves"], &log);
    deliver(&dirs.inbox, "1.spam.test", &spam);
    let filed = dirs.spam.join("new/1.spam.test");
    wait_until("the message to be filed as spam", || filed.exists());
    let held = spamsort::model_file::lock_for_update(&model).unwrap();
    // The user moves it out of spam while another writer holds the model file.
    std::fs::rename(&filed, dirs.ham.join("cur/1.back.test:2,S")).unwrap();
    wait_until("learning to be deferred", || {
        said(&log, "learning from moves deferred") == 1
    });
    deliver(&dirs.inbox, "2.ham.test", &std::fs::read(&ham[0]).unwrap());
    wait_until("new mail to be sorted meanwhile", || {
        files_in(&dirs.inbox.join("new")).is_empty()
    });
    wait_until("learning to be tried again", || {
        said(&log, "the model file is still locked") >= 2
    });
    assert_eq!(said(&log, "learning from moves deferred"), 1, "said once");
    drop(held);
    wait_until("the correction to be learned", || {
        said(&log, "as ham (moved by the user)") == 1
    });
    assert_eq!(said(&log, "learning from moves resumed"), 1);
    // Locked again, a message the user moves into spam waits, and SIGTERM stops the daemon.
    let held = spamsort::model_file::lock_for_update(&model).unwrap();
    let moved = dirs.spam.join("cur/3.user.test:2,S");
    std::fs::write(&moved, std::fs::read(&ham[1]).unwrap()).unwrap();
    wait_until("learning to be deferred again", || {
        said(&log, "learning from moves deferred") == 2
    });
    sigterm_and_wait_for_exit(&mut daemon);
    drop(held);
    assert!(moved.exists() && said(&log, "as spam (moved by the user)") == 0);
}

#[test]
fn a_name_that_is_not_utf8_is_sorted_and_a_symbolic_link_is_left_in_place_and_said_once() {
    // Both were skipped without a word, pass after pass: the message was never sorted.
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let spam = std::fs::read(&crate::util::sample_files()[0]).unwrap();
    let ham = sample_class_files("ham");
    let name = OsStr::from_bytes(b"1700000000.M1P1.\xff\xfe.test:2,");
    let tmp = dirs.inbox.join("tmp").join(name);
    std::fs::write(&tmp, &spam).unwrap();
    std::fs::rename(&tmp, dirs.inbox.join("new").join(name)).unwrap();
    // A link to a message elsewhere: not delivered here, and not to be filed as if it were.
    let elsewhere = t.write("elsewhere.eml", &spam);
    let link = dirs.inbox.join("new/1700000001.M2P1.link.test");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let log = t.path().join("log");
    let mut daemon = start_trained(&dirs, &log);
    let filed = dirs.spam.join("new").join(name);
    // Linked into the spam folder first, then gone from the inbox.
    wait_until("the message to be filed as spam", || {
        filed.exists() && !dirs.inbox.join("new").join(name).exists()
    });
    assert_eq!(std::fs::read(&filed).unwrap(), spam);
    // More passes: the link is still said once.
    for (i, file) in ham.iter().take(3).enumerate() {
        let name = format!("{}.M{i}P3.test", 1_700_000_010 + i);
        deliver(&dirs.inbox, &name, &std::fs::read(file).unwrap());
        wait_until("the inbox to hold only the link", || {
            files_in(&dirs.inbox.join("new")) == [link.clone()]
        });
    }
    crate::daemon::stop(&mut daemon, &log);
    assert_eq!(said(&log, "a symbolic link, not a delivered message"), 1);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read(&elsewhere).unwrap(), spam);
    let filed = [&dirs.spam, &dirs.ham].map(|d| files_in(&d.join("new")).len());
    assert_eq!(filed.iter().sum::<usize>(), 4, "{filed:?}");
}

#[test]
fn a_message_it_cannot_file_is_logged_once_and_again_when_the_error_changes() {
    // It was logged on every pass, for as long as it stayed.
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let log = t.path().join("log");
    let mut daemon = start_trained(&dirs, &log);
    // The spam folder's new/ becomes a file: nothing can be filed there.
    let spam_new = dirs.spam.join("new");
    std::fs::rename(&spam_new, dirs.spam.join("new.away")).unwrap();
    std::fs::write(&spam_new, b"").unwrap();
    let spam = std::fs::read(&crate::util::sample_files()[0]).unwrap();
    deliver(&dirs.inbox, "1.spam.test", &spam);
    let stuck = || said(&log, "1.spam.test left in the inbox");
    wait_until("the message to be reported", || stuck() == 1);
    // More passes, each trying it again: each files a ham message.
    let ham = hams(6);
    let mut sent = 0;
    let mut pass = || {
        let name = format!("{}.M{sent}P4.test", 1_700_000_100 + sent);
        deliver(&dirs.inbox, &name, &ham[sent]);
        sent += 1;
        let filed = dirs.ham.join("new").join(&name);
        wait_until("a ham message to be filed", || filed.exists());
    };
    (0..3).for_each(|_| pass());
    // Another error is news.
    std::fs::remove_file(&spam_new).unwrap();
    std::os::unix::fs::symlink(t.path().join("nowhere"), &spam_new).unwrap();
    pass();
    wait_until("the new error to be reported", || stuck() == 2);
    pass();
    // Once the folder is back, it is filed.
    std::fs::remove_file(&spam_new).unwrap();
    std::fs::rename(dirs.spam.join("new.away"), &spam_new).unwrap();
    pass();
    wait_until("the message to be filed", || {
        spam_new.join("1.spam.test").exists()
    });
    crate::daemon::stop(&mut daemon, &log);
    // The whole log is in (its last line came): each error was said once.
    assert_eq!(stuck(), 2);
    assert_eq!(std::fs::read(spam_new.join("1.spam.test")).unwrap(), spam);
}

#[test]
fn an_inbox_new_renamed_away_and_back_or_replaced_is_waited_out_and_watched_again() {
    // The daemon exited when the inbox's new/ was gone for a moment (a backup tool).
    let t = TestDir::new();
    let dirs = Maildirs::new(&t);
    let log = t.path().join("log");
    // No rescan to fall back on: only watches notice the messages below.
    let mut daemon = start_debug(
        crate::util::trained_model(),
        &dirs,
        &["--rescan", "3600"],
        &log,
    );
    let ham = hams(2);
    let new = dirs.inbox.join("new");
    let watching = || said(&log, &format!("watching {} for changes", new.display()));
    let away = dirs.inbox.join("new.away");
    std::fs::rename(&new, &away).unwrap();
    wait_until("the daemon to say the inbox cannot be read", || {
        said(&log, "the inbox cannot be read") == 1
    });
    assert!(daemon.try_wait().unwrap().is_none(), "still running");
    std::fs::rename(&away, &new).unwrap();
    wait_until("the daemon to see it back", || {
        said(&log, "the inbox can be read again") == 1
    });
    deliver(&dirs.inbox, "1.M1P5.test", &ham[0]);
    let filed = dirs.ham.join("new/1.M1P5.test");
    wait_until("a message delivered after its return to be filed", || {
        filed.exists()
    });
    // Replaced by another directory (restored from a backup): that one is watched.
    let before = watching();
    std::fs::rename(&new, dirs.inbox.join("new.old")).unwrap();
    std::fs::create_dir(dirs.inbox.join("new.restored")).unwrap();
    std::fs::rename(dirs.inbox.join("new.restored"), &new).unwrap();
    wait_until("the new directory to be watched", || watching() > before);
    deliver(&dirs.inbox, "2.M2P5.test", &ham[1]);
    let filed = dirs.ham.join("new/2.M2P5.test");
    wait_until(
        "a message delivered into the new directory to be filed",
        || filed.exists(),
    );
    crate::daemon::stop(&mut daemon, &log);
    assert_eq!(files_in(&dirs.ham.join("new")).len(), 2);
    assert!(files_in(&new).is_empty());
}

/// A directory whose entries cannot be removed or renamed, as an inbox `new/` the daemon may
/// not change: the append-only attribute as root (whom permissions do not stop), no write
/// permission otherwise. Undone on drop.
struct Unremovable {
    dir: std::path::PathBuf,
    attribute: bool,
}

impl Unremovable {
    /// Makes `dir`, holding the file `probe`, so; `None` where that cannot be done here (no
    /// `chattr`, or a file system without the attribute).
    fn new(dir: &Path, probe: &str) -> Option<Unremovable> {
        use std::os::unix::fs::PermissionsExt;
        let attribute = rustix::process::geteuid().is_root();
        let made = if attribute {
            std::process::Command::new("chattr")
                .arg("+a")
                .arg(dir)
                .status()
                .is_ok_and(|s| s.success())
        } else {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).is_ok()
        };
        let guard = made.then(|| Unremovable {
            dir: dir.to_path_buf(),
            attribute,
        })?;
        let (from, to) = (dir.join(probe), dir.join(format!("{probe}.moved")));
        match std::fs::rename(&from, &to) {
            Err(_) => Some(guard),
            Ok(()) => {
                std::fs::rename(&to, &from).unwrap();
                None
            }
        }
    }
}

impl Drop for Unremovable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.attribute {
            let _ = std::process::Command::new("chattr")
                .arg("-a")
                .arg(&self.dir)
                .status();
        } else {
            let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700));
        }
    }
}

#[test]
fn a_message_it_cannot_take_from_the_inbox_is_left_there_unfiled_and_said_once() {
    // It was linked (or copied) into its target and then could not be removed from the
    // inbox: logged as filed, and as not removed, on every pass, and once the model changed its
    // mind, filed into a second folder too (three copies).
    let (t, dirs, model, spam) = maildirs_model_and_spam();
    let name = "1.spam.test";
    deliver(&dirs.inbox, name, &spam);
    let inbox_new = dirs.inbox.join("new");
    let Some(locked) = Unremovable::new(&inbox_new, name) else {
        eprintln!("SKIPPED: cannot make a directory whose entries cannot be removed here");
        return;
    };
    let log = t.path().join("log");
    let extra = ["--add-headers", "--rescan", "1"];
    let mut daemon = start_debug(&model, &dirs, &extra, &log);
    let passes = || said(&log, &format!(" {name} "));
    wait_until("three passes over the message", || passes() >= 3);
    // The model changes its mind about it.
    crate::util::spamsort()
        .args(["learn", "--ham", "--model"])
        .arg(&model)
        .arg(crate::util::sample_files()[0].as_path())
        .assert()
        .success();
    let pid = rustix::process::Pid::from_raw(daemon.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    wait_until("the model to be reloaded", || {
        said(&log, "model reloaded") == 1
    });
    let before = passes();
    wait_until("two more passes", || passes() >= before + 2);
    sigterm_and_wait_for_exit(&mut daemon);
    drop(locked);
    let filed: Vec<_> = [&dirs.spam, &dirs.ham]
        .iter()
        .flat_map(|d| ["new", "cur"].map(|s| files_in(&d.join(s))))
        .flatten()
        .collect();
    assert!(
        filed.is_empty(),
        "filed although it stayed in the inbox: {filed:?}"
    );
    assert_eq!(std::fs::read(inbox_new.join(name)).unwrap(), spam);
    assert!(files_in(&dirs.inbox.join("tmp")).is_empty());
    let text = std::fs::read_to_string(&log).unwrap();
    let said_left = text
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains(&format!("{name} left in the inbox")))
        .count();
    assert_eq!(said_left, 1, "said once: {text}");
    assert!(
        text.contains("cannot take it from the inbox's new/"),
        "{text}"
    );
    assert_eq!(said(&log, "filed but"), 0, "{text}");
}

#[test]
fn a_message_the_kernel_will_not_let_it_link_is_filed_as_a_copy_or_left_in_the_inbox() {
    // It was left in the inbox's tmp/, where no mail reader looks: taken from new/ by a rename,
    // then neither linked into its target nor back into new/, as `fs.protected_hardlinks`
    // refuses a link to another user's file. Needs root, to run the daemon as another user
    // than the messages' owner.
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() || which("setpriv").is_none() {
        eprintln!("SKIPPED: needs root and setpriv, to run the daemon as another user");
        return;
    }
    let (t, dirs, model, spam) = maildirs_model_and_spam();
    let ham = hams(1).remove(0);
    let nobody = "65534";
    let chown = |path: &Path| {
        let status = std::process::Command::new("chown")
            .args(["-R", &format!("{nobody}:{nobody}")])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    };
    chown(t.path());
    // Owned by root, in a directory of the daemon's user: one readable, one not.
    let (readable, unreadable) = ("1.ham.test", "2.spam.test");
    deliver(&dirs.inbox, readable, &ham);
    deliver(&dirs.inbox, unreadable, &spam);
    let inbox_new = dirs.inbox.join("new");
    std::fs::set_permissions(inbox_new.join(unreadable), PermissionsExt::from_mode(0o600)).unwrap();
    let log = t.path().join("log");
    let mut cmd = std::process::Command::new("setpriv");
    let user = [format!("--reuid={nobody}"), format!("--regid={nobody}")];
    cmd.args(user).arg("--clear-groups");
    let daemon = daemon_command(&model, &dirs, &["--rescan", "1"]);
    cmd.arg(daemon.get_program()).args(daemon.get_args());
    cmd.env("HOME", t.path()).env("XDG_CONFIG_HOME", t.path());
    let mut daemon = start_command(cmd, &log);
    let filed = dirs.ham.join("new").join(readable);
    wait_until("the readable message to be filed", || filed.exists());
    wait_until("the unreadable one to be reported", || {
        said(&log, &format!("{unreadable} left in the inbox")) == 1
    });
    sigterm_and_wait_for_exit(&mut daemon);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(std::fs::read(&filed).unwrap(), ham, "{text}");
    assert!(!inbox_new.join(readable).exists(), "{text}");
    assert_eq!(
        std::fs::read(inbox_new.join(unreadable)).unwrap(),
        spam,
        "{text}"
    );
    let held = dirs.inbox.join("tmp").join("spamsort-taken");
    assert!(!held.exists() || files_in(&held).is_empty(), "{text}");
}

#[test]
fn a_message_it_cannot_open_for_want_of_file_descriptors_waits_and_is_never_filed_unclassified() {
    // Regression: "Too many open files" when reading a message was taken for a message that
    // cannot be read, filed as ham unclassified: with 10 descriptors and 8 threads reading at
    // once, a fifth of the spam went to the ham folder.
    let (t, dirs, model, _) = maildirs_model_and_spam();
    let filter = spamsort::SpamFilter::load(&model).unwrap();
    let spams: Vec<Vec<u8>> = sample_class_files("spam")
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .filter(|m| filter.classify(m).verdict == spamsort::Verdict::Spam)
        .take(60)
        .collect();
    assert_eq!(spams.len(), 60);
    for (i, m) in spams.iter().enumerate() {
        deliver(&dirs.inbox, &format!("{i}.fds.test"), m);
    }
    let log = t.path().join("log");
    // Enough descriptors to start (9) and about one to spare.
    let daemon = daemon_command(&model, &dirs, &["--rescan", "1"]);
    let mut cmd = with_open_file_limit(&daemon, "-n 10");
    cmd.env("RAYON_NUM_THREADS", "8");
    let mut daemon = start_command(cmd, &log);
    let inbox_new = dirs.inbox.join("new");
    wait_until("every message to be filed", || {
        files_in(&inbox_new).is_empty()
    });
    sigterm_and_wait_for_exit(&mut daemon);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(said(&log, "unclassified"), 0, "{text}");
    assert!(files_in(&dirs.ham.join("new")).is_empty(), "{text}");
    let mut filed: Vec<Vec<u8>> = files_in(&dirs.spam.join("new"))
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    let mut sent = spams;
    filed.sort();
    sent.sort();
    assert!(filed == sent, "{text}");
}

#[test]
fn a_message_it_cannot_file_is_tried_again_later_and_later_not_in_a_busy_loop() {
    // Regression: a message taken from new/ and put back after its filing failed woke the next
    // pass at once (its link back into new/ is a change there): the daemon tried it hundreds
    // of times a second, and mail readers saw it come and go.
    let (t, dirs, model, spam) = maildirs_model_and_spam();
    let log = t.path().join("log");
    let mut daemon = start_debug(&model, &dirs, &["--rescan", "30"], &log);
    // The spam folder's new/ becomes a file: every link into it fails.
    let target_new = dirs.spam.join("new");
    std::fs::remove_dir_all(&target_new).unwrap();
    std::fs::write(&target_new, b"").unwrap();
    deliver(&dirs.inbox, "1.stuck.test", &spam);
    wait_until("the failure to be said", || {
        said(&log, "1.stuck.test left in the inbox") == 1
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let text = std::fs::read_to_string(&log).unwrap();
    // Tried again after 1 s, then 2 s, ... (debug lines say each try after the first).
    let tries = said(&log, "1.stuck.test not filed: ");
    assert!((1..=2).contains(&tries), "{tries}: {text}");
    assert!(dirs.inbox.join("new/1.stuck.test").exists(), "{text}");
    // Once the folder is back it is filed at the next try, long before the rescan.
    std::fs::remove_file(&target_new).unwrap();
    std::fs::create_dir(&target_new).unwrap();
    let back = std::time::Instant::now();
    wait_until("the message to be filed", || {
        target_new.join("1.stuck.test").exists()
    });
    assert!(
        back.elapsed() < std::time::Duration::from_secs(20),
        "{text}"
    );
    sigterm_and_wait_for_exit(&mut daemon);
}

#[test]
fn a_move_learning_failed_on_is_learned_once_the_model_file_is_whole_again() {
    // Regression: a correction whose learning failed (the model file damaged, its file system
    // full, no descriptor left) was dropped for good.
    let (t, dirs, model, _) = maildirs_model_and_spam();
    let ham = hams(1).remove(0);
    let whole = std::fs::read(&model).unwrap();
    let log = t.path().join("log");
    let mut daemon = start_debug(
        &model,
        &dirs,
        &["--learn-from-moves", "--rescan", "1"],
        &log,
    );
    std::fs::write(&model, &whole[..100]).unwrap();
    std::fs::write(dirs.spam.join("cur/1.moved.test:2,S"), &ham).unwrap();
    wait_until("learning to fail", || {
        said(&log, "the corrections wait") == 1
    });
    std::fs::write(&model, &whole).unwrap();
    wait_until("the move to be learned", || {
        said(&log, "as spam (moved by the user)") == 1
    });
    sigterm_and_wait_for_exit(&mut daemon);
    assert_eq!(said(&log, "the corrections wait"), 1, "said once");
}

#[test]
fn a_low_soft_open_file_limit_is_raised_so_moves_are_learned() {
    // Regression: under a soft limit of 10 descriptors the daemon could not read a message
    // the user moved, and took it for one that was no message at all: never learned.
    let (t, dirs, model, _) = maildirs_model_and_spam();
    let ham = hams(1).remove(0);
    let log = t.path().join("log");
    let daemon = daemon_command(&model, &dirs, &["--learn-from-moves", "--rescan", "1"]);
    let mut daemon = start_command(with_open_file_limit(&daemon, "-Sn 10"), &log);
    // The user moves a message into spam.
    std::fs::write(dirs.spam.join("cur/1.moved.test:2,S"), &ham).unwrap();
    wait_until("the move to be learned", || {
        said(&log, "as spam (moved by the user)") == 1
    });
    sigterm_and_wait_for_exit(&mut daemon);
}

/// `daemon` run by `sh` under `ulimit LIMIT` (`-n 10`: soft and hard, `-Sn 10`: soft), with
/// descriptors 3 to 9 closed first, so none of its few is taken by what the test inherited.
fn with_open_file_limit(daemon: &std::process::Command, limit: &str) -> std::process::Command {
    let close: Vec<String> = (3..10).map(|fd| format!("{fd}>&-")).collect();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(format!(
        "exec {}; ulimit {limit} && exec \"$0\" \"$@\"",
        close.join(" ")
    ));
    cmd.arg(daemon.get_program()).args(daemon.get_args());
    cmd
}

/// The path of program `name` on `PATH`, if there is one.
fn which(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}
