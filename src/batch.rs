//! Batch work over a stream of messages: [`map_in_order`] reads the stream on one thread while
//! the rayon pool works on the messages read before, and hands the results on in input order.
//! What is in flight is bounded by bytes (a [`Window`]), not only by count, so a stream of
//! large messages costs a few windows of memory, never the whole stream. `classify` scores
//! with it and `train` tokenizes with it.

use rayon::prelude::*;
use std::sync::mpsc;

/// How much of a stream [`map_in_order`] holds at once: items go in chunks of at most
/// `chunk_bytes` (or `chunk_items`), the first item of a chunk always taken whatever its size.
/// One chunk's results are handed on while the next chunk is worked on, the one after it is
/// read and one more waits, so at most four chunks (about `4 * chunk_bytes` plus four items)
/// are held, results included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// A chunk is closed once its items' sizes reach this many bytes.
    pub chunk_bytes: usize,
    /// A chunk is closed once it holds this many items.
    pub chunk_items: usize,
}

impl Default for Window {
    /// Chunks of 4 MiB or 256 items: enough to keep two cores busy between hand-overs, few
    /// enough that a chunk's results come out soon after its messages were read.
    fn default() -> Self {
        Window {
            chunk_bytes: 4 << 20,
            chunk_items: 256,
        }
    }
}

/// Calls `work` on every item of `items` (in parallel, on the rayon pool) and `sink` on every
/// item with its result, in input order, on the calling thread. `size` says how many bytes an
/// item holds, for the [`Window`]. `items` is drained on a thread of its own, so reading
/// overlaps the work. The first error of `sink` stops the reading and is returned; the items
/// not yet handed to `sink` are dropped unseen.
pub fn map_in_order<T, R, E>(
    items: impl Iterator<Item = T> + Send,
    window: Window,
    size: impl Fn(&T) -> usize + Send,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(T, R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Send + Sync,
    R: Send,
{
    // One chunk waits in the channel while the reader fills the next.
    let (send, receive) = mpsc::sync_channel::<Vec<T>>(1);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut chunk = Vec::new();
            let mut bytes = 0_usize;
            for item in items {
                bytes = bytes.saturating_add(size(&item));
                chunk.push(item);
                if bytes >= window.chunk_bytes || chunk.len() >= window.chunk_items.max(1) {
                    // An error means the consumer stopped: no point reading on.
                    if send.send(std::mem::take(&mut chunk)).is_err() {
                        return;
                    }
                    bytes = 0;
                }
            }
            if !chunk.is_empty() {
                let _ = send.send(chunk);
            }
        });
        // `receive` is dropped on return (an error included), which ends the reader. The
        // results of one chunk go to `sink` here while the pool works on the next chunk.
        let mut done: Option<(Vec<T>, Vec<R>)> = None;
        for chunk in receive {
            let mut results = Vec::new();
            rayon::in_place_scope(|scope| {
                scope.spawn(|_| results = chunk.par_iter().map(&work).collect());
                done.take()
                    .map_or(Ok(()), |(items, results)| hand(items, results, &mut sink))
            })?;
            done = Some((chunk, results));
        }
        done.map_or(Ok(()), |(items, results)| hand(items, results, &mut sink))
    })
}

/// Hands a chunk's items with their results to `sink`, in order, up to its first error.
fn hand<T, R, E>(
    items: Vec<T>,
    results: Vec<R>,
    sink: &mut impl FnMut(T, R) -> Result<(), E>,
) -> Result<(), E> {
    items
        .into_iter()
        .zip(results)
        .try_for_each(|(item, result)| sink(item, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Window {
        Window {
            chunk_bytes: 10,
            chunk_items: 7,
        }
    }

    #[test]
    fn results_come_in_input_order_across_many_chunks() {
        let mut seen = Vec::new();
        map_in_order(
            0..10_000_u32,
            small(),
            |&i| (i % 5) as usize,
            |&i| u64::from(i) * 3,
            |i, r| {
                seen.push((i, r));
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        let expected: Vec<(u32, u64)> = (0..10_000).map(|i| (i, u64::from(i) * 3)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn an_item_larger_than_the_window_still_goes_through() {
        let mut seen = Vec::new();
        map_in_order(
            vec![vec![0_u8; 100], vec![1; 1], vec![2; 50]].into_iter(),
            small(),
            Vec::len,
            |v| v.len(),
            |v, n| {
                seen.push((v[0], n));
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(seen, [(0, 100), (1, 1), (2, 50)]);
    }

    #[test]
    fn a_sink_error_stops_the_stream_and_is_returned() {
        let mut handed = 0;
        let read = std::sync::atomic::AtomicUsize::new(0);
        let out = map_in_order(
            (0..1_000_000_u32).inspect(|_| {
                read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
            small(),
            |_| 1,
            |&i| i,
            |i, _| {
                handed += 1;
                if i == 20 { Err(i) } else { Ok(()) }
            },
        );
        assert_eq!(out, Err(20));
        assert_eq!(handed, 21);
        // The reader stopped within a few chunks of the error, not at the end of the stream.
        assert!(read.load(std::sync::atomic::Ordering::Relaxed) < 1_000);
    }

    #[test]
    fn an_empty_stream_calls_nothing() {
        let out = map_in_order(
            std::iter::empty::<u32>(),
            Window::default(),
            |_| 1,
            |_| -> u32 { unreachable!("no item") },
            |_, _| Err("no item"),
        );
        assert_eq!(out, Ok(()));
    }
}
