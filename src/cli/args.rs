//! Argument groups shared by several subcommands.

use std::path::PathBuf;

/// Where the model file lives.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// Model file [default: $XDG_DATA_HOME/spamsort/model.spamsort]
    #[arg(long, short = 'm', value_name = "FILE", env = "SPAMSORT_MODEL")]
    pub model: Option<PathBuf>,
}

impl ModelArgs {
    /// The model path: the flag or environment variable, else the XDG data location.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        if let Some(p) = &self.model {
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
