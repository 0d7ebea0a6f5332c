//! A directory tree of one-message files (MH folders, or plain folders such as the
//! SpamAssassin corpus). Hidden files and directories are skipped; symlinks are followed and a
//! symlink loop is reported once as an error item instead of looping.

use super::CorpusError;
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// Every regular, non-hidden file below `dir`, sorted by path within each directory.
pub fn message_paths(dir: &Path) -> Vec<Result<PathBuf, CorpusError>> {
    let walker = WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().as_encoded_bytes().starts_with(b"."));
    let mut out = Vec::new();
    for entry in walker {
        match entry {
            Ok(e) if e.file_type().is_file() => out.push(Ok(e.into_path())),
            Ok(_) => {}
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_path_buf();
                let io = e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("symbolic link loop, not followed"));
                out.push(Err(CorpusError::io(&path, io)));
            }
        }
    }
    out
}
