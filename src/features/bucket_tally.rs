//! Counting a message's hashed buckets without sorting them. A message has some 2,000 byte
//! 4-grams, each a bucket below [`HASHED_BUCKETS`]; sorting their ids by radix passes and
//! counting the runs took a tenth of `classify`'s instructions. Instead each bucket is counted
//! in a table of all buckets and marked in a bitmap of them, and the bitmap, read word by word
//! in order, gives the distinct buckets increasing (the same as sorting, not an approximation):
//! a few instructions a 4-gram and one pass over 2,048 words. The table is kept per thread and
//! left zeroed after each use.

use super::hashed::HASHED_BUCKETS;
use std::cell::RefCell;

/// Buckets marked per bitmap word.
const WORD_BITS: usize = u64::BITS as usize;

/// A count per bucket and a bitmap of the buckets counted: all zero between uses, unless a
/// use was cut short (a panic in its caller's callback), which `clean` tells.
struct Tally {
    counts: Box<[u16]>,
    present: Box<[u64]>,
    clean: bool,
}

impl Tally {
    fn new() -> Tally {
        let buckets = HASHED_BUCKETS as usize;
        Tally {
            counts: vec![0; buckets].into_boxed_slice(),
            present: vec![0; buckets.div_ceil(WORD_BITS)].into_boxed_slice(),
            clean: true,
        }
    }
}

thread_local! {
    static TALLY: RefCell<Option<Tally>> = const { RefCell::new(None) };
}

/// Calls `each(bucket, count)` for every distinct bucket in `buckets` (each below
/// [`HASHED_BUCKETS`]; others are the caller's to leave out), increasing, with its number of
/// occurrences: the same as sorting `buckets` and counting its runs.
pub(crate) fn tally_buckets(buckets: &[u32], mut each: impl FnMut(u32, u32)) {
    debug_assert!(buckets.iter().all(|&b| b < HASHED_BUCKETS));
    // A count past a u16 cannot happen below 2^16 occurrences; a longer list (a setting of
    // over 64 KiB of 4-gram input) is sorted instead, as is a call made from inside `each`.
    let tallied = if buckets.len() < usize::from(u16::MAX) {
        TALLY.with(|cell| {
            let mut cell = cell.try_borrow_mut().ok()?;
            let tally = cell.get_or_insert_with(Tally::new);
            tally_with(tally, buckets, &mut each);
            Some(())
        })
    } else {
        None
    };
    if tallied.is_none() {
        let mut sorted = buckets.to_vec();
        sorted.sort_unstable();
        for run in sorted.chunk_by(|a, b| a == b) {
            each(run[0], u32::try_from(run.len()).unwrap_or(u32::MAX));
        }
    }
}

/// [`tally_buckets`] with the thread's table, which it leaves zeroed.
fn tally_with(tally: &mut Tally, buckets: &[u32], each: &mut impl FnMut(u32, u32)) {
    if !tally.clean {
        tally.counts.fill(0);
        tally.present.fill(0);
    }
    tally.clean = false;
    for &b in buckets {
        let b = b as usize;
        // Indexing checks the bound: a bucket past the table would panic, not go astray; the
        // callers pass only buckets below HASHED_BUCKETS.
        tally.counts[b] += 1;
        tally.present[b / WORD_BITS] |= 1 << (b % WORD_BITS);
    }
    for (w, word) in tally.present.iter_mut().enumerate() {
        let mut bits = std::mem::take(word);
        while bits != 0 {
            let b = w * WORD_BITS + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let count = std::mem::take(&mut tally.counts[b]);
            // `b` is below HASHED_BUCKETS, a u32.
            each(b as u32, u32::from(count));
        }
    }
    tally.clean = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: sorted, runs counted.
    fn by_sorting(buckets: &[u32]) -> Vec<(u32, u32)> {
        let mut sorted = buckets.to_vec();
        sorted.sort_unstable();
        sorted
            .chunk_by(|a, b| a == b)
            .map(|run| (run[0], run.len() as u32))
            .collect()
    }

    fn tallied(buckets: &[u32]) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        tally_buckets(buckets, |b, c| out.push((b, c)));
        out
    }

    #[test]
    fn tallies_are_the_sorted_runs_and_leave_the_table_clean() {
        let mut state = 99u64;
        let mut next = move |range: u32| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32 % range
        };
        for len in [0, 1, 2, 63, 64, 65, 3000] {
            for range in [1, 2, 64, 300, HASHED_BUCKETS] {
                let buckets: Vec<u32> = (0..len).map(|_| next(range)).collect();
                let got = tallied(&buckets);
                assert_eq!(got, by_sorting(&buckets), "len {len} range {range}");
            }
        }
        // The edges of the table, twice, and the table left zeroed for the next call.
        let edges = [HASHED_BUCKETS - 1, 0, 63, 64, HASHED_BUCKETS - 1];
        assert_eq!(tallied(&edges), by_sorting(&edges));
        assert_eq!(tallied(&[5]), [(5, 1)]);
        TALLY.with(|cell| {
            let cell = cell.borrow();
            let tally = cell.as_ref().expect("used above");
            assert!(tally.counts.iter().all(|&c| c == 0));
            assert!(tally.present.iter().all(|&w| w == 0));
        });
    }

    #[test]
    fn long_lists_and_calls_from_inside_are_sorted_instead() {
        // Past what a u16 counts: one bucket 70,000 times.
        let many = vec![7u32; 70_000];
        assert_eq!(tallied(&many), [(7, 70_000)]);
        // A tally inside another's callback cannot use the busy table.
        let outer = [3u32, 1, 3];
        let mut inner_results = Vec::new();
        let mut out = Vec::new();
        tally_buckets(&outer, |b, c| {
            out.push((b, c));
            inner_results.push(tallied(&[9, 2, 9]));
        });
        assert_eq!(out, [(1, 1), (3, 2)]);
        assert!(inner_results.iter().all(|r| r == &[(2, 1), (9, 2)]));
    }

    #[test]
    fn a_tally_cut_short_by_a_panic_does_not_count_into_the_next() {
        let cut = std::panic::catch_unwind(|| tally_buckets(&[4, 4, 8], |_, _| panic!("cut")));
        assert!(cut.is_err());
        assert_eq!(tallied(&[8, 1]), [(1, 1), (8, 1)]);
    }
}
