//! `spamsort train` and `spamsort info` on the sample corpus.

use crate::util::{TestDir, sample, spamsort, with_sample};

#[test]
fn train_then_info_on_the_sample() {
    let t = TestDir::new();
    let model = t.path().join("nested/dir/model.spamsort");
    with_sample(spamsort().arg("train"))
        .arg("--model")
        .arg(&model)
        .assert()
        .success()
        .stderr(predicates::str::contains("trained on 104 spam + 100 ham"));
    let out = spamsort()
        .arg("info")
        .env("SPAMSORT_MODEL", &model)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("104 spam, 100 ham"), "{text}");
    let vocab: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("vocabulary:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(vocab > 1000, "vocabulary of {vocab} tokens");
}

#[test]
fn info_on_a_corrupt_model_fails_clearly() {
    let t = TestDir::new();
    let bad = t.write("bad.spamsort", b"SPAMSORT\x01\x00\x00\x00garbage");
    spamsort()
        .args(["info", "--model"])
        .arg(&bad)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("bad.spamsort"));
}

#[test]
fn train_needs_both_classes() {
    let t = TestDir::new();
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    spamsort()
        .arg("train")
        .arg("--spam")
        .arg(&empty)
        .arg("--ham")
        .arg(sample("ham"))
        .arg("--model")
        .arg(t.path().join("m"))
        .assert()
        .code(3)
        .stderr(predicates::str::contains("at least one spam"));
}
