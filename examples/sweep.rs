//! Parameter sweeps for choosing defaults: 5-fold cross-validation (seed 42, or SEED) of the
//! four models on the SpamAssassin corpus (`corpus/fetch-spamassassin.sh` first), or with
//! ONLINE=1 the TREC online protocol in a seeded random order (SEED, default 7: the order of
//! `spamsort eval --online --spam .. --ham .. --seed 7`), with settings overridden by
//! environment variables; unset ones keep the library defaults. Prints (1-AUC)%, lam% (at P(spam)
//! 0.5, and at the spam threshold, as `../shared/bench/peer-folds.sh` counts verdicts), hm% and
//! sm% at the spam threshold, spam missed at 0.1% ham missed, and mean fit time per model.
//! Examples:
//!
//! ```sh
//! cargo run --release --example sweep                          # the defaults
//! RECEIVED=2 ALL_HEADERS=0 cargo run --release --example sweep  # the issue's header set
//! NB_ALPHA=1 cargo run --release --example sweep                # Laplace smoothing
//! SVM_C=1 LR_C=10 cargo run --release --example sweep
//! ONLINE=1 MODELS=nb NB_MAX_TOKENS=150 NB_SCALE=sqrt cargo run --release --example sweep
//! ONLINE=1 BYTE4=6144 DROP=words LR_EMPTY_RATE=0.002 cargo run --release --example sweep
//! ```
//!
//! Variables: RECEIVED, ALL_HEADERS, HEADER_NAMES, HTML_TAGS, BIGRAMS, CHAR4, BYTE4 (bytes; default
//! `train`'s in batch, the tokenizer's online),
//! B4_BITS (the byte 4-grams folded into 2^B4_BITS buckets, at most the library's 17: a bucket
//! is an FNV-1a hash modulo a power of two, so this gives the tokens of a smaller hashed table),
//! ONLY and DROP (comma-separated token kinds kept or dropped: b4, c4, osb, words), MIN_DF,
//! FOLDS, NB_ALPHA, BNB_MAX_FEATURES, MNB_WEIGHTING, MNB_L2, COMPLEMENT, SVM_C, SVM_TOL and
//! SVM_MAX_ITER (the exact solver's stopping rule), SVM_SQUARED, SVM_NB (the smoothing of
//! the log-count-ratio scaling, 0 for none), SVM_FEATURES, SVM_FITTED_C (the cap on `learn`'s
//! steps after a batch fit), SVM_EMPTY_FEATURES, LR_C, LR_TOL, LR_NB (as SVM_NB, for the
//! online passes' fit), LR_FEATURES, LR_ONLINE_RATE, LR_FITTED_RATE (the step of `learn` after
//! the online passes' fit), LR_EMPTY_FEATURES, LR_EMPTY_RATE (the EMPTY ones: models started from nothing, as online);
//! LR_PASSES and SVM_PASSES (the batch fit by that many passes of the online update, 0: by the
//! exact solver), LR_PASS_RATE (the step of logistic regression's passes);
//! a *_FEATURES or MNB_WEIGHTING value is a weighting (binary|counts|logtf|tfidf), then `-l2`
//! for unit length (MNB_L2 for the multinomial model) and `+b4` for the hashed byte 4-grams;
//! the Naive Bayes scoring (`NbScoring`): NB_STRENGTH, NB_CAP, NB_MIN_WEIGHT, NB_MAX_TOKENS,
//! NB_SCALE (sum|sqrt|mean); the fusion: FUSION_SQUASH (clip|log), FUSION_CLIP, FUSION_RATE,
//! FUSION_FITTED_RATE (the step of `learn` after a batch fit), FUSION_C, FUSION_NORMALIZE; MODELS (nb: only the two Naive Bayes models); SPAM_THRESHOLD (the
//! P(spam) the hm% and sm% columns cut at, default the library's). ONLINE=1 runs the
//! TREC online protocol instead (`eval --online`), in a random order seeded by SEED (default
//! 7), or in the order of the TREC index INDEX if given, and prints each model's learning curve
//! ((1-AUC)% over each successive 1,000 messages); SEED also seeds the folds (default 42).
//! A value that does not parse, or is none of its choices, stops the sweep.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use spamsort::eval::metrics::{Confusion, auc, spam_miss_at_ham_pct};
use spamsort::eval::{CrossValidation, TokenizedMail, online};
use spamsort::features::hashed::{HASHED_BASE, HASHED_BUCKETS, hashed_token};
use spamsort::features::{FeatureConfig, Weighting};
use spamsort::models::*;
use spamsort::{LabeledCorpus, TokenizerConfig, VocabularyParams};
use std::path::Path;

/// The setting `name` from the environment, `default` if unset. A value that does not parse
/// stops the sweep: a mistyped setting must not run the defaults under its name.
fn var<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} does not parse")),
        Err(std::env::VarError::NotPresent) => default,
        Err(e) => panic!("{name}: {e}"),
    }
}

/// The setting `name` as one of `choices` by name, `default` if unset; another name stops the
/// sweep.
fn choice<T: Copy>(name: &str, default: T, choices: &[(&str, T)]) -> T {
    let v = match std::env::var(name) {
        Ok(v) => v,
        Err(std::env::VarError::NotPresent) => return default,
        Err(e) => panic!("{name}: {e}"),
    };
    let names = || choices.iter().map(|c| c.0).collect::<Vec<_>>().join("|");
    (choices.iter().find(|c| c.0 == v))
        .unwrap_or_else(|| panic!("{name}={v:?}: one of {}", names()))
        .1
}

/// A log-count-ratio smoothing setting (`SVM_NB`, `LR_NB`): 0 for none, else a positive number;
/// `default` if unset.
fn nb_var(name: &str, default: Option<f64>) -> Option<f64> {
    let alpha = var(name, default.unwrap_or(0.0));
    assert!(alpha >= 0.0, "{name}={alpha}: 0 for none, else positive");
    (alpha > 0.0).then_some(alpha)
}

fn flag(name: &str, default: bool) -> bool {
    var::<u8>(name, u8::from(default)) != 0
}

/// A weighting by name, then `-l2` for unit length and `+b4` for the hashed byte 4-grams;
/// `default` if `name` is unset.
fn features(name: &str, default: FeatureConfig) -> FeatureConfig {
    let Ok(value) = std::env::var(name) else {
        return default;
    };
    let (value, hashed) = match value.strip_suffix("+b4") {
        Some(v) => (v, true),
        None => (value.as_str(), false),
    };
    let (weighting, l2_normalize) = match value.strip_suffix("-l2") {
        Some(w) => (w, true),
        None => (value, false),
    };
    FeatureConfig {
        weighting: weighting_named(weighting).unwrap_or_else(|| {
            panic!("{name}: {weighting:?} is no weighting (binary|counts|logtf|tfidf)")
        }),
        l2_normalize,
        hashed,
    }
}

fn weighting_named(name: &str) -> Option<Weighting> {
    Some(match name {
        "binary" => Weighting::Binary,
        "counts" => Weighting::Counts,
        "logtf" => Weighting::LogTf,
        "tfidf" => Weighting::TfIdf,
        _ => return None,
    })
}

/// The kind of a token for ONLY and DROP.
fn token_kind(token: &str) -> &'static str {
    ["b4", "c4", "osb"]
        .into_iter()
        .find(|k| token.strip_prefix(k).is_some_and(|r| r.starts_with(':')))
        .unwrap_or("words")
}

/// The token kinds ONLY (`None`: all) and DROP name, read once.
fn kind_lists() -> (Option<Vec<String>>, Vec<String>) {
    let list = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.split(',').map(String::from).collect::<Vec<_>>())
    };
    (list("ONLY"), list("DROP").unwrap_or_default())
}

/// Whether the ONLY and DROP lists of [`kind_lists`] keep a token.
fn kept(token: &str, (only, drop): &(Option<Vec<String>>, Vec<String>)) -> bool {
    let kind = token_kind(token);
    only.as_ref().is_none_or(|o| o.iter().any(|k| k == kind)) && !drop.iter().any(|k| k == kind)
}

/// Folds every hashed id of `ids` into the first 2^`bits` buckets. A bucket is the FNV-1a
/// hash modulo HASHED_BUCKETS, a power of two, so its low bits are the hash modulo 2^`bits`:
/// the ids a table of 2^`bits` buckets would give.
fn fold_buckets(ids: &mut [u32], bits: u32) {
    let mask = (1u32 << bits.min(HASHED_BUCKETS.trailing_zeros())) - 1;
    for id in ids {
        *id = HASHED_BASE + ((*id - HASHED_BASE) & mask);
    }
}

fn main() {
    let dir = Path::new("corpus/spamassassin");
    let index = std::env::var_os("INDEX");
    let mut corpus = match &index {
        Some(index) => LabeledCorpus::read_trec(Path::new(index), |e| eprintln!("{e}")),
        None => LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
            eprintln!("{e}")
        }),
    }
    .expect("run corpus/fetch-spamassassin.sh first");
    let online = flag("ONLINE", false);
    let seed = var("SEED", if online { 7 } else { 42 });
    if online && index.is_none() {
        corpus
            .messages
            .shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    }
    let d = TokenizerConfig::default();
    let config = TokenizerConfig {
        received_headers: var("RECEIVED", d.received_headers),
        all_headers: flag("ALL_HEADERS", d.all_headers),
        header_names: flag("HEADER_NAMES", d.header_names),
        html_tags: flag("HTML_TAGS", d.html_tags),
        word_bigrams: flag("BIGRAMS", d.word_bigrams),
        char_ngrams: flag("CHAR4", d.char_ngrams),
        // What `train` gives batch fits (see `spamsort::models::tokenizer_for`); online, the
        // tokenizer's own.
        byte_ngrams: var(
            "BYTE4",
            if online {
                d.byte_ngrams
            } else {
                d.byte_ngrams.min(BATCH_BYTE_NGRAMS)
            },
        ),
        ..d
    };
    let mut mail = TokenizedMail::of(&corpus, &config);
    let lists = kind_lists();
    let b4_bits = var("B4_BITS", HASHED_BUCKETS.trailing_zeros());
    for tokens in &mut mail.tokens {
        tokens.retain(|t| kept(t, &lists));
    }
    let b4_kept = kept(&hashed_token(HASHED_BASE), &lists);
    for ids in &mut mail.hashed {
        if !b4_kept {
            ids.clear();
        }
        fold_buckets(ids, b4_bits);
    }

    let (bnb, mnb, svm, lr, fusion) = (
        BernoulliNbParams::default(),
        MultinomialNbParams::default(),
        LinearSvmParams::default(),
        LogisticRegressionParams::default(),
        FusionParams::default(),
    );
    let weighting = choice(
        "MNB_WEIGHTING",
        mnb.features.weighting,
        &["binary", "counts", "logtf", "tfidf"].map(|w| (w, weighting_named(w).unwrap())),
    );
    let scoring = |d: NbScoring| NbScoring {
        strength: var("NB_STRENGTH", d.strength),
        cap: var("NB_CAP", d.cap),
        min_weight: var("NB_MIN_WEIGHT", d.min_weight),
        max_tokens: var("NB_MAX_TOKENS", d.max_tokens),
        scale: choice(
            "NB_SCALE",
            d.scale,
            &[
                ("sum", TermScale::Sum),
                ("sqrt", TermScale::Sqrt),
                ("mean", TermScale::Mean),
            ],
        ),
    };
    let mut models = vec![
        ModelParams::BernoulliNb(BernoulliNbParams {
            alpha: var("NB_ALPHA", bnb.alpha),
            max_features: std::env::var("BNB_MAX_FEATURES")
                .is_ok()
                .then(|| var("BNB_MAX_FEATURES", 0)),
            scoring: scoring(bnb.scoring),
        }),
        ModelParams::MultinomialNb(MultinomialNbParams {
            alpha: var("NB_ALPHA", mnb.alpha),
            features: FeatureConfig {
                weighting,
                l2_normalize: flag("MNB_L2", mnb.features.l2_normalize),
                hashed: false,
            },
            variant: if flag("COMPLEMENT", false) {
                NbVariant::Complement
            } else {
                mnb.variant
            },
            scoring: scoring(mnb.scoring),
        }),
        ModelParams::LinearSvm(LinearSvmParams {
            c: var("SVM_C", svm.c),
            tol: var("SVM_TOL", svm.tol),
            max_iter: var("SVM_MAX_ITER", svm.max_iter),
            loss: if flag("SVM_SQUARED", false) {
                SvmLoss::SquaredHinge
            } else {
                svm.loss
            },
            features: features("SVM_FEATURES", svm.features),
            nb_scale: nb_var("SVM_NB", svm.nb_scale),
            fitted_c: var("SVM_FITTED_C", svm.fitted_c),
            empty_slope: var("SVM_EMPTY_SLOPE", svm.empty_slope),
            empty_features: features("SVM_EMPTY_FEATURES", svm.empty_features),
            solver: match var("SVM_PASSES", usize::MAX) {
                0 => SvmSolver::DualCoordinateDescent,
                usize::MAX => svm.solver,
                passes => SvmSolver::OnlinePasses { passes },
            },
            ..svm
        }),
        ModelParams::LogisticRegression(LogisticRegressionParams {
            c: var("LR_C", lr.c),
            nb_scale: nb_var("LR_NB", lr.nb_scale),
            tol: var("LR_TOL", lr.tol),
            features: features("LR_FEATURES", lr.features),
            online_rate: var("LR_ONLINE_RATE", lr.online_rate),
            fitted_rate: var("LR_FITTED_RATE", lr.fitted_rate),
            empty_features: features("LR_EMPTY_FEATURES", lr.empty_features),
            empty_rate: var("LR_EMPTY_RATE", lr.empty_rate),
            solver: match (var("LR_PASSES", usize::MAX), lr.solver) {
                (0, _) => LogisticSolver::NewtonCg,
                (usize::MAX, LogisticSolver::OnlinePasses { passes, rate }) => {
                    LogisticSolver::OnlinePasses {
                        passes,
                        rate: var("LR_PASS_RATE", rate),
                    }
                }
                (usize::MAX, solver) => solver,
                (passes, _) => LogisticSolver::OnlinePasses {
                    passes,
                    rate: var("LR_PASS_RATE", 0.004),
                },
            },
            ..lr
        }),
        ModelParams::Fusion(FusionParams {
            squash: choice(
                "FUSION_SQUASH",
                fusion.squash,
                &[("clip", Squash::Clip), ("log", Squash::Log)],
            ),
            clip: var("FUSION_CLIP", fusion.clip),
            normalize: flag("FUSION_NORMALIZE", fusion.normalize),
            online_rate: var("FUSION_RATE", fusion.online_rate),
            fitted_rate: var("FUSION_FITTED_RATE", fusion.fitted_rate),
            c: var("FUSION_C", fusion.c),
        }),
    ];
    if choice("MODELS", false, &[("nb", true)]) {
        models.truncate(2);
    }
    let kinds: Vec<ModelKind> = models.iter().map(ModelParams::kind).collect();
    let results = if online {
        online::run(&models, &config, &mail).expect("online run")
    } else {
        let cv = CrossValidation {
            folds: var("FOLDS", 5),
            seed,
            vocabulary: VocabularyParams {
                min_df: var("MIN_DF", VocabularyParams::default().min_df),
                max_features: None,
            },
            models,
        };
        cv.run(&mail).expect("cross-validation")
    };
    let spam_threshold = var("SPAM_THRESHOLD", spamsort::Thresholds::default().spam());
    for kind in kinds {
        let folds: Vec<_> = results.iter().filter(|r| r.model == kind).collect();
        let mean = |f: &dyn Fn(&spamsort::eval::FoldResult) -> f64| {
            folds.iter().map(|r| f(r)).sum::<f64>() / folds.len() as f64
        };
        println!(
            "{:<20} 1-AUC% {:.4}  lam% {:.3}  lam%@{spam_threshold} {:.3}  hm%@{spam_threshold} {:.3}  sm%@{spam_threshold} {:.2}  sm%@.1hm {:.2}  fit {:.3}s",
            kind.name(),
            mean(&|r| 100.0 * (1.0 - auc(&r.decisions, &r.labels))),
            mean(&|r| Confusion::at(&r.p_spam, &r.labels, 0.5).lam_pct()),
            mean(&|r| Confusion::at(&r.p_spam, &r.labels, spam_threshold).lam_pct()),
            mean(&|r| Confusion::at(&r.p_spam, &r.labels, spam_threshold).ham_miss_pct()),
            mean(&|r| Confusion::at(&r.p_spam, &r.labels, spam_threshold).spam_miss_pct()),
            mean(&|r| spam_miss_at_ham_pct(&r.decisions, &r.labels, 0.1)),
            mean(&|r| r.train_seconds)
        );
        if let [r] = &folds[..] {
            let curve: Vec<String> = (0..r.labels.len())
                .step_by(1000)
                .map(|from| {
                    let to = (from + 1000).min(r.labels.len());
                    let area = auc(&r.decisions[from..to], &r.labels[from..to]);
                    format!("{:.3}", 100.0 * (1.0 - area))
                })
                .collect();
            println!("{:<20} per 1,000: {}", "", curve.join(" "));
        }
    }
}
