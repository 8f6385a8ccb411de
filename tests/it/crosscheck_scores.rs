//! Spec: Layer-1 scores of realistic LLM answers against the analyzer's facts on fixture
//! code. Each case in `tests/fixtures/crosscheck/answers/expectations.json` names an answer
//! file, the expected verdict, exact scores, the tiers of the answer's extra claims, and why.

use crate::crosscheck_support;

use crosscheck::crosscheck::cache::AnswerCache;
use crosscheck::crosscheck::engine::{normalise, score, CheckSettings, TaskThresholds};
use crosscheck::crosscheck::task::Task;
use crosscheck_support::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn cases() -> Vec<Value> {
    serde_json::from_str(&fixture("answers/expectations.json")).expect("expectations")
}

#[test]
fn fixture_answers_score_as_expected() {
    let cases = cases();
    assert_eq!(cases.len(), 8);
    for c in cases {
        let name = c["answer"].as_str().unwrap();
        let task = Task::from_name(c["task"].as_str().unwrap()).unwrap();
        let q = question(
            c["file"].as_str().unwrap(),
            task,
            c["function"].as_str().unwrap(),
        );
        let text = fixture(&format!("answers/{name}"));
        let answer = normalise(&q.reference, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = score(&q.reference, &answer, &TaskThresholds::default());
        assert_eq!(s.pass, c["pass"].as_bool().unwrap(), "{name}: {}", c["why"]);
        for (k, v) in c["scores"].as_object().unwrap() {
            let got = s.scores.get(k).copied().unwrap_or(f64::NAN);
            let want = v.as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{name}: {k} = {got}, expected {want}"
            );
        }
    }
}

#[tokio::test]
async fn fixture_answers_give_the_expected_claim_tiers() {
    for c in cases() {
        let name = c["answer"].as_str().unwrap();
        let task = Task::from_name(c["task"].as_str().unwrap()).unwrap();
        let q = question(
            c["file"].as_str().unwrap(),
            task,
            c["function"].as_str().unwrap(),
        );
        let client = answering(fixture(&format!("answers/{name}")));
        let o = check(
            &q,
            &[dyn_client(&client)],
            &CheckSettings::default(),
            &AnswerCache::default(),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: BTreeMap<String, String> = o
            .claims
            .iter()
            .map(|c| (c.claim.clone(), c.tier.name().to_string()))
            .collect();
        let want: BTreeMap<String, String> = c["claims"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        assert_eq!(got, want, "{name}");
        let expected_tier = if c["pass"].as_bool().unwrap() {
            "confirmed"
        } else {
            "analyzer-only"
        };
        assert_eq!(o.tier.name(), expected_tier, "{name}");
    }
}
