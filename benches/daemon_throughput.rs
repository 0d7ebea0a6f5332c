//! The maildir daemon on a backlog: 5,000 messages from the corpus (the SpamAssassin corpus
//! when fetched, else the sample, cycled) waiting in an inbox's `new/`; prints messages filed
//! per second from the daemon's start (every move fsynced), moving untouched and with
//! `--add-headers` (copies, each written and fsynced), then the CPU the idle daemon uses over
//! five seconds. The daemon is the release binary, `target/release/spamsort daemon`.
//!
//! Run: `cargo build --release && cargo bench --bench daemon_throughput [-- MESSAGES]`

mod common;

use spamsort::{SpamFilter, TrainParams};
use std::io::BufRead;
use std::path::Path;
use std::time::{Duration, Instant};

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesized command: utime and stime are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields
        .get(11)
        .and_then(|u| u.parse::<u64>().ok())
        .unwrap_or(0)
        + fields
            .get(12)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
}

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

fn main() {
    let total: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5000);
    let (name, corpus) = common::corpus();
    let mut filter = SpamFilter::train(&corpus, &TrainParams::default()).expect("train");
    let work = tempfile::tempdir().expect("temp dir");
    let model = work.path().join("model.spamsort");
    filter
        .save(&spamsort::model_file::lock_for_update(&model).expect("lock"))
        .expect("save");
    let binary = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/spamsort");
    assert!(
        binary.exists(),
        "build the daemon first: cargo build --release"
    );
    println!("daemon on a backlog of {total} messages from {name}");
    for (label, extra) in [
        ("moved untouched", None),
        ("--add-headers", Some("--add-headers")),
    ] {
        let root = work.path().join(label.trim_start_matches('-'));
        let inbox = root.join("inbox");
        for sub in ["cur", "new", "tmp"] {
            std::fs::create_dir_all(inbox.join(sub)).unwrap();
        }
        for i in 0..total {
            let (m, _) = &corpus.messages[i % corpus.messages.len()];
            std::fs::write(inbox.join("new").join(format!("{i}.M{i}.bench")), &m.bytes).unwrap();
        }
        let mut cmd = std::process::Command::new(&binary);
        cmd.arg("daemon")
            .arg("--model")
            .arg(&model)
            .arg("--inbox")
            .arg(&inbox)
            .arg("--spam")
            .arg(root.join("spam"))
            .arg("--ham")
            .arg(root.join("ham"))
            .args(extra)
            .env("SPAMSORT_LOG", "warn")
            .stderr(std::process::Stdio::piped());
        let start = Instant::now();
        let mut daemon = cmd.spawn().expect("start the daemon");
        let stderr = daemon.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                eprintln!("{line}");
            }
        });
        while count(&inbox.join("new")) > 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        let elapsed = start.elapsed();
        let filed = count(&root.join("spam/new")) + count(&root.join("ham/new"));
        println!(
            "  {label:<16} {:>6.0} messages/s ({filed} filed in {:.2} s, process start and model load included)",
            filed as f64 / elapsed.as_secs_f64(),
            elapsed.as_secs_f64()
        );
        if extra.is_none() {
            let pid = daemon.id();
            let before = cpu_ticks(pid);
            std::thread::sleep(Duration::from_secs(5));
            let ticks = cpu_ticks(pid) - before;
            println!("  idle: {ticks} CPU ticks (1/100 s) in 5 s of waiting");
        }
        let _ = daemon.kill();
        let _ = daemon.wait();
    }
}
