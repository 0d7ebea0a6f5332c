//! `spamsort eval --spam PATH... --ham PATH...`: cross-validate the models on labeled mail and
//! print the literature's measures, mean over folds.

use super::ExitStatus;
use super::args::LabeledMailArgs;
use spamsort::eval::metrics::{Confusion, auc, spam_miss_at_ham_pct};
use spamsort::eval::{CrossValidation, FoldResult};
use spamsort::models::ModelParams;
use spamsort::{Tokenizer, TokenizerConfig, VocabularyParams};

/// Arguments of `spamsort eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    #[command(flatten)]
    mail: LabeledMailArgs,
    /// Number of stratified folds.
    #[arg(long, default_value_t = 10)]
    folds: usize,
    /// Seed of the fold split.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

pub fn run(args: EvalArgs) -> anyhow::Result<ExitStatus> {
    let kinds = args.mail.kinds()?;
    anyhow::ensure!(args.folds >= 2, "--folds must be at least 2");
    let (corpus, _) = args.mail.read()?;
    let tokenizer = Tokenizer::new(TokenizerConfig::default());
    let tokens: Vec<_> = tokenizer
        .tokenize_all(
            corpus
                .messages
                .iter()
                .map(|(m, _)| m.bytes.as_slice())
                .collect::<Vec<_>>(),
        )
        .into_iter()
        .map(|t| t.tokens)
        .collect();
    let labels: Vec<_> = corpus.messages.iter().map(|(_, l)| *l).collect();
    let cv = CrossValidation {
        folds: args.folds,
        seed: args.seed,
        vocabulary: VocabularyParams {
            min_df: args.mail.min_df,
            ..VocabularyParams::default()
        },
        models: kinds.iter().map(|&k| ModelParams::default_for(k)).collect(),
        calibrate: true,
    };
    let results = cv.run(&tokens, &labels)?;
    println!(
        "{:<20} {:>9} {:>8} {:>7} {:>7} {:>10} {:>9}",
        "model", "1-AUC%", "lam%", "hm%", "sm%", "sm%@.1hm", "train s"
    );
    for kind in kinds {
        let folds: Vec<&FoldResult> = results.iter().filter(|r| r.model == kind).collect();
        let mean = |f: &dyn Fn(&FoldResult) -> f64| {
            folds.iter().map(|r| f(r)).sum::<f64>() / folds.len() as f64
        };
        let conf = |r: &FoldResult| Confusion::at(&r.p_spam, &r.labels, 0.5);
        println!(
            "{:<20} {:>9.4} {:>8.3} {:>7.3} {:>7.3} {:>10.3} {:>9.3}",
            kind.name(),
            mean(&|r| 100.0 * (1.0 - auc(&r.decisions, &r.labels))),
            mean(&|r| conf(r).lam_pct()),
            mean(&|r| conf(r).ham_miss_pct()),
            mean(&|r| conf(r).spam_miss_pct()),
            mean(&|r| spam_miss_at_ham_pct(&r.decisions, &r.labels, 0.1)),
            mean(&|r| r.train_seconds),
        );
    }
    Ok(ExitStatus::Success)
}
