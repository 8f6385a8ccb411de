//! The background LLM scheduler, rule by rule (debounce, cancellation, cache, staleness,
//! concurrency), with a probe checker and with the interim checker over `llm::FakeClient`.
//! Time is paused: sleeps advance instantly and deterministically.

use crosscheck::crosscheck::record::CacheBackend;
use crosscheck::llm::{FakeClient, FakeReply, LlmError};
use crosscheck::lsp::checker::LlmChecker;
use crosscheck::lsp::engine::CfgSummary;
use crosscheck::lsp::scheduler::{
    BoxFuture, CheckError, CheckOutcome, CheckState, FunctionChecker, FunctionJob, Scheduler,
    SchedulerEvent, Verdict, RETRIES,
};
use crosscheck::syntax::Language;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Copy)]
enum Mode {
    Answer,
    Hang,
    Fail,
}

struct Probe {
    mode: Mode,
    calls: Mutex<Vec<FunctionJob>>,
    dropped: Arc<AtomicUsize>,
}

struct DropGuard(Arc<AtomicUsize>);
impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Probe {
    fn new(mode: Mode) -> Arc<Probe> {
        Arc::new(Probe {
            mode,
            calls: Mutex::new(Vec::new()),
            dropped: Arc::new(AtomicUsize::new(0)),
        })
    }
    fn texts(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|j| j.text.clone())
            .collect()
    }
}

impl FunctionChecker for Probe {
    fn id(&self) -> String {
        "probe@1".to_string()
    }
    fn check(&self, job: FunctionJob) -> BoxFuture<Result<CheckOutcome, CheckError>> {
        self.calls.lock().unwrap().push(job.clone());
        let guard = DropGuard(Arc::clone(&self.dropped));
        let mode = self.mode;
        Box::pin(async move {
            let _g = guard;
            match mode {
                Mode::Hang => std::future::pending().await,
                Mode::Fail => Err(CheckError::Unreachable("connection refused".into())),
                Mode::Answer => Ok(CheckOutcome {
                    verdict: Verdict::Agree,
                    model: "probe".into(),
                    samples: 1,
                    instability: 0.0,
                    explanation: Some(format!("explains {}", job.function)),
                    comparison: None,
                    claims: vec![],
                    record: None,
                }),
            }
        })
    }
}

fn job(doc: &str, f: &str, version: i32, text: &str) -> FunctionJob {
    FunctionJob {
        doc: doc.into(),
        version,
        language: Language::Python,
        fn_id: format!("{f}()"),
        function: f.into(),
        signature: "()".into(),
        start_line: 1,
        text: text.into(),
        callees: vec![],
        analyzer: CfgSummary::default(),
    }
}

type Events = Arc<Mutex<Vec<SchedulerEvent>>>;

fn scheduler(
    checker: Arc<dyn FunctionChecker>,
    max: usize,
    cache: Option<Arc<dyn CacheBackend>>,
) -> (Scheduler, Events) {
    let events: Events = Arc::default();
    let e = Arc::clone(&events);
    let s = Scheduler::new(Some(checker), cache, max, "", move |ev| {
        e.lock().unwrap().push(ev)
    });
    (s, events)
}

const D: Duration = Duration::from_millis(100);

async fn settle() {
    // Let spawned tasks run (time is paused: sleeping advances the clock).
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn debounce_coalesces_rapid_edits_of_a_function_into_one_check() {
    let probe = Probe::new(Mode::Answer);
    let (s, events) = scheduler(probe.clone(), 4, None);
    for v in 1..=5 {
        s.update(
            "d",
            vec![job("d", "f", v, &format!("def f(): return {v}"))],
            D,
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    settle().await;
    assert_eq!(probe.texts(), vec!["def f(): return 5".to_string()]);
    let st = s.stats();
    assert_eq!(
        (st.requests, st.completed, st.cancelled, st.pending),
        (1, 1, 4, 0)
    );
    assert_eq!(events.lock().unwrap().len(), 1);
    assert!(
        matches!(s.state("d", "f()", "def f(): return 5"), CheckState::Done(o) if o.explanation.as_deref() == Some("explains f"))
    );
}

#[tokio::test(start_paused = true)]
async fn an_unchanged_function_keeps_its_running_check_and_result_across_versions() {
    let probe = Probe::new(Mode::Answer);
    let (s, _) = scheduler(probe.clone(), 4, None);
    s.update("d", vec![job("d", "f", 1, "def f(): pass")], D);
    s.update("d", vec![job("d", "f", 2, "def f(): pass")], D);
    settle().await;
    assert_eq!(probe.texts().len(), 1);
    s.update("d", vec![job("d", "f", 3, "def f(): pass")], D);
    settle().await;
    assert_eq!(probe.texts().len(), 1, "no new request for the same text");
    let outcomes = s.outcomes("d");
    assert_eq!(
        outcomes["f()"].version, 3,
        "the result is tagged with the latest version it is current for"
    );
}

#[tokio::test(start_paused = true)]
async fn changing_a_function_cancels_its_running_check() {
    let probe = Probe::new(Mode::Hang);
    let (s, _) = scheduler(probe.clone(), 4, None);
    s.update("d", vec![job("d", "f", 1, "v1")], Duration::ZERO);
    settle().await;
    assert_eq!(s.stats().requests, 1);
    assert_eq!(s.state("d", "f()", "v1"), CheckState::Pending);
    s.update("d", vec![job("d", "f", 2, "v2")], Duration::ZERO);
    settle().await;
    assert_eq!(
        probe.dropped.load(Ordering::SeqCst),
        1,
        "the first check's future was dropped"
    );
    assert_eq!(s.stats().cancelled, 1);
    assert_eq!(probe.texts(), vec!["v1".to_string(), "v2".to_string()]);
}

#[tokio::test(start_paused = true)]
async fn vanished_functions_and_forgotten_documents_are_cancelled() {
    let probe = Probe::new(Mode::Hang);
    let (s, _) = scheduler(probe.clone(), 4, None);
    s.update(
        "d",
        vec![job("d", "f", 1, "f"), job("d", "g", 1, "g")],
        Duration::ZERO,
    );
    settle().await;
    s.update("d", vec![job("d", "f", 2, "f")], Duration::ZERO);
    settle().await;
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 1, "g vanished");
    s.forget("d");
    settle().await;
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 2);
    assert_eq!(s.stats().pending, 0);
}

#[derive(Default)]
struct MemoryCache(Mutex<BTreeMap<String, String>>);
impl CacheBackend for MemoryCache {
    fn get(&self, key: &str) -> Option<String> {
        self.0.lock().unwrap().get(key).cloned()
    }
    fn put(&self, key: &str, value: &str) {
        self.0.lock().unwrap().insert(key.into(), value.into());
    }
}

#[tokio::test(start_paused = true)]
async fn the_persistent_cache_serves_known_function_text_without_a_request() {
    let cache: Arc<MemoryCache> = Arc::default();
    let probe = Probe::new(Mode::Answer);
    let (s, _) = scheduler(probe.clone(), 4, Some(cache.clone()));
    s.update("d", vec![job("d", "f", 1, "def f(): pass")], D);
    settle().await;
    assert_eq!(cache.0.lock().unwrap().len(), 1);
    // A new session (new scheduler) with the same cache: no request, the same outcome.
    let probe2 = Probe::new(Mode::Answer);
    let (s2, _) = scheduler(probe2.clone(), 4, Some(cache.clone()));
    s2.update(
        "other-doc",
        vec![job("other-doc", "f", 9, "def f(): pass")],
        D,
    );
    settle().await;
    assert!(probe2.texts().is_empty());
    assert_eq!(s2.stats().cache_hits, 1);
    assert!(matches!(
        s2.state("other-doc", "f()", "def f(): pass"),
        CheckState::Done(_)
    ));
    // A result is only shown for the text it is about.
    assert_eq!(
        s2.state("other-doc", "f()", "def f(): return 1"),
        CheckState::Pending
    );
    // Callee signatures are part of the key: a changed callee means a new request.
    let mut j = job("other-doc", "f", 10, "def f(): pass");
    j.callees = vec!["g(x)".into()];
    s2.update("other-doc", vec![j], D);
    settle().await;
    assert_eq!(probe2.texts().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn at_most_max_concurrent_checks_run_at_once() {
    let probe = Probe::new(Mode::Hang);
    let (s, _) = scheduler(probe.clone(), 2, None);
    let jobs = (0..5)
        .map(|i| job("d", &format!("f{i}"), 1, &format!("t{i}")))
        .collect();
    s.update("d", jobs, Duration::ZERO);
    settle().await;
    assert_eq!(probe.texts().len(), 2);
    assert_eq!(s.stats().pending, 5);
}

#[tokio::test(start_paused = true)]
async fn failures_are_reported_once_per_check_and_visible_in_state() {
    let probe = Probe::new(Mode::Fail);
    let (s, events) = scheduler(probe.clone(), 4, None);
    s.update("d", vec![job("d", "f", 1, "t")], Duration::ZERO);
    settle().await;
    // A transient failure is retried with backoff (2 s, 4 s, 8 s, 16 s) before it is final.
    assert_eq!(s.state("d", "f()", "t"), CheckState::Pending);
    assert!(
        events.lock().unwrap().is_empty(),
        "not reported while retrying"
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    settle().await;
    assert_eq!(probe.texts().len(), 1 + RETRIES as usize);
    assert_eq!(s.stats().retries, u64::from(RETRIES));
    assert_eq!(s.stats().consecutive_failures, 1);
    assert!(
        matches!(s.state("d", "f()", "t"), CheckState::Failed(m) if m.contains("connection refused"))
    );
    let ev = events.lock().unwrap();
    assert!(matches!(
        &ev[0],
        SchedulerEvent::Failed {
            error: CheckError::Unreachable(_),
            ..
        }
    ));
    assert_eq!(s.stats().failed, 1);
}

#[tokio::test(start_paused = true)]
async fn without_a_checker_every_state_is_unavailable_with_the_reason() {
    let s = Scheduler::new(None, None, 1, "LLM not configured: test", |_| {});
    s.update("d", vec![job("d", "f", 1, "t")], Duration::ZERO);
    assert_eq!(
        s.state("d", "f()", "t"),
        CheckState::Unavailable("LLM not configured: test".into())
    );
    assert!(!s.is_available());
}

#[tokio::test(start_paused = true)]
async fn the_interim_checker_over_a_fake_client_compares_counts_with_the_analyzer() {
    let fake = Arc::new(FakeClient::with_replies([
        FakeReply::text("```json\n{\"explanation\": \"x\", \"branches\": 2, \"loops\": 0, \"findings\": [{\"line\": 99, \"rule\": \"sql injection!\", \"message\": \"m\"}]}\n```"),
        FakeReply::text("no json at all"),
        FakeReply::Error(LlmError::Connect("refused".into())),
    ]));
    let checker = LlmChecker::new(fake.clone());
    let mut j = job("d", "f", 1, "def f(a):\n    if a:\n        pass\n");
    j.analyzer.branches = 1;
    let o = checker.check(j.clone()).await.unwrap();
    assert_eq!(o.verdict, Verdict::Disagree);
    assert_eq!(
        o.claims[0].line, 3,
        "claim lines are clamped into the function"
    );
    assert_eq!(o.claims[0].rule, "sqlinjection", "rule ids are sanitised");
    let o = checker.check(j.clone()).await.unwrap();
    assert_eq!(o.verdict, Verdict::Unknown);
    let e = checker.check(j).await.unwrap_err();
    assert!(matches!(e, CheckError::Unreachable(_)));
    let req = &fake.requests()[0];
    assert!(
        req.user.contains("<<<CODE\n   1 | def f(a):"),
        "{}",
        req.user
    );
    assert!(req.system.contains("not instructions"));
}
