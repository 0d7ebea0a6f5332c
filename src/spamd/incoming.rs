//! A request as its bytes arrive on a non-blocking connection: the head, scanned once per byte
//! for its blank line and parsed once with `protocol::read_request`, then the body, held in
//! memory (up to `--max-size`), spooled to an unlinked temporary file (an oversize PROCESS,
//! which goes back unchanged) or counted and dropped (other oversize commands). Memory grows
//! only as bytes arrive, never from what `Content-length` claims. `reactor.rs` owns the
//! sockets and feeds the bytes in; nothing here does network I/O.

use super::protocol::{self, MAX_HEAD, MAX_HEADERS, MAX_LINE, ProtocolError, Request};
use std::io::Write;

/// Where a request head stands after more bytes came in.
pub(super) enum HeadProgress {
    /// No blank line yet, and no limit broken.
    Incomplete,
    /// The head is in; `rest` are the bytes after it (the start of the body).
    Complete { request: Request, rest: Vec<u8> },
    /// The head is malformed or over a limit: answer this error.
    Failed(ProtocolError),
}

/// The request head read so far: at most [`MAX_HEAD`] bytes (see [`Head::room`]).
#[derive(Default)]
pub(super) struct Head {
    bytes: Vec<u8>,
    /// Where the line being read starts.
    line_start: usize,
    /// Complete lines so far.
    lines: usize,
}

impl Head {
    /// How many more bytes to read at most: the head can never grow past `MAX_HEAD + 1`
    /// bytes, the one more being what shows it is too long.
    pub(super) fn room(&self) -> usize {
        (MAX_HEAD + 1).saturating_sub(self.bytes.len())
    }

    /// Takes in `chunk` (at most [`Head::room`] bytes). Each byte is scanned once, and the head
    /// is parsed only when its blank line arrives or a limit is broken, so a client trickling
    /// bytes costs linear time.
    pub(super) fn push(&mut self, chunk: &[u8]) -> HeadProgress {
        let from = self.bytes.len();
        self.bytes.extend_from_slice(chunk);
        for i in from..self.bytes.len() {
            if self.bytes[i] != b'\n' {
                continue;
            }
            let line = &self.bytes[self.line_start..i];
            if self.lines > 0 && (line.is_empty() || line == b"\r") {
                let rest = self.bytes[i + 1..].to_vec();
                return match protocol::read_request(&mut &self.bytes[..=i]) {
                    Ok(request) => HeadProgress::Complete { request, rest },
                    Err(e) => HeadProgress::Failed(e),
                };
            }
            if self.lines == 0 {
                // Turn away a client that does not speak the protocol at its first line.
                let first = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(line));
                match protocol::parse_request_line(&first) {
                    Err(e) => return HeadProgress::Failed(e),
                    // PING and SKIP take no headers: spamd answers them at their request line,
                    // and clients before SPAMC/1.5 (monitors such as `check_tcp -s "PING
                    // SPAMC/1.2\r\n"`) send no blank line after it and wait for the PONG.
                    // Whatever follows is drained after the answer.
                    Ok(command) if !command.has_body() => {
                        return HeadProgress::Complete {
                            request: Request::new(command),
                            rest: self.bytes[i + 1..].to_vec(),
                        };
                    }
                    Ok(_) => {}
                }
            }
            self.lines += 1;
            self.line_start = i + 1;
        }
        let over_limit = self.bytes.len() - self.line_start > MAX_LINE
            || self.bytes.len() > MAX_HEAD
            || self.lines > MAX_HEADERS + 1;
        if over_limit {
            return HeadProgress::Failed(self.error());
        }
        HeadProgress::Incomplete
    }

    /// The error for this head as it stands: why it is over a limit, or (at the end of input)
    /// why it is incomplete; the parser words it, so every path says the same.
    pub(super) fn error(&self) -> ProtocolError {
        match protocol::read_request(&mut &self.bytes[..]) {
            Err(e) => e,
            Ok(_) => ProtocolError::protocol("request head too long"),
        }
    }
}

/// A request body being received: it needs `length` bytes in all.
pub(super) struct Body {
    length: u64,
    received: u64,
    sink: Sink,
}

enum Sink {
    Memory(Vec<u8>),
    Spool(std::fs::File),
    Drop,
}

impl Body {
    /// A body held in memory, for a message within `--max-size`.
    pub(super) fn in_memory(length: u64) -> Body {
        Body::with(length, Sink::Memory(Vec::new()))
    }

    /// A body spooled to an unlinked temporary file in `dir`, for an oversize PROCESS.
    pub(super) fn spooled(length: u64, dir: &std::path::Path) -> std::io::Result<Body> {
        Ok(Body::with(length, Sink::Spool(tempfile::tempfile_in(dir)?)))
    }

    /// A body counted and dropped.
    pub(super) fn dropped(length: u64) -> Body {
        Body::with(length, Sink::Drop)
    }

    fn with(length: u64, sink: Sink) -> Body {
        Body {
            length,
            received: 0,
            sink,
        }
    }

    /// The `Content-length` of the request.
    pub(super) fn length(&self) -> u64 {
        self.length
    }

    /// Bytes received so far.
    pub(super) fn received(&self) -> u64 {
        self.received
    }

    /// Bytes still to come.
    pub(super) fn missing(&self) -> u64 {
        self.length - self.received
    }

    /// True for a body held in memory, to be classified.
    pub(super) fn is_in_memory(&self) -> bool {
        matches!(self.sink, Sink::Memory(_))
    }

    /// True for a body counted and dropped (nothing is held).
    pub(super) fn is_dropped(&self) -> bool {
        matches!(self.sink, Sink::Drop)
    }

    /// Takes in the start of `chunk`, up to what is missing (bytes past the body are the
    /// client's mistake and ignored). Memory grows with what arrived, at most doubling and
    /// never past `length`. A spool file that cannot be written (disk full) is given up: the
    /// rest is dropped, and [`Body::into_spool`] says `None`.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        let take = chunk
            .len()
            .min(usize::try_from(self.missing()).unwrap_or(usize::MAX));
        let chunk = &chunk[..take];
        match &mut self.sink {
            Sink::Memory(bytes) => {
                if bytes.capacity() - bytes.len() < chunk.len() {
                    let length = usize::try_from(self.length).unwrap_or(usize::MAX);
                    let want = (bytes.capacity() * 2)
                        .max(bytes.len() + chunk.len())
                        .min(length);
                    bytes.reserve_exact(want - bytes.len());
                }
                bytes.extend_from_slice(chunk);
            }
            Sink::Spool(file) => {
                if let Err(e) = file.write_all(chunk) {
                    tracing::warn!("spooling an oversize message failed: {e}");
                    self.sink = Sink::Drop;
                }
            }
            Sink::Drop => {}
        }
        self.received += take as u64;
    }

    /// The message held in memory (empty for a spooled or dropped body).
    pub(super) fn into_message(self) -> Vec<u8> {
        match self.sink {
            Sink::Memory(bytes) => bytes,
            Sink::Spool(_) | Sink::Drop => Vec::new(),
        }
    }

    /// The spool file, rewound, when the body was spooled.
    pub(super) fn into_spool(self) -> Option<std::io::Result<std::fs::File>> {
        match self.sink {
            Sink::Spool(mut file) => {
                Some(std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0)).map(|_| file))
            }
            Sink::Memory(_) | Sink::Drop => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spamd::protocol::Command;

    fn feed(head: &mut Head, bytes: &[u8], step: usize) -> HeadProgress {
        for chunk in bytes.chunks(step) {
            match head.push(chunk) {
                HeadProgress::Incomplete => {}
                done => return done,
            }
        }
        HeadProgress::Incomplete
    }

    #[test]
    fn head_completes_at_its_blank_line_whatever_the_chunking() {
        let bytes = b"PROCESS SPAMC/1.5\r\nContent-length: 5\r\n\r\nhello";
        for step in [1, 2, 7, bytes.len()] {
            let HeadProgress::Complete { request, rest } = feed(&mut Head::default(), bytes, step)
            else {
                panic!("step {step}: incomplete or failed");
            };
            assert_eq!(request.command, Command::Process);
            assert_eq!(request.content_length, Some(5));
            // What follows the head in the same chunk is the start of the body.
            assert!(b"hello".starts_with(&rest), "step {step}");
        }
    }

    #[test]
    fn ping_and_skip_complete_at_their_request_line() {
        // As spamd: no headers are read for them, so a client before SPAMC/1.5, which sends
        // no blank line after PING, is answered at once instead of at its timeout.
        for (line, command) in [
            (&b"PING SPAMC/1.2\r\n"[..], Command::Ping),
            (b"PING SPAMC/1.5\n", Command::Ping),
            (b"SKIP SPAMC/1.2\r\n", Command::Skip),
        ] {
            let HeadProgress::Complete { request, rest } = Head::default().push(line) else {
                panic!("{:?} not complete", String::from_utf8_lossy(line));
            };
            assert_eq!(request, Request::new(command));
            assert!(rest.is_empty());
        }
        // What follows in the same chunk is handed on, to be drained after the answer.
        let HeadProgress::Complete { request, rest } =
            Head::default().push(b"PING SPAMC/1.5\r\n\r\n")
        else {
            panic!("PING not complete");
        };
        assert_eq!(request.command, Command::Ping);
        assert_eq!(rest, b"\r\n");
        // Other commands still wait for their blank line.
        assert!(matches!(
            Head::default().push(b"CHECK SPAMC/1.5\r\n"),
            HeadProgress::Incomplete
        ));
    }

    #[test]
    fn junk_fails_at_its_first_line_and_limits_fail_without_a_blank_line() {
        let mut head = Head::default();
        let HeadProgress::Failed(e) = head.push(b"GET / HTTP/1.1\r\n") else {
            panic!("junk accepted");
        };
        assert_eq!(e.message, "unknown command: GET");
        let mut long = b"CHECK SPAMC/1.5\r\nX: ".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_LINE));
        let HeadProgress::Failed(e) = feed(&mut Head::default(), &long, 1000) else {
            panic!("long line accepted");
        };
        assert_eq!(e.message, "line too long");
        let many = format!("CHECK SPAMC/1.5\r\n{}", "X: 1\r\n".repeat(MAX_HEADERS + 1));
        let HeadProgress::Failed(e) = feed(&mut Head::default(), many.as_bytes(), 3) else {
            panic!("too many lines accepted");
        };
        assert_eq!(e.message, "too many header lines");
        let wide = format!(
            "CHECK SPAMC/1.5\r\n{}",
            format!("X: {}\r\n", "a".repeat(MAX_LINE - 10)).repeat(3)
        );
        let mut head = Head::default();
        let mut bytes = wide.as_bytes();
        let failed = loop {
            let n = head.room().min(bytes.len()).min(4096);
            assert!(n > 0, "the head stopped taking bytes without failing");
            match head.push(&bytes[..n]) {
                HeadProgress::Incomplete => bytes = &bytes[n..],
                HeadProgress::Failed(e) => break e,
                HeadProgress::Complete { .. } => panic!("over MAX_HEAD accepted"),
            }
        };
        assert_eq!(failed.message, "request head too long");
        assert!(head.bytes.len() <= MAX_HEAD + 1);
    }

    #[test]
    fn body_memory_is_reserved_as_bytes_arrive_not_from_content_length() {
        let mut body = Body::in_memory(2_000_000_000);
        body.push(b"0123456789");
        let Sink::Memory(bytes) = &body.sink else {
            unreachable!()
        };
        assert!(bytes.capacity() < 1024, "reserved {}", bytes.capacity());
        for _ in 0..1000 {
            body.push(&[b'x'; 1000]);
        }
        let Sink::Memory(bytes) = &body.sink else {
            unreachable!()
        };
        assert!(bytes.capacity() <= 2 * bytes.len(), "{}", bytes.capacity());
        assert_eq!(body.missing(), 2_000_000_000 - 1_000_010);
        // Never past the length, and bytes past it are ignored.
        let mut body = Body::in_memory(1500);
        body.push(&[b'y'; 1000]);
        body.push(&[b'z'; 1000]);
        assert_eq!(body.missing(), 0);
        let message = body.into_message();
        assert_eq!(message.len(), 1500);
        assert!(message.capacity() <= 1500);
    }

    #[test]
    fn spooled_body_comes_back_byte_exact() {
        let message: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut body = Body::spooled(message.len() as u64, &std::env::temp_dir()).unwrap();
        for chunk in message.chunks(4096) {
            body.push(chunk);
        }
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut body.into_spool().unwrap().unwrap(), &mut back).unwrap();
        assert_eq!(back, message);
    }
}
