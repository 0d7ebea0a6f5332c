//! The journal: records appended after a model file's last section, so that a small change
//! (one learned message) costs an append and a `fdatasync` instead of rewriting the whole
//! file. The container does not interpret a record's payload (see `crate::filter::store` for
//! the learned state's); it only makes records safe to append and to read while appended.
//!
//! # Layout of a record
//!
//! ```text
//! size  field
//!    4  payload length L (u32, little-endian, at most MAX_RECORD)
//!    4  the file's header checksum (the CRC-32 ending its directory)
//!    4  CRC-32 of the 8 bytes above and the payload
//!    L  payload
//! ```
//!
//! Records follow the last section back to back. A reader takes them in order and stops at the
//! first that is cut short, fails its checksum or names another header (a torn append by a
//! writer killed mid-write, or bytes of a file rewritten in place): that record and everything
//! after it are ignored, so a torn append is never applied and never corrupts the model. A
//! reader sees the records that were complete when it opened the file (it reads up to the length
//! it saw then), so a reader racing an append sees the state before it or after it, never half.
//!
//! Appending happens under the model's [`UpdateLock`]: the writer cuts a torn tail off first,
//! writes the record after the last valid one, and `fdatasync`s before it lets go of the lock.
//! A whole-file save (atomic replace) starts a new file with an empty journal.

use super::{ModelFileError, ModelFileReader, UpdateLock};
use std::io::{Read, Seek, Write};
use std::ops::Range;

/// Bytes before a record's payload.
const RECORD_HEADER: usize = 12;

/// Largest payload a record may have; a length field above it ends the journal.
pub const MAX_RECORD: usize = 64 << 20;

/// The most journal bytes a reader reads: twice the largest record. A learner compacts the
/// journal long before (see `crate::filter::journal`), so anything past this is junk appended
/// to the file, read as a torn tail instead of into memory.
pub const MAX_JOURNAL: u64 = 2 * MAX_RECORD as u64;

/// The valid records of a model file's journal, as read by [`ModelFileReader::journal`]:
/// the bytes read, in which each record's payload is found where it lies (copied out, a
/// megabyte of journal cost a seventh of a `filter`'s time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    /// The bytes after the last section, as read.
    tail: Vec<u8>,
    /// Where each record's payload lies in `tail`, oldest first.
    payloads: Vec<Range<usize>>,
    /// File offset just past the last valid record (where the next append goes).
    end: u64,
}

impl Journal {
    /// Each record's payload, oldest first.
    pub fn records(&self) -> impl ExactSizeIterator<Item = &[u8]> {
        self.payloads.iter().map(|r| &self.tail[r.clone()])
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.payloads.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.payloads.is_empty()
    }

    /// Bytes the valid records take in the file, headers included.
    pub fn bytes(&self) -> u64 {
        self.payloads
            .iter()
            .map(|r| (RECORD_HEADER + r.len()) as u64)
            .sum()
    }
}

/// Bytes a record with this payload takes in the file.
pub fn record_len(payload: &[u8]) -> u64 {
    (RECORD_HEADER + payload.len()) as u64
}

/// A record as laid out in the file: header then payload, for a file whose header checksum is
/// `header_crc`. Panics on a payload over [`MAX_RECORD`] (callers bound what they append).
pub fn encode_record(header_crc: u32, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() <= MAX_RECORD, "journal record too large");
    let mut out = Vec::with_capacity(RECORD_HEADER + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&header_crc.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out);
    crc.update(payload);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The valid records at the start of `tail` (the bytes after the last section, which start at
/// file offset `start`), for a file whose header checksum is `header_crc`.
fn parse(mut tail: Vec<u8>, start: u64, header_crc: u32) -> Journal {
    let mut payloads = Vec::new();
    let mut at = 0;
    while let Some(rest) = tail.get(at..).filter(|rest| rest.len() >= RECORD_HEADER) {
        let len = super::u32_at(rest, 0) as usize;
        if len > MAX_RECORD || super::u32_at(rest, 4) != header_crc {
            break;
        }
        let Some(payload) = rest.get(RECORD_HEADER..RECORD_HEADER + len) else {
            break;
        };
        let mut crc = crc32fast::Hasher::new();
        crc.update(&rest[..8]);
        crc.update(payload);
        if crc.finalize() != super::u32_at(rest, 8) {
            break;
        }
        payloads.push(at + RECORD_HEADER..at + RECORD_HEADER + len);
        at += RECORD_HEADER + len;
    }
    // What follows the last valid record (a torn one, junk) is never read: not kept either.
    if at < tail.len() {
        tail.truncate(at);
        tail.shrink_to_fit();
    }
    Journal {
        tail,
        payloads,
        end: start + at as u64,
    }
}

impl ModelFileReader {
    /// Offset just past the last section: where the journal starts.
    pub(crate) fn sections_end(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.offset + e.len)
    }

    /// The file's length in bytes when it was opened.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// The journal: the records complete when the file was opened, up to the first torn or
    /// foreign one (see the module doc), within the first [`MAX_JOURNAL`] bytes. Read once per
    /// reader: a scorer that checks it and then replays it, or a learner that appends and then
    /// compacts, reads it once. A file shortened since it was opened (a writer cut a torn tail)
    /// gives the records still there when it is first read.
    pub fn journal(&self) -> Result<&Journal, ModelFileError> {
        if let Some(journal) = self.journal.get() {
            return Ok(journal);
        }
        let journal = self.read_journal()?;
        Ok(self.journal.get_or_init(|| journal))
    }

    fn read_journal(&self) -> Result<Journal, ModelFileError> {
        let start = self.sections_end();
        let want = self.len.saturating_sub(start).min(MAX_JOURNAL);
        if want == 0 {
            return Ok(parse(Vec::new(), start, self.header_crc));
        }
        let io = |e| ModelFileError::io(&self.path, e);
        // `want` is at most MAX_JOURNAL: reserved once rather than grown by doubling.
        let mut tail = Vec::with_capacity(want as usize);
        {
            let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
            file.seek(std::io::SeekFrom::Start(start)).map_err(io)?;
            (&mut *file).take(want).read_to_end(&mut tail).map_err(io)?;
        }
        Ok(parse(tail, start, self.header_crc))
    }

    /// Appends one record to the journal of the file this reader opened, which must be the file
    /// at `lock`'s path, read (`journal`) under that lock: a torn tail after `journal`'s
    /// records is cut off first, then the record is written and `fdatasync`ed. On an error the
    /// file may hold a torn record, which every reader ignores and the next append cuts off.
    pub fn append(
        &self,
        journal: &Journal,
        payload: &[u8],
        lock: &UpdateLock,
    ) -> Result<(), ModelFileError> {
        if payload.len() > MAX_RECORD {
            return Err(ModelFileError::invalid(
                &self.path,
                "a journal record over its size limit",
            ));
        }
        let io = |e| ModelFileError::io(&self.path, e);
        super::remove_stale_temp_files(lock)?;
        let mut file = crate::corpus::regular_file::open_regular_with(
            std::fs::OpenOptions::new().write(true),
            lock.model_path(),
        )
        .map_err(io)?;
        if file.metadata().map_err(io)?.len() != journal.end {
            file.set_len(journal.end).map_err(io)?;
        }
        file.seek(std::io::SeekFrom::Start(journal.end))
            .map_err(io)?;
        file.write_all(&encode_record(self.header_crc, payload))
            .map_err(io)?;
        file.sync_data().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_foreign_and_corrupt_records_end_the_journal() {
        let a = encode_record(7, b"first");
        let b = encode_record(7, b"second");
        let mut tail = [a.clone(), b.clone()].concat();
        let records = |j: &Journal| j.records().map(<[u8]>::to_vec).collect::<Vec<_>>();
        assert_eq!(
            records(&parse(tail.clone(), 100, 7)),
            [b"first".to_vec(), b"second".to_vec()]
        );
        assert_eq!(parse(tail.clone(), 100, 7).end, 100 + tail.len() as u64);
        // Every cut inside the second record leaves the first alone.
        for cut in a.len()..tail.len() {
            let j = parse(tail[..cut].to_vec(), 0, 7);
            assert_eq!(records(&j), [b"first".to_vec()], "cut at {cut}");
            assert_eq!(j.end, a.len() as u64);
        }
        // Another header's records, and any flipped bit, are not applied.
        assert!(parse(tail.clone(), 0, 8).is_empty());
        for i in 0..a.len() {
            tail[i] ^= 0x10;
            assert!(parse(tail.clone(), 0, 7).is_empty(), "byte {i}");
            tail[i] ^= 0x10;
        }
    }
}
