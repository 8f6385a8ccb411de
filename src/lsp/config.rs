//! Server configuration: sources, precedence, and the workspace trust boundary.
//!
//! # Sources, lowest precedence first
//!
//! 1. **Built-in defaults** ([`Settings::default`]).
//! 2. **The user's own config file**, table `[lsp]` of `$CROSSCHECK_CONFIG`, else
//!    `$XDG_CONFIG_HOME/crosscheck/config.toml`, else `~/.config/crosscheck/config.toml` (the
//!    same file whose `[llm]` table configures the LLM, see `llm::settings`).
//! 3. **LSP `initializationOptions`** sent by the editor.
//! 4. **`workspace/didChangeConfiguration`** sent by the editor later (replaces 3 key by key).
//! 5. **`crosscheck.toml` at the root of the workspace folder** containing the file
//!    (innermost folder for nested multi-root setups). It may only NARROW what the sources
//!    above allow (see below).
//!
//! For sources 2-4 a key that is set replaces the value of the lower sources (lists too: an
//! `exclude` list in the editor settings replaces the user file's list). Editor settings may be
//! written by the workspace itself (`.vscode/settings.json`), so restricted keys are honoured
//! ONLY from the user's config file.
//!
//! # Keys (TOML shown; editor settings use the same structure as JSON, optionally wrapped in
//! `{"crosscheck": {...}}`; `camelCase` spellings of keys are accepted)
//!
//! ```toml
//! version = 1                      # schema version (workspace file; optional, default 1)
//! [files]
//! exclude = ["vendor/", "*.min.js"] # gitignore-syntax patterns, relative to the folder root
//! respect_gitignore = true         # honour .gitignore files (default true)
//! max_file_bytes = 4000000         # larger files are not analysed (not from a workspace file)
//! report = ["test"]                # file roles besides the product reported at the rule's
//!                                  # severity (test, example, script, build, vendored,
//!                                  # generated, minified); findings in the others are notes
//! [rules]
//! disable = ["analysis-partial"]   # rule ids whose diagnostics are not shown
//! [taint]
//! report = ["remote", "stored"]    # source trust classes reported at the rule's severity;
//!                                  # flows from other classes (default: local) are notes
//! [tiers]                          # presentation per tier: "show" | "hint" | "hidden"
//! confirmed = "show"
//! analyzer-only = "show"
//! llm-only = "hint"
//! refuted = "hidden"
//! [llm]
//! enabled = true                   # run LLM cross-checks when an LLM is configured
//! debounce_ms = 400                # quiet time before a changed function is sent (not from a workspace file)
//! tasks = ["cfg", "call_graph"]    # function tasks asked about (each taint finding is asked anyway)
//! function_checks = "edited"       # "edited" (changed since open) | "all" | "off"
//! # restricted, user config file only:
//! templates_dir = "~/prompts"      # server prompt overrides (top level of [lsp]; else [crosscheck] prompts_dir)
//! allow_code_execution = false     # never on by default (top level of [lsp])
//! ```
//!
//! # What a workspace `crosscheck.toml` may do
//!
//! A repository is untrusted input. Its `crosscheck.toml` can only narrow:
//! `files.exclude` and `rules.disable` are ADDED to the effective lists; `taint.report` (the
//! project's threat model, which only changes severities) and `files.report` (which files are the
//! product's) REPLACE the editor's lists;
//! `files.respect_gitignore` can only be turned on; a tier's presentation can only be made
//! less visible (show > hint > hidden); `llm.enabled` can only be turned off (a project can opt
//! out of sending its code to an LLM); `llm.tasks` can only drop tasks and
//! `llm.function_checks` only ask about fewer functions (off < edited < all). Everything else is ignored with a logged warning — in
//! particular the LLM endpoint, model, provider, key variable, template directory, token
//! budgets and code execution, which a hostile repository could otherwise use to leak code or
//! keys. A file with `version` greater than [`SCHEMA_VERSION`] is ignored with a warning.
//! Configuration never fails: bad values produce warnings and are skipped.

use crate::analysis::filerole::RoleReport;
use crate::analysis::findings::TrustReport;
use crate::crosscheck::record::Tier;
use crate::crosscheck::task::Task;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The version of the `crosscheck.toml` / `[lsp]` schema this server understands.
pub const SCHEMA_VERSION: u64 = 1;

/// File name of the workspace configuration file.
pub const WORKSPACE_FILE: &str = "crosscheck.toml";

/// How diagnostics of a tier are shown. Ordered from most to least visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presentation {
    /// With the finding's own severity.
    Show,
    /// As a hint (the faintest severity).
    Hint,
    /// Not published.
    Hidden,
}

impl Presentation {
    fn parse(s: &str) -> Option<Presentation> {
        match s.trim().to_ascii_lowercase().as_str() {
            "show" | "shown" | "visible" => Some(Presentation::Show),
            "hint" | "hints" => Some(Presentation::Hint),
            "hidden" | "hide" | "off" => Some(Presentation::Hidden),
            _ => None,
        }
    }
}

/// Presentation of each tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierPresentation(BTreeMap<Tier, Presentation>);

impl Default for TierPresentation {
    fn default() -> Self {
        TierPresentation(BTreeMap::from([
            (Tier::Confirmed, Presentation::Show),
            (Tier::AnalyzerOnly, Presentation::Show),
            (Tier::LlmOnly, Presentation::Hint),
            (Tier::Refuted, Presentation::Hidden),
        ]))
    }
}

impl TierPresentation {
    pub fn get(&self, tier: Tier) -> Presentation {
        self.0.get(&tier).copied().unwrap_or(Presentation::Show)
    }

    pub fn set(&mut self, tier: Tier, p: Presentation) {
        self.0.insert(tier, p);
    }
}

fn parse_tier(s: &str) -> Option<Tier> {
    match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "confirmed" => Some(Tier::Confirmed),
        "analyzer-only" | "analyzeronly" => Some(Tier::AnalyzerOnly),
        "llm-only" | "llmonly" => Some(Tier::LlmOnly),
        "refuted" => Some(Tier::Refuted),
        _ => None,
    }
}

/// Effective settings for one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Gitignore-syntax exclusion patterns (relative to the workspace folder root).
    pub exclude: Vec<String>,
    pub respect_gitignore: bool,
    pub max_file_bytes: usize,
    pub disabled_rules: BTreeSet<String>,
    pub tiers: TierPresentation,
    pub llm_enabled: bool,
    pub llm_debounce_ms: u64,
    /// The function tasks asked about in the editor (`cfg`, `call_graph`, `data_dependency`,
    /// `taint`, `ast`, `points_to`); taint findings always get their own flow question.
    pub llm_tasks: Vec<Task>,
    /// Which functions the function tasks are asked about.
    pub llm_function_checks: FunctionChecks,
    /// Restricted: user config file only. Prompt template overrides for the server (else the
    /// `[crosscheck]` table's `prompts_dir`).
    pub templates_dir: Option<PathBuf>,
    /// Restricted: user config file only.
    pub allow_code_execution: bool,
    /// Source trust classes whose taint flows keep their rule's severity (others: notes).
    pub taint_report: TrustReport,
    /// File roles besides the product whose findings keep their severity (others: notes).
    pub files_report: RoleReport,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            exclude: Vec::new(),
            respect_gitignore: true,
            max_file_bytes: 4 * 1024 * 1024,
            disabled_rules: BTreeSet::new(),
            tiers: TierPresentation::default(),
            llm_enabled: true,
            llm_debounce_ms: 400,
            llm_tasks: vec![Task::Cfg, Task::CallGraph],
            llm_function_checks: FunctionChecks::Edited,
            templates_dir: None,
            allow_code_execution: false,
            taint_report: TrustReport::default(),
            files_report: RoleReport::default(),
        }
    }
}

/// Which functions the editor asks the function tasks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FunctionChecks {
    /// None: only taint findings are asked about.
    Off,
    /// Functions whose text changed since the document was opened (default: opening a file
    /// costs one request per finding, no more).
    Edited,
    /// Every function of an open document.
    All,
}

impl FunctionChecks {
    pub fn parse(s: &str) -> Option<FunctionChecks> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Some(FunctionChecks::Off),
            "edited" | "changed" => Some(FunctionChecks::Edited),
            "all" => Some(FunctionChecks::All),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FunctionChecks::Off => "off",
            FunctionChecks::Edited => "edited",
            FunctionChecks::All => "all",
        }
    }
}

/// The function tasks the editor can ask (analyzer-backed ones).
pub fn parse_function_task(s: &str) -> Option<Task> {
    Task::from_name(s).filter(|t| t.analyzer_backed())
}

/// Where a configuration layer came from (decides what it may set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    UserFile,
    InitializationOptions,
    DidChangeConfiguration,
    WorkspaceFile,
}

impl Source {
    fn describe(self) -> &'static str {
        match self {
            Source::UserFile => "the user config file",
            Source::InitializationOptions => "initializationOptions",
            Source::DidChangeConfiguration => "workspace/didChangeConfiguration",
            Source::WorkspaceFile => "the workspace crosscheck.toml",
        }
    }
}

/// The keys one source sets (unset keys are `None`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layer {
    pub exclude: Option<Vec<String>>,
    pub respect_gitignore: Option<bool>,
    pub max_file_bytes: Option<usize>,
    pub disabled_rules: Option<Vec<String>>,
    pub tiers: BTreeMap<Tier, Presentation>,
    pub llm_enabled: Option<bool>,
    pub llm_debounce_ms: Option<u64>,
    pub llm_tasks: Option<Vec<Task>>,
    pub llm_function_checks: Option<FunctionChecks>,
    pub templates_dir: Option<PathBuf>,
    pub allow_code_execution: Option<bool>,
    pub taint_report: Option<TrustReport>,
    pub files_report: Option<RoleReport>,
}

/// A parsed layer and the warnings its source produced.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub layer: Layer,
    pub warnings: Vec<String>,
}

fn norm_key(k: &str) -> String {
    // camelCase -> snake_case, `-` -> `_`, lowercase.
    let mut out = String::with_capacity(k.len() + 4);
    for (i, ch) in k.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else if ch == '-' {
            out.push('_');
        } else {
            out.push(ch);
        }
    }
    out
}

/// Keys that only the user's config file may set, as (table, key) after normalisation.
fn is_restricted(table: &str, key: &str) -> bool {
    match table {
        // Any LLM key other than the two harmless ones: endpoint, provider, model, key
        // variable, budgets, timeouts, ...
        "llm" => !matches!(key, "enabled" | "debounce_ms" | "tasks" | "function_checks"),
        "" => matches!(
            key,
            "templates_dir"
                | "template_dir"
                | "prompts_dir"
                | "allow_code_execution"
                | "code_execution"
                | "budget"
                | "store"
                | "store_path"
        ),
        _ => false,
    }
}

struct Reader {
    source: Source,
    parsed: Parsed,
}

impl Reader {
    fn warn(&mut self, msg: String) {
        self.parsed
            .warnings
            .push(format!("{}: {msg}", self.source.describe()));
    }

    fn restricted(&mut self, dotted: &str) {
        self.warn(format!(
            "`{dotted}` is ignored: it may only be set in the user's own config file \
             (~/.config/crosscheck/config.toml), never by a workspace or editor setting"
        ));
    }

    fn string_list(&mut self, dotted: &str, v: &Value) -> Option<Vec<String>> {
        match v {
            Value::Array(items) => {
                let mut out = Vec::new();
                for it in items {
                    match it.as_str() {
                        Some(s) => out.push(s.to_string()),
                        None => self.warn(format!("`{dotted}` entries must be strings")),
                    }
                }
                Some(out)
            }
            Value::String(s) => Some(vec![s.clone()]),
            _ => {
                self.warn(format!("`{dotted}` must be a list of strings"));
                None
            }
        }
    }

    fn boolean(&mut self, dotted: &str, v: &Value) -> Option<bool> {
        let b = v.as_bool();
        if b.is_none() {
            self.warn(format!("`{dotted}` must be true or false"));
        }
        b
    }

    fn unsigned(&mut self, dotted: &str, v: &Value) -> Option<u64> {
        let n = v.as_u64();
        if n.is_none() {
            self.warn(format!("`{dotted}` must be a non-negative whole number"));
        }
        n
    }

    fn read(&mut self, root: &Map<String, Value>) {
        for (k, v) in root {
            let key = norm_key(k);
            if self.source != Source::UserFile && is_restricted("", &key) {
                self.restricted(&key);
                continue;
            }
            match key.as_str() {
                "version" => {}
                "files" | "rules" | "taint" | "tiers" | "llm" => match v.as_object() {
                    Some(t) => self.read_table(&key, t),
                    None => self.warn(format!("`{key}` must be a table")),
                },
                "templates_dir" | "template_dir" | "prompts_dir" => match v.as_str() {
                    Some(s) => self.parsed.layer.templates_dir = Some(expand_home(s)),
                    None => self.warn(format!("`{key}` must be a path")),
                },
                "allow_code_execution" | "code_execution" => {
                    self.parsed.layer.allow_code_execution = self.boolean(&key, v)
                }
                other => self.warn(format!("unknown key `{other}` ignored")),
            }
        }
    }

    fn read_table(&mut self, table: &str, t: &Map<String, Value>) {
        for (k, v) in t {
            let key = norm_key(k);
            let dotted = format!("{table}.{key}");
            if self.source != Source::UserFile && is_restricted(table, &key) {
                self.restricted(&dotted);
                continue;
            }
            match (table, key.as_str()) {
                ("files", "exclude") => self.parsed.layer.exclude = self.string_list(&dotted, v),
                ("files", "respect_gitignore") => {
                    self.parsed.layer.respect_gitignore = self.boolean(&dotted, v)
                }
                ("files", "max_file_bytes") => {
                    self.parsed.layer.max_file_bytes = self.unsigned(&dotted, v).map(|n| n as usize)
                }
                ("rules", "disable") => {
                    self.parsed.layer.disabled_rules = self.string_list(&dotted, v)
                }
                ("files", "report") => {
                    if let Some(list) = self.string_list(&dotted, v) {
                        match RoleReport::parse(list.iter().map(String::as_str)) {
                            Ok(r) => self.parsed.layer.files_report = Some(r),
                            Err(e) => self.warn(format!("`{dotted}`: {e}; ignored")),
                        }
                    }
                }
                ("taint", "report") => {
                    if let Some(list) = self.string_list(&dotted, v) {
                        match TrustReport::parse(list.iter().map(String::as_str)) {
                            Ok(r) => self.parsed.layer.taint_report = Some(r),
                            Err(e) => self.warn(format!("`{dotted}`: {e}; ignored")),
                        }
                    }
                }
                ("tiers", tier) => {
                    match (parse_tier(tier), v.as_str().and_then(Presentation::parse)) {
                        (Some(t), Some(p)) => {
                            self.parsed.layer.tiers.insert(t, p);
                        }
                        (None, _) => self.warn(format!("unknown tier `{tier}` ignored")),
                        (_, None) => self.warn(format!(
                            "`{dotted}` must be \"show\", \"hint\" or \"hidden\""
                        )),
                    }
                }
                ("llm", "enabled") => self.parsed.layer.llm_enabled = self.boolean(&dotted, v),
                ("llm", "debounce_ms") => {
                    self.parsed.layer.llm_debounce_ms = self.unsigned(&dotted, v)
                }
                ("llm", "tasks") => {
                    if let Some(names) = self.string_list(&dotted, v) {
                        let mut tasks = Vec::new();
                        for n in names {
                            match parse_function_task(&n) {
                                Some(t) if !tasks.contains(&t) => tasks.push(t),
                                Some(_) => {}
                                None => self.warn(format!(
                                    "`{dotted}`: `{n}` is not a function task (cfg, call_graph, \
                                     data_dependency, taint, ast, points_to); ignored"
                                )),
                            }
                        }
                        self.parsed.layer.llm_tasks = Some(tasks);
                    }
                }
                ("llm", "function_checks") => match v.as_str().and_then(FunctionChecks::parse) {
                    Some(f) => self.parsed.layer.llm_function_checks = Some(f),
                    None => self.warn(format!("`{dotted}` must be \"edited\", \"all\" or \"off\"")),
                },
                _ => self.warn(format!("unknown key `{dotted}` ignored")),
            }
        }
    }
}

fn expand_home(s: &str) -> PathBuf {
    match s.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(rest),
            None => PathBuf::from(s),
        },
        None => PathBuf::from(s),
    }
}

fn read_value(source: Source, v: &Value) -> Parsed {
    let mut r = Reader {
        source,
        parsed: Parsed::default(),
    };
    match v {
        Value::Object(m) => r.read(m),
        Value::Null => {}
        _ => r.warn("settings must be an object".to_string()),
    }
    r.parsed
}

fn toml_to_json(text: &str) -> Result<Value, String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
    serde_json::to_value(table).map_err(|e| e.to_string())
}

/// Reads the `[lsp]` table of the user's config file (other tables are not ours).
pub fn parse_user_file(text: &str) -> Parsed {
    match toml_to_json(text) {
        Ok(v) => match v.get("lsp") {
            Some(lsp) => read_value(Source::UserFile, lsp),
            None => Parsed::default(),
        },
        Err(e) => Parsed {
            layer: Layer::default(),
            warnings: vec![format!(
                "the user config file is not valid TOML ({e}); its [lsp] settings are ignored"
            )],
        },
    }
}

/// Reads editor settings (`initializationOptions` or `didChangeConfiguration`): either the
/// settings object itself or `{"crosscheck": {...}}`.
pub fn parse_editor_settings(source: Source, v: &Value) -> Parsed {
    let inner = v.get("crosscheck").unwrap_or(v);
    read_value(source, inner)
}

/// Reads a workspace `crosscheck.toml`. Only narrowing keys take effect later (see
/// [`resolve`]); restricted keys are dropped here with a warning.
pub fn parse_workspace_file(text: &str) -> Parsed {
    let v = match toml_to_json(text) {
        Ok(v) => v,
        Err(e) => {
            return Parsed {
                layer: Layer::default(),
                warnings: vec![format!("crosscheck.toml is not valid TOML ({e}); ignored")],
            }
        }
    };
    match v.get("version") {
        None => {}
        Some(ver) => match ver.as_u64() {
            Some(n) if n <= SCHEMA_VERSION && n >= 1 => {}
            Some(n) => {
                return Parsed {
                    layer: Layer::default(),
                    warnings: vec![format!(
                        "crosscheck.toml has schema version {n}; this server understands \
                         version {SCHEMA_VERSION}: file ignored"
                    )],
                }
            }
            None => {
                return Parsed {
                    layer: Layer::default(),
                    warnings: vec!["crosscheck.toml: `version` must be a whole number; file \
                                    ignored"
                        .to_string()],
                }
            }
        },
    }
    let mut p = read_value(Source::WorkspaceFile, &v);
    // Keys a workspace may not set at all (not narrowing): warn and drop.
    let mut dropped = Vec::new();
    if p.layer.max_file_bytes.take().is_some() {
        dropped.push("files.max_file_bytes");
    }
    if p.layer.llm_debounce_ms.take().is_some() {
        dropped.push("llm.debounce_ms");
    }
    for key in dropped {
        p.warnings.push(format!(
            "{}: `{key}` cannot be set from a workspace file; ignored",
            Source::WorkspaceFile.describe()
        ));
    }
    p
}

/// Applies a trusted layer (user file or editor settings): set keys replace.
fn apply_trusted(s: &mut Settings, l: &Layer, restricted_allowed: bool) {
    if let Some(v) = &l.exclude {
        s.exclude = v.clone();
    }
    if let Some(v) = l.respect_gitignore {
        s.respect_gitignore = v;
    }
    if let Some(v) = l.max_file_bytes {
        s.max_file_bytes = v;
    }
    if let Some(v) = &l.disabled_rules {
        s.disabled_rules = v.iter().cloned().collect();
    }
    if let Some(v) = &l.taint_report {
        s.taint_report = v.clone();
    }
    if let Some(v) = &l.files_report {
        s.files_report = v.clone();
    }
    for (t, p) in &l.tiers {
        s.tiers.set(*t, *p);
    }
    if let Some(v) = l.llm_enabled {
        s.llm_enabled = v;
    }
    if let Some(v) = l.llm_debounce_ms {
        s.llm_debounce_ms = v;
    }
    if let Some(v) = &l.llm_tasks {
        s.llm_tasks = v.clone();
    }
    if let Some(v) = l.llm_function_checks {
        s.llm_function_checks = v;
    }
    if restricted_allowed {
        if let Some(v) = &l.templates_dir {
            s.templates_dir = Some(v.clone());
        }
        if let Some(v) = l.allow_code_execution {
            s.allow_code_execution = v;
        }
    }
}

/// Applies a workspace layer: narrowing only. Returns notes about values that would have
/// widened and were ignored.
fn apply_narrowing(s: &mut Settings, l: &Layer) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(v) = &l.exclude {
        for p in v {
            if !s.exclude.contains(p) {
                s.exclude.push(p.clone());
            }
        }
    }
    match l.respect_gitignore {
        Some(true) => s.respect_gitignore = true,
        Some(false) if s.respect_gitignore => notes.push(
            "crosscheck.toml: `files.respect_gitignore = false` would widen the analysed files; \
             ignored"
                .to_string(),
        ),
        _ => {}
    }
    if let Some(v) = &l.disabled_rules {
        s.disabled_rules.extend(v.iter().cloned());
    }
    // The project's threat model: it only changes severities (never what is analysed or
    // sent), so the project's own list replaces the editor's, like `rules.disable` may.
    if let Some(v) = &l.taint_report {
        s.taint_report = v.clone();
    }
    // Which files count as the product's is the project's to say, like its threat model.
    if let Some(v) = &l.files_report {
        s.files_report = v.clone();
    }
    for (t, p) in &l.tiers {
        let cur = s.tiers.get(*t);
        if *p >= cur {
            s.tiers.set(*t, *p);
        } else {
            notes.push(format!(
                "crosscheck.toml: tier `{}` cannot be made more visible than the user allows; \
                 ignored",
                t.name()
            ));
        }
    }
    match l.llm_enabled {
        Some(false) => s.llm_enabled = false,
        Some(true) if !s.llm_enabled => notes.push(
            "crosscheck.toml: `llm.enabled = true` cannot turn on what the user turned off; \
             ignored"
                .to_string(),
        ),
        _ => {}
    }
    // A workspace can ask fewer questions, never more.
    if let Some(v) = &l.llm_tasks {
        let before = s.llm_tasks.len();
        s.llm_tasks.retain(|t| v.contains(t));
        if v.iter().any(|t| !s.llm_tasks.contains(t)) && s.llm_tasks.len() <= before {
            notes.push(
                "crosscheck.toml: `llm.tasks` can only drop tasks the user enabled; tasks it \
                 adds are ignored"
                    .to_string(),
            );
        }
    }
    if let Some(v) = l.llm_function_checks {
        if v <= s.llm_function_checks {
            s.llm_function_checks = v;
        } else {
            notes.push(
                "crosscheck.toml: `llm.function_checks` cannot ask about more functions than \
                 the user allows; ignored"
                    .to_string(),
            );
        }
    }
    notes
}

/// The configuration sources the server holds.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    pub user: Layer,
    pub init: Layer,
    pub changed: Layer,
}

/// Effective settings: defaults < user file < initializationOptions < didChangeConfiguration,
/// then narrowed by the workspace layer, if any. Also returns notes on ignored widening.
pub fn resolve(sources: &ConfigSources, workspace: Option<&Layer>) -> (Settings, Vec<String>) {
    let mut s = Settings::default();
    apply_trusted(&mut s, &sources.user, true);
    apply_trusted(&mut s, &sources.init, false);
    apply_trusted(&mut s, &sources.changed, false);
    let notes = match workspace {
        Some(w) => apply_narrowing(&mut s, w),
        None => Vec::new(),
    };
    (s, notes)
}

/// Merges a `didChangeConfiguration` layer into the previous one: keys it sets replace.
pub fn merge_changed(prev: &Layer, next: &Layer) -> Layer {
    let mut out = prev.clone();
    if next.exclude.is_some() {
        out.exclude = next.exclude.clone();
    }
    if next.respect_gitignore.is_some() {
        out.respect_gitignore = next.respect_gitignore;
    }
    if next.max_file_bytes.is_some() {
        out.max_file_bytes = next.max_file_bytes;
    }
    if next.disabled_rules.is_some() {
        out.disabled_rules = next.disabled_rules.clone();
    }
    if next.taint_report.is_some() {
        out.taint_report = next.taint_report.clone();
    }
    if next.files_report.is_some() {
        out.files_report = next.files_report.clone();
    }
    for (t, p) in &next.tiers {
        out.tiers.insert(*t, *p);
    }
    if next.llm_enabled.is_some() {
        out.llm_enabled = next.llm_enabled;
    }
    if next.llm_debounce_ms.is_some() {
        out.llm_debounce_ms = next.llm_debounce_ms;
    }
    if next.llm_tasks.is_some() {
        out.llm_tasks = next.llm_tasks.clone();
    }
    if next.llm_function_checks.is_some() {
        out.llm_function_checks = next.llm_function_checks;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_keys_are_normalised() {
        assert_eq!(norm_key("respectGitignore"), "respect_gitignore");
        assert_eq!(norm_key("llm-only"), "llm_only");
        assert_eq!(norm_key("debounceMs"), "debounce_ms");
    }
}
