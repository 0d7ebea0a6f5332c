//! Model file load time: the one-process-per-message filter pays it for every message. Trains
//! on the SpamAssassin corpus when fetched (`corpus/fetch-spamassassin.sh`), else on the sample,
//! saves the model to a temporary file and measures `SpamFilter::load` (read, checksum, decode,
//! validate).
//!
//! Run: `cargo bench --bench model_load`

use criterion::{Criterion, criterion_group, criterion_main};
use spamsort::{LabeledCorpus, SpamFilter, TrainParams};
use std::path::Path;

fn model_load(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let full = root.join("spamassassin");
    let dir = if full.join("ham").is_dir() {
        full
    } else {
        root.join("sample")
    };
    let corpus = LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
        eprintln!("{e}")
    })
    .expect("corpus readable");
    let filter = SpamFilter::train(&corpus, &TrainParams::default()).expect("train");
    let tmp = tempfile::tempdir().expect("temp dir");
    let path = tmp.path().join("model.spamsort");
    filter.save(&path).expect("save");
    let size = std::fs::metadata(&path).expect("saved").len();
    let name = format!(
        "{}/{}msgs/{}tokens/{}KiB",
        dir.file_name().unwrap().to_string_lossy(),
        corpus.messages.len(),
        filter.vocabulary().len(),
        size / 1024
    );
    c.bench_function(&format!("model_load/{name}"), |b| {
        b.iter(|| SpamFilter::load(&path).expect("load").vocabulary().len())
    });
}

criterion_group!(benches, model_load);
criterion_main!(benches);
