//! Log output of the long-running commands (`serve`, `daemon`): one line per event on stderr,
//! with a UTC timestamp, for systemd's journal or a terminal.

/// Installs the stderr logger; `SPAMSORT_LOG=debug|info|warn|error` sets the level (info).
pub fn init() {
    let level = std::env::var("SPAMSORT_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        .with_ansi(false)
        .try_init();
}
