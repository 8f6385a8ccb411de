//! Language-neutral views of tree-sitter nodes used by the taint engine: call parts, callee
//! paths, literals, declared names and types. Every walk here is iterative or bounded.

use super::spec::Seg;
use super::value::Const;
use crate::syntax::lang::{self, CallShape, Class};
use crate::syntax::lang::{field, kind};
use crate::syntax::walk::{preorder, Visit};
use crate::syntax::{Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use tree_sitter::Node;

/// Bound for the small loops that walk down wrapper chains.
const CHAIN_LIMIT: usize = 64;

/// Wrappers [`unwrap`] strips: parentheses (and Solidity `expression`), Solidity
/// `call_argument`, expression statements and `await`.
const WRAPPERS: [Class; 4] = [
    Class::Paren,
    Class::CallArgument,
    Class::ExpressionStatement,
    Class::Await,
];

pub(super) fn is_comment(kind: &str) -> bool {
    lang::any_is(kind, Class::Comment)
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
        if !(lang::any_in(n.kind(), &WRAPPERS) && n.named_child_count() >= 1) {
            return n;
        }
        let kids = named_children(n);
        if kids.len() == 1 {
            n = kids[0];
        } else {
            return n;
        }
    }
    n
}

/// Function and class definitions: never entered by statement walks (they are separate
/// functions, or declarations).
pub(super) fn is_definition(kind: &str) -> bool {
    lang::any_is(kind, Class::Definition)
}

pub(super) fn is_call_kind(kind: &str) -> bool {
    lang::any_in(kind, &[Class::Call, Class::New])
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

/// Splits a call node into callee, receiver, name and arguments (`syntax::lang` takes the
/// call apart). `None` for nodes that are not calls this engine understands (`super(..)`
/// constructor invocations and the like).
pub(super) fn call_parts<'t>(file: &ParsedFile, node: Node<'t>) -> Option<CallParts<'t>> {
    let spec = lang::spec(file.language);
    let call = spec.call(node)?;
    let found = spec.args(&call);
    let args = found.positional;
    let kwargs = found
        .keyword
        .into_iter()
        .map(|(n, v)| (file.node_text(n).to_string(), v))
        .collect();
    let parts = match call.shape {
        CallShape::Method => CallParts {
            callee: node,
            receiver: call.receiver,
            name: file.node_text(call.name?).to_string(),
            args,
            kwargs,
            is_new: false,
            options: Vec::new(),
        },
        CallShape::New => CallParts {
            callee: call.function,
            receiver: None,
            name: last_ident(file, call.function),
            args,
            kwargs,
            is_new: true,
            options: Vec::new(),
        },
        CallShape::ThisCtor | CallShape::SuperCtor => return None,
        CallShape::Call => {
            let mut f = unwrap(call.function);
            let mut options = Vec::new();
            if let Some((callee, values)) = spec.call_options(f) {
                // Solidity `to.call{value: v}(data)`.
                options = values;
                f = unwrap(callee);
            }
            let (receiver, name) = match spec.member(f) {
                Some(m) => (Some(m.object), file.node_text(m.name).to_string()),
                None => (None, last_ident(file, f)),
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
        if a.kind() != kind::OBJECT {
            continue;
        }
        for pair in named_children(a) {
            if pair.kind() != kind::PAIR {
                continue;
            }
            let (Some(k), Some(v)) = (
                pair.child_by_field_name(field::KEY),
                pair.child_by_field_name(field::VALUE),
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
            kind::IDENTIFIER
            | kind::FIELD_IDENTIFIER
            | kind::TYPE_IDENTIFIER
            | kind::PROPERTY_IDENTIFIER
            | kind::THIS
            | kind::SUPER
            | kind::NAMESPACE_IDENTIFIER
            | kind::PRIMITIVE_TYPE => {
                rev.push(seg(file.node_text(n), call_next));
                cur = None;
            }
            kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::MEMBER_EXPRESSION
            | kind::FIELD_EXPRESSION => {
                let (obj, field) = match n.kind() {
                    kind::ATTRIBUTE => ("object", "attribute"),
                    kind::FIELD_ACCESS => ("object", "field"),
                    kind::MEMBER_EXPRESSION => ("object", "property"),
                    _ => ("argument", "field"),
                };
                let f = n
                    .child_by_field_name(field)
                    .map(|f| file.node_text(f))
                    .unwrap_or("?");
                rev.push(seg(f, call_next));
                cur = n.child_by_field_name(obj);
            }
            kind::CALL | kind::CALL_EXPRESSION => {
                // JavaScript `require("child_process").exec`: the module's path.
                if let Some(module) = js_require_path(file, n) {
                    rev.extend(module.into_iter().rev());
                    cur = None;
                    call_next = false;
                    continue;
                }
                // A call in the middle of a chain: its callee continues the path.
                cur = n.child_by_field_name(field::FUNCTION);
                call_next = true;
                continue;
            }
            kind::METHOD_INVOCATION => {
                let name = n
                    .child_by_field_name(field::NAME)
                    .map(|f| file.node_text(f))
                    .unwrap_or("?");
                rev.push(seg(name, true));
                if call_next {
                    // Only the outermost call is the callee itself.
                }
                cur = n.child_by_field_name(field::OBJECT);
            }
            kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION => {
                let t = n
                    .child_by_field_name(field::TYPE)
                    .or_else(|| n.child_by_field_name(field::CONSTRUCTOR))
                    .map(|t| last_ident(file, t))
                    .unwrap_or_else(|| "?".into());
                rev.push(seg(&t, true));
                cur = None;
            }
            kind::QUALIFIED_IDENTIFIER
            | kind::SCOPED_IDENTIFIER
            | kind::SCOPED_TYPE_IDENTIFIER
            | kind::DOTTED_NAME
            | kind::GENERIC_TYPE => {
                let text: String = file.node_text(n).split_whitespace().collect();
                let text = text.split('<').next().unwrap_or("").to_string();
                let parts: Vec<&str> = text.split(['.', ':']).filter(|s| !s.is_empty()).collect();
                for (i, p) in parts.iter().enumerate().rev() {
                    rev.push(seg(p, call_next && i + 1 == parts.len()));
                }
                cur = None;
            }
            kind::STRUCT_EXPRESSION => {
                cur = n.child_by_field_name(field::TYPE);
                continue;
            }
            kind::PAYABLE_CONVERSION_EXPRESSION => {
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
        kind::METHOD_INVOCATION => {
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
        kind::INTEGER | kind::DECIMAL_INTEGER_LITERAL | kind::NUMBER_LITERAL => {
            let t: String = text.chars().filter(|c| *c != '_' && *c != '\'').collect();
            let t = t.trim_end_matches(['l', 'L', 'u', 'U']);
            if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                return i64::from_str_radix(h, 16).ok().map(Const::Int);
            }
            t.parse::<i64>().ok().map(Const::Int)
        }
        kind::HEX_INTEGER_LITERAL => {
            let t: String = text.chars().filter(|c| *c != '_').collect();
            let t = t.trim_end_matches(['l', 'L']);
            let h = t.trim_start_matches("0x").trim_start_matches("0X");
            i64::from_str_radix(h, 16).ok().map(Const::Int)
        }
        kind::CHARACTER_LITERAL | kind::CHAR_LITERAL => {
            let inner = text.trim_start_matches(['L', 'u', 'U']).trim_matches('\'');
            let d = decode_string(inner);
            let mut cs = d.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Some(Const::Char(c)),
                _ => None,
            }
        }
        kind::NUMBER => {
            // JavaScript: integers only (a float has no exact constant here).
            let t: String = text.chars().filter(|c| *c != '_').collect();
            if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                return i64::from_str_radix(h, 16).ok().map(Const::Int);
            }
            t.parse::<i64>().ok().map(Const::Int)
        }
        kind::UNDEFINED => Some(Const::Null),
        kind::TRUE => Some(Const::Bool(true)),
        kind::FALSE => Some(Const::Bool(false)),
        kind::BOOLEAN_LITERAL => Some(Const::Bool(text == "true")),
        kind::NONE | kind::NULL_LITERAL | kind::NULL | "nullptr" => Some(Const::Null),
        kind::STRING_LITERAL | kind::STRING | kind::TEMPLATE_STRING => {
            string_const(file, n).map(Const::Str)
        }
        kind::CONCATENATED_STRING => {
            let mut s = String::new();
            for c in named_children(n) {
                match string_const(file, c) {
                    Some(p) => s.push_str(&p),
                    None => return None,
                }
            }
            Some(Const::Str(Rc::from(s.as_str())))
        }
        kind::UNARY_EXPRESSION | kind::UNARY_OPERATOR => {
            let op = n.child_by_field_name(field::OPERATOR).map(|o| o.kind());
            let arg = n
                .child_by_field_name(field::ARGUMENT)
                .or_else(|| n.child_by_field_name(field::OPERAND))?;
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
        kind::STRING => {
            // Python: string_start, string_content*, interpolation*, string_end.
            let mut s = String::new();
            let start = n.child(0).map(|c| file.node_text(c)).unwrap_or("");
            let raw = start.contains(['r', 'R']);
            let mut c = n.walk();
            for ch in n.children(&mut c) {
                match ch.kind() {
                    kind::INTERPOLATION => return None,
                    // JavaScript strings hold `string_fragment`s.
                    kind::STRING_CONTENT | kind::STRING_FRAGMENT => {
                        let t = file.node_text(ch);
                        if raw {
                            s.push_str(t);
                        } else {
                            s.push_str(&decode_string(t));
                        }
                    }
                    kind::ESCAPE_SEQUENCE => s.push_str(&decode_string(file.node_text(ch))),
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
        kind::TEMPLATE_STRING => {
            // JavaScript: constant only without `${..}` substitutions.
            let mut s = String::new();
            for k in named_children(n) {
                match k.kind() {
                    kind::STRING_FRAGMENT => s.push_str(file.node_text(k)),
                    kind::ESCAPE_SEQUENCE => s.push_str(&decode_string(file.node_text(k))),
                    _ => return None,
                }
            }
            Some(Rc::from(s.as_str()))
        }
        kind::STRING_LITERAL => {
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
                    kind::STRING_FRAGMENT
                    | kind::STRING_CONTENT
                    | kind::MULTILINE_STRING_FRAGMENT => s.push_str(file.node_text(k)),
                    kind::ESCAPE_SEQUENCE => s.push_str(&decode_string(file.node_text(k))),
                    kind::STRING => {
                        // Solidity string_literal > string.
                        let t = file.node_text(k);
                        let t = t.trim_matches(|c| c == '"' || c == '\'');
                        s.push_str(&decode_string(t));
                    }
                    kind::STRING_INTERPOLATION | kind::INTERPOLATION => return None,
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
        kind::STRING
            | kind::STRING_LITERAL
            | kind::CONCATENATED_STRING
            | kind::RAW_STRING_LITERAL
            | kind::TEMPLATE_STRING
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
            kind::IDENTIFIER | kind::FIELD_IDENTIFIER => return Some(d),
            kind::INIT_DECLARATOR
            | kind::POINTER_DECLARATOR
            | kind::ARRAY_DECLARATOR
            | kind::REFERENCE_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR
            | kind::FUNCTION_DECLARATOR => {
                d = d
                    .child_by_field_name(field::DECLARATOR)
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
            kind::ARRAY_DECLARATOR => return d.child_by_field_name(field::SIZE).is_some(),
            kind::INIT_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR => match d.child_by_field_name(field::DECLARATOR) {
                Some(x) => d = x,
                None => return false,
            },
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
                        kind::FUNCTION_DECLARATION | kind::GENERATOR_FUNCTION_DECLARATION
                    )
                }
                _ => false,
            };
            if binds_name {
                if let Some(name) = n.child_by_field_name(field::NAME) {
                    d.locals.insert(file.node_text(name).to_string());
                }
            }
            return Visit::Skip;
        }
        match (lang, kind) {
            (
                Language::Python,
                kind::ASSIGNMENT
                | kind::AUGMENTED_ASSIGNMENT
                | kind::FOR_STATEMENT
                | kind::FOR_IN_CLAUSE,
            ) => {
                if let Some(l) = n.child_by_field_name(field::LEFT) {
                    python_targets(file, l, &mut d.locals);
                    // `x = Cls(..)`: x's class, for resolving `x.m()`.
                    let class = n
                        .child_by_field_name(field::RIGHT)
                        .filter(|r| r.kind() == kind::CALL && kind == kind::ASSIGNMENT)
                        .and_then(|r| r.child_by_field_name(field::FUNCTION))
                        .filter(|f| f.kind() == kind::IDENTIFIER)
                        .map(|f| file.node_text(f))
                        .filter(|f| f.starts_with(|c: char| c.is_ascii_uppercase()));
                    if let (Some(c), kind::IDENTIFIER) = (class, l.kind()) {
                        d.types.insert(file.node_text(l).to_string(), c.to_string());
                    }
                }
            }
            (Language::Python, kind::NAMED_EXPRESSION) => {
                if let Some(l) = n.child_by_field_name(field::NAME) {
                    d.locals.insert(file.node_text(l).to_string());
                }
            }
            (Language::Python, kind::AS_PATTERN_TARGET) => {
                python_targets(file, n, &mut d.locals);
            }
            (Language::Python, kind::EXCEPT_CLAUSE) => {
                for c in named_children(n) {
                    if c.kind() == kind::AS_PATTERN {
                        if let Some(a) = c.child_by_field_name(field::ALIAS) {
                            python_targets(file, a, &mut d.locals);
                        }
                    }
                }
            }
            (Language::Python, kind::IMPORT_STATEMENT | kind::IMPORT_FROM_STATEMENT) => {
                let mut c = n.walk();
                for name in n.children_by_field_name(field::NAME, &mut c) {
                    let bound = match name.kind() {
                        kind::ALIASED_IMPORT => name.child_by_field_name(field::ALIAS),
                        _ => name.named_child(0),
                    };
                    if let Some(b) = bound {
                        d.locals.insert(file.node_text(b).to_string());
                    }
                }
            }
            (Language::Python, kind::GLOBAL_STATEMENT | kind::NONLOCAL_STATEMENT) => {
                for c in named_children(n) {
                    if c.kind() == kind::IDENTIFIER {
                        d.globals.insert(file.node_text(c).to_string());
                    }
                }
            }
            (Language::Java, kind::LOCAL_VARIABLE_DECLARATION | kind::FIELD_DECLARATION) => {
                let ty = n
                    .child_by_field_name(field::TYPE)
                    .map(|t| simple_type(file, t))
                    .unwrap_or_default();
                let mut c = n.walk();
                for decl in n.children_by_field_name(field::DECLARATOR, &mut c) {
                    if let Some(name) = decl.child_by_field_name(field::NAME) {
                        let name = file.node_text(name).to_string();
                        if ty != "var" && !ty.is_empty() {
                            d.types.insert(name.clone(), ty.clone());
                        }
                        d.locals.insert(name);
                    }
                }
            }
            (
                Language::Java,
                kind::ENHANCED_FOR_STATEMENT | kind::CATCH_FORMAL_PARAMETER | kind::RESOURCE,
            ) => {
                if let Some(name) = n.child_by_field_name(field::NAME) {
                    let name = file.node_text(name).to_string();
                    if let Some(t) = n.child_by_field_name(field::TYPE) {
                        d.types.insert(name.clone(), simple_type(file, t));
                    }
                    d.locals.insert(name);
                }
            }
            (Language::C | Language::Cpp, kind::DECLARATION) => {
                let ty = n
                    .child_by_field_name(field::TYPE)
                    .map(|t| simple_type(file, t))
                    .unwrap_or_default();
                let mut c = n.walk();
                for decl in n.children_by_field_name(field::DECLARATOR, &mut c) {
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
            (Language::Cpp, kind::FOR_RANGE_LOOP) => {
                if let Some(id) = n
                    .child_by_field_name(field::DECLARATOR)
                    .and_then(declarator_name)
                {
                    d.locals.insert(file.node_text(id).to_string());
                }
            }
            (
                Language::JavaScript | Language::TypeScript,
                kind::VARIABLE_DECLARATOR | kind::FOR_IN_STATEMENT | kind::CATCH_CLAUSE,
            ) => {
                let target = match kind {
                    kind::VARIABLE_DECLARATOR => n.child_by_field_name(field::NAME),
                    kind::FOR_IN_STATEMENT => n.child_by_field_name(field::LEFT),
                    _ => n.child_by_field_name(field::PARAMETER),
                };
                if let Some(t) = target {
                    for (name, _) in js_pattern_bindings(file, t) {
                        d.locals.insert(file.node_text(name).to_string());
                    }
                }
            }
            (Language::Solidity, kind::VARIABLE_DECLARATION) => {
                if let Some(name) = n.child_by_field_name(field::NAME) {
                    let name = file.node_text(name).to_string();
                    if let Some(t) = n.child_by_field_name(field::TYPE) {
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
        kind::BINARY_OPERATOR
            | kind::BINARY_EXPRESSION
            | kind::BOOLEAN_OPERATOR
            | kind::COMPARISON_OPERATOR
            | kind::STRING
            | kind::STRING_LITERAL
            | kind::CONCATENATED_STRING
            | kind::ARGUMENT_LIST
            | kind::ARGUMENTS
            | kind::SUBSCRIPT
            | kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::ARRAY_ACCESS
            | kind::SUBSCRIPT_EXPRESSION
            | kind::FIELD_EXPRESSION
            | kind::MEMBER_EXPRESSION
            | kind::UNARY_EXPRESSION
            | kind::NOT_OPERATOR
            | kind::PARENTHESIZED_EXPRESSION
            | kind::INITIALIZER_LIST
            | kind::ARRAY_INITIALIZER
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
            kind::IDENTIFIER => {
                out.insert(file.node_text(n).to_string());
            }
            kind::PATTERN_LIST
            | kind::TUPLE_PATTERN
            | kind::LIST_PATTERN
            | kind::TUPLE
            | kind::LIST
            | kind::LIST_SPLAT_PATTERN
            | kind::AS_PATTERN_TARGET
            | kind::PARENTHESIZED_EXPRESSION
            | kind::EXPRESSION_LIST => {
                stack.extend(named_children(n));
            }
            _ => {}
        }
    }
}

/// Declared parameter types (Java/C/C++/Solidity) by parameter name.
pub(super) fn parameter_types(file: &ParsedFile, func_node: Node<'_>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let list = func_node
        .child_by_field_name(field::PARAMETERS)
        .or_else(|| {
            func_node
                .child_by_field_name(field::DECLARATOR)
                .and_then(|d| find_params(d))
        });
    let params: Vec<Node<'_>> = match list {
        Some(l) => named_children(l),
        // Solidity: parameters are direct children.
        None => named_children(func_node)
            .into_iter()
            .filter(|c| c.kind() == kind::PARAMETER)
            .collect(),
    };
    for p in params {
        let ty = p
            .child_by_field_name(field::TYPE)
            .map(|t| simple_type(file, t));
        let name = p.child_by_field_name(field::NAME).or_else(|| {
            p.child_by_field_name(field::DECLARATOR)
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
        if d.kind() == kind::FUNCTION_DECLARATOR {
            return d.child_by_field_name(field::PARAMETERS);
        }
        d = d.child_by_field_name(field::DECLARATOR)?;
    }
    None
}

/// Solidity visibility of a function definition (`public`, `external`, ...).
pub(super) fn visibility(file: &ParsedFile, func_node: Node<'_>) -> Option<String> {
    named_children(func_node)
        .into_iter()
        .find(|c| c.kind() == kind::VISIBILITY)
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
            kind::IMPORT_STATEMENT => {
                let mut c = item.walk();
                for name in item.children_by_field_name(field::NAME, &mut c) {
                    if name.kind() == kind::ALIASED_IMPORT {
                        if let (Some(n), Some(a)) = (
                            name.child_by_field_name(field::NAME),
                            name.child_by_field_name(field::ALIAS),
                        ) {
                            out.insert(file.node_text(a).to_string(), to_segs(file.node_text(n)));
                        }
                    }
                }
            }
            kind::IMPORT_FROM_STATEMENT => {
                let Some(module) = item.child_by_field_name(field::MODULE_NAME) else {
                    continue;
                };
                let module = file.node_text(module).trim_start_matches('.').to_string();
                let mut c = item.walk();
                for name in item.children_by_field_name(field::NAME, &mut c) {
                    let (orig, bound) = match name.kind() {
                        kind::ALIASED_IMPORT => (
                            name.child_by_field_name(field::NAME),
                            name.child_by_field_name(field::ALIAS),
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
            kind::MEMBER_EXPRESSION => {
                let prop = cur.child_by_field_name(field::PROPERTY)?;
                members.push(Seg {
                    name: file.node_text(prop).to_string(),
                    call: false,
                });
                cur = unwrap(cur.child_by_field_name(field::OBJECT)?);
            }
            kind::CALL_EXPRESSION => {
                let f = cur.child_by_field_name(field::FUNCTION)?;
                if file.node_text(f) != "require" {
                    return None;
                }
                let arg = named_children(cur.child_by_field_name(field::ARGUMENTS)?)
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
            kind::IDENTIFIER | kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => out.push((n, path)),
            kind::OBJECT_PATTERN => {
                for c in named_children(n).into_iter().rev() {
                    match c.kind() {
                        kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => {
                            let mut p = path.clone();
                            p.push(file.node_text(c).to_string());
                            stack.push((c, p));
                        }
                        kind::PAIR_PATTERN => {
                            let (Some(k), Some(v)) = (
                                c.child_by_field_name(field::KEY),
                                c.child_by_field_name(field::VALUE),
                            ) else {
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
                        kind::OBJECT_ASSIGNMENT_PATTERN => {
                            // `{ a = 1 }`: the left side binds, the default may also flow.
                            if let Some(l) = c.child_by_field_name(field::LEFT) {
                                let mut p = path.clone();
                                if l.kind() == kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN {
                                    p.push(file.node_text(l).to_string());
                                }
                                stack.push((l, p));
                            }
                        }
                        kind::REST_PATTERN => {
                            for k in named_children(c) {
                                stack.push((k, path.clone()));
                            }
                        }
                        _ => {}
                    }
                }
            }
            kind::ARRAY_PATTERN | kind::REST_PATTERN => {
                for c in named_children(n).into_iter().rev() {
                    stack.push((c, path.clone()));
                }
            }
            kind::ASSIGNMENT_PATTERN => {
                if let Some(l) = n.child_by_field_name(field::LEFT) {
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
        .filter(|d| d.kind() == kind::VARIABLE_DECLARATOR)
        .filter_map(|d| {
            Some((
                d.child_by_field_name(field::NAME)?,
                d.child_by_field_name(field::VALUE)?,
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
            kind::LEXICAL_DECLARATION | kind::VARIABLE_DECLARATION => {
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
            kind::IMPORT_STATEMENT => {
                let Some(module) = item
                    .child_by_field_name(field::SOURCE)
                    .and_then(|s| string_const(file, s))
                    .and_then(|m| js_module_path(&m))
                else {
                    continue;
                };
                let Some(clause) = named_children(item)
                    .into_iter()
                    .find(|c| c.kind() == kind::IMPORT_CLAUSE)
                else {
                    continue;
                };
                for part in named_children(clause) {
                    match part.kind() {
                        // `import x from "m"` and `import * as x from "m"`.
                        kind::IDENTIFIER => {
                            out.insert(file.node_text(part).to_string(), module.clone());
                        }
                        kind::NAMESPACE_IMPORT => {
                            if let Some(id) = named_children(part).into_iter().next() {
                                out.insert(file.node_text(id).to_string(), module.clone());
                            }
                        }
                        kind::NAMED_IMPORTS => {
                            for spec in named_children(part) {
                                let Some(name) = spec.child_by_field_name(field::NAME) else {
                                    continue;
                                };
                                let bound = spec.child_by_field_name(field::ALIAS).unwrap_or(name);
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
    js_promisified(file, &mut out);
    out
}

/// `const run = util.promisify(exec)` (or `promisify(cp.exec)` with `promisify` imported from
/// `util`): at module level, `run` calls what `exec` is bound to.
fn js_promisified(file: &ParsedFile, out: &mut BTreeMap<String, Vec<Seg>>) {
    let bound_path = |out: &BTreeMap<String, Vec<Seg>>, n: Node<'_>| -> Option<Vec<Seg>> {
        let n = unwrap(n);
        match n.kind() {
            kind::IDENTIFIER => out.get(file.node_text(n)).cloned(),
            kind::MEMBER_EXPRESSION => {
                let object = unwrap(n.child_by_field_name(field::OBJECT)?);
                let prop = n.child_by_field_name(field::PROPERTY)?;
                let mut path = match object.kind() {
                    kind::IDENTIFIER => {
                        out.get(file.node_text(object)).cloned().unwrap_or_else(|| {
                            vec![Seg {
                                name: file.node_text(object).to_string(),
                                call: false,
                            }]
                        })
                    }
                    _ => return None,
                };
                path.push(Seg {
                    name: file.node_text(prop).to_string(),
                    call: false,
                });
                Some(path)
            }
            _ => None,
        }
    };
    let is_promisify =
        |path: &[Seg]| matches!(path, [util, f] if util.name == "util" && f.name == "promisify");
    for item in named_children(file.root()) {
        if !matches!(
            item.kind(),
            kind::LEXICAL_DECLARATION | kind::VARIABLE_DECLARATION
        ) {
            continue;
        }
        for (name, value) in js_initialised_declarators(item) {
            let value = unwrap(value);
            if value.kind() != kind::CALL_EXPRESSION || name.kind() != kind::IDENTIFIER {
                continue;
            }
            let Some(f) = value.child_by_field_name(field::FUNCTION) else {
                continue;
            };
            if !bound_path(out, f).is_some_and(|p| is_promisify(&p)) {
                continue;
            }
            let Some(arg) = value
                .child_by_field_name(field::ARGUMENTS)
                .and_then(|a| named_children(a).into_iter().next())
            else {
                continue;
            };
            if let Some(target) = bound_path(out, arg) {
                out.insert(file.node_text(name).to_string(), target);
            }
        }
    }
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
            kind::CLASS_DECLARATION
                | kind::INTERFACE_DECLARATION
                | kind::ENUM_DECLARATION
                | kind::RECORD_DECLARATION
        ) {
            if let Some(name) = n.child_by_field_name(field::NAME) {
                let name = file.node_text(name);
                prefix = if prefix.is_empty() {
                    name.to_string()
                } else {
                    format!("{prefix}.{name}")
                };
            }
        }
        if kind == kind::FIELD_DECLARATION && !prefix.is_empty() {
            let entry = out.entry(prefix.clone()).or_default();
            let ty = n
                .child_by_field_name(field::TYPE)
                .map(|t| simple_type(file, t))
                .unwrap_or_default();
            let is_static = named_children(n).iter().any(|c| {
                c.kind() == kind::MODIFIERS
                    && file.node_text(*c).split_whitespace().any(|w| w == "static")
            });
            let mut c = n.walk();
            for d in n.children_by_field_name(field::DECLARATOR, &mut c) {
                if let Some(name) = d.child_by_field_name(field::NAME) {
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
            kind::METHOD_DECLARATION | kind::CONSTRUCTOR_DECLARATION | kind::LAMBDA_EXPRESSION
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
        c.kind() == kind::MODIFIERS && file.node_text(*c).split_whitespace().any(|w| w == "static")
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
            kind::DECLARATION => {
                let mut c = n.walk();
                for d in n.children_by_field_name(field::DECLARATOR, &mut c) {
                    if d.kind() == kind::FUNCTION_DECLARATOR {
                        continue;
                    }
                    if let Some(id) = declarator_name(d) {
                        out.insert(file.node_text(id).to_string());
                    }
                }
            }
            k if crate::syntax::lang::holds_file_scope(k) => stack.extend(named_children(n)),
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
    fn promisified_functions_are_bound_to_what_they_wrap() {
        let src = r#"
const util = require('util');
const { promisify } = require('util');
const cp = require('child_process');
const { exec } = require('child_process');
const run = util.promisify(exec);
const sh = promisify(cp.execFile);
const other = wrap(exec);
"#;
        assert_eq!(
            paths(Language::JavaScript, src),
            [
                ("cp".to_string(), "child_process".to_string()),
                ("exec".into(), "child_process.exec".into()),
                ("promisify".into(), "util.promisify".into()),
                ("run".into(), "child_process.exec".into()),
                ("sh".into(), "child_process.execFile".into()),
                ("util".into(), "util".into()),
            ]
        );
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
            if n.kind() == kind::VARIABLE_DECLARATOR {
                if let Some(p) = n.child_by_field_name(field::NAME) {
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
