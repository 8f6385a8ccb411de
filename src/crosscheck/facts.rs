//! The analyzer's side of a cross-check: for one function and task, the prompt inputs (what
//! the model sees) and the reference (the deterministic facts its answer is scored against).
//! Pure and deterministic; polls [`Cancel`] through the analyses it runs.
//!
//! Per task:
//!
//! * **ast**: the normalised tree of the function ([`normalize_function`]).
//! * **cfg**: the function's CFG ([`build_cfg`]) with lines relative to the function.
//! * **call_graph**: the file's call graph ([`build_call_graph`] over the one file); the
//!   reference is the function's outgoing edges plus those of lambdas written in it (their
//!   calls are attributed to the function; nested *named* functions are asked about
//!   separately). The model also sees the file's other functions as "callee summaries".
//! * **data_dependency**: questions "is T data-dependent on S?" for T a variable the
//!   function defines and S another variable it mentions; the analyzer's answer is the
//!   transitive dependency relation ([`analyze_data_flow`]). At most `max_questions`
//!   questions: positives and negatives alternately in sorted order (balanced as far as
//!   possible), then numbered in (T, S) order so the numbering reveals nothing.
//! * **taint**: the function's variables with the analyzer's tainted set, from a
//!   [`TaintOracle`] (the taint analysis plugs in there); without one, the task is refused.
//! * **points_to** (C/C++): the file's points-to sets ([`analyze_file`]) projected on the
//!   function: pointers that are its locals or parameters, targets visible in it (its locals,
//!   globals, functions, and heap objects allocated in it, renamed `heap@LINE` with the line
//!   relative to the function; fields as `s.f`, a heap block's as `heap@LINE.f`).

use super::names::tokens;
use super::prompts::{CodeUnit, FunctionInfo, PromptInputs};
use super::scores::callgraph::{code_tokens, CallGraphFacts};
use super::scores::cfg::CfgGraph;
use super::scores::sets::PointsToMap;
use super::task::Task;
use crate::analysis::callgraph::{build_call_graph, CallEdge, SourceUnit};
use crate::analysis::cfg::build_cfg;
use crate::analysis::dataflow::analyze_data_flow;
use crate::analysis::pointsto::{analyze_file, HeapSite, PointsTo, TargetKind};
use crate::syntax::functions::{Function, FunctionKind};
use crate::syntax::normalize::{normalize_function, NormNode};
use crate::syntax::{Cancel, Language, ParsedFile};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt;

/// Default cap on yes/no questions per prompt.
pub const DEFAULT_MAX_QUESTIONS: usize = 40;
/// At most this many callee summaries are shown.
pub const MAX_CALLEE_SUMMARIES: usize = 100;
/// Variable names longer than this are not asked about.
const MAX_NAME_CHARS: usize = 80;

/// Why a question could not be prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareError {
    /// The task does not apply (points-to outside C/C++, dynamic tasks).
    Unsupported(String),
    /// The analysis the task needs is not available in this build.
    Unavailable(String),
}

impl fmt::Display for PrepareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareError::Unsupported(m) | PrepareError::Unavailable(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PrepareError {}

/// The analyzer's tainted variables of one function.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TaintFacts {
    /// The variables to ask about (the function's variables).
    pub variables: BTreeSet<String>,
    /// The subset the analyzer finds tainted.
    pub tainted: BTreeSet<String>,
    /// Source descriptions for the prompt (`input()`, `request.args`, ...).
    pub sources: Vec<String>,
    pub partial: bool,
}

/// Where the taint analysis plugs in: the tainted variables of a function.
pub trait TaintOracle: Send + Sync {
    /// `None` when the oracle has nothing to say about this function (e.g. its language).
    fn taint_facts(
        &self,
        path: &str,
        file: &ParsedFile,
        func: &Function<'_>,
        cancel: &Cancel,
    ) -> Option<TaintFacts>;
}

/// One yes/no question with the analyzer's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemQuestion {
    pub id: u64,
    /// Data dependency: the dependent variable; taint: the variable.
    pub target: String,
    /// Data dependency: the variable depended on; taint: empty.
    pub source: String,
    pub expected: bool,
}

/// The deterministic facts an answer is scored against.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reference {
    Ast {
        tree: NormNode,
        language: Language,
    },
    Cfg {
        graph: CfgGraph,
        partial: bool,
    },
    CallGraph {
        facts: CallGraphFacts,
        caller: String,
        #[serde(skip)]
        code_tokens: BTreeSet<String>,
        partial: bool,
    },
    DataDependency {
        questions: Vec<ItemQuestion>,
        partial: bool,
    },
    Taint {
        questions: Vec<ItemQuestion>,
        partial: bool,
    },
    PointsTo {
        map: PointsToMap,
        partial: bool,
    },
    /// One taint flow the analyzer reports: the question is whether the source's value can
    /// reach the sink without sanitisation; the analyzer's answer is yes.
    Flow {
        flow: FlowQuestion,
        partial: bool,
    },
}

/// One element of a taint flow's path as shown to the model: the code unit it is in
/// (index into the question's code units), the line relative to that unit, and its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct FlowStep {
    /// `source`, `step` or `sink`.
    pub role: String,
    /// Index of the code unit (0-based) the step is in.
    pub unit: usize,
    /// 1-based line within that unit.
    pub line: usize,
    /// The expression or statement text (bounded).
    pub text: String,
}

/// The question about one taint flow (code-free apart from the quoted path expressions,
/// which the model sees in the code anyway).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowQuestion {
    /// The rule id (`command-injection`, ...).
    pub rule: String,
    /// What the sink does, for the prompt (`a shell command`, ...).
    pub sink_kind: String,
    /// Source first, sink last.
    pub steps: Vec<FlowStep>,
}

/// A located path element of a finding: file, 1-based line in it, role and text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PathElement {
    pub file: String,
    pub line: usize,
    pub role: String,
    pub text: String,
}

/// The path of a taint finding from its evidence (source, steps, sink), as questions use it.
pub fn flow_path(evidence: &[crate::analysis::findings::Evidence]) -> Vec<PathElement> {
    evidence
        .iter()
        .map(|e| PathElement {
            file: e.file.clone(),
            line: e.line.max(1),
            role: e.role.clone(),
            text: e.text.clone(),
        })
        .collect()
}

/// A code unit a flow passes through: its label, language, text and 1-based first line in
/// its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowUnit {
    pub file: String,
    pub label: String,
    pub language: Language,
    pub text: String,
    pub first_line: usize,
}

/// Lines shown before and after a path element that is outside every function.
const CONTEXT_BEFORE: usize = 8;
const CONTEXT_AFTER: usize = 2;

fn short_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The files a set of flows passes through, with their functions collected once (a document's
/// findings share one, so preparing their questions is linear in the file, not quadratic).
pub struct FlowFiles<'f, 'a> {
    file: &'f dyn Fn(&str) -> Option<&'a ParsedFile>,
    functions: std::collections::BTreeMap<String, Option<(&'a ParsedFile, &'a [Function<'a>])>>,
}

impl<'f, 'a> FlowFiles<'f, 'a> {
    /// `file` gives the parse of any file on a path (elements in files it does not know are
    /// left out of the questions).
    pub fn new(file: &'f dyn Fn(&str) -> Option<&'a ParsedFile>) -> FlowFiles<'f, 'a> {
        FlowFiles {
            file,
            functions: Default::default(),
        }
    }

    fn get(&mut self, path: &str) -> Option<&(&'a ParsedFile, &'a [Function<'a>])> {
        if !self.functions.contains_key(path) {
            // Borrowed from the parse (computed once per parse), never copied per question.
            let entry = (self.file)(path).map(|p| (p, p.functions()));
            self.functions.insert(path.to_string(), entry);
        }
        self.functions.get(path).and_then(Option::as_ref)
    }

    /// The code units a flow's path passes through: for each element, the innermost
    /// function of its file containing its line, else the lines around it (code outside
    /// functions), and whether any of those functions does not parse. `home` is the file the
    /// finding is reported in (its units are labelled without a file name). Units are listed
    /// once, in path order.
    pub fn units(&mut self, home: &str, path: &[PathElement]) -> (Vec<FlowUnit>, bool) {
        let mut units: Vec<FlowUnit> = Vec::new();
        let mut partial = false;
        for e in path {
            let Some((parsed, fns)) = self.get(&e.file) else {
                continue;
            };
            let parsed: &ParsedFile = parsed;
            let inner = crate::syntax::functions::innermost(fns.iter(), e.line, |f| {
                (f.start_line, f.end_line)
            });
            let place = if e.file == home {
                String::new()
            } else {
                format!(" in {}", short_name(&e.file))
            };
            let unit = match inner {
                Some(f) => {
                    partial |= f.node.has_error();
                    FlowUnit {
                        file: e.file.clone(),
                        label: format!("function {}{place}", f.name),
                        language: parsed.language,
                        text: parsed.node_text(f.node).to_string(),
                        first_line: f.start_line,
                    }
                }
                None => {
                    let first = e.line.saturating_sub(CONTEXT_BEFORE).max(1);
                    let body: Vec<&str> = parsed
                        .text
                        .lines()
                        .skip(first - 1)
                        .take(e.line + CONTEXT_AFTER + 1 - first)
                        .collect();
                    let last = first + body.len().saturating_sub(1);
                    FlowUnit {
                        file: e.file.clone(),
                        label: format!("lines {first}-{last}{place}"),
                        language: parsed.language,
                        text: body.join("\n"),
                        first_line: first,
                    }
                }
            };
            if !units.iter().any(|u| {
                u.file == unit.file && u.first_line == unit.first_line && u.text == unit.text
            }) {
                units.push(unit);
            }
        }
        (units, partial)
    }

    /// The question about a taint finding (rule id and path) reported in `home`. The same
    /// question in the editor and in `crosscheck check --llm`.
    pub fn question(
        &mut self,
        home: &str,
        rule: &str,
        path: &[PathElement],
    ) -> Result<Question, PrepareError> {
        let (units, partial) = self.units(home, path);
        let sink_kind = crate::analysis::rules::rule(rule)
            .map(|r| r.name)
            .unwrap_or("a sensitive sink");
        prepare_flow(home, rule, sink_kind, path, &units, partial)
    }
}

/// At most this many path elements are put in a flow question (source, sink and the
/// steps nearest the source).
pub const MAX_FLOW_STEPS: usize = 24;
/// Path element texts are cut at this many characters.
const MAX_STEP_CHARS: usize = 200;

/// Prepares the question about one taint flow (pure). `units` are the code units the path
/// passes through (the functions containing its elements); each element is placed in the
/// innermost unit of its file that contains its line, and elements outside every unit are
/// left out (the sink and source must be placed, else the question is refused). Lines are
/// relative to the unit, so moving code elsewhere in the file does not change the question.
pub fn prepare_flow(
    file: &str,
    rule: &str,
    sink_kind: &str,
    path: &[PathElement],
    units: &[FlowUnit],
    partial: bool,
) -> Result<Question, PrepareError> {
    let place = |e: &PathElement| -> Option<(usize, usize)> {
        units
            .iter()
            .enumerate()
            .filter(|(_, u)| {
                u.file == e.file
                    && u.first_line <= e.line
                    && e.line < u.first_line + u.text.lines().count().max(1)
            })
            .min_by_key(|(_, u)| u.text.len())
            .map(|(i, u)| (i, e.line - u.first_line + 1))
    };
    let (Some(first), Some(last)) = (path.first(), path.last()) else {
        return Err(PrepareError::Unsupported("the flow has no path".into()));
    };
    if place(first).is_none() || place(last).is_none() {
        return Err(PrepareError::Unsupported(
            "the flow's source or sink is outside the code that can be shown".into(),
        ));
    }
    let mut steps: Vec<FlowStep> = Vec::new();
    for (i, e) in path.iter().enumerate() {
        let keep = i == 0 || i + 1 == path.len() || steps.len() + 2 < MAX_FLOW_STEPS;
        if !keep {
            continue;
        }
        let Some((unit, line)) = place(e) else {
            continue;
        };
        let step = FlowStep {
            role: match e.role.as_str() {
                "source" | "sink" => e.role.clone(),
                _ => "step".to_string(),
            },
            unit,
            line,
            text: e.text.chars().take(MAX_STEP_CHARS).collect(),
        };
        if steps.last() != Some(&step) {
            steps.push(step);
        }
    }
    // Only the units the question refers to are shown, renumbered in order of use.
    let mut used: Vec<usize> = Vec::new();
    for s in &steps {
        if !used.contains(&s.unit) {
            used.push(s.unit);
        }
    }
    for s in &mut steps {
        s.unit = used.iter().position(|u| *u == s.unit).unwrap_or(0);
    }
    let code: Vec<CodeUnit> = used
        .iter()
        .filter_map(|&i| units.get(i))
        .map(|u| CodeUnit {
            label: u.label.clone(),
            language: u.language,
            text: u.text.clone(),
        })
        .collect();
    let language = units.get(used[0]).map_or(Language::Python, |u| u.language);
    let flow = FlowQuestion {
        rule: rule.to_string(),
        sink_kind: sink_kind.to_string(),
        steps,
    };
    let labels: Vec<String> = code.iter().map(|c| c.label.clone()).collect();
    let question = json!({
        "flow": {
            "rule": flow.rule,
            "sink_kind": flow.sink_kind,
            "steps": flow.steps.iter().map(|s| json!({
                "role": s.role,
                "unit": labels.get(s.unit).cloned().unwrap_or_default(),
                "line": s.line,
                "text": s.text,
            })).collect::<Vec<_>>(),
        }
    });
    let head = units.get(used[0]);
    let inputs = PromptInputs {
        task: Task::Taint,
        language,
        function: None,
        code,
        question,
        context: Vec::new(),
    };
    Ok(Question {
        inputs,
        reference: Reference::Flow { flow, partial },
        file: file.to_string(),
        function: head.map(|u| u.label.clone()).unwrap_or_default(),
        first_line: head.map_or(1, |u| u.first_line),
    })
}

impl Reference {
    /// The facts as code-free JSON (the `analyzer` member of outputs and records).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Reference::Ast { tree, .. } => json!({ "ast": tree.compact() }),
            Reference::Cfg { graph, partial } => json!({ "cfg": graph, "partial": partial }),
            Reference::CallGraph {
                facts,
                caller,
                partial,
                ..
            } => json!({
                "caller": caller,
                "calls": facts.edges.iter().map(|(_, b)| b).collect::<Vec<_>>(),
                "wrappers": facts.wrappers,
                "partial": partial,
            }),
            Reference::DataDependency { questions, partial } => json!({
                "questions": questions.iter().map(|q| json!({
                    "id": q.id, "target": q.target, "source": q.source, "dependent": q.expected
                })).collect::<Vec<_>>(),
                "partial": partial,
            }),
            Reference::Taint { questions, partial } => json!({
                "variables": questions.iter().map(|q| json!({
                    "id": q.id, "name": q.target, "tainted": q.expected
                })).collect::<Vec<_>>(),
                "partial": partial,
            }),
            Reference::PointsTo { map, partial } => json!({ "points_to": map, "partial": partial }),
            // The analyzer reports the flow: its verdict is yes.
            Reference::Flow { flow, partial } => json!({
                "verdict": "yes",
                "rule": flow.rule,
                "steps": flow.steps.iter().map(|s| json!({"role": s.role, "unit": s.unit, "line": s.line})).collect::<Vec<_>>(),
                "partial": partial,
            }),
        }
    }

    pub fn partial(&self) -> bool {
        match self {
            Reference::Ast { .. } => false,
            Reference::Cfg { partial, .. }
            | Reference::CallGraph { partial, .. }
            | Reference::DataDependency { partial, .. }
            | Reference::Taint { partial, .. }
            | Reference::PointsTo { partial, .. }
            | Reference::Flow { partial, .. } => *partial,
        }
    }
}

/// A prepared question: what the model sees and what its answer is scored against.
#[derive(Debug, Clone)]
pub struct Question {
    pub inputs: PromptInputs,
    pub reference: Reference,
    pub file: String,
    /// Qualified function name.
    pub function: String,
    /// 1-based first line of the function in its file.
    pub first_line: usize,
}

/// A parsed file with the whole-file analyses computed once and shared by its functions.
pub struct FileFacts<'a> {
    pub path: String,
    pub file: &'a ParsedFile,
    pub functions: &'a [Function<'a>],
    call_graph: Option<Vec<CallEdge>>,
    /// What every call-graph question of the file shares (defined names, wrappers over the
    /// file's whole graph; no edges), made once per `FileFacts`: each question used to rebuild
    /// it and copy the function list (on a 5,000-line file with a hundred edited functions,
    /// about 40 ms per edit).
    graph_summary: Option<CallGraphFacts>,
    points_to: Option<PointsTo>,
}

impl<'a> FileFacts<'a> {
    pub fn new(path: &str, file: &'a ParsedFile) -> FileFacts<'a> {
        FileFacts {
            path: path.to_string(),
            file,
            functions: file.functions(),
            call_graph: None,
            graph_summary: None,
            points_to: None,
        }
    }

    /// Functions whose qualified or simple name is `name`.
    pub fn find(&self, name: &str) -> Vec<&Function<'a>> {
        self.functions
            .iter()
            .filter(|f| f.name == name || f.simple_name == name)
            .collect()
    }

    fn call_graph(&mut self, cancel: &Cancel) -> &[CallEdge] {
        if self.call_graph.is_none() {
            let units = [SourceUnit {
                path: self.path.clone(),
                file: self.file,
            }];
            self.call_graph = Some(build_call_graph(&units, cancel));
        }
        self.call_graph.as_deref().unwrap_or(&[])
    }

    /// Fills `call_graph` and `graph_summary`.
    fn summarise_call_graph(&mut self, cancel: &Cancel) {
        if self.graph_summary.is_some() {
            return;
        }
        let whole: BTreeSet<(String, String)> = self
            .call_graph(cancel)
            .iter()
            .map(|e| (e.caller.name.clone(), e.callee.name.clone()))
            .collect();
        let defined: BTreeSet<String> = self.functions.iter().map(|f| f.name.clone()).collect();
        self.graph_summary = Some(CallGraphFacts::new(BTreeSet::new(), defined, &whole));
    }

    fn points_to(&mut self, cancel: &Cancel) -> &PointsTo {
        let path = self.path.clone();
        let file = self.file;
        self.points_to
            .get_or_insert_with(|| analyze_file(&path, file, cancel))
    }
}

/// The function's text from the start of its first line to the end of its last line.
pub fn function_text(file: &ParsedFile, func: &Function<'_>) -> String {
    let text = &file.text;
    let start = func.node.start_byte().min(text.len());
    let end = func.node.end_byte().min(text.len()).max(start);
    let line_start = text
        .get(..start)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let line_end = text
        .get(end..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| end + i);
    text.get(line_start..line_end).unwrap_or("").to_string()
}

fn kind_name(k: FunctionKind) -> &'static str {
    match k {
        FunctionKind::Function => "function",
        FunctionKind::Method => "method",
        FunctionKind::Constructor => "constructor",
        FunctionKind::Lambda => "lambda",
        FunctionKind::Modifier => "modifier",
    }
}

/// A variable name safe to show in a question (identifier characters only, bounded).
fn safe_name(n: &str) -> Option<String> {
    let ok = !n.is_empty()
        && n.chars().count() <= MAX_NAME_CHARS
        && n.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':' | '>' | '-'));
    ok.then(|| n.to_string())
}

/// Chooses at most `cap` questions, alternating positives and negatives in sorted order,
/// then numbers them 1.. in (target, source) order.
fn choose(
    positives: Vec<(String, String)>,
    negatives: Vec<(String, String)>,
    cap: usize,
) -> Vec<ItemQuestion> {
    let mut chosen: Vec<((String, String), bool)> = Vec::new();
    let (mut p, mut n) = (positives.into_iter(), negatives.into_iter());
    let (mut p_done, mut n_done) = (false, false);
    while chosen.len() < cap && !(p_done && n_done) {
        match p.next() {
            Some(x) => chosen.push((x, true)),
            None => p_done = true,
        }
        if chosen.len() >= cap {
            break;
        }
        match n.next() {
            Some(x) => chosen.push((x, false)),
            None => n_done = true,
        }
    }
    chosen.sort();
    chosen
        .into_iter()
        .enumerate()
        .map(|(i, ((target, source), expected))| ItemQuestion {
            id: i as u64 + 1,
            target,
            source,
            expected,
        })
        .collect()
}

/// Options for preparing questions.
#[derive(Debug, Clone, Copy)]
pub struct PrepareOptions {
    pub max_questions: usize,
}

impl Default for PrepareOptions {
    fn default() -> Self {
        PrepareOptions {
            max_questions: DEFAULT_MAX_QUESTIONS,
        }
    }
}

/// Prepares the question about function `index` of `facts` for `task`.
pub fn prepare(
    task: Task,
    facts: &mut FileFacts<'_>,
    index: usize,
    taint: Option<&dyn TaintOracle>,
    options: &PrepareOptions,
    cancel: &Cancel,
) -> Result<Question, PrepareError> {
    let file = facts.file;
    let Some(func) = facts.functions.get(index).cloned() else {
        return Err(PrepareError::Unsupported("no such function".into()));
    };
    let lang = file.language;
    let text = function_text(file, &func);
    let first_line = file.line_of(func.node.start_byte());
    let func_partial = func.node.has_error();
    let mut question = serde_json::Value::Object(Default::default());
    let mut context = Vec::new();
    let reference = match task {
        Task::Ast => Reference::Ast {
            tree: normalize_function(file, &func, cancel).root,
            language: lang,
        },
        Task::Cfg => {
            let cfg = build_cfg(file, &func, cancel);
            Reference::Cfg {
                graph: CfgGraph::from_cfg(&cfg, first_line),
                partial: cfg.partial || func_partial,
            }
        }
        Task::CallGraph => {
            facts.summarise_call_graph(cancel);
            let functions = &facts.functions;
            let edges = facts.call_graph.as_deref().unwrap_or(&[]);
            let summary = facts.graph_summary.as_ref();
            // Lambdas written in `func` (not inside a nested named function).
            let contains = |outer: &Function<'_>, inner: &Function<'_>| {
                outer.node.start_byte() <= inner.node.start_byte()
                    && inner.node.end_byte() <= outer.node.end_byte()
                    && outer.node.id() != inner.node.id()
            };
            let lambdas: BTreeSet<&str> = functions
                .iter()
                .filter(|l| l.kind == FunctionKind::Lambda && contains(&func, l))
                .filter(|l| {
                    !functions.iter().any(|g| {
                        g.kind != FunctionKind::Lambda && contains(&func, g) && contains(g, l)
                    })
                })
                .map(|l| l.name.as_str())
                .collect();
            let own: BTreeSet<(String, String)> = edges
                .iter()
                .filter(|e| {
                    (e.caller.name == func.name
                        && e.caller
                            .signature
                            .as_deref()
                            .is_none_or(|s| s == func.signature))
                        || lambdas.contains(e.caller.name.as_str())
                })
                .map(|e| (func.name.clone(), e.callee.name.clone()))
                .collect();
            for f in functions.iter().filter(|f| f.kind != FunctionKind::Lambda) {
                if context.len() >= MAX_CALLEE_SUMMARIES {
                    break;
                }
                if f.node.id() != func.node.id() {
                    context.push(format!("`{}{}`", f.name, f.signature));
                }
            }
            Reference::CallGraph {
                facts: CallGraphFacts {
                    edges: own,
                    ..summary.cloned().unwrap_or_default()
                },
                caller: func.name.clone(),
                code_tokens: code_tokens(&text),
                partial: func_partial || file.cancelled,
            }
        }
        Task::DataDependency => {
            let flow = analyze_data_flow(file, &func, cancel);
            let mut vars: BTreeSet<String> = BTreeSet::new();
            for (t, deps) in &flow.dependencies {
                vars.insert(t.clone());
                vars.extend(deps.iter().cloned());
            }
            vars.extend(func.params.iter().cloned());
            let vars: Vec<String> = vars.iter().filter_map(|v| safe_name(v)).collect();
            let (mut pos, mut neg) = (Vec::new(), Vec::new());
            for t in flow.dependencies.keys().filter_map(|t| safe_name(t)) {
                let deps = flow.dependencies.get(&t);
                for s in &vars {
                    if *s == t {
                        continue;
                    }
                    if deps.is_some_and(|d| d.contains(s)) {
                        pos.push((t.clone(), s.clone()));
                    } else {
                        neg.push((t.clone(), s.clone()));
                    }
                }
            }
            let questions = choose(pos, neg, options.max_questions);
            question = json!({
                "pairs": questions.iter().map(|q| json!({"id": q.id, "target": q.target, "source": q.source})).collect::<Vec<_>>()
            });
            Reference::DataDependency {
                questions,
                partial: flow.partial || func_partial,
            }
        }
        Task::Taint => {
            let Some(oracle) = taint else {
                return Err(PrepareError::Unavailable(
                    "the taint analysis is not available in this build, so taint answers cannot be cross-checked".into(),
                ));
            };
            let Some(t) = oracle.taint_facts(&facts.path, file, &func, cancel) else {
                return Err(PrepareError::Unsupported(format!(
                    "no taint facts for {} ({})",
                    func.name,
                    lang.name()
                )));
            };
            let (mut pos, mut neg) = (Vec::new(), Vec::new());
            for v in t.variables.iter().filter_map(|v| safe_name(v)) {
                if t.tainted.contains(&v) {
                    pos.push((v, String::new()));
                } else {
                    neg.push((v, String::new()));
                }
            }
            let questions = choose(pos, neg, options.max_questions);
            question = json!({
                "variables": questions.iter().map(|q| json!({"id": q.id, "name": q.target})).collect::<Vec<_>>(),
                "sources": t.sources,
            });
            Reference::Taint {
                questions,
                partial: t.partial || func_partial,
            }
        }
        Task::PointsTo => {
            if !matches!(lang, Language::C | Language::Cpp) {
                return Err(PrepareError::Unsupported(format!(
                    "points-to cross-checks are for C and C++ only, not {}",
                    lang.name()
                )));
            }
            let end_line = file.line_of(func.node.end_byte().saturating_sub(1));
            let name = func.name.clone();
            let pts = facts.points_to(cancel);
            let mut map = PointsToMap::new();
            for e in pts
                .entries()
                .iter()
                .filter(|e| e.function.as_deref() == Some(name.as_str()))
            {
                let mut targets = BTreeSet::new();
                for t in &e.targets {
                    match t.kind {
                        TargetKind::Heap | TargetKind::Field if t.name.contains('@') => {
                            // `malloc@F:L:C` -> `heap@N`, a block's field `malloc@F:L:C.next`
                            // -> `heap@N.next` (N counted from the function's first line).
                            let Some(site) = HeapSite::parse(&t.name) else {
                                continue;
                            };
                            if (first_line..=end_line).contains(&site.line) {
                                let heap = format!("heap@{}", site.line - first_line + 1);
                                targets.insert(match site.fields {
                                    Some(f) => format!("{heap}.{f}"),
                                    None => heap,
                                });
                            }
                        }
                        TargetKind::Heap => {}
                        TargetKind::Var | TargetKind::Field => {
                            if t.function.is_none() || t.function.as_deref() == Some(name.as_str())
                            {
                                targets.insert(t.name.clone());
                            }
                        }
                    }
                }
                if !targets.is_empty() {
                    map.insert(e.var.clone(), targets);
                }
            }
            Reference::PointsTo {
                map,
                partial: pts.partial || func_partial,
            }
        }
        other => {
            return Err(PrepareError::Unsupported(format!(
                "the {other} task has no deterministic reference for one function"
            )))
        }
    };
    let inputs = PromptInputs {
        task,
        language: lang,
        function: Some(FunctionInfo {
            name: func.name.clone(),
            kind: kind_name(func.kind).to_string(),
            params: func.params.clone(),
        }),
        code: vec![CodeUnit {
            label: "function".to_string(),
            language: lang,
            text,
        }],
        question,
        context,
    };
    Ok(Question {
        inputs,
        reference,
        file: facts.path.clone(),
        function: func.name.clone(),
        first_line,
    })
}

/// A stand-in taint oracle built on data dependency: a variable is tainted when it is a
/// source variable (the function's parameters, or variables assigned from a call whose name
/// is in `source_calls`) or depends on one. For tests and demonstrations only: the real
/// taint analysis replaces it.
#[derive(Debug, Clone, Default)]
pub struct DataDependencyTaint {
    /// Callee names (last token) whose results are sources, e.g. `input`, `getenv`.
    pub source_calls: BTreeSet<String>,
    /// Whether parameters are sources.
    pub parameters_are_sources: bool,
}

impl TaintOracle for DataDependencyTaint {
    fn taint_facts(
        &self,
        _path: &str,
        file: &ParsedFile,
        func: &Function<'_>,
        cancel: &Cancel,
    ) -> Option<TaintFacts> {
        let flow = analyze_data_flow(file, func, cancel);
        let mut sources: BTreeSet<String> = BTreeSet::new();
        if self.parameters_are_sources {
            sources.extend(
                func.params
                    .iter()
                    .filter(|p| !matches!(p.as_str(), "self" | "this" | "cls"))
                    .cloned(),
            );
        }
        // Variables defined on a line that calls a source function.
        let lines: Vec<&str> = file.text.lines().collect();
        for def in flow.def_use.keys() {
            let line = lines.get(def.line.saturating_sub(1)).copied().unwrap_or("");
            let calls_source = line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| self.source_calls.contains(w));
            if calls_source {
                sources.insert(def.var.clone());
            }
        }
        let mut variables: BTreeSet<String> = flow.dependencies.keys().cloned().collect();
        variables.extend(
            func.params
                .iter()
                .filter(|p| !matches!(p.as_str(), "self" | "this" | "cls"))
                .cloned(),
        );
        let tainted = variables
            .iter()
            .filter(|v| {
                sources.contains(*v)
                    || flow
                        .dependencies
                        .get(*v)
                        .is_some_and(|d| d.iter().any(|x| sources.contains(x)))
            })
            .cloned()
            .collect();
        let mut described: Vec<String> = self
            .source_calls
            .iter()
            .map(|c| format!("the result of `{c}(...)`"))
            .collect();
        if self.parameters_are_sources {
            described.push("the function's parameters".to_string());
        }
        Some(TaintFacts {
            variables,
            tainted,
            sources: described,
            partial: flow.partial,
        })
    }
}

/// Word tokens of names, exposed for tests of the callee-mention rule.
pub fn name_tokens(name: &str) -> Vec<String> {
    tokens(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_alternate_and_are_numbered_in_sorted_order() {
        let p = |a: &str, b: &str| (a.to_string(), b.to_string());
        let q = choose(
            vec![p("c", "a"), p("c", "b"), p("d", "a")],
            vec![p("a", "c"), p("b", "d")],
            4,
        );
        let got: Vec<(u64, &str, &str, bool)> = q
            .iter()
            .map(|q| (q.id, q.target.as_str(), q.source.as_str(), q.expected))
            .collect();
        assert_eq!(
            got,
            [
                (1, "a", "c", false),
                (2, "b", "d", false),
                (3, "c", "a", true),
                (4, "c", "b", true)
            ]
        );
        assert!(choose(vec![], vec![], 5).is_empty());
        assert_eq!(choose(vec![p("x", "y")], vec![], 5).len(), 1);
    }

    #[test]
    fn heap_names_are_read_from_the_end() {
        let site = HeapSite::parse("malloc@a.b.c:12:5.next.data").expect("a heap field");
        assert_eq!(
            (site.site, site.line, site.fields),
            ("malloc@a.b.c:12:5", 12, Some("next.data"))
        );
        let site = HeapSite::parse("malloc@dir:x/a.c:12:5").expect("a heap block");
        assert_eq!((site.line, site.fields), (12, None));
        assert_eq!(HeapSite::parse("malloc@a.c:3:1").map(|s| s.line), Some(3));
        assert_eq!(HeapSite::parse("garbage"), None);
        assert_eq!(HeapSite::parse("s.next"), None);
        assert_eq!(HeapSite::parse("malloc@a.c:x:y"), None);
    }

    #[test]
    fn function_text_spans_whole_lines() {
        let file = ParsedFile::parse(
            Language::Python,
            "x = 1\nclass A:\n    def f(self):\n        return 1\ny = 2\n",
        );
        let facts = FileFacts::new("a.py", &file);
        let f = facts.find("f");
        assert_eq!(f.len(), 1);
        assert_eq!(
            function_text(&file, f[0]),
            "    def f(self):\n        return 1"
        );
    }
}
