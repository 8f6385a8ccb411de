//! The server's internal finding shape, mapped from whatever the deterministic core reports,
//! (inline suppressions are `analysis::suppress`).
//!
//! A [`Finding`] is what becomes a diagnostic: a rule id, a severity, a 1-based line, a
//! message, evidence lines, related locations (taint paths) and a tier. Sources:
//!
//! * [`from_file_report`]: per-file results of `analysis::report::analyze_parsed` plus the
//!   file's own taint flows — the core's findings ([`from_analysis_finding`]: taint flows,
//!   `unreachable-code`, the syntactic rules of `analysis::findings`), syntax errors
//!   (`syntax-error`), analyses that hit a limit or were cut short, and functions whose result
//!   is partial because code did not parse (`analysis-partial`).
//! * [`FindingProvider`]s: workspace-level (interprocedural) analyses run over every file of
//!   the workspace and the call graph; their findings are refreshed whenever any file changes,
//!   so callers in other files follow a changed callee. [`TaintProvider`] (on by default) is
//!   the interprocedural taint analysis.
//!
//! # Severity, evidence, related locations
//!
//! A core finding's severity is its rule's in the registry (`analysis::rules`: `error`,
//! `warning`, `note` -> information). Its evidence lines become `data.evidence`; for taint
//! rules every path element (source, each step, sink) is also a related location, in whatever
//! file it is.
//!
//! # Taint flows: file-local first, then workspace-wide
//!
//! Right after a change the document's diagnostics carry the taint flows the analysis finds in
//! the file alone (no call graph). Once the workspace analysis has run on the document's
//! current text, its flows replace the file-local ones (they see callees in other files and
//! resolve calls through the call graph); while the workspace result is about an older text
//! of the document, the file-local flows are shown instead of it (see
//! `diagnostics::deterministic_findings`).
//!
//! # Suppressing a finding
//!
//! A comment `crosscheck: ignore[rule-id]` on the line of the finding or on the line above
//! hides it (`# crosscheck: ignore[syntax-error]` in Python, `// crosscheck: ignore[rule-id]`
//! elsewhere). Several ids may be listed, separated by commas; `*` matches every rule. The
//! marker must follow a comment leader (`#`, `//` or `/*`) on that line. The code action
//! "Suppress" inserts such a comment.

use crate::analysis::callgraph::{EdgeView, SourceUnit};
use crate::analysis::findings::Finding as AnalysisFinding;
use crate::analysis::report::FileReport;
use crate::crosscheck::facts::PathElement;
use crate::crosscheck::record::Tier;
use crate::syntax::functions::innermost;
use crate::syntax::{Cancel, Language};
use serde::Serialize;
use std::collections::BTreeMap;

/// Rule ids produced by the server itself.
pub mod rules {
    /// Code that does not parse.
    pub const SYNTAX_ERROR: &str = "syntax-error";
    /// A deterministic result is partial (code that does not parse, a depth limit, a
    /// cancelled analysis).
    pub const ANALYSIS_PARTIAL: &str = "analysis-partial";
    /// A document the server does not analyse because it is over the size limit.
    pub const FILE_NOT_ANALYSED: &str = "file-not-analysed";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

/// A line that supports a finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Evidence {
    /// Workspace path of the file, `None` for the finding's own file.
    pub file: Option<String>,
    /// 1-based line.
    pub line: usize,
    pub note: String,
}

/// A related location (e.g. one step of a taint path).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Related {
    /// Workspace path of the file (the unit path used by the call graph).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    pub message: String,
}

/// At most this many locations of one finding's path are shown to the editor (related
/// information, `data.evidence`, hover). A flow merged from many sources can pass through
/// hundreds of lines (one sink in git's `builtin/commit.c` has 27 sources and 346 path
/// elements: 684 KB of diagnostics for one file, re-sent on every edit); the whole path stays
/// in the finding (its LLM question, `crosscheck analyze`).
pub const MAX_SHOWN_PATH: usize = 24;

/// Which of `len` path elements are shown (ascending), and how many are left out. All of them
/// up to [`MAX_SHOWN_PATH`]; past it the sources first (up to half the places, in path
/// order), the last element (the sink), and the steps nearest the sink.
pub fn shown_path(len: usize, is_source: impl Fn(usize) -> bool) -> (Vec<usize>, usize) {
    if len <= MAX_SHOWN_PATH {
        return ((0..len).collect(), 0);
    }
    let mut chosen: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
    chosen.insert(len - 1);
    for i in (0..len).filter(|&i| is_source(i)).take(MAX_SHOWN_PATH / 2) {
        chosen.insert(i);
    }
    for i in (0..len).rev() {
        if chosen.len() >= MAX_SHOWN_PATH {
            break;
        }
        chosen.insert(i);
    }
    let shown: Vec<usize> = chosen.into_iter().collect();
    let omitted = len - shown.len();
    (shown, omitted)
}

/// [`shown_path`] over items (a finding's related locations or evidence), `is_source` telling
/// the sources apart.
fn shown_items<T>(items: &[T], is_source: impl Fn(&T) -> bool) -> (Vec<&T>, usize) {
    let (idx, omitted) = shown_path(items.len(), |i| items.get(i).is_some_and(&is_source));
    (idx.iter().filter_map(|&i| items.get(i)).collect(), omitted)
}

/// The shown related locations of a finding (a source's message starts `taint source`).
pub fn shown_related(related: &[Related]) -> (Vec<&Related>, usize) {
    shown_items(related, |r| r.message.starts_with("taint source"))
}

/// The shown evidence of a finding (a source's note starts `source`).
pub fn shown_evidence(evidence: &[Evidence]) -> (Vec<&Evidence>, usize) {
    shown_items(evidence, |e| e.note.starts_with("source"))
}

/// One finding, before presentation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// 1-based line the finding is reported on.
    pub line: usize,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// Qualified name of the enclosing function, if any.
    pub function: Option<String>,
    pub evidence: Vec<Evidence>,
    pub related: Vec<Related>,
    /// For taint flows: the path, source first, sink last (what its LLM question is about).
    pub path: Vec<PathElement>,
    /// Deterministic findings start as `analyzer-only`; the LLM cross-check may confirm them.
    pub tier: Tier,
    /// Taint findings: the trust class of the most exposed source (decides the severity
    /// under the `taint.report` setting).
    pub trust: Option<crate::analysis::taint::Trust>,
}

impl Finding {
    pub fn new(rule: &str, severity: Severity, line: usize, message: impl Into<String>) -> Self {
        Finding {
            line: line.max(1),
            rule: rule.to_string(),
            severity,
            message: message.into(),
            function: None,
            evidence: Vec::new(),
            related: Vec::new(),
            path: Vec::new(),
            tier: Tier::AnalyzerOnly,
            trust: None,
        }
    }
}

/// The presentation severity of a registry severity.
pub fn severity_of_rule(s: crate::analysis::rules::Severity) -> Severity {
    match s {
        crate::analysis::rules::Severity::Error => Severity::Error,
        crate::analysis::rules::Severity::Warning => Severity::Warning,
        crate::analysis::rules::Severity::Note => Severity::Info,
    }
}

/// True for rules that report taint flows (their evidence is a path).
pub fn is_taint_rule(rule_id: &str) -> bool {
    crate::analysis::rules::rule(rule_id).is_some_and(|r| r.sink_kind.is_some())
}

/// Maps one finding of the deterministic core (`analysis::findings`) reported in the unit
/// `path`. The severity is the rule's in the registry (the finding's own for rules the
/// registry does not know). Evidence in another file names that file. Taint findings get one
/// related location per path element: the source, each step, the sink.
pub fn from_analysis_finding(path: &str, f: &AnalysisFinding) -> Finding {
    let severity = crate::analysis::rules::rule(&f.rule)
        .map(|r| severity_of_rule(r.severity))
        .unwrap_or_else(|| severity_of_rule(f.severity));
    let mut out = Finding::new(&f.rule, severity, f.line, f.message.clone());
    out.trust = f.trust;
    let note = |e: &crate::analysis::findings::Evidence| {
        if e.text.is_empty() {
            e.role.clone()
        } else {
            format!("{}: `{}`", e.role, e.text)
        }
    };
    out.evidence = f
        .evidence
        .iter()
        .map(|e| Evidence {
            file: (e.file != path).then(|| e.file.clone()),
            line: e.line.max(1),
            note: note(e),
        })
        .collect();
    if is_taint_rule(&f.rule) {
        out.related = f
            .evidence
            .iter()
            .map(|e| Related {
                file: e.file.clone(),
                line: e.line.max(1),
                message: format!("taint {}", note(e)),
            })
            .collect();
        out.path = crate::crosscheck::facts::flow_path(&f.evidence);
    }
    out
}

/// Maps the per-file report to findings (sorted, deduplicated): the core's findings (taint
/// flows within the file, unreachable code, syntactic rules), syntax errors, and partial
/// results.
pub fn from_file_report(report: &FileReport) -> Vec<Finding> {
    let mut out = Vec::new();
    // The core's `syntax-error` notes are drawn from the report's errors below (as errors,
    // one per line, like every editor shows a parse error).
    for af in report
        .findings
        .iter()
        .filter(|f| f.rule != rules::SYNTAX_ERROR)
    {
        let mut f = from_analysis_finding(&report.file, af);
        f.function = function_at_line(report, f.line);
        out.push(f);
    }
    // One diagnostic per line for syntax errors: tree-sitter often reports an ERROR and a
    // MISSING node for one mistake (a missing `;` in Java), which would be two diagnostics on
    // one range. Their messages are joined.
    let mut syntax_lines: BTreeMap<usize, usize> = BTreeMap::new();
    for e in &report.errors {
        let is_syntax =
            e.message.starts_with("syntax error") || e.message.contains("syntax errors");
        if is_syntax && e.line > 0 {
            if let Some(&at) = syntax_lines.get(&e.line) {
                let f: &mut Finding = &mut out[at];
                if !f.message.contains(&e.message) {
                    f.message = format!("{}; {}", f.message, e.message);
                }
                continue;
            }
            syntax_lines.insert(e.line, out.len());
        }
        // C and C++ are parsed without their preprocessor, and in real code most of what does
        // not parse is a macro the grammar cannot know (`int f(void *p UNUSED)`,
        // `container_of(p, struct T, member)`; 398 of git's 995 C files): code the compiler
        // accepts, so an information that says so, not an error.
        let unpreprocessed = matches!(report.language, Some(Language::C | Language::Cpp));
        let (rule, severity) = match (is_syntax && e.line > 0, unpreprocessed) {
            (true, false) => (rules::SYNTAX_ERROR, Severity::Error),
            (true, true) => (rules::SYNTAX_ERROR, Severity::Info),
            (false, _) => (rules::ANALYSIS_PARTIAL, Severity::Info),
        };
        let message = if rule == rules::ANALYSIS_PARTIAL {
            format!("analysis is partial: {}", e.message)
        } else if unpreprocessed {
            format!(
                "{}, or a macro crosscheck does not expand (C and C++ are parsed without their \
                 preprocessor); this part is not analysed",
                e.message
            )
        } else {
            e.message.clone()
        };
        let mut f = Finding::new(rule, severity, e.line, message);
        f.function = function_at_line(report, e.line);
        out.push(f);
    }
    for func in report.functions.iter().filter(|f| f.partial) {
        let mut f = Finding::new(
            rules::ANALYSIS_PARTIAL,
            Severity::Info,
            func.start_line,
            format!(
                "results for `{}` are partial: part of it does not parse or exceeds an analysis \
                 limit; the parts that parse were analysed",
                func.name
            ),
        );
        f.function = Some(func.name.clone());
        out.push(f);
    }
    out.sort();
    out.dedup();
    out
}

/// The innermost function of the report containing a 1-based line.
pub fn function_at_line(report: &FileReport, line: usize) -> Option<String> {
    innermost(&report.functions, line, |f| (f.start_line, f.end_line)).map(|f| f.name.clone())
}

/// What a workspace-level analysis sees.
pub struct WorkspaceView<'a> {
    /// Every analysed file of the workspace (open documents with their editor text).
    pub units: &'a [SourceUnit<'a>],
    /// The workspace call graph.
    pub call_graph: EdgeView<'a>,
}

/// What a provider keeps from one run over a language family for the next (see
/// [`FindingProvider::findings_with_memo`]); `None` before the first run.
pub type ProviderMemo = Option<Box<dyn std::any::Any + Send + Sync>>;

/// A workspace-level (interprocedural) analysis producing findings per file.
pub trait FindingProvider: Send + Sync {
    /// A stable name for logs.
    fn name(&self) -> &str;
    /// Findings keyed by unit path. Must be pure and deterministic, and poll `cancel`.
    fn findings(&self, ws: &WorkspaceView<'_>, cancel: &Cancel) -> BTreeMap<String, Vec<Finding>>;
    /// [`FindingProvider::findings`] given what this provider kept from its previous run over
    /// the same language family (`memo`, which it may replace). The result must equal
    /// `findings`'s; the default ignores the memo.
    fn findings_with_memo(
        &self,
        ws: &WorkspaceView<'_>,
        memo: &mut ProviderMemo,
        cancel: &Cancel,
    ) -> BTreeMap<String, Vec<Finding>> {
        let _ = memo;
        self.findings(ws, cancel)
    }
    /// Shrinks what `memo` keeps to what is cheap to hold, for a family that is not being
    /// edited (its next run may redo more work). The default keeps it whole.
    fn trim_memo(&self, memo: &mut ProviderMemo) {
        let _ = memo;
    }
    /// True when the findings of a language family's files depend on that family's files only
    /// ([`crate::syntax::Language::family`]): the server then runs the provider per family
    /// and reuses a family's findings while none of its files changed.
    fn per_language_family(&self) -> bool {
        false
    }
}

/// The workspace-wide interprocedural taint analysis (`analysis::taint` over every unit,
/// with the workspace call graph and, for C and C++ units, points-to), mapped per sink file
/// with [`from_analysis_finding`]. The same analysis `crosscheck analyze` runs, so a settled
/// workspace shows the flows the batch report lists.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaintProvider;

impl FindingProvider for TaintProvider {
    fn name(&self) -> &str {
        "taint"
    }

    /// The taint analysis runs per family anyway (`analysis::taint::analyze_taint`).
    fn per_language_family(&self) -> bool {
        true
    }

    fn findings(&self, ws: &WorkspaceView<'_>, cancel: &Cancel) -> BTreeMap<String, Vec<Finding>> {
        self.findings_with_memo(ws, &mut None, cancel)
    }

    /// Keeps only the per-function scans of the taint memo: its interpretations and tables
    /// are tens of megabytes on a large family.
    fn trim_memo(&self, memo: &mut ProviderMemo) {
        use crate::analysis::taint::TaintMemo;
        if let Some(m) = memo.as_mut().and_then(|m| m.downcast_mut::<TaintMemo>()) {
            m.trim();
        }
    }

    /// Keeps the taint analysis's per-function scans and interpretations (`taint::TaintMemo`)
    /// between runs.
    fn findings_with_memo(
        &self,
        ws: &WorkspaceView<'_>,
        memo: &mut ProviderMemo,
        cancel: &Cancel,
    ) -> BTreeMap<String, Vec<Finding>> {
        use crate::analysis::findings::flow_findings;
        use crate::analysis::pointsto::analyze_points_to;
        use crate::analysis::taint::{analyze_taint_with, TaintMemo, TaintSpecs};
        let c_units: Vec<SourceUnit<'_>> = ws
            .units
            .iter()
            .filter(|u| matches!(u.file.language, Language::C | Language::Cpp))
            .map(|u| SourceUnit {
                path: u.path.clone(),
                file: u.file,
            })
            .collect();
        // Only the sets are read below: the solver's model and graph are freed before the
        // taint run instead of living through it (on redis they are ~270 MiB).
        let points_to = (!c_units.is_empty())
            .then(|| analyze_points_to(&c_units, cancel).without_solver_state());
        if !memo.as_ref().is_some_and(|m| m.is::<TaintMemo>()) {
            *memo = Some(Box::new(TaintMemo::default()));
        }
        let taint_memo = memo.as_mut().and_then(|m| m.downcast_mut::<TaintMemo>());
        let taint = analyze_taint_with(
            ws.units,
            Some(ws.call_graph),
            points_to.as_ref(),
            TaintSpecs::builtin_shared(),
            taint_memo,
            cancel,
        );
        let mut out: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
        for u in ws.units {
            let found = flow_findings(&u.path, Some(u.file), &taint.flows);
            if found.is_empty() {
                continue;
            }
            let mut mapped: Vec<Finding> = found
                .iter()
                .map(|f| from_analysis_finding(&u.path, f))
                .collect();
            mapped.sort();
            mapped.dedup();
            out.insert(u.path.clone(), mapped);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_path_is_shown_whole() {
        assert_eq!(shown_path(3, |_| false), (vec![0, 1, 2], 0));
        let (all, omitted) = shown_path(MAX_SHOWN_PATH, |i| i == 0);
        assert_eq!((all.len(), omitted), (MAX_SHOWN_PATH, 0));
    }

    #[test]
    fn a_long_path_keeps_its_sources_its_sink_and_the_steps_before_the_sink() {
        // Sources at 0, 10, 20, ... 290; sink at 299.
        let (shown, omitted) = shown_path(300, |i| i % 10 == 0);
        assert_eq!(shown.len(), MAX_SHOWN_PATH);
        assert_eq!(omitted, 300 - MAX_SHOWN_PATH);
        assert!(shown.windows(2).all(|w| w[0] < w[1]), "ascending");
        let sources: Vec<usize> = (0..MAX_SHOWN_PATH / 2).map(|k| k * 10).collect();
        assert_eq!(&shown[..MAX_SHOWN_PATH / 2], sources.as_slice());
        let tail: Vec<usize> = (300 - MAX_SHOWN_PATH / 2..300).collect();
        assert_eq!(&shown[MAX_SHOWN_PATH / 2..], tail.as_slice());
    }
}
