//! The models fusion stacks, scored two at a time by a scorer of many messages (see
//! [`LinearPair`]): the linear SVM with logistic regression, and the Bernoulli with the
//! multinomial Naive Bayes model, where both of a pair read binary input (as `train` fits
//! them), so that each of a message's features is read once for both.

use super::SpamFilter;
use crate::features::SparseVector;
use crate::models::{LinearPair, ModelKind, NbScoring};

/// A filter's models fusion stacks, paired where their functions pair.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairedModels {
    pairs: Vec<Paired>,
}

/// Two models whose functions pair.
#[derive(Debug, Clone, PartialEq)]
struct Paired {
    kinds: [ModelKind; 2],
    pair: LinearPair,
    /// The Naive Bayes models' scorings (`None`: linear models, whose decision is the sum).
    scorings: Option<[NbScoring; 2]>,
}

/// The decisions of a [`PairedModels`] for one message.
pub(crate) struct PairedDecisions {
    decisions: Vec<(ModelKind, Option<f64>)>,
}

impl PairedDecisions {
    /// The decision of model `kind`, if it is paired and its pair gives it (a Naive Bayes
    /// model that would rank its tokens to select them does not: see
    /// [`NbScoring::decision`]).
    pub(crate) fn of(&self, kind: ModelKind) -> Option<f64> {
        (self.decisions.iter())
            .find(|(k, _)| *k == kind)
            .and_then(|&(_, d)| d)
    }
}

impl Paired {
    /// Both models' decisions, each the model's own bit for bit.
    fn decisions(&self, counts: &SparseVector) -> [Option<f64>; 2] {
        let Some(scorings) = &self.scorings else {
            return self.pair.decisions(counts).map(Some);
        };
        // Each scoring reads the terms twice (to count those it selects, then to sum them).
        let terms: Vec<[f64; 2]> = self.pair.terms(counts).collect();
        let biases = self.pair.biases();
        [0, 1].map(|i| scorings[i].decision(biases[i], terms.iter().map(|t| t[i])))
    }
}

impl PairedModels {
    /// The paired models' decisions for a count vector.
    pub(crate) fn decisions(&self, counts: &SparseVector) -> PairedDecisions {
        let decisions = (self.pairs.iter())
            .flat_map(|p| p.kinds.into_iter().zip(p.decisions(counts)))
            .collect();
        PairedDecisions { decisions }
    }
}

impl SpamFilter {
    /// The models fusion stacks, paired as they are now: the linear SVM with logistic
    /// regression, and the Bernoulli with the multinomial model, where fusion stacks both of a
    /// pair, each decides by its function alone (see [`crate::models::AnyModel::reads_function`])
    /// and their functions pair (see [`LinearPair::new`]). `None` without fusion or any such
    /// pair. Only a filter that no longer learns should keep it: a model that learns changes
    /// its function, not the pair.
    pub(crate) fn paired_models(&self) -> Option<PairedModels> {
        let fusion = self.fusion.as_ref()?;
        let pair = |kinds: [ModelKind; 2]| {
            let [a, b] = kinds.map(|k| {
                (fusion.models().contains(&k))
                    .then(|| self.model(k))
                    .flatten()
                    .filter(|m| m.model.reads_function())
            });
            let (a, b) = (&a?.model, &b?.model);
            let scorings = match (a.scoring(), b.scoring()) {
                (Some(x), Some(y)) => Some([x, y]),
                _ => None,
            };
            Some(Paired {
                kinds,
                pair: LinearPair::new(a.function(), b.function())?,
                scorings,
            })
        };
        let pairs: Vec<Paired> = [
            [ModelKind::LinearSvm, ModelKind::LogisticRegression],
            [ModelKind::BernoulliNb, ModelKind::MultinomialNb],
        ]
        .into_iter()
        .filter_map(pair)
        .collect();
        (!pairs.is_empty()).then_some(PairedModels { pairs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TrainParams;
    use crate::features::FeatureConfig;
    use crate::label::Label;
    use crate::models::{LogisticRegressionParams, ModelParams};

    /// A filter trained in batch with `params` on a few messages of each class, more spam
    /// than ham (so that no model's constant term is 0).
    fn trained(params: &TrainParams) -> SpamFilter {
        let texts = [
            ("cheap meds now", Label::Spam),
            ("buy cheap pills", Label::Spam),
            ("win money now, click", Label::Spam),
            ("cheap money, click now", Label::Spam),
            ("lunch at noon", Label::Ham),
            ("meeting notes", Label::Ham),
            ("see you at lunch", Label::Ham),
        ];
        let messages = (0..3).flat_map(|i| {
            texts.map(|(t, label)| Ok((format!("Subject: {t} {i}\n\n{t} {i}").into_bytes(), label)))
        });
        SpamFilter::train_stream(messages, params, || {}).unwrap()
    }

    /// Asserts that `paired` gives each model of `kinds` its own decision bit for bit, and
    /// none for the others.
    fn assert_paired(filter: &SpamFilter, paired: &PairedModels, kinds: &[ModelKind]) {
        for raw in ["Subject: cheap lunch\n\nwin pills at noon", "", "meeting"] {
            let (x, _) = filter.count_vector(raw.as_bytes());
            let decisions = paired.decisions(&x);
            for kind in ModelKind::ALL {
                let alone = filter.model(kind).unwrap().model.decision(&x);
                let expected = kinds.contains(&kind).then_some(alone.to_bits());
                assert_eq!(decisions.of(kind).map(f64::to_bits), expected, "{kind}");
            }
        }
    }

    #[test]
    fn the_default_fusion_pairs_its_models_and_they_score_as_alone() {
        let mut filter = trained(&TrainParams::default());
        let paired = filter.paired_models().expect("the defaults pair");
        assert_paired(&filter, &paired, &ModelKind::ALL);
        // A Naive Bayes model that learned since its function was refreshed decides from its
        // counts: it is not paired until refreshed.
        filter.learn(b"Subject: free pills", Label::Spam).unwrap();
        let paired = filter.paired_models().expect("the linear models pair");
        let linear = [ModelKind::LinearSvm, ModelKind::LogisticRegression];
        assert_paired(&filter, &paired, &linear);
        filter.refresh();
        let paired = filter.paired_models().expect("the defaults pair");
        assert_paired(&filter, &paired, &ModelKind::ALL);
    }

    #[test]
    fn models_that_read_other_inputs_are_not_paired() {
        let mut params = TrainParams::default();
        for m in &mut params.models {
            if let ModelParams::LogisticRegression(p) = m {
                *p = LogisticRegressionParams {
                    features: FeatureConfig::TF_IDF_L2,
                    ..*p
                };
            }
        }
        let filter = trained(&params);
        let paired = filter.paired_models().expect("the Naive Bayes models pair");
        let nb = [ModelKind::BernoulliNb, ModelKind::MultinomialNb];
        assert_paired(&filter, &paired, &nb);
    }

    #[test]
    fn a_naive_bayes_model_that_ranks_its_tokens_decides_on_its_own() {
        let mut params = TrainParams::default();
        for m in &mut params.models {
            if let ModelParams::BernoulliNb(p) = m {
                p.scoring.max_tokens = 1;
                p.scoring.min_weight = 0.0;
            }
        }
        let filter = trained(&params);
        let paired = filter.paired_models().expect("the defaults pair");
        let (x, _) = filter.count_vector(b"Subject: cheap lunch\n\nwin pills at noon");
        let decisions = paired.decisions(&x);
        assert_eq!(decisions.of(ModelKind::BernoulliNb), None);
        let mnb = filter
            .model(ModelKind::MultinomialNb)
            .unwrap()
            .model
            .decision(&x);
        assert_eq!(decisions.of(ModelKind::MultinomialNb), Some(mnb));
    }
}
