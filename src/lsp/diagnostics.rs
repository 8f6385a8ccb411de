//! From findings and LLM outcomes to published diagnostics.
//!
//! 1. **Merge** ([`merge`]): the document's deterministic findings, the workspace-level
//!    findings for this file, and the LLM outcomes of its functions, tiered by the core's
//!    tier function (`crosscheck::tier::tier_all`, which applies `decide_tier`). A
//!    deterministic finding is `confirmed` when the LLM's outcome for its function (stably)
//!    claims the same rule on the same line, else `analyzer-only`. LLM claims that match no
//!    deterministic finding become `llm-only` findings (severity information, unverified). An
//!    LLM CFG summary that contradicts the analyzer's CFG is a contradicted claim: `refuted`
//!    (`llm-cfg-mismatch`). LLM output never removes a deterministic finding and never changes
//!    its severity.
//! 2. **Present** ([`present`]): disabled rules and suppressed lines are dropped, then each
//!    tier is shown, turned into a hint, or hidden according to the configuration.
//! 3. **Convert** ([`to_lsp`]): ranges in the negotiated encoding, `code` = rule id,
//!    `source` = `crosscheck`, related information for taint paths and other evidence, and
//!    `data`:
//!
//! ```json
//! { "tier": "analyzer-only", "rule": "syntax-error", "function": "f", "partial": true,
//!   "fingerprint": "…", "evidence": [{"file": null, "line": 3, "note": "…"}],
//!   "llm": {"verdict": "agree", "model": "…", "samples": 1, "instability": 0.0} }
//! ```
//!
//! `llm` is `null` while no LLM outcome exists for the function.

use super::config::{Presentation, Settings};
use super::encoding;
use super::engine::{stable_hash, FileAnalysis, FunctionFacts};
use super::findings::{self, Finding, Severity};
use super::scheduler::{CheckOutcome, Verdict};
use crate::crosscheck::record::Tier;
use crate::crosscheck::tier::{
    decide_tier, tier_all, Claim, Evidence as TierEvidence, LlmStance, Origin,
};
use crate::syntax::position::{ColumnEncoding, LineIndex};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    Position, Range, Uri,
};

/// Rule id of an LLM CFG summary that contradicts the analyzer.
pub const LLM_CFG_MISMATCH: &str = "llm-cfg-mismatch";

/// A finding with the LLM outcome of its function, if any.
#[derive(Debug, Clone)]
pub struct Merged {
    pub finding: Finding,
    pub llm: Option<Arc<CheckOutcome>>,
}

fn function_of_line(functions: &[FunctionFacts], line: usize) -> Option<&FunctionFacts> {
    functions
        .iter()
        .filter(|f| f.start_line <= line && line <= f.end_line)
        .min_by_key(|f| f.end_line - f.start_line)
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

/// The LLM's stance on the analyzer's CFG summary of a function, from the check's verdict.
pub fn cfg_stance(verdict: Verdict) -> LlmStance {
    match verdict {
        Verdict::Agree => LlmStance::Agrees,
        Verdict::Disagree => LlmStance::Disagrees,
        Verdict::Unknown => LlmStance::Failed,
    }
}

/// The tier of the analyzer's CFG summary of a function after an LLM check (`decide_tier`):
/// `confirmed` when the LLM's counts agree, else `analyzer-only`.
pub fn cfg_summary_tier(verdict: Verdict) -> Tier {
    decide_tier(&TierEvidence {
        origin: Origin::Analyzer,
        llm: cfg_stance(verdict),
        contradicted: false,
    })
}

/// The tier of what only the LLM says (an explanation, a claim nothing contradicts).
pub fn llm_only_tier() -> Tier {
    decide_tier(&TierEvidence {
        origin: Origin::Llm,
        llm: LlmStance::Agrees,
        contradicted: false,
    })
}

/// Above this instability an LLM answer confirms nothing (as the core's default
/// `max_instability`).
pub const MAX_INSTABILITY: f64 = 0.25;

/// The tiering key of a finding or claim: rule and document line.
pub fn tier_key(rule: &str, line: usize) -> String {
    format!("{rule}@{line}")
}

/// What the LLM's outcome for a function says about a deterministic finding in it: it
/// agrees when it claims the same rule on the same line (and its samples were stable).
pub fn stance(
    outcome: Option<&CheckOutcome>,
    func: Option<&FunctionFacts>,
    f: &Finding,
) -> LlmStance {
    let (Some(o), Some(x)) = (outcome, func) else {
        return LlmStance::NotAsked;
    };
    let claims_it = o
        .claims
        .iter()
        .any(|c| x.start_line + c.line.saturating_sub(1) == f.line && c.rule == f.rule);
    if o.verdict == Verdict::Unknown && o.claims.is_empty() && o.explanation.is_none() {
        LlmStance::Failed
    } else if o.instability > MAX_INSTABILITY {
        LlmStance::Unstable
    } else if claims_it {
        LlmStance::Agrees
    } else {
        LlmStance::Disagrees
    }
}

/// Merges the deterministic findings ([`deterministic_findings`]) and the LLM outcomes of
/// the document's functions (by function id; only outcomes about the function's current text
/// are given). Tiers come from the core's one tier function, `crosscheck::tier::tier_all`:
///
/// * every deterministic finding is kept, unchanged but for its tier: `confirmed` when the
///   LLM claims the same rule on the same line, else `analyzer-only` (see [`stance`]);
/// * every other LLM claim becomes an `llm-only` finding with severity information (its text
///   says it is unverified), whatever the claim says about itself;
/// * an LLM control-flow summary the analyzer's CFG contradicts is a contradicted claim:
///   `refuted` ([`LLM_CFG_MISMATCH`]).
pub fn merge(
    analysis: &FileAnalysis,
    workspace: &[Finding],
    workspace_current: bool,
    outcomes: &BTreeMap<String, Arc<CheckOutcome>>,
) -> Vec<Merged> {
    let det = deterministic_findings(analysis, workspace, workspace_current);
    let mut inputs: Vec<(usize, String, bool)> = Vec::with_capacity(det.len());
    let mut stances: BTreeMap<String, LlmStance> = BTreeMap::new();
    let mut prepared: Vec<(Finding, Option<Arc<CheckOutcome>>)> = Vec::with_capacity(det.len());
    for (i, mut f) in det.into_iter().enumerate() {
        let func = function_of_line(&analysis.functions, f.line);
        if f.function.is_none() {
            f.function = func.map(|x| x.name.clone());
        }
        let llm = func.and_then(|x| outcomes.get(&x.id)).map(Arc::clone);
        let key = tier_key(&f.rule, f.line);
        let s = stance(llm.as_deref(), func, &f);
        // Several findings can share a key (two flows into one sink): any agreement counts.
        let e = stances.entry(key.clone()).or_insert(s);
        if s == LlmStance::Agrees {
            *e = s;
        }
        inputs.push((i, key, false));
        prepared.push((f, llm));
    }
    // LLM claims, keyed like findings; a claim on a finding's key is agreement, not a claim.
    let mut claims: Vec<Claim> = Vec::new();
    let mut claim_info: BTreeMap<String, Merged> = BTreeMap::new();
    for x in &analysis.functions {
        let Some(o) = outcomes.get(&x.id) else {
            continue;
        };
        for c in &o.claims {
            let line = x.start_line + c.line.saturating_sub(1);
            let key = tier_key(&c.rule, line);
            claims.push(Claim {
                key: key.clone(),
                contradicted: false,
            });
            claim_info.entry(key).or_insert_with(|| {
                let mut f = Finding::new(
                    &c.rule,
                    Severity::Info,
                    line,
                    format!("LLM claim (unverified): {}", c.message),
                );
                f.function = Some(x.name.clone());
                Merged {
                    finding: f,
                    llm: Some(Arc::clone(o)),
                }
            });
        }
        if o.verdict == Verdict::Disagree {
            let key = tier_key(LLM_CFG_MISMATCH, x.start_line);
            claims.push(Claim {
                key: key.clone(),
                contradicted: true,
            });
            let mut f = Finding::new(
                LLM_CFG_MISMATCH,
                Severity::Info,
                x.start_line,
                format!(
                    "the LLM's control-flow summary of `{}` contradicts the analyzer ({})",
                    x.name,
                    o.comparison.as_deref().unwrap_or("counts differ")
                ),
            );
            f.function = Some(x.name.clone());
            claim_info.insert(
                key,
                Merged {
                    finding: f,
                    llm: Some(Arc::clone(o)),
                },
            );
        }
    }
    let tiered = tier_all(&inputs, &stances, &claims);
    let mut out: Vec<Merged> = Vec::with_capacity(prepared.len() + tiered.claims.len());
    for t in &tiered.findings {
        if let Some((f, llm)) = prepared.get(t.finding) {
            let mut f = f.clone();
            f.tier = t.tier;
            out.push(Merged {
                finding: f,
                llm: llm.clone(),
            });
        }
    }
    for c in &tiered.claims {
        if let Some(m) = claim_info.get(&c.key) {
            let mut m = m.clone();
            m.finding.tier = c.tier;
            out.push(m);
        }
    }
    out.sort_by(|a, b| a.finding.cmp(&b.finding));
    out
}

/// A finding ready to publish: its effective severity after tier presentation.
#[derive(Debug, Clone)]
pub struct Presented {
    pub merged: Merged,
    pub severity: Severity,
}

/// Applies rule switches, suppression comments and tier presentation.
pub fn present(
    merged: Vec<Merged>,
    settings: &Settings,
    text: &str,
    lines: &LineIndex,
) -> Vec<Presented> {
    let shown: Vec<Merged> = merged
        .into_iter()
        .filter(|m| !settings.disabled_rules.contains(&m.finding.rule))
        .filter(|m| !findings::is_suppressed(text, lines, &m.finding.rule, m.finding.line))
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
                severity: m.finding.severity,
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

/// A stable identity of a finding for human labels: file, rule, function and the trimmed
/// text of its line (so it survives code moving up or down).
pub fn fingerprint(path: &str, f: &Finding, text: &str, lines: &LineIndex) -> String {
    let (a, b) = encoding::line_content(text, lines, f.line);
    let line_text = text.get(a..b).unwrap_or("").trim();
    stable_hash(&[
        path,
        &f.rule,
        f.function.as_deref().unwrap_or(""),
        line_text,
    ])
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
            let related: Vec<DiagnosticRelatedInformation> = f
                .related
                .iter()
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
            let llm = p.merged.llm.as_ref().map(|o| {
                json!({
                    "verdict": o.verdict.name(),
                    "model": o.model,
                    "samples": o.samples,
                    "instability": o.instability,
                })
            });
            let data = json!({
                "tier": f.tier.name(),
                "rule": f.rule,
                "function": f.function,
                "partial": partial,
                "fingerprint": fingerprint(path, f, text, lines),
                "evidence": f.evidence,
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
