//! Load on the spamd server, as spamc makes it: one connection per message, PROCESS requests
//! over 127.0.0.1 from concurrent clients (threads here). The server is the release binary,
//! `target/release/spamsort serve`, in its own process, so its memory is measured alone: its
//! VmRSS is read from /proc every 100 ms during the run and printed at every tenth of the
//! requests, then the spread after warm-up and the peak (VmHWM).
//!
//! Two runs:
//! 1. Throughput: CLIENTS clients (default 64) send MESSAGES requests (default 100,000) of the
//!    corpus (the SpamAssassin corpus when fetched, else the sample, cycled) to the server with
//!    its defaults (16 workers, 10 MiB `--max-size`). Prints messages per second, p50/p99
//!    latency per request and errors, and the CPU time per message of the server and of the
//!    clients (which share the machine's cores, so the throughput depends on both; the server's
//!    CPU per message is the steadier figure of its own cost); the resident memory should stay
//!    flat.
//! 2. The memory bound: 32 clients send 400 messages of nearly 1 MiB (corpus messages padded)
//!    to a server with `--max-connections 4 --max-size 1048576`: its peak above idle, against
//!    workers times `--max-size`.
//!
//! Run: `cargo build --release && cargo bench --bench spamd_load [-- CLIENTS MESSAGES]`

mod common;

use common::served::Served;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn process(addr: SocketAddr, message: &[u8]) -> std::io::Result<bool> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let head = format!(
        "PROCESS SPAMC/1.5\r\nContent-length: {}\r\n\r\n",
        message.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(message)?;
    s.shutdown(std::net::Shutdown::Write)?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)?;
    Ok(answer.starts_with(b"SPAMD/1.5 0 EX_OK\r\n") && answer.len() > message.len())
}

/// What one load run measured.
struct Load {
    messages_per_second: f64,
    latencies: Vec<Duration>,
    errors: usize,
    /// (requests done, server VmRSS in KiB), every 100 ms.
    rss: Vec<(usize, u64)>,
    /// CPU seconds the server and this process (the clients) used during the run.
    cpu: [f64; 2],
}

/// `clients` threads send `total` PROCESS requests, cycling through `messages`; the server's
/// resident memory is sampled meanwhile, and printed at every tenth of the requests.
fn load(server: &Served, clients: usize, total: usize, messages: &Arc<Vec<Vec<u8>>>) -> Load {
    let addr = server.addr;
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicBool::new(false));
    let pid = server.child.id();
    let sampler = {
        let (done, finished) = (done.clone(), finished.clone());
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            let mut shown = 0;
            while !finished.load(Ordering::Relaxed) {
                let n = done.load(Ordering::Relaxed);
                let kib = common::memory_kib(pid, "VmRSS:");
                samples.push((n, kib));
                if n * 10 / total.max(1) > shown {
                    shown = n * 10 / total.max(1);
                    println!(
                        "    after {n:>7} requests: server VmRSS {:.1} MiB",
                        mib(kib)
                    );
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            samples
        })
    };
    let cpu = |pid: &str| common::cpu_seconds(pid);
    let cpu_before = [cpu(&pid.to_string()), cpu("self")];
    let start = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (next, done, errors) = (next.clone(), done.clone(), errors.clone());
            let messages = messages.clone();
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        return latencies;
                    }
                    let t = Instant::now();
                    if !matches!(process(addr, &messages[i % messages.len()]), Ok(true)) {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    latencies.push(t.elapsed());
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let elapsed = start.elapsed();
    let cpu_after = [cpu(&pid.to_string()), cpu("self")];
    finished.store(true, Ordering::Relaxed);
    let mut rss = sampler.join().unwrap();
    let last = server.memory_kib("VmRSS:");
    println!(
        "    after {total:>7} requests: server VmRSS {:.1} MiB (done)",
        mib(last)
    );
    rss.push((total, last));
    latencies.sort();
    Load {
        messages_per_second: total as f64 / elapsed.as_secs_f64(),
        latencies,
        errors: errors.load(Ordering::Relaxed),
        rss,
        cpu: [0, 1].map(|i| cpu_after[i] - cpu_before[i]),
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let [clients, total] = common::numbers([64, 100_000]);
    let (name, corpus) = common::corpus();
    let messages: Arc<Vec<Vec<u8>>> = Arc::new(
        corpus
            .messages
            .iter()
            .map(|(m, _)| m.bytes.clone())
            .collect(),
    );

    let server = Served::start(&corpus, &[]);
    let idle = server.memory_kib("VmRSS:");
    println!(
        "spamd load on {name}: {clients} clients, {total} PROCESS requests, one connection each, \
         16 server workers; server idle {:.1} MiB",
        mib(idle)
    );
    let run = load(&server, clients, total, &messages);
    let pct = |p: f64| {
        let l = &run.latencies;
        l[((l.len() as f64 * p) as usize).min(l.len() - 1)].as_secs_f64() * 1e3
    };
    println!(
        "  {:.0} messages/s   p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms   errors {}",
        run.messages_per_second,
        pct(0.50),
        pct(0.99),
        pct(1.0),
        run.errors
    );
    // Both sides share the machine's cores: the clients' CPU is taken from the server's.
    let per_message = |seconds: f64| seconds / total as f64 * 1e6;
    println!(
        "  CPU per message: server {:.1} us, clients {:.1} us (this process, its sampler \
         included)",
        per_message(run.cpu[0]),
        per_message(run.cpu[1])
    );
    // Warm-up: the first tenth fills the allocator's caches and the workers' buffers.
    let steady: Vec<u64> = run
        .rss
        .iter()
        .filter(|(n, _)| *n >= total / 10)
        .map(|(_, kib)| *kib)
        .collect();
    println!(
        "  server VmRSS after the first tenth: {:.1} to {:.1} MiB over {} samples; peak (VmHWM) \
         {:.1} MiB",
        mib(steady.iter().copied().min().unwrap_or(0)),
        mib(steady.iter().copied().max().unwrap_or(0)),
        steady.len(),
        mib(server.memory_kib("VmHWM:"))
    );
    println!("  server stopped on SIGTERM: {}", server.stop());

    let (workers, max_size) = (4, 1 << 20);
    let big: Arc<Vec<Vec<u8>>> = Arc::new(
        messages
            .iter()
            .take(16)
            .map(|m| {
                let mut m = m.clone();
                let line = b"padding padding padding padding padding padding padding\n";
                while m.len() + line.len() < max_size - 1024 {
                    m.extend_from_slice(line);
                }
                m
            })
            .collect(),
    );
    let server = Served::start(
        &corpus,
        &[
            "--max-connections",
            &workers.to_string(),
            "--max-size",
            &max_size.to_string(),
        ],
    );
    let idle = server.memory_kib("VmRSS:");
    println!(
        "spamd memory bound: 32 clients, 400 PROCESS requests of {:.2} MiB, {workers} workers, \
         --max-size {max_size}; server idle {:.1} MiB",
        big[0].len() as f64 / (1 << 20) as f64,
        mib(idle)
    );
    let run = load(&server, 32, 400, &big);
    let peak = server.memory_kib("VmHWM:");
    println!(
        "  {:.0} messages/s, errors {}; peak (VmHWM) {:.1} MiB: {:.1} MiB above idle, {:.2} \
         times workers x --max-size ({} MiB)",
        run.messages_per_second,
        run.errors,
        mib(peak),
        mib(peak - idle),
        (peak - idle) as f64 * 1024.0 / (workers * max_size) as f64,
        (workers * max_size) >> 20
    );
    println!("  server stopped on SIGTERM: {}", server.stop());
}
