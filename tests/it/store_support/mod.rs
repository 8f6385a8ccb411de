//! Shared by the store and telemetry tests: record builders, temporary stores, the binary.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crosscheck::crosscheck::record::{CrossCheckRecord, SampleRecord, Tier};
use crosscheck::store::{Store, StoreConfig};
use serde_json::{json, Value};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_crosscheck"))
}

/// A temporary directory and the database path inside it.
pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("store").join("crosscheck.db");
    (dir, path)
}

pub fn open(path: &Path) -> Store {
    Store::open(path, StoreConfig::default()).expect("open store")
}

/// A sample whose normalised answer is `answer`.
pub fn sample(answer: Value) -> SampleRecord {
    SampleRecord {
        answer,
        parsed: true,
        latency_ms: 100,
        prompt_tokens: 50,
        completion_tokens: 10,
        from_cache: false,
    }
}

/// A plain record: an AST task with one sample, no verdicts, no source.
pub fn record(id: &str, timestamp: i64) -> CrossCheckRecord {
    CrossCheckRecord {
        id: id.to_string(),
        timestamp,
        task: "ast".into(),
        language: "python".into(),
        model: "model-a".into(),
        template_id: "ast.role".into(),
        template_version: 3,
        strategy: "role".into(),
        code_hash: format!("{:064x}", timestamp),
        analyzer: json!({"type": "FUNCTION", "children": [{"type": "RETURN"}]}),
        samples: vec![sample(json!({"type": "FUNCTION"}))],
        scores: BTreeMap::from([
            ("statement_gap".to_string(), 0.25),
            ("keyword_gap".to_string(), 0.125),
        ]),
        pass: Some(true),
        tier: Some(Tier::Confirmed),
        instability: 0.0,
        latency_ms: 1200,
        prompt_tokens: 400,
        completion_tokens: 120,
        source_text: None,
    }
}

/// A binary-verdict record (`taint`): the analyzer says `analyzer`, the samples say `llm`.
pub fn verdict_record(id: &str, timestamp: i64, analyzer: bool, llm: &[bool]) -> CrossCheckRecord {
    let mut r = record(id, timestamp);
    r.task = "taint".into();
    r.analyzer = json!({"verdict": analyzer});
    r.samples = llm
        .iter()
        .map(|&v| sample(json!({"verdict": if v { "yes" } else { "no" }})))
        .collect();
    r.scores = BTreeMap::new();
    r.pass = None;
    r.tier = None;
    r
}

/// Writes `records` as an export file (one `kind: record` line each, with `schema_version`).
pub fn write_jsonl(path: &Path, records: &[CrossCheckRecord]) {
    let mut text = String::new();
    for r in records {
        let mut v = serde_json::to_value(r).expect("record to JSON");
        if let Value::Object(m) = &mut v {
            m.insert("schema_version".into(), json!(1));
            m.insert("kind".into(), json!("record"));
        }
        text.push_str(&v.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).expect("write jsonl");
}
