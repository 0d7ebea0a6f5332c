//! The model file container: what makes a file on disk trustworthy before its contents are
//! used, and what lets the one-process-per-message filter read only what it needs.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! offset      size    field
//!      0         8    MAGIC "SPAMSORT"
//!      8         4    FORMAT_VERSION (u32)
//!     12         4    section count N (u32, at most MAX_SECTIONS)
//!     16    24 * N    directory: per section offset (u64), length (u64), CRC-32 (u32), zero (u32)
//! 16+24N         4    CRC-32 of everything before it
//!      -         -    the sections: bincode 2 (standard config) of the caller's serde types
//! ```
//!
//! A reader checks magic, version, the directory's checksum and that every section lies inside
//! the file, then reads and checks (CRC) only the sections it asks for, and decodes them with a
//! size limit. So a truncated, corrupted, foreign or newer file gives a [`ModelFileError`]
//! naming the file, never a panic or a huge allocation. Saving is atomic: a temporary file in
//! the same directory, fsync, rename, fsync of the directory; a crash leaves the old file or
//! the new one, never a mix.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// First bytes of every model file.
pub const MAGIC: [u8; 8] = *b"SPAMSORT";
/// Version of the layout and payload written by this build. Files with a higher version are
/// refused with [`ModelFileError::NewerVersion`].
pub const FORMAT_VERSION: u32 = 1;
/// Most sections a file may declare.
pub const MAX_SECTIONS: usize = 64;
/// Largest section accepted, a guard against absurd length fields.
const MAX_SECTION: usize = 1 << 31;
const DIRECTORY_ENTRY: usize = 24;

/// Bytes before the first section of a file with `sections` sections.
pub const fn header_len(sections: usize) -> usize {
    16 + DIRECTORY_ENTRY * sections + 4
}

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
    /// Checksum mismatch, a bad directory, or contents that do not decode or validate.
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

    fn io(path: &Path, source: std::io::Error) -> Self {
        ModelFileError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_SECTION>()
}

/// Encodes one value as section bytes.
pub fn encode_section<T: Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, bincode_config())
        .expect("in-memory encoding of model types cannot fail")
}

/// Lays sections out as a complete file.
pub fn encode_sections(sections: &[Vec<u8>]) -> Vec<u8> {
    assert!(sections.len() <= MAX_SECTIONS, "too many sections");
    let head = header_len(sections.len());
    let mut out = Vec::with_capacity(head + sections.iter().map(Vec::len).sum::<usize>());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    let mut offset = head as u64;
    for s in sections {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(s).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        offset += s.len() as u64;
    }
    out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
    for s in sections {
        out.extend_from_slice(s);
    }
    out
}

/// A one-section file holding `value`.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    encode_sections(&[encode_section(value)])
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    offset: u64,
    len: u64,
    crc: u32,
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

/// Checks the fixed header (`prefix` holds at least its first 16 bytes) and returns the
/// section count.
fn parse_prefix(prefix: &[u8], path: &Path) -> Result<usize, ModelFileError> {
    if prefix.len() < MAGIC.len() || prefix[..MAGIC.len()] != MAGIC {
        return Err(ModelFileError::NotAModel {
            path: path.to_path_buf(),
        });
    }
    if prefix.len() < 16 {
        let got = prefix.len() as u64;
        return Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected: 16,
            got,
        });
    }
    let version = u32_at(prefix, 8);
    if version > FORMAT_VERSION {
        let (found, supported) = (version, FORMAT_VERSION);
        return Err(ModelFileError::NewerVersion {
            path: path.to_path_buf(),
            found,
            supported,
        });
    }
    if version == 0 {
        return Err(ModelFileError::invalid(path, "format version 0"));
    }
    let n = u32_at(prefix, 12) as usize;
    if n == 0 || n > MAX_SECTIONS {
        return Err(ModelFileError::invalid(path, format!("{n} sections")));
    }
    Ok(n)
}

/// Checks the complete header and directory against the file length.
fn parse_directory(
    head: &[u8],
    n: usize,
    file_len: u64,
    path: &Path,
) -> Result<Vec<Entry>, ModelFileError> {
    let crc_at = header_len(n) - 4;
    if crc32fast::hash(&head[..crc_at]) != u32_at(head, crc_at) {
        return Err(ModelFileError::invalid(path, "header checksum mismatch"));
    }
    let mut entries = Vec::with_capacity(n);
    let mut expected_offset = header_len(n) as u64;
    for i in 0..n {
        let at = 16 + DIRECTORY_ENTRY * i;
        let e = Entry {
            offset: u64_at(head, at),
            len: u64_at(head, at + 8),
            crc: u32_at(head, at + 16),
        };
        if e.offset != expected_offset || e.len > MAX_SECTION as u64 {
            return Err(ModelFileError::invalid(path, "bad section directory"));
        }
        expected_offset += e.len;
        entries.push(e);
    }
    match file_len.cmp(&expected_offset) {
        std::cmp::Ordering::Less => Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected: expected_offset,
            got: file_len,
        }),
        std::cmp::Ordering::Greater => Err(ModelFileError::invalid(
            path,
            "trailing bytes after the last section",
        )),
        std::cmp::Ordering::Equal => Ok(entries),
    }
}

fn decode_section<T: DeserializeOwned>(
    bytes: &[u8],
    crc: u32,
    path: &Path,
) -> Result<T, ModelFileError> {
    if crc32fast::hash(bytes) != crc {
        return Err(ModelFileError::invalid(path, "checksum mismatch"));
    }
    let (value, used) = bincode::serde::decode_from_slice(bytes, bincode_config())
        .map_err(|e| ModelFileError::invalid(path, format!("undecodable contents: {e}")))?;
    if used != bytes.len() {
        return Err(ModelFileError::invalid(
            path,
            "section longer than its contents",
        ));
    }
    Ok(value)
}

/// Checks and decodes section 0 of in-memory file bytes. `path` is only used in errors.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<T, ModelFileError> {
    let n = parse_prefix(&bytes[..bytes.len().min(16)], path)?;
    if bytes.len() < header_len(n) {
        let (expected, got) = (header_len(n) as u64, bytes.len() as u64);
        return Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected,
            got,
        });
    }
    let entries = parse_directory(&bytes[..header_len(n)], n, bytes.len() as u64, path)?;
    let e = entries[0];
    decode_section(
        &bytes[e.offset as usize..(e.offset + e.len) as usize],
        e.crc,
        path,
    )
}

/// An open model file whose directory has been checked; sections are read on request.
pub struct ModelFileReader {
    file: std::fs::File,
    path: PathBuf,
    entries: Vec<Entry>,
    /// Sections whose checksum was already verified (by `read` or `verify_unread`).
    verified: Vec<bool>,
}

impl ModelFileReader {
    /// Opens a model file and checks its header and directory.
    pub fn open(path: &Path) -> Result<Self, ModelFileError> {
        let mut file = std::fs::File::open(path).map_err(|e| ModelFileError::io(path, e))?;
        let file_len = file
            .metadata()
            .map_err(|e| ModelFileError::io(path, e))?
            .len();
        let mut prefix = Vec::with_capacity(16);
        (&mut file)
            .take(16)
            .read_to_end(&mut prefix)
            .map_err(|e| ModelFileError::io(path, e))?;
        let n = parse_prefix(&prefix, path)?;
        let mut head = prefix;
        (&mut file)
            .take((header_len(n) - 16) as u64)
            .read_to_end(&mut head)
            .map_err(|e| ModelFileError::io(path, e))?;
        if head.len() < header_len(n) {
            let (expected, got) = (header_len(n) as u64, file_len);
            return Err(ModelFileError::Truncated {
                path: path.to_path_buf(),
                expected,
                got,
            });
        }
        let entries = parse_directory(&head, n, file_len, path)?;
        let verified = vec![false; entries.len()];
        Ok(ModelFileReader {
            file,
            path: path.to_path_buf(),
            entries,
            verified,
        })
    }

    /// Number of sections.
    pub fn sections(&self) -> usize {
        self.entries.len()
    }

    /// Reads, checks and decodes section `i`.
    pub fn read<T: DeserializeOwned>(&mut self, i: usize) -> Result<T, ModelFileError> {
        let e = *self
            .entries
            .get(i)
            .ok_or_else(|| ModelFileError::invalid(&self.path, format!("missing section {i}")))?;
        let io = |err| ModelFileError::io(&self.path, err);
        self.file.seek(SeekFrom::Start(e.offset)).map_err(io)?;
        let mut bytes = vec![0; e.len as usize];
        self.file
            .read_exact(&mut bytes)
            .map_err(|err| ModelFileError::io(&self.path, err))?;
        let value = decode_section(&bytes, e.crc, &self.path)?;
        self.verified[i] = true;
        Ok(value)
    }
}

impl ModelFileReader {
    /// Checks the checksum of every section not read yet, without decoding it, through one
    /// small buffer: a damaged file is refused even where the damage lies in a section the
    /// caller does not need, and no section is read twice.
    pub fn verify_unread(&mut self) -> Result<(), ModelFileError> {
        let mut buf = vec![0u8; 64 * 1024];
        let unread: Vec<Entry> = self
            .entries
            .iter()
            .zip(&self.verified)
            .filter(|(_, done)| !**done)
            .map(|(e, _)| *e)
            .collect();
        for e in unread {
            let io = |err| ModelFileError::io(&self.path, err);
            self.file.seek(SeekFrom::Start(e.offset)).map_err(io)?;
            let mut hasher = crc32fast::Hasher::new();
            let mut left = e.len as usize;
            while left > 0 {
                let chunk = left.min(buf.len());
                self.file
                    .read_exact(&mut buf[..chunk])
                    .map_err(|err| ModelFileError::io(&self.path, err))?;
                hasher.update(&buf[..chunk]);
                left -= chunk;
            }
            if hasher.finalize() != e.crc {
                return Err(ModelFileError::invalid(&self.path, "checksum mismatch"));
            }
        }
        Ok(())
    }
}

/// Reads and decodes section 0 of a model file.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, ModelFileError> {
    ModelFileReader::open(path)?.read(0)
}

/// Writes file bytes to `path` atomically: readers see the old file or the complete new one.
/// The file is created readable by its owner only (it describes the owner's mail).
pub fn save_bytes(bytes: &[u8], path: &Path) -> Result<(), ModelFileError> {
    let io = |source| ModelFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // NamedTempFile removes the temporary file if anything below fails.
    let mut tmp = tempfile::Builder::new()
        .prefix(".spamsort-model-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)?;
    Ok(())
}

/// Saves `value` as a one-section file, atomically (see [`save_bytes`]).
pub fn save<T: Serialize>(value: &T, path: &Path) -> Result<(), ModelFileError> {
    save_bytes(&encode(value), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let bytes = encode_sections(&[vec![1, 2, 3], vec![4]]);
        assert_eq!(&bytes[..8], b"SPAMSORT");
        assert_eq!(u32_at(&bytes, 8), FORMAT_VERSION);
        assert_eq!(u32_at(&bytes, 12), 2);
        assert_eq!(u64_at(&bytes, 16), header_len(2) as u64);
        assert_eq!(u64_at(&bytes, 24), 3);
        assert_eq!(u64_at(&bytes, 40), header_len(2) as u64 + 3);
        assert_eq!(bytes.len(), header_len(2) + 4);
        assert_eq!(decode::<u32>(&encode(&42u32), Path::new("m")).unwrap(), 42);
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

    #[test]
    fn reader_reads_sections_independently() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        save_bytes(
            &encode_sections(&[encode_section(&"head"), encode_section(&7u64)]),
            &path,
        )
        .unwrap();
        let mut r = ModelFileReader::open(&path).unwrap();
        assert_eq!(r.sections(), 2);
        assert_eq!(r.read::<u64>(1).unwrap(), 7);
        assert_eq!(r.read::<String>(0).unwrap(), "head");
        assert!(r.read::<u8>(2).is_err());
    }
}
