//! Hand-written fixtures with exact expected points-to sets, one test per rule.
//!
//! Each fixture under `tests/fixtures/pointsto/` states its complete expected output in
//! comments, one line per pointer variable with a non-empty set:
//!
//! ```text
//! // EXPECT main/p -> main/a, g, f(), heap:malloc#11:14
//! ```
//!
//! `fn/x` is the local or parameter `x` of function `fn` (qualified name), `x` a global,
//! `f()` the function `f`, and `heap:malloc#L:C` the heap object `malloc@FILE:L:C` where FILE
//! is the fixture's file name (the unit path given to the analysis). A dotted name is a field
//! target: `fn/s.next` (field `next` of the local `s`), `g.a.b`, `heap:malloc#L:C.next`. The analysis output
//! must equal the expectations exactly: no missing and no extra entries or targets.

use crosscheck::analysis::pointsto::{analyze_file, PointsToEntry, Target, TargetKind};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::path::Path;

fn target(token: &str, path: &str) -> Target {
    if let Some(heap) = token.strip_prefix("heap:") {
        let (site, pos) = heap.split_once('#').expect("heap:NAME#LINE:COL");
        return match pos.split_once('.') {
            Some((pos, fields)) => field(format!("{site}@{path}:{pos}.{fields}"), None),
            None => Target::heap(&format!("{site}@{path}:{pos}")),
        };
    }
    if let Some(f) = token.strip_suffix("()") {
        return Target::var(None, f);
    }
    let (function, var) = match token.rsplit_once('/') {
        Some((f, v)) => (Some(f), v),
        None => (None, token),
    };
    if var.contains('.') {
        return field(var.to_string(), function);
    }
    Target::var(function, var)
}

/// A field target `base.f` (`s.a.b` for nested fields, `malloc@F:L:C.next` for a heap
/// block's field).
fn field(name: String, function: Option<&str>) -> Target {
    Target {
        kind: TargetKind::Field,
        name,
        function: function.map(str::to_string),
    }
}

fn expected(text: &str, path: &str) -> Vec<PointsToEntry> {
    let mut out: Vec<PointsToEntry> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("// EXPECT "))
        .map(|l| {
            let (var, targets) = l.split_once("->").expect("VAR -> TARGETS");
            let (function, var) = match var.trim().rsplit_once('/') {
                Some((f, v)) => (Some(f.to_string()), v.to_string()),
                None => (None, var.trim().to_string()),
            };
            let mut targets: Vec<Target> =
                targets.split(',').map(|t| target(t.trim(), path)).collect();
            targets.sort();
            PointsToEntry {
                function,
                var,
                targets,
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.function, &a.var).cmp(&(&b.function, &b.var)));
    out
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pointsto");
    let text = std::fs::read_to_string(dir.join(name)).expect("fixture readable");
    let lang = if name.ends_with(".cpp") {
        Language::Cpp
    } else {
        Language::C
    };
    let file = ParsedFile::parse(lang, text.clone());
    assert!(
        file.errors.is_empty(),
        "fixture {name} must parse cleanly: {:?}",
        file.errors
    );
    let result = analyze_file(name, &file, &Cancel::never());
    assert!(!result.partial, "{name}: {:?}", result.errors);
    let want = expected(&text, name);
    assert!(!want.is_empty(), "fixture {name} states no expectations");
    let show = |es: &[PointsToEntry]| {
        es.iter()
            .map(|e| format!("{:?}/{} -> {:?}", e.function, e.var, e.targets))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        result.entries(),
        want,
        "\n--- got ---\n{}\n--- want ---\n{}",
        show(&result.entries()),
        show(&want)
    );
}

#[test]
fn globals_address_of_copy_store_and_initialisers() {
    check("globals.c");
}

#[test]
fn locals_load_and_store_through_pointers() {
    check("load_store.c");
}

#[test]
fn parameters_and_return_values_across_calls() {
    check("calls.c");
}

#[test]
fn heap_objects_named_by_allocation_site() {
    check("heap.c");
}

#[test]
fn function_pointers_bind_every_possible_callee() {
    check("funptr.c");
}

#[test]
fn indirect_calls_iterate_to_a_fixpoint() {
    check("funptr_nested.c");
}

#[test]
fn struct_fields_are_distinct_objects() {
    check("structs.c");
}

#[test]
fn fields_by_name_through_initialisers_unions_heap_and_copies() {
    check("fields.c");
}

#[test]
fn function_pointers_in_struct_initialisers() {
    check("struct_funptr.c");
}

#[test]
fn designated_initialisers_nest_and_come_in_any_order() {
    check("designators.c");
}

#[test]
fn arrays_are_one_object() {
    check("arrays.c");
}

#[test]
fn function_and_data_pointers_keep_apart_by_declared_type() {
    check("type_filter.c");
}

#[test]
fn casts_arithmetic_conditionals_and_commas() {
    check("casts.c");
}

#[test]
fn memcpy_copies_contents_and_unknown_calls_do_nothing() {
    check("memcpy.c");
}

#[test]
fn cpp_references_new_methods_and_this() {
    check("cpp_refs.cpp");
}

#[test]
fn cpp_method_calls_lambdas_and_range_for() {
    check("cpp_lambdas.cpp");
}
