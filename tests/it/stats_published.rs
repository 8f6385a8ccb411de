//! Published worked examples. Each test names the source of its expected numbers; where the
//! source prints rounded values the tolerance is half a unit of the last printed digit, and
//! hand-derived exact fractions are checked to 1e-12.

use crate::stats_support;

use crosscheck::stats::agreement::{agreement, Tally};
use crosscheck::stats::mcnemar::{mcnemar_test, McNemarMethod};
use stats_support::{assert_close, fixture, num, stats, stats_json};

/// Wikipedia, "Cohen's kappa", section "Simple example": 50 grant proposals, both say Yes 20,
/// A Yes / B No 5, A No / B Yes 10, both No 15; "po = 0.7, pe = 0.5, kappa = 0.4".
#[test]
fn cohen_kappa_wikipedia_simple_example_is_0_4() {
    let r = stats_json(&fixture("wikipedia_kappa.csv"), "rater_a", "rater_b", &[]);
    assert_eq!(num(&r, "n"), 50.0);
    assert_close(num(&r, "po"), 0.7, 1e-12, "po");
    assert_close(num(&r, "kappa"), 0.4, 1e-12, "kappa");
    // Byrt, Bishop & Carlin (1993): PABAK = 2 Po - 1 = 0.4.
    assert_close(num(&r, "pabak"), 0.4, 1e-12, "pabak");
    // Hand-derived from the same table: pooled Yes share = (25 + 30) / 100 = 0.55;
    // Scott: Pe = 0.55² + 0.45² = 0.505, pi = 0.195 / 0.495;
    // Gwet: Pe = 2 · 0.55 · 0.45 = 0.495, AC1 = 0.205 / 0.505.
    assert_close(num(&r, "scott_pi"), 0.195 / 0.495, 1e-12, "scott_pi");
    assert_close(num(&r, "ac1"), 0.205 / 0.505, 1e-12, "ac1");
    // Rater a's precision = 20 / 25, recall = 20 / 30, F1 = 40 / 55.
    assert_close(num(&r, "precision"), 0.8, 1e-12, "precision");
    assert_close(num(&r, "recall"), 2.0 / 3.0, 1e-12, "recall");
    assert_close(num(&r, "f1"), 40.0 / 55.0, 1e-12, "f1");
}

/// Wikipedia, "Cohen's kappa", section "Same percentages but different numbers": two tables
/// with Po = 0.60 each, kappa 0.1304 (45/15/25/15) and 0.2593 (25/35/5/35).
#[test]
fn cohen_kappa_wikipedia_same_agreement_different_kappa() {
    let first = stats_json(
        &fixture("wikipedia_same_po_1.csv"),
        "rater_a",
        "rater_b",
        &[],
    );
    let second = stats_json(
        &fixture("wikipedia_same_po_2.csv"),
        "rater_a",
        "rater_b",
        &[],
    );
    assert_close(num(&first, "po"), 0.6, 1e-12, "po 1");
    assert_close(num(&second, "po"), 0.6, 1e-12, "po 2");
    assert_close(num(&first, "kappa"), 0.1304, 5e-5, "kappa 1");
    assert_close(num(&second, "kappa"), 0.2593, 5e-5, "kappa 2");
    // Byrt et al. (1993): PABAK depends on Po alone, 2 · 0.6 - 1 = 0.2 for both tables.
    assert_close(num(&first, "pabak"), 0.2, 1e-12, "pabak 1");
    assert_close(num(&second, "pabak"), 0.2, 1e-12, "pabak 2");
}

/// Feinstein & Cicchetti (1990), "High agreement but low kappa: I. The problems of two
/// paradoxes", J. Clin. Epidemiol. 43:543-549: both tables have Po = 0.85, kappa is 0.70 for
/// the balanced table (40/9/6/45) and 0.32 for the skewed one (80/10/5/5). Byrt, Bishop &
/// Carlin (1993) proposed PABAK = 2 Po - 1 = 0.70 for exactly this prevalence paradox.
#[test]
fn kappa_prevalence_paradox_feinstein_cicchetti_and_pabak() {
    let balanced = stats_json(
        &fixture("feinstein_balanced.csv"),
        "rater_a",
        "rater_b",
        &[],
    );
    let skewed = stats_json(&fixture("feinstein_skewed.csv"), "rater_a", "rater_b", &[]);
    assert_close(num(&balanced, "po"), 0.85, 1e-12, "po balanced");
    assert_close(num(&skewed, "po"), 0.85, 1e-12, "po skewed");
    assert_close(num(&balanced, "kappa"), 0.70, 5e-3, "kappa balanced");
    assert_close(num(&skewed, "kappa"), 0.32, 5e-3, "kappa skewed");
    assert_close(num(&balanced, "pabak"), 0.70, 1e-12, "pabak balanced");
    assert_close(num(&skewed, "pabak"), 0.70, 1e-12, "pabak skewed");
    // AC1 resists the paradox: it stays high on the skewed table (hand-derived: pooled Yes
    // share 0.875, Pe = 2 · 0.875 · 0.125 = 0.21875, AC1 = 0.63125 / 0.78125 = 0.808).
    assert_close(num(&skewed, "ac1"), 0.63125 / 0.78125, 1e-12, "ac1 skewed");
}

/// Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., pregnancy-type table of 100
/// women by two abstractors (Ectopic / AIU / NIU), as reproduced in the documentation of the
/// irrCAC package (`CAC(table_cont3x3abstractors()).gwet()`): AC1 = 0.84933, Pa = 0.89,
/// Pe = 0.26992.
#[test]
fn gwet_ac1_handbook_abstractors_example() {
    let r = stats_json(
        &fixture("gwet_abstractors.csv"),
        "abstractor_1",
        "abstractor_2",
        &["--categories", "Ectopic,AIU,NIU"],
    );
    assert_eq!(r["mode"], "multiclass");
    assert_eq!(num(&r, "q"), 3.0);
    assert_close(num(&r, "po"), 0.89, 1e-12, "pa");
    assert_close(num(&r, "ac1"), 0.84933, 5e-6, "ac1");
    // Hand-derived from the same table: Cohen Pe = (13·13 + 27·24 + 60·63) / 100² = 0.4597;
    // Scott Pe = 0.13² + 0.255² + 0.615² = 0.46015; PABAK = (3 · 0.89 - 1) / 2 = 0.835.
    assert_close(
        num(&r, "kappa"),
        (0.89 - 0.4597) / (1.0 - 0.4597),
        1e-12,
        "kappa",
    );
    assert_close(
        num(&r, "scott_pi"),
        (0.89 - 0.46015) / (1.0 - 0.46015),
        1e-12,
        "scott_pi",
    );
    assert_close(num(&r, "pabak"), 0.835, 1e-12, "pabak");
    // Same result through the library API on the count matrix.
    let t = Tally::from_matrix(&[vec![13, 0, 0], vec![0, 20, 7], vec![0, 4, 56]]);
    let a = agreement(&t);
    assert_close(a.ac1.expect("ac1 defined"), 0.84933, 5e-6, "library ac1");
}

/// R documentation of `mcnemar.test` (Agresti 1990, Categorical Data Analysis, p. 350,
/// presidential approval ratings): discordant counts 150 and 86 give "McNemar's chi-squared =
/// 16.818, df = 1, p-value = 4.115e-05" (continuity corrected).
#[test]
fn mcnemar_chi_square_agresti_presidential_approval() {
    let (method, statistic, p) = mcnemar_test(150, 86);
    assert_eq!(method, McNemarMethod::ChiSquareCorrected);
    assert_close(statistic, 16.818, 5e-4, "statistic");
    assert_close(p, 4.115e-5, 5e-9, "p-value");
    let out = stats(&[
        "--mcnemar",
        "--input",
        &fixture("mcnemar_agresti.csv"),
        "--a",
        "model_a",
        "--b",
        "model_b",
        "--truth",
        "truth",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(out["a_only_correct"], 150);
    assert_eq!(out["b_only_correct"], 86);
    assert_eq!(out["method"], "chi_square_corrected");
    assert_close(num(&out, "statistic"), 16.818, 5e-4, "cli statistic");
    assert_close(num(&out, "p_value"), 4.115e-5, 5e-9, "cli p-value");
}

/// Cardillo (2007), MATLAB Central "McNemar test" example (drug vs placebo, discordant 59 and
/// 121): "McNemar chi-square (with Yates'es correction) = 20.672222".
#[test]
fn mcnemar_chi_square_cardillo_example() {
    let (_, statistic, _) = mcnemar_test(59, 121);
    assert_close(statistic, 20.672222, 5e-7, "statistic");
}

/// Exact McNemar, hand-derived: b = 1, c = 6, X ~ Bin(7, 1/2): P(X <= 1) = (1 + 7) / 128,
/// two-sided p = 16 / 128 = 0.125; the statistic reported is min(b, c) = 1.
#[test]
fn mcnemar_exact_binomial_hand_derived() {
    let (method, statistic, p) = mcnemar_test(1, 6);
    assert_eq!(method, McNemarMethod::ExactBinomial);
    assert_eq!(statistic, 1.0);
    assert_close(p, 0.125, 1e-12, "p-value");
    // Symmetric p = 1 when the discordant counts are equal: 2 · P(X <= 3 | n = 6) > 1.
    let (_, _, p) = mcnemar_test(3, 3);
    assert_eq!(p, 1.0);
}
