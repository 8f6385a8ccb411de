//! Spec of `crosscheck eval` (library level, hermetic): a tiny JSONL data set of our own
//! format (`tests/fixtures/eval/items.jsonl`) and a scripted fake LLM.
//!
//! Hand-checked expectations for the fixture (the fake LLM says "yes" to every dependency
//! question, "time" for every flaky test, "yes, equivalent" for every pair, and garbage for
//! the CFG):
//!
//! * data dependency `f(a, k)`: every ordered pair of its five variables is asked (20 pairs,
//!   all mentioned by the labels), 4 positive (b<-a, c<-a, c<-b, d<-k). Analyzer TP 4 TN 16 →
//!   F1 1; LLM ("yes" to all) TP 4 FP 16 → F1 8/24 = 1/3; hybrid (analyzer ∧ LLM) = 1.
//! * flaky: `waits` (Thread.sleep; gold async_wait) and `adds` (no signal; gold time).
//!   Analyzer right on the first only (0.5); LLM right on the second only (0.5); hybrid takes
//!   the static category, else the LLM's: right on both (1.0).
//! * equivalence: renamed pair (gold equivalent) and `+` vs `-` (gold not equivalent). The
//!   proof settles the first only (0.5); the LLM says "equivalent" to both (0.5, accuracy on
//!   equivalent 1, on non-equivalent 0, gap -1); hybrid = proof, else LLM (0.5).
//! * cfg: the analyzer is the reference (1.0); the LLM's garbage fails (0.0).

use crosscheck::crosscheck::engine::CheckSettings;
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::crosscheck::task::{Shots, Strategy, Task};
use crosscheck::eval::adapters::parse_jsonl;
use crosscheck::eval::metrics::{compute, Metrics, TaskMetrics};
use crosscheck::eval::report::{write_reports, ReportInfo, CHART_IDS};
use crosscheck::eval::run::{
    read_results, run_eval, select_items, EvalContext, EvalOptions, RunSummary, RESULTS_FILE,
};
use crosscheck::eval::{EvalItem, Gold};
use crosscheck::llm::{ChatRequest, FakeClient, FakeReply, LlmClient};
use crosscheck::stats::bootstrap::BootstrapOptions;
use crosscheck::syntax::{Cancel, Language};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixture() -> Vec<EvalItem> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/eval/items.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut errors = Vec::new();
    let items = parse_jsonl(&text, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(items.len(), 6);
    items
}

/// Which task a request is about, from its answer schema.
fn schema_has(req: &ChatRequest, key: &str) -> bool {
    req.json_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(key))
        .is_some()
}

fn scripted_llm() -> Arc<FakeClient> {
    Arc::new(FakeClient::from_fn(|req| {
        if schema_has(req, "answers") {
            let answers: Vec<String> = (1..=40)
                .map(|i| format!("{{\"id\": {i}, \"verdict\": \"yes\"}}"))
                .collect();
            FakeReply::text(format!("{{\"answers\": [{}]}}", answers.join(", ")))
        } else if schema_has(req, "category") {
            FakeReply::text("{\"category\": \"time\"}")
        } else if schema_has(req, "verdict") {
            FakeReply::text("{\"verdict\": \"yes\"}")
        } else {
            FakeReply::text("I cannot draw graphs.")
        }
    }))
}

fn run(
    items: &[EvalItem],
    out: &Path,
    client: &Arc<FakeClient>,
    options: &EvalOptions,
) -> RunSummary {
    let prompts = PromptLibrary::builtin();
    let ctx = EvalContext {
        clients: vec![Arc::clone(client) as Arc<dyn LlmClient>],
        settings: CheckSettings::default(),
        prompts: &prompts,
        backend: None,
        now: 1_700_000_000,
        cancel: Cancel::never(),
        progress: None,
    };
    run_eval(items, out, options, &ctx).unwrap()
}

fn metrics(summary: &RunSummary) -> Metrics {
    compute(
        &summary.results,
        &BootstrapOptions {
            resamples: 200,
            ..BootstrapOptions::default()
        },
        &Cancel::never(),
    )
}

fn task(m: &Metrics, t: Task) -> &TaskMetrics {
    m.tasks
        .iter()
        .find(|x| x.task == t)
        .unwrap_or_else(|| panic!("no metrics for {t}"))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn metrics_of_the_hand_checked_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let client = scripted_llm();
    let summary = run(&fixture(), dir.path(), &client, &EvalOptions::default());
    assert_eq!(summary.results.len(), 6);
    assert_eq!(client.request_count(), 6, "one request per item");
    let m = metrics(&summary);

    let dd = task(&m, Task::DataDependency);
    assert_eq!(dd.metric, "per-project macro F1");
    assert!(close(dd.values[0], 1.0), "analyzer {:?}", dd.values);
    assert!(close(dd.values[1], 1.0 / 3.0), "llm {:?}", dd.values);
    assert!(close(dd.values[2], 1.0), "hybrid {:?}", dd.values);
    let row = summary.results.iter().find(|r| r.id == "dd-1").unwrap();
    let llm = row.llm.as_ref().unwrap();
    assert_eq!((llm.tp, llm.fp, llm.fn_, llm.tn), (4, 16, 0, 0));
    assert_eq!(
        (row.analyzer.tp, row.analyzer.fp, row.analyzer.tn),
        (4, 0, 16)
    );

    let flaky = task(&m, Task::FlakyRootCause);
    assert!(close(flaky.values[0], 0.5), "{:?}", flaky.values);
    assert!(close(flaky.values[1], 0.5), "{:?}", flaky.values);
    assert!(close(flaky.values[2], 1.0), "{:?}", flaky.values);

    let eq = task(&m, Task::Equivalence);
    assert!(close(eq.values[0], 0.5), "{:?}", eq.values);
    assert!(close(eq.values[1], 0.5), "{:?}", eq.values);
    assert!(close(eq.values[2], 0.5), "{:?}", eq.values);
    assert!(close(eq.extra["acc_eq"][1], 1.0));
    assert!(close(eq.extra["acc_neq"][1], 0.0));
    assert!(close(eq.extra["gap"][1], -1.0), "gap = Acc(neq) - Acc(eq)");

    let cfg = task(&m, Task::Cfg);
    assert!(close(cfg.values[0], 1.0));
    assert!(close(cfg.values[1], 0.0));

    // Agreement rows exist for the gold-labelled tasks, with intervals.
    let a = m
        .agreement
        .iter()
        .find(|a| a.task == Task::DataDependency && a.column == "llm")
        .unwrap();
    assert_eq!(a.n, 20);
    assert!(a.kappa.lo.is_some() && a.kappa.hi.is_some());
}

#[test]
fn a_rerun_asks_no_item_twice() {
    let dir = tempfile::tempdir().unwrap();
    let items = fixture();
    let client = scripted_llm();
    // "Killed" run: only the first three items got done.
    let first = run(&items[..3], dir.path(), &client, &EvalOptions::default());
    assert_eq!(first.fresh_items, 3);
    assert_eq!(client.request_count(), 3);
    // A torn last line, as a kill mid-write leaves it, is ignored.
    let path = dir.path().join(RESULTS_FILE);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"dataset\": \"mini\", \"id\": \"cfg-");
    std::fs::write(&path, text).unwrap();

    let second = run(&items, dir.path(), &client, &EvalOptions::default());
    assert_eq!(second.resumed, 3);
    assert_eq!(second.fresh_items, 3);
    assert_eq!(
        client.request_count(),
        6,
        "only the three missing items were asked"
    );
    assert_eq!(second.results.len(), 6);

    let third = run(&items, dir.path(), &client, &EvalOptions::default());
    assert_eq!(third.resumed, 6);
    assert_eq!(client.request_count(), 6, "nothing asked again");
    assert_eq!(read_results(&path).len(), 6);

    // --fresh re-asks everything and starts a new results file.
    let fresh = run(
        &items,
        dir.path(),
        &client,
        &EvalOptions {
            fresh: true,
            ..EvalOptions::default()
        },
    );
    assert_eq!(fresh.resumed, 0);
    assert_eq!(client.request_count(), 12);
    assert_eq!(read_results(&path).len(), 6);
}

#[test]
fn concurrent_workers_give_the_same_results_in_item_order() {
    let items = fixture();
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = run(&items, d1.path(), &scripted_llm(), &EvalOptions::default());
    let four = run(
        &items,
        d2.path(),
        &scripted_llm(),
        &EvalOptions {
            concurrency: 4,
            ..EvalOptions::default()
        },
    );
    assert_eq!(one.results, four.results);
}

#[test]
fn the_token_budget_stops_new_requests() {
    let dir = tempfile::tempdir().unwrap();
    let client = scripted_llm();
    let summary = run(
        &fixture(),
        dir.path(),
        &client,
        &EvalOptions {
            max_tokens_total: Some(1),
            ..EvalOptions::default()
        },
    );
    assert_eq!(
        client.request_count(),
        1,
        "the first answer spends the budget"
    );
    assert_eq!(summary.fresh_items, 1);
    assert_eq!(summary.skipped_budget, 5);
    let m = metrics(&summary);
    let report = crosscheck::eval::report::markdown(&ReportInfo::default(), &m, &summary);
    assert!(report.contains("token budget was spent: 5"), "{report}");
}

fn synthetic(n: usize) -> Vec<EvalItem> {
    (0..n)
        .map(|i| EvalItem {
            dataset: "syn".into(),
            id: format!("item-{i:03}"),
            task: Task::FlakyRootCause,
            language: Language::Java,
            project: "p".into(),
            code: "class A {}".into(),
            code_b: None,
            function: None,
            gold: Gold::Label {
                label: "time".into(),
            },
        })
        .collect()
}

fn ids(items: &[EvalItem]) -> Vec<String> {
    items.iter().map(|i| i.id.clone()).collect()
}

#[test]
fn limit_and_seeded_sample_are_deterministic() {
    let a = select_items(synthetic(50), &[], None, Some((5, 7)));
    let b = select_items(synthetic(50), &[], None, Some((5, 7)));
    let c = select_items(synthetic(50), &[], None, Some((5, 8)));
    assert_eq!(ids(&a), ids(&b), "same seed, same sample");
    assert_eq!(a.len(), 5);
    assert_ne!(ids(&a), ids(&c), "another seed, another sample");
    assert_ne!(
        ids(&a),
        ids(&select_items(synthetic(50), &[], Some(5), None)),
        "a sample is not the first items"
    );
    let mut reversed = synthetic(50);
    reversed.reverse();
    assert_eq!(
        ids(&select_items(reversed, &[], None, Some((5, 7)))),
        ids(&a),
        "input order does not matter"
    );
    let first = select_items(synthetic(50), &[], Some(3), None);
    assert_eq!(ids(&first), ["item-000", "item-001", "item-002"]);
    assert!(select_items(synthetic(5), &[Task::Cfg], None, None).is_empty());
}

#[test]
fn strategy_ablation_compares_strategies_with_mcnemar() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<EvalItem> = fixture()
        .into_iter()
        .filter(|i| i.task == Task::FlakyRootCause)
        .collect();
    let client = scripted_llm();
    let summary = run(
        &items,
        dir.path(),
        &client,
        &EvalOptions {
            strategies: vec![Some(Strategy::Normal), Some(Strategy::RoleCot)],
            shots: vec![Shots::Zero, Shots::Few],
            ..EvalOptions::default()
        },
    );
    assert_eq!(
        client.request_count(),
        8,
        "2 items × 2 strategies × 2 shots"
    );
    let m = metrics(&summary);
    assert_eq!(m.ablation.len(), 4);
    assert!(m.ablation[0].p_value.is_none(), "the baseline");
    assert!(m.ablation[1..].iter().all(|a| a.p_value == Some(1.0)));
}

fn write_all(dir: &Path, summary: &RunSummary) -> Vec<PathBuf> {
    let m = metrics(summary);
    write_reports(dir, &ReportInfo::default(), &m, summary).unwrap()
}

#[test]
fn reports_are_written_with_every_chart_and_the_tasks_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let summary = run(
        &fixture(),
        dir.path(),
        &scripted_llm(),
        &EvalOptions::default(),
    );
    let paths = write_all(dir.path(), &summary);
    assert_eq!(paths.len(), 4);
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| mini | data_dependency |"), "{md}");
    assert!(md.contains("**expression_match**: needs CodeBERT"), "{md}");
    assert!(
        md.contains("0.898"),
        "the paper's best figure is beside ours"
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for id in CHART_IDS {
        let at = html
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id}"));
        assert!(html[at..].contains("<svg"), "{id} has an SVG");
    }
    assert!(!html.contains("<script"), "no script");
    assert!(
        !html.contains("src=") && !html.contains("href="),
        "nothing external"
    );
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert!(header.iter().any(|h| h == "llm_pass"));
    assert_eq!(reader.records().count(), 6);
}

#[test]
fn no_llm_runs_fill_the_analyzer_column_only() {
    let dir = tempfile::tempdir().unwrap();
    let client = scripted_llm();
    let summary = run(
        &fixture(),
        dir.path(),
        &client,
        &EvalOptions {
            no_llm: true,
            ..EvalOptions::default()
        },
    );
    assert_eq!(client.request_count(), 0);
    assert!(summary
        .results
        .iter()
        .all(|r| r.llm.is_none() && r.model == "none"));
    let m = metrics(&summary);
    assert!(m.not_run.iter().any(|(t, _)| t == "LLM and hybrid columns"));
    assert!(close(task(&m, Task::DataDependency).values[0], 1.0));
}

#[test]
fn public_data_sets_load_and_run_analyzer_only() {
    let root = datasets_root();
    let mut errors = Vec::new();
    let items = crosscheck::eval::adapters::load_datasets(&root, &[], &mut errors);
    let items = select_items(items, &[], Some(2), None);
    let datasets: std::collections::BTreeSet<&str> =
        items.iter().map(|i| i.dataset.as_str()).collect();
    assert_eq!(datasets.len(), 8, "{datasets:?} {errors:?}");
    let dir = tempfile::tempdir().unwrap();
    let summary = run(
        &items,
        dir.path(),
        &scripted_llm(),
        &EvalOptions {
            no_llm: true,
            ..EvalOptions::default()
        },
    );
    let scored = summary.results.iter().filter(|r| r.scored()).count();
    assert!(scored * 10 >= summary.results.len() * 8, "most items apply");
}

/// The binary against a mock OpenAI-compatible server: `--limit` run, full rerun, and a
/// third run; the server sees every item exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_resumes_across_processes_against_a_mock_server() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let body = serde_json::json!({
        "id": "x", "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant",
                     "content": "{\"category\": \"time\"}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 5\nretries = 0\n",
            server.uri()
        ),
    )
    .unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/eval/items.jsonl");
    let out = dir.path().join("out");
    let data = dir.path().join("data");
    let run = move |extra: &'static [&'static str]| {
        let (config, fixture, out, data) =
            (config.clone(), fixture.clone(), out.clone(), data.clone());
        std::thread::spawn(move || {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_crosscheck"))
                .arg("eval")
                .arg("--jsonl")
                .arg(&fixture)
                .arg("--out")
                .arg(&out)
                .args(extra)
                .env("CROSSCHECK_CONFIG", &config)
                .env("CROSSCHECK_DATA_DIR", &data)
                .env_remove("CROSSCHECK_LLM_BASE_URL")
                .env_remove("CROSSCHECK_LLM_MODEL")
                .env_remove("CROSSCHECK_LLM_PROVIDER")
                .output()
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
        })
        .join()
        .unwrap()
    };
    // --limit 1 per (data set, task): 4 of the 6 items ("killed" early).
    let first = run(&["--limit", "1"]);
    assert_eq!(first["items"], 4, "{first}");
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    let second = run(&[]);
    assert_eq!(second["resumed"], 4, "{second}");
    assert_eq!(second["answered"], 2, "{second}");
    assert_eq!(server.received_requests().await.unwrap().len(), 6);
    let third = run(&[]);
    assert_eq!(third["requests"], 0, "{third}");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        6,
        "no item asked twice"
    );
    let csv = std::fs::read_to_string(dir.path().join("out/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "header + 6 rows");
}

#[test]
fn execute_lets_the_analyzer_column_refute_a_mutant_and_keep_a_refactor() {
    use crosscheck::eval::run::executed_verdict;
    let original = "def double(x: int) -> int:\n    return x * 2\n";
    // Equivalent, but not by the normalisation proof's rules: only trials can vouch for it.
    let refactor = "def double(x: int) -> int:\n    return x + x\n";
    let mutant = "def double(x: int) -> int:\n    return x * 3\n";
    assert_eq!(
        executed_verdict(Language::Python, original, refactor).as_deref(),
        Some("equivalent")
    );
    assert_eq!(
        executed_verdict(Language::Python, original, mutant).as_deref(),
        Some("not_equivalent")
    );
    // Through the runner: with --execute the analyzer column answers, without it only a
    // proof could (and there is none).
    let item = |id: &str, b: &str, gold: &str| EvalItem {
        dataset: "own".into(),
        id: id.into(),
        task: Task::Equivalence,
        language: Language::Python,
        project: "own".into(),
        code: original.into(),
        code_b: Some(b.into()),
        function: None,
        gold: Gold::Label { label: gold.into() },
    };
    let items = vec![
        item("refactor", refactor, "equivalent"),
        item("mutant", mutant, "not_equivalent"),
    ];
    for (execute, expect) in [(true, Some(true)), (false, None)] {
        let dir = tempfile::tempdir().unwrap();
        let summary = run(
            &items,
            dir.path(),
            &scripted_llm(),
            &EvalOptions {
                no_llm: true,
                execute,
                ..EvalOptions::default()
            },
        );
        for r in &summary.results {
            match expect {
                Some(pass) => assert_eq!(r.analyzer.pass, Some(pass), "{r:?}"),
                None => assert!(r.analyzer.label.is_none(), "{r:?}"),
            }
        }
    }
}

#[test]
fn a_request_the_server_rejects_fails_only_its_item() {
    // The server rejects flaky-root-cause prompts (as llama-server does with a prompt longer
    // than its context: HTTP 400) and answers everything else.
    let client = Arc::new(FakeClient::from_fn(|req| {
        if schema_has(req, "category") {
            FakeReply::Error(crosscheck::llm::LlmError::Http {
                status: 400,
                body_snippet: "request exceeds the available context size".into(),
            })
        } else {
            FakeReply::text("{\"verdict\": \"yes\"}")
        }
    }));
    let items = fixture();
    let dir = tempfile::tempdir().unwrap();
    let summary = run(&items, dir.path(), &client, &EvalOptions::default());
    let rejected = items
        .iter()
        .filter(|i| i.task == Task::FlakyRootCause)
        .count();
    assert!(rejected >= 1, "the fixture has a flaky item");
    assert_eq!(summary.skipped_failure, rejected, "{:?}", summary.errors);
    assert_eq!(summary.fresh_items, items.len() - rejected);
    assert!(summary
        .errors
        .iter()
        .any(|e| e.contains("rejected this item's request")));
}

/// A small servlet with one SQL sink fed by a request parameter (the built-in Java spec flags
/// it) and, with `safe`, a second sink fed by a constant.
fn servlet(safe: bool) -> String {
    let mut s = String::from(
        "public class T extends HttpServlet {\n  public void doPost(HttpServletRequest request, HttpServletResponse response) throws Exception {\n    String param = request.getParameter(\"id\");\n    java.sql.Statement st = conn.createStatement();\n    st.executeQuery(\"SELECT * FROM t WHERE id=\" + param); /* BAD */\n",
    );
    if safe {
        s.push_str("    st.executeQuery(\"SELECT * FROM t WHERE id=\" + \"1\"); /* OK */\n");
    }
    s.push_str("  }\n}\n");
    s
}

fn labelled(id: &str, task: Task, language: Language, code: String, gold: Gold) -> EvalItem {
    // One kind of label per data set, as the real ones have.
    let dataset = match &gold {
        Gold::TaintVerdict { .. } => "verdicts",
        Gold::SinkLines { .. } => "lines",
        Gold::VulnCount { .. } => "counts",
        _ => "alias",
    };
    EvalItem {
        dataset: dataset.into(),
        id: id.into(),
        task,
        language,
        project: "p".into(),
        code,
        code_b: None,
        function: None,
        gold,
    }
}

/// The LLM says "no" to every flow question and gives a points-to answer where `p` and `q`
/// share `a` and `r` points to `b` only.
fn sceptical_llm() -> Arc<FakeClient> {
    Arc::new(FakeClient::from_fn(|req| {
        if schema_has(req, "points_to") {
            FakeReply::text(
                r#"{"points_to": [{"pointer": "p", "targets": ["a"]}, {"pointer": "q", "targets": ["a"]}, {"pointer": "r", "targets": ["b"]}]}"#,
            )
        } else {
            FakeReply::text(r#"{"reasoning": "it is escaped", "answer": "no"}"#)
        }
    }))
}

#[test]
fn taint_and_alias_labels_are_scored_against_the_labels_not_the_analyzer() {
    use crosscheck::eval::labels::{AliasAssertion, AliasKind};
    let alias_code = "int main() {\n  int a, b;\n  int *p = &a, *q = &a, *r = &b;\n  if (a) r = &a;\n  MAYALIAS(p, q);\n  NOALIAS(p, r);\n  return 0;\n}\n";
    let items = vec![
        // The analyzer flags both; the second is labelled safe: one TP, one FP.
        labelled(
            "Vuln",
            Task::Taint,
            Language::Java,
            servlet(false),
            Gold::TaintVerdict {
                category: "sqli".into(),
                vulnerable: true,
            },
        ),
        labelled(
            "Mislabelled",
            Task::Taint,
            Language::Java,
            servlet(false),
            Gold::TaintVerdict {
                category: "sqli".into(),
                vulnerable: false,
            },
        ),
        // Not a taint category: not scored.
        labelled(
            "Crypto",
            Task::Taint,
            Language::Java,
            servlet(false),
            Gold::TaintVerdict {
                category: "crypto".into(),
                vulnerable: true,
            },
        ),
        // BAD line 5 flagged, OK line 6 not; a second BAD line 2 (no sink there) missed.
        labelled(
            "Lines",
            Task::Taint,
            Language::Java,
            servlet(true),
            Gold::SinkLines {
                bad: vec![2, 5],
                ok: vec![6],
            },
        ),
        // One flow found, two expected.
        labelled(
            "count.py",
            Task::Taint,
            Language::Python,
            "import os\nfrom flask import request\n\ndef f():\n    x = request.args.get('x')\n    os.system(x)\n".into(),
            Gold::VulnCount { count: 2 },
        ),
        labelled(
            "alias.c:main",
            Task::PointsTo,
            Language::C,
            alias_code.into(),
            Gold::AliasAssertions {
                assertions: vec![
                    AliasAssertion {
                        line: 5,
                        kind: AliasKind::MayAlias,
                        a: "p".into(),
                        b: "q".into(),
                    },
                    AliasAssertion {
                        line: 6,
                        kind: AliasKind::NoAlias,
                        a: "p".into(),
                        b: "r".into(),
                    },
                ],
            },
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let summary = run(
        &items,
        dir.path(),
        &sceptical_llm(),
        &EvalOptions::default(),
    );
    let row = |id: &str| summary.results.iter().find(|r| r.id == id).unwrap();

    assert_eq!(row("Crypto").status, "not_applicable");
    let (v, m) = (row("Vuln"), row("Mislabelled"));
    assert_eq!((v.analyzer.tp, m.analyzer.fp), (1, 1), "{v:?} {m:?}");
    // The LLM says no to every flow: it finds nothing; the hybrid neither.
    assert_eq!(v.llm.as_ref().unwrap().fn_, 1);
    assert_eq!(m.hybrid.as_ref().unwrap().tn, 1);

    let lines = &row("Lines").analyzer;
    assert_eq!(
        (lines.tp, lines.fp, lines.fn_, lines.tn),
        (1, 0, 1, 1),
        "{lines:?}"
    );
    let count = &row("count.py").analyzer;
    assert_eq!((count.pass, count.parts["found"]), (Some(false), 1));

    let alias = row("alias.c:main");
    // `r` may point to `a`: the analyzer breaks the NOALIAS assertion.
    assert_eq!(alias.analyzer.score, Some(0.5), "{alias:?}");
    assert_eq!(alias.llm.as_ref().unwrap().score, Some(1.0), "{alias:?}");
    assert_eq!(alias.hybrid.as_ref().unwrap().score, Some(1.0));

    let m = metrics(&summary);
    for t in &m.tasks {
        assert_eq!(t.reference, "the data set's labels", "{t:?}");
        assert!(
            t.values[0].is_some_and(|v| v < 1.0),
            "the analyzer is wrong somewhere in {} {}: {:?}",
            t.dataset,
            t.task,
            t.values
        );
    }
    let taint = m
        .tasks
        .iter()
        .find(|t| t.metric == "Youden (TPR − FPR)")
        .unwrap();
    // TPR 1, FPR 1 over the two scored verdicts.
    assert!(close(taint.values[0], 0.0), "{:?}", taint.values);
    assert!(close(taint.values[1], 0.0), "{:?}", taint.values);
    let md = crosscheck::eval::report::markdown(&ReportInfo::default(), &m, &summary);
    assert!(md.contains("the data set's labels"), "{md}");
    assert!(md.contains("## Confusion counts against the data sets' labels"));
}

/// OWASP, SecuriBench, PyT and PTABen run for real: every item is scored against the data
/// set's own labels, and the analyzer column is not 1 by construction.
#[test]
fn public_taint_and_points_to_data_sets_are_scored_against_their_labels() {
    let root = datasets_root();
    let names: Vec<String> = ["owasp", "securibench", "pyt", "ptaben"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut errors = Vec::new();
    let items = crosscheck::eval::adapters::load_datasets(&root, &names, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(items.iter().all(|i| i.gold != Gold::Analyzer));
    let items = select_items(items, &[], None, Some((150, 1)));
    let dir = tempfile::tempdir().unwrap();
    let summary = run(
        &items,
        dir.path(),
        &scripted_llm(),
        &EvalOptions {
            no_llm: true,
            concurrency: 2,
            ..EvalOptions::default()
        },
    );
    let m = metrics(&summary);
    assert_eq!(m.tasks.len(), 4, "{:?}", m.tasks);
    for t in &m.tasks {
        assert_eq!(t.reference, "the data set's labels");
        let v = t.values[0].unwrap_or_else(|| panic!("{} has no analyzer figure", t.dataset));
        // Floors well below the measured figures (README), and never 1 by construction.
        assert!(v > 0.5 && v < 1.0, "{} {}: {v}", t.dataset, t.metric);
    }
}

/// `../shared/datasets`, which must be there: a missing data set fails the test.
fn datasets_root() -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    assert!(
        root.join("README.md").is_file(),
        "the data sets are expected at {}",
        root.display()
    );
    root
}
