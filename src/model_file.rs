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
//! size limit. So a truncated, corrupted, foreign or other-version file gives a [`ModelFileError`]
//! naming the file, never a panic or a huge allocation. Saving is atomic: a temporary file in
//! the same directory, fsync, rename, fsync of the directory; a crash leaves the old file or
//! the new one, never a mix.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// First bytes of every model file.
pub const MAGIC: [u8; 8] = *b"SPAMSORT";
/// Version of the layout and payload written by this build. Files with a higher version are
/// refused with [`ModelFileError::OtherVersion`].
pub const FORMAT_VERSION: u32 = 2;
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
    /// The file was written by another spamsort release with a different layout.
    #[error(
        "model file {path} has format version {found}; this spamsort reads version {supported}: retrain with `spamsort train`, or use the spamsort that wrote it"
    )]
    OtherVersion {
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
    if version != FORMAT_VERSION {
        let (found, supported) = (version, FORMAT_VERSION);
        return Err(ModelFileError::OtherVersion {
            path: path.to_path_buf(),
            found,
            supported,
        });
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

fn check_crc(bytes: &[u8], crc: u32, path: &Path) -> Result<(), ModelFileError> {
    if crc32fast::hash(bytes) == crc {
        Ok(())
    } else {
        Err(ModelFileError::invalid(path, "checksum mismatch"))
    }
}

fn decode_section<T: DeserializeOwned>(
    bytes: &[u8],
    crc: u32,
    path: &Path,
) -> Result<T, ModelFileError> {
    check_crc(bytes, crc, path)?;
    decode_exact(bytes, path)
}

/// Decodes a checked section that must hold exactly one `T`.
fn decode_exact<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<T, ModelFileError> {
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

/// Decodes the leading fields of a checked section (from [`ModelFileReader::section`]) into
/// a view type that borrows its arrays from `bytes` and ignores whatever follows: loading
/// costs a few small fields however large the arrays are. `path` is only used in errors.
pub fn decode_prefix<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    path: &Path,
) -> Result<T, ModelFileError> {
    bincode::serde::borrow_decode_from_slice(bytes, bincode_config())
        .map(|(value, _)| value)
        .map_err(|e| ModelFileError::invalid(path, format!("undecodable contents: {e}")))
}

/// Checks the header and directory of a whole file's bytes.
fn parse_header(bytes: &[u8], path: &Path) -> Result<Vec<Entry>, ModelFileError> {
    let n = parse_prefix(&bytes[..bytes.len().min(16)], path)?;
    if bytes.len() < header_len(n) {
        let (expected, got) = (header_len(n) as u64, bytes.len() as u64);
        return Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected,
            got,
        });
    }
    parse_directory(&bytes[..header_len(n)], n, bytes.len() as u64, path)
}

/// Checks and decodes section 0 of in-memory file bytes. `path` is only used in errors.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<T, ModelFileError> {
    let e = parse_header(bytes, path)?[0];
    decode_section(
        &bytes[e.offset as usize..(e.offset + e.len) as usize],
        e.crc,
        path,
    )
}

/// A model file's bytes: mapped when the platform allows, else read.
enum FileBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// Maps the file read-only. Mapping instead of reading is what makes the one-process-per-
/// message filter cheap: the kernel's cached pages are used as they are, with no copy into
/// freshly zeroed memory, and only the sections a caller reads are touched.
#[allow(unsafe_code)]
fn map(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: a mapping is undefined behaviour if the file changes while mapped. spamsort never
    // writes a model file in place: `save_bytes` writes a new file and renames it over the old
    // one, so a mapped file keeps its contents until it is unmapped. Only a third party
    // rewriting the file in place could break this (the risk every mmap-based store, such as
    // bogofilter's LMDB, accepts); checksums still guard what is read.
    unsafe { memmap2::Mmap::map(file) }
}

/// An open model file whose header and directory have been checked; each section's checksum
/// is checked when the section is first asked for.
pub struct ModelFileReader {
    bytes: FileBytes,
    path: PathBuf,
    entries: Vec<Entry>,
    /// Per section: checksum already found correct.
    checked: Vec<std::sync::OnceLock<()>>,
}

impl ModelFileReader {
    /// Opens (maps) a model file and checks its header and directory.
    pub fn open(path: &Path) -> Result<Self, ModelFileError> {
        let io = |e| ModelFileError::io(path, e);
        let mut file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let bytes = match len {
            // Mapping an empty file fails; a short one is refused by the header check anyway.
            0..16 => None,
            _ => map(&file).ok().map(FileBytes::Mapped),
        };
        let bytes = match bytes {
            Some(b) => b,
            None => {
                let mut v = Vec::new();
                file.read_to_end(&mut v).map_err(io)?;
                FileBytes::Read(v)
            }
        };
        let entries = parse_header(&bytes, path)?;
        Ok(ModelFileReader {
            bytes,
            path: path.to_path_buf(),
            checked: entries.iter().map(|_| std::sync::OnceLock::new()).collect(),
            entries,
        })
    }

    /// Number of sections.
    pub fn sections(&self) -> usize {
        self.entries.len()
    }

    /// Section `i`, its checksum checked (once; later calls only slice).
    pub fn section(&self, i: usize) -> Result<&[u8], ModelFileError> {
        let e = *self
            .entries
            .get(i)
            .ok_or_else(|| ModelFileError::invalid(&self.path, format!("missing section {i}")))?;
        // The directory check keeps every section inside the file.
        let bytes = &self.bytes[e.offset as usize..(e.offset + e.len) as usize];
        if self.checked[i].get().is_none() {
            check_crc(bytes, e.crc, &self.path)?;
            let _ = self.checked[i].set(());
        }
        Ok(bytes)
    }

    /// Reads, checks and decodes section `i`.
    pub fn read<T: DeserializeOwned>(&self, i: usize) -> Result<T, ModelFileError> {
        decode_exact(self.section(i)?, &self.path)
    }

    /// The file's path, for errors.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Exclusive right to update a model file, held until dropped: an advisory lock on a lock file
/// beside it (`NAME.lock`). Every writer that loads, changes and saves a model (`learn`, the
/// spamd server's TELL, the daemon's learning from moves) holds it across the three steps, so
/// concurrent writers never lose each other's updates. Readers need no lock: saves are atomic.
#[derive(Debug)]
pub struct UpdateLock {
    _file: std::fs::File,
}

/// Waits for and takes the [`UpdateLock`] of the model file at `path`.
pub fn lock_for_update(path: &Path) -> Result<UpdateLock, ModelFileError> {
    let lock_path = path.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| ModelFileError::io(&lock_path, e))?;
    file.lock().map_err(|e| ModelFileError::io(&lock_path, e))?;
    Ok(UpdateLock { _file: file })
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
    fn other_version_refused() {
        let mut bytes = encode(&1u8);
        bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        let err = decode::<u8>(&bytes, Path::new("m")).unwrap_err();
        assert!(
            matches!(err, ModelFileError::OtherVersion { found, .. } if found == FORMAT_VERSION + 1)
        );
        bytes[8..12].copy_from_slice(&(FORMAT_VERSION - 1).to_le_bytes());
        let err = decode::<u8>(&bytes, Path::new("m")).unwrap_err();
        assert!(err.to_string().contains("retrain"), "{err}");
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
        let r = ModelFileReader::open(&path).unwrap();
        assert_eq!(r.sections(), 2);
        assert_eq!(r.read::<u64>(1).unwrap(), 7);
        assert_eq!(r.read::<String>(0).unwrap(), "head");
        assert!(r.read::<u8>(2).is_err());
    }
}
