//! spamsort: an email spam filter that learns from your own mail.
//!
//! The pipeline, one module per stage:
//!
//! ```text
//! mailbox (maildir | mbox | MH dir | TREC index)
//!    -> corpus::Message { bytes, source }            raw bytes, never modified
//!    -> tokenize::Tokenizer -> Vec<Token>            MIME-aware, bounded cost
//!    -> features::Vocabulary -> SparseVector         token ids + weights
//!    -> models (Classifier) -> SpamScore             P(spam) in [0, 1]
//!    -> Thresholds -> Verdict { Spam, Ham, Unsure }
//! ```
//!
//! [`SpamFilter`] ties the stages together and is what the model file ([`model_file`]) holds;
//! it is also the one learner: the vocabulary and the models grow with every message learned,
//! each once ([`learned`] keeps the record); [`scorer`] scores with one model straight from the file's bytes (the pipe filter's fast path),
//! [`shared_filter`] serves the long-running front ends: the maildir [`daemon`] and the
//! [`spamd`] protocol server. [`eval`] compares the models, cross-validated and online.
//! [`dump`] writes a filter's whole learned state as text and rebuilds it exactly.
//!
//! ```
//! use spamsort::{Tokenizer, TokenizerConfig};
//! let tokenizer = Tokenizer::new(TokenizerConfig::default());
//! let out = tokenizer.tokenize(b"Subject: Cheap meds\r\n\r\nVisit http://pills.example/buy now\r\n");
//! assert!(out.tokens.contains(&"subject:cheap".to_string()));
//! assert!(out.tokens.contains(&"url:pills.example".to_string()));
//! ```

pub mod corpus;
pub mod daemon;
pub mod dump;
pub mod error;
pub mod eval;
pub mod features;
pub mod headers;
pub mod label;
pub mod learned;
pub mod model_file;
pub mod models;
mod packed;
pub mod scorer;
pub mod shared_filter;
pub mod spam_filter;
pub mod spamd;
pub mod tokenize;

pub use corpus::{LabeledCorpus, Mailbox, MailboxFormat, Message, Source};
pub use error::{Error, Result};
pub use features::{
    Dataset, FeatureConfig, FeatureId, FeatureRemap, PruneRule, SparseVector, Vocabulary,
    VocabularyParams, Weighting,
};
pub use label::{Label, SpamScore, Thresholds, Verdict};
pub use spam_filter::{
    Classification, DEFAULT_MAX_MODEL_BYTES, Explanation, LearnOutcome, PruneOutcome, SpamFilter,
    TrainParams, TrainingSummary,
};
pub use tokenize::{Token, Tokenized, Tokenizer, TokenizerConfig};
