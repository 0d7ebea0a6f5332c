//! Readiness for systemd `Type=notify` units: `serve` and `daemon` say READY=1 once they listen
//! or watch, and STOPPING=1 when asked to stop. Without NOTIFY_SOCKET (not started by systemd)
//! nothing is sent.

use sd_notify::NotifyState;

/// Tells the service manager the service is ready. A failed notice is logged, never fatal:
/// the service works either way, and systemd reports a unit that never became ready.
pub fn ready() {
    send(&[NotifyState::Ready]);
}

/// Tells the service manager the service is stopping (after a SIGTERM or SIGINT).
pub fn stopping() {
    send(&[NotifyState::Stopping]);
}

fn send(states: &[NotifyState]) {
    if let Err(e) = sd_notify::notify(states) {
        tracing::warn!("cannot notify the service manager (NOTIFY_SOCKET): {e}");
    }
}
