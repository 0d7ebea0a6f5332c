//! Shared by the criterion benches: the corpus they run on (with the system allocator, as the
//! `spamsort` binary uses); `served.rs` runs the server for the spamd benches.

#[allow(dead_code)] // only the spamd benches use it
pub mod served;

use spamsort::LabeledCorpus;
use std::path::Path;

/// The SpamAssassin corpus when it has been fetched (`corpus/fetch-spamassassin.sh`), else the
/// committed sample; with its name.
pub fn corpus() -> (String, LabeledCorpus) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let full = root.join("spamassassin");
    let dir = if full.join("ham").is_dir() {
        full
    } else {
        root.join("sample")
    };
    let corpus = LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
        eprintln!("{e}")
    })
    .expect("corpus readable");
    (
        dir.file_name().unwrap().to_string_lossy().into_owned(),
        corpus,
    )
}
