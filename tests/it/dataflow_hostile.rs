//! Hostile input: deep nesting, huge expressions, broken syntax and garbage never panic or
//! overflow the stack; results stay deterministic; cancellation yields partial results.

use crosscheck::analysis::cfg::build_cfg;
use crosscheck::analysis::dataflow::{analyze_cfg, analyze_data_flow, DataFlow};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::{Cancel, Language, ParsedFile};

fn analyze_all(lang: Language, src: &str) -> Vec<DataFlow> {
    let file = ParsedFile::parse(lang, src);
    collect_functions(&file)
        .iter()
        .map(|f| analyze_data_flow(&file, f, &Cancel::never()))
        .collect()
}

/// Parses and builds the CFGs on the test thread, then runs the data-flow analysis on a
/// thread with a small (256 KiB) stack, so that recursion in it would show up as an overflow.
fn analyze_on_small_stack(lang: Language, src: &str) -> Vec<DataFlow> {
    let file = ParsedFile::parse(lang, src);
    let funcs = collect_functions(&file);
    let cfgs: Vec<_> = funcs
        .iter()
        .map(|f| build_cfg(&file, f, &Cancel::never()))
        .collect();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn_scoped(scope, || {
                funcs
                    .iter()
                    .zip(&cfgs)
                    .map(|(f, c)| analyze_cfg(&file, f, c, &Cancel::never()))
                    .collect()
            })
            .expect("spawn")
            .join()
            .expect("no panic or overflow")
    })
}

fn function_source(lang: Language, body: &str) -> String {
    match lang {
        Language::Python => format!("def f(a):\n    {body}\n"),
        Language::Java => format!("class A {{ int f(int a) {{ {body} }} }}"),
        Language::Solidity => format!("contract C {{ function f(uint a) public {{ {body} }} }}"),
        Language::JavaScript | Language::TypeScript => format!("function f(a) {{ {body} }}"),
        _ => format!("int f(int a) {{ {body} }}"),
    }
}

#[test]
fn deeply_nested_parentheses_do_not_overflow() {
    for lang in [
        Language::Python,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Solidity,
        Language::JavaScript,
    ] {
        let expr = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        let stmt = if lang == Language::Python {
            format!("x = {expr}")
        } else {
            format!("x = {expr};")
        };
        let src = function_source(lang, &stmt);
        let flows = analyze_on_small_stack(lang, &src);
        let df = flows.first().expect("one function");
        assert!(df.depends_on("x", "a"), "{lang}: {:?}", df.dependencies);
    }
}

#[test]
fn deeply_nested_statements_do_not_overflow() {
    // 300 nested ifs; the innermost assigns from the parameter.
    let mut py = String::from("def f(a):\n");
    for d in 0..300 {
        py.push_str(&"    ".repeat(d + 1));
        py.push_str("if a:\n");
    }
    py.push_str(&"    ".repeat(301));
    py.push_str("x = a\n");
    let c = format!(
        "int f(int a) {{ {} int x = a; {} return x; }}",
        "if (a) {".repeat(300),
        "}".repeat(300)
    );
    let flows = (
        analyze_on_small_stack(Language::Python, &py),
        analyze_on_small_stack(Language::C, &c),
    );
    for df in [&flows.0[0], &flows.1[0]] {
        assert!(df.depends_on("x", "a"), "{:?}", df.dependencies);
    }
}

#[test]
fn four_megabyte_expression_is_handled() {
    let n = 2 * 1024 * 1024; // "1+" x 2 Mi = 4 MiB
    let expr = format!("{}1", "1+".repeat(n));
    let src = format!("int f(int a) {{ int x = a + {expr}; return x; }}");
    assert_eq!(src.len() / (1024 * 1024), 4);
    let flows = analyze_on_small_stack(Language::C, &src);
    assert!(flows[0].depends_on("x", "a"));
    let py = format!("def f(a, b):\n    x = b + {}1\n", "a+".repeat(n / 8));
    let flows = analyze_on_small_stack(Language::Python, &py);
    assert_eq!(flows[0].dependencies["x"].len(), 2);
}

#[test]
fn broken_syntax_keeps_the_parts_that_parse() {
    let src = "def f(a):\n    b = a * 2\n    c = (b +\n    d = b + 1\n    return d\n";
    let flows = analyze_all(Language::Python, src);
    let df = &flows[0];
    assert!(df.depends_on("b", "a"), "{:?}", df.dependencies);
    let src = "int f(int a) { int b = a; int c = b +; int d = b * 2; return d; }";
    let df = &analyze_all(Language::C, src)[0];
    assert!(
        df.depends_on("d", "b") && df.depends_on("d", "a"),
        "{:?}",
        df.dependencies
    );
    let src = "class A { int f(int a) { int b = a; if (b > { b = 2; } return b; } }";
    let df = &analyze_all(Language::Java, src)[0];
    assert!(df.depends_on("b", "a") || df.partial);
}

/// Deterministic pseudo-random garbage built from code-like tokens.
fn garbage(seed: u64, len: usize) -> String {
    const TOKENS: &[&str] = &[
        "(", ")", "{", "}", "[", "]", "=", "+=", "++", ";", ":", ",", ".", "->", "&", "*", "a",
        "b", "x", "if", "for", "while", "in", "def", "int", "return", "lambda", "=>", "\n", "    ",
        "\"", "'", "#", "//", "/*", "class", "function", "contract", "try", "except", "catch",
        "scanf", "append", "0", "1", "@", "?", "<<", ">>",
    ];
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = String::new();
    for _ in 0..len {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (state >> 33) as usize % TOKENS.len();
        out.push_str(TOKENS[i]);
        out.push(' ');
    }
    out
}

#[test]
fn garbage_input_never_panics() {
    for lang in Language::ALL {
        for seed in 0..12u64 {
            let prefix = match lang {
                Language::Python => "def f(a, b):\n    ",
                Language::Java => "class A { void f(int a) { ",
                Language::Solidity => "contract C { function f(uint a) public { ",
                Language::JavaScript | Language::TypeScript => "function f(a) { ",
                _ => "int f(int a) { ",
            };
            let src = format!("{prefix}{}", garbage(seed, 400));
            let _ = analyze_all(lang, &src);
        }
    }
}

#[test]
fn results_are_deterministic() {
    let src = "def f(a, b):\n    xs = []\n    for i in range(a):\n        if i % 2:\n            xs.append(i * b)\n        else:\n            b += i\n    return xs\n";
    let render = |flows: &[DataFlow]| {
        flows
            .iter()
            .map(|d| {
                format!(
                    "{:?}{:?}{:?}{:?}{:?}",
                    d.def_use, d.dependencies, d.direct, d.use_defs, d.control
                )
            })
            .collect::<Vec<_>>()
    };
    let first = render(&analyze_all(Language::Python, src));
    for _ in 0..5 {
        assert_eq!(render(&analyze_all(Language::Python, src)), first);
    }
}

#[test]
fn cancelled_analysis_returns_partial_results() {
    let src = "def f(a):\n    b = a\n    return b\n";
    let file = ParsedFile::parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let cancel = Cancel::new();
    cancel.cancel();
    let df = analyze_data_flow(&file, &funcs[0], &cancel);
    assert!(df.partial);
    assert!(!df.errors.is_empty());
}
