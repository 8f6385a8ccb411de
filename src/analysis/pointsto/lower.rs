//! Lowering of C/C++ expressions to a small pointer IR shared by constraint generation and
//! post-solve evaluation.
//!
//! An expression is either an *rvalue* ([`Val`], a set of abstract objects it may point to)
//! or an *lvalue* ([`Loc`], a set of abstract objects it may designate). The rules mirror C:
//! `&e` is `Addr(loc e)`, `*e` is `Deref(val e)`, `e[i]` is `*(e + i)`, `e->f` is `(*e).f`,
//! and `e.f` designates the field object `f` of each object `e` designates (`&e.f` is
//! `Gep(&e, f)`; see [`ObjKey::field`] for where fields collapse into their base). Arrays and
//! functions used as values decay to their own address. Recursion is bounded by [`MAX_DEPTH`]; deeper
//! sub-expressions lower to "nothing" and the first such place is recorded.

use super::model::{simple_class_name, FieldInfo, Model, VarFlags};
use super::types::NO_FILTER;
use crate::syntax::lang::{field, kind};
use crate::syntax::position::ColumnEncoding;
use crate::syntax::{Language, ParsedFile};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Nesting depth beyond which sub-expressions are ignored (and an error is recorded).
pub const MAX_DEPTH: usize = 256;

/// Field objects nest at most this deep (`s.a.b.c`); a field of a field at this depth
/// designates that field itself (field-insensitive below it), which keeps the number of
/// objects finite for self-referential accesses such as `p = &p->next`.
pub const MAX_FIELD_DEPTH: usize = 3;

/// A name in a constraint key: shared, so the copies of a key in the solver's maps (node
/// keys, object keys, object ids) cost a reference count, not an allocation each; ordered
/// and hashed as the string.
pub(crate) type Name = std::sync::Arc<str>;

/// A variable: a global (`function == None`) or a local/parameter of a function.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct VarKey {
    pub function: Option<Name>,
    pub name: Name,
}

/// An abstract memory object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum ObjKey {
    Var(VarKey),
    Func(Name),
    /// Allocation site, `malloc@FILE:LINE:COL`.
    Heap(Name),
    /// The field of an object (a struct variable, a heap block, or a field itself).
    Field(Box<ObjKey>, Name),
    /// Internal: the meeting point of one struct copy between two pointer-designated places
    /// (never in a points-to set).
    Hub(u32),
}

impl ObjKey {
    fn field_depth(&self) -> usize {
        let mut depth = 0;
        let mut cur = self;
        while let ObjKey::Field(base, _) = cur {
            depth += 1;
            cur = base;
        }
        depth
    }

    /// The object designated by field `f` of this object. Only objects that can have a
    /// field `f` get one: a variable or field declared with a struct type whose layout has
    /// `f`, or a heap block (type unknown). Anything else (a function, a pointer variable
    /// reached through a cast, a field of a scalar field) stands for its own fields, which is
    /// field-insensitive there and keeps imprecise pointer sets from spawning fields of
    /// everything. Fields nest at most [`MAX_FIELD_DEPTH`] deep.
    pub(crate) fn field(&self, f: &str, filter: &FieldFilter) -> ObjKey {
        match self {
            _ if !filter.has_field(self, f) => self.clone(),
            _ if self.field_depth() >= MAX_FIELD_DEPTH => self.clone(),
            _ => ObjKey::Field(Box::new(self.clone()), f.into()),
        }
    }
}

/// Which objects have which fields (from declared struct types), for [`ObjKey::field`].
/// Field-name sets are stored once per struct type, however many variables have that type.
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldFilter {
    /// Struct layout key -> its field names.
    pub types: HashMap<String, HashSet<String>>,
    /// Variables declared with a known struct type -> the layout key.
    pub vars: HashMap<VarKey, String>,
    /// Fields declared with a known struct type -> the layout key.
    pub fields: HashMap<String, String>,
}

impl FieldFilter {
    pub fn has_field(&self, base: &ObjKey, f: &str) -> bool {
        let of_type = |t: Option<&String>| {
            t.and_then(|t| self.types.get(t))
                .is_some_and(|fs| fs.contains(f))
        };
        match base {
            // A heap block's type is unknown; a copy hub carries whatever fields pass.
            ObjKey::Heap(_) | ObjKey::Hub(_) => true,
            ObjKey::Var(v) => of_type(self.vars.get(v)),
            ObjKey::Field(_, inner) => of_type(self.fields.get(&**inner)),
            ObjKey::Func(_) => false,
        }
    }
}

/// An lvalue: the objects an expression may designate.
#[derive(Debug, Clone)]
pub(crate) enum Loc {
    Obj(ObjKey),
    Deref(Box<Val>),
}

/// An rvalue: the objects an expression's value may point to (plus its side effects).
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Nothing,
    Addr(Loc),
    Load(Loc),
    Union(Vec<Val>),
    /// Evaluate all for side effects; the value is the last element's.
    Seq(Vec<Val>),
    /// Store the value into the location; the value is the stored value.
    Assign(Box<Loc>, Box<Val>),
    Call(Box<CallIr>),
    /// The address of field `f` of every object the value points to (`&p->f`).
    Gep(Box<Val>, String),
    /// A value converted to a pointer type with a declared-type filter (see
    /// [`super::types`]): `(struct S *)v` designates only what an `S` pointer may.
    Cast(Box<Val>, u32),
}

#[derive(Debug, Clone)]
pub(crate) struct CallIr {
    pub callee: Callee,
    pub args: Vec<Val>,
}

#[derive(Debug, Clone)]
pub(crate) enum Callee {
    /// Defined functions (all candidates are bound); `receiver` is the value bound to `this`.
    Defined {
        names: Vec<String>,
        receiver: Option<Val>,
    },
    /// A call through a pointer: every function the value may point to is bound.
    Indirect(Val),
    /// A heap allocation; `keeps_arg0` for `realloc` (the result may be the old block).
    Alloc { heap: Name, keeps_arg0: bool },
    /// `memcpy(d, s, n)` and friends: `*d = *s`, result `d`.
    CopyMem,
    /// Library functions returning (a pointer into) their first argument.
    ReturnsArg0,
    /// Unknown external function: arguments evaluated for side effects, no result.
    External,
    /// C++ `new T(args)`: a heap object bound as `this` of T's constructors.
    New { heap: Name, ctors: Vec<String> },
}

/// Allocation functions: the result is a fresh heap object named by its site.
const ALLOC_FNS: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "strdup",
    "strndup",
    "aligned_alloc",
    "valloc",
    "alloca",
];
const COPY_FNS: &[&str] = &[
    "memcpy", "memmove", "strcpy", "strncpy", "strcat", "strncat",
];
const RETURNS_ARG0_FNS: &[&str] = &[
    "memset", "strchr", "strrchr", "strstr", "strpbrk", "memchr", "strtok", "fgets",
];

pub(crate) fn deref(v: Val) -> Loc {
    match v {
        Val::Addr(l) => l,
        other => Loc::Deref(Box::new(other)),
    }
}

pub(crate) fn addr(l: Loc) -> Val {
    match l {
        Loc::Deref(v) => *v,
        other => Val::Addr(other),
    }
}

/// The address of the object a value was read from, if the value is a plain read
/// (used to bind C++ reference parameters).
pub(crate) fn address_of_value(v: &Val) -> Val {
    match v {
        Val::Load(l) => addr(l.clone()),
        Val::Seq(items) => items.last().map(address_of_value).unwrap_or(Val::Nothing),
        Val::Assign(l, _) => addr((**l).clone()),
        Val::Cast(inner, _) => address_of_value(inner),
        _ => Val::Nothing,
    }
}

fn push_operand(kept: &mut Vec<Val>, effects: &mut Vec<Val>, keeping: bool, v: Val) {
    if keeping {
        if !matches!(v, Val::Nothing) {
            kept.push(v);
        }
    } else if !is_pure(&v) {
        effects.push(v);
    }
}

fn union(mut items: Vec<Val>) -> Val {
    items.retain(|v| !matches!(v, Val::Nothing));
    match items.len() {
        0 => Val::Nothing,
        1 => items.pop().unwrap_or(Val::Nothing),
        _ => Val::Union(items),
    }
}

fn seq(mut effects: Vec<Val>, value: Val) -> Val {
    effects.retain(|v| !is_pure(v));
    if effects.is_empty() {
        value
    } else {
        effects.push(value);
        Val::Seq(effects)
    }
}

/// True when evaluating the value has no side effects worth generating constraints for.
fn is_pure(v: &Val) -> bool {
    matches!(
        v,
        Val::Nothing | Val::Addr(Loc::Obj(_)) | Val::Load(Loc::Obj(_))
    )
}

/// How an identifier resolves in a scope.
enum Resolved {
    Var(VarKey, VarFlags),
    /// A data member of the enclosing C++ class (`this->name`); flag: declared as array.
    ThisField(String, bool),
    Funcs(Vec<String>),
    /// Not declared anywhere in the analysed units (an extern, a macro, a library function).
    Unknown,
}

/// Expression kinds handed to the lowering (the statement walker stops descending there).
pub(crate) fn is_expression_kind(kind: &str) -> bool {
    matches!(
        kind,
        kind::ASSIGNMENT_EXPRESSION
            | kind::BINARY_EXPRESSION
            | kind::CALL_EXPRESSION
            | kind::CAST_EXPRESSION
            | kind::COMPOUND_LITERAL_EXPRESSION
            | kind::CONDITIONAL_EXPRESSION
            | kind::FIELD_EXPRESSION
            | kind::PARENTHESIZED_EXPRESSION
            | kind::POINTER_EXPRESSION
            | kind::SUBSCRIPT_EXPRESSION
            | kind::UNARY_EXPRESSION
            | kind::UPDATE_EXPRESSION
            | kind::COMMA_EXPRESSION
            | kind::NEW_EXPRESSION
            | kind::DELETE_EXPRESSION
            | kind::EXTENSION_EXPRESSION
            | kind::LAMBDA_EXPRESSION
            | kind::IDENTIFIER
            | kind::QUALIFIED_IDENTIFIER
            | kind::THIS
            | kind::SIZEOF_EXPRESSION
    )
}

pub(crate) struct Lowerer<'a> {
    pub model: &'a Model,
    pub unit: usize,
    pub file: &'a ParsedFile,
    /// Qualified name of the enclosing function, `None` for global initialisers.
    pub func: Option<&'a str>,
    /// Byte offset of the first sub-expression beyond [`MAX_DEPTH`], if any.
    pub too_deep: Option<usize>,
}

impl<'a> Lowerer<'a> {
    pub fn new(model: &'a Model, unit: usize, file: &'a ParsedFile, func: Option<&'a str>) -> Self {
        Lowerer {
            model,
            unit,
            file,
            func,
            too_deep: None,
        }
    }

    fn text(&self, node: Node<'_>) -> &'a str {
        self.file.node_text(node)
    }

    fn is_cpp(&self) -> bool {
        self.file.language == Language::Cpp
    }

    fn over_limit(&mut self, node: Node<'_>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            self.too_deep.get_or_insert(node.start_byte());
            true
        } else {
            false
        }
    }

    /// The named children of a node, comments excluded.
    fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() != kind::COMMENT)
            .collect()
    }

    /// The heap object name for an allocation at `node`.
    fn heap_name(&self, what: &str, node: Node<'_>) -> String {
        let pos = self.file.position(node.start_byte(), ColumnEncoding::Utf8);
        let path = self
            .model
            .units
            .get(self.unit)
            .map(|u| u.path.as_str())
            .unwrap_or("");
        format!("{what}@{path}:{}:{}", pos.line + 1, pos.col + 1)
    }

    fn resolve(&self, name: &str) -> Resolved {
        // Locals of this function, then of enclosing functions (lambdas, nested functions).
        let mut current = self.func.map(str::to_string);
        let mut class_scope: Option<(String, String)> = None; // (function, class)
        for _ in 0..64 {
            let Some(f) = current.take() else { break };
            let Some(scope) = self.model.scopes.get(&f) else {
                break;
            };
            if let Some(flags) = scope.locals.get(name) {
                return Resolved::Var(
                    VarKey {
                        function: Some(f.into()),
                        name: name.into(),
                    },
                    *flags,
                );
            }
            if class_scope.is_none() {
                if let Some(c) = &scope.class {
                    if scope.locals.contains_key("this") {
                        class_scope = Some((f.clone(), c.clone()));
                    }
                }
            }
            current = scope.container.clone();
        }
        if let Some((f, class)) = class_scope {
            if let Some(&array) = self
                .model
                .class_fields
                .get(&class)
                .and_then(|m| m.get(name))
            {
                return Resolved::ThisField(f, array);
            }
        }
        if let Some(flags) = self.model.globals.get(name) {
            return Resolved::Var(
                VarKey {
                    function: None,
                    name: name.into(),
                },
                *flags,
            );
        }
        let funcs = self.model.resolve_function(name, self.func);
        if !funcs.is_empty() {
            return Resolved::Funcs(funcs);
        }
        if self.model.prototypes.contains(name) {
            return Resolved::Funcs(vec![name.to_string()]);
        }
        Resolved::Unknown
    }

    /// The function whose `this` is visible here (a method, or the method around a lambda).
    fn this_owner(&self) -> Option<String> {
        let mut current = self.func.map(str::to_string);
        for _ in 0..64 {
            let f = current.take()?;
            let scope = self.model.scopes.get(&f)?;
            if scope.locals.contains_key("this") {
                return Some(f);
            }
            current = scope.container.clone();
        }
        None
    }

    fn unknown_global(name: &str) -> Loc {
        // Unknown names (externs declared elsewhere, macros) are treated as globals.
        Loc::Obj(ObjKey::Var(VarKey {
            function: None,
            name: name.into(),
        }))
    }

    /// A data member used without `this->`: field `name` of `*this`.
    fn this_loc(&self, function: String, name: &str) -> Loc {
        let this = Val::Load(Loc::Obj(ObjKey::Var(VarKey {
            function: Some(function.into()),
            name: "this".into(),
        })));
        deref(self.gep(this, name))
    }

    /// The address of field `field` of what `v` points to. Fields declared in a union (or
    /// in an anonymous union of a struct) overlap, so they designate the object itself.
    pub(crate) fn gep(&self, v: Val, field: &str) -> Val {
        if self.model.union_fields.contains(field) {
            return v;
        }
        match v {
            Val::Nothing => Val::Nothing,
            Val::Addr(Loc::Obj(key)) => Val::Addr(Loc::Obj(key.field(field, &self.model.filter))),
            Val::Union(items) => union(items.into_iter().map(|i| self.gep(i, field)).collect()),
            other => Val::Gep(Box::new(other), field.to_string()),
        }
    }

    /// The lvalue of a name.
    fn name_loc(&self, name: &str) -> Loc {
        match self.resolve(name) {
            Resolved::Var(key, flags) => {
                let obj = Loc::Obj(ObjKey::Var(key));
                if flags.reference {
                    deref(Val::Load(obj))
                } else {
                    obj
                }
            }
            Resolved::ThisField(f, _) => self.this_loc(f, name),
            Resolved::Funcs(fs) => match fs.into_iter().next() {
                Some(f) => Loc::Obj(ObjKey::Func(f.into())),
                None => Loc::Deref(Box::new(Val::Nothing)),
            },
            Resolved::Unknown => Self::unknown_global(name),
        }
    }

    /// The rvalue of a name (arrays and functions decay to their address).
    fn name_val(&self, name: &str) -> Val {
        match self.resolve(name) {
            Resolved::Var(key, flags) => {
                let obj = Loc::Obj(ObjKey::Var(key));
                let loc = if flags.reference {
                    deref(Val::Load(obj))
                } else {
                    obj
                };
                if flags.array {
                    addr(loc)
                } else {
                    Val::Load(loc)
                }
            }
            Resolved::ThisField(f, array) => {
                let loc = self.this_loc(f, name);
                if array {
                    addr(loc)
                } else {
                    Val::Load(loc)
                }
            }
            Resolved::Funcs(fs) => union(
                fs.into_iter()
                    .map(|f| Val::Addr(Loc::Obj(ObjKey::Func(f.into()))))
                    .collect(),
            ),
            Resolved::Unknown => Val::Load(Self::unknown_global(name)),
        }
    }

    fn qualified_text(&self, node: Node<'_>) -> String {
        self.text(node).split_whitespace().collect()
    }

    /// Lowers an initialiser: an expression, or an initializer list (whose element values all
    /// flow into the initialised object, field-insensitively).
    pub fn init_value(&mut self, node: Node<'_>, depth: usize) -> Val {
        if self.over_limit(node, depth) {
            return Val::Nothing;
        }
        match node.kind() {
            kind::INITIALIZER_LIST | kind::ARGUMENT_LIST => {
                let items = Self::children(node)
                    .into_iter()
                    .map(|c| self.init_value(c, depth + 1))
                    .collect();
                union(items)
            }
            kind::INITIALIZER_PAIR => match node.child_by_field_name(field::VALUE) {
                Some(v) => self.init_value(v, depth + 1),
                None => Val::Nothing,
            },
            _ => self.val(node, depth),
        }
    }

    /// Lowers `loc = init` for a declaration's initialiser, by shape: an array's elements
    /// all flow into the array object; a struct's initializer list assigns its fields by
    /// position (from the struct's declared layout) or by designator (`.f = v`), nesting
    /// into struct-typed fields; anything else is an ordinary assignment (a struct copy
    /// when the value is a struct). `layout` names the struct type (tag, typedef or anonymous
    /// layout key), when known.
    pub fn init_into(
        &mut self,
        loc: Loc,
        node: Node<'_>,
        layout: Option<&str>,
        array: bool,
        depth: usize,
    ) -> Vec<Val> {
        if self.over_limit(node, depth) {
            return Vec::new();
        }
        let d = depth + 1;
        if node.kind() != kind::INITIALIZER_LIST {
            let value = self.init_value(node, d);
            return vec![Val::Assign(Box::new(loc), Box::new(value))];
        }
        let model: &'a Model = self.model;
        let mut out = Vec::new();
        let fields = if array {
            None
        } else {
            layout.and_then(|l| model.layout(l))
        };
        let Some(fields) = fields else {
            // An array (or a struct of unknown layout): every element flows into the object.
            for c in Self::children(node) {
                let value = match c.kind() {
                    kind::INITIALIZER_PAIR => match c.child_by_field_name(field::VALUE) {
                        Some(v) => v,
                        None => continue,
                    },
                    _ => c,
                };
                let elem_layout = if array { layout } else { None };
                out.extend(self.init_into(loc.clone(), value, elem_layout, false, d));
            }
            return out;
        };
        // Designator lookups by name in O(1), whatever the struct's size: this struct's
        // fields, and those of nested structs (`.a.b = v`) once they are first named.
        let by_name = |fs: &'a [FieldInfo]| -> HashMap<&'a str, usize> {
            fs.iter()
                .enumerate()
                .rev()
                .map(|(i, f)| (f.name.as_str(), i))
                .collect()
        };
        let index = by_name(fields);
        let mut nested: HashMap<&str, HashMap<&str, usize>> = HashMap::new();
        let mut next = 0usize;
        for c in Self::children(node) {
            if c.kind() == kind::INITIALIZER_PAIR {
                let Some(value) = c.child_by_field_name(field::VALUE) else {
                    continue;
                };
                let mut cursor = c.walk();
                let designators: Vec<Node<'_>> = c
                    .children_by_field_name(field::DESIGNATOR, &mut cursor)
                    .collect();
                let mut cur = loc.clone();
                let mut cur_fields = Some(fields);
                let (mut cur_layout, mut cur_array) = (None, false);
                for (i, des) in designators.iter().enumerate() {
                    let name = match des.kind() {
                        kind::FIELD_DESIGNATOR => Self::children(*des)
                            .first()
                            .map(|f| self.text(*f).to_string()),
                        kind::FIELD_IDENTIFIER => Some(self.text(*des).to_string()),
                        // `[i] = v`, `[a ... b] = v`: the same array object.
                        _ => {
                            cur_array = false;
                            continue;
                        }
                    };
                    let Some(name) = name else { continue };
                    let info = if i == 0 {
                        index.get(name.as_str()).copied()
                    } else {
                        match (cur_layout, cur_fields) {
                            (Some(l), Some(fs)) => nested
                                .entry(l)
                                .or_insert_with(|| by_name(fs))
                                .get(name.as_str())
                                .copied(),
                            _ => None,
                        }
                    };
                    if i == 0 {
                        if let Some(pos) = info {
                            next = pos + 1;
                        }
                    }
                    let field = info.and_then(|pos| cur_fields.and_then(|fs| fs.get(pos)));
                    cur_layout = field.and_then(|f| f.layout.as_deref());
                    cur_array = field.is_some_and(|f| f.array);
                    cur_fields = cur_layout.and_then(|l| model.layout(l));
                    cur = deref(self.gep(addr(cur), &name));
                }
                out.extend(self.init_into(cur, value, cur_layout, cur_array, d));
                continue;
            }
            match fields.get(next) {
                Some(f) => {
                    let target = deref(self.gep(addr(loc.clone()), &f.name));
                    let (l, a) = (f.layout.clone(), f.array);
                    out.extend(self.init_into(target, c, l.as_deref(), a, d));
                }
                // More values than fields (or an anonymous member): into the object itself.
                None => out.extend(self.init_into(loc.clone(), c, None, false, d)),
            }
            next += 1;
        }
        out
    }

    /// Lowers an expression as an rvalue. A thin dispatcher: the work happens in
    /// out-of-line helpers so that each nesting level costs little stack.
    pub fn val(&mut self, node: Node<'_>, depth: usize) -> Val {
        if self.over_limit(node, depth) {
            return Val::Nothing;
        }
        let d = depth + 1;
        match node.kind() {
            kind::IDENTIFIER => self.name_val(self.text(node)),
            kind::QUALIFIED_IDENTIFIER | kind::TEMPLATE_FUNCTION => self.val_qualified(node),
            kind::THIS => self.val_this(),
            kind::PARENTHESIZED_EXPRESSION | kind::EXTENSION_EXPRESSION => self.val_paren(node, d),
            kind::CAST_EXPRESSION => self.val_cast(node, d),
            kind::UPDATE_EXPRESSION => self.val_field_of(node, field::ARGUMENT, d),
            kind::POINTER_EXPRESSION => self.val_pointer(node, d),
            kind::FIELD_EXPRESSION => self.val_member(node, depth),
            kind::SUBSCRIPT_EXPRESSION => self.val_load(node, depth),
            kind::CALL_EXPRESSION => self.call(node, d),
            kind::ASSIGNMENT_EXPRESSION => self.assignment(node, d),
            kind::BINARY_EXPRESSION => self.binary(node, depth),
            kind::CONDITIONAL_EXPRESSION => self.val_conditional(node, d),
            kind::COMMA_EXPRESSION => self.val_comma(node, d),
            kind::COMPOUND_LITERAL_EXPRESSION => self.val_compound_literal(node, d),
            kind::INITIALIZER_LIST => self.init_value(node, depth),
            kind::NEW_EXPRESSION => self.new_expr(node, d),
            kind::LAMBDA_EXPRESSION => self.val_lambda(node),
            // Literals, sizeof/alignof/offsetof (unevaluated), strings.
            kind::NUMBER_LITERAL
            | kind::CHAR_LITERAL
            | kind::STRING_LITERAL
            | kind::CONCATENATED_STRING
            | kind::RAW_STRING_LITERAL
            | kind::TRUE
            | kind::FALSE
            | kind::NULL
            | "nullptr"
            | kind::SIZEOF_EXPRESSION
            | kind::ALIGNOF_EXPRESSION
            | kind::OFFSETOF_EXPRESSION
            | kind::USER_DEFINED_LITERAL => Val::Nothing,
            kind::DELETE_EXPRESSION | kind::UNARY_EXPRESSION => self.val_effects(node, d, false),
            // Unknown or broken (ERROR) nodes: keep the side effects of expression children.
            _ => self.val_effects(node, d, true),
        }
    }

    #[inline(never)]
    fn val_qualified(&mut self, node: Node<'_>) -> Val {
        let name = self.qualified_text(node);
        let fs = self.model.resolve_function(&name, self.func);
        if !fs.is_empty() {
            return union(
                fs.into_iter()
                    .map(|f| Val::Addr(Loc::Obj(ObjKey::Func(f.into()))))
                    .collect(),
            );
        }
        let base = match node.kind() {
            kind::TEMPLATE_FUNCTION => node
                .child_by_field_name(field::NAME)
                .map(|n| self.text(n).to_string())
                .unwrap_or(name),
            _ => simple_class_name(&name),
        };
        self.name_val(&base)
    }

    #[inline(never)]
    fn val_this(&mut self) -> Val {
        match self.this_owner() {
            Some(f) => Val::Load(Loc::Obj(ObjKey::Var(VarKey {
                function: Some(f.into()),
                name: "this".into(),
            }))),
            None => Val::Nothing,
        }
    }

    #[inline(never)]
    fn val_paren(&mut self, node: Node<'_>, d: usize) -> Val {
        match Self::children(node).pop() {
            Some(inner) if inner.kind() != kind::COMPOUND_STATEMENT => self.val(inner, d),
            _ => Val::Nothing,
        }
    }

    /// `(T *)v`: `v`'s targets, filtered by `T` where the value is not a static address.
    #[inline(never)]
    fn val_cast(&mut self, node: Node<'_>, d: usize) -> Val {
        let inner = self.val_field_of(node, field::VALUE, d);
        if matches!(inner, Val::Nothing | Val::Addr(_)) {
            return inner;
        }
        let filter = node
            .child_by_field_name(field::TYPE)
            .map(|t| self.model.descriptor_filter(self.unit, self.file, t))
            .unwrap_or(NO_FILTER);
        if filter == NO_FILTER {
            return inner;
        }
        Val::Cast(Box::new(inner), filter)
    }

    #[inline(never)]
    fn val_field_of(&mut self, node: Node<'_>, field: &str, d: usize) -> Val {
        match node.child_by_field_name(field) {
            Some(v) => self.val(v, d),
            None => Val::Nothing,
        }
    }

    #[inline(never)]
    fn val_pointer(&mut self, node: Node<'_>, d: usize) -> Val {
        let Some(arg) = node.child_by_field_name(field::ARGUMENT) else {
            return Val::Nothing;
        };
        if self.operator_is(node, "&") {
            addr(self.loc(arg, d))
        } else {
            Val::Load(deref(self.val(arg, d)))
        }
    }

    #[inline(never)]
    fn val_member(&mut self, node: Node<'_>, depth: usize) -> Val {
        let array_field = self.field_is_array(node);
        let loc = self.loc(node, depth);
        match array_field {
            Some(true) => addr(loc),
            Some(false) => Val::Load(loc),
            None => {
                let a = addr(loc.clone());
                union(vec![a, Val::Load(loc)])
            }
        }
    }

    #[inline(never)]
    fn val_load(&mut self, node: Node<'_>, depth: usize) -> Val {
        Val::Load(self.loc(node, depth))
    }

    #[inline(never)]
    fn val_conditional(&mut self, node: Node<'_>, d: usize) -> Val {
        let cond = self.val_field_of(node, field::CONDITION, d);
        let a = self.val_field_of(node, field::CONSEQUENCE, d);
        let b = self.val_field_of(node, field::ALTERNATIVE, d);
        seq(vec![cond], union(vec![a, b]))
    }

    /// Right-nested chains (`a, b, c`) are walked iteratively.
    #[inline(never)]
    fn val_comma(&mut self, node: Node<'_>, d: usize) -> Val {
        let mut effects = Vec::new();
        let mut cur = node;
        while cur.kind() == kind::COMMA_EXPRESSION {
            if let Some(l) = cur.child_by_field_name(field::LEFT) {
                let v = self.val(l, d);
                if !is_pure(&v) {
                    effects.push(v);
                }
            }
            match cur.child_by_field_name(field::RIGHT) {
                Some(r) => cur = r,
                None => return seq(effects, Val::Nothing),
            }
        }
        let last = self.val(cur, d);
        seq(effects, last)
    }

    #[inline(never)]
    fn val_compound_literal(&mut self, node: Node<'_>, d: usize) -> Val {
        match node.child_by_field_name(field::VALUE) {
            Some(v) => self.init_value(v, d),
            None => Val::Nothing,
        }
    }

    #[inline(never)]
    fn val_lambda(&mut self, node: Node<'_>) -> Val {
        let name = self
            .model
            .units
            .get(self.unit)
            .and_then(|u| u.lambdas.get(&node.start_byte()));
        match name {
            Some(n) => Val::Addr(Loc::Obj(ObjKey::Func(n.as_str().into()))),
            None => Val::Nothing,
        }
    }

    /// Side effects of the expression children; no value.
    #[inline(never)]
    fn val_effects(&mut self, node: Node<'_>, d: usize, include_errors: bool) -> Val {
        let mut effects = Vec::new();
        for c in Self::children(node) {
            if is_expression_kind(c.kind()) || (include_errors && c.kind() == "ERROR") {
                let v = self.val(c, d);
                if !is_pure(&v) {
                    effects.push(v);
                }
            }
        }
        seq(effects, Val::Nothing)
    }

    fn operator_is(&self, node: Node<'_>, op: &str) -> bool {
        node.child_by_field_name(field::OPERATOR)
            .map(|o| self.text(o) == op)
            .unwrap_or(false)
    }

    /// Whether `e.f` names an array member: `Some(true)` array only, `Some(false)` never an
    /// array (or unknown field), `None` declared both ways in different structs.
    fn field_is_array(&self, node: Node<'_>) -> Option<bool> {
        let field = node.child_by_field_name(field::FIELD)?;
        match self.model.field_kinds.get(self.text(field)) {
            Some((true, false)) => Some(true),
            Some((true, true)) => None,
            _ => Some(false),
        }
    }

    /// Lowers an expression as an lvalue (dispatcher; helpers are out of line).
    pub fn loc(&mut self, node: Node<'_>, depth: usize) -> Loc {
        if self.over_limit(node, depth) {
            return Loc::Deref(Box::new(Val::Nothing));
        }
        let d = depth + 1;
        match node.kind() {
            kind::IDENTIFIER => self.name_loc(self.text(node)),
            kind::QUALIFIED_IDENTIFIER => self.loc_qualified(node),
            kind::PARENTHESIZED_EXPRESSION | kind::EXTENSION_EXPRESSION => self.loc_paren(node, d),
            kind::CAST_EXPRESSION => self.loc_cast(node, d),
            kind::POINTER_EXPRESSION if !self.operator_is(node, "&") => self.loc_deref(node, d),
            kind::FIELD_EXPRESSION => self.loc_member(node, d),
            kind::SUBSCRIPT_EXPRESSION => self.loc_subscript(node, d),
            kind::CONDITIONAL_EXPRESSION => self.loc_conditional(node, d),
            kind::ASSIGNMENT_EXPRESSION | kind::COMMA_EXPRESSION => self.loc_assigned(node, d),
            _ => self.loc_none(node, d),
        }
    }

    #[inline(never)]
    fn loc_qualified(&mut self, node: Node<'_>) -> Loc {
        let name = self.qualified_text(node);
        match self
            .model
            .resolve_function(&name, self.func)
            .into_iter()
            .next()
        {
            Some(f) => Loc::Obj(ObjKey::Func(f.into())),
            None => self.name_loc(&simple_class_name(&name)),
        }
    }

    #[inline(never)]
    fn loc_paren(&mut self, node: Node<'_>, d: usize) -> Loc {
        match Self::children(node).pop() {
            Some(inner) if inner.kind() != kind::COMPOUND_STATEMENT => self.loc(inner, d),
            _ => Loc::Deref(Box::new(Val::Nothing)),
        }
    }

    #[inline(never)]
    fn loc_cast(&mut self, node: Node<'_>, d: usize) -> Loc {
        match node.child_by_field_name(field::VALUE) {
            Some(v) => self.loc(v, d),
            None => Loc::Deref(Box::new(Val::Nothing)),
        }
    }

    #[inline(never)]
    fn loc_deref(&mut self, node: Node<'_>, d: usize) -> Loc {
        match node.child_by_field_name(field::ARGUMENT) {
            Some(a) => deref(self.val(a, d)),
            None => Loc::Deref(Box::new(Val::Nothing)),
        }
    }

    /// `e->f` is field `f` of `*e`, `e.f` field `f` of `e`. Pointer-to-member accesses
    /// (`e.*m`, `e->*m`) designate the whole object (the member is not known statically).
    #[inline(never)]
    fn loc_member(&mut self, node: Node<'_>, d: usize) -> Loc {
        let Some(arg) = node.child_by_field_name(field::ARGUMENT) else {
            return Loc::Deref(Box::new(Val::Nothing));
        };
        let arrow = self.operator_is(node, "->");
        let field = node
            .child_by_field_name(field::FIELD)
            .filter(|f| {
                matches!(
                    f.kind(),
                    kind::FIELD_IDENTIFIER
                        | kind::QUALIFIED_IDENTIFIER
                        | kind::TEMPLATE_METHOD
                        | kind::DESTRUCTOR_NAME
                )
            })
            .map(|f| simple_class_name(&self.qualified_text(f)));
        let base = if arrow {
            self.val(arg, d)
        } else {
            addr(self.loc(arg, d))
        };
        match field {
            Some(f) if !self.operator_is(node, ".*") && !self.operator_is(node, "->*") => {
                deref(self.gep(base, &f))
            }
            _ => deref(base),
        }
    }

    /// `e[i]` is `*(e + i)`.
    #[inline(never)]
    fn loc_subscript(&mut self, node: Node<'_>, d: usize) -> Loc {
        let base = self.val_field_of(node, field::ARGUMENT, d);
        let index = match node.child_by_field_name(field::INDEX) {
            Some(i) => self.val(i, d),
            None => match node.child_by_field_name(field::INDICES) {
                Some(list) => {
                    let items = Self::children(list)
                        .into_iter()
                        .map(|c| self.val(c, d))
                        .collect();
                    union(items)
                }
                None => Val::Nothing,
            },
        };
        deref(union(vec![base, index]))
    }

    /// C++ `(c ? a : b) = v`: either branch's object.
    #[inline(never)]
    fn loc_conditional(&mut self, node: Node<'_>, d: usize) -> Loc {
        let cond = self.val_field_of(node, field::CONDITION, d);
        let branch = |this: &mut Self, field: &str| match node.child_by_field_name(field) {
            Some(c) => addr(this.loc(c, d)),
            None => Val::Nothing,
        };
        let a = branch(self, "consequence");
        let b = branch(self, "alternative");
        deref(seq(vec![cond], union(vec![a, b])))
    }

    /// C++ `(a = b) = c`, `(x, y) = z`: the object the value was read from.
    #[inline(never)]
    fn loc_assigned(&mut self, node: Node<'_>, d: usize) -> Loc {
        let v = self.val(node, d);
        let a = address_of_value(&v);
        deref(seq(vec![v], a))
    }

    /// Not an lvalue (calls returning structs, literals, ...): no location, but keep the
    /// side effects.
    #[inline(never)]
    fn loc_none(&mut self, node: Node<'_>, d: usize) -> Loc {
        let v = self.val(node, d);
        Loc::Deref(Box::new(seq(vec![v], Val::Nothing)))
    }

    fn assignment(&mut self, node: Node<'_>, d: usize) -> Val {
        let (Some(left), Some(right)) = (
            node.child_by_field_name(field::LEFT),
            node.child_by_field_name(field::RIGHT),
        ) else {
            return Val::Nothing;
        };
        let loc = self.loc(left, d);
        let rhs = self.init_value(right, d);
        let compound = !self.operator_is(node, "=");
        let value = if compound {
            // `p += i` keeps p's targets and adds i's (pointer arithmetic).
            union(vec![Val::Load(loc.clone()), rhs])
        } else {
            rhs
        };
        Val::Assign(Box::new(loc), Box::new(value))
    }

    /// Binary operators: `+`/`-` (pointer arithmetic) and the bitwise `&`, `|`, `^` (which
    /// carry a pointer through integer casts, as in alignment masks and tagged pointers)
    /// yield the union of their operands; comparisons, logical operators, multiplication,
    /// division and shifts yield no pointer. Left-nested chains are walked iteratively, so a
    /// million-term `1+1+...` does not recurse.
    fn binary(&mut self, node: Node<'_>, depth: usize) -> Val {
        let d = depth + 1;
        let mut kept = Vec::new();
        let mut effects = Vec::new();
        // Operands are kept while every operator from the root down is pointer-preserving.
        let mut keeping = true;
        let mut cur = node;
        let mut leaf = None;
        loop {
            if cur.kind() != kind::BINARY_EXPRESSION {
                leaf = Some(cur);
                break;
            }
            let op = cur
                .child_by_field_name(field::OPERATOR)
                .map(|o| self.text(o))
                .unwrap_or("");
            if !matches!(op, "+" | "-" | "&" | "|" | "^" | "bitand" | "bitor" | "xor") {
                keeping = false;
            }
            if let Some(r) = cur.child_by_field_name(field::RIGHT) {
                let v = self.val(r, d);
                push_operand(&mut kept, &mut effects, keeping, v);
            }
            match cur.child_by_field_name(field::LEFT) {
                Some(l) => cur = l,
                None => break,
            }
        }
        if let Some(l) = leaf {
            let v = self.val(l, d);
            push_operand(&mut kept, &mut effects, keeping, v);
        }
        seq(effects, union(kept))
    }

    #[inline(never)]
    fn args(&mut self, node: Node<'_>, d: usize) -> Vec<Val> {
        match node.child_by_field_name(field::ARGUMENTS) {
            Some(list) if list.kind() == kind::ARGUMENT_LIST => Self::children(list)
                .into_iter()
                .map(|a| self.init_value(a, d))
                .collect(),
            Some(list) => vec![self.init_value(list, d)],
            None => Vec::new(),
        }
    }

    fn call(&mut self, node: Node<'_>, d: usize) -> Val {
        let args = self.args(node, d);
        let callee = self.call_target(node, &args, d);
        Val::Call(Box::new(CallIr { callee, args }))
    }

    #[inline(never)]
    fn call_target(&mut self, node: Node<'_>, args: &[Val], d: usize) -> Callee {
        let Some(mut callee) = node.child_by_field_name(field::FUNCTION) else {
            return Callee::External;
        };
        // `(*fp)(...)`, `(**fp)(...)`, `(fp)(...)` all call fp's targets.
        for _ in 0..64 {
            match callee.kind() {
                kind::PARENTHESIZED_EXPRESSION => match Self::children(callee).pop() {
                    Some(inner) => callee = inner,
                    None => break,
                },
                kind::POINTER_EXPRESSION if !self.operator_is(callee, "&") => {
                    match callee.child_by_field_name(field::ARGUMENT) {
                        Some(inner) => callee = inner,
                        None => break,
                    }
                }
                _ => break,
            }
        }
        match callee.kind() {
            kind::IDENTIFIER | kind::QUALIFIED_IDENTIFIER | kind::TEMPLATE_FUNCTION => {
                let name = match callee.kind() {
                    kind::TEMPLATE_FUNCTION => callee
                        .child_by_field_name(field::NAME)
                        .map(|n| self.qualified_text(n))
                        .unwrap_or_default(),
                    _ => self.qualified_text(callee),
                };
                self.named_callee(&name, callee, node, args, d)
            }
            kind::FIELD_EXPRESSION => self.member_callee(callee, d),
            _ => Callee::Indirect(self.val(callee, d)),
        }
    }

    fn named_callee(
        &mut self,
        name: &str,
        callee: Node<'_>,
        call: Node<'_>,
        args: &[Val],
        d: usize,
    ) -> Callee {
        let simple = simple_class_name(name);
        let lookup = if callee.kind() == kind::IDENTIFIER {
            name.to_string()
        } else {
            simple.clone()
        };
        match self.resolve(&lookup) {
            Resolved::Var(..) | Resolved::ThisField(..) if callee.kind() == kind::IDENTIFIER => {
                return Callee::Indirect(self.val(callee, d));
            }
            _ => {}
        }
        let defined = self.model.resolve_function(name, self.func);
        if !defined.is_empty() {
            let receiver = self.implicit_receiver(&defined);
            return Callee::Defined {
                names: defined,
                receiver,
            };
        }
        let lib = simple.as_str();
        if ALLOC_FNS.contains(&lib) {
            return Callee::Alloc {
                heap: self.heap_name(lib, call).into(),
                keeps_arg0: lib == "realloc" || lib == "reallocarray",
            };
        }
        if COPY_FNS.contains(&lib) && args.len() >= 2 {
            return Callee::CopyMem;
        }
        if RETURNS_ARG0_FNS.contains(&lib) && !args.is_empty() {
            return Callee::ReturnsArg0;
        }
        if self.is_cpp() {
            // `T(args)` constructs a temporary: bind T's constructors (no object to point to).
            if let Some(ctors) = self.model.ctors_by_class.get(&simple) {
                return Callee::Defined {
                    names: ctors.iter().cloned().collect(),
                    receiver: None,
                };
            }
        }
        Callee::External
    }

    /// `this` passed implicitly when a method calls another method of its class.
    fn implicit_receiver(&self, callees: &[String]) -> Option<Val> {
        let owner = self.this_owner()?;
        let callee_has_this = callees
            .iter()
            .any(|c| self.model.defs_of(c).any(|d| d.has_this));
        callee_has_this.then(|| {
            Val::Load(Loc::Obj(ObjKey::Var(VarKey {
                function: Some(owner.into()),
                name: "this".into(),
            })))
        })
    }

    fn member_callee(&mut self, callee: Node<'_>, d: usize) -> Callee {
        if self.is_cpp() {
            let field = callee
                .child_by_field_name(field::FIELD)
                .map(|f| simple_class_name(&self.qualified_text(f)))
                .unwrap_or_default();
            if let Some(methods) = self.model.methods_by_simple.get(&field) {
                let receiver = callee.child_by_field_name(field::ARGUMENT).map(|arg| {
                    if self.operator_is(callee, "->") {
                        self.val(arg, d)
                    } else {
                        addr(self.loc(arg, d))
                    }
                });
                return Callee::Defined {
                    names: methods.iter().cloned().collect(),
                    receiver,
                };
            }
        }
        Callee::Indirect(self.val(callee, d))
    }

    fn new_expr(&mut self, node: Node<'_>, d: usize) -> Val {
        let heap = self.heap_name("new", node);
        let class = node
            .child_by_field_name(field::TYPE)
            .map(|t| simple_class_name(&self.qualified_text(t)))
            .unwrap_or_default();
        let ctors = self
            .model
            .ctors_by_class
            .get(&class)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        let args = self.args(node, d);
        let placement = node
            .child_by_field_name(field::PLACEMENT)
            .map(|p| self.init_value(p, d))
            .unwrap_or(Val::Nothing);
        let call = Val::Call(Box::new(CallIr {
            callee: Callee::New {
                heap: heap.into(),
                ctors,
            },
            args,
        }));
        seq(vec![placement], call)
    }
}
