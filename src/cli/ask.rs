//! `crosscheck ask`: ask the configured LLM about a file (or one function), normalise the
//! answer, compare it with the deterministic analysis, and print the cross-check.
//!
//! ```text
//! crosscheck ask --task cfg|call_graph|taint|data_dependency|points_to|ast FILE
//!                [--function NAME] [--format json|text] [--fresh] [--samples N]
//!                [--strategy normal|cot|role|role_cot] [--shots zero|few]
//! ```
//!
//! # Output (JSON)
//!
//! With `--function NAME` naming exactly one function: one object,
//!
//! ```text
//! {"task", "file", "function", "language", "model", "template": {"id", "version", "files"},
//!  "strategy", "shots", "llm": <normalised answer>, "analyzer": <facts>, "scores": {...},
//!  "score_details": {...}, "pass": bool, "tier": "confirmed" | "analyzer-only",
//!  "samples": n, "instability": x, "models": [...], "facts": [{"fact", "tier", "llm"}],
//!  "claims": [{"claim", "tier"}], "truncated": bool, "cache": {"hits", "misses", "fresh"},
//!  "errors": [...]}
//! ```
//!
//! Otherwise (no `--function`, or a name shared by several functions): one object
//! `{"file", "task", "results": [<object as above> | {"function", "error"}], "errors": [...]}`
//! with the functions in document order. The shape depends only on the flags and on how many
//! functions the name selects, never on the LLM. Without `--function`, every named function
//! is asked about; lambdas are not (their calls and statements belong to the enclosing
//! function's questions), but `--function '<lambda@12>'` asks about one.
//!
//! # Exit codes
//!
//! 0 when at least one selected function was cross-checked (whatever the verdicts) and no
//! call failed; a function whose answers cannot be read (cut off at the token limit,
//! malformed) or whose question cannot be prepared is listed with its error (and the failed
//! answer is recorded for it) without failing the others. 1 on an unreadable file, an unknown
//! function, no LLM configured, a failed call (timeout, 429, 5xx, unreachable server), a
//! broken prompt, or when no function could be checked. After a failed call the remaining
//! functions are skipped (the server would fail them too). Errors go to stderr; nothing
//! panics.
//!
//! # Configuration
//!
//! LLM settings come from [`LlmSettings::load`] (the user's config file and `CROSSCHECK_LLM_*`
//! variables). Cross-check settings ([`CheckSettings`]: samples, strategy, thresholds, prompt
//! override directory, ...) come from the `[crosscheck]` table of the same user config file;
//! command-line flags override them. Nothing is read from the analysed file's directory.
//! `-v` reports cache hits and misses on stderr.
//!
//! The taint task needs the taint analysis ([`TaintOracle`]); the binary passes none until it
//! lands, so `--task taint` reports that it is unavailable. Tests and embedders pass one to
//! [`ask`].

use super::inputs::{collect_inputs, parse_language, InputArgs};
use super::OutputFormat;
use crate::crosscheck::cache::AnswerCache;
use crate::crosscheck::engine::{CheckError, CheckOutcome, CheckSettings, Engine};
use crate::crosscheck::facts::{prepare, FileFacts, PrepareOptions, TaintOracle};
use crate::crosscheck::prompts::{load_override_dir, PromptLibrary};
use crate::crosscheck::record::{CacheBackend, RecordSink};
use crate::crosscheck::task::{Shots, Strategy, Task};
use crate::llm::{HttpClient, LlmClient, LlmSettings};
use crate::syntax::functions::FunctionKind;
use crate::syntax::parse::DEFAULT_MAX_FILE_BYTES;
use crate::syntax::{Cancel, Language, ParsedFile};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The tasks `ask` supports (those with a per-function deterministic reference).
pub const ASK_TASKS: [Task; 6] = Task::ANALYZER_BACKED;

fn parse_task(s: &str) -> Result<Task, String> {
    match Task::from_name(s) {
        Some(t) if ASK_TASKS.contains(&t) => Ok(t),
        _ => Err(format!(
            "unknown task `{s}` (expected {})",
            ASK_TASKS.map(|t| t.name()).join(", ")
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
pub struct AskArgs {
    /// What to ask: cfg, call_graph, taint, data_dependency, points_to or ast.
    #[arg(long, value_parser = parse_task)]
    pub task: Task,
    /// The source file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Only this function (qualified like `Class.method`, or its simple name).
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// Bypass the answer cache (neither read nor written), e.g. to measure instability.
    #[arg(long)]
    pub fresh: bool,
    /// Samples per question (majority verdict and instability when more than one).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Prompt strategy: normal, cot, role or role_cot (default: the task's).
    #[arg(long, value_parser = parse_strategy)]
    pub strategy: Option<Strategy>,
    /// zero- or few-shot prompts.
    #[arg(long, value_parser = parse_shots)]
    pub shots: Option<Shots>,
    /// Force the language instead of detecting it from the extension.
    #[arg(long, value_name = "LANG", value_parser = parse_language)]
    pub lang: Option<Language>,
    /// Files larger than this many bytes are refused.
    #[arg(long, default_value_t = DEFAULT_MAX_FILE_BYTES, value_name = "BYTES")]
    pub max_file_size: usize,
}

/// Everything `ask` needs besides its arguments (so tests can pass fake clients and
/// in-memory storage, and the front end can wire the store in).
pub struct AskContext<'a> {
    /// One client, or several for a jury.
    pub clients: Vec<Arc<dyn LlmClient>>,
    pub settings: CheckSettings,
    pub prompts: PromptLibrary,
    pub backend: Option<Arc<dyn CacheBackend>>,
    pub sink: Option<&'a dyn RecordSink>,
    pub taint: Option<&'a dyn TaintOracle>,
    /// Seconds since the epoch, for records.
    pub now: i64,
    pub cancel: Cancel,
}

/// What `ask` produced.
#[derive(Debug, Clone)]
pub struct AskReport {
    /// The JSON document described in the module docs.
    pub json: Value,
    pub outcomes: Vec<CheckOutcome>,
    /// Errors, for stderr.
    pub errors: Vec<String>,
    /// Per checked function: `(function, cache hits, cache misses)`.
    pub cache: Vec<(String, u64, u64)>,
    pub exit_code: i32,
}

fn failure(message: String) -> AskReport {
    AskReport {
        json: json!({ "error": message }),
        outcomes: Vec::new(),
        errors: vec![message],
        cache: Vec::new(),
        exit_code: 1,
    }
}

/// Runs `ask` with the given context. Builds a current-thread tokio runtime for the calls.
pub fn ask(args: &AskArgs, ctx: &AskContext<'_>) -> AskReport {
    let mut settings = ctx.settings.clone();
    if let Some(n) = args.samples {
        settings.samples = n;
        settings.samples_per_task.remove(args.task.name());
    }
    if let Some(s) = args.strategy {
        settings.strategy = Some(s);
    }
    if let Some(s) = args.shots {
        settings.shots = s;
    }
    settings.fresh |= args.fresh;

    let inputs = collect_inputs(&InputArgs {
        paths: vec![args.file.clone()],
        lang: args.lang,
        max_file_size: args.max_file_size,
    });
    if let Some(refused) = inputs.refused.first() {
        let why = refused
            .errors
            .first()
            .map(|e| e.message.clone())
            .unwrap_or_else(|| "cannot read the file".into());
        return failure(format!("{}: {why}", refused.file));
    }
    let Some(source) = inputs.sources.into_iter().next() else {
        return failure(format!("{}: not a source file", args.file.display()));
    };
    let parsed = ParsedFile::parse_with_cancel(source.language, source.text, &ctx.cancel);
    let mut facts = FileFacts::new(&source.path, &parsed);
    let selected: Vec<usize> = match &args.function {
        Some(name) => {
            let hits: Vec<usize> = facts
                .functions
                .iter()
                .enumerate()
                .filter(|(_, f)| f.name == *name || f.simple_name == *name)
                .map(|(i, _)| i)
                .collect();
            if hits.is_empty() {
                let known: Vec<String> = facts
                    .functions
                    .iter()
                    .take(20)
                    .map(|f| f.name.clone())
                    .collect();
                return failure(format!(
                    "{}: no function named `{name}` (functions: {})",
                    source.path,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            hits
        }
        // Lambdas are part of their enclosing function's questions; name one to ask about it.
        None => facts
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind != FunctionKind::Lambda)
            .map(|(i, _)| i)
            .collect(),
    };
    let single = args.function.is_some() && selected.len() == 1;

    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return failure(format!("cannot start the async runtime: {e}")),
    };
    let cache = AnswerCache::new(ctx.backend.clone());
    let engine = Engine {
        prompts: &ctx.prompts,
        cache: &cache,
        settings: &settings,
        sink: ctx.sink,
    };
    let options = PrepareOptions {
        max_questions: settings.max_questions.max(1),
    };
    let mut results = Vec::new();
    let mut outcomes = Vec::new();
    let mut errors = Vec::new();
    let mut cache_report = Vec::new();
    let mut stop = false;
    let mut llm_failed = false;
    for index in selected {
        let name = facts
            .functions
            .get(index)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        if stop || ctx.cancel.is_cancelled() {
            let e = "skipped after an earlier LLM failure".to_string();
            results.push(json!({"function": name, "error": e}));
            continue;
        }
        let question = match prepare(
            args.task,
            &mut facts,
            index,
            ctx.taint,
            &options,
            &ctx.cancel,
        ) {
            Ok(q) => q,
            Err(e) => {
                let msg = format!("{}: {name}: {e}", source.path);
                errors.push(msg.clone());
                results.push(json!({"function": name, "error": e.to_string()}));
                continue;
            }
        };
        match runtime.block_on(engine.check(&ctx.clients, &question, ctx.now)) {
            Ok(outcome) => {
                let hits = outcome.cache["hits"].as_u64().unwrap_or(0);
                let misses = outcome.cache["misses"].as_u64().unwrap_or(0);
                cache_report.push((name.clone(), hits, misses));
                for e in &outcome.errors {
                    tracing::info!("{}: {name}: {e}", source.path);
                }
                results.push(serde_json::to_value(&outcome).unwrap_or(Value::Null));
                outcomes.push(outcome);
            }
            Err(e) => {
                if matches!(e, CheckError::Llm(_) | CheckError::Prompt(_)) {
                    stop = true;
                    llm_failed = true;
                }
                let msg = format!("{}: {name}: {e}", source.path);
                errors.push(msg);
                results.push(json!({"function": name, "error": e.to_string()}));
            }
        }
    }
    // One function's unusable answer (cut off at the token limit, malformed) is reported and
    // recorded for that function; the run fails only when the LLM or the prompt failed, or
    // nothing could be checked at all.
    let exit_code = i32::from(llm_failed || (outcomes.is_empty() && !errors.is_empty()));
    let json = if single {
        results.pop().unwrap_or(Value::Null)
    } else {
        json!({
            "file": source.path,
            "task": args.task.name(),
            "results": results,
            "errors": errors,
        })
    };
    AskReport {
        json,
        outcomes,
        errors,
        cache: cache_report,
        exit_code,
    }
}

/// A human-readable rendering of the outcomes.
pub fn render_text(report: &AskReport) -> String {
    let mut s = String::new();
    for o in &report.outcomes {
        let _ = writeln!(
            s,
            "{} {} ({}) — {}: {}, tier {}, {} sample(s), instability {:.2}",
            o.task,
            o.function,
            o.file,
            o.model,
            if o.pass { "pass" } else { "fail" },
            o.tier.name(),
            o.samples,
            o.instability
        );
        let scores: Vec<String> = o
            .scores
            .iter()
            .map(|(k, v)| format!("{k} {v:.2}"))
            .collect();
        let _ = writeln!(s, "  scores: {}", scores.join(", "));
        for c in o.claims.iter().filter(|c| c.tier.name() == "refuted") {
            let _ = writeln!(s, "  refuted: {}", c.claim);
        }
        let llm_only = o
            .claims
            .iter()
            .filter(|c| c.tier.name() == "llm-only")
            .count();
        let confirmed = o
            .facts
            .iter()
            .filter(|f| f.tier.name() == "confirmed")
            .count();
        let _ = writeln!(
            s,
            "  facts: {} confirmed, {} analyzer-only; {} llm-only claim(s)",
            confirmed,
            o.facts.len() - confirmed,
            llm_only
        );
    }
    for e in &report.errors {
        let _ = writeln!(s, "error: {e}");
    }
    s
}

/// The `[crosscheck]` table of the user's config file (defaults when absent).
pub fn load_check_settings() -> anyhow::Result<CheckSettings> {
    let env = |k: &str| std::env::var(k).ok();
    let Some(path) = crate::llm::settings::config_path(&env) else {
        return Ok(CheckSettings::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CheckSettings::default()),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    check_settings_from_toml(&text)
        .map_err(|e| anyhow::anyhow!("{}: [crosscheck]: {e}", path.display()))
}

/// Parses the `[crosscheck]` table of a config file's text.
pub fn check_settings_from_toml(text: &str) -> Result<CheckSettings, String> {
    crate::crosscheck::engine::check_settings_from_toml(text)
}

/// The binary's entry: real settings, an HTTP client, no persistent store (yet).
pub fn run(args: &AskArgs, verbose: u8) -> anyhow::Result<i32> {
    // The per-user store is the persistent cache and the telemetry sink; without one (unwritable
    // directory, corrupt file) `ask` still works, uncached across runs.
    let store = crate::store::Store::open_optional(
        crate::store::default_db_path(),
        crate::store::StoreConfig::default(),
    )
    .map(Arc::new);
    let backend = store.clone().map(|s| s as Arc<dyn CacheBackend>);
    let sink = store.as_deref().map(|s| s as &dyn RecordSink);
    let taint = crate::crosscheck::taint_oracle::AnalyzerTaint;
    run_with(args, verbose, backend, sink, Some(&taint))
}

/// Like [`run`] with a cache backend, a record sink and a taint oracle wired in.
pub fn run_with(
    args: &AskArgs,
    verbose: u8,
    backend: Option<Arc<dyn CacheBackend>>,
    sink: Option<&dyn RecordSink>,
    taint: Option<&dyn TaintOracle>,
) -> anyhow::Result<i32> {
    let llm = LlmSettings::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut settings = load_check_settings()?;
    let client = HttpClient::new(llm.clone()).map_err(|e| anyhow::anyhow!("{e}"))?;
    settings.call_timeout = Some(Duration::from_secs(llm.timeout_secs.max(1) + 2));
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
    let ctx = AskContext {
        clients: vec![Arc::new(client)],
        settings,
        prompts,
        backend,
        sink,
        taint,
        now,
        cancel: Cancel::never(),
    };
    let report = ask(args, &ctx);
    emit(args, verbose, &report)?;
    Ok(report.exit_code)
}

/// Prints a report: data to stdout, errors and (with `-v`) cache statistics to stderr.
pub fn emit(args: &AskArgs, verbose: u8, report: &AskReport) -> anyhow::Result<()> {
    if verbose > 0 {
        for (f, hits, misses) in &report.cache {
            eprintln!("crosscheck: cache: {f}: {hits} hit(s), {misses} miss(es)");
        }
    }
    for e in &report.errors {
        eprintln!("crosscheck: error: {e}");
    }
    let out = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&report.json)?,
        OutputFormat::Text => render_text(report),
    };
    super::print_stdout(&out)?;
    Ok(())
}
