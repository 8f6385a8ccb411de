//! PyT's example programs as a test: each example PyT's own test suite checks is analysed
//! (with the other files of its directory, for cross-file imports) under a user
//! specification that mirrors PyT's default trigger words (`tests/fixtures/taint/
//! pyt_trigger_words.toml`; the Django test adds every parameter as a source, like PyT's
//! Django adaptor). PyT counts sanitised vulnerabilities too, so the count compared is
//! unsanitised plus sanitised flows that start or end in the example file.
//!
//! Prints expected vs found per example; asserts that no example PyT calls clean is flagged
//! and that enough examples match exactly. Gated on `../shared/datasets/pyt_examples` (or
//! `PYT_DIR`).

use crate::common;
use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::taint::{analyze_taint, Provenance, TaintSpec, TaintSpecs};
use crosscheck::eval::labels::{parse_pyt_counts, pyt_vulnerabilities, PYT_POSITION_CLASS};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::path::{Path, PathBuf};

fn dataset() -> Option<PathBuf> {
    common::dataset(
        "pyt_examples",
        Some("PYT_DIR"),
        "expected_vulnerability_counts.csv",
    )
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/taint")
            .join(name),
    )
    .unwrap()
}

fn specs(django: bool) -> TaintSpecs {
    let mut python = TaintSpec::from_toml(&fixture("pyt_trigger_words.toml"), Provenance::User)
        .expect("PyT trigger spec parses");
    if django {
        python.merge(
            TaintSpec::from_toml(&fixture("pyt_django_params.toml"), Provenance::User)
                .expect("Django spec parses"),
        );
    }
    let mut s = TaintSpecs::default();
    s.by_language.insert(Language::Python, python);
    s
}

/// Minimum number of examples whose count matches PyT's exactly (out of 35 checked).
const MIN_EXACT: usize = 35;

#[test]
fn pyt_examples_match_expected_counts() {
    let Some(dir) = dataset() else {
        return;
    };
    let csv = std::fs::read_to_string(dir.join("expected_vulnerability_counts.csv")).unwrap();
    let mut exact = 0;
    let mut checked = 0;
    let mut clean_flagged = Vec::new();
    eprintln!("expected found  example (test)");
    for case in parse_pyt_counts(&csv) {
        let (example, expected, test, class) = (
            case.file.as_str(),
            case.count,
            case.test.as_str(),
            case.class.as_str(),
        );
        // PyT's position test uses a different trigger file (argument positions).
        if class == PYT_POSITION_CLASS {
            continue;
        }
        let path = dir.join(example);
        let folder = path.parent().unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        files.sort();
        let parsed: Vec<(String, ParsedFile)> = files
            .iter()
            .map(|p| {
                (
                    p.strip_prefix(folder).unwrap().display().to_string(),
                    ParsedFile::parse(Language::Python, std::fs::read_to_string(p).unwrap()),
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
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let result = analyze_taint(
            &units,
            None,
            None,
            &specs(class == "EngineDjangoTest"),
            &Cancel::never(),
        );
        let found = pyt_vulnerabilities(&result, &name).len();
        checked += 1;
        if found == expected {
            exact += 1;
        }
        if expected == 0 && found > 0 {
            clean_flagged.push(example.to_string());
        }
        let mark = if found == expected { " " } else { "*" };
        eprintln!("{mark}{expected:>7} {found:>5}  {example} ({test})");
    }
    eprintln!("exact matches: {exact}/{checked}");
    assert!(
        clean_flagged.is_empty(),
        "examples PyT calls clean were flagged: {clean_flagged:?}"
    );
    assert!(exact >= MIN_EXACT, "only {exact}/{checked} exact matches");
}
