//! Model file container: round trip, and the clear errors for a truncated file, a flipped
//! byte, a random file and another format version.

use crate::util::TestDir;
use proptest::prelude::*;
use spamsort::model_file::{self, ModelFileError};
use spamsort::{Label, TokenizerConfig, Vocabulary, VocabularyParams};
use std::path::Path;

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Payload {
    tokenizer: TokenizerConfig,
    vocabulary: Vocabulary,
}

fn payload() -> Payload {
    let a: spamsort::Tokens = ["cheap", "meds", "now", "κόσμε"].into_iter().collect();
    let b: spamsort::Tokens = ["meeting", "now", "notes"].into_iter().collect();
    let vocabulary = VocabularyParams {
        min_df: 1,
        max_features: None,
    }
    .fit([(&a, Label::Spam), (&b, Label::Ham)]);
    Payload {
        tokenizer: TokenizerConfig::default(),
        vocabulary,
    }
}

#[test]
fn round_trip_through_disk() {
    let t = TestDir::new();
    let path = t.path().join("model.bin");
    model_file::save(&payload(), &model_file::lock_for_update(&path).unwrap()).unwrap();
    let back: Payload = model_file::load(&path).unwrap();
    assert_eq!(back, payload());
    assert_eq!(
        back.vocabulary.id("κόσμε"),
        payload().vocabulary.id("κόσμε")
    );
    let mut left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["model.bin", "model.lock"], "no temporary file left");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the model describes private mail");
}

#[test]
fn truncated_file_is_named_and_explained() {
    let bytes = model_file::encode(&payload());
    for cut in [4, 20, bytes.len() - 1] {
        let err = model_file::decode::<Payload>(&bytes[..cut], "m.bin".as_ref()).unwrap_err();
        match (cut, &err) {
            (4, ModelFileError::NotAModel { .. }) => {}
            (_, ModelFileError::Truncated { .. }) if cut > 4 => {}
            _ => panic!("cut at {cut}: unexpected {err:?}"),
        }
        assert!(err.to_string().contains("m.bin"), "{err}");
    }
}

#[test]
fn every_flipped_payload_byte_is_caught() {
    let bytes = model_file::encode(&payload());
    for i in model_file::header_len(1)..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x40;
        let err = model_file::decode::<Payload>(&bad, "m.bin".as_ref()).unwrap_err();
        assert!(
            matches!(err, ModelFileError::Corrupt { .. }),
            "byte {i}: {err:?}"
        );
    }
}

#[test]
fn foreign_and_other_version_files() {
    let t = TestDir::new();
    let path = t.write("notes.txt", b"just some text, not a model at all");
    let err = model_file::load::<Payload>(&path).unwrap_err();
    assert!(matches!(err, ModelFileError::NotAModel { .. }));
    assert!(err.to_string().contains("notes.txt"));
    let mut newer = model_file::encode(&payload());
    newer[8] = 99;
    let err = model_file::decode::<Payload>(&newer, "m".as_ref()).unwrap_err();
    assert!(err.to_string().contains("version 99"), "{err}");
    let missing = model_file::load::<Payload>(&t.path().join("absent.bin")).unwrap_err();
    assert!(matches!(missing, ModelFileError::Missing { .. }));
}

#[test]
fn valid_checksum_but_bad_vocabulary_is_rejected_by_validation() {
    // A file whose checksum is right but whose vocabulary breaks its invariants (as a buggy or
    // hostile writer could produce) must be caught by validate(), not trusted.
    let mut p = payload();
    p.vocabulary = vocabulary_with_invalid_utf8();
    assert!(p.vocabulary.validate().is_err());
}

fn vocabulary_with_invalid_utf8() -> Vocabulary {
    // Encode a vocabulary, break a token's UTF-8, and lay the tampered section out with a
    // correct checksum.
    let a: spamsort::Tokens = ["ab", "cd"].into_iter().collect();
    let v = VocabularyParams {
        min_df: 1,
        max_features: None,
    }
    .fit([(&a, Label::Ham)]);
    let mut section = model_file::encode_section(&v);
    let pos = section.windows(4).position(|w| w == b"abcd").unwrap();
    section[pos..pos + 4].copy_from_slice(b"ab\xffd");
    model_file::decode(&model_file::encode_sections(&[section]), "m".as_ref()).unwrap()
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), magic in any::<bool>()) {
        let mut bytes = bytes;
        if magic && bytes.len() >= 44 {
            bytes[..8].copy_from_slice(b"SPAMSORT");
            bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
            bytes[12..16].copy_from_slice(&1u32.to_le_bytes());
        }
        prop_assert!(model_file::decode::<Payload>(&bytes, "r".as_ref()).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any flipped byte or cut of a real model file is caught by the full load; the pipe
    /// filter's scorer either refuses it too or (the damage lying in a section it does not
    /// read) answers as from the intact file.
    #[test]
    fn flipped_or_truncated_real_model_is_refused(at in any::<prop::sample::Index>(), flip in 1u8.., cut in any::<bool>()) {
        let good = std::fs::read(crate::util::trained_model()).unwrap();
        let at = at.index(good.len());
        let mut bad = good.clone();
        if cut {
            bad.truncate(at);
        } else {
            bad[at] ^= flip;
        }
        let t = TestDir::new();
        let path = t.write("model.spamsort", &bad);
        prop_assert!(spamsort::SpamFilter::load(&path).is_err());
        let message = b"Subject: cheap meds now\n\nmeeting notes\n";
        let expected = spamsort::filter::scorer::ScorerFile::open(crate::util::trained_model(), None)
            .unwrap()
            .scorer()
            .unwrap()
            .classify(message)
            .unwrap();
        if let Ok(file) = spamsort::filter::scorer::ScorerFile::open(&path, None)
            && let Ok(scorer) = file.scorer()
            && let Ok(got) = scorer.classify(message)
        {
            prop_assert_eq!(got, expected);
        }
    }
}

/// A model learned from one message, then `change`d (its owner, group or mode), then saved
/// whole by a second learn (`--if-wrong` loads and saves the whole file; a plain learn appends
/// to it in place): the file's metadata before that save and after it.
fn saved_whole_after(change: impl FnOnce(&Path)) -> (std::fs::Metadata, std::fs::Metadata) {
    let t = TestDir::new();
    let model = t.path().join("m.spamsort");
    let learn = |flags: &[&str], body: &[u8]| {
        let m = t.write("msg.eml", body);
        crate::util::spamsort()
            .arg("learn")
            .args(flags)
            .arg("--model")
            .arg(&model)
            .arg(&m)
            .assert()
            .success();
    };
    learn(
        &["--spam"],
        &crate::util::message("cheap meds", "buy cheap meds now"),
    );
    change(&model);
    let before = std::fs::metadata(&model).unwrap();
    learn(
        &["--ham", "--if-wrong"],
        &crate::util::message("lunch", "see you at noon"),
    );
    let after = std::fs::metadata(&model).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_ne!(after.ino(), before.ino(), "the save replaced the file");
    (before, after)
}

#[test]
fn a_save_keeps_the_mode_and_group_of_the_file_it_replaces() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // Root may give any group; anyone else their own.
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let (before, after) = saved_whole_after(|model| {
        // A new file is its owner's alone.
        assert_eq!(std::fs::metadata(model).unwrap().mode() & 0o777, 0o600);
        let group = root.then_some(54_321);
        std::os::unix::fs::chown(model, None, group).unwrap();
        std::fs::set_permissions(model, std::fs::Permissions::from_mode(0o640)).unwrap();
    });
    assert_eq!(after.mode() & 0o777, 0o640);
    assert_eq!(after.gid(), before.gid());
}

#[test]
fn a_save_by_root_leaves_a_users_model_the_users() {
    // Regression: root pruning or learning into a user's model (mode 0600) made the new file
    // root's, which its owner could then no longer read.
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        return; // Only root can give a file to another user: nothing to check.
    }
    let (_, after) = saved_whole_after(|model| {
        std::os::unix::fs::chown(model, Some(65_534), Some(65_534)).unwrap();
    });
    assert_eq!((after.uid(), after.gid()), (65_534, 65_534));
    assert_eq!(after.mode() & 0o777, 0o600);
}
