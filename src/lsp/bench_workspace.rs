//! The workspace benchmark behind `crosscheck bench-lsp --workspace DIR[,DIR...] --open FILE`:
//! an in-process server is started on the folders, one file is opened, and once indexing and
//! the workspace analysis are done a trailing comment is toggled in it `edits` times (after
//! the last line, or at the end of `edit_line`, inside a function),
//! `interval_ms` apart (the analysis after each edit runs as it would while typing pauses).
//! Measured: time to the first publication, the latency of edits made while indexing runs
//! (the same toggle, up to `edits` of them, `interval_ms` apart, as long as the server still
//! reports indexing or a pending workspace analysis), time to indexing and analysis done, each
//! later edit's didChange -> publishDiagnostics latency, CPU per edit (until the workspace
//! analysis has settled again), and the process's resident memory (peak and settled).
//!
//! The reference, measured in the same run after the server has shut down: every file the
//! server indexed read and parsed and held at once (what a server holding every tree needs
//! before any analysis), as resident memory over the run's starting point. The report gives
//! the server's peak over the same starting point as a ratio of it.

use super::client::LspClient;
use super::server::{ServerOptions, STATUS_REQUEST};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Parameters of the workspace benchmark.
#[derive(Debug, Clone)]
pub struct WorkspaceBenchOptions {
    pub folders: Vec<PathBuf>,
    pub open: PathBuf,
    pub edits: usize,
    pub interval_ms: u64,
    /// The comment goes at the end of this 1-based line (`None`: after the last line).
    pub edit_line: Option<usize>,
}

/// Measured figures (memory in MiB, times in seconds or milliseconds as named).
#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceBenchReport {
    pub files: u64,
    pub lines: usize,
    pub first_publish_s: f64,
    pub settled_s: f64,
    pub edits: usize,
    pub edit_median_ms: f64,
    pub edit_max_ms: f64,
    /// Edits answered while the server still reported indexing or a pending analysis.
    pub indexing_edits: usize,
    pub indexing_edit_median_ms: f64,
    pub indexing_edit_max_ms: f64,
    pub cpu_per_edit_s: f64,
    /// Resident memory when the run started (the benchmark itself).
    pub start_mib: f64,
    /// The resident peak when indexing and the first workspace analysis were done.
    pub indexing_peak_mib: f64,
    pub peak_mib: f64,
    pub settled_mib: f64,
    /// Every indexed file parsed and held at once, over `start_mib`.
    pub all_trees_mib: f64,
    /// (peak - start) / all_trees.
    pub peak_over_all_trees: f64,
}

impl WorkspaceBenchReport {
    pub fn to_text(&self) -> String {
        format!(
            "bench-lsp --workspace: {} files, {} lines\n\
             first publish {:.2} s, indexing and workspace analysis done {:.1} s\n\
             {} edits while indexing: didChange -> diagnostics median {:.1} ms, max {:.1} ms\n\
             {} edits: didChange -> diagnostics median {:.1} ms, max {:.1} ms; CPU per edit {:.2} s\n\
             resident memory: start {:.0} MiB, peak {:.0} MiB ({:.0} MiB when indexing was done), settled {:.0} MiB\n\
             reference (same run): every indexed file parsed and held, {:.0} MiB over the start; \
             server peak over the start = {:.2} x that",
            self.files,
            self.lines,
            self.first_publish_s,
            self.settled_s,
            self.indexing_edits,
            self.indexing_edit_median_ms,
            self.indexing_edit_max_ms,
            self.edits,
            self.edit_median_ms,
            self.edit_max_ms,
            self.cpu_per_edit_s,
            self.start_mib,
            self.peak_mib,
            self.indexing_peak_mib,
            self.settled_mib,
            self.all_trees_mib,
            self.peak_over_all_trees
        )
    }
}

/// (VmRSS, VmHWM) of this process in MiB (zeros where /proc is not there).
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// User plus system CPU seconds of this process.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

async fn settled(client: &LspClient, above: u64, timeout: Duration) -> Result<Value, String> {
    super::bench::wait_status(client, timeout, Duration::from_millis(20), |st| {
        let done = st["indexing"] == false
            && st["workspace_pending"] == false
            && st["workspace_generation"].as_u64().unwrap_or(0) > above;
        done.then_some(())
            .ok_or_else(|| format!("the workspace did not settle: {st}"))
    })
    .await
}

fn uri_of(path: &Path) -> Result<String, String> {
    super::workspace::path_uri(path)
        .map(|u| u.to_string())
        .ok_or_else(|| format!("{}: not an absolute path", path.display()))
}

/// Replaces the document's text with `text` as `version`; the milliseconds until that
/// version's diagnostics are published.
async fn timed_edit(
    client: &LspClient,
    uri: &str,
    version: i64,
    text: &str,
) -> Result<f64, String> {
    let t = Instant::now();
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        )
        .await;
    client
        .wait_diagnostics(uri, version, Duration::from_secs(120))
        .await
        .ok_or_else(|| format!("no diagnostics for version {version}"))?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// Runs the benchmark on a runtime of its own.
pub fn run_blocking(opts: &WorkspaceBenchOptions) -> Result<WorkspaceBenchReport, String> {
    super::bench::on_own_runtime(run(opts))
}

pub async fn run(opts: &WorkspaceBenchOptions) -> Result<WorkspaceBenchReport, String> {
    let folders: Vec<PathBuf> = opts
        .folders
        .iter()
        .map(|f| std::fs::canonicalize(f).map_err(|e| format!("{}: {e}", f.display())))
        .collect::<Result<_, _>>()?;
    let open =
        std::fs::canonicalize(&opts.open).map_err(|e| format!("{}: {e}", opts.open.display()))?;
    let language = crate::syntax::Language::from_path(&open)
        .ok_or_else(|| format!("{}: not a supported language", open.display()))?;
    let text = std::fs::read_to_string(&open).map_err(|e| format!("{}: {e}", open.display()))?;
    let comment = if language == crate::syntax::Language::Python {
        " # x"
    } else {
        " /* x */"
    };
    let edited = match opts.edit_line {
        None => format!("{text}{comment}"),
        Some(line) => {
            let mut at = None;
            let mut start = 0;
            for (i, l) in text.split_inclusive('\n').enumerate() {
                if i + 1 == line {
                    at = Some(start + l.trim_end_matches(['\n', '\r']).len());
                    break;
                }
                start += l.len();
            }
            let at = at.ok_or_else(|| format!("{}: no line {line}", open.display()))?;
            format!("{}{comment}{}", &text[..at], &text[at..])
        }
    };
    super::background::release_free_memory();
    let (start_mib, _) = memory_mib();
    let (client, _server) = LspClient::in_process(ServerOptions::default());
    let wf: Vec<Value> = folders
        .iter()
        .map(|f| {
            Ok(json!({"uri": uri_of(f)?, "name": f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()}))
        })
        .collect::<Result<_, String>>()?;
    let t0 = Instant::now();
    client
        .initialize(json!({"capabilities": {}, "processId": null, "rootUri": wf[0]["uri"], "workspaceFolders": wf}))
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    let uri = uri_of(&open)?;
    let lang_id = language.name();
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": lang_id, "version": 1, "text": text}}),
        )
        .await;
    client
        .wait_diagnostics(&uri, 1, Duration::from_secs(600))
        .await
        .ok_or("no diagnostics after didOpen")?;
    let first_publish_s = t0.elapsed().as_secs_f64();
    // Edits while indexing runs: each must be answered without waiting for the indexing.
    let mut version = 1i64;
    let mut during = Vec::new();
    for e in 0..opts.edits {
        let st = client
            .request(STATUS_REQUEST, Value::Null)
            .await
            .map_err(|e| e.to_string())?;
        if st["indexing"] != true && st["workspace_pending"] != true {
            break;
        }
        version += 1;
        let new = if e % 2 == 0 { &edited } else { &text };
        during.push(timed_edit(&client, &uri, version, new).await?);
        tokio::time::sleep(Duration::from_millis(opts.interval_ms)).await;
    }
    if during.len() % 2 == 1 {
        // Back to the opened text, so that the measured edits below start from it.
        version += 1;
        timed_edit(&client, &uri, version, &text).await?;
    }
    let st = settled(&client, 0, Duration::from_secs(3600)).await?;
    let settled_s = t0.elapsed().as_secs_f64();
    let (_, indexing_peak_mib) = memory_mib();
    let files = st["workspace_files"].as_u64().unwrap_or(0);
    let cpu0 = cpu_seconds();
    let mut latencies = Vec::with_capacity(opts.edits);
    for e in 0..opts.edits {
        version += 1;
        let new = if e % 2 == 0 { &edited } else { &text };
        latencies.push(timed_edit(&client, &uri, version, new).await?);
        tokio::time::sleep(Duration::from_millis(opts.interval_ms)).await;
    }
    let st = client
        .request(STATUS_REQUEST, Value::Null)
        .await
        .map_err(|e| e.to_string())?;
    let generation = st["workspace_generation"].as_u64().unwrap_or(0);
    if opts.edits > 0 {
        // The last edit's analysis (its generation may already be counted).
        settled(
            &client,
            generation.saturating_sub(1),
            Duration::from_secs(3600),
        )
        .await?;
    }
    let cpu_per_edit_s = if opts.edits == 0 {
        0.0
    } else {
        (cpu_seconds() - cpu0) / opts.edits as f64
    };
    let (settled_mib, peak_mib) = memory_mib();
    let _ = client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
    drop(client);
    // The reference: every file the server would index, parsed and held.
    super::background::release_free_memory();
    let (before_ref, _) = memory_mib();
    let mut held = Vec::new();
    let mut lines = 0usize;
    for f in &folders {
        let listed =
            super::workspace::list_files(f, true, &|_| false, &crate::syntax::Cancel::never());
        for p in listed {
            if let Ok(t) =
                super::workspace::read_source(&p, super::config::Settings::default().max_file_bytes)
            {
                lines += t.text.lines().count();
                held.push(t.parse());
            }
        }
    }
    let (with_ref, _) = memory_mib();
    drop(held);
    let all_trees_mib = (with_ref - before_ref).max(0.0);
    let mut sorted = latencies;
    sorted.sort_by(|a, b| a.total_cmp(b));
    during.sort_by(|a, b| a.total_cmp(b));
    Ok(WorkspaceBenchReport {
        files,
        lines,
        first_publish_s,
        settled_s,
        edits: opts.edits,
        edit_median_ms: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
        edit_max_ms: sorted.last().copied().unwrap_or(0.0),
        indexing_edits: during.len(),
        indexing_edit_median_ms: during.get(during.len() / 2).copied().unwrap_or(0.0),
        indexing_edit_max_ms: during.last().copied().unwrap_or(0.0),
        cpu_per_edit_s,
        start_mib,
        indexing_peak_mib,
        peak_mib,
        settled_mib,
        all_trees_mib,
        peak_over_all_trees: if all_trees_mib > 0.0 {
            (peak_mib - start_mib) / all_trees_mib
        } else {
            0.0
        },
    })
}
