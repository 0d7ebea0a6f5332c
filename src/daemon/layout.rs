//! Which folder is which: the daemon's maildirs compared by what they are on disk (canonical
//! path, and device and inode where they exist), not by how they are spelled, so a symlink, a
//! trailing slash or `..` cannot make the inbox look like another folder. [`Layout::check`]
//! refuses every unsafe overlap before anything is created or moved, and tells `mod.rs` which
//! folders are targets (never the inbox) and which the move tracker watches.
//!
//! The layouts people use all pass: separate folders, the spam folder inside the inbox or the
//! ham folder (Maildir++ `.Junk`), and the inbox as the ham folder (dovecot's INBOX), where ham
//! stays in place.

use super::DaemonConfig;
use super::moves::Place;
use std::path::{Component, Path, PathBuf};

/// A daemon setting that would lose mail or learn wrongly, found before anything was touched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// The inbox does not exist (the daemon creates only the folders it files into).
    #[error(
        "the inbox {path} does not exist: give the maildir your mail is delivered to (the daemon creates only the spam, ham and unsure folders)"
    )]
    MissingInbox {
        /// The inbox as given.
        path: PathBuf,
    },
    /// The inbox exists but has no `new/` directory.
    #[error("the inbox {path} is not a maildir: it has no new/ directory")]
    NotMaildir {
        /// The inbox as given.
        path: PathBuf,
    },
    /// A folder messages are moved into is the inbox itself.
    #[error(
        "the {role} folder {path} is the inbox {inbox}: the daemon would file messages into the folder it sorts; give a separate maildir (for example {inbox}/.Junk)"
    )]
    TargetIsInbox {
        /// `spam` or `unsure`.
        role: &'static str,
        /// The folder as given.
        path: PathBuf,
        /// The inbox as given.
        inbox: PathBuf,
    },
    /// Learning from moves with the ham or unsure folder being the spam folder: every message
    /// read there (renamed from `new/` to `cur/`) would look moved into the spam folder.
    #[error(
        "the {role} folder {path} is the spam folder {spam}: learning from moves would learn messages as spam when they are merely read; give separate folders or drop learning from moves"
    )]
    LearningFromSpamFolder {
        /// `ham` or `unsure`.
        role: &'static str,
        /// The folder as given.
        path: PathBuf,
        /// The spam folder as given.
        spam: PathBuf,
    },
    /// A folder inside the inbox's `new/`, `cur/` or `tmp/`: mail readers take what is there
    /// for messages, and the daemon holds the messages it is filing in `tmp/`.
    #[error(
        "the {role} folder {path} is inside the inbox's {dir}/ ({inbox}): mail readers and the daemon take what is there for messages; give a folder outside new/, cur/ and tmp/ (for example {inbox}/.Junk)"
    )]
    InsideInboxDirectory {
        /// `spam`, `ham` or `unsure`.
        role: &'static str,
        /// The folder as given.
        path: PathBuf,
        /// `new`, `cur` or `tmp`.
        dir: &'static str,
        /// The inbox as given.
        inbox: PathBuf,
    },
    /// A folder's path could not be resolved (a component is not a directory, a dangling
    /// symbolic link, no permission).
    #[error("{path}: cannot tell which folder this is")]
    Resolve {
        /// The folder as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A folder as it is on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FolderId {
    /// Absolute, symbolic links and `.`/`..` resolved (lexically past the part that exists).
    canonical: PathBuf,
    /// Device and inode of the folder and of its `new/`, `cur/` and `tmp/`, where they exist.
    inodes: [Option<(u64, u64)>; 4],
}

impl FolderId {
    fn of(path: &Path) -> Result<FolderId, LayoutError> {
        let canonical = canonical(path).map_err(|source| LayoutError::Resolve {
            path: path.to_path_buf(),
            source,
        })?;
        let inode = crate::corpus::file_id;
        Ok(FolderId {
            inodes: [
                inode(&canonical),
                inode(&canonical.join("new")),
                inode(&canonical.join("cur")),
                inode(&canonical.join("tmp")),
            ],
            canonical,
        })
    }

    /// True if both are the same folder, or share a directory in any place (a symlinked `new/`,
    /// or one's `cur/` a link to the other's `new/`), so that a message in one is a message in
    /// the other: recovery would take an inbox message seen there for one already filed.
    fn same(&self, other: &FolderId) -> bool {
        self.canonical == other.canonical
            || self
                .inodes
                .iter()
                .flatten()
                .any(|a| other.inodes.iter().flatten().any(|b| a == b))
    }
}

impl FolderId {
    /// Which of `maildir`'s `new/`, `cur/` and `tmp/` this folder lies inside (or is), if any:
    /// by path, and by what each existing directory on its way is (so a `tmp/` that is a
    /// symbolic link to elsewhere is seen through).
    fn inside_maildir_dir_of(&self, maildir: &FolderId) -> Option<&'static str> {
        let dirs = ["new", "cur", "tmp"];
        let by_path = dirs
            .into_iter()
            .find(|d| self.canonical.starts_with(maildir.canonical.join(d)));
        by_path.or_else(|| {
            self.canonical.ancestors().find_map(|a| {
                let id = crate::corpus::file_id(a)?;
                dirs.into_iter()
                    .zip(&maildir.inodes[1..])
                    .find(|(_, inode)| **inode == Some(id))
                    .map(|(d, _)| d)
            })
        })
    }
}

/// `path` absolute, with symbolic links and `.`/`..` resolved. The part that does not exist yet
/// cannot hold symbolic links, so it is resolved lexically; a dangling symbolic link is an
/// error, since what it would create is elsewhere.
fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    let path = std::path::absolute(path)?;
    let mut existing = path.as_path();
    let mut missing = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(mut out) => {
                for c in missing.into_iter().rev() {
                    match c {
                        Component::ParentDir => {
                            out.pop();
                        }
                        Component::Normal(name) => out.push(name),
                        _ => {}
                    }
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(existing).is_ok() {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("{} is a dangling symbolic link", existing.display()),
                    ));
                }
                let (Some(last), Some(parent)) =
                    (existing.components().next_back(), existing.parent())
                else {
                    return Err(e);
                };
                missing.push(last);
                existing = parent;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The daemon's folders, checked: the paths as given (for messages and logs) and how they
/// relate.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// The inbox, which exists and has `new/`.
    pub inbox: PathBuf,
    /// True if the ham folder is the inbox: ham (and unsure without an unsure folder, and
    /// unclassifiable mail) stays where it is.
    pub ham_is_inbox: bool,
    /// The distinct target folders that are not the inbox: what recovery looks in.
    pub targets: Vec<PathBuf>,
    /// The distinct folders the move tracker watches, each with its place.
    pub tracked: Vec<(PathBuf, Place)>,
}

impl Layout {
    /// Checks `config`'s folders, touching nothing (see [`LayoutError`] for what is refused).
    pub fn check(config: &DaemonConfig) -> Result<Layout, LayoutError> {
        let inbox = &config.inbox;
        match std::fs::metadata(inbox) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LayoutError::MissingInbox {
                    path: inbox.clone(),
                });
            }
            Err(source) => {
                return Err(LayoutError::Resolve {
                    path: inbox.clone(),
                    source,
                });
            }
            Ok(_) if !inbox.join("new").is_dir() => {
                return Err(LayoutError::NotMaildir {
                    path: inbox.clone(),
                });
            }
            Ok(_) => {}
        }
        let inbox_id = FolderId::of(inbox)?;
        let spam_id = FolderId::of(&config.spam)?;
        let ham_id = FolderId::of(&config.ham)?;
        let unsure_id = config.unsure.as_deref().map(FolderId::of).transpose()?;
        let target_is_inbox = |role, path: &Path| LayoutError::TargetIsInbox {
            role,
            path: path.to_path_buf(),
            inbox: inbox.clone(),
        };
        if spam_id.same(&inbox_id) {
            return Err(target_is_inbox("spam", &config.spam));
        }
        if let (Some(u), Some(id)) = (&config.unsure, &unsure_id)
            && id.same(&inbox_id)
        {
            return Err(target_is_inbox("unsure", u));
        }
        let mut roles = vec![
            ("spam", &config.spam, &spam_id),
            ("ham", &config.ham, &ham_id),
        ];
        if let (Some(u), Some(id)) = (&config.unsure, &unsure_id) {
            roles.push(("unsure", u, id));
        }
        for (role, path, id) in roles {
            if let Some(dir) = id.inside_maildir_dir_of(&inbox_id) {
                return Err(LayoutError::InsideInboxDirectory {
                    role,
                    path: path.clone(),
                    dir,
                    inbox: inbox.clone(),
                });
            }
        }
        if config.learn_from_moves {
            let learning = |role, path: &Path| LayoutError::LearningFromSpamFolder {
                role,
                path: path.to_path_buf(),
                spam: config.spam.clone(),
            };
            if ham_id.same(&spam_id) {
                return Err(learning("ham", &config.ham));
            }
            if let (Some(u), Some(id)) = (&config.unsure, &unsure_id)
                && id.same(&spam_id)
            {
                return Err(learning("unsure", u));
            }
        }
        // Distinct folders, the stronger place first: a folder that is both ham and unsure
        // is watched as ham, so a message moved there from spam is learned as ham.
        let mut folders: Vec<(&Path, &FolderId, Place)> = vec![
            (inbox, &inbox_id, Place::Inbox),
            (&config.spam, &spam_id, Place::Spam),
            (&config.ham, &ham_id, Place::Ham),
        ];
        if let (Some(u), Some(id)) = (&config.unsure, &unsure_id) {
            folders.push((u, id, Place::Unsure));
        }
        let mut distinct: Vec<(&Path, &FolderId, Place)> = Vec::new();
        for f in folders {
            if !distinct.iter().any(|d| d.1.same(f.1)) {
                distinct.push(f);
            }
        }
        Ok(Layout {
            inbox: inbox.clone(),
            ham_is_inbox: ham_id.same(&inbox_id),
            targets: distinct
                .iter()
                .filter(|d| d.2 != Place::Inbox)
                .map(|d| d.0.to_path_buf())
                .collect(),
            tracked: distinct.iter().map(|d| (d.0.to_path_buf(), d.2)).collect(),
        })
    }
}

/// True if `a` and `b` are the same folder however spelled (see [`Layout`]); false if either
/// cannot be resolved.
pub(super) fn same_folder(a: &Path, b: &Path) -> bool {
    match (FolderId::of(a), FolderId::of(b)) {
        (Ok(a), Ok(b)) => a.same(&b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::create_maildir;
    use std::time::Duration;

    fn config(inbox: &Path, spam: &Path, ham: &Path) -> DaemonConfig {
        DaemonConfig {
            inbox: inbox.to_path_buf(),
            spam: spam.to_path_buf(),
            ham: ham.to_path_buf(),
            unsure: None,
            add_headers: false,
            learn_from_moves: false,
            rescan: Duration::from_secs(30),
        }
    }

    /// Every path under `root`, to show nothing was created.
    fn tree(root: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.symlink_metadata().unwrap().is_dir() {
                    stack.push(p.clone());
                }
                out.push(p);
            }
        }
        out.sort();
        out
    }

    #[test]
    fn canonical_resolves_spelling_of_paths_that_do_not_exist_yet() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&root, root.join("link")).unwrap();
        for spelled in ["a/b/", "a/./b", "a/c/../b", "link/a/b", "link/x/../a/b/"] {
            assert_eq!(canonical(&root.join(spelled)).unwrap(), root.join("a/b"));
        }
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        assert!(canonical(&root.join("dangling/x")).is_err());
    }

    #[test]
    fn inbox_as_ham_folder_with_junk_inside_is_accepted_and_not_a_target() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("M");
        create_maildir(&inbox).unwrap();
        let mut c = config(&inbox, &inbox.join(".Junk"), &dir.path().join("M/"));
        c.learn_from_moves = true;
        let layout = Layout::check(&c).unwrap();
        assert!(layout.ham_is_inbox);
        assert_eq!(layout.targets, [inbox.join(".Junk")]);
        assert_eq!(
            layout.tracked,
            [
                (inbox.clone(), Place::Inbox),
                (inbox.join(".Junk"), Place::Spam)
            ]
        );
        // Separate folders: all three are targets of their own.
        let c = config(&inbox, &dir.path().join("spam"), &dir.path().join("ham"));
        let layout = Layout::check(&c).unwrap();
        assert!(!layout.ham_is_inbox);
        assert_eq!(layout.targets.len(), 2);
    }

    #[test]
    fn spam_or_unsure_folder_that_is_the_inbox_is_refused_however_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("M");
        create_maildir(&inbox).unwrap();
        std::os::unix::fs::symlink(&inbox, dir.path().join("link")).unwrap();
        // A different folder whose new/ is the inbox's.
        std::fs::create_dir(dir.path().join("shared")).unwrap();
        std::os::unix::fs::symlink(inbox.join("new"), dir.path().join("shared/new")).unwrap();
        // One whose cur/ is the inbox's new/: recovery took every inbox message for filed.
        std::fs::create_dir_all(dir.path().join("curlinked/new")).unwrap();
        std::os::unix::fs::symlink(inbox.join("new"), dir.path().join("curlinked/cur")).unwrap();
        let before = tree(dir.path());
        for spelled in [
            "M",
            "M/",
            "./M",
            "link",
            "link/",
            "M/.Junk/..",
            "shared",
            "curlinked",
        ] {
            let same = dir.path().join(spelled);
            let c = config(&inbox, &same, &dir.path().join("ham"));
            let e = Layout::check(&c).unwrap_err();
            assert!(
                matches!(e, LayoutError::TargetIsInbox { role: "spam", .. }),
                "{spelled}: {e}"
            );
            let mut c = config(&inbox, &dir.path().join("spam"), &inbox);
            c.unsure = Some(same);
            let e = Layout::check(&c).unwrap_err();
            assert!(
                matches!(e, LayoutError::TargetIsInbox { role: "unsure", .. }),
                "{spelled}: {e}"
            );
        }
        assert_eq!(tree(dir.path()), before);
    }

    #[test]
    fn a_folder_inside_the_inboxs_new_cur_or_tmp_is_refused() {
        // Regression: a spam folder at the inbox's tmp/spamsort-taken was accepted, and at
        // start recovery moved its new/, cur/ and tmp/ into the inbox's new/.
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("M");
        create_maildir(&inbox).unwrap();
        create_maildir(&inbox.join("tmp/spamsort-taken")).unwrap();
        let before = tree(dir.path());
        for inside in ["new/Junk", "cur/.Junk", "tmp/spamsort-taken", "tmp/x/../y"] {
            let inside = inbox.join(inside);
            let (elsewhere, unsure) = (dir.path().join("else"), dir.path().join("unsure"));
            let mut configs = vec![
                ("spam", config(&inbox, &inside, &elsewhere)),
                ("ham", config(&inbox, &elsewhere, &inside)),
                ("unsure", config(&inbox, &elsewhere, &inbox)),
            ];
            configs[2].1.unsure = Some(inside.clone());
            let mut c = config(&inbox, &elsewhere, &inbox);
            c.unsure = Some(unsure);
            assert!(Layout::check(&c).is_ok());
            for (role, c) in configs {
                let e = Layout::check(&c).unwrap_err();
                assert!(
                    matches!(e, LayoutError::InsideInboxDirectory { role: r, .. } if r == role),
                    "{role} {}: {e}",
                    inside.display()
                );
            }
        }
        assert_eq!(tree(dir.path()), before);
        // Also where the inbox's tmp/ is a symbolic link to elsewhere, however the folder is
        // spelled: a review found the link let it through.
        let linked = dir.path().join("L");
        std::fs::create_dir_all(linked.join("new")).unwrap();
        std::fs::create_dir_all(linked.join("cur")).unwrap();
        let real_tmp = dir.path().join("real-tmp");
        create_maildir(&real_tmp.join("spamsort-taken")).unwrap();
        std::os::unix::fs::symlink(&real_tmp, linked.join("tmp")).unwrap();
        for spelled in [
            linked.join("tmp/spamsort-taken"),
            real_tmp.join("spamsort-taken"),
        ] {
            let c = config(&linked, &spelled, &dir.path().join("ham"));
            let e = Layout::check(&c).unwrap_err();
            assert!(
                matches!(e, LayoutError::InsideInboxDirectory { dir: "tmp", .. }),
                "{}: {e}",
                spelled.display()
            );
        }
    }

    #[test]
    fn learning_from_moves_with_ham_or_unsure_as_spam_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("in");
        create_maildir(&inbox).unwrap();
        let spam = dir.path().join("spam");
        let mut c = config(&inbox, &spam, &dir.path().join("spam/"));
        assert!(Layout::check(&c).is_ok(), "no learning: only silly");
        c.learn_from_moves = true;
        let e = Layout::check(&c).unwrap_err();
        assert!(matches!(
            e,
            LayoutError::LearningFromSpamFolder { role: "ham", .. }
        ));
        let mut c = config(&inbox, &spam, &dir.path().join("ham"));
        c.unsure = Some(dir.path().join("./spam"));
        assert!(Layout::check(&c).is_ok());
        c.learn_from_moves = true;
        let e = Layout::check(&c).unwrap_err();
        assert!(matches!(
            e,
            LayoutError::LearningFromSpamFolder { role: "unsure", .. }
        ));
        assert!(!spam.exists(), "nothing created");
    }

    #[test]
    fn missing_inbox_is_refused_and_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("nonexistent/x");
        let c = config(&inbox, &dir.path().join("spam"), &dir.path().join("ham"));
        let e = Layout::check(&c).unwrap_err();
        assert!(matches!(e, LayoutError::MissingInbox { .. }), "{e}");
        std::fs::create_dir(dir.path().join("plain")).unwrap();
        let c = config(
            &dir.path().join("plain"),
            &dir.path().join("spam"),
            &dir.path().join("ham"),
        );
        let e = Layout::check(&c).unwrap_err();
        assert!(matches!(e, LayoutError::NotMaildir { .. }), "{e}");
        assert_eq!(tree(dir.path()), [dir.path().join("plain")]);
    }

    #[test]
    fn same_folder_compares_what_folders_are() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        create_maildir(&a).unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("b")).unwrap();
        assert!(same_folder(&a, &dir.path().join("b/")));
        assert!(!same_folder(&a, &dir.path().join("c")));
    }
}
