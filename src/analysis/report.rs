//! The `crosscheck analyze` JSON contract, as serde types, and its assembly from the analyses.
//!
//! The contract is stable: later work adds keys, never removes or renames them. Its JSON Schema
//! is `src/schema/analyze.schema.json` (printed by `crosscheck schema analyze`), and tests
//! validate real output against it.

use super::callgraph::{build_call_graph, CallEdge, SourceUnit};
use super::cfg::{build_cfg, Cfg, EdgeKind, NodeKind};
use super::dataflow::analyze_data_flow;
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
    let mut functions = Vec::new();
    for func in collect_functions(file) {
        if cancel.is_cancelled() {
            errors.push(SourceError {
                line: 0,
                message: "analysis cancelled; results are partial".into(),
            });
            break;
        }
        let cfg = build_cfg(file, &func, cancel);
        let flow = analyze_data_flow(file, &func, cancel);
        for e in cfg.errors.iter().chain(flow.errors.iter()) {
            if !errors.contains(e) {
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
    }
}

/// Builds the whole report: per-file analyses plus the workspace call graph.
pub fn build_report(
    parsed: &[(String, ParsedFile)],
    refused: Vec<FileReport>,
    cancel: &Cancel,
) -> AnalyzeReport {
    let mut files: Vec<FileReport> = parsed
        .iter()
        .map(|(path, f)| analyze_parsed(path, f, cancel))
        .collect();
    files.extend(refused);
    files.sort_by(|a, b| a.file.cmp(&b.file));
    let units: Vec<SourceUnit<'_>> = parsed
        .iter()
        .map(|(path, file)| SourceUnit {
            path: path.clone(),
            file,
        })
        .collect();
    let call_graph = build_call_graph(&units, cancel);
    AnalyzeReport { files, call_graph }
}
