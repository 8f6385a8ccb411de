//! `workspace/didChangeWorkspaceFolders`, and indexing of folders (files not open in the
//! editor, for the workspace call graph) with `$/progress`.

use crate::lsp::server::{lock, State};
use crate::lsp::workspace::{file_path, list_files, read_source};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tower_lsp_server::ls_types::{DidChangeWorkspaceFoldersParams, MessageType, NumberOrString};

pub async fn handle(state: &Arc<State>, params: DidChangeWorkspaceFoldersParams) {
    let mut added = Vec::new();
    let mut warnings = Vec::new();
    for f in &params.event.removed {
        let Some(root) = file_path(f.uri.as_str()) else {
            continue;
        };
        {
            let mut ws = lock(&state.workspace);
            ws.folders.remove(&root);
            ws.disk.retain(|p, _| !p.starts_with(&root));
        }
        lock(&state.config).roots.remove(&root);
    }
    for f in &params.event.added {
        let Some(root) = file_path(f.uri.as_str()) else {
            continue;
        };
        lock(&state.workspace)
            .folders
            .insert(root.clone(), f.uri.as_str().to_string());
        warnings.extend(lock(&state.config).load_workspace_file(&root));
        added.push(root);
    }
    for w in warnings {
        state.log(MessageType::WARNING, w).await;
    }
    state.reconfigure().await;
    if !added.is_empty() {
        spawn_indexing(state, added);
    }
    state.wake_workspace();
}

/// Starts indexing folders in the background. The server is not idle (`crosscheck/status`)
/// from this call until the indexing has finished, whichever way it ends.
pub fn spawn_indexing(state: &Arc<State>, roots: Vec<PathBuf>) {
    struct Busy(Arc<AtomicU64>);
    impl Drop for Busy {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    state.indexing.fetch_add(1, Ordering::SeqCst);
    let busy = Busy(Arc::clone(&state.indexing));
    let state = Arc::clone(state);
    tokio::spawn(async move {
        let _busy = busy;
        index_folders(state, roots).await;
    });
}

/// Files read and parsed per blocking task while indexing: small enough that a document
/// edit waits for at most one chunk's worth of parsing on the other core.
const INDEX_CHUNK: usize = 8;

/// The longest indexing waits for document analyses before reading its next chunk (so that
/// typing without pause does not stop indexing for good).
const INDEX_YIELD_MAX: std::time::Duration = std::time::Duration::from_secs(2);

/// Indexing runs at a lower priority than the documents: before each chunk it waits while a
/// document analysis is queued or running (up to [`INDEX_YIELD_MAX`]).
async fn yield_to_documents(state: &State) {
    let started = std::time::Instant::now();
    while state.engine_queued.load(Ordering::SeqCst) > 0
        && started.elapsed() < INDEX_YIELD_MAX
        && !state.cancel.is_cancelled()
    {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// Reads and parses the analysable files of the given folders (on blocking threads),
/// reporting `$/progress` when the client supports it, then wakes the workspace loop.
async fn index_folders(state: Arc<State>, roots: Vec<PathBuf>) {
    let started = std::time::Instant::now();
    let caps = *lock(&state.caps);
    let token = NumberOrString::String(format!("crosscheck/index/{}", state.next_id()));
    let progress_ok = caps.work_done_progress
        && state
            .client
            .create_work_done_progress(token.clone())
            .await
            .is_ok();
    let progress = if progress_ok {
        Some(
            state
                .client
                .progress(token, "crosscheck: analysing workspace")
                .with_message("listing files")
                .with_percentage(0)
                .begin()
                .await,
        )
    } else {
        None
    };
    let mut total = 0usize;
    for root in roots {
        let (_, settings, excl) = lock(&state.config).for_path(Some(&root));
        let cancel = state.cancel.clone();
        let r = root.clone();
        let ex = Arc::clone(&excl);
        let respect = settings.respect_gitignore;
        let files = tokio::task::spawn_blocking(move || {
            list_files(&r, respect, &|p| ex.is_excluded(p), &cancel)
        })
        .await
        .unwrap_or_default();
        let n = files.len().max(1);
        for (i, chunk) in files.chunks(INDEX_CHUNK).enumerate() {
            if state.cancel.is_cancelled() {
                break;
            }
            yield_to_documents(&state).await;
            let chunk: Vec<PathBuf> = chunk.to_vec();
            let max = settings.max_file_bytes;
            let parsed = crate::lsp::background::run_low_priority("index", move || {
                chunk
                    .into_iter()
                    .map(|p| {
                        let r = read_source(&p, max);
                        (p, r)
                    })
                    .collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            {
                let mut ws = lock(&state.workspace);
                if !ws.folders.contains_key(&root) {
                    break;
                }
                for (p, r) in parsed {
                    match r {
                        Ok(f) => {
                            ws.disk.insert(p, crate::lsp::server::DiskFile::new(f));
                            total += 1;
                        }
                        Err(e) => tracing::debug!("skipping {}: {e}", p.display()),
                    }
                }
            }
            if let Some(p) = &progress {
                let done = ((i + 1) * INDEX_CHUNK).min(n);
                p.report_with_message(
                    format!("{done}/{n} files in {}", root.display()),
                    (done * 100 / n) as u32,
                )
                .await;
            }
        }
    }
    if let Some(p) = progress {
        p.finish_with_message(format!("{total} files")).await;
    }
    state
        .log(
            MessageType::INFO,
            format!(
                "crosscheck: read {total} workspace files in {:.0} ms",
                started.elapsed().as_secs_f64() * 1000.0
            ),
        )
        .await;
    state.wake_workspace();
}
