//! Log output. Of the long-running commands (`serve`, `daemon`): to systemd's journal, as
//! structured entries with their priority, when stderr is the journal's stream (a systemd
//! service: see `contrib/`); otherwise one line per event on stderr, with a UTC timestamp. Of
//! every other command: the library's warnings (a model file loaded without its damaged tail,
//! a journal that cannot be compacted, ...) on stderr, as `spamsort: warning: ...` lines.

use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, format};
use tracing_subscriber::prelude::*;

/// The level `SPAMSORT_LOG=debug|info|warn|error` sets, else `default`.
fn level(default: tracing::Level) -> tracing::Level {
    std::env::var("SPAMSORT_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(default)
}

// Both loggers are built with `log_internal_errors(false)`: a line that cannot be written to
// stderr (a full disk under the log, a closed pipe to a logger, /dev/full) is lost, and the
// command goes on. Otherwise tracing-subscriber says so with `eprintln!` on that same stderr,
// which panics: the daemon and `serve` died at their first log line (auditF repro-2).

/// Installs the logger of a command that runs once: events from warnings up (or the level of
/// `SPAMSORT_LOG`) on stderr, one line each, `spamsort: LEVEL: message`, as its errors are
/// said; without it the library's warnings went unseen.
pub fn init_for_command() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level(tracing::Level::WARN))
        // Set before the format, which keeps it (only the default format has the setter).
        .log_internal_errors(false)
        .event_format(Plain)
        .try_init();
}

/// The format of [`init_for_command`]'s lines.
struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "info",
            tracing::Level::DEBUG => "debug",
            tracing::Level::TRACE => "trace",
        };
        write!(writer, "spamsort: {level}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Installs the logger of `serve` and `daemon`; `SPAMSORT_LOG=debug|info|warn|error` sets the
/// level (info).
pub fn init() {
    let level = level(tracing::Level::INFO);
    // Falls back to stderr if the journal's socket cannot be reached (the lines still reach
    // the journal through the stream).
    if stderr_is_journal()
        && let Ok(journal) = tracing_journald::layer()
    {
        let _ = tracing_subscriber::registry()
            .with(tracing_subscriber::filter::LevelFilter::from_level(level))
            .with(journal.with_syslog_identifier("spamsort".into()))
            .try_init();
        return;
    }
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        .with_ansi(false)
        .log_internal_errors(false)
        .try_init();
}

/// True if stderr is the stream systemd connected to the journal: `JOURNAL_STREAM` names its
/// device and inode (systemd.exec(5)), and a process whose stderr was redirected since keeps
/// the variable but not the stream.
fn stderr_is_journal() -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(stream) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    std::fs::metadata("/proc/self/fd/2")
        .is_ok_and(|m| names_stream(&stream.to_string_lossy(), m.dev(), m.ino()))
}

/// True if `JOURNAL_STREAM`'s value `DEVICE:INODE` (decimal) is this device and inode.
fn names_stream(value: &str, dev: u64, ino: u64) -> bool {
    value
        .split_once(':')
        .and_then(|(d, i)| Some((d.parse::<u64>().ok()?, i.parse::<u64>().ok()?)))
        == Some((dev, ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_stream_is_recognised_by_device_and_inode_only() {
        assert!(names_stream("9:12345", 9, 12345));
        assert!(!names_stream("9:12345", 9, 12346));
        assert!(!names_stream("8:12345", 9, 12345));
        assert!(!names_stream("9-12345", 9, 12345));
        assert!(!names_stream("", 9, 12345));
        assert!(!names_stream("9:x", 9, 12345));
    }
}
