//! A directory tree of one-message files (MH folders, or plain folders such as the
//! SpamAssassin corpus). Hidden files and directories are skipped, and so are MH's deleted
//! messages (files named `,N` or `#N`); symlinks are followed and a symlink loop is reported
//! once as an error item instead of looping. A maildir inside the tree (a folder of mail
//! folders, such as `~/Mail` holding `inbox/{cur,new,tmp}`) is read as a maildir: its `new/`
//! and `cur/` alone, never its `tmp/` (deliveries in progress). The files a mail server keeps
//! beside such maildirs are never read as mail either (see [`server_file`]: Dovecot's index
//! files, uid lists and subscriptions, Courier's).

use super::CorpusError;
use super::maildir::{self, is_maildir};
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// Every non-hidden file below `dir`, in [`mh_order`] within each directory, and in place of
/// each maildir below it that maildir's messages (see [`super::maildir::message_paths`]).
/// Whatever is not a directory is listed, so that reading one that is not a regular file (a
/// FIFO, a device, a link to one) reports it with its path (see [`super::read_file`]) rather
/// than skip it unsaid.
pub fn message_paths(dir: &Path) -> Vec<Result<PathBuf, CorpusError>> {
    let mut walker = WalkDir::new(dir)
        .follow_links(true)
        .sort_by(|a, b| mh_order(a.file_name()).cmp(&mh_order(b.file_name())))
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().as_encoded_bytes().starts_with(b"."));
    let mut out = Vec::new();
    let mut mail_stores = MailStores::default();
    while let Some(entry) = walker.next() {
        match entry {
            Ok(e) if !e.file_type().is_dir() => {
                let name = e.file_name();
                let no_mail = deleted(name) || (server_file(name) && mail_stores.holds(e.path()));
                if !no_mail {
                    out.push(Ok(e.into_path()));
                }
            }
            Ok(e) if e.depth() > 0 && e.file_type().is_dir() && is_maildir(e.path()) => {
                walker.skip_current_dir();
                match maildir::message_paths(e.path()) {
                    Ok(paths) => out.extend(paths),
                    Err(err) => out.push(Err(err)),
                }
            }
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

/// The sort key of a name within a directory: MH messages (names of ASCII digits alone) first,
/// by number, as MH numbers them (`2` before `10`; `07` and `7` after `6` and before `8`);
/// then every other name (subfolders, the files of a plain folder), by its bytes. Messages
/// are read in this order, and order matters: `train` keeps the first copy's label of a
/// message given twice, and online evaluation learns in order. One key rather than a
/// comparison that is numeric for some pairs and lexical for others, which would be no order
/// (`2` < `10` < `1a` < `2`).
fn mh_order(name: &std::ffi::OsStr) -> (bool, usize, &[u8], &[u8]) {
    let bytes = name.as_encoded_bytes();
    if !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit) {
        // Numbers of any length, compared without parsing: fewer digits, a smaller number.
        let start = bytes.iter().position(|&b| b != b'0').unwrap_or(bytes.len());
        let digits = &bytes[start..];
        (false, digits.len(), digits, bytes)
    } else {
        (true, 0, bytes, bytes)
    }
}

/// Whether a file's name is one a mail server gives the files it keeps beside mail folders:
/// Dovecot's (`dovecot.index*`, `dovecot.list.index*`, `dovecot-uidlist`,
/// `dovecot-uidvalidity*`, `dovecot-keywords`, `subscriptions`) and Courier's or a quota's
/// (`courierimap*`, `maildirfolder`, `maildirsize`). Such a file in a folder that holds a
/// maildir (see [`MailStores`]) is no message: read as mail, they taught the filter binary
/// junk.
fn server_file(name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    name.starts_with(b"dovecot")
        || name.starts_with(b"courierimap")
        || matches!(name, b"maildirfolder" | b"maildirsize" | b"subscriptions")
}

/// Which folders of a tree hold a maildir, where a mail server keeps its own files (a folder
/// of mail folders, such as Dovecot's `~/Mail`): elsewhere a file named like one of them is a
/// message like any other. Each folder is looked at once.
#[derive(Default)]
struct MailStores(std::collections::HashMap<PathBuf, bool>);

impl MailStores {
    /// Whether the folder holding the file at `path` holds a maildir.
    fn holds(&mut self, path: &Path) -> bool {
        let Some(folder) = path.parent() else {
            return false;
        };
        *self.0.entry(folder.to_path_buf()).or_insert_with(|| {
            std::fs::read_dir(folder).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_type().is_ok_and(|t| t.is_dir()) && is_maildir(&e.path()))
            })
        })
    }
}

/// Whether a file is one MH keeps of a deleted message: `rmm` renames message `N` to `,N`
/// (or `#N`, with another backup prefix) rather than remove it. Mail its owner threw away
/// (spam deleted from an inbox, say) must not be read as that folder's mail.
fn deleted(name: &std::ffi::OsStr) -> bool {
    matches!(name.as_encoded_bytes().first(), Some(b',' | b'#'))
}
