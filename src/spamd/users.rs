//! Per-user model files for the spamd server: spamd's `User:` header picks the model file a
//! request is answered with and TELL learns into, through a path template, as spamd's
//! `--virtual-config-dir` does. The user name comes from the client, so it is checked before
//! it becomes part of a path: it can name a file in the template's place only, never another
//! directory (no `/`, no `..`, no NUL or other control characters, a bounded length).

use std::path::{Component, Path, PathBuf};

/// The placeholder a template holds for the user name.
pub const USER_PLACEHOLDER: &str = "%u";

/// The longest user name accepted, in bytes (Linux allows 32; spamd clients send login names).
pub const MAX_USER_NAME: usize = 64;

/// Where each user's model file is: a path template in which every `%u` stands for the user
/// name, such as `/var/lib/spamsort/%u.spamsort`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserModels {
    template: String,
}

/// Why a user name was refused, or a template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UserModelsError {
    /// The template does not hold the placeholder, so every user would share one file.
    #[error("the per-user model path {template:?} has no %u for the user name")]
    NoPlaceholder {
        /// The template as given.
        template: String,
    },
    /// The user name could reach outside the template's place or is not a name at all.
    #[error(
        "user name {shown:?} refused: it must be 1 to {MAX_USER_NAME} bytes with no '/', no \
         '..', no control characters, and not start with '.'"
    )]
    BadUserName {
        /// The name, cut to a readable length.
        shown: String,
    },
}

impl UserModels {
    /// A template; it must contain [`USER_PLACEHOLDER`].
    pub fn new(template: &str) -> Result<UserModels, UserModelsError> {
        if !template.contains(USER_PLACEHOLDER) {
            return Err(UserModelsError::NoPlaceholder {
                template: template.to_owned(),
            });
        }
        Ok(UserModels {
            template: template.to_owned(),
        })
    }

    /// The model file of `user`, refusing a name that could point anywhere but one file in
    /// the template's place: empty, longer than [`MAX_USER_NAME`] bytes, holding `/`, `..`,
    /// NUL or another control character, or starting with `.` (`.` itself, hidden files).
    pub fn path(&self, user: &str) -> Result<PathBuf, UserModelsError> {
        let refused = user.is_empty()
            || user.len() > MAX_USER_NAME
            || user.starts_with('.')
            || user.contains('/')
            || user.contains("..")
            || user.chars().any(char::is_control);
        if refused {
            return Err(UserModelsError::BadUserName {
                shown: user.chars().take(MAX_USER_NAME).collect(),
            });
        }
        Ok(PathBuf::from(self.template.replace(USER_PLACEHOLDER, user)))
    }

    /// How many per-user model files exist now: the files (of any kind) the template names for
    /// a user name [`UserModels::path`] accepts, but none ending in `.lock` (a model file's
    /// lock: no model file may have such a name). The one directory listed is the one holding
    /// the template's first component with `%u` (for `/var/lib/spamsort/%u.spamsort`,
    /// `/var/lib/spamsort`); a missing one holds none. The `--model` file is counted too if
    /// the template names it (a user of its name learns into it).
    pub fn count(&self) -> std::io::Result<usize> {
        let (dir, Some(pattern)) = self.first_user_component() else {
            return Ok(0);
        };
        let dir = dir.as_path();
        let entries = match std::fs::read_dir(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            entries => entries?,
        };
        let mut count = 0;
        for entry in entries {
            let name = entry?.file_name();
            let user = name.to_str().and_then(|n| user_in(pattern, n));
            let path = user.and_then(|u| self.path(u).ok());
            if path.is_some_and(|p| {
                !p.as_os_str().as_encoded_bytes().ends_with(b".lock")
                    && std::fs::symlink_metadata(&p).is_ok()
            }) {
                count += 1;
            }
        }
        Ok(count)
    }

    /// The directory that holds the template's first component with `%u` (`.` for a relative
    /// template that starts with it), and that component, if there is one.
    fn first_user_component(&self) -> (PathBuf, Option<&str>) {
        let mut dir = PathBuf::new();
        for component in Path::new(&self.template).components() {
            match component {
                Component::Normal(c)
                    if c.to_str().is_some_and(|c| c.contains(USER_PLACEHOLDER)) =>
                {
                    let dir = if dir.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        dir
                    };
                    return (dir, c.to_str());
                }
                c => dir.push(c),
            }
        }
        (dir, None)
    }

    /// Makes the directories a user's model file `path` ([`UserModels::path`]'s) needs below
    /// the directory that holds the template's first `%u` (for
    /// `/var/lib/spamsort/%u/model.spamsort`, `/var/lib/spamsort/alice`), readable by the
    /// server alone (mode 0700), one at a time, never through a symbolic link: each must be a
    /// directory of its own once made (or found). That first directory itself must exist: it
    /// is the administrator's, made by nobody else, and writable by the server alone (see the
    /// README: a user who may write there could point a link anywhere in the time between).
    pub fn make_user_directories(&self, path: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        let (base, _) = self.first_user_component();
        let Some(parent) = path.parent() else {
            return Ok(());
        };
        let below = if base == Path::new(".") && parent.is_relative() {
            parent
        } else {
            match parent.strip_prefix(&base) {
                Ok(below) => below,
                Err(_) => return Ok(()),
            }
        };
        if below.as_os_str().is_empty() || !base.is_dir() {
            return Ok(());
        }
        let mut dir = base;
        for component in below.components() {
            let Component::Normal(name) = component else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{} is not a plain path", path.display()),
                ));
            };
            dir.push(name);
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            if !std::fs::symlink_metadata(&dir)?.is_dir() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{} is not a directory (a symbolic link?)", dir.display()),
                ));
            }
        }
        Ok(())
    }
}

/// The user name that makes `pattern` (a path component holding [`USER_PLACEHOLDER`] at least
/// once, each standing for the same name) into `name`, if there is one.
fn user_in<'a>(pattern: &str, name: &'a str) -> Option<&'a str> {
    let places = pattern.matches(USER_PLACEHOLDER).count();
    let fixed = pattern.len() - places * USER_PLACEHOLDER.len();
    let extra = name.len().checked_sub(fixed)?;
    if places == 0 || extra == 0 || extra % places != 0 {
        return None;
    }
    let start = pattern.find(USER_PLACEHOLDER)?;
    let user = name.get(start..start + extra / places)?;
    (pattern.replace(USER_PLACEHOLDER, user) == name).then_some(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_become_one_file_in_the_templates_place() {
        let users = UserModels::new("/var/lib/spamsort/%u.spamsort").unwrap();
        assert_eq!(
            users.path("alice").unwrap(),
            PathBuf::from("/var/lib/spamsort/alice.spamsort")
        );
        assert_eq!(
            users.path("bob@example.org").unwrap(),
            PathBuf::from("/var/lib/spamsort/bob@example.org.spamsort")
        );
    }

    #[test]
    fn only_a_users_own_directories_are_made_and_only_in_an_existing_place() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("users");
        let deep = UserModels::new(base.join("%u/mail/model").to_str().unwrap()).unwrap();
        let alice = deep.path("alice").unwrap();
        // The template's place is the administrator's: missing, nothing is made.
        deep.make_user_directories(&alice).unwrap();
        assert!(!base.exists());
        std::fs::create_dir(&base).unwrap();
        deep.make_user_directories(&alice).unwrap();
        assert!(base.join("alice/mail").is_dir());
        // A template with no directory of the user's makes none.
        let flat = UserModels::new(base.join("%u.spamsort").to_str().unwrap()).unwrap();
        flat.make_user_directories(&flat.path("bob").unwrap())
            .unwrap();
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 1);
        // Never through a link: one planted where a user's directory goes is refused.
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, base.join("carol")).unwrap();
        assert!(
            deep.make_user_directories(&deep.path("carol").unwrap())
                .is_err()
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn path_tricks_and_over_long_user_names_are_refused() {
        let users = UserModels::new("/m/%u").unwrap();
        let long = "a".repeat(MAX_USER_NAME + 1);
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/../../b",
            "x/y",
            "/etc/passwd",
            "a\0b",
            "a\nb",
            ".hidden",
            "a..b",
            &long,
        ] {
            assert!(
                matches!(users.path(bad), Err(UserModelsError::BadUserName { .. })),
                "{bad:?}"
            );
        }
        assert!(users.path(&"a".repeat(MAX_USER_NAME)).is_ok());
    }

    #[test]
    fn the_files_the_template_names_for_users_are_counted_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let template = |t: &str| UserModels::new(&format!("{}/{t}", d.display())).unwrap();
        let users = template("%u.spamsort");
        assert_eq!(users.count().unwrap(), 0);
        for name in [
            "alice.spamsort",
            "alice.lock",
            "bob@example.org.spamsort",
            ".alice.spamsort.spamsort-tmp.x1y2z3",
            "notes.txt",
            "..spamsort",
        ] {
            std::fs::write(d.join(name), "").unwrap();
        }
        assert_eq!(users.count().unwrap(), 2);
        // A template without a suffix does not count the locks.
        assert_eq!(template("%u").count().unwrap(), 3);
        // %u in a directory's name: that directory's parent is listed.
        std::fs::create_dir_all(d.join("u-carol")).unwrap();
        std::fs::create_dir_all(d.join("u-dave")).unwrap();
        std::fs::write(d.join("u-carol/carol.model"), "").unwrap();
        assert_eq!(template("u-%u/%u.model").count().unwrap(), 1);
        assert_eq!(template("nowhere/%u.spamsort").count().unwrap(), 0);
        assert_eq!(user_in("%u.spamsort", "alice.spamsort"), Some("alice"));
        assert_eq!(user_in("%u-%u", "ab-ab"), Some("ab"));
        assert_eq!(user_in("%u-%u", "ab-ac"), None);
        assert_eq!(user_in("x%u", "x"), None);
    }

    #[test]
    fn a_template_without_the_placeholder_is_refused() {
        assert!(matches!(
            UserModels::new("/m/shared.spamsort"),
            Err(UserModelsError::NoPlaceholder { .. })
        ));
    }
}
