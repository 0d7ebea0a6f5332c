//! From tokens to numbers: the [`Vocabulary`] maps tokens to dense ids, [`SparseVector`] holds
//! one message as sorted (id, value) pairs, [`FeatureConfig`] weights and normalizes them, and
//! [`Dataset`] holds a labeled set of count vectors with the fold splits evaluation needs.

mod dataset;
mod remap;
mod sparse;
mod vocabulary;
mod weighting;

pub use dataset::{Dataset, stratified_folds, training_indices};
pub use remap::FeatureRemap;
pub use sparse::SparseVector;
pub use vocabulary::{FeatureId, PruneRule, Vocabulary, VocabularyParams};
pub(crate) use vocabulary::{TokenTable, VocabularyView};
pub(crate) use weighting::FeatureTransformView;
pub use weighting::{FeatureConfig, FeatureTransform, Weighting};
