//! Hand-written fixtures with Semgrep-style annotations, checked exactly.
//!
//! A comment `ruleid: RULE[, RULE..]` says the next code line must carry a finding of that
//! rule; `ok: RULE` says it must not. Every other finding is an error too: the findings of a
//! fixture (taint flows at their sink lines, unreachable code, syntactic rules) must equal the
//! `ruleid:` annotations exactly. A file is one workspace; a directory is one workspace of
//! all its files. Each fixture has a named test below; `every_fixture_has_a_test` keeps the
//! list complete.

use crosscheck::analysis::report::{build_report, AnalyzeReport};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/taint")
}

fn source_files(p: &Path) -> Vec<PathBuf> {
    if p.is_file() {
        return vec![p.to_path_buf()];
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(p)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && Language::from_path(p).is_some())
        .collect();
    out.sort();
    out
}

/// A set of (rule, line) pairs.
type RuleLines = BTreeSet<(String, usize)>;

/// (rule, line) pairs a comment annotates: `ruleid:` ones expected, `ok:` ones forbidden.
fn annotations(text: &str) -> (RuleLines, RuleLines) {
    let lines: Vec<&str> = text.lines().collect();
    let mut want = BTreeSet::new();
    let mut forbid = BTreeSet::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let body = t
            .strip_prefix("//")
            .or_else(|| t.strip_prefix('#'))
            .map(str::trim);
        let Some(body) = body else { continue };
        let (set, rules) = if let Some(r) = body.strip_prefix("ruleid:") {
            (&mut want, r)
        } else if let Some(r) = body.strip_prefix("ok:") {
            (&mut forbid, r)
        } else {
            continue;
        };
        // The annotated line: the next line that is neither blank nor an annotation.
        let target = (i + 1..lines.len()).find(|&j| {
            let u = lines[j].trim_start();
            let c = u
                .strip_prefix("//")
                .or_else(|| u.strip_prefix('#'))
                .map(str::trim);
            !u.is_empty() && !c.is_some_and(|c| c.starts_with("ruleid:") || c.starts_with("ok:"))
        });
        let Some(target) = target else { continue };
        for r in rules.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            set.insert((r.to_string(), target + 1));
        }
    }
    (want, forbid)
}

fn analyse(files: &[PathBuf]) -> (Vec<(String, String)>, AnalyzeReport) {
    let base = root();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            (
                p.strip_prefix(&base).unwrap().display().to_string(),
                std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect();
    let parsed: Vec<(String, ParsedFile)> = texts
        .iter()
        .zip(files)
        .map(|((name, text), p)| {
            let lang = Language::from_path(p).unwrap();
            (name.clone(), ParsedFile::parse(lang, text.clone()))
        })
        .collect();
    let report = build_report(&parsed, Vec::new(), &Cancel::never());
    (texts, report)
}

fn check(fixture: &str) {
    let files = source_files(&root().join(fixture));
    assert!(!files.is_empty(), "no fixture at {fixture}");
    let (texts, report) = analyse(&files);
    let mut problems = Vec::new();
    for (name, text) in &texts {
        let (want, forbid) = annotations(text);
        let fr = report
            .files
            .iter()
            .find(|f| &f.file == name)
            .expect("file in report");
        let got: BTreeSet<(String, usize)> = fr
            .findings
            .iter()
            .map(|f| (f.rule.clone(), f.line))
            .collect();
        for (rule, line) in want.difference(&got) {
            problems.push(format!("{name}:{line}: missing {rule}"));
        }
        for (rule, line) in got.difference(&want) {
            let msg = fr
                .findings
                .iter()
                .find(|f| &f.rule == rule && f.line == *line)
                .map(|f| f.message.clone())
                .unwrap_or_default();
            let tag = if forbid.contains(&(rule.clone(), *line)) {
                "ok-annotated line flagged"
            } else {
                "unexpected"
            };
            problems.push(format!("{name}:{line}: {tag} {rule} ({msg})"));
        }
        for (rule, line) in want.intersection(&forbid) {
            problems.push(format!(
                "{name}:{line}: annotated both ruleid and ok for {rule}"
            ));
        }
    }
    assert!(problems.is_empty(), "{fixture}:\n{}", problems.join("\n"));
}

macro_rules! fixtures {
    ($($name:ident => $path:expr,)*) => {
        $(
            #[test]
            fn $name() {
                check($path);
            }
        )*
        const FIXTURES: &[&str] = &[$($path),*];
    };
}

fixtures! {
    python_sources_sinks_and_sanitizers => "python/basics.py",
    python_flask_requests_and_routes => "python/flask_app.py",
    python_constants_and_containers => "python/containers.py",
    python_interprocedural_summaries_and_objects => "python/interproc.py",
    python_cross_file_imports => "python/xfile",
    python_django_signed_values_and_escaping_builders => "python/django_views.py",
    python_validators_allow_lists_lookup_keys_and_numbers => "python/guards_and_lookups.py",
    python_a_syntax_error_is_a_note_and_the_rest_is_analysed => "python/broken.py",
    java_servlet_sinks => "java/Servlet.java",
    java_owasp_style_traps => "java/Traps.java",
    java_helpers_beans_and_fields => "java/Beans.java",
    java_cross_file_repository => "java/xfile",
    java_properties_databases_sockets_headers => "java/Sources.java",
    java_validators_allow_lists_and_lookup_keys => "java/Guards.java",
    java_spring_and_jaxrs_handler_parameters => "java/SpringController.java",
    c_commands_formats_and_buffers => "c/cmd.c",
    c_out_parameters_and_pointers => "c/interproc.c",
    c_macros_offset_writes_function_pointers_and_wide_sinks => "c/macros.c",
    c_variadic_wrappers_keep_arguments_out_of_the_format => "c/varargs.c",
    cpp_streams_and_strings => "cpp/streams.cpp",
    solidity_wallet_authorisation_and_transfers => "solidity/Wallet.sol",
    solidity_proxy_delegatecall => "solidity/Proxy.sol",
    solidity_bank_internal_helpers => "solidity/Bank.sol",
    javascript_express_handlers => "javascript/express_app.js",
    javascript_sanitisers_and_safe_apis => "javascript/sanitizers.js",
    javascript_koa_context_and_es_modules => "javascript/koa_app.js",
    javascript_helpers_objects_and_callbacks => "javascript/helpers.js",
    javascript_aliases_promisify_shells_and_iteration => "javascript/wrappers_and_iteration.js",
    typescript_fastify_and_typed_express => "typescript/fastify_app.ts",
}

#[test]
fn every_fixture_has_a_test() {
    let mut on_disk = Vec::new();
    for lang in std::fs::read_dir(root()).unwrap().filter_map(|e| e.ok()) {
        if !lang.path().is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(lang.path())
            .unwrap()
            .filter_map(|e| e.ok())
        {
            let p = entry.path();
            if p.is_dir() || Language::from_path(&p).is_some() {
                on_disk.push(p.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    assert!(listed.len() >= 15);
}

#[test]
fn annotations_target_the_next_code_line() {
    let (want, forbid) = annotations("x = 1\n# ruleid: a, b\n\n# ok: c\ny = 2\n");
    assert!(want.contains(&("a".into(), 5)) && want.contains(&("b".into(), 5)));
    assert!(forbid.contains(&("c".into(), 5)));
}
