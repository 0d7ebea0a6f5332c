//! Log output of the long-running commands (`serve`, `daemon`): to systemd's journal, as
//! structured entries with their priority, when stderr is the journal's stream (a systemd
//! service: see `contrib/`); otherwise one line per event on stderr, with a UTC timestamp.

use tracing_subscriber::prelude::*;

/// Installs the logger; `SPAMSORT_LOG=debug|info|warn|error` sets the level (info).
pub fn init() {
    let level = std::env::var("SPAMSORT_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
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
