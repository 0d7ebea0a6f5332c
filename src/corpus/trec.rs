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
    resolved(index, path).exists()
        || lines[1..].iter().all(|line| {
            std::str::from_utf8(line)
                .is_ok_and(|l| l.trim().is_empty() || parse_line(l.trim_end()).is_some())
        })
}

/// `path`, a line's message file, resolved against the folder of `index`.
fn resolved(index: &Path, path: &str) -> PathBuf {
    index.parent().unwrap_or(Path::new(".")).join(path)
}

fn parse_line(line: &str) -> Option<(Label, &str)> {
    let (label, path) = line.split_once(char::is_whitespace)?;
    let label = label.parse().ok()?;
    let path = path.trim();
    (!path.is_empty()).then_some((label, path))
}

/// Largest index file read (TREC 2007's full index, 75,419 lines, is about 2 MB).
pub const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// Reads an index (a regular file of at most [`MAX_INDEX_BYTES`]). Blank lines are skipped; a
/// malformed line becomes an `Err` item so the caller can report it and go on.
pub fn read_index(index: &Path) -> Result<Vec<Result<TrecEntry, CorpusError>>, CorpusError> {
    let bytes =
        super::read_regular(index, MAX_INDEX_BYTES).map_err(|e| CorpusError::io(index, e))?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| match parse_line(line.trim_end()) {
            Some((label, path)) => Ok(TrecEntry {
                label,
                path: resolved(index, path),
            }),
            None => Err(CorpusError::BadIndexLine {
                path: index.to_path_buf(),
                line: n + 1,
                text: line.chars().take(80).collect(),
            }),
        })
        .collect())
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
}
