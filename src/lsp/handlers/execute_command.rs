//! `workspace/executeCommand`:
//!
//! * `crosscheck.suppress {uri, line, rule}`: asks the client to insert the suppression
//!   comment above the 0-based `line` (`workspace/applyEdit`).
//! * `crosscheck.markCorrect` / `crosscheck.markIncorrect {fingerprint, rule, uri, line}`:
//!   stores a human label through the `RecordSink` when a store is wired in.
//! * `crosscheck.explain {uri, line, character}`: the taint finding at that position (or the
//!   first in its function): its tier, the LLM's answer about its flow and the explanation,
//!   with every line the explanation cites checked against the analyzer's path (lines not on
//!   it are listed as unverified) ("analyzer extracts, LLM explains, tool re-validates").
//! * `crosscheck.compareCfg {uri, line, character}`: the function's CFG cross-check (tier,
//!   Layer-1 scores), or why there is none ("LLM not configured", pending, not edited,
//!   excluded). Never waits for the network.
//!
//! Every command returns a JSON object with `status` and a human-readable `message`, and shows
//! the message to the user (`window/showMessage`).

use super::code_action::suppress_edit;
use crate::crosscheck::facts::Reference;
use crate::crosscheck::record::HumanLabel;
use crate::crosscheck::task::Task;
use crate::lsp::diagnostics::llm_only_tier;
use crate::lsp::encoding;
use crate::lsp::engine;
use crate::lsp::findings::is_taint_rule;
use crate::lsp::questions::{flow_key, flow_slot, function_slot};
use crate::lsp::scheduler::CheckState;
use crate::lsp::server::{commands, lock, State};
use crate::syntax::Cancel;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result as RpcResult};
use tower_lsp_server::ls_types::{ExecuteCommandParams, MessageType, Position, Uri};

fn arg(params: &ExecuteCommandParams) -> Value {
    params.arguments.first().cloned().unwrap_or(Value::Null)
}

fn invalid(msg: &str) -> Error {
    Error::invalid_params(msg.to_string())
}

pub async fn handle(state: &Arc<State>, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
    let a = arg(&params);
    // Commands that tell the user their outcome themselves (`window/showMessage`).
    let (result, shown) = match params.command.as_str() {
        commands::SUPPRESS => (suppress(state, &a).await?, false),
        commands::MARK_CORRECT => (label(state, &a, true).await?, false),
        commands::MARK_INCORRECT => (label(state, &a, false).await?, false),
        commands::EXPLAIN => (llm_command(state, &a, false).await?, false),
        commands::COMPARE_CFG => (llm_command(state, &a, true).await?, false),
        commands::EXPLAIN_FLAKY => (explain_flaky(state, &a).await?, true),
        commands::CHECK_EQUIVALENCE => (crate::lsp::equiv::execute(state, &a).await?, true),
        other => return Err(invalid(&format!("unknown command `{other}`"))),
    };
    if !shown {
        feedback(state, &result).await;
    }
    Ok(Some(result))
}

/// Every command's outcome is shown to the user (`window/showMessage`, plain text): a click on
/// "mark correct" or "explain" never ends in silence.
async fn feedback(state: &Arc<State>, result: &Value) {
    let Some(message) = result.get("message").and_then(Value::as_str) else {
        return;
    };
    let typ = match result.get("status").and_then(Value::as_str) {
        Some("failed" | "unavailable") => MessageType::WARNING,
        _ => MessageType::INFO,
    };
    let text = match result.get("function").and_then(Value::as_str) {
        Some(f) => format!("crosscheck ({f}): {message}"),
        None => format!("crosscheck: {message}"),
    };
    state.client.show_message(typ, text).await;
}

async fn suppress(state: &Arc<State>, a: &Value) -> RpcResult<Value> {
    let uri: Uri = a
        .get("uri")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("crosscheck.suppress needs `uri`"))?;
    let line = a
        .get("line")
        .and_then(Value::as_u64)
        .ok_or_else(|| invalid("crosscheck.suppress needs `line`"))? as u32;
    let rule = a
        .get("rule")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("crosscheck.suppress needs `rule`"))?;
    let Some(edit) = suppress_edit(state, &uri, line, rule) else {
        return Ok(json!({"status": "failed", "message": "the document is not open"}));
    };
    let applied = state
        .client
        .apply_edit(edit)
        .await
        .map(|r| r.applied)
        .unwrap_or(false);
    Ok(json!({
        "status": if applied { "done" } else { "failed" },
        "message": if applied { "suppression comment inserted" } else { "the client did not apply the edit" },
    }))
}

async fn label(state: &Arc<State>, a: &Value, correct: bool) -> RpcResult<Value> {
    let subject = a
        .get("fingerprint")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("a `fingerprint` argument is required"))?
        .to_string();
    let rule = a.get("rule").and_then(Value::as_str).unwrap_or("");
    let Some(sink) = &state.records else {
        let message = "no telemetry store is configured: the label was not stored";
        return Ok(json!({"status": "unavailable", "stored": false, "message": message}));
    };
    let label = HumanLabel {
        subject,
        correct,
        timestamp: (state.clock)(),
        note: (!rule.is_empty()).then(|| format!("rule {rule}")),
    };
    match sink.label(&label) {
        Ok(()) => Ok(json!({
            "status": "done",
            "stored": true,
            "message": format!("finding marked as {}", if correct { "correct" } else { "incorrect" }),
        })),
        Err(e) => {
            state
                .log(
                    MessageType::WARNING,
                    format!("crosscheck: could not store the label: {e}"),
                )
                .await;
            Ok(json!({"status": "failed", "stored": false, "message": e}))
        }
    }
}

async fn llm_command(state: &Arc<State>, a: &Value, compare: bool) -> RpcResult<Value> {
    let uri = a
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("`uri` is required"))?
        .to_string();
    let pos = Position::new(
        a.get("line").and_then(Value::as_u64).unwrap_or(0) as u32,
        a.get("character").and_then(Value::as_u64).unwrap_or(0) as u32,
    );
    let doc = {
        let docs = lock(&state.docs);
        docs.get(&uri).map(|d| {
            (
                d.parsed(),
                d.excluded,
                d.version,
                Arc::<str>::from(d.text()),
                d.lines().clone(),
            )
        })
    };
    if !state.scheduler.is_available() {
        let message = state.scheduler.unavailable_reason().to_string();
        return Ok(json!({"status": "unavailable", "message": message}));
    }
    let Some((Some(parsed), excluded, version, text, lines)) = doc else {
        return Ok(
            json!({"status": "unavailable", "message": "the document is not open or not analysed"}),
        );
    };
    if excluded {
        return Ok(
            json!({"status": "unavailable", "message": "this file is excluded: it is never sent to an LLM"}),
        );
    }
    let offset = encoding::offset_of(&parsed.text, &parsed.lines, pos, state.encoding());
    let line = parsed.line_of(offset.min(parsed.text.len()));
    let function = engine::function_at_offset(&parsed, offset, &Cancel::never());
    if compare {
        let Some(f) = function else {
            return Ok(json!({"status": "unavailable", "message": "no function at this position"}));
        };
        let slot = function_slot(&f.id, Task::Cfg);
        let analyzer = json!(f.summary);
        return Ok(match state.scheduler.state_at(&uri, &slot, version) {
            CheckState::Done(o) => {
                let scores: Vec<String> = o
                    .scores
                    .iter()
                    .map(|(k, v)| format!("{k} {v:.2}"))
                    .collect();
                json!({
                    "status": "done",
                    "function": f.name,
                    "message": format!(
                        "CFG cross-check of {}: the analyzer's CFG is {} (the LLM's answer {}; {})",
                        f.name,
                        o.tier.name(),
                        if o.verdict == "pass" { "passes the Layer-1 thresholds" } else { "does not pass the Layer-1 thresholds" },
                        if scores.is_empty() { "no scores".to_string() } else { scores.join(", ") }
                    ),
                    "tier": o.tier.name(),
                    "verdict": o.verdict,
                    "model": o.model,
                    "scores": o.scores,
                    "analyzer": analyzer,
                })
            }
            CheckState::Pending => json!({
                "status": "pending",
                "function": f.name,
                "message": "the LLM's CFG cross-check of this function is still running",
                "analyzer": analyzer,
            }),
            CheckState::Failed(m) => json!({"status": "failed", "function": f.name, "message": m}),
            CheckState::Unavailable(_) => json!({
                "status": "unavailable",
                "function": f.name,
                "message": "the CFG of this function has not been cross-checked: function checks run for functions edited since the file was opened (settings `llm.tasks`, `llm.function_checks`)",
                "analyzer": analyzer,
            }),
        });
    }
    // Explain: the taint finding on this line (else the first in the function), with what
    // the LLM said about its flow, re-validated against the analyzer's path.
    let Some(analysis) = lock(&state.analyses)
        .get(&uri)
        .cloned()
        .filter(|x| x.version == version)
    else {
        return Ok(
            json!({"status": "pending", "message": "the analysis of this version is still running"}),
        );
    };
    let found = state.fingerprinted_findings(&analysis, &text, &lines);
    let in_scope = |l: usize| match &function {
        Some(f) => f.start_line <= l && l <= f.end_line,
        None => l == line,
    };
    let flows: Vec<&(crate::lsp::findings::Finding, String)> = found
        .iter()
        .filter(|(f, _)| is_taint_rule(&f.rule) && !f.path.is_empty())
        .collect();
    let chosen = flows
        .iter()
        .find(|(f, _)| f.line == line)
        .or_else(|| flows.iter().find(|(f, _)| in_scope(f.line)));
    let Some((finding, print)) = chosen.map(|x| (&x.0, &x.1)) else {
        return Ok(json!({
            "status": "unavailable",
            "message": "no taint finding here: the LLM is asked about each taint finding's flow",
        }));
    };
    let slot = flow_slot(&flow_key(print, finding));
    let path_lines: BTreeSet<usize> = finding
        .path
        .iter()
        .filter(|e| e.file == analysis.path)
        .map(|e| e.line)
        .collect();
    Ok(match state.scheduler.state_at(&uri, &slot, version) {
        CheckState::Done(o) => {
            let reasoning = o
                .models
                .iter()
                .find_map(|m| m.reasoning.clone())
                .unwrap_or_else(|| "the LLM gave no reasoning".to_string());
            // The explanation cites lines relative to the code unit it saw; the ones that are
            // on no step of the analyzer's path are marked unverified.
            let question_lines = question_step_lines(&state.scheduler, &uri, &slot);
            let cited = cited_lines(&reasoning);
            let off_path: Vec<usize> = cited
                .iter()
                .copied()
                .filter(|l| !question_lines.contains(l))
                .collect();
            let mut message = format!(
                "{} at line {}: the finding is {}; LLM answer {} ({}). LLM explanation (unverified): {}",
                finding.rule,
                finding.line,
                o.tier.name(),
                o.verdict,
                o.model,
                reasoning
            );
            if !off_path.is_empty() {
                let listed: Vec<String> = off_path.iter().map(|l| l.to_string()).collect();
                message.push_str(&format!(
                    " [lines cited that are not on the analyzer's path, unverified: {}]",
                    listed.join(", ")
                ));
            }
            json!({
                "status": "done",
                "rule": finding.rule,
                "line": finding.line,
                "message": message,
                "tier": o.tier.name(),
                "explanation_tier": llm_only_tier().name(),
                "verdict": o.verdict,
                "model": o.model,
                "path_lines": path_lines,
                "cited_lines": cited,
                "unverified_lines": off_path,
            })
        }
        CheckState::Pending => json!({
            "status": "pending",
            "rule": finding.rule,
            "message": "the LLM's answer about this flow is still on its way",
        }),
        CheckState::Failed(m) => json!({"status": "failed", "rule": finding.rule, "message": m}),
        CheckState::Unavailable(m) => {
            json!({"status": "unavailable", "rule": finding.rule, "message": m})
        }
    })
}

/// The unit-relative lines of the steps of the flow question in `slot`.
fn question_step_lines(
    scheduler: &crate::lsp::scheduler::Scheduler,
    uri: &str,
    slot: &str,
) -> BTreeSet<usize> {
    scheduler
        .question(uri, slot)
        .and_then(|q| match &q.reference {
            Reference::Flow { flow, .. } => Some(flow.steps.iter().map(|s| s.line).collect()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Line numbers an explanation cites (`line 7`, `lines 3 and 5`, `L12`).
pub fn cited_lines(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if w == "line" || w == "lines" {
            let mut j = i + 1;
            while j < words.len() {
                match words[j].parse::<usize>() {
                    Ok(n) if n > 0 && n < 1_000_000 => {
                        out.insert(n);
                        j += 1;
                    }
                    _ if matches!(words[j], "and" | "to" | "or") => j += 1,
                    _ => break,
                }
            }
            i = j;
            continue;
        }
        if let Some(n) = w.strip_prefix('l').and_then(|d| d.parse::<usize>().ok()) {
            if n > 0 && n < 1_000_000 {
                out.insert(n);
            }
        }
        i += 1;
    }
    out.into_iter().collect()
}

/// `crosscheck.explainFlaky {uri, line}`: the suspected root cause of the test at `line`
/// (0-based), its usual fix and the evidence; also shown with `window/showMessage`.
async fn explain_flaky(state: &Arc<State>, a: &Value) -> RpcResult<Value> {
    let uri = a
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("crosscheck.explainFlaky needs `uri`"))?
        .to_string();
    let line = a
        .get("line")
        .and_then(Value::as_u64)
        .ok_or_else(|| invalid("crosscheck.explainFlaky needs `line`"))? as usize;
    let parsed = lock(&state.docs).get(&uri).and_then(|d| d.parsed());
    let Some(parsed) = parsed else {
        return Err(invalid("the document is not open"));
    };
    let tests = state.flaky_hints.get(&uri, &parsed);
    let Some(t) = crate::lsp::flaky::at_line(&tests, line + 1) else {
        return Ok(json!({"status": "none", "message": "no flaky-test signal for this line"}));
    };
    let out = crate::lsp::flaky::explanation(t);
    state
        .client
        .show_message(
            MessageType::INFO,
            format!(
                "crosscheck: {} may be flaky ({}, {}): {} Usual fix: {}",
                t.name,
                out["category"].as_str().unwrap_or("?"),
                out["tier"].as_str().unwrap_or("?"),
                out["explanation"].as_str().unwrap_or(""),
                out["usual_fix"].as_str().unwrap_or("")
            ),
        )
        .await;
    Ok(out)
}
