//! The findings of `crosscheck check` for pipelines: stable fingerprints, baselines, and a
//! SARIF 2.1.0 log (built with the `serde-sarif` types, which are generated from the official
//! schema).
//!
//! # Fingerprints
//!
//! A finding's identity must survive unrelated edits, so it is NOT its line number:
//! `sha256(rule id, file path, normalised enclosing function name, normalised text of the
//! finding's line)`, as 32 hex digits, then `:N` where N counts earlier findings of the run with
//! the same hash (1-based, in report order), so two identical calls in one function stay two
//! findings. Normalising removes every whitespace character, so re-indenting or re-wrapping
//! spaces keeps the identity; inserting lines above keeps it; editing the line itself, moving it
//! to another function, renaming the function or the file changes it. The fingerprint is the
//! SARIF `partialFingerprints` value under [`FINGERPRINT_KEY`].
//!
//! # SARIF mapping
//!
//! One run; `tool.driver` lists every rule of the registry (id, name, short and full
//! description, help, default level); each result has `ruleId`/`ruleIndex`, `level` from the
//! rule's severity, the message, one physical location (URI relative to `%SRCROOT%`, declared in
//! `originalUriBaseIds`, or an absolute `file:` URI for files outside it), `codeFlows` for taint
//! findings (source, steps, sink as thread-flow locations), `partialFingerprints`,
//! `baselineState` when a baseline was given, `suppressions` for in-source suppression comments,
//! and `properties` `{tier, rule, function}` (plus `trust`, the trust class of a taint finding's
//! most exposed source, `fileRole` for a file that is not the product (`test`, `vendored`,
//! ...), and `llm`, the answer to the finding's own
//! question, with `check --llm`). Files that could not be analysed become
//! tool-execution notifications of the run's invocation.
//!
//! Everything here is pure: paths, the source-root URI and the tool version come from the
//! caller.

use super::filerole::FileRole;
use super::findings::{Evidence, Finding};
use super::rules::{Severity, RULES};
use crate::syntax::functions::Function;
use serde::Serialize;
use serde_sarif::sarif;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The key of crosscheck's fingerprint in SARIF `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "crosscheck/v1";

/// The `uriBaseId` of relative artifact locations.
pub const SRCROOT: &str = "%SRCROOT%";

/// The official location of the SARIF 2.1.0 schema, written as `$schema`.
pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Whether a finding was in the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineState {
    New,
    Unchanged,
}

/// One finding of `check`, located and identified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckFinding {
    /// Path of the file, relative to the source root when inside it (`/` separators).
    pub file: String,
    /// Qualified name of the innermost function containing the finding (`None` at top level).
    pub function: Option<String>,
    #[serde(flatten)]
    pub finding: Finding,
    /// Tier name (`confirmed`, `analyzer-only`, ...), decided by the caller.
    pub tier: &'static str,
    pub fingerprint: String,
    /// `None` when no baseline was given.
    pub baseline_state: Option<BaselineState>,
    /// A `crosscheck: ignore[rule]` comment covers it.
    pub suppressed: bool,
    /// It is at or above the failure thresholds, new, and not suppressed.
    pub fails: bool,
    /// The role of the finding's file (`product`, `test`, ...): outside the product a
    /// finding is a note unless the profile reports the role.
    pub role: FileRole,
    /// With `check --llm`: the LLM's answer to the finding's own question (`task`,
    /// `verdict`, `model`, `samples`, `instability`, `cached`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<serde_json::Value>,
}

/// A file that was not analysed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckError {
    pub file: String,
    pub message: String,
    /// True when it makes the run unsuccessful (exit code 2); false for a warning.
    pub fatal: bool,
}

/// Text of a line with every whitespace character removed.
pub fn normalize_line(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The qualified name of the innermost function whose lines contain `line`.
pub fn enclosing_function<'a>(functions: &'a [Function<'_>], line: usize) -> Option<&'a str> {
    crate::syntax::functions::innermost(functions, line, |f| (f.start_line, f.end_line))
        .map(|f| f.name.as_str())
}

/// The hash part of a fingerprint (32 hex digits); see the module docs.
pub fn fingerprint_hash(rule: &str, path: &str, function: Option<&str>, line_text: &str) -> String {
    let function = function.map(normalize_line).unwrap_or_default();
    let line = normalize_line(line_text);
    let mut h = Sha256::new();
    for part in [rule, path, function.as_str(), line.as_str()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(32);
    for b in digest.iter().take(16) {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Turns hashes (in report order) into fingerprints `hash:N`, N counting equal hashes.
pub fn number_fingerprints(hashes: &[String]) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    hashes
        .iter()
        .map(|h| {
            let n = seen.entry(h.as_str()).or_insert(0);
            *n += 1;
            format!("{h}:{n}")
        })
        .collect()
}

/// The fingerprints listed in a baseline: a SARIF log (`runs[].results[].partialFingerprints`)
/// or the JSON output of `check` (`findings[].fingerprint`).
pub fn baseline_fingerprints(doc: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    if let Some(runs) = doc.get("runs") {
        let runs = runs
            .as_array()
            .ok_or("a SARIF baseline's `runs` must be an array")?;
        for run in runs {
            let results = run.get("results").and_then(|r| r.as_array());
            for r in results.into_iter().flatten() {
                if let Some(fp) = r
                    .get("partialFingerprints")
                    .and_then(|p| p.get(FINGERPRINT_KEY))
                    .and_then(|f| f.as_str())
                {
                    out.insert(fp.to_string());
                }
            }
        }
        return Ok(out);
    }
    if let Some(findings) = doc.get("findings") {
        let findings = findings
            .as_array()
            .ok_or("a JSON baseline's `findings` must be an array")?;
        for f in findings {
            if let Some(fp) = f.get("fingerprint").and_then(|f| f.as_str()) {
                out.insert(fp.to_string());
            }
        }
        return Ok(out);
    }
    Err("not a SARIF log (no `runs`) nor JSON output of `crosscheck check` (no `findings`)".into())
}

/// Severity as a SARIF level.
pub fn level(severity: Severity) -> sarif::ResultLevel {
    match severity {
        Severity::Error => sarif::ResultLevel::Error,
        Severity::Warning => sarif::ResultLevel::Warning,
        Severity::Note => sarif::ResultLevel::Note,
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
}

fn encode(path: &str, keep_colon: bool) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if is_unreserved(b) || (keep_colon && b == b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encodes a relative path for a URI reference (everything but unreserved characters
/// and `/`; `:` too, so a first segment cannot read as a scheme).
pub fn encode_path(path: &str) -> String {
    encode(path, false)
}

/// An absolute path with a leading `/` (`C:/x` -> `/C:/x`), or `None` if relative. Paths
/// arrive with `/` separators; a backslash is an ordinary (percent-encoded) character.
fn absolute_unix(path: &str) -> Option<String> {
    let unix = path.to_string();
    let b = unix.as_bytes();
    if unix.starts_with('/') {
        Some(unix)
    } else if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        Some(format!("/{unix}"))
    } else {
        None
    }
}

/// The artifact location of a reported path: relative paths against `%SRCROOT%`, absolute
/// ones as `file:` URIs.
pub fn artifact_location(path: &str) -> sarif::ArtifactLocation {
    match absolute_unix(path) {
        Some(abs) => sarif::ArtifactLocation::builder()
            .uri(format!("file://{}", encode(&abs, true)))
            .build(),
        None => sarif::ArtifactLocation::builder()
            .uri(encode_path(path))
            .uri_base_id(SRCROOT)
            .build(),
    }
}

/// A `file:` URI for a source-root directory (an absolute path), ending with `/`.
pub fn directory_uri(dir: &str) -> String {
    let mut unix = absolute_unix(dir).unwrap_or_else(|| format!("/{dir}"));
    if !unix.ends_with('/') {
        unix.push('/');
    }
    format!("file://{}", encode(&unix, true))
}

fn location(file: &str, line: usize, message: Option<String>) -> sarif::Location {
    let region = sarif::Region::builder()
        .start_line(line.max(1) as i64)
        .build();
    let physical = sarif::PhysicalLocation::builder()
        .artifact_location(artifact_location(file))
        .region(region)
        .build();
    match message {
        Some(text) => sarif::Location::builder()
            .physical_location(physical)
            .message(sarif::Message::builder().text(text).build())
            .build(),
        None => sarif::Location::builder()
            .physical_location(physical)
            .build(),
    }
}

fn evidence_message(e: &Evidence) -> String {
    if e.text.is_empty() {
        e.role.clone()
    } else {
        format!("{}: {}", e.role, e.text)
    }
}

/// The taint path of a finding as a code flow (`None` unless it has a source and a sink).
fn code_flow(f: &CheckFinding) -> Option<sarif::CodeFlow> {
    let ev = &f.finding.evidence;
    let has = |role: &str| ev.iter().any(|e| e.role == role);
    if !(has("source") && has("sink")) {
        return None;
    }
    let locations: Vec<sarif::ThreadFlowLocation> = ev
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let importance = if e.role == "step" {
                "important"
            } else {
                "essential"
            };
            sarif::ThreadFlowLocation::builder()
                .location(location(&e.file, e.line, Some(evidence_message(e))))
                .execution_order(i as i64)
                .importance(serde_json::Value::from(importance))
                .build()
        })
        .collect();
    let thread = sarif::ThreadFlow::builder().locations(locations).build();
    let first = ev.first()?;
    let last = ev.last()?;
    Some(
        sarif::CodeFlow::builder()
            .message(
                sarif::Message::builder()
                    .text(format!(
                        "from `{}` (line {}) to `{}` (line {})",
                        first.text, first.line, last.text, last.line
                    ))
                    .build(),
            )
            .thread_flows(vec![thread])
            .build(),
    )
}

fn property_bag(entries: Vec<(&str, serde_json::Value)>, tags: Vec<String>) -> sarif::PropertyBag {
    let additional: BTreeMap<String, serde_json::Value> = entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    if tags.is_empty() {
        sarif::PropertyBag::builder()
            .additional_properties(additional)
            .build()
    } else {
        sarif::PropertyBag::builder()
            .tags(tags)
            .additional_properties(additional)
            .build()
    }
}

fn driver_rules() -> Vec<sarif::ReportingDescriptor> {
    RULES
        .iter()
        .map(|r| {
            let mut tags = Vec::new();
            if r.sink_kind.is_some() {
                tags.push("security".to_string());
            }
            if !r.languages.is_empty() {
                tags.extend(r.languages.iter().map(|l| l.name().to_string()));
            }
            sarif::ReportingDescriptor::builder()
                .id(r.id)
                .name(r.name)
                .short_description(
                    sarif::MultiformatMessageString::builder()
                        .text(r.name)
                        .build(),
                )
                .full_description(
                    sarif::MultiformatMessageString::builder()
                        .text(r.description)
                        .build(),
                )
                .help(
                    sarif::MultiformatMessageString::builder()
                        .text(format!("{} Evidence: {}.", r.description, r.evidence))
                        .build(),
                )
                .default_configuration(
                    sarif::ReportingConfiguration::builder()
                        .level(serde_json::Value::from(r.severity.name()))
                        .build(),
                )
                .properties(property_bag(Vec::new(), tags))
                .build()
        })
        .collect()
}

fn result(f: &CheckFinding) -> sarif::Result {
    let rule_index = RULES.iter().position(|r| r.id == f.finding.rule);
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(FINGERPRINT_KEY.to_string(), f.fingerprint.clone());
    let mut props = vec![
        ("tier", serde_json::Value::from(f.tier)),
        ("rule", serde_json::Value::from(f.finding.rule.clone())),
    ];
    if let Some(func) = &f.function {
        props.push(("function", serde_json::Value::from(func.clone())));
    }
    if let Some(t) = f.finding.trust {
        props.push(("trust", serde_json::Value::from(t.name())));
    }
    if !f.role.is_product() {
        props.push(("fileRole", serde_json::Value::from(f.role.name())));
    }
    if let Some(llm) = &f.llm {
        props.push(("llm", llm.clone()));
    }
    let r = sarif::Result::builder()
        .rule_id(f.finding.rule.clone())
        .level(level(f.finding.severity))
        .message(
            sarif::Message::builder()
                .text(f.finding.message.clone())
                .build(),
        )
        .locations(vec![location(&f.file, f.finding.line, None)])
        .partial_fingerprints(fingerprints)
        .properties(property_bag(props, Vec::new()))
        .suppressions(if f.suppressed {
            vec![sarif::Suppression::builder()
                .kind(serde_json::Value::from("inSource"))
                .build()]
        } else {
            Vec::new()
        })
        .build();
    let mut r = r;
    r.code_flows = code_flow(f).map(|c| vec![c]);
    r.rule_index = rule_index.map(|i| i as i64);
    r.baseline_state = f.baseline_state.map(|s| {
        serde_json::Value::from(match s {
            BaselineState::New => "new",
            BaselineState::Unchanged => "unchanged",
        })
    });
    r
}

/// Where the SARIF log is anchored and what produced it.
#[derive(Debug, Clone)]
pub struct SarifContext<'a> {
    /// crosscheck's version.
    pub version: &'a str,
    /// `file:` URI of the directory relative paths are resolved against (see [`directory_uri`]).
    pub src_root: &'a str,
}

/// The SARIF 2.1.0 log of a `check` run.
pub fn to_sarif(
    findings: &[CheckFinding],
    errors: &[CheckError],
    ctx: &SarifContext<'_>,
) -> sarif::Sarif {
    let driver = sarif::ToolComponent::builder()
        .name("crosscheck")
        .version(ctx.version)
        .semantic_version(ctx.version)
        .rules(driver_rules())
        .build();
    let notifications: Vec<sarif::Notification> = errors
        .iter()
        .map(|e| {
            sarif::Notification::builder()
                .message(sarif::Message::builder().text(e.message.clone()).build())
                .level(serde_json::Value::from(if e.fatal {
                    "error"
                } else {
                    "warning"
                }))
                .locations(vec![sarif::Location::builder()
                    .physical_location(
                        sarif::PhysicalLocation::builder()
                            .artifact_location(artifact_location(&e.file))
                            .build(),
                    )
                    .build()])
                .build()
        })
        .collect();
    let invocation = sarif::Invocation::builder()
        .execution_successful(!errors.iter().any(|e| e.fatal))
        .tool_execution_notifications(notifications)
        .build();
    let mut bases = BTreeMap::new();
    bases.insert(
        SRCROOT.to_string(),
        sarif::ArtifactLocation::builder().uri(ctx.src_root).build(),
    );
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .invocations(vec![invocation])
        .original_uri_base_ids(bases)
        .results(findings.iter().map(result).collect::<Vec<_>>())
        .build();
    sarif::Sarif::builder()
        .schema(SARIF_SCHEMA_URI)
        .version(serde_json::Value::from("2.1.0"))
        .runs(vec![run])
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::functions::collect_functions;
    use crate::syntax::{Language, ParsedFile};

    #[test]
    fn normalised_lines_ignore_all_whitespace() {
        assert_eq!(normalize_line("  os.system( cmd )\t\r"), "os.system(cmd)");
        assert_eq!(normalize_line(""), "");
    }

    #[test]
    fn fingerprint_hash_depends_on_every_part_and_not_on_spacing() {
        let base = fingerprint_hash("r", "a.py", Some("f"), "x = y");
        assert_eq!(base.len(), 32);
        assert!(base.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(base, fingerprint_hash("r", "a.py", Some("f"), "  x=y  "));
        for other in [
            fingerprint_hash("s", "a.py", Some("f"), "x = y"),
            fingerprint_hash("r", "b.py", Some("f"), "x = y"),
            fingerprint_hash("r", "a.py", Some("g"), "x = y"),
            fingerprint_hash("r", "a.py", None, "x = y"),
            fingerprint_hash("r", "a.py", Some("f"), "x = z"),
        ] {
            assert_ne!(base, other);
        }
        // Parts are length-prefixed: moving a character across a boundary changes the hash.
        assert_ne!(
            fingerprint_hash("ab", "c", None, ""),
            fingerprint_hash("a", "bc", None, "")
        );
    }

    #[test]
    fn equal_hashes_are_numbered_in_order() {
        let h = |s: &str| s.to_string();
        assert_eq!(
            number_fingerprints(&[h("a"), h("b"), h("a"), h("a")]),
            vec!["a:1", "b:1", "a:2", "a:3"]
        );
    }

    #[test]
    fn innermost_enclosing_function_wins() {
        let src = "def outer():\n    x = 1\n    def inner():\n        return x\n    return inner\n\ny = 2\n";
        let file = ParsedFile::parse(Language::Python, src.to_string());
        let fns = collect_functions(&file);
        assert_eq!(enclosing_function(&fns, 2), Some("outer"));
        assert_eq!(enclosing_function(&fns, 4), Some("outer.inner"));
        assert_eq!(enclosing_function(&fns, 7), None);
    }

    #[test]
    fn baselines_are_read_from_sarif_or_check_json() {
        let sarif = serde_json::json!({"runs": [{"results": [
            {"partialFingerprints": {"crosscheck/v1": "aa:1", "other/v1": "zz"}},
            {"partialFingerprints": {}},
            {}
        ]}]});
        let got = baseline_fingerprints(&sarif).unwrap();
        assert_eq!(got.into_iter().collect::<Vec<_>>(), vec!["aa:1"]);
        let json = serde_json::json!({"findings": [{"fingerprint": "bb:2"}, {"rule": "x"}]});
        let got = baseline_fingerprints(&json).unwrap();
        assert_eq!(got.into_iter().collect::<Vec<_>>(), vec!["bb:2"]);
        assert!(baseline_fingerprints(&serde_json::json!({"x": 1})).is_err());
        assert!(baseline_fingerprints(&serde_json::json!({"runs": 3})).is_err());
        assert!(baseline_fingerprints(&serde_json::json!([1, 2])).is_err());
    }

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(encode_path("src/a b#c.py"), "src/a%20b%23c.py");
        assert_eq!(encode_path("dir/ü.py"), "dir/%C3%BC.py");
        let rel = artifact_location("src/x.py");
        assert_eq!(rel.uri.as_deref(), Some("src/x.py"));
        assert_eq!(rel.uri_base_id.as_deref(), Some(SRCROOT));
        let abs = artifact_location("/tmp/x y.py");
        assert_eq!(abs.uri.as_deref(), Some("file:///tmp/x%20y.py"));
        assert_eq!(abs.uri_base_id, None);
        assert_eq!(directory_uri("/work/repo"), "file:///work/repo/");
        assert_eq!(directory_uri("C:/repo"), "file:///C:/repo/");
        assert_eq!(
            artifact_location("C:/r/a.c").uri.as_deref(),
            Some("file:///C:/r/a.c")
        );
        assert_eq!(encode_path("a\\b:c"), "a%5Cb%3Ac");
    }
}
