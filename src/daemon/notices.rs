//! What the daemon says about the files in the inbox's `new/`: a file that stays there pass
//! after pass (one that is not a message to sort, or a message that cannot be filed) is
//! reported once, and again only when what there is to say changes or after it was filed, not
//! on every pass, which would flood the log. [`Notices`] remembers what was said, and forgets
//! a file once it has left `new/`, so it holds at most one entry per file there and
//! [`Topic`]. [`Shown`] is how a file name appears in the log.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};

/// What a notice is about: each is remembered apart, so two things said about one file
/// (it could not be marked, and not filed) do not each make the other news again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Topic {
    /// What the file is, when it is not a message (a symbolic link).
    Entry,
    /// Why the message's copy was not marked.
    Marking,
    /// Why the message could not be filed.
    Filing,
}

/// What was said last about each file in the inbox's `new/`, by file name and topic.
#[derive(Debug, Default)]
pub(super) struct Notices {
    said: HashMap<OsString, Vec<(Topic, String)>>,
}

impl Notices {
    /// True if `what` is news about the file `name`: not what was said about it last on
    /// `topic`. It is then remembered as said, so the same again is not news.
    pub fn is_news(&mut self, name: &OsStr, topic: Topic, what: &str) -> bool {
        let said = self.said.entry(name.to_os_string()).or_default();
        match said.iter_mut().find(|(t, _)| *t == topic) {
            Some((_, last)) if last == what => false,
            Some((_, last)) => {
                *last = what.to_string();
                true
            }
            None => {
                said.push((topic, what.to_string()));
                true
            }
        }
    }

    /// Forgets what was said about `name` (it was filed): anything said later is news.
    pub fn forget(&mut self, name: &OsStr) {
        self.said.remove(name);
    }

    /// Forgets the names not in `present` (the inbox's `new/` now).
    pub fn retain_present(&mut self, present: &HashSet<&OsStr>) {
        self.said
            .retain(|name, _| present.contains(name.as_os_str()));
    }
}

/// A file name as the log shows it: as it is when it is printable UTF-8; otherwise with its
/// control characters and the bytes that are not UTF-8 escaped as Rust escapes them
/// (`1.\xFF.host`), so that a name cannot forge or hide log lines, nor pass for another.
pub(super) struct Shown<'a>(pub &'a OsStr);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.to_str() {
            Some(name) if !name.chars().any(char::is_control) => f.write_str(name),
            _ => {
                let quoted = format!("{:?}", self.0);
                f.write_str(&quoted[1..quoted.len() - 1])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn a_thing_is_news_once_until_it_changes_and_gone_files_are_forgotten() {
        let mut notices = Notices::default();
        let (a, b) = (OsStr::new("1.a"), OsStr::from_bytes(b"2.\xff"));
        assert!(notices.is_news(a, Topic::Filing, "permission denied"));
        assert!(!notices.is_news(a, Topic::Filing, "permission denied"));
        assert!(notices.is_news(a, Topic::Filing, "no space left"));
        // Another topic is apart: neither makes the other news again.
        assert!(notices.is_news(a, Topic::Marking, "folded first line"));
        assert!(!notices.is_news(a, Topic::Filing, "no space left"));
        assert!(!notices.is_news(a, Topic::Marking, "folded first line"));
        assert!(notices.is_news(b, Topic::Entry, "a symbolic link"));
        notices.retain_present(&[b].into_iter().collect());
        assert!(notices.is_news(a, Topic::Filing, "no space left"));
        assert!(!notices.is_news(b, Topic::Entry, "a symbolic link"));
        assert_eq!(notices.said.len(), 2);
        notices.forget(a);
        assert!(notices.is_news(a, Topic::Filing, "no space left"));
    }

    #[test]
    fn names_are_shown_as_they_are_unless_not_printable_utf8() {
        let shown = |bytes: &[u8]| Shown(OsStr::from_bytes(bytes)).to_string();
        assert_eq!(shown(b"1700.M1P2.host:2,S"), "1700.M1P2.host:2,S");
        assert_eq!(shown("é".as_bytes()), "é");
        assert_eq!(shown(b"1.\xff.host"), "1.\\xFF.host");
        assert_eq!(shown(b"1.\n2"), "1.\\n2");
    }
}
