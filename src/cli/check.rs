//! `crosscheck check PATH...`: the deterministic findings for pipelines, as SARIF 2.1.0, JSON or
//! text, with an exit code a pipeline can gate on.
//!
//! * Inputs are collected and analysed exactly as `crosscheck analyze` does (same walk, same
//!   report builder); the findings are the report's findings (taint flows, unreachable code,
//!   syntactic rules). Paths are reported relative to the working directory (`%SRCROOT%` in
//!   SARIF) when they are inside it.
//! * Tier: every finding goes through the cross-check core's tier function. Without `--llm`
//!   nothing is asked (`check` is deterministic and offline) and every finding is
//!   `analyzer-only`. With `--llm`, each taint finding gets the question the editor asks
//!   (`crosscheck::facts::FlowFiles::question`: can the source reach the sink without
//!   sanitisation?), through the cross-check engine with the same answer cache and telemetry
//!   store: a stable yes makes it `confirmed`, anything else leaves it `analyzer-only`, and
//!   its SARIF result carries `properties.llm`. `--fail-tier confirmed` fails only on
//!   findings confirmed by a proof or the LLM. An LLM that cannot be reached stops the
//!   questions (a warning); the findings stay as they are.
//! * A finding *fails* the build when it is at or above `--fail-on` (severity) and
//!   `--fail-tier` (tier), is not in the `--baseline` (by fingerprint), and is not suppressed by
//!   a `crosscheck: ignore[rule]` comment on its line or the line above.
//! * Exit codes: 0 nothing fails; 1 at least one finding fails; 2 usage or I/O errors (a
//!   missing or unreadable path given on the command line, an unreadable baseline, output that
//!   cannot be written; clap's own usage errors exit 2 too). Files met in a directory walk that
//!   are refused (binary, not UTF-8, too large) are warnings (stderr and SARIF notifications)
//!   and do not change the exit code; a file named explicitly and refused is an error (2).
//! * `--write-baseline FILE` writes every current finding: SARIF when FILE ends with `.sarif`,
//!   the JSON format otherwise. `--baseline` reads either.

use super::inputs::{collect_inputs, InputArgs};
use crate::analysis::filerole::{FileRole, RoleReport};
use crate::analysis::findings::TrustReport;
use crate::analysis::report::build_report;
use crate::analysis::rules::Severity;
use crate::analysis::sarif::{
    baseline_fingerprints, directory_uri, enclosing_function, fingerprint_hash,
    number_fingerprints, to_sarif, BaselineState, CheckError, CheckFinding, SarifContext,
    FINGERPRINT_KEY,
};
use crate::analysis::suppress::is_suppressed;
use crate::crosscheck::cache::AnswerCache;
use crate::crosscheck::engine::{CheckError as EngineError, CheckSettings, Engine, FLOW_FACT};
use crate::crosscheck::facts::{flow_path, FlowFiles};
use crate::crosscheck::prompts::PromptLibrary;
use crate::crosscheck::record::{RecordSink, Tier};
use crate::crosscheck::tier::{decide_tier, Evidence as TierEvidence, LlmStance, Origin};
use crate::llm::LlmClient;
use crate::syntax::functions::collect_functions;
use crate::syntax::{Cancel, ParsedFile};
use clap::ValueEnum;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Sarif,
    Json,
    Text,
}

/// Minimum severity that fails the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Note,
    /// Never fail because of findings.
    None,
}

/// Minimum tier that fails the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailTier {
    /// Only findings confirmed by a proof or by the LLM.
    Confirmed,
    /// Every deterministic finding (confirmed or not).
    AnalyzerOnly,
}

#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Minimum severity of a new finding that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Minimum tier of a new finding that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailTier::AnalyzerOnly)]
    pub fail_tier: FailTier,
    /// A previous SARIF or JSON output of `check`: its findings (by fingerprint) do not fail.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write every current finding as a baseline (SARIF if FILE ends with .sarif, else JSON).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Write the report to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Ask the configured LLM about each taint finding (cached, recorded); a stable yes
    /// makes the finding `confirmed`.
    #[arg(long)]
    pub llm: bool,
    /// Source trust classes whose taint flows keep their rule's severity (comma-separated:
    /// remote, stored, local); flows from other classes are notes. Default: the `[taint]
    /// report` list of the nearest `crosscheck.toml`, else `remote,stored`.
    #[arg(long, value_name = "CLASSES", value_delimiter = ',')]
    pub report: Option<Vec<String>>,
    /// File roles whose findings keep their rule's severity besides the product
    /// (comma-separated: test, example, script, build, vendored, generated, minified);
    /// findings in files of other roles are notes. Default: the `[files] report` list of the
    /// nearest `crosscheck.toml`, else none.
    #[arg(long, value_name = "ROLES", value_delimiter = ',')]
    pub report_files: Option<Vec<String>>,
}

/// What `check --llm` asks with: the cross-check engine's parts.
pub struct LlmJudge<'a> {
    pub clients: Vec<Arc<dyn LlmClient>>,
    pub prompts: PromptLibrary,
    pub cache: AnswerCache,
    pub settings: CheckSettings,
    pub sink: Option<&'a dyn RecordSink>,
    /// Seconds since the epoch, for records.
    pub now: i64,
}

/// What the LLM said about the taint findings of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LlmSummary {
    pub asked: usize,
    pub confirmed: usize,
    pub failed: usize,
    /// Why the questions stopped early (an unreachable LLM), if they did.
    pub stopped: Option<String>,
}

impl LlmJudge<'_> {
    /// The stance and the `llm` data of one question; `Err` when the LLM call failed.
    fn judge(
        &self,
        rt: &tokio::runtime::Runtime,
        q: &crate::crosscheck::facts::Question,
    ) -> Result<(LlmStance, serde_json::Value), EngineError> {
        let engine = Engine {
            prompts: &self.prompts,
            cache: &self.cache,
            settings: &self.settings,
            sink: self.sink,
        };
        match rt.block_on(engine.check(&self.clients, q, self.now)) {
            Ok(o) => {
                let stance = o
                    .facts
                    .iter()
                    .find(|f| f.fact == FLOW_FACT)
                    .map_or(LlmStance::Failed, |f| f.llm);
                let verdict = if stance == LlmStance::Agrees {
                    "yes".to_string()
                } else {
                    o.models
                        .iter()
                        .find(|m| m.stable)
                        .and_then(|m| m.llm.get("verdict").and_then(|v| v.as_str()))
                        .unwrap_or("unknown")
                        .to_string()
                };
                let data = serde_json::json!({
                    "task": o.task.name(),
                    "verdict": verdict,
                    "model": o.model,
                    "samples": o.samples,
                    "instability": o.instability,
                    "cached": o.cache.get("misses").and_then(|m| m.as_u64()) == Some(0),
                });
                Ok((stance, data))
            }
            Err(EngineError::Unreadable { message, .. }) => Ok((
                LlmStance::Failed,
                serde_json::json!({"task": "taint", "verdict": "unknown", "error": message}),
            )),
            Err(e) => Err(e),
        }
    }
}

fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Error => 3,
        Severity::Warning => 2,
        Severity::Note => 1,
    }
}

fn tier_rank(t: Tier) -> u8 {
    match t {
        Tier::Confirmed => 3,
        Tier::AnalyzerOnly => 2,
        Tier::LlmOnly => 1,
        Tier::Refuted => 0,
    }
}

impl FailOn {
    fn name(self) -> &'static str {
        match self {
            FailOn::Error => "error",
            FailOn::Warning => "warning",
            FailOn::Note => "note",
            FailOn::None => "none",
        }
    }

    fn reached_by(self, s: Severity) -> bool {
        let min = match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Note => Severity::Note,
            FailOn::None => return false,
        };
        severity_rank(s) >= severity_rank(min)
    }
}

impl FailTier {
    fn tier(self) -> Tier {
        match self {
            FailTier::Confirmed => Tier::Confirmed,
            FailTier::AnalyzerOnly => Tier::AnalyzerOnly,
        }
    }
}

/// The result of a check, before formatting.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// With `--llm`: what the LLM was asked and said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmSummary>,
    pub tool: &'static str,
    pub version: &'static str,
    pub fingerprint_key: &'static str,
    pub fail_on: &'static str,
    pub fail_tier: &'static str,
    pub findings: Vec<CheckFinding>,
    pub errors: Vec<CheckError>,
    pub summary: Summary,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub findings: usize,
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
    /// Findings not in the baseline (all of them without a baseline).
    pub new: usize,
    pub unchanged: usize,
    pub suppressed: usize,
    pub failing: usize,
    pub files_not_analysed: usize,
    pub exit_code: i32,
}

/// Removes `.` and resolves `..` without touching the file system.
fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A path as reported: relative to `cwd` (with `/`) when inside it, absolute otherwise.
pub fn shown_path(cwd: &Path, given: &str) -> String {
    let p = Path::new(given);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let norm = lexical_normalize(&abs);
    let rel = norm
        .strip_prefix(cwd)
        .ok()
        .filter(|r| !r.as_os_str().is_empty());
    match rel {
        Some(r) => r
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        None => norm.display().to_string(),
    }
}

fn line_text(file: &ParsedFile, line: usize) -> &str {
    file.lines.line_text(&file.text, line).trim_end()
}

/// The project configuration file `check` reads (`[taint] report`).
const WORKSPACE_CONFIG: &str = "crosscheck.toml";

/// The text of the `crosscheck.toml` nearest to the first input (that directory or a parent),
/// with its path; `None` when there is none.
fn workspace_config(args: &CheckArgs, cwd: &Path) -> Result<Option<(PathBuf, String)>, String> {
    let Some(first) = args.inputs.paths.first() else {
        return Ok(None);
    };
    let start = if first.is_absolute() {
        first.clone()
    } else {
        cwd.join(first)
    };
    let mut dir = if start.is_dir() {
        Some(start.as_path())
    } else {
        start.parent()
    };
    while let Some(d) = dir {
        let candidate = d.join(WORKSPACE_CONFIG);
        if candidate.is_file() {
            let text = std::fs::read_to_string(&candidate)
                .map_err(|e| format!("{}: {e}", candidate.display()))?;
            return Ok(Some((candidate, text)));
        }
        dir = d.parent();
    }
    Ok(None)
}

/// A severity profile: the list given by `flag`, else `[table] report` of the nearest
/// `crosscheck.toml`, else the default; `parse` reads a list of names.
fn profile<T: Default>(
    args: &CheckArgs,
    cwd: &Path,
    given: Option<&Vec<String>>,
    flag: &str,
    table: &str,
    parse: impl Fn(Vec<&str>) -> Result<T, String>,
) -> Result<T, String> {
    if let Some(list) = given {
        return parse(list.iter().map(String::as_str).collect())
            .map_err(|e| format!("{flag}: {e}"));
    }
    match workspace_config(args, cwd)? {
        Some((path, text)) => parse_profile_table(&text, table, &parse)
            .map_err(|e| format!("{}: {e}", path.display())),
        None => Ok(T::default()),
    }
}

/// `[table] report = [...]` of a `crosscheck.toml` text; the default when the key is absent.
fn parse_profile_table<T: Default>(
    text: &str,
    table: &str,
    parse: impl Fn(Vec<&str>) -> Result<T, String>,
) -> Result<T, String> {
    let value: toml::Value = toml::from_str(text).map_err(|e| e.to_string())?;
    let Some(list) = value.get(table).and_then(|t| t.get("report")) else {
        return Ok(T::default());
    };
    let what = format!("`[{table}] report` must be a list of strings");
    let items = list.as_array().ok_or_else(|| what.clone())?;
    let names = items
        .iter()
        .map(|v| v.as_str().ok_or_else(|| what.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    parse(names).map_err(|e| format!("`[{table}] report`: {e}"))
}

/// The trust profile: `--report`, else `[taint] report` of the nearest `crosscheck.toml`, else
/// the default (`remote`, `stored`).
pub fn trust_profile(args: &CheckArgs, cwd: &Path) -> Result<TrustReport, String> {
    profile(args, cwd, args.report.as_ref(), "--report", "taint", |n| {
        TrustReport::parse(n)
    })
}

/// The file-role profile: `--report-files`, else `[files] report` of the nearest
/// `crosscheck.toml`, else the default (only the product keeps its severity).
pub fn role_profile(args: &CheckArgs, cwd: &Path) -> Result<RoleReport, String> {
    profile(
        args,
        cwd,
        args.report_files.as_ref(),
        "--report-files",
        "files",
        |n| RoleReport::parse(n),
    )
}

/// Runs the analyses and decides every finding's identity, baseline state and failure.
/// `baseline` is the set of baseline fingerprints (`None` without `--baseline`).
pub fn check(
    args: &CheckArgs,
    cwd: &Path,
    baseline: Option<&BTreeSet<String>>,
    llm: Option<&LlmJudge<'_>>,
    cancel: &Cancel,
) -> CheckReport {
    let explicit: BTreeSet<String> = args
        .inputs
        .paths
        .iter()
        .filter(|p| !p.is_dir())
        .map(|p| p.display().to_string())
        .collect();
    let inputs = collect_inputs(&args.inputs);
    let mut errors: Vec<CheckError> = inputs
        .refused
        .iter()
        .map(|r| {
            let message = r
                .errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("; ");
            let fatal = explicit.contains(&r.file) || message.starts_with("cannot walk directory");
            CheckError {
                file: shown_path(cwd, &r.file),
                message,
                fatal,
            }
        })
        .collect();
    errors.sort_by(|a, b| (&a.file, &a.message).cmp(&(&b.file, &b.message)));
    let roles: BTreeMap<String, FileRole> = inputs
        .roles()
        .into_iter()
        .map(|(p, r)| (shown_path(cwd, &p), r))
        .collect();
    let (mut parsed, _) = inputs.parse(cancel);
    for (path, _) in &mut parsed {
        *path = shown_path(cwd, path);
    }
    parsed.sort_by(|a, b| a.0.cmp(&b.0));
    parsed.dedup_by(|a, b| a.0 == b.0);
    let mut report = build_report(&parsed, Vec::new(), cancel);
    // A bad profile was reported by the front end (`run_inner`); the default applies.
    let profile = trust_profile(args, cwd).unwrap_or_default();
    let role_report = role_profile(args, cwd).unwrap_or_default();
    for fr in &mut report.files {
        profile.apply(&mut fr.findings);
        let role = roles.get(&fr.file).copied().unwrap_or(fr.role);
        fr.set_role(role, &role_report);
    }
    let by_path: BTreeMap<&str, &ParsedFile> =
        parsed.iter().map(|(p, f)| (p.as_str(), f)).collect();

    let mut located = Vec::new();
    let mut hashes = Vec::new();
    for fr in &report.files {
        let Some(file) = by_path.get(fr.file.as_str()).copied() else {
            continue;
        };
        let functions = collect_functions(file);
        for f in &fr.findings {
            let function = enclosing_function(&functions, f.line).map(str::to_string);
            let text = line_text(file, f.line);
            hashes.push(fingerprint_hash(
                &f.rule,
                &fr.file,
                function.as_deref(),
                text,
            ));
            let suppressed = is_suppressed(&file.text, &file.lines, &f.rule, f.line);
            located.push((fr.file.clone(), function, f.clone(), suppressed, fr.role));
        }
    }
    // With `--llm`: one question per taint finding, the one the editor asks.
    let mut judged: Vec<Option<(LlmStance, serde_json::Value)>> = vec![None; located.len()];
    let mut llm_summary = None;
    if let Some(judge) = llm {
        let mut summary = LlmSummary::default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        match rt {
            Err(e) => summary.stopped = Some(format!("cannot start the async runtime: {e}")),
            Ok(rt) => {
                let file_of = |p: &str| by_path.get(p).copied();
                let mut files = FlowFiles::new(&file_of);
                for (i, (file, _, f, _, _)) in located.iter().enumerate() {
                    let is_taint = crate::analysis::rules::rule(&f.rule)
                        .is_some_and(|r| r.sink_kind.is_some());
                    if !is_taint || summary.stopped.is_some() || cancel.is_cancelled() {
                        continue;
                    }
                    let path = flow_path(&f.evidence);
                    let Ok(q) = files.question(file, &f.rule, &path) else {
                        continue;
                    };
                    summary.asked += 1;
                    match judge.judge(&rt, &q) {
                        Ok((stance, data)) => {
                            summary.confirmed += usize::from(stance == LlmStance::Agrees);
                            summary.failed += usize::from(stance == LlmStance::Failed);
                            judged[i] = Some((stance, data));
                        }
                        Err(e) => {
                            summary.failed += 1;
                            summary.stopped = Some(e.to_string());
                        }
                    }
                }
            }
        }
        llm_summary = Some(summary);
    }
    let fingerprints = number_fingerprints(&hashes);
    let findings: Vec<CheckFinding> = located
        .into_iter()
        .zip(fingerprints)
        .zip(judged)
        .map(
            |(((file, function, finding, suppressed, role), fingerprint), judged)| {
                let (stance, llm_data) = match judged {
                    Some((s, d)) => (s, Some(d)),
                    None => (LlmStance::NotAsked, None),
                };
                let tier = decide_tier(&TierEvidence {
                    origin: Origin::Analyzer,
                    llm: stance,
                    contradicted: false,
                });
                let baseline_state = baseline.map(|b| {
                    if b.contains(&fingerprint) {
                        BaselineState::Unchanged
                    } else {
                        BaselineState::New
                    }
                });
                let fails = !suppressed
                    && baseline_state != Some(BaselineState::Unchanged)
                    && args.fail_on.reached_by(finding.severity)
                    && tier_rank(tier) >= tier_rank(args.fail_tier.tier());
                CheckFinding {
                    file,
                    function,
                    finding,
                    tier: tier.name(),
                    fingerprint,
                    baseline_state,
                    suppressed,
                    fails,
                    role,
                    llm: llm_data,
                }
            },
        )
        .collect();

    let mut summary = Summary {
        findings: findings.len(),
        files_not_analysed: errors.len(),
        ..Summary::default()
    };
    for f in &findings {
        match f.finding.severity {
            Severity::Error => summary.errors += 1,
            Severity::Warning => summary.warnings += 1,
            Severity::Note => summary.notes += 1,
        }
        if f.baseline_state == Some(BaselineState::Unchanged) {
            summary.unchanged += 1;
        } else {
            summary.new += 1;
        }
        summary.suppressed += usize::from(f.suppressed);
        summary.failing += usize::from(f.fails);
    }
    summary.exit_code = if errors.iter().any(|e| e.fatal) {
        2
    } else if summary.failing > 0 {
        1
    } else {
        0
    };
    CheckReport {
        llm: llm_summary,
        tool: "crosscheck",
        version: env!("CARGO_PKG_VERSION"),
        fingerprint_key: FINGERPRINT_KEY,
        fail_on: args.fail_on.name(),
        fail_tier: args.fail_tier.tier().name(),
        findings,
        errors,
        summary,
    }
}

/// The SARIF log of a report as pretty JSON.
pub fn render_sarif(report: &CheckReport, cwd: &Path) -> serde_json::Result<String> {
    let root = directory_uri(&cwd.display().to_string());
    let ctx = SarifContext {
        version: report.version,
        src_root: &root,
    };
    serde_json::to_string_pretty(&to_sarif(&report.findings, &report.errors, &ctx))
}

/// A human-readable listing, one finding per line plus its evidence, and a summary.
pub fn render_text(report: &CheckReport) -> String {
    let mut s = String::new();
    for e in &report.errors {
        let kind = if e.fatal { "error" } else { "warning" };
        let _ = writeln!(s, "{}: {kind}: not analysed: {}", e.file, e.message);
    }
    for f in &report.findings {
        let mut tags = vec![f.tier.to_string()];
        match f.baseline_state {
            Some(BaselineState::New) => tags.push("new".into()),
            Some(BaselineState::Unchanged) => tags.push("baseline".into()),
            None => {}
        }
        if f.suppressed {
            tags.push("suppressed".into());
        }
        if f.fails {
            tags.push("fails".into());
        }
        if !f.role.is_product() {
            tags.push(format!("{} file", f.role.name()));
        }
        let _ = writeln!(
            s,
            "{}:{}: {}[{}] {} ({})",
            f.file,
            f.finding.line,
            f.finding.severity.name(),
            f.finding.rule,
            f.finding.message,
            tags.join(", ")
        );
        if f.finding.evidence.len() > 1 {
            for e in &f.finding.evidence {
                let _ = writeln!(s, "    {:<6} {}:{}  {}", e.role, e.file, e.line, e.text);
            }
        }
    }
    let m = &report.summary;
    let _ = writeln!(
        s,
        "{} finding(s): {} error, {} warning, {} note; {} new, {} in baseline, {} suppressed; \
         {} failing (--fail-on {}, --fail-tier {}); {} file(s) not analysed; exit {}",
        m.findings,
        m.errors,
        m.warnings,
        m.notes,
        m.new,
        m.unchanged,
        m.suppressed,
        m.failing,
        report.fail_on,
        report.fail_tier,
        m.files_not_analysed,
        m.exit_code
    );
    s
}

fn read_baseline(path: &Path) -> Result<BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("baseline {} is not JSON: {e}", path.display()))?;
    baseline_fingerprints(&doc).map_err(|e| format!("baseline {}: {e}", path.display()))
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    match run_inner(args) {
        Ok(code) => Ok(code),
        Err(message) => {
            eprintln!("crosscheck check: error: {message}");
            Ok(2)
        }
    }
}

fn run_inner(args: &CheckArgs) -> Result<i32, String> {
    let baseline = match &args.baseline {
        Some(p) => Some(read_baseline(p)?),
        None => None,
    };
    let cwd = std::env::current_dir()
        .map_err(|e| format!("cannot determine the working directory: {e}"))?;
    // `--report` must parse (a usage error); a bad `crosscheck.toml` is a warning.
    if let Err(e) = trust_profile(args, &cwd) {
        if args.report.is_some() {
            return Err(e);
        }
        eprintln!("crosscheck check: warning: {e}; the default trust profile applies");
    }
    if let Err(e) = role_profile(args, &cwd) {
        if args.report_files.is_some() {
            return Err(e);
        }
        eprintln!("crosscheck check: warning: {e}; the default file-role profile applies");
    }
    // `--llm`: the configured LLM through the engine, with the per-user store as the answer
    // cache (shared with `ask` and the editor) and as the telemetry sink.
    let store = if args.llm {
        crate::store::Store::open_optional(
            crate::store::default_db_path(),
            crate::store::StoreConfig::default(),
        )
        .map(Arc::new)
    } else {
        None
    };
    let judge = if args.llm {
        let llm = crate::llm::LlmSettings::load().map_err(|e| format!("--llm: {e}"))?;
        if !llm.is_configured() {
            return Err(
                "--llm: no LLM is configured (set `base_url` and `model` in the [llm] table of \
                 ~/.config/crosscheck/config.toml)"
                    .to_string(),
            );
        }
        let mut settings = super::ask::load_check_settings().map_err(|e| format!("--llm: {e}"))?;
        settings.call_timeout = Some(std::time::Duration::from_secs(llm.timeout_secs.max(1) + 2));
        let prompts = match &settings.prompts_dir {
            Some(dir) => crate::crosscheck::prompts::load_override_dir(dir)
                .and_then(PromptLibrary::with_overrides)
                .map_err(|e| format!("--llm: {e}"))?,
            None => PromptLibrary::builtin(),
        };
        let client = crate::llm::HttpClient::new(llm).map_err(|e| format!("--llm: {e}"))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        Some(LlmJudge {
            clients: vec![Arc::new(client)],
            prompts,
            cache: AnswerCache::new(
                store
                    .clone()
                    .map(|s| s as Arc<dyn crate::crosscheck::record::CacheBackend>),
            ),
            settings,
            sink: store.as_deref().map(|s| s as &dyn RecordSink),
            now,
        })
    } else {
        None
    };
    let report = check(
        args,
        &cwd,
        baseline.as_ref(),
        judge.as_ref(),
        &Cancel::never(),
    );
    if let Some(l) = &report.llm {
        eprintln!(
            "crosscheck check: asked the LLM about {} taint finding(s): {} confirmed, {} without a usable answer",
            l.asked, l.confirmed, l.failed
        );
        if let Some(why) = &l.stopped {
            eprintln!("crosscheck check: warning: the LLM questions stopped: {why}");
        }
    }
    for e in &report.errors {
        let kind = if e.fatal { "error" } else { "warning" };
        eprintln!("crosscheck check: {kind}: {}: {}", e.file, e.message);
    }
    let sarif = || render_sarif(&report, &cwd).map_err(|e| e.to_string());
    let json = || serde_json::to_string_pretty(&report).map_err(|e| e.to_string());
    let out = match args.format {
        CheckFormat::Sarif => sarif()?,
        CheckFormat::Json => json()?,
        CheckFormat::Text => render_text(&report),
    };
    if let Some(path) = &args.write_baseline {
        let is_sarif = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("sarif"));
        write_file(path, &if is_sarif { sarif()? } else { json()? })?;
    }
    match &args.output {
        Some(path) => write_file(path, &out)?,
        None => super::print_stdout(&out).map_err(|e| format!("cannot write output: {e}"))?,
    }
    Ok(report.summary.exit_code)
}
