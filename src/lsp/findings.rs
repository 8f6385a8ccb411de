//! The server's internal finding shape, mapped from whatever the deterministic core reports,
//! plus inline suppressions.
//!
//! A [`Finding`] is what becomes a diagnostic: a rule id, a severity, a 1-based line, a
//! message, evidence lines, related locations (taint paths) and a tier. Sources:
//!
//! * [`from_file_report`]: per-file results of `analysis::report::analyze_parsed` — syntax
//!   errors (`syntax-error`), analyses that hit a limit or were cut short, and functions whose
//!   result is partial because code did not parse (`analysis-partial`). New per-file result
//!   kinds (findings, taint flows) are mapped here as the report grows.
//! * [`FindingProvider`]s: workspace-level (interprocedural) analyses run over every file of
//!   the workspace and the call graph; their findings are refreshed whenever any file changes,
//!   so callers in other files follow a changed callee.
//!
//! # Suppressing a finding
//!
//! A comment `crosscheck: ignore[rule-id]` on the line of the finding or on the line above
//! hides it (`# crosscheck: ignore[syntax-error]` in Python, `// crosscheck: ignore[rule-id]`
//! elsewhere). Several ids may be listed, separated by commas; `*` matches every rule. The
//! marker must follow a comment leader (`#`, `//` or `/*`) on that line. The code action
//! "Suppress" inserts such a comment.

use crate::analysis::callgraph::{CallEdge, SourceUnit};
use crate::analysis::report::FileReport;
use crate::crosscheck::record::Tier;
use crate::syntax::position::LineIndex;
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
    /// Deterministic findings start as `analyzer-only`; the LLM cross-check may confirm them.
    pub tier: Tier,
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
            tier: Tier::AnalyzerOnly,
        }
    }
}

/// Maps the per-file report to findings (sorted, deduplicated).
pub fn from_file_report(report: &FileReport) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in &report.errors {
        let is_syntax =
            e.message.starts_with("syntax error") || e.message.contains("syntax errors");
        let (rule, severity) = if is_syntax && e.line > 0 {
            (rules::SYNTAX_ERROR, Severity::Error)
        } else {
            (rules::ANALYSIS_PARTIAL, Severity::Info)
        };
        let message = if rule == rules::ANALYSIS_PARTIAL {
            format!("analysis is partial: {}", e.message)
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
    report
        .functions
        .iter()
        .filter(|f| f.start_line <= line && line <= f.end_line)
        .min_by_key(|f| f.end_line - f.start_line)
        .map(|f| f.name.clone())
}

/// What a workspace-level analysis sees.
pub struct WorkspaceView<'a> {
    /// Every analysed file of the workspace (open documents with their editor text).
    pub units: &'a [SourceUnit<'a>],
    /// The workspace call graph (sorted edges).
    pub call_graph: &'a [CallEdge],
}

/// A workspace-level (interprocedural) analysis producing findings per file.
pub trait FindingProvider: Send + Sync {
    /// A stable name for logs.
    fn name(&self) -> &str;
    /// Findings keyed by unit path. Must be pure and deterministic, and poll `cancel`.
    fn findings(&self, ws: &WorkspaceView<'_>, cancel: &Cancel) -> BTreeMap<String, Vec<Finding>>;
}

const MARKER: &str = "crosscheck: ignore[";

/// Rule ids listed by a suppression comment on one line of text.
pub fn suppressions_on(line: &str) -> Vec<String> {
    let Some(at) = line.find(MARKER) else {
        return Vec::new();
    };
    let before = &line[..at];
    if !(before.contains('#') || before.contains("//") || before.contains("/*")) {
        return Vec::new();
    }
    let rest = &line[at + MARKER.len()..];
    let Some(close) = rest.find(']') else {
        return Vec::new();
    };
    rest[..close]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn line_text<'a>(text: &'a str, lines: &LineIndex, line_1based: usize) -> &'a str {
    let l = line_1based.saturating_sub(1);
    let Some(start) = lines.line_start(l) else {
        return "";
    };
    let end = lines
        .line_start(l + 1)
        .map(|s| s.saturating_sub(1))
        .unwrap_or(text.len());
    text.get(start..end).unwrap_or("")
}

/// True when a suppression comment on the finding's line or the line above names its rule.
pub fn is_suppressed(text: &str, lines: &LineIndex, rule: &str, line_1based: usize) -> bool {
    let mut candidates = vec![line_1based];
    if line_1based > 1 {
        candidates.push(line_1based - 1);
    }
    candidates.into_iter().any(|l| {
        suppressions_on(line_text(text, lines, l))
            .iter()
            .any(|id| id == rule || id == "*")
    })
}

/// The comment the "Suppress" code action inserts above a line with the given indentation.
pub fn suppression_comment(lang: Option<Language>, rule: &str, indent: &str) -> String {
    let leader = match lang {
        Some(Language::Python) => "#",
        _ => "//",
    };
    format!("{indent}{leader} {MARKER}{rule}]\n")
}

/// The leading whitespace of a 1-based line.
pub fn indentation_of(text: &str, lines: &LineIndex, line_1based: usize) -> String {
    line_text(text, lines, line_1based)
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppression_needs_a_comment_leader_and_lists_rules() {
        assert_eq!(
            suppressions_on("x = 1  # crosscheck: ignore[a, b]"),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(suppressions_on("s = 'crosscheck: ignore[a]'").is_empty());
        assert!(suppressions_on("// crosscheck: ignore[a").is_empty());
    }
}
