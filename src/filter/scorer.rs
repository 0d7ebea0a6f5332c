//! Scoring with one model straight from a model file: what the one-process-per-message
//! `filter` (and `classify`, `explain`) use. [`ScorerFile::open`] reads the file's small head
//! and the score table's index (see [`super::score_table`]) and checks them; each message then
//! reads only the blocks of the score table its tokens fall in (one positioned read per run
//! of adjacent blocks, each block checked against its own checksum), which hold each token's
//! id and every model's values for it, so the vocabulary's counts, the record of learned
//! messages and the models' sections are never read (but for a model that sees hashed
//! features, whose section holds those weights: it is read through a small buffer for the
//! weights of the message's buckets alone, see [`HashedWeights`]). For fusion, the fuser is
//! in the head. The scores are bit for bit those of the [`SpamFilter`] saved in the file: the
//! same functions over the same values.
//!
//! The file is read, not mapped (see [`ModelFileReader`]), so rewriting it in place under a
//! running scorer gives an error, never a crash.
//!
//! A file whose journal is not empty (messages `spamsort learn` appended since the last save)
//! is scored exactly as [`SpamFilter::load`](crate::SpamFilter::load) would. A scorer of one
//! message (the default; the pipe filter) restricts the file to the message's tokens, looked
//! up in the score table, with the chosen model's section (for fusion, those of the models it
//! stacks), and takes the journal records' patches into it (see `super::sparse` and
//! `super::patch`), reading the records for each message, one at a time, each patch kept for
//! the message's byte 4-grams alone; where a record has no patch it replays the journal over the journal's
//! and the message's tokens instead, and it loads the models whole only where neither would
//! be exact (complement Naive Bayes). A scorer of many messages ([`Scorer::for_many_messages`])
//! loads the chosen model whole (with its journal applied) once, at its first message: past a
//! few messages, hashing each token into the loaded vocabulary costs less than finding it in
//! the score table's blocks. For fusion it also pairs the models it stacks (the linear
//! SVM with logistic regression, the two Naive Bayes models: see
//! [`SpamFilter::paired_models`]), so that a message's features are read once for both of a
//! pair.

use super::hashed_weights::HashedWeights;
use super::journal::{self, Record};
use super::layout::{
    FIRST_MODEL_SECTION, Head, SCORE_BLOCKS_SECTION, SCORE_INDEX_SECTION, wrong_model,
};
use super::score_table::{Column, Rows, ScoreModel, ScoreTable};
use super::sparse::{composed_for, replayed_for};
use super::{PairedModels, SpamFilter, words_and_hashed};
use crate::features::hashed::{HASHED_BUCKETS, hashed_id};
use crate::features::{FeatureId, SparseVector, WordCounts, count_id, dot, weigh, weighed};
use crate::filter::{Classification, Explanation};
use crate::label::{Label, Thresholds};
use crate::model_file::packed::Elements;
use crate::model_file::{ModelFileError, ModelFileReader};
use crate::models::{Calibration, Fusion, ModelKind, terms};
use crate::tokenize::{Tokenizer, TokenizerConfig, Tokens};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// A model file opened for scoring with one model: its head and its score table's index
/// checked, the models that answer found.
pub struct ScorerFile {
    file: ModelFileReader,
    /// The file's head, read and checked once at open.
    head: Head,
    /// The score table.
    table: ScoreTable,
    /// The models that answer, by position in the head's list: the chosen one, or those
    /// fusion stacks, in its order.
    models: Vec<usize>,
    /// The model that answers.
    kind: ModelKind,
    /// Whether the file's journal (messages learned since the last save, which the score
    /// table does not hold yet) begins with a record (see
    /// [`ModelFileReader::journal_begins`]). Its records are read as each message needs them.
    journaled: bool,
    /// The journal's records decoded whole, once a replay needed them.
    records: OnceLock<Vec<Record<'static>>>,
    /// The chosen model loaded whole with the journal applied (its cached functions
    /// refreshed), once a scorer of many messages needed it.
    replayed: OnceLock<SpamFilter>,
    /// The models fusion stacks in `replayed`, paired where they pair (see
    /// [`SpamFilter::paired_models`]), once a classification needed them.
    paired: OnceLock<Option<PairedModels>>,
    /// Held while loading it, so that threads scoring at once load it once.
    loading: Mutex<()>,
}

impl ScorerFile {
    /// Opens the file, checks its head and its score table's index, and finds `model` (`None`:
    /// the file's active model; fusion: the models it stacks). Fails if the file has no such
    /// model. The score table's blocks are read as messages need them.
    pub fn open(path: &Path, model: Option<ModelKind>) -> Result<ScorerFile, ModelFileError> {
        let file = ModelFileReader::open(path)?;
        let head = Head::read(&file)?;
        let kind = model.unwrap_or(head.active);
        let missing = || super::layout::no_such_model(path, kind, &head);
        let read = match (kind, &head.fusion) {
            (ModelKind::Fusion, Some(fusion)) => fusion.models().to_vec(),
            (ModelKind::Fusion, None) => return Err(missing()),
            (kind, _) => vec![kind],
        };
        let models = read
            .iter()
            .map(|k| head.kinds.iter().position(|h| h == k))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(missing)?;
        let table = ScoreTable::open(&file, SCORE_INDEX_SECTION, SCORE_BLOCKS_SECTION)?;
        let kinds = table.index().models.iter().map(|m| m.kind);
        if !kinds.eq(head.kinds.iter().copied()) {
            return Err(wrong_model(path));
        }
        // Learned messages in the journal change the counts: they are applied to what each
        // message needs (see `Source::Replayed`) until the next compaction empties it.
        let journaled = file.journal_begins()?;
        Ok(ScorerFile {
            file,
            head,
            table,
            models,
            kind,
            journaled,
            records: OnceLock::new(),
            replayed: OnceLock::new(),
            paired: OnceLock::new(),
            loading: Mutex::new(()),
        })
    }

    /// The journal's records, decoded whole at the first call.
    fn records(&self) -> Result<&[Record<'static>], ModelFileError> {
        if let Some(records) = self.records.get() {
            return Ok(records);
        }
        let records = journal::records(&self.file)?;
        Ok(self.records.get_or_init(|| records))
    }

    /// The model that answers (for fusion, the models it stacks) read whole, the journal
    /// applied.
    fn load(&self) -> Result<SpamFilter, ModelFileError> {
        let mut filter = SpamFilter::read_sections(&self.file, Some(self.kind))?;
        journal::apply(self.file.path(), self.records()?, &mut filter)?;
        // Not from the sections of one file and the journal of another (rewritten in place).
        self.file.check_unchanged()?;
        Ok(filter)
    }

    /// [`ScorerFile::load`] of the model that answers, once, kept for every later call; its
    /// cached functions are refreshed, so scoring reads them instead of recomputing each
    /// weight from the counts (the same arithmetic: bit for bit the same decisions).
    fn whole(&self) -> Result<&SpamFilter, ModelFileError> {
        if let Some(filter) = self.replayed.get() {
            return Ok(filter);
        }
        // A thread that panicked loading left nothing half done behind.
        let _loading = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(filter) = self.replayed.get() {
            return Ok(filter);
        }
        let mut filter = self.load()?;
        filter.refresh();
        Ok(self.replayed.get_or_init(|| filter))
    }

    /// [`ScorerFile::whole`] with the models its fusion stacks paired, if any pair: paired at
    /// the first call (classifying reads them; `explain` does not ask).
    fn whole_paired(&self) -> Result<(&SpamFilter, Option<&PairedModels>), ModelFileError> {
        let filter = self.whole()?;
        let paired = self.paired.get_or_init(|| {
            (self.kind == ModelKind::Fusion)
                .then(|| filter.paired_models())
                .flatten()
        });
        Ok((filter, paired.as_ref()))
    }

    /// The scorer over the file: the models' settings from the score table's index, and for
    /// a model that sees the hashed features, its section, whose hashed weights each message
    /// reads those of its buckets from (see [`HashedWeights`]).
    pub fn scorer(&self) -> Result<Scorer<'_>, ModelFileError> {
        let path = self.file.path();
        let head = &self.head;
        let table = &self.table;
        let scorer = |source| Scorer {
            tokenizers: words_and_hashed(&head.tokenizer),
            thresholds: head.thresholds,
            messages: head.summary.messages,
            kind: self.kind,
            file: self,
            source,
        };
        if self.journaled {
            return Ok(scorer(Source::Replayed(Replay::Sparse)));
        }
        let mut models = Vec::with_capacity(self.models.len());
        for &i in &self.models {
            let model = &table.index().models[i];
            let hashed = model
                .has_hashed_weights()
                .then_some(FIRST_MODEL_SECTION + i);
            models.push(ModelView { model, hashed });
        }
        let answer = match (self.kind, head.fusion.clone(), models.len()) {
            (ModelKind::Fusion, Some(fusion), _) => Answer::Fused(fusion, models),
            (_, _, 1) => Answer::One(models.swap_remove(0)),
            _ => return Err(wrong_model(path)),
        };
        Ok(scorer(Source::Table(answer)))
    }
}

/// Verdicts of one model (or fusion) from a [`ScorerFile`]: the same classification and
/// explanation as the [`SpamFilter`] saved in the file.
pub struct Scorer<'a> {
    /// The tokenizer the model was trained with, made once for every message, as two: one
    /// for the words, one for the hashed byte 4-grams' ids (see
    /// [`words_and_hashed`]).
    tokenizers: (Tokenizer, Tokenizer),
    thresholds: Thresholds,
    /// Messages learned per class, ham first, as the file saved them (its score table's
    /// answers); a filter with the journal applied answers with its own counts. With a 0,
    /// every verdict is unsure.
    messages: [u64; 2],
    kind: ModelKind,
    file: &'a ScorerFile,
    source: Source<'a>,
}

/// Where a [`Scorer`]'s verdicts come from.
enum Source<'a> {
    /// The file's score table (the message's blocks read for it), the model or fusion it
    /// holds that answers.
    Table(Answer<'a>),
    /// The file's filter with its journal applied.
    Replayed(Replay),
}

/// How a scorer reads a file's filter with its journal applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replay {
    /// Once, the chosen model loaded whole (kept in the [`ScorerFile`]): for many messages.
    Whole,
    /// For each message, what it needs (see [`super::sparse`]): for one message.
    Sparse,
}

/// What gives a [`Scorer`]'s verdicts.
enum Answer<'a> {
    /// One model.
    One(ModelView<'a>),
    /// Fusion, and each model it stacks, in its order.
    Fused(Fusion, Vec<ModelView<'a>>),
}

/// One model as a scorer reads it: its settings from the score table's index, and for a model
/// that sees hashed features, the section that holds its hashed weights.
struct ModelView<'a> {
    model: &'a ScoreModel,
    hashed: Option<usize>,
}

/// A model's weights by input id: the hashed ones those of the message's buckets read from its
/// section, the vocabulary's from the rows the message's tokens found.
struct Weights<'r> {
    hashed: Option<&'r HashedWeights>,
    vocabulary: Column<'r>,
}

impl Elements<f64> for Weights<'_> {
    fn at(&self, i: usize) -> Option<f64> {
        match &self.hashed {
            Some(h) if i < HASHED_BUCKETS as usize => h.at(i),
            _ => self.vocabulary.at(i),
        }
    }

    fn len(&self) -> usize {
        self.vocabulary.len()
    }
}

impl ModelView<'_> {
    /// This model's hashed weights at `buckets` (ascending: a message's; `None` for a model
    /// that does not see the hashed features).
    fn hashed_weights(
        &self,
        file: &ModelFileReader,
        buckets: &[u32],
    ) -> Result<Option<HashedWeights>, ModelFileError> {
        let Some(section) = self.hashed else {
            return Ok(None);
        };
        HashedWeights::read(file, section, self.model.kind, buckets).map(Some)
    }

    /// The model's idf table, by vocabulary id, from the rows a message's tokens found (none
    /// for a model without one: idf 1).
    fn idf<'r>(&self, rows: &'r Rows<'r>) -> Idf<'r> {
        Idf(self.model.idf.map(|column| Column {
            rows,
            column: column as usize,
            shift: 0,
        }))
    }

    /// The model's weights by input id, from the rows a message's vocabulary tokens found
    /// and the weights of its buckets (`hashed`, from [`ModelView::hashed_weights`]).
    fn weights<'r>(&self, rows: &'r Rows<'r>, hashed: Option<&'r HashedWeights>) -> Weights<'r> {
        let m = self.model;
        let shift = if m.config.hashed {
            HASHED_BUCKETS as usize
        } else {
            0
        };
        let vocabulary = Column {
            rows,
            column: m.weights as usize,
            shift,
        };
        let hashed = hashed.filter(|_| m.config.hashed);
        Weights { hashed, vocabulary }
    }

    /// The decision value and each present feature's share of it, as the model computes
    /// them (a Naive Bayes model through the same [`crate::models::NbScoring::combine`]).
    fn contributions(
        &self,
        x: &SparseVector,
        rows: &Rows<'_>,
        hashed: Option<&HashedWeights>,
    ) -> (f64, Vec<(FeatureId, f64)>) {
        let input = weigh(self.model.config, &self.idf(rows), x);
        let weights = self.weights(rows, hashed);
        let config = self.model.config;
        let mut terms: Vec<(FeatureId, f64)> = terms(&input, &weights)
            .into_iter()
            .map(|(id, c)| (count_id(config, id), c))
            .collect();
        let decision = match self.model.scoring {
            Some(scoring) => scoring.combine(self.model.bias, &mut terms),
            None => self.model.bias + input.dot_with(&weights),
        };
        (decision, terms)
    }

    /// The decision value alone: the same terms, read as the input is weighted (see
    /// [`weighed`]), not held.
    fn decision(&self, x: &SparseVector, rows: &Rows<'_>, hashed: Option<&HashedWeights>) -> f64 {
        let idf = self.idf(rows);
        let weights = self.weights(rows, hashed);
        let input = weighed(self.model.config, &idf, x);
        let Some(scoring) = self.model.scoring else {
            return self.model.bias + dot(input, &weights);
        };
        let terms = input.map(|(id, v)| v * weights.at(id as usize).unwrap_or(0.0));
        (scoring.decision(self.model.bias, terms))
            .unwrap_or_else(|| self.contributions(x, rows, hashed).0)
    }
}

/// A model's idf table by vocabulary id: a column of the rows a message's tokens found, or
/// none (idf 1 throughout).
struct Idf<'r>(Option<Column<'r>>);

impl Elements<f64> for Idf<'_> {
    fn at(&self, i: usize) -> Option<f64> {
        self.0.as_ref()?.at(i)
    }

    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, Elements::len)
    }
}

/// Each model's calibrated log-odds of a count vector, in order (`hashed`: each one's
/// hashed weights, in the same order).
fn log_odds(
    models: &[ModelView<'_>],
    x: &SparseVector,
    rows: &Rows<'_>,
    hashed: &[Option<HashedWeights>],
) -> Vec<f64> {
    models
        .iter()
        .zip(hashed)
        .map(|(m, h)| {
            m.model
                .calibration
                .log_odds(m.decision(x, rows, h.as_ref()))
        })
        .collect()
}

/// A message's count vector, with the score table's rows of its vocabulary tokens.
fn count_vector<'t>(
    file: &ModelFileReader,
    table: &ScoreTable,
    tokens: &'t Tokens,
) -> Result<(SparseVector, Rows<'t>), ModelFileError> {
    let counted = WordCounts::of([tokens]);
    let (ids, rows) = table.lookup(file, counted.words())?;
    let (_, counts, hashed) = counted.into_parts();
    let words = ids.iter().zip(counts);
    let pairs = words.filter_map(|(id, count)| Some(((*id)?, f64::from(count))));
    // Any hashed tokens are counted as every other count vector counts them.
    let x = SparseVector::from_pairs(pairs.collect()).with_hashed(hashed);
    Ok((x, rows))
}

impl Scorer<'_> {
    /// The model that answers.
    pub fn model(&self) -> ModelKind {
        self.kind
    }

    /// The tokenizer settings the model was trained with.
    pub fn tokenizer_config(&self) -> &TokenizerConfig {
        self.tokenizers.1.config()
    }

    /// The verdict thresholds (the file's, unless replaced).
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// Replaces the verdict thresholds.
    pub fn set_thresholds(&mut self, thresholds: Thresholds) {
        self.thresholds = thresholds;
    }

    /// This scorer for many messages: it loads the chosen model whole (with the journal
    /// applied) at its first message and scores every message with it. Without it (the pipe
    /// filter's one message) each message reads only the blocks of the score table its tokens
    /// fall in, and a journal is applied to what the message needs.
    pub fn for_many_messages(mut self) -> Self {
        self.source = Source::Replayed(Replay::Whole);
        self
    }

    /// The class with no message learned, if there is one: then every verdict is unsure.
    /// With a journal, the counts are those of the file loaded whole, the journal applied
    /// (as a scorer of many messages loads it at its first message anyway).
    pub fn missing_class(&self) -> Result<Option<Label>, ModelFileError> {
        let messages = if self.file.journaled {
            self.file.whole()?.summary.messages
        } else {
            self.messages
        };
        Ok(Label::ALL.into_iter().find(|l| messages[l.index()] == 0))
    }

    /// Classifies one raw message. Fails only if the model file cannot be read (or a score
    /// table block is corrupt, or the file changed under it).
    pub fn classify(&self, raw: &[u8]) -> Result<Classification, ModelFileError> {
        self.answer(
            raw,
            true,
            |filter, x, tokens, paired| {
                let c = filter.classify_vector_paired(self.kind, x, tokens, paired)?;
                Some(self.with_thresholds(c, filter))
            },
            |answer, x, rows, hashed, tokens| match answer {
                Answer::One(m) => {
                    let decision = m.decision(x, rows, hashed[0].as_ref());
                    self.classification(decision, m.model.calibration, tokens)
                }
                Answer::Fused(fusion, models) => {
                    self.fused(fusion, &log_odds(models, x, rows, hashed), tokens)
                }
            },
        )
    }

    /// `replayed` of the file's filter with its journal applied, the message's count vector
    /// over its vocabulary, its number of tokens and, if `pairs` and the filter is the file's
    /// loaded whole, the models fusion stacks paired (see [`ScorerFile::whole_paired`]); or
    /// `scored` of the table's answer, the
    /// message's count vector, its rows, the hashed weights of each model that answers (see
    /// [`ModelView::hashed_weights`]) and its number of tokens. The hashed byte 4-grams are
    /// counted straight from the bytes, never made into `b4:` strings (see
    /// [`super::count_vector`]).
    fn answer<T>(
        &self,
        raw: &[u8],
        pairs: bool,
        replayed: impl FnOnce(&SpamFilter, &SparseVector, usize, Option<&PairedModels>) -> Option<T>,
        scored: impl FnOnce(&Answer<'_>, &SparseVector, &Rows<'_>, &[Option<HashedWeights>], usize) -> T,
    ) -> Result<T, ModelFileError> {
        let file = self.file;
        let words = self.tokenizers.0.tokenize(raw).tokens;
        let hashed = self.tokenizers.1.byte_ngram_ids(raw);
        let tokens = words.len() + hashed.len();
        let answer = match &self.source {
            Source::Replayed(replay) => {
                let sparse;
                let (filter, paired) = match replay {
                    Replay::Whole if pairs => file.whole_paired()?,
                    Replay::Whole => (file.whole()?, None),
                    Replay::Sparse => {
                        sparse = self.sparse(&words, &hashed)?;
                        // Read for this message: all of it from the file opened.
                        file.file.check_unchanged()?;
                        (&sparse, None)
                    }
                };
                let x = filter.vocabulary.vectorize(&words).with_hashed(hashed);
                // A filter read for this model (for fusion, the models it stacks) answers.
                return replayed(filter, &x, tokens, paired).ok_or_else(|| {
                    let reason = format!("it holds no {} model", self.kind);
                    ModelFileError::invalid(file.file.path(), reason)
                });
            }
            Source::Table(answer) => answer,
        };
        let (x, rows) = count_vector(&file.file, &file.table, &words)?;
        let x = x.with_hashed(hashed);
        let models = match answer {
            Answer::One(m) => std::slice::from_ref(m),
            Answer::Fused(_, models) => models,
        };
        // The message's buckets, once for every model that reads their weights.
        let buckets: Vec<u32> = x.buckets().collect();
        let hashed = (models.iter())
            .map(|m| m.hashed_weights(&file.file, &buckets))
            .collect::<Result<Vec<_>, _>>()?;
        // The blocks were read for this message, each checked on its own: all of them, and
        // what was read before, from the file opened (see `check_unchanged`).
        file.file.check_unchanged()?;
        Ok(scored(answer, &x, &rows, &hashed, tokens))
    }

    /// Why the model scores a message as it does, as [`SpamFilter::explain`].
    pub fn explain(&self, raw: &[u8]) -> Result<Explanation, ModelFileError> {
        self.answer(
            raw,
            false,
            |filter, x, tokens, _paired| {
                let mut explanation = filter.explain_vector(self.kind, x, tokens)?;
                explanation.classification =
                    self.with_thresholds(explanation.classification, filter);
                Some(explanation)
            },
            |answer, x, rows, hashed, tokens| match answer {
                Answer::One(m) => {
                    let (decision, contributions) = m.contributions(x, rows, hashed[0].as_ref());
                    let token = |id: FeatureId| rows.token(id);
                    Explanation::new(
                        self.classification(decision, m.model.calibration, tokens),
                        m.model.calibration,
                        m.model.bias,
                        contributions,
                        token,
                    )
                }
                Answer::Fused(fusion, models) => {
                    let log_odds = log_odds(models, x, rows, hashed);
                    Explanation::fused(self.fused(fusion, &log_odds, tokens), fusion, &log_odds)
                }
            },
        )
    }

    /// The filter of the file restricted to what a message of `words` (its tokens but the
    /// hashed byte 4-grams) and of the byte 4-grams of hashed ids `hashed` needs, its journal
    /// applied (see [`super::sparse`]), or loaded whole where that would not be exact.
    fn sparse(&self, words: &Tokens, hashed: &[FeatureId]) -> Result<SpamFilter, ModelFileError> {
        let file = self.file;
        let (f, head, table, kind) = (&file.file, &file.head, &file.table, self.kind);
        let buckets = super::sparse::buckets(
            (words.iter().filter_map(hashed_id)).chain(hashed.iter().copied()),
        );
        let heads = journal::heads_for_message(f, table.index().tokens, &buckets)?;
        let filter = match journal::patches(&heads) {
            Some(patches) => {
                composed_for(f, head, table, &patches, Some(kind), &[words], &buckets)?.map(|c| c.0)
            }
            None => replayed_for(f, head, table, file.records()?, kind, words, hashed)?,
        };
        match filter {
            Some(filter) => Ok(filter),
            None => file.load(),
        }
    }

    /// `c`, the verdict of `filter` (the file's, its journal applied), judged under this
    /// scorer's thresholds and the filter's message counts (a filter read from the file
    /// judges under the file's thresholds, which [`Scorer::set_thresholds`] may have
    /// replaced).
    fn with_thresholds(&self, c: Classification, filter: &SpamFilter) -> Classification {
        c.judged(self.thresholds, filter.summary.messages)
    }

    fn classification(
        &self,
        decision: f64,
        calibration: Calibration,
        tokens: usize,
    ) -> Classification {
        Classification::new(
            decision,
            calibration,
            self.thresholds,
            self.messages,
            self.kind,
            tokens,
        )
    }

    fn fused(&self, fusion: &Fusion, log_odds: &[f64], tokens: usize) -> Classification {
        Classification::fused(fusion, log_odds, self.thresholds, self.messages, tokens)
    }
}
