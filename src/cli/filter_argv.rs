//! `spamsort filter`'s command line read without clap, in its plain forms, for the pipe filter,
//! which mail setups start once per message.
//!
//! Why by hand: clap builds its parser for `filter` (128 allocations, the subcommand's
//! arguments made, checked and matched) before every message, all of it code run once from
//! cold caches. Timed inside `main` over 300 corpus messages, the parse took 127 µs (median) of
//! the 1.0 ms `main` took; a second parse in the same process took 11 µs. Read here, a message
//! took 0.19-0.30 ms less (static build, 400 messages, shuffled against the clap build, three
//! runs: `filter` 1.51-1.63 ms against 1.70-1.92).
//!
//! clap stays the authority: [`parse`] reads only the forms below and answers `None` for
//! anything else (`--help`, `-mFILE`, a flag given twice, a value clap would refuse or that
//! starts with `-`, ...), which clap then parses, and reports errors for, as before. A test
//! holds every answer of [`parse`] to clap's on generated command lines, and the flags read here
//! to the flags clap defines.

use super::filter::FilterArgs;
use spamsort::filter::policy::DEFAULT_SUBJECT_TAG;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// Every flag of `spamsort filter` (long names): what [`parse`] reads.
pub(super) const FLAGS: &[&str] = &[
    "model",
    "config",
    "classifier",
    "spam-threshold",
    "ham-threshold",
    "header-prefix",
    "subject-tag",
    "bogosity",
    "exit-code",
    "max-size",
];

/// The arguments of `argv` (the program's name first) if it is `filter` followed by flags in
/// these forms, each flag at most once: `--model FILE`, `-m FILE`, `--flag VALUE` and
/// `--flag=VALUE` for the other flags that take a value, `--subject-tag[=TAG]`,
/// `--bogosity[=true|false]` and `--exit-code`. Values are not empty and do not start with `-`;
/// all but the paths of `--model` and `--config` are UTF-8; `--max-size` is ASCII digits.
/// `model_env`: the value of `SPAMSORT_MODEL`, read when there is no `--model` (an empty one
/// is left to clap). `None`: let clap parse it.
pub(super) fn parse(argv: &[OsString], model_env: Option<&OsStr>) -> Option<FilterArgs> {
    let mut argv = argv.iter().map(OsString::as_os_str);
    argv.next()?;
    if argv.next()? != "filter" {
        return None;
    }
    let mut out = FilterArgs::default();
    let mut seen = [false; FLAGS.len()];
    while let Some(arg) = argv.next() {
        let arg = arg.to_str()?;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(OsStr::new(value))),
            None => (arg, None),
        };
        let name = match flag {
            "-m" if inline.is_none() => "model",
            _ => flag.strip_prefix("--")?,
        };
        let index = FLAGS.iter().position(|&f| f == name)?;
        if std::mem::replace(&mut seen[index], true) {
            return None;
        }
        // The value of a flag that takes one: after `=`, else the next argument.
        let mut value = || plain(inline.or_else(|| argv.next())?);
        match name {
            "model" => out.model.model = Some(PathBuf::from(value()?)),
            "config" => out.model.config = Some(PathBuf::from(value()?)),
            "classifier" => out.verdict.classifier = Some(value()?.to_str()?.parse().ok()?),
            "spam-threshold" => out.verdict.spam_threshold = Some(value()?.to_str()?.parse().ok()?),
            "ham-threshold" => out.verdict.ham_threshold = Some(value()?.to_str()?.parse().ok()?),
            "header-prefix" => out.headers.header_prefix = Some(value()?.to_str()?.to_owned()),
            "max-size" => out.max_size = Some(digits(value()?.to_str()?)?),
            "subject-tag" => {
                let tag = inline.map_or(Some(DEFAULT_SUBJECT_TAG), |v| plain(v)?.to_str());
                out.headers.subject_tag = Some(tag?.to_owned());
            }
            "bogosity" => {
                out.headers.bogosity = Some(match inline.map(plain) {
                    None => true,
                    Some(v) => v?.to_str()?.parse().ok()?,
                });
            }
            "exit-code" if inline.is_none() => out.exit_code = true,
            _ => return None,
        }
    }
    if out.model.model.is_none()
        && let Some(path) = model_env
    {
        // clap takes the variable's value as it is, a leading `-` included.
        if path.is_empty() {
            return None;
        }
        out.model.model = Some(PathBuf::from(path));
    }
    Some(out)
}

/// `value` if it is one clap reads plainly as a value: not empty and not starting with `-`.
fn plain(value: &OsStr) -> Option<&OsStr> {
    let first = value.as_encoded_bytes().first()?;
    (*first != b'-').then_some(value)
}

/// `s` as a number if it is ASCII digits only: stricter than `u64::from_str` (no `+`), the
/// rest is left to clap.
fn digits(s: &str) -> Option<u64> {
    s.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| s.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::{CommandFactory, Parser};
    use proptest::prelude::*;
    use spamsort::models::ModelKind;

    fn argv(args: &[&str]) -> Vec<OsString> {
        ["spamsort", "filter"]
            .iter()
            .chain(args)
            .map(OsString::from)
            .collect()
    }

    /// What clap makes of `argv`: the filter's arguments, or `None` for an error or another
    /// command.
    fn clap_reads(argv: &[OsString]) -> Option<FilterArgs> {
        match Cli::try_parse_from(argv).ok()?.command {
            Command::Filter(args) => Some(args),
            _ => None,
        }
    }

    fn env() -> Option<OsString> {
        std::env::var_os(super::super::args::MODEL_ENV)
    }

    #[test]
    fn reads_every_flag_clap_defines_for_filter() {
        let cli = Cli::command();
        let filter = cli.find_subcommand("filter").expect("filter subcommand");
        // Deferred (see `Command`): its arguments are built on demand.
        let mut filter = filter.clone();
        filter.build();
        let mut defined: Vec<_> = filter
            .get_arguments()
            .filter_map(|a| a.get_long())
            .filter(|&l| l != "help" && l != "version")
            .collect();
        let mut read = FLAGS.to_vec();
        defined.sort_unstable();
        read.sort_unstable();
        assert_eq!(defined, read);
    }

    #[test]
    fn plain_command_lines_are_read_as_clap_reads_them() {
        let env = env();
        for args in [
            &[][..],
            &["--model", "/var/lib/spamsort/model.spamsort"],
            &["-m", "m.spamsort", "--exit-code"],
            &[
                "--model=m",
                "--classifier",
                "fusion",
                "--spam-threshold",
                "0.99",
            ],
            &[
                "--ham-threshold=0.4",
                "--subject-tag",
                "--bogosity",
                "--max-size",
                "1000000",
            ],
            &[
                "--subject-tag=[SPAM]",
                "--bogosity=false",
                "--header-prefix",
                "X-Spamsort-",
            ],
            &[
                "--config",
                "/etc/spamsort/other.toml",
                "--classifier=linear-svm",
            ],
        ] {
            let argv = argv(args);
            let fast = parse(&argv, env.as_deref());
            // Read whatever the environment (a developer's may name a model, or an empty one).
            if env.is_none() {
                assert!(fast.is_some(), "not read: {args:?}");
            }
            if fast.is_some() {
                assert_eq!(
                    format!("{fast:?}"),
                    format!("{:?}", clap_reads(&argv)),
                    "{args:?}"
                );
            }
        }
    }

    #[test]
    fn the_environment_names_the_model_unless_a_flag_does() {
        let read = |args: &[&str], env: &str| {
            parse(&argv(args), Some(OsStr::new(env))).and_then(|a| a.model.model)
        };
        assert_eq!(read(&[], "/from/env"), Some(PathBuf::from("/from/env")));
        assert_eq!(read(&[], "-x"), Some(PathBuf::from("-x")));
        assert_eq!(
            read(&["-m", "/flag"], "/from/env"),
            Some(PathBuf::from("/flag"))
        );
        assert!(parse(&argv(&[]), Some(OsStr::new(""))).is_none());
    }

    #[test]
    fn anything_else_is_left_to_clap() {
        for args in [
            &["--help"][..],
            &["-h"],
            &["--version"],
            &["-mfile"],
            &["-m=file"],
            &["--model"],
            &["--model", "a", "--model", "b"],
            &["--model", "-"],
            &["--model="],
            &["--exit-code=true"],
            &["--subject-tag", "tag"],
            &["--classifier", "Fusion"],
            &["--max-size", "+5"],
            &["--bogosity=yes"],
            &["--", "x"],
            &["stray"],
        ] {
            assert!(parse(&argv(args), None).is_none(), "read: {args:?}");
        }
        let other = [OsString::from("spamsort"), OsString::from("learn")];
        assert!(parse(&other, None).is_none());
    }

    /// One flag of [`FLAGS`] as command-line words, in one of its forms, its value generated:
    /// mostly (nine in ten) one clap takes, else one it refuses or reads otherwise.
    fn flag_words(flag: &'static str) -> BoxedStrategy<Vec<String>> {
        let mostly = |good: BoxedStrategy<String>, bad: &'static str| {
            prop_oneof![9 => good, 1 => bad.boxed()].boxed()
        };
        let names = ModelKind::WITH_FUSION.map(|k| k.name().to_owned()).to_vec();
        let value = match flag {
            "model" | "config" => Some(mostly(
                "[a-zA-Z0-9/._=~ ][a-zA-Z0-9/._=~ -]{0,20}".boxed(),
                "-.*|",
            )),
            "classifier" => Some(mostly(
                proptest::sample::select(names).boxed(),
                "svm|Fusion",
            )),
            "spam-threshold" | "ham-threshold" => Some(mostly(
                "[+]?[0-9]{0,25}(\\.[0-9]{0,5})?([eE][+-]?[0-9]{1,4})?|inf|NaN".boxed(),
                "-1|x|",
            )),
            "header-prefix" => Some(mostly("[A-Za-z0-9][A-Za-z0-9-]{0,12}".boxed(), "|-x")),
            "max-size" => Some(mostly("[0-9]{1,25}".boxed(), "\\+5|1k|")),
            _ => None,
        };
        let long = format!("--{flag}");
        if let Some(value) = value {
            return (value, 0..3)
                .prop_map(move |(v, form)| match form {
                    0 => vec![long.clone(), v],
                    1 => vec![format!("{long}={v}")],
                    _ if flag == "model" => vec!["-m".to_owned(), v],
                    _ => vec![long.clone(), v],
                })
                .boxed();
        }
        // The flags whose value is optional and only ever after `=`, and `--exit-code`.
        let inline = match flag {
            "subject-tag" => mostly("[A-Za-z*\\[\\] ][A-Za-z*\\[\\] -]{0,10}".boxed(), "-x|"),
            "bogosity" => mostly("true|false".boxed(), "yes|1"),
            _ => mostly(Just(String::new()).boxed(), "1"),
        };
        (proptest::option::weighted(0.5, inline))
            .prop_map(move |v| match v {
                Some(v) if !v.is_empty() || flag != "exit-code" => vec![format!("{long}={v}")],
                _ => vec![long.clone()],
            })
            .boxed()
    }

    /// Command lines of the forms [`parse`] reads: some of the flags, each once, in any
    /// order, each in one of its forms.
    fn plain_lines() -> impl Strategy<Value = Vec<String>> {
        proptest::sample::subsequence(FLAGS.to_vec(), 0..=FLAGS.len())
            .prop_shuffle()
            .prop_flat_map(|flags| flags.into_iter().map(flag_words).collect::<Vec<_>>())
            .prop_map(|words| words.concat())
    }

    /// Pieces of command lines: flags with values well and badly formed, and strays.
    const PIECES: &[&[&str]] = &[
        &["--model", "m.spamsort"],
        &["-m", "/var/m"],
        &["--model=x=y"],
        &["-m=y"],
        &["--model"],
        &["--config", "c.toml"],
        &["--config="],
        &["--classifier", "fusion"],
        &["--classifier=logistic-regression"],
        &["--classifier", "svm"],
        &["--spam-threshold", "0.9"],
        &["--spam-threshold", "nan"],
        &["--spam-threshold", "-1"],
        &["--ham-threshold", ".5"],
        &["--header-prefix="],
        &["--subject-tag"],
        &["--subject-tag="],
        &["--subject-tag=-x"],
        &["--bogosity"],
        &["--bogosity=1"],
        &["--exit-code"],
        &["--exit-code="],
        &["--max-size", "99999999999999999999"],
        &["--max-size=7"],
        &["--"],
        &["-h"],
        &["--help"],
        &["-V"],
        &["--version"],
        &[""],
        &["-"],
        &["pos"],
        &["--bogus"],
    ];

    /// `args` after `filter`: whenever [`parse`] reads it, clap reads the same.
    fn read_as_clap_reads_it(args: &[String]) -> Result<bool, TestCaseError> {
        let argv: Vec<OsString> = ["spamsort", "filter"]
            .iter()
            .map(OsString::from)
            .chain(args.iter().map(OsString::from))
            .collect();
        let Some(fast) = parse(&argv, env().as_deref()) else {
            return Ok(false);
        };
        // Compared as text: a NaN threshold is not equal to itself.
        let clap = format!("{:?}", clap_reads(&argv));
        prop_assert_eq!(format!("{:?}", Some(fast)), clap, "{:?}", args);
        Ok(true)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn every_plain_command_line_read_is_read_as_clap_reads_it(args in plain_lines()) {
            read_as_clap_reads_it(&args)?;
        }

        #[test]
        fn every_command_line_read_is_read_as_clap_reads_it(
            picks in proptest::collection::vec(0..PIECES.len(), 0..6)
        ) {
            let args: Vec<String> =
                picks.iter().flat_map(|&i| PIECES[i]).map(|&w| w.to_owned()).collect();
            read_as_clap_reads_it(&args)?;
        }
    }

    #[test]
    fn most_generated_plain_command_lines_are_read() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut read, mut long_read) = (0, 0);
        for _ in 0..1000 {
            let args = plain_lines().new_tree(&mut runner).unwrap().current();
            if read_as_clap_reads_it(&args).unwrap() {
                read += 1;
                long_read += usize::from(args.len() >= 8);
            }
        }
        // Half or more read (606 with this seed), many of them with four flags or more (209):
        // the property is tested on long command lines, not mostly on the empty one.
        assert!(
            read >= 500 && long_read >= 150,
            "{read} read, {long_read} with 8+ words"
        );
    }
}
