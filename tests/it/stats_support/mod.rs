//! Shared helpers for the `stats_*` integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use clap::Parser;
use crosscheck::cli::stats::{run_with, StatsArgs};
use crosscheck::stats::labels::{LabelSpace, LabelledPairs};
use serde_json::Value;

#[derive(Parser)]
struct Wrapper {
    #[command(flatten)]
    args: StatsArgs,
}

/// Path of a fixture under `tests/fixtures/stats/`.
pub fn fixture(name: &str) -> String {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    p.push("tests/fixtures/stats");
    p.push(name);
    p.to_string_lossy().into_owned()
}

/// Writes `content` to a fresh temporary file and returns its path.
pub fn temp_file(name: &str, content: &[u8]) -> String {
    let mut dir = std::env::temp_dir();
    dir.push(format!("crosscheck-stats-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir.push(name);
    std::fs::write(&dir, content).expect("write temp file");
    dir.to_string_lossy().into_owned()
}

/// Outcome of one `crosscheck stats` invocation.
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    pub fn json(&self) -> Value {
        assert_eq!(self.code, 0, "exit code; stderr: {}", self.stderr);
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

/// Runs `crosscheck stats ARGS` in-process.
pub fn stats(args: &[&str]) -> Outcome {
    let parsed = Wrapper::try_parse_from(std::iter::once("stats").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("arguments rejected: {e}"));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_with(&parsed.args, &mut out, &mut err).expect("writing output");
    Outcome {
        code,
        stdout: String::from_utf8(out).expect("utf-8 stdout"),
        stderr: String::from_utf8(err).expect("utf-8 stderr"),
    }
}

/// `crosscheck stats --input FILE --a A --b B --format json EXTRA...` as JSON.
pub fn stats_json(file: &str, a: &str, b: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--input", file, "--a", a, "--b", b, "--format", "json"];
    args.extend_from_slice(extra);
    stats(&args).json()
}

/// A numeric field of a JSON report (panics if absent or not a number).
pub fn num(v: &Value, key: &str) -> f64 {
    v.pointer(key)
        .or_else(|| v.get(key))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

pub fn assert_close(actual: f64, expected: f64, tol: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: got {actual}, expected {expected} (tolerance {tol})"
    );
}

/// Expands a q×q count matrix (rows = rater a, columns = reference b) into labelled pairs.
pub fn pairs_from_matrix(space: LabelSpace, matrix: &[&[u64]]) -> LabelledPairs {
    let mut pairs = Vec::new();
    for (a, row) in matrix.iter().enumerate() {
        for (b, &count) in row.iter().enumerate() {
            for _ in 0..count {
                pairs.push((a, b));
            }
        }
    }
    LabelledPairs::new(space, pairs)
}
