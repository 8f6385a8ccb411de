//! `shutdown`: stop background work; the process exits with 0 on the following `exit`.

use crate::lsp::server::State;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub fn handle(state: &Arc<State>) {
    state.shutdown.store(true, Ordering::SeqCst);
    state.cancel.cancel();
    state.scheduler.cancel_all();
    state.wake_workspace();
}
