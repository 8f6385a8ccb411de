//! Tiers: how far a finding or claim can be trusted, decided from evidence only.
//!
//! [`decide_tier`] is the one function that decides; [`tier_all`] applies it to a set of
//! deterministic findings and LLM claims. The rules, in order of strength:
//!
//! | evidence | tier |
//! |---|---|
//! | a deterministic proof exists (a counterexample, a normalised-identical AST, ...) | `confirmed` |
//! | the analyzer's finding, and the LLM agrees (stably) | `confirmed` |
//! | the analyzer's finding; the LLM disagreed, was unstable, failed, or was not asked | `analyzer-only` |
//! | only the LLM claims it | `llm-only` |
//! | only the LLM claims it, and the analyzer's definite facts contradict it | `refuted` |
//!
//! Guarantees (property-tested in `tests/crosscheck_tiers.rs`): LLM output never removes a
//! deterministic finding and never changes it (its severity included: findings pass through
//! untouched); it can at most move a finding between `confirmed` and `analyzer-only`; an
//! LLM-only claim is never above `llm-only`; a proven finding is `confirmed` whatever the LLM
//! says.

use super::record::Tier;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the thing being tiered comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A deterministic proof (independent of any LLM).
    Proof,
    /// A finding or fact of the deterministic analyzer.
    Analyzer,
    /// Only the LLM's answer.
    Llm,
}

/// What the LLM said about a deterministic finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmStance {
    NotAsked,
    /// The LLM's (majority) answer contains the finding, and the samples were stable.
    Agrees,
    Disagrees,
    /// The samples disagreed with each other beyond the instability limit.
    Unstable,
    /// The call failed or the answer could not be read.
    Failed,
}

/// The evidence about one finding or claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub origin: Origin,
    pub llm: LlmStance,
    /// The analyzer's definite facts contradict it (meaningful for LLM-only claims).
    pub contradicted: bool,
}

/// Decides a tier from evidence (see the module docs). Total and pure.
pub fn decide_tier(e: &Evidence) -> Tier {
    match e.origin {
        Origin::Proof => Tier::Confirmed,
        Origin::Analyzer => match e.llm {
            LlmStance::Agrees => Tier::Confirmed,
            LlmStance::NotAsked
            | LlmStance::Disagrees
            | LlmStance::Unstable
            | LlmStance::Failed => Tier::AnalyzerOnly,
        },
        Origin::Llm => {
            if e.contradicted {
                Tier::Refuted
            } else {
                Tier::LlmOnly
            }
        }
    }
}

/// A deterministic finding with its tier. `finding` is the input value, unchanged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TieredFinding<T> {
    pub finding: T,
    pub key: String,
    pub tier: Tier,
    pub llm: LlmStance,
}

/// An LLM-only claim with its tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TieredClaim {
    pub key: String,
    pub tier: Tier,
    pub contradicted: bool,
}

/// An LLM claim: a fact key, and whether the analyzer's definite facts contradict it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub key: String,
    pub contradicted: bool,
}

/// Tiers for a set of deterministic findings and LLM claims.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tiered<T> {
    pub findings: Vec<TieredFinding<T>>,
    pub claims: Vec<TieredClaim>,
}

/// Applies [`decide_tier`] to every finding (`(finding, key, proven)`) and every LLM claim.
///
/// * Every finding appears exactly once, in input order, unchanged; its stance is
///   `stances[key]` (default [`LlmStance::NotAsked`]).
/// * A claim whose key is a finding's key is that finding's agreement, not a separate claim:
///   it is dropped from `claims` (agreement enters through `stances`). Other claims appear
///   once per distinct key (contradicted if any duplicate says so), sorted by key.
pub fn tier_all<T: Clone>(
    findings: &[(T, String, bool)],
    stances: &BTreeMap<String, LlmStance>,
    claims: &[Claim],
) -> Tiered<T> {
    let finding_keys: std::collections::BTreeSet<&str> =
        findings.iter().map(|(_, k, _)| k.as_str()).collect();
    let tiered_findings = findings
        .iter()
        .map(|(f, key, proven)| {
            let llm = stances.get(key).copied().unwrap_or(LlmStance::NotAsked);
            let origin = if *proven {
                Origin::Proof
            } else {
                Origin::Analyzer
            };
            TieredFinding {
                finding: f.clone(),
                key: key.clone(),
                tier: decide_tier(&Evidence {
                    origin,
                    llm,
                    contradicted: false,
                }),
                llm,
            }
        })
        .collect();
    let mut merged: BTreeMap<&str, bool> = BTreeMap::new();
    for c in claims {
        if finding_keys.contains(c.key.as_str()) {
            continue;
        }
        *merged.entry(c.key.as_str()).or_insert(false) |= c.contradicted;
    }
    let claims = merged
        .into_iter()
        .map(|(key, contradicted)| TieredClaim {
            key: key.to_string(),
            tier: decide_tier(&Evidence {
                origin: Origin::Llm,
                llm: LlmStance::Agrees,
                contradicted,
            }),
            contradicted,
        })
        .collect();
    Tiered {
        findings: tiered_findings,
        claims,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_table() {
        let e = |origin, llm, contradicted| Evidence {
            origin,
            llm,
            contradicted,
        };
        use LlmStance::*;
        use Origin::*;
        for llm in [NotAsked, Agrees, Disagrees, Unstable, Failed] {
            for c in [false, true] {
                assert_eq!(decide_tier(&e(Proof, llm, c)), Tier::Confirmed);
                let expected = if llm == Agrees {
                    Tier::Confirmed
                } else {
                    Tier::AnalyzerOnly
                };
                assert_eq!(decide_tier(&e(Analyzer, llm, c)), expected);
                let expected = if c { Tier::Refuted } else { Tier::LlmOnly };
                assert_eq!(decide_tier(&e(Llm, llm, c)), expected);
            }
        }
    }

    #[test]
    fn claims_on_findings_are_agreement_not_new_claims() {
        let findings = vec![("f1", "a".to_string(), false)];
        let stances = BTreeMap::from([("a".to_string(), LlmStance::Agrees)]);
        let claims = vec![
            Claim {
                key: "a".into(),
                contradicted: true,
            },
            Claim {
                key: "b".into(),
                contradicted: false,
            },
            Claim {
                key: "b".into(),
                contradicted: true,
            },
        ];
        let t = tier_all(&findings, &stances, &claims);
        assert_eq!(t.findings[0].tier, Tier::Confirmed);
        assert_eq!(t.claims.len(), 1);
        assert_eq!(t.claims[0].key, "b");
        assert_eq!(t.claims[0].tier, Tier::Refuted);
    }
}
