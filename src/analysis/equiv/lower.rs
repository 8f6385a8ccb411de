//! Functions over integers, booleans and arrays of them, lowered once from Python, Java, C and
//! C++ syntax into one small imperative language, so the bounded equivalence check
//! ([`super::smt`]) is written once for every language.
//!
//! Lowering is exact or refused: any construct whose meaning the language below cannot state
//! (floating point, strings, objects, fields, aliasing of arrays, calls of unknown functions,
//! side effects inside expressions, exceptions caught, ...) makes [`lower_function`] return an
//! error naming it, and no symbolic verdict is given.

use super::types::{parse_type, Signature, Ty};
use crate::syntax::functions::Function;
use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use std::collections::BTreeMap;
use tree_sitter::Node;

/// Whose rules the operations follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sem {
    /// Unbounded integers, floor division, negative indices, exceptions.
    Python,
    /// Two's complement wrapping, truncating division, exceptions on zero division and bad indices.
    Java,
    /// C and C++: wrapping unsigned arithmetic; signed overflow, zero division, out-of-range
    /// shifts and out-of-bounds indices are undefined behaviour.
    C,
}

/// A value type of the lowered language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum STy {
    /// A machine integer of this width.
    Int {
        bits: u32,
        signed: bool,
    },
    /// Python's unbounded integer.
    Math,
    Bool,
    Array(Box<STy>),
    /// An entry parameter of a type the lowered language does not have (strings, objects,
    /// floating point): it has no value, and a function that reads it is not checked.
    Opaque,
}

impl STy {
    /// The lowered type of a declared type, if it is one the lowered language has.
    pub fn from_ty(ty: &Ty, sem: Sem) -> Option<STy> {
        Some(match ty {
            Ty::Int { bits, signed } => STy::Int {
                bits: u32::from(*bits),
                signed: *signed,
            },
            Ty::BigInt => STy::Math,
            // Java's `char` is an unsigned 16-bit integer in arithmetic (promoted by zero
            // extension); C's `char` is left alone (its signedness is the compiler's).
            Ty::Char if sem == Sem::Java => STy::Int {
                bits: 16,
                signed: false,
            },
            Ty::Unknown if sem == Sem::Python => STy::Math,
            Ty::Bool => STy::Bool,
            Ty::List(inner) => {
                let e = STy::from_ty(inner, sem)?;
                if matches!(e, STy::Array(_)) {
                    return None;
                }
                STy::Array(Box::new(e))
            }
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    /// Truncating (Java, C) or floor (Python `//`) division, by the semantics.
    Div,
    /// Remainder (Java, C `%`) or Python's modulo, by the semantics.
    Rem,
    Shl,
    Shr,
    /// Java's `>>>`.
    UShr,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// An expression. Expressions have no side effects except the errors they raise.
#[derive(Debug, Clone, PartialEq)]
pub enum Ex {
    Lit(i128),
    BoolLit(bool),
    Var(String),
    Bin(Op, Box<Ex>, Box<Ex>),
    Not(Box<Ex>),
    Neg(Box<Ex>),
    BitNot(Box<Ex>),
    /// Short-circuit `&&`/`and` (Python's `and` yields an operand).
    And(Box<Ex>, Box<Ex>),
    Or(Box<Ex>, Box<Ex>),
    Cond(Box<Ex>, Box<Ex>, Box<Ex>),
    Index(Box<Ex>, Box<Ex>),
    Len(Box<Ex>),
    /// A function of the same file, or a built-in (`abs`, `min`, `max`).
    Call(String, Vec<Ex>),
    Cast(STy, Box<Ex>),
    /// A C/C++ local array of this element type: one entry per element, `None` where no
    /// initialiser gives it a value (indeterminate).
    NewArray(STy, Vec<Option<Ex>>),
}

/// An assignment target.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    Var(String),
    Index(String, Ex),
}

#[derive(Debug, Clone, PartialEq)]
pub enum St {
    /// A declaration with an optional declared type and initial value.
    Decl(String, Option<STy>, Option<Ex>),
    Assign(Place, Ex),
    If(Ex, Vec<St>, Vec<St>),
    /// `while`, `for` (with its update) and `do`/`while` (`test_first == false`).
    Loop {
        cond: Ex,
        body: Vec<St>,
        update: Vec<St>,
        test_first: bool,
    },
    Return(Option<Ex>),
    /// `raise X(..)` / `throw new X(..)` (or a failed Python `assert`): an exception of the
    /// class of this simple name (as the harness reports it: Python's `__name__`, Java's
    /// class name without its package), with literal arguments only.
    Raise(String),
    Break,
    Continue,
    /// A call whose result is dropped.
    Call(Ex),
}

/// One lowered function.
#[derive(Debug, Clone, PartialEq)]
pub struct LFunc {
    pub name: String,
    pub params: Vec<(String, STy)>,
    /// The declared return type (`None`: undeclared (Python) or `void`).
    pub ret: Option<STy>,
    pub body: Vec<St>,
}

/// A lowered file: the entry, the other functions it may call, and named constants.
#[derive(Debug, Clone)]
pub struct Program {
    pub sem: Sem,
    pub entry: LFunc,
    pub functions: BTreeMap<String, LFunc>,
    /// Named integer constants (Java `static final`, C `#define`, Python module-level names
    /// assigned once to a literal).
    pub constants: BTreeMap<String, i128>,
    /// C/C++ global variables of integer or boolean type (scalars and arrays of a known size)
    /// whose initial value is known: state the functions read and write, shared by all calls.
    pub globals: Vec<LGlobal>,
}

/// A C/C++ global variable the check models ([`Program::globals`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LGlobal {
    pub name: String,
    /// The type of the variable, or of an array's elements.
    pub ty: STy,
    /// An array's number of elements.
    pub size: Option<usize>,
    /// The initial value (one per element of an array).
    pub init: Vec<i128>,
}

/// Global arrays longer than this are not modelled (each element is a term of the formula).
pub const MAX_GLOBAL_ELEMENTS: usize = 256;

/// The globals of `sig` the check can model ([`Program::globals`]).
fn modelled_globals(sig: &Signature, sem: Sem) -> Vec<LGlobal> {
    if sem != Sem::C {
        return Vec::new();
    }
    sig.globals
        .iter()
        .filter_map(|g| {
            let ty = STy::from_ty(&g.ty, sem).filter(|t| !matches!(t, STy::Array(_)))?;
            let init = g.init.clone()?;
            let size = if g.array {
                Some(g.size.filter(|n| (1..=MAX_GLOBAL_ELEMENTS).contains(n))?)
            } else {
                None
            };
            (init.len() == size.unwrap_or(1)).then(|| LGlobal {
                name: g.name.clone(),
                ty,
                size,
                init,
            })
        })
        .collect()
}

fn sem_of(lang: Language) -> Option<Sem> {
    match lang {
        Language::Python => Some(Sem::Python),
        Language::Java => Some(Sem::Java),
        Language::C | Language::Cpp => Some(Sem::C),
        _ => None,
    }
}

type R<T> = Result<T, String>;

/// How a Java `&&`/`||` was lowered ([`Lower::short_circuit_with_updates`]).
enum ShortCircuit {
    /// Into statements before the statement; the expression reads their result.
    Statements(Ex),
    /// The right operand as an expression (it updates nothing).
    Operand(Ex),
}

struct Lower<'a> {
    file: &'a ParsedFile,
    sem: Sem,
    lang: Language,
    fresh: usize,
    /// Effects of `++`/`--` met inside the statement being lowered, to run before it.
    pre: Vec<St>,
    /// The variables those effects update, with the byte range of the update.
    hoisted: Vec<(String, std::ops::Range<usize>)>,
    /// Inside an operand that is evaluated only sometimes (right of `&&`/`||`, a branch of
    /// `?:`): no effect may be hoisted out of it.
    cond_depth: u32,
    /// Parameters and local variables of the function being lowered, and its text.
    locals: Vec<String>,
    body_text: &'a str,
    /// The global variables the check models (C/C++; see [`Program::globals`]).
    globals: Vec<LGlobal>,
    /// The file's named constants (array sizes may be written with them).
    constants_seen: BTreeMap<String, i128>,
}

/// Lowers the entry function `entry` (with its signature) and every other function of the file.
/// A helper that does not lower is left out; a call of it then fails the entry's lowering.
pub fn lower_function(file: &ParsedFile, entry: &Function<'_>, sig: &Signature) -> R<Program> {
    let sem = sem_of(file.language).ok_or("language not supported by the symbolic check")?;
    // A syntax error elsewhere in the file (an old `main()` without a type, a macro the grammar
    // does not know) leaves the functions around it as written; one inside the entry, or in a
    // helper, refuses that function (a call of an unlowered helper then refuses the entry).
    // (C and C++ only: Python's indentation and Java's classes shape whole files.)
    if sem != Sem::C && file.has_errors() {
        return Err("the file has syntax errors".into());
    }
    if entry.node.has_error() {
        return Err("the function has syntax errors".into());
    }
    let mut lw = Lower {
        file,
        sem,
        lang: file.language,
        fresh: 0,
        pre: Vec::new(),
        hoisted: Vec::new(),
        cond_depth: 0,
        locals: sig.raw.iter().map(|r| r.name.clone()).collect(),
        body_text: file.text.get(entry.node.byte_range()).unwrap_or(""),
        globals: modelled_globals(sig, sem),
        constants_seen: BTreeMap::new(),
    };
    lw.constants_seen = lw.constants()?;
    let mut params = Vec::new();
    for raw in &sig.raw {
        let ty = match raw.role {
            // A parameter of another type is opaque: the function may not read it.
            super::types::Role::Value(i) => {
                STy::from_ty(&sig.params[i].ty, sem).unwrap_or(STy::Opaque)
            }
            super::types::Role::Pointee(_) | super::types::Role::Chain { .. } => {
                return Err(format!("pointer parameter `{}` is not lowered", raw.name))
            }
            super::types::Role::LenOf(_) => {
                let t = parse_type(file.language, &raw.decl);
                STy::from_ty(&t, sem)
                    .filter(|t| matches!(t, STy::Int { .. }))
                    .ok_or_else(|| format!("length `{}` has an unsupported type", raw.name))?
            }
        };
        params.push((raw.name.clone(), ty));
    }
    let ret = lw.ret_type(&sig.ret, &sig.ret_decl)?;
    let body = entry.body.ok_or("the function has no body")?;
    let entry_l = LFunc {
        name: entry.simple_name.clone(),
        params,
        ret,
        body: lw.block(body)?,
    };
    let mut functions = BTreeMap::new();
    for f in file.functions() {
        if f.node == entry.node || f.simple_name.starts_with('<') {
            continue;
        }
        if let Ok(l) = lw.helper(f) {
            // Overloads share a name: such calls are refused rather than guessed.
            if functions.insert(l.name.clone(), l).is_some() {
                functions.remove(&f.simple_name);
            }
        }
    }
    Ok(Program {
        sem,
        entry: entry_l,
        functions,
        constants: lw.constants_seen,
        globals: lw.globals,
    })
}

impl<'a> Lower<'a> {
    fn text(&self, n: Node<'_>) -> &'a str {
        self.file.text.get(n.byte_range()).unwrap_or("")
    }

    fn ret_type(&self, ret: &Ty, decl: &str) -> R<Option<STy>> {
        match ret {
            Ty::Void => Ok(None),
            Ty::Unknown if decl.is_empty() && self.sem == Sem::Python => Ok(None),
            t => STy::from_ty(t, self.sem)
                .map(Some)
                .ok_or_else(|| format!("unsupported return type `{decl}`")),
        }
    }

    fn helper(&mut self, f: &Function<'_>) -> R<LFunc> {
        if f.node.has_error() {
            return Err("syntax errors".into());
        }
        let sig = super::types::signature(self.file, f)?;
        self.locals = sig.raw.iter().map(|r| r.name.clone()).collect();
        self.body_text = self.text(f.node);
        if sig
            .raw
            .iter()
            .any(|r| matches!(r.role, super::types::Role::LenOf(_)))
        {
            // C pointer + length: inside the file a helper is called with both, as written.
            let mut params = Vec::new();
            for raw in &sig.raw {
                let t = parse_type(self.lang, &raw.decl);
                params.push((
                    raw.name.clone(),
                    STy::from_ty(&t, self.sem).ok_or("unsupported parameter")?,
                ));
            }
            let ret = self.ret_type(&sig.ret, &sig.ret_decl)?;
            let body = self.block(f.body.ok_or("no body")?)?;
            return Ok(LFunc {
                name: f.simple_name.clone(),
                params,
                ret,
                body,
            });
        }
        if sig.raw.iter().any(|r| {
            matches!(
                r.role,
                super::types::Role::Pointee(_) | super::types::Role::Chain { .. }
            )
        }) {
            return Err("pointer parameters are not lowered".into());
        }
        // A Java instance method reads no state here: a class with fields other than
        // constants is not lowered at all (see `constants`), so its receiver is unused.
        if sig.has_receiver && (self.lang != Language::Java || sig.receiver) {
            return Err("methods with a receiver are not lowered".into());
        }
        let params = sig
            .params
            .iter()
            .map(|p| {
                STy::from_ty(&p.ty, self.sem)
                    .map(|t| (p.name.clone(), t))
                    .ok_or_else(|| "unsupported parameter".to_string())
            })
            .collect::<R<Vec<_>>>()?;
        let ret = self.ret_type(&sig.ret, &sig.ret_decl)?;
        let body = self.block(f.body.ok_or("no body")?)?;
        Ok(LFunc {
            name: f.simple_name.clone(),
            params,
            ret,
            body,
        })
    }

    /// Named integer constants of the file; any other top-level state refuses the lowering
    /// when a function reads it (the name is then unknown).
    fn constants(&mut self) -> R<BTreeMap<String, i128>> {
        let mut out = BTreeMap::new();
        let mut assigned: BTreeMap<String, usize> = BTreeMap::new();
        let root = self.file.root();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            match n.kind() {
                kind::PREPROC_DEF => {
                    if let (Some(name), Some(value)) = (
                        n.child_by_field_name(field::NAME),
                        n.child_by_field_name(field::VALUE),
                    ) {
                        if let Some(v) = int_literal(self.text(value).trim(), self.sem) {
                            out.insert(self.text(name).to_string(), v);
                        }
                    }
                }
                kind::FIELD_DECLARATION if self.lang == Language::Java => {
                    let mods = (0..n.named_child_count())
                        .filter_map(|i| n.named_child(i))
                        .find(|c| c.kind() == kind::MODIFIERS)
                        .map(|m| self.text(m))
                        .unwrap_or("");
                    if mods.contains("static") && mods.contains("final") {
                        let mut cur = n.walk();
                        for d in n.children_by_field_name(field::DECLARATOR, &mut cur) {
                            if let (Some(name), Some(value)) = (
                                d.child_by_field_name(field::NAME),
                                d.child_by_field_name(field::VALUE),
                            ) {
                                if let Ok(v) = self.const_expr(value) {
                                    out.insert(self.text(name).to_string(), v);
                                }
                            }
                        }
                    }
                }
                kind::CLASS_DECLARATION | kind::CLASS_BODY | kind::PROGRAM => {
                    for i in 0..n.named_child_count() {
                        stack.extend(n.named_child(i));
                    }
                }
                kind::MODULE => {
                    for i in 0..n.named_child_count() {
                        stack.extend(n.named_child(i));
                    }
                }
                kind::EXPRESSION_STATEMENT if self.lang == Language::Python => {
                    if let Some(a) = n.named_child(0).filter(|a| a.kind() == kind::ASSIGNMENT) {
                        if let Some(l) = a
                            .child_by_field_name(field::LEFT)
                            .filter(|l| l.kind() == kind::IDENTIFIER)
                        {
                            let name = self.text(l).to_string();
                            *assigned.entry(name.clone()).or_default() += 1;
                            if let Some(v) = a
                                .child_by_field_name(field::RIGHT)
                                .and_then(|r| self.const_expr(r).ok())
                            {
                                out.insert(name, v);
                            }
                        }
                    }
                }
                kind::TRANSLATION_UNIT => {
                    for i in 0..n.named_child_count() {
                        stack.extend(n.named_child(i));
                    }
                }
                _ => {}
            }
        }
        // A Python module name bound twice (or by `global` inside a function) is state.
        for (name, count) in assigned {
            if count > 1 || self.file.text.contains(&format!("global {name}")) {
                out.remove(&name);
            }
        }
        Ok(out)
    }

    fn const_expr(&self, n: Node<'_>) -> R<i128> {
        match n.kind() {
            kind::UNARY_EXPRESSION | kind::UNARY_OPERATOR => {
                let arg = n
                    .child_by_field_name(field::OPERAND)
                    .or_else(|| n.child_by_field_name(field::ARGUMENT))
                    .ok_or("no operand")?;
                let op = n
                    .child_by_field_name(field::OPERATOR)
                    .map(|o| self.text(o))
                    .unwrap_or("");
                match op {
                    "-" => self.const_expr(arg).map(|v| -v),
                    "+" => self.const_expr(arg),
                    _ => Err("not a constant".into()),
                }
            }
            _ => int_literal(self.text(n), self.sem).ok_or_else(|| "not a constant".into()),
        }
    }

    fn fresh(&mut self, what: &str) -> String {
        self.fresh += 1;
        format!("%{what}{}", self.fresh)
    }

    /// A block or a single statement.
    fn block(&mut self, n: Node<'_>) -> R<Vec<St>> {
        let mut out = Vec::new();
        match n.kind() {
            kind::BLOCK | kind::COMPOUND_STATEMENT => {
                let mut cur = n.walk();
                for c in n.named_children(&mut cur) {
                    self.stmt(c, &mut out)?;
                }
            }
            _ => self.stmt(n, &mut out)?,
        }
        Ok(out)
    }

    fn stmt(&mut self, n: Node<'_>, out: &mut Vec<St>) -> R<()> {
        match n.kind() {
            kind::COMMENT | kind::LINE_COMMENT | kind::BLOCK_COMMENT | kind::PASS_STATEMENT => {}
            kind::BLOCK | kind::COMPOUND_STATEMENT => out.extend(self.block(n)?),
            kind::EXPRESSION_STATEMENT => {
                let Some(e) = n.named_child(0) else {
                    return Ok(()); // `;`
                };
                // A docstring (or any string literal as a statement) does nothing.
                if matches!(e.kind(), kind::STRING | kind::CONCATENATED_STRING) {
                    return Ok(());
                }
                self.effect(e, out)?;
            }
            kind::LOCAL_VARIABLE_DECLARATION | kind::DECLARATION => self.decl(n, out)?,
            kind::RETURN_STATEMENT => {
                let v = match n.named_child(0) {
                    Some(e) => Some(self.effectful(n, out, |s| s.expr(e))?),
                    None => None,
                };
                out.push(St::Return(v));
            }
            kind::RAISE_STATEMENT | kind::THROW_STATEMENT => {
                out.push(St::Raise(self.raised_class(n)?));
            }
            kind::ASSERT_STATEMENT if self.lang == Language::Python => {
                let c = n.named_child(0).ok_or("assert")?;
                if let Some(m) = n.named_child(1) {
                    self.literal_arguments(m)?;
                }
                let cond = self.effectful(c, out, |s| s.cond_expr(c))?;
                out.push(St::If(
                    Ex::Not(Box::new(cond)),
                    vec![St::Raise("AssertionError".into())],
                    vec![],
                ));
            }
            kind::BREAK_STATEMENT => {
                if n.named_child_count() > 0 {
                    return Err("labelled break".into());
                }
                out.push(St::Break)
            }
            kind::CONTINUE_STATEMENT => {
                if n.named_child_count() > 0 {
                    return Err("labelled continue".into());
                }
                out.push(St::Continue)
            }
            kind::IF_STATEMENT => {
                let st = self.if_stmt(n, out)?;
                out.push(st)
            }
            kind::WHILE_STATEMENT => {
                if self.lang == Language::Python
                    && n.child_by_field_name(field::ALTERNATIVE).is_some()
                {
                    return Err("while/else".into());
                }
                let c = n.child_by_field_name(field::CONDITION).ok_or("while")?;
                let mut pre = Vec::new();
                let cond = self.effectful(c, &mut pre, |s| s.cond_expr(c))?;
                let body = self.block(n.child_by_field_name(field::BODY).ok_or("while")?)?;
                out.push(loop_with_effects(pre, cond, body, vec![]));
            }
            kind::DO_STATEMENT => {
                let c = n.child_by_field_name(field::CONDITION).ok_or("do")?;
                let cond = self.pure(c, |s| s.cond_expr(c))?;
                let body = self.block(n.child_by_field_name(field::BODY).ok_or("do")?)?;
                out.push(St::Loop {
                    cond,
                    body,
                    update: vec![],
                    test_first: false,
                });
            }
            kind::FOR_STATEMENT if self.lang == Language::Python => self.py_for(n, out)?,
            kind::FOR_STATEMENT => {
                // Java: `init` (several), C: `initializer`.
                let mut cur = n.walk();
                let inits: Vec<Node> = n
                    .children_by_field_name(field::INIT, &mut cur)
                    .chain(n.child_by_field_name(field::INITIALIZER))
                    .collect();
                let mut scope = Vec::new();
                for i in inits {
                    match i.kind() {
                        kind::LOCAL_VARIABLE_DECLARATION | kind::DECLARATION => {
                            self.decl(i, &mut scope)?
                        }
                        _ => self.effect(i, &mut scope)?,
                    }
                }
                let mut pre = Vec::new();
                let cond = match n.child_by_field_name(field::CONDITION) {
                    Some(c) => self.effectful(c, &mut pre, |s| s.cond_expr(c))?,
                    None => Ex::BoolLit(true),
                };
                let mut update = Vec::new();
                let mut cur = n.walk();
                let updates: Vec<Node> =
                    n.children_by_field_name(field::UPDATE, &mut cur).collect();
                for u in updates {
                    self.effect(u, &mut update)?;
                }
                let body = self.block(n.child_by_field_name(field::BODY).ok_or("for")?)?;
                scope.push(loop_with_effects(pre, cond, body, update));
                // The scope of the loop's declarations: the names are renamed by nothing, but
                // a later declaration of the same name shadows them, which is what C and Java
                // allow.
                out.extend(scope);
            }
            kind::ENHANCED_FOR_STATEMENT => {
                let name = self.text(n.child_by_field_name(field::NAME).ok_or("for")?);
                let v = n.child_by_field_name(field::VALUE).ok_or("for")?;
                let arr = self.pure(v, |s| s.expr(v))?;
                let ty = n
                    .child_by_field_name(field::TYPE)
                    .map(|t| parse_type(self.lang, self.text(t)))
                    .and_then(|t| STy::from_ty(&t, self.sem));
                let body = self.block(n.child_by_field_name(field::BODY).ok_or("for")?)?;
                self.index_loop(name, ty, arr, body, out);
            }
            k => return Err(format!("unsupported statement `{k}`")),
        }
        Ok(())
    }

    /// The class a `raise`/`throw` statement raises: `raise Name`, `raise Name(..)`,
    /// `raise mod.Name(..)`, `throw new Name(..)`, with literal arguments (whose evaluation
    /// cannot fail). A re-raise, a cause (`from e`), a raised variable or computed arguments
    /// are refused.
    fn raised_class(&self, n: Node<'_>) -> R<String> {
        if n.named_child_count() != 1 || n.child_by_field_name(field::CAUSE).is_some() {
            return Err("a raise without exactly one exception".into());
        }
        let e = n.named_child(0).ok_or("raise")?;
        let (class, args) = match (self.lang, e.kind()) {
            (Language::Python, kind::IDENTIFIER | kind::ATTRIBUTE) => (e, None),
            (Language::Python, kind::CALL) => (
                e.child_by_field_name(field::FUNCTION).ok_or("raise")?,
                e.child_by_field_name(field::ARGUMENTS),
            ),
            (Language::Java, kind::OBJECT_CREATION_EXPRESSION) => (
                e.child_by_field_name(field::TYPE).ok_or("throw")?,
                e.child_by_field_name(field::ARGUMENTS),
            ),
            _ => return Err("a raise of something other than a named class".into()),
        };
        if !matches!(
            class.kind(),
            kind::IDENTIFIER
                | kind::ATTRIBUTE
                | kind::TYPE_IDENTIFIER
                | kind::SCOPED_TYPE_IDENTIFIER
        ) {
            return Err("a raise of something other than a named class".into());
        }
        if let Some(args) = args {
            let mut cur = args.walk();
            for a in args.named_children(&mut cur) {
                self.literal_arguments(a)?;
            }
        }
        let name = self.text(class);
        let simple = name.rsplit('.').next().unwrap_or(name).trim();
        if simple.is_empty() || !simple.chars().all(|c| c == '_' || c.is_alphanumeric()) {
            return Err("a raise of something other than a named class".into());
        }
        // Python can raise what a call returns (`raise make_error(1)`): only a capitalised
        // name, the spelling of a class, is taken for the class it raises.
        if self.lang == Language::Python && !simple.starts_with(|c: char| c.is_uppercase()) {
            return Err("a raise of something other than a named class".into());
        }
        Ok(simple.to_string())
    }

    /// Refuses an exception's argument (or an assert's message) unless it is a plain string
    /// or integer literal.
    fn literal_arguments(&self, a: Node<'_>) -> R<()> {
        let plain_string = |a: Node<'_>| {
            let mut cur = a.walk();
            let interpolated = a
                .named_children(&mut cur)
                .any(|c| c.kind() == kind::INTERPOLATION);
            !interpolated
        };
        match a.kind() {
            kind::STRING if self.lang == Language::Python && plain_string(a) => Ok(()),
            kind::INTEGER | kind::STRING_LITERAL | kind::DECIMAL_INTEGER_LITERAL => Ok(()),
            k => Err(format!("an exception argument `{k}` that is not a literal")),
        }
    }

    /// `for x in ITER:` over `range(..)` or a list parameter.
    fn py_for(&mut self, n: Node<'_>, out: &mut Vec<St>) -> R<()> {
        if n.child_by_field_name(field::ALTERNATIVE).is_some() {
            return Err("for/else".into());
        }
        let left = n.child_by_field_name(field::LEFT).ok_or("for")?;
        if left.kind() != kind::IDENTIFIER {
            return Err("for with a pattern target".into());
        }
        let name = self.text(left);
        let right = n.child_by_field_name(field::RIGHT).ok_or("for")?;
        let body = self.block(n.child_by_field_name(field::BODY).ok_or("for")?)?;
        if right.kind() == kind::CALL
            && right
                .child_by_field_name(field::FUNCTION)
                .is_some_and(|f| self.text(f) == "range")
        {
            let args = self.call_args(right)?;
            let (start, stop, step) = match args.len() {
                1 => (Ex::Lit(0), args[0].clone(), 1),
                2 => (args[0].clone(), args[1].clone(), 1),
                3 => match &args[2] {
                    Ex::Lit(s) if *s != 0 => (args[0].clone(), args[1].clone(), *s),
                    Ex::Neg(b) if matches!(**b, Ex::Lit(s) if s != 0) => {
                        let Ex::Lit(s) = **b else { unreachable!() };
                        (args[0].clone(), args[1].clone(), -s)
                    }
                    _ => return Err("range with a step that is not a literal".into()),
                },
                _ => return Err("range arity".into()),
            };
            let it = self.fresh("it");
            let end = self.fresh("end");
            out.push(St::Decl(it.clone(), None, Some(start)));
            out.push(St::Decl(end.clone(), None, Some(stop)));
            let cond = Ex::Bin(
                if step > 0 { Op::Lt } else { Op::Gt },
                Box::new(Ex::Var(it.clone())),
                Box::new(Ex::Var(end)),
            );
            let mut b = vec![St::Assign(
                Place::Var(name.to_string()),
                Ex::Var(it.clone()),
            )];
            b.extend(body);
            out.push(St::Loop {
                cond,
                body: b,
                update: vec![St::Assign(
                    Place::Var(it.clone()),
                    Ex::Bin(Op::Add, Box::new(Ex::Var(it)), Box::new(Ex::Lit(step))),
                )],
                test_first: true,
            });
            return Ok(());
        }
        let arr = self.expr(right)?;
        if !matches!(arr, Ex::Var(_)) {
            return Err("for over something other than range() or a list".into());
        }
        self.index_loop(name, None, arr, body, out);
        Ok(())
    }

    fn index_loop(
        &mut self,
        name: &str,
        ty: Option<STy>,
        arr: Ex,
        body: Vec<St>,
        out: &mut Vec<St>,
    ) {
        self.locals.push(name.to_string());
        let it = self.fresh("it");
        out.push(St::Decl(
            it.clone(),
            Some(STy::Int {
                bits: 32,
                signed: true,
            }),
            Some(Ex::Lit(0)),
        ));
        let mut b = vec![St::Decl(
            name.to_string(),
            ty,
            Some(Ex::Index(
                Box::new(arr.clone()),
                Box::new(Ex::Var(it.clone())),
            )),
        )];
        b.extend(body);
        out.push(St::Loop {
            cond: Ex::Bin(
                Op::Lt,
                Box::new(Ex::Var(it.clone())),
                Box::new(Ex::Len(Box::new(arr))),
            ),
            body: b,
            update: vec![St::Assign(
                Place::Var(it.clone()),
                Ex::Bin(Op::Add, Box::new(Ex::Var(it)), Box::new(Ex::Lit(1))),
            )],
            test_first: true,
        });
    }

    /// An `if`; the effects of its condition go to `out`.
    fn if_stmt(&mut self, n: Node<'_>, out: &mut Vec<St>) -> R<St> {
        let c = n.child_by_field_name(field::CONDITION).ok_or("if")?;
        let cond = self.effectful(c, out, |s| s.cond_expr(c))?;
        let then = self.block(n.child_by_field_name(field::CONSEQUENCE).ok_or("if")?)?;
        let mut cur = n.walk();
        let alts: Vec<Node> = n
            .children_by_field_name(field::ALTERNATIVE, &mut cur)
            .collect();
        let els = self.alternatives(&alts)?;
        Ok(St::If(cond, then, els))
    }

    /// Python's `elif`/`else` chain, C's `else_clause`, Java's plain statement.
    fn alternatives(&mut self, alts: &[Node<'_>]) -> R<Vec<St>> {
        let Some((first, rest)) = alts.split_first() else {
            return Ok(vec![]);
        };
        match first.kind() {
            kind::ELIF_CLAUSE => {
                let cond =
                    self.cond_expr(first.child_by_field_name(field::CONDITION).ok_or("elif")?)?;
                let then = self.block(
                    first
                        .child_by_field_name(field::CONSEQUENCE)
                        .ok_or("elif")?,
                )?;
                Ok(vec![St::If(cond, then, self.alternatives(rest)?)])
            }
            kind::ELSE_CLAUSE => {
                let body = first
                    .child_by_field_name(field::BODY)
                    .or_else(|| first.named_child(0))
                    .ok_or("else")?;
                self.block(body)
            }
            _ => self.block(*first),
        }
    }

    /// A condition, without the parentheses C and Java put around it.
    fn cond_expr(&mut self, n: Node<'_>) -> R<Ex> {
        self.expr(n)
    }

    fn decl(&mut self, n: Node<'_>, out: &mut Vec<St>) -> R<()> {
        let ty_node = n.child_by_field_name(field::TYPE).ok_or("declaration")?;
        let base = self.text(ty_node);
        let text = self.text(n);
        // Storage that outlives the call (`static`, `thread_local`, `_Thread_local`,
        // `__thread`) or names a global (`extern`): no local of one call.
        let mut sc = n.walk();
        let lasting = n.children(&mut sc).any(|c| {
            c.kind() == kind::STORAGE_CLASS_SPECIFIER
                && matches!(
                    self.text(c),
                    "static" | "thread_local" | "_Thread_local" | "__thread" | "extern"
                )
        });
        let word = text
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| matches!(w, "static" | "thread_local" | "_Thread_local" | "__thread"));
        if lasting || word {
            return Err("static, thread-local or extern local variable".into());
        }
        let mut cur = n.walk();
        let decls: Vec<Node> = n
            .children_by_field_name(field::DECLARATOR, &mut cur)
            .collect();
        for d in decls {
            let (name_node, value, array) = match d.kind() {
                kind::VARIABLE_DECLARATOR => (
                    d.child_by_field_name(field::NAME).ok_or("declarator")?,
                    d.child_by_field_name(field::VALUE),
                    d.child_by_field_name(field::DIMENSIONS).is_some(),
                ),
                kind::INIT_DECLARATOR => {
                    let inner = d
                        .child_by_field_name(field::DECLARATOR)
                        .ok_or("declarator")?;
                    (inner, d.child_by_field_name(field::VALUE), false)
                }
                _ => (d, None, false),
            };
            if self.sem == Sem::C && name_node.kind() == kind::ARRAY_DECLARATOR {
                self.local_array(base, name_node, value, out)?;
                continue;
            }
            if name_node.kind() != kind::IDENTIFIER || array {
                return Err("declarator other than a plain name".into());
            }
            let ty = STy::from_ty(&parse_type(self.lang, base), self.sem)
                .ok_or_else(|| format!("unsupported local type `{base}`"))?;
            if matches!(ty, STy::Array(_)) {
                return Err("local arrays".into());
            }
            let v = match value {
                Some(v) => Some(self.effectful(d, out, |s| s.expr(v))?),
                None => None,
            };
            let name = self.text(name_node).to_string();
            self.locals.push(name.clone());
            out.push(St::Decl(name, Some(ty), v));
        }
        Ok(())
    }

    /// A C/C++ local array `T a[N]` (`N` a literal or a `#define`d constant, or the length of
    /// its initialiser list), with an optional initialiser list of expressions: the elements
    /// it does not list are zero; without one, every element is indeterminate.
    fn local_array(
        &mut self,
        base: &str,
        d: Node<'_>,
        value: Option<Node<'_>>,
        out: &mut Vec<St>,
    ) -> R<()> {
        let name_node = d
            .child_by_field_name(field::DECLARATOR)
            .filter(|n| n.kind() == kind::IDENTIFIER)
            .ok_or("an array of arrays or of pointers")?;
        let elem = STy::from_ty(&parse_type(self.lang, base), self.sem)
            .filter(|t| !matches!(t, STy::Array(_)))
            .ok_or_else(|| format!("unsupported local type `{base}`"))?;
        let items: Option<Vec<Node<'_>>> = match value {
            None => None,
            Some(v) if v.kind() == kind::INITIALIZER_LIST => {
                let mut c = v.walk();
                Some(v.named_children(&mut c).collect())
            }
            Some(_) => return Err("an array initialised by something other than a list".into()),
        };
        let size = match d.child_by_field_name(field::SIZE) {
            Some(n) => {
                let t = self.text(n).trim();
                int_literal(t, self.sem)
                    .or_else(|| self.constants_seen.get(t).copied())
                    .ok_or("an array whose size is not a constant")?
            }
            None => items
                .as_ref()
                .map(|i| i.len() as i128)
                .ok_or("an array without a size")?,
        };
        let size = usize::try_from(size)
            .ok()
            .filter(|n| (1..=MAX_GLOBAL_ELEMENTS).contains(n))
            .ok_or("an array too large (or empty) for the check")?;
        let mut elems: Vec<Option<Ex>> = Vec::with_capacity(size);
        match items {
            Some(items) => {
                if items.len() > size {
                    return Err("more initialisers than elements".into());
                }
                for it in items {
                    if it.kind() == kind::INITIALIZER_LIST || it.kind() == kind::INITIALIZER_PAIR {
                        return Err("designated or nested initialisers".into());
                    }
                    let e = self.effectful(it, out, |s| s.expr(it))?;
                    elems.push(Some(e));
                }
                elems.resize(size, Some(Ex::Lit(0)));
            }
            None => elems.resize(size, None),
        }
        let name = self.text(name_node).to_string();
        self.locals.push(name.clone());
        out.push(St::Decl(
            name,
            Some(STy::Array(Box::new(elem.clone()))),
            Some(Ex::NewArray(elem, elems)),
        ));
        Ok(())
    }

    /// An unsigned integer literal, typed as the language types it.
    fn literal_value(&self, t: &str) -> R<Ex> {
        let v = int_literal(t, self.sem).ok_or_else(|| format!("literal `{t}`"))?;
        // A literal with a suffix or too big for `int` has its own type.
        let lower = t.to_ascii_lowercase();
        let long =
            lower.ends_with('l') || !(i128::from(i32::MIN)..=i128::from(u32::MAX)).contains(&v);
        let unsigned = self.sem == Sem::C && lower.trim_end_matches('l').ends_with('u');
        Ok(match self.sem {
            Sem::Python => Ex::Lit(v),
            _ if long || unsigned || v > i128::from(i32::MAX) => Ex::Cast(
                STy::Int {
                    bits: if long || (!unsigned && v > i128::from(i32::MAX)) {
                        64
                    } else {
                        32
                    },
                    signed: !unsigned,
                },
                Box::new(Ex::Lit(v)),
            ),
            _ => Ex::Lit(v),
        })
    }

    /// An expression evaluated for its effect: assignments, `++`/`--`, calls.
    fn effect(&mut self, n: Node<'_>, out: &mut Vec<St>) -> R<()> {
        match n.kind() {
            kind::ASSIGNMENT | kind::ASSIGNMENT_EXPRESSION | kind::AUGMENTED_ASSIGNMENT => {
                let left = n.child_by_field_name(field::LEFT).ok_or("assignment")?;
                let right = n.child_by_field_name(field::RIGHT).ok_or("assignment")?;
                if n.kind() == kind::ASSIGNMENT && n.child_by_field_name(field::TYPE).is_some() {
                    return Err("annotated assignment".into());
                }
                let op = n
                    .child_by_field_name(field::OPERATOR)
                    .map(|o| self.text(o))
                    .unwrap_or("=");
                let (place, value) =
                    self.effectful(n, out, |s| Ok((s.place(left)?, s.expr(right)?)))?;
                let value = if op == "=" {
                    value
                } else {
                    let bin = op.strip_suffix('=').ok_or("assignment operator")?;
                    let cur = place_expr(&place);
                    self.binary(bin, cur, value)?
                };
                out.push(St::Assign(place, value));
            }
            kind::UPDATE_EXPRESSION => {
                let arg = n
                    .child_by_field_name(field::ARGUMENT)
                    .or_else(|| n.named_child(0))
                    .ok_or("update")?;
                let inc = self.text(n).contains("++");
                let place = self.effectful(n, out, |s| s.place(arg))?;
                let cur = place_expr(&place);
                out.push(St::Assign(
                    place,
                    Ex::Bin(
                        if inc { Op::Add } else { Op::Sub },
                        Box::new(cur),
                        Box::new(Ex::Lit(1)),
                    ),
                ));
            }
            kind::CALL | kind::CALL_EXPRESSION | kind::METHOD_INVOCATION => {
                let call = self.effectful(n, out, |s| s.expr(n))?;
                out.push(St::Call(call));
            }
            kind::PARENTHESIZED_EXPRESSION => {
                self.effect(n.named_child(0).ok_or("parentheses")?, out)?
            }
            kind::COMMA_EXPRESSION => {
                self.effect(n.child_by_field_name(field::LEFT).ok_or("comma")?, out)?;
                self.effect(n.child_by_field_name(field::RIGHT).ok_or("comma")?, out)?;
            }
            k => return Err(format!("unsupported expression statement `{k}`")),
        }
        Ok(())
    }

    fn place(&mut self, n: Node<'_>) -> R<Place> {
        match n.kind() {
            kind::IDENTIFIER => Ok(Place::Var(self.assignable(n)?)),
            kind::SUBSCRIPT | kind::SUBSCRIPT_EXPRESSION | kind::ARRAY_ACCESS => {
                let (a, i) = self.subscript_parts(n)?;
                if a.kind() != kind::IDENTIFIER {
                    return Err("assignment into a nested subscript".into());
                }
                Ok(Place::Index(self.assignable(a)?, self.expr(i)?))
            }
            kind::PARENTHESIZED_EXPRESSION => self.place(n.named_child(0).ok_or("place")?),
            k => Err(format!("unsupported assignment target `{k}`")),
        }
    }

    /// The name an assignment writes. In C and C++ it is a parameter, a local declared before,
    /// or a modelled global: a write to any other global is state the check cannot compare.
    fn assignable(&self, id: Node<'_>) -> R<String> {
        let name = self.text(id).to_string();
        if self.sem == Sem::C
            && !self.locals.contains(&name)
            && !self.globals.iter().any(|g| g.name == name)
        {
            return Err(format!(
                "assignment of `{name}`, a variable the check does not model"
            ));
        }
        Ok(name)
    }

    fn subscript_parts<'t>(&self, n: Node<'t>) -> R<(Node<'t>, Node<'t>)> {
        let a = n
            .child_by_field_name(field::VALUE)
            .or_else(|| n.child_by_field_name(field::ARGUMENT))
            .or_else(|| n.child_by_field_name(field::ARRAY))
            .ok_or("subscript")?;
        let i = n
            .child_by_field_name(field::SUBSCRIPT)
            .or_else(|| n.child_by_field_name(field::INDEX))
            .ok_or("subscript")?;
        if i.kind() == kind::SLICE || n.child_count() > 4 {
            return Err("slices and multiple subscripts".into());
        }
        Ok((a, i))
    }

    fn call_args(&mut self, n: Node<'_>) -> R<Vec<Ex>> {
        let args = n.child_by_field_name(field::ARGUMENTS).ok_or("call")?;
        let mut cur = args.walk();
        let nodes: Vec<Node> = args.named_children(&mut cur).collect();
        let mut out = Vec::new();
        for a in nodes {
            match a.kind() {
                kind::COMMENT | kind::LINE_COMMENT | kind::BLOCK_COMMENT => {}
                kind::KEYWORD_ARGUMENT | kind::LIST_SPLAT | kind::DICTIONARY_SPLAT => {
                    return Err("keyword or starred arguments".into())
                }
                _ => out.push(self.expr(a)?),
            }
        }
        Ok(out)
    }

    fn binary(&self, op: &str, a: Ex, b: Ex) -> R<Ex> {
        let o = match op {
            "+" => Op::Add,
            "-" => Op::Sub,
            "*" => Op::Mul,
            "/" if self.sem == Sem::Python => return Err("true division".into()),
            "/" | "//" => Op::Div,
            "%" => Op::Rem,
            "<<" => Op::Shl,
            ">>" => Op::Shr,
            ">>>" => Op::UShr,
            "&" => Op::BitAnd,
            "|" => Op::BitOr,
            "^" => Op::BitXor,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "&&" => return Ok(Ex::And(Box::new(a), Box::new(b))),
            "||" => return Ok(Ex::Or(Box::new(a), Box::new(b))),
            "**" => {
                // Small literal powers only.
                return match b {
                    Ex::Lit(k @ 0..=4) => {
                        let mut e = Ex::Lit(1);
                        for _ in 0..k {
                            e = Ex::Bin(Op::Mul, Box::new(e), Box::new(a.clone()));
                        }
                        Ok(e)
                    }
                    _ => Err("power".into()),
                };
            }
            o => return Err(format!("unsupported operator `{o}`")),
        };
        Ok(Ex::Bin(o, Box::new(a), Box::new(b)))
    }

    fn expr(&mut self, n: Node<'_>) -> R<Ex> {
        match n.kind() {
            kind::PARENTHESIZED_EXPRESSION | kind::CONDITION_CLAUSE => {
                let mut cur = n.walk();
                let inner: Vec<Node> = n
                    .named_children(&mut cur)
                    .filter(|c| !matches!(c.kind(), kind::COMMENT | kind::BLOCK_COMMENT))
                    .collect();
                match inner.as_slice() {
                    [one] => self.expr(*one),
                    _ => Err("parenthesised list".into()),
                }
            }
            kind::IDENTIFIER => {
                let t = self.text(n);
                Ok(match (self.sem, t) {
                    (Sem::C, "true") => Ex::BoolLit(true),
                    (Sem::C, "false") => Ex::BoolLit(false),
                    _ => Ex::Var(t.to_string()),
                })
            }
            kind::TRUE => Ok(Ex::BoolLit(true)),
            kind::FALSE => Ok(Ex::BoolLit(false)),
            kind::INTEGER
            | kind::NUMBER_LITERAL
            | kind::DECIMAL_INTEGER_LITERAL
            | kind::HEX_INTEGER_LITERAL
            | kind::OCTAL_INTEGER_LITERAL
            | kind::BINARY_INTEGER_LITERAL => {
                let t = self.text(n);
                // tree-sitter-c reads a sign into the literal: `-1000` is `-(1000)`.
                if let Some(rest) = t.strip_prefix(['-', '+']) {
                    let v = self.literal_value(rest.trim_start())?;
                    return Ok(if t.starts_with('-') {
                        Ex::Neg(Box::new(v))
                    } else {
                        v
                    });
                }
                self.literal_value(t)
            }
            kind::BINARY_EXPRESSION | kind::BINARY_OPERATOR | kind::BOOLEAN_OPERATOR => {
                let l = n.child_by_field_name(field::LEFT).ok_or("binary")?;
                let r = n.child_by_field_name(field::RIGHT).ok_or("binary")?;
                let op = self.text(n.child_by_field_name(field::OPERATOR).ok_or("binary")?);
                let a = self.expr(l)?;
                let b =
                    if matches!(op, "&&" | "||") && self.sem == Sem::Java && self.cond_depth == 0 {
                        match self.short_circuit_with_updates(n, op, &a, r)? {
                            ShortCircuit::Statements(v) => return Ok(v),
                            ShortCircuit::Operand(b) => b,
                        }
                    } else if matches!(op, "&&" | "||" | "and" | "or") {
                        self.conditionally(|s| s.expr(r))?
                    } else {
                        self.expr(r)?
                    };
                match op {
                    "and" => Ok(Ex::And(Box::new(a), Box::new(b))),
                    "or" => Ok(Ex::Or(Box::new(a), Box::new(b))),
                    _ => self.binary(op, a, b),
                }
            }
            kind::COMPARISON_OPERATOR => {
                // `a < b <= c` is `a < b and b <= c`, `b` evaluated once (expressions have no
                // effects here, so evaluating it twice is the same).
                let mut cur = n.walk();
                let mut operands = Vec::new();
                let mut ops = Vec::new();
                for c in n.children(&mut cur) {
                    if c.is_named() {
                        operands.push(c);
                    } else {
                        ops.push(self.text(c).to_string());
                    }
                }
                if operands.len() != ops.len() + 1 || ops.is_empty() {
                    return Err("comparison".into());
                }
                let mut acc: Option<Ex> = None;
                for (i, op) in ops.iter().enumerate() {
                    if matches!(op.as_str(), "in" | "not" | "is" | "not in" | "is not") {
                        return Err(format!("comparison `{op}`"));
                    }
                    let a = self.expr(operands[i])?;
                    let b = self.expr(operands[i + 1])?;
                    let c = self.binary(op, a, b)?;
                    acc = Some(match acc {
                        None => c,
                        Some(p) => Ex::And(Box::new(p), Box::new(c)),
                    });
                }
                acc.ok_or_else(|| "comparison".into())
            }
            kind::NOT_OPERATOR => Ok(Ex::Not(Box::new(
                self.expr(n.child_by_field_name(field::ARGUMENT).ok_or("not")?)?,
            ))),
            kind::UNARY_EXPRESSION | kind::UNARY_OPERATOR => {
                let arg = n
                    .child_by_field_name(field::OPERAND)
                    .or_else(|| n.child_by_field_name(field::ARGUMENT))
                    .ok_or("unary")?;
                let op = self.text(n.child_by_field_name(field::OPERATOR).ok_or("unary")?);
                let a = self.expr(arg)?;
                match op {
                    "-" => Ok(match a {
                        Ex::Lit(v) => Ex::Lit(-v),
                        a => Ex::Neg(Box::new(a)),
                    }),
                    "+" => Ok(a),
                    "!" => Ok(Ex::Not(Box::new(a))),
                    "~" => Ok(Ex::BitNot(Box::new(a))),
                    o => Err(format!("unary `{o}`")),
                }
            }
            kind::TERNARY_EXPRESSION | kind::CONDITIONAL_EXPRESSION if self.sem != Sem::Python => {
                let c = self.expr(n.child_by_field_name(field::CONDITION).ok_or("?:")?)?;
                let a = n.child_by_field_name(field::CONSEQUENCE).ok_or("?:")?;
                let a = self.conditionally(|s| s.expr(a))?;
                let b = n.child_by_field_name(field::ALTERNATIVE).ok_or("?:")?;
                let b = self.conditionally(|s| s.expr(b))?;
                Ok(Ex::Cond(Box::new(c), Box::new(a), Box::new(b)))
            }
            kind::CONDITIONAL_EXPRESSION => {
                // Python: `a if c else b`.
                let mut cur = n.walk();
                let parts: Vec<Node> = n.named_children(&mut cur).collect();
                let [a, c, b] = parts.as_slice() else {
                    return Err("conditional expression".into());
                };
                let (a, c, b) = (self.expr(*a)?, self.expr(*c)?, self.expr(*b)?);
                Ok(Ex::Cond(Box::new(c), Box::new(a), Box::new(b)))
            }
            kind::SUBSCRIPT | kind::SUBSCRIPT_EXPRESSION | kind::ARRAY_ACCESS => {
                let (a, i) = self.subscript_parts(n)?;
                Ok(Ex::Index(Box::new(self.expr(a)?), Box::new(self.expr(i)?)))
            }
            kind::FIELD_ACCESS => {
                let obj = n.child_by_field_name(field::OBJECT).ok_or("field")?;
                let f = n.child_by_field_name(field::FIELD).ok_or("field")?;
                if self.text(f) == "length" {
                    return Ok(Ex::Len(Box::new(self.expr(obj)?)));
                }
                Err("field access".into())
            }
            kind::CAST_EXPRESSION => {
                let t = n.child_by_field_name(field::TYPE).ok_or("cast")?;
                let v = n.child_by_field_name(field::VALUE).ok_or("cast")?;
                let ty = STy::from_ty(&parse_type(self.lang, self.text(t)), self.sem)
                    .filter(|t| !matches!(t, STy::Array(_)))
                    .ok_or("cast to an unsupported type")?;
                Ok(Ex::Cast(ty, Box::new(self.expr(v)?)))
            }
            kind::CALL | kind::CALL_EXPRESSION | kind::METHOD_INVOCATION => self.call(n),
            kind::UPDATE_EXPRESSION => self.update_in_expr(n),
            k => Err(format!("unsupported expression `{k}`")),
        }
    }

    /// `++x`, `x++`, `--x`, `x--` inside an expression: the update becomes a statement run
    /// before the statement that holds it (after saving the old value for the postfix forms),
    /// and the expression reads the variable (or the saved value). [`Lower::effectful`] checks
    /// that this keeps the meaning.
    fn update_in_expr(&mut self, n: Node<'_>) -> R<Ex> {
        if self.cond_depth > 0 {
            return Err("`++`/`--` in an operand evaluated only sometimes".into());
        }
        let arg = n
            .child_by_field_name(field::ARGUMENT)
            .or_else(|| n.named_child(0))
            .ok_or("update")?;
        let Place::Var(v) = self.place(arg)? else {
            return Err("`++`/`--` of an element inside an expression".into());
        };
        let text = self.text(n);
        let step = St::Assign(
            Place::Var(v.clone()),
            Ex::Bin(
                if text.contains("++") {
                    Op::Add
                } else {
                    Op::Sub
                },
                Box::new(Ex::Var(v.clone())),
                Box::new(Ex::Lit(1)),
            ),
        );
        self.hoisted.push((v.clone(), n.byte_range()));
        if text.starts_with("++") || text.starts_with("--") {
            self.pre.push(step);
            Ok(Ex::Var(v))
        } else {
            let old = self.fresh("old");
            self.pre.push(St::Decl(old.clone(), None, Some(Ex::Var(v))));
            self.pre.push(step);
            Ok(Ex::Var(old))
        }
    }

    /// Java `a && b` / `a || b` whose right operand `r` holds `++`/`--` (`a + b < c || --a + c
    /// < b`): the updates run only when `r` is evaluated, so the whole operator becomes
    /// statements run before the statement that holds it, in evaluation order (`t = a; if (!t)
    /// { --a; t = r; }` for `||`), and the expression reads `t`. The updates count as made
    /// by the whole operator ([`Lower::effectful`] then refuses a read of an updated variable
    /// before it in the statement: that read would see the new value). When `r` updates
    /// nothing, it stays an operand.
    fn short_circuit_with_updates(
        &mut self,
        n: Node<'_>,
        op: &str,
        a: &Ex,
        r: Node<'_>,
    ) -> R<ShortCircuit> {
        let saved_pre = std::mem::take(&mut self.pre);
        let first_update = self.hoisted.len();
        let b = self.expr(r);
        let r_pre = std::mem::replace(&mut self.pre, saved_pre);
        let b = b?;
        if r_pre.is_empty() {
            return Ok(ShortCircuit::Operand(b));
        }
        let t = self.fresh("sc");
        self.pre
            .push(St::Decl(t.clone(), Some(STy::Bool), Some(a.clone())));
        let evaluated = if op == "||" {
            Ex::Not(Box::new(Ex::Var(t.clone())))
        } else {
            Ex::Var(t.clone())
        };
        let mut body = r_pre;
        body.push(St::Assign(Place::Var(t.clone()), b));
        self.pre.push(St::If(evaluated, body, Vec::new()));
        for h in &mut self.hoisted[first_update..] {
            h.1 = n.byte_range();
        }
        Ok(ShortCircuit::Statements(Ex::Var(t)))
    }

    /// Lowers an operand that is evaluated only sometimes.
    fn conditionally<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.cond_depth += 1;
        let r = f(self);
        self.cond_depth -= 1;
        r
    }

    /// Lowers the expressions of one statement (`n`), putting the effects of its `++`/`--` in
    /// `out` first. Hoisting them keeps the meaning only when the statement reads each updated
    /// variable nowhere else and calls nothing (a callee could read it); otherwise refused.
    fn effectful<T>(
        &mut self,
        n: Node<'_>,
        out: &mut Vec<St>,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let (saved_pre, saved_vars) = (
            std::mem::take(&mut self.pre),
            std::mem::take(&mut self.hoisted),
        );
        let r = f(self);
        let pre = std::mem::replace(&mut self.pre, saved_pre);
        let vars = std::mem::replace(&mut self.hoisted, saved_vars);
        let v = r?;
        if !vars.is_empty() {
            let mut idents = Vec::new();
            let mut calls = false;
            let mut stack = vec![n];
            while let Some(x) = stack.pop() {
                match x.kind() {
                    kind::IDENTIFIER => idents.push(x),
                    kind::CALL | kind::CALL_EXPRESSION | kind::METHOD_INVOCATION => calls = true,
                    _ => {}
                }
                let mut cur = x.walk();
                stack.extend(x.children(&mut cur));
            }
            // A callee cannot read a local variable (in C, one whose address is never
            // taken), so only then may its update move before a call.
            if calls && !vars.iter().all(|(v, _)| self.private_local(v)) {
                return Err(
                    "`++`/`--` of a shared variable inside a statement that calls a function"
                        .into(),
                );
            }
            for (v, at) in &vars {
                for x in idents.iter().filter(|x| self.text(**x) == v) {
                    let r = x.byte_range();
                    if r.start >= at.start && r.end <= at.end {
                        continue;
                    }
                    if !self.read_after_update(*x, at, n) {
                        return Err(format!(
                            "`{v}` is read in the statement that updates it, not after the update"
                        ));
                    }
                }
            }
        }
        out.extend(pre);
        Ok(v)
    }

    /// A parameter or local variable of the function being lowered that no callee can reach:
    /// in C, its address is never taken (`&name` does not occur in the function).
    fn private_local(&self, v: &str) -> bool {
        if !self.locals.iter().any(|l| l == v) {
            return false;
        }
        if self.sem != Sem::C {
            return true;
        }
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !self.body_text.match_indices('&').any(|(i, _)| {
            let rest = self.body_text[i + 1..].trim_start();
            rest.strip_prefix(v).is_some_and(|r| !r.starts_with(ident))
        })
    }

    /// Whether the read `x` of a variable surely happens after its update at `at`, within the
    /// statement `stmt`. Java evaluates operands left to right, so any read to the right of
    /// the update does. C does not order the operands of most operators (two such accesses are
    /// undefined behaviour): there the read must lie in the right operand of a `&&` or `||`
    /// whose left operand holds the update.
    fn read_after_update(&self, x: Node<'_>, at: &std::ops::Range<usize>, stmt: Node<'_>) -> bool {
        if x.start_byte() < at.end {
            return false;
        }
        if self.sem != Sem::C {
            return true;
        }
        let mut cur = x;
        while let Some(p) = cur.parent() {
            if p.kind() == kind::BINARY_EXPRESSION {
                let op = p.child_by_field_name(field::OPERATOR).map(|o| self.text(o));
                let (l, r) = (
                    p.child_by_field_name(field::LEFT),
                    p.child_by_field_name(field::RIGHT),
                );
                if let (Some("&&" | "||"), Some(l), Some(r)) = (op, l, r) {
                    let lr = l.byte_range();
                    if r.byte_range().contains(&x.start_byte())
                        && lr.start <= at.start
                        && at.end <= lr.end
                    {
                        return true;
                    }
                }
            }
            if p.id() == stmt.id() {
                break;
            }
            cur = p;
        }
        false
    }

    /// [`Lower::effectful`] where no effect can be placed: an effect is refused.
    fn pure<T>(&mut self, n: Node<'_>, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let mut pre = Vec::new();
        let v = self.effectful(n, &mut pre, f)?;
        if pre.is_empty() {
            Ok(v)
        } else {
            Err("`++`/`--` where its effect has no place".into())
        }
    }

    fn call(&mut self, n: Node<'_>) -> R<Ex> {
        let args = self.call_args(n)?;
        let name = if n.kind() == kind::METHOD_INVOCATION {
            let name = self.text(n.child_by_field_name(field::NAME).ok_or("call")?);
            match n.child_by_field_name(field::OBJECT).map(|o| self.text(o)) {
                None => name.to_string(),
                Some("Math") if matches!(name, "abs" | "min" | "max") => format!("%{name}"),
                Some("this") => name.to_string(),
                Some(_) => return Err("method call on an object".into()),
            }
        } else {
            let f = n.child_by_field_name(field::FUNCTION).ok_or("call")?;
            if f.kind() != kind::IDENTIFIER {
                return Err("call of something other than a name".into());
            }
            let name = self.text(f);
            match (self.sem, name) {
                (Sem::Python, "abs" | "min" | "max") => format!("%{name}"),
                (Sem::Python, "len") => {
                    return match args.as_slice() {
                        [a] => Ok(Ex::Len(Box::new(a.clone()))),
                        _ => Err("len arity".into()),
                    }
                }
                (Sem::Python, "int") => {
                    return match args.as_slice() {
                        [a] => Ok(Ex::Call("%int".into(), vec![a.clone()])),
                        _ => Err("int() arity".into()),
                    }
                }
                (Sem::Python, "bool") => {
                    return match args.as_slice() {
                        [a] => Ok(Ex::Not(Box::new(Ex::Not(Box::new(a.clone()))))),
                        _ => Err("bool() arity".into()),
                    }
                }
                (Sem::C, "abs") => "%abs".to_string(),
                _ => name.to_string(),
            }
        };
        Ok(Ex::Call(name, args))
    }
}

/// A loop whose condition has effects (`pre`) runs them and tests the condition at the top of
/// every iteration: `while (true) { pre; if (!cond) break; body }` (a `continue` reaches the
/// update, then the top again).
fn loop_with_effects(pre: Vec<St>, cond: Ex, body: Vec<St>, update: Vec<St>) -> St {
    if pre.is_empty() {
        return St::Loop {
            cond,
            body,
            update,
            test_first: true,
        };
    }
    let mut b = pre;
    b.push(St::If(Ex::Not(Box::new(cond)), vec![St::Break], vec![]));
    b.extend(body);
    St::Loop {
        cond: Ex::BoolLit(true),
        body: b,
        update,
        test_first: true,
    }
}

fn place_expr(p: &Place) -> Ex {
    match p {
        Place::Var(v) => Ex::Var(v.clone()),
        Place::Index(a, i) => Ex::Index(Box::new(Ex::Var(a.clone())), Box::new(i.clone())),
    }
}

/// An integer literal's value (decimal, hex, octal, binary; `_` separators; C and Java suffixes).
pub fn int_literal(t: &str, sem: Sem) -> Option<i128> {
    let t = t.replace('_', "");
    let t = if sem == Sem::Python {
        t.as_str()
    } else {
        t.trim_end_matches(['l', 'L', 'u', 'U'])
    };
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if let Some(o) = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")) {
        (o, 8)
    } else if sem != Sem::Python && t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    i128::from_str_radix(digits, radix).ok()
}
