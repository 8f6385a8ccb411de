//! Shared helpers for the language-server tests: start an in-process server over an in-memory
//! pipe, initialise it, and drive documents.
#![allow(dead_code)]

use crosscheck::crosscheck::record::{HumanLabel, RecordSink};
use crosscheck::llm::{FakeClient, FakeReply};
use crosscheck::lsp::client::LspClient;
use crosscheck::lsp::ServerOptions;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const T: Duration = Duration::from_secs(20);

/// A scripted model: every taint-flow question is answered `flow` ("yes", "no",
/// "unknown"), CFG and call-graph questions with well-formed answers
/// (`crosscheck::lsp::bench::scripted_reply`).
pub fn scripted(flow: &'static str) -> Arc<FakeClient> {
    Arc::new(FakeClient::from_fn(move |r| {
        crosscheck::lsp::bench::scripted_reply(r, flow)
    }))
}

/// Options with the cross-check engine over the given fake client and a short debounce.
pub fn with_fake(fake: Arc<FakeClient>, debounce_ms: u64) -> ServerOptions {
    with_fake_config(fake, debounce_ms, "")
}

/// Like [`with_fake`], with more lines for the `[lsp.llm]` table of the user config (e.g.
/// `function_checks = "all"`).
pub fn with_fake_config(fake: Arc<FakeClient>, debounce_ms: u64, llm: &str) -> ServerOptions {
    ServerOptions {
        user_config: Some(format!("[lsp.llm]\ndebounce_ms = {debounce_ms}\n{llm}\n")),
        llm: vec![fake],
        workspace_debounce: Duration::from_millis(20),
        ..ServerOptions::default()
    }
}

/// Options without LLM.
pub fn no_llm() -> ServerOptions {
    ServerOptions {
        workspace_debounce: Duration::from_millis(20),
        ..ServerOptions::default()
    }
}

/// A fake client that always answers `text`.
pub fn fake_always(text: String) -> Arc<FakeClient> {
    Arc::new(FakeClient::from_fn(move |_| FakeReply::text(text.clone())))
}

pub fn init_params(root: Option<&std::path::Path>, utf8: bool, options: Value) -> Value {
    let encodings = if utf8 {
        json!(["utf-8", "utf-16"])
    } else {
        json!(["utf-16"])
    };
    let folders = match root {
        Some(r) => {
            let uri = file_uri(r);
            json!([{"uri": uri, "name": "root"}])
        }
        None => Value::Null,
    };
    json!({
        "processId": null,
        "rootUri": null,
        "capabilities": {
            "general": {"positionEncodings": encodings},
            "window": {"workDoneProgress": true},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeWatchedFiles": {"dynamicRegistration": true}
            }
        },
        "workspaceFolders": folders,
        "initializationOptions": options,
    })
}

pub fn file_uri(p: &std::path::Path) -> String {
    format!("file://{}", p.display())
}

/// Starts and initialises a server.
pub async fn start(
    opts: ServerOptions,
    params: Value,
) -> (LspClient, tokio::task::JoinHandle<i32>) {
    let (client, server) = LspClient::in_process(opts);
    client.initialize(params).await.expect("initialize");
    (client, server)
}

pub async fn open(c: &LspClient, uri: &str, lang: &str, version: i64, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": lang, "version": version, "text": text}}),
    )
    .await;
}

pub async fn change(c: &LspClient, uri: &str, version: i64, changes: Value) {
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
    )
    .await;
}

pub fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

pub async fn diagnostics(c: &LspClient, uri: &str, version: i64) -> Vec<Value> {
    let p = c
        .wait_diagnostics(uri, version, T)
        .await
        .unwrap_or_else(|| panic!("no diagnostics for {uri} v{version}"));
    p["diagnostics"].as_array().cloned().unwrap_or_default()
}

/// Diagnostics without per-file identity (for comparing two documents).
pub fn comparable(diags: &[Value]) -> Vec<Value> {
    diags
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if let Some(data) = d.get_mut("data") {
                data.as_object_mut().map(|o| o.remove("fingerprint"));
            }
            d
        })
        .collect()
}

pub fn codes(diags: &[Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

pub async fn hover_text(c: &LspClient, uri: &str, line: u32, character: u32) -> String {
    let r = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
        .await
        .expect("hover");
    r["contents"]["value"].as_str().unwrap_or("").to_string()
}

pub async fn status(c: &LspClient) -> Value {
    c.request("crosscheck/status", Value::Null)
        .await
        .expect("status")
}

/// Waits until no analysis, workspace analysis or LLM check is queued or running.
pub async fn wait_llm_idle(c: &LspClient) -> Value {
    let deadline = std::time::Instant::now() + T;
    loop {
        let st = status(c).await;
        if st["idle"] == true {
            return st;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "scheduler never idle: {st}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A record sink that keeps labels in memory.
#[derive(Default)]
pub struct MemorySink {
    pub labels: Mutex<Vec<HumanLabel>>,
}

impl RecordSink for MemorySink {
    fn record(&self, _: &crosscheck::crosscheck::record::CrossCheckRecord) -> Result<(), String> {
        Ok(())
    }
    fn label(&self, label: &HumanLabel) -> Result<(), String> {
        self.labels.lock().unwrap().push(label.clone());
        Ok(())
    }
}
