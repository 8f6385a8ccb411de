//! Function discovery: every function, method, constructor, modifier and lambda of a file,
//! with its qualified name (`Class.method`, `Outer.Inner.method`, `ns::Class::method` in C++),
//! signature and body. Nested functions and lambdas are separate functions.
//!
//! The walk is iterative, so deeply nested input cannot overflow the stack.

use super::language::Language;
use super::parse::ParsedFile;
use crate::syntax::lang::{field, kind};
use tree_sitter::Node;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FunctionKind {
    Function,
    Method,
    Constructor,
    Lambda,
    /// Solidity modifier.
    Modifier,
}

/// One function of a parsed file.
#[derive(Debug, Clone)]
pub struct Function<'t> {
    /// Qualified name, unique within the file except for overloads (see `signature`).
    pub name: String,
    /// The unqualified name (`method`), or `<lambda@LINE>` for anonymous functions.
    pub simple_name: String,
    /// Qualified name of the innermost enclosing class/contract/struct, if any.
    pub class: Option<String>,
    /// Qualified name of the enclosing scope (class, namespace or function), if any.
    pub container: Option<String>,
    pub kind: FunctionKind,
    /// Parameter list as written, whitespace collapsed, e.g. `(self, a: int)`.
    pub signature: String,
    /// Parameter names in order (receiver parameters such as Python's `self` included).
    pub params: Vec<String>,
    /// The whole definition node (for Python, the `function_definition`, not the decorator).
    pub node: Node<'t>,
    /// The body (a block, or an expression for lambdas), if present.
    pub body: Option<Node<'t>>,
    /// 1-based first and last line of the definition.
    pub start_line: usize,
    pub end_line: usize,
}

impl Function<'_> {
    /// Number of parameters a caller passes (Python's `self`/`cls` on methods excluded).
    pub fn call_arity(&self) -> usize {
        let skip = usize::from(
            self.kind != FunctionKind::Function
                && self.kind != FunctionKind::Lambda
                && matches!(
                    self.params.first().map(String::as_str),
                    Some("self" | "cls")
                )
                && self.class.is_some(),
        );
        self.params.len().saturating_sub(skip)
    }

    /// True when the function takes a variable number of arguments.
    pub fn is_variadic(&self) -> bool {
        self.signature.contains("...")
            || self.signature.contains('*')
                && self.node.kind() == kind::FUNCTION_DEFINITION
                && self
                    .signature
                    .split(',')
                    .any(|p| p.trim_start().starts_with('*'))
    }
}

/// The separator between qualified-name segments for a language.
pub fn separator(lang: Language) -> &'static str {
    match lang {
        Language::Cpp => "::",
        _ => ".",
    }
}

#[derive(Clone)]
struct Scope {
    /// Qualified name of this scope ("" at top level).
    path: String,
    /// Qualified name of the innermost class-like scope.
    class: Option<String>,
}

fn join(sep: &str, path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}{sep}{seg}")
    }
}

fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for ch in s.chars() {
        if ch.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() && !out.ends_with('(') && ch != ')' {
                out.push(' ');
            }
            space = false;
            out.push(ch);
        }
    }
    out
}

/// The innermost of `items` whose inclusive span `[start, end]` (lines or byte offsets, as
/// `span` gives them) contains `at`: the shortest span, and of equal spans the one that starts
/// last. The one "innermost function at a line / offset" rule: diagnostics, fingerprints,
/// hovers, flaky-test lenses and the equivalence code action all use it.
pub fn innermost<T>(
    items: impl IntoIterator<Item = T>,
    at: usize,
    span: impl Fn(&T) -> (usize, usize),
) -> Option<T> {
    items
        .into_iter()
        .filter(|x| {
            let (start, end) = span(x);
            start <= at && at <= end
        })
        .min_by_key(|x| {
            let (start, end) = span(x);
            (end.saturating_sub(start), std::cmp::Reverse(start))
        })
}

/// Finds all functions in document order (a copy of [`ParsedFile::functions`], which is
/// computed once per parse; borrow that where a slice will do).
pub fn collect_functions(file: &ParsedFile) -> Vec<Function<'_>> {
    file.functions().to_vec()
}

/// Walks the tree rooted at `root` (the root of `file`'s tree or of a copy of it) for its
/// functions, in document order. The functions borrow only the tree, not `file`.
pub(crate) fn find_functions<'t>(file: &ParsedFile, root: Node<'t>) -> Vec<Function<'t>> {
    find_functions_in(file, root)
}

/// The functions as found by the reference walk: every named node examined, over each node's
/// named children. Slower; the oracle that `tests/per_parse_facts.rs` compares
/// [`ParsedFile::functions`] with on every fixture.
pub fn reference_functions(file: &ParsedFile) -> Vec<Function<'_>> {
    reference_walk(file, file.root())
}

/// The node kinds that can open a scope or define a function, per language: the union of
/// the kinds `class_like_name`, `namespace_name` and `function_at` match (nodes of any other
/// kind are only descended into). `tests/per_parse_facts.rs` checks that the walk with this
/// filter finds what [`reference_functions`] finds on every fixture.
fn scope_kinds(lang: Language) -> &'static [&'static str] {
    match lang {
        Language::Python => &[
            kind::CLASS_DEFINITION,
            kind::FUNCTION_DEFINITION,
            kind::LAMBDA,
        ],
        Language::Java => &[
            kind::CLASS_DECLARATION,
            kind::INTERFACE_DECLARATION,
            kind::ENUM_DECLARATION,
            kind::RECORD_DECLARATION,
            kind::ANNOTATION_TYPE_DECLARATION,
            kind::CLASS_BODY,
            kind::METHOD_DECLARATION,
            kind::CONSTRUCTOR_DECLARATION,
            kind::COMPACT_CONSTRUCTOR_DECLARATION,
            kind::LAMBDA_EXPRESSION,
        ],
        Language::C => &[kind::FUNCTION_DEFINITION],
        Language::Cpp => &[
            kind::CLASS_SPECIFIER,
            kind::STRUCT_SPECIFIER,
            kind::UNION_SPECIFIER,
            kind::NAMESPACE_DEFINITION,
            kind::FUNCTION_DEFINITION,
            kind::LAMBDA_EXPRESSION,
        ],
        Language::Solidity => &[
            kind::CONTRACT_DECLARATION,
            kind::INTERFACE_DECLARATION,
            kind::LIBRARY_DECLARATION,
            kind::FUNCTION_DEFINITION,
            kind::CONSTRUCTOR_DEFINITION,
            kind::MODIFIER_DEFINITION,
            kind::FALLBACK_RECEIVE_DEFINITION,
        ],
        // TypeScript's grammar (TSX) has JavaScript's kinds, and abstract classes.
        Language::JavaScript | Language::TypeScript => &[
            kind::CLASS_DECLARATION,
            kind::CLASS,
            kind::ABSTRACT_CLASS_DECLARATION,
            kind::FUNCTION_DECLARATION,
            kind::GENERATOR_FUNCTION_DECLARATION,
            kind::METHOD_DEFINITION,
            kind::ARROW_FUNCTION,
            kind::FUNCTION_EXPRESSION,
            kind::GENERATOR_FUNCTION,
        ],
    }
}

/// [`scope_kinds`] as a table over the grammar's kind ids (every id whose name is listed,
/// aliases included), built once per language.
fn scope_kind_ids(lang: Language) -> &'static [bool] {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<Vec<bool>>; Language::ALL.len()] =
        [const { OnceLock::new() }; Language::ALL.len()];
    let i = Language::ALL.iter().position(|l| *l == lang).unwrap_or(0);
    TABLES[i].get_or_init(|| {
        let g = lang.grammar();
        let names = scope_kinds(lang);
        (0..g.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| g.node_kind_for_id(id))
                    .is_some_and(|k| names.contains(&k))
            })
            .collect()
    })
}

/// Opens the scope `node` declares (class-like, namespace or function; a function is added to
/// `out`), returning the scope index for its children.
fn open_scope<'t>(
    file: &ParsedFile,
    node: Node<'t>,
    si: usize,
    scopes: &mut Vec<Scope>,
    out: &mut Vec<Function<'t>>,
) -> usize {
    let sep = separator(file.language);
    let Some(scope) = scopes.get(si) else {
        return si;
    };
    let opened = if let Some(class_name) = class_like_name(file, node) {
        let path = join(sep, &scope.path, &class_name);
        Some(Scope {
            path: path.clone(),
            class: Some(path),
        })
    } else if let Some(ns) = namespace_name(file, node) {
        Some(Scope {
            path: join(sep, &scope.path, &ns),
            class: scope.class.clone(),
        })
    } else if let Some(f) = function_at(file, node, scope) {
        let inner = Scope {
            path: f.name.clone(),
            class: scope.class.clone(),
        };
        out.push(f);
        Some(inner)
    } else {
        None
    };
    match opened {
        Some(s) => {
            scopes.push(s);
            scopes.len() - 1
        }
        None => si,
    }
}

/// The walk: named nodes in document order with one tree cursor (no recursion, so deep
/// input cannot overflow the stack; no allocation per node). Only nodes of a
/// [`scope_kinds`] kind are examined; [`reference_functions`] examines every named node. A
/// function whose text cannot define another (see `LangSpec::nested_function_words`) is not
/// descended into.
fn find_functions_in<'t>(file: &ParsedFile, root: Node<'t>) -> Vec<Function<'t>> {
    let table = scope_kind_ids(file.language);
    let may_open = |n: Node<'_>| table.get(usize::from(n.kind_id())).copied().unwrap_or(true);
    let nested_words = crate::syntax::lang::spec(file.language).nested_function_words;
    let mut out = Vec::new();
    // Scopes live in an arena; `parents[d]` is the scope of the nodes at depth d + 1 on the
    // cursor's path.
    let mut scopes: Vec<Scope> = vec![Scope {
        path: String::new(),
        class: None,
    }];
    let mut parents: Vec<usize> = Vec::new();
    let mut cursor = root.walk();
    let mut child_scope = if may_open(root) {
        open_scope(file, root, 0, &mut scopes, &mut out)
    } else {
        0
    };
    let mut descend = true;
    'walk: loop {
        if descend && cursor.goto_first_child() {
            parents.push(child_scope);
        } else {
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                parents.pop();
            }
        }
        let node = cursor.node();
        if !node.is_named() {
            descend = false;
            continue;
        }
        let si = parents.last().copied().unwrap_or(0);
        descend = true;
        child_scope = if may_open(node) {
            let before = out.len();
            let scope = open_scope(file, node, si, &mut scopes, &mut out);
            if out.len() > before {
                if let Some(words) = nested_words {
                    descend = may_define_functions(file, node, words);
                }
            }
            scope
        } else {
            si
        };
    }
    out
}

/// False when the function `node` cannot contain a nested function, lambda or class: its
/// text after its name (after its first token when it has none) has none of the language's
/// `nested_function_words` (one text search instead of visiting the body's nodes).
fn may_define_functions(file: &ParsedFile, node: Node<'_>, words: &[&str]) -> bool {
    let from = node
        .child_by_field_name(field::NAME)
        .or_else(|| node.child(0))
        .map_or(node.start_byte(), |n| n.end_byte());
    let rest = file
        .text
        .get(from.max(node.start_byte())..node.end_byte())
        .unwrap_or("");
    words.iter().any(|w| rest.contains(w))
}

/// The walk without the kind table, over each node's named children.
fn reference_walk<'t>(file: &ParsedFile, root: Node<'t>) -> Vec<Function<'t>> {
    let mut out = Vec::new();
    let mut scopes: Vec<Scope> = vec![Scope {
        path: String::new(),
        class: None,
    }];
    let mut stack: Vec<(Node<'_>, usize)> = vec![(root, 0)];
    while let Some((node, si)) = stack.pop() {
        let child_scope = open_scope(file, node, si, &mut scopes, &mut out);
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for &child in children.iter().rev() {
            stack.push((child, child_scope));
        }
    }
    out
}

fn field_text<'a>(file: &'a ParsedFile, node: Node<'_>, field: &str) -> Option<&'a str> {
    node.child_by_field_name(field).map(|n| file.node_text(n))
}

/// If `node` declares a class-like scope, its (unqualified) name.
fn class_like_name(file: &ParsedFile, node: Node<'_>) -> Option<String> {
    let kind = node.kind();
    let named = matches!(
        (file.language, kind),
        (Language::Python, kind::CLASS_DEFINITION)
            | (
                Language::Java,
                kind::CLASS_DECLARATION
                    | kind::INTERFACE_DECLARATION
                    | kind::ENUM_DECLARATION
                    | kind::RECORD_DECLARATION
                    | kind::ANNOTATION_TYPE_DECLARATION
            )
            | (
                Language::Cpp,
                kind::CLASS_SPECIFIER | kind::STRUCT_SPECIFIER | kind::UNION_SPECIFIER
            )
            | (
                Language::Solidity,
                kind::CONTRACT_DECLARATION
                    | kind::INTERFACE_DECLARATION
                    | kind::LIBRARY_DECLARATION
            )
            | (
                Language::JavaScript | Language::TypeScript,
                kind::CLASS_DECLARATION | kind::CLASS | kind::ABSTRACT_CLASS_DECLARATION
            )
    );
    if named {
        // C++ forward declarations (`struct S;`) and elaborated types have no body.
        if file.language == Language::Cpp && node.child_by_field_name(field::BODY).is_none() {
            return None;
        }
        let name = field_text(file, node, field::NAME)
            .map(str::to_string)
            .unwrap_or_else(|| format!("<anonymous@{}>", file.line_of(node.start_byte())));
        return Some(name);
    }
    // Java anonymous classes: `new T() { ... }`.
    if file.language == Language::Java && kind == kind::CLASS_BODY {
        if let Some(parent) = node.parent() {
            if parent.kind() == kind::OBJECT_CREATION_EXPRESSION {
                let ty = field_text(file, parent, field::TYPE).unwrap_or("Object");
                return Some(format!(
                    "<anonymous {}@{}>",
                    ty,
                    file.line_of(node.start_byte())
                ));
            }
        }
    }
    None
}

fn namespace_name(file: &ParsedFile, node: Node<'_>) -> Option<String> {
    if file.language == Language::Cpp && node.kind() == kind::NAMESPACE_DEFINITION {
        return Some(
            field_text(file, node, field::NAME)
                .map(|s| s.split_whitespace().collect::<String>())
                .unwrap_or_else(|| "(anonymous namespace)".to_string()),
        );
    }
    None
}

/// If `node` defines a function, describe it.
fn function_at<'t>(file: &ParsedFile, node: Node<'t>, scope: &Scope) -> Option<Function<'t>> {
    let lang = file.language;
    let sep = separator(lang);
    let line = || file.line_of(node.start_byte());
    let lambda_name = || format!("<lambda@{}>", line());
    let in_class = scope.class.is_some() && scope.class.as_deref() == Some(scope.path.as_str());
    let method_or_fn = |k| if in_class { k } else { FunctionKind::Function };
    let (simple, kind, params_node, body): (
        String,
        FunctionKind,
        Option<Node<'t>>,
        Option<Node<'t>>,
    ) = match (lang, node.kind()) {
        (Language::Python, kind::FUNCTION_DEFINITION) => {
            let name = field_text(file, node, field::NAME)?.to_string();
            let kind = if in_class && name == "__init__" {
                FunctionKind::Constructor
            } else {
                method_or_fn(FunctionKind::Method)
            };
            (
                name,
                kind,
                node.child_by_field_name(field::PARAMETERS),
                node.child_by_field_name(field::BODY),
            )
        }
        (Language::Python, kind::LAMBDA) => (
            lambda_name(),
            FunctionKind::Lambda,
            node.child_by_field_name(field::PARAMETERS),
            node.child_by_field_name(field::BODY),
        ),
        (Language::Java, kind::METHOD_DECLARATION) => (
            field_text(file, node, field::NAME)?.to_string(),
            FunctionKind::Method,
            node.child_by_field_name(field::PARAMETERS),
            node.child_by_field_name(field::BODY),
        ),
        (Language::Java, kind::CONSTRUCTOR_DECLARATION | kind::COMPACT_CONSTRUCTOR_DECLARATION) => {
            (
                field_text(file, node, field::NAME)?.to_string(),
                FunctionKind::Constructor,
                node.child_by_field_name(field::PARAMETERS),
                node.child_by_field_name(field::BODY),
            )
        }
        (Language::Java, kind::LAMBDA_EXPRESSION) => (
            lambda_name(),
            FunctionKind::Lambda,
            node.child_by_field_name(field::PARAMETERS),
            node.child_by_field_name(field::BODY),
        ),
        (Language::C | Language::Cpp, kind::FUNCTION_DEFINITION) => {
            let declarator =
                find_function_declarator(node.child_by_field_name(field::DECLARATOR)?)?;
            let name_node = declarator.child_by_field_name(field::DECLARATOR)?;
            let raw: String = file.node_text(name_node).split_whitespace().collect();
            let (simple, extra) = split_cpp_qualified(&raw);
            let in_cls = !extra.is_empty() || in_class;
            let kind = if lang == Language::Cpp {
                let cls_simple = if !extra.is_empty() {
                    extra.rsplit("::").next().map(str::to_string)
                } else {
                    scope
                        .class
                        .as_deref()
                        .map(|c| c.rsplit("::").next().unwrap_or(c).to_string())
                };
                if in_cls
                    && (cls_simple.as_deref() == Some(simple.as_str()) || simple.starts_with('~'))
                {
                    FunctionKind::Constructor
                } else if in_cls {
                    FunctionKind::Method
                } else {
                    FunctionKind::Function
                }
            } else {
                FunctionKind::Function
            };
            let full_simple = if extra.is_empty() {
                simple
            } else {
                format!("{extra}::{simple}")
            };
            (
                full_simple,
                kind,
                declarator.child_by_field_name(field::PARAMETERS),
                node.child_by_field_name(field::BODY),
            )
        }
        (Language::Cpp, kind::LAMBDA_EXPRESSION) => {
            let params = node
                .child_by_field_name(field::DECLARATOR)
                .and_then(|d| d.child_by_field_name(field::PARAMETERS));
            (
                lambda_name(),
                FunctionKind::Lambda,
                params,
                node.child_by_field_name(field::BODY),
            )
        }
        (Language::Solidity, kind::FUNCTION_DEFINITION) => (
            field_text(file, node, field::NAME)?.to_string(),
            method_or_fn(FunctionKind::Method),
            None,
            node.child_by_field_name(field::BODY),
        ),
        (Language::Solidity, kind::CONSTRUCTOR_DEFINITION) => (
            "constructor".to_string(),
            FunctionKind::Constructor,
            None,
            node.child_by_field_name(field::BODY),
        ),
        (Language::Solidity, kind::MODIFIER_DEFINITION) => (
            field_text(file, node, field::NAME)?.to_string(),
            FunctionKind::Modifier,
            None,
            node.child_by_field_name(field::BODY),
        ),
        (Language::Solidity, kind::FALLBACK_RECEIVE_DEFINITION) => {
            let t = file.node_text(node);
            let name = if t.trim_start().starts_with("receive") {
                "receive"
            } else {
                "fallback"
            };
            (
                name.to_string(),
                FunctionKind::Method,
                None,
                node.child_by_field_name(field::BODY),
            )
        }
        (
            Language::JavaScript | Language::TypeScript,
            kind::FUNCTION_DECLARATION
            | kind::GENERATOR_FUNCTION_DECLARATION
            | kind::METHOD_DEFINITION,
        ) => {
            let name = field_text(file, node, field::NAME)?.to_string();
            let kind = if node.kind() == kind::METHOD_DEFINITION {
                if name == "constructor" {
                    FunctionKind::Constructor
                } else {
                    FunctionKind::Method
                }
            } else {
                FunctionKind::Function
            };
            (
                name,
                kind,
                node.child_by_field_name(field::PARAMETERS),
                node.child_by_field_name(field::BODY),
            )
        }
        (
            Language::JavaScript | Language::TypeScript,
            kind::ARROW_FUNCTION
            | kind::FUNCTION_EXPRESSION
            | "function"
            | kind::GENERATOR_FUNCTION,
        ) => {
            // `const f = () => ...` takes the variable's name.
            let named = node
                .child_by_field_name(field::NAME)
                .or_else(|| {
                    node.parent()
                        .filter(|p| p.kind() == kind::VARIABLE_DECLARATOR)
                        .and_then(|p| p.child_by_field_name(field::NAME))
                })
                .map(|n| file.node_text(n).to_string());
            let params = node
                .child_by_field_name(field::PARAMETERS)
                .or_else(|| node.child_by_field_name(field::PARAMETER));
            let kind = if named.is_some() {
                FunctionKind::Function
            } else {
                FunctionKind::Lambda
            };
            (
                named.unwrap_or_else(lambda_name),
                kind,
                params,
                node.child_by_field_name(field::BODY),
            )
        }
        _ => return None,
    };
    let (signature, params) = match (lang, params_node) {
        (Language::Solidity, _) => {
            let mut cursor = node.walk();
            let ps: Vec<Node<'_>> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == kind::PARAMETER)
                .collect();
            let sig = format!(
                "({})",
                ps.iter()
                    .map(|p| collapse_ws(file.node_text(*p)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let names = ps
                .iter()
                .filter_map(|p| {
                    p.child_by_field_name(field::NAME)
                        .map(|n| file.node_text(n).to_string())
                })
                .collect();
            (sig, names)
        }
        (_, Some(p)) => {
            let text = collapse_ws(file.node_text(p));
            let sig = if text.starts_with('(') {
                text
            } else {
                format!("({text})")
            };
            (sig, parameter_names(file, p))
        }
        (_, None) => ("()".to_string(), Vec::new()),
    };
    let name = join(sep, &scope.path, &simple);
    let simple_name = simple.rsplit(sep).next().unwrap_or(&simple).to_string();
    let class = match lang {
        Language::Cpp if simple.contains("::") => {
            let (_, extra) = split_cpp_qualified(&simple);
            Some(join(sep, &scope.path, &extra))
        }
        _ if in_class => scope.class.clone(),
        _ => None,
    };
    let container = if scope.path.is_empty() {
        None
    } else {
        Some(scope.path.clone())
    };
    Some(Function {
        name,
        simple_name,
        class,
        container,
        kind,
        signature,
        params,
        node,
        body,
        start_line: line(),
        end_line: file.line_of(node.end_byte().saturating_sub(1).max(node.start_byte())),
    })
}

/// Unwraps pointer/reference/parenthesised declarators down to the function declarator.
fn find_function_declarator(mut node: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..64 {
        match node.kind() {
            kind::FUNCTION_DECLARATOR => return Some(node),
            kind::POINTER_DECLARATOR
            | kind::REFERENCE_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR => {
                node = node
                    .child_by_field_name(field::DECLARATOR)
                    .or_else(|| node.named_child(node.named_child_count().saturating_sub(1)))?;
            }
            _ => return None,
        }
    }
    None
}

/// Splits `A::B::f` into (`f`, `A::B`); template arguments in qualifiers are kept.
fn split_cpp_qualified(raw: &str) -> (String, String) {
    match raw.rfind("::") {
        Some(i) if !raw[i + 2..].is_empty() => (
            raw[i + 2..].to_string(),
            raw[..i].trim_start_matches("::").to_string(),
        ),
        _ => (raw.to_string(), String::new()),
    }
}

/// Names declared by a parameter list node (best effort across grammars).
fn parameter_names(file: &ParsedFile, params: Node<'_>) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor = params.walk();
    if params.kind() == kind::IDENTIFIER {
        // JS single-parameter arrow function `x => x`.
        return vec![file.node_text(params).to_string()];
    }
    for p in params.named_children(&mut cursor) {
        if p.kind() == kind::COMMENT {
            continue;
        }
        if let Some(n) = declared_identifier(file, p) {
            names.push(n);
        } else if p.kind() != kind::VARIADIC_PARAMETER || file.node_text(p).trim() != "..." {
            names.push(String::new());
        }
    }
    names
}

/// The identifier a parameter declares (drilling through declarators and defaults).
fn declared_identifier(file: &ParsedFile, mut node: Node<'_>) -> Option<String> {
    for _ in 0..32 {
        match node.kind() {
            kind::IDENTIFIER
            | kind::FIELD_IDENTIFIER
            | kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => {
                return Some(file.node_text(node).to_string())
            }
            _ => {}
        }
        let next = node
            .child_by_field_name(field::NAME)
            .or_else(|| node.child_by_field_name(field::DECLARATOR))
            .or_else(|| node.child_by_field_name(field::PATTERN))
            .or_else(|| node.child_by_field_name(field::LEFT))
            .or_else(|| {
                let mut c = node.walk();
                let found = node.named_children(&mut c).find(|c| {
                    matches!(
                        c.kind(),
                        kind::IDENTIFIER
                            | kind::LIST_SPLAT_PATTERN
                            | kind::DICTIONARY_SPLAT_PATTERN
                    )
                });
                found
            });
        node = next?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scope_kind_is_a_kind_of_its_grammar() {
        for lang in Language::ALL {
            let g = lang.grammar();
            for k in scope_kinds(lang) {
                // JavaScript has no abstract classes; the list is shared with TypeScript.
                if lang == Language::JavaScript && *k == kind::ABSTRACT_CLASS_DECLARATION {
                    continue;
                }
                assert_ne!(g.id_for_node_kind(k, true), 0, "{lang:?}: no kind {k}");
            }
        }
    }

    fn names(lang: Language, src: &str) -> Vec<(String, String)> {
        let f = ParsedFile::parse(lang, src);
        collect_functions(&f)
            .into_iter()
            .map(|x| (x.name, x.signature))
            .collect()
    }

    #[test]
    fn python_qualified_names() {
        let src = "class Report:\n    def render(self):\n        def helper(x):\n            return x\n        return helper(1)\n\ndef main(a, b=2, *args):\n    f = lambda y: y\n";
        assert_eq!(
            names(Language::Python, src),
            vec![
                ("Report.render".into(), "(self)".into()),
                ("Report.render.helper".into(), "(x)".into()),
                ("main".into(), "(a, b=2, *args)".into()),
                ("main.<lambda@8>".into(), "(y)".into()),
            ]
        );
        let f = ParsedFile::parse(Language::Python, src);
        let fs = collect_functions(&f);
        assert_eq!(fs[0].call_arity(), 0);
        assert_eq!(fs[0].class.as_deref(), Some("Report"));
        assert_eq!(fs[1].class, None);
        assert_eq!(fs[2].params, vec!["a", "b", "args"]);
    }

    #[test]
    fn java_nested_classes_and_overloads() {
        let src = "class Outer { class Inner { void m(int a) {} void m(String s, int b) {} } Outer() {} }";
        assert_eq!(
            names(Language::Java, src),
            vec![
                ("Outer.Inner.m".into(), "(int a)".into()),
                ("Outer.Inner.m".into(), "(String s, int b)".into()),
                ("Outer.Outer".into(), "()".into()),
            ]
        );
    }

    #[test]
    fn cpp_namespaces_and_out_of_class_definitions() {
        let src = "namespace ns { int f(int x) { return x; } struct S { void g() {} }; }\nvoid ns::S::h(int a, char *b) {}\nint *p(void) { return 0; }\n";
        assert_eq!(
            names(Language::Cpp, src),
            vec![
                ("ns::f".into(), "(int x)".into()),
                ("ns::S::g".into(), "()".into()),
                ("ns::S::h".into(), "(int a, char *b)".into()),
                ("p".into(), "(void)".into()),
            ]
        );
    }

    #[test]
    fn solidity_contract_members() {
        let src = "contract Bank { modifier onlyOwner() { _; } constructor() {} function pay(address to, uint v) public {} receive() external payable {} }";
        assert_eq!(
            names(Language::Solidity, src),
            vec![
                ("Bank.onlyOwner".into(), "()".into()),
                ("Bank.constructor".into(), "()".into()),
                ("Bank.pay".into(), "(address to, uint v)".into()),
                ("Bank.receive".into(), "()".into()),
            ]
        );
    }

    #[test]
    fn c_functions_with_pointer_returns() {
        let src = "static char *dup(const char *s) { return 0; }\nint main(int argc, char **argv) { return 0; }\n";
        let f = ParsedFile::parse(Language::C, src);
        let fs = collect_functions(&f);
        assert_eq!(fs.len(), 2);
        assert_eq!(fs[0].name, "dup");
        assert_eq!(fs[1].params, vec!["argc", "argv"]);
        assert_eq!((fs[1].start_line, fs[1].end_line), (2, 2));
    }
}
