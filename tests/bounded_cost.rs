//! The cost of hostile messages in `classify`, `serve` and `learn`, each run as a child process under
//! rlimits (util-linux `prlimit`): 64 MiB of address space (`serve`: 64 MiB resident under a
//! looser address-space limit, see [`SERVE_ADDRESS_SPACE`]) and 1 s of CPU time, as the
//! reliability issue asks, for a URL with 32,000 host labels (once about 950 MB), a 100 MB
//! message and a MIME tree nested 3,000 levels. CPU
//! time rather than wall-clock time keeps the bound independent of the machine's load; every
//! wait on the child also has a generous wall-clock limit so nothing can hang. (`filter` has
//! its own test with its streaming.)

use crate::util::{
    Served, TestDir, address_space, copy_of_trained_model, limited_spamsort, peak_rss,
    sigterm_and_wait, trained_model,
};
use spamsort::SpamFilter;
use spamsort::corpus::MAX_MESSAGE_BYTES;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// The memory bound: 64 MiB of address space (and so of resident memory).
const MEMORY: u64 = 64 * 1024 * 1024;
/// The server's address-space limit: [`MEMORY`] and 16 MiB more, a backstop against runaway
/// allocation, while the bound itself is on its resident memory ([`MEMORY`], checked by
/// [`assert_server_bounded`]). A server's address space is mostly reservations it never
/// touches: the debug binary's mappings (14 MiB), its threads' stacks, and mimalloc's pages
/// (4 MiB for a large object). With the test model, a 9 MB CHECK peaks at 29 MB resident and
/// 72 MB of address space under limits of 70-88 MiB; under limits of 61-63 MiB a 4 MiB page
/// no longer fits and the allocation fails, while 56-60 MiB and 64 MiB pass: where the limit
/// falls between pages decides it, not how much memory the server uses. Under 96 MiB mimalloc
/// reserves more (98 MB), and once left no room to start a worker thread. So the backstop
/// sits above the peak and below that.
const SERVE_ADDRESS_SPACE: u64 = MEMORY + 16 * 1024 * 1024;
/// The time bound: one second of CPU time.
const CPU_SECONDS: u64 = 1;
/// Generous wall-clock limit for anything that waits on a child.
const WALL: Duration = Duration::from_secs(120);

/// A message whose body holds one URL of `labels` host labels (`http://a.a.a....com/`).
fn url_with_host_labels(labels: usize) -> Vec<u8> {
    format!(
        "From: a@example.org\nTo: b@example.org\nSubject: one link\n\nhttp://{}com/\n",
        "a.".repeat(labels - 1)
    )
    .into_bytes()
}

/// A plain-text message of `size` bytes.
fn message_of_size(size: usize) -> Vec<u8> {
    let mut m = b"From: a@example.org\nTo: b@example.org\nSubject: big\n\n".to_vec();
    let line = b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n";
    while m.len() + line.len() <= size {
        m.extend_from_slice(line);
    }
    m.resize(size, b'.');
    m
}

/// A message of multipart/mixed parts nested `levels` deep around one text part, every
/// boundary closed.
fn nested_mime(levels: usize) -> Vec<u8> {
    let mut m = String::from("From: a@example.org\nSubject: nested\nMIME-Version: 1.0\n");
    for i in 0..levels {
        m.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=\"b{i}\"\n\n--b{i}\n"
        ));
    }
    m.push_str("Content-Type: text/plain\n\ncheap pills deep inside\n");
    for i in (0..levels).rev() {
        m.push_str(&format!("--b{i}--\n"));
    }
    m.into_bytes()
}

/// A 2 MB message of multipart parts that each declare a new boundary that never comes:
/// mail-parser scans to the end for every one (this once took minutes of CPU).
fn unclosed_boundaries() -> Vec<u8> {
    let mut m = String::from("Content-Type: multipart/mixed; boundary=b\n\n");
    for i in 0..40_000 {
        m.push_str(&format!(
            "--b\nContent-Type: multipart/mixed; boundary=c{i}\n\n"
        ));
    }
    m.into_bytes()
}

/// 2 MB of one-line header fields (300,000 of them): mail-parser keeps a record of each
/// (this once peaked at 126 MB).
fn header_flood() -> Vec<u8> {
    let mut m = "X: a b\n".repeat(300_000);
    m.push_str("\nbody\n");
    m.into_bytes()
}

/// A Subject folded over 600,000 lines (1.8 MB): mail-parser keeps a record of each (this once
/// peaked at 88 MB, and a `filter` under 100 MB of address space aborted).
fn folded_field() -> Vec<u8> {
    format!("Subject: x\n{}\nbody\n", " y\n".repeat(600_000)).into_bytes()
}

/// A `To:` list of 250,000 addresses on one line (2 MB): mail-parser parses an address list
/// into many times its bytes.
fn one_line_address_list() -> Vec<u8> {
    format!(
        "From: x@y\nTo: {}\nSubject: s\n\nbody\n",
        "a@b.cd, ".repeat(250_000)
    )
    .into_bytes()
}

/// 30 MIME parts, each with a parameter list of 60 KB (1.8 MB): each within a field's cap.
fn parts_with_long_headers() -> Vec<u8> {
    let part = format!(
        "--q\nContent-Type: text/plain; {}\n\ntext\n",
        "x=y; ".repeat(12_000)
    );
    format!(
        "Content-Type: multipart/mixed; boundary=q\n\n{}--q--\n",
        part.repeat(30)
    )
    .into_bytes()
}

/// [`folded_field`] as an attached message: the message's body, a part, and a part encoded
/// in base64 (which mail-parser decodes and parses apart).
fn attached_folded_fields() -> [Vec<u8>; 3] {
    let folded = format!("Subject: x\n{}\nbody\n", " y\n".repeat(600_000));
    let encoded = base64(format!("Subject: x\n{}\nbody\n", " y\n".repeat(450_000)).as_bytes());
    let lines: Vec<&str> = (0..encoded.len())
        .step_by(76)
        .map(|i| &encoded[i..(i + 76).min(encoded.len())])
        .collect();
    let mixed = |part: &str| {
        format!("Content-Type: multipart/mixed; boundary=b\n\n--b\n{part}\n--b--\n").into_bytes()
    };
    [
        format!("Content-Type: message/rfc822\n\n{folded}").into_bytes(),
        mixed(&format!("Content-Type: message/rfc822\n\n{folded}")),
        mixed(&format!(
            "Content-Type: message/rfc822\nContent-Transfer-Encoding: base64\n\n{}",
            lines.join("\n")
        )),
    ]
}

/// `bytes` in base64 (RFC 4648), on one line.
fn base64(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0_u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                char::from(DIGITS[(n >> (18 - 6 * i) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
}

/// Runs `classify` on `message` (written to a file) under the rlimits; asserts it gave a
/// verdict, and was neither out of memory nor killed.
fn assert_classify_bounded(message: &[u8]) {
    let t = TestDir::new();
    let path = t.write("message.eml", message);
    let mut cmd = assert_cmd::Command::from_std(limited_spamsort(MEMORY, CPU_SECONDS));
    let out = cmd
        .arg("classify")
        .arg("--model")
        .arg(trained_model())
        .arg(&path)
        .timeout(WALL)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Exit 0 spam, 1 ham, 2 unsure; 3 or a signal (SIGXCPU, abort on allocation) fails.
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "classify under {MEMORY} bytes / {CPU_SECONDS} s CPU: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("probability"), "{stdout}\n{stderr}");
}

#[test]
fn classify_of_url_with_32000_host_labels_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&url_with_host_labels(32_000));
}

#[test]
fn classify_of_100_mb_message_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&message_of_size(100 * 1024 * 1024));
}

#[test]
fn classify_of_mime_tree_nested_3000_levels_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&nested_mime(3000));
}

#[test]
fn classify_of_40000_unclosed_boundary_declarations_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&unclosed_boundaries());
}

#[test]
fn classify_of_300000_header_fields_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&header_flood());
}

#[test]
fn classify_of_a_field_folded_over_600000_lines_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&folded_field());
}

#[test]
fn classify_of_an_attached_message_with_a_field_folded_over_600000_lines_stays_under_64_mb_and_1_s()
{
    let sample = b"hello world, a test of the encoder!";
    let expected = "aGVsbG8gd29ybGQsIGEgdGVzdCBvZiB0aGUgZW5jb2RlciE=";
    assert_eq!(base64(sample), expected, "the test's own base64");
    for message in attached_folded_fields() {
        assert_classify_bounded(&message);
    }
}

#[test]
fn classify_of_a_2_mb_address_list_on_one_line_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&one_line_address_list());
}

#[test]
fn classify_of_30_parts_with_60_kb_headers_stays_under_64_mb_and_1_s() {
    assert_classify_bounded(&parts_with_long_headers());
}

/// `serve` with the sample model under the rlimits. Two workers: every worker thread reserves
/// its stack (and the allocator its arenas) in the address space, and the default 16 do not
/// fit in 64 MiB of it, however little memory they touch.
fn limited_server() -> Served {
    Served::start(
        limited_spamsort(SERVE_ADDRESS_SPACE, CPU_SECONDS),
        trained_model(),
        &["--max-connections", "2"],
    )
}

/// Sends `command` with `message` on one connection while reading the answer (a server that
/// echoes a large message cannot stall on a client that is still sending).
fn spamd(served: &Served, command: &str, message: Arc<Vec<u8>>) -> Vec<u8> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", served.port.parse::<u16>().unwrap())).unwrap();
    stream.set_read_timeout(Some(WALL)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.set_write_timeout(Some(WALL)).unwrap();
    let head = format!(
        "{command} SPAMC/1.5\r\nContent-length: {}\r\nUser: tester\r\n\r\n",
        message.len()
    );
    let sending = std::thread::spawn(move || {
        // The server may answer and close before taking all of it.
        let _ = writer.write_all(head.as_bytes());
        let _ = writer.write_all(&message);
        let _ = writer.shutdown(std::net::Shutdown::Write);
    });
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    sending.join().unwrap();
    answer
}

/// The head of a spamd answer (up to the blank line), as text.
fn answer_head(answer: &[u8]) -> String {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |i| i + 4);
    String::from_utf8_lossy(&answer[..end]).into_owned()
}

/// Stops the server with SIGTERM and checks it ran under the rlimits, stayed within the
/// memory bound and was not killed (SIGXCPU past its CPU second, or an abort on a failed
/// allocation).
fn assert_server_bounded(mut served: Served) {
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", served.child.id())).unwrap();
    for (name, value) in [
        ("Max address space", SERVE_ADDRESS_SPACE),
        ("Max cpu time", CPU_SECONDS),
    ] {
        let line = limits.lines().find(|l| l.starts_with(name)).unwrap();
        let soft = line[name.len()..].split_whitespace().next().unwrap();
        assert_eq!(soft, value.to_string(), "{line}");
    }
    let peak = peak_rss(served.child.id());
    assert!(peak < MEMORY, "serve peaked at {peak} bytes resident");
    sigterm_and_wait(&mut served.child);
}

#[test]
fn serve_answers_100_mb_message_under_64_mb_and_1_s() {
    let message = Arc::new(message_of_size(100 * 1024 * 1024));
    let served = limited_server();
    // Over the default --max-size: answered unclassified, never held whole.
    let check = spamd(&served, "CHECK", Arc::clone(&message));
    assert!(
        answer_head(&check).starts_with("SPAMD/1.5 0 EX_OK\r\n"),
        "{}",
        answer_head(&check)
    );
    assert_server_bounded(served);
    // PROCESS gives it back byte for byte.
    let served = limited_server();
    let process = spamd(&served, "PROCESS", Arc::clone(&message));
    let head = answer_head(&process);
    assert!(head.starts_with("SPAMD/1.5 0 EX_OK\r\n"), "{head}");
    assert!(process[head.len()..] == message[..], "PROCESS echo differs");
    assert_server_bounded(served);
}

/// Sends `message` with a classifying `command` to a server under the rlimits; asserts it was
/// classified and the server stayed within the bounds.
fn assert_serve_classifies_bounded(command: &str, message: Vec<u8>) {
    let served = limited_server();
    let answer = spamd(&served, command, Arc::new(message));
    let head = answer_head(&answer);
    assert!(head.contains("Spam: "), "{head}");
    assert_server_bounded(served);
}

#[test]
fn serve_classifies_9_mb_message_under_64_mb_and_1_s() {
    // Under the default --max-size (10 MiB), so held and tokenized (its first 2 MiB).
    assert_serve_classifies_bounded("CHECK", message_of_size(9 * 1024 * 1024));
}

#[test]
fn serve_classifies_mime_tree_nested_3000_levels_under_64_mb_and_1_s() {
    assert_serve_classifies_bounded("SYMBOLS", nested_mime(3000));
}

#[test]
fn serve_classifies_url_with_32000_host_labels_under_64_mb_and_1_s() {
    assert_serve_classifies_bounded("REPORT", url_with_host_labels(32_000));
}

/// `file`, written with `head` and made `size` bytes long (sparse: zeros after `head`, which
/// take no disk).
pub fn sparse_message(t: &TestDir, file: &str, head: &str, size: u64) -> std::path::PathBuf {
    let path = t.write(file, head.as_bytes());
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(size).unwrap();
    path
}

/// Regression (auditC repro-7): a TREC index was held as a list of its entries, a path or an
/// error per line: about a hundred times the index's bytes (classify of a 32 MiB index of
/// short lines peaked at 3.3 GB). Its entries are parsed as they are read, so a 16 MiB index
/// costs its 16 MiB of text: given as spam, the ham its second line lists refuses it at once.
#[test]
fn train_of_a_16_mb_trec_index_of_short_lines_stays_under_64_mb() {
    let t = TestDir::new();
    t.write("m", b"Subject: hi\n\nhello\n");
    let mut index = b"spam m\n".to_vec();
    index.extend(b"ham m\n".repeat((16 << 20) / 6));
    let index = t.write("index", &index);
    let mut cmd = assert_cmd::Command::from_std(limited_spamsort(2 * MEMORY, 20));
    let out = cmd
        .args(["train", "--spam"])
        .arg(&index)
        .arg("--ham")
        .arg(crate::util::sample("ham"))
        .arg("--model")
        .arg(t.path().join("model"))
        .timeout(WALL)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("lists") && stderr.contains("as ham"),
        "{stderr}"
    );
}

#[test]
fn learn_of_a_96_mb_maildir_stays_under_64_mb() {
    // Review: learn held every message of a run whole (a 188 MB maildir peaked at 1.2 GB).
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let maildir = t.maildir("md");
    for i in 0..12 {
        let head = format!("Subject: big {i}\n\nhello number{i}x\n");
        sparse_message(&t, &format!("md/cur/{i}:2,S"), &head, 8 << 20);
    }
    // Reading and tokenizing 96 MB (of zeros, mostly) is no CPU second for a debug build: a
    // backstop only.
    let mut cmd = assert_cmd::Command::from_std(limited_spamsort(MEMORY, 20));
    let out = cmd
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg(&maildir)
        .timeout(WALL)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("learned 12 message(s)"), "{stderr}");
}

#[test]
fn learn_of_a_message_over_the_limit_of_a_message_file_learns_its_head_once() {
    // Regression: `learn` refused a message over 64 MiB, as a file or on standard input, which
    // `classify` and `filter` judge by its head: a user's correction of such a spam was lost.
    // Now its head is learned (what classifying it reads), held alone (under the memory
    // bound the whole message would not fit in), and "learn once" knows it again however it
    // comes.
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = SpamFilter::load(&model).unwrap();
    let big = sparse_message(
        &t,
        "big.eml",
        "Subject: huge offer\n\ncheap pills zqxhugeword\n",
        MAX_MESSAGE_BYTES + 1,
    );
    let learn = |args: &[&str], stdin: bool| {
        let limited = limited_spamsort(MEMORY, 20);
        let mut cmd = if stdin {
            // Through a pipe, as a mail server would give it (never held by the test); the
            // pipeline fails if `cat` is cut off before the end.
            let mut cmd = assert_cmd::Command::new("bash");
            cmd.args(["-c", "set -o pipefail; cat \"$0\" | \"$@\""])
                .arg(&big)
                .arg(limited.get_program())
                .args(limited.get_args());
            cmd
        } else {
            assert_cmd::Command::from_std(limited)
        };
        cmd.arg("learn").args(args).arg("--model").arg(&model);
        if !stdin {
            cmd.arg(&big);
        }
        let out = cmd.timeout(WALL).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?} {stdin}: {stderr}");
        stderr
    };
    let stderr = learn(&["--spam"], false);
    assert!(stderr.contains("learned 1 message(s) as spam"), "{stderr}");
    let once = std::fs::read(&model).unwrap();
    let stderr = learn(&["--spam"], true);
    assert!(
        stderr.contains("learned 0 message(s) as spam, 1 already learned"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&model).unwrap(), once, "learned twice");
    let stderr = learn(&["--ham"], true);
    assert!(stderr.contains("learned 1 message(s) as ham"), "{stderr}");
    let stderr = learn(&["--unlearn"], false);
    assert!(stderr.contains("unlearned 1 message(s)"), "{stderr}");
    // Undone exactly, as unlearning a message of any size is.
    let after = SpamFilter::load(&model).unwrap();
    assert_eq!(after.summary().messages, before.summary().messages);
    crate::learning::assert_same_nb_counts(&before, &after);
    let stderr = learn(&["--unlearn"], true);
    assert!(
        stderr.contains("unlearned 0 message(s), 1 not learned before"),
        "{stderr}"
    );
}

#[test]
fn stdin_over_the_limit_is_held_once_not_three_times_and_read_to_its_end() {
    // Review: standard input over a limit was read into a buffer grown by doubling (`learn -`
    // of 64 MiB and a byte peaked at 197 MiB resident, `filter --max-size 64MiB` too), and
    // `learn -` left the rest unread, so the mail server writing it got EPIPE.
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let limit = MAX_MESSAGE_BYTES;
    // The limit and 1 MiB: more than a pipe's buffer holds past the point where reading stops.
    let mut message = b"Subject: big\n\n".to_vec();
    message.resize(usize::try_from(limit).unwrap() + (1 << 20), b'x');
    let message = Arc::new(message);
    let run = |args: &[&str]| {
        let mut child = std::process::Command::new(crate::util::spamsort_bin())
            .args(args)
            .arg("--model")
            .arg(&model)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let input = Arc::clone(&message);
        let (written, close) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let writer = std::thread::spawn(move || {
            written.0.send(stdin.write_all(&input)).unwrap();
            // Kept open until the peak is read: the command, reading to the end, waits for
            // more and so is still there to be measured.
            let _ = close.1.recv();
        });
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).map(|_| out)
        });
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).map(|_| text)
        });
        let written = written.1.recv_timeout(WALL).unwrap();
        // All but what the pipe holds was read: past the limit.
        let peak = written.is_ok().then(|| peak_rss(child.id()));
        close.0.send(()).unwrap();
        writer.join().unwrap();
        let code = child.wait().unwrap().code();
        let (stdout, stderr) = (
            reader.join().unwrap().unwrap(),
            errors.join().unwrap().unwrap(),
        );
        assert!(
            written.is_ok(),
            "{args:?}: writing stdin: {written:?}; {stderr}"
        );
        let peak = peak.unwrap();
        assert!(
            peak < limit + 32 * 1024 * 1024,
            "{args:?}: peak resident {peak} bytes for a limit of {limit}"
        );
        (code, stdout, stderr)
    };
    // `learn -` holds only the head it learns (see
    // `learn_of_a_message_over_the_limit_of_a_message_file_learns_its_head_once`).
    let (code, _, stderr) = run(&["learn", "--spam", "-"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("learned 1 message(s) as spam"), "{stderr}");
    let max_size = limit.to_string();
    let (code, stdout, stderr) = run(&["filter", "--max-size", &max_size]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout == *message,
        "the message did not pass through unchanged"
    );
    assert!(stderr.contains("passed through unchanged"), "{stderr}");
}

#[test]
fn a_short_message_on_a_pipe_takes_no_address_space_for_the_size_limit() {
    // Review: standard input on a pipe was read into room reserved for its whole limit up
    // front (`filter --max-size 50MB`: 50 MB of address space for every message, however
    // short), so under a mail server's address-space limit (prlimit --as of 68-75 MiB with the
    // test model) a 2 KB or 5 MB message made the filter abort on an allocation failure,
    // writing nothing, where it had marked it.
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let message = b"From: a@example.com\nSubject: short\n\nA short message.\n";
    // Its address space once it waits for the rest of standard input (the message is there,
    // the pipe still open): after every reservation a read can make.
    let waiting = |extra: &[&str]| {
        let mut child = std::process::Command::new(crate::util::spamsort_bin())
            .arg("filter")
            .args(extra)
            .arg("--model")
            .arg(&model)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(message).unwrap();
        let pid = child.id();
        let started = std::time::Instant::now();
        let wchan = || std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        while !wchan().contains("pipe_read") && !wchan().contains("pipe_wait") {
            assert!(started.elapsed() < WALL, "never waited on standard input");
            std::thread::sleep(Duration::from_millis(20));
        }
        let size = address_space(pid);
        drop(stdin);
        let mut out = Vec::new();
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        assert!(child.wait().unwrap().success());
        assert!(
            out.ends_with(b"\nA short message.\n") && out.len() > message.len(),
            "marked: {}",
            String::from_utf8_lossy(&out)
        );
        size
    };
    let bare = waiting(&[]);
    let limit = (50 * 1024 * 1024).to_string();
    let with_limit = waiting(&["--max-size", &limit]);
    assert!(
        with_limit < bare + 8 * 1024 * 1024,
        "address space {with_limit} with --max-size {limit}, {bare} without"
    );
}

/// Regression (auditE repro-2): `eval --online` held every message an index lists whole
/// before tokenizing any (an index of 20 lines naming one 40 MB message peaked at 0.8 GB;
/// one of 24 naming an 8 MiB one at 200 MB). The messages are tokenized as they are read,
/// only their tokens kept, so memory is bounded by a window of messages (four chunks, each at
/// least one of these 8 MiB messages), not by their sum: the debug build peaks at 64 MB
/// resident, so its address space is limited to twice [`MEMORY`], far below the sum.
#[test]
fn eval_online_of_an_index_naming_one_8_mib_message_24_times_stays_within_a_window() {
    let t = TestDir::new();
    sparse_message(&t, "big", "Subject: big\n\nhello there\n", 8 << 20);
    t.write("s", b"Subject: hi\n\nspam spam\n");
    let mut index = b"spam s\n".to_vec();
    index.extend(b"ham big\n".repeat(24));
    let index = t.write("index", &index);
    let mut cmd = assert_cmd::Command::from_std(limited_spamsort(2 * MEMORY, 20));
    let out = cmd
        .args([
            "eval",
            "--format",
            "csv",
            "--models",
            "multinomial-nb",
            "--online",
        ])
        .arg(&index)
        .timeout(WALL)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("multinomial-nb,"),
        "{stderr}"
    );
}
