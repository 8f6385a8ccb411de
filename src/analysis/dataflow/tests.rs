//! Unit tests: one per extraction rule, plus the solver, chains, dependencies and control
//! dependence on hand-built CFGs (independent of the CFG builder).

use super::extract::{extract_range, NodeFacts};
use super::*;
use crate::analysis::cfg::{CfgNode, EdgeKind};
use crate::syntax::functions::collect_functions;
use petgraph::graph::Graph;

fn parse(lang: Language, src: &str) -> ParsedFile {
    ParsedFile::parse(lang, src)
}

/// Byte range of the `nth` occurrence of `snippet`.
fn range_of(src: &str, snippet: &str, nth: usize) -> std::ops::Range<usize> {
    let mut from = 0;
    let mut at = None;
    for _ in 0..=nth {
        let i = src[from..]
            .find(snippet)
            .unwrap_or_else(|| panic!("{snippet:?} not in source"))
            + from;
        at = Some(i);
        from = i + 1;
    }
    let s = at.unwrap();
    s..s + snippet.len()
}

/// Facts of the statement `snippet` rendered as `def: var<-{sources} (strong|weak)` and uses.
struct Summary {
    defs: BTreeMap<String, (bool, BTreeSet<String>)>,
    uses: BTreeSet<String>,
}

fn summarise(f: &NodeFacts) -> Summary {
    let defs = f
        .defs
        .iter()
        .map(|d| {
            let srcs = d.sources.iter().map(|&s| f.uses[s].var.clone()).collect();
            (d.var.clone(), (d.strong, srcs))
        })
        .collect();
    let uses = f.uses.iter().map(|u| u.var.clone()).collect();
    Summary { defs, uses }
}

fn facts_of(lang: Language, src: &str, snippet: &str) -> Summary {
    let file = parse(lang, src);
    summarise(&extract_range(
        &file,
        range_of(src, snippet, 0),
        &Cancel::never(),
    ))
}

fn set(xs: &[&str]) -> BTreeSet<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

fn assert_def(s: &Summary, var: &str, strong: bool, sources: &[&str]) {
    let got = s
        .defs
        .get(var)
        .unwrap_or_else(|| panic!("{var} not defined; defs: {:?}", s.defs));
    assert_eq!(got.0, strong, "strength of {var}");
    assert_eq!(got.1, set(sources), "sources of {var}");
}

// ---------------------------------------------------------------- extraction rules

#[test]
fn tuple_assignment_pairs_elements() {
    let s = facts_of(
        Language::Python,
        "def f(c, d):\n    a, b = c, d\n",
        "a, b = c, d",
    );
    assert_def(&s, "a", true, &["c"]);
    assert_def(&s, "b", true, &["d"]);
    let s = facts_of(Language::Python, "def f(p):\n    a, b = p\n", "a, b = p");
    assert_def(&s, "a", true, &["p"]);
    assert_def(&s, "b", true, &["p"]);
}

#[test]
fn chained_assignment_defines_every_target() {
    let s = facts_of(Language::Python, "def f(c):\n    a = b = c\n", "a = b = c");
    assert_def(&s, "a", true, &["c"]);
    assert_def(&s, "b", true, &["c"]);
    let s = facts_of(
        Language::C,
        "void f(int c) { int a, b; a = b = c; }",
        "a = b = c;",
    );
    assert_def(&s, "a", true, &["c"]);
    assert_def(&s, "b", true, &["c"]);
}

#[test]
fn augmented_assignment_defines_and_uses_target() {
    let s = facts_of(Language::Python, "def f(x, y):\n    x += y\n", "x += y");
    assert_def(&s, "x", true, &["x", "y"]);
    assert_eq!(s.uses, set(&["x", "y"]));
    let s = facts_of(
        Language::Java,
        "class A { void f(int x, int y) { x *= y; } }",
        "x *= y;",
    );
    assert_def(&s, "x", true, &["x", "y"]);
}

#[test]
fn increments_define_and_use() {
    for (lang, src, stmt) in [
        (Language::C, "void f(int i) { i++; }", "i++;"),
        (Language::Java, "class A { void f(int i) { --i; } }", "--i;"),
        (
            Language::Solidity,
            "contract C { function f(uint i) public { i++; } }",
            "i++;",
        ),
        (Language::JavaScript, "function f(i) { i--; }", "i--;"),
    ] {
        let s = facts_of(lang, src, stmt);
        assert_def(&s, "i", true, &["i"]);
    }
}

#[test]
fn declarations_define_only_with_initialisers() {
    let s = facts_of(
        Language::C,
        "void f(int b, int d) { int a = b, c = d, e; }",
        "int a = b, c = d, e;",
    );
    assert_def(&s, "a", true, &["b"]);
    assert_def(&s, "c", true, &["d"]);
    assert!(!s.defs.contains_key("e"));
    let s = facts_of(
        Language::Java,
        "class A { void f(int n) { int x = n, y; } }",
        "int x = n, y;",
    );
    assert_def(&s, "x", true, &["n"]);
    assert!(!s.defs.contains_key("y"));
    let s = facts_of(
        Language::Solidity,
        "contract C { function f(uint a) public { uint x = a + 1; } }",
        "uint x = a + 1;",
    );
    assert_def(&s, "x", true, &["a"]);
    let s = facts_of(Language::C, "void f(int n) { int arr[n]; }", "int arr[n];");
    assert!(s.defs.is_empty());
    assert_eq!(s.uses, set(&["n"]));
}

#[test]
fn for_each_targets_depend_on_iterable() {
    let src = "def f(xs):\n    for x in xs:\n        pass\n";
    let s = facts_of(Language::Python, src, "for x in xs");
    assert_def(&s, "x", true, &["xs"]);
    let src = "class A { void f(java.util.List<String> list) { for (String s : list) { g(s); } } }";
    let s = facts_of(Language::Java, src, "for (String s : list) { g(s); }");
    assert_def(&s, "s", true, &["list"]);
    assert!(
        !s.uses.contains("g"),
        "body is a separate node: {:?}",
        s.uses
    );
    let s = facts_of(
        Language::Cpp,
        "void f(V vec) { for (auto &v : vec) { } }",
        "for (auto &v : vec) { }",
    );
    assert_def(&s, "v", true, &["vec"]);
    let s = facts_of(
        Language::JavaScript,
        "function f(ks) { for (const k of ks) {} }",
        "for (const k of ks) {}",
    );
    assert_def(&s, "k", true, &["ks"]);
}

#[test]
fn compound_statement_range_covers_only_its_header() {
    let src = "def f(a, b):\n    if a > b:\n        c = 1\n    while b:\n        b -= 1\n";
    let s = facts_of(Language::Python, src, "if a > b:\n        c = 1");
    assert!(s.defs.is_empty());
    assert_eq!(s.uses, set(&["a", "b"]));
    let s = facts_of(Language::Python, src, "a > b");
    assert_eq!(s.uses, set(&["a", "b"]));
}

#[test]
fn a_node_standing_for_a_whole_compound_statement_walks_its_bodies_weakly() {
    // The CFG builder collapses over-deep nesting into one node with the statement's range.
    let src = "def f(a, x):\n    if a:\n        x = a\n    return x\n";
    let file = parse(Language::Python, src);
    let r = range_of(src, "if a:\n        x = a", 0);
    let s = summarise(&super::extract::extract_statement(
        &file,
        r.clone(),
        &Cancel::never(),
    ));
    assert_def(&s, "x", false, &["a"]);
    let s = summarise(&extract_range(&file, r, &Cancel::never()));
    assert!(s.defs.is_empty(), "a branch node covers its condition only");
}

#[test]
fn with_as_defines_alias() {
    let s = facts_of(
        Language::Python,
        "def f(p):\n    with open(p) as fh:\n        pass\n",
        "with open(p) as fh:\n        pass",
    );
    assert_def(&s, "fh", true, &["p"]);
    assert!(!s.uses.contains("open"));
}

#[test]
fn except_and_catch_define_the_exception_variable() {
    let src = "def f():\n    try:\n        pass\n    except ValueError as e:\n        pass\n";
    let s = facts_of(Language::Python, src, "except ValueError as e:");
    assert_def(&s, "e", true, &[]);
    assert!(
        s.uses.is_empty(),
        "exception type is not a use: {:?}",
        s.uses
    );
    let src = "class A { void f() { try { } catch (IOException e) { } } }";
    let s = facts_of(Language::Java, src, "catch (IOException e)");
    assert_def(&s, "e", true, &[]);
    let s = facts_of(
        Language::JavaScript,
        "function f() { try {} catch (err) {} }",
        "catch (err) {}",
    );
    assert_def(&s, "err", true, &[]);
}

#[test]
fn scanf_out_arguments_define_their_targets() {
    let src = "void f(int i) { int a; int b[9]; char s[9]; int x[9]; scanf(\"%d %d %s %d\", &a, &b[i], s, x + i); printf(\"%d\", a); }";
    let s = facts_of(
        Language::C,
        src,
        "scanf(\"%d %d %s %d\", &a, &b[i], s, x + i);",
    );
    assert_def(&s, "a", true, &["i"]);
    assert_def(&s, "b", false, &["i"]);
    assert_def(&s, "s", false, &["i"]);
    assert_def(&s, "x", false, &["i"]);
    assert!(
        !s.uses.contains("a")
            && !s.uses.contains("b")
            && !s.uses.contains("s")
            && !s.uses.contains("x")
    );
    let s = facts_of(Language::C, src, "printf(\"%d\", a);");
    assert!(s.defs.is_empty());
    assert_eq!(s.uses, set(&["a"]));
}

#[test]
fn address_passed_to_other_calls_is_a_weak_definition() {
    let s = facts_of(
        Language::C,
        "void f(int n) { int x = 0; init(&x, n); }",
        "init(&x, n);",
    );
    assert_def(&s, "x", false, &["x", "n"]);
}

#[test]
fn cin_extraction_defines_operands() {
    let s = facts_of(
        Language::Cpp,
        "void f() { int a, b; std::cin >> a >> b; }",
        "std::cin >> a >> b;",
    );
    assert_def(&s, "a", true, &[]);
    assert_def(&s, "b", true, &[]);
    let s = facts_of(
        Language::Cpp,
        "void f(int a) { int c = a >> 2; }",
        "int c = a >> 2;",
    );
    assert_def(&s, "c", true, &["a"]);
}

#[test]
fn mutating_method_calls_define_the_receiver() {
    let cases = [
        (
            Language::Python,
            "def f(xs, y):\n    xs.append(y)\n",
            "xs.append(y)",
            "xs",
            vec!["xs", "y"],
        ),
        (
            Language::Java,
            "class A { void f(Map m, int k, int v) { m.put(k, v); } }",
            "m.put(k, v);",
            "m",
            vec!["m", "k", "v"],
        ),
        (
            Language::Java,
            "class A { void f(List list, int v) { list.add(v); } }",
            "list.add(v);",
            "list",
            vec!["list", "v"],
        ),
        (
            Language::Cpp,
            "void f(V v, int x) { v.push_back(x); }",
            "v.push_back(x);",
            "v",
            vec!["v", "x"],
        ),
        (
            Language::JavaScript,
            "function f(a, x) { a.push(x); }",
            "a.push(x);",
            "a",
            vec!["a", "x"],
        ),
    ];
    for (lang, src, stmt, var, srcs) in cases {
        let s = facts_of(lang, src, stmt);
        assert_def(&s, var, true, &srcs);
    }
    // Non-mutating calls only read the receiver.
    let s = facts_of(
        Language::Python,
        "def f(q):\n    x = q.get()\n",
        "x = q.get()",
    );
    assert_def(&s, "x", true, &["q"]);
    assert!(!s.defs.contains_key("q"));
    // A class receiver is not defined: `Arrays.fill(a, 0)` writes `a`.
    let s = facts_of(
        Language::Java,
        "class A { void f(int[] a) { Arrays.sort(a); } }",
        "Arrays.sort(a);",
    );
    assert_def(&s, "a", true, &["a", "Arrays"]);
    assert!(!s.defs.contains_key("Arrays"));
    // `fill` overwrites every element: a definition that does not read the old value.
    let s = facts_of(
        Language::Java,
        "class A { void f(int[] a) { Arrays.fill(a, 0); } }",
        "Arrays.fill(a, 0);",
    );
    assert_def(&s, "a", true, &["Arrays"]);
}

#[test]
fn input_reader_calls_do_not_use_the_reader() {
    let s = facts_of(
        Language::Java,
        "class A { void f(Scanner sc) { int n = sc.nextInt(); } }",
        "int n = sc.nextInt();",
    );
    assert_def(&s, "n", true, &[]);
    assert!(s.uses.is_empty());
    let s = facts_of(
        Language::Java,
        "class A { void f(BufferedReader br) { String[] p = br.readLine().split(\" \"); } }",
        "String[] p = br.readLine().split(\" \");",
    );
    assert_def(&s, "p", true, &[]);
}

#[test]
fn field_writes_update_the_base_and_index_writes_are_weak() {
    let s = facts_of(Language::Python, "def f(a, y):\n    a.f = y\n", "a.f = y");
    assert_def(&s, "a", true, &["a", "y"]);
    assert!(!s.uses.contains("f"));
    let s = facts_of(
        Language::Python,
        "def f(a, i, y):\n    a[i] = y\n",
        "a[i] = y",
    );
    assert_def(&s, "a", false, &["i", "y"]);
    assert!(!s.uses.contains("a"));
    let s = facts_of(
        Language::Java,
        "class A { void f(int[][] c, int i, int j) { c[i][j] = 0; } }",
        "c[i][j] = 0;",
    );
    assert_def(&s, "c", false, &["i", "j"]);
    let s = facts_of(
        Language::C,
        "void f(struct S *p, int v) { p->x = v; }",
        "p->x = v;",
    );
    assert_def(&s, "p", true, &["p", "v"]);
    let s = facts_of(
        Language::Solidity,
        "contract C { mapping(address => uint) bal; function f(address to, uint amt) public { bal[to] += amt; } }",
        "bal[to] += amt;",
    );
    assert_def(&s, "bal", false, &["bal", "to", "amt"]);
}

#[test]
fn uses_exclude_callees_attributes_types_and_keyword_names() {
    let s = facts_of(
        Language::Python,
        "def g(a, b):\n    r = f(a, key=b).attr\n",
        "r = f(a, key=b).attr",
    );
    assert_def(&s, "r", true, &["a", "b"]);
    assert_eq!(s.uses, set(&["a", "b"]));
    let s = facts_of(
        Language::Java,
        "class A { void f(Object o) { String s = (String) o; } }",
        "String s = (String) o;",
    );
    assert_def(&s, "s", true, &["o"]);
    let s = facts_of(
        Language::C,
        "void f(int y, int z) { int x = sizeof(int) + (long)y + sizeof z; }",
        "int x = sizeof(int) + (long)y + sizeof z;",
    );
    assert_def(&s, "x", true, &["y"]);
}

#[test]
fn call_arguments_flow_into_the_result() {
    let s = facts_of(
        Language::Python,
        "def g(a, b):\n    r = f(a, b)\n",
        "r = f(a, b)",
    );
    assert_def(&s, "r", true, &["a", "b"]);
    let s = facts_of(
        Language::Java,
        "class A { void g(int a) { int r = Integer.parseInt(s, a); } }",
        "int r = Integer.parseInt(s, a);",
    );
    assert_def(&s, "r", true, &["Integer", "s", "a"]);
}

#[test]
fn closures_contribute_free_variables_only() {
    let s = facts_of(
        Language::Python,
        "def f(xs, k):\n    ys = [x * k for x in xs]\n",
        "ys = [x * k for x in xs]",
    );
    assert_def(&s, "ys", true, &["k", "xs"]);
    let s = facts_of(
        Language::Python,
        "def f(w):\n    h = lambda z: z + w\n",
        "h = lambda z: z + w",
    );
    assert_def(&s, "h", true, &["w"]);
    let s = facts_of(
        Language::Java,
        "class A { void f(int w) { F h = (z) -> z + w; } }",
        "F h = (z) -> z + w;",
    );
    assert_def(&s, "h", true, &["w"]);
    let s = facts_of(
        Language::Cpp,
        "void f(int w) { auto h = [w](int z) { return z + w; }; }",
        "auto h = [w](int z) { return z + w; };",
    );
    assert_def(&s, "h", true, &["w"]);
    let s = facts_of(
        Language::Python,
        "def f(a):\n    def g(b):\n        return a + b\n",
        "def g(b):\n        return a + b",
    );
    assert_def(&s, "g", true, &["a"]);
}

#[test]
fn destructuring_declarations_define_each_name() {
    let s = facts_of(
        Language::JavaScript,
        "function f(obj) { const {p, q: r} = obj; }",
        "const {p, q: r} = obj;",
    );
    assert_def(&s, "p", true, &["obj"]);
    assert_def(&s, "r", true, &["obj"]);
    assert!(!s.defs.contains_key("q"));
    let s = facts_of(
        Language::Cpp,
        "void f(P pr) { auto [m, n] = pr; }",
        "auto [m, n] = pr;",
    );
    assert_def(&s, "m", true, &["pr"]);
    assert_def(&s, "n", true, &["pr"]);
    let s = facts_of(
        Language::Solidity,
        "contract C { function f(uint x) public { (uint p, uint q) = g(x); } }",
        "(uint p, uint q) = g(x);",
    );
    assert_def(&s, "p", true, &["x"]);
    assert_def(&s, "q", true, &["x"]);
}

#[test]
fn parameters_are_defined_at_entry() {
    let cases: [(Language, &str, &[&str]); 6] = [
        (
            Language::Python,
            "def f(a, b=2, *c, d: int = 3, **e):\n    pass\n",
            &["a", "b", "c", "d", "e"],
        ),
        (
            Language::Java,
            "class A { void f(int a, String[] b, int... c) {} }",
            &["a", "b", "c"],
        ),
        (
            Language::C,
            "int f(int a, char *b, int c[]) { return 0; }",
            &["a", "b", "c"],
        ),
        (
            Language::Cpp,
            "int f(int a, const std::string &b) { return 0; }",
            &["a", "b"],
        ),
        (
            Language::Solidity,
            "contract C { function f(uint a, address to) public {} }",
            &["a", "to"],
        ),
        (
            Language::TypeScript,
            "function f(a: number, {b, c: d, h = z}, [e], g = 1, ...rest) {}",
            &["a", "b", "d", "h", "e", "g", "rest"],
        ),
    ];
    for (lang, src, want) in cases {
        let file = parse(lang, src);
        let funcs = collect_functions(&file);
        let func = funcs.first().expect("one function");
        let f = parameter_facts(&file, func, func.start_line, &Cancel::never());
        let got: BTreeSet<String> = f.defs.iter().map(|d| d.var.clone()).collect();
        assert_eq!(got, set(want), "{lang}");
        assert!(f.defs.iter().all(|d| d.line == 1 && d.strong));
        assert!(
            f.uses.is_empty(),
            "defaults are not reads of the function: {:?}",
            f.uses
        );
    }
}

// ---------------------------------------------------------------- hand-built CFGs

/// Builds a CFG: node 0 is the entry (range = the function), then one node per
/// `(kind, snippet)` (found in order from the body's start), then the exit. Edges index that list.
fn cfg(
    file: &ParsedFile,
    func: &Function<'_>,
    nodes: &[(NodeKind, &str)],
    edges: &[(usize, usize, EdgeKind)],
) -> Cfg {
    let mut g = Graph::new();
    let whole = func.node.byte_range();
    let entry = g.add_node(CfgNode {
        kind: NodeKind::Entry,
        line: func.start_line,
        range: whole.clone(),
        text: String::new(),
    });
    let mut from = func.body.map(|b| b.start_byte()).unwrap_or(whole.start);
    for (kind, snippet) in nodes {
        let at = file.text[from..]
            .find(snippet)
            .unwrap_or_else(|| panic!("{snippet:?}"))
            + from;
        from = at + 1;
        g.add_node(CfgNode {
            kind: *kind,
            line: file.line_of(at),
            range: at..at + snippet.len(),
            text: snippet.to_string(),
        });
    }
    let exit = g.add_node(CfgNode {
        kind: NodeKind::Exit,
        line: func.end_line,
        range: whole.end..whole.end,
        text: String::new(),
    });
    for &(a, b, k) in edges {
        g.add_edge(NodeIndex::new(a), NodeIndex::new(b), k);
    }
    Cfg {
        graph: g,
        entry,
        exit,
        partial: false,
        errors: Vec::new(),
    }
}

fn vl(v: &str, l: usize) -> VarLine {
    (v.to_string(), l)
}

fn vls(xs: &[(&str, usize)]) -> BTreeSet<VarLine> {
    xs.iter().map(|&(v, l)| vl(v, l)).collect()
}

use EdgeKind::{Back, Fallthrough as Ft, False, True};
use NodeKind::{Branch, Loop, Normal, Return};

const STRAIGHT: &str = "def f(a, g0):\n    x = a\n    x = 2\n    y = x + g\n    return y\n";

fn straight() -> DataFlow {
    let file = parse(Language::Python, STRAIGHT);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[
            (Normal, "x = a"),
            (Normal, "x = 2"),
            (Normal, "y = x + g"),
            (Return, "return y"),
        ],
        &[(0, 1, Ft), (1, 2, Ft), (2, 3, Ft), (3, 4, Ft), (4, 5, Ft)],
    );
    analyze_cfg(&file, &funcs[0], &c, &Cancel::never())
}

#[test]
fn strong_definitions_kill_earlier_ones() {
    let df = straight();
    assert_eq!(df.use_defs[&vl("x", 4)], vls(&[("x", 3)]));
    assert_eq!(df.direct[&vl("y", 4)], vls(&[("x", 3)]));
    assert_eq!(df.direct[&vl("x", 2)], vls(&[("a", 1)]));
    assert!(df.direct[&vl("x", 3)].is_empty());
    assert!(!df.partial, "{:?}", df.errors);
}

#[test]
fn def_use_chains_list_reached_use_lines() {
    let df = straight();
    let chain = |var: &str, line: usize| {
        df.def_use
            .iter()
            .find(|(d, _)| d.var == var && d.line == line)
            .map(|(_, u)| u.clone())
            .unwrap_or_else(|| panic!("no def {var}@{line}"))
    };
    assert_eq!(chain("a", 1), [2].into());
    assert!(chain("x", 2).is_empty(), "killed before any use");
    assert_eq!(chain("x", 3), [4].into());
    assert_eq!(chain("y", 4), [5].into());
    assert!(chain("g0", 1).is_empty());
}

#[test]
fn transitive_dependencies_include_roots_by_name() {
    let df = straight();
    assert_eq!(df.dependencies["y"], set(&["x", "g"]));
    assert_eq!(df.dependencies["x"], set(&["a"]));
    assert!(df.dependencies["a"].is_empty());
    assert!(df.roots.contains(&vl("g", 4)));
    assert!(
        df.depends_on("y", "g") && !df.depends_on("y", "a"),
        "x = a is killed by x = 2"
    );
}

const BRANCHY: &str = "def f(c, n):\n    if c:\n        x = 1\n    else:\n        x = 2\n    y = x\n    i = 0\n    while i < n:\n        i = i + 1\n    return i\n";

fn branchy() -> DataFlow {
    let file = parse(Language::Python, BRANCHY);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[
            (Branch, "c"),         // 1 (line 2)
            (Normal, "x = 1"),     // 2 (line 3)
            (Normal, "x = 2"),     // 3 (line 5)
            (Normal, "y = x"),     // 4 (line 6)
            (Normal, "i = 0"),     // 5 (line 7)
            (Loop, "i < n"),       // 6 (line 8)
            (Normal, "i = i + 1"), // 7 (line 9)
            (Return, "return i"),  // 8 (line 10)
        ],
        &[
            (0, 1, Ft),
            (1, 2, True),
            (1, 3, False),
            (2, 4, Ft),
            (3, 4, Ft),
            (4, 5, Ft),
            (5, 6, Ft),
            (6, 7, True),
            (7, 6, Back),
            (6, 8, False),
            (8, 9, Ft),
        ],
    );
    analyze_cfg(&file, &funcs[0], &c, &Cancel::never())
}

#[test]
fn definitions_merge_at_joins_and_around_loops() {
    let df = branchy();
    assert_eq!(df.use_defs[&vl("x", 6)], vls(&[("x", 3), ("x", 5)]));
    assert_eq!(df.use_defs[&vl("i", 8)], vls(&[("i", 7), ("i", 9)]));
    assert_eq!(df.direct[&vl("i", 9)], vls(&[("i", 7), ("i", 9)]));
    assert_eq!(df.use_defs[&vl("i", 10)], vls(&[("i", 7), ("i", 9)]));
    assert_eq!(df.dependencies["y"], set(&["x"]), "data only: not c");
    assert_eq!(df.dependencies["i"], set(&[]), "i depends on itself only");
}

#[test]
fn control_dependence_follows_branch_scopes() {
    let df = branchy();
    let cd = df.control_dependencies();
    assert_eq!(cd[&vl("x", 3)], [2].into());
    assert_eq!(cd[&vl("x", 5)], [2].into());
    assert!(cd[&vl("y", 6)].is_empty(), "after the join");
    assert_eq!(cd[&vl("i", 9)], [8].into());
    assert_eq!(cd[&vl("i", 8)], [8].into(), "loop header controls itself");
    assert!(cd[&vl("i", 10)].is_empty());
}

#[test]
fn weak_definitions_do_not_kill() {
    let src = "def f(x):\n    a = [0]\n    a[0] = x\n    y = a\n";
    let file = parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[(Normal, "a = [0]"), (Normal, "a[0] = x"), (Normal, "y = a")],
        &[(0, 1, Ft), (1, 2, Ft), (2, 3, Ft), (3, 4, Ft)],
    );
    let df = analyze_cfg(&file, &funcs[0], &c, &Cancel::never());
    assert_eq!(df.use_defs[&vl("a", 4)], vls(&[("a", 2), ("a", 3)]));
    assert_eq!(df.dependencies["y"], set(&["a", "x"]));
}

#[test]
fn exceptional_edges_do_not_create_control_dependence() {
    let src = "def f(c):\n    if c:\n        g()\n    h = 1\n";
    let file = parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[(Branch, "c"), (NodeKind::Call, "g()"), (Normal, "h = 1")],
        &[
            (0, 1, Ft),
            (1, 2, True),
            (1, 3, False),
            (2, 3, Ft),
            (2, 4, EdgeKind::Exception),
            (3, 4, Ft),
        ],
    );
    let df = analyze_cfg(&file, &funcs[0], &c, &Cancel::never());
    assert!(df.control[&vl("h", 4)].is_empty(), "{:?}", df.control);
}

#[test]
fn undefined_constants_classes_and_modules_are_not_variables() {
    let src = "import math\ndef f(a):\n    b = math.sqrt(a) + MAX_N + Foo.bar + other.x\n";
    let file = parse(Language::Python, src);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[(Normal, "b = math.sqrt(a) + MAX_N + Foo.bar + other.x")],
        &[(0, 1, Ft), (1, 2, Ft)],
    );
    let df = analyze_cfg(&file, &funcs[0], &c, &Cancel::never());
    assert_eq!(df.dependencies["b"], set(&["a", "other"]));
}

#[test]
fn cancelled_analysis_is_partial_and_does_not_panic() {
    let file = parse(Language::Python, STRAIGHT);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[(Normal, "x = a")],
        &[(0, 1, Ft), (1, 2, Ft)],
    );
    let cancel = Cancel::new();
    cancel.cancel();
    let df = analyze_cfg(&file, &funcs[0], &c, &cancel);
    assert!(df.partial);
    assert!(df.errors.iter().any(|e| e.message.contains("cancelled")));
}

#[test]
fn oversized_functions_fall_back_to_flow_insensitive() {
    // 2100 nodes x 2100 definitions exceeds the bit-set budget.
    let n = 2100usize;
    let mut src = String::from("def f():\n");
    for i in 0..n {
        src.push_str(&format!("    v{i} = v{}\n", i.saturating_sub(1)));
    }
    let file = parse(Language::Python, &src);
    let funcs = collect_functions(&file);
    let snippets: Vec<String> = (0..n)
        .map(|i| format!("v{i} = v{}", i.saturating_sub(1)))
        .collect();
    let nodes: Vec<(NodeKind, &str)> = snippets.iter().map(|s| (Normal, s.as_str())).collect();
    let edges: Vec<(usize, usize, EdgeKind)> = (0..=n).map(|i| (i, i + 1, Ft)).collect();
    let c = cfg(&file, &funcs[0], &nodes, &edges);
    let mut facts: Vec<NodeFacts> = c
        .graph
        .node_indices()
        .map(|i| extract_range(&file, c.graph[i].range.clone(), &Cancel::never()))
        .collect();
    // Many more definitions: replicate each node's definition under fresh names.
    for (k, f) in facts.iter_mut().enumerate() {
        for j in 0..(64 * reaching::MAX_SET_WORDS / (n * n) + 2) {
            f.defs.push(DefFact {
                var: format!("w{k}_{j}"),
                line: 1,
                strong: true,
                sources: Vec::new(),
            });
        }
    }
    let df = analyze_facts(&c, &facts, &Cancel::never());
    assert!(df.partial);
    assert!(df
        .errors
        .iter()
        .any(|e| e.message.contains("flow-sensitive")));
    assert!(df.use_defs[&vl("v5", 8)].contains(&vl("v5", 7)));
}

#[test]
fn malformed_facts_do_not_panic() {
    let file = parse(Language::Python, STRAIGHT);
    let funcs = collect_functions(&file);
    let c = cfg(
        &file,
        &funcs[0],
        &[(Normal, "x = a")],
        &[(0, 1, Ft), (1, 2, Ft)],
    );
    // Fewer facts than nodes, sources pointing nowhere.
    let facts = vec![NodeFacts::new(
        vec![DefFact {
            var: "x".into(),
            line: 2,
            strong: true,
            sources: vec![5, 9],
        }],
        Vec::new(),
    )];
    let df = analyze_facts(&c, &facts, &Cancel::never());
    assert!(df.direct[&vl("x", 2)].is_empty());
    let sol = reaching::solve(&[vec![1, 99]], &[], 7, &facts, &Cancel::never());
    assert_eq!(sol.uses.len(), 1);
    assert!(control::post_dominators(&[vec![3]], 5, &Cancel::never()).is_none());
}
