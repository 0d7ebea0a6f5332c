//! Maildir: messages are the files in `cur/` and `new/`; `tmp/` holds deliveries in progress
//! and is never read. A file name may carry an info suffix `:2,FLAGS` (e.g. `:2,RS`), which
//! [`MaildirName`] splits off.

use super::CorpusError;
use std::path::{Path, PathBuf};

/// True if `dir` has two of the subdirectories `cur/`, `new/` and `tmp/`: a maildir, also one
/// that lost an empty one (copied by a tool that drops empty directories, such as git), whose
/// `tmp/` must still never be read as mail.
pub fn is_maildir(dir: &Path) -> bool {
    let has = |sub: &str| dir.join(sub).is_dir();
    [has("cur"), has("new"), has("tmp")]
        .iter()
        .filter(|&&h| h)
        .count()
        >= 2
}

/// The message files of a maildir: `new/` then `cur/`, each sorted by name, dotfiles skipped.
/// Whatever is not a directory is listed (a link to a message is read as the message; reading
/// a FIFO or a device reports it with its path, see [`super::read_file`]). A file that cannot
/// be listed comes back as an `Err` item; a missing `cur/` or `new/` holds no mail, and one
/// that cannot be listed is an error for the whole maildir.
pub fn message_paths(dir: &Path) -> Result<Vec<Result<PathBuf, CorpusError>>, CorpusError> {
    let mut out = Vec::new();
    for sub in ["new", "cur"] {
        let sub = dir.join(sub);
        let mut names = Vec::new();
        let entries = match std::fs::read_dir(&sub) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            entries => entries.map_err(|e| CorpusError::io(&sub, e))?,
        };
        for entry in entries {
            match entry {
                Ok(entry) => {
                    let hidden = entry.file_name().as_encoded_bytes().starts_with(b".");
                    let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                    if !hidden && !is_dir {
                        names.push(entry.path());
                    }
                }
                Err(e) => out.push(Err(CorpusError::io(&sub, e))),
            }
        }
        names.sort();
        out.extend(names.into_iter().map(Ok));
    }
    Ok(out)
}

/// Finds where maildir messages listed under a name now gone are now. A mail reader renames a
/// message as it reads it, `new/NAME` to `cur/NAME:2,` and `cur/NAME:2,` to `cur/NAME:2,S` as
/// its flags change; listed before that, it would be missed. The maildir's names are listed at
/// most once a second (see [`Renames::RELIST`]), so a maildir whose messages are deleted while
/// it is read costs a listing per second, not one per message gone.
#[derive(Debug, Default)]
pub(crate) struct Renames {
    /// The maildir last listed, when, and its message files by unique part (`cur/` first).
    listed: Option<(PathBuf, std::time::Instant)>,
    names: std::collections::HashMap<String, PathBuf>,
}

impl Renames {
    /// The least time between two listings of a maildir.
    const RELIST: std::time::Duration = std::time::Duration::from_secs(1);

    /// Where the message once at `path` (`DIR/new/NAME` or `DIR/cur/NAME`, in a maildir `DIR`)
    /// is now: the file of `DIR/cur/` or `DIR/new/` whose name has the same unique part (see
    /// [`MaildirName`]) under another name. `None` for a path in no maildir, or where no such
    /// file was found.
    pub(crate) fn find(&mut self, path: &Path) -> Option<PathBuf> {
        let name = path.file_name()?.to_str()?;
        let sub = path.parent()?;
        let dir = sub.parent()?;
        if !matches!(sub.file_name()?.to_str()?, "new" | "cur") || !is_maildir(dir) {
            return None;
        }
        let fresh = (self.listed.as_ref())
            .is_some_and(|(listed, at)| listed == dir && at.elapsed() < Self::RELIST);
        if !fresh {
            self.list(dir);
        }
        let unique = MaildirName::parse(name).unique;
        self.names.get(unique).filter(|now| *now != path).cloned()
    }

    /// Lists the message files of the maildir `dir` by unique part.
    fn list(&mut self, dir: &Path) {
        self.names.clear();
        for sub in ["new", "cur"] {
            let sub = dir.join(sub);
            let Ok(entries) = std::fs::read_dir(&sub) else {
                continue;
            };
            for entry in entries.flatten() {
                if let Some(name) = entry.file_name().to_str() {
                    let unique = MaildirName::parse(name).unique.to_owned();
                    // `cur/`, listed last, wins: a message is moved there from `new/`.
                    self.names.insert(unique, sub.join(name));
                }
            }
        }
        self.listed = Some((dir.to_path_buf(), std::time::Instant::now()));
    }
}

/// A maildir file name split into its unique part and its flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaildirName<'a> {
    /// The unique name before `:2,` (the whole name if there is no info suffix).
    pub unique: &'a str,
    /// The flags after `:2,` (`D`raft, `F`lagged, `P`assed, `R`eplied, `S`een, `T`rashed),
    /// empty if none. Experimental (`:1,`) info is not flags and yields `None` here.
    pub flags: Option<&'a str>,
}

impl<'a> MaildirName<'a> {
    /// Splits a file name. Names without an info suffix have no flags.
    pub fn parse(name: &'a str) -> Self {
        match name.rsplit_once(':') {
            Some((unique, info)) => MaildirName {
                unique,
                flags: info.strip_prefix("2,"),
            },
            None => MaildirName {
                unique: name,
                flags: None,
            },
        }
    }

    /// True if the message carries flag `flag` (e.g. `'S'` for seen).
    pub fn has_flag(&self, flag: char) -> bool {
        self.flags.is_some_and(|f| f.contains(flag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_suffix() {
        let n = MaildirName::parse("1700000000.M1P2.host:2,RS");
        assert_eq!(n.unique, "1700000000.M1P2.host");
        assert_eq!(n.flags, Some("RS"));
        assert!(n.has_flag('S') && n.has_flag('R') && !n.has_flag('T'));
        let n = MaildirName::parse("1700000000.M1P2.host");
        assert_eq!((n.unique, n.flags), ("1700000000.M1P2.host", None));
        let n = MaildirName::parse("x:2,");
        assert_eq!(n.flags, Some(""));
        assert_eq!(MaildirName::parse("x:1,exp").flags, None);
    }
}
