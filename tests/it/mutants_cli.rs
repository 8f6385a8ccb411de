//! `crosscheck mutants` through the real binary on hand-written fixtures
//! (`tests/fixtures/mutants/`): a MutantBench-format folder (Python, C and Java mutants with
//! labels, plus hostile rows), a cargo-mutants `outcomes.json`, a mutmut 3 `mutants/` folder, a
//! mutmut 2 cache built here, and a PIT `mutations.xml`. All runs are `--no-llm`.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

fn fixtures() -> PathBuf {
    common::root().join("tests/fixtures/mutants")
}

fn run_json(args: &[&str]) -> Value {
    let out = common::run_with_deadline(args, &fixtures(), Duration::from_secs(600));
    assert!(
        out.status.success(),
        "crosscheck {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// The MutantBench fixture, run once for all the tests that read it.
fn mutantbench() -> &'static Value {
    static RUN: OnceLock<Value> = OnceLock::new();
    RUN.get_or_init(|| {
        run_json(&[
            "mutants",
            "--mutantbench",
            "mutantbench",
            "--no-llm",
            "--trials",
            "100",
        ])
    })
}

fn mutant<'a>(out: &'a Value, id: &str) -> &'a Value {
    out["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no mutant {id} in {out:#}"))
}

fn notes(m: &Value) -> String {
    m["notes"].to_string()
}

#[test]
fn commuted_integer_addition_is_proved_equivalent() {
    let m = mutant(mutantbench(), "py-commute");
    assert_eq!(m["verdict"], "equivalent");
    assert_eq!(m["method"], "normalisation");
    assert_eq!(m["tier"], "confirmed");
    assert_eq!(m["function"], "add");
}

#[test]
fn returning_the_argument_instead_of_the_limit_is_refuted_with_a_counterexample() {
    let m = mutant(mutantbench(), "py-return");
    assert_eq!(m["verdict"], "not_equivalent");
    // Found by the bounded symbolic check's model, then executed.
    assert_eq!(m["method"], "symbolic", "{m}");
    let c = &m["counterexample"];
    let x = c["inputs"][0].as_i64().expect("an integer input");
    assert!(x > 10, "only inputs above LIMIT tell them apart: {c}");
    assert_eq!(c["a"], 10);
    assert_eq!(c["b"], x);
}

#[test]
fn classic_boundary_mutant_of_a_clamp_is_bounded_equivalent() {
    // Loop-free integer code: the bounded check covers every input, and the trials agree.
    let m = mutant(mutantbench(), "py-boundary-equivalent");
    assert_eq!(m["verdict"], "bounded_equivalent", "{m}");
    assert_eq!(m["tier"], "analyzer-only", "{m}");
    assert!(m["trials"].as_u64().unwrap() >= 50);
    assert_eq!(m["counterexample"], Value::Null);
}

#[test]
fn x_times_two_and_x_plus_x_are_not_refuted() {
    let m = mutant(mutantbench(), "py-double");
    assert!(
        matches!(
            m["verdict"].as_str(),
            Some("equivalent" | "bounded_equivalent")
        ),
        "{m}"
    );
}

#[test]
fn c_mutants_compile_under_ubsan_and_are_classified() {
    let eq = mutant(mutantbench(), "c-boundary-equivalent");
    assert_eq!(eq["verdict"], "bounded_equivalent", "{eq}");
    let neq = mutant(mutantbench(), "c-swap");
    assert_eq!(neq["verdict"], "not_equivalent", "{neq}");
    let c = &neq["counterexample"];
    let (a, b) = (
        c["inputs"][0].as_i64().unwrap(),
        c["inputs"][1].as_i64().unwrap(),
    );
    assert!(a > b, "the swapped branch runs only when a > b: {c}");
    assert_eq!(c["a"].as_i64().unwrap(), -c["b"].as_i64().unwrap());
}

#[test]
fn a_c_function_named_main_is_tested_as_a_function_not_the_harness_entry() {
    // Calling `main` from the harness used to re-enter the harness, which forks per input.
    let m = mutant(mutantbench(), "c-main-min");
    assert_eq!(m["function"], "main");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    let c = &m["counterexample"];
    assert_ne!(c["inputs"][0], c["inputs"][1], "{c}");
}

/// A mutant of a `main` that reads `scanf` formats is compared as whole programs, on inputs
/// shaped by those formats; so is a mutant of a helper that cannot be called alone (its
/// struct holds a pointer).
#[test]
fn c_programs_that_read_scanf_formats_are_compared_whole() {
    let out = mutantbench();
    let m = mutant(out, "c-main-reads-scanf");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    assert_eq!(m["function"], "main");
    let c = &m["counterexample"];
    assert!(c["input"].as_str().is_some_and(|i| i.contains(',')), "{c}");
    assert_ne!(c["a"]["stdout"], c["b"]["stdout"], "{c}");
    assert!(
        notes(m).contains("generated from A's reads (1 scanf read(s))"),
        "{m}"
    );
    let m = mutant(out, "c-main-overwritten-initialiser");
    assert_eq!(m["verdict"], "likely_equivalent", "{m}");
    let m = mutant(out, "c-helper-seen-through-main");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    assert!(
        notes(m).contains("compared through the whole program"),
        "{m}"
    );
    assert!(notes(m).contains("pointer parameter `d`"), "{m}");
}

#[test]
fn a_program_that_reads_nothing_is_evidence_only_when_its_run_calls_the_mutant() {
    // `ledger.c` reads no input; its functions take `struct node **` (no harness input).
    let out = mutantbench();
    let m = mutant(out, "c-self-test-reaches-the-mutant");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    assert_eq!(m["function"], "main");
    assert!(notes(m).contains("calls the mutated function"), "{m}");
    let c = &m["counterexample"];
    assert_eq!(c["a"]["stdout"], "total 10\n", "{c}");
    assert_eq!(c["b"]["stdout"], "total -10\n", "{c}");
    let m = mutant(out, "c-self-test-same-output");
    assert!(
        ["equivalent", "likely_equivalent"].contains(&m["verdict"].as_str().unwrap()),
        "{m}"
    );
    assert!(notes(m).contains("calls the mutated function"), "{m}");
    // `main` never calls `largest`, and nothing else names it: the mutant is dead code.
    let m = mutant(out, "c-self-test-never-calls-the-mutant");
    assert_eq!(m["verdict"], "equivalent", "{m}");
    assert_eq!(m["method"], "unreachable", "{m}");
    assert_eq!(m["function"], "largest", "{m}");
    assert!(notes(m).contains("`largest` is never run"), "{m}");
}

/// A mutant of a helper is a change of its program: `steer.c`'s `main` reaches `above` only
/// through `advise`, which never asks it when the altitudes are equal, so `<` -> `<=` in
/// `above` is no difference of the program though it is one of `above`.
#[test]
fn a_helper_is_compared_through_the_function_main_calls() {
    let out = mutantbench();
    let m = mutant(out, "c-masked-by-its-only-caller");
    assert!(
        ["bounded_equivalent", "equivalent"].contains(&m["verdict"].as_str().unwrap()),
        "{m}"
    );
    assert_eq!(m["function"], "advise", "{m}");
    assert!(
        notes(m).contains("`above` compared through `advise`"),
        "{m}"
    );
    let m = mutant(out, "c-seen-through-its-only-caller");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    assert_eq!(m["function"], "advise", "{m}");
    let c = &m["counterexample"];
    assert_eq!(c["a"]["return"], 2, "{c}");
    assert_eq!(c["b"]["return"], 0, "{c}");
}

#[test]
fn java_mutant_is_refuted() {
    let m = mutant(mutantbench(), "java-sign");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    assert_eq!(m["function"], "Calc.sub");
}

#[test]
fn a_diff_that_does_not_apply_is_unknown_with_the_reason() {
    let m = mutant(mutantbench(), "py-not-applying");
    assert_eq!(m["verdict"], "unknown");
    assert!(notes(m).contains("does not apply"), "{m}");
}

#[test]
fn a_mutant_outside_any_function_is_unknown() {
    let m = mutant(mutantbench(), "py-outside");
    assert_eq!(m["verdict"], "unknown");
    assert!(notes(m).contains("not inside a function"), "{m}");
}

#[test]
fn a_binary_program_is_unknown() {
    let m = mutant(mutantbench(), "py-binary");
    assert_eq!(m["verdict"], "unknown");
    assert!(notes(m).contains("binary"), "{m}");
}

#[test]
fn a_java_private_method_is_compared_through_the_public_method_that_calls_it() {
    // `total` takes an `Iterator`, which no harness builds: alone it could not be run; its
    // class reaches it only through `sum`, which takes an `int[]`.
    let m = mutant(mutantbench(), "java-private-helper");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    assert_eq!(m["function"], "Tally.sum", "{m}");
    assert!(notes(m).contains("`total` is private"), "{m}");
    let c = &m["counterexample"];
    assert_ne!(c["a"], c["b"], "{c}");
}

#[test]
fn a_self_test_main_that_builds_its_own_argv_is_run_as_a_program() {
    // `setup` takes an `int *` of unknown length: it cannot be called alone. `main()` has no
    // parameters, so the `argc` in its body is a local, not a command line the shape of the
    // program's reads would have to capture: its one run calls `setup`.
    let eq = mutant(mutantbench(), "c-self-test-argc-equivalent");
    assert_eq!(eq["verdict"], "likely_equivalent", "{eq}");
    assert_eq!(eq["function"], "main", "{eq}");
    assert!(notes(eq).contains("calls the mutated function"), "{eq}");
    let neq = mutant(mutantbench(), "c-self-test-argc-option");
    assert_eq!(neq["verdict"], "not_equivalent", "{neq}");
    assert_eq!(neq["method"], "differential", "{neq}");
}

#[test]
fn a_java_null_check_removed_is_refuted_by_a_null_array() {
    let m = mutant(mutantbench(), "java-null-check");
    assert_eq!(m["verdict"], "not_equivalent", "{m}");
    let c = &m["counterexample"];
    assert_eq!(c["inputs"][0], Value::Null, "{c}");
    assert_eq!(c["a"]["return"], 0, "{c}");
    assert!(c["b"]["exception"]
        .as_str()
        .is_some_and(|e| e.contains("NullPointerException")));
}

#[test]
fn a_line_that_is_not_json_and_a_path_escaping_programs_are_unknown() {
    let bad = mutant(mutantbench(), "line 8");
    assert!(notes(bad).contains("not a JSON object"), "{bad}");
    let escape = mutant(mutantbench(), "py-escape");
    assert_eq!(escape["verdict"], "unknown");
    assert!(notes(escape).contains("bad program name"), "{escape}");
}

#[test]
fn summary_reports_accuracy_per_class_and_the_decision_gap() {
    let s = &mutantbench()["summary"];
    assert_eq!(s["count"], 25);
    let d = &s["deterministic"];
    // 24 labelled rows (the non-JSON line has no label): 11 equivalent, 13 not.
    assert_eq!(d["labelled"], 24);
    assert_eq!(d["equivalent"]["total"], 11);
    assert_eq!(d["non_equivalent"]["total"], 13);
    // Right: py-commute, py-boundary-equivalent, py-double, c-boundary-equivalent,
    // c-main-overwritten-initialiser, c-self-test-same-output, c-masked-by-its-only-caller,
    // c-self-test-never-calls-the-mutant, c-self-test-argc-equivalent (9 of 11); py-return,
    // c-swap, java-sign, c-main-min, c-main-reads-scanf, c-helper-seen-through-main,
    // c-self-test-reaches-the-mutant, c-seen-through-its-only-caller, java-private-helper,
    // java-null-check, c-self-test-argc-option (11 of 13). The hostile rows are unknown and
    // count as wrong.
    assert_eq!(d["equivalent"]["right"], 9);
    assert_eq!(d["non_equivalent"]["right"], 11);
    let gap = d["decision_gap"].as_f64().unwrap();
    assert!((gap - (11.0 / 13.0 - 9.0 / 11.0)).abs() < 1e-9, "{gap}");
    assert!((d["accuracy"].as_f64().unwrap() - 20.0 / 24.0).abs() < 1e-9);
    assert_eq!(d["unknown"], 4);
    // py-commute (a normalisation proof) and the dead-code mutant.
    assert_eq!(d["proved"], 2);
    assert_eq!(d["proved_on_non_equivalent"], 0);
    assert_eq!(s["hybrid"], Value::Null, "--no-llm has no hybrid column");
    assert_eq!(s["by_language"]["c"]["deterministic"]["labelled"], 13);
    assert!(s["mutants_per_minute"].as_f64().unwrap() > 0.0);
}

#[test]
fn language_filter_sample_and_limit_select_deterministically() {
    let args = [
        "mutants",
        "--mutantbench",
        "mutantbench",
        "--no-llm",
        "--language",
        "python",
        "--sample",
        "3",
        "--seed",
        "7",
        "--trials",
        "20",
    ];
    let ids = |v: &Value| -> Vec<String> {
        v["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    let first = ids(&run_json(&args));
    assert_eq!(first.len(), 3);
    assert_eq!(first, ids(&run_json(&args)), "same seed, same sample");
    let mut limited = args.to_vec();
    limited.extend(["--limit", "1"]);
    assert_eq!(ids(&run_json(&limited)), first[..1].to_vec());
}

#[test]
fn cargo_mutants_lists_only_missed_mutants_and_explains_rust() {
    let out = run_json(&[
        "mutants",
        "--cargo-mutants",
        "cargo/mutants.out/outcomes.json",
        "--no-llm",
    ]);
    let ms = out["mutants"].as_array().unwrap();
    assert_eq!(
        ms.len(),
        2,
        "the caught mutant and the baseline are skipped"
    );
    let fnvalue = mutant(&out, "src/lib.rs:2:5: replace add -> i32 with 0");
    assert_eq!(fnvalue["verdict"], "unknown");
    // The diff from diff_path applied; Rust itself is what cannot be run.
    assert!(
        notes(fnvalue).contains("language not supported"),
        "{fnvalue}"
    );
    let stale = mutant(&out, "src/lib.rs:6:7: replace > with >= in is_positive");
    assert!(notes(stale).contains("does not apply"), "{stale}");
}

#[test]
fn mutmut3_survivors_are_rebuilt_and_classified() {
    let out = run_json(&["mutants", "--mutmut", "mutmut/mutants", "--no-llm"]);
    let ms = out["mutants"].as_array().unwrap();
    assert_eq!(ms.len(), 3, "exit code 0 only: {out:#}");
    let eq = mutant(&out, "lib.x_clamp__mutmut_1");
    assert_eq!(eq["verdict"], "bounded_equivalent", "{eq}");
    assert_eq!(eq["function"], "clamp");
    let neq = mutant(&out, "lib.x_clamp__mutmut_2");
    assert_eq!(neq["verdict"], "not_equivalent", "{neq}");
    assert_eq!(
        neq["counterexample"]["b"],
        Value::Null,
        "the mutant returns None"
    );
    let method = mutant(&out, "lib.xǁCounterǁbump__mutmut_1");
    assert_eq!(method["verdict"], "unknown");
    assert!(notes(method).contains("method mutant"));
}

#[test]
fn mutmut3_meta_file_alone_is_accepted() {
    let out = run_json(&[
        "mutants",
        "--mutmut",
        "mutmut/mutants/src/lib.py.meta",
        "--no-llm",
        "--trials",
        "30",
    ]);
    assert_eq!(out["mutants"].as_array().unwrap().len(), 3);
}

fn mutmut2_cache(dir: &Path) -> PathBuf {
    let path = dir.join(".mutmut-cache");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE SourceFile (id INTEGER PRIMARY KEY, filename TEXT UNIQUE, hash TEXT);
         CREATE TABLE Line (id INTEGER PRIMARY KEY, sourcefile INTEGER, line TEXT, line_number INTEGER);
         CREATE TABLE Mutant (id INTEGER PRIMARY KEY, line INTEGER, \"index\" INTEGER, tested_against_hash TEXT, status TEXT);
         INSERT INTO SourceFile VALUES (1, 'src/calc.py', 'h');
         INSERT INTO Line VALUES (1, 1, '    if x > LIMIT:', 8);
         INSERT INTO Line VALUES (2, 1, '    return a + b', 4);
         INSERT INTO Mutant VALUES (1, 1, 0, 'h', 'bad_survived');
         INSERT INTO Mutant VALUES (2, 2, 0, 'h', 'ok_killed');
         INSERT INTO Mutant VALUES (3, 2, 1, 'h', 'bad_survived');",
    )
    .unwrap();
    path
}

#[test]
fn mutmut2_cache_lists_survivors_as_unknown_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = mutmut2_cache(tmp.path());
    let out = run_json(&["mutants", "--mutmut", cache.to_str().unwrap(), "--no-llm"]);
    let ms = out["mutants"].as_array().unwrap();
    assert_eq!(ms.len(), 2, "bad_survived only: {out:#}");
    assert_eq!(ms[0]["id"], "1");
    assert_eq!(ms[0]["verdict"], "unknown");
    let n = notes(&ms[0]);
    assert!(n.contains("src/calc.py:9"), "{n}");
    assert!(n.contains("not the mutated source"), "{n}");
}

#[test]
fn pit_lists_survivors_as_unknown_because_it_records_no_source() {
    let out = run_json(&["mutants", "--pit", "pit/mutations.xml", "--no-llm"]);
    let ms = out["mutants"].as_array().unwrap();
    assert_eq!(ms.len(), 1, "SURVIVED only (not KILLED, not NO_COVERAGE)");
    assert_eq!(ms[0]["verdict"], "unknown");
    assert_eq!(ms[0]["id"], "com.example.Calc.clamp:5#1");
    assert!(notes(&ms[0]).contains("no mutated source"));
}

#[test]
fn unreadable_input_is_an_error_not_a_panic() {
    let out = common::run_with_deadline(
        &["mutants", "--mutantbench", "does-not-exist", "--no-llm"],
        &fixtures(),
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mutants.jsonl"), "{err}");
    let garbage = common::run_with_deadline(
        &[
            "mutants",
            "--cargo-mutants",
            "pit/mutations.xml",
            "--no-llm",
        ],
        &fixtures(),
        Duration::from_secs(60),
    );
    assert_eq!(garbage.status.code(), Some(1));
}

#[test]
fn without_the_solver_an_equivalent_mutant_is_only_likely_equivalent() {
    let out = run_json(&[
        "mutants",
        "--mutmut",
        "mutmut/mutants",
        "--no-llm",
        "--no-smt",
    ]);
    let eq = mutant(&out, "lib.x_clamp__mutmut_1");
    assert_eq!(eq["verdict"], "likely_equivalent", "{eq}");
    assert_eq!(eq["method"], "differential", "{eq}");
}
