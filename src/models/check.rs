//! Input checks every model's `fit` makes, written once: hyperparameters in range, both classes
//! present, and the linear solvers' view of the data.

use super::ModelKind;
use super::math::{class_counts, sign};
use crate::error::{Error, Result};
use crate::features::{Dataset, squared_log_count_ratios};
use crate::label::Label;

/// The largest magnitude a stored weight, constant term, idf value, count or setting may have
/// (a model file or dump read back). Far above what any fit or learning makes, and far enough
/// below `f64::MAX` that no decision, a sum of a message's inputs times such values, can
/// overflow: two infinities of opposite sign would make it NaN.
pub(crate) const MAX_MAGNITUDE: f64 = 1e100;

/// The largest online step size: at most this much moves a weight per learned message, so
/// learning from a stored model never grows a weight past [`MAX_MAGNITUDE`] (the defaults are
/// 0.004 to 2).
pub(crate) const MAX_RATE: f64 = 1e3;

/// True for a stored value that is finite and at most [`MAX_MAGNITUDE`] in magnitude.
pub(crate) fn within_magnitude(value: f64) -> bool {
    value.abs() <= MAX_MAGNITUDE
}

/// Refuses an online step size that is not positive, or is above [`MAX_RATE`].
pub(crate) fn require_rate(model: ModelKind, name: &str, value: f64) -> Result<()> {
    if value > 0.0 && value <= MAX_RATE {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{model} needs 0 < {name} <= {MAX_RATE}, got {value}"
        )))
    }
}

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
/// hand, a crafted file): a smoothing `alpha` that is not a normal number above 0 and at most
/// [`MAX_MAGNITUDE`] (so `alpha` times the most tokens a vocabulary holds is finite), message
/// counts per class (`classes`) that are not whole numbers, `counts` (of classes, features,
/// totals) that are negative or past [`MAX_MAGNITUDE`]. Its decisions would be NaN or
/// infinite (a class count of 1e-308 made every message spam at score 30).
pub(crate) fn nb_values(
    model: ModelKind,
    alpha: f64,
    classes: &[f64; 2],
    counts: &[&[f64]],
) -> std::result::Result<(), String> {
    if !(alpha.is_normal() && alpha > 0.0 && alpha <= MAX_MAGNITUDE) {
        return Err(format!(
            "the {model} model's alpha is {alpha}: it must be above 0 and at most \
             {MAX_MAGNITUDE}"
        ));
    }
    let count = |c: &&f64| (0.0..=MAX_MAGNITUDE).contains(*c);
    let all = std::iter::once(&classes[..]).chain(counts.iter().copied());
    if let Some(c) = all.flatten().find(|c| !count(c)) {
        return Err(format!(
            "the {model} model holds a count of {c}: counts are at least 0 and at most \
             {MAX_MAGNITUDE}"
        ));
    }
    if let Some(c) = classes.iter().find(|c| c.fract() != 0.0) {
        return Err(format!(
            "the {model} model counts {c} messages in a class: a count of messages is whole"
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
