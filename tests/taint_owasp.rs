//! OWASP Benchmark (Java) as a test: every test servlet plus the benchmark's helper classes
//! are analysed as one workspace; a test case counts as flagged for its category when a flow
//! of the matching sink kind ends in its file. Prints the per-category table (TP, FN, FP, TN,
//! TPR, FPR, Youden) and asserts floors this engine actually reaches.
//!
//! Gated on the data set: `../shared/datasets/owasp_benchmark_java` relative to the crate, or
//! `OWASP_DIR`. Without it the test passes with a note on stderr.

use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::taint::{analyze_taint, TaintSpecs};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn dataset() -> Option<PathBuf> {
    let dir = std::env::var_os("OWASP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/owasp_benchmark_java")
        });
    dir.join("expectedresults-1.2.csv").is_file().then_some(dir)
}

/// Benchmark category -> sink kind of the built-in Java spec.
const CATEGORIES: &[(&str, &str)] = &[
    ("sqli", "sql"),
    ("cmdi", "command"),
    ("pathtraver", "path"),
    ("xss", "xss"),
    ("ldapi", "ldap"),
    ("xpathi", "xpath"),
];

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
        eprintln!("OWASP Benchmark not found (set OWASP_DIR); skipped");
        return;
    };
    let csv = std::fs::read_to_string(dir.join("expectedresults-1.2.csv")).unwrap();
    // test name -> (category, real vulnerability)
    let mut expected: BTreeMap<String, (String, bool)> = BTreeMap::new();
    for line in csv.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if cols.len() >= 3 && CATEGORIES.iter().any(|(c, _)| *c == cols[1]) {
            expected.insert(
                cols[0].to_string(),
                (cols[1].to_string(), cols[2] == "true"),
            );
        }
    }
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
    let mut flagged: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &result.flows {
        let stem = Path::new(&f.sink.file)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        flagged.entry(stem).or_default().insert(f.sink.kind.clone());
    }
    eprintln!(
        "OWASP Benchmark: {} files analysed in {:.2?} ({} flows)",
        parsed.len(),
        elapsed,
        result.flows.len()
    );
    eprintln!("category     TP   FN   FP   TN    TPR    FPR  Youden");
    let mut failures = Vec::new();
    let (mut all_tp, mut all_fn, mut all_fp, mut all_tn) = (0, 0, 0, 0);
    let mut misses: Vec<String> = Vec::new();
    for (cat, kind) in CATEGORIES {
        let (mut tp, mut fneg, mut fp, mut tn) = (0usize, 0usize, 0usize, 0usize);
        for (name, (c, real)) in &expected {
            if c != cat {
                continue;
            }
            let hit = flagged.get(name).is_some_and(|k| k.contains(*kind));
            match (real, hit) {
                (true, true) => tp += 1,
                (true, false) => {
                    fneg += 1;
                    misses.push(format!("FN {cat} {name}"));
                }
                (false, true) => {
                    fp += 1;
                    misses.push(format!("FP {cat} {name}"));
                }
                (false, false) => tn += 1,
            }
        }
        let tpr = tp as f64 / (tp + fneg).max(1) as f64;
        let fpr = fp as f64 / (fp + tn).max(1) as f64;
        let youden = tpr - fpr;
        eprintln!("{cat:<11} {tp:>4} {fneg:>4} {fp:>4} {tn:>4}  {tpr:.3}  {fpr:.3}  {youden:.3}");
        all_tp += tp;
        all_fn += fneg;
        all_fp += fp;
        all_tn += tn;
        let floor = YOUDEN_FLOORS
            .iter()
            .find(|(c, _)| c == cat)
            .map(|(_, f)| *f)
            .unwrap_or(0.0);
        if youden < floor {
            failures.push(format!("{cat}: Youden {youden:.3} below floor {floor}"));
        }
    }
    let tpr = all_tp as f64 / (all_tp + all_fn).max(1) as f64;
    let fpr = all_fp as f64 / (all_fp + all_tn).max(1) as f64;
    eprintln!(
        "pooled      {all_tp:>4} {all_fn:>4} {all_fp:>4} {all_tn:>4}  {tpr:.3}  {fpr:.3}  {:.3}",
        tpr - fpr
    );
    if std::env::var_os("OWASP_VERBOSE").is_some() {
        for m in &misses {
            eprintln!("{m}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
