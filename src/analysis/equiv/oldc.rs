//! Pre-standard C rewritten into the C that the parser and the harness take, line for line.
//!
//! Old programs (the Siemens suite in MutantBench: `tcas`, `replace`, `schedule`) define
//! functions the K&R way, often with an implicit `int` result:
//!
//! ```c
//! patsize(pat, n)          ->  int patsize(char* pat, int n)
//! char* pat;               ->
//! int n;                   ->
//! {                        ->  {
//! ```
//!
//! tree-sitter-c does not parse either form, and one such definition turns the whole file
//! into syntax errors (no function found, globals misread). The rewrite gives each such
//! definition a prototype parameter list built from its declarations (an undeclared parameter
//! is `int`, as in C89), blanks the declaration lines, and writes the implicit `int`. Trailing
//! tokens after `#endif`/`#else` (which compilers ignore with a warning) are blanked too. Every
//! line keeps its number, so diff hunks and reported lines still match the file as written.
//!
//! The meaning is the same for every call with arguments of the declared types; K&R calls
//! promote `char`/`short`/`float` arguments and the callee converts them back, which gives the
//! same values.

/// Words that start a line but never name an old-style function.
const NOT_FUNCTIONS: &[&str] = &[
    "if", "while", "for", "switch", "return", "sizeof", "else", "do", "case", "goto", "typedef",
    "struct", "union", "enum", "extern", "static",
];

/// The rewritten text, or `None` when there is nothing to rewrite.
pub fn modernise(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let depth_at = brace_depths(&lines);
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut changed = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        for d in ["#endif", "#else"] {
            if let Some(rest) = t.strip_prefix(d) {
                let rest_t = rest.trim();
                if !rest_t.is_empty() && !rest_t.starts_with("/*") && !rest_t.starts_with("//") {
                    let indent = &line[..line.len() - t.len()];
                    out[i] = format!("{indent}{d}{}", blank(rest));
                    changed = true;
                }
            }
        }
        if depth_at[i] != 0 || line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some(mut h) = header(line) else {
            continue;
        };
        // The result type on a line of its own (`bool` then `getlines(s, maxsize)`).
        if !h.has_type
            && i > 0
            && depth_at[i - 1] == 0
            && type_only(lines[i - 1], i.checked_sub(2).map(|k| lines[k]))
        {
            h.has_type = true;
        }
        // What follows the header up to the body's `{`: K&R declarations only.
        let mut decls: Vec<(usize, String)> = Vec::new();
        let mut j = i + 1;
        let mut body = None;
        while j < lines.len() && j < i + 1 + 64 {
            let t = lines[j].trim();
            if t.is_empty() || t.starts_with("/*") && t.ends_with("*/") || t.starts_with("//") {
                j += 1;
                continue;
            }
            if t.starts_with('{') {
                body = Some(j);
                break;
            }
            if !t.ends_with(';') || t.contains('(') && !t.contains("(*") || t.contains('=') {
                break;
            }
            decls.push((j, t.to_string()));
            j += 1;
        }
        if body.is_none() || h.params.is_empty() && decls.is_empty() && h.has_type {
            continue;
        }
        let mut typed: Vec<(String, String)> = Vec::new();
        for (_, d) in &decls {
            match declared(d) {
                Some(v) => typed.extend(v),
                None => {
                    typed.clear();
                    break;
                }
            }
        }
        if !decls.is_empty() && typed.is_empty() {
            continue;
        }
        if typed.iter().any(|(n, _)| !h.params.contains(n)) {
            continue;
        }
        let list: Vec<String> = h
            .params
            .iter()
            .map(|p| {
                typed
                    .iter()
                    .find(|(n, _)| n == p)
                    .map(|(_, full)| full.clone())
                    .unwrap_or_else(|| format!("int {p}"))
            })
            .collect();
        let list = if list.is_empty() {
            "void".to_string()
        } else {
            list.join(", ")
        };
        let prefix = if h.has_type { "" } else { "int " };
        let newline = if line.ends_with('\n') { "\n" } else { "" };
        out[i] = format!(
            "{prefix}{}({list}){}{newline}",
            &line[..h.open],
            line[h.close + 1..].trim_end_matches('\n')
        );
        for (k, _) in &decls {
            out[*k] = blank(lines[*k]);
        }
        changed = true;
    }
    changed.then(|| out.concat())
}

/// An old-style header: `[type] name(a, b)` with only names between the parentheses.
struct Header {
    params: Vec<String>,
    has_type: bool,
    /// Byte offsets of `(` and `)` in the line.
    open: usize,
    close: usize,
}

fn header(line: &str) -> Option<Header> {
    let open = line.find('(')?;
    let close = open + line[open..].find(')')?;
    let after = line[close + 1..].trim();
    if !(after.is_empty()
        || after.starts_with("/*") && after.ends_with("*/")
        || after.starts_with("//"))
    {
        return None;
    }
    let before = line[..open].trim_end();
    let name_start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |k| k + 1);
    let name = &before[name_start..];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let ty = before[..name_start].trim();
    let first = before
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    if NOT_FUNCTIONS.contains(&first) && (first != "static" || ty.is_empty()) {
        return None;
    }
    let inner = line[open + 1..close].trim();
    let params: Vec<String> = if inner.is_empty() {
        Vec::new()
    } else {
        inner.split(',').map(|p| p.trim().to_string()).collect()
    };
    if !params.iter().all(|p| is_ident(p)) || params.iter().any(|p| p == "void") {
        return None;
    }
    Some(Header {
        params,
        has_type: !ty.is_empty(),
        open,
        close,
    })
}

/// A line that holds only a type: words and `*`, as in `static char *` or `bool`.
/// Whether `line` is a result type alone (`bool`, `static char *`). It may be indented (` void`
/// in `replace.c`) when the line before it ends a declaration, a definition, a comment or a
/// directive, so it cannot continue an expression.
fn type_only(line: &str, before: Option<&str>) -> bool {
    let t = line.trim();
    let indented = line.starts_with([' ', '\t']);
    let fresh = before.is_none_or(|b| {
        let b = b.trim();
        b.is_empty() || b.starts_with('#') || b.ends_with([';', '}']) || b.ends_with("*/")
    });
    !t.is_empty()
        && !line.starts_with('#')
        && (!indented || fresh)
        && t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && t.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '*' || c == ' ' || c == '\t')
        && !t
            .split_whitespace()
            .any(|w| NOT_FUNCTIONS.contains(&w) && w != "static" && w != "extern")
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `char *s, t[];` -> `[("s", "char *s"), ("t", "char t[]")]`.
fn declared(decl: &str) -> Option<Vec<(String, String)>> {
    let decl = decl.split("/*").next()?.trim().trim_end_matches(';').trim();
    let mut parts = decl.split(',');
    let first = parts.next()?;
    // The base type ends where the first declarator's `*`s and name begin.
    let head = first.split('[').next()?.trim_end();
    let name_start = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |k| k + 1);
    let base_end = head[..name_start]
        .trim_end_matches(|c: char| c == '*' || c.is_whitespace())
        .len();
    let base = head[..base_end].trim();
    if base.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for d in std::iter::once(&first[base_end..]).chain(parts) {
        let d: String = d.chars().filter(|c| !c.is_whitespace()).collect();
        let name = d.split('[').next()?.trim_start_matches('*');
        if !is_ident(name) {
            return None;
        }
        out.push((name.to_string(), format!("{base} {d}")));
    }
    Some(out)
}

/// The line with every character but the line break turned into a space.
fn blank(s: &str) -> String {
    s.chars()
        .map(|c| if c == '\n' || c == '\r' { c } else { ' ' })
        .collect()
}

/// The brace depth at the start of each line, outside comments, strings and characters.
fn brace_depths(lines: &[&str]) -> Vec<i32> {
    let mut out = Vec::with_capacity(lines.len());
    let mut depth = 0i32;
    let mut in_block = false;
    for line in lines {
        out.push(depth);
        let b = line.as_bytes();
        let mut i = 0;
        let mut quote: Option<u8> = None;
        while i < b.len() {
            let c = b[i];
            if in_block {
                if c == b'*' && b.get(i + 1) == Some(&b'/') {
                    in_block = false;
                    i += 1;
                }
            } else if let Some(q) = quote {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
                in_block = true;
                i += 1;
            } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
                break;
            } else if c == b'"' || c == b'\'' {
                quote = Some(c);
            } else if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth = (depth - 1).max(0);
            }
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{Language, ParsedFile};

    #[test]
    fn old_style_definitions_become_prototypes_on_the_same_lines() {
        let src = "#include <stdio.h>\n#endif __H__\nint g;\n\npatsize(pat, n)\nchar*\tpat;\nint n;\n{\n  return n;\n}\n\nstatic char *end(s, k) char *s; { return s; }\nList *append(a, e)\nList *a;\nElem e[];\n{\n  return a;\n}\nmain()\n{\n  if (g)\n    return 1;\n  return 0;\n}\nint count(x)\n{\n  return x;\n}\n";
        let out = modernise(src).unwrap();
        assert_eq!(out.lines().count(), src.lines().count());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[1].trim_end(), "#endif");
        assert_eq!(lines[4], "int patsize(char *pat, int n)");
        assert_eq!(lines[5].trim(), "");
        assert_eq!(lines[6].trim(), "");
        assert_eq!(lines[12], "List *append(List *a, Elem e[])");
        assert_eq!(lines[18], "int main(void)");
        assert_eq!(lines[24], "int count(int x)");
        // The one-line K&R definition is left as it was (its declarations share the line).
        assert_eq!(lines[11], "static char *end(s, k) char *s; { return s; }");
        // Statements inside bodies are never touched.
        assert_eq!(lines[20], "  if (g)");
        // A result type on the line before the name.
        let src = "static bool\nfound(s)\nchar *s;\n{\n  return *s != 0;\n}\n";
        let out = modernise(src).unwrap();
        assert_eq!(out.lines().nth(1), Some("found(char *s)"));
        // An indented result type after a finished definition (replace.c writes ` void`).
        let src = "int g;\n void\nclear(j)\nint *j;\n{\n  *j = 0;\n}\n";
        let out = modernise(src).unwrap();
        assert_eq!(out.lines().nth(2), Some("clear(int *j)"));
        // An indented word that continues an expression is not a result type.
        let src = "int g = 1 +\n two\nclear(j)\nint *j;\n{\n  *j = 0;\n}\n";
        let out = modernise(src).unwrap();
        assert_eq!(out.lines().nth(2), Some("int clear(int *j)"));
    }

    #[test]
    fn the_rewritten_file_parses_where_the_original_did_not() {
        let src = "int g;\nfind(a, n)\nint a[];\nint n;\n{\n  int i;\n  for (i = 0; i < n; i++)\n    if (a[i] == g)\n      return i;\n  return -1;\n}\n";
        assert!(ParsedFile::parse(Language::C, src.to_string()).has_errors());
        let out = modernise(src).unwrap();
        let parsed = ParsedFile::parse(Language::C, out);
        assert!(!parsed.has_errors());
        assert_eq!(parsed.functions()[0].simple_name, "find");
        // Modern C is left alone.
        assert!(modernise("int f(int a) {\n  return a;\n}\n").is_none());
    }
}
