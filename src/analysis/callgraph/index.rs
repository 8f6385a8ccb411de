//! The workspace index: every function (from `syntax::functions`), every class-like scope
//! with its bases, fields and methods, per-file imports and aliases, local variable facts,
//! and the call sites of every function. Built by one iterative walk per file.

use super::util::{
    named_children, norm_type, overload_key, split_cpp, strip_template, unwrap_expr,
};
use super::SourceUnit;
use crate::syntax::functions::{collect_functions, Function, FunctionKind};
use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use tree_sitter::Node;

pub(super) type FunId = usize;
pub(super) type ClassId = usize;

/// What is known about a variable from one declaration or assignment.
#[derive(Clone, Copy)]
pub(super) enum Fact<'t> {
    /// A written type (declaration, annotation, parameter type).
    Declared(Node<'t>),
    /// An assigned value; its type is inferred on demand.
    Value(Node<'t>),
    /// An instance of a known class (Java enum constants).
    OfClass(ClassId),
    /// A binding whose value is unknown (loop targets, destructuring, `with ... as x`).
    Opaque,
}

pub(super) struct Fun<'t> {
    pub unit: usize,
    pub f: Function<'t>,
    /// Canonical qualified name used for lookups (C++ out-of-class definitions are
    /// re-qualified with their class's namespace; anonymous namespaces dropped).
    pub key: String,
    /// Innermost enclosing function.
    pub parent: Option<FunId>,
    /// The class this function is a member of.
    pub class: Option<ClassId>,
    /// Innermost lexically enclosing class (also for lambdas and nested functions).
    pub scope_class: Option<ClassId>,
    pub min_arity: usize,
    /// `None` when variadic.
    pub max_arity: Option<usize>,
    /// Parameters: (name, written type node).
    pub params: Vec<(String, Option<Node<'t>>)>,
    /// Overload-matching key per passed parameter (see `util::overload_key`).
    pub param_keys: Vec<Option<String>>,
    pub ret_type: Option<Node<'t>>,
    /// Not visible from other files (C/C++ `static`, anonymous namespace).
    pub file_local: bool,
    /// Python `@staticmethod` / `@classmethod`.
    pub py_static: bool,
    pub py_classmethod: bool,
}

pub(super) struct Class<'t> {
    pub unit: usize,
    pub qname: String,
    pub simple: String,
    pub bases_written: Vec<Node<'t>>,
    pub outer: Option<ClassId>,
    /// Function the class is defined in (Python/Java local classes).
    pub enclosing_fun: Option<FunId>,
    pub fields: BTreeMap<String, Vec<(Fact<'t>, Option<FunId>)>>,
    pub methods: BTreeMap<String, Vec<FunId>>,
    /// Solidity `using L for T` libraries.
    pub usings: Vec<String>,
    /// Solidity `is B(args)` specifiers (attributed to the constructor).
    pub base_ctor_specs: Vec<Node<'t>>,
    /// Java/Solidity/TS interface (its superclass slot is never a constructor target).
    pub is_interface: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Import {
    /// A module (Python dotted name, or JS path spec).
    Module(String),
    /// A symbol of a module: `from m import f`, `import { f } from "m"`.
    Symbol { module: String, name: String },
    /// Java single-type import: fully qualified class name.
    JavaClass(String),
    /// Java static import of one member: (class qualified name, member).
    JavaStatic { class: String, member: String },
}

#[derive(Default)]
pub(super) struct UnitInfo<'t> {
    pub imports: BTreeMap<String, Import>,
    /// Python `from m import *`, Java `import p.*` packages, Java `import static C.*` classes.
    pub star_imports: Vec<String>,
    pub static_star_imports: Vec<String>,
    pub package: String,
    pub using_namespaces: Vec<String>,
    pub using_decls: BTreeMap<String, String>,
    pub type_aliases: BTreeMap<String, Node<'t>>,
    pub includes: Vec<String>,
    pub usings: Vec<String>,
    pub module_vars: BTreeMap<String, Vec<Fact<'t>>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum SiteKind {
    Call,
    New,
    /// C++ `Foo x(args);` / `Foo x{..};` / `Foo x;`.
    Decl,
    /// C++ constructor initializer `: Base(x), member(y)`.
    FieldInit,
    /// Java `super(...)` / `this(...)`.
    ExplicitCtor,
    /// Solidity modifier invocation (or base constructor call in a constructor header).
    Modifier,
    /// Solidity `contract A is B(args)` attributed to A's constructor.
    BaseSpec,
}

#[derive(Clone, Copy)]
pub(super) struct Site<'t> {
    pub fun: FunId,
    pub node: Node<'t>,
    pub kind: SiteKind,
}

pub(super) struct Unit<'t> {
    pub path: String,
    pub lang: Language,
    pub file: &'t ParsedFile,
    /// Path segments without extension (`pkg/mod.py` -> [pkg, mod]; `__init__` dropped).
    pub module: Vec<String>,
    pub info: UnitInfo<'t>,
}

pub(super) struct Index<'t> {
    pub units: Vec<Unit<'t>>,
    pub funs: Vec<Fun<'t>>,
    pub classes: Vec<Class<'t>>,
    pub sites: Vec<Site<'t>>,
    /// (function, variable) -> facts.
    pub locals: BTreeMap<(FunId, String), Vec<Fact<'t>>>,
    /// Function node id -> function.
    pub fun_by_node: HashMap<usize, FunId>,
    /// Canonical key -> functions.
    pub by_key: BTreeMap<String, Vec<FunId>>,
    /// Qualified class name -> classes (several files may define the same name).
    pub class_by_qname: BTreeMap<String, Vec<ClassId>>,
    /// Class simple name -> classes.
    pub class_by_simple: BTreeMap<String, Vec<ClassId>>,
    /// Function -> nested functions directly inside it.
    pub children: BTreeMap<Option<FunId>, Vec<FunId>>,
    pub cancelled: bool,
}

#[derive(Clone)]
struct Scope {
    path: Rc<str>,
    class: Option<ClassId>,
    fun: Option<FunId>,
}

pub(super) fn sep(lang: Language) -> &'static str {
    if lang == Language::Cpp {
        "::"
    } else {
        "."
    }
}

fn join(sep: &str, path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}{sep}{seg}")
    }
}

fn module_segments(path: &str) -> Vec<String> {
    let norm = path.replace('\\', "/");
    let mut segs: Vec<String> = norm
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(str::to_string)
        .collect();
    if let Some(last) = segs.pop() {
        let stem = match last.rfind('.') {
            Some(i) if i > 0 => last.get(..i).unwrap_or(&last).to_string(),
            _ => last,
        };
        if stem != "__init__" && stem != "index" {
            segs.push(stem);
        }
    }
    segs
}

impl<'t> Index<'t> {
    pub fn build(units: &[SourceUnit<'t>], cancel: &Cancel) -> Index<'t> {
        let mut ix = Index {
            units: Vec::new(),
            funs: Vec::new(),
            classes: Vec::new(),
            sites: Vec::new(),
            locals: BTreeMap::new(),
            fun_by_node: HashMap::new(),
            by_key: BTreeMap::new(),
            class_by_qname: BTreeMap::new(),
            class_by_simple: BTreeMap::new(),
            children: BTreeMap::new(),
            cancelled: false,
        };
        for (ui, u) in units.iter().enumerate() {
            ix.units.push(Unit {
                path: u.path.clone(),
                lang: u.file.language,
                file: u.file,
                module: module_segments(&u.path),
                info: UnitInfo::default(),
            });
            for f in collect_functions(u.file) {
                let id = ix.funs.len();
                ix.fun_by_node.insert(f.node.id(), id);
                let (min_arity, max_arity, params, param_keys, ret_type) =
                    signature_facts(u.file, &f);
                let file_local = is_file_local(u.file, &f);
                let (py_static, py_classmethod) = python_decorators(u.file, &f);
                ix.funs.push(Fun {
                    unit: ui,
                    key: f.name.clone(),
                    f,
                    parent: None,
                    class: None,
                    scope_class: None,
                    min_arity,
                    max_arity,
                    params,
                    param_keys,
                    ret_type,
                    file_local,
                    py_static,
                    py_classmethod,
                });
            }
        }
        for ui in 0..ix.units.len() {
            if ix.cancelled {
                break;
            }
            ix.walk_unit(ui, cancel);
        }
        ix.link();
        ix
    }

    fn walk_unit(&mut self, ui: usize, cancel: &Cancel) {
        let (file, lang) = match self.units.get(ui) {
            Some(u) => (u.file, u.lang),
            None => return,
        };
        let sep = sep(lang);
        let top = Scope {
            path: Rc::from(""),
            class: None,
            fun: None,
        };
        let mut stack: Vec<(Node<'t>, Scope)> = vec![(file.root(), top)];
        let mut steps = 0usize;
        while let Some((node, scope)) = stack.pop() {
            steps += 1;
            if steps.is_multiple_of(4096) && cancel.is_cancelled() {
                self.cancelled = true;
                return;
            }
            let mut child_scope: Option<Scope> = None;
            if let Some(&fid) = self.fun_by_node.get(&node.id()) {
                if let Some(fun) = self.funs.get_mut(fid) {
                    fun.parent = scope.fun;
                    fun.scope_class = scope.class;
                    if fun.f.class.is_some()
                        && scope
                            .class
                            .and_then(|c| self.classes.get(c))
                            .map(|c| &c.qname)
                            == fun.f.class.as_ref()
                    {
                        fun.class = scope.class;
                    }
                    self.children.entry(scope.fun).or_default().push(fid);
                    child_scope = Some(Scope {
                        path: Rc::from(fun.f.name.as_str()),
                        class: scope.class,
                        fun: Some(fid),
                    });
                }
            } else if let Some(name) = class_like_name(file, node) {
                let qname = join(sep, &scope.path, &name);
                let cid = self.classes.len();
                let bases_written = class_bases(file, node);
                let base_ctor_specs = if lang == Language::Solidity {
                    named_children(node)
                        .into_iter()
                        .filter(|c| {
                            c.kind() == kind::INHERITANCE_SPECIFIER
                                && c.child_by_field_name(field::ANCESTOR_ARGUMENTS).is_some()
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                self.class_by_qname
                    .entry(qname.clone())
                    .or_default()
                    .push(cid);
                self.class_by_simple
                    .entry(name.clone())
                    .or_default()
                    .push(cid);
                self.classes.push(Class {
                    unit: ui,
                    qname: qname.clone(),
                    simple: name,
                    bases_written,
                    outer: scope.class,
                    enclosing_fun: scope.fun,
                    fields: BTreeMap::new(),
                    methods: BTreeMap::new(),
                    usings: Vec::new(),
                    base_ctor_specs,
                    is_interface: node.kind().contains("interface"),
                });
                child_scope = Some(Scope {
                    path: Rc::from(qname.as_str()),
                    class: Some(cid),
                    fun: scope.fun,
                });
            } else if lang == Language::Cpp && node.kind() == kind::NAMESPACE_DEFINITION {
                let name = node
                    .child_by_field_name(field::NAME)
                    .map(|n| file.node_text(n).split_whitespace().collect::<String>())
                    .unwrap_or_else(|| "(anonymous namespace)".to_string());
                child_scope = Some(Scope {
                    path: Rc::from(join(sep, &scope.path, &name).as_str()),
                    class: scope.class,
                    fun: scope.fun,
                });
            } else {
                self.facts_at(ui, file, lang, node, &scope);
            }
            let child_scope = child_scope.unwrap_or(scope);
            // Children in reverse so that they are visited in document order.
            let mark = stack.len();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                stack.push((child, child_scope.clone()));
            }
            if let Some(pushed) = stack.get_mut(mark..) {
                pushed.reverse();
            }
        }
    }

    fn push_local(&mut self, scope: &Scope, ui: usize, name: &str, fact: Fact<'t>) {
        if name.is_empty() {
            return;
        }
        match (scope.fun, scope.class) {
            (Some(f), _) => self
                .locals
                .entry((f, name.to_string()))
                .or_default()
                .push(fact),
            (None, Some(c)) => {
                if let Some(cls) = self.classes.get_mut(c) {
                    cls.fields
                        .entry(name.to_string())
                        .or_default()
                        .push((fact, None));
                }
            }
            (None, None) => {
                if let Some(u) = self.units.get_mut(ui) {
                    u.info
                        .module_vars
                        .entry(name.to_string())
                        .or_default()
                        .push(fact);
                }
            }
        }
    }

    fn push_field(
        &mut self,
        class: Option<ClassId>,
        name: &str,
        fact: Fact<'t>,
        fun: Option<FunId>,
    ) {
        if let Some(cls) = class.and_then(|c| self.classes.get_mut(c)) {
            cls.fields
                .entry(name.to_string())
                .or_default()
                .push((fact, fun));
        }
    }

    fn site(&mut self, scope: &Scope, node: Node<'t>, kind: SiteKind) {
        if let Some(fun) = scope.fun {
            self.sites.push(Site { fun, node, kind });
        }
    }

    /// Records call sites, imports and variable facts found at one node.
    fn facts_at(
        &mut self,
        ui: usize,
        file: &'t ParsedFile,
        lang: Language,
        node: Node<'t>,
        scope: &Scope,
    ) {
        let text = |n: Node<'_>| file.node_text(n).to_string();
        let kind = node.kind();
        match lang {
            Language::Python => match kind {
                kind::CALL => {
                    // Default values are evaluated where the function is defined, not per call.
                    let owner = scope.fun.and_then(|f| self.funs.get(f));
                    let in_params = owner
                        .and_then(|f| f.f.node.child_by_field_name(field::PARAMETERS))
                        .is_some_and(|p| p.byte_range().contains(&node.start_byte()));
                    if in_params {
                        let outer = Scope {
                            fun: owner.and_then(|f| f.parent),
                            ..scope.clone()
                        };
                        self.site(&outer, node, SiteKind::Call);
                    } else {
                        self.site(scope, node, SiteKind::Call);
                    }
                }
                kind::IMPORT_STATEMENT | kind::IMPORT_FROM_STATEMENT => {
                    self.python_import(ui, file, node)
                }
                kind::FOR_STATEMENT | kind::FOR_IN_CLAUSE | kind::AS_PATTERN_TARGET => {
                    let target = if kind == kind::AS_PATTERN_TARGET {
                        Some(node)
                    } else {
                        node.child_by_field_name(field::LEFT)
                    };
                    if let Some(t) = target {
                        self.opaque_bindings(file, t, scope, ui);
                    }
                }
                kind::ASSIGNMENT => {
                    let Some(left) = node.child_by_field_name(field::LEFT) else {
                        return;
                    };
                    let fact = match (
                        node.child_by_field_name(field::TYPE),
                        node.child_by_field_name(field::RIGHT),
                    ) {
                        (Some(t), _) => Fact::Declared(t),
                        (None, Some(r)) => Fact::Value(r),
                        (None, None) => return,
                    };
                    match left.kind() {
                        kind::IDENTIFIER => self.push_local(scope, ui, &text(left), fact),
                        kind::PATTERN_LIST | kind::TUPLE_PATTERN | kind::LIST_PATTERN => {
                            self.opaque_bindings(file, left, scope, ui)
                        }
                        kind::ATTRIBUTE => {
                            let obj = left.child_by_field_name(field::OBJECT);
                            let attr = left.child_by_field_name(field::ATTRIBUTE);
                            if let (Some(obj), Some(attr), Some(fun)) = (obj, attr, scope.fun) {
                                if let Some((self_name, class)) = self.python_self(fun) {
                                    if file.node_text(obj) == self_name {
                                        self.push_field(
                                            Some(class),
                                            file.node_text(attr),
                                            fact,
                                            Some(fun),
                                        );
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            },
            Language::Java => match kind {
                kind::METHOD_INVOCATION => self.site(scope, node, SiteKind::Call),
                kind::OBJECT_CREATION_EXPRESSION => self.site(scope, node, SiteKind::New),
                kind::EXPLICIT_CONSTRUCTOR_INVOCATION => {
                    self.site(scope, node, SiteKind::ExplicitCtor)
                }
                kind::PACKAGE_DECLARATION => {
                    if let Some(u) = self.units.get_mut(ui) {
                        u.info.package = named_children(node)
                            .first()
                            .map(|n| text(*n))
                            .unwrap_or_default();
                    }
                }
                kind::IMPORT_DECLARATION => self.java_import(ui, file, node),
                kind::FIELD_DECLARATION
                | kind::LOCAL_VARIABLE_DECLARATION
                | kind::CONSTANT_DECLARATION => {
                    let Some(ty) = node.child_by_field_name(field::TYPE) else {
                        return;
                    };
                    let is_var = file.node_text(ty) == "var";
                    for d in named_children(node)
                        .into_iter()
                        .filter(|d| d.kind() == kind::VARIABLE_DECLARATOR)
                    {
                        let Some(name) = d.child_by_field_name(field::NAME) else {
                            continue;
                        };
                        let value = d.child_by_field_name(field::VALUE);
                        if !is_var {
                            self.push_local(scope, ui, &text(name), Fact::Declared(ty));
                        }
                        if let Some(v) = value {
                            self.push_local(scope, ui, &text(name), Fact::Value(v));
                        }
                    }
                }
                kind::ASSIGNMENT_EXPRESSION => self.assignment_fact(file, node, scope),
                kind::ENUM_CONSTANT => {
                    if let (Some(c), Some(n)) = (scope.class, node.child_by_field_name(field::NAME))
                    {
                        self.push_field(Some(c), file.node_text(n), Fact::OfClass(c), None);
                    }
                }
                kind::ENHANCED_FOR_STATEMENT => {
                    if let (Some(t), Some(n)) = (
                        node.child_by_field_name(field::TYPE),
                        node.child_by_field_name(field::NAME),
                    ) {
                        self.push_local(scope, ui, &text(n), Fact::Declared(t));
                    }
                }
                _ => {}
            },
            Language::C | Language::Cpp => match kind {
                kind::CALL_EXPRESSION => self.site(scope, node, SiteKind::Call),
                kind::NEW_EXPRESSION => self.site(scope, node, SiteKind::New),
                kind::FIELD_INITIALIZER => self.site(scope, node, SiteKind::FieldInit),
                kind::ASSIGNMENT_EXPRESSION => self.assignment_fact(file, node, scope),
                kind::FOR_RANGE_LOOP => {
                    let (Some(t), Some(d)) = (
                        node.child_by_field_name(field::TYPE),
                        node.child_by_field_name(field::DECLARATOR),
                    ) else {
                        return;
                    };
                    if file.node_text(t).trim() != "auto" {
                        if let Some(name) = declarator_name(file, d) {
                            self.push_local(scope, ui, &name, Fact::Declared(t));
                        }
                    }
                }
                kind::PREPROC_INCLUDE => {
                    if let Some(p) = node.child_by_field_name(field::PATH) {
                        let inc = text(p).trim_matches(['"', '<', '>']).to_string();
                        if let Some(u) = self.units.get_mut(ui) {
                            u.info.includes.push(inc);
                        }
                    }
                }
                kind::USING_DECLARATION => {
                    let t = text(node);
                    let Some(target) = named_children(node).last().map(|n| text(*n)) else {
                        return;
                    };
                    let target = target.split_whitespace().collect::<String>();
                    if let Some(u) = self.units.get_mut(ui) {
                        if t.contains("namespace") {
                            u.info
                                .using_namespaces
                                .push(target.trim_start_matches("::").to_string());
                        } else if let Some(last) = split_cpp(&target).last() {
                            u.info
                                .using_decls
                                .insert(last.clone(), target.trim_start_matches("::").to_string());
                        }
                    }
                }
                kind::ALIAS_DECLARATION => {
                    if let (Some(n), Some(t)) = (
                        node.child_by_field_name(field::NAME),
                        node.child_by_field_name(field::TYPE),
                    ) {
                        if let Some(u) = self.units.get_mut(ui) {
                            u.info.type_aliases.insert(text(n), t);
                        }
                    }
                }
                kind::TYPE_DEFINITION => {
                    let Some(t) = node.child_by_field_name(field::TYPE) else {
                        return;
                    };
                    for d in named_children(node) {
                        if d.kind() == kind::TYPE_IDENTIFIER && d.id() != t.id() {
                            if let Some(u) = self.units.get_mut(ui) {
                                u.info.type_aliases.insert(text(d), t);
                            }
                        }
                    }
                }
                kind::DECLARATION | kind::FIELD_DECLARATION => {
                    let Some(ty) = node.child_by_field_name(field::TYPE) else {
                        return;
                    };
                    let is_auto = file.node_text(ty).trim() == "auto";
                    let mut has_ctor_form = false;
                    let mut cursor = node.walk();
                    let decls: Vec<Node<'t>> = node
                        .children_by_field_name(field::DECLARATOR, &mut cursor)
                        .collect();
                    for d in decls {
                        let (name_node, value) = match d.kind() {
                            kind::INIT_DECLARATOR => (
                                d.child_by_field_name(field::DECLARATOR),
                                d.child_by_field_name(field::VALUE),
                            ),
                            _ => (Some(d), None),
                        };
                        let Some(mut name_node) = name_node else {
                            continue;
                        };
                        if name_node.kind() == kind::FUNCTION_DECLARATOR {
                            // `void (*fp)(char *) = f;` declares a function pointer variable;
                            // `void f(char *);` is a prototype.
                            match name_node.child_by_field_name(field::DECLARATOR) {
                                Some(inner) if inner.kind() == kind::PARENTHESIZED_DECLARATOR => {
                                    name_node = inner;
                                }
                                _ => continue,
                            }
                        }
                        if matches!(name_node.kind(), kind::IDENTIFIER | kind::FIELD_IDENTIFIER)
                            && value.is_none_or(|v| {
                                matches!(v.kind(), kind::ARGUMENT_LIST | kind::INITIALIZER_LIST)
                            })
                        {
                            has_ctor_form = true;
                        }
                        let Some(name) = declarator_name(file, name_node) else {
                            continue;
                        };
                        let mut facts = Vec::new();
                        if !is_auto {
                            facts.push(Fact::Declared(ty));
                        }
                        if let Some(v) = value.filter(|v| {
                            !matches!(v.kind(), kind::ARGUMENT_LIST | kind::INITIALIZER_LIST)
                        }) {
                            facts.push(Fact::Value(v));
                        }
                        for fact in facts {
                            if kind == kind::FIELD_DECLARATION {
                                self.push_field(scope.class, &name, fact, None);
                            } else {
                                self.push_local(scope, ui, &name, fact);
                            }
                        }
                    }
                    if lang == Language::Cpp && kind == kind::DECLARATION && has_ctor_form {
                        self.site(scope, node, SiteKind::Decl);
                    }
                }
                _ => {}
            },
            Language::Solidity => match kind {
                kind::CALL_EXPRESSION => self.site(scope, node, SiteKind::Call),
                kind::MODIFIER_INVOCATION => self.site(scope, node, SiteKind::Modifier),
                kind::USING_DIRECTIVE => {
                    let lib = named_children(node)
                        .into_iter()
                        .find(|c| c.kind() == kind::TYPE_ALIAS)
                        .map(text)
                        .map(|s| s.split_whitespace().collect::<String>());
                    if let Some(lib) = lib {
                        match scope.class.and_then(|c| self.classes.get_mut(c)) {
                            Some(cls) => cls.usings.push(lib),
                            None => {
                                if let Some(u) = self.units.get_mut(ui) {
                                    u.info.usings.push(lib);
                                }
                            }
                        }
                    }
                }
                kind::IMPORT_DIRECTIVE => {
                    if let Some(src) = node.child_by_field_name(field::SOURCE) {
                        let spec = text(src).trim_matches(['"', '\'']).to_string();
                        if let Some(u) = self.units.get_mut(ui) {
                            u.info.star_imports.push(spec);
                        }
                    }
                }
                kind::STATE_VARIABLE_DECLARATION | kind::VARIABLE_DECLARATION => {
                    if let (Some(t), Some(n)) = (
                        node.child_by_field_name(field::TYPE),
                        node.child_by_field_name(field::NAME),
                    ) {
                        self.push_local(scope, ui, &text(n), Fact::Declared(t));
                        if let Some(v) = node.child_by_field_name(field::VALUE) {
                            self.push_local(scope, ui, &text(n), Fact::Value(v));
                        }
                    }
                }
                _ => {}
            },
            Language::JavaScript | Language::TypeScript => match kind {
                kind::CALL_EXPRESSION => self.site(scope, node, SiteKind::Call),
                kind::NEW_EXPRESSION => self.site(scope, node, SiteKind::New),
                kind::IMPORT_STATEMENT => self.js_import(ui, file, node),
                kind::FOR_IN_STATEMENT => {
                    if let Some(l) = node.child_by_field_name(field::LEFT) {
                        self.opaque_bindings(file, l, scope, ui);
                    }
                }
                kind::VARIABLE_DECLARATOR => {
                    let Some(name) = node.child_by_field_name(field::NAME) else {
                        return;
                    };
                    if scope.fun.is_none() && self.commonjs_require(ui, file, name, node) {
                        return;
                    }
                    if name.kind() != kind::IDENTIFIER {
                        self.opaque_bindings(file, name, scope, ui);
                        return;
                    }
                    let fact = match (
                        node.child_by_field_name(field::TYPE),
                        node.child_by_field_name(field::VALUE),
                    ) {
                        (Some(t), _) => Fact::Declared(t),
                        (None, Some(v)) => Fact::Value(v),
                        _ => return,
                    };
                    self.push_local(scope, ui, &text(name), fact);
                }
                kind::REQUIRED_PARAMETER | kind::OPTIONAL_PARAMETER => {
                    // `constructor(private svc: Svc)` declares a field.
                    let is_prop = named_children(node).iter().any(|c| {
                        matches!(
                            c.kind(),
                            kind::ACCESSIBILITY_MODIFIER | kind::OVERRIDE_MODIFIER
                        )
                    }) || file.node_text(node).starts_with("readonly ");
                    let (Some(p), Some(t)) = (
                        node.child_by_field_name(field::PATTERN),
                        node.child_by_field_name(field::TYPE),
                    ) else {
                        return;
                    };
                    if is_prop && scope.fun.is_some() {
                        self.push_field(scope.class, &text(p), Fact::Declared(t), None);
                    }
                }
                kind::PUBLIC_FIELD_DEFINITION | kind::FIELD_DEFINITION => {
                    let name = node
                        .child_by_field_name(field::NAME)
                        .or_else(|| node.child_by_field_name(field::PROPERTY));
                    let Some(name) = name else { return };
                    let fact = match (
                        node.child_by_field_name(field::TYPE),
                        node.child_by_field_name(field::VALUE),
                    ) {
                        (Some(t), _) => Fact::Declared(t),
                        (None, Some(v)) => Fact::Value(v),
                        _ => return,
                    };
                    self.push_field(scope.class, &text(name), fact, None);
                }
                kind::ASSIGNMENT_EXPRESSION => {
                    let (Some(l), Some(r)) = (
                        node.child_by_field_name(field::LEFT),
                        node.child_by_field_name(field::RIGHT),
                    ) else {
                        return;
                    };
                    if l.kind() == kind::MEMBER_EXPRESSION {
                        let obj = l.child_by_field_name(field::OBJECT);
                        let prop = l.child_by_field_name(field::PROPERTY);
                        if let (Some(o), Some(p)) = (obj, prop) {
                            if o.kind() == kind::THIS && scope.fun.is_some() {
                                self.push_field(scope.class, &text(p), Fact::Value(r), scope.fun);
                            }
                        }
                    } else if l.kind() == kind::IDENTIFIER {
                        self.push_local(scope, ui, &text(l), Fact::Value(r));
                    }
                }
                _ => {}
            },
        }
    }

    /// CommonJS at top level: `const m = require("./m")` and `const { f, g: h } = require("./m")`
    /// are imports. Returns true when the declarator was such an import.
    fn commonjs_require(
        &mut self,
        ui: usize,
        file: &ParsedFile,
        name: Node<'t>,
        decl: Node<'t>,
    ) -> bool {
        let Some(value) = decl.child_by_field_name(field::VALUE).map(unwrap_expr) else {
            return false;
        };
        let is_require = value.kind() == kind::CALL_EXPRESSION
            && value
                .child_by_field_name(field::FUNCTION)
                .is_some_and(|f| file.node_text(f) == "require");
        if !is_require {
            return false;
        }
        let Some(spec) = value
            .child_by_field_name(field::ARGUMENTS)
            .and_then(|a| named_children(a).into_iter().next())
            .filter(|a| a.kind() == kind::STRING)
            .map(|a| file.node_text(a).trim_matches(['"', '\'', '`']).to_string())
        else {
            return false;
        };
        let Some(unit) = self.units.get_mut(ui) else {
            return false;
        };
        let t = |n: Node<'_>| file.node_text(n).to_string();
        match name.kind() {
            kind::IDENTIFIER => {
                unit.info.imports.insert(t(name), Import::Module(spec));
            }
            kind::OBJECT_PATTERN => {
                for p in named_children(name) {
                    match p.kind() {
                        kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => {
                            unit.info.imports.insert(
                                t(p),
                                Import::Symbol {
                                    module: spec.clone(),
                                    name: t(p),
                                },
                            );
                        }
                        kind::PAIR_PATTERN => {
                            if let (Some(k), Some(v)) = (
                                p.child_by_field_name(field::KEY),
                                p.child_by_field_name(field::VALUE),
                            ) {
                                unit.info.imports.insert(
                                    t(v),
                                    Import::Symbol {
                                        module: spec.clone(),
                                        name: t(k),
                                    },
                                );
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// Records every identifier bound by a pattern as a variable of unknown value, so that
    /// it shadows outer names and module-level facts. Bounded walk.
    fn opaque_bindings(&mut self, file: &ParsedFile, pattern: Node<'t>, scope: &Scope, ui: usize) {
        let mut stack = vec![pattern];
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > 256 {
                break;
            }
            match n.kind() {
                kind::IDENTIFIER | kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => {
                    self.push_local(scope, ui, file.node_text(n), Fact::Opaque)
                }
                // Default values and computed keys are expressions, not bindings.
                kind::CALL
                | kind::ATTRIBUTE
                | kind::SUBSCRIPT
                | kind::MEMBER_EXPRESSION
                | kind::CALL_EXPRESSION => {}
                _ => stack.extend(named_children(n)),
            }
        }
    }

    /// Java/C++ `x = expr;` (a known local's value) and `this.f = expr;` / `this->f = expr;`.
    fn assignment_fact(&mut self, file: &ParsedFile, node: Node<'t>, scope: &Scope) {
        let (Some(l), Some(r)) = (
            node.child_by_field_name(field::LEFT),
            node.child_by_field_name(field::RIGHT),
        ) else {
            return;
        };
        let Some(fun) = scope.fun else { return };
        match l.kind() {
            kind::IDENTIFIER => {
                // Only variables already known as locals get value facts (fields keep theirs).
                if let Some(v) = self.locals.get_mut(&(fun, file.node_text(l).to_string())) {
                    v.push(Fact::Value(r));
                }
            }
            kind::FIELD_ACCESS | kind::FIELD_EXPRESSION => {
                let obj = l
                    .child_by_field_name(field::OBJECT)
                    .or_else(|| l.child_by_field_name(field::ARGUMENT));
                if let (Some(o), Some(f)) = (obj, l.child_by_field_name(field::FIELD)) {
                    if o.kind() == kind::THIS {
                        self.push_field(scope.class, file.node_text(f), Fact::Value(r), Some(fun));
                    }
                }
            }
            _ => {}
        }
    }

    fn python_import(&mut self, ui: usize, file: &ParsedFile, node: Node<'t>) {
        let Some(unit) = self.units.get_mut(ui) else {
            return;
        };
        let dotted = |n: Node<'_>| file.node_text(n).split_whitespace().collect::<String>();
        if node.kind() == kind::IMPORT_STATEMENT {
            let mut cursor = node.walk();
            for n in node.children_by_field_name(field::NAME, &mut cursor) {
                if n.kind() == kind::ALIASED_IMPORT {
                    if let (Some(name), Some(alias)) = (
                        n.child_by_field_name(field::NAME),
                        n.child_by_field_name(field::ALIAS),
                    ) {
                        unit.info
                            .imports
                            .insert(dotted(alias), Import::Module(dotted(name)));
                    }
                } else {
                    let full = dotted(n);
                    let first = full.split('.').next().unwrap_or(&full).to_string();
                    unit.info
                        .imports
                        .insert(first.clone(), Import::Module(first));
                }
            }
            return;
        }
        let Some(m) = node.child_by_field_name(field::MODULE_NAME) else {
            return;
        };
        let module = if m.kind() == kind::RELATIVE_IMPORT {
            let t = dotted(m);
            let dots = t.chars().take_while(|c| *c == '.').count();
            let rest = t.get(dots..).unwrap_or("");
            // The importing file's package: its directory segments.
            let mut base: Vec<String> = unit.module.clone();
            let is_init = unit.path.ends_with("__init__.py");
            if !is_init {
                base.pop();
            }
            for _ in 1..dots {
                base.pop();
            }
            if !rest.is_empty() {
                base.extend(rest.split('.').map(str::to_string));
            }
            base.join(".")
        } else {
            dotted(m)
        };
        let mut cursor = node.walk();
        let names: Vec<Node<'_>> = node
            .children_by_field_name(field::NAME, &mut cursor)
            .collect();
        if names.is_empty()
            && named_children(node)
                .iter()
                .any(|c| c.kind() == kind::WILDCARD_IMPORT)
        {
            unit.info.star_imports.push(module);
            return;
        }
        for n in names {
            let (name, alias) = if n.kind() == kind::ALIASED_IMPORT {
                match (
                    n.child_by_field_name(field::NAME),
                    n.child_by_field_name(field::ALIAS),
                ) {
                    (Some(a), Some(b)) => (dotted(a), dotted(b)),
                    _ => continue,
                }
            } else {
                (dotted(n), dotted(n))
            };
            unit.info.imports.insert(
                alias,
                Import::Symbol {
                    module: module.clone(),
                    name,
                },
            );
        }
    }

    fn java_import(&mut self, ui: usize, file: &ParsedFile, node: Node<'t>) {
        let Some(unit) = self.units.get_mut(ui) else {
            return;
        };
        let t = file.node_text(node);
        let is_static = t.split_whitespace().nth(1) == Some("static");
        let Some(path) = named_children(node)
            .into_iter()
            .find(|c| matches!(c.kind(), kind::SCOPED_IDENTIFIER | kind::IDENTIFIER))
            .map(|n| file.node_text(n).split_whitespace().collect::<String>())
        else {
            return;
        };
        let star = named_children(node)
            .iter()
            .any(|c| c.kind() == kind::ASTERISK);
        match (is_static, star) {
            (false, true) => unit.info.star_imports.push(path),
            (true, true) => unit.info.static_star_imports.push(path),
            (false, false) => {
                let last = path.rsplit('.').next().unwrap_or(&path).to_string();
                unit.info.imports.insert(last, Import::JavaClass(path));
            }
            (true, false) => {
                if let Some((class, member)) = path.rsplit_once('.') {
                    unit.info.imports.insert(
                        member.to_string(),
                        Import::JavaStatic {
                            class: class.to_string(),
                            member: member.to_string(),
                        },
                    );
                }
            }
        }
    }

    fn js_import(&mut self, ui: usize, file: &ParsedFile, node: Node<'t>) {
        let Some(unit) = self.units.get_mut(ui) else {
            return;
        };
        let Some(src) = node.child_by_field_name(field::SOURCE) else {
            return;
        };
        let spec = file
            .node_text(src)
            .trim_matches(['"', '\'', '`'])
            .to_string();
        let t = |n: Node<'_>| file.node_text(n).to_string();
        for clause in named_children(node)
            .into_iter()
            .filter(|c| c.kind() == kind::IMPORT_CLAUSE)
        {
            for part in named_children(clause) {
                match part.kind() {
                    kind::IDENTIFIER => {
                        unit.info.imports.insert(
                            t(part),
                            Import::Symbol {
                                module: spec.clone(),
                                name: "default".into(),
                            },
                        );
                    }
                    kind::NAMESPACE_IMPORT => {
                        if let Some(id) = named_children(part)
                            .into_iter()
                            .find(|c| c.kind() == kind::IDENTIFIER)
                        {
                            unit.info
                                .imports
                                .insert(t(id), Import::Module(spec.clone()));
                        }
                    }
                    kind::NAMED_IMPORTS => {
                        for s in named_children(part)
                            .into_iter()
                            .filter(|c| c.kind() == kind::IMPORT_SPECIFIER)
                        {
                            let Some(name) = s.child_by_field_name(field::NAME) else {
                                continue;
                            };
                            let alias = s.child_by_field_name(field::ALIAS).unwrap_or(name);
                            unit.info.imports.insert(
                                t(alias),
                                Import::Symbol {
                                    module: spec.clone(),
                                    name: t(name),
                                },
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Python: the receiver parameter name (`self`/`cls`) visible in a function and its class.
    pub fn python_self(&self, fun: FunId) -> Option<(&str, ClassId)> {
        let mut cur = Some(fun);
        for _ in 0..256 {
            let f = self.funs.get(cur?)?;
            if matches!(f.f.kind, FunctionKind::Method | FunctionKind::Constructor) {
                if f.py_static {
                    return None;
                }
                let class = f.class?;
                let name = f.f.params.first()?;
                return Some((name.as_str(), class));
            }
            if f.f.kind == FunctionKind::Function && f.f.class.is_some() {
                return None;
            }
            cur = f.parent;
        }
        None
    }

    /// Resolves class membership, canonical keys and base classes after the walk.
    fn link(&mut self) {
        // Members: functions whose class was not set by the walk (C++ out-of-class bodies).
        for id in 0..self.funs.len() {
            let Some(fun) = self.funs.get(id) else {
                continue;
            };
            let cls = if fun.class.is_some() {
                fun.class
            } else {
                match fun.f.class.clone() {
                    Some(c) => self.class_for_member(fun.unit, &c),
                    None => None,
                }
            };
            let simple = fun.f.simple_name.clone();
            let lang = self
                .units
                .get(fun.unit)
                .map(|u| u.lang)
                .unwrap_or(Language::Python);
            let key = match cls.and_then(|c| self.classes.get(c)) {
                Some(c) => join(sep(lang), &c.qname, &simple),
                None => fun.f.name.clone(),
            };
            let key = if lang == Language::Cpp {
                strip_anon(&key)
            } else {
                key
            };
            if let Some(fun) = self.funs.get_mut(id) {
                fun.class = cls;
                fun.key = key.clone();
                if fun.f.name.contains("(anonymous namespace)") {
                    fun.file_local = true;
                }
            }
            if let Some(c) = cls.and_then(|c| self.classes.get_mut(c)) {
                c.methods.entry(simple).or_default().push(id);
            }
            self.by_key.entry(key).or_default().push(id);
        }
        // Solidity `contract A is B(x)`: the base constructor call belongs to A's constructor.
        for c in &self.classes {
            let Some(&ctor) = c.methods.get("constructor").and_then(|m| m.first()) else {
                continue;
            };
            for &spec in &c.base_ctor_specs {
                self.sites.push(Site {
                    fun: ctor,
                    node: spec,
                    kind: SiteKind::BaseSpec,
                });
            }
        }
    }

    /// The class a member function belongs to, given the written class name.
    fn class_for_member(&self, unit: usize, qname: &str) -> Option<ClassId> {
        // `template <class T> void Box<T>::put()` is a member of `Box`.
        let stripped: String;
        let qname = if qname.contains('<') {
            stripped = split_cpp(qname)
                .iter()
                .map(|s| strip_template(s))
                .collect::<Vec<_>>()
                .join("::");
            stripped.as_str()
        } else {
            qname
        };
        let cands = self.class_by_qname.get(qname).cloned().unwrap_or_default();
        if let Some(c) = cands
            .iter()
            .find(|&&c| self.classes.get(c).is_some_and(|c| c.unit == unit))
        {
            return Some(*c);
        }
        if let Some(c) = cands.first() {
            return Some(*c);
        }
        let lang = self.units.get(unit)?.lang;
        if lang != Language::Cpp {
            return None;
        }
        // `using namespace ns; void A::f() {}` defines a member of `ns::A`.
        let suffix = format!("::{qname}");
        let found: Vec<ClassId> = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.qname.ends_with(&suffix))
            .map(|(i, _)| i)
            .collect();
        match found.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }
}

/// Drops `(anonymous namespace)` segments from a C++ qualified name.
impl Index<'_> {
    /// Per unit, a hash of everything that resolving a call site of *another* unit can read
    /// from it: the unit's path, module, imports and other unit facts, module variables, its
    /// functions (names, signatures, parameters and their types, return types, nesting, class
    /// membership, flags) and classes (bases, fields, methods), field facts it contributes to
    /// any class, and the local facts of the functions that field types and nested classes are
    /// inferred in (with their enclosing functions). Ids are hashed as numbers: they are the
    /// same in two indexes over the same paths when every unit's counts are. Call sites are
    /// not included: a unit's own sites are resolved again whenever it changes.
    ///
    /// Two hashes per unit: `.0` exact, `.1` with the line numbers in the names of anonymous
    /// functions and classes (`<lambda@12>`) left out, so that a new line above a lambda
    /// changes only the first.
    pub fn interface_hashes(&self) -> Vec<(u64, u64)> {
        use std::hash::{Hash, Hasher};
        let mut hs: Vec<Twin> = self.units.iter().map(|_| Twin::default()).collect();
        let text = |unit: usize, n: Node<'_>| -> String {
            match self.units.get(unit) {
                Some(u) => format!("{}:{}", n.kind(), u.file.node_text(n)),
                None => String::new(),
            }
        };
        let fact = |unit: usize, f: &Fact<'_>| -> String {
            match f {
                Fact::Declared(n) => format!("D{}", text(unit, *n)),
                Fact::Value(n) => format!("V{}", text(unit, *n)),
                Fact::OfClass(c) => format!("C{c}"),
                Fact::Opaque => "O".to_string(),
            }
        };
        for (ui, u) in self.units.iter().enumerate() {
            if let Some(h) = hs.get_mut(ui) {
                u.path.hash(h);
                format!("{:?}", u.lang).hash(h);
                u.module.hash(h);
                format!("{:?}", u.info.imports).hash(h);
                u.info.star_imports.hash(h);
                u.info.static_star_imports.hash(h);
                u.info.package.hash(h);
                u.info.using_namespaces.hash(h);
                u.info.using_decls.hash(h);
                for (k, n) in &u.info.type_aliases {
                    (k, text(ui, *n)).hash(h);
                }
                u.info.includes.hash(h);
                u.info.usings.hash(h);
                for (k, facts) in &u.info.module_vars {
                    k.hash(h);
                    for f in facts {
                        fact(ui, f).hash(h);
                    }
                }
            }
        }
        let mut counts: Vec<(usize, usize)> = vec![(0, 0); self.units.len()];
        for (id, fun) in self.funs.iter().enumerate() {
            let Some(h) = hs.get_mut(fun.unit) else {
                continue;
            };
            if let Some(c) = counts.get_mut(fun.unit) {
                c.0 += 1;
            }
            let f = &fun.f;
            id.hash(h);
            h.names(&[&fun.key, &f.name, &f.simple_name]);
            h.names(&[
                f.class.as_deref().unwrap_or("\u{0}"),
                f.container.as_deref().unwrap_or("\u{0}"),
            ]);
            (
                format!("{:?}", f.kind),
                &f.signature,
                &f.params,
                f.body.is_some(),
            )
                .hash(h);
            (fun.parent, fun.class, fun.scope_class).hash(h);
            (fun.min_arity, fun.max_arity, &fun.param_keys).hash(h);
            (fun.file_local, fun.py_static, fun.py_classmethod).hash(h);
            for (name, ty) in &fun.params {
                (name, ty.map(|t| text(fun.unit, t))).hash(h);
            }
            fun.ret_type.map(|t| text(fun.unit, t)).hash(h);
        }
        // Functions whose local facts other units can reach: those field facts and nested
        // classes are evaluated in, and their enclosing functions.
        let mut reach: std::collections::BTreeSet<FunId> = Default::default();
        for (cid, c) in self.classes.iter().enumerate() {
            if let Some(x) = counts.get_mut(c.unit) {
                x.1 += 1;
            }
            let bases: Vec<String> = c.bases_written.iter().map(|b| text(c.unit, *b)).collect();
            let specs: Vec<String> = c.base_ctor_specs.iter().map(|b| text(c.unit, *b)).collect();
            if let Some(h) = hs.get_mut(c.unit) {
                cid.hash(h);
                h.names(&[&c.qname, &c.simple]);
                (bases, c.outer, c.enclosing_fun).hash(h);
                (&c.methods, &c.usings, specs, c.is_interface).hash(h);
            }
            reach.extend(c.enclosing_fun);
            for (name, facts) in &c.fields {
                for (f, fun) in facts {
                    let fu = fun.and_then(|x| self.funs.get(x)).map(|x| x.unit);
                    let rendered = (cid, name, fact(fu.unwrap_or(c.unit), f), *fun);
                    if let Some(h) = hs.get_mut(c.unit) {
                        rendered.hash(h);
                    }
                    if let Some(fu) = fu {
                        if fu != c.unit {
                            if let Some(h) = hs.get_mut(fu) {
                                rendered.hash(h);
                            }
                        }
                    }
                    reach.extend(*fun);
                }
            }
        }
        let mut closed: std::collections::BTreeSet<FunId> = Default::default();
        for f in reach {
            let mut cur = Some(f);
            while let Some(x) = cur {
                if !closed.insert(x) {
                    break;
                }
                cur = self.funs.get(x).and_then(|g| g.parent);
            }
        }
        for ((fid, name), facts) in &self.locals {
            if !closed.contains(fid) {
                continue;
            }
            let Some(unit) = self.funs.get(*fid).map(|f| f.unit) else {
                continue;
            };
            if let Some(h) = hs.get_mut(unit) {
                (fid, name).hash(h);
                for f in facts {
                    fact(unit, f).hash(h);
                }
            }
        }
        hs.into_iter()
            .zip(counts)
            .map(|(mut h, c)| {
                c.hash(&mut h);
                (h.exact.finish(), h.loose.finish())
            })
            .collect()
    }
}

/// Two hashers fed the same data, except names: `exact` gets them as written, `loose` without
/// the line numbers of anonymous functions and classes.
#[derive(Default)]
struct Twin {
    exact: std::collections::hash_map::DefaultHasher,
    loose: std::collections::hash_map::DefaultHasher,
}

impl std::hash::Hasher for Twin {
    fn finish(&self) -> u64 {
        self.exact.finish()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.exact.write(bytes);
        self.loose.write(bytes);
    }
}

impl Twin {
    fn names(&mut self, names: &[&str]) {
        use std::hash::Hash;
        for n in names {
            n.hash(&mut self.exact);
            without_lines(n).hash(&mut self.loose);
        }
    }
}

/// `a.<lambda@12>.<anonymous Runnable@40>` -> `a.<lambda@>.<anonymous Runnable@>`.
pub(super) fn without_lines(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.contains('@') {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '@' {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

pub(super) fn strip_anon(name: &str) -> String {
    if !name.contains("(anonymous namespace)") {
        return name.to_string();
    }
    split_cpp(name)
        .into_iter()
        .filter(|s| s != "(anonymousnamespace)")
        .collect::<Vec<_>>()
        .join("::")
}

/// Same rules as `syntax::functions` for naming class-like scopes.
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
        if file.language == Language::Cpp && node.child_by_field_name(field::BODY).is_none() {
            return None;
        }
        return Some(
            node.child_by_field_name(field::NAME)
                .map(|n| file.node_text(n).to_string())
                .unwrap_or_else(|| format!("<anonymous@{}>", file.line_of(node.start_byte()))),
        );
    }
    if file.language == Language::Java && kind == kind::CLASS_BODY {
        if let Some(parent) = node.parent() {
            if parent.kind() == kind::OBJECT_CREATION_EXPRESSION {
                let ty = parent
                    .child_by_field_name(field::TYPE)
                    .map(|n| file.node_text(n))
                    .unwrap_or("Object");
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

/// The written base classes of a class-like node, in declaration order (superclass first).
fn class_bases<'t>(file: &ParsedFile, node: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    match file.language {
        Language::Python => {
            if let Some(args) = node.child_by_field_name(field::SUPERCLASSES) {
                out.extend(
                    named_children(args)
                        .into_iter()
                        .filter(|c| c.kind() != kind::KEYWORD_ARGUMENT),
                );
            }
        }
        Language::Java => {
            if let Some(s) = node.child_by_field_name(field::SUPERCLASS) {
                out.extend(named_children(s));
            }
            for field in [field::INTERFACES] {
                if let Some(i) = node.child_by_field_name(field) {
                    for tl in named_children(i) {
                        out.extend(named_children(tl));
                    }
                }
            }
            for c in named_children(node)
                .into_iter()
                .filter(|c| c.kind() == kind::EXTENDS_INTERFACES)
            {
                for tl in named_children(c) {
                    out.extend(named_children(tl));
                }
            }
            if let Some(parent) = node.parent().filter(|_| node.kind() == kind::CLASS_BODY) {
                if let Some(t) = parent.child_by_field_name(field::TYPE) {
                    out.push(t);
                }
            }
        }
        Language::Cpp => {
            for clause in named_children(node)
                .into_iter()
                .filter(|c| c.kind() == kind::BASE_CLASS_CLAUSE)
            {
                out.extend(
                    named_children(clause)
                        .into_iter()
                        .filter(|c| !matches!(c.kind(), kind::ACCESS_SPECIFIER | kind::VIRTUAL)),
                );
            }
        }
        Language::Solidity => {
            for spec in named_children(node)
                .into_iter()
                .filter(|c| c.kind() == kind::INHERITANCE_SPECIFIER)
            {
                if let Some(a) = spec.child_by_field_name(field::ANCESTOR) {
                    out.push(a);
                }
            }
        }
        Language::JavaScript | Language::TypeScript => {
            for h in named_children(node)
                .into_iter()
                .filter(|c| c.kind() == kind::CLASS_HERITAGE)
            {
                for part in named_children(h) {
                    match part.kind() {
                        kind::EXTENDS_CLAUSE => {
                            if let Some(v) = part.child_by_field_name(field::VALUE) {
                                out.push(v);
                            }
                        }
                        kind::IMPLEMENTS_CLAUSE => {}
                        _ => out.push(part),
                    }
                }
            }
        }
        Language::C => {}
    }
    out
}

/// The identifier a C/C++ declarator declares, when it declares an object (not an array).
fn declarator_name(file: &ParsedFile, mut node: Node<'_>) -> Option<String> {
    for _ in 0..16 {
        match node.kind() {
            kind::IDENTIFIER | kind::FIELD_IDENTIFIER => {
                return Some(file.node_text(node).to_string())
            }
            kind::POINTER_DECLARATOR
            | kind::REFERENCE_DECLARATOR
            | kind::INIT_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR => {
                node = node
                    .child_by_field_name(field::DECLARATOR)
                    .or_else(|| named_children(node).into_iter().last())?;
            }
            _ => return None,
        }
    }
    None
}

type SigFacts<'t> = (
    usize,
    Option<usize>,
    Vec<(String, Option<Node<'t>>)>,
    Vec<Option<String>>,
    Option<Node<'t>>,
);

/// Arity bounds, parameter names with written types, and the written return type.
fn signature_facts<'t>(file: &'t ParsedFile, f: &Function<'t>) -> SigFacts<'t> {
    let node = f.node;
    let lang = file.language;
    let params_node = match lang {
        Language::C | Language::Cpp => {
            let mut d = node.child_by_field_name(field::DECLARATOR);
            let mut found = None;
            for _ in 0..32 {
                let Some(n) = d else { break };
                if matches!(
                    n.kind(),
                    kind::FUNCTION_DECLARATOR | kind::ABSTRACT_FUNCTION_DECLARATOR
                ) {
                    found = n.child_by_field_name(field::PARAMETERS);
                    break;
                }
                d = n.child_by_field_name(field::DECLARATOR);
            }
            found
        }
        Language::Solidity => Some(node),
        _ => node
            .child_by_field_name(field::PARAMETERS)
            .or_else(|| node.child_by_field_name(field::PARAMETER)),
    };
    let mut min = 0usize;
    let mut max = Some(0usize);
    let mut params = Vec::new();
    let mut keys = Vec::new();
    if let Some(pn) = params_node {
        let kids = if pn.kind() == kind::IDENTIFIER {
            vec![pn]
        } else {
            named_children(pn)
        };
        // C++ spells a bare `...` as an anonymous token of the parameter list (C as a
        // `variadic_parameter` node, below).
        if matches!(lang, Language::C | Language::Cpp) {
            let mut c = pn.walk();
            if pn
                .children(&mut c)
                .any(|k| !k.is_named() && k.kind() == "...")
            {
                max = None;
            }
        }
        for p in kids {
            let k = p.kind();
            let (counts, optional, variadic) = match (lang, k) {
                (Language::Solidity, kind::PARAMETER) => (true, false, false),
                (Language::Solidity, _) => (false, false, false),
                (Language::Python, kind::IDENTIFIER | kind::TYPED_PARAMETER) => {
                    let t = file.node_text(p);
                    if t.starts_with('*') {
                        (false, false, true)
                    } else {
                        (true, false, false)
                    }
                }
                (Language::Python, kind::DEFAULT_PARAMETER | kind::TYPED_DEFAULT_PARAMETER) => {
                    (true, true, false)
                }
                (Language::Python, kind::LIST_SPLAT_PATTERN | kind::DICTIONARY_SPLAT_PATTERN) => {
                    (false, false, true)
                }
                (Language::Python, _) => (false, false, false),
                (Language::Java, kind::FORMAL_PARAMETER) => (true, false, false),
                (Language::Java, kind::SPREAD_PARAMETER) => (false, false, true),
                (Language::Java, _) => (false, false, false),
                (Language::C | Language::Cpp, kind::PARAMETER_DECLARATION) => {
                    let t = file.node_text(p).trim().to_string();
                    (t != "void", false, false)
                }
                (Language::C | Language::Cpp, kind::OPTIONAL_PARAMETER_DECLARATION) => {
                    (true, true, false)
                }
                (
                    Language::C | Language::Cpp,
                    kind::VARIADIC_PARAMETER | kind::VARIADIC_PARAMETER_DECLARATION,
                ) => (false, false, true),
                (Language::C | Language::Cpp, _) => (false, false, false),
                (_, kind::REST_PATTERN) => (false, false, true),
                (_, kind::OPTIONAL_PARAMETER | kind::ASSIGNMENT_PATTERN) => (true, true, false),
                (
                    _,
                    kind::IDENTIFIER
                    | kind::REQUIRED_PARAMETER
                    | kind::OBJECT_PATTERN
                    | kind::ARRAY_PATTERN,
                ) => {
                    let t = file.node_text(p);
                    if t.starts_with("...") {
                        (false, false, true)
                    } else {
                        (true, false, false)
                    }
                }
                _ => (false, false, false),
            };
            if variadic {
                max = None;
                if lang == Language::Python {
                    if let Some(n) = named_children(p)
                        .into_iter()
                        .find(|c| c.kind() == kind::IDENTIFIER)
                    {
                        params.push((file.node_text(n).to_string(), None));
                    }
                }
                continue;
            }
            if !counts {
                continue;
            }
            if !optional {
                min += 1;
            }
            max = max.map(|m| m + 1);
            let name = param_name(file, p).unwrap_or_default();
            let ty = match lang {
                Language::Python => p.child_by_field_name(field::TYPE),
                Language::JavaScript | Language::TypeScript => p.child_by_field_name(field::TYPE),
                _ => p.child_by_field_name(field::TYPE),
            };
            let key = ty.and_then(|t| {
                let mut text = file.node_text(t).to_string();
                if matches!(lang, Language::C | Language::Cpp) {
                    match p.child_by_field_name(field::DECLARATOR).map(|d| d.kind()) {
                        Some(kind::POINTER_DECLARATOR | kind::ABSTRACT_POINTER_DECLARATOR) => {
                            text.push('*')
                        }
                        Some(kind::ARRAY_DECLARATOR | kind::ABSTRACT_ARRAY_DECLARATOR) => {
                            text.push_str("[]")
                        }
                        _ => {}
                    }
                }
                overload_key(&text, lang)
            });
            keys.push(key);
            params.push((name, ty));
        }
    }
    // Python receivers are not passed explicitly.
    if lang == Language::Python
        && matches!(f.kind, FunctionKind::Method | FunctionKind::Constructor)
        && !python_decorators(file, f).0
        && !params.is_empty()
    {
        min = min.saturating_sub(1);
        max = max.map(|m| m.saturating_sub(1));
    }
    let ret = match lang {
        Language::Python | Language::JavaScript | Language::TypeScript => {
            node.child_by_field_name(field::RETURN_TYPE)
        }
        Language::Java => node.child_by_field_name(field::TYPE),
        Language::C | Language::Cpp => {
            // `Foo *make()` returns a Foo pointer; the type node is enough for class lookup.
            node.child_by_field_name(field::TYPE)
        }
        Language::Solidity => node.child_by_field_name(field::RETURN_TYPE).and_then(|r| {
            let ps = named_children(r);
            match ps.as_slice() {
                [one] => one.child_by_field_name(field::TYPE),
                _ => None,
            }
        }),
    };
    (min, max, params, keys, ret)
}

fn param_name(file: &ParsedFile, p: Node<'_>) -> Option<String> {
    let mut node = p;
    for _ in 0..16 {
        if matches!(node.kind(), kind::IDENTIFIER | kind::FIELD_IDENTIFIER) {
            return Some(file.node_text(node).to_string());
        }
        node = node
            .child_by_field_name(field::NAME)
            .or_else(|| node.child_by_field_name(field::DECLARATOR))
            .or_else(|| node.child_by_field_name(field::PATTERN))
            .or_else(|| node.child_by_field_name(field::LEFT))
            .or_else(|| {
                named_children(node)
                    .into_iter()
                    .find(|c| c.kind() == kind::IDENTIFIER)
            })?;
    }
    None
}

fn is_file_local(file: &ParsedFile, f: &Function<'_>) -> bool {
    if !matches!(file.language, Language::C | Language::Cpp) || f.class.is_some() {
        return false;
    }
    named_children(f.node)
        .iter()
        .any(|c| c.kind() == kind::STORAGE_CLASS_SPECIFIER && file.node_text(*c) == "static")
}

fn python_decorators(file: &ParsedFile, f: &Function<'_>) -> (bool, bool) {
    if file.language != Language::Python {
        return (false, false);
    }
    let Some(parent) = f
        .node
        .parent()
        .filter(|p| p.kind() == kind::DECORATED_DEFINITION)
    else {
        return (false, false);
    };
    let decos: Vec<String> = named_children(parent)
        .into_iter()
        .filter(|c| c.kind() == kind::DECORATOR)
        .map(|d| file.node_text(d).trim().to_string())
        .collect();
    (
        decos.iter().any(|d| d == "@staticmethod"),
        decos.iter().any(|d| d == "@classmethod"),
    )
}

/// True when `node` is (after unwrapping) the definition node of a collected function.
pub(super) fn fun_at(ix: &Index<'_>, node: Node<'_>) -> Option<FunId> {
    ix.fun_by_node.get(&unwrap_expr(node).id()).copied()
}

/// Normalised type name of a written type node.
pub(super) fn type_name(file: &ParsedFile, node: Node<'_>) -> Option<String> {
    norm_type(file.node_text(node), file.language)
}
