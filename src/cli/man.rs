//! `spamsort man`: the man page, generated from the clap definitions, as roff on stdout. One
//! page, spamsort(1), holds every subcommand: a section per command with its synopsis, its
//! description and its options, so that no spamsort-COMMAND(1) page is needed.

use super::{Cli, ExitStatus};
use clap::CommandFactory;
use clap_mangen::Man;
use std::io::Write;

/// Prints spamsort(1) in roff (`spamsort man > spamsort.1`, or `spamsort man | man -l -`).
pub fn run() -> anyhow::Result<ExitStatus> {
    // Rendered into memory first, like the completions: a closed pipe must end the command
    // successfully, not halfway through a write.
    let page = render()?;
    super::output::stdout().write_all(&page)?;
    Ok(ExitStatus::Success)
}

/// The whole page: the top-level sections, then `.SH "SPAMSORT COMMAND"` per subcommand.
fn render() -> std::io::Result<Vec<u8>> {
    let mut cmd = Cli::command();
    // Built, so that each subcommand's synopsis reads `spamsort train ...`, not `train ...`.
    cmd.build();
    let man = Man::new(cmd.clone()).title("SPAMSORT");
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        writeln!(page, ".SH \"SPAMSORT {}\"", sub.get_name().to_uppercase())?;
        let sub_man = Man::new(sub.clone());
        let mut part = Vec::new();
        sub_man.render_synopsis_section(&mut part)?;
        sub_man.render_description_section(&mut part)?;
        sub_man.render_options_section(&mut part)?;
        // The command's own sections become subsections of its section.
        for line in part.split_inclusive(|&b| b == b'\n') {
            match line.strip_prefix(b".SH ") {
                Some(rest) => page.extend_from_slice(&[b".SS ", rest].concat()),
                None => page.extend_from_slice(line),
            }
        }
    }
    man.render_version_section(&mut page)?;
    Ok(page)
}
