//! OWASP Benchmark (Java) as a test: every test servlet plus the benchmark's helper classes
//! are analysed as one workspace; a test case counts as flagged for its category when a flow
//! of the matching sink kind ends in its file. Prints the per-category table (TP, FN, FP, TN,
//! TPR, FPR, Youden) and asserts floors this engine actually reaches.
//!
//! Gated on the data set: `../shared/datasets/owasp_benchmark_java` relative to the crate, or
//! `OWASP_DIR`. Without it the test passes with a note on stderr.
//!
//! The labels and the counting are `crosscheck::eval::labels`, shared with `crosscheck eval`
//! (which analyses each test file alone, without the helper classes).

use crate::common;
use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::taint::{analyze_taint, TaintSpecs};
use crosscheck::eval::labels::{
    flagged_kinds_by_test, parse_owasp_expected, BinaryCounts, OWASP_CATEGORIES,
};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn dataset() -> Option<PathBuf> {
    common::dataset(
        "owasp_benchmark_java",
        Some("OWASP_DIR"),
        "expectedresults-1.2.csv",
    )
}

/// Floors on Youden's index per category (measured values are printed; see the report).
const YOUDEN_FLOORS: &[(&str, f64)] = &[
    ("sqli", 0.5),
    ("cmdi", 0.5),
    ("pathtraver", 0.5),
    ("xss", 0.5),
    ("ldapi", 0.5),
    ("xpathi", 0.5),
];

fn java_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            java_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "java") {
            out.push(p);
        }
    }
}

#[test]
fn owasp_benchmark_injection_categories() {
    let Some(dir) = dataset() else {
        return;
    };
    let csv = std::fs::read_to_string(dir.join("expectedresults-1.2.csv")).unwrap();
    // test name -> (category, real vulnerability)
    let expected: BTreeMap<String, (String, bool)> = parse_owasp_expected(&csv)
        .into_iter()
        .filter(|c| OWASP_CATEGORIES.iter().any(|(k, _)| *k == c.category))
        .map(|c| (c.name, (c.category, c.vulnerable)))
        .collect();
    let mut files = Vec::new();
    java_files(&dir.join("testcode"), &mut files);
    java_files(&dir.join("helpers"), &mut files);
    let parsed: Vec<(String, ParsedFile)> = files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            (
                p.display().to_string(),
                ParsedFile::parse(Language::Java, text),
            )
        })
        .collect();
    let units: Vec<SourceUnit<'_>> = parsed
        .iter()
        .map(|(p, f)| SourceUnit {
            path: p.clone(),
            file: f,
        })
        .collect();
    let start = std::time::Instant::now();
    let result = analyze_taint(&units, None, None, &TaintSpecs::builtin(), &Cancel::never());
    let elapsed = start.elapsed();
    // test name -> sink kinds flagged in its file
    let flagged = flagged_kinds_by_test(&result.flows);
    eprintln!(
        "OWASP Benchmark: {} files analysed in {:.2?} ({} flows)",
        parsed.len(),
        elapsed,
        result.flows.len()
    );
    eprintln!("category     TP   FN   FP   TN    TPR    FPR  Youden");
    let mut failures = Vec::new();
    let mut all = BinaryCounts::default();
    let mut misses: Vec<String> = Vec::new();
    for (cat, kind) in OWASP_CATEGORIES {
        let mut c = BinaryCounts::default();
        for (name, (cc, real)) in &expected {
            if cc != cat {
                continue;
            }
            let hit = flagged.get(name).is_some_and(|k| k.contains(kind));
            c.add(hit, *real);
            if hit != *real {
                misses.push(format!("{} {cat} {name}", if hit { "FP" } else { "FN" }));
            }
        }
        let (tpr, fpr) = (c.tpr().unwrap_or(0.0), c.fpr().unwrap_or(0.0));
        let youden = tpr - fpr;
        eprintln!(
            "{cat:<11} {:>4} {:>4} {:>4} {:>4}  {tpr:.3}  {fpr:.3}  {youden:.3}",
            c.tp, c.fn_, c.fp, c.tn
        );
        all.merge(&c);
        let floor = YOUDEN_FLOORS
            .iter()
            .find(|(c, _)| *c == cat)
            .map(|(_, f)| *f)
            .unwrap_or(0.0);
        if youden < floor {
            failures.push(format!("{cat}: Youden {youden:.3} below floor {floor}"));
        }
    }
    let (tpr, fpr) = (all.tpr().unwrap_or(0.0), all.fpr().unwrap_or(0.0));
    eprintln!(
        "pooled      {:>4} {:>4} {:>4} {:>4}  {tpr:.3}  {fpr:.3}  {:.3}",
        all.tp,
        all.fn_,
        all.fp,
        all.tn,
        tpr - fpr
    );
    if std::env::var_os("OWASP_VERBOSE").is_some() {
        for m in &misses {
            eprintln!("{m}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
