//! Seeded nonparametric bootstrap with percentile confidence intervals.
//!
//! Items are resampled with replacement: each resample draws `n` item indices uniformly from
//! `0..n` with a ChaCha8 generator seeded by [`BootstrapOptions::seed`]. The items are first put
//! in a canonical (sorted) order, so the intervals depend only on the contingency table and the
//! seed, not on the row order of the input. Percentiles use linear interpolation between order
//! statistics (Hyndman & Fan type 7, numpy's default).

use rand::distr::{Distribution, Uniform};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::agreement::Tally;
use crate::syntax::Cancel;

/// The default seed (`0x5eed`).
pub const DEFAULT_SEED: u64 = 0x5eed;
/// The default number of resamples.
pub const DEFAULT_RESAMPLES: usize = 10_000;

/// Bootstrap settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapOptions {
    /// Number of resamples; 0 disables the bootstrap.
    pub resamples: usize,
    pub seed: u64,
    /// Two-sided confidence level, e.g. 0.95.
    pub level: f64,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions {
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            level: 0.95,
        }
    }
}

/// A percentile interval. `lo`/`hi` are `None` when no resample had the statistic defined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ConfidenceInterval {
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Resamples on which the statistic was defined (the others are dropped).
    pub valid: usize,
}

/// The outcome of a bootstrap run over `K` statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapRun<const K: usize> {
    pub intervals: [ConfidenceInterval; K],
    /// Resamples actually drawn (fewer than requested if cancelled).
    pub completed: usize,
}

/// The `p`-quantile (0 ≤ p ≤ 1) of sorted values by linear interpolation (type 7).
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let p = if p.is_nan() { 0.5 } else { p.clamp(0.0, 1.0) };
    let h = last as f64 * p;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let x_lo = *sorted.get(lo)?;
    let x_hi = *sorted.get(lo + 1).unwrap_or(&x_lo);
    Some(x_lo + frac * (x_hi - x_lo))
}

/// Resamples the `(a, b)` category pairs and evaluates `statistics` on each resample's tally.
/// Polls `cancel` once per resample.
pub fn bootstrap<const K: usize, F>(
    q: usize,
    pairs: &[(usize, usize)],
    options: &BootstrapOptions,
    statistics: F,
    cancel: &Cancel,
) -> BootstrapRun<K>
where
    F: Fn(&Tally) -> [Option<f64>; K],
{
    let empty = ConfidenceInterval {
        lo: None,
        hi: None,
        valid: 0,
    };
    let n = pairs.len();
    if n == 0 || options.resamples == 0 {
        return BootstrapRun {
            intervals: [empty; K],
            completed: 0,
        };
    }
    // Uniform::new fails only for an empty range, excluded above.
    let Ok(index) = Uniform::new(0, n) else {
        return BootstrapRun {
            intervals: [empty; K],
            completed: 0,
        };
    };
    // Canonical order: the distinct cells sorted, each item mapped to its cell.
    let mut items = pairs.to_vec();
    items.sort_unstable();
    let mut cells: Vec<(usize, usize)> = items.clone();
    cells.dedup();
    let item_cell: Vec<usize> = items
        .iter()
        .map(|item| cells.partition_point(|c| c < item))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut values: [Vec<f64>; K] = std::array::from_fn(|_| Vec::with_capacity(options.resamples));
    let mut tally = Tally::new(q);
    let mut counts = vec![0u64; cells.len()];
    let mut completed = 0;
    for _ in 0..options.resamples {
        if cancel.is_cancelled() {
            break;
        }
        counts.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            let drawn = item_cell.get(index.sample(&mut rng)).copied().unwrap_or(0);
            if let Some(c) = counts.get_mut(drawn) {
                *c += 1;
            }
        }
        tally.clear();
        for (&(a, b), &count) in cells.iter().zip(&counts) {
            tally.add_many(a, b, count);
        }
        for (store, value) in values.iter_mut().zip(statistics(&tally)) {
            if let Some(v) = value.filter(|v| v.is_finite()) {
                store.push(v);
            }
        }
        completed += 1;
    }
    let alpha = (1.0 - options.level.clamp(0.0, 1.0)) / 2.0;
    let intervals = std::array::from_fn(|k| {
        let Some(store) = values.get_mut(k) else {
            return empty;
        };
        store.sort_by(f64::total_cmp);
        ConfidenceInterval {
            lo: percentile(store, alpha),
            hi: percentile(store, 1.0 - alpha),
            valid: store.len(),
        }
    });
    BootstrapRun {
        intervals,
        completed,
    }
}
