//! The optional TOML config file, `$XDG_CONFIG_HOME/spamsort/config.toml`
//! (`~/.config/spamsort/config.toml`). Settings given as flags or environment variables win
//! over it; it wins over the built-in defaults. Keys:
//!
//! ```toml
//! model = "/home/me/.local/share/spamsort/model.spamsort"
//! classifier = "linear-svm"     # which trained model gives verdicts
//! spam_threshold = 0.9           # P(spam) at or above: spam
//! ham_threshold = 0.5            # P(spam) below: ham; between: unsure
//! ```

use anyhow::Context;
use serde::Deserialize;
use std::path::PathBuf;

/// The config file's contents; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: Option<PathBuf>,
    pub classifier: Option<String>,
    pub spam_threshold: Option<f64>,
    pub ham_threshold: Option<f64>,
}

/// Where the config file lives: `SPAMSORT_CONFIG`, else the XDG config directory.
pub fn config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPAMSORT_CONFIG").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("spamsort").join("config.toml"))
}

impl Config {
    /// Reads the config file; a missing file is an empty config, a malformed one an error.
    pub fn load() -> anyhow::Result<Config> {
        let Some(path) = config_path() else {
            return Ok(Config::default());
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                toml::from_str(&text).with_context(|| format!("config file {}", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(e).with_context(|| format!("reading config file {}", path.display())),
        }
    }
}
