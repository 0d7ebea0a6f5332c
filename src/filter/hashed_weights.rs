//! A linear model's hashed weights (see [`crate::features::hashed`]) read for some buckets
//! alone: what the one-message scorer ([`HashedWeights`], a message's buckets) and a filter
//! restricted to a few messages (`super::sparse`, with a journal: [`SectionParts`], the
//! messages' buckets and the rest of the section) read of a model that sees the hashed byte
//! 4-grams, instead of its section's 2^17 weights whole.
//!
//! The section is still read whole and checked against its checksum, but through one small
//! buffer ([`ModelFileReader::section_pieces`]). Read whole into fresh memory, the two
//! sections of the default models (half a megabyte each) took a quarter of a `filter`
//! process's time, two thirds of it faulting the pages in (`perf record` of 300 runs); so read,
//! the static build's `filter` took 1.89-1.98 ms a message against 2.33
//! (`benches/pipe_latency.sh`).

use crate::model_file::packed::{Elements, Reals, RealsHead};
use crate::model_file::{self, ModelFileError, ModelFileReader};
use crate::models::{ModelKind, TrainedModelView};
use std::cell::Cell;

/// How many leading bytes of a section are read to find where its weights start. The
/// settings before them take a few dozen bytes (a tf-idf model's idf table more: then the
/// section is read whole instead).
const HEAD_BYTES: u64 = 4096;

/// Some of a model's hashed weights, by bucket: those of the buckets asked for that the
/// model has (`at` of any other gives `None`, as the whole array's `at` past its end would).
#[derive(Debug)]
pub(crate) struct HashedWeights {
    /// Ascending.
    buckets: Vec<u32>,
    values: Vec<f64>,
    /// The number of hashed weights the model has.
    len: usize,
    /// Where the last `at` found its bucket, plus one: reads in ascending order (a sum over a
    /// sparse vector) find each bucket there without a search.
    next: Cell<usize>,
}

/// A hashed linear model's section read for some buckets (see the module doc).
pub(crate) struct SectionParts {
    /// The section's bytes but its weights': the settings before them and the numbers after
    /// them, checked with the section, which decode whole as the model with [`RealsHead`] for
    /// its weights ([`TrainedModelSection`](crate::models::TrainedModelSection), for a
    /// restricted filter; the scorer needs the weights alone).
    pub(crate) bytes: Vec<u8>,
    /// The weights of the buckets asked for.
    pub(crate) weights: HashedWeights,
}

impl SectionParts {
    /// Section `section` of `file`, a linear model of kind `kind` that sees the hashed
    /// features, read through [`ModelFileReader::section_pieces`] for the weights of `buckets`
    /// (strictly ascending) alone; `None` if the settings before the weights do not decode
    /// from the section's first [`HEAD_BYTES`] (then read the section whole). Fails if the
    /// section is not `kind`'s, is corrupt, or changed under the reader.
    pub(crate) fn read(
        file: &ModelFileReader,
        section: usize,
        kind: ModelKind,
        buckets: &[u32],
    ) -> Result<Option<SectionParts>, ModelFileError> {
        let path = file.path();
        let mut head = Vec::new();
        let head_len = file.section_len(section).min(HEAD_BYTES);
        file.read_range(section, 0, head_len, &mut head)?;
        // The head is not checked yet: `section_pieces` checks the section, these bytes too.
        let Some((view, start)) = model_file::decode_head::<TrainedModelView<'_, RealsHead>>(&head)
        else {
            return Ok(None);
        };
        let reals = check_kind(view, kind, path)?;
        // The buckets ascend: those within the weights are a prefix (taken at its size, not
        // grown by doubling: each size a vector passes through is fresh memory to fault in).
        let kept = buckets[..buckets.partition_point(|&b| u64::from(b) < reals.len())].to_vec();
        let start = start as u64;
        // Past the weights: what follows them (a bound past the section is refused below).
        let after = start.saturating_add(reals.bytes());
        let ranges = std::iter::once(0..start)
            .chain(kept.iter().map(|&b| {
                let r = reals.range_of(u64::from(b));
                start + r.start..start + r.end
            }))
            .chain(std::iter::once(after..file.section_len(section).max(after)));
        let pieces = file.section_pieces(section, ranges)?;
        let (settings, rest) = pieces.split_at(start as usize);
        if settings != &head[..start as usize] {
            return Err(ModelFileError::invalid(path, "the file changed while read"));
        }
        let (weights, tail) = rest.split_at(kept.len() * reals.size());
        let values = weights
            .chunks_exact(reals.size())
            .map(|w| reals.element(w))
            .collect();
        let weights = HashedWeights {
            buckets: kept,
            values,
            len: usize::try_from(reals.len()).unwrap_or(usize::MAX),
            next: Cell::new(0),
        };
        let bytes = [settings, tail].concat();
        Ok(Some(SectionParts { bytes, weights }))
    }
}

impl HashedWeights {
    /// The hashed weights of model `kind` at `buckets` (strictly ascending) from section
    /// `section` of `file`. Fails if the section is not `kind`'s, is corrupt, or changed under
    /// the reader.
    pub(crate) fn read(
        file: &ModelFileReader,
        section: usize,
        kind: ModelKind,
        buckets: &[u32],
    ) -> Result<HashedWeights, ModelFileError> {
        match SectionParts::read(file, section, kind, buckets)? {
            Some(parts) => Ok(parts.weights),
            // Settings longer than HEAD_BYTES (or a corrupt section, which this reports).
            None => Self::from_whole(file, section, kind, buckets),
        }
    }

    /// [`HashedWeights::read`] from the section read whole.
    fn from_whole(
        file: &ModelFileReader,
        section: usize,
        kind: ModelKind,
        buckets: &[u32],
    ) -> Result<HashedWeights, ModelFileError> {
        let bytes = file.section_owned(section)?;
        let view: TrainedModelView<'_> = model_file::decode_prefix(&bytes, file.path())?;
        let reals: Reals<'_> = check_kind(view, kind, file.path())?;
        let (buckets, values) = buckets
            .iter()
            .filter_map(|&b| Some((b, reals.at(b as usize)?)))
            .unzip();
        Ok(HashedWeights {
            buckets,
            values,
            len: reals.len(),
            next: Cell::new(0),
        })
    }
}

/// The weights of `view`, which must be a linear model of kind `kind`.
fn check_kind<W: Copy>(
    view: TrainedModelView<'_, W>,
    kind: ModelKind,
    path: &std::path::Path,
) -> Result<W, ModelFileError> {
    match view.weights() {
        Some(w) if view.kind() == kind => Ok(w),
        _ => Err(super::layout::wrong_model(path)),
    }
}

impl Elements<f64> for HashedWeights {
    fn at(&self, i: usize) -> Option<f64> {
        let bucket = u32::try_from(i).ok()?;
        let next = self.next.get();
        let place = match self.buckets.get(next) {
            Some(&b) if b == bucket => next,
            _ => self.buckets.binary_search(&bucket).ok()?,
        };
        self.next.set(place + 1);
        self.values.get(place).copied()
    }

    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpamFilter;
    use crate::filter::layout::FIRST_MODEL_SECTION;
    use crate::filter::sparse::tests::{on_hashed, saved};
    use crate::models::TrainedModelSection;

    #[test]
    fn weights_of_some_buckets_are_those_of_the_loaded_model_streamed_or_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = saved(dir.path(), &on_hashed());
        let loaded = SpamFilter::load(&path).unwrap();
        let file = ModelFileReader::open(&path).unwrap();
        let mut seen = 0;
        for (i, m) in loaded.models.iter().enumerate() {
            let section = FIRST_MODEL_SECTION + i;
            if !m.sees_hashed() {
                let err = HashedWeights::read(&file, section, m.model.kind(), &[1]).unwrap_err();
                assert!(err.to_string().contains("model"), "{err}");
                continue;
            }
            seen += 1;
            let all = &m.model.function().weights;
            // Buckets that learned something, and others, from the first to the last.
            let mut buckets: Vec<u32> = (0..=HASHED_BUCKETS_LAST)
                .filter(|&b| all[b as usize] != 0.0)
                .collect();
            assert!(buckets.len() > 10, "{} weights learned", buckets.len());
            buckets.extend([0, 7, HASHED_BUCKETS_LAST]);
            buckets.sort_unstable();
            buckets.dedup();
            // Read streamed, not through the fallback.
            let parts = SectionParts::read(&file, section, m.model.kind(), &buckets)
                .unwrap()
                .expect("the settings fit in HEAD_BYTES");
            // The rest of the section decodes whole as the model without its weights' bytes,
            // and restricts to the buckets bit for bit as the whole section does (its bias, C or
            // step, transform and the buckets' weights).
            let rest: TrainedModelSection<'_, RealsHead> =
                model_file::decode_payload(&parts.bytes, &path).unwrap();
            assert_eq!(rest.kind(), m.model.kind());
            let bytes = file.section_owned(section).unwrap();
            let view: TrainedModelSection<'_> = model_file::decode_prefix(&bytes, &path).unwrap();
            let own = view.weights().unwrap();
            assert_eq!(
                rest.restricted(&[], 0, 0, &buckets, &parts.weights)
                    .unwrap(),
                view.restricted(&[], 0, 0, &buckets, &own).unwrap(),
                "{}",
                m.model.kind()
            );
            // A section that keeps its settings and the numbers after its weights but lost the
            // weights' bytes (their length now past its end) is refused, not misread.
            let mut sections: Vec<Vec<u8>> = (0..file.sections())
                .map(|s| file.section_owned(s).unwrap())
                .collect();
            sections[section] = parts.bytes.clone();
            let forged = dir.path().join("forged.spamsort");
            std::fs::write(&forged, model_file::encode_sections(&sections)).unwrap();
            let forged = ModelFileReader::open(&forged).unwrap();
            for b in [&buckets[..], &[]] {
                assert!(HashedWeights::read(&forged, section, m.model.kind(), b).is_err());
            }
            let streamed = parts.weights;
            let whole =
                HashedWeights::from_whole(&file, section, m.model.kind(), &buckets).unwrap();
            for w in [&streamed, &whole] {
                assert_eq!(w.len(), crate::features::hashed::HASHED_BUCKETS as usize);
                // In order, then in reverse (each found by its search).
                for &b in buckets.iter().chain(buckets.iter().rev()) {
                    assert_eq!(w.at(b as usize), Some(all[b as usize]), "bucket {b}");
                }
                // A bucket not asked for has none.
                let other = (0..).find(|b| buckets.binary_search(b).is_err()).unwrap();
                assert_eq!(w.at(other as usize), None);
            }
            // The kind must be the section's.
            let other = if m.model.kind() == ModelKind::LinearSvm {
                ModelKind::LogisticRegression
            } else {
                ModelKind::LinearSvm
            };
            assert!(HashedWeights::read(&file, section, other, &buckets).is_err());
        }
        assert_eq!(
            seen, 2,
            "the SVM and logistic regression see the hashed features"
        );
    }

    const HASHED_BUCKETS_LAST: u32 = crate::features::hashed::HASHED_BUCKETS - 1;
}
