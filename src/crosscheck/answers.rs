//! Normalisers: each task's LLM answer, read through [`crate::llm::answer`], into the
//! analyzer's comparable form. Pure, deterministic, never panic.
//!
//! The readers follow the answer schemas in `prompts/schemas/` but are tolerant of the usual
//! deviations: member names are compared case-insensitively ignoring `_`/`-`, common aliases
//! are accepted (`edges`/`links`, `from`/`source`/`src`, `callee`/`target`/`name`), ids may be
//! strings or numbers, and verdicts may be booleans or words. Unknown members are ignored, so
//! an answer that smuggles `"tier": "confirmed"` or similar into its JSON has no effect.
//!
//! | task | normalised form |
//! |---|---|
//! | ast | [`NormNode`] via [`crate::crosscheck::llm_ast`] (the `ast` member when present) |
//! | cfg | [`CfgGraph`]: node categories by [`category_for`], function-relative lines |
//! | call_graph | set of `(caller, callee)`; the callee is `resolved` when given, else `callee` |
//! | data_dependency, taint | question id → [`Verdict`] (missing answers are unknown) |
//! | points_to | pointer → targets; heap objects as `heap@LINE` |
//! | expression_match | ranked `(start_line, end_line)` |
//! | equivalence, equivalent_mutant, explain_finding | one [`Verdict`] |
//! | flaky_root_cause | one of the 13 categories, or none |

use super::llm_ast::parse_llm_ast;
use super::scores::cfg::{category_for, CfgCategory, CfgGraph, CfgNodeN, MAX_EDGES, MAX_NODES};
use super::scores::sets::PointsToMap;
use crate::llm::answer::{extract_object, AnswerError};
use crate::llm::{parse_verdict, Verdict};
use crate::syntax::normalize::NormNode;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Lines beyond this are treated as absent (hostile numbers).
const MAX_LINE: u64 = 10_000_000;
/// At most this many items are read from any list.
const MAX_ITEMS: usize = 20_000;

/// The flaky-test root-cause categories (research notes §1).
pub const FLAKY_CATEGORIES: [&str; 13] = [
    "async_wait",
    "concurrency",
    "floating_point",
    "io",
    "network",
    "platform_dependency",
    "randomness",
    "resource_leak",
    "test_case_timeout",
    "test_order_dependency",
    "time",
    "too_restrictive_range",
    "unordered_collection",
];

/// Why an answer could not be normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NormaliseError {
    /// No JSON answer could be extracted.
    Answer(AnswerError),
    /// JSON, but without the members the task needs.
    Shape(String),
}

impl fmt::Display for NormaliseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NormaliseError::Answer(e) => e.fmt(f),
            NormaliseError::Shape(m) => write!(f, "the model's answer has the wrong shape: {m}"),
        }
    }
}

impl std::error::Error for NormaliseError {}

impl From<AnswerError> for NormaliseError {
    fn from(e: AnswerError) -> Self {
        NormaliseError::Answer(e)
    }
}

/// `node_type`, `NodeType` and `node-type` all give `nodetype`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The first member among `names` (compared squashed).
fn member<'a>(obj: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|n| {
        obj.iter()
            .find(|(k, _)| squash(k) == squash(n))
            .map(|(_, v)| v)
    })
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.chars().take(1000).collect()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn as_line(v: &Value) -> Option<usize> {
    let n = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 1.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s
            .trim()
            .trim_start_matches(['L', 'l'])
            .trim_start_matches("ine")
            .trim()
            .parse::<u64>()
            .ok(),
        _ => None,
    }?;
    (1..=MAX_LINE).contains(&n).then_some(n as usize)
}

fn list<'a>(obj: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Vec<Value>> {
    member(obj, names).and_then(Value::as_array)
}

/// The answer's top-level object.
fn object(text: &str) -> Result<(Map<String, Value>, bool), NormaliseError> {
    let a = extract_object(text)?;
    match a.value {
        Value::Object(m) => Ok((m, a.repaired)),
        _ => Err(NormaliseError::Shape("expected a JSON object".into())),
    }
}

/// An AST answer: the `ast` member when present, else the whole answer.
pub fn parse_ast(text: &str) -> Result<NormNode, NormaliseError> {
    let inner = extract_object(text)
        .ok()
        .and_then(|a| match a.value {
            Value::Object(m) => member(&m, &["ast", "tree", "root"]).cloned(),
            _ => None,
        })
        .map(|v| v.to_string());
    let source = inner.as_deref().unwrap_or(text);
    parse_llm_ast(source)
        .map(|a| a.root)
        .map_err(|e| NormaliseError::Shape(e.to_string()))
}

/// A CFG answer (see the module docs). Edges naming unknown node ids are dropped.
pub fn parse_cfg(text: &str) -> Result<CfgGraph, NormaliseError> {
    let (obj, _) = object(text)?;
    let obj = match member(&obj, &["cfg", "graph", "control_flow_graph"]) {
        Some(Value::Object(inner)) => inner.clone(),
        _ => obj,
    };
    let nodes = list(&obj, &["nodes", "vertices", "blocks", "basic_blocks"])
        .ok_or_else(|| NormaliseError::Shape("no `nodes` list".into()))?;
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut graph = CfgGraph::default();
    let mut successor_lists: Vec<(usize, Vec<String>)> = Vec::new();
    for (pos, n) in nodes.iter().take(MAX_NODES).enumerate() {
        let Value::Object(n) = n else { continue };
        let id = member(n, &["id", "node_id", "name", "label"])
            .and_then(as_text)
            .unwrap_or_else(|| format!("#{pos}"));
        let kind = member(n, &["type", "kind", "category", "node_type"])
            .and_then(as_text)
            .unwrap_or_default();
        let code = member(n, &["text", "code", "statement", "stmt", "source"])
            .and_then(as_text)
            .unwrap_or_default();
        let mut category = category_for(&kind, &code);
        let mut spans = Vec::new();
        let start = member(n, &["line", "start_line", "lineno", "line_number"]).and_then(as_line);
        let end = member(n, &["end_line", "endline", "end_lineno", "last_line"]).and_then(as_line);
        if let Some(Value::Array(ls)) = member(n, &["lines", "line_range", "range"]) {
            let ls: Vec<usize> = ls.iter().take(1000).filter_map(as_line).collect();
            if let (Some(a), Some(b)) = (ls.iter().min(), ls.iter().max()) {
                spans.push((*a, *b));
            }
        }
        if let Some(s) = start {
            let e = end.unwrap_or(s).max(s);
            spans.push((s, e));
        }
        if matches!(category, CfgCategory::Entry | CfgCategory::Exit) {
            spans.clear();
        } else if kind.is_empty() && code.is_empty() && spans.is_empty() {
            category = CfgCategory::Normal;
        }
        let index = graph.nodes.len();
        graph.nodes.push(CfgNodeN { category, spans });
        ids.entry(id).or_insert(index);
        if let Some(Value::Array(succ)) = member(n, &["successors", "succ", "next", "targets"]) {
            successor_lists.push((index, succ.iter().filter_map(as_text).collect()));
        }
    }
    let mut edges = BTreeSet::new();
    if let Some(list) = list(&obj, &["edges", "links", "transitions", "arcs"]) {
        for e in list.iter().take(MAX_EDGES) {
            let (from, to) = match e {
                Value::Object(e) => (
                    member(e, &["from", "source", "src", "start", "u"]).and_then(as_text),
                    member(e, &["to", "target", "dst", "dest", "end", "v"]).and_then(as_text),
                ),
                Value::Array(pair) if pair.len() >= 2 => (
                    pair.first().and_then(as_text),
                    pair.get(1).and_then(as_text),
                ),
                _ => (None, None),
            };
            if let (Some(a), Some(b)) = (from, to) {
                if let (Some(&a), Some(&b)) = (ids.get(&a), ids.get(&b)) {
                    edges.insert((a, b));
                }
            }
        }
    }
    for (a, succ) in successor_lists {
        for s in succ {
            if let Some(&b) = ids.get(&s) {
                if edges.len() < MAX_EDGES {
                    edges.insert((a, b));
                }
            }
        }
    }
    graph.edges = edges.into_iter().collect();
    Ok(graph)
}

/// A call-graph answer as `(caller, callee)` pairs. With `caller` set (a per-function
/// question) every edge gets that caller, whatever the answer says.
pub fn parse_call_graph(
    text: &str,
    caller: Option<&str>,
) -> Result<BTreeSet<(String, String)>, NormaliseError> {
    let (obj, _) = object(text)?;
    let items = list(
        &obj,
        &["calls", "edges", "call_graph", "callgraph", "callees"],
    )
    .ok_or_else(|| NormaliseError::Shape("no `calls` list".into()))?;
    let mut out = BTreeSet::new();
    for item in items.iter().take(MAX_ITEMS) {
        let (from, to) = match item {
            Value::String(s) => (None, Some(s.clone())),
            Value::Array(pair) if pair.len() >= 2 => (
                pair.first().and_then(as_text),
                pair.get(1).and_then(as_text),
            ),
            Value::Object(o) => {
                let resolved = member(o, &["resolved", "resolved_to", "definition"])
                    .and_then(as_text)
                    .filter(|s| !s.trim().is_empty() && s.trim() != "null");
                let written = member(o, &["callee", "target", "to", "name", "function", "call"])
                    .and_then(as_text);
                (
                    member(o, &["caller", "source", "from"]).and_then(as_text),
                    resolved.or(written),
                )
            }
            _ => (None, None),
        };
        let Some(to) = to.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) else {
            continue;
        };
        let from = match caller {
            Some(c) => c.to_string(),
            None => match from {
                Some(f) if !f.trim().is_empty() => f.trim().to_string(),
                _ => continue,
            },
        };
        out.insert((from, to));
    }
    Ok(out)
}

fn verdict_of(v: &Value) -> Verdict {
    match v {
        Value::Bool(true) => Verdict::Yes,
        Value::Bool(false) => Verdict::No,
        Value::String(s) => parse_verdict(s),
        Value::Number(n) if n.as_u64() == Some(1) => Verdict::Yes,
        Value::Number(n) if n.as_u64() == Some(0) => Verdict::No,
        _ => Verdict::Unknown,
    }
}

/// Answers to numbered yes/no questions: `{"<list>": [{"id": 1, "<verdict>": "yes"}]}` or
/// `{"1": "yes"}`. Items without an id are matched by `name` against `names` (name → id).
/// Ids not answered are absent (the caller treats them as unknown); the first answer for an
/// id wins.
pub fn parse_question_answers(
    text: &str,
    list_names: &[&str],
    verdict_names: &[&str],
    names: &BTreeMap<String, u64>,
) -> Result<BTreeMap<u64, Verdict>, NormaliseError> {
    let (obj, _) = object(text)?;
    let mut out = BTreeMap::new();
    if let Some(items) = list(&obj, list_names) {
        for item in items.iter().take(MAX_ITEMS) {
            let Value::Object(o) = item else { continue };
            let id = member(o, &["id", "question", "qid", "index"])
                .and_then(as_line)
                .map(|n| n as u64)
                .or_else(|| {
                    member(o, &["name", "variable", "var"])
                        .and_then(as_text)
                        .and_then(|n| names.get(n.trim().trim_matches('`')).copied())
                });
            let Some(id) = id else { continue };
            let verdict = member(o, verdict_names)
                .map(verdict_of)
                .unwrap_or(Verdict::Unknown);
            out.entry(id).or_insert(verdict);
        }
        return Ok(out);
    }
    // `{"1": "yes", "2": "no"}` or `{"x": true}`.
    for (k, v) in obj.iter().take(MAX_ITEMS) {
        let id = k
            .trim()
            .parse::<u64>()
            .ok()
            .or_else(|| names.get(k.trim()).copied());
        if let Some(id) = id {
            out.entry(id).or_insert(verdict_of(v));
        }
    }
    if out.is_empty() {
        return Err(NormaliseError::Shape(format!(
            "no `{}` list",
            list_names.first().copied().unwrap_or("answers")
        )));
    }
    Ok(out)
}

/// Normalises a points-to target: `&x` → `x`, heap objects (`heap@4`, `malloc@4`,
/// `heap (line 4)`, `malloc at line 4`, `heap_4`, `new@4`) → `heap@4`.
pub fn normalise_target(t: &str) -> String {
    let t = t.trim().trim_start_matches('&').trim();
    let lower = t.to_ascii_lowercase();
    let heapish = [
        "heap", "malloc", "calloc", "realloc", "strdup", "new", "alloc",
    ]
    .iter()
    .any(|h| lower.starts_with(h));
    if heapish {
        let digits: String = lower
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(n) = digits.parse::<u64>() {
            return format!("heap@{n}");
        }
        return "heap".to_string();
    }
    t.chars().take(200).collect()
}

/// Normalises a pointer name: `*p` → `p`, `int *p` → `p`.
pub fn normalise_pointer(p: &str) -> String {
    let p = p.trim().trim_start_matches(['*', '&']).trim();
    p.rsplit([' ', '*', '&'])
        .next()
        .unwrap_or(p)
        .chars()
        .take(200)
        .collect()
}

/// A points-to answer (see the module docs). Pointers with no targets are kept (empty).
pub fn parse_points_to(text: &str) -> Result<PointsToMap, NormaliseError> {
    let (obj, _) = object(text)?;
    let mut out = PointsToMap::new();
    let targets_of = |v: &Value| -> BTreeSet<String> {
        match v {
            Value::Array(ts) => ts
                .iter()
                .take(MAX_ITEMS)
                .filter_map(as_text)
                .map(|t| normalise_target(&t))
                .filter(|t| !t.is_empty())
                .collect(),
            Value::String(s) => [normalise_target(s)]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect(),
            _ => BTreeSet::new(),
        }
    };
    match member(
        &obj,
        &["points_to", "pointsto", "points_to_sets", "pointers"],
    ) {
        Some(Value::Array(items)) => {
            for item in items.iter().take(MAX_ITEMS) {
                let Value::Object(o) = item else { continue };
                let Some(p) = member(o, &["pointer", "variable", "var", "name"]).and_then(as_text)
                else {
                    continue;
                };
                let p = normalise_pointer(&p);
                if p.is_empty() {
                    continue;
                }
                let ts = member(o, &["targets", "points_to", "set", "objects"])
                    .map(targets_of)
                    .unwrap_or_default();
                out.entry(p).or_default().extend(ts);
            }
        }
        Some(Value::Object(m)) => {
            for (p, v) in m.iter().take(MAX_ITEMS) {
                let p = normalise_pointer(p);
                if !p.is_empty() {
                    out.entry(p).or_default().extend(targets_of(v));
                }
            }
        }
        _ => return Err(NormaliseError::Shape("no `points_to` list".into())),
    }
    Ok(out)
}

/// Expression-match candidates, best first (by `rank`, then answer order).
pub fn parse_expression_matches(text: &str) -> Result<Vec<(usize, usize)>, NormaliseError> {
    let (obj, _) = object(text)?;
    let items = list(&obj, &["matches", "candidates", "locations"])
        .ok_or_else(|| NormaliseError::Shape("no `matches` list".into()))?;
    let mut ranked: Vec<(u64, usize, (usize, usize))> = Vec::new();
    for (pos, item) in items.iter().take(MAX_ITEMS).enumerate() {
        let Value::Object(o) = item else { continue };
        let Some(s) = member(o, &["start_line", "line", "start"]).and_then(as_line) else {
            continue;
        };
        let e = member(o, &["end_line", "end"])
            .and_then(as_line)
            .unwrap_or(s)
            .max(s);
        let rank = member(o, &["rank"])
            .and_then(as_line)
            .map(|r| r as u64)
            .unwrap_or(u64::MAX);
        ranked.push((rank, pos, (s, e)));
    }
    ranked.sort();
    Ok(ranked.into_iter().map(|(_, _, r)| r).collect())
}

/// Hit@k: whether one of the first `k` candidates overlaps the gold line range.
pub fn hit_at(candidates: &[(usize, usize)], gold: (usize, usize), k: usize) -> bool {
    candidates
        .iter()
        .take(k)
        .any(|&(s, e)| s <= gold.1 && gold.0 <= e)
}

/// A single verdict answer (`verdict`, `equivalent`, `answer`, ... or free text).
pub fn parse_single_verdict(text: &str) -> Verdict {
    parse_verdict(text)
}

/// The answer to one yes/no question about a taint flow, with the model's reasoning.
///
/// Accepted: a JSON object `{"answer": "yes"|"no"|"unknown", "reasoning": "..."}` (also
/// `verdict`, `reachable`, ... as verdict keys, booleans, and `explanation` for the
/// reasoning), or free text ("Yes, the value reaches ...", "Answer: no"). A JSON object
/// without any verdict key, or an empty answer, cannot be read. The verdict comes from the
/// answer field only: words inside the reasoning never decide it.
pub fn parse_flow_answer(text: &str) -> Result<(Verdict, Option<String>), NormaliseError> {
    if text.trim().is_empty() {
        return Err(NormaliseError::Shape("the answer is empty".into()));
    }
    let reasoning_of = |m: &Map<String, Value>| {
        ["reasoning", "explanation", "reason", "rationale"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str))
            .map(|r| {
                r.chars()
                    .take(super::engine::MAX_REASONING_CHARS)
                    .collect::<String>()
            })
    };
    if let Ok(a) = extract_object(text) {
        if let Value::Object(m) = &a.value {
            const KEYS: [&str; 6] = [
                "answer",
                "verdict",
                "reachable",
                "flows",
                "tainted",
                "result",
            ];
            let hit = KEYS.iter().find_map(|k| {
                m.iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(k))
                    .map(|(_, v)| v)
            });
            let verdict = match hit {
                Some(Value::Bool(b)) => Some(if *b { Verdict::Yes } else { Verdict::No }),
                Some(Value::String(s)) => Some(parse_verdict(s)),
                Some(Value::Null) => Some(Verdict::Unknown),
                _ => None,
            };
            return match verdict {
                Some(v) => Ok((v, reasoning_of(m))),
                None => Err(NormaliseError::Shape(
                    "no `answer` (yes, no or unknown) in the JSON answer".into(),
                )),
            };
        }
    }
    let reasoning: String = text
        .trim()
        .chars()
        .take(super::engine::MAX_REASONING_CHARS)
        .collect();
    Ok((parse_verdict(text), Some(reasoning)))
}

/// A flaky-test category, matched loosely (`"Async Wait"`, `"order-dependency"`).
pub fn parse_flaky_category(text: &str) -> Option<&'static str> {
    let raw = match object(text) {
        Ok((obj, _)) => member(&obj, &["category", "root_cause", "label", "answer"])
            .and_then(as_text)
            .unwrap_or_default(),
        Err(_) => text.to_string(),
    };
    let norm = squash(&raw);
    if norm.is_empty() {
        return None;
    }
    if let Some(c) = FLAKY_CATEGORIES.iter().find(|c| squash(c) == norm) {
        return Some(c);
    }
    let aliases: [(&str, &str); 8] = [
        ("orderdependency", "test_order_dependency"),
        ("testorder", "test_order_dependency"),
        ("unorderedcollections", "unordered_collection"),
        ("timeout", "test_case_timeout"),
        ("random", "randomness"),
        ("float", "floating_point"),
        ("platform", "platform_dependency"),
        ("async", "async_wait"),
    ];
    aliases
        .iter()
        .find(|(a, _)| norm.contains(a))
        .map(|(_, c)| *c)
        .or_else(|| {
            FLAKY_CATEGORIES
                .iter()
                .find(|c| norm.contains(&squash(c)))
                .copied()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_answer_with_aliases_and_dangling_edges() {
        let text = r#"Here you go:
```json
{"graph": {"Nodes": [{"id": 1, "type": "Entry"}, {"id": "b", "node_type": "IfStatement", "line": "3"},
  {"id": "c", "type": "statement", "text": "return x;", "line": 4}, {"id": "x", "type": "exit", "line": 9}],
 "Edges": [{"source": 1, "target": "b"}, ["b", "c"], {"from": "c", "to": "x"}, {"from": "c", "to": "nowhere"}]}}
```"#;
        let g = parse_cfg(text).unwrap();
        let cats: Vec<CfgCategory> = g.nodes.iter().map(|n| n.category).collect();
        assert_eq!(
            cats,
            [
                CfgCategory::Entry,
                CfgCategory::Branch,
                CfgCategory::Jump,
                CfgCategory::Exit
            ]
        );
        assert_eq!(g.nodes[1].spans, [(3, 3)]);
        assert!(g.nodes[3].spans.is_empty());
        assert_eq!(g.edges, [(0, 1), (1, 2), (2, 3)]);
    }

    #[test]
    fn cfg_answer_without_nodes_is_a_shape_error() {
        assert!(matches!(
            parse_cfg(r#"{"tier": "confirmed"}"#),
            Err(NormaliseError::Shape(_))
        ));
        assert!(matches!(
            parse_cfg("no json"),
            Err(NormaliseError::Answer(_))
        ));
    }

    #[test]
    fn call_graph_prefers_resolved_names_and_forces_the_caller() {
        let text = r#"{"calls": [{"callee": "self.render", "resolved": "Report.render"},
            {"callee": "print", "resolved": null}, {"caller": "other", "callee": "len"}, "open", {"callee": ""}]}"#;
        let e = parse_call_graph(text, Some("main")).unwrap();
        let callees: Vec<&str> = e.iter().map(|(_, b)| b.as_str()).collect();
        assert_eq!(callees, ["Report.render", "len", "open", "print"]);
        assert!(e.iter().all(|(a, _)| a == "main"));
        let e = parse_call_graph(
            r#"{"edges": [["a", "b"], {"caller": "b", "callee": "c"}]}"#,
            None,
        )
        .unwrap();
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn question_answers_by_id_name_or_map() {
        let names = BTreeMap::from([("x".to_string(), 7u64)]);
        let a = parse_question_answers(
            r#"{"answers": [{"id": 1, "verdict": "Yes"}, {"id": "2", "verdict": false}, {"id": 1, "verdict": "no"}, {"name": "x", "verdict": "unknown"}]}"#,
            &["answers"],
            &["verdict"],
            &names,
        )
        .unwrap();
        assert_eq!(
            a,
            BTreeMap::from([(1, Verdict::Yes), (2, Verdict::No), (7, Verdict::Unknown)])
        );
        let a = parse_question_answers(
            r#"{"1": "yes", "x": true}"#,
            &["answers"],
            &["verdict"],
            &names,
        )
        .unwrap();
        assert_eq!(a, BTreeMap::from([(1, Verdict::Yes), (7, Verdict::Yes)]));
        assert!(parse_question_answers("{}", &["answers"], &["verdict"], &names).is_err());
    }

    #[test]
    fn points_to_targets_are_normalised() {
        let p = parse_points_to(
            r#"{"points_to": [{"pointer": "*p", "targets": ["&x", "malloc at line 4", "heap_9"]}, {"pointer": "q", "targets": []}]}"#,
        )
        .unwrap();
        assert_eq!(
            p["p"].iter().map(String::as_str).collect::<Vec<_>>(),
            ["heap@4", "heap@9", "x"]
        );
        assert!(p["q"].is_empty());
        let p = parse_points_to(r#"{"points_to": {"int *r": "y"}}"#).unwrap();
        assert_eq!(p["r"].iter().next().map(String::as_str), Some("y"));
    }

    #[test]
    fn expression_matches_and_hits() {
        let m = parse_expression_matches(
            r#"{"matches": [{"rank": 2, "start_line": 9, "end_line": 9}, {"rank": 1, "start_line": 3, "end_line": 4}]}"#,
        )
        .unwrap();
        assert_eq!(m, [(3, 4), (9, 9)]);
        assert!(hit_at(&m, (4, 6), 1));
        assert!(!hit_at(&m, (9, 9), 1));
        assert!(hit_at(&m, (9, 9), 2));
    }

    #[test]
    fn flaky_categories_match_loosely() {
        assert_eq!(
            parse_flaky_category(r#"{"category": "Async Wait"}"#),
            Some("async_wait")
        );
        assert_eq!(
            parse_flaky_category(r#"{"category": "order-dependency"}"#),
            Some("test_order_dependency")
        );
        assert_eq!(parse_flaky_category(r#"{"category": "cosmic rays"}"#), None);
    }

    #[test]
    fn ast_answer_reads_the_ast_member() {
        let n = parse_ast(r#"{"ast": {"type": "FunctionDef", "value": "f", "children": [{"type": "Return", "value": "", "children": []}]}}"#)
            .unwrap();
        assert_eq!(n.compact(), "(FUNCTION f (RETURN return))");
    }
}
