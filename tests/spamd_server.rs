//! The spamd server in process, driven over raw sockets on 127.0.0.1: every command, TELL
//! gating and persistence, malformed and hostile input, oversize messages, Unix sockets and
//! shutdown. (tests/cli_serve.rs drives the real spamc client against the binary.)

use crate::util::{
    TestDir, copy_of_trained_model, loopback_buffer_bytes, sample_files, spamd_exchange,
    spamd_request as request, to_crlf, trained_model,
};
use spamsort::filter::policy::{HeaderStyle, Policy, score};
use spamsort::filter::shared::SharedFilter;
use spamsort::models::ModelKind;
use spamsort::spamd::{Address, Server, ServerConfig, ServerHandle};
use spamsort::{Label, SpamFilter, Verdict};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A server on an ephemeral port, stopped and joined on drop.
struct Running {
    address: Address,
    handle: ServerHandle,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(t) = self.thread.take() {
            t.join().unwrap().unwrap();
        }
    }
}

fn start_at(model: &Path, address: Address, config: ServerConfig) -> Running {
    let filter = Arc::new(SharedFilter::load(model, Policy::default()).unwrap());
    let server = Server::bind(&[address], filter, config).unwrap();
    let address = server.addresses()[0].clone();
    let handle = server.handle();
    let thread = Some(std::thread::spawn(move || server.run()));
    Running {
        address,
        handle,
        thread,
    }
}

fn start(model: &Path, config: ServerConfig) -> Running {
    start_at(model, Address::Tcp("127.0.0.1:0".parse().unwrap()), config)
}

fn connect(r: &Running) -> TcpStream {
    let Address::Tcp(addr) = &r.address else {
        unreachable!()
    };
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// Sends `request`, half-closes, reads the whole answer.
fn exchange(r: &Running, request: &[u8]) -> Vec<u8> {
    spamd_exchange(connect(r), request)
}

/// Status line, header lines and body of an answer.
fn split(answer: &[u8]) -> (String, Vec<String>, Vec<u8>) {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |i| i + 4);
    let head = String::from_utf8(answer[..end].to_vec()).unwrap();
    let mut lines = head
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(String::from);
    let status = lines.next().unwrap_or_default();
    (status, lines.collect(), answer[end..].to_vec())
}

fn header<'a>(headers: &'a [String], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find_map(|h| h.strip_prefix(name)?.strip_prefix(": "))
}

#[test]
fn every_command_answers_like_the_filter() {
    let server = start(trained_model(), ServerConfig::default());
    let filter = SpamFilter::load(trained_model()).unwrap();
    assert_eq!(
        exchange(&server, b"PING SPAMC/1.5\r\n\r\n"),
        b"SPAMD/1.5 0 PONG\r\n"
    );
    assert_eq!(exchange(&server, b"SKIP SPAMC/1.5\r\n\r\n"), b"");
    let files = sample_files();
    let (spam, ham) = (&files[0], files.last().unwrap());
    // PROCESS marks the header block and sends the body after it as it came: also where the
    // header block has no blank line (all header, or cut by a line that is not a field).
    let odd: [&[u8]; 2] = [
        b"From: a@example.com\nSubject: only a header block\n",
        b"From: a@example.com\nSubject: no blank line\nthis is not a field\nbody\n",
    ];
    let odd = odd.map(|m| (m.to_vec(), m.to_vec()));
    let read = |path: &std::path::PathBuf| {
        let m = std::fs::read(path).unwrap();
        (to_crlf(&m), m)
    };
    for (crlf, lf) in [read(spam), read(ham)].into_iter().chain(odd) {
        for message in [lf, crlf] {
            let c = filter.classify(&message);
            let expected_spam_line = format!(
                "{} ; {:.1} / 5.0",
                if c.verdict == Verdict::Spam {
                    "True"
                } else {
                    "False"
                },
                score(&c, filter.thresholds().spam())
            );
            let marked = HeaderStyle::default()
                .mark(&message, &c, filter.thresholds())
                .unwrap();
            for command in [
                "CHECK",
                "SYMBOLS",
                "REPORT",
                "REPORT_IFSPAM",
                "PROCESS",
                "HEADERS",
            ] {
                let answer = exchange(&server, &request(command, "", &message));
                let (status, headers, body) = split(&answer);
                assert_eq!(status, "SPAMD/1.5 0 EX_OK", "{command}");
                assert_eq!(
                    header(&headers, "Spam"),
                    Some(&*expected_spam_line),
                    "{command}"
                );
                if command != "CHECK" {
                    let length: usize =
                        header(&headers, "Content-length").unwrap().parse().unwrap();
                    assert_eq!(length, body.len(), "{command}");
                }
                match command {
                    "CHECK" => assert!(body.is_empty()),
                    "PROCESS" => assert_eq!(body, marked),
                    "HEADERS" => {
                        let end = spamsort::filter::stamp::header_block_len(&marked);
                        assert_eq!(body, &marked[..end]);
                    }
                    "SYMBOLS" => {
                        let symbols = String::from_utf8(body).unwrap();
                        assert!(!symbols.is_empty() && !symbols.contains(' '), "{symbols}");
                    }
                    "REPORT" => assert!(String::from_utf8(body).unwrap().contains("required")),
                    "REPORT_IFSPAM" => {
                        assert_eq!(body.is_empty(), c.verdict != Verdict::Spam, "{command}")
                    }
                    _ => unreachable!(),
                }
            }
        }
    }
}

#[test]
fn tell_is_refused_unless_allowed() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = std::fs::read(&model).unwrap();
    let server = start(&model, ServerConfig::default());
    let message = std::fs::read(&sample_files()[0]).unwrap();
    let answer = exchange(
        &server,
        &request("TELL", "Message-class: ham\r\nSet: local\r\n", &message),
    );
    assert!(answer.starts_with(b"SPAMD/1.5 69 TELL commands are not enabled"));
    assert_eq!(std::fs::read(&model).unwrap(), before);
}

#[test]
fn tell_learns_and_forgets_and_survives_a_restart() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let config = ServerConfig {
        allow_tell: true,
        ..ServerConfig::default()
    };
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    let original = SpamFilter::load(&model).unwrap();
    let p = |f: &SpamFilter, kind| f.classify_with(&ham, kind).unwrap().score.p_spam();
    {
        let server = start(&model, config.clone());
        let answer = exchange(
            &server,
            &request("TELL", "Message-class: spam\r\nSet: local\r\n", &ham),
        );
        let (status, headers, _) = split(&answer);
        assert_eq!(status, "SPAMD/1.5 0 EX_OK");
        assert_eq!(header(&headers, "DidSet"), Some("local"));
        // Told again: nothing changes, and the answer says so as spamd's does (no `DidSet`:
        // spamc then prints "Message was already un/learned").
        let answer = exchange(
            &server,
            &request("TELL", "Message-class: spam\r\nSet: local\r\n", &ham),
        );
        let (status, headers, _) = split(&answer);
        assert_eq!(status, "SPAMD/1.5 0 EX_OK");
        assert_eq!(header(&headers, "DidSet"), None, "{headers:?}");
    }
    // Saved: a new load (as after a restart) sees the message learned as spam.
    let learned = SpamFilter::load(&model).unwrap();
    for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
        assert!(p(&learned, kind) > p(&original, kind), "{kind}");
    }
    let server = start(&model, config);
    // Forgetting needs no Message-class: the record of learned messages has it.
    let answer = exchange(&server, &request("TELL", "Remove: local\r\n", &ham));
    assert_eq!(header(&split(&answer).1, "DidRemove"), Some("local"));
    let answer = exchange(&server, &request("TELL", "Remove: local\r\n", &ham));
    let (status, headers, _) = split(&answer);
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert_eq!(
        header(&headers, "DidRemove"),
        None,
        "forgotten already: {headers:?}"
    );
    // Learned as ham again, as in training: the class counts are the original ones (its tokens
    // too rare to be in the trained vocabulary are known now, so scores differ a little).
    let answer = exchange(
        &server,
        &request("TELL", "Message-class: ham\r\nSet: local\r\n", &ham),
    );
    assert_eq!(header(&split(&answer).1, "DidSet"), Some("local"));
    drop(server);
    let relearned = SpamFilter::load(&model).unwrap();
    let d = |f: &SpamFilter, kind| f.classify_with(&ham, kind).unwrap().decision;
    for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
        assert!(d(&relearned, kind) < d(&learned, kind), "{kind}");
        assert!(p(&relearned, kind) < 0.5, "{kind}");
    }
    assert_eq!(relearned.summary().messages, original.summary().messages);
}

#[test]
fn an_empty_message_told_is_refused_and_learns_nothing() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = std::fs::read(&model).unwrap();
    let config = ServerConfig {
        allow_tell: true,
        ..ServerConfig::default()
    };
    let server = start(&model, config);
    for head in ["Message-class: spam\r\nSet: local\r\n", "Remove: local\r\n"] {
        for body in [&b""[..], b"\r\n \r\n"] {
            let answer = exchange(&server, &request("TELL", head, body));
            let (status, _, _) = split(&answer);
            assert!(status.starts_with("SPAMD/1.5 65 "), "{status}");
        }
    }
    drop(server);
    assert_eq!(std::fs::read(&model).unwrap(), before);
}

#[test]
fn malformed_requests_get_protocol_errors_and_the_server_keeps_serving() {
    let server = start(trained_model(), ServerConfig::default());
    let cases: &[&[u8]] = &[
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\x00\x01\x02 binary junk\r\n\r\n",
        b"CHECK SPAMC/1.5\r\nContent-length: banana\r\n\r\n",
        b"CHECK SPAMC/1.5\r\n\r\nno length",
        b"CHECK SPAMC/1.5\r\nContent-length: 100\r\n\r\nonly a little",
        b"PROCESS SPAMC/1.5\r\nContent-length: 5\r\nCompress: zlib\r\n\r\nxxxxx",
    ];
    for case in cases {
        let answer = exchange(&server, case);
        let (status, _, body) = split(&answer);
        assert!(
            status.starts_with("SPAMD/1.5 76 ") || status.starts_with("SPAMD/1.5 69 "),
            "{:?} -> {status}",
            String::from_utf8_lossy(case)
        );
        assert!(body.is_empty());
    }
    let mut long = b"CHECK SPAMC/1.5\r\nX: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 1 << 20));
    assert!(exchange(&server, &long).starts_with(b"SPAMD/1.5 76 line too long"));
    assert_eq!(
        exchange(&server, b"PING SPAMC/1.5\r\n\r\n"),
        b"SPAMD/1.5 0 PONG\r\n"
    );
}

#[test]
fn ping_without_a_blank_line_is_answered_at_once_as_spamd_does() {
    // Clients before SPAMC/1.5 (and monitors such as `check_tcp -s "PING SPAMC/1.2\r\n"`)
    // send the request line alone and wait for the answer without closing their side.
    let server = start(trained_model(), ServerConfig::default());
    for request in [&b"PING SPAMC/1.2\r\n"[..], b"PING SPAMC/1.5\r\n\r\n"] {
        let mut s = connect(&server);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(request).unwrap();
        let started = Instant::now();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).unwrap();
        assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[test]
fn slow_and_silent_clients_time_out_without_holding_the_server() {
    let server = start(
        trained_model(),
        ServerConfig {
            max_connections: 1,
            timeout: Duration::from_millis(500),
            ..ServerConfig::default()
        },
    );
    // Trickles a byte every 100 ms: each read is quick, the whole request is not.
    let mut slow = connect(&server);
    let mut answer = Vec::new();
    for &b in b"CHECK SPAMC/1.5\r\nContent-length: 5\r\nUser: slowloris-slowloris\r\n" {
        if slow.write_all(&[b]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = slow.read_to_end(&mut answer);
    assert!(
        answer.starts_with(b"SPAMD/1.5 79 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    // A client that connects and sends nothing is dropped too; then the one worker is free.
    let silent = connect(&server);
    assert_eq!(
        exchange(&server, b"PING SPAMC/1.5\r\n\r\n"),
        b"SPAMD/1.5 0 PONG\r\n"
    );
    drop(silent);
}

/// A server with `--max-size 1000` and a message 100 times that.
fn small_server_and_big_message() -> (Running, Vec<u8>) {
    let server = start(
        trained_model(),
        ServerConfig {
            max_size: 1000,
            ..ServerConfig::default()
        },
    );
    let mut message = b"Subject: big\r\n\r\n".to_vec();
    message.extend(std::iter::repeat_n(b'x', 100_000));
    (server, message)
}

#[test]
fn oversize_messages_are_answered_unclassified_without_being_held() {
    let (server, message) = small_server_and_big_message();
    let (status, headers, body) = split(&exchange(&server, &request("CHECK", "", &message)));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert_eq!(header(&headers, "Spam"), Some("False ; 0.0 / 5.0"));
    assert!(body.is_empty());
    let (status, headers, body) = split(&exchange(&server, &request("PROCESS", "", &message)));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert_eq!(header(&headers, "Content-length"), Some("100016"));
    assert_eq!(body, message);
    let answer = exchange(&server, &request("HEADERS", "", &message));
    assert!(answer.starts_with(b"SPAMD/1.5 65 "));
}

#[test]
fn unix_socket_and_shutdown() {
    let t = TestDir::new();
    let path = t.path().join("spamd.sock");
    let mut server = start_at(
        trained_model(),
        Address::Unix(path.clone()),
        ServerConfig::default(),
    );
    let mut s = std::os::unix::net::UnixStream::connect(&path).unwrap();
    s.write_all(b"PING SPAMC/1.5\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n");
    server.handle.shutdown();
    server.thread.take().unwrap().join().unwrap().unwrap();
    assert!(!path.exists(), "the socket file is removed on shutdown");
}

#[test]
fn a_socket_in_use_is_refused_and_only_the_servers_own_socket_is_removed() {
    // Regression: a second server on the socket path of a running one removed its socket and
    // bound in its place, cutting the running server off from every new client; and a server
    // stopping removed whatever socket had the path by then, another server's too.
    let t = TestDir::new();
    let path = t.path().join("spamd.sock");
    let ping = |path: &Path| {
        let mut s = std::os::unix::net::UnixStream::connect(path).unwrap();
        s.write_all(b"PING SPAMC/1.5\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).unwrap();
        answer
    };
    let mut first = start_at(
        trained_model(),
        Address::Unix(path.clone()),
        ServerConfig::default(),
    );
    let inode = |path: &Path| std::os::unix::fs::MetadataExt::ino(&path.metadata().unwrap());
    let before = inode(&path);
    let filter = Arc::new(SharedFilter::load(trained_model(), Policy::default()).unwrap());
    let second = Server::bind(
        &[Address::Unix(path.clone())],
        filter,
        ServerConfig::default(),
    );
    assert!(second.is_err(), "a socket in use was taken over");
    assert_eq!(inode(&path), before);
    assert_eq!(ping(&path), b"SPAMD/1.5 0 PONG\r\n");
    // Its path taken by another socket meanwhile: the server leaves that one when it stops.
    std::fs::remove_file(&path).unwrap();
    let other = std::os::unix::net::UnixListener::bind(&path).unwrap();
    first.handle.shutdown();
    first.thread.take().unwrap().join().unwrap().unwrap();
    assert!(path.exists(), "another server's socket was removed");
    drop(other);
    // A stale socket (no one listens) is replaced.
    let _again = start_at(
        trained_model(),
        Address::Unix(path.clone()),
        ServerConfig::default(),
    );
    assert_eq!(ping(&path), b"SPAMD/1.5 0 PONG\r\n");
}

#[test]
fn the_server_follows_its_model_file_and_keeps_its_model_when_the_file_breaks() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let server = start(&model, ServerConfig::default());
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    let score = |s: &Running| {
        let (_, headers, _) = split(&exchange(s, &request("CHECK", "", &ham)));
        header(&headers, "Spam").unwrap().to_string()
    };
    let before = score(&server);
    // `spamsort learn`, as a user runs it beside the server: appended to the file's journal.
    crate::util::spamsort()
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg(sample_files().last().unwrap())
        .assert()
        .success();
    let learned = score(&server);
    assert_ne!(learned, before, "a learn beside the server counts at once");
    // A save that replaces the file (here: the learn undone, then relearned as ham).
    let mut filter = SpamFilter::load(&model).unwrap();
    filter.learn(&ham, Label::Ham).unwrap();
    filter
        .save(&spamsort::model_file::lock_for_update(&model).unwrap())
        .unwrap();
    let relearned = score(&server);
    assert_ne!(relearned, learned, "a replaced file counts at once");
    server.handle.reload().unwrap();
    assert_eq!(score(&server), relearned, "a reload reads the same state");
    std::fs::write(&model, b"garbage").unwrap();
    assert_eq!(
        score(&server),
        relearned,
        "a file that cannot be read keeps the model in use"
    );
    assert!(server.handle.reload().is_err());
    assert_eq!(score(&server), relearned, "so does a failed reload");
}

#[test]
fn a_shared_filter_reads_its_file_again_only_when_it_changed() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let shared = SharedFilter::load(&model, Policy::default()).unwrap();
    let first = shared.current();
    assert!(Arc::ptr_eq(&first, &shared.current()), "nothing changed");
    // Its own learn swaps in what it saved, with that state of the file: no read follows.
    let message = b"Subject: offer\n\nwords zqownx and more\n";
    shared.learn(message, Label::Spam).unwrap();
    let own = shared.current();
    assert!(!Arc::ptr_eq(&own, &first));
    assert!(
        Arc::ptr_eq(&own, &shared.current()),
        "its own save is not read back"
    );
    // Another learner's append to the journal is read.
    let other = t.path().join("other.eml");
    std::fs::write(&other, b"Subject: offer\n\nwords zqotherx and more\n").unwrap();
    crate::util::spamsort()
        .args(["learn", "--spam", "--model"])
        .args([&model, &other])
        .assert()
        .success();
    assert_eq!(
        spamsort::filter::journal::pending(&model).unwrap().0,
        1,
        "appended"
    );
    let followed = shared.current();
    assert_eq!(
        followed.summary().messages[1],
        own.summary().messages[1] + 1
    );
    assert!(Arc::ptr_eq(&followed, &shared.current()));
    // A file gone keeps the filter in use, read again once it is back.
    let aside = t.path().join("aside");
    std::fs::rename(&model, &aside).unwrap();
    assert!(Arc::ptr_eq(&followed, &shared.current()));
    std::fs::rename(&aside, &model).unwrap();
    let back = shared.current();
    assert!(!Arc::ptr_eq(&back, &followed));
    assert_eq!(back.summary(), followed.summary());
}

#[test]
fn reloads_racing_learns_never_swap_an_older_model_in() {
    // A reload (SIGHUP) reads the file while a TELL saves it: it must not swap the state it read
    // in after the TELL swapped in the newer one, or the server scores as if never told.
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let shared = Arc::new(SharedFilter::load(&model, Policy::default()).unwrap());
    let start = shared.current().summary().messages[1];
    let reloads = Arc::new(AtomicUsize::new(0));
    for i in 0..16u64 {
        // Reloads one after another until stopped, so one is under way when the learn saves.
        let stop = Arc::new(AtomicBool::new(false));
        let reloading = {
            let (shared, stop, reloads) = (shared.clone(), stop.clone(), reloads.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    shared.reload().unwrap();
                    reloads.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let message = format!("Subject: offer {i}\n\nwords zq{i}x and more zq{i}y\n");
        assert_eq!(
            shared.learn(message.as_bytes(), Label::Spam).unwrap(),
            spamsort::LearnOutcome::Learned
        );
        // The last reload ends, and none follows to mend what it swapped in.
        stop.store(true, Ordering::Relaxed);
        reloading.join().unwrap();
        assert_eq!(
            shared.current().summary().messages[1],
            start + i + 1,
            "learn {i}"
        );
    }
    assert!(reloads.load(Ordering::Relaxed) > 0);
    // A spamd user named after the shared file learns into it, and the filter in use sees it.
    let alias = t.path().join("alias.spamsort");
    std::os::unix::fs::symlink(&model, &alias).unwrap();
    let message = b"Subject: alias\n\nwords zqaliasx\n";
    shared.learn_into(&alias, message, Label::Spam).unwrap();
    assert_eq!(shared.current().summary().messages[1], start + 17);
}

#[test]
fn cr_only_message_with_forged_flag_first_is_kept_by_process_and_headers() {
    use crate::line_endings::{CR_ONLY_FORGED_FLAG, assert_marked_byte_exact};
    let server = start(trained_model(), ServerConfig::default());
    let answer = exchange(&server, &request("PROCESS", "", CR_ONLY_FORGED_FLAG));
    let (status, _, body) = split(&answer);
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert_marked_byte_exact(&body, CR_ONLY_FORGED_FLAG);
    assert!(body.ends_with(b"\rFrom: a@b\rSubject: s\r\rbody\r"));
    // HEADERS: the same header block, up to and including its blank line.
    let answer = exchange(&server, &request("HEADERS", "", CR_ONLY_FORGED_FLAG));
    let (status, _, headers) = split(&answer);
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert_eq!(headers, &body[..body.len() - b"body\r".len()]);
}

#[test]
fn headers_runs_to_the_blank_line_spamc_appends_the_body_after() {
    // A fold that lost its indent ends the header block at `carol@…` for the marking, but
    // spamc (`--headers`) puts the original's body after the answer from the first blank line
    // on: the answer must hold everything before that line, or the message loses those lines.
    let server = start(trained_model(), ServerConfig::default());
    let lf: &[u8] = b"From: a@example.com\nTo: a@example.com, b@example.com,\ncarol@example.com\n\
        Subject: broken fold\nMIME-Version: 1.0\n\nbody line\n\nmore body\n";
    for message in [lf.to_vec(), to_crlf(lf)] {
        let (status, _, processed) = split(&exchange(&server, &request("PROCESS", "", &message)));
        assert_eq!(status, "SPAMD/1.5 0 EX_OK");
        let (status, _, headers) = split(&exchange(&server, &request("HEADERS", "", &message)));
        assert_eq!(status, "SPAMD/1.5 0 EX_OK");
        // What spamc makes of it: the answer, then the original after its first blank line.
        let blank: &[u8] = if message.contains(&b'\r') {
            b"\r\n\r\n"
        } else {
            b"\n\n"
        };
        let body_at = message
            .windows(blank.len())
            .position(|w| w == blank)
            .unwrap()
            + blank.len();
        let mut rebuilt = headers.clone();
        rebuilt.extend_from_slice(&message[body_at..]);
        assert_eq!(
            String::from_utf8_lossy(&rebuilt),
            String::from_utf8_lossy(&processed)
        );
        assert!(
            headers.ends_with(blank),
            "{}",
            String::from_utf8_lossy(&headers)
        );
    }
}

/// A message of about `size` bytes of ordinary text lines.
fn big_message(size: usize) -> Vec<u8> {
    let mut message = b"From: a@example.org\r\nSubject: big\r\n\r\n".to_vec();
    let mut i = 0u64;
    while message.len() < size {
        message.extend(format!("line {i} of a long and dull newsletter text\r\n").as_bytes());
        i += 1;
    }
    message
}

/// What a client that sends `request` and then reads its answer 16 KiB every 100 ms got: the
/// bytes read before the connection ended, and the time from the request sent to that end.
/// Its receive buffer is kept small, so the server cannot hand it the answer all at once.
/// Gives up (and says so) after 60 s.
fn read_slowly(
    server: &Running,
    request: &[u8],
    got_some: Option<std::sync::mpsc::Sender<()>>,
) -> (usize, Duration) {
    let mut s = connect(server);
    rustix::net::sockopt::set_socket_recv_buffer_size(&s, 16 * 1024).unwrap();
    s.write_all(request).unwrap();
    let sent = std::time::Instant::now();
    let mut got = 0;
    let mut buf = vec![0; 16 * 1024];
    while sent.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
        if let Some(tx) = &got_some {
            let _ = tx.send(());
        }
    }
    (got, sent.elapsed())
}

#[test]
fn slow_reader_of_an_8_mb_process_answer_is_cut_off_at_the_timeout() {
    let server = start(
        trained_model(),
        ServerConfig {
            max_size: 16 << 20,
            timeout: Duration::from_secs(2),
            ..ServerConfig::default()
        },
    );
    let message = big_message(8 << 20);
    // A client that reads at once gets the whole marked message.
    let (status, _, body) = split(&exchange(&server, &request("PROCESS", "", &message)));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert!(body.len() > message.len());
    let (got, took) = read_slowly(&server, &request("PROCESS", "", &message), None);
    assert!(
        got < message.len(),
        "the whole answer ({got} bytes) went to a slow reader"
    );
    // Cut off at the 2 s deadline; the bound is generous for a loaded machine.
    assert!(
        took < Duration::from_secs(10),
        "the slow reader was held {took:?}"
    );
}

/// Sends a PING on a new connection: the answer, and how long it took.
fn timed_ping(server: &Running) -> (Vec<u8>, Duration) {
    let t = std::time::Instant::now();
    let answer = exchange(server, b"PING SPAMC/1.5\r\n\r\n");
    (answer, t.elapsed())
}

#[test]
fn ping_is_answered_with_one_worker_while_a_slow_reader_holds_it() {
    let server = Arc::new(start(
        trained_model(),
        ServerConfig {
            max_connections: 1,
            max_size: 16 << 20,
            timeout: Duration::from_secs(2),
            ..ServerConfig::default()
        },
    ));
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = {
        let server = server.clone();
        std::thread::spawn(move || {
            read_slowly(
                &server,
                &request("PROCESS", "", &big_message(8 << 20)),
                Some(tx),
            )
        })
    };
    // The slow reader is taking its answer: the one worker's request is in progress.
    rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let (answer, took) = timed_ping(&server);
    assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n");
    // Far less than the 2 s the slow reader may hold its request; generous for a loaded machine.
    assert!(took < Duration::from_secs(1), "PING waited {took:?}");
    reader.join().unwrap();
}

#[test]
fn two_hundred_idle_connections_do_not_delay_a_ping() {
    let server = start(trained_model(), ServerConfig::default());
    let idle: Vec<TcpStream> = (0..200).map(|_| connect(&server)).collect();
    // Half of them started a request and stalled in its head.
    for s in idle.iter().step_by(2) {
        (&*s).write_all(b"CHECK SPAMC/1.5\r\nContent-le").unwrap();
    }
    let (answer, took) = timed_ping(&server);
    assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n");
    assert!(took < Duration::from_secs(2), "PING waited {took:?}");
    // And a real request is served too, ahead of the 30 s the idle ones may take.
    let message = std::fs::read(&sample_files()[0]).unwrap();
    let (status, _, _) = split(&exchange(&server, &request("CHECK", "", &message)));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    drop(idle);
}

#[test]
fn oversize_process_sent_whole_before_reading_comes_back_unchanged() {
    let server = start(
        trained_model(),
        ServerConfig {
            max_size: 1000,
            timeout: Duration::from_secs(20),
            ..ServerConfig::default()
        },
    );
    // More than the kernel can buffer: a server that echoed while the client was still sending
    // would deadlock with a client that reads only after sending, as spamc does.
    let message = big_message(loopback_buffer_bytes() + (8 << 20));
    let (status, headers, body) = split(&exchange(&server, &request("PROCESS", "", &message)));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert_eq!(header(&headers, "Spam"), Some("False ; 0.0 / 5.0"));
    assert_eq!(
        header(&headers, "Content-length"),
        Some(&*message.len().to_string())
    );
    assert!(body == message, "the message came back changed");
}

#[test]
fn oversize_process_is_spooled_in_the_spool_dir_only() {
    // A spool directory that cannot hold it: the message is not spooled elsewhere (a /tmp in
    // memory), the client is told to keep its copy.
    let t = TestDir::new();
    let server = start(
        trained_model(),
        ServerConfig {
            max_size: 1000,
            spool_dir: t.path().join("missing"),
            ..ServerConfig::default()
        },
    );
    let message = big_message(5000);
    let (status, _, body) = split(&exchange(&server, &request("PROCESS", "", &message)));
    assert!(status.starts_with("SPAMD/1.5 65 "), "{status}");
    assert!(body.is_empty());
    // Where it can, it comes back whole.
    std::fs::create_dir(t.path().join("missing")).unwrap();
    let (status, _, body) = split(&exchange(&server, &request("PROCESS", "", &message)));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert!(body == message, "the message came back changed");
}

#[test]
fn oversize_process_past_what_the_spool_has_left_is_refused_until_it_is_given_back() {
    // Larger than the loopback buffers: the first answer cannot be written all at once, so
    // its message holds the spool while its client reads slowly.
    let message = big_message(loopback_buffer_bytes() + (8 << 20));
    let server = start(
        trained_model(),
        ServerConfig {
            max_size: 1000,
            max_spool: message.len() as u64 + 1000,
            timeout: Duration::from_secs(60),
            ..ServerConfig::default()
        },
    );
    let process = request("PROCESS", "", &message);
    let mut first = connect(&server);
    first.write_all(&process).unwrap();
    // Its answer has begun: the message is spooled whole.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        first.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let (status, _, _) = split(&head);
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    // A second one does not fit in what is left: the client is told to keep its copy.
    let (status, _, body) = split(&exchange(&server, &process));
    assert!(status.starts_with("SPAMD/1.5 65 "), "{status}");
    assert!(body.is_empty());
    // The first comes back whole, and its bytes are given back to the spool.
    let mut body = Vec::new();
    first.read_to_end(&mut body).unwrap();
    assert!(body == message, "the message came back changed");
    let (status, _, body) = split(&exchange(&server, &process));
    assert_eq!(status, "SPAMD/1.5 0 EX_OK");
    assert!(body == message, "the message came back changed");
}

#[test]
fn connections_past_max_open_evict_the_oldest_idle_one() {
    let server = start(
        trained_model(),
        ServerConfig {
            max_open: 4,
            ..ServerConfig::default()
        },
    );
    let mut idle: Vec<TcpStream> = (0..4).map(|_| connect(&server)).collect();
    // Each PING makes room by closing the oldest idle connection, then is answered.
    for _ in 0..2 {
        let (answer, took) = timed_ping(&server);
        assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n");
        assert!(took < Duration::from_secs(2), "PING waited {took:?}");
    }
    let mut evicted = Vec::new();
    idle[0].read_to_end(&mut evicted).unwrap();
    assert!(
        evicted.starts_with(b"SPAMD/1.5 79 "),
        "{}",
        String::from_utf8_lossy(&evicted)
    );
    // The newest idle connection is still served.
    let last = idle.last_mut().unwrap();
    last.write_all(b"PING SPAMC/1.5\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    last.read_to_end(&mut answer).unwrap();
    assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n");
}

#[test]
fn max_open_closes_an_idle_connection_only_for_a_waiting_client_never_the_newcomer() {
    let server = start(
        trained_model(),
        ServerConfig {
            max_open: 3,
            ..ServerConfig::default()
        },
    );
    // Three idle connections fill the server: none is closed while no other client waits.
    let mut idle: Vec<TcpStream> = (0..3).map(|_| connect(&server)).collect();
    std::thread::sleep(Duration::from_millis(500));
    for s in &mut idle {
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let mut byte = [0];
        let e = s.read(&mut byte).unwrap_err();
        assert!(matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ));
    }
    drop(idle);
    // Two clients hold their requests open (a body not yet sent in full), so neither can be
    // closed; each client that comes with its request is still served, not closed at once.
    let holding: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = connect(&server);
            s.write_all(b"CHECK SPAMC/1.5\r\nContent-length: 100\r\n\r\npart")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..5 {
        let (answer, took) = timed_ping(&server);
        assert_eq!(
            answer,
            b"SPAMD/1.5 0 PONG\r\n",
            "{}",
            String::from_utf8_lossy(&answer)
        );
        assert!(took < Duration::from_secs(2), "PING waited {took:?}");
    }
    drop(holding);
}

/// `message` as `spamc -z` sends it: one zlib stream.
fn zlib(message: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(message).unwrap();
    e.finish().unwrap()
}

#[test]
fn zlib_compressed_requests_are_answered_as_the_uncompressed_ones() {
    let server = start(trained_model(), ServerConfig::default());
    let files = sample_files();
    for path in [&files[0], files.last().unwrap()] {
        let message = to_crlf(&std::fs::read(path).unwrap());
        for command in ["CHECK", "SYMBOLS", "REPORT", "PROCESS", "HEADERS"] {
            let plain = exchange(&server, &request(command, "", &message));
            let packed = request(command, "Compress: zlib\r\n", &zlib(&message));
            assert!(plain.starts_with(b"SPAMD/1.5 0 EX_OK\r\n"), "{command}");
            assert_eq!(exchange(&server, &packed), plain, "{command}");
        }
    }
    let answer = exchange(&server, &request("CHECK", "Compress: gzip\r\n", b"x"));
    assert!(answer.starts_with(b"SPAMD/1.5 69 "));
}

#[test]
fn zlib_bomb_and_compressed_oversize_are_refused_never_answered_compressed() {
    let (server, message) = small_server_and_big_message();
    let bomb = zlib(&message);
    assert!(bomb.len() < 1000);
    for command in ["CHECK", "PROCESS", "HEADERS"] {
        let answer = exchange(&server, &request(command, "Compress: zlib\r\n", &bomb));
        let (status, _, body) = split(&answer);
        assert!(status.starts_with("SPAMD/1.5 65 "), "{command}: {status}");
        assert!(body.is_empty());
    }
    // Compressed bytes over --max-size: PROCESS must not hand them back as the message.
    let noise: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let packed = zlib(&noise);
    assert!(packed.len() > 1000);
    let answer = exchange(&server, &request("PROCESS", "Compress: zlib\r\n", &packed));
    let (status, _, body) = split(&answer);
    assert!(status.starts_with("SPAMD/1.5 65 "), "{status}");
    assert!(body.is_empty());
    let answer = exchange(
        &server,
        &request("CHECK", "Compress: zlib\r\n", b"not zlib"),
    );
    assert!(answer.starts_with(b"SPAMD/1.5 76 "));
}

#[test]
fn tells_of_new_users_past_the_cap_on_user_model_files_are_refused_and_make_nothing() {
    // Regression: each TELL of a new user name made a copy of the shared model (and a lock
    // file), without end: clients naming ever new users could fill the disk.
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let users = t.path().join("users");
    std::fs::create_dir(&users).unwrap();
    let template = users.join("%u.spamsort");
    let config = ServerConfig {
        allow_tell: true,
        user_models: Some(spamsort::spamd::UserModels::new(template.to_str().unwrap()).unwrap()),
        max_user_models: 3,
        ..ServerConfig::default()
    };
    let server = start(&model, config);
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    let tell = |user: &str, class: &str| {
        let mut r = format!(
            "TELL SPAMC/1.5\r\nContent-length: {}\r\nUser: {user}\r\nMessage-class: {class}\r\n\
             Set: local\r\n\r\n",
            ham.len()
        )
        .into_bytes();
        r.extend_from_slice(&ham);
        split(&exchange(&server, &r)).0
    };
    // Eight new users at once: three files are made, whatever the order.
    let statuses: Vec<String> = std::thread::scope(|s| {
        let told: Vec<_> = (0..8)
            .map(|i| s.spawn(move || tell(&format!("user{i}"), "spam")))
            .collect();
        told.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ok = statuses
        .iter()
        .filter(|s| *s == "SPAMD/1.5 0 EX_OK")
        .count();
    let refused = statuses
        .iter()
        .filter(|s| s.starts_with("SPAMD/1.5 73 ") && s.contains("--max-user-models 3"))
        .count();
    assert_eq!((ok, refused), (3, 5), "{statuses:?}");
    let mut made: Vec<String> = std::fs::read_dir(&users)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    made.sort();
    assert_eq!(made.len(), 6, "three models and their locks: {made:?}");
    let first = made
        .iter()
        .find_map(|n| n.strip_suffix(".spamsort"))
        .unwrap();
    // A user with a file still learns, and one refused is still answered (shared model).
    assert_eq!(tell(first, "ham"), "SPAMD/1.5 0 EX_OK");
    let refused_user = (0..8)
        .map(|i| format!("user{i}"))
        .find(|u| !users.join(format!("{u}.spamsort")).exists())
        .unwrap();
    let check = format!(
        "CHECK SPAMC/1.5\r\nContent-length: {}\r\nUser: {refused_user}\r\n\r\n",
        ham.len()
    );
    let answer = exchange(&server, &[check.as_bytes(), &ham].concat());
    assert_eq!(split(&answer).0, "SPAMD/1.5 0 EX_OK");
    assert_eq!(std::fs::read_dir(&users).unwrap().count(), 6);
}

#[test]
fn a_tell_of_a_new_user_makes_the_users_directory_a_template_names() {
    // Regression: with a directory per user (`users/%u/model.spamsort`), the first TELL of a
    // user failed `EX_IOERR` (74), its directory missing: that user's corrections were never
    // learned. The directory is made, for the server alone; the template's own place is not.
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let users = t.path().join("users");
    std::fs::create_dir(&users).unwrap();
    let template = users.join("%u").join("model.spamsort");
    let config = ServerConfig {
        allow_tell: true,
        user_models: Some(spamsort::spamd::UserModels::new(template.to_str().unwrap()).unwrap()),
        ..ServerConfig::default()
    };
    let server = start(&model, config);
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    let tell = format!(
        "TELL SPAMC/1.5\r\nContent-length: {}\r\nUser: alice\r\nMessage-class: spam\r\n\
         Set: local\r\n\r\n",
        ham.len()
    );
    let answer = exchange(&server, &[tell.as_bytes(), &ham].concat());
    assert_eq!(split(&answer).0, "SPAMD/1.5 0 EX_OK");
    let alice = users.join("alice");
    assert!(alice.join("model.spamsort").is_file());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&alice).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    // It is a model file spamsort reads, which learned the message.
    let info = crate::util::spamsort()
        .args(["info", "--model"])
        .arg(alice.join("model.spamsort"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&info.get_output().stdout).into_owned();
    assert!(text.contains("by learn:        1 spam, 0 ham"), "{text}");
}

#[test]
fn a_users_model_answers_as_a_server_of_that_model_would() {
    // A user's file is read only where the message's tokens fall (as the pipe filter reads
    // it), its journal applied; the answers must be those of the file loaded whole.
    let t = TestDir::new();
    let shared = copy_of_trained_model(&t);
    let users = t.path().join("users");
    std::fs::create_dir(&users).unwrap();
    let alice = users.join("alice.spamsort");
    std::fs::copy(&shared, &alice).unwrap();
    let files = sample_files();
    // Saved whole once (a relabel), then two learns appended to its journal.
    let mut filter = SpamFilter::load(&alice).unwrap();
    filter
        .learn(&std::fs::read(&files[1]).unwrap(), Label::Ham)
        .unwrap();
    filter
        .save(&spamsort::model_file::lock_for_update(&alice).unwrap())
        .unwrap();
    // New messages: a relabel would save whole (unlearning compacts the journal).
    for (i, class) in ["--ham", "--spam"].into_iter().enumerate() {
        let mut message = std::fs::read(&files[i]).unwrap();
        message.extend_from_slice(format!("\nzqnew{i} words\n").as_bytes());
        let file = t.path().join(format!("new{i}.eml"));
        std::fs::write(&file, message).unwrap();
        crate::util::spamsort()
            .args(["learn", class, "--model"])
            .args([&alice, &file])
            .assert()
            .success();
    }
    assert_eq!(spamsort::filter::journal::pending(&alice).unwrap().0, 2);
    let config = ServerConfig {
        user_models: Some(
            spamsort::spamd::UserModels::new(users.join("%u.spamsort").to_str().unwrap()).unwrap(),
        ),
        ..ServerConfig::default()
    };
    let served = start(&shared, config);
    let own = start(&alice, ServerConfig::default());
    let mut differ = 0;
    for file in files.iter().step_by(7).chain([&files[0], &files[1]]) {
        let message = std::fs::read(file).unwrap();
        for command in ["CHECK", "SYMBOLS", "REPORT", "PROCESS"] {
            let by_user = exchange(&served, &request(command, "User: alice\r\n", &message));
            assert_eq!(
                by_user,
                exchange(&own, &request(command, "", &message)),
                "{command} {}",
                file.display()
            );
            differ += usize::from(by_user != exchange(&served, &request(command, "", &message)));
        }
    }
    assert!(differ > 0, "the user's model is not the shared one");
}
