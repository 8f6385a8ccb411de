//! The latency benchmark behind `crosscheck bench-lsp`: a generated Python file of N lines
//! (functions of 11 lines with branches and loops; every [`FLOW_EVERY`]th one passes
//! `input()` to `os.system`, a taint finding) is opened in an in-process server, then edited
//! E times, each edit changing one literal inside one function. For each edit the time from
//! sending `didChange` to receiving the deterministic `publishDiagnostics` for that version
//! is measured (median, p99, max). LLM questions go through the real cross-check engine and
//! scheduler to a scripted instant client ([`scripted_reply`]), with the configured
//! debounce. The request volume is measured too: opening the file should cost one request
//! per taint finding (the function tasks run for edited functions only), and each edit one
//! request per configured function task (CFG and call graph), all for the edited function.
//! Edits visit distinct functions (up to the function count), so no edit is answered from the
//! cache.

use super::client::LspClient;
use super::server::{ServerOptions, STATUS_REQUEST};
use crate::llm::{ChatRequest, FakeClient, FakeReply};
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Benchmark parameters.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub lines: usize,
    pub edits: usize,
    pub debounce_ms: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            lines: 5000,
            edits: 200,
            debounce_ms: 30,
        }
    }
}

/// Measured figures.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub lines: usize,
    pub functions: usize,
    pub edits: usize,
    /// didOpen -> first publishDiagnostics.
    pub open_ms: f64,
    pub median_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    /// Taint findings in the file (each gets one question).
    pub taint_findings: u64,
    /// LLM requests caused by opening the file (target: one per taint finding).
    pub llm_requests_on_open: u64,
    /// LLM requests per edit, averaged over the edits (target: one per function task).
    pub llm_requests_per_edit: f64,
    /// Function tasks asked about an edited function.
    pub function_tasks: usize,
    /// Requests after the open that were for a function other than the one edited.
    pub llm_requests_for_other_functions: u64,
}

const FUNCTION_LINES: usize = 11;
/// Every this many functions, one has a taint flow.
pub const FLOW_EVERY: usize = 25;
/// Lines before the first function (`import os`).
const HEADER_LINES: usize = 1;

/// A Python file of about `lines` lines; returns the text and, per function, its name and
/// the 0-based line of its `return` statement (whose last character is the edited literal).
pub fn generate_python(lines: usize) -> (String, Vec<(String, u32)>) {
    let n = (lines.saturating_sub(HEADER_LINES) / FUNCTION_LINES).max(1);
    let mut text = String::with_capacity(lines * 32);
    text.push_str("import os\n");
    let mut fns = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("f_{i:05}");
        let base = (HEADER_LINES + i * FUNCTION_LINES) as u32;
        text.push_str(&format!("def {name}(a, b):\n"));
        if i % FLOW_EVERY == 0 {
            text.push_str("    total = os.system(input())\n");
        } else {
            text.push_str("    total = 0\n");
        }
        text.push_str("    for i in range(a):\n");
        text.push_str("        if i % 2 == 0:\n");
        text.push_str("            total += i * b\n");
        text.push_str("        else:\n");
        text.push_str("            total -= 1\n");
        text.push_str("    while total > 100:\n");
        text.push_str("        total //= 2\n");
        text.push_str("    return total + 0\n");
        text.push('\n');
        fns.push((name, base + 9));
    }
    (text, fns)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A scripted answer of the right shape for each question form (by the request's schema
/// name): a taint flow is answered `flow_answer` ("yes", "no", "unknown"), a CFG with an
/// entry-exit graph, a call graph with no calls, anything else with an empty object.
pub fn scripted_reply(req: &ChatRequest, flow_answer: &str) -> FakeReply {
    let text = match req.schema_name.as_deref() {
        Some("taint_flow") => json!({
            "answer": flow_answer,
            "reasoning": "scripted answer",
        })
        .to_string(),
        Some("cfg") => json!({
            "nodes": [{"id": 1, "type": "entry", "line": 1}, {"id": 2, "type": "exit", "line": null}],
            "edges": [{"from": 1, "to": 2}],
        })
        .to_string(),
        Some("call_graph") => json!({"calls": []}).to_string(),
        _ => "{}".to_string(),
    };
    FakeReply::text(text)
}

async fn wait_idle(client: &LspClient, timeout: Duration) -> Result<Value, String> {
    wait_status(client, timeout, Duration::from_millis(2), |st| {
        (st.get("idle") == Some(&Value::Bool(true)))
            .then_some(())
            .ok_or_else(|| "the LLM scheduler did not go idle".to_string())
    })
    .await
}

/// Polls `crosscheck/status` every `every` until `done` accepts it; past `timeout`, the last
/// refusal is the error.
pub(crate) async fn wait_status(
    client: &LspClient,
    timeout: Duration,
    every: Duration,
    done: impl Fn(&Value) -> Result<(), String>,
) -> Result<Value, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let st = client
            .request(STATUS_REQUEST, Value::Null)
            .await
            .map_err(|e| format!("status request failed: {e}"))?;
        match done(&st) {
            Ok(()) => return Ok(st),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => {}
        }
        tokio::time::sleep(every).await;
    }
}

impl BenchReport {
    /// The report as the text `crosscheck bench-lsp` prints.
    pub fn to_text(&self) -> String {
        format!(
            "bench-lsp: {} lines, {} functions, {} edits\n\
             didOpen -> diagnostics: {:.1} ms\n\
             didChange -> diagnostics: median {:.2} ms, p99 {:.2} ms, max {:.2} ms, mean {:.2} ms\n\
             LLM requests: {} on open for {} taint findings, {:.2} per edit for {} function tasks, \
             {} for functions other than the edited one",
            self.lines,
            self.functions,
            self.edits,
            self.open_ms,
            self.median_ms,
            self.p99_ms,
            self.max_ms,
            self.mean_ms,
            self.llm_requests_on_open,
            self.taint_findings,
            self.llm_requests_per_edit,
            self.function_tasks,
            self.llm_requests_for_other_functions
        )
    }
}

/// Runs the benchmark on a runtime of its own (what `crosscheck bench-lsp` calls).
pub fn run_blocking(opts: &BenchOptions) -> Result<BenchReport, String> {
    on_own_runtime(run(opts))
}

/// Runs a benchmark on a runtime of its own, shaped like the server's (two workers, large
/// stacks).
pub(crate) fn on_own_runtime<T>(
    bench: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    super::background::limit_malloc_arenas();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(32 * 1024 * 1024)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let report = rt.block_on(bench);
    rt.shutdown_background();
    report
}

/// Runs the benchmark (inside a tokio runtime).
pub async fn run(opts: &BenchOptions) -> Result<BenchReport, String> {
    let (text, fns) = generate_python(opts.lines);
    let fake = Arc::new(FakeClient::from_fn(|r| scripted_reply(r, "yes")));
    let options = ServerOptions {
        user_config: Some(format!("[lsp.llm]\ndebounce_ms = {}\n", opts.debounce_ms)),
        llm: vec![fake.clone()],
        ..ServerOptions::default()
    };
    let function_tasks = super::config::Settings::default().llm_tasks.len();
    let taint_findings = fns
        .iter()
        .enumerate()
        .filter(|(i, _)| i % FLOW_EVERY == 0)
        .count() as u64;
    let (client, _server) = LspClient::in_process(options);
    client
        .initialize(json!({"capabilities": {}, "processId": null, "rootUri": null}))
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    let uri = "file:///bench/generated.py";
    let t0 = Instant::now();
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        )
        .await;
    client
        .wait_diagnostics(uri, 1, Duration::from_secs(120))
        .await
        .ok_or("no diagnostics after didOpen")?;
    let open_ms = t0.elapsed().as_secs_f64() * 1000.0;
    // Every taint finding is asked about once after the first workspace analysis.
    let deadline = Instant::now() + Duration::from_secs(300);
    while (fake.request_count() as u64) < taint_findings && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    wait_idle(&client, Duration::from_secs(300)).await?;
    let on_open = fake.request_count() as u64;
    let mut latencies = Vec::with_capacity(opts.edits);
    let mut other = 0u64;
    let mut edit_requests = 0u64;
    for e in 0..opts.edits {
        // A stride coprime with the function count visits distinct functions.
        let (name, line) = &fns[(e * 37) % fns.len()];
        let version = 2 + e as i64;
        let digit = ((e % 9) + 1).to_string();
        // `    return total + 0` has 20 characters; the literal is the last one.
        let change = json!({
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": 19},
                                          "end": {"line": line, "character": 20}},
                                "text": digit}]
        });
        let before = fake.request_count();
        let t = Instant::now();
        client.notify("textDocument/didChange", change).await;
        client
            .wait_diagnostics(uri, version, Duration::from_secs(60))
            .await
            .ok_or_else(|| format!("no diagnostics for version {version}"))?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        // Each edit hits a function not edited before, so one new question per function task
        // is expected: wait for them (debounced, made after the workspace analysis), then
        // for the scheduler to be idle.
        let deadline = Instant::now() + Duration::from_secs(30);
        while fake.request_count() < before + function_tasks && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        wait_idle(&client, Duration::from_secs(60)).await?;
        let reqs = fake.requests();
        for r in reqs.iter().skip(before) {
            edit_requests += 1;
            let tag = r.tag.clone().unwrap_or_default();
            if !tag.ends_with(&format!(":{name}")) {
                other += 1;
            }
        }
    }
    let _ = client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
    let mut sorted = latencies.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mean = if sorted.is_empty() {
        0.0
    } else {
        sorted.iter().sum::<f64>() / sorted.len() as f64
    };
    Ok(BenchReport {
        lines: text.lines().count(),
        functions: fns.len(),
        edits: opts.edits,
        open_ms,
        median_ms: percentile(&sorted, 50.0),
        p99_ms: percentile(&sorted, 99.0),
        max_ms: sorted.last().copied().unwrap_or(0.0),
        mean_ms: mean,
        taint_findings,
        llm_requests_on_open: on_open,
        function_tasks,
        llm_requests_per_edit: if opts.edits == 0 {
            0.0
        } else {
            edit_requests as f64 / opts.edits as f64
        },
        llm_requests_for_other_functions: other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_file_has_requested_size_and_edit_lines() {
        let (text, fns) = generate_python(111);
        assert_eq!(text.lines().count(), 111);
        assert_eq!(fns.len(), 10);
        assert_eq!(text.matches("os.system(input())").count(), 1);
        let line = text.lines().nth(fns[3].1 as usize).unwrap();
        assert_eq!(line, "    return total + 0");
        assert_eq!(line.len(), 20);
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
