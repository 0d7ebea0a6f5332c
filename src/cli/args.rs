//! Argument groups shared by several subcommands, and how they combine with the config file
//! and defaults into library settings.

use super::config::Config;
use anyhow::Context;
use spamsort::Thresholds;
use spamsort::filter::scorer::{Scorer, ScorerFile};
use spamsort::model_file::UpdateLock;
use spamsort::models::ModelKind;
use std::path::{Path, PathBuf};

/// Where the model file lives.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// Model file [default: config `model`, else $XDG_DATA_HOME/spamsort/model.spamsort]
    #[arg(long, short = 'm', value_name = "FILE", env = "SPAMSORT_MODEL")]
    pub model: Option<PathBuf>,
}

impl ModelArgs {
    /// The model path: flag or environment variable, then the config file, then the XDG data
    /// location.
    pub fn path(&self, config: &Config) -> anyhow::Result<PathBuf> {
        if let Some(p) = self.model.as_ref().or(config.model.as_ref()) {
            return Ok(p.clone());
        }
        let data = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => {
                let home = std::env::var_os("HOME").ok_or_else(|| {
                    anyhow::anyhow!("no --model given and neither XDG_DATA_HOME nor HOME is set")
                })?;
                PathBuf::from(home).join(".local/share")
            }
        };
        Ok(data.join("spamsort").join("model.spamsort"))
    }
}

/// Takes the update lock of the model file at `path` (which every save needs), saying on
/// stderr when it has to wait for another writer first.
pub fn lock_model(path: &Path) -> anyhow::Result<UpdateLock> {
    Ok(spamsort::model_file::lock_for_update_with(
        path,
        waiting(path),
    )?)
}

/// What to do when another writer holds the model file's update lock: say so on stderr.
pub fn waiting(path: &Path) -> impl FnOnce() + '_ {
    move || {
        eprintln!(
            "spamsort: waiting for another writer of {} to finish ...",
            path.display()
        )
    }
}

/// Which model answers and where its verdict cut-offs lie.
#[derive(Debug, Clone, clap::Args)]
pub struct VerdictArgs {
    /// Use this trained model instead of the active one
    /// (bernoulli-nb, multinomial-nb, linear-svm, logistic-regression, fusion).
    #[arg(long, value_name = "NAME")]
    pub classifier: Option<String>,
    /// P(spam) at or above which a message is spam [default: from the model file, 0.9]
    #[arg(long, value_name = "P")]
    pub spam_threshold: Option<f64>,
    /// P(spam) below which a message is ham; between the two it is unsure [default: 0.5]
    #[arg(long, value_name = "P")]
    pub ham_threshold: Option<f64>,
}

/// Settings checked before any I/O: usage errors surface first.
pub struct Verdicts {
    pub classifier: Option<ModelKind>,
    spam: Option<f64>,
    ham: Option<f64>,
}

impl VerdictArgs {
    /// Validates the flags (config file values fill what flags leave open).
    pub fn resolve(&self, config: &Config) -> anyhow::Result<Verdicts> {
        let classifier = self.classifier.as_ref().or(config.classifier.as_ref());
        let classifier = classifier.map(|c| c.parse::<ModelKind>()).transpose()?;
        let verdicts = Verdicts {
            classifier,
            spam: self.spam_threshold.or(config.spam_threshold),
            ham: self.ham_threshold.or(config.ham_threshold),
        };
        if verdicts.spam.is_some() || verdicts.ham.is_some() {
            let d = Thresholds::default();
            Thresholds::new(
                verdicts.spam.unwrap_or(d.spam()),
                verdicts.ham.unwrap_or(d.ham()),
            )?;
        }
        Ok(verdicts)
    }
}

impl Verdicts {
    /// The scorer over `file` with the threshold choices applied.
    pub fn scorer<'a>(&self, file: &'a ScorerFile) -> anyhow::Result<Scorer<'a>> {
        let mut scorer = file.scorer()?;
        if self.spam.is_some() || self.ham.is_some() {
            let t = scorer.thresholds();
            scorer.set_thresholds(Thresholds::new(
                self.spam.unwrap_or(t.spam()),
                self.ham.unwrap_or(t.ham()),
            )?);
        }
        Ok(scorer)
    }
}

/// Reads what scoring needs from the model file: the head and the chosen model.
pub fn open_model(
    model: &ModelArgs,
    verdicts: &Verdicts,
    config: &Config,
) -> anyhow::Result<ScorerFile> {
    Ok(ScorerFile::open(&model.path(config)?, verdicts.classifier)?)
}

/// Labeled mail and what to fit on it: shared by `train` and `eval`.
#[derive(Debug, Clone, clap::Args)]
pub struct LabeledMailArgs {
    /// Mailboxes of spam (maildir, mbox, MH or plain folder, TREC index); repeatable; needed.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub spam: Vec<PathBuf>,
    /// Mailboxes of ham (wanted mail); repeatable; needed.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub ham: Vec<PathBuf>,
    /// Models, comma-separated [default: all four and their fusion:
    /// bernoulli-nb,multinomial-nb,linear-svm,logistic-regression,fusion]. Fusion stacks the
    /// others and needs two of them.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub models: Vec<String>,
    /// Drop tokens seen in fewer training messages than this.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub min_df: u32,
}

impl LabeledMailArgs {
    /// The models named by `--models` (all four and fusion if none), checked before any I/O.
    pub fn kinds(&self) -> anyhow::Result<Vec<ModelKind>> {
        if self.models.is_empty() {
            return Ok(ModelKind::WITH_FUSION.to_vec());
        }
        let kinds: Vec<ModelKind> = self
            .models
            .iter()
            .map(|m| m.parse())
            .collect::<Result<_, _>>()?;
        if kinds.contains(&ModelKind::Fusion) {
            let others = kinds.iter().filter(|&&k| k != ModelKind::Fusion).count();
            anyhow::ensure!(
                others >= 2 && others + 1 == kinds.len(),
                "--models: fusion (once) needs at least two other models to stack"
            );
        }
        Ok(kinds)
    }

    /// Reads the mail; unreadable messages are reported and skipped (and counted).
    pub fn read(&self) -> anyhow::Result<(spamsort::LabeledCorpus, usize)> {
        anyhow::ensure!(
            !self.spam.is_empty() && !self.ham.is_empty(),
            "give the labeled mail with --spam PATH... and --ham PATH..."
        );
        let mut skipped = 0;
        let corpus = spamsort::LabeledCorpus::read(&self.spam, &self.ham, |e| {
            skipped += 1;
            eprintln!(
                "spamsort: skipped: {}",
                super::terminal::escape_for_terminal(&e.to_string())
            );
        })
        .context("reading the labeled mail")?;
        anyhow::ensure!(
            corpus.count(spamsort::Label::Spam) > 0 && corpus.count(spamsort::Label::Ham) > 0,
            "at least one spam and one ham message are needed (found {} spam, {} ham)",
            corpus.count(spamsort::Label::Spam),
            corpus.count(spamsort::Label::Ham)
        );
        Ok((corpus, skipped))
    }
}
