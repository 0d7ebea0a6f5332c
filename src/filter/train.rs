//! `train`: a filter fitted on labeled mail in one batch. The mail is read as a stream, a
//! window of messages at a time ([`crate::batch`]): each message is tokenized in parallel and
//! kept only as its row of counts over provisional token ids ([`DocumentFrequencies`]), so no
//! message's bytes or token list outlive its window. Once all are counted the vocabulary is
//! built, the rows are mapped to its ids and the models are fitted (in parallel).

use super::active::{resolve_active, split_fusion, with_fusion};
use super::learned::{LearnedAs, LearnedMessages, digest};
use super::{
    ActiveModel, DEFAULT_MAX_MODEL_BYTES, SpamFilter, TrainParams, TrainingSummary, mean_auc,
    now_utc,
};
use crate::batch::{self, Window};
use crate::corpus::{CorpusError, LabeledCorpus};
use crate::error::Result;
use crate::features::{
    Buckets, Dataset, DocumentFrequencies, FeatureId, Row, Vocabulary, WordCounts,
};
use crate::label::{Label, Thresholds};
use crate::models::fusion::Stack;
use crate::models::{FoldDecisions, ModelKind, TrainedModel};
use crate::tokenize::{Tokenizer, TokenizerConfig, Tokens};
use rayon::prelude::*;
use std::sync::Arc;

/// One message as training keeps it after tokenizing: what the summary, the record of learned
/// messages and the document frequencies need, its tokens counted. Its words lie in one
/// string ([`Tokens`]): a few allocations per message instead of one per token, freed by
/// whichever thread counts the message (an allocator keeps memory that one thread frees for
/// another).
struct Counted {
    /// Its distinct word tokens, in order of first occurrence.
    words: Tokens,
    /// Per word, its number of occurrences.
    counts: Vec<u32>,
    /// Its hashed buckets (a data set keeps them by presence, see [`Row`]).
    hashed: Buckets,
    digest: super::learned::Digest,
    tokens: u64,
    fallback: bool,
    truncated: bool,
}

impl Counted {
    /// The message counted by `words` (a tokenizer without byte 4-grams) and `ngrams` (which
    /// gives their ids from the bytes, never as strings: as strings they took most of
    /// training's time and memory; see [`super::words_and_hashed`]).
    fn of(words_tokenizer: &Tokenizer, ngrams: &Tokenizer, raw: &[u8]) -> Counted {
        let t = words_tokenizer.tokenize(raw);
        let mut hashed = ngrams.byte_ngram_ids(raw);
        let ngram_count = hashed.len() as u64;
        // Each distinct word once, in order of first occurrence, with its count: a hash
        // lookup per token (sorting the words took a fifth of tokenizing's time, most of it
        // comparing strings). Their order does not matter: rows are sorted by id when the
        // vocabulary is known (see `Gathered::into_dataset`).
        let (words, counts, hashed_tokens) = WordCounts::of([&t.tokens]).into_parts();
        hashed.extend(hashed_tokens);
        let mut distinct = Tokens::new();
        for word in words {
            distinct.push(word);
        }
        Counted {
            words: distinct,
            counts,
            hashed: Buckets::from_ids(hashed),
            digest: digest(&t.tokens),
            tokens: t.tokens.len() as u64 + ngram_count,
            fallback: t.fallback,
            truncated: t.truncated,
        }
    }

    /// The distinct words with their numbers of occurrences.
    fn words(&self) -> impl Iterator<Item = (&str, u32)> {
        self.words.iter().zip(self.counts.iter().copied())
    }
}

/// What training has gathered from the messages counted so far.
#[derive(Default)]
struct Gathered {
    summary: TrainingSummary,
    learned: LearnedMessages,
    frequencies: DocumentFrequencies,
    /// Per message, its counts over provisional ids, in an array of its exact size: one
    /// allocation per message, never grown.
    rows: Vec<Box<[(FeatureId, u32)]>>,
    /// Per message, its hashed buckets.
    buckets: Vec<Buckets>,
    labels: Vec<Label>,
    /// Scratch space for one message's provisional ids.
    ids: Vec<u32>,
}

impl Gathered {
    /// Counts the message, unless the same message (the same tokens: a copy in another
    /// folder, a re-delivery) was counted already: each counts once, with the label it was
    /// first found with, as learning it again would leave it. The record of learned messages
    /// holds it once, so unlearning it takes back all it counted.
    fn add(&mut self, c: Counted, label: Label) {
        if self.learned.get(c.digest).is_some() {
            return;
        }
        self.summary.messages[label.index()] += 1;
        self.summary.tokens += c.tokens;
        self.summary.fallbacks += u64::from(c.fallback);
        self.summary.truncated += u64::from(c.truncated);
        // Training messages count as learned: learning one of them again is a no-op.
        self.learned.insert(c.digest, LearnedAs::new(label, true));
        self.frequencies
            .add(c.words().map(|(w, _)| w), label, &mut self.ids);
        let words = self.ids.iter().zip(c.words()).map(|(&id, (_, n))| (id, n));
        self.rows.push(words.collect());
        self.buckets.push(c.hashed);
        self.labels.push(label);
    }

    /// The vocabulary `params` keeps and the rows in its ids, with the summary and the record
    /// of learned messages.
    fn into_dataset(
        self,
        params: &TrainParams,
    ) -> (Vocabulary, Dataset, TrainingSummary, LearnedMessages) {
        let (vocabulary, provisional) = self.frequencies.vocabulary(&params.vocabulary);
        // Each row is remapped and its provisional form freed in turn: the rows are never
        // held twice.
        let rows = (self.rows.into_iter().zip(self.buckets)).map(|(row, buckets)| {
            let words = provisional.remap(row.iter().map(|&(id, n)| (id, f64::from(n))));
            Arc::new(Row::from_parts(words, buckets))
        });
        let data = Dataset {
            rows: rows.collect(),
            labels: self.labels,
            n_features: vocabulary.len(),
        };
        (vocabulary, data, self.summary, self.learned)
    }
}

/// Tokenizes the stream's messages a window at a time and counts each in order.
fn gather<B: AsRef<[u8]> + Send + Sync>(
    messages: impl Iterator<Item = Result<(B, Label), CorpusError>> + Send,
    config: &TokenizerConfig,
    tokenized: impl Fn() + Sync,
) -> Result<Gathered> {
    let (words, ngrams) = super::words_and_hashed(config);
    let mut gathered = Gathered::default();
    gathered.summary.trained_at = Some(now_utc());
    // Smaller windows than `classify`'s: a tokenized message's transient token list is several
    // times its size, and training's peak memory is what `train` is measured by.
    let window = Window {
        chunk_bytes: 1 << 20,
        chunk_items: 64,
    };
    batch::map_in_order(
        messages,
        window,
        |item| item.as_ref().map_or(0, |(raw, _)| raw.as_ref().len()),
        |item| {
            let counted = item
                .as_ref()
                .ok()
                .map(|(raw, _)| Counted::of(&words, &ngrams, raw.as_ref()));
            tokenized();
            counted
        },
        |item, counted| -> Result<()> {
            let (_, label) = item?;
            if let Some(counted) = counted {
                gathered.add(counted, label);
            }
            Ok(())
        },
    )?;
    let [ham, spam] = gathered.summary.messages;
    if ham == 0 || spam == 0 {
        return Err(CorpusError::OneClassOnly { spam, ham }.into());
    }
    Ok(gathered)
}

impl SpamFilter {
    /// Tokenizes the corpus (in parallel; the result does not depend on the thread count),
    /// builds the vocabulary and fits the models (in parallel). Fails on invalid model
    /// parameters, a missing class, or an active model that is not among those fitted.
    pub fn train(corpus: &LabeledCorpus, params: &TrainParams) -> Result<SpamFilter> {
        SpamFilter::train_with_progress(corpus, params, || {})
    }

    /// [`SpamFilter::train`], calling `tokenized` once per message as tokenizing proceeds
    /// (from any thread), for a progress display.
    pub fn train_with_progress(
        corpus: &LabeledCorpus,
        params: &TrainParams,
        tokenized: impl Fn() + Sync,
    ) -> Result<SpamFilter> {
        let messages = corpus.messages.iter().map(|(m, l)| Ok((&m.bytes, *l)));
        SpamFilter::train_stream(messages, params, tokenized)
    }

    /// [`SpamFilter::train_with_progress`] on a stream of labeled raw messages (as
    /// [`crate::corpus::LabeledMail`] reads them), read a [`Window`] at a time: memory holds
    /// the messages of a few windows, each message's counts and the distinct tokens, never
    /// the whole mail or its token lists. Gives the same filter as training on the stream's
    /// messages held in a [`LabeledCorpus`]. An `Err` item stops the training and is returned.
    /// Fails as `train` does, and if the stream has no spam or no ham
    /// ([`CorpusError::OneClassOnly`]).
    pub fn train_stream<B: AsRef<[u8]> + Send + Sync>(
        messages: impl Iterator<Item = Result<(B, Label), CorpusError>> + Send,
        params: &TrainParams,
        tokenized: impl Fn() + Sync,
    ) -> Result<SpamFilter> {
        // Byte 4-grams only if a model sees them (the SVM and logistic regression do by
        // default), of the batch fits' bytes: they would also slow every `filter` for nothing.
        // The stored settings say so, so `learn` agrees.
        params.tokenizer.check().map_err(crate::Error::Config)?;
        let config = crate::models::tokenizer_for(&params.models, &params.tokenizer);
        let (vocabulary, data, summary, learned) =
            gather(messages, &config, tokenized)?.into_dataset(params);
        let fitted = fit(&data, params)?;
        let trained_features = vocabulary.len() as u64;
        Ok(SpamFilter {
            tokenizer: config,
            vocabulary,
            models: fitted.models,
            fusion: fitted.fusion,
            active: fitted.active,
            thresholds: Thresholds::default(),
            summary,
            learned,
            trained_features,
            max_model_bytes: DEFAULT_MAX_MODEL_BYTES,
        })
    }
}

/// The models fitted on a dataset, with their fusion and the model that answers.
struct Fitted {
    models: Vec<TrainedModel>,
    fusion: Option<super::Fusion>,
    active: ModelKind,
}

/// Fits `params`' models (in parallel), their fusion if asked, and picks the active model.
fn fit(data: &Dataset, params: &TrainParams) -> Result<Fitted> {
    // Choosing the active model by cross-validation uses the internal folds of Platt
    // scaling (see `ModelParams::fit_with_folds`); so does fitting the fuser, on decisions
    // of models that did not see the message.
    let (others, fusion_params) = split_fusion(&params.models)?;
    let select = matches!(params.active, Some(ActiveModel::BestByCrossValidation))
        && params.models.len() > 1;
    let keep_folds = select || fusion_params.is_some();
    let fitted: Vec<(TrainedModel, Option<Vec<FoldDecisions>>)> = others
        .par_iter()
        .map(|p| p.fit_with_folds(data, params.seed, keep_folds))
        .collect::<Result<_>>()?;
    let kinds: Vec<ModelKind> = fitted.iter().map(|(m, _)| m.model.kind()).collect();
    let mut scores: Vec<(ModelKind, f64)> = fitted
        .iter()
        .map(|(m, folds)| (m.model.kind(), folds.as_deref().map_or(0.0, mean_auc)))
        .collect();
    let fusion = match fusion_params {
        Some(p) => {
            let stack = Stack::of_fitted(&fitted)?;
            if select {
                let folds = p.held_out_decisions(&stack)?;
                scores.push((ModelKind::Fusion, mean_auc(&folds)));
            }
            Some(p.fit_stack(&stack)?)
        }
        None => None,
    };
    let available = with_fusion(&kinds, fusion.is_some());
    let active = match params.active {
        Some(ActiveModel::BestByCrossValidation) if select => {
            // The highest mean ROC area; ties go to the earlier model.
            let mut best = scores[0];
            for &s in &scores[1..] {
                if s.1 > best.1 {
                    best = s;
                }
            }
            best.0
        }
        active => resolve_active(
            active,
            &available,
            &[ModelKind::Fusion, ModelKind::LinearSvm],
        )?,
    };
    Ok(Fitted {
        models: fitted.into_iter().map(|(m, _)| m).collect(),
        fusion,
        active,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{SparseVector, VocabularyParams};
    use crate::tokenize::Tokenized;
    use std::path::PathBuf;

    fn sample() -> LabeledCorpus {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/sample");
        LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| panic!("{e}")).unwrap()
    }

    /// Training as it was before it streamed: every message's token list held, the
    /// vocabulary fitted on all of them, then each list vectorized.
    fn whole(
        corpus: &LabeledCorpus,
        config: &TokenizerConfig,
        params: &TrainParams,
    ) -> (
        Vocabulary,
        Vec<SparseVector>,
        TrainingSummary,
        LearnedMessages,
    ) {
        let tokenizer = Tokenizer::new(config.clone());
        let tokenized: Vec<(Tokenized, Label)> = corpus
            .messages
            .iter()
            .map(|(m, l)| (tokenizer.tokenize(&m.bytes), *l))
            .collect();
        let mut summary = TrainingSummary::default();
        let mut learned = LearnedMessages::default();
        for (t, label) in &tokenized {
            summary.messages[label.index()] += 1;
            summary.tokens += t.tokens.len() as u64;
            summary.fallbacks += u64::from(t.fallback);
            summary.truncated += u64::from(t.truncated);
            learned.insert(digest(&t.tokens), LearnedAs::new(*label, true));
        }
        let vocabulary = params
            .vocabulary
            .fit(tokenized.iter().map(|(t, l)| (&t.tokens, *l)));
        let rows = tokenized
            .iter()
            .map(|(t, _)| vocabulary.vectorize(&t.tokens))
            .collect();
        (vocabulary, rows, summary, learned)
    }

    #[test]
    fn a_message_found_twice_counts_once_with_its_first_label_and_unlearns_whole() {
        // A copy of a spam in the ham folder counted in both classes while the record of
        // learned messages held it once, so unlearning it could never take the ham count back
        // (found by review).
        let mut corpus = sample();
        let (spam, _) = corpus.messages[0].clone();
        let [ham, spams] = [Label::Ham, Label::Spam]
            .map(|l| corpus.messages.iter().filter(|(_, x)| *x == l).count() as u64);
        corpus.messages.push((spam.clone(), Label::Ham));
        corpus.messages.push((spam.clone(), Label::Spam));
        let params = TrainParams {
            models: vec![crate::models::ModelParams::default_for(
                crate::models::ModelKind::BernoulliNb,
            )],
            ..TrainParams::default()
        };
        let mut filter = SpamFilter::train(&corpus, &params).unwrap();
        assert_eq!(filter.summary().messages, [ham, spams]);
        assert_eq!(filter.unlearn(&spam.bytes).unwrap(), Some(Label::Spam));
        assert_eq!(filter.summary().messages, [ham, spams - 1]);
        assert_eq!(filter.unlearn(&spam.bytes).unwrap(), None);
    }

    #[test]
    fn streamed_training_counts_equal_those_of_every_token_list_held_whole() {
        let corpus = sample();
        let limited = TrainParams {
            vocabulary: VocabularyParams {
                min_df: 1,
                max_features: Some(700),
            },
            ..TrainParams::default()
        };
        for params in [TrainParams::default(), limited] {
            // With and without hashed byte 4-grams, which bypass the vocabulary.
            for byte_ngrams in [0, 3072] {
                let config = TokenizerConfig {
                    byte_ngrams,
                    ..params.tokenizer.clone()
                };
                let messages = corpus.messages.iter().map(|(m, l)| Ok((&m.bytes, *l)));
                let (vocabulary, data, mut summary, learned) = gather(messages, &config, || {})
                    .unwrap()
                    .into_dataset(&params);
                let expected = whole(&corpus, &config, &params);
                summary.trained_at = None;
                assert_eq!(vocabulary, expected.0);
                assert!(
                    (data.rows.iter().map(|r| (**r).clone()))
                        .eq(expected.1.into_iter().map(Row::new)),
                    "rows differ (byte_ngrams {byte_ngrams})"
                );
                assert_eq!(
                    data.labels,
                    corpus.messages.iter().map(|(_, l)| *l).collect::<Vec<_>>()
                );
                assert_eq!(data.n_features, vocabulary.len());
                assert_eq!(summary, expected.2);
                assert_eq!(learned, expected.3);
                assert!(vocabulary.len() > 100, "a vocabulary was built");
            }
        }
    }

    #[test]
    fn a_stream_error_stops_training_and_is_returned() {
        let corpus = sample();
        let messages = corpus
            .messages
            .iter()
            .take(50)
            .map(|(m, l)| Ok((&m.bytes, *l)))
            .chain(std::iter::once(Err(CorpusError::UnknownFormat {
                path: "broken".into(),
            })));
        let err = SpamFilter::train_stream(messages, &TrainParams::default(), || {}).unwrap_err();
        assert!(err.to_string().contains("broken"), "{err}");
    }

    #[test]
    fn a_stream_of_one_class_is_refused_with_its_counts() {
        let corpus = sample();
        let spam = corpus
            .messages
            .iter()
            .filter(|(_, l)| *l == Label::Spam)
            .map(|(m, l)| Ok((&m.bytes, *l)));
        let err = SpamFilter::train_stream(spam, &TrainParams::default(), || {}).unwrap_err();
        let n = corpus.count(Label::Spam);
        assert_eq!(
            err.to_string(),
            format!("at least one spam and one ham message are needed (found {n} spam, 0 ham)")
        );
    }
}
