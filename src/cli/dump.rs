//! `spamsort dump [OUTPUT]`: the model file's whole learned state as text (see
//! [`spamsort::filter::dump`]), to a file or stdout, for backup or inspection.

use super::ExitStatus;
use super::args::ModelArgs;
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
}

pub fn run(args: DumpArgs) -> anyhow::Result<ExitStatus> {
    let path = args.model.path(&args.model.config()?)?;
    let mut filter = SpamFilter::load(&path)?;
    // Bytes after the journal's records that no interrupted append leaves: the load, as every
    // reader, stopped before them, so the dump holds the state before them (the way to rebuild
    // the file) and lacks any record they hide. Said, not refused; a check that fails is not.
    if let Ok(Some(damage)) = spamsort::filter::journal::damaged_tail(&path) {
        eprintln!(
            "spamsort: warning: {}: the dump holds what was learned before the journal's \
             damage, and nothing after it: {damage}",
            path.display()
        );
    }
    match args.output.filter(|o| o.as_os_str() != "-") {
        Some(out) => {
            let writing = || format!("writing {}", out.display());
            // Written beside the target and renamed, so a failed dump never leaves a partial
            // backup under the name of a good one. The rename replaces what it lands on: so a
            // link is followed to the file it leads to (the link stays), and anything but a
            // regular file there (a FIFO, a device such as /dev/stdout) is refused, untouched.
            let target = spamsort::model_file::followed(&out).with_context(writing)?;
            spamsort::corpus::regular_file::refuse_irregular_at(&target).with_context(writing)?;
            let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
            let mut tmp = tempfile::NamedTempFile::new_in(dir.unwrap_or(".".as_ref()))
                .with_context(|| format!("creating a file beside {}", target.display()))?;
            let mut w = std::io::BufWriter::new(tmp.as_file_mut());
            spamsort::filter::dump::write_dump(&mut filter, &mut w).with_context(writing)?;
            drop(w);
            tmp.as_file().sync_all().with_context(writing)?;
            // The error alone: a PersistError's message repeats its cause.
            tmp.persist(&target)
                .map_err(|e| e.error)
                .with_context(writing)?;
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            spamsort::filter::dump::write_dump(&mut filter, &mut w).context("writing the dump")?;
            w.flush().context("writing the dump")?;
        }
    }
    Ok(ExitStatus::Success)
}
