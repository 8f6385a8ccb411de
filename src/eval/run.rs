//! Running an evaluation: items × strategies × shots, three columns per item, resumable.
//!
//! # Columns and the hybrid rule per task
//!
//! | task | analyzer | LLM | hybrid (the product's rule) |
//! |---|---|---|---|
//! | cfg, call_graph, ast | the reference (our analyzer) | Layer-1 pass/fail of its answer | the analyzer's graph, `confirmed` when the LLM's answer passes stably ([`decide_tier`](crate::crosscheck::tier::decide_tier) via the engine): its figure is the confirmed-check rate |
//! | data_dependency, taint (analyzer as reference) | yes/no per asked pair or variable | the LLM's yes/no (unknown = no) | a fact is reported as `confirmed` only when the analyzer finds it **and** the LLM agrees; LLM-only claims are never findings |
//! | taint with the data set's labels (OWASP, SecuriBench, PyT) | the taint analysis of the file: its findings (one per rule and sink line), read as the label asks (a finding of the category's sink kind; the flagged sink lines; the number of flows) | the findings whose flow question the LLM's majority answers "yes" | the findings the engine tiers `confirmed` (a stable "yes") |
//! | points_to (analyzer as reference) | the reference | per-function Jaccard of its sets | as for cfg |
//! | points_to with alias assertions (PTABen) | do the two arguments' points-to sets intersect | the same from the LLM's points-to answer (a name it gives no set for: no answer) | "alias" only when both say so |
//! | equivalent_mutant, equivalence | normalisation proof (`equivalent`, else no verdict; executing programs is the CLI's sandbox, not this layer) | yes/no | the proof when there is one, else the LLM's stable verdict (as `crosscheck equiv` decides) |
//! | flaky_root_cause | the static category (none = no answer) | the LLM's category | the static category when there is one, else the LLM's (`llm-only`), as `crosscheck flaky` tiers it |
//!
//! Against gold labels (CoRe, OWASP, SecuriBench, PyT, PTABen, MutantBench, EqBench, FlakyCat,
//! JSONL) every column is scored; where our analyzer is the reference (cfg, call_graph, ast),
//! the analyzer column is 1 by construction.
//!
//! # Resumability, budget, concurrency
//!
//! Each finished item is appended to `OUT/results.jsonl` and flushed. A rerun with the same
//! output directory skips items whose key (dataset, id, task, strategy, shots, model) is
//! there, unless `fresh` (then the file starts anew and the answer cache is bypassed). Items
//! whose LLM call failed (transport errors, budget) are not written, so a rerun retries them;
//! after the first transport failure no further item is asked. A token budget
//! ([`BudgetedClient`]) stops new requests once spent; the items left are counted. A fixed
//! pool of `concurrency` worker threads, each with a current-thread runtime, takes items in
//! order; results are sorted back into item order.

use super::labels::{
    alias_calls, analyzer_alias, answer_alias, flow_has_sink_kind, owasp_sink_kind,
    pyt_vulnerabilities, score_count, score_sink_lines, AliasAssertion, AliasKind, BinaryCounts,
    SinkLineLabels,
};
use super::{EvalItem, Gold, EQUIVALENT, NOT_EQUIVALENT};
use crate::analysis::equiv::normal::prove_program_equivalent;
use crate::analysis::findings::{flow_findings, Finding};
use crate::analysis::flaky::{analyze_source, Category, FlakyOptions};
use crate::analysis::taint::TaintFlow;
use crate::crosscheck::answers::{parse_flaky_category, parse_single_verdict};
use crate::crosscheck::cache::{AnswerCache, CachedAnswer};
use crate::crosscheck::consistency::plurality;
use crate::crosscheck::engine::{CheckError, CheckOutcome, CheckSettings, Engine};
use crate::crosscheck::facts::{
    flow_path, prepare, FileFacts, FlowFiles, PrepareOptions, Question, Reference,
};
use crate::crosscheck::prompts::{CodeUnit, FunctionInfo, PromptInputs, PromptLibrary};
use crate::crosscheck::record::{CacheBackend, Tier};
use crate::crosscheck::sampling::{Drawn, Sampler};
use crate::crosscheck::scores::sets::PointsToMap;
use crate::crosscheck::taint_oracle::AnalyzerTaint;
use crate::crosscheck::task::{Shots, Strategy, Task};
use crate::llm::{Budget, BudgetedClient, LlmClient, LlmError, Verdict};
use crate::syntax::functions::{collect_functions, FunctionKind};
use crate::syntax::{Cancel, Language, ParsedFile};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The file of per-item results in the output directory.
pub const RESULTS_FILE: &str = "results.jsonl";
/// The model name of `--no-llm` runs.
pub const NO_MODEL: &str = "none";

/// One column's answer for one item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// Label tasks: the predicted label (`None`: no answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Pass/fail (graph tasks: Layer-1 pass; yes/no tasks: F1 at the set threshold; label
    /// tasks: label == gold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<bool>,
    /// Yes/no tasks: the confusion counts against the gold answers.
    #[serde(default)]
    pub tp: u64,
    #[serde(default)]
    pub fp: u64,
    #[serde(default, rename = "fn")]
    pub fn_: u64,
    #[serde(default)]
    pub tn: u64,
    /// A continuous score (points-to Jaccard, item F1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Named counts of label-scored items: PyT `found` / `expected`; SecuriBench
    /// `unmarked` (flagged lines without a mark); PTABen `<KIND> satisfied` / `<KIND> total`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parts: BTreeMap<String, u64>,
}

impl Column {
    fn counts(pred: &[bool], gold: &[bool], f1_threshold: f64) -> Column {
        let mut c = Column::default();
        for (p, g) in pred.iter().zip(gold) {
            match (p, g) {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, true) => c.fn_ += 1,
                (false, false) => c.tn += 1,
            }
        }
        let f1 = f1_of(c.tp, c.fp, c.fn_);
        c.score = Some(f1);
        c.pass = Some(f1 >= f1_threshold);
        c
    }

    fn label(label: Option<String>, gold: &str) -> Column {
        Column {
            pass: Some(label.as_deref() == Some(gold)),
            label,
            ..Column::default()
        }
    }
}

/// F1 from counts; 1 when there is nothing to find and nothing was claimed.
pub fn f1_of(tp: u64, fp: u64, fn_: u64) -> f64 {
    let den = 2 * tp + fp + fn_;
    if den == 0 {
        1.0
    } else {
        2.0 * tp as f64 / den as f64
    }
}

/// One line of `results.jsonl` (and one row of `results.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemResult {
    pub dataset: String,
    pub id: String,
    pub task: Task,
    pub project: String,
    pub language: String,
    /// The strategy name, or `-` without an LLM.
    pub strategy: String,
    pub shots: String,
    pub model: String,
    /// `ok`, `unreadable` (the LLM answered but nothing could be read: counted as wrong),
    /// or `not_applicable` (the item cannot be asked, e.g. no such function; not scored).
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
    pub analyzer: Column,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<Column>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<Column>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// LLM requests actually sent for this item (0 when every answer came from the cache).
    #[serde(default)]
    pub requests: u64,
}

impl ItemResult {
    /// The resume key.
    pub fn key(&self) -> (String, String, Task, String, String, String) {
        (
            self.dataset.clone(),
            self.id.clone(),
            self.task,
            self.strategy.clone(),
            self.shots.clone(),
            self.model.clone(),
        )
    }

    /// True when the row counts in the metrics.
    pub fn scored(&self) -> bool {
        self.status != "not_applicable"
    }
}

/// How an evaluation runs.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Strategies to compare (`None`: each task's default). Empty: the default only.
    pub strategies: Vec<Option<Strategy>>,
    /// Shots to compare. Empty: zero-shot only.
    pub shots: Vec<Shots>,
    /// Worker threads (at least 1).
    pub concurrency: usize,
    /// Stop issuing requests once this many tokens were spent in this run.
    pub max_tokens_total: Option<u64>,
    /// Re-ask everything (new results file, no cache).
    pub fresh: bool,
    /// The analyzer column only.
    pub no_llm: bool,
    /// Equivalence tasks: the analyzer column runs the sandboxed differential testing of
    /// `crosscheck mutants` (proof, then executed trials) instead of the proof alone.
    pub execute: bool,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            strategies: Vec::new(),
            shots: Vec::new(),
            concurrency: 1,
            max_tokens_total: None,
            fresh: false,
            no_llm: false,
            execute: false,
        }
    }
}

/// What the run needs besides items and options.
pub struct EvalContext<'a> {
    /// One client, or several for a jury; empty with `no_llm`.
    pub clients: Vec<Arc<dyn LlmClient>>,
    pub settings: CheckSettings,
    pub prompts: &'a PromptLibrary,
    pub backend: Option<Arc<dyn CacheBackend>>,
    /// Seconds since the epoch, for records.
    pub now: i64,
    pub cancel: Cancel,
    /// Called after each job with (done, total).
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
}

/// The outcome of [`run_eval`].
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// Every result of this output directory (resumed and new), in item order.
    pub results: Vec<ItemResult>,
    /// Jobs answered in this run.
    pub fresh_items: usize,
    /// Jobs found done in `results.jsonl`.
    pub resumed: usize,
    /// Jobs not asked because the token budget was spent.
    pub skipped_budget: usize,
    /// Jobs not asked after an LLM transport failure (or cancellation).
    pub skipped_failure: usize,
    /// LLM requests sent in this run.
    pub requests: u64,
    pub tokens: u64,
    pub errors: Vec<String>,
}

/// Selects items per (dataset, task): the tasks named (all when empty), then either a seeded
/// random sample of `sample` items or the first `limit` items.
pub fn select_items(
    items: Vec<EvalItem>,
    tasks: &[Task],
    limit: Option<usize>,
    sample: Option<(usize, u64)>,
) -> Vec<EvalItem> {
    let mut groups: BTreeMap<(String, Task), Vec<EvalItem>> = BTreeMap::new();
    for item in items {
        if tasks.is_empty() || tasks.contains(&item.task) {
            groups
                .entry((item.dataset.clone(), item.task))
                .or_default()
                .push(item);
        }
    }
    let mut out = Vec::new();
    for ((dataset, task), mut group) in groups {
        group.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some((n, seed)) = sample {
            // One generator per group, seeded by the seed and the group's name, so adding a
            // data set does not change another's sample.
            let mut h: u64 = seed;
            for b in dataset.bytes().chain(task.name().bytes()) {
                h = h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b));
            }
            let mut rng = ChaCha8Rng::seed_from_u64(h);
            group.shuffle(&mut rng);
            group.truncate(n);
            group.sort_by(|a, b| a.id.cmp(&b.id));
        }
        if let Some(n) = limit {
            group.truncate(n);
        }
        out.extend(group);
    }
    out
}

/// Reads the rows of an existing results file; a torn last line (a killed run) is ignored.
pub fn read_results(path: &Path) -> Vec<ItemResult> {
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

struct Job<'i> {
    item: &'i EvalItem,
    strategy: Option<Strategy>,
    shots: Shots,
}

fn model_name(clients: &[Arc<dyn LlmClient>], no_llm: bool) -> String {
    if no_llm || clients.is_empty() {
        return NO_MODEL.to_string();
    }
    let ids: Vec<String> = clients.iter().map(|c| c.model_id()).collect();
    if ids.len() == 1 {
        ids.join("")
    } else {
        format!("jury({})", ids.join(", "))
    }
}

fn strategy_label(job: &Job<'_>, settings: &CheckSettings, no_llm: bool) -> (String, String) {
    if no_llm {
        return ("-".into(), "-".into());
    }
    let s = job.strategy.unwrap_or(settings.strategy_for(job.item.task));
    (s.name().to_string(), job.shots.name().to_string())
}

/// Runs the evaluation, appending to `out/results.jsonl`; returns all results of `out`.
pub fn run_eval(
    items: &[EvalItem],
    out: &Path,
    options: &EvalOptions,
    ctx: &EvalContext<'_>,
) -> std::io::Result<RunSummary> {
    std::fs::create_dir_all(out)?;
    let results_path = out.join(RESULTS_FILE);
    let no_llm = options.no_llm || ctx.clients.is_empty();
    let model = model_name(&ctx.clients, no_llm);
    let previous = if options.fresh {
        Vec::new()
    } else {
        read_results(&results_path)
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(!options.fresh)
        .write(true)
        .truncate(options.fresh)
        .open(&results_path)?;
    let mut writer = std::io::BufWriter::new(file);
    // A killed run may have left a torn last line: end it, so the next row starts afresh.
    let torn = !options.fresh
        && std::fs::read(&results_path)
            .ok()
            .and_then(|b| b.last().copied())
            .is_some_and(|b| b != b'\n');
    if torn {
        writeln!(writer)?;
        writer.flush()?;
    }
    let writer = Mutex::new(writer);

    let strategies: Vec<Option<Strategy>> = if no_llm || options.strategies.is_empty() {
        vec![None]
    } else {
        options.strategies.clone()
    };
    let shots: Vec<Shots> = if no_llm || options.shots.is_empty() {
        vec![ctx.settings.shots]
    } else {
        options.shots.clone()
    };
    let mut jobs = Vec::new();
    for item in items {
        for s in &strategies {
            for sh in &shots {
                jobs.push(Job {
                    item,
                    strategy: *s,
                    shots: *sh,
                });
            }
        }
    }

    let done: BTreeMap<_, ItemResult> = previous.into_iter().map(|r| (r.key(), r)).collect();
    let mut summary = RunSummary::default();
    let mut slots: Vec<Option<ItemResult>> = vec![None; jobs.len()];
    let mut pending = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let (s, sh) = strategy_label(job, &ctx.settings, no_llm);
        let key = (
            job.item.dataset.clone(),
            job.item.id.clone(),
            job.item.task,
            s,
            sh,
            model.clone(),
        );
        match done.get(&key) {
            Some(r) => {
                if let Some(slot) = slots.get_mut(i) {
                    *slot = Some(r.clone());
                }
                summary.resumed += 1;
            }
            None => pending.push(i),
        }
    }

    let budget = Arc::new(Mutex::new(Budget::new(options.max_tokens_total, None)));
    let clients: Vec<Arc<dyn LlmClient>> = if no_llm {
        Vec::new()
    } else {
        ctx.clients
            .iter()
            .map(|c| {
                Arc::new(BudgetedClient::new(Arc::clone(c), Arc::clone(&budget)))
                    as Arc<dyn LlmClient>
            })
            .collect()
    };
    let mut settings = ctx.settings.clone();
    settings.fresh |= options.fresh;
    let cache = AnswerCache::new(if settings.fresh {
        None
    } else {
        ctx.backend.clone()
    });
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let llm_down = AtomicBool::new(false);
    let new_results: Mutex<Vec<(usize, ItemResult)>> = Mutex::new(Vec::new());
    let counters = Mutex::new((0usize, 0usize, 0u64, 0u64, Vec::<String>::new()));
    let total = jobs.len();
    let base_done = summary.resumed;
    if let Some(p) = ctx.progress {
        p(base_done, total);
    }
    let workers = options.concurrency.clamp(1, 64).min(pending.len().max(1));
    let worker = || {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                lock(&counters)
                    .4
                    .push(format!("cannot start the async runtime: {e}"));
                return;
            }
        };
        loop {
            let k = next.fetch_add(1, Ordering::SeqCst);
            let Some(&index) = pending.get(k) else {
                break;
            };
            let Some(job) = jobs.get(index) else {
                break;
            };
            let (s, sh) = strategy_label(job, &settings, no_llm);
            let outcome = if ctx.cancel.is_cancelled() || llm_down.load(Ordering::SeqCst) {
                JobOutcome::SkippedFailure
            } else if !clients.is_empty() && lock(&budget).check(0).is_err() {
                JobOutcome::SkippedBudget
            } else {
                let mut job_settings = settings.clone();
                if let Some(st) = job.strategy {
                    job_settings.strategy = Some(st);
                }
                job_settings.shots = job.shots;
                let runner = Runner {
                    clients: &clients,
                    settings: &job_settings,
                    prompts: ctx.prompts,
                    cache: &cache,
                    now: ctx.now,
                    cancel: &ctx.cancel,
                    execute: options.execute,
                };
                runtime.block_on(runner.run(job.item))
            };
            match outcome {
                JobOutcome::Done(r) => {
                    let mut r = *r;
                    r.strategy = s;
                    r.shots = sh;
                    r.model = model.clone();
                    if let Ok(line) = serde_json::to_string(&r) {
                        let mut w = lock(&writer);
                        let res = writeln!(w, "{line}").and_then(|_| w.flush());
                        if let Err(e) = res {
                            lock(&counters).4.push(format!("{}: {e}", RESULTS_FILE));
                        }
                    }
                    {
                        let mut c = lock(&counters);
                        c.2 += r.requests;
                        c.3 += r.prompt_tokens + r.completion_tokens;
                    }
                    lock(&new_results).push((index, r));
                }
                JobOutcome::SkippedBudget => lock(&counters).0 += 1,
                JobOutcome::SkippedFailure => lock(&counters).1 += 1,
                JobOutcome::LlmFailed(e) => {
                    if matches!(e, LlmError::BudgetExceeded { .. }) {
                        lock(&counters).0 += 1;
                    } else if rejected_item(&e) {
                        // This item's request is the problem (too long for the model's
                        // context, say), not the server: the other items are still asked.
                        let mut c = lock(&counters);
                        c.1 += 1;
                        c.4.push(format!(
                            "{}/{}: the LLM server rejected this item's request: {e}",
                            job.item.dataset, job.item.id
                        ));
                    } else {
                        llm_down.store(true, Ordering::SeqCst);
                        let mut c = lock(&counters);
                        c.1 += 1;
                        c.4.push(format!(
                            "{}/{}: LLM call failed: {e}",
                            job.item.dataset, job.item.id
                        ));
                    }
                }
            }
            let n = finished.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some(p) = ctx.progress {
                p(base_done + n, total);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(worker);
        }
    });
    let new_results = new_results.into_inner().unwrap_or_else(|p| p.into_inner());
    summary.fresh_items = new_results.len();
    for (i, r) in new_results {
        if let Some(slot) = slots.get_mut(i) {
            *slot = Some(r);
        }
    }
    let (skipped_budget, skipped_failure, requests, tokens, errors) =
        counters.into_inner().unwrap_or_else(|p| p.into_inner());
    summary.skipped_budget = skipped_budget;
    summary.skipped_failure = skipped_failure;
    summary.requests = requests;
    summary.tokens = tokens;
    summary.errors = errors;
    summary.results = slots.into_iter().flatten().collect();
    Ok(summary)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

enum JobOutcome {
    Done(Box<ItemResult>),
    SkippedBudget,
    SkippedFailure,
    LlmFailed(LlmError),
}

struct Runner<'r> {
    clients: &'r [Arc<dyn LlmClient>],
    settings: &'r CheckSettings,
    prompts: &'r PromptLibrary,
    cache: &'r AnswerCache,
    now: i64,
    cancel: &'r Cancel,
    /// See [`EvalOptions::execute`].
    execute: bool,
}

fn base_result(item: &EvalItem) -> ItemResult {
    ItemResult {
        dataset: item.dataset.clone(),
        id: item.id.clone(),
        task: item.task,
        project: item.project.clone(),
        language: item.language.name().to_string(),
        strategy: String::new(),
        shots: String::new(),
        model: String::new(),
        status: "ok".into(),
        gold: Some(gold_text(&item.gold)),
        analyzer: Column::default(),
        llm: None,
        hybrid: None,
        error: None,
        prompt_tokens: 0,
        completion_tokens: 0,
        requests: 0,
    }
}

/// The `gold` field of a result: the label, or the kind of reference.
fn gold_text(gold: &Gold) -> String {
    match gold {
        Gold::Label { label } => label.clone(),
        Gold::Analyzer => "analyzer".into(),
        Gold::Dependencies { .. } => "dependencies".into(),
        Gold::TaintVerdict { vulnerable, .. } => verdict_label(*vulnerable).into(),
        Gold::SinkLines { bad, ok } => format!("sink_lines bad={} ok={}", bad.len(), ok.len()),
        Gold::VulnCount { count } => format!("vuln_count {count}"),
        Gold::AliasAssertions { assertions } => format!("alias_assertions {}", assertions.len()),
    }
}

/// The labels of a taint verdict.
pub const VULNERABLE: &str = "vulnerable";
pub const NOT_VULNERABLE: &str = "not_vulnerable";

fn verdict_label(vulnerable: bool) -> &'static str {
    if vulnerable {
        VULNERABLE
    } else {
        NOT_VULNERABLE
    }
}

/// The column of one taint-verdict answer.
pub fn verdict_column(predicted: bool, actual: bool) -> Column {
    let mut c = BinaryCounts::default();
    c.add(predicted, actual);
    Column {
        label: Some(verdict_label(predicted).to_string()),
        pass: Some(predicted == actual),
        tp: c.tp,
        fp: c.fp,
        fn_: c.fn_,
        tn: c.tn,
        score: None,
        parts: BTreeMap::new(),
    }
}

/// The column of flagged sink lines against SecuriBench's marks.
pub fn sink_lines_column(marks: &SinkLineLabels, flagged: &BTreeSet<usize>) -> Column {
    let s = score_sink_lines(marks, flagged);
    let c = s.counts;
    Column {
        label: None,
        pass: Some(c.fp == 0 && c.fn_ == 0),
        tp: c.tp,
        fp: c.fp,
        fn_: c.fn_,
        tn: c.tn,
        score: c.f1(),
        parts: [("unmarked".to_string(), s.unmarked)].into(),
    }
}

/// The column of a vulnerability count against PyT's.
pub fn count_column(found: usize, expected: usize) -> Column {
    let c = score_count(found, expected);
    Column {
        label: None,
        pass: Some(found == expected),
        tp: c.tp,
        fp: c.fp,
        fn_: c.fn_,
        tn: c.tn,
        score: Some(found as f64),
        parts: [
            ("found".to_string(), found as u64),
            ("expected".to_string(), expected as u64),
        ]
        .into(),
    }
}

/// The column of alias answers (`Some(intersect)`, `None`: no answer) against assertions:
/// "alias" is the positive class (MUST/MAY satisfied = TP, unsatisfied = FN; NO satisfied =
/// TN, unsatisfied = FP); `score` is the share satisfied; `parts` per kind.
pub fn alias_column(answers: &[(AliasKind, Option<bool>)]) -> Column {
    let mut c = BinaryCounts::default();
    let mut parts: BTreeMap<String, u64> = BTreeMap::new();
    for (kind, alias) in answers {
        let ok = kind.satisfied_by(*alias);
        let predicted_alias = if kind.expects_alias() { ok } else { !ok };
        c.add(predicted_alias, kind.expects_alias());
        *parts.entry(format!("{} total", kind.name())).or_default() += 1;
        *parts
            .entry(format!("{} satisfied", kind.name()))
            .or_default() += u64::from(ok);
    }
    let satisfied = c.tp + c.tn;
    Column {
        label: None,
        pass: Some(satisfied == c.total()),
        tp: c.tp,
        fp: c.fp,
        fn_: c.fn_,
        tn: c.tn,
        score: (c.total() > 0).then(|| satisfied as f64 / c.total() as f64),
        parts,
    }
}

fn not_applicable(item: &EvalItem, why: String) -> JobOutcome {
    let mut r = base_result(item);
    r.status = "not_applicable".into();
    r.error = Some(why);
    JobOutcome::Done(Box::new(r))
}

impl Runner<'_> {
    async fn run(&self, item: &EvalItem) -> JobOutcome {
        match item.task {
            Task::FlakyRootCause => self.run_flaky(item).await,
            Task::EquivalentMutant | Task::Equivalence => self.run_equivalence(item).await,
            Task::Taint
                if matches!(
                    item.gold,
                    Gold::TaintVerdict { .. } | Gold::SinkLines { .. } | Gold::VulnCount { .. }
                ) =>
            {
                self.run_taint_labels(item).await
            }
            Task::PointsTo if matches!(item.gold, Gold::AliasAssertions { .. }) => {
                self.run_alias(item).await
            }
            t if t.analyzer_backed() => self.run_engine(item).await,
            t => not_applicable(item, format!("task {} is not evaluated", t.name())),
        }
    }

    async fn run_engine(&self, item: &EvalItem) -> JobOutcome {
        let parsed = ParsedFile::parse_with_cancel(item.language, item.code.clone(), self.cancel);
        let path = format!("{}/{}", item.dataset, item.id);
        let mut facts = FileFacts::new(&path, &parsed);
        let index = facts.functions.iter().position(|f| match &item.function {
            Some(n) => f.name == *n || f.simple_name == *n,
            None => f.kind != FunctionKind::Lambda,
        });
        let Some(index) = index else {
            return not_applicable(
                item,
                format!(
                    "no function {}",
                    item.function.as_deref().unwrap_or("(none in the file)")
                ),
            );
        };
        let options = PrepareOptions {
            max_questions: self.settings.max_questions.max(1),
        };
        let mut question = match prepare(
            item.task,
            &mut facts,
            index,
            Some(&AnalyzerTaint),
            &options,
            self.cancel,
        ) {
            Ok(q) => q,
            Err(e) => return not_applicable(item, e.to_string()),
        };
        let th = self.settings.thresholds.sets.f1;
        // The analyzer's yes/no answers before the gold labels replace the reference.
        let mut analyzer_yes: Vec<bool> = Vec::new();
        match (&item.gold, &mut question.reference) {
            (Gold::Dependencies { pairs }, Reference::DataDependency { questions, .. }) => {
                let gold: BTreeSet<(&str, &str)> = pairs
                    .iter()
                    .map(|(a, b)| (a.as_str(), b.as_str()))
                    .collect();
                let labelled: BTreeSet<&str> = pairs
                    .iter()
                    .flat_map(|(a, b)| [a.as_str(), b.as_str()])
                    .collect();
                // Only pairs whose target the labels mention can be judged.
                questions.retain(|q| labelled.contains(q.target.as_str()));
                for q in questions.iter_mut() {
                    analyzer_yes.push(q.expected);
                    q.expected = gold.contains(&(q.target.as_str(), q.source.as_str()));
                }
                if questions.is_empty() {
                    return not_applicable(item, "no labelled variable pair to ask about".into());
                }
                question.inputs.question = json!({
                    "pairs": questions.iter().map(|q| json!({"id": q.id, "target": q.target, "source": q.source})).collect::<Vec<_>>()
                });
            }
            (Gold::Analyzer, Reference::DataDependency { questions, .. })
            | (Gold::Analyzer, Reference::Taint { questions, .. }) => {
                if questions.is_empty() {
                    return not_applicable(item, "no variable to ask about".into());
                }
                analyzer_yes = questions.iter().map(|q| q.expected).collect();
            }
            (Gold::Analyzer, _) => {}
            _ => return not_applicable(item, "the gold label does not fit the task".into()),
        }
        let gold_yes: Vec<bool> = match &question.reference {
            Reference::DataDependency { questions, .. } | Reference::Taint { questions, .. } => {
                questions.iter().map(|q| q.expected).collect()
            }
            _ => Vec::new(),
        };
        let yes_no = !gold_yes.is_empty();
        let mut r = base_result(item);
        r.analyzer = if yes_no {
            Column::counts(&analyzer_yes, &gold_yes, th)
        } else {
            Column {
                pass: Some(true),
                score: Some(1.0),
                ..Column::default()
            }
        };
        if self.clients.is_empty() {
            return JobOutcome::Done(Box::new(r));
        }
        let engine = Engine {
            prompts: self.prompts,
            cache: self.cache,
            settings: self.settings,
            sink: None,
        };
        match engine.check(self.clients, &question, self.now).await {
            Ok(outcome) => {
                add_usage(&mut r, &outcome);
                if yes_no {
                    let llm_yes: Vec<bool> = item_ids(&question)
                        .iter()
                        .map(|id| {
                            outcome.llm.get(id.to_string()).and_then(Value::as_str) == Some("yes")
                        })
                        .collect();
                    let hybrid_yes: Vec<bool> = analyzer_yes
                        .iter()
                        .zip(&llm_yes)
                        .map(|(a, l)| *a && *l)
                        .collect();
                    r.llm = Some(Column::counts(&llm_yes, &gold_yes, th));
                    r.hybrid = Some(Column::counts(&hybrid_yes, &gold_yes, th));
                } else {
                    let score = outcome
                        .scores
                        .get("jaccard")
                        .copied()
                        .or(Some(if outcome.pass { 1.0 } else { 0.0 }));
                    r.llm = Some(Column {
                        pass: Some(outcome.pass),
                        score,
                        ..Column::default()
                    });
                    let confirmed = outcome.tier == Tier::Confirmed;
                    let facts = outcome.facts.len().max(1) as f64;
                    let share = outcome
                        .facts
                        .iter()
                        .filter(|f| f.tier == Tier::Confirmed)
                        .count() as f64
                        / facts;
                    r.hybrid = Some(Column {
                        pass: Some(confirmed),
                        score: Some(share),
                        ..Column::default()
                    });
                }
                JobOutcome::Done(Box::new(r))
            }
            Err(CheckError::Llm(e)) => JobOutcome::LlmFailed(e),
            Err(e) => {
                // Answers came back but none could be read: wrong (unknown counts as no).
                r.status = "unreadable".into();
                r.error = Some(e.to_string());
                r.requests =
                    self.clients.len() as u64 * self.settings.samples_for(item.task) as u64;
                if yes_no {
                    let none = vec![false; gold_yes.len()];
                    r.llm = Some(Column::counts(&none, &gold_yes, th));
                    r.hybrid = Some(Column::counts(&none, &gold_yes, th));
                } else {
                    let zero = Column {
                        pass: Some(false),
                        score: Some(0.0),
                        ..Column::default()
                    };
                    r.llm = Some(zero.clone());
                    r.hybrid = Some(zero);
                }
                JobOutcome::Done(Box::new(r))
            }
        }
    }

    /// Asks the engine one question, adding its requests and tokens to `r`. `Ok(None)`: the
    /// answers could not be read (`r` is marked `unreadable`; the answer counts as "no").
    async fn ask(
        &self,
        question: &Question,
        r: &mut ItemResult,
    ) -> Result<Option<CheckOutcome>, LlmError> {
        let engine = Engine {
            prompts: self.prompts,
            cache: self.cache,
            settings: self.settings,
            sink: None,
        };
        match engine.check(self.clients, question, self.now).await {
            Ok(outcome) => {
                add_usage(r, &outcome);
                Ok(Some(outcome))
            }
            Err(CheckError::Llm(e)) => Err(e),
            Err(e) => {
                r.status = "unreadable".into();
                r.error = Some(e.to_string());
                r.requests += self.clients.len() as u64
                    * self.settings.samples_for(question.inputs.task) as u64;
                Ok(None)
            }
        }
    }

    /// Taint items with the data set's own labels (OWASP verdicts, SecuriBench sink lines,
    /// PyT counts). The analyzer column is the taint analysis of the item's file (built-in
    /// specifications); its findings (one per rule and sink line) are then each asked as the
    /// product's flow question (`crosscheck check --llm`, the editor): the LLM column keeps
    /// the findings the LLM's majority answer confirms, the hybrid column those the engine
    /// tiers `confirmed` (a stable yes). The LLM is never asked to find flows of its own, so
    /// neither column can find what the analyzer misses.
    async fn run_taint_labels(&self, item: &EvalItem) -> JobOutcome {
        let path = item_path(item);
        let parsed = ParsedFile::parse_with_cancel(item.language, item.code.clone(), self.cancel);
        let result = crate::analysis::taint::analyze_file(&path, &parsed, self.cancel);
        // The flows the label is about.
        let flows: Vec<TaintFlow> = match &item.gold {
            Gold::TaintVerdict { category, .. } => {
                let kind = owasp_sink_kind(category).or_else(|| {
                    crate::analysis::rules::RULES
                        .iter()
                        .filter_map(|r| r.sink_kind)
                        .find(|k| *k != "*" && k == category)
                });
                let Some(kind) = kind else {
                    return not_applicable(
                        item,
                        format!("no taint rule reports `{category}` (not a taint category)"),
                    );
                };
                result
                    .flows
                    .iter()
                    .filter(|f| f.sink.file == path && flow_has_sink_kind(f, kind))
                    .cloned()
                    .collect()
            }
            Gold::SinkLines { .. } => result
                .flows
                .iter()
                .filter(|f| f.sink.file == path)
                .cloned()
                .collect(),
            // PyT counts sanitised flows too; they are asked like the others.
            _ => pyt_vulnerabilities(&result, &path)
                .into_iter()
                .map(|f| TaintFlow {
                    sanitized: false,
                    ..f.clone()
                })
                .collect(),
        };
        let findings = flow_findings(&path, Some(&parsed), &flows);
        let mut r = base_result(item);
        r.analyzer = taint_label_column(&item.gold, &flows, &findings, None);
        if self.clients.is_empty() {
            return JobOutcome::Done(Box::new(r));
        }
        let mut llm_keep = vec![false; findings.len()];
        let mut hybrid_keep = vec![false; findings.len()];
        let file_of = |p: &str| (p == path).then_some(&parsed);
        let mut files = FlowFiles::new(&file_of);
        for (i, f) in findings.iter().enumerate() {
            let question = match files.question(&path, &f.rule, &flow_path(&f.evidence)) {
                Ok(q) => q,
                Err(e) => {
                    r.error = Some(format!("finding at line {}: {e}", f.line));
                    continue;
                }
            };
            match self.ask(&question, &mut r).await {
                Ok(Some(outcome)) => {
                    llm_keep[i] = outcome.pass;
                    hybrid_keep[i] = outcome.tier == Tier::Confirmed;
                }
                Ok(None) => {}
                Err(e) => return JobOutcome::LlmFailed(e),
            }
        }
        r.llm = Some(taint_label_column(
            &item.gold,
            &flows,
            &findings,
            Some(&llm_keep),
        ));
        r.hybrid = Some(taint_label_column(
            &item.gold,
            &flows,
            &findings,
            Some(&hybrid_keep),
        ));
        JobOutcome::Done(Box::new(r))
    }

    /// Points-to items with PTABen's alias assertions. The analyzer answers each assertion
    /// with its points-to sets of the two arguments (as `tests/pointsto_ptaben.rs`); the LLM
    /// with its answer to the function's points-to question (an argument it gives no set for
    /// is no answer: the assertion is not satisfied); the hybrid claims "may alias" only when
    /// both do (an LLM claim alone is never reported).
    async fn run_alias(&self, item: &EvalItem) -> JobOutcome {
        let Gold::AliasAssertions { assertions } = &item.gold else {
            return not_applicable(item, "alias items need assertions".into());
        };
        let path = item_path(item);
        let parsed = ParsedFile::parse_with_cancel(item.language, item.code.clone(), self.cancel);
        let pts = crate::analysis::pointsto::analyze_file(&path, &parsed, self.cancel);
        let calls = alias_calls(&parsed);
        let mut scored: Vec<(&AliasAssertion, bool)> = Vec::new();
        for a in assertions {
            if let Some(call) = calls.iter().find(|c| c.line == a.line && c.kind == a.kind) {
                scored.push((a, analyzer_alias(&path, &parsed, &pts, call).2));
            }
        }
        if scored.is_empty() {
            return not_applicable(item, "no assertion call at the labelled lines".into());
        }
        let mut r = base_result(item);
        let missing = assertions.len() - scored.len();
        if missing > 0 {
            r.error = Some(format!(
                "{missing} assertion(s) without a call at their line; not scored"
            ));
        }
        let analyzer: Vec<(AliasKind, Option<bool>)> =
            scored.iter().map(|(a, al)| (a.kind, Some(*al))).collect();
        r.analyzer = alias_column(&analyzer);
        if self.clients.is_empty() {
            return JobOutcome::Done(Box::new(r));
        }
        let mut facts = FileFacts::new(&path, &parsed);
        // The named function, else the one holding the first assertion.
        let first = scored.first().map_or(0, |(a, _)| a.line);
        let index = facts.functions.iter().position(|f| match &item.function {
            Some(n) => f.name == *n || f.simple_name == *n,
            None => f.kind != FunctionKind::Lambda && f.start_line <= first && first <= f.end_line,
        });
        let options = PrepareOptions {
            max_questions: self.settings.max_questions.max(1),
        };
        let question = index
            .ok_or_else(|| "the asserting function is not in the file".to_string())
            .and_then(|i| {
                prepare(Task::PointsTo, &mut facts, i, None, &options, self.cancel)
                    .map_err(|e| e.to_string())
            });
        let mut answer: Option<PointsToMap> = None;
        match question {
            Ok(q) => match self.ask(&q, &mut r).await {
                Ok(Some(outcome)) => {
                    answer = serde_json::from_value(outcome.llm["points_to"].clone()).ok();
                }
                Ok(None) => {}
                Err(e) => return JobOutcome::LlmFailed(e),
            },
            Err(e) => r.error = Some(e),
        }
        let llm: Vec<(AliasKind, Option<bool>)> = scored
            .iter()
            .map(|(a, _)| {
                (
                    a.kind,
                    answer.as_ref().and_then(|m| answer_alias(m, &a.a, &a.b)),
                )
            })
            .collect();
        let hybrid: Vec<(AliasKind, Option<bool>)> = scored
            .iter()
            .zip(&llm)
            .map(|((a, al), (_, l))| (a.kind, Some(*al && *l == Some(true))))
            .collect();
        r.llm = Some(alias_column(&llm));
        r.hybrid = Some(alias_column(&hybrid));
        JobOutcome::Done(Box::new(r))
    }

    async fn run_flaky(&self, item: &EvalItem) -> JobOutcome {
        let Gold::Label { label: gold } = &item.gold else {
            return not_applicable(item, "flaky items need a category label".into());
        };
        let report = analyze_source(
            item.language,
            &item.code,
            &FlakyOptions {
                every_function_is_a_test: true,
                // FlakyCat holds only flaky tests: the question is which cause, not whether.
                known_flaky: item.dataset == "flakycat",
            },
            self.cancel,
        );
        // The outermost test: the widest span, the first in document order among equals.
        let test = report
            .tests
            .iter()
            .max_by_key(|t| (t.end_line - t.line, std::cmp::Reverse(t.line)));
        let static_cat = test.and_then(|t| t.category).map(|c| c.name().to_string());
        let mut r = base_result(item);
        r.analyzer = Column::label(static_cat.clone(), gold);
        if self.clients.is_empty() {
            return JobOutcome::Done(Box::new(r));
        }
        let parsed = ParsedFile::parse_with_cancel(item.language, item.code.clone(), self.cancel);
        let functions = collect_functions(&parsed);
        let func = test
            .and_then(|t| {
                functions
                    .iter()
                    .find(|f| f.name == t.name && f.start_line == t.line)
            })
            .or_else(|| functions.first());
        let (name, params, text) = match func {
            Some(f) => (
                f.name.clone(),
                f.params.clone(),
                crate::crosscheck::facts::function_text(&parsed, f),
            ),
            None => ("test".to_string(), Vec::new(), item.code.clone()),
        };
        let inputs = PromptInputs {
            task: Task::FlakyRootCause,
            language: item.language,
            function: Some(FunctionInfo {
                name,
                kind: "test".into(),
                params,
            }),
            code: vec![CodeUnit {
                label: "test".into(),
                language: item.language,
                text,
            }],
            question: json!({}),
            context: Vec::new(),
        };
        let parse = |t: &str| {
            parse_flaky_category(t)
                .and_then(Category::from_name)
                .map(|c| c.name().to_string())
        };
        match self.ask_label(&inputs, &parse).await {
            Ok(ans) => {
                r.requests = ans.requests;
                r.prompt_tokens = ans.prompt_tokens;
                r.completion_tokens = ans.completion_tokens;
                if ans.label.is_none() {
                    r.status = "unreadable".into();
                    r.error = ans.error.clone();
                }
                // Hybrid: the static category when there is one, else the LLM's (llm-only).
                let hybrid = static_cat.or_else(|| ans.stable_label());
                r.llm = Some(Column::label(ans.label, gold));
                r.hybrid = Some(Column::label(hybrid, gold));
                JobOutcome::Done(Box::new(r))
            }
            Err(e) => JobOutcome::LlmFailed(e),
        }
    }

    async fn run_equivalence(&self, item: &EvalItem) -> JobOutcome {
        let Gold::Label { label: gold } = &item.gold else {
            return not_applicable(item, "equivalence items need a label".into());
        };
        let Some(code_b) = &item.code_b else {
            return not_applicable(item, "equivalence items need `code_b`".into());
        };
        let det = if self.execute {
            executed_verdict(item.language, &item.code, code_b)
        } else {
            prove_files_equivalent(item.language, &item.code, code_b, self.cancel)
                .then(|| EQUIVALENT.to_string())
        };
        let mut r = base_result(item);
        r.analyzer = Column::label(det.clone(), gold);
        if self.clients.is_empty() {
            return JobOutcome::Done(Box::new(r));
        }
        let labels = if item.task == Task::EquivalentMutant {
            ["original", "mutant"]
        } else {
            ["program A", "program B"]
        };
        let inputs = PromptInputs {
            task: item.task,
            language: item.language,
            function: None,
            code: vec![
                CodeUnit {
                    label: labels[0].into(),
                    language: item.language,
                    text: item.code.clone(),
                },
                CodeUnit {
                    label: labels[1].into(),
                    language: item.language,
                    text: code_b.clone(),
                },
            ],
            question: Value::Null,
            context: Vec::new(),
        };
        let parse = |t: &str| match parse_single_verdict(t) {
            Verdict::Yes => Some(EQUIVALENT.to_string()),
            Verdict::No => Some(NOT_EQUIVALENT.to_string()),
            Verdict::Unknown => None,
        };
        match self.ask_label(&inputs, &parse).await {
            Ok(ans) => {
                r.requests = ans.requests;
                r.prompt_tokens = ans.prompt_tokens;
                r.completion_tokens = ans.completion_tokens;
                if ans.label.is_none() {
                    r.status = "unreadable".into();
                    r.error = ans.error.clone();
                }
                // Hybrid: the proof when there is one, else the LLM's stable verdict.
                let hybrid = det.or_else(|| ans.stable_label());
                r.llm = Some(Column::label(ans.label, gold));
                r.hybrid = Some(Column::label(hybrid, gold));
                JobOutcome::Done(Box::new(r))
            }
            Err(e) => JobOutcome::LlmFailed(e),
        }
    }

    /// Asks the first client for a label (the same cache-key scheme as `ask` and `flaky`),
    /// `samples` times; the majority label wins.
    async fn ask_label(
        &self,
        inputs: &PromptInputs,
        parse: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<LabelAnswer, LlmError> {
        let Some(client) = self.clients.first() else {
            return Ok(LabelAnswer::default());
        };
        let task = inputs.task;
        let settings = self.settings;
        let prompt = match self
            .prompts
            .render(inputs, settings.strategy_for(task), settings.shots)
        {
            Ok(p) => p,
            Err(e) => {
                return Ok(LabelAnswer {
                    error: Some(format!("prompt: {e}")),
                    ..LabelAnswer::default()
                })
            }
        };
        let input_hash = inputs.input_hash();
        let sampler = Sampler::new(
            client.as_ref(),
            settings,
            self.cache,
            &prompt,
            task,
            &input_hash,
            false,
            format!("eval {}", task.name()),
        );
        let n = sampler.samples();
        let mut ans = LabelAnswer::default();
        let mut votes: Vec<Option<String>> = Vec::new();
        for i in 0..n {
            let text = match sampler.draw(i).await? {
                Drawn::Cached(c) => c.text,
                Drawn::Answered(resp) => {
                    ans.requests += 1;
                    ans.prompt_tokens += resp.prompt_tokens;
                    ans.completion_tokens += resp.completion_tokens;
                    if parse(&resp.text).is_some() {
                        sampler.remember(i, &CachedAnswer::from_response(&resp));
                    }
                    resp.text
                }
            };
            votes.push(parse(&text));
        }
        let (label, count) = plurality(&votes).unwrap_or((None, 0));
        if label.is_none() {
            ans.error = Some("no answer could be read".into());
        }
        ans.label = label;
        ans.stable = count as f64 / n as f64 >= 1.0 - settings.max_instability;
        Ok(ans)
    }
}

#[derive(Debug, Clone, Default)]
struct LabelAnswer {
    label: Option<String>,
    stable: bool,
    requests: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    error: Option<String>,
}

impl LabelAnswer {
    fn stable_label(&self) -> Option<String> {
        self.label.clone().filter(|_| self.stable)
    }
}

/// The file name an item is analysed under: its id when that has an extension (PyT's
/// `examples/...py`), else the id with the language's extension (`BenchmarkTest00001.java`).
fn item_path(item: &EvalItem) -> String {
    let id = item.id.split(':').next().unwrap_or(&item.id);
    if Path::new(id).extension().is_some() {
        return id.to_string();
    }
    let ext = match item.language {
        Language::Python => "py",
        Language::Java => "java",
        Language::C => "c",
        Language::Cpp => "cpp",
        Language::JavaScript => "js",
        Language::TypeScript => "ts",
        Language::Solidity => "sol",
    };
    format!("{id}.{ext}")
}

/// The column of taint findings against a taint label. `keep`: which findings this column
/// reports (`None`: all, the analyzer's column).
fn taint_label_column(
    gold: &Gold,
    flows: &[TaintFlow],
    findings: &[Finding],
    keep: Option<&[bool]>,
) -> Column {
    let kept = |i: usize| keep.is_none_or(|k| k.get(i).copied().unwrap_or(false));
    match gold {
        Gold::TaintVerdict { vulnerable, .. } => {
            verdict_column((0..findings.len()).any(kept), *vulnerable)
        }
        Gold::SinkLines { bad, ok } => {
            let marks = SinkLineLabels {
                bad: bad.iter().copied().collect(),
                ok: ok.iter().copied().collect(),
            };
            let flagged: BTreeSet<usize> = findings
                .iter()
                .enumerate()
                .filter(|(i, _)| kept(*i))
                .map(|(_, f)| f.line)
                .collect();
            sink_lines_column(&marks, &flagged)
        }
        Gold::VulnCount { count } => {
            let found = match keep {
                None => flows.len(),
                Some(_) => flows
                    .iter()
                    .filter(|fl| {
                        findings
                            .iter()
                            .position(|f| f.rule == fl.rule && f.line == fl.sink.line)
                            .is_some_and(kept)
                    })
                    .count(),
            };
            count_column(found, *count)
        }
        _ => Column::default(),
    }
}

fn item_ids(q: &Question) -> Vec<u64> {
    match &q.reference {
        Reference::DataDependency { questions, .. } | Reference::Taint { questions, .. } => {
            questions.iter().map(|x| x.id).collect()
        }
        _ => Vec::new(),
    }
}

/// A failure that belongs to one request, not to the server: HTTP 400, 413 or 422 (for
/// example a prompt longer than the model's context). Every other failure (timeout,
/// connection, 5xx, rate limits after retries, authentication) stops further requests.
pub fn rejected_item(e: &LlmError) -> bool {
    matches!(
        e,
        LlmError::Http {
            status: 400 | 413 | 422,
            ..
        }
    )
}

/// The deterministic verdict of `crosscheck mutants` on two versions of a program (the function
/// enclosing the first changed line; proof, then sandboxed differential testing with a fixed
/// seed): `equivalent` for a proof or when the trials found no difference (likely
/// equivalent), `not_equivalent` for an executed counterexample, `None` when unknown.
pub fn executed_verdict(language: Language, a: &str, b: &str) -> Option<String> {
    use crate::analysis::equiv::Verdict;
    use crate::exec::equiv::EquivOptions;
    use crate::exec::mutants::{classify_mutant, MutantCase, Target};
    let ext = match language {
        Language::Java => "java",
        Language::C => "c",
        Language::Cpp => "cpp",
        Language::Python => "py",
        _ => return None,
    };
    let first_diff = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()))
        + 1;
    let case = MutantCase {
        id: "eval".into(),
        format: "eval",
        path: std::path::PathBuf::from(format!("item.{ext}")),
        original: a.to_string(),
        mutated: Ok(b.to_string()),
        target: Target::Lines {
            original: first_diff,
            mutated: first_diff,
        },
        expected: None,
        description: String::new(),
    };
    let mut opts = EquivOptions::default();
    opts.diff.trials = 100;
    match classify_mutant(&case, &opts).deterministic {
        Verdict::Equivalent | Verdict::BoundedEquivalent | Verdict::LikelyEquivalent => {
            Some(EQUIVALENT.to_string())
        }
        Verdict::NotEquivalent => Some(NOT_EQUIVALENT.to_string()),
        Verdict::Unknown => None,
    }
}

/// The normalisation proof over two whole files: the same named functions on both sides and
/// every pair proved equivalent ([`prove_program_equivalent`]). `false` means "no proof", not
/// "different".
pub fn prove_files_equivalent(language: Language, a: &str, b: &str, cancel: &Cancel) -> bool {
    let fa = ParsedFile::parse_with_cancel(language, a.to_string(), cancel);
    let fb = ParsedFile::parse_with_cancel(language, b.to_string(), cancel);
    let (funcs_a, funcs_b) = (collect_functions(&fa), collect_functions(&fb));
    let names = |fs: &[crate::syntax::functions::Function<'_>]| -> Vec<String> {
        fs.iter().map(|f| f.simple_name.clone()).collect()
    };
    if funcs_a.is_empty() || names(&funcs_a) != names(&funcs_b) {
        return false;
    }
    funcs_a.iter().zip(&funcs_b).all(|(x, y)| {
        !cancel.is_cancelled() && prove_program_equivalent((&fa, x), (&fb, y), cancel) == Ok(true)
    })
}

/// Adds an engine outcome's requests and tokens to `r` (the jury's own record repeats its
/// members' and is left out; cached samples cost nothing).
fn add_usage(r: &mut ItemResult, outcome: &CheckOutcome) {
    for rec in outcome
        .records
        .iter()
        .filter(|x| !x.model.starts_with("jury("))
    {
        let sent = rec.samples.iter().filter(|s| !s.from_cache).count() as u64;
        r.requests += sent;
        if sent > 0 {
            r.prompt_tokens += rec.prompt_tokens;
            r.completion_tokens += rec.completion_tokens;
        }
    }
}
