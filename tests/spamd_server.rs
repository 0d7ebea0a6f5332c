//! The spamd server in process, driven over raw sockets on 127.0.0.1: every command, TELL
//! gating and persistence, malformed and hostile input, oversize messages, Unix sockets and
//! shutdown. (tests/cli_serve.rs drives the real spamc client against the binary.)

use crate::util::{
    TestDir, copy_of_trained_model, sample_files, spamd_exchange, spamd_request as request,
    to_crlf, trained_model,
};
use spamsort::headers::add_spam_headers;
use spamsort::models::ModelKind;
use spamsort::shared_filter::SharedFilter;
use spamsort::spamd::protocol::spamd_score;
use spamsort::spamd::{Address, Server, ServerConfig, ServerHandle};
use spamsort::{Label, SpamFilter, Verdict};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A server on an ephemeral port, stopped and joined on drop.
struct Running {
    address: Address,
    handle: ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn start_at(model: &Path, address: Address, config: ServerConfig) -> Running {
    let filter = Arc::new(SharedFilter::load(model).unwrap());
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
    for path in [spam, ham] {
        for message in [
            std::fs::read(path).unwrap(),
            to_crlf(&std::fs::read(path).unwrap()),
        ] {
            let c = filter.classify(&message);
            let expected_spam_line = format!(
                "{} ; {:.1} / 5.0",
                if c.verdict == Verdict::Spam {
                    "True"
                } else {
                    "False"
                },
                spamd_score(&c, filter.thresholds())
            );
            let marked = add_spam_headers(&message, &c, filter.thresholds().spam()).unwrap();
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
                        let end = spamsort::headers::header_block_len(&marked);
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
    }
    // Saved: a new load (as after a restart) sees the message learned as spam.
    let learned = SpamFilter::load(&model).unwrap();
    for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
        assert!(p(&learned, kind) > p(&original, kind), "{kind}");
    }
    let server = start(&model, config);
    let answer = exchange(
        &server,
        &request("TELL", "Message-class: spam\r\nRemove: local\r\n", &ham),
    );
    assert_eq!(header(&split(&answer).1, "DidRemove"), Some("local"));
    // Forgetting needs the class it was learned as.
    let answer = exchange(&server, &request("TELL", "Remove: local\r\n", &ham));
    assert!(
        answer.starts_with(b"SPAMD/1.5 65 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    drop(server);
    let forgotten = SpamFilter::load(&model).unwrap();
    for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
        assert_eq!(p(&forgotten, kind), p(&original, kind), "{kind}");
    }
    assert_eq!(forgotten.summary().messages, original.summary().messages);
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

#[test]
fn oversize_messages_are_answered_unclassified_without_being_held() {
    let server = start(
        trained_model(),
        ServerConfig {
            max_size: 1000,
            ..ServerConfig::default()
        },
    );
    let mut message = b"Subject: big\r\n\r\n".to_vec();
    message.extend(std::iter::repeat_n(b'x', 100_000));
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
    server.thread.take().unwrap().join().unwrap();
    assert!(!path.exists(), "the socket file is removed on shutdown");
}

#[test]
fn reload_picks_up_a_replaced_model() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let server = start(&model, ServerConfig::default());
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    let score = |s: &Running| {
        let (_, headers, _) = split(&exchange(s, &request("CHECK", "", &ham)));
        header(&headers, "Spam").unwrap().to_string()
    };
    let before = score(&server);
    let mut filter = SpamFilter::load(&model).unwrap();
    for _ in 0..20 {
        filter.learn(&ham, Label::Spam, false).unwrap();
    }
    filter
        .save(&spamsort::model_file::lock_for_update(&model).unwrap())
        .unwrap();
    assert_eq!(
        score(&server),
        before,
        "the model in use changes only on reload"
    );
    server.handle.reload().unwrap();
    assert_ne!(score(&server), before);
    std::fs::write(&model, b"garbage").unwrap();
    assert!(server.handle.reload().is_err());
    assert_ne!(
        score(&server),
        before,
        "a failed reload keeps the model in use"
    );
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
