//! From tokens to numbers: the [`Vocabulary`] maps tokens to dense ids, [`SparseVector`] holds
//! one message as sorted (id, value) pairs, [`FeatureConfig`] weights and normalizes them, and
//! [`Dataset`] holds a labeled set of count vectors with the fold splits evaluation needs.
//! [`hashed`] features (byte 4-grams) bypass the vocabulary: a token names its bucket.

mod buckets;
mod dataset;
mod document_frequencies;
pub mod hashed;
mod input_rows;
mod log_count_ratio;
mod matches;
mod remap;
mod sparse;
mod vocabulary;
mod weighting;
mod word_counts;

pub use buckets::Buckets;
pub use dataset::{Dataset, Row, stratified_folds, training_indices};
pub use document_frequencies::{DocumentFrequencies, ProvisionalIds};
pub(crate) use input_rows::InputRows;
pub(crate) use log_count_ratio::{squared_log_count_ratios, squared_scale_at};
pub(crate) use matches::sorted_matches;
pub use remap::FeatureRemap;
pub use sparse::SparseVector;
pub(crate) use sparse::dot;
pub(crate) use vocabulary::{CountsSection, TokenTable, slot_hash};
pub use vocabulary::{FeatureId, NumberedTokens, PruneRule, Vocabulary, VocabularyParams};
pub use weighting::{FeatureConfig, FeatureTransform, Weighting};
pub(crate) use weighting::{FeatureTransformView, count_id, weigh, weighed};
pub use word_counts::WordCounts;
