//! `textDocument/codeAction`: for each crosscheck diagnostic in the range, "suppress" (an
//! inline `crosscheck: ignore[rule]` comment on the line above), "mark correct" and "mark
//! incorrect" (human labels); for the function at the cursor, "explain", "compare CFG" and,
//! when it differs from its committed version, "check equivalence with git HEAD"
//! ([`crate::lsp::equiv`]; git runs on the blocking pool).
//! Diagnostics are matched against what the server last published, so clients that do not
//! echo `data` back still get every action.

use crate::analysis::suppress::{indentation_of, suppression_comment};
use crate::lsp::encoding;
use crate::lsp::engine;
use crate::lsp::server::{commands, lock, State};
use crate::syntax::Cancel;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use tower_lsp_server::ls_types::*;

fn rule_of(d: &Diagnostic) -> Option<String> {
    match &d.code {
        Some(NumberOrString::String(s)) => Some(s.clone()),
        Some(NumberOrString::Number(n)) => Some(n.to_string()),
        None => None,
    }
}

/// The edit that inserts a suppression comment above a 0-based line.
pub fn suppress_edit(
    state: &Arc<State>,
    uri: &Uri,
    line0: u32,
    rule: &str,
) -> Option<WorkspaceEdit> {
    let docs = lock(&state.docs);
    let d = docs.get(uri.as_str())?;
    let indent = indentation_of(d.text(), d.lines(), line0 as usize + 1);
    let text = suppression_comment(d.language, rule, &indent);
    let at = Position::new(line0, 0);
    let mut changes = HashMap::new();
    changes.insert(
        uri.clone(),
        vec![TextEdit {
            range: Range::new(at, at),
            new_text: text,
        }],
    );
    Some(WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    })
}

pub async fn handle(state: &Arc<State>, params: CodeActionParams) -> Option<CodeActionResponse> {
    let uri = params.text_document.uri.clone();
    let key = uri.as_str().to_string();
    let range = params.range;
    let published = lock(&state.published)
        .get(&key)
        .cloned()
        .unwrap_or_default();
    let mut actions: CodeActionResponse = Vec::new();
    for d in published
        .iter()
        .filter(|d| d.range.start.line <= range.end.line && range.start.line <= d.range.end.line)
    {
        let Some(rule) = rule_of(d) else { continue };
        let line0 = d.range.start.line;
        let data = d.data.clone().unwrap_or(serde_json::Value::Null);
        if let Some(edit) = suppress_edit(state, &uri, line0, &rule) {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("crosscheck: suppress `{rule}` here (ignore comment)"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(edit),
                ..Default::default()
            }));
        }
        let label_args = json!({
            "uri": key,
            "rule": rule,
            "line": line0,
            "fingerprint": data.get("fingerprint").cloned().unwrap_or_default(),
            "tier": data.get("tier").cloned().unwrap_or_default(),
        });
        for (cmd, word) in [
            (commands::MARK_CORRECT, "correct"),
            (commands::MARK_INCORRECT, "incorrect"),
        ] {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("crosscheck: mark `{rule}` finding as {word}"),
                kind: Some(CodeActionKind::EMPTY),
                diagnostics: Some(vec![d.clone()]),
                command: Some(Command {
                    title: format!("Mark finding as {word}"),
                    command: cmd.to_string(),
                    arguments: Some(vec![label_args.clone()]),
                }),
                ..Default::default()
            }));
        }
    }
    // Function-level commands at the start of the range.
    let parsed = lock(&state.docs).get(&key).and_then(|d| d.parsed());
    if let Some(parsed) = parsed {
        let offset =
            encoding::offset_of(&parsed.text, &parsed.lines, range.start, state.encoding());
        if let Some(f) = engine::function_at_offset(&parsed, offset, &Cancel::never()) {
            let args =
                json!({"uri": key, "line": range.start.line, "character": range.start.character});
            for (cmd, title) in [
                (
                    commands::EXPLAIN,
                    format!("crosscheck: explain `{}` (LLM)", f.name),
                ),
                (
                    commands::COMPARE_CFG,
                    format!("crosscheck: compare the CFG of `{}` with the LLM", f.name),
                ),
            ] {
                actions.push(CodeActionOrCommand::Command(Command {
                    title,
                    command: cmd.to_string(),
                    arguments: Some(vec![args.clone()]),
                }));
            }
        }
        // A function that differs from its version at git HEAD: refactoring safety.
        if let Some(path) = crate::lsp::workspace::file_path(&key) {
            let line = range.start.line as usize + 1;
            let differs = crate::exec::equiv::function_at_line(&parsed, line).is_some()
                && matches!(
                    parsed.language,
                    crate::syntax::Language::Python
                        | crate::syntax::Language::Java
                        | crate::syntax::Language::C
                        | crate::syntax::Language::Cpp
                );
            let head = if differs {
                crate::lsp::equiv::head_text_cached(&path).await.ok()
            } else {
                None
            };
            if let Some((name, _)) =
                head.and_then(|h| crate::lsp::equiv::changed_function(&parsed, line, &h))
            {
                let version = lock(&state.docs).version(&key);
                actions.push(CodeActionOrCommand::Command(Command {
                    title: format!(
                        "crosscheck: check equivalence of `{name}` with the version at git HEAD"
                    ),
                    command: commands::CHECK_EQUIVALENCE.to_string(),
                    arguments: Some(vec![json!({
                        "uri": key,
                        "line": range.start.line,
                        "character": range.start.character,
                        "version": version,
                    })]),
                }));
            }
        }
        // A test with a suspected flaky-test root cause: explain the cause and the usual fix.
        let tests = state.flaky_hints.get(&key, &parsed);
        if let Some(t) = crate::lsp::flaky::at_line(&tests, range.start.line as usize + 1) {
            actions.push(CodeActionOrCommand::Command(Command {
                title: format!(
                    "crosscheck: why might `{}` be flaky? ({})",
                    t.name,
                    t.category.map(|c| c.name()).unwrap_or("?")
                ),
                command: commands::EXPLAIN_FLAKY.to_string(),
                arguments: Some(vec![json!({"uri": key, "line": range.start.line})]),
            }));
        }
    }
    Some(actions)
}
