//! Standard output of the commands that print their results (`classify`, `explain`, `info`,
//! `eval`, `tokens`, `man`, `completions`), whose write errors say what was being written; and
//! the files they write whole (`dump`'s, `eval`'s chart and scores), which replace only a file
//! of their own kind unless told to; and the rule that no file a command writes (those, a model
//! file and its lock) lands among the mail it reads.

use anyhow::Context;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

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

/// What a file [`write_whole`] writes, and so what it replaces without `--force`: a file of
/// the same kind (an earlier dump, table or chart) or an empty one, never other data (`spamsort
/// dump ~/Mail/INBOX`, a mailbox named by mistake, replaced the mbox with the dump, every
/// message in it lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `spamsort dump`'s text.
    Dump,
    /// `eval --scores`' table.
    Scores,
    /// `eval --roc`'s SVG chart.
    Chart,
}

impl Kind {
    /// How a file of this kind starts (any of these).
    fn starts(self) -> &'static [&'static [u8]] {
        match self {
            Kind::Dump => &[b"spamsort-dump "],
            Kind::Scores => &[b"fold\tmodel\t"],
            Kind::Chart => &[b"<svg", b"<?xml"],
        }
    }

    /// What a file of this kind is, for messages.
    fn name(self) -> &'static str {
        match self {
            Kind::Dump => "a spamsort dump",
            Kind::Scores => "a table of eval scores",
            Kind::Chart => "an SVG chart",
        }
    }
}

/// Which file already at its path [`write_whole`] may replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// An empty one or one of this kind (see [`refuse_other_kind`]).
    Own(Kind),
    /// Any regular file (`--force`).
    Any,
}

impl Replace {
    /// [`Replace::Any`] if `force`, else [`Replace::Own`] `kind`.
    pub fn new(kind: Kind, force: bool) -> Self {
        if force {
            Replace::Any
        } else {
            Replace::Own(kind)
        }
    }
}

/// Fails if `replace` is [`Replace::Own`] and a file is at `out` (a symbolic link followed)
/// that is not empty and does not start as one of its kind: a mailbox or a message named by
/// mistake, which the output would replace. `named` is how the message names the output
/// (`out` itself, or with its option: `--scores FILE`). A missing file, and one that cannot
/// be read, are left to [`replaceable`] and the write.
/// Called before any work is done (a model read, an evaluation run), and again by
/// [`write_whole`].
pub fn refuse_other_kind(out: &Path, replace: Replace, named: &str) -> anyhow::Result<()> {
    let Replace::Own(kind) = replace else {
        return Ok(());
    };
    let longest = kind.starts().iter().map(|s| s.len()).max().unwrap_or(0);
    let Ok(head) = spamsort::corpus::read_regular_head(out, longest as u64) else {
        return Ok(());
    };
    if head.is_empty() || kind.starts().iter().any(|start| head.starts_with(start)) {
        return Ok(());
    }
    anyhow::bail!(
        "{named} is not {} (a mailbox or message?): it would be replaced, so nothing was \
         written. Name another file for it, or give --force to replace this file anyway",
        kind.name()
    )
}

/// The file [`write_whole`] would replace for `out`: the file a symbolic link leads to, the
/// link followed; an error for anything there but a regular file (a FIFO, a device such as
/// /dev/stdout), which it refuses. For a caller that checks before it has the file's bytes.
pub fn replaceable(out: &Path) -> io::Result<PathBuf> {
    let target = spamsort::model_file::followed(out)?;
    spamsort::corpus::regular_file::refuse_irregular_at(&target)?;
    Ok(target)
}

/// Who may read a file [`write_whole`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readers {
    /// The owner alone (mode 0600): a dump holds what the user's mail taught the model.
    Owner,
    /// As the file it replaces had it, or for a new file as the umask lets anyone (a chart).
    AsUsual,
}

/// Writes the file `out` whole or not at all: `write` fills a file beside it, which is synced
/// and renamed over it, so a failure never leaves a partial file under its name. The rename
/// replaces what it lands on: so it lands on [`replaceable`]'s file (a symbolic link stays,
/// what it leads to is replaced; anything but a regular file is refused, untouched), and
/// only a file `replace` allows (checked again: see [`refuse_other_kind`]).
/// `readers` says who may read it.
pub fn write_whole(
    out: &Path,
    replace: Replace,
    readers: Readers,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let writing = || format!("writing {}", out.display());
    let target = replaceable(out).with_context(writing)?;
    refuse_other_kind(out, replace, &out.display().to_string())?;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
    let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(".".as_ref()))
        .with_context(|| format!("creating a file beside {}", target.display()))?;
    if readers == Readers::AsUsual {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(&target) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(_) => {
                // Read by setting it: there is no other way to ask.
                let umask = rustix::process::umask(rustix::fs::Mode::empty());
                rustix::process::umask(umask);
                0o666 & !umask.bits()
            }
        };
        let permissions = std::fs::Permissions::from_mode(mode);
        tmp.as_file()
            .set_permissions(permissions)
            .with_context(writing)?;
    }
    let mut w = io::BufWriter::new(tmp.as_file_mut());
    write(&mut w).with_context(writing)?;
    w.flush().with_context(writing)?;
    drop(w);
    tmp.as_file().sync_all().with_context(writing)?;
    // The error alone: a PersistError's message repeats its cause.
    tmp.persist(&target)
        .map_err(|e| e.error)
        .with_context(writing)?;
    Ok(())
}

/// Fails if the file `path` (an output, a model file or its lock; `named` is how the message
/// names it, with its option) would be one of `inputs` (files or folders of the mail read, an
/// index) or lie inside one, however spelled (symbolic links, `..`), and whether or not it or
/// its folders exist yet: the file written there would replace a message (or an index) being
/// read, or be a new message in a maildir (`train --ham MD -m MD/new/model.spamsort` added the
/// model and its lock to MD/new, and the next `train` learned the old model as ham). An input
/// that does not exist is none to be in; standard input, `-`, is never one.
pub fn refuse_output_in<'a>(
    named: &str,
    path: &Path,
    mut inputs: impl Iterator<Item = &'a PathBuf>,
) -> anyhow::Result<()> {
    let Some(resolved) = resolved(path) else {
        return Ok(());
    };
    let within = |input: &Path| {
        input.as_os_str() != "-"
            && std::fs::canonicalize(input).is_ok_and(|input| resolved.starts_with(input))
    };
    if let Some(input) = inputs.find(|i| within(i)) {
        anyhow::bail!(
            "{named}: that is (in) the mail read, {}: give a file elsewhere for it",
            input.display()
        );
    }
    Ok(())
}

/// Where `path` is or would be made: its deepest existing ancestor (itself, if it exists) with
/// its symbolic links resolved, then the rest of it, which does not exist yet and so holds no
/// link (`..` there taken as the folder made before it). `None` if it cannot be made absolute.
fn resolved(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    let parts: Vec<Component> = absolute.components().collect();
    (0..=parts.len()).rev().find_map(|existing| {
        let ancestor: PathBuf = parts[..existing].iter().collect();
        let mut resolved = std::fs::canonicalize(ancestor).ok()?;
        for part in &parts[existing..] {
            match part {
                Component::ParentDir => {
                    resolved.pop();
                }
                Component::Normal(name) => resolved.push(name),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        Some(resolved)
    })
}
