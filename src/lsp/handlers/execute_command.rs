//! `workspace/executeCommand`:
//!
//! * `crosscheck.suppress {uri, line, rule}`: asks the client to insert the suppression
//!   comment above the 0-based `line` (`workspace/applyEdit`).
//! * `crosscheck.markCorrect` / `crosscheck.markIncorrect {fingerprint, rule, uri, line}`:
//!   stores a human label through the `RecordSink` when a store is wired in.
//! * `crosscheck.explain` / `crosscheck.compareCfg {uri, line, character}`: what is known
//!   about the function at that position (the LLM's explanation, or its CFG comparison), or
//!   why nothing is ("LLM not configured", pending, excluded). Never waits for the network.
//!
//! Every command returns a JSON object with `status` and a human-readable `message`, and shows
//! the message to the user (`window/showMessage`).

use super::code_action::suppress_edit;
use crate::crosscheck::record::HumanLabel;
use crate::lsp::diagnostics::{cfg_summary_tier, llm_only_tier};
use crate::lsp::encoding;
use crate::lsp::engine;
use crate::lsp::scheduler::CheckState;
use crate::lsp::server::{commands, lock, State};
use crate::syntax::Cancel;
use serde_json::{json, Value};
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
    let (parsed, excluded) = {
        let docs = lock(&state.docs);
        match docs.get(&uri) {
            Some(d) => (d.parsed(), d.excluded),
            None => (None, false),
        }
    };
    if !state.scheduler.is_available() {
        let message = state.scheduler.unavailable_reason().to_string();
        return Ok(json!({"status": "unavailable", "message": message}));
    }
    if excluded {
        return Ok(
            json!({"status": "unavailable", "message": "this file is excluded: it is never sent to an LLM"}),
        );
    }
    let Some(parsed) = parsed else {
        return Ok(
            json!({"status": "unavailable", "message": "the document is not open or not analysed"}),
        );
    };
    let offset = encoding::offset_of(&parsed.text, &parsed.lines, pos, state.encoding());
    let Some(f) = engine::function_at_offset(&parsed, offset, &Cancel::never()) else {
        return Ok(json!({"status": "unavailable", "message": "no function at this position"}));
    };
    let analyzer = json!(f.summary);
    let out = match state.scheduler.state(&uri, &f.id, &f.text) {
        CheckState::Done(o) => {
            let message = if compare {
                o.comparison
                    .clone()
                    .unwrap_or_else(|| "no comparison available".to_string())
            } else {
                o.explanation
                    .clone()
                    .unwrap_or_else(|| "the LLM gave no explanation".to_string())
            };
            json!({
                "status": "done",
                "function": f.name,
                "message": message,
                // The explanation is the LLM's alone; the comparison is about the analyzer's
                // CFG, which the LLM can confirm or leave analyzer-only.
                "tier": if compare {
                    cfg_summary_tier(o.verdict).name()
                } else {
                    llm_only_tier().name()
                },
                "verdict": o.verdict.name(),
                "model": o.model,
                "analyzer": analyzer,
            })
        }
        CheckState::Pending => json!({
            "status": "pending",
            "function": f.name,
            "message": "the LLM cross-check of this function is still running",
            "analyzer": analyzer,
        }),
        CheckState::Failed(m) => json!({"status": "failed", "function": f.name, "message": m}),
        CheckState::Unavailable(m) => {
            json!({"status": "unavailable", "function": f.name, "message": m})
        }
    };
    Ok(out)
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
