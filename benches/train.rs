//! Training time: all four models on the whole corpus, tokenizing included (what `spamsort
//! train` does, on all cores), and each model alone on one 5-fold training split (4,837
//! messages of the SpamAssassin corpus), vocabulary and vectors prepared beforehand. Uses the
//! full corpus when fetched (`corpus/fetch-spamassassin.sh`), else the sample.
//!
//! Run: `cargo bench --bench train`

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use spamsort::features::{Dataset, stratified_folds, training_indices};
use spamsort::models::{ModelKind, ModelParams};
use spamsort::{SpamFilter, Tokenizer, TrainParams, VocabularyParams};

fn train(c: &mut Criterion) {
    let (_, corpus) = common::corpus();
    let mut group = c.benchmark_group("train");
    group.sample_size(10);
    group.bench_function(format!("all-four/{}msgs", corpus.messages.len()), |b| {
        b.iter(|| {
            SpamFilter::train(&corpus, &TrainParams::default())
                .expect("train")
                .vocabulary()
                .len()
        })
    });

    let labels: Vec<_> = corpus.messages.iter().map(|(_, l)| *l).collect();
    let train = training_indices(&stratified_folds(&labels, 5, 42), 0);
    let tokens = Tokenizer::default().tokenize_all(
        corpus
            .messages
            .iter()
            .map(|(m, _)| m.bytes.as_slice())
            .collect::<Vec<_>>(),
    );
    let vocab =
        VocabularyParams::default().fit(train.iter().map(|&i| (&tokens[i].tokens, labels[i])));
    let data = Dataset::new(
        train.iter().map(|&i| vocab.vectorize(&tokens[i].tokens)),
        train.iter().map(|&i| labels[i]).collect(),
        vocab.len(),
    );
    for kind in ModelKind::ALL {
        let params = ModelParams::default_for(kind);
        group.bench_function(format!("{kind}/{}msgs", data.len()), |b| {
            b.iter(|| params.fit(&data, 42).expect("fit"))
        });
    }
    group.finish();
}

criterion_group!(benches, train);
criterion_main!(benches);
