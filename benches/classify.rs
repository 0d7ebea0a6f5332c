//! Scoring throughput on one core: raw message bytes to P(spam) (tokenize, vectorize, score),
//! per model, with a filter trained on the SpamAssassin corpus when it has been fetched
//! (`corpus/fetch-spamassassin.sh`), else on the sample. Throughput is in messages per second.
//!
//! Run: `cargo bench --bench classify`

mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spamsort::models::ModelKind;
use spamsort::{SpamFilter, TrainParams};

fn classify(c: &mut Criterion) {
    let (_, corpus) = common::corpus();
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

criterion_group!(benches, classify);
criterion_main!(benches);
