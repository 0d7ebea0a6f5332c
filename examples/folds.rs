//! Writes the stratified folds `spamsort eval` uses, so other filters can be run on exactly the
//! same splits (benches/compare.sh). For each fold k: `k.train.spam` and `k.train.ham` (one
//! absolute path per line) and `k.test` (`spam PATH` / `ham PATH`, a TREC index).
//!
//! Usage: cargo run --release --example folds -- SPAM_DIR HAM_DIR FOLDS SEED OUT_DIR

use spamsort::features::{stratified_folds, training_indices};
use spamsort::{Label, LabeledCorpus};
use std::io::Write;
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(
        args.len() == 5,
        "usage: folds SPAM_DIR HAM_DIR FOLDS SEED OUT_DIR"
    );
    let corpus = LabeledCorpus::read(
        &[PathBuf::from(&args[0])],
        &[PathBuf::from(&args[1])],
        |e| eprintln!("{e}"),
    )?;
    let (k, seed): (usize, u64) = (args[2].parse()?, args[3].parse()?);
    let out = PathBuf::from(&args[4]);
    std::fs::create_dir_all(&out)?;
    let labels: Vec<Label> = corpus.messages.iter().map(|(_, l)| *l).collect();
    let folds = stratified_folds(&labels, k, seed);
    for (f, test) in folds.iter().enumerate() {
        let mut spam = std::fs::File::create(out.join(format!("{f}.train.spam")))?;
        let mut ham = std::fs::File::create(out.join(format!("{f}.train.ham")))?;
        for i in training_indices(&folds, f) {
            let file = if labels[i] == Label::Spam {
                &mut spam
            } else {
                &mut ham
            };
            writeln!(
                file,
                "{}",
                std::fs::canonicalize(&corpus.messages[i].0.source.path)?.display()
            )?;
        }
        let mut index = std::fs::File::create(out.join(format!("{f}.test")))?;
        for &i in test {
            writeln!(
                index,
                "{} {}",
                labels[i],
                std::fs::canonicalize(&corpus.messages[i].0.source.path)?.display()
            )?;
        }
    }
    Ok(())
}
