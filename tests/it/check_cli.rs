//! `crosscheck check` through the real binary: SARIF 2.1.0 validated against the official schema
//! (the copy shipped in the `serde-sarif` crate from crates.io), code flows for taint paths,
//! stable fingerprints, baselines, exit codes per threshold, the JSON and text formats, and
//! hostile input.
//!
//! Fixtures (`tests/fixtures/check/`): `taint/app.py` (a command built from socket data reaches
//! `os.system`: error, with an intermediate step; plus one unreachable statement: warning),
//! `mixed/io.c` (`gets`: error; `printf(who)`: a non-literal format (warning) that the line read
//! by `gets` in the caller reaches (taint error)), `warn/dead.py` (one warning only),
//! `clean/ok.py` (nothing).

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

const TAINT: &str = "tests/fixtures/check/taint";
const MIXED: &str = "tests/fixtures/check/mixed";
const WARN: &str = "tests/fixtures/check/warn";
const CLEAN: &str = "tests/fixtures/check/clean";

fn check_in(cwd: &Path, args: &[&str]) -> Output {
    let mut full = vec!["check"];
    full.extend_from_slice(args);
    run_with_deadline(&full, cwd, Duration::from_secs(120))
}

fn check(args: &[&str]) -> Output {
    check_in(&root(), args)
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}; stdout: {}",
            stderr(out),
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn sarif_in(cwd: &Path, args: &[&str]) -> (Value, i32) {
    let mut full = vec!["--format", "sarif"];
    full.extend_from_slice(args);
    let out = check_in(cwd, &full);
    let v = json_of(&out);
    assert_valid_sarif(&v);
    (v, code(&out))
}

fn sarif(args: &[&str]) -> (Value, i32) {
    sarif_in(&root(), args)
}

/// The host's target triple, as `rustc -vV` reports it.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|| panic!("rustc -vV names no host: {text}"))
}

/// The directory of the `serde-sarif` package as cargo resolved it for this crate.
///
/// `--filter-platform` with the host triple: without it `cargo metadata` wants every package of
/// the resolve, Windows-only ones included, which `cargo build` never downloaded on a fresh
/// machine, and `--offline` then fails (issue 22).
fn serde_sarif_dir() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
        ])
        .arg(host_triple())
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .expect("serde-sarif is a dependency");
    PathBuf::from(pkg["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The official SARIF 2.1.0 JSON schema, as published by OASIS and shipped in `serde-sarif`.
fn official_schema() -> Value {
    let path = serde_sarif_dir().join("src/schema.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    assert_eq!(
        schema["$id"],
        "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
    );
    assert_eq!(
        schema["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    schema
}

fn assert_valid_sarif(v: &Value) {
    let schema = official_schema();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{e} at {}", e.instance_path))
        .take(20)
        .collect();
    assert!(
        errors.is_empty(),
        "output violates the SARIF 2.1.0 schema:\n{}",
        errors.join("\n")
    );
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(1), "one run");
}

fn results(v: &Value) -> &Vec<Value> {
    v["runs"][0]["results"].as_array().expect("results")
}

fn result_for<'a>(v: &'a Value, rule: &str) -> &'a Value {
    results(v)
        .iter()
        .find(|r| r["ruleId"] == rule)
        .unwrap_or_else(|| panic!("no {rule} result in {:#}", v["runs"][0]["results"]))
}

fn line_of(r: &Value) -> u64 {
    r["locations"][0]["physicalLocation"]["region"]["startLine"]
        .as_u64()
        .unwrap()
}

fn fingerprint(r: &Value) -> String {
    r["partialFingerprints"]["crosscheck/v1"]
        .as_str()
        .expect("crosscheck/v1 fingerprint")
        .to_string()
}

// ---------------------------------------------------------------- SARIF shape

#[test]
fn sarif_output_validates_against_the_official_schema() {
    let (v, _) = sarif(&[TAINT, MIXED, WARN, CLEAN]);
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "crosscheck");
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let registry = crosscheck::analysis::rules::RULES;
    assert_eq!(
        rules.len(),
        registry.len(),
        "every registry rule is declared"
    );
    for (declared, rule) in rules.iter().zip(registry) {
        assert_eq!(declared["id"], rule.id);
        assert_eq!(declared["shortDescription"]["text"], rule.name);
        assert_eq!(declared["fullDescription"]["text"], rule.description);
        assert!(declared["help"]["text"]
            .as_str()
            .unwrap()
            .starts_with(rule.description));
        assert_eq!(
            declared["defaultConfiguration"]["level"],
            rule.severity.name()
        );
    }
    assert_eq!(results(&v).len(), 6, "{:#}", run["results"]);
}

#[test]
fn schema_check_rejects_logs_that_break_the_official_schema() {
    let (v, _) = sarif(&[TAINT]);
    let schema = official_schema();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    assert!(validator.is_valid(&v));
    let mut bad_level = v.clone();
    bad_level["runs"][0]["results"][0]["level"] = "fatal".into();
    let mut no_message = v.clone();
    no_message["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    let mut line_zero = v.clone();
    line_zero["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    let mut bad_state = v.clone();
    bad_state["runs"][0]["results"][0]["baselineState"] = "old".into();
    for (what, broken) in [
        ("level", bad_level),
        ("message", no_message),
        ("startLine", line_zero),
        ("baselineState", bad_state),
    ] {
        assert!(
            !validator.is_valid(&broken),
            "a broken {what} must not validate"
        );
    }
}

#[test]
fn locations_are_relative_to_srcroot_declared_as_the_working_directory() {
    let (v, _) = sarif(&[TAINT]);
    let run = &v["runs"][0];
    let base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    let cwd = root().canonicalize().unwrap();
    let expected_base = format!("file://{}/", cwd.display());
    assert_eq!(base, expected_base);
    for r in results(&v) {
        let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(loc["uri"], "tests/fixtures/check/taint/app.py");
        assert_eq!(loc["uriBaseId"], "%SRCROOT%");
    }
}

#[test]
fn taint_finding_has_a_code_flow_from_source_through_steps_to_sink() {
    let (v, _) = sarif(&[TAINT]);
    let r = result_for(&v, "taint-command");
    assert_eq!(line_of(r), 9, "reported at the sink");
    let flows = r["codeFlows"].as_array().expect("codeFlows");
    assert_eq!(flows.len(), 1);
    let locs = flows[0]["threadFlows"][0]["locations"].as_array().unwrap();
    let steps: Vec<(u64, String)> = locs
        .iter()
        .map(|l| {
            (
                l["location"]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
                l["location"]["message"]["text"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    let lines: Vec<u64> = steps.iter().map(|s| s.0).collect();
    assert_eq!(lines, vec![7, 8, 9], "source, step, sink: {steps:?}");
    assert!(steps[0].1.starts_with("source: "), "{steps:?}");
    assert!(steps[0].1.contains("recv"), "{steps:?}");
    assert!(steps[1].1.starts_with("step"), "{steps:?}");
    assert!(steps[2].1.starts_with("sink: "), "{steps:?}");
    assert!(steps[2].1.contains("os.system"), "{steps:?}");
    for (i, l) in locs.iter().enumerate() {
        assert_eq!(l["executionOrder"], i as u64);
    }
    // Findings that are not taint paths carry no code flow.
    assert!(result_for(&v, "unreachable-code")
        .get("codeFlows")
        .is_none());
}

#[test]
fn levels_tiers_and_rule_ids_follow_the_registry() {
    let (v, _) = sarif(&[MIXED, TAINT]);
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for (rule, level) in [
        ("dangerous-gets", "error"),
        ("format-string-not-literal", "warning"),
        ("taint-format-string", "error"),
        ("taint-command", "error"),
        ("unreachable-code", "warning"),
    ] {
        let r = result_for(&v, rule);
        assert_eq!(r["level"], level, "{rule}");
        assert_eq!(r["properties"]["rule"], rule);
        assert_eq!(r["properties"]["tier"], "analyzer-only", "{rule}");
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], rule, "ruleIndex points at the rule");
        assert!(r.get("baselineState").is_none(), "no baseline given");
    }
    assert_eq!(
        result_for(&v, "dangerous-gets")["properties"]["function"],
        "main"
    );
    assert_eq!(
        result_for(&v, "format-string-not-literal")["properties"]["function"],
        "greet"
    );
}

// ---------------------------------------------------------------- fingerprints

const APP: &str = include_str!("../fixtures/check/taint/app.py");

fn fingerprints_by_rule(v: &Value) -> Vec<(String, u64, String)> {
    let mut out: Vec<(String, u64, String)> = results(v)
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_string(),
                line_of(r),
                fingerprint(r),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn fingerprints_survive_lines_inserted_above_and_reindentation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let (before, _) = sarif_in(dir.path(), &["app.py"]);
    let moved = APP.replacen(
        "import os\n",
        "import os\n\n\ndef unrelated():\n    return 42\n\n\n",
        1,
    );
    // Extra spaces inside the sink line do not change its normalised text.
    let moved = moved.replace("os.system(command)", "os.system( command )");
    std::fs::write(dir.path().join("app.py"), moved).unwrap();
    let (after, _) = sarif_in(dir.path(), &["app.py"]);
    let b = fingerprints_by_rule(&before);
    let a = fingerprints_by_rule(&after);
    assert_eq!(b.len(), 2);
    assert_eq!(a.len(), 2);
    for (x, y) in b.iter().zip(&a) {
        assert_eq!(x.0, y.0);
        assert_eq!(y.1, x.1 + 6, "{} moved down six lines", x.0);
        assert_eq!(x.2, y.2, "{} keeps its fingerprint", x.0);
    }
}

#[test]
fn fingerprint_changes_when_the_line_or_its_function_changes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let (before, _) = sarif_in(dir.path(), &["app.py"]);
    let edited = APP
        .replace("os.system(command)", "os.system(command + \" --all\")")
        .replace("def helper():", "def renamed_helper():");
    std::fs::write(dir.path().join("app.py"), edited).unwrap();
    let (after, _) = sarif_in(dir.path(), &["app.py"]);
    for rule in ["taint-command", "unreachable-code"] {
        assert_ne!(
            fingerprint(result_for(&before, rule)),
            fingerprint(result_for(&after, rule)),
            "{rule}"
        );
    }
}

#[test]
fn identical_findings_in_one_function_get_distinct_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("twice.c"),
        "void f(void) {\n    char b[8];\n    gets(b);\n    gets(b);\n}\n",
    )
    .unwrap();
    let (v, _) = sarif_in(dir.path(), &["twice.c"]);
    let fps: Vec<String> = results(&v).iter().map(fingerprint).collect();
    assert_eq!(fps.len(), 2);
    assert_ne!(fps[0], fps[1]);
    assert!(fps[0].ends_with(":1") && fps[1].ends_with(":2"), "{fps:?}");
    assert_eq!(fps[0].split(':').next(), fps[1].split(':').next());
}

// ---------------------------------------------------------------- trust profile

/// A command from `sys.argv` (local) and one from a socket (remote).
const TRUST_APP: &str = "import os, sys\n\ndef local_tool():\n    os.system(\"ls \" + sys.argv[1])\n\ndef server(conn):\n    os.system(\"ls \" + conn.recv(64).decode())\n";

fn severities(v: &Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["function"].as_str().unwrap_or("").to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["trust"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn local_flows_are_notes_unless_the_profile_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), TRUST_APP).unwrap();
    let json = |extra: &[&str]| -> Value {
        let mut args = vec!["app.py", "--format", "json", "--fail-on", "none"];
        args.extend_from_slice(extra);
        let out = check_in(dir.path(), &args);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let row = |f: &str, s: &str, t: &str| (f.to_string(), s.to_string(), t.to_string());
    // Default: remote and stored are reported, local is a note; each names its class.
    let v = json(&[]);
    assert_eq!(
        severities(&v),
        vec![
            row("local_tool", "note", "local"),
            row("server", "error", "remote")
        ]
    );
    let messages: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages[0].contains("local command_line data"),
        "{messages:?}"
    );
    assert!(messages[1].contains("remote network data"), "{messages:?}");
    // `--report` chooses.
    let v = json(&["--report", "remote,stored,local"]);
    assert_eq!(
        severities(&v),
        vec![
            row("local_tool", "error", "local"),
            row("server", "error", "remote")
        ]
    );
    // The nearest crosscheck.toml chooses when --report is absent; --report wins over it.
    std::fs::write(
        dir.path().join("crosscheck.toml"),
        "[taint]\nreport = [\"local\"]\n",
    )
    .unwrap();
    let v = json(&[]);
    assert_eq!(
        severities(&v),
        vec![
            row("local_tool", "error", "local"),
            row("server", "note", "remote")
        ]
    );
    let v = json(&["--report", "remote"]);
    assert_eq!(
        severities(&v),
        vec![
            row("local_tool", "note", "local"),
            row("server", "error", "remote")
        ]
    );
    // SARIF names the class in the result's properties.
    let (s, _) = sarif_in(dir.path(), &["app.py", "--fail-on", "none"]);
    let classes: Vec<&str> = results(&s)
        .iter()
        .map(|r| r["properties"]["trust"].as_str().unwrap())
        .collect();
    assert_eq!(classes, vec!["local", "remote"]);
}

#[test]
fn a_bad_trust_profile_is_reported_and_the_default_applies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), TRUST_APP).unwrap();
    std::fs::write(
        dir.path().join("crosscheck.toml"),
        "[taint]\nreport = [\"public\"]\n",
    )
    .unwrap();
    let out = check_in(
        dir.path(),
        &["app.py", "--format", "json", "--fail-on", "none"],
    );
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains("unknown trust class `public`"),
        "{}",
        stderr(&out)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(severities(&v)[0].1, "note");
    // On the command line it is a usage error.
    let out = check_in(dir.path(), &["app.py", "--report", "everyone"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

/// A project with the same remote flow in its product, its tests, a vendored copy and a
/// generated file.
fn roles_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let server =
        "import os\n\ndef server(conn):\n    os.system(\"ls \" + conn.recv(64).decode())\n";
    for (path, text) in [
        ("proj/app/server.py", server.to_string()),
        ("proj/tests/test_server.py", server.to_string()),
        ("proj/vendor/lib/server.py", server.to_string()),
        (
            "proj/app/parser_gen.py",
            format!("# Code generated by a tool. DO NOT EDIT.\n{server}\ndef dead():\n    return 1\n    x = 2\n"),
        ),
    ] {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// (file, rule, severity, role) of each finding.
fn roles_of(v: &Value) -> Vec<(String, String, String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["role"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn findings_outside_the_product_are_notes_unless_the_profile_reports_their_role() {
    let dir = roles_project();
    let json = |extra: &[&str]| -> Value {
        let mut args = vec!["proj", "--format", "json", "--fail-on", "none"];
        args.extend_from_slice(extra);
        let out = check_in(dir.path(), &args);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let row = |f: &str, r: &str, s: &str, role: &str| {
        (
            f.to_string(),
            r.to_string(),
            s.to_string(),
            role.to_string(),
        )
    };
    // Default: only the product keeps its severity; the generated file also skips the CFG
    // lint (its unreachable statement is not reported).
    assert_eq!(
        roles_of(&json(&[])),
        vec![
            row(
                "proj/app/parser_gen.py",
                "taint-command",
                "note",
                "generated"
            ),
            row("proj/app/server.py", "taint-command", "error", "product"),
            row("proj/tests/test_server.py", "taint-command", "note", "test"),
            row(
                "proj/vendor/lib/server.py",
                "taint-command",
                "note",
                "vendored"
            ),
        ]
    );
    // `--report-files` names the roles that keep their severity.
    let v = json(&["--report-files", "test"]);
    assert_eq!(roles_of(&v)[2].2, "error");
    assert_eq!(roles_of(&v)[3].2, "note");
    // The nearest crosscheck.toml chooses when the flag is absent.
    std::fs::write(
        dir.path().join("proj/crosscheck.toml"),
        "[files]\nreport = [\"vendored\", \"generated\"]\n",
    )
    .unwrap();
    let sev: Vec<String> = roles_of(&json(&[])).into_iter().map(|r| r.2).collect();
    assert_eq!(sev, vec!["error", "error", "note", "error"]);
    // The role is judged below the directory given: asked about the vendored folder itself,
    // its files are the product under study.
    let out = check_in(
        dir.path(),
        &["proj/vendor", "--format", "json", "--fail-on", "none"],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        roles_of(&v),
        vec![row(
            "proj/vendor/lib/server.py",
            "taint-command",
            "error",
            "product"
        )]
    );
    // SARIF names the role of a file that is not the product.
    let (s, _) = sarif_in(dir.path(), &["proj", "--fail-on", "none"]);
    let roles: Vec<Option<&str>> = results(&s)
        .iter()
        .map(|r| r["properties"]["fileRole"].as_str())
        .collect();
    assert_eq!(
        roles,
        vec![Some("generated"), None, Some("test"), Some("vendored")]
    );
    // A bad role on the command line is a usage error.
    let out = check_in(dir.path(), &["proj", "--report-files", "tests"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn syntax_errors_are_notes_naming_the_lines_not_parsed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.py"),
        "def ok():\n    return 1\n\ndef broken(:\n    x = (\n    return 2\n",
    )
    .unwrap();
    let out = check_in(dir.path(), &["broken.py", "--format", "json"]);
    assert_eq!(code(&out), 0, "a note does not fail: {}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "syntax-error");
    assert_eq!(f["severity"], "note");
    assert!(
        f["message"].as_str().unwrap().contains("not analysed"),
        "{f}"
    );
    assert_eq!(
        v["findings"].as_array().unwrap().len(),
        1,
        "one note per file: {v}"
    );
    assert!(!f["evidence"].as_array().unwrap().is_empty());
    let (s, _) = sarif_in(dir.path(), &["broken.py"]);
    let r = result_for(&s, "syntax-error");
    assert_eq!(r["level"], "note");
}

// ---------------------------------------------------------------- baselines

fn baseline_round_trip(baseline_name: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    // Without a baseline the taint error fails the build.
    let out = check_in(dir.path(), &["app.py", "--write-baseline", baseline_name]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(dir.path().join(baseline_name).is_file());

    // Same code against its own baseline: nothing new, nothing fails.
    let (v, exit) = sarif_in(dir.path(), &["app.py", "--baseline", baseline_name]);
    assert_eq!(exit, 0);
    assert_eq!(results(&v).len(), 2);
    for r in results(&v) {
        assert_eq!(r["baselineState"], "unchanged");
    }

    // Code moves and a new injection appears: only the new one fails.
    let grown = APP.replacen("import os\n", "import os\n# a comment\n", 1)
        + "\n\ndef cleanup(conn):\n    target = conn.recv(32).decode()\n    os.system(\"rm -rf \" + target)\n";
    std::fs::write(dir.path().join("app.py"), grown).unwrap();
    let (v, exit) = sarif_in(dir.path(), &["app.py", "--baseline", baseline_name]);
    assert_eq!(exit, 1);
    let new: Vec<&Value> = results(&v)
        .iter()
        .filter(|r| r["baselineState"] == "new")
        .collect();
    assert_eq!(new.len(), 1, "{:#}", v["runs"][0]["results"]);
    assert_eq!(new[0]["ruleId"], "taint-command");
    assert_eq!(new[0]["properties"]["function"], "cleanup");
    assert_eq!(
        results(&v)
            .iter()
            .filter(|r| r["baselineState"] == "unchanged")
            .count(),
        2
    );
}

#[test]
fn sarif_baseline_suppresses_old_findings_and_a_new_one_fails() {
    baseline_round_trip("baseline.sarif");
}

#[test]
fn json_baseline_suppresses_old_findings_and_a_new_one_fails() {
    baseline_round_trip("baseline.json");
}

#[test]
fn suppression_comment_keeps_a_finding_from_failing() {
    let dir = tempfile::tempdir().unwrap();
    let suppressed = APP.replace(
        "    os.system(command)",
        "    # crosscheck: ignore[taint-command]\n    os.system(command)",
    );
    std::fs::write(dir.path().join("app.py"), suppressed).unwrap();
    let (v, exit) = sarif_in(dir.path(), &["app.py"]);
    assert_eq!(exit, 0);
    let r = result_for(&v, "taint-command");
    assert_eq!(r["suppressions"][0]["kind"], "inSource");
}

// ---------------------------------------------------------------- exit codes

#[test]
fn exit_codes_follow_fail_on_and_fail_tier() {
    // (paths, extra flags, expected exit code)
    let table: &[(&str, &[&str], i32)] = &[
        (MIXED, &[], 1),
        (MIXED, &["--fail-on", "error"], 1),
        (MIXED, &["--fail-on", "none"], 0),
        // `check` asks no LLM: its findings are analyzer-only, below `confirmed`.
        (MIXED, &["--fail-tier", "confirmed"], 0),
        (MIXED, &["--fail-tier", "analyzer-only"], 1),
        (WARN, &[], 0),
        (WARN, &["--fail-on", "error"], 0),
        (WARN, &["--fail-on", "warning"], 1),
        (WARN, &["--fail-on", "note"], 1),
        (
            WARN,
            &["--fail-on", "warning", "--fail-tier", "confirmed"],
            0,
        ),
        (CLEAN, &["--fail-on", "note"], 0),
        (CLEAN, &[], 0),
    ];
    for (path, flags, expected) in table {
        let mut args = vec![*path];
        args.extend_from_slice(flags);
        let out = check(&args);
        assert_eq!(code(&out), *expected, "check {args:?}: {}", stderr(&out));
    }
}

#[test]
fn bad_flag_values_are_usage_errors() {
    for args in [
        &[CLEAN, "--fail-on", "critical"][..],
        &[CLEAN, "--fail-tier", "llm-only"][..],
        &[CLEAN, "--format", "xml"][..],
        &[][..],
    ] {
        let out = check(args);
        assert_eq!(code(&out), 2, "check {args:?}");
        assert!(!stderr(&out).is_empty());
    }
}

// ---------------------------------------------------------------- formats

#[test]
fn json_format_lists_findings_with_fingerprints_and_a_summary() {
    let out = check(&[MIXED, "--format", "json", "--fail-on", "warning"]);
    assert_eq!(code(&out), 1);
    let v = json_of(&out);
    assert_eq!(v["tool"], "crosscheck");
    assert_eq!(v["fail_on"], "warning");
    assert_eq!(v["fail_tier"], "analyzer-only");
    let findings = v["findings"].as_array().unwrap();
    let rules: Vec<&str> = findings
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        vec![
            "format-string-not-literal",
            "taint-format-string",
            "dangerous-gets"
        ]
    );
    for f in findings {
        assert_eq!(f["file"], "tests/fixtures/check/mixed/io.c");
        assert_eq!(f["tier"], "analyzer-only");
        assert_eq!(f["fails"], true);
        assert!(f["fingerprint"].as_str().unwrap().contains(':'));
        assert!(f["baseline_state"].is_null());
    }
    assert_eq!(findings[0]["severity"], "warning");
    assert_eq!(findings[2]["severity"], "error");
    assert_eq!(findings[2]["line"], 12);
    assert_eq!(findings[2]["function"], "main");
    let s = &v["summary"];
    assert_eq!(
        (
            s["findings"].as_u64(),
            s["errors"].as_u64(),
            s["warnings"].as_u64()
        ),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(s["failing"], 3);
    assert_eq!(s["exit_code"], 1);
}

#[test]
fn text_format_lists_one_line_per_finding_and_a_summary() {
    let out = check(&[TAINT, "--format", "text"]);
    assert_eq!(code(&out), 1);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("tests/fixtures/check/taint/app.py:9: error[taint-command]"),
        "{text}"
    );
    assert!(text.contains("(analyzer-only, fails)"), "{text}");
    assert!(
        text.contains("tests/fixtures/check/taint/app.py:14: warning[unreachable-code]"),
        "{text}"
    );
    assert!(
        text.contains("    source tests/fixtures/check/taint/app.py:7"),
        "{text}"
    );
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("2 finding(s): 1 error, 1 warning"),
        "{last}"
    );
    assert!(last.ends_with("exit 1"), "{last}");
}

#[test]
fn output_flag_writes_the_report_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.sarif");
    let out = check(&[
        TAINT,
        "--format",
        "sarif",
        "--output",
        target.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1);
    assert!(out.stdout.is_empty());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_valid_sarif(&v);
    assert_eq!(results(&v).len(), 2);
}

// ---------------------------------------------------------------- hostile input

#[test]
fn missing_path_is_an_error_with_a_clear_message() {
    let out = check(&[
        "tests/fixtures/check/does-not-exist.py",
        "--format",
        "sarif",
    ]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("does-not-exist.py"), "{err}");
    assert!(err.contains("cannot read file"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let v = json_of(&out);
    assert_valid_sarif(&v);
    let inv = &v["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert_eq!(inv["toolExecutionNotifications"][0]["level"], "error");
}

#[test]
fn binary_and_invalid_utf8_files_named_explicitly_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("blob.py"),
        b"\x7fELF\x00\x01\x02\x00\x00binary",
    )
    .unwrap();
    std::fs::write(dir.path().join("latin1.py"), b"x = '\xe9t\xe9'\n").unwrap();
    for (name, expected) in [("blob.py", "binary file"), ("latin1.py", "not valid UTF-8")] {
        let out = check_in(dir.path(), &[name, "--format", "sarif"]);
        assert_eq!(code(&out), 2, "{name}");
        let err = stderr(&out);
        assert!(err.contains(name) && err.contains(expected), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_valid_sarif(&json_of(&out));
    }
}

#[test]
fn refused_files_in_a_directory_walk_are_warnings_and_the_rest_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("blob.py"), b"\x00\x00\x00").unwrap();
    std::fs::write(src.join("latin1.py"), b"x = '\xe9'\n").unwrap();
    std::fs::write(src.join("app.py"), APP).unwrap();
    let (v, exit) = sarif_in(dir.path(), &["src"]);
    assert_eq!(exit, 1, "the taint error in app.py still fails the build");
    assert_eq!(results(&v).len(), 2);
    let inv = &v["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], true);
    let notes = inv["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 2);
    for n in notes {
        assert_eq!(n["level"], "warning");
    }
    let (_, exit) = sarif_in(dir.path(), &["src", "--fail-on", "none"]);
    assert_eq!(
        exit, 0,
        "warnings about refused files do not change the exit code"
    );
}

#[test]
fn unreadable_or_malformed_baseline_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("garbage.json"), "{not json").unwrap();
    std::fs::write(dir.path().join("other.json"), "{\"hello\": 1}").unwrap();
    let fixture = root().join(CLEAN);
    let fixture = fixture.to_str().unwrap();
    for (name, expected) in [
        ("missing.sarif", "cannot read baseline"),
        ("garbage.json", "is not JSON"),
        ("other.json", "not a SARIF log"),
    ] {
        let out = check_in(dir.path(), &[fixture, "--baseline", name]);
        assert_eq!(code(&out), 2, "{name}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{name}: {err}");
        assert!(
            out.stdout.is_empty(),
            "nothing is analysed without the baseline"
        );
    }
}

#[test]
fn deeply_nested_and_huge_inputs_give_valid_sarif() {
    let dir = tempfile::tempdir().unwrap();
    let mut nested = String::from("def f(x):\n");
    for depth in 0..300 {
        nested.push_str(&" ".repeat(4 * (depth + 1)));
        nested.push_str("if x:\n");
    }
    nested.push_str(&" ".repeat(4 * 301));
    nested.push_str("return 1\n");
    std::fs::write(dir.path().join("nested.py"), nested).unwrap();
    let mut huge = String::from("x = 1");
    huge.push_str(&"+1".repeat(2 * 1024 * 1024));
    huge.push('\n');
    std::fs::write(dir.path().join("huge.py"), huge).unwrap();
    let (v, exit) = sarif_in(dir.path(), &["nested.py", "huge.py"]);
    assert_eq!(exit, 0);
    assert!(results(&v).is_empty(), "{:#}", v["runs"][0]["results"]);
}

/// `check --llm` asks the configured LLM (an OpenAI-compatible mock) the question the editor
/// asks about each taint finding: a yes makes it `confirmed` in SARIF (with
/// `properties.llm`), so `--fail-tier confirmed` fails on it; a rerun is served from the
/// store's answer cache; without `--llm` nothing is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_llm_confirms_taint_findings_in_sarif_through_the_shared_cache() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let content = serde_json::json!({"answer": "yes", "reasoning": "argv reaches the shell"});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "x", "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content.to_string()},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 5\nretries = 0\n",
            server.uri()
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_crosscheck"));
        cmd.args([
            "check",
            TAINT,
            "--format",
            "sarif",
            "--fail-tier",
            "confirmed",
        ])
        .args(extra)
        .current_dir(root())
        .env("CROSSCHECK_CONFIG", &config)
        .env("CROSSCHECK_DATA_DIR", dir.path().join("data"))
        .env("HOME", dir.path());
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("CROSSCHECK_LLM_")) {
            cmd.env_remove(k);
        }
        cmd.output().expect("crosscheck check")
    };
    let requests = || async { server.received_requests().await.unwrap_or_default().len() };
    // Without --llm: nothing is asked, nothing is confirmed, the gate does not fail.
    let plain = tokio::task::block_in_place(|| run(&[]));
    assert_eq!(code(&plain), 0, "{}", stderr(&plain));
    assert_eq!(requests().await, 0);
    // With --llm: one question for the one taint finding; it is confirmed and fails the gate.
    let asked = tokio::task::block_in_place(|| run(&["--llm"]));
    assert_eq!(code(&asked), 1, "{}", stderr(&asked));
    assert_eq!(requests().await, 1, "one request per taint finding");
    assert!(stderr(&asked).contains("1 confirmed"), "{}", stderr(&asked));
    let sarif = json_of(&asked);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let taint = results
        .iter()
        .find(|r| r["ruleId"] == "taint-command")
        .expect("the taint result");
    assert_eq!(taint["properties"]["tier"], "confirmed", "{taint}");
    assert_eq!(taint["properties"]["llm"]["task"], "taint", "{taint}");
    assert_eq!(taint["properties"]["llm"]["verdict"], "yes", "{taint}");
    let dead = results
        .iter()
        .find(|r| r["ruleId"] == "unreachable-code")
        .expect("the dead code result");
    assert_eq!(
        dead["properties"]["tier"], "analyzer-only",
        "not asked: {dead}"
    );
    assert!(dead["properties"]["llm"].is_null());
    // The fingerprints are the same with and without --llm.
    let prints = |s: &Value| -> Vec<Value> {
        s["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["partialFingerprints"].clone())
            .collect()
    };
    assert_eq!(prints(&sarif), prints(&json_of(&plain)));
    // A rerun is answered from the store (the editor's and `ask`'s cache).
    let again = tokio::task::block_in_place(|| run(&["--llm"]));
    assert_eq!(code(&again), 1);
    assert_eq!(requests().await, 1, "served from the answer cache");
    let taint = json_of(&again)["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "taint-command")
        .cloned()
        .unwrap();
    assert_eq!(taint["properties"]["llm"]["cached"], true, "{taint}");
}

/// Snapshot of the SARIF results for the taint fixture: rule, level, message, location, the
/// code flow and the fingerprints (`UPDATE_EXPECT=1 cargo test` rewrites it after a deliberate
/// change; review the diff).
#[test]
fn sarif_results_of_the_taint_fixture_snapshot() {
    let (v, _) = sarif(&[TAINT]);
    let results = serde_json::to_string_pretty(&v["runs"][0]["results"]).unwrap();
    expect_test::expect![[r#"
        [
          {
            "codeFlows": [
              {
                "message": {
                  "text": "from `conn.recv(...)` (line 7) to `os.system(command)` (line 9)"
                },
                "threadFlows": [
                  {
                    "locations": [
                      {
                        "executionOrder": 0,
                        "importance": "essential",
                        "location": {
                          "message": {
                            "text": "source: conn.recv(...)"
                          },
                          "physicalLocation": {
                            "artifactLocation": {
                              "uri": "tests/fixtures/check/taint/app.py",
                              "uriBaseId": "%SRCROOT%"
                            },
                            "region": {
                              "startLine": 7
                            }
                          }
                        }
                      },
                      {
                        "executionOrder": 1,
                        "importance": "important",
                        "location": {
                          "message": {
                            "text": "step: command = \"report --user \" + name"
                          },
                          "physicalLocation": {
                            "artifactLocation": {
                              "uri": "tests/fixtures/check/taint/app.py",
                              "uriBaseId": "%SRCROOT%"
                            },
                            "region": {
                              "startLine": 8
                            }
                          }
                        }
                      },
                      {
                        "executionOrder": 2,
                        "importance": "essential",
                        "location": {
                          "message": {
                            "text": "sink: os.system(command)"
                          },
                          "physicalLocation": {
                            "artifactLocation": {
                              "uri": "tests/fixtures/check/taint/app.py",
                              "uriBaseId": "%SRCROOT%"
                            },
                            "region": {
                              "startLine": 9
                            }
                          }
                        }
                      }
                    ]
                  }
                ]
              }
            ],
            "level": "error",
            "locations": [
              {
                "physicalLocation": {
                  "artifactLocation": {
                    "uri": "tests/fixtures/check/taint/app.py",
                    "uriBaseId": "%SRCROOT%"
                  },
                  "region": {
                    "startLine": 9
                  }
                }
              }
            ],
            "message": {
              "text": "OS command injection: remote network data from `conn.recv(...)` (line 7) reaches `os.system(command)`"
            },
            "partialFingerprints": {
              "crosscheck/v1": "1e13343b776022ce829112eeff734a8b:1"
            },
            "properties": {
              "function": "run_report",
              "rule": "taint-command",
              "tier": "analyzer-only",
              "trust": "remote"
            },
            "ruleId": "taint-command",
            "ruleIndex": 1,
            "suppressions": []
          },
          {
            "level": "warning",
            "locations": [
              {
                "physicalLocation": {
                  "artifactLocation": {
                    "uri": "tests/fixtures/check/taint/app.py",
                    "uriBaseId": "%SRCROOT%"
                  },
                  "region": {
                    "startLine": 14
                  }
                }
              }
            ],
            "message": {
              "text": "unreachable statement `print(\"never\")`"
            },
            "partialFingerprints": {
              "crosscheck/v1": "2b9a85b4ddb5ee84d4fa5c07b3827610:1"
            },
            "properties": {
              "function": "helper",
              "rule": "unreachable-code",
              "tier": "analyzer-only"
            },
            "ruleId": "unreachable-code",
            "ruleIndex": 17,
            "suppressions": []
          }
        ]"#]].assert_eq(&results);
}

/// Snapshot of the text report for the mixed C fixture (every finding, its path, the summary).
#[test]
fn text_report_of_the_mixed_fixture_snapshot() {
    let out = check(&["--format", "text", MIXED]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    expect_test::expect![[r#"
        tests/fixtures/check/mixed/io.c:6: warning[format-string-not-literal] `printf` is called with a non-literal format string `who` that can hold program input (analyzer-only)
        tests/fixtures/check/mixed/io.c:6: error[taint-format-string] Format string from input: remote network data from `recv(...)` (line 11) and local user_input data from `gets(...)` (line 12) reach `printf(who)` (analyzer-only, fails)
            source tests/fixtures/check/mixed/io.c:11  recv(...)
            step   tests/fixtures/check/mixed/io.c:12  gets(line);
            step   tests/fixtures/check/mixed/io.c:13  greet(line);
            source tests/fixtures/check/mixed/io.c:12  gets(...)
            sink   tests/fixtures/check/mixed/io.c:6  printf(who)
        tests/fixtures/check/mixed/io.c:12: error[dangerous-gets] `gets` cannot bound its input; use `fgets` (analyzer-only, fails)
        3 finding(s): 2 error, 1 warning, 0 note; 3 new, 0 in baseline, 0 suppressed; 2 failing (--fail-on error, --fail-tier analyzer-only); 0 file(s) not analysed; exit 1
    "#]].assert_eq(&String::from_utf8_lossy(&out.stdout));
}
