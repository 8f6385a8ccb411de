//! Fixture tests: source files under `tests/fixtures/dataflow/` whose comments carry the
//! expected data flow of the function they are in:
//!
//! * `expect: deps(v) = a, b` — the transitive dependencies of `v` are exactly `{a, b}`;
//! * `expect: direct(v@L) = a@L1, b@L2` — the definition of `v` at line `L` directly depends
//!   on exactly these definitions;
//! * `expect: reach(v@L) = v@L1, v@L2` — exactly these definitions reach the use of `v` at `L`;
//! * `expect: cdep(v@L) = L1, L2` — the occurrence is control dependent on exactly these lines.
//!
//! An empty right-hand side means the empty set. Every function of a fixture must be analysed
//! without errors.

use crosscheck::analysis::dataflow::{analyze_data_flow, DataFlow, VarLine};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn var_line(s: &str) -> Result<VarLine, String> {
    let (v, l) = s
        .trim()
        .split_once('@')
        .ok_or_else(|| format!("`{s}`: expected var@line"))?;
    let line = l.trim().parse().map_err(|_| format!("`{s}`: bad line"))?;
    Ok((v.trim().to_string(), line))
}

fn items(rhs: &str) -> impl Iterator<Item = &str> {
    rhs.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// Checks one expectation; `Err` describes a mismatch.
fn check(df: &DataFlow, spec: &str) -> Result<(), String> {
    let (lhs, rhs) = spec
        .split_once('=')
        .ok_or_else(|| format!("`{spec}`: missing `=`"))?;
    let lhs = lhs.trim();
    let (kind, arg) = lhs
        .strip_suffix(')')
        .and_then(|l| l.split_once('('))
        .ok_or_else(|| format!("`{lhs}`: expected kind(arg)"))?;
    match kind {
        "deps" => {
            let want: BTreeSet<String> = items(rhs).map(str::to_string).collect();
            let got = df
                .dependencies
                .get(arg)
                .cloned()
                .ok_or_else(|| format!("no variable `{arg}`"))?;
            (got == want)
                .then_some(())
                .ok_or(format!("deps({arg}) = {got:?}, expected {want:?}"))
        }
        "direct" | "reach" => {
            let key = var_line(arg)?;
            let want: BTreeSet<VarLine> = items(rhs).map(var_line).collect::<Result<_, _>>()?;
            let map = if kind == "direct" {
                df.direct_dependencies()
            } else {
                df.use_definitions()
            };
            let got = map
                .get(&key)
                .cloned()
                .ok_or_else(|| format!("no {kind} entry for {arg}"))?;
            (got == want)
                .then_some(())
                .ok_or(format!("{kind}({arg}) = {got:?}, expected {want:?}"))
        }
        "cdep" => {
            let key = var_line(arg)?;
            let want: BTreeSet<usize> = items(rhs)
                .map(|s| s.parse().map_err(|_| format!("`{s}`: bad line")))
                .collect::<Result<_, _>>()?;
            let got = df
                .control_dependencies()
                .get(&key)
                .cloned()
                .ok_or_else(|| format!("no occurrence {arg}"))?;
            (got == want)
                .then_some(())
                .ok_or(format!("cdep({arg}) = {got:?}, expected {want:?}"))
        }
        other => Err(format!("unknown expectation kind `{other}`")),
    }
}

fn run_fixture(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/dataflow")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    let lang = Language::from_path(&path).expect("fixture language");
    let file = ParsedFile::parse(lang, text.clone());
    assert!(
        file.errors.is_empty(),
        "{name} parses cleanly: {:?}",
        file.errors
    );
    let funcs = collect_functions(&file);
    let mut flows: BTreeMap<usize, DataFlow> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let Some(at) = line.find("expect:") else {
            continue;
        };
        let spec = line[at + "expect:".len()..].trim();
        // The innermost function containing the line; a function (lambda) that starts on the
        // annotated line is skipped in favour of the enclosing one.
        let containing = |strict: bool| {
            funcs
                .iter()
                .enumerate()
                .filter(|(_, f)| f.start_line <= lineno && lineno <= f.end_line)
                .filter(|(_, f)| !strict || f.start_line < lineno)
                .min_by_key(|(_, f)| f.end_line - f.start_line)
                .map(|(i, _)| i)
        };
        let Some(fi) = containing(true).or_else(|| containing(false)) else {
            failures.push(format!("line {lineno}: not inside a function"));
            continue;
        };
        let df = flows
            .entry(fi)
            .or_insert_with(|| analyze_data_flow(&file, &funcs[fi], &Cancel::never()));
        checked += 1;
        if let Err(e) = check(df, spec) {
            failures.push(format!("line {lineno}: {e}"));
        }
    }
    for (fi, df) in &flows {
        assert!(
            !df.partial && df.errors.is_empty(),
            "{name} {}: {:?}",
            funcs[*fi].name,
            df.errors
        );
    }
    assert!(checked >= 5, "{name}: only {checked} expectations");
    assert!(failures.is_empty(), "{name}:\n  {}", failures.join("\n  "));
}

#[test]
fn python_assignments_and_loops() {
    run_fixture("python_assignments.py");
}

#[test]
fn python_with_except_comprehensions_and_fields() {
    run_fixture("python_structures.py");
}

#[test]
fn java_scanner_arrays_and_lists() {
    run_fixture("java_scanner.java");
}

#[test]
fn java_early_returns_do_while_and_switch() {
    run_fixture("java_control.java");
}

#[test]
fn c_scanf_memset_and_out_arguments() {
    run_fixture("c_input.c");
}

#[test]
fn c_struct_fields_through_pointers() {
    run_fixture("c_structs.c");
}

#[test]
fn cpp_streams_vectors_lambdas_and_bindings() {
    run_fixture("cpp_streams.cpp");
}

#[test]
fn solidity_mappings_tuples_and_require() {
    run_fixture("solidity_bank.sol");
}

#[test]
fn javascript_destructuring_and_closures() {
    run_fixture("js_destructuring.js");
}

#[test]
fn malformed_expectations_are_reported() {
    let df = DataFlow::default();
    assert!(check(&df, "deps(x) = a").is_err());
    assert!(check(&df, "direct(x) = a").is_err());
    assert!(check(&df, "bogus(x@1) =").is_err());
    assert!(check(&df, "direct(x@1)").is_err());
}
