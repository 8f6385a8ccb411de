//! McNemar's test for two raters scored against the same ground truth (see the
//! [module docs](super) for the formulas and references).

use serde::Serialize;
use statrs::distribution::{Binomial, ChiSquared, ContinuousCDF, DiscreteCDF};

use super::ratio_u;

/// Below this many discordant pairs the exact binomial test is used.
pub const EXACT_BELOW: u64 = 25;

/// Which form of the test was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McNemarMethod {
    /// Two-sided exact binomial test; the statistic is `min(b, c)`.
    ExactBinomial,
    /// Chi-square with continuity correction, 1 degree of freedom.
    ChiSquareCorrected,
}

/// Result of McNemar's test on paired correctness of raters a and b.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McNemar {
    pub n: u64,
    pub both_correct: u64,
    /// Discordant pairs where only a is correct (`b` in McNemar's notation).
    pub a_only_correct: u64,
    /// Discordant pairs where only b is correct (`c`).
    pub b_only_correct: u64,
    pub both_wrong: u64,
    pub discordant: u64,
    pub method: McNemarMethod,
    pub statistic: f64,
    pub p_value: f64,
    pub acc_a: Option<f64>,
    pub acc_b: Option<f64>,
}

/// The test on the discordant counts alone: `(method, statistic, p_value)`.
pub fn mcnemar_test(a_only_correct: u64, b_only_correct: u64) -> (McNemarMethod, f64, f64) {
    let (b, c) = (a_only_correct, b_only_correct);
    let discordant = b.saturating_add(c);
    if discordant < EXACT_BELOW {
        let k = b.min(c);
        // Binomial::new only fails for an invalid probability; 0.5 is valid.
        let tail = Binomial::new(0.5, discordant).map_or(1.0, |d| d.cdf(k));
        (
            McNemarMethod::ExactBinomial,
            k as f64,
            (2.0 * tail).min(1.0),
        )
    } else {
        let diff = b.abs_diff(c) as f64 - 1.0;
        let statistic = diff * diff / discordant as f64;
        // ChiSquared::new only fails for a non-positive degree of freedom; 1 is valid.
        let p = ChiSquared::new(1.0).map_or(1.0, |d| d.sf(statistic));
        (McNemarMethod::ChiSquareCorrected, statistic, p)
    }
}

/// McNemar's test over items given as `(a_correct, b_correct)`.
pub fn mcnemar(outcomes: &[(bool, bool)]) -> McNemar {
    let mut counts = [0u64; 4];
    for &(a, b) in outcomes {
        let i = usize::from(a) * 2 + usize::from(b);
        if let Some(c) = counts.get_mut(i) {
            *c += 1;
        }
    }
    let [both_wrong, b_only_correct, a_only_correct, both_correct] = counts;
    let n = outcomes.len() as u64;
    let (method, statistic, p_value) = mcnemar_test(a_only_correct, b_only_correct);
    McNemar {
        n,
        both_correct,
        a_only_correct,
        b_only_correct,
        both_wrong,
        discordant: a_only_correct + b_only_correct,
        method,
        statistic,
        p_value,
        acc_a: ratio_u(both_correct + a_only_correct, n),
        acc_b: ratio_u(both_correct + b_only_correct, n),
    }
}
