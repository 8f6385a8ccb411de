//! Self-consistency and juries (research notes §2: 18% of verdicts flipped across three
//! identical runs; majority voting over runs and ensembles of models fixed part of it).
//!
//! * [`majority`]: the plurality verdict of n samples, if unique, and the *instability*: the
//!   share of samples that do not give it (`(n − max_count) / n`; samples that failed count as
//!   disagreeing). With a tie there is no majority and the instability is still
//!   `(n − max_count) / n`.
//! * [`plurality`]: the most frequent label and its count, ties going to the smallest label
//!   (the vote of `flaky` and `eval`, which report stability separately).
//! * [`item_majority`]: per-question majority of yes/no/unknown verdicts (unknown counts as
//!   no, so the vote is yes vs not-yes; a tie gives unknown), and the mean over questions of
//!   the share of samples disagreeing with the question's majority.
//! * [`jury`]: combines several models' verdicts by majority (more than half of ALL jurors,
//!   abstentions included) or unanimity (every juror gives the same verdict).

use crate::llm::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The plurality key if unique, and the instability (see the module docs). `failed` samples
/// count in `n` but vote for nothing.
pub fn majority<K: Ord + Clone>(keys: &[K], failed: usize) -> (Option<K>, f64) {
    let n = keys.len() + failed;
    if n == 0 {
        return (None, 0.0);
    }
    let mut counts: BTreeMap<&K, usize> = BTreeMap::new();
    for k in keys {
        *counts.entry(k).or_insert(0) += 1;
    }
    let max = counts.values().copied().max().unwrap_or(0);
    let winners: Vec<&&K> = counts
        .iter()
        .filter(|(_, c)| **c == max)
        .map(|(k, _)| k)
        .collect();
    let instability = (n - max) as f64 / n as f64;
    match winners.as_slice() {
        [only] if max > 0 => (Some((**only).clone()), instability),
        _ => (None, instability),
    }
}

/// The most frequent vote and its count, `None` for no votes. Unlike [`majority`], a tie
/// still has a winner: the smallest of the tied votes (`flaky` and `eval` label this way).
pub fn plurality<T: Ord + Clone>(votes: &[T]) -> Option<(T, usize)> {
    let mut counts: BTreeMap<&T, usize> = BTreeMap::new();
    for v in votes {
        *counts.entry(v).or_insert(0) += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(v, c)| (v.clone(), c))
}

/// Per-question majority over samples (each sample: question id → verdict; a missing id is
/// unknown) and the mean per-question instability. `failed` samples answer nothing.
pub fn item_majority(
    samples: &[BTreeMap<u64, Verdict>],
    questions: &[u64],
    failed: usize,
) -> (BTreeMap<u64, Verdict>, f64) {
    let n = samples.len() + failed;
    let mut out = BTreeMap::new();
    if n == 0 || questions.is_empty() {
        for q in questions {
            out.insert(*q, Verdict::Unknown);
        }
        return (out, 0.0);
    }
    let mut total = 0.0;
    for q in questions {
        let yes = samples
            .iter()
            .filter(|s| s.get(q).is_some_and(|v| v.is_positive()))
            .count();
        let not_yes = n - yes;
        let (verdict, agreeing) = if yes > not_yes {
            (Verdict::Yes, yes)
        } else if not_yes > yes {
            // The majority says no; unknown answers count as no, failed samples do not agree.
            let no = samples.len() - yes;
            let explicit_no = samples
                .iter()
                .filter(|s| s.get(q) == Some(&Verdict::No))
                .count();
            let v = if explicit_no * 2 > no {
                Verdict::No
            } else {
                Verdict::Unknown
            };
            (v, no)
        } else {
            (Verdict::Unknown, yes.max(not_yes))
        };
        out.insert(*q, verdict);
        total += (n - agreeing.min(n)) as f64 / n as f64;
    }
    (out, total / questions.len() as f64)
}

/// How a jury decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JuryRule {
    #[default]
    Majority,
    Unanimity,
}

/// The jury's verdict from the jurors' verdicts (`None` = abstained: failed or unstable).
pub fn jury<K: Ord + Clone>(verdicts: &[Option<K>], rule: JuryRule) -> Option<K> {
    let n = verdicts.len();
    if n == 0 {
        return None;
    }
    match rule {
        JuryRule::Unanimity => {
            let first = verdicts.first()?.clone()?;
            verdicts
                .iter()
                .all(|v| v.as_ref() == Some(&first))
                .then_some(first)
        }
        JuryRule::Majority => {
            let mut counts: BTreeMap<&K, usize> = BTreeMap::new();
            for v in verdicts.iter().flatten() {
                *counts.entry(v).or_insert(0) += 1;
            }
            counts
                .into_iter()
                .find(|(_, c)| c * 2 > n)
                .map(|(k, _)| k.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use Verdict::*;

    #[test]
    fn plurality_counts_and_breaks_ties_towards_the_smallest_vote() {
        assert_eq!(plurality::<u8>(&[]), None);
        assert_eq!(plurality(&[3, 1, 3]), Some((3, 2)));
        assert_eq!(plurality(&[Some("b"), None, Some("a")]), Some((None, 1)));
        assert_eq!(plurality(&["b", "a", "b", "a"]), Some(("a", 2)));
    }

    #[test]
    fn majority_and_instability() {
        assert_eq!(majority(&[true, true, false], 0), (Some(true), 1.0 / 3.0));
        assert_eq!(majority(&[true], 0), (Some(true), 0.0));
        assert_eq!(majority(&[true, false], 0), (None, 0.5));
        assert_eq!(majority::<bool>(&[], 0), (None, 0.0));
        // A failed sample disagrees.
        assert_eq!(majority(&[false, false], 1), (Some(false), 1.0 / 3.0));
        assert_eq!(majority::<bool>(&[], 2), (None, 1.0));
        let (k, i) = majority(&["io", "time", "io", "network", "io"], 0);
        assert_eq!(k, Some("io"));
        assert!((i - 0.4).abs() < 1e-12);
    }

    #[test]
    fn item_majority_counts_unknown_as_no() {
        let s = |v: &[(u64, Verdict)]| v.iter().copied().collect::<BTreeMap<_, _>>();
        let samples = vec![
            s(&[(1, Yes), (2, No), (3, Unknown)]),
            s(&[(1, Yes), (2, Unknown), (3, Yes)]),
            s(&[(1, No), (2, No)]),
        ];
        let (m, inst) = item_majority(&samples, &[1, 2, 3], 0);
        assert_eq!(m[&1], Yes);
        assert_eq!(m[&2], No);
        // Question 3: one yes, one unknown, one missing: not-yes wins, but no explicit no
        // majority among the not-yes answers: unknown.
        assert_eq!(m[&3], Unknown);
        // Disagreement: q1 1/3, q2 0, q3 1/3.
        assert!((inst - 2.0 / 9.0).abs() < 1e-12);
        let (m, inst) = item_majority(&samples[..2], &[3], 0);
        assert_eq!(m[&3], Unknown);
        assert_eq!(inst, 0.5);
    }

    #[test]
    fn jury_rules() {
        let v = [Some(true), Some(true), None];
        assert_eq!(jury(&v, JuryRule::Majority), Some(true));
        assert_eq!(jury(&v, JuryRule::Unanimity), None);
        assert_eq!(jury(&[Some(true), Some(false)], JuryRule::Majority), None);
        assert_eq!(jury(&[Some(1), Some(1)], JuryRule::Unanimity), Some(1));
        // Abstentions count in the denominator: 1 of 3 is no majority.
        assert_eq!(jury(&[Some(true), None, None], JuryRule::Majority), None);
        assert_eq!(jury::<bool>(&[], JuryRule::Majority), None);
    }
}
