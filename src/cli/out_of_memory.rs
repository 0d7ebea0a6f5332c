//! The pipe filter's answer to memory running out: the message goes out unchanged.
//!
//! Rust ends a process whose allocation fails (`abort`, exit by `SIGABRT`): stable Rust can
//! neither unwind from it nor hook it. Under a limit on the process's memory that lets
//! `spamsort` start but not load its model or tokenize a large message (`ulimit -v` or `-d`,
//! daemontools' `softlimit -m`: `RLIMIT_AS`, `RLIMIT_DATA`), `filter` would then die without
//! writing a byte, and procmail or the MTA would have to keep the message. So the binary's
//! allocator is mimalloc wrapped in [`Allocator`], which watches for a failed allocation while
//! the filter holds a message ([`holding`]): while it loads the model (nothing read yet) and
//! while it classifies and marks the message it read. Then, instead of returning to the
//! abort, it writes the bytes read so far and the rest of standard input to standard output,
//! unchanged, says why on standard error, and exits as any pass-through does (0, or 3 with
//! `--exit-code`; 3 too if the message could not be written out whole). It allocates nothing
//! to do so: the descriptors were duplicated and the held bytes lent when the hold began.
//!
//! Not covered: an allocation that fails outside a hold (while the filter reads the message,
//! it asks for memory it can do without; and every failure of the other commands) ends the
//! process as before; so does a cgroup's (a container's) memory limit, which kills the process
//! instead of failing its allocation. Inside a hold, every failed allocation passes the
//! message through, also one whose caller could have done without (`try_reserve`): code run
//! in a hold must not rely on such a fallback.
//!
//! The module holds the binary's `unsafe` code (the library's is the daemon's lease, in
//! `src/daemon/writers.rs`): the allocator interface is `unsafe` by nature, and `_exit` is the
//! only exit that runs no code of a process whose memory ran out (no `atexit` handler, no
//! flush of a buffer another thread holds).

use super::waiting::Waiting;
use std::alloc::{GlobalAlloc, Layout};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// mimalloc, with the filter's pass-through when an allocation fails during [`holding`].
pub struct Allocator;

/// What the filter is doing while it holds a message: said when memory runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doing {
    /// Opening and loading the model (no byte of the message read yet).
    LoadingTheModel = 0,
    /// Classifying and marking the message.
    Classifying = 1,
}

impl Doing {
    fn words(self) -> &'static [u8] {
        match self {
            Doing::LoadingTheModel => b"while loading the model",
            Doing::Classifying => b"while classifying the message",
        }
    }
}

/// Nothing held: a failed allocation ends the process as Rust does.
const IDLE: u8 = 0;
/// A hold is on: a failed allocation passes the message through.
const HOLDING: u8 = 1;
/// A failed allocation is passing the message through; the process ends when it is done.
const PASSING: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(IDLE);
/// The bytes of the message read so far, lent by the hold that is on.
static READ_PTR: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static READ_LEN: AtomicUsize = AtomicUsize::new(0);
/// The exit code of a pass-through that delivered the message.
static PASSED_CODE: AtomicI32 = AtomicI32::new(0);
/// What the hold that is on is doing ([`Doing`] as a number).
static DOING: AtomicU8 = AtomicU8::new(0);
/// Standard input, output and error, duplicated by the first hold.
static STREAMS: OnceLock<Option<[File; 3]>> = OnceLock::new();

/// Runs `f` holding the message: if an allocation fails meanwhile (on any thread), `read`
/// (what was read of standard input so far, in order) and the rest of standard input go to
/// standard output, why (`doing`) to standard error, and the process ends with `code` (see
/// the module docs). `f` writes nothing to standard output. Without duplicates of the three
/// standard descriptors (none left), or within another hold, `f` runs unheld: a failure then
/// ends the process as Rust does.
pub fn holding<T>(read: &[u8], code: i32, doing: Doing, f: impl FnOnce() -> T) -> T {
    let streams = STREAMS.get_or_init(|| {
        let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().map(File::from);
        let stdin = dup(std::io::stdin().as_fd()).ok()?;
        let stdout = dup(std::io::stdout().as_fd()).ok()?;
        let stderr = dup(std::io::stderr().as_fd()).ok()?;
        Some([stdin, stdout, stderr])
    });
    if streams.is_none() || STATE.load(Ordering::SeqCst) != IDLE {
        return f();
    }
    READ_PTR.store(read.as_ptr().cast_mut(), Ordering::SeqCst);
    READ_LEN.store(read.len(), Ordering::SeqCst);
    PASSED_CODE.store(code, Ordering::SeqCst);
    DOING.store(doing as u8, Ordering::SeqCst);
    if STATE
        .compare_exchange(IDLE, HOLDING, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return f();
    }
    // Ends the hold when `f` returns or unwinds, while `read` is still borrowed.
    let _on = HoldOn;
    f()
}

/// The hold that is on, ended when dropped.
struct HoldOn;

impl Drop for HoldOn {
    /// Ends the hold. If a failed allocation (on another thread) is passing the message
    /// through already, that one ends the process: this thread must write nothing and not
    /// let `read` go, so it waits for the end.
    fn drop(&mut self) {
        let ended = STATE.compare_exchange(HOLDING, IDLE, Ordering::SeqCst, Ordering::SeqCst);
        if ended == Err(PASSING) {
            wait_for_the_end();
        }
    }
}

/// Parks the calling thread for good: another one is ending the process.
fn wait_for_the_end() -> ! {
    loop {
        std::thread::park();
    }
}

/// Called with every failed allocation: passes the held message through and ends the
/// process, or returns (nothing held) for Rust to do as it does.
#[allow(unsafe_code)]
fn allocation_failed() {
    match STATE.compare_exchange(HOLDING, PASSING, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {}
        // Another thread is passing the message through: it ends the process.
        Err(PASSING) => wait_for_the_end(),
        Err(_) => return,
    }
    let Some(Some([stdin, stdout, stderr])) = STREAMS.get() else {
        return;
    };
    // SAFETY: `holding` borrows these bytes for as long as the state is `HOLDING`, and it is
    // `PASSING` from here to `_exit` (a hold ending meanwhile waits, see `HoldOn`'s `drop`).
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
    let doing = match DOING.load(Ordering::SeqCst) {
        0 => Doing::LoadingTheModel,
        _ => Doing::Classifying,
    };
    let mut why = Waiting(stderr);
    let (opening, code): (&[u8], i32) = match delivered {
        Ok(()) => (
            b"spamsort: message passed through unchanged: out of memory (an allocation failed) ",
            PASSED_CODE.load(Ordering::SeqCst),
        ),
        Err(_) => (b"spamsort: out of memory (an allocation failed) ", 3),
    };
    let _ = why
        .write_all(opening)
        .and_then(|()| why.write_all(doing.words()));
    if let Err(e) = &delivered {
        let mut buf = [0; 12];
        let errno = digits(e.raw_os_error().unwrap_or(0), &mut buf);
        let _ = why
            .write_all(b", and the message could not be written out whole (errno ")
            .and_then(|()| why.write_all(errno))
            .and_then(|()| why.write_all(b")"));
    }
    let _ = why.write_all(b"\n");
    // SAFETY: `_exit` ends the process at once; nothing of it runs after.
    unsafe { libc::_exit(code) }
}

/// `n` in decimal, written at the end of `buf` (without allocating).
fn digits(n: i32, buf: &mut [u8; 12]) -> &[u8] {
    let mut at = buf.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
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
