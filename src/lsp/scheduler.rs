//! Background LLM cross-checks, one per function.
//!
//! The server hands the scheduler the functions of a document after every deterministic
//! analysis ([`Scheduler::update`]); the scheduler never blocks and never waits for the
//! network. Per function:
//!
//! * **Content key.** A job's key hashes the checker identity (model, template version), the
//!   language, the function's text and the signatures of its callees. Line numbers are not
//!   part of it: moving a function (code added above it) does not re-check it.
//! * **Cache.** A key already answered is served from memory, then from the persistent
//!   [`CacheBackend`] if one is wired in; no request is sent.
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

use super::engine::{stable_hash, CfgSummary};
use crate::crosscheck::hash::sha256_fields;
use crate::crosscheck::record::{CacheBackend, CrossCheckRecord, RecordSink};
use crate::syntax::Language;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// A boxed, `Send`, `'static` future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One function to cross-check.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionJob {
    /// Document URI.
    pub doc: String,
    /// Document version the job was made from.
    pub version: i32,
    pub language: Language,
    /// Function id within the document (see `engine::FunctionFacts::id`).
    pub fn_id: String,
    pub function: String,
    pub signature: String,
    /// 1-based line of the function's first line in the document (not part of the key).
    pub start_line: usize,
    /// The function's text.
    pub text: String,
    /// Signatures of the functions it calls (`name(sig)`), sorted.
    pub callees: Vec<String>,
    /// The deterministic facts the LLM's answer is compared with.
    pub analyzer: CfgSummary,
}

impl FunctionJob {
    /// The content key (see the module docs).
    pub fn key(&self, checker_id: &str) -> String {
        let callees = self.callees.join("\n");
        format!(
            "lsp-check:{}",
            stable_hash(&[checker_id, self.language.name(), &self.text, &callees])
        )
    }
}

/// The hash that identifies a function's text in [`Scheduler::state`] and
/// [`Scheduler::outcomes`].
pub fn text_hash(text: &str) -> String {
    stable_hash(&[text])
}

/// The LLM's verdict on the deterministic facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Agree,
    Disagree,
    Unknown,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "disagree",
            Verdict::Unknown => "unknown",
        }
    }
}

/// A claim the LLM made about a line of the function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmClaim {
    /// 1-based line relative to the function's first line.
    pub line: usize,
    pub rule: String,
    pub message: String,
}

/// The result of one cross-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub verdict: Verdict,
    pub model: String,
    pub samples: u32,
    /// Share of samples disagreeing with the majority.
    pub instability: f64,
    /// The LLM's explanation of the function (unverified text).
    pub explanation: Option<String>,
    /// A one-line comparison of the LLM's answer with the analyzer's facts.
    pub comparison: Option<String>,
    /// Findings the LLM claims.
    pub claims: Vec<LlmClaim>,
    /// The telemetry record of a freshly answered check (never cached, never serialised);
    /// the scheduler stamps it and hands it to the record sink.
    #[serde(skip)]
    pub record: Option<CrossCheckRecord>,
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

/// Something that cross-checks one function (the cross-check core, or a test double).
pub trait FunctionChecker: Send + Sync {
    /// Identity entering the cache key: model, template id and version.
    fn id(&self) -> String;
    /// Checks one function. Dropping the future must abort the work.
    fn check(&self, job: FunctionJob) -> BoxFuture<Result<CheckOutcome, CheckError>>;
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
    pub text_hash: String,
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
    /// Jobs answered from the memory or persistent cache.
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
    /// [`text_hash`] of the function text the entry was made for.
    text_hash: String,
    version: i32,
    state: EntryState,
    task: Option<JoinHandle<()>>,
}

const MEMORY_CACHE_ENTRIES: usize = 20_000;

#[derive(Default)]
struct Inner {
    /// (document, function id) -> entry.
    entries: BTreeMap<(String, String), Entry>,
    memory: BTreeMap<String, Arc<CheckOutcome>>,
    memory_order: VecDeque<String>,
    stats: SchedulerStats,
}

impl Inner {
    fn remember(&mut self, key: &str, outcome: Arc<CheckOutcome>) {
        if self.memory.insert(key.to_string(), outcome).is_none() {
            self.memory_order.push_back(key.to_string());
            while self.memory_order.len() > MEMORY_CACHE_ENTRIES {
                if let Some(old) = self.memory_order.pop_front() {
                    self.memory.remove(&old);
                }
            }
        }
    }
}

type Notify = Arc<dyn Fn(SchedulerEvent) + Send + Sync>;

/// The per-function LLM scheduler. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Mutex<Inner>>,
    checker: Option<Arc<dyn FunctionChecker>>,
    cache: Option<Arc<dyn CacheBackend>>,
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
        checker: Option<Arc<dyn FunctionChecker>>,
        cache: Option<Arc<dyn CacheBackend>>,
        max_concurrent: usize,
        unavailable: impl Into<String>,
        notify: impl Fn(SchedulerEvent) + Send + Sync + 'static,
    ) -> Scheduler {
        Scheduler {
            inner: Arc::new(Mutex::new(Inner::default())),
            checker,
            cache,
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

    /// Replaces the document's set of functions to check. Functions whose key is unchanged
    /// keep their result or running check; changed ones are cancelled and re-queued; vanished
    /// ones are cancelled. An empty `jobs` cancels everything for the document. Must be called
    /// inside a tokio runtime. Never blocks on the network.
    pub fn update(&self, doc: &str, jobs: Vec<FunctionJob>, debounce: Duration) {
        let Some(checker) = self.checker.clone() else {
            return;
        };
        let checker_id = checker.id();
        let mut inner = lock(&self.inner);
        let wanted: std::collections::BTreeSet<String> =
            jobs.iter().map(|j| j.fn_id.clone()).collect();
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
            let slot = (doc.to_string(), job.fn_id.clone());
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
            // Served from the memory cache, then the persistent one.
            let cached = inner.memory.get(&key).cloned().or_else(|| {
                self.cache
                    .as_ref()
                    .and_then(|c| c.get(&key))
                    .and_then(|s| serde_json::from_str::<CheckOutcome>(&s).ok())
                    .map(Arc::new)
            });
            if let Some(outcome) = cached {
                inner.stats.cache_hits += 1;
                inner.remember(&key, Arc::clone(&outcome));
                inner.entries.insert(
                    slot,
                    Entry {
                        key,
                        text_hash: text_hash(&job.text),
                        version: job.version,
                        state: EntryState::Done(outcome),
                        task: None,
                    },
                );
                continue;
            }
            let version = job.version;
            let hash = text_hash(&job.text);
            let handle = self.spawn_check(Arc::clone(&checker), job, key.clone(), debounce);
            inner.stats.pending += 1;
            inner.entries.insert(
                slot,
                Entry {
                    key,
                    text_hash: hash,
                    version,
                    state: EntryState::Waiting,
                    task: Some(handle),
                },
            );
        }
    }

    fn spawn_check(
        &self,
        checker: Arc<dyn FunctionChecker>,
        job: FunctionJob,
        key: String,
        debounce: Duration,
    ) -> JoinHandle<()> {
        let inner = Arc::clone(&self.inner);
        let limit = Arc::clone(&self.limit);
        let cache = self.cache.clone();
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
            let slot = (job.doc.clone(), job.fn_id.clone());
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
                            job.function,
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
            let record = result.as_mut().ok().and_then(|o| o.record.take());
            if let (Some(sink), Some(mut r)) = (records, record) {
                r.timestamp = clock();
                r.id = sha256_fields([key.as_str(), r.model.as_str(), &r.timestamp.to_string()]);
                let written = tokio::task::spawn_blocking(move || sink.record(&r)).await;
                match written {
                    Ok(Ok(())) => lock(&inner).stats.recorded += 1,
                    Ok(Err(e)) => tracing::warn!("cannot store a cross-check record: {e}"),
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
                        g.remember(&key, Arc::clone(&outcome));
                        if let Some(e) = g.entries.get_mut(&slot) {
                            e.state = EntryState::Done(Arc::clone(&outcome));
                            e.task = None;
                        }
                        if let Some(c) = &cache {
                            if let Ok(json) = serde_json::to_string(&*outcome) {
                                c.put(&key, &json);
                            }
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

    /// What is known about a function whose current text is `text`, without waiting. A
    /// result for another text of the function is not shown: the function changed and its
    /// re-check is on its way (pending).
    pub fn state(&self, doc: &str, fn_id: &str, text: &str) -> CheckState {
        if self.checker.is_none() {
            return CheckState::Unavailable(self.unavailable.clone());
        }
        let inner = lock(&self.inner);
        match inner.entries.get(&(doc.to_string(), fn_id.to_string())) {
            None => CheckState::Unavailable("not scheduled for this function".to_string()),
            Some(e) if e.text_hash != text_hash(text) => CheckState::Pending,
            Some(e) => match &e.state {
                EntryState::Waiting => CheckState::Pending,
                EntryState::Done(o) => CheckState::Done(Arc::clone(o)),
                EntryState::Failed(m) => CheckState::Failed(m.clone()),
            },
        }
    }

    /// Finished outcomes of a document by function id, with the document version they were
    /// last confirmed current for and the [`text_hash`] of the text they are about.
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
                        text_hash: e.text_hash.clone(),
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
