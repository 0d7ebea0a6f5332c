//! Parameter sweeps for choosing defaults on the SpamAssassin corpus
//! (`corpus/fetch-spamassassin.sh` first), with settings overridden by environment variables;
//! unset ones keep the library defaults. By default 5-fold cross-validation (seed 42) of the
//! four models; with `ONLINE=SEED` the TREC online protocol instead (`spamsort eval --online`,
//! the code `learn` runs) in the corpus's random order of that seed, which is the order
//! `spamsort eval --online --spam .. --ham .. --seed SEED` takes. Prints (1-AUC)%, lam% and
//! mean fit time per model, and online the learning curve ((1-AUC)% of each 1000 messages).
//! Examples:
//!
//! ```sh
//! cargo run --release --example sweep                          # the defaults
//! RECEIVED=2 ALL_HEADERS=0 cargo run --release --example sweep  # the issue's header set
//! NB_ALPHA=1 cargo run --release --example sweep                # Laplace smoothing
//! SVM_C=1 LR_C=10 cargo run --release --example sweep
//! ONLINE=7 BYTE4=6144 DROP=words LR_EMPTY_RATE=0.002 cargo run --release --example sweep
//! ```
//!
//! Variables: RECEIVED, ALL_HEADERS, HEADER_NAMES, HTML_TAGS, BIGRAMS, CHAR4, BYTE4 (bytes),
//! ONLY and DROP (comma-separated token kinds kept or dropped: b4, c4, osb, words), MIN_DF,
//! FOLDS, ONLINE (seed), NB_ALPHA, BNB_MAX_FEATURES, MNB_WEIGHTING, MNB_L2, COMPLEMENT, SVM_C,
//! SVM_SQUARED, SVM_FEATURES, SVM_EMPTY_FEATURES, LR_C, LR_TOL, LR_FEATURES, LR_ONLINE_RATE,
//! LR_EMPTY_FEATURES, LR_EMPTY_RATE (the EMPTY ones: models started from nothing, as online).
//! A *_FEATURES or MNB_WEIGHTING value is a weighting (binary|counts|logtf|tfidf), then `-l2`
//! for unit length (MNB_L2 for the multinomial model) and `+b4` for the hashed byte 4-grams.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use spamsort::eval::metrics::{Confusion, auc};
use spamsort::eval::{CrossValidation, online};
use spamsort::features::{FeatureConfig, Weighting};
use spamsort::models::*;
use spamsort::{LabeledCorpus, Tokenizer, TokenizerConfig, VocabularyParams};
use std::path::Path;

fn var<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
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
        weighting: weighting_named(weighting).unwrap_or(default.weighting),
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

/// Whether ONLY and DROP keep a token.
fn kept(token: &str) -> bool {
    let listed = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.split(',').any(|k| k == token_kind(token)))
    };
    listed("ONLY").unwrap_or(true) && !listed("DROP").unwrap_or(false)
}

fn main() {
    let dir = Path::new("corpus/spamassassin");
    let mut corpus = LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
        eprintln!("{e}")
    })
    .expect("run corpus/fetch-spamassassin.sh first");
    let online_seed = std::env::var("ONLINE").ok().and_then(|v| v.parse().ok());
    if let Some(seed) = online_seed {
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
        byte_ngrams: var("BYTE4", d.byte_ngrams),
        ..d
    };
    let bytes: Vec<&[u8]> = corpus
        .messages
        .iter()
        .map(|(m, _)| m.bytes.as_slice())
        .collect();
    let tokens: Vec<Vec<String>> = Tokenizer::new(config.clone())
        .tokenize_all(bytes)
        .into_iter()
        .map(|t| t.tokens.into_iter().filter(|t| kept(t)).collect())
        .collect();
    let labels: Vec<_> = corpus.messages.iter().map(|(_, l)| *l).collect();

    let (bnb, mnb, svm, lr) = (
        BernoulliNbParams::default(),
        MultinomialNbParams::default(),
        LinearSvmParams::default(),
        LogisticRegressionParams::default(),
    );
    let weighting = std::env::var("MNB_WEIGHTING")
        .ok()
        .and_then(|w| weighting_named(&w))
        .unwrap_or(mnb.features.weighting);
    let models = vec![
        ModelParams::BernoulliNb(BernoulliNbParams {
            alpha: var("NB_ALPHA", bnb.alpha),
            max_features: std::env::var("BNB_MAX_FEATURES")
                .ok()
                .and_then(|v| v.parse().ok()),
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
        }),
        ModelParams::LinearSvm(LinearSvmParams {
            c: var("SVM_C", svm.c),
            loss: if flag("SVM_SQUARED", false) {
                SvmLoss::SquaredHinge
            } else {
                svm.loss
            },
            features: features("SVM_FEATURES", svm.features),
            empty_features: features("SVM_EMPTY_FEATURES", svm.empty_features),
            ..svm
        }),
        ModelParams::LogisticRegression(LogisticRegressionParams {
            c: var("LR_C", lr.c),
            tol: var("LR_TOL", lr.tol),
            features: features("LR_FEATURES", lr.features),
            online_rate: var("LR_ONLINE_RATE", lr.online_rate),
            empty_features: features("LR_EMPTY_FEATURES", lr.empty_features),
            empty_rate: var("LR_EMPTY_RATE", lr.empty_rate),
            ..lr
        }),
    ];
    if online_seed.is_some() {
        let results = online::run(&models, &config, &tokens, &labels).expect("online run");
        for r in &results {
            let curve: Vec<String> = online::learning_curve(r, 1000)
                .iter()
                .map(|v| v.map_or("-".into(), |v| format!("{v:.3}")))
                .collect();
            println!(
                "{:<20} 1-AUC% {:.4}  lam% {:.3}  learn {:.3}s  per 1000: {}",
                r.model.name(),
                100.0 * (1.0 - auc(&r.decisions, &r.labels)),
                Confusion::at(&r.p_spam, &r.labels, 0.5).lam_pct(),
                r.train_seconds,
                curve.join(" ")
            );
        }
        return;
    }
    let cv = CrossValidation {
        folds: var("FOLDS", 5),
        seed: 42,
        vocabulary: VocabularyParams {
            min_df: var("MIN_DF", VocabularyParams::default().min_df),
            max_features: None,
        },
        models,
    };
    let results = cv.run(&tokens, &labels).expect("cross-validation");
    for kind in ModelKind::ALL {
        let folds: Vec<_> = results.iter().filter(|r| r.model == kind).collect();
        let mean = |f: &dyn Fn(&spamsort::eval::FoldResult) -> f64| {
            folds.iter().map(|r| f(r)).sum::<f64>() / folds.len() as f64
        };
        println!(
            "{:<20} 1-AUC% {:.4}  lam% {:.3}  fit {:.3}s",
            kind.name(),
            mean(&|r| 100.0 * (1.0 - auc(&r.decisions, &r.labels))),
            mean(&|r| Confusion::at(&r.p_spam, &r.labels, 0.5).lam_pct()),
            mean(&|r| r.train_seconds)
        );
    }
}
