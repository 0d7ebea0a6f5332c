//! Signals of the long-running commands (`serve`, `daemon`): SIGHUP reloads the model, SIGTERM
//! and SIGINT stop after the work at hand. Both tell a systemd `Type=notify` unit when they are
//! ready and when they stop (see [`super::readiness`]). And SIGXFSZ, for every command: see
//! [`survive_file_size_limit`].

use super::readiness;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};

/// Makes a write past the file-size limit (`ulimit -f`, `RLIMIT_FSIZE`) fail with `EFBIG`
/// ("File too large"), reported as any failed write is (the save or dump it belonged to
/// abandoned, its temporary file removed, the cause said once), instead of SIGXFSZ killing the
/// process in the middle of it without a word. Caught by a handler that does nothing (through
/// signal-hook, safe code), not ignored: ignoring a signal takes an `unsafe` call, which the
/// crates keep to the few places that have no other way. `main` calls it first thing; a failure
/// to install it leaves the default, which loses nothing either (saves are atomic, a torn
/// journal record is cut off by the next learn).
pub fn survive_file_size_limit() {
    let unread = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(SIGXFSZ, unread) {
        tracing::debug!("SIGXFSZ keeps its default action: {e}");
    }
}

/// Runs `work` while a thread answers signals: SIGHUP calls `reload`, the first SIGTERM or
/// SIGINT calls `stop` (which must make `work` return). The thread ends with `work`.
/// READY=1 goes to the service manager just before `work` (so the sockets or maildirs `work`
/// serves must be open by then), STOPPING=1 just before `stop`.
pub fn run_with_signals<T>(
    reload: impl Fn() + Send + 'static,
    stop: impl FnOnce() + Send + 'static,
    work: impl FnOnce() -> T,
) -> anyhow::Result<T> {
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    let handle = signals.handle();
    let watcher = std::thread::spawn(move || {
        for signal in signals.forever() {
            if signal == SIGHUP {
                reload();
            } else {
                readiness::stopping();
                stop();
                break;
            }
        }
    });
    // Only now: a service manager may send SIGHUP or SIGTERM as soon as it hears READY=1.
    readiness::ready();
    let result = work();
    handle.close();
    let _ = watcher.join();
    Ok(result)
}
