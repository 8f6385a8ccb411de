//! The real binary over stdio: exit code 0 after `shutdown` + `exit`, 1 for `exit` without
//! `shutdown`, and nothing but framed JSON-RPC on stdout.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn frame(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Parses stdout as a sequence of LSP frames; panics on anything else.
fn frames(mut bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let head_end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| {
                panic!(
                    "stdout is not LSP framing: {:?}",
                    String::from_utf8_lossy(bytes)
                )
            });
        let head = std::str::from_utf8(&bytes[..head_end]).unwrap();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length:"))
            .expect("Content-Length header")
            .trim()
            .parse()
            .unwrap();
        let body = &bytes[head_end + 4..head_end + 4 + len];
        out.push(serde_json::from_slice(body).expect("JSON body"));
        bytes = &bytes[head_end + 4 + len..];
    }
    out
}

fn run_session(messages: &[Value]) -> (i32, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .arg("lsp")
        .env("CROSSCHECK_CONFIG", dir.path().join("none.toml"))
        .env("CROSSCHECK_DATA_DIR", dir.path().join("data"))
        .env_remove("CROSSCHECK_LLM_BASE_URL")
        .env_remove("CROSSCHECK_LLM_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn crosscheck lsp");
    let mut stdin = child.stdin.take().unwrap();
    for m in messages {
        stdin.write_all(&frame(m)).unwrap();
        stdin.flush().unwrap();
        // Give the server time to answer requests in order.
        std::thread::sleep(Duration::from_millis(100));
    }
    // Keep stdin open: the server must exit on `exit` alone.
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "server did not exit after `exit`"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    (status.code().unwrap_or(-1), frames(&out))
}

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"processId": null, "rootUri": null, "capabilities": {}}})
}

#[test]
fn shutdown_then_exit_exits_with_code_zero_and_stdout_is_only_protocol() {
    let (code, out) = run_session(&[
        init(),
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///tmp/x.py", "languageId": "python", "version": 1, "text": "def f(:\n"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null}),
        json!({"jsonrpc": "2.0", "method": "exit", "params": null}),
    ]);
    assert_eq!(code, 0);
    let ids: Vec<&Value> = out.iter().filter_map(|m| m.get("id")).collect();
    assert!(
        ids.contains(&&json!(1)) && ids.contains(&&json!(2)),
        "{out:?}"
    );
    let shutdown = out.iter().find(|m| m.get("id") == Some(&json!(2))).unwrap();
    assert!(shutdown["result"].is_null() && shutdown.get("error").is_none());
    assert!(
        out.iter()
            .any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "diagnostics were published before shutdown: {out:?}"
    );
}

#[test]
fn exit_without_shutdown_exits_with_code_one() {
    let (code, _) = run_session(&[
        init(),
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "exit", "params": null}),
    ]);
    assert_eq!(code, 1);
}
