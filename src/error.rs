//! The library's error type. Only I/O and configuration problems are errors: malformed mail is
//! normal input and never reaches this type (the tokenizer degrades instead).

use std::path::PathBuf;

/// Everything the library can fail with. Each variant names what failed and where, so the CLI
/// can print one line that tells the user what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading a mailbox or message failed.
    #[error(transparent)]
    Corpus(#[from] crate::corpus::CorpusError),
    /// A model file could not be loaded or saved.
    #[error(transparent)]
    ModelFile(#[from] crate::model_file::ModelFileError),
    /// The daemon's folders overlap unsafely, or its inbox is missing.
    #[error(transparent)]
    Layout(#[from] crate::daemon::LayoutError),
    /// A setting is out of range or inconsistent.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A Naive Bayes model was asked to unlearn a message its counts do not hold: the record
    /// of learned messages (which decides what to unlearn) and the counts disagree, as they
    /// do after the counts were edited (a hand-edited dump restored). Nothing can make them
    /// agree but learning the mail again.
    #[error(
        "cannot unlearn this message as {label} from the {model} model: its counts do not \
         hold it, though the record of learned messages says it was learned so (the counts \
         were edited, or do not belong with the record); nothing was changed in the model \
         file: run `spamsort train` again to rebuild counts that hold what was learned"
    )]
    NotLearned {
        /// The model that refused.
        model: crate::models::ModelKind,
        /// The label the message was to be unlearned as.
        label: crate::label::Label,
    },
    /// Some other I/O failed on a named path (the failure is the [`source`](std::error::Error::source)).
    #[error("{path}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
}

/// `Result` with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shows an error and each of its causes once, `outer: inner: innermost`, as anyhow's `{:#}`
/// does. This crate's errors keep their cause in [`source`](std::error::Error::source), not
/// in their own text, so a log line or message built with plain `{}` would drop it: write
/// `ErrorChain(&e)` there instead.
pub struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(e) = cause {
            write!(f, ": {e}")?;
            cause = e.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_error_shows_its_cause_once_in_the_chain() {
        let e = Error::Io {
            path: "/no/such".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        let shown = ErrorChain(&e).to_string();
        assert_eq!(
            shown,
            format!(
                "/no/such: {}",
                std::io::Error::from(std::io::ErrorKind::NotFound)
            )
        );
    }
}
