//! Load on the spamd server: 64 concurrent clients send 20,000 messages from the corpus (the
//! SpamAssassin corpus when fetched, else the sample, cycled) as PROCESS requests over
//! 127.0.0.1, one connection per message as spamc makes. Prints messages per second, p50/p99
//! latency per request, errors, and the server's resident memory as the load goes on. The
//! server is the release binary, `target/release/spamsort serve` with its defaults (16
//! workers), in its own process, so its memory is measured alone; the clients are threads here.
//!
//! Run: `cargo build --release && cargo bench --bench spamd_load [-- CLIENTS MESSAGES]`

mod common;

use common::served::Served;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let clients = args.first().copied().unwrap_or(64);
    let total = args.get(1).copied().unwrap_or(20_000);
    let (name, corpus) = common::corpus();
    let server = Served::start(&corpus, &[]);
    let addr = server.addr;
    let messages: Arc<Vec<Vec<u8>>> =
        Arc::new(corpus.messages.into_iter().map(|(m, _)| m.bytes).collect());
    let rss_before = server.memory_kib("VmRSS:");
    let mut rss_samples = Vec::new();
    let server = Arc::new(server);

    let sampled = Arc::new(std::sync::Mutex::new(Vec::new()));
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (next, errors, messages) = (next.clone(), errors.clone(), messages.clone());
            let (sampled, server) = (sampled.clone(), server.clone());
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        return latencies;
                    }
                    if i % (total / 4).max(1) == 0 && i > 0 {
                        sampled
                            .lock()
                            .unwrap()
                            .push((i, server.memory_kib("VmRSS:")));
                    }
                    let t = Instant::now();
                    if !matches!(process(addr, &messages[i % messages.len()]), Ok(true)) {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    latencies.push(t.elapsed());
                }
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let elapsed = start.elapsed();
    rss_samples.extend(sampled.lock().unwrap().iter().copied());
    rss_samples.push((total, server.memory_kib("VmRSS:")));
    rss_samples.sort();
    let peak = server.memory_kib("VmHWM:");
    let stopped = Arc::into_inner(server).expect("clients done").stop();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "spamd load on {name}: {clients} clients, {total} PROCESS requests, 16 server workers"
    );
    println!(
        "  {:.0} messages/s   p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms   errors {}",
        total as f64 / elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3,
        errors.load(Ordering::Relaxed)
    );
    let samples: Vec<String> = rss_samples
        .iter()
        .map(|(i, kib)| format!("{} MiB after {i}", kib / 1024))
        .collect();
    println!(
        "  server resident memory: {} MiB idle, {}; peak {} MiB",
        rss_before / 1024,
        samples.join(", "),
        peak / 1024
    );
    println!("  server stopped on SIGTERM: {stopped}");
}
