//! Export (JSONL, CSV) and import: `schema_version` on every line and row, lossless JSONL
//! round trips, idempotent merging, `--since`, source text only on request, bad lines
//! reported, and the documented path from an export to `crosscheck stats`.

use crate::store_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crosscheck::crosscheck::record::{CrossCheckRecord, HumanLabel, Tier};
use crosscheck::store::{RecordFilter, Store};
use crosscheck::telemetry::{
    export, import_jsonl, ExportFormat, ExportOptions, EXPORT_SCHEMA_VERSION,
};
use serde_json::{json, Value};
use store_support::{bin, open, record, temp_db, verdict_record};

fn label(subject: &str, correct: bool, timestamp: i64, note: Option<&str>) -> HumanLabel {
    HumanLabel {
        subject: subject.into(),
        correct,
        timestamp,
        note: note.map(Into::into),
    }
}

/// A store with AST and taint records, one with opted-in source text, labels on records and
/// on a finding fingerprint.
fn populated(path: &Path) -> (Store, Vec<CrossCheckRecord>) {
    let store = open(path);
    let mut rs = vec![
        record("ast-1", 1_714_521_600), // 2024-05-01T00:00:00Z
        verdict_record("taint-1", 1_714_608_000, true, &[true, true, false]),
        verdict_record("taint-2", 1_714_694_400, false, &[true]),
    ];
    rs[0].source_text = Some("def f(x):\n    return x  # \"quoted\", comma\n".into());
    rs[0].scores.insert("structure_gap".into(), 0.5);
    rs[1].tier = Some(Tier::Confirmed);
    rs[2].pass = Some(false);
    store.insert_records(&rs).unwrap();
    store
        .add_label(&label("taint-1", false, 1_714_700_000, None))
        .unwrap();
    store
        .add_label(&label(
            "taint-1",
            true,
            1_714_800_000,
            Some("checked by hand"),
        ))
        .unwrap();
    store
        .add_label(&label("finding:abc", true, 1_714_900_000, None))
        .unwrap();
    (store, rs)
}

fn export_text(store: &Store, format: ExportFormat, options: &ExportOptions) -> String {
    let mut out = Vec::new();
    export(store, format, options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_jsonl_line_carries_schema_version_and_kind() {
    let (_dir, path) = temp_db();
    let (store, _) = populated(&path);
    let text = export_text(&store, ExportFormat::Jsonl, &ExportOptions::default());
    let lines = lines(&text);
    assert_eq!(
        lines.len(),
        4,
        "three records and one label of a non-record\n{text}"
    );
    for line in &lines {
        assert_eq!(line["schema_version"], json!(EXPORT_SCHEMA_VERSION));
    }
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["record", "record", "record", "label"]);
    let taint1 = &lines[1];
    assert_eq!(taint1["id"], "taint-1");
    assert_eq!(taint1["time_utc"], "2024-05-02T00:00:00Z");
    assert_eq!(taint1["analyzer_verdict"], true);
    assert_eq!(taint1["llm_verdict"], true);
    assert_eq!(taint1["label_correct"], true, "the latest label");
    assert_eq!(taint1["labels"].as_array().unwrap().len(), 2);
    assert_eq!(
        lines[0]["analyzer_verdict"],
        Value::Null,
        "ASTs carry no verdict"
    );
    assert_eq!(lines[3]["subject"], "finding:abc");
}

#[test]
fn source_text_leaves_the_store_only_with_include_source() {
    let (_dir, path) = temp_db();
    let (store, rs) = populated(&path);
    let default = export_text(&store, ExportFormat::Jsonl, &ExportOptions::default());
    assert!(!default.contains("return x"));
    assert_eq!(lines(&default)[0]["source_text"], Value::Null);
    let with = export_text(
        &store,
        ExportFormat::Jsonl,
        &ExportOptions {
            include_source: true,
            ..Default::default()
        },
    );
    assert_eq!(
        lines(&with)[0]["source_text"].as_str(),
        rs[0].source_text.as_deref()
    );
    let csv = export_text(&store, ExportFormat::Csv, &ExportOptions::default());
    assert!(!csv.contains("return x") && !csv.contains("source_text"));
}

#[test]
fn jsonl_round_trips_through_import_into_another_store() {
    let (_d1, p1) = temp_db();
    let (source, rs) = populated(&p1);
    let text = export_text(
        &source,
        ExportFormat::Jsonl,
        &ExportOptions {
            include_source: true,
            ..Default::default()
        },
    );
    let (_d2, p2) = temp_db();
    let target = open(&p2);
    let mut committed = Vec::new();
    let report = import_jsonl(&target, text.as_bytes(), |id| {
        committed.push(id.to_string())
    })
    .unwrap();
    assert_eq!(
        (report.records_new, report.labels_new, report.rejected),
        (3, 3, 0)
    );
    assert_eq!(committed, ["ast-1", "taint-1", "taint-2"]);
    assert_eq!(target.records(&RecordFilter::default()).unwrap(), rs);
    assert_eq!(target.labels(None).unwrap(), source.labels(None).unwrap());
    // Exporting the copy gives the same bytes.
    let again = export_text(
        &target,
        ExportFormat::Jsonl,
        &ExportOptions {
            include_source: true,
            ..Default::default()
        },
    );
    assert_eq!(again, text);
}

#[test]
fn importing_the_same_export_twice_changes_nothing() {
    let (_d1, p1) = temp_db();
    let (source, _) = populated(&p1);
    let text = export_text(&source, ExportFormat::Jsonl, &ExportOptions::default());
    let (_d2, p2) = temp_db();
    let target = open(&p2);
    import_jsonl(&target, text.as_bytes(), |_| {}).unwrap();
    let before = target.counts().unwrap();
    let mut committed = 0;
    let report = import_jsonl(&target, text.as_bytes(), |_| committed += 1).unwrap();
    assert_eq!(committed, 0);
    assert_eq!(
        (
            report.records_new,
            report.records_present,
            report.labels_new,
            report.labels_present
        ),
        (0, 3, 0, 3)
    );
    assert_eq!(target.counts().unwrap(), before);
}

#[test]
fn since_limits_records_and_labels_of_other_subjects() {
    let (_dir, path) = temp_db();
    let (store, _) = populated(&path);
    let options = ExportOptions {
        since: Some(1_714_608_000),
        ..Default::default()
    };
    let ids: Vec<String> = lines(&export_text(&store, ExportFormat::Jsonl, &options))
        .iter()
        .map(|l| {
            l["id"]
                .as_str()
                .or(l["subject"].as_str())
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["taint-1", "taint-2", "finding:abc"]);
    let late = ExportOptions {
        since: Some(1_714_950_000),
        ..Default::default()
    };
    assert_eq!(export_text(&store, ExportFormat::Jsonl, &late), "");
}

#[test]
fn csv_flattens_scores_into_columns_with_schema_version_on_every_row() {
    let (_dir, path) = temp_db();
    let (store, _) = populated(&path);
    let text = export_text(&store, ExportFormat::Csv, &ExportOptions::default());
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[0], "schema_version");
    let tail: Vec<&str> = header
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "score_keyword_gap",
            "score_statement_gap",
            "score_structure_gap"
        ]
    );
    let rows: Vec<BTreeMap<String, String>> = reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert_eq!(row["schema_version"], "1");
    }
    assert_eq!(rows[0]["score_structure_gap"], "0.5");
    assert_eq!(rows[0]["score_statement_gap"], "0.25");
    assert_eq!(
        rows[1]["score_structure_gap"], "",
        "taint records have no scores"
    );
    assert_eq!(rows[0]["pass"], "1");
    assert_eq!(rows[1]["pass"], "");
    assert_eq!(rows[2]["pass"], "0");
    assert_eq!(rows[1]["tier"], "confirmed");
    assert_eq!(
        (
            rows[1]["analyzer_verdict"].as_str(),
            rows[1]["llm_verdict"].as_str()
        ),
        ("1", "1")
    );
    assert_eq!(
        (
            rows[2]["analyzer_verdict"].as_str(),
            rows[2]["llm_verdict"].as_str()
        ),
        ("0", "1")
    );
    assert_eq!(
        (
            rows[1]["label_correct"].as_str(),
            rows[1]["label_count"].as_str()
        ),
        ("1", "2")
    );
    assert_eq!(rows[1]["samples"], "3");
    assert_eq!(rows[0]["time_utc"], "2024-05-01T00:00:00Z");
}

#[test]
fn bad_lines_are_reported_by_number_and_the_rest_is_imported() {
    let good = {
        let mut v = serde_json::to_value(record("good", 5)).unwrap();
        v["schema_version"] = json!(1);
        v["kind"] = json!("record");
        v.to_string()
    };
    let mut newer: Value = serde_json::from_str(&good).unwrap();
    newer["schema_version"] = json!(EXPORT_SCHEMA_VERSION + 1);
    newer["id"] = json!("from-the-future");
    let mut missing_field: Value = serde_json::from_str(&good).unwrap();
    missing_field.as_object_mut().unwrap().remove("code_hash");
    missing_field["id"] = json!("no-hash");
    let input = [
        good.as_str(),
        "{not json",
        "",
        r#"{"kind": "record", "id": "x"}"#,
        &newer.to_string(),
        r#"{"schema_version": 1, "kind": "mystery"}"#,
        &missing_field.to_string(),
        r#"{"schema_version": 1, "kind": "label", "subject": "fp:1", "correct": false, "timestamp": 9, "note": null}"#,
        "[1, 2]",
    ]
    .join("\n");
    let (_dir, path) = temp_db();
    let store = open(&path);
    let report = import_jsonl(&store, input.as_bytes(), |_| {}).unwrap();
    assert_eq!((report.records_new, report.labels_new), (1, 1));
    assert_eq!(report.rejected, 6);
    assert_eq!(report.lines, 8, "the blank line is not counted");
    let joined = report.errors.join("\n");
    for needle in [
        "line 2: not JSON",
        "line 4: no schema_version",
        "line 5: schema_version 2 is not supported",
        "line 6: unknown kind \"mystery\"",
        "line 7: bad record",
        "line 9: not a JSON object",
    ] {
        assert!(joined.contains(needle), "{needle:?} missing from\n{joined}");
    }
    assert!(store.get_record("from-the-future").unwrap().is_none());
}

#[test]
fn the_cli_exports_imports_labels_and_feeds_crosscheck_stats() {
    let dir = tempfile::tempdir().unwrap();
    let alice = dir.path().join("alice.db");
    let team = dir.path().join("team.db");
    {
        let (store, _) = populated(&alice);
        // More verdict pairs so the statistics have something to chew on.
        for i in 0..8 {
            let analyzer = i % 2 == 0;
            let llm = i % 3 != 0;
            store
                .insert_record(&verdict_record(
                    &format!("v{i}"),
                    1_715_000_000 + i,
                    analyzer,
                    &[llm],
                ))
                .unwrap();
        }
    }
    let crosscheck = |args: &[&str]| {
        let out = Command::new(bin()).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let a = alice.to_str().unwrap();
    let t = team.to_str().unwrap();
    let export_file = dir.path().join("alice.jsonl");
    let e = export_file.to_str().unwrap();

    let (code, _, err) = crosscheck(&["telemetry", "--db", a, "export", "--output", e]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = crosscheck(&["telemetry", "--db", t, "import", e]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 11, "one committed id per line:\n{out}");
    assert!(
        err.contains("11 new record(s), 0 already present, 3 new label(s)"),
        "{err}"
    );

    let (code, out, err) = crosscheck(&[
        "telemetry",
        "--db",
        t,
        "label",
        "taint-2",
        "--incorrect",
        "--note",
        "fp",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "labelled taint-2 incorrect");
    let (code, out, _) = crosscheck(&["telemetry", "--db", t, "label", "ast", "--correct"]);
    assert_eq!(
        (code, out.trim()),
        (Some(0), "labelled ast-1 correct"),
        "unique prefix"
    );
    let (code, _, err) = crosscheck(&["telemetry", "--db", t, "label", "taint", "--correct"]);
    assert_eq!(code, Some(2), "ambiguous prefix");
    assert!(err.contains("prefix of several record ids"), "{err}");

    let (code, csv, _) = crosscheck(&[
        "telemetry",
        "--db",
        t,
        "export",
        "--format",
        "csv",
        "--since",
        "2024-05-02",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        csv.lines().count(),
        1 + 10,
        "header and the records since May 2nd"
    );
    let (code, _, err) = crosscheck(&["telemetry", "--db", t, "export", "--since", "May 2nd"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--since"), "{err}");

    // The export feeds `crosscheck stats` directly, and agrees with the summary.
    let stats_input = dir.path().join("team.csv");
    std::fs::write(&stats_input, &csv).unwrap();
    let (code, stats, err) = crosscheck(&[
        "stats",
        "--input",
        stats_input.to_str().unwrap(),
        "--a",
        "llm_verdict",
        "--b",
        "analyzer_verdict",
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let stats: Value = serde_json::from_str(&stats).unwrap();
    let (_, summary, _) = crosscheck(&[
        "telemetry",
        "--db",
        t,
        "summary",
        "--format",
        "json",
        "--since",
        "2024-05-02",
    ]);
    let summary: Value = serde_json::from_str(&summary).unwrap();
    let pooled = &summary["total"]["llm_vs_analyzer"];
    assert_eq!(stats["n"], pooled["n"]);
    for key in ["po", "kappa", "ac1", "pabak", "f1"] {
        let (x, y) = (stats[key].as_f64().unwrap(), pooled[key].as_f64().unwrap());
        assert!((x - y).abs() < 1e-12, "{key}: stats {x} vs summary {y}");
    }
}

#[test]
fn the_cli_reports_a_store_it_cannot_open_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.db");
    std::fs::write(&bad, "not a database at all".repeat(100)).unwrap();
    let out = Command::new(bin())
        .args(["telemetry", "--db"])
        .arg(&bad)
        .arg("summary")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a readable SQLite database"), "{err}");
    assert!(out.stdout.is_empty());
    // The store directory comes from CROSSCHECK_DATA_DIR when --db is absent.
    let out = Command::new(bin())
        .args(["telemetry", "info"])
        .env("CROSSCHECK_DATA_DIR", dir.path().join("data"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(dir.path().join("data").join("crosscheck.db").is_file());
}
