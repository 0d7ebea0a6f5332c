//! Parse + tokenize throughput (MB/s, one core) over the SpamAssassin corpus when it has been
//! fetched (`corpus/fetch-spamassassin.sh`), else over the committed sample: with the default
//! settings, with byte 4-grams of fewer bytes (`batch`, as `train` and batch `classify` tokenize;
//! those two count the 4-grams from the bytes, without the `b4:` strings timed here), and with
//! word bigrams and character 4-grams. Also mail-parser's parse alone (`mail-parser`), the
//! floor under all of them: every front end hands each message to it first.
//!
//! Run: `cargo bench --bench tokenize`

mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spamsort::{Tokenizer, TokenizerConfig};

fn tokenize(c: &mut Criterion) {
    let (name, corpus) = common::corpus();
    let messages: Vec<&[u8]> = corpus
        .messages
        .iter()
        .map(|(m, _)| m.bytes.as_slice())
        .collect();
    let bytes: usize = messages.iter().map(|m| m.len()).sum();
    let mut group = c.benchmark_group("tokenize");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    for (label, config) in [
        ("default", TokenizerConfig::default()),
        // What `train` and batch `classify` tokenize with: byte 4-grams of fewer bytes.
        (
            "batch",
            TokenizerConfig {
                byte_ngrams: spamsort::models::BATCH_BYTE_NGRAMS,
                ..TokenizerConfig::default()
            },
        ),
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
    group.bench_function(format!("{name}/mail-parser"), |b| {
        b.iter(|| {
            messages
                .iter()
                .filter_map(|m| mail_parser::MessageParser::default().parse(m))
                .map(|m| m.parts.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, tokenize);
criterion_main!(benches);
