//! `spamsort filter`: one message on stdin, the same bytes on stdout with X-Spam-* headers
//! added, for procmail, maildrop, fetchmail and MTAs. Mail is never lost: on any failure (no
//! model, corrupt model, oversize message, internal error) the input goes out unchanged and
//! the reason goes to stderr.
//!
//! The message is streamed: only its head is held (what the model's tokenizer reads, which
//! holds the header block of any sane message), classified and written marked; the rest is
//! copied through in small chunks, so a message of any size costs the same time and memory.

use super::args::{HeaderArgs, ModelArgs, VerdictArgs, open_model};
use super::out_of_memory::{Doing, holding};
use super::waiting::Waiting;
use super::{ExitStatus, input};
use spamsort::Verdict;
use spamsort::filter::policy::{HeaderStyle, Policy};
use spamsort::filter::scorer::{Scorer, ScorerFile};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

// Arguments of `spamsort filter` (not a doc comment: see `Command`).
#[derive(Debug, Default, clap::Args)]
pub struct FilterArgs {
    #[command(flatten)]
    pub(super) model: ModelArgs,
    #[command(flatten)]
    pub(super) verdict: VerdictArgs,
    #[command(flatten)]
    pub(super) headers: HeaderArgs,
    /// Exit 0 for spam, 1 ham, 2 unsure, 3 error (bogofilter's codes) instead of always 0.
    #[arg(long)]
    pub(super) exit_code: bool,
    /// Messages larger than this many bytes pass through unclassified; up to this many bytes
    /// are then held to tell. Default: no limit, and only the head the model reads is held.
    #[arg(long, value_name = "BYTES")]
    pub(super) max_size: Option<u64>,
}

pub fn run(args: FilterArgs) -> anyhow::Result<ExitStatus> {
    streams_open()?;
    let (mut stdin, mut stdout) = standard_streams();
    // Memory running out while the model loads (nothing read yet), and later while the message
    // is classified, passes the message through (see `out_of_memory`).
    let passed = passed_status(args.exit_code) as i32;
    let opened = holding(&[], passed, Doing::LoadingTheModel, || open(&args));
    let scorer = holding(&[], passed, Doing::LoadingTheModel, || match &opened {
        Ok((file, policy)) => policy
            .scorer(file)
            .map(|s| (s, &policy.headers))
            .map_err(|e| format!("{e:#}")),
        Err(reason) => Err(reason.clone()),
    });
    let mut head = Vec::new();
    let mut failed_read = None;
    let outcome = match scorer {
        Err(reason) => Err(reason),
        Ok((scorer, style)) => {
            let head_bytes = scorer.tokenizer_config().head_bytes();
            let limit =
                usize::try_from(args.max_size.map_or(head_bytes, |max| head_bytes.max(max)))
                    .unwrap_or(usize::MAX);
            head = input::stdin_buffer(limit.saturating_add(1));
            match input::read_head(&mut stdin, limit, &mut head) {
                Err(e) => {
                    let reason = format!(
                        "reading standard input failed after {} bytes: {}",
                        head.len() + e.unheld().len(),
                        e.error
                    );
                    // Bytes read that the buffer could not take: they follow it out.
                    failed_read = Some(e);
                    Err(reason)
                }
                Ok(_) if args.max_size.is_some_and(|max| head.len() as u64 > max) => Err(format!(
                    "message larger than {} bytes",
                    args.max_size.unwrap_or(0)
                )),
                Ok(whole) => holding(&head, passed, Doing::Classifying, || {
                    classify_and_mark(&scorer, style, &head, whole)
                }),
            }
        }
    };
    let status = match outcome {
        Ok((marked, verdict)) => {
            deliver(&mut stdout, &marked)?;
            if args.exit_code {
                ExitStatus::of(verdict)
            } else {
                ExitStatus::Success
            }
        }
        Err(reason) => {
            let unheld = failed_read
                .as_ref()
                .map_or(&[][..], input::HeadError::unheld);
            let read = [&head[..], unheld];
            return pass_through(&mut stdin, &mut stdout, &read, &reason, args.exit_code);
        }
    };
    copy_rest(&mut stdin, &mut stdout)?;
    Ok(status)
}

/// The filter's answer to a command line clap refused (`argv`: the whole command line),
/// as to any other failure: the message on standard input goes out unchanged, and why to
/// standard error; exit 0, or 3 with `--exit-code` (or an argument that starts so). A
/// setting misspelt in a procmail or MTA configuration must not cost the mail. `None` where
/// the command is not `filter`, where clap was asked for help or the version rather than
/// refusing, and where standard input is a terminal (someone typing the command, who wants
/// the error, not a wait for a message).
pub(super) fn refused(
    error: &clap::Error,
    argv: &[std::ffi::OsString],
) -> Option<anyhow::Result<ExitStatus>> {
    use std::io::IsTerminal;
    let is_filter = argv.get(1).is_some_and(|command| command == "filter");
    if !is_filter || !error.use_stderr() || std::io::stdin().is_terminal() {
        return None;
    }
    if let Err(e) = streams_open() {
        return Some(Err(e));
    }
    // `--exit-code=true`, `--exit-codes`: exit codes asked for, if misspelt; 0 would read as
    // spam to a caller that asked for them, 3 is an error (the message kept) to any caller.
    let exit_code = argv[2..]
        .iter()
        .any(|a| a.as_encoded_bytes().starts_with(b"--exit-code"));
    let reason = format!("the command line was refused: {}", error.render());
    let (mut stdin, mut stdout) = standard_streams();
    Some(pass_through(
        &mut stdin,
        &mut stdout,
        &[],
        reason.trim_end(),
        exit_code,
    ))
}

/// Fails if standard output was closed when the process started (see [`was_closed`]):
/// nothing is read, and the caller (procmail, an MTA) keeps the message it sees the filter
/// fail on. Fails too if standard input was closed: there is no message, and reading the
/// `/dev/null` put in its place, the filter delivered a made-up one (its own fields alone)
/// with exit 0, as if it had filtered mail (a caller's `< /dev/null` is an empty message,
/// filtered as any other). And, as `cat` does, if standard input and output are the same
/// regular file (`spamsort filter < f >> f`): what is written would be read back as more of
/// the message, without end (a 3 MB file grew by 1 GB a second), and the file holds the
/// message as it was.
fn streams_open() -> anyhow::Result<()> {
    use std::os::fd::AsFd;
    if was_closed(std::io::stdout().as_fd()) {
        anyhow::bail!(
            "standard output is closed (the message would be written to /dev/null in its \
             place): nothing read, nothing delivered"
        );
    }
    if was_closed(std::io::stdin().as_fd()) {
        anyhow::bail!(
            "standard input is closed (there is no message, only the /dev/null in its \
             place): nothing read, nothing delivered"
        );
    }
    if input_is_output() {
        anyhow::bail!(
            "standard input and output are the same file (the message written would be read \
             back as more of it, without end): nothing read, nothing delivered"
        );
    }
    Ok(())
}

/// True if standard input and output are one regular file (the same device and inode).
fn input_is_output() -> bool {
    use rustix::fs::{FileType, fstat};
    use std::os::fd::AsFd;
    let regular =
        |s: &rustix::fs::Stat| FileType::from_raw_mode(s.st_mode) == FileType::RegularFile;
    match (
        fstat(std::io::stdin().as_fd()),
        fstat(std::io::stdout().as_fd()),
    ) {
        (Ok(i), Ok(o)) => regular(&i) && (i.st_dev, i.st_ino) == (o.st_dev, o.st_ino),
        _ => false,
    }
}

/// True if the standard descriptor `fd` (input or output) was closed when the process
/// started: the Rust runtime then opens `/dev/null` in its place, for reading and writing, and
/// the filter would write the message into nothing, or read an empty one, and exit 0. (A
/// caller's `> /dev/null` opens it for writing only, `< /dev/null` for reading only.)
fn was_closed(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    use rustix::fs::{FileType, OFlags, fcntl_getfl, fstat, stat};
    // A pipe or a file the caller opened for the message is read-only or write-only: nothing
    // more to ask.
    if !fcntl_getfl(fd).is_ok_and(|f| f & OFlags::RWMODE == OFlags::RDWR) {
        return false;
    }
    let device = |s: rustix::fs::Stat| {
        (FileType::from_raw_mode(s.st_mode) == FileType::CharacterDevice).then_some(s.st_rdev)
    };
    let null = stat("/dev/null").ok().and_then(device);
    null.is_some() && fstat(fd).ok().and_then(device) == null
}

/// Standard input, read unbuffered (see [`Unbuffered`]), and output, each waited for where it
/// would block (see [`Waiting`]): a message on a pipe handed over non-blocking is read and
/// written whole.
fn standard_streams() -> (Waiting<Unbuffered>, Waiting<std::io::StdoutLock<'static>>) {
    (
        Waiting(Unbuffered(std::io::stdin())),
        Waiting(std::io::stdout().lock()),
    )
}

/// Standard input read straight from its descriptor, not through the buffer of
/// [`std::io::Stdin`]: every byte read is the filter's, held or passed on, and none waits in a
/// buffer that a pass-through when memory ran out (which reads the descriptor, see
/// `out_of_memory`) would skip.
struct Unbuffered(std::io::Stdin);

impl std::io::Read for Unbuffered {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(rustix::io::read(&self.0, buf)?)
    }
}

impl std::os::fd::AsFd for Unbuffered {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Writes `read` (what was read of the message, in order) and the rest of standard input
/// unchanged, says why on standard error, and answers exit 0, or 3 with `exit_code`.
fn pass_through(
    stdin: &mut impl std::io::Read,
    stdout: &mut impl Write,
    read: &[&[u8]],
    reason: &str,
    exit_code: bool,
) -> anyhow::Result<ExitStatus> {
    for bytes in read {
        deliver(stdout, bytes)?;
    }
    super::say(format_args!(
        "spamsort: message passed through unchanged: {reason}"
    ));
    copy_rest(stdin, stdout)?;
    Ok(passed_status(exit_code))
}

/// The exit status of a message passed through: 0, or 3 with `--exit-code`.
fn passed_status(exit_code: bool) -> ExitStatus {
    if exit_code {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    }
}

/// Copies the rest of the message, whatever its size, in bounded chunks, and flushes.
fn copy_rest(stdin: &mut impl std::io::Read, stdout: &mut impl Write) -> anyhow::Result<()> {
    std::io::copy(stdin, stdout)
        .and_then(|_| stdout.flush())
        .map_err(|e| {
            undelivered(
                "copying the message from standard input to standard output",
                e,
            )
        })?;
    Ok(())
}

/// Writes `bytes` of the message to standard output.
fn deliver(stdout: &mut impl Write, bytes: &[u8]) -> anyhow::Result<()> {
    stdout
        .write_all(bytes)
        .map_err(|e| undelivered("writing the message to standard output", e))
}

/// The error of a message not written out whole, a closed pipe included: the message was not
/// delivered, so unlike other commands (whose reader may stop wanting output, see
/// `is_broken_pipe`) this is the filter's failure. Kept as text, so no I/O error in it reads as
/// a closed pipe that `main` would take for success.
fn undelivered(doing: &str, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("{doing}: {e}")
}

/// The model file and the policy, or why they cannot be had.
fn open(args: &FilterArgs) -> Result<(ScorerFile, Policy), String> {
    let config = args.model.config().map_err(|e| format!("{e:#}"))?;
    let policy = args
        .verdict
        .policy(&config, Some(&args.headers))
        .map_err(|e| format!("{e:#}"))?;
    let file = open_model(&args.model, &policy, &config).map_err(|e| format!("{e:#}"))?;
    Ok((file, policy))
}

/// The marked head and the verdict, or why the message cannot be marked. `whole`: `head` is
/// the entire message; otherwise the rest follows it unchanged.
fn classify_and_mark(
    scorer: &Scorer<'_>,
    style: &HeaderStyle,
    head: &[u8],
    whole: bool,
) -> Result<(Vec<u8>, Verdict), String> {
    // The tokenizer already contains parser panics; this guards everything else.
    let (marked, verdict) = catch_unwind(AssertUnwindSafe(|| {
        // The whole chain: an I/O error's reason is its source.
        let result = scorer
            .classify(head)
            .map_err(|e| format!("{:#}", anyhow::Error::from(e)))?;
        let thresholds = scorer.thresholds();
        let marked = if whole {
            style.mark(head, &result, thresholds)
        } else {
            style.mark_head(head, &result, thresholds)
        };
        Ok::<_, String>((marked, result.verdict))
    }))
    .map_err(|_| "internal error while classifying (please report it)".to_string())??;
    Ok((marked.map_err(|why| why.to_string())?, verdict))
}
