//! `crosscheck lsp` (the language server on stdin/stdout) and `crosscheck bench-lsp` (the
//! didChange -> publishDiagnostics latency benchmark).

use crate::lsp::bench::{self, BenchOptions};
use clap::Args;

#[derive(Debug, Args)]
pub struct LspArgs {
    /// Talk LSP over stdin/stdout (the default and only transport; accepted for editors that
    /// pass it).
    #[arg(long)]
    pub stdio: bool,
}

/// Runs the server until `exit`; exit code 0 after `shutdown`, 1 otherwise.
pub fn run(_args: &LspArgs) -> anyhow::Result<i32> {
    Ok(crate::lsp::run_stdio(server_options()))
}

/// The server's options from the user's environment: the user config file, the LLM settings,
/// and the per-user store (`$CROSSCHECK_DATA_DIR/crosscheck.db`, see `store::path`) as the
/// persistent answer cache and the telemetry sink. Without a store (unwritable directory,
/// corrupt file) the server still runs, uncached across restarts. The store's retention is
/// applied at start-up, off the protocol's path.
pub fn server_options() -> crate::lsp::ServerOptions {
    let store = crate::store::Store::open_optional(
        crate::store::default_db_path(),
        crate::store::StoreConfig::default(),
    )
    .map(std::sync::Arc::new);
    if let Some(s) = &store {
        let s = std::sync::Arc::clone(s);
        std::thread::spawn(move || {
            if let Err(e) = s.prune(crate::store::system_now()) {
                tracing::warn!("store retention: {e}");
            }
        });
    }
    crate::lsp::ServerOptions::from_environment().with_store(store)
}

#[derive(Debug, Args)]
pub struct BenchLspArgs {
    /// Lines of the generated Python file.
    #[arg(long, default_value_t = 5000)]
    pub lines: usize,
    /// Number of edits measured.
    #[arg(long, default_value_t = 200)]
    pub edits: usize,
    /// LLM debounce used by the scheduler during the run (milliseconds).
    #[arg(long, default_value_t = 30)]
    pub debounce_ms: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = super::OutputFormat::Text)]
    pub format: super::OutputFormat,
}

pub fn run_bench(args: &BenchLspArgs) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(32 * 1024 * 1024)
        .enable_all()
        .build()?;
    let opts = BenchOptions {
        lines: args.lines,
        edits: args.edits,
        debounce_ms: args.debounce_ms,
    };
    let report = rt
        .block_on(bench::run(&opts))
        .map_err(|e| anyhow::anyhow!(e))?;
    rt.shutdown_background();
    let out = match args.format {
        super::OutputFormat::Json => serde_json::to_string_pretty(&report)?,
        super::OutputFormat::Text => format!(
            "bench-lsp: {} lines, {} functions, {} edits\n\
             didOpen -> diagnostics: {:.1} ms\n\
             didChange -> diagnostics: median {:.2} ms, p99 {:.2} ms, max {:.2} ms, mean {:.2} ms\n\
             LLM requests: {} on open for {} taint findings, {:.2} per edit for {} function tasks, \
             {} for functions other than the edited one",
            report.lines,
            report.functions,
            report.edits,
            report.open_ms,
            report.median_ms,
            report.p99_ms,
            report.max_ms,
            report.mean_ms,
            report.llm_requests_on_open,
            report.taint_findings,
            report.llm_requests_per_edit,
            report.function_tasks,
            report.llm_requests_for_other_functions
        ),
    };
    super::print_stdout(&out)?;
    Ok(0)
}
