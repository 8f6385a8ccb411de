//! Spec: `crosscheck lsp` (the real binary) uses the per-user store named by
//! `CROSSCHECK_DATA_DIR` as its persistent LLM answer cache and telemetry sink.
//!
//! * A first server checks every function of a document with the LLM (a mock
//!   OpenAI-compatible server) and records one cross-check per answered request.
//! * A second server started later on the same data directory serves the unchanged functions
//!   from the store: the LLM gets no request, and the diagnostics carry the cached verdict.
//! * A function edited in the second session is a new cross-check (one request, one record).

mod lsp_process;

use crosscheck::store::{RecordFilter, Store, StoreConfig};
use lsp_process::{start, wait_idle};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use wiremock::MockServer;

const T: Duration = Duration::from_secs(30);

const SOURCE: &str = "\
def scale(xs, k):
    out = []
    for x in xs:
        if x > 0:
            out.append(x * k)
    return out


def greet(name):
    return 'hello ' + name
";

/// The mock LLM's answer: 1 branch and 1 loop, right for `scale` (the check agrees) and wrong
/// for `greet` (it disagrees); both are recorded.
fn openai_answer() -> Value {
    json!({
        "explanation": "Scales the positive values.",
        "branches": 1,
        "loops": 1,
        "findings": []
    })
}

async fn llm_requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

fn records(data: &Path) -> Vec<crosscheck::crosscheck::record::CrossCheckRecord> {
    let store = Store::open(&data.join("crosscheck.db"), StoreConfig::default()).expect("store");
    store.records(&RecordFilter::default()).expect("records")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_serves_unchanged_functions_from_the_store_and_records_checks() {
    let server = lsp_process::mock_llm(openai_answer(), Duration::ZERO, (120, 40)).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("config.toml");
    // `refuted = "show"`: the LLM's CFG summary of `greet` contradicts the analyzer, which
    // gives a diagnostic that carries the LLM's data once the check is known.
    std::fs::write(
        &config,
        format!(
            "[llm]\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 5\nretries = 0\n\
             [lsp.llm]\ndebounce_ms = 0\n[lsp.tiers]\nrefuted = \"show\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let file = dir.path().join("scale.py");
    std::fs::write(&file, SOURCE).unwrap();
    let uri = format!("file://{}", file.display());

    // First session: both functions are asked about and recorded.
    let s1 = start(&config, &data, dir.path()).await;
    lsp_process::open_python(&s1.client, &uri, SOURCE).await;
    let diags1 = lsp_process::wait_llm_diagnostics(&s1.client, &uri, T).await;
    let st1 = wait_idle(&s1.client, T).await;
    assert_eq!(llm_requests(&server).await, 2, "one request per function");
    assert_eq!(st1["scheduler"]["requests"], 2, "{st1}");
    assert_eq!(st1["scheduler"]["recorded"], 2, "{st1}");
    lsp_process::stop(s1, T).await;
    assert!(
        data.join("crosscheck.db").exists(),
        "the store is in CROSSCHECK_DATA_DIR"
    );
    let recs = records(&data);
    assert_eq!(recs.len(), 2, "one record per answered check: {recs:?}");
    for r in &recs {
        assert_eq!(r.task, "lsp_function_check");
        assert_eq!(r.model, "test-model");
        assert_eq!(r.language, "python");
        assert_eq!(r.samples.len(), 1);
        assert_eq!(r.prompt_tokens, 120);
        assert!(r.source_text.is_none(), "no code in records by default");
        assert!(
            !serde_json::to_string(r).unwrap().contains("hello"),
            "records are code-free: {r:?}"
        );
        assert!(r.timestamp > 0, "stamped with the clock");
    }
    let passes: Vec<Option<bool>> = {
        let mut p: Vec<Option<bool>> = recs.iter().map(|r| r.pass).collect();
        p.sort();
        p
    };
    assert_eq!(
        passes,
        vec![Some(false), Some(true)],
        "scale agrees (1 branch, 1 loop), greet does not"
    );

    // Second session on the same data directory: nothing is sent, the verdicts come back.
    let s2 = start(&config, &data, dir.path()).await;
    lsp_process::open_python(&s2.client, &uri, SOURCE).await;
    let diags2 = lsp_process::wait_llm_diagnostics(&s2.client, &uri, T).await;
    let st2 = wait_idle(&s2.client, T).await;
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
    let llm_data =
        |d: &[Value]| -> Vec<Value> { d.iter().map(|d| d["data"]["llm"].clone()).collect() };
    assert_eq!(
        llm_data(&diags1),
        llm_data(&diags2),
        "the same verdicts from the store"
    );

    // Editing one function in the second session asks about that function only.
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
        "only the edited function: {st3}"
    );
    assert_eq!(st3["scheduler"]["recorded"], 1, "{st3}");
    lsp_process::stop(s2, T).await;
    assert_eq!(records(&data).len(), 3);
}
