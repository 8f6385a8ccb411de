//! Small syntax helpers shared by the call-graph indexer and resolver. All loops are bounded.

use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use tree_sitter::Node;

/// Named children of a node, comments skipped.
pub(super) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| !c.kind().contains(kind::COMMENT))
        .collect()
}

/// Strips expression wrappers: parentheses, Solidity's `expression` node, Solidity call
/// options (`f{value: 1}`), TypeScript non-null assertions and `await`.
pub(super) fn unwrap_expr(mut node: Node<'_>) -> Node<'_> {
    for _ in 0..64 {
        let next = match node.kind() {
            kind::PARENTHESIZED_EXPRESSION | kind::EXPRESSION | kind::NON_NULL_EXPRESSION => {
                let kids = named_children(node);
                if kids.len() == 1 {
                    kids.first().copied()
                } else {
                    None
                }
            }
            kind::STRUCT_EXPRESSION => node.child_by_field_name(field::TYPE),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return node,
        }
    }
    node
}

/// Call text for external callee names: tokens joined without layout whitespace, nested
/// argument lists shown as `(…)`, at most about 120 characters.
pub(super) fn short_text(file: &ParsedFile, node: Node<'_>) -> String {
    const MAX: usize = 120;
    let mut out = String::new();
    let mut stack = vec![node];
    let mut visited = 0usize;
    while let Some(n) = stack.pop() {
        visited += 1;
        if out.chars().count() >= MAX || visited > 2000 {
            out.push('…');
            break;
        }
        let kind = n.kind();
        let piece: Option<String> =
            if matches!(kind, kind::ARGUMENT_LIST | kind::ARGUMENTS) && n.id() != node.id() {
                Some("(…)".to_string())
            } else if n.child_count() == 0
                || kind.contains(kind::STRING)
                || kind.contains("literal")
                || kind == kind::TEMPLATE_ARGUMENT_LIST
            {
                let mut t = String::new();
                let mut space = false;
                for ch in file.node_text(n).chars().take(MAX) {
                    if ch.is_whitespace() {
                        space = true;
                        continue;
                    }
                    if space && !t.is_empty() {
                        t.push(' ');
                    }
                    space = false;
                    t.push(ch);
                }
                Some(t)
            } else {
                None
            };
        match piece {
            Some(p) => {
                if out.ends_with(is_ident_char) && p.starts_with(is_ident_char) {
                    out.push(' ');
                }
                out.push_str(&p);
            }
            None => {
                let mut cursor = n.walk();
                let kids: Vec<Node<'_>> = n.children(&mut cursor).collect();
                stack.extend(kids.into_iter().rev());
            }
        }
    }
    out
}

pub(super) fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Splits a C++ qualified name on `::` outside template brackets.
pub(super) fn split_cpp(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' => {
                depth += 1;
                cur.push(c);
            }
            '>' => {
                depth -= 1;
                cur.push(c);
            }
            ':' if depth <= 0 && chars.peek() == Some(&':') => {
                chars.next();
                out.push(std::mem::take(&mut cur));
            }
            c if c.is_whitespace() => {}
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Drops template arguments: `vector<int>` -> `vector`.
pub(super) fn strip_template(seg: &str) -> &str {
    match seg.find('<') {
        Some(i) => seg.get(..i).unwrap_or(seg),
        None => seg,
    }
}

const SMART_POINTERS: [&str; 6] = [
    "unique_ptr",
    "shared_ptr",
    "weak_ptr",
    "Optional",
    "optional",
    "Box",
];

/// Normalises a written type to a class-like name, or `None` for arrays, maps and types
/// that cannot name a class. `const Foo &` -> `Foo`, `std::unique_ptr<Foo>` -> `Foo`,
/// `Optional[Foo]` / `Foo | None` / `"Foo"` -> `Foo`, `List<Foo>` -> `List`.
pub(super) fn norm_type(raw: &str, lang: Language) -> Option<String> {
    norm_type_depth(raw, lang, 0)
}

fn norm_type_depth(raw: &str, lang: Language, depth: usize) -> Option<String> {
    if depth > 8 {
        return None;
    }
    let mut s = raw.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    // Union with None/null/undefined.
    if s.contains('|') && !s.contains('<') && !s.contains('[') {
        let parts: Vec<&str> = s
            .split('|')
            .map(str::trim)
            .filter(|p| !matches!(*p, "None" | "null" | "undefined" | ""))
            .collect();
        return match parts.as_slice() {
            [one] => norm_type_depth(one, lang, depth + 1),
            _ => None,
        };
    }
    s = s.trim_start_matches(':').trim();
    let prefixes = [
        "const ",
        "volatile ",
        "struct ",
        "class ",
        "typename ",
        "enum ",
        "static ",
        "mutable ",
        "final ",
        "constexpr ",
        "union ",
    ];
    for _ in 0..8 {
        let before = s.len();
        for p in prefixes {
            if let Some(rest) = s.strip_prefix(p) {
                s = rest.trim_start();
            }
        }
        s = s.trim_end_matches(['*', '&', ' ', '?']);
        for suf in [
            " const",
            " memory",
            " storage",
            " calldata",
            " payable",
            "const",
        ] {
            if let Some(rest) = s.strip_suffix(suf) {
                s = rest.trim_end();
            }
        }
        if s.len() == before {
            break;
        }
    }
    if s.ends_with(']') && (lang != Language::Python || s.ends_with("[]")) {
        return None; // arrays (Java, C, Solidity, TS)
    }
    if let Some(open) = s.find(['<', '[']) {
        let base = s.get(..open)?.trim();
        let last = base.rsplit(['.', ':']).next().unwrap_or(base);
        if SMART_POINTERS.contains(&last) {
            let inner = s.get(open + 1..s.len().saturating_sub(1))?;
            let first = first_template_arg(inner);
            return norm_type_depth(first, lang, depth + 1);
        }
        s = base;
    }
    if s.is_empty() || s == "auto" || s == "var" || s == "void" {
        return None;
    }
    let ok = s.chars().all(|c| is_ident_char(c) || c == '.' || c == ':');
    if !ok || s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some(s.trim_start_matches("::").to_string())
}

fn first_template_arg(inner: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => return inner.get(..i).unwrap_or(inner),
            _ => {}
        }
    }
    inner
}

/// A coarse category of a type for overload selection: `int`, `float`, `bool`, `string`,
/// `char`, or the (last segment of the) class name.
pub(super) fn type_category(t: &str) -> String {
    let t = t.trim();
    let last = t.rsplit(['.', ':']).next().unwrap_or(t);
    let lower = last.to_ascii_lowercase();
    let intish = [
        "int", "integer", "long", "short", "byte", "size_t", "unsigned", "signed", "ssize_t",
        "uint", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
        "uint64_t", "number", "bigint",
    ];
    if intish.contains(&lower.as_str())
        || lower.starts_with("unsigned ")
        || lower.starts_with("long ")
        || ((lower.starts_with("uint") || lower.starts_with("int"))
            && lower
                .chars()
                .skip(3)
                .all(|c| c.is_ascii_digit() || c == 't'))
    {
        return "int".into();
    }
    match lower.as_str() {
        "float" | "double" | "long double" | "decimal" => "float".into(),
        "bool" | "boolean" => "bool".into(),
        "string" | "str" | "char*" | "const char*" | "wstring" | "string_view" | "charsequence" => {
            "string".into()
        }
        "char" | "character" => "char".into(),
        _ => last.to_string(),
    }
}

/// The overload-matching key of a written parameter or variable type: arrays keep their
/// element's name (`long[]`, `Object[]`; Java varargs `T...` is `T[]`), other types map to
/// their [`type_category`].
pub(super) fn overload_key(raw: &str, lang: Language) -> Option<String> {
    let t = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = t.trim_start_matches(':').trim();
    let elem = t.strip_suffix("...").or_else(|| t.strip_suffix("[]"));
    match elem {
        Some(e) => {
            let e = e.trim_end_matches("[]");
            let name = norm_type(e, lang).unwrap_or_else(|| e.trim().to_string());
            let last = name.rsplit(['.', ':']).next().unwrap_or(&name).to_string();
            Some(format!("{last}[]"))
        }
        None => {
            let base = norm_type(t, lang)?;
            // C strings: `char *` / `const char *`.
            if t.ends_with('*') && matches!(base.as_str(), "char" | "wchar_t") {
                return Some("string".into());
            }
            Some(type_category(&base))
        }
    }
}

/// Element types whose arrays are not `Object[]`.
const PRIMITIVE_ELEMS: [&str; 8] = [
    "int", "long", "short", "byte", "char", "boolean", "float", "double",
];

/// Is an argument of category `arg` acceptable for a parameter of category `param`?
/// Returns the match quality (2 exact, 1 convertible) or `None` when incompatible.
pub(super) fn compatible(arg: &str, param: &str) -> Option<u32> {
    const PRIMS: [&str; 5] = ["int", "float", "bool", "string", "char"];
    if arg == param {
        return Some(2);
    }
    if param == "Object" {
        return Some(0);
    }
    if arg.ends_with("[]") || param.ends_with("[]") {
        let elem = arg.trim_end_matches("[]");
        return match (arg, param) {
            ("null", _) => Some(1),
            (a, "Object[]") if a.ends_with("[]") && !PRIMITIVE_ELEMS.contains(&elem) => Some(1),
            _ => None,
        };
    }
    match (arg, param) {
        ("int", "float") | ("char", "int") | ("int", "char") => Some(1),
        ("null", p) if !PRIMS.contains(&p) || p == "string" => Some(1),
        ("null", _) => None,
        (a, p) if PRIMS.contains(&a) && PRIMS.contains(&p) => None,
        // Boxing / class vs. primitive: only reject string vs. number-like mismatches.
        (a, p) if PRIMS.contains(&a) != PRIMS.contains(&p) => {
            if matches!((a, p), ("string", _) | (_, "string")) && a != p {
                None
            } else {
                Some(0)
            }
        }
        _ => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_written_types() {
        let cases = [
            ("const Foo &", Language::Cpp, Some("Foo")),
            ("std::unique_ptr<ns::Foo>", Language::Cpp, Some("ns::Foo")),
            ("Foo*", Language::C, Some("Foo")),
            ("Optional[Foo]", Language::Python, Some("Foo")),
            ("\"Foo\"", Language::Python, Some("Foo")),
            ("Foo | None", Language::Python, Some("Foo")),
            ("List<Foo>", Language::Java, Some("List")),
            ("Foo[]", Language::Java, None),
            ("auto", Language::Cpp, None),
            ("Token memory", Language::Solidity, Some("Token")),
        ];
        for (raw, lang, want) in cases {
            assert_eq!(norm_type(raw, lang).as_deref(), want, "{raw}");
        }
    }

    #[test]
    fn splits_cpp_names_outside_templates() {
        assert_eq!(split_cpp("a::b<c::d>::f"), vec!["a", "b<c::d>", "f"]);
        assert_eq!(split_cpp("::f"), vec!["", "f"]);
    }

    #[test]
    fn type_categories_and_compatibility() {
        assert_eq!(type_category("long"), "int");
        assert_eq!(type_category("uint256"), "int");
        assert_eq!(type_category("std::string"), "string");
        assert_eq!(compatible("int", "float"), Some(1));
        assert_eq!(compatible("string", "int"), None);
        assert_eq!(compatible("int", "int"), Some(2));
    }
}
