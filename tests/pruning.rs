//! Bounded growth: `spamsort prune` drops what its rule says, a save past the model file's size
//! limit prunes by itself and keeps the file under it, pruning leaves the scores of messages
//! whose tokens were all kept as they were, and `info` shows what the file holds.

use crate::util::{TestDir, copy_of_trained_model, message, sample_files, spamsort};
use spamsort::features::hashed::HASHED_BUCKETS;
use spamsort::models::ModelKind;
use spamsort::{Label, PruneRule, SpamFilter, Tokens, TrainParams};
use std::path::Path;

fn tokens(s: &str) -> Tokens {
    s.split_whitespace().collect()
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn prune_rule_drops_only_tokens_seen_too_rarely_and_not_lately() {
    let mut f = SpamFilter::empty(&TrainParams::default()).unwrap();
    // Messages 1..=5: "old" once (message 1), "common" in all, "recent" once (message 5).
    f.learn_tokens(&tokens("old common twice"), Label::Spam)
        .unwrap();
    f.learn_tokens(&tokens("common twice"), Label::Ham).unwrap();
    f.learn_tokens(&tokens("common a"), Label::Ham).unwrap();
    f.learn_tokens(&tokens("common b"), Label::Spam).unwrap();
    f.learn_tokens(&tokens("common recent"), Label::Ham)
        .unwrap();
    let out = f.prune(PruneRule {
        min_count: 2,
        unseen_for: 2,
    });
    let v = f.vocabulary();
    let left: Vec<&str> = (0..v.len() as u32).map(|id| v.token(id)).collect();
    // "a" (message 3) and "old" (message 1) are once-seen and older than the last 2 messages;
    // "twice" is old but in 2 messages; "b" and "recent" are in the last 2.
    assert_eq!(left, ["common", "twice", "b", "recent"]);
    assert_eq!((out.removed, out.kept), (2, 4));
    // Counts follow their tokens; the filter still learns and classifies.
    let common = v.id("common").unwrap();
    assert_eq!(
        (v.df(common, Label::Spam), v.df(common, Label::Ham)),
        (2, 3)
    );
    assert_eq!(v.last_seen(v.id("recent").unwrap()), 5);
    f.learn_tokens(&tokens("old again"), Label::Spam).unwrap();
    assert_eq!(
        f.vocabulary().id("old"),
        Some(4),
        "a pruned token comes back as new"
    );
    // "a", pruned from ham message 3, comes back in a spam: relabeling message 3 forgets it
    // from the ham counts it has (none of "a"), so no model refuses.
    f.learn_tokens(&tokens("a later"), Label::Spam).unwrap();
    let relabeled = f.learn_tokens(&tokens("common a"), Label::Spam).unwrap();
    assert_eq!(relabeled, spamsort::LearnOutcome::Relabeled);
    assert!(
        f.classify_tokens(&tokens("old b"), ModelKind::MultinomialNb)
            .is_some()
    );
}

#[test]
fn prune_command_with_defaults_keeps_a_trained_model_and_reports() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = SpamFilter::load(&model).unwrap().vocabulary().len();
    spamsort()
        .args(["prune", "--model"])
        .arg(&model)
        .assert()
        .success()
        .stderr(predicates::str::contains("pruned 0 token(s)"));
    assert_eq!(SpamFilter::load(&model).unwrap().vocabulary().len(), before);
    // Every once-seen token goes with --unseen-for 0; the trained ones were in 2 or more.
    spamsort()
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg("-")
        .write_stdin(message("zqxuniquea zqxuniqueb", "zqxuniquec"))
        .assert()
        .success();
    let grown = SpamFilter::load(&model).unwrap().vocabulary().len();
    assert!(grown >= before + 3);
    spamsort()
        .args(["prune", "--unseen-for", "0", "--model"])
        .arg(&model)
        .assert()
        .success();
    let v = SpamFilter::load(&model).unwrap().vocabulary().clone();
    assert_eq!(
        v.len(),
        before,
        "only the learned message's new tokens went"
    );
    assert_eq!(v.id("zqxuniquea"), None);
}

/// Regression (auditC repro-6): `prune --model INBOX`, a mailbox named by mistake, was refused
/// as no model file only after its update lock was made beside it: `INBOX.lock`, the dot-lock
/// mail programs (and spamsort's own mbox reader) wait on, was left there.
#[test]
fn prune_of_a_file_that_is_no_model_leaves_no_lock_beside_it() {
    let t = TestDir::new();
    let mail = b"From a@b Mon Jan  1 00:00:00 2024\nSubject: hi\n\nhello\n";
    let inbox = t.write("INBOX", mail);
    spamsort()
        .args(["prune", "--model"])
        .arg(&inbox)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("not a spamsort model file"));
    assert_eq!(std::fs::read(&inbox).unwrap(), mail);
    assert!(
        !t.path().join("INBOX.lock").exists(),
        "a lock left beside it"
    );
}

#[test]
fn pruning_keeps_the_file_under_its_limit() {
    // The smallest limit: about 3 MiB for the vocabulary and what grows with it, above the
    // fixed-size weights of the hashed features (two models of 4-byte weights), which pruning
    // cannot shrink.
    const LIMIT: u64 = spamsort::MIN_MAX_MODEL_BYTES;
    const WORDS: usize = 1500;
    assert!(LIMIT > 2 * 4 * HASHED_BUCKETS as u64);
    let t = TestDir::new();
    let model = t.path().join("model.spamsort");
    let learn = |label: &str, files: &[std::path::PathBuf]| {
        spamsort()
            .args(["learn", label, "--model"])
            .arg(&model)
            .args(files)
            .assert()
            .success();
    };
    let write = |i: usize| {
        let words: Vec<String> = (0..WORDS).map(|w| format!("w{i}x{w}")).collect();
        t.write(
            &format!("m{i}.eml"),
            &message(&format!("unique {i}"), &words.join(" ")),
        )
    };
    learn("--ham", &[write(0)]);
    spamsort()
        .args(["prune", "--max-model-bytes", &LIMIT.to_string(), "--model"])
        .arg(&model)
        .assert()
        .success();
    // 8 batches of 10 messages with 1,500 new tokens each: about 120,000 tokens, several
    // times what fits in the limit.
    let mut tokens_learned = 0;
    for batch in 0..8 {
        let files: Vec<_> = (1..=10).map(|i| write(batch * 10 + i)).collect();
        learn(if batch % 2 == 0 { "--spam" } else { "--ham" }, &files);
        tokens_learned += 10 * WORDS;
        let size = file_size(&model);
        assert!(size <= LIMIT, "batch {batch}: {size} bytes");
    }
    // The last batches may still be in the file's journal, whose tokens the next save (a
    // compaction) prunes with the rest: the state as saved is what the limit bounds.
    let mut f = SpamFilter::load(&model).unwrap();
    f.save(&spamsort::model_file::lock_for_update(&model).unwrap())
        .unwrap();
    assert!(file_size(&model) <= LIMIT);
    assert!(
        f.vocabulary().len() < tokens_learned / 2,
        "pruned: {} tokens",
        f.vocabulary().len()
    );
    assert_eq!(f.summary().messages, [41, 40], "no message count is pruned");
    // The newest batch's tokens are the most recently seen: kept.
    assert!(f.vocabulary().id("w80x0").is_some());
    assert_eq!(f.max_model_bytes(), LIMIT);
}

#[test]
fn pruning_leaves_linear_scores_of_kept_messages_unchanged_and_nb_scores_as_the_counts_say() {
    let t = TestDir::new();
    let mut f = SpamFilter::load(&copy_of_trained_model(&t)).unwrap();
    let files = sample_files();
    // Learn a few messages again under a twist, so they bring once-seen tokens.
    for (i, p) in files.iter().take(6).enumerate() {
        let mut raw = std::fs::read(p).unwrap();
        raw.extend_from_slice(format!("\nzqxfresh{i}\n").as_bytes());
        f.learn(&raw, if i % 2 == 0 { Label::Spam } else { Label::Ham })
            .unwrap();
    }
    let before = f.clone();
    let out = f.prune(PruneRule {
        min_count: 2,
        unseen_for: 0,
    });
    assert!(out.removed >= 6, "{out:?}");
    let mut compared = 0;
    for p in &files[6..] {
        let raw = std::fs::read(p).unwrap();
        let known = |g: &SpamFilter| {
            let t = spamsort::Tokenizer::new(g.tokenizer_config().clone()).tokenize(&raw);
            t.tokens
                .iter()
                .filter(|t| g.vocabulary().id(t).is_some())
                .count()
        };
        if known(&before) != known(&f) {
            continue;
        }
        compared += 1;
        for kind in [ModelKind::LinearSvm, ModelKind::LogisticRegression] {
            assert_eq!(
                before.classify_with(&raw, kind).unwrap().decision,
                f.classify_with(&raw, kind).unwrap().decision,
                "{kind} {}",
                p.display()
            );
        }
    }
    assert!(compared > 100, "{compared} messages had every token kept");
    // The NB models after pruning are the models of the pruned counts (see the unit test
    // `pruned_nb_models_equal_models_fitted_on_the_kept_counts_and_linear_scores_stay`);
    // here: a save and load changes no score.
    let lock = spamsort::model_file::lock_for_update(&t.path().join("pruned.spamsort")).unwrap();
    f.save(&lock).unwrap();
    let loaded = SpamFilter::load(&t.path().join("pruned.spamsort")).unwrap();
    for p in files.iter().take(20) {
        let raw = std::fs::read(p).unwrap();
        for kind in ModelKind::ALL {
            assert_eq!(
                loaded.classify_with(&raw, kind),
                f.classify_with(&raw, kind),
                "{kind}"
            );
        }
    }
}

#[test]
fn info_shows_messages_tokens_size_times_and_version() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let info = || {
        let out = spamsort()
            .args(["info", "--model"])
            .arg(&model)
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let text = info();
    let size = file_size(&model);
    for needle in [
        format!("format version:  {}", spamsort::model_file::FORMAT_VERSION),
        format!("file size:       {size} bytes (pruned when over 33554432 bytes)"),
        "messages:        104 spam, 100 ham".into(),
        "trained at:      20".into(),
        "last learned at: never".into(),
        "vocabulary:      ".into(),
    ] {
        assert!(text.contains(&needle), "{needle} in {text}");
    }
    spamsort()
        .args(["learn", "--ham", "--model"])
        .arg(&model)
        .arg("-")
        .write_stdin(message("a new one", "nothing like the others zqxinfo"))
        .assert()
        .success();
    let text = info();
    assert!(
        text.contains("messages:        104 spam, 101 ham"),
        "{text}"
    );
    assert!(text.contains("last learned at: 20"), "{text}");
}

/// Regression: `spamsort prune --max-model-bytes 0` was accepted and stored in the model
/// file, and from then on every save (`learn`, `train`, spamd TELL) dropped the whole
/// vocabulary without a word. A limit below the floor is now refused before anything is read,
/// naming the smallest accepted, and the model is left as it was.
#[test]
fn a_size_limit_that_would_empty_the_vocabulary_at_every_save_is_refused() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let before = std::fs::read(&model).unwrap();
    for bytes in ["0", "1", &(spamsort::MIN_MAX_MODEL_BYTES - 1).to_string()] {
        spamsort()
            .args(["prune", "--max-model-bytes", bytes, "--model"])
            .arg(&model)
            .assert()
            .failure()
            .stderr(predicates::str::contains("at least 4194304 bytes"));
        assert_eq!(std::fs::read(&model).unwrap(), before, "{bytes}: unchanged");
    }
    let mut f = SpamFilter::empty(&TrainParams::default()).unwrap();
    let err = f.set_max_model_bytes(1).unwrap_err().to_string();
    assert!(err.contains("at least 4194304 bytes"), "{err}");
    assert_eq!(f.max_model_bytes(), spamsort::DEFAULT_MAX_MODEL_BYTES);
    f.set_max_model_bytes(spamsort::MIN_MAX_MODEL_BYTES)
        .unwrap();
    // The floor itself is accepted, and the vocabulary kept.
    let tokens_before = SpamFilter::load(&model).unwrap().vocabulary().len();
    spamsort()
        .args(["prune", "--max-model-bytes", "4194304", "--model"])
        .arg(&model)
        .assert()
        .success();
    let pruned = SpamFilter::load(&model).unwrap();
    assert_eq!(pruned.max_model_bytes(), spamsort::MIN_MAX_MODEL_BYTES);
    assert_eq!(
        pruned.vocabulary().len(),
        tokens_before,
        "the sample model fits"
    );
}

/// Regression: unlearning (or relabelling) a message learned before a prune took its counts
/// from a token the prune had dropped and a newer message had brought back, so the newer
/// message's counts were lost. Each remembered message now knows which tokens can hold its
/// counts, through later prunes too.
#[test]
fn unlearning_a_message_learned_before_a_prune_leaves_the_counts_of_newer_messages() {
    let mut f = SpamFilter::empty(&TrainParams::default()).unwrap();
    let a = message("first note", "zqxjkvword alphaunique");
    let b = message("second note", "zqxjkvword betaunique");
    let b2 = message("third note", "zqxjkvword gammaunique");
    let late = message("fourth note", "lateunique");
    let spam_count = |f: &SpamFilter| {
        let v = f.vocabulary();
        let id = v.id("zqxjkvword")?;
        let Some(spamsort::models::AnyModel::BernoulliNb(nb)) =
            f.model(ModelKind::BernoulliNb).map(|m| &m.model)
        else {
            panic!("no Bernoulli model");
        };
        let (_, _, df_spam) = nb.counts();
        Some((v.df(id, Label::Spam), df_spam[id as usize]))
    };
    let once_seen = PruneRule {
        min_count: 2,
        unseen_for: 0,
    };
    f.learn(&a, Label::Spam).unwrap();
    f.prune(once_seen);
    assert_eq!(
        spam_count(&f),
        None,
        "the prune dropped the token of one message"
    );
    f.learn(&b, Label::Spam).unwrap();
    f.learn(&b2, Label::Spam).unwrap();
    f.learn(&late, Label::Ham).unwrap();
    // A second prune drops the tokens seen once since (renumbering the rest) and keeps the
    // token the two newer messages share.
    assert!(f.prune(once_seen).removed > 0);
    assert_eq!(spam_count(&f), Some((2, 2.0)));
    assert_eq!(f.unlearn(&a).unwrap(), Some(Label::Spam));
    assert_eq!(
        spam_count(&f),
        Some((2, 2.0)),
        "A's counts were pruned away"
    );
    // Relabelling a message learned after the first prune takes its counts from the token.
    f.learn(&b, Label::Ham).unwrap();
    assert_eq!(spam_count(&f), Some((1, 1.0)));
    // The record's marks survive a save and load.
    let t = TestDir::new();
    let path = t.path().join("m.spamsort");
    f.save(&spamsort::model_file::lock_for_update(&path).unwrap())
        .unwrap();
    let mut loaded = SpamFilter::load(&path).unwrap();
    assert_eq!(loaded.unlearn(&b2).unwrap(), Some(Label::Spam));
    assert_eq!(spam_count(&loaded), Some((0, 0.0)));
}
