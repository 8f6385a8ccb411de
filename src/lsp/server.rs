//! The server: shared state, the `LanguageServer` implementation (thin: every method delegates
//! to `handlers/`), the background analysis loops, and serving over any byte stream.
//!
//! # Concurrency model
//!
//! tower-lsp-server runs up to 4 handlers concurrently. Text synchronisation
//! (`didOpen`/`didChange`/`didClose`) is therefore applied synchronously inside the handler,
//! before its first `.await`, so edits are applied strictly in arrival order. The handler then
//! queues the document for the **analysis loop**, which coalesces queued messages (only the
//! newest version of a document is analysed) and starts one task per document on a bounded
//! pool (as many as the cores, at least two), so a small document is never held up by a large
//! one. A new version cancels the running analysis of the old one (a child of the server's
//! `Cancel`). Publications go through one lock, so a document's diagnostics reach the client in
//! the order of the states they were computed from. Each publication carries the version it was
//! computed for; a result for a version that is no longer current is dropped, and an older
//! result never replaces a newer one.
//! The **workspace loop** recomputes the call graph and workspace-level findings after
//! changes (debounced, coalesced), asks the analysis loop to republish documents whose
//! workspace findings changed, and hands the questions of every open document
//! (`questions`: one per taint finding, plus the configured function tasks) to the
//! [`Scheduler`]: jobs are made only once the workspace taint flows of that change are known,
//! so a file's findings are never asked about twice on open. A document edit interrupts a
//! running workspace analysis (its own `Cancel` child): the stale run gives the CPU to the
//! edit's analysis, keeps the previous workspace results, and runs again once edits pause
//! for the debounce or, when the last run took longer, for as long as it took (at most
//! [`WORKSPACE_QUIET_CAP`]), so a slow workspace is not re-analysed (and interrupted) after
//! every keystroke; nor does it start while workspace folders are being read. Request handlers
//! (hover, code actions, commands) only read state: they never wait for analysis or network.

use super::config::{self, ConfigSources, Layer, Settings};
use super::diagnostics::{self, TextSource};
use super::documents::Documents;
use super::engine::{self, FileAnalysis};
use super::exclusions::Exclusions;
use super::findings::FindingProvider;
use super::handlers;
use super::scheduler::{CheckError, CheckJob, Checker, Scheduler, SchedulerEvent};
use super::transport;
use super::workspace::{self, Interproc};
use crate::analysis::filerole::{role_path, FileRole};
use crate::analysis::report::FunctionMemo;
use crate::crosscheck::record::{CacheBackend, RecordSink};
use crate::syntax::position::{ColumnEncoding, LineIndex};
use crate::syntax::{Cancel, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, Notify};
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService, Server};

/// Commands the server executes (`workspace/executeCommand`).
pub mod commands {
    pub const SUPPRESS: &str = "crosscheck.suppress";
    pub const MARK_CORRECT: &str = "crosscheck.markCorrect";
    pub const MARK_INCORRECT: &str = "crosscheck.markIncorrect";
    pub const EXPLAIN: &str = "crosscheck.explain";
    pub const COMPARE_CFG: &str = "crosscheck.compareCfg";
    pub const EXPLAIN_FLAKY: &str = "crosscheck.explainFlaky";
    pub const CHECK_EQUIVALENCE: &str = "crosscheck.checkEquivalence";
    pub const ALL: [&str; 7] = [
        SUPPRESS,
        MARK_CORRECT,
        MARK_INCORRECT,
        EXPLAIN,
        COMPARE_CFG,
        EXPLAIN_FLAKY,
        CHECK_EQUIVALENCE,
    ];
}

/// The diagnostic of a document over `files.max_file_bytes`.
fn too_large_diagnostic(bytes: usize, limit: usize) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
        severity: Some(DiagnosticSeverity::INFORMATION),
        code: Some(NumberOrString::String(
            super::findings::rules::FILE_NOT_ANALYSED.to_string(),
        )),
        code_description: None,
        source: Some("crosscheck".to_string()),
        message: format!(
            "not analysed: this file is {bytes} bytes, over the limit of {limit} bytes \
             (setting `crosscheck.files.max_file_bytes`, or `max_file_bytes` under `[lsp.files]` in \
             the user config)"
        ),
        related_information: None,
        tags: None,
        data: Some(serde_json::json!({
            "tier": "analyzer-only",
            "rule": super::findings::rules::FILE_NOT_ANALYSED,
            "partial": true,
            "bytes": bytes,
            "limit": limit,
        })),
    }
}

/// How many documents are analysed at once: the cores, at least two (so a small document is
/// never queued behind a large one).
fn analysis_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(2)
}

/// Custom request returning the server's internal counters (tests, benchmark, debugging).
pub const STATUS_REQUEST: &str = "crosscheck/status";

/// The longest pause in edits a workspace analysis waits for (see
/// `State::workspace_quiet`): a workspace whose analysis takes seconds is analysed
/// once typing pauses for this long, not after every keystroke.
pub const WORKSPACE_QUIET_CAP: Duration = Duration::from_secs(3);

/// What the server is built with. Front ends fill it from the user's environment
/// ([`ServerOptions::from_environment`]); tests inject fakes.
pub struct ServerOptions {
    /// Text of the user's config file (its `[lsp]` table is read).
    pub user_config: Option<String>,
    /// The configured LLM (several for a jury); empty when no LLM is configured. The server
    /// asks them through the cross-check engine (`checks::EngineChecker`).
    pub llm: Vec<Arc<dyn crate::llm::LlmClient>>,
    /// A checker to use instead of the engine over `llm` (tests).
    pub checker: Option<Arc<dyn Checker>>,
    /// Why there is no checker (shown once with `window/showMessage`, and in hovers).
    pub llm_unavailable: String,
    pub cache: Option<Arc<dyn CacheBackend>>,
    pub records: Option<Arc<dyn RecordSink>>,
    /// Workspace-level (interprocedural) finding providers (default: the interprocedural
    /// taint analysis, [`super::findings::TaintProvider`]).
    pub providers: Vec<Arc<dyn FindingProvider>>,
    /// At most this many LLM checks at once.
    pub max_concurrent_checks: usize,
    /// Delay before the first retry of a transiently failed LLM check (then doubling).
    pub llm_retry_first_delay: Duration,
    /// Quiet time before the workspace loop recomputes the call graph.
    pub workspace_debounce: Duration,
    /// Seconds since the Unix epoch (for human labels).
    pub clock: fn() -> i64,
    /// Warnings gathered while loading the options, logged after `initialized`.
    pub warnings: Vec<String>,
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            user_config: None,
            llm: Vec::new(),
            checker: None,
            llm_unavailable: NO_LLM.to_string(),
            cache: None,
            records: None,
            providers: vec![Arc::new(super::findings::TaintProvider)],
            max_concurrent_checks: 4,
            llm_retry_first_delay: super::scheduler::RETRY_FIRST_DELAY,
            workspace_debounce: Duration::from_millis(150),
            clock: unix_now,
            warnings: Vec::new(),
        }
    }
}

/// The message shown when no LLM is configured.
pub const NO_LLM: &str = "LLM not configured: crosscheck runs deterministic analysis only. Set \
     `base_url` and `model` in the [llm] table of ~/.config/crosscheck/config.toml to enable \
     LLM cross-checks.";

impl ServerOptions {
    /// Wires a store in as the persistent LLM answer cache (the one `crosscheck ask` uses:
    /// answers survive restarts and are shared with the CLI) and
    /// as the record sink (one telemetry record per answered cross-check; human labels).
    /// `None` (the store could not be opened) leaves both unset: no cache across restarts,
    /// no telemetry, and "mark correct / incorrect" says there is no store.
    pub fn with_store(mut self, store: Option<Arc<crate::store::Store>>) -> ServerOptions {
        match store {
            Some(s) => {
                self.cache = Some(Arc::clone(&s) as Arc<dyn CacheBackend>);
                self.records = Some(s as Arc<dyn RecordSink>);
            }
            None => {
                self.cache = None;
                self.records = None;
                self.warnings.push(
                    "no store (see the log): LLM answers are not cached across restarts and \
                     cross-checks are not recorded"
                        .to_string(),
                );
            }
        }
        self
    }

    /// The options `crosscheck lsp` runs with: [`ServerOptions::from_environment`] plus the
    /// per-user store (`$CROSSCHECK_DATA_DIR/crosscheck.db`, see `store::path`) as the persistent
    /// answer cache and the telemetry sink. Without a store (unwritable directory, corrupt file)
    /// the server still runs, uncached across restarts. The store's retention is applied at
    /// start-up, off the protocol's path.
    pub fn for_user() -> ServerOptions {
        let store = crate::store::Store::open_optional(
            crate::store::default_db_path(),
            crate::store::StoreConfig::default(),
        )
        .map(std::sync::Arc::new);
        if let Some(s) = &store {
            let s = std::sync::Arc::clone(s);
            std::thread::spawn(move || {
                if let Err(e) = s.prune(crate::store::system_now()) {
                    tracing::warn!("store retention: {e}");
                }
            });
        }
        ServerOptions::from_environment().with_store(store)
    }

    /// Options from the user's real environment: the user config file and the LLM settings
    /// (`llm::LlmSettings::load`). Never fails: problems become warnings.
    pub fn from_environment() -> ServerOptions {
        use crate::llm::{Budget, BudgetedClient, HttpClient, LlmSettings};
        let mut opts = ServerOptions::default();
        let env = |k: &str| std::env::var(k).ok();
        if let Some(path) = crate::llm::settings::config_path(&env) {
            match std::fs::read_to_string(&path) {
                Ok(text) => opts.user_config = Some(text),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => opts
                    .warnings
                    .push(format!("cannot read {}: {e}", path.display())),
            }
        }
        match LlmSettings::load() {
            Ok(s) if s.is_configured() => {
                opts.max_concurrent_checks = s.max_concurrent.max(1) as usize;
                let budget = Budget::new(s.session_token_budget, s.daily_token_budget);
                match HttpClient::new(s) {
                    Ok(c) => {
                        let client = BudgetedClient::new(c, Arc::new(Mutex::new(budget)));
                        opts.llm = vec![Arc::new(client)];
                    }
                    Err(e) => opts.llm_unavailable = format!("LLM not available: {e}"),
                }
            }
            Ok(_) => {}
            Err(e) => opts.llm_unavailable = format!("LLM settings are invalid: {e}"),
        }
        opts
    }
}

/// The cross-check engine over the configured models, with the user's `[crosscheck]`
/// settings and prompt overrides (the `[lsp]` `templates_dir`, else `[crosscheck]`
/// `prompts_dir`; both from the user's own config file only). Problems become warnings and
/// defaults.
fn engine_checker(
    clients: Vec<Arc<dyn crate::llm::LlmClient>>,
    user_config: Option<&str>,
    templates_dir: Option<&Path>,
    cache: Option<Arc<dyn CacheBackend>>,
) -> (Arc<dyn Checker>, Vec<String>) {
    use crate::crosscheck::prompts::{load_override_dir, PromptLibrary};
    let mut warnings = Vec::new();
    let settings = match user_config.map(crate::crosscheck::engine::check_settings_from_toml) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            warnings.push(format!(
                "the [crosscheck] table of the user config is invalid ({e}); defaults are used"
            ));
            Default::default()
        }
        None => Default::default(),
    };
    let dir = templates_dir
        .map(Path::to_path_buf)
        .or_else(|| settings.prompts_dir.clone());
    let prompts = match dir {
        Some(d) => match load_override_dir(&d).and_then(PromptLibrary::with_overrides) {
            Ok(p) => p,
            Err(e) => {
                warnings.push(format!("prompt overrides not used: {e}"));
                PromptLibrary::builtin()
            }
        },
        None => PromptLibrary::builtin(),
    };
    let checker = super::checks::EngineChecker::new(clients, prompts, cache, settings);
    (Arc::new(checker), warnings)
}

/// Messages to the analysis loop.
#[derive(Debug)]
pub(crate) enum EngineMsg {
    /// Analyse the current version of a document and publish.
    Analyze(String),
    /// Publish again from stored results (an LLM result or workspace findings arrived).
    Republish(String),
    /// The document was closed: clear its diagnostics (unless it was reopened).
    Closed(String),
    /// A check failed; tell the user once when the LLM is unreachable.
    LlmProblem(CheckError),
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientCaps {
    pub work_done_progress: bool,
    pub watched_files_dynamic: bool,
    pub configuration: bool,
}

/// Configuration of one workspace folder (or of files outside all folders).
pub(crate) struct RootConfig {
    pub layer: Option<Layer>,
    pub settings: Settings,
    pub exclusions: Arc<Exclusions>,
}

/// All configuration state.
pub(crate) struct ConfigState {
    pub sources: ConfigSources,
    pub roots: BTreeMap<PathBuf, RootConfig>,
    pub outside: RootConfig,
}

impl ConfigState {
    fn new(sources: ConfigSources) -> (ConfigState, Vec<String>) {
        let (settings, notes) = config::resolve(&sources, None);
        let (exclusions, mut warnings) = Exclusions::new(None, &settings);
        warnings.extend(notes);
        (
            ConfigState {
                sources,
                roots: BTreeMap::new(),
                outside: RootConfig {
                    layer: None,
                    settings,
                    exclusions: Arc::new(exclusions),
                },
            },
            warnings,
        )
    }

    /// Settings and exclusions for a file: the innermost workspace folder containing it.
    pub fn for_path(&self, path: Option<&Path>) -> (Option<PathBuf>, Settings, Arc<Exclusions>) {
        let root = path.and_then(|p| {
            self.roots
                .keys()
                .filter(|r| p.starts_with(r))
                .max_by_key(|r| r.components().count())
                .cloned()
        });
        let rc = root
            .as_ref()
            .and_then(|r| self.roots.get(r))
            .unwrap_or(&self.outside);
        (root, rc.settings.clone(), Arc::clone(&rc.exclusions))
    }

    /// Reads `crosscheck.toml` of a folder (absent: no layer). Returns warnings.
    pub fn load_workspace_file(&mut self, root: &Path) -> Vec<String> {
        let file = root.join(config::WORKSPACE_FILE);
        let (layer, warnings) = match std::fs::read_to_string(&file) {
            Ok(text) => {
                let p = config::parse_workspace_file(&text);
                let w = p
                    .warnings
                    .into_iter()
                    .map(|w| format!("{}: {w}", file.display()))
                    .collect();
                (Some(p.layer), w)
            }
            Err(_) => (None, Vec::new()),
        };
        let entry = self
            .roots
            .entry(root.to_path_buf())
            .or_insert_with(|| RootConfig {
                layer: None,
                settings: Settings::default(),
                exclusions: Arc::new(Exclusions::new(Some(root), &Settings::default()).0),
            });
        entry.layer = layer;
        warnings
    }

    /// Recomputes effective settings and exclusion matchers of every folder.
    pub fn rebuild(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        let (s, notes) = config::resolve(&self.sources, None);
        let (ex, w) = Exclusions::new(None, &s);
        warnings.extend(notes);
        warnings.extend(w);
        self.outside.settings = s;
        self.outside.exclusions = Arc::new(ex);
        for (root, rc) in self.roots.iter_mut() {
            let (s, notes) = config::resolve(&self.sources, rc.layer.as_ref());
            let (ex, w) = Exclusions::new(Some(root), &s);
            warnings.extend(
                notes
                    .into_iter()
                    .map(|n| format!("{}: {n}", root.display())),
            );
            warnings.extend(w);
            rc.settings = s;
            rc.exclusions = Arc::new(ex);
        }
        warnings
    }
}

/// Files on disk of the workspace folders.
#[derive(Default)]
pub(crate) struct WorkspaceState {
    /// Folder root -> folder URI.
    pub folders: BTreeMap<PathBuf, String>,
    /// Files on disk (open in the editor or not; an open document's text wins).
    pub disk: BTreeMap<PathBuf, DiskFile>,
}

/// A workspace file as read from disk, with its parse while one is kept (see
/// `State::keep_parses`).
#[derive(Debug, Clone)]
pub(crate) struct DiskFile {
    pub text: Arc<workspace::SourceText>,
    pub parsed: Option<Arc<ParsedFile>>,
}

impl DiskFile {
    pub fn new(text: workspace::SourceText) -> DiskFile {
        DiskFile {
            text: Arc::new(text),
            parsed: None,
        }
    }
}

/// The function-task questions of one document version (see `State::function_questions`).
pub(crate) struct FunctionQuestions {
    /// Version, tasks and `llm.function_checks` mode they were made for.
    made_for: (
        i32,
        Vec<crate::crosscheck::task::Task>,
        super::config::FunctionChecks,
    ),
    jobs: Vec<CheckJob>,
}

/// Shared server state.
pub struct State {
    pub(crate) client: Client,
    pub(crate) records: Option<Arc<dyn RecordSink>>,
    pub(crate) providers: Vec<Arc<dyn FindingProvider>>,
    pub(crate) clock: fn() -> i64,
    pub(crate) workspace_debounce: Duration,
    pub(crate) encoding: Mutex<ColumnEncoding>,
    pub(crate) docs: Mutex<Documents>,
    pub(crate) config: Mutex<ConfigState>,
    pub(crate) workspace: Mutex<WorkspaceState>,
    pub(crate) analyses: Mutex<BTreeMap<String, Arc<FileAnalysis>>>,
    pub(crate) published: Mutex<BTreeMap<String, Vec<Diagnostic>>>,
    pub(crate) interproc: Mutex<Arc<Interproc>>,
    /// Cancels the running workspace analysis: a document edit makes it stale, so it gives
    /// way to the edit's own analysis and runs again once edits pause (see the module docs).
    pub(crate) workspace_run: Mutex<Option<Cancel>>,
    /// Per-family results of the last workspace analysis (see `workspace::InterprocCache`).
    pub(crate) interproc_cache: Mutex<workspace::InterprocCache>,
    pub(crate) scheduler: Scheduler,
    pub(crate) engine_tx: mpsc::UnboundedSender<EngineMsg>,
    engine_rx: Mutex<Option<mpsc::UnboundedReceiver<EngineMsg>>>,
    pub(crate) workspace_wake: Arc<Notify>,
    pub(crate) trace: Mutex<TraceValue>,
    pub(crate) shutdown: Arc<AtomicBool>,
    pub(crate) llm_notice_sent: AtomicBool,
    pub(crate) caps: Mutex<ClientCaps>,
    pub(crate) pending_logs: Mutex<Vec<(MessageType, String)>>,
    pub(crate) cancel: Cancel,
    pub(crate) counter: AtomicU64,
    pub(crate) workspace_generation: AtomicU64,
    pub(crate) publications: AtomicU64,
    /// Messages sent to the analysis loop and not processed yet.
    pub(crate) engine_queued: Arc<AtomicU64>,
    /// Workspace-loop wake-ups requested, and the last one whose results are applied.
    pub(crate) wakes: AtomicU64,
    /// Duration of the last workspace analysis that analysed something (not only reused).
    pub(crate) workspace_last_run_ms: AtomicU64,
    pub(crate) wakes_done: AtomicU64,
    /// Held while diagnostics are published (see [`State::publish`]).
    pub(crate) publishing: tokio::sync::Mutex<()>,
    /// Workspace folders being read and parsed (indexing) right now.
    pub(crate) indexing: Arc<AtomicU64>,
    /// Set at `initialize` when folders were given, until `initialized` starts their indexing.
    pub(crate) index_owed: AtomicBool,
    /// Flaky-test hints per document, computed once per parse.
    pub(crate) flaky_hints: crate::lsp::flaky::HintCache,
    /// Per open document: function id -> hash of its text at the first analysis after
    /// opening (which functions count as edited, for `llm.function_checks = "edited"`).
    pub(crate) baselines: Mutex<BTreeMap<String, BTreeMap<String, String>>>,
    /// Per open document, the per-function results of its last analysis, reused by the next
    /// (an edit re-analyses only the functions it changed).
    pub(crate) memos: Mutex<BTreeMap<String, Arc<Mutex<FunctionMemo>>>>,
    /// Per open document, the function-task questions of one analysed version and the
    /// settings they were made with: every workspace run reschedules every open document,
    /// and an unchanged version's questions (each a call graph of its file) are not made again.
    pub(crate) function_questions: Mutex<BTreeMap<String, FunctionQuestions>>,
}

/// Locks a mutex, recovering from poisoning (a panicking holder must not wedge the server).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl State {
    fn new(client: Client, opts: ServerOptions, shutdown: Arc<AtomicBool>) -> State {
        let (tx, rx) = mpsc::unbounded_channel();
        let notify_tx = tx.clone();
        let engine_queued = Arc::new(AtomicU64::new(0));
        let queued = Arc::clone(&engine_queued);
        let mut warnings = opts.warnings;
        let user = match &opts.user_config {
            Some(text) => {
                let p = config::parse_user_file(text);
                warnings.extend(p.warnings);
                p.layer
            }
            None => Layer::default(),
        };
        let checker = match opts.checker {
            Some(c) => Some(c),
            None if opts.llm.is_empty() => None,
            None => {
                let (checker, w) = engine_checker(
                    opts.llm,
                    opts.user_config.as_deref(),
                    user.templates_dir.as_deref(),
                    opts.cache.clone(),
                );
                warnings.extend(w);
                Some(checker)
            }
        };
        let scheduler = Scheduler::new(
            checker,
            opts.max_concurrent_checks,
            opts.llm_unavailable.clone(),
            move |ev| {
                let send = |m: EngineMsg| {
                    queued.fetch_add(1, Ordering::SeqCst);
                    if notify_tx.send(m).is_err() {
                        queued.fetch_sub(1, Ordering::SeqCst);
                    }
                };
                match ev {
                    SchedulerEvent::Result { doc } => send(EngineMsg::Republish(doc)),
                    SchedulerEvent::Failed { doc, error } => {
                        send(EngineMsg::Republish(doc));
                        send(EngineMsg::LlmProblem(error));
                    }
                }
            },
        )
        .with_records(opts.records.clone(), opts.clock)
        .with_retry_delay(opts.llm_retry_first_delay);
        let (config, w) = ConfigState::new(ConfigSources {
            user,
            ..ConfigSources::default()
        });
        warnings.extend(w);
        let mut pending: Vec<(MessageType, String)> = warnings
            .into_iter()
            .map(|w| (MessageType::WARNING, w))
            .collect();
        if !scheduler.is_available() {
            pending.push((MessageType::INFO, opts.llm_unavailable.clone()));
        }
        State {
            client,
            records: opts.records,
            providers: opts.providers,
            clock: opts.clock,
            workspace_debounce: opts.workspace_debounce,
            encoding: Mutex::new(ColumnEncoding::Utf16),
            docs: Mutex::new(Documents::default()),
            config: Mutex::new(config),
            workspace: Mutex::new(WorkspaceState::default()),
            analyses: Mutex::new(BTreeMap::new()),
            published: Mutex::new(BTreeMap::new()),
            interproc: Mutex::new(Arc::new(Interproc::default())),
            workspace_run: Mutex::new(None),
            interproc_cache: Mutex::new(workspace::InterprocCache::default()),
            scheduler,
            engine_tx: tx,
            engine_rx: Mutex::new(Some(rx)),
            workspace_wake: Arc::new(Notify::new()),
            trace: Mutex::new(TraceValue::Off),
            shutdown,
            llm_notice_sent: AtomicBool::new(false),
            caps: Mutex::new(ClientCaps::default()),
            pending_logs: Mutex::new(pending),
            cancel: Cancel::new(),
            counter: AtomicU64::new(0),
            workspace_generation: AtomicU64::new(0),
            publications: AtomicU64::new(0),
            engine_queued,
            wakes: AtomicU64::new(0),
            workspace_last_run_ms: AtomicU64::new(0),
            wakes_done: AtomicU64::new(0),
            indexing: Arc::new(AtomicU64::new(0)),
            index_owed: AtomicBool::new(false),
            publishing: tokio::sync::Mutex::new(()),
            flaky_hints: Default::default(),
            baselines: Mutex::new(BTreeMap::new()),
            memos: Mutex::new(BTreeMap::new()),
            function_questions: Mutex::new(BTreeMap::new()),
        }
    }

    pub(crate) fn encoding(&self) -> ColumnEncoding {
        *lock(&self.encoding)
    }

    pub(crate) fn send(&self, msg: EngineMsg) {
        self.engine_queued.fetch_add(1, Ordering::SeqCst);
        if self.engine_tx.send(msg).is_err() {
            self.engine_queued.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Asks the workspace loop for a new workspace analysis.
    /// How long edits must pause before a workspace analysis starts: the debounce, or the
    /// duration of the last run that analysed something if longer, at most
    /// [`WORKSPACE_QUIET_CAP`].
    pub(crate) fn workspace_quiet(&self) -> Duration {
        let last = Duration::from_millis(self.workspace_last_run_ms.load(Ordering::Relaxed));
        self.workspace_debounce.max(last.min(WORKSPACE_QUIET_CAP))
    }

    pub(crate) fn wake_workspace(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.workspace_wake.notify_one();
    }

    /// True when no analysis, workspace indexing, workspace analysis or LLM check is queued or
    /// running.
    pub(crate) fn is_idle(&self) -> bool {
        self.engine_queued.load(Ordering::SeqCst) == 0
            && self.indexing.load(Ordering::SeqCst) == 0
            && self.wakes_done.load(Ordering::SeqCst) >= self.wakes.load(Ordering::SeqCst)
            && self.scheduler.stats().pending == 0
    }

    /// Settings, exclusions and root for a document URI.
    pub(crate) fn settings_for_uri(
        &self,
        uri: &str,
    ) -> (Option<PathBuf>, Settings, Arc<Exclusions>) {
        let path = workspace::file_path(uri);
        lock(&self.config).for_path(path.as_deref())
    }

    /// Logs to the client (`window/logMessage`) and to stderr.
    pub(crate) async fn log(&self, typ: MessageType, msg: impl Into<String>) {
        let msg = msg.into();
        if typ == MessageType::ERROR || typ == MessageType::WARNING {
            tracing::warn!("{msg}");
        } else {
            tracing::info!("{msg}");
        }
        self.client.log_message(typ, msg).await;
    }

    /// `$/logTrace` when the client asked for traces.
    pub(crate) async fn log_trace(&self, message: String, verbose: impl FnOnce() -> String) {
        let t = *lock(&self.trace);
        if t == TraceValue::Off {
            return;
        }
        let verbose = (t == TraceValue::Verbose).then(verbose);
        self.client
            .send_notification::<notification::LogTrace>(LogTraceParams { message, verbose })
            .await;
    }

    /// The path `crosscheck check` run from the document's workspace folder names it by
    /// (relative, `/`-separated), for fingerprints; the unit path outside every folder.
    pub(crate) fn fingerprint_path(&self, uri: &str, unit_path: &str) -> String {
        let (root, _, _) = self.settings_for_uri(uri);
        let rel = root.and_then(|r| {
            Path::new(unit_path).strip_prefix(&r).ok().map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
        });
        rel.filter(|r| !r.is_empty())
            .unwrap_or_else(|| unit_path.to_string())
    }

    /// What part of its project a document is (test, vendored, ...): judged from its path below
    /// its workspace folder (outside every folder, its file name) and its text.
    pub(crate) fn file_role(&self, uri: &str, unit_path: &str, text: &str) -> FileRole {
        let rel = self.fingerprint_path(uri, unit_path);
        let rel = if rel == unit_path {
            role_path(unit_path, None)
        } else {
            rel
        };
        FileRole::classify(&rel, text)
    }

    /// The document's deterministic findings with their fingerprints, as published.
    pub(crate) fn fingerprinted_findings(
        &self,
        a: &FileAnalysis,
        text: &str,
        lines: &LineIndex,
    ) -> Vec<(super::findings::Finding, String)> {
        let (ws_findings, ws_current) = {
            let ip = lock(&self.interproc);
            (
                ip.findings.get(&a.path).cloned().unwrap_or_default(),
                ip.unit_hashes.get(&a.path) == Some(&a.text_hash),
            )
        };
        let fp_path = self.fingerprint_path(&a.uri, &a.path);
        diagnostics::fingerprinted(a, &ws_findings, ws_current, &fp_path, text, lines)
    }

    /// The parse of another workspace file (open document or disk file), by unit path.
    fn parsed_unit(&self, path: &str) -> Option<Arc<ParsedFile>> {
        let open = {
            let docs = lock(&self.docs);
            let found = docs
                .iter()
                .find(|d| workspace::unit_path(&d.uri) == path)
                .map(|d| d.parsed());
            found
        };
        if let Some(p) = open {
            return p;
        }
        let disk = lock(&self.workspace).disk.get(Path::new(path)).cloned()?;
        // A file whose parse is not kept is parsed for this use only.
        Some(disk.parsed.unwrap_or_else(|| Arc::new(disk.text.parse())))
    }

    /// The LLM questions of an analysed document (empty when the LLM must not see it): one per
    /// taint finding shown, and the configured function tasks (see `questions`). `None` when
    /// the document changed since the analysis (the jobs of the new version replace these).
    fn jobs_for(
        &self,
        a: &FileAnalysis,
        settings: &Settings,
        excluded: bool,
    ) -> Option<Vec<CheckJob>> {
        if excluded || !settings.llm_enabled {
            return Some(Vec::new());
        }
        let current = {
            let docs = lock(&self.docs);
            docs.get(&a.uri)
                .filter(|d| d.version == a.version)
                .map(|d| (Arc::<str>::from(d.text()), d.lines().clone(), d.parsed()))
        };
        let (text, lines, parsed) = current?;
        let parsed = parsed?;
        let found = self.fingerprinted_findings(a, &text, &lines);
        let other = |p: &str| self.parsed_unit(p);
        let mut jobs = super::questions::flow_jobs(a, &found, &parsed, &other);
        jobs.extend(self.function_jobs_for(a, &parsed, settings));
        Some(jobs)
    }

    /// The function-task questions of an analysed version (made once per version, tasks and
    /// mode): the functions edited since the document was opened (or all, or none), compared
    /// with the function texts of the first analysis after opening. Making them takes the
    /// file's call graph, tens of milliseconds on a 5,000-line file, so the workspace loop
    /// makes them on a background thread ([`State::prepare_function_questions`]) before it
    /// schedules.
    fn function_jobs_for(
        &self,
        a: &FileAnalysis,
        parsed: &ParsedFile,
        settings: &Settings,
    ) -> Vec<CheckJob> {
        use super::config::FunctionChecks;
        let mode = settings.llm_function_checks;
        let made_for = (a.version, settings.llm_tasks.clone(), mode);
        let cached = lock(&self.function_questions)
            .get(&a.uri)
            .filter(|q| q.made_for == made_for)
            .map(|q| q.jobs.clone());
        if let Some(jobs) = cached {
            return jobs;
        }
        let baseline: BTreeMap<String, String> = lock(&self.baselines)
            .get(&a.uri)
            .cloned()
            .unwrap_or_default();
        let include = |f: &engine::FunctionFacts| match mode {
            FunctionChecks::Off => false,
            FunctionChecks::All => true,
            FunctionChecks::Edited => baseline.get(&f.id) != Some(&engine::document_hash(&f.text)),
        };
        let made = super::questions::function_jobs(
            a,
            parsed,
            &settings.llm_tasks,
            &include,
            crate::crosscheck::facts::DEFAULT_MAX_QUESTIONS,
            &self.cancel,
        );
        if !self.cancel.is_cancelled() {
            lock(&self.function_questions).insert(
                a.uri.clone(),
                FunctionQuestions {
                    made_for,
                    jobs: made.clone(),
                },
            );
        }
        made
    }

    /// Makes (and keeps) the function-task questions of the documents' current analyses, so
    /// that [`State::schedule_llm`], which runs on the runtime, finds them made. Blocking:
    /// run it on a background thread.
    fn prepare_function_questions(&self, uris: &[String]) {
        for uri in uris {
            if self.cancel.is_cancelled() || !self.scheduler.is_available() {
                return;
            }
            let Some(a) = lock(&self.analyses).get(uri).cloned() else {
                continue;
            };
            let excluded = lock(&self.docs).get(uri).is_none_or(|d| d.excluded);
            let (_, settings, _) = self.settings_for_uri(uri);
            if excluded || !settings.llm_enabled {
                continue;
            }
            let parsed = lock(&self.docs)
                .get(uri)
                .filter(|d| d.version == a.version)
                .and_then(|d| d.parsed());
            if let Some(parsed) = parsed {
                self.function_jobs_for(&a, &parsed, &settings);
            }
        }
    }

    /// (Re)schedules LLM checks for a document from its latest analysis.
    pub(crate) fn schedule_llm(&self, uri: &str) {
        if !self.scheduler.is_available() {
            return;
        }
        let Some(a) = lock(&self.analyses).get(uri).cloned() else {
            self.scheduler.forget(uri);
            return;
        };
        let excluded = lock(&self.docs).get(uri).is_none_or(|d| d.excluded);
        let (_, settings, _) = self.settings_for_uri(uri);
        // `None`: the document moved on since this analysis; its own analysis schedules.
        if let Some(jobs) = self.jobs_for(&a, &settings, excluded) {
            self.scheduler
                .update(uri, jobs, Duration::from_millis(settings.llm_debounce_ms));
        }
    }

    /// Analyses the current version of a document on a blocking thread; stores the result
    /// unless the document changed meanwhile. Returns true when a fresh result was stored.
    async fn analyze_doc(self: &Arc<Self>, uri: &str, cancel: &Cancel) -> bool {
        let snapshot = {
            let docs = lock(&self.docs);
            docs.get(uri).map(|d| (d.version, d.parsed()))
        };
        let Some((version, parsed)) = snapshot else {
            return false;
        };
        let Some(parsed) = parsed else {
            // Excluded or unsupported: nothing to analyse; clear what was there.
            lock(&self.analyses).remove(uri);
            self.scheduler.forget(uri);
            return true;
        };
        let path = workspace::unit_path(uri);
        let flag = cancel.clone();
        let uri_owned = uri.to_string();
        let memo = Arc::clone(lock(&self.memos).entry(uri.to_string()).or_default());
        let joined = tokio::task::spawn_blocking(move || {
            // An older version's analysis still winding down holds the memo: analyse from
            // scratch rather than wait.
            let mut held = memo.try_lock().ok();
            let a = engine::analyze_with_memo(
                &uri_owned,
                &path,
                version,
                &parsed,
                &flag,
                held.as_deref_mut(),
            );
            if let Some(m) = held {
                tracing::debug!(
                    uri = %uri_owned,
                    version,
                    reused = m.reused,
                    analysed = m.analysed,
                    "function memo"
                );
            }
            a
        })
        .await;
        let Ok(analysis) = joined else {
            return false;
        };
        // A cancelled analysis is partial: a newer version (or shutdown) replaces it.
        if cancel.is_cancelled() || lock(&self.docs).version(uri) != Some(version) {
            return false;
        }
        let elapsed = analysis.elapsed_ms;
        tracing::debug!(%uri, version, elapsed_ms = elapsed, "analysed");
        let functions = analysis.functions.len();
        {
            // Analyses of one document run concurrently only while an older one winds down;
            // never let the older result replace a newer one.
            let mut analyses = lock(&self.analyses);
            if analyses.get(uri).is_some_and(|a| a.version > version) {
                return false;
            }
            // The functions as first analysed after opening: the baseline that tells which
            // functions the user edits (`llm.function_checks = "edited"`).
            lock(&self.baselines)
                .entry(uri.to_string())
                .or_insert_with(|| {
                    analysis
                        .functions
                        .iter()
                        .map(|f| (f.id.clone(), engine::document_hash(&f.text)))
                        .collect()
                });
            analyses.insert(uri.to_string(), Arc::new(analysis));
        }
        self.log_trace(format!("analysed {uri} v{version}"), || {
            format!("{functions} functions in {elapsed:.1} ms")
        })
        .await;
        true
    }

    /// Publishes the document's diagnostics from stored results (if they are current).
    /// Publications are serialised, so a document's diagnostics reach the client in the order
    /// of the states they were computed from.
    async fn publish(&self, uri: &str) {
        let _order = self.publishing.lock().await;
        let started = std::time::Instant::now();
        let Some((version, text, lines, parsed)) = ({
            let docs = lock(&self.docs);
            docs.get(uri).map(|d| {
                (
                    d.version,
                    Arc::<str>::from(d.text()),
                    d.lines().clone(),
                    d.parsed(),
                )
            })
        }) else {
            return;
        };
        let Ok(parsed_uri) = uri.parse::<Uri>() else {
            return;
        };
        let Some(parsed) = parsed else {
            // Not analysed: say so when the reason is the size limit, so the user does not
            // take an empty list for a clean file.
            let (_, settings, _) = self.settings_for_uri(uri);
            let diags = if text.len() > settings.max_file_bytes {
                vec![too_large_diagnostic(text.len(), settings.max_file_bytes)]
            } else {
                Vec::new()
            };
            lock(&self.published).insert(uri.to_string(), diags.clone());
            self.publications.fetch_add(1, Ordering::Relaxed);
            self.client
                .publish_diagnostics(parsed_uri, diags, Some(version))
                .await;
            return;
        };
        let analysis = lock(&self.analyses).get(uri).cloned();
        let diags = match analysis {
            Some(a) if a.version == version => {
                let (_, settings, _) = self.settings_for_uri(uri);
                // Only outcomes about the findings' current questions (code edited since
                // shows no stale LLM data until it is asked again).
                let found = self.fingerprinted_findings(&a, &text, &lines);
                let stored = self.scheduler.outcomes(uri);
                // The current questions are made only when there are outcomes to match: a
                // flow's question reads the code of every file on its path (tens of
                // milliseconds for a workspace flow through many files).
                let current: BTreeMap<String, String> = if stored.is_empty() {
                    BTreeMap::new()
                } else {
                    let other = |p: &str| self.parsed_unit(p);
                    super::questions::flow_jobs(&a, &found, &parsed, &other)
                        .into_iter()
                        .map(|j| (j.slot.clone(), j.content_hash()))
                        .collect()
                };
                let outcomes: BTreeMap<String, Arc<super::scheduler::CheckOutcome>> = stored
                    .into_iter()
                    .filter(|(slot, s)| current.get(slot) == Some(&s.content_hash))
                    .map(|(slot, s)| (slot, s.outcome))
                    .collect();
                let merged = diagnostics::merge(found, &outcomes);
                let role = self.file_role(uri, &a.path, &text);
                let presented = diagnostics::present(merged, &settings, &text, &lines, role);
                diagnostics::to_lsp(
                    &presented,
                    &parsed_uri,
                    &a.path,
                    &text,
                    &lines,
                    a.partial,
                    self.encoding(),
                    self,
                )
            }
            Some(_) | None => return,
        };
        lock(&self.published).insert(uri.to_string(), diags.clone());
        self.publications.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(
            %uri,
            version,
            diagnostics = diags.len(),
            prepared_ms = started.elapsed().as_secs_f64() * 1000.0,
            "publishing"
        );
        self.client
            .publish_diagnostics(parsed_uri, diags, Some(version))
            .await;
    }

    /// The analysis loop (see the module docs).
    async fn engine_loop(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<EngineMsg>) {
        let pool = Arc::new(tokio::sync::Semaphore::new(analysis_workers()));
        // The running analysis of each document, by the flag that cancels it.
        let running: Arc<Mutex<BTreeMap<String, Cancel>>> = Arc::default();
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while let Ok(m) = rx.try_recv() {
                batch.push(m);
            }
            let taken = batch.len() as u64;
            let mut analyze = BTreeSet::new();
            let mut republish = BTreeSet::new();
            let mut closed = BTreeSet::new();
            let mut problems = Vec::new();
            for m in batch {
                match m {
                    EngineMsg::Analyze(u) => {
                        closed.remove(&u);
                        analyze.insert(u);
                    }
                    EngineMsg::Republish(u) => {
                        republish.insert(u);
                    }
                    EngineMsg::Closed(u) => {
                        closed.insert(u);
                    }
                    EngineMsg::LlmProblem(e) => problems.push(e),
                }
            }
            if self.shutdown.load(Ordering::Relaxed) {
                self.engine_queued.fetch_sub(taken, Ordering::SeqCst);
                continue;
            }
            for u in &closed {
                if let Some(c) = lock(&running).remove(u) {
                    c.cancel();
                }
                let open = lock(&self.docs).get(u).is_some();
                if !open {
                    if let Ok(uri) = u.parse::<Uri>() {
                        let _order = self.publishing.lock().await;
                        lock(&self.published).remove(u);
                        self.client.publish_diagnostics(uri, Vec::new(), None).await;
                    }
                }
            }
            // A workspace analysis running over older texts is abandoned: it would compete
            // with the edit's analysis for the CPU and its results would be stale.
            if !analyze.is_empty() {
                if let Some(c) = lock(&self.workspace_run).as_ref() {
                    c.cancel();
                }
            }
            // Each document is analysed in its own task on a bounded pool: a large document
            // never holds up a small one, and a new version cancels the old one's work.
            for u in &analyze {
                let cancel = self.cancel.child();
                if let Some(old) = lock(&running).insert(u.clone(), cancel.clone()) {
                    old.cancel();
                }
                self.engine_queued.fetch_add(1, Ordering::SeqCst);
                let (state, pool, running, u) = (
                    Arc::clone(&self),
                    Arc::clone(&pool),
                    Arc::clone(&running),
                    u.clone(),
                );
                tokio::spawn(async move {
                    let permit = pool.acquire_owned().await;
                    if permit.is_ok()
                        && !cancel.is_cancelled()
                        && state.analyze_doc(&u, &cancel).await
                    {
                        state.publish(&u).await;
                        state.wake_workspace();
                    }
                    {
                        let mut r = lock(&running);
                        if r.get(&u).is_some_and(|c| c.same_as(&cancel)) {
                            r.remove(&u);
                        }
                    }
                    state.engine_queued.fetch_sub(1, Ordering::SeqCst);
                });
            }
            for u in republish.difference(&analyze) {
                if lock(&running).contains_key(u) {
                    // Its running analysis publishes when it is done.
                    continue;
                }
                self.publish(u).await;
            }
            for e in problems {
                self.llm_problem(e).await;
            }
            self.engine_queued.fetch_sub(taken, Ordering::SeqCst);
        }
    }

    async fn llm_problem(&self, e: CheckError) {
        match &e {
            CheckError::Unreachable(_) | CheckError::NotConfigured(_) => {
                if !self.llm_notice_sent.swap(true, Ordering::SeqCst) {
                    self.client
                        .show_message(
                            MessageType::WARNING,
                            format!(
                                "crosscheck: {e}. Deterministic analysis keeps working; LLM \
                                 cross-checks are retried with backoff, and again when functions change."
                            ),
                        )
                        .await;
                }
                self.log(MessageType::WARNING, e.to_string()).await;
            }
            CheckError::Slow(_) | CheckError::Transient(_) | CheckError::Failed(_) => {
                self.log(MessageType::WARNING, e.to_string()).await
            }
        }
    }

    /// Units for the workspace analyses: disk files, with open documents' editor text.
    fn workspace_units(&self) -> Vec<workspace::Unit> {
        let mut units: BTreeMap<String, workspace::UnitSource> = BTreeMap::new();
        {
            let ws = lock(&self.workspace);
            for (p, f) in &ws.disk {
                units.insert(
                    p.to_string_lossy().into_owned(),
                    workspace::UnitSource::Text(Arc::clone(&f.text), f.parsed.clone()),
                );
            }
        }
        let docs = lock(&self.docs);
        for d in docs.iter() {
            let path = workspace::unit_path(&d.uri);
            match d.parsed() {
                Some(p) => {
                    units.insert(path, workspace::UnitSource::Parsed(p));
                }
                None => {
                    units.remove(&path);
                }
            }
        }
        units
            .into_iter()
            .map(|(path, source)| workspace::Unit { path, source })
            .collect()
    }

    /// The language families of the open documents.
    fn open_families(&self) -> std::collections::BTreeSet<crate::syntax::Language> {
        lock(&self.docs)
            .iter()
            .filter_map(|d| d.parsed().map(|p| p.language.family()))
            .collect()
    }

    /// After a workspace analysis: disk files keep their parses only in the language
    /// families of open documents (an edit there re-analyses the family and would parse
    /// them again); the others' trees are dropped (about 26 bytes per source byte).
    fn keep_parses(&self, made: Vec<workspace::MadeParse>) {
        let hot = self.open_families();
        let mut ws = lock(&self.workspace);
        for m in made {
            if !hot.contains(&m.text.language.family()) {
                continue;
            }
            if let Some(f) = ws.disk.get_mut(Path::new(&m.path)) {
                if Arc::ptr_eq(&f.text, &m.text) {
                    f.parsed = Some(m.parsed);
                }
            }
        }
        for f in ws.disk.values_mut() {
            if !hot.contains(&f.text.language.family()) {
                f.parsed = None;
            }
        }
    }

    /// The workspace loop (see the module docs).
    async fn workspace_loop(self: Arc<Self>) {
        loop {
            self.workspace_wake.notified().await;
            if self.shutdown.load(Ordering::Relaxed) {
                return;
            }
            // A wake the last run already covered (it came before that run started) left a
            // permit behind: nothing to do.
            if self.wakes.load(Ordering::SeqCst) <= self.wakes_done.load(Ordering::SeqCst) {
                continue;
            }
            // Wait until edits pause: for the debounce or, once a run has taken longer, for as
            // long as the last run took (at most `WORKSPACE_QUIET_CAP`). A run started while
            // typing goes on would be interrupted by the next keystroke: its work thrown away.
            // Nor does a run start while workspace folders are being read: it would analyse
            // the files read so far and be redone whole once the rest arrive (on a
            // three-folder workspace, a second run over two families and the server's memory
            // peak). Reading is fast next to the analysis; its end wakes this loop again.
            let quiet = self.workspace_quiet();
            loop {
                let seen = self.wakes.load(Ordering::SeqCst);
                tokio::time::sleep(quiet).await;
                if self.shutdown.load(Ordering::Relaxed) {
                    return;
                }
                if self.wakes.load(Ordering::SeqCst) == seen
                    && self.indexing.load(Ordering::SeqCst) == 0
                {
                    break;
                }
            }
            let target = self.wakes.load(Ordering::SeqCst);
            let generation = self.workspace_generation.fetch_add(1, Ordering::SeqCst) + 1;
            let units = self.workspace_units();
            let providers = self.providers.clone();
            let cancel = self.cancel.child();
            *lock(&self.workspace_run) = Some(cancel.clone());
            let started = std::time::Instant::now();
            let flag = cancel.clone();
            let mut cache = std::mem::take(&mut *lock(&self.interproc_cache));
            let hot = self.open_families();
            let me = Arc::clone(&self);
            let joined = super::background::run_low_priority("workspace", move || {
                let mut made = Vec::new();
                let r = workspace::compute_interproc_units(
                    generation,
                    &units,
                    &providers,
                    &mut cache,
                    &flag,
                    (&|family| hot.contains(&family), &mut made),
                );
                // The units (and the parses not kept) go before memory is given back.
                drop(units);
                // The questions about edited functions take each file's call graph: made
                // here, on this background thread (its own thread cost 50 MiB of resident
                // memory on a 731k-line workspace), not on the runtime in the scheduling
                // that follows this run.
                if !flag.is_cancelled() {
                    let uris = lock(&me.docs).uris();
                    me.prepare_function_questions(&uris);
                }
                tracing::debug!(
                    generation,
                    families_reused = cache.reused,
                    families_computed = cache.computed,
                    files_resolved = cache.resolved_units,
                    "workspace analysis"
                );
                // The run's index, graphs and scans are freed by now; give their pages back
                // (only after a run that analysed something: a reused result freed little).
                if cache.computed > 0 {
                    let t = std::time::Instant::now();
                    super::background::release_free_memory();
                    tracing::debug!(
                        ms = t.elapsed().as_secs_f64() * 1000.0,
                        "freed memory released"
                    );
                }
                (r, cache, made)
            })
            .await;
            let joined = joined.map(|(r, cache, made)| {
                *lock(&self.interproc_cache) = cache;
                self.keep_parses(made);
                r
            });
            *lock(&self.workspace_run) = None;
            if cancel.is_cancelled() && !self.shutdown.load(Ordering::Relaxed) {
                // Interrupted by an edit: keep the previous results and run again after the
                // edits (each edit's analysis wakes this loop; this wake covers the rest).
                tracing::debug!(generation, "workspace analysis interrupted by an edit");
                self.wake_workspace();
                continue;
            }
            let Some(new) = joined else {
                self.wakes_done.fetch_max(target, Ordering::SeqCst);
                continue;
            };
            if lock(&self.interproc_cache).computed > 0 {
                let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.workspace_last_run_ms.store(ms, Ordering::Relaxed);
            }
            let edges = new.edges().len();
            let new = Arc::new(new);
            let old = std::mem::replace(&mut *lock(&self.interproc), Arc::clone(&new));
            // Republish documents whose workspace findings changed; re-check functions whose
            // callees changed (the scheduler keeps unchanged keys). No `.await` between storing
            // the new results and scheduling, so readers never see one without the other.
            let uris = lock(&self.docs).uris();
            for u in uris {
                let path = workspace::unit_path(&u);
                // A changed text hash changes which taint flows are shown (file-local or
                // workspace-wide) even when the workspace findings are the same.
                if old.findings.get(&path) != new.findings.get(&path)
                    || old.unit_hashes.get(&path) != new.unit_hashes.get(&path)
                {
                    self.send(EngineMsg::Republish(u.clone()));
                }
                self.schedule_llm(&u);
            }
            self.wakes_done.fetch_max(target, Ordering::SeqCst);
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            self.log_trace(
                format!("workspace analysis #{generation}: {edges} call edges"),
                || format!("{ms:.1} ms"),
            )
            .await;
        }
    }

    /// Re-reads settings after a configuration change: re-classifies open documents
    /// (exclusions) and re-analyses them.
    pub(crate) async fn reconfigure(self: &Arc<Self>) {
        let warnings = lock(&self.config).rebuild();
        for w in warnings {
            self.log(MessageType::WARNING, w).await;
        }
        let uris = lock(&self.docs).uris();
        for u in &uris {
            let (_, settings, excl) = self.settings_for_uri(u);
            let mut docs = lock(&self.docs);
            if let Some(d) = docs.get_mut(u) {
                let lang = super::documents::detect_language(u, &d.language_id);
                let path = workspace::file_path(u);
                let excluded = path.as_deref().is_some_and(|p| excl.is_excluded(p))
                    || d.text().len() > settings.max_file_bytes;
                d.reclassify(lang, excluded);
            }
        }
        for u in uris {
            self.send(EngineMsg::Analyze(u));
        }
        self.wake_workspace();
    }

    /// Starts the background loops (once, at `initialize`).
    pub(crate) fn start(self: &Arc<Self>) {
        if let Some(rx) = lock(&self.engine_rx).take() {
            tokio::spawn(Arc::clone(self).engine_loop(rx));
            tokio::spawn(Arc::clone(self).workspace_loop());
        }
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl TextSource for State {
    fn text_of(&self, path: &str) -> Option<(Arc<str>, Arc<LineIndex>)> {
        let open = {
            let docs = lock(&self.docs);
            let found = docs
                .iter()
                .find(|d| workspace::unit_path(&d.uri) == path)
                .map(|d| (Arc::from(d.text()), Arc::new(d.lines().clone())));
            found
        };
        if open.is_some() {
            return open;
        }
        let ws = lock(&self.workspace);
        ws.disk.get(Path::new(path)).map(|f| {
            (
                Arc::from(f.text.text.as_str()),
                Arc::new(f.text.lines.clone()),
            )
        })
    }
}

/// The `LanguageServer` implementation: every method delegates to a handler.
pub struct Backend {
    pub(crate) state: Arc<State>,
}

impl Backend {
    /// The server's shared state (tests and the benchmark read counters from it).
    pub fn state(&self) -> Arc<State> {
        Arc::clone(&self.state)
    }

    async fn set_trace(&self, params: SetTraceParams) {
        handlers::set_trace::handle(&self.state, params);
    }

    async fn status(&self) -> RpcResult<serde_json::Value> {
        Ok(handlers::status::handle(&self.state))
    }

    /// Answers a malformed message replaced by [`transport::pump`] with its JSON-RPC error.
    async fn invalid_message(&self, params: serde_json::Value) -> RpcResult<serde_json::Value> {
        let code = params
            .get("code")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(-32700);
        let message = params
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("invalid message")
            .to_string();
        tracing::warn!("malformed client message: {message}");
        Err(tower_lsp_server::jsonrpc::Error {
            code: code.into(),
            message: message.into(),
            data: None,
        })
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> RpcResult<InitializeResult> {
        Ok(handlers::initialize::initialize(&self.state, params))
    }

    async fn initialized(&self, _: InitializedParams) {
        handlers::initialize::initialized(&self.state).await;
    }

    async fn shutdown(&self) -> RpcResult<()> {
        handlers::shutdown::handle(&self.state);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        handlers::did_open::handle(&self.state, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        handlers::did_change::handle(&self.state, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        handlers::did_close::handle(&self.state, params);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        handlers::did_change_configuration::handle(&self.state, params).await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        handlers::did_change_workspace_folders::handle(&self.state, params).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        handlers::did_change_watched_files::handle(&self.state, params).await;
    }

    async fn hover(&self, params: HoverParams) -> RpcResult<Option<Hover>> {
        Ok(handlers::hover::handle(&self.state, params))
    }

    async fn code_action(&self, params: CodeActionParams) -> RpcResult<Option<CodeActionResponse>> {
        Ok(handlers::code_action::handle(&self.state, params).await)
    }

    async fn code_lens(&self, params: CodeLensParams) -> RpcResult<Option<Vec<CodeLens>>> {
        Ok(handlers::code_lens::handle(&self.state, params))
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> RpcResult<Option<serde_json::Value>> {
        handlers::execute_command::handle(&self.state, params).await
    }
}

/// Builds the service. The returned flag is set once `shutdown` was received.
pub fn build_service(opts: ServerOptions) -> (LspService<Backend>, ClientSocket, Arc<AtomicBool>) {
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&shutdown);
    let (service, socket) = LspService::build(move |client| Backend {
        state: Arc::new(State::new(client, opts, flag)),
    })
    .custom_method("$/setTrace", Backend::set_trace)
    .custom_method(STATUS_REQUEST, Backend::status)
    .custom_method(transport::INVALID_MESSAGE, Backend::invalid_message)
    .finish();
    (service, socket, shutdown)
}

/// Serves the protocol over a byte stream until `exit`. Returns the exit code: 0 when
/// `shutdown` was received before `exit` (or the stream ended after it), 1 otherwise. Input passes
/// through [`transport::pump`], so malformed frames are answered, not fatal.
pub async fn serve<I, O>(input: I, output: O, opts: ServerOptions) -> i32
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
{
    let (service, socket, shutdown) = build_service(opts);
    let (checked, pipe) = tokio::io::duplex(1 << 20);
    // `exit` written right behind `shutdown` can end the session before the `shutdown`
    // handler has run: the transport's record of what came first decides then.
    let end = Arc::new(transport::SessionEnd::default());
    let noted = Arc::clone(&end);
    let pumping =
        tokio::spawn(async move { transport::pump_noting_end(input, pipe, &noted).await });
    Server::new(checked, output, socket).serve(service).await;
    pumping.abort();
    if shutdown.load(Ordering::SeqCst) || end.shutdown_before_exit() {
        0
    } else {
        1
    }
}

/// Runs the server on stdin/stdout (blocking). Only the protocol goes to stdout.
pub fn run_stdio(opts: ServerOptions) -> i32 {
    super::background::limit_malloc_arenas();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(32 * 1024 * 1024)
        .thread_name("crosscheck-lsp")
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("crosscheck lsp: cannot start the runtime: {e}");
            return 1;
        }
    };
    let code = rt.block_on(serve(tokio::io::stdin(), tokio::io::stdout(), opts));
    // Blocking readers of stdin must not keep the process alive after `exit`.
    rt.shutdown_background();
    code
}
