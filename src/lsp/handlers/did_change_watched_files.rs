//! `workspace/didChangeWatchedFiles`: files changed outside the editor are re-read from disk
//! (for the workspace call graph); `crosscheck.toml` and `.gitignore` changes reload the
//! configuration.

use crate::lsp::config::WORKSPACE_FILE;
use crate::lsp::server::{lock, State};
use crate::lsp::workspace::{file_path, read_source};
use crate::syntax::Language;
use std::path::PathBuf;
use std::sync::Arc;
use tower_lsp_server::ls_types::{DidChangeWatchedFilesParams, FileChangeType, MessageType};

pub async fn handle(state: &Arc<State>, params: DidChangeWatchedFilesParams) {
    let mut reconfigure = false;
    let mut reread: Vec<PathBuf> = Vec::new();
    let mut warnings = Vec::new();
    for ev in params.changes {
        let Some(path) = file_path(ev.uri.as_str()) else {
            continue;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == WORKSPACE_FILE {
            if let Some(root) = path.parent() {
                let is_root = lock(&state.workspace).folders.contains_key(root);
                if is_root {
                    warnings.extend(lock(&state.config).load_workspace_file(root));
                    reconfigure = true;
                }
            }
        } else if name == ".gitignore" {
            reconfigure = true;
        } else if Language::from_path(&path).is_some() {
            let in_folder = lock(&state.workspace)
                .folders
                .keys()
                .any(|r| path.starts_with(r));
            if !in_folder {
                continue;
            }
            if ev.typ == FileChangeType::DELETED {
                lock(&state.workspace).disk.remove(&path);
            } else {
                reread.push(path);
            }
        }
    }
    for w in warnings {
        state.log(MessageType::WARNING, w).await;
    }
    if reconfigure {
        state.reconfigure().await;
    }
    if !reread.is_empty() {
        let mut keep = Vec::new();
        for p in reread {
            let (_, settings, excl) = lock(&state.config).for_path(Some(&p));
            if excl.is_excluded(&p) {
                lock(&state.workspace).disk.remove(&p);
            } else {
                keep.push((p, settings.max_file_bytes));
            }
        }
        let parsed = tokio::task::spawn_blocking(move || {
            keep.into_iter()
                .map(|(p, max)| {
                    let r = read_source(&p, max);
                    (p, r)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let mut ws = lock(&state.workspace);
        for (p, r) in parsed {
            match r {
                Ok(f) => {
                    ws.disk.insert(p, crate::lsp::server::DiskFile::new(f));
                }
                Err(_) => {
                    ws.disk.remove(&p);
                }
            }
        }
    }
    state.wake_workspace();
}
