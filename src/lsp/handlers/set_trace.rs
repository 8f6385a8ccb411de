//! `$/setTrace`: how much `$/logTrace` the client wants.

use crate::lsp::server::{lock, State};
use std::sync::Arc;
use tower_lsp_server::ls_types::SetTraceParams;

pub fn handle(state: &Arc<State>, params: SetTraceParams) {
    *lock(&state.trace) = params.value;
}
