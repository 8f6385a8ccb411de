//! Run-to-run instability of repeated verdicts on the same items (research notes §2: 18% of
//! instances changed verdict across three identical runs).

use serde::Serialize;

use super::ratio_u;

/// Instability over items that every run labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Instability {
    /// Items considered.
    pub n: u64,
    /// Largest number of runs per item.
    pub runs: usize,
    /// Items whose runs do not all give the same verdict.
    pub unstable: u64,
    /// `unstable / n`.
    pub unstable_share: Option<f64>,
    /// Mean over items of the share of runs disagreeing with the item's majority verdict,
    /// `1 - (count of the most frequent verdict) / runs`. Well defined under ties.
    pub mean_disagreement: Option<f64>,
    /// Items whose most frequent verdict is tied (no strict majority).
    pub majority_ties: u64,
}

/// Computes instability from per-item verdicts (category indices, one per run). Items with
/// fewer than one verdict are ignored.
pub fn instability(items: &[Vec<usize>]) -> Instability {
    let mut n = 0u64;
    let mut runs = 0usize;
    let mut unstable = 0u64;
    let mut ties = 0u64;
    let mut disagreement_sum = 0.0;
    let mut sorted = Vec::new();
    for verdicts in items {
        if verdicts.is_empty() {
            continue;
        }
        n += 1;
        runs = runs.max(verdicts.len());
        sorted.clear();
        sorted.extend_from_slice(verdicts);
        sorted.sort_unstable();
        // Longest run of equal verdicts and how many verdicts reach it.
        let (mut best, mut best_count, mut current) = (0usize, 0usize, 0usize);
        for (i, v) in sorted.iter().enumerate() {
            current = if i > 0 && sorted.get(i - 1) == Some(v) {
                current + 1
            } else {
                1
            };
            if current > best {
                best = current;
                best_count = 1;
            } else if current == best {
                best_count += 1;
            }
        }
        if best < verdicts.len() {
            unstable += 1;
        }
        if best_count > 1 {
            ties += 1;
        }
        disagreement_sum += 1.0 - best as f64 / verdicts.len() as f64;
    }
    Instability {
        n,
        runs,
        unstable,
        unstable_share: ratio_u(unstable, n),
        mean_disagreement: if n == 0 {
            None
        } else {
            Some(disagreement_sum / n as f64)
        },
        majority_ties: ties,
    }
}
