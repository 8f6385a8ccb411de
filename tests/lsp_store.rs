//! Spec: `crosscheck lsp` (the real binary) uses the per-user store named by
//! `CROSSCHECK_DATA_DIR` as its persistent LLM answer cache and telemetry sink.
//!
//! * A first server checks every function of a document with the LLM (a mock
//!   OpenAI-compatible server) and records one cross-check per answered request.
//! * A second server started later on the same data directory serves the unchanged functions
//!   from the store: the LLM gets no request, and the diagnostics carry the cached verdict.
//! * A function edited in the second session is a new cross-check (one request, one record).

use crosscheck::lsp::client::LspClient;
use crosscheck::store::{RecordFilter, Store, StoreConfig};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

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
fn openai_answer() -> ResponseTemplate {
    let content = json!({
        "explanation": "Scales the positive values.",
        "branches": 1,
        "loops": 1,
        "findings": []
    })
    .to_string();
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "x",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}
    }))
}

async fn llm_requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

struct Session {
    client: LspClient,
    child: std::process::Child,
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Connects the child's blocking pipes to async streams (threads copy the bytes).
fn bridge(child: &mut std::process::Child) -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
    use std::io::{Read, Write};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Handle::current();
    let mut stdout = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (client_reader, mut to_client) = tokio::io::duplex(1 << 20);
    let (mut from_client, client_writer) = tokio::io::duplex(1 << 20);
    let rt2 = rt.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || rt.block_on(to_client.write_all(&buf[..n])).is_err() {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = rt2.block_on(from_client.read(&mut buf)) {
            if n == 0 || stdin.write_all(&buf[..n]).is_err() || stdin.flush().is_err() {
                break;
            }
        }
    });
    (client_reader, client_writer)
}

/// Starts `crosscheck lsp` with an isolated configuration pointing at the mock LLM and the
/// given data directory, and initialises it.
async fn start(config: &Path, data: &Path, home: &Path) -> Session {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_crosscheck"));
    cmd.arg("lsp")
        .env("CROSSCHECK_CONFIG", config)
        .env("CROSSCHECK_DATA_DIR", data)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for var in [
        "CROSSCHECK_LLM_PROVIDER",
        "CROSSCHECK_LLM_BASE_URL",
        "CROSSCHECK_LLM_MODEL",
        "CROSSCHECK_LLM_API_KEY_ENV",
        "CROSSCHECK_LLM_TIMEOUT_SECS",
    ] {
        cmd.env_remove(var);
    }
    let mut child = cmd.spawn().expect("spawn crosscheck lsp");
    let (reader, writer) = bridge(&mut child);
    let client = LspClient::new(reader, writer);
    client
        .initialize(json!({"processId": null, "rootUri": null, "capabilities": {}}))
        .await
        .expect("initialize");
    Session { client, child }
}

async fn status(c: &LspClient) -> Value {
    c.request("crosscheck/status", Value::Null)
        .await
        .expect("status")
}

async fn wait_idle(c: &LspClient) -> Value {
    let deadline = Instant::now() + T;
    loop {
        let st = status(c).await;
        if st["idle"] == true {
            return st;
        }
        assert!(Instant::now() < deadline, "server never idle: {st}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn open(c: &LspClient, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    )
    .await;
}

/// Waits until the server published diagnostics for `uri` carrying LLM data.
async fn wait_llm_diagnostics(c: &LspClient, uri: &str) -> Vec<Value> {
    c.wait_message("textDocument/publishDiagnostics", 0, T, |p| {
        p["uri"] == uri
            && p["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| !d["data"]["llm"].is_null()))
    })
    .await
    .map(|(_, p)| p["diagnostics"].as_array().cloned().unwrap_or_default())
    .unwrap_or_else(|| panic!("no diagnostics with LLM data for {uri}"))
}

async fn stop(mut s: Session) {
    s.client
        .request("shutdown", Value::Null)
        .await
        .expect("shutdown");
    s.client.notify("exit", Value::Null).await;
    let deadline = Instant::now() + T;
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("wait") {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "server did not exit after `exit`"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(0));
}

fn records(data: &Path) -> Vec<crosscheck::crosscheck::record::CrossCheckRecord> {
    let store = Store::open(&data.join("crosscheck.db"), StoreConfig::default()).expect("store");
    store.records(&RecordFilter::default()).expect("records")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_serves_unchanged_functions_from_the_store_and_records_checks() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(openai_answer())
        .mount(&server)
        .await;
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
    open(&s1.client, &uri, SOURCE).await;
    let diags1 = wait_llm_diagnostics(&s1.client, &uri).await;
    let st1 = wait_idle(&s1.client).await;
    assert_eq!(llm_requests(&server).await, 2, "one request per function");
    assert_eq!(st1["scheduler"]["requests"], 2, "{st1}");
    assert_eq!(st1["scheduler"]["recorded"], 2, "{st1}");
    stop(s1).await;
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
    open(&s2.client, &uri, SOURCE).await;
    let diags2 = wait_llm_diagnostics(&s2.client, &uri).await;
    let st2 = wait_idle(&s2.client).await;
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
    let st3 = wait_idle(&s2.client).await;
    assert_eq!(
        llm_requests(&server).await,
        3,
        "only the edited function: {st3}"
    );
    assert_eq!(st3["scheduler"]["recorded"], 1, "{st3}");
    stop(s2).await;
    assert_eq!(records(&data).len(), 3);
}
