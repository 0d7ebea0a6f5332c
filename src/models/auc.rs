//! The area under the ROC curve, the one measure both model selection (training picks the
//! active model by it, see `crate::models::FoldDecisions`) and evaluation (`crate::eval`)
//! rank classifiers by. It lives with the models so training needs nothing from `eval`.

use crate::label::Label;

/// Area under the ROC curve: the probability that a random spam scores above a random ham,
/// ties counting one half (Mann-Whitney U / (n_spam * n_ham)). NaN if a class is missing.
pub fn auc(scores: &[f64], labels: &[Label]) -> f64 {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let (mut rank_sum_spam, mut n_spam) = (0.0, 0.0);
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && scores[order[j + 1]] == scores[order[i]] {
            j += 1;
        }
        // Ranks i+1 ..= j+1 are tied: each gets their mean.
        let mean_rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            if labels[k] == Label::Spam {
                rank_sum_spam += mean_rank;
                n_spam += 1.0;
            }
        }
        i = j + 1;
    }
    let n_ham = scores.len() as f64 - n_spam;
    if n_spam == 0.0 || n_ham == 0.0 {
        return f64::NAN;
    }
    (rank_sum_spam - n_spam * (n_spam + 1.0) / 2.0) / (n_spam * n_ham)
}
