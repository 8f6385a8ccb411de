//! Scores for the question-based and set-valued tasks: F1 for data dependency and tainted
//! variables, Jaccard for points-to sets (paper 000, section 3.6.3; this project's
//! operationalisation, including the pass thresholds, which the paper does not define).
//!
//! # F1 over yes/no/unknown verdicts (data dependency, taint)
//!
//! Each question has the analyzer's answer (yes/no) and the LLM's verdict (yes/no/unknown);
//! unknown counts as no (research notes §1). With TP = both yes, FP = LLM yes and analyzer
//! no, FN = LLM no/unknown and analyzer yes:
//!
//! ```text
//! F1 = 2·TP / (2·TP + FP + FN)          (= 1 when TP + FP + FN = 0: nothing positive on either side)
//! precision = TP / (TP + FP), recall = TP / (TP + FN)   (null when the denominator is 0)
//! ```
//!
//! `2TP / (2TP + FP + FN)` equals `2PR / (P + R)` whenever both are defined and avoids 0/0.
//! Pass iff `F1 ≥ f1` (default 0.80).
//!
//! *Worked example.* Questions `c←a` (analyzer yes), `c←b` (yes), `b←c` (no), `d←a` (no).
//! The LLM says yes, unknown, yes, no: TP 1 (`c←a`), FN 1 (`c←b`, unknown counts as no),
//! FP 1 (`b←c`), TN 1. F1 = 2/(2+1+1) = 0.50, precision 0.50, recall 0.50: fail.
//!
//! # Jaccard over points-to facts
//!
//! A points-to answer is a map pointer → set of targets; its *facts* are the pairs
//! `(pointer, target)`. With `F_R`, `F_M` the reference and candidate facts:
//!
//! ```text
//! jaccard = |F_R ∩ F_M| / |F_R ∪ F_M|                               (= 1 when both are empty)
//! mean_pointer_jaccard = mean over pointers p with a non-empty set on either side of
//!                        |T_R(p) ∩ T_M(p)| / |T_R(p) ∪ T_M(p)|      (= 1 without pointers)
//! ```
//!
//! `jaccard` decides: pass iff `jaccard ≥ jaccard` threshold (default 0.80);
//! `mean_pointer_jaccard` (the paper's per-pointer view) is reported alongside.
//!
//! *Worked example.* Reference `p → {x, y}`, `q → {heap@4}`; candidate `p → {x}`,
//! `q → {heap@4}`, `r → {z}`. Facts: R = {(p,x), (p,y), (q,heap@4)}, M = {(p,x), (q,heap@4),
//! (r,z)}: intersection 2, union 4, `jaccard = 0.50`; per pointer p 1/2, q 1, r 0:
//! `mean_pointer_jaccard = 0.50`. Fail.

use crate::llm::Verdict;
use crate::stats::jaccard;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Pass thresholds (inclusive lower bounds) for F1 and Jaccard.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetThresholds {
    pub f1: f64,
    pub jaccard: f64,
}

impl Default for SetThresholds {
    /// 0.80 for both (this project's choice; see the module docs).
    fn default() -> Self {
        SetThresholds {
            f1: 0.80,
            jaccard: 0.80,
        }
    }
}

/// F1 and the confusion counts of yes/no/unknown verdicts against the analyzer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictScores {
    pub tp: usize,
    pub fp: usize,
    #[serde(rename = "fn")]
    pub fn_: usize,
    pub tn: usize,
    /// LLM verdicts that were unknown (counted as no).
    pub unknown: usize,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: f64,
    pub accuracy: f64,
    pub pass: bool,
    pub threshold: f64,
}

/// Scores `(analyzer says yes, LLM verdict)` pairs.
pub fn score_verdicts(pairs: &[(bool, Verdict)], threshold: f64) -> VerdictScores {
    let (mut tp, mut fp, mut fn_, mut tn, mut unknown) = (0, 0, 0, 0, 0);
    for &(reference, verdict) in pairs {
        if verdict == Verdict::Unknown {
            unknown += 1;
        }
        match (reference, verdict.is_positive()) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fn_ += 1,
            (false, false) => tn += 1,
        }
    }
    let f1 = if tp + fp + fn_ == 0 {
        1.0
    } else {
        2.0 * tp as f64 / (2 * tp + fp + fn_) as f64
    };
    let precision = (tp + fp > 0).then(|| tp as f64 / (tp + fp) as f64);
    let recall = (tp + fn_ > 0).then(|| tp as f64 / (tp + fn_) as f64);
    let total = pairs.len();
    let accuracy = if total == 0 {
        1.0
    } else {
        (tp + tn) as f64 / total as f64
    };
    VerdictScores {
        tp,
        fp,
        fn_,
        tn,
        unknown,
        precision,
        recall,
        f1,
        accuracy,
        pass: f1 + super::THRESHOLD_EPSILON >= threshold,
        threshold,
    }
}

/// Points-to agreement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointsToScores {
    pub jaccard: f64,
    pub mean_pointer_jaccard: f64,
    pub pass: bool,
    pub threshold: f64,
    /// Facts only the reference has / only the candidate has (sorted, at most 64 each).
    pub missing: Vec<(String, String)>,
    pub extra: Vec<(String, String)>,
}

/// A points-to map: pointer → targets.
pub type PointsToMap = BTreeMap<String, BTreeSet<String>>;

fn facts(m: &PointsToMap) -> BTreeSet<(String, String)> {
    m.iter()
        .flat_map(|(p, ts)| ts.iter().map(move |t| (p.clone(), t.clone())))
        .collect()
}

/// Scores a candidate points-to map against the reference.
pub fn score_points_to(
    reference: &PointsToMap,
    candidate: &PointsToMap,
    threshold: f64,
) -> PointsToScores {
    let fr = facts(reference);
    let fm = facts(candidate);
    let j = jaccard(&fr, &fm).unwrap_or(1.0);
    let empty = BTreeSet::new();
    let pointers: BTreeSet<&String> = reference
        .iter()
        .chain(candidate.iter())
        .filter(|(_, ts)| !ts.is_empty())
        .map(|(p, _)| p)
        .collect();
    let mean = if pointers.is_empty() {
        1.0
    } else {
        pointers
            .iter()
            .map(|p| {
                let a = reference.get(*p).unwrap_or(&empty);
                let b = candidate.get(*p).unwrap_or(&empty);
                jaccard(a, b).unwrap_or(1.0)
            })
            .sum::<f64>()
            / pointers.len() as f64
    };
    PointsToScores {
        jaccard: j,
        mean_pointer_jaccard: mean,
        pass: j + super::THRESHOLD_EPSILON >= threshold,
        threshold,
        missing: fr.difference(&fm).take(64).cloned().collect(),
        extra: fm.difference(&fr).take(64).cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    #[test]
    fn f1_worked_example() {
        let s = score_verdicts(
            &[(true, Yes), (true, Unknown), (false, Yes), (false, No)],
            0.8,
        );
        assert_eq!((s.tp, s.fn_, s.fp, s.tn, s.unknown), (1, 1, 1, 1, 1));
        assert_eq!(s.f1, 0.5);
        assert_eq!(s.precision, Some(0.5));
        assert_eq!(s.recall, Some(0.5));
        assert_eq!(s.accuracy, 0.5);
        assert!(!s.pass);
    }

    #[test]
    fn f1_edge_cases() {
        // Nothing positive on either side: perfect agreement.
        let s = score_verdicts(&[(false, No), (false, Unknown)], 0.8);
        assert_eq!(s.f1, 1.0);
        assert_eq!((s.precision, s.recall), (None, None));
        assert!(s.pass);
        // All unknown against positives: F1 0.
        let s = score_verdicts(&[(true, Unknown), (true, Unknown)], 0.8);
        assert_eq!(s.f1, 0.0);
        assert_eq!(s.precision, None);
        // No questions at all.
        let s = score_verdicts(&[], 0.8);
        assert_eq!((s.f1, s.accuracy), (1.0, 1.0));
        // Exactly at the threshold passes: 4 of 5 positives found, no FP -> 8/9 ≥ 0.8.
        let s = score_verdicts(
            &[
                (true, Yes),
                (true, Yes),
                (true, Yes),
                (true, Yes),
                (true, No),
            ],
            0.8,
        );
        assert!((s.f1 - 8.0 / 9.0).abs() < 1e-12 && s.pass);
    }

    fn map(entries: &[(&str, &[&str])]) -> PointsToMap {
        entries
            .iter()
            .map(|(p, ts)| (p.to_string(), ts.iter().map(|t| t.to_string()).collect()))
            .collect()
    }

    #[test]
    fn jaccard_worked_example() {
        let r = map(&[("p", &["x", "y"]), ("q", &["heap@4"])]);
        let m = map(&[("p", &["x"]), ("q", &["heap@4"]), ("r", &["z"])]);
        let s = score_points_to(&r, &m, 0.8);
        assert_eq!(s.jaccard, 0.5);
        assert_eq!(s.mean_pointer_jaccard, 0.5);
        assert!(!s.pass);
        assert_eq!(s.missing, [("p".to_string(), "y".to_string())]);
        assert_eq!(s.extra, [("r".to_string(), "z".to_string())]);
    }

    #[test]
    fn jaccard_edge_cases() {
        let empty = PointsToMap::new();
        let s = score_points_to(&empty, &empty, 0.8);
        assert_eq!((s.jaccard, s.mean_pointer_jaccard), (1.0, 1.0));
        assert!(s.pass);
        let r = map(&[("p", &["x"])]);
        let s = score_points_to(&r, &empty, 0.8);
        assert_eq!((s.jaccard, s.mean_pointer_jaccard), (0.0, 0.0));
        // Empty target lists are not pointers.
        let m = map(&[("p", &["x"]), ("q", &[])]);
        let s = score_points_to(&r, &m, 0.8);
        assert_eq!((s.jaccard, s.mean_pointer_jaccard), (1.0, 1.0));
    }
}
