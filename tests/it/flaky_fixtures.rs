//! Fixture specs for the flaky-test root-cause analysis: every test function in
//! `tests/fixtures/flaky/` is preceded by a comment `expect: <category>` or `expect: none`
//! (the root cause a reviewer would name, or not flaky). The analysis must reproduce at
//! least [`MIN_ACCURACY`] of them and must never give a hint on a test annotated `none`.

use crosscheck::analysis::flaky::{analyze_source, Category, FlakyOptions};
use crosscheck::syntax::{Cancel, Language};
use std::path::{Path, PathBuf};

const MIN_ACCURACY: f64 = 0.9;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flaky");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| Language::from_path(p).is_some_and(crosscheck::analysis::flaky::supports))
        .collect();
    files.sort();
    files
}

/// `expect:` annotations by line: (line, Some(category) | None for `none`).
fn annotations(text: &str) -> Vec<(usize, Option<Category>)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let (_, rest) = l.split_once("expect:")?;
            let word = rest.trim();
            let cat = if word == "none" {
                None
            } else {
                Some(Category::from_name(word).unwrap_or_else(|| panic!("bad label {word:?}")))
            };
            Some((i + 1, cat))
        })
        .collect()
}

struct Outcome {
    file: String,
    test: String,
    expected: Option<Category>,
    got: Option<Category>,
}

fn run_all() -> Vec<Outcome> {
    let mut out = Vec::new();
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let lang = Language::from_path(&path).expect("a supported language");
        let report = analyze_source(lang, &text, &FlakyOptions::default(), &Cancel::never());
        let anns = annotations(&text);
        // Every annotation belongs to the first test starting after it.
        let mut used = vec![false; anns.len()];
        let mut prev_end = 0;
        for t in &report.tests {
            let idx = anns
                .iter()
                .position(|(l, _)| *l > prev_end && *l < t.line + 2);
            let expected = match idx {
                Some(i) => {
                    used[i] = true;
                    anns[i].1
                }
                None => panic!(
                    "{}: test {} has no expect: annotation",
                    path.display(),
                    t.name
                ),
            };
            prev_end = t.end_line;
            out.push(Outcome {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                test: t.name.clone(),
                expected,
                got: t.category,
            });
        }
        for (i, u) in used.iter().enumerate() {
            assert!(
                u,
                "{}: annotation at line {} matched no test",
                path.display(),
                anns[i].0
            );
        }
    }
    out
}

#[test]
fn fixture_annotations_are_reproduced() {
    let outcomes = run_all();
    assert!(
        outcomes.len() >= 40,
        "only {} annotated tests",
        outcomes.len()
    );
    let name = |c: Option<Category>| c.map(Category::name).unwrap_or("none");
    let mut correct = 0;
    for o in &outcomes {
        let ok = o.expected == o.got;
        correct += usize::from(ok);
        println!(
            "{} {}::{} expected {} got {}",
            if ok { "ok  " } else { "MISS" },
            o.file,
            o.test,
            name(o.expected),
            name(o.got)
        );
    }
    let accuracy = correct as f64 / outcomes.len() as f64;
    println!("fixtures: {correct}/{} = {accuracy:.3}", outcomes.len());
    assert!(
        accuracy >= MIN_ACCURACY,
        "accuracy {accuracy:.3} < {MIN_ACCURACY}"
    );
}

#[test]
fn tests_annotated_none_get_no_hint() {
    for o in run_all().iter().filter(|o| o.expected.is_none()) {
        assert_eq!(o.got, None, "{}::{} got a hint", o.file, o.test);
    }
}

#[test]
fn every_category_appears_in_the_fixtures() {
    let outcomes = run_all();
    for c in Category::ALL {
        assert!(
            outcomes.iter().any(|o| o.expected == Some(c)),
            "no fixture for {}",
            c.name()
        );
    }
}

#[test]
fn evidence_lines_fall_inside_the_file_and_name_the_cause() {
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let lines = text.lines().count();
        let lang = if path.extension().is_some_and(|e| e == "java") {
            Language::Java
        } else {
            Language::Python
        };
        let report = analyze_source(lang, &text, &FlakyOptions::default(), &Cancel::never());
        for t in &report.tests {
            if t.category.is_some() {
                assert!(!t.evidence.is_empty(), "{}: no evidence", t.name);
            } else {
                assert!(t.evidence.is_empty());
            }
            for e in &t.evidence {
                assert!(
                    e.line >= 1 && e.line <= lines,
                    "{}: line {}",
                    t.name,
                    e.line
                );
                assert!(!e.why.is_empty());
            }
        }
    }
}

#[test]
fn analysis_is_deterministic() {
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let lang = if path.extension().is_some_and(|e| e == "java") {
            Language::Java
        } else {
            Language::Python
        };
        let a = analyze_source(lang, &text, &FlakyOptions::default(), &Cancel::never());
        let b = analyze_source(lang, &text, &FlakyOptions::default(), &Cancel::never());
        assert_eq!(a, b);
    }
}
