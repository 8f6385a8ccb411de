//! From findings and LLM outcomes to published diagnostics.
//!
//! 1. **Merge** ([`merge`]): the document's deterministic findings and the workspace-level
//!    findings for this file ([`deterministic_findings`]), each with its fingerprint (the
//!    one `crosscheck check` puts in SARIF, [`crate::analysis::sarif::fingerprint_hash`]), and
//!    the LLM outcome of each taint finding's own question (`questions::flow_jobs`). Tiers
//!    come from the core's tier function (`crosscheck::tier::tier_all`): a taint finding is
//!    `confirmed` when the (jury's) stable answer to its question is yes, else
//!    `analyzer-only` (no, unknown, unstable, failed, not asked); every other deterministic
//!    finding is `analyzer-only` (nothing asks about it). LLM output never removes a
//!    deterministic finding and never changes its severity; the LLM's answers about
//!    functions (CFG, call graph) are shown in hovers, not as diagnostics.
//! 2. **Present** ([`present`]): disabled rules and suppressed lines are dropped, then each
//!    tier is shown, turned into a hint, or hidden according to the configuration.
//! 3. **Convert** ([`to_lsp`]): ranges in the negotiated encoding, `code` = rule id,
//!    `source` = `crosscheck`, related information for taint paths and other evidence, and
//!    `data`:
//!
//! ```json
//! { "tier": "confirmed", "rule": "taint-command", "function": "f", "partial": false,
//!   "fingerprint": "…:1", "evidence": [{"file": null, "line": 3, "note": "…"}],
//!   "llm": {"task": "taint", "verdict": "yes", "samples": 1, "instability": 0.0,
//!           "models": [{"model": "…", "verdict": "yes", "stable": true}],
//!           "template": "taint_flow/role/zero@3", "cached": false} }
//! ```
//!
//! `llm` is `null` while the finding has no answered question.

use super::config::{Presentation, Settings};
use super::encoding;
use super::engine::{FileAnalysis, FunctionFacts};
use super::findings::{self, Finding, Severity};
use super::questions::{flow_key, flow_slot};
use super::scheduler::CheckOutcome;
use crate::analysis::filerole::FileRole;
use crate::crosscheck::record::Tier;
use crate::crosscheck::tier::{decide_tier, tier_all, Evidence as TierEvidence, LlmStance, Origin};
use crate::syntax::position::{ColumnEncoding, LineIndex};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    Position, Range, Uri,
};

/// A finding with its fingerprint and the LLM outcome of its own question, if any.
#[derive(Debug, Clone)]
pub struct Merged {
    pub finding: Finding,
    /// The finding's fingerprint, as in SARIF `partialFingerprints` (`hash:N`).
    pub fingerprint: String,
    pub llm: Option<Arc<CheckOutcome>>,
}

/// The innermost function containing a line, with the tie-break `crosscheck check` uses for
/// fingerprints (the shorter span, then the later start).
fn function_of_line(functions: &[FunctionFacts], line: usize) -> Option<&FunctionFacts> {
    crate::syntax::functions::innermost(functions, line, |f| (f.start_line, f.end_line))
}

/// The deterministic findings of a document: its own (per-file) findings and the workspace
/// findings for it. `workspace_current` says whether the workspace results were computed from
/// the document's current text: if so, the workspace's taint flows replace the file-local
/// ones; if not, the (stale) workspace taint flows are left out and the file-local ones shown.
/// Findings identical in line, rule and message are listed once.
pub fn deterministic_findings(
    analysis: &FileAnalysis,
    workspace: &[Finding],
    workspace_current: bool,
) -> Vec<Finding> {
    let local = analysis
        .findings
        .iter()
        .filter(|f| !(workspace_current && findings::is_taint_rule(&f.rule)));
    let global = workspace
        .iter()
        .filter(|f| workspace_current || !findings::is_taint_rule(&f.rule));
    let mut out: Vec<Finding> = Vec::new();
    for f in local.chain(global) {
        let dup = out
            .iter()
            .any(|g| g.line == f.line && g.rule == f.rule && g.message == f.message);
        if !dup {
            out.push(f.clone());
        }
    }
    out
}

/// The deterministic findings ([`deterministic_findings`], sorted, with their function
/// filled in) and their fingerprints. `fp_path` is the file's path as `crosscheck check` run
/// from the workspace folder names it (relative, with `/`), so a label made in the editor
/// matches the SARIF result and the baseline entry.
pub fn fingerprinted(
    analysis: &FileAnalysis,
    workspace: &[Finding],
    workspace_current: bool,
    fp_path: &str,
    text: &str,
    lines: &LineIndex,
) -> Vec<(Finding, String)> {
    let mut det = deterministic_findings(analysis, workspace, workspace_current);
    det.sort();
    let hashes: Vec<String> = det
        .iter()
        .map(|f| {
            let func = function_of_line(&analysis.functions, f.line).map(|x| x.name.as_str());
            let (a, b) = encoding::line_content(text, lines, f.line);
            crate::analysis::sarif::fingerprint_hash(
                &f.rule,
                fp_path,
                func,
                text.get(a..b).unwrap_or(""),
            )
        })
        .collect();
    let prints = crate::analysis::sarif::number_fingerprints(&hashes);
    det.into_iter()
        .zip(prints)
        .map(|(mut f, p)| {
            if f.function.is_none() {
                f.function = function_of_line(&analysis.functions, f.line).map(|x| x.name.clone());
            }
            (f, p)
        })
        .collect()
}

/// The tier of what only the LLM says (an explanation, a claim nothing contradicts).
pub fn llm_only_tier() -> Tier {
    decide_tier(&TierEvidence {
        origin: Origin::Llm,
        llm: LlmStance::Agrees,
        contradicted: false,
    })
}

/// Merges the fingerprinted deterministic findings ([`fingerprinted`]) with the LLM outcomes
/// of the document's questions (by job slot; only outcomes about the current question are
/// given). Every deterministic finding is kept, unchanged but for its tier (see the module
/// docs).
pub fn merge(
    findings: Vec<(Finding, String)>,
    outcomes: &BTreeMap<String, Arc<CheckOutcome>>,
) -> Vec<Merged> {
    let mut inputs: Vec<(usize, String, bool)> = Vec::with_capacity(findings.len());
    let mut stances: BTreeMap<String, LlmStance> = BTreeMap::new();
    let mut prepared: Vec<Merged> = Vec::with_capacity(findings.len());
    for (i, (f, fingerprint)) in findings.into_iter().enumerate() {
        let llm = if findings::is_taint_rule(&f.rule) && !f.path.is_empty() {
            outcomes
                .get(&flow_slot(&flow_key(&fingerprint, &f)))
                .cloned()
        } else {
            None
        };
        // Each finding is tiered by its own fingerprint: two flows into one sink are two
        // questions with two answers.
        let key = format!("{fingerprint}#{i}");
        stances.insert(
            key.clone(),
            llm.as_ref().map_or(LlmStance::NotAsked, |o| o.stance),
        );
        inputs.push((i, key, false));
        prepared.push(Merged {
            finding: f,
            fingerprint,
            llm,
        });
    }
    let tiered = tier_all(&inputs, &stances, &[]);
    let mut out: Vec<Merged> = Vec::with_capacity(prepared.len());
    for t in &tiered.findings {
        if let Some(m) = prepared.get(t.finding) {
            let mut m = m.clone();
            m.finding.tier = t.tier;
            out.push(m);
        }
    }
    out.sort_by(|a, b| a.finding.cmp(&b.finding));
    out
}

/// The `data.llm` member of a finding's diagnostic: its question's outcome.
pub fn llm_data(o: &CheckOutcome) -> Value {
    json!({
        "task": o.task,
        "verdict": o.verdict,
        "tier": o.tier.name(),
        "samples": o.samples,
        "instability": o.instability,
        "model": o.model,
        "models": o.models.iter().map(|m| json!({
            "model": m.model,
            "verdict": m.verdict,
            "stable": m.stable,
            "samples": m.samples,
            "instability": m.instability,
        })).collect::<Vec<_>>(),
        "template": o.template,
        "cached": o.cached,
    })
}

/// A finding ready to publish: its effective severity after tier presentation.
#[derive(Debug, Clone)]
pub struct Presented {
    pub merged: Merged,
    pub severity: Severity,
}

/// Applies rule switches, suppression comments, tier presentation, the taint trust profile
/// and the file-role profile (`role`: the document's, [`FileRole`]).
pub fn present(
    merged: Vec<Merged>,
    settings: &Settings,
    text: &str,
    lines: &LineIndex,
    role: FileRole,
) -> Vec<Presented> {
    let role_reported = settings.files_report.reports(role);
    let shown: Vec<Merged> = merged
        .into_iter()
        .filter(|m| !settings.disabled_rules.contains(&m.finding.rule))
        .filter(|m| role.runs_cfg_lints() || m.finding.rule != "unreachable-code")
        .filter(|m| {
            !crate::analysis::suppress::is_suppressed(text, lines, &m.finding.rule, m.finding.line)
        })
        .collect();
    // One diagnostic per range: a shown syntax error on a line already says that the function
    // starting there is not whole, so its "partial" note is not drawn on the same range.
    let syntax_lines: std::collections::BTreeSet<usize> = shown
        .iter()
        .filter(|m| m.finding.rule == findings::rules::SYNTAX_ERROR)
        .map(|m| m.finding.line)
        .collect();
    shown
        .into_iter()
        .filter(|m| {
            m.finding.rule != findings::rules::ANALYSIS_PARTIAL
                || !syntax_lines.contains(&m.finding.line)
        })
        .filter_map(|m| match settings.tiers.get(m.finding.tier) {
            Presentation::Hidden => None,
            Presentation::Hint => Some(Presented {
                severity: Severity::Hint,
                merged: m,
            }),
            Presentation::Show => Some(Presented {
                // A flow whose sources are all of classes `taint.report` leaves out is a note,
                // and so is every finding in a file whose role `files.report` leaves out
                // (tests, examples, vendored code, ...); syntax errors keep their severity.
                severity: if settings.taint_report.reports(m.finding.trust)
                    && (role_reported || m.finding.rule == findings::rules::SYNTAX_ERROR)
                {
                    m.finding.severity
                } else {
                    Severity::Info
                },
                merged: m,
            }),
        })
        .collect()
}

fn lsp_severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    }
}

/// Text of other files, to place related locations in the negotiated encoding.
pub trait TextSource {
    /// The text and line index of a unit path, if known.
    fn text_of(&self, path: &str) -> Option<(Arc<str>, Arc<LineIndex>)>;
}

/// Converts presented findings to LSP diagnostics.
#[allow(clippy::too_many_arguments)]
pub fn to_lsp(
    presented: &[Presented],
    uri: &Uri,
    path: &str,
    text: &str,
    lines: &LineIndex,
    partial: bool,
    enc: ColumnEncoding,
    others: &dyn TextSource,
) -> Vec<Diagnostic> {
    presented
        .iter()
        .map(|p| {
            let f = &p.merged.finding;
            let range = encoding::line_range(text, lines, f.line, enc);
            // Long paths are cut to what a reader can follow (`MAX_SHOWN_PATH`); the last
            // related location says how much was left out.
            let (shown, omitted) = findings::shown_related(&f.related);
            let mut related: Vec<DiagnosticRelatedInformation> = shown
                .into_iter()
                .filter_map(|r| {
                    let (ruri, rrange) = if r.file == path {
                        (uri.clone(), encoding::line_range(text, lines, r.line, enc))
                    } else {
                        let ruri = super::workspace::path_uri(std::path::Path::new(&r.file))
                            .or_else(|| r.file.parse::<Uri>().ok())?;
                        let rrange = match others.text_of(&r.file) {
                            Some((t, li)) => encoding::line_range(&t, &li, r.line, enc),
                            None => {
                                let l = r.line.saturating_sub(1) as u32;
                                Range::new(Position::new(l, 0), Position::new(l, 0))
                            }
                        };
                        (ruri, rrange)
                    };
                    Some(DiagnosticRelatedInformation {
                        location: Location::new(ruri, rrange),
                        message: r.message.clone(),
                    })
                })
                .collect();
            if omitted > 0 {
                related.push(DiagnosticRelatedInformation {
                    location: Location::new(uri.clone(), range),
                    message: format!(
                        "taint path: {omitted} more locations not shown (`crosscheck analyze` lists the whole path)"
                    ),
                });
            }
            let (evidence, evidence_omitted) = findings::shown_evidence(&f.evidence);
            let llm = p.merged.llm.as_deref().map(llm_data);
            let data = json!({
                "tier": f.tier.name(),
                "rule": f.rule,
                "function": f.function,
                "partial": partial,
                "fingerprint": p.merged.fingerprint,
                "evidence": evidence,
                "evidence_omitted": evidence_omitted,
                "llm": llm.unwrap_or(Value::Null),
            });
            Diagnostic {
                range,
                severity: Some(lsp_severity(p.severity)),
                code: Some(NumberOrString::String(f.rule.clone())),
                code_description: None,
                source: Some("crosscheck".to_string()),
                message: f.message.clone(),
                related_information: if related.is_empty() {
                    None
                } else {
                    Some(related)
                },
                tags: None,
                data: Some(data),
            }
        })
        .collect()
}
