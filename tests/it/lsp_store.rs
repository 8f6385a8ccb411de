//! Spec: `crosscheck lsp` (the real binary) uses the per-user store named by
//! `CROSSCHECK_DATA_DIR` as its persistent LLM answer cache (the one `crosscheck ask` uses)
//! and telemetry sink, with an OpenAI-compatible server (wiremock) as the LLM.
//!
//! * A first server asks one question per taint finding (can the source reach the sink
//!   without sanitisation?); a "yes" answer confirms the finding, and each answered question
//!   is one record of the `taint` task with the analyzer's verdict paired with the LLM's, so
//!   `crosscheck telemetry summary` fills in the LLM-vs-analyzer agreement.
//! * A second server started later on the same data directory serves the unchanged questions
//!   from the store: the LLM gets no request, and the diagnostics carry the cached verdicts.
//! * A finding whose function is edited in the second session is a new question (one
//!   request, one record).

use crate::lsp_process;

use crosscheck::store::{RecordFilter, Store, StoreConfig};
use lsp_process::{start, wait_idle};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use wiremock::MockServer;

const T: Duration = Duration::from_secs(30);

/// Two command injections, one per function (sinks on lines 4 and 9).
const SOURCE: &str = "\
import os
def scale(xs, k):
    cmd = input()
    os.system(cmd)
    return [x * k for x in xs]


def greet(name):
    os.system('echo ' + input())
    return 'hello ' + name
";

fn openai_answer() -> Value {
    json!({"answer": "yes", "reasoning": "line 2 reads input and line 3 passes it to a shell"})
}

async fn llm_requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

fn records(data: &Path) -> Vec<crosscheck::crosscheck::record::CrossCheckRecord> {
    let store = Store::open(&data.join("crosscheck.db"), StoreConfig::default()).expect("store");
    store.records(&RecordFilter::default()).expect("records")
}

fn taint(d: &[Value]) -> Vec<Value> {
    d.iter()
        .filter(|d| d["code"] == "taint-command")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_serves_unchanged_questions_from_the_store_and_records_checks() {
    let server = lsp_process::mock_llm(openai_answer(), Duration::ZERO, (120, 40)).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("config.toml");
    // Function checks off: this test is about the findings' questions.
    std::fs::write(
        &config,
        format!(
            "[llm]\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 5\nretries = 0\n\
             [lsp.llm]\ndebounce_ms = 0\nfunction_checks = \"off\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let file = dir.path().join("scale.py");
    std::fs::write(&file, SOURCE).unwrap();
    let uri = format!("file://{}", file.display());

    // First session: both findings are asked about, confirmed and recorded.
    let s1 = start(&config, &data, dir.path()).await;
    lsp_process::open_python(&s1.client, &uri, SOURCE).await;
    let st1 = wait_idle(&s1.client, T).await;
    let diags1 = s1
        .client
        .wait_message("textDocument/publishDiagnostics", 0, T, |p| {
            p["uri"] == uri.as_str()
                && p["diagnostics"].as_array().is_some_and(|d| {
                    taint(d).len() == 2 && taint(d).iter().all(|d| !d["data"]["llm"].is_null())
                })
        })
        .await
        .expect("both findings carry their answers")
        .1["diagnostics"]
        .as_array()
        .cloned()
        .unwrap();
    assert_eq!(llm_requests(&server).await, 2, "one request per finding");
    assert_eq!(st1["scheduler"]["requests"], 2, "{st1}");
    assert_eq!(st1["scheduler"]["recorded"], 2, "{st1}");
    for d in taint(&diags1) {
        assert_eq!(d["data"]["tier"], "confirmed", "{d}");
        assert_eq!(d["data"]["llm"]["task"], "taint", "{d}");
        assert_eq!(d["data"]["llm"]["verdict"], "yes", "{d}");
    }
    lsp_process::stop(s1, T).await;
    assert!(
        data.join("crosscheck.db").exists(),
        "the store is in CROSSCHECK_DATA_DIR"
    );
    let recs = records(&data);
    assert_eq!(recs.len(), 2, "one record per answered question: {recs:?}");
    for r in &recs {
        assert_eq!(r.task, "taint");
        assert!(r.model.starts_with("openai:test-model@"), "{}", r.model);
        assert_eq!(r.language, "python");
        assert_eq!(r.samples.len(), 1);
        assert_eq!(r.prompt_tokens, 120);
        assert_eq!(
            r.analyzer["verdict"], "yes",
            "the analyzer's side of the pair"
        );
        assert_eq!(
            r.samples[0].answer["verdict"], "yes",
            "the LLM's side of the pair"
        );
        assert_eq!(r.pass, Some(true));
        assert!(r.source_text.is_none(), "no code in records by default");
        let text = serde_json::to_string(r).unwrap();
        assert!(
            !text.contains("hello") && !text.contains("reads input"),
            "records are code- and text-free: {text}"
        );
        assert!(r.timestamp > 0, "stamped with the clock");
    }
    // The telemetry summary pairs the verdicts: agreement for the taint task is filled in.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["telemetry", "summary", "--format", "json"])
        .env("CROSSCHECK_DATA_DIR", &data)
        .env("CROSSCHECK_CONFIG", &config)
        .env("HOME", dir.path())
        .output()
        .expect("telemetry summary");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("JSON summary");
    let groups = summary["groups"].as_array().cloned().unwrap_or_default();
    let g = groups
        .iter()
        .find(|g| g["task"] == "taint")
        .unwrap_or_else(|| panic!("a taint group: {summary}"));
    assert_eq!(g["llm_vs_analyzer"]["n"], 2, "{g}");
    assert_eq!(g["llm_vs_analyzer"]["po"], 1.0, "{g}");

    // Second session on the same data directory: nothing is sent, the verdicts come back.
    let s2 = start(&config, &data, dir.path()).await;
    lsp_process::open_python(&s2.client, &uri, SOURCE).await;
    let st2 = wait_idle(&s2.client, T).await;
    let diags2 = lsp_process::wait_llm_diagnostics(&s2.client, &uri, T).await;
    assert_eq!(
        llm_requests(&server).await,
        2,
        "no request after the restart"
    );
    assert_eq!(st2["scheduler"]["requests"], 0, "{st2}");
    assert_eq!(st2["scheduler"]["cache_hits"], 2, "{st2}");
    assert_eq!(
        st2["scheduler"]["recorded"], 0,
        "a cache hit is not a new check"
    );
    let verdicts = |d: &[Value]| -> Vec<(Value, Value)> {
        taint(d)
            .iter()
            .map(|d| {
                (
                    d["data"]["tier"].clone(),
                    d["data"]["llm"]["verdict"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        verdicts(&diags1),
        verdicts(&diags2),
        "the same verdicts from the store"
    );
    assert!(taint(&diags2)
        .iter()
        .all(|d| d["data"]["llm"]["cached"] == true));

    // Editing `greet` in the second session asks about its finding only.
    s2.client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"range": {"start": {"line": 9, "character": 11},
                                                 "end": {"line": 9, "character": 19}},
                                       "text": "'hi '"}]}),
        )
        .await;
    s2.client
        .wait_message("textDocument/publishDiagnostics", 0, T, |p| {
            p["uri"] == uri.as_str() && p["version"] == 2
        })
        .await
        .expect("diagnostics for version 2");
    let st3 = wait_idle(&s2.client, T).await;
    assert_eq!(
        llm_requests(&server).await,
        3,
        "only the edited function's finding: {st3}"
    );
    assert_eq!(st3["scheduler"]["recorded"], 1, "{st3}");
    lsp_process::stop(s2, T).await;
    assert_eq!(records(&data).len(), 3);
}
