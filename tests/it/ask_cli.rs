//! Spec: `crosscheck ask` through its library entry point with scripted models: the output
//! contract (one object for one function, a results list otherwise), errors and exit codes,
//! the taint plug-in (the data-dependency stand-in, for tests only), points-to on C.

use crate::crosscheck_support;

use clap::Parser;
use crosscheck::cli::ask::{ask, check_settings_from_toml, render_text, AskArgs, AskContext};
use crosscheck::cli::{Cli, Command};
use crosscheck::crosscheck::engine::CheckSettings;
use crosscheck::crosscheck::facts::TaintOracle;
use crosscheck::crosscheck::memory::{MemoryBackend, MemorySink};
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::crosscheck::record::{CacheBackend, RecordSink};
use crosscheck::crosscheck::task::Task;
use crosscheck::llm::{FakeClient, FakeReply, LlmClient, LlmError};
use crosscheck::syntax::Cancel;
use crosscheck_support::*;
use serde_json::Value;
use std::sync::Arc;

fn args(cmdline: &[&str]) -> AskArgs {
    let mut full = vec!["crosscheck", "ask"];
    full.extend_from_slice(cmdline);
    match Cli::try_parse_from(full)
        .expect("valid command line")
        .command
    {
        Command::Ask(a) => a,
        _ => unreachable!(),
    }
}

fn path(name: &str) -> String {
    fixture_path(name).display().to_string()
}

fn context<'a>(
    clients: Vec<Arc<dyn LlmClient>>,
    backend: Option<Arc<dyn CacheBackend>>,
    sink: Option<&'a dyn RecordSink>,
    taint: Option<&'a dyn TaintOracle>,
) -> AskContext<'a> {
    AskContext {
        clients,
        settings: CheckSettings::default(),
        prompts: PromptLibrary::builtin(),
        backend,
        sink,
        taint,
        now: 1_700_000_000,
        cancel: Cancel::never(),
    }
}

#[test]
fn one_function_prints_one_object_with_the_contract_keys() {
    let q = question("inventory.py", Task::Cfg, "total");
    let client = answering(perfect_answer(&q));
    let a = args(&[
        "--task",
        "cfg",
        &path("inventory.py"),
        "--function",
        "total",
    ]);
    let report = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(report.exit_code, 0, "{:?}", report.errors);
    let j = &report.json;
    for key in [
        "task",
        "model",
        "llm",
        "analyzer",
        "scores",
        "pass",
        "tier",
        "samples",
        "instability",
        "facts",
        "claims",
        "template",
        "cache",
    ] {
        assert!(j.get(key).is_some(), "missing {key}: {j:#}");
    }
    assert_eq!(j["task"], "cfg");
    assert_eq!(j["function"], "total");
    assert_eq!(j["model"], "fake:fake");
    assert_eq!(j["pass"], true);
    assert_eq!(j["tier"], "confirmed");
    assert_eq!(j["samples"], 1);
    assert_eq!(j["instability"], 0.0);
    assert_eq!(j["scores"]["shape_error"], 0.0);
    assert_eq!(j["template"]["id"], "cfg/role/zero");
    assert!(j["llm"]["cfg"]["nodes"].is_array());
    assert!(j["analyzer"]["cfg"]["edges"].is_array());
    let text = render_text(&report);
    assert!(text.contains("cfg total"), "{text}");
    assert!(text.contains("tier confirmed"), "{text}");
}

#[test]
fn a_whole_file_prints_a_results_list_in_document_order() {
    let client = Arc::new(FakeClient::from_fn(|_| {
        FakeReply::text(r#"{"calls": [{"callee": "print"}]}"#)
    }));
    let a = args(&["--task", "call_graph", &path("inventory.py")]);
    let sink = MemorySink::default();
    let backend = Arc::new(MemoryBackend::default());
    let report = ask(
        &a,
        &context(
            vec![dyn_client(&client)],
            Some(backend.clone()),
            Some(&sink),
            None,
        ),
    );
    assert_eq!(report.exit_code, 0, "{:?}", report.errors);
    let results = report.json["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["function"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["log", "load", "total", "report"]);
    assert_eq!(report.json["task"], "call_graph");
    // `log` only prints: its answer is right; `report` calls five functions: missed calls.
    assert_eq!(results[0]["pass"], true);
    assert_eq!(results[3]["pass"], false);
    assert_eq!(results[3]["tier"], "analyzer-only");
    assert_eq!(sink.records().len(), 4);
    assert_eq!(backend.len(), 4);
    // A second run is served from the cache.
    let again = ask(
        &a,
        &context(vec![dyn_client(&client)], Some(backend.clone()), None, None),
    );
    assert_eq!(client.request_count(), 4);
    assert!(again
        .cache
        .iter()
        .all(|(_, hits, misses)| (*hits, *misses) == (1, 0)));
    // --fresh asks again.
    let fresh = args(&["--task", "call_graph", &path("inventory.py"), "--fresh"]);
    ask(
        &fresh,
        &context(vec![dyn_client(&client)], Some(backend), None, None),
    );
    assert_eq!(client.request_count(), 8);
}

/// One function's answer cut off at the token limit fails that function only: the others
/// are cross-checked, the run exits 0, and the failure is recorded for that function.
#[test]
fn a_truncated_answer_fails_its_function_only_and_is_recorded() {
    let client = Arc::new(FakeClient::from_fn(|req| {
        let text = r#"{"calls": [{"callee": "print"}]}"#.to_string();
        if req.user.contains("def total") && !req.user.contains("def report") {
            FakeReply::Response(crosscheck::llm::ChatResponse {
                text: r#"{"calls": [{"callee": "pri"#.to_string(),
                model: "fake".into(),
                prompt_tokens: 10,
                completion_tokens: 768,
                tokens_estimated: true,
                latency_ms: 1,
                from_cache: false,
                truncated: true,
                attempts: 1,
            })
        } else {
            FakeReply::text(text)
        }
    }));
    let a = args(&["--task", "call_graph", &path("inventory.py")]);
    let sink = MemorySink::default();
    let report = ask(
        &a,
        &context(vec![dyn_client(&client)], None, Some(&sink), None),
    );
    assert_eq!(report.exit_code, 0, "{:?}", report.errors);
    let results = report.json["results"].as_array().unwrap();
    let total = results.iter().find(|r| r["function"] == "total").unwrap();
    assert!(
        total["error"]
            .as_str()
            .is_some_and(|e| e.contains("cut off")),
        "{total}"
    );
    assert_eq!(report.outcomes.len(), 3, "the other functions were checked");
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let records = sink.records();
    assert_eq!(records.len(), 4, "the failed function is recorded too");
    let failed: Vec<_> = records.iter().filter(|r| r.pass.is_none()).collect();
    assert_eq!(failed.len(), 1);
    assert!(!failed[0].samples[0].parsed);
    assert_eq!(failed[0].samples[0].answer["error"], "truncated");
}

#[test]
fn samples_and_strategy_flags_reach_the_model() {
    let q = question("inventory.py", Task::Ast, "total");
    let client = answering(perfect_answer(&q));
    let a = args(&[
        "--task",
        "ast",
        &path("inventory.py"),
        "--function",
        "total",
        "--samples",
        "3",
        "--strategy",
        "role_cot",
        "--shots",
        "few",
    ]);
    let report = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(report.exit_code, 0, "{:?}", report.errors);
    assert_eq!(report.json["samples"], 3);
    assert_eq!(report.json["template"]["id"], "ast/role_cot/few");
    assert_eq!(client.request_count(), 3);
    assert!(client.requests()[0].system.contains("\"reasoning\" field"));
}

#[test]
fn unknown_functions_and_unreadable_files_are_errors() {
    let client = answering("{}".into());
    let a = args(&["--task", "cfg", &path("inventory.py"), "--function", "nope"]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 1);
    assert!(
        r.errors[0].contains("no function named `nope`"),
        "{:?}",
        r.errors
    );
    assert!(r.errors[0].contains("total"));
    let a = args(&["--task", "cfg", "/nonexistent/file.py"]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 1);
    assert!(r.errors[0].contains("cannot read file"), "{:?}", r.errors);
    assert_eq!(client.request_count(), 0);
    // Tasks without a per-function reference are refused by the argument parser.
    assert!(
        Cli::try_parse_from(["crosscheck", "ask", "--task", "flaky_root_cause", "x.py"]).is_err()
    );
}

#[test]
fn an_llm_failure_stops_the_remaining_functions() {
    let client = Arc::new(FakeClient::with_replies([FakeReply::Error(
        LlmError::Http {
            status: 500,
            body_snippet: "boom".into(),
        },
    )]));
    let a = args(&["--task", "cfg", &path("inventory.py")]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 1);
    assert_eq!(client.request_count(), 1);
    let results = r.json["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert!(results[0]["error"].as_str().unwrap().contains("HTTP 500"));
    assert!(results[1..]
        .iter()
        .all(|x| x["error"] == "skipped after an earlier LLM failure"));
}

#[test]
fn taint_needs_an_oracle_and_uses_the_stand_in_in_tests() {
    let q = question("injection.py", Task::Taint, "run_command");
    let client = answering(perfect_answer(&q));
    let a = args(&[
        "--task",
        "taint",
        &path("injection.py"),
        "--function",
        "run_command",
    ]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 1);
    assert!(
        r.errors[0].contains("taint analysis is not available"),
        "{:?}",
        r.errors
    );
    // The stand-in oracle (data dependency from parameters and input-like sources).
    let oracle = stand_in_taint();
    let r = ask(
        &a,
        &context(vec![dyn_client(&client)], None, None, Some(&oracle)),
    );
    assert_eq!(r.exit_code, 0, "{:?}", r.errors);
    assert_eq!(r.json["tier"], "confirmed");
    let tainted: Vec<&str> = r.json["analyzer"]["variables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["tainted"] == true)
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(
        tainted.contains(&"cmd") && tainted.contains(&"full"),
        "{tainted:?}"
    );
    assert!(!tainted.contains(&"banner"), "{tainted:?}");
}

#[test]
fn points_to_runs_on_c_and_is_refused_elsewhere() {
    let q = question("pointers.c", Task::PointsTo, "choose");
    let pts = q.reference.to_json();
    assert_eq!(
        pts["points_to"]["p"],
        serde_json::json!(["g", "x", "y"]),
        "{pts:#}"
    );
    assert_eq!(pts["points_to"]["h"], serde_json::json!(["heap@4"]));
    assert_eq!(pts["points_to"]["pp"], serde_json::json!(["p"]));
    let client = answering(perfect_answer(&q));
    let a = args(&[
        "--task",
        "points_to",
        &path("pointers.c"),
        "--function",
        "choose",
    ]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 0, "{:?}", r.errors);
    assert_eq!(r.json["scores"]["jaccard"], 1.0);
    let a = args(&[
        "--task",
        "points_to",
        &path("inventory.py"),
        "--function",
        "total",
    ]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 1);
    assert!(r.errors[0].contains("C and C++ only"), "{:?}", r.errors);
}

#[test]
fn overloads_selected_by_one_name_give_a_results_list() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("Over.java");
    std::fs::write(
        &file,
        "class Over {\n  int f(int a) { return a; }\n  int f(int a, int b) { return a + b; }\n}\n",
    )
    .unwrap();
    let client = answering(r#"{"calls": []}"#.into());
    let a = args(&[
        "--task",
        "call_graph",
        file.to_str().unwrap(),
        "--function",
        "f",
    ]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 0, "{:?}", r.errors);
    assert_eq!(r.json["results"].as_array().map(Vec::len), Some(2));
}

#[test]
fn settings_come_from_the_crosscheck_table() {
    let s = check_settings_from_toml(
        "[llm]\nmodel = \"m\"\n[crosscheck]\nsamples = 5\nmax_instability = 0.1\nprompts_dir = \"/home/me/prompts\"\n[crosscheck.samples_per_task]\ncfg = 3\n",
    )
    .unwrap();
    assert_eq!(s.samples, 5);
    assert_eq!(s.samples_per_task.get("cfg"), Some(&3));
    assert_eq!(s.max_instability, 0.1);
    assert_eq!(
        s.prompts_dir.as_deref(),
        Some(std::path::Path::new("/home/me/prompts"))
    );
    assert_eq!(
        check_settings_from_toml("").unwrap(),
        CheckSettings::default()
    );
    let e = check_settings_from_toml("[crosscheck]\nsampels = 3\n").unwrap_err();
    assert!(e.contains("sampels"), "{e}");
    let v: Value = serde_json::to_value(CheckSettings::default()).unwrap();
    assert_eq!(v["thresholds"]["cfg"]["jump_redundancy"], 0.4);
    assert_eq!(v["thresholds"]["call_graph"]["call_fabrication"], 0.12);
}

#[test]
fn lambdas_belong_to_their_enclosing_function_unless_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lam.py");
    std::fs::write(
        &file,
        "def outer(xs):\n    return list(map(lambda x: abs(x), xs))\n",
    )
    .unwrap();
    let client = answering(
        r#"{"calls": [{"callee": "list"}, {"callee": "map"}, {"callee": "abs"}]}"#.into(),
    );
    let a = args(&["--task", "call_graph", file.to_str().unwrap()]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert_eq!(r.exit_code, 0, "{:?}", r.errors);
    let results = r.json["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["function"], "outer");
    // The lambda's call (abs) is attributed to `outer`, so the answer is complete.
    assert_eq!(
        results[0]["scores"]["missed_calls"], 0.0,
        "{:#}",
        results[0]
    );
    assert_eq!(results[0]["pass"], true);
    let a = args(&[
        "--task",
        "cfg",
        file.to_str().unwrap(),
        "--function",
        "<lambda@2>",
    ]);
    let r = ask(&a, &context(vec![dyn_client(&client)], None, None, None));
    assert!(
        r.errors.iter().all(|e| !e.contains("no function named")),
        "{:?}",
        r.errors
    );
}

/// The SQLite store (another layer) plugs in as the persistent cache and the record sink.
#[test]
fn the_store_serves_as_cache_backend_and_record_sink() {
    use crosscheck::store::{RecordFilter, Store, StoreConfig};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cc.db");
    let q = question("inventory.py", Task::Cfg, "total");
    let client = answering(perfect_answer(&q));
    let a = args(&[
        "--task",
        "cfg",
        &path("inventory.py"),
        "--function",
        "total",
    ]);
    {
        let store = Arc::new(Store::open(&db, StoreConfig::default()).unwrap());
        let sink: &dyn RecordSink = store.as_ref();
        let r = ask(
            &a,
            &context(
                vec![dyn_client(&client)],
                Some(store.clone()),
                Some(sink),
                None,
            ),
        );
        assert_eq!(r.exit_code, 0, "{:?}", r.errors);
        let records = store.records(&RecordFilter::default()).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(
            records[0].tier,
            Some(crosscheck::crosscheck::record::Tier::Confirmed)
        );
        assert_eq!(records[0].source_text, None);
    }
    // A later process: the answer comes from the database, the model is not asked again.
    let store = Arc::new(Store::open(&db, StoreConfig::default()).unwrap());
    let r = ask(
        &a,
        &context(vec![dyn_client(&client)], Some(store), None, None),
    );
    assert_eq!(r.exit_code, 0);
    assert_eq!(client.request_count(), 1);
    assert_eq!(r.json["cache"]["hits"], 1);
}
