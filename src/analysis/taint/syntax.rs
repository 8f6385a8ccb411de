//! Language-neutral views of tree-sitter nodes used by the taint engine: call parts, callee
//! paths, literals, declared names and types. Every walk here is iterative or bounded.

use super::spec::Seg;
use super::value::Const;
use crate::syntax::walk::{preorder, Visit};
use crate::syntax::{Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use tree_sitter::Node;

/// Bound for the small loops that walk down wrapper chains.
const CHAIN_LIMIT: usize = 64;

pub(super) fn is_comment(kind: &str) -> bool {
    matches!(kind, "comment" | "line_comment" | "block_comment")
}

pub(super) fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| !is_comment(c.kind()))
        .collect()
}

/// Strips wrapper nodes (`(x)`, Solidity `expression`, `call_argument`) around an expression.
pub(super) fn unwrap<'t>(mut n: Node<'t>) -> Node<'t> {
    for _ in 0..CHAIN_LIMIT {
        match n.kind() {
            "parenthesized_expression"
            | "expression"
            | "call_argument"
            | "argument"
            | "expression_statement"
            | "await_expression"
                if n.named_child_count() >= 1 =>
            {
                let kids = named_children(n);
                if kids.len() == 1 {
                    n = kids[0];
                } else {
                    return n;
                }
            }
            _ => return n,
        }
    }
    n
}

/// Function and class definitions: never entered by statement walks (they are separate
/// functions, or declarations).
pub(super) fn is_definition(kind: &str) -> bool {
    matches!(
        kind,
        "function_definition"
            | "decorated_definition"
            | "class_definition"
            | "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "method_declaration"
            | "constructor_declaration"
            | "lambda"
            | "lambda_expression"
            | "class_body"
            | "struct_specifier"
            | "class_specifier"
            | "contract_declaration"
            | "modifier_definition"
            | "arrow_function"
            | "function_expression"
            | "function"
            | "function_declaration"
            | "generator_function"
            | "generator_function_declaration"
            | "method_definition"
            | "class"
            | "abstract_class_declaration"
    )
}

pub(super) fn is_call_kind(kind: &str) -> bool {
    matches!(
        kind,
        "call"
            | "call_expression"
            | "method_invocation"
            | "object_creation_expression"
            | "new_expression"
    )
}

/// The parts of a call expression.
#[derive(Debug, Clone)]
pub(super) struct CallParts<'t> {
    /// The callee expression (`obj.m`, `f`, the type of `new T(..)`).
    pub callee: Node<'t>,
    pub receiver: Option<Node<'t>>,
    /// The called name: method or function simple name, or the class name for `new`.
    pub name: String,
    pub args: Vec<Node<'t>>,
    pub kwargs: Vec<(String, Node<'t>)>,
    pub is_new: bool,
    /// Solidity call options (`{value: x}`).
    pub options: Vec<Node<'t>>,
}

fn last_ident(file: &ParsedFile, n: Node<'_>) -> String {
    let t = file.node_text(n);
    let t = t.split('<').next().unwrap_or(t);
    let t = t.rsplit(['.', ':']).next().unwrap_or(t);
    t.split_whitespace().collect::<String>()
}

fn arg_nodes<'t>(
    file: &ParsedFile,
    list: Option<Node<'t>>,
) -> (Vec<Node<'t>>, Vec<(String, Node<'t>)>) {
    let mut args = Vec::new();
    let mut kwargs = Vec::new();
    let Some(list) = list else {
        return (args, kwargs);
    };
    if list.kind() != "argument_list" && list.kind() != "arguments" {
        // Python `f(x for x in y)`: one generator argument.
        args.push(list);
        return (args, kwargs);
    }
    for a in named_children(list) {
        if a.kind() == "keyword_argument" {
            if let (Some(n), Some(v)) = (
                a.child_by_field_name("name"),
                a.child_by_field_name("value"),
            ) {
                kwargs.push((file.node_text(n).to_string(), v));
            }
        } else {
            args.push(a);
        }
    }
    (args, kwargs)
}

/// Splits a call node into callee, receiver, name and arguments. `None` for nodes that are
/// not calls this engine understands (`super(..)` constructor invocations and the like).
pub(super) fn call_parts<'t>(file: &ParsedFile, node: Node<'t>) -> Option<CallParts<'t>> {
    let kind = node.kind();
    let parts = match kind {
        "call" => {
            let f = unwrap(node.child_by_field_name("function")?);
            let (args, kwargs) = arg_nodes(file, node.child_by_field_name("arguments"));
            let (receiver, name) = match f.kind() {
                "attribute" => (
                    f.child_by_field_name("object"),
                    file.node_text(f.child_by_field_name("attribute")?)
                        .to_string(),
                ),
                _ => (None, last_ident(file, f)),
            };
            CallParts {
                callee: f,
                receiver,
                name,
                args,
                kwargs,
                is_new: false,
                options: Vec::new(),
            }
        }
        "method_invocation" => {
            let name_node = node.child_by_field_name("name")?;
            let (args, kwargs) = arg_nodes(file, node.child_by_field_name("arguments"));
            CallParts {
                callee: node,
                receiver: node.child_by_field_name("object"),
                name: file.node_text(name_node).to_string(),
                args,
                kwargs,
                is_new: false,
                options: Vec::new(),
            }
        }
        "object_creation_expression" | "new_expression" => {
            // Java/C++ `type`, JavaScript `constructor`.
            let ty = node
                .child_by_field_name("type")
                .or_else(|| node.child_by_field_name("constructor"))?;
            let (args, kwargs) = arg_nodes(file, node.child_by_field_name("arguments"));
            CallParts {
                callee: ty,
                receiver: None,
                name: last_ident(file, ty),
                args,
                kwargs,
                is_new: true,
                options: Vec::new(),
            }
        }
        "call_expression" => {
            let mut f = unwrap(node.child_by_field_name("function")?);
            let mut options = Vec::new();
            if f.kind() == "struct_expression" {
                // Solidity `to.call{value: v}(data)`.
                for c in named_children(f) {
                    if c.kind() == "struct_field_assignment" {
                        if let Some(v) = c.child_by_field_name("value") {
                            options.push(v);
                        }
                    }
                }
                f = unwrap(f.child_by_field_name("type")?);
            }
            let args_node = node.child_by_field_name("arguments");
            let (args, kwargs) = if args_node.is_some() {
                arg_nodes(file, args_node)
            } else {
                // Solidity: arguments are `call_argument` children.
                (
                    named_children(node)
                        .into_iter()
                        .filter(|c| c.kind() == "call_argument")
                        .collect(),
                    Vec::new(),
                )
            };
            let (receiver, name) = match f.kind() {
                "field_expression" => (
                    f.child_by_field_name("argument"),
                    file.node_text(f.child_by_field_name("field")?).to_string(),
                ),
                "member_expression" => (
                    f.child_by_field_name("object"),
                    file.node_text(f.child_by_field_name("property")?)
                        .to_string(),
                ),
                _ => (None, last_ident(file, f)),
            };
            CallParts {
                callee: f,
                receiver,
                name,
                args,
                kwargs,
                is_new: false,
                options,
            }
        }
        _ => return None,
    };
    if parts.name.is_empty() {
        return None;
    }
    Some(parts)
}

/// JavaScript options objects: the value written for property `key` in an object literal
/// argument (`spawn(cmd, [], { shell: true })` has `shell` = `true`).
pub(super) fn js_option<'t>(file: &ParsedFile, args: &[Node<'t>], key: &str) -> Option<Node<'t>> {
    for a in args {
        let a = unwrap(*a);
        if a.kind() != "object" {
            continue;
        }
        for pair in named_children(a) {
            if pair.kind() != "pair" {
                continue;
            }
            let (Some(k), Some(v)) = (
                pair.child_by_field_name("key"),
                pair.child_by_field_name("value"),
            ) else {
                continue;
            };
            let name = match string_const(file, k) {
                Some(s) => s.to_string(),
                None => file.node_text(k).to_string(),
            };
            if name == key {
                return Some(v);
            }
        }
    }
    None
}

/// The path of a callee or member expression: `response.getWriter().println` ->
/// `response`, `getWriter()`, `println`. Unknown roots become `?`.
pub(super) fn path_of(file: &ParsedFile, node: Node<'_>) -> Vec<Seg> {
    let mut rev: Vec<Seg> = Vec::new();
    let mut cur = Some(node);
    let mut call_next = false;
    for _ in 0..CHAIN_LIMIT {
        let Some(n) = cur.map(unwrap) else { break };
        let seg = |name: &str, call: bool| Seg {
            name: name.to_string(),
            call,
        };
        match n.kind() {
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "property_identifier"
            | "this"
            | "self"
            | "super"
            | "namespace_identifier"
            | "primitive_type" => {
                rev.push(seg(file.node_text(n), call_next));
                cur = None;
            }
            "attribute" | "field_access" | "member_expression" | "field_expression" => {
                let (obj, field) = match n.kind() {
                    "attribute" => ("object", "attribute"),
                    "field_access" => ("object", "field"),
                    "member_expression" => ("object", "property"),
                    _ => ("argument", "field"),
                };
                let f = n
                    .child_by_field_name(field)
                    .map(|f| file.node_text(f))
                    .unwrap_or("?");
                rev.push(seg(f, call_next));
                cur = n.child_by_field_name(obj);
            }
            "call" | "call_expression" => {
                // JavaScript `require("child_process").exec`: the module's path.
                if let Some(module) = js_require_path(file, n) {
                    rev.extend(module.into_iter().rev());
                    cur = None;
                    call_next = false;
                    continue;
                }
                // A call in the middle of a chain: its callee continues the path.
                cur = n.child_by_field_name("function");
                call_next = true;
                continue;
            }
            "method_invocation" => {
                let name = n
                    .child_by_field_name("name")
                    .map(|f| file.node_text(f))
                    .unwrap_or("?");
                rev.push(seg(name, true));
                if call_next {
                    // Only the outermost call is the callee itself.
                }
                cur = n.child_by_field_name("object");
            }
            "object_creation_expression" | "new_expression" => {
                let t = n
                    .child_by_field_name("type")
                    .or_else(|| n.child_by_field_name("constructor"))
                    .map(|t| last_ident(file, t))
                    .unwrap_or_else(|| "?".into());
                rev.push(seg(&t, true));
                cur = None;
            }
            "qualified_identifier"
            | "scoped_identifier"
            | "scoped_type_identifier"
            | "dotted_name"
            | "generic_type" => {
                let text: String = file.node_text(n).split_whitespace().collect();
                let text = text.split('<').next().unwrap_or("").to_string();
                let parts: Vec<&str> = text.split(['.', ':']).filter(|s| !s.is_empty()).collect();
                for (i, p) in parts.iter().enumerate().rev() {
                    rev.push(seg(p, call_next && i + 1 == parts.len()));
                }
                cur = None;
            }
            "struct_expression" => {
                cur = n.child_by_field_name("type");
                continue;
            }
            "payable_conversion_expression" => {
                rev.push(seg("payable", true));
                cur = None;
            }
            _ => {
                rev.push(seg("?", call_next));
                cur = None;
            }
        }
        call_next = false;
        if cur.is_none() {
            break;
        }
    }
    rev.reverse();
    rev
}

/// The callee path of a call (`new T(..)`: the written type path).
pub(super) fn callee_path(file: &ParsedFile, node: Node<'_>, parts: &CallParts<'_>) -> Vec<Seg> {
    if parts.is_new {
        let mut p = path_of(file, parts.callee);
        for s in &mut p {
            s.call = false;
        }
        return p;
    }
    match node.kind() {
        "method_invocation" => {
            let mut p = match parts.receiver {
                Some(r) => path_of(file, r),
                None => Vec::new(),
            };
            if let Some(last) = p.last() {
                // A receiver that is itself a call keeps its call flag from `path_of`.
                let _ = last;
            }
            p.push(Seg {
                name: parts.name.clone(),
                call: false,
            });
            p
        }
        _ => {
            let mut p = path_of(file, parts.callee);
            if let Some(last) = p.last_mut() {
                last.call = false;
            }
            p
        }
    }
}

/// Decodes a string literal's content (escape sequences of the common forms).
fn decode_string(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    out
}

/// The constant value of a literal node (no variables), if it is one.
pub(super) fn literal_const(file: &ParsedFile, node: Node<'_>) -> Option<Const> {
    let n = unwrap(node);
    let text = file.node_text(n);
    match n.kind() {
        "integer" | "decimal_integer_literal" | "number_literal" => {
            let t: String = text.chars().filter(|c| *c != '_' && *c != '\'').collect();
            let t = t.trim_end_matches(['l', 'L', 'u', 'U']);
            if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                return i64::from_str_radix(h, 16).ok().map(Const::Int);
            }
            t.parse::<i64>().ok().map(Const::Int)
        }
        "hex_integer_literal" => {
            let t: String = text.chars().filter(|c| *c != '_').collect();
            let t = t.trim_end_matches(['l', 'L']);
            let h = t.trim_start_matches("0x").trim_start_matches("0X");
            i64::from_str_radix(h, 16).ok().map(Const::Int)
        }
        "character_literal" | "char_literal" => {
            let inner = text.trim_start_matches(['L', 'u', 'U']).trim_matches('\'');
            let d = decode_string(inner);
            let mut cs = d.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Some(Const::Char(c)),
                _ => None,
            }
        }
        "number" => {
            // JavaScript: integers only (a float has no exact constant here).
            let t: String = text.chars().filter(|c| *c != '_').collect();
            if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                return i64::from_str_radix(h, 16).ok().map(Const::Int);
            }
            t.parse::<i64>().ok().map(Const::Int)
        }
        "undefined" => Some(Const::Null),
        "true" => Some(Const::Bool(true)),
        "false" => Some(Const::Bool(false)),
        "boolean_literal" => Some(Const::Bool(text == "true")),
        "none" | "null_literal" | "null" | "nullptr" => Some(Const::Null),
        "string_literal" | "string" | "text_block" | "template_string" => {
            string_const(file, n).map(Const::Str)
        }
        "concatenated_string" => {
            let mut s = String::new();
            for c in named_children(n) {
                match string_const(file, c) {
                    Some(p) => s.push_str(&p),
                    None => return None,
                }
            }
            Some(Const::Str(Rc::from(s.as_str())))
        }
        "unary_expression" | "unary_operator" => {
            let op = n.child_by_field_name("operator").map(|o| o.kind());
            let arg = n
                .child_by_field_name("argument")
                .or_else(|| n.child_by_field_name("operand"))?;
            match (op, literal_const(file, arg)) {
                (Some("-"), Some(Const::Int(i))) => i.checked_neg().map(Const::Int),
                (Some("+"), Some(Const::Int(i))) => Some(Const::Int(i)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The content of a plain string literal (`None` for f-strings with interpolations).
pub(super) fn string_const(file: &ParsedFile, n: Node<'_>) -> Option<Rc<str>> {
    match n.kind() {
        "string" => {
            // Python: string_start, string_content*, interpolation*, string_end.
            let mut s = String::new();
            let start = n.child(0).map(|c| file.node_text(c)).unwrap_or("");
            let raw = start.contains(['r', 'R']);
            let mut c = n.walk();
            for ch in n.children(&mut c) {
                match ch.kind() {
                    "interpolation" => return None,
                    // JavaScript strings hold `string_fragment`s.
                    "string_content" | "string_fragment" => {
                        let t = file.node_text(ch);
                        if raw {
                            s.push_str(t);
                        } else {
                            s.push_str(&decode_string(t));
                        }
                    }
                    "escape_sequence" => s.push_str(&decode_string(file.node_text(ch))),
                    _ => {}
                }
            }
            if n.named_child_count() == 0 && s.is_empty() {
                // Solidity `string` node inside string_literal: the text with quotes.
                let t = file.node_text(n);
                let t = t.trim_matches(|c| c == '"' || c == '\'');
                return Some(Rc::from(decode_string(t).as_str()));
            }
            Some(Rc::from(s.as_str()))
        }
        "template_string" => {
            // JavaScript: constant only without `${..}` substitutions.
            let mut s = String::new();
            for k in named_children(n) {
                match k.kind() {
                    "string_fragment" => s.push_str(file.node_text(k)),
                    "escape_sequence" => s.push_str(&decode_string(file.node_text(k))),
                    _ => return None,
                }
            }
            Some(Rc::from(s.as_str()))
        }
        "string_literal" | "text_block" => {
            let mut c = n.walk();
            let kids: Vec<Node<'_>> = n.named_children(&mut c).collect();
            if kids.is_empty() {
                let t = file.node_text(n);
                let t = t
                    .trim_start_matches(['L', 'u', 'U', '8'])
                    .trim_matches('"')
                    .trim_matches('\'');
                return Some(Rc::from(decode_string(t).as_str()));
            }
            let mut s = String::new();
            for k in kids {
                match k.kind() {
                    "string_fragment" | "string_content" | "multiline_string_fragment" => {
                        s.push_str(file.node_text(k))
                    }
                    "escape_sequence" => s.push_str(&decode_string(file.node_text(k))),
                    "string" => {
                        // Solidity string_literal > string.
                        let t = file.node_text(k);
                        let t = t.trim_matches(|c| c == '"' || c == '\'');
                        s.push_str(&decode_string(t));
                    }
                    "string_interpolation" | "interpolation" => return None,
                    _ => {}
                }
            }
            Some(Rc::from(s.as_str()))
        }
        _ => None,
    }
}

/// True for string literal kinds.
pub(super) fn is_string_kind(kind: &str) -> bool {
    matches!(
        kind,
        "string"
            | "string_literal"
            | "concatenated_string"
            | "text_block"
            | "raw_string_literal"
            | "template_string"
    )
}

/// The simple name of a type node (`java.util.List<String>` -> `List`, `char *` -> `char`).
pub(super) fn simple_type(file: &ParsedFile, ty: Node<'_>) -> String {
    let t: String = file.node_text(ty).split_whitespace().collect();
    let t = t.split('<').next().unwrap_or("");
    let t = t.trim_end_matches(['*', '&', '[', ']']);
    let t = t.split('[').next().unwrap_or("");
    t.rsplit(['.', ':']).next().unwrap_or("").to_string()
}

/// The identifier a (C/C++) declarator declares, drilling through pointers and arrays.
pub(super) fn declarator_name<'t>(mut d: Node<'t>) -> Option<Node<'t>> {
    for _ in 0..CHAIN_LIMIT {
        match d.kind() {
            "identifier" | "field_identifier" => return Some(d),
            "init_declarator"
            | "pointer_declarator"
            | "array_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator"
            | "function_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| named_children(d).into_iter().next())?;
            }
            _ => return None,
        }
    }
    None
}

/// True when a C/C++ declarator declares a fixed-size array (`buf[64]`, `buf[N]`).
pub(super) fn is_fixed_array(d: Node<'_>) -> bool {
    let mut d = d;
    for _ in 0..CHAIN_LIMIT {
        match d.kind() {
            "array_declarator" => return d.child_by_field_name("size").is_some(),
            "init_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                match d.child_by_field_name("declarator") {
                    Some(x) => d = x,
                    None => return false,
                }
            }
            _ => return false,
        }
    }
    false
}

/// What a function body declares: local names, their declared types, fixed arrays, and
/// (Python) names declared `global`/`nonlocal`.
#[derive(Debug, Default, Clone)]
pub(super) struct Declared {
    pub locals: BTreeSet<String>,
    pub types: BTreeMap<String, String>,
    pub fixed_arrays: BTreeSet<String>,
    pub globals: BTreeSet<String>,
}

/// Collects the declarations of a function body (nested definitions skipped), iteratively,
/// visiting at most `budget` nodes.
pub(super) fn collect_declared(
    file: &ParsedFile,
    body: Node<'_>,
    lang: Language,
    budget: usize,
) -> (Declared, bool) {
    let mut d = Declared::default();
    let mut visited = 0usize;
    let mut complete = true;
    preorder(body, true, |n| {
        visited += 1;
        if visited > budget {
            complete = false;
            return Visit::Stop;
        }
        let kind = n.kind();
        if n != body && is_definition(kind) {
            let binds_name = match lang {
                Language::Python => true,
                Language::JavaScript | Language::TypeScript => {
                    matches!(
                        kind,
                        "function_declaration" | "generator_function_declaration"
                    )
                }
                _ => false,
            };
            if binds_name {
                if let Some(name) = n.child_by_field_name("name") {
                    d.locals.insert(file.node_text(name).to_string());
                }
            }
            return Visit::Skip;
        }
        match (lang, kind) {
            (
                Language::Python,
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause",
            ) => {
                if let Some(l) = n.child_by_field_name("left") {
                    python_targets(file, l, &mut d.locals);
                    // `x = Cls(..)`: x's class, for resolving `x.m()`.
                    let class = n
                        .child_by_field_name("right")
                        .filter(|r| r.kind() == "call" && kind == "assignment")
                        .and_then(|r| r.child_by_field_name("function"))
                        .filter(|f| f.kind() == "identifier")
                        .map(|f| file.node_text(f))
                        .filter(|f| f.starts_with(|c: char| c.is_ascii_uppercase()));
                    if let (Some(c), "identifier") = (class, l.kind()) {
                        d.types.insert(file.node_text(l).to_string(), c.to_string());
                    }
                }
            }
            (Language::Python, "named_expression") => {
                if let Some(l) = n.child_by_field_name("name") {
                    d.locals.insert(file.node_text(l).to_string());
                }
            }
            (Language::Python, "as_pattern_target") => {
                python_targets(file, n, &mut d.locals);
            }
            (Language::Python, "except_clause") => {
                for c in named_children(n) {
                    if c.kind() == "as_pattern" {
                        if let Some(a) = c.child_by_field_name("alias") {
                            python_targets(file, a, &mut d.locals);
                        }
                    }
                }
            }
            (Language::Python, "import_statement" | "import_from_statement") => {
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    let bound = match name.kind() {
                        "aliased_import" => name.child_by_field_name("alias"),
                        _ => name.named_child(0),
                    };
                    if let Some(b) = bound {
                        d.locals.insert(file.node_text(b).to_string());
                    }
                }
            }
            (Language::Python, "global_statement" | "nonlocal_statement") => {
                for c in named_children(n) {
                    if c.kind() == "identifier" {
                        d.globals.insert(file.node_text(c).to_string());
                    }
                }
            }
            (Language::Java, "local_variable_declaration" | "field_declaration") => {
                let ty = n
                    .child_by_field_name("type")
                    .map(|t| simple_type(file, t))
                    .unwrap_or_default();
                let mut c = n.walk();
                for decl in n.children_by_field_name("declarator", &mut c) {
                    if let Some(name) = decl.child_by_field_name("name") {
                        let name = file.node_text(name).to_string();
                        if ty != "var" && !ty.is_empty() {
                            d.types.insert(name.clone(), ty.clone());
                        }
                        d.locals.insert(name);
                    }
                }
            }
            (Language::Java, "enhanced_for_statement" | "catch_formal_parameter" | "resource") => {
                if let Some(name) = n.child_by_field_name("name") {
                    let name = file.node_text(name).to_string();
                    if let Some(t) = n.child_by_field_name("type") {
                        d.types.insert(name.clone(), simple_type(file, t));
                    }
                    d.locals.insert(name);
                }
            }
            (Language::C | Language::Cpp, "declaration") => {
                let ty = n
                    .child_by_field_name("type")
                    .map(|t| simple_type(file, t))
                    .unwrap_or_default();
                let mut c = n.walk();
                for decl in n.children_by_field_name("declarator", &mut c) {
                    if let Some(id) = declarator_name(decl) {
                        let name = file.node_text(id).to_string();
                        if is_fixed_array(decl) {
                            d.fixed_arrays.insert(name.clone());
                        }
                        if !ty.is_empty() && ty != "auto" {
                            d.types.insert(name.clone(), ty.clone());
                        }
                        d.locals.insert(name);
                    }
                }
            }
            (Language::Cpp, "for_range_loop") => {
                if let Some(id) = n
                    .child_by_field_name("declarator")
                    .and_then(declarator_name)
                {
                    d.locals.insert(file.node_text(id).to_string());
                }
            }
            (
                Language::JavaScript | Language::TypeScript,
                "variable_declarator" | "for_in_statement" | "catch_clause",
            ) => {
                let target = match kind {
                    "variable_declarator" => n.child_by_field_name("name"),
                    "for_in_statement" => n.child_by_field_name("left"),
                    _ => n.child_by_field_name("parameter"),
                };
                if let Some(t) = target {
                    for (name, _) in js_pattern_bindings(file, t) {
                        d.locals.insert(file.node_text(name).to_string());
                    }
                }
            }
            (Language::Solidity, "variable_declaration") => {
                if let Some(name) = n.child_by_field_name("name") {
                    let name = file.node_text(name).to_string();
                    if let Some(t) = n.child_by_field_name("type") {
                        d.types.insert(name.clone(), simple_type(file, t));
                    }
                    d.locals.insert(name);
                }
            }
            _ => {}
        }
        if skip_for_declarations(kind) {
            Visit::Skip
        } else {
            Visit::Descend
        }
    });
    for g in &d.globals {
        d.locals.remove(g);
    }
    (d, complete)
}

/// Expression kinds that declare nothing worth finding (their subtrees can be huge).
fn skip_for_declarations(kind: &str) -> bool {
    matches!(
        kind,
        "binary_operator"
            | "binary_expression"
            | "boolean_operator"
            | "comparison_operator"
            | "string"
            | "string_literal"
            | "concatenated_string"
            | "argument_list"
            | "arguments"
            | "subscript"
            | "attribute"
            | "field_access"
            | "array_access"
            | "subscript_expression"
            | "field_expression"
            | "member_expression"
            | "unary_expression"
            | "not_operator"
            | "parenthesized_expression"
            | "initializer_list"
            | "array_initializer"
    )
}

/// Names bound by a Python assignment target (identifiers in tuples/lists/stars).
fn python_targets(file: &ParsedFile, target: Node<'_>, out: &mut BTreeSet<String>) {
    let mut stack = vec![target];
    let mut guard = 0;
    while let Some(n) = stack.pop() {
        guard += 1;
        if guard > 4096 {
            break;
        }
        match n.kind() {
            "identifier" => {
                out.insert(file.node_text(n).to_string());
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "list_splat_pattern"
            | "as_pattern_target"
            | "parenthesized_expression"
            | "expression_list" => {
                stack.extend(named_children(n));
            }
            _ => {}
        }
    }
}

/// Declared parameter types (Java/C/C++/Solidity) by parameter name.
pub(super) fn parameter_types(file: &ParsedFile, func_node: Node<'_>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let list = func_node.child_by_field_name("parameters").or_else(|| {
        func_node
            .child_by_field_name("declarator")
            .and_then(|d| find_params(d))
    });
    let params: Vec<Node<'_>> = match list {
        Some(l) => named_children(l),
        // Solidity: parameters are direct children.
        None => named_children(func_node)
            .into_iter()
            .filter(|c| c.kind() == "parameter")
            .collect(),
    };
    for p in params {
        let ty = p.child_by_field_name("type").map(|t| simple_type(file, t));
        let name = p.child_by_field_name("name").or_else(|| {
            p.child_by_field_name("declarator")
                .and_then(declarator_name)
        });
        if let (Some(ty), Some(name)) = (ty, name) {
            out.insert(file.node_text(name).to_string(), ty);
        }
    }
    out
}

fn find_params(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..CHAIN_LIMIT {
        if d.kind() == "function_declarator" {
            return d.child_by_field_name("parameters");
        }
        d = d.child_by_field_name("declarator")?;
    }
    None
}

/// Solidity visibility of a function definition (`public`, `external`, ...).
pub(super) fn visibility(file: &ParsedFile, func_node: Node<'_>) -> Option<String> {
    named_children(func_node)
        .into_iter()
        .find(|c| c.kind() == "visibility")
        .map(|v| file.node_text(v).trim().to_string())
}

/// Python import aliases of a file: bound name -> dotted path (`sp` -> `subprocess`,
/// `system` -> `os.system`).
pub(super) fn python_imports(file: &ParsedFile) -> BTreeMap<String, Vec<Seg>> {
    let mut out = BTreeMap::new();
    let root = file.root();
    let to_segs = |s: &str| -> Vec<Seg> {
        s.split('.')
            .filter(|p| !p.is_empty())
            .map(|p| Seg {
                name: p.to_string(),
                call: false,
            })
            .collect()
    };
    for item in named_children(root) {
        match item.kind() {
            "import_statement" => {
                let mut c = item.walk();
                for name in item.children_by_field_name("name", &mut c) {
                    if name.kind() == "aliased_import" {
                        if let (Some(n), Some(a)) = (
                            name.child_by_field_name("name"),
                            name.child_by_field_name("alias"),
                        ) {
                            out.insert(file.node_text(a).to_string(), to_segs(file.node_text(n)));
                        }
                    }
                }
            }
            "import_from_statement" => {
                let Some(module) = item.child_by_field_name("module_name") else {
                    continue;
                };
                let module = file.node_text(module).trim_start_matches('.').to_string();
                let mut c = item.walk();
                for name in item.children_by_field_name("name", &mut c) {
                    let (orig, bound) = match name.kind() {
                        "aliased_import" => (
                            name.child_by_field_name("name"),
                            name.child_by_field_name("alias"),
                        ),
                        _ => (Some(name), Some(name)),
                    };
                    if let (Some(o), Some(b)) = (orig, bound) {
                        let mut segs = to_segs(&module);
                        segs.extend(to_segs(file.node_text(o)));
                        out.insert(file.node_text(b).to_string(), segs);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A JavaScript module specifier as a path: `node:fs` is `fs`, `fs/promises` is
/// `fs.promises`; relative and absolute specifiers (`./db`) name project files, not modules
/// the specifications know, and give `None`.
fn js_module_path(spec: &str) -> Option<Vec<Seg>> {
    let spec = spec.strip_prefix("node:").unwrap_or(spec);
    if spec.is_empty() || spec.starts_with('.') || spec.starts_with('/') {
        return None;
    }
    Some(
        spec.split('/')
            .filter(|p| !p.is_empty())
            .map(|p| Seg {
                name: p.to_string(),
                call: false,
            })
            .collect(),
    )
}

/// The module a `require("m")` call (or `require("m").a.b`) loads, with the members read.
fn js_require_path(file: &ParsedFile, value: Node<'_>) -> Option<Vec<Seg>> {
    let mut members = Vec::new();
    let mut cur = unwrap(value);
    for _ in 0..CHAIN_LIMIT {
        match cur.kind() {
            "member_expression" => {
                let prop = cur.child_by_field_name("property")?;
                members.push(Seg {
                    name: file.node_text(prop).to_string(),
                    call: false,
                });
                cur = unwrap(cur.child_by_field_name("object")?);
            }
            "call_expression" => {
                let f = cur.child_by_field_name("function")?;
                if file.node_text(f) != "require" {
                    return None;
                }
                let arg = named_children(cur.child_by_field_name("arguments")?)
                    .into_iter()
                    .next()?;
                let Some(Const::Str(m)) = literal_const(file, arg) else {
                    return None;
                };
                let mut path = js_module_path(&m)?;
                members.reverse();
                path.extend(members);
                return Some(path);
            }
            _ => return None,
        }
    }
    None
}

/// The names a JavaScript binding pattern binds, each with the property path it reads from
/// the bound value: `{ a, b: { c }, ...r }` binds `a` (`a`), `c` (`b`, `c`) and `r` (none);
/// array elements and rest elements read no named property. Iterative and bounded.
pub(super) fn js_pattern_bindings<'t>(
    file: &ParsedFile,
    pattern: Node<'t>,
) -> Vec<(Node<'t>, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Node<'t>, Vec<String>)> = vec![(pattern, Vec::new())];
    let mut guard = 0usize;
    while let Some((n, path)) = stack.pop() {
        guard += 1;
        if guard > 10_000 {
            break;
        }
        match n.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => out.push((n, path)),
            "object_pattern" => {
                for c in named_children(n).into_iter().rev() {
                    match c.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let mut p = path.clone();
                            p.push(file.node_text(c).to_string());
                            stack.push((c, p));
                        }
                        "pair_pattern" => {
                            let (Some(k), Some(v)) =
                                (c.child_by_field_name("key"), c.child_by_field_name("value"))
                            else {
                                continue;
                            };
                            let key = match literal_const(file, k) {
                                Some(Const::Str(s)) => s.to_string(),
                                _ => file.node_text(k).to_string(),
                            };
                            let mut p = path.clone();
                            p.push(key);
                            stack.push((v, p));
                        }
                        "object_assignment_pattern" => {
                            // `{ a = 1 }`: the left side binds, the default may also flow.
                            if let Some(l) = c.child_by_field_name("left") {
                                let mut p = path.clone();
                                if l.kind() == "shorthand_property_identifier_pattern" {
                                    p.push(file.node_text(l).to_string());
                                }
                                stack.push((l, p));
                            }
                        }
                        "rest_pattern" => {
                            for k in named_children(c) {
                                stack.push((k, path.clone()));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "array_pattern" | "rest_pattern" => {
                for c in named_children(n).into_iter().rev() {
                    stack.push((c, path.clone()));
                }
            }
            "assignment_pattern" => {
                if let Some(l) = n.child_by_field_name("left") {
                    stack.push((l, path));
                }
            }
            _ => {}
        }
    }
    out
}

/// The declarators of a JavaScript `const`/`let`/`var` declaration that have an initialiser:
/// (binding pattern, value).
pub(super) fn js_initialised_declarators<'t>(decl: Node<'t>) -> Vec<(Node<'t>, Node<'t>)> {
    named_children(decl)
        .into_iter()
        .filter(|d| d.kind() == "variable_declarator")
        .filter_map(|d| {
            Some((
                d.child_by_field_name("name")?,
                d.child_by_field_name("value")?,
            ))
        })
        .collect()
}

/// JavaScript and TypeScript module bindings of a file: bound name -> module path
/// (`const { exec } = require("child_process")` binds `exec` to `child_process.exec`;
/// `import * as cp from "node:child_process"` binds `cp` to `child_process`; `import
/// escape from "escape-html"` binds `escape` to `escape-html`).
pub(super) fn js_imports(file: &ParsedFile) -> BTreeMap<String, Vec<Seg>> {
    let mut out = BTreeMap::new();
    for item in named_children(file.root()) {
        match item.kind() {
            "lexical_declaration" | "variable_declaration" => {
                for (name, value) in js_initialised_declarators(item) {
                    let Some(module) = js_require_path(file, value) else {
                        continue;
                    };
                    for (bound, props) in js_pattern_bindings(file, name) {
                        let mut path = module.clone();
                        path.extend(props.into_iter().map(|p| Seg {
                            name: p,
                            call: false,
                        }));
                        out.insert(file.node_text(bound).to_string(), path);
                    }
                }
            }
            "import_statement" => {
                let Some(module) = item
                    .child_by_field_name("source")
                    .and_then(|s| string_const(file, s))
                    .and_then(|m| js_module_path(&m))
                else {
                    continue;
                };
                let Some(clause) = named_children(item)
                    .into_iter()
                    .find(|c| c.kind() == "import_clause")
                else {
                    continue;
                };
                for part in named_children(clause) {
                    match part.kind() {
                        // `import x from "m"` and `import * as x from "m"`.
                        "identifier" => {
                            out.insert(file.node_text(part).to_string(), module.clone());
                        }
                        "namespace_import" => {
                            if let Some(id) = named_children(part).into_iter().next() {
                                out.insert(file.node_text(id).to_string(), module.clone());
                            }
                        }
                        "named_imports" => {
                            for spec in named_children(part) {
                                let Some(name) = spec.child_by_field_name("name") else {
                                    continue;
                                };
                                let bound = spec.child_by_field_name("alias").unwrap_or(name);
                                let name = match literal_const(file, name) {
                                    Some(Const::Str(s)) => s.to_string(),
                                    _ => file.node_text(name).to_string(),
                                };
                                let mut path = module.clone();
                                path.push(Seg { name, call: false });
                                out.insert(file.node_text(bound).to_string(), path);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The first line of a node's text, whitespace-collapsed, at most `max` characters.
pub(super) fn short_text(file: &ParsedFile, n: Node<'_>, max: usize) -> String {
    let t = file.node_text(n);
    let first = t.lines().next().unwrap_or("").trim();
    let mut out = String::new();
    for (i, ch) in first.chars().enumerate() {
        if i >= max {
            out.push('…');
            break;
        }
        out.push(ch);
    }
    out
}

/// Fields a class declares: declared types and which are static.
#[derive(Debug, Default, Clone)]
pub(super) struct ClassFields {
    pub types: BTreeMap<String, String>,
    pub statics: BTreeSet<String>,
}

/// Java classes of a file (qualified like `collect_functions` does: `Outer.Inner`) and their
/// fields. Iterative.
pub(super) fn java_class_fields(file: &ParsedFile) -> BTreeMap<String, ClassFields> {
    let mut out: BTreeMap<String, ClassFields> = BTreeMap::new();
    if file.language != Language::Java {
        return out;
    }
    let mut stack: Vec<(Node<'_>, String)> = vec![(file.root(), String::new())];
    let mut guard = 0usize;
    while let Some((n, prefix)) = stack.pop() {
        guard += 1;
        if guard > 1_000_000 {
            break;
        }
        let kind = n.kind();
        let mut prefix = prefix;
        if matches!(
            kind,
            "class_declaration"
                | "interface_declaration"
                | "enum_declaration"
                | "record_declaration"
        ) {
            if let Some(name) = n.child_by_field_name("name") {
                let name = file.node_text(name);
                prefix = if prefix.is_empty() {
                    name.to_string()
                } else {
                    format!("{prefix}.{name}")
                };
            }
        }
        if kind == "field_declaration" && !prefix.is_empty() {
            let entry = out.entry(prefix.clone()).or_default();
            let ty = n
                .child_by_field_name("type")
                .map(|t| simple_type(file, t))
                .unwrap_or_default();
            let is_static = named_children(n).iter().any(|c| {
                c.kind() == "modifiers"
                    && file.node_text(*c).split_whitespace().any(|w| w == "static")
            });
            let mut c = n.walk();
            for d in n.children_by_field_name("declarator", &mut c) {
                if let Some(name) = d.child_by_field_name("name") {
                    let name = file.node_text(name).to_string();
                    if !ty.is_empty() {
                        entry.types.insert(name.clone(), ty.clone());
                    }
                    if is_static {
                        entry.statics.insert(name);
                    }
                }
            }
            continue;
        }
        if matches!(
            kind,
            "method_declaration" | "constructor_declaration" | "lambda_expression"
        ) {
            continue;
        }
        for ch in named_children(n) {
            stack.push((ch, prefix.clone()));
        }
    }
    out
}

/// True when a Java method/field declaration has the `static` modifier.
pub(super) fn is_static_decl(file: &ParsedFile, decl: Node<'_>) -> bool {
    named_children(decl).iter().any(|c| {
        c.kind() == "modifiers" && file.node_text(*c).split_whitespace().any(|w| w == "static")
    })
}

/// Names of the variables a C/C++ file declares at file scope (also inside namespaces and
/// `extern "C"` blocks and preprocessor conditionals; functions excluded).
pub(super) fn c_file_scope_variables(file: &ParsedFile, out: &mut BTreeSet<String>) {
    let mut stack = vec![file.root()];
    let mut guard = 0usize;
    while let Some(n) = stack.pop() {
        guard += 1;
        if guard > 2_000_000 {
            break;
        }
        match n.kind() {
            "declaration" => {
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    if d.kind() == "function_declarator" {
                        continue;
                    }
                    if let Some(id) = declarator_name(d) {
                        out.insert(file.node_text(id).to_string());
                    }
                }
            }
            "translation_unit"
            | "namespace_definition"
            | "declaration_list"
            | "linkage_specification"
            | "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif" => stack.extend(named_children(n)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(lang: Language, src: &str) -> Vec<(String, String)> {
        let file = ParsedFile::parse(lang, src.to_string());
        js_imports(&file)
            .into_iter()
            .map(|(k, v)| {
                let p: Vec<&str> = v.iter().map(|s| s.name.as_str()).collect();
                (k, p.join("."))
            })
            .collect()
    }

    #[test]
    fn javascript_require_and_import_bindings_name_their_module_paths() {
        let src = r#"
const cp = require('node:child_process');
const { exec, spawn: run } = require("child_process");
const readFile = require('fs/promises').readFile;
const db = require('./db');
import escapeHtml from 'escape-html';
import * as path from 'path';
import { execSync as sh } from 'child_process';
"#;
        assert_eq!(
            paths(Language::TypeScript, src),
            [
                ("cp".to_string(), "child_process".to_string()),
                ("escapeHtml".into(), "escape-html".into()),
                ("exec".into(), "child_process.exec".into()),
                ("path".into(), "path".into()),
                ("readFile".into(), "fs.promises.readFile".into()),
                ("run".into(), "child_process.spawn".into()),
                ("sh".into(), "child_process.execSync".into()),
            ]
        );
    }

    #[test]
    fn javascript_patterns_bind_names_to_the_properties_they_read() {
        let src = "const { a, b: { c }, d = 1, ...rest } = x; const [e, f] = y;";
        let file = ParsedFile::parse(Language::JavaScript, src.to_string());
        let mut got = Vec::new();
        preorder(file.root(), true, |n| {
            if n.kind() == "variable_declarator" {
                if let Some(p) = n.child_by_field_name("name") {
                    for (name, props) in js_pattern_bindings(&file, p) {
                        got.push(format!("{}={}", file.node_text(name), props.join(".")));
                    }
                }
                return Visit::Skip;
            }
            Visit::Descend
        });
        assert_eq!(got, ["a=a", "c=b.c", "d=d", "rest=", "e=", "f="]);
    }
}
