//! Running as a systemd service: `serve` and `daemon` send READY=1 to a fake NOTIFY_SOCKET (a
//! unix datagram socket the test binds) once they listen or watch, and STOPPING=1 on SIGTERM;
//! `spamsort man` prints spamsort(1) with a section for every subcommand.

use crate::util::{Running, TestDir, sigterm_and_wait, spamsort, spamsort_bin, trained_model};
use std::io::{Read, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A fake service manager's notify socket in `t`, with a generous receive bound so that a
/// notice that never comes fails the test instead of hanging it.
fn notify_socket(t: &TestDir) -> (UnixDatagram, std::path::PathBuf) {
    let path = t.path().join("notify.sock");
    let socket = UnixDatagram::bind(&path).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    (socket, path)
}

/// The next datagram on the notify socket, as text.
fn next_notice(socket: &UnixDatagram) -> String {
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).expect("a notice within 60 s");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn serve_notifies_ready_once_listening_and_stopping_on_sigterm() {
    // Regression: the socket took the umask's mode, with no way to open it to the group that
    // runs spamc (spamc then passed mail through unfiltered).
    let t = TestDir::new();
    let (notices, notify_path) = notify_socket(&t);
    let spamd_path = t.path().join("spamd.sock");
    let mut running = Running(
        Command::new(spamsort_bin())
            .args(["serve", "--model"])
            .arg(trained_model())
            .arg("--socket")
            .arg(&spamd_path)
            .args(["--socket-mode", "0660"])
            .env("NOTIFY_SOCKET", &notify_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert_eq!(next_notice(&notices), "READY=1\n");
    // The socket has the mode asked for (spamc run by the group can connect), whatever the
    // umask left it.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&spamd_path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o660);
    // Ready means listening: a PING right after the notice is answered.
    let mut stream = UnixStream::connect(&spamd_path).expect("listening when READY=1 comes");
    stream.write_all(b"PING SPAMC/1.5\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("SPAMD/1.5 0 PONG"), "{answer}");
    sigterm_and_wait(&mut running.0);
    assert_eq!(next_notice(&notices), "STOPPING=1\n");
}

#[test]
fn daemon_notifies_ready_once_watching() {
    let t = TestDir::new();
    let (notices, notify_path) = notify_socket(&t);
    let mut running = Running(
        Command::new(spamsort_bin())
            .args(["daemon", "--model"])
            .arg(trained_model())
            .arg("--inbox")
            .arg(t.maildir("inbox"))
            .arg("--spam")
            .arg(t.path().join("spam"))
            .arg("--ham")
            .arg(t.path().join("ham"))
            .env("NOTIFY_SOCKET", &notify_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert_eq!(next_notice(&notices), "READY=1\n");
    sigterm_and_wait(&mut running.0);
    assert_eq!(next_notice(&notices), "STOPPING=1\n");
}

#[test]
fn man_page_has_a_spamsort_header_and_a_section_for_every_subcommand() {
    let out = spamsort().arg("man").assert().success();
    let page = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(page.contains(".TH SPAMSORT 1"), "{page}");
    // The subcommands as `--help` lists them, so that a new one without a section fails here.
    let help = spamsort().arg("--help").assert().success();
    let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&c| c != "help")
        .collect();
    assert!(commands.len() >= 15, "{commands:?} from {help}");
    for command in commands {
        let heading = format!(".SH \"SPAMSORT {}\"", command.to_uppercase());
        assert!(page.contains(&heading), "{heading} missing");
        assert!(
            page.contains(&format!("spamsort {command}")),
            "synopsis of {command} missing"
        );
    }
}
