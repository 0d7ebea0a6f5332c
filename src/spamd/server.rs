//! The spamd-compatible server: listeners, a fixed pool of worker threads, per-request
//! deadlines, and the answer to each command.
//!
//! Threads, not async: each request is a short CPU-bound job (tokenize and score, about a tenth
//! of a millisecond) with blocking I/O bounded by a deadline, so one thread per connection in a
//! fixed pool is as fast as an event loop here, needs no runtime, and bounds concurrency by
//! construction. Acceptor threads (one per listener) hand connections to the pool through a
//! rendezvous channel, so at most `max_connections` requests are served at once and at most one
//! more waits per listener; further clients wait in the kernel's backlog.

use super::protocol::{
    self, Command, ProtocolError, Request, Status, result_head, spamd_score, status_line, symbol,
};
use crate::headers::{add_spam_headers, header_block_len};
use crate::label::{Label, Verdict};
use crate::shared_filter::SharedFilter;
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Messages larger than this are not classified (see [`Server`]).
    pub max_size: u64,
    /// Requests served at once (worker threads).
    pub max_connections: usize,
    /// Time allowed for a whole request: reading it, answering it.
    pub timeout: Duration,
    /// Accept TELL (learning). Off by default: anyone who can reach the server could otherwise
    /// teach it to pass their spam.
    pub allow_tell: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_size: 10 * 1024 * 1024,
            max_connections: 16,
            timeout: Duration::from_secs(30),
            allow_tell: false,
        }
    }
}

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix domain socket path (a stale socket file there is replaced).
    Unix(PathBuf),
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp(a) => write!(f, "{a}"),
            Address::Unix(p) => write!(f, "{}", p.display()),
        }
    }
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

/// A connected client.
trait Connection: Read + Write + Send {
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()>;
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()>;
    fn shutdown(&self, how: std::net::Shutdown);
    /// A second handle for writing while the first is borrowed for reading.
    fn writer(&self) -> std::io::Result<Box<dyn Connection>>;
}

macro_rules! connection {
    ($($t:ty),*) => {$(
        impl Connection for $t {
            fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
                <$t>::set_read_timeout(self, t)
            }
            fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
                <$t>::set_write_timeout(self, t)
            }
            fn shutdown(&self, how: std::net::Shutdown) {
                let _ = <$t>::shutdown(self, how);
            }
            fn writer(&self) -> std::io::Result<Box<dyn Connection>> {
                Ok(Box::new(self.try_clone()?))
            }
        }
    )*};
}
connection!(TcpStream, UnixStream);

/// Reads that give up when the request's deadline passes, however slowly the client trickles
/// bytes (a per-read timeout alone would let a slowloris client hold a worker forever).
struct Deadline<'a, C: Connection + ?Sized> {
    conn: &'a mut C,
    deadline: Instant,
}

impl<C: Connection + ?Sized> Read for Deadline<'_, C> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.conn.set_read_timeout(Some(left))?;
        self.conn.read(buf)
    }
}

/// Control of a running server from another thread (a signal handler's, or a test's).
#[derive(Clone)]
pub struct ServerHandle {
    stop: Arc<AtomicBool>,
    addresses: Vec<Address>,
    filter: Arc<SharedFilter>,
}

impl ServerHandle {
    /// Stops accepting; requests in progress finish, then [`Server::run`] returns.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptors blocked in accept(): each sees the flag and exits.
        for a in &self.addresses {
            match a {
                Address::Tcp(addr) => drop(TcpStream::connect(addr)),
                Address::Unix(path) => drop(UnixStream::connect(path)),
            }
        }
    }

    /// Loads the model file again; on failure the model in use stays and the error is returned.
    pub fn reload(&self) -> crate::Result<()> {
        Ok(self.filter.reload()?)
    }
}

/// A bound spamd-compatible server. Oversize messages (over `max_size`) are read through
/// without being held in memory and answered unclassified, as spamc itself treats messages
/// over its size limit: CHECK, SYMBOLS and REPORT say `Spam: False ; 0.0 / 5.0`, PROCESS
/// returns the message unchanged, HEADERS and TELL answer `EX_DATAERR`.
pub struct Server {
    listeners: Vec<Listener>,
    handle: ServerHandle,
    config: ServerConfig,
}

impl Server {
    /// Binds every address. A TCP port 0 picks a free port: see [`Server::addresses`].
    pub fn bind(
        addresses: &[Address],
        filter: Arc<SharedFilter>,
        config: ServerConfig,
    ) -> crate::Result<Server> {
        let mut listeners = Vec::new();
        let mut bound = Vec::new();
        for a in addresses {
            let io = |source| crate::Error::Io {
                path: PathBuf::from(a.to_string()),
                source,
            };
            match a {
                Address::Tcp(addr) => {
                    let l = TcpListener::bind(addr).map_err(io)?;
                    bound.push(Address::Tcp(l.local_addr().map_err(io)?));
                    listeners.push(Listener::Tcp(l));
                }
                Address::Unix(path) => {
                    remove_stale_socket(path);
                    let l = UnixListener::bind(path).map_err(io)?;
                    bound.push(a.clone());
                    listeners.push(Listener::Unix(l));
                }
            }
        }
        Ok(Server {
            listeners,
            handle: ServerHandle {
                stop: Arc::new(AtomicBool::new(false)),
                addresses: bound,
                filter,
            },
            config,
        })
    }

    /// The bound addresses (with the ports TCP port 0 picked).
    pub fn addresses(&self) -> &[Address] {
        &self.handle.addresses
    }

    /// A handle to stop or reload the server from another thread.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Serves until [`ServerHandle::shutdown`]; returns when every request in progress is done.
    pub fn run(self) {
        let (tx, rx) = mpsc::sync_channel::<Box<dyn Connection>>(0);
        let rx = Arc::new(std::sync::Mutex::new(rx));
        let context = Arc::new(Context {
            filter: self.handle.filter.clone(),
            config: self.config.clone(),
        });
        std::thread::scope(|s| {
            for _ in 0..self.config.max_connections.max(1) {
                let (rx, context) = (rx.clone(), context.clone());
                s.spawn(move || {
                    loop {
                        // The lock is only held while waiting for the next connection.
                        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok(conn) = next else { break };
                        serve(conn, &context);
                    }
                });
            }
            for listener in &self.listeners {
                let (tx, stop) = (tx.clone(), &self.handle.stop);
                s.spawn(move || accept_loop(listener, &tx, stop));
            }
            drop(tx);
        });
        for a in &self.handle.addresses {
            if let Address::Unix(path) = a {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

fn remove_stale_socket(path: &Path) {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(path);
    }
}

fn accept_loop(listener: &Listener, tx: &mpsc::SyncSender<Box<dyn Connection>>, stop: &AtomicBool) {
    loop {
        let conn: std::io::Result<Box<dyn Connection>> = match listener {
            Listener::Tcp(l) => l.accept().map(|(c, _)| Box::new(c) as _),
            Listener::Unix(l) => l.accept().map(|(c, _)| Box::new(c) as _),
        };
        if stop.load(Ordering::SeqCst) {
            return;
        }
        match conn {
            Ok(conn) => {
                if tx.send(conn).is_err() {
                    return;
                }
            }
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// What every worker shares.
struct Context {
    filter: Arc<SharedFilter>,
    config: ServerConfig,
}

/// What one request came to, for the log line.
struct Outcome {
    command: Option<Command>,
    result: String,
}

fn serve(mut conn: Box<dyn Connection>, context: &Context) {
    let start = Instant::now();
    let deadline = start + context.config.timeout;
    let _ = conn.set_write_timeout(Some(context.config.timeout));
    let Ok(mut out) = conn.writer() else {
        conn.shutdown(std::net::Shutdown::Both);
        return;
    };
    let outcome = {
        let mut reader = BufReader::new(Deadline {
            conn: &mut *conn,
            deadline,
        });
        answer(&mut reader, &mut out, context)
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err((command, e)) => {
            let _ = out.write_all(&e.response());
            Outcome {
                command,
                result: format!("{} {}", e.status.name(), e.message),
            }
        }
    };
    let _ = out.flush();
    linger(&mut *conn, deadline);
    tracing::info!(
        "{} {} {:.1} ms",
        outcome.command.map_or("-", Command::name),
        outcome.result,
        start.elapsed().as_secs_f64() * 1000.0
    );
}

/// Closes the connection gracefully: our side first, then whatever the client still sends (a
/// body after an error answer, say) is read and dropped, up to 1 MiB and the request's
/// deadline (at most one more second). Closing with unread input would make the kernel reset
/// the connection, which can destroy the answer before the client reads it.
fn linger(conn: &mut dyn Connection, deadline: Instant) {
    conn.shutdown(std::net::Shutdown::Write);
    let deadline = deadline.min(Instant::now() + Duration::from_secs(1));
    let mut rest = Deadline {
        conn: &mut *conn,
        deadline,
    }
    .take(1 << 20);
    let _ = std::io::copy(&mut rest, &mut std::io::sink());
    conn.shutdown(std::net::Shutdown::Both);
}

type Answer = Result<Outcome, (Option<Command>, ProtocolError)>;

/// Reads one request from `reader` and writes its answer to `out` (an error answer is left to
/// the caller).
fn answer<R: Read>(reader: &mut BufReader<R>, out: &mut dyn Write, context: &Context) -> Answer {
    let request = protocol::read_request(reader).map_err(|e| (None, e))?;
    let command = request.command;
    let result = answer_request(request, reader, out, context).map_err(|e| (Some(command), e))?;
    Ok(Outcome {
        command: Some(command),
        result,
    })
}

/// Writes `response` in one piece. A client that went away is not a protocol error to answer:
/// the log line says so.
fn send(out: &mut dyn Write, response: &[u8]) -> Result<(), ProtocolError> {
    out.write_all(response).map_err(|e| ProtocolError {
        status: Status::IoErr,
        message: format!("writing the answer failed: {e}"),
    })
}

fn answer_request<R: Read>(
    request: Request,
    reader: &mut BufReader<R>,
    out: &mut dyn Write,
    context: &Context,
) -> Result<String, ProtocolError> {
    let command = request.command;
    match command {
        Command::Ping => {
            send(out, &status_line(Status::Ok, "PONG"))?;
            return Ok("PONG".into());
        }
        Command::Skip => return Ok("skipped".into()),
        _ => {}
    }
    if let Some(c) = &request.compress {
        return Err(ProtocolError {
            status: Status::Unavailable,
            message: format!("Compress: {c} is not supported; call spamc without -z"),
        });
    }
    if command == Command::Tell && !context.config.allow_tell {
        return Err(ProtocolError {
            status: Status::Unavailable,
            message: "TELL commands are not enabled, set the --allow-tell switch.".into(),
        });
    }
    let length = request
        .content_length
        .ok_or_else(|| ProtocolError::protocol("Content-length required"))?;
    if length > context.config.max_size {
        return oversize(command, length, reader, out);
    }
    let mut message = Vec::with_capacity(length as usize);
    reader
        .take(length)
        .read_to_end(&mut message)
        .map_err(|e| protocol::read_error(&e))?;
    if (message.len() as u64) < length {
        return Err(ProtocolError::protocol(format!(
            "Content-length mismatch: expected {length} bytes, got {}",
            message.len()
        )));
    }
    let mut response = Vec::new();
    let log = if command == Command::Tell {
        tell(&request, &message, &mut response, context)?
    } else {
        classify(command, &message, &mut response, context)
    };
    send(out, &response)?;
    Ok(log)
}

/// Answers a classifying command; returns the log text.
fn classify(command: Command, message: &[u8], out: &mut Vec<u8>, context: &Context) -> String {
    let filter = context.filter.current();
    let thresholds = filter.thresholds();
    let explanation = match command {
        Command::Symbols | Command::Report | Command::ReportIfSpam => filter.explain(message, None),
        _ => None,
    };
    let c = match &explanation {
        Some(e) => e.classification,
        None => filter.classify(message),
    };
    let score = spamd_score(&c, thresholds);
    let is_spam = c.verdict == Verdict::Spam;
    let body: Vec<u8> = match command {
        Command::Process => {
            add_spam_headers(message, &c, thresholds.spam()).unwrap_or_else(|_| message.to_vec())
        }
        Command::Headers => {
            let marked = add_spam_headers(message, &c, thresholds.spam())
                .unwrap_or_else(|_| message.to_vec());
            marked[..header_block_len(&marked)].to_vec()
        }
        Command::Symbols => explanation.as_ref().map_or_else(Vec::new, |e| {
            e.contributions
                .iter()
                .take(20)
                .map(|(token, _)| symbol(token))
                .collect::<Vec<_>>()
                .join(",")
                .into_bytes()
        }),
        Command::Report => report(explanation.as_ref(), score),
        Command::ReportIfSpam if is_spam => report(explanation.as_ref(), score),
        _ => Vec::new(),
    };
    let length = (command != Command::Check).then_some(body.len() as u64);
    out.extend(result_head(length, is_spam, score));
    out.extend(body);
    format!(
        "{} P(spam) {:.4} score {score:.1} by {} ({} bytes)",
        c.verdict,
        c.score.p_spam(),
        c.model,
        message.len()
    )
}

/// The REPORT body: the verdict and the strongest tokens with their points.
fn report(explanation: Option<&crate::Explanation>, score: f64) -> Vec<u8> {
    let Some(e) = explanation else {
        return Vec::new();
    };
    let c = &e.classification;
    let mut text = format!(
        "spamsort verdict: {} (P(spam) {:.4} by {}, {} tokens)\r\n\r\n\
         Content analysis details:   ({score:.1} points, {:.1} required)\r\n\r\n\
         \x20pts token (its share of ln(P(spam) / P(ham)))\r\n\
         ---- --------------------------------------------------\r\n",
        c.verdict,
        c.score.p_spam(),
        c.model,
        c.tokens,
        protocol::REQUIRED_SCORE,
    );
    for (token, weight) in e.contributions.iter().take(20) {
        let points = weight * e.log_odds_per_unit;
        text.push_str(&format!("{points:>4.1} {}\r\n", symbol(token)));
    }
    text.into_bytes()
}

/// Answers TELL: learns or forgets the message in the local (only) database.
fn tell(
    request: &Request,
    message: &[u8],
    out: &mut Vec<u8>,
    context: &Context,
) -> Result<String, ProtocolError> {
    let local = |dbs: &[String]| dbs.iter().any(|d| d == "local");
    let (set, remove) = (local(&request.set), local(&request.remove));
    if set && remove {
        return Err(ProtocolError::protocol(
            "Set and Remove both name the local database",
        ));
    }
    let mut header = String::new();
    let mut log = "nothing to do for the local database".to_string();
    if set || remove {
        let label: Label = request.message_class.ok_or_else(|| ProtocolError {
            status: Status::DataErr,
            message: "TELL needs a Message-class (spam or ham); spamsort keeps no record of \
                      which class a message was learned as"
                .into(),
        })?;
        context
            .filter
            .learn(message, label, remove)
            .map_err(|e| ProtocolError {
                status: Status::IoErr,
                message: format!("learning failed: {e}"),
            })?;
        header = format!("{}: local\r\n", if set { "DidSet" } else { "DidRemove" });
        log = format!("{} as {label}", if set { "learned" } else { "forgot" });
    }
    out.extend(status_line(Status::Ok, Status::Ok.name()));
    out.extend(header.into_bytes());
    out.extend(b"Content-length: 0\r\n\r\n");
    Ok(log)
}

/// Answers a message over `max_size` without holding it (see [`Server`]): the body is read
/// through a small buffer and either echoed unchanged (PROCESS) or dropped.
fn oversize<R: Read>(
    command: Command,
    length: u64,
    reader: &mut BufReader<R>,
    out: &mut dyn Write,
) -> Result<String, ProtocolError> {
    let body = reader.take(length);
    let copied = match command {
        Command::Process => {
            send(out, &result_head(Some(length), false, 0.0))?;
            copy_body(body, out)?
        }
        _ => copy_body(body, &mut std::io::sink())?,
    };
    if copied < length {
        // The answer (if any) is already on its way; only the log can tell.
        return Ok(format!(
            "oversize message cut short at {copied} of {length} bytes"
        ));
    }
    match command {
        Command::Process => {}
        Command::Headers | Command::Tell => {
            return Err(ProtocolError {
                status: Status::DataErr,
                message: format!("message of {length} bytes is over the server's --max-size"),
            });
        }
        _ => send(out, &result_head(Some(0), false, 0.0))?,
    }
    Ok(format!(
        "oversize message of {length} bytes, not classified"
    ))
}

fn copy_body(mut body: impl Read, out: &mut dyn Write) -> Result<u64, ProtocolError> {
    std::io::copy(&mut body, out).map_err(|e| protocol::read_error(&e))
}
