//! `initialize` (encoding negotiation, capabilities, folders, initializationOptions) and
//! `initialized` (pending warnings, the one-time "no LLM" message, file watchers, workspace
//! indexing with `$/progress`).

use super::did_change_workspace_folders::spawn_indexing;
use crate::lsp::config::{self, Source};
use crate::lsp::encoding;
use crate::lsp::server::{commands, lock, ClientCaps, State};
use crate::lsp::workspace::file_path;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tower_lsp_server::ls_types::*;

/// Globs the server asks the client to watch.
pub const WATCHED_GLOBS: [&str; 3] = [
    "**/*.{py,pyi,java,c,h,cc,cpp,cxx,hpp,hh,hxx,sol,js,mjs,cjs,jsx,ts,mts,cts,tsx}",
    "**/crosscheck.toml",
    "**/.gitignore",
];

pub fn initialize(state: &Arc<State>, params: InitializeParams) -> InitializeResult {
    state.start();
    let enc = encoding::negotiate(&params.capabilities);
    *lock(&state.encoding) = enc;
    let caps = &params.capabilities;
    *lock(&state.caps) = ClientCaps {
        work_done_progress: caps
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false),
        watched_files_dynamic: caps
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false),
        configuration: caps
            .workspace
            .as_ref()
            .and_then(|w| w.configuration)
            .unwrap_or(false),
    };
    if let Some(t) = params.trace {
        *lock(&state.trace) = t;
    }
    let mut warnings = Vec::new();
    if let Some(opts) = &params.initialization_options {
        let p = config::parse_editor_settings(Source::InitializationOptions, opts);
        warnings.extend(p.warnings);
        lock(&state.config).sources.init = p.layer;
    }
    let mut folders: Vec<(PathBuf, String)> = Vec::new();
    #[allow(deprecated)]
    let root_uri = params.root_uri.clone();
    match &params.workspace_folders {
        Some(list) if !list.is_empty() => {
            for f in list {
                if let Some(p) = file_path(f.uri.as_str()) {
                    folders.push((p, f.uri.as_str().to_string()));
                }
            }
        }
        _ => {
            if let Some(u) = root_uri {
                if let Some(p) = file_path(u.as_str()) {
                    folders.push((p, u.as_str().to_string()));
                }
            }
        }
    }
    {
        let mut cfg = lock(&state.config);
        for (p, _) in &folders {
            warnings.extend(cfg.load_workspace_file(p));
        }
        warnings.extend(cfg.rebuild());
    }
    {
        let mut ws = lock(&state.workspace);
        if !folders.is_empty() {
            // Indexing starts at `initialized`; from now on the server is not idle (it owes
            // the folders' index), so a client asking in between is not told otherwise.
            state.indexing.fetch_add(1, Ordering::SeqCst);
            state.index_owed.store(true, Ordering::SeqCst);
        }
        for (p, u) in folders {
            ws.folders.insert(p, u);
        }
    }
    lock(&state.pending_logs).extend(warnings.into_iter().map(|w| (MessageType::WARNING, w)));
    InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(encoding::kind(enc)),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_lens_provider: Some(CodeLensOptions {
                resolve_provider: Some(false),
            }),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::EMPTY]),
                ..Default::default()
            })),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
                ..Default::default()
            }),
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(OneOf::Left(true)),
                }),
                file_operations: None,
            }),
            ..Default::default()
        },
        server_info: Some(ServerInfo {
            name: "crosscheck".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
        ..Default::default()
    }
}

pub async fn initialized(state: &Arc<State>) {
    let pending: Vec<(MessageType, String)> = std::mem::take(&mut *lock(&state.pending_logs));
    for (typ, msg) in pending {
        state.log(typ, msg).await;
    }
    // A user who turned the LLM off (`llm.enabled = false`) is not told it is not configured.
    let (_, settings, _) = state.settings_for_uri("");
    if settings.llm_enabled
        && !state.scheduler.is_available()
        && !state.llm_notice_sent.swap(true, Ordering::SeqCst)
    {
        state
            .client
            .show_message(
                MessageType::INFO,
                format!("crosscheck: {}", state.scheduler.unavailable_reason()),
            )
            .await;
    }
    let caps = *lock(&state.caps);
    if caps.watched_files_dynamic {
        let st = Arc::clone(state);
        tokio::spawn(async move {
            let watchers = WATCHED_GLOBS
                .iter()
                .map(|g| FileSystemWatcher {
                    glob_pattern: GlobPattern::String(g.to_string()),
                    kind: None,
                })
                .collect();
            let options = DidChangeWatchedFilesRegistrationOptions { watchers };
            let reg = Registration {
                id: "crosscheck-watched-files".to_string(),
                method: "workspace/didChangeWatchedFiles".to_string(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(e) = st.client.register_capability(vec![reg]).await {
                tracing::warn!("file watcher registration failed: {e}");
            }
        });
    }
    let roots: Vec<PathBuf> = lock(&state.workspace).folders.keys().cloned().collect();
    if !roots.is_empty() {
        spawn_indexing(state, roots);
    }
    if state.index_owed.swap(false, Ordering::SeqCst) {
        // The count taken at `initialize` is now held by the indexing task (or there was
        // nothing left to index).
        state.indexing.fetch_sub(1, Ordering::SeqCst);
    }
}
