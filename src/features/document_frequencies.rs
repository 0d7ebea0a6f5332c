//! Document frequencies counted message by message, what a [`Vocabulary`] is built from.
//! Every token gets a provisional id as it is first seen, so a caller can keep each message
//! as a row of provisional ids instead of its token list (as `train` does, tokenizing a window
//! of messages at a time) and map the rows to vocabulary ids once the vocabulary is known.

use super::hashed::HASHED_BASE;
use super::{FeatureId, SparseVector, Vocabulary, VocabularyParams};
use crate::label::Label;
use foldhash::HashMap;

/// Per token seen so far: its provisional id, document frequency per class and the number of
/// the last message that had it.
#[derive(Debug, Default)]
pub struct DocumentFrequencies {
    ids: HashMap<Box<str>, u32>,
    /// Indexed by provisional id: messages with the token (ham, spam) and the last of them.
    counts: Vec<([u32; 2], u32)>,
    /// Messages counted per class.
    docs: [u32; 2],
}

impl DocumentFrequencies {
    /// Counts one message of class `label` from its distinct tokens (each once, no hashed
    /// ones: see [`super::hashed`]), and puts their provisional ids into `ids` (cleared first),
    /// in the order given. Messages are numbered from 1 in the order they are added.
    pub fn add<'t>(
        &mut self,
        distinct: impl IntoIterator<Item = &'t str>,
        label: Label,
        ids: &mut Vec<u32>,
    ) {
        self.docs[label.index()] += 1;
        let clock = self.docs[0] + self.docs[1];
        ids.clear();
        for token in distinct {
            let id = match self.ids.get(token) {
                Some(&id) => id,
                None => {
                    let id = u32::try_from(self.counts.len())
                        .ok()
                        .filter(|&id| id < HASHED_BASE)
                        .expect("fewer than 2^31 distinct tokens");
                    self.ids.insert(token.into(), id);
                    self.counts.push(([0; 2], 0));
                    id
                }
            };
            let entry = &mut self.counts[id as usize];
            entry.0[label.index()] += 1;
            entry.1 = clock;
            ids.push(id);
        }
    }

    /// Number of distinct tokens counted.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// True if no token was counted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The vocabulary `params` keeps of the counted tokens (those in at least `min_df`
    /// messages, at most `max_features` of them, the most common; ties in token order), ids in
    /// token byte order; and the map from provisional ids to its ids.
    pub fn vocabulary(self, params: &VocabularyParams) -> (Vocabulary, ProvisionalIds) {
        let DocumentFrequencies { ids, counts, docs } = self;
        let counted = ids
            .iter()
            .map(|(token, id)| {
                let (d, last) = counts[*id as usize];
                (&**token, d, last, *id)
            })
            .collect();
        let (vocabulary, keys) = params.build(counted, docs);
        let mut map = vec![NOT_KEPT; counts.len()];
        for (new, id) in keys.into_iter().enumerate() {
            map[id as usize] = new as FeatureId;
        }
        (vocabulary, ProvisionalIds(map))
    }
}

/// A provisional id whose token the vocabulary left out.
const NOT_KEPT: FeatureId = FeatureId::MAX;

/// The map from [`DocumentFrequencies`]' provisional ids to vocabulary ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionalIds(Vec<FeatureId>);

impl ProvisionalIds {
    /// A row of (provisional id, value) pairs as a row of vocabulary ids: entries whose
    /// token the vocabulary left out are dropped, hashed ids kept as they are (repeated ids
    /// are summed, as [`SparseVector::from_pairs`] does).
    pub fn remap(&self, row: impl IntoIterator<Item = (FeatureId, f64)>) -> SparseVector {
        SparseVector::from_pairs(
            row.into_iter()
                .filter_map(|(id, v)| {
                    if super::hashed::is_hashed(id) {
                        return Some((id, v));
                    }
                    let new = *self.0.get(id as usize)?;
                    (new != NOT_KEPT).then_some((new, v))
                })
                .collect(),
        )
    }
}
