//! Export of the store to JSON Lines or CSV, and import of JSON Lines exports (merging
//! teammates' stores). See the [module docs](super) for the line formats.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{BufRead, Write};
use std::ops::ControlFlow;

use serde::Serialize;
use serde_json::Value;

use super::time::format_utc;
use super::verdict::{analyzer_verdict, llm_verdict};
use crate::crosscheck::record::{CrossCheckRecord, HumanLabel};
use crate::store::{RecordFilter, Store, StoreError};

/// Version of the export line format, carried by every JSONL line and CSV row.
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

/// Derived or envelope keys of a record line that are not record fields.
const ENVELOPE_KEYS: [&str; 7] = [
    "schema_version",
    "kind",
    "time_utc",
    "analyzer_verdict",
    "llm_verdict",
    "label_correct",
    "labels",
];

/// Export syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Jsonl,
    Csv,
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Records with `timestamp >= since`, labels with `timestamp >= since`.
    pub since: Option<i64>,
    /// Include `source_text` where the store has it (off by default: an export leaves the
    /// machine, and the opt-in to store code was for the local store).
    pub include_source: bool,
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ExportReport {
    pub records: u64,
    /// Label lines (JSONL only: labels of subjects that are not exported records).
    pub label_lines: u64,
    /// Rows of the store that could not be decoded and were skipped.
    pub skipped: u64,
}

/// Why an export or import stopped.
#[derive(Debug)]
pub enum TelemetryError {
    Store(StoreError),
    Io(std::io::Error),
    Csv(csv::Error),
    Json(serde_json::Error),
}

impl fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TelemetryError::Store(e) => write!(f, "{e}"),
            TelemetryError::Io(e) => write!(f, "{e}"),
            TelemetryError::Csv(e) => write!(f, "CSV: {e}"),
            TelemetryError::Json(e) => write!(f, "JSON: {e}"),
        }
    }
}

impl std::error::Error for TelemetryError {}

impl From<StoreError> for TelemetryError {
    fn from(e: StoreError) -> Self {
        TelemetryError::Store(e)
    }
}

impl From<std::io::Error> for TelemetryError {
    fn from(e: std::io::Error) -> Self {
        TelemetryError::Io(e)
    }
}

impl From<csv::Error> for TelemetryError {
    fn from(e: csv::Error) -> Self {
        TelemetryError::Csv(e)
    }
}

impl From<serde_json::Error> for TelemetryError {
    fn from(e: serde_json::Error) -> Self {
        TelemetryError::Json(e)
    }
}

/// A label inside a record line (its subject is the record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LineLabel {
    pub correct: bool,
    pub timestamp: i64,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Serialize)]
struct RecordLine<'a> {
    schema_version: u32,
    kind: &'static str,
    #[serde(flatten)]
    record: &'a CrossCheckRecord,
    time_utc: String,
    analyzer_verdict: Option<bool>,
    llm_verdict: Option<bool>,
    label_correct: Option<bool>,
    labels: Vec<LineLabel>,
}

#[derive(Serialize)]
struct LabelLine<'a> {
    schema_version: u32,
    kind: &'static str,
    #[serde(flatten)]
    label: &'a HumanLabel,
    time_utc: String,
}

/// Labels grouped by subject, oldest first (the store's order).
fn labels_by_subject(store: &Store) -> Result<BTreeMap<String, Vec<HumanLabel>>, StoreError> {
    let mut map: BTreeMap<String, Vec<HumanLabel>> = BTreeMap::new();
    for l in store.labels(None)? {
        map.entry(l.subject.clone()).or_default().push(l);
    }
    Ok(map)
}

fn bool_cell(v: Option<bool>) -> String {
    match v {
        Some(true) => "1".into(),
        Some(false) => "0".into(),
        None => String::new(),
    }
}

/// CSV columns before the `score_*` columns.
pub const CSV_COLUMNS: [&str; 24] = [
    "schema_version",
    "id",
    "timestamp",
    "time_utc",
    "task",
    "language",
    "model",
    "template_id",
    "template_version",
    "strategy",
    "code_hash",
    "tier",
    "pass",
    "instability",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "samples",
    "samples_parsed",
    "samples_from_cache",
    "analyzer_verdict",
    "llm_verdict",
    "label_correct",
    "label_count",
];

/// Writes the store's records (and, in JSONL, the labels of other subjects) to `out`.
pub fn export(
    store: &Store,
    format: ExportFormat,
    options: &ExportOptions,
    out: &mut dyn Write,
) -> Result<ExportReport, TelemetryError> {
    let filter = RecordFilter {
        since: options.since,
        ..RecordFilter::default()
    };
    let labels = labels_by_subject(store)?;
    let mut report = ExportReport::default();
    let mut failure: Option<TelemetryError> = None;
    match format {
        ExportFormat::Jsonl => {
            let mut exported = BTreeSet::new();
            store.for_each_record(&filter, |item| {
                let Ok(mut record) = item else {
                    report.skipped += 1;
                    return ControlFlow::Continue(());
                };
                if !options.include_source {
                    record.source_text = None;
                }
                let own = labels.get(&record.id).map(Vec::as_slice).unwrap_or(&[]);
                let line = RecordLine {
                    schema_version: EXPORT_SCHEMA_VERSION,
                    kind: "record",
                    time_utc: format_utc(record.timestamp),
                    analyzer_verdict: analyzer_verdict(&record),
                    llm_verdict: llm_verdict(&record),
                    label_correct: own.last().map(|l| l.correct),
                    labels: own
                        .iter()
                        .map(|l| LineLabel {
                            correct: l.correct,
                            timestamp: l.timestamp,
                            note: l.note.clone(),
                        })
                        .collect(),
                    record: &record,
                };
                let written = serde_json::to_writer(&mut *out, &line)
                    .map_err(TelemetryError::from)
                    .and_then(|_| out.write_all(b"\n").map_err(TelemetryError::from));
                if let Err(e) = written {
                    failure = Some(e);
                    return ControlFlow::Break(());
                }
                exported.insert(record.id.clone());
                report.records += 1;
                ControlFlow::Continue(())
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
            let since = options.since.unwrap_or(i64::MIN);
            for label in labels
                .iter()
                .filter(|(subject, _)| !exported.contains(*subject))
                .flat_map(|(_, ls)| ls)
                .filter(|l| l.timestamp >= since)
            {
                let line = LabelLine {
                    schema_version: EXPORT_SCHEMA_VERSION,
                    kind: "label",
                    label,
                    time_utc: format_utc(label.timestamp),
                };
                serde_json::to_writer(&mut *out, &line)?;
                out.write_all(b"\n")?;
                report.label_lines += 1;
            }
        }
        ExportFormat::Csv => {
            let scores = store.score_names(&filter)?;
            let mut w = csv::Writer::from_writer(&mut *out);
            let mut header: Vec<String> = CSV_COLUMNS.iter().map(|c| c.to_string()).collect();
            if options.include_source {
                header.push("source_text".into());
            }
            header.extend(scores.iter().map(|s| format!("score_{s}")));
            w.write_record(&header)?;
            store.for_each_record(&filter, |item| {
                let Ok(r) = item else {
                    report.skipped += 1;
                    return ControlFlow::Continue(());
                };
                let own = labels.get(&r.id).map(Vec::as_slice).unwrap_or(&[]);
                let mut row = vec![
                    EXPORT_SCHEMA_VERSION.to_string(),
                    r.id.clone(),
                    r.timestamp.to_string(),
                    format_utc(r.timestamp),
                    r.task.clone(),
                    r.language.clone(),
                    r.model.clone(),
                    r.template_id.clone(),
                    r.template_version.to_string(),
                    r.strategy.clone(),
                    r.code_hash.clone(),
                    r.tier.map(|t| t.name().to_string()).unwrap_or_default(),
                    bool_cell(r.pass),
                    r.instability.to_string(),
                    r.latency_ms.to_string(),
                    r.prompt_tokens.to_string(),
                    r.completion_tokens.to_string(),
                    r.samples.len().to_string(),
                    r.samples.iter().filter(|s| s.parsed).count().to_string(),
                    r.samples
                        .iter()
                        .filter(|s| s.from_cache)
                        .count()
                        .to_string(),
                    bool_cell(analyzer_verdict(&r)),
                    bool_cell(llm_verdict(&r)),
                    bool_cell(own.last().map(|l| l.correct)),
                    own.len().to_string(),
                ];
                if options.include_source {
                    row.push(r.source_text.clone().unwrap_or_default());
                }
                row.extend(
                    scores
                        .iter()
                        .map(|s| r.scores.get(s).map(f64::to_string).unwrap_or_default()),
                );
                if let Err(e) = w.write_record(&row) {
                    failure = Some(e.into());
                    return ControlFlow::Break(());
                }
                report.records += 1;
                ControlFlow::Continue(())
            })?;
            if let Some(e) = failure {
                return Err(e);
            }
            w.flush()?;
            drop(w);
        }
    }
    out.flush()?;
    Ok(report)
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ImportReport {
    /// Non-blank lines read.
    pub lines: u64,
    pub records_new: u64,
    /// Records whose id was already in the store (kept as stored).
    pub records_present: u64,
    pub labels_new: u64,
    pub labels_present: u64,
    /// Lines rejected (bad JSON, unknown kind, newer schema, invalid record).
    pub rejected: u64,
    /// The first rejections, `line N: reason`.
    pub errors: Vec<String>,
}

/// At most this many rejection messages are kept in [`ImportReport::errors`].
pub const MAX_ERROR_MESSAGES: usize = 20;

/// A parsed import line.
enum Line {
    Record(Box<CrossCheckRecord>, Vec<LineLabel>),
    Label(HumanLabel),
}

fn parse_line(text: &str) -> Result<Line, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut map) = value else {
        return Err("not a JSON object".into());
    };
    let version = match map.get("schema_version") {
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| format!("schema_version {n} is not a version number"))?,
        Some(other) => return Err(format!("schema_version {other} is not a number")),
        None => return Err("no schema_version: not a crosscheck export line".into()),
    };
    if version == 0 || version > u64::from(EXPORT_SCHEMA_VERSION) {
        return Err(format!(
            "schema_version {version} is not supported (this crosscheck reads 1 to \
             {EXPORT_SCHEMA_VERSION}; upgrade crosscheck)"
        ));
    }
    let kind = match map.get("kind") {
        Some(Value::String(k)) => k.clone(),
        _ => return Err("no \"kind\" (record or label)".into()),
    };
    match kind.as_str() {
        "record" => {
            let labels = match map.remove("labels") {
                None | Some(Value::Null) => Vec::new(),
                Some(v) => serde_json::from_value::<Vec<LineLabel>>(v)
                    .map_err(|e| format!("bad labels: {e}"))?,
            };
            for key in ENVELOPE_KEYS {
                map.remove(key);
            }
            let record: CrossCheckRecord = serde_json::from_value(Value::Object(map))
                .map_err(|e| format!("bad record: {e}"))?;
            Ok(Line::Record(Box::new(record), labels))
        }
        "label" => {
            for key in ["schema_version", "kind", "time_utc"] {
                map.remove(key);
            }
            let label: HumanLabel = serde_json::from_value(Value::Object(map))
                .map_err(|e| format!("bad label: {e}"))?;
            Ok(Line::Label(label))
        }
        other => Err(format!("unknown kind {other:?}")),
    }
}

fn reject(report: &mut ImportReport, line: u64, reason: String) {
    report.rejected += 1;
    if report.errors.len() < MAX_ERROR_MESSAGES {
        report.errors.push(format!("line {line}: {reason}"));
    }
}

/// Imports a JSON Lines export into `store`: each record in its own transaction, idempotent by
/// record id (a present id is left as stored); labels deduplicated. `on_commit` is called with
/// the id of every newly stored record right after its transaction commits. Bad lines are
/// counted and reported, not fatal; a store failure (other than an invalid record) stops the
/// import with an error, everything committed before it stays.
pub fn import_jsonl(
    store: &Store,
    mut input: impl BufRead,
    mut on_commit: impl FnMut(&str),
) -> Result<ImportReport, TelemetryError> {
    let mut report = ImportReport::default();
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        number += 1;
        let Ok(text) = std::str::from_utf8(&buf) else {
            reject(&mut report, number, "not UTF-8".into());
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        report.lines += 1;
        match parse_line(text) {
            Err(reason) => reject(&mut report, number, reason),
            Ok(Line::Record(record, labels)) => {
                match store.insert_record(&record) {
                    Ok(true) => {
                        report.records_new += 1;
                        on_commit(&record.id);
                    }
                    Ok(false) => report.records_present += 1,
                    Err(e @ StoreError::InvalidRecord { .. }) => {
                        reject(&mut report, number, e.to_string());
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
                for l in labels {
                    let label = HumanLabel {
                        subject: record.id.clone(),
                        correct: l.correct,
                        timestamp: l.timestamp,
                        note: l.note,
                    };
                    if store.add_label(&label)? {
                        report.labels_new += 1;
                    } else {
                        report.labels_present += 1;
                    }
                }
            }
            Ok(Line::Label(label)) => {
                if label.subject.is_empty() {
                    reject(&mut report, number, "label with an empty subject".into());
                } else if store.add_label(&label)? {
                    report.labels_new += 1;
                } else {
                    report.labels_present += 1;
                }
            }
        }
    }
    Ok(report)
}
