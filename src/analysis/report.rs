//! The `crosscheck analyze` JSON contract, as serde types, and its assembly from the analyses.
//!
//! The contract is stable: later work adds keys, never removes or renames them. Its JSON Schema
//! is `src/schema/analyze.schema.json` (printed by `crosscheck schema analyze`), and tests
//! validate real output against it.

use super::callgraph::{build_call_graph, CallEdge, SourceUnit};
use super::cfg::{build_cfg_with_unreachable, Cfg, EdgeKind, NodeKind};
use super::dataflow::analyze_cfg;
use super::filerole::{FileRole, RoleReport};
use super::findings::{self, Finding};
use super::pointsto::{analyze_points_to, PointsToEntry};
use super::rules::Severity;
use super::taint::{analyze_taint, TaintFlow, TaintSpecs, TaintedVariable};
use crate::syntax::functions::FunctionKind;
use crate::syntax::parse::SourceError;
use crate::syntax::{Cancel, Language, ParsedFile};
use serde::Serialize;
use std::collections::BTreeMap;

/// The JSON Schema of the `analyze` output.
pub const ANALYZE_SCHEMA: &str = include_str!("../schema/analyze.schema.json");

#[derive(Debug, Clone, Serialize)]
pub struct AnalyzeReport {
    pub files: Vec<FileReport>,
    pub call_graph: Vec<CallEdge>,
    /// Unsanitised taint flows of the whole workspace, sorted by sink then source.
    pub taint_flows: Vec<TaintFlow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub file: String,
    /// `null` when the language could not be determined.
    pub language: Option<Language>,
    pub functions: Vec<std::sync::Arc<FunctionReport>>,
    pub errors: Vec<SourceError>,
    /// True when the file was analysed (possibly partially); false when it was refused
    /// (unreadable, binary, not UTF-8, too large, unknown language).
    pub analysed: bool,
    /// Variables holding tainted data after an assignment (`function` null at module level).
    pub tainted_variables: Vec<TaintedVariable>,
    /// May-point-to sets of the file's variables (C and C++ files only).
    pub points_to: Vec<PointsToEntry>,
    /// Problems found (taint flows ending here, unreachable code, syntactic rules), sorted by
    /// line.
    pub findings: Vec<Finding>,
    /// What part of the project the file is (`product`, `test`, `example`, `script`, `build`,
    /// `vendored`, `generated`, `minified`; [`FileRole`]). The analysis sets what the text
    /// shows (minified, generated); the front ends add what the path below the analysed root
    /// shows ([`FileReport::set_role`]).
    pub role: FileRole,
}

impl FileReport {
    /// Records the file's role and applies it: minified and generated files drop the CFG
    /// lints, and findings in a file whose role `profile` does not report are notes.
    pub fn set_role(&mut self, role: FileRole, profile: &RoleReport) {
        self.role = role;
        if !role.runs_cfg_lints() {
            self.findings.retain(|f| f.rule != CFG_LINT);
        }
        if !profile.reports(role) {
            for f in &mut self.findings {
                f.severity = Severity::Note;
            }
        }
    }
}

/// The rule of the CFG lint that minified and generated files skip.
const CFG_LINT: &str = "unreachable-code";

#[derive(Debug, Clone, Serialize)]
pub struct FunctionReport {
    pub name: String,
    pub signature: String,
    pub kind: FunctionKind,
    pub start_line: usize,
    pub end_line: usize,
    pub cfg: CfgReport,
    /// E - N + 2 of `cfg`.
    pub cyclomatic: i64,
    /// Variable -> variables it depends on, transitively (sorted).
    pub data_dependencies: BTreeMap<String, Vec<String>>,
    /// True when syntax errors, depth limits or cancellation made the result partial.
    pub partial: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CfgReport {
    pub nodes: Vec<CfgNodeReport>,
    pub edges: Vec<CfgEdgeReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CfgNodeReport {
    pub id: usize,
    pub kind: NodeKind,
    pub line: usize,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CfgEdgeReport {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

impl CfgReport {
    pub fn from_cfg(cfg: &Cfg) -> CfgReport {
        let nodes = cfg
            .graph
            .node_indices()
            .map(|i| {
                let n = &cfg.graph[i];
                CfgNodeReport {
                    id: i.index(),
                    kind: n.kind,
                    line: n.line,
                    text: n.text.clone(),
                }
            })
            .collect();
        let mut edges: Vec<CfgEdgeReport> = cfg
            .graph
            .edge_indices()
            .filter_map(|e| {
                let (a, b) = cfg.graph.edge_endpoints(e)?;
                Some(CfgEdgeReport {
                    from: a.index(),
                    to: b.index(),
                    kind: cfg.graph[e],
                })
            })
            .collect();
        edges.sort_by_key(|e| (e.from, e.to, e.kind));
        CfgReport { nodes, edges }
    }
}

/// Analyses every function of one parsed file.
pub fn analyze_parsed(path: &str, file: &ParsedFile, cancel: &Cancel) -> FileReport {
    analyze_parsed_with(path, file, cancel, None)
}

/// What [`analyze_parsed`] finds in one function: its report, its unreachable-code findings
/// and its CFG and data-flow errors.
#[derive(Debug, Clone)]
struct FunctionResult {
    /// Shared with the file reports that list it: a function reused from the memo costs a
    /// pointer, not a copy of its CFG (on a 5,000-line file the copies were a sixth of an
    /// edit's analysis).
    report: std::sync::Arc<FunctionReport>,
    findings: Vec<Finding>,
    errors: Vec<SourceError>,
}

impl FunctionResult {
    /// The result of the same function moved by `delta` lines, when only the report's line
    /// numbers change (findings and errors spell lines inside their messages: a function
    /// that has any is analysed again where it moved).
    fn moved(&self, delta: isize) -> Option<FunctionResult> {
        if !self.findings.is_empty() || !self.errors.is_empty() {
            return None;
        }
        let shift = |l: usize| {
            if l == 0 {
                0
            } else {
                l.saturating_add_signed(delta).max(1)
            }
        };
        let mut r = self.clone();
        let report = std::sync::Arc::make_mut(&mut r.report);
        report.start_line = shift(report.start_line);
        report.end_line = shift(report.end_line);
        for n in &mut report.cfg.nodes {
            n.line = shift(n.line);
        }
        Some(r)
    }
}

/// Per-function results of [`analyze_parsed_with`] kept between analyses of one document, so
/// an edit re-analyses only the functions whose text (or context) changed. The key (exact,
/// see `memo_key`) is everything a function's CFG and data flow read: its text and start column, names,
/// kind, parameters, the file's language and imported names, and for a function whose subtree
/// has a syntax error the shape of that subtree (error recovery may shape the same text
/// differently). Results of cancelled parses are not kept. A function that moved keeps its result when
/// only line numbers change ([`FunctionResult::moved`]). Each analysis keeps exactly the
/// entries it used, so the memo holds at most one entry per function of the last version.
#[derive(Debug, Default)]
pub struct FunctionMemo {
    entries: std::collections::HashMap<String, std::sync::Arc<FunctionResult>>,
    /// Functions analysed / reused by the last analysis (for tests and traces).
    pub analysed: usize,
    pub reused: usize,
    /// The file-local taint analysis's per-function scans (see `taint::TaintMemo`).
    pub taint: crate::analysis::taint::TaintMemo,
}

/// The exact key (not a hash: a collision would reuse a wrong result silently); its size is
/// about that of the function's text.
fn memo_key(
    file: &ParsedFile,
    func: &crate::syntax::functions::Function<'_>,
    imports: &str,
) -> String {
    let col = file
        .position(
            func.node.start_byte(),
            crate::syntax::position::ColumnEncoding::Utf8,
        )
        .col;
    let parts = [
        file.node_text(func.node),
        &func.name,
        &func.simple_name,
        func.class.as_deref().unwrap_or("\u{1}"),
        func.container.as_deref().unwrap_or("\u{1}"),
        &func.signature,
        &func.params.join("\u{1}"),
        imports,
    ];
    let mut key = format!("{:?}\u{0}{col}\u{0}{:?}", file.language, func.kind);
    if func.node.has_error() {
        use std::hash::Hasher;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        file.hash_shape(func.node, &mut h);
        key.push_str(&format!("\u{0}shape:{:016x}", h.finish()));
    }
    for p in parts {
        // Length-prefixed, so no two part lists spell the same key.
        key.push_str(&format!("\u{0}{}:", p.len()));
        key.push_str(p);
    }
    key
}

fn analyze_function(
    path: &str,
    file: &ParsedFile,
    func: &crate::syntax::functions::Function<'_>,
    cancel: &Cancel,
) -> FunctionResult {
    let (cfg, unreachable) = build_cfg_with_unreachable(file, func, cancel);
    // A function that does not parse whole has a CFG built around the parser's guesses (a
    // missing `;` after `if (x)` followed by `#if` arms, a macro it misread): "this can never
    // run" would be a claim about the guess, so such functions report no unreachable code.
    let fn_has_syntax_error = func.node.has_error();
    let findings = if fn_has_syntax_error {
        Vec::new()
    } else {
        findings::unreachable_findings(path, &cfg, &unreachable)
    };
    let flow = analyze_cfg(file, func, &cfg, cancel);
    // Duplicates are dropped once, by the file's set of listed errors.
    let errors: Vec<SourceError> = cfg
        .errors
        .iter()
        .chain(flow.errors.iter())
        .cloned()
        .collect();
    FunctionResult {
        report: std::sync::Arc::new(FunctionReport {
            name: func.name.clone(),
            signature: func.signature.clone(),
            kind: func.kind,
            start_line: func.start_line,
            end_line: func.end_line,
            cyclomatic: cfg.cyclomatic(),
            cfg: CfgReport::from_cfg(&cfg),
            data_dependencies: flow
                .dependencies
                .iter()
                .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
                .collect(),
            partial: cfg.partial || flow.partial || fn_has_syntax_error,
        }),
        findings,
        errors,
    }
}

/// [`analyze_parsed`], reusing (and refreshing) a [`FunctionMemo`] when one is given. The
/// result is the same as without the memo (tested on every fixture and on edit sequences).
pub fn analyze_parsed_with(
    path: &str,
    file: &ParsedFile,
    cancel: &Cancel,
    memo: Option<&mut FunctionMemo>,
) -> FileReport {
    let mut errors = file.errors.clone();
    // Errors already listed (a set: a linear `contains` per function made files with many
    // partial functions quadratic).
    let mut listed: std::collections::HashSet<SourceError> = errors.iter().cloned().collect();
    let mut functions = Vec::new();
    let mut found = findings::pattern_findings(path, file, cancel);
    found.extend(findings::syntax_findings(path, file));
    // Error recovery may shape the same text differently: a function whose subtree has an
    // error is keyed by its tree's shape too (`memo_key`), so a syntax error elsewhere in the
    // file (an unknown macro in C) does not stop the other functions' reuse. A cancelled
    // parse is not reused from (nor kept).
    let memo_usable = !file.cancelled;
    let imports = if memo.is_some() && memo_usable {
        file.imported_names()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\u{0}")
    } else {
        String::new()
    };
    let mut kept: std::collections::HashMap<String, std::sync::Arc<FunctionResult>> =
        Default::default();
    let (mut analysed, mut reused) = (0, 0);
    for func in file.functions() {
        if cancel.is_cancelled() {
            errors.push(SourceError {
                line: 0,
                message: "analysis cancelled; results are partial".into(),
            });
            break;
        }
        let key = match (&memo, memo_usable) {
            (Some(_), true) => Some(memo_key(file, func, &imports)),
            _ => None,
        };
        let prior = key.as_ref().and_then(|k| {
            let m = memo.as_deref()?;
            let r = m.entries.get(k).or_else(|| kept.get(k))?;
            let delta = func.start_line as isize - r.report.start_line as isize;
            if delta == 0 {
                Some(std::sync::Arc::clone(r))
            } else {
                r.moved(delta).map(std::sync::Arc::new)
            }
        });
        let result = match prior {
            Some(r) => {
                reused += 1;
                r
            }
            None => {
                analysed += 1;
                std::sync::Arc::new(analyze_function(path, file, func, cancel))
            }
        };
        if let Some(k) = key {
            if !cancel.is_cancelled() {
                kept.insert(k, std::sync::Arc::clone(&result));
            }
        }
        found.extend(result.findings.iter().cloned());
        for e in &result.errors {
            if listed.insert(e.clone()) {
                errors.push(e.clone());
            }
        }
        functions.push(std::sync::Arc::clone(&result.report));
    }
    if let Some(m) = memo {
        if !cancel.is_cancelled() {
            m.entries = kept;
        }
        m.analysed = analysed;
        m.reused = reused;
    }
    errors.sort_by(|a, b| (a.line, &a.message).cmp(&(b.line, &b.message)));
    let role = FileRole::of_content(&file.text).unwrap_or_default();
    if !role.runs_cfg_lints() {
        found.retain(|f| f.rule != CFG_LINT);
    }
    FileReport {
        file: path.to_string(),
        language: Some(file.language),
        functions,
        errors,
        analysed: true,
        tainted_variables: Vec::new(),
        points_to: Vec::new(),
        findings: findings::normalize(found),
        role,
    }
}

/// A file that could not be analysed at all.
pub fn refused_file(path: &str, language: Option<Language>, message: String) -> FileReport {
    FileReport {
        file: path.to_string(),
        language,
        functions: Vec::new(),
        errors: vec![SourceError { line: 0, message }],
        analysed: false,
        tainted_variables: Vec::new(),
        points_to: Vec::new(),
        findings: Vec::new(),
        role: FileRole::Product,
    }
}

/// Builds the whole report with the built-in taint specifications: per-file analyses, the
/// workspace call graph, points-to (C/C++), taint flows and findings.
pub fn build_report(
    parsed: &[(String, ParsedFile)],
    refused: Vec<FileReport>,
    cancel: &Cancel,
) -> AnalyzeReport {
    build_report_with(parsed, refused, TaintSpecs::builtin_shared(), cancel)
}

/// [`build_report`] with given taint specifications (built-in rules merged with user ones).
pub fn build_report_with(
    parsed: &[(String, ParsedFile)],
    refused: Vec<FileReport>,
    specs: &TaintSpecs,
    cancel: &Cancel,
) -> AnalyzeReport {
    let mut files: Vec<FileReport> = parsed
        .iter()
        .map(|(path, f)| analyze_parsed(path, f, cancel))
        .collect();
    let units: Vec<SourceUnit<'_>> = parsed
        .iter()
        .map(|(path, file)| SourceUnit {
            path: path.clone(),
            file,
        })
        .collect();
    let call_graph = build_call_graph(&units, cancel);
    // Points-to over the C and C++ units only (other languages are not modelled).
    let c_units: Vec<SourceUnit<'_>> = units
        .iter()
        .filter(|u| matches!(u.file.language, Language::C | Language::Cpp))
        .map(|u| SourceUnit {
            path: u.path.clone(),
            file: u.file,
        })
        .collect();
    let points_to = (!c_units.is_empty()).then(|| analyze_points_to(&c_units, cancel));
    let taint = analyze_taint(&units, Some(&call_graph), points_to.as_ref(), specs, cancel);
    let by_path: BTreeMap<&str, &ParsedFile> =
        parsed.iter().map(|(p, f)| (p.as_str(), f)).collect();
    for fr in &mut files {
        fr.tainted_variables = taint.tainted_variables_for(&fr.file).to_vec();
        if let Some(pt) = &points_to {
            if matches!(fr.language, Some(Language::C | Language::Cpp)) {
                fr.points_to = pt.entries_for_file(&fr.file);
            }
        }
        let file = by_path.get(fr.file.as_str()).copied();
        let mut all = std::mem::take(&mut fr.findings);
        all.extend(findings::flow_findings(&fr.file, file, &taint.flows));
        fr.findings = findings::normalize(all);
        for e in taint.errors.iter().filter(|e| e.file == fr.file) {
            let err = SourceError {
                line: e.line,
                message: format!("taint: {}", e.message),
            };
            if !fr.errors.contains(&err) {
                fr.errors.push(err);
            }
        }
        fr.errors
            .sort_by(|a, b| (a.line, &a.message).cmp(&(b.line, &b.message)));
    }
    files.extend(refused);
    files.sort_by(|a, b| a.file.cmp(&b.file));
    AnalyzeReport {
        files,
        call_graph,
        taint_flows: taint.flows,
    }
}
