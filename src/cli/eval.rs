//! `spamsort eval --spam PATH... --ham PATH...`: cross-validate the models on labeled mail and
//! print the literature's measures, mean over folds; `eval --online [INDEX]`: the TREC
//! immediate-feedback protocol instead.

use super::ExitStatus;
use super::args::LabeledMailArgs;
use super::output::{Kind, Readers, Replace};
use anyhow::Context;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use spamsort::eval::report::{EvalReport, Protocol, pooled_roc_curves};
use spamsort::eval::{CrossValidation, TokenizedMail, online};
use spamsort::models::ModelParams;
use spamsort::{LabeledCorpus, Thresholds, TokenizerConfig, VocabularyParams};
use std::io::Write;

// Arguments of `spamsort eval` (not a doc comment: see `Command`).
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
    /// Also write every held-out message's score under every model into this file, one
    /// tab-separated line each after a header line:
    /// `fold model message label p_spam decision flagged` (the message named as `classify`
    /// names it; `flagged` 1 where the threshold measures call it spam, P(spam) at
    /// --spam-threshold or above once the model had learned both classes; in an online run,
    /// fold 0 and the messages in the order they came), for measures of your own or to see
    /// which messages a model gets wrong.
    #[arg(long, value_name = "FILE.tsv")]
    scores: Option<std::path::PathBuf>,
    /// Let --roc and --scores replace a file that is not of their kind (not empty, and not
    /// starting as a chart or a table of scores: a mailbox?)
    #[arg(long)]
    force: bool,
    /// P(spam) at or above which the binary measures (ham and spam miss %, lam %, accuracy,
    /// precision, recall, F1) call a message spam, as a verdict does [default: 0.98, the
    /// threshold `train` gives a model file]. (1-AUC)% and the spam missed at 0.1% of ham
    /// depend on no threshold.
    #[arg(long, value_name = "P")]
    spam_threshold: Option<f64>,
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

/// A file eval writes besides its report: its option, its path and what it holds.
type Output<'a> = (&'static str, &'a std::path::PathBuf, Kind);

pub fn run(args: EvalArgs) -> anyhow::Result<ExitStatus> {
    let kinds = args.mail.kinds()?;
    let threshold = args.spam_threshold.unwrap_or(Thresholds::default().spam());
    // Checked as a verdict's is (see `Thresholds::new`), before the run.
    anyhow::ensure!(
        (0.0..1.0).contains(&threshold),
        "--spam-threshold must be at least 0 and below 1 (a P(spam)), got {threshold}"
    );
    let outputs = [
        ("--roc", &args.roc, Kind::Chart),
        ("--scores", &args.scores, Kind::Scores),
    ];
    let outputs: Vec<Output<'_>> = (outputs.into_iter())
        .filter_map(|(flag, path, kind)| Some((flag, path.as_ref()?, kind)))
        .collect();
    if let [(_, a, _), (_, b, _)] = outputs[..] {
        anyhow::ensure!(
            std::path::absolute(a)? != std::path::absolute(b)?,
            "--roc and --scores name the same file, {}: give each its own",
            a.display()
        );
    }
    for &(flag, path, kind) in &outputs {
        let inputs = args.mail.spam.iter().chain(&args.mail.ham);
        let named = format!("{flag} {}", path.display());
        let inputs = inputs.chain(args.online.iter().flatten());
        super::output::refuse_output_in(&named, path, inputs)?;
        // Refused now rather than after the whole run (`write_whole` refuses it again), and so
        // is a folder the file cannot be written into (missing, read-only): found only when
        // the file was written, it threw away a whole run's report.
        let target = super::output::replaceable(path).with_context(|| named.clone())?;
        super::output::refuse_other_kind(path, Replace::new(kind, args.force), &named)?;
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
        tempfile::NamedTempFile::new_in(dir.unwrap_or(".".as_ref()))
            .with_context(|| format!("{named}: cannot write a file in its folder"))?;
    }
    let models: Vec<ModelParams> = kinds.iter().map(|&k| ModelParams::default_for(k)).collect();
    let tokenizer = TokenizerConfig::default();
    let (results, report, names) = match &args.online {
        None => {
            anyhow::ensure!(args.folds >= 2, "--folds must be at least 2");
            let cv = CrossValidation {
                folds: args.folds,
                seed: args.seed,
                vocabulary: VocabularyParams {
                    min_df: args.mail.min_df,
                    ..VocabularyParams::default()
                },
                models,
            };
            // Tokenized as `train` tokenizes for these models: CV fits them as it does.
            let tokenizer = spamsort::models::tokenizer_for(&cv.models, &tokenizer);
            // Tokenized as it is read, a window at a time: the folds see only tokens, and the
            // messages' bytes are never held whole.
            let messages = args.mail.stream(|| ())?;
            let mut mail =
                TokenizedMail::read(messages, &tokenizer).context("reading the labeled mail")?;
            // As `train` counts them: a copy in a training fold and one in the test fold
            // would flatter every measure.
            let copies = mail
                .count_copies_once()
                .context("reading the labeled mail")?;
            if copies > 0 {
                super::say(format_args!(
                    "{copies} copies counted once (as `train` counts them)"
                ));
            }
            let results = cv.run(&mail)?;
            let report = EvalReport::new(
                &results,
                Protocol::CrossValidation,
                args.folds,
                args.seed,
                threshold,
            );
            (results, report, mail.names)
        }
        Some(index) => {
            let mail = online_mail(&args, index.as_deref(), &tokenizer, &outputs)?;
            let results = online::run(&models, &tokenizer, &mail)?;
            let report = EvalReport::new(&results, Protocol::Online, 1, args.seed, threshold);
            (results, report, mail.names)
        }
    };
    if let Some(path) = &args.roc {
        let chart = spamsort::eval::roc::svg(&pooled_roc_curves(&results), args.roc_log)
            .map_err(|e| anyhow::anyhow!("drawing the ROC chart: {e}"))?;
        super::output::write_whole(
            path,
            Replace::new(Kind::Chart, args.force),
            Readers::AsUsual,
            |w| Ok(w.write_all(chart.as_bytes())?),
        )?;
    }
    if let Some(path) = &args.scores {
        super::output::write_whole(
            path,
            Replace::new(Kind::Scores, args.force),
            Readers::AsUsual,
            |w| write_scores(w, &results, &names, threshold),
        )?;
    }
    let mut out = std::io::BufWriter::new(super::output::stdout());
    match args.format {
        Format::Json => report.write_json(&mut out)?,
        Format::Csv => report.write_csv(&mut out)?,
        Format::Table => report.write_table(&mut out)?,
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// The messages of an online run, in order (the index's, or a seeded shuffle of
/// --spam/--ham), tokenized as they are read: only their tokens are held, never their bytes
/// (held whole, an index of 20 lines naming one 40 MB message took 0.8 GB). No output of
/// `outputs` may replace a message an index lists.
fn online_mail(
    args: &EvalArgs,
    index: Option<&std::path::Path>,
    tokenizer: &TokenizerConfig,
    outputs: &[Output<'_>],
) -> anyhow::Result<TokenizedMail> {
    let Some(index) = index else {
        let mut mail = TokenizedMail::read(args.mail.stream(|| ())?, tokenizer)
            .context("reading the labeled mail")?;
        // The order a shuffle of the messages themselves would put them in.
        let mut order: Vec<usize> = (0..mail.labels.len()).collect();
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(args.seed));
        mail.reorder(&order)?;
        return Ok(mail);
    };
    anyhow::ensure!(
        args.mail.spam.is_empty() && args.mail.ham.is_empty(),
        "give either --online INDEX or --spam/--ham, not both"
    );
    // An index names its messages' files: no output may replace one of them.
    if !outputs.is_empty() {
        let entries =
            spamsort::corpus::trec::read_index(index).context("reading the TREC index")?;
        let sources: Vec<std::path::PathBuf> = entries.flatten().map(|e| e.path).collect();
        for &(flag, path, _) in outputs {
            let named = format!("{flag} {}", path.display());
            super::output::refuse_output_in(&named, path, sources.iter())?;
        }
    }
    let messages = LabeledCorpus::stream_trec(index, |e| {
        super::say(format_args!(
            "spamsort: skipped: {}",
            super::terminal::escape_for_terminal(&spamsort::error::ErrorChain(e).to_string())
        ))
    })
    .context("reading the TREC index")?;
    match TokenizedMail::read(messages, tokenizer) {
        Err(spamsort::Error::Corpus(spamsort::corpus::CorpusError::OneClassOnly { .. })) => {
            anyhow::bail!("the index needs at least one spam and one ham message")
        }
        mail => Ok(mail.context("reading the TREC index")?),
    }
}

/// Writes `results`' per-message scores (see `--scores`), the messages named by `names` (the
/// run's [`TokenizedMail::names`]).
fn write_scores(
    w: &mut dyn Write,
    results: &[spamsort::eval::FoldResult],
    names: &[String],
    spam_threshold: f64,
) -> anyhow::Result<()> {
    writeln!(w, "fold\tmodel\tmessage\tlabel\tp_spam\tdecision\tflagged")?;
    for r in results {
        let rows = (r.messages.iter().zip(&r.labels))
            .zip(r.p_spam.iter().zip(&r.decisions))
            .zip(r.called_spam(spam_threshold));
        for (((&i, label), (p, decision)), flagged) in rows {
            // A name is a path: a tab or a line end in it would break the line.
            let name = names.get(i).map_or("", String::as_str);
            let name = name.replace(['\t', '\n', '\r'], " ");
            let flagged = u8::from(flagged);
            writeln!(
                w,
                "{}\t{}\t{name}\t{label}\t{p}\t{decision}\t{flagged}",
                r.fold, r.model
            )?;
        }
    }
    Ok(())
}
