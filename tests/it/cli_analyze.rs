//! `crosscheck analyze` through the real binary: the JSON contract, exit codes, text output.

use crate::common;
use common::*;
use serde_json::Value;

fn analyze_json(args: &[&str]) -> (Value, i32) {
    let mut full = vec!["analyze"];
    full.extend_from_slice(args);
    let out = run(&full);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out.status.code().unwrap_or(-1))
}

fn function<'a>(report: &'a Value, file_suffix: &str, name: &str) -> &'a Value {
    let file = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with(file_suffix))
        .unwrap_or_else(|| panic!("no file {file_suffix}"));
    file["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no function {name} in {file_suffix}"))
}

#[test]
fn bundled_examples_follow_the_contract() {
    let (report, code) = analyze_json(&["examples", "--format", "json"]);
    assert_eq!(code, 0);
    assert_valid_analyze_json(&report);
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 5, "one entry per example file");
    for f in files {
        assert!(
            f["errors"].as_array().unwrap().is_empty(),
            "{}: {:?}",
            f["file"],
            f["errors"]
        );
        for func in f["functions"].as_array().unwrap() {
            assert_cfg_invariants(func);
        }
    }
    for (file, name) in [
        ("inventory.py", "Report.render"),
        ("inventory.py", "main"),
        ("Ledger.java", "Ledger.balance"),
        ("wordfreq.c", "lookup"),
        ("shapes.cpp", "geo::Polygon::perimeter"),
        ("Vault.sol", "Vault.withdraw"),
        ("Vault.sol", "Vault.onlyOwner"),
    ] {
        function(&report, file, name);
    }
    let render = function(&report, "inventory.py", "Report.render");
    assert_eq!(render["signature"], "(self)");
    assert_eq!(render["start_line"], 33);
    // main -> lookup is a call edge among defined functions.
    let edges = report["call_graph"].as_array().unwrap();
    assert!(
        edges.iter().any(|e| e["caller"]["name"] == "main"
            && e["callee"]["name"] == "lookup"
            && e["callee"]["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("inventory.py"))),
        "main -> lookup missing"
    );
    // A data dependency: query depends on name.
    let lookup = function(&report, "inventory.py", "lookup");
    let query_deps: Vec<&str> = lookup["data_dependencies"]["query"]
        .as_array()
        .expect("query has dependencies")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(query_deps.contains(&"name"), "{query_deps:?}");
}

#[test]
fn exit_code_1_when_an_input_cannot_be_analysed_but_others_are() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("ok.py");
    std::fs::write(&good, "def f(x):\n    return x\n").unwrap();
    let missing = dir.path().join("missing.py");
    let unknown = dir.path().join("notes.txt");
    std::fs::write(&unknown, "hello").unwrap();
    let out = run(&[
        "analyze",
        good.to_str().unwrap(),
        missing.to_str().unwrap(),
        unknown.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("missing.py") && stderr.contains("cannot read"),
        "{stderr}"
    );
    assert!(
        stderr.contains("notes.txt") && stderr.contains("unknown language"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid_analyze_json(&v);
    let ok = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("ok.py"))
        .unwrap();
    assert_eq!(ok["functions"][0]["name"], "f");
}

#[test]
fn lang_flag_overrides_detection() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("script");
    std::fs::write(&p, "def g():\n    pass\n").unwrap();
    let (v, code) = analyze_json(&[p.to_str().unwrap(), "--lang", "python"]);
    assert_eq!(code, 0);
    assert_eq!(v["files"][0]["language"], "python");
    assert_eq!(v["files"][0]["functions"][0]["name"], "g");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["analyze"]).status.code(), Some(2));
    assert_eq!(
        run(&["analyze", "x.py", "--lang", "cobol"]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["analyze", "x.py", "--format", "yaml"]).status.code(),
        Some(2)
    );
}

#[test]
fn syntax_errors_are_reported_with_partial_results() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.java");
    std::fs::write(
        &p,
        "class A {\n  int ok(int x) { if (x > 0) { return 1; } return 0; }\n  void bad( { int y = ; }\n}\n",
    )
    .unwrap();
    let (v, code) = analyze_json(&[p.to_str().unwrap()]);
    assert_eq!(code, 0, "a file with syntax errors is still analysed");
    assert_valid_analyze_json(&v);
    let f = &v["files"][0];
    assert!(!f["errors"].as_array().unwrap().is_empty());
    let ok = f["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "A.ok")
        .expect("A.ok parsed");
    assert_eq!(ok["cyclomatic"], 2);
}

#[test]
fn text_format_summarises() {
    let out = run(&["analyze", "examples/inventory.py", "--format", "text"]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("inventory.py (python)"), "{s}");
    assert!(s.contains("Report.render(self)"), "{s}");
    assert!(s.contains("call graph:"), "{s}");
}

#[test]
fn schema_subcommand_prints_the_schema() {
    let out = run(&["schema", "analyze"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["title"], "crosscheck analyze output");
}

#[test]
fn headers_next_to_cpp_sources_are_parsed_as_cpp() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("shape.h"),
        "namespace geo { class Shape { public: virtual double area() const { return 0; } }; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("main.cpp"),
        "#include \"shape.h\"\nint main() { return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("lone.h"),
        "int twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    let (v, code) = analyze_json(&[dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    let lang = |n: &str| {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file"].as_str().unwrap().ends_with(n))
            .unwrap()["language"]
            .clone()
    };
    assert_eq!(lang("shape.h"), "cpp");
    assert_eq!(lang("lone.h"), "cpp", "every .h in a tree with C++ sources");
    let (v, _) = analyze_json(&[dir.path().join("lone.h").to_str().unwrap()]);
    assert_eq!(v["files"][0]["language"], "c", "a header alone is C");
}

/// Snapshot of the text report of one bundled example (functions, CFG, calls, findings).
#[test]
fn text_report_of_an_example_snapshot() {
    let out = run(&["analyze", "examples/inventory.py", "--format", "text"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    expect_test::expect![[r#"
        examples/inventory.py (python): 9 functions, 0 errors
          Item.__init__(self, name, qty, price) lines 12-15: cyclomatic 1, 5 nodes, 4 edges
            self <- name, price, qty
          Item.value(self) lines 17-18: cyclomatic 1, 3 nodes, 2 edges
          Report.__init__(self, items) lines 22-23: cyclomatic 1, 3 nodes, 2 edges
            self <- items
          Report.total(self) lines 25-31: cyclomatic 3, 8 nodes, 9 edges
            item <- self
            total <- item, self
          Report.render(self) lines 33-38: cyclomatic 2, 7 nodes, 7 edges
            item <- self
            lines <- item, self
          open_db(path) lines 41-47: cyclomatic 2, 8 nodes, 8 edges
            conn <- path
          lookup(conn, name) lines 50-57: cyclomatic 2, 9 nodes, 9 edges
            cur <- conn
            query <- name
            row <- conn, cur
          safe_lookup(conn, name) lines 60-64: cyclomatic 1, 6 nodes, 5 edges
            cur <- conn
            row <- conn, cur
          main() lines 67-77: cyclomatic 4, 12 nodes, 14 edges
            item <- conn, who
            items <- conn, item, who
        call graph: 22 edges
          examples/inventory.py:Report.render -> external:"\n".join (line 38)
          examples/inventory.py:Report.render -> external:lines.append (line 36)
          examples/inventory.py:Report.render -> external:lines.append (line 37)
          examples/inventory.py:Report.render -> examples/inventory.py:Report.total (line 37)
          examples/inventory.py:Report.total -> external:item.value (line 30)
          examples/inventory.py:lookup -> external:conn.cursor (line 51)
          examples/inventory.py:lookup -> external:cur.execute (line 53)
          examples/inventory.py:lookup -> external:cur.fetchone (line 54)
          examples/inventory.py:lookup -> examples/inventory.py:Item.__init__ (line 57)
          examples/inventory.py:main -> external:input (line 71)
          examples/inventory.py:main -> external:items.append (line 76)
          examples/inventory.py:main -> external:print (line 77)
          examples/inventory.py:main -> examples/inventory.py:Report.__init__ (line 77)
          examples/inventory.py:main -> examples/inventory.py:Report.render (line 77)
          examples/inventory.py:main -> examples/inventory.py:lookup (line 74)
          examples/inventory.py:main -> examples/inventory.py:open_db (line 68)
          examples/inventory.py:open_db -> external:print (line 45)
          examples/inventory.py:open_db -> external:sqlite3.connect (line 43)
          examples/inventory.py:safe_lookup -> external:conn.cursor (line 61)
          examples/inventory.py:safe_lookup -> external:cur.execute (line 62)
          examples/inventory.py:safe_lookup -> external:cur.fetchone (line 63)
          examples/inventory.py:safe_lookup -> examples/inventory.py:Item.__init__ (line 64)
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stdout));
}
