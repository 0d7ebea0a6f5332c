//! Memory pages of every command: the long-running front ends, `serve` and `daemon`, hold a
//! model and serve messages for weeks, so what they keep resident counts more than the last
//! percent of speed (`benches/spamd_load.rs`, `benches/daemon_throughput.rs` measure both); the
//! one-process-per-message `filter` would otherwise have a fresh 2 MiB page zeroed for its
//! first allocations (`benches/pipe_latency.sh`).

/// Turns transparent huge pages off for this process (Linux's `PR_SET_THP_DISABLE`), for
/// memory faulted in from now on. mimalloc is built not to ask for them (its `no_thp`), but a
/// system that gives them unasked (`always`) still would; and as each thread allocates from
/// pages of its own, a 2 MiB page is made resident for what a thread touches of it: `serve`
/// with 16 workers held about 200 MiB answering 5 KB messages, against 50 MiB without (and
/// 20 MiB against 8 MiB idle); the throughput was the same. `main` calls it before anything
/// else. A kernel that refuses leaves them on, which costs memory only, so that is logged and
/// not an error.
pub fn use_small_pages() {
    if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
        tracing::debug!("transparent huge pages stay on: {e}");
    }
}
