//! A minimal LSP client over any byte stream, for in-process end-to-end tests and the latency
//! benchmark. It frames JSON-RPC messages (`Content-Length`), matches responses to requests,
//! records every notification and server-to-client request in arrival order, and answers
//! server requests itself: `workspace/configuration` with the configured value,
//! `workspace/applyEdit` with `applied: true`, everything else with `null`.

use super::server::{serve, ServerOptions};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

type Writer = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

#[derive(Default)]
struct Shared {
    /// Notifications and server requests, in arrival order.
    log: Mutex<Vec<Value>>,
    responses: Mutex<HashMap<String, Value>>,
    configuration: Mutex<Value>,
    closed: std::sync::atomic::AtomicBool,
}

/// The client half of an LSP connection.
pub struct LspClient {
    writer: Writer,
    shared: Arc<Shared>,
    notify: Arc<Notify>,
    next_id: AtomicI64,
    reader: JoinHandle<()>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads one framed message; `None` at end of stream or on a framing error.
async fn read_message<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> Option<Value> {
    let mut len: Option<usize> = None;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).await.ok()?;
        if n == 0 {
            return None;
        }
        let t = line.trim_end();
        if t.is_empty() {
            break;
        }
        if let Some(v) = t.strip_prefix("Content-Length:") {
            len = v.trim().parse().ok();
        }
    }
    let mut body = vec![0u8; len?];
    r.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl LspClient {
    /// Connects to a server on the other end of `reader`/`writer`.
    pub fn new<R, W>(reader: R, writer: W) -> LspClient
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer: Writer = Arc::new(tokio::sync::Mutex::new(Box::new(writer)));
        let shared = Arc::new(Shared::default());
        let notify = Arc::new(Notify::new());
        let (w, s, n) = (
            Arc::clone(&writer),
            Arc::clone(&shared),
            Arc::clone(&notify),
        );
        let reader = tokio::spawn(async move {
            let mut r = BufReader::new(reader);
            while let Some(msg) = read_message(&mut r).await {
                let method = msg
                    .get("method")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let id = msg.get("id").cloned();
                match (method, id) {
                    (Some(m), Some(id)) => {
                        let result = match m.as_str() {
                            "workspace/configuration" => {
                                let c = lock(&s.configuration).clone();
                                let items = msg
                                    .pointer("/params/items")
                                    .and_then(Value::as_array)
                                    .map(|a| a.len())
                                    .unwrap_or(1);
                                Value::Array(vec![c; items])
                            }
                            "workspace/applyEdit" => json!({"applied": true}),
                            _ => Value::Null,
                        };
                        lock(&s.log).push(msg);
                        let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
                        let bytes = frame(body.to_string().as_bytes());
                        let mut g = w.lock().await;
                        let _ = g.write_all(&bytes).await;
                        let _ = g.flush().await;
                    }
                    (Some(_), None) => lock(&s.log).push(msg),
                    (None, Some(id)) => {
                        lock(&s.responses).insert(id_key(&id), msg);
                    }
                    (None, None) => {}
                }
                n.notify_waiters();
            }
            s.closed.store(true, Ordering::SeqCst);
            n.notify_waiters();
        });
        LspClient {
            writer,
            shared,
            notify,
            next_id: AtomicI64::new(1),
            reader,
        }
    }

    /// Starts a server in this runtime over an in-memory pipe. The handle yields the server's
    /// exit code.
    pub fn in_process(opts: ServerOptions) -> (LspClient, JoinHandle<i32>) {
        let (client_io, server_io) = tokio::io::duplex(1 << 22);
        let (sr, sw) = tokio::io::split(server_io);
        let server = tokio::spawn(serve(sr, sw, opts));
        let (cr, cw) = tokio::io::split(client_io);
        (LspClient::new(cr, cw), server)
    }

    /// The value returned for `workspace/configuration` requests.
    pub fn set_configuration(&self, v: Value) {
        *lock(&self.shared.configuration) = v;
    }

    /// Writes raw bytes (for malformed-input tests).
    pub async fn send_raw(&self, bytes: &[u8]) {
        let mut g = self.writer.lock().await;
        let _ = g.write_all(bytes).await;
        let _ = g.flush().await;
    }

    /// Sends one framed JSON message.
    pub async fn send_json(&self, v: &Value) {
        self.send_raw(&frame(v.to_string().as_bytes())).await;
    }

    pub async fn notify(&self, method: &str, params: Value) {
        self.send_json(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Sends a request and returns its id without waiting.
    pub async fn request_start(&self, method: &str, params: Value) -> i64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Waits for the response to a request id: `Ok(result)` or `Err(error object)`.
    pub async fn response(&self, id: i64, timeout: Duration) -> Result<Value, Value> {
        let key = id_key(&json!(id));
        let got = self
            .wait_until(timeout, || lock(&self.shared.responses).remove(&key))
            .await;
        match got {
            Some(msg) => match msg.get("error") {
                Some(e) => Err(e.clone()),
                None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
            },
            None => Err(json!({"message": "timed out waiting for the response"})),
        }
    }

    /// Sends a request and waits (10 s at most) for its response.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.request_start(method, params).await;
        self.response(id, Duration::from_secs(10)).await
    }

    /// The response to a raw message with a given id (e.g. `null` for parse errors).
    pub async fn raw_response(&self, id: &Value, timeout: Duration) -> Option<Value> {
        let key = id_key(id);
        self.wait_until(timeout, || lock(&self.shared.responses).remove(&key))
            .await
    }

    /// `initialize` followed by `initialized`; returns the initialize result.
    pub async fn initialize(&self, params: Value) -> Result<Value, Value> {
        let r = self.request("initialize", params).await?;
        self.notify("initialized", json!({})).await;
        Ok(r)
    }

    /// Number of notifications and server requests received so far.
    pub fn log_len(&self) -> usize {
        lock(&self.shared.log).len()
    }

    /// Every notification / server request with this method, in order.
    pub fn messages(&self, method: &str) -> Vec<Value> {
        lock(&self.shared.log)
            .iter()
            .filter(|m| m.get("method").and_then(Value::as_str) == Some(method))
            .cloned()
            .collect()
    }

    /// Waits for a message with `method` at log index `from` or later whose params satisfy
    /// `pred`; returns (index, params).
    pub async fn wait_message(
        &self,
        method: &str,
        from: usize,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<(usize, Value)> {
        self.wait_until(timeout, || {
            let log = lock(&self.shared.log);
            // Only the matching message is cloned: the log of a long session (a benchmark's
            // hundreds of publications) is scanned on every wake-up.
            log.iter().enumerate().skip(from).find_map(|(i, m)| {
                if m.get("method").and_then(Value::as_str) != Some(method) {
                    return None;
                }
                let params = m.get("params").unwrap_or(&Value::Null);
                pred(params).then(|| (i, params.clone()))
            })
        })
        .await
    }

    /// Waits for `publishDiagnostics` of `uri` with exactly `version`.
    pub async fn wait_diagnostics(
        &self,
        uri: &str,
        version: i64,
        timeout: Duration,
    ) -> Option<Value> {
        self.wait_message("textDocument/publishDiagnostics", 0, timeout, |p| {
            p.get("uri").and_then(Value::as_str) == Some(uri)
                && p.get("version").and_then(Value::as_i64) == Some(version)
        })
        .await
        .map(|(_, p)| p)
    }

    /// The latest `publishDiagnostics` params for `uri`.
    pub fn latest_diagnostics(&self, uri: &str) -> Option<Value> {
        self.messages("textDocument/publishDiagnostics")
            .into_iter()
            .rev()
            .map(|m| m.get("params").cloned().unwrap_or(Value::Null))
            .find(|p| p.get("uri").and_then(Value::as_str) == Some(uri))
    }

    /// True once the server closed the stream.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    async fn wait_until<T>(
        &self,
        timeout: Duration,
        mut probe: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(v) = probe() {
                return Some(v);
            }
            if self.is_closed() {
                return probe();
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return probe();
            }
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
