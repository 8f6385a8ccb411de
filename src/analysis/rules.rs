//! The rule registry: every finding crosscheck reports comes from one row of [`RULES`], a
//! declarative table with a stable id, a name, a severity, the languages it applies to, a
//! description that doubles as hover text, and what its evidence lists.
//!
//! Taint rules (`taint-*`) are keyed by the sink kind of the taint specifications
//! ([`crate::analysis::taint::spec`]); a user-defined sink kind without a row of its own is
//! reported under `taint-other`. The other rules are syntactic checks run by
//! [`crate::analysis::findings`].

use crate::syntax::Language;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable identifier (never renamed once released).
    pub id: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// Languages it applies to (empty = all).
    pub languages: &'static [Language],
    /// One or two sentences, shown as hover text.
    pub description: &'static str,
    /// What the finding's evidence lists.
    pub evidence: &'static str,
    /// For taint rules: the sink kind they report.
    pub sink_kind: Option<&'static str>,
}

const ALL: &[Language] = &[];
const PY: &[Language] = &[Language::Python];
const C_CPP: &[Language] = &[Language::C, Language::Cpp];
const SOL: &[Language] = &[Language::Solidity];
const TAINT_EVIDENCE: &str = "the source, each intermediate line, and the sink";

const fn taint(
    id: &'static str,
    kind: &'static str,
    name: &'static str,
    description: &'static str,
) -> Rule {
    Rule {
        id,
        name,
        severity: Severity::Error,
        languages: ALL,
        description,
        evidence: TAINT_EVIDENCE,
        sink_kind: Some(kind),
    }
}

/// Every rule, in a stable order.
pub const RULES: &[Rule] = &[
    taint(
        "taint-sql",
        "sql",
        "SQL injection",
        "Data from an untrusted source reaches a SQL statement without sanitisation. Use a parameterised query (placeholders plus separate values).",
    ),
    taint(
        "taint-command",
        "command",
        "OS command injection",
        "Data from an untrusted source reaches an operating-system command. Pass arguments as a list without a shell, or quote them.",
    ),
    taint(
        "taint-code",
        "code",
        "Code injection",
        "Data from an untrusted source is evaluated as code (eval/exec, dynamic class or library loading).",
    ),
    taint(
        "taint-path",
        "path",
        "Path traversal",
        "Data from an untrusted source is used as a file path; `..` segments can reach files outside the intended directory.",
    ),
    taint(
        "taint-xss",
        "xss",
        "Cross-site scripting",
        "Data from an untrusted source is written into an HTML response without encoding.",
    ),
    taint(
        "taint-ldap",
        "ldap",
        "LDAP injection",
        "Data from an untrusted source is used in an LDAP query or base name without encoding.",
    ),
    taint(
        "taint-xpath",
        "xpath",
        "XPath injection",
        "Data from an untrusted source is used in an XPath expression without encoding.",
    ),
    taint(
        "taint-redirect",
        "redirect",
        "Open redirect",
        "A redirect target is controlled by an untrusted source.",
    ),
    taint(
        "taint-deserialization",
        "deserialization",
        "Unsafe deserialisation",
        "Untrusted bytes are deserialised with a format that can run code (pickle, marshal, yaml.load, ObjectInputStream).",
    ),
    taint(
        "taint-ssrf",
        "ssrf",
        "Server-side request forgery",
        "The server makes a request to a URL controlled by an untrusted source.",
    ),
    taint(
        "taint-format-string",
        "format_string",
        "Format string from input",
        "A printf-family format string comes from an untrusted source; `%n` and `%s` in it read or write memory.",
    ),
    taint(
        "taint-buffer-overflow",
        "buffer_overflow",
        "Unbounded copy of input into a fixed buffer",
        "Data from an untrusted source is copied into a fixed-size array without a length bound (strcpy/strcat/sprintf).",
    ),
    taint(
        "taint-low-level-call",
        "low_level_call",
        "Caller-controlled low-level call",
        "The target, value or data of a low-level `call` is controlled by the caller of the contract.",
    ),
    taint(
        "taint-delegatecall",
        "delegatecall",
        "Caller-controlled delegatecall",
        "The target or data of `delegatecall` is controlled by the caller: foreign code runs with this contract's storage.",
    ),
    taint(
        "taint-ether-transfer",
        "ether_transfer",
        "Caller-controlled ether transfer",
        "The recipient or amount of `transfer`/`send` is controlled by the caller of the contract.",
    ),
    taint(
        "taint-selfdestruct",
        "selfdestruct",
        "Caller-controlled selfdestruct",
        "The beneficiary of `selfdestruct` is controlled by the caller of the contract.",
    ),
    taint(
        "taint-other",
        "*",
        "Tainted data reaches a sink",
        "Data from an untrusted source reaches a sink of a user-defined kind.",
    ),
    Rule {
        id: "unreachable-code",
        name: "Unreachable code",
        severity: Severity::Warning,
        languages: ALL,
        description: "These statements can never run: every path to them leaves earlier (return, throw, break, continue, an endless loop).",
        evidence: "the first and last unreachable line",
        sink_kind: None,
    },
    Rule {
        id: "tx-origin-auth",
        name: "tx.origin used for authorisation",
        severity: Severity::Warning,
        languages: SOL,
        description: "`tx.origin` is the account that started the transaction, not the immediate caller; checks on it let any contract the owner calls act as the owner. Use `msg.sender`.",
        evidence: "the condition comparing tx.origin",
        sink_kind: None,
    },
    Rule {
        id: "unchecked-low-level-call",
        name: "Unchecked low-level call",
        severity: Severity::Warning,
        languages: SOL,
        description: "The boolean result of `send`/`call`/`delegatecall` is ignored; a failed transfer goes unnoticed.",
        evidence: "the call statement",
        sink_kind: None,
    },
    Rule {
        id: "subprocess-shell-true",
        name: "subprocess with shell=True and a non-constant command",
        severity: Severity::Warning,
        languages: PY,
        description: "`shell=True` runs the command through the shell; a command built at run time can be injected. Pass a list of arguments without `shell=True`.",
        evidence: "the call",
        sink_kind: None,
    },
    Rule {
        id: "format-string-not-literal",
        name: "Non-literal format string",
        severity: Severity::Warning,
        languages: C_CPP,
        description: "A printf-family function receives a format string that is not a literal; if it can contain user data, `%n`/`%s` read or write memory. Use `printf(\"%s\", s)`.",
        evidence: "the call",
        sink_kind: None,
    },
    Rule {
        id: "dangerous-gets",
        name: "Use of gets",
        severity: Severity::Error,
        languages: C_CPP,
        description: "`gets` cannot limit how much it reads and always allows a buffer overflow. Use `fgets`.",
        evidence: "the call",
        sink_kind: None,
    },
    taint(
        "taint-header",
        "header",
        "HTTP header injection (response splitting)",
        "Data from an untrusted source is written into an HTTP response header or cookie; a CR/LF in it starts a new header or a new response. Encode it (URLEncoder.encode) or reject line breaks.",
    ),
    Rule {
        id: "syntax-error",
        name: "Code that does not parse",
        severity: Severity::Note,
        languages: ALL,
        description: "The parser could not read this part of the file, so it was not analysed: findings there may be missing. Fix the syntax, or check that the file is in the language its extension says.",
        evidence: "the first and last line not parsed",
        sink_kind: None,
    },
];

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The rule reporting flows into sinks of a kind (`taint-other` for unknown kinds).
pub fn taint_rule_id(sink_kind: &str) -> &'static str {
    RULES
        .iter()
        .find(|r| r.sink_kind == Some(sink_kind))
        .map(|r| r.id)
        .unwrap_or("taint-other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_described() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule ids");
        for r in RULES {
            assert!(
                r.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                r.id
            );
            assert!(r.description.ends_with('.'), "{}", r.id);
            assert!(!r.name.is_empty() && !r.evidence.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn every_builtin_sink_kind_has_its_own_rule() {
        for lang in Language::ALL {
            let spec = crate::analysis::taint::TaintSpec::builtin(lang);
            for s in &spec.sinks {
                assert_ne!(
                    taint_rule_id(&s.kind),
                    "taint-other",
                    "{lang}: sink kind {} has no rule",
                    s.kind
                );
            }
        }
        assert_eq!(taint_rule_id("made-up"), "taint-other");
        assert_eq!(rule("taint-sql").map(|r| r.severity), Some(Severity::Error));
    }
}
