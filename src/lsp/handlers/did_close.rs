//! `textDocument/didClose`: forget the document, cancel its LLM checks, clear diagnostics.

use crate::lsp::server::{lock, EngineMsg, State};
use std::sync::Arc;
use tower_lsp_server::ls_types::DidCloseTextDocumentParams;

pub fn handle(state: &Arc<State>, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri.as_str().to_string();
    lock(&state.docs).remove(&uri);
    lock(&state.analyses).remove(&uri);
    state.scheduler.forget(&uri);
    lock(&state.baselines).remove(&uri);
    lock(&state.memos).remove(&uri);
    lock(&state.function_questions).remove(&uri);
    state.flaky_hints.forget(&uri);
    state.send(EngineMsg::Closed(uri));
    state.wake_workspace();
}
