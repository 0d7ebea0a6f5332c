//! The pipe filter's answer to memory running out: the message goes out unchanged.
//!
//! Rust ends a process whose allocation fails (`abort`, exit by `SIGABRT`): stable Rust can
//! neither unwind from it nor hook it. Under a memory limit that lets `spamsort` start but not
//! tokenize a large message (`ulimit -v`, daemontools' `softlimit -m`, a container's limit),
//! `filter` would then die without writing a byte, and procmail or the MTA would have to keep
//! the message. So the binary's allocator is mimalloc wrapped in [`Allocator`], which watches
//! for a failed allocation while the filter holds a message ([`Held`]): from before it opens
//! the model until just before it writes anything. Then, instead of returning to the abort,
//! it writes the bytes read so far and the rest of standard input to standard output,
//! unchanged, says why on standard error, and exits as any pass-through does (0, or 3 with
//! `--exit-code`; 3 too if the message could not be written out whole). It allocates nothing
//! to do so: the descriptors were duplicated and the held bytes lent when the filter began
//! holding.
//!
//! An allocation that fails outside a hold (and every failure of the other commands) ends
//! the process as before.
//!
//! The module holds the binary's `unsafe` code beside `writers.rs`'s lease: the allocator
//! interface is `unsafe` by nature, and `_exit` is the only exit that runs no code of a
//! process whose memory ran out (no `atexit` handler, no flush of a buffer a thread holds).

use super::waiting::Waiting;
use std::alloc::{GlobalAlloc, Layout};
use std::fs::File;
use std::io::Write;
use std::marker::PhantomData;
use std::os::fd::AsFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// mimalloc, with the filter's pass-through when an allocation fails during a [`Held`].
pub struct Allocator;

/// Nothing held: a failed allocation ends the process as Rust does.
const IDLE: u8 = 0;
/// A [`Held`] is live: a failed allocation passes the message through.
const HOLDING: u8 = 1;
/// A failed allocation is passing the message through; the process ends when it is done.
const PASSING: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(IDLE);
/// The bytes of the message read so far, lent by the live [`Held`].
static READ_PTR: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static READ_LEN: AtomicUsize = AtomicUsize::new(0);
/// The exit code of a pass-through that delivered the message.
static PASSED_CODE: AtomicI32 = AtomicI32::new(0);
/// Standard input, output and error, duplicated by the first [`Held`].
static STREAMS: OnceLock<Option<[File; 3]>> = OnceLock::new();

/// While it lives, a failed allocation writes `read` and the rest of standard input to
/// standard output and ends the process (see the module docs). It borrows `read`, so those
/// bytes stay where they are until it is dropped. One at a time: the filter holds one message.
pub struct Held<'a> {
    read: PhantomData<&'a [u8]>,
}

impl<'a> Held<'a> {
    /// Starts holding: `read` is what was read of standard input so far (in order), `code` the
    /// exit code of a pass-through that delivers the message. Without duplicates of the
    /// three standard descriptors (none left), holds nothing: a failure then ends the process
    /// as before.
    pub fn new(read: &'a [u8], code: i32) -> Held<'a> {
        let streams = STREAMS.get_or_init(|| {
            let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().map(File::from);
            let stdin = dup(std::io::stdin().as_fd()).ok()?;
            let stdout = dup(std::io::stdout().as_fd()).ok()?;
            let stderr = dup(std::io::stderr().as_fd()).ok()?;
            Some([stdin, stdout, stderr])
        });
        if streams.is_some() {
            READ_PTR.store(read.as_ptr().cast_mut(), Ordering::SeqCst);
            READ_LEN.store(read.len(), Ordering::SeqCst);
            PASSED_CODE.store(code, Ordering::SeqCst);
            STATE.store(HOLDING, Ordering::SeqCst);
        }
        Held { read: PhantomData }
    }
}

impl Drop for Held<'_> {
    /// Stops holding, before the filter writes anything. If a failed allocation (on another
    /// thread) is passing the message through already, that one ends the process: this thread
    /// must not write too, so it waits for the end.
    fn drop(&mut self) {
        let stopped = STATE.compare_exchange(HOLDING, IDLE, Ordering::SeqCst, Ordering::SeqCst);
        if stopped == Err(PASSING) {
            loop {
                std::thread::park();
            }
        }
    }
}

/// Called with every failed allocation: passes the held message through and ends the
/// process, or returns (nothing held) for Rust to do as it does.
#[allow(unsafe_code)]
fn allocation_failed() {
    let passing = STATE.compare_exchange(HOLDING, PASSING, Ordering::SeqCst, Ordering::SeqCst);
    if passing.is_err() {
        return;
    }
    let Some(Some([stdin, stdout, stderr])) = STREAMS.get() else {
        return;
    };
    // SAFETY: the live `Held` borrows these bytes for as long as the state is not `IDLE`, and
    // it stays `PASSING` (a `Held` dropped meanwhile waits, see its `drop`) until `_exit`.
    let read = unsafe {
        std::slice::from_raw_parts(
            READ_PTR.load(Ordering::SeqCst),
            READ_LEN.load(Ordering::SeqCst),
        )
    };
    // Without allocating: `Waiting` polls on a stack array, `copy` uses a stack buffer.
    let mut out = Waiting(stdout);
    let delivered = out
        .write_all(read)
        .and_then(|()| std::io::copy(&mut Waiting(stdin), &mut out))
        .and_then(|_| out.flush());
    let (code, why): (i32, &[u8]) = match delivered {
        Ok(()) => (
            PASSED_CODE.load(Ordering::SeqCst),
            b"spamsort: message passed through unchanged: out of memory (an allocation failed) \
              while classifying it\n",
        ),
        Err(_) => (
            3,
            b"spamsort: out of memory while classifying the message, and it could not be \
              written out whole\n",
        ),
    };
    let _ = Waiting(stderr).write_all(why);
    // SAFETY: `_exit` ends the process at once; nothing of it runs after.
    unsafe { libc::_exit(code) }
}

// SAFETY: every call goes to mimalloc with the caller's arguments, and its answer is returned
// as it is; a null answer first gives `allocation_failed` its turn, which returns or ends the
// process.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is mimalloc's.
        let p = unsafe { mimalloc::MiMalloc.alloc(layout) };
        if p.is_null() {
            allocation_failed();
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) };
        if p.is_null() {
            allocation_failed();
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) };
        if p.is_null() {
            allocation_failed();
        }
        p
    }
}
