//! `crosscheck/status`: internal counters (tests, the latency benchmark, debugging).

use crate::lsp::server::{lock, State};
use crate::syntax::position::ColumnEncoding;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub fn handle(state: &Arc<State>) -> Value {
    let ip = Arc::clone(&lock(&state.interproc));
    json!({
        "idle": state.is_idle(),
        "indexing": state.indexing.load(Ordering::SeqCst) > 0,
        "workspace_pending": state.wakes_done.load(Ordering::SeqCst) < state.wakes.load(Ordering::SeqCst),
        "encoding": match state.encoding() {
            ColumnEncoding::Utf8 => "utf-8",
            ColumnEncoding::Utf16 => "utf-16",
        },
        "documents": lock(&state.docs).uris(),
        "publications": state.publications.load(Ordering::Relaxed),
        "llm_available": state.scheduler.is_available(),
        "scheduler": state.scheduler.stats(),
        "workspace_generation": ip.generation,
        "workspace_files": lock(&state.workspace).disk.len(),
        // Closed files whose parse is kept (the families of open documents; see
        // `State::keep_parses`): trees are most of the server's memory.
        "workspace_parsed_files": lock(&state.workspace).disk.values().filter(|f| f.parsed.is_some()).count(),
        "workspace_folders": lock(&state.workspace).folders.values().cloned().collect::<Vec<_>>(),
        "call_edges": ip.edges().len(),
        // How long edits must pause before the next workspace analysis starts.
        "workspace_quiet_ms": u64::try_from(state.workspace_quiet().as_millis()).unwrap_or(u64::MAX),
        "trace": format!("{:?}", *lock(&state.trace)).to_lowercase(),
    })
}
