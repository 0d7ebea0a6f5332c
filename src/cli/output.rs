//! Standard output of the commands that print their results (`classify`, `explain`, `info`,
//! `eval`, `tokens`, `man`, `completions`), whose write errors say what was being written.

use std::io::{self, Write};

/// Standard output, locked. A failed write's error names it ("writing to standard output: No
/// space left on device (os error 28)", not the bare cause) and keeps its kind, so a closed
/// pipe is still one to [`super::is_broken_pipe`] and an interrupted write is still retried.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// See [`stdout`].
pub struct Stdout(io::StdoutLock<'static>);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// A write to standard output failed; why is the source.
#[derive(Debug, thiserror::Error)]
#[error("writing to standard output")]
struct WriteFailed(#[source] io::Error);

fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), WriteFailed(e))
}
