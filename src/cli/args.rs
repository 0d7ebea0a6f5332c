//! Argument groups shared by several subcommands, and how they combine with the config file
//! and defaults into library settings.

use super::config::Config;
use anyhow::Context;
use spamsort::filter::policy::{self, HeaderStyle, Policy};
use spamsort::filter::scorer::ScorerFile;
use spamsort::model_file::UpdateLock;
use spamsort::models::ModelKind;
use std::path::{Path, PathBuf};

/// The environment variable naming the model file when no `--model` does.
pub const MODEL_ENV: &str = "SPAMSORT_MODEL";

// Where the model file lives, and which config file to read over the system's and the user's.
// (Plain comments on these argument structs, not doc comments: see `Command` in cli/mod.rs.)
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelArgs {
    /// Model file [default: config `model`, else $XDG_DATA_HOME/spamsort/model.spamsort]
    #[arg(long, short = 'm', value_name = "FILE", env = MODEL_ENV)]
    pub model: Option<PathBuf>,
    /// Config file read over /etc/spamsort/config.toml and the user's config file (flags
    /// still win over it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl ModelArgs {
    /// The merged config files (see `config.rs`), `--config FILE` the top layer.
    pub fn config(&self) -> anyhow::Result<Config> {
        Config::load(self.config.as_deref())
    }

    /// The model path: flag or environment variable, then the config file, then the XDG data
    /// location.
    pub fn path(&self, config: &Config) -> anyhow::Result<PathBuf> {
        if let Some(p) = &self.model {
            return Ok(p.clone());
        }
        if let Some(p) = config.model_path()? {
            return Ok(p);
        }
        let data = super::config::xdg_base("XDG_DATA_HOME", ".local/share").ok_or_else(|| {
            anyhow::anyhow!(
                "no --model given and neither XDG_DATA_HOME nor HOME is set to an absolute path"
            )
        })?;
        Ok(data.join("spamsort").join("model.spamsort"))
    }
}

/// Fails if the model file at `path`, or its lock file beside it, would be (in) one of
/// `inputs`, the mail a command reads (see [`super::output::refuse_output_in`]). A lock file
/// that has no place (a link to nothing) is left to the lock to refuse.
pub fn refuse_model_in<'a>(
    path: &Path,
    inputs: impl Iterator<Item = &'a PathBuf> + Clone,
) -> anyhow::Result<()> {
    let named = format!("--model {}", path.display());
    super::output::refuse_output_in(&named, path, inputs.clone())?;
    if let Ok(lock) = spamsort::model_file::lock_file(path) {
        let named = format!("{named}: its lock file {}", lock.display());
        super::output::refuse_output_in(&named, &lock, inputs)?;
    }
    Ok(())
}

/// Makes the directory the model file at `path` goes in, if missing, once `path` is known to
/// name a model file (see `spamsort::model_file::lock_file`): `x/new/` is refused, not made.
pub fn make_model_dir(path: &Path) -> anyhow::Result<()> {
    if let Err(e) = spamsort::model_file::lock_file(path)
        && e.kind() == std::io::ErrorKind::InvalidInput
    {
        anyhow::bail!("{}: {e}", path.display());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(())
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
        super::say(format_args!(
            "spamsort: waiting for another writer of {} to finish ...",
            path.display()
        ))
    }
}

/// Parses a model name on the command line: the names are [`ModelKind::WITH_FUSION`]'s, so a
/// new kind needs no edit here, and `--help`, completions and usage errors list them.
pub fn model_kind() -> impl clap::builder::TypedValueParser<Value = ModelKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(ModelKind::WITH_FUSION.map(ModelKind::name))
        .try_map(|name| name.parse::<ModelKind>())
}

// Which model answers and where its verdict cut-offs lie.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct VerdictArgs {
    /// Use this trained model instead of the active one.
    #[arg(long, value_name = "NAME", value_parser = model_kind())]
    pub classifier: Option<ModelKind>,
    /// P(spam) at or above which a message is spam [default: from the model file, 0.98]
    #[arg(long, value_name = "P")]
    pub spam_threshold: Option<f64>,
    /// P(spam) below which a message is ham; between the two it is unsure [default: 0.5]
    #[arg(long, value_name = "P")]
    pub ham_threshold: Option<f64>,
}

// How verdicts are written into headers (`filter`, `daemon --add-headers`, `serve`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HeaderArgs {
    /// Start every field name with this instead of `X-Spam-` (such as `X-Spamsort-`, to run
    /// behind SpamAssassin and leave its fields alone; it must start with X-Spam) [default:
    /// config `header_prefix`, else X-Spam-]
    #[arg(long, value_name = "PREFIX")]
    pub header_prefix: Option<String>,
    /// Put TAG (without a value: ***SPAM***; "" for none) before the subject of spam
    /// [default: config `subject_tag`, else none]
    #[arg(long, value_name = "TAG", num_args = 0..=1, require_equals = true,
          default_missing_value = policy::DEFAULT_SUBJECT_TAG)]
    pub subject_tag: Option<String>,
    /// Also write a bogofilter-style `X-Bogosity: Spam|Ham|Unsure, tests=bogofilter, ...`
    /// field (`--bogosity=false`: not even when the config file asks) [default: config
    /// `bogosity`, else false]
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    pub bogosity: Option<bool>,
}

impl VerdictArgs {
    /// The scoring policy: these flags over the config file's keys, with `headers` (the
    /// header flags of commands that write or take off spamsort's marks) likewise; checked
    /// before any I/O. Without `headers` (a command that neither writes nor reads marks) the
    /// config file's header settings are not read, so one that a release refuses stops only
    /// the commands it matters to.
    pub fn policy(&self, config: &Config, headers: Option<&HeaderArgs>) -> anyhow::Result<Policy> {
        let classifier = match self.classifier {
            Some(kind) => Some(kind),
            None => config.classifier.as_deref().map(str::parse).transpose()?,
        };
        let style = match headers {
            None => HeaderStyle::default(),
            Some(h) => HeaderStyle::new(
                (h.header_prefix.as_ref())
                    .or(config.header_prefix.as_ref())
                    .map_or(policy::DEFAULT_PREFIX, String::as_str),
                (h.subject_tag.as_ref())
                    .or(config.subject_tag.as_ref())
                    .map(String::as_str),
                h.bogosity.or(config.bogosity).unwrap_or(false),
            )?,
        };
        Ok(Policy::new(
            classifier,
            self.spam_threshold.or(config.spam_threshold),
            self.ham_threshold.or(config.ham_threshold),
            style,
        )?)
    }
}

/// Reads what scoring needs from the model file: the head and the policy's model.
pub fn open_model(
    model: &ModelArgs,
    policy: &Policy,
    config: &Config,
) -> anyhow::Result<ScorerFile> {
    Ok(ScorerFile::open(&model.path(config)?, policy.classifier())?)
}

// Labeled mail and what to fit on it: shared by `train` and `eval`.
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
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = model_kind())]
    pub models: Vec<ModelKind>,
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
        let kinds = self.models.clone();
        // A model named twice was fitted and reported twice: `eval` merged both into one row
        // with every fold twice (its spread taken over the copies, the online header's counts
        // doubled), `train` stored it twice, and fusion stacked a model with itself.
        if let Some(twice) = (kinds.iter()).find(|k| kinds.iter().filter(|o| o == k).count() > 1) {
            anyhow::bail!("--models: {twice} is named more than once; name each model once");
        }
        if kinds.contains(&ModelKind::Fusion) {
            let others = kinds.iter().filter(|&&k| k != ModelKind::Fusion).count();
            anyhow::ensure!(
                others >= 2 && others + 1 == kinds.len(),
                "--models: fusion (once) needs at least two other models to stack"
            );
        }
        Ok(kinds)
    }

    /// The mail as a stream read as it is advanced; unreadable messages are reported and
    /// skipped, and `skipped` is called for each.
    pub fn stream(
        &self,
        mut skipped: impl FnMut(),
    ) -> anyhow::Result<spamsort::corpus::LabeledMail<impl FnMut(&spamsort::corpus::CorpusError)>>
    {
        anyhow::ensure!(
            !self.spam.is_empty() && !self.ham.is_empty(),
            "give the labeled mail with --spam PATH... and --ham PATH..."
        );
        let warn = move |e: &spamsort::corpus::CorpusError| {
            skipped();
            super::say(format_args!(
                "spamsort: skipped: {}",
                super::terminal::escape_for_terminal(&spamsort::error::ErrorChain(e).to_string())
            ));
        };
        spamsort::corpus::LabeledMail::open(&self.spam, &self.ham, warn)
            .context("reading the labeled mail")
    }
}
