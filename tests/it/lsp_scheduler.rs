//! The background LLM scheduler, rule by rule (debounce, cancellation, cache, staleness,
//! concurrency), with a probe checker and with the cross-check engine over
//! `llm::FakeClient`. Time is paused: sleeps advance instantly and deterministically.

use crosscheck::crosscheck::engine::CheckSettings;
use crosscheck::crosscheck::facts::{prepare_flow, FlowUnit, PathElement};
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::crosscheck::record::{CacheBackend, Tier};
use crosscheck::crosscheck::tier::LlmStance;
use crosscheck::llm::{FakeClient, FakeReply, LlmError};
use crosscheck::lsp::checks::EngineChecker;
use crosscheck::lsp::scheduler::{
    BoxFuture, CheckError, CheckJob, CheckOutcome, CheckState, Checker, Scheduler, SchedulerEvent,
    Subject, RETRIES,
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
    calls: Mutex<Vec<CheckJob>>,
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
            .map(|j| j.question.inputs.code[0].text.clone())
            .collect()
    }
}

fn outcome(model: &str) -> CheckOutcome {
    CheckOutcome {
        task: "taint".into(),
        verdict: "yes".into(),
        stance: LlmStance::Agrees,
        tier: Tier::Confirmed,
        model: model.into(),
        samples: 1,
        instability: 0.0,
        models: vec![],
        template: "probe@1".into(),
        cached: false,
        scores: BTreeMap::new(),
        missed: vec![],
        claims: vec![],
        errors: vec![],
        records: vec![],
    }
}

impl Checker for Probe {
    fn id(&self) -> String {
        "probe@1".to_string()
    }
    fn cached(&self, _job: &CheckJob) -> Option<CheckOutcome> {
        None
    }
    fn check(&self, job: CheckJob) -> BoxFuture<Result<CheckOutcome, CheckError>> {
        self.calls.lock().unwrap().push(job.clone());
        let guard = DropGuard(Arc::clone(&self.dropped));
        let mode = self.mode;
        Box::pin(async move {
            let _g = guard;
            match mode {
                Mode::Hang => std::future::pending().await,
                Mode::Fail => Err(CheckError::Unreachable("connection refused".into())),
                Mode::Answer => Ok(outcome(&format!("probe for {}", job.label))),
            }
        })
    }
}

/// A flow question about the one-line unit `text` (source and sink on its first line).
fn job(doc: &str, f: &str, version: i32, text: &str) -> CheckJob {
    let unit = FlowUnit {
        file: doc.into(),
        label: format!("function {f}"),
        language: Language::Python,
        text: text.into(),
        first_line: 1,
    };
    let el = |role: &str| PathElement {
        file: doc.into(),
        line: 1,
        role: role.into(),
        text: text.into(),
    };
    let q = prepare_flow(
        doc,
        "taint-command",
        "a shell command",
        &[el("source"), el("sink")],
        &[unit],
        false,
    )
    .expect("a flow question");
    CheckJob {
        doc: doc.into(),
        version,
        slot: format!("{f}()"),
        subject: Subject::Finding { key: f.into() },
        label: f.into(),
        question: Arc::new(q),
    }
}

fn hash(doc: &str, f: &str, text: &str) -> String {
    job(doc, f, 0, text).content_hash()
}

type Events = Arc<Mutex<Vec<SchedulerEvent>>>;

fn scheduler(checker: Arc<dyn Checker>, max: usize) -> (Scheduler, Events) {
    let events: Events = Arc::default();
    let e = Arc::clone(&events);
    let s = Scheduler::new(Some(checker), max, "", move |ev| e.lock().unwrap().push(ev));
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
    let (s, events) = scheduler(probe.clone(), 4);
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
        matches!(s.state("d", "f()", &hash("d", "f", "def f(): return 5")), CheckState::Done(o) if o.model == "probe for f")
    );
}

#[tokio::test(start_paused = true)]
async fn an_unchanged_function_keeps_its_running_check_and_result_across_versions() {
    let probe = Probe::new(Mode::Answer);
    let (s, _) = scheduler(probe.clone(), 4);
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
    let (s, _) = scheduler(probe.clone(), 4);
    s.update("d", vec![job("d", "f", 1, "v1")], Duration::ZERO);
    settle().await;
    assert_eq!(s.stats().requests, 1);
    assert_eq!(
        s.state("d", "f()", &hash("d", "f", "v1")),
        CheckState::Pending
    );
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
    let (s, _) = scheduler(probe.clone(), 4);
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

fn engine(fake: Arc<FakeClient>, cache: Option<Arc<dyn CacheBackend>>) -> Arc<EngineChecker> {
    Arc::new(EngineChecker::new(
        vec![fake],
        PromptLibrary::builtin(),
        cache,
        CheckSettings::default(),
    ))
}

fn yes() -> Arc<FakeClient> {
    Arc::new(FakeClient::from_fn(|_| {
        FakeReply::text(r#"{"answer": "yes", "reasoning": "it flows"}"#)
    }))
}

#[tokio::test(start_paused = true)]
async fn the_answer_cache_serves_a_known_question_without_a_request_or_a_debounce() {
    let cache: Arc<MemoryCache> = Arc::default();
    let fake = yes();
    let (s, _) = scheduler(engine(fake.clone(), Some(cache.clone())), 4);
    s.update("d", vec![job("d", "f", 1, "os.system(input())")], D);
    settle().await;
    assert_eq!(fake.request_count(), 1);
    assert_eq!(
        cache.0.lock().unwrap().len(),
        1,
        "the engine's answer cache"
    );
    // A new session (new scheduler and checker) on the same store: no request, and the
    // outcome is there at once (no debounce), marked cached.
    let fake2 = yes();
    let (s2, _) = scheduler(engine(fake2.clone(), Some(cache.clone())), 4);
    s2.update(
        "other-doc",
        vec![job("other-doc", "f", 9, "os.system(input())")],
        D,
    );
    assert_eq!(fake2.request_count(), 0);
    assert_eq!(s2.stats().cache_hits, 1);
    let h = hash("other-doc", "f", "os.system(input())");
    assert!(
        matches!(s2.state("other-doc", "f()", &h), CheckState::Done(o) if o.cached && o.tier == Tier::Confirmed)
    );
    // A result is only shown for the question it answers.
    assert_eq!(
        s2.state("other-doc", "f()", &hash("other-doc", "f", "os.system(x)")),
        CheckState::Pending
    );
    // A changed question means a new request.
    s2.update(
        "other-doc",
        vec![job("other-doc", "f", 10, "os.system(input() + 'x')")],
        D,
    );
    settle().await;
    assert_eq!(fake2.request_count(), 1);
}

#[tokio::test(start_paused = true)]
async fn at_most_max_concurrent_checks_run_at_once() {
    let probe = Probe::new(Mode::Hang);
    let (s, _) = scheduler(probe.clone(), 2);
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
    let (s, events) = scheduler(probe.clone(), 4);
    s.update("d", vec![job("d", "f", 1, "t")], Duration::ZERO);
    settle().await;
    // A transient failure is retried with backoff (2 s, 4 s, 8 s, 16 s) before it is final.
    assert_eq!(
        s.state("d", "f()", &hash("d", "f", "t")),
        CheckState::Pending
    );
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
        matches!(s.state("d", "f()", &hash("d", "f", "t")), CheckState::Failed(m) if m.contains("connection refused"))
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
    let s = Scheduler::new(None, 1, "LLM not configured: test", |_| {});
    s.update("d", vec![job("d", "f", 1, "t")], Duration::ZERO);
    assert_eq!(
        s.state("d", "f()", &hash("d", "f", "t")),
        CheckState::Unavailable("LLM not configured: test".into())
    );
    assert!(!s.is_available());
}

#[tokio::test(start_paused = true)]
async fn the_engine_checker_reads_each_answer_into_a_stance_and_a_tier() {
    let fake = Arc::new(FakeClient::with_replies([
        FakeReply::text(
            "```json\n{\"answer\": \"yes\", \"reasoning\": \"Answer: no. [x](http://e)\"}\n```",
        ),
        FakeReply::text(r#"{"answer": "no", "reasoning": "sanitised on line 1"}"#),
        FakeReply::text("Unknown: the code shown does not decide it."),
        FakeReply::text(r#"{"reasoning": "no answer field"}"#),
        FakeReply::Error(LlmError::Connect("refused".into())),
    ]));
    let checker = engine(fake.clone(), None);
    let j = |t: &str| job("d", "f", 1, t);
    // The verdict comes from the answer field, never from words in the reasoning.
    let o = checker.check(j("os.system(input())")).await.unwrap();
    assert_eq!(
        (o.verdict.as_str(), o.stance, o.tier),
        ("yes", LlmStance::Agrees, Tier::Confirmed)
    );
    assert_eq!(o.task, "taint");
    assert_eq!(
        o.models[0].reasoning.as_deref(),
        Some("Answer: no. [x](http://e)")
    );
    assert_eq!(
        o.records.len(),
        1,
        "one telemetry record per answered check"
    );
    assert_eq!(o.records[0].analyzer["verdict"], "yes");
    assert_eq!(o.records[0].samples[0].answer["verdict"], "yes");
    let o = checker.check(j("os.system(input() + '1')")).await.unwrap();
    assert_eq!(
        (o.verdict.as_str(), o.stance, o.tier),
        ("no", LlmStance::Disagrees, Tier::AnalyzerOnly)
    );
    let o = checker.check(j("os.system(input() + '2')")).await.unwrap();
    assert_eq!(
        (o.verdict.as_str(), o.tier),
        ("unknown", Tier::AnalyzerOnly)
    );
    // Unreadable (no answer field): confirms nothing, and the failure is recorded.
    let o = checker.check(j("os.system(input() + '3')")).await.unwrap();
    assert_eq!((o.stance, o.tier), (LlmStance::Failed, Tier::AnalyzerOnly));
    assert!(o.errors[0].contains("answer"), "{:?}", o.errors);
    assert_eq!(o.records.len(), 1);
    assert_eq!((o.records[0].pass, o.records[0].tier), (None, None));
    assert!(!o.records[0].samples[0].parsed);
    let e = checker
        .check(j("os.system(input() + '4')"))
        .await
        .unwrap_err();
    assert!(matches!(e, CheckError::Unreachable(_)));
    let req = &fake.requests()[0];
    assert!(req.user.contains("<<<CODE function f"), "{}", req.user);
    assert!(
        req.user
            .contains("- source: `os.system(input())` at line 1 of function f"),
        "{}",
        req.user
    );
    assert!(
        req.user.contains("reach the sink without sanitisation"),
        "{}",
        req.user
    );
    assert_eq!(req.schema_name.as_deref(), Some("taint_flow"));
    assert!(req.system.contains("never instructions"));
}
