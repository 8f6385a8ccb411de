//! Hostile and broken input: deep nesting, huge expressions, syntax errors, truncated files,
//! cancellation. The analysis must never panic or overflow the stack, and must keep the
//! results of the parts it can analyse.

use crosscheck::analysis::pointsto::{
    analyze_file, analyze_points_to, work_budget, SourceUnit, Target, VarRef, MAX_DEPTH, MAX_WORK,
    MIN_WORK, WORK_PER_BYTE,
};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::path::{Path, PathBuf};

fn run(lang: Language, src: &str) -> crosscheck::analysis::pointsto::PointsTo {
    let file = ParsedFile::parse(lang, src.to_string());
    analyze_file("input.c", &file, &Cancel::never())
}

fn x() -> Vec<Target> {
    vec![Target::var(None, "x")]
}

#[test]
fn three_hundred_nested_blocks_are_walked_without_recursion() {
    let depth = 300;
    let src = format!(
        "int x; int *p;\nvoid f(int c) {{ {} p = &x; {} }}\n",
        "if (c) {".repeat(depth),
        "}".repeat(depth)
    );
    let r = run(Language::C, &src);
    assert_eq!(r.targets(VarRef::global("p")), x().as_slice());
    assert!(!r.partial, "{:?}", r.errors);
}

#[test]
fn expressions_nested_beyond_the_depth_limit_degrade_with_an_error() {
    let depth = MAX_DEPTH + 44;
    let src = format!(
        "int x; int *p; int *q;\nvoid f(void) {{ q = &x; p = {}&x{}; }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let r = run(Language::C, &src);
    // The shallow statement is intact; the over-deep one is dropped and reported.
    assert_eq!(r.targets(VarRef::global("q")), x().as_slice());
    assert!(r.targets(VarRef::global("p")).is_empty());
    assert!(r.partial);
    assert!(
        r.errors
            .iter()
            .any(|e| e.line == 2 && e.message.contains("nested deeper")),
        "{:?}",
        r.errors
    );
}

#[test]
fn deeply_nested_dereferences_calls_and_assignments_do_not_overflow() {
    let n = 300;
    let derefs = format!(
        "int x; int *p; void f(void) {{ p = &x; int v = {}p; }}",
        "*".repeat(n)
    );
    let calls = format!(
        "int x; int *p; int *id(int *a) {{ return a; }} void f(void) {{ p = &x; p = {}&x{}; }}",
        "id(".repeat(n),
        ")".repeat(n)
    );
    let assigns = format!(
        "int x; int *p; void f(void) {{ p = &x; {} p; }}",
        "p = ".repeat(n)
    );
    for src in [derefs, calls, assigns] {
        let r = run(Language::C, &src);
        // Whatever was cut off, the direct `p = &x` (or the shallow part) survives.
        assert!(
            r.targets(VarRef::global("p"))
                .contains(&Target::var(None, "x")),
            "{src:.60}"
        );
    }
}

#[test]
fn four_megabyte_one_line_expression_is_handled_iteratively() {
    let terms = 2 * 1024 * 1024; // "1+" is two bytes: a 4 MB line
    let mut src = String::from("int x; int *p; long v; void f(void) { p = &x; v = ");
    src.push_str(&"1+".repeat(terms));
    src.push_str("1; }\n");
    assert!(src.len() >= 4 * 1024 * 1024);
    let r = run(Language::C, &src);
    assert_eq!(r.targets(VarRef::global("p")), x().as_slice());
    assert!(r.targets(VarRef::global("v")).is_empty());
    assert!(!r.partial, "{:?}", r.errors);

    // A pointer plus a long sum keeps the pointer's targets.
    let mut src = String::from("int x; int *q; void f(void) { q = &x");
    src.push_str(&"+1".repeat(terms / 16));
    src.push_str("; }\n");
    let r = run(Language::C, &src);
    assert_eq!(r.targets(VarRef::global("q")), x().as_slice());
}

#[test]
fn a_huge_struct_many_variables_and_self_referential_types_stay_cheap() {
    // 20,000 fields, 2,000 variables of that type, a designated initialiser naming every
    // field, struct copies between all the variables, typedef cycles and a field chain
    // deeper than the nesting bound: field sets are stored once per type and designators
    // are looked up by name, so this is seconds, not hours.
    let n_fields = 20_000;
    let n_vars = 2_000;
    let fields: String = (0..n_fields).map(|i| format!("int *f{i}; ")).collect();
    let init: String = (0..n_fields).map(|i| format!(".f{i} = &x, ")).collect();
    let vars: String = (0..n_vars).map(|i| format!("struct Big v{i};\n")).collect();
    let copies: String = (1..n_vars)
        .map(|i| format!("v{i} = v{};\n", i - 1))
        .collect();
    let src = format!(
        "int x;\nstruct Big {{ {fields} }};\ntypedef struct A B; typedef B A;\n\
         struct L {{ struct L2 {{ struct L3 {{ struct L4 {{ int *p; }} d; }} c; }} b; }};\n\
         struct Big first = {{ {init} }};\n{vars}\
         void f(void) {{ struct L l; l.b.c.d.p = &x; A a; v0 = first;\n{copies} }}\n\
         int *g(void) {{ return v{}.f7; }}\n",
        n_vars - 1
    );
    let start = std::time::Instant::now();
    let r = run(Language::C, &src);
    assert!(!r.partial, "{:?}", r.errors);
    assert!(
        r.targets(VarRef::global(&format!("v{}", n_vars - 1)))
            .contains(&Target::var(None, "x")),
        "the copied field reaches the last variable"
    );
    assert_eq!(r.targets(VarRef::local("f", "l")), x().as_slice());
    assert!(
        start.elapsed().as_secs() < 120,
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn syntax_errors_keep_the_results_of_the_parts_that_parse() {
    let src = "int x, y; int *p, *q;\nvoid f(void) { p = &x; int = ; }\nvoid g(void) { q = ( ; q = &y; }\nvoid h(void) { int *r = p; }\n";
    let file = ParsedFile::parse(Language::C, src);
    assert!(!file.errors.is_empty());
    let r = analyze_file("broken.c", &file, &Cancel::never());
    assert_eq!(r.targets(VarRef::global("p")), x().as_slice());
    assert_eq!(r.targets(VarRef::local("h", "r")), x().as_slice());
    assert_eq!(
        r.targets(VarRef::global("q")),
        [Target::var(None, "y")].as_slice()
    );
}

#[test]
fn every_prefix_of_the_fixtures_is_analysed_without_panicking() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pointsto");
    for name in ["funptr.c", "structs.c", "cpp_refs.cpp", "cpp_lambdas.cpp"] {
        let text = std::fs::read_to_string(dir.join(name)).expect("fixture");
        let lang = if name.ends_with(".cpp") {
            Language::Cpp
        } else {
            Language::C
        };
        let cuts: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &cut in cuts.iter().step_by(3) {
            let file = ParsedFile::parse(lang, &text[..cut]);
            let _ = analyze_file(name, &file, &Cancel::never());
        }
    }
}

#[test]
fn a_cancelled_analysis_returns_a_partial_result() {
    let cancel = Cancel::new();
    cancel.cancel();
    let src = "int x; int *p = &x;\n".repeat(2000);
    let file = ParsedFile::parse(Language::C, src);
    let r = analyze_points_to(
        &[SourceUnit {
            path: "big.c".into(),
            file: &file,
        }],
        &cancel,
    );
    assert!(r.partial);
    assert!(r.errors.iter().any(|e| e.message.contains("cancelled")));
}

/// `n` pointers to `n` objects, mixed by `k` pointer-to-pointers that each load and store
/// through all of them: about k * n * n / 64 words of propagation from ~60 bytes per line.
fn exploding_program(n: usize, k: usize) -> String {
    let mut src = String::new();
    for i in 0..n {
        src.push_str(&format!("int x{i}; int *a{i} = &x{i};\n"));
    }
    src.push_str("int **pp;\nvoid f(void) {\n");
    for i in 0..n {
        src.push_str(&format!("pp = &a{i};\n"));
    }
    for j in 0..k {
        src.push_str(&format!(
            "{{ int **p{j} = pp; int *q{j} = *p{j}; *p{j} = q{j}; }}\n"
        ));
    }
    src.push_str("}\n");
    src
}

#[test]
fn solving_is_bounded_in_proportion_to_the_input() {
    assert_eq!(work_budget(0), MIN_WORK);
    assert_eq!(work_budget(10_000_000), 10_000_000 * WORK_PER_BYTE);
    assert_eq!(work_budget(usize::MAX), MAX_WORK);
    // Few mixers: the program converges, complete.
    let r = run(Language::C, &exploding_program(2_000, 10));
    assert!(!r.partial, "{:?}", r.errors);
    assert_eq!(r.targets(VarRef::global("a7")).len(), 2_000);
    // A hundred and fifty mixers: quadratic work (tens of millions of words, far below
    // MAX_WORK) from a ~100 KB file. The solver stops at the bound
    // for its size and says so; what it has found so far is kept.
    let src = exploding_program(2_000, 150);
    assert!(src.len() as u64 * WORK_PER_BYTE < MIN_WORK);
    let r = run(Language::C, &src);
    assert!(r.partial);
    let bound = format!("stopped after {MIN_WORK} propagation steps");
    assert!(
        r.errors.iter().any(|e| e.message.contains(&bound)),
        "{:?}",
        r.errors
    );
    assert_eq!(
        r.targets(VarRef::global("a0")).first(),
        Some(&Target::var(None, "x0"))
    );
}

#[test]
fn output_is_deterministic_and_independent_of_unit_order() {
    let a = ParsedFile::parse(
        Language::C,
        "int x, y; int *p; void set(int *v) { p = v; }\n",
    );
    let b = ParsedFile::parse(
        Language::C,
        "void set(int *v); int y; void main2(void) { int z; set(&y); set(&z); }\n",
    );
    let ab = [
        SourceUnit {
            path: "a.c".into(),
            file: &a,
        },
        SourceUnit {
            path: "b.c".into(),
            file: &b,
        },
    ];
    let ba = [
        SourceUnit {
            path: "b.c".into(),
            file: &b,
        },
        SourceUnit {
            path: "a.c".into(),
            file: &a,
        },
    ];
    let first = serde_json::to_string(&analyze_points_to(&ab, &Cancel::never())).unwrap();
    let again = serde_json::to_string(&analyze_points_to(&ab, &Cancel::never())).unwrap();
    let swapped = serde_json::to_string(&analyze_points_to(&ba, &Cancel::never())).unwrap();
    assert_eq!(first, again);
    assert_eq!(first, swapped);
    assert!(first.contains("\"z\""), "{first}");
}

fn ptaben_sources() -> Option<Vec<PathBuf>> {
    let root = crate::common::dataset("ptaben", None, "src")?.join("src");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "c" || e == "cpp") {
                out.push(path);
            }
        }
    }
    out.sort();
    Some(out)
}

/// Gated on the PTABen data set: every C and C++ file of the suite is analysed without a
/// panic and without hitting the work bound.
#[test]
fn every_ptaben_source_file_is_analysed() {
    let Some(paths) = ptaben_sources() else {
        return;
    };
    let mut entries = 0;
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let lang = if path.extension().is_some_and(|e| e == "cpp") {
            Language::Cpp
        } else {
            Language::C
        };
        let file = ParsedFile::parse(lang, text);
        let r = analyze_file(&path.display().to_string(), &file, &Cancel::never());
        assert!(
            !r.errors
                .iter()
                .any(|e| e.message.contains("propagation steps")),
            "{}",
            path.display()
        );
        entries += r.len();
    }
    println!(
        "PTABen: {} files analysed, {entries} points-to entries",
        paths.len()
    );
    assert!(paths.len() > 300);
}
