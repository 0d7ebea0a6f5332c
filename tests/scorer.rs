//! The pipe filter's scorer, which reads its values straight from the model file, must agree exactly
//! with the fully loaded filter for every model and their fusion: same verdicts, scores and
//! explanations.

use crate::util::{sample_files, trained_model};
use spamsort::SpamFilter;
use spamsort::filter::scorer::ScorerFile;
use spamsort::models::ModelKind;

#[test]
fn scorer_agrees_with_the_loaded_filter_for_every_model_and_fusion() {
    let filter = SpamFilter::load(trained_model()).unwrap();
    let messages: Vec<Vec<u8>> = sample_files()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .chain([b"".to_vec(), b"Subject: only a header".to_vec()])
        .collect();
    for kind in ModelKind::WITH_FUSION {
        let file = ScorerFile::open(trained_model(), Some(kind)).unwrap();
        // Blocks read afresh for every message, and kept from one message to the next.
        for scorer in [
            file.scorer().unwrap(),
            file.scorer().unwrap().for_many_messages(),
        ] {
            assert_eq!(scorer.model(), kind);
            assert_eq!(scorer.thresholds(), filter.thresholds());
            for m in &messages {
                assert_eq!(
                    scorer.classify(m).unwrap(),
                    filter.classify_with(m, kind).unwrap()
                );
                assert_eq!(
                    scorer.explain(m).unwrap(),
                    filter.explain(m, Some(kind)).unwrap()
                );
            }
        }
    }
    let active = ScorerFile::open(trained_model(), None).unwrap();
    assert_eq!(active.scorer().unwrap().model(), filter.active());
}

#[test]
fn a_file_without_the_requested_model_is_refused() {
    let t = crate::util::TestDir::new();
    let path = t.path().join("svm-only.spamsort");
    crate::util::with_sample(crate::util::spamsort().arg("train"))
        .args(["--models", "linear-svm", "--model"])
        .arg(&path)
        .assert()
        .success();
    let err = ScorerFile::open(&path, Some(ModelKind::BernoulliNb))
        .err()
        .unwrap();
    assert!(err.to_string().contains("no bernoulli-nb model"), "{err}");
}

#[test]
fn scorer_agrees_exactly_with_the_filter_that_learned_new_tokens_before_saving() {
    let t = crate::util::TestDir::new();
    let path = crate::util::copy_of_trained_model(&t);
    let mut filter = SpamFilter::load(&path).unwrap();
    let new = b"Subject: frobnicated quux\n\nfrobnicated quux offers, frobnicated\n";
    filter.learn(new, spamsort::Label::Spam).unwrap();
    filter
        .learn(
            &std::fs::read(&sample_files()[0]).unwrap(),
            spamsort::Label::Ham,
        )
        .unwrap();
    filter
        .save(&spamsort::model_file::lock_for_update(&path).unwrap())
        .unwrap();
    let loaded = SpamFilter::load(&path).unwrap();
    for kind in ModelKind::WITH_FUSION {
        let file = ScorerFile::open(&path, Some(kind)).unwrap();
        let scorer = file.scorer().unwrap();
        for m in [&new[..], b"Subject: frobnicated\n\nquux\n"] {
            let c = scorer.classify(m).unwrap();
            assert_eq!(c, filter.classify_with(m, kind).unwrap(), "{kind}");
            assert_eq!(c, loaded.classify_with(m, kind).unwrap(), "{kind}");
            assert_eq!(
                scorer.explain(m).unwrap(),
                filter.explain(m, Some(kind)).unwrap()
            );
        }
    }
}

#[test]
fn nb_scorer_gives_weak_tokens_no_share_and_the_shares_add_up_to_the_decision() {
    let (mut left_out, mut counted) = (0, 0);
    for kind in [ModelKind::BernoulliNb, ModelKind::MultinomialNb] {
        let file = ScorerFile::open(trained_model(), Some(kind)).unwrap();
        let scorer = file.scorer().unwrap();
        for path in sample_files() {
            let e = scorer.explain(&std::fs::read(path).unwrap()).unwrap();
            let shares: f64 = e.contributions.iter().map(|(_, c)| c).sum();
            let d = e.classification.decision;
            assert!(
                (e.bias + shares - d).abs() < 1e-9 * (1.0 + d.abs()),
                "{kind}"
            );
            left_out += e.contributions.iter().filter(|(_, c)| *c == 0.0).count();
            counted += e.contributions.iter().filter(|(_, c)| *c != 0.0).count();
        }
    }
    // The default scoring counts only the strong tokens: both kinds occur.
    assert!(
        left_out > 0 && counted > 0,
        "{left_out} left out, {counted} counted"
    );
}

/// `spamsort learn FLAG --model MODEL MESSAGE`, which appends to the model file's journal.
fn learn(model: &std::path::Path, flag: &str, message: &std::path::Path) {
    crate::util::spamsort()
        .args(["learn", flag, "--model"])
        .arg(model)
        .arg(message)
        .assert()
        .success();
}

#[test]
fn one_message_scorer_of_a_trained_model_with_a_journal_agrees_with_the_full_load() {
    use crate::util::sample_class_files;
    let t = crate::util::TestDir::new();
    let path = crate::util::copy_of_trained_model(&t);
    let new = b"Subject: frobnicated quux\n\nfrobnicated quux offers, frobnicated\n";
    let new_file = t.write("new.eml", new);
    let (spam, ham) = (sample_class_files("spam"), sample_class_files("ham"));
    // A training message unlearned (it counted only in training's tokens) and one relabeled:
    // runs that unlearn save the file whole. Then new tokens, some of them again with known
    // ones, and a copy of a training message: journaled, each record with its patch (the
    // SVM's and logistic regression's weights of its byte 4-grams' buckets among them).
    learn(&path, "--unlearn", &spam[0]);
    learn(&path, "--spam", &ham[1]);
    let (records, _) = spamsort::filter::journal::pending(&path).unwrap();
    assert_eq!(records, 0, "unlearning saved the file");
    learn(&path, "--spam", &new_file);
    let again = t.write(
        "again.eml",
        b"Subject: quux offers\n\nfrobnicated lunch, zorblax\n",
    );
    learn(&path, "--ham", &again);
    let mut copy = b"Subject: a copy\n".to_vec();
    copy.extend(std::fs::read(&ham[0]).unwrap());
    learn(&path, "--spam", &t.write("copy.eml", &copy));
    let (records, _) = spamsort::filter::journal::pending(&path).unwrap();
    assert_eq!(records, 3, "learned through the journal");
    let loaded = SpamFilter::load(&path).unwrap();
    let messages: Vec<Vec<u8>> = [&spam[0], &spam[1], &ham[0], &ham[1]]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .chain([
            new.to_vec(),
            b"Subject: quux\n\nfrobnicated".to_vec(),
            Vec::new(),
        ])
        .collect();
    for kind in ModelKind::WITH_FUSION {
        let file = ScorerFile::open(&path, Some(kind)).unwrap();
        for m in &messages {
            let one = file.scorer().unwrap();
            assert_eq!(
                one.explain(m).unwrap(),
                loaded.explain(m, Some(kind)).unwrap(),
                "{kind}"
            );
            let one = file.scorer().unwrap();
            assert_eq!(
                one.classify(m).unwrap(),
                loaded.classify_with(m, kind).unwrap(),
                "{kind}"
            );
        }
    }
}

#[test]
fn threads_scoring_a_journaled_file_at_once_agree_with_the_full_load() {
    let t = crate::util::TestDir::new();
    let path = crate::util::copy_of_trained_model(&t);
    let new = t.write(
        "new.eml",
        b"Subject: frobnicated\n\nfrobnicated quux offers\n",
    );
    learn(&path, "--spam", &new);
    let loaded = SpamFilter::load(&path).unwrap();
    let file = ScorerFile::open(&path, Some(ModelKind::Fusion)).unwrap();
    // A scorer of many messages, as `classify` shares it between threads: the model is
    // loaded whole at the first message, once.
    let scorer = file.scorer().unwrap().for_many_messages();
    let files = sample_files();
    std::thread::scope(|s| {
        for chunk in files.chunks(files.len().div_ceil(4)) {
            let (scorer, loaded) = (&scorer, &loaded);
            s.spawn(move || {
                for p in chunk {
                    let m = std::fs::read(p).unwrap();
                    assert_eq!(
                        scorer.classify(&m).unwrap(),
                        loaded.classify_with(&m, ModelKind::Fusion).unwrap()
                    );
                }
            });
        }
    });
}

#[test]
fn a_file_rewritten_in_place_under_a_scorer_gives_its_verdict_or_an_error_never_a_mix() {
    use spamsort::{Label, model_file};
    let t = crate::util::TestDir::new();
    let base = crate::util::copy_of_trained_model(&t);
    // Two files of one layout (the same tokens and record, other counts): the trained model
    // that learned the same new messages as spam, and as ham, each saved whole.
    let new: Vec<Vec<u8>> = (0..12)
        .map(|i| format!("Subject: zorblax {i}\n\nzorblax quuxify frobnicate {i}").into_bytes())
        .collect();
    let saved_as = |name: &str, label| {
        let mut filter = SpamFilter::load(&base).unwrap();
        for m in &new {
            filter.learn(m, label).unwrap();
        }
        let path = t.path().join(name);
        filter
            .save(&model_file::lock_for_update(&path).unwrap())
            .unwrap();
        path
    };
    let (a, b) = (
        saved_as("a.spamsort", Label::Spam),
        saved_as("b.spamsort", Label::Ham),
    );
    let (ra, rb) = (
        model_file::ModelFileReader::open(&a).unwrap(),
        model_file::ModelFileReader::open(&b).unwrap(),
    );
    assert_eq!(ra.sections(), rb.sections());
    for i in 0..ra.sections() {
        assert_eq!(ra.section_len(i), rb.section_len(i), "section {i}");
    }
    let message = new[0].as_slice();
    let model = t.path().join("m.spamsort");
    for kind in [ModelKind::MultinomialNb, ModelKind::BernoulliNb] {
        let verdict = |path: &std::path::Path| {
            let file = ScorerFile::open(path, Some(kind)).unwrap();
            file.scorer().unwrap().classify(message).unwrap()
        };
        let (of_a, of_b) = (verdict(&a), verdict(&b));
        assert_ne!(of_a, of_b);
        std::fs::copy(&a, &model).unwrap();
        let file = ScorerFile::open(&model, Some(kind)).unwrap();
        let scorer = file.scorer().unwrap();
        // `cp b.spamsort m.spamsort` while the filter waits for its message.
        crate::util::copy_in_place(&std::fs::read(&b).unwrap(), &model);
        match scorer.classify(message) {
            Ok(c) => assert!(
                c == of_a || c == of_b,
                "{kind}: a verdict of neither file: {c:?}"
            ),
            Err(e) => assert!(e.to_string().contains("rewritten in place"), "{e}"),
        }
    }
}
