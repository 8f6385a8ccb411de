//! Helpers shared by the integration tests: run the real binary with a deadline, validate JSON.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_crosscheck"))
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `crosscheck ARGS`, killing it after `deadline` (the test then fails: a hang is a bug).
pub fn run_with_deadline(args: &[&str], cwd: &Path, deadline: Duration) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn crosscheck");
    // Drain pipes on threads so a large output cannot block the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).ok();
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).ok();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("crosscheck {args:?} did not finish within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}

pub fn run(args: &[&str]) -> Output {
    run_with_deadline(args, &root(), Duration::from_secs(120))
}

/// Validates a JSON value against the `analyze` schema, panicking with every violation.
pub fn assert_valid_analyze_json(value: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(crosscheck::analysis::report::ANALYZE_SCHEMA).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .take(20)
        .collect();
    assert!(
        errors.is_empty(),
        "output violates the analyze schema:\n{}",
        errors.join("\n")
    );
}

/// Structural CFG invariants every function must satisfy.
pub fn assert_cfg_invariants(func: &serde_json::Value) {
    let name = func["name"].as_str().unwrap_or("?");
    let nodes = func["cfg"]["nodes"].as_array().expect("nodes");
    let edges = func["cfg"]["edges"].as_array().expect("edges");
    let n = nodes.len();
    assert!(n >= 2, "{name}: at least entry and exit");
    for (i, node) in nodes.iter().enumerate() {
        assert_eq!(node["id"].as_u64(), Some(i as u64), "{name}: ids are 0..n");
    }
    assert_eq!(nodes[0]["kind"], "entry", "{name}: node 0 is entry");
    assert_eq!(nodes[n - 1]["kind"], "exit", "{name}: last node is exit");
    let entries = nodes.iter().filter(|x| x["kind"] == "entry").count();
    let exits = nodes.iter().filter(|x| x["kind"] == "exit").count();
    assert_eq!(
        (entries, exits),
        (1, 1),
        "{name}: exactly one entry and one exit"
    );
    let mut succ = vec![Vec::new(); n];
    for e in edges {
        let (a, b) = (
            e["from"].as_u64().unwrap() as usize,
            e["to"].as_u64().unwrap() as usize,
        );
        assert!(a < n && b < n, "{name}: edge endpoints exist");
        succ[a].push(b);
    }
    let mut seen = vec![false; n];
    let mut stack = vec![0];
    while let Some(x) = stack.pop() {
        if !std::mem::replace(&mut seen[x], true) {
            stack.extend(succ[x].iter().copied());
        }
    }
    for (i, s) in seen.iter().enumerate().take(n - 1) {
        assert!(*s, "{name}: node {i} unreachable from entry");
    }
    assert!(succ[n - 1].is_empty(), "{name}: exit has no successors");
    let cyclomatic = edges.len() as i64 - n as i64 + 2;
    assert_eq!(
        func["cyclomatic"].as_i64(),
        Some(cyclomatic),
        "{name}: cyclomatic = E - N + 2"
    );
}

/// A public data set under `../shared/datasets/NAME` (or the directory the environment variable
/// `env` names), present when `marker` exists inside it. Missing, it fails the test when
/// `CROSSCHECK_REQUIRE_DATASETS` is set (`.ci/run` sets it, so CI never passes without the data);
/// otherwise the caller skips, and says so on stderr.
pub fn dataset(name: &str, env: Option<&str>, marker: &str) -> Option<PathBuf> {
    let dir = env
        .and_then(std::env::var_os)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/datasets")
                .join(name)
        });
    if dir.join(marker).exists() {
        return Some(dir);
    }
    let how = env.map_or(String::new(), |e| format!(" (or set {e})"));
    assert!(
        std::env::var_os("CROSSCHECK_REQUIRE_DATASETS").is_none(),
        "data set {name} is missing: {} not found{how}, and CROSSCHECK_REQUIRE_DATASETS is set",
        dir.join(marker).display()
    );
    eprintln!(
        "data set {name} not found at {}{how}; skipped",
        dir.display()
    );
    None
}
