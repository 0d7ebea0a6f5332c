//! [`SpamFilter`]: tokenizer settings + vocabulary + (from the models issue on) the fitted
//! models and thresholds. It is what `train` builds, what the model file holds, and what every
//! front end asks for verdicts, so they can never disagree about a message.

use crate::corpus::LabeledCorpus;
use crate::features::{Vocabulary, VocabularyParams};
use crate::label::{Label, Thresholds};
use crate::model_file::{self, ModelFileError};
use crate::tokenize::{Tokenized, Tokenizer, TokenizerConfig};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How to train a filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrainParams {
    /// Tokenizer settings, stored in the filter.
    pub tokenizer: TokenizerConfig,
    /// Vocabulary settings.
    pub vocabulary: VocabularyParams,
}

/// What training saw, for `info` and the end-of-training summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Messages per class, ham first.
    pub messages: [u64; 2],
    /// Tokens produced, all messages together.
    pub tokens: u64,
    /// Messages the MIME parser could not read (tokenized as text instead).
    pub fallbacks: u64,
    /// Messages cut short by the tokenizer's caps.
    pub truncated: u64,
}

/// A trained filter: the unit that is saved, loaded and asked for verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpamFilter {
    tokenizer: TokenizerConfig,
    vocabulary: Vocabulary,
    thresholds: Thresholds,
    summary: TrainingSummary,
}

impl SpamFilter {
    /// Tokenizes the corpus (in parallel; the result does not depend on the thread count) and
    /// builds the vocabulary.
    pub fn train(corpus: &LabeledCorpus, params: &TrainParams) -> SpamFilter {
        let tokenizer = Tokenizer::new(params.tokenizer.clone());
        let tokenized: Vec<(Tokenized, Label)> = corpus
            .messages
            .par_iter()
            .map(|(message, label)| (tokenizer.tokenize(&message.bytes), *label))
            .collect();
        let mut summary = TrainingSummary::default();
        for (t, label) in &tokenized {
            summary.messages[label.index()] += 1;
            summary.tokens += t.tokens.len() as u64;
            summary.fallbacks += u64::from(t.fallback);
            summary.truncated += u64::from(t.truncated);
        }
        let vocabulary = params
            .vocabulary
            .fit(tokenized.iter().map(|(t, l)| (t.tokens.as_slice(), *l)));
        SpamFilter {
            tokenizer: params.tokenizer.clone(),
            vocabulary,
            thresholds: Thresholds::default(),
            summary,
        }
    }

    /// Loads a filter saved by [`SpamFilter::save`], checking it before it is trusted.
    pub fn load(path: &Path) -> Result<SpamFilter, ModelFileError> {
        let filter: SpamFilter = model_file::load(path)?;
        filter
            .vocabulary
            .validate()
            .map_err(|reason| ModelFileError::invalid(path, reason))?;
        Ok(filter)
    }

    /// Saves the filter atomically.
    pub fn save(&self, path: &Path) -> Result<(), ModelFileError> {
        model_file::save(self, path)
    }

    /// The tokenizer settings used in training.
    pub fn tokenizer_config(&self) -> &TokenizerConfig {
        &self.tokenizer
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// The verdict thresholds.
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// What training saw.
    pub fn summary(&self) -> &TrainingSummary {
        &self.summary
    }
}
