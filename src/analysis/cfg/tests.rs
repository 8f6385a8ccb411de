//! One test per convention of the module docs. Nodes are named `kind:text` (`entry`, `exit`
//! for the two ends), edges `from -kind-> to`.

use super::*;
use crate::syntax::functions::collect_functions;
use crate::syntax::Language;
use EdgeKind::{Back, Case, Exception, Fallthrough, False, Jump, True};

fn cfg_with(lang: Language, src: &str, name: &str, cancel: &Cancel) -> Cfg {
    let file = ParsedFile::parse(lang, src);
    let funcs = collect_functions(&file);
    let Some(f) = funcs.iter().find(|f| f.name == name) else {
        let names: Vec<&str> = funcs.iter().map(|f| f.name.as_str()).collect();
        panic!("no function {name} in {names:?}");
    };
    build_cfg(&file, f, cancel)
}

/// Builds the CFG of `name` and checks the shape invariants.
fn cfg(lang: Language, src: &str, name: &str) -> Cfg {
    let g = cfg_with(lang, src, name, &Cancel::never());
    let v = g.shape_violations();
    assert!(v.is_empty(), "{v:?}\n{}", g.to_dot());
    g
}

fn label(g: &Cfg, n: NodeIndex) -> String {
    let w = &g.graph[n];
    match w.kind {
        NodeKind::Entry | NodeKind::Exit => w.kind.name().to_string(),
        k => format!("{}:{}", k.name(), w.text),
    }
}

fn labels(g: &Cfg) -> Vec<String> {
    g.graph.node_indices().map(|n| label(g, n)).collect()
}

/// Number of edges `from -kind-> to` (parallel edges counted).
fn count(g: &Cfg, from: &str, kind: EdgeKind, to: &str) -> usize {
    g.graph
        .edge_references()
        .filter(|e| {
            label(g, e.source()) == from && label(g, e.target()) == to && *e.weight() == kind
        })
        .count()
}

fn assert_edge(g: &Cfg, from: &str, kind: EdgeKind, to: &str) {
    assert_eq!(
        count(g, from, kind, to),
        1,
        "edge {from} -{}-> {to}\n{}",
        kind.name(),
        g.to_dot()
    );
}

fn node_count(g: &Cfg, l: &str) -> usize {
    labels(g).iter().filter(|x| *x == l).count()
}

// ----- layout and node classification --------------------------------------------------

#[test]
fn simple_statements_are_call_or_normal_python() {
    let src = "async def f(a):\n    x = g(a)\n    y = a + 1\n    await h()\n    z: int = await k()\n    print(y)\n    return y\n";
    let g = cfg(Language::Python, src, "f");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "call:x = g(a)",
            "normal:y = a + 1",
            "call:await h()",
            "call:z: int = await k()",
            "call:print(y)",
            "return:return y",
            "exit"
        ]
    );
    assert_eq!(g.cyclomatic(), 1);
    assert_edge(&g, "return:return y", Jump, "exit");
}

#[test]
fn simple_statements_are_call_or_normal_c_family() {
    let java = "class A { void f() { int x = foo(); x += bar(); new Thread(); int y = 1 + 2; this.z = y; } }";
    assert_eq!(
        labels(&cfg(Language::Java, java, "A.f")),
        vec![
            "entry",
            "call:int x = foo();",
            "call:x += bar();",
            "call:new Thread();",
            "normal:int y = 1 + 2;",
            "normal:this.z = y;",
            "exit"
        ]
    );
    let c = "void f(void) { int x = g(1); x = x * 2; h(x); ; int y; }";
    assert_eq!(
        labels(&cfg(Language::C, c, "f")),
        vec![
            "entry",
            "call:int x = g(1);",
            "normal:x = x * 2;",
            "call:h(x);",
            "normal:int y;",
            "exit"
        ]
    );
    let js = "async function f() { const a = await f(); let b = 1; obj.m(); b = new Foo(); }";
    assert_eq!(
        labels(&cfg(Language::JavaScript, js, "f")),
        vec![
            "entry",
            "call:const a = await f();",
            "normal:let b = 1;",
            "call:obj.m();",
            "call:b = new Foo();",
            "exit"
        ]
    );
    let sol =
        "contract C { event E(uint); function f() public { uint x = g(); emit E(x); x = 1; } }";
    assert_eq!(
        labels(&cfg(Language::Solidity, sol, "C.f")),
        vec![
            "entry",
            "call:uint x = g();",
            "call:emit E(x);",
            "normal:x = 1;",
            "exit"
        ]
    );
}

#[test]
fn entry_is_the_parameter_list_and_exit_the_function_end() {
    let src = "\n\ndef f(a, b):\n    pass\n    pass\n";
    let g = cfg(Language::Python, src, "f");
    let entry = &g.graph[g.entry];
    let exit = &g.graph[g.exit];
    assert_eq!(
        (entry.kind, entry.line, entry.text.as_str()),
        (NodeKind::Entry, 3, "(a, b)")
    );
    assert_eq!(&src[entry.range.clone()], "(a, b)");
    assert_eq!((exit.kind, exit.line), (NodeKind::Exit, 5));
    assert!(exit.range.is_empty());
    assert_eq!(exit.range.start, src.trim_end().len());
    // Solidity keeps its parameters as direct children; a modifier without parentheses has
    // an empty entry range at the function start.
    let sol = "contract C { modifier m { _; } function f(uint a, uint b) public returns (uint) { return a; } }";
    let g = cfg(Language::Solidity, sol, "C.f");
    assert_eq!(g.graph[g.entry].text, "(uint a, uint b)");
    let g = cfg(Language::Solidity, sol, "C.m");
    assert!(g.graph[g.entry].range.is_empty());
    assert_eq!(g.graph[g.entry].range.start, sol.find("modifier").unwrap());
    let c = "static int *f(int a, char **b) { return 0; }";
    assert_eq!(
        cfg(Language::C, c, "f").graph[NodeIndex::new(0)].text,
        "(int a, char **b)"
    );
}

#[test]
fn nodes_are_in_document_order_with_entry_first_and_exit_last() {
    let src = "void f(int n) {\n  for (int i = 0; i < n; i++) {\n    g(i);\n  }\n  do {\n    h();\n  } while (n--);\n}\n";
    let g = cfg(Language::C, src, "f");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "normal:int i = 0;",
            "loop:i < n",
            "normal:i++",
            "call:g(i);",
            "call:h();",
            "loop:n--",
            "exit"
        ]
    );
    let lines: Vec<usize> = g.graph.node_weights().map(|w| w.line).collect();
    assert_eq!(lines, vec![1, 2, 2, 2, 3, 6, 7, 8]);
}

#[test]
fn node_text_is_the_first_line_capped_at_80_chars() {
    let long = "x".repeat(100);
    let src = format!("def f():\n    g(1,\n      2)\n    {long} = 1\n");
    let g = cfg(Language::Python, &src, "f");
    assert_eq!(labels(&g)[1], "call:g(1,");
    assert_eq!(g.graph[NodeIndex::new(2)].text.chars().count(), 80);
}

// ----- if / elif / else -----------------------------------------------------------------

#[test]
fn if_else_has_true_and_false_edges() {
    let src =
        "int f(int x) {\n  if (x > 0) {\n    a();\n  } else {\n    b();\n  }\n  return x;\n}\n";
    let g = cfg(Language::C, src, "f");
    assert_edge(&g, "entry", Fallthrough, "branch:x > 0");
    assert_edge(&g, "branch:x > 0", True, "call:a();");
    assert_edge(&g, "branch:x > 0", False, "call:b();");
    assert_edge(&g, "call:a();", Fallthrough, "return:return x;");
    assert_edge(&g, "call:b();", Fallthrough, "return:return x;");
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn empty_then_block_gives_parallel_edges_to_the_successor() {
    let g = cfg(
        Language::Java,
        "class A { void f(boolean c) { if (c) {} d(); } }",
        "A.f",
    );
    assert_eq!(count(&g, "branch:c", True, "call:d();"), 1);
    assert_eq!(count(&g, "branch:c", False, "call:d();"), 1);
    assert_eq!(g.graph.edge_count(), 4);
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn elif_chain_branches_on_each_condition() {
    let src = "def f(x):\n    if x == 1:\n        a()\n    elif x == 2:\n        b()\n    else:\n        c()\n";
    let g = cfg(Language::Python, src, "f");
    assert_edge(&g, "branch:x == 1", False, "branch:x == 2");
    assert_edge(&g, "branch:x == 2", True, "call:b()");
    assert_edge(&g, "branch:x == 2", False, "call:c()");
    assert_eq!(g.cyclomatic(), 3);
    // Without else, the last condition's false edge goes to the successor.
    let src = "def f(x):\n    if x:\n        a()\n    elif y:\n        b()\n    z()\n";
    let g = cfg(Language::Python, src, "f");
    assert_edge(&g, "branch:y", False, "call:z()");
    assert_eq!(g.cyclomatic(), 3);
}

#[test]
fn else_if_chains_are_flat_and_cost_no_depth() {
    let mut src = String::from("int f(int x) {\n  if (x == 0) return 0;\n");
    for i in 1..1000 {
        src.push_str(&format!("  else if (x == {i}) return {i};\n"));
    }
    src.push_str("  else return -1;\n}\n");
    let g = cfg(Language::C, &src, "f");
    assert!(!g.partial, "{:?}", g.errors);
    assert_eq!(g.cyclomatic(), 1000 + 1);
    let sol = "contract C { function f(uint x) public { if (x == 1) { a(); } else if (x == 2) { b(); } else { c(); } } }";
    let g = cfg(Language::Solidity, sol, "C.f");
    assert_edge(&g, "branch:x == 1", False, "branch:x == 2");
    assert_edge(&g, "branch:x == 2", False, "call:c();");
    assert_eq!(g.cyclomatic(), 3);
}

// ----- loops ----------------------------------------------------------------------------

#[test]
fn while_loop_has_true_back_and_false_edges_even_when_always_true() {
    let g = cfg(
        Language::Java,
        "class A { void f() { while (true) { a(); } b(); } }",
        "A.f",
    );
    assert_edge(&g, "loop:true", True, "call:a();");
    assert_edge(&g, "call:a();", Back, "loop:true");
    assert_edge(&g, "loop:true", False, "call:b();");
    assert_eq!(g.cyclomatic(), 2);
    let g = cfg(
        Language::Python,
        "def f():\n    while True:\n        pass\n",
        "f",
    );
    assert_edge(&g, "loop:True", False, "exit");
    assert_edge(&g, "normal:pass", Back, "loop:True");
}

#[test]
fn for_each_loop_node_covers_the_header() {
    let g = cfg(
        Language::Python,
        "def f(xs):\n    for x in xs:\n        g(x)\n",
        "f",
    );
    assert_edge(&g, "loop:for x in xs:", True, "call:g(x)");
    assert_edge(&g, "call:g(x)", Back, "loop:for x in xs:");
    let g = cfg(
        Language::Java,
        "class A { void f() { for (String s : xs) use(s); } }",
        "A.f",
    );
    assert_edge(&g, "loop:for (String s : xs)", True, "call:use(s);");
    let g = cfg(
        Language::Cpp,
        "void f() { for (auto &v : xs) { use(v); } }",
        "f",
    );
    assert_edge(&g, "loop:for (auto &v : xs)", True, "call:use(v);");
    let g = cfg(
        Language::JavaScript,
        "function f() { for (const v of xs) use(v); }",
        "f",
    );
    assert_edge(&g, "loop:for (const v of xs)", False, "exit");
}

#[test]
fn python_loop_else_runs_on_exhaustion_and_break_skips_it() {
    let src = "def f(xs):\n    for x in xs:\n        if x:\n            break\n        a()\n    else:\n        b()\n    c()\n";
    let g = cfg(Language::Python, src, "f");
    assert_edge(&g, "loop:for x in xs:", False, "call:b()");
    assert_edge(&g, "jump:break", Jump, "call:c()");
    assert_edge(&g, "branch:x", False, "call:a()");
    assert_edge(&g, "call:a()", Back, "loop:for x in xs:");
    assert_edge(&g, "call:b()", Fallthrough, "call:c()");
    assert_eq!(g.cyclomatic(), 3);
}

#[test]
fn c_for_has_init_update_and_continue_goes_to_update() {
    let src = "void f(int n) {\n  for (int i = 0; i < n; i++) {\n    if (i == 2) continue;\n    g(i);\n  }\n}\n";
    let g = cfg(Language::C, src, "f");
    assert_edge(&g, "entry", Fallthrough, "normal:int i = 0;");
    assert_edge(&g, "normal:int i = 0;", Fallthrough, "loop:i < n");
    assert_edge(&g, "jump:continue;", Jump, "normal:i++");
    assert_edge(&g, "call:g(i);", Fallthrough, "normal:i++");
    assert_edge(&g, "normal:i++", Back, "loop:i < n");
    assert_edge(&g, "loop:i < n", False, "exit");
    assert_eq!(g.cyclomatic(), 3);
    // Java: several init/update expressions form one node each.
    let java = "class A { void f() { for (i = 0, j = 9; i < j; i++, j--) { g(); } } }";
    let g = cfg(Language::Java, java, "A.f");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "normal:i = 0, j = 9",
            "loop:i < j",
            "normal:i++, j--",
            "call:g();",
            "exit"
        ]
    );
}

#[test]
fn infinite_for_still_has_a_false_edge() {
    let g = cfg(
        Language::C,
        "void f(int x) { for (;;) { if (x) break; } }",
        "f",
    );
    assert_edge(&g, "loop:for (;;)", False, "exit");
    assert_edge(&g, "jump:break;", Jump, "exit");
    assert_edge(&g, "branch:x", False, "loop:for (;;)");
    assert_eq!(g.cyclomatic(), 3);
    let g = cfg(Language::JavaScript, "function f() { for (;;) {} }", "f");
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn do_while_checks_after_the_body_and_loops_back_to_its_first_node() {
    let src = "void f(int x) { do { a(); x--; } while (x > 0); b(); }";
    let g = cfg(Language::C, src, "f");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "call:a();",
            "normal:x--;",
            "loop:x > 0",
            "call:b();",
            "exit"
        ]
    );
    assert_edge(&g, "entry", Fallthrough, "call:a();");
    assert_edge(&g, "normal:x--;", Fallthrough, "loop:x > 0");
    assert_edge(&g, "loop:x > 0", Back, "call:a();");
    assert_edge(&g, "loop:x > 0", False, "call:b();");
    assert_eq!(g.cyclomatic(), 2);
    let sol = "contract C { function f(uint x) public { do { if (x == 3) continue; x--; } while (x > 0); } }";
    let g = cfg(Language::Solidity, sol, "C.f");
    assert_edge(&g, "jump:continue;", Jump, "loop:x > 0");
    assert_edge(&g, "loop:x > 0", Back, "branch:x == 3");
    assert_eq!(g.cyclomatic(), 3);
}

// ----- jumps ----------------------------------------------------------------------------

#[test]
fn labelled_break_and_continue_target_the_named_loop() {
    let src = "class A { void f(int[][] m) {\n outer:\n for (int[] row : m) {\n  for (int v : row) {\n   if (v < 0) continue outer;\n   if (v == 0) break outer;\n  }\n }\n done();\n} }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(&g, "jump:continue outer;", Jump, "loop:for (int[] row : m)");
    assert_edge(&g, "jump:break outer;", Jump, "call:done();");
    assert_edge(
        &g,
        "loop:for (int v : row)",
        False,
        "loop:for (int[] row : m)",
    );
    assert_eq!(g.cyclomatic(), 5);
}

#[test]
fn break_out_of_a_labelled_block() {
    let g = cfg(
        Language::JavaScript,
        "function f(x) { lbl: { if (x) break lbl; a(); } b(); }",
        "f",
    );
    assert_edge(&g, "jump:break lbl;", Jump, "call:b();");
    assert_edge(&g, "call:a();", Fallthrough, "call:b();");
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn goto_jumps_to_the_label_node() {
    let src = "int f(int x) {\n  if (x) goto out;\n  a();\nout:\n  return x;\n}\n";
    let g = cfg(Language::C, src, "f");
    assert_edge(&g, "jump:goto out;", Jump, "normal:out:");
    assert_edge(&g, "call:a();", Fallthrough, "normal:out:");
    assert_edge(&g, "normal:out:", Fallthrough, "return:return x;");
    assert_eq!(g.cyclomatic(), 2);
    // A backward goto forming an endless loop: exit exists but is unreachable.
    let g = cfg(Language::C, "void f(void) { L: goto L; }", "f");
    assert!(!g.exit_reachable());
    assert_eq!(g.graph.node_count(), 4);
    assert_edge(&g, "jump:goto L;", Jump, "normal:L:");
}

#[test]
fn return_jumps_to_exit_and_unreachable_code_is_dropped() {
    let g = cfg(
        Language::Python,
        "def f():\n    return 1\n    dead()\n",
        "f",
    );
    assert_eq!(labels(&g), vec!["entry", "return:return 1", "exit"]);
    assert_eq!(g.cyclomatic(), 1);
}

#[test]
fn assert_and_require_branch_to_exit() {
    let g = cfg(
        Language::Python,
        "def f(x):\n    assert x > 0\n    g(x)\n",
        "f",
    );
    assert_edge(&g, "branch:assert x > 0", False, "exit");
    assert_edge(&g, "branch:assert x > 0", True, "call:g(x)");
    assert_eq!(g.cyclomatic(), 2);
    let g = cfg(
        Language::Java,
        "class A { void f(int x) { assert x > 0 : \"neg\"; g(); } }",
        "A.f",
    );
    assert_edge(&g, "branch:assert x > 0 : \"neg\";", False, "exit");
    let g = cfg(Language::C, "void f(int *p) { assert(p != 0); g(p); }", "f");
    assert_edge(&g, "branch:assert(p != 0);", False, "exit");
    let sol = "contract C { function f(uint x) public { require(x > 0, \"no\"); y = x; assert(y > 0); } }";
    let g = cfg(Language::Solidity, sol, "C.f");
    assert_edge(&g, "branch:require(x > 0, \"no\");", False, "exit");
    assert_edge(&g, "branch:require(x > 0, \"no\");", True, "normal:y = x;");
    // Only `require` is an assertion in Solidity; `assert(...)` stays a call.
    assert_eq!(node_count(&g, "call:assert(y > 0);"), 1);
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn revert_and_throw_outside_try_go_to_exit_as_exceptions() {
    let sol = "contract C { error Bad(uint); function f(uint x) public { if (x == 0) { revert Bad(x); } y = x; } }";
    let g = cfg(Language::Solidity, sol, "C.f");
    assert_edge(&g, "jump:revert Bad(x);", Exception, "exit");
    assert_eq!(g.cyclomatic(), 2);
    let g = cfg(
        Language::JavaScript,
        "function f(x) { if (!x) throw new Error('no'); return x; }",
        "f",
    );
    assert_edge(&g, "jump:throw new Error('no');", Exception, "exit");
    let g = cfg(
        Language::Python,
        "def f():\n    raise ValueError('x')\n",
        "f",
    );
    assert_edge(&g, "jump:raise ValueError('x')", Exception, "exit");
}

// ----- try ------------------------------------------------------------------------------

#[test]
fn try_node_has_one_exception_edge_per_handler() {
    let src = "class A { void f() {\n try {\n  a();\n } catch (IOException e) {\n  b();\n } catch (RuntimeException e) {\n  c();\n }\n d();\n} }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(&g, "try:try {", Fallthrough, "call:a();");
    assert_edge(&g, "try:try {", Exception, "except:catch (IOException e)");
    assert_edge(
        &g,
        "try:try {",
        Exception,
        "except:catch (RuntimeException e)",
    );
    assert_edge(&g, "except:catch (IOException e)", Fallthrough, "call:b();");
    assert_edge(&g, "call:a();", Fallthrough, "call:d();");
    assert_eq!(g.cyclomatic(), 3);
}

#[test]
fn throw_goes_to_the_handler_matching_its_type() {
    let src = "class A { void f(int x) {\n try {\n  if (x > 0) throw new IllegalStateException(\"x\");\n  a();\n } catch (IOException e) {\n  b();\n } catch (IllegalStateException e) {\n  c();\n } catch (Exception e) {\n  d();\n }\n} }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(
        &g,
        "jump:throw new IllegalStateException(\"x\");",
        Exception,
        "except:catch (IllegalStateException e)",
    );
    assert_eq!(g.successors(NodeIndex::new(3)).len(), 1);
    let cpp = "void f() { try { throw std::runtime_error(\"x\"); } catch (const std::logic_error &e) {} catch (const std::runtime_error &e) { g(); } }";
    let g = cfg(Language::Cpp, cpp, "f");
    assert_edge(
        &g,
        "jump:throw std::runtime_error(\"x\");",
        Exception,
        "except:catch (const std::runtime_error &e)",
    );
    let sol = "contract C { function f(uint x) public { try this.g() { if (x == 0) revert Oops(); revert(\"no\"); } catch Panic(uint c) { a(); } catch Error(string memory r) { b(); } catch (bytes memory d) { c(); } } }";
    let g = cfg(Language::Solidity, sol, "C.f");
    // `Oops` matches no handler by name: the catch-all `(bytes memory d)` takes it; a plain
    // `revert("..")` has no type name either.
    assert_edge(
        &g,
        "jump:revert Oops();",
        Exception,
        "except:catch (bytes memory d)",
    );
    assert_edge(
        &g,
        "jump:revert(\"no\");",
        Exception,
        "except:catch (bytes memory d)",
    );
    assert_eq!(g.cyclomatic(), 5);
}

#[test]
fn unmatched_throw_goes_to_catch_all_else_first_handler() {
    let py = "def f():\n    try:\n        raise KeyError('k')\n    except ValueError:\n        a()\n    except:\n        b()\n";
    let g = cfg(Language::Python, py, "f");
    assert_edge(&g, "jump:raise KeyError('k')", Exception, "except:except:");
    let java = "class A { void f(Exception e) { try { throw e; } catch (IOException x) { a(); } catch (SQLException y) { b(); } } }";
    let g = cfg(Language::Java, java, "A.f");
    assert_edge(
        &g,
        "jump:throw e;",
        Exception,
        "except:catch (IOException x)",
    );
    let java = "class A { void f() { try { throw new Foo(); } catch (IOException x) { a(); } catch (Throwable t) { b(); } } }";
    let g = cfg(Language::Java, java, "A.f");
    assert_edge(
        &g,
        "jump:throw new Foo();",
        Exception,
        "except:catch (Throwable t)",
    );
    let cpp = "void f() { try { throw 1; } catch (int e) {} catch (...) { g(); } }";
    let g = cfg(Language::Cpp, cpp, "f");
    assert_edge(&g, "jump:throw 1;", Exception, "except:catch (...)");
    let py = "def f():\n    try:\n        raise Boom()\n    except (KeyError, Exception) as e:\n        a()\n";
    let g = cfg(Language::Python, py, "f");
    assert_edge(
        &g,
        "jump:raise Boom()",
        Exception,
        "except:except (KeyError, Exception) as e:",
    );
}

#[test]
fn throw_in_a_handler_leaves_through_the_enclosing_context() {
    let src = "class A { void f() { try { a(); } catch (IOException e) { throw new RuntimeException(e); } } }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(&g, "jump:throw new RuntimeException(e);", Exception, "exit");
    // Nested: the inner handler's throw is caught by the outer try.
    let py = "def f():\n    try:\n        try:\n            a()\n        except KeyError:\n            raise ValueError()\n    except ValueError:\n        b()\n";
    let g = cfg(Language::Python, py, "f");
    assert_edge(
        &g,
        "jump:raise ValueError()",
        Exception,
        "except:except ValueError:",
    );
}

#[test]
fn finally_is_built_once_and_fans_out_to_each_continuation() {
    let src = "class A { int f(int x) {\n try {\n  if (x > 0) return 1;\n  a();\n } catch (Exception e) {\n  b();\n } finally {\n  c();\n }\n return 0;\n} }";
    let g = cfg(Language::Java, src, "A.f");
    assert_eq!(node_count(&g, "call:c();"), 1);
    assert_edge(&g, "return:return 1;", Jump, "call:c();");
    assert_edge(&g, "call:a();", Fallthrough, "call:c();");
    assert_edge(&g, "call:b();", Fallthrough, "call:c();");
    assert_edge(&g, "call:c();", Fallthrough, "return:return 0;");
    assert_edge(&g, "call:c();", Jump, "exit");
    assert_eq!(g.cyclomatic(), 4);
}

#[test]
fn break_through_finally_continues_to_the_loop_successor() {
    let src = "def f(xs):\n    for x in xs:\n        try:\n            if x:\n                break\n            g(x)\n        finally:\n            h()\n    done()\n";
    let g = cfg(Language::Python, src, "f");
    assert_edge(&g, "jump:break", Jump, "call:h()");
    assert_edge(&g, "call:h()", Back, "loop:for x in xs:");
    assert_edge(&g, "call:h()", Jump, "call:done()");
    assert_eq!(g.cyclomatic(), 4);
}

#[test]
fn uncaught_throw_and_return_share_one_edge_to_exit_from_finally() {
    let src = "function f(x) { try { if (x) return 1; throw new Error('e'); } finally { g(); } }";
    let g = cfg(Language::JavaScript, src, "f");
    assert_edge(&g, "jump:throw new Error('e');", Exception, "call:g();");
    assert_edge(&g, "return:return 1;", Jump, "call:g();");
    // One edge per distinct continuation: both continue at exit.
    assert_eq!(
        g.successors(NodeIndex::new(g.graph.node_count() - 2)).len(),
        1
    );
    assert_edge(&g, "call:g();", Jump, "exit");
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn finally_that_always_returns_swallows_other_continuations() {
    let src = "class A { int f(int[] xs) { for (int x : xs) { try { if (x > 0) break; g(); } finally { return 2; } } return 0; } }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(&g, "jump:break;", Jump, "return:return 2;");
    assert_edge(&g, "call:g();", Fallthrough, "return:return 2;");
    assert_edge(&g, "return:return 2;", Jump, "exit");
    let ret2 = labels(&g)
        .iter()
        .position(|l| l == "return:return 2;")
        .unwrap();
    assert_eq!(g.successors(NodeIndex::new(ret2)), vec![(g.exit, Jump)]);
    assert_edge(&g, "loop:for (int x : xs)", False, "return:return 0;");
    // loop (+1), if (+1); the loop's false edge still reaches `return 0`
    assert_eq!(g.cyclomatic(), 3);
    // Nested: the break never gets past the inner finally, so the outer finally only
    // continues towards exit (for the `return 2`), not to the loop's successor.
    let src = "class A { int f(int[] xs) { for (int x : xs) { try { try { if (x > 0) break; g(); } finally { return 2; } } finally { h(); } } return 0; } }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(&g, "return:return 2;", Jump, "call:h();");
    let h = labels(&g).iter().position(|l| l == "call:h();").unwrap();
    assert_eq!(g.successors(NodeIndex::new(h)), vec![(g.exit, Jump)]);
    assert_eq!(g.cyclomatic(), 3);
}

#[test]
fn empty_finally_is_transparent() {
    let src = "class A { int f() { try { return g(); } finally { } } }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(&g, "return:return g();", Jump, "exit");
    assert_eq!(g.cyclomatic(), 1);
}

#[test]
fn python_try_else_runs_after_the_body() {
    let src = "def f():\n    try:\n        a()\n    except ValueError:\n        b()\n    else:\n        c()\n    finally:\n        d()\n    e()\n";
    let g = cfg(Language::Python, src, "f");
    assert_edge(&g, "call:a()", Fallthrough, "call:c()");
    assert_edge(&g, "call:c()", Fallthrough, "call:d()");
    assert_edge(&g, "call:b()", Fallthrough, "call:d()");
    assert_edge(&g, "call:d()", Fallthrough, "call:e()");
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn try_with_resources_has_a_resource_node() {
    let src = "class A { void f() { try (var r = open()) { r.read(); } catch (IOException e) { log(e); } } }";
    let g = cfg(Language::Java, src, "A.f");
    assert_edge(
        &g,
        "try:try (var r = open()) { r.read(); } catch (IOException e) { log(e); }",
        Fallthrough,
        "normal:(var r = open())",
    );
    assert_edge(&g, "normal:(var r = open())", Fallthrough, "call:r.read();");
    assert_eq!(g.cyclomatic(), 2);
}

// ----- switch / match -------------------------------------------------------------------

#[test]
fn switch_falls_through_with_one_case_edge_per_label() {
    let src = "int f(int x) {\n switch (x) {\n  case 1:\n  case 2:\n   a();\n   break;\n  case 3:\n   b();\n  default:\n   c();\n }\n return 0;\n}\n";
    let g = cfg(Language::C, src, "f");
    assert_eq!(count(&g, "branch:x", Case, "call:a();"), 2);
    assert_edge(&g, "branch:x", Case, "call:b();");
    assert_edge(&g, "branch:x", Case, "call:c();");
    assert_edge(&g, "call:b();", Fallthrough, "call:c();");
    assert_edge(&g, "jump:break;", Jump, "return:return 0;");
    assert_eq!(count(&g, "branch:x", Case, "return:return 0;"), 0);
    assert_eq!(g.cyclomatic(), 4);
}

#[test]
fn switch_without_default_has_an_extra_case_edge_to_the_successor() {
    let src = "function f(x) { switch (x) { case 1: a(); break; case 2: b(); break; } c(); }";
    let g = cfg(Language::JavaScript, src, "f");
    assert_edge(&g, "branch:x", Case, "call:c();");
    assert_eq!(g.cyclomatic(), 3);
    let java = "class A { void f(int x) { switch (x) { case 1: a(); } } }";
    let g = cfg(Language::Java, java, "A.f");
    assert_edge(&g, "branch:x", Case, "exit");
    assert_edge(&g, "call:a();", Fallthrough, "exit");
    assert_eq!(g.cyclomatic(), 2);
}

#[test]
fn java_arrow_switch_has_one_case_edge_per_rule_and_no_fall_through() {
    let src = "class A { void f(int x) { switch (x) { case 1, 2 -> a(); case 3 -> { b(); } default -> c(); } d(); } }";
    let g = cfg(Language::Java, src, "A.f");
    for s in ["call:a();", "call:b();", "call:c();"] {
        assert_edge(&g, "branch:x", Case, s);
        assert_edge(&g, s, Fallthrough, "call:d();");
    }
    assert_eq!(g.cyclomatic(), 3);
}

#[test]
fn switch_expressions_add_no_nodes() {
    let src = "class A { int f(int x) { int y = switch (x) { case 1 -> 10; default -> { yield 20; } }; return y; } }";
    let g = cfg(Language::Java, src, "A.f");
    assert_eq!(g.graph.node_count(), 4);
    assert_eq!(g.cyclomatic(), 1);
}

#[test]
fn python_match_has_one_case_edge_per_clause() {
    let src = "def f(cmd):\n    match cmd:\n        case 'go':\n            go()\n        case 'stop' | 'halt':\n            stop()\n        case _:\n            other()\n";
    let g = cfg(Language::Python, src, "f");
    assert_edge(&g, "branch:cmd", Case, "call:go()");
    assert_edge(&g, "branch:cmd", Case, "call:other()");
    assert_eq!(count(&g, "branch:cmd", Case, "exit"), 0);
    assert_eq!(g.cyclomatic(), 3);
    let refutable = "def f(p):\n    match p:\n        case (0, y):\n            a()\n        case _ if p:\n            b()\n    c()\n";
    let g = cfg(Language::Python, refutable, "f");
    assert_edge(&g, "branch:p", Case, "call:c()");
    assert_eq!(g.cyclomatic(), 3);
    let capture = "def f(p):\n    match p:\n        case None:\n            a()\n        case other:\n            b()\n";
    assert_eq!(cfg(Language::Python, capture, "f").cyclomatic(), 2);
}

// ----- inlined constructs ---------------------------------------------------------------

#[test]
fn python_with_has_a_header_node_before_its_body() {
    let src =
        "def f(p):\n    with open(p) as fh, lock:\n        data = fh.read()\n    return data\n";
    let g = cfg(Language::Python, src, "f");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "call:with open(p) as fh, lock:",
            "call:data = fh.read()",
            "return:return data",
            "exit"
        ]
    );
    let g = cfg(
        Language::Python,
        "def f():\n    with lock:\n        pass\n",
        "f",
    );
    assert_eq!(labels(&g)[1], "normal:with lock:");
}

#[test]
fn blocks_synchronized_unchecked_and_preprocessor_bodies_are_inlined() {
    let java = "class A { void f() { { a(); } synchronized (this) { b(); } } }";
    assert_eq!(
        labels(&cfg(Language::Java, java, "A.f")),
        vec!["entry", "call:a();", "call:b();", "exit"]
    );
    let sol = "contract C { function f(uint a) public { unchecked { a++; } g(a); } }";
    assert_eq!(
        labels(&cfg(Language::Solidity, sol, "C.f")),
        vec!["entry", "normal:a++;", "call:g(a);", "exit"]
    );
    let c = "void f(void) {\n#ifdef DEBUG\n  log();\n#else\n  quiet();\n#endif\n  run();\n}\n";
    assert_eq!(
        labels(&cfg(Language::C, c, "f")),
        vec![
            "entry",
            "call:log();",
            "call:quiet();",
            "call:run();",
            "exit"
        ]
    );
}

#[test]
fn nested_functions_classes_and_lambdas_are_separate() {
    let src = "def outer(xs):\n    def inner(y):\n        if y:\n            return 1\n        return 2\n    class K:\n        pass\n    k = lambda z: z if z else 0\n    return [inner(x) for x in xs if x and k(x)]\n";
    let g = cfg(Language::Python, src, "outer");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "normal:def inner(y):",
            "normal:class K:",
            "normal:k = lambda z: z if z else 0",
            "return:return [inner(x) for x in xs if x and k(x)]",
            "exit"
        ]
    );
    assert_eq!(g.cyclomatic(), 1);
    assert_eq!(cfg(Language::Python, src, "outer.inner").cyclomatic(), 2);
    let lam = cfg(Language::Python, src, "outer.<lambda@8>");
    assert_eq!(labels(&lam), vec!["entry", "normal:z if z else 0", "exit"]);
    let js = "function f(xs) { return xs.map(x => { if (x) return 1; return 2; }); }";
    assert_eq!(cfg(Language::JavaScript, js, "f").cyclomatic(), 1);
    assert_eq!(
        cfg(Language::JavaScript, js, "f.<lambda@1>").cyclomatic(),
        2
    );
}

#[test]
fn expression_bodied_lambdas_are_one_node() {
    let src = "class A { void f() { g(x -> switch (x) { case 1 -> 10; default -> 20; }); } }";
    let g = cfg(Language::Java, src, "A.f.<lambda@1>");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "normal:switch (x) { case 1 -> 10; default -> 20; }",
            "exit"
        ]
    );
    let g = cfg(
        Language::JavaScript,
        "const double = (x) => twice(x);",
        "double",
    );
    assert_eq!(labels(&g), vec!["entry", "call:twice(x)", "exit"]);
}

#[test]
fn short_circuit_and_conditional_expressions_add_no_nodes() {
    let g = cfg(
        Language::C,
        "int f(int a, int b) { int x = a && b || !a ? 1 : 2; return x; }",
        "f",
    );
    assert_eq!(g.cyclomatic(), 1);
}

#[test]
fn solidity_modifier_placeholder_is_a_normal_node() {
    let sol = "contract C { event E(uint v); modifier only() { require(msg.sender == owner); _; } function f(uint v) public only { emit E(v); } }";
    let g = cfg(Language::Solidity, sol, "C.only");
    assert_edge(
        &g,
        "branch:require(msg.sender == owner);",
        True,
        "normal:_;",
    );
    assert_edge(&g, "normal:_;", Fallthrough, "exit");
    assert_eq!(g.cyclomatic(), 2);
    assert_eq!(
        labels(&cfg(Language::Solidity, sol, "C.f")),
        vec!["entry", "call:emit E(v);", "exit"]
    );
}

#[test]
fn functions_without_body_are_entry_to_exit() {
    let java = "interface I { void m(int a); }";
    let g = cfg(Language::Java, java, "I.m");
    assert_eq!(labels(&g), vec!["entry", "exit"]);
    assert_edge(&g, "entry", Fallthrough, "exit");
    assert_eq!(g.cyclomatic(), 1);
}

#[test]
fn cpp_function_try_block_is_a_try_statement() {
    let src = "int f(int x) try { return g(x); } catch (...) { return 0; }";
    let g = cfg(Language::Cpp, src, "f");
    assert_edge(
        &g,
        "try:try { return g(x); } catch (...) { return 0; }",
        Exception,
        "except:catch (...)",
    );
    assert_eq!(g.cyclomatic(), 2);
}

// ----- robustness -----------------------------------------------------------------------

#[test]
fn syntax_error_region_is_one_normal_node_and_the_rest_is_built() {
    let src = "class A { void f(int x) {\n a();\n int = = ;\n if (x) { b(); }\n} }";
    let g = cfg(Language::Java, src, "A.f");
    assert!(g.partial);
    assert!(
        g.errors
            .iter()
            .any(|e| e.message == builder::SYNTAX_ERROR && e.line == 3),
        "{:?}",
        g.errors
    );
    assert_eq!(node_count(&g, "call:a();"), 1);
    assert_eq!(node_count(&g, "call:b();"), 1);
    assert_eq!(node_count(&g, "branch:x"), 1);
    let py = "def f(x):\n    a()\n    x = = 2\n    if x:\n        b()\n";
    let g = cfg(Language::Python, py, "f");
    assert!(g.partial);
    assert_eq!(labels(&g)[2], "normal:x = = 2");
    assert_eq!(node_count(&g, "call:a()"), 1);
    assert_eq!(node_count(&g, "call:b()"), 1);
    // An ERROR region inside a loop body, plus a MISSING token in another statement: both
    // lines are reported, the loop keeps its shape.
    let c = "int f(int x) {\n  a();\n  x = 1 + ;\n  while (x) { b(; x--; }\n  return x;\n}\n";
    let g = cfg(Language::C, c, "f");
    let lines: Vec<usize> = g.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![3, 4], "{:?}", g.errors);
    assert_edge(&g, "normal:x--;", Back, "loop:x");
    assert_edge(&g, "loop:x", False, "return:return x;");
}

#[test]
fn nesting_beyond_the_depth_limit_collapses_into_one_node() {
    let depth = MAX_DEPTH + 50;
    let src = format!(
        "void f(int x) {{\n{}g();\n{}}}\n",
        "while (x) {\n".repeat(depth),
        "}\n".repeat(depth)
    );
    let g = cfg(Language::C, &src, "f");
    assert!(g.partial);
    assert!(
        g.errors.iter().any(|e| e.message.contains("nested deeper")),
        "{:?}",
        g.errors
    );
    // Each level costs two stack levels (the loop and its block).
    let loops = g
        .graph
        .node_weights()
        .filter(|w| w.kind == NodeKind::Loop)
        .count();
    assert_eq!(loops, MAX_DEPTH / 2);
    assert_eq!(g.cyclomatic(), loops as i64 + 1);
}

#[test]
fn cancelled_build_returns_a_well_formed_partial_graph() {
    let cancel = Cancel::new();
    cancel.cancel();
    let g = cfg_with(
        Language::Python,
        "def f():\n    a()\n    b()\n",
        "f",
        &cancel,
    );
    assert!(g.partial);
    assert!(g.errors.iter().any(|e| e.message.contains("cancelled")));
    assert!(g.shape_violations().is_empty());
    assert_eq!(labels(&g), vec!["entry", "exit"]);
}

#[test]
fn building_twice_gives_identical_graphs() {
    let src = "def f(xs):\n    for x in xs:\n        try:\n            if x: break\n        except E:\n            continue\n        finally:\n            g()\n";
    let a = cfg(Language::Python, src, "f");
    let b = cfg(Language::Python, src, "f");
    assert_eq!(a.to_dot(), b.to_dot());
}

#[test]
fn successors_and_dot_rendering() {
    let g = cfg(Language::Python, "def f(x):\n    if x:\n        a()\n", "f");
    let b = NodeIndex::new(1);
    assert_eq!(
        g.successors(b),
        vec![(NodeIndex::new(2), True), (g.exit, False)]
    );
    assert_eq!(g.predecessors(g.exit).len(), 2);
    let dot = g.to_dot();
    assert!(dot.starts_with("digraph cfg {"));
    assert!(dot.contains("n1 -> n2 [label=\"true\"]"), "{dot}");
    assert!(dot.contains("[label=\"branch L2: x\"]"), "{dot}");
}

#[test]
fn preprocessor_arms_are_alternatives_not_a_sequence() {
    // A `return` in the `#if` arm leaves the `#elif` and `#else` arms reachable.
    let c = "int f(int x) {\n#ifdef HAVE_A\n  return a(x);\n#elif HAVE_B\n  b(x);\n  return 1;\n#else\n  return c(x);\n#endif\n}\n";
    let g = cfg(Language::C, c, "f");
    assert_eq!(
        labels(&g),
        vec![
            "entry",
            "return:return a(x);",
            "call:b(x);",
            "return:return 1;",
            "return:return c(x);",
            "exit"
        ]
    );
    assert_edge(&g, "entry", EdgeKind::Fallthrough, "return:return a(x);");
    assert_edge(&g, "entry", EdgeKind::Fallthrough, "call:b(x);");
    assert_edge(&g, "entry", EdgeKind::Fallthrough, "return:return c(x);");
    // Without `#else` the arm may be compiled out: control also passes around it.
    let c = "void f(void) {\n#ifdef DEBUG\n  log();\n  return;\n#endif\n  run();\n}\n";
    let g = cfg(Language::C, c, "f");
    assert_edge(&g, "entry", EdgeKind::Fallthrough, "call:run();");
    assert_edge(&g, "entry", EdgeKind::Fallthrough, "call:log();");
}

#[test]
fn case_labels_inside_preprocessor_arms_belong_to_the_switch() {
    let c = "int f(int x) {\n  switch (x) {\n  case 1:\n    a();\n    break;\n#ifdef HAVE_B\n  case 2:\n    b();\n    break;\n#endif\n  case 3:\n    c();\n    break;\n  }\n  return 0;\n}\n";
    let g = cfg(Language::C, c, "f");
    assert_edge(&g, "branch:x", EdgeKind::Case, "call:a();");
    assert_edge(&g, "branch:x", EdgeKind::Case, "call:b();");
    assert_edge(&g, "branch:x", EdgeKind::Case, "call:c();");
    // A label opened from an arm nested in the previous case's statements.
    let c = "int f(int x) {\n  switch (x) {\n  case 1:\n    a();\n    break;\n#if defined(B)\n  case 2:\n    b();\n    break;\n#endif\n  }\n  return 0;\n}\n";
    let g = cfg(Language::C, c, "f");
    assert_edge(&g, "branch:x", EdgeKind::Case, "call:b();");
}

#[test]
fn iteration_macros_taking_a_block_are_loops() {
    let c = "int f(void) {\n  TAILQ_FOREACH(loop, &clients, entry) {\n    if (skip(loop))\n      continue;\n    return 1;\n  }\n  return -1;\n}\n";
    let g = cfg(Language::C, c, "f");
    assert_eq!(
        node_count(&g, "loop:TAILQ_FOREACH(loop, &clients, entry)"),
        1
    );
    assert_edge(
        &g,
        "loop:TAILQ_FOREACH(loop, &clients, entry)",
        EdgeKind::False,
        "return:return -1;",
    );
    assert_edge(
        &g,
        "jump:continue;",
        EdgeKind::Jump,
        "loop:TAILQ_FOREACH(loop, &clients, entry)",
    );
}

#[test]
fn a_long_elif_chain_costs_no_stack() {
    let mut c = String::from("int f(int x) {\n#if A0\n  return 0;\n");
    for i in 1..20000 {
        c.push_str(&format!("#elif A{i}\n  return {i};\n"));
    }
    c.push_str("#endif\n  return -1;\n}\n");
    let g = cfg_with(Language::C, &c, "f", &Cancel::never());
    // Every arm is reachable, and so is the path around the chain (no `#else`).
    assert_eq!(node_count(&g, "return:return -1;"), 1);
    assert!(g.graph.node_count() > 20000);
}
