//! `crosscheck equiv --no-llm` on the pairs in `tests/fixtures/equiv/`, through the real binary.
//!
//! Each fixture directory is named `<expected verdict>--<what it is>` and holds `a.<ext>` and
//! `b.<ext>` (one function each). The rules, as judged:
//! * `not_equivalent--*`: refuted with an executed counterexample (verdict `not_equivalent`,
//!   tier `confirmed`, method `differential`, a counterexample whose A and B outcomes differ);
//! * `equivalent--*`: proved by normalisation (verdict `equivalent`, tier `confirmed`);
//! * `likely_equivalent--*`: never refuted; verdict `likely_equivalent` after differential
//!   trials (or `equivalent` if a proof exists), tier `analyzer-only`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/equiv");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixture directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn side(dir: &Path, stem: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_stem().and_then(|s| s.to_str()) == Some(stem))
        .collect();
    found.sort();
    assert_eq!(
        found.len(),
        1,
        "{}: exactly one {stem}.* expected",
        dir.display()
    );
    found.remove(0)
}

fn equiv(a: &Path, b: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json", "--trials", "200"])
        .arg(a)
        .arg(b)
        .env("CROSSCHECK_LLM_BASE_URL", "http://127.0.0.1:9")
        .output()
        .expect("run crosscheck");
    assert!(
        out.status.success(),
        "{} {}: exit {:?}: {}",
        a.display(),
        b.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn check(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let expected = name.split("--").next().unwrap_or("").to_string();
    let a = side(dir, "a");
    let b = side(dir, "b");
    let v = equiv(&a, &b);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    if sorted
        != [
            "counterexample",
            "llm",
            "method",
            "tier",
            "trials",
            "verdict",
        ]
    {
        return Err(format!("{name}: unexpected keys {keys:?}"));
    }
    if !v["llm"].is_null() {
        return Err(format!("{name}: --no-llm must give llm: null"));
    }
    let verdict = v["verdict"].as_str().unwrap_or("");
    let tier = v["tier"].as_str().unwrap_or("");
    let ok = match expected.as_str() {
        "not_equivalent" => {
            let c = &v["counterexample"];
            verdict == "not_equivalent"
                && tier == "confirmed"
                && v["method"] == "differential"
                && c["inputs"].is_array()
                && c["a"] != c["b"]
        }
        "equivalent" => {
            verdict == "equivalent" && tier == "confirmed" && v["method"] == "normalisation"
        }
        "likely_equivalent" => {
            (verdict == "likely_equivalent"
                && tier == "analyzer-only"
                && v["trials"].as_u64().unwrap_or(0) >= 20)
                || (verdict == "equivalent" && tier == "confirmed")
        }
        other => return Err(format!("{name}: unknown expectation `{other}`")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{name}: expected {expected}, got {v}"))
    }
}

#[test]
fn every_fixture_pair_gets_its_expected_verdict() {
    let dirs = fixtures();
    assert!(dirs.len() >= 20, "the fixture set is incomplete");
    // Three workers: javac dominates, and the machine is shared.
    let chunks: Vec<Vec<PathBuf>> = (0..3)
        .map(|w| dirs.iter().skip(w).step_by(3).cloned().collect())
        .collect();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|d| check(d).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn file_colon_function_selects_a_function_and_text_output_names_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("m.py");
    std::fs::write(
        &a,
        "def inc(x: int) -> int:\n    return x + 1\n\ndef dec(x: int) -> int:\n    return x - 1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "text", "--trials", "50"])
        .arg(format!("{}:inc", a.display()))
        .arg(format!("{}:dec", a.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not_equivalent"), "{text}");
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--trials", "50"])
        .arg(format!("{}:inc", a.display()))
        .arg(format!("{}:nosuch", a.display()))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unknown function is an error"
    );
}
