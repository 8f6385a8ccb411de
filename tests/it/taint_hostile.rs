//! Hostile input for the taint engine: deep statement nesting, deep and huge expressions,
//! broken syntax, cancellation. Never a panic or a stack overflow (the analysis runs on a
//! 1 MiB stack here); results stay deterministic and partial results are flagged.

use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::taint::{analyze_taint, TaintResult, TaintSpecs};
use crosscheck::syntax::{Cancel, Language, ParsedFile};

fn run_small_stack(lang: Language, src: String, cancel: Cancel) -> TaintResult {
    let file = ParsedFile::parse(lang, src);
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn_scoped(scope, || {
                let units = [SourceUnit {
                    path: "hostile".into(),
                    file: &file,
                }];
                analyze_taint(&units, None, None, &TaintSpecs::builtin(), &cancel)
            })
            .expect("spawn")
            .join()
            .expect("no panic or stack overflow")
    })
}

fn run(lang: Language, src: String) -> TaintResult {
    run_small_stack(lang, src, Cancel::never())
}

#[test]
fn statements_nested_300_deep_still_yield_the_flow() {
    let mut py = String::from("import os\ndef f():\n    x = input()\n");
    for d in 0..300 {
        py.push_str(&"    ".repeat(d + 1));
        py.push_str("if x:\n");
    }
    py.push_str(&"    ".repeat(301));
    py.push_str("os.system(x)\n");
    let r = run(Language::Python, py);
    assert_eq!(r.flows.len(), 1, "{:?}", r.flows);
    assert!(r.flows[0].sink.line > 300);

    let mut java = String::from("class A { void f(javax.servlet.http.HttpServletRequest r) throws Exception { String x = r.getParameter(\"p\");\n");
    for _ in 0..300 {
        java.push_str("if (x != null) {\n");
    }
    java.push_str("Runtime.getRuntime().exec(x);\n");
    java.push_str(&"}\n".repeat(300));
    java.push_str("} }\n");
    let r = run(Language::Java, java);
    assert_eq!(r.flows.len(), 1, "{:?}", r.flows);
}

#[test]
fn a_four_megabyte_expression_does_not_overflow() {
    let n = 2 * 1024 * 1024;
    let mut py = String::with_capacity(2 * n + 64);
    py.push_str("import os\ndef f():\n    x = 1");
    for _ in 0..n {
        py.push_str("+1");
    }
    py.push_str(" + int(input())\n    os.system(str(x))\n    y = input()");
    py.push_str("\n    os.system(y)\n");
    let r = run(Language::Python, py);
    assert!(r.flows.iter().any(|f| f.sink.text == "os.system(y)"));
    assert!(r.partial, "the coarse evaluation is reported");

    let mut c = String::from("#include <stdlib.h>\nint main(int argc, char **argv) { int x = 1");
    for _ in 0..n {
        c.push_str("+1");
    }
    c.push_str("; system(argv[1]); return x; }\n");
    let r = run(Language::C, c);
    assert_eq!(r.flows.len(), 1);
}

#[test]
fn deeply_nested_calls_keep_sources_found_below_the_depth_limit() {
    let depth = 5000;
    let mut py = String::from("import os\ndef f():\n    os.system(");
    for _ in 0..depth {
        py.push_str("str(");
    }
    py.push_str("input()");
    py.push_str(&")".repeat(depth));
    py.push_str(")\n");
    let r = run(Language::Python, py);
    assert_eq!(
        r.flows.len(),
        1,
        "coarse evaluation still sees the source call"
    );
    assert!(r.partial);
}

#[test]
fn broken_syntax_keeps_the_flows_of_the_parts_that_parse() {
    let src = "import os\n\ndef good():\n    os.system(input())\n\ndef bad(:\n    x = = 1\n\ndef also_good():\n    cmd = input()\n    os.system(cmd)\n";
    let r = run(Language::Python, src.to_string());
    let lines: Vec<usize> = r.flows.iter().map(|f| f.sink.line).collect();
    assert!(lines.contains(&4), "{lines:?}");
    assert!(lines.contains(&11), "{lines:?}");
}

#[test]
fn cancellation_returns_a_partial_result() {
    let mut py = String::from("import os\n");
    for i in 0..200 {
        py.push_str(&format!("def f{i}():\n    os.system(input())\n"));
    }
    let cancel = Cancel::new();
    cancel.cancel();
    let r = run_small_stack(Language::Python, py, cancel);
    assert!(r.partial);
    assert!(r.flows.is_empty());
}

#[test]
fn results_are_deterministic() {
    let src = "import os, sys\nfrom subprocess import call\n\ndef a(x):\n    os.system(x)\n    call(x, shell=True)\n\ndef b():\n    d = {'k': sys.argv[1], 'j': input()}\n    for v in d.values():\n        a(v)\n    a(d['k'])\n\nb()\n";
    let first = serde_json::to_string(&run(Language::Python, src.to_string())).unwrap();
    for _ in 0..3 {
        let again = serde_json::to_string(&run(Language::Python, src.to_string())).unwrap();
        assert_eq!(first, again);
    }
}

#[test]
fn garbage_in_every_language_does_not_panic() {
    let garbage =
        "}}}{{{ ((( ;;; def class if else ))) <<< >>> \"unterminated\n\0 \\ $$ @@ # // /* ";
    for lang in [
        Language::Python,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Solidity,
        Language::JavaScript,
    ] {
        let _ = run(lang, garbage.repeat(50));
    }
}
