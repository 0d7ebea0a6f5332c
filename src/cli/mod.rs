//! Command-line front end: clap definitions and dispatch. Each subcommand lives in its own file
//! and only converts arguments, calls the library, and prints.

mod args;
mod classify;
mod config;
mod daemon;
mod dump;
mod eval;
mod exit_code;
mod explain;
mod filter;
mod filter_argv;
mod info;
mod input;
mod learn;
mod logging;
mod man;
pub mod out_of_memory;
mod output;
pub mod pages;
mod prune;
mod readiness;
mod restore;
mod serve;
pub mod signals;
mod terminal;
mod tokens;
mod train;
mod waiting;

pub use exit_code::ExitStatus;

use clap::{Parser, Subcommand};

/// spamsort: an email spam filter that learns from your own mail.
#[derive(Debug, Parser)]
#[command(name = "spamsort", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Each subcommand's arguments are built only when that subcommand runs (clap's `defer`): the
// pipe filter starts once per message and need not build the other fourteen. A deferred
// argument struct's doc comment would replace the variant's description in the subcommand's
// --help, so those structs carry plain comments.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// Read spam and ham mailboxes, build the vocabulary, save the model file.
    Train(train::TrainArgs),
    /// Classify messages: one result per message.
    Classify(classify::ClassifyArgs),
    /// Read one message on stdin and write it to stdout with X-Spam-* headers added.
    Filter(filter::FilterArgs),
    /// Learn (or unlearn) messages as spam or ham, updating the model file.
    Learn(learn::LearnArgs),
    /// Show the verdict for a message and the tokens that pushed it.
    Explain(explain::ExplainArgs),
    /// Cross-validate the models on labeled mail and compare them.
    Eval(eval::EvalArgs),
    /// Show what a model file holds.
    Info(info::InfoArgs),
    /// Drop rare tokens not seen for a while from the model file (and set its size limit).
    Prune(prune::PruneArgs),
    /// Watch an inbox maildir and file each new message into spam or ham maildirs.
    Daemon(daemon::DaemonArgs),
    /// Serve SpamAssassin's spamd protocol (spamc, milters, MTAs) in the foreground.
    Serve(serve::ServeArgs),
    /// Write the model file's whole learned state as text (a backup: see `restore`).
    Dump(dump::DumpArgs),
    /// Rebuild a model file from the text of `dump`.
    Restore(restore::RestoreArgs),
    /// Print the tokens of a message, one per line (with a model's settings: --model)
    Tokens(tokens::TokensArgs),
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `spamsort man | man -l -`.
    Man,
}

/// The command line: `spamsort filter`'s plain forms read directly (see `filter_argv`: the
/// pipe filter starts once per message), anything else parsed by clap.
pub fn parse() -> Result<Cli, clap::Error> {
    let argv: Vec<_> = std::env::args_os().collect();
    let model_env = std::env::var_os(args::MODEL_ENV);
    match filter_argv::parse(&argv, model_env.as_deref()) {
        Some(args) => Ok(Cli {
            command: Command::Filter(args),
        }),
        None => Cli::try_parse_from(argv),
    }
}

/// What to do about a command line clap refused: for `spamsort filter` whose standard input is
/// not a terminal, pass the message through unchanged (see [`filter::refused`]); `None`: print
/// the error (or the help clap was asked for) as usual.
pub fn refused(error: &clap::Error) -> Option<anyhow::Result<ExitStatus>> {
    let argv: Vec<_> = std::env::args_os().collect();
    filter::refused(error, &argv)
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    if !matches!(cli.command, Command::Serve(_) | Command::Daemon(_)) {
        logging::init_for_command();
    }
    match cli.command {
        Command::Train(args) => train::run(args),
        Command::Classify(args) => classify::run(args),
        Command::Filter(args) => filter::run(args),
        Command::Learn(args) => learn::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Info(args) => info::run(args),
        Command::Prune(args) => prune::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Daemon(args) => daemon::run(args),
        Command::Tokens(args) => tokens::run(args),
        Command::Dump(args) => dump::run(args),
        Command::Restore(args) => restore::run(args),
        Command::Man => man::run(),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            use std::io::Write;
            // Generated into memory first: clap_complete panics on a failed write, and a
            // closed pipe must end the command successfully.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "spamsort", &mut script);
            output::stdout().write_all(&script)?;
            Ok(ExitStatus::Success)
        }
    }
}

/// Writes `line` and a newline to standard error, and goes on whatever that write does: where
/// stderr cannot be written (a full disk under a mail program's log, a closed pipe, /dev/full)
/// the line is lost, never the command's work (`eprintln!` panics there, and `filter` then
/// passed nothing of its message through).
pub fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// True if the error chain ends in a broken pipe (`spamsort tokens x | head`): not a failure.
/// (`filter` reports a message it could not write out as text instead: that is its failure.)
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
