//! Workspace folders, files that are not open in the editor, and the workspace-level
//! (interprocedural) results: the call graph and [`FindingProvider`] findings.
//!
//! Files on disk are read when a folder is added (with `$/progress`) and re-read when the
//! client reports them changed (`workspace/didChangeWatchedFiles`). An open document's editor
//! text always wins over its disk copy. Units are named by their file system path (the call
//! graph resolves imports by path).

use super::findings::{Finding, FindingProvider, ProviderMemo, WorkspaceView};
use crate::analysis::callgraph::{update_call_graph, CallEdge, EdgeView, GraphMemo, SourceUnit};
use crate::syntax::parse::decode_source;
use crate::syntax::position::LineIndex;
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
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

/// The text of a workspace file that is not open in the editor. Its parse is made when its
/// language family is analysed and kept only while a document of that family is open
/// ([`compute_interproc_units`]): trees take about 26 bytes per source byte, the text one.
#[derive(Debug)]
pub struct SourceText {
    pub language: Language,
    pub text: String,
    pub lines: LineIndex,
}

impl SourceText {
    pub fn new(language: Language, text: String) -> SourceText {
        let lines = LineIndex::new(&text);
        SourceText {
            language,
            text,
            lines,
        }
    }

    pub fn parse(&self) -> ParsedFile {
        ParsedFile::parse(self.language, self.text.as_str())
    }
}

/// Reads one source file (not parsed); `Err` says why it is skipped.
pub fn read_source(path: &Path, max_bytes: usize) -> Result<SourceText, String> {
    let lang = Language::from_path(path).ok_or_else(|| "unsupported language".to_string())?;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() as usize > max_bytes {
        return Err(format!("over the {max_bytes}-byte limit"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = decode_source(&bytes, max_bytes).map_err(|e| e.to_string())?;
    Ok(SourceText::new(lang, text.into()))
}

/// One unit of the workspace analyses.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The unit path ([`unit_path`]).
    pub path: String,
    pub source: UnitSource,
}

/// What a unit is analysed from.
#[derive(Debug, Clone)]
pub enum UnitSource {
    /// A parse (an open document's): the unit is this parse.
    Parsed(Arc<ParsedFile>),
    /// A file's text (the unit is this text), with its parse when one is kept; parsed when
    /// its family is analysed otherwise.
    Text(Arc<SourceText>, Option<Arc<ParsedFile>>),
}

impl UnitSource {
    pub fn language(&self) -> Language {
        match self {
            UnitSource::Parsed(p) => p.language,
            UnitSource::Text(t, _) => t.language,
        }
    }

    /// What identifies the unit's content between two analyses (a new text or a new parse
    /// is a new identity; a kept parse of the same text is not).
    fn identity(&self) -> Identity {
        match self {
            UnitSource::Parsed(p) => Identity::Parse(Arc::clone(p)),
            UnitSource::Text(t, _) => Identity::Text(Arc::clone(t)),
        }
    }

    /// The unit's parse, made now when none is kept (`true`: made).
    fn parsed(&self) -> (Arc<ParsedFile>, bool) {
        match self {
            UnitSource::Parsed(p) | UnitSource::Text(_, Some(p)) => (Arc::clone(p), false),
            UnitSource::Text(t, None) => (Arc::new(t.parse()), true),
        }
    }
}

/// A unit's content identity, compared by address (see [`UnitSource::identity`]).
#[derive(Debug, Clone)]
enum Identity {
    Parse(Arc<ParsedFile>),
    Text(Arc<SourceText>),
}

impl PartialEq for Identity {
    fn eq(&self, other: &Identity) -> bool {
        match (self, other) {
            (Identity::Parse(a), Identity::Parse(b)) => Arc::ptr_eq(a, b),
            (Identity::Text(a), Identity::Text(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A parse made by a workspace analysis for a unit given as text: the caller may keep it
/// (with the text it was made from) for the next analysis.
#[derive(Debug, Clone)]
pub struct MadeParse {
    pub path: String,
    pub text: Arc<SourceText>,
    pub parsed: Arc<ParsedFile>,
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
    /// The call graph's edges in chunks (one per file, each sorted), shared with the family
    /// results they come from: see [`Interproc::edges`].
    pub edge_chunks: Vec<Arc<Vec<CallEdge>>>,
    /// Why the call graph is missing or partial, if it is.
    pub note: Option<String>,
    /// Provider findings by unit path.
    pub findings: BTreeMap<String, Vec<Finding>>,
    /// `engine::document_hash` of every unit's text as analysed (unit path -> hash): tells
    /// whether the findings of a unit are about the document's current text.
    pub unit_hashes: BTreeMap<String, String>,
}

impl Interproc {
    /// The call edges (no edge links two files of different language families).
    pub fn edges(&self) -> EdgeView<'_> {
        EdgeView::chunks(&self.edge_chunks)
    }
}

/// What one language family ([`Language::family`]) contributed to the last workspace
/// analysis: reused whole while the family's units are the same parses, and the base of the
/// next update when one of them changes (the call graph resolves again only the changed
/// files' call sites when the other files can read nothing new from them; the providers
/// reuse their per-function work through their memos).
#[derive(Debug)]
struct FamilyResult {
    /// Unit paths and content identities (a changed file is a new parse or a new text; the
    /// parses of units given as text are not kept here).
    units: Vec<(String, Identity)>,
    graph: GraphMemo,
    /// Per provider (in the order of the providers), what its next run may reuse; taken by
    /// the next computation of the family.
    memos: Mutex<Vec<ProviderMemo>>,
    notes: Vec<String>,
    /// Findings of the providers that work per family, by unit path.
    findings: BTreeMap<String, Vec<Finding>>,
    unit_hashes: BTreeMap<String, String>,
}

/// The per-family results of the previous workspace analysis: an edit in a Python file leaves
/// the call graph and taint of the workspace's C and Java code as they were.
#[derive(Debug, Clone, Default)]
pub struct InterprocCache {
    /// Shared with the analysis that made them: a reused family is not copied.
    families: BTreeMap<Language, Arc<FamilyResult>>,
    /// Families reused and computed by the last analysis (tests, traces).
    pub reused: usize,
    pub computed: usize,
    /// Files whose call sites the last analysis resolved (the other files' call edges were
    /// those of the analysis before).
    pub resolved_units: usize,
}

/// Per unit, whether `b` holds the very content `a` held; `None` unless both list the same
/// paths in the same order.
fn same_parses(a: &[(String, Identity)], b: &[Unit]) -> Option<Vec<bool>> {
    (a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.path)).then(|| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.1 == y.source.identity())
            .collect()
    })
}

/// How many units of `b` are not the very contents `a` lists (all of them when the paths
/// differ), for traces.
fn changed_units(a: &[(String, Identity)], b: &[Unit]) -> usize {
    same_parses(a, b).map_or(b.len(), |s| s.iter().filter(|x| !**x).count())
}

fn same_units(a: &[(String, Identity)], b: &[Unit]) -> bool {
    same_parses(a, b).is_some_and(|s| s.iter().all(|x| *x))
}

/// Borrowed analysis units of shared parses.
fn source_units(units: &[(String, Arc<ParsedFile>)]) -> Vec<SourceUnit<'_>> {
    units
        .iter()
        .map(|(p, f)| SourceUnit {
            path: p.clone(),
            file: f,
        })
        .collect()
}

/// The call graph and per-family provider findings of one family's units, updated from
/// `prev`, the family's previous result, when there is one.
fn compute_family(
    members: &[Unit],
    providers: &[Arc<dyn FindingProvider>],
    prev: Option<&FamilyResult>,
    cancel: &Cancel,
    made: &mut Vec<MadeParse>,
) -> FamilyResult {
    // The family's parses live while it is analysed; those made here are handed back.
    let mut units: Vec<(String, Arc<ParsedFile>)> = Vec::with_capacity(members.len());
    for m in members {
        if cancel.is_cancelled() {
            break;
        }
        let (parsed, fresh) = m.source.parsed();
        if let (true, UnitSource::Text(text, _)) = (fresh, &m.source) {
            made.push(MadeParse {
                path: m.path.clone(),
                text: Arc::clone(text),
                parsed: Arc::clone(&parsed),
            });
        }
        units.push((m.path.clone(), parsed));
    }
    let units = units.as_slice();
    let su = source_units(units);
    let mut notes = Vec::new();
    // `same[i]`: unit `i` is the parse the previous result saw (same paths in the same order).
    let same: Option<Vec<bool>> = prev.and_then(|p| same_parses(&p.units, members));
    let base = match (prev, &same) {
        (Some(p), Some(same)) => Some((&p.graph, same.as_slice())),
        _ => None,
    };
    let graph = match catch_unwind(AssertUnwindSafe(|| update_call_graph(&su, base, cancel))) {
        Ok(g) => g,
        Err(_) => {
            notes.push("the call graph is not available (internal error)".to_string());
            GraphMemo::default()
        }
    };
    let mut memos: Vec<ProviderMemo> = prev
        .map(|p| std::mem::take(&mut *p.memos.lock().unwrap_or_else(|e| e.into_inner())))
        .unwrap_or_default();
    memos.resize_with(providers.len(), || None);
    let mut findings: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for (p, memo) in providers.iter().zip(memos.iter_mut()) {
        if p.per_language_family() {
            run_provider(p.as_ref(), &su, graph.edges(), memo, cancel, &mut findings);
        }
    }
    if cancel.is_cancelled() {
        // This result is not kept: the previous one stays the base of the next update.
        if let Some(p) = prev {
            *p.memos.lock().unwrap_or_else(|e| e.into_inner()) = memos;
            memos = Vec::new();
        }
    }
    let unit_hashes = units
        .iter()
        .map(|(p, f)| (p.clone(), super::engine::document_hash(&f.text)))
        .collect();
    FamilyResult {
        units: members
            .iter()
            .map(|m| (m.path.clone(), m.source.identity()))
            .collect(),
        graph,
        memos: Mutex::new(memos),
        notes,
        findings,
        unit_hashes,
    }
}

fn run_provider(
    p: &dyn FindingProvider,
    units: &[SourceUnit<'_>],
    edges: EdgeView<'_>,
    memo: &mut ProviderMemo,
    cancel: &Cancel,
    out: &mut BTreeMap<String, Vec<Finding>>,
) {
    let view = WorkspaceView {
        units,
        call_graph: edges,
    };
    match catch_unwind(AssertUnwindSafe(|| {
        p.findings_with_memo(&view, memo, cancel)
    })) {
        Ok(map) => {
            for (file, mut fs) in map {
                out.entry(file).or_default().append(&mut fs);
            }
        }
        Err(_) => {
            // Whatever the memo holds may be half-updated.
            *memo = None;
            tracing::error!(provider = p.name(), "finding provider panicked")
        }
    }
}

/// Computes the call graph and provider findings over the given units, per language family
/// (no call links two families), reusing from `cache` the results of every family whose
/// units are the parses it was computed from. Never panics: a panic in an analysis leaves
/// that part empty with a note.
pub fn compute_interproc(
    generation: u64,
    units: &[(String, Arc<ParsedFile>)],
    providers: &[Arc<dyn FindingProvider>],
    cache: &mut InterprocCache,
    cancel: &Cancel,
) -> Interproc {
    let units: Vec<Unit> = units
        .iter()
        .map(|(path, f)| Unit {
            path: path.clone(),
            source: UnitSource::Parsed(Arc::clone(f)),
        })
        .collect();
    // Every family counts as edited: the memos are kept whole (no parse is made to keep).
    compute_interproc_units(
        generation,
        &units,
        providers,
        cache,
        cancel,
        (&|_| true, &mut Vec::new()),
    )
}

/// [`compute_interproc`] over units given as parses or as text. A family that is analysed
/// has every unit parsed for the time of its analysis; the parses made from text in the
/// families `keep.0` names (those being edited) are pushed to `keep.1`, and nothing else
/// keeps them, so a workspace whose closed files are given as text holds one family's trees
/// at a time. The other families' provider memos are trimmed
/// ([`FindingProvider::trim_memo`]) to what is cheap to hold.
pub fn compute_interproc_units(
    generation: u64,
    units: &[Unit],
    providers: &[Arc<dyn FindingProvider>],
    cache: &mut InterprocCache,
    cancel: &Cancel,
    keep: (&dyn Fn(Language) -> bool, &mut Vec<MadeParse>),
) -> Interproc {
    let (keep_family, made) = keep;
    let mut families: BTreeMap<Language, Vec<Unit>> = BTreeMap::new();
    for u in units {
        families
            .entry(u.source.language().family())
            .or_default()
            .push(u.clone());
    }
    cache.families.retain(|fam, _| families.contains_key(fam));
    let (mut reused, mut computed, mut resolved) = (0, 0, 0);
    // Families whose parses are kept go last: the others' trees and analysis peaks come and
    // go before the kept trees start to add up. Results are assembled in family order.
    let mut order: Vec<(&Language, &Vec<Unit>)> = families.iter().collect();
    order.sort_by_key(|(fam, _)| keep_family(**fam));
    let mut by_family: BTreeMap<Language, Arc<FamilyResult>> = BTreeMap::new();
    for (fam, members) in order {
        let mut discard = Vec::new();
        let made_here = if keep_family(*fam) {
            &mut *made
        } else {
            &mut discard
        };
        match cache.families.get(fam) {
            Some(r) if same_units(&r.units, members) => {
                reused += 1;
                by_family.insert(*fam, Arc::clone(r));
            }
            prev => {
                computed += 1;
                tracing::debug!(
                    generation,
                    family = %fam,
                    units = members.len(),
                    changed = prev.map_or(members.len(), |p| changed_units(&p.units, members)),
                    "family analysed"
                );
                let r = Arc::new(compute_family(
                    members,
                    providers,
                    prev.map(|p| p.as_ref()),
                    cancel,
                    made_here,
                ));
                resolved += r.graph.resolved_units;
                if !keep_family(*fam) {
                    // Nobody edits this family: its memos keep only what is cheap to hold.
                    let mut memos = r.memos.lock().unwrap_or_else(|e| e.into_inner());
                    for (p, m) in providers.iter().zip(memos.iter_mut()) {
                        p.trim_memo(m);
                    }
                }
                if !cancel.is_cancelled() {
                    cache.families.insert(*fam, Arc::clone(&r));
                }
                by_family.insert(*fam, r);
            }
        }
    }
    let results: Vec<Arc<FamilyResult>> = by_family.into_values().collect();
    cache.reused = reused;
    cache.computed = computed;
    cache.resolved_units = resolved;
    let mut edge_chunks: Vec<Arc<Vec<CallEdge>>> = Vec::new();
    let mut note = None;
    let mut findings: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    let mut unit_hashes = BTreeMap::new();
    for r in &results {
        edge_chunks.extend(r.graph.chunks().iter().cloned());
        if note.is_none() {
            note = r.notes.first().cloned();
        }
        for (file, fs) in &r.findings {
            findings
                .entry(file.clone())
                .or_default()
                .extend(fs.iter().cloned());
        }
        unit_hashes.extend(r.unit_hashes.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    // Providers that may relate files of different families see the whole workspace.
    if providers.iter().any(|p| !p.per_language_family()) {
        // (Every unit parsed at once: no such provider runs in the server.)
        let parsed: Vec<(String, Arc<ParsedFile>)> = units
            .iter()
            .map(|u| (u.path.clone(), u.source.parsed().0))
            .collect();
        let su = source_units(&parsed);
        for p in providers.iter().filter(|p| !p.per_language_family()) {
            run_provider(
                p.as_ref(),
                &su,
                EdgeView::chunks(&edge_chunks),
                &mut None,
                cancel,
                &mut findings,
            );
        }
    }
    for fs in findings.values_mut() {
        fs.sort();
        fs.dedup();
    }
    if cancel.is_cancelled() {
        note = Some("workspace analysis was cancelled; results are partial".to_string());
    }
    Interproc {
        generation,
        edge_chunks,
        note,
        findings,
        unit_hashes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::findings::TaintProvider;

    fn unit(path: &str, lang: Language, text: &str) -> (String, Arc<ParsedFile>) {
        (path.to_string(), Arc::new(ParsedFile::parse(lang, text)))
    }

    #[test]
    fn units_given_as_text_are_parsed_per_family_and_kept_only_where_asked() {
        let providers: Vec<Arc<dyn FindingProvider>> = vec![Arc::new(TaintProvider)];
        let c_text = "#include <stdlib.h>\n#include <stdio.h>\nint main(void) {\n    char b[64];\n    fgets(b, 64, stdin);\n    system(b);\n    return 0;\n}\n";
        let py_text = "import os, socket\n\ndef run(s: socket.socket):\n    cmd = s.recv(10)\n    os.system(cmd)\n";
        let text = |lang, t: &str| Arc::new(SourceText::new(lang, t.to_string()));
        let (c, py) = (text(Language::C, c_text), text(Language::Python, py_text));
        let units = vec![
            Unit {
                path: "/w/main.c".into(),
                source: UnitSource::Text(Arc::clone(&c), None),
            },
            Unit {
                path: "/w/app.py".into(),
                source: UnitSource::Text(Arc::clone(&py), None),
            },
        ];
        let mut cache = InterprocCache::default();
        let mut made = Vec::new();
        let keep_python = |f: Language| f == Language::Python;
        let first = compute_interproc_units(
            1,
            &units,
            &providers,
            &mut cache,
            &Cancel::never(),
            (&keep_python, &mut made),
        );
        // The same findings as from parses.
        let parsed = [
            unit("/w/main.c", Language::C, c_text),
            unit("/w/app.py", Language::Python, py_text),
        ];
        let fresh = compute_interproc(
            1,
            &parsed,
            &providers,
            &mut InterprocCache::default(),
            &Cancel::never(),
        );
        assert_eq!(first.findings, fresh.findings);
        assert!(
            first.findings.contains_key("/w/main.c"),
            "{:?}",
            first.findings
        );
        assert_eq!(first.unit_hashes, fresh.unit_hashes);
        // Only the family asked for hands its parses back.
        assert_eq!(made.len(), 1);
        assert_eq!(made[0].path, "/w/app.py");
        assert!(Arc::ptr_eq(&made[0].text, &py));
        // The same texts, one now with its kept parse: both families are reused, nothing
        // is parsed again.
        let again = vec![
            units[0].clone(),
            Unit {
                path: "/w/app.py".into(),
                source: UnitSource::Text(Arc::clone(&py), Some(Arc::clone(&made[0].parsed))),
            },
        ];
        let mut made2 = Vec::new();
        let second = compute_interproc_units(
            2,
            &again,
            &providers,
            &mut cache,
            &Cancel::never(),
            (&|_| true, &mut made2),
        );
        assert_eq!((cache.reused, cache.computed), (2, 0));
        assert!(made2.is_empty());
        assert_eq!(second.findings, first.findings);
        // A new text of the C file is a change of the C family only.
        let c2 = text(Language::C, &c_text.replace("system(b)", "puts(b)"));
        let changed = vec![
            Unit {
                path: "/w/main.c".into(),
                source: UnitSource::Text(c2, None),
            },
            again[1].clone(),
        ];
        let third = compute_interproc_units(
            3,
            &changed,
            &providers,
            &mut cache,
            &Cancel::never(),
            (&|_| false, &mut made2),
        );
        assert_eq!((cache.reused, cache.computed), (1, 1));
        assert!(!third.findings.contains_key("/w/main.c"));
        assert!(made2.is_empty());
    }

    /// The taint memo of a family nobody edits keeps its scans but not its interpretations.
    #[test]
    fn memos_of_families_not_edited_are_trimmed() {
        use crate::analysis::taint::TaintMemo;
        let providers: Vec<Arc<dyn FindingProvider>> = vec![Arc::new(TaintProvider)];
        let c_text = "#include <stdlib.h>\n#include <stdio.h>\nvoid run(char *b) { system(b); }\nint main(void) {\n    char b[64];\n    fgets(b, 64, stdin);\n    run(b);\n    return 0;\n}\n";
        let py_text = "import os, socket\n\ndef sink(c):\n    os.system(c)\n\ndef run(s: socket.socket):\n    sink(s.recv(10))\n";
        let units = |tail: &str| {
            vec![
                Unit {
                    path: "/w/main.c".into(),
                    source: UnitSource::Text(
                        Arc::new(SourceText::new(Language::C, format!("{c_text}{tail}"))),
                        None,
                    ),
                },
                Unit {
                    path: "/w/app.py".into(),
                    source: UnitSource::Text(
                        Arc::new(SourceText::new(
                            Language::Python,
                            format!("{py_text}{tail}"),
                        )),
                        None,
                    ),
                },
            ]
        };
        let mut cache = InterprocCache::default();
        let keep_python = |f: Language| f == Language::Python;
        let cancel = Cancel::never();
        for tail in ["", "\n"] {
            compute_interproc_units(
                1,
                &units(tail),
                &providers,
                &mut cache,
                &cancel,
                (&keep_python, &mut Vec::new()),
            );
        }
        let reused = |fam: Language| {
            let r = cache.families.get(&fam).unwrap();
            let memos = r.memos.lock().unwrap();
            let m = memos[0]
                .as_ref()
                .unwrap()
                .downcast_ref::<TaintMemo>()
                .unwrap();
            (m.analyses_reused, m.analyses_run)
        };
        // Both texts changed (a line at the end): Python reused its interpretations, C
        // interpreted everything again.
        let (py_reused, _) = reused(Language::Python);
        let (c_reused, c_run) = reused(Language::C);
        assert!(py_reused > 0, "{:?}", reused(Language::Python));
        assert_eq!(c_reused, 0);
        assert!(c_run > 0);
    }

    #[test]
    fn an_edit_recomputes_only_its_language_family_and_matches_a_fresh_analysis() {
        let providers: Vec<Arc<dyn FindingProvider>> = vec![Arc::new(TaintProvider)];
        let c = unit(
            "/w/main.c",
            Language::C,
            "#include <stdlib.h>\n#include <stdio.h>\nint main(void) {\n    char b[64];\n    fgets(b, 64, stdin);\n    system(b);\n    return 0;\n}\n",
        );
        let py = |ret: &str| {
            unit(
                "/w/app.py",
                Language::Python,
                &format!("import os, socket\n\ndef run(s: socket.socket):\n    cmd = s.recv(10)\n    os.system({ret})\n"),
            )
        };
        let mut cache = InterprocCache::default();
        let first = compute_interproc(
            1,
            &[c.clone(), py("cmd")],
            &providers,
            &mut cache,
            &Cancel::never(),
        );
        assert_eq!((cache.reused, cache.computed), (0, 2));
        assert!(
            first.findings.contains_key("/w/main.c"),
            "{:?}",
            first.findings
        );
        assert!(
            first.findings.contains_key("/w/app.py"),
            "{:?}",
            first.findings
        );
        // The Python file changes (its flow goes away); the C family is reused.
        let units = [c.clone(), py("'ls'")];
        let second = compute_interproc(2, &units, &providers, &mut cache, &Cancel::never());
        assert_eq!((cache.reused, cache.computed), (1, 1));
        let fresh = compute_interproc(
            2,
            &units,
            &providers,
            &mut InterprocCache::default(),
            &Cancel::never(),
        );
        assert_eq!(second.findings, fresh.findings);
        assert_eq!(
            second.edges().iter().collect::<Vec<_>>(),
            fresh.edges().iter().collect::<Vec<_>>()
        );
        assert_eq!(second.unit_hashes, fresh.unit_hashes);
        assert!(!second.findings.contains_key("/w/app.py"));
        assert!(second.findings.contains_key("/w/main.c"));
        // A cancelled run stores nothing.
        let cancel = Cancel::new();
        cancel.cancel();
        let mut cache2 = cache.clone();
        compute_interproc(3, &[c, py("cmd")], &providers, &mut cache2, &cancel);
        assert_eq!(
            cache2
                .families
                .get(&Language::Python)
                .map(|r| matches!(&r.units[0].1, Identity::Parse(p) if p.text.contains("'ls'"))),
            Some(true)
        );
    }
}
