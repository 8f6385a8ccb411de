//! Fact extraction: one iterative walk over a subtree (a test body, a setUp method, a helper)
//! collecting the calls, object creations, identifiers, literals, assertions and assignments
//! the rules of [`super::rules`] look at. Pure; never panics; bounded (at most
//! [`MAX_FACTS`] facts of each kind, strings truncated); polls [`Cancel`].

use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, Language, ParsedFile};
use tree_sitter::Node;

/// At most this many facts of each kind are kept per walk (hostile input).
pub const MAX_FACTS: usize = 20_000;
/// String literals and argument texts are truncated to this many bytes.
const MAX_TEXT: usize = 240;
/// Receivers longer than this are not tokenised (only their last identifier is kept).
const MAX_RECEIVER: usize = 200;
/// The walk polls the cancel flag every this many nodes.
const POLL_EVERY: usize = 4096;

/// A method or function call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Identifier tokens of the receiver (`Thread` for `Thread.sleep`, `[TimeUnit, SECONDS]`
    /// for `TimeUnit.SECONDS.sleep`); empty for a bare call.
    pub receiver: Vec<String>,
    pub name: String,
    /// Number of arguments.
    pub nargs: usize,
    pub line: usize,
    /// Inside a loop of the walked subtree.
    pub in_loop: bool,
    /// Inside a try-with-resources header or a Python `with` item.
    pub managed: bool,
    /// The argument list as written (truncated).
    pub args: String,
    /// Kinds of the argument nodes (`decimal_floating_point_literal`, `string_literal`, ...).
    pub arg_kinds: Vec<&'static str>,
}

/// An object creation (`new T(...)` in Java; a call of a capitalised name in Python).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct New {
    /// The simple type name (`HashMap` for `new java.util.HashMap<>()`).
    pub ty: String,
    pub nargs: usize,
    pub line: usize,
    pub managed: bool,
}

/// An assignment whose target is not a plain local.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// The target as written (`Config.DEBUG`, `counter`, `cls.cache`).
    pub target: String,
    /// Identifier tokens of the target.
    pub tokens: Vec<String>,
    pub line: usize,
}

/// An assertion (a call named `assert*`, `fail*`, `verify*`, `expect*`, `check*`, or a
/// Python/Java `assert` statement) with the kinds of facts found inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    pub line: usize,
    pub name: String,
    /// The text (truncated).
    pub text: String,
    /// Contains a relational comparison (`<`, `<=`, `>`, `>=`, `isLessThan`, `lessThan`, ...).
    pub relational: bool,
    /// Contains a floating-point literal.
    pub float_literal: bool,
    /// Contains a tolerance (`delta` argument, `closeTo`, `within`, `approx`, `isclose`,
    /// `assertAlmostEqual`, ...).
    pub tolerance: bool,
    /// Compares with `==`/`assertEquals`/`isEqualTo`/`assertEqual`.
    pub equality: bool,
    pub nargs: usize,
}

/// Everything one walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub calls: Vec<Call>,
    pub news: Vec<New>,
    /// Identifier-like tokens (identifiers, type identifiers, field names) with lines.
    pub idents: Vec<(String, usize)>,
    /// String literal contents (truncated) with lines.
    pub strings: Vec<(String, usize)>,
    pub assertions: Vec<Assertion>,
    pub writes: Vec<Write>,
    /// Python `global` statements: (names, line).
    pub globals: Vec<(String, usize)>,
    /// Lines of `synchronized` blocks (Java).
    pub synchronized: Vec<usize>,
    /// Names declared locally (Java local variables, parameters, loop and catch variables;
    /// Python names assigned as plain identifiers and parameters).
    pub locals: Vec<String>,
    /// The walk stopped early (cancelled or a cap reached).
    pub truncated: bool,
}

impl Facts {
    /// Appends another walk's facts (context: setUp, helpers).
    pub fn extend(&mut self, other: Facts) {
        self.calls.extend(other.calls);
        self.news.extend(other.news);
        self.idents.extend(other.idents);
        self.strings.extend(other.strings);
        self.assertions.extend(other.assertions);
        self.writes.extend(other.writes);
        self.globals.extend(other.globals);
        self.synchronized.extend(other.synchronized);
        self.locals.extend(other.locals);
        self.truncated |= other.truncated;
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Identifier tokens of a short expression text.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|t| !t.is_empty() && !t.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

fn receiver_tokens(text: &str) -> Vec<String> {
    if text.len() <= MAX_RECEIVER {
        tokens(text)
    } else {
        // Only the tail of a long chain matters (`...).foo`).
        let tail = &text[text
            .char_indices()
            .rev()
            .nth(MAX_RECEIVER / 2)
            .map(|(i, _)| i)
            .unwrap_or(0)..];
        tokens(tail).into_iter().rev().take(1).collect()
    }
}

/// Is `name` an assertion-like call?
pub fn is_assert_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("assert")
        || lower.starts_with("fail")
        || lower == "verify"
        || lower == "expect"
        || lower.starts_with("check")
        || lower == "assertthat"
}

const RELATIONAL_NAMES: [&str; 14] = [
    "isLessThan",
    "isLessThanOrEqualTo",
    "isGreaterThan",
    "isGreaterThanOrEqualTo",
    "isBetween",
    "isStrictlyBetween",
    "lessThan",
    "lessThanOrEqualTo",
    "greaterThan",
    "greaterThanOrEqualTo",
    "assertLess",
    "assertLessEqual",
    "assertGreater",
    "assertGreaterEqual",
];

const TOLERANCE_NAMES: [&str; 10] = [
    "closeTo",
    "within",
    "offset",
    "isCloseTo",
    "withPercentage",
    "approx",
    "isclose",
    "assertAlmostEqual",
    "assertNotAlmostEqual",
    "allclose",
];

fn is_float_kind(kind: &str) -> bool {
    matches!(
        kind,
        kind::DECIMAL_FLOATING_POINT_LITERAL | kind::HEX_FLOATING_POINT_LITERAL | kind::FLOAT
    )
}

/// A float literal: a float kind, or a JavaScript `number` written with a fraction.
fn is_float_literal(file: &ParsedFile, node: Node<'_>) -> bool {
    is_float_kind(node.kind())
        || (node.kind() == kind::NUMBER && {
            let t = file.node_text(node);
            !t.starts_with("0x") && !t.starts_with("0X") && t.contains('.')
        })
}

fn is_loop_kind(kind: &str) -> bool {
    matches!(
        kind,
        kind::FOR_STATEMENT
            | kind::ENHANCED_FOR_STATEMENT
            | kind::WHILE_STATEMENT
            | kind::DO_STATEMENT
            | kind::FOR_IN_STATEMENT
    )
}

/// JavaScript assertion calls: `expect(..)`, `assert(..)`, `assert.equal(..)`,
/// `chai.assert.deepEqual(..)`, `t.is(..)` is not one (no fixed receiver name).
fn is_js_assertion(name: &str, receiver: &[String]) -> bool {
    is_assert_name(name)
        || receiver
            .first()
            .is_some_and(|r| r == "assert" || r == "chai")
}

/// Summary of an assertion subtree (bounded walk).
fn summarise_assertion(file: &ParsedFile, node: Node<'_>, name: &str, nargs: usize) -> Assertion {
    let text = file.node_text(node);
    let mut relational = RELATIONAL_NAMES.contains(&name);
    let mut float_literal = false;
    let mut tolerance = TOLERANCE_NAMES.contains(&name);
    let mut equality = matches!(
        name,
        "assertEquals" | "assertEqual" | "assertNotEquals" | "assertNotEqual" | "assertSame"
    );
    let mut stack = vec![node];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 2_000 {
            break;
        }
        let kind = n.kind();
        if is_float_literal(file, n) {
            float_literal = true;
        }
        match kind {
            "<" | "<=" | ">" | ">=" => relational = true,
            "==" | "!=" => equality = true,
            kind::IDENTIFIER | kind::PROPERTY_IDENTIFIER => {
                let t = file.node_text(n);
                if RELATIONAL_NAMES.contains(&t) {
                    relational = true;
                }
                if TOLERANCE_NAMES.contains(&t) {
                    tolerance = true;
                }
                if matches!(
                    t,
                    "isEqualTo"
                        | "equalTo"
                        | "is"
                        | "isNotEqualTo"
                        | "toBe"
                        | "toEqual"
                        | "toStrictEqual"
                        | "equal"
                        | "strictEqual"
                        | "deepEqual"
                        | "deepStrictEqual"
                        | "eql"
                ) {
                    equality = true;
                }
                if matches!(t, "toBeCloseTo" | "closeTo" | "approximately") {
                    tolerance = true;
                }
                if matches!(
                    t,
                    "toBeLessThan"
                        | "toBeLessThanOrEqual"
                        | "toBeGreaterThan"
                        | "toBeGreaterThanOrEqual"
                        | "below"
                        | "above"
                        | "least"
                        | "most"
                        | "within"
                ) {
                    relational = true;
                }
            }
            _ => {}
        }
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            stack.push(c);
        }
    }
    Assertion {
        line: file.line_of(node.start_byte()),
        name: name.to_string(),
        text: truncate(text, MAX_TEXT),
        relational,
        float_literal,
        tolerance,
        equality,
        nargs,
    }
}

fn arg_info(file: &ParsedFile, args: Option<Node<'_>>) -> (usize, String, Vec<&'static str>) {
    match args {
        None => (0, String::new(), Vec::new()),
        Some(a) => {
            let mut cursor = a.walk();
            let kinds: Vec<&'static str> = a
                .named_children(&mut cursor)
                .filter(|c| c.kind() != kind::COMMENT && c.kind() != kind::LINE_COMMENT)
                .map(|c| c.kind())
                .collect();
            (kinds.len(), truncate(file.node_text(a), MAX_TEXT), kinds)
        }
    }
}

/// Records a call, and the assertion it begins (`assertion`: the subtree to summarise) when
/// it is one; returns whether it was an assertion.
#[allow(clippy::too_many_arguments)]
fn record_call(
    file: &ParsedFile,
    facts: &mut Facts,
    receiver: Vec<String>,
    name: String,
    arguments: Option<Node<'_>>,
    assertion: Option<Node<'_>>,
    line: usize,
    in_loop: bool,
    managed: bool,
) -> bool {
    let (nargs, args, arg_kinds) = arg_info(file, arguments);
    if let Some(a) = assertion {
        facts
            .assertions
            .push(summarise_assertion(file, a, &name, nargs));
    }
    facts.calls.push(Call {
        receiver,
        name,
        nargs,
        line,
        in_loop,
        managed,
        args,
        arg_kinds,
    });
    assertion.is_some()
}

/// Walks `root` and collects its facts. `skip` lists byte ranges of nested definitions that
/// must not be attributed to this walk (none for a test body).
pub fn collect(file: &ParsedFile, root: Node<'_>, cancel: &Cancel) -> Facts {
    let mut facts = Facts::default();
    let lang = file.language;
    // (node, in_loop, managed, in_assertion)
    let mut stack: Vec<(Node<'_>, bool, bool, bool)> = vec![(root, false, false, false)];
    let mut visited = 0usize;
    while let Some((node, in_loop, managed, in_assert)) = stack.pop() {
        visited += 1;
        if visited.is_multiple_of(POLL_EVERY) && cancel.is_cancelled() {
            facts.truncated = true;
            break;
        }
        if facts.idents.len() >= MAX_FACTS
            || facts.calls.len() >= MAX_FACTS
            || facts.strings.len() >= MAX_FACTS
        {
            facts.truncated = true;
            break;
        }
        let kind = node.kind();
        let line = file.line_of(node.start_byte());
        let mut child_loop = in_loop || is_loop_kind(kind);
        let mut child_managed = managed
            || matches!(
                kind,
                kind::RESOURCE_SPECIFICATION | kind::RESOURCE | kind::WITH_ITEM | kind::WITH_CLAUSE
            );
        let mut child_assert = in_assert;
        match (lang, kind) {
            (Language::Java, kind::METHOD_INVOCATION) => {
                let name = node
                    .child_by_field_name(field::NAME)
                    .map(|n| file.node_text(n).to_string())
                    .unwrap_or_default();
                let receiver = node
                    .child_by_field_name(field::OBJECT)
                    .map(|o| receiver_tokens(file.node_text(o)))
                    .unwrap_or_default();
                // The whole statement: `assertThat(x).isEqualTo(y)` is one assertion.
                let assertion =
                    (!in_assert && is_assert_name(&name)).then(|| enclosing_statement(node));
                child_assert |= record_call(
                    file,
                    &mut facts,
                    receiver,
                    name,
                    node.child_by_field_name(field::ARGUMENTS),
                    assertion,
                    line,
                    in_loop,
                    managed,
                );
            }
            (Language::Java, kind::OBJECT_CREATION_EXPRESSION) => {
                let ty = node
                    .child_by_field_name(field::TYPE)
                    .map(|t| simple_type(file.node_text(t)))
                    .unwrap_or_default();
                let (nargs, _, _) = arg_info(file, node.child_by_field_name(field::ARGUMENTS));
                facts.news.push(New {
                    ty,
                    nargs,
                    line,
                    managed,
                });
            }
            (Language::Java, kind::ASSERT_STATEMENT)
            | (Language::Python, kind::ASSERT_STATEMENT)
                if !in_assert =>
            {
                facts
                    .assertions
                    .push(summarise_assertion(file, node, "assert", 1));
                child_assert = true;
            }
            (Language::Java, kind::ASSIGNMENT_EXPRESSION) => {
                if let Some(left) = node.child_by_field_name(field::LEFT) {
                    let t = file.node_text(left);
                    facts.writes.push(Write {
                        target: truncate(t, MAX_TEXT),
                        tokens: receiver_tokens(t),
                        line,
                    });
                }
            }
            (Language::Java, kind::SYNCHRONIZED_STATEMENT) => facts.synchronized.push(line),
            (
                Language::Java,
                kind::LOCAL_VARIABLE_DECLARATION
                | kind::FORMAL_PARAMETER
                | kind::CATCH_FORMAL_PARAMETER
                | kind::ENHANCED_FOR_STATEMENT
                | kind::RESOURCE
                | kind::INFERRED_PARAMETERS,
            ) => {
                let mut cursor = node.walk();
                for c in node.named_children(&mut cursor) {
                    let name = match c.kind() {
                        kind::VARIABLE_DECLARATOR => c.child_by_field_name(field::NAME),
                        kind::IDENTIFIER => Some(c),
                        _ => None,
                    };
                    if let Some(n) = name {
                        facts.locals.push(file.node_text(n).to_string());
                    }
                }
                if let Some(n) = node.child_by_field_name(field::NAME) {
                    facts.locals.push(file.node_text(n).to_string());
                }
            }
            (Language::Java, kind::LAMBDA_EXPRESSION) => {
                if let Some(p) = node.child_by_field_name(field::PARAMETERS) {
                    if p.kind() == kind::IDENTIFIER {
                        facts.locals.push(file.node_text(p).to_string());
                    }
                }
            }
            (Language::Python, kind::CALL) => {
                let func = node.child_by_field_name(field::FUNCTION);
                let (receiver, name) = match func {
                    Some(f) if f.kind() == kind::ATTRIBUTE => (
                        f.child_by_field_name(field::OBJECT)
                            .map(|o| receiver_tokens(file.node_text(o)))
                            .unwrap_or_default(),
                        f.child_by_field_name(field::ATTRIBUTE)
                            .map(|a| file.node_text(a).to_string())
                            .unwrap_or_default(),
                    ),
                    Some(f) if f.kind() == kind::IDENTIFIER => {
                        (Vec::new(), file.node_text(f).to_string())
                    }
                    _ => (Vec::new(), String::new()),
                };
                let (nargs, args, arg_kinds) =
                    arg_info(file, node.child_by_field_name(field::ARGUMENTS));
                if !in_assert && is_assert_name(&name) {
                    facts
                        .assertions
                        .push(summarise_assertion(file, node, &name, nargs));
                    child_assert = true;
                }
                if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    facts.news.push(New {
                        ty: name.clone(),
                        nargs,
                        line,
                        managed,
                    });
                }
                facts.calls.push(Call {
                    receiver,
                    name,
                    nargs,
                    line,
                    in_loop,
                    managed,
                    args,
                    arg_kinds,
                });
            }
            (Language::Python, kind::ASSIGNMENT | kind::AUGMENTED_ASSIGNMENT) => {
                if let Some(left) = node.child_by_field_name(field::LEFT) {
                    let t = file.node_text(left);
                    if left.kind() == kind::IDENTIFIER {
                        facts.locals.push(t.to_string());
                    } else {
                        facts.writes.push(Write {
                            target: truncate(t, MAX_TEXT),
                            tokens: receiver_tokens(t),
                            line,
                        });
                    }
                }
            }
            (Language::Python, kind::GLOBAL_STATEMENT) => {
                let mut cursor = node.walk();
                for c in node.named_children(&mut cursor) {
                    facts.globals.push((file.node_text(c).to_string(), line));
                }
            }
            (Language::JavaScript | Language::TypeScript, kind::CALL_EXPRESSION) => {
                let func = node.child_by_field_name(field::FUNCTION);
                let (receiver, name) = match func {
                    Some(f) if f.kind() == kind::MEMBER_EXPRESSION => (
                        // The object a chain starts from: `request(app).get("/").set(..)`
                        // is called on what `request(..)` returns, named `request`.
                        f.child_by_field_name(field::OBJECT)
                            .map(|o| {
                                let t = file.node_text(o);
                                receiver_tokens(t.split('(').next().unwrap_or(t))
                            })
                            .unwrap_or_default(),
                        f.child_by_field_name(field::PROPERTY)
                            .map(|a| file.node_text(a).to_string())
                            .unwrap_or_default(),
                    ),
                    Some(f) if f.kind() == kind::IDENTIFIER => {
                        (Vec::new(), file.node_text(f).to_string())
                    }
                    _ => (Vec::new(), String::new()),
                };
                let assertion = (!in_assert && is_js_assertion(&name, &receiver))
                    .then(|| enclosing_statement(node));
                child_assert |= record_call(
                    file,
                    &mut facts,
                    receiver,
                    name,
                    node.child_by_field_name(field::ARGUMENTS),
                    assertion,
                    line,
                    in_loop,
                    managed,
                );
            }
            (Language::JavaScript | Language::TypeScript, kind::NEW_EXPRESSION) => {
                let ty = node
                    .child_by_field_name(field::CONSTRUCTOR)
                    .map(|t| simple_type(file.node_text(t)))
                    .unwrap_or_default();
                let (nargs, _, _) = arg_info(file, node.child_by_field_name(field::ARGUMENTS));
                facts.news.push(New {
                    ty,
                    nargs,
                    line,
                    managed,
                });
            }
            (
                Language::JavaScript | Language::TypeScript,
                kind::ASSIGNMENT_EXPRESSION
                | kind::AUGMENTED_ASSIGNMENT_EXPRESSION
                | kind::UPDATE_EXPRESSION,
            ) => {
                let target = node
                    .child_by_field_name(field::LEFT)
                    .or_else(|| node.child_by_field_name(field::ARGUMENT));
                if let Some(left) = target {
                    let t = file.node_text(left);
                    facts.writes.push(Write {
                        target: truncate(t, MAX_TEXT),
                        tokens: receiver_tokens(t),
                        line,
                    });
                }
            }
            (
                Language::JavaScript | Language::TypeScript,
                kind::VARIABLE_DECLARATOR | kind::FUNCTION_DECLARATION | kind::CLASS_DECLARATION,
            ) => {
                if let Some(n) = node.child_by_field_name(field::NAME) {
                    facts.locals.push(truncate(file.node_text(n), MAX_TEXT));
                }
            }
            (Language::JavaScript | Language::TypeScript, kind::STRING | kind::TEMPLATE_STRING) => {
                let t = file.node_text(node);
                facts.strings.push((truncate(t, MAX_TEXT), line));
            }
            (
                Language::JavaScript | Language::TypeScript,
                kind::PROPERTY_IDENTIFIER | kind::SHORTHAND_PROPERTY_IDENTIFIER,
            ) => {
                facts
                    .idents
                    .push((truncate(file.node_text(node), MAX_TEXT), line));
            }
            (_, kind::IDENTIFIER | kind::TYPE_IDENTIFIER | kind::FIELD_IDENTIFIER) => {
                facts
                    .idents
                    .push((truncate(file.node_text(node), MAX_TEXT), line));
            }
            (Language::Java, kind::STRING_LITERAL) | (Language::Python, kind::STRING) => {
                let t = file.node_text(node);
                facts.strings.push((truncate(t, MAX_TEXT), line));
            }
            _ => {}
        }
        // Nested definitions (Java lambdas and anonymous classes) are part of the test; Python
        // nested functions too. Loops end at a nested function boundary.
        if matches!(
            kind,
            kind::LAMBDA_EXPRESSION
                | kind::FUNCTION_DEFINITION
                | kind::LAMBDA
                | kind::CLASS_BODY
                | kind::ARROW_FUNCTION
                | kind::FUNCTION_EXPRESSION
                | kind::FUNCTION_DECLARATION
        ) && node != root
        {
            child_loop = false;
            child_managed = false;
        }
        if (kind == kind::ARGUMENT_LIST || kind == kind::ARGUMENTS) && in_assert {
            child_assert = true;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for c in children.into_iter().rev() {
            stack.push((c, child_loop, child_managed, child_assert));
        }
    }
    facts
}

/// The innermost statement around `node` (at most 64 levels up), or `node` itself.
fn enclosing_statement(node: Node<'_>) -> Node<'_> {
    let mut cur = node;
    for _ in 0..64 {
        if cur.kind().ends_with(kind::STATEMENT) || cur.kind() == kind::LOCAL_VARIABLE_DECLARATION {
            return cur;
        }
        match cur.parent() {
            Some(p)
                if p.kind() != kind::BLOCK
                    && p.kind() != kind::CLASS_BODY
                    && p.kind() != kind::STATEMENT_BLOCK =>
            {
                cur = p
            }
            Some(_) | None => return cur,
        }
    }
    node
}

/// `java.util.HashMap<K, V>` -> `HashMap`.
pub fn simple_type(text: &str) -> String {
    let base = text.split('<').next().unwrap_or(text).trim();
    base.rsplit('.').next().unwrap_or(base).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java_facts(body: &str) -> Facts {
        let file = ParsedFile::parse(
            Language::Java,
            format!("class T {{ void t() {{ {body} }} }}"),
        );
        collect(&file, file.root(), &Cancel::never())
    }

    #[test]
    fn receiver_tokens_of_a_chain() {
        let f = java_facts("TimeUnit.SECONDS.sleep(1);");
        assert_eq!(f.calls[0].receiver, vec!["TimeUnit", "SECONDS"]);
        assert_eq!(f.calls[0].name, "sleep");
    }

    #[test]
    fn assertion_with_float_and_no_delta() {
        let f = java_facts("assertEquals(0.3, x);");
        assert_eq!(f.assertions.len(), 1);
        assert!(f.assertions[0].float_literal);
        assert!(!f.assertions[0].tolerance);
        assert_eq!(f.assertions[0].nargs, 2);
    }

    #[test]
    fn try_with_resources_is_managed() {
        let f = java_facts("try (FileInputStream in = new FileInputStream(\"a\")) { in.read(); }");
        assert!(f.news.iter().all(|n| n.managed));
    }

    #[test]
    fn simple_type_strips_packages_and_generics() {
        assert_eq!(simple_type("java.util.HashMap<String, Integer>"), "HashMap");
        assert_eq!(simple_type("Random"), "Random");
    }
}
