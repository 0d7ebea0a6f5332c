//! `spamsort info`: what a model file holds.

use super::ExitStatus;
use super::args::ModelArgs;
use spamsort::{Label, SpamFilter};

/// Arguments of `spamsort info`.
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    #[command(flatten)]
    model: ModelArgs,
}

pub fn run(args: InfoArgs) -> anyhow::Result<ExitStatus> {
    let path = args.model.path(&super::config::Config::load()?)?;
    let filter = SpamFilter::load(&path)?;
    let s = filter.summary();
    let t = filter.thresholds();
    println!("model file:      {}", path.display());
    println!("format version:  {}", spamsort::model_file::FORMAT_VERSION);
    println!(
        "trained on:      {} spam, {} ham",
        s.messages[Label::Spam.index()],
        s.messages[Label::Ham.index()]
    );
    println!(
        "tokens seen:     {} ({} parser fallbacks, {} truncated)",
        s.tokens, s.fallbacks, s.truncated
    );
    println!("vocabulary:      {} tokens", filter.vocabulary().len());
    println!(
        "learned record:  {} messages (learn once; the newest {} are kept)",
        filter.learned().len(),
        spamsort::learned::LearnedMessages::CAPACITY
    );
    let kinds: Vec<&str> = filter.model_kinds().iter().map(|k| k.name()).collect();
    println!("models:          {}", kinds.join(", "));
    println!("active model:    {}", filter.active());
    println!("thresholds:      spam >= {}, ham < {}", t.spam(), t.ham());
    Ok(ExitStatus::Success)
}
