//! C/C++ macro definitions, read once per file for the analyses that must see through them.
//!
//! This is not a preprocessor: the text is never rewritten and positions never move. It
//! records each `#define` of a file with every alternative definition (one per `#if` /
//! `#ifdef` / `#else` arm, since either arm may be the one compiled), so an analysis can ask
//! what a name may stand for:
//!
//! - an object-like macro whose body is one identifier is an alias (`#define EXECL execl`,
//!   `#define COMMAND_ARG3 data`); chains are followed (bounded, cycles stop);
//! - a function-like macro whose body is one call passing its parameters in order is a call
//!   alias (`#define SYSTEM(x) system(x)`, `#define GETENV(n) getenv(n)`).
//!
//! Other bodies (expressions, statements, token pasting) are kept as text and resolve to
//! nothing. Directives are read from the text as translation phases 2 and 3 read it
//! ([`define_directives`], linear in the text), not from the tree: the grammar can misread a
//! directive (a comment holding a line continuation ends a `#define` early). Every
//! `#define` counts, wherever it stands (inside a function body or an `#if 0` arm too).
//! `#undef` is not tracked (a name keeps every definition it ever had: the analyses
//! over-approximate).

use super::{Language, ParsedFile};
use crate::syntax::lang::kind;
use std::collections::BTreeMap;

/// Longest alias chain followed (`#define A B`, `#define B C`, ...).
const CHAIN_LIMIT: usize = 8;
/// Most definitions kept per file (hostile input: a generated header with millions).
const MAX_DEFINITIONS: usize = 100_000;

/// One definition of a macro.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroDef {
    /// `None` for object-like macros; the parameter names of function-like ones.
    pub params: Option<Vec<String>>,
    /// The replacement text, trimmed, with line continuations joined.
    pub body: String,
}

/// The macros of a file (and, merged in by the caller, of the headers it includes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Macros {
    defs: BTreeMap<String, Vec<MacroDef>>,
    /// `#include "..."` paths of the file, as written.
    includes: Vec<String>,
}

/// C/C++ nodes whose children are still at file scope: the unit, preprocessor arms,
/// `extern "C"` blocks and namespaces.
pub fn opens_file_scope(kind: &str) -> bool {
    matches!(
        kind,
        kind::TRANSLATION_UNIT
            | kind::PREPROC_IF
            | kind::PREPROC_IFDEF
            | kind::PREPROC_ELSE
            | kind::PREPROC_ELIF
            | kind::PREPROC_ELIFDEF
            | kind::LINKAGE_SPECIFICATION
            | kind::DECLARATION_LIST
            | kind::NAMESPACE_DEFINITION
    )
}

impl Macros {
    /// The macros defined in `file`; empty for languages without a preprocessor. They are
    /// read from the text as the compiler reads it ([`define_directives`]), not from the
    /// tree, whose grammar can misread a directive.
    pub fn of(file: &ParsedFile) -> Macros {
        if !matches!(file.language, Language::C | Language::Cpp) {
            return Macros::default();
        }
        Macros::from_scan(read_directives(&file.text, false))
    }

    fn from_scan(scan: DirectiveScan) -> Macros {
        let mut m = Macros::default();
        for d in scan.defines {
            let def = MacroDef {
                params: d.params,
                body: d.body,
            };
            let list = m.defs.entry(d.name).or_default();
            if !list.contains(&def) {
                list.push(def);
            }
        }
        m.includes = scan
            .includes
            .into_iter()
            .filter(|i| !i.system)
            .map(|i| i.path)
            .collect();
        m
    }

    /// Adds the definitions of `other` (an included header's).
    pub fn merge(&mut self, other: &Macros) {
        for (name, defs) in &other.defs {
            let list = self.defs.entry(name.clone()).or_default();
            for d in defs {
                if !list.contains(d) {
                    list.push(d.clone());
                }
            }
        }
    }

    /// The `#include "..."` paths of the file, as written (system `<...>` includes excluded).
    pub fn includes(&self) -> &[String] {
        &self.includes
    }

    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Every definition of `name`, in document order.
    pub fn get(&self, name: &str) -> &[MacroDef] {
        self.defs.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The identifiers an object-like macro `name` may finally stand for, following alias
    /// chains through every alternative. Empty when `name` is no such macro.
    pub fn object_aliases(&self, name: &str) -> Vec<String> {
        self.aliases(name, false)
    }

    /// The functions a call `name(args)` may finally call when `name` is a macro: an
    /// object-like alias (`EXECL(..)` with `#define EXECL execl`) or a function-like macro
    /// that forwards its parameters in order (`#define SYSTEM(x) system(x)`).
    pub fn call_aliases(&self, name: &str) -> Vec<String> {
        self.aliases(name, true)
    }

    fn aliases(&self, name: &str, call: bool) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut frontier = vec![name.to_string()];
        let mut seen = vec![name.to_string()];
        for _ in 0..CHAIN_LIMIT {
            let mut next = Vec::new();
            for n in &frontier {
                let defs = self.get(n);
                if defs.is_empty() {
                    if n != name && !out.contains(n) {
                        out.push(n.clone());
                    }
                    continue;
                }
                for d in defs {
                    let target = match &d.params {
                        None => is_identifier(&d.body).then(|| d.body.clone()),
                        Some(params) if call => forwarded_callee(&d.body, params),
                        Some(_) => None,
                    };
                    if let Some(t) = target {
                        if !seen.contains(&t) {
                            seen.push(t.clone());
                            next.push(t);
                        }
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        // The chain may end right at the bound: its undefined names are aliases too.
        for n in frontier {
            if n != name && self.get(&n).is_empty() && !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }
}

/// One `#define` as the compiler reads it (see [`define_directives`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefineDirective {
    pub name: String,
    /// `None` for object-like macros; the parameter names of function-like ones.
    pub params: Option<Vec<String>>,
    /// The replacement with comments replaced by a space and whitespace collapsed.
    pub body: String,
    /// The directive's bytes in the original text (its continuation lines included).
    pub span: std::ops::Range<usize>,
}

/// The text of a C/C++ file read as translation phases 2 and 3 read it: a backslash before a
/// line break joins two lines, and a comment is one space, so a comment that runs over
/// several lines continues the line it starts on. The result lists its logical lines with
/// their original byte ranges; `#define` directives among them are in `defines`, the other
/// lines' text (comments removed, literals kept) in `code`.
///
/// tree-sitter's grammar can misread a directive that the compiler reads plainly: in GNU
/// make's `ADD_BLOCK`, a comment holding a line continuation ends the `#define` early, and
/// the grammar then reports a macro named `if`. What must not be wrong about macros reads
/// them here instead. Linear in the text; at most `MAX_DEFINITIONS` directives are kept.
#[derive(Debug, Default, Clone)]
pub struct DirectiveScan {
    pub defines: Vec<DefineDirective>,
    /// The `#include` directives, in text order.
    pub includes: Vec<IncludeDirective>,
    /// The logical lines that are not `#define` directives.
    pub code: Vec<String>,
}

/// One `#include "path"`, `#include <path>` or `#include NAME` (a macro names the header: it
/// is read as a project header whose path is `NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeDirective {
    /// The path as written between the quotes or brackets, trimmed.
    pub path: String,
    /// `<path>`: a system header.
    pub system: bool,
}

pub fn define_directives(text: &str) -> DirectiveScan {
    read_directives(text, true)
}

/// [`define_directives`], keeping the other logical lines' text only when `keep_code`.
fn read_directives(text: &str, keep_code: bool) -> DirectiveScan {
    let b = text.as_bytes();
    let mut scan = DirectiveScan::default();
    let mut line = String::new();
    let mut start = 0usize;
    let mut i = 0usize;
    // A line break (`\n` or `\r\n`) starting at `j`: its length.
    let newline_at = |j: usize| -> usize {
        match b.get(j) {
            Some(b'\n') => 1,
            Some(b'\r') if b.get(j + 1) == Some(&b'\n') => 2,
            _ => 0,
        }
    };
    let finish = |line: &mut String, start: usize, end: usize, scan: &mut DirectiveScan| {
        match parse_define(line) {
            Some((name, params, body)) => {
                if scan.defines.len() < MAX_DEFINITIONS {
                    scan.defines.push(DefineDirective {
                        name,
                        params,
                        body,
                        span: start..end,
                    });
                }
            }
            None => {
                if let Some(include) = parse_include(line) {
                    scan.includes.push(include);
                }
                if keep_code {
                    scan.code.push(std::mem::take(line));
                }
            }
        }
        line.clear();
    };
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && newline_at(i + 1) > 0 {
            i += 1 + newline_at(i + 1);
            continue;
        }
        let nl = newline_at(i);
        if nl > 0 {
            finish(&mut line, start, i, &mut scan);
            i += nl;
            start = i;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 2);
            line.push(' ');
            i = end;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            // To the end of the line; a backslash before the break continues the comment.
            i += 2;
            while i < b.len() {
                if b[i] == b'\\' && newline_at(i + 1) > 0 {
                    i += 1 + newline_at(i + 1);
                } else if newline_at(i) > 0 {
                    break;
                } else {
                    i += 1;
                }
            }
            line.push(' ');
            continue;
        }
        if c == b'"' || c == b'\'' {
            // A literal, copied; it ends at its quote or (unterminated) at the line's end.
            let from = i;
            i += 1;
            while i < b.len() && b[i] != c && newline_at(i) == 0 {
                i += if b[i] == b'\\' && newline_at(i + 1) == 0 {
                    2
                } else {
                    1
                };
            }
            i = (i + usize::from(i < b.len() && b[i] == c)).min(b.len());
            line.push_str(&String::from_utf8_lossy(&b[from..i]));
            continue;
        }
        // Copy up to the next byte that needs a look.
        let from = i;
        while i < b.len() && !matches!(b[i], b'\\' | b'\n' | b'\r' | b'/' | b'"' | b'\'') {
            i += 1;
        }
        if i == from {
            i += 1;
        }
        line.push_str(&String::from_utf8_lossy(&b[from..i]));
    }
    finish(&mut line, start, b.len(), &mut scan);
    scan
}

/// `# define NAME(params) body` -> (name, params, body collapsed); `None` for other lines.
fn parse_define(line: &str) -> Option<(String, Option<Vec<String>>, String)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("define")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    if !is_identifier(name) {
        return None;
    }
    let mut rest = &rest[end..];
    let params = match rest.strip_prefix('(') {
        Some(inner) => {
            let close = inner.find(')')?;
            let list = inner[..close]
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            rest = &inner[close + 1..];
            Some(list)
        }
        None => None,
    };
    let body = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    Some((name.to_string(), params, body))
}

/// `# include "path"` or `# include <path>` -> the directive; `None` for other lines.
fn parse_include(line: &str) -> Option<IncludeDirective> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim_start();
    let (close, system) = match rest.chars().next()? {
        '"' => ('"', false),
        '<' => ('>', true),
        // `#include HEADER`: a macro names the header, which is not known here.
        _ => {
            let path = rest.split_whitespace().next()?;
            return Some(IncludeDirective {
                path: path.to_string(),
                system: false,
            });
        }
    };
    let inner = &rest[1..];
    let path = inner[..inner.find(close)?].trim();
    (!path.is_empty()).then(|| IncludeDirective {
        path: path.to_string(),
        system,
    })
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `f(a, b)` whose arguments are exactly `params` in order -> `f`.
fn forwarded_callee(body: &str, params: &[String]) -> Option<String> {
    let open = body.find('(')?;
    let callee = body[..open].trim();
    let inner = body[open + 1..].trim_end().strip_suffix(')')?;
    if !is_identifier(callee) || inner.contains(['(', ')']) {
        return None;
    }
    let args: Vec<&str> = if inner.trim().is_empty() {
        Vec::new()
    } else {
        inner.split(',').map(str::trim).collect()
    };
    let same = args.len() == params.len() && args.iter().zip(params).all(|(a, p)| a == p);
    same.then(|| callee.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn macros(lang: Language, src: &str) -> Macros {
        Macros::of(&ParsedFile::parse(lang, src))
    }

    #[test]
    fn directives_are_read_as_the_compiler_reads_them() {
        // GNU make's ADD_BLOCK: a comment inside the body holds a line continuation.
        let text = "# define ADD_BLOCK(list, addr) \\\n  do { \\\n    /* If we cannot get a block\t \\\n       we stop.  */ \\\n    if (p != NULL) { \\\n      (list) = p; \\\n    } \\\n  } while (0)\n\
                    int f(int x) { return x; } // #define NOT_A_MACRO 1\n\
                    #define MULTI 1 /* a comment over\n two lines */ + 2\n\
                    char *s = \"#define IN_A_STRING 1\";\n\
                    #  define\tSPACED(a,b)   ((a) +  (b))\n#define EMPTY\n#defineX 1\n";
        let scan = define_directives(text);
        let names: Vec<&str> = scan.defines.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["ADD_BLOCK", "MULTI", "SPACED", "EMPTY"]);
        let add = &scan.defines[0];
        assert_eq!(
            add.params.as_deref(),
            Some(&["list".to_string(), "addr".to_string()][..])
        );
        assert_eq!(add.body, "do { if (p != NULL) { (list) = p; } } while (0)");
        assert_eq!(&text[add.span.clone()][..9], "# define ");
        assert!(text[add.span.clone()].ends_with("while (0)"));
        assert_eq!(scan.defines[1].body, "1 + 2");
        assert_eq!(scan.defines[2].body, "((a) + (b))");
        assert_eq!(scan.defines[3].body, "");
        assert!(scan
            .code
            .iter()
            .any(|l| l.contains("return x;") && !l.contains("NOT_A_MACRO")));
        assert!(scan.code.iter().any(|l| l.contains("IN_A_STRING")));
    }

    #[test]
    fn includes_are_read_from_the_text() {
        let scan = define_directives(
            "#include <stdio.h>\n# include \"local.h\" // why\n/* #include \"no.h\" */\n\
             #include CONFIG_H\nchar *s = \"#include <no.h>\";\n#include\n",
        );
        let got: Vec<(&str, bool)> = scan
            .includes
            .iter()
            .map(|i| (i.path.as_str(), i.system))
            .collect();
        assert_eq!(
            got,
            [("stdio.h", true), ("local.h", false), ("CONFIG_H", false)]
        );
    }

    #[test]
    fn the_taint_macros_are_the_compilers_not_a_misread_trees() {
        // tree-sitter-c ends ADD_BLOCK at the comment's continuation and reports a macro `if`.
        let m = macros(
            Language::C,
            "# define ADD_BLOCK(l, a) \\\n  do { \\\n    /* a comment \t \\\n  on.  */ \\\n    if (p) \\\n      (l) = p; \\\n  } while (0)\n\
             int f(void) {\n#define RUN system\n  return 0;\n}\n",
        );
        assert!(m.get("if").is_empty());
        assert_eq!(m.get("ADD_BLOCK").len(), 1);
        // A definition inside a function body is a macro all the same.
        assert_eq!(m.call_aliases("RUN"), ["system"]);
    }

    #[test]
    fn aliases_follow_every_conditional_arm_and_chains() {
        let m = macros(
            Language::C,
            "#ifdef _WIN32\n#define EXECL _execl\n#else\n#define EXECL execl\n#endif\n\
             #define RUN EXECL\n#define ARG data /* the buffer */\n#define PATH \"/bin/sh\"\n\
             #define LOOP LOOP\n",
        );
        assert_eq!(m.object_aliases("EXECL"), ["_execl", "execl"]);
        assert_eq!(m.call_aliases("RUN"), ["_execl", "execl"]);
        assert_eq!(m.object_aliases("ARG"), ["data"]);
        assert!(m.object_aliases("PATH").is_empty());
        assert!(m.object_aliases("LOOP").is_empty());
        assert!(m.object_aliases("execl").is_empty());
    }

    #[test]
    fn function_like_macros_alias_only_forwarding_calls() {
        let m = macros(
            Language::Cpp,
            "#define SYSTEM(x) system(x)\n#define TWO(a, b) f(a, b)\n#define SWAP(a, b) f(b, a)\n\
             #define WRAP(x) g(h(x))\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n\
             #include \"local.h\"\n#include <stdio.h>\n",
        );
        assert_eq!(m.call_aliases("SYSTEM"), ["system"]);
        assert_eq!(m.call_aliases("TWO"), ["f"]);
        assert!(m.call_aliases("SWAP").is_empty());
        assert!(m.call_aliases("WRAP").is_empty());
        assert!(m.call_aliases("MAX").is_empty());
        assert!(m.object_aliases("SYSTEM").is_empty());
        assert_eq!(m.includes(), ["local.h"]);
    }

    #[test]
    fn other_languages_have_no_macros() {
        assert!(macros(Language::Python, "#define X y\n").is_empty());
    }
}
