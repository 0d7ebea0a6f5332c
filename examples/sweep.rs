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
//! SVM_C, SVM_SQUARED, LR_C, LR_TOL, FUSION_SQUASH (clip|log), FUSION_CLIP, FUSION_RATE,
//! FUSION_C, FUSION_NORMALIZE;
//! ONLINE=1 runs the TREC online protocol instead (`eval --online`), in a random
//! order seeded by SEED (default 7), or in the order of the TREC index INDEX if given, and
//! prints each model's learning curve ((1-AUC)% over each successive 1,000 messages); SEED
//! also seeds the folds (default 42).

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

fn main() {
    let dir = Path::new("corpus/spamassassin");
    let index = std::env::var_os("INDEX");
    let corpus = match &index {
        Some(index) => LabeledCorpus::read_trec(Path::new(index), |e| eprintln!("{e}")),
        None => LabeledCorpus::read(&[dir.join("spam")], &[dir.join("ham")], |e| {
            eprintln!("{e}")
        }),
    }
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
    let bytes: Vec<&[u8]> = corpus
        .messages
        .iter()
        .map(|(m, _)| m.bytes.as_slice())
        .collect();
    let tokens: Vec<_> = Tokenizer::new(config.clone())
        .tokenize_all(bytes)
        .into_iter()
        .map(|t| t.tokens)
        .collect();
    let labels: Vec<_> = corpus.messages.iter().map(|(_, l)| *l).collect();

    let (bnb, mnb, svm, lr, fusion) = (
        BernoulliNbParams::default(),
        MultinomialNbParams::default(),
        LinearSvmParams::default(),
        LogisticRegressionParams::default(),
        FusionParams::default(),
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
        ModelParams::Fusion(FusionParams {
            squash: match std::env::var("FUSION_SQUASH").as_deref() {
                Ok("clip") => Squash::Clip,
                Ok("log") => Squash::Log,
                _ => fusion.squash,
            },
            clip: var("FUSION_CLIP", fusion.clip),
            normalize: flag("FUSION_NORMALIZE", fusion.normalize),
            online_rate: var("FUSION_RATE", fusion.online_rate),
            c: var("FUSION_C", fusion.c),
        }),
    ];
    let results = if flag("ONLINE", false) {
        // A seeded random order, as `eval --online` without an index.
        let mut order: Vec<usize> = (0..tokens.len()).collect();
        if index.is_none() {
            order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(var("SEED", 7)));
        }
        let tokens: Vec<_> = order.iter().map(|&i| tokens[i].clone()).collect();
        let labels: Vec<_> = order.iter().map(|&i| labels[i]).collect();
        online::run(&models, &config, &tokens, &labels).expect("online")
    } else {
        let cv = CrossValidation {
            folds: var("FOLDS", 5),
            seed: var("SEED", 42),
            vocabulary: VocabularyParams {
                min_df: var("MIN_DF", VocabularyParams::default().min_df),
                max_features: None,
            },
            models,
        };
        cv.run(&tokens, &labels).expect("cross-validation")
    };
    for kind in ModelKind::WITH_FUSION {
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
