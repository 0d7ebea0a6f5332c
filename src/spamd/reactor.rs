//! The server's one I/O thread: a readiness loop (mio: epoll) that accepts connections, reads
//! every request head and body without blocking, hands complete requests to the worker threads
//! (`server.rs`), writes their answers, and enforces each connection's deadline.
//!
//! Each connection moves through `Head` (reading the request head) → `Queued` (head in,
//! waiting for one of `max_connections` request slots) → `Body` (reading the message) →
//! `Working` (a worker answers) → `Sending` (writing the answer) → `Lingering` (draining what
//! the client still sends, so closing does not reset the connection under the answer). PING,
//! SKIP and errors found in the head are answered here, without a slot, so no number of idle,
//! slow or busy clients can keep a PING waiting.
//!
//! Bounds, by construction: at most `max_open` connections are held (when full and a client
//! is waiting, the oldest one still in `Head` after `EVICT_GRACE` is closed to make room for it;
//! if none is, accepting pauses and the kernel's
//! backlog holds new clients); a head is at most `MAX_HEAD` bytes; at most `max_connections`
//! requests hold a slot, and only they hold a message (at most `--max-size` bytes in memory,
//! or an oversize PROCESS spooled to disk) or an answer. Every connection is closed at its
//! deadline, `--timeout` after it was accepted, whatever state it is in: a client that reads
//! its answer slowly is cut off (reset, so the kernel drops the unsent rest too).

use super::answer::{self, Plan};
use super::incoming::{Body, Head, HeadProgress};
use super::protocol::{Command, ProtocolError, Request, Status};
use mio::{Events, Interest, Poll, Token};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The token of the waker that workers and [`super::ServerHandle`] use.
pub(super) const WAKER: Token = Token(usize::MAX);
/// Bytes read or written in one go.
const CHUNK: usize = 64 * 1024;
/// After the answer, what the client still sends is read and dropped up to this much...
const LINGER_BYTES: u64 = 1 << 20;
/// ...and this long (never past the request's deadline).
const LINGER_TIME: Duration = Duration::from_secs(1);
/// How long to wait before accepting again after accept failed (out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// A connection that has not sent its request is closed to make room for a new client only
/// once it has been held this long: a client that connected and is sending is not turned away
/// (a burst of clients waits in the kernel's backlog meanwhile).
const EVICT_GRACE: Duration = Duration::from_millis(200);

/// A listening socket.
pub(super) enum Listener {
    Tcp(mio::net::TcpListener),
    Unix(mio::net::UnixListener),
}

impl Listener {
    fn accept(&self) -> std::io::Result<Stream> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(s, _)| Stream::Tcp(s)),
            Listener::Unix(l) => l.accept().map(|(s, _)| Stream::Unix(s)),
        }
    }

    pub(super) fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Listener::Tcp(l) => l,
            Listener::Unix(l) => l,
        }
    }
}

/// A connected client.
enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn shutdown(&self, how: std::net::Shutdown) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        };
    }

    /// Makes closing reset a TCP connection, dropping whatever the kernel still holds to send.
    fn abort_on_close(&self) {
        if let Stream::Tcp(s) = self {
            let _ = rustix::net::sockopt::set_socket_linger(s, Some(Duration::ZERO));
        }
    }

    fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Stream::Tcp(s) => s,
            Stream::Unix(s) => s,
        }
    }
}

/// A complete request for a worker.
pub(super) struct Job {
    pub(super) token: Token,
    pub(super) request: Request,
    pub(super) message: Vec<u8>,
}

/// A worker's answer to a [`Job`].
pub(super) struct Done {
    pub(super) token: Token,
    pub(super) answer: Vec<u8>,
    pub(super) result: String,
}

enum State {
    Head(Head),
    Queued {
        request: Request,
        body: Body,
        rest: Vec<u8>,
    },
    Body {
        request: Request,
        body: Body,
    },
    Working,
    Sending(Outgoing),
    Lingering {
        drained: u64,
    },
}

/// An answer being written: `bytes` from `pos`, then what is left of the spool file.
struct Outgoing {
    bytes: Vec<u8>,
    pos: usize,
    spool: Option<(std::fs::File, u64)>,
    sent: u64,
    total: u64,
}

struct Connection {
    stream: Stream,
    started: Instant,
    deadline: Instant,
    /// When this connection's timer fires (its deadline, or the end of lingering).
    timer: Instant,
    state: State,
    command: Option<Command>,
    /// What the request came to, for the log line.
    result: String,
    /// Holds one of the `max_connections` request slots.
    slot: bool,
    /// Bytes of the spool this connection's oversize message holds (see
    /// [`super::ServerConfig::max_spool`]).
    spooled: u64,
}

/// What reading or writing a connection came to.
enum Step {
    /// Go on with the connection's (possibly new) state.
    Again,
    /// Nothing more to do until the next readiness event, timer or answer.
    Wait,
}

/// The settings the loop needs.
pub(super) struct Limits {
    /// Connections held at once.
    pub(super) max_open: usize,
    /// Requests holding a slot at once.
    pub(super) slots: usize,
    /// Each connection's time from accept to close.
    pub(super) timeout: Duration,
}

/// The I/O loop's state.
pub(super) struct Reactor<'a> {
    poll: Poll,
    listeners: Vec<Listener>,
    connections: BTreeMap<Token, Connection>,
    timers: BTreeSet<(Instant, Token)>,
    queue: VecDeque<Token>,
    free_slots: usize,
    /// Bytes of the spool the connections hold, all together.
    spooled: u64,
    next_token: usize,
    /// A listener reported readiness and was not yet accepted until it would block.
    accepting: bool,
    accept_retry: Option<Instant>,
    stopping: bool,
    limits: Limits,
    config: &'a super::ServerConfig,
    stop: &'a AtomicBool,
    jobs: mpsc::Sender<Job>,
    done: mpsc::Receiver<Done>,
    scratch: Vec<u8>,
}

impl<'a> Reactor<'a> {
    /// A loop over `listeners` (already registered with `poll` as tokens 0, 1, ...).
    pub(super) fn new(
        poll: Poll,
        listeners: Vec<Listener>,
        limits: Limits,
        config: &'a super::ServerConfig,
        stop: &'a AtomicBool,
        jobs: mpsc::Sender<Job>,
        done: mpsc::Receiver<Done>,
    ) -> Self {
        Reactor {
            poll,
            next_token: listeners.len(),
            listeners,
            connections: BTreeMap::new(),
            timers: BTreeSet::new(),
            queue: VecDeque::new(),
            free_slots: limits.slots.max(1),
            spooled: 0,
            accepting: true,
            accept_retry: None,
            stopping: false,
            limits,
            config,
            stop,
            jobs,
            done,
            scratch: vec![0; CHUNK],
        }
    }

    /// Serves until the stop flag is set (and the waker woken) and every connection is closed.
    pub(super) fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            if self.stop.load(Ordering::SeqCst) && !self.stopping {
                self.begin_stop();
            }
            if self.stopping && self.connections.is_empty() {
                return;
            }
            let now = Instant::now();
            let next = self
                .timers
                .first()
                .map(|&(t, _)| t)
                .into_iter()
                .chain(self.accept_retry)
                .min();
            let timeout = next.map(|t| t.saturating_duration_since(now));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != ErrorKind::Interrupted {
                    tracing::error!("polling failed: {e}");
                    std::thread::sleep(ACCEPT_BACKOFF);
                }
                continue;
            }
            for event in &events {
                match event.token() {
                    WAKER => {}
                    t if t.0 < self.listeners.len() => self.accepting = true,
                    t => self.drive(t),
                }
            }
            self.collect_answers();
            self.fire_timers();
            self.grant_slots();
            self.accept();
        }
    }

    fn begin_stop(&mut self) {
        self.stopping = true;
        for mut l in std::mem::take(&mut self.listeners) {
            let _ = self.poll.registry().deregister(l.source());
        }
        // Connections that have not sent a whole head hold no request yet: close them. The
        // others finish (each within its deadline).
        let idle: Vec<Token> = self
            .connections
            .iter()
            .filter(|(_, c)| matches!(c.state, State::Head(_)))
            .map(|(&t, _)| t)
            .collect();
        for t in idle {
            self.close(t, "closed: the server is stopping");
        }
    }

    fn accept(&mut self) {
        if !self.accepting || self.stopping {
            return;
        }
        if let Some(t) = self.accept_retry {
            if Instant::now() < t {
                return;
            }
            self.accept_retry = None;
        }
        for i in 0..self.listeners.len() {
            loop {
                // When full, room is made by closing the oldest connection that has not sent its
                // request, and only for a client that is there (accepted first).
                let evict = if self.connections.len() >= self.limits.max_open {
                    match self.oldest_idle() {
                        Some((token, started)) if started.elapsed() >= EVICT_GRACE => Some(token),
                        // It may be sending yet: try again once its grace is over.
                        Some((_, started)) => {
                            self.accept_retry = Some(started + EVICT_GRACE);
                            return;
                        }
                        // Full of requests in progress: new clients wait in the backlog.
                        None => return,
                    }
                } else {
                    None
                };
                match self.listeners[i].accept() {
                    Ok(stream) => {
                        if let Some(token) = evict {
                            self.evict(token);
                        }
                        // Its request may be in already: read it before the next client comes.
                        if let Some(token) = self.open(stream) {
                            self.drive(token);
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!("accept failed: {e}");
                        self.accept_retry = Some(Instant::now() + ACCEPT_BACKOFF);
                        return;
                    }
                }
            }
        }
        self.accepting = false;
    }

    /// The oldest connection that has not sent its whole head, and when it was accepted.
    fn oldest_idle(&self) -> Option<(Token, Instant)> {
        self.connections
            .iter()
            .find(|(_, c)| matches!(c.state, State::Head(_)))
            .map(|(&t, c)| (t, c.started))
    }

    /// Closes a connection that has not sent its request, to make room for a new one.
    fn evict(&mut self, token: Token) {
        let e = ProtocolError {
            status: Status::Timeout,
            message: "connection closed to make room: send the request when connecting".into(),
        };
        self.answer_and_close(token, &e);
    }

    /// Holds a new connection; its token, or `None` if it cannot be watched (then it is closed).
    fn open(&mut self, mut stream: Stream) -> Option<Token> {
        let token = Token(self.next_token);
        self.next_token += 1;
        if let Err(e) = self.poll.registry().register(
            stream.source(),
            token,
            Interest::READABLE | Interest::WRITABLE,
        ) {
            tracing::warn!("cannot watch a new connection: {e}");
            return None;
        }
        let now = Instant::now();
        // A timeout too large to add (`--timeout` is any number of seconds) means a century.
        let deadline = now
            .checked_add(self.limits.timeout)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        self.connections.insert(
            token,
            Connection {
                stream,
                started: now,
                deadline,
                timer: deadline,
                state: State::Head(Head::default()),
                command: None,
                result: String::new(),
                slot: false,
                spooled: 0,
            },
        );
        self.timers.insert((deadline, token));
        Some(token)
    }

    /// Does everything the connection's state allows until it would block.
    fn drive(&mut self, token: Token) {
        loop {
            let Some(c) = self.connections.get(&token) else {
                return;
            };
            let step = match c.state {
                State::Head(_) => self.read_head(token),
                State::Body { .. } => self.read_body(token),
                State::Sending(_) => self.write_answer(token),
                State::Lingering { .. } => self.drain(token),
                State::Queued { .. } | State::Working => Step::Wait,
            };
            if let Step::Wait = step {
                return;
            }
        }
    }

    fn read_head(&mut self, token: Token) -> Step {
        let Some(c) = self.connections.get_mut(&token) else {
            return Step::Wait;
        };
        let State::Head(head) = &mut c.state else {
            return Step::Wait;
        };
        let room = head.room().min(CHUNK);
        let progress = match c.stream.read(&mut self.scratch[..room]) {
            Ok(0) => HeadProgress::Failed(head.error()),
            Ok(n) => head.push(&self.scratch[..n]),
            Err(e) => return self.read_failed(token, &e),
        };
        match progress {
            HeadProgress::Incomplete => {}
            HeadProgress::Complete { request, rest } => self.head_done(token, request, rest),
            HeadProgress::Failed(e) => self.fail(token, &e),
        }
        Step::Again
    }

    fn read_failed(&mut self, token: Token, e: &std::io::Error) -> Step {
        match e.kind() {
            ErrorKind::WouldBlock => Step::Wait,
            ErrorKind::Interrupted => Step::Again,
            _ => {
                self.close(token, &format!("read failed: {e}"));
                Step::Wait
            }
        }
    }

    fn head_done(&mut self, token: Token, request: Request, rest: Vec<u8>) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        c.command = Some(request.command);
        match answer::plan(&request, self.config) {
            Err(e) => self.fail(token, &e),
            Ok(Plan::Answer(bytes, result)) => self.send(token, bytes, None, result),
            Ok(Plan::Close) => {
                c.result = "skipped".into();
                self.linger(token);
            }
            Ok(Plan::Classify(length)) => self.admit(token, request, Body::in_memory(length), rest),
            Ok(Plan::Oversize { length, spool }) => {
                let room = self.config.max_spool.saturating_sub(self.spooled);
                if spool && length > room {
                    tracing::warn!(
                        "not spooling an oversize message of {length} bytes: {} of the \
                         spool's {} bytes are taken",
                        self.spooled,
                        self.config.max_spool
                    );
                }
                let body = if spool && length <= room {
                    match Body::spooled(length, &self.config.spool_dir) {
                        Ok(body) => {
                            c.spooled = length;
                            self.spooled += length;
                            body
                        }
                        Err(e) => {
                            tracing::warn!("cannot spool an oversize message: {e}");
                            Body::dropped(length)
                        }
                    }
                } else {
                    Body::dropped(length)
                };
                self.admit(token, request, body, rest);
            }
        }
    }

    /// Starts reading the body, or queues the request until a slot is free. A body that is
    /// dropped as it arrives needs no slot.
    fn admit(&mut self, token: Token, request: Request, body: Body, rest: Vec<u8>) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        if body.is_dropped() {
            self.start_body(token, request, body, &rest);
        } else if self.free_slots > 0 {
            self.free_slots -= 1;
            c.slot = true;
            self.start_body(token, request, body, &rest);
        } else {
            c.state = State::Queued {
                request,
                body,
                rest,
            };
            self.queue.push_back(token);
        }
    }

    /// Hands free slots to queued requests, first come first served.
    fn grant_slots(&mut self) {
        while self.free_slots > 0 {
            let Some(token) = self.queue.pop_front() else {
                return;
            };
            let Some(c) = self.connections.get_mut(&token) else {
                continue;
            };
            let State::Queued { .. } = c.state else {
                continue;
            };
            let State::Queued {
                request,
                body,
                rest,
            } = std::mem::replace(&mut c.state, State::Working)
            else {
                unreachable!()
            };
            self.free_slots -= 1;
            c.slot = true;
            self.start_body(token, request, body, &rest);
            self.drive(token);
        }
    }

    fn start_body(&mut self, token: Token, request: Request, mut body: Body, rest: &[u8]) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        body.push(rest);
        if body.missing() == 0 {
            self.body_done(token, request, body);
        } else {
            c.state = State::Body { request, body };
        }
    }

    fn read_body(&mut self, token: Token) -> Step {
        let Some(c) = self.connections.get_mut(&token) else {
            return Step::Wait;
        };
        let State::Body { body, .. } = &mut c.state else {
            return Step::Wait;
        };
        let want = usize::try_from(body.missing()).map_or(CHUNK, |m| m.min(CHUNK));
        match c.stream.read(&mut self.scratch[..want]) {
            Ok(0) => {
                let e = ProtocolError::protocol(format!(
                    "Content-length mismatch: expected {} bytes, got {}",
                    body.length(),
                    body.received()
                ));
                self.fail(token, &e);
            }
            Ok(n) => {
                body.push(&self.scratch[..n]);
                if body.missing() == 0 {
                    let State::Body { request, body } =
                        std::mem::replace(&mut c.state, State::Working)
                    else {
                        unreachable!()
                    };
                    self.body_done(token, request, body);
                }
            }
            Err(e) => return self.read_failed(token, &e),
        }
        Step::Again
    }

    /// The whole message is in: a worker answers it, or (oversize) it is answered here.
    fn body_done(&mut self, token: Token, request: Request, body: Body) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        let length = body.length();
        if body.is_in_memory() {
            c.state = State::Working;
            let job = Job {
                token,
                request,
                message: body.into_message(),
            };
            if self.jobs.send(job).is_err() {
                let e = ProtocolError {
                    status: Status::Software,
                    message: "the server's workers are gone".into(),
                };
                self.fail(token, &e);
            }
            return;
        }
        let spool = body.into_spool().and_then(|r| {
            r.inspect_err(|e| tracing::warn!("cannot read back a spooled message: {e}"))
                .ok()
        });
        let (head, result) = answer::oversize(request.command, length, spool.is_some());
        self.send(token, head, spool.map(|f| (f, length)), result);
    }

    fn collect_answers(&mut self) {
        while let Ok(done) = self.done.try_recv() {
            match self.connections.get(&done.token) {
                Some(c) if matches!(c.state, State::Working) => {
                    self.send(done.token, done.answer, None, done.result);
                    self.drive(done.token);
                }
                // Its connection timed out while the worker ran: the slot is free only now.
                _ => self.free_slots += 1,
            }
        }
    }

    fn send(
        &mut self,
        token: Token,
        bytes: Vec<u8>,
        spool: Option<(std::fs::File, u64)>,
        result: String,
    ) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        let total = bytes.len() as u64 + spool.as_ref().map_or(0, |s| s.1);
        c.result = result;
        c.state = State::Sending(Outgoing {
            bytes,
            pos: 0,
            spool,
            sent: 0,
            total,
        });
    }

    /// Answers `e`, then lingers.
    fn fail(&mut self, token: Token, e: &ProtocolError) {
        let (bytes, result) = answer::failure(e);
        self.send(token, bytes, None, result);
    }

    fn write_answer(&mut self, token: Token) -> Step {
        let Some(c) = self.connections.get_mut(&token) else {
            return Step::Wait;
        };
        let State::Sending(out) = &mut c.state else {
            return Step::Wait;
        };
        if out.pos == out.bytes.len() {
            match out.refill() {
                Ok(true) => {}
                Ok(false) => {
                    self.linger(token);
                    return Step::Again;
                }
                Err(e) => {
                    self.close(token, &format!("reading the spooled message failed: {e}"));
                    return Step::Wait;
                }
            }
        }
        match c.stream.write(&out.bytes[out.pos..]) {
            Ok(n) => {
                out.pos += n;
                out.sent += n as u64;
                Step::Again
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Step::Wait,
            Err(e) if e.kind() == ErrorKind::Interrupted => Step::Again,
            Err(e) => {
                self.close(token, &format!("writing the answer failed: {e}"));
                Step::Wait
            }
        }
    }

    /// The answer is out: our side closes, the slot is free, and what the client still sends
    /// is read and dropped for a while (closing with unread input would reset the connection,
    /// which can destroy the answer before the client reads it).
    fn linger(&mut self, token: Token) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        c.stream.shutdown(std::net::Shutdown::Write);
        c.state = State::Lingering { drained: 0 };
        if std::mem::take(&mut c.slot) {
            self.free_slots += 1;
        }
        self.spooled -= std::mem::take(&mut c.spooled);
        let until = c.deadline.min(Instant::now() + LINGER_TIME);
        self.timers.remove(&(c.timer, token));
        c.timer = until;
        self.timers.insert((until, token));
    }

    fn drain(&mut self, token: Token) -> Step {
        let Some(c) = self.connections.get_mut(&token) else {
            return Step::Wait;
        };
        let State::Lingering { drained } = &mut c.state else {
            return Step::Wait;
        };
        match c.stream.read(&mut self.scratch) {
            Ok(0) => self.close(token, ""),
            Ok(n) => {
                *drained += n as u64;
                if *drained >= LINGER_BYTES {
                    self.close(token, "");
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Wait,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.close(token, ""),
        }
        Step::Again
    }

    fn fire_timers(&mut self) {
        let now = Instant::now();
        while let Some(&(when, token)) = self.timers.first() {
            if when > now {
                return;
            }
            self.timers.remove(&(when, token));
            self.expire(token);
        }
    }

    /// The connection's time is up.
    fn expire(&mut self, token: Token) {
        let Some(c) = self.connections.get(&token) else {
            return;
        };
        match &c.state {
            State::Lingering { .. } => self.close(token, ""),
            State::Sending(out) => {
                let note = format!(
                    "; answer cut short at {} of {} bytes: the client read too slowly",
                    out.sent, out.total
                );
                c.stream.abort_on_close();
                self.close(token, &note);
            }
            State::Head(_) | State::Queued { .. } | State::Body { .. } | State::Working => {
                let e = protocol_timeout();
                self.answer_and_close(token, &e);
            }
        }
    }

    /// Writes the error line if the socket takes it at once, and closes.
    fn answer_and_close(&mut self, token: Token, e: &ProtocolError) {
        let Some(c) = self.connections.get_mut(&token) else {
            return;
        };
        let (bytes, result) = answer::failure(e);
        let _ = c.stream.write(&bytes);
        c.stream.shutdown(std::net::Shutdown::Both);
        c.result = result;
        self.close(token, "");
    }

    /// Forgets the connection (closing it) and logs what it came to.
    fn close(&mut self, token: Token, note: &str) {
        let Some(mut c) = self.connections.remove(&token) else {
            return;
        };
        self.timers.remove(&(c.timer, token));
        let _ = self.poll.registry().deregister(c.stream.source());
        // A worker still answering keeps the slot until it is done (see collect_answers).
        if c.slot && !matches!(c.state, State::Working) {
            self.free_slots += 1;
        }
        self.spooled -= c.spooled;
        let result = match (c.result.is_empty(), note.is_empty()) {
            (true, true) => "closed".to_string(),
            (true, false) => note.trim_start_matches("; ").to_string(),
            (false, _) => format!("{}{note}", c.result),
        };
        tracing::info!(
            "{} {result} {:.1} ms",
            c.command.map_or("-", Command::name),
            c.started.elapsed().as_secs_f64() * 1000.0
        );
    }
}

impl Outgoing {
    /// Loads the next chunk of the spool file; false when the answer is all sent.
    fn refill(&mut self) -> std::io::Result<bool> {
        let Some((file, left)) = &mut self.spool else {
            return Ok(false);
        };
        if *left == 0 {
            return Ok(false);
        }
        let want = usize::try_from(*left).map_or(CHUNK, |l| l.min(CHUNK));
        self.bytes.resize(want, 0);
        file.read_exact(&mut self.bytes)?;
        *left -= want as u64;
        self.pos = 0;
        Ok(true)
    }
}

fn protocol_timeout() -> ProtocolError {
    super::protocol::read_error(&ErrorKind::TimedOut.into())
}
