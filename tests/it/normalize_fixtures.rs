//! Normalised-AST fixtures and hostile input.
//!
//! Each fixture under `tests/fixtures/normalize/` is a source file plus a hand-written
//! `.expected` file. In the expected file, `# function: NAME` starts the expected tree of the
//! function with that qualified name (as `collect_functions` names it), `# file` the expected
//! tree of the whole file, and any other line starting with `#` is a comment. Trees are in the
//! compact S-expression form and may span lines; they are compared after re-reading, so layout
//! does not matter but every node and label does.

use crosscheck::crosscheck::llm_ast::parse_llm_ast;
use crosscheck::crosscheck::scores::ast::{label_tokens, score_ast};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::normalize::{
    backbone, normalize_function, normalize_node, normalize_node_with, Category, NormNode,
    DEFAULT_MAX_NODES, MAX_DEPTH,
};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/normalize")
}

/// (section title, expected compact text) pairs of an expected file.
fn sections(expected: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in expected.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix("# function:") {
            out.push((format!("function {}", name.trim()), String::new()));
        } else if trimmed == "# file" {
            out.push(("file".to_string(), String::new()));
        } else if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        } else {
            panic!("tree text before the first `# function:` or `# file` header");
        }
    }
    out
}

fn check_fixture(stem: &str) {
    let dir = fixture_dir();
    let source_path = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_stem().and_then(|s| s.to_str()) == Some(stem)
                && p.extension().and_then(|e| e.to_str()) != Some("expected")
        })
        .unwrap_or_else(|| panic!("no source file for fixture {stem}"));
    let lang = Language::from_path(&source_path).expect("fixture language from extension");
    let source = std::fs::read_to_string(&source_path).expect("fixture source");
    let expected =
        std::fs::read_to_string(dir.join(format!("{stem}.expected"))).expect("fixture expectation");
    let file = ParsedFile::parse(lang, source);
    assert!(
        file.errors.is_empty(),
        "{stem}: fixture does not parse: {:?}",
        file.errors
    );
    let functions = collect_functions(&file);
    let sections = sections(&expected);
    assert!(!sections.is_empty(), "{stem}: no expectations");
    for (title, text) in sections {
        let want = NormNode::parse_compact(&text)
            .unwrap_or_else(|e| panic!("{stem}/{title}: bad expected tree: {e}"));
        let tree = if title == "file" {
            normalize_node(&file, file.root(), &Cancel::never())
        } else {
            let name = title.trim_start_matches("function ");
            let func = functions
                .iter()
                .find(|f| f.name == name)
                .unwrap_or_else(|| panic!("{stem}: no function named {name}"));
            normalize_function(&file, func, &Cancel::never())
        };
        assert!(tree.errors.is_empty(), "{stem}/{title}: {:?}", tree.errors);
        assert!(!tree.truncated);
        assert_eq!(
            tree.root.compact(),
            want.compact(),
            "{stem}/{title}: got\n{}\nwant\n{}",
            tree.root.pretty(),
            want.pretty()
        );
        assert_eq!(tree.node_count, tree.root.size());
    }
}

#[test]
fn python_mapping_fixture() {
    check_fixture("python_control");
}

#[test]
fn java_mapping_fixture() {
    check_fixture("java_orders");
}

#[test]
fn c_mapping_fixture() {
    check_fixture("c_sum");
}

#[test]
fn cpp_mapping_fixture() {
    check_fixture("cpp_shapes");
}

#[test]
fn solidity_mapping_fixture() {
    check_fixture("solidity_vault");
}

#[test]
fn javascript_mapping_fixture() {
    check_fixture("javascript_load");
}

#[test]
fn typescript_mapping_fixture() {
    check_fixture("typescript_shapes");
}

#[test]
fn every_fixture_has_an_expectation_and_a_test() {
    let mut stems: Vec<String> = std::fs::read_dir(fixture_dir())
        .expect("fixture directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("expected"))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .collect();
    stems.sort();
    assert_eq!(
        stems,
        [
            "c_sum",
            "cpp_shapes",
            "java_orders",
            "javascript_load",
            "python_control",
            "solidity_vault",
            "typescript_shapes"
        ]
    );
}

#[test]
fn lines_are_one_based_source_lines() {
    let src = "def f(a):\n\n    if a:\n        return g(a)\n";
    let file = ParsedFile::parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let tree = normalize_function(&file, &funcs[0], &Cancel::never());
    let lines: Vec<(Category, usize)> = tree
        .root
        .preorder()
        .into_iter()
        .map(|n| (n.category, n.line))
        .collect();
    assert_eq!(
        lines,
        vec![
            (Category::Function, 1),
            (Category::Param, 1),
            (Category::Branch, 3),
            (Category::Ident, 3),
            (Category::Return, 4),
            (Category::Call, 4),
            (Category::Ident, 4),
        ]
    );
}

#[test]
fn broken_syntax_keeps_the_parts_that_parse() {
    let src = "def broken(x):\n    y = x +\n    if x:\n        return y\n    for i in x:\n        print(i)\n";
    let file = ParsedFile::parse(Language::Python, src);
    assert!(file.has_errors());
    let tree = normalize_node(&file, file.root(), &Cancel::never());
    let counts = tree.root.category_counts();
    assert_eq!(
        counts.get(&Category::Function),
        Some(&1),
        "{}",
        tree.root.pretty()
    );
    assert_eq!(
        counts.get(&Category::Return),
        Some(&1),
        "{}",
        tree.root.pretty()
    );
    assert_eq!(
        counts.get(&Category::Loop),
        Some(&1),
        "{}",
        tree.root.pretty()
    );
    assert_eq!(
        counts.get(&Category::Call),
        Some(&1),
        "{}",
        tree.root.pretty()
    );
    assert!(
        tree.errors
            .iter()
            .any(|e| e.message.contains("syntax error")),
        "{:?}",
        tree.errors
    );
}

#[test]
fn three_hundred_nested_calls_are_capped_at_max_depth() {
    let depth = 300;
    let src = format!(
        "def f():\n    return {}x{}\n",
        "g(".repeat(depth),
        ")".repeat(depth)
    );
    let file = ParsedFile::parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let tree = normalize_function(&file, &funcs[0], &Cancel::never());
    assert_eq!(tree.root.depth(), MAX_DEPTH);
    // Nothing is lost: every call is still there, the deepest ones as siblings.
    assert_eq!(
        tree.root.category_counts().get(&Category::Call),
        Some(&depth)
    );
    assert!(tree
        .errors
        .iter()
        .any(|e| e.message.contains("nesting deeper")));
    // FUNCTION > RETURN > CALL... are all backbone nodes: the backbone is as deep.
    assert_eq!(backbone(&tree.root).depth(), MAX_DEPTH);
}

#[test]
fn three_hundred_nested_blocks_in_every_language() {
    let n = 300;
    let cases: Vec<(Language, String)> = vec![
        (Language::Python, {
            let mut s = String::from("def f(x):\n");
            for i in 0..n {
                s.push_str(&" ".repeat(4 * (i + 1)));
                s.push_str("if x:\n");
            }
            s.push_str(&" ".repeat(4 * (n + 1)));
            s.push_str("return x\n");
            s
        }),
        (
            Language::C,
            format!(
                "int f(int x) {{ {} return x; {} }}",
                "if (x) {".repeat(n),
                "}".repeat(n)
            ),
        ),
        (
            Language::Cpp,
            format!(
                "int f(int x) {{ {} return x; {} }}",
                "while (x) {".repeat(n),
                "}".repeat(n)
            ),
        ),
        (
            Language::Java,
            format!(
                "class A {{ int f(int x) {{ {} return x; {} }} }}",
                "if (x) {".repeat(n),
                "}".repeat(n)
            ),
        ),
        (
            Language::Solidity,
            format!(
                "contract A {{ function f(uint x) public {{ {} return; {} }} }}",
                "if (x > 0) {".repeat(n),
                "}".repeat(n)
            ),
        ),
        (
            Language::JavaScript,
            format!(
                "function f(x) {{ return {}x{}; }}",
                "(".repeat(n),
                ")".repeat(n)
            ),
        ),
        (
            Language::TypeScript,
            format!(
                "function f(x: number) {{ {} return x; {} }}",
                "{".repeat(n),
                "}".repeat(n)
            ),
        ),
    ];
    for (lang, src) in cases {
        let file = ParsedFile::parse(lang, src);
        let funcs = collect_functions(&file);
        assert!(!funcs.is_empty(), "{lang}: no function found");
        let tree = normalize_function(&file, &funcs[0], &Cancel::never());
        assert!(tree.root.depth() <= MAX_DEPTH, "{lang}");
        assert_eq!(tree.root.category, Category::Function, "{lang}");
        assert!(
            tree.root.category_counts().get(&Category::Return) == Some(&1),
            "{lang}: {}",
            tree.root.compact().chars().take(200).collect::<String>()
        );
    }
}

#[test]
fn four_megabyte_one_line_expression_is_truncated_not_overflowed() {
    let terms = 2 * 1024 * 1024; // "1+" is two bytes: 4 MB of expression
    let mut expr = "1+".repeat(terms);
    expr.push('1');
    // One language is enough for the 4 MB case (the parse alone takes seconds in debug
    // builds); the C grammar gets a 400 KB version of the same shape.
    let small = format!("{}1", "1+".repeat(200 * 1024));
    for (lang, src) in [
        (Language::Python, format!("def f():\n    return {expr}\n")),
        (Language::C, format!("int f(void) {{ return {small}; }}\n")),
    ] {
        let file = ParsedFile::parse(lang, src);
        let funcs = collect_functions(&file);
        assert_eq!(funcs.len(), 1, "{lang}");
        let tree = normalize_function(&file, &funcs[0], &Cancel::never());
        assert!(tree.truncated, "{lang}");
        assert_eq!(tree.node_count, DEFAULT_MAX_NODES, "{lang}");
        assert_eq!(tree.root.size(), DEFAULT_MAX_NODES, "{lang}");
        assert!(
            tree.errors.iter().any(|e| e.message.contains("truncated")),
            "{lang}"
        );
        // FUNCTION > RETURN > LITERALs: the expression is flat, not two million levels deep.
        assert_eq!(tree.root.depth(), 3, "{lang}");
    }
}

#[test]
fn node_cap_keeps_a_document_order_prefix() {
    let src = "def f(a):\n    x = 1\n    y = 2\n    z = 3\n";
    let file = ParsedFile::parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let full = normalize_function(&file, &funcs[0], &Cancel::never());
    let capped = normalize_node_with(&file, funcs[0].node, 7, &Cancel::never());
    assert!(!full.truncated);
    assert!(capped.truncated);
    assert_eq!(
        capped.root.compact(),
        "(FUNCTION f (PARAM a) (ASSIGN = (IDENT x) (LITERAL 1)) (ASSIGN = (IDENT y)))"
    );
}

#[test]
fn cancelled_normalisation_returns_a_partial_tree() {
    let src = format!("def f():\n{}", "    x = g(1)\n".repeat(5000));
    let file = ParsedFile::parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let cancel = Cancel::new();
    cancel.cancel();
    let tree = normalize_function(&file, &funcs[0], &cancel);
    assert!(tree.truncated);
    assert!(tree.errors.iter().any(|e| e.message.contains("cancelled")));
    assert!(tree.node_count < 5000 * 4);
}

#[test]
fn garbage_input_never_panics() {
    // A deterministic byte soup mixing brackets, keywords and noise.
    let pieces = [
        "if", "(", ")", "{", "}", "[", "]", "for", "while", "def", "function", "class", ":", ";",
        "return", "try", "catch", "except", "=", "+", "\"", "'", "\n", " ", "x", "1", "->", "=>",
        "::", "/*", "*/", "#", "@", "\\", "é", "\t", "contract", "lambda",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut text = String::new();
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(pieces[(state % pieces.len() as u64) as usize]);
    }
    for lang in Language::ALL {
        let file = ParsedFile::parse(lang, text.clone());
        let tree = normalize_node(&file, file.root(), &Cancel::never());
        assert!(tree.root.depth() <= MAX_DEPTH, "{lang}");
        assert!(tree.node_count <= DEFAULT_MAX_NODES, "{lang}");
        for f in collect_functions(&file) {
            let t = normalize_function(&file, &f, &Cancel::never());
            assert!(t.root.depth() <= MAX_DEPTH, "{lang}");
        }
    }
}

// End to end: the reference from tree-sitter, the candidate from an LLM's JSON answer.

fn reference_of(stem_file: &str, function: &str) -> NormNode {
    let path = fixture_dir().join(stem_file);
    let lang = Language::from_path(&path).expect("language");
    let file = ParsedFile::parse(lang, std::fs::read_to_string(&path).expect("source"));
    let funcs = collect_functions(&file);
    let func = funcs.iter().find(|f| f.name == function).expect("function");
    normalize_function(&file, func, &Cancel::never()).root
}

fn llm_answer(name: &str) -> NormNode {
    let text = std::fs::read_to_string(fixture_dir().join("llm").join(name)).expect("answer");
    parse_llm_ast(&text).expect("readable answer").root
}

#[test]
fn faithful_python_ast_answer_passes() {
    let reference = reference_of("python_control.py", "classify");
    let candidate = llm_answer("python_classify.faithful.txt");
    let s = score_ast(&reference, &candidate, Language::Python);
    // Same statements in the same numbers.
    assert_eq!(s.statement_gap, 0.0, "{s:?}");
    // The only word the answer lacks: Python's `ast` writes `elif` as a nested `If`.
    assert_eq!(s.missing_tokens, ["elif"]);
    assert!(s.extra_tokens.is_empty(), "{s:?}");
    let union = label_tokens(&reference).len() as f64;
    assert!((s.keyword_gap - 1.0 / union).abs() < 1e-12, "{s:?}");
    // ... and attaches the `else` body to the nested If (tree-sitter attaches it to the
    // outer one): one ASSIGN moved, a delete plus an insert.
    let size = backbone(&reference).size() as f64;
    assert!((s.structure_gap - 2.0 / size).abs() < 1e-12, "{s:?}");
    assert!(s.pass && s.structure_exact);
}

#[test]
fn fabricated_answer_fails() {
    let reference = reference_of("python_control.py", "classify");
    let candidate = llm_answer("python_classify.fabricated.txt");
    let s = score_ast(&reference, &candidate, Language::Python);
    assert!(!s.pass, "{s:?}");
    // It drops the `elif` branch with its return, the `else` assignment and the augmented
    // assignment in the loop, and replaces the real loops by an invented retry loop (with
    // flush/sleep/notify calls) and a drain loop. The loop count is unchanged, so the
    // statement gap stays under its threshold: reference N = 1 + 2 + 2 + 0.5·6 + 2 + 0.5·3
    // + 2 + 1 = 14.5, D = 1 (BRANCH) + 1 (RETURN) + 0.5·2 (ASSIGN) + 0.5·1 (CALL) = 3.5.
    assert!((s.statement_gap - 3.5 / 14.5).abs() < 1e-12, "{s:?}");
    assert_eq!(
        s.missing_statements,
        std::collections::BTreeMap::from([
            (Category::Branch, 1),
            (Category::Return, 1),
            (Category::Assign, 2)
        ])
    );
    // The invented names and the rewired skeleton are what fail it.
    assert!(s.keyword_gap > 0.35, "{s:?}");
    assert!(s.structure_gap > 0.45, "{s:?}");
    for invented in ["attempt", "drain", "notify", "sleep", "timeouterror"] {
        assert!(
            s.extra_tokens.iter().any(|t| t == invented),
            "{invented}: {s:?}"
        );
    }
}

#[test]
fn reference_scored_against_itself_through_json_passes_exactly() {
    // Serialising the reference with serde and reading it back as an "LLM answer" must be
    // lossless for the scores: all three gaps are 0.
    for (file, function) in [
        ("python_control.py", "classify"),
        ("python_control.py", "Cache.get"),
        ("java_orders.java", "Orders.total"),
        ("c_sum.c", "sum_positive"),
        ("c_sum.c", "dispatch"),
        ("cpp_shapes.cpp", "geo::total_area"),
        ("solidity_vault.sol", "Vault.withdraw"),
        ("javascript_load.js", "load"),
        ("typescript_shapes.ts", "Circle.area"),
    ] {
        let reference = reference_of(file, function);
        let json = serde_json::to_string(&reference).expect("serialisable");
        let back = parse_llm_ast(&json).expect("readable").root;
        let lang = Language::from_path(Path::new(file)).expect("language");
        let s = score_ast(&reference, &back, lang);
        assert_eq!(
            (s.statement_gap, s.keyword_gap, s.structure_gap),
            (0.0, 0.0, 0.0),
            "{file}/{function}: {s:?}"
        );
        assert_eq!(backbone(&back), backbone(&reference), "{file}/{function}");
    }
}
