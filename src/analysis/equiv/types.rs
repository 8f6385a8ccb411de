//! Function signatures for equivalence checking: parameter types from declarations (Java, C,
//! C++ signatures; Python annotations), else inferred from use (Python), and the common input
//! domain of two signatures.
//!
//! C pointer parameters followed (or preceded) by an integer parameter form one logical list
//! parameter (`int *a, int n` is the list `a` of length `n`), so a C function `f(int *a, int n)`
//! lines up with Python `f(a)` or Java `f(int[] a)`.

use crate::syntax::functions::{collect_functions, Function, FunctionKind};
use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use tree_sitter::Node;

/// A value type, as far as input generation and comparison need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    Int {
        bits: u8,
        signed: bool,
    },
    /// Python's unbounded `int`.
    BigInt,
    Float {
        bits: u8,
    },
    Bool,
    Char,
    Str,
    List(Box<Ty>),
    /// An object of a class of the file, built through one of its constructors (Java).
    Object(Box<ObjectTy>),
    Void,
    Unknown,
}

/// A class of the analysed file whose objects inputs are built from: each usable
/// (non-private) constructor with its parameters' types and declarations as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectTy {
    /// The class name as the harness spells it (`Outer.Inner` for a static nested class), or
    /// the C/C++ struct type as a parameter spells it (`Vector3D`, `struct point`).
    pub class: String,
    pub ctors: Vec<Vec<(Ty, String)>>,
    /// A C/C++ struct ([`c_structs`]): its field names, in order, the one "constructor" being
    /// the fields' types (built by an initialiser in declaration order). Empty for Java.
    pub fields: Vec<String>,
}

impl Ty {
    /// The inclusive integer range of the type, `None` when unbounded or not an integer.
    pub fn int_range(&self) -> Option<(i128, i128)> {
        match self {
            Ty::Int { bits, signed } => {
                let bits = u32::from((*bits).clamp(1, 64));
                if *signed {
                    Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
                } else {
                    Some((0, (1i128 << bits) - 1))
                }
            }
            Ty::Bool => Some((0, 1)),
            Ty::Char => Some((0, 0xFFFF)),
            _ => None,
        }
    }

    /// Whether an integer value is representable (true for unbounded or non-integer types).
    pub fn int_contains(&self, v: i128) -> bool {
        match self.int_range() {
            Some((lo, hi)) => lo <= v && v <= hi,
            None => true,
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, Ty::Int { .. } | Ty::BigInt)
    }
}

/// The role of one parameter as written in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The logical parameter with this index.
    Value(usize),
    /// The length of the logical list parameter with this index (C pointer + length).
    LenOf(usize),
    /// C/C++: a pointer to one value of the logical parameter with this index (`int *i` with
    /// no length beside it: an in/out cell). The harness allocates the cell on the heap, so
    /// a read past it is an error memcheck reports, not a value.
    Pointee(usize),
    /// C/C++: a pointer to the first node of a linked list (`struct node *head`), or to a
    /// variable holding one (`indirect`: `struct node **tp`), whose nodes hold the items of the
    /// logical list parameter with this index. The harness allocates each node on the heap
    /// and links it through `next` (and `prev`, backwards) as the struct names them
    /// ([`ChainTy`]).
    Chain {
        list: usize,
        indirect: bool,
        next: String,
        prev: Option<String>,
    },
}

/// A C/C++ struct that is the node of a linked list: fields that are values (as in
/// [`c_structs`]) and one or two pointers to its own type, the forward link and, when there are
/// two, the backward one (the one whose name says `prev` or `back`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTy {
    /// The value fields, as a struct of values named as the parameter spells the node type.
    pub values: ObjectTy,
    pub next: String,
    pub prev: Option<String>,
}

/// One parameter as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawParam {
    pub name: String,
    /// The declared type as written without the name (`const int *`, `int[]`, `List[int]`), or "".
    pub decl: String,
    pub role: Role,
}

/// One logical parameter (what a caller in another language passes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
    /// The argument can be changed by the callee (list, array, non-const buffer) and its final
    /// state is part of the observable result.
    pub mutable: bool,
    /// The type was inferred from use, not declared.
    pub inferred: bool,
}

/// The signature of the function under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub language: Language,
    /// Unqualified name.
    pub name: String,
    /// Enclosing class (Python/Java/C++ methods).
    pub class: Option<String>,
    pub is_static: bool,
    /// A Python method called with `self`/`cls` bound.
    pub has_receiver: bool,
    /// A Java instance method whose class has no constructor without parameters:
    /// `params[0]` is the receiver (a [`Ty::Object`]), built per input through a constructor.
    pub receiver: bool,
    /// A Java constructor: the result is the new object's state.
    pub constructs: bool,
    /// C/C++: the file's global variables of value types (and one-dimensional arrays of
    /// them), reported after each call: a result a function leaves in a global is observable.
    pub globals: Vec<Global>,
    pub params: Vec<Param>,
    pub raw: Vec<RawParam>,
    pub ret: Ty,
    /// The declared return type as written ("" when undeclared).
    pub ret_decl: String,
    /// 1-based lines of the definition.
    pub start_line: usize,
    pub end_line: usize,
}

/// A C/C++ global variable reported after each call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Global {
    pub name: String,
    /// A one-dimensional array (its elements are reported).
    pub array: bool,
    /// The value type (an array's element type).
    pub ty: Ty,
    /// Some function of the file assigns it (or takes its address): its value at a call is
    /// program state, so differential testing may set it as an input (see
    /// `exec::equiv::differential`). A global nothing assigns keeps its initial value.
    pub assigned: bool,
    /// The whole declaration as written (initialiser included), to tell two files' globals
    /// apart.
    pub declaration: String,
    /// An array's number of elements, when the declaration states it as a literal (or by
    /// an initialiser list without a size).
    pub size: Option<usize>,
    /// The initial value (an array's elements, in order) when the initialiser is made of
    /// integer literals; none written is zero (static storage). `None`: an initialiser of
    /// another kind.
    pub init: Option<Vec<i128>>,
}

/// The global variables of a C/C++ file that hold values: top-level declarations of integer,
/// floating-point, boolean or character type, scalars and one-dimensional arrays, neither
/// `extern` nor `const` (in document order).
pub fn c_globals(file: &ParsedFile) -> Vec<Global> {
    if !matches!(file.language, Language::C | Language::Cpp) {
        return Vec::new();
    }
    let defs = c_typedefs(file);
    let assigned = assigned_names(file);
    let root = file.root();
    let mut out = Vec::new();
    let mut c = root.walk();
    let top: Vec<Node<'_>> = root.named_children(&mut c).collect();
    let headless = headless_definition_parts(&top);
    for (d, _) in top.iter().zip(&headless).filter(|(_, h)| !**h) {
        let d = *d;
        if d.kind() != kind::DECLARATION {
            continue;
        }
        // `extern` declares a variable defined elsewhere; a `const` one cannot change.
        let mut dc = d.walk();
        if d.children(&mut dc).any(|n| {
            (n.kind() == kind::STORAGE_CLASS_SPECIFIER && file.node_text(n) == "extern")
                || (n.kind() == kind::TYPE_QUALIFIER && file.node_text(n) == "const")
        }) {
            continue;
        }
        let Some(ty) = d.child_by_field_name(field::TYPE) else {
            continue;
        };
        if !matches!(
            parse_type(file.language, &expand_typedefs(file.node_text(ty), &defs)),
            Ty::Int { .. } | Ty::Float { .. } | Ty::Bool | Ty::Char
        ) {
            continue;
        }
        let mut cc = d.walk();
        for decl in d.children_by_field_name(field::DECLARATOR, &mut cc) {
            let init = decl;
            let decl = if decl.kind() == kind::INIT_DECLARATOR {
                match decl.child_by_field_name(field::DECLARATOR) {
                    Some(inner) => inner,
                    None => continue,
                }
            } else {
                decl
            };
            let value = (init.kind() == kind::INIT_DECLARATOR)
                .then(|| init.child_by_field_name(field::VALUE))
                .flatten();
            let (name, array) = match decl.kind() {
                kind::IDENTIFIER => (decl, false),
                kind::ARRAY_DECLARATOR => match decl.child_by_field_name(field::DECLARATOR) {
                    Some(id) if id.kind() == kind::IDENTIFIER => (id, true),
                    _ => continue,
                },
                _ => continue,
            };
            let ty = parse_type(file.language, &expand_typedefs(file.node_text(ty), &defs));
            let name = file.node_text(name).to_string();
            let literal = |n: Node<'_>| -> Option<i128> {
                let t = file.node_text(n).replace(char::is_whitespace, "");
                match t.as_str() {
                    "true" | "TRUE" => return Some(1),
                    "false" | "FALSE" => return Some(0),
                    _ => {}
                }
                match t.strip_prefix('-') {
                    Some(rest) => super::lower::int_literal(rest, super::lower::Sem::C).map(|v| -v),
                    None => super::lower::int_literal(&t, super::lower::Sem::C),
                }
            };
            let declared_size = if array {
                decl.child_by_field_name(field::SIZE)
                    .and_then(literal)
                    .and_then(|v| usize::try_from(v).ok())
            } else {
                None
            };
            let init = match value {
                None => Some(vec![0; if array { declared_size.unwrap_or(0) } else { 1 }]),
                Some(v) if !array => literal(v).map(|x| vec![x]),
                Some(v) if v.kind() == kind::INITIALIZER_LIST => {
                    let mut c = v.walk();
                    let items: Option<Vec<i128>> = v.named_children(&mut c).map(literal).collect();
                    items.map(|mut items| {
                        if let Some(n) = declared_size {
                            if items.len() <= n {
                                items.resize(n, 0);
                            }
                        }
                        items
                    })
                }
                Some(_) => None,
            };
            let size = if array {
                declared_size.or_else(|| value.and(init.as_ref().map(Vec::len)))
            } else {
                None
            };
            // More initialisers than elements does not compile; leave it unknown.
            let init = init.filter(|v| !array || Some(v.len()) == size);
            out.push(Global {
                assigned: assigned.contains(name.as_str()),
                name,
                array,
                ty,
                declaration: file.node_text(d).to_string(),
                size,
                init,
            });
        }
    }
    out
}

/// Which top-level items belong to a function definition the parser did not recognise: a
/// declaration right before a top-level block is its header, K&R parameter declarations
/// included (`int *f(t, n) int *t, n; { ... }` parses as a declaration of `t` and `n`
/// beside a block), so the names it declares are parameters, not globals. Comments between
/// them are skipped; the chain stops at the declaration that declares the function.
fn headless_definition_parts(top: &[Node<'_>]) -> Vec<bool> {
    let mut out = vec![false; top.len()];
    let mut before_body = false;
    for (i, n) in top.iter().enumerate().rev() {
        match n.kind() {
            kind::COMPOUND_STATEMENT => before_body = true,
            kind::COMMENT => {}
            kind::DECLARATION if before_body => {
                out[i] = true;
                let mut stack = vec![*n];
                let mut header = false;
                while let Some(x) = stack.pop() {
                    if x.kind() == kind::FUNCTION_DECLARATOR {
                        header = true;
                        break;
                    }
                    if x.kind() != kind::COMPOUND_STATEMENT {
                        let mut c = x.walk();
                        stack.extend(x.named_children(&mut c));
                    }
                }
                before_body = !header;
            }
            _ => before_body = false,
        }
    }
    out
}

/// The names a function of the file assigns, updates or takes the address of (a local of the
/// same name counts too: over-approximated).
fn assigned_names(file: &ParsedFile) -> std::collections::HashSet<&str> {
    let mut out = std::collections::HashSet::new();
    for f in file.functions() {
        let Some(body) = f.body else { continue };
        let mut stack = vec![body];
        let mut budget = 1_000_000usize;
        while let Some(n) = stack.pop() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                break;
            }
            let target = match n.kind() {
                kind::ASSIGNMENT_EXPRESSION => n.child_by_field_name(field::LEFT),
                kind::UPDATE_EXPRESSION => n.child_by_field_name(field::ARGUMENT),
                kind::POINTER_EXPRESSION
                    if n.child_by_field_name(field::OPERATOR)
                        .is_some_and(|o| file.node_text(o) == "&") =>
                {
                    n.child_by_field_name(field::ARGUMENT)
                }
                _ => None,
            };
            if let Some(mut t) = target {
                // `a[i] = ...`, `(x) = ...`: the array or variable written.
                for _ in 0..16 {
                    match t.kind() {
                        kind::SUBSCRIPT_EXPRESSION => {
                            match t.child_by_field_name(field::ARGUMENT) {
                                Some(a) => t = a,
                                None => break,
                            }
                        }
                        kind::PARENTHESIZED_EXPRESSION => match t.named_child(0) {
                            Some(a) => t = a,
                            None => break,
                        },
                        _ => break,
                    }
                }
                if t.kind() == kind::IDENTIFIER {
                    out.insert(file.node_text(t));
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }
    out
}

/// The file's `typedef`s of value and pointer types, each as the type it names
/// (`typedef char string[MAXSTR];` is `char []`, `typedef any_t map_t;` with
/// `typedef void *any_t;` is `void *`). Function-pointer typedefs are left out.
pub fn c_typedefs(file: &ParsedFile) -> Vec<(String, String)> {
    if !matches!(file.language, Language::C | Language::Cpp) {
        return Vec::new();
    }
    let root = file.root();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut c = root.walk();
    for d in root.named_children(&mut c) {
        if d.kind() != kind::TYPE_DEFINITION {
            continue;
        }
        // Value types only: a `struct`/`union`/`enum` typedef stays a name (spelling its body
        // out would define the type twice in the harness).
        let Some(ty) = d.child_by_field_name(field::TYPE).filter(|t| {
            matches!(
                t.kind(),
                kind::PRIMITIVE_TYPE | kind::TYPE_IDENTIFIER | kind::SIZED_TYPE_SPECIFIER
            )
        }) else {
            continue;
        };
        let base = file.node_text(ty).to_string();
        let mut dc = d.walk();
        'decl: for decl in d.children_by_field_name(field::DECLARATOR, &mut dc) {
            let mut suffix = String::new();
            let mut cur = decl;
            for _ in 0..16 {
                match cur.kind() {
                    kind::TYPE_IDENTIFIER | kind::PRIMITIVE_TYPE => {
                        let name = file.node_text(cur).to_string();
                        let named = expand_typedefs(&format!("{base} {suffix}"), &out);
                        out.push((name, named.trim().to_string()));
                        continue 'decl;
                    }
                    kind::POINTER_DECLARATOR => suffix.push('*'),
                    kind::ARRAY_DECLARATOR => suffix.push_str("[]"),
                    _ => continue 'decl,
                }
                match cur.child_by_field_name(field::DECLARATOR) {
                    Some(n) => cur = n,
                    None => continue 'decl,
                }
            }
        }
    }
    out
}

/// The file's C/C++ structs that hold values only: each field a scalar (integer,
/// floating-point, boolean, character) or such a struct, no pointers, arrays, bit-fields or
/// nested definitions. Each is listed under every name a parameter can spell it with
/// (`struct Tag` and each typedef name, `typedef struct Tag Alias;` included), as an
/// [`ObjectTy`] whose one constructor is its fields.
pub fn c_structs(file: &ParsedFile) -> Vec<(String, ObjectTy)> {
    if !matches!(file.language, Language::C | Language::Cpp) {
        return Vec::new();
    }
    let defs = c_typedefs(file);
    let mut out: Vec<(String, ObjectTy)> = Vec::new();
    for (spec, typedef) in top_level_structs(file) {
        let tag = spec
            .child_by_field_name(field::NAME)
            .map(|n| format!("struct {}", file.node_text(n)));
        let known = match spec.child_by_field_name(field::BODY) {
            Some(body) => struct_fields(file, body, &defs, &out).map(|(tys, names)| ObjectTy {
                class: String::new(),
                ctors: vec![tys],
                fields: names,
            }),
            // `typedef struct Tag Alias;` names a struct defined before.
            None => tag
                .as_ref()
                .and_then(|t| out.iter().find(|(n, _)| n == t).map(|(_, o)| o.clone())),
        };
        let Some(obj) = known else { continue };
        let mut names: Vec<String> = Vec::new();
        if spec.child_by_field_name(field::BODY).is_some() {
            names.extend(tag);
        }
        names.extend(typedef_names(file, typedef));
        for n in names {
            out.push((
                n.clone(),
                ObjectTy {
                    class: n,
                    ..obj.clone()
                },
            ));
        }
    }
    out
}

/// The file's top-level struct specifiers, each with the `typedef` around it (if any).
fn top_level_structs(file: &ParsedFile) -> Vec<(Node<'_>, Option<Node<'_>>)> {
    let root = file.root();
    let mut out = Vec::new();
    let mut c = root.walk();
    for d in root.named_children(&mut c) {
        match d.kind() {
            kind::STRUCT_SPECIFIER => out.push((d, None)),
            kind::TYPE_DEFINITION | kind::DECLARATION => {
                if let Some(t) = d
                    .child_by_field_name(field::TYPE)
                    .filter(|t| t.kind() == kind::STRUCT_SPECIFIER)
                {
                    out.push((t, (d.kind() == kind::TYPE_DEFINITION).then_some(d)));
                }
            }
            _ => {}
        }
    }
    out
}

/// The type names a `typedef` declares (`Ele` of `typedef struct _job {..} Ele, *Ele_Ptr;`;
/// pointer aliases are not the struct).
fn typedef_names(file: &ParsedFile, typedef: Option<Node<'_>>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(td) = typedef {
        let mut dc = td.walk();
        for decl in td.children_by_field_name(field::DECLARATOR, &mut dc) {
            if decl.kind() == kind::TYPE_IDENTIFIER {
                out.push(file.node_text(decl).to_string());
            }
        }
    }
    out
}

/// The file's linked-list node structs ([`ChainTy`]), each under every name a parameter can
/// spell it with (`struct Tag` and each typedef name). A struct with any other pointer, an
/// array, a bit-field, more than two links or two links neither of which is named as the
/// backward one (a tree's `left` and `right`) is none.
pub fn c_chains(file: &ParsedFile) -> Vec<(String, ChainTy)> {
    if !matches!(file.language, Language::C | Language::Cpp) {
        return Vec::new();
    }
    let defs = c_typedefs(file);
    let values = c_structs(file);
    let mut out = Vec::new();
    for (spec, typedef) in top_level_structs(file) {
        let Some(body) = spec.child_by_field_name(field::BODY) else {
            continue;
        };
        let mut names: Vec<String> = spec
            .child_by_field_name(field::NAME)
            .map(|n| format!("struct {}", file.node_text(n)))
            .into_iter()
            .collect();
        names.extend(typedef_names(file, typedef));
        let Some(chain) = chain_fields(file, body, &defs, &values, &names) else {
            continue;
        };
        for n in names {
            out.push((
                n.clone(),
                ChainTy {
                    values: ObjectTy {
                        class: n,
                        ..chain.values.clone()
                    },
                    ..chain.clone()
                },
            ));
        }
    }
    out
}

/// The fields of a node struct's body (see [`c_chains`]); `names` spell the struct itself.
fn chain_fields(
    file: &ParsedFile,
    body: Node<'_>,
    defs: &[(String, String)],
    known: &[(String, ObjectTy)],
    names: &[String],
) -> Option<ChainTy> {
    let own: Vec<String> = names.iter().map(|n| clean_type(n)).collect();
    let ((tys, fields), links) = body_fields(file, body, defs, known, &own)?;
    if tys.is_empty() {
        return None;
    }
    let backward = |n: &str| {
        let l = n.to_ascii_lowercase();
        l.contains("prev") || l.contains("back")
    };
    let (next, prev) = match links.as_slice() {
        [one] => (one.clone(), None),
        [a, b] => match (backward(a), backward(b)) {
            (false, true) => (a.clone(), Some(b.clone())),
            (true, false) => (b.clone(), Some(a.clone())),
            _ => return None,
        },
        _ => return None,
    };
    Some(ChainTy {
        values: ObjectTy {
            class: String::new(),
            ctors: vec![tys],
            fields,
        },
        next,
        prev,
    })
}

/// The node struct of [`c_chains`] that `decl` points to, with the number of `*` (one: the
/// first node; two: a variable holding it).
fn chain_named<'c>(chains: &'c [(String, ChainTy)], decl: &str) -> Option<(&'c ChainTy, bool)> {
    let t = clean_type(decl);
    let (inner, indirect) = match t.strip_suffix("**") {
        Some(i) => (i, true),
        None => (t.strip_suffix('*')?, false),
    };
    if inner.contains(['*', '[', '&']) {
        return None;
    }
    chains
        .iter()
        .rev()
        .find(|(n, _)| clean_type(n) == inner)
        .map(|(_, c)| (c, indirect))
}

/// The struct of [`c_structs`] that `decl` names (`Vector3D`, `struct point`, `const
/// Vector3D`), as an object type.
fn struct_named(structs: &[(String, ObjectTy)], decl: &str) -> Option<Ty> {
    let want = clean_type(decl);
    structs
        .iter()
        .rev()
        .find(|(n, _)| clean_type(n) == want)
        .map(|(_, o)| Ty::Object(Box::new(o.clone())))
}

/// A struct's fields: (type, declaration) of each, and their names.
type StructFields = (Vec<(Ty, String)>, Vec<String>);

/// The fields of a struct body as (type, declaration) and names, `None` when one is not a
/// value (see [`c_structs`]).
fn struct_fields(
    file: &ParsedFile,
    body: Node<'_>,
    defs: &[(String, String)],
    known: &[(String, ObjectTy)],
) -> Option<StructFields> {
    let (fields, _) = body_fields(file, body, defs, known, &[])?;
    (!fields.0.is_empty()).then_some(fields)
}

/// The value fields of a struct body (scalars or structs of `known`) and the names of its
/// pointers to its own type (spelt as one of `own`, cleaned; none when `own` is empty);
/// `None` when any other member is there (another pointer, an array, a bit-field, a nested
/// definition, an anonymous member).
fn body_fields(
    file: &ParsedFile,
    body: Node<'_>,
    defs: &[(String, String)],
    known: &[(String, ObjectTy)],
    own: &[String],
) -> Option<(StructFields, Vec<String>)> {
    let mut tys = Vec::new();
    let mut fields = Vec::new();
    let mut links = Vec::new();
    let mut c = body.walk();
    for f in body.named_children(&mut c) {
        match f.kind() {
            kind::COMMENT => continue,
            kind::FIELD_DECLARATION => {}
            _ => return None,
        }
        let ty_node = f.child_by_field_name(field::TYPE)?;
        if ty_node.kind() == kind::STRUCT_SPECIFIER
            && ty_node.child_by_field_name(field::BODY).is_some()
        {
            return None;
        }
        let base = expand_typedefs(file.node_text(ty_node), defs);
        let mut kc = f.walk();
        if f.children(&mut kc)
            .any(|k| k.kind() == kind::BITFIELD_CLAUSE)
        {
            return None;
        }
        let mut any = false;
        let mut dc = f.walk();
        for decl in f.children_by_field_name(field::DECLARATOR, &mut dc) {
            any = true;
            match decl.kind() {
                kind::FIELD_IDENTIFIER => {
                    let ty = match known.iter().find(|(n, _)| *n == base.trim()) {
                        Some((_, o)) => Ty::Object(Box::new(o.clone())),
                        None => match parse_type(file.language, &base) {
                            t @ (Ty::Int { .. } | Ty::Float { .. } | Ty::Bool | Ty::Char) => t,
                            _ => return None,
                        },
                    };
                    fields.push(file.node_text(decl).to_string());
                    tys.push((ty, base.trim().to_string()));
                }
                kind::POINTER_DECLARATOR => {
                    let inner = decl.child_by_field_name(field::DECLARATOR)?;
                    if inner.kind() != kind::FIELD_IDENTIFIER || !own.contains(&clean_type(&base)) {
                        return None;
                    }
                    links.push(file.node_text(inner).to_string());
                }
                _ => return None,
            }
        }
        if !any {
            return None;
        }
    }
    Some(((tys, fields), links))
}

/// `decl` with every word that names one of `defs` replaced by the type it names (the
/// definitions are already expanded, so one pass suffices). A word after `struct`, `union`
/// or `enum` is a tag, not a typedef name.
pub fn expand_typedefs(decl: &str, defs: &[(String, String)]) -> String {
    if defs.is_empty() {
        return decl.to_string();
    }
    let mut out = String::with_capacity(decl.len());
    let mut word = String::new();
    let mut prev_word = String::new();
    let flush = |word: &mut String, prev: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let tag = matches!(prev.as_str(), "struct" | "union" | "enum");
        match defs.iter().rev().find(|(n, _)| n == word) {
            Some((_, t)) if !tag => out.push_str(t),
            _ => out.push_str(word),
        }
        *prev = std::mem::take(word);
    };
    for ch in decl.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut prev_word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut prev_word, &mut out);
    out
}

/// Picks the function to compare: `name` (simple or qualified) if given, else the only
/// function, else the one no other function of the file calls (the last such one).
pub fn select_function<'t>(
    file: &'t ParsedFile,
    name: Option<&str>,
) -> Result<Function<'t>, String> {
    let funcs: Vec<Function<'t>> = collect_functions(file)
        .into_iter()
        .filter(|f| f.kind != FunctionKind::Lambda && f.body.is_some())
        .collect();
    if let Some(name) = name {
        let named: Vec<&Function<'t>> = funcs
            .iter()
            .filter(|f| f.name == name || f.simple_name == name)
            .collect();
        // Overloads share a name: choosing one would be a guess.
        return match named.as_slice() {
            [] => Err(format!("no function named `{name}`")),
            [one] => Ok((*one).clone()),
            many => Err(format!(
                "`{name}` names {} functions (lines {}); name one as FILE:LINE",
                many.len(),
                many.iter()
                    .map(|f| f.start_line.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
    }
    match funcs.len() {
        0 => Err("no function found".into()),
        1 => Ok(funcs[0].clone()),
        _ => {
            let roots: Vec<&Function<'t>> = funcs
                .iter()
                .filter(|f| f.kind != FunctionKind::Constructor && f.simple_name != "main")
                .filter(|f| {
                    let needle = format!("{}(", f.simple_name);
                    !funcs.iter().any(|g| {
                        g.node.id() != f.node.id() && file.node_text(g.node).contains(&needle)
                    })
                })
                .collect();
            // Exactly one function that nothing else in the file calls is the entry; with
            // several candidates a guess could prove the wrong function equivalent.
            match roots.as_slice() {
                [one] => Ok((*one).clone()),
                [] => Err(format!(
                    "{} functions and none is an obvious entry point; name one as FILE:function",
                    funcs.len()
                )),
                many => Err(format!(
                    "several functions could be the entry point ({}); name one as FILE:function",
                    many.iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
    }
}

/// Every entry point of a file, for comparing two files function by function: each named
/// function (constructors and `main` included) that no other function calls (`name(` inside
/// another definition), and for a constructor that nothing outside it instantiates (`new
/// Name(`, field initialisers included). In document order.
pub fn entry_points(file: &ParsedFile) -> Vec<Function<'_>> {
    let funcs: Vec<Function<'_>> = collect_functions(file)
        .into_iter()
        .filter(|f| f.kind != FunctionKind::Lambda && f.body.is_some())
        .collect();
    let text = file.text.as_str();
    let called = |f: &Function<'_>| {
        let ctor = f.kind == FunctionKind::Constructor;
        let needle = if ctor {
            format!("new {}(", f.simple_name)
        } else {
            format!("{}(", f.simple_name)
        };
        let own = f.node.start_byte()..f.node.end_byte();
        text.match_indices(&needle).any(|(at, _)| {
            if own.contains(&at) {
                return false;
            }
            if ctor {
                return true;
            }
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                return false;
            }
            // Inside another function, but not that function's own name in its header (an
            // overload, or a method of the same name in another class, is no call).
            funcs.iter().any(|g| {
                let header =
                    g.simple_name == f.simple_name && g.body.is_some_and(|b| at < b.start_byte());
                g.node.id() != f.node.id()
                    && (g.node.start_byte()..g.node.end_byte()).contains(&at)
                    && !header
            })
        })
    };
    funcs.iter().filter(|f| !called(f)).cloned().collect()
}

/// The declared type of K&R parameter `name` (the `declaration`s between a C function's
/// declarator and its body), as written without the name: `unsigned int`, `char *`.
fn kr_declaration(file: &ParsedFile, def: Node<'_>, name: &str) -> Option<String> {
    let mut c = def.walk();
    for d in def.children(&mut c) {
        if d.kind() != kind::DECLARATION {
            continue;
        }
        let Some(first) = d.child_by_field_name(field::DECLARATOR) else {
            continue;
        };
        let ty = file
            .text
            .get(d.start_byte()..first.start_byte())
            .unwrap_or("")
            .trim()
            .to_string();
        let mut dc = d.walk();
        for decl in d.children_by_field_name(field::DECLARATOR, &mut dc) {
            let Some(id) = innermost_identifier(decl) else {
                continue;
            };
            if file.node_text(id) != name {
                continue;
            }
            let text = file.node_text(decl);
            let start = id.start_byte().saturating_sub(decl.start_byte());
            let end = id.end_byte().saturating_sub(decl.start_byte());
            let rest = format!(
                "{}{}",
                text.get(..start).unwrap_or(""),
                text.get(end..).unwrap_or("")
            );
            return Some(format!("{ty} {}", rest.trim()).trim().to_string());
        }
    }
    None
}

/// Reads the signature of a function.
pub fn signature(file: &ParsedFile, func: &Function<'_>) -> Result<Signature, String> {
    let lang = file.language;
    let mut raw_decls: Vec<(String, String)> = Vec::new();
    let mut ret_decl = String::new();
    let mut is_static = false;
    let mut has_receiver = false;
    match lang {
        Language::Python => {
            let params = func
                .node
                .child_by_field_name(field::PARAMETERS)
                .ok_or("no parameter list")?;
            let mut cursor = params.walk();
            for p in params.named_children(&mut cursor) {
                let (name, ty) = match p.kind() {
                    kind::IDENTIFIER => (file.node_text(p).to_string(), String::new()),
                    kind::TYPED_PARAMETER => {
                        let mut c = p.walk();
                        let name = p
                            .named_children(&mut c)
                            .find(|n| n.kind() == kind::IDENTIFIER)
                            .map(|n| file.node_text(n).to_string())
                            .ok_or("unsupported parameter (*args/**kwargs)")?;
                        let ty = p
                            .child_by_field_name(field::TYPE)
                            .map(|t| file.node_text(t).to_string())
                            .unwrap_or_default();
                        (name, ty)
                    }
                    kind::DEFAULT_PARAMETER | kind::TYPED_DEFAULT_PARAMETER => {
                        let name = p
                            .child_by_field_name(field::NAME)
                            .map(|n| file.node_text(n).to_string())
                            .unwrap_or_default();
                        let ty = p
                            .child_by_field_name(field::TYPE)
                            .map(|t| file.node_text(t).to_string())
                            .unwrap_or_default();
                        (name, ty)
                    }
                    kind::COMMENT => continue,
                    kind::KEYWORD_SEPARATOR | kind::POSITIONAL_SEPARATOR => continue,
                    other => return Err(format!("unsupported parameter kind `{other}`")),
                };
                raw_decls.push((name, ty));
            }
            if func.kind != FunctionKind::Function && func.class.is_some() {
                let decorated = func
                    .node
                    .parent()
                    .filter(|p| p.kind() == kind::DECORATED_DEFINITION)
                    .map(|p| file.node_text(p).contains("@staticmethod"))
                    .unwrap_or(false);
                if decorated {
                    is_static = true;
                } else if !raw_decls.is_empty() {
                    raw_decls.remove(0);
                    has_receiver = true;
                }
            }
            if let Some(r) = func.node.child_by_field_name(field::RETURN_TYPE) {
                ret_decl = file.node_text(r).to_string();
            }
        }
        Language::Java => {
            if let Some(t) = func.node.child_by_field_name(field::TYPE) {
                ret_decl = file.node_text(t).to_string();
                if let Some(d) = func.node.child_by_field_name(field::DIMENSIONS) {
                    ret_decl.push_str(file.node_text(d));
                }
            }
            let mut c = func.node.walk();
            is_static = func
                .node
                .children(&mut c)
                .any(|n| n.kind() == kind::MODIFIERS && file.node_text(n).contains("static"));
            let params = func
                .node
                .child_by_field_name(field::PARAMETERS)
                .ok_or("no parameter list")?;
            let mut cursor = params.walk();
            for p in params.named_children(&mut cursor) {
                match p.kind() {
                    kind::FORMAL_PARAMETER => raw_decls.push(java_formal(file, p)),
                    kind::LINE_COMMENT | kind::BLOCK_COMMENT => {}
                    other => return Err(format!("unsupported parameter kind `{other}`")),
                }
            }
        }
        Language::C | Language::Cpp => {
            let ty = func
                .node
                .child_by_field_name(field::TYPE)
                .map(|t| file.node_text(t).to_string())
                .unwrap_or_default();
            let mut d = func.node.child_by_field_name(field::DECLARATOR);
            let mut stars = String::new();
            let mut params_node = None;
            let mut guard = 0;
            while let Some(n) = d {
                guard += 1;
                if guard > 64 {
                    break;
                }
                match n.kind() {
                    kind::FUNCTION_DECLARATOR => {
                        params_node = n.child_by_field_name(field::PARAMETERS);
                        break;
                    }
                    kind::POINTER_DECLARATOR => stars.push('*'),
                    kind::REFERENCE_DECLARATOR => stars.push('&'),
                    _ => {}
                }
                d = n.child_by_field_name(field::DECLARATOR).or_else(|| {
                    n.named_child(0)
                        .filter(|c| c.kind().ends_with("declarator"))
                });
            }
            let defs = c_typedefs(file);
            ret_decl = expand_typedefs(&format!("{ty}{stars}"), &defs);
            let mut c = func.node.walk();
            is_static = func.node.children(&mut c).any(|n| {
                n.kind() == kind::STORAGE_CLASS_SPECIFIER && file.node_text(n) == "static"
            });
            let params = params_node.ok_or("no parameter list")?;
            let mut cursor = params.walk();
            for p in params.named_children(&mut cursor) {
                match p.kind() {
                    kind::PARAMETER_DECLARATION | kind::OPTIONAL_PARAMETER_DECLARATION => {
                        let text = file.node_text(p);
                        if text.trim() == "void" {
                            continue;
                        }
                        let (name, decl) = match p
                            .child_by_field_name(field::DECLARATOR)
                            .and_then(innermost_identifier)
                        {
                            Some(id) => {
                                let start = id.start_byte().saturating_sub(p.start_byte());
                                let end = id.end_byte().saturating_sub(p.start_byte());
                                let decl = format!(
                                    "{} {}",
                                    text.get(..start).unwrap_or(""),
                                    text.get(end..).unwrap_or("")
                                );
                                let decl = decl.split('=').next().unwrap_or("").to_string();
                                (file.node_text(id).to_string(), decl)
                            }
                            None => (String::new(), text.to_string()),
                        };
                        raw_decls.push((name, decl));
                    }
                    kind::COMMENT => {}
                    // K&R definition: `int f(a, b) int a; char *b; { ... }`.
                    kind::IDENTIFIER => {
                        let name = file.node_text(p).to_string();
                        let decl = kr_declaration(file, func.node, &name)
                            .unwrap_or_else(|| "int".to_string());
                        raw_decls.push((name, decl));
                    }
                    kind::VARIADIC_PARAMETER => {
                        return Err("variadic functions are not supported".into())
                    }
                    other => return Err(format!("unsupported parameter kind `{other}`")),
                }
            }
            // Parameter types named through the file's typedefs (`character`, `bool`).
            for (_, decl) in &mut raw_decls {
                *decl = expand_typedefs(decl, &defs);
            }
        }
        other => return Err(format!("{} is not supported by equiv", other.name())),
    }

    let body_text = func.body.map(|b| file.node_text(b)).unwrap_or("");
    let mut params = Vec::new();
    let mut raw = Vec::new();
    // C/C++ structs of values are objects built by an initialiser.
    let structs = c_structs(file);
    let parsed: Vec<Ty> = raw_decls
        .iter()
        .map(|(_, d)| match parse_type(lang, d) {
            Ty::Unknown => struct_named(&structs, d).unwrap_or(Ty::Unknown),
            // An array of structs (`Point *pts` beside its length).
            Ty::List(e) if *e == Ty::Unknown => {
                let t = clean_type(d);
                t.strip_suffix('*')
                    .or_else(|| t.strip_suffix("[]"))
                    .and_then(|inner| struct_named(&structs, inner))
                    .map(|o| Ty::List(Box::new(o)))
                    .unwrap_or(Ty::List(e))
            }
            t => t,
        })
        .collect();
    // A pointer to one struct: the body reaches it through `->` and never indexes it.
    let one_struct = |name: &str, decl: &str| -> Option<Ty> {
        let t = clean_type(decl);
        let inner = t.strip_suffix('*')?;
        if inner.contains(['*', '[', '&']) {
            return None;
        }
        let o = struct_named(&structs, inner)?;
        let arrow = format!("{name}->");
        let index = format!("{name}[");
        (body_text.contains(&arrow) && !body_text.contains(&index)).then_some(o)
    };
    let mut paired = vec![false; raw_decls.len()];
    // C/C++ pointer + length pairs.
    let mut len_of: Vec<Option<usize>> = vec![None; raw_decls.len()];
    // C/C++ pointers to one value (no length beside them): the pointee's type.
    let mut pointee: Vec<Option<Ty>> = vec![None; raw_decls.len()];
    // C/C++ pointers to the first node of a linked list (or to a variable holding it).
    let mut chain: Vec<Option<(ChainTy, bool)>> = vec![None; raw_decls.len()];
    if matches!(lang, Language::C | Language::Cpp) {
        let chains = c_chains(file);
        for i in 0..raw_decls.len() {
            if let Some((c, indirect)) = chain_named(&chains, &raw_decls[i].1) {
                chain[i] = Some((c.clone(), indirect));
                continue;
            }
            if !is_c_pointer_list(&raw_decls[i].1) {
                continue;
            }
            let next = i + 1;
            if let Some(o) = one_struct(&raw_decls[i].0, &raw_decls[i].1) {
                pointee[i] = Some(o);
            } else if next < raw_decls.len() && parsed[next].is_integer() && !paired[next] {
                paired[next] = true;
                len_of[next] = Some(i);
            } else if i > 0 && parsed[i - 1].is_integer() && !paired[i - 1] {
                paired[i - 1] = true;
                len_of[i - 1] = Some(i);
            } else if let Some(target) = pointee_of(lang, &raw_decls[i].1).or_else(|| {
                let t = clean_type(&raw_decls[i].1);
                t.strip_suffix('*')
                    .filter(|inner| !inner.contains(['*', '[', '&']))
                    .and_then(|inner| struct_named(&structs, inner))
            }) {
                pointee[i] = Some(target);
            } else {
                return Err(format!(
                    "pointer parameter `{}` has no length parameter",
                    raw_decls[i].0
                ));
            }
        }
    }
    let mut logical_index = vec![usize::MAX; raw_decls.len()];
    for (i, (name, decl)) in raw_decls.iter().enumerate() {
        if paired[i] {
            continue;
        }
        let (ty, inferred) = if let Some((c, _)) = &chain[i] {
            (
                Ty::List(Box::new(Ty::Object(Box::new(c.values.clone())))),
                false,
            )
        } else if let Some(t) = &pointee[i] {
            (t.clone(), false)
        } else if decl.trim().is_empty() && lang == Language::Python {
            (infer_python(body_text, name), true)
        } else if lang == Language::Java && parsed[i] == Ty::Unknown {
            let ty = java_object_type(file, decl, OBJECT_DEPTH)
                .map(|o| Ty::Object(Box::new(o)))
                .unwrap_or(Ty::Unknown);
            (ty, false)
        } else {
            (parsed[i].clone(), false)
        };
        if let Ty::Unknown = ty {
            // A Java `Object` parameter takes what an `Object[]` element takes: boxed integers.
            let object = lang == Language::Java
                && matches!(clean_type(decl).as_str(), "Object" | "java.lang.Object");
            if lang != Language::Python && !object {
                return Err(format!("unsupported parameter type `{}`", decl.trim()));
            }
        }
        let mutable = if pointee[i].is_some() || chain[i].is_some() {
            !decl.contains("const")
        } else {
            is_mutable(lang, decl, &ty)
        };
        logical_index[i] = params.len();
        params.push(Param {
            name: name.clone(),
            ty,
            mutable,
            inferred,
        });
    }
    for (i, (name, decl)) in raw_decls.iter().enumerate() {
        let role = match (len_of[i], &chain[i]) {
            (Some(list), _) => Role::LenOf(logical_index[list]),
            (None, Some((c, indirect))) => Role::Chain {
                list: logical_index[i],
                indirect: *indirect,
                next: c.next.clone(),
                prev: c.prev.clone(),
            },
            (None, None) if pointee[i].is_some() => Role::Pointee(logical_index[i]),
            (None, None) => Role::Value(logical_index[i]),
        };
        raw.push(RawParam {
            name: name.clone(),
            decl: decl.trim().to_string(),
            role,
        });
    }
    let ret = if ret_decl.trim().is_empty() {
        Ty::Unknown
    } else {
        match parse_type(lang, &ret_decl) {
            Ty::Unknown => struct_named(&structs, &ret_decl).unwrap_or(Ty::Unknown),
            t => t,
        }
    };
    let constructs = lang == Language::Java && func.kind == FunctionKind::Constructor;
    let mut receiver = false;
    if lang == Language::Java && !is_static && !constructs {
        // An instance method of a class with a constructor that takes arguments: the
        // receiver is an input, built through any of the class's constructors (the one
        // without arguments too, if there is one).
        let class = func.class.as_deref().and_then(|c| c.rsplit('.').next());
        if let Some(obj) = class.and_then(|c| java_object_type(file, c, OBJECT_DEPTH)) {
            if obj.ctors.iter().any(|c| !c.is_empty()) {
                receiver = true;
                params.insert(
                    0,
                    Param {
                        name: "this".into(),
                        ty: Ty::Object(Box::new(obj)),
                        mutable: false,
                        inferred: false,
                    },
                );
                for r in &mut raw {
                    let (Role::Value(k)
                    | Role::LenOf(k)
                    | Role::Pointee(k)
                    | Role::Chain { list: k, .. }) = &mut r.role;
                    *k += 1;
                }
            }
        }
    }
    Ok(Signature {
        language: lang,
        name: func.simple_name.clone(),
        class: func.class.clone(),
        is_static,
        has_receiver,
        receiver,
        constructs,
        globals: c_globals(file),
        params,
        raw,
        ret,
        ret_decl: ret_decl.trim().to_string(),
        start_line: func.start_line,
        end_line: func.end_line,
    })
}

/// A Java formal parameter's name and declared type as written (dimensions after the name
/// included: `int a[]` is `int[]`).
fn java_formal(file: &ParsedFile, p: Node<'_>) -> (String, String) {
    let name = p
        .child_by_field_name(field::NAME)
        .map(|n| file.node_text(n).to_string())
        .unwrap_or_default();
    let mut ty = p
        .child_by_field_name(field::TYPE)
        .map(|t| file.node_text(t).to_string())
        .unwrap_or_default();
    if let Some(d) = p.child_by_field_name(field::DIMENSIONS) {
        ty.push_str(file.node_text(d));
    }
    (name, ty)
}

/// How deep constructor arguments may nest objects (`new A(new B(new C(1)))`).
const OBJECT_DEPTH: usize = 3;

/// The class named `decl` (a simple name) of a Java file as an input type: a concrete
/// top-level or static nested class, with its non-private constructors whose parameters are
/// values, arrays or (up to `depth` levels) such objects. A class without a declared
/// constructor has the implicit one. `None` for anything else (interfaces, abstract and inner
/// classes, classes of other files, no usable constructor).
fn java_object_type(file: &ParsedFile, decl: &str, depth: usize) -> Option<ObjectTy> {
    let written = clean_type(decl);
    if written.is_empty()
        || !written
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
    {
        return None;
    }
    let name = written.rsplit('.').next().unwrap_or_default().to_string();
    let class = java_class(file, &name)?;
    let modifiers = |n: Node<'_>| {
        let mut c = n.walk();
        let text = n
            .children(&mut c)
            .find(|m| m.kind() == kind::MODIFIERS)
            .map(|m| file.node_text(m).to_string())
            .unwrap_or_default();
        text
    };
    if modifiers(class).contains("abstract") {
        return None;
    }
    // The qualified name: a top-level class, or static classes nested in one.
    let mut qualified = vec![name.clone()];
    let mut cur = class;
    while let Some(p) = cur.parent() {
        match p.kind() {
            kind::PROGRAM => break,
            kind::CLASS_BODY => {
                let outer = p.parent().filter(|o| o.kind() == kind::CLASS_DECLARATION)?;
                if !modifiers(cur).contains("static") {
                    return None;
                }
                let outer_name = outer.child_by_field_name(field::NAME)?;
                qualified.insert(0, file.node_text(outer_name).to_string());
                cur = outer;
            }
            _ => return None,
        }
    }
    let qualified = qualified.join(".");
    if qualified != written && !qualified.ends_with(&format!(".{written}")) {
        return None;
    }
    let mut ctors: Vec<Vec<(Ty, String)>> = Vec::new();
    let mut declared = false;
    for f in collect_functions(file) {
        if f.kind != FunctionKind::Constructor
            || f.node.parent().and_then(|b| b.parent()).map(|c| c.id()) != Some(class.id())
        {
            continue;
        }
        declared = true;
        if modifiers(f.node).contains("private") {
            continue;
        }
        let Some(list) = f.node.child_by_field_name(field::PARAMETERS) else {
            continue;
        };
        let mut params = Vec::new();
        let mut usable = true;
        let mut c = list.walk();
        for p in list.named_children(&mut c) {
            match p.kind() {
                kind::FORMAL_PARAMETER => {
                    let (_, ty) = java_formal(file, p);
                    let parsed = match parse_type(Language::Java, &ty) {
                        Ty::Unknown if depth > 0 => java_object_type(file, &ty, depth - 1)
                            .map(|o| Ty::Object(Box::new(o)))
                            .unwrap_or(Ty::Unknown),
                        t => t,
                    };
                    if matches!(parsed, Ty::Unknown | Ty::Void) {
                        usable = false;
                    }
                    params.push((parsed, ty.trim().to_string()));
                }
                kind::LINE_COMMENT | kind::BLOCK_COMMENT => {}
                _ => usable = false,
            }
        }
        if usable {
            ctors.push(params);
        }
    }
    if !declared {
        ctors.push(Vec::new());
    }
    (!ctors.is_empty()).then_some(ObjectTy {
        fields: Vec::new(),
        class: qualified,
        ctors,
    })
}

/// The declaration of the class named `name` in a Java file (the first, in document order).
fn java_class<'t>(file: &'t ParsedFile, name: &str) -> Option<Node<'t>> {
    let mut stack = vec![file.root()];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 200_000 {
            return None;
        }
        if n.kind() == kind::CLASS_DECLARATION
            && n.child_by_field_name(field::NAME)
                .is_some_and(|id| file.node_text(id) == name)
        {
            return Some(n);
        }
        let mut c = n.walk();
        let children: Vec<Node<'t>> = n.named_children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

fn innermost_identifier(node: Node<'_>) -> Option<Node<'_>> {
    let mut cur = node;
    for _ in 0..64 {
        if cur.kind() == kind::IDENTIFIER {
            return Some(cur);
        }
        cur = cur.child_by_field_name(field::DECLARATOR).or_else(|| {
            let mut c = cur.walk();
            let found = cur
                .named_children(&mut c)
                .find(|n| n.kind() == kind::IDENTIFIER || n.kind().ends_with("declarator"));
            found
        })?;
    }
    None
}

/// Collapses a declared type: qualifiers and `std::` removed, no spaces around punctuation.
pub fn clean_type(decl: &str) -> String {
    let mut words = Vec::new();
    let spaced = decl
        .replace('*', " * ")
        .replace('&', " & ")
        .replace('[', " [ ")
        .replace(']', " ] ")
        .replace('<', " < ")
        .replace('>', " > ")
        .replace(',', " , ");
    for w in spaced.split_whitespace() {
        if matches!(
            w,
            "const"
                | "final"
                | "volatile"
                | "struct"
                | "register"
                | "restrict"
                | "static"
                | "inline"
        ) {
            continue;
        }
        words.push(
            w.trim_start_matches("std::")
                .trim_start_matches("java.util."),
        );
    }
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        let punct = |s: &str| matches!(s, "*" | "&" | "[" | "]" | "<" | ">" | ",");
        if i > 0 && !punct(w) && !punct(words[i - 1]) {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The pointee type of a C/C++ pointer to one scalar (`int *`, `double *`, `const long *`):
/// one `*`, no brackets, an integer, floating-point, boolean or character pointee. `char *` is
/// a string, never a pointee.
fn pointee_of(lang: Language, decl: &str) -> Option<Ty> {
    let t = clean_type(decl);
    let inner = t.strip_suffix('*')?;
    if inner.contains(['*', '[', '&']) || inner == "char" {
        return None;
    }
    match parse_type(lang, inner) {
        t @ (Ty::Int { .. } | Ty::Float { .. } | Ty::Bool | Ty::Char) => Some(t),
        _ => None,
    }
}

fn is_c_pointer_list(decl: &str) -> bool {
    let t = clean_type(decl);
    (t.ends_with('*') || t.ends_with("[]")) && !matches!(t.as_str(), "char*" | "char[]")
}

fn is_mutable(lang: Language, decl: &str, ty: &Ty) -> bool {
    match lang {
        Language::Python | Language::Java => matches!(ty, Ty::List(_)),
        Language::C | Language::Cpp => {
            let t = clean_type(decl);
            let pointerish = t.ends_with('*') || t.ends_with("[]") || t.ends_with('&');
            pointerish && !decl.contains("const") && matches!(ty, Ty::List(_) | Ty::Str)
        }
        _ => false,
    }
}

/// Parses a declared type (as written) into a [`Ty`].
pub fn parse_type(lang: Language, decl: &str) -> Ty {
    let t = clean_type(decl);
    let t = t.trim_end_matches('&').to_string();
    if t.is_empty() {
        return Ty::Unknown;
    }
    match lang {
        Language::Python => parse_python_type(&t),
        Language::Java => {
            // `java.lang.String` is `String`.
            let t = t.strip_prefix("java.lang.").unwrap_or(&t).to_string();
            if let Some(inner) = t.strip_suffix("[]") {
                return Ty::List(Box::new(parse_type(lang, inner)));
            }
            if let Some(inner) = generic_arg(&t, &["List", "ArrayList", "LinkedList", "Collection"])
            {
                return Ty::List(Box::new(parse_type(lang, inner)));
            }
            match t.as_str() {
                "int" | "Integer" => Ty::Int {
                    bits: 32,
                    signed: true,
                },
                "long" | "Long" => Ty::Int {
                    bits: 64,
                    signed: true,
                },
                "short" | "Short" => Ty::Int {
                    bits: 16,
                    signed: true,
                },
                "byte" | "Byte" => Ty::Int {
                    bits: 8,
                    signed: true,
                },
                "char" | "Character" => Ty::Char,
                "boolean" | "Boolean" => Ty::Bool,
                "double" | "Double" => Ty::Float { bits: 64 },
                "float" | "Float" => Ty::Float { bits: 32 },
                "String" => Ty::Str,
                "void" => Ty::Void,
                _ => Ty::Unknown,
            }
        }
        Language::C | Language::Cpp => {
            // A buffer of declared size (`char word[UNLEN + 1]`) is a string; the harness
            // gives it at least that many bytes.
            if t.starts_with("char[") && t.ends_with(']') && t.matches('[').count() == 1 {
                return Ty::Str;
            }
            if let Some(inner) = t.strip_suffix('*').or_else(|| t.strip_suffix("[]")) {
                if inner == "char" {
                    return Ty::Str;
                }
                return Ty::List(Box::new(parse_type(lang, inner)));
            }
            if let Some(inner) = generic_arg(&t, &["vector"]) {
                return Ty::List(Box::new(parse_type(lang, inner)));
            }
            match t.as_str() {
                "string" => Ty::Str,
                "int" | "signed" | "signed int" | "int32_t" => Ty::Int {
                    bits: 32,
                    signed: true,
                },
                "unsigned" | "unsigned int" | "uint32_t" => Ty::Int {
                    bits: 32,
                    signed: false,
                },
                "long" | "long int" | "long long" | "long long int" | "int64_t" | "ssize_t"
                | "ptrdiff_t" | "signed long" | "signed long long" => Ty::Int {
                    bits: 64,
                    signed: true,
                },
                "unsigned long"
                | "unsigned long int"
                | "unsigned long long"
                | "uint64_t"
                | "size_t"
                | "unsigned long long int" => Ty::Int {
                    bits: 64,
                    signed: false,
                },
                "short" | "short int" | "int16_t" => Ty::Int {
                    bits: 16,
                    signed: true,
                },
                "unsigned short" | "uint16_t" => Ty::Int {
                    bits: 16,
                    signed: false,
                },
                "signed char" | "int8_t" => Ty::Int {
                    bits: 8,
                    signed: true,
                },
                "unsigned char" | "uint8_t" => Ty::Int {
                    bits: 8,
                    signed: false,
                },
                "char" => Ty::Char,
                "bool" | "_Bool" => Ty::Bool,
                "double" | "long double" => Ty::Float { bits: 64 },
                "float" => Ty::Float { bits: 32 },
                "void" => Ty::Void,
                _ => Ty::Unknown,
            }
        }
        _ => Ty::Unknown,
    }
}

fn generic_arg<'a>(t: &'a str, names: &[&str]) -> Option<&'a str> {
    for n in names {
        if let Some(rest) = t.strip_prefix(n) {
            if let Some(inner) = rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
                return Some(inner);
            }
        }
    }
    None
}

fn parse_python_type(t: &str) -> Ty {
    let t = t.trim().trim_start_matches("typing.");
    for list in ["list", "List", "Sequence", "Iterable", "tuple", "Tuple"] {
        if t == list {
            return Ty::List(Box::new(Ty::BigInt));
        }
        if let Some(inner) = t
            .strip_prefix(list)
            .and_then(|r| r.strip_prefix('['))
            .and_then(|r| r.strip_suffix(']'))
        {
            let inner = inner.split(',').next().unwrap_or("").trim();
            return Ty::List(Box::new(parse_python_type(inner)));
        }
    }
    match t {
        "int" => Ty::BigInt,
        "float" => Ty::Float { bits: 64 },
        "bool" => Ty::Bool,
        "str" => Ty::Str,
        "None" => Ty::Void,
        _ => Ty::Unknown,
    }
}

/// Whether `hay` contains `word` delimited by non-identifier characters.
fn find_word(hay: &str, word: &str, after: &str) -> bool {
    let pat = format!("{word}{after}");
    let bytes = hay.as_bytes();
    let mut start = 0;
    while let Some(pos) = hay.get(start..).and_then(|h| h.find(&pat)) {
        let at = start + pos;
        let before_ok = at == 0
            || bytes
                .get(at - 1)
                .map(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.'))
                .unwrap_or(true);
        let end = at + word.len();
        let after_ok = !after.is_empty()
            || bytes
                .get(end)
                .map(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .unwrap_or(true);
        if before_ok && after_ok {
            return true;
        }
        start = at + 1;
    }
    false
}

/// Infers an unannotated Python parameter's type from its uses in the body: string methods
/// make it `str`, sequence use (`len`, indexing, iteration, list methods) a list of ints,
/// float literals or `math` calls next to it a `float`, otherwise `int`.
pub fn infer_python(body: &str, name: &str) -> Ty {
    const STR_METHODS: &[&str] = &[
        ".lower(",
        ".upper(",
        ".strip(",
        ".split(",
        ".startswith(",
        ".endswith(",
        ".replace(",
        ".find(",
        ".isdigit(",
        ".isalpha(",
        ".isalnum(",
        ".isspace(",
        ".isupper(",
        ".islower(",
        ".join(",
        ".lstrip(",
        ".rstrip(",
        ".title(",
        ".capitalize(",
        ".swapcase(",
        ".encode(",
        ".casefold(",
        ".zfill(",
    ];
    const LIST_METHODS: &[&str] = &[
        ".append(",
        ".pop(",
        ".sort(",
        ".extend(",
        ".insert(",
        ".remove(",
        ".reverse(",
        ".clear(",
        ".copy(",
    ];
    if STR_METHODS.iter().any(|m| find_word(body, name, m)) {
        return Ty::Str;
    }
    let quoted_cmp = [" == '", " == \"", " != '", " != \"", " + '", " + \""]
        .iter()
        .any(|m| find_word(body, name, m))
        || ["' + ", "\" + ", "' == ", "\" == "]
            .iter()
            .any(|prefix| find_word(body, &format!("{prefix}{name}"), ""));
    let sequence = find_word(body, &format!("len({name}"), ")")
        || find_word(body, name, "[")
        || find_word(body, &format!("in {name}"), "")
        || LIST_METHODS.iter().any(|m| find_word(body, name, m))
        || ["sorted(", "sum(", "reversed(", "set(", "enumerate("]
            .iter()
            .any(|f| {
                body.contains(&format!("{f}{name})")) || body.contains(&format!("{f}{name},"))
            });
    if sequence {
        return if quoted_cmp {
            Ty::Str
        } else {
            Ty::List(Box::new(Ty::BigInt))
        };
    }
    if quoted_cmp {
        return Ty::Str;
    }
    let floaty = body.contains(&format!("math.sqrt({name}"))
        || body.contains(&format!("math.floor({name}"))
        || body.contains(&format!("math.ceil({name}"))
        || body.contains(&format!("float({name})"))
        || has_float_literal_next_to(body, name);
    if floaty {
        return Ty::Float { bits: 64 };
    }
    Ty::BigInt
}

fn has_float_literal_next_to(body: &str, name: &str) -> bool {
    for op in [
        " * ", " + ", " - ", " / ", " < ", " > ", " <= ", " >= ", " == ",
    ] {
        let pat = format!("{name}{op}");
        let mut start = 0;
        while let Some(pos) = body.get(start..).and_then(|h| h.find(&pat)) {
            let at = start + pos + pat.len();
            let lit: String = body
                .get(at..)
                .unwrap_or("")
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
                .collect();
            if lit.contains('.') && lit.chars().any(|c| c.is_ascii_digit()) {
                return true;
            }
            start = at;
        }
    }
    false
}

/// The characters a generated string may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Charset {
    Ascii,
    /// Non-ASCII, but no characters beyond the Basic Multilingual Plane (Java's `char`).
    Bmp,
    Full,
}

/// The domain inputs are drawn from (the common domain of both signatures).
#[derive(Debug, Clone, PartialEq)]
pub enum Dom {
    Int {
        lo: i128,
        hi: i128,
    },
    Float {
        single: bool,
    },
    Bool,
    Char {
        charset: Charset,
    },
    Str {
        charset: Charset,
    },
    List(Box<Dom>),
    /// An object built through one of these constructors (their parameters' domains).
    Object(Vec<Vec<Dom>>),
}

/// Python-only integers are drawn from this range.
pub const PY_INT_RANGE: (i128, i128) = (-(1i128 << 64), 1i128 << 64);

/// The common domain of two declared types (the same type twice for a single function).
pub fn meet(a: &Ty, b: &Ty, charset: Charset) -> Result<Dom, String> {
    use Ty::*;
    Ok(match (a, b) {
        (Unknown, x) | (x, Unknown) => match x {
            Unknown => Dom::Int {
                lo: PY_INT_RANGE.0,
                hi: PY_INT_RANGE.1,
            },
            other => meet(other, other, charset)?,
        },
        (BigInt, BigInt) => Dom::Int {
            lo: PY_INT_RANGE.0,
            hi: PY_INT_RANGE.1,
        },
        (Int { .. }, Int { .. } | BigInt) | (BigInt, Int { .. }) => {
            let (lo1, hi1) = a.int_range().unwrap_or(PY_INT_RANGE);
            let (lo2, hi2) = b.int_range().unwrap_or(PY_INT_RANGE);
            Dom::Int {
                lo: lo1.max(lo2),
                hi: hi1.min(hi2),
            }
        }
        (Float { bits: x }, Float { bits: y }) => Dom::Float {
            single: *x == 32 || *y == 32,
        },
        (Float { .. }, Int { .. } | BigInt) | (Int { .. } | BigInt, Float { .. }) => {
            let int_side = if a.is_integer() { a } else { b };
            let (lo, hi) = int_side
                .int_range()
                .unwrap_or((-(1i128 << 53), 1i128 << 53));
            Dom::Int {
                lo: lo.max(-(1i128 << 53)),
                hi: hi.min(1i128 << 53),
            }
        }
        (Bool, Bool | Int { .. } | BigInt) | (Int { .. } | BigInt, Bool) => Dom::Bool,
        (Char, Char) => Dom::Char { charset },
        (Char, Str) | (Str, Char) => Dom::Char { charset },
        (Char, Int { .. }) | (Int { .. }, Char) => Dom::Char {
            charset: Charset::Ascii,
        },
        (Str, Str) => Dom::Str { charset },
        (List(x), List(y)) => Dom::List(Box::new(meet(x, y, charset)?)),
        // Constructors pair up in declaration order, with the same numbers of parameters.
        (Object(x), Object(y)) if x.ctors.len() == y.ctors.len() => Dom::Object(
            x.ctors
                .iter()
                .zip(&y.ctors)
                .map(|(p, q)| {
                    if p.len() != q.len() {
                        return Err(format!(
                            "the constructors of {} and {} differ",
                            x.class, y.class
                        ));
                    }
                    p.iter()
                        .zip(q)
                        .map(|((a, _), (b, _))| meet(a, b, charset))
                        .collect::<Result<Vec<Dom>, String>>()
                })
                .collect::<Result<Vec<_>, String>>()?,
        ),
        _ => return Err(format!("incompatible parameter types {a:?} and {b:?}")),
    })
}

/// Common domains of two signatures' logical parameters.
pub fn common_domain(a: &Signature, b: &Signature) -> Result<Vec<Dom>, String> {
    if a.params.len() != b.params.len() {
        return Err(format!(
            "different numbers of parameters ({} and {})",
            a.params.len(),
            b.params.len()
        ));
    }
    let charset = charset_for(a.language, b.language);
    a.params
        .iter()
        .zip(&b.params)
        .map(|(p, q)| {
            // A declared type wins over a Python type inferred from use.
            let (tp, tq) = match (p.inferred, q.inferred) {
                (true, false) => (&q.ty, &q.ty),
                (false, true) => (&p.ty, &p.ty),
                _ => (&p.ty, &q.ty),
            };
            meet(tp, tq, charset)
        })
        .collect()
}

/// The globals that differential testing sets before each call, with their domains: the
/// globals some function assigns, when both sides are C (or both C++) and declare exactly the
/// same ones (names, types, declarations with their initialisers). Otherwise none: a global
/// whose initial value differs between the sides is compared from that value, and a C function
/// is never compared with another language's function through state the other cannot have.
pub fn global_inputs(a: &Signature, b: &Signature) -> Vec<(String, Dom)> {
    if a.language != b.language || !matches!(a.language, Language::C | Language::Cpp) {
        return Vec::new();
    }
    let inputs = |s: &Signature| -> Vec<Global> {
        s.globals.iter().filter(|g| g.assigned).cloned().collect()
    };
    let ga = inputs(a);
    if ga != inputs(b) {
        return Vec::new();
    }
    // A differing declaration of a global that is not an input still changes its value.
    if a.globals != b.globals {
        return Vec::new();
    }
    let charset = charset_for(a.language, b.language);
    let mut out = Vec::new();
    for g in ga {
        let Ok(d) = meet(&g.ty, &g.ty, charset) else {
            return Vec::new();
        };
        let d = if g.array { Dom::List(Box::new(d)) } else { d };
        out.push((g.name, d));
    }
    out
}

/// Strings in the common domain: ASCII when C or C++ is involved (byte strings), the BMP when
/// Java meets Python (UTF-16 lengths), anything within one language.
pub fn charset_for(a: Language, b: Language) -> Charset {
    let c_like = |l| matches!(l, Language::C | Language::Cpp);
    if c_like(a) || c_like(b) {
        if a == b {
            Charset::Full
        } else {
            Charset::Ascii
        }
    } else if a != b {
        Charset::Bmp
    } else {
        Charset::Full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overloaded_name_is_refused_with_its_lines() {
        let src = "class M {\n  static int h(int x) { return x; }\n  static int h(int x, int y) { return x + y; }\n  static int g(int x) { return h(x); }\n}\n";
        let f = ParsedFile::parse(Language::Java, src.to_string());
        let e = select_function(&f, Some("h")).unwrap_err();
        assert!(e.contains("lines 2, 3") && e.contains("FILE:LINE"), "{e}");
        assert_eq!(select_function(&f, Some("g")).unwrap().start_line, 4);
    }

    #[test]
    fn the_entry_is_the_one_uncalled_function_and_several_candidates_are_refused() {
        let one = ParsedFile::parse(
            Language::Python,
            "def helper(x):\n    return x\n\ndef f(x):\n    return helper(x)\n",
        );
        assert_eq!(select_function(&one, None).unwrap().name, "f");
        let two = ParsedFile::parse(
            Language::Python,
            "def f(x):\n    return x\n\ndef g(x):\n    return -x\n",
        );
        let err = select_function(&two, None).unwrap_err();
        assert!(err.contains("FILE:function"), "{err}");
        assert_eq!(select_function(&two, Some("g")).unwrap().name, "g");
    }

    #[test]
    fn k_and_r_parameters_take_their_types_from_the_declarations() {
        let s = sig(
            Language::C,
            "int tri(a, b, s)\nunsigned int a;\nint b;\nchar *s;\n{\n  return a + b;\n}\n",
        );
        let names: Vec<&str> = s.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "s"]);
        assert_eq!(
            s.params[0].ty,
            Ty::Int {
                bits: 32,
                signed: false
            }
        );
        assert_eq!(
            s.params[1].ty,
            Ty::Int {
                bits: 32,
                signed: true
            }
        );
        assert_eq!(s.params[2].ty, Ty::Str);
    }

    #[test]
    fn java_lang_qualified_types_are_their_simple_names() {
        assert_eq!(parse_type(Language::Java, "java.lang.String"), Ty::Str);
        assert_eq!(
            parse_type(Language::Java, "java.lang.String[]"),
            Ty::List(Box::new(Ty::Str))
        );
        assert_eq!(parse_type(Language::Java, "java.util.Map"), Ty::Unknown);
    }

    fn sig(lang: Language, src: &str) -> Signature {
        let file = ParsedFile::parse(lang, src);
        let f = select_function(&file, None).unwrap();
        signature(&file, &f).unwrap()
    }

    fn sig_of(lang: Language, src: &str, name: &str) -> Signature {
        let file = ParsedFile::parse(lang, src);
        let f = select_function(&file, Some(name)).unwrap();
        signature(&file, &f).unwrap()
    }

    #[test]
    fn typedef_names_and_pointers_to_one_value_are_parameters() {
        let src = "typedef char character;\ntypedef char string[100];\ntypedef void *any_t;\ntypedef any_t map_t;\ntypedef int (*cmp_t)(int, int);\nstruct character { int x; };\ntypedef struct node { int v; } Node;\ntypedef unsigned long ulong;\n";
        let file = ParsedFile::parse(Language::C, src);
        assert_eq!(
            c_typedefs(&file),
            vec![
                ("character".to_string(), "char".to_string()),
                ("string".to_string(), "char []".to_string()),
                ("any_t".to_string(), "void *".to_string()),
                ("map_t".to_string(), "void *".to_string()),
                ("ulong".to_string(), "unsigned long".to_string()),
            ]
        );
        assert_eq!(
            expand_typedefs("const character *", &c_typedefs(&file)),
            "const char *"
        );
        // A struct tag is not the typedef of the same name.
        assert_eq!(
            expand_typedefs("struct character *", &c_typedefs(&file)),
            "struct character *"
        );
        let s = sig(
            Language::C,
            &format!("{src}character f(character c, string s, int *i, const double *d) {{ *i += c; return s[*i] + *d; }}\n"),
        );
        assert_eq!(s.ret, Ty::Char);
        let tys: Vec<&Ty> = s.params.iter().map(|p| &p.ty).collect();
        assert_eq!(
            tys,
            [
                &Ty::Char,
                &Ty::Str,
                &Ty::Int {
                    bits: 32,
                    signed: true
                },
                &Ty::Float { bits: 64 }
            ]
        );
        assert_eq!(s.raw[2].role, Role::Pointee(2));
        assert_eq!(s.raw[3].role, Role::Pointee(3));
        // The cell of `int *` is reported after the call, the `const` one is not.
        assert!(s.params[2].mutable && !s.params[3].mutable);
        // A pointer to a pointer, or through a typedef to `void`, has no single value.
        let file = ParsedFile::parse(
            Language::C,
            format!("{src}int g(map_t m) {{ return m != 0; }}\n"),
        );
        let f = select_function(&file, Some("g")).unwrap();
        assert!(signature(&file, &f).unwrap_err().contains("no length"));
    }

    #[test]
    fn globals_some_function_assigns_are_inputs_of_both_sides_alike() {
        let a = sig_of(
            Language::C,
            "int alt;\nint limit = 3;\nint hits[4];\nvoid set(int v) { alt = v; hits[v & 3]++; }\nint f(void) { return alt > limit; }\nint main(void) { set(1); return f(); }\n",
            "f",
        );
        let assigned: Vec<(&str, bool)> = a
            .globals
            .iter()
            .map(|g| (g.name.as_str(), g.assigned))
            .collect();
        assert_eq!(assigned, [("alt", true), ("limit", false), ("hits", true)]);
        let doms = global_inputs(&a, &a);
        let names: Vec<&str> = doms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["alt", "hits"]);
        assert!(matches!(doms[1].1, Dom::List(_)));
        // A global declared differently on the other side (its initial value) is no input.
        let b = sig_of(
            Language::C,
            "int alt;\nint limit = 4;\nint hits[4];\nvoid set(int v) { alt = v; hits[v & 3]++; }\nint f(void) { return alt > limit; }\nint main(void) { set(1); return f(); }\n",
            "f",
        );
        assert!(global_inputs(&a, &b).is_empty());
        // Nor when the other side is another language.
        let p = sig(Language::Python, "def f():\n    return 1\n");
        assert!(global_inputs(&a, &p).is_empty());
    }

    #[test]
    fn k_and_r_parameters_the_parser_left_outside_their_function_are_not_globals() {
        // A K&R definition returning a pointer: tree-sitter reads its header and parameter
        // declarations as one top-level declaration beside a top-level block.
        let src = "int count;\n\nint *pick( t, n )\nint *t, n;\n\t{\n\tcount++;\n\treturn t + n;\n\t}\n\n/* after */\nint total;\nint g(int x) { total += x; return count; }\n";
        let file = ParsedFile::parse(Language::C, src.to_string());
        let names: Vec<String> = c_globals(&file).into_iter().map(|g| g.name).collect();
        assert_eq!(names, ["count", "total"]);
    }

    #[test]
    fn c_globals_know_their_size_and_initial_value() {
        let s = sig_of(
            Language::C,
            "#define N 3\nint a;\nint b = -7;\nint t[4] = {1, 2};\nint u[] = {5, 6, 7};\nint v[N];\nint w = N * 2;\nbool on = true;\nint f(void) { return a; }\n",
            "f",
        );
        let got: Vec<String> = s
            .globals
            .iter()
            .map(|g| format!("{} {:?} {:?}", g.name, g.size, g.init))
            .collect();
        assert_eq!(
            got,
            [
                "a None Some([0])",
                "b None Some([-7])",
                "t Some(4) Some([1, 2, 0, 0])",
                "u Some(3) Some([5, 6, 7])",
                // A size or value through a macro is not known here.
                "v None None",
                "w None None",
                "on None Some([1])",
            ]
        );
    }

    #[test]
    fn c_pointer_and_length_form_one_list_parameter() {
        let s = sig(Language::C, "int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }");
        assert_eq!(s.params.len(), 1);
        assert_eq!(
            s.params[0].ty,
            Ty::List(Box::new(Ty::Int {
                bits: 32,
                signed: true
            }))
        );
        assert!(!s.params[0].mutable);
        assert_eq!(s.raw[1].role, Role::LenOf(0));
    }

    #[test]
    fn java_and_cpp_declared_types() {
        let s = sig(
            Language::Java,
            "class A { static long f(int[] a, String s, double d) { return 0; } }",
        );
        assert_eq!(
            s.ret,
            Ty::Int {
                bits: 64,
                signed: true
            }
        );
        assert!(s.is_static);
        assert_eq!(
            s.params[0].ty,
            Ty::List(Box::new(Ty::Int {
                bits: 32,
                signed: true
            }))
        );
        assert!(s.params[0].mutable);
        assert_eq!(s.params[1].ty, Ty::Str);
        let s = sig(
            Language::Cpp,
            "#include <vector>\nint f(std::vector<int>& v, const std::string &s) { return 0; }",
        );
        assert_eq!(
            s.params[0].ty,
            Ty::List(Box::new(Ty::Int {
                bits: 32,
                signed: true
            }))
        );
        assert!(s.params[0].mutable);
        assert_eq!(s.params[1].ty, Ty::Str);
        assert!(!s.params[1].mutable);
    }

    #[test]
    fn python_annotations_then_inference_from_use() {
        let s = sig(Language::Python, "def f(xs: list[int], k: float, s, t, n):\n    return len(t) + s.lower().count('a') + n\n");
        assert_eq!(s.params[0].ty, Ty::List(Box::new(Ty::BigInt)));
        assert_eq!(s.params[1].ty, Ty::Float { bits: 64 });
        assert_eq!(s.params[2].ty, Ty::Str);
        assert_eq!(s.params[3].ty, Ty::List(Box::new(Ty::BigInt)));
        assert_eq!(s.params[4].ty, Ty::BigInt);
        assert!(s.params[4].inferred);
    }

    #[test]
    fn python_methods_drop_self_and_the_uncalled_function_is_chosen() {
        let s = sig(Language::Python, "class S:\n    def helper(self, x):\n        return x\n    def main_fn(self, y: int):\n        return self.helper(y)\n");
        assert_eq!(s.name, "main_fn");
        assert!(s.has_receiver);
        assert_eq!(s.params.len(), 1);
    }

    #[test]
    fn structs_linking_to_their_own_type_are_linked_list_nodes() {
        let src = "struct charac {\n    char info;\n    int LINE_NUM;\n    struct charac *PREV;\n    struct charac *NEXT;\n};\n\
                   typedef struct item { int v; struct item *link; } Item;\n\
                   struct tree { int v; struct tree *left, *right; };\n\
                   struct named { int v; char *name; struct named *next; };\n\
                   int get(struct charac **tp, Item *head, struct tree *t) { return (*tp)->info + head->v + t->v; }\n";
        let file = ParsedFile::parse(Language::C, src.to_string());
        let chains = c_chains(&file);
        let names: Vec<&str> = chains.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["struct charac", "struct item", "Item"],
            "a tree and a node with a string are none"
        );
        let charac = &chains[0].1;
        assert_eq!(charac.next, "NEXT");
        assert_eq!(charac.prev.as_deref(), Some("PREV"));
        assert_eq!(charac.values.fields, ["info", "LINE_NUM"]);
        assert_eq!(chains[2].1.next, "link");
        assert_eq!(chains[2].1.prev, None);
        // Parameters: a variable holding the head, the head itself; the tree stays refused.
        let e = signature(&file, &file.functions()[0]).unwrap_err();
        assert!(e.contains("`t`"), "{e}");
        let fixed = src.replace(
            ", struct tree *t) { return (*tp)->info + head->v + t->v; }",
            ") { return (*tp)->info + head->v; }",
        );
        let file = ParsedFile::parse(Language::C, fixed);
        let s = signature(&file, &file.functions()[0]).unwrap();
        assert!(
            matches!(&s.raw[0].role, Role::Chain { list: 0, indirect: true, next, prev } if next == "NEXT" && prev.as_deref() == Some("PREV")),
            "{:?}",
            s.raw[0]
        );
        assert!(
            matches!(
                &s.raw[1].role,
                Role::Chain {
                    list: 1,
                    indirect: false,
                    prev: None,
                    ..
                }
            ),
            "{:?}",
            s.raw[1]
        );
        let Ty::List(e) = &s.params[0].ty else {
            panic!("{:?}", s.params[0])
        };
        assert!(matches!(&**e, Ty::Object(o) if o.fields == ["info", "LINE_NUM"]));
        // A char buffer of declared size is a string (the harness sizes it).
        assert_eq!(parse_type(Language::C, "char  [UNLEN + 1]"), Ty::Str);
        assert_eq!(parse_type(Language::C, "char [2][3]"), Ty::Unknown);
    }

    #[test]
    fn common_domain_is_the_narrower_integer_range_and_ascii_with_c() {
        let py = sig(Language::Python, "def f(a: int, s: str):\n    return a\n");
        let c = sig(Language::C, "int f(int a, const char *s) { return a; }");
        let d = common_domain(&py, &c).unwrap();
        assert_eq!(
            d[0],
            Dom::Int {
                lo: i128::from(i32::MIN),
                hi: i128::from(i32::MAX)
            }
        );
        assert_eq!(
            d[1],
            Dom::Str {
                charset: Charset::Ascii
            }
        );
    }

    #[test]
    fn java_objects_are_built_through_their_non_private_constructors() {
        let src = "class P {\n  int x;\n  P(int x) { this.x = x; }\n  private P() {}\n  P(P o) { this.x = o.x; }\n}\n\
                   abstract class Shape { }\n\
                   class Box { static class Lid { Lid(boolean b) {} } class Inner { } }\n\
                   public class T {\n  static int f(P p, Box.Lid l) { return p.x; }\n}\n";
        let s = sig(Language::Java, src);
        let Ty::Object(p) = &s.params[0].ty else {
            panic!("{:?}", s.params[0]);
        };
        assert_eq!(p.class, "P");
        // The private constructor is not used; the copy constructor nests a P.
        assert_eq!(p.ctors.len(), 2);
        assert_eq!(
            p.ctors[0],
            vec![(
                Ty::Int {
                    bits: 32,
                    signed: true
                },
                "int".to_string()
            )]
        );
        assert!(matches!(&p.ctors[1][0].0, Ty::Object(inner) if inner.class == "P"));
        let Ty::Object(lid) = &s.params[1].ty else {
            panic!("{:?}", s.params[1]);
        };
        assert_eq!(lid.class, "Box.Lid");
        assert!(!s.receiver && !s.constructs);
        // Abstract and inner (non-static nested) classes cannot be built by name.
        let file = ParsedFile::parse(Language::Java, src);
        assert!(java_object_type(&file, "Shape", 3).is_none());
        assert!(java_object_type(&file, "Inner", 3).is_none());
        assert!(java_object_type(&file, "Missing", 3).is_none());
        // A class without constructors has the implicit one.
        assert_eq!(
            java_object_type(&file, "Box", 3).unwrap().ctors,
            vec![vec![]]
        );
    }

    #[test]
    fn a_java_receiver_without_a_no_argument_constructor_is_the_first_input() {
        let src = "public class A {\n  private int n;\n  public A(int n) { this.n = n; }\n  public int add(int[] xs) { return n + xs.length; }\n}\n";
        let s = sig(Language::Java, src);
        assert!(s.receiver);
        assert_eq!(s.params.len(), 2);
        assert_eq!(s.params[0].name, "this");
        assert!(matches!(&s.params[0].ty, Ty::Object(o) if o.class == "A"));
        // The raw parameter `xs` is logical parameter 1 now.
        assert_eq!(s.raw[0].role, Role::Value(1));
        // With a no-argument constructor the receiver comes from it, as before.
        let src = "public class B {\n  public B() {}\n  public int get(int x) { return x; }\n}\n";
        assert!(!sig(Language::Java, src).receiver);
        // A constructor is an entry of its own.
        let file = ParsedFile::parse(Language::Java, src);
        let ctor = select_function(&file, Some("B")).unwrap();
        assert!(signature(&file, &ctor).unwrap().constructs);
    }

    #[test]
    fn entry_points_are_the_functions_nothing_else_calls() {
        let src = "class V {\n  int x;\n  V(int x) { this.x = x; }\n  V twice() { return new V(helper(x)); }\n  int helper(int y) { return 2 * y; }\n  int get() { return x; }\n}\n";
        let file = ParsedFile::parse(Language::Java, src);
        let names: Vec<String> = entry_points(&file).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["V.twice", "V.get"]);
        // A C prototype is no call; `main` is an entry.
        let src = "int sq(int x);\nint sq(int x) { return x * x; }\nint cube(int x) { return x * sq(x); }\nint main(void) { return 0; }\n";
        let file = ParsedFile::parse(Language::C, src);
        let names: Vec<String> = entry_points(&file).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["cube", "main"]);
    }
}
