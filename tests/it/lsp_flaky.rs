//! Spec: flaky-test hints in the language server. A test with a static flaky-test signal gets
//! a code lens `flaky? <category> (analyzer-only)`, its evidence in the hover, and a code
//! action whose command explains the cause and the usual fix; a test without a signal gets
//! nothing; the lenses follow edits.

use crate::lsp_support;

use lsp_support::*;
use serde_json::{json, Value};

const TESTS_PY: &str = "\
import time


def test_job_eventually_done():
    job = start_job()
    time.sleep(2)
    assert job.done()


def test_addition():
    assert 1 + 1 == 2
";

async fn lenses(c: &crosscheck::lsp::client::LspClient, uri: &str) -> Vec<Value> {
    c.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .expect("codeLens")
    .as_array()
    .cloned()
    .unwrap_or_default()
}

#[tokio::test]
async fn a_test_with_a_signal_gets_a_lens_hover_and_explanation_and_a_plain_test_nothing() {
    let (c, _s) = crosscheck::lsp::client::LspClient::in_process(no_llm());
    let init = c
        .initialize(init_params(None, false, Value::Null))
        .await
        .expect("initialize");
    let caps = &init["capabilities"];
    assert_eq!(caps["codeLensProvider"]["resolveProvider"], false, "{init}");
    let uri = "file:///w/test_jobs.py";
    open(&c, uri, "python", 1, TESTS_PY).await;
    diagnostics(&c, uri, 1).await;

    let l = lenses(&c, uri).await;
    assert_eq!(l.len(), 1, "one suspected test: {l:?}");
    assert_eq!(
        l[0]["range"]["start"]["line"], 3,
        "on `def test_job_eventually_done`"
    );
    let title = l[0]["command"]["title"].as_str().unwrap();
    assert!(title.starts_with("flaky? "), "{title}");
    assert!(title.ends_with("(analyzer-only)"), "{title}");
    assert_eq!(l[0]["command"]["command"], "crosscheck.explainFlaky");

    let hover = hover_text(&c, uri, 4, 6).await;
    assert!(hover.contains("Flaky test?"), "{hover}");
    assert!(
        hover.contains("line 6"),
        "the sleep is the evidence: {hover}"
    );
    let plain = hover_text(&c, uri, 10, 6).await;
    assert!(!plain.contains("Flaky test?"), "{plain}");

    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range(4, 0, 4, 0),
                   "context": {"diagnostics": []}}),
        )
        .await
        .expect("codeAction");
    let why: Vec<&Value> = actions
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["command"] == "crosscheck.explainFlaky")
        .collect();
    assert_eq!(why.len(), 1, "{actions}");
    let out = c
        .request(
            "workspace/executeCommand",
            json!({"command": "crosscheck.explainFlaky", "arguments": why[0]["arguments"]}),
        )
        .await
        .expect("explainFlaky");
    assert_eq!(out["tier"], "analyzer-only", "{out}");
    assert!(
        out["explanation"].as_str().is_some_and(|s| !s.is_empty()),
        "{out}"
    );
    assert!(
        out["usual_fix"].as_str().is_some_and(|s| !s.is_empty()),
        "{out}"
    );
    assert_eq!(out["category"], title.split(' ').nth(1).unwrap(), "{out}");

    // The lens follows edits: removing the sleep removes the hint.
    change(
        &c,
        uri,
        2,
        json!([{"range": range(5, 0, 6, 0), "text": ""}]),
    )
    .await;
    diagnostics(&c, uri, 2).await;
    assert!(lenses(&c, uri).await.is_empty(), "no signal, no hint");
}
