//! Model file load time: the one-process-per-message filter pays it for every message. Trains
//! on the SpamAssassin corpus when fetched (`corpus/fetch-spamassassin.sh`), else on the sample,
//! saves the model to a temporary file and measures a full `SpamFilter::load` (every section
//! decoded) and `ScorerFile::open` plus `scorer()` (the head and the active model's sections
//! read and their checksums verified, their arrays borrowed), which is what `spamsort filter` does.
//!
//! Run: `cargo bench --bench model_load`

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use spamsort::filter::scorer::ScorerFile;
use spamsort::{SpamFilter, TrainParams};

fn model_load(c: &mut Criterion) {
    let (name, corpus) = common::corpus();
    let mut filter = SpamFilter::train(&corpus, &TrainParams::default()).expect("train");
    let tmp = tempfile::tempdir().expect("temp dir");
    let path = tmp.path().join("model.spamsort");
    filter
        .save(&spamsort::model_file::lock_for_update(&path).expect("lock"))
        .expect("save");
    let size = std::fs::metadata(&path).expect("saved").len();
    let name = format!(
        "{name}/{}msgs/{}tokens/{}KiB",
        corpus.messages.len(),
        filter.vocabulary().len(),
        size / 1024
    );
    c.bench_function(&format!("model_load/full/{name}"), |b| {
        b.iter(|| SpamFilter::load(&path).expect("load").vocabulary().len())
    });
    c.bench_function(&format!("model_load/scoring/{name}"), |b| {
        b.iter(|| {
            let file = ScorerFile::open(&path, None).expect("open");
            file.scorer().expect("scorer").model()
        })
    });
}

criterion_group!(benches, model_load);
criterion_main!(benches);
