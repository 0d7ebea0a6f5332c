//! Small helper kit for the integration tests: temporary directories, mailbox builders, paths
//! to the committed fixtures, and the `spamsort` binary.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A path inside the repository.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The committed sample corpus.
pub fn sample(class: &str) -> PathBuf {
    repo_path("corpus/sample").join(class)
}

/// A temporary directory removed on drop.
pub struct TestDir {
    dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> Self {
        TestDir {
            dir: tempfile::tempdir().expect("create temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `bytes` to `rel` (creating parent directories) and returns the full path.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Creates an empty maildir (`cur`, `new`, `tmp`) at `rel`.
    pub fn maildir(&self, rel: &str) -> PathBuf {
        let path = self.path().join(rel);
        for sub in ["cur", "new", "tmp"] {
            std::fs::create_dir_all(path.join(sub)).unwrap();
        }
        path
    }
}

/// A minimal message with the given subject and body, LF line endings.
pub fn message(subject: &str, body: &str) -> Vec<u8> {
    format!("From: a@example.org\nTo: b@example.org\nSubject: {subject}\n\n{body}\n").into_bytes()
}

/// The same bytes with every bare LF turned into CRLF.
pub fn to_crlf(lf: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lf.len() + lf.len() / 16);
    let mut prev = 0u8;
    for &b in lf {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

/// The `spamsort` binary built for this test run.
pub fn spamsort() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("spamsort").expect("spamsort binary")
}

/// What `cmd` writes on stdout, once it has run and succeeded (the test fails otherwise).
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> Vec<u8> {
    cmd.assert().success().get_output().stdout.clone()
}

/// The path of the `spamsort` binary built for this test run.
pub fn spamsort_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin!("spamsort").to_path_buf()
}

/// The `spamsort` binary run by util-linux's `prlimit` with at most `address_space` bytes of
/// virtual memory and `cpu_seconds` seconds of CPU time (`unsafe` is denied, so the tests
/// cannot call setrlimit themselves). A child over the memory limit fails to allocate and
/// aborts; one over the CPU limit is killed by SIGXCPU. CPU time, unlike wall-clock time, does
/// not depend on what else the machine is running.
pub fn limited_spamsort(address_space: u64, cpu_seconds: u64) -> Command {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={address_space}"))
        .arg(format!("--cpu={cpu_seconds}"))
        .arg("--")
        .arg(spamsort_bin());
    cmd
}

/// The peak resident memory (VmHWM) of a running process, in bytes.
pub fn peak_rss(pid: u32) -> u64 {
    proc_status_bytes(pid, "VmHWM:")
}

/// The address space (VmSize) of a running process, in bytes.
pub fn address_space(pid: u32) -> u64 {
    proc_status_bytes(pid, "VmSize:")
}

/// A `/proc/PID/status` field given in kB (`field` with its colon), in bytes.
fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    kb * 1024
}

/// Whether transparent huge pages may back a running process's memory (`THP_enabled` of
/// /proc/PID/status, Linux 5.0 on).
pub fn transparent_huge_pages(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = status.lines().find_map(|l| l.strip_prefix("THP_enabled:"));
    field.expect("THP_enabled in /proc/PID/status").trim() != "0"
}

/// `spamsort serve` on an ephemeral port of 127.0.0.1, killed on drop.
pub struct Served {
    pub child: Child,
    pub port: String,
    /// Its log after the `listening on` line, collected as it comes.
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Served {
    /// Runs `command` (the spamsort binary, possibly behind a wrapper such as
    /// [`limited_spamsort`]) with `serve --listen 127.0.0.1:0 --model MODEL EXTRA...` and waits
    /// until it listens.
    pub fn start(mut command: Command, model: &Path, extra: &[&str]) -> Served {
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0", "--model"])
            .arg(model)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let port = loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "serve exited early"
            );
            if let Some(addr) = line.trim().split("listening on ").nth(1) {
                break addr.rsplit(':').next().unwrap().to_string();
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let collected = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
                collected.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Served { child, port, log }
    }
}

/// Starts `spamsort serve --model MODEL EXTRA...` and waits until it listens.
pub fn serve(model: &Path, extra: &[&str]) -> Served {
    Served::start(Command::new(spamsort_bin()), model, extra)
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `--spam SAMPLE_SPAM --ham SAMPLE_HAM` added to a command.
pub fn with_sample(cmd: &mut assert_cmd::Command) -> &mut assert_cmd::Command {
    cmd.arg("--spam")
        .arg(sample("spam"))
        .arg("--ham")
        .arg(sample("ham"))
}

/// A model trained once (per test run) on the sample corpus, shared read-only by tests.
/// Tests that change a model copy it first ([`copy_of_trained_model`]).
pub fn trained_model() -> &'static Path {
    static MODEL: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, path) = MODEL.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sample.spamsort");
        with_sample(spamsort().arg("train"))
            .arg("--active")
            .arg("fusion")
            .arg("--model")
            .arg(&path)
            .assert()
            .success();
        (dir, path)
    });
    path
}

/// A private copy of [`trained_model`] inside `dir`.
pub fn copy_of_trained_model(dir: &TestDir) -> PathBuf {
    let path = dir.path().join("model.spamsort");
    std::fs::copy(trained_model(), &path).unwrap();
    path
}

/// The message files of one class (`spam` or `ham`) of the sample corpus, sorted.
pub fn sample_class_files(class: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(sample(class))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// A TREC index in `t` (`mixed.index`) listing the sample's first spam and first ham file,
/// labeled so; with the spam file.
pub fn mixed_trec_index(t: &TestDir) -> (PathBuf, PathBuf) {
    let spam = sample_class_files("spam").remove(0);
    let ham = sample_class_files("ham").remove(0);
    let index = t.write(
        "mixed.index",
        format!("spam {}\nham {}\n", spam.display(), ham.display()).as_bytes(),
    );
    (index, spam)
}

/// Every message file of the sample corpus, spam first.
pub fn sample_files() -> Vec<PathBuf> {
    let mut files = sample_class_files("spam");
    files.extend(sample_class_files("ham"));
    files
}

/// Sends SIGTERM to a child and asserts it exits successfully.
pub fn sigterm_and_wait(child: &mut std::process::Child) {
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "exit after SIGTERM: {status:?}");
}

/// Creates a FIFO (named pipe) at `path`, which blocks whoever opens it for reading until a
/// writer comes (none ever does in these tests).
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Rewrites `dst` in place with the bytes of `src` as `cp` does: truncated, then written
/// (in pieces, so readers also meet it half written).
pub fn copy_in_place(src: &[u8], dst: &Path) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(dst)
        .unwrap();
    for piece in src.chunks(64 * 1024) {
        file.write_all(piece).unwrap();
    }
}

/// True if `out` is `message` with nothing but whole `X-Spam-*` header fields (and their
/// folded lines) put before it: what `filter` and spamd's PROCESS give for a message without an
/// mbox `From ` line.
pub fn is_message_marked_or_unchanged(out: &[u8], message: &[u8]) -> bool {
    let Some(added) = out.strip_suffix(message) else {
        return false;
    };
    added.split_inclusive(|&b| b == b'\n').all(|line| {
        (line.starts_with(b"X-Spam-") || line.starts_with(b"\t")) && line.ends_with(b"\n")
    })
}

/// A spamd request: `command`, a content length, a user, `extra_headers` (each ending in
/// CRLF), then `message`.
pub fn spamd_request(command: &str, extra_headers: &str, message: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "{command} SPAMC/1.5\r\nContent-length: {}\r\nUser: tester\r\n{extra_headers}\r\n",
        message.len()
    )
    .into_bytes();
    r.extend_from_slice(message);
    r
}

/// A child process (a daemon, a server) killed and reaped if its test ends without stopping
/// it: an assertion that fails must not leave it running (it keeps the test's standard output
/// open, so `cargo test | tail` would wait for it).
pub struct Running(pub Child);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Sends `request` on `stream`, half-closes, reads the whole answer (within 30 s a read).
pub fn spamd_exchange(mut stream: std::net::TcpStream, request: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    // The server may answer (an error) and stop reading before all of it is sent.
    let _ = stream.write_all(request);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

/// The most bytes the kernel may buffer on a loopback TCP connection, both ways: the largest
/// receive buffer plus the largest send buffer (tcp_rmem and tcp_wmem's maxima).
pub fn loopback_buffer_bytes() -> usize {
    let max = |name: &str, default: usize| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}"))
            .ok()
            .and_then(|s| s.split_whitespace().last()?.parse().ok())
            .unwrap_or(default)
    };
    max("tcp_rmem", 32 << 20) + max("tcp_wmem", 4 << 20)
}
