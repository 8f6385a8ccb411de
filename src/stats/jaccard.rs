//! Jaccard similarity of sets (e.g. an LLM's call set against the call graph's).

use std::collections::BTreeSet;

use serde::Serialize;

use super::ratio_u;

/// `|A ∩ B| / |A ∪ B|`; `None` when both sets are empty (denominator 0).
pub fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> Option<f64> {
    let inter = a.intersection(b).count() as u64;
    let union = (a.len() + b.len()) as u64 - inter;
    ratio_u(inter, union)
}

/// Jaccard similarity summarised over items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JaccardSummary {
    /// Items with both sets present.
    pub n: u64,
    /// Mean of the per-item Jaccard over items where it is defined.
    pub mean: Option<f64>,
    /// Pooled ratio `Σ |A ∩ B| / Σ |A ∪ B|`.
    pub micro: Option<f64>,
    /// Items whose two sets are equal (including both empty).
    pub exact_matches: u64,
    /// Items where both sets are empty (excluded from `mean`).
    pub both_empty: u64,
}

/// Summarises Jaccard similarity over `(a, b)` set pairs.
pub fn jaccard_summary(items: &[(BTreeSet<String>, BTreeSet<String>)]) -> JaccardSummary {
    let (mut inter_total, mut union_total) = (0u64, 0u64);
    let (mut sum, mut defined) = (0.0, 0u64);
    let (mut exact, mut both_empty) = (0u64, 0u64);
    for (a, b) in items {
        let inter = a.intersection(b).count() as u64;
        let union = (a.len() + b.len()) as u64 - inter;
        inter_total += inter;
        union_total += union;
        if a == b {
            exact += 1;
        }
        match ratio_u(inter, union) {
            Some(j) => {
                sum += j;
                defined += 1;
            }
            None => both_empty += 1,
        }
    }
    JaccardSummary {
        n: items.len() as u64,
        mean: ratio_u(0, defined).map(|_| sum / defined as f64),
        micro: ratio_u(inter_total, union_total),
        exact_matches: exact,
        both_empty,
    }
}
