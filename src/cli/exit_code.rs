//! Process exit codes, in one place. Single-message verdicts follow bogofilter, which mail
//! setups already test for: 0 spam, 1 ham, 2 unsure, 3 error.

use std::process::ExitCode;

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Success (or, for a one-message verdict, spam).
    Success = 0,
    /// Something failed.
    Error = 3,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
        ExitCode::from(s as u8)
    }
}
