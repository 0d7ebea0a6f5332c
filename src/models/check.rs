//! Input checks every model's `fit` makes, written once: hyperparameters in range, both classes
//! present, and the linear solvers' view of the data.

use super::ModelKind;
use super::math::{class_counts, sign};
use crate::error::{Error, Result};
use crate::features::{Dataset, FeatureTransform, SparseVector};

/// Refuses a hyperparameter that is not a positive, finite number.
pub(crate) fn require_positive(model: ModelKind, name: &str, value: f64) -> Result<()> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{model} needs {name} > 0, got {value}"
        )))
    }
}

/// Messages per class (ham first), refusing data that lacks either class.
pub(crate) fn require_both_classes(model: ModelKind, data: &Dataset) -> Result<[f64; 2]> {
    let counts = class_counts(data);
    if counts.contains(&0.0) {
        return Err(Error::Config(format!(
            "{model} needs spam and ham to train"
        )));
    }
    Ok(counts)
}

/// The transformed rows and their labels as +1 (spam) / -1 (ham).
pub(crate) fn signed_rows(
    transform: &FeatureTransform,
    data: &Dataset,
) -> (Vec<SparseVector>, Vec<f64>) {
    let xs = data.rows.iter().map(|r| transform.apply(r)).collect();
    let ys = data.labels.iter().map(|&l| sign(l)).collect();
    (xs, ys)
}
