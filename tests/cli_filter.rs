//! `spamsort filter`: byte-exact passthrough apart from the X-Spam-* fields, forged verdicts
//! removed, and the message passed through unchanged whenever classification is impossible.

use crate::util::{TestDir, sample_files, spamsort, spamsort_bin, to_crlf, trained_model};
use spamsort::filter::stamp::strip_owned_fields;
use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn filter(model: &std::path::Path, input: &[u8]) -> assert_cmd::assert::Assert {
    spamsort()
        .arg("filter")
        .arg("--model")
        .arg(model)
        .write_stdin(input.to_vec())
        .assert()
}

/// All a child wrote to its standard error (a pipe), once it closed it.
fn stderr_of(child: &mut std::process::Child) -> String {
    let mut stderr = String::new();
    let mut pipe = child.stderr.take().unwrap();
    pipe.read_to_string(&mut stderr).unwrap();
    stderr
}

fn count_fields(out: &[u8], name: &str) -> usize {
    let end = spamsort::filter::stamp::header_block_len(out);
    out[..end]
        .split(|&b| b == b'\n')
        .filter(|l| {
            l.len() > name.len()
                && l[..name.len()].eq_ignore_ascii_case(name.as_bytes())
                && l[name.len()] == b':'
        })
        .count()
}

#[test]
fn every_sample_message_passes_through_byte_exact_lf_and_crlf() {
    let model = trained_model();
    let mut ran = 0;
    for path in sample_files() {
        let raw = std::fs::read(&path).unwrap();
        for input in [raw.clone(), to_crlf(&raw)] {
            let assert = filter(model, &input).success();
            let out = assert.get_output().stdout.clone();
            assert_eq!(
                strip_owned_fields(&out),
                strip_owned_fields(&input),
                "{} changed",
                path.display()
            );
            assert_eq!(count_fields(&out, "X-Spam-Flag"), 1, "{}", path.display());
            assert_eq!(count_fields(&out, "X-Spam-Status"), 1, "{}", path.display());
            let crlf = input.windows(2).any(|w| w == b"\r\n");
            let status_line = out
                .split(|&b| b == b'\n')
                .find(|l| l.starts_with(b"X-Spam-Status:"))
                .unwrap();
            assert_eq!(
                status_line.ends_with(b"\r"),
                crlf,
                "line ending follows the message"
            );
            ran += 1;
        }
    }
    assert_eq!(ran, 2 * 204);
}

#[test]
fn forged_verdicts_are_replaced() {
    let input = b"X-Spam-Flag: NO\nX-Spam-Status: No, score=0.0\nX-SPAM-LEVEL: \nSubject: cheap meds\n\nbuy now\n";
    let out = filter(trained_model(), input)
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(count_fields(&out, "X-Spam-Flag"), 1);
    assert_eq!(count_fields(&out, "X-Spam-Level"), 1);
    assert!(!out.windows(14).any(|w| w == b"X-SPAM-LEVEL: "));
    assert!(out.ends_with(b"Subject: cheap meds\n\nbuy now\n"));
}

#[test]
fn a_forged_verdict_that_cannot_be_removed_still_leaves_the_message_marked_first() {
    // Removing the forged field would merge the lone CR before it with the blank line's LF:
    // it stays, and the filter's verdict comes first. The message went out unmarked, a
    // sender's way past every rule that reads X-Spam-Flag.
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    let end = spam.windows(2).position(|w| w == b"\n\n").unwrap();
    let input = [
        &spam[..end],
        b"\nX-Mailer: x\rX-Spam-Flag: NO\n",
        &spam[end + 1..],
    ]
    .concat();
    let out = filter(trained_model(), &input)
        .success()
        .get_output()
        .stdout
        .clone();
    use spamsort::corpus::header_block::{LineEnds, envelope_len};
    let envelope = envelope_len(&out, LineEnds::of(&out));
    assert!(out[envelope..].starts_with(b"X-Spam-Flag: YES\n"));
    assert!(out.ends_with(&input[envelope..]), "the message changed");
}

#[test]
fn no_separator_and_empty_input() {
    let out = filter(trained_model(), b"Subject: no body")
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(out.ends_with(b"Subject: no body"));
    assert_eq!(count_fields(&out, "X-Spam-Flag"), 1);
    let out = filter(trained_model(), b"")
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(strip_owned_fields(&out), b"");
    assert_eq!(count_fields(&out, "X-Spam-Status"), 1);
}

#[test]
fn missing_truncated_or_corrupt_model_passes_the_message_unchanged() {
    let t = TestDir::new();
    let good = std::fs::read(trained_model()).unwrap();
    let truncated = t.write("truncated.spamsort", &good[..good.len() / 2]);
    let random = t.write("random.spamsort", b"SPAMSORT\x02\0\0\0 this is not a model");
    let missing = t.path().join("missing.spamsort");
    let mut cases = vec![(truncated, None), (random, None), (missing, None)];
    // A flipped byte in the head or the score table's index, or in every block of the score
    // table, with each model answering: the filter checks what it reads. (The other sections,
    // the vocabulary's arrays, the record of learned messages and the models' own sections,
    // a model trained in batch never needs for scoring.)
    let damage = |name: &str, bytes: &mut Vec<u8>| match name {
        "blocks" => {
            let (offset, len) = section_span(&good, 4);
            for at in (offset..offset + len).step_by(64) {
                bytes[at] ^= 0xff;
            }
        }
        _ => {
            let (offset, len) = section_span(&good, if name == "head" { 0 } else { 3 });
            bytes[offset + len / 2] ^= 0xff;
        }
    };
    for name in ["head", "index", "blocks"] {
        for classifier in [
            "bernoulli-nb",
            "multinomial-nb",
            "linear-svm",
            "logistic-regression",
            "fusion",
        ] {
            let mut flipped = good.clone();
            damage(name, &mut flipped);
            let path = t.write(&format!("corrupt-{name}-{classifier}.spamsort"), &flipped);
            cases.push((path, Some(classifier)));
        }
    }
    let input = std::fs::read(&sample_files()[0]).unwrap();
    for (model, classifier) in &cases {
        let mut cmd = spamsort();
        cmd.arg("filter").arg("--model").arg(model);
        if let Some(c) = classifier {
            cmd.args(["--classifier", c]);
        }
        let assert = cmd.write_stdin(input.clone()).assert().success();
        let output = assert.get_output();
        assert!(
            output.stdout == input,
            "{} changed the message",
            model.display()
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("passed through unchanged")
                && stderr.contains(&*model.file_name().unwrap().to_string_lossy()),
            "{stderr}"
        );
        let mut cmd = spamsort();
        cmd.args(["filter", "--exit-code", "--model"]).arg(model);
        if let Some(c) = classifier {
            cmd.args(["--classifier", c]);
        }
        cmd.write_stdin(input.clone()).assert().code(3);
        // Commands that load every section refuse any damage.
        spamsort()
            .arg("info")
            .arg("--model")
            .arg(model)
            .assert()
            .code(3);
    }
}

#[test]
fn journaled_model_with_damaged_sections_or_blocks_passes_the_message_unchanged() {
    // With a journal, the pipe filter also reads the models' sections (see
    // `spamsort::filter::scorer`): damage there, or in the blocks it reads, passes the
    // message through unchanged with the reason.
    let t = TestDir::new();
    let good = journaled_model_bytes(&t, &["--spam"]);
    let input = std::fs::read(&sample_files()[0]).unwrap();
    for (name, section) in [("blocks", 4), ("first-model", 5)] {
        let mut bad = good.clone();
        let (offset, len) = section_span(&good, section);
        for at in (offset..offset + len).step_by(64) {
            bad[at] ^= 0xff;
        }
        let path = t.write(&format!("journaled-{name}.spamsort"), &bad);
        // The first model's section is read only by that model and fusion.
        let classifiers: &[&str] = match name {
            "first-model" => &["bernoulli-nb", "fusion"],
            _ => &[
                "bernoulli-nb",
                "multinomial-nb",
                "linear-svm",
                "logistic-regression",
                "fusion",
            ],
        };
        for classifier in classifiers {
            assert_passed_through(&path, classifier, &input, name);
        }
    }
}

#[test]
fn journaled_model_with_damaged_naive_bayes_counts_in_a_block_passes_the_message_unchanged() {
    // The Naive Bayes models' per-token counts are columns of the score table's blocks, which
    // the journal's sparse replay reads for the message's tokens: damaged counts there fail
    // the block's checksum, and the message passes through unchanged with the reason.
    let t = TestDir::new();
    let good = journaled_model_bytes(&t, &["--spam"]);
    let input = std::fs::read(&sample_files()[0]).unwrap();
    // A record of a token of the message: its length (u32 LE), its bytes, its id (u32 LE),
    // then one f64 per column; columns 1 and 2 hold the Bernoulli model's counts, which the
    // Boolean multinomial model's share (the default models; pinned in score_table's tests).
    let (offset, len) = section_span(&good, 4);
    let blocks = &good[offset..offset + len];
    let tokens = spamsort::Tokenizer::new(spamsort::TokenizerConfig::default())
        .tokenize(&input)
        .tokens;
    let record = tokens
        .iter()
        .find_map(|token| {
            let mut key = (token.len() as u32).to_le_bytes().to_vec();
            key.extend_from_slice(token.as_bytes());
            let at = blocks.windows(key.len()).position(|w| w == key)?;
            Some(offset + at + key.len() + 4)
        })
        .expect("a token of the message is in the table");
    let mut bad = good.clone();
    for column in [1, 2] {
        // The counts' lowest mantissa byte: the value stays a plausible count.
        bad[record + 8 * column] ^= 1;
    }
    let path = t.write("journaled-counts.spamsort", &bad);
    for classifier in ["bernoulli-nb", "multinomial-nb", "fusion"] {
        assert_passed_through(&path, classifier, &input, "checksum");
    }
}

#[test]
fn format_2_bincode_model_passes_the_message_unchanged_and_says_to_retrain() {
    // A file of the previous release (format version 2, bincode sections) is not read.
    let t = TestDir::new();
    let mut old = std::fs::read(trained_model()).unwrap();
    old[8..12].copy_from_slice(&2u32.to_le_bytes());
    let model = t.write("old.spamsort", &old);
    let input = std::fs::read(&sample_files()[0]).unwrap();
    let assert = filter(&model, &input).success();
    let output = assert.get_output();
    assert!(output.stdout == input, "the message was changed");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("format version 2")
            && stderr.contains("retrain with `spamsort train`")
            && stderr.contains("passed through unchanged"),
        "{stderr}"
    );
}

/// Offset and length of section `i` of a model file, from its directory.
/// The bytes of a copy of the trained model after one `learn FLAG` run per flag, each of the
/// same new message (so its journal holds them).
fn journaled_model_bytes(t: &TestDir, flags: &[&str]) -> Vec<u8> {
    let model = crate::util::copy_of_trained_model(t);
    let learned = t.write("learned.eml", b"Subject: zorblax\n\nzorblax offers\n");
    for flag in flags {
        spamsort()
            .args(["learn", flag, "--model"])
            .arg(&model)
            .arg(&learned)
            .assert()
            .success();
    }
    std::fs::read(&model).unwrap()
}

/// Runs `filter --classifier CLASSIFIER --model MODEL` on `input` and asserts that the message
/// came out unchanged, exit 0, with "passed through unchanged" and `reason` on stderr.
fn assert_passed_through(model: &std::path::Path, classifier: &str, input: &[u8], reason: &str) {
    let assert = spamsort()
        .args(["filter", "--classifier", classifier, "--model"])
        .arg(model)
        .write_stdin(input.to_vec())
        .assert()
        .success();
    let output = assert.get_output();
    assert!(output.stdout == input, "{classifier}: changed");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("passed through unchanged") && stderr.contains(reason),
        "{classifier}: {stderr}"
    );
}

fn section_span(file: &[u8], i: usize) -> (usize, usize) {
    let at = 16 + 24 * i;
    let word = |k: usize| u64::from_le_bytes(file[k..k + 8].try_into().unwrap()) as usize;
    (word(at), word(at + 8))
}

#[test]
fn oversize_messages_stream_through_unclassified() {
    let input: Vec<u8> = b"Subject: big\n\n"
        .iter()
        .copied()
        .chain(std::iter::repeat_n(b'x', 100_000))
        .collect();
    let assert = spamsort()
        .args(["filter", "--max-size", "1000", "--model"])
        .arg(trained_model())
        .write_stdin(input.clone())
        .assert()
        .success();
    assert_eq!(assert.get_output().stdout, input);
}

#[test]
fn exit_code_follows_bogofilter() {
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    spamsort()
        .args(["filter", "--exit-code", "--model"])
        .arg(trained_model())
        .write_stdin(spam)
        .assert()
        .code(0);
    let ham = std::fs::read(sample_files().last().unwrap()).unwrap();
    spamsort()
        .args(["filter", "--exit-code", "--model"])
        .arg(trained_model())
        .write_stdin(ham.clone())
        .assert()
        .code(1);
    spamsort()
        .args([
            "filter",
            "--exit-code",
            "--spam-threshold",
            "0.9999999",
            "--ham-threshold",
            "0",
            "--model",
        ])
        .arg(trained_model())
        .write_stdin(ham)
        .assert()
        .code(2);
}

#[test]
fn a_reader_that_closes_early_makes_the_filter_fail_classified_or_not() {
    // Standard output closed before the filter writes: the message is not delivered, so the
    // exit status must say so (3, and not 0, which `--exit-code` reads as spam), with a reason.
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    let missing = TestDir::new().path().join("missing.spamsort");
    for model in [trained_model(), missing.as_path()] {
        let mut child = Command::new(spamsort_bin())
            .args(["filter", "--exit-code", "--model"])
            .arg(model)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        // The filter may stop reading once it fails: a write error here is expected.
        let _ = child.stdin.take().unwrap().write_all(&spam);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{model:?}: {stderr}");
        assert!(stderr.contains("standard output"), "{model:?}: {stderr}");
    }
}

#[test]
fn folded_first_line_is_passed_through_unmarked() {
    // Regression: an inserted field would absorb the folded line, and stripping that field
    // later (a second filter run) would lose it.
    let input = b" folded start\nSubject: x\n\nbody\n";
    let assert = filter(trained_model(), input).success();
    assert_eq!(assert.get_output().stdout, input);
    assert!(String::from_utf8_lossy(&assert.get_output().stderr).contains("folded line"));
}

/// `spamsort filter` with the trained model and `extra` flags, its heap (and every private
/// writable mapping) capped at `bytes` by RLIMIT_DATA (util-linux `prlimit`), its standard
/// streams piped.
fn filter_under_data_limit(bytes: u64, extra: &[&str]) -> std::process::Child {
    Command::new("prlimit")
        .arg(format!("--data={bytes}"))
        .arg("--")
        .arg(spamsort_bin())
        .arg("filter")
        .args(extra)
        .arg("--model")
        .arg(trained_model())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) runs spamsort")
}

#[test]
fn a_message_too_large_for_the_memory_left_passes_through_with_every_byte() {
    // Regression: with `--max-size` above what the memory limit lets the filter hold, the
    // buffer of the message's head could not grow after its next 8 KiB had been read; those
    // bytes were dropped, and the rest passed "through unchanged" with exit 0, 8 KiB short.
    let mut message = b"From: a@example.org\nSubject: big\n\n".to_vec();
    for i in 0..1_500_000 {
        message.extend_from_slice(format!("line {i:08} of a long body that goes on\n").as_bytes());
    }
    let (status, out, stderr) =
        filter_message_under_data_limit(40 << 20, &["--max-size", "1000000000"], &message);
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("passed through unchanged"), "{stderr}");
    assert_eq!(out.len(), message.len(), "{stderr}");
    assert!(out == message, "{stderr}");
}

/// Runs `spamsort filter` with `extra` flags under a data limit of `bytes` on `message`
/// (written from another thread, so a filter that stops reading cannot block the test):
/// its exit status, standard output and standard error. Asserts that it read the whole
/// message.
fn filter_message_under_data_limit(
    bytes: u64,
    extra: &[&str],
    message: &[u8],
) -> (std::process::ExitStatus, Vec<u8>, String) {
    let mut child = filter_under_data_limit(bytes, extra);
    let mut stdin = child.stdin.take().unwrap();
    let sent = message.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&sent));
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let wrote = writer.join().unwrap();
    let stderr = stderr_of(&mut child);
    assert!(
        wrote.is_ok(),
        "the filter stopped reading: {wrote:?} {stderr}"
    );
    (child.wait().unwrap(), out, stderr)
}

#[test]
fn memory_running_out_while_classifying_passes_the_message_through_unchanged() {
    // Regression: Rust aborts a process whose allocation fails, so under a data limit that
    // let it start and read the message but not tokenize it, the filter died by SIGABRT
    // without writing a byte. The 2 MB message fails under 16 MiB, whose room is enough for a
    // small one: the limit is not one under which nothing can run.
    let mut big = b"From: a@example.org\nSubject: big\n\n".to_vec();
    for i in 0..45_000 {
        big.extend_from_slice(format!("word{i} other{} of the words\n", i % 977).as_bytes());
    }
    // And one past the head the filter holds (2 MiB and 64 KiB): its rest is still to read
    // from standard input, so no byte of it may wait in a buffer the pass-through skips.
    let mut larger = big.clone();
    for i in 0..40_000 {
        larger.extend_from_slice(format!("more{i} of the words\n").as_bytes());
    }
    assert!(larger.len() > (2 << 20) + (64 << 10));
    let small = b"From: a@example.org\nSubject: lunch\n\nsee you at noon\n";
    let limit = 16 << 20;
    let (status, out, stderr) = filter_message_under_data_limit(limit, &[], small);
    assert!(status.success(), "{stderr}");
    assert!(out.starts_with(b"X-Spam-Flag: "), "{stderr}");
    let runs = [
        (&[][..], 0, &big),
        (&["--exit-code"][..], 3, &big),
        (&[][..], 0, &larger),
    ];
    for (extra, code, big) in runs {
        let (status, out, stderr) = filter_message_under_data_limit(limit, extra, big);
        assert_eq!(status.code(), Some(code), "{extra:?} {stderr}");
        assert!(
            stderr.contains("passed through unchanged: out of memory"),
            "{stderr}"
        );
        assert_eq!(out.len(), big.len(), "{stderr}");
        assert!(out == *big, "{stderr}");
    }
}

#[test]
fn hundred_megabyte_message_streams_through_marked_within_64_mb_of_data() {
    // 64-byte lines, 1 MiB chunks, 100 chunks: the body is generated, never held whole.
    const LINE: &[u8; 64] = b"a line of a very large message that filter must stream 01234567\n";
    const HEAD: &[u8] = b"From: a@example.org\nSubject: big\n\n";
    const CHUNKS: usize = 100;
    let chunk = LINE.repeat(16 * 1024);
    let limit = 64 * 1024 * 1024;
    let started = Instant::now();
    let mut child = filter_under_data_limit(limit, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let body = chunk.clone();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        stdin.write_all(HEAD)?;
        for _ in 0..CHUNKS {
            stdin.write_all(&body)?;
        }
        Ok(())
    });
    let mut out = std::io::BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
    // The added fields and their folded lines, up to the message's first line.
    let mut added = Vec::new();
    while out
        .fill_buf()
        .is_ok_and(|b| b.starts_with(b"X-Spam-") || b.starts_with(b"\t"))
    {
        out.read_until(b'\n', &mut added).unwrap();
    }
    let added = String::from_utf8_lossy(&added).into_owned();
    assert!(
        added.starts_with("X-Spam-Flag: ") && added.contains("\nX-Spam-Status: "),
        "{added:?}"
    );
    let mut got = vec![0; HEAD.len()];
    out.read_exact(&mut got).unwrap();
    assert_eq!(got, HEAD);
    got.resize(chunk.len(), 0);
    for i in 0..CHUNKS {
        out.read_exact(&mut got).unwrap();
        assert!(got == chunk, "chunk {i} of the body changed");
    }
    assert_eq!(out.read(&mut got).unwrap(), 0, "bytes after the message");
    writer.join().unwrap().unwrap();
    let stderr = stderr_of(&mut child);
    assert!(child.wait().unwrap().success(), "{stderr}");
    assert_eq!(stderr, "");
    // Generous: about 0.2 s here for the debug build; the bound only catches a whole read.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[test]
fn model_named_by_the_environment_or_a_flag_and_usage_errors_pass_the_message_through() {
    // `filter`'s plain command lines skip clap (src/cli/filter_argv.rs): the same answers.
    let spam = std::fs::read(&sample_files()[0]).unwrap();
    let t = TestDir::new();
    let missing = t.path().join("missing.spamsort");
    let marked = |args: &[&std::ffi::OsStr], env: Option<&std::path::Path>| {
        let mut cmd = spamsort();
        cmd.arg("filter").args(args).env_remove("SPAMSORT_MODEL");
        if let Some(model) = env {
            cmd.env("SPAMSORT_MODEL", model);
        }
        let out = cmd.write_stdin(spam.clone()).assert().success();
        assert_eq!(
            out.get_output().stdout.len() > spam.len(),
            count_fields(&out.get_output().stdout, "X-Spam-Status") == 1
        );
        count_fields(&out.get_output().stdout, "X-Spam-Status")
    };
    let model = trained_model();
    assert_eq!(marked(&[], Some(model)), 1);
    assert_eq!(marked(&["-m".as_ref(), missing.as_ref()], Some(model)), 0);
    assert_eq!(marked(&["--model".as_ref(), model.as_ref()], None), 1);
    // A command line clap refuses (a setting misspelt in a procmail or MTA configuration)
    // costs no mail: the message goes out unchanged, the error to stderr, exit 0 (3 with
    // --exit-code), as on any other failure of the filter.
    let m = model.as_os_str().to_str().unwrap();
    for (usage, code) in [
        (&["--model"][..], 0),
        (&["-m", m, "--max-size", "1k"], 0),
        (&["-m", m, "--classifier", "svm"], 0),
        (&["-m", m, "--subject-tag", "SPAM"], 0),
        (&["-m", m, "--exit-code", "--exit-code"], 3),
        (&["-m", m, "--exit-code", "--spam-threshold", "high"], 3),
        // Exit codes asked for, misspelt: 3, not 0, which they would read as spam.
        (&["-m", m, "--exit-code=true"], 3),
        (&["-m", m, "--exit-codes"], 3),
    ] {
        let out = spamsort()
            .arg("filter")
            .args(usage)
            .env_remove("SPAMSORT_MODEL")
            .write_stdin(spam.clone())
            .assert()
            .code(code)
            .stderr(predicates::str::contains(
                "message passed through unchanged: the command line was refused: error:",
            ));
        assert!(out.get_output().stdout == spam, "{usage:?}");
    }
    // An empty SPAMSORT_MODEL (a procmailrc's `SPAMSORT_MODEL=`) too.
    let out = spamsort()
        .arg("filter")
        .env("SPAMSORT_MODEL", "")
        .write_stdin(spam.clone())
        .assert()
        .success();
    assert!(out.get_output().stdout == spam);
    // Asked for help, it helps.
    spamsort()
        .args(["filter", "--help"])
        .write_stdin(spam.clone())
        .assert()
        .success()
        .stdout(predicates::str::contains("X-Spam-"));
}

#[test]
fn a_message_on_non_blocking_pipes_is_read_and_written_whole() {
    // It was cut short: a read that found no byte yet (EAGAIN) and a write into a full pipe
    // were taken for errors, with exit 3 and "passed through unchanged" on stderr.
    use std::os::fd::AsFd;
    let nonblocking = |fd: std::os::fd::BorrowedFd<'_>| {
        let flags = rustix::fs::fcntl_getfl(fd).unwrap();
        rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK).unwrap();
    };
    let mut message = b"Subject: cheap meds\n\n".to_vec();
    message.extend(b"a line of the message body\n".repeat(40_000));
    let expected = filter(trained_model(), &message)
        .get_output()
        .stdout
        .clone();
    let (stdin, mut feed) = std::io::pipe().unwrap();
    let (mut out, stdout) = std::io::pipe().unwrap();
    nonblocking(stdin.as_fd());
    nonblocking(stdout.as_fd());
    let mut child = Command::new(spamsort_bin())
        .args(["filter", "--model"])
        .arg(trained_model())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Pieces with pauses between them, so that reads find nothing and the output a full pipe.
    let sent = message.clone();
    let writing = std::thread::spawn(move || {
        for piece in sent.chunks(300_000) {
            std::thread::sleep(Duration::from_millis(100));
            feed.write_all(piece).unwrap();
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let mut got = Vec::new();
    out.read_to_end(&mut got).unwrap();
    writing.join().unwrap();
    let status = child.wait().unwrap();
    let stderr = stderr_of(&mut child);
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        got == expected,
        "{} of {} bytes: {stderr}",
        got.len(),
        expected.len()
    );
}

#[test]
fn a_file_that_is_standard_input_and_output_is_refused_and_left_as_it_was() {
    // Found by review: `filter < f >> f` read back what it wrote as more of the message, past
    // the head it holds: a 3 MB file grew to 10 GB in 10 seconds. A small one got a marked
    // copy appended.
    let t = TestDir::new();
    let message = std::fs::read(&sample_files()[0]).unwrap();
    let path = t.write("f.eml", &message);
    let out = Command::new(spamsort_bin())
        .args(["filter", "--model"])
        .arg(trained_model())
        .stdin(std::fs::File::open(&path).unwrap())
        .stdout(
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap(),
        )
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("the same file"), "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), message);
}

#[test]
fn a_closed_standard_output_fails_the_filter_before_it_reads_the_message() {
    // The runtime opened /dev/null in its place: the message went there, with exit 0.
    let message = std::fs::read(&sample_files()[0]).unwrap();
    for args in [&["--model"][..], &["--no-such-flag", "--model"]] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(r#"bin=$1; shift; exec "$bin" filter "$@" >&-"#)
            .arg("sh")
            .arg(spamsort_bin())
            .args(args)
            .arg(trained_model())
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                // The filter may exit before reading: a closed pipe is no failure here.
                let _ = child.stdin.take().unwrap().write_all(&message);
                child.wait_with_output()
            })
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("standard output is closed"), "{stderr}");
    }
    // Written to /dev/null on purpose, it is delivered there.
    let null = std::fs::File::create("/dev/null").unwrap();
    let status = Command::new(spamsort_bin())
        .args(["filter", "--model"])
        .arg(trained_model())
        .stdin(std::fs::File::open(&sample_files()[0]).unwrap())
        .stdout(null)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_closed_standard_input_fails_the_filter_and_nothing_is_delivered() {
    // auditN repro-1: the runtime opened /dev/null in its place, and the filter delivered a
    // message made of its own fields alone, with exit 0, as if it had filtered mail.
    for args in [&["--model"][..], &["--no-such-flag", "--model"]] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(r#"bin=$1; shift; exec "$bin" filter "$@" <&-"#)
            .arg("sh")
            .arg(spamsort_bin())
            .args(args)
            .arg(trained_model())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: {} bytes",
            out.stdout.len()
        );
        assert!(stderr.contains("standard input is closed"), "{stderr}");
    }
    // An empty message a caller gives on purpose (`< /dev/null`) is marked, as any other.
    let out = Command::new(spamsort_bin())
        .args(["filter", "--model"])
        .arg(trained_model())
        .stdin(std::fs::File::open("/dev/null").unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(count_fields(&out.stdout, "X-Spam-Flag"), 1);
}

/// auditF repro-1: the reason a message passes through went to stderr with `eprintln!`,
/// which panics where stderr cannot be written (a full disk under the mail program's log,
/// here /dev/full): nothing of the message reached stdout, exit 101. A usage error's pass
/// through says its reason the same way.
#[test]
fn a_message_passes_through_whole_when_standard_error_cannot_be_written() {
    let t = TestDir::new();
    let message = crate::util::message("hello", "body line");
    let missing = t.path().join("missing.spamsort");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for extra in [&[][..], &["--no-such-flag"][..]] {
        let out = Command::new(spamsort_bin())
            .arg("filter")
            .arg("--model")
            .arg(&missing)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(full())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(&message)?;
                child.wait_with_output()
            })
            .unwrap();
        assert_eq!(out.stdout, message, "{extra:?}: {:?}", out.status);
        assert_eq!(out.status.code(), Some(0), "{extra:?}");
    }
}
