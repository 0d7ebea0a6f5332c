//! A message's tokens counted before they meet a vocabulary: each distinct word once, in order
//! of first occurrence, with its number of occurrences, and the hashed features' ids apart.
//! Training counts a message this way before numbering its words, the pipe filter before it
//! looks its words up in the score table, and a journaled filter to know which words to read.

use super::hashed::hashed_id;
use super::vocabulary::FeatureId;
use crate::tokenize::Tokens;
use foldhash::fast::RandomState;
use hashbrown::hash_table::{Entry, HashTable};
use std::hash::BuildHasher;

/// Token lists counted (see the module doc).
#[derive(Debug, Default)]
pub struct WordCounts<'t> {
    words: Vec<&'t str>,
    counts: Vec<u32>,
    hashed: Vec<FeatureId>,
    /// Each word's number in `words`, by its hash under `state`.
    seen: HashTable<usize>,
    /// Seeded at random in each process: the words are a sender's, and with a seed anyone
    /// could look up, a message of words made to collide would cost time quadratic in its
    /// length. The order of `words` does not depend on it.
    state: RandomState,
}

impl<'t> WordCounts<'t> {
    /// Counts the tokens of `lists`, one after another. One hash lookup per token, in a table
    /// of word numbers (a machine word per slot, not a string slice and a number as a map of
    /// words holds): the pipe filter's whole heap is a few hundred kilobytes, and each page
    /// of it a fresh one the kernel must fault in.
    pub fn of(lists: impl IntoIterator<Item = &'t Tokens>) -> Self {
        let state = RandomState::default();
        let (mut words, mut counts, mut hashed) = (Vec::new(), Vec::<u32>::new(), Vec::new());
        let mut seen: HashTable<usize> = HashTable::new();
        for tokens in lists {
            let rehash = |&w: &usize| state.hash_one(words[w]);
            seen.reserve(tokens.len(), rehash);
            // Room for every token, not grown by doubling (each size passed through is fresh
            // memory to the pipe filter); only what is written is touched.
            words.reserve(tokens.len());
            for token in tokens {
                if let Some(id) = hashed_id(token) {
                    hashed.push(id);
                    continue;
                }
                let hash = state.hash_one(token);
                let entry = seen.entry(hash, |&w| words[w] == token, |&w| state.hash_one(words[w]));
                match entry {
                    Entry::Occupied(at) => counts[*at.get()] += 1,
                    Entry::Vacant(slot) => {
                        slot.insert(words.len());
                        words.push(token);
                        counts.push(1);
                    }
                }
            }
        }
        WordCounts {
            words,
            counts,
            hashed,
            seen,
            state,
        }
    }

    /// Whether `word` is among [`WordCounts::words`].
    pub fn contains(&self, word: &str) -> bool {
        let hash = self.state.hash_one(word);
        (self.seen.find(hash, |&w| self.words[w] == word)).is_some()
    }

    /// The distinct words, in order of first occurrence.
    pub fn words(&self) -> &[&'t str] {
        &self.words
    }

    /// How many times each of [`WordCounts::words`] occurred.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// The hashed features' ids, one per token, in token order.
    pub fn hashed(&self) -> &[FeatureId] {
        &self.hashed
    }

    /// The words, their counts and the hashed ids.
    pub fn into_parts(self) -> (Vec<&'t str>, Vec<u32>, Vec<FeatureId>) {
        (self.words, self.counts, self.hashed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::hashed::{HASHED_BASE, hashed_token};

    fn tokens(list: &[&str]) -> Tokens {
        let mut t = Tokens::new();
        for s in list {
            t.push(s);
        }
        t
    }

    #[test]
    fn words_once_by_first_occurrence_with_counts_and_hashed_ids_apart() {
        let hashed = hashed_token(HASHED_BASE + 7);
        let a = tokens(&["buy", "now", "buy", &hashed, "now", "buy", &hashed]);
        let b = tokens(&["now", "cheap"]);
        let counted = WordCounts::of([&a, &b]);
        assert_eq!(counted.words(), ["buy", "now", "cheap"]);
        assert_eq!(counted.counts(), [3, 3, 1]);
        assert_eq!(counted.hashed(), [HASHED_BASE + 7; 2]);
        assert!(counted.contains("cheap") && counted.contains("buy"));
        assert!(!counted.contains("sell") && !counted.contains(&hashed));
    }
}
