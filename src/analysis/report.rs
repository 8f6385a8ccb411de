//! The `crosscheck analyze` JSON contract, as serde types, and its assembly from the analyses.
//!
//! The contract is stable: later work adds keys, never removes or renames them. Its JSON Schema
//! is `src/schema/analyze.schema.json` (printed by `crosscheck schema analyze`), and tests
//! validate real output against it.

use super::callgraph::{build_call_graph, CallEdge, SourceUnit};
use super::cfg::{build_cfg_with_unreachable, Cfg, EdgeKind, NodeKind};
use super::dataflow::analyze_cfg;
use super::findings::{self, Finding};
use super::pointsto::{analyze_points_to, PointsToEntry};
use super::taint::{analyze_taint, TaintFlow, TaintSpecs, TaintedVariable};
use crate::syntax::functions::{collect_functions, FunctionKind};
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
    pub functions: Vec<FunctionReport>,
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
}

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
    let mut errors = file.errors.clone();
    // Errors already listed (a set: a linear `contains` per function made files with many
    // partial functions quadratic).
    let mut listed: std::collections::HashSet<SourceError> = errors.iter().cloned().collect();
    let mut functions = Vec::new();
    let mut found = findings::pattern_findings(path, file, cancel);
    for func in collect_functions(file) {
        if cancel.is_cancelled() {
            errors.push(SourceError {
                line: 0,
                message: "analysis cancelled; results are partial".into(),
            });
            break;
        }
        let (cfg, unreachable) = build_cfg_with_unreachable(file, &func, cancel);
        found.extend(findings::unreachable_findings(path, &cfg, &unreachable));
        let flow = analyze_cfg(file, &func, &cfg, cancel);
        for e in cfg.errors.iter().chain(flow.errors.iter()) {
            if listed.insert(e.clone()) {
                errors.push(e.clone());
            }
        }
        let fn_has_syntax_error = func.node.has_error();
        functions.push(FunctionReport {
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
        });
    }
    errors.sort_by(|a, b| (a.line, &a.message).cmp(&(b.line, &b.message)));
    FileReport {
        file: path.to_string(),
        language: Some(file.language),
        functions,
        errors,
        analysed: true,
        tainted_variables: Vec::new(),
        points_to: Vec::new(),
        findings: findings::normalize(found),
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
    }
}

/// Builds the whole report with the built-in taint specifications: per-file analyses, the
/// workspace call graph, points-to (C/C++), taint flows and findings.
pub fn build_report(
    parsed: &[(String, ParsedFile)],
    refused: Vec<FileReport>,
    cancel: &Cancel,
) -> AnalyzeReport {
    build_report_with(parsed, refused, &TaintSpecs::builtin(), cancel)
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
