//! Agreement statistics between two raters (an LLM and a reference), McNemar's test for paired
//! comparisons, run-to-run instability and Jaccard similarity of sets.
//!
//! This module is a pure leaf: no I/O, no clock, no global randomness (the bootstrap uses a
//! seeded ChaCha generator), no hash-order dependence, and no panics on any input. The only
//! loop whose length the caller does not bound directly (the bootstrap) polls a
//! [`Cancel`](crate::syntax::Cancel) flag.
//!
//! # Notation
//!
//! Two raters classify the same `n` items into `q` nominal categories. Rater **a** is the rater
//! under evaluation (e.g. the LLM); rater **b** is the reference (e.g. the human consensus or the
//! deterministic analysis). `n_kl` is the number of items that a put in category `k` and b in
//! category `l`; `r_k = Σ_l n_kl` (a's marginal), `c_k = Σ_l n_lk` (b's marginal),
//! `π_k = (r_k + c_k) / 2n` (pooled marginal proportion).
//!
//! `q` is the number of *declared* categories: `--categories` if given, otherwise 2 for binary
//! labels and the number of distinct observed labels (union of both raters) for multi-class
//! labels. Only AC1 and PABAK depend on `q`; a declared category that nobody used leaves Po,
//! kappa, Scott's pi and the per-class scores of the other classes unchanged.
//!
//! # Formulas
//!
//! * Observed agreement: `Po = Σ_k n_kk / n`.
//! * Cohen's kappa (Cohen 1960, *Educ. Psychol. Meas.* 20:37-46):
//!   `Pe = Σ_k (r_k/n)(c_k/n)`, `κ = (Po - Pe) / (1 - Pe)`.
//! * Scott's pi (Scott 1955, *Public Opinion Quarterly* 19:321-325):
//!   `Pe = Σ_k π_k²`, `π = (Po - Pe) / (1 - Pe)`.
//! * Gwet's AC1 (Gwet 2008, *Br. J. Math. Stat. Psychol.* 61:29-48; Gwet 2014, *Handbook of
//!   Inter-Rater Reliability*, 4th ed.): `Pe = 1/(q-1) · Σ_k π_k (1 - π_k)`,
//!   `AC1 = (Po - Pe) / (1 - Pe)`.
//! * PABAK, prevalence- and bias-adjusted kappa (Byrt, Bishop & Carlin 1993, *J. Clin.
//!   Epidemiol.* 46:423-429; for `q` categories it is Bennett, Alpert & Goldstein's S, 1954):
//!   `PABAK = (q·Po - 1) / (q - 1)`; for `q = 2` this is `2·Po - 1`.
//! * Precision, recall, F1 of rater a against reference b, for the positive class (binary) or
//!   each class `k` one-vs-rest (multi-class): `TP = n_kk`, `FP = r_k - n_kk`, `FN = c_k - n_kk`,
//!   `precision = TP/(TP+FP)`, `recall = TP/(TP+FN)`, `F1 = 2TP/(2TP+FP+FN)` (equal to the
//!   harmonic mean of precision and recall whenever that is defined, and 0 when `TP = 0` but
//!   `FP + FN > 0`). Macro averages are means over the classes whose score is defined
//!   (scikit-learn's `zero_division=nan` convention).
//! * Decision bias (research notes §2, after the PolyHuman study): `Acc(pos)` is a's accuracy on
//!   the items that b labels positive (= recall), `Acc(neg)` its accuracy on the items b labels
//!   negative (= specificity), `Gap = Acc(neg) - Acc(pos)`. A positive gap means a over-rejects.
//!
//! Every ratio whose denominator is 0 is `None` (`null` in JSON) and the report says why in its
//! `notes`. Chance-corrected coefficients are computed from integer counts (numerator and
//! denominator multiplied through by `n²`) so that "denominator is 0" is an exact test.
//!
//! # Inference
//!
//! * Bootstrap confidence intervals ([`bootstrap`]): items are resampled with replacement
//!   (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13, percentile method);
//!   10,000 resamples, ChaCha8 seeded with `0x5eed` by default; the quantiles use linear
//!   interpolation between order statistics (Hyndman & Fan 1996 type 7, numpy's default).
//!   Resamples on which a coefficient is undefined are dropped for that coefficient and counted.
//! * McNemar's test ([`mcnemar`]; McNemar 1947, *Psychometrika* 12:153-157) on the discordant
//!   pairs `b` (only rater a correct) and `c` (only rater b correct): exact two-sided binomial
//!   `p = min(1, 2·P(X ≤ min(b,c)))`, `X ~ Bin(b+c, 1/2)` when `b + c < 25`, otherwise the
//!   chi-square statistic with Edwards' continuity correction `(|b-c| - 1)² / (b+c)` on 1
//!   degree of freedom. Both follow R's `mcnemar.test` / statsmodels' `mcnemar` exactly
//!   (including not clamping `|b-c| - 1` at 0).
//!
//! # Other measures
//!
//! * Run-to-run instability ([`instability`]; research notes §2): over items rated by every
//!   run, the share whose verdict is not unanimous, and the mean share of runs that disagree
//!   with the item's majority verdict (`1 - max_k count_k / runs`).
//! * Jaccard similarity of sets ([`jaccard()`]): `|A ∩ B| / |A ∪ B|`, undefined for two empty
//!   sets; summarised as the mean over items and the pooled (micro) ratio.

pub mod agreement;
pub mod bootstrap;
pub mod input;
pub mod instability;
pub mod jaccard;
pub mod labels;
pub mod mcnemar;
pub mod report;

pub use agreement::{Agreement, ClassScores, Tally};
pub use bootstrap::{BootstrapOptions, ConfidenceInterval};
pub use input::{Cell, InputFormat, Table};
pub use instability::Instability;
pub use jaccard::{jaccard, JaccardSummary};
pub use labels::{LabelError, LabelSpace, LabelledPairs};
pub use mcnemar::{McNemar, McNemarMethod};
pub use report::{StatsOptions, StatsReport};

/// A label shortened for messages and notes (at most 40 characters, `…` marks a cut).
pub fn short_label(label: &str) -> String {
    const MAX: usize = 40;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let head: String = label.chars().take(MAX - 1).collect();
        format!("{head}…")
    }
}

/// `num / den`, or `None` when the denominator is 0.
pub(crate) fn ratio(num: f64, den: f64) -> Option<f64> {
    if den == 0.0 {
        None
    } else {
        Some(num / den)
    }
}

/// `num / den` for integer counts, or `None` when the denominator is 0.
pub(crate) fn ratio_u(num: u64, den: u64) -> Option<f64> {
    ratio(num as f64, den as f64)
}
