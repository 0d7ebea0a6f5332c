//! Scoring throughput on one core: raw message bytes to P(spam) (tokenize, vectorize, score),
//! per model, with a filter trained on the SpamAssassin corpus when it has been fetched
//! (`corpus/fetch-spamassassin.sh`), else on the sample. Throughput is in messages per second.
//!
//! Run: `cargo bench --bench classify`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spamsort::models::ModelKind;
use spamsort::{LabeledCorpus, SpamFilter, TrainParams};
use std::path::Path;

fn classify(c: &mut Criterion) {
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
    let messages: Vec<&[u8]> = corpus
        .messages
        .iter()
        .map(|(m, _)| m.bytes.as_slice())
        .collect();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(messages.len() as u64));
    group.sample_size(10);
    for kind in ModelKind::ALL {
        group.bench_function(kind.name(), |b| {
            b.iter(|| {
                messages
                    .iter()
                    .map(|m| {
                        filter
                            .classify_with(m, kind)
                            .expect("fitted")
                            .score
                            .p_spam()
                    })
                    .sum::<f64>()
            })
        });
    }
    group.finish();
}

// The same allocator as the `spamsort` binary, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

criterion_group!(benches, classify);
criterion_main!(benches);
