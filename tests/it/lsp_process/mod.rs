//! Shared helpers for tests that run the real `crosscheck lsp` binary as a child process and
//! talk to it over its stdin/stdout with the crate's minimal LSP client.
#![allow(dead_code)]

use crosscheck::lsp::client::LspClient;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A running server and the client connected to it; the child is killed on drop.
pub struct Session {
    pub client: LspClient,
    pub child: std::process::Child,
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

/// Starts `crosscheck lsp` with an isolated configuration file and data directory (no
/// `CROSSCHECK_LLM_*` variables leak in from the test's environment) and initialises it.
pub async fn start(config: &Path, data: &Path, home: &Path) -> Session {
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

pub async fn status(c: &LspClient) -> Value {
    c.request("crosscheck/status", Value::Null)
        .await
        .expect("status")
}

/// Waits until the server reports no pending work.
pub async fn wait_idle(c: &LspClient, timeout: Duration) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let st = status(c).await;
        if st["idle"] == true {
            return st;
        }
        assert!(Instant::now() < deadline, "server never idle: {st}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn open_python(c: &LspClient, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    )
    .await;
}

/// Waits until the server published diagnostics for `uri` carrying LLM data.
pub async fn wait_llm_diagnostics(c: &LspClient, uri: &str, timeout: Duration) -> Vec<Value> {
    c.wait_message("textDocument/publishDiagnostics", 0, timeout, |p| {
        p["uri"] == uri
            && p["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| !d["data"]["llm"].is_null()))
    })
    .await
    .map(|(_, p)| p["diagnostics"].as_array().cloned().unwrap_or_default())
    .unwrap_or_else(|| panic!("no diagnostics with LLM data for {uri}"))
}

/// `shutdown` then `exit`; the process must end with code 0.
pub async fn stop(mut s: Session, timeout: Duration) {
    s.client
        .request("shutdown", Value::Null)
        .await
        .expect("shutdown");
    s.client.notify("exit", Value::Null).await;
    let deadline = Instant::now() + timeout;
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

/// A mock OpenAI-compatible server answering every chat completion with `content` (the
/// interim checker's JSON answer) after `delay`, reporting the given prompt/completion tokens.
pub async fn mock_llm(content: Value, delay: Duration, tokens: (u64, u64)) -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let body = json!({
        "id": "x",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content.to_string()},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens.0, "completion_tokens": tokens.1,
                  "total_tokens": tokens.0 + tokens.1}
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(body)
                .set_delay(delay),
        )
        .mount(&server)
        .await;
    server
}
