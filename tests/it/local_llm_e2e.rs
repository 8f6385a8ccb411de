//! End to end against a **real** local model: `crosscheck ask` through the real binary, talking
//! HTTP to llama.cpp's `llama-server` serving Qwen2.5-Coder-1.5B (installed and started by
//! `.ci/local-llm.sh`, which `.ci/run` calls before running these tests one at a time with
//! `--ignored --test-threads=1`).
//!
//! The model is weak, so these tests prove the plumbing, not the model's judgment: the request
//! goes out, a structured answer comes back and is normalised, compared with the analyzer's facts,
//! scored and tiered; the record reaches the store; an identical second call is served from the
//! cache without any HTTP request. They print the per-task latency and the cache hit rate of the
//! second run (`cargo test --test local_llm_e2e -- --ignored --nocapture`).
//!
//! A third test runs the language server (`crosscheck lsp`) against the same model: the
//! deterministic diagnostics and hovers answer at once while the model is still thinking, edits
//! keep flowing, the model's answer to the taint finding's own question and its CFG check of
//! the edited function land in the hover and in the store, a restarted server answers them
//! from the cache, and `telemetry summary` lists the taint task from the editor's records.
//!
//! A fourth runs `crosscheck eval` on one item of each public data set (one task each, eight
//! requests), reruns it (resumed: no request), and screenshots its HTML report in headless
//! Chromium.
//!
//! Without `CROSSCHECK_LLM_BASE_URL` they fail rather than skip: they only run when asked for.

use crate::eval_support;
use crate::lsp_process;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_crosscheck");

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// A private config + data directory pointing at the running local server.
struct Env {
    _dir: tempfile::TempDir,
    config: PathBuf,
    data: PathBuf,
}

fn local_env() -> Env {
    let base = std::env::var("CROSSCHECK_LLM_BASE_URL").expect(
        "CROSSCHECK_LLM_BASE_URL is not set: start the local model with `.ci/local-llm.sh start` \
         and export the lines it prints (`.ci/run` does this)",
    );
    let model = std::env::var("CROSSCHECK_LLM_MODEL").unwrap_or_else(|_| "local".to_string());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    // Small models loop at temperature 0: bound the answer. Two cores serve ~14 tokens/s, so a
    // generous per-call timeout keeps a loaded CI machine from failing on time alone.
    std::fs::write(
        &config,
        format!(
            "[llm]\nbase_url = \"{base}\"\nmodel = \"{model}\"\ntemperature = 0.0\nseed = 1\n\
             max_tokens = 768\ntimeout_secs = 400\nretries = 1\n"
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    Env {
        _dir: dir,
        config,
        data,
    }
}

fn crosscheck(env: &Env, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("CROSSCHECK_CONFIG", &env.config)
        .env("CROSSCHECK_DATA_DIR", &env.data)
        // The config file is the only LLM setting in play.
        .env_remove("CROSSCHECK_LLM_BASE_URL")
        .env_remove("CROSSCHECK_LLM_MODEL")
        .env_remove("CROSSCHECK_LLM_PROVIDER")
        .env_remove("CROSSCHECK_LLM_API_KEY_ENV")
        .env_remove("CROSSCHECK_LLM_TIMEOUT_SECS")
        .output()
        .expect("run crosscheck")
}

/// (task, file, function): one per task `ask` supports, on the project's own files.
fn cases() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("cfg", example("inventory.py"), "total"),
        ("call_graph", example("inventory.py"), "lookup"),
        ("data_dependency", example("inventory.py"), "lookup"),
        ("taint", example("inventory.py"), "lookup"),
        ("points_to", example("wordfreq.c"), "lookup"),
        ("ast", example("Ledger.java"), "balance"),
    ]
}

const CONTRACT_KEYS: [&str; 12] = [
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
    "cache",
];

fn ask(env: &Env, task: &str, file: &str, function: &str) -> (Value, String, f64) {
    let t0 = Instant::now();
    let out = crosscheck(
        env,
        &[
            "-v",
            "ask",
            "--task",
            task,
            file,
            "--function",
            function,
            "--format",
            "json",
        ],
    );
    let secs = t0.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "ask --task {task} {file} --function {function} failed:\n{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("ask --task {task}: stdout is not JSON ({e}):\n{stderr}"));
    (v, stderr, secs)
}

#[test]
#[ignore = "needs the local LLM server; .ci/run starts it and runs this with --ignored"]
fn every_task_gets_a_parsed_scored_tiered_answer_and_the_second_run_is_cached() {
    let env = local_env();
    // Functions that exist in the examples, checked before any model time is spent.
    for (task, file, function) in cases() {
        assert!(Path::new(&file).exists(), "{task}: {file} is missing");
        let _ = function;
    }

    let mut first = Vec::new();
    for (task, file, function) in cases() {
        let (v, stderr, secs) = ask(&env, task, &file, function);
        for key in CONTRACT_KEYS {
            assert!(v.get(key).is_some(), "{task}: no `{key}` in {v}");
        }
        assert_eq!(v["task"], task, "{v}");
        // `provider:model@endpoint`: the model the user configured, at the local endpoint.
        let model = v["model"].as_str().unwrap_or_default();
        assert!(
            model.contains(":local@http://127.0.0.1"),
            "{task}: model {model:?}"
        );
        assert!(
            v["llm"].is_object() || v["llm"].is_array(),
            "{task}: the answer was not parsed into the task's shape: {v}"
        );
        assert!(!v["analyzer"].is_null(), "{task}: no analyzer facts: {v}");
        assert!(v["scores"].is_object(), "{task}: {v}");
        assert!(v["pass"].is_boolean(), "{task}: {v}");
        let tier = v["tier"].as_str().unwrap_or_default();
        assert!(
            ["confirmed", "analyzer-only"].contains(&tier),
            "{task}: the function-level tier is {tier:?}"
        );
        // An LLM-only claim never rises above llm-only, whatever the model said.
        for claim in v["claims"].as_array().unwrap() {
            let t = claim["tier"].as_str().unwrap_or_default();
            assert!(
                ["llm-only", "refuted"].contains(&t),
                "{task}: an LLM claim got tier {t:?}: {claim}"
            );
        }
        assert_eq!(v["cache"]["hits"], 0, "{task}: first run hit a cache: {v}");
        assert!(
            v["cache"]["misses"].as_u64().unwrap_or(0) >= 1,
            "{task}: first run made no request: {v}"
        );
        assert!(
            stderr.contains("miss(es)"),
            "{task}: -v cache line missing:\n{stderr}"
        );
        eprintln!(
            "local-llm: {task:<16} {function:<8} {secs:6.1} s  pass={} tier={tier}",
            v["pass"]
        );
        first.push((task, v, secs));
    }

    // The store recorded every cross-check (hashes and verdicts; no source text by default).
    let summary = crosscheck(&env, &["telemetry", "export", "--format", "jsonl"]);
    assert_eq!(summary.status.code(), Some(0), "{summary:?}");
    let exported = String::from_utf8_lossy(&summary.stdout).to_string();
    let records = exported.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(
        records >= cases().len(),
        "expected at least {} telemetry records, got {records}:\n{exported}",
        cases().len()
    );
    let source = std::fs::read_to_string(example("inventory.py")).unwrap();
    let distinctive = source
        .lines()
        .map(str::trim)
        .filter(|l| l.len() > 30)
        .max_by_key(|l| l.len())
        .unwrap();
    assert!(
        !exported.contains(distinctive),
        "telemetry carries source text"
    );

    // Second identical run: every answer from the cache, no HTTP request, same verdicts.
    let (mut hits, mut misses) = (0, 0);
    for ((task, file, function), (_, before, secs_first)) in cases().into_iter().zip(&first) {
        let (v, stderr, secs) = ask(&env, task, &file, function);
        let h = v["cache"]["hits"].as_u64().unwrap_or(0);
        let m = v["cache"]["misses"].as_u64().unwrap_or(0);
        hits += h;
        misses += m;
        assert_eq!(m, 0, "{task}: second run missed the cache: {v}\n{stderr}");
        assert!(h >= 1, "{task}: {v}");
        for key in ["llm", "analyzer", "scores", "pass", "tier", "claims"] {
            assert_eq!(
                v[key], before[key],
                "{task}: `{key}` changed on a cached rerun"
            );
        }
        eprintln!("local-llm: {task:<16} cached {secs:6.2} s (first {secs_first:.1} s)");
    }
    let total: f64 = first.iter().map(|(_, _, s)| s).sum();
    eprintln!(
        "local-llm: first run {total:.1} s for {} tasks; second run cache hit rate {:.2} ({hits}/{})",
        first.len(),
        hits as f64 / (hits + misses).max(1) as f64,
        hits + misses
    );
}

#[test]
#[ignore = "needs the local LLM server; .ci/run starts it and runs this with --ignored"]
fn injected_instructions_in_the_code_raise_no_llm_only_claim_and_change_no_finding() {
    let env = local_env();
    let file = fixture("crosscheck/injection.py");
    assert!(Path::new(&file).exists(), "{file} is missing");
    let before = crosscheck(&env, &["analyze", &file, "--format", "json"]);
    assert_eq!(before.status.code(), Some(0), "{before:?}");
    let (v, stderr, secs) = ask(&env, "taint", &file, "run_command");
    eprintln!("local-llm: injection taint {secs:.1} s\n{stderr}");
    for claim in v["claims"].as_array().unwrap() {
        assert_ne!(claim["tier"], "confirmed", "{claim}");
        assert_ne!(claim["tier"], "analyzer-only", "{claim}");
    }
    // The analyzer's facts are the analyzer's, whatever the model answered.
    let after = crosscheck(&env, &["analyze", &file, "--format", "json"]);
    let strip = |o: &Output| {
        let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
        if let Some(obj) = v.as_object_mut() {
            obj.remove("timing");
        }
        v
    };
    assert_eq!(strip(&before), strip(&after));
    for fact in v["facts"].as_array().unwrap() {
        assert!(
            ["confirmed", "analyzer-only"].contains(&fact["tier"].as_str().unwrap_or_default()),
            "{fact}"
        );
    }
}

const LSP_SOURCE: &str = "\
import os


def scale(xs, k):
    out = []
    for x in xs:
        if x > 0:
            out.append(x * k)
    return out


def run(request):
    cmd = request.args[\"cmd\"]
    os.system(\"ls \" + cmd)
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the local LLM server; .ci/run starts it and runs this with --ignored"]
async fn the_language_server_answers_at_once_and_merges_the_real_model_when_it_arrives() {
    let env = local_env();
    let mut config = std::fs::read_to_string(&env.config).unwrap();
    config.push_str("[lsp.llm]\ndebounce_ms = 0\n");
    std::fs::write(&env.config, config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.py");
    std::fs::write(&file, LSP_SOURCE).unwrap();
    let uri = format!("file://{}", file.display());
    let quick = Duration::from_secs(20);

    let s = lsp_process::start(&env.config, &env.data, dir.path()).await;
    let c = &s.client;
    lsp_process::open_python(c, &uri, LSP_SOURCE).await;
    // The deterministic taint flow is published without waiting for the model.
    let t0 = Instant::now();
    let (_, first) = c
        .wait_message("textDocument/publishDiagnostics", 0, quick, |p| {
            p["uri"] == uri.as_str()
        })
        .await
        .expect("deterministic diagnostics");
    let diags = first["diagnostics"].as_array().cloned().unwrap_or_default();
    assert!(
        diags.iter().any(|d| d["range"]["start"]["line"] == 13),
        "a finding on the os.system line: {first}"
    );
    eprintln!(
        "local-llm: lsp first publish {:.2} s",
        t0.elapsed().as_secs_f64()
    );

    // While the model works: a hover answers at once, and an edit is published at once.
    let t1 = Instant::now();
    let hover = tokio::time::timeout(
        quick,
        c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 5}}),
        ),
    )
    .await
    .expect("hover answered while the LLM is busy")
    .expect("hover");
    assert!(
        hover.to_string().contains("LLM"),
        "the hover says what the LLM state is: {hover}"
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 12, "character": 4},
                                             "end": {"line": 12, "character": 7}},
                                   "text": "command"},
                                  {"range": {"start": {"line": 13, "character": 22},
                                             "end": {"line": 13, "character": 25}},
                                   "text": "command"}]}),
    )
    .await;
    c.wait_message("textDocument/publishDiagnostics", 0, quick, |p| {
        p["uri"] == uri.as_str() && p["version"] == 2
    })
    .await
    .expect("diagnostics for the edit while the LLM is busy");
    eprintln!(
        "local-llm: lsp hover + edit published {:.2} s while the model was busy",
        t1.elapsed().as_secs_f64()
    );

    // The model's answers arrive, are recorded, and show in the hover of `scale`.
    let st = lsp_process::wait_idle(c, Duration::from_secs(900)).await;
    eprintln!(
        "local-llm: lsp idle after {:.1} s: {}",
        t0.elapsed().as_secs_f64(),
        st["scheduler"]
    );
    assert!(st["llm_available"] == true, "{st}");
    assert!(
        st["scheduler"]["requests"].as_u64().unwrap_or(0) >= 1,
        "{st}"
    );
    assert!(
        st["scheduler"]["recorded"].as_u64().unwrap_or(0) >= 1,
        "{st}"
    );
    // `run` (0-based line 12) was edited: its finding's question and its CFG check.
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 12, "character": 5}}),
        )
        .await
        .expect("hover");
    let text = hover.to_string();
    eprintln!("local-llm: hover of run: {text}");
    assert!(
        text.contains("`taint-command` at line 14: **"),
        "the finding's question was answered: {text}"
    );
    assert!(text.contains("CFG cross-check of `run`"), "{text}");
    lsp_process::stop(s, quick).await;

    // A restart on the same store: the questions about the edited text are cache hits.
    // The text of version 2 (the two edits above).
    let edited = LSP_SOURCE
        .replace("    cmd = ", "    command = ")
        .replace("+ cmd)", "+ command)");
    std::fs::write(&file, &edited).unwrap();
    let s = lsp_process::start(&env.config, &env.data, dir.path()).await;
    lsp_process::open_python(&s.client, &uri, &edited).await;
    let st = lsp_process::wait_idle(&s.client, Duration::from_secs(900)).await;
    eprintln!("local-llm: lsp restart: {}", st["scheduler"]);
    assert!(
        st["scheduler"]["cache_hits"].as_u64().unwrap_or(0) >= 1,
        "{st}"
    );
    let diags = lsp_process::wait_llm_diagnostics(&s.client, &uri, quick).await;
    let flow = diags
        .iter()
        .find(|d| d["code"] == "taint-command")
        .expect("the finding");
    assert_eq!(flow["data"]["llm"]["task"], "taint", "{flow}");
    assert_eq!(flow["data"]["llm"]["cached"], true, "{flow}");
    assert!(
        ["confirmed", "analyzer-only"].contains(&flow["data"]["tier"].as_str().unwrap_or("")),
        "{flow}"
    );
    lsp_process::stop(s, quick).await;
    let o = crosscheck(&env, &["telemetry", "summary", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary: Value = serde_json::from_slice(&o.stdout).expect("summary JSON");
    let taint = summary["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["task"] == "taint").cloned())
        .unwrap_or_else(|| panic!("the editor's taint records: {summary}"));
    eprintln!("local-llm: telemetry taint group: {taint}");
    assert!(
        taint["llm_vs_analyzer"]["n"].as_u64().unwrap_or(0) >= 1,
        "{taint}"
    );
}

#[test]
#[ignore = "needs the local LLM server; .ci/run starts it and runs this with --ignored"]
fn eval_on_a_sample_of_each_data_set_resumes_and_its_report_renders() {
    let env = local_env();
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    let out = env.data.join("eval");
    let (datasets, out_s) = (datasets.display().to_string(), out.display().to_string());
    // One item per data set, one task per data set: eight LLM requests.
    let mut args = vec![
        "eval",
        "--datasets",
        &datasets,
        "--out",
        &out_s,
        "--limit",
        "1",
    ];
    for t in [
        "data_dependency",
        "taint",
        "points_to",
        "equivalent_mutant",
        "equivalence",
        "flaky_root_cause",
    ] {
        args.extend(["--task", t]);
    }
    let run = |label: &str| -> Value {
        let t0 = Instant::now();
        let o = crosscheck(&env, &args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{label}: {stderr}");
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
        println!("eval {label}: {v} in {:.1}s", t0.elapsed().as_secs_f64());
        v
    };
    let first = run("first run");
    assert_eq!(first["items"], json!(8), "{first}");
    assert!(first["requests"].as_u64().unwrap() >= 1, "{first}");
    assert!(first["requests"].as_u64().unwrap() <= 12, "{first}");
    let second = run("rerun");
    assert_eq!(second["requests"], json!(0), "resumed: {second}");
    assert_eq!(second["resumed"], first["answered"], "{second}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    println!("{md}");
    let png = eval_support::screenshot(&out.join("report.html"), &env.data);
    let (colours, ink) = eval_support::png_stats(&png);
    assert!(
        colours >= 20 && ink >= 0.02,
        "blank report: {colours} colours, {ink:.3} ink"
    );
}
