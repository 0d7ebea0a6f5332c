//! Linear SVM: min_w 1/2 |w|^2 + C sum_i loss(y_i (w . x_i + b)), hinge loss (L1-loss SVM) or
//! squared hinge, solved in the dual by coordinate descent (Hsieh, Chang, Lin, Keerthi and
//! Sundararajan, ICML 2008; the LIBLINEAR method). The bias is an extra constant feature of
//! value 1 and is regularized like the weights, as LIBLINEAR and scikit-learn's LinearSVC do.
//! Coordinates are visited in a seeded random order, so training is deterministic; it stops
//! when the projected gradient's spread falls below `tol` or after `max_iter` passes. By
//! default it solves the problem with each input column scaled by its Naive Bayes log-count
//! ratio (NBSVM, see [`LinearSvmParams::nb_scale`]), its weights kept with the scale folded in.

use super::ModelKind;
use super::check::{nb_squared_scales, require_both_classes, require_positive, signs};
use super::linear::LinearFunction;
use super::math::sign;
use super::passes::online_passes;
use crate::error::Result;
use crate::features::{Dataset, FeatureConfig, FeatureId, FeatureRemap, InputRows, SparseVector};
use crate::model_file::packed::stored_f32;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

/// The loss on the margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SvmLoss {
    /// max(0, 1 - m): the textbook SVM.
    Hinge,
    /// max(0, 1 - m)^2: smooth, often as accurate.
    SquaredHinge,
}

/// How the SVM's batch fit is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SvmSolver {
    /// The exact optimum by dual coordinate descent (the default).
    #[default]
    DualCoordinateDescent,
    /// Passes of the online passive-aggressive update ([`LinearSvm::learn`], its steps capped
    /// by C) over the training messages from all weights 0 (see [`super::passes`]): `loss`,
    /// `tol` and `max_iter` unused. Cheap on binary hashed byte 4-grams, where the exact
    /// solver over 2^17 more columns takes several times as long.
    OnlinePasses {
        /// Passes over the data.
        passes: usize,
    },
}

/// Hyperparameters of [`LinearSvm`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinearSvmParams {
    /// Inverse regularization strength (default 3: (1-AUC)% 0.018, against 0.033 at C = 1).
    pub c: f64,
    /// Hinge or squared hinge.
    pub loss: SvmLoss,
    /// Stop when max - min projected gradient is below this (default 0.1, LIBLINEAR's; a
    /// tighter 1e-3 took 6.7 times as long for the same (1-AUC)%, 0.0163, in the sweep's
    /// 5-fold seed-7 cross-validation).
    pub tol: f64,
    /// Most passes of the exact solver, each over the coordinates still active (shrinking
    /// leaves some out, as LIBLINEAR counts them). Default 10: stopping early regularizes. In
    /// 5-fold cross-validation on the SpamAssassin corpus (`examples/sweep.rs`, seeds 7 and 3,
    /// the default features, 2^18 buckets) (1-AUC)% 0.0095 and 0.0105 against 0.0098 and
    /// 0.0104 when the tolerance alone stops it, in 0.65 and 0.58 of the fit time; 5 passes
    /// 0.0099 and 0.0112, 3 passes 0.0170 and 0.0151.
    pub max_iter: usize,
    /// Seed of the coordinate order.
    pub seed: u64,
    /// Input features (default: binary words and hashed byte 4-grams of the first
    /// [`BATCH_BYTE_NGRAMS`](super::BATCH_BYTE_NGRAMS) bytes, L2-normalized: in 5-fold
    /// cross-validation on the SpamAssassin corpus (`examples/sweep.rs`, seeds 7 and 3, 2^18
    /// buckets, the solver stopped by its tolerance) (1-AUC)% 0.0098 and 0.0104, against 0.0163
    /// and 0.0199 on L2-normalized sublinear tf-idf of words; fusion's 0.0067 and 0.0088
    /// against 0.0093 and 0.0107).
    pub features: FeatureConfig,
    /// Input features of a model started from nothing, which learns only online (default:
    /// binary words and hashed byte 4-grams, unnormalized: in the TREC online protocol on the
    /// SpamAssassin corpus (seeded order, `examples/sweep.rs`) (1-AUC)% 0.164 with 4-grams of
    /// 3 KB; with 6 KB 0.176, against 0.266 on sublinear counts; 0.436 on L2-normalized
    /// sublinear counts of words alone. On unit-length rows the bias, moved as much as all the
    /// features together, swamps the step: 0.517 on L2-normalized binary 4-grams alone).
    pub empty_features: FeatureConfig,
    /// How the batch fit is found (default: dual coordinate descent).
    // Absent from settings written before there was a choice.
    #[serde(default)]
    pub solver: SvmSolver,
    /// The exact solver's fit scales each input column by the magnitude of its Naive Bayes
    /// log-count ratio on the training rows, smoothed by this (NBSVM, see
    /// `crate::features::squared_log_count_ratios`), the scale folded into the weights, so
    /// scoring and learning read the unscaled input; `None`: unscaled. Default 1 (Laplace):
    /// in 5-fold cross-validation on the SpamAssassin corpus (`examples/sweep.rs`, `SVM_NB`,
    /// seeds 7, 3 and 1) (1-AUC)% 0.0075 against 0.0096 unscaled, spam missed at 0.1% ham
    /// missed 2.69% against 4.98%; smoothing 0.1 gave 0.0072, 10 gave 0.0090; C = 10 the same
    /// as 3, C = 1 worse (0.0094).
    // Settings written before there was a choice were unscaled.
    #[serde(default)]
    pub nb_scale: Option<f64>,
    /// The cap on each online step (`learn`, PA-I's C) of a model fitted by the exact solver
    /// (default 0.1; one started from nothing, or fitted by online passes, steps with `c`). Its
    /// margins are a few units, read through a calibration slope of about 6: a step that
    /// puts the message learned at margin 1 in one go moved the scores of the messages
    /// sharing its words by as much. Trained on half the SpamAssassin corpus (even-numbered
    /// files of each class, the odd ones held out; `learn` of one held-out ham the model
    /// called unsure, then of ten held-out spam it let through): at `c` (3) the SVM caught 838
    /// of the 948 held-out spam after the one ham (900 before), and called 26 of the 2,075
    /// ham spam after the ten spam (3 before); at 0.3, 887 and 9; at 0.1, 898 and 6 (fusion:
    /// 913 before; 913 and 5 at 0.1), and the ten spam went from 0 to 4 caught (9 by fusion).
    // Settings written before there was a choice stepped with `c`, whose scores the first
    // corrections swamped.
    #[serde(default = "fitted_c")]
    pub fitted_c: f64,
    /// How a model started from nothing (which has no Platt scaling) reads its margin as
    /// P(spam): P = the logistic of `empty_slope` times the margin. Default ln(0.98 / 0.02),
    /// about 3.89: a message on the margin PA-I learns to (1) is P(spam) 0.98, the default
    /// spam threshold, and one as far on the ham side 0.02. At slope 1 (the logistic of the
    /// margin itself, as before) a message needed a margin of 3.9 to be called spam, which
    /// the online SVM's margins seldom reach: in the TREC online protocol on the SpamAssassin
    /// corpus (`eval --online --seed 7`) it called no spam at all at the default threshold.
    /// The slope changes no ranking, so neither (1-AUC)% nor fusion (which scales each
    /// model's log-odds by their running mean) moves.
    // Settings written before there was a choice read the margin as the log-odds.
    #[serde(default = "empty_slope")]
    pub empty_slope: f64,
}

/// The default [`LinearSvmParams::fitted_c`].
fn fitted_c() -> f64 {
    0.1
}

/// The default [`LinearSvmParams::empty_slope`]: the logit of the default spam threshold.
fn empty_slope() -> f64 {
    (0.98f64 / 0.02).ln()
}

impl Default for LinearSvmParams {
    fn default() -> Self {
        LinearSvmParams {
            c: 3.0,
            loss: SvmLoss::Hinge,
            tol: 0.1,
            max_iter: 10,
            seed: 42,
            features: FeatureConfig {
                l2_normalize: true,
                ..FeatureConfig::BINARY_HASHED
            },
            empty_features: FeatureConfig::BINARY_HASHED,
            solver: SvmSolver::DualCoordinateDescent,
            nb_scale: Some(1.0),
            fitted_c: fitted_c(),
            empty_slope: empty_slope(),
        }
    }
}

/// A fitted linear SVM: its decision value is the margin w . x + b.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearSvm {
    /// First, so a scorer can read it without decoding the rest (see `crate::filter::scorer`).
    function: LinearFunction,
    c: f64,
}

impl LinearSvmParams {
    /// Solves the dual problem. Needs at least one message of each class.
    pub fn fit(&self, data: &Dataset) -> Result<LinearSvm> {
        require_positive(ModelKind::LinearSvm, "C", self.c)?;
        require_positive(ModelKind::LinearSvm, "tol", self.tol)?;
        require_positive(ModelKind::LinearSvm, "fitted_c", self.fitted_c)?;
        require_both_classes(ModelKind::LinearSvm, data)?;
        let transform = self.features.fit(data);
        let width = self.features.input_width(data.n_features);
        if let SvmSolver::OnlinePasses { passes } = self.solver {
            let mut model = LinearSvm {
                c: self.c,
                function: LinearFunction::new(transform, vec![0.0; width], 0.0),
            };
            let hashed = self.features.hashed;
            online_passes(data, None, passes, self.seed, |row, l| {
                model.learn(&row.counts(hashed), l);
            });
            return Ok(model);
        }
        let rows = InputRows::new(&transform, data);
        let scales = nb_squared_scales(
            ModelKind::LinearSvm,
            self.nb_scale,
            data,
            None,
            self.features.hashed,
        )?;
        let rows = match scales {
            Some(scales) => rows.scaled(scales),
            None => rows,
        };
        let (w, b) = self.solve(&rows, &signs(data), width);
        Ok(LinearSvm {
            c: self.fitted_c,
            function: LinearFunction::fitted(transform, w, b),
        })
    }

    /// A model that has seen nothing (all weights 0), to be trained by [`LinearSvm::learn`]
    /// one message at a time. Its features have no fitted statistics: idf is 1 throughout.
    pub fn untrained(&self) -> LinearSvm {
        LinearSvm {
            c: self.c,
            function: LinearFunction::zero(self.empty_features),
        }
    }

    /// Dual coordinate descent on `rows` with labels `ys` in {-1, +1}, with LIBLINEAR's
    /// shrinking (Hsieh et al. 2008, section 3.2): a coordinate at a bound whose gradient
    /// points out of the box by more than the last pass's extreme projected gradients leaves
    /// the active set, and once the active set meets the tolerance every coordinate is
    /// checked again before stopping. Returns (w, b).
    fn solve(&self, rows: &InputRows<'_>, ys: &[f64], width: usize) -> (Vec<f64>, f64) {
        let (upper, diag) = match self.loss {
            SvmLoss::Hinge => (self.c, 0.0),
            SvmLoss::SquaredHinge => (f64::INFINITY, 0.5 / self.c),
        };
        let n = rows.len();
        // Q_ii of the augmented row (x_i, 1), plus the squared-hinge diagonal.
        let qii: Vec<f64> = (0..n).map(|i| rows.squared_norm(i) + 1.0 + diag).collect();
        let mut alpha = vec![0.0; n];
        // The weights with the bias last: the augmented row's constant feature.
        let mut w = vec![0.0; width + 1];
        let mut order: Vec<usize> = (0..n).collect();
        let mut active = n;
        let (mut pg_max_old, mut pg_min_old) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
        for _ in 0..self.max_iter {
            order[..active].shuffle(&mut rng);
            let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
            let mut s = 0;
            while s < active {
                let i = order[s];
                let g = ys[i] * (rows.dot(i, &w[..width]) + w[width]) - 1.0 + diag * alpha[i];
                let pg = if alpha[i] == 0.0 {
                    if g > pg_max_old {
                        active -= 1;
                        order.swap(s, active);
                        continue;
                    }
                    g.min(0.0)
                } else if alpha[i] == upper {
                    if g < pg_min_old {
                        active -= 1;
                        order.swap(s, active);
                        continue;
                    }
                    g.max(0.0)
                } else {
                    g
                };
                pg_max = pg_max.max(pg);
                pg_min = pg_min.min(pg);
                if pg.abs() > 1e-12 {
                    let old = alpha[i];
                    alpha[i] = (old - g / qii[i]).clamp(0.0, upper);
                    let step = (alpha[i] - old) * ys[i];
                    rows.add_to(i, step, &mut w[..width]);
                    w[width] += step;
                }
                s += 1;
            }
            if pg_max - pg_min < self.tol {
                if active == n {
                    break;
                }
                // Converged on the active set: check every coordinate once more.
                active = n;
                (pg_max_old, pg_min_old) = (f64::INFINITY, f64::NEG_INFINITY);
                continue;
            }
            pg_max_old = if pg_max <= 0.0 { f64::INFINITY } else { pg_max };
            pg_min_old = if pg_min >= 0.0 {
                f64::NEG_INFINITY
            } else {
                pg_min
            };
        }
        let b = w.pop().unwrap_or(0.0);
        (w, b)
    }
}

impl LinearSvm {
    /// The SVM of a decision function and its C (see `LinearSection`).
    pub(crate) fn from_parts(function: LinearFunction, c: f64) -> LinearSvm {
        LinearSvm { function, c }
    }

    /// The decision function (the margin).
    pub fn function(&self) -> &LinearFunction {
        &self.function
    }

    /// The decision function, to move its vocabulary arrays out of and back into a model file
    /// (see `crate::filter::score_table`).
    pub(crate) fn function_mut(&mut self) -> &mut LinearFunction {
        &mut self.function
    }

    /// One passive-aggressive step (PA-I, Crammer et al. 2006) towards classifying `counts`
    /// as `label` with margin 1: the online update used by `learn` and online evaluation.
    /// The bias is stepped as one more feature of the input, whose square is the mean of the
    /// input's squared values: 1 on binary inputs, as a constant feature of 1; 1/n on a unit
    /// row of n features, where a feature of 1 would weigh as much as the whole message and
    /// take half the step, moving every message's score (one correction to a trained model
    /// moved its bias from -0.6 to -2.0 and let through hundreds of spam it caught before).
    pub fn learn(&mut self, counts: &SparseVector, label: crate::Label) {
        let x = self.function.input(counts);
        let y = sign(label);
        let loss = (1.0 - y * (x.dot(&self.function.weights) + self.function.bias)).max(0.0);
        if loss == 0.0 {
            return;
        }
        let norm = x.squared_norm();
        let bias_square = if x.is_empty() {
            1.0
        } else {
            norm / x.nnz() as f64
        };
        let tau = (loss / (norm + bias_square)).min(self.c);
        grow_and_add(&mut self.function, x.iter(), tau * y, tau * y * bias_square);
    }

    /// Renumbers the weights by `remap`: kept features score as before.
    pub fn remap(&mut self, remap: &FeatureRemap) {
        self.function.remap(remap);
    }
}

/// w += step * x and b += bias_step, growing w to cover new features; the hashed features'
/// weights stay at the precision the model file stores (see [`LinearFunction::weights`]). `x`
/// is an input's entries, each id once.
pub(crate) fn grow_and_add(
    f: &mut LinearFunction,
    x: impl Iterator<Item = (FeatureId, f64)>,
    step: f64,
    bias_step: f64,
) {
    let front = f.vocabulary_start();
    // `for_each`, not a `for` loop: a row's buckets then words iterate without a check of
    // which part is next at each entry.
    let weights = &mut f.weights;
    x.for_each(|(id, v)| {
        let id = id as usize;
        if id >= weights.len() {
            weights.resize(id + 1, 0.0);
        }
        let w = &mut weights[id];
        *w += step * v;
        if id < front {
            *w = stored_f32(*w);
        }
    });
    f.bias += bias_step;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Label;

    fn separable() -> Dataset {
        // Spam has feature 0, ham feature 1; feature 2 is noise in both.
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for i in 0..20u32 {
            let spam = i % 2 == 0;
            let mut ids = vec![if spam { 0 } else { 1 }];
            if i % 3 == 0 {
                ids.push(2);
            }
            rows.push(SparseVector::from_ids(ids));
            labels.push(if spam { Label::Spam } else { Label::Ham });
        }
        Dataset::new(rows, labels, 3)
    }

    #[test]
    fn separates_with_margin_and_is_deterministic() {
        let params = LinearSvmParams {
            features: FeatureConfig::COUNTS,
            tol: 1e-6,
            ..LinearSvmParams::default()
        };
        let data = separable();
        let model = params.fit(&data).unwrap();
        for (x, l) in data.rows.iter().map(|r| r.words()).zip(&data.labels) {
            let margin = sign(*l) * model.function().decision(x);
            assert!(margin >= 1.0 - 1e-3, "margin {margin}");
        }
        assert_eq!(model, params.fit(&data).unwrap());
        let sq = LinearSvmParams {
            loss: SvmLoss::SquaredHinge,
            ..params
        }
        .fit(&data)
        .unwrap();
        assert!(sq.function().decision(data.rows[0].words()) > 0.0);
    }

    /// The fit with log-count-ratio scaling is the textbook fit on rows whose every column j
    /// was multiplied by s_j = |r_j|, with each weight multiplied by s_j (folded in): the
    /// same decision on every row, and a column the classes share weighs less than it would
    /// unscaled.
    #[test]
    fn log_count_ratio_scaling_is_the_fit_on_scaled_rows_folded_into_the_weights() {
        // Feature 3 in 2 of 10 spam and 1 of 10 ham: nearly shared, so its scale is small.
        let mut data = separable();
        let rows = data.rows.iter().enumerate().map(|(i, r)| {
            let mut ids = r.words().ids().to_vec();
            if [0, 2, 1].contains(&i) {
                ids.push(3);
            }
            SparseVector::from_ids(ids)
        });
        data = Dataset::new(rows, data.labels.clone(), 4);
        let textbook = LinearSvmParams {
            features: FeatureConfig::COUNTS,
            tol: 1e-12,
            max_iter: 100_000,
            nb_scale: None,
            ..LinearSvmParams::default()
        };
        let scaled = LinearSvmParams {
            nb_scale: Some(1.0),
            ..textbook
        };
        let (s, explicit) = super::super::testutil::explicitly_scaled(&data);
        let folded = scaled.fit(&data).unwrap();
        let reference = textbook.fit(&explicit).unwrap();
        super::super::testutil::assert_folded(folded.function(), reference.function(), &s, 1e-6);
        let u = &folded.function().weights;
        for (x, e) in data.rows.iter().zip(&explicit.rows) {
            let d = folded.function().decision(x.words());
            assert!((d - reference.function().decision(e.words())).abs() < 1e-6);
        }
        let unscaled = textbook.fit(&data).unwrap();
        assert!(s[3] < s[0] && u[3].abs() < unscaled.function().weights[3].abs());
        let bad = LinearSvmParams {
            nb_scale: Some(0.0),
            ..textbook
        };
        assert!(bad.fit(&data).is_err());
    }

    #[test]
    fn passive_aggressive_step_moves_towards_the_label() {
        let data = separable();
        let mut model = LinearSvmParams::default().fit(&data).unwrap();
        let x = SparseVector::from_ids(vec![2]);
        let before = model.function().decision(&x);
        model.learn(&x, Label::Spam);
        assert!(model.function().decision(&x) > before);
    }

    #[test]
    fn online_passes_fit_is_the_model_from_nothing_fed_the_training_set() {
        let data = separable();
        let params = LinearSvmParams {
            solver: SvmSolver::OnlinePasses { passes: 3 },
            features: FeatureConfig::BINARY_HASHED,
            ..LinearSvmParams::default()
        };
        let fitted = params.fit(&data).unwrap();
        let mut learned = params.untrained();
        online_passes(&data, None, 3, params.seed, |x, l| {
            learned.learn(&x.counts(true), l)
        });
        for (x, l) in data.rows.iter().map(|r| r.words()).zip(&data.labels) {
            let d = fitted.function().decision(x);
            assert_eq!(d, learned.function().decision(x));
            assert!(sign(*l) * d > 0.0, "separable data is separated");
        }
    }

    #[test]
    fn empty_model_reaches_the_margin_on_binary_hashed_features_in_one_step() {
        let mut model = LinearSvmParams::default().untrained();
        let hashed = crate::features::hashed::HASHED_BASE + 3;
        // Counts do not matter (binary); the hashed feature is seen, unnormalized.
        let x = SparseVector::from_pairs(vec![(0, 5.0), (1, 1.0), (hashed, 2.0)]);
        model.learn(&x, Label::Ham);
        assert!((model.function().decision(&x) + 1.0).abs() < 1e-12);
        let alone = SparseVector::from_pairs(vec![(hashed, 1.0)]);
        // tau = 1 / (3 + 1): the feature's weight and the bias each moved by -1/4.
        assert!((model.function().decision(&alone) + 0.5).abs() < 1e-12);
    }

    /// Regression: on unit-length rows a step moved the bias as much as all the message's
    /// features together, and a trained model stepped with the batch fit's C, so one
    /// correction moved every message's score by up to half its loss (hundreds of held-out
    /// spam let through). The bias now steps as one feature of the row's mean square, and a
    /// fitted model's steps are capped at `fitted_c`.
    #[test]
    fn a_step_on_a_unit_row_barely_moves_the_bias_and_a_fitted_model_steps_gently() {
        let params = LinearSvmParams {
            features: FeatureConfig {
                l2_normalize: true,
                ..FeatureConfig::BINARY
            },
            nb_scale: None,
            ..LinearSvmParams::default()
        };
        let mut model = params.fit(&separable()).unwrap();
        // A spam's own feature, and two more: learned as ham, against the fit.
        let x = SparseVector::from_ids(vec![0, 2, 5]);
        let (decision, bias) = (model.function().decision(&x), model.function().bias);
        model.learn(&x, Label::Ham);
        let loss = 1.0 + decision;
        // Three features of 1/sqrt(3): the bias is a fourth of square 1/3.
        let tau = (loss / (1.0 + 1.0 / 3.0)).min(params.fitted_c);
        assert!(tau == params.fitted_c, "the cap binds: loss {loss}");
        assert!((model.function().bias - (bias - tau / 3.0)).abs() < 1e-12);
        let moved = decision - model.function().decision(&x);
        assert!((moved - tau * (1.0 + 1.0 / 3.0)).abs() < 1e-12, "{moved}");
        // A row sharing none of its features moved by the bias step alone.
        let other = SparseVector::from_ids(vec![1]);
        let before = LinearSvmParams::fit(&params, &separable()).unwrap();
        let shift = before.function().decision(&other) - model.function().decision(&other);
        assert!((shift - tau / 3.0).abs() < 1e-12, "{shift}");
    }
}
