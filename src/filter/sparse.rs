//! The file restricted to the tokens a scorer of one message (see [`super::scorer`]) needs,
//! with the journal's changes in it, instead of the answering models loaded whole and the
//! whole vocabulary rebuilt. Two ways, both bit for bit what a full load answers for the
//! message:
//! - [`composed_for`] (every record carries a patch, see [`super::patch`]): the file
//!   restricted to the message's tokens, each record's patch taken in, in order. Its cost
//!   barely grows with the journal. [`learn`](super::journal::learn) uses it too, over the
//!   tokens of the messages it learns, to work out the next patch.
//! - [`replayed_for`] (a record has no patch: as spamsort wrote them for models that see the
//!   hashed features before patches carried their buckets' weights): the file
//!   restricted to the tokens of the journal's messages and of the message, the journal
//!   applied to it through the same
//!   [`LearnedStore::apply`](super::store::LearnedStore::apply) as a full load.
//!
//! Why it is exact: those tokens are looked up in the score table (their ids and each model's
//! weights and idf) and renumbered `0..` in the order of their ids, so every sum over a
//! message's features runs in the same order, and a token new to the file gets the next id in
//! both filters, in the same order. The SVM and logistic regression read and write only a
//! message's weights and their bias; of the hashed features' weights they hold those of the
//! messages' buckets alone, in bucket order (see
//! [`LinearFunction::input`](crate::models::LinearFunction::input)), so those sums run in the
//! same order too; their sections are streamed (still read whole and checked) for those
//! weights alone, where the settings before them fit [`SectionParts`]'s first read. The Naive
//! Bayes models keep, besides the counts of those tokens (columns of the score table, so from
//! the rows looked up), everything that depends
//! on every token (message counts, class totals and |V|, the Bernoulli model's histograms and
//! absent-word terms: what their sections hold; see `TrainedModelSection::restricted`). The
//! vocabulary holds no document frequencies: only unlearning reads them, and a run that
//! unlearns is never journaled (see [`super::patch`]).
//!
//! Where that cannot be exact, both give `None` and the scorer loads the models whole:
//! complement Naive Bayes (its every learn refreshes all its weights), a journal record that
//! unlearns (no file spamsort writes has one), a Naive Bayes model whose counts do not cover
//! exactly the vocabulary (new tokens would be numbered differently from its width; no file
//! spamsort writes is so), a patch that does not fit the vocabulary before it (see
//! [`Patch::fits`]: the journal is then replayed), and a file whose tokens or ids do not fit
//! together (the full load then says what is wrong).

use super::SpamFilter;
use super::hashed_weights::SectionParts;
use super::journal::{self, Record};
use super::layout::{FIRST_MODEL_SECTION, Head, wrong_model};
use super::learned::LearnedMessages;
use super::patch::Patch;
use super::score_table::{ScoreModel, ScoreTable};
use crate::features::hashed::sorted_buckets;
use crate::features::{FeatureId, Vocabulary, WordCounts};
use crate::model_file::packed::{Elements, RealsHead};
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{ModelKind, TrainedModel, TrainedModelSection};
use crate::tokenize::Tokens;

/// The filter of the file `file` (its head `head`, its score table `table`, its journal
/// `records`) for scoring `message` (its tokens, and `hashed`, the hashed ids of byte 4-grams
/// it has besides any among its tokens) with `kind`: over only the features of the journal's
/// messages and of `message`, `kind`'s models (for fusion, the models it stacks) read and the
/// journal applied. `None` where a sparse replay would not be exact (see the module doc): the
/// caller loads the models whole.
pub(crate) fn replayed_for(
    file: &ModelFileReader,
    head: &Head,
    table: &ScoreTable,
    records: &[Record<'_>],
    kind: ModelKind,
    message: &Tokens,
    hashed: &[FeatureId],
) -> Result<Option<SpamFilter>, ModelFileError> {
    // Unlearning reads a token's document frequencies (see `Vocabulary::learn`), which the
    // score table does not hold: a learn that unlearns compacts the file instead of
    // journaling, so only a file written otherwise has such a record.
    if records.iter().any(Record::unlearns) {
        return Ok(None);
    }
    let messages = (records.iter())
        .flat_map(|r| r.messages().map(|m| m.0))
        .chain(std::iter::once(message));
    let counted = WordCounts::of(messages);
    let buckets = buckets(counted.hashed().iter().chain(hashed).copied());
    let words = counted.words();
    let Some((mut filter, _)) = restricted(file, head, table, words, &[], Some(kind), &buckets)?
    else {
        return Ok(None);
    };
    journal::apply(file.path(), records, &mut filter)?;
    Ok(Some(filter))
}

/// The filter of the file `file` (its head `head`, its score table `table`) with the journal
/// records' `patches` taken in, in order (see [`super::patch`]), over only the features of
/// `messages` (their tokens, and `buckets`, the buckets of all their byte 4-grams as
/// [`buckets`] gives them, which the caller has worked out for the journal's records, see
/// [`super::journal::heads_for_message`]): `kind`'s models (for fusion, the models it
/// stacks; `None`: every model), and the vocabulary ids of their tokens, ascending.
/// Its answer for each of `messages` is bit for bit the full load's, and so is what learning
/// them (not unlearning them) does to those tokens. `None` where that would not be exact
/// (see [`replayed_for`] and [`TrainedModel::overlay`](crate::models::TrainedModel::overlay)).
pub(crate) fn composed_for(
    file: &ModelFileReader,
    head: &Head,
    table: &ScoreTable,
    patches: &[&Patch],
    kind: Option<ModelKind>,
    messages: &[&Tokens],
    buckets: &[u32],
) -> Result<Option<(SpamFilter, Vec<FeatureId>)>, ModelFileError> {
    let counted = WordCounts::of(messages.iter().copied());
    let words = counted.words();
    // The message's tokens that the journal added to the vocabulary (the score table has
    // only those before them), in id order.
    let saved = table.index().tokens;
    let mut before = saved;
    for patch in patches {
        if !patch.fits(before) {
            return Ok(None);
        }
        before = patch.vocabulary_len();
    }
    let mut later: Vec<(FeatureId, &str)> = patches
        .iter()
        .flat_map(|p| p.added())
        .filter(|(id, t)| u64::from(*id) >= saved && counted.contains(t))
        .collect();
    later.sort_unstable();
    later.dedup_by_key(|(id, _)| *id);
    let Some((mut filter, mut ids)) = restricted(file, head, table, words, &later, kind, buckets)?
    else {
        return Ok(None);
    };
    if !filter.models.iter().all(TrainedModel::overlays) {
        return Ok(None);
    }
    ids.extend(later.iter().map(|(id, _)| *id));
    for patch in patches {
        if !patch.apply_to(&mut filter, &ids) {
            return Ok(None);
        }
    }
    Ok(Some((filter, ids)))
}

/// The bucket numbers of hashed ids `ids` (the byte 4-grams among a message's tokens, see
/// [`WordCounts::hashed`], and those it has besides; see `crate::features::hashed`), each
/// once, ascending: those [`composed_for`] and [`replayed_for`] hold for the message.
pub(crate) fn buckets(ids: impl IntoIterator<Item = FeatureId>) -> Vec<u32> {
    let mut buckets = sorted_buckets(ids);
    buckets.dedup();
    buckets
}

/// The file restricted to `words` (distinct tokens; those the score table has, renumbered
/// `0..` in the order of their ids) and then `later`, tokens added to the vocabulary since
/// the file was saved (their ids ascending, all past the table's; their models' values are
/// for the caller to give), with `kind`'s models (`None`: every model) as the file saved them,
/// a model that sees the hashed features holding the weights of `buckets` alone (see
/// [`LinearFunction::input`](crate::models::LinearFunction::input)).
/// Its vocabulary holds no document frequencies (only unlearning reads them). Also the ids of
/// the table's tokens among `words`, ascending. `None` where the restriction would not be
/// exact (see the module doc).
fn restricted(
    file: &ModelFileReader,
    head: &Head,
    table: &ScoreTable,
    words: &[&str],
    later: &[(FeatureId, &str)],
    kind: Option<ModelKind>,
    buckets: &[u32],
) -> Result<Option<(SpamFilter, Vec<FeatureId>)>, ModelFileError> {
    let path = file.path();
    let (_, rows) = table.lookup(file, words)?;
    let ids = rows.ids();
    let mut tokens = Vec::with_capacity(ids.len() + later.len());
    for bytes in rows.tokens() {
        let Ok(token) = std::str::from_utf8(bytes) else {
            return Ok(None);
        };
        tokens.push(token);
    }
    tokens.extend(later.iter().map(|&(_, token)| token));
    let Ok(vocabulary) = Vocabulary::from_tokens(tokens.iter().map(|t| (t, [0, 0], 0)), [0, 0], 0)
    else {
        return Ok(None);
    };
    let fusion = head
        .fusion
        .clone()
        .filter(|_| kind.is_none_or(|k| k == ModelKind::Fusion));
    let needed = |k: ModelKind| match (&fusion, kind) {
        (_, None) => true,
        (Some(f), _) => f.models().contains(&k),
        (None, Some(kind)) => k == kind,
    };
    let columns = rows.columns();
    let mut models = Vec::new();
    for (i, &k) in head.kinds.iter().enumerate() {
        if !needed(k) {
            continue;
        }
        let entry = table
            .index()
            .models
            .get(i)
            .ok_or_else(|| wrong_model(path))?;
        if entry.kind != k {
            return Err(wrong_model(path));
        }
        let section = FIRST_MODEL_SECTION + i;
        // A linear model that sees the hashed features: its section read for the buckets'
        // weights alone (see `SectionParts`), where its settings allow.
        let streamed = if entry.has_hashed_weights() {
            SectionParts::read(file, section, k, buckets)?
        } else {
            None
        };
        let tokens = table.index().tokens;
        // Room for every word's weight: those the table has, those added since, new ones.
        let room = words.len();
        let model = match &streamed {
            // `SectionParts::read` found these settings to be `k`'s.
            Some(parts) => {
                let view: TrainedModelSection<'_, RealsHead> =
                    model_file::decode_payload(&parts.bytes, path)?;
                restricted_model(view, &parts.weights, entry, tokens, ids, room, buckets)
            }
            None => {
                let view: TrainedModelSection<'_> =
                    model_file::decode_prefix(file.section(section)?, path)?;
                if view.kind() != k {
                    return Err(wrong_model(path));
                }
                match view.weights() {
                    Some(own) => restricted_model(view, &own, entry, tokens, ids, room, buckets),
                    None => restricted_model(view, &[][..], entry, tokens, ids, room, buckets),
                }
            }
        };
        let Some((mut model, entry)) = model else {
            return Ok(None);
        };
        columns
            .restore(&mut model, &entry)
            .map_err(|reason| ModelFileError::invalid(path, reason))?;
        models.push(model);
    }
    let filter = SpamFilter {
        tokenizer: head.tokenizer.clone(),
        vocabulary,
        models,
        fusion,
        active: kind.unwrap_or(head.active),
        thresholds: head.thresholds,
        summary: head.summary.clone(),
        // Scoring never reads the record of learned messages.
        learned: LearnedMessages::default(),
        // Training's tokens are those below `trained_features`: as many of them as are here.
        trained_features: ids.partition_point(|&id| u64::from(id) < head.trained_features) as u64,
        max_model_bytes: head.max_model_bytes,
    };
    Ok(Some((filter, ids.to_vec())))
}

/// Model `view` (from its section, a linear model's weights left out or not) restricted as
/// [`TrainedModelSection::restricted`] makes it, the hashed weights of `buckets` from
/// `hashed` (a linear model's: its section's, or those read apart), and its score table entry
/// `entry` restricted to `ids`; `None` where that cannot be exact or the section does not fit
/// the table, which holds `tokens` tokens (the full load then answers, or says what is wrong).
fn restricted_model<W>(
    view: TrainedModelSection<'_, W>,
    hashed: &(impl Elements<f64> + ?Sized),
    entry: &ScoreModel,
    tokens: u64,
    ids: &[FeatureId],
    room: usize,
    buckets: &[u32],
) -> Option<(TrainedModel, ScoreModel)> {
    // How many tokens a Naive Bayes model counts: the score table's count where that holds
    // its counts (its section's arrays are then empty).
    let counted = view.count_width().map(|w| match entry.counts {
        Some(_) => usize::try_from(entry.counts_len).unwrap_or(usize::MAX),
        None => w,
    });
    // New tokens must be numbered after the counts in both filters: the counts cover exactly
    // the vocabulary (the score table says how many tokens it holds).
    if let Some(w) = counted
        && u64::try_from(w) != Ok(tokens)
    {
        return None;
    }
    // A section of hashed weights that does not fit the table's count of weights (more than
    // the hashed features, or fewer with vocabulary weights after them) is for the full load
    // to refuse: a restricted model holds only the places of its buckets, whatever the section
    // has.
    if counted.is_none() {
        let (own, front) = (hashed.len(), entry.config.input_width(0));
        let cut_short = own < front && entry.weights_len > own as u64;
        if front > 0 && (own > front || cut_short) {
            return None;
        }
    }
    let model = view.restricted(ids, counted.unwrap_or(0), room, buckets, hashed)?;
    Some((model, entry.restricted(ids)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::features::FeatureConfig;
    use crate::features::hashed::hashed_id;
    use crate::filter::layout::{SCORE_BLOCKS_SECTION, SCORE_INDEX_SECTION};
    use crate::label::Label;
    use crate::models::{
        BernoulliNbParams, LinearSvmParams, LogisticRegressionParams, LogisticSolver, ModelParams,
        MultinomialNbParams, NbScoring, NbVariant,
    };
    use crate::tokenize::Tokenizer;
    use crate::{LearnOutcome, TrainParams};
    use std::path::{Path, PathBuf};

    /// A model file of `params` started empty that learned two messages, saved.
    pub(crate) fn saved(dir: &Path, params: &TrainParams) -> PathBuf {
        let path = dir.join("m.spamsort");
        let mut filter = SpamFilter::empty(params).unwrap();
        filter
            .learn(b"Subject: cheap meds\n\nbuy cheap meds now", Label::Spam)
            .unwrap();
        filter
            .learn(b"Subject: lunch\n\nsee you at noon for lunch", Label::Ham)
            .unwrap();
        filter
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        path
    }

    /// Learns `raw` as `label` (`None`: unlearns it) through the journal.
    pub(crate) fn journal_learn(path: &Path, raw: &str, label: Option<Label>) {
        journal::learn(
            path,
            || {},
            |store| {
                let changed = match label {
                    Some(label) => store.learn_message(raw.as_bytes(), label)?,
                    None => match store.unlearn_message(raw.as_bytes())? {
                        Some(_) => LearnOutcome::Learned,
                        None => LearnOutcome::AlreadyLearned,
                    },
                } != LearnOutcome::AlreadyLearned;
                Ok(((), changed))
            },
        )
        .unwrap();
    }

    /// The sparse replay of the file at `path` for each message, for every model it holds
    /// (`None` if it was not sparse), each checked to explain the message as the full load.
    fn sparse_replays(path: &Path, messages: &[&str]) -> Vec<Option<SpamFilter>> {
        let loaded = SpamFilter::load(path).unwrap();
        let file = ModelFileReader::open(path).unwrap();
        let head = Head::read(&file).unwrap();
        let table = ScoreTable::open(&file, SCORE_INDEX_SECTION, SCORE_BLOCKS_SECTION).unwrap();
        let records = journal::records(&file).unwrap();
        assert!(!records.is_empty(), "the journal holds records");
        let tokenizer = Tokenizer::new(head.tokenizer.clone());
        let mut replays = Vec::new();
        for kind in ModelKind::WITH_FUSION
            .into_iter()
            .filter(|&k| loaded.has(k))
        {
            for raw in messages {
                let tokens = tokenizer.tokenize(raw.as_bytes()).tokens;
                let sparse =
                    replayed_for(&file, &head, &table, &records, kind, &tokens, &[]).unwrap();
                if let Some(sparse) = &sparse {
                    assert_eq!(
                        sparse.explain(raw.as_bytes(), Some(kind)).unwrap(),
                        loaded.explain(raw.as_bytes(), Some(kind)).unwrap(),
                        "{kind}: {raw}"
                    );
                }
                replays.push(sparse);
            }
        }
        replays
    }

    const NEW: &str = "Subject: zorblax frobnicate\n\nzorblax frobnicate quuxify zorblax";
    /// A spam of known tokens and one new one.
    const OFFER: &str = "Subject: offer\n\nfree offer, click now, cheap quux";
    /// A ham of known tokens.
    const NOTES: &str = "Subject: notes\n\nmeeting notes at noon";

    #[test]
    fn a_sparse_replay_of_new_tokens_and_a_repeat_explains_as_the_full_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = saved(dir.path(), &TrainParams::default());
        journal_learn(&path, OFFER, Some(Label::Spam));
        journal_learn(&path, NEW, Some(Label::Spam));
        journal_learn(&path, NOTES, Some(Label::Ham));
        journal_learn(&path, OFFER, Some(Label::Spam));
        let messages = [
            NEW,
            OFFER,
            "Subject: lunch\n\nnoon meds quuxify",
            "",
            "unseen words",
        ];
        let replays = sparse_replays(&path, &messages);
        assert_eq!(replays.len(), 5 * messages.len(), "four models and fusion");
        assert!(replays.iter().all(Option::is_some), "all sparse");
    }

    /// The default models, checked to have models that see the hashed features.
    pub(crate) fn on_hashed() -> TrainParams {
        let params = TrainParams::default();
        assert!(params.models.iter().any(ModelParams::sees_hashed));
        params
    }

    /// The default models but the SVM and logistic regression on words alone (tf-idf, the
    /// exact solvers), so that no model sees the hashed features.
    pub(crate) fn on_words() -> TrainParams {
        let models = TrainParams::default()
            .models
            .into_iter()
            .map(|p| match p {
                ModelParams::LinearSvm(p) => ModelParams::LinearSvm(LinearSvmParams {
                    features: FeatureConfig::TF_IDF_L2,
                    ..p
                }),
                ModelParams::LogisticRegression(p) => {
                    ModelParams::LogisticRegression(LogisticRegressionParams {
                        features: FeatureConfig::TF_IDF_L2,
                        solver: LogisticSolver::NewtonCg,
                        ..p
                    })
                }
                p => p,
            })
            .collect();
        TrainParams {
            models,
            ..TrainParams::default()
        }
    }

    /// A model file trained in batch with `params` on a few messages of each class.
    pub(crate) fn trained(dir: &Path, params: &TrainParams) -> PathBuf {
        let spam = [
            "cheap meds now",
            "buy cheap pills",
            "free offer, click",
            "win money now",
        ];
        let ham = [
            "lunch at noon",
            "meeting notes",
            "see you at lunch",
            "notes of the meeting",
        ];
        let labeled = |texts: [&'static str; 4], label| {
            texts.into_iter().flat_map(move |t| {
                (0..2).map(move |i| Ok((format!("Subject: {t} {i}\n\n{t}").into_bytes(), label)))
            })
        };
        let messages = labeled(spam, Label::Spam).chain(labeled(ham, Label::Ham));
        let mut filter = SpamFilter::train_stream(messages, params, || {}).unwrap();
        let path = dir.join("m.spamsort");
        filter
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        path
    }

    #[test]
    fn journal_patches_taken_in_explain_as_the_full_load() {
        journal_patches_explain_as_the_full_load(&on_words());
    }

    #[test]
    fn journal_patches_of_models_that_see_hashed_features_explain_as_the_full_load() {
        journal_patches_explain_as_the_full_load(&on_hashed());
    }

    #[test]
    fn records_of_models_that_see_hashed_features_without_patches_replay_as_the_full_load() {
        // As spamsort journaled them before their patches carried bucket weights.
        let dir = tempfile::tempdir().unwrap();
        let path = trained(dir.path(), &on_hashed());
        journal_learn(&path, NEW, Some(Label::Spam));
        journal_learn(&path, NOTES, Some(Label::Ham));
        journal::rewrite_patches(&path, |p| *p = None);
        let file = ModelFileReader::open(&path).unwrap();
        let heads = journal::heads(&file).unwrap();
        assert_eq!(heads.len(), 2);
        assert!(journal::patches(&heads).is_none(), "no patches");
        let replays = sparse_replays(&path, &[NEW, OFFER, "", "unseen words"]);
        assert!(replays.iter().all(Option::is_some), "all sparse");
        let loaded = SpamFilter::load(&path).unwrap();
        journal::tests::assert_scorers_explain_as(
            &path,
            &loaded,
            &[NEW, OFFER, NOTES, "", "unseen words"].map(str::as_bytes),
        );
    }

    #[test]
    fn journal_patches_of_textbook_naive_bayes_explain_as_the_full_load() {
        // The textbook Bernoulli model sums every absent word's term: what the histograms
        // of counts, carried from patch to patch, keep up to date.
        let params = TrainParams {
            models: vec![
                ModelParams::BernoulliNb(BernoulliNbParams {
                    scoring: NbScoring::TEXTBOOK,
                    ..BernoulliNbParams::default()
                }),
                ModelParams::MultinomialNb(MultinomialNbParams {
                    scoring: NbScoring::TEXTBOOK,
                    ..MultinomialNbParams::default()
                }),
            ],
            ..TrainParams::default()
        };
        journal_patches_explain_as_the_full_load(&params);
    }

    /// Learns through the journal into a file [`trained`] with `params` and checks that the
    /// records carry patches and that a scorer taking them in explains as the full load.
    fn journal_patches_explain_as_the_full_load(params: &TrainParams) {
        let dir = tempfile::tempdir().unwrap();
        let path = trained(dir.path(), params);
        journal_learn(&path, NEW, Some(Label::Spam));
        journal_learn(&path, OFFER, Some(Label::Spam));
        journal_learn(&path, NEW, Some(Label::Spam));
        journal_learn(&path, NOTES, Some(Label::Ham));
        // Tokens a record before added, known tokens and new ones.
        journal_learn(
            &path,
            "Subject: zorblax lunch\n\nquuxify noon blorp",
            Some(Label::Ham),
        );
        let file = ModelFileReader::open(&path).unwrap();
        let head = Head::read(&file).unwrap();
        let table = ScoreTable::open(&file, SCORE_INDEX_SECTION, SCORE_BLOCKS_SECTION).unwrap();
        let heads = journal::heads(&file).unwrap();
        let patches = journal::patches(&heads).expect("every record has a patch");
        assert_eq!(patches.len(), 4, "the repeat changed nothing");
        let loaded = SpamFilter::load(&path).unwrap();
        let tokenizer = Tokenizer::new(head.tokenizer.clone());
        let messages = [
            NEW,
            OFFER,
            "Subject: lunch\n\nnoon meds quuxify blorp",
            "",
            "unseen",
        ];
        let (mut dropped, mut kept) = (0, 0);
        for kind in ModelKind::WITH_FUSION
            .into_iter()
            .filter(|&k| loaded.has(k))
        {
            for raw in messages {
                let tokens = tokenizer.tokenize(raw.as_bytes()).tokens;
                let expected = loaded.explain(raw.as_bytes(), Some(kind)).unwrap();
                // The patches whole, and as a scorer of this message keeps them.
                let buckets = buckets(tokens.iter().filter_map(hashed_id));
                let tokens_before = table.index().tokens;
                let heads_kept =
                    journal::heads_for_message(&file, tokens_before, &buckets).unwrap();
                let patches_kept = journal::patches(&heads_kept).expect("patches");
                for (whole, restricted) in patches.iter().zip(&patches_kept) {
                    let (whole, restricted) = (whole.buckets().len(), restricted.buckets().len());
                    assert!(restricted <= whole.min(buckets.len()));
                    dropped += whole - restricted;
                    kept += restricted;
                }
                for patches in [&patches, &patches_kept] {
                    let (composed, _) = composed_for(
                        &file,
                        &head,
                        &table,
                        patches,
                        Some(kind),
                        &[&tokens],
                        &buckets,
                    )
                    .unwrap()
                    .expect("composed");
                    assert_eq!(
                        composed.explain(raw.as_bytes(), Some(kind)).unwrap(),
                        expected,
                        "{kind}: {raw}"
                    );
                }
            }
        }
        if params.models.iter().any(ModelParams::sees_hashed) {
            assert!(
                dropped > 0 && kept > 0,
                "{dropped} buckets dropped, {kept} kept"
            );
        }
        journal::tests::assert_scorers_explain_as(&path, &loaded, &messages.map(str::as_bytes));
    }

    /// A message none of whose tokens the file of [`saved`] has.
    const ALL_NEW: &str = "zorblax frobnicate quuxify zorblax";

    #[test]
    fn a_record_whose_tokens_are_all_new_replays_sparsely_with_hashed_features() {
        let dir = tempfile::tempdir().unwrap();
        let params = TrainParams::default();
        let path = saved(dir.path(), &params);
        let before = SpamFilter::load(&path).unwrap();
        let svm = before.model(ModelKind::LinearSvm).unwrap();
        assert!(
            svm.model.function().transform.config().hashed,
            "sees hashed features"
        );
        let tokens = Tokenizer::new(params.tokenizer.clone())
            .tokenize(ALL_NEW.as_bytes())
            .tokens;
        let known: Vec<&str> = tokens
            .iter()
            .filter(|t| before.vocabulary().id(t).is_some())
            .collect();
        assert!(known.is_empty(), "every token new: {known:?}");
        journal_learn(&path, ALL_NEW, Some(Label::Ham));
        let replays = sparse_replays(&path, &[ALL_NEW, "Subject: zorblax\n\nmeds", NEW]);
        assert!(replays.iter().all(Option::is_some), "all sparse");
    }

    #[test]
    fn complement_nb_is_replayed_whole_and_the_others_sparsely() {
        let dir = tempfile::tempdir().unwrap();
        let complement = ModelParams::MultinomialNb(MultinomialNbParams {
            variant: NbVariant::Complement,
            ..MultinomialNbParams::default()
        });
        let params = TrainParams {
            models: vec![
                complement,
                ModelParams::default_for(ModelKind::LinearSvm),
                ModelParams::default_for(ModelKind::Fusion),
            ],
            ..TrainParams::default()
        };
        let path = saved(dir.path(), &params);
        journal_learn(&path, NEW, Some(Label::Spam));
        // Multinomial (complement), linear-svm, fusion (which stacks the complement model).
        let replays = sparse_replays(&path, &[NEW]);
        let sparse: Vec<bool> = replays.iter().map(Option::is_some).collect();
        assert_eq!(sparse, [false, true, false]);
        // The scorer of one message falls back to the whole model and answers the same.
        let loaded = SpamFilter::load(&path).unwrap();
        for kind in [ModelKind::MultinomialNb, ModelKind::Fusion] {
            let file = crate::filter::scorer::ScorerFile::open(&path, Some(kind)).unwrap();
            let scorer = file.scorer().unwrap();
            assert_eq!(
                scorer.explain(NEW.as_bytes()).unwrap(),
                loaded.explain(NEW.as_bytes(), Some(kind)).unwrap()
            );
        }
    }
}
