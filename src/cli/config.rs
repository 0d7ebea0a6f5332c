//! The optional TOML config files, in layers: the system's (`/etc/spamsort/config.toml`, or
//! `$SPAMSORT_SYSTEM_CONFIG`), under the user's (`$SPAMSORT_CONFIG`, else
//! `$XDG_CONFIG_HOME/spamsort/config.toml`, `~/.config/spamsort/config.toml`), under the file
//! given with `--config FILE`; flags and environment variables win over all three. A missing
//! system or user file is an empty layer; a missing `--config` file is an error. Keys (all
//! optional):
//!
//! ```toml
//! model = "~/.local/share/spamsort/model.spamsort"  # ~/: $HOME; relative: beside this file
//! classifier = "linear-svm"     # which trained model gives verdicts
//! spam_threshold = 0.98          # P(spam) at or above: spam
//! ham_threshold = 0.5            # P(spam) below: ham; between: unsure
//! header_prefix = "X-Spam-"      # field names: X-Spam-Flag, X-Spam-Status, ...
//! subject_tag = "***SPAM***"     # put before spam subjects ("" for none, the default)
//! bogosity = false               # also write a bogofilter-style X-Bogosity field
//! ```

use anyhow::Context;
use serde::Deserialize;
use spamsort::corpus::read_regular;
use std::path::{Path, PathBuf};

/// The system-wide config file, under every user's.
const SYSTEM_CONFIG: &str = "/etc/spamsort/config.toml";

/// The largest config file read (a real one has a few hundred bytes).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The config files' contents, merged; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: Option<PathBuf>,
    /// The config file that set `model` (for errors).
    #[serde(skip)]
    model_from: Option<PathBuf>,
    pub classifier: Option<String>,
    pub spam_threshold: Option<f64>,
    pub ham_threshold: Option<f64>,
    pub header_prefix: Option<String>,
    pub subject_tag: Option<String>,
    pub bogosity: Option<bool>,
}

/// Where the user's config file lives: `SPAMSORT_CONFIG`, else the XDG config directory.
pub fn config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPAMSORT_CONFIG").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = xdg_base("XDG_CONFIG_HOME", ".config")?;
    Some(base.join("spamsort").join("config.toml"))
}

/// An XDG base directory: the variable `xdg` if it holds an absolute path, else `$HOME/rel`
/// if `HOME` does; `None` if neither does. A relative or empty value is ignored, as the XDG
/// specification says: it would name a folder under whatever directory a command runs in
/// (procmail's, an MTA's), so `learn` would write a model there that `filter` never reads.
pub(super) fn xdg_base(xdg: &str, rel: &str) -> Option<PathBuf> {
    base_of(std::env::var_os(xdg), std::env::var_os("HOME"), rel)
}

/// [`xdg_base`] of the two variables' values.
fn base_of(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
    rel: &str,
) -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    xdg.and_then(absolute)
        .or_else(|| home.and_then(absolute).map(|h| h.join(rel)))
}

/// Where the system's config file lives: `SPAMSORT_SYSTEM_CONFIG` (for tests and unusual
/// installs), else `/etc/spamsort/config.toml`.
fn system_config_path() -> PathBuf {
    std::env::var_os("SPAMSORT_SYSTEM_CONFIG")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(SYSTEM_CONFIG), PathBuf::from)
}

impl Config {
    /// Reads and merges the layers: system, user, then `explicit` (`--config FILE`), each
    /// key taken from the last layer that sets it. A malformed file is an error.
    pub fn load(explicit: Option<&Path>) -> anyhow::Result<Config> {
        let mut config = Config::read(&system_config_path(), false)?;
        if let Some(user) = config_path() {
            config = Config::read(&user, false)?.over(config);
        }
        if let Some(path) = explicit {
            config = Config::read(path, true)?.over(config);
        }
        Ok(config)
    }

    /// One file; a missing one is an empty config unless it is `required`. Only a regular
    /// file of at most [`MAX_CONFIG_BYTES`] is read: a FIFO there hung every `filter`, and
    /// `/dev/zero` took all the memory there was.
    fn read(path: &Path, required: bool) -> anyhow::Result<Config> {
        match read_regular(path, MAX_CONFIG_BYTES) {
            Ok(bytes) => {
                let context = || format!("config file {}", path.display());
                let text = String::from_utf8(bytes).with_context(context)?;
                let config: Config = toml::from_str(&text).with_context(context)?;
                Ok(config.relative_to(path))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                Ok(Config::default())
            }
            Err(e) => Err(e).with_context(|| format!("reading config file {}", path.display())),
        }
    }

    /// This layer, read from the file at `path`, with a relative `model` path taken as under
    /// that file's directory: otherwise it would name a file under whatever directory a command
    /// runs in (procmail's, an MTA's), so `learn` would write a model that `filter` never
    /// reads. One starting with `~` is left for [`Config::model_path`], as is an empty one:
    /// they matter only if no flag or variable names the model.
    fn relative_to(mut self, path: &Path) -> Config {
        let Some(model) = self.model.as_mut() else {
            return self;
        };
        self.model_from = Some(path.to_path_buf());
        if model.is_relative()
            && !model.as_os_str().is_empty()
            && !model.starts_with("~")
            && let Some(dir) = std::path::absolute(path)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            *model = dir.join(&*model);
        }
        self
    }

    /// The model file the config files name, if one does: `~` at its start is the home
    /// directory (`$HOME`, as a shell reads it). An error names the config file that set it
    /// when it is empty (it names no file) or starts with `~` and `HOME` is not an absolute
    /// path.
    pub fn model_path(&self) -> anyhow::Result<Option<PathBuf>> {
        self.model_path_with(std::env::var_os("HOME"))
    }

    /// [`Config::model_path`] with `home` for `$HOME`.
    fn model_path_with(&self, home: Option<std::ffi::OsString>) -> anyhow::Result<Option<PathBuf>> {
        let Some(model) = &self.model else {
            return Ok(None);
        };
        let file = || {
            let from = self.model_from.as_deref().unwrap_or(Path::new("?"));
            format!("config file {}", from.display())
        };
        if model.as_os_str().is_empty() {
            anyhow::bail!("{}: `model` is empty", file());
        }
        let Ok(rest) = model.strip_prefix("~") else {
            return Ok(Some(model.clone()));
        };
        match home.map(PathBuf::from).filter(|h| h.is_absolute()) {
            Some(home) => Ok(Some(home.join(rest))),
            None => anyhow::bail!(
                "{}: `model` starts with ~ but HOME is not set to an absolute path",
                file()
            ),
        }
    }

    /// This layer over `lower`: each key from here if set, else from there.
    fn over(self, lower: Config) -> Config {
        let (model, model_from) = match self.model {
            Some(model) => (Some(model), self.model_from),
            None => (lower.model, lower.model_from),
        };
        Config {
            model,
            model_from,
            classifier: self.classifier.or(lower.classifier),
            spam_threshold: self.spam_threshold.or(lower.spam_threshold),
            ham_threshold: self.ham_threshold.or(lower.ham_threshold),
            header_prefix: self.header_prefix.or(lower.header_prefix),
            subject_tag: self.subject_tag.or(lower.subject_tag),
            bogosity: self.bogosity.or(lower.bogosity),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_model_in_a_config_file_is_under_the_files_directory() {
        // Regression: it was taken as under the directory the command ran in.
        let config = |model: &str| Config {
            model: Some(PathBuf::from(model)),
            ..Config::default()
        };
        let home = || Some(std::ffi::OsString::from("/home/me"));
        let read = |model, path| {
            let config = config(model).relative_to(Path::new(path));
            config.model_path_with(home()).unwrap().unwrap()
        };
        assert_eq!(
            read("m.spamsort", "/etc/spamsort/config.toml"),
            Path::new("/etc/spamsort/m.spamsort")
        );
        assert_eq!(
            read("/abs/m", "/etc/spamsort/config.toml"),
            Path::new("/abs/m")
        );
        let here = std::env::current_dir().unwrap();
        assert_eq!(read("d/m", "c.toml"), here.join("d/m"));
        // `~/` is the home directory, as a shell reads it (it was a folder named `~` under
        // the file's directory); `~user` is not expanded; an empty path names no file.
        assert_eq!(read("~/m", "/etc/c.toml"), Path::new("/home/me/m"));
        assert_eq!(read("~", "/etc/c.toml"), Path::new("/home/me"));
        assert_eq!(read("~me/m", "/etc/c.toml"), Path::new("/etc/~me/m"));
        let error = |model, home: Option<&str>| {
            let home = home.map(std::ffi::OsString::from);
            let config = config(model).relative_to(Path::new("/etc/c.toml"));
            config.model_path_with(home).unwrap_err().to_string()
        };
        assert!(error("", Some("/h")).contains("/etc/c.toml: `model` is empty"));
        assert!(error("~/m", None).contains("HOME is not set"));
        assert!(error("~/m", Some("rel")).contains("HOME is not set"));
        // Regression: those errors came when the config was read, so a flag or variable naming
        // the model did not help (a filter run without HOME passed every message through).
        let upper = config("/abs/m").relative_to(Path::new("/u.toml"));
        let lower = config("~/m").relative_to(Path::new("/etc/c.toml"));
        assert_eq!(
            upper.over(lower).model_path_with(None).unwrap().unwrap(),
            Path::new("/abs/m")
        );
    }

    #[test]
    fn xdg_bases_are_absolute_or_none() {
        let os = |v: &str| Some(std::ffi::OsString::from(v));
        let base = |xdg, home| base_of(xdg, home, ".config");
        assert_eq!(base(os("/x"), os("/h")), Some(PathBuf::from("/x")));
        assert_eq!(base(None, os("/h")), Some(PathBuf::from("/h/.config")));
        // Regression: an empty HOME or a relative XDG variable named a folder under the
        // directory the command ran in.
        assert_eq!(base(os(""), os("/h")), Some(PathBuf::from("/h/.config")));
        assert_eq!(base(os("rel"), os("/h")), Some(PathBuf::from("/h/.config")));
        assert_eq!(base(None, os("")), None);
        assert_eq!(base(os("rel"), os("home")), None);
        assert_eq!(base(None, None), None);
    }
}
