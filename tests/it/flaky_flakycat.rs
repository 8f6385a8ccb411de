//! FlakyCat evaluation of the deterministic flaky-test root-cause analysis.
//!
//! Reads `flakycat_v0.jsonl` from `CARGO_MANIFEST_DIR/../shared/datasets/flakycat` at run time
//! (never copied into the project): 451 Java test method bodies, all flaky, each with one of
//! the 13 categories. Each body is wrapped in a class (`class FlakyCatCase { ... }`) and
//! analysed with every method treated as a test; the prediction is the outermost method's
//! category (no category counts as wrong). Two modes: the default (a hint needs a score of
//! `MIN_SCORE`, as for any test in an editor) and `known_flaky` (FlakyCat's setting: every
//! test is known to be flaky, so the strongest signal names the cause). Prints, per mode,
//! accuracy, macro F1 over the 13 categories and per-category precision/recall/F1:
//!
//! ```text
//! cargo test --test flaky_flakycat -- --nocapture
//! ```

use crate::common;
use crosscheck::analysis::flaky::{analyze_source, Category, FlakyOptions};
use crosscheck::syntax::{Cancel, Language};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Floors a bit below the measured figures (see the report printed by the test): (accuracy,
/// macro F1) for the default mode and for `known_flaky`.
const FLOORS: (f64, f64) = (0.45, 0.33);
const KNOWN_FLAKY_FLOORS: (f64, f64) = (0.50, 0.35);

fn dataset() -> Option<PathBuf> {
    common::dataset("flakycat", None, "flakycat_v0.jsonl").map(|d| d.join("flakycat_v0.jsonl"))
}

fn predict(code: &str, known_flaky: bool) -> Option<Category> {
    analyse(code, known_flaky).and_then(|t| t.category)
}

fn analyse(code: &str, known_flaky: bool) -> Option<crosscheck::analysis::flaky::FlakyTest> {
    let wrapped = crosscheck::eval::adapters::wrap_flakycat(code);
    let report = analyze_source(
        Language::Java,
        &wrapped,
        &FlakyOptions {
            every_function_is_a_test: true,
            known_flaky,
        },
        &Cancel::never(),
    );
    // The outermost method: the first in document order with the widest span.
    report
        .tests
        .iter()
        .max_by_key(|t| (t.end_line - t.line, std::cmp::Reverse(t.line)))
        .cloned()
}

#[test]
fn flakycat_accuracy_and_macro_f1() {
    evaluate(false, FLOORS);
}

#[test]
fn flakycat_known_flaky_accuracy_and_macro_f1() {
    evaluate(true, KNOWN_FLAKY_FLOORS);
}

fn evaluate(known_flaky: bool, (accuracy_floor, macro_f1_floor): (f64, f64)) {
    let Some(path) = dataset() else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("readable dataset");
    let mut gold_pred: Vec<(Category, Option<Category>)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        let label = v["category"].as_str().unwrap_or_default();
        let gold = Category::from_name(label)
            .unwrap_or_else(|| panic!("unknown FlakyCat label {label:?}"));
        let code = v["code"].as_str().unwrap_or_default();
        let pred = predict(code, known_flaky);
        // FLAKYCAT_DUMP=<category>: print the misses of that gold category with their signals.
        if let Ok(dump) = std::env::var("FLAKYCAT_DUMP") {
            if Category::from_name(&dump) == Some(gold) && pred != Some(gold) {
                let t = analyse(code, known_flaky);
                println!("--- {} -> {:?}", v["test_id"], pred.map(Category::name));
                for s in t.iter().flat_map(|t| &t.signals) {
                    println!(
                        "    {} {} w{} l{}",
                        s.category.name(),
                        s.rule,
                        s.weight,
                        s.line
                    );
                }
            }
        }
        gold_pred.push((gold, pred));
    }
    assert_eq!(gold_pred.len(), 451, "FlakyCat v0 has 451 tests");
    let n = gold_pred.len() as f64;
    let correct = gold_pred.iter().filter(|(g, p)| Some(*g) == *p).count();
    let accuracy = correct as f64 / n;
    let none = gold_pred.iter().filter(|(_, p)| p.is_none()).count();
    let mut macro_f1 = 0.0;
    let mode = if known_flaky {
        "--known-flaky"
    } else {
        "default"
    };
    println!("FlakyCat v0, deterministic analysis (--no-llm, {mode}): {correct}/{} correct, {none} without a category", gold_pred.len());
    println!(
        "{:<24} {:>5} {:>5} {:>6} {:>6} {:>6}",
        "category", "gold", "pred", "P", "R", "F1"
    );
    let mut confusion: BTreeMap<(Category, Option<Category>), usize> = BTreeMap::new();
    for (g, p) in &gold_pred {
        *confusion.entry((*g, *p)).or_insert(0) += 1;
    }
    for c in Category::ALL {
        let tp = gold_pred
            .iter()
            .filter(|(g, p)| *g == c && *p == Some(c))
            .count() as f64;
        let gold = gold_pred.iter().filter(|(g, _)| *g == c).count() as f64;
        let pred = gold_pred.iter().filter(|(_, p)| *p == Some(c)).count() as f64;
        let precision = if pred > 0.0 { tp / pred } else { 0.0 };
        let recall = if gold > 0.0 { tp / gold } else { 0.0 };
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        macro_f1 += f1;
        println!(
            "{:<24} {:>5} {:>5} {:>6.3} {:>6.3} {:>6.3}",
            c.name(),
            gold,
            pred,
            precision,
            recall,
            f1
        );
    }
    macro_f1 /= Category::ALL.len() as f64;
    println!("accuracy {accuracy:.3}  macro F1 {macro_f1:.3}");
    if std::env::var_os("FLAKYCAT_CONFUSION").is_some() {
        for ((g, p), k) in &confusion {
            println!(
                "  {:<24} -> {:<24} {k}",
                g.name(),
                p.map(Category::name).unwrap_or("none")
            );
        }
    }
    assert!(
        accuracy >= accuracy_floor,
        "{mode}: accuracy {accuracy:.3} below {accuracy_floor}"
    );
    assert!(
        macro_f1 >= macro_f1_floor,
        "{mode}: macro F1 {macro_f1:.3} below {macro_f1_floor}"
    );
}
