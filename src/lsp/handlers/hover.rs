//! `textDocument/hover` on a function: its CFG summary, callers and callees, findings in it
//! (taint flows with their paths), and what the LLM said, if anything is known. On a line
//! with a finding, the hover starts with the rule's documentation from the registry; on a
//! line a taint flow passes (a tainted variable's assignment), with the flow's path. Computed from the current parse
//! and stored results only: never waits for analysis or the network.

use crate::analysis::rules;
use crate::crosscheck::record::Tier;
use crate::crosscheck::task::Task;
use crate::crosscheck::tier::LlmStance;
use crate::lsp::config::FunctionChecks;
use crate::lsp::diagnostics::{deterministic_findings, llm_only_tier};
use crate::lsp::encoding;
use crate::lsp::engine::{self, FunctionFacts};
use crate::lsp::findings::is_taint_rule;
use crate::lsp::questions::{flow_key, flow_slot, function_slot};
use crate::lsp::scheduler::{CheckOutcome, CheckState};
use crate::lsp::server::{lock, State};
use crate::lsp::workspace::unit_path;
use crate::syntax::Cancel;
use std::fmt::Write as _;
use std::sync::Arc;
use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

/// At most this many callers / callees are listed.
const MAX_LISTED: usize = 10;

pub fn handle(state: &Arc<State>, params: HoverParams) -> Option<Hover> {
    let pos = params.text_document_position_params;
    let uri = pos.text_document.uri.as_str().to_string();
    let (parsed, version) = {
        let docs = lock(&state.docs);
        let d = docs.get(&uri)?;
        (d.parsed()?, d.version)
    };
    let enc = state.encoding();
    let offset = encoding::offset_of(&parsed.text, &parsed.lines, pos.position, enc);
    let line = parsed.line_of(offset.min(parsed.text.len()));
    let docs_md = rule_docs(state, &uri, version, line);
    let Some(f) = engine::function_at_offset(&parsed, offset, &Cancel::never()) else {
        // Outside functions: the documentation of the rules reported on this line, if any.
        if docs_md.is_empty() {
            return None;
        }
        let (a, b) = encoding::line_content(&parsed.text, &parsed.lines, line);
        return Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: docs_md,
            }),
            range: Some(encoding::range_of(&parsed.text, &parsed.lines, a, b, enc)),
        });
    };
    // A test function with a suspected flaky-test root cause: the category and its evidence.
    let flaky_md = crate::lsp::flaky::at_line(&state.flaky_hints.get(&uri, &parsed), f.start_line)
        .map(crate::lsp::flaky::hover_markdown)
        .unwrap_or_default();
    let markdown = sections(&[
        &docs_md,
        &render(state, &uri, version, &parsed, &f),
        &flaky_md,
    ]);
    let (a, b) = encoding::line_content(&parsed.text, &parsed.lines, f.start_line);
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(encoding::range_of(&parsed.text, &parsed.lines, a, b, enc)),
    })
}

/// What the deterministic analysis says about the 1-based `line`: variables made tainted
/// there, the taint flows passing through it (their paths), and the registry documentation
/// of every rule with a finding on it (name, id, severity, description, evidence).
fn rule_docs(state: &Arc<State>, uri: &str, version: i32, line: usize) -> String {
    let Some(a) = lock(&state.analyses)
        .get(uri)
        .cloned()
        .filter(|a| a.version == version)
    else {
        return String::new();
    };
    let (ws, current) = {
        let ip = lock(&state.interproc);
        (
            ip.findings.get(&a.path).cloned().unwrap_or_default(),
            ip.unit_hashes.get(&a.path) == Some(&a.text_hash),
        )
    };
    let found = deterministic_findings(&a, &ws, current);
    let mut ids: Vec<String> = found
        .iter()
        .filter(|f| f.line == line)
        .map(|f| f.rule.clone())
        .collect();
    ids.sort();
    ids.dedup();
    let mut md = String::new();
    // Variables made tainted on this line, and the taint flows passing through it.
    let mut vars: Vec<&str> = a
        .report
        .tainted_variables
        .iter()
        .filter(|v| v.line == line)
        .map(|v| v.var.as_str())
        .collect();
    vars.sort();
    vars.dedup();
    if !vars.is_empty() {
        let listed: Vec<String> = vars.iter().map(|v| format!("`{v}`")).collect();
        let _ = writeln!(md, "**Tainted here**: {}\n", listed.join(", "));
    }
    let through: Vec<&crate::lsp::findings::Finding> = found
        .iter()
        .filter(|f| is_taint_rule(&f.rule))
        .filter(|f| f.related.iter().any(|r| r.file == a.path && r.line == line))
        .take(MAX_LISTED)
        .collect();
    for f in through {
        let _ = writeln!(
            md,
            "**Taint flow** (`{}`, sink line {}): {}\n",
            f.rule,
            f.line,
            flow_path(&a.path, f)
        );
    }
    if !md.is_empty() && ids.is_empty() {
        md.push_str("---\n\n");
    }
    for id in ids {
        if let Some(r) = rules::rule(&id) {
            let _ = writeln!(
                md,
                "**{}** (`{}`, {}): {}\n\n*Evidence*: {}.\n",
                r.name,
                r.id,
                r.severity.name(),
                r.description,
                r.evidence
            );
        }
    }
    if !md.is_empty() && !md.ends_with("---\n\n") {
        md.push_str("---\n\n");
    }
    md
}

/// A taint flow's path as `lines 3 → 4` (other files named: `lib.py:7`); a long path as the
/// locations the diagnostic shows, with the count of those left out.
fn flow_path(path: &str, f: &crate::lsp::findings::Finding) -> String {
    let (shown, omitted) = crate::lsp::findings::shown_related(&f.related);
    let steps: Vec<String> = shown
        .into_iter()
        .map(|r| {
            if r.file == path {
                format!("{}", r.line)
            } else {
                format!("{}:{}", short_name(&r.file), r.line)
            }
        })
        .collect();
    let more = if omitted > 0 {
        format!(" ({omitted} more locations not shown)")
    } else {
        String::new()
    };
    format!("lines {}{more}", steps.join(" → "))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Markdown sections joined by one blank line each (a paragraph break: without it a client
/// runs the last line of one section into the first of the next).
fn sections(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| p.trim_matches('\n'))
        .filter(|p| !p.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn render(
    state: &Arc<State>,
    uri: &str,
    version: i32,
    parsed: &crate::syntax::ParsedFile,
    f: &FunctionFacts,
) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "**`{}{}`** ({:?}, lines {}-{})\n",
        f.name, f.signature, f.kind, f.start_line, f.end_line
    );
    let s = &f.summary;
    let _ = writeln!(
        md,
        "**CFG**: {} · {} · {} · cyclomatic {}{}\n",
        plural(s.branches, "branch", "branches"),
        plural(s.loops, "loop", "loops"),
        plural(s.exits, "exit", "exits"),
        s.cyclomatic,
        if f.partial {
            " — *partial: part of this function does not parse*"
        } else {
            ""
        }
    );
    // Callers and callees from the latest workspace call graph.
    let path = unit_path(uri);
    let ip = Arc::clone(&lock(&state.interproc));
    let me = |file: &Option<String>, name: &str, sig: &Option<String>| {
        file.as_deref() == Some(path.as_str())
            && name == f.name
            && sig.as_deref() == Some(f.signature.as_str())
    };
    // In the call graph's order (by caller), whatever chunk an edge comes from.
    let mut calls_in: Vec<&crate::analysis::callgraph::CallEdge> = ip
        .edges()
        .iter()
        .filter(|e| me(&e.callee.file, &e.callee.name, &e.callee.signature))
        .collect();
    calls_in.sort();
    let mut callers: Vec<String> = calls_in
        .into_iter()
        .map(|e| {
            let file = e.caller.file.as_deref().map(short_name).unwrap_or_default();
            format!("`{}` ({file}:{})", e.caller.name, e.line)
        })
        .collect();
    callers.dedup();
    let mut callees: Vec<String> = ip
        .edges()
        .iter()
        .filter(|e| me(&e.caller.file, &e.caller.name, &e.caller.signature))
        .map(|e| {
            if e.callee.file.is_none() {
                format!("`{}` (external)", e.callee.name)
            } else {
                format!("`{}`", e.callee.name)
            }
        })
        .collect();
    callees.sort();
    callees.dedup();
    let list = |items: &[String]| -> String {
        if items.is_empty() {
            return "none".to_string();
        }
        let mut s = items
            .iter()
            .take(MAX_LISTED)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if items.len() > MAX_LISTED {
            let _ = write!(s, ", and {} more", items.len() - MAX_LISTED);
        }
        s
    };
    if ip.generation == 0 {
        let _ = writeln!(md, "**Callers / callees**: workspace analysis pending\n");
    } else {
        let _ = writeln!(md, "**Callers** ({}): {}\n", callers.len(), list(&callers));
        let _ = writeln!(md, "**Callees** ({}): {}\n", callees.len(), list(&callees));
        if let Some(note) = &ip.note {
            let _ = writeln!(md, "*{note}*\n");
        }
    }
    // Findings in this function (deterministic and workspace-level, e.g. taint flows).
    let analysis = lock(&state.analyses).get(uri).cloned();
    let mut in_fn: Vec<String> = Vec::new();
    let mut flow_slots: Vec<(usize, String, String)> = Vec::new();
    if let Some(a) = analysis.filter(|a| a.version == version) {
        // The shown findings with their fingerprints (the parse is of this version).
        for (fd, print) in state.fingerprinted_findings(&a, &parsed.text, &parsed.lines) {
            if is_taint_rule(&fd.rule)
                && !fd.path.is_empty()
                && f.start_line <= fd.line
                && fd.line <= f.end_line
            {
                flow_slots.push((fd.line, fd.rule.clone(), flow_slot(&flow_key(&print, &fd))));
            }
            if f.start_line <= fd.line && fd.line <= f.end_line {
                let mut item = format!("line {}: `{}` {}", fd.line, fd.rule, fd.message);
                // A taint flow: its path, source to sink.
                if is_taint_rule(&fd.rule) && !fd.related.is_empty() {
                    let _ = write!(item, " — path: {}", flow_path(&a.path, &fd));
                }
                in_fn.push(item);
            }
        }
    }
    if !in_fn.is_empty() {
        let _ = writeln!(
            md,
            "**Findings** (deterministic; tiers are shown on the diagnostics):\n"
        );
        for l in in_fn.iter().take(MAX_LISTED) {
            let _ = writeln!(md, "- {l}");
        }
        md.push('\n');
    }
    // What the LLM said: each taint finding's question, then the function tasks.
    let excluded = lock(&state.docs).get(uri).is_none_or(|d| d.excluded);
    let (_, settings, _) = state.settings_for_uri(uri);
    let mut llm = String::new();
    if excluded {
        llm.push_str("file excluded: never sent to an LLM\n");
    } else if !state.scheduler.is_available() {
        let _ = writeln!(
            llm,
            "{}",
            escape_inline(state.scheduler.unavailable_reason())
        );
    } else if !settings.llm_enabled {
        llm.push_str("LLM cross-checks are disabled by configuration\n");
    } else {
        for (line, rule, slot) in &flow_slots {
            let s = state.scheduler.state_at(uri, slot, version);
            let _ = writeln!(llm, "- `{rule}` at line {line}: {}", state_text(&s, true));
            if let CheckState::Done(o) = &s {
                llm.push_str(&model_lines(o));
            }
        }
        for task in &settings.llm_tasks {
            let slot = function_slot(&f.id, *task);
            let s = state.scheduler.state_at(uri, &slot, version);
            if matches!(&s, CheckState::Unavailable(_)) {
                continue;
            }
            let _ = writeln!(
                llm,
                "- {} of `{}`: {}",
                task_label(*task),
                f.name,
                state_text(&s, false)
            );
            if let CheckState::Done(o) = &s {
                llm.push_str(&model_lines(o));
            }
        }
        if llm.is_empty() {
            let why = match settings.llm_function_checks {
                FunctionChecks::Edited => {
                    "no taint finding here; function checks run when the function is edited"
                }
                FunctionChecks::Off => "no taint finding here; function checks are off",
                FunctionChecks::All => "no question yet",
            };
            let _ = writeln!(llm, "{why}");
        }
    }
    let _ = write!(md, "**LLM**:\n\n{llm}");
    md
}

fn task_label(t: Task) -> &'static str {
    match t {
        Task::Cfg => "CFG cross-check",
        Task::CallGraph => "call-graph cross-check",
        Task::DataDependency => "data-dependency cross-check",
        Task::Taint => "taint cross-check",
        Task::Ast => "AST cross-check",
        Task::PointsTo => "points-to cross-check",
        _ => "cross-check",
    }
}

/// One line saying where a question stands and, when answered, why the tier is what it is.
fn state_text(s: &CheckState, flow: bool) -> String {
    match s {
        CheckState::Unavailable(r) => escape_inline(r),
        CheckState::Pending => "pending… (queued for the LLM)".to_string(),
        CheckState::Failed(m) => format!("the check failed: {}", escape_inline(m)),
        CheckState::Done(o) => {
            let why = match (flow, o.stance) {
                (true, LlmStance::Agrees) => {
                    "the LLM answers that the value reaches the sink unsanitised"
                }
                (true, LlmStance::Disagrees) => {
                    "the LLM does not confirm the flow (the analyzer's finding stands)"
                }
                (true, LlmStance::Unstable) => "the LLM's samples disagree with each other",
                (true, _) => "the LLM gave no usable answer",
                (false, LlmStance::Agrees) => "the LLM's answer passes the Layer-1 thresholds",
                (false, LlmStance::Unstable) => "the LLM's samples disagree with each other",
                (false, _) => "the LLM's answer does not pass the Layer-1 thresholds",
            };
            let mut t = format!(
                "**{}** (answer {}; {why}){}",
                o.tier.name(),
                escape_inline(&o.verdict),
                if o.cached { " · cached" } else { "" }
            );
            if !o.scores.is_empty() && !flow {
                let scores: Vec<String> = o
                    .scores
                    .iter()
                    .map(|(k, v)| format!("{} {v:.2}", escape_inline(k)))
                    .collect();
                let _ = write!(t, " · scores: {}", scores.join(", "));
            }
            if !o.missed.is_empty() && !flow {
                let _ = write!(t, " · {} analyzer facts not in the answer", o.missed.len());
            }
            let unverified = o.claims.iter().filter(|(_, t)| *t == Tier::LlmOnly).count();
            let refuted = o.claims.iter().filter(|(_, t)| *t == Tier::Refuted).count();
            if unverified + refuted > 0 {
                let _ = write!(
                    t,
                    " · LLM claims: {unverified} unverified, {refuted} refuted"
                );
            }
            t
        }
    }
}

/// Each model's verdict and reasoning. The reasoning is the LLM's text: shown as a literal
/// block (a code fence longer than any backtick run in it), never as Markdown, HTML or links.
fn model_lines(o: &CheckOutcome) -> String {
    let mut out = String::new();
    for m in &o.models {
        let _ = writeln!(
            out,
            "  - `{}`: {} · {} · instability {:.2}{}",
            escape_code(&m.model),
            escape_inline(&m.verdict),
            plural(m.samples, "sample", "samples"),
            m.instability,
            if m.stable { "" } else { " · unstable" }
        );
        if let Some(r) = m.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
            let _ = writeln!(
                out,
                "    reasoning ({}, unverified):\n",
                llm_only_tier().name()
            );
            out.push_str(&literal_block(r, "    "));
        }
    }
    out
}

/// Text shown literally: a fenced block whose fence is longer than any run of backticks in
/// the text, control characters removed.
pub(crate) fn literal_block(text: &str, indent: &str) -> String {
    let clean: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .collect();
    let mut longest = 0usize;
    let mut run = 0usize;
    for c in clean.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{indent}{fence}text\n");
    for l in clean.lines() {
        let _ = writeln!(out, "{indent}{l}");
    }
    let _ = writeln!(out, "{indent}{fence}");
    out
}

/// Text for inline Markdown: every ASCII punctuation character backslash-escaped (no
/// emphasis, links, HTML or code spans can start), and `://` / `www.` broken with a
/// zero-width space so no client autolinks it.
pub(crate) fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars().filter(|c| !c.is_control()) {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out.replace(":\\/\\/", ":\u{200B}\\/\\/")
        .replace("www\\.", "www\u{200B}\\.")
}

/// Text inside an inline code span: backticks and line breaks removed.
fn escape_code(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '`' && !c.is_control())
        .collect()
}

fn short_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn sections_are_separated_by_exactly_one_blank_line() {
        assert_eq!(
            super::sections(&["**Rule**: text", "\n**`f()`** (x)\n\n", "", "- item\n"]),
            "**Rule**: text\n\n**`f()`** (x)\n\n- item"
        );
    }
}
