//! spamsort: an email spam filter that learns from your own mail.
//!
//! The pipeline, one module per stage:
//!
//! ```text
//! mailbox (maildir | mbox | MH dir | TREC index)
//!    -> corpus::Message { bytes, source }            raw bytes, never modified
//!    -> tokenize::Tokenizer -> Tokens                MIME-aware, bounded cost
//!    -> features::Vocabulary -> SparseVector         token ids + weights
//!    -> models (Classifier) -> SpamScore             P(spam) in [0, 1]
//!    -> Thresholds -> Verdict { Spam, Ham, Unsure }
//! ```
//!
//! [`SpamFilter`] ties the stages together and is what the model file ([`model_file`]) holds;
//! it is also the one learner: the vocabulary and the models grow with every message learned,
//! each once ([`filter::learned`] keeps the record). The [`filter`] folder is the filter tier:
//! [`filter::scorer`] scores with one model straight from the file's bytes (the pipe filter's
//! fast path), [`filter::shared`] serves the long-running front ends (the maildir [`daemon`]
//! and the [`spamd`] protocol server), [`filter::stamp`] inserts the X-Spam-* fields and
//! [`filter::dump`] writes a filter's whole learned state as text and rebuilds it exactly.
//! [`eval`] compares the models, cross-validated and online. [`batch`] runs work over a stream
//! of messages in parallel, in input order, with bounded memory (`classify`, `train`).
//!
//! The library needs none of the command line's crates (clap, indicatif, toml, mimalloc,
//! signal-hook, tracing-subscriber, anyhow): they sit behind the default `cli` feature, which
//! only the `spamsort` binary requires. Depend on spamsort with `default-features = false`.
//!
//! ```
//! use spamsort::{Tokenizer, TokenizerConfig};
//! let tokenizer = Tokenizer::new(TokenizerConfig::default());
//! let out = tokenizer.tokenize(b"Subject: Cheap meds\r\n\r\nVisit http://pills.example/buy now\r\n");
//! assert!(out.tokens.contains("subject:cheap"));
//! assert!(out.tokens.contains("url:pills.example"));
//! ```

// The docs are written for readers of the code: module docs name their private parts, which
// `cargo doc --document-private-items` (as CI builds them, warnings denied) links to.
#![allow(rustdoc::private_intra_doc_links)]

pub mod batch;
pub mod corpus;
pub mod daemon;
pub mod error;
pub mod eval;
pub mod features;
pub mod filter;
pub mod label;
pub mod model_file;
pub mod models;
pub mod spamd;
pub mod tokenize;

pub use corpus::{LabeledCorpus, Mailbox, MailboxFormat, Message, Source};
pub use error::{Error, Result};
pub use features::{
    Dataset, FeatureConfig, FeatureId, FeatureRemap, PruneRule, SparseVector, Vocabulary,
    VocabularyParams, Weighting,
};
pub use filter::{
    Classification, DEFAULT_MAX_MODEL_BYTES, Explanation, LearnOutcome, MIN_MAX_MODEL_BYTES,
    PruneOutcome, SpamFilter, TrainParams, TrainingSummary, check_max_model_bytes,
};
pub use label::{Label, SpamScore, Thresholds, Verdict};
pub use tokenize::{Tokenized, Tokenizer, TokenizerConfig, Tokens};
