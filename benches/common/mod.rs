//! Shared by the criterion benches: the corpus they run on, the `spamsort` binary's
//! allocator, so the figures are the binary's, and a process's memory as /proc tells it;
//! `served.rs` runs the server for the spamd benches.

#[allow(dead_code)] // only the spamd benches use it
pub mod served;

use spamsort::LabeledCorpus;
use std::path::Path;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The SpamAssassin corpus when it has been fetched (`corpus/fetch-spamassassin.sh`), else the
/// committed sample; with its name.
pub fn corpus() -> (String, LabeledCorpus) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let full = root.join("spamassassin");
    let dir = if full.join("ham").is_dir() {
        full
    } else {
        root.join("sample")
    };
    let corpus = LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
        eprintln!("{e}")
    })
    .expect("corpus readable");
    (
        dir.file_name().unwrap().to_string_lossy().into_owned(),
        corpus,
    )
}

/// A `/proc/PID/status` memory field (`VmRSS:`, `VmHWM:`) of process `pid`, in KiB (0 once it
/// has exited).
#[allow(dead_code)] // only the benches of long-running processes use it
pub fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// CPU time (user and system, all threads, in seconds) process `pid` (`"self"`: this one) has
/// used so far, from `/proc/PID/stat` (0 once it has exited).
#[allow(dead_code)] // only the benches of long-running processes use it
pub fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces: state is
    // the first, utime and stime the 12th and 13th.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = (after_name.split_whitespace().skip(11).take(2))
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks as f64 / clock_ticks_per_second()
}

/// The kernel's clock ticks per second for `/proc` times (`getconf CLK_TCK`; 100 if unknown).
fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The bench's numeric command-line arguments (others, such as cargo's `--bench`, skipped),
/// each one not given taken from `defaults`.
#[allow(dead_code)] // only the benches with arguments use it
pub fn numbers<const N: usize>(defaults: [usize; N]) -> [usize; N] {
    let mut given = std::env::args().skip(1).filter_map(|a| a.parse().ok());
    defaults.map(|d| given.next().unwrap_or(d))
}
