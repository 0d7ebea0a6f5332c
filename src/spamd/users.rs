//! Per-user model files for the spamd server: spamd's `User:` header picks the model file a
//! request is answered with and TELL learns into, through a path template, as spamd's
//! `--virtual-config-dir` does. The user name comes from the client, so it is checked before
//! it becomes part of a path: it can name a file in the template's place only, never another
//! directory (no `/`, no `..`, no NUL or other control characters, a bounded length).

use std::path::PathBuf;

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
    fn a_template_without_the_placeholder_is_refused() {
        assert!(matches!(
            UserModels::new("/m/shared.spamsort"),
            Err(UserModelsError::NoPlaceholder { .. })
        ));
    }
}
