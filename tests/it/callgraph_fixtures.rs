//! Data-driven call-graph tests over `tests/fixtures/callgraph/<case>/`.
//!
//! Each case is a directory of source files (any depth; the language comes from the file
//! extension) plus `expected.txt`: the hand-written `caller -> callee` edges among defined
//! functions, one per line (`#` comments allowed). A name defined in several files of the
//! case is written `name@file`. The test compares the set exactly. An optional
//! `externals.txt` lists `caller -> name` edges to external callees; they must all be present.

use crosscheck::analysis::callgraph::{build_call_graph, CallEdge, SourceUnit};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/callgraph")
}

fn source_files(dir: &Path, base: &Path, out: &mut Vec<(String, Language, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable fixture dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            source_files(&p, base, out);
        } else if let Some(lang) = Language::from_path(&p) {
            let rel = p
                .strip_prefix(base)
                .expect("inside case")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).expect("utf-8 fixture");
            out.push((rel, lang, text));
        }
    }
}

fn read_edges(path: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (a, b) = l
                .split_once("->")
                .unwrap_or_else(|| panic!("bad edge line {l:?} in {path:?}"));
            format!("{} -> {}", a.trim(), b.trim())
        })
        .collect()
}

struct CaseResult {
    languages: BTreeSet<Language>,
    defined: BTreeSet<String>,
    externals: BTreeSet<String>,
}

fn run_case(dir: &Path) -> CaseResult {
    let mut files = Vec::new();
    source_files(dir, dir, &mut files);
    assert!(!files.is_empty(), "{dir:?} has no sources");
    let parsed: Vec<(String, ParsedFile)> = files
        .iter()
        .map(|(p, l, t)| (p.clone(), ParsedFile::parse(*l, t.as_str())))
        .collect();
    let units: Vec<SourceUnit<'_>> = parsed
        .iter()
        .map(|(p, f)| SourceUnit {
            path: p.clone(),
            file: f,
        })
        .collect();
    let edges = build_call_graph(&units, &Cancel::never());
    // Names defined in several files are qualified with their file.
    let mut files_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (p, f) in &parsed {
        for func in crosscheck::syntax::functions::collect_functions(f) {
            files_of.entry(func.name).or_default().insert(p.clone());
        }
    }
    let show = |name: &str, file: &Option<String>| match file {
        Some(f) if files_of.get(name).is_some_and(|s| s.len() > 1) => format!("{name}@{f}"),
        _ => name.to_string(),
    };
    let render = |e: &CallEdge| {
        format!(
            "{} -> {}",
            show(&e.caller.name, &e.caller.file),
            show(&e.callee.name, &e.callee.file)
        )
    };
    CaseResult {
        languages: files.iter().map(|f| f.1).collect(),
        defined: edges
            .iter()
            .filter(|e| !e.callee.is_external())
            .map(render)
            .collect(),
        externals: edges
            .iter()
            .filter(|e| e.callee.is_external())
            .map(render)
            .collect(),
    }
}

fn case_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_root())
        .expect("fixtures exist")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("expected.txt").is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_fixture_case_matches_its_expected_edges() {
    let mut failures = Vec::new();
    let mut languages = BTreeSet::new();
    let dirs = case_dirs();
    for dir in &dirs {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let got = run_case(dir);
        languages.extend(got.languages.iter().copied());
        let want = read_edges(&dir.join("expected.txt"));
        let missing: Vec<&String> = want.difference(&got.defined).collect();
        let extra: Vec<&String> = got.defined.difference(&want).collect();
        if !missing.is_empty() || !extra.is_empty() {
            failures.push(format!(
                "{name}:\n  missing {missing:#?}\n  fabricated {extra:#?}"
            ));
        }
        let ext_path = dir.join("externals.txt");
        if ext_path.is_file() {
            let want_ext = read_edges(&ext_path);
            let missing: Vec<&String> = want_ext.difference(&got.externals).collect();
            if !missing.is_empty() {
                failures.push(format!(
                    "{name}: missing externals {missing:#?}\n  got {:#?}",
                    got.externals
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(dirs.len() >= 12, "only {} cases", dirs.len());
    for lang in [
        Language::Python,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Solidity,
    ] {
        assert!(languages.contains(&lang), "no fixture covers {lang}");
    }
}

fn graph(lang: Language, src: &str) -> Vec<CallEdge> {
    let file = ParsedFile::parse(lang, src);
    let units = [SourceUnit {
        path: "hostile".into(),
        file: &file,
    }];
    build_call_graph(&units, &Cancel::never())
}

/// A function `f` plus a caller whose body nests `f(` 300 levels deep, per language.
fn nested_calls(lang: Language, depth: usize) -> String {
    let nest = format!("{}0{}", "f(".repeat(depth), ")".repeat(depth));
    match lang {
        Language::Python => format!("def f(x):\n    return x\n\ndef g():\n    return {nest}\n"),
        Language::Java => format!("class A {{ int f(int x) {{ return x; }} int g() {{ return {nest}; }} }}\n"),
        Language::C | Language::Cpp => format!("int f(int x) {{ return x; }}\nint g(void) {{ return {nest}; }}\n"),
        Language::Solidity => format!(
            "contract A {{ function f(uint x) internal pure returns (uint) {{ return x; }}\n function g() public pure returns (uint) {{ return {nest}; }} }}\n"
        ),
        Language::JavaScript | Language::TypeScript => {
            format!("function f(x) {{ return x; }}\nfunction g() {{ return {nest}; }}\n")
        }
    }
}

#[test]
fn three_hundred_nested_calls_resolve_without_overflow() {
    for lang in Language::ALL {
        let edges = graph(lang, &nested_calls(lang, 300));
        let callees: BTreeSet<(&str, &str)> = edges
            .iter()
            .map(|e| (e.caller.name.as_str(), e.callee.name.as_str()))
            .collect();
        let (g, f) = match lang {
            Language::Java => ("A.g", "A.f"),
            Language::Solidity => ("A.g", "A.f"),
            _ => ("g", "f"),
        };
        assert!(callees.contains(&(g, f)), "{lang}: {callees:?}");
    }
}

/// A function returning a one-line 1 MB expression `1+1+...+1` (about a million nodes deep
/// on one side of the tree): no calls, hence no edges, and above all no stack overflow.
fn one_megabyte_expression(lang: Language) {
    let expr = "1+".repeat(500_000) + "1";
    let src = match lang {
        Language::Python => format!("def g():\n    return {expr}\n"),
        Language::Java => format!("class A {{ int g() {{ return {expr}; }} }}"),
        Language::Solidity => {
            format!("contract A {{ function g() public pure returns (uint) {{ return {expr}; }} }}")
        }
        Language::JavaScript | Language::TypeScript => format!("function g() {{ return {expr}; }}"),
        Language::C | Language::Cpp => format!("int g() {{ return {expr}; }}"),
    };
    assert!(src.len() > 1_000_000);
    assert!(graph(lang, &src).is_empty(), "{lang}");
}

#[test]
fn one_megabyte_expression_python() {
    one_megabyte_expression(Language::Python);
}

#[test]
fn one_megabyte_expression_java() {
    one_megabyte_expression(Language::Java);
}

#[test]
fn one_megabyte_expression_c_and_cpp() {
    one_megabyte_expression(Language::C);
    one_megabyte_expression(Language::Cpp);
}

#[test]
fn one_megabyte_expression_solidity() {
    one_megabyte_expression(Language::Solidity);
}

#[test]
fn one_megabyte_expression_javascript() {
    one_megabyte_expression(Language::JavaScript);
}

#[test]
fn deep_receiver_chains_degrade_to_external() {
    let chain = format!(
        "class A:\n    def m(self):\n        return self{}.m()\n",
        ".next".repeat(3000)
    );
    let edges = graph(Language::Python, &chain);
    assert_eq!(edges.len(), 1);
    assert!(edges.iter().all(|e| e.callee.is_external()));
}

#[test]
fn garbage_and_unbalanced_input_does_not_panic() {
    let samples = [
        "((((((((((",
        "def f(:\n  g(\nclass",
        "class { void h( { f(); int x = ; }",
        "contract C { function k( { k(); } modifier",
        "int main( { return f(g(h(; }",
        "}}}}{{{{ f() ) ) )",
        "new new new Foo(",
        "super().x( self.y.z( this->",
    ];
    for lang in Language::ALL {
        for s in samples {
            let _ = graph(lang, s);
        }
    }
}
