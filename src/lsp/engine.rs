//! Runs the deterministic core on one document snapshot and keeps what the handlers need:
//! the report, per-function facts (byte ranges, CFG summary, content hash) and findings.
//!
//! Pure and synchronous (called on a blocking thread by the server). A panic inside an
//! analysis is caught and turned into an `internal-error` finding: a long-running server must
//! not die on one bad file.

use super::findings::{self, Finding, Severity};
use crate::analysis::cfg::{build_cfg, NodeKind};
use crate::analysis::report::{analyze_parsed_with, CfgReport, FileReport, FunctionMemo};
use crate::syntax::functions::{collect_functions, innermost, FunctionKind};
use crate::syntax::{Cancel, Language, ParsedFile};
use serde::{Deserialize, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Stack of the thread that runs the file-local taint pass (as deep as the server's analysis
/// threads: the interpreter recurses over nested expressions).
const TAINT_STACK_BYTES: usize = 32 * 1024 * 1024;

/// Rule id of a caught internal error.
pub const INTERNAL_ERROR: &str = "internal-error";

/// Counts that summarise a function's control-flow graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CfgSummary {
    /// `branch` nodes (if/elif, switch/match, assertions).
    pub branches: usize,
    /// `loop` nodes.
    pub loops: usize,
    /// Edges into the exit node: the distinct ways the function ends (returns, throws, the
    /// normal end).
    pub exits: usize,
    /// `return` nodes.
    pub returns: usize,
    /// E - N + 2.
    pub cyclomatic: i64,
    pub nodes: usize,
    pub edges: usize,
}

impl CfgSummary {
    pub fn from_report(cfg: &CfgReport, cyclomatic: i64) -> CfgSummary {
        let count = |k: NodeKind| cfg.nodes.iter().filter(|n| n.kind == k).count();
        let exit_ids: Vec<usize> = cfg
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Exit)
            .map(|n| n.id)
            .collect();
        CfgSummary {
            branches: count(NodeKind::Branch),
            loops: count(NodeKind::Loop),
            exits: cfg
                .edges
                .iter()
                .filter(|e| exit_ids.contains(&e.to))
                .count(),
            returns: count(NodeKind::Return),
            cyclomatic,
            nodes: cfg.nodes.len(),
            edges: cfg.edges.len(),
        }
    }
}

/// What the server keeps about one function of a document.
#[derive(Debug, Clone)]
pub struct FunctionFacts {
    /// Unique within the document: qualified name + signature (+ `#n` for duplicates).
    pub id: String,
    pub name: String,
    pub signature: String,
    pub kind: FunctionKind,
    pub start_byte: usize,
    pub end_byte: usize,
    /// 1-based.
    pub start_line: usize,
    pub end_line: usize,
    /// The definition's text.
    pub text: String,
    pub summary: CfgSummary,
    pub partial: bool,
}

/// The deterministic result for one document version.
#[derive(Debug, Clone)]
pub struct FileAnalysis {
    pub uri: String,
    /// The unit path (file system path for `file:` URIs, else the URI).
    pub path: String,
    pub version: i32,
    pub language: Language,
    pub report: FileReport,
    pub functions: Vec<FunctionFacts>,
    pub findings: Vec<Finding>,
    /// True when any part of the result is partial (syntax errors, limits, cancellation).
    pub partial: bool,
    pub elapsed_ms: f64,
    /// [`stable_hash`] of the analysed text (tells whether workspace results are about it).
    pub text_hash: String,
}

impl FileAnalysis {
    /// The innermost function whose definition contains the byte offset.
    pub fn function_at(&self, offset: usize) -> Option<&FunctionFacts> {
        innermost(&self.functions, offset, |f| (f.start_byte, f.end_byte))
    }
}

/// A stable 128-bit content hash (two FNV-1a 64 lanes), hex encoded. Parts are separated so
/// that `["ab", "c"]` and `["a", "bc"]` differ. Stable across runs and platforms (cache keys).
pub fn stable_hash(parts: &[&str]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    let mut eat = |byte: u8| {
        a ^= u64::from(byte);
        a = a.wrapping_mul(0x0000_0100_0000_01b3);
        b ^= u64::from(byte.rotate_left(3));
        b = b.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for p in parts {
        for &byte in (p.len() as u64).to_le_bytes().iter() {
            eat(byte);
        }
        for &byte in p.as_bytes() {
            eat(byte);
        }
    }
    format!("{a:016x}{b:016x}")
}

/// The hash identifying a document text in [`FileAnalysis::text_hash`] and
/// `workspace::Interproc::unit_hashes`.
pub fn document_hash(text: &str) -> String {
    stable_hash(&[text])
}

/// Analyses one parsed document: `analysis::report::analyze_parsed` plus the taint flows
/// within the file (`analysis::taint::analyze_file`, no call graph). Never panics.
pub fn analyze(
    uri: &str,
    path: &str,
    version: i32,
    parsed: &ParsedFile,
    cancel: &Cancel,
) -> FileAnalysis {
    analyze_with_memo(uri, path, version, parsed, cancel, None)
}

/// [`analyze`] reusing the per-function results of the document's previous analysis (see
/// `analysis::report::FunctionMemo`); the result is the same as without it.
pub fn analyze_with_memo(
    uri: &str,
    path: &str,
    version: i32,
    parsed: &ParsedFile,
    cancel: &Cancel,
    memo: Option<&mut FunctionMemo>,
) -> FileAnalysis {
    let started = std::time::Instant::now();
    let mut memo = memo;
    let result = catch_unwind(AssertUnwindSafe(|| {
        analyze_inner(path, parsed, cancel, memo.as_deref_mut())
    }));
    let (report, functions, mut findings) = match result {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            tracing::error!(%uri, "analysis panicked: {what}");
            // The memo may hold a half-updated state: start it afresh.
            if let Some(m) = memo {
                *m = FunctionMemo::default();
            }
            let mut report =
                crate::analysis::report::refused_file(path, Some(parsed.language), String::new());
            report.errors = parsed.errors.clone();
            let mut f = findings::from_file_report(&report);
            f.push(Finding::new(
                INTERNAL_ERROR,
                Severity::Warning,
                1,
                format!("crosscheck: internal error while analysing this file ({what}); results are partial"),
            ));
            (report, Vec::new(), f)
        }
    };
    findings.sort();
    let partial = parsed.has_errors()
        || report.functions.iter().any(|f| f.partial)
        || findings
            .iter()
            .any(|f| f.rule == findings::rules::ANALYSIS_PARTIAL || f.rule == INTERNAL_ERROR);
    FileAnalysis {
        uri: uri.to_string(),
        path: path.to_string(),
        version,
        language: parsed.language,
        report,
        functions,
        findings,
        partial,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        text_hash: document_hash(&parsed.text),
    }
}

fn analyze_inner(
    path: &str,
    parsed: &ParsedFile,
    cancel: &Cancel,
    memo: Option<&mut FunctionMemo>,
) -> (FileReport, Vec<FunctionFacts>, Vec<Finding>) {
    let mut memo = memo;
    // The CFG/data-flow pass and the file-local taint pass read the same parse and write
    // separate parts of the memo: they run side by side (the function list is found once,
    // first, and shared). The result is the same as running them one after the other.
    let _ = parsed.functions();
    let taint_memo =
        std::sync::Mutex::new(memo.as_deref_mut().map(|m| std::mem::take(&mut m.taint)));
    let run_taint = || {
        let mut held = taint_memo.lock().unwrap_or_else(|p| p.into_inner());
        crate::analysis::taint::analyze_file_with(path, parsed, held.as_mut(), cancel)
    };
    let (mut report, taint) = std::thread::scope(|scope| {
        let taint_job = std::thread::Builder::new()
            .name("crosscheck-taint".into())
            .stack_size(TAINT_STACK_BYTES)
            .spawn_scoped(scope, run_taint);
        let report = analyze_parsed_with(path, parsed, cancel, memo.as_deref_mut());
        let taint = match taint_job {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: one after the other.
            Err(_) => run_taint(),
        };
        (report, taint)
    });
    let taint_memo = taint_memo.into_inner().unwrap_or_else(|p| p.into_inner());
    if let (Some(m), Some(t)) = (memo, taint_memo) {
        m.taint = t;
    }
    report.tainted_variables = taint.tainted_variables_for(path).to_vec();
    let mut all = std::mem::take(&mut report.findings);
    all.extend(crate::analysis::findings::flow_findings(
        path,
        Some(parsed),
        &taint.flows,
    ));
    report.findings = crate::analysis::findings::normalize(all);
    for e in taint.errors.iter().filter(|e| e.file == path) {
        let err = crate::syntax::parse::SourceError {
            line: e.line,
            message: format!("taint: {}", e.message),
        };
        if !report.errors.contains(&err) {
            report.errors.push(err);
        }
    }
    let syntax_functions = parsed.functions();
    let mut functions = Vec::with_capacity(report.functions.len());
    let ids = function_ids(
        syntax_functions
            .iter()
            .map(|f| (f.name.as_str(), f.signature.as_str())),
    );
    for (i, fr) in report.functions.iter().enumerate() {
        let Some(sf) = syntax_functions.get(i).filter(|sf| sf.name == fr.name) else {
            continue;
        };
        let id = ids.get(i).cloned().unwrap_or_default();
        let range = sf.node.byte_range();
        functions.push(FunctionFacts {
            id,
            name: fr.name.clone(),
            signature: fr.signature.clone(),
            kind: fr.kind,
            start_byte: range.start,
            end_byte: range.end,
            start_line: fr.start_line,
            end_line: fr.end_line,
            text: parsed.node_text(sf.node).to_string(),
            summary: CfgSummary::from_report(&fr.cfg, fr.cyclomatic),
            partial: fr.partial,
        });
    }
    let findings = findings::from_file_report(&report);
    (report, functions, findings)
}

/// Ids of functions in document order: name + signature, `#n` appended to the n-th (n > 1)
/// function with the same name and signature.
pub fn function_ids<'a>(functions: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    functions
        .map(|(name, sig)| {
            let base = format!("{name}{sig}");
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                base
            } else {
                format!("{base}#{n}")
            }
        })
        .collect()
}

/// The facts of the innermost function containing `offset`, computed now from the current
/// parse (used by hover, which must not wait for the background analysis).
pub fn function_at_offset(
    parsed: &ParsedFile,
    offset: usize,
    cancel: &Cancel,
) -> Option<FunctionFacts> {
    let functions = collect_functions(parsed);
    let ids = function_ids(
        functions
            .iter()
            .map(|f| (f.name.as_str(), f.signature.as_str())),
    );
    let (i, func) = innermost(functions.iter().enumerate(), offset, |(_, f)| {
        (f.node.start_byte(), f.node.end_byte())
    })?;
    let result = catch_unwind(AssertUnwindSafe(|| {
        let cfg = build_cfg(parsed, func, cancel);
        let report = CfgReport::from_cfg(&cfg);
        (
            CfgSummary::from_report(&report, cfg.cyclomatic()),
            cfg.partial,
        )
    }));
    let (summary, cfg_partial) = result.unwrap_or((CfgSummary::default(), true));
    Some(FunctionFacts {
        id: ids.get(i).cloned().unwrap_or_default(),
        name: func.name.clone(),
        signature: func.signature.clone(),
        kind: func.kind,
        start_byte: func.node.start_byte(),
        end_byte: func.node.end_byte(),
        start_line: func.start_line,
        end_line: func.end_line,
        text: parsed.node_text(func.node).to_string(),
        summary,
        partial: cfg_partial || func.node.has_error(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_hash_separates_parts_and_is_fixed() {
        assert_ne!(stable_hash(&["ab", "c"]), stable_hash(&["a", "bc"]));
        assert_eq!(stable_hash(&["x"]), stable_hash(&["x"]));
        assert_eq!(stable_hash(&[]).len(), 32);
    }
}
