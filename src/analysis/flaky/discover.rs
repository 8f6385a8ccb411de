//! Test discovery and test context.
//!
//! Tests:
//! * Java: methods annotated `@Test` (JUnit 4/5, TestNG), `@ParameterizedTest`,
//!   `@RepeatedTest`, `@TestFactory`, `@TestTemplate`, `@Theory`, `@Property`; JUnit 3:
//!   methods `test*` of a class extending `*TestCase`.
//! * Python: pytest functions `test*` at module level, methods `test*` of classes named
//!   `Test*`, and methods `test*` of classes deriving from `*TestCase`.
//! * JavaScript and TypeScript (Jest, Mocha, Vitest, Jasmine): the function given to
//!   `it(..)`, `test(..)`, `specify(..)` (and their `.only`, `.concurrent`, `.each(..)`
//!   forms; `.skip`/`.todo` are not run), named by the titles of the enclosing `describe`
//!   blocks and its own title. Its "class" is the innermost `describe`/`context`/`suite`
//!   callback; a numeric third argument (`it("x", fn, 5000)`) is a test-level timeout.
//!
//! Context of a test (facts that count at half weight): setUp methods of its class
//! (`@Before`, `@BeforeEach`, `@BeforeClass`, `@BeforeAll`, TestNG `@BeforeMethod`/
//! `@BeforeClass`/`@BeforeTest`/`@BeforeSuite`, `setUp`, `setUpClass`, `setup_method`,
//! `setup_class`, `setup`, module-level `setup_module`/`setup_function`; JavaScript
//! `beforeEach`/`beforeAll`/`before` callbacks of the same `describe` block), pytest fixtures of
//! the file named by its parameters, helper functions of the file it calls (by simple name,
//! two levels deep, at most [`MAX_HELPERS`]), and the field initialisers / class-level
//! assignments of its class.

use super::facts::{collect, simple_type, Facts};
use super::rules::TestFacts;
use super::FlakyOptions;
use crate::syntax::functions::{collect_functions, Function, FunctionKind};
use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// At most this many helper functions are added to a test's context.
pub const MAX_HELPERS: usize = 32;
/// Parent chains are followed at most this far.
const MAX_UP: usize = 256;

const JAVA_TEST_ANNOTATIONS: [&str; 8] = [
    "Test",
    "ParameterizedTest",
    "RepeatedTest",
    "TestFactory",
    "TestTemplate",
    "Theory",
    "Property",
    "Fuzz",
];

const JAVA_SETUP_ANNOTATIONS: [&str; 8] = [
    "Before",
    "BeforeEach",
    "BeforeClass",
    "BeforeAll",
    "BeforeMethod",
    "BeforeTest",
    "BeforeSuite",
    "BeforeGroups",
];

const PY_SETUP_NAMES: [&str; 8] = [
    "setUp",
    "setUpClass",
    "setup_method",
    "setup_class",
    "setup",
    "asyncSetUp",
    "setup_module",
    "setup_function",
];

/// The functions of a file with what discovery needs.
pub struct FileIndex<'f> {
    pub file: &'f ParsedFile,
    pub functions: Vec<Function<'f>>,
    /// Annotation / decorator texts of each function, with lines.
    annotations: Vec<Vec<(String, usize)>>,
    /// The class node of each function (innermost class-like ancestor), if any.
    classes: Vec<Option<Node<'f>>>,
    /// Names of shared mutable state (static fields, module-level mutables).
    shared_names: Vec<String>,
    /// Names of Java instance fields (fresh per test in JUnit/TestNG: not shared).
    instance_names: Vec<String>,
    /// JavaScript: each function's role in the test framework.
    js_roles: Vec<Option<JsRole>>,
    /// The name a test is reported under (JavaScript: `suite > title`).
    display: Vec<String>,
}

/// How a JavaScript function is used by a test framework.
#[derive(Debug, Clone, PartialEq, Eq)]
enum JsRole {
    /// The body of `it`/`test`/`specify`: its title, and a timeout given as third argument.
    Test(String, Option<String>),
    /// `beforeEach`/`beforeAll`/`before` (Mocha) callbacks; `true` for per-test hooks.
    Setup(bool),
    /// A `describe`/`context`/`suite` callback, with its title.
    Suite(String),
}

const JS_TEST_CALLS: [&str; 3] = ["it", "test", "specify"];
const JS_SETUP_CALLS: [&str; 4] = ["beforeEach", "beforeAll", "before", "setup"];
const JS_SUITE_CALLS: [&str; 3] = ["describe", "context", "suite"];
/// Modifiers that still run the test (`skip`, `todo`, `failing` do not run it as written).
const JS_RUN_MODIFIERS: [&str; 4] = ["only", "concurrent", "each", "serial"];

/// The role of a JavaScript function node: the framework call it is an argument of.
fn js_role(file: &ParsedFile, func: Node<'_>) -> Option<JsRole> {
    let args = func.parent().filter(|p| p.kind() == kind::ARGUMENTS)?;
    let call = args
        .parent()
        .filter(|c| c.kind() == kind::CALL_EXPRESSION)?;
    let mut callee = call.child_by_field_name(field::FUNCTION)?;
    // `it.each(table)("title", fn)`: the callee is itself a call.
    if callee.kind() == kind::CALL_EXPRESSION {
        callee = callee.child_by_field_name(field::FUNCTION)?;
    }
    let text: String = file.node_text(callee).split_whitespace().collect();
    if text.len() > 64 {
        return None;
    }
    let mut parts = text.split('.');
    let base = parts.next()?;
    let mods: Vec<&str> = parts.collect();
    if !mods.iter().all(|m| JS_RUN_MODIFIERS.contains(m)) {
        return None;
    }
    let mut cursor = args.walk();
    let list: Vec<Node<'_>> = args
        .named_children(&mut cursor)
        .filter(|c| c.kind() != kind::COMMENT)
        .collect();
    let title = list
        .first()
        .filter(|t| matches!(t.kind(), kind::STRING | kind::TEMPLATE_STRING))
        .map(|t| {
            file.node_text(*t)
                .trim_matches(|c| c == '"' || c == '\'' || c == '`')
                .chars()
                .take(200)
                .collect::<String>()
        });
    let is_fn_arg = list.contains(&func);
    if !is_fn_arg {
        return None;
    }
    if JS_TEST_CALLS.contains(&base) {
        let title = title?;
        let timeout = list
            .iter()
            .skip_while(|c| **c != func)
            .nth(1)
            .filter(|c| c.kind() == kind::NUMBER)
            .map(|c| file.node_text(*c).to_string());
        return Some(JsRole::Test(title, timeout));
    }
    if JS_SETUP_CALLS.contains(&base) && mods.is_empty() {
        return Some(JsRole::Setup(base == "beforeEach" || base == "setup"));
    }
    if JS_SUITE_CALLS.contains(&base) {
        return Some(JsRole::Suite(title.unwrap_or_default()));
    }
    None
}

fn is_js(lang: Language) -> bool {
    matches!(lang, Language::JavaScript | Language::TypeScript)
}

/// The innermost `describe` callback around a JavaScript node.
fn js_suite<'t>(file: &ParsedFile, node: Node<'t>) -> Option<Node<'t>> {
    let mut cur = node.parent();
    for _ in 0..MAX_UP {
        let n = cur?;
        if matches!(
            n.kind(),
            kind::ARROW_FUNCTION | kind::FUNCTION_EXPRESSION | "function"
        ) {
            if let Some(JsRole::Suite(_)) = js_role(file, n) {
                return Some(n);
            }
        }
        cur = n.parent();
    }
    None
}

fn ancestor_class<'t>(node: Node<'t>, lang: Language) -> Option<Node<'t>> {
    let mut cur = node.parent();
    for _ in 0..MAX_UP {
        let n = cur?;
        match (lang, n.kind()) {
            (
                Language::Java,
                kind::CLASS_DECLARATION | kind::ENUM_DECLARATION | kind::RECORD_DECLARATION,
            )
            | (Language::Python, kind::CLASS_DEFINITION) => return Some(n),
            // A function between the method and the class: not a method of that class.
            (Language::Python, kind::FUNCTION_DEFINITION)
            | (Language::Java, kind::METHOD_DECLARATION | kind::LAMBDA_EXPRESSION) => return None,
            _ => cur = n.parent(),
        }
    }
    None
}

fn java_annotations(file: &ParsedFile, node: Node<'_>) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.kind() == kind::MODIFIERS {
            let mut c2 = child.walk();
            for m in child.children(&mut c2) {
                if matches!(m.kind(), kind::MARKER_ANNOTATION | kind::ANNOTATION) {
                    out.push((
                        file.node_text(m).chars().take(300).collect(),
                        file.line_of(m.start_byte()),
                    ));
                }
            }
        }
    }
    out
}

fn python_decorators(file: &ParsedFile, node: Node<'_>) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    if let Some(p) = node.parent() {
        if p.kind() == kind::DECORATED_DEFINITION {
            let mut cursor = p.walk();
            for d in p.children(&mut cursor) {
                if d.kind() == kind::DECORATOR {
                    out.push((
                        file.node_text(d).chars().take(300).collect(),
                        file.line_of(d.start_byte()),
                    ));
                }
            }
        }
    }
    out
}

fn annotation_name(text: &str) -> &str {
    let t = text.trim_start_matches('@').trim_start();
    let end = t
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(t.len());
    let full = &t[..end];
    full.rsplit('.').next().unwrap_or(full)
}

fn class_annotations(file: &ParsedFile, class: Node<'_>) -> Vec<(String, usize)> {
    match file.language {
        Language::Java => java_annotations(file, class),
        _ => python_decorators(file, class),
    }
}

impl<'f> FileIndex<'f> {
    pub fn new(file: &'f ParsedFile) -> FileIndex<'f> {
        let js = is_js(file.language);
        // JavaScript tests and hooks are anonymous callbacks; other lambdas are not tests.
        let functions: Vec<Function<'f>> = collect_functions(file)
            .into_iter()
            .filter(|f| {
                f.kind != FunctionKind::Lambda
                    || (js
                        && matches!(
                            js_role(file, f.node),
                            Some(JsRole::Test(..) | JsRole::Setup(_))
                        ))
            })
            .collect();
        let js_roles: Vec<Option<JsRole>> = functions
            .iter()
            .map(|f| if js { js_role(file, f.node) } else { None })
            .collect();
        let annotations = functions
            .iter()
            .zip(&js_roles)
            .map(|(f, role)| match file.language {
                Language::Java => java_annotations(file, f.node),
                _ if js => match role {
                    // A numeric third argument is the test's own time limit.
                    Some(JsRole::Test(_, Some(ms))) => {
                        vec![(format!("Timeout({ms})"), f.start_line)]
                    }
                    _ => Vec::new(),
                },
                _ => python_decorators(file, f.node),
            })
            .collect();
        let classes: Vec<Option<Node<'f>>> = functions
            .iter()
            .map(|f| {
                if js {
                    js_suite(file, f.node)
                } else {
                    ancestor_class(f.node, file.language)
                }
            })
            .collect();
        let display = functions
            .iter()
            .zip(&js_roles)
            .map(|(f, role)| match role {
                Some(JsRole::Test(title, _)) => {
                    let mut names = vec![title.clone()];
                    let mut suite = js_suite(file, f.node);
                    for _ in 0..MAX_UP {
                        let Some(s) = suite else { break };
                        if let Some(JsRole::Suite(t)) = js_role(file, s) {
                            names.push(t);
                        }
                        suite = js_suite(file, s);
                    }
                    names.reverse();
                    names.join(" > ")
                }
                _ => f.name.clone(),
            })
            .collect();
        let (mut shared_names, mut instance_names) = field_names(file);
        if js {
            // `let cart; beforeEach(() => { cart = new Cart(); })`: a fresh value per test.
            for (f, role) in functions.iter().zip(&js_roles) {
                if let Some(JsRole::Setup(true)) = role {
                    let facts = collect(file, f.body.unwrap_or(f.node), &Cancel::never());
                    for w in facts.writes.iter().filter(|w| w.tokens.len() == 1) {
                        shared_names.retain(|n| *n != w.tokens[0]);
                        instance_names.push(w.tokens[0].clone());
                    }
                }
            }
        }
        FileIndex {
            file,
            functions,
            annotations,
            classes,
            shared_names,
            instance_names,
            js_roles,
            display,
        }
    }

    fn class_text(&self, i: usize) -> Option<(String, String)> {
        let class = self.classes.get(i).copied().flatten()?;
        if is_js(self.file.language) {
            return match js_role(self.file, class) {
                Some(JsRole::Suite(t)) => Some((t, String::new())),
                _ => None,
            };
        }
        let name = class
            .child_by_field_name(field::NAME)
            .map(|n| self.file.node_text(n).to_string())
            .unwrap_or_default();
        let bases = match self.file.language {
            Language::Java => class
                .child_by_field_name(field::SUPERCLASS)
                .map(|n| self.file.node_text(n).to_string())
                .unwrap_or_default(),
            _ => class
                .child_by_field_name(field::SUPERCLASSES)
                .map(|n| self.file.node_text(n).to_string())
                .unwrap_or_default(),
        };
        Some((name, bases))
    }

    /// Is function `i` a test?
    pub fn is_test(&self, i: usize, options: &FlakyOptions) -> bool {
        let Some(f) = self.functions.get(i) else {
            return false;
        };
        if options.every_function_is_a_test {
            return matches!(f.kind, FunctionKind::Method | FunctionKind::Function);
        }
        let anns = &self.annotations[i];
        match self.file.language {
            Language::Java => {
                if f.kind != FunctionKind::Method {
                    return false;
                }
                if anns
                    .iter()
                    .any(|(a, _)| JAVA_TEST_ANNOTATIONS.contains(&annotation_name(a)))
                {
                    return true;
                }
                // JUnit 3.
                f.simple_name.starts_with("test")
                    && self
                        .class_text(i)
                        .is_some_and(|(_, bases)| simple_type(&bases).ends_with("TestCase"))
            }
            Language::Python => {
                if !f.simple_name.starts_with("test") {
                    return false;
                }
                match self.class_text(i) {
                    Some((name, bases)) => {
                        name.starts_with("Test")
                            || bases.contains("TestCase")
                            || bases.contains("unittest")
                    }
                    // Module level only (not nested in another function).
                    None => f.container.is_none(),
                }
            }
            Language::JavaScript | Language::TypeScript => {
                matches!(self.js_roles[i], Some(JsRole::Test(..)))
            }
            _ => false,
        }
    }

    /// The indices of the tests with their names, in document order.
    pub fn tests(&self, options: &FlakyOptions) -> Vec<(usize, &str)> {
        (0..self.functions.len())
            .filter(|&i| self.is_test(i, options))
            .map(|i| (i, self.display[i].as_str()))
            .collect()
    }

    fn is_setup(&self, i: usize) -> bool {
        let f = &self.functions[i];
        match self.file.language {
            Language::JavaScript | Language::TypeScript => {
                matches!(self.js_roles[i], Some(JsRole::Setup(_)))
            }
            Language::Java => {
                self.annotations[i]
                    .iter()
                    .any(|(a, _)| JAVA_SETUP_ANNOTATIONS.contains(&annotation_name(a)))
                    || f.simple_name == "setUp"
            }
            _ => PY_SETUP_NAMES.contains(&f.simple_name.as_str()),
        }
    }

    fn is_fixture(&self, i: usize) -> bool {
        self.annotations[i]
            .iter()
            .any(|(a, _)| annotation_name(a) == "fixture")
    }

    fn facts_of(&self, i: usize, cancel: &Cancel) -> Facts {
        let f = &self.functions[i];
        collect(self.file, f.body.unwrap_or(f.node), cancel)
    }

    /// Field declarations / class-level assignments of a class (not its methods).
    fn class_field_facts(&self, class: Node<'f>, cancel: &Cancel) -> Facts {
        let mut facts = Facts::default();
        let Some(body) = class.child_by_field_name(field::BODY) else {
            return facts;
        };
        let mut cursor = body.walk();
        let members: Vec<Node<'f>> = body.named_children(&mut cursor).collect();
        for m in members {
            let keep = match self.file.language {
                Language::Java => m.kind() == kind::FIELD_DECLARATION,
                // A `describe` block's own declarations (`let server;`).
                Language::JavaScript | Language::TypeScript => {
                    matches!(
                        m.kind(),
                        kind::LEXICAL_DECLARATION | kind::VARIABLE_DECLARATION
                    )
                }
                _ => m.kind() == kind::EXPRESSION_STATEMENT,
            };
            if keep {
                facts.extend(collect(self.file, m, cancel));
            }
        }
        facts
    }

    /// Facts of test `i`: its body, and its context (see the module docs).
    pub fn test_facts(&self, i: usize, cancel: &Cancel) -> TestFacts {
        let f = &self.functions[i];
        let own = self.facts_of(i, cancel);
        let class = self.classes[i];
        let mut context = Facts::default();
        let mut included: BTreeSet<usize> = BTreeSet::new();
        included.insert(i);
        // setUp of the same class (or module-level setup for module-level tests).
        let js = is_js(self.file.language);
        let encloses = |j: usize| -> bool {
            // JavaScript hooks run for every test of their `describe` block and nested ones.
            match self.classes[j] {
                None => true,
                Some(c) => {
                    c.start_byte() <= f.node.start_byte() && f.node.end_byte() <= c.end_byte()
                }
            }
        };
        for j in 0..self.functions.len() {
            let same = if js {
                encloses(j)
            } else {
                self.classes[j] == class
            };
            if j != i && same && self.is_setup(j) && included.insert(j) {
                context.extend(self.facts_of(j, cancel));
            }
        }
        // pytest fixtures named by parameters.
        if self.file.language == Language::Python {
            for p in &f.params {
                for j in 0..self.functions.len() {
                    if self.functions[j].simple_name == *p
                        && self.is_fixture(j)
                        && included.insert(j)
                    {
                        context.extend(self.facts_of(j, cancel));
                    }
                }
            }
        }
        // Helpers: functions of the file called by simple name (same class first), two levels.
        let by_name: BTreeMap<&str, Vec<usize>> =
            self.functions
                .iter()
                .enumerate()
                .fold(BTreeMap::new(), |mut m, (j, g)| {
                    m.entry(g.simple_name.as_str()).or_default().push(j);
                    m
                });
        let mut frontier: Vec<String> = own.calls.iter().map(|c| c.name.clone()).collect();
        for _level in 0..2 {
            let mut next = Vec::new();
            for name in &frontier {
                let Some(cands) = by_name.get(name.as_str()) else {
                    continue;
                };
                for &j in cands {
                    if included.len() > MAX_HELPERS {
                        break;
                    }
                    if included.insert(j) {
                        let h = self.facts_of(j, cancel);
                        next.extend(h.calls.iter().map(|c| c.name.clone()));
                        context.extend(h);
                    }
                }
            }
            frontier = next;
        }
        let mut annotations = self.annotations[i].clone();
        if let Some(c) = class {
            annotations.extend(class_annotations(self.file, c));
            context.extend(self.class_field_facts(c, cancel));
        }
        TestFacts {
            own,
            context,
            annotations,
            shared_names: self.shared_names.clone(),
            instance_names: self.instance_names.clone(),
            line: f.start_line,
            name: if is_js(self.file.language) {
                self.display[i].clone()
            } else {
                f.simple_name.clone()
            },
            javascript: is_js(self.file.language),
        }
    }
}

const MUTABLE_TYPES: [&str; 12] = [
    "List",
    "ArrayList",
    "Map",
    "HashMap",
    "Set",
    "HashSet",
    "Collection",
    "Queue",
    "Deque",
    "StringBuilder",
    "AtomicInteger",
    "AtomicLong",
];

/// Names of static mutable fields (Java: `static` and not `final`, or `static final` of a
/// mutable collection type) and of module-level / class-level mutable containers (Python:
/// assigned a list, dict or set display or a `list()`/`dict()`/`set()` call); second, the
/// names of Java instance fields.
fn field_names(file: &ParsedFile) -> (Vec<String>, Vec<String>) {
    let mut out: BTreeSet<String> = BTreeSet::new();
    let mut instance: BTreeSet<String> = BTreeSet::new();
    let root = file.root();
    let mut stack = vec![(root, 0usize)];
    let mut visited = 0usize;
    while let Some((node, depth)) = stack.pop() {
        visited += 1;
        if visited > 200_000 || depth > MAX_UP {
            break;
        }
        match (file.language, node.kind()) {
            (Language::Java, kind::FIELD_DECLARATION) => {
                let mut cursor = node.walk();
                let mods = node
                    .children(&mut cursor)
                    .find(|c| c.kind() == kind::MODIFIERS)
                    .map(|m| file.node_text(m).to_string())
                    .unwrap_or_default();
                let is_static = mods.split_whitespace().any(|w| w == "static");
                let is_final = mods.split_whitespace().any(|w| w == "final");
                let ty = node
                    .child_by_field_name(field::TYPE)
                    .map(|t| simple_type(file.node_text(t)))
                    .unwrap_or_default();
                let shared = is_static && (!is_final || MUTABLE_TYPES.contains(&ty.as_str()));
                let mut c2 = node.walk();
                for d in node.children_by_field_name(field::DECLARATOR, &mut c2) {
                    if let Some(n) = d.child_by_field_name(field::NAME) {
                        let name = file.node_text(n).to_string();
                        if shared {
                            out.insert(name);
                        } else if !is_static {
                            instance.insert(name);
                        }
                    }
                }
                continue;
            }
            (Language::Python, kind::ASSIGNMENT) => {
                let at_top = node.parent().and_then(|p| p.parent()).is_some_and(|g| {
                    matches!(g.kind(), kind::MODULE | kind::BLOCK) && {
                        // module level, or a class body (block whose parent is a class).
                        g.kind() == kind::MODULE
                            || g.parent()
                                .is_some_and(|c| c.kind() == kind::CLASS_DEFINITION)
                    }
                }) || node.parent().is_some_and(|p| p.kind() == kind::MODULE);
                let mutable = node.child_by_field_name(field::RIGHT).is_some_and(|r| {
                    matches!(r.kind(), kind::LIST | kind::DICTIONARY | kind::SET)
                        || (r.kind() == kind::CALL
                            && r.child_by_field_name(field::FUNCTION).is_some_and(|f| {
                                matches!(
                                    file.node_text(f),
                                    "list" | "dict" | "set" | "defaultdict" | "OrderedDict"
                                )
                            }))
                });
                if at_top && mutable {
                    if let Some(l) = node.child_by_field_name(field::LEFT) {
                        if l.kind() == kind::IDENTIFIER {
                            out.insert(file.node_text(l).to_string());
                        }
                    }
                }
                continue;
            }
            (
                Language::JavaScript | Language::TypeScript,
                kind::LEXICAL_DECLARATION | kind::VARIABLE_DECLARATION,
            ) => {
                // Module and `describe` level: `let`/`var` bindings, and `const` ones bound to
                // a mutable object, array, Map or Set, outlive one test.
                let is_const = node.child(0).is_some_and(|k| k.kind() == "const");
                let mut cursor = node.walk();
                for d in node.named_children(&mut cursor) {
                    if d.kind() != kind::VARIABLE_DECLARATOR {
                        continue;
                    }
                    let value = d.child_by_field_name(field::VALUE);
                    let mutable = value.is_some_and(|v| {
                        matches!(v.kind(), kind::OBJECT | kind::ARRAY)
                            || (v.kind() == kind::NEW_EXPRESSION
                                && v.child_by_field_name(field::CONSTRUCTOR).is_some_and(|c| {
                                    matches!(file.node_text(c), "Map" | "Set" | "Array" | "Object")
                                }))
                    });
                    // Modules (`require(..)`) and functions are not state a test changes.
                    let module_or_function = value.is_some_and(|v| {
                        matches!(
                            v.kind(),
                            kind::ARROW_FUNCTION
                                | kind::FUNCTION_EXPRESSION
                                | "function"
                                | kind::CLASS
                        ) || file.node_text(v).trim_start().starts_with("require(")
                            || file.node_text(v).trim_start().starts_with("await import(")
                    });
                    if let Some(n) = d
                        .child_by_field_name(field::NAME)
                        .filter(|n| n.kind() == kind::IDENTIFIER)
                    {
                        if (!is_const || mutable) && !module_or_function {
                            out.insert(file.node_text(n).to_string());
                        }
                    }
                }
                continue;
            }
            (
                Language::JavaScript | Language::TypeScript,
                kind::ARROW_FUNCTION
                | kind::FUNCTION_EXPRESSION
                | "function"
                | kind::FUNCTION_DECLARATION
                | kind::METHOD_DEFINITION
                | kind::GENERATOR_FUNCTION_DECLARATION,
            ) if !matches!(js_role(file, node), Some(JsRole::Suite(_))) => continue,
            // Do not look inside function bodies.
            (Language::Java, kind::METHOD_DECLARATION | kind::CONSTRUCTOR_DECLARATION)
            | (Language::Python, kind::FUNCTION_DEFINITION) => continue,
            _ => {}
        }
        let mut cursor = node.walk();
        for c in node.named_children(&mut cursor) {
            stack.push((c, depth + 1));
        }
    }
    (out.into_iter().collect(), instance.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(lang: Language, src: &str) -> Vec<String> {
        let file = ParsedFile::parse(lang, src);
        let idx = FileIndex::new(&file);
        idx.tests(&FlakyOptions::default())
            .into_iter()
            .map(|(_, n)| n.to_string())
            .collect()
    }

    #[test]
    fn junit_testng_and_junit3_tests() {
        let src = r#"
class A {
  @Test public void a() {}
  @org.junit.jupiter.api.Test void b() {}
  @ParameterizedTest @ValueSource(ints = {1}) void c(int x) {}
  @Test(timeOut = 100) public void d() {}
  public void helper() {}
  @Before public void setUp() {}
}
class B extends junit.framework.TestCase {
  public void testX() {}
  public void notATest() {}
}"#;
        assert_eq!(
            names(Language::Java, src),
            ["A.a", "A.b", "A.c", "A.d", "B.testX"]
        );
    }

    #[test]
    fn pytest_and_unittest_tests() {
        let src = r#"
def test_a():
    def test_inner():
        pass
def helper():
    pass
class TestB:
    def test_b(self):
        pass
    def helper(self):
        pass
class C(unittest.TestCase):
    def test_c(self):
        pass
class D:
    def test_d(self):
        pass
"#;
        assert_eq!(
            names(Language::Python, src),
            ["test_a", "TestB.test_b", "C.test_c"]
        );
    }

    #[test]
    fn jest_mocha_and_vitest_tests_are_named_by_their_titles() {
        let src = r#"
describe('Cart', () => {
  beforeEach(() => {});
  it('adds', () => {});
  test.only('removes', async () => {});
  it.skip('is skipped', () => {});
  describe('totals', function () {
    it.each([1, 2])('sums %i', (n) => {});
    specify('rounds', function () {}, 500);
  });
});
test('top level', () => {});
function helper() { it('built by a helper', () => {}); }
"#;
        assert_eq!(
            names(Language::JavaScript, src),
            [
                "Cart > adds",
                "Cart > removes",
                "Cart > totals > sums %i",
                "Cart > totals > rounds",
                "top level",
                "built by a helper",
            ]
        );
        let file = ParsedFile::parse(Language::TypeScript, src);
        let idx = FileIndex::new(&file);
        let rounds = idx
            .tests(&FlakyOptions::default())
            .into_iter()
            .find(|(_, n)| n.ends_with("rounds"))
            .map(|(i, _)| i)
            .unwrap();
        assert_eq!(idx.annotations[rounds][0].0, "Timeout(500)");
    }

    #[test]
    fn shared_state_names() {
        let j = ParsedFile::parse(
            Language::Java,
            "class A { static int n; static final int K = 1; static final List<String> L = new ArrayList<>(); int m; }",
        );
        assert_eq!(field_names(&j).0, ["L", "n"]);
        assert_eq!(field_names(&j).1, ["m"]);
        let p = ParsedFile::parse(
            Language::Python,
            "CACHE = {}\nN = 1\nclass T:\n    items = []\n    def f(self):\n        local = []\n",
        );
        assert_eq!(field_names(&p).0, ["CACHE", "items"]);
        let js = ParsedFile::parse(
            Language::JavaScript,
            "const fs = require('fs');
let count = 0;
const seen = [];
const LIMIT = 3;
const f = () => 1;
describe('x', () => { let server; const cache = new Map(); it('t', () => { let local = 1; }); });
",
        );
        assert_eq!(field_names(&js).0, ["cache", "count", "seen", "server"]);
    }
}
