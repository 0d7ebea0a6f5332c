//! A journal record's patch: what the record's learning changed, as a scorer of one message
//! needs it, so that `filter` takes the journal's changes instead of replaying its learning.
//!
//! Learning a message changes its own features' values (the Naive Bayes models' counts of its
//! tokens, the SVM's and logistic regression's weights of its tokens and of its byte 4-grams'
//! hash buckets) and a few values that depend on every token (message counts, class totals,
//! |V|, the Bernoulli model's histograms and absent-word terms, the linear models' biases, the
//! fuser); every other feature's values stay as the file saved them. So
//! [`learn`](super::journal::learn) works the record out on the file restricted to the
//! record's features (see [`super::sparse`]) and keeps the result, the models restricted to
//! those features, as the record's [`Patch`]. A scorer of one message then restricts the file
//! to the message's features and takes each patch into it in order
//! ([`TrainedModel::overlay`]): the values of the message's features that a record changed
//! and the newest of everything else.
//! That is the state a full load (which replays the records' operations, see
//! [`super::journal`]) reaches, bit for bit, at a cost that barely grows with the journal
//! (`benches/pipe_latency.sh`).
//!
//! A scorer takes patches only as far as they fit together ([`Patch::fits`]: a forged or
//! damaged record whose checksum still matches is replayed instead), and a learn that cannot
//! work a patch out (a damaged section or patch) appends its record without one.
//!
//! A record has no patch where that cannot be exact (complement Naive Bayes, see
//! [`TrainedModel::overlay`]), or after a record that has none (as spamsort before 4-gram
//! patches wrote for models that see the hashed features): a scorer then replays the journal
//! ([`super::sparse::replayed_for`]). Such a spamsort finds that a patch with hashed features
//! does not fit ([`Patch::fits`]) and loads the models whole, the journal applied. A run that
//! unlearns is not journaled at all (its learn compacts the file): unlearning reads a token's
//! document frequencies, which patches do not carry.

use super::score_table::same_bits;
use super::{SpamFilter, TrainingSummary};
use crate::features::hashed::{HASHED_BASE, HASHED_BUCKETS, is_hashed};
use crate::features::{FeatureId, sorted_matches};
use crate::model_file::ModelFileError;
use crate::models::{Fusion, TrainedModel};
use crate::tokenize::Tokens;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What one journal record's learning changed, for a scorer of one message (see the module
/// doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Patch {
    /// The vocabulary's length after the record: a token learned later is numbered from here.
    vocabulary_len: u64,
    /// The count-vector ids of the record's messages' features, ascending: their tokens'
    /// vocabulary ids ([`Patch::words`]), then the hashed ids of their byte 4-grams
    /// ([`Patch::buckets`]; every hashed id is above every vocabulary id).
    ids: Vec<FeatureId>,
    /// The tokens the record added to the vocabulary: those of the last of its words, in order.
    /// (A scorer finds the others by their ids in the score table or an earlier patch.)
    added: Tokens,
    /// Every model of the file, in the head's order, restricted to the record's words
    /// (renumbered `0..` in their order) and, for a model that sees the hashed features, its
    /// buckets (their weights first), as the record's learning left them (as
    /// [`TrainedModel::for_patch`] keeps them).
    models: Vec<TrainedModel>,
    /// For each of `models`, the earlier one whose per-token counts its own are, bit for bit
    /// (the Boolean multinomial model's are the Bernoulli model's document frequencies):
    /// kept once, its own arrays left empty.
    shared_counts: Vec<Option<u8>>,
    /// The Bernoulli models' histograms of counts after the record (`None` for the other
    /// models), each model's in `models`' order, encoded apart: only a learner reads them
    /// ([`Patch::restore_histograms`]); a scorer keeps only the newest patch's (see
    /// `super::journal::heads_for_message`).
    #[serde(with = "serde_bytes")]
    histograms: Vec<u8>,
    /// The fuser after the record.
    fusion: Option<Fusion>,
    /// The summary after the record (its message counts answer for unsure verdicts).
    pub summary: TrainingSummary,
}

impl Patch {
    /// The patch of `filter`, the file restricted to a record's features with the record
    /// applied (see [`super::sparse::composed_for`]): its first `ids.len()` tokens are the
    /// vocabulary's `ids`, the rest new ones, numbered from `next_id` in their order; its
    /// models that see the hashed features hold the record's buckets (see
    /// [`LinearFunction::held_buckets`](crate::models::LinearFunction::held_buckets)).
    pub fn of(filter: SpamFilter, ids: &[FeatureId], next_id: u64) -> Patch {
        let vocabulary = filter.vocabulary();
        let new = vocabulary.len().saturating_sub(ids.len());
        let held = (filter.models.iter())
            .find_map(|m| m.model.function().held_buckets())
            .unwrap_or_default();
        let ids = (ids.iter().copied())
            .chain((0..new).map(|i| (next_id + i as u64) as FeatureId))
            .chain(held.iter().map(|&b| HASHED_BASE + b))
            .collect();
        let added = (vocabulary.len() - new..vocabulary.len())
            .map(|id| vocabulary.token(id as FeatureId).to_owned())
            .collect();
        let (mut models, histograms): (Vec<_>, Vec<_>) = (filter.models.into_iter())
            .map(TrainedModel::for_patch)
            .unzip();
        let shared_counts = share_counts(&mut models);
        Patch {
            vocabulary_len: next_id + new as u64,
            ids,
            added,
            models,
            shared_counts,
            histograms: crate::model_file::encode_section(&histograms),
            fusion: filter.fusion,
            summary: filter.summary,
        }
    }

    /// The vocabulary's length after the record: a token learned later is numbered from here.
    pub fn vocabulary_len(&self) -> u64 {
        self.vocabulary_len
    }

    /// Whether this patch fits a vocabulary of `before` tokens (the score table's, or the
    /// previous patch's [`Patch::vocabulary_len`]): its ids ascend, its words each below its
    /// vocabulary's length, which is `before` plus the tokens it added, numbered from
    /// `before` on and still vocabulary ids, and its hashed ids name buckets. A damaged or
    /// forged record that passed its checksum could otherwise make a scorer answer what no
    /// full load would; one that does not fit is replayed instead (see [`super::sparse`]).
    pub fn fits(&self, before: u64) -> bool {
        let words = self.words();
        let added = self.added.len();
        let first_added = words.len().checked_sub(added);
        self.ids.windows(2).all(|w| w[0] < w[1])
            && Some(self.vocabulary_len) == before.checked_add(added as u64)
            && self.vocabulary_len <= u64::from(HASHED_BASE)
            && first_added.is_some_and(|first| {
                (words[first..].iter())
                    .zip(before..)
                    .all(|(&id, n)| u64::from(id) == n)
            })
            && words
                .last()
                .is_none_or(|&id| u64::from(id) < self.vocabulary_len)
            && (self.ids.last())
                .is_none_or(|&id| !is_hashed(id) || id - HASHED_BASE < HASHED_BUCKETS)
    }

    /// The vocabulary ids of the record's tokens, ascending.
    fn words(&self) -> &[FeatureId] {
        &self.ids[..self.ids.partition_point(|&id| !is_hashed(id))]
    }

    /// The buckets of the record's byte 4-grams (their hashed ids less [`HASHED_BASE`]),
    /// ascending.
    pub(crate) fn buckets(&self) -> Vec<u32> {
        (self.ids[self.words().len()..].iter())
            .map(|&id| id.wrapping_sub(HASHED_BASE))
            .collect()
    }

    /// What a scorer or learner of messages whose byte 4-grams fall in `buckets` (ascending)
    /// needs of this patch: the ids and hashed weights of this patch's buckets among
    /// `buckets` alone. [`Patch::apply_to`] a filter restricted to buckets among `buckets`
    /// does the same with it as with the whole patch (a bucket the filter does not hold is
    /// one it skips); it only takes less memory: a record's patch holds thousands of buckets,
    /// a message shares a few hundred of them.
    pub(crate) fn for_message(&mut self, buckets: &[u32]) {
        let words = self.words().len();
        let mine = self.buckets();
        let kept: Vec<usize> = (sorted_matches(&mine, buckets).into_iter())
            .map(|(at, _)| at)
            .collect();
        for model in &mut self.models {
            model
                .model
                .function_mut()
                .keep_patch_buckets(mine.len(), &kept);
        }
        let ids: Vec<FeatureId> = (self.ids[..words].iter().copied())
            .chain(kept.iter().map(|&at| self.ids[words + at]))
            .collect();
        self.ids = ids;
    }

    /// Drops this patch's histograms of counts: only a learner reads them, of the newest
    /// patch (see [`Patch::restore_histograms`]).
    pub(crate) fn drop_histograms(&mut self) {
        self.histograms = Vec::new();
    }

    /// The tokens the record added to the vocabulary, with their ids.
    pub fn added(&self) -> impl Iterator<Item = (FeatureId, &str)> {
        let words = self.words();
        let first = words.len().saturating_sub(self.added.len());
        (words[first..].iter().copied()).zip(self.added.iter())
    }

    /// Model `at` of this patch with the per-token counts of model `with`, which it shares
    /// (see [`Patch::shared_counts`]); `None` if `with` is not an earlier model with counts.
    fn with_counts_of(&self, at: usize, with: usize) -> Option<TrainedModel> {
        let counts = (with < at).then(|| self.models[with].model.count_arrays())??;
        let mut model = self.models[at].clone();
        for (own, shared) in model.model.count_arrays_mut()?.into_iter().zip(counts) {
            *own = shared.to_vec();
        }
        Some(model)
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
        let pairs = sorted_matches(self.words(), ids);
        let buckets = self.buckets();
        let features = usize::try_from(self.vocabulary_len).unwrap_or(usize::MAX);
        for model in &mut filter.models {
            let kind = model.model.kind();
            let Some(at) = self.models.iter().position(|m| m.model.kind() == kind) else {
                return false;
            };
            let from = match self.shared_counts.get(at).copied().flatten() {
                None => std::borrow::Cow::Borrowed(&self.models[at]),
                Some(with) => match self.with_counts_of(at, usize::from(with)) {
                    Some(from) => std::borrow::Cow::Owned(from),
                    None => return false,
                },
            };
            if !model.overlay(&from, &pairs, &buckets, features) {
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

/// Empties the per-token counts of each of `models` that an earlier one holds bit for bit,
/// and says which one that is (see [`Patch::shared_counts`]).
fn share_counts(models: &mut [TrainedModel]) -> Vec<Option<u8>> {
    (0..models.len())
        .map(|at| {
            let (earlier, rest) = models.split_at_mut(at);
            let [ham, spam] = rest[0].model.count_arrays()?;
            let with = earlier.iter().position(|m| {
                m.model
                    .count_arrays()
                    .is_some_and(|[h, s]| !h.is_empty() && same_bits(h, ham) && same_bits(s, spam))
            });
            let with = u8::try_from(with?).ok()?;
            for a in rest[0].model.count_arrays_mut()? {
                *a = Vec::new();
            }
            Some(with)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpamFilter;
    use crate::TrainParams;
    use crate::filter::journal;
    use crate::filter::sparse::tests::{journal_learn, on_hashed, on_words, trained};
    use crate::label::Label;
    use crate::models::ModelParams;

    /// Messages to score: known tokens, tokens the journal added, none.
    const MESSAGES: [&str; 3] = [
        "Subject: cheap meds\n\nbuy cheap meds now",
        "Subject: zorblax\n\nzorblax frobnicate lunch",
        "",
    ];

    /// A file trained in batch with `params`, then two messages learned through the journal
    /// (tokens new to it among them).
    fn journaled(dir: &Path, params: &TrainParams) -> std::path::PathBuf {
        let path = trained(dir, params);
        journal_learn(
            &path,
            "Subject: zorblax\n\nzorblax frobnicate offers",
            Some(Label::Spam),
        );
        journal_learn(
            &path,
            "Subject: lunch\n\nfrobnicate blorp lunch at noon",
            Some(Label::Ham),
        );
        path
    }

    /// Both scorers of the file at `path` explain each of [`MESSAGES`] as its full load does.
    fn assert_scores_as_the_full_load(path: &Path) {
        let loaded = SpamFilter::load(path).unwrap();
        journal::tests::assert_scorers_explain_as(path, &loaded, &MESSAGES.map(str::as_bytes));
    }

    #[test]
    fn a_patch_that_does_not_fit_the_vocabulary_before_it_is_replayed_instead() {
        forged_patches_are_replayed(&on_words());
    }

    #[test]
    fn a_patch_with_hashed_features_that_does_not_fit_is_replayed_instead() {
        forged_patches_are_replayed(&on_hashed());
    }

    /// Each forged patch of a file [`journaled`] with `params` is replayed instead: the
    /// scorers explain as the full load, and so after the next learn.
    fn forged_patches_are_replayed(params: &TrainParams) {
        type Forgery = (&'static str, fn(&mut Patch));
        let forgeries: [Forgery; 9] = [
            ("ids reversed", |p| p.ids.reverse()),
            ("one token too many", |p| p.vocabulary_len += 1),
            ("no vocabulary at all", |p| p.vocabulary_len = u64::MAX),
            ("added tokens forgotten", |p| p.added.clear()),
            ("an id past the vocabulary", |p| {
                let words = p.words().len();
                p.ids.insert(words, HASHED_BASE - 1);
            }),
            ("a bucket past the hashed features", |p| {
                p.ids.push(HASHED_BASE + HASHED_BUCKETS);
            }),
            ("words after the buckets", |p| {
                let words = p.words().len();
                p.ids.rotate_left(words);
            }),
            ("counts shared with a later model", |p| {
                p.shared_counts = vec![Some(3); p.models.len()];
            }),
            (
                "the hashed features seen or not, the other way round",
                |p| {
                    for m in &mut p.models {
                        let function = m.model.function_mut();
                        let mut config = function.transform.config();
                        config.hashed = !config.hashed;
                        function.transform = crate::features::FeatureTransform::unfitted(config);
                    }
                },
            ),
        ];
        for (what, forge) in forgeries {
            let dir = tempfile::tempdir().unwrap();
            let path = journaled(dir.path(), params);
            let file = crate::model_file::ModelFileReader::open(&path).unwrap();
            let heads = journal::heads(&file).unwrap();
            let patches = journal::patches(&heads).expect("patches");
            let hashed = params.models.iter().any(ModelParams::sees_hashed);
            assert!(
                patches.iter().all(|p| p.buckets().is_empty() != hashed),
                "patches carry buckets where a model sees them"
            );
            assert!(
                patches.iter().all(|p| !p.added.is_empty()),
                "both records added tokens"
            );
            assert!(
                patches
                    .iter()
                    .all(|p| p.shared_counts.iter().flatten().count() == 1),
                "the Boolean multinomial model's counts are the Bernoulli model's, kept once"
            );
            drop(file);
            journal::rewrite_patches(&path, |p| forge(p.as_mut().unwrap()));
            let file = crate::model_file::ModelFileReader::open(&path).unwrap();
            let heads = journal::heads(&file).unwrap();
            assert!(
                journal::patches(&heads).is_some(),
                "{what}: the records decode, their patches forged"
            );
            assert_scores_as_the_full_load(&path);
            // The next learn appends without a patch, and the scorer still agrees.
            journal_learn(
                &path,
                "Subject: again\n\nquuxify zorblax noon",
                Some(Label::Spam),
            );
            assert_scores_as_the_full_load(&path);
        }
    }

    #[test]
    fn undecodable_histograms_leave_the_next_record_without_a_patch() {
        let dir = tempfile::tempdir().unwrap();
        let path = journaled(dir.path(), &on_words());
        journal::rewrite_patches(&path, |p| p.as_mut().unwrap().histograms = vec![0xff; 9]);
        // Learning still works: the record goes in without a patch.
        journal_learn(
            &path,
            "Subject: again\n\nquuxify zorblax noon",
            Some(Label::Spam),
        );
        let file = crate::model_file::ModelFileReader::open(&path).unwrap();
        let heads = journal::heads(&file).unwrap();
        assert_eq!(heads.len(), 3);
        assert!(heads[2].patch.is_none(), "the new record has no patch");
        assert_scores_as_the_full_load(&path);
    }
}
