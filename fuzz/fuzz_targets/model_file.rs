//! Every reader of a model file on arbitrary file contents: the full load (`info`, `learn`,
//! `serve`, `daemon`), the pipe filter's scorer for the active and for each named model, and
//! classifying and explaining with what loaded. Never a panic, never an allocation beyond a
//! small multiple of the file (run with `-malloc_limit_mb`); where both the full load and a
//! scorer accept the file, they must agree.
//!
//! Input: first byte even, the rest is the file as it is; odd, the rest is split into
//! sections at every `SECTION_BREAK` and laid out with a valid header and checksums, so the
//! fuzzer reaches the decoders instead of stopping at a checksum. Seeds: a trained model file
//! prefixed with `\0`, and its sections joined by `SECTION_BREAK` prefixed with `\x01`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spamsort::SpamFilter;
use spamsort::filter::scorer::ScorerFile;
use spamsort::model_file;
use spamsort::models::ModelKind;
use std::path::PathBuf;
use std::sync::OnceLock;

const SECTION_BREAK: &[u8] = b"\xa5\x5a\xa5\x5a";
const MESSAGE: &[u8] = b"From: a@example.org\nSubject: cheap meds now\n\nmeeting notes now\n";

/// One file per fuzzing process, rewritten for every input.
fn model_path() -> &'static PathBuf {
    static PATH: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = PATH.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("model.spamsort");
        (dir, path)
    });
    path
}

fn file_bytes(data: &[u8]) -> Vec<u8> {
    match data.split_first() {
        Some((mode, rest)) if mode % 2 == 1 => {
            let mut sections = Vec::new();
            let mut rest = rest;
            while sections.len() < model_file::MAX_SECTIONS - 1 {
                match rest
                    .windows(SECTION_BREAK.len())
                    .position(|w| w == SECTION_BREAK)
                {
                    Some(i) => {
                        sections.push(rest[..i].to_vec());
                        rest = &rest[i + SECTION_BREAK.len()..];
                    }
                    None => break,
                }
            }
            sections.push(rest.to_vec());
            model_file::encode_sections(&sections)
        }
        Some((_, rest)) => rest.to_vec(),
        None => Vec::new(),
    }
}

fuzz_target!(|data: &[u8]| {
    let path = model_path();
    std::fs::write(path, file_bytes(data)).expect("write the model file");
    let full = SpamFilter::load(path).ok();
    if let Some(filter) = &full {
        let _ = filter.classify(MESSAGE);
        let _ = filter.explain(MESSAGE, None);
    }
    for kind in [None].into_iter().chain(ModelKind::ALL.map(Some)) {
        let Ok(file) = ScorerFile::open(path, kind) else {
            continue;
        };
        let Ok(scorer) = file.scorer() else {
            continue;
        };
        // The scorer reads score table blocks as the message needs them, so it may still
        // fail on a corrupt block; the full load checked every section.
        let classification = scorer.classify(MESSAGE);
        let explanation = scorer.explain(MESSAGE);
        if let Some(filter) = &full {
            let (Ok(classification), Ok(explanation)) = (classification, explanation) else {
                panic!("the full load accepts the file, the scorer fails on a message");
            };
            // Debug output, so that NaN equals NaN.
            let kind = kind.unwrap_or(filter.active());
            assert_eq!(
                Some(format!("{classification:?}")),
                filter
                    .classify_with(MESSAGE, kind)
                    .map(|c| format!("{c:?}")),
                "the scorer and the full load disagree"
            );
            assert_eq!(
                Some(format!("{explanation:?}")),
                filter
                    .explain(MESSAGE, Some(kind))
                    .map(|e| format!("{e:?}")),
            );
        }
    }
});
