//! Program facts the constraint generator and the expression evaluator share: which names are
//! functions, globals, locals (per function), arrays and references, and which struct fields
//! are declared as arrays. Built once per analysis by iterative walks (no recursion).

use super::lower::{is_expression_kind, FieldFilter, ObjKey, VarKey};
use super::types::{
    ctors_of, expand, merge_into, object_class, place_filter, shape_of, Ctor, Shape, TypeClasses,
    NO_FILTER,
};
use crate::syntax::functions::{Function, FunctionKind};
use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// How a declared name was declared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VarFlags {
    /// Declared as an array (`int *a[2]`): its value decays to its own address.
    pub array: bool,
    /// A C++ reference (`int &r = x`): modelled as a pointer that is implicitly dereferenced.
    pub reference: bool,
}

impl VarFlags {
    fn merge(&mut self, other: VarFlags) {
        self.array |= other.array;
        self.reference |= other.reference;
    }
}

/// One function definition, indexed by qualified name (overloads are separate defs).
#[derive(Debug, Clone)]
pub(crate) struct FnDef {
    /// Parameter names by position ("" for unnamed parameters).
    pub params: Vec<String>,
    /// Parameters declared as C++ references.
    pub ref_params: BTreeSet<String>,
    /// True for methods and constructors (they have a `this` parameter).
    pub has_this: bool,
}

/// Names visible inside one function (merged over overloads of the same qualified name).
#[derive(Debug, Clone, Default)]
pub(crate) struct FnScope {
    pub locals: BTreeMap<String, VarFlags>,
    /// Qualified name of the enclosing function for lambdas and nested functions.
    pub container: Option<String>,
    /// Simple name of the class of a C++ method.
    pub class: Option<String>,
}

/// One data member of a struct, class or union, in declaration order.
#[derive(Debug, Clone)]
pub(crate) struct FieldInfo {
    pub name: String,
    /// Declared as an array (`char *argv[4]`).
    pub array: bool,
    /// The member's struct type when it holds a struct by value (raw name: tag, typedef or
    /// anonymous layout key; see [`Model::layout`]).
    pub layout: Option<String>,
}

/// Per-unit facts.
#[derive(Debug, Clone)]
pub(crate) struct UnitInfo {
    pub path: String,
    /// Lambda start byte -> the lambda's qualified function name.
    pub lambdas: BTreeMap<usize, String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Model {
    pub units: Vec<UnitInfo>,
    pub defs: Vec<FnDef>,
    /// Qualified name -> indices into `defs`.
    pub by_name: BTreeMap<String, Vec<usize>>,
    /// Simple name -> qualified names of C++ methods (for `obj.m()` calls).
    pub methods_by_simple: BTreeMap<String, BTreeSet<String>>,
    /// Simple class name -> qualified names of its constructors.
    pub ctors_by_class: BTreeMap<String, BTreeSet<String>>,
    pub scopes: BTreeMap<String, FnScope>,
    pub globals: BTreeMap<String, VarFlags>,
    /// Global name -> units that declare it.
    pub global_units: BTreeMap<String, BTreeSet<usize>>,
    /// Qualified name of a function -> unit that defines it (first definition).
    pub function_units: BTreeMap<String, usize>,
    /// Functions declared by prototype (defined or not).
    pub prototypes: BTreeSet<String>,
    /// Field name -> (declared as an array somewhere, declared as a non-array somewhere).
    pub field_kinds: BTreeMap<String, (bool, bool)>,
    /// Simple class name -> its data members (name -> declared as array).
    pub class_fields: BTreeMap<String, BTreeMap<String, bool>>,
    /// Struct/class/union layouts by tag (simple name) or anonymous key (`{anon}UNIT:BYTE`).
    pub layouts: BTreeMap<String, Vec<FieldInfo>>,
    /// `typedef T Name;` -> T's raw name (tag, typedef name, anonymous layout key or C++
    /// qualified name), for plain aliases only: the chain [`Model::layout`] follows to a struct
    /// layout. Not derivable from `typedef_shapes`, which classifies declared types (pointer,
    /// function, scalar, record) without naming the layout.
    pub typedefs: BTreeMap<String, String>,
    /// Names of members declared inside a union: they overlap, so accesses through them are
    /// field-insensitive.
    pub union_fields: BTreeSet<String>,
    /// Variables declared with a struct/class/union type by value (or arrays of them) -> the
    /// type's raw name. Only copies involving such an object copy fields.
    pub var_types: BTreeMap<VarKey, String>,
    /// Names of fields declared with a struct type by value somewhere.
    pub record_fields: BTreeMap<String, String>,
    /// Field names of record variables and record fields (built after the walk).
    pub filter: FieldFilter,
    /// Declared-type classes of variables, fields and return values (set filters).
    pub classes: TypeClasses,
    /// Every typedef's declared type (pointer and function typedefs included), for the
    /// declared-type filters ([`super::types`]); layouts are found through `typedefs`.
    typedef_shapes: BTreeMap<String, Shape>,
    /// Declared types collected while walking, classified once typedefs are all known.
    raw_vars: Vec<(VarKey, Shape)>,
    /// (layout key, field name, declared type).
    raw_fields: Vec<(String, String, Shape)>,
    raw_returns: Vec<(String, Shape)>,
    /// Set when the model walk was cancelled.
    pub cancelled: bool,
}

/// The innermost type constructor applied to a declared name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrapper {
    Plain,
    Pointer,
    Array,
    Function,
    Reference,
}

/// Drills a declarator down to its name; returns the name and the innermost wrapper (the
/// declarator closest to the name decides what the name is: `*a[2]` is an array of
/// pointers, `(*p)[2]` a pointer to an array, `*f(int)` a function).
pub(crate) fn declarator_info(file: &ParsedFile, mut node: Node<'_>) -> Option<(String, Wrapper)> {
    let mut wrapper = Wrapper::Plain;
    for _ in 0..128 {
        match node.kind() {
            kind::IDENTIFIER
            | kind::FIELD_IDENTIFIER
            | kind::QUALIFIED_IDENTIFIER
            | kind::DESTRUCTOR_NAME
            | kind::OPERATOR_NAME
            | kind::TEMPLATE_FUNCTION
            | kind::TYPE_IDENTIFIER => {
                let name: String = file.node_text(node).split_whitespace().collect();
                return (!name.is_empty()).then_some((name, wrapper));
            }
            kind::POINTER_DECLARATOR => wrapper = Wrapper::Pointer,
            kind::ARRAY_DECLARATOR => wrapper = Wrapper::Array,
            kind::FUNCTION_DECLARATOR => wrapper = Wrapper::Function,
            kind::REFERENCE_DECLARATOR => wrapper = Wrapper::Reference,
            kind::INIT_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR => {}
            _ => return None,
        }
        node = node.child_by_field_name(field::DECLARATOR).or_else(|| {
            let mut cursor = node.walk();
            let found = node.named_children(&mut cursor).find(|c| {
                let k = c.kind();
                k.ends_with("declarator")
                    || matches!(
                        k,
                        kind::IDENTIFIER
                            | kind::FIELD_IDENTIFIER
                            | kind::QUALIFIED_IDENTIFIER
                            | kind::DESTRUCTOR_NAME
                            | kind::OPERATOR_NAME
                            | kind::TEMPLATE_FUNCTION
                    )
            });
            found
        })?;
    }
    None
}

/// The last `::` segment of a C++ name, without template arguments.
pub(crate) fn simple_class_name(name: &str) -> String {
    let no_templates = match name.find('<') {
        Some(i) => name.get(..i).unwrap_or(name),
        None => name,
    };
    no_templates
        .rsplit("::")
        .next()
        .unwrap_or(no_templates)
        .trim()
        .to_string()
}

/// Whether the analysis handles this language.
pub(crate) fn supported(lang: Language) -> bool {
    matches!(lang, Language::C | Language::Cpp)
}

/// The node holding a C/C++ function's parameter list.
fn parameter_list<'t>(func: &Function<'t>) -> Option<Node<'t>> {
    let node = func.node;
    if node.kind() == kind::LAMBDA_EXPRESSION {
        return node
            .child_by_field_name(field::DECLARATOR)
            .and_then(|d| d.child_by_field_name(field::PARAMETERS));
    }
    let mut decl = node.child_by_field_name(field::DECLARATOR)?;
    for _ in 0..64 {
        if decl.kind() == kind::FUNCTION_DECLARATOR {
            return decl.child_by_field_name(field::PARAMETERS);
        }
        decl = decl.child_by_field_name(field::DECLARATOR).or_else(|| {
            let mut cursor = decl.walk();
            let found = decl
                .named_children(&mut cursor)
                .find(|c| c.kind().ends_with("declarator"));
            found
        })?;
    }
    None
}

impl Model {
    pub fn build(
        units: &[(String, &ParsedFile)],
        functions: &[Vec<Function<'_>>],
        cancel: &Cancel,
    ) -> Model {
        let mut model = Model::default();
        for (ui, (path, file)) in units.iter().enumerate() {
            model.units.push(UnitInfo {
                path: path.clone(),
                lambdas: BTreeMap::new(),
            });
            if !supported(file.language) {
                continue;
            }
            if let Some(funcs) = functions.get(ui) {
                for func in funcs {
                    if cancel.is_cancelled() {
                        model.cancelled = true;
                        return model;
                    }
                    model.add_function(ui, file, func);
                }
            }
            if !model.walk_declarations(ui, file, cancel) {
                model.cancelled = true;
                return model;
            }
        }
        model.filter = model.field_filter();
        model.classes = model.type_classes();
        model
    }

    /// The filter of a pointer of the type a `type_descriptor` names (a cast's type).
    pub fn descriptor_filter(&self, unit: usize, file: &ParsedFile, desc: Node<'_>) -> u32 {
        let Some(ty) = desc.child_by_field_name(field::TYPE) else {
            return NO_FILTER;
        };
        let shape = shape_of(unit, file, ty, desc.child_by_field_name(field::DECLARATOR));
        let has_layout = |n: &str| self.layout_key(n).is_some();
        let (ctors, base) = expand(&shape, &self.typedef_shapes, &has_layout);
        place_filter(&ctors, &base)
    }

    /// Classifies the collected declarations (typedefs expanded).
    fn type_classes(&mut self) -> TypeClasses {
        let mut out = TypeClasses::default();
        let vars = std::mem::take(&mut self.raw_vars);
        let fields = std::mem::take(&mut self.raw_fields);
        let returns = std::mem::take(&mut self.raw_returns);
        let has_layout = |n: &str| self.layout_key(n).is_some();
        let classify = |shape: &Shape| {
            let (ctors, base) = expand(shape, &self.typedef_shapes, &has_layout);
            (object_class(&ctors, &base), place_filter(&ctors, &base))
        };
        for (key, shape) in &vars {
            merge_into(&mut out.vars, key, classify(shape));
        }
        for (layout, name, shape) in &fields {
            let c = classify(shape);
            merge_into(&mut out.fields, name, c);
            merge_into(&mut out.members, &(layout.clone(), name.clone()), c);
        }
        for (name, shape) in &returns {
            let (ctors, base) = expand(shape, &self.typedef_shapes, &has_layout);
            let f = match ctors.first() {
                Some(Ctor::Function) => place_filter(ctors.get(1..).unwrap_or_default(), &base),
                _ => NO_FILTER,
            };
            merge_into(&mut out.returns, name, f);
        }
        out
    }

    fn field_filter(&self) -> FieldFilter {
        let mut filter = FieldFilter::default();
        let mut resolve = |ty: &str| -> Option<String> {
            let key = self.layout_key(ty)?;
            if !filter.types.contains_key(key) {
                let names = self.layouts.get(key)?.iter().map(|f| f.name.clone());
                filter.types.insert(key.to_string(), names.collect());
            }
            Some(key.to_string())
        };
        let vars: Vec<(VarKey, String)> = self
            .var_types
            .iter()
            .filter_map(|(v, t)| Some((v.clone(), resolve(t)?)))
            .collect();
        let fields: Vec<(String, String)> = self
            .record_fields
            .iter()
            .filter_map(|(f, t)| Some((f.clone(), resolve(t)?)))
            .collect();
        filter.vars = vars.into_iter().collect();
        filter.fields = fields.into_iter().collect();
        filter
    }

    fn add_function(&mut self, unit: usize, file: &ParsedFile, func: &Function<'_>) {
        let is_cpp = file.language == Language::Cpp;
        let class = if is_cpp {
            func.class.as_deref().map(simple_class_name)
        } else {
            None
        };
        let has_this = class.is_some() && func.kind != FunctionKind::Lambda;
        // Parameter names are read from the declarators here (function-pointer parameters
        // such as `void (*f)(int)` included); `func.params` is the fallback.
        let mut ref_params = BTreeSet::new();
        let mut params = Vec::new();
        match parameter_list(func) {
            Some(list) => {
                let mut cursor = list.walk();
                for p in list.named_children(&mut cursor) {
                    if p.kind() == kind::IDENTIFIER {
                        // K&R definition: `int f(a, b) char *a; int b; { ... }`.
                        params.push(file.node_text(p).to_string());
                        continue;
                    }
                    if !matches!(
                        p.kind(),
                        kind::PARAMETER_DECLARATION | kind::OPTIONAL_PARAMETER_DECLARATION
                    ) {
                        continue;
                    }
                    let declarator = p.child_by_field_name(field::DECLARATOR);
                    let info = declarator.and_then(|d| declarator_info(file, d));
                    if let (Some((name, _)), Some(t)) =
                        (info.as_ref(), p.child_by_field_name(field::TYPE))
                    {
                        self.raw_vars.push((
                            VarKey {
                                function: Some(func.name.as_str().into()),
                                name: name.as_str().into(),
                            },
                            shape_of(unit, file, t, declarator).adjusted_for_parameter(),
                        ));
                    }
                    if let (Some((name, _)), Some(d), Some(t)) = (
                        info.as_ref(),
                        declarator,
                        p.child_by_field_name(field::TYPE)
                            .and_then(|t| type_key(unit, file, t)),
                    ) {
                        if !declarator_has_pointer(d) {
                            self.var_types.insert(
                                VarKey {
                                    function: Some(func.name.as_str().into()),
                                    name: name.as_str().into(),
                                },
                                t,
                            );
                        }
                    }
                    match info {
                        Some((name, w)) => {
                            if w == Wrapper::Reference {
                                ref_params.insert(name.clone());
                            }
                            params.push(name);
                        }
                        None => params.push(String::new()),
                    }
                }
            }
            None => params = func.params.clone(),
        }
        if let (Some(t), Some(d)) = (
            func.node.child_by_field_name(field::TYPE),
            func.node.child_by_field_name(field::DECLARATOR),
        ) {
            self.raw_returns
                .push((func.name.clone(), shape_of(unit, file, t, Some(d))));
        }
        let def = FnDef {
            params: params.clone(),
            ref_params: ref_params.clone(),
            has_this,
        };
        let idx = self.defs.len();
        self.defs.push(def);
        self.by_name.entry(func.name.clone()).or_default().push(idx);
        self.function_units.entry(func.name.clone()).or_insert(unit);
        if func.kind == FunctionKind::Lambda {
            if let Some(u) = self.units.get_mut(unit) {
                u.lambdas.insert(func.node.start_byte(), func.name.clone());
            }
        }
        if let Some(cls) = &class {
            if func.kind == FunctionKind::Constructor && !func.simple_name.starts_with('~') {
                self.ctors_by_class
                    .entry(cls.clone())
                    .or_default()
                    .insert(func.name.clone());
            } else if func.kind == FunctionKind::Method {
                self.methods_by_simple
                    .entry(func.simple_name.clone())
                    .or_default()
                    .insert(func.name.clone());
            }
        }
        let container = func
            .container
            .clone()
            .filter(|c| self.by_name.contains_key(c));
        let scope = self.scopes.entry(func.name.clone()).or_default();
        if scope.container.is_none() {
            scope.container = container;
        }
        if scope.class.is_none() {
            scope.class = class;
        }
        for p in &params {
            if !p.is_empty() {
                let flags = VarFlags {
                    array: false,
                    reference: ref_params.contains(p),
                };
                scope.locals.entry(p.clone()).or_default().merge(flags);
            }
        }
        if has_this {
            scope.locals.entry("this".to_string()).or_default();
        }
        let Some(body) = func.body else { return };
        // Locals: every declaration in the body, excluding nested functions and lambdas.
        let mut stack = vec![body];
        let mut locals: Vec<(String, VarFlags)> = Vec::new();
        let mut local_protos: Vec<String> = Vec::new();
        let mut record_types: Vec<(String, String)> = Vec::new();
        let mut local_shapes: Vec<(String, Shape)> = Vec::new();
        while let Some(node) = stack.pop() {
            match node.kind() {
                kind::FUNCTION_DEFINITION | kind::LAMBDA_EXPRESSION if node.id() != body.id() => {
                    continue
                }
                kind::DECLARATION => {
                    let type_node = node.child_by_field_name(field::TYPE);
                    let ty = type_node.and_then(|t| type_key(unit, file, t));
                    let mut cursor = node.walk();
                    for d in node.children_by_field_name(field::DECLARATOR, &mut cursor) {
                        match declarator_info(file, d) {
                            Some((name, Wrapper::Function)) => local_protos.push(name),
                            Some((name, w)) => {
                                if let Some(t) = type_node {
                                    local_shapes
                                        .push((name.clone(), shape_of(unit, file, t, Some(d))));
                                }
                                if let Some(t) = ty.as_ref().filter(|_| !declarator_has_pointer(d))
                                {
                                    record_types.push((name.clone(), t.clone()));
                                }
                                locals.push((name, flags_of(w)))
                            }
                            None => {}
                        }
                    }
                }
                kind::FOR_RANGE_LOOP => {
                    if let Some(d) = node.child_by_field_name(field::DECLARATOR) {
                        if let Some((name, w)) = declarator_info(file, d) {
                            locals.push((name, flags_of(w)));
                        }
                    }
                }
                kind if !may_declare(kind) => continue,
                _ => {}
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        let scope = self.scopes.entry(func.name.clone()).or_default();
        for (name, flags) in locals {
            scope.locals.entry(name).or_default().merge(flags);
        }
        self.prototypes.extend(local_protos);
        for (name, shape) in local_shapes {
            self.raw_vars.push((
                VarKey {
                    function: Some(func.name.as_str().into()),
                    name: name.into(),
                },
                shape,
            ));
        }
        for (name, ty) in record_types {
            self.var_types
                .entry(VarKey {
                    function: Some(func.name.as_str().into()),
                    name: name.into(),
                })
                .or_insert(ty);
        }
    }

    /// Global declarations, prototypes and struct fields. Returns false when cancelled.
    fn walk_declarations(&mut self, unit: usize, file: &ParsedFile, cancel: &Cancel) -> bool {
        let is_cpp = file.language == Language::Cpp;
        // (node, inside a function body)
        let mut stack: Vec<(Node<'_>, bool)> = vec![(file.root(), false)];
        let mut steps = 0usize;
        while let Some((node, in_fn)) = stack.pop() {
            steps += 1;
            if steps.is_multiple_of(1024) && cancel.is_cancelled() {
                return false;
            }
            let mut child_in_fn = in_fn;
            match node.kind() {
                kind::FUNCTION_DEFINITION | kind::LAMBDA_EXPRESSION => child_in_fn = true,
                kind::DECLARATION if !in_fn => {
                    let ty = node
                        .child_by_field_name(field::TYPE)
                        .and_then(|t| type_key(unit, file, t));
                    let mut cursor = node.walk();
                    for d in node.children_by_field_name(field::DECLARATOR, &mut cursor) {
                        match declarator_info(file, d) {
                            Some((name, Wrapper::Function)) => {
                                self.prototypes.insert(name);
                            }
                            Some((name, w)) => {
                                let name = if is_cpp {
                                    simple_class_name(&name)
                                } else {
                                    name
                                };
                                if let Some(t) = node.child_by_field_name(field::TYPE) {
                                    self.raw_vars.push((
                                        VarKey {
                                            function: None,
                                            name: name.as_str().into(),
                                        },
                                        shape_of(unit, file, t, Some(d)),
                                    ));
                                }
                                if let Some(t) = ty.as_ref().filter(|_| !declarator_has_pointer(d))
                                {
                                    self.var_types
                                        .entry(VarKey {
                                            function: None,
                                            name: name.as_str().into(),
                                        })
                                        .or_insert_with(|| t.clone());
                                }
                                self.globals
                                    .entry(name.clone())
                                    .or_default()
                                    .merge(flags_of(w));
                                self.global_units.entry(name).or_default().insert(unit);
                            }
                            None => {}
                        }
                    }
                }
                kind::FIELD_DECLARATION => self.add_field(file, node),
                kind::STRUCT_SPECIFIER | kind::CLASS_SPECIFIER | kind::UNION_SPECIFIER => {
                    self.add_layout(unit, file, node)
                }
                kind::TYPE_DEFINITION => self.add_typedef(unit, file, node),
                kind::PREPROC_DEF => self.add_type_macro(file, node),
                kind if !may_declare(kind) => continue,
                _ => {}
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev().map(|c| (c, child_in_fn)));
        }
        true
    }

    fn add_field(&mut self, file: &ParsedFile, node: Node<'_>) {
        let class = node
            .parent()
            .filter(|p| p.kind() == kind::FIELD_DECLARATION_LIST)
            .and_then(|p| p.parent())
            .and_then(|p| p.child_by_field_name(field::NAME))
            .map(|n| simple_class_name(file.node_text(n)));
        let mut cursor = node.walk();
        for d in node.children_by_field_name(field::DECLARATOR, &mut cursor) {
            let Some((name, w)) = declarator_info(file, d) else {
                continue;
            };
            if w == Wrapper::Function {
                continue;
            }
            let array = w == Wrapper::Array;
            let entry = self
                .field_kinds
                .entry(name.clone())
                .or_insert((false, false));
            if array {
                entry.0 = true;
            } else {
                entry.1 = true;
            }
            if file.language == Language::Cpp {
                if let Some(cls) = &class {
                    let fields = self.class_fields.entry(cls.clone()).or_default();
                    let slot = fields.entry(name).or_insert(false);
                    *slot |= array;
                }
            }
        }
    }

    /// Records the members of a struct/class/union body in declaration order.
    fn add_layout(&mut self, unit: usize, file: &ParsedFile, node: Node<'_>) {
        let Some(body) = node.child_by_field_name(field::BODY) else {
            return;
        };
        let is_union = node.kind() == kind::UNION_SPECIFIER;
        let mut fields = Vec::new();
        let mut member_shapes: Vec<(String, Shape)> = Vec::new();
        let mut cursor = body.walk();
        for member in body.named_children(&mut cursor) {
            if member.kind() != kind::FIELD_DECLARATION {
                continue;
            }
            let ty = member
                .child_by_field_name(field::TYPE)
                .and_then(|t| type_key(unit, file, t));
            let mut dc = member.walk();
            let declarators: Vec<Node<'_>> = member
                .children_by_field_name(field::DECLARATOR, &mut dc)
                .collect();
            if declarators.is_empty() {
                // An anonymous struct/union member: its fields are the parent's (by name);
                // a union's overlap.
                if let Some(t) = member.child_by_field_name(field::TYPE) {
                    if t.kind() == kind::UNION_SPECIFIER {
                        self.collect_union_names(file, t);
                    }
                }
            }
            for d in declarators {
                let Some((name, w)) = declarator_info(file, d) else {
                    continue;
                };
                if w == Wrapper::Function {
                    continue;
                }
                if is_union {
                    self.union_fields.insert(name.clone());
                }
                if let Some(t) = member.child_by_field_name(field::TYPE) {
                    member_shapes.push((name.clone(), shape_of(unit, file, t, Some(d))));
                }
                let by_value =
                    matches!(w, Wrapper::Plain | Wrapper::Array) && !declarator_has_pointer(d);
                if let Some(t) = ty.as_ref().filter(|_| by_value) {
                    self.record_fields
                        .entry(name.clone())
                        .or_insert_with(|| t.clone());
                }
                fields.push(FieldInfo {
                    name,
                    array: w == Wrapper::Array,
                    layout: ty.clone().filter(|_| by_value),
                });
            }
        }
        let key = layout_key(unit, file, node);
        for (name, shape) in member_shapes {
            self.raw_fields.push((key.clone(), name, shape));
        }
        self.layouts.entry(key).or_insert(fields);
    }

    /// Every member name inside an anonymous union (nested bodies included).
    fn collect_union_names(&mut self, file: &ParsedFile, union: Node<'_>) {
        let mut stack = vec![union];
        while let Some(n) = stack.pop() {
            if n.kind() == kind::FIELD_DECLARATION {
                let mut dc = n.walk();
                for d in n.children_by_field_name(field::DECLARATOR, &mut dc) {
                    if let Some((name, _)) = declarator_info(file, d) {
                        self.union_fields.insert(name);
                    }
                }
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
    }

    /// `#define NAME unsigned int` (a macro standing for a scalar type, as portable code
    /// defines its integer types) is a scalar typedef.
    fn add_type_macro(&mut self, file: &ParsedFile, node: Node<'_>) {
        let (Some(name), Some(value)) = (
            node.child_by_field_name(field::NAME),
            node.child_by_field_name(field::VALUE),
        ) else {
            return;
        };
        let words: Vec<&str> = file.node_text(value).split_whitespace().collect();
        let scalar = !words.is_empty()
            && words.iter().all(|w| {
                matches!(
                    *w,
                    "unsigned"
                        | "signed"
                        | "int"
                        | "char"
                        | "short"
                        | "long"
                        | "float"
                        | "double"
                        | "_Bool"
                        | "bool"
                        | "__int64"
                        | "__int128"
                )
            });
        if scalar {
            self.typedef_shapes
                .entry(file.node_text(name).trim().to_string())
                .or_insert(Shape {
                    ctors: Vec::new(),
                    base: super::types::Base::Scalar,
                });
        }
    }

    /// `typedef struct X Y;`, `typedef struct { .. } Y;`, `typedef X Y;` (not pointer types).
    fn add_typedef(&mut self, unit: usize, file: &ParsedFile, node: Node<'_>) {
        if let Some(t) = node.child_by_field_name(field::TYPE) {
            let mut cursor = node.walk();
            for d in node.children_by_field_name(field::DECLARATOR, &mut cursor) {
                if let Some((name, _)) = declarator_info(file, d) {
                    let shape = shape_of(unit, file, t, Some(d));
                    if shape.ctors.is_empty()
                        && shape.base == super::types::Base::Named(name.clone())
                    {
                        continue;
                    }
                    self.typedef_shapes.entry(name).or_insert(shape);
                }
            }
        }
        let Some(ty) = node
            .child_by_field_name(field::TYPE)
            .and_then(|t| type_key(unit, file, t))
        else {
            return;
        };
        let mut cursor = node.walk();
        for d in node.children_by_field_name(field::DECLARATOR, &mut cursor) {
            if let Some((name, Wrapper::Plain)) = declarator_info(file, d) {
                if name != ty {
                    self.typedefs.entry(name).or_insert_with(|| ty.clone());
                }
            }
        }
    }

    /// True when the object is a struct by value (a variable of struct type, or a field
    /// declared with a struct type): copies of it copy its fields.
    pub fn is_record(&self, obj: &ObjKey) -> bool {
        match obj {
            ObjKey::Var(v) => self
                .var_types
                .get(v)
                .is_some_and(|t| self.layout(t).is_some()),
            ObjKey::Field(_, f) => self.nests(f),
            ObjKey::Func(_) | ObjKey::Heap(_) | ObjKey::Hub(_) => false,
        }
    }

    /// True when a field name is declared with a struct type by value (it has fields).
    pub fn nests(&self, field: &str) -> bool {
        self.record_fields
            .get(field)
            .is_some_and(|t| self.layout(t).is_some())
    }

    /// The fields of a struct type given by raw name (typedefs followed).
    pub fn layout(&self, name: &str) -> Option<&[FieldInfo]> {
        self.layout_key(name)
            .and_then(|k| self.layouts.get(k))
            .map(Vec::as_slice)
    }

    /// The layout key a raw type name resolves to (typedefs followed, at most 32 steps).
    fn layout_key<'s>(&'s self, name: &'s str) -> Option<&'s str> {
        let mut cur = name;
        for _ in 0..32 {
            if self.layouts.contains_key(cur) {
                return Some(cur);
            }
            cur = self.typedefs.get(cur)?;
        }
        None
    }

    /// Definitions of a qualified function name.
    pub fn defs_of(&self, name: &str) -> impl Iterator<Item = &FnDef> {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|&i| self.defs.get(i))
    }

    pub fn is_defined(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Resolves a (possibly unqualified) function name used inside `func` to defined functions:
    /// the enclosing C++ scopes of `func` from the innermost out, then the name as written.
    pub fn resolve_function(&self, name: &str, func: Option<&str>) -> Vec<String> {
        // `::g` names the global scope explicitly.
        let global_only = name.starts_with("::");
        let name = name.trim_start_matches("::");
        if let Some(f) = func.filter(|_| !global_only) {
            let segments: Vec<&str> = f.split("::").collect();
            for keep in (1..segments.len()).rev() {
                let prefix = segments.get(..keep).unwrap_or_default().join("::");
                let candidate = format!("{prefix}::{name}");
                if self.is_defined(&candidate) {
                    return vec![candidate];
                }
            }
        }
        if self.is_defined(name) {
            return vec![name.to_string()];
        }
        Vec::new()
    }
}

/// The layout key of a struct/class/union specifier: its tag, or an anonymous key.
fn layout_key(unit: usize, file: &ParsedFile, node: Node<'_>) -> String {
    match node.child_by_field_name(field::NAME) {
        Some(n) => simple_class_name(file.node_text(n)),
        None => format!("{{anon}}{unit}:{}", node.start_byte()),
    }
}

/// The raw struct type name of a type node: a struct/class/union specifier (tag or
/// anonymous key) or a type name (a typedef or C++ class name); `None` for primitive types.
pub(crate) fn type_key(unit: usize, file: &ParsedFile, ty: Node<'_>) -> Option<String> {
    match ty.kind() {
        kind::STRUCT_SPECIFIER | kind::CLASS_SPECIFIER | kind::UNION_SPECIFIER => {
            Some(layout_key(unit, file, ty))
        }
        kind::TYPE_IDENTIFIER | kind::QUALIFIED_IDENTIFIER | kind::TEMPLATE_TYPE => {
            Some(simple_class_name(file.node_text(ty)))
        }
        _ => None,
    }
}

/// True when a declarator chain has a pointer, function or reference part anywhere (`*a[2]`
/// holds pointers, not structs).
pub(crate) fn declarator_has_pointer(node: Node<'_>) -> bool {
    ctors_of(node).iter().any(|c| *c != Ctor::Array)
}

/// False for expression nodes, which cannot contain declarations (GNU statement
/// expressions aside, reached through parentheses): walks need not descend into them, which
/// keeps a multi-megabyte expression cheap.
fn may_declare(kind: &str) -> bool {
    kind == kind::PARENTHESIZED_EXPRESSION
        || !(is_expression_kind(kind)
            || matches!(kind, kind::INITIALIZER_LIST | kind::ARGUMENT_LIST))
}

fn flags_of(w: Wrapper) -> VarFlags {
    VarFlags {
        array: w == Wrapper::Array,
        reference: w == Wrapper::Reference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declarator of the first declaration in `src`.
    fn info(lang: Language, src: &str) -> Option<(String, Wrapper)> {
        let file = ParsedFile::parse(lang, src);
        let decl = file.root().named_child(0)?;
        let d = decl.child_by_field_name(field::DECLARATOR)?;
        declarator_info(&file, d)
    }

    #[test]
    fn the_declarator_nearest_the_name_decides_what_it_declares() {
        let c = |src| info(Language::C, src);
        assert_eq!(c("int *a[2];"), Some(("a".into(), Wrapper::Array)));
        assert_eq!(c("int (*p)[2];"), Some(("p".into(), Wrapper::Pointer)));
        assert_eq!(c("int *f(int);"), Some(("f".into(), Wrapper::Function)));
        assert_eq!(c("int (*fp)(int);"), Some(("fp".into(), Wrapper::Pointer)));
        assert_eq!(c("int x = 1;"), Some(("x".into(), Wrapper::Plain)));
        assert_eq!(
            info(Language::Cpp, "int *&r = p;"),
            Some(("r".into(), Wrapper::Reference))
        );
        assert_eq!(
            info(Language::Cpp, "int &r = x;"),
            Some(("r".into(), Wrapper::Reference))
        );
    }

    #[test]
    fn class_names_drop_scopes_and_template_arguments() {
        assert_eq!(simple_class_name("ns::Box<int>"), "Box");
        assert_eq!(simple_class_name("Box"), "Box");
    }

    #[test]
    fn function_names_resolve_innermost_scope_first() {
        let src = "int *g(int *p) { return p; }\nnamespace ns { int *g(int *p) { return p; } int *f() { return g(0); } }\n";
        let file = ParsedFile::parse(Language::Cpp, src);
        let funcs = vec![crate::syntax::functions::collect_functions(&file)];
        let model = Model::build(&[("a.cpp".to_string(), &file)], &funcs, &Cancel::never());
        assert_eq!(model.resolve_function("g", Some("ns::f")), vec!["ns::g"]);
        assert_eq!(model.resolve_function("g", Some("main")), vec!["g"]);
        assert_eq!(model.resolve_function("::g", Some("ns::f")), vec!["g"]);
        assert!(model.resolve_function("h", Some("ns::f")).is_empty());
    }
}
