//! Is a C/C++ format argument built from constants? The question `format-string-not-literal`
//! asks before it reports (`printf(data)` right after `strcpy(data, "fixed")` is not a finding).
//!
//! A flow-insensitive look at every write the file shows to the names an expression reads:
//! declarations with initialisers, assignments (also through `*p`, `p[i]` and `p->f`), calls that
//! write into an argument (the taint spec's propagators, `strcpy(d, s)` copies `s` into `d`, and
//! its sources, `fgets(d, ...)` fills `d` with input), calls of functions defined in the file
//! (what they write into that parameter), method calls on a container (`v.push_back(x)` stores
//! `x`). Names joined by pointer assignments (`data = dataBuffer`) are one buffer. A parameter's
//! value is the join of the arguments at the file's call sites of its function; a global's, the
//! join of its writes in every function.
//!
//! The answer is one of three: [`Constness::Constant`] (every write seen is a constant),
//! [`Constness::Runtime`] (some write is input the spec names as a source, or the parameters of
//! `main`), [`Constness::Unknown`] (a value we cannot see: a parameter without call sites in the
//! file, an `extern`, a struct field, the result of a function we know nothing about). Only
//! `Runtime` is evidence of a runtime format; the lint stays quiet otherwise and leaves flows
//! it cannot see (other files, fields) to the taint analysis. The spec is the builtin one of the
//! file's language (a user's extra sources are not consulted here).
//!
//! Bounded: the index is built in one walk of the tree; every question spends fuel from a
//! per-file budget, and an exhausted budget answers `Runtime` (the lint reports, as it did
//! before this check existed).

use super::taint::spec::{ArgSel, CallShape, Seg, TaintSpec};
use crate::syntax::lang::{field, kind};
use crate::syntax::preproc::opens_file_scope;
use crate::syntax::{Language, ParsedFile};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use tree_sitter::Node;

/// What the writes to an expression's names say about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Constness {
    /// Every write seen is a literal, a macro constant, a fresh buffer or a copy of such.
    Constant,
    /// Some value is out of sight (no call sites, `extern`, a field, an unmodelled call).
    Unknown,
    /// Some write is program input (a spec source, `main`'s parameters).
    Runtime,
}

impl Constness {
    fn join(self, other: Constness) -> Constness {
        self.max(other)
    }
}

/// Fuel for one file's questions; past it every answer is `Runtime`.
const FILE_FUEL: usize = 400_000;
/// Recursion bound through names, call sites and callees.
const MAX_DEPTH: usize = 48;

#[derive(Debug, Clone)]
enum Write<'t> {
    /// The written value (evaluated in the function that holds the write).
    Expr(Node<'t>),
    /// The join of these values (a copy or formatting call, a container insertion).
    Args(Vec<Node<'t>>),
    /// Program input.
    Runtime,
    /// Whatever function `fun` writes into its parameter `param`.
    Callee { fun: usize, param: usize },
}

#[derive(Debug, Default)]
struct Fun<'t> {
    /// Simple name when callers can be found by it (not a method or a qualified name).
    name: Option<String>,
    is_main: bool,
    params: Vec<String>,
    locals: HashSet<String>,
    aliases: HashMap<String, Vec<String>>,
    writes: HashMap<String, Vec<Write<'t>>>,
    returns: Vec<Node<'t>>,
}

/// The per-file index; build it once with [`FormatConstness::new`], then ask
/// [`FormatConstness::of`] for each format argument.
pub struct FormatConstness<'t> {
    file: &'t ParsedFile,
    spec: &'static TaintSpec,
    funs: Vec<Fun<'t>>,
    by_start: HashMap<usize, usize>,
    by_name: HashMap<String, Vec<usize>>,
    /// Call sites by callee simple name: (calling function, argument nodes).
    calls: HashMap<String, Vec<(usize, Vec<Node<'t>>)>>,
    /// Defined functions whose name is used as a value (`fp = f`): call sites unknown.
    address_taken: HashSet<String>,
    globals: HashSet<String>,
    externs: HashSet<String>,
    global_inits: HashMap<String, Vec<Node<'t>>>,
    fuel: Cell<usize>,
}

fn builtin_spec(language: Language) -> &'static TaintSpec {
    static C: OnceLock<TaintSpec> = OnceLock::new();
    static CPP: OnceLock<TaintSpec> = OnceLock::new();
    match language {
        Language::Cpp => CPP.get_or_init(|| TaintSpec::builtin(Language::Cpp)),
        _ => C.get_or_init(|| TaintSpec::builtin(Language::C)),
    }
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| !k.kind().contains(kind::COMMENT))
        .collect()
}

/// The identifier a declarator declares (`*p`, `buf[10]`, `&r`, `(*fp)(int)`).
fn declarator_name<'t>(file: &'t ParsedFile, mut d: Node<'t>) -> Option<&'t str> {
    for _ in 0..32 {
        match d.kind() {
            kind::IDENTIFIER | kind::FIELD_IDENTIFIER => return Some(file.node_text(d)),
            kind::POINTER_DECLARATOR
            | kind::ARRAY_DECLARATOR
            | kind::INIT_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR
            | kind::FUNCTION_DECLARATOR
            | kind::REFERENCE_DECLARATOR => {
                d = match d.child_by_field_name(field::DECLARATOR) {
                    Some(x) => x,
                    None => *named_children(d).first()?,
                };
            }
            _ => return None,
        }
    }
    None
}

/// The function declarator of a definition (through `char *f(...)`).
fn function_declarator(def: Node<'_>) -> Option<Node<'_>> {
    let mut d = def.child_by_field_name(field::DECLARATOR)?;
    for _ in 0..16 {
        if d.kind() == kind::FUNCTION_DECLARATOR {
            return Some(d);
        }
        d = d.child_by_field_name(field::DECLARATOR)?;
    }
    None
}

/// The buffer an argument or assignment target points into: `p`, `p + n`, `(char *)p`, `&p[i]`,
/// `*p`, `p[i]`, `p->f`, `p.f`.
fn base_name<'t>(file: &'t ParsedFile, mut e: Node<'t>) -> Option<&'t str> {
    for _ in 0..32 {
        match e.kind() {
            kind::IDENTIFIER => return Some(file.node_text(e)),
            kind::PARENTHESIZED_EXPRESSION => e = *named_children(e).first()?,
            kind::CAST_EXPRESSION => e = e.child_by_field_name(field::VALUE)?,
            kind::POINTER_EXPRESSION | kind::SUBSCRIPT_EXPRESSION => {
                e = e.child_by_field_name(field::ARGUMENT)?
            }
            kind::FIELD_EXPRESSION => e = e.child_by_field_name(field::ARGUMENT)?,
            kind::BINARY_EXPRESSION => {
                let op = e.child_by_field_name(field::OPERATOR).map(|o| o.kind());
                if !matches!(op, Some("+" | "-")) {
                    return None;
                }
                e = e.child_by_field_name(field::LEFT)?;
            }
            _ => return None,
        }
    }
    None
}

/// The name a pointer value aliases (`dataBuffer`, `buf + 1`, `&buf[0]`, `(char *)buf`): not
/// `*p` or `p[i]`, which read one element.
fn alias_name<'t>(file: &'t ParsedFile, mut e: Node<'t>) -> Option<&'t str> {
    for _ in 0..32 {
        match e.kind() {
            kind::IDENTIFIER => return Some(file.node_text(e)),
            kind::PARENTHESIZED_EXPRESSION => e = *named_children(e).first()?,
            kind::CAST_EXPRESSION => e = e.child_by_field_name(field::VALUE)?,
            kind::POINTER_EXPRESSION => {
                let op = e.child_by_field_name(field::OPERATOR).map(|o| o.kind());
                if op != Some("&") {
                    return None;
                }
                let a = e.child_by_field_name(field::ARGUMENT)?;
                e = if a.kind() == kind::SUBSCRIPT_EXPRESSION {
                    a.child_by_field_name(field::ARGUMENT)?
                } else {
                    a
                };
            }
            kind::BINARY_EXPRESSION => {
                let op = e.child_by_field_name(field::OPERATOR).map(|o| o.kind());
                if !matches!(op, Some("+" | "-")) {
                    return None;
                }
                e = e.child_by_field_name(field::LEFT)?;
            }
            _ => return None,
        }
    }
    None
}

/// The simple callee name of a call (`strcpy`, `std::strcpy` -> `strcpy`), None for methods.
fn callee_name<'t>(file: &'t ParsedFile, call: Node<'t>) -> Option<&'t str> {
    let f = call.child_by_field_name(field::FUNCTION)?;
    match f.kind() {
        kind::IDENTIFIER => Some(file.node_text(f)),
        kind::QUALIFIED_IDENTIFIER => {
            let t = file.node_text(f);
            Some(t.rsplit("::").next().unwrap_or(t).trim())
        }
        _ => None,
    }
}

fn call_args(call: Node<'_>) -> Vec<Node<'_>> {
    call.child_by_field_name(field::ARGUMENTS)
        .map(named_children)
        .unwrap_or_default()
}

fn is_macro_like(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl<'t> FormatConstness<'t> {
    /// Indexes the file's functions, globals, writes and call sites (one walk).
    pub fn new(file: &'t ParsedFile) -> FormatConstness<'t> {
        let mut ix = FormatConstness {
            file,
            spec: builtin_spec(file.language),
            funs: Vec::new(),
            by_start: HashMap::new(),
            by_name: HashMap::new(),
            calls: HashMap::new(),
            address_taken: HashSet::new(),
            globals: HashSet::new(),
            externs: HashSet::new(),
            global_inits: HashMap::new(),
            fuel: Cell::new(FILE_FUEL),
        };
        // Pass 1: definitions and file-scope declarations, through namespaces, `extern "C"`,
        // class bodies and preprocessor arms.
        let mut defs: Vec<Node<'t>> = Vec::new();
        let mut stack = vec![file.root()];
        while let Some(n) = stack.pop() {
            match n.kind() {
                kind::FUNCTION_DEFINITION => defs.push(n),
                kind::DECLARATION => {
                    let is_extern = named_children(n).iter().any(|k| {
                        k.kind() == kind::STORAGE_CLASS_SPECIFIER && file.node_text(*k) == "extern"
                    });
                    for d in named_children(n) {
                        let Some(name) = declarator_name(file, d) else {
                            continue;
                        };
                        if d.kind() == kind::FUNCTION_DECLARATOR {
                            continue;
                        }
                        ix.globals.insert(name.to_string());
                        if is_extern {
                            ix.externs.insert(name.to_string());
                        }
                        if d.kind() == kind::INIT_DECLARATOR {
                            if let Some(v) = d.child_by_field_name(field::VALUE) {
                                ix.global_inits.entry(name.to_string()).or_default().push(v);
                            }
                        }
                    }
                }
                k if opens_file_scope(k)
                    || matches!(
                        k,
                        kind::CLASS_SPECIFIER
                            | kind::STRUCT_SPECIFIER
                            | kind::FIELD_DECLARATION_LIST
                            | kind::TEMPLATE_DECLARATION
                    ) =>
                {
                    stack.extend(named_children(n).into_iter().rev())
                }
                _ => {}
            }
        }
        for def in &defs {
            let mut fun = Fun::default();
            if let Some(fd) = function_declarator(*def) {
                if let Some(d) = fd.child_by_field_name(field::DECLARATOR) {
                    if d.kind() == kind::IDENTIFIER {
                        let name = file.node_text(d).to_string();
                        fun.is_main = matches!(name.as_str(), "main" | "wmain");
                        fun.name = Some(name);
                    }
                }
                if let Some(ps) = fd.child_by_field_name(field::PARAMETERS) {
                    for p in named_children(ps) {
                        if p.kind() == kind::VARIADIC_PARAMETER {
                            break;
                        }
                        let name = p
                            .child_by_field_name(field::DECLARATOR)
                            .and_then(|d| declarator_name(file, d))
                            .unwrap_or("");
                        fun.params.push(name.to_string());
                    }
                }
            }
            let i = ix.funs.len();
            if let Some(n) = &fun.name {
                ix.by_name.entry(n.clone()).or_default().push(i);
            }
            ix.by_start.insert(def.start_byte(), i);
            ix.funs.push(fun);
        }
        // Pass 2: each body's declarations, writes, returns and call sites.
        for (i, def) in defs.iter().enumerate() {
            if let Some(body) = def.child_by_field_name(field::BODY) {
                ix.index_body(i, body);
            }
        }
        ix
    }

    fn index_body(&mut self, fi: usize, body: Node<'t>) {
        let file = self.file;
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            match n.kind() {
                kind::DECLARATION => {
                    for d in named_children(n) {
                        let Some(name) = declarator_name(file, d) else {
                            continue;
                        };
                        self.funs[fi].locals.insert(name.to_string());
                        if d.kind() == kind::INIT_DECLARATOR {
                            if let Some(v) = d.child_by_field_name(field::VALUE) {
                                self.write(fi, name, Write::Expr(v));
                                if let Some(a) = alias_name(file, v) {
                                    self.alias(fi, name, a);
                                }
                            }
                        }
                    }
                }
                kind::ASSIGNMENT_EXPRESSION => {
                    if let (Some(l), Some(r)) = (
                        n.child_by_field_name(field::LEFT),
                        n.child_by_field_name(field::RIGHT),
                    ) {
                        if let Some(b) = base_name(file, l) {
                            self.write(fi, b, Write::Expr(r));
                            if l.kind() == kind::IDENTIFIER {
                                if let Some(a) = alias_name(file, r) {
                                    self.alias(fi, b, a);
                                }
                            }
                        }
                    }
                }
                kind::BINARY_EXPRESSION => {
                    // `std::cin >> buf` reads input into buf.
                    let op = n.child_by_field_name(field::OPERATOR).map(|o| o.kind());
                    if op == Some(">>") {
                        if let Some(b) = n
                            .child_by_field_name(field::RIGHT)
                            .and_then(|r| base_name(file, r))
                        {
                            self.write(fi, b, Write::Runtime);
                        }
                    }
                }
                kind::RETURN_STATEMENT => {
                    if let Some(v) = named_children(n).first() {
                        self.funs[fi].returns.push(*v);
                    }
                }
                kind::CALL_EXPRESSION => self.index_call(fi, n),
                kind::IDENTIFIER => {
                    // A defined function used as a value: its call sites are unknown.
                    let name = file.node_text(n);
                    if self.by_name.contains_key(name) {
                        let is_callee = n.parent().is_some_and(|p| {
                            p.kind() == kind::CALL_EXPRESSION
                                && p.child_by_field_name(field::FUNCTION) == Some(n)
                        });
                        if !is_callee {
                            self.address_taken.insert(name.to_string());
                        }
                    }
                }
                _ => {}
            }
            let mut c = n.walk();
            let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
    }

    fn index_call(&mut self, fi: usize, call: Node<'t>) {
        let file = self.file;
        let args = call_args(call);
        let Some(f) = call.child_by_field_name(field::FUNCTION) else {
            return;
        };
        if f.kind() == kind::FIELD_EXPRESSION {
            // `v.push_back(x)`, `m.insert(k, x)`, `s.append(x)`: the container holds the arguments.
            if let Some(b) = f
                .child_by_field_name(field::ARGUMENT)
                .and_then(|r| base_name(file, r))
            {
                if !args.is_empty() {
                    self.write(fi, b, Write::Args(args.clone()));
                }
            }
            return;
        }
        let Some(name) = callee_name(file, call) else {
            return;
        };
        if let Some(targets) = self.by_name.get(name).cloned() {
            for (i, a) in args.iter().enumerate() {
                if let Some(b) = base_name(file, *a) {
                    for &t in &targets {
                        if i < self.funs[t].params.len() {
                            self.write(fi, b, Write::Callee { fun: t, param: i });
                        }
                    }
                }
            }
            self.calls
                .entry(name.to_string())
                .or_default()
                .push((fi, args));
            return;
        }
        let path = [Seg {
            name: name.to_string(),
            call: true,
        }];
        let shape = CallShape {
            path: &path,
            receiver_type: None,
            is_new: false,
        };
        let spec = self.spec;
        for s in &spec.sources {
            if s.out_args.is_empty() || !s.calls.iter().any(|p| p.matches(&shape)) {
                continue;
            }
            for (i, a) in args.iter().enumerate() {
                if s.out_args.iter().any(|sel| sel.selects_arg(i)) {
                    if let Some(b) = base_name(file, *a) {
                        self.write(fi, b, Write::Runtime);
                    }
                }
            }
        }
        for p in &spec.propagators {
            if !p.calls.iter().any(|c| c.matches(&shape)) {
                continue;
            }
            let from: Vec<Node<'t>> = args
                .iter()
                .enumerate()
                .filter(|(i, _)| p.from.iter().any(|s| s.selects_arg(*i)))
                .map(|(_, a)| *a)
                .collect();
            for (i, a) in args.iter().enumerate() {
                if p.to.iter().any(|sel| sel.selects_arg(i)) {
                    if let Some(b) = base_name(file, *a) {
                        self.write(fi, b, Write::Args(from.clone()));
                    }
                }
            }
        }
    }

    fn write(&mut self, fi: usize, name: &str, w: Write<'t>) {
        self.funs[fi]
            .writes
            .entry(name.to_string())
            .or_default()
            .push(w);
    }

    fn alias(&mut self, fi: usize, a: &str, b: &str) {
        if a == b {
            return;
        }
        let al = &mut self.funs[fi].aliases;
        al.entry(a.to_string()).or_default().push(b.to_string());
        al.entry(b.to_string()).or_default().push(a.to_string());
    }

    fn spend(&self) -> bool {
        let f = self.fuel.get();
        if f == 0 {
            return false;
        }
        self.fuel.set(f - 1);
        true
    }

    /// The constness of `expr`, a node inside a function definition of the indexed file.
    pub fn of(&self, expr: Node<'t>) -> Constness {
        let mut p = expr.parent();
        let mut fi = None;
        while let Some(n) = p {
            if n.kind() == kind::FUNCTION_DEFINITION {
                fi = self.by_start.get(&n.start_byte()).copied();
                break;
            }
            p = n.parent();
        }
        let mut seen = HashSet::new();
        self.expr(fi, expr, &mut seen, 0)
    }

    fn expr(
        &self,
        fi: Option<usize>,
        e: Node<'t>,
        seen: &mut HashSet<(Option<usize>, String)>,
        depth: usize,
    ) -> Constness {
        if depth > MAX_DEPTH || !self.spend() {
            return Constness::Runtime;
        }
        let file = self.file;
        match e.kind() {
            kind::STRING_LITERAL
            | kind::CONCATENATED_STRING
            | kind::RAW_STRING_LITERAL
            | kind::CHAR_LITERAL
            | kind::NUMBER_LITERAL
            | kind::NULL
            | "nullptr"
            | kind::TRUE
            | kind::FALSE
            | kind::SIZEOF_EXPRESSION
            | kind::NEW_EXPRESSION => Constness::Constant,
            kind::IDENTIFIER => self.name(fi, file.node_text(e), seen, depth + 1),
            kind::PARENTHESIZED_EXPRESSION
            | kind::INITIALIZER_LIST
            | kind::ARGUMENT_LIST
            | kind::CONDITIONAL_EXPRESSION
            | kind::COMMA_EXPRESSION
            | kind::BINARY_EXPRESSION
            | kind::UNARY_EXPRESSION
            | kind::POINTER_EXPRESSION
            | kind::SUBSCRIPT_EXPRESSION
            | kind::UPDATE_EXPRESSION
            | kind::SUBSCRIPT_ARGUMENT_LIST => {
                let mut v = Constness::Constant;
                for k in named_children(e) {
                    v = v.join(self.expr(fi, k, seen, depth + 1));
                    if v == Constness::Runtime {
                        break;
                    }
                }
                v
            }
            kind::CAST_EXPRESSION => match e.child_by_field_name(field::VALUE) {
                Some(v) => self.expr(fi, v, seen, depth + 1),
                None => Constness::Unknown,
            },
            kind::CALL_EXPRESSION => self.call_value(fi, e, seen, depth),
            _ => Constness::Unknown,
        }
    }

    /// The value of a call: wrappers of literals, allocations, copies, the file's own functions.
    fn call_value(
        &self,
        fi: Option<usize>,
        call: Node<'t>,
        seen: &mut HashSet<(Option<usize>, String)>,
        depth: usize,
    ) -> Constness {
        let file = self.file;
        let args = call_args(call);
        let Some(f) = call.child_by_field_name(field::FUNCTION) else {
            return Constness::Unknown;
        };
        if f.kind() == kind::FIELD_EXPRESSION {
            // `s.c_str()`, `v.data()`, `v[2]`-style reads: the container's value.
            let method = f
                .child_by_field_name(field::FIELD)
                .map(|m| file.node_text(m))
                .unwrap_or("");
            return match (method, f.child_by_field_name(field::ARGUMENT)) {
                (
                    "c_str" | "data" | "begin" | field::END | "front" | "back" | "at" | "get",
                    Some(r),
                ) => self.expr(fi, r, seen, depth + 1),
                _ => Constness::Unknown,
            };
        }
        let Some(name) = callee_name(file, call) else {
            return Constness::Unknown;
        };
        if matches!(name, "malloc" | "calloc" | "alloca" | "_alloca" | "realloc") {
            // A fresh buffer: its contents are what is written into it.
            return if name == "realloc" {
                args.first()
                    .map_or(Constness::Constant, |a| self.expr(fi, *a, seen, depth + 1))
            } else {
                Constness::Constant
            };
        }
        if let Some(targets) = self.by_name.get(name) {
            let mut v = Constness::Constant;
            for &t in targets {
                if !seen.insert((Some(t), "#return".to_string())) {
                    continue;
                }
                for r in &self.funs[t].returns {
                    v = v.join(self.expr(Some(t), *r, seen, depth + 1));
                }
            }
            return v;
        }
        let path = [Seg {
            name: name.to_string(),
            call: true,
        }];
        let shape = CallShape {
            path: &path,
            receiver_type: None,
            is_new: false,
        };
        if self
            .spec
            .sources
            .iter()
            .any(|s| s.out_args.is_empty() && s.calls.iter().any(|p| p.matches(&shape)))
        {
            return Constness::Runtime;
        }
        // gettext-style wrappers around a literal: `_("...")`, `gettext("...")`.
        if args.len() == 1 && args[0].kind() == kind::STRING_LITERAL {
            return Constness::Constant;
        }
        for p in &self.spec.propagators {
            if p.to.contains(&ArgSel::Return) && p.calls.iter().any(|c| c.matches(&shape)) {
                let mut v = Constness::Constant;
                for (i, a) in args.iter().enumerate() {
                    if p.from.iter().any(|s| s.selects_arg(i))
                        || p.to.iter().any(|s| s.selects_arg(i))
                    {
                        v = v.join(self.expr(fi, *a, seen, depth + 1));
                    }
                }
                return v;
            }
        }
        Constness::Unknown
    }

    fn name(
        &self,
        fi: Option<usize>,
        name: &str,
        seen: &mut HashSet<(Option<usize>, String)>,
        depth: usize,
    ) -> Constness {
        if !seen.insert((fi, name.to_string())) {
            return Constness::Constant;
        }
        if depth > MAX_DEPTH {
            return Constness::Runtime;
        }
        if let Some(i) = fi {
            let fun = &self.funs[i];
            if fun.locals.contains(name) {
                return self.writes_of(i, name, seen, depth);
            }
            if let Some(p) = fun.params.iter().position(|p| p == name) {
                let mut v = self.writes_of(i, name, seen, depth);
                if fun.is_main {
                    return Constness::Runtime;
                }
                let sites = fun
                    .name
                    .as_ref()
                    .filter(|n| !self.address_taken.contains(*n))
                    .and_then(|n| self.calls.get(n));
                match sites {
                    Some(sites) if !sites.is_empty() => {
                        for (caller, args) in sites {
                            v = v.join(match args.get(p) {
                                Some(a) => self.expr(Some(*caller), *a, seen, depth + 1),
                                None => Constness::Unknown,
                            });
                            if v == Constness::Runtime {
                                break;
                            }
                        }
                    }
                    _ => v = v.join(Constness::Unknown),
                }
                return v;
            }
        }
        if self.globals.contains(name) {
            let mut v = if self.externs.contains(name) {
                Constness::Unknown
            } else {
                Constness::Constant
            };
            for init in self.global_inits.get(name).into_iter().flatten() {
                v = v.join(self.expr(None, *init, seen, depth + 1));
            }
            for (i, fun) in self.funs.iter().enumerate() {
                if fun.writes.contains_key(name)
                    && !fun.locals.contains(name)
                    && !fun.params.iter().any(|p| p == name)
                {
                    v = v.join(self.writes_of(i, name, seen, depth));
                }
                if v == Constness::Runtime {
                    break;
                }
            }
            return v;
        }
        if is_macro_like(name) || self.by_name.contains_key(name) {
            // A macro or enum constant, or a function used as a value.
            return Constness::Constant;
        }
        Constness::Unknown
    }

    /// The join of the writes to `name` in function `fi`, and of the names it aliases there.
    fn writes_of(
        &self,
        fi: usize,
        name: &str,
        seen: &mut HashSet<(Option<usize>, String)>,
        depth: usize,
    ) -> Constness {
        let fun = &self.funs[fi];
        let mut v = Constness::Constant;
        for w in fun.writes.get(name).into_iter().flatten() {
            v = v.join(match w {
                Write::Expr(e) => self.expr(Some(fi), *e, seen, depth + 1),
                Write::Args(args) => {
                    let mut a = Constness::Constant;
                    for e in args {
                        a = a.join(self.expr(Some(fi), *e, seen, depth + 1));
                    }
                    a
                }
                Write::Runtime => Constness::Runtime,
                Write::Callee { fun, param } => {
                    let p = &self.funs[*fun].params[*param];
                    if p.is_empty() || !seen.insert((Some(*fun), format!("#writes {p}"))) {
                        Constness::Constant
                    } else {
                        self.writes_of(*fun, p, seen, depth + 1)
                    }
                }
            });
            if v == Constness::Runtime {
                return v;
            }
        }
        for a in fun.aliases.get(name).into_iter().flatten() {
            v = v.join(self.name(Some(fi), a, seen, depth + 1));
            if v == Constness::Runtime {
                return v;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constness of the format (first argument) of the first `printf` call.
    fn fmt_of(lang: Language, src: &str) -> Constness {
        let file = ParsedFile::parse(lang, src.to_string());
        let ix = FormatConstness::new(&file);
        let mut stack = vec![file.root()];
        while let Some(n) = stack.pop() {
            if n.kind() == kind::CALL_EXPRESSION && callee_name(&file, n) == Some("printf") {
                return ix.of(call_args(n)[0]);
            }
            stack.extend(named_children(n));
        }
        panic!("no printf call");
    }

    #[test]
    fn copies_of_literals_through_aliases_are_constant() {
        let src = "void f(void) { char *data; char buf[100] = \"\"; data = buf; strcpy(data, \"fixed\"); printf(data); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Constant);
        let src = "void f(void) { char buf[100] = \"\"; char *data = buf; strcpy(data, \"x\"); printf(buf); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Constant);
    }

    #[test]
    fn input_written_at_an_offset_or_through_an_alias_is_runtime() {
        let src = "void f(void) { char buf[100] = \"\"; char *data = buf; size_t n = strlen(data); fgets(data + n, 100 - n, stdin); printf(buf); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Runtime);
        let src = "void f(int s) { char buf[100]; char *data = buf; recv(s, (char *)(data + 1), 99, 0); printf(data); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Runtime);
        let src = "void f(void) { char *e = getenv(\"X\"); printf(e); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Runtime);
    }

    #[test]
    fn parameters_follow_the_call_sites_of_the_file() {
        let good = "static void sink(char *d) { printf(d); }\nvoid g(void) { char b[10] = \"\"; strcpy(b, \"ok\"); sink(b); }";
        assert_eq!(fmt_of(Language::C, good), Constness::Constant);
        let bad = "static void sink(char *d) { printf(d); }\nvoid g(void) { char b[10] = \"\"; fgets(b, 10, stdin); sink(b); }";
        assert_eq!(fmt_of(Language::C, bad), Constness::Runtime);
        // No call site in the file (an exported wrapper): out of sight, not evidence.
        let api = "void log_msg(const char *fmt) { printf(fmt); }";
        assert_eq!(fmt_of(Language::C, api), Constness::Unknown);
        // main's parameters are input.
        let main = "int main(int argc, char **argv) { printf(argv[1]); return 0; }";
        assert_eq!(fmt_of(Language::C, main), Constness::Runtime);
        // A function whose address is taken has call sites we cannot see.
        let fp = "static void sink(char *d) { printf(d); }\nvoid g(void) { void (*p)(char *) = sink; sink(\"x\"); p(0); }";
        assert_eq!(fmt_of(Language::C, fp), Constness::Unknown);
    }

    #[test]
    fn callees_that_fill_a_buffer_and_globals_are_followed() {
        let src = "static void fill(char *p) { fgets(p, 10, stdin); }\nvoid g(void) { char b[10]; fill(b); printf(b); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Runtime);
        let src = "static char *G;\nvoid a(void) { G = \"fixed\"; }\nvoid b(void) { char *d = G; printf(d); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Constant);
        let src = "static char *G;\nvoid a(void) { G = getenv(\"X\"); }\nvoid b(void) { char *d = G; printf(d); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Runtime);
        let src = "extern char *G;\nvoid b(void) { char *d = G; printf(d); }";
        assert_eq!(fmt_of(Language::C, src), Constness::Unknown);
    }

    #[test]
    fn cpp_containers_and_references_carry_their_elements() {
        let src = "void g() { char b[10] = \"\"; char *data = b; strcpy(data, \"x\"); std::vector<char *> v; v.insert(v.end(), 1, data); char *d = v[0]; printf(d); }";
        assert_eq!(fmt_of(Language::Cpp, src), Constness::Constant);
        let src = "void g() { char b[10] = \"\"; char *data = b; std::cin >> data; char *&r = data; char *d = r; printf(d); }";
        assert_eq!(fmt_of(Language::Cpp, src), Constness::Runtime);
    }

    #[test]
    fn the_budget_bounds_the_work() {
        // A long chain of copies: answered within the fuel, never a hang.
        let mut src = String::from("void f(void) { char *v0 = getenv(\"X\");");
        for i in 1..3000 {
            src.push_str(&format!(" char *v{i} = v{};", i - 1));
        }
        src.push_str(" printf(v2999); }");
        assert_ne!(fmt_of(Language::C, &src), Constness::Constant);
    }
}
