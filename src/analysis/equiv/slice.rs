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

/// Stand-ins for types a Java file imports from packages that are not on this machine, when
/// the file uses each of them in only two ways that need nothing of the real type: as an
/// interface the file's classes implement (an empty interface), or as an exception that is
/// thrown or caught (an unchecked exception whose constructor takes any arguments). The same
/// fully qualified name keeps an exception's reported class as the real one. `None` when an
/// imported type is used in any other way (a field, a parameter, a call on it, a superclass):
/// a stand-in would then have to guess its members. Returns (file name, source) pairs: each
/// file is named after its type (javac does not ask sources to sit in their package's
/// directories, and writes the classes there itself).
pub fn java_missing_type_stubs(text: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let code: String = strip_comments_and_strings(text);
    for line in code.lines() {
        let Some(rest) = line.trim().strip_prefix("import ") else {
            continue;
        };
        if rest.starts_with("static ") {
            continue;
        }
        let path = rest.trim_end_matches(';').trim();
        if PLATFORM.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        let (package, name) = path.rsplit_once('.')?;
        if name == "*" || !name.chars().next().is_some_and(char::is_uppercase) {
            return None;
        }
        let uses = word_positions(&code, name);
        let mut interface = false;
        let mut exception = false;
        for at in uses {
            let before = code[..at].trim_end();
            let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
            let line_text = &code[line_start..];
            if line_text.trim_start().starts_with("import ") {
                continue;
            }
            // In a class header's `implements` list.
            let header = code[..at].rfind(['{', ';', '}']).map_or(0, |i| i + 1);
            let clause = &code[header..at];
            if clause.contains(" implements ") && !clause.contains('(') {
                interface = true;
            } else if before.ends_with("throw new")
                || before.ends_with("catch (")
                || before.ends_with("catch(")
                || before.ends_with("throws")
                || (before.ends_with(',') && clause.contains(" throws "))
            {
                exception = true;
            } else {
                return None;
            }
        }
        if interface && exception {
            return None;
        }
        // A type imported and never used gets an empty interface: javac rejects the import of
        // a missing package even when nothing uses it.
        let body = if !exception {
            format!("package {package};\npublic interface {name} {{}}\n")
        } else {
            format!(
                "package {package};\npublic class {name} extends RuntimeException {{\n    public {name}(Object... args) {{ }}\n}}\n"
            )
        };
        out.push((format!("{name}.java"), body));
    }
    Some(out)
}

/// Where a program observes a mutant of one of its functions: the functions that the
/// program's `main` calls directly and that reach `function` through calls (C and C++).
/// A mutant is a change of the program, and the program sees `function` only through
/// them, so comparing them (with `function` inside) keeps out the inputs that no caller
/// ever passes (a result the caller masks, a global the caller has checked).
///
/// An empty list when no chain of calls from `main` reaches `function` at all (C only, with no
/// `constructor`/`destructor` attribute in the file): the program never runs it.
///
/// `None` when that would hide a way `function` is observed, or when there is nothing
/// above `function` to compare: `function` is `main` or is called by `main` itself; the
/// file has no single `main`, or defines `function` or a caller more than once (overloads,
/// `static` copies); `function` is used other than by a call (a function pointer, a
/// callback, a macro: every use of its name must be followed by `(`, outside
/// preprocessor lines); the file includes a project header (`#include "defs.h"`), whose
/// macros could call it unseen; or it is C++ and nothing `main` calls reaches it. Calls are found by name,
/// in comment- and string-free text, so a call is never missed; only the callers themselves
/// must be called by name. `file` is parsed as the harness reads it (C's K&R definitions in
/// prototype form, so that `main(argc, argv) int argc; ...` is a function).
pub fn program_observers(file: &ParsedFile, function: &str) -> Option<Vec<String>> {
    use std::collections::BTreeMap;
    if !matches!(file.language, Language::C | Language::Cpp) || function == "main" {
        return None;
    }
    let text = file.text.as_str();
    let fns = file.functions();
    // A project header (`#include "defs.h"`, not a standard one spelt with quotes) could
    // call it from a macro this text never shows.
    let project_header = text.lines().any(|l| {
        let Some(d) = l.trim_start().strip_prefix('#') else {
            return false;
        };
        let Some(rest) = d.trim_start().strip_prefix("include") else {
            return false;
        };
        let name = rest.trim().trim_matches('"');
        rest.trim_start().starts_with('"') && !STANDARD_HEADERS.contains(&name)
    });
    if project_header {
        return None;
    }
    let stripped = strip_comments_and_strings(text);
    // Every use of the name is a call, a declaration or the definition.
    for at in word_positions(&stripped, function) {
        let after = stripped[at + function.len()..].trim_start();
        let line_start = stripped[..at].rfind('\n').map_or(0, |i| i + 1);
        if !after.starts_with('(') || stripped[line_start..].trim_start().starts_with('#') {
            return None;
        }
    }
    let mut bodies: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for f in fns.iter() {
        if f.class.is_some() || f.kind != FunctionKind::Function {
            continue;
        }
        let called = called_names(&stripped[f.node.byte_range()]);
        if bodies.insert(f.simple_name.as_str(), called).is_some() {
            return None;
        }
    }
    let defined: BTreeSet<&str> = bodies.keys().copied().collect();
    let direct = bodies.get("main")?;
    if !defined.contains(function) || direct.contains(function) {
        return None;
    }
    let reaches = |from: &str| reaches_by_calls(&bodies, from, function, Some("main"));
    let observers: Vec<String> = direct
        .iter()
        .filter(|g| g.as_str() != "main" && defined.contains(g.as_str()) && reaches(g))
        .cloned()
        .collect();
    // Never reached: in C nothing runs before or after `main` but what it calls (C++ runs
    // constructors of globals, and GNU C functions marked `constructor`/`destructor`).
    if observers.is_empty()
        && (file.language != Language::C
            || stripped.contains("constructor")
            || stripped.contains("destructor"))
    {
        return None;
    }
    Some(observers)
}

/// Where a Java class observes a mutant of one of its `private` methods: the class's other
/// methods (not `private`, not constructors) that reach `function` through calls, as
/// (name, first line) pairs in file order. A private method can be called only from inside its
/// class, so the class's clients see it only through them, and comparing them keeps out the
/// arguments no caller passes (a `quicksort(data, first, last)` that relies on a sentinel its
/// public `sort` has placed).
///
/// `None` when that would hide a way `function` is observed or there is nothing to compare:
/// `function` is not one private method of one class (no overloads); its name is used other
/// than by a call (a method reference `this::f`), or in another class of the file (a nested
/// class may call it), or it is overloaded (calls are found by name; the callers' overloads
/// count as one method); a constructor reaches it (every object the harness builds runs
/// it); or no non-private method reaches it.
pub fn java_private_observers(file: &ParsedFile, function: &str) -> Option<Vec<(String, usize)>> {
    use std::collections::BTreeMap;
    if file.language != Language::Java {
        return None;
    }
    let text = file.text.as_str();
    let fns = file.functions();
    let stripped = strip_comments_and_strings(text);
    let head = |f: &crate::syntax::functions::Function<'_>| -> String {
        let r = f.node.byte_range();
        let t = &stripped[r.start..r.end.min(stripped.len())];
        t.split('(').next().unwrap_or("").to_string()
    };
    let is_private = |f: &crate::syntax::functions::Function<'_>| {
        head(f).split_whitespace().any(|w| w == "private")
    };
    let targets: Vec<_> = fns.iter().filter(|f| f.simple_name == function).collect();
    let [target] = targets.as_slice() else {
        return None;
    };
    if target.kind == FunctionKind::Constructor || !is_private(target) {
        return None;
    }
    let class = target.class.clone()?;
    // Every use of the name is a call or the definition, inside a method of the same class.
    for at in word_positions(&stripped, function) {
        let after = stripped[at + function.len()..].trim_start();
        let before = stripped[..at].trim_end();
        if !after.starts_with('(') || before.ends_with("::") {
            return None;
        }
        let inside = fns.iter().filter(|f| f.node.byte_range().contains(&at));
        let innermost = inside.min_by_key(|f| f.node.byte_range().len())?;
        if innermost.class.as_deref() != Some(class.as_str()) {
            return None;
        }
    }
    let mut bodies: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for f in fns.iter() {
        if f.class.as_deref() != Some(class.as_str()) || f.kind == FunctionKind::Lambda {
            continue;
        }
        let r = f.node.byte_range();
        // Overloads (constructors among them) are one node: calls by name cannot tell them
        // apart, so each reaches what any of them reaches (more observers, never fewer).
        let called = called_names(&stripped[r.start..r.end.min(stripped.len())]);
        bodies
            .entry(f.simple_name.as_str())
            .or_default()
            .extend(called);
    }
    let reaches = |from: &str| reaches_by_calls(&bodies, from, function, None);
    let mut observers = Vec::new();
    for f in fns.iter() {
        if f.class.as_deref() != Some(class.as_str()) || f.simple_name == function {
            continue;
        }
        match f.kind {
            FunctionKind::Constructor if reaches(&f.simple_name) => return None,
            FunctionKind::Function | FunctionKind::Method
                if !is_private(f) && reaches(&f.simple_name) =>
            {
                observers.push((f.simple_name.clone(), f.start_line));
            }
            _ => {}
        }
    }
    (!observers.is_empty()).then_some(observers)
}

/// Whether `from` reaches `function` through calls, `bodies` mapping each defined function to
/// the names its body calls (never walking into `through_never`: C's `main`).
fn reaches_by_calls(
    bodies: &std::collections::BTreeMap<&str, BTreeSet<String>>,
    from: &str,
    function: &str,
    through_never: Option<&str>,
) -> bool {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut stack = vec![from];
    while let Some(g) = stack.pop() {
        if !seen.insert(g) {
            continue;
        }
        for c in bodies.get(g).into_iter().flatten() {
            if c == function {
                return true;
            }
            if let Some((&d, _)) = bodies.get_key_value(c.as_str()) {
                if Some(d) != through_never {
                    stack.push(d);
                }
            }
        }
    }
    false
}

/// Headers of the C library and POSIX (and DOS's `conio.h`), which declare no function of the
/// program whichever way they are included.
const STANDARD_HEADERS: &[&str] = &[
    "assert.h",
    "ctype.h",
    "errno.h",
    "float.h",
    "limits.h",
    "locale.h",
    "math.h",
    "setjmp.h",
    "signal.h",
    "stdarg.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "time.h",
    "unistd.h",
    "fcntl.h",
    "malloc.h",
    "memory.h",
    "conio.h",
];

/// Byte offsets where `name` occurs as a whole word.
pub(super) fn word_positions(text: &str, name: &str) -> Vec<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name)
        .filter(|(i, _)| {
            !text[..*i].chars().next_back().is_some_and(ident)
                && !text[i + name.len()..].chars().next().is_some_and(ident)
        })
        .map(|(i, _)| i)
        .collect()
}

/// The text with comments blanked and string and character literals emptied (same length,
/// line breaks kept), so that words in them do not count as uses.
fn strip_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            blank(&mut out, i..end);
            i = end;
        } else if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            let mut j = i + 1;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            if end > i + 2 {
                blank(&mut out, i + 1..end - 1);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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

    fn java(text: &str) -> ParsedFile {
        ParsedFile::parse(Language::Java, text)
    }

    #[test]
    fn a_private_method_is_observed_through_the_methods_of_its_class_that_reach_it() {
        let text = "public class Q {\n    private void part(int[] d, int a, int b) { if (a < b) part(d, a + 1, b); }\n    private void go(int[] d) { part(d, 0, d.length - 1); }\n    public void sort(int[] d) { go(d); }\n    public void sort(int[] d, int n) { sort(d); }\n    public int size(int[] d) { return d.length; }\n}\n";
        // Both overloads of `sort` reach `part` through `go`; `size` does not; `go` is private.
        assert_eq!(
            java_private_observers(&java(text), "part"),
            Some(vec![("sort".to_string(), 4), ("sort".to_string(), 5)])
        );
        // Not private: its callers outside the class are unknown.
        assert_eq!(java_private_observers(&java(text), "sort"), None);
        // A method reference, a constructor that runs it, a nested class that calls it, an
        // overloaded private method: each hides a way it is observed.
        let reference = text.replace(
            "public int size(int[] d) { return d.length; }",
            "public Runnable r() { return this::go0; }\n    private void go0() { }",
        );
        assert_eq!(java_private_observers(&java(&reference), "go0"), None);
        let ctor = text.replace(
            "public int size(int[] d) { return d.length; }",
            "public Q() { go(new int[0]); }",
        );
        assert_eq!(java_private_observers(&java(&ctor), "part"), None);
        let nested = text.replace(
            "public int size(int[] d) { return d.length; }",
            "static class N { void f(Q q) { q.part(new int[0], 0, 0); } }",
        );
        assert_eq!(java_private_observers(&java(&nested), "part"), None);
        let overloaded = text.replace(
            "public int size(int[] d) { return d.length; }",
            "private void part(int[] d) { }",
        );
        assert_eq!(java_private_observers(&java(&overloaded), "part"), None);
        // Nothing but itself reaches it.
        let alone = "public class R {\n    private int f(int x) { return f(x - 1); }\n    public int g(int x) { return x; }\n}\n";
        assert_eq!(java_private_observers(&java(alone), "f"), None);
    }

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
    fn missing_types_only_implemented_or_thrown_get_stand_ins() {
        let src = "package p;\nimport java.util.Map;\nimport org.acme.naming.Coder;\nimport org.acme.errors.AccessError;\nimport org.acme.unused.Thing;\n\n/** Uses Coder and AccessError in a comment. */\npublic class C implements Coder, Cloneable {\n    private Map cache;\n    public Object clone() {\n        try {\n            return super.clone();\n        } catch (CloneNotSupportedException e) {\n            throw new AccessError(\"AccessError: cannot clone\", e);\n        }\n    }\n    void check() throws AccessError { }\n}\n";
        let stubs = java_missing_type_stubs(src).unwrap();
        let paths: Vec<&str> = stubs.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["Coder.java", "AccessError.java", "Thing.java"]);
        assert_eq!(
            stubs[0].1,
            "package org.acme.naming;\npublic interface Coder {}\n"
        );
        assert!(stubs[1]
            .1
            .contains("public class AccessError extends RuntimeException"));
        assert!(stubs[1].1.contains("public AccessError(Object... args)"));
        assert!(stubs[2].1.contains("public interface Thing {}"));
    }

    #[test]
    fn a_missing_type_used_for_anything_else_gets_no_stand_in() {
        for use_ in [
            "    private Coder coder;\n",
            "    int f(Coder c) { return 1; }\n",
            "    int g() { return Coder.size(); }\n",
        ] {
            let src =
                format!("import org.acme.Coder;\npublic class C implements Coder {{\n{use_}}}\n");
            assert_eq!(java_missing_type_stubs(&src), None, "{use_}");
        }
        let src = "import org.acme.Base;\npublic class C extends Base { }\n";
        assert_eq!(java_missing_type_stubs(src), None);
        let src = "import org.acme.*;\npublic class C { }\n";
        assert_eq!(java_missing_type_stubs(src), None);
        // Platform imports need nothing.
        let src = "import java.util.List;\npublic class C { List<Integer> l; }\n";
        assert_eq!(java_missing_type_stubs(src), Some(Vec::new()));
    }

    #[test]
    fn method_references_count_as_calls() {
        let src = "class V {\n  static int one(int x) { return x; }\n  static int all(java.util.List<Integer> l) { return l.stream().mapToInt(V::one).sum(); }\n  static int other() { return 2; }\n}\n";
        let (out, cut) = java_reachable(src, "all").unwrap();
        assert_eq!(cut, 1);
        assert!(out.contains("static int one"));
        assert!(!out.contains("other"));
    }

    fn observers(lang: Language, text: &str, function: &str) -> Option<Vec<String>> {
        program_observers(&ParsedFile::parse(lang, text.to_string()), function)
    }

    const STEER: &str = "int lo(int a, int b) { return a < b; }\n/* hi(x) in a comment */\nint hi(int a, int b) { return lo(b, a); }\nint pick(int a, int b) { if (a == b) return 0; return hi(a, b) ? 2 : 1; }\nint show(int a) { return printf(\"hi(%d)\", a); }\nint main(void) { show(pick(1, 2)); return 0; }\n";

    #[test]
    fn a_helper_is_observed_through_what_main_calls() {
        // `lo` and `hi` are reached only through `pick`; the comment and the string do not count.
        assert_eq!(
            observers(Language::C, STEER, "lo"),
            Some(vec!["pick".to_string()])
        );
        assert_eq!(
            observers(Language::C, STEER, "hi"),
            Some(vec!["pick".to_string()])
        );
        // Called by `main` itself, or `main`: nothing above to compare.
        assert_eq!(observers(Language::C, STEER, "pick"), None);
        assert_eq!(observers(Language::C, STEER, "main"), None);
        // No `main`: a library.
        let lib = STEER.replace("int main(void)", "int run(void)");
        assert_eq!(observers(Language::C, &lib, "lo"), None);
        // A function nothing reaches from `main` is never run (C); C++ may run it from a
        // global's constructor, and so may GNU C's `constructor` functions.
        let spare = format!("{STEER}int spare(int a) {{ return lo(a, a); }}\n");
        assert_eq!(observers(Language::C, &spare, "spare"), Some(Vec::new()));
        assert_eq!(observers(Language::Cpp, &spare, "spare"), None);
        let early = format!("{spare}__attribute__((constructor)) static void boot(void) {{ }}\n");
        assert_eq!(observers(Language::C, &early, "spare"), None);
        let header = format!("#include <stdio.h>\n#include \"spare.h\"\n{spare}");
        assert_eq!(observers(Language::C, &header, "spare"), None);
        assert_eq!(observers(Language::C, &header, "lo"), None);
        let system = format!("#include <stdio.h>\n#include \"math.h\"\n{spare}");
        assert_eq!(observers(Language::C, &system, "spare"), Some(Vec::new()));
        // Every caller reaching it, in name order.
        let two = STEER.replace(
            "show(pick(1, 2));",
            "show(pick(1, 2)); lo(3, 4) + hi(5, 6);",
        );
        assert_eq!(observers(Language::C, &two, "hi"), None);
        let both = STEER.replace("show(pick(1, 2));", "show(pick(1, 2)); twice(1);")
            + "int twice(int a) { return hi(a, a); }\n";
        assert_eq!(
            observers(Language::C, &both, "hi"),
            Some(vec!["pick".to_string(), "twice".to_string()])
        );
    }

    #[test]
    fn a_helper_used_as_a_value_is_not_observed_through_callers() {
        // A comparator handed to qsort, a function pointer, a macro: calls of it are not
        // visible by name, so no caller is known to be the only way in.
        let qsort = STEER.replace(
            "show(pick(1, 2));",
            "int v[2] = {2, 1}; qsort(v, 2, sizeof v[0], lo); show(pick(1, 2));",
        );
        assert_eq!(observers(Language::C, &qsort, "lo"), None);
        let pointer = STEER.replace(
            "return hi(a, b) ? 2 : 1;",
            "int (*f)(int, int) = &hi; return f(a, b) ? 2 : 1;",
        );
        assert_eq!(observers(Language::C, &pointer, "hi"), None);
        let macro_ = format!("#define LO(a, b) lo(a, b)\n{STEER}");
        assert_eq!(observers(Language::C, &macro_, "lo"), None);
        // Defined twice (a C++ overload): which one is called is not read by name.
        let overload = format!("{STEER}int lo(int a) {{ return a; }}\n");
        assert_eq!(observers(Language::Cpp, &overload, "lo"), None);
        assert_eq!(
            observers(Language::Python, "def main():\n    pass\n", "main"),
            None
        );
    }
}
