//! Hostile input never crashes or hangs the process (foundation issue): random bytes, 300-level
//! nesting, a 4 MB one-line expression, broken syntax, Latin-1 bytes, empty files. Each case
//! runs the real binary with a deadline; a panic exits 101 and fails, a hang fails.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A small deterministic generator (xorshift64*), so the "random" bytes are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn nested(lang: &str, depth: usize) -> String {
    match lang {
        "py" => {
            let mut s = String::from("def deep(x):\n");
            for i in 0..depth {
                s.push_str(&" ".repeat(4 * (i + 1)));
                s.push_str(if i % 2 == 0 { "if x:\n" } else { "while x:\n" });
            }
            s.push_str(&" ".repeat(4 * (depth + 1)));
            s.push_str("x = x - 1\n");
            s
        }
        _ => {
            let (head, tail) = match lang {
                "java" => ("class A { void deep(int x) {", "} }"),
                "sol" => ("contract A { function deep(uint x) public {", "} }"),
                "js" => ("function deep(x) {", "return x; }"),
                _ => ("int deep(int x) {", "return x; }"),
            };
            let mut s = String::from(head);
            for i in 0..depth {
                s.push_str(if i % 3 == 0 {
                    "if (x) {"
                } else if i % 3 == 1 {
                    "while (x) {"
                } else {
                    "{"
                });
            }
            s.push_str("x = x - 1;");
            s.push_str(&"}".repeat(depth));
            s.push_str(tail);
            s
        }
    }
}

fn long_expression(lang: &str, bytes: usize) -> String {
    let expr = "1+".repeat(bytes / 2) + "1";
    let parens = format!("{}1{}", "(".repeat(300), ")".repeat(300));
    match lang {
        "py" => format!("def f():\n    x = {expr}\n    y = {parens}\n    return x\n"),
        "java" => {
            format!("class A {{ int f() {{ int x = {expr}; int y = {parens}; return x; }} }}")
        }
        "sol" => format!(
            "contract A {{ function f() public returns (uint) {{ uint x = {expr}; return x; }} }}"
        ),
        _ => format!("int f(void) {{ int x = {expr}; int y = {parens}; return x; }}"),
    }
}

fn check_run(dir: &Path, files: &[String], expect_code: &[i32]) -> Value {
    let mut args = vec!["analyze".to_string()];
    args.extend(files.iter().cloned());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_with_deadline(&refs, dir, Duration::from_secs(300));
    let code = out.status.code().unwrap_or(-1);
    assert!(
        expect_code.contains(&code),
        "exit code {code} for {files:?}; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_valid_analyze_json(&v);
    v
}

#[test]
fn deep_nesting_300_levels_in_every_language() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for ext in ["py", "java", "c", "cpp", "sol", "js"] {
        let name = format!("deep.{ext}");
        std::fs::write(dir.path().join(&name), nested(ext, 300)).unwrap();
        files.push(name);
    }
    let v = check_run(dir.path(), &files, &[0]);
    for f in v["files"].as_array().unwrap() {
        let funcs = f["functions"].as_array().unwrap();
        assert_eq!(funcs.len(), 1, "{}", f["file"]);
        assert_cfg_invariants(&funcs[0]);
    }
}

#[test]
fn four_megabyte_one_line_expression() {
    // One process per file: each gets the whole deadline (a 4 MB expression takes seconds to
    // parse alone, and several such files in one run only add up).
    let dir = tempfile::tempdir().unwrap();
    for ext in ["py", "java", "c", "sol"] {
        let name = format!("long.{ext}");
        std::fs::write(dir.path().join(&name), long_expression(ext, 4 << 20)).unwrap();
        let v = check_run(dir.path(), std::slice::from_ref(&name), &[0]);
        assert_eq!(v["files"].as_array().unwrap().len(), 1, "{name}");
        for f in v["files"].as_array().unwrap() {
            for func in f["functions"].as_array().unwrap() {
                assert_cfg_invariants(func);
            }
        }
    }
}

#[test]
fn random_bytes_latin1_empty_and_broken_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut files = Vec::new();
    // Random bytes (will contain NUL: refused as binary).
    let bytes: Vec<u8> = (0..65_536).map(|_| rng.next() as u8).collect();
    std::fs::write(dir.path().join("random.c"), &bytes).unwrap();
    files.push("random.c".to_string());
    // Random printable ASCII: parsed, full of syntax errors.
    for ext in ["py", "java", "c", "cpp", "sol"] {
        let text: String = (0..20_000)
            .map(|_| {
                let alphabet = b"abcxyz019 (){}[];:,.+-*/=<>!&|\"'\n\t#if while for return";
                alphabet[(rng.next() % alphabet.len() as u64) as usize] as char
            })
            .collect();
        let name = format!("noise.{ext}");
        std::fs::write(dir.path().join(&name), text).unwrap();
        files.push(name);
    }
    std::fs::write(
        dir.path().join("latin1.py"),
        b"# caf\xe9\ndef f():\n    return 1\n",
    )
    .unwrap();
    files.push("latin1.py".into());
    std::fs::write(dir.path().join("empty.java"), b"").unwrap();
    files.push("empty.java".into());
    std::fs::write(
        dir.path().join("broken.py"),
        "def f(:\n  if x\n    return (\n",
    )
    .unwrap();
    files.push("broken.py".into());
    let v = check_run(dir.path(), &files, &[1]);
    let by_name = |n: &str| {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file"] == n)
            .unwrap_or_else(|| panic!("{n}"))
            .clone()
    };
    assert_eq!(by_name("random.c")["analysed"], false);
    assert!(by_name("random.c")["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("binary"));
    assert_eq!(by_name("latin1.py")["analysed"], false);
    assert!(by_name("latin1.py")["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("UTF-8"));
    assert_eq!(by_name("empty.java")["analysed"], true);
    assert!(by_name("noise.py")["errors"]
        .as_array()
        .is_some_and(|e| !e.is_empty()));
    for f in v["files"].as_array().unwrap() {
        for func in f["functions"].as_array().unwrap() {
            assert_cfg_invariants(func);
        }
    }
}

#[test]
fn oversized_files_are_refused_per_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.py"), "x = 1\n".repeat(1000)).unwrap();
    std::fs::write(dir.path().join("small.py"), "def f():\n    pass\n").unwrap();
    let out = run_with_deadline(
        &["analyze", "big.py", "small.py", "--max-file-size", "1000"],
        dir.path(),
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let big = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "big.py")
        .unwrap();
    assert!(big["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("limit"));
    let small = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "small.py")
        .unwrap();
    assert_eq!(small["functions"][0]["name"], "f");
}
