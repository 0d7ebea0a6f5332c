//! The SPAMC/1.5 protocol as SpamAssassin's spamd speaks it: request heads parsed with hard
//! limits, response lines and status codes formatted (the score they carry is
//! [`crate::filter::policy::score`], the one scale of every front end). No I/O policy lives here (see `server.rs`); everything is a pure function of
//! bytes, which is what the fuzz target and the unit tests drive.

pub use crate::filter::policy::REQUIRED_SCORE;
use crate::label::Label;
use std::io::BufRead;

/// The protocol version this server speaks.
pub const VERSION: &str = "1.5";
/// Longest request line or header line accepted, in bytes (spamc sends a few dozen).
pub const MAX_LINE: usize = 8 * 1024;
/// Most header lines accepted in a request.
pub const MAX_HEADERS: usize = 64;
/// Most bytes accepted in a whole request head (spamc sends about a hundred), so a server
/// holding many connections mid-head holds at most this much for each.
pub const MAX_HEAD: usize = 16 * 1024;

/// What the client asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Is it spam? (a result line only)
    Check,
    /// Result line and the strongest tokens, comma-separated.
    Symbols,
    /// Result line and a text report.
    Report,
    /// As `Report`, but the report only for spam.
    ReportIfSpam,
    /// Result line and the message with X-Spam-* headers added.
    Process,
    /// Result line and only the marked message's header block.
    Headers,
    /// Liveness: answered `PONG`.
    Ping,
    /// The client connected by mistake: no answer.
    Skip,
    /// Learn or forget a message (Message-class, Set, Remove headers).
    Tell,
}

/// Every command with its protocol word.
const COMMANDS: [(&str, Command); 9] = [
    ("CHECK", Command::Check),
    ("SYMBOLS", Command::Symbols),
    ("REPORT", Command::Report),
    ("REPORT_IFSPAM", Command::ReportIfSpam),
    ("PROCESS", Command::Process),
    ("HEADERS", Command::Headers),
    ("PING", Command::Ping),
    ("SKIP", Command::Skip),
    ("TELL", Command::Tell),
];

impl Command {
    fn parse(word: &str) -> Option<Command> {
        COMMANDS.iter().find(|(w, _)| *w == word).map(|&(_, c)| c)
    }

    /// The command's protocol word.
    pub fn name(self) -> &'static str {
        COMMANDS
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("", |(w, _)| w)
    }

    /// True for the commands that carry a message body.
    pub fn has_body(self) -> bool {
        !matches!(self, Command::Ping | Command::Skip)
    }
}

/// A parsed request head (everything before the message body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The command.
    pub command: Command,
    /// `Content-length`: the body's size in bytes.
    pub content_length: Option<u64>,
    /// `Message-class` (TELL).
    pub message_class: Option<Label>,
    /// `Set`: databases to add the message to (TELL); spamsort has one, `local`.
    pub set: Vec<String>,
    /// `Remove`: databases to remove the message from (TELL).
    pub remove: Vec<String>,
    /// `Compress`: `zlib` (`spamc -z`) says the body's `Content-length` bytes are one zlib
    /// stream, inflated to at most the server's `max_size` before it is answered; the answer
    /// is not compressed. Any other method is refused `EX_UNAVAILABLE`.
    pub compress: Option<String>,
    /// `User`: with per-user models (`ServerConfig::user_models`) it picks the model file;
    /// otherwise it is ignored and one model serves every user.
    pub user: Option<String>,
}

impl Request {
    /// A request for `command` with no headers.
    pub fn new(command: Command) -> Request {
        Request {
            command,
            content_length: None,
            message_class: None,
            set: Vec::new(),
            remove: Vec::new(),
            compress: None,
            user: None,
        }
    }
}

/// spamd's response codes (sysexits.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: no problem.
    Ok = 0,
    /// 65: the data was malformed (e.g. a TELL without a usable Message-class).
    DataErr = 65,
    /// 67: the user named by `User:` cannot have a model (a name that is not a plain name).
    NoUser = 67,
    /// 69: service unavailable (TELL not enabled, unknown compression, no model).
    Unavailable = 69,
    /// 70: internal error.
    Software = 70,
    /// 73: a file that would be made cannot be (a user's model file past the server's cap on
    /// them, see `ServerConfig::max_user_models`).
    CantCreat = 73,
    /// 74: input/output error (saving a learned model failed).
    IoErr = 74,
    /// 76: the request broke the protocol.
    Protocol = 76,
    /// 79: the client was too slow.
    Timeout = 79,
}

impl Status {
    /// The code's name, as spamd prints it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "EX_OK",
            Status::DataErr => "EX_DATAERR",
            Status::NoUser => "EX_NOUSER",
            Status::Unavailable => "EX_UNAVAILABLE",
            Status::Software => "EX_SOFTWARE",
            Status::CantCreat => "EX_CANTCREAT",
            Status::IoErr => "EX_IOERR",
            Status::Protocol => "EX_PROTOCOL",
            Status::Timeout => "EX_TIMEOUT",
        }
    }
}

/// A request the server answers with an error line and then closes the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProtocolError {
    /// The response code.
    pub status: Status,
    /// The text after the code.
    pub message: String,
}

impl ProtocolError {
    /// An `EX_PROTOCOL` error.
    pub fn protocol(message: impl Into<String>) -> Self {
        ProtocolError {
            status: Status::Protocol,
            message: message.into(),
        }
    }

    /// The error's response line.
    pub fn response(&self) -> Vec<u8> {
        status_line(self.status, &self.message)
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes, without its line ending, from a head that
/// has `budget` of its [`MAX_HEAD`] bytes left. `Ok(None)` at a clean end of input.
fn read_line(r: &mut impl BufRead, budget: &mut usize) -> Result<Option<String>, ProtocolError> {
    let cap = MAX_LINE.min(*budget);
    let mut line = Vec::new();
    let n = std::io::Read::take(&mut *r, cap as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(|e| read_error(&e))?;
    if n == 0 {
        return Ok(None);
    }
    let complete = line.ends_with(b"\n");
    if !complete && n > MAX_LINE {
        return Err(ProtocolError::protocol("line too long"));
    }
    if n > *budget {
        return Err(ProtocolError::protocol("request head too long"));
    }
    if !complete {
        return Err(ProtocolError::protocol(
            "connection closed inside the request head",
        ));
    }
    *budget -= n;
    line.pop();
    if line.ends_with(b"\r") {
        line.pop();
    }
    // spamd takes a head's bytes as they come; a line that is not UTF-8 (a `User:` name in
    // Latin-1, from a system whose login names are) is read as Latin-1, byte by byte, so its
    // request is answered: different Latin-1 names stay different (a name spelt in Latin-1 and
    // in UTF-8 is the same user; its control characters are refused where it becomes a path,
    // see `super::users`), and the values spamsort parses (lengths, classes) are ASCII
    // either way.
    Ok(Some(String::from_utf8(line).unwrap_or_else(|e| {
        e.into_bytes().into_iter().map(char::from).collect()
    })))
}

/// The error for a failed read: a timeout is `EX_TIMEOUT`, anything else `EX_PROTOCOL`.
pub fn read_error(e: &std::io::Error) -> ProtocolError {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => ProtocolError {
            status: Status::Timeout,
            message: "timeout reading the request".into(),
        },
        _ => ProtocolError::protocol(format!("read failed: {e}")),
    }
}

/// Reads and checks a request head: `COMMAND SPAMC/x.y`, header lines, a blank line. Unknown
/// headers are ignored, as the protocol asks. Reads at most `MAX_HEADERS + 2` lines of at
/// most [`MAX_LINE`] bytes and [`MAX_HEAD`] bytes in all, so a client cannot make it buffer
/// without bound.
pub fn read_request(r: &mut impl BufRead) -> Result<Request, ProtocolError> {
    let mut budget = MAX_HEAD;
    let first =
        read_line(r, &mut budget)?.ok_or_else(|| ProtocolError::protocol("empty request"))?;
    let mut request = Request::new(parse_request_line(&first)?);
    for _ in 0..=MAX_HEADERS {
        let line = read_line(r, &mut budget)?
            .ok_or_else(|| ProtocolError::protocol("connection closed inside the request head"))?;
        if line.is_empty() {
            return Ok(request);
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| ProtocolError::protocol(format!("bad header line: {line}")))?;
        // Blanks only, not Unicode white space: a Latin-1 `alice\xa0` is not `alice`.
        let value = value.trim_matches([' ', '\t']);
        match name.trim_matches([' ', '\t']).to_ascii_lowercase().as_str() {
            "content-length" => {
                let n = value
                    .parse::<u64>()
                    .map_err(|_| ProtocolError::protocol(format!("bad Content-length: {value}")))?;
                // Two lengths would leave the message's end to whichever a reader believes
                // (a proxy in between one, spamsort the other): refused, not guessed.
                if request.content_length.is_some_and(|first| first != n) {
                    return Err(ProtocolError::protocol(
                        "two different Content-length lines",
                    ));
                }
                request.content_length = Some(n);
            }
            "message-class" => {
                request.message_class = Some(match value.to_ascii_lowercase().as_str() {
                    "spam" => Label::Spam,
                    "ham" => Label::Ham,
                    _ => {
                        return Err(ProtocolError::protocol(format!(
                            "bad Message-class: {value}"
                        )));
                    }
                })
            }
            "set" => request.set = databases(value),
            "remove" => request.remove = databases(value),
            "compress" => request.compress = Some(value.to_owned()),
            "user" => request.user = Some(value.to_owned()),
            _ => {}
        }
    }
    Err(ProtocolError::protocol("too many header lines"))
}

/// Checks a request line (`COMMAND SPAMC/1.x`, without its line ending) and returns its
/// command. A server can call this as soon as the first line is in, to turn away a client that
/// does not speak the protocol before it sends more.
pub fn parse_request_line(line: &str) -> Result<Command, ProtocolError> {
    let (word, version) = line
        .split_once(' ')
        .ok_or_else(|| ProtocolError::protocol(format!("bad request line: {line}")))?;
    let command = Command::parse(word)
        .ok_or_else(|| ProtocolError::protocol(format!("unknown command: {word}")))?;
    let known_version = version
        .strip_prefix("SPAMC/")
        .and_then(|v| v.split_once('.'))
        .is_some_and(|(major, minor)| {
            major == "1" && !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())
        });
    if !known_version {
        return Err(ProtocolError::protocol(format!(
            "bad protocol version: {version}"
        )));
    }
    Ok(command)
}

fn databases(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|d| d.trim().to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .collect()
}

/// `SPAMD/1.5 CODE TEXT\r\n`: a response's first line.
pub fn status_line(status: Status, text: &str) -> Vec<u8> {
    format!("SPAMD/{VERSION} {} {text}\r\n", status as u8).into_bytes()
}

/// The `Spam: True ; 7.3 / 5.0` header line.
pub fn spam_line(is_spam: bool, score: f64) -> String {
    let word = if is_spam { "True" } else { "False" };
    format!("Spam: {word} ; {score:.1} / {REQUIRED_SCORE:.1}\r\n")
}

/// The head of an `EX_OK` answer that carries a result: the status line, `Content-length` when
/// a body follows (every command but CHECK), the `Spam:` line and the blank line.
pub fn result_head(content_length: Option<u64>, is_spam: bool, score: f64) -> Vec<u8> {
    let mut head = status_line(Status::Ok, Status::Ok.name());
    if let Some(n) = content_length {
        head.extend(format!("Content-length: {n}\r\n").into_bytes());
    }
    head.extend(spam_line(is_spam, score).into_bytes());
    head.extend(b"\r\n");
    head
}

/// A token as a spamd "symbol": letters, digits and `_.:-@/` kept, anything else `_`, at most
/// 60 characters, so a comma-separated list stays parseable.
pub fn symbol(token: &str) -> String {
    token
        .chars()
        .take(60)
        .map(|c| {
            if c.is_alphanumeric() || "_.:-@/".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Request, ProtocolError> {
        read_request(&mut &bytes[..])
    }

    #[test]
    fn every_command_parses() {
        for (word, command) in COMMANDS {
            let r = parse(format!("{word} SPAMC/1.5\r\n\r\n").as_bytes()).unwrap();
            assert_eq!(r.command, command);
            assert_eq!(command.name(), word);
            assert_eq!(command.has_body(), !matches!(word, "PING" | "SKIP"));
        }
    }

    #[test]
    fn headers_are_read_case_insensitively_and_unknown_ones_ignored() {
        let r = parse(
            b"TELL SPAMC/1.5\r\ncontent-LENGTH: 42\r\nMessage-class: spam\r\nSet: local, remote\r\n\
              Remove: Local\r\nUser: alice\r\nX-Whatever: 1\r\n\r\nbody",
        )
        .unwrap();
        assert_eq!(r.content_length, Some(42));
        assert_eq!(r.message_class, Some(Label::Spam));
        assert_eq!(r.set, ["local", "remote"]);
        assert_eq!(r.remove, ["local"]);
        assert_eq!(r.user.as_deref(), Some("alice"));
        // Bare LF line endings are accepted too.
        let r = parse(b"CHECK SPAMC/1.2\nContent-length: 7\n\n").unwrap();
        assert_eq!(r.content_length, Some(7));
    }

    #[test]
    fn malformed_heads_are_protocol_errors() {
        let cases: &[&[u8]] = &[
            b"",
            b"\r\n",
            b"CHECK\r\n\r\n",
            b"FROB SPAMC/1.5\r\n\r\n",
            b"CHECK HTTP/1.1\r\n\r\n",
            b"CHECK SPAMC/2.0\r\n\r\n",
            b"CHECK SPAMC/1.x\r\n\r\n",
            b"CHECK SPAMC/1.5\r\nContent-length: -1\r\n\r\n",
            b"CHECK SPAMC/1.5\r\nContent-length: 99999999999999999999999\r\n\r\n",
            b"CHECK SPAMC/1.5\r\nno colon here\r\n\r\n",
            b"TELL SPAMC/1.5\r\nMessage-class: eggs\r\n\r\n",
            b"CHECK SPAMC/1.5\r\nContent-length: 5\r\n",
            b"CHECK SPAMC/1.5\r\nContent-length: 5\xff\r\n\r\n",
            b"CHECK SPAMC/1.5\r\nContent-length: 5\r\ncontent-length: 50\r\n\r\n",
        ];
        for case in cases {
            let err = parse(case).unwrap_err();
            assert_eq!(
                err.status,
                Status::Protocol,
                "{:?}",
                String::from_utf8_lossy(case)
            );
            assert!(err.response().starts_with(b"SPAMD/1.5 76 "));
        }
    }

    #[test]
    fn a_head_line_that_is_not_utf8_is_read_as_latin1() {
        // Regression: a Latin-1 `User:` name (spamc sends the login name) failed the whole
        // request, so that user's mail went unfiltered even without per-user models.
        let head = b"CHECK SPAMC/1.5\r\nUser: j\xf6rg\r\n\xff\xfe: 1\r\nContent-length: 5\r\n\r\n";
        let request = parse(head).unwrap();
        assert_eq!(request.user.as_deref(), Some("j\u{f6}rg"));
        assert_eq!(request.content_length, Some(5));
        // Distinct bytes stay distinct names.
        let other = parse(b"CHECK SPAMC/1.5\r\nUser: j\xf7rg\r\n\r\n").unwrap();
        assert_ne!(other.user, request.user);
        // Only blanks are trimmed: a no-break space or NEL is part of the name.
        for end in [&b"\xa0"[..], b"\x85"] {
            let head = [&b"CHECK SPAMC/1.5\r\nUser: alice"[..], end, b" \r\n\r\n"].concat();
            assert_ne!(parse(&head).unwrap().user.as_deref(), Some("alice"));
        }
    }

    #[test]
    fn limits_hold() {
        let long = format!("CHECK SPAMC/1.5\r\nX: {}\r\n\r\n", "a".repeat(MAX_LINE));
        assert_eq!(parse(long.as_bytes()).unwrap_err().message, "line too long");
        let many = format!(
            "CHECK SPAMC/1.5\r\n{}\r\n",
            "X: 1\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(
            parse(many.as_bytes()).unwrap_err().message,
            "too many header lines"
        );
        let just_enough = format!("CHECK SPAMC/1.5\r\n{}\r\n", "X: 1\r\n".repeat(MAX_HEADERS));
        assert!(parse(just_enough.as_bytes()).is_ok());
        // Lines within MAX_LINE, but more than MAX_HEAD bytes in all: refused, having read at
        // most MAX_HEAD + 1 bytes.
        let line = format!("X: {}\r\n", "a".repeat(MAX_LINE - 10));
        let wide = format!(
            "CHECK SPAMC/1.5\r\n{}\r\n",
            line.repeat(MAX_HEAD / line.len() + 1)
        );
        let mut input = wide.as_bytes();
        assert_eq!(
            read_request(&mut input).unwrap_err().message,
            "request head too long"
        );
        assert!(wide.len() - input.len() <= MAX_HEAD + 1);
    }

    #[test]
    fn result_lines_carry_the_score_to_one_decimal() {
        assert_eq!(spam_line(true, 7.25), "Spam: True ; 7.2 / 5.0\r\n");
        assert_eq!(spam_line(false, -3.0), "Spam: False ; -3.0 / 5.0\r\n");
        assert_eq!(
            result_head(Some(12), true, 7.25),
            b"SPAMD/1.5 0 EX_OK\r\nContent-length: 12\r\nSpam: True ; 7.2 / 5.0\r\n\r\n"
        );
        assert_eq!(
            result_head(None, false, 0.0),
            b"SPAMD/1.5 0 EX_OK\r\nSpam: False ; 0.0 / 5.0\r\n\r\n"
        );
    }

    #[test]
    fn symbols_stay_list_safe() {
        assert_eq!(symbol("subject:cheap"), "subject:cheap");
        assert_eq!(symbol("a,b c\r\n"), "a_b_c__");
        assert_eq!(symbol(&"x".repeat(100)).len(), 60);
    }
}
