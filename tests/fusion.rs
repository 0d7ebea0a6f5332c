//! Fusion as users get it: chosen with `train --active fusion`, it answers in `classify`,
//! `filter`, `info` and `explain` (each model's share), and a model file or dump whose fuser
//! does not match its models is refused.

use crate::util::{TestDir, spamsort, with_sample};
use spamsort::SpamFilter;
use spamsort::models::ModelKind;
use std::path::{Path, PathBuf};

fn stdout(args: &[&str], model: &Path, rest: &[&Path]) -> String {
    let out = spamsort()
        .args(args)
        .arg("--model")
        .arg(model)
        .args(rest)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn trained_with_active_fusion(dir: &TestDir) -> PathBuf {
    let model = dir.path().join("fused.spamsort");
    with_sample(spamsort().arg("train"))
        .args(["--active", "fusion", "--model"])
        .arg(&model)
        .assert()
        .success();
    model
}

#[test]
fn train_active_fusion_answers_as_fusion_in_info_classify_filter_and_explain() {
    let dir = TestDir::new();
    let model = trained_with_active_fusion(&dir);
    let filter = SpamFilter::load(&model).unwrap();
    assert_eq!(filter.active(), ModelKind::Fusion);
    let fusion = filter.fusion().expect("fusion is fitted by default");
    assert_eq!(fusion.models(), ModelKind::ALL);

    let info = stdout(&["info"], &model, &[]);
    assert!(info.contains("active model:    fusion"), "{info}");
    assert!(info.contains("fusion:          bernoulli-nb "), "{info}");

    let spam = crate::util::sample_class_files("spam").remove(0);
    let tsv = stdout(&["classify", "--format", "tsv"], &model, &[&spam]);
    let expected = filter.classify(&std::fs::read(&spam).unwrap());
    assert_eq!(expected.model, ModelKind::Fusion);
    let fields: Vec<&str> = tsv.trim_end().split('\t').collect();
    assert_eq!(fields[4], format!("{:.6}", expected.decision), "{tsv}");

    let marked = spamsort()
        .args(["filter", "--model"])
        .arg(&model)
        .write_stdin(std::fs::read(&spam).unwrap())
        .output()
        .unwrap();
    let marked = String::from_utf8_lossy(&marked.stdout);
    assert!(marked.contains("tests=SPAMSORT_FUSION,"), "{marked}");

    let explained = stdout(&["explain"], &model, &[&spam]);
    for kind in ModelKind::ALL {
        assert!(explained.contains(kind.name()), "{kind} in {explained}");
    }
    let e = filter
        .explain(&std::fs::read(&spam).unwrap(), None)
        .unwrap();
    let total = e.bias + e.contributions.iter().map(|(_, s)| s).sum::<f64>();
    assert!((total - e.classification.decision).abs() < 1e-9, "{e:?}");
}

#[test]
fn fusion_with_fewer_than_two_other_models_is_refused_before_reading_mail() {
    let dir = TestDir::new();
    let out = spamsort()
        .args(["train", "--models", "linear-svm,fusion", "--spam"])
        .arg(dir.path().join("missing-spam"))
        .arg("--ham")
        .arg(dir.path().join("missing-ham"))
        .arg("--model")
        .arg(dir.path().join("m.spamsort"))
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("fusion"), "{stderr}");
    assert!(!stderr.contains("missing-spam"), "{stderr}");
}

#[test]
fn a_dump_whose_fusion_stacks_a_model_it_lacks_is_refused() {
    let dir = TestDir::new();
    let model = dir.path().join("two.spamsort");
    with_sample(spamsort().arg("train"))
        .args(["--models", "multinomial-nb,linear-svm,fusion", "--model"])
        .arg(&model)
        .assert()
        .success();
    let text = stdout(&["dump"], &model, &[]);
    let stacked = "\"models\":[\"MultinomialNb\",\"LinearSvm\"]";
    assert!(text.contains(stacked), "{text:.2000}");
    let bad = text.replacen(stacked, "\"models\":[\"MultinomialNb\",\"BernoulliNb\"]", 1);
    let file = dir.write("bad.dump", bad.as_bytes());
    let target = dir.path().join("restored.spamsort");
    let out = spamsort()
        .args(["restore", "--model"])
        .arg(&target)
        .arg(&file)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("fusion"), "{stderr}");
    assert!(!target.exists());
}

#[test]
fn explain_with_fusion_counts_the_rest_as_models_not_tokens() {
    // Review: fusion's parts are the models, yet the rest of each side was "the other 2
    // tokens toward spam".
    let dir = TestDir::new();
    let model = trained_with_active_fusion(&dir);
    let spam = crate::util::sample_class_files("spam").remove(0);
    // No model shown, so every one is in a rest.
    let explained = stdout(&["explain", "--top", "0"], &model, &[&spam]);
    let rests: Vec<&str> = explained
        .lines()
        .filter(|l| l.contains("(the other "))
        .collect();
    assert!(!rests.is_empty(), "{explained}");
    for rest in rests {
        assert!(rest.contains(" models toward "), "{explained}");
    }
    // A single model still explains itself in tokens.
    let explained = stdout(
        &["explain", "--top", "0", "--classifier", "linear-svm"],
        &model,
        &[&spam],
    );
    assert!(explained.contains(" tokens toward "), "{explained}");
    assert!(!explained.contains(" models toward "), "{explained}");
}
