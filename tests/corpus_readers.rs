//! Mailbox readers on real directory layouts: maildir, message trees, mbox files, TREC
//! indexes, and the failure cases (missing, empty, unreadable).

use crate::util::{TestDir, message, sample};
use spamsort::corpus::{CorpusError, Mailbox, MailboxFormat, read_message_file};
use spamsort::{Label, LabeledCorpus};

fn read_all(path: &std::path::Path) -> (Vec<spamsort::Message>, Vec<CorpusError>) {
    let (mut ok, mut err) = (Vec::new(), Vec::new());
    for item in Mailbox::open(path).unwrap() {
        match item {
            Ok(m) => ok.push(m),
            Err(e) => err.push(e),
        }
    }
    (ok, err)
}

/// Where each message was read from, relative to `base`.
fn paths_under(base: &std::path::Path, msgs: &[spamsort::Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| {
            let path = m.source.path.strip_prefix(base).unwrap();
            path.display().to_string()
        })
        .collect()
}

/// Regression (auditC repro-8): a message a mail reader renamed after the maildir was listed
/// (marked seen: `cur/NAME:2,` to `cur/NAME:2,S`; read: `new/NAME` to `cur/NAME:2,S`) was
/// skipped as "No such file", so `train` and `learn` of a maildir in use missed mail. It is read
/// under its new name, once, also where its new name was listed too.
#[test]
fn a_maildir_message_renamed_after_the_listing_is_read_once_under_its_new_name() {
    let t = TestDir::new();
    let md = t.maildir("Inbox");
    t.write("Inbox/new/1.M1.host", &message("one", "a"));
    t.write("Inbox/cur/2.M2.host:2,", &message("two", "b"));
    // Listed in both new/ and cur/: moved between the two listings.
    t.write("Inbox/new/3.M3.host", &message("three", "c"));
    t.write("Inbox/cur/3.M3.host:2,", &message("three", "c"));
    let mailbox = Mailbox::open(&md).unwrap();
    let (cur, new) = (md.join("cur"), md.join("new"));
    std::fs::rename(new.join("1.M1.host"), cur.join("1.M1.host:2,S")).unwrap();
    std::fs::rename(cur.join("2.M2.host:2,"), cur.join("2.M2.host:2,RS")).unwrap();
    std::fs::remove_file(new.join("3.M3.host")).unwrap();
    let (mut ok, mut err) = (Vec::new(), Vec::new());
    for item in mailbox {
        match item {
            Ok(m) => ok.push(m),
            Err(e) => err.push(e),
        }
    }
    assert!(err.is_empty(), "{err:?}");
    assert_eq!(
        paths_under(&md, &ok),
        [
            "cur/1.M1.host:2,S",
            "cur/3.M3.host:2,",
            "cur/2.M2.host:2,RS"
        ]
    );
    // A file gone for good is still reported.
    let mailbox = Mailbox::open(&md).unwrap();
    std::fs::remove_file(cur.join("2.M2.host:2,RS")).unwrap();
    let errors: Vec<CorpusError> = mailbox.filter_map(Result::err).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].to_string().contains("2.M2.host:2,RS"),
        "{}",
        errors[0]
    );
}

#[test]
fn maildir_reads_new_and_cur_not_tmp() {
    let t = TestDir::new();
    let md = t.maildir("Inbox");
    t.write("Inbox/new/1700000001.M1.host", &message("one", "a"));
    t.write("Inbox/cur/1700000000.M2.host:2,RS", &message("two", "b"));
    t.write("Inbox/tmp/1700000002.M3.host", &message("partial", "c"));
    t.write("Inbox/cur/.hidden", b"not mail");
    assert_eq!(MailboxFormat::detect(&md).unwrap(), MailboxFormat::Maildir);
    let (msgs, errs) = read_all(&md);
    assert!(errs.is_empty());
    let names: Vec<String> = msgs
        .iter()
        .map(|m| m.source.path.file_name().unwrap().to_string_lossy().into())
        .collect();
    assert_eq!(names, ["1700000001.M1.host", "1700000000.M2.host:2,RS"]);
    assert_eq!(
        msgs[1].bytes,
        message("two", "b"),
        "bytes are passed through unchanged"
    );
}

#[test]
fn message_tree_skips_hidden_and_survives_symlink_loops() {
    let t = TestDir::new();
    t.write("spam/a/1", &message("x", "1"));
    t.write("spam/b/2", &message("y", "2"));
    t.write("spam/.git/objects", b"junk");
    t.write("spam/.dotfile", b"junk");
    std::os::unix::fs::symlink(t.path().join("spam"), t.path().join("spam/a/loop")).unwrap();
    let dir = t.path().join("spam");
    assert_eq!(
        MailboxFormat::detect(&dir).unwrap(),
        MailboxFormat::MessageTree
    );
    let (msgs, errs) = read_all(&dir);
    assert_eq!(msgs.len(), 2);
    assert_eq!(errs.len(), 1, "the loop is reported once: {errs:?}");
    assert!(errs[0].to_string().contains("loop"), "{}", errs[0]);
}

/// Regression: a folder of mail folders (`~/Mail` holding `inbox/{cur,new,tmp}`) was read
/// file by file, so a maildir's `tmp/` (mail half delivered) and the index files a mail server
/// keeps beside `cur/` (Dovecot's `dovecot.index`, `dovecot-uidlist`) were read as messages:
/// binary junk and half messages trained as mail. A maildir in the tree is read as one, also
/// one without `new/`, and the server's files beside the maildirs are skipped too.
#[test]
fn a_maildir_inside_a_folder_is_read_as_a_maildir() {
    let t = TestDir::new();
    t.write("Mail/inbox/new/1700000001.M1.host", &message("new", "a"));
    t.write(
        "Mail/inbox/cur/1700000000.M2.host:2,S",
        &message("seen", "b"),
    );
    t.write(
        "Mail/inbox/tmp/1700000002.M3.host",
        &message("partial", "c"),
    );
    t.write("Mail/inbox/dovecot.index", b"\x00\x01binary index");
    t.write("Mail/inbox/dovecot-uidlist", b"3 V1 N1\n");
    t.write("Mail/loose.eml", &message("loose", "d"));
    // Dovecot's files beside the maildirs (`LAYOUT=fs`) are no mail either.
    t.write("Mail/subscriptions", b"INBOX\nJunk\n");
    t.write("Mail/dovecot.list.index.log", b"\x01\x02\x03\x04");
    t.write("Mail/dovecot-uidvalidity", b"5fd0a1b2\n");
    // A maildir copied by a tool that drops empty directories (no `new/`) is still one: its
    // `tmp/` is not read.
    t.write(
        "Mail/copied/cur/1700000003.M4.host:2,S",
        &message("kept", "e"),
    );
    t.write(
        "Mail/copied/tmp/1700000004.M5.host",
        &message("partial", "f"),
    );
    let dir = t.path().join("Mail");
    assert_eq!(
        MailboxFormat::detect(&dir).unwrap(),
        MailboxFormat::MessageTree
    );
    let (msgs, errs) = read_all(&dir);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        paths_under(&dir, &msgs),
        [
            "copied/cur/1700000003.M4.host:2,S",
            "inbox/new/1700000001.M1.host",
            "inbox/cur/1700000000.M2.host:2,S",
            "loose.eml"
        ]
    );
}

/// A file named like a mail server's (`subscriptions`, `dovecot-...`) in a folder that holds
/// no maildir is a message like any other (a plain folder of saved mail).
#[test]
fn files_named_like_a_servers_are_mail_in_a_plain_folder() {
    let t = TestDir::new();
    for name in ["subscriptions", "dovecot-announce.eml", "note.eml"] {
        t.write(&format!("saved/{name}"), &message(name, "body"));
    }
    let (msgs, errs) = read_all(&t.path().join("saved"));
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        paths_under(&t.path().join("saved"), &msgs),
        ["dovecot-announce.eml", "note.eml", "subscriptions"]
    );
}

/// Regression: an MH folder's deleted messages (`rmm` renames message 3 to `,3`, or `#3` where
/// the backup prefix is set so) were read as mail, so spam deleted from an inbox was trained
/// as ham with it. Its `.mh_sequences` is hidden, so skipped already.
#[test]
fn mh_folder_skips_deleted_messages_and_its_sequences_file() {
    let t = TestDir::new();
    for name in ["1", "2", "10", ",3", "#4", "sub/,5", "sub/6"] {
        t.write(&format!("inbox/{name}"), &message(name, "body"));
    }
    t.write("inbox/.mh_sequences", b"cur: 2\nunseen: 1-10\n");
    let (msgs, errs) = read_all(&t.path().join("inbox"));
    assert!(errs.is_empty(), "{errs:?}");
    let names = paths_under(t.path(), &msgs);
    assert_eq!(names, ["inbox/1", "inbox/2", "inbox/10", "inbox/sub/6"]);
}

/// Regression: an MH folder was read in lexical order, message 10 before message 2, so
/// `train` kept the label of the wrong copy of a duplicate and online evaluation learned out
/// of order. Numbered messages come by number, then other names by their bytes.
#[test]
fn mh_folder_is_read_in_message_number_order_not_lexical_order() {
    let t = TestDir::new();
    let names = [
        "2",
        "10",
        "1",
        "100000000000000000000000",
        "9",
        "notes",
        "sub/20",
        "sub/3",
    ];
    for name in names {
        t.write(&format!("inbox/{name}"), &message(name, "body"));
    }
    let (msgs, errs) = read_all(&t.path().join("inbox"));
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        paths_under(t.path(), &msgs),
        [
            "inbox/1",
            "inbox/2",
            "inbox/9",
            "inbox/10",
            "inbox/100000000000000000000000",
            "inbox/notes",
            "inbox/sub/3",
            "inbox/sub/20",
        ]
    );
}

/// Regression: a file starting with `From ` but holding no line feed (an mbox of classic Mac
/// OS, lone CR line endings) was read as an mbox whose envelope line was the whole file: one
/// empty message, everything in it dropped (and `learn` learned that empty message). Without
/// a line feed in its first 512 bytes it is one message file, kept whole.
#[test]
fn a_from_file_without_line_feeds_is_one_message_not_an_empty_mbox() {
    let t = TestDir::new();
    let bytes = b"From a@b Mon Jan  1 00:00:00 2024\rSubject: one\r\rbody one\r\rFrom c@d Mon Jan  1 00:00:00 2024\rSubject: two\r\rbody two\r";
    let file = t.write("mac.mbox", bytes);
    assert_eq!(
        MailboxFormat::detect(&file).unwrap(),
        MailboxFormat::MessageFile
    );
    let (msgs, errs) = read_all(&file);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].bytes, bytes);
}

#[test]
fn an_mbox_after_a_byte_order_mark_and_empty_lines_is_an_mbox() {
    let t = TestDir::new();
    let file = t.write(
        "exported.mbox",
        b"\xEF\xBB\xBF\r\nFrom a@b Mon Jan  1 00:00:00 2024\r\nSubject: one\r\n\r\nbody one\r\n\r\nFrom c@d Mon Jan  1 00:00:00 2024\r\nSubject: two\r\n\r\nbody two\r\n",
    );
    assert_eq!(MailboxFormat::detect(&file).unwrap(), MailboxFormat::Mbox);
    let (msgs, errs) = read_all(&file);
    assert!(errs.is_empty(), "{errs:?}");
    let bytes: Vec<&[u8]> = msgs.iter().map(|m| m.bytes.as_slice()).collect();
    assert_eq!(
        bytes,
        [
            &b"Subject: one\r\n\r\nbody one\r\n"[..],
            &b"Subject: two\r\n\r\nbody two\r\n"[..]
        ]
    );
}

#[test]
fn mbox_detected_split_and_unescaped_with_crlf() {
    let t = TestDir::new();
    let mbox = t.write(
        "box.mbox",
        b"From a@x Sat Jan  3 01:05:34 1996\r\nSubject: 1\r\n\r\n>From the start\r\n\r\nFrom b@x Sat Jan  3 01:05:34 1996\r\nSubject: 2\r\n\r\nbody\r\n",
    );
    assert_eq!(MailboxFormat::detect(&mbox).unwrap(), MailboxFormat::Mbox);
    let (msgs, errs) = read_all(&mbox);
    assert!(errs.is_empty());
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0].bytes, b"Subject: 1\r\n\r\nFrom the start\r\n");
    assert_eq!(msgs[1].bytes, b"Subject: 2\r\n\r\nbody\r\n");
    assert_eq!(msgs[1].source.to_string(), format!("{}#2", mbox.display()));
}

/// Regression: mboxcl2 (Solaris mail) does not escape body lines starting with `From ` and
/// gives the body's length in `Content-Length:` instead; the reader split such a message in
/// two. A length that is not consistent with the file (as spam may forge) is ignored.
#[test]
fn mboxcl2_content_length_keeps_a_from_line_in_its_message() {
    let t = TestDir::new();
    // Longer than a read buffer, so the length is checked and the body read across refills.
    let body = format!(
        "{}\n\nFrom the desk of the editor:\nmore\n",
        "a line of text\n".repeat(2000)
    );
    let envelope = "From a@example.org Mon Jan  1 00:00:00 2024";
    let mbox = format!(
        "{envelope}\nSubject: one\nContent-Length: {}\n\n{body}\n\
         {envelope}\nSubject: forged\nContent-Length: 100000\n\nshort\n\n\
         {envelope}\nSubject: three\nContent-Length: 4\n\nend\n",
        body.len()
    );
    let file = t.write("solaris.mbox", mbox.as_bytes());
    assert_eq!(MailboxFormat::detect(&file).unwrap(), MailboxFormat::Mbox);
    let (msgs, errs) = read_all(&file);
    assert!(errs.is_empty(), "{errs:?}");
    let bytes: Vec<String> = msgs
        .iter()
        .map(|m| String::from_utf8_lossy(&m.bytes).into_owned())
        .collect();
    assert_eq!(bytes.len(), 3, "{bytes:#?}");
    assert_eq!(
        bytes[0],
        format!("Subject: one\nContent-Length: {}\n\n{body}", body.len())
    );
    assert_eq!(
        bytes[1],
        "Subject: forged\nContent-Length: 100000\n\nshort\n"
    );
    assert_eq!(bytes[2], "Subject: three\nContent-Length: 4\n\nend\n");
}

#[test]
fn trec_index_resolves_relative_paths_and_reports_bad_lines() {
    let t = TestDir::new();
    t.write("data/inmail.1", &message("s", "spam body"));
    t.write("data/inmail.2", &message("h", "ham body"));
    let abs = t.write("elsewhere/inmail.3", &message("h2", "ham"));
    let index = t.write(
        "full/index",
        format!("spam ../data/inmail.1\nham ../data/inmail.2\nbogus line\nham {}\nspam ../data/missing\n", abs.display()).as_bytes(),
    );
    assert_eq!(
        MailboxFormat::detect(&index).unwrap(),
        MailboxFormat::TrecIndex
    );
    let mut warnings = Vec::new();
    let corpus = LabeledCorpus::read_trec(&index, |e| warnings.push(e.to_string())).unwrap();
    let labels: Vec<Label> = corpus.messages.iter().map(|(_, l)| *l).collect();
    assert_eq!(labels, [Label::Spam, Label::Ham, Label::Ham]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("index:3"), "{}", warnings[0]);
    assert!(warnings[1].contains("missing"), "{}", warnings[1]);
}

/// Found by audit: an index reached through a symbolic link in another folder resolved its
/// relative paths against the link's folder, so a TREC corpus linked elsewhere gave no message.
#[test]
fn a_linked_index_resolves_its_paths_where_the_index_is() {
    let t = TestDir::new();
    t.write("trec/data/inmail.1", &message("s", "spam body"));
    t.write("trec/data/inmail.2", &message("h", "ham body"));
    let index = t.write(
        "trec/full/index",
        b"spam ../data/inmail.1\nham ../data/inmail.2\n",
    );
    let link = t.path().join("elsewhere/index");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&index, &link).unwrap();
    assert_eq!(
        MailboxFormat::detect(&link).unwrap(),
        MailboxFormat::TrecIndex
    );
    let mut warnings = Vec::new();
    let corpus = LabeledCorpus::read_trec(&link, |e| warnings.push(e.to_string())).unwrap();
    let labels: Vec<Label> = corpus.messages.iter().map(|(_, l)| *l).collect();
    assert_eq!(labels, [Label::Spam, Label::Ham], "{warnings:?}");
}

/// Regression: any file whose first line read as `spam PATH` or `ham PATH` was taken for a
/// TREC index, so a message (a recipe that begins "ham and eggs") was never classified or
/// learned: its lines were reported as bad index lines and missing files. An index is still
/// one when its first message is missing or a later line is malformed, as long as the other
/// holds.
#[test]
fn a_message_whose_first_line_starts_with_a_label_is_a_message_not_an_index() {
    let t = TestDir::new();
    let recipe = b"ham and eggs for breakfast\nthe recipe follows\n";
    for (name, bytes) in [("recipe.txt", &recipe[..]), ("cut.txt", &recipe[..40])] {
        let file = t.write(name, bytes);
        assert_eq!(
            MailboxFormat::detect(&file).unwrap(),
            MailboxFormat::MessageFile,
            "{name}"
        );
        let (msgs, errs) = read_all(&file);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].bytes, bytes);
    }
    t.write("data/inmail.2", &message("h", "ham body"));
    for index in [
        "spam data/missing\nham data/inmail.2\n",
        "spam data/inmail.2\nnot an index line\n",
    ] {
        let index = t.write("index", index.as_bytes());
        assert_eq!(
            MailboxFormat::detect(&index).unwrap(),
            MailboxFormat::TrecIndex
        );
    }
}

#[test]
fn empty_and_missing_files() {
    let t = TestDir::new();
    let empty = t.write("empty.eml", b"");
    assert_eq!(read_message_file(&empty).unwrap().bytes, b"");
    let (msgs, errs) = read_all(&empty);
    assert_eq!((msgs.len(), errs.len()), (1, 0));
    let missing = t.path().join("nope");
    let err = Mailbox::open(&missing)
        .err()
        .expect("missing path is an error");
    assert!(
        err.to_string().contains("nope"),
        "error names the path: {err}"
    );
    let empty_dir = t.path().join("emptydir");
    std::fs::create_dir(&empty_dir).unwrap();
    assert_eq!(read_all(&empty_dir).0.len(), 0);
}

#[test]
fn unreadable_file_is_reported_and_skipped() {
    let t = TestDir::new();
    t.write("box/ok", &message("ok", "fine"));
    let bad = t.write("box/bad", &message("bad", "x"));
    std::os::unix::fs::symlink(
        t.path().join("does-not-exist"),
        t.path().join("box/dangling"),
    )
    .unwrap();
    let _ = bad;
    let (msgs, errs) = read_all(&t.path().join("box"));
    assert_eq!(msgs.len(), 2);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].to_string().contains("dangling"), "{}", errs[0]);
}

#[test]
fn sample_corpus_reads_completely() {
    let mut warnings = 0;
    let corpus =
        LabeledCorpus::read(&[sample("spam")], &[sample("ham")], |_| warnings += 1).unwrap();
    assert_eq!(warnings, 0);
    assert_eq!(corpus.count(Label::Spam), 104);
    assert_eq!(corpus.count(Label::Ham), 100);
    assert!(corpus.messages.iter().all(|(m, _)| !m.bytes.is_empty()));
}

/// Regression: an mbox was read without its lock, so a message a delivery agent was still
/// appending (holding the file's `fcntl` lock, as Postfix's local and procmail do) was learned
/// cut off, and learned again whole the next time: one message counted twice. A reader now
/// waits for the writer and reads the message whole.
#[test]
fn an_mbox_being_written_is_read_once_its_writer_is_done() {
    use rustix::fs::{FlockOperation, fcntl_lock};
    let t = TestDir::new();
    let mbox = t.path().join("inbox");
    let first = "From alice@example.org  Thu Aug 22 18:28:49 2002\nSubject: one\n\nfirst\n\n";
    std::fs::write(&mbox, first).unwrap();
    let model = t.path().join("m.spamsort");
    // The writer: the lock, then half a message.
    let mut writer = std::fs::OpenOptions::new()
        .append(true)
        .open(&mbox)
        .unwrap();
    fcntl_lock(&writer, FlockOperation::LockExclusive).unwrap();
    use std::io::Write;
    writer
        .write_all(b"From bob@example.org  Thu Aug 22 18:30:00 2002\nSubject: two\n\nhalf\n")
        .unwrap();
    let learn = move || {
        std::process::Command::new(crate::util::spamsort_bin())
            .args(["learn", "--spam", "--model"])
            .arg(&model)
            .arg(&mbox)
            .output()
            .unwrap()
    };
    let reader = std::thread::spawn(learn.clone());
    std::thread::sleep(std::time::Duration::from_millis(500));
    writer.write_all(b"and the rest of it\n\n").unwrap();
    drop(writer);
    let out = reader.join().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("learned 2 message(s)"), "{text}");
    let again = learn();
    let text = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(
        text.contains("learned 0 message(s) as spam, 2 already"),
        "{text}"
    );
}

/// Regression: an MMDF mailbox (each message between lines of four ^A bytes) was read as one
/// message, so all its messages were learned merged into one. It is refused, saying why.
#[test]
fn an_mmdf_mailbox_is_refused_not_read_as_one_message() {
    let t = TestDir::new();
    let mut mmdf = Vec::new();
    for i in 0..3 {
        mmdf.extend_from_slice(b"\x01\x01\x01\x01\n");
        mmdf.extend_from_slice(&message(&format!("offer {i}"), "body"));
        mmdf.extend_from_slice(b"\x01\x01\x01\x01\n");
    }
    let path = t.write("box.mmdf", &mmdf);
    let err = MailboxFormat::detect(&path).unwrap_err();
    assert!(matches!(err, CorpusError::Mmdf { .. }), "{err}");
    assert!(Mailbox::open(&path).is_err());
}
