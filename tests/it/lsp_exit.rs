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
    let chunks: Vec<Vec<u8>> = messages.iter().map(frame).collect();
    let (code, out, _) = run_raw_session(&chunks, &[]);
    (code, out)
}

/// Writes raw byte chunks (well-formed frames or not) one after another; returns the exit
/// code, the frames on stdout and stderr.
fn run_raw_session(chunks: &[Vec<u8>], env: &[(&str, &str)]) -> (i32, Vec<Value>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
    cmd.arg("lsp")
        .env("CROSSCHECK_CONFIG", dir.path().join("none.toml"))
        .env("CROSSCHECK_DATA_DIR", dir.path().join("data"))
        .env_remove("CROSSCHECK_LLM_BASE_URL")
        .env_remove("CROSSCHECK_LLM_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn crosscheck lsp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    for c in chunks {
        stdin.write_all(c).unwrap();
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
    let err = err_reader.join().unwrap();
    (status.code().unwrap_or(-1), frames(&out), err)
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

/// A client may write `exit` right behind `shutdown` without waiting for the answer: the
/// request was received first, so the exit code is 0 (it was 1 every time: `exit` ended the
/// session before the `shutdown` handler ran). `exit` before `shutdown` stays 1.
#[test]
fn shutdown_and_exit_written_together_exit_with_code_zero() {
    let end = [
        frame(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null})),
        frame(&json!({"jsonrpc": "2.0", "method": "exit", "params": null})),
    ]
    .concat();
    for _ in 0..3 {
        let chunks = vec![
            frame(&init()),
            frame(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})),
            end.clone(),
        ];
        let (code, _, _) = run_raw_session(&chunks, &[]);
        assert_eq!(code, 0);
    }
    let reversed = [
        frame(&json!({"jsonrpc": "2.0", "method": "exit", "params": null})),
        frame(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null})),
    ]
    .concat();
    let (code, _, _) = run_raw_session(&[frame(&init()), reversed], &[]);
    assert_eq!(code, 1, "exit before shutdown");
}

#[test]
fn a_desynchronising_frame_costs_one_error_and_shutdown_exit_still_work() {
    let open = br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/s.py","languageId":"python","version":1,"text":"def f(x):\n    return '\ud800'\n"}}}"#;
    let mut bad = b"Content-Length: abc\r\n\r\n".to_vec();
    bad.extend(init().to_string().as_bytes());
    let chunks = vec![
        frame(&init()),
        frame(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})),
        bad,
        frame(&json!({"jsonrpc": "2.0", "id": 7, "method": "$/someExtension", "params": {}})),
        {
            let mut f = format!("Content-Length: {}\r\n\r\n", open.len()).into_bytes();
            f.extend_from_slice(open);
            f
        },
        frame(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null})),
        frame(&json!({"jsonrpc": "2.0", "method": "exit", "params": null})),
    ];
    let (code, out, err) = run_raw_session(&chunks, &[("CROSSCHECK_LOG", "info")]);
    assert_eq!(
        code, 0,
        "shutdown and exit were read after the bad frame: {out:?}"
    );
    let parse_errors: Vec<_> = out
        .iter()
        .filter(|m| m["error"]["code"] == -32700)
        .collect();
    assert_eq!(parse_errors.len(), 1, "{out:?}");
    assert!(parse_errors[0]["id"].is_null());
    let dollar = out
        .iter()
        .find(|m| m["id"] == 7)
        .expect("$/ request answered");
    assert_eq!(dollar["error"]["code"], -32601, "{dollar}");
    assert!(
        out.iter()
            .any(|m| m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == "file:///tmp/s.py"),
        "a didOpen with a lone surrogate is accepted: {out:?}"
    );
    assert!(!err.is_empty(), "info logs were written to stderr");
    assert!(
        !err.contains(&0x1b),
        "no ANSI escape codes when stderr is not a terminal: {}",
        String::from_utf8_lossy(&err)
    );
}
