//! A Java file cut down to what one entry method can reach, for a class that does not compile
//! alone (a library class whose imports name packages that are not on this machine, such as
//! commons-lang's `ArrayUtils` importing its `builder` package).
//!
//! Methods of the top-level class that the entry cannot reach by name are blanked out
//! (every character but newlines becomes a space, so lines and columns stay where they were),
//! then imports whose name no longer occurs. Everything that runs without being called stays:
//! fields and their initialisers, constructors, initialiser blocks, nested types, and the
//! methods the runtime calls by itself (`toString()`, `equals(Object)`, `hashCode()`,
//! `compareTo(..)`, `clone()`, `close()`, `iterator()`, `run()`, and any `@Override`). The
//! reachable set is an over-approximation by name: every method whose name is called (or
//! referenced as `::name`) from kept text is kept, with all its overloads. So a blanked method
//! is never called and the cut changes nothing the entry can observe.

use crate::syntax::functions::FunctionKind;
use crate::syntax::{Language, ParsedFile};
use std::collections::BTreeSet;

/// Methods the runtime may call without a call in the source, by name and parameter count.
const IMPLICIT: &[(&str, usize)] = &[
    ("toString", 0),
    ("equals", 1),
    ("hashCode", 0),
    ("compareTo", 1),
    ("compare", 2),
    ("clone", 0),
    ("close", 0),
    ("iterator", 0),
    ("run", 0),
    ("call", 0),
    ("finalize", 0),
    ("main", 1),
];

/// Packages of the Java platform: imports of anything else cannot resolve here (the harness
/// compiles with no class path).
const PLATFORM: &[&str] = &[
    "java.",
    "javax.",
    "jdk.",
    "org.w3c.",
    "org.xml.",
    "org.ietf.",
];

/// The cut text and how many methods were blanked; `None` when nothing can be cut.
pub fn java_reachable(text: &str, entry: &str) -> Option<(String, usize)> {
    let file = ParsedFile::parse(Language::Java, text.to_string());
    let fns = file.functions();
    let top: Vec<usize> = fns
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.kind == FunctionKind::Method && f.class.as_deref().is_some_and(|c| !c.contains('.'))
        })
        .map(|(i, _)| i)
        .collect();
    let implicit = |i: usize| {
        let f = &fns[i];
        IMPLICIT
            .iter()
            .any(|(n, k)| f.simple_name == *n && f.params.len() == *k)
            || text[f.node.byte_range()].contains("@Override")
    };
    if !top.iter().any(|&i| fns[i].simple_name == entry) {
        return None;
    }
    let mut kept: BTreeSet<usize> = top
        .iter()
        .copied()
        .filter(|&i| fns[i].simple_name == entry || implicit(i))
        .collect();
    // Text that runs or is kept whatever is called: all but the top-level methods.
    let mut outside = text.as_bytes().to_vec();
    for &i in &top {
        blank(&mut outside, fns[i].node.byte_range());
    }
    let outside = String::from_utf8_lossy(&outside).into_owned();
    let mut called = called_names(&outside);
    let mut scanned: BTreeSet<usize> = BTreeSet::new();
    loop {
        let fresh: Vec<usize> = kept.difference(&scanned).copied().collect();
        if fresh.is_empty() {
            break;
        }
        for i in fresh {
            scanned.insert(i);
            called.extend(called_names(&text[fns[i].node.byte_range()]));
        }
        for &i in &top {
            if called.contains(fns[i].simple_name.as_str()) {
                kept.insert(i);
            }
        }
    }
    let mut out = text.as_bytes().to_vec();
    let mut cut = 0;
    for &i in &top {
        if kept.contains(&i) {
            continue;
        }
        cut += 1;
        blank(&mut out, fns[i].node.byte_range());
    }
    if cut == 0 {
        return None;
    }
    let mut out = String::from_utf8(out).ok()?;
    // Imports whose name the remaining text no longer uses, and wildcard imports of packages
    // that are not on this machine.
    let is_import = |l: &str| l.trim_start().starts_with("import ");
    let words: BTreeSet<&str> = out
        .lines()
        .filter(|l| !is_import(l))
        .flat_map(|l| l.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')))
        .filter(|w| !w.is_empty())
        .collect();
    let mut drop = Vec::new();
    let mut at = 0;
    for line in out.split_inclusive('\n') {
        if let Some(rest) = line.trim().strip_prefix("import ") {
            let path = rest
                .trim_start_matches("static ")
                .trim_end_matches(';')
                .trim();
            let unused = match path.rsplit('.').next() {
                Some("*") => !PLATFORM.iter().any(|p| path.starts_with(p)),
                Some(name) => !words.contains(name),
                None => false,
            };
            if unused {
                drop.push(at..at + line.trim_end_matches('\n').len());
            }
        }
        at += line.len();
    }
    for r in drop {
        out.replace_range(r.clone(), &" ".repeat(r.len()));
    }
    Some((out, cut))
}

/// Every byte of `range` but line breaks becomes a space: lines and columns stay put.
fn blank(bytes: &mut [u8], range: std::ops::Range<usize>) {
    for b in &mut bytes[range] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// Names called (`name(`) or referenced (`::name`) in `text`.
fn called_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut i = 0;
    while i < b.len() {
        if ident(b[i]) && (i == 0 || !ident(b[i - 1])) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let name = &text[start..i];
            let mut j = i;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            let before = text[..start].trim_end();
            if j < b.len() && b[j] == b'(' || before.ends_with("::") {
                out.insert(name.to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "package p;\nimport java.util.List;\nimport org.acme.Builder;\n\npublic class U {\n    static final int[] EMPTY = new int[0];\n    static int twice(int x) { return add(x, x); }\n    private static int add(int a, int b) { return a + b; }\n    static int add(int a) { return a; }\n    static String show(int x) { return new Builder().append(x).toString(); }\n    static int size(List<Integer> l) { return l.size(); }\n    public String toString() { return \"U\"; }\n}\n";

    #[test]
    fn unreachable_methods_and_their_imports_are_blanked_in_place() {
        let (out, cut) = java_reachable(LIB, "twice").unwrap();
        // `show` and `size` go; `add` (both overloads) and `toString()` stay.
        assert_eq!(cut, 2);
        assert_eq!(out.len(), LIB.len());
        assert_eq!(out.lines().count(), LIB.lines().count());
        assert!(out.contains("static int twice"));
        assert!(out.contains("private static int add(int a, int b)"));
        assert!(out.contains("static int add(int a)"));
        assert!(out.contains("public String toString()"));
        assert!(out.contains("static final int[] EMPTY"));
        assert!(!out.contains("Builder"));
        assert!(!out.contains("List"));
        assert!(!out.contains("show"));
    }

    #[test]
    fn what_the_kept_code_needs_is_kept() {
        let (out, cut) = java_reachable(LIB, "show").unwrap();
        // `twice`, both `add`s and `size`.
        assert_eq!(cut, 4);
        // The import it needs stays (and will not resolve: the cut does not hide that).
        assert!(out.contains("import org.acme.Builder;"));
        assert!(out.contains("static String show"));
        assert!(java_reachable(LIB, "missing").is_none());
    }

    #[test]
    fn method_references_count_as_calls() {
        let src = "class V {\n  static int one(int x) { return x; }\n  static int all(java.util.List<Integer> l) { return l.stream().mapToInt(V::one).sum(); }\n  static int other() { return 2; }\n}\n";
        let (out, cut) = java_reachable(src, "all").unwrap();
        assert_eq!(cut, 1);
        assert!(out.contains("static int one"));
        assert!(!out.contains("other"));
    }
}
