//! Command-line front end: clap definitions and dispatch. Each subcommand lives in its own file
//! and only converts arguments, calls the library, and prints.

mod args;
mod eval;
mod exit_code;
mod info;
mod terminal;
mod tokens;
mod train;

pub use exit_code::ExitStatus;

use clap::{Parser, Subcommand};

/// spamsort: an email spam filter that learns from your own mail.
#[derive(Debug, Parser)]
#[command(name = "spamsort", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read spam and ham mailboxes, build the vocabulary, save the model file.
    Train(train::TrainArgs),
    /// Cross-validate the models on labeled mail and compare them.
    Eval(eval::EvalArgs),
    /// Show what a model file holds.
    Info(info::InfoArgs),
    /// Print the tokens the filter sees in a message, one per line.
    Tokens(tokens::TokensArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Train(args) => train::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Info(args) => info::run(args),
        Command::Tokens(args) => tokens::run(args),
    }
}

/// True if the error chain ends in a broken pipe (`spamsort tokens x | head`): not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
