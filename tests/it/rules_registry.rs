//! The rule registry as a contract: stable ids, severities and hover text, every rule
//! reachable from an annotated fixture, and every finding the analyses produce naming a
//! registered rule with the registry's severity.

use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::findings::{self, Finding, TrustReport};
use crosscheck::analysis::report::analyze_parsed;
use crosscheck::analysis::rules::{rule, taint_rule_id, Severity, RULES};
use crosscheck::analysis::taint::{analyze_taint, Provenance, TaintSpec, TaintSpecs};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/taint")
}

fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![fixture_root()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if Language::from_path(&p).is_some() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Findings of one file analysed alone (syntactic rules, unreachable code, taint flows).
fn findings_of(path: &Path) -> Vec<Finding> {
    let lang = Language::from_path(path).unwrap();
    let file = ParsedFile::parse(lang, std::fs::read_to_string(path).unwrap());
    let name = path.display().to_string();
    let units = [SourceUnit {
        path: name.clone(),
        file: &file,
    }];
    let taint = analyze_taint(&units, None, None, &TaintSpecs::builtin(), &Cancel::never());
    let mut all = analyze_parsed(&name, &file, &Cancel::never()).findings;
    all.extend(findings::flow_findings(&name, Some(&file), &taint.flows));
    findings::normalize(all)
}

#[test]
fn rule_ids_are_stable() {
    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(
        ids,
        vec![
            "taint-sql",
            "taint-command",
            "taint-code",
            "taint-path",
            "taint-xss",
            "taint-ldap",
            "taint-xpath",
            "taint-redirect",
            "taint-deserialization",
            "taint-ssrf",
            "taint-format-string",
            "taint-buffer-overflow",
            "taint-low-level-call",
            "taint-delegatecall",
            "taint-ether-transfer",
            "taint-selfdestruct",
            "taint-other",
            "unreachable-code",
            "tx-origin-auth",
            "unchecked-low-level-call",
            "subprocess-shell-true",
            "format-string-not-literal",
            "dangerous-gets",
            "taint-header",
            "syntax-error",
        ],
        "rule ids are part of the contract: add new ones at the end, never rename"
    );
}

#[test]
fn descriptions_serve_as_hover_text() {
    for r in RULES {
        assert!(
            (20..=300).contains(&r.description.len()),
            "{}: description length {}",
            r.id,
            r.description.len()
        );
        assert!(!r.description.contains('\n'), "{}", r.id);
        assert_eq!(rule(r.id).map(|x| x.description), Some(r.description));
    }
    assert!(rule("no-such-rule").is_none());
}

#[test]
fn every_syntactic_rule_and_most_taint_rules_have_an_annotated_fixture() {
    let mut annotated = BTreeSet::new();
    for p in fixture_files() {
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let t = line.trim_start();
            let body = t.strip_prefix("//").or_else(|| t.strip_prefix('#'));
            if let Some(rules) = body.and_then(|b| b.trim().strip_prefix("ruleid:")) {
                annotated.extend(rules.split(',').map(|r| r.trim().to_string()));
            }
        }
    }
    for r in RULES.iter().filter(|r| r.sink_kind.is_none()) {
        assert!(
            annotated.contains(r.id),
            "{} has no annotated fixture",
            r.id
        );
    }
    let taint_covered = RULES
        .iter()
        .filter(|r| r.sink_kind.is_some() && annotated.contains(r.id))
        .count();
    assert!(
        taint_covered >= 14,
        "only {taint_covered} taint rules have fixtures"
    );
    for a in &annotated {
        assert!(rule(a).is_some(), "fixture annotates unknown rule {a}");
    }
}

#[test]
fn every_finding_names_a_registered_rule_with_its_severity_and_evidence() {
    let mut seen = BTreeSet::new();
    for p in fixture_files() {
        for f in findings_of(&p) {
            let r =
                rule(&f.rule).unwrap_or_else(|| panic!("{}: unknown rule {}", p.display(), f.rule));
            // Taint findings: the rule's severity under the default trust profile (a flow
            // whose sources are all local is a note); the others: the rule's severity.
            let want = TrustReport::default().severity(&f.rule, f.trust);
            assert_eq!(f.severity, want, "{}", f.rule);
            assert_eq!(f.trust.is_some(), r.sink_kind.is_some(), "{}", f.rule);
            assert!(
                !f.evidence.is_empty() && !f.message.is_empty(),
                "{}",
                f.rule
            );
            if r.sink_kind.is_some() {
                let roles: Vec<&str> = f.evidence.iter().map(|e| e.role.as_str()).collect();
                assert_eq!(roles.first(), Some(&"source"));
                assert_eq!(roles.last(), Some(&"sink"));
            }
            seen.insert(f.rule.clone());
        }
    }
    assert!(seen.contains("unreachable-code") && seen.contains("taint-sql"));
}

#[test]
fn taint_rules_follow_the_sink_kind() {
    let file = ParsedFile::parse(
        Language::Python,
        "import os, pickle\nx = input()\nos.system(x)\npickle.loads(x)\neval(x)\n",
    );
    let units = [SourceUnit {
        path: "a.py".into(),
        file: &file,
    }];
    let r = analyze_taint(&units, None, None, &TaintSpecs::builtin(), &Cancel::never());
    let rules: BTreeSet<&str> = r.flows.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(
        rules,
        BTreeSet::from(["taint-command", "taint-deserialization", "taint-code"])
    );
    for f in &r.flows {
        assert_eq!(f.rule, taint_rule_id(&f.sink.kind));
        assert_eq!(rule(&f.rule).map(|r| r.severity), Some(Severity::Error));
    }
}

#[test]
fn user_defined_sink_kinds_are_reported_under_taint_other() {
    let mut specs = TaintSpecs::builtin();
    specs.merge(
        TaintSpec::from_toml(
            "language = \"python\"\n[[sink]]\nid = \"audit-log\"\nkind = \"audit_log\"\ncalls = [\"audit.write\"]\n",
            Provenance::User,
        )
        .unwrap(),
    );
    let file = ParsedFile::parse(Language::Python, "import audit\naudit.write(input())\n");
    let units = [SourceUnit {
        path: "a.py".into(),
        file: &file,
    }];
    let r = analyze_taint(&units, None, None, &specs, &Cancel::never());
    assert_eq!(r.flows.len(), 1);
    assert_eq!(r.flows[0].rule, "taint-other");
    assert_eq!(r.flows[0].sink.kind, "audit_log");
}

/// Taint flows of one Python file and the findings made from them.
fn flows_and_findings(path: &str, src: &str) -> (usize, Vec<Finding>) {
    let file = ParsedFile::parse(Language::Python, src);
    let units = [SourceUnit {
        path: path.into(),
        file: &file,
    }];
    let taint = analyze_taint(&units, None, None, &TaintSpecs::builtin(), &Cancel::never());
    let found = findings::flow_findings(path, Some(&file), &taint.flows);
    (taint.flows.len(), found)
}

#[test]
fn flows_into_one_sink_are_one_finding_naming_every_source() {
    let src = "import os, sys\n\ndef main():\n    a = input()\n    b = sys.argv[1]\n    os.system(a + b)\n";
    let (flows, found) = flows_and_findings("two.py", src);
    assert_eq!(flows, 2);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!((f.rule.as_str(), f.line), ("taint-command", 6));
    assert!(
        f.message.contains("(line 4) and ") && f.message.contains("(line 5) reach `"),
        "{}",
        f.message
    );
    let roles: Vec<(&str, usize)> = f
        .evidence
        .iter()
        .map(|e| (e.role.as_str(), e.line))
        .collect();
    assert_eq!(roles, vec![("source", 4), ("source", 5), ("sink", 6)]);
}

#[test]
fn a_merged_finding_names_three_sources_and_counts_the_rest() {
    let src = "import os\n\ndef main():\n    a = input()\n    b = input()\n    c = input()\n    d = input()\n    e = input()\n    os.system(a + b + c + d + e)\n";
    let (flows, found) = flows_and_findings("five.py", src);
    assert_eq!(flows, 5);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert!(
        f.message.contains("(line 6) and 2 more sources reach `"),
        "{}",
        f.message
    );
    let sources = f.evidence.iter().filter(|e| e.role == "source").count();
    assert_eq!(sources, 5);
}
