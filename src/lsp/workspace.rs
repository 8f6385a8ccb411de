//! Workspace folders, files that are not open in the editor, and the workspace-level
//! (interprocedural) results: the call graph and [`FindingProvider`] findings.
//!
//! Files on disk are read when a folder is added (with `$/progress`) and re-read when the
//! client reports them changed (`workspace/didChangeWatchedFiles`). An open document's editor
//! text always wins over its disk copy. Units are named by their file system path (the call
//! graph resolves imports by path).

use super::findings::{Finding, FindingProvider, WorkspaceView};
use crate::analysis::callgraph::{build_call_graph, CallEdge, SourceUnit};
use crate::syntax::parse::decode_source;
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use tower_lsp_server::ls_types::Uri;

/// At most this many files are read per workspace folder.
pub const MAX_FILES_PER_FOLDER: usize = 20_000;

/// The unit path of a URI: its file system path for `file:` URIs, else the URI itself.
pub fn unit_path(uri: &str) -> String {
    file_path(uri)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| uri.to_string())
}

/// The file system path of a `file:` URI.
pub fn file_path(uri: &str) -> Option<PathBuf> {
    if !uri.starts_with("file:") {
        return None;
    }
    let u = Uri::from_str(uri).ok()?;
    u.to_file_path().map(|p| p.into_owned())
}

/// The `file:` URI of an absolute path.
pub fn path_uri(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

/// Reads and parses one source file; `Err` says why it is skipped.
pub fn read_source(path: &Path, max_bytes: usize) -> Result<ParsedFile, String> {
    let lang = Language::from_path(path).ok_or_else(|| "unsupported language".to_string())?;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() as usize > max_bytes {
        return Err(format!("over the {max_bytes}-byte limit"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = decode_source(&bytes, max_bytes).map_err(|e| e.to_string())?;
    Ok(ParsedFile::parse(lang, text))
}

/// Lists the analysable files of a folder (honouring `.gitignore` when asked), sorted.
pub fn list_files(
    root: &Path,
    respect_gitignore: bool,
    excluded: &dyn Fn(&Path) -> bool,
    cancel: &Cancel,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .git_ignore(respect_gitignore)
        .git_global(false)
        .git_exclude(respect_gitignore)
        .require_git(false)
        .hidden(true)
        .build();
    for entry in walker.flatten() {
        if cancel.is_cancelled() || out.len() >= MAX_FILES_PER_FOLDER {
            break;
        }
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if Language::from_path(path).is_none() || excluded(path) {
            continue;
        }
        out.push(path.to_path_buf());
    }
    out.sort();
    out
}

/// Workspace-level results for one generation of the workspace.
#[derive(Debug, Clone, Default)]
pub struct Interproc {
    /// Increases with every computation.
    pub generation: u64,
    pub edges: Arc<Vec<CallEdge>>,
    /// Why the call graph is missing or partial, if it is.
    pub note: Option<String>,
    /// Provider findings by unit path.
    pub findings: BTreeMap<String, Vec<Finding>>,
    /// `engine::document_hash` of every unit's text as analysed (unit path -> hash): tells
    /// whether the findings of a unit are about the document's current text.
    pub unit_hashes: BTreeMap<String, String>,
}

/// Computes the call graph and provider findings over the given units. Never panics: a panic
/// in an analysis leaves that part empty with a note.
pub fn compute_interproc(
    generation: u64,
    units: &[(String, Arc<ParsedFile>)],
    providers: &[Arc<dyn FindingProvider>],
    cancel: &Cancel,
) -> Interproc {
    let su: Vec<SourceUnit<'_>> = units
        .iter()
        .map(|(p, f)| SourceUnit {
            path: p.clone(),
            file: f,
        })
        .collect();
    let mut note = None;
    let edges = match catch_unwind(AssertUnwindSafe(|| build_call_graph(&su, cancel))) {
        Ok(e) => e,
        Err(_) => {
            note = Some("the call graph is not available (internal error)".to_string());
            Vec::new()
        }
    };
    let mut findings: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for p in providers {
        let view = WorkspaceView {
            units: &su,
            call_graph: &edges,
        };
        match catch_unwind(AssertUnwindSafe(|| p.findings(&view, cancel))) {
            Ok(map) => {
                for (file, mut fs) in map {
                    findings.entry(file).or_default().append(&mut fs);
                }
            }
            Err(_) => tracing::error!(provider = p.name(), "finding provider panicked"),
        }
    }
    for fs in findings.values_mut() {
        fs.sort();
        fs.dedup();
    }
    if cancel.is_cancelled() {
        note = Some("workspace analysis was cancelled; results are partial".to_string());
    }
    let unit_hashes = units
        .iter()
        .map(|(p, f)| (p.clone(), super::engine::document_hash(&f.text)))
        .collect();
    Interproc {
        generation,
        edges: Arc::new(edges),
        note,
        findings,
        unit_hashes,
    }
}
