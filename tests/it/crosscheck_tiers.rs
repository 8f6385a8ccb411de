//! Spec: the tier guarantees, as properties over random inputs.
//!
//! * LLM output never removes a deterministic finding and never changes it (severity
//!   included); it can at most move a finding between `confirmed` and `analyzer-only`.
//! * A proven finding is `confirmed` whatever the LLM says.
//! * An LLM-only claim is never above `llm-only` (`refuted` when contradicted).
//! * End to end: whatever a model answers, the analyzer's facts in the outcome are exactly
//!   the facts computed without any model, every fact stays `confirmed`/`analyzer-only`, and
//!   the check as a whole is never `llm-only` or `refuted`.

use crate::crosscheck_support;

use crosscheck::crosscheck::cache::AnswerCache;
use crosscheck::crosscheck::engine::{fact_keys, CheckSettings};
use crosscheck::crosscheck::record::Tier;
use crosscheck::crosscheck::task::Task;
use crosscheck::crosscheck::tier::{decide_tier, tier_all, Claim, Evidence, LlmStance, Origin};
use crosscheck_support::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A deterministic finding as the taint/rules layer will produce them.
#[derive(Debug, Clone, PartialEq)]
struct Finding {
    rule: String,
    line: usize,
    severity: &'static str,
    message: String,
}

const STANCES: [LlmStance; 5] = [
    LlmStance::NotAsked,
    LlmStance::Agrees,
    LlmStance::Disagrees,
    LlmStance::Unstable,
    LlmStance::Failed,
];
const SEVERITIES: [&str; 3] = ["error", "warning", "note"];

/// Findings `(finding, key, proven)`, LLM stances per key, LLM claims.
type Case = (
    Vec<(Finding, String, bool)>,
    BTreeMap<String, LlmStance>,
    Vec<Claim>,
);

fn random_case(rng: &mut ChaCha8Rng) -> Case {
    let n = rng.random_range(0..12usize);
    let findings: Vec<(Finding, String, bool)> = (0..n)
        .map(|i| {
            let f = Finding {
                rule: format!("rule-{}", rng.random_range(0..4u8)),
                line: rng.random_range(1..500usize),
                severity: SEVERITIES[rng.random_range(0..3usize)],
                message: format!("m{i}"),
            };
            // Keys may repeat: two findings can share a fact.
            let key = format!("k{}", rng.random_range(0..10u8));
            (f, key, rng.random_bool(0.2))
        })
        .collect();
    let mut stances = BTreeMap::new();
    for _ in 0..rng.random_range(0..12usize) {
        stances.insert(
            format!("k{}", rng.random_range(0..12u8)),
            STANCES[rng.random_range(0..5usize)],
        );
    }
    let claims = (0..rng.random_range(0..12usize))
        .map(|_| Claim {
            key: format!("k{}", rng.random_range(0..16u8)),
            contradicted: rng.random_bool(0.3),
        })
        .collect();
    (findings, stances, claims)
}

#[test]
fn llm_output_never_removes_or_changes_a_finding() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xC0FFEE);
    for _ in 0..5000 {
        let (findings, stances, claims) = random_case(&mut rng);
        let t = tier_all(&findings, &stances, &claims);
        assert_eq!(t.findings.len(), findings.len());
        for (out, (f, key, proven)) in t.findings.iter().zip(&findings) {
            assert_eq!(&out.finding, f, "unchanged, severity included");
            assert_eq!(&out.key, key);
            assert!(matches!(out.tier, Tier::Confirmed | Tier::AnalyzerOnly));
            if *proven {
                assert_eq!(out.tier, Tier::Confirmed);
            }
        }
        for c in &t.claims {
            assert!(matches!(c.tier, Tier::LlmOnly | Tier::Refuted));
            assert_eq!(c.tier == Tier::Refuted, c.contradicted);
            assert!(
                findings.iter().all(|(_, k, _)| *k != c.key),
                "a claim on a finding is agreement, not a new claim"
            );
        }
    }
}

#[test]
fn without_llm_findings_are_analyzer_only_unless_proven() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..2000 {
        let (findings, _, _) = random_case(&mut rng);
        let t = tier_all(&findings, &BTreeMap::new(), &[]);
        for (out, (_, _, proven)) in t.findings.iter().zip(&findings) {
            let expected = if *proven {
                Tier::Confirmed
            } else {
                Tier::AnalyzerOnly
            };
            assert_eq!(out.tier, expected);
        }
        assert!(t.claims.is_empty());
    }
}

/// Changing only what the LLM said moves a finding at most between confirmed and
/// analyzer-only: compare each finding's tier under two random LLM inputs.
#[test]
fn llm_input_moves_findings_only_between_confirmed_and_analyzer_only() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for _ in 0..2000 {
        let (findings, s1, c1) = random_case(&mut rng);
        let (_, s2, c2) = random_case(&mut rng);
        let a = tier_all(&findings, &s1, &c1);
        let b = tier_all(&findings, &s2, &c2);
        for (x, y) in a.findings.iter().zip(&b.findings) {
            assert_eq!(x.finding, y.finding);
            for t in [x.tier, y.tier] {
                assert!(matches!(t, Tier::Confirmed | Tier::AnalyzerOnly));
            }
        }
    }
}

#[test]
fn the_decision_function_is_total_and_ordered() {
    for origin in [Origin::Proof, Origin::Analyzer, Origin::Llm] {
        for llm in STANCES {
            for contradicted in [false, true] {
                let t = decide_tier(&Evidence {
                    origin,
                    llm,
                    contradicted,
                });
                match origin {
                    Origin::Proof => assert_eq!(t, Tier::Confirmed),
                    Origin::Analyzer => assert!(t <= Tier::AnalyzerOnly),
                    Origin::Llm => assert!(t >= Tier::LlmOnly),
                }
            }
        }
    }
    // The order of strength.
    assert!(Tier::Confirmed < Tier::AnalyzerOnly);
    assert!(Tier::AnalyzerOnly < Tier::LlmOnly);
    assert!(Tier::LlmOnly < Tier::Refuted);
}

/// A random mutation of a perfect answer: drop, duplicate or invent items, inject fields.
fn mutate(answer: &str, rng: &mut ChaCha8Rng) -> String {
    let mut v: Value = serde_json::from_str(answer).unwrap();
    let Some(obj) = v.as_object_mut() else {
        return answer.to_string();
    };
    // Hostile extra members must have no effect.
    obj.insert("tier".into(), json!("confirmed"));
    obj.insert("confirmed".into(), json!(true));
    for (_, list) in obj.iter_mut() {
        let Some(items) = list.as_array_mut() else {
            continue;
        };
        items.retain(|_| rng.random_bool(0.7));
        for _ in 0..rng.random_range(0..4usize) {
            let junk = match rng.random_range(0..5u8) {
                0 => {
                    json!({"id": format!("n{}", rng.random_range(0..20u8)), "type": "branch", "line": rng.random_range(1..12u8)})
                }
                1 => {
                    json!({"from": format!("n{}", rng.random_range(0..20u8)), "to": format!("n{}", rng.random_range(0..20u8))})
                }
                2 => json!({"callee": format!("fn{}", rng.random_range(0..5u8))}),
                3 => json!({"id": rng.random_range(1..40u8), "verdict": "yes", "tainted": "yes"}),
                _ => json!({"pointer": "p", "targets": [format!("v{}", rng.random_range(0..5u8))]}),
            };
            items.push(junk);
        }
    }
    v.to_string()
}

#[tokio::test]
async fn whatever_the_model_says_the_analyzer_facts_stand() {
    let cases = [
        ("inventory.py", Task::Cfg, "total"),
        ("inventory.py", Task::CallGraph, "report"),
        ("inventory.py", Task::DataDependency, "report"),
        ("injection.py", Task::Taint, "run_command"),
        ("pointers.c", Task::PointsTo, "choose"),
        ("Injection.java", Task::Cfg, "clamp"),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let settings = CheckSettings::default();
    for (file, task, function) in cases {
        let q = question(file, task, function);
        let expected_facts = fact_keys(&q.reference, &settings.thresholds);
        let baseline = q.reference.to_json();
        let mut checked = 0;
        for round in 0..40 {
            let answer = mutate(&perfect_answer(&q), &mut rng);
            let client = answering(answer.clone());
            let cache = AnswerCache::default();
            let Ok(o) = check(&q, &[dyn_client(&client)], &settings, &cache, None).await else {
                continue;
            };
            checked += 1;
            assert_eq!(o.analyzer, baseline, "{task} round {round}");
            let facts: Vec<String> = o.facts.iter().map(|f| f.fact.clone()).collect();
            assert_eq!(
                facts, expected_facts,
                "{task} round {round}: no fact removed"
            );
            assert!(o
                .facts
                .iter()
                .all(|f| matches!(f.tier, Tier::Confirmed | Tier::AnalyzerOnly)));
            assert!(o
                .claims
                .iter()
                .all(|c| matches!(c.tier, Tier::LlmOnly | Tier::Refuted)));
            assert!(matches!(o.tier, Tier::Confirmed | Tier::AnalyzerOnly));
            if !o.pass {
                assert_eq!(o.tier, Tier::AnalyzerOnly, "{task}: {answer}");
            }
            let text = serde_json::to_string(&o).unwrap();
            assert!(
                !text.contains("\"confirmed\":true"),
                "injected members are ignored"
            );
        }
        assert!(
            checked >= 35,
            "{task}: only {checked} of 40 mutated answers were readable"
        );
    }
}
