//! Findings: what the `analyze` report and the editor show as problems. Each finding names a
//! rule of the registry ([`crate::analysis::rules`]) and carries its evidence.
//!
//! Three producers:
//! * **Taint flows** ([`flow_findings`]): one finding per sink of unsanitised flows (flows of
//!   one rule into the same sink expression are merged), at the sink line of the file holding
//!   the sink; evidence = each source and its intermediate lines, then the sink.
//! * **Unreachable code** ([`unreachable_findings`]): one finding per run of statements the
//!   CFG builder dropped (consecutive in the function with no reachable statement between).
//! * **Syntactic rules** ([`pattern_findings`]), in one iterative walk of the tree:
//!   `tx-origin-auth` (Solidity: `tx.origin` compared in a condition or `require`, except the
//!   `tx.origin == msg.sender` "no contracts" idiom), `unchecked-low-level-call` (Solidity:
//!   `send`/`call`/`delegatecall`/`staticcall` as a statement, result dropped),
//!   `subprocess-shell-true` (Python: `subprocess.*(.., shell=True)` whose command is not a
//!   string literal), `format-string-not-literal` (C/C++: printf family with a format that is
//!   neither a literal nor an ALL-CAPS macro and that the file's writes show can hold program
//!   input, [`super::constfmt`]), `dangerous-gets` (C/C++: any call of `gets`).
//!
//! Output is sorted by (line, rule, message) and deduplicated.

use super::cfg::{Cfg, Unreachable};
use super::constfmt::{Constness, FormatConstness};
use super::rules::{rule, Severity};
use super::taint::{TaintFlow, Trust};
use crate::syntax::lang::{field, kind};
use crate::syntax::walk::{preorder, Visit};
use crate::syntax::{Cancel, Language, ParsedFile};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// One piece of evidence: a line and what it shows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Evidence {
    pub file: String,
    pub line: usize,
    /// `source`, `step`, `sink`, `first`, `last`, `condition`, `call`.
    pub role: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Rule id in the registry.
    pub rule: String,
    /// 1-based line the finding is reported at.
    pub line: usize,
    pub severity: Severity,
    pub message: String,
    pub evidence: Vec<Evidence>,
    /// Taint findings: the trust class of the most exposed source (remote > stored > local).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
}

/// Which source trust classes are reported at their rule's severity; flows whose sources are
/// all of other classes are notes. Default: `remote` and `stored`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustReport(pub BTreeSet<Trust>);

impl Default for TrustReport {
    fn default() -> Self {
        TrustReport(BTreeSet::from([Trust::Remote, Trust::Stored]))
    }
}

impl TrustReport {
    /// Every class (`[taint] report = ["remote", "stored", "local"]`).
    pub fn all() -> TrustReport {
        TrustReport(Trust::ALL.into_iter().collect())
    }

    /// Parses class names; unknown names are returned as errors.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<TrustReport, String> {
        let mut set = BTreeSet::new();
        for n in names {
            set.insert(Trust::parse(n).ok_or_else(|| {
                format!("unknown trust class `{n}` (expected remote, stored or local)")
            })?);
        }
        Ok(TrustReport(set))
    }

    /// False when a finding whose most exposed source is `trust` is demoted to a note.
    pub fn reports(&self, trust: Option<Trust>) -> bool {
        trust.is_none_or(|t| self.0.contains(&t))
    }

    /// The severity of a finding of `rule_id` whose most exposed source is `trust`.
    pub fn severity(&self, rule_id: &str, trust: Option<Trust>) -> Severity {
        if self.reports(trust) {
            severity_of(rule_id)
        } else {
            Severity::Note
        }
    }

    /// Re-derives the severity of every taint finding under this profile.
    pub fn apply(&self, findings: &mut [Finding]) {
        for f in findings.iter_mut().filter(|f| f.trust.is_some()) {
            f.severity = self.severity(&f.rule, f.trust);
        }
    }
}

fn severity_of(rule_id: &str) -> Severity {
    rule(rule_id)
        .map(|r| r.severity)
        .unwrap_or(Severity::Warning)
}

fn line_text(file: Option<&ParsedFile>, line: usize) -> String {
    let Some(f) = file else {
        return String::new();
    };
    f.lines
        .line_text(&f.text, line)
        .trim()
        .chars()
        .take(80)
        .collect()
}

/// Findings for the flows whose sink is in `path`, one per sink: flows of one rule into the
/// same sink (line and text) are one finding that names every source, so a call with two
/// tainted arguments is one problem in the editor, not two. `file` (the parse of `path`)
/// supplies the text of intermediate lines in the same file.
pub fn flow_findings(path: &str, file: Option<&ParsedFile>, flows: &[TaintFlow]) -> Vec<Finding> {
    let mut sinks: BTreeMap<(&str, usize, &str), Vec<&TaintFlow>> = BTreeMap::new();
    for f in flows.iter().filter(|f| f.sink.file == path && !f.sanitized) {
        sinks
            .entry((f.rule.as_str(), f.sink.line, f.sink.text.as_str()))
            .or_default()
            .push(f);
    }
    let mut out = Vec::new();
    for ((rule_id, line, sink_text), group) in sinks {
        let name = rule(rule_id)
            .map(|r| r.name)
            .unwrap_or("Tainted data reaches a sink");
        let mut origins: Vec<String> = Vec::new();
        let mut evidence: Vec<Evidence> = Vec::new();
        let mut seen: BTreeSet<Evidence> = BTreeSet::new();
        for f in &group {
            let where_from = if f.source.file == path {
                format!("line {}", f.source.line)
            } else {
                format!("{}:{}", f.source.file, f.source.line)
            };
            let origin = format!(
                "{} {} data from `{}` ({where_from})",
                f.trust.name(),
                f.source.kind,
                f.source.text
            );
            if !origins.contains(&origin) {
                origins.push(origin);
            }
            let steps = f.path.iter().map(|s| Evidence {
                file: s.file.clone(),
                line: s.line,
                role: "step".into(),
                text: if s.file == path {
                    line_text(file, s.line)
                } else {
                    String::new()
                },
            });
            let source = Evidence {
                file: f.source.file.clone(),
                line: f.source.line,
                role: "source".into(),
                text: f.source.text.clone(),
            };
            for e in std::iter::once(source).chain(steps) {
                if seen.insert(e.clone()) {
                    evidence.push(e);
                }
            }
        }
        evidence.push(Evidence {
            file: path.to_string(),
            line,
            role: "sink".into(),
            text: sink_text.to_string(),
        });
        let verb = if origins.len() == 1 {
            "reaches"
        } else {
            "reach"
        };
        // The message names a few sources; the evidence lists them all.
        let mut named: Vec<String> = origins.iter().take(MESSAGE_SOURCES).cloned().collect();
        if origins.len() > MESSAGE_SOURCES {
            named.push(format!("{} more sources", origins.len() - MESSAGE_SOURCES));
        }
        // Remote before stored before local: the most exposed source decides.
        let trust = group.iter().map(|f| f.trust).min();
        out.push(Finding {
            rule: rule_id.to_string(),
            line,
            severity: TrustReport::default().severity(rule_id, trust),
            message: format!("{name}: {} {verb} `{sink_text}`", join_and(&named)),
            evidence,
            trust,
        });
    }
    out
}

/// How many sources a merged taint finding's message names.
const MESSAGE_SOURCES: usize = 3;

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// One finding per run of unreachable statements of one function.
pub fn unreachable_findings(path: &str, cfg: &Cfg, unreachable: &[Unreachable]) -> Vec<Finding> {
    let mut reachable_starts: Vec<usize> = cfg
        .graph
        .node_weights()
        .filter(|w| w.range.end > w.range.start)
        .map(|w| w.range.start)
        .collect();
    reachable_starts.sort_unstable();
    let mut runs: Vec<Vec<&Unreachable>> = Vec::new();
    for u in unreachable {
        let extend = runs.last().and_then(|r| r.last()).is_some_and(|prev| {
            let lo = prev.range.start;
            let hi = u.range.start;
            // No reachable statement starts between the previous unreachable one and this.
            let i = reachable_starts.partition_point(|&s| s <= lo);
            reachable_starts.get(i).is_none_or(|&s| s >= hi)
        });
        if extend {
            if let Some(r) = runs.last_mut() {
                r.push(u);
            }
        } else {
            runs.push(vec![u]);
        }
    }
    runs.into_iter()
        .filter_map(|run| {
            let first = *run.first()?;
            let last = *run.last()?;
            let end = run.iter().map(|u| u.end_line).max().unwrap_or(first.line);
            let message = if run.len() == 1 {
                format!("unreachable statement `{}`", first.text)
            } else {
                format!(
                    "{} unreachable statements (lines {}-{})",
                    run.len(),
                    first.line,
                    end
                )
            };
            let mut evidence = vec![Evidence {
                file: path.to_string(),
                line: first.line,
                role: "first".into(),
                text: first.text.clone(),
            }];
            if run.len() > 1 {
                evidence.push(Evidence {
                    file: path.to_string(),
                    line: last.line,
                    role: "last".into(),
                    text: last.text.clone(),
                });
            }
            Some(Finding {
                rule: "unreachable-code".into(),
                line: first.line,
                severity: severity_of("unreachable-code"),
                message,
                evidence,
                trust: None,
            })
        })
        .collect()
}

/// The `syntax-error` note of a file that parses only in part: one per file, at the first
/// region that did not parse, naming every such region's lines (the first eight, then a
/// count), so a user knows what was not analysed. Evidence: the first and the last line of
/// each region.
pub fn syntax_findings(path: &str, file: &ParsedFile) -> Vec<Finding> {
    const NAMED: usize = 8;
    let (regions, total) = file.syntax_error_regions();
    let Some(first) = regions.first() else {
        return Vec::new();
    };
    let mut spans: Vec<(usize, usize)> = regions.iter().map(|r| (r.line, r.end_line)).collect();
    spans.sort_unstable();
    spans.dedup();
    let mut evidence = Vec::new();
    for &(line, end) in &spans {
        evidence.push(Evidence {
            file: path.to_string(),
            line,
            role: "first".into(),
            text: line_text(Some(file), line),
        });
        if end > line {
            evidence.push(Evidence {
                file: path.to_string(),
                line: end,
                role: "last".into(),
                text: line_text(Some(file), end),
            });
        }
    }
    let named: Vec<String> = spans
        .iter()
        .take(NAMED)
        .map(|&(a, b)| {
            if b > a {
                format!("{a}-{b}")
            } else {
                a.to_string()
            }
        })
        .collect();
    let more = total.max(spans.len()) - named.len();
    let message = match (spans.len(), &first.missing) {
        (1, Some(kind)) => format!(
            "syntax error: missing `{kind}` at line {}; the code around it may not be analysed",
            first.line
        ),
        (1, None) => format!(
            "syntax error: line{} {} did not parse and {} not analysed",
            if first.end_line > first.line { "s" } else { "" },
            named[0],
            if first.end_line > first.line {
                "were"
            } else {
                "was"
            }
        ),
        _ => format!(
            "{} parts of this file did not parse and were not analysed: lines {}{}",
            total.max(spans.len()),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ),
    };
    // Without the preprocessor, what does not parse in C and C++ is mostly a macro.
    let message = if matches!(file.language, Language::C | Language::Cpp) {
        format!("{message} (in C and C++ usually a macro crosscheck does not expand: it parses them without their preprocessor)")
    } else {
        message
    };
    vec![Finding {
        rule: "syntax-error".into(),
        line: first.line,
        severity: severity_of("syntax-error"),
        message,
        evidence,
        trust: None,
    }]
}

/// Syntactic rules over the whole file (see the module docs).
pub fn pattern_findings(path: &str, file: &ParsedFile, cancel: &Cancel) -> Vec<Finding> {
    let lang = file.language;
    if !matches!(
        lang,
        Language::Python | Language::C | Language::Cpp | Language::Solidity
    ) {
        return Vec::new();
    }
    // Python's one pattern rule is `shell=True`: text without the word has no finding, and a
    // definition without it is not visited.
    const PYTHON_WORD: &str = "shell";
    if lang == Language::Python && !file.text.contains(PYTHON_WORD) {
        return Vec::new();
    }
    let imports = if lang == Language::Python {
        python_from_imports(file)
    } else {
        BTreeMap::new()
    };
    let mut out = Vec::new();
    // Built on the first non-literal format of the file.
    let mut consts: Option<FormatConstness<'_>> = None;
    let mut visited = 0usize;
    preorder(file.root(), true, |n| {
        visited += 1;
        if visited.is_multiple_of(4096) && cancel.is_cancelled() {
            return Visit::Stop;
        }
        match (lang, n.kind()) {
            (Language::Solidity, kind::MEMBER_EXPRESSION) => tx_origin(path, file, n, &mut out),
            (Language::Solidity, kind::EXPRESSION_STATEMENT) => {
                unchecked_call(path, file, n, &mut out)
            }
            (Language::Python, kind::CALL) => shell_true(path, file, n, &imports, &mut out),
            (Language::Python, kind::FUNCTION_DEFINITION | kind::CLASS_DEFINITION)
                if !file.node_text(n).contains(PYTHON_WORD) =>
            {
                return Visit::Skip;
            }
            (Language::C | Language::Cpp, kind::CALL_EXPRESSION) => {
                c_call(path, file, n, &mut consts, &mut out)
            }
            _ => {}
        }
        Visit::Descend
    });
    out
}

fn finding(
    rule_id: &str,
    path: &str,
    line: usize,
    message: String,
    role: &str,
    text: String,
) -> Finding {
    Finding {
        rule: rule_id.into(),
        line,
        severity: severity_of(rule_id),
        message,
        evidence: vec![Evidence {
            file: path.to_string(),
            line,
            role: role.into(),
            text,
        }],
        trust: None,
    }
}

fn short(file: &ParsedFile, n: Node<'_>) -> String {
    let t = file.node_text(n);
    let first = t.lines().next().unwrap_or("").trim();
    first.chars().take(80).collect()
}

fn strip_wrappers(mut n: Node<'_>) -> Node<'_> {
    for _ in 0..32 {
        if matches!(
            n.kind(),
            kind::EXPRESSION | kind::PARENTHESIZED_EXPRESSION | kind::CALL_ARGUMENT
        ) && n.named_child_count() == 1
        {
            match n.named_child(0) {
                Some(c) => n = c,
                None => break,
            }
        } else {
            break;
        }
    }
    n
}

fn tx_origin(path: &str, file: &ParsedFile, n: Node<'_>, out: &mut Vec<Finding>) {
    let text: String = file.node_text(n).split_whitespace().collect();
    if text != "tx.origin" {
        return;
    }
    // Walk up to the enclosing comparison / require / if condition (bounded).
    let mut cur = n;
    for _ in 0..16 {
        let Some(p) = cur.parent() else { return };
        match p.kind() {
            kind::BINARY_EXPRESSION => {
                let op = p
                    .child_by_field_name(field::OPERATOR)
                    .map(|o| file.node_text(o))
                    .unwrap_or("");
                if op == "==" || op == "!=" {
                    let other = [
                        p.child_by_field_name(field::LEFT),
                        p.child_by_field_name(field::RIGHT),
                    ]
                    .into_iter()
                    .flatten()
                    .map(strip_wrappers)
                    .find(|o| o.id() != strip_wrappers(cur).id() && o.id() != n.id());
                    let other_text: String = other
                        .map(|o| file.node_text(o).split_whitespace().collect())
                        .unwrap_or_default();
                    if other_text == "msg.sender" {
                        return;
                    }
                    let line = file.line_of(n.start_byte());
                    out.push(finding(
                        "tx-origin-auth",
                        path,
                        line,
                        format!("`tx.origin` used for authorisation in `{}`", short(file, p)),
                        "condition",
                        short(file, p),
                    ));
                    return;
                }
            }
            kind::EXPRESSION_STATEMENT
            | kind::STATEMENT
            | kind::BLOCK_STATEMENT
            | kind::FUNCTION_BODY => return,
            _ => {}
        }
        cur = p;
    }
}

fn unchecked_call(path: &str, file: &ParsedFile, stmt: Node<'_>, out: &mut Vec<Finding>) {
    let Some(expr) = stmt.named_child(0).map(strip_wrappers) else {
        return;
    };
    if expr.kind() != kind::CALL_EXPRESSION {
        return;
    }
    let Some(mut f) = expr
        .child_by_field_name(field::FUNCTION)
        .map(strip_wrappers)
    else {
        return;
    };
    if f.kind() == kind::STRUCT_EXPRESSION {
        match f.child_by_field_name(field::TYPE).map(strip_wrappers) {
            Some(t) => f = t,
            None => return,
        }
    }
    if f.kind() != kind::MEMBER_EXPRESSION {
        return;
    }
    let method = f
        .child_by_field_name(field::PROPERTY)
        .map(|p| file.node_text(p))
        .unwrap_or("");
    if matches!(method, "send" | "call" | "delegatecall" | "staticcall") {
        let line = file.line_of(expr.start_byte());
        out.push(finding(
            "unchecked-low-level-call",
            path,
            line,
            format!("the result of `{method}` is not checked"),
            "call",
            short(file, expr),
        ));
    }
}

/// `from subprocess import call as c` -> `c` -> `subprocess.call`.
fn python_from_imports(file: &ParsedFile) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let root = file.root();
    let mut c = root.walk();
    for item in root.named_children(&mut c) {
        match item.kind() {
            kind::IMPORT_FROM_STATEMENT => {
                let Some(m) = item.child_by_field_name(field::MODULE_NAME) else {
                    continue;
                };
                let module = file.node_text(m);
                let mut c2 = item.walk();
                for name in item.children_by_field_name(field::NAME, &mut c2) {
                    let (orig, alias) = if name.kind() == kind::ALIASED_IMPORT {
                        (
                            name.child_by_field_name(field::NAME),
                            name.child_by_field_name(field::ALIAS),
                        )
                    } else {
                        (Some(name), Some(name))
                    };
                    if let (Some(o), Some(a)) = (orig, alias) {
                        out.insert(
                            file.node_text(a).to_string(),
                            format!("{module}.{}", file.node_text(o)),
                        );
                    }
                }
            }
            kind::IMPORT_STATEMENT => {
                let mut c2 = item.walk();
                for name in item.children_by_field_name(field::NAME, &mut c2) {
                    if name.kind() == kind::ALIASED_IMPORT {
                        if let (Some(o), Some(a)) = (
                            name.child_by_field_name(field::NAME),
                            name.child_by_field_name(field::ALIAS),
                        ) {
                            out.insert(
                                file.node_text(a).to_string(),
                                file.node_text(o).to_string(),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn shell_true(
    path: &str,
    file: &ParsedFile,
    call: Node<'_>,
    imports: &BTreeMap<String, String>,
    out: &mut Vec<Finding>,
) {
    let Some(f) = call.child_by_field_name(field::FUNCTION) else {
        return;
    };
    let callee: String = file.node_text(f).split_whitespace().collect();
    let (head, rest) = callee.split_once('.').unwrap_or((callee.as_str(), ""));
    let full = match imports.get(head) {
        Some(exp) if rest.is_empty() => exp.clone(),
        Some(exp) => format!("{exp}.{rest}"),
        None => callee.clone(),
    };
    let Some(func) = full.strip_prefix("subprocess.") else {
        return;
    };
    if !matches!(
        func,
        "call" | "run" | "Popen" | "check_call" | "check_output"
    ) {
        return;
    }
    let Some(args) = call.child_by_field_name(field::ARGUMENTS) else {
        return;
    };
    let mut c = args.walk();
    let kids: Vec<Node<'_>> = args.named_children(&mut c).collect();
    let shell_true = kids.iter().any(|k| {
        k.kind() == kind::KEYWORD_ARGUMENT
            && k.child_by_field_name(field::NAME)
                .map(|n| file.node_text(n))
                == Some("shell")
            && k.child_by_field_name(field::VALUE)
                .map(|v| file.node_text(v))
                == Some("True")
    });
    if !shell_true {
        return;
    }
    let command = kids
        .iter()
        .find(|k| k.kind() != kind::KEYWORD_ARGUMENT)
        .or_else(|| {
            kids.iter().find(|k| {
                k.child_by_field_name(field::NAME)
                    .map(|n| file.node_text(n))
                    == Some("args")
            })
        });
    let literal = command.is_some_and(|c| {
        let c = if c.kind() == kind::KEYWORD_ARGUMENT {
            c.child_by_field_name(field::VALUE).unwrap_or(*c)
        } else {
            *c
        };
        c.kind() == kind::STRING
            && !{
                let mut w = c.walk();
                let has_interp = c
                    .named_children(&mut w)
                    .any(|x| x.kind() == kind::INTERPOLATION);
                has_interp
            }
    });
    if literal || command.is_none() {
        return;
    }
    let line = file.line_of(call.start_byte());
    out.push(finding(
        "subprocess-shell-true",
        path,
        line,
        format!("`subprocess.{func}` runs a non-constant command with shell=True"),
        "call",
        short(file, call),
    ));
}

/// Index of the format argument of printf-family functions.
fn format_index(name: &str) -> Option<usize> {
    Some(match name {
        "printf" | "vprintf" | "wprintf" | "vwprintf" => 0,
        "fprintf" | "vfprintf" | "sprintf" | "vsprintf" | "dprintf" | "vdprintf" | "syslog"
        | "vsyslog" | "fwprintf" | "vfwprintf" => 1,
        "snprintf" | "vsnprintf" | "swprintf" | "vswprintf" | "_snprintf" | "_vsnprintf"
        | "_snwprintf" | "_vsnwprintf" => 2,
        _ => return None,
    })
}

fn c_call<'t>(
    path: &str,
    file: &'t ParsedFile,
    call: Node<'t>,
    consts: &mut Option<FormatConstness<'t>>,
    out: &mut Vec<Finding>,
) {
    let Some(f) = call.child_by_field_name(field::FUNCTION) else {
        return;
    };
    let name: String = file.node_text(f).split_whitespace().collect();
    let name = name.trim_start_matches("std::");
    let line = file.line_of(call.start_byte());
    if name == "gets" {
        out.push(finding(
            "dangerous-gets",
            path,
            line,
            "`gets` cannot bound its input; use `fgets`".into(),
            "call",
            short(file, call),
        ));
        return;
    }
    let Some(idx) = format_index(name) else {
        return;
    };
    let Some(args) = call.child_by_field_name(field::ARGUMENTS) else {
        return;
    };
    let mut c = args.walk();
    let kids: Vec<Node<'_>> = args
        .named_children(&mut c)
        .filter(|k| k.kind() != kind::COMMENT)
        .collect();
    let Some(fmt) = kids.get(idx) else { return };
    let fmt_text = file.node_text(*fmt);
    let is_literal = matches!(
        fmt.kind(),
        kind::STRING_LITERAL | kind::CONCATENATED_STRING | kind::RAW_STRING_LITERAL
    );
    let is_macro = fmt.kind() == kind::IDENTIFIER
        && fmt_text.chars().any(|c| c.is_ascii_uppercase())
        && fmt_text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    // gettext-style wrappers around a literal: `printf(_("..."))`.
    let is_wrapped_literal = fmt.kind() == kind::CALL_EXPRESSION
        && fmt
            .child_by_field_name(field::ARGUMENTS)
            .and_then(|a| a.named_child(0))
            .is_some_and(|a| a.kind() == kind::STRING_LITERAL);
    if is_literal || is_macro || is_wrapped_literal {
        return;
    }
    // The lint next to the flow: quiet unless the writes the file shows put program input
    // into the format (constants, or values out of sight, are left to the taint analysis).
    let ix = consts.get_or_insert_with(|| FormatConstness::new(file));
    if ix.of(*fmt) != Constness::Runtime {
        return;
    }
    out.push(finding(
        "format-string-not-literal",
        path,
        line,
        format!(
            "`{name}` is called with a non-literal format string `{}` that can hold program input",
            fmt_text.chars().take(40).collect::<String>()
        ),
        "call",
        short(file, call),
    ));
}

/// Sorts and deduplicates findings (by line, rule, message).
pub fn normalize(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.sort_by(|a, b| {
        (a.line, &a.rule, &a.message, &a.evidence).cmp(&(b.line, &b.rule, &b.message, &b.evidence))
    });
    findings.dedup_by(|a, b| a.line == b.line && a.rule == b.rule && a.message == b.message);
    findings
}
