//! A journal record's patch: what the record's learning changed, as a scorer of one message
//! needs it, so that `filter` takes the journal's changes instead of replaying its learning.
//!
//! Learning a message changes its own tokens' per-token values (the Naive Bayes models'
//! counts, the SVM's and logistic regression's weights) and a few values that depend on every
//! token (message counts, class totals, |V|, the Bernoulli model's histograms and absent-word
//! terms, the linear models' biases, the fuser); every other token's values stay as the file
//! saved them. So [`learn`](super::journal::learn) works the record out on the file restricted
//! to the record's tokens (see [`super::sparse`]) and keeps the result, the models restricted
//! to those tokens, as the record's [`Patch`]. A scorer of one message then restricts the file
//! to the message's tokens and takes each patch into it in order ([`TrainedModel::overlay`]):
//! the values of the message's tokens that a record changed and the newest of everything
//! else. That is the state a full load (which replays the records' operations, see
//! [`super::journal`]) reaches, bit for bit, at a cost that barely grows with the journal
//! (`benches/pipe_latency.sh`).
//!
//! A record has no patch where that cannot be exact (models that see the hashed features or
//! complement Naive Bayes, see [`TrainedModel::overlay`]), or after a record that has none:
//! a scorer then replays the journal ([`super::sparse::replayed_for`]). A run that unlearns is
//! not journaled at all (its learn compacts the file): unlearning reads a token's document
//! frequencies, which patches do not carry.

use super::{SpamFilter, TrainingSummary};
use crate::features::FeatureId;
use crate::model_file::ModelFileError;
use crate::models::{Fusion, TrainedModel};
use crate::tokenize::Token;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What one journal record's learning changed, for a scorer of one message (see the module
/// doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Patch {
    /// The vocabulary's length after the record: a token learned later is numbered from here.
    pub vocabulary_len: u64,
    /// The vocabulary ids of the record's messages' tokens (hashed features aside),
    /// ascending.
    ids: Vec<FeatureId>,
    /// The tokens the record added to the vocabulary: those of the last of `ids`, in order.
    /// (A scorer finds the others by their ids in the score table or an earlier patch.)
    added: Vec<Token>,
    /// Every model of the file, in the head's order, restricted to `ids` (renumbered `0..` in
    /// their order), as the record's learning left them (as
    /// [`TrainedModel::for_patch`] keeps them).
    pub models: Vec<TrainedModel>,
    /// The Bernoulli models' histograms of counts after the record (`None` for the other
    /// models), each model's in `models`' order, encoded apart: only a learner reads them
    /// ([`Patch::restore_histograms`]); a scorer skips their bytes.
    #[serde(with = "serde_bytes")]
    histograms: Vec<u8>,
    /// The fuser after the record.
    pub fusion: Option<Fusion>,
    /// The summary after the record (its message counts answer for unsure verdicts).
    pub summary: TrainingSummary,
}

impl Patch {
    /// The patch of `filter`, the file restricted to a record's tokens with the record
    /// applied (see [`super::sparse::composed_for`]): its first `ids.len()` tokens are the
    /// vocabulary's `ids`, the rest new ones, numbered from `next_id` in their order.
    pub fn of(filter: &SpamFilter, ids: &[FeatureId], next_id: u64) -> Patch {
        let vocabulary = filter.vocabulary();
        let new = vocabulary.len().saturating_sub(ids.len());
        let ids = ids
            .iter()
            .copied()
            .chain((0..new).map(|i| (next_id + i as u64) as FeatureId))
            .collect();
        let added = (vocabulary.len() - new..vocabulary.len())
            .map(|id| vocabulary.token(id as FeatureId).to_owned())
            .collect();
        let (models, histograms): (Vec<_>, Vec<_>) =
            filter.models.iter().map(TrainedModel::for_patch).unzip();
        Patch {
            vocabulary_len: next_id + new as u64,
            ids,
            added,
            models,
            histograms: crate::model_file::encode_section(&histograms),
            fusion: filter.fusion.clone(),
            summary: filter.summary.clone(),
        }
    }

    /// The tokens the record added to the vocabulary, with their ids.
    pub fn added(&self) -> impl Iterator<Item = (FeatureId, &str)> {
        let first = self.ids.len().saturating_sub(self.added.len());
        (self.ids[first..].iter().copied()).zip(self.added.iter().map(String::as_str))
    }

    /// Puts this patch's Bernoulli histograms of counts (kept apart, see
    /// [`TrainedModel::for_patch`]) into `filter`'s models, those of every model of the file
    /// in the head's order: with [`Patch::apply_to`] of the newest patch, what a learner
    /// needs. Fails if they do not decode (the file at `path` is then corrupt).
    pub fn restore_histograms(
        &self,
        filter: &mut SpamFilter,
        path: &Path,
    ) -> Result<(), ModelFileError> {
        let histograms: Vec<Option<[Vec<u64>; 2]>> =
            crate::model_file::decode_payload(&self.histograms, path)?;
        for (model, histograms) in filter.models.iter_mut().zip(histograms) {
            if let Some(histograms) = histograms {
                model.set_histograms(histograms);
            }
        }
        Ok(())
    }

    /// Takes this patch into `filter`, the file restricted to tokens of vocabulary ids `ids`
    /// (ascending) with the patches before this one taken in: each model's values of the
    /// tokens both hold, and everything that depends on every token. `false` where a model
    /// cannot take it (see [`TrainedModel::overlay`]): `filter` is then half changed.
    pub fn apply_to(&self, filter: &mut SpamFilter, ids: &[FeatureId]) -> bool {
        let pairs: Vec<(usize, usize)> = (self.ids.iter().enumerate())
            .filter_map(|(theirs, id)| Some((theirs, ids.binary_search(id).ok()?)))
            .collect();
        let features = usize::try_from(self.vocabulary_len).unwrap_or(usize::MAX);
        for model in &mut filter.models {
            let kind = model.model.kind();
            let from = self.models.iter().find(|m| m.model.kind() == kind);
            if !from.is_some_and(|from| model.overlay(from, &pairs, features)) {
                return false;
            }
        }
        if filter.fusion.is_some() {
            filter.fusion.clone_from(&self.fusion);
        }
        filter.summary.clone_from(&self.summary);
        true
    }
}
