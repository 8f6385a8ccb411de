//! Background LLM cross-checks: one question per job (a taint finding's flow, or one task
//! about a function), answered by a [`Checker`] (the cross-check engine in
//! [`super::checks`]).
//!
//! The server hands the scheduler the jobs of a document after every deterministic
//! analysis ([`Scheduler::update`]); the scheduler never blocks and never waits for the
//! network. Per job:
//!
//! * **Content key.** A job's key hashes the checker identity (model, settings) and the
//!   question's input hash (the code units numbered from 1, the question, the context), so
//!   line numbers in the file are not part of it: moving a function (code added above it)
//!   does not re-ask.
//! * **Cache.** The checker answers from the engine's answer cache ([`Checker::cached`],
//!   keyed exactly as in `crosscheck ask`) when every sample is there; no request is sent and
//!   no debounce applies.
//! * **Debounce.** A new key waits `debounce` before it is sent; an edit in that window
//!   replaces the job, so typing in a function sends one request when the typing pauses.
//! * **Cancellation.** When a function's key changes (its text changed again) or the function
//!   disappears, its running check is aborted: the future, and with it the HTTP exchange, is
//!   dropped.
//! * **Staleness.** A result carries the document version and key it was computed for. When it
//!   arrives, it is kept only if the function still has that key (its text is unchanged, even
//!   if the document changed elsewhere); otherwise it is dropped as stale.
//! * **Concurrency.** At most `max_concurrent` checks talk to the LLM at once.
//! * **Retries.** A check that fails transiently (unreachable, too slow, rate-limited, HTTP
//!   5xx) is repeated up to [`RETRIES`] times with doubling delays from [`RETRY_FIRST_DELAY`],
//!   while its function is unchanged; the stats count failures since the last success, so the
//!   status can say the LLM is failing.
//! * **Telemetry.** With a record sink ([`Scheduler::with_records`]), every answered request
//!   leaves one `CrossCheckRecord` (stamped with the server's clock); cache hits leave none.
//!
//! Results are reported through a callback so the server can merge them into diagnostics.
//! Request handlers read [`Scheduler::state`]: a finished result, "pending", a failure, or
//! "unavailable" when no LLM is configured.

use super::engine::stable_hash;
use crate::crosscheck::facts::Question;
use crate::crosscheck::hash::sha256_fields;
use crate::crosscheck::record::{CrossCheckRecord, RecordSink, Tier};
use crate::crosscheck::task::Task;
use crate::crosscheck::tier::LlmStance;
use serde::Serialize;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// A boxed, `Send`, `'static` future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a job is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A deterministic taint finding, by its flow key (see `diagnostics::flow_key`).
    Finding { key: String },
    /// A function of the document, by its id (`engine::FunctionFacts::id`).
    Function { id: String },
}

/// One question to ask in the background.
#[derive(Debug, Clone)]
pub struct CheckJob {
    /// Document URI.
    pub doc: String,
    /// Document version the job was made from.
    pub version: i32,
    /// Unique within the document (`flow:<key>`, `fn:<id>:<task>`).
    pub slot: String,
    pub subject: Subject,
    /// A short label for logs (`command-injection at line 7`, `cfg of f`).
    pub label: String,
    /// The prepared question (prompt inputs and the analyzer's reference).
    pub question: Arc<Question>,
}

impl CheckJob {
    pub fn task(&self) -> Task {
        self.question.inputs.task
    }

    /// The hash of everything the question shows the model.
    pub fn content_hash(&self) -> String {
        self.question.inputs.input_hash()
    }

    /// The content key (see the module docs).
    pub fn key(&self, checker_id: &str) -> String {
        format!(
            "lsp-check:{}",
            stable_hash(&[checker_id, &self.content_hash()])
        )
    }
}

/// One model's answer to a job's question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelVerdict {
    pub model: String,
    /// `yes` / `no` / `unknown` for a flow question; `pass` / `fail` for a function task.
    pub verdict: String,
    pub stable: bool,
    pub samples: usize,
    pub instability: f64,
    /// The model's reasoning (unverified free text: shown escaped, never as Markdown).
    pub reasoning: Option<String>,
    pub errors: Vec<String>,
}

/// The result of one cross-check, as the server keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOutcome {
    /// The task name (`taint`, `cfg`, `call_graph`, ...).
    pub task: String,
    /// The (jury's) verdict: `yes` / `no` / `unknown` for a flow question, `pass` / `fail`
    /// for a function task.
    pub verdict: String,
    /// What the answer means for the analyzer's finding or facts (decides the tier).
    pub stance: LlmStance,
    /// The tier of the analyzer's finding or facts given this answer.
    pub tier: Tier,
    /// The model id, or `jury(a, b)`.
    pub model: String,
    pub samples: usize,
    /// Share of samples disagreeing with the majority.
    pub instability: f64,
    pub models: Vec<ModelVerdict>,
    /// `id@version` of the prompt template.
    pub template: String,
    /// Every sample came from the answer cache.
    pub cached: bool,
    /// Layer-1 scores (function tasks) or the agreement score (flows).
    pub scores: BTreeMap<String, f64>,
    /// The analyzer's facts the answer does not contain (function tasks).
    pub missed: Vec<String>,
    /// Claims beyond the analyzer's facts, with their tiers (`llm-only`, `refuted`).
    pub claims: Vec<(String, Tier)>,
    pub errors: Vec<String>,
    /// The telemetry records of a freshly answered check (never cached, never serialised);
    /// the scheduler stamps them and hands them to the record sink.
    #[serde(skip)]
    pub records: Vec<CrossCheckRecord>,
}

/// Why a check produced no outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// No LLM configured.
    NotConfigured(String),
    /// The LLM could not be reached (connection refused).
    Unreachable(String),
    /// The LLM was reached but did not answer in time.
    Slow(String),
    /// A failure a later identical request may not meet (rate limit, HTTP 5xx).
    Transient(String),
    /// Anything else (bad answer, budget, other HTTP errors).
    Failed(String),
}

impl CheckError {
    /// Worth retrying later with the same request.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            CheckError::Unreachable(_) | CheckError::Slow(_) | CheckError::Transient(_)
        )
    }
}

/// Retries of a check that failed transiently, and the delay before the first; each later
/// delay doubles, up to [`RETRY_MAX_DELAY`].
pub const RETRIES: u32 = 4;
pub const RETRY_FIRST_DELAY: Duration = Duration::from_secs(2);
pub const RETRY_MAX_DELAY: Duration = Duration::from_secs(60);

/// The delay before retry `n` (0-based) when the first is `first`.
pub fn retry_delay(first: Duration, n: u32) -> Duration {
    first.saturating_mul(1u32 << n.min(16)).min(RETRY_MAX_DELAY)
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::NotConfigured(m) => write!(f, "LLM not configured: {m}"),
            CheckError::Unreachable(m) => write!(f, "LLM unreachable: {m}"),
            CheckError::Slow(m) => write!(f, "LLM too slow: {m}"),
            CheckError::Transient(m) => write!(f, "LLM temporarily failing: {m}"),
            CheckError::Failed(m) => write!(f, "LLM check failed: {m}"),
        }
    }
}

/// Something that answers a job's question (the cross-check engine, or a test double).
pub trait Checker: Send + Sync {
    /// Identity entering the job key: models and settings.
    fn id(&self) -> String;
    /// The outcome when every sample is in the answer cache (no request made, no waiting).
    fn cached(&self, job: &CheckJob) -> Option<CheckOutcome>;
    /// Asks the question. Dropping the future must abort the work.
    fn check(&self, job: CheckJob) -> BoxFuture<Result<CheckOutcome, CheckError>>;
}

/// What a handler can know about a function's check without waiting.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckState {
    /// No LLM (not configured, disabled, or the file is excluded); the string says why.
    Unavailable(String),
    /// Queued, debouncing, or running.
    Pending,
    Done(Arc<CheckOutcome>),
    Failed(String),
}

/// A finished outcome as stored.
#[derive(Debug, Clone)]
pub struct StoredOutcome {
    pub version: i32,
    pub content_hash: String,
    pub outcome: Arc<CheckOutcome>,
}

/// Sent to the server when a check finishes.
#[derive(Debug, Clone)]
pub enum SchedulerEvent {
    /// A fresh outcome for a function of `doc` was stored.
    Result { doc: String },
    /// A check failed.
    Failed { doc: String, error: CheckError },
}

/// Counters, for tests, the benchmark and the status request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SchedulerStats {
    /// Checks handed to the checker (LLM requests).
    pub requests: u64,
    /// Jobs answered from the answer cache (no request).
    pub cache_hits: u64,
    /// Jobs aborted because their function changed or vanished.
    pub cancelled: u64,
    /// Results dropped because the function changed while they were computed.
    pub stale_dropped: u64,
    pub completed: u64,
    pub failed: u64,
    /// Jobs debouncing, waiting for a slot, or running.
    pub pending: u64,
    /// Telemetry records handed to the record sink (one per answered LLM request).
    pub recorded: u64,
    /// Requests repeated after a transient failure (see [`RETRIES`]).
    pub retries: u64,
    /// Checks that failed since the last one that succeeded: more than zero means the LLM is
    /// failing right now (the status says so instead of "LLM on").
    pub consecutive_failures: u64,
}

enum EntryState {
    Waiting,
    Done(Arc<CheckOutcome>),
    Failed(String),
}

struct Entry {
    key: String,
    /// The question asked (for commands that re-validate an answer against it).
    question: Arc<Question>,
    /// [`CheckJob::content_hash`] of the question the entry was made for.
    content_hash: String,
    version: i32,
    state: EntryState,
    task: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Inner {
    /// (document, slot) -> entry.
    entries: BTreeMap<(String, String), Entry>,
    stats: SchedulerStats,
}

type Notify = Arc<dyn Fn(SchedulerEvent) + Send + Sync>;

/// The per-function LLM scheduler. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Mutex<Inner>>,
    checker: Option<Arc<dyn Checker>>,
    limit: Arc<Semaphore>,
    notify: Notify,
    unavailable: String,
    records: Option<Arc<dyn RecordSink>>,
    clock: fn() -> i64,
    retry_first_delay: Duration,
}

fn no_clock() -> i64 {
    0
}

fn lock(m: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Scheduler {
    /// `checker: None` means no LLM; `unavailable` then says why (shown in hovers).
    pub fn new(
        checker: Option<Arc<dyn Checker>>,
        max_concurrent: usize,
        unavailable: impl Into<String>,
        notify: impl Fn(SchedulerEvent) + Send + Sync + 'static,
    ) -> Scheduler {
        Scheduler {
            inner: Arc::new(Mutex::new(Inner::default())),
            checker,
            limit: Arc::new(Semaphore::new(max_concurrent.max(1))),
            notify: Arc::new(notify),
            unavailable: unavailable.into(),
            records: None,
            clock: no_clock,
            retry_first_delay: RETRY_FIRST_DELAY,
        }
    }

    /// Sends the telemetry record of every answered check to `sink`, stamped with `clock`
    /// (seconds since the Unix epoch). Answers served from a cache are not new checks and
    /// leave no record.
    pub fn with_records(mut self, sink: Option<Arc<dyn RecordSink>>, clock: fn() -> i64) -> Self {
        self.records = sink;
        self.clock = clock;
        self
    }

    /// The delay before the first retry of a transient failure (tests shorten it).
    pub fn with_retry_delay(mut self, first: Duration) -> Self {
        self.retry_first_delay = first;
        self
    }

    pub fn is_available(&self) -> bool {
        self.checker.is_some()
    }

    /// Why no LLM is available (meaningful when [`Scheduler::is_available`] is false).
    pub fn unavailable_reason(&self) -> &str {
        &self.unavailable
    }

    /// The checker's identity, if any.
    pub fn checker_id(&self) -> Option<String> {
        self.checker.as_ref().map(|c| c.id())
    }

    /// Replaces the document's set of jobs. Jobs whose key is unchanged keep their result or
    /// running check; changed ones are cancelled and re-queued; vanished ones are cancelled.
    /// An empty `jobs` cancels everything for the document. Must be called inside a tokio
    /// runtime. Never blocks on the network.
    pub fn update(&self, doc: &str, jobs: Vec<CheckJob>, debounce: Duration) {
        let Some(checker) = self.checker.clone() else {
            return;
        };
        let checker_id = checker.id();
        let mut served = false;
        let mut inner = lock(&self.inner);
        let wanted: std::collections::BTreeSet<String> =
            jobs.iter().map(|j| j.slot.clone()).collect();
        // Cancel functions that vanished.
        let gone: Vec<(String, String)> = inner
            .entries
            .range((doc.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == doc)
            .filter(|((_, f), _)| !wanted.contains(f))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            if let Some(e) = inner.entries.remove(&k) {
                if let Some(t) = e.task {
                    t.abort();
                    inner.stats.cancelled += 1;
                    inner.stats.pending = inner.stats.pending.saturating_sub(1);
                }
            }
        }
        for job in jobs {
            let key = job.key(&checker_id);
            let slot = (doc.to_string(), job.slot.clone());
            if let Some(e) = inner.entries.get_mut(&slot) {
                if e.key == key {
                    e.version = job.version;
                    continue;
                }
            }
            if let Some(old) = inner.entries.remove(&slot) {
                if let Some(t) = old.task {
                    t.abort();
                    inner.stats.cancelled += 1;
                    inner.stats.pending = inner.stats.pending.saturating_sub(1);
                }
            }
            // Answered from the answer cache: no request, no debounce.
            if let Some(outcome) = checker.cached(&job) {
                inner.stats.cache_hits += 1;
                served = true;
                inner.entries.insert(
                    slot,
                    Entry {
                        key,
                        question: Arc::clone(&job.question),
                        content_hash: job.content_hash(),
                        version: job.version,
                        state: EntryState::Done(Arc::new(outcome)),
                        task: None,
                    },
                );
                continue;
            }
            let version = job.version;
            let hash = job.content_hash();
            let question = Arc::clone(&job.question);
            let handle = self.spawn_check(Arc::clone(&checker), job, key.clone(), debounce);
            inner.stats.pending += 1;
            inner.entries.insert(
                slot,
                Entry {
                    key,
                    question,
                    content_hash: hash,
                    version,
                    state: EntryState::Waiting,
                    task: Some(handle),
                },
            );
        }
        drop(inner);
        // Answers served from the cache are shown at once.
        if served {
            (self.notify)(SchedulerEvent::Result {
                doc: doc.to_string(),
            });
        }
    }

    fn spawn_check(
        &self,
        checker: Arc<dyn Checker>,
        job: CheckJob,
        key: String,
        debounce: Duration,
    ) -> JoinHandle<()> {
        let inner = Arc::clone(&self.inner);
        let limit = Arc::clone(&self.limit);
        let notify = Arc::clone(&self.notify);
        let records = self.records.clone();
        let clock = self.clock;
        let first_delay = self.retry_first_delay;
        tokio::spawn(async move {
            if !debounce.is_zero() {
                tokio::time::sleep(debounce).await;
            }
            let Ok(_permit) = limit.acquire_owned().await else {
                return;
            };
            let doc = job.doc.clone();
            let slot = (job.doc.clone(), job.slot.clone());
            {
                let mut g = lock(&inner);
                match g.entries.get(&slot) {
                    Some(e) if e.key == key => g.stats.requests += 1,
                    _ => return,
                }
            }
            let mut attempt = 0u32;
            let mut result = loop {
                let r = checker.check(job.clone()).await;
                match &r {
                    Err(e) if e.is_transient() && attempt < RETRIES => {
                        tracing::info!(
                            "{e}; retrying {} in {:?}",
                            job.label,
                            retry_delay(first_delay, attempt)
                        );
                        tokio::time::sleep(retry_delay(first_delay, attempt)).await;
                        attempt += 1;
                        let mut g = lock(&inner);
                        match g.entries.get(&slot) {
                            Some(e) if e.key == key => {
                                g.stats.retries += 1;
                                g.stats.requests += 1;
                            }
                            _ => return,
                        }
                    }
                    _ => break r,
                }
            };
            // Telemetry: every answered request is a cross-check, even when its result turns
            // out stale below.
            let fresh: Vec<CrossCheckRecord> = result
                .as_mut()
                .map(|o| std::mem::take(&mut o.records))
                .unwrap_or_default();
            if let (Some(sink), false) = (records, fresh.is_empty()) {
                let now = clock();
                let stamped: Vec<CrossCheckRecord> = fresh
                    .into_iter()
                    .map(|mut r| {
                        r.timestamp = now;
                        r.id = sha256_fields([
                            key.as_str(),
                            r.model.as_str(),
                            r.id.as_str(),
                            &now.to_string(),
                        ]);
                        r
                    })
                    .collect();
                let written = tokio::task::spawn_blocking(move || {
                    stamped
                        .iter()
                        .map(|r| sink.record(r).map(|_| 1u64).map_err(|e| e.to_string()))
                        .collect::<Vec<_>>()
                })
                .await;
                match written {
                    Ok(results) => {
                        for r in results {
                            match r {
                                Ok(n) => lock(&inner).stats.recorded += n,
                                Err(e) => tracing::warn!("cannot store a cross-check record: {e}"),
                            }
                        }
                    }
                    Err(e) => tracing::warn!("cannot store a cross-check record: {e}"),
                }
            }
            let event = {
                let mut g = lock(&inner);
                let current = g.entries.get(&slot).map(|e| e.key == key);
                if current != Some(true) {
                    g.stats.stale_dropped += 1;
                    return;
                }
                g.stats.pending = g.stats.pending.saturating_sub(1);
                match result {
                    Ok(outcome) => {
                        g.stats.completed += 1;
                        g.stats.consecutive_failures = 0;
                        let outcome = Arc::new(outcome);
                        if let Some(e) = g.entries.get_mut(&slot) {
                            e.state = EntryState::Done(outcome);
                            e.task = None;
                        }
                        SchedulerEvent::Result { doc }
                    }
                    Err(error) => {
                        g.stats.failed += 1;
                        g.stats.consecutive_failures += 1;
                        if let Some(e) = g.entries.get_mut(&slot) {
                            e.state = EntryState::Failed(error.to_string());
                            e.task = None;
                        }
                        SchedulerEvent::Failed { doc, error }
                    }
                }
            };
            notify(event);
        })
    }

    /// Cancels and forgets everything about a document (closed, excluded).
    pub fn forget(&self, doc: &str) {
        self.update_empty(doc);
    }

    fn update_empty(&self, doc: &str) {
        let mut inner = lock(&self.inner);
        let keys: Vec<(String, String)> = inner
            .entries
            .range((doc.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == doc)
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            if let Some(e) = inner.entries.remove(&k) {
                if let Some(t) = e.task {
                    t.abort();
                    inner.stats.cancelled += 1;
                    inner.stats.pending = inner.stats.pending.saturating_sub(1);
                }
            }
        }
    }

    /// What is known about a job slot whose current question has `content_hash`, without
    /// waiting. A result for another question (the code changed) is not shown: its re-check
    /// is on its way (pending).
    pub fn state(&self, doc: &str, slot: &str, content_hash: &str) -> CheckState {
        self.state_if(doc, slot, |e| e.content_hash == content_hash)
    }

    /// What is known about a job slot, provided its job was (re)made from document
    /// `version` (else the question may have changed: pending while the LLM works, or not
    /// asked).
    pub fn state_at(&self, doc: &str, slot: &str, version: i32) -> CheckState {
        self.state_if(doc, slot, |e| e.version == version)
    }

    fn state_if(&self, doc: &str, slot: &str, current: impl Fn(&Entry) -> bool) -> CheckState {
        if self.checker.is_none() {
            return CheckState::Unavailable(self.unavailable.clone());
        }
        let inner = lock(&self.inner);
        match inner.entries.get(&(doc.to_string(), slot.to_string())) {
            None => CheckState::Unavailable("not asked".to_string()),
            Some(e) if !current(e) => CheckState::Pending,
            Some(e) => match &e.state {
                EntryState::Waiting => CheckState::Pending,
                EntryState::Done(o) => CheckState::Done(Arc::clone(o)),
                EntryState::Failed(m) => CheckState::Failed(m.clone()),
            },
        }
    }

    /// The question of a job slot.
    pub fn question(&self, doc: &str, slot: &str) -> Option<Arc<Question>> {
        lock(&self.inner)
            .entries
            .get(&(doc.to_string(), slot.to_string()))
            .map(|e| Arc::clone(&e.question))
    }

    /// Finished outcomes of a document by slot, with the document version they were last
    /// confirmed current for and the content hash of the question they answer.
    pub fn outcomes(&self, doc: &str) -> BTreeMap<String, StoredOutcome> {
        let inner = lock(&self.inner);
        inner
            .entries
            .range((doc.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == doc)
            .filter_map(|((_, f), e)| match &e.state {
                EntryState::Done(o) => Some((
                    f.clone(),
                    StoredOutcome {
                        version: e.version,
                        content_hash: e.content_hash.clone(),
                        outcome: Arc::clone(o),
                    },
                )),
                _ => None,
            })
            .collect()
    }

    /// Aborts every running check (shutdown).
    pub fn cancel_all(&self) {
        let mut inner = lock(&self.inner);
        let mut n = 0;
        for e in inner.entries.values_mut() {
            if let Some(t) = e.task.take() {
                t.abort();
                n += 1;
            }
        }
        inner.stats.cancelled += n;
        inner.stats.pending = 0;
    }

    pub fn stats(&self) -> SchedulerStats {
        lock(&self.inner).stats
    }
}
