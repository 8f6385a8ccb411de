//! `textDocument/didChange`: incremental edits applied synchronously, in arrival order,
//! before anything is awaited; then the document is queued for analysis.

use crate::lsp::server::{lock, EngineMsg, State};
use std::sync::Arc;
use tower_lsp_server::ls_types::DidChangeTextDocumentParams;

pub fn handle(state: &Arc<State>, params: DidChangeTextDocumentParams) {
    let uri = params.text_document.uri.as_str().to_string();
    let enc = state.encoding();
    let started = std::time::Instant::now();
    let applied = {
        let mut docs = lock(&state.docs);
        match docs.get_mut(&uri) {
            Some(d) => {
                d.apply_changes(params.content_changes, params.text_document.version, enc);
                true
            }
            None => false,
        }
    };
    tracing::debug!(%uri, version = params.text_document.version, applied_ms = started.elapsed().as_secs_f64() * 1000.0, "didChange applied");
    if applied {
        state.send(EngineMsg::Analyze(uri));
    } else {
        tracing::warn!(%uri, "didChange for a document that is not open; ignored");
    }
}
