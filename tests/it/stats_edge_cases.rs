//! Edge cases: degenerate tables, undefined coefficients, empty and malformed input, label
//! normalisation, skipped rows. Expected values are derived by hand in the comments.

use crate::stats_support;

use serde_json::Value;
use stats_support::{assert_close, fixture, num, stats, stats_json, temp_file};

fn notes(r: &Value) -> Vec<String> {
    r["notes"]
        .as_array()
        .expect("notes array")
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect()
}

fn has_note(r: &Value, prefix: &str) -> bool {
    notes(r).iter().any(|n| n.starts_with(prefix))
}

/// Five items, every one labelled positive by both raters (in assorted spellings):
/// Pe(kappa) = 1·1 = 1, so kappa and Scott's pi have denominator 0; AC1's Pe =
/// π₁(1-π₁) = 0, so AC1 = 1; PABAK = 2·1 - 1 = 1.
#[test]
fn all_agree_on_one_class_kappa_null_with_note_ac1_defined() {
    let r = stats_json(&fixture("all_agree_positive.csv"), "llm", "human", &[]);
    assert_eq!(num(&r, "n"), 5.0);
    assert_eq!(r["mode"], "binary");
    assert_eq!(num(&r, "po"), 1.0);
    assert!(r["kappa"].is_null());
    assert!(r["scott_pi"].is_null());
    assert!(has_note(&r, "kappa is null"), "notes: {:?}", notes(&r));
    assert!(has_note(&r, "scott_pi is null"));
    assert_eq!(num(&r, "ac1"), 1.0);
    assert_eq!(num(&r, "pabak"), 1.0);
    assert_eq!(num(&r, "precision"), 1.0);
    assert_eq!(num(&r, "recall"), 1.0);
    assert_eq!(num(&r, "f1"), 1.0);
    // No reference negatives: accuracy on negatives and the gap are undefined.
    assert!(r["acc_neg"].is_null());
    assert!(r["gap"].is_null());
    assert!(has_note(&r, "acc_neg is null"));
    // Every resample has one class too: kappa's interval is null, AC1's is [1, 1].
    assert!(r["ci"]["kappa"]["lo"].is_null());
    assert_eq!(r["ci"]["kappa"]["valid"], 0);
    assert_eq!(num(&r, "/ci/ac1/lo"), 1.0);
    assert_eq!(num(&r, "/ci/ac1/hi"), 1.0);
}

/// All items negative for both raters: precision, recall and F1 have zero denominators.
#[test]
fn all_negative_precision_recall_f1_null_with_notes() {
    let file = temp_file("all_negative.csv", b"a,b\n0,0\nno,no\nfalse,0\n");
    let r = stats_json(&file, "a", "b", &["--bootstrap", "0"]);
    assert!(r["precision"].is_null());
    assert!(r["recall"].is_null());
    assert!(r["f1"].is_null());
    assert!(has_note(&r, "precision is null"));
    assert!(has_note(&r, "recall is null"));
    assert!(has_note(&r, "f1 is null"));
    assert_eq!(num(&r, "acc_neg"), 1.0);
    assert!(r["ci"].is_null(), "--bootstrap 0 disables the intervals");
}

/// n = 1 with disagreement (a = 1, b = 0): Po = 0; kappa: Σ r_k c_k = 0, so
/// kappa = (0 - 0) / (1 - 0) = 0; Scott and AC1: π = (½, ½), Pe = ½, coefficient = -1;
/// PABAK = 2·0 - 1 = -1; precision = 0/1 = 0; recall: no reference positive, null;
/// F1 = 0 / (0 + 1 + 0) = 0.
#[test]
fn single_item_disagreement() {
    let r = stats_json(&fixture("single_item.csv"), "llm", "human", &[]);
    assert_eq!(num(&r, "n"), 1.0);
    assert_eq!(num(&r, "po"), 0.0);
    assert_eq!(num(&r, "kappa"), 0.0);
    assert_eq!(num(&r, "scott_pi"), -1.0);
    assert_eq!(num(&r, "ac1"), -1.0);
    assert_eq!(num(&r, "pabak"), -1.0);
    assert_eq!(num(&r, "precision"), 0.0);
    assert!(r["recall"].is_null());
    assert_eq!(num(&r, "f1"), 0.0);
}

/// n = 1 with agreement: kappa undefined (Pe = 1), AC1 = 1.
#[test]
fn single_item_agreement() {
    let file = temp_file("single_agree.csv", b"llm,human\nyes,1\n");
    let r = stats_json(&file, "llm", "human", &[]);
    assert!(r["kappa"].is_null());
    assert_eq!(num(&r, "ac1"), 1.0);
}

/// An empty file is a clear error with exit code 2.
#[test]
fn empty_input_is_an_error_exit_2() {
    let out = stats(&[
        "--input",
        &fixture("empty.csv"),
        "--a",
        "llm",
        "--b",
        "human",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("is empty"), "stderr: {}", out.stderr);
}

/// A header without data rows is an error too.
#[test]
fn header_only_input_is_an_error_exit_2() {
    let out = stats(&[
        "--input",
        &fixture("header_only.csv"),
        "--a",
        "llm",
        "--b",
        "human",
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no data rows"),
        "stderr: {}",
        out.stderr
    );
}

/// Rows exist but none has both labels: error, exit 2, and the skipped count is reported.
#[test]
fn no_complete_row_is_an_error_exit_2() {
    let file = temp_file("no_complete.csv", b"llm,human\n1,\n,0\n , \n");
    let out = stats(&["--input", &file, "--a", "llm", "--b", "human"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("3 row(s) skipped"),
        "stderr: {}",
        out.stderr
    );
}

/// Missing, null and empty labels are skipped and counted; JSON booleans, integers and
/// integral floats are binary tokens; spellings are case-insensitive.
/// Kept pairs (a, b): (1,1), (0,0), (1,1), (1,0) → TP 2, FP 1, FN 0, TN 1;
/// Po = 3/4; Pe = (3·2 + 1·2)/16 = ½ → kappa = ½; precision 2/3, recall 1, F1 = 4/5.
#[test]
fn jsonl_missing_labels_are_skipped_and_counted() {
    let r = stats_json(&fixture("labels_mixed.jsonl"), "llm", "human", &[]);
    assert_eq!(r["mode"], "binary");
    assert_eq!(num(&r, "n"), 4.0);
    assert_eq!(num(&r, "skipped"), 4.0);
    assert_close(num(&r, "po"), 0.75, 1e-12, "po");
    assert_close(num(&r, "kappa"), 0.5, 1e-12, "kappa");
    assert_close(num(&r, "precision"), 2.0 / 3.0, 1e-12, "precision");
    assert_eq!(num(&r, "recall"), 1.0);
    assert_close(num(&r, "f1"), 0.8, 1e-12, "f1");
}

/// A label outside the declared categories is an error naming the line, the label and the
/// column; exit 2.
#[test]
fn bad_label_against_declared_categories_exit_2() {
    let out = stats(&[
        "--input",
        &fixture("three_tier_bad_label.csv"),
        "--a",
        "llm",
        "--b",
        "human",
        "--categories",
        "pass,minor,fail",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("line 4"), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("\"fial\""), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("\"llm\""), "stderr: {}", out.stderr);
}

/// Without declared categories, a non-binary label turns the table multi-class (with a note)
/// instead of being silently coerced.
#[test]
fn undeclared_non_binary_label_switches_to_multiclass_with_note() {
    let file = temp_file("maybe.csv", b"llm,human\nyes,yes\nmaybe,no\nno,no\n");
    let r = stats_json(&file, "llm", "human", &[]);
    assert_eq!(r["mode"], "multiclass");
    assert_eq!(num(&r, "q"), 3.0);
    assert!(r["precision"].is_null());
    assert!(has_note(&r, "labels are not all binary"));
}

/// Declared binary categories in any spelling keep the binary space; q stays 2.
#[test]
fn declared_binary_categories_keep_binary_mode() {
    let r = stats_json(
        &fixture("wikipedia_kappa.csv"),
        "rater_a",
        "rater_b",
        &["--categories", "no,yes"],
    );
    assert_eq!(r["mode"], "binary");
    assert_close(num(&r, "kappa"), 0.4, 1e-12, "kappa");
}

/// Unknown column: exit 2, listing the available columns.
#[test]
fn missing_column_exit_2() {
    let out = stats(&[
        "--input",
        &fixture("wikipedia_kappa.csv"),
        "--a",
        "rater_a",
        "--b",
        "nope",
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no column \"nope\""),
        "stderr: {}",
        out.stderr
    );
    assert!(out.stderr.contains("rater_a"), "stderr: {}", out.stderr);
}

/// Missing --a / --b, unreadable file, malformed JSONL: exit 2 with a message, never a panic.
#[test]
fn usage_and_parse_errors_exit_2() {
    let out = stats(&["--input", &fixture("wikipedia_kappa.csv"), "--a", "rater_a"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--b"), "stderr: {}", out.stderr);

    let out = stats(&["--input", "/nonexistent/labels.csv", "--a", "x", "--b", "y"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot read"), "stderr: {}", out.stderr);

    let file = temp_file("broken.jsonl", b"{\"a\": 1, \"b\": 0}\n{\"a\": 1, \"b\n");
    let out = stats(&["--input", &file, "--a", "a", "--b", "b"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("line 2"), "stderr: {}", out.stderr);

    let file = temp_file("list_label.jsonl", b"{\"a\": [1], \"b\": 0}\n");
    let out = stats(&["--input", &file, "--a", "a", "--b", "b"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("holds a list"),
        "stderr: {}",
        out.stderr
    );
}

/// Empty --categories and duplicate categories are rejected.
#[test]
fn invalid_declared_categories_exit_2() {
    let f = fixture("three_tier.csv");
    let out = stats(&[
        "--input",
        &f,
        "--a",
        "llm",
        "--b",
        "human",
        "--categories",
        "pass,pass,fail",
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("declared twice"),
        "stderr: {}",
        out.stderr
    );
    let out = stats(&[
        "--input",
        &f,
        "--a",
        "llm",
        "--b",
        "human",
        "--categories",
        ",",
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no categories"),
        "stderr: {}",
        out.stderr
    );
}

/// Hostile inputs: 300-deep nested JSON, a 4 MB one-line cell, binary garbage. None panics;
/// each yields a report or exit code 2.
#[test]
fn hostile_inputs_never_panic() {
    let deep = format!(
        "{{\"a\": {}1{}, \"b\": 1}}\n",
        "[".repeat(300),
        "]".repeat(300)
    );
    let out = stats(&[
        "--input",
        &temp_file("deep.jsonl", deep.as_bytes()),
        "--a",
        "a",
        "--b",
        "b",
    ]);
    assert_eq!(out.code, 2, "stderr: {}", out.stderr);

    let long = format!("a,b\n{},1\n1,1\n", "1+".repeat(2 * 1024 * 1024));
    let out = stats(&[
        "--input",
        &temp_file("long.csv", long.as_bytes()),
        "--a",
        "a",
        "--b",
        "b",
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    let r = out.json();
    assert_eq!(r["mode"], "multiclass");
    // The text table and the notes shorten the label instead of echoing 4 MB.
    let long_file = temp_file("long_text.csv", long.as_bytes());
    let text = stats(&[
        "--input",
        &long_file,
        "--a",
        "a",
        "--b",
        "b",
        "--bootstrap",
        "0",
    ]);
    assert_eq!(text.code, 0);
    assert!(
        text.stdout.len() < 10_000,
        "text output is {} bytes",
        text.stdout.len()
    );

    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let out = stats(&[
        "--input",
        &temp_file("garbage.bin", &garbage),
        "--a",
        "a",
        "--b",
        "b",
    ]);
    assert_eq!(out.code, 2, "stderr: {}", out.stderr);
}
