//! `textDocument/codeLens`: a lens above each test function with a suspected flaky-test root
//! cause (`flaky? <category> (analyzer-only)`); its command explains the cause and the usual
//! fix. Computed from the current parse only; never waits for analysis or the network.

use crate::lsp::flaky;
use crate::lsp::server::{commands, lock, State};
use serde_json::json;
use std::sync::Arc;
use tower_lsp_server::ls_types::{CodeLens, CodeLensParams, Command, Position, Range};

pub fn handle(state: &Arc<State>, params: CodeLensParams) -> Option<Vec<CodeLens>> {
    let uri = params.text_document.uri.as_str().to_string();
    let parsed = {
        let docs = lock(&state.docs);
        let d = docs.get(&uri)?;
        d.parsed()?
    };
    let lenses = state
        .flaky_hints
        .get(&uri, &parsed)
        .iter()
        .map(|t| {
            let line = t.line.saturating_sub(1) as u32;
            CodeLens {
                range: Range::new(Position::new(line, 0), Position::new(line, 0)),
                command: Some(Command {
                    title: flaky::lens_title(t),
                    command: commands::EXPLAIN_FLAKY.to_string(),
                    arguments: Some(vec![json!({"uri": uri, "line": line})]),
                }),
                data: None,
            }
        })
        .collect();
    Some(lenses)
}
