//! Continuous learning through the CLI: a model file that starts from nothing, grows with new
//! tokens, learns each message once, relabels, unlearns without a label, and agrees exactly
//! with `eval --online` (which is the same library code run over an index).

use crate::util::{TestDir, copy_of_trained_model, spamsort, stdout_of};
use spamsort::eval::{TokenizedMail, online};
use spamsort::features::hashed::hashed_id;
use spamsort::models::{AnyModel, ModelKind, ModelParams};
use spamsort::{Label, LabeledCorpus, SpamFilter, Tokenizer, TokenizerConfig};
use std::path::{Path, PathBuf};

/// `classify --format tsv` of one message file with one model: (verdict, probability,
/// decision) as printed.
fn classify(model: &Path, message: &Path, kind: ModelKind) -> (String, String, String) {
    let out = spamsort()
        .args([
            "classify",
            "--format",
            "tsv",
            "--classifier",
            kind.name(),
            "--model",
        ])
        .arg(model)
        .arg(message)
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let f: Vec<&str> = line.trim_end().split('\t').collect();
    assert_eq!(
        f.len(),
        5,
        "{line:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (f[1].to_string(), f[2].to_string(), f[4].to_string())
}

fn learn(model: &Path, label: &str, message: &Path) -> String {
    let out = spamsort()
        .args(["learn", label, "--model"])
        .arg(model)
        .arg(message)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

/// The decision value of `message` under `kind` through the CLI, parsed: unlike P(spam), it
/// does not round to 0 or 1.
fn decision(model: &Path, message: &Path, kind: ModelKind) -> f64 {
    classify(model, message, kind).2.parse().unwrap()
}

#[test]
fn classify_then_learn_from_no_model_file_equals_eval_online_for_every_model_and_fusion() {
    let t = TestDir::new();
    // 40 sample messages, spam and ham in turn, fixed by a TREC index.
    let (spam, ham) = (
        crate::util::sample_class_files("spam"),
        crate::util::sample_class_files("ham"),
    );
    let order: Vec<(Label, PathBuf)> = spam
        .iter()
        .zip(&ham)
        .take(20)
        .flat_map(|(s, h)| [(Label::Spam, s.clone()), (Label::Ham, h.clone())])
        .collect();
    let index: String = order
        .iter()
        .map(|(l, p)| format!("{l} {}\n", p.display()))
        .collect();
    t.write("index", index.as_bytes());
    // What `eval --online INDEX` computes for each message, in the index's order.
    let corpus = LabeledCorpus::read_trec(&t.path().join("index"), |e| panic!("{e}")).unwrap();
    let mail = TokenizedMail::of(&corpus, &TokenizerConfig::default());
    let params: Vec<ModelParams> = ModelKind::WITH_FUSION
        .iter()
        .map(|&k| ModelParams::default_for(k))
        .collect();
    let eval = online::run(&params, &TokenizerConfig::default(), &mail).unwrap();
    // The same walk through the CLI, from no model file.
    let model = t.path().join("new/model.spamsort");
    for (i, (label, message)) in order.iter().enumerate() {
        for r in &eval {
            if i == 0 {
                // No file yet: classify is an error; eval's filter has learned nothing.
                spamsort()
                    .args(["classify", "--model"])
                    .arg(&model)
                    .arg(message)
                    .assert()
                    .code(3);
                assert_eq!((r.decisions[0], r.p_spam[0]), (0.0, 0.5), "{}", r.model);
                continue;
            }
            let (verdict, p, decision) = classify(&model, message, r.model);
            assert_eq!(
                (p, decision),
                (
                    format!("{:.6}", r.p_spam[i]),
                    format!("{:.6}", r.decisions[i])
                ),
                "message {i} ({}), {}",
                message.display(),
                r.model
            );
            // Only spam learned before the second message: unsure.
            if i == 1 {
                assert_eq!(verdict, "unsure", "{}", r.model);
            }
        }
        learn(&model, &format!("--{label}"), message);
    }
    let filter = SpamFilter::load(&model).unwrap();
    assert_eq!(filter.summary().messages, [20, 20]);
    assert_eq!(filter.learned().len(), 40);
}

#[test]
fn learn_creates_a_missing_model_and_classify_is_unsure_with_a_note_until_both_classes() {
    let t = TestDir::new();
    let model = t.path().join("model.spamsort");
    let message = t.write("m.eml", b"Subject: cheap pills\n\nbuy cheap pills now\n");
    let stderr = learn(&model, "--spam", &message);
    assert!(stderr.contains("no model file yet"), "{stderr}");
    assert!(model.exists());
    spamsort()
        .args(["classify", "--model"])
        .arg(&model)
        .arg(&message)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("has learned no ham yet"));
    // The pipe filter answers too and passes the message through.
    let out = spamsort()
        .args(["filter", "--model"])
        .arg(&model)
        .write_stdin(std::fs::read(&message).unwrap())
        .assert()
        .success();
    assert!(
        out.get_output()
            .stdout
            .ends_with(b"Subject: cheap pills\n\nbuy cheap pills now\n")
    );
}

/// A word the sample model was not trained on.
const NEW_WORD: &str = "zorblaxian";

#[test]
fn a_token_first_seen_at_learn_time_moves_the_score_and_shows_in_explain() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let probe = t.write(
        "probe.eml",
        format!("Subject: hello\n\n{NEW_WORD} {NEW_WORD} offer\n").as_bytes(),
    );
    let before = SpamFilter::load(&model).unwrap();
    assert_eq!(before.vocabulary().id(NEW_WORD), None);
    let scores: Vec<f64> = ModelKind::ALL
        .iter()
        .map(|&k| decision(&model, &probe, k))
        .collect();
    let teach = t.write(
        "teach.eml",
        format!("Subject: {NEW_WORD}\n\n{NEW_WORD} deals for you\n").as_bytes(),
    );
    learn(&model, "--spam", &teach);
    let after = SpamFilter::load(&model).unwrap();
    assert!(after.vocabulary().id(NEW_WORD).is_some());
    for (&kind, before) in ModelKind::ALL.iter().zip(&scores) {
        let now = decision(&model, &probe, kind);
        assert!(now > *before, "{kind}: {before} -> {now}");
        let out = spamsort()
            // Every token: logistic regression's hashed byte 4-grams outnumber the words.
            .args([
                "explain",
                "--top",
                "100000",
                "--classifier",
                kind.name(),
                "--model",
            ])
            .arg(&model)
            .arg(&probe)
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(text.contains(NEW_WORD), "{kind}: {text}");
    }
}

/// The Naive Bayes counts of a model: per class messages, then per-feature counts.
fn nb_counts(filter: &SpamFilter, kind: ModelKind) -> ([f64; 2], Vec<f64>, Vec<f64>) {
    match &filter.model(kind).unwrap().model {
        AnyModel::BernoulliNb(m) => {
            let (c, h, s) = m.counts();
            (c, h.to_vec(), s.to_vec())
        }
        AnyModel::MultinomialNb(m) => {
            let (c, h, s) = m.counts();
            (c, h.to_vec(), s.to_vec())
        }
        _ => unreachable!("not a Naive Bayes model"),
    }
}

/// Asserts that both Naive Bayes models of `after` hold the counts of `before`, exactly: a
/// message learned and unlearned in between leaves only its new tokens known, with count 0.
pub fn assert_same_nb_counts(before: &SpamFilter, after: &SpamFilter) {
    for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
        let (c0, h0, s0) = nb_counts(before, kind);
        let (c1, h1, s1) = nb_counts(after, kind);
        assert_eq!(c1, c0, "{kind}");
        // The vocabulary keeps the message's new tokens, with count 0.
        assert_eq!(h1[..h0.len()], h0[..], "{kind}");
        assert_eq!(s1[..s0.len()], s0[..], "{kind}");
        assert!(
            h1[h0.len()..]
                .iter()
                .chain(&s1[s0.len()..])
                .all(|&c| c == 0.0)
        );
        assert!(h1.len() > h0.len(), "{kind}: the new token stays known");
    }
}

#[test]
fn learning_twice_changes_nothing_and_unlearn_without_a_label_restores_the_counts_exactly() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let message = t.write(
        "new.eml",
        format!("Subject: quarterly synergy webinar\n\nJoin our {NEW_WORD} webinar\n").as_bytes(),
    );
    let before = SpamFilter::load(&model).unwrap();
    let scores: Vec<f64> = ModelKind::ALL
        .iter()
        .map(|&k| decision(&model, &message, k))
        .collect();
    learn(&model, "--spam", &message);
    let once = std::fs::read(&model).unwrap();
    let learned: Vec<f64> = ModelKind::ALL
        .iter()
        .map(|&k| decision(&model, &message, k))
        .collect();
    for ((kind, b), a) in ModelKind::ALL.iter().zip(&scores).zip(&learned) {
        assert!(a > b, "{kind}: {b} -> {a}");
    }
    // Again, and a copy that went through `spamsort filter` (with X-Spam fields): no change.
    let stderr = learn(&model, "--spam", &message);
    assert!(
        stderr.contains("learned 0 message(s) as spam, 1 already learned"),
        "{stderr}"
    );
    let filtered = stdout_of(
        spamsort()
            .args(["filter", "--model"])
            .arg(&model)
            .write_stdin(std::fs::read(&message).unwrap()),
    );
    assert!(filtered.starts_with(b"X-Spam"));
    let copy = t.write("filtered.eml", &filtered);
    learn(&model, "--spam", &copy);
    assert_eq!(
        std::fs::read(&model).unwrap(),
        once,
        "learning twice changed the model"
    );
    // Forgotten without a label.
    let stderr = learn(&model, "--unlearn", &message);
    assert!(stderr.contains("unlearned 1 message(s)"), "{stderr}");
    let after = SpamFilter::load(&model).unwrap();
    assert_eq!(after.summary().messages, before.summary().messages);
    assert_same_nb_counts(&before, &after);
    // The SVM and logistic regression take the opposite step: the score moves back.
    for (i, kind) in ModelKind::ALL.iter().enumerate().skip(2) {
        let now = decision(&model, &message, *kind);
        assert!(now < learned[i], "{kind}: {} -> {now}", learned[i]);
    }
    // Not learned any more: a second unlearn changes nothing.
    let stderr = learn(&model, "--unlearn", &message);
    assert!(
        stderr.contains("unlearned 0 message(s), 1 not learned before"),
        "{stderr}"
    );
}

#[test]
fn relabeling_a_message_moves_it_to_the_other_class() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let message = t.write(
        "new.eml",
        format!("Subject: lunch\n\nlunch on friday at noon, {NEW_WORD}\n").as_bytes(),
    );
    let before = SpamFilter::load(&model).unwrap().summary().messages;
    learn(&model, "--spam", &message);
    let as_spam: Vec<f64> = ModelKind::ALL
        .iter()
        .map(|&k| decision(&model, &message, k))
        .collect();
    learn(&model, "--ham", &message);
    let after = SpamFilter::load(&model).unwrap();
    assert_eq!(after.summary().messages, [before[0] + 1, before[1]]);
    for (&kind, spam) in ModelKind::ALL.iter().zip(&as_spam) {
        let now = decision(&model, &message, kind);
        assert!(now < *spam, "{kind}: {spam} -> {now}");
    }
    if let AnyModel::MultinomialNb(m) = &after.model(ModelKind::MultinomialNb).unwrap().model {
        let id = after.vocabulary().id(NEW_WORD).unwrap() as usize;
        let (_, ham, spam) = m.counts();
        assert_eq!((ham.get(id), spam.get(id)), (Some(&1.0), Some(&0.0)));
    }
}

#[test]
fn relabeling_a_training_message_leaves_tokens_it_was_not_trained_on_alone() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let ham_path = crate::util::sample_class_files("ham").pop().unwrap();
    let ham = std::fs::read(&ham_path).unwrap();
    let trained = SpamFilter::load(&model).unwrap();
    // Tokens of this training ham too rare to be in the trained vocabulary.
    let tokens = Tokenizer::new(TokenizerConfig::default())
        .tokenize(&ham)
        .tokens;
    let rare: Vec<&str> = tokens
        .iter()
        .filter(|t| trained.vocabulary().id(t).is_none() && hashed_id(t).is_none())
        .collect();
    assert!(!rare.is_empty());
    // A copy with one more header field (after its mbox `From ` line) is another message:
    // learning it brings the rare tokens in.
    let line = ham.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut copy = ham[..line].to_vec();
    copy.extend_from_slice(b"Subject-Extra: one more field\n");
    copy.extend_from_slice(&ham[line..]);
    let copy = t.write("copy.eml", &copy);
    let stderr = learn(&model, "--ham", &copy);
    assert!(stderr.contains("learned 1 message(s)"), "{stderr}");
    // The training ham relabeled: unlearned from the features it was trained on only.
    learn(&model, "--spam", &ham_path);
    let after = SpamFilter::load(&model).unwrap();
    for token in rare {
        let id = after.vocabulary().id(token).unwrap();
        assert_eq!(after.vocabulary().df(id, Label::Ham), 1, "{token}");
        assert_eq!(after.vocabulary().df(id, Label::Spam), 1, "{token}");
        let (_, ham_counts, _) = nb_counts(&after, ModelKind::BernoulliNb);
        assert_eq!(ham_counts[id as usize], 1.0, "{token}");
    }
}

#[test]
fn a_model_learned_from_nothing_explains_byte_4grams_by_bucket_and_a_trained_one_sees_fewer() {
    let mut filter = SpamFilter::empty(&spamsort::TrainParams::default()).unwrap();
    assert_eq!(filter.tokenizer_config().byte_ngrams, 3072);
    assert_eq!(filter.active(), ModelKind::Fusion);
    let (spam, ham) = (
        crate::util::sample_class_files("spam"),
        crate::util::sample_class_files("ham"),
    );
    for (s, h) in spam.iter().zip(&ham).take(3) {
        filter
            .learn(&std::fs::read(s).unwrap(), Label::Spam)
            .unwrap();
        filter
            .learn(&std::fs::read(h).unwrap(), Label::Ham)
            .unwrap();
    }
    // Fusion (active) explains by model: logistic regression names the buckets.
    let explained = filter
        .explain(
            &std::fs::read(&spam[0]).unwrap(),
            Some(ModelKind::LogisticRegression),
        )
        .unwrap();
    let hashed: Vec<&String> = explained
        .contributions
        .iter()
        .map(|(t, _)| t)
        .filter(|t| hashed_id(t).is_some())
        .collect();
    assert!(!hashed.is_empty(), "{:?}", &explained.contributions[..5]);
    // The Naive Bayes models never see them.
    let nb = filter
        .explain(
            &std::fs::read(&spam[0]).unwrap(),
            Some(ModelKind::MultinomialNb),
        )
        .unwrap();
    assert!(nb.contributions.iter().all(|(t, _)| hashed_id(t).is_none()));
    // Training tokenizes them for its SVM and logistic regression, of fewer leading bytes.
    let trained = SpamFilter::load(&copy_of_trained_model(&TestDir::new())).unwrap();
    assert_eq!(
        trained.tokenizer_config().byte_ngrams,
        spamsort::models::BATCH_BYTE_NGRAMS
    );
}

/// Regression (auditE repro-1): `learn --spam INDEX` of a TREC index that lists ham learned
/// every message it lists as spam, its labels ignored, where `train` refuses such an index.
/// Now refused before anything is learned; an index of the flag's own class is learned, and
/// `--unlearn`, which needs no label, takes any index.
#[test]
fn learn_refuses_a_trec_index_that_lists_the_other_class() {
    let t = TestDir::new();
    let (mixed, spam) = crate::util::mixed_trec_index(&t);
    let model = t.path().join("m.spamsort");
    for class in ["--spam", "--ham"] {
        spamsort()
            .args(["learn", class, "--model"])
            .arg(&model)
            .arg(&mixed)
            .assert()
            .failure()
            .stderr(predicates::str::contains("the TREC index lists"));
        assert!(!model.exists(), "{class}: nothing may be learned");
    }
    let spam_only = t.write(
        "spam.index",
        format!("spam {}\n", spam.display()).as_bytes(),
    );
    assert!(learn(&model, "--spam", &spam_only).contains("learned 1 message(s) as spam"));
    let counts = SpamFilter::load(&model).unwrap().summary().messages;
    assert_eq!(counts[Label::Spam.index()], 1);
    assert_eq!(counts[Label::Ham.index()], 0);
    let out = spamsort()
        .args(["learn", "--unlearn", "--model"])
        .arg(&model)
        .arg(&mixed)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("unlearned 1 message(s), 1 not learned before"),
        "{stderr}"
    );
}
