//! The learned state behind one small interface, [`LearnedStore`]: the record of learned
//! messages (lookup, insert, removal) and the counts every model keeps (a learned message's
//! deltas added or taken away), changed only through [`StoreOp`]s. "Learn once" is written once,
//! over the trait ([`LearnedStore::learn_once`], [`LearnedStore::unlearn_once`]), so every
//! store behaves the same.
//!
//! Two stores implement it today, both backed by the model file: the [`SpamFilter`] in memory
//! (what `train`, spamd TELL, the daemon and `eval --online` change, and what a save writes),
//! and `crate::filter::journal`'s store, which reads only the record of learned messages and
//! appends the operations to the model file's journal instead of rewriting the file (what
//! `spamsort learn` does). A [`SpamFilter`] loaded from the file applies the journal's
//! operations in order, so both give the same state, bit for bit.
//!
//! # A shared store (Redis) for many `serve` hosts
//!
//! Not built; this is how one would map onto the trait, after rspamd's Bayes backend (one hash
//! per token, `H`/`S` fields counting ham and spam, per-user or global key prefix, and a
//! statistics hash with `learns_ham`/`learns_spam`):
//!
//! - the settings, the vocabulary's token strings and each model's settings: one key read at
//!   start (what the model file's head holds); token ids would become the token strings (or
//!   their SipHash) as hash keys, so hosts never have to agree on numbering.
//! - [`StoreOp::AddMessage`]: per token of the message, `HINCRBY <prefix><token> H|S ±1` (the
//!   document frequencies and the Naive Bayes counts; the multinomial model's class total and
//!   message counts `HINCRBYFLOAT`/`HINCRBY` on the statistics hash, as rspamd's
//!   `learns_spam`). The SVM's and logistic regression's steps read the message's weights first
//!   (`HMGET`), so the whole op runs as one Lua script (`EVALSHA`), atomic as the update lock
//!   makes it here; the Bernoulli model's histogram of counts is a hash of count -> tokens,
//!   updated by the same script.
//! - [`StoreOp::SetLearned`] and [`LearnedStore::learned_as`]: a hash digest -> label, plus a
//!   list for the oldest-first bound (`LPUSH`/`RPOP`), as `learned` keeps them here.
//! - scoring a message: one `HMGET` of its tokens' counts or weights plus the statistics hash,
//!   then the same arithmetic as the models' decision from counts (`decision` in each model).
//!   Pruning becomes a periodic `SCAN` dropping rare tokens, as rspamd's expiry does.

use super::learned::{Digest, LearnedAs, digest};
use super::{LearnOutcome, SpamFilter, now_utc};
use crate::error::Result;
use crate::label::Label;
use crate::tokenize::{Tokenizer, TokenizerConfig, Tokens};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One change of the learned state: what a store applies, and what the journal records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StoreOp<'a> {
    /// Adds one message's counts to class `label` in the vocabulary and every model
    /// (`unlearn`: takes them away; `in_training`: the message was learned by `train`, so it
    /// counted only in the trained vocabulary's tokens; `kept_below`: a prune since dropped
    /// some of its tokens). `at` is when, in seconds since
    /// 1970-01-01 UTC (for `info`'s last-learned time).
    AddMessage {
        /// The message's tokens, as the tokenizer gave them.
        tokens: Cow<'a, Tokens>,
        /// The class whose counts change.
        label: Label,
        /// Take the counts away instead of adding them.
        unlearn: bool,
        /// See above.
        in_training: bool,
        /// When unlearning: the message's [`LearnedAs::kept_below`] (its counts are only in
        /// tokens below it). Not in the journal, which holds no unlearning (`None` when read).
        #[serde(skip)]
        kept_below: Option<u32>,
        /// See above.
        at: u64,
    },
    /// Remembers a message as learned (`Some`, as the newest entry) or forgets it (`None`) in
    /// the record of learned messages.
    SetLearned {
        /// The message's digest.
        digest: Digest,
        /// How it was learned, or `None` to forget it.
        how: Option<LearnedAs>,
    },
}

/// The learned state: the record of learned messages and the counts, changed by [`StoreOp`]s.
pub trait LearnedStore {
    /// The tokenizer settings messages are learned with.
    fn tokenizer_config(&self) -> &TokenizerConfig;

    /// How the message with this digest was learned, if the record of learned messages has it.
    fn learned_as(&self, digest: Digest) -> Option<LearnedAs>;

    /// Applies one change. On an error nothing may have changed or part of it may have (the
    /// caller discards the store, as [`crate::filter::update::update`] discards the filter).
    fn apply(&mut self, op: StoreOp<'_>) -> Result<()>;

    /// Learns a tokenized message as `label`, once: a message the record has with the same label
    /// is left alone, one it has with the other label is unlearned first (as sa-learn does).
    fn learn_once(&mut self, tokens: &Tokens, label: Label, at: u64) -> Result<LearnOutcome> {
        let digest = digest(tokens);
        let outcome = match self.learned_as(digest) {
            Some(how) if how.label == label => return Ok(LearnOutcome::AlreadyLearned),
            Some(how) => {
                self.apply(forget(tokens, how, at))?;
                LearnOutcome::Relabeled
            }
            None => LearnOutcome::Learned,
        };
        let how = LearnedAs::new(label, false);
        self.apply(StoreOp::AddMessage {
            tokens: Cow::Borrowed(tokens),
            label,
            unlearn: false,
            in_training: false,
            kept_below: None,
            at,
        })?;
        self.apply(StoreOp::SetLearned {
            digest,
            how: Some(how),
        })?;
        Ok(outcome)
    }

    /// Learns one raw message as `label`, once (see [`LearnedStore::learn_once`]), now.
    fn learn_message(&mut self, raw: &[u8], label: Label) -> Result<LearnOutcome> {
        let tokens = Tokenizer::new(self.tokenizer_config().clone())
            .tokenize(raw)
            .tokens;
        self.learn_once(&tokens, label, now_utc())
    }

    /// Forgets one raw message learned before (see [`LearnedStore::unlearn_once`]), now.
    fn unlearn_message(&mut self, raw: &[u8]) -> Result<Option<Label>> {
        let tokens = Tokenizer::new(self.tokenizer_config().clone())
            .tokenize(raw)
            .tokens;
        self.unlearn_once(&tokens, now_utc())
    }

    /// Forgets a tokenized message learned before; returns the label it was learned as, or
    /// `None` (nothing changed) if the record does not have it.
    fn unlearn_once(&mut self, tokens: &Tokens, at: u64) -> Result<Option<Label>> {
        let digest = digest(tokens);
        let Some(how) = self.learned_as(digest) else {
            return Ok(None);
        };
        self.apply(forget(tokens, how, at))?;
        self.apply(StoreOp::SetLearned { digest, how: None })?;
        Ok(Some(how.label))
    }
}

/// The op that takes a remembered message's counts away.
fn forget(tokens: &Tokens, how: LearnedAs, at: u64) -> StoreOp<'_> {
    StoreOp::AddMessage {
        tokens: Cow::Borrowed(tokens),
        label: how.label,
        unlearn: true,
        in_training: how.in_training,
        kept_below: how.kept_below,
        at,
    }
}

impl StoreOp<'_> {
    /// This op with `tokens` for its message's tokens (a [`StoreOp::SetLearned`] as it is).
    fn with_tokens<'b>(&self, tokens: Cow<'b, Tokens>) -> StoreOp<'b> {
        match *self {
            StoreOp::AddMessage {
                label,
                unlearn,
                in_training,
                kept_below,
                at,
                ..
            } => StoreOp::AddMessage {
                tokens,
                label,
                unlearn,
                in_training,
                kept_below,
                at,
            },
            StoreOp::SetLearned { digest, how } => StoreOp::SetLearned { digest, how },
        }
    }

    /// The op with its tokens borrowed from this one, to apply it and keep it.
    pub fn reborrow(&self) -> StoreOp<'_> {
        let tokens = match self {
            StoreOp::AddMessage { tokens, .. } => tokens.as_ref(),
            StoreOp::SetLearned { .. } => const { &Tokens::new() },
        };
        self.with_tokens(Cow::Borrowed(tokens))
    }

    /// The op with its tokens owned, to keep past the borrow.
    pub fn into_owned(mut self) -> StoreOp<'static> {
        let tokens = match &mut self {
            StoreOp::AddMessage { tokens, .. } => std::mem::take(tokens).into_owned(),
            StoreOp::SetLearned { .. } => Tokens::new(),
        };
        self.with_tokens(Cow::Owned(tokens))
    }
}

impl LearnedStore for SpamFilter {
    fn tokenizer_config(&self) -> &TokenizerConfig {
        &self.tokenizer
    }

    fn learned_as(&self, digest: Digest) -> Option<LearnedAs> {
        self.learned.get(digest)
    }

    fn apply(&mut self, op: StoreOp<'_>) -> Result<()> {
        match op {
            StoreOp::AddMessage {
                tokens,
                label,
                unlearn,
                in_training,
                kept_below,
                at,
            } => {
                // A training message counted only in the features the batch fit saw, and a
                // message learned before a prune only in the tokens it kept.
                let bound = |n: Option<u64>| n.map_or(usize::MAX, |n| n as usize);
                let trained = bound(in_training.then_some(self.trained_features));
                let known = trained.min(bound(kept_below.map(u64::from)));
                self.add_message(&tokens, label, unlearn, known, at)
            }
            StoreOp::SetLearned { digest, how } => {
                self.learned.set(digest, how);
                Ok(())
            }
        }
    }
}
