//! Spec: the cross-check engine end to end with scripted models: scoring against the
//! analyzer per task, the content-addressed cache, self-consistency, juries, records.

use crate::crosscheck_support;

use crosscheck::crosscheck::cache::AnswerCache;
use crosscheck::crosscheck::consistency::JuryRule;
use crosscheck::crosscheck::engine::{fact_keys, CheckError, CheckSettings, Engine};
use crosscheck::crosscheck::memory::{MemoryBackend, MemorySink};
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::crosscheck::record::Tier;
use crosscheck::crosscheck::task::Task;
use crosscheck::crosscheck::tier::LlmStance;
use crosscheck::llm::{ChatResponse, FakeClient, FakeReply, LlmClient, LlmError};
use crosscheck::syntax::{Language, ParsedFile};
use crosscheck_support::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn settings() -> CheckSettings {
    CheckSettings::default()
}

/// (fixture, task, function) for every task `ask` supports.
const CASES: [(&str, Task, &str); 6] = [
    ("inventory.py", Task::Ast, "total"),
    ("inventory.py", Task::Cfg, "total"),
    ("inventory.py", Task::CallGraph, "report"),
    ("inventory.py", Task::DataDependency, "report"),
    ("injection.py", Task::Taint, "run_command"),
    ("pointers.c", Task::PointsTo, "choose"),
];

#[tokio::test]
async fn perfect_answers_pass_and_confirm_every_fact() {
    for (file, task, function) in CASES {
        let q = question(file, task, function);
        let client = answering(perfect_answer(&q));
        let cache = AnswerCache::default();
        let o = check(&q, &[dyn_client(&client)], &settings(), &cache, None)
            .await
            .unwrap_or_else(|e| panic!("{task}: {e}"));
        assert!(o.pass, "{task}: {:#?}", o.score_details);
        assert_eq!(o.tier, Tier::Confirmed, "{task}");
        assert!(!o.facts.is_empty(), "{task}: the fixture has facts");
        assert!(
            o.facts.iter().all(|f| f.tier == Tier::Confirmed),
            "{task}: {:?}",
            o.facts
        );
        assert!(o.claims.is_empty(), "{task}: {:?}", o.claims);
        assert_eq!(o.instability, 0.0);
        assert_eq!(o.samples, 1);
        assert_eq!(o.analyzer, q.reference.to_json());
        assert_eq!(client.request_count(), 1);
    }
}

#[tokio::test]
async fn empty_answers_fail_and_leave_every_fact_analyzer_only() {
    for (file, task, function) in CASES {
        let q = question(file, task, function);
        let client = answering(empty_answer(task));
        let o = check(
            &q,
            &[dyn_client(&client)],
            &settings(),
            &AnswerCache::default(),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("{task}: {e}"));
        assert!(!o.pass, "{task}");
        assert_eq!(o.tier, Tier::AnalyzerOnly, "{task}");
        assert_eq!(
            o.facts.iter().map(|f| f.fact.clone()).collect::<Vec<_>>(),
            fact_keys(&q.reference, &settings().thresholds),
            "{task}: no fact is removed"
        );
        assert!(o
            .facts
            .iter()
            .all(|f| f.tier == Tier::AnalyzerOnly && f.llm == LlmStance::Disagrees));
    }
}

#[tokio::test]
async fn scores_reflect_a_fabricated_cfg_edge_and_refute_it() {
    let q = question("inventory.py", Task::Cfg, "total");
    // The perfect answer plus an edge from `return s` (line 6) back to `s = 0` (line 2):
    // the function has no path from its return to its first statement.
    let mut v: serde_json::Value = serde_json::from_str(&perfect_answer(&q)).unwrap();
    let nodes = v["nodes"].as_array().unwrap().clone();
    let id_at = |line: u64| {
        nodes
            .iter()
            .find(|n| n["line"] == line)
            .map(|n| n["id"].clone())
            .unwrap()
    };
    v["edges"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"from": id_at(6), "to": id_at(2)}));
    let client = answering(v.to_string());
    let o = check(
        &q,
        &[dyn_client(&client)],
        &settings(),
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(o.claims.len(), 1, "{:?}", o.claims);
    assert_eq!(o.claims[0].tier, Tier::Refuted);
    assert_eq!(o.claims[0].claim, "edge JUMP@6 -> NORMAL@2");
    // JUMP→NORMAL is a retreating edge (`back` kind, which the loop already has): nothing
    // is fabricated, but the extra jump edge is redundant (1 of 7 jump edges).
    assert_eq!(o.scores["jump_fabrication"], 0.0);
    assert!(
        (o.scores["jump_redundancy"] - 1.0 / 7.0).abs() < 1e-12,
        "{:?}",
        o.scores
    );
    assert!(o.facts.iter().all(|f| f.tier == Tier::Confirmed));
}

#[tokio::test]
async fn unchanged_functions_hit_the_cache_even_when_code_above_moves() {
    let backend = Arc::new(MemoryBackend::default());
    let cache = AnswerCache::new(Some(backend.clone()));
    let original = fixture("inventory.py");
    let file = ParsedFile::parse(Language::Python, original.clone());
    let q = question_in("inventory.py", &file, Task::Cfg, "total", None);
    let client = answering(perfect_answer(&q));
    let clients = [dyn_client(&client)];
    let o = check(&q, &clients, &settings(), &cache, None)
        .await
        .unwrap();
    assert_eq!(o.cache["misses"], 1);
    assert_eq!(client.request_count(), 1);
    assert_eq!(backend.len(), 1);

    // Same function, 40 lines further down.
    let moved = format!("{}{original}", "# padding\n".repeat(40));
    let file = ParsedFile::parse(Language::Python, moved);
    let q2 = question_in("inventory.py", &file, Task::Cfg, "total", None);
    assert_eq!(q2.first_line, q.first_line + 40);
    let o = check(&q2, &clients, &settings(), &cache, None)
        .await
        .unwrap();
    assert_eq!(o.cache["hits"], 1);
    assert_eq!(client.request_count(), 1, "not sent again");
    assert!(o.pass);

    // A new process (fresh memory) finds it in the persistent backend.
    let other = AnswerCache::new(Some(backend.clone()));
    check(&q2, &clients, &settings(), &other, None)
        .await
        .unwrap();
    assert_eq!(client.request_count(), 1);
    assert_eq!(other.stats(), (1, 0));

    // Changing the function is a miss.
    let edited = original.replace("s += item", "s -= item");
    let file = ParsedFile::parse(Language::Python, edited);
    let q3 = question_in("inventory.py", &file, Task::Cfg, "total", None);
    check(&q3, &clients, &settings(), &cache, None)
        .await
        .unwrap();
    assert_eq!(client.request_count(), 2);

    // `fresh` neither reads nor writes.
    let fresh = CheckSettings {
        fresh: true,
        ..settings()
    };
    let o = check(&q, &clients, &fresh, &cache, None).await.unwrap();
    assert_eq!(client.request_count(), 3);
    assert_eq!(
        (o.cache["hits"].as_u64(), o.cache["misses"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(backend.len(), 2);

    // Another model is another key.
    let other_model = Arc::new(
        FakeClient::from_fn({
            let t = perfect_answer(&q);
            move |_| FakeReply::text(t.clone())
        })
        .with_model("other"),
    );
    check(&q, &[dyn_client(&other_model)], &settings(), &cache, None)
        .await
        .unwrap();
    assert_eq!(other_model.request_count(), 1);
}

#[tokio::test]
async fn a_new_template_version_is_a_cache_miss() {
    let q = question("inventory.py", Task::Cfg, "total");
    let client = answering(perfect_answer(&q));
    let clients = [dyn_client(&client)];
    let cache = AnswerCache::default();
    check(&q, &clients, &settings(), &cache, None)
        .await
        .unwrap();
    check(&q, &clients, &settings(), &cache, None)
        .await
        .unwrap();
    assert_eq!(client.request_count(), 1);
    let source = crosscheck::crosscheck::prompts::EMBEDDED_TEMPLATES
        .iter()
        .find(|(n, _)| *n == "tasks/cfg.j2")
        .unwrap()
        .1
        .replace("version: 1", "version: 2");
    let prompts = PromptLibrary::with_overrides([("tasks/cfg.j2".to_string(), source)]).unwrap();
    let s = settings();
    let engine = Engine {
        prompts: &prompts,
        cache: &cache,
        settings: &s,
        sink: None,
    };
    let o = engine.check(&clients, &q, 0).await.unwrap();
    assert_eq!(client.request_count(), 2);
    assert_eq!(o.template["version"], 4);
}

#[tokio::test]
async fn samples_use_consecutive_seeds_and_a_positive_temperature() {
    let q = question("inventory.py", Task::Cfg, "total");
    let good = perfect_answer(&q);
    let bad = empty_answer(Task::Cfg);
    let client = Arc::new(FakeClient::with_replies([
        FakeReply::text(good.clone()),
        FakeReply::text(bad),
        FakeReply::text(good),
    ]));
    let s = CheckSettings {
        samples: 3,
        seed: 40,
        ..settings()
    };
    let o = check(
        &q,
        &[dyn_client(&client)],
        &s,
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap();
    let reqs = client.requests();
    assert_eq!(
        reqs.iter().map(|r| r.seed).collect::<Vec<_>>(),
        [Some(40), Some(41), Some(42)]
    );
    assert!(reqs.iter().all(|r| r.temperature == Some(0.7)));
    assert!(reqs.iter().all(|r| r.json_schema.is_some()));
    // Majority passes, one sample of three disagrees: instability 1/3 > 0.25, so unstable.
    assert!((o.instability - 1.0 / 3.0).abs() < 1e-12);
    assert!(!o.models[0].stable);
    assert_eq!(o.tier, Tier::AnalyzerOnly);
    assert!(o.facts.iter().all(|f| f.llm == LlmStance::Unstable));
    // With a looser limit the majority confirms.
    let client = Arc::new(FakeClient::with_replies([
        FakeReply::text(perfect_answer(&q)),
        FakeReply::text(empty_answer(Task::Cfg)),
        FakeReply::text(perfect_answer(&q)),
    ]));
    let loose = CheckSettings {
        max_instability: 0.34,
        ..s
    };
    let o = check(
        &q,
        &[dyn_client(&client)],
        &loose,
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap();
    assert!(o.pass);
    assert_eq!(o.tier, Tier::Confirmed);
}

#[tokio::test]
async fn one_sample_uses_the_client_default_temperature() {
    let q = question("inventory.py", Task::Cfg, "total");
    let client = answering(perfect_answer(&q));
    check(
        &q,
        &[dyn_client(&client)],
        &settings(),
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap();
    let r = &client.requests()[0];
    assert_eq!((r.temperature, r.seed), (None, Some(0)));
    assert_eq!(r.schema_name.as_deref(), Some("cfg"));
}

#[tokio::test]
async fn yes_no_questions_vote_per_question() {
    let q = question("inventory.py", Task::DataDependency, "report");
    let perfect: serde_json::Value = serde_json::from_str(&perfect_answer(&q)).unwrap();
    // Sample 2 flips question 1; the per-question majority restores it.
    let mut flipped = perfect.clone();
    let v = &mut flipped["answers"][0]["verdict"];
    *v = serde_json::json!(if v == "yes" { "no" } else { "yes" });
    let client = Arc::new(FakeClient::with_replies([
        FakeReply::text(perfect.to_string()),
        FakeReply::text(flipped.to_string()),
        FakeReply::text(perfect.to_string()),
    ]));
    let s = CheckSettings {
        samples: 3,
        ..settings()
    };
    let o = check(
        &q,
        &[dyn_client(&client)],
        &s,
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(o.scores["f1"], 1.0);
    let questions = q.reference.to_json()["questions"].as_array().unwrap().len() as f64;
    // One sample of three disagrees on one question.
    assert!((o.instability - (1.0 / 3.0) / questions).abs() < 1e-12);
    assert!(o.models[0].stable);
    assert_eq!(o.tier, Tier::Confirmed);
}

fn named(text: String, model: &str) -> Arc<dyn LlmClient> {
    Arc::new(FakeClient::from_fn(move |_| FakeReply::text(text.clone())).with_model(model))
}

#[tokio::test]
async fn juries_decide_by_majority_or_unanimity_and_keep_per_model_results() {
    let q = question("inventory.py", Task::CallGraph, "report");
    let good = perfect_answer(&q);
    let bad = r#"{"calls": [{"callee": "exfiltrate"}]}"#.to_string();
    let jury = vec![
        named(good.clone(), "a"),
        named(good.clone(), "b"),
        named(bad.clone(), "c"),
    ];
    let sink = MemorySink::default();
    let o = check(&q, &jury, &settings(), &AnswerCache::default(), Some(&sink))
        .await
        .unwrap();
    assert_eq!(o.model, "jury(fake:a, fake:b, fake:c)");
    assert!(o.pass);
    assert_eq!(o.tier, Tier::Confirmed);
    assert_eq!(o.models.len(), 3);
    assert_eq!(
        o.models.iter().map(|m| m.pass).collect::<Vec<_>>(),
        [true, true, false]
    );
    // Only one juror of three claims `exfiltrate`: the jury does not make that claim.
    assert!(o.claims.is_empty(), "{:?}", o.claims);
    let records = sink.records();
    assert_eq!(records.len(), 4, "one per model plus the jury");
    assert_eq!(records[3].model, o.model);
    assert_eq!(records[3].samples.len(), 3);
    assert_eq!(records[2].pass, Some(false));
    assert_eq!(records[2].tier, Some(Tier::AnalyzerOnly));

    let unanimous = CheckSettings {
        jury_rule: JuryRule::Unanimity,
        ..settings()
    };
    let o = check(&q, &jury, &unanimous, &AnswerCache::default(), None)
        .await
        .unwrap();
    assert!(!o.pass);
    assert_eq!(o.tier, Tier::AnalyzerOnly);
    // Two of two failing jurors claim it: now it is the jury's (llm-only, or refuted when
    // the function never mentions it: it does not).
    let two = vec![named(bad.clone(), "c"), named(bad, "d")];
    let o = check(&q, &two, &settings(), &AnswerCache::default(), None)
        .await
        .unwrap();
    assert_eq!(o.claims.len(), 1);
    assert_eq!(o.claims[0].tier, Tier::Refuted);
}

#[tokio::test]
async fn records_hold_hashes_and_verdicts_not_code_unless_opted_in() {
    let q = question("inventory.py", Task::Cfg, "total");
    let client = answering(perfect_answer(&q));
    let sink = MemorySink::default();
    check(
        &q,
        &[dyn_client(&client)],
        &settings(),
        &AnswerCache::default(),
        Some(&sink),
    )
    .await
    .unwrap();
    let r = &sink.records()[0];
    assert_eq!(r.task, "cfg");
    assert_eq!(r.language, "python");
    assert_eq!(r.model, "fake:fake");
    assert_eq!(r.template_id, "cfg/role/zero");
    assert_eq!(r.template_version, 3);
    assert_eq!(r.strategy, "role");
    assert_eq!(r.code_hash, q.inputs.code_hash());
    assert_eq!(r.code_hash.len(), 64);
    assert_eq!(r.timestamp, 1_700_000_000);
    assert_eq!(r.pass, Some(true));
    assert_eq!(r.tier, Some(Tier::Confirmed));
    assert_eq!(r.samples.len(), 1);
    assert!(r.samples[0].parsed && !r.samples[0].from_cache);
    assert!(r.scores.contains_key("shape_error"));
    assert_eq!(r.source_text, None);
    let json = serde_json::to_string(r).unwrap();
    assert!(!json.contains("item[\"qty\"]"), "no code in records");

    let opted = CheckSettings {
        store_source: true,
        ..settings()
    };
    let sink = MemorySink::default();
    check(
        &q,
        &[dyn_client(&client)],
        &opted,
        &AnswerCache::default(),
        Some(&sink),
    )
    .await
    .unwrap();
    assert!(sink.records()[0]
        .source_text
        .as_deref()
        .is_some_and(|t| t.contains("def total(items):")));
}

#[tokio::test]
async fn failures_are_errors_never_panics() {
    let q = question("inventory.py", Task::Cfg, "total");
    let s = settings();
    let run = |c: Arc<FakeClient>| {
        let q = q.clone();
        let s = s.clone();
        async move {
            let cache = AnswerCache::default();
            check(&q, &[dyn_client(&c)], &s, &cache, None).await
        }
    };
    // Garbage text.
    let e = run(answering("I'm sorry, I cannot do that.".into()))
        .await
        .unwrap_err();
    assert!(matches!(e, CheckError::Unreadable { .. }), "{e}");
    // Valid JSON of the wrong shape, and JSON that had to be repaired.
    let e = run(answering(r#"{"tier": "confirmed"}"#.into()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no `nodes` list"), "{e}");
    let e = run(answering(r#"{"nodes": [{"id": 1, "type": "entry"}"#.into()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("repaired"), "{e}");
    // Cut off at the token limit.
    let cut = ChatResponse {
        text: perfect_answer(&q),
        model: "fake".into(),
        prompt_tokens: 1,
        completion_tokens: 1,
        tokens_estimated: false,
        latency_ms: 0,
        from_cache: false,
        truncated: true,
        attempts: 1,
    };
    let e = run(Arc::new(FakeClient::with_replies([FakeReply::Response(
        cut,
    )])))
    .await
    .unwrap_err();
    assert!(e.to_string().contains("cut off"), "{e}");
    // Call errors.
    let e = run(Arc::new(FakeClient::with_replies([FakeReply::Error(
        LlmError::RateLimited { retry_after: None },
    )])))
    .await
    .unwrap_err();
    assert!(matches!(e, CheckError::Llm(LlmError::RateLimited { .. })));
    // A model that never answers: the call timeout ends it.
    let hang = Arc::new(FakeClient::from_fn(|_| FakeReply::Hang));
    let bounded = CheckSettings {
        call_timeout: Some(Duration::from_millis(200)),
        samples: 5,
        ..settings()
    };
    let start = Instant::now();
    let e = check(
        &q,
        &[dyn_client(&hang)],
        &bounded,
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, CheckError::Llm(LlmError::Timeout { .. })),
        "{e}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "stops after the first timeout"
    );
    assert_eq!(hang.request_count(), 1);
    // Unreadable answers are never cached.
    let cache = AnswerCache::default();
    let garbage = answering("garbage".into());
    let _ = check(&q, &[dyn_client(&garbage)], &s, &cache, None).await;
    let _ = check(&q, &[dyn_client(&garbage)], &s, &cache, None).await;
    assert_eq!(garbage.request_count(), 2);
}

#[tokio::test]
async fn a_partly_failing_sample_set_still_decides_but_counts_failures_as_disagreement() {
    let q = question("inventory.py", Task::Cfg, "total");
    let client = Arc::new(FakeClient::with_replies([
        FakeReply::text(perfect_answer(&q)),
        FakeReply::text("garbage"),
        FakeReply::text(perfect_answer(&q)),
        FakeReply::text(perfect_answer(&q)),
    ]));
    let s = CheckSettings {
        samples: 4,
        ..settings()
    };
    let o = check(
        &q,
        &[dyn_client(&client)],
        &s,
        &AnswerCache::default(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(o.models[0].failed_samples, 1);
    assert_eq!(o.instability, 0.25);
    assert!(o.pass);
    assert_eq!(o.tier, Tier::Confirmed);
    assert_eq!(o.errors.len(), 1);
}
