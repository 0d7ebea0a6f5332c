//! Comparing models on labeled mail. [`CrossValidation`] runs stratified k-fold
//! cross-validation: each fold builds its own vocabulary from its training messages only (so
//! nothing about the test messages leaks into training), fits every model from scratch and
//! scores the held-out messages. Folds run one after another, each one's models in parallel;
//! results do not depend on the thread count. [`online`] runs the TREC immediate-feedback protocol instead. [`metrics`] holds the
//! measures, [`report`] their summary, [`roc`] the ROC chart.

pub mod metrics;
pub mod online;
pub mod report;
pub mod roc;

use crate::corpus::{CorpusError, LabeledCorpus, Message};
use crate::error::Result;
use crate::features::hashed::write_hashed_token;
use crate::features::{
    Buckets, Dataset, FeatureId, NumberedTokens, Row, SparseVector, VocabularyParams,
    stratified_folds, training_indices,
};
use crate::filter::words_and_hashed;
use crate::label::{Label, SpamScore};
use crate::models::fusion::Stack;
use crate::models::{Calibration, Classifier, ModelKind, ModelParams};
use crate::tokenize::{Tokenizer, TokenizerConfig, Tokens};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Labeled messages as the models see them, with what reading each one cost: the input of
/// [`CrossValidation::run`] and [`online::run`]. Messages are tokenized once, not once per fold.
#[derive(Debug, Clone, Default)]
pub struct TokenizedMail {
    /// Each message's tokens but its hashed byte 4-grams.
    pub tokens: Vec<Tokens>,
    /// Each message's hashed byte 4-grams' ids, repeats kept
    /// ([`Tokenizer::byte_ngram_ids`]): four bytes each where a `b4:` string took some forty,
    /// so 40,000 messages' 4-grams take 0.3 GB, not 3.
    pub hashed: Vec<Vec<FeatureId>>,
    /// Each message's true label.
    pub labels: Vec<Label>,
    /// Each message's name, as `classify` prints it: where it was read from (a file's path,
    /// `PATH#N` for the N-th message of an mbox).
    pub names: Vec<String>,
    /// Seconds each message took to parse and tokenize (on one thread): the first part of
    /// what classifying it costs, counted into [`FoldResult::classify_seconds`].
    pub tokenize_seconds: Vec<f64>,
}

impl TokenizedMail {
    /// Tokenizes every message of `corpus` (in parallel; results in corpus order), timing each.
    pub fn of(corpus: &LabeledCorpus, config: &TokenizerConfig) -> TokenizedMail {
        let tokenizers = words_and_hashed(config);
        let timed: Vec<Tokenized> = corpus
            .messages
            .par_iter()
            .map(|(m, _)| tokenized(&tokenizers, &m.bytes))
            .collect();
        let mut mail = TokenizedMail::default();
        for ((tokens, hashed, seconds), (m, label)) in timed.into_iter().zip(&corpus.messages) {
            mail.push(tokens, hashed, *label, m.source.to_string(), seconds);
        }
        mail
    }

    /// Message `i`'s tokens, its hashed byte 4-grams as `b4:` strings among them: what
    /// tokenizing it whole gives (in another order).
    pub fn all_tokens(&self, i: usize) -> Tokens {
        let mut all = self.tokens[i].clone();
        for &id in &self.hashed[i] {
            all.push_with(|text| write_hashed_token(text, id));
        }
        all
    }

    /// Message `i`'s row of a data set: the counts of its words `words` (in some vocabulary's
    /// ids) and its hashed buckets.
    fn row(&self, i: usize, words: SparseVector) -> Arc<Row> {
        let buckets = Buckets::from_ids(self.hashed[i].iter().copied());
        Arc::new(Row::from_parts(words, buckets))
    }

    /// Puts the messages in the order `order` gives (message `order[k]` comes `k`-th), a
    /// permutation of their indices: the order an online run without an index learns them
    /// in, drawn as the messages are shuffled (the same draws shuffle a slice of the messages
    /// and one of their indices alike). Fails with [`crate::Error::Config`] if `order` is no
    /// permutation of them.
    pub fn reorder(&mut self, order: &[usize]) -> Result<()> {
        let n = self.labels.len();
        let mut seen = vec![false; n];
        let permutation = order.len() == n
            && order
                .iter()
                .all(|&i| i < n && !std::mem::replace(&mut seen[i], true));
        if !permutation {
            return Err(crate::Error::Config(format!(
                "a message order must name each of the {n} messages once"
            )));
        }
        fn reordered<T>(items: &mut Vec<T>, order: &[usize]) {
            let mut taken: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
            items.extend(order.iter().filter_map(|&i| taken[i].take()));
        }
        reordered(&mut self.tokens, order);
        reordered(&mut self.hashed, order);
        reordered(&mut self.labels, order);
        reordered(&mut self.names, order);
        reordered(&mut self.tokenize_seconds, order);
        Ok(())
    }

    /// Keeps each message once, with the label it was first found with, as `train` counts
    /// it (the same tokens: a copy in another folder, a re-delivery); returns how many copies
    /// it dropped. Cross-validation needs it: a copy in a training fold and another in the
    /// test fold would be scored by a model that learned it, which flatters every measure.
    /// Fails with [`CorpusError::OneClassOnly`] if a class was copies alone.
    pub fn count_copies_once(&mut self) -> Result<usize> {
        let mut seen = std::collections::HashSet::new();
        let keep: Vec<bool> = (self.tokens.iter())
            .map(|t| seen.insert(crate::filter::learned::digest(t)))
            .collect();
        fn keep_marked<T>(items: &mut Vec<T>, keep: &[bool]) {
            let mut marks = keep.iter();
            items.retain(|_| *marks.next().unwrap_or(&true));
        }
        keep_marked(&mut self.tokens, &keep);
        keep_marked(&mut self.hashed, &keep);
        keep_marked(&mut self.labels, &keep);
        keep_marked(&mut self.names, &keep);
        keep_marked(&mut self.tokenize_seconds, &keep);
        self.both_classes()?;
        Ok(keep.iter().filter(|&&k| !k).count())
    }

    /// Fails with [`CorpusError::OneClassOnly`] unless there is spam and ham.
    fn both_classes(&self) -> Result<()> {
        let [ham, spam] = Label::ALL.map(|l| self.labels.iter().filter(|&&x| x == l).count());
        if ham == 0 || spam == 0 {
            let (spam, ham) = (spam as u64, ham as u64);
            return Err(CorpusError::OneClassOnly { spam, ham }.into());
        }
        Ok(())
    }

    fn push(
        &mut self,
        mut tokens: Tokens,
        hashed: Vec<FeatureId>,
        label: Label,
        name: String,
        seconds: f64,
    ) {
        // Kept for the whole run: without the room its string grew into.
        tokens.shrink_to_fit();
        self.tokens.push(tokens);
        self.hashed.push(hashed);
        self.labels.push(label);
        self.names.push(name);
        self.tokenize_seconds.push(seconds);
    }

    /// Tokenizes the messages of a stream as it is read, a window at a time (in parallel, on
    /// rayon's pool; results in stream order, each timed), so the mail is never held whole,
    /// only its tokens: what [`TokenizedMail::of`] gives for the same messages read first.
    /// Fails with the stream's first error, or with
    /// [`CorpusError::OneClassOnly`] if it lacks spam
    /// or ham.
    pub fn read(
        messages: impl Iterator<Item = std::result::Result<(Message, Label), CorpusError>> + Send,
        config: &TokenizerConfig,
    ) -> Result<TokenizedMail> {
        let tokenizers = words_and_hashed(config);
        let mut mail = TokenizedMail::default();
        crate::batch::map_in_order(
            messages,
            crate::batch::Window::default(),
            |item| item.as_ref().map_or(0, |(m, _)| m.bytes.len()),
            |item| {
                let (m, _) = item.as_ref().ok()?;
                Some(tokenized(&tokenizers, &m.bytes))
            },
            |item, timed| -> Result<()> {
                let (m, label) = item?;
                let (tokens, hashed, seconds) = timed.unwrap_or_default();
                mail.push(tokens, hashed, label, m.source.to_string(), seconds);
                Ok(())
            },
        )?;
        mail.both_classes()?;
        Ok(mail)
    }
}

/// A message's tokens but its hashed byte 4-grams, their ids, and the seconds that took.
type Tokenized = (Tokens, Vec<FeatureId>, f64);

/// `raw` tokenized by the pair of [`words_and_hashed`], timed.
fn tokenized((words, hashed): &(Tokenizer, Tokenizer), raw: &[u8]) -> Tokenized {
    let started = Instant::now();
    let tokens = words.tokenize(raw).tokens;
    let ids = hashed.byte_ngram_ids(raw);
    (tokens, ids, started.elapsed().as_secs_f64())
}

/// How to cross-validate.
#[derive(Debug, Clone)]
pub struct CrossValidation {
    /// Number of folds (at least 2).
    pub folds: usize,
    /// Seed of the fold split (and of the models' internal randomness).
    pub seed: u64,
    /// Vocabulary settings, applied to each training fold.
    pub vocabulary: VocabularyParams,
    /// The models to compare (each fitted with its Platt scaling where it needs one). Fusion
    /// stacks the others, fitted as `train` fits it: on their internal folds' held-out
    /// decisions within the training fold.
    pub models: Vec<ModelParams>,
}

/// One model's predictions on one held-out fold.
#[derive(Debug, Clone)]
pub struct FoldResult {
    /// Which model.
    pub model: ModelKind,
    /// Fold number, from 0.
    pub fold: usize,
    /// Raw decision values of the held-out messages.
    pub decisions: Vec<f64>,
    /// P(spam) of the held-out messages.
    pub p_spam: Vec<f64>,
    /// True labels of the held-out messages.
    pub labels: Vec<Label>,
    /// Where each held-out message is in the [`TokenizedMail`] the run read (its index), in
    /// the order of `decisions`: a test fold's messages, or every message in the order of an
    /// online run.
    pub messages: Vec<usize>,
    /// How many of the first messages were classified before the model had learned a message
    /// of each class (online; 0 in cross-validation): a verdict calls those unsure, so the
    /// binary measures never call them spam, whatever their P(spam) (0.5 for a Naive Bayes
    /// model that has learned only ham).
    pub undecided: usize,
    /// Seconds to fit the model (calibration included; vocabulary excluded); for fusion, to fit
    /// the fuser on the other models' held-out decisions.
    pub train_seconds: f64,
    /// Seconds to classify the held-out messages as `spamsort classify` does, on one thread:
    /// parse and tokenize ([`TokenizedMail::tokenize_seconds`]), look the tokens up in the
    /// vocabulary and score them.
    pub classify_seconds: f64,
}

impl FoldResult {
    /// Per held-out message, whether its verdict calls it spam: P(spam) `spam_threshold` or
    /// above, once the model had learned a message of each class (see `undecided`). What the
    /// binary measures count, and `eval --scores` writes.
    pub fn called_spam(&self, spam_threshold: f64) -> impl Iterator<Item = bool> + '_ {
        (self.p_spam.iter().enumerate())
            .map(move |(i, &p)| i >= self.undecided && p >= spam_threshold)
    }

    /// The result of `model` on held-out messages from their decision values, P(spam) through
    /// `calibration`; labels and timings are left for the caller to fill.
    fn held_out(
        fold: usize,
        model: ModelKind,
        decisions: Vec<f64>,
        calibration: Calibration,
    ) -> Self {
        let p_spam = decisions
            .iter()
            .map(|&d| SpamScore::new(calibration.p_spam(d)).p_spam())
            .collect();
        FoldResult {
            model,
            fold,
            decisions,
            p_spam,
            labels: Vec::new(),
            messages: Vec::new(),
            undecided: 0,
            train_seconds: 0.0,
            classify_seconds: 0.0,
        }
    }
}

impl CrossValidation {
    /// Runs the folds on tokenized messages. Results are ordered by fold, then model.
    /// Tokens of features no model sees (byte 4-grams, unless a model sees hashed features)
    /// are dropped before fitting: tokenize with
    /// [`tokenizer_for`](crate::models::tokenizer_for) so they are never made.
    ///
    /// Refused with [`Error::Config`](crate::Error::Config) unless there are at least 2 folds
    /// and at least as many messages of each class as folds: a fold without a spam or a ham
    /// message has no ROC curve, and its measures would be NaN.
    pub fn run(&self, mail: &TokenizedMail) -> Result<Vec<FoldResult>> {
        let labels = &mail.labels;
        let [ham, spam] = Label::ALL.map(|l| labels.iter().filter(|&&x| x == l).count());
        if self.folds < 2 || self.folds > ham.min(spam) {
            let fix = match ham.min(spam) {
                0 | 1 => "add mail: no number of folds fits fewer than 2 of a class".to_owned(),
                most => format!("use between 2 and {most} folds"),
            };
            return Err(crate::Error::Config(format!(
                "cross-validation with {} folds needs at least 2 folds and at least as many \
                 messages of each class as folds, but there are {spam} spam and {ham} ham: \
                 {fix}",
                self.folds
            )));
        }
        let folds = stratified_folds(labels, self.folds, self.seed);
        // Each fold's vocabulary and training rows come from the tokens' numbers: a string is
        // hashed once here, not once per fold.
        let numbered = NumberedTokens::of(&mail.tokens);
        // One fold at a time, its models fitted in parallel: folds run side by side would each
        // hold their training rows at once (a rayon thread waiting on one fold's fit starts
        // another fold), and a thread would sit idle behind the one fit it waits for.
        let mut out = Vec::new();
        for (k, test) in folds.iter().enumerate() {
            out.extend(self.run_fold(k, test, &folds, mail, &numbered)?);
        }
        Ok(out)
    }

    fn run_fold(
        &self,
        k: usize,
        test: &[usize],
        folds: &[Vec<usize>],
        mail: &TokenizedMail,
        numbered: &NumberedTokens,
    ) -> Result<Vec<FoldResult>> {
        let labels = &mail.labels;
        let train = training_indices(folds, k);
        let (vocab, ids) = self.vocabulary.fit_numbered(
            &numbered.tokens,
            train
                .iter()
                .map(|&i| (numbered.lists[i].as_slice(), labels[i])),
        );
        let dataset = |idx: &[usize], rows: Vec<Arc<Row>>| Dataset {
            rows,
            labels: idx.iter().map(|&i| labels[i]).collect(),
            n_features: vocab.len(),
        };
        let train_rows = train
            .par_iter()
            .map(|&i| mail.row(i, numbered.count_vector(i, &ids)));
        let train_set = dataset(&train, train_rows.collect());
        // Looking the tokens up is part of classifying, shared by every model of the fold:
        // timed as `classify` does it, from the tokens' text, on one thread.
        let started = Instant::now();
        let test_rows = test
            .iter()
            .map(|&i| mail.row(i, vocab.vectorize(&mail.tokens[i])));
        let test_set = dataset(test, test_rows.collect());
        let tokenize_seconds: f64 = test.iter().map(|&i| mail.tokenize_seconds[i]).sum();
        let read_seconds = tokenize_seconds + started.elapsed().as_secs_f64();
        let fusion = self.models.iter().find_map(|p| match p {
            ModelParams::Fusion(f) => Some(*f),
            _ => None,
        });
        // The models in parallel (their fits do not depend on the order they run in), each
        // with its internal folds' held-out decisions, kept for fusion.
        let on_tokens: Vec<&ModelParams> = self
            .models
            .iter()
            .filter(|p| p.kind() != ModelKind::Fusion)
            .collect();
        let each = on_tokens.par_iter().map(|params| {
            let started = Instant::now();
            let (model, folds) = params.fit_with_folds(&train_set, self.seed, fusion.is_some())?;
            let train_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let hashed = model.sees_hashed();
            let decisions = (test_set.rows.iter())
                .map(|x| model.decision(&x.counts(hashed)))
                .collect();
            let mut r = FoldResult::held_out(k, params.kind(), decisions, model.calibration);
            (r.labels, r.train_seconds) = (test_set.labels.clone(), train_seconds);
            r.messages = test.to_vec();
            r.classify_seconds = read_seconds + started.elapsed().as_secs_f64();
            Ok((r, (model, folds)))
        });
        let (mut results, fitted): (Vec<FoldResult>, Vec<_>) =
            each.collect::<Result<Vec<_>>>()?.into_iter().unzip();
        if let Some(params) = fusion {
            let started = Instant::now();
            let fuser = params.fit_stack(&Stack::of_fitted(&fitted)?)?;
            let train_seconds = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let decisions = test_set
                .rows
                .iter()
                .map(|x| {
                    let log_odds: Vec<f64> = fitted
                        .iter()
                        .map(|(m, _)| {
                            m.calibration
                                .log_odds(m.decision(&x.counts(m.sees_hashed())))
                        })
                        .collect();
                    fuser.decision(&log_odds)
                })
                .collect();
            let mut r =
                FoldResult::held_out(k, ModelKind::Fusion, decisions, Calibration::IDENTITY);
            (r.labels, r.train_seconds) = (test_set.labels.clone(), train_seconds);
            r.messages = test.to_vec();
            r.classify_seconds = read_seconds + started.elapsed().as_secs_f64();
            // In the order the models were asked for.
            let before = self
                .models
                .iter()
                .take_while(|p| p.kind() != ModelKind::Fusion);
            results.insert(before.count(), r);
        }
        Ok(results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cross_validation(folds: usize) -> CrossValidation {
        CrossValidation {
            folds,
            seed: 1,
            vocabulary: VocabularyParams::default(),
            models: vec![ModelParams::default_for(ModelKind::MultinomialNb)],
        }
    }

    #[test]
    fn more_folds_than_messages_of_a_class_is_refused() {
        let labels = vec![Label::Spam, Label::Spam, Label::Ham, Label::Ham, Label::Ham];
        let mail = TokenizedMail {
            tokens: labels.iter().map(|_| Tokens::new()).collect(),
            hashed: labels.iter().map(|_| Vec::new()).collect(),
            tokenize_seconds: vec![0.0; labels.len()],
            labels,
            ..TokenizedMail::default()
        };
        let err = cross_validation(3).run(&mail).unwrap_err();
        assert!(err.to_string().contains("2 spam and 3 ham"), "{err}");
        assert!(cross_validation(1).run(&mail).is_err());
        assert!(cross_validation(2).run(&mail).is_ok());
        // Regression: one message of a class asked for "between 2 and 1 folds".
        let one_spam = TokenizedMail {
            tokens: mail.tokens[1..].to_vec(),
            hashed: mail.hashed[1..].to_vec(),
            tokenize_seconds: mail.tokenize_seconds[1..].to_vec(),
            labels: mail.labels[1..].to_vec(),
            ..TokenizedMail::default()
        };
        let err = cross_validation(2).run(&one_spam).unwrap_err().to_string();
        assert!(err.contains("1 spam and 3 ham: add mail"), "{err}");
        assert!(!err.contains("between 2 and 1"), "{err}");
    }

    /// Seeded synthetic mail: words shared by both classes, some leaning to one class.
    fn synthetic_mail(messages: usize) -> TokenizedMail {
        let mut state = 7u64;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % n
        };
        let labels: Vec<Label> = (0..messages)
            .map(|i| if i % 3 == 0 { Label::Spam } else { Label::Ham })
            .collect();
        let tokens: Vec<Tokens> = labels
            .iter()
            .map(|&label| {
                let lean = if label == Label::Spam { "s" } else { "h" };
                (0..20 + next(30))
                    .map(|_| match next(4) {
                        0 => format!("{lean}{}", next(40)),
                        _ => format!("w{}", next(200)),
                    })
                    .collect()
            })
            .collect();
        TokenizedMail {
            hashed: tokens.iter().map(|_| Vec::new()).collect(),
            tokens,
            tokenize_seconds: vec![0.0; labels.len()],
            labels,
            ..TokenizedMail::default()
        }
    }

    #[test]
    fn models_fitted_in_parallel_give_what_one_thread_gives_bit_for_bit_in_order() {
        let mail = synthetic_mail(150);
        let cv = CrossValidation {
            models: ModelKind::WITH_FUSION
                .iter()
                .map(|&k| ModelParams::default_for(k))
                .collect(),
            ..cross_validation(3)
        };
        let on = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| cv.run(&mail)).unwrap()
        };
        let one = on(1);
        let order: Vec<(usize, ModelKind)> = one.iter().map(|r| (r.fold, r.model)).collect();
        let expected: Vec<(usize, ModelKind)> = (0..3)
            .flat_map(|k| ModelKind::WITH_FUSION.map(|m| (k, m)))
            .collect();
        assert_eq!(order, expected, "by fold, then model as asked");
        let bits = |results: &[FoldResult]| -> Vec<Vec<u64>> {
            results
                .iter()
                .map(|r| {
                    r.decisions
                        .iter()
                        .chain(&r.p_spam)
                        .map(|x| x.to_bits())
                        .collect()
                })
                .collect()
        };
        // The decisions differ between models and messages: the comparison can fail.
        assert!(one[0].decisions.iter().any(|&d| d != one[0].decisions[0]));
        for threads in [2, 4] {
            let many = on(threads);
            assert_eq!(bits(&many), bits(&one), "{threads} threads");
            let labels =
                |rs: &[FoldResult]| rs.iter().map(|r| r.labels.clone()).collect::<Vec<_>>();
            assert_eq!(labels(&many), labels(&one));
        }
    }

    /// `messages` as a mail stream yields them, the `i`-th read from the file `m{i}`.
    fn read_from(
        messages: &[(Vec<u8>, Label)],
    ) -> impl Iterator<Item = std::result::Result<(Message, Label), CorpusError>> + Send + '_ {
        messages.iter().enumerate().map(|(i, (raw, label))| {
            let source = crate::corpus::Source::file(format!("m{i}"));
            Ok((
                Message {
                    bytes: raw.clone(),
                    source,
                },
                *label,
            ))
        })
    }

    #[test]
    fn reordered_mail_is_in_the_order_a_shuffle_of_the_messages_gives() {
        use rand::SeedableRng;
        use rand::seq::SliceRandom;
        let messages: Vec<(Vec<u8>, Label)> = (0..50)
            .map(|i| {
                let label = if i % 3 == 0 { Label::Spam } else { Label::Ham };
                (format!("Subject: n{i}\n\nword{i}\n").into_bytes(), label)
            })
            .collect();
        let config = TokenizerConfig::default();
        let mut shuffled = messages.clone();
        shuffled.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(7));
        let expected = TokenizedMail::read(read_from(&shuffled), &config).unwrap();
        let mut mail = TokenizedMail::read(read_from(&messages), &config).unwrap();
        let mut order: Vec<usize> = (0..messages.len()).collect();
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(7));
        mail.reorder(&order).unwrap();
        assert_eq!(mail.tokens, expected.tokens);
        assert_eq!(mail.hashed, expected.hashed);
        assert_eq!(mail.labels, expected.labels);
        // No permutation: refused, the mail left as it was.
        for bad in [vec![0; 50], (0..49).collect(), (1..51).collect()] {
            assert!(mail.reorder(&bad).is_err());
        }
        assert_eq!(mail.tokens, expected.tokens);
    }

    #[test]
    fn mail_tokenized_as_it_is_read_is_the_mail_read_then_tokenized() {
        // More messages than one window's chunk, both classes interleaved.
        let messages: Vec<(Vec<u8>, Label)> = (0..600)
            .map(|i| {
                let label = if i % 4 == 0 { Label::Spam } else { Label::Ham };
                let raw = format!("Subject: note {i}\n\nbody words {} and {i}\n", i % 7);
                (raw.into_bytes(), label)
            })
            .collect();
        let config = TokenizerConfig::default();
        let read = TokenizedMail::read(read_from(&messages), &config).expect("both classes");
        let corpus = LabeledCorpus {
            messages: read_from(&messages).map(Result::unwrap).collect(),
        };
        let whole = TokenizedMail::of(&corpus, &config);
        assert_eq!(
            (read.tokens, read.hashed, read.labels, &read.names),
            (whole.tokens, whole.hashed, whole.labels, &whole.names)
        );
        assert_eq!(read.names[599], "m599");
        assert_eq!(read.tokenize_seconds.len(), messages.len());
        let ham_only: Vec<_> = messages
            .iter()
            .filter(|(_, l)| *l == Label::Ham)
            .cloned()
            .collect();
        let err = TokenizedMail::read(read_from(&ham_only), &config).unwrap_err();
        assert!(err.to_string().contains("0 spam"), "{err}");
    }

    #[test]
    fn copies_count_once_with_the_label_first_found() {
        // Regression: cross-validation kept every copy, so a copy in a training fold and one
        // in the test fold made every model look perfect.
        let message =
            |text: &str, label| (format!("Subject: {text}\n\n{text}\n").into_bytes(), label);
        let messages = [
            message("cheap pills", Label::Spam),
            message("lunch at noon", Label::Ham),
            message("cheap pills", Label::Ham),
            message("lunch at noon", Label::Ham),
            message("meeting notes", Label::Ham),
        ];
        let config = TokenizerConfig::default();
        let mut mail = TokenizedMail::read(read_from(&messages), &config).unwrap();
        assert_eq!(mail.count_copies_once().unwrap(), 2);
        assert_eq!(mail.labels, [Label::Spam, Label::Ham, Label::Ham]);
        assert_eq!(mail.names, ["m0", "m1", "m4"]);
        let (tokens, hashed, seconds) = (&mail.tokens, &mail.hashed, &mail.tokenize_seconds);
        assert_eq!((tokens.len(), hashed.len(), seconds.len()), (3, 3, 3));
        assert!(tokens[2].iter().any(|t| t.contains("meeting")));
        // Ham that is all copies of spam leaves one class.
        let copies = [
            message("cheap pills", Label::Spam),
            message("cheap pills", Label::Ham),
        ];
        let mut mail = TokenizedMail::read(read_from(&copies), &config).unwrap();
        let err = mail.count_copies_once().unwrap_err();
        assert!(err.to_string().contains("0 ham"), "{err}");
    }

    #[test]
    fn classify_seconds_count_each_held_out_message_tokenizing_time() {
        let labels = [Label::Spam, Label::Ham].repeat(3);
        let mail = TokenizedMail {
            tokens: labels.iter().map(|_| Tokens::from_iter(["a"])).collect(),
            hashed: labels.iter().map(|_| Vec::new()).collect(),
            // Far more than looking up and scoring one token could take.
            tokenize_seconds: vec![100.0; labels.len()],
            labels,
            ..TokenizedMail::default()
        };
        for r in cross_validation(3).run(&mail).unwrap() {
            let held_out = r.labels.len() as f64;
            assert!(
                r.classify_seconds >= 100.0 * held_out,
                "{}",
                r.classify_seconds
            );
            assert!(
                r.classify_seconds < 100.0 * held_out + 10.0,
                "{}",
                r.classify_seconds
            );
        }
    }
}
