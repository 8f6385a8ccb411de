//! SecuriBench Micro as a test: all 123 servlets analysed as one workspace. A flow whose sink
//! line carries a `/* BAD */` comment is a true positive; a flow ending on any other line is a
//! false positive. Prints recall over the BAD lines, false-positive lines, and how many of the
//! 15 vulnerability-free tests are flagged, per group; asserts floors this engine reaches.
//!
//! Gated on `../shared/datasets/securibench_micro` (or `SECURIBENCH_DIR`).

use crate::common;
use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::taint::{analyze_taint, TaintSpecs};
use crosscheck::eval::labels::sink_line_labels;
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn dataset() -> Option<PathBuf> {
    common::dataset(
        "securibench_micro",
        Some("SECURIBENCH_DIR"),
        "testcases.csv",
    )
}

/// Floors (measured values are printed by the test).
const MIN_RECALL: f64 = 0.9;
const MAX_CLEAN_TESTS_FLAGGED: usize = 5;

#[test]
fn securibench_micro_recall_and_false_positives() {
    let Some(dir) = dataset() else {
        return;
    };
    let csv = std::fs::read_to_string(dir.join("testcases.csv")).unwrap();
    struct Case {
        group: String,
        vulns: usize,
        bad_lines: BTreeSet<usize>,
    }
    let mut cases: BTreeMap<String, Case> = BTreeMap::new();
    let mut parsed: Vec<(String, ParsedFile)> = Vec::new();
    for line in csv.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() < 3 {
            continue;
        }
        let path = dir.join(cols[0]);
        let text = std::fs::read_to_string(&path).unwrap();
        let bad_lines = sink_line_labels(&text).bad;
        cases.insert(
            cols[0].to_string(),
            Case {
                group: cols[1].to_string(),
                vulns: cols[2].parse().unwrap_or(0),
                bad_lines,
            },
        );
        parsed.push((cols[0].to_string(), ParsedFile::parse(Language::Java, text)));
    }
    for extra in ["BasicTestCase.java", "MicroTestCase.java"] {
        let p = dir.join("src/securibench/micro").join(extra);
        if let Ok(text) = std::fs::read_to_string(&p) {
            parsed.push((extra.to_string(), ParsedFile::parse(Language::Java, text)));
        }
    }
    let units: Vec<SourceUnit<'_>> = parsed
        .iter()
        .map(|(p, f)| SourceUnit {
            path: p.clone(),
            file: f,
        })
        .collect();
    let result = analyze_taint(&units, None, None, &TaintSpecs::builtin(), &Cancel::never());
    let mut sink_lines: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for f in &result.flows {
        sink_lines
            .entry(f.sink.file.as_str())
            .or_default()
            .insert(f.sink.line);
    }
    // group -> (bad lines, found, fp lines, clean tests, clean flagged)
    let mut groups: BTreeMap<&str, [usize; 5]> = BTreeMap::new();
    let mut missed = Vec::new();
    let mut false_pos = Vec::new();
    for (file, case) in &cases {
        let lines = sink_lines.get(file.as_str()).cloned().unwrap_or_default();
        let g = groups.entry(case.group.as_str()).or_default();
        g[0] += case.bad_lines.len();
        for l in &case.bad_lines {
            if lines.contains(l) {
                g[1] += 1;
            } else {
                missed.push(format!("{file}:{l}"));
            }
        }
        for l in lines.difference(&case.bad_lines) {
            g[2] += 1;
            false_pos.push(format!("{file}:{l}"));
        }
        if case.vulns == 0 {
            g[3] += 1;
            if !lines.is_empty() {
                g[4] += 1;
            }
        }
    }
    eprintln!("group            BAD found  recall  FP-lines  clean-flagged");
    let mut total = [0usize; 5];
    for (g, v) in &groups {
        for i in 0..5 {
            total[i] += v[i];
        }
        eprintln!(
            "{g:<16} {:>3} {:>5}  {:>6.3}  {:>8}  {}/{}",
            v[0],
            v[1],
            v[1] as f64 / v[0].max(1) as f64,
            v[2],
            v[4],
            v[3]
        );
    }
    let recall = total[1] as f64 / total[0].max(1) as f64;
    eprintln!(
        "total            {:>3} {:>5}  {:>6.3}  {:>8}  {}/{}",
        total[0], total[1], recall, total[2], total[4], total[3]
    );
    if std::env::var_os("SECURIBENCH_VERBOSE").is_some() {
        for m in &missed {
            eprintln!("missed {m}");
        }
        for f in &false_pos {
            eprintln!("false positive {f}");
        }
    }
    assert!(
        recall >= MIN_RECALL,
        "recall {recall:.3} below {MIN_RECALL}"
    );
    assert!(
        total[4] <= MAX_CLEAN_TESTS_FLAGGED,
        "{} clean tests flagged (at most {MAX_CLEAN_TESTS_FLAGGED})",
        total[4]
    );
}
