//! Parameter sweeps for choosing defaults: 5-fold cross-validation (seed 42) of the four
//! models on the SpamAssassin corpus (`corpus/fetch-spamassassin.sh` first), with settings
//! overridden by environment variables; unset ones keep the library defaults. Prints (1-AUC)%,
//! lam% and mean fit time per model. Examples:
//!
//! ```sh
//! cargo run --release --example sweep                          # the defaults
//! RECEIVED=2 ALL_HEADERS=0 cargo run --release --example sweep  # the issue's header set
//! NB_ALPHA=1 cargo run --release --example sweep                # Laplace smoothing
//! SVM_C=1 LR_C=10 cargo run --release --example sweep
//! ```
//!
//! Variables: RECEIVED, ALL_HEADERS, HEADER_NAMES, HTML_TAGS, BIGRAMS, CHAR4, MIN_DF, FOLDS,
//! NB_ALPHA, BNB_MAX_FEATURES, MNB_WEIGHTING (binary|counts|logtf|tfidf), MNB_L2, COMPLEMENT,
//! SVM_C, SVM_SQUARED, LR_C, LR_TOL.

use spamsort::eval::metrics::{Confusion, auc};
use spamsort::eval::{CrossValidation, TokenizedMail};
use spamsort::features::{FeatureConfig, Weighting};
use spamsort::models::*;
use spamsort::{LabeledCorpus, TokenizerConfig, VocabularyParams};
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

fn main() {
    let dir = Path::new("corpus/spamassassin");
    let corpus = LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
        eprintln!("{e}")
    })
    .expect("run corpus/fetch-spamassassin.sh first");
    let d = TokenizerConfig::default();
    let config = TokenizerConfig {
        received_headers: var("RECEIVED", d.received_headers),
        all_headers: flag("ALL_HEADERS", d.all_headers),
        header_names: flag("HEADER_NAMES", d.header_names),
        html_tags: flag("HTML_TAGS", d.html_tags),
        word_bigrams: flag("BIGRAMS", d.word_bigrams),
        char_ngrams: flag("CHAR4", d.char_ngrams),
        ..d
    };
    let mail = TokenizedMail::of(&corpus, &config);

    let (bnb, mnb, svm, lr) = (
        BernoulliNbParams::default(),
        MultinomialNbParams::default(),
        LinearSvmParams::default(),
        LogisticRegressionParams::default(),
    );
    let weighting = match std::env::var("MNB_WEIGHTING").as_deref() {
        Ok("counts") => Weighting::Counts,
        Ok("logtf") => Weighting::LogTf,
        Ok("tfidf") => Weighting::TfIdf,
        Ok("binary") => Weighting::Binary,
        _ => mnb.features.weighting,
    };
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
            ..svm
        }),
        ModelParams::LogisticRegression(LogisticRegressionParams {
            c: var("LR_C", lr.c),
            tol: var("LR_TOL", lr.tol),
            ..lr
        }),
    ];
    let cv = CrossValidation {
        folds: var("FOLDS", 5),
        seed: 42,
        vocabulary: VocabularyParams {
            min_df: var("MIN_DF", VocabularyParams::default().min_df),
            max_features: None,
        },
        models,
    };
    let results = cv.run(&mail).expect("cross-validation");
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
