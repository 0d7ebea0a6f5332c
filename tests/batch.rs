//! Batch `classify` and `train`: `classify` answers every message in input order however many
//! there are and however they are split between threads; `train` reads its mail as a stream
//! and skips what it cannot read, as it did reading the mail whole.

use crate::util::*;
use spamsort::SpamFilter;
use std::collections::HashMap;
use std::path::PathBuf;

#[test]
fn classify_of_many_messages_prints_each_own_result_in_input_order() {
    let dir = TestDir::new();
    // Messages far over the tokenizer's 2 MiB head close windows by bytes, not by count.
    let big = dir.write(
        "big.eml",
        &message("Big one", &"cheap meds now\n".repeat(200_000)),
    );
    let files = sample_files();
    let mut paths: Vec<PathBuf> = Vec::new();
    for k in 0..5 {
        let mut round = files.clone();
        round.rotate_left(k * 37);
        if k % 2 == 1 {
            round.reverse();
        }
        paths.extend(round);
        paths.push(big.clone());
    }
    assert!(paths.len() > 1000);
    let out = stdout_of(
        spamsort()
            .args(["classify", "--format", "tsv", "--model"])
            .arg(trained_model())
            .args(&paths),
    );
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), paths.len());
    let filter = SpamFilter::load(trained_model()).unwrap();
    let mut expected: HashMap<&PathBuf, (String, String)> = HashMap::new();
    for (line, path) in lines.iter().zip(&paths) {
        let fields: Vec<&str> = line.split('\t').collect();
        // Each file is one message, read as the reader reads it (a file that starts with an
        // mbox `From ` line is a one-message mbox, named `PATH#1`).
        let (source, decision) = expected.entry(path).or_insert_with(|| {
            let message = spamsort::Mailbox::open(path)
                .unwrap()
                .next()
                .unwrap()
                .unwrap();
            let c = filter.classify(&message.bytes);
            (message.source.to_string(), format!("{:.6}", c.decision))
        });
        assert_eq!(fields[0], source.as_str(), "{line}");
        assert!(fields[0].starts_with(&path.display().to_string()));
        assert_eq!(fields[4], decision.as_str(), "{line}");
    }
}

#[test]
fn train_from_an_index_with_unreadable_entries_skips_them_and_equals_train_on_the_rest() {
    let dir = TestDir::new();
    let mut index = String::new();
    for (class, files) in [
        ("spam", sample_class_files("spam")),
        ("ham", sample_class_files("ham")),
    ] {
        let list = &mut index;
        for (i, f) in files.iter().enumerate() {
            if i == 3 {
                list.push_str(&format!(
                    "{class} {}\n",
                    dir.path().join("missing").display()
                ));
            }
            list.push_str(&format!("{class} {}\n", f.display()));
        }
    }
    let index_of = |class: &str| {
        let lines: String = index
            .lines()
            .filter(|l| l.starts_with(&format!("{class} ")))
            .map(|l| format!("{l}\n"))
            .collect();
        dir.write(&format!("{class}.index"), lines.as_bytes())
    };
    let (spam_index, ham_index) = (index_of("spam"), index_of("ham"));
    let from_index = dir.path().join("index.spamsort");
    let stderr = spamsort()
        .arg("train")
        .arg("--spam")
        .arg(&spam_index)
        .arg("--ham")
        .arg(&ham_index)
        .arg("--model")
        .arg(&from_index)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&stderr);
    assert_eq!(stderr.matches("skipped: ").count(), 2, "{stderr}");
    assert!(stderr.contains("(2 skipped, "), "{stderr}");
    let from_folders = dir.path().join("folders.spamsort");
    with_sample(spamsort().arg("train"))
        .arg("--model")
        .arg(&from_folders)
        .assert()
        .success();
    let dump = |model: &PathBuf| {
        let out = stdout_of(spamsort().arg("dump").arg("--model").arg(model));
        // The training time differs; everything else must not.
        let text = String::from_utf8(out).unwrap();
        let at = regex::Regex::new(r#""trained_at":\d+"#).unwrap();
        at.replace_all(&text, r#""trained_at":T"#).into_owned()
    };
    let (a, b) = (dump(&from_index), dump(&from_folders));
    assert!(a.lines().count() > 1000);
    assert!(a == b, "the models differ");
}
