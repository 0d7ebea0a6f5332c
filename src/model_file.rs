//! The model file container: what makes a file on disk trustworthy before its contents are
//! used. Layout (all integers little-endian):
//!
//! ```text
//! offset  size  field
//!      0     8  MAGIC "SPAMSORT"
//!      8     4  FORMAT_VERSION (u32)
//!     12     4  reserved, zero
//!     16     8  payload length in bytes (u64)
//!     24     4  CRC-32 of the payload
//!     28     -  payload: bincode 2 (standard config) of the caller's serde type
//! ```
//!
//! Loading checks magic, version, length and checksum before decoding, and decodes with a size
//! limit, so a truncated, corrupted, foreign or newer file gives a [`ModelFileError`] naming
//! the file, never a panic or a huge allocation. Saving is atomic: a temporary file in the same
//! directory, fsync, rename, fsync of the directory; a crash leaves the old file or the new one.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::Write;
use std::path::{Path, PathBuf};

/// First bytes of every model file.
pub const MAGIC: [u8; 8] = *b"SPAMSORT";
/// Version of the layout and payload written by this build. Files with a higher version are
/// refused with [`ModelFileError::NewerVersion`].
pub const FORMAT_VERSION: u32 = 1;
/// Size of the fixed header before the payload.
pub const HEADER_LEN: usize = 28;
/// Largest payload accepted, a guard against absurd length fields.
const MAX_PAYLOAD: usize = 1 << 31;

/// Why a model file could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelFileError {
    /// The file could not be read or written.
    #[error("model file {path}: {source}")]
    Io {
        /// The model file.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
    /// The file does not start with the spamsort magic bytes.
    #[error("{path} is not a spamsort model file (train one with `spamsort train`)")]
    NotAModel {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by a newer spamsort.
    #[error(
        "model file {path} has format version {found}; this spamsort reads up to {supported}: upgrade spamsort or retrain"
    )]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// Version in the file.
        found: u32,
        /// Highest version this build reads.
        supported: u32,
    },
    /// The file is shorter than its header says.
    #[error("model file {path} is truncated ({got} of {expected} bytes): retrain or restore it")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes the header promises.
        expected: u64,
        /// Bytes present.
        got: u64,
    },
    /// Checksum mismatch, trailing bytes, or contents that do not decode or validate.
    #[error("model file {path} is corrupt ({reason}): retrain or restore it")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl ModelFileError {
    /// A `Corrupt` error for contents that decoded but failed the caller's validation.
    pub fn invalid(path: &Path, reason: impl Into<String>) -> Self {
        ModelFileError::Corrupt {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_PAYLOAD>()
}

/// Encodes `value` into the full file layout (header and payload).
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let payload = bincode::serde::encode_to_vec(value, bincode_config())
        .expect("in-memory encoding of model types cannot fail");
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Checks and decodes the bytes of a model file. `path` is only used in errors.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<T, ModelFileError> {
    let p = || path.to_path_buf();
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(ModelFileError::NotAModel { path: p() });
    }
    if bytes.len() < HEADER_LEN {
        let (expected, got) = (HEADER_LEN as u64, bytes.len() as u64);
        return Err(ModelFileError::Truncated {
            path: p(),
            expected,
            got,
        });
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version > FORMAT_VERSION {
        return Err(ModelFileError::NewerVersion {
            path: p(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if version == 0 {
        return Err(ModelFileError::invalid(path, "format version 0"));
    }
    let declared = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER_LEN..];
    let expected = HEADER_LEN as u64 + declared;
    match (payload.len() as u64).cmp(&declared) {
        std::cmp::Ordering::Less => {
            return Err(ModelFileError::Truncated {
                path: p(),
                expected,
                got: bytes.len() as u64,
            });
        }
        std::cmp::Ordering::Greater => {
            return Err(ModelFileError::invalid(
                path,
                "trailing bytes after the payload",
            ));
        }
        std::cmp::Ordering::Equal => {}
    }
    if crc32fast::hash(payload) != u32_at(24) {
        return Err(ModelFileError::invalid(path, "checksum mismatch"));
    }
    let (value, used) = bincode::serde::decode_from_slice(payload, bincode_config())
        .map_err(|e| ModelFileError::invalid(path, format!("undecodable contents: {e}")))?;
    if used != payload.len() {
        return Err(ModelFileError::invalid(
            path,
            "payload longer than its contents",
        ));
    }
    Ok(value)
}

/// Reads and decodes a model file.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, ModelFileError> {
    let bytes = std::fs::read(path).map_err(|source| ModelFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode(&bytes, path)
}

/// Writes `value` to `path` atomically: readers see the old file or the complete new one.
/// The file is created readable by its owner only (it describes the owner's mail).
pub fn save<T: Serialize>(value: &T, path: &Path) -> Result<(), ModelFileError> {
    let io = |source| ModelFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let bytes = encode(value);
    // NamedTempFile removes the temporary file if anything below fails.
    let mut tmp = tempfile::Builder::new()
        .prefix(".spamsort-model-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(&bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let bytes = encode(&42u32);
        assert_eq!(&bytes[..8], b"SPAMSORT");
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            FORMAT_VERSION
        );
        assert_eq!(
            u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
            (bytes.len() - HEADER_LEN) as u64
        );
        assert_eq!(decode::<u32>(&bytes, Path::new("m")).unwrap(), 42);
    }

    #[test]
    fn newer_version_refused() {
        let mut bytes = encode(&1u8);
        bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        let err = decode::<u8>(&bytes, Path::new("m")).unwrap_err();
        assert!(
            matches!(err, ModelFileError::NewerVersion { found, .. } if found == FORMAT_VERSION + 1)
        );
    }
}
