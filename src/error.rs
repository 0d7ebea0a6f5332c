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
    /// Some other I/O failed on a named path.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
}

/// `Result` with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
