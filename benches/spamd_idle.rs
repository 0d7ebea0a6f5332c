//! Idle and stalled clients against the spamd server: holds IDLE connections (default 1,000;
//! half of them stalled inside a request head), then times PINGs and a CHECK on new
//! connections, and prints the server's resident memory (VmRSS, and its peak VmHWM) before,
//! while the connections are held, and after. The server is the release binary with its
//! defaults (16 workers, 30 s timeout), in its own process; it raises its own open-file limit,
//! and this bench raises its own too.
//!
//! Run: `cargo build --release && cargo bench --bench spamd_idle [-- IDLE]`

mod common;

use common::served::Served;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Sends `request` on a new connection; the answer and the time it took.
fn ask(addr: SocketAddr, request: &[u8]) -> (Vec<u8>, Duration) {
    let t = Instant::now();
    let mut answer = Vec::new();
    if let Ok(mut s) = TcpStream::connect(addr) {
        let _ = s.set_read_timeout(Some(Duration::from_secs(60)));
        let _ = s.write_all(request);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = s.read_to_end(&mut answer);
    }
    (answer, t.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let idle_count = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000usize);
    let fd_limit = spamsort::spamd::raise_open_file_limit().expect("open-file limit");
    assert!(
        fd_limit > idle_count as u64 + 64,
        "the open-file limit ({fd_limit}) is too low for {idle_count} connections"
    );
    let (name, corpus) = common::corpus();
    let server = Served::start(&corpus, &[]);
    let message = corpus.messages[0].0.bytes.clone();
    let mut check = format!(
        "CHECK SPAMC/1.5\r\nContent-length: {}\r\n\r\n",
        message.len()
    )
    .into_bytes();
    check.extend_from_slice(&message);
    let rss_before = server.memory_kib("VmRSS:");

    let opened = Instant::now();
    let idle: Vec<TcpStream> = (0..idle_count)
        .map(|i| {
            let mut s = TcpStream::connect(server.addr).expect("connect");
            if i % 2 == 1 {
                s.write_all(b"CHECK SPAMC/1.5\r\nContent-le")
                    .expect("write");
            }
            s
        })
        .collect();
    let open_time = opened.elapsed();
    // Let the server take them all in before timing.
    std::thread::sleep(Duration::from_millis(500));
    let mut pings: Vec<Duration> = (0..20)
        .map(|_| {
            let (answer, took) = ask(server.addr, b"PING SPAMC/1.5\r\n\r\n");
            assert_eq!(answer, b"SPAMD/1.5 0 PONG\r\n", "PING answered");
            took
        })
        .collect();
    pings.sort();
    let (answer, check_time) = ask(server.addr, &check);
    assert!(answer.starts_with(b"SPAMD/1.5 0 EX_OK"), "CHECK answered");
    let rss_held = server.memory_kib("VmRSS:");
    let peak = server.memory_kib("VmHWM:");
    drop(idle);
    std::thread::sleep(Duration::from_millis(500));
    let rss_after = server.memory_kib("VmRSS:");
    let stopped = server.stop();

    println!(
        "spamd with {idle_count} idle connections on {name} (half stalled in a request head; \
         opened in {:.0} ms)",
        ms(open_time)
    );
    println!(
        "  PING on a new connection: median {:.2} ms, max {:.2} ms (20 PINGs); CHECK {:.2} ms",
        ms(pings[pings.len() / 2]),
        ms(*pings.last().unwrap()),
        ms(check_time)
    );
    println!(
        "  server resident memory: {} KiB before, {} KiB holding them, {} KiB after; \
         peak (VmHWM) {} KiB",
        rss_before, rss_held, rss_after, peak
    );
    println!("  server stopped on SIGTERM: {stopped}");
}
