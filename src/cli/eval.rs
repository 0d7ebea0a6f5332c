//! `spamsort eval --spam PATH... --ham PATH...`: cross-validate the models on labeled mail and
//! print the literature's measures, mean over folds; `eval --online [INDEX]`: the TREC
//! immediate-feedback protocol instead.

use super::ExitStatus;
use super::args::LabeledMailArgs;
use anyhow::Context;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use spamsort::eval::report::{EvalReport, Protocol};
use spamsort::eval::roc::{RocCurve, write_svg};
use spamsort::eval::{CrossValidation, online};
use spamsort::models::ModelParams;
use spamsort::{Label, LabeledCorpus, Token, Tokenizer, TokenizerConfig, VocabularyParams};
use std::io::Write;

/// Arguments of `spamsort eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    #[command(flatten)]
    mail: LabeledMailArgs,
    /// Number of stratified folds.
    #[arg(long, default_value_t = 10)]
    folds: usize,
    /// Seed of the fold split (and of the message order of --online without an INDEX).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// TREC online protocol instead of cross-validation: starting from an empty filter, each
    /// message is classified, then learned with its label (as `spamsort learn` does: each
    /// message once), in the order of the TREC index INDEX (`spam PATH` / `ham PATH` lines), or
    /// without INDEX in a seeded random order of --spam and --ham.
    #[arg(long, value_name = "INDEX", num_args = 0..=1)]
    online: Option<Option<std::path::PathBuf>>,
    /// Also draw every model's ROC curve (held-out decisions of all folds pooled) into this
    /// SVG file.
    #[arg(long, value_name = "FILE.svg")]
    roc: Option<std::path::PathBuf>,
    /// Draw the ROC chart's ham-misclassification axis on a log scale.
    #[arg(long, requires = "roc")]
    roc_log: bool,
    /// Output format; json and csv are stable, for scripts.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Output formats of `eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Aligned columns, for people.
    Table,
    /// The full report: per model the means, `spread` (standard deviations) and `folds`.
    Json,
    /// One row of means per model.
    Csv,
}

pub fn run(args: EvalArgs) -> anyhow::Result<ExitStatus> {
    let kinds = args.mail.kinds()?;
    let models: Vec<ModelParams> = kinds.iter().map(|&k| ModelParams::default_for(k)).collect();
    let report;
    let results = match &args.online {
        None => {
            anyhow::ensure!(args.folds >= 2, "--folds must be at least 2");
            let (corpus, _) = args.mail.read()?;
            let (tokens, labels) = tokenize(&corpus);
            let cv = CrossValidation {
                folds: args.folds,
                seed: args.seed,
                vocabulary: VocabularyParams {
                    min_df: args.mail.min_df,
                    ..VocabularyParams::default()
                },
                models,
            };
            let results = cv.run(&tokens, &labels)?;
            report = EvalReport::new(&results, Protocol::CrossValidation, args.folds, args.seed);
            results
        }
        Some(index) => {
            let corpus = online_corpus(&args, index.as_deref())?;
            let (tokens, labels) = tokenize(&corpus);
            let results = online::run(&models, &TokenizerConfig::default(), &tokens, &labels)?;
            report = EvalReport::new(&results, Protocol::Online, 1, args.seed);
            results
        }
    };
    if let Some(path) = &args.roc {
        let curves: Vec<RocCurve> = kinds
            .iter()
            .map(|&kind| {
                let folds = results.iter().filter(|r| r.model == kind);
                let (scores, labels): (Vec<f64>, Vec<_>) = folds
                    .flat_map(|r| r.decisions.iter().copied().zip(r.labels.iter().copied()))
                    .unzip();
                RocCurve::new(kind.name(), &scores, &labels)
            })
            .collect();
        write_svg(&curves, path, args.roc_log)
            .map_err(|e| anyhow::anyhow!("writing ROC chart {}: {e}", path.display()))?;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Csv => {
            writeln!(
                out,
                "model,one_minus_auc_pct,one_minus_auc_pct_sd,lam_pct,ham_miss_pct,spam_miss_pct,spam_miss_at_0_1pct_ham_pct,accuracy_pct,precision,recall,f1,train_seconds,messages_per_second"
            )?;
            for m in &report.models {
                let (v, sd) = (m.mean, m.spread);
                writeln!(
                    out,
                    "{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.1}",
                    m.name,
                    v.one_minus_auc_pct,
                    sd.one_minus_auc_pct,
                    v.lam_pct,
                    v.ham_miss_pct,
                    v.spam_miss_pct,
                    v.spam_miss_at_0_1pct_ham_pct,
                    v.accuracy_pct,
                    v.precision,
                    v.recall,
                    v.f1,
                    v.train_seconds,
                    v.messages_per_second
                )?;
            }
        }
        Format::Table => {
            match report.protocol {
                Protocol::CrossValidation => writeln!(
                    out,
                    "{} folds, seed {}, {} spam + {} ham; hm%/sm%/lam% at P(spam) >= 0.5; mean (sd) over folds",
                    report.folds, report.seed, report.spam, report.ham
                )?,
                Protocol::Online => writeln!(
                    out,
                    "TREC online (immediate feedback), {} spam + {} ham in order; hm%/sm%/lam% at P(spam) >= 0.5; train s = learning, all messages",
                    report.spam, report.ham
                )?,
            }
            writeln!(
                out,
                "{:<20} {:>17} {:>8} {:>7} {:>7} {:>10} {:>8} {:>9}",
                "model", "1-AUC%", "lam%", "hm%", "sm%", "sm%@.1hm", "train s", "msgs/s"
            )?;
            for m in &report.models {
                let v = m.mean;
                writeln!(
                    out,
                    "{:<20} {:>8.4} ({:.4}) {:>8.3} {:>7.3} {:>7.3} {:>10.3} {:>8.3} {:>9.0}",
                    m.name,
                    v.one_minus_auc_pct,
                    m.spread.one_minus_auc_pct,
                    v.lam_pct,
                    v.ham_miss_pct,
                    v.spam_miss_pct,
                    v.spam_miss_at_0_1pct_ham_pct,
                    v.train_seconds,
                    v.messages_per_second
                )?;
            }
            if report.protocol == Protocol::Online {
                writeln!(
                    out,
                    "learning curve: 1-AUC% of each successive 1000 messages"
                )?;
                for r in &results {
                    let curve: Vec<String> = online::learning_curve(r, 1000)
                        .iter()
                        .map(|v| v.map_or("-".into(), |v| format!("{v:.3}")))
                        .collect();
                    writeln!(out, "{:<20} {}", r.model.name(), curve.join(" "))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// The messages of an online run, in order: the index's, or a seeded shuffle of --spam/--ham.
fn online_corpus(
    args: &EvalArgs,
    index: Option<&std::path::Path>,
) -> anyhow::Result<LabeledCorpus> {
    let Some(index) = index else {
        let (mut corpus, _) = args.mail.read()?;
        corpus
            .messages
            .shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(args.seed));
        return Ok(corpus);
    };
    anyhow::ensure!(
        args.mail.spam.is_empty() && args.mail.ham.is_empty(),
        "give either --online INDEX or --spam/--ham, not both"
    );
    let corpus = LabeledCorpus::read_trec(index, |e| {
        eprintln!(
            "spamsort: skipped: {}",
            super::terminal::escape_for_terminal(&e.to_string())
        )
    })
    .with_context(|| format!("reading the TREC index {}", index.display()))?;
    anyhow::ensure!(
        corpus.count(Label::Spam) > 0 && corpus.count(Label::Ham) > 0,
        "the index needs at least one spam and one ham message"
    );
    Ok(corpus)
}

/// Every message's tokens (in parallel) and label, in corpus order.
fn tokenize(corpus: &LabeledCorpus) -> (Vec<Vec<Token>>, Vec<Label>) {
    let tokenizer = Tokenizer::new(TokenizerConfig::default());
    let bytes: Vec<&[u8]> = corpus
        .messages
        .iter()
        .map(|(m, _)| m.bytes.as_slice())
        .collect();
    let tokens = tokenizer
        .tokenize_all(bytes)
        .into_iter()
        .map(|t| t.tokens)
        .collect();
    (tokens, corpus.messages.iter().map(|(_, l)| *l).collect())
}
