//! Parse + tokenize throughput (MB/s, one core) over the SpamAssassin corpus when it has been
//! fetched (`corpus/fetch-spamassassin.sh`), else over the committed sample.
//!
//! Run: `cargo bench --bench tokenize`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spamsort::{LabeledCorpus, Tokenizer, TokenizerConfig};
use std::path::{Path, PathBuf};

fn corpus() -> (String, Vec<Vec<u8>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let full = root.join("spamassassin");
    let dir = if full.join("ham").is_dir() {
        full
    } else {
        root.join("sample")
    };
    let spam: Vec<PathBuf> = vec![dir.join("spam")];
    let ham: Vec<PathBuf> = vec![dir.join("ham")];
    let corpus = LabeledCorpus::read(&spam, &ham, |e| eprintln!("{e}")).expect("corpus readable");
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    (
        name,
        corpus.messages.into_iter().map(|(m, _)| m.bytes).collect(),
    )
}

fn tokenize(c: &mut Criterion) {
    let (name, messages) = corpus();
    let bytes: usize = messages.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("tokenize");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    for (label, config) in [
        ("default", TokenizerConfig::default()),
        (
            "bigrams+char4",
            TokenizerConfig {
                word_bigrams: true,
                char_ngrams: true,
                ..TokenizerConfig::default()
            },
        ),
    ] {
        let tokenizer = Tokenizer::new(config);
        group.bench_function(format!("{name}/{label}"), |b| {
            b.iter(|| {
                messages
                    .iter()
                    .map(|m| tokenizer.tokenize(m).tokens.len())
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

// The same allocator as the `spamsort` binary, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

criterion_group!(benches, tokenize);
criterion_main!(benches);
