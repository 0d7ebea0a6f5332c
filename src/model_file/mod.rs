//! The model file container: what makes a file on disk trustworthy before its contents are
//! used, and what lets the one-process-per-message filter read only what it needs.
//!
//! # Layout
//!
//! All fixed-size integers are little-endian.
//!
//! ```text
//! offset      size    field
//!      0         8    MAGIC "SPAMSORT"
//!      8         4    FORMAT_VERSION (u32)
//!     12         4    section count N (u32, 1 to MAX_SECTIONS)
//!     16    24 * N    directory: per section offset (u64), length (u64), CRC-32 (u32), zero (u32)
//! 16+24N         4    CRC-32 (IEEE, as zlib) of everything before it
//!      -         -    the N sections, back to back in directory order
//!      -         -    the journal: zero or more appended records (see `journal`), to the end
//! ```
//!
//! # Encoding of a section
//!
//! Each section is one serde value in postcard 1 (the wire format specified at
//! <https://postcard.jamesmunns.com/wire-format>): no field names, no padding, nothing
//! self-describing. In short: a struct or tuple is its fields in declaration order; `u16` to
//! `u128` and `usize` are LEB128 varints (7 bits a byte, least significant first, high bit
//! set on all but the last byte), signed integers zigzag-encoded first; `u8` is one byte;
//! `bool` one byte 0 or 1; `f32`/`f64` 4/8 bytes little-endian IEEE 754; a string or byte
//! string is a varint byte count, then the bytes; a sequence or map a varint element count,
//! then the elements; an `Option` one byte 0 (none) or 1 then the value; an enum a varint
//! variant index (declaration order from 0), then the variant's fields; a fixed-size array
//! its elements with no count.
//!
//! Numeric arrays (vocabulary offsets and hash table, idf tables, Naive Bayes counts) are not
//! sequences but byte strings (module `packed`): a varint byte count, then the elements as
//! fixed-width little-endian `u32` or `f64`. So a reader can borrow them in place and read
//! element `i` at byte `4 * i` or `8 * i` instead of decoding the array. A linear model's
//! weights (`packed::reals`) are one byte first, the element size: 4 when every weight is
//! exactly an `f32` (stored as `f32`), else 8 (`f64`); then the byte string.
//!
//! # Sections of a spam filter
//!
//! `SpamFilter::save` writes these sections, and no journal (the Rust types in
//! `crate::filter::layout` are the definition; fields in this order):
//!
//! - 0, the head: the tokenizer settings (`TokenizerConfig`), the active model (`ModelKind`, a
//!   variant index: Bernoulli NB, multinomial NB, linear SVM, logistic regression, fusion),
//!   the verdict thresholds (`Thresholds`), what training saw (`TrainingSummary`), the models
//!   of the sections from 5 on (a sequence of `ModelKind`), the fuser stacking them
//!   (`Option<Fusion>`: its models, weights, bias and settings), the number of features the
//!   batch fit saw (`u64`) and the file size past which a save prunes (`u64`). A few hundred
//!   bytes.
//! - 1, the vocabulary's counts: the packed `u32` document frequencies per class (ham, then
//!   spam), the message count per class (`[u32; 2]`), the packed `u32` last-seen message per
//!   token and the message clock (`u32`).
//! - 2, the record of learned messages (`LearnedMessages`, see `crate::filter::learned`): a
//!   sequence of (digest `u64`, label, learned-by-training `bool`, `Option<u32>`: once a
//!   prune has dropped tokens since the message was learned, the ids its counts can still be
//!   under), oldest first. (Version 9 had no `Option<u32>`: each of its entries is read as
//!   marked with the number of tokens the file holds, see `crate::filter::layout`.)
//! - 3, the score table's index (`crate::filter::score_table::ScoreIndex`): per model its
//!   kind, calibration, `FeatureConfig`, bias, Naive Bayes scoring (`Option<NbScoring>`), the
//!   columns of its weights and idf, and the lengths of its weight and idf arrays; the number
//!   of columns, the vocabulary hash table's size (`u64`) and its number of tokens (`u64`), then
//!   the packed `u64` first hash of each block and the packed `u32` end of each block in
//!   section 4.
//! - 4, the score table's blocks: every vocabulary token, sorted by its SipHash-1-3 (the
//!   vocabulary's key) and cut into blocks of about 1 KiB; each block is the CRC-32 (`u32`) of
//!   the rest of it, then its records: the token's length (`u32`), its bytes, its id (`u32`;
//!   ids are `0..n`: training's tokens sorted, learned ones after them), then one `f64` per
//!   column (each model's weight, and idf where it has one; shared between models with equal
//!   idf tables). Tokens of equal hash never straddle two blocks.
//! - 5 and on, one model per section, in the head's order (a `TrainedModel`): its calibration
//!   (`Calibration`: slope and offset, two `f64`), then the model (`AnyModel`: variant index
//!   in `ModelKind` order, then the model's struct), whose first field is always its decision
//!   function (`LinearFunction`: the feature transform, being its `FeatureConfig` and its
//!   packed `f64` idf table, here empty; the weights as `packed::reals` writes them, here
//!   only those of the hashed features, which are kept `f32`-exact so that they take 4 bytes
//!   each; the `f64` bias), followed by the model's own state (Naive Bayes counts,
//!   packed, with the Bernoulli model's histogram of counts and the multinomial model's class
//!   totals). The rest of the function is in the score table.
//!
//! The pipe filter reads sections 0 and 3, and of 4 only the blocks its message's tokens fall
//! in (each checked against its own checksum); `spamsort learn` checks every section's
//! checksum (it never appends to a file a full load would refuse), then reads 0 and 2 and the
//! journal; a full load reads everything. Each journal record holds one `spamsort learn` run's changes
//! (`crate::filter::journal`): the record-of-learned-messages entries it sets, then the count
//! changes (`crate::filter::store::StoreOp`: the message's tokens, label, learn or unlearn,
//! time), which a full load applies in order after the sections.
//!
//! A file of version [`OLDEST_READ`] to [`FORMAT_VERSION`] is read (its next save writes
//! [`FORMAT_VERSION`]); one of another version is refused with
//! [`ModelFileError::OtherVersion`], whose message says to retrain: version 2 files (bincode 2
//! sections, same container) are not read.
//!
//! A reader checks magic, version, the directory's checksum and that every section lies inside
//! the file, then reads and checks (CRC) only the sections it asks for, and decodes them (no
//! length field can make decoding allocate more than a small multiple of the section, see
//! `decode_slice`). So a truncated, corrupted, foreign or other-version file, or one
//! rewritten while it is read, gives a [`ModelFileError`] naming the file, never a panic or a
//! huge allocation. Saving is atomic and happens under the model's [`UpdateLock`]: a temporary
//! file in the same directory, fsync, rename, fsync of the directory; a crash leaves the old
//! file or the new one, never a mix, and the next save removes the temporary file a crash left.

mod journal;
pub(crate) mod packed;
mod stamp;

pub use journal::{Journal, MAX_RECORD, encode_record, record_len};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
pub use stamp::FileStamp;
use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

/// First bytes of every model file.
pub const MAGIC: [u8; 8] = *b"SPAMSORT";
/// Version of the layout and payload written by this build. Files of any other version are
/// refused with [`ModelFileError::OtherVersion`]. 3: postcard sections (2 was bincode 2), the
/// record of learned messages, the Bernoulli model's histogram of counts and the multinomial
/// model's class totals. 4: the journal after the sections; the head's vocabulary, its counts
/// and the record of learned messages each in a section of their own; the Naive Bayes models'
/// scoring settings; the fuser in the head; the tokenizer's byte 4-gram setting and the
/// feature transforms' hashed-feature flag. 5: the score table (two sections before the
/// models), which the pipe filter reads block by block, holding the tokens and the models'
/// per-token values that sections of their own held before. 6: the Naive Bayes models'
/// per-token counts are columns of the score table, no longer in their sections. 7: the score
/// table's index holds the vocabulary's length, and a journal record what its learning changed
/// for a scorer of one message (its patch, see `crate::filter::patch`). 8: a linear model's
/// weights are stored as `f32` where that loses nothing (its hashed features' weights, kept at
/// `f32` precision: half the bytes a pipe filter reads for them), else `f64`, their element
/// size first. 9: byte 4-grams hash into 2^17 buckets (2^18 before), so the same
/// message's hashed ids differ. 10: each entry of the record of learned messages says which
/// tokens can hold its counts once a prune dropped some since it was learned (section 2 alone
/// differs from 9, which is read too).
pub const FORMAT_VERSION: u32 = 10;
/// Oldest version this build reads (see [`FORMAT_VERSION`] for what differs).
pub const OLDEST_READ: u32 = 9;
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
    /// The file could not be read or written (why is the [`source`](std::error::Error::source)).
    #[error("model file {path}")]
    Io {
        /// The model file.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
    /// There is no file at the path to read: nothing was trained or learned there yet.
    #[error(
        "no model file at {path}: run `spamsort train` first (or `spamsort learn`, which starts an empty one)"
    )]
    Missing {
        /// The path looked at.
        path: PathBuf,
    },
    /// The file does not start with the spamsort magic bytes.
    #[error("{path} is not a spamsort model file (train one with `spamsort train`)")]
    NotAModel {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by another spamsort release with a different layout.
    #[error(
        "model file {path} has format version {found}; this spamsort reads versions {oldest} to {supported}: retrain with `spamsort train`, or use the spamsort that wrote it",
        oldest = OLDEST_READ
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
    /// The file is sound but holds no model of the kind asked for (a setting, not damage).
    #[error(
        "model file {path} holds no {model} model (it holds {held}): choose one of those with --classifier or `classifier` in the config file, or train with it"
    )]
    NoSuchModel {
        /// The file.
        path: PathBuf,
        /// The model asked for.
        model: String,
        /// The models it holds, comma-separated.
        held: String,
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

/// Decodes a `T` from the start of section bytes, returning it and the bytes it used.
///
/// No length field can make this allocate beyond a small multiple of `bytes`: postcard
/// checks that a byte string or string it is told to read lies inside `bytes` before
/// touching it (borrowed, or copied once it is known to be there), and serde preallocates
/// at most 1 MiB for a sequence or map however many elements its length claims; every
/// element decoded then consumes at least one byte of `bytes`. A field claiming 2^60
/// elements in a 1 KiB section is refused, not reserved.
fn decode_slice<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, usize), postcard::Error> {
    let (value, rest) = postcard::take_from_bytes(bytes)?;
    Ok((value, bytes.len() - rest.len()))
}

/// Encodes one value as section bytes (postcard 1, see the module doc).
pub fn encode_section<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("in-memory encoding of model types cannot fail")
}

/// Lays sections out as a complete file.
pub fn encode_sections(sections: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(file_len(sections));
    out.extend(encode_header(sections));
    for s in sections {
        out.extend_from_slice(s);
    }
    out
}

/// The length of the file of `sections` (see [`encode_sections`]).
pub fn file_len(sections: &[Vec<u8>]) -> usize {
    header_len(sections.len()) + sections.iter().map(Vec::len).sum::<usize>()
}

/// The header of the file of `sections`: what [`encode_sections`] writes before them.
fn encode_header(sections: &[Vec<u8>]) -> Vec<u8> {
    assert!(sections.len() <= MAX_SECTIONS, "too many sections");
    let head = header_len(sections.len());
    let mut out = Vec::with_capacity(head);
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
/// format version and the section count.
fn parse_prefix(prefix: &[u8], path: &Path) -> Result<(u32, usize), ModelFileError> {
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
    if !(OLDEST_READ..=FORMAT_VERSION).contains(&version) {
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
    Ok((version, n))
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
    // Bytes after the last section are the journal (see `journal`), checked when it is read.
    if file_len < expected_offset {
        return Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected: expected_offset,
            got: file_len,
        });
    }
    Ok(entries)
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
pub(crate) fn decode_exact<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    path: &Path,
) -> Result<T, ModelFileError> {
    let (value, used) = decode_slice(bytes)
        .map_err(|e| ModelFileError::invalid(path, format!("undecodable contents: {e}")))?;
    if used != bytes.len() {
        return Err(ModelFileError::invalid(
            path,
            "section longer than its contents",
        ));
    }
    Ok(value)
}

/// Decodes checked bytes that must hold exactly one `T` (which may borrow from them): a
/// journal record's payload (from [`ModelFileReader::journal`]), or a section's parts. `path`
/// is only used in errors.
pub fn decode_payload<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    path: &Path,
) -> Result<T, ModelFileError> {
    decode_exact(bytes, path)
}

/// Decodes the leading fields of a checked section (from [`ModelFileReader::section`]) into
/// a view type that borrows its arrays from `bytes` and ignores whatever follows: loading
/// costs a few small fields however large the arrays are. `path` is only used in errors.
pub fn decode_prefix<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    path: &Path,
) -> Result<T, ModelFileError> {
    decode_slice(bytes)
        .map(|(value, _)| value)
        .map_err(|e| ModelFileError::invalid(path, format!("undecodable contents: {e}")))
}

/// Decodes the leading fields of bytes not checked yet (a section's first bytes, which the
/// caller checks with the rest of it), and says how many bytes they took; `None` if they do
/// not decode (too few bytes, or corrupt ones).
pub fn decode_head<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<(T, usize)> {
    decode_slice(bytes).ok()
}

/// Checks the header and directory of a file of `file_len` bytes that starts with `head`
/// (its whole header, or the whole file if shorter); returns its format version and
/// directory.
fn parse_header(
    head: &[u8],
    file_len: u64,
    path: &Path,
) -> Result<(u32, Vec<Entry>), ModelFileError> {
    let (version, n) = parse_prefix(&head[..head.len().min(16)], path)?;
    if head.len() < header_len(n) {
        let (expected, got) = (header_len(n) as u64, head.len() as u64);
        return Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected,
            got,
        });
    }
    Ok((
        version,
        parse_directory(&head[..header_len(n)], n, file_len, path)?,
    ))
}

/// Checks and decodes section 0 of in-memory file bytes. `path` is only used in errors.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<T, ModelFileError> {
    let e = parse_header(bytes, bytes.len() as u64, path)?.1[0];
    decode_section(
        &bytes[e.offset as usize..(e.offset + e.len) as usize],
        e.crc,
        path,
    )
}

/// Most bytes of a file's start read to find its header: the header of [`MAX_SECTIONS`].
const MAX_HEADER: usize = header_len(MAX_SECTIONS);

/// Bytes per read of [`ModelFileReader::section_pieces`]: a small part of a core's
/// first-level data cache (32 KiB on most x86 cores), which holds it between the read, the
/// checksum and the copying out, and two pages of fresh memory. Measured with the static
/// build's `filter`: alternated with `cat` alone (one filter after another, as a mail server
/// runs them), 16 and 32 KiB took 0.12-0.14 ms a message less than 64; in
/// benches/pipe_latency.sh's shuffled order 8, 32 and 64 KiB measured the same within noise
/// (0.365, 0.374 and 0.375 of bogofilter's work above `cat`) and 4 KiB worse (0.414), so the
/// smallest of those.
const STREAM_CHUNK: usize = 8 * 1024;

/// Bytes per read of [`ModelFileReader::check_sections`], which only checksums what it reads:
/// fewer, larger reads than [`STREAM_CHUNK`]'s, still small beside a core's second-level cache.
const CHECK_CHUNK: usize = 64 * 1024;

/// An open model file whose header and directory have been checked; each section is read
/// (into memory owned by the reader) and its checksum checked when it is first asked for.
///
/// The file is read, never memory-mapped: a mapped file that another program truncates or
/// rewrites in place (`cp new.spamsort model.spamsort`) kills the mapping process with
/// SIGBUS, and no check can prevent that. Reading costs one copy of the sections asked for.
/// A file that changes while it is read gives a checksum (or truncation) error, since every
/// section read must match the checksum the directory read at open time promised.
pub struct ModelFileReader {
    /// Guards the file position: sections are read by seeking (see [`read_at`]).
    file: std::sync::Mutex<std::fs::File>,
    path: PathBuf,
    /// The file's format version ([`OLDEST_READ`] to [`FORMAT_VERSION`]).
    version: u32,
    entries: Vec<Entry>,
    /// The file's length when opened: the journal is read up to it.
    len: u64,
    /// The header's checksum, which every journal record of this file repeats.
    header_crc: u32,
    /// The header and directory as read at open (see [`ModelFileReader::check_unchanged`]).
    header: Vec<u8>,
    /// Per section: its bytes, once read and found correct.
    sections: Vec<std::sync::OnceLock<Vec<u8>>>,
    /// The journal, once read (see [`ModelFileReader::journal`]).
    journal: std::sync::OnceLock<journal::Journal>,
}

/// Reads exactly `len` bytes at `offset`, or reports the file as truncated. Seek and read
/// instead of `pread` so the bytes land in fresh capacity without zeroing it first.
fn read_at(
    file: &mut std::fs::File,
    offset: u64,
    len: u64,
    path: &Path,
) -> Result<Vec<u8>, ModelFileError> {
    use std::io::Seek;
    let io = |e| ModelFileError::io(path, e);
    file.seek(std::io::SeekFrom::Start(offset)).map_err(io)?;
    // Never more than the file held when opened (the directory check bounds `len` by it).
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut bytes).map_err(io)?;
    if (bytes.len() as u64) < len {
        return Err(ModelFileError::Truncated {
            path: path.to_path_buf(),
            expected: offset + len,
            got: offset + bytes.len() as u64,
        });
    }
    Ok(bytes)
}

impl ModelFileReader {
    /// Opens a model file (a regular file: a FIFO or device is refused at once, never waited
    /// on) and reads and checks its header and directory.
    pub fn open(path: &Path) -> Result<Self, ModelFileError> {
        let io = |e| ModelFileError::io(path, e);
        let mut file = crate::corpus::open_regular(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ModelFileError::Missing {
                path: path.to_path_buf(),
            },
            _ => io(e),
        })?;
        let len = file.metadata().map_err(io)?.len();
        let mut head = Vec::with_capacity(MAX_HEADER);
        (&mut file)
            .take(MAX_HEADER as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        let (version, entries) = parse_header(&head, len, path)?;
        let crc_at = header_len(entries.len()) - 4;
        head.truncate(crc_at + 4);
        Ok(ModelFileReader {
            file: std::sync::Mutex::new(file),
            path: path.to_path_buf(),
            version,
            len,
            header_crc: u32_at(&head, crc_at),
            header: head,
            sections: entries.iter().map(|_| std::sync::OnceLock::new()).collect(),
            journal: std::sync::OnceLock::new(),
            entries,
        })
    }

    /// The directory's entry of section `i`, or an error if the file has no such section.
    fn entry(&self, i: usize) -> Result<Entry, ModelFileError> {
        let missing = || ModelFileError::invalid(&self.path, format!("missing section {i}"));
        self.entries.get(i).copied().ok_or_else(missing)
    }

    /// Fills `bytes` from file offset `offset` of `file` (this reader's, locked by the
    /// caller) with one positioned read, or reports the file as cut short before their end.
    fn read_exact_at(
        &self,
        file: &std::fs::File,
        offset: u64,
        bytes: &mut [u8],
    ) -> Result<(), ModelFileError> {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(bytes, offset)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::UnexpectedEof => ModelFileError::Truncated {
                    path: self.path.clone(),
                    expected: offset + bytes.len() as u64,
                    got: self.len.min(offset),
                },
                _ => ModelFileError::io(&self.path, err),
            })
    }

    /// Fails if the file's header and directory are no longer those read at open: the file
    /// was rewritten in place since (`cp new.spamsort model.spamsort`), or cut short. A section
    /// read whole is checked against the directory read at open, but a part read on its own
    /// ([`ModelFileReader::read_range`]: a score table block, which carries its own checksum)
    /// may come from the new file and still check out, and a journal record of the new file
    /// names another header, so it ends the journal instead of failing. A reader that combines
    /// such parts with what it read before calls this once it has read all it needs: it then
    /// answers from the file it opened, or fails, never from a mix of two files. Appending to
    /// the journal and cutting a torn tail off leave the header as it is, and a save renames a
    /// new file over the path, which leaves the open file as it is: neither fails this.
    pub fn check_unchanged(&self) -> Result<(), ModelFileError> {
        let mut now = vec![0; self.header.len()];
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        self.read_exact_at(&file, 0, &mut now)?;
        if now != self.header {
            return Err(ModelFileError::invalid(
                &self.path,
                "rewritten in place while it was read (its header changed): read it again",
            ));
        }
        Ok(())
    }

    /// The file's format version ([`OLDEST_READ`] to [`FORMAT_VERSION`]).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Number of sections.
    pub fn sections(&self) -> usize {
        self.entries.len()
    }

    /// Section `i`, read and its checksum checked (once; later calls return the same bytes).
    pub fn section(&self, i: usize) -> Result<&[u8], ModelFileError> {
        if let Some(bytes) = self.sections.get(i).and_then(|s| s.get()) {
            return Ok(bytes);
        }
        let bytes = self.section_owned(i)?;
        Ok(self.sections[i].get_or_init(|| bytes))
    }

    /// Section `i`, read and its checksum checked, and not kept by the reader: for a caller
    /// that decodes it once (a full load), so that its bytes are freed as soon as it is
    /// decoded instead of when the reader is dropped.
    pub fn section_owned(&self, i: usize) -> Result<Vec<u8>, ModelFileError> {
        let e = self.entry(i)?;
        if let Some(bytes) = self.sections[i].get() {
            return Ok(bytes.clone());
        }
        let bytes = {
            // A thread that panicked holding the file left only its position behind.
            let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
            read_at(&mut file, e.offset, e.len, &self.path)?
        };
        if crc32fast::hash(&bytes) != e.crc {
            return Err(self.checksum_mismatch(i));
        }
        Ok(bytes)
    }

    /// The error of section `i` failing its checksum.
    fn checksum_mismatch(&self, i: usize) -> ModelFileError {
        let reason = format!("section {i} of {}: checksum mismatch", self.sections());
        ModelFileError::invalid(&self.path, reason)
    }

    /// `len` bytes of section `i` from byte `offset` of it into `bytes` (replacing what it
    /// held, so that one buffer serves many reads), read with one positioned read and not
    /// checked against the section's checksum (which covers the whole section): for a section
    /// whose parts carry their own checksums, read piece by piece (the score table's blocks).
    /// A range beyond the section is refused.
    pub fn read_range(
        &self,
        i: usize,
        offset: u64,
        len: u64,
        bytes: &mut Vec<u8>,
    ) -> Result<(), ModelFileError> {
        let e = self.entry(i)?;
        let end = offset.checked_add(len).filter(|&end| end <= e.len);
        let Some(_) = end else {
            return Err(ModelFileError::invalid(
                &self.path,
                format!("a read past the end of section {i}"),
            ));
        };
        bytes.clear();
        bytes.resize(len as usize, 0);
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        self.read_exact_at(&file, e.offset + offset, bytes)
    }

    /// The length of section `i` in bytes (0 for a section the file does not have).
    pub fn section_len(&self, i: usize) -> u64 {
        self.entries.get(i).map_or(0, |e| e.len)
    }

    /// The bytes of section `i` at `ranges` (offsets within the section, ascending and not
    /// overlapping), one after another, the section read through one buffer of
    /// [`STREAM_CHUNK`] bytes and its checksum checked over every byte: for a reader that
    /// needs scattered values of a large section (a model's hashed weights, for one message)
    /// without holding it whole, whose fresh pages cost the one-message filter more than
    /// reading the section does. A section the reader already holds whole is copied from
    /// instead. A range out of order or beyond the section is refused.
    pub fn section_pieces(
        &self,
        i: usize,
        ranges: impl Iterator<Item = Range<u64>> + Clone,
    ) -> Result<Vec<u8>, ModelFileError> {
        let e = self.entry(i)?;
        let (mut last, mut wanted) = (0, 0);
        for r in ranges.clone() {
            if r.start < last || r.end < r.start || r.end > e.len {
                let reason = format!("pieces out of order or past the end of section {i}");
                return Err(ModelFileError::invalid(&self.path, reason));
            }
            last = r.end;
            wanted += r.end - r.start;
        }
        // Bounded by the section's length, which the directory check bounds by the file's.
        let mut out = Vec::with_capacity(wanted as usize);
        // Appends to `out` the bytes of the ranges `next` yields that lie in `chunk`, which
        // starts at byte `at` of the section; `next` moves past the ranges it ends. (The
        // ranges are not collected: a message's buckets make a thousand or more, 16 bytes each
        // of fresh memory for the one-message filter.)
        fn copy<I: Iterator<Item = Range<u64>>>(
            next: &mut std::iter::Peekable<I>,
            at: u64,
            chunk: &[u8],
            out: &mut Vec<u8>,
        ) {
            let end = at + chunk.len() as u64;
            while let Some(r) = next.peek() {
                let (from, to) = (r.start.max(at), r.end.min(end));
                if from < to {
                    let piece = &chunk[(from - at) as usize..(to - at) as usize];
                    // Most pieces are one weight (4 or 8 bytes, a thousand or more a message),
                    // copied without a call to `memcpy`: the calls cost more than the copies
                    // (musl's `memcpy`, in the static build: 0.13 ms a message with one filter
                    // after another; not measurable in the pipe bench's shuffled order).
                    if let Ok(weight) = <[u8; 4]>::try_from(piece) {
                        out.extend(weight);
                    } else if let Ok(weight) = <[u8; 8]>::try_from(piece) {
                        out.extend(weight);
                    } else {
                        out.extend_from_slice(piece);
                    }
                }
                if r.end > end {
                    break;
                }
                next.next();
            }
        }
        let mut next = ranges.peekable();
        if let Some(bytes) = self.sections[i].get() {
            copy(&mut next, 0, bytes, &mut out);
            return Ok(out);
        }
        self.stream(i, STREAM_CHUNK, |at, chunk| {
            copy(&mut next, at, chunk, &mut out)
        })?;
        Ok(out)
    }

    /// Reads section `i` through one buffer of `chunk_len` bytes, handing each piece to `each`
    /// with its offset in the section, and checks the section's checksum over every byte (an
    /// error naming the section if it fails, after every piece was handed on).
    fn stream(
        &self,
        i: usize,
        chunk_len: usize,
        mut each: impl FnMut(u64, &[u8]),
    ) -> Result<(), ModelFileError> {
        let e = self.entry(i)?;
        let mut crc = crc32fast::Hasher::new();
        let mut chunk = vec![0; chunk_len.min(e.len as usize)];
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let mut at = 0;
        while at < e.len {
            let n = (e.len - at).min(chunk_len as u64) as usize;
            let chunk = &mut chunk[..n];
            self.read_exact_at(&file, e.offset + at, chunk)?;
            crc.update(chunk);
            each(at, chunk);
            at += n as u64;
        }
        if crc.finalize() != e.crc {
            return Err(self.checksum_mismatch(i));
        }
        Ok(())
    }

    /// Checks every section against its checksum, as a full load does, without decoding or
    /// keeping any (each is read through one buffer of [`CHECK_CHUNK`] bytes; a section the
    /// reader holds was checked when it was read): for a writer that changes the file without
    /// loading it all (`spamsort learn` appends to the journal), so that it never adds to a
    /// file no load could read. The first section that fails is named in the error.
    pub fn check_sections(&self) -> Result<(), ModelFileError> {
        for i in 0..self.sections() {
            if self.sections[i].get().is_none() {
                self.stream(i, CHECK_CHUNK, |_, _| {})?;
            }
        }
        Ok(())
    }

    /// Reads, checks and decodes section `i`.
    pub fn read<T: DeserializeOwned>(&self, i: usize) -> Result<T, ModelFileError> {
        decode_exact(self.section(i)?, &self.path)
    }

    /// [`ModelFileReader::read`] of a section not kept by the reader (see
    /// [`ModelFileReader::section_owned`]).
    pub fn read_owned<T: DeserializeOwned>(&self, i: usize) -> Result<T, ModelFileError> {
        decode_exact(&self.section_owned(i)?, &self.path)
    }

    /// The file's path, for errors.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Exclusive right to update a model file, held until dropped: an advisory lock on a lock file
/// beside it (`NAME.lock`; for a model path that is a symbolic link, beside the file it leads
/// to, see [`lock_for_update`]). Every writer (`train`, `learn`, the spamd server's TELL, the
/// daemon's learning from moves) holds it to save, and a writer that loads, changes and saves
/// holds it across the three steps, so concurrent writers never lose each other's updates.
/// Saving needs it ([`save_bytes`]). Readers need no lock: saves are atomic.
#[derive(Debug)]
pub struct UpdateLock {
    _file: std::fs::File,
    model: PathBuf,
}

impl UpdateLock {
    /// The model file this lock is for.
    pub fn model_path(&self) -> &Path {
        &self.model
    }
}

/// Where the [`UpdateLock`] of the model file at `path` is: `NAME.lock` beside it. Refuses a
/// model whose own name ends in `.lock`: it would be its own lock (a save renames a new file
/// over it, and then two writers hold "the lock" at once and lose each other's learns), or
/// the lock of another model beside it (`NAME.spamsort`'s).
fn lock_path(path: &Path) -> std::io::Result<PathBuf> {
    // `dir/`, `dir/.` and `dir/..` name directories, which no model file is; the lock of the
    // first two would be `dir.lock`, made beside it before the save failed.
    let bytes = path.as_os_str().as_encoded_bytes();
    let last = path.components().next_back();
    if bytes.ends_with(b"/")
        || bytes.ends_with(b"/.")
        || !matches!(last, Some(Component::Normal(_)))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a model file's path must name a file, not end in `/`, `.` or `..`",
        ));
    }
    if path.extension().is_some_and(|e| e == "lock") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a model file's name must not end in `.lock`: that is where model files keep \
             their update locks",
        ));
    }
    Ok(path.with_extension("lock"))
}

/// Where the [`UpdateLock`] of the model file at `path` is (see [`lock_for_update`]): `NAME.lock`
/// beside the file `path` leads to (see [`followed`]); the errors of either. For a caller that
/// checks that place before the lock is taken.
pub fn lock_file(path: &Path) -> std::io::Result<PathBuf> {
    lock_path(&followed(path)?)
}

/// Waits for and takes the [`UpdateLock`] of the model file at `path`. A `path` that is a
/// symbolic link is followed to the file it leads to (which need not exist yet), whose lock
/// is taken and which saves replace: a model reached by a link and by its own path is one
/// model with one lock, and the link stays a link.
pub fn lock_for_update(path: &Path) -> Result<UpdateLock, ModelFileError> {
    lock_for_update_with(path, || {})
}

/// [`lock_for_update`], calling `waiting` once before it waits if another writer holds the
/// lock (to tell the user why nothing happens).
pub fn lock_for_update_with(
    path: &Path,
    waiting: impl FnOnce(),
) -> Result<UpdateLock, ModelFileError> {
    let (file, model, lock_path) = open_lock(path)?;
    let io = |e| ModelFileError::io(&lock_path, e);
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            waiting();
            file.lock().map_err(io)?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    Ok(UpdateLock { _file: file, model })
}

/// [`lock_for_update`] without waiting: `None`, at once, if another writer holds the lock. For
/// a long-running front end that must go on with its other work (the daemon sorting new mail,
/// heeding signals) and try again later, instead of waiting behind a writer that may hold the
/// lock for minutes (a `spamsort learn` of a whole mailbox).
pub fn try_lock_for_update(path: &Path) -> Result<Option<UpdateLock>, ModelFileError> {
    let (file, model, lock_path) = open_lock(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(UpdateLock { _file: file, model })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(ModelFileError::io(&lock_path, e)),
    }
}

/// The lock file of the model file at `path` (see [`lock_for_update`]), opened (created if
/// missing; read-only where this user may not write it, as `flock` needs no write access) but
/// not locked, with the model file it is for and its own path.
fn open_lock(path: &Path) -> Result<(std::fs::File, PathBuf, PathBuf), ModelFileError> {
    let path = followed(path).map_err(|e| ModelFileError::io(path, e))?;
    // Before the lock file is made beside it: a directory there would leave a stray lock.
    crate::corpus::regular_file::refuse_irregular_at(&path)
        .map_err(|e| ModelFileError::io(&path, e))?;
    let lock_path = lock_path(&path).map_err(|e| ModelFileError::io(&path, e))?;
    let open = |options: &mut std::fs::OpenOptions| {
        crate::corpus::regular_file::open_regular_with(options, &lock_path)
    };
    let file = match open(
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    ) {
        // A lock file another user made (with that user's umask, 0644 say) beside a model
        // shared through a group: the lock is taken on it read-only (`flock` needs no write
        // access), so that user's `learn` and this one's still wait for each other, where the
        // write access asked for first refused every writer but the one that made it.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            open(std::fs::OpenOptions::new().read(true)).map_err(|_| e)
        }
        opened => opened,
    }
    .map_err(|e| ModelFileError::io(&lock_path, e))?;
    Ok((file, path, lock_path))
}

/// The most symbolic links [`followed`] follows (Linux's own limit).
const MAX_LINKS: usize = 40;

/// `path` with the symbolic links of its last component followed (a relative target from the
/// link's directory): the file the path names, which need not exist unless `path` is a link.
/// A link to nothing is an error rather than a file made where the link says (a link a user
/// may plant, where a server keeps per-user models, must not choose where files are created),
/// and so is a chain of more than [`MAX_LINKS`] links (a loop). For a writer that replaces a
/// file by renaming a new one over it (a model file's saves, `spamsort dump FILE`): renaming
/// over `path` itself would replace the link.
pub fn followed(path: &Path) -> std::io::Result<PathBuf> {
    let mut followed = path.to_path_buf();
    for hops in 0..=MAX_LINKS {
        match std::fs::symlink_metadata(&followed) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&followed)?;
                followed = match followed.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Err(e) if hops > 0 && e.kind() == std::io::ErrorKind::NotFound => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "a symbolic link to {}, which does not exist",
                        followed.display()
                    ),
                ));
            }
            _ => return Ok(followed),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ELOOP))
}

/// Reads and decodes section 0 of a model file.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, ModelFileError> {
    ModelFileReader::open(path)?.read(0)
}

/// Writes file bytes to the model file of `lock` atomically: readers see the old file or the
/// complete new one. The file is created readable by its owner only (it describes the owner's
/// mail). The temporary file is `.NAME.spamsort-tmp.XXXXXX` beside the model file `NAME`
/// (`X`: six ASCII letters or digits); files so named, left by a save of the same model file
/// that was killed, are removed first. Nothing else is: holding `lock` means no other save of
/// this model file is in progress, and another model file's temporary files have its name.
pub fn save_bytes(bytes: &[u8], lock: &UpdateLock) -> Result<(), ModelFileError> {
    save_parts(&[bytes], lock)
}

/// Saves the file of `sections` (see [`encode_sections`]) as [`save_bytes`] does, writing
/// them one after the other rather than copying them into one buffer first.
pub fn save_sections(sections: &[Vec<u8>], lock: &UpdateLock) -> Result<(), ModelFileError> {
    let header = encode_header(sections);
    let parts: Vec<&[u8]> = std::iter::once(header.as_slice())
        .chain(sections.iter().map(Vec::as_slice))
        .collect();
    save_parts(&parts, lock)
}

/// [`save_bytes`] of the concatenation of `parts`.
fn save_parts(parts: &[&[u8]], lock: &UpdateLock) -> Result<(), ModelFileError> {
    let path = lock.model_path();
    let io = |source| ModelFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (dir, name) = remove_stale_temp_files(lock)?;
    // NamedTempFile removes the temporary file if anything below fails.
    let mut tmp = temp_file(dir, name).map_err(io)?;
    if let Ok(old) = std::fs::metadata(path) {
        keep_access(tmp.as_file(), &old);
    }
    for part in parts {
        tmp.write_all(part).map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)?;
    Ok(())
}

/// Removes the temporary files a killed save of `lock`'s model file left (see [`save_bytes`]);
/// returns the model's directory and file name.
fn remove_stale_temp_files(lock: &UpdateLock) -> Result<(&Path, &std::ffi::OsStr), ModelFileError> {
    let path = lock.model_path();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| ModelFileError::invalid(path, "the model path names no file"))?;
    // Every save of this model file holds `lock`, so a temporary file of this model file that
    // exists now belongs to a save that was killed (a SIGKILL leaves it; an error does not).
    for stale in temp_files(dir, name) {
        let _ = std::fs::remove_file(stale);
    }
    Ok((dir, name))
}

/// Gives the new file of a save the owner (where the saver may: root), group and permission
/// bits of the file it replaces, so a model shared through a group (a spamd server running as
/// one user, `spamsort learn` run by another) stays shared, a user's model that root learns
/// into or prunes stays the user's (not root's 0600, which its owner could no longer read),
/// and it is always read and write for its owner; a new file stays readable by its owner only
/// (the temporary file's 0600). Best effort: if the group cannot be given (the saver is not
/// in it), the group and other bits are dropped rather than handed to the saver's own group.
fn keep_access(file: &std::fs::File, old: &std::fs::Metadata) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let new = file.metadata().ok();
    // Only root may give a file away; anyone else keeps the new file as theirs.
    if new.as_ref().is_some_and(|m| m.uid() != old.uid()) {
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), None);
    }
    // Owner read and write whatever the old file had: a save replaces the file whatever its
    // bits (the rename needs only the directory), so a 000 or 0400 left on a broken model
    // (the case `restore --force` is for) guards nothing; kept, it would make the model just
    // written unreadable to its owner's next classify and learn. The group and other bits
    // are kept rather than reset to a fresh file's 0600, so a group-shared model stays shared.
    let mut mode = (old.mode() & 0o777) | 0o600;
    let same_group = new.is_some_and(|m| m.gid() == old.gid());
    if !same_group && std::os::unix::fs::fchown(file, None, Some(old.gid())).is_err() {
        mode &= 0o700;
    }
    let _ = file.set_permissions(std::fs::Permissions::from_mode(mode));
}

/// Random characters ending a temporary file name.
const TEMP_RANDOM_CHARS: usize = 6;

/// How the temporary files of a save of the model file `name` start: `.NAME.spamsort-tmp.`
/// (then [`TEMP_RANDOM_CHARS`] letters and digits).
fn temp_prefix(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".spamsort-tmp.");
    prefix
}

/// A new temporary file in `dir` for a save of the model file `name`.
fn temp_file(dir: &Path, name: &std::ffi::OsStr) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(&temp_prefix(name))
        .rand_bytes(TEMP_RANDOM_CHARS)
        .tempfile_in(dir)
}

/// The temporary files in `dir` of saves of the model file `name`: regular files (symbolic
/// links not followed) named exactly by its [`temp_prefix`] and [`TEMP_RANDOM_CHARS`] ASCII
/// letters and digits, so no other file (another model's, another program's) ever matches.
fn temp_files(dir: &Path, name: &std::ffi::OsStr) -> Vec<PathBuf> {
    let prefix = temp_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let file_name = entry.file_name();
            let ours = file_name
                .as_encoded_bytes()
                .strip_prefix(prefix.as_encoded_bytes())
                .is_some_and(|rest| {
                    rest.len() == TEMP_RANDOM_CHARS && rest.iter().all(u8::is_ascii_alphanumeric)
                });
            ours && entry.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|entry| entry.path())
        .collect()
}

/// Saves `value` as a one-section file, atomically (see [`save_bytes`]).
pub fn save<T: Serialize>(value: &T, lock: &UpdateLock) -> Result<(), ModelFileError> {
    save_bytes(&encode(value), lock)
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
        bytes[8..12].copy_from_slice(&(OLDEST_READ - 1).to_le_bytes());
        let err = decode::<u8>(&bytes, Path::new("m")).unwrap_err();
        assert!(err.to_string().contains("retrain"), "{err}");
        bytes[8..12].copy_from_slice(&OLDEST_READ.to_le_bytes());
        let fixed = crc32fast::hash(&bytes[..header_len(1) - 4]);
        bytes[header_len(1) - 4..header_len(1)].copy_from_slice(&fixed.to_le_bytes());
        assert_eq!(decode::<u8>(&bytes, Path::new("m")).unwrap(), 1);
    }

    #[test]
    fn length_claims_beyond_the_section_are_refused_before_allocating() {
        // A byte string claiming 1 GiB in a 5-byte section (varint length, then nothing):
        // refused for want of input, nothing reserved for the claim.
        let mut section = Vec::new();
        let mut claim = 1u64 << 30;
        while claim >= 0x80 {
            section.push(claim as u8 | 0x80);
            claim >>= 7;
        }
        section.push(claim as u8);
        assert_eq!(section.len(), 5);
        let err = decode_slice::<serde_bytes::ByteBuf>(&section).unwrap_err();
        assert!(
            matches!(err, postcard::Error::DeserializeUnexpectedEnd),
            "{err:?}"
        );
        let err = decode_slice::<String>(&section).unwrap_err();
        assert!(
            matches!(err, postcard::Error::DeserializeUnexpectedEnd),
            "{err:?}"
        );
        // A sequence claiming 2^60 elements: serde preallocates at most 1 MiB, then the
        // elements run out.
        let section = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10];
        let err = decode_slice::<Vec<u64>>(&section).unwrap_err();
        assert!(
            matches!(err, postcard::Error::DeserializeUnexpectedEnd),
            "{err:?}"
        );
        // A valid section decodes, varints and all.
        let counts: Vec<u64> = (0..5000).map(|i| i % 7).collect();
        let section = encode_section(&counts);
        assert!(section.len() < 4 * 5000, "one-byte varints");
        assert_eq!(decode_slice::<Vec<u64>>(&section).unwrap().0, counts);
    }

    #[test]
    fn a_model_named_like_a_lock_file_is_refused_before_any_file_is_made() {
        // `mail.lock` was its own lock: once a save renamed a new file over it, two writers
        // held the lock at once (found by review: 2 of 80 concurrent learns lost).
        let dir = tempfile::tempdir().unwrap();
        for name in ["mail.lock", "link.lock"] {
            let err = lock_for_update(&dir.path().join(name)).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
            assert!(format!("{:#}", anyhow::Error::from(err)).contains("must not end in `.lock`"));
        }
        // Also through a link whose name looks fine.
        std::os::unix::fs::symlink("real.lock", dir.path().join("link.spamsort")).unwrap();
        assert!(lock_for_update(&dir.path().join("link.spamsort")).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(lock_for_update(&dir.path().join("mail.locked")).is_ok());
    }

    #[test]
    fn a_model_path_ending_in_a_slash_is_refused_before_any_file_is_made() {
        // `--model new/` failed at the save, having made `new.lock` beside it.
        let dir = tempfile::tempdir().unwrap();
        for name in ["new/", "new/.", "new/.."] {
            let path = PathBuf::from(format!("{}/{name}", dir.path().display()));
            let err = lock_for_update(&path).unwrap_err();
            assert!(format!("{:#}", anyhow::Error::from(err)).contains("not end in `/`"));
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Regression (auditA): a lock file made by another user (0644 under a umask of 022)
    /// beside a model shared through a group refused every other writer, as it was opened for
    /// writing. (Run as root, which may write any file, this passes without the fix too.)
    #[test]
    fn a_lock_file_this_user_may_not_write_is_still_taken() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        drop(lock_for_update(&path).unwrap());
        let lock_file = dir.path().join("m.lock");
        std::fs::set_permissions(&lock_file, std::fs::Permissions::from_mode(0o444)).unwrap();
        let held = lock_for_update(&path).unwrap();
        assert!(try_lock_for_update(&path).unwrap().is_none());
        drop(held);
        assert!(try_lock_for_update(&path).unwrap().is_some());
    }

    #[test]
    fn trying_the_update_lock_another_writer_holds_gives_none_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.spamsort");
        let held = lock_for_update(&path).unwrap();
        assert!(try_lock_for_update(&path).unwrap().is_none());
        drop(held);
        let taken = try_lock_for_update(&path).unwrap().unwrap();
        assert_eq!(taken.model_path(), path);
        assert!(try_lock_for_update(&path).unwrap().is_none());
    }

    #[test]
    fn a_model_reached_by_a_link_is_locked_and_saved_as_the_file_it_leads_to() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.spamsort");
        std::fs::write(&real, b"before").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link.spamsort")).unwrap();
        // A link to a link, relative.
        std::os::unix::fs::symlink("link.spamsort", dir.path().join("link2.spamsort")).unwrap();
        let lock = lock_for_update(&dir.path().join("link2.spamsort")).unwrap();
        assert_eq!(lock.model_path(), real);
        assert!(dir.path().join("real.lock").exists());
        assert!(!dir.path().join("link2.lock").exists());
        // The file the links lead to is replaced; the links stay links.
        for bytes in [&b"first"[..], b"second"] {
            save_bytes(bytes, &lock).unwrap();
            assert_eq!(
                std::fs::read(dir.path().join("link2.spamsort")).unwrap(),
                bytes
            );
        }
        drop(lock);
        for link in ["link.spamsort", "link2.spamsort"] {
            let meta = std::fs::symlink_metadata(dir.path().join(link)).unwrap();
            assert!(meta.file_type().is_symlink(), "{link}");
        }
        // Taken through the link, the lock is the one the file's own path takes.
        let held = lock_for_update(&real).unwrap();
        let file = std::fs::File::open(dir.path().join("real.lock")).unwrap();
        assert!(matches!(
            file.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        // A link to nothing is an error, not a file made where it points.
        std::os::unix::fs::symlink("nowhere.spamsort", dir.path().join("dangling")).unwrap();
        let err = lock_for_update(&dir.path().join("dangling")).unwrap_err();
        assert!(err.to_string().contains("dangling"), "{err}");
        assert!(!dir.path().join("nowhere.lock").exists());
        // 40 links are followed, as the kernel does; a loop is an error, not a file made in
        // its place.
        let mut next = "real.spamsort".to_string();
        for i in 0..MAX_LINKS {
            let name = format!("chain{i}");
            std::os::unix::fs::symlink(&next, dir.path().join(&name)).unwrap();
            next = name;
        }
        let chained = lock_for_update(&dir.path().join(&next)).unwrap();
        assert_eq!(chained.model_path(), real);
        drop(chained);
        std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
        let err = lock_for_update(&dir.path().join("loop-a")).unwrap_err();
        assert!(err.to_string().contains("loop-a"), "{err}");
        assert!(!dir.path().join("loop-a.lock").exists());
        // A directory, named or linked to, is refused before a lock file is made beside it.
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        std::os::unix::fs::symlink("folder", dir.path().join("to-folder.spamsort")).unwrap();
        for path in ["folder", "to-folder.spamsort"] {
            let err = lock_for_update(&dir.path().join(path)).unwrap_err();
            let cause = std::error::Error::source(&err).map(|e| e.to_string());
            assert!(cause.is_some_and(|c| c.contains("a directory")), "{err}");
        }
        assert!(!dir.path().join("folder.lock").exists());
    }

    #[test]
    fn temp_files_are_found_by_their_exact_name_only() {
        let dir = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::new("model.spamsort");
        let ours = temp_file(dir.path(), name).unwrap();
        let other = temp_file(dir.path(), std::ffi::OsStr::new("model")).unwrap();
        assert_eq!(temp_files(dir.path(), name), [ours.path().to_path_buf()]);
        assert_eq!(
            temp_files(dir.path(), std::ffi::OsStr::new("model")),
            [other.path().to_path_buf()]
        );
    }

    #[test]
    fn a_file_rewritten_or_truncated_after_open_gives_an_error_not_its_new_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        let file = |a: u64, b: u64| encode_sections(&[encode_section(&a), encode_section(&b)]);
        std::fs::write(&path, file(1, 2)).unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        assert_eq!(r.read::<u64>(0).unwrap(), 1);
        // Rewritten in place (same layout, other contents) after the directory was read.
        std::fs::write(&path, file(3, 4)).unwrap();
        let err = r.read::<u64>(1).unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        assert_eq!(r.read::<u64>(0).unwrap(), 1, "a section read stays as read");
        // Truncated (as `cp` does first) after the directory was read.
        std::fs::write(&path, file(1, 2)).unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            r.section(1),
            Err(ModelFileError::Truncated { .. })
        ));
    }

    #[test]
    fn section_pieces_are_the_bytes_at_the_ranges_of_a_checked_section() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        // Three and a half chunks of distinct bytes, after a small first section.
        let big: Vec<u8> = (0..STREAM_CHUNK * 7 / 2)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let sections = [encode_section(&1u64), big.clone()];
        std::fs::write(&path, encode_sections(&sections)).unwrap();
        let n = big.len() as u64;
        let chunk = STREAM_CHUNK as u64;
        let sets = [
            vec![
                0..3,
                // Across the first chunk's end, empty, ending on the next chunk's end, starting
                // on it.
                chunk - 2..chunk + 5,
                chunk + 9..chunk + 9,
                chunk + 10..2 * chunk,
                2 * chunk..2 * chunk + 1,
                n - 4..n,
            ],
            // Across two chunk ends at once; the whole section, in two.
            vec![0..0, chunk - 1..3 * chunk + 1],
            vec![0..n / 2, n / 2..n],
        ];
        let pieces = |r: &ModelFileReader, ranges: &[Range<u64>]| {
            let want: Vec<u8> = ranges
                .iter()
                .flat_map(|r| big[r.start as usize..r.end as usize].to_vec())
                .collect();
            assert_eq!(
                r.section_pieces(1, ranges.iter().cloned()).unwrap(),
                want,
                "{ranges:?}"
            );
        };
        let r = ModelFileReader::open(&path).unwrap();
        assert_eq!(r.section_len(1), n);
        for ranges in &sets {
            pieces(&r, ranges);
        }
        // A section shorter than a chunk.
        assert_eq!(
            r.section_pieces(0, [0..1, 1..1].into_iter()).unwrap(),
            encode_section(&1u64)
        );
        // From a section already held whole, the same.
        r.section(1).unwrap();
        for ranges in &sets {
            pieces(&r, ranges);
        }
        // Ranges out of order, reversed or past the end are refused, as is a missing section.
        let r = ModelFileReader::open(&path).unwrap();
        let reversed = Range { start: 4, end: 2 };
        for bad in [[5..6, 0..1], [0..0, reversed], [0..1, n - 1..n + 1]] {
            assert!(
                r.section_pieces(1, bad.clone().into_iter()).is_err(),
                "{bad:?}"
            );
        }
        assert!(r.section_pieces(2, std::iter::empty()).is_err());
        // A byte changed anywhere in the section, even outside the ranges, is found.
        let mut bytes = encode_sections(&sections);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        let err = r.section_pieces(1, [0..1, 2..3].into_iter()).unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        // So is a file cut short after it was opened.
        std::fs::write(&path, encode_sections(&sections)).unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(matches!(
            r.section_pieces(1, [0..1, 2..3].into_iter()),
            Err(ModelFileError::Truncated { .. })
        ));
    }

    #[test]
    fn reader_reads_sections_independently() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        save_bytes(
            &encode_sections(&[encode_section(&"head"), encode_section(&7u64)]),
            &lock_for_update(&path).unwrap(),
        )
        .unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        assert_eq!(r.sections(), 2);
        assert_eq!(r.read::<u64>(1).unwrap(), 7);
        assert_eq!(r.read::<String>(0).unwrap(), "head");
        assert!(r.read::<u8>(2).is_err());
    }

    #[test]
    fn a_rewrite_in_place_fails_check_unchanged_and_an_append_or_a_save_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        let lock = lock_for_update(&path).unwrap();
        let sections = [encode_section(&"head"), encode_section(&7u64)];
        save_sections(&sections, &lock).unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        // A learn appends a journal record; a save renames a new file over the path.
        let journal = r.journal().unwrap().clone();
        r.append(&journal, b"record", &lock).unwrap();
        r.check_unchanged().unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        save_sections(&[encode_section(&"head"), encode_section(&8u64)], &lock).unwrap();
        r.check_unchanged().unwrap();
        // `cp` of another file (one section differs: so does the directory) over it.
        let other = std::fs::read(&path).unwrap();
        std::fs::write(&path, encode_sections(&sections)).unwrap();
        let r = ModelFileReader::open(&path).unwrap();
        r.check_unchanged().unwrap();
        std::fs::write(&path, &other).unwrap();
        let err = r.check_unchanged().unwrap_err();
        assert!(err.to_string().contains("rewritten in place"), "{err}");
        // Cut short.
        std::fs::write(&path, b"SPAM").unwrap();
        assert!(matches!(
            r.check_unchanged(),
            Err(ModelFileError::Truncated { .. })
        ));
    }
}
