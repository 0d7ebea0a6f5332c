//! The `spamsort` command: parse arguments, dispatch to a subcommand, print the error chain
//! once. Work happens in the library; see `cli/` for one file per subcommand.

mod cli;

// mimalloc: tokenizing allocates many small strings, which it makes cheaper than glibc's
// allocator, and under an address-space limit (`ulimit -v`) glibc's per-thread arenas cannot
// be reserved while mimalloc's segments can (tests/bounded_cost.rs runs `serve` under one).
// Transparent huge pages are turned off first thing (see `cli::pages`), and SIGXFSZ is caught
// (see `cli::signals`). Wrapped so that `filter` passes its message through when memory runs
// out (see `cli::out_of_memory`).
#[global_allocator]
static GLOBAL: cli::out_of_memory::Allocator = cli::out_of_memory::Allocator;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::pages::use_small_pages();
    cli::signals::survive_file_size_limit();
    // Usage errors exit 3 like every other error: exit codes 1 and 2 mean ham and unsure to
    // the mail setups that call spamsort.
    let result = match cli::parse() {
        Ok(args) => cli::run(args),
        // A refused `filter` command line still passes the message through.
        Err(e) => match cli::refused(&e) {
            Some(result) => result,
            None => {
                let _ = e.print();
                return if e.use_stderr() {
                    cli::ExitStatus::Error.into()
                } else {
                    ExitCode::SUCCESS
                };
            }
        },
    };
    match result {
        Ok(code) => code.into(),
        Err(err) if cli::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            cli::say(format_args!("spamsort: {err:#}"));
            cli::ExitStatus::Error.into()
        }
    }
}
