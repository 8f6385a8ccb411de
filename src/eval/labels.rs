//! The data sets' own labels and how an analysis is scored against them, shared by
//! `crosscheck eval` and the data-set tests (`tests/taint_owasp.rs`, `tests/taint_securibench.rs`,
//! `tests/taint_pyt.rs`, `tests/pointsto_ptaben.rs`), so both count the same way.
//!
//! | data set | label | unit scored | what counts as found |
//! |---|---|---|---|
//! | OWASP Benchmark | `expectedresults-1.2.csv`: real vulnerability true/false per test | one test case (its category) | a flow whose rule's sink kind is the category's ([`OWASP_CATEGORIES`]) ends in the test's file |
//! | SecuriBench Micro | `/* BAD */` and `/* OK */` comments on sink lines | one marked sink line | a flow ends on the line; flows on unmarked lines count as false positives too |
//! | PyT examples | expected vulnerability count per example | one example file | flows (sanitised ones too, as PyT counts them) starting or ending in the file |
//! | PTABen | `MUSTALIAS`/`MAYALIAS`/`NOALIAS(p, q)` calls | one assertion | MUST/MAY: the two points-to sets intersect; NO: they are disjoint |

use crate::analysis::pointsto::{sets_may_alias, PointsTo, Target};
use crate::analysis::taint::{TaintFlow, TaintResult};
use crate::syntax::functions::collect_functions;
use crate::syntax::lang::{field, kind};
use crate::syntax::ParsedFile;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tree_sitter::Node;

// ---------------------------------------------------------------------------------------------
// Binary counts

/// Confusion counts of a yes/no answer against a label, with the figures a reader expects.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryCounts {
    pub tp: u64,
    pub fp: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
    pub tn: u64,
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl BinaryCounts {
    /// Counts one answer (`predicted`) against its label (`actual`).
    pub fn add(&mut self, predicted: bool, actual: bool) {
        match (predicted, actual) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, true) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }

    pub fn merge(&mut self, other: &BinaryCounts) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
        self.tn += other.tn;
    }

    pub fn total(&self) -> u64 {
        self.tp + self.fp + self.fn_ + self.tn
    }

    /// True-positive rate (recall); `None` without positives.
    pub fn tpr(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// False-positive rate; `None` without negatives.
    pub fn fpr(&self) -> Option<f64> {
        ratio(self.fp, self.fp + self.tn)
    }

    /// `None` when nothing was flagged.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    /// `None` when there is nothing to find and nothing was flagged.
    pub fn f1(&self) -> Option<f64> {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// Youden's index TPR − FPR (the OWASP Benchmark's score); `None` unless both exist.
    pub fn youden(&self) -> Option<f64> {
        Some(self.tpr()? - self.fpr()?)
    }

    /// Share of answers that match the label.
    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.tp + self.tn, self.total())
    }
}

// ---------------------------------------------------------------------------------------------
// OWASP Benchmark

/// OWASP Benchmark category -> the sink kind of the taint rule that reports it. The other
/// categories (crypto, hash, securecookie, trustbound, weakrand) are not taint problems and
/// have no rule.
pub const OWASP_CATEGORIES: [(&str, &str); 6] = [
    ("sqli", "sql"),
    ("cmdi", "command"),
    ("pathtraver", "path"),
    ("xss", "xss"),
    ("ldapi", "ldap"),
    ("xpathi", "xpath"),
];

/// The sink kind of an OWASP category.
pub fn owasp_sink_kind(category: &str) -> Option<&'static str> {
    OWASP_CATEGORIES
        .iter()
        .find(|(c, _)| *c == category)
        .map(|(_, k)| *k)
}

/// One row of `expectedresults-1.2.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwaspCase {
    pub name: String,
    pub category: String,
    pub vulnerable: bool,
    pub cwe: Option<u32>,
}

/// Parses `expectedresults-1.2.csv` (`test name, category, real vulnerability, cwe`; lines
/// starting with `#` are comments). Rows whose third column is neither `true` nor `false` are
/// skipped.
pub fn parse_owasp_expected(text: &str) -> Vec<OwaspCase> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            let vulnerable = match *cols.get(2)? {
                "true" => true,
                "false" => false,
                _ => return None,
            };
            Some(OwaspCase {
                name: cols.first()?.to_string(),
                category: cols.get(1)?.to_string(),
                vulnerable,
                cwe: cols.get(3).and_then(|c| c.parse().ok()),
            })
        })
        .collect()
}

/// True when a flow is reported by a taint rule whose registry sink kind is `kind` (a
/// user-defined kind is reported by `taint-other`, whose sink kind is `*`: then the flow's
/// own sink kind decides).
pub fn flow_has_sink_kind(flow: &TaintFlow, kind: &str) -> bool {
    match crate::analysis::rules::rule(&flow.rule).and_then(|r| r.sink_kind) {
        Some("*") | None => flow.sink.kind == kind,
        Some(k) => k == kind,
    }
}

/// Test name (the sink file's stem) -> the sink kinds of the flows ending in it.
pub fn flagged_kinds_by_test(flows: &[TaintFlow]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in flows {
        let stem = Path::new(&f.sink.file)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let kind = crate::analysis::rules::rule(&f.rule)
            .and_then(|r| r.sink_kind)
            .filter(|k| *k != "*")
            .map_or_else(|| f.sink.kind.clone(), str::to_string);
        out.entry(stem).or_default().insert(kind);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// SecuriBench Micro

/// The marked sink lines of a SecuriBench Micro servlet (1-based).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SinkLineLabels {
    /// Lines with `/* BAD */`: a vulnerable sink.
    pub bad: BTreeSet<usize>,
    /// Lines with `/* OK */`: a sink that is safe.
    pub ok: BTreeSet<usize>,
}

/// Reads the `/* BAD */` and `/* OK */` comments of a servlet.
pub fn sink_line_labels(text: &str) -> SinkLineLabels {
    let mut l = SinkLineLabels::default();
    for (i, line) in text.lines().enumerate() {
        if line.contains("/* BAD */") {
            l.bad.insert(i + 1);
        } else if line.contains("/* OK */") {
            l.ok.insert(i + 1);
        }
    }
    l
}

/// Flagged sink lines scored against the marks: a flagged BAD line is a TP, an unflagged one
/// a FN, a flagged OK line a FP, an unflagged one a TN. A flagged line with no mark is a FP
/// too (counted in `counts.fp`, and separately in `unmarked`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SinkLineScore {
    pub counts: BinaryCounts,
    pub unmarked: u64,
}

pub fn score_sink_lines(labels: &SinkLineLabels, flagged: &BTreeSet<usize>) -> SinkLineScore {
    let mut s = SinkLineScore::default();
    for l in &labels.bad {
        s.counts.add(flagged.contains(l), true);
    }
    for l in &labels.ok {
        s.counts.add(flagged.contains(l), false);
    }
    for l in flagged {
        if !labels.bad.contains(l) && !labels.ok.contains(l) {
            s.unmarked += 1;
            s.counts.fp += 1;
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// PyT examples

/// One row of `expected_vulnerability_counts.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PytCase {
    /// `examples/...py`, relative to the data set.
    pub file: String,
    pub count: usize,
    pub test: String,
    pub class: String,
}

/// PyT's test class that uses another trigger-word file (argument positions); its counts do
/// not apply to the default triggers.
pub const PYT_POSITION_CLASS: &str = "EnginePositionTest";

/// Parses `expected_vulnerability_counts.csv` (with its header).
pub fn parse_pyt_counts(text: &str) -> Vec<PytCase> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            Some(PytCase {
                file: cols.first()?.to_string(),
                count: cols.get(1)?.parse().ok()?,
                test: cols.get(2)?.to_string(),
                class: cols.get(3)?.to_string(),
            })
        })
        .collect()
}

/// The vulnerabilities PyT would count for `file`: flows, sanitised or not (PyT reports
/// sanitised ones too), that start or end in it.
pub fn pyt_vulnerabilities<'r>(result: &'r TaintResult, file: &str) -> Vec<&'r TaintFlow> {
    result
        .flows
        .iter()
        .chain(&result.sanitized_flows)
        .filter(|f| f.source.file == file || f.sink.file == file)
        .collect()
}

/// A found count against the expected one: `tp` = the smaller, `fp` = the surplus, `fn` = the
/// shortfall (no `tn`: there is no count of absent vulnerabilities).
pub fn score_count(found: usize, expected: usize) -> BinaryCounts {
    BinaryCounts {
        tp: found.min(expected) as u64,
        fp: found.saturating_sub(expected) as u64,
        fn_: expected.saturating_sub(found) as u64,
        tn: 0,
    }
}

// ---------------------------------------------------------------------------------------------
// PTABen alias assertions

/// The oracle of an alias assertion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AliasKind {
    #[serde(rename = "MUSTALIAS")]
    MustAlias,
    #[serde(rename = "MAYALIAS")]
    MayAlias,
    #[serde(rename = "NOALIAS")]
    NoAlias,
}

impl AliasKind {
    pub const ALL: [AliasKind; 3] = [
        AliasKind::MustAlias,
        AliasKind::MayAlias,
        AliasKind::NoAlias,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AliasKind::MustAlias => "MUSTALIAS",
            AliasKind::MayAlias => "MAYALIAS",
            AliasKind::NoAlias => "NOALIAS",
        }
    }

    pub fn from_name(s: &str) -> Option<AliasKind> {
        AliasKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// MUST and MAY hold when the sets intersect (a may-analysis cannot prove "must"); NO
    /// holds when they are disjoint.
    pub fn expects_alias(self) -> bool {
        self != AliasKind::NoAlias
    }

    /// Whether an answer (`Some(intersect)`, `None`: no answer) satisfies the assertion.
    pub fn satisfied_by(self, alias: Option<bool>) -> bool {
        alias == Some(self.expects_alias())
    }
}

/// One alias assertion: `KIND(a, b)` at `line` (1-based), with the argument texts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AliasAssertion {
    pub line: usize,
    pub kind: AliasKind,
    pub a: String,
    pub b: String,
}

/// One row of `alias_assertions.csv` (`file,line,oracle,arg1,arg2`) with a scored oracle
/// (`EXPECTEDFAIL_*`, `PARTIALALIAS` rows are dropped). Arguments containing commas are
/// split wrongly by the CSV; the file's call is what the analyzer evaluates.
pub fn parse_alias_assertions(text: &str) -> Vec<(String, AliasAssertion)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut it = l.splitn(5, ',');
            let file = it.next()?.to_string();
            let line = it.next()?.parse().ok()?;
            let kind = AliasKind::from_name(it.next()?)?;
            let a = it.next().unwrap_or_default().trim().to_string();
            let b = it.next().unwrap_or_default().trim().to_string();
            Some((file, AliasAssertion { line, kind, a, b }))
        })
        .collect()
}

/// An alias-assertion call found in a C file.
#[derive(Debug, Clone)]
pub struct AliasCall<'t> {
    pub line: usize,
    pub kind: AliasKind,
    /// The innermost enclosing function.
    pub function: Option<String>,
    pub args: [Node<'t>; 2],
    /// The call's text.
    pub text: String,
}

/// Every two-argument `MUSTALIAS`/`MAYALIAS`/`NOALIAS` call of a file (prototypes such as
/// `extern void MAYALIAS(void*,void*);` are declarations, not calls, and are not listed).
pub fn alias_calls(file: &ParsedFile) -> Vec<AliasCall<'_>> {
    let functions = collect_functions(file);
    let mut out = Vec::new();
    let mut stack = vec![file.root()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
        if node.kind() != kind::CALL_EXPRESSION {
            continue;
        }
        let Some(kind) = node
            .child_by_field_name(field::FUNCTION)
            .filter(|f| f.kind() == kind::IDENTIFIER)
            .and_then(|f| AliasKind::from_name(file.node_text(f)))
        else {
            continue;
        };
        let Some(args) = node.child_by_field_name(field::ARGUMENTS) else {
            continue;
        };
        let mut c = args.walk();
        let args: Vec<Node<'_>> = args
            .named_children(&mut c)
            .filter(|a| a.kind() != kind::COMMENT)
            .collect();
        let [a, b] = args.as_slice() else { continue };
        let function = functions
            .iter()
            .filter(|f| f.node.byte_range().contains(&node.start_byte()))
            .max_by_key(|f| f.node.start_byte())
            .map(|f| f.name.clone());
        out.push(AliasCall {
            line: file.line_of(node.start_byte()),
            kind,
            function,
            args: [*a, *b],
            text: file.node_text(node).to_string(),
        });
    }
    out
}

/// The analyzer's answer to an assertion call: the two arguments' points-to sets (names
/// resolved in the enclosing function, then among globals) and whether they intersect.
pub fn analyzer_alias(
    path: &str,
    file: &ParsedFile,
    result: &PointsTo,
    call: &AliasCall<'_>,
) -> (BTreeSet<Target>, BTreeSet<Target>, bool) {
    let function = call.function.as_deref();
    let ta = result.eval_expr(path, file, function, call.args[0]);
    let tb = result.eval_expr(path, file, function, call.args[1]);
    let alias = sets_may_alias(&ta, &tb);
    (ta, tb, alias)
}

/// An LLM's points-to answer (pointer -> targets) applied to an assertion's two argument
/// texts: `&x` points to `x`; a plain name or field path is looked up in the answer. `None`
/// when either argument is not in the answer or is an expression the answer cannot express
/// (a dereference `*p`, pointer arithmetic, a call): the LLM did not answer that assertion.
pub fn answer_alias(answer: &BTreeMap<String, BTreeSet<String>>, a: &str, b: &str) -> Option<bool> {
    let set = |e: &str| -> Option<BTreeSet<String>> {
        let e: String = e.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some(x) = e.strip_prefix('&') {
            let x = x.trim_start_matches('(').trim_end_matches(')');
            return Some([x.to_string()].into());
        }
        let plain = !e.is_empty()
            && e.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '>' | '[' | ']'));
        if !plain {
            return None;
        }
        answer.get(&e).cloned()
    };
    let (sa, sb) = (set(a)?, set(b)?);
    Some(sa.intersection(&sb).next().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::taint::{analyze_file, FlowEnd, Trust};
    use crate::syntax::{Cancel, Language};

    #[test]
    fn binary_counts_give_the_usual_figures() {
        let mut c = BinaryCounts::default();
        // 3 vulnerable (2 found), 2 safe (1 flagged).
        for (p, g) in [
            (true, true),
            (true, true),
            (false, true),
            (true, false),
            (false, false),
        ] {
            c.add(p, g);
        }
        assert_eq!((c.tp, c.fp, c.fn_, c.tn), (2, 1, 1, 1));
        assert!((c.tpr().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((c.fpr().unwrap() - 0.5).abs() < 1e-12);
        assert!((c.precision().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((c.f1().unwrap() - 4.0 / 6.0).abs() < 1e-12);
        assert!((c.youden().unwrap() - (2.0 / 3.0 - 0.5)).abs() < 1e-12);
        assert_eq!(BinaryCounts::default().youden(), None, "undefined, not 1");
    }

    #[test]
    fn owasp_expected_results_parse() {
        let text = "# test name, category, real vulnerability, cwe\nBenchmarkTest00001,pathtraver,true,22\nBenchmarkTest00002,crypto,false,327\nbroken,row\n";
        let rows = parse_owasp_expected(text);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            OwaspCase {
                name: "BenchmarkTest00001".into(),
                category: "pathtraver".into(),
                vulnerable: true,
                cwe: Some(22),
            }
        );
        assert!(!rows[1].vulnerable);
        assert_eq!(owasp_sink_kind("pathtraver"), Some("path"));
        assert_eq!(owasp_sink_kind("crypto"), None);
    }

    fn flow(file: &str, line: usize, rule: &str, kind: &str) -> TaintFlow {
        let end = |k: &str| FlowEnd {
            file: file.into(),
            line,
            text: String::new(),
            kind: k.into(),
        };
        TaintFlow {
            source: end("web_request"),
            sink: end(kind),
            path: Vec::new(),
            sanitized: false,
            rule: rule.into(),
            trust: Trust::Remote,
        }
    }

    #[test]
    fn flagged_kinds_come_from_the_rule_registry() {
        let flows = [
            flow("testcode/T1.java", 3, "taint-sql", "sql"),
            flow("T2.java", 4, "taint-other", "mine"),
        ];
        let k = flagged_kinds_by_test(&flows);
        assert_eq!(k["T1"], ["sql".to_string()].into());
        assert_eq!(k["T2"], ["mine".to_string()].into());
        assert!(flow_has_sink_kind(&flows[0], "sql"));
        assert!(!flow_has_sink_kind(&flows[0], "xss"));
        assert!(flow_has_sink_kind(&flows[1], "mine"));
    }

    #[test]
    fn securibench_marks_and_line_scores() {
        let text = "a\nw.println(s); /* BAD */\nw.println(t); /* OK */\nw.println(u); /* BAD */\n";
        let labels = sink_line_labels(text);
        assert_eq!(labels.bad, [2, 4].into());
        assert_eq!(labels.ok, [3].into());
        // Flags the OK line and an unmarked one, finds one of two BAD lines.
        let s = score_sink_lines(&labels, &[2, 3, 1].into());
        assert_eq!(
            (s.counts.tp, s.counts.fp, s.counts.fn_, s.counts.tn),
            (1, 2, 1, 0)
        );
        assert_eq!(s.unmarked, 1);
        let perfect = score_sink_lines(&labels, &[2, 4].into());
        assert_eq!(perfect.counts.f1(), Some(1.0));
        assert_eq!(perfect.counts.tn, 1);
    }

    #[test]
    fn pyt_counts_parse_and_score() {
        let text = "example_path,expected_vulnerability_count,pyt_test,test_class\nexamples/a.py,3,test_a,EngineTest\nexamples/a.py,1,test_pos,EnginePositionTest\nbad\n";
        let rows = parse_pyt_counts(text);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].count, 3);
        assert_eq!(rows[1].class, PYT_POSITION_CLASS);
        assert_eq!(
            score_count(1, 3),
            BinaryCounts {
                tp: 1,
                fp: 0,
                fn_: 2,
                tn: 0
            }
        );
        assert_eq!(score_count(4, 3).fp, 1);
        // Counted on a real analysis: one unsanitised flow in the file.
        let code = "import os\nfrom flask import request\n\ndef f():\n    x = request.args.get('x')\n    os.system(x)\n";
        let file = ParsedFile::parse(Language::Python, code.to_string());
        let result = analyze_file("a.py", &file, &Cancel::never());
        assert_eq!(pyt_vulnerabilities(&result, "a.py").len(), 1);
        assert_eq!(pyt_vulnerabilities(&result, "b.py").len(), 0);
    }

    #[test]
    fn alias_assertions_parse_find_and_score() {
        let csv = "file,line,oracle,arg1,arg2\nsrc/basic_c_tests/x.c,7,MAYALIAS,p,q\nsrc/basic_c_tests/x.c,8,NOALIAS,p,r\nsrc/x.c,9,EXPECTEDFAIL_MAYALIAS,p,q\n";
        let rows = parse_alias_assertions(csv);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].1.kind, AliasKind::NoAlias);
        assert_eq!(rows[1].1.b, "r");

        let code = "extern void MAYALIAS(void*,void*);\nextern void NOALIAS(void*,void*);\nint main() {\n  int a, b;\n  int *p = &a, *q = &a, *r = &b;\n  if (a) r = &a;\n  MAYALIAS(p, q);\n  NOALIAS(p, r);\n  return 0;\n}\n";
        let file = ParsedFile::parse(Language::C, code.to_string());
        let calls = alias_calls(&file);
        assert_eq!(calls.len(), 2, "prototypes are not calls");
        assert_eq!(
            (calls[0].line, calls[0].kind, calls[0].function.as_deref()),
            (7, AliasKind::MayAlias, Some("main"))
        );
        let pts = crate::analysis::pointsto::analyze_file("x.c", &file, &Cancel::never());
        let may = analyzer_alias("x.c", &file, &pts, &calls[0]).2;
        let no = analyzer_alias("x.c", &file, &pts, &calls[1]).2;
        assert!(AliasKind::MayAlias.satisfied_by(Some(may)));
        // `r` may point to `a` (flow-insensitive): the NOALIAS assertion is NOT satisfied, so
        // the analyzer's share on this file is below 1.
        assert!(!AliasKind::NoAlias.satisfied_by(Some(no)));
        assert!(
            !AliasKind::MustAlias.satisfied_by(None),
            "no answer is not a hit"
        );

        let answer: BTreeMap<String, BTreeSet<String>> = [
            ("p".to_string(), ["a".to_string()].into()),
            ("q".to_string(), ["a".to_string()].into()),
            ("r".to_string(), ["b".to_string()].into()),
        ]
        .into();
        assert_eq!(answer_alias(&answer, "p", "q"), Some(true));
        assert_eq!(answer_alias(&answer, "p", "r"), Some(false));
        assert_eq!(answer_alias(&answer, "&a", "q"), Some(true));
        assert_eq!(answer_alias(&answer, "*p", "q"), None, "a dereference");
        assert_eq!(answer_alias(&answer, "s", "q"), None, "not answered");
    }
}
