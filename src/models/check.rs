//! Input checks every model's `fit` makes, written once: hyperparameters in range, both classes
//! present, and the linear solvers' view of the data.

use super::ModelKind;
use super::math::{class_counts, sign};
use crate::error::{Error, Result};
use crate::features::{Dataset, squared_log_count_ratios};
use crate::label::Label;

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

/// Refuses a Naive Bayes model's values that no learning makes (read from a dump edited by
/// hand, a crafted file): a smoothing `alpha` that is not positive and finite, `counts` (of
/// classes, features, totals) that are negative or not finite. Its decisions would be NaN.
pub(crate) fn nb_values(
    model: ModelKind,
    alpha: f64,
    counts: &[&[f64]],
) -> std::result::Result<(), String> {
    if !(alpha > 0.0 && alpha.is_finite()) {
        return Err(format!(
            "the {model} model's alpha is {alpha}: it must be above 0"
        ));
    }
    let count = |c: &&f64| **c >= 0.0 && c.is_finite();
    if let Some(c) = counts.iter().copied().flatten().find(|c| !count(c)) {
        return Err(format!(
            "the {model} model holds a count of {c}: counts are at least 0"
        ));
    }
    Ok(())
}

/// Messages per class (ham first), refusing data that lacks either class.
pub(crate) fn require_both_classes(model: ModelKind, data: &Dataset) -> Result<[f64; 2]> {
    let counts = class_counts(data);
    if counts.contains(&0.0) {
        return Err(missing_class(model));
    }
    Ok(counts)
}

/// Refuses the rows of `data` at `rows` if they lack either class.
pub(crate) fn require_both_classes_at(
    model: ModelKind,
    data: &Dataset,
    rows: &[usize],
) -> Result<()> {
    let has = |label| rows.iter().any(|&i| data.labels[i] == label);
    if Label::ALL.into_iter().all(has) {
        Ok(())
    } else {
        Err(missing_class(model))
    }
}

fn missing_class(model: ModelKind) -> Error {
    Error::Config(format!("{model} needs spam and ham to train"))
}

/// The labels of `data` as +1 (spam) / -1 (ham), as the linear solvers take them.
pub(crate) fn signs(data: &Dataset) -> Vec<f64> {
    data.labels.iter().map(|&l| sign(l)).collect()
}

/// The squared column scales of a linear model's batch fit with `nb_scale` (see
/// [`super::LinearSvmParams::nb_scale`]) over the rows of `data` at `rows` (all if `None`):
/// `None` for an unscaled fit, refusing a smoothing that is not a positive, finite number.
pub(crate) fn nb_squared_scales(
    model: ModelKind,
    nb_scale: Option<f64>,
    data: &Dataset,
    rows: Option<&[usize]>,
    hashed: bool,
) -> Result<Option<Vec<f64>>> {
    let Some(alpha) = nb_scale else {
        return Ok(None);
    };
    require_positive(model, "the log-count ratios' smoothing", alpha)?;
    Ok(Some(squared_log_count_ratios(data, rows, hashed, alpha)))
}
