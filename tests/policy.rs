//! One scoring policy and one score scale in every front end, and headers a SpamAssassin or
//! bogofilter setup understands (issue 14, items 1 to 3): a config file's classifier and
//! thresholds give the same verdict and score in `classify`, `filter`, `serve` (through the
//! real spamc) and `daemon`; `filter`'s headers against golden files (default settings, subject
//! tag, header prefix, `X-Bogosity`), LF and CRLF; a procmail rule on `X-Spam-Level` and a Sieve
//! rule on `X-Spam-Flag` (run by Dovecot's `sieve-test` when installed) match spam and not
//! ham; spamc `-c` scores equal the `score=` of PROCESS and of `classify --format json`.

use crate::cli_serve::{run_spamc, spamc};
use crate::util::{
    TestDir, copy_of_trained_model, sample_files, sigterm_and_wait, to_crlf, trained_model,
};
use spamsort::corpus::header_block::{self, HeaderBlock, field_name, is_continuation};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The header fixtures: a spam, a ham with a forged verdict and an unsure message, each under
/// tests/data/headers/NAME.eml.
const MESSAGES: [&str; 3] = ["spam", "ham", "unsure"];

fn fixture(name: &str) -> PathBuf {
    crate::util::repo_path(&format!("tests/data/headers/{name}"))
}

/// `spamsort` with no system or user config file in the way.
fn isolated(cmd: &mut Command) -> &mut Command {
    cmd.env(
        "SPAMSORT_SYSTEM_CONFIG",
        "/nonexistent/spamsort/system.toml",
    )
    .env("SPAMSORT_CONFIG", "/nonexistent/spamsort/user.toml")
    .env_remove("SPAMSORT_MODEL")
}

/// The unfolded value of the first field called `name` in `message`'s header block.
fn field(message: &[u8], name: &str) -> Option<String> {
    let block = HeaderBlock::scan(message);
    let mut value: Option<Vec<u8>> = None;
    for line in header_block::lines(
        &message[block.envelope_end..block.fields_end],
        block.line_ends,
    ) {
        if is_continuation(line) {
            if let Some(v) = value.as_mut() {
                v.extend_from_slice(line);
            }
            continue;
        }
        if value.is_some() {
            break;
        }
        if field_name(line).is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes())) {
            let colon = line.iter().position(|&b| b == b':').unwrap();
            value = Some(line[colon + 1..].to_vec());
        }
    }
    let text = String::from_utf8(value?).unwrap();
    Some(text.replace(['\r', '\n'], "").trim().to_string())
}

/// (verdict, score) as the header of a marked message says: `X-Spam-Flag`, `X-Spam-Unsure`,
/// and the `score=` of `X-Spam-Status`.
fn verdict_in_headers(marked: &[u8]) -> (String, f64) {
    let flag = field(marked, "X-Spam-Flag").expect("X-Spam-Flag");
    let unsure = field(marked, "X-Spam-Unsure").is_some_and(|v| v == "YES");
    let verdict = match (flag.as_str(), unsure) {
        ("YES", _) => "spam",
        (_, true) => "unsure",
        _ => "ham",
    };
    (verdict.to_string(), status_score(marked))
}

/// The `score=` of `X-Spam-Status`.
fn status_score(marked: &[u8]) -> f64 {
    let status = field(marked, "X-Spam-Status").expect("X-Spam-Status");
    status
        .split_whitespace()
        .find_map(|w| w.strip_prefix("score="))
        .expect("score=")
        .parse()
        .unwrap()
}

/// `classify --format json` of each file: (verdict, score).
fn classify_json(files: &[PathBuf], extra: &[&str]) -> Vec<(String, f64)> {
    let out = isolated(&mut Command::new(crate::util::spamsort_bin()))
        .args(["classify", "--format", "json", "--model"])
        .arg(trained_model())
        .args(extra)
        .args(files)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 3), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["verdict"].as_str().unwrap().to_string(),
                v["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Runs `cmd` with `message` on its standard input: its output and error output.
fn with_stdin(cmd: &mut Command, message: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(message).unwrap();
    child.wait_with_output().unwrap()
}

/// `filter` of one message with `extra` flags: its output.
fn filter(message: &[u8], extra: &[&str]) -> Vec<u8> {
    let mut cmd = Command::new(crate::util::spamsort_bin());
    let out = isolated(&mut cmd)
        .args(["filter", "--model"])
        .arg(trained_model())
        .args(extra);
    let out = with_stdin(out, message);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    out.stdout
}

/// Some sample spam and ham, then the three header fixtures.
fn some_messages() -> Vec<PathBuf> {
    let files = sample_files();
    let mut chosen: Vec<PathBuf> = files.iter().step_by(17).cloned().collect();
    chosen.extend(MESSAGES.map(|m| fixture(&format!("{m}.eml"))));
    chosen
}

/// A config file that picks a model other than the file's active one and other thresholds,
/// the messages, and what `classify` says of each under it: (verdict, score).
struct UnderConfig {
    t: TestDir,
    config: PathBuf,
    files: Vec<PathBuf>,
    expected: Vec<(String, f64)>,
}

impl UnderConfig {
    fn new() -> UnderConfig {
        let t = TestDir::new();
        let config = t.write(
            "config.toml",
            b"classifier = \"logistic-regression\"\nspam_threshold = 0.95\nham_threshold = 0.3\n",
        );
        let files = some_messages();
        let mut under = UnderConfig {
            t,
            config,
            files,
            expected: Vec::new(),
        };
        under.expected = classify_json(&under.files, &under.flags());
        assert_eq!(under.expected.len(), under.files.len());
        under
    }

    /// `--config FILE`.
    fn flags(&self) -> [&str; 2] {
        ["--config", self.config.to_str().unwrap()]
    }
}

#[test]
fn classify_follows_the_config_file_classifier_and_thresholds() {
    let under = UnderConfig::new();
    // The config file matters: without it some score or verdict differs.
    assert_ne!(under.expected, classify_json(&under.files, &[]));
    let verdicts: Vec<&str> = under.expected.iter().map(|(v, _)| v.as_str()).collect();
    for v in ["spam", "ham", "unsure"] {
        assert!(verdicts.contains(&v), "no {v} among {verdicts:?}");
    }
    // The same verdict and score from the config file as from flags.
    let flags = [
        "--classifier",
        "logistic-regression",
        "--spam-threshold",
        "0.95",
        "--ham-threshold",
        "0.3",
    ];
    assert_eq!(under.expected, classify_json(&under.files, &flags));
}

#[test]
fn filter_gives_the_verdict_and_score_classify_gives_under_a_config_file() {
    let under = UnderConfig::new();
    for (file, want) in under.files.iter().zip(&under.expected) {
        let marked = filter(&std::fs::read(file).unwrap(), &under.flags());
        assert_eq!(
            &verdict_in_headers(&marked),
            want,
            "filter {}",
            file.display()
        );
    }
}

#[test]
fn serve_gives_spamc_the_verdict_and_score_classify_gives_under_a_config_file() {
    let Some(()) = spamc() else { return };
    let under = UnderConfig::new();
    let mut cmd = Command::new(crate::util::spamsort_bin());
    isolated(&mut cmd);
    let served = crate::util::Served::start(cmd, trained_model(), &under.flags());
    for (file, (verdict, score)) in under.files.iter().zip(&under.expected) {
        let message = std::fs::read(file).unwrap();
        // CHECK: the score, and exit code 1 for spam.
        let check = run_spamc(&served, &["-c"], &message);
        let text = String::from_utf8(check.stdout).unwrap();
        assert_eq!(text.trim(), format!("{score:.1}/5.0"), "{}", file.display());
        let spam_code = if verdict == "spam" { 1 } else { 0 };
        assert_eq!(check.status.code(), Some(spam_code), "{}", file.display());
        // PROCESS: the headers, unsure included.
        let process = run_spamc(&served, &[], &message);
        assert_eq!(
            verdict_in_headers(&process.stdout),
            (verdict.clone(), *score),
            "spamc PROCESS {}",
            file.display()
        );
    }
}

#[test]
fn daemon_files_and_marks_each_message_as_classify_says_under_a_config_file() {
    let under = UnderConfig::new();
    let t = &under.t;
    let inbox = t.maildir("inbox");
    let folders = ["spam", "ham", "unsure"].map(|f| (f, t.path().join(f)));
    for (i, file) in under.files.iter().enumerate() {
        std::fs::copy(file, inbox.join(format!("new/{i:03}.test"))).unwrap();
    }
    let mut cmd = Command::new(crate::util::spamsort_bin());
    isolated(&mut cmd)
        .args(["daemon", "--add-headers", "--model"])
        .arg(trained_model())
        .args(under.flags())
        .arg("--inbox")
        .arg(&inbox);
    for (name, dir) in &folders {
        cmd.arg(format!("--{name}")).arg(dir);
    }
    let mut daemon = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // The daemon sorts what is in new/ when it starts; a generous bound for a loaded machine.
    while std::fs::read_dir(inbox.join("new")).unwrap().count() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the daemon did not sort the inbox"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    sigterm_and_wait(&mut daemon);
    for (i, want) in under.expected.iter().enumerate() {
        let name = format!("{i:03}.test");
        let (folder, dir) = folders
            .iter()
            .find(|(_, d)| d.join("new").join(&name).exists())
            .unwrap_or_else(|| panic!("{name} filed nowhere"));
        let file = &under.files[i];
        assert_eq!(*folder, want.0, "daemon folder of {}", file.display());
        let marked = std::fs::read(dir.join("new").join(&name)).unwrap();
        assert_eq!(
            &verdict_in_headers(&marked),
            want,
            "daemon {}",
            file.display()
        );
    }
}

#[test]
fn config_layers_system_under_user_under_config_flag_under_flags() {
    let t = TestDir::new();
    let system = t.write(
        "system.toml",
        b"classifier = \"multinomial-nb\"\nspam_threshold = 0.5\n",
    );
    let user = t.write("user.toml", b"spam_threshold = 0.6\nham_threshold = 0.55\n");
    let explicit = t.write("explicit.toml", b"ham_threshold = 0.05\n");
    let message = fixture("unsure.eml");
    let run = |extra: &[&str]| {
        let out = Command::new(crate::util::spamsort_bin())
            .env("SPAMSORT_SYSTEM_CONFIG", &system)
            .env("SPAMSORT_CONFIG", &user)
            .args(["explain", "-n", "0", "--model"])
            .arg(trained_model())
            .args(extra)
            .arg(&message)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    // multinomial-nb from the system file, spam at 0.6 and ham at 0.55 from the user's, ham at
    // 0.05 from --config: the same answer as those settings given as flags alone.
    let layered = run(&["--config", explicit.to_str().unwrap()]);
    let as_flags = run(&[
        "--classifier",
        "multinomial-nb",
        "--spam-threshold",
        "0.6",
        "--ham-threshold",
        "0.05",
    ]);
    assert!(layered.contains("multinomial-nb"), "{layered}");
    assert_eq!(layered, as_flags);
    // ... and not the answer under the file's own settings: the layers took effect.
    assert_ne!(
        layered,
        run(&["--spam-threshold", "0.9", "--ham-threshold", "0.5"])
    );
    // A flag wins over every file.
    let flagged = run(&[
        "--config",
        explicit.to_str().unwrap(),
        "--classifier",
        "linear-svm",
        "--spam-threshold",
        "0.9",
    ]);
    let alone = Command::new(crate::util::spamsort_bin())
        .env("SPAMSORT_SYSTEM_CONFIG", t.path().join("missing.toml"))
        .env("SPAMSORT_CONFIG", t.path().join("missing.toml"))
        .args(["explain", "-n", "0", "--model"])
        .arg(trained_model())
        .args(["--classifier", "linear-svm", "--spam-threshold", "0.9"])
        .args(["--ham-threshold", "0.05"])
        .arg(&message)
        .output()
        .unwrap();
    assert!(flagged.contains("linear-svm"), "{flagged}");
    assert_eq!(flagged, String::from_utf8(alone.stdout).unwrap());
    // The --config file must exist; the others need not.
    let out = Command::new(crate::util::spamsort_bin())
        .env("SPAMSORT_SYSTEM_CONFIG", t.path().join("missing.toml"))
        .args(["classify", "--config"])
        .arg(t.path().join("absent.toml"))
        .arg("--model")
        .arg(trained_model())
        .arg(&message)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("absent.toml"));
}

/// The header settings the golden files are made with: (file suffix, `filter` flags).
const SETTINGS: [(&str, &[&str]); 4] = [
    ("default", &[]),
    ("subject-tag", &["--subject-tag"]),
    ("prefix", &["--header-prefix", "X-Spamsort-"]),
    ("bogosity", &["--bogosity"]),
];

/// `filter`'s output for fixture `message` under `setting`, checked against
/// tests/data/headers/MESSAGE.SETTING.out, and as CRLF against that file in CRLF. A mismatch
/// writes MESSAGE.SETTING.out.actual (review it, then rename it to update the golden file).
#[test]
fn filter_headers_match_golden_files_for_every_setting_lf_and_crlf() {
    let mut ran = 0;
    let mut mismatches = Vec::new();
    for message in MESSAGES {
        let input = std::fs::read(fixture(&format!("{message}.eml"))).unwrap();
        for (setting, flags) in SETTINGS {
            let golden_path = fixture(&format!("{message}.{setting}.out"));
            let out = filter(&input, flags);
            let golden = std::fs::read(&golden_path).unwrap_or_default();
            ran += 1;
            if out != golden {
                std::fs::write(golden_path.with_extension("out.actual"), &out).unwrap();
                mismatches.push(golden_path.display().to_string());
                continue;
            }
            assert_eq!(
                filter(&to_crlf(&input), flags),
                to_crlf(&golden),
                "{message} {setting} as CRLF"
            );
        }
    }
    assert_eq!(ran, MESSAGES.len() * SETTINGS.len());
    assert!(
        mismatches.is_empty(),
        "golden files differ (see .actual): {mismatches:?}"
    );
}

#[test]
fn golden_headers_say_what_each_setting_promises() {
    let golden = |m: &str, s: &str| std::fs::read(fixture(&format!("{m}.{s}.out"))).unwrap();
    for m in MESSAGES {
        let input = std::fs::read(fixture(&format!("{m}.eml"))).unwrap();
        let default = golden(m, "default");
        // The body is the input's, byte for byte.
        let body = |b: &[u8]| b[HeaderBlock::scan(b).body_start..].to_vec();
        for s in SETTINGS.map(|s| s.0) {
            assert_eq!(body(&golden(m, s)), body(&input), "{m} {s}");
        }
        // Only spam gets the tag; the original subject text follows it unchanged.
        let tagged = field(&golden(m, "subject-tag"), "Subject").unwrap();
        let subject = field(&input, "Subject").unwrap();
        if m == "spam" {
            assert_eq!(tagged, format!("***SPAM*** {subject}"));
        } else {
            assert_eq!(tagged, subject);
        }
        // The prefix leaves upstream X-Spam-* fields as they came.
        let prefixed = golden(m, "prefix");
        assert_eq!(
            field(&prefixed, "X-Spam-Flag"),
            field(&input, "X-Spam-Flag")
        );
        assert_eq!(
            field(&prefixed, "X-Spam-Status"),
            field(&input, "X-Spam-Status")
        );
        assert_eq!(
            field(&prefixed, "X-Spamsort-Flag"),
            field(&default, "X-Spam-Flag")
        );
        let bogosity = field(&golden(m, "bogosity"), "X-Bogosity").unwrap();
        let word = match m {
            "spam" => "Spam,",
            "ham" => "Ham,",
            _ => "Unsure,",
        };
        assert!(bogosity.starts_with(word), "{bogosity}");
        assert_eq!(verdict_in_headers(&default).0, m);
    }
}

/// procmail's `* ^X-Spam-Level: \*\*\*\*\*` as procmail reads it: an egrep-style regex over
/// the header, `^` at any line start, case ignored (procmail's default).
fn procmail_matches(rule: &str, message: &[u8]) -> bool {
    let header = &message[..HeaderBlock::scan(message).body_start];
    regex::bytes::RegexBuilder::new(rule)
        .multi_line(true)
        .case_insensitive(true)
        .build()
        .unwrap()
        .is_match(header)
}

/// What Sieve's `header :contains "X-Spam-Flag" "YES"` does, by Dovecot's `sieve-test` when
/// it is installed: `Some(true)` when the script files the message into Spam.
fn sieve_files_into_spam(dir: &Path, message: &[u8]) -> Option<bool> {
    Command::new("sieve-test").arg("--help").output().ok()?;
    use std::os::unix::fs::PermissionsExt;
    // sieve-test drops to the mail user (nobody when run as root): it must read the files.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = dir.join("spam.sieve");
    std::fs::write(
        &script,
        "require [\"fileinto\"];\nif header :contains \"X-Spam-Flag\" \"YES\" {\n    fileinto \"Spam\";\n}\n",
    )
    .unwrap();
    let eml = dir.join("message.eml");
    std::fs::write(&eml, message).unwrap();
    let uid = |flag: &str, user: &str| {
        let out = Command::new("id").args([flag, user]).output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let me = uid("-u", "");
    let (u, g) = if me.is_empty() || me == "0" {
        (uid("-u", "nobody"), uid("-g", "nobody"))
    } else {
        (me, uid("-g", ""))
    };
    let conf = dir.join("dovecot.conf");
    std::fs::write(
        &conf,
        format!(
            "mail_uid = {u}\nmail_gid = {g}\nfirst_valid_uid = 1\nfirst_valid_gid = 1\n\
             mail_location = maildir:{0}/Maildir\nbase_dir = {0}/run\nssl = no\n\
             log_path = /dev/stderr\n",
            dir.display()
        ),
    )
    .unwrap();
    for p in [&script, &eml, &conf] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = Command::new("sieve-test")
        .arg("-c")
        .arg(&conf)
        .arg(&script)
        .arg(&eml)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "sieve-test: {out:?}");
    Some(text.contains("store message in folder: Spam"))
}

#[test]
fn procmail_level_rule_and_sieve_flag_rule_match_spam_and_not_ham() {
    let t = TestDir::new();
    let mut sieve_ran = false;
    for setting in ["default", "subject-tag", "bogosity"] {
        for m in MESSAGES {
            let marked = std::fs::read(fixture(&format!("{m}.{setting}.out"))).unwrap();
            for message in [marked.clone(), to_crlf(&marked)] {
                let is_spam = m == "spam";
                assert_eq!(
                    procmail_matches(r"^X-Spam-Level: \*\*\*\*\*", &message),
                    is_spam,
                    "procmail, {m} {setting}"
                );
                // Sieve's :contains with the default comparator i;ascii-casemap on the
                // unfolded field; checked by the real interpreter where there is one.
                let contains = field(&message, "X-Spam-Flag")
                    .is_some_and(|v| v.to_ascii_uppercase().contains("YES"));
                assert_eq!(contains, is_spam, "sieve, {m} {setting}");
                if setting == "default"
                    && let Some(spam) = sieve_files_into_spam(t.path(), &message)
                {
                    assert_eq!(spam, is_spam, "sieve-test, {m} {setting}");
                    sieve_ran = true;
                }
            }
        }
    }
    if !sieve_ran {
        eprintln!(
            "WARNING: sieve-test (Debian dovecot-sieve) is not installed: SKIPPED the real Sieve run"
        );
    }
}

#[test]
fn spamc_check_scores_equal_process_headers_and_classify_json_for_20_samples() {
    let Some(()) = spamc() else { return };
    let files = sample_files();
    let (spam, ham) = files.split_at(104);
    let chosen: Vec<PathBuf> = spam
        .iter()
        .take(10)
        .chain(ham.iter().take(10))
        .cloned()
        .collect();
    let json = classify_json(&chosen, &[]);
    let mut cmd = Command::new(crate::util::spamsort_bin());
    isolated(&mut cmd);
    let served = crate::util::Served::start(cmd, trained_model(), &[]);
    let mut verdicts = Vec::new();
    for (file, (verdict, score)) in chosen.iter().zip(&json) {
        let message = std::fs::read(file).unwrap();
        let check = String::from_utf8(run_spamc(&served, &["-c"], &message).stdout).unwrap();
        let (check_score, required) = check.trim().split_once('/').unwrap();
        assert_eq!(required, "5.0");
        let check_score: f64 = check_score.parse().unwrap();
        let process = run_spamc(&served, &[], &message).stdout;
        assert_eq!(check_score, status_score(&process), "{}", file.display());
        assert_eq!(check_score, *score, "{}", file.display());
        verdicts.push(verdict.clone());
    }
    assert!(verdicts.contains(&"spam".to_string()) && verdicts.contains(&"ham".to_string()));
}

#[test]
fn learn_if_wrong_judges_by_the_config_file_thresholds() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    // The fixture spam is spam at a spam threshold of 0.9, not at 0.9999999 (P 0.99999), so there the
    // spam the model got right is wrong.
    let lenient = t.write("lenient.toml", b"spam_threshold = 0.9\n");
    let config = t.write(
        "config.toml",
        b"spam_threshold = 0.9999999\nham_threshold = 0.0\n",
    );
    let learn = |extra: &[&str]| {
        let out = isolated(&mut Command::new(crate::util::spamsort_bin()))
            .args(["learn", "--spam", "--if-wrong", "--model"])
            .arg(&model)
            .args(extra)
            .arg(fixture("spam.eml"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let default = learn(&["--config", lenient.to_str().unwrap()]);
    assert!(
        default.contains("learned 0 message(s)") && default.contains("1 already right"),
        "{default}"
    );
    let configured = learn(&["--config", config.to_str().unwrap()]);
    assert!(configured.contains("learned 1 message(s)"), "{configured}");
}

#[test]
fn a_message_marked_with_a_subject_tag_and_x_bogosity_is_learned_as_the_original() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    let original = std::fs::read(fixture("spam.eml")).unwrap();
    let flags = ["--subject-tag", "--bogosity"];
    let marked = filter(&original, &flags);
    assert_ne!(marked, original);
    let learn = |message: &[u8], extra: &[&str]| {
        let mut cmd = Command::new(crate::util::spamsort_bin());
        isolated(&mut cmd)
            .args(["learn", "--spam", "--model"])
            .arg(&model)
            .args(extra);
        let out = with_stdin(&mut cmd, message);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(learn(&original, &[]).contains("learned 1 message(s)"));
    // The same message once its marks are set aside: learn once.
    let again = learn(&marked, &flags);
    assert!(
        again.contains("learned 0 message(s) as spam, 1 already learned"),
        "{again}"
    );
    // The tokens the model sees are the original's but for the tag's own words.
    let tokens = |message: &[u8]| {
        let mut cmd = Command::new(crate::util::spamsort_bin());
        let out = with_stdin(isolated(&mut cmd).args(["tokens", "-"]), message);
        String::from_utf8(out.stdout).unwrap()
    };
    let untagged = filter(&original, &["--bogosity"]);
    assert_eq!(
        tokens(&untagged),
        tokens(&original),
        "X-Bogosity is not tokenized"
    );
}

#[test]
fn a_subject_tag_flag_never_takes_the_next_argument_as_its_tag() {
    let t = TestDir::new();
    let model = copy_of_trained_model(&t);
    // `--subject-tag FILE`: FILE is a message to learn (a tag needs `--subject-tag=TAG`),
    // so learn reads the file, not standard input (which is empty here).
    let out = isolated(&mut Command::new(crate::util::spamsort_bin()))
        .args(["learn", "--spam", "--model"])
        .arg(&model)
        .arg("--subject-tag")
        .arg(fixture("spam.eml"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("learned 1 message(s)"), "{stderr}");
}

#[test]
fn a_header_prefix_of_x_dash_is_refused_and_a_message_keeps_its_x_status() {
    // With `X-`, spamsort's X-Status took the place of mbox readers' (answered and deleted
    // marks): filter removed it from the message.
    let message = b"From: a@example.com\nX-Status: A\nX-Stats: kept\nSubject: hi\n\nbody\n";
    let mut cmd = Command::new(crate::util::spamsort_bin());
    let out = isolated(&mut cmd)
        .args(["filter", "--model"])
        .arg(trained_model())
        .args(["--header-prefix", "X-"]);
    let out = with_stdin(out, message);
    assert_eq!(out.stdout, message, "passed through unchanged");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("starts with X-Spam"), "{stderr}");
}
