//! Standard input and output read and written as blocking streams even when they were handed
//! over non-blocking: a process that made a pipe with `O_NONBLOCK` (and a descriptor's flags
//! are shared with whoever holds it) gives the filter a descriptor whose read fails with
//! `EAGAIN` while no byte has come yet, and whose write fails so while the pipe is full. Taken
//! for errors, these cut the message short; [`Waiting`] waits for the descriptor (`poll`) and
//! tries again instead. The descriptor's flags are left as they are: they are the other
//! process's too.

use rustix::event::{PollFd, PollFlags, poll};
use std::io::{ErrorKind, Read, Result, Write};
use std::os::fd::AsFd;

/// A reader or writer whose reads and writes that would block wait until they can go on.
pub struct Waiting<T>(pub T);

impl<T: Read + AsFd> Read for Waiting<T> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => wait(&self.0, PollFlags::IN)?,
                done => return done,
            }
        }
    }
}

impl<T: Write + AsFd> Write for Waiting<T> {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        loop {
            match self.0.write(buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => wait(&self.0, PollFlags::OUT)?,
                done => return done,
            }
        }
    }

    fn flush(&mut self) -> Result<()> {
        loop {
            match self.0.flush() {
                Err(e) if e.kind() == ErrorKind::WouldBlock => wait(&self.0, PollFlags::OUT)?,
                done => return done,
            }
        }
    }
}

/// Waits until `fd` is ready for `ready` (or has hung up or failed, which the next read or
/// write then reports), however long that takes, as a blocking read or write would.
fn wait(fd: &impl AsFd, ready: PollFlags) -> Result<()> {
    let mut fds = [PollFd::new(fd, ready)];
    match poll(&mut fds, None) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_blocking_pipe_is_read_whole_and_written_whole() {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        let nonblocking = |fd: std::os::fd::BorrowedFd<'_>| {
            let flags = fcntl_getfl(fd).unwrap();
            fcntl_setfl(fd, flags | OFlags::NONBLOCK).unwrap();
        };
        // 1 MiB through a pipe that takes 64 KiB at a time, both ends non-blocking, the bytes
        // written a piece at a time with pauses, so that reads find nothing and writes a full
        // pipe.
        let (reader, writer) = std::io::pipe().unwrap();
        nonblocking(reader.as_fd());
        nonblocking(writer.as_fd());
        let message: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
        let sent = message.clone();
        let writing = std::thread::spawn(move || {
            let mut out = Waiting(writer);
            for piece in sent.chunks(100_000) {
                out.write_all(piece).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        let mut got = Vec::new();
        Waiting(reader).read_to_end(&mut got).unwrap();
        writing.join().unwrap();
        assert!(got == message, "{} of {} bytes", got.len(), message.len());
    }
}
