//! Helpers shared by the cross-check tests: fixtures, prepared questions, and "perfect"
//! answers written from the analyzer's own facts (what a flawless model would say).
#![allow(dead_code)]

use crosscheck::crosscheck::facts::{
    prepare, DataDependencyTaint, FileFacts, PrepareOptions, Question, Reference, TaintOracle,
};
use crosscheck::crosscheck::scores::cfg::CfgCategory;
use crosscheck::crosscheck::task::Task;
use crosscheck::syntax::normalize::NormNode;
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use serde_json::{json, Value};
use std::path::PathBuf;

pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/crosscheck")
        .join(name)
}

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name)).expect("fixture")
}

pub fn parse_fixture(name: &str) -> ParsedFile {
    let path = fixture_path(name);
    let lang = Language::from_path(&path).expect("known language");
    ParsedFile::parse(lang, fixture(name))
}

/// The stand-in taint oracle used in tests until the taint analysis lands: data dependency
/// from parameters and from the results of `input`/`getenv`/`args`-style sources.
pub fn stand_in_taint() -> DataDependencyTaint {
    DataDependencyTaint {
        source_calls: ["input", "getenv", "args", "readLine", "recv"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        parameters_are_sources: true,
    }
}

/// Prepares the question about `function` of a parsed file.
pub fn question_in(
    path: &str,
    file: &ParsedFile,
    task: Task,
    function: &str,
    taint: Option<&dyn TaintOracle>,
) -> Question {
    let mut facts = FileFacts::new(path, file);
    let index = facts
        .functions
        .iter()
        .position(|f| f.name == function || f.simple_name == function)
        .unwrap_or_else(|| panic!("no function {function} in {path}"));
    prepare(
        task,
        &mut facts,
        index,
        taint,
        &PrepareOptions::default(),
        &Cancel::never(),
    )
    .expect("prepared")
}

pub fn question(name: &str, task: Task, function: &str) -> Question {
    let file = parse_fixture(name);
    let taint = stand_in_taint();
    question_in(name, &file, task, function, Some(&taint))
}

fn ast_json(n: &NormNode) -> Value {
    json!({
        "type": n.category.name(),
        "value": n.label,
        "children": n.children.iter().map(ast_json).collect::<Vec<_>>(),
    })
}

fn cfg_type(c: CfgCategory) -> &'static str {
    match c {
        CfgCategory::Entry => "entry",
        CfgCategory::Exit => "exit",
        CfgCategory::Branch => "branch",
        CfgCategory::Loop => "loop",
        CfgCategory::Call => "call",
        CfgCategory::Try => "try",
        CfgCategory::Except => "except",
        CfgCategory::Jump => "jump",
        CfgCategory::Merge => "merge",
        CfgCategory::Normal => "statement",
    }
}

/// The answer a flawless model would give: the analyzer's facts in the task's answer format.
pub fn perfect_answer(q: &Question) -> String {
    let v = match &q.reference {
        Reference::Ast { tree, .. } => json!({ "ast": ast_json(tree) }),
        Reference::Cfg { graph, .. } => json!({
            "nodes": graph.nodes.iter().enumerate().map(|(i, n)| json!({
                "id": format!("n{i}"),
                "type": cfg_type(n.category),
                "line": n.spans.first().map(|s| s.0),
            })).collect::<Vec<_>>(),
            "edges": graph.edges.iter().map(|(a, b)| json!({"from": format!("n{a}"), "to": format!("n{b}")})).collect::<Vec<_>>(),
        }),
        Reference::CallGraph { facts, .. } => json!({
            "calls": facts.edges.iter().map(|(_, b)| json!({"callee": b, "resolved": null})).collect::<Vec<_>>(),
        }),
        Reference::DataDependency { questions, .. } => json!({
            "answers": questions.iter().map(|q| json!({"id": q.id, "verdict": if q.expected {"yes"} else {"no"}})).collect::<Vec<_>>(),
        }),
        Reference::Taint { questions, .. } => json!({
            "variables": questions.iter().map(|q| json!({"id": q.id, "name": q.target, "tainted": if q.expected {"yes"} else {"no"}})).collect::<Vec<_>>(),
        }),
        Reference::PointsTo { map, .. } => json!({
            "points_to": map.iter().map(|(p, ts)| json!({"pointer": p, "targets": ts})).collect::<Vec<_>>(),
        }),
        Reference::Flow { .. } => json!({"answer": "yes", "reasoning": "the analyzer's flow"}),
    };
    v.to_string()
}

/// An answer that reports nothing (what a model obeying "report nothing" says).
pub fn empty_answer(task: Task) -> String {
    match task {
        Task::Ast => json!({"ast": {"type": "FunctionDef", "value": "f", "children": []}}),
        Task::Cfg => json!({"nodes": [], "edges": []}),
        Task::CallGraph => json!({"calls": []}),
        Task::DataDependency => json!({"answers": []}),
        Task::Taint => json!({"variables": []}),
        Task::PointsTo => json!({"points_to": []}),
        _ => json!({}),
    }
    .to_string()
}

use crosscheck::crosscheck::cache::AnswerCache;
use crosscheck::crosscheck::engine::{CheckError, CheckOutcome, CheckSettings, Engine};
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::crosscheck::record::RecordSink;
use crosscheck::llm::{FakeClient, FakeReply, LlmClient};
use std::sync::Arc;

/// Runs one check with the built-in prompts.
pub async fn check(
    question: &Question,
    clients: &[Arc<dyn LlmClient>],
    settings: &CheckSettings,
    cache: &AnswerCache,
    sink: Option<&dyn RecordSink>,
) -> Result<CheckOutcome, CheckError> {
    let prompts = PromptLibrary::builtin();
    let engine = Engine {
        prompts: &prompts,
        cache,
        settings,
        sink,
    };
    engine.check(clients, question, 1_700_000_000).await
}

/// A client that always answers `text`.
pub fn answering(text: String) -> Arc<FakeClient> {
    Arc::new(FakeClient::from_fn(move |_| FakeReply::text(text.clone())))
}

pub fn dyn_client(c: &Arc<FakeClient>) -> Arc<dyn LlmClient> {
    c.clone()
}
