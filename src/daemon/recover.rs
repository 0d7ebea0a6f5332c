//! What a restart does about a move a crash interrupted (see `deliver.rs`): a message that is
//! complete in a target and still in the inbox (in its `new/`, or held in
//! [`TAKEN_DIR`](super::deliver::TAKEN_DIR) after it was taken from there) is removed from the
//! inbox (the move is finished); a message held there without a complete copy in a target is
//! put back into the inbox's `new/`, and spamsort's half-written files in the targets' `tmp/`
//! are removed (the move is rolled back; the message will be sorted again).
//!
//! An inbox message is removed only when a copy equal to it (spamsort's own header fields set
//! aside) is in a target that is not the inbox: a target that is the inbox however spelled
//! (the inbox as ham folder, a symlink, a shared `new/`) is skipped, since there every
//! message "has a copy", itself. A message that cannot be removed or put back is left where
//! it is, and said, and recovery goes on with the others.

use super::deliver::{
    CLASH_MARK, TMP_PREFIX, clash_bases, put_back, same_bytes, taken_dir, unique_part,
};
use super::layout::same_folder;
use super::notices::Shown;
use crate::corpus::header_block::{LineEnds, envelope_len, field_name, lines};
use crate::filter::policy::{DEFAULT_SUBJECT_TAG, HeaderStyle};
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What recovery did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    /// Moves finished: inbox copies (in `new/` or held) of filed messages removed.
    pub finished: usize,
    /// Moves rolled back: half-written copies removed from the targets' `tmp/`, and messages
    /// held after they were taken from the inbox put back into its `new/`.
    pub rolled_back: usize,
}

/// Finishes or rolls back every interrupted move from `inbox` into `targets` (those that are
/// the inbox itself are skipped). `style` is how the daemon marks the copies it files (see
/// [`HeaderStyle::unmarked`]): a copy is the inbox message's if they agree once it is set aside.
/// Fails if a folder cannot be read; a message that cannot be removed or put back is said and
/// left (see the module docs).
pub fn recover(
    inbox: &Path,
    targets: &[PathBuf],
    style: &HeaderStyle,
) -> std::io::Result<Recovery> {
    let targets: Vec<&PathBuf> = targets.iter().filter(|t| !same_folder(t, inbox)).collect();
    let mut done = Recovery::default();
    for t in &targets {
        for entry in std::fs::read_dir(t.join("tmp"))? {
            let entry = entry?;
            if entry
                .file_name()
                .as_bytes()
                .starts_with(TMP_PREFIX.as_bytes())
            {
                std::fs::remove_file(entry.path())?;
                done.rolled_back += 1;
            }
        }
    }
    // Every target message by its unique name (clash variants under the original's), whatever
    // its bytes.
    let mut filed: HashMap<Vec<u8>, Vec<PathBuf>> = HashMap::new();
    for t in &targets {
        for sub in ["new", "cur"] {
            for entry in std::fs::read_dir(t.join(sub))? {
                let entry = entry?;
                let unique = unique_of(entry.file_name().as_bytes()).to_vec();
                filed.entry(unique).or_default().push(entry.path());
            }
        }
    }
    let inbox_new = inbox.join("new");
    let has_copy = |path: &Path, name: &[u8]| {
        clash_bases(unique_of(name), name).any(|unique| {
            let copies = filed.get(unique).map_or(&[][..], |v| v.as_slice());
            copies.iter().any(|c| same_message(path, c, style))
        })
    };
    let held = taken_dir(&inbox_new);
    let entries = match std::fs::read_dir(&held) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        entries => Some(entries?),
    };
    for entry in entries.into_iter().flatten() {
        let entry = entry?;
        let (path, name) = (entry.path(), entry.file_name());
        // The daemon holds only the regular files it took from `new/`: anything else there
        // is not its to move.
        if !entry.file_type()?.is_file() {
            tracing::warn!(
                "{} in {} is not a message the daemon took (not a regular file): left there",
                Shown(&name),
                held.display()
            );
            continue;
        }
        if has_copy(&path, name.as_bytes()) {
            done.finished += usize::from(remove_inbox_copy(&path, &name));
            continue;
        }
        match put_back(&path, &inbox_new, &name) {
            Ok(_) => done.rolled_back += 1,
            Err(e) => tracing::error!(
                "{} is held in {} and cannot be put back into {}: {e}: move it there by hand",
                Shown(&name),
                held.display(),
                inbox_new.display()
            ),
        }
    }
    let _ = std::fs::remove_dir(&held);
    for entry in std::fs::read_dir(&inbox_new)? {
        let entry = entry?;
        let (path, name) = (entry.path(), entry.file_name());
        if has_copy(&path, name.as_bytes()) {
            done.finished += usize::from(remove_inbox_copy(&path, &name));
        }
    }
    if done != Recovery::default() {
        super::deliver::sync_dir(&inbox_new)?;
    }
    Ok(done)
}

/// Removes `path`, the inbox's copy (in `new/` or held) of the message `name` that is filed
/// in a target; true if it is gone. One that cannot be removed is said and left: the message
/// is in both places until it can be (a copy in `new/` is sorted again, and the sort says why
/// it cannot take it from there).
fn remove_inbox_copy(path: &Path, name: &std::ffi::OsStr) -> bool {
    match std::fs::remove_file(path) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(
                "{} is filed, but its copy {} cannot be removed: {e}: it is in both places",
                Shown(name),
                path.display()
            );
            false
        }
    }
}

/// A file name's unique part, without info suffix or clash mark.
fn unique_of(name: &[u8]) -> &[u8] {
    let unique = unique_part(name);
    let mark = CLASH_MARK.as_bytes();
    let at = unique.windows(mark.len()).rposition(|w| w == mark);
    match at.map(|at| (&unique[..at], &unique[at + mark.len()..])) {
        Some((base, n)) if !n.is_empty() && n.iter().all(u8::is_ascii_digit) => base,
        _ => unique,
    }
}

/// True if `filed` is `inbox`'s message: the same file, the same bytes (compared in chunks: a
/// copy on another file system of a message of any size), or the same bytes once spamsort's
/// own marks (its fields, its subject tag) are set aside on both sides (a marked copy, made
/// only of a message read whole, so of at most `MAX_MESSAGE_BYTES`).
fn same_message(inbox: &Path, filed: &Path, style: &HeaderStyle) -> bool {
    let (Ok(a), Ok(b)) = (std::fs::metadata(inbox), std::fs::metadata(filed)) else {
        return false;
    };
    if a.dev() == b.dev() && a.ino() == b.ino() {
        return true;
    }
    if a.len() == b.len() && same_bytes(inbox, filed).unwrap_or(false) {
        return true;
    }
    let read = |path| crate::corpus::read_regular(path, crate::corpus::MAX_MESSAGE_BYTES);
    match (read(inbox), read(filed)) {
        (Ok(a), Ok(b)) => marking_styles(&b, style)
            .iter()
            .any(|s| s.unmarked(&a) == s.unmarked(&b)),
        _ => false,
    }
}

/// The styles that may have marked `copy`, a filed copy, to set aside when comparing it with
/// its message: `style`, the daemon's now, first; then, since the copy may have been filed by
/// a daemon run with other settings (killed before the move was finished, started again after
/// they changed), the style of the prefix its first field names (a mark puts `PREFIXFlag`
/// first, and every prefix starts with `X-Spam`) and `--subject-tag`'s default tag, with
/// `X-Bogosity` set aside too. Setting aside more than one run wrote on both sides keeps two
/// copies of one message alike and tells apart any two that differ elsewhere.
fn marking_styles(copy: &[u8], style: &HeaderStyle) -> Vec<HeaderStyle> {
    let prefixes = [Some(style.prefix()), first_field_prefix(copy)];
    let tags = [style.subject_tag(), Some(DEFAULT_SUBJECT_TAG)];
    let mut styles = vec![style.clone()];
    for prefix in prefixes.into_iter().flatten() {
        for tag in tags {
            if let Ok(s) = HeaderStyle::new(prefix, tag, true)
                && !styles.contains(&s)
            {
                styles.push(s);
            }
        }
    }
    styles
}

/// The prefix of a marked message's first header field (after an mbox `From ` line), if that
/// field may be a mark's first: `PREFIXFlag` (whether `PREFIX` is one, starting with `X-Spam`,
/// [`HeaderStyle::new`] checks).
fn first_field_prefix(message: &[u8]) -> Option<&str> {
    // Read as marking reads lines (see `crate::filter::stamp`).
    let ends = LineEnds::LfOrCr;
    let first = lines(&message[envelope_len(message, ends)..], ends).next()?;
    std::str::from_utf8(field_name(first)?)
        .ok()?
        .strip_suffix("Flag")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::deliver::create_maildir;
    use crate::daemon::deliver::tests::maildirs;

    #[test]
    fn interrupted_moves_are_finished_or_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let (inbox, spam, ham) = (
            dir.path().join("in"),
            dir.path().join("spam"),
            dir.path().join("ham"),
        );
        for m in [&inbox, &spam, &ham] {
            create_maildir(m).unwrap();
        }
        let write = |p: PathBuf, b: &str| std::fs::write(p, b).unwrap();
        // Linked into spam, inbox entry not yet removed.
        write(inbox.join("new/1.x"), "Subject: a\n\n1\n");
        std::fs::hard_link(inbox.join("new/1.x"), spam.join("new/1.x")).unwrap();
        // Copied with headers into ham and since read by the user (now in cur/ with flags).
        write(inbox.join("new/2.x"), "Subject: b\n\n2\n");
        write(
            ham.join("cur/2.x:2,S"),
            "X-Spam-Flag: NO\nSubject: b\n\n2\n",
        );
        // Half-written copy: only the tmp file exists.
        write(inbox.join("new/3.x"), "Subject: c\n\n3\n");
        write(spam.join("tmp/spamsort.3.x"), "Subject: c\n");
        // A different message that happens to share a name stays.
        write(inbox.join("new/4.x"), "Subject: d\n\n4\n");
        write(ham.join("new/4.x"), "Subject: not d\n\n4\n");
        // Someone else's delivery in progress is not touched.
        write(spam.join("tmp/99.other"), "partial");
        let r = recover(
            &inbox,
            &[spam.clone(), ham.clone()],
            &HeaderStyle::default(),
        )
        .unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: 2,
                rolled_back: 1
            }
        );
        let mut left: Vec<_> = std::fs::read_dir(inbox.join("new"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["3.x", "4.x"]);
        assert!(spam.join("tmp/99.other").exists());
        assert_eq!(unique_of(b"5.y.dup3:2,S"), b"5.y");
        assert_eq!(unique_of(b"5.y.dupe"), b"5.y.dupe");
        assert_eq!(unique_of(b"5.\xff.dup12"), b"5.\xff");
    }

    #[test]
    fn messages_held_after_they_were_taken_are_finished_or_put_back() {
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let held = taken_dir(&inbox.join("new"));
        std::fs::create_dir(&held).unwrap();
        let write = |p: PathBuf, b: &str| std::fs::write(p, b).unwrap();
        // Taken and linked into spam: finished.
        write(held.join("1.x"), "Subject: a\n\n1\n");
        std::fs::hard_link(held.join("1.x"), spam.join("new/1.x")).unwrap();
        // Taken, its marked copy only half written: put back.
        write(held.join("2.x"), "Subject: b\n\n2\n");
        write(spam.join("tmp/spamsort.2.x"), "X-Spam-Flag: YES\n");
        // Taken, and meanwhile a different message of its name came to new/: put back beside it.
        write(held.join("3.x"), "Subject: c\n\n3\n");
        write(inbox.join("new/3.x"), "Subject: other\n\n3\n");
        let r = recover(&inbox, std::slice::from_ref(&spam), &HeaderStyle::default()).unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: 1,
                rolled_back: 3
            }
        );
        assert!(!held.exists(), "the daemon's directory is gone once empty");
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(spam.join("new/1.x")), "Subject: a\n\n1\n");
        assert!(!inbox.join("new/1.x").exists());
        assert_eq!(read(inbox.join("new/2.x")), "Subject: b\n\n2\n");
        assert_eq!(read(inbox.join("new/3.x")), "Subject: other\n\n3\n");
        assert_eq!(read(inbox.join("new/3.x.dup1")), "Subject: c\n\n3\n");
    }

    #[test]
    fn a_copy_marked_under_the_settings_of_an_earlier_run_is_recognised() {
        // auditF repro-3: a daemon killed once a marked copy was filed, before the message it
        // held was removed, and started again with another --header-prefix (or without its
        // --subject-tag) did not recognise the copy under its new settings: it put the
        // message back and filed it a second time (NAME and NAME.dup1).
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let held = taken_dir(&inbox.join("new"));
        std::fs::create_dir(&held).unwrap();
        let write = |p: PathBuf, b: &str| std::fs::write(p, b).unwrap();
        let message = "Subject: pills\nX-Spam-Status: forged\n\nbuy\n";
        // As marked under --header-prefix X-Spamsort- (a forged X-Spam- field is no field of
        // its, and stays), under --subject-tag, and under both.
        let earlier = [
            "X-Spamsort-Flag: YES\nSubject: pills\nX-Spam-Status: forged\n\nbuy\n",
            "X-Spam-Flag: YES\nSubject: ***SPAM*** pills\n\nbuy\n",
            "X-Spamsort-Flag: YES\nX-Spamsort-Status: Yes\nSubject: ***SPAM*** pills\n\
             X-Spam-Status: forged\n\nbuy\n",
        ];
        for (i, copy) in earlier.iter().enumerate() {
            write(held.join(format!("{i}.x")), message);
            write(spam.join(format!("new/{i}.x")), copy);
        }
        // A copy of another message of the same name is no copy of it, whatever the style.
        write(held.join("9.x"), message);
        write(
            spam.join("new/9.x"),
            "X-Spamsort-Flag: YES\nSubject: pills\n\nsell\n",
        );
        let r = recover(&inbox, std::slice::from_ref(&spam), &HeaderStyle::default()).unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: earlier.len(),
                rolled_back: 1
            }
        );
        let left: Vec<_> = std::fs::read_dir(inbox.join("new"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["9.x"]);
    }

    #[test]
    fn a_message_of_a_name_near_the_limit_is_filed_past_a_clash_and_recovered() {
        // auditF repro-4: a message named 251 to 255 bytes was never filed into a target that
        // held its name: NAME.dup1 is longer than a file name may be (ENAMETOOLONG), so the
        // move was given back and tried again forever. Its variant is cut short now, and
        // recovery knows it for the message's.
        use crate::daemon::deliver::{Move, file_batch};
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let write = |p: PathBuf, b: &str| std::fs::write(p, b).unwrap();
        let names = ["L".repeat(255), format!("{}:2,S", "K".repeat(251))];
        for name in &names {
            write(inbox.join("new").join(name), "Subject: a\n\n1\n");
            write(spam.join("new").join(name), "another message");
        }
        let moves: Vec<Move> = (names.iter())
            .map(|name| Move {
                source: inbox.join("new").join(name),
                name: name.into(),
                target: spam.clone(),
                content: None,
                read: None,
            })
            .collect();
        for placed in file_batch(&moves, &inbox.join("new"), None) {
            let placed = placed.unwrap();
            assert!(placed.file_name().unwrap().len() <= 255, "{placed:?}");
            // As a crash before the held message was removed leaves it.
            let name = moves
                .iter()
                .find(|m| {
                    placed
                        .file_name()
                        .unwrap()
                        .as_bytes()
                        .starts_with(&m.name.as_bytes()[..200])
                })
                .unwrap()
                .name
                .clone();
            let held = taken_dir(&inbox.join("new"));
            std::fs::create_dir_all(&held).unwrap();
            std::fs::hard_link(&placed, held.join(&name)).unwrap();
        }
        assert!(
            std::fs::read_dir(inbox.join("new"))
                .unwrap()
                .next()
                .is_none()
        );
        let r = recover(&inbox, std::slice::from_ref(&spam), &HeaderStyle::default()).unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: names.len(),
                rolled_back: 0
            }
        );
        assert!(
            std::fs::read_dir(inbox.join("new"))
                .unwrap()
                .next()
                .is_none()
        );
        assert_eq!(std::fs::read_dir(spam.join("new")).unwrap().count(), 4);
    }

    #[test]
    fn a_held_message_of_any_size_whose_copy_was_filed_is_finished() {
        // Regression: recovery compared a held message with the copies filed (on another file
        // system) by reading both whole, bounded by the 64 MiB a message may have, so a larger
        // one whose copy was complete was put back and filed a second time.
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let held = taken_dir(&inbox.join("new"));
        std::fs::create_dir(&held).unwrap();
        let line = b"a line of a message larger than any the daemon reads whole 0123456\n";
        let lines = (crate::corpus::MAX_MESSAGE_BYTES as usize) / line.len() + 1000;
        let big = [&b"Subject: big\n\n"[..], &line.repeat(lines)].concat();
        std::fs::write(held.join("1.big"), &big).unwrap();
        std::fs::write(spam.join("new/1.big"), &big).unwrap();
        let r = recover(&inbox, std::slice::from_ref(&spam), &HeaderStyle::default()).unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: 1,
                rolled_back: 0
            }
        );
        assert!(!held.exists());
        assert_eq!(std::fs::read_dir(inbox.join("new")).unwrap().count(), 0);
    }

    #[test]
    fn what_is_held_but_not_a_regular_file_is_left_where_it_is() {
        // Regression: a directory there (a maildir someone made at the inbox's
        // tmp/spamsort-taken) was "put back": moved into the inbox's new/.
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let held = taken_dir(&inbox.join("new"));
        std::fs::create_dir_all(held.join("cur")).unwrap();
        std::fs::write(held.join("cur/old:2,S"), "Subject: old\n\n").unwrap();
        std::fs::write(held.join("1.x"), "Subject: a\n\n1\n").unwrap();
        let r = recover(&inbox, std::slice::from_ref(&spam), &HeaderStyle::default()).unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: 0,
                rolled_back: 1
            }
        );
        assert!(held.join("cur/old:2,S").is_file());
        let new: Vec<_> = std::fs::read_dir(inbox.join("new"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(new, ["1.x"]);
    }

    #[test]
    fn an_interrupted_move_of_a_message_whose_name_is_not_utf8_is_finished() {
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let name = std::ffi::OsStr::from_bytes(b"1.\xff.x");
        let source = inbox.join("new").join(name);
        std::fs::write(&source, "Subject: a\n\n1\n").unwrap();
        std::fs::hard_link(&source, spam.join("new").join(name)).unwrap();
        let tmp = std::ffi::OsStr::from_bytes(b"spamsort.2.\xff.x");
        std::fs::write(spam.join("tmp").join(tmp), "Subject: b\n").unwrap();
        let r = recover(&inbox, std::slice::from_ref(&spam), &HeaderStyle::default()).unwrap();
        assert_eq!(
            r,
            Recovery {
                finished: 1,
                rolled_back: 1
            }
        );
        assert!(!source.exists() && spam.join("new").join(name).exists());
    }

    #[test]
    fn copy_marked_with_a_header_prefix_and_subject_tag_is_known_as_the_inbox_message() {
        let (_dir, inbox, spam) = maildirs("in", "spam");
        let style = HeaderStyle::new("X-Spamsort-", Some("[spam]"), true).unwrap();
        // An upstream SpamAssassin's fields are part of the message, on both sides.
        let original = "X-Spam-Flag: NO\nSubject: cheap\n\n1\n";
        std::fs::write(inbox.join("new/1.x"), original).unwrap();
        std::fs::write(
            spam.join("new/1.x"),
            "X-Spamsort-Flag: YES\nX-Bogosity: Spam, tests=bogofilter\nX-Spam-Flag: NO\n\
             Subject: [spam] cheap\n\n1\n",
        )
        .unwrap();
        // Not the same message: the upstream verdict differs.
        std::fs::write(inbox.join("new/2.x"), original).unwrap();
        std::fs::write(
            spam.join("new/2.x"),
            "X-Spamsort-Flag: YES\nX-Spam-Flag: YES\nSubject: [spam] cheap\n\n1\n",
        )
        .unwrap();
        let targets = [spam.clone()];
        let r = recover(&inbox, &targets, &style).unwrap();
        assert_eq!(r.finished, 1);
        assert!(!inbox.join("new/1.x").exists() && inbox.join("new/2.x").exists());
    }

    #[test]
    fn recovery_deletes_nothing_when_a_target_is_the_inbox_however_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("M");
        let junk = inbox.join(".Junk");
        create_maildir(&junk).unwrap();
        create_maildir(&inbox).unwrap();
        std::os::unix::fs::symlink(&inbox, dir.path().join("link")).unwrap();
        std::fs::create_dir(dir.path().join("shared")).unwrap();
        std::os::unix::fs::symlink(inbox.join("new"), dir.path().join("shared/new")).unwrap();
        std::fs::create_dir(dir.path().join("shared/cur")).unwrap();
        std::fs::create_dir(dir.path().join("shared/tmp")).unwrap();
        for i in 0..3 {
            std::fs::write(inbox.join(format!("new/{i}.x")), format!("Subject: {i}\n")).unwrap();
        }
        let spellings = ["M", "M/", "./M/.", "link", "link/", "shared"];
        let mut targets: Vec<PathBuf> = spellings.iter().map(|s| dir.path().join(s)).collect();
        targets.push(junk);
        let r = recover(&inbox, &targets, &HeaderStyle::default()).unwrap();
        assert_eq!(r, Recovery::default());
        assert_eq!(std::fs::read_dir(inbox.join("new")).unwrap().count(), 3);
    }
}
