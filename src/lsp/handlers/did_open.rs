//! `textDocument/didOpen`: applied synchronously, then queued for analysis.

use crate::lsp::documents::{detect_language, Document};
use crate::lsp::server::{lock, EngineMsg, State};
use crate::lsp::workspace::file_path;
use std::sync::Arc;
use tower_lsp_server::ls_types::DidOpenTextDocumentParams;

pub fn handle(state: &Arc<State>, params: DidOpenTextDocumentParams) {
    let td = params.text_document;
    let uri = td.uri.as_str().to_string();
    let language = detect_language(&uri, &td.language_id);
    let (_, settings, exclusions) = state.settings_for_uri(&uri);
    let excluded = file_path(&uri).is_some_and(|p| exclusions.is_excluded(&p))
        || td.text.len() > settings.max_file_bytes;
    let doc = Document::open(
        uri.clone(),
        td.version,
        td.language_id,
        td.text,
        language,
        excluded,
    );
    lock(&state.docs).insert(doc);
    state.send(EngineMsg::Analyze(uri));
}
