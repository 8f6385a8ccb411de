//! Data-driven CFG checks over `tests/fixtures/cfg/**`, plus hostile inputs.
//!
//! Every fixture is a small, valid program. Each function carries a comment
//! `// expect: cyclomatic(Qualified.name) = N` (Python: `# expect: ...`) whose number was
//! derived by hand from the conventions in `crosscheck::analysis::cfg` (cyclomatic number =
//! 1 + the sum over non-exit nodes of (out-degree - 1): +1 per branch/loop/assert, +k-1 per
//! switch with k case edges, +h per try with h handlers, +c-1 per finally end with c
//! continuations).

use crosscheck::analysis::cfg::{build_cfg, Cfg, EdgeKind, NodeKind};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

const REQUIRED: [Language; 5] = [
    Language::Python,
    Language::Java,
    Language::C,
    Language::Cpp,
    Language::Solidity,
];

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cfg")
}

/// All fixture files, sorted (iterative directory walk).
fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![fixture_root()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture directory is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if Language::from_path(&path).is_some() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `expect: cyclomatic(NAME) = N` comments, in file order, with their line numbers.
fn expectations(text: &str) -> Vec<(usize, String, i64)> {
    const MARK: &str = "expect: cyclomatic(";
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find(MARK) else { continue };
        let rest = &line[at + MARK.len()..];
        let close = rest
            .rfind(") =")
            .unwrap_or_else(|| panic!("line {}: malformed expectation", i + 1));
        let value = rest[close + 3..]
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("line {}: expected number", i + 1));
        out.push((i + 1, rest[..close].to_string(), value));
    }
    out
}

fn all_cfgs(file: &ParsedFile) -> Vec<(String, Cfg)> {
    collect_functions(file)
        .iter()
        .map(|f| (f.name.clone(), build_cfg(file, f, &Cancel::never())))
        .collect()
}

#[test]
fn every_fixture_function_has_its_expected_cyclomatic_number() {
    let files = fixture_files();
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in &files {
        let rel = path
            .strip_prefix(fixture_root())
            .unwrap_or(path)
            .display()
            .to_string();
        let lang = Language::from_path(path).expect("fixture extension maps to a language");
        let text = std::fs::read_to_string(path).expect("fixture is readable");
        let file = ParsedFile::parse(lang, text.clone());
        if !file.errors.is_empty() {
            failures.push(format!(
                "{rel}: fixture does not parse cleanly: {:?}",
                file.errors
            ));
        }
        let cfgs = all_cfgs(&file);
        let expected = expectations(&text);
        let expected_names: BTreeSet<&str> = expected.iter().map(|(_, n, _)| n.as_str()).collect();
        for (name, _) in &cfgs {
            if !expected_names.contains(name.as_str()) {
                failures.push(format!("{rel}: function {name} has no expectation"));
            }
        }
        for (line, name, want) in &expected {
            let matching: Vec<&Cfg> = cfgs
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, c)| c)
                .collect();
            let [cfg] = matching.as_slice() else {
                failures.push(format!(
                    "{rel}:{line}: {} functions named {name}",
                    matching.len()
                ));
                continue;
            };
            checked += 1;
            if cfg.cyclomatic() != *want {
                failures.push(format!(
                    "{rel}:{line}: cyclomatic({name}) = {}, expected {want}\n{}",
                    cfg.cyclomatic(),
                    cfg.to_dot()
                ));
            }
            let shape = cfg.shape_violations();
            if !shape.is_empty() {
                failures.push(format!("{rel}:{line}: {name}: {shape:?}"));
            }
            if !cfg.exit_reachable() || cfg.partial || !cfg.errors.is_empty() {
                failures.push(format!(
                    "{rel}:{line}: {name}: exit reachable {}, partial {}, errors {:?}",
                    cfg.exit_reachable(),
                    cfg.partial,
                    cfg.errors
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 80, "only {checked} functions checked");
}

#[test]
fn fixtures_cover_every_required_language_and_every_node_and_edge_kind() {
    let files = fixture_files();
    assert!(files.len() >= 14, "{} fixture files", files.len());
    let mut per_lang: BTreeMap<Language, usize> = BTreeMap::new();
    let mut node_kinds = BTreeSet::new();
    let mut edge_kinds = BTreeSet::new();
    for path in &files {
        let lang = Language::from_path(path).expect("language");
        *per_lang.entry(lang).or_default() += 1;
        let file = ParsedFile::parse(lang, std::fs::read_to_string(path).expect("readable"));
        for (_, cfg) in all_cfgs(&file) {
            node_kinds.extend(cfg.graph.node_weights().map(|w| w.kind));
            edge_kinds.extend(cfg.graph.edge_weights().copied());
        }
    }
    for lang in REQUIRED {
        assert!(
            per_lang.get(&lang).copied().unwrap_or(0) >= 2,
            "{lang}: {per_lang:?}"
        );
    }
    let all_nodes = [
        NodeKind::Entry,
        NodeKind::Exit,
        NodeKind::Branch,
        NodeKind::Loop,
        NodeKind::Call,
        NodeKind::Return,
        NodeKind::Try,
        NodeKind::Except,
        NodeKind::Jump,
        NodeKind::Normal,
    ];
    let all_edges = [
        EdgeKind::True,
        EdgeKind::False,
        EdgeKind::Fallthrough,
        EdgeKind::Back,
        EdgeKind::Exception,
        EdgeKind::Jump,
        EdgeKind::Case,
    ];
    assert_eq!(node_kinds, all_nodes.into_iter().collect());
    assert_eq!(edge_kinds, all_edges.into_iter().collect());
}

// ----- hostile inputs -------------------------------------------------------------------

/// Builds every function's CFG and checks the shape invariants; returns the CFGs.
fn build_all_checked(lang: Language, src: &str) -> Vec<(String, Cfg)> {
    let file = ParsedFile::parse(lang, src);
    let cfgs = all_cfgs(&file);
    for (name, cfg) in &cfgs {
        let v = cfg.shape_violations();
        assert!(v.is_empty(), "{lang} {name}: {v:?}");
    }
    cfgs
}

/// The CFG of the function named `f` (`A.f`, `C.f` inside a class or contract).
fn find_f(cfgs: &[(String, Cfg)], lang: Language) -> &(String, Cfg) {
    cfgs.iter()
        .find(|(n, _)| n == "f" || n.ends_with(".f"))
        .unwrap_or_else(|| panic!("{lang}: no function f"))
}

fn nested(lang: Language, depth: usize) -> String {
    match lang {
        Language::Python => {
            let mut s = String::from("def f(x):\n");
            for i in 0..depth {
                let kw = if i % 2 == 0 { "if x:" } else { "while x:" };
                s.push_str(&format!("{}{kw}\n", " ".repeat(i + 1)));
            }
            s.push_str(&format!("{}g()\n", " ".repeat(depth + 1)));
            s
        }
        _ => {
            let mut body = String::new();
            for i in 0..depth {
                body.push_str(if i % 2 == 0 {
                    "if (x) {"
                } else {
                    "while (x) {"
                });
            }
            body.push_str("g(x);");
            body.push_str(&"}".repeat(depth));
            match lang {
                Language::Java => format!("class A {{ void f(int x) {{ {body} }} }}"),
                Language::Solidity => {
                    format!("contract C {{ function f(uint x) public {{ {body} }} }}")
                }
                Language::JavaScript | Language::TypeScript => {
                    format!("function f(x) {{ {body} }}")
                }
                _ => format!("void f(int x) {{ {body} }}"),
            }
        }
    }
}

#[test]
fn deep_nesting_in_every_language_degrades_without_overflow() {
    for lang in Language::ALL {
        let start = Instant::now();
        let src = nested(lang, 300);
        let cfgs = build_all_checked(lang, &src);
        let (_, cfg) = find_f(&cfgs, lang);
        assert!(cfg.partial, "{lang}: 300 levels must hit the depth limit");
        assert!(
            cfg.errors
                .iter()
                .any(|e| e.message.contains("nested deeper")),
            "{lang}: {:?}",
            cfg.errors
        );
        // Every level above the limit still has its decision node.
        assert!(cfg.cyclomatic() > 50, "{lang}: {}", cfg.cyclomatic());
        eprintln!("{lang}: 300 nested levels in {:?}", start.elapsed());
    }
}

#[test]
fn one_megabyte_expression_statement_is_a_single_node() {
    let expr = format!("1{}", "+1".repeat(512 * 1024));
    for lang in REQUIRED {
        let start = Instant::now();
        let src = match lang {
            Language::Python => format!("def f():\n    x = {expr}\n"),
            Language::Java => format!("class A {{ void f() {{ int x = {expr}; }} }}"),
            Language::Solidity => {
                format!("contract C {{ function f() public {{ uint x = {expr}; }} }}")
            }
            _ => format!("void f(void) {{ int x = {expr}; }}"),
        };
        let cfgs = build_all_checked(lang, &src);
        let (_, cfg) = find_f(&cfgs, lang);
        assert_eq!(cfg.graph.node_count(), 3, "{lang}");
        assert_eq!(cfg.cyclomatic(), 1, "{lang}");
        let stmt = &cfg.graph[petgraph::graph::NodeIndex::new(1)];
        assert_eq!(stmt.kind, NodeKind::Normal, "{lang}");
        assert_eq!(stmt.text.chars().count(), 80, "{lang}");
        eprintln!("{lang}: 1 MB expression in {:?}", start.elapsed());
    }
}

/// A fixed-seed xorshift generator: deterministic "random" test input.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn random_bytes_and_token_soup_never_break_the_builder() {
    const TOKENS: [&str; 40] = [
        "if", "else", "while", "for", "do", "switch", "case", "default:", "try", "catch",
        "finally", "except", "match", "return", "break", "continue", "goto", "throw", "raise",
        "revert", "function", "def", "void", "f", "(", ")", "{", "}", "[", "]", ":", ";", "\n",
        "\n    ", "x", "1", "=>", "->", "lbl:", "_;",
    ];
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for lang in Language::ALL {
        for round in 0..24 {
            let src = if round % 2 == 0 {
                let bytes: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            } else {
                let prefix = match lang {
                    Language::Python => "def f(x):\n    ",
                    Language::Java => "class A { void f(int x) { ",
                    Language::Solidity => "contract C { function f(uint x) public { ",
                    Language::JavaScript | Language::TypeScript => "function f(x) { ",
                    _ => "void f(int x) { ",
                };
                let mut s = prefix.to_string();
                for _ in 0..2000 {
                    s.push_str(TOKENS[rng.below(TOKENS.len())]);
                    s.push(' ');
                }
                s
            };
            build_all_checked(lang, &src);
        }
    }
}

#[test]
fn truncated_and_spliced_fixtures_never_break_the_builder() {
    let mut rng = XorShift(42);
    for path in fixture_files() {
        let lang = Language::from_path(&path).expect("language");
        let text = std::fs::read_to_string(&path).expect("readable");
        let mut cut_points: Vec<usize> = (0..12).map(|_| rng.below(text.len())).collect();
        cut_points.sort_unstable();
        for cut in cut_points {
            let cut = (0..=cut)
                .rev()
                .find(|&c| text.is_char_boundary(c))
                .unwrap_or(0);
            build_all_checked(lang, &text[..cut]);
            // Drop a slice from the middle (unbalancing braces and indentation).
            let end = (cut + rng.below(200)).min(text.len());
            let end = (end..=text.len())
                .find(|&c| text.is_char_boundary(c))
                .unwrap_or(text.len());
            let spliced = format!("{}{}", &text[..cut], &text[end..]);
            build_all_checked(lang, &spliced);
        }
    }
}

#[test]
fn empty_files_and_empty_bodies() {
    for lang in Language::ALL {
        assert!(build_all_checked(lang, "").is_empty(), "{lang}");
    }
    let cases = [
        (Language::Python, "def f():\n    pass\n", 3),
        (Language::Java, "class A { void f() {} }", 2),
        (Language::C, "void f(void) {}", 2),
        (Language::Cpp, "void f() {}", 2),
        (
            Language::Solidity,
            "contract C { function f() public {} }",
            2,
        ),
        (Language::JavaScript, "function f() {}", 2),
        (Language::TypeScript, "function f(): void {}", 2),
    ];
    for (lang, src, nodes) in cases {
        let cfgs = build_all_checked(lang, src);
        assert_eq!(cfgs.len(), 1, "{lang}");
        let cfg = &cfgs[0].1;
        assert_eq!(cfg.graph.node_count(), nodes, "{lang}");
        assert_eq!(cfg.cyclomatic(), 1, "{lang}");
        assert!(!cfg.partial, "{lang}");
    }
}
