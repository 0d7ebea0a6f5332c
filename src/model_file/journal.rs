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
//! after it are ignored, so a torn append is never applied and never corrupts the model. A torn
//! append is cut short (fewer bytes than its header declares), or of full length with zeros
//! from a sector boundary to its end (blocks a crash kept from the disk): any other last record
//! of full length that fails its checksum was damaged after it was written, and no writer cuts
//! it off (see [`ModelFileReader::check_tail`]). A torn append is always the file's last
//! record (the next writer cuts it off before it appends),
//! so a record that fails its checksum with bytes after it was damaged after it was written:
//! that is a [`ModelFileError::Corrupt`] file, not a torn tail, and no reader skips it (a
//! learner would otherwise cut the valid records after it off with its next append). A
//! reader sees the records that were complete when it opened the file (it reads up to the length
//! it saw then), so a reader racing an append sees the state before it or after it, never half.
//!
//! Appending happens under the model's [`UpdateLock`]: the writer cuts a torn tail off first,
//! writes the record after the last valid one, and `fdatasync`s before it lets go of the lock.
//! It cuts off only what an interrupted append can leave (see
//! [`ModelFileReader::append`]): bytes after the last valid record that cannot be one (a record
//! whose damaged header names another file, or whose damaged length claims the records after
//! it, say) stay where they are, and the append fails, as does a learner's whole-file save from
//! what it read (see [`ModelFileReader::check_tail`]). A whole-file save (atomic replace)
//! starts a new file with an empty journal.

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

/// The smallest unit a disk writes: blocks of an append that a crash kept from the disk start
/// at a multiple of it in the file (file systems allocate in multiples of it).
const SECTOR: u64 = 512;

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

    /// File offset just past the last valid record: bytes after it are a torn or damaged
    /// tail (see [`ModelFileReader::check_tail`]).
    pub fn end(&self) -> u64 {
        self.end
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

/// The payload length of the record whose first [`RECORD_HEADER`] bytes are `header`, in a
/// file whose header checksum is `header_crc`; `None` where the header ends the journal (a
/// length over [`MAX_RECORD`], another file's header checksum).
fn payload_len(header: &[u8], header_crc: u32) -> Option<usize> {
    let len = super::u32_at(header, 0) as usize;
    (len <= MAX_RECORD && super::u32_at(header, 4) == header_crc).then_some(len)
}

/// Whether `payload` matches the checksum of its record's `header`.
fn checks(header: &[u8], payload: &[u8]) -> bool {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header[..8]);
    crc.update(payload);
    crc.finalize() == super::u32_at(header, 8)
}

/// A record of this file, whole, that fails its checksum with bytes after it: damage (see the
/// module doc). `index` counts the records before it, `offset` is where it starts in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DamagedRecord {
    index: usize,
    offset: u64,
}

impl DamagedRecord {
    fn error(self, path: &std::path::Path) -> ModelFileError {
        ModelFileError::invalid(
            path,
            format!(
                "journal record {} (at byte {}) fails its checksum with bytes after it: \
                 damaged, not cut short by an interrupted learn",
                self.index + 1,
                self.offset
            ),
        )
    }
}

/// Whether a record of this file, `header` then `payload`, matches its checksum; if it does
/// not, it is a torn tail (`Ok(false)`) where it ends with the journal's bytes (`payload_end`
/// and `tail_end` measured from the same origin), damage if bytes follow it.
fn holds(
    header: &[u8],
    payload: &[u8],
    payload_end: u64,
    tail_end: u64,
    record: DamagedRecord,
) -> Result<bool, DamagedRecord> {
    match checks(header, payload) {
        true => Ok(true),
        false if payload_end < tail_end => Err(record),
        false => Ok(false),
    }
}

/// Header-checksum matches after its start that a torn append may hold before it is taken for
/// no torn append (see [`records_inside`]). Its payload holds the 4 bytes of the checksum by
/// chance about once in 2^32 positions; each match costs a checksum of up to a record's bytes.
const MAX_CHECKSUM_MATCHES: usize = 16;

/// What the bytes of a record that runs to the end of the file (a torn append, or a record
/// whose damaged length claims what follows it) hold after their first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// No record of this file.
    Nothing,
    /// A whole record of this file, correct, at this offset from the start.
    Record(usize),
    /// More than [`MAX_CHECKSUM_MATCHES`] places repeat the file's header checksum: no
    /// append's bytes, whatever they are (and checking each would cost quadratic time).
    Matches,
}

/// What `bytes`, a record of this file (header checksum `header_crc`) that runs to the file's
/// end, holds after its first byte: a candidate record is found by the header checksum it
/// repeats, and is one if its payload lies within `bytes` and matches its checksum.
fn records_inside(bytes: &[u8], header_crc: u32) -> Inside {
    let crc = header_crc.to_le_bytes();
    let Some(after) = bytes.get(5..) else {
        return Inside::Nothing;
    };
    // A record starting at `at` repeats the checksum at `at + 4`; the first byte's own is
    // skipped.
    let starts = memchr::memmem::find_iter(after, &crc).map(|h| h + 1);
    for (k, at) in starts.enumerate() {
        if k == MAX_CHECKSUM_MATCHES {
            return Inside::Matches;
        }
        let rest = &bytes[at..];
        let whole = rest.len() >= RECORD_HEADER
            && payload_len(rest, header_crc)
                .and_then(|len| rest.get(RECORD_HEADER..RECORD_HEADER + len))
                .is_some_and(|payload| checks(rest, payload));
        if whole {
            return Inside::Record(at);
        }
    }
    Inside::Nothing
}

/// The valid records at the start of `tail` (the bytes after the last section, which start at
/// file offset `start`), for a file whose header checksum is `header_crc`; the record that
/// stops them if it is damaged rather than torn.
fn parse(mut tail: Vec<u8>, start: u64, header_crc: u32) -> Result<Journal, DamagedRecord> {
    let mut payloads = Vec::new();
    let mut at = 0;
    while let Some(rest) = tail.get(at..).filter(|rest| rest.len() >= RECORD_HEADER) {
        let Some(len) = payload_len(rest, header_crc) else {
            break;
        };
        let Some(payload) = rest.get(RECORD_HEADER..RECORD_HEADER + len) else {
            break;
        };
        let record = DamagedRecord {
            index: payloads.len(),
            offset: start + at as u64,
        };
        let payload_end = (at + RECORD_HEADER + len) as u64;
        if !holds(rest, payload, payload_end, tail.len() as u64, record)? {
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
    Ok(Journal {
        tail,
        payloads,
        end: start + at as u64,
    })
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
    /// reader: a learner that appends and then compacts, or a scorer of many messages that
    /// replays it, reads it once (a scorer of one message reads its records one at a time
    /// instead, see [`ModelFileReader::for_each_record`]). A file shortened since it was
    /// opened (a writer cut a torn tail) gives the records still there when it is first read.
    pub fn journal(&self) -> Result<&Journal, ModelFileError> {
        if let Some(journal) = self.journal.get() {
            return Ok(journal);
        }
        let journal = self.read_journal()?;
        Ok(self.journal.get_or_init(|| journal))
    }

    /// Fails if bytes the file held when it was opened follow the journal's last valid record
    /// and are not what an interrupted append leaves (see [`ModelFileReader::append`]): records
    /// may follow them, which every reader ignores (it takes them for a torn tail) and which a
    /// writer would lose, cutting them off or saving the file whole from what it read. Writers
    /// check it under the update lock before they change anything; `info` reports it.
    pub fn check_tail(&self) -> Result<(), ModelFileError> {
        let journal = self.journal()?;
        if self.len > journal.end {
            let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
            self.refuse_untorn_tail(&file, journal.end, self.len)?;
        }
        Ok(())
    }

    /// Hands the payload of each record [`ModelFileReader::journal`] gives to `each`, oldest
    /// first, up to `each`'s first error. From the journal's bytes if they were read; else
    /// read one record at a time into one buffer, which is not kept: a reader that decodes
    /// each record once (the pipe filter, for the records' patches) reads a journal of a
    /// megabyte without a megabyte of fresh memory to fault in (with 16 records, 670 page
    /// faults a `filter` run against 196 with none).
    pub fn for_each_record<E: From<ModelFileError>>(
        &self,
        mut each: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(journal) = self.journal.get() {
            return journal.records().try_for_each(each);
        }
        let (mut at, end) = self.journal_bounds();
        let mut payload = Vec::new();
        let mut index = 0;
        while let Some((header, len)) = self.record_header(at, end)? {
            payload.resize(len, 0);
            let start = at + RECORD_HEADER as u64;
            if !self.read_unless_cut(start, &mut payload)? {
                break;
            }
            let record = DamagedRecord { index, offset: at };
            let payload_end = start + len as u64;
            let checked = holds(&header, &payload, payload_end, end, record)
                .map_err(|damaged| damaged.error(&self.path))?;
            if !checked {
                break;
            }
            each(&payload)?;
            at = payload_end;
            index += 1;
        }
        Ok(())
    }

    /// Whether the bytes after the last section begin with a record of this file: a header
    /// naming this file and a payload within the journal's bounds (its checksum is checked
    /// where the record is read). `false` for no journal, or a torn or foreign tail alone,
    /// which a scorer takes for an empty journal, as every reader does.
    pub fn journal_begins(&self) -> Result<bool, ModelFileError> {
        let (start, end) = self.journal_bounds();
        Ok(self.record_header(start, end)?.is_some())
    }

    /// Where the journal starts, and where [`ModelFileReader::journal`] stops reading it: the
    /// length at open, at most [`MAX_JOURNAL`] bytes on.
    fn journal_bounds(&self) -> (u64, u64) {
        let start = self.sections_end();
        (start, self.len.min(start.saturating_add(MAX_JOURNAL)))
    }

    /// The header and payload length of the record at file offset `at` if one of this file
    /// starts there and ends by `end`; `None` where the journal ends.
    fn record_header(
        &self,
        at: u64,
        end: u64,
    ) -> Result<Option<([u8; RECORD_HEADER], usize)>, ModelFileError> {
        let mut header = [0; RECORD_HEADER];
        if end.saturating_sub(at) < RECORD_HEADER as u64
            || !self.read_unless_cut(at, &mut header)?
        {
            return Ok(None);
        }
        let fits = |len: usize| (RECORD_HEADER + len) as u64 <= end - at;
        Ok(payload_len(&header, self.header_crc)
            .filter(|&len| fits(len))
            .map(|len| (header, len)))
    }

    /// Fills `bytes` from file offset `offset`; `false` where the file ends first (a writer
    /// cut a torn tail since it was opened: that ends the journal there, as it ends
    /// [`ModelFileReader::journal`]'s read).
    fn read_unless_cut(&self, offset: u64, bytes: &mut [u8]) -> Result<bool, ModelFileError> {
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        match self.read_exact_at(&file, offset, bytes) {
            Err(ModelFileError::Truncated { .. }) => Ok(false),
            read => read.map(|()| true),
        }
    }

    fn read_journal(&self) -> Result<Journal, ModelFileError> {
        let (start, end) = self.journal_bounds();
        let want = end.saturating_sub(start);
        let parsed = |tail| parse(tail, start, self.header_crc).map_err(|d| d.error(&self.path));
        if want == 0 {
            return parsed(Vec::new());
        }
        let io = |e| ModelFileError::io(&self.path, e);
        // `want` is at most MAX_JOURNAL: reserved once rather than grown by doubling.
        let mut tail = Vec::with_capacity(want as usize);
        {
            let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
            file.seek(std::io::SeekFrom::Start(start)).map_err(io)?;
            (&mut *file).take(want).read_to_end(&mut tail).map_err(io)?;
        }
        parsed(tail)
    }

    /// Appends one record to the journal of the file this reader opened, which must be the file
    /// at `lock`'s path, read (`journal`) under that lock: a torn tail after `journal`'s
    /// records is cut off first (any other bytes there fail the append, see
    /// `refuse_untorn_tail`), then the record is written and `fdatasync`ed. If the write or
    /// the sync fails (a full disk), the file is cut back to where the journal ended, so it
    /// holds no part of the record; should that cut fail too, it may hold a torn record, which
    /// every reader ignores and the next append cuts off.
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
            std::fs::OpenOptions::new().read(true).write(true),
            lock.model_path(),
        )
        .map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len != journal.end {
            if len > journal.end {
                self.refuse_untorn_tail(&file, journal.end, len)?;
            }
            file.set_len(journal.end).map_err(io)?;
        }
        file.seek(std::io::SeekFrom::Start(journal.end))
            .map_err(io)?;
        let written = file
            .write_all(&encode_record(self.header_crc, payload))
            .and_then(|()| file.sync_data());
        if let Err(e) = written {
            // Cut back at once: a cut record (a full disk) would stay until the next append, and
            // a whole one whose sync failed would be applied by every later load although this
            // learn failed. Best effort: the error said is the write's.
            let _ = file.set_len(journal.end);
            return Err(io(e));
        }
        Ok(())
    }

    /// Fails unless the bytes of `file` from `end` (just past the journal's last valid record)
    /// to `len` are what an interrupted append can leave, which [`ModelFileReader::append`]
    /// cuts off: fewer bytes than a record header, a header of this file whose record runs
    /// past the end of the file (cut short) and holds no whole record of this file after its
    /// start (see [`records_inside`]), or zeros (a crash before the data reached the disk),
    /// also where they end a record of full length from a sector boundary on (a crash after
    /// the file's new length reached the disk and before the record's last blocks did, which
    /// ext3, ext4 with `data=writeback` and some network file systems allow; see [`SECTOR`]).
    /// Anything else (a record that ends with the file but fails its checksum otherwise, which
    /// a flipped bit leaves and no interrupted append does; a record header naming another
    /// file, which a damaged header does too; a damaged length field that makes a record claim
    /// the records after it; bytes something else appended) is left in place: the user is
    /// told, and records may follow it, which a cut would lose.
    fn refuse_untorn_tail(
        &self,
        file: &std::fs::File,
        end: u64,
        len: u64,
    ) -> Result<(), ModelFileError> {
        let n = len - end;
        if n < RECORD_HEADER as u64 {
            return Ok(());
        }
        let mut header = [0; RECORD_HEADER];
        self.read_exact_at(file, end, &mut header)?;
        let declared = payload_len(&header, self.header_crc).map(|p| (RECORD_HEADER + p) as u64);
        // A record of this file runs past the end (so `n` is less than a record's bytes): torn,
        // unless a whole record follows inside it, which a torn append cannot hold (its header's
        // length field was damaged, not cut short: a cut would lose that record). One that ends
        // with the file is whole: it was written to the end, so a failing checksum is damage.
        let cut_short = declared.is_some_and(|d| d > n);
        let inside = if cut_short {
            let mut rest = vec![0; n as usize];
            self.read_exact_at(file, end, &mut rest)?;
            records_inside(&rest, self.header_crc)
        } else {
            Inside::Nothing
        };
        if (cut_short && inside == Inside::Nothing)
            || (n <= MAX_JOURNAL && self.zeros(file, end, n)?)
            || (declared == Some(n) && self.ends_in_unwritten_sectors(file, end, len)?)
        {
            return Ok(());
        }
        let valid = self.journal()?.len();
        if declared == Some(n) {
            return Err(ModelFileError::invalid(
                &self.path,
                format!(
                    "journal record {} (at byte {end}), the last, is whole but fails its \
                     checksum: damaged (a flipped bit, say), not cut short by an interrupted \
                     learn, so it was never applied; the file is left as it is: `spamsort \
                     dump` then `spamsort restore` rebuild it from the {valid} records before \
                     (then learn again what was learned last)",
                    valid + 1
                ),
            ));
        }
        let what = match inside {
            Inside::Record(at) => format!(
                "journal record {} (at byte {end}) claims to run past the file's end, but a \
                 whole record follows it at byte {}: its length field is damaged, it was not \
                 cut short by an interrupted learn",
                valid + 1,
                end + at as u64
            ),
            Inside::Matches => format!(
                "journal record {} (at byte {end}) claims to run past the file's end, but its \
                 bytes repeat the file's header checksum over {MAX_CHECKSUM_MATCHES} times: it \
                 is no interrupted append",
                valid + 1
            ),
            Inside::Nothing => format!(
                "the journal's last {n} bytes, after its {valid} valid records, are no \
                 interrupted append"
            ),
        };
        Err(ModelFileError::invalid(
            &self.path,
            format!(
                "{what}; the file is left as it is, as a cut or a save would lose the records \
                 that may follow (`spamsort dump` then `spamsort restore` rebuild the file from \
                 the {valid} records before, without any after)"
            ),
        ))
    }

    /// Whether the record from `end` to `len` ends in zeros from a [`SECTOR`] boundary inside
    /// it: the last blocks of an append that a crash kept from the disk read back as zeros,
    /// and they start at such a boundary. Only the record's last sector is read: if the zeros
    /// start earlier, they cover it too. (A damaged record that happens to end so is taken for
    /// torn, as every failing last record was before damage was told apart: never applied.)
    fn ends_in_unwritten_sectors(
        &self,
        file: &std::fs::File,
        end: u64,
        len: u64,
    ) -> Result<bool, ModelFileError> {
        let last_boundary = (len - 1) / SECTOR * SECTOR;
        Ok(last_boundary > end && self.zeros(file, last_boundary, len - last_boundary)?)
    }

    /// Whether the `n` bytes of `file` from `at` are all zero (read [`super::STREAM_CHUNK`]
    /// bytes at a time, as sections are streamed).
    fn zeros(&self, file: &std::fs::File, at: u64, n: u64) -> Result<bool, ModelFileError> {
        let chunk_len = super::STREAM_CHUNK as u64;
        let mut chunk = vec![0; n.min(chunk_len) as usize];
        let mut done = 0;
        while done < n {
            let chunk = &mut chunk[..(n - done).min(chunk_len) as usize];
            self.read_exact_at(file, at + done, chunk)?;
            if chunk.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            done += chunk.len() as u64;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_and_foreign_records_end_the_journal_and_damaged_ones_are_errors() {
        let a = encode_record(7, b"first");
        let b = encode_record(7, b"second");
        let mut tail = [a.clone(), b.clone()].concat();
        let records = |j: &Journal| j.records().map(<[u8]>::to_vec).collect::<Vec<_>>();
        let whole = parse(tail.clone(), 100, 7).unwrap();
        assert_eq!(records(&whole), [b"first".to_vec(), b"second".to_vec()]);
        assert_eq!(whole.end, 100 + tail.len() as u64);
        // Every cut inside the second record leaves the first alone.
        for cut in a.len()..tail.len() {
            let j = parse(tail[..cut].to_vec(), 0, 7).unwrap();
            assert_eq!(records(&j), [b"first".to_vec()], "cut at {cut}");
            assert_eq!(j.end, a.len() as u64);
        }
        // Another header's records are not applied.
        assert!(parse(tail.clone(), 0, 8).unwrap().is_empty());
        // A flipped bit in the last record: not applied (the journal ends before it; that it
        // is damage, not a torn tail, `check_tail` tells).
        for i in a.len()..tail.len() {
            tail[i] ^= 0x10;
            let j = parse(tail.clone(), 0, 7).unwrap();
            assert_eq!(records(&j), [b"first".to_vec()], "byte {i}");
            tail[i] ^= 0x10;
        }
        // A flipped bit in a record with another after it: in its checksum or payload, damage
        // (its index and offset said); in its length or header checksum field, the journal
        // ends there or the record is damaged, but it is never applied.
        for i in 0..a.len() {
            tail[i] ^= 0x10;
            match parse(tail.clone(), 100, 7) {
                Ok(j) => assert!(i < 8 && j.is_empty(), "byte {i}"),
                Err(damaged) => {
                    assert!(!(4..8).contains(&i), "byte {i}");
                    assert_eq!(
                        damaged,
                        DamagedRecord {
                            index: 0,
                            offset: 100
                        }
                    );
                }
            }
            tail[i] ^= 0x10;
        }
        tail[a.len() - 1] ^= 1;
        assert!(parse(tail, 0, 7).is_err());
        // Junk after the records (no record of this file) is no damage.
        let junk = [a.clone(), b.clone(), vec![0xAB; 40]].concat();
        assert_eq!(parse(junk, 0, 7).unwrap().len(), 2);
    }

    /// A directory holding `m`, a model file of one section and no journal; its bytes, and two
    /// records of it (a short one, then one of 300 bytes).
    fn one_section_and_two_records() -> (tempfile::TempDir, Vec<u8>, [Vec<u8>; 2]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m");
        let sections = super::super::encode_sections(&[super::super::encode_section(&1u64)]);
        std::fs::write(&path, &sections).unwrap();
        let crc = ModelFileReader::open(&path).unwrap().header_crc;
        let records = [encode_record(crc, b"first"), encode_record(crc, &[9; 300])];
        (dir, sections, records)
    }

    #[test]
    fn an_append_cuts_off_a_torn_tail_and_nothing_else() {
        let (dir, sections, [a, b]) = one_section_and_two_records();
        let path = dir.path().join("m");
        let crc = ModelFileReader::open(&path).unwrap().header_crc;
        let mut foreign_header = b.clone();
        foreign_header[5] ^= 0x01;
        let append = |tail: &[u8]| {
            let file = [&sections[..], &a, tail].concat();
            std::fs::write(&path, &file).unwrap();
            let lock = super::super::lock_for_update(&path).unwrap();
            let reader = ModelFileReader::open(&path).unwrap();
            let journal = reader.journal().unwrap().clone();
            assert_eq!(journal.len(), 1);
            let appended = reader.append(&journal, b"third", &lock);
            let after = std::fs::read(&path).unwrap();
            match appended {
                Ok(()) => {
                    let third = encode_record(crc, b"third");
                    assert_eq!(after, [&sections[..], &a, &third].concat());
                    true
                }
                Err(e) => {
                    assert!(matches!(e, ModelFileError::Corrupt { .. }), "{e}");
                    assert_eq!(after, file, "nothing cut");
                    false
                }
            }
        };
        // What a killed append leaves: cut off.
        for torn in [&b[..5], &b[..12], &b[..b.len() - 1], &[0; 40][..]] {
            assert!(append(torn), "{} bytes", torn.len());
        }
        // Regression: a whole last record whose checksum fails (a flipped bit) was taken for a
        // torn append and cut off without a word. It is damage: kept, and the learn refused.
        let mut bad_checksum = b.clone();
        *bad_checksum.last_mut().unwrap() ^= 1;
        assert!(!append(&bad_checksum));
        assert!(append(&bad_checksum[..bad_checksum.len() - 1]), "cut short");
        // Review: a crash that kept a whole record's last blocks from the disk after its
        // length reached it leaves zeros from a sector boundary to the end. That was refused
        // as damage, and every later learn with it; it is what an interrupted append leaves.
        let big = encode_record(crc, &[0x5A; 3000]);
        let start = (sections.len() + a.len()) as u64;
        let len = start + big.len() as u64;
        let boundary = ((len - 1) / SECTOR * SECTOR - start) as usize;
        assert!(
            boundary > RECORD_HEADER,
            "the record spans a sector boundary"
        );
        let mut unwritten = big.clone();
        unwritten[boundary..].fill(0);
        assert!(append(&unwritten), "zeros from a sector boundary: torn");
        // Zeros that do not run to the end (its last byte written): damage.
        let mut zeroed_inside = big.clone();
        let last = zeroed_inside.len() - 1;
        zeroed_inside[RECORD_HEADER + 1..last].fill(0);
        assert!(!append(&zeroed_inside));
        // A record whose header no longer names the file, with a record after it, and bytes
        // no append writes: kept, and the learn refused.
        assert!(!append(&[&foreign_header[..], &a].concat()));
        assert!(!append(&[0xAB; 40]));
        // A record whose length field was damaged to claim a mebibyte more than it holds runs
        // past the file's end, as a torn one does; but a whole record follows inside it.
        let mut long_length = b.clone();
        long_length[2] ^= 0x10;
        assert!(!append(&[&long_length[..], &a].concat()));
        assert!(
            append(&long_length),
            "alone, it is what a torn append looks like"
        );
        // Bytes that repeat the header checksum more often than any append's would: refused
        // without a checksum worked out at each (which would take quadratic time).
        let mut repeating = long_length.clone();
        for chunk in repeating[RECORD_HEADER..].chunks_mut(4) {
            chunk.copy_from_slice(&crc.to_le_bytes()[..chunk.len()]);
        }
        assert!(!append(&repeating));
        assert!(append(
            &repeating[..RECORD_HEADER + 4 * MAX_CHECKSUM_MATCHES]
        ));
    }

    #[test]
    fn records_streamed_are_those_the_journal_reads() {
        let (dir, sections, [a, b]) = one_section_and_two_records();
        let path = dir.path().join("m");
        let crc = ModelFileReader::open(&path).unwrap().header_crc;
        let streamed = |r: &ModelFileReader| {
            let mut out = Vec::new();
            r.for_each_record(|p| {
                out.push(p.to_vec());
                Ok::<_, ModelFileError>(())
            })
            .unwrap();
            out
        };
        let whole = |r: &ModelFileReader| {
            let j = r.journal().unwrap();
            j.records().map(<[u8]>::to_vec).collect::<Vec<_>>()
        };
        let mut tail = [a.clone(), b.clone(), encode_record(crc + 1, b"foreign")].concat();
        // Each cut of the journal; then each flipped byte of its two records.
        let mut tails: Vec<Vec<u8>> = (0..=tail.len()).map(|cut| tail[..cut].to_vec()).collect();
        for i in 0..a.len() + b.len() {
            tail[i] ^= 0x10;
            tails.push(tail.clone());
            tail[i] ^= 0x10;
        }
        let mut seen = [0; 3];
        let mut damaged = 0;
        for tail in tails {
            std::fs::write(&path, [&sections[..], &tail].concat()).unwrap();
            let Ok(journal) = ModelFileReader::open(&path).unwrap().journal().cloned() else {
                // Damage: streamed, the same error, after the records before it.
                damaged += 1;
                let reader = ModelFileReader::open(&path).unwrap();
                let mut read = 0;
                let streamed = reader.for_each_record(|_| {
                    read += 1;
                    Ok::<_, ModelFileError>(())
                });
                assert!(matches!(streamed, Err(ModelFileError::Corrupt { .. })));
                assert!(read < 2);
                continue;
            };
            let want: Vec<Vec<u8>> = journal.records().map(<[u8]>::to_vec).collect();
            seen[want.len()] += 1;
            // A record read means one began; a tail cut inside the first one is none.
            let begins = ModelFileReader::open(&path)
                .unwrap()
                .journal_begins()
                .unwrap();
            assert!(begins || want.is_empty());
            assert!(!begins || tail.len() >= a.len());
            assert_eq!(streamed(&ModelFileReader::open(&path).unwrap()), want);
            // A reader that read the journal hands its records on.
            let reader = ModelFileReader::open(&path).unwrap();
            assert_eq!(whole(&reader), want);
            assert_eq!(streamed(&reader), want);
        }
        assert!(
            seen.iter().all(|&n| n > 0) && damaged > 0,
            "{seen:?} {damaged}"
        );
        // Another file's record alone.
        let foreign = encode_record(crc + 1, b"foreign");
        std::fs::write(&path, [&sections[..], &foreign].concat()).unwrap();
        assert!(
            !ModelFileReader::open(&path)
                .unwrap()
                .journal_begins()
                .unwrap()
        );
        // A file cut short after the reader opened it: the records still there.
        std::fs::write(&path, [&sections[..], &a, &b].concat()).unwrap();
        let reader = ModelFileReader::open(&path).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len((sections.len() + a.len() + 3) as u64).unwrap();
        assert_eq!(streamed(&reader), [b"first".to_vec()]);
        // A record appended after the reader opened the file is not read.
        std::fs::write(&path, [&sections[..], &a].concat()).unwrap();
        let reader = ModelFileReader::open(&path).unwrap();
        std::fs::write(&path, [&sections[..], &a, &b].concat()).unwrap();
        assert_eq!(streamed(&reader), [b"first".to_vec()]);
        // Stopped at `each`'s first error.
        std::fs::write(&path, [&sections[..], &a, &b].concat()).unwrap();
        let mut calls = 0;
        let stopped = ModelFileReader::open(&path).unwrap().for_each_record(|_| {
            calls += 1;
            Err(ModelFileError::invalid(&path, "stop"))
        });
        assert!(stopped.is_err());
        assert_eq!(calls, 1);
    }
}
