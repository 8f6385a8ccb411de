//! `crosscheck flaky` through the real binary (`--no-llm`), and the hybrid with a fake LLM.

use crate::common;
use common::*;
use crosscheck::analysis::flaky::Category;
use crosscheck::cli::flaky::{flaky, FlakyArgs, FlakyContext};
use crosscheck::cli::OutputFormat;
use crosscheck::crosscheck::engine::CheckSettings;
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::llm::{FakeClient, LlmClient};
use crosscheck::syntax::Cancel;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

fn fixture(name: &str) -> String {
    format!("tests/fixtures/flaky/{name}")
}

#[test]
fn no_llm_json_contract() {
    let out = run(&[
        "flaky",
        &fixture("OrderServiceTest.java"),
        &fixture("test_inventory.py"),
        "--no-llm",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let tests = v["tests"].as_array().expect("tests array");
    assert!(tests.len() > 20);
    for t in tests {
        assert!(t["name"].is_string() && t["file"].is_string() && t["line"].is_u64());
        assert!(t["llm"].is_null(), "--no-llm never has an LLM part");
        assert!(t["evidence"].is_array());
        match t["category"].as_str() {
            Some(c) => {
                assert!(Category::from_name(c).is_some());
                assert_eq!(t["tier"], "analyzer-only");
                assert!(!t["evidence"].as_array().unwrap().is_empty());
                for e in t["evidence"].as_array().unwrap() {
                    assert!(e["line"].is_u64() && e["why"].is_string());
                }
            }
            None => {
                assert!(t["category"].is_null());
                assert!(t["tier"].is_null());
            }
        }
    }
    let sleeper = tests
        .iter()
        .find(|t| t["name"] == "OrderServiceTest.shipsOrderInBackground")
        .expect("test found");
    assert_eq!(sleeper["category"], "async_wait");
    let plain = tests
        .iter()
        .find(|t| t["name"] == "OrderServiceTest.addsItemToCart")
        .expect("test found");
    assert!(plain["category"].is_null());
}

#[test]
fn no_llm_text_output_and_directory_walk() {
    let out = run(&[
        "flaky",
        "tests/fixtures/flaky",
        "--no-llm",
        "--format",
        "text",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("flaky? async_wait (analyzer-only)"), "{text}");
    assert!(text.contains("fix: "));
    assert!(text.contains("with a suspected root cause"));
}

#[test]
fn missing_path_exits_one() {
    let out = run(&[
        "flaky",
        "tests/fixtures/flaky/does-not-exist.java",
        "--no-llm",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

fn ctx_with(client: FakeClient) -> (FlakyContext, Arc<FakeClient>) {
    let client = Arc::new(client);
    (
        FlakyContext {
            client: Some(client.clone() as Arc<dyn LlmClient>),
            settings: CheckSettings::default(),
            prompts: PromptLibrary::builtin(),
            backend: None,
            cancel: Cancel::never(),
        },
        client,
    )
}

fn args(file: &str) -> FlakyArgs {
    FlakyArgs {
        paths: vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(fixture(file))],
        format: OutputFormat::Json,
        no_llm: false,
        known_flaky: false,
        fresh: false,
        lang: None,
        max_file_size: 16 * 1024 * 1024,
    }
}

#[test]
fn known_flaky_names_the_strongest_weak_signal() {
    // `dependencyOrderComparedAsSets` has one weak signal (a HashSet, weight 1): no hint for an
    // ordinary test, but a known-flaky test gets that cause.
    let find = |v: &Value| -> Value {
        v["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .find(|t| t["name"] == "GraphOrderTest.dependencyOrderComparedAsSets")
            .cloned()
            .expect("test found")
    };
    let plain = run(&["flaky", &fixture("GraphOrderTest.java"), "--no-llm"]);
    let plain: Value = serde_json::from_slice(&plain.stdout).expect("JSON");
    assert!(find(&plain)["category"].is_null());
    let known = run(&[
        "flaky",
        &fixture("GraphOrderTest.java"),
        "--no-llm",
        "--known-flaky",
    ]);
    assert_eq!(known.status.code(), Some(0));
    let known: Value = serde_json::from_slice(&known.stdout).expect("JSON");
    let t = find(&known);
    assert_eq!(t["category"], "unordered_collection");
    assert_eq!(t["tier"], "analyzer-only");
    assert!(!t["evidence"].as_array().expect("evidence").is_empty());
    // A test without any signal stays without a category.
    let none = known["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "GraphOrderTest.sortedBeforeComparing")
        .expect("test found");
    assert!(none["category"].is_null());
}

#[test]
fn hybrid_agreement_confirms_and_never_changes_the_static_category() {
    // The fake model always answers async_wait.
    let (ctx, client) = ctx_with(FakeClient::from_fn(|_| {
        crosscheck::llm::FakeReply::text(r#"{"category": "async_wait", "reasoning": "sleep"}"#)
    }));
    let out = flaky(&args("OrderServiceTest.java"), &ctx);
    let no_llm = flaky(
        &args("OrderServiceTest.java"),
        &FlakyContext {
            client: None,
            ..ctx_with(FakeClient::new()).0
        },
    );
    assert_eq!(out.rows.len(), no_llm.rows.len());
    for (h, s) in out.rows.iter().zip(&no_llm.rows) {
        assert_eq!(
            h.test.category, s.test.category,
            "the LLM never changes the category"
        );
        match (h.test.category, h.llm.as_ref()) {
            (Some(Category::AsyncWait), Some(_)) => {
                assert_eq!(h.tier.map(|t| t.name()), Some("confirmed"))
            }
            (Some(_), Some(_)) => assert_eq!(h.tier.map(|t| t.name()), Some("analyzer-only")),
            (None, Some(_)) => assert_eq!(h.tier.map(|t| t.name()), Some("llm-only")),
            (_, None) => assert!(
                h.test
                    .scores
                    .values()
                    .all(|s| *s < crosscheck::cli::flaky::ASK_MIN_SCORE),
                "only unsuspected tests are not asked"
            ),
        }
    }
    let asked = out.rows.iter().filter(|r| r.llm.is_some()).count();
    assert_eq!(client.request_count(), asked);
    assert!(
        out.rows.iter().any(|r| r.llm.is_none()),
        "some tests have no signal"
    );
}

#[test]
fn hybrid_llm_failure_keeps_the_static_results() {
    let (ctx, _client) = ctx_with(FakeClient::from_fn(|_| {
        crosscheck::llm::FakeReply::text("I cannot tell")
    }));
    let out = flaky(&args("CacheIT.java"), &ctx);
    for r in &out.rows {
        if r.test.category.is_some() {
            assert_eq!(r.tier.map(|t| t.name()), Some("analyzer-only"));
        } else {
            assert_eq!(r.tier, None);
        }
    }
}
