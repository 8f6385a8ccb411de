//! Declared types as set filters: function pointers and object pointers are kept apart
//! (C11 6.3.2.3 converts between object pointer types, never between an object pointer and
//! a function pointer).
//!
//! Every memory object gets a *class* from its declaration (a function, a data object, or
//! unknown: heap blocks, undeclared externs, variables of types from unparsed headers) and
//! every pointer-valued place a *filter* from its declared type: a function pointer
//! (`int (*f)(int)`, a callback typedef, a member of such a type) takes only functions and
//! objects of unknown class; a data pointer (`int *`, `struct S *`, `char **`) takes
//! everything but functions; `void *` and places of unknown type take anything. Casts
//! to a function-pointer type filter too (`(cb)v`). A parameter declared as an array or a
//! function is a pointer, as C adjusts it (`int cb(int)` is `int (*cb)(int)`). Data pointers are not split further
//! by struct type: C code converts between struct pointer types (`struct sockaddr *` over
//! a `struct sockaddr_in`) and overlays structs on byte buffers, and a may-point-to set
//! must keep those targets.
//!
//! Without the filter, context-insensitive summaries of generic helpers (a `void *`
//! passed through a logging or freeing function) put data objects into callback pointers,
//! every indirect call through them then binds data as arguments of every callback.

use crate::syntax::lang::{field, kind};
use std::collections::{BTreeMap, HashMap};
use tree_sitter::Node;

use crate::syntax::ParsedFile;

/// A type constructor applied to a declared name, outermost first (`*a[2]`: array of
/// pointers is `[Array, Pointer]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctor {
    Pointer,
    Array,
    Function,
    Reference,
}

/// The type a declaration starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Base {
    Void,
    Scalar,
    /// A struct/class/union with a known layout.
    Record,
    /// A type name: a typedef, a class, or something declared in an unparsed header.
    Named(String),
    Unknown,
}

/// A declared type: constructors (outermost first) over a base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    pub ctors: Vec<Ctor>,
    pub base: Base,
}

impl Shape {
    /// The type a parameter declared with this type has: an array or function parameter is
    /// adjusted to a pointer (`int a[]` is `int *a`, `int f(int)` is `int (*f)(int)`).
    pub fn adjusted_for_parameter(mut self) -> Shape {
        match self.ctors.first() {
            Some(Ctor::Array) => {
                if let Some(first) = self.ctors.first_mut() {
                    *first = Ctor::Pointer;
                }
            }
            Some(Ctor::Function) => self.ctors.insert(0, Ctor::Pointer),
            _ => {}
        }
        self
    }
}

/// Object classes.
pub(crate) const OBJ_UNKNOWN: u32 = 0;
pub(crate) const OBJ_FUNC: u32 = 1;
pub(crate) const OBJ_DATA: u32 = 2;

/// Place filters.
pub(crate) const NO_FILTER: u32 = 0;
pub(crate) const FN_PTR: u32 = 1;
pub(crate) const DATA_PTR: u32 = 2;
/// Number of filters (array size for per-filter tables).
pub(crate) const FILTERS: usize = 3;

/// Does a place with `filter` refuse objects of `class`?
pub(crate) fn rejects(filter: u32, class: u32) -> bool {
    match filter {
        FN_PTR => class == OBJ_DATA,
        DATA_PTR => class == OBJ_FUNC,
        _ => false,
    }
}

/// The base of a declaration's type node.
pub(crate) fn base_of(unit: usize, file: &ParsedFile, ty: Node<'_>) -> Base {
    match ty.kind() {
        kind::PRIMITIVE_TYPE => match file.node_text(ty).trim() {
            "void" => Base::Void,
            // C++ `auto` and friends are not primitive types in the grammar.
            _ => Base::Scalar,
        },
        kind::SIZED_TYPE_SPECIFIER | kind::ENUM_SPECIFIER => Base::Scalar,
        kind::STRUCT_SPECIFIER | kind::CLASS_SPECIFIER | kind::UNION_SPECIFIER => {
            match super::model::type_key(unit, file, ty) {
                Some(_) => Base::Record,
                None => Base::Unknown,
            }
        }
        kind::TYPE_IDENTIFIER => Base::Named(file.node_text(ty).trim().to_string()),
        _ => Base::Unknown,
    }
}

/// The constructors of a declarator chain, outermost type constructor first (the
/// declarator nearest the name is the outermost constructor of the name's type).
pub(crate) fn ctors_of(mut node: Node<'_>) -> Vec<Ctor> {
    let mut chain = Vec::new();
    for _ in 0..128 {
        match node.kind() {
            kind::POINTER_DECLARATOR | kind::ABSTRACT_POINTER_DECLARATOR => {
                chain.push(Ctor::Pointer)
            }
            kind::ARRAY_DECLARATOR | kind::ABSTRACT_ARRAY_DECLARATOR => chain.push(Ctor::Array),
            kind::FUNCTION_DECLARATOR | kind::ABSTRACT_FUNCTION_DECLARATOR => {
                chain.push(Ctor::Function)
            }
            kind::REFERENCE_DECLARATOR | kind::ABSTRACT_REFERENCE_DECLARATOR => {
                chain.push(Ctor::Reference)
            }
            kind::INIT_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR => {}
            _ => break,
        }
        let next = node.child_by_field_name(field::DECLARATOR).or_else(|| {
            let mut cursor = node.walk();
            let found = node
                .named_children(&mut cursor)
                .find(|c| c.kind().ends_with("declarator"));
            found
        });
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    chain.reverse();
    chain
}

pub(crate) fn shape_of(
    unit: usize,
    file: &ParsedFile,
    ty: Node<'_>,
    declarator: Option<Node<'_>>,
) -> Shape {
    Shape {
        ctors: declarator.map(ctors_of).unwrap_or_default(),
        base: base_of(unit, file, ty),
    }
}

/// A shape with typedefs expanded: constructors outermost first, and a base that is no
/// longer a name (a name with a struct layout is that record; an unresolved one unknown).
/// `has_layout` tells whether a type name names a struct layout.
pub(crate) fn expand(
    shape: &Shape,
    typedefs: &BTreeMap<String, Shape>,
    has_layout: &dyn Fn(&str) -> bool,
) -> (Vec<Ctor>, Base) {
    let mut ctors = shape.ctors.clone();
    let mut base = shape.base.clone();
    for _ in 0..32 {
        let Base::Named(name) = &base else { break };
        if has_layout(name) {
            base = Base::Record;
            break;
        }
        match typedefs.get(name) {
            Some(t) => {
                ctors.extend(t.ctors.iter().copied());
                base = t.base.clone();
            }
            None if STD_SCALARS.contains(&name.as_str()) => {
                base = Base::Scalar;
                break;
            }
            None => {
                base = Base::Unknown;
                break;
            }
        }
    }
    if matches!(base, Base::Named(_)) {
        base = Base::Unknown;
    }
    (ctors, base)
}

/// Integer typedefs of the C and POSIX headers (not parsed, so named here).
const STD_SCALARS: &[&str] = &[
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "off_t",
    "time_t",
    "pid_t",
    "uid_t",
    "gid_t",
    "mode_t",
    "socklen_t",
    "wchar_t",
    "bool",
    "intmax_t",
    "uintmax_t",
];

fn skip_arrays(ctors: &[Ctor]) -> &[Ctor] {
    let n = ctors.iter().take_while(|c| **c == Ctor::Array).count();
    ctors.get(n..).unwrap_or_default()
}

/// The class of the object a declaration creates (an array is its elements' storage).
pub(crate) fn object_class(ctors: &[Ctor], base: &Base) -> u32 {
    match skip_arrays(ctors).first() {
        Some(Ctor::Pointer) => OBJ_DATA,
        Some(Ctor::Function) => OBJ_FUNC,
        Some(_) => OBJ_UNKNOWN,
        None => match base {
            Base::Scalar | Base::Record => OBJ_DATA,
            _ => OBJ_UNKNOWN,
        },
    }
}

/// The filter of the place a declaration creates (an array of pointers: its elements).
pub(crate) fn place_filter(ctors: &[Ctor], base: &Base) -> u32 {
    let ctors = skip_arrays(ctors);
    if ctors.first() != Some(&Ctor::Pointer) {
        return NO_FILTER;
    }
    match skip_arrays(ctors.get(1..).unwrap_or_default()).first() {
        Some(Ctor::Pointer) => DATA_PTR,
        Some(Ctor::Function) => FN_PTR,
        Some(_) => NO_FILTER,
        None => match base {
            Base::Scalar | Base::Record => DATA_PTR,
            _ => NO_FILTER,
        },
    }
}

/// Per-declaration classes, merged over redeclarations (a disagreement means unknown).
#[derive(Debug, Clone, Default)]
pub(crate) struct TypeClasses {
    /// Variable -> (object class, place filter).
    pub vars: HashMap<super::lower::VarKey, (u32, u32)>,
    /// (layout key, field name) -> (object class, place filter).
    pub members: HashMap<(String, String), (u32, u32)>,
    /// Field name -> (object class, place filter), merged over every struct declaring the
    /// name (for fields of objects whose type is unknown, such as heap blocks).
    pub fields: HashMap<String, (u32, u32)>,
    /// Function -> filter of its return value.
    pub returns: HashMap<String, u32>,
}

/// Records a declaration's classification under `key`, merged with earlier declarations of
/// the same key: equal keeps, different forgets (0 is "unknown" for classes and "no filter"
/// for filters, element by element).
pub(crate) fn merge_into<K, V>(map: &mut HashMap<K, V>, key: &K, value: V)
where
    K: std::hash::Hash + Eq + Clone,
    V: Forget,
{
    match map.get_mut(key) {
        Some(slot) => slot.forget_unless(&value),
        None => {
            map.insert(key.clone(), value);
        }
    }
}

/// A classification that a conflicting redeclaration resets to unknown.
pub(crate) trait Forget {
    fn forget_unless(&mut self, other: &Self);
}

impl Forget for u32 {
    fn forget_unless(&mut self, other: &u32) {
        if self != other {
            *self = 0;
        }
    }
}

impl Forget for (u32, u32) {
    fn forget_unless(&mut self, other: &(u32, u32)) {
        self.0.forget_unless(&other.0);
        self.1.forget_unless(&other.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Language;

    /// (object class, place filter) of the first declarator of the last declaration
    /// (`S` is a struct with a layout).
    fn classify(src: &str) -> (u32, u32) {
        let file = ParsedFile::parse(Language::C, src);
        let root = file.root();
        let mut cursor = root.walk();
        let decls: Vec<Node<'_>> = root
            .named_children(&mut cursor)
            .filter(|n| matches!(n.kind(), kind::DECLARATION | kind::TYPE_DEFINITION))
            .collect();
        let mut typedefs = BTreeMap::new();
        let mut last = None;
        for d in decls {
            let ty = d.child_by_field_name(field::TYPE).expect("type");
            let declarator = d.child_by_field_name(field::DECLARATOR);
            let shape = shape_of(0, &file, ty, declarator);
            if d.kind() == kind::TYPE_DEFINITION {
                let name = declarator
                    .and_then(|n| super::super::model::declarator_info(&file, n))
                    .map(|(n, _)| n)
                    .expect("typedef name");
                typedefs.insert(name, shape);
            } else {
                last = Some(shape);
            }
        }
        let shape = last.expect("a declaration");
        let (ctors, base) = expand(&shape, &typedefs, &|n: &str| n == "S");
        (object_class(&ctors, &base), place_filter(&ctors, &base))
    }

    #[test]
    fn declarations_get_the_class_and_filter_their_type_implies() {
        assert_eq!(classify("int x;"), (OBJ_DATA, NO_FILTER));
        assert_eq!(classify("char buf[10];"), (OBJ_DATA, NO_FILTER));
        assert_eq!(classify("int *p;"), (OBJ_DATA, DATA_PTR));
        assert_eq!(classify("void *v;"), (OBJ_DATA, NO_FILTER));
        assert_eq!(classify("struct S *s;"), (OBJ_DATA, DATA_PTR));
        assert_eq!(classify("struct S s;"), (OBJ_DATA, NO_FILTER));
        assert_eq!(classify("char **pp;"), (OBJ_DATA, DATA_PTR));
        assert_eq!(classify("void **pv;"), (OBJ_DATA, DATA_PTR));
        assert_eq!(classify("int (*f)(int);"), (OBJ_DATA, FN_PTR));
        assert_eq!(classify("int *a[4];"), (OBJ_DATA, DATA_PTR));
        assert_eq!(classify("int (*pa)[4];"), (OBJ_DATA, DATA_PTR));
        assert_eq!(classify("int (*fa[2])(void);"), (OBJ_DATA, FN_PTR));
        assert_eq!(classify("int (**pf)(void);"), (OBJ_DATA, DATA_PTR));
        // Typedefs expand: a struct name, a callback type, integer types, a pointer typedef.
        assert_eq!(classify("typedef struct S T; T *t;"), (OBJ_DATA, DATA_PTR));
        assert_eq!(
            classify("typedef int (*cb)(void *); cb f;"),
            (OBJ_DATA, FN_PTR)
        );
        assert_eq!(classify("typedef int fn(void); fn *f;"), (OBJ_DATA, FN_PTR));
        assert_eq!(
            classify("typedef unsigned char u8; u8 *z;"),
            (OBJ_DATA, DATA_PTR)
        );
        assert_eq!(
            classify("typedef char *str; str *ps;"),
            (OBJ_DATA, DATA_PTR)
        );
        assert_eq!(classify("size_t n;"), (OBJ_DATA, NO_FILTER));
        // A type nobody declared (an unparsed header) is unknown: no class, no filter.
        assert_eq!(classify("FILE *fp;"), (OBJ_DATA, NO_FILTER));
        assert_eq!(classify("FILE f;"), (OBJ_UNKNOWN, NO_FILTER));
    }

    #[test]
    fn array_and_function_parameters_are_pointers() {
        let file = ParsedFile::parse(Language::C, "void g(int a[4], int cb(int), char s);");
        let mut found = BTreeMap::new();
        let mut stack = vec![file.root()];
        while let Some(n) = stack.pop() {
            if n.kind() == kind::PARAMETER_DECLARATION {
                let ty = n.child_by_field_name(field::TYPE).expect("type");
                let d = n.child_by_field_name(field::DECLARATOR).expect("named");
                let name = super::super::model::declarator_info(&file, d)
                    .expect("name")
                    .0;
                let shape = shape_of(0, &file, ty, Some(d)).adjusted_for_parameter();
                found.insert(name, place_filter(&shape.ctors, &shape.base));
                continue;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        let want: BTreeMap<String, u32> = [("a", DATA_PTR), ("cb", FN_PTR), ("s", NO_FILTER)]
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(found, want);
    }

    #[test]
    fn function_and_data_pointers_refuse_each_others_objects() {
        assert!(rejects(FN_PTR, OBJ_DATA) && !rejects(FN_PTR, OBJ_FUNC));
        assert!(rejects(DATA_PTR, OBJ_FUNC) && !rejects(DATA_PTR, OBJ_DATA));
        for f in [NO_FILTER, FN_PTR, DATA_PTR] {
            assert!(!rejects(f, OBJ_UNKNOWN), "unknown objects pass filter {f}");
        }
        assert!(!rejects(NO_FILTER, OBJ_FUNC) && !rejects(NO_FILTER, OBJ_DATA));
    }
}
