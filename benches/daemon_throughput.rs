//! The maildir daemon on a backlog: 5,000 messages from the corpus (the SpamAssassin corpus
//! when fetched, else the sample, cycled) waiting in an inbox's `new/`; prints messages filed
//! per second from the daemon's start (every move fsynced), moving untouched and with
//! `--add-headers` (copies, each written and fsynced), the daemon's resident memory (sampled
//! every 50 ms while it works, its peak, and idle after), then the CPU the idle daemon uses
//! over five seconds. The daemon is the release binary, `target/release/spamsort daemon`.
//!
//! The model is trained on the corpus plus synthetic messages whose made-up words give its
//! vocabulary at least TOKENS tokens (default 200,000: a large personal model), each word in
//! exactly two messages so that the vocabulary's `min_df` of 2 keeps it.
//!
//! Run: `cargo build --release && cargo bench --bench daemon_throughput [-- MESSAGES [TOKENS]]`

mod common;

use spamsort::{Label, LabeledCorpus, Message, Source, SpamFilter, TrainParams};
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

/// Words per block; a synthetic message holds two blocks.
const BLOCK: usize = 50;

/// `tokens` made-up words (lower-case letters, so the tokenizer keeps each whole) in
/// `tokens / BLOCK` messages, alternately spam and ham: message j holds blocks j and j + 1
/// (cyclically), so every word is in exactly two messages and no two messages are alike.
fn synthetic(tokens: usize) -> Vec<(Message, Label)> {
    let blocks = tokens.div_ceil(BLOCK).max(2);
    let word = |mut n: usize| {
        let mut w = String::from("zq");
        for _ in 0..5 {
            w.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
        }
        w
    };
    (0..blocks)
        .map(|j| {
            let mut body = format!(
                "From: synthetic{j}@bench.example\nTo: you@example.org\nSubject: block {j}\n\n"
            );
            for b in [j, (j + 1) % blocks] {
                for i in 0..BLOCK {
                    body.push_str(&word(b * BLOCK + i));
                    body.push(if i % 10 == 9 { '\n' } else { ' ' });
                }
            }
            let label = if j % 2 == 0 { Label::Spam } else { Label::Ham };
            let source = Source::file(format!("synthetic/{j}"));
            (
                Message {
                    bytes: body.into_bytes(),
                    source,
                },
                label,
            )
        })
        .collect()
}

fn main() {
    let [total, tokens] = common::numbers([5000, 200_000]);
    let (name, corpus) = common::corpus();
    let mut trained = LabeledCorpus {
        messages: corpus.messages.clone(),
    };
    trained.messages.extend(synthetic(tokens));
    let mut filter = SpamFilter::train(&trained, &TrainParams::default()).expect("train");
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
    println!(
        "daemon on a backlog of {total} messages from {name}; model: {} tokens ({} trained \
         messages, {} synthetic), {:.1} MB on disk",
        filter.vocabulary().len(),
        trained.messages.len(),
        trained.messages.len() - corpus.messages.len(),
        std::fs::metadata(&model).map_or(0, |m| m.len()) as f64 / 1e6
    );
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
        let pid = daemon.id();
        let mut samples = Vec::new();
        let mut sampled = Instant::now();
        while count(&inbox.join("new")) > 0 {
            if sampled.elapsed() >= Duration::from_millis(50) {
                samples.push(common::memory_kib(pid, "VmRSS:"));
                sampled = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let elapsed = start.elapsed();
        let peak = common::memory_kib(pid, "VmHWM:");
        let filed = count(&root.join("spam/new")) + count(&root.join("ham/new"));
        println!(
            "  {label:<16} {:>6.0} messages/s ({filed} filed in {:.2} s, process start and model load included)",
            filed as f64 / elapsed.as_secs_f64(),
            elapsed.as_secs_f64()
        );
        let every = samples.len().div_ceil(8).max(1);
        let shown: Vec<String> = samples
            .iter()
            .step_by(every)
            .map(|kib| format!("{:.1}", *kib as f64 / 1024.0))
            .collect();
        println!(
            "    resident memory while filing (MiB, every {} ms): {}; peak {:.1} MiB",
            50 * every,
            shown.join(" "),
            peak as f64 / 1024.0
        );
        if extra.is_none() {
            let before = cpu_ticks(pid);
            std::thread::sleep(Duration::from_secs(5));
            let ticks = cpu_ticks(pid) - before;
            println!(
                "  idle: {ticks} CPU ticks (1/100 s) in 5 s of waiting, resident {:.1} MiB",
                common::memory_kib(pid, "VmRSS:") as f64 / 1024.0
            );
        }
        let _ = daemon.kill();
        let _ = daemon.wait();
    }
}
