//! TREC spam-track index files: one `spam PATH` or `ham PATH` line per message, in the order
//! the messages are to be seen. Relative paths are resolved against the index file's folder.

use super::CorpusError;
use crate::label::Label;
use std::path::{Path, PathBuf};

/// One line of an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrecEntry {
    /// The gold label.
    pub label: Label,
    /// The message file, resolved.
    pub path: PathBuf,
}

/// Whether the file `index`, whose first bytes are `head` (the whole file if `whole`), is an
/// index: its first line reads as an index line, and the file it names exists or every other
/// line of `head` reads as one too (blank lines aside; not the line the end of `head` cuts
/// off). A message whose first line merely starts with `spam ` or `ham ` ("ham and eggs for
/// breakfast") names no file and goes on in prose: it is a message. An index whose first
/// message is missing, or with a malformed line, still has the other.
pub fn is_index(index: &Path, head: &[u8], whole: bool) -> bool {
    let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if !whole && lines.len() > 1 {
        lines.pop();
    }
    let first = lines.first().and_then(|l| std::str::from_utf8(l).ok());
    let Some((_, path)) = first.and_then(|l| parse_line(l.trim_end())) else {
        return false;
    };
    entries_folder(index).join(path).exists()
        || lines[1..].iter().all(|line| {
            std::str::from_utf8(line)
                .is_ok_and(|l| l.trim().is_empty() || parse_line(l.trim_end()).is_some())
        })
}

/// The folder an index's relative paths start from: the index file's own. For an index
/// reached through a symbolic link, that of the file it leads to (where the corpus it lists
/// lies): the link's folder gave a corpus linked elsewhere no message at all.
fn entries_folder(index: &Path) -> PathBuf {
    let real = std::fs::symlink_metadata(index)
        .is_ok_and(|m| m.file_type().is_symlink())
        .then(|| std::fs::canonicalize(index).ok())
        .flatten();
    let index = real.as_deref().unwrap_or(index);
    index.parent().unwrap_or(Path::new(".")).to_path_buf()
}

fn parse_line(line: &str) -> Option<(Label, &str)> {
    let (label, path) = line.split_once(char::is_whitespace)?;
    let label = label.parse().ok()?;
    let path = path.trim();
    (!path.is_empty()).then_some((label, path))
}

/// Largest index file read (TREC 2007's full index, 75,419 lines, is about 2 MB).
pub const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// Reads an index (a regular file of at most [`MAX_INDEX_BYTES`]): its entries, parsed as they
/// are asked for. Blank lines are skipped; a malformed line becomes an `Err` item so the caller
/// can report it and go on.
pub fn read_index(index: &Path) -> Result<IndexEntries, CorpusError> {
    let bytes =
        super::read_regular(index, MAX_INDEX_BYTES).map_err(|e| CorpusError::io(index, e))?;
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(IndexEntries {
        index: index.to_path_buf(),
        folder: entries_folder(index),
        text: text.into(),
        at: 0,
        line: 0,
    })
}

/// The entries of an index, in its order, each parsed when it is asked for: memory stays the
/// index's text, whatever its lines (held as a list of entries, an index of short lines, a
/// name or an error per line, took a hundred times its size: 3.3 GB for 32 MiB). Cloning it
/// shares the text.
#[derive(Debug, Clone)]
pub struct IndexEntries {
    index: PathBuf,
    /// Where its relative paths start ([`entries_folder`]).
    folder: PathBuf,
    text: std::sync::Arc<str>,
    /// Where the next line starts in `text`.
    at: usize,
    /// The number of lines before it.
    line: usize,
}

impl IndexEntries {
    /// Fails with [`CorpusError::IndexLabelDisagrees`] if the index lists a message of another
    /// class than `label` (its malformed lines aside): an index keeps its own labels, so one
    /// given as the mail of a class (`train --spam`, `learn --ham`) must list that class
    /// alone, or its other messages would be taken as the wrong class. Reads the entries of a
    /// clone: `self` is left where it was.
    pub fn check_class(&self, label: Label) -> Result<(), CorpusError> {
        match self.clone().flatten().find(|e| e.label != label) {
            Some(other) => Err(CorpusError::IndexLabelDisagrees {
                index: self.index.clone(),
                message: other.path,
                listed: other.label,
                given: label,
            }),
            None => Ok(()),
        }
    }
}

impl Iterator for IndexEntries {
    type Item = Result<TrecEntry, CorpusError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let rest = self.text.get(self.at..).filter(|r| !r.is_empty())?;
            let len = rest.find('\n').map_or(rest.len(), |n| n + 1);
            let line = &rest[..len];
            self.at += len;
            self.line += 1;
            // As `str::lines` reads them: without the line feed and a carriage return before it.
            let line = line.strip_suffix('\n').unwrap_or(line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() {
                continue;
            }
            return Some(match parse_line(line.trim_end()) {
                Some((label, path)) => Ok(TrecEntry {
                    label,
                    path: self.folder.join(path),
                }),
                None => Err(CorpusError::BadIndexLine {
                    path: self.index.clone(),
                    line: self.line,
                    text: line.chars().take(80).collect(),
                }),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_and_parses_lines() {
        let index = Path::new("/nonexistent/index");
        assert!(is_index(
            index,
            b"spam ../data/inmail.1\nham ../data/inmail.2\n",
            true
        ));
        assert!(!is_index(index, b"Subject: spam me\n", true));
        assert!(!is_index(index, b"From a@b\n", true));
        assert_eq!(parse_line("ham /abs/x"), Some((Label::Ham, "/abs/x")));
        assert_eq!(parse_line("maybe x"), None);
        assert_eq!(parse_line("spam"), None);
    }

    #[test]
    fn an_index_listing_another_class_fails_its_class_check() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        std::fs::write(&index, b"spam a\nbad\nspam b\n").unwrap();
        let entries = read_index(&index).unwrap();
        assert!(entries.check_class(Label::Spam).is_ok());
        assert!(matches!(
            entries.check_class(Label::Ham),
            Err(CorpusError::IndexLabelDisagrees {
                listed: Label::Spam,
                given: Label::Ham,
                ..
            })
        ));
        // The entries themselves are still all there.
        assert_eq!(entries.count(), 3);
    }

    #[test]
    fn entries_are_read_line_by_line_as_lines_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        std::fs::write(&index, b"spam a\r\n\nham  b c \nbad\n  \r\nham d").unwrap();
        let entries: Vec<_> = read_index(&index).unwrap().collect();
        let at = |p: &str| dir.path().join(p);
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[0].as_ref().unwrap().path, at("a"));
        assert_eq!(entries[1].as_ref().unwrap().path, at("b c"));
        assert_eq!(entries[1].as_ref().unwrap().label, Label::Ham);
        assert!(matches!(
            &entries[2],
            Err(CorpusError::BadIndexLine { line: 4, text, .. }) if text == "bad"
        ));
        assert_eq!(entries[3].as_ref().unwrap().path, at("d"));
    }
}
