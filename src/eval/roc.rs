//! ROC curves and their SVG chart: how many spam each model catches (true positive rate)
//! for each rate of ham it misfiles (false positive rate), all models on one chart so a person
//! can see which to pick. A log-scale false-positive axis shows the region that matters for
//! mail, where misfiled ham must stay rare.

use crate::label::Label;
use plotters::prelude::*;

/// Points (false positive rate, true positive rate), from (0, 0) to (1, 1), one per distinct
/// score (ties form one diagonal step).
#[derive(Debug, Clone, PartialEq)]
pub struct RocCurve {
    /// The model's name, for the legend.
    pub name: String,
    /// The curve.
    pub points: Vec<(f64, f64)>,
}

impl RocCurve {
    /// The curve of `scores` (higher means spam) against `labels`.
    pub fn new(name: &str, scores: &[f64], labels: &[Label]) -> RocCurve {
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        let n_spam = labels.iter().filter(|&&l| l == Label::Spam).count().max(1) as f64;
        let n_ham = (labels.len() as f64 - n_spam).max(1.0);
        let mut points = vec![(0.0, 0.0)];
        let (mut tp, mut fp) = (0.0, 0.0);
        let mut i = 0;
        // Tied scores are one point; NaNs tie with each other (`==` would never let a NaN's
        // block end, and the loop would not either).
        let tied = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        while i < order.len() {
            let s = scores[order[i]];
            while i < order.len() && tied(scores[order[i]], s) {
                if labels[order[i]] == Label::Spam {
                    tp += 1.0;
                } else {
                    fp += 1.0;
                }
                i += 1;
            }
            points.push((fp / n_ham, tp / n_spam));
        }
        RocCurve {
            name: name.to_string(),
            points,
        }
    }
}

/// The curves as an SVG chart (its text: the caller writes it where it belongs). With
/// `log_fpr` the false-positive axis is logarithmic, from 0.01% (zero rates are drawn at that
/// edge).
pub fn svg(curves: &[RocCurve], log_fpr: bool) -> Result<String, String> {
    let mut text = String::new();
    draw_svg(curves, log_fpr, &mut text)?;
    Ok(text)
}

/// [`svg`], drawn into `text`.
fn draw_svg(curves: &[RocCurve], log_fpr: bool, text: &mut String) -> Result<(), String> {
    let root = SVGBackend::with_string(text, (900, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let title = "ROC: spam caught against ham misfiled";
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(56);
    if log_fpr {
        let mut chart = builder
            .build_cartesian_2d((0.01f64..100.0).log_scale(), 0.0f64..100.0)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("ham misclassified, % (log scale)")
            .y_desc("spam caught, %")
            .draw()
            .map_err(|e| e.to_string())?;
        draw_curves(&mut chart, curves, |x| (100.0 * x).max(0.01))?;
    } else {
        let mut chart = builder
            .build_cartesian_2d(0.0f64..100.0, 0.0f64..100.0)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("ham misclassified, %")
            .y_desc("spam caught, %")
            .draw()
            .map_err(|e| e.to_string())?;
        draw_curves(&mut chart, curves, |x| 100.0 * x)?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Draws each curve (x mapped to the axis' units by `map`, y in %) and the legend.
fn draw_curves<'a, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<X, plotters::coord::types::RangedCoordf64>,
    >,
    curves: &[RocCurve],
    map: impl Fn(f64) -> f64,
) -> Result<(), String> {
    // One colour per curve of the four models and fusion (the first five of the palette
    // matplotlib calls tab10); more curves reuse them in turn.
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
    ];
    for (curve, &color) in curves.iter().zip(colors.iter().cycle()) {
        chart
            .draw_series(LineSeries::new(
                curve.points.iter().map(|&(x, y)| (map(x), 100.0 * y)),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(curve.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Label::{Ham, Spam};

    #[test]
    fn curve_by_hand_with_a_tie() {
        let c = RocCurve::new("m", &[0.9, 0.5, 0.5, 0.1], &[Spam, Spam, Ham, Ham]);
        assert_eq!(
            c.points,
            vec![(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)]
        );
    }

    #[test]
    fn nan_scores_end_as_one_tied_block() {
        // Audit: a NaN's block never ended (NaN == NaN is false), so the curve never did.
        let c = RocCurve::new("m", &[f64::NAN, 0.5, f64::NAN], &[Spam, Ham, Ham]);
        assert_eq!(c.points.len(), 3, "{:?}", c.points);
        assert_eq!(c.points.last(), Some(&(1.0, 1.0)));
    }
}
