//! The `spamsort` command: parse arguments, dispatch to a subcommand, print the error chain
//! once. Work happens in the library; see `cli/` for one file per subcommand.

mod cli;

// The system allocator, not mimalloc: the pipe filter starts once per message, and mimalloc's
// set-up and tear-down (arena reservation, transparent huge pages zeroed, purging at exit) cost
// more than all its allocations save there (benches/pipe_latency.sh).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Usage errors exit 3 like every other error: exit codes 1 and 2 mean ham and unsure to
    // the mail setups that call spamsort.
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                cli::ExitStatus::Error.into()
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli::run(args) {
        Ok(code) => code.into(),
        Err(err) if cli::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("spamsort: {err:#}");
            cli::ExitStatus::Error.into()
        }
    }
}
