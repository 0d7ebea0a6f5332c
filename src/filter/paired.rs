//! Fusion's linear models scored together by a scorer of many messages (see
//! [`LinearPair`]): the linear SVM and logistic regression, where both read binary input (as
//! `train` fits them).

use super::SpamFilter;
use crate::features::SparseVector;
use crate::models::{LinearPair, ModelKind};

/// Two of a filter's models fusion stacks, their functions paired.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairedModels {
    kinds: [ModelKind; 2],
    pair: LinearPair,
}

/// The decisions of a [`PairedModels`] for one message.
pub(crate) struct PairedDecisions {
    kinds: [ModelKind; 2],
    decisions: [f64; 2],
}

impl PairedDecisions {
    /// The decision of model `kind`, if it is one of the pair.
    pub(crate) fn of(&self, kind: ModelKind) -> Option<f64> {
        (self.kinds.iter().position(|&k| k == kind)).map(|i| self.decisions[i])
    }
}

impl PairedModels {
    /// Both models' decisions for a count vector: each model's own, bit for bit.
    pub(crate) fn decisions(&self, counts: &SparseVector) -> PairedDecisions {
        PairedDecisions {
            kinds: self.kinds,
            decisions: self.pair.decisions(counts),
        }
    }
}

impl SpamFilter {
    /// The linear SVM and logistic regression, if fusion stacks both and their functions pair
    /// (see [`LinearPair::new`]), paired as they are now. Only a filter that no longer learns
    /// should keep it: a model that learns changes its function, not the pair.
    pub(crate) fn paired_models(&self) -> Option<PairedModels> {
        let fusion = self.fusion.as_ref()?;
        let linear: Vec<ModelKind> = (fusion.models().iter().copied())
            .filter(|&k| matches!(k, ModelKind::LinearSvm | ModelKind::LogisticRegression))
            .collect();
        let [a, b] = linear[..] else {
            return None;
        };
        let function = |k| self.model(k).map(|m| m.model.function());
        Some(PairedModels {
            kinds: [a, b],
            pair: LinearPair::new(function(a)?, function(b)?)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TrainParams;
    use crate::features::FeatureConfig;
    use crate::label::Label;
    use crate::models::{LogisticRegressionParams, ModelParams};

    /// A filter trained in batch with `params` on a few messages of each class.
    fn trained(params: &TrainParams) -> SpamFilter {
        let texts = [
            ("cheap meds now", Label::Spam),
            ("buy cheap pills", Label::Spam),
            ("win money now, click", Label::Spam),
            ("lunch at noon", Label::Ham),
            ("meeting notes", Label::Ham),
            ("see you at lunch", Label::Ham),
        ];
        let messages = (0..3).flat_map(|i| {
            texts.map(|(t, label)| Ok((format!("Subject: {t} {i}\n\n{t} {i}").into_bytes(), label)))
        });
        SpamFilter::train_stream(messages, params, || {}).unwrap()
    }

    #[test]
    fn the_default_fusion_pairs_its_linear_models_and_they_score_as_alone() {
        let filter = trained(&TrainParams::default());
        let paired = filter.paired_models().expect("the defaults pair");
        assert_eq!(
            paired.kinds,
            [ModelKind::LinearSvm, ModelKind::LogisticRegression]
        );
        for raw in ["Subject: cheap lunch\n\nwin pills at noon", "", "meeting"] {
            let (x, _) = filter.count_vector(raw.as_bytes());
            let decisions = paired.decisions(&x);
            for kind in paired.kinds {
                let alone = filter.model(kind).unwrap().model.decision(&x);
                assert_eq!(decisions.of(kind).map(f64::to_bits), Some(alone.to_bits()));
            }
            assert_eq!(decisions.of(ModelKind::BernoulliNb), None);
        }
    }

    #[test]
    fn linear_models_that_read_other_inputs_are_not_paired() {
        let mut params = TrainParams::default();
        for m in &mut params.models {
            if let ModelParams::LogisticRegression(p) = m {
                *p = LogisticRegressionParams {
                    features: FeatureConfig::TF_IDF_L2,
                    ..*p
                };
            }
        }
        assert!(trained(&params).paired_models().is_none());
    }
}
