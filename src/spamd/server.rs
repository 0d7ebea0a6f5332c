//! The spamd-compatible server's public face: its settings, addresses, binding, the worker
//! threads and the handle that stops or reloads it. The I/O lives in `reactor.rs`, the
//! answers in `answer.rs`.
//!
//! One readiness-driven I/O thread plus a fixed pool of worker threads, not a thread per
//! connection and not async: a worker blocked reading a request head is a worker an idle or
//! slow client holds, so with threads per connection a few hundred idle connections (or one
//! slow reader with `--max-connections 1`) keep a PING waiting. The I/O thread reads every head
//! and body and writes every answer without blocking, so idle and slow clients cost a socket
//! and a few bytes each, not a worker, and one deadline per connection covers reading,
//! answering and writing. The workers only do the CPU-bound part (tokenize and score, about a
//! tenth of a millisecond; TELL's save), which threads do as fast as an event loop would, with
//! no runtime (tokio would buy nothing here: one epoll loop is all the I/O concurrency
//! needed). `mio` is the thin, well-kept epoll layer under tokio itself.
//!
//! Bounded by construction (see `reactor.rs`): connections held (`max_open`, further ones
//! evict the oldest idle one or wait in the kernel's backlog), bytes per request head
//! (`MAX_HEAD`), requests holding a message or an answer (`max_connections`, each at most
//! `--max-size` in memory), and time per connection (`--timeout`).

use super::answer::{self, Context};
use super::reactor::{Done, Job, Limits, Listener, Reactor, WAKER};
use crate::filter::shared::SharedFilter;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Messages larger than this are not classified (see [`Server`]).
    pub max_size: u64,
    /// Requests served at once: worker threads, and requests holding a message or an answer.
    /// PING is answered without one.
    pub max_connections: usize,
    /// Connections held open at once, idle ones included (a further client evicts the oldest
    /// connection that has not sent its request within 0.2 s, or waits in the kernel's
    /// backlog). Lowered at
    /// [`Server::run`] to fit the process's open-file limit.
    pub max_open: usize,
    /// Time allowed for a whole request, from accepting the connection to the last byte of
    /// the answer: a client that sends or reads too slowly is cut off then. Zero cuts off
    /// every request but a PING already in when its connection is accepted (`spamsort serve`
    /// refuses it).
    pub timeout: Duration,
    /// Accept TELL (learning). Off by default: anyone who can reach the server could otherwise
    /// teach it to pass their spam.
    pub allow_tell: bool,
    /// Per-user model files, picked by a request's `User:` header. A request without one, or
    /// whose user has no model file yet, is answered with the shared model; a user's TELL
    /// learns into the user's file, started from a copy of the shared model if missing. Each
    /// request of a user with a file loads it (so `spamsort learn` on it counts at once).
    /// `None` (the default): one shared model for every user, `User:` ignored.
    pub user_models: Option<super::UserModels>,
    /// With `user_models`: the most per-user model files there may be (default
    /// [`DEFAULT_MAX_USER_MODELS`]). A TELL that would make a user's file while the template
    /// already names this many existing files (see [`UserModels::count`](super::UserModels::count))
    /// is refused `EX_CANTCREAT` and learns nothing, so clients naming ever new users cannot
    /// fill the disk: the files take at most this many times a model file's size limit (32
    /// MiB unless set with `spamsort prune --max-model-bytes`; a user's file starts as a copy
    /// of the shared model and keeps its limit), besides a lock file of 0 bytes each.
    pub max_user_models: usize,
    /// Where an oversize PROCESS message is spooled while it arrives (an unlinked file), to
    /// be returned unchanged. Default `/var/tmp` (disk on common systems, where `/tmp` is
    /// often memory), or the system's temporary directory where there is no `/var/tmp`.
    pub spool_dir: PathBuf,
    /// Bytes of oversize PROCESS messages spooled at once, all requests together (default 1
    /// GiB); each one's bytes are taken from the moment its head is read until its answer is
    /// sent or its connection closed. A message that does not fit in what is left is read
    /// through and answered `EX_DATAERR`, so the client passes on the copy it holds (spamc
    /// does, and exits 0, unless started with `-x`).
    pub max_spool: u64,
}

/// The default [`ServerConfig::max_user_models`].
pub const DEFAULT_MAX_USER_MODELS: usize = 100;

/// The default [`ServerConfig::spool_dir`].
pub fn default_spool_dir() -> PathBuf {
    let var_tmp = Path::new("/var/tmp");
    if var_tmp.is_dir() {
        var_tmp.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_size: 10 * 1024 * 1024,
            max_connections: 16,
            max_open: 4096,
            timeout: Duration::from_secs(30),
            allow_tell: false,
            user_models: None,
            max_user_models: DEFAULT_MAX_USER_MODELS,
            spool_dir: default_spool_dir(),
            max_spool: 1 << 30,
        }
    }
}

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix domain socket path (a stale socket file there is replaced; one a server listens
    /// on is refused, as a TCP address in use is).
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

/// Control of a running server from another thread (a signal handler's, or a test's).
#[derive(Clone)]
pub struct ServerHandle {
    stop: Arc<AtomicBool>,
    waker: Arc<mio::Waker>,
    addresses: Vec<Address>,
    filter: Arc<SharedFilter>,
}

impl ServerHandle {
    /// Stops accepting and closes connections that have not sent a whole request; requests
    /// in progress finish (within their deadline), then [`Server::run`] returns.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }

    /// Loads the model file again; on failure the model in use stays and the error is returned.
    pub fn reload(&self) -> crate::Result<()> {
        self.filter.reload()
    }
}

/// A bound spamd-compatible server. Every request is read whole before it is answered, as
/// spamd does (a client such as spamc sends everything before it reads). Oversize messages
/// (over `max_size`) are never held in memory and are answered unclassified, as spamc itself
/// treats messages over its size limit: CHECK, SYMBOLS and REPORT say `Spam: False ; 0.0 /
/// 5.0`, PROCESS returns the message unchanged (spooled to an unlinked temporary file while it
/// arrives), HEADERS and TELL answer `EX_DATAERR`.
pub struct Server {
    poll: mio::Poll,
    listeners: Vec<Listener>,
    handle: ServerHandle,
    config: ServerConfig,
    /// The socket files this server made, each with its file's identity (device, inode): only
    /// while a path still names that file is it removed at the end (another server may have
    /// replaced a stale-looking one meanwhile).
    sockets: Vec<(PathBuf, Option<(u64, u64)>)>,
}

impl Server {
    /// Binds every address. A TCP port 0 picks a free port: see [`Server::addresses`].
    pub fn bind(
        addresses: &[Address],
        filter: Arc<SharedFilter>,
        config: ServerConfig,
    ) -> crate::Result<Server> {
        let io_error = |what: String| {
            move |source| crate::Error::Io {
                path: PathBuf::from(&what),
                source,
            }
        };
        let poll = mio::Poll::new().map_err(io_error("epoll".into()))?;
        let mut listeners = Vec::new();
        let mut bound = Vec::new();
        let mut sockets = Vec::new();
        for a in addresses {
            let io = io_error(a.to_string());
            let mut listener = match a {
                Address::Tcp(addr) => {
                    let l = mio::net::TcpListener::bind(*addr).map_err(&io)?;
                    // A deeper backlog than mio's 128, so a burst of clients is not refused.
                    rustix::net::listen(&l, BACKLOG).map_err(|e| io(e.into()))?;
                    bound.push(Address::Tcp(l.local_addr().map_err(&io)?));
                    Listener::Tcp(l)
                }
                Address::Unix(path) => {
                    remove_stale_socket(path).map_err(&io)?;
                    let l = mio::net::UnixListener::bind(path).map_err(&io)?;
                    rustix::net::listen(&l, BACKLOG).map_err(|e| io(e.into()))?;
                    bound.push(a.clone());
                    sockets.push((path.clone(), socket_id(path)));
                    Listener::Unix(l)
                }
            };
            let token = mio::Token(listeners.len());
            poll.registry()
                .register(listener.source(), token, mio::Interest::READABLE)
                .map_err(&io)?;
            listeners.push(listener);
        }
        let waker = mio::Waker::new(poll.registry(), WAKER).map_err(io_error("epoll".into()))?;
        Ok(Server {
            poll,
            listeners,
            handle: ServerHandle {
                stop: Arc::new(AtomicBool::new(false)),
                waker: Arc::new(waker),
                addresses: bound,
                filter,
            },
            config,
            sockets,
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
    /// Fails if no worker thread can be started (the system refused it, as under a tight
    /// `ulimit -v`); with fewer than configured, it logs how many and serves with them.
    pub fn run(self) -> std::io::Result<()> {
        let Server {
            poll,
            listeners,
            handle,
            config,
            sockets,
        } = self;
        let workers = config.max_connections.max(1);
        // Each connection is a file descriptor, and so is each spooled oversize message.
        let reserve = 64 + workers as u64;
        let fd_limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let max_open = config
            .max_open
            .min(usize::try_from(fd_limit.saturating_sub(reserve)).unwrap_or(usize::MAX))
            .max(1);
        if max_open < config.max_open {
            tracing::warn!(
                "holding at most {max_open} connections: the open-file limit is {fd_limit} \
                 (raise it with ulimit -n)"
            );
        }
        let limits = |slots| Limits {
            max_open,
            slots,
            timeout: config.timeout,
        };
        let context = Context {
            filter: handle.filter.clone(),
            users: config.user_models.clone(),
            max_user_models: config.max_user_models,
            making_user_model: Mutex::new(()),
            max_size: config.max_size,
        };
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let job_rx = Mutex::new(job_rx);
        let served = std::thread::scope(|s| {
            let mut started = 0;
            for _ in 0..workers {
                let (job_rx, done_tx, context) = (&job_rx, done_tx.clone(), &context);
                let waker = &handle.waker;
                let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                    loop {
                        // The lock is only held while waiting for the next job.
                        let next = job_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok(job) = next else { break };
                        let done = work(job, context);
                        if done_tx.send(done).is_err() {
                            break;
                        }
                        let _ = waker.wake();
                    }
                });
                if let Err(e) = spawned {
                    if started == 0 {
                        return Err(e);
                    }
                    tracing::warn!("serving with {started} of {workers} workers: {e}");
                    break;
                }
                started += 1;
            }
            drop(done_tx);
            Reactor::new(
                poll,
                listeners,
                limits(started),
                &config,
                &handle.stop,
                job_tx,
                done_rx,
            )
            .run();
            Ok(())
        });
        for (path, id) in &sockets {
            if id.is_some() && socket_id(path) == *id {
                let _ = std::fs::remove_file(path);
            }
        }
        served
    }
}

/// The listen backlog: how many clients the kernel queues before the server accepts them.
const BACKLOG: i32 = 1024;

/// Answers one job on a worker. A panic (a bug) answers `EX_SOFTWARE` instead of taking the
/// worker, and its request slot, with it.
fn work(job: Job, context: &Context) -> Done {
    let Job {
        token,
        request,
        message,
    } = job;
    let answered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        answer::answer(&request, &message, context)
    }));
    let (answer, result) = answered.unwrap_or_else(|_| {
        answer::failure(&super::protocol::ProtocolError {
            status: super::protocol::Status::Software,
            message: "internal error while answering".into(),
        })
    });
    Done {
        token,
        answer,
        result,
    }
}

/// Raises this process's soft limit on open files to its hard limit, as servers that hold many
/// connections do, and returns the soft limit now in force.
pub fn raise_open_file_limit() -> std::io::Result<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        setrlimit(Resource::Nofile, limit)?;
    }
    Ok(getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX))
}

/// Removes a stale socket file at `path` (one no process listens on: left by a server that was
/// killed), so the server can bind there. A socket a server still accepts connections on is
/// refused (`AddrInUse`), as a TCP address in use is: replacing it would cut that server off
/// from every new client, and its removal of the file when it stops would cut off this one.
fn remove_stale_socket(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        return Ok(());
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AddrInUse,
            "another server listens on this socket",
        ));
    }
    let _ = std::fs::remove_file(path);
    Ok(())
}

/// The identity (device, inode) of the file at `path` itself, not following a link.
fn socket_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}
