//! Which models a filter holds and which one answers: the models fitted on tokens are told
//! apart from fusion (which stacks them), and the active model is resolved from the training
//! parameters (`crate::filter::ActiveModel`) and the filter's defaults.

use super::ActiveModel;
use crate::error::{Error, Result};
use crate::models::{FusionParams, ModelKind, ModelParams};

/// The models fitted on tokens, and the fusion settings if fusion is among `models`.
pub(super) fn split_fusion(
    models: &[ModelParams],
) -> Result<(Vec<ModelParams>, Option<FusionParams>)> {
    let mut fusion = None;
    let mut others = Vec::new();
    for p in models {
        match p {
            ModelParams::Fusion(f) if fusion.is_none() => fusion = Some(*f),
            ModelParams::Fusion(_) => return Err(Error::Config("fusion is listed twice".into())),
            other => others.push(*other),
        }
    }
    Ok((others, fusion))
}

/// The active model: `active` if fixed and among `available`, else the first of `preferred`
/// that is available, else the first available. Fails on a fixed model not available.
pub(super) fn resolve_active(
    active: Option<ActiveModel>,
    available: &[ModelKind],
    preferred: &[ModelKind],
) -> Result<ModelKind> {
    match active {
        Some(ActiveModel::Fixed(kind)) if available.contains(&kind) => Ok(kind),
        Some(ActiveModel::Fixed(kind)) => Err(Error::Config(format!(
            "active model {kind} is not among the models"
        ))),
        _ => preferred
            .iter()
            .find(|k| available.contains(k))
            .or(available.first())
            .copied()
            .ok_or_else(|| Error::Config("no model to train".into())),
    }
}

/// `kinds`, then fusion if `fused`: the verdicts a filter can give.
pub(super) fn with_fusion(kinds: &[ModelKind], fused: bool) -> Vec<ModelKind> {
    let mut all = kinds.to_vec();
    if fused {
        all.push(ModelKind::Fusion);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_is_preferred_when_held_and_a_fixed_model_must_be_held() {
        let four = ModelKind::ALL;
        let five = with_fusion(&four, true);
        let prefer = [ModelKind::Fusion, ModelKind::LinearSvm];
        assert_eq!(
            resolve_active(None, &five, &prefer).unwrap(),
            ModelKind::Fusion
        );
        assert_eq!(
            resolve_active(None, &four, &prefer).unwrap(),
            ModelKind::LinearSvm
        );
        let fixed = Some(ActiveModel::Fixed(ModelKind::Fusion));
        assert!(resolve_active(fixed, &four, &prefer).is_err());
        assert!(resolve_active(None, &[], &prefer).is_err());
    }

    #[test]
    fn fusion_listed_twice_is_refused() {
        let f = ModelParams::default_for(ModelKind::Fusion);
        let svm = ModelParams::default_for(ModelKind::LinearSvm);
        let (others, fusion) = split_fusion(&[svm, f]).unwrap();
        assert_eq!((others, fusion.is_some()), (vec![svm], true));
        assert!(split_fusion(&[f, svm, f]).is_err());
    }
}
