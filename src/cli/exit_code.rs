//! Process exit codes, in one place. Single-message verdicts follow bogofilter, which mail
//! setups already test for: 0 spam, 1 ham, 2 unsure, 3 error.

use spamsort::Verdict;
use std::process::ExitCode;

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Success, or for a one-message verdict: spam.
    Success = 0,
    /// One-message verdict: ham.
    Ham = 1,
    /// One-message verdict: unsure.
    Unsure = 2,
    /// Something failed.
    Error = 3,
}

impl ExitStatus {
    /// The bogofilter-compatible code for a verdict.
    pub fn of(verdict: Verdict) -> ExitStatus {
        match verdict {
            Verdict::Spam => ExitStatus::Success,
            Verdict::Ham => ExitStatus::Ham,
            Verdict::Unsure => ExitStatus::Unsure,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
        ExitCode::from(s as u8)
    }
}
