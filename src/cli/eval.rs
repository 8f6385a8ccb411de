//! `crosscheck eval`: the evaluation harness's front end (see [`crate::eval`]).
//!
//! ```text
//! crosscheck eval --datasets DIR [--dataset NAME]... [--task T]... --out DIR [--limit N]
//!                 [--sample N --seed S] [--concurrency N] [--max-tokens-total N] [--fresh]
//!                 [--strategy S]... [--shots zero|few]... [--no-llm] [--jsonl FILE]...
//! ```
//!
//! Writes `OUT/results.jsonl` (resumable), `OUT/report.md`, `OUT/report.html`,
//! `OUT/results.csv` and `OUT/metrics.json`; prints a one-line JSON summary on stdout
//! (`{"out", "items", "answered", "resumed", "skipped_budget", "skipped_failure",
//! "requests", "tokens", "reports"}`) and a progress bar on stderr when it is a terminal.
//! LLM settings and the answer cache are those of `ask`. Without a configured LLM the run is
//! analyzer-only, with a note on stderr. Exit code 0 when the reports were written (even if
//! items failed), 1 otherwise.

use crate::crosscheck::engine::CheckSettings;
use crate::crosscheck::prompts::{load_override_dir, PromptLibrary};
use crate::crosscheck::record::CacheBackend;
use crate::crosscheck::task::{Shots, Strategy, Task};
use crate::eval::adapters::{load_datasets, parse_jsonl};
use crate::eval::metrics::compute;
use crate::eval::report::{write_reports, ReportInfo};
use crate::eval::run::{run_eval, select_items, EvalContext, EvalOptions, RunSummary};
use crate::eval::EvalItem;
use crate::llm::{HttpClient, LlmClient, LlmSettings};
use crate::stats::bootstrap::BootstrapOptions;
use crate::syntax::Cancel;
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn parse_task(s: &str) -> Result<Task, String> {
    match Task::from_name(s) {
        Some(t) if crate::eval::RUNNABLE_TASKS.contains(&t) => Ok(t),
        Some(t) => Err(format!(
            "task `{}` cannot be evaluated here: {}",
            t.name(),
            crate::eval::not_run_reason(t).unwrap_or("no data set")
        )),
        None => Err(format!(
            "unknown task `{s}` (expected {})",
            crate::eval::RUNNABLE_TASKS.map(|t| t.name()).join(", ")
        )),
    }
}

fn parse_strategy(s: &str) -> Result<Strategy, String> {
    Strategy::from_name(s)
        .ok_or_else(|| format!("unknown strategy `{s}` (expected normal, cot, role or role_cot)"))
}

fn parse_shots(s: &str) -> Result<Shots, String> {
    Shots::from_name(s).ok_or_else(|| format!("unknown shots `{s}` (expected zero or few)"))
}

#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// The data-set directory (e.g. ../shared/datasets).
    #[arg(long, value_name = "DIR")]
    pub datasets: Option<PathBuf>,
    /// Only these data sets: core, owasp, securibench, pyt, ptaben, mutantbench, eqbench, flakycat.
    #[arg(long = "dataset", value_name = "NAME")]
    pub dataset: Vec<String>,
    /// Only these tasks.
    #[arg(long = "task", value_name = "TASK", value_parser = parse_task)]
    pub task: Vec<Task>,
    /// Our own JSONL items (see the README).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Vec<PathBuf>,
    /// Output directory (reports and the resumable results.jsonl).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The first N items per data set and task.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// A random sample of N items per data set and task (with --seed).
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Seed of --sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Items evaluated at once.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub concurrency: usize,
    /// Stop sending requests once this many tokens were spent in this run.
    #[arg(long, value_name = "N")]
    pub max_tokens_total: Option<u64>,
    /// Re-ask everything: a new results.jsonl and no answer cache (instability runs).
    #[arg(long)]
    pub fresh: bool,
    /// Strategies to compare (default: each task's own).
    #[arg(long = "strategy", value_parser = parse_strategy)]
    pub strategy: Vec<Strategy>,
    /// zero- and/or few-shot.
    #[arg(long = "shots", value_parser = parse_shots)]
    pub shots: Vec<Shots>,
    /// The analyzer column only (no LLM request).
    #[arg(long)]
    pub no_llm: bool,
    /// Equivalence tasks: run the code (sandboxed differential testing, as `crosscheck
    /// mutants`) for the analyzer column; without it the analyzer column is the proof alone.
    #[arg(long)]
    pub execute: bool,
    /// Bootstrap resamples for the intervals.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub resamples: usize,
}

/// Everything besides the arguments (tests pass fake clients).
pub struct EvalRunContext {
    pub clients: Vec<Arc<dyn LlmClient>>,
    pub settings: CheckSettings,
    pub prompts: PromptLibrary,
    pub backend: Option<Arc<dyn CacheBackend>>,
    pub now: i64,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// Loads the items the arguments select.
pub fn load_items(args: &EvalArgs, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let mut items = Vec::new();
    if let Some(dir) = &args.datasets {
        items.extend(load_datasets(dir, &args.dataset, errors));
    }
    for path in &args.jsonl {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let mut e = Vec::new();
                items.extend(parse_jsonl(&text, &mut e));
                errors.extend(e.into_iter().map(|e| format!("{}: {e}", path.display())));
            }
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    select_items(
        items,
        &args.task,
        args.limit,
        args.sample.map(|n| (n, args.seed)),
    )
}

fn progress_bar(done: usize, total: usize) {
    let width = 30usize;
    let filled = (done * width).checked_div(total).unwrap_or(width);
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "\r[{}{}] {done}/{total}",
        "#".repeat(filled),
        " ".repeat(width - filled.min(width))
    );
    if done >= total {
        let _ = writeln!(err);
    }
    let _ = err.flush();
}

/// Runs the evaluation and writes the reports; returns the summary and the report paths.
pub fn eval(
    args: &EvalArgs,
    ctx: &EvalRunContext,
) -> anyhow::Result<(RunSummary, Vec<PathBuf>, usize)> {
    if args.datasets.is_none() && args.jsonl.is_empty() {
        anyhow::bail!("nothing to evaluate: give --datasets DIR and/or --jsonl FILE");
    }
    let mut errors = Vec::new();
    let items = load_items(args, &mut errors);
    for e in &errors {
        eprintln!("crosscheck: eval: {e}");
    }
    let options = EvalOptions {
        strategies: args.strategy.iter().map(|s| Some(*s)).collect(),
        shots: args.shots.clone(),
        concurrency: args.concurrency,
        max_tokens_total: args.max_tokens_total,
        fresh: args.fresh,
        no_llm: args.no_llm,
        execute: args.execute,
    };
    let bar = |d: usize, t: usize| progress_bar(d, t);
    let run_ctx = EvalContext {
        clients: if args.no_llm {
            Vec::new()
        } else {
            ctx.clients.clone()
        },
        settings: ctx.settings.clone(),
        prompts: &ctx.prompts,
        backend: ctx.backend.clone(),
        now: ctx.now,
        cancel: Cancel::never(),
        progress: if ctx.progress { Some(&bar) } else { None },
    };
    let summary = run_eval(&items, &args.out, &options, &run_ctx)?;
    let metrics = compute(
        &summary.results,
        &BootstrapOptions {
            resamples: args.resamples,
            ..BootstrapOptions::default()
        },
        &Cancel::never(),
    );
    let info = ReportInfo {
        command: std::env::args().collect::<Vec<_>>().join(" "),
        datasets: args
            .datasets
            .as_ref()
            .map(|d| d.display().to_string())
            .into_iter()
            .chain(args.jsonl.iter().map(|p| p.display().to_string()))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let paths = write_reports(&args.out, &info, &metrics, &summary)?;
    Ok((summary, paths, items.len()))
}

/// The binary's entry.
pub fn run(args: &EvalArgs) -> anyhow::Result<i32> {
    let mut settings = super::ask::load_check_settings()?;
    let mut clients: Vec<Arc<dyn LlmClient>> = Vec::new();
    let mut backend = None;
    if !args.no_llm {
        match LlmSettings::load()
            .map_err(|e| e.to_string())
            .and_then(|s| {
                HttpClient::new(s.clone())
                    .map(|c| (s, c))
                    .map_err(|e| e.to_string())
            }) {
            Ok((llm, c)) => {
                settings.call_timeout = Some(Duration::from_secs(llm.timeout_secs.max(1) + 2));
                clients.push(Arc::new(c));
                backend = crate::store::Store::open_optional(
                    crate::store::default_db_path(),
                    crate::store::StoreConfig::default(),
                )
                .map(|s| Arc::new(s) as Arc<dyn CacheBackend>);
            }
            Err(e) => {
                eprintln!(
                    "crosscheck: no LLM ({e}); analyzer column only (use --no-llm to silence)"
                );
            }
        }
    }
    let prompts = match &settings.prompts_dir {
        Some(dir) => {
            let overrides = load_override_dir(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            PromptLibrary::with_overrides(overrides).map_err(|e| anyhow::anyhow!("{e}"))?
        }
        None => PromptLibrary::builtin(),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let ctx = EvalRunContext {
        clients,
        settings,
        prompts,
        backend,
        now,
        progress: std::io::stderr().is_terminal(),
    };
    let (summary, paths, items) = eval(args, &ctx)?;
    for e in &summary.errors {
        eprintln!("crosscheck: eval: {e}");
    }
    let out = json!({
        "out": args.out.display().to_string(),
        "items": items,
        "answered": summary.fresh_items,
        "resumed": summary.resumed,
        "skipped_budget": summary.skipped_budget,
        "skipped_failure": summary.skipped_failure,
        "requests": summary.requests,
        "tokens": summary.tokens,
        "reports": paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    });
    super::print_stdout(&out.to_string())?;
    Ok(0)
}
