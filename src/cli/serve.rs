//! `spamsort serve`: the spamd-compatible server in the foreground. SIGTERM and SIGINT stop it
//! after the requests in progress; SIGHUP reloads the model file.

use super::ExitStatus;
use super::args::{HeaderArgs, ModelArgs, VerdictArgs};
use super::logging;
use super::signals::run_with_signals;
use anyhow::Context;
use spamsort::filter::shared::SharedFilter;
use spamsort::spamd::{
    Address, Server, ServerConfig, UserModels, default_spool_dir, raise_open_file_limit,
};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

// Arguments of `spamsort serve` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TCP address to listen on; repeatable [default: 127.0.0.1:783 unless --socket is given].
    /// Addresses other than loopback expose the filter to the network: firewall them.
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Vec<SocketAddr>,
    /// Unix domain socket to listen on (spamc -U PATH).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Permission bits of the --socket file, in octal, as spamd's --socketmode (e.g. 0660 for
    /// spamc run by the members of the server's group) [default: as the umask leaves them].
    #[arg(long, value_name = "OCTAL", value_parser = socket_mode, requires = "socket")]
    socket_mode: Option<u32>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    verdict: VerdictArgs,
    #[command(flatten)]
    headers: HeaderArgs,
    /// Messages larger than this are answered unclassified, never held in memory.
    #[arg(long, value_name = "BYTES", default_value_t = ServerConfig::default().max_size)]
    max_size: u64,
    /// Requests served at once; more clients wait for a free worker (PING never waits).
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..))]
    max_connections: u16,
    /// Connections held open at once, idle ones included; past it, a new client waits, or the
    /// oldest connection that has not sent its request within 0.2 s is closed to make room.
    #[arg(long, value_name = "N", default_value_t = ServerConfig::default().max_open,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_open: usize,
    /// Seconds a client gets for a whole request, from connecting to the last byte of the
    /// answer; a client that sends or reads more slowly is cut off. At least 1: with 0 every
    /// request would be cut off before it is read.
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Accept TELL (spamc -L, -C): learning from clients. Anyone who can connect can then
    /// change the model, so only enable it where the clients are trusted.
    #[arg(long)]
    allow_tell: bool,
    /// Per-user model files: a path in which %u stands for spamd's `User:` (spamc -u), such as
    /// /var/lib/spamsort/%u.spamsort. A user's request is answered with the user's file once
    /// it exists, else with --model; a user's TELL learns into the user's file, started from a
    /// copy of --model. User names with '/', '..', control characters, a leading '.' or over
    /// 64 bytes are refused.
    #[arg(long, value_name = "TEMPLATE", value_parser = |s: &str| UserModels::new(s))]
    user_models: Option<UserModels>,
    /// The most per-user model files --user-models may hold: a TELL that would make one more
    /// is refused (EX_CANTCREAT, 73), so clients naming ever new users cannot fill the disk.
    /// Each file takes at most the model file's size limit (32 MiB by default).
    #[arg(long, value_name = "N", default_value_t = spamsort::spamd::DEFAULT_MAX_USER_MODELS)]
    max_user_models: usize,
    /// Directory where a PROCESS message over --max-size is held (an unlinked file) while it
    /// arrives, to be returned unchanged. Put it on disk: a /tmp that is memory (tmpfs) would
    /// hold it in memory [default: /var/tmp, or the system's temporary directory without one]
    #[arg(long, value_name = "DIR")]
    spool_dir: Option<std::path::PathBuf>,
    /// Bytes the spool holds at once, all requests together. A PROCESS message over
    /// --max-size that does not fit in what is left is read through and answered EX_DATAERR,
    /// and the client passes on its own copy (spamc does, unless run with -x)
    #[arg(long, value_name = "BYTES", default_value_t = ServerConfig::default().max_spool)]
    max_spool: u64,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitStatus> {
    logging::init();
    let config = args.model.config()?;
    let policy = args.verdict.policy(&config, Some(&args.headers))?;
    let path = args.model.path(&config)?;
    let mut addresses: Vec<Address> = args.listen.iter().copied().map(Address::Tcp).collect();
    addresses.extend(args.socket.clone().map(Address::Unix));
    if addresses.is_empty() {
        addresses.push(Address::Tcp(SocketAddr::from(([127, 0, 0, 1], 783))));
    }
    for a in &args.listen {
        if !a.ip().is_loopback() {
            tracing::warn!("listening on {a}, which is not loopback: firewall it");
        }
    }
    // Each connection held is a file descriptor: take what the hard limit allows.
    if let Err(e) = raise_open_file_limit() {
        tracing::warn!("cannot raise the open-file limit: {e}");
    }
    let filter = Arc::new(SharedFilter::load(&path, policy)?);
    let server = Server::bind(
        &addresses,
        filter,
        ServerConfig {
            max_size: args.max_size,
            max_connections: usize::from(args.max_connections),
            max_open: args.max_open,
            timeout: Duration::from_secs(args.timeout),
            allow_tell: args.allow_tell,
            user_models: args.user_models,
            max_user_models: args.max_user_models,
            spool_dir: args.spool_dir.unwrap_or_else(default_spool_dir),
            max_spool: args.max_spool,
        },
    )?;
    if let (Some(mode), Some(socket)) = (args.socket_mode, &args.socket) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("setting the mode of {}", socket.display()))?;
    }
    let (reload, stop) = (server.handle(), server.handle());
    run_with_signals(
        move || match reload.reload() {
            Ok(()) => tracing::info!("model reloaded"),
            Err(e) => tracing::error!(
                "reload failed, keeping the model in use: {}",
                spamsort::error::ErrorChain(&e)
            ),
        },
        move || {
            tracing::info!("stopping after the requests in progress");
            stop.shutdown();
        },
        || {
            // Announced only once the signals are handled: whoever waits for this line (a
            // service manager, a test) may send SIGHUP or SIGTERM at once.
            for a in server.addresses() {
                tracing::info!("listening on {a}");
            }
            server.run()
        },
    )?
    .context("cannot serve")?;
    tracing::info!("stopped");
    Ok(ExitStatus::Success)
}

/// `--socket-mode`: permission bits in octal (a leading 0 optional), at most 0777.
fn socket_mode(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|&mode| mode <= 0o777)
        .ok_or_else(|| format!("{text:?} is no octal mode from 0 to 0777"))
}
