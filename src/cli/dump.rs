//! `spamsort dump [OUTPUT]`: the model file's whole learned state as text (see
//! [`spamsort::filter::dump`]), to a file or stdout, for backup or inspection.

use super::ExitStatus;
use super::args::ModelArgs;
use super::output::{Kind, Readers, Replace};
use anyhow::Context;
use spamsort::SpamFilter;
use std::io::Write;
use std::path::PathBuf;

// Arguments of `spamsort dump` (not a doc comment: see `Command`).
#[derive(Debug, clap::Args)]
pub struct DumpArgs {
    /// Where to write the dump; `-` or nothing: stdout.
    #[arg(value_name = "OUTPUT|-")]
    output: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// Replace OUTPUT even if it is no dump (not empty, and not starting as one: a mailbox?)
    #[arg(long)]
    force: bool,
}

pub fn run(args: DumpArgs) -> anyhow::Result<ExitStatus> {
    let path = args.model.path(&args.model.config()?)?;
    let output = args.output.filter(|o| o.as_os_str() != "-");
    if let Some(out) = &output {
        // The dump would be renamed over the model file (or a link to it), whatever else
        // was writing it, and the file left holding text no command but `restore` reads.
        anyhow::ensure!(
            !same_file(out, &path),
            "{} is the model file: give the dump a file of its own",
            out.display()
        );
    }
    let replace = Replace::new(Kind::Dump, args.force);
    if let Some(out) = &output {
        // Before the model is read: a mailbox named by mistake is said at once.
        super::output::refuse_other_kind(out, replace, &out.display().to_string())?;
    }
    // Bytes after the journal's records that no interrupted append leaves: the load, as every
    // reader, stops before them, so the dump holds the state before them (the way to rebuild
    // the file) and lacks any record they hide. Said by the load (a warning on stderr), not
    // refused.
    let mut filter = SpamFilter::load(&path)?;
    match output {
        Some(out) => super::output::write_whole(&out, replace, Readers::Owner, |mut w| {
            Ok(spamsort::filter::dump::write_dump(&mut filter, &mut w)?)
        })?,
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            spamsort::filter::dump::write_dump(&mut filter, &mut w).context("writing the dump")?;
            w.flush().context("writing the dump")?;
        }
    }
    Ok(ExitStatus::Success)
}

/// Whether `a` and `b` (symbolic links followed) are one existing file.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let id = |p| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    id(a).is_some_and(|a| Some(a) == id(b))
}
