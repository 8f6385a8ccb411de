//! Normalisation proof: two functions of one language are equivalent when their canonical forms
//! are identical. The canonical form is the syntax tree (comments dropped, the function's own
//! name replaced by `$fn`) after these semantics-preserving rewrites:
//!
//! 1. parentheses dropped (the tree keeps the grouping);
//! 2. dead stores removed: a local (or parameter) that is never read is unobservable, so its
//!    declarations and the statements that only write it are removed when the written value is
//!    pure (literals; in Java/C/C++ also names and side-effect-free integer arithmetic; Python
//!    only literals, since `+=` may mutate a list in place);
//! 3. alpha-renaming: parameters and locals become `$0`, `$1`, ... in order of first occurrence.
//!    Java/C/C++ locals are renamed only when every use lies inside the scope of a declaration
//!    (otherwise the name may denote a field or global; `extern` in a block names a global);
//!    Python renames function-level locals except `global`/`nonlocal` names, and keeps its
//!    parameters' names (a caller may pass them by keyword); attribute, field and method names
//!    are never renamed;
//! 4. integer constant folding of `+ - *` (and `/ %` on non-negative operands) on literals,
//!    within the 32-bit range for Java/C/C++;
//! 5. `i++`, `++i`, `i += 1` and `i = i + 1` (and the decrements) are one form when the value is
//!    discarded (a statement or a for-update) and `i` is a declared integer;
//! 6. integer-only identities: `x + 0`, `0 + x`, `x * 1`, `1 * x` become `x`, and the operands of
//!    `+` and `*` are put in a canonical order, only when both operands are integer-typed and
//!    side-effect free (integer literals, names declared `int`/`long` (Python: annotated `int`)
//!    and arithmetic over them). Never on strings, floats, lists or user types;
//! 7. dead post-updates (C, Java): `x++`/`x--` whose new value nothing reads becomes `x`
//!    (the value of a postfix update is the old one). `x` is a parameter or automatic local of a
//!    built-in scalar or pointer type declared once (not `static`, `volatile` or an array; its
//!    address never taken), named once in its statement, and the statement is a `return` (no
//!    `finally` or `setjmp` in the function) or lies outside every loop of a function without
//!    `goto` or nested functions, with no later mention of `x`. Not C++: a reference bound to
//!    `x` (`int &r = x;`, a constructor taking `int&` whose destructor reads it) sees the new
//!    value with no `&` in sight. A signed overflow or a pointer stepped past its object by the
//!    dropped update is undefined behaviour that compilers remove the same way; it is not
//!    counted as a difference;
//! 8. zero comparisons without a sign: for an unsigned local (Java: `char`) and, in C, a
//!    pointer (addresses compare unsigned), `x > 0` is `x != 0` and `x <= 0` is `x == 0`.
//!
//! A mutant of a file that does not parse whole (old C, unknown macros) is proved through its
//! one changed function when the rest of the text is identical ([`prove_files_equivalent`]).
//!
//! Every step is sound on its own, so equal canonical forms prove equivalence; different forms
//! prove nothing. Input deeper than [`MAX_DEPTH`] or larger than [`MAX_NODES`] is not normalised.

use super::hazards::{self, Hazards, Opacity};
use super::types::{clean_type, parse_type, Ty};
use crate::syntax::functions::Function;
use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// Deeper trees are not normalised (no proof, never a stack overflow).
pub const MAX_DEPTH: usize = 256;
/// Larger functions are not normalised.
pub const MAX_NODES: usize = 200_000;

#[derive(Debug, Clone, PartialEq)]
struct T {
    kind: String,
    field: Option<&'static str>,
    /// Leaf text (`None` for inner nodes).
    text: Option<String>,
    kids: Vec<T>,
    start: usize,
}

impl T {
    fn leaf(kind: &str, text: String) -> T {
        T {
            kind: kind.to_string(),
            field: None,
            text: Some(text),
            kids: Vec::new(),
            start: 0,
        }
    }
    fn field(&self, f: &str) -> Option<&T> {
        self.kids.iter().find(|k| k.field == Some(f))
    }
    fn named_kids(&self) -> impl Iterator<Item = &T> {
        self.kids.iter().filter(|k| k.is_named())
    }
    fn is_named(&self) -> bool {
        // Anonymous tokens are stored with their text as kind.
        self.text.as_deref() != Some(self.kind.as_str())
    }
    fn print(&self, out: &mut String) {
        if let Some(t) = &self.text {
            out.push_str(t);
            out.push(' ');
            return;
        }
        out.push('(');
        out.push_str(&self.kind);
        out.push(' ');
        for k in &self.kids {
            k.print(out);
        }
        out.push_str(") ");
    }
    fn printed(&self) -> String {
        let mut s = String::new();
        self.print(&mut s);
        s
    }
}

/// Why no canonical form was produced.
pub type NormError = String;

/// The canonical form of a function (see the module docs).
pub fn canonical(
    file: &ParsedFile,
    func: &Function<'_>,
    cancel: &Cancel,
) -> Result<String, NormError> {
    let hz = checked(file)?;
    Ok(canonical_tree(file, func, &hz, cancel)?.printed())
}

/// The file's hazards ([`hazards::scan`]), or why it declines any proof.
fn checked(file: &ParsedFile) -> Result<Hazards, NormError> {
    let hz = hazards::scan(file);
    match &hz.decline {
        Some(why) => Err(format!("no proof: {why}")),
        None => Ok(hz),
    }
}

/// Both files' hazards joined, or why either declines any proof. `same_file`: the two texts
/// are versions of one file (a program and its mutant), so `__FILE__` names the same file and
/// `__LINE__` may stay where it was; otherwise both decline the proof.
fn checked_pair(a: &ParsedFile, b: &ParsedFile, same_file: bool) -> Result<Hazards, NormError> {
    let hz = checked(a)?.join(&checked(b)?);
    if let Some(why) = &hz.decline {
        return Err(format!("no proof: {why}"));
    }
    if !same_file {
        if let Some((w, _, _)) = hz.positional.first() {
            return Err(format!(
                "no proof: the file uses `{w}`, which differs between two files"
            ));
        }
    }
    Ok(hz)
}

fn canonical_tree(
    file: &ParsedFile,
    func: &Function<'_>,
    hz: &Hazards,
    cancel: &Cancel,
) -> Result<T, NormError> {
    let lang = file.language;
    if !super::supports(lang) {
        return Err("unsupported language".into());
    }
    let name_node = function_name_node(lang, func.node);
    let mut tree = build(file, func.node, name_node, &BTreeMap::new(), cancel)?;
    let opacity = hz.in_function(file.node_text(func.node));
    if hz.stringizes_in(file.node_text(func.node)) {
        return Err(
            "no proof: the function passes code to a macro of the file that stringizes it \
                    (`#`), so the code's spelling, spaces and comments included, is a value"
                .into(),
        );
    }
    if opacity == Opacity::Strict {
        // A macro may read names, take tokens or need parentheses where the text does not
        // show it: only comments and layout are set aside (and the function's own name).
        let ctx = Ctx {
            lang,
            self_name: func.simple_name.clone(),
            locals: BTreeSet::new(),
            ints: BTreeSet::new(),
            plain: BTreeSet::new(),
        };
        rename(&mut tree, &ctx, &BTreeMap::new(), None);
        return Ok(tree);
    }
    let header = opacity == Opacity::Header;
    if !header && !hz.keep_parens {
        drop_parens(&mut tree);
    }
    let info = Scopes::collect(file, func, lang, hz);
    let locals = info.renamable();
    let int_names: BTreeSet<String> = info
        .int_typed
        .iter()
        .filter(|n| locals.contains(*n) || info.py_params.contains(*n))
        .cloned()
        .collect();
    let ctx = Ctx {
        lang,
        self_name: func.simple_name.clone(),
        locals: locals.clone(),
        ints: int_names,
        plain: info.plain.clone(),
    };
    if !header {
        remove_dead_stores(&mut tree, &ctx);
    }
    let facts = local_facts(file, func, lang, hz);
    drop_dead_post_updates(&mut tree, &ctx, &facts, hz, header);
    sign_free_comparisons(&mut tree, &ctx, &facts, header, false);
    if header {
        // Names, parentheses and constants stay as written (a header's macro may see them).
        rename(&mut tree, &ctx, &BTreeMap::new(), None);
        return Ok(tree);
    }
    let mut map = BTreeMap::new();
    assign_names(&tree, &ctx, &mut map);
    rename(&mut tree, &ctx, &map, None);
    let renamed_ints: BTreeSet<String> = ctx
        .ints
        .iter()
        .map(|n| map.get(n).cloned().unwrap_or_else(|| n.clone()))
        .collect();
    let ctx2 = Ctx {
        ints: renamed_ints,
        ..ctx
    };
    simplify(&mut tree, &ctx2, false);
    Ok(tree)
}

/// Whether two functions of the same language have identical canonical forms.
pub fn prove_equivalent(
    a: (&ParsedFile, &Function<'_>),
    b: (&ParsedFile, &Function<'_>),
    cancel: &Cancel,
) -> Result<bool, NormError> {
    if a.0.language != b.0.language {
        return Err("different languages".into());
    }
    if a.0.has_errors() || b.0.has_errors() {
        return Err("syntax errors".into());
    }
    let hz = checked_pair(a.0, b.0, false)?;
    prove_with(a, b, &hz, cancel)
}

/// Equal canonical forms of two functions under both files' hazards.
fn prove_with(
    a: (&ParsedFile, &Function<'_>),
    b: (&ParsedFile, &Function<'_>),
    hz: &Hazards,
    cancel: &Cancel,
) -> Result<bool, NormError> {
    let ca = canonical_tree(a.0, a.1, hz, cancel)?.printed();
    let cb = canonical_tree(b.0, b.1, hz, cancel)?.printed();
    Ok(ca == cb)
}

fn function_name_node(lang: Language, node: Node<'_>) -> Option<(usize, usize)> {
    match lang {
        Language::Python | Language::Java => node
            .child_by_field_name(field::NAME)
            .map(|n| (n.start_byte(), n.end_byte())),
        _ => {
            let mut d = node.child_by_field_name(field::DECLARATOR);
            for _ in 0..64 {
                let n = d?;
                if matches!(
                    n.kind(),
                    kind::IDENTIFIER
                        | kind::FIELD_IDENTIFIER
                        | kind::QUALIFIED_IDENTIFIER
                        | kind::DESTRUCTOR_NAME
                        | kind::OPERATOR_NAME
                ) {
                    return Some((n.start_byte(), n.end_byte()));
                }
                d = n.child_by_field_name(field::DECLARATOR);
            }
            None
        }
    }
}

fn is_leaf_kind(kind: &str) -> bool {
    kind.contains(kind::STRING) || kind == kind::CHAR_LITERAL || kind == kind::CHARACTER_LITERAL
}

/// A string with interpolated expressions (Python f-strings, also inside a concatenation): its
/// names are variables like any other, so it is built as a tree, not kept as text.
fn interpolates(node: Node<'_>) -> bool {
    let mut stack = vec![(node, 0usize)];
    while let Some((n, d)) = stack.pop() {
        if n.kind() == kind::INTERPOLATION {
            return true;
        }
        if d < 3 {
            let mut c = n.walk();
            for k in n.children(&mut c) {
                stack.push((k, d + 1));
            }
        }
    }
    false
}

/// The kind of a piece of text no child of the grammar's covers ([`uncovered`]).
const GAP: &str = "$text";

/// The text of `node` that none of its children covers, where it has meaning: inside a string
/// that interpolates (the literal text of an f-string's format spec, `{x:4}`, and of a string
/// part with escapes, is no child of the grammar's), any gap; elsewhere, a gap that is not
/// whitespace. Each piece with the number of children before it and its first byte.
fn uncovered(
    file: &ParsedFile,
    node: Node<'_>,
    kids: &[(Node<'_>, Option<&'static str>)],
) -> Vec<(usize, String, usize)> {
    let stringish = is_leaf_kind(node.kind())
        || matches!(node.kind(), kind::FORMAT_SPECIFIER | kind::INTERPOLATION);
    let text = file.node_text(node);
    let base = node.start_byte();
    let mut out = Vec::new();
    let mut at = base;
    let piece = |from: usize, to: usize, count: usize, out: &mut Vec<_>| {
        if to > from {
            if let Some(gap) = text.get(from - base..to - base) {
                if stringish || !gap.trim().is_empty() {
                    out.push((count, gap.to_string(), from));
                }
            }
        }
    };
    for (n, (k, _)) in kids.iter().enumerate() {
        piece(at, k.start_byte().max(at), n, &mut out);
        at = at.max(k.end_byte());
    }
    piece(at, node.end_byte().max(at), kids.len(), &mut out);
    out
}

/// Builds the owned tree iteratively, with depth and size limits.
fn build(
    file: &ParsedFile,
    root: Node<'_>,
    name: Option<(usize, usize)>,
    cut: &BTreeMap<(usize, usize), String>,
    cancel: &Cancel,
) -> Result<T, NormError> {
    // Arena in preorder: (kind, field, text, parent, start).
    struct A {
        kind: String,
        field: Option<&'static str>,
        text: Option<String>,
        parent: Option<usize>,
        start: usize,
    }
    let mut arena: Vec<A> = Vec::new();
    let mut stack: Vec<(Node<'_>, Option<usize>, Option<&'static str>, usize)> =
        vec![(root, None, None, 0)];
    while let Some((node, parent, field, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(format!("nesting deeper than {MAX_DEPTH}"));
        }
        if arena.len() > MAX_NODES {
            return Err("function too large".into());
        }
        if arena.len().is_multiple_of(4096) && cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        if node.kind().contains(kind::COMMENT) || node.kind() == kind::PACKAGE_DECLARATION {
            continue;
        }
        let range = (node.start_byte(), node.end_byte());
        if let Some(key) = cut.get(&range).filter(|_| node.id() != root.id()) {
            // A function compared on its own: a marker keeps its place in the context.
            arena.push(A {
                kind: "$function".into(),
                field,
                text: Some(key.clone()),
                parent,
                start: node.start_byte(),
            });
            continue;
        }
        let leaf = node.child_count() == 0
            || (is_leaf_kind(node.kind()) && !interpolates(node))
            || Some(range) == name;
        let text = if Some(range) == name {
            Some("$fn".to_string())
        } else if leaf {
            Some(file.node_text(node).to_string())
        } else {
            None
        };
        let kind = if node.is_named() {
            node.kind().to_string()
        } else {
            // Anonymous token: kind equals its text (see `T::is_named`).
            file.node_text(node).to_string()
        };
        let kind = if Some(range) == name {
            "$fn".to_string()
        } else {
            kind
        };
        let idx = arena.len();
        arena.push(A {
            kind,
            field,
            text,
            parent,
            start: node.start_byte(),
        });
        if !leaf {
            let mut kids = Vec::new();
            let mut c = node.walk();
            if c.goto_first_child() {
                loop {
                    kids.push((c.node(), c.field_name()));
                    if !c.goto_next_sibling() {
                        break;
                    }
                }
            }
            for (at, gap, start) in uncovered(file, node, &kids) {
                arena.push(A {
                    kind: GAP.into(),
                    field: None,
                    text: Some(format!("@{at}:{gap:?}")),
                    parent: Some(idx),
                    start,
                });
            }
            for (k, f) in kids.into_iter().rev() {
                stack.push((k, Some(idx), f, depth + 1));
            }
        }
    }
    // Assemble bottom-up: children have larger preorder indices than their parents.
    let mut built: Vec<Option<T>> = arena
        .iter()
        .map(|a| {
            Some(T {
                kind: a.kind.clone(),
                field: a.field,
                text: a.text.clone(),
                kids: Vec::new(),
                start: a.start,
            })
        })
        .collect();
    // A node's children arrive last first; each node is complete (and put in order) before it
    // moves into its parent.
    for i in (1..arena.len()).rev() {
        let Some(p) = arena[i].parent else { continue };
        if let Some(mut node) = built[i].take() {
            node.kids.reverse();
            if let Some(Some(parent)) = built.get_mut(p) {
                parent.kids.push(node);
            }
        }
    }
    for t in built.iter_mut().flatten() {
        t.kids.reverse();
    }
    built
        .into_iter()
        .next()
        .flatten()
        .ok_or_else(|| "empty function".to_string())
}

fn drop_parens(t: &mut T) {
    for k in &mut t.kids {
        drop_parens(k);
    }
    for k in &mut t.kids {
        if k.kind == kind::PARENTHESIZED_EXPRESSION {
            let named: Vec<&T> = k.named_kids().collect();
            if named.len() == 1 {
                let mut inner = named[0].clone();
                inner.field = k.field;
                *k = inner;
            }
        }
    }
}

/// Declarations and uses of names, for the renaming and typing rules.
struct Scopes {
    /// name -> declarations (identifier start, scope end).
    decls: BTreeMap<String, Vec<(usize, usize)>>,
    /// name -> starts of all non-member occurrences.
    uses: BTreeMap<String, Vec<usize>>,
    int_typed: BTreeSet<String>,
    not_int: BTreeSet<String>,
    /// Names whose writes run no user code ([`plain_type`]).
    plain: BTreeSet<String>,
    globals: BTreeSet<String>,
    /// Python parameters: kept as written (not renamed, not locals), but their annotated
    /// types hold in the whole body.
    py_params: BTreeSet<String>,
    python: bool,
}

impl Scopes {
    fn collect(file: &ParsedFile, func: &Function<'_>, lang: Language, hz: &Hazards) -> Scopes {
        let mut s = Scopes {
            decls: BTreeMap::new(),
            uses: BTreeMap::new(),
            int_typed: BTreeSet::new(),
            not_int: BTreeSet::new(),
            plain: BTreeSet::new(),
            globals: BTreeSet::new(),
            py_params: BTreeSet::new(),
            python: lang == Language::Python,
        };
        let fn_end = func.node.end_byte();
        let mut stack: Vec<(Node<'_>, usize, bool)> = vec![(func.node, 0, false)];
        while let Some((node, depth, nested)) = stack.pop() {
            if depth > MAX_DEPTH {
                continue;
            }
            let kind = node.kind();
            let text = |n: Node<'_>| file.node_text(n).to_string();
            let declare = |s: &mut Scopes, id: Node<'_>, scope_end: usize, ty: Option<String>| {
                let name = text(id);
                s.decls
                    .entry(name.clone())
                    .or_default()
                    .push((id.start_byte(), scope_end));
                let int = ty
                    .as_deref()
                    .filter(|t| !hz.shadows(t))
                    .map(|t| {
                        // A Java `Integer` or `Long` may be null and unboxes in arithmetic: no
                        // integer of these rules.
                        let boxed = lang == Language::Java
                            && t.trim().starts_with(|c: char| c.is_uppercase());
                        (!boxed
                            && matches!(parse_type(lang, t), Ty::Int { bits, .. } if bits >= 32))
                            || (lang == Language::Python && clean_type(t) == "int")
                    })
                    .unwrap_or(false);
                if plain_type(lang, ty.as_deref(), hz) {
                    s.plain.insert(name.clone());
                }
                if int {
                    s.int_typed.insert(name);
                } else {
                    s.not_int.insert(name);
                }
            };
            match lang {
                Language::Python => {
                    let nested_scope = matches!(
                        kind,
                        kind::LAMBDA
                            | kind::LIST_COMPREHENSION
                            | kind::SET_COMPREHENSION
                            | kind::DICTIONARY_COMPREHENSION
                            | kind::GENERATOR_EXPRESSION
                            | kind::CLASS_DEFINITION
                    ) || (kind == kind::FUNCTION_DEFINITION
                        && node.id() != func.node.id());
                    if kind == kind::FUNCTION_DEFINITION && node.id() != func.node.id() && !nested {
                        if let Some(n) = node.child_by_field_name(field::NAME) {
                            declare(&mut s, n, fn_end, None);
                        }
                    }
                    if !nested {
                        match kind {
                            kind::PARAMETERS
                                if node.parent().map(|p| p.id()) == Some(func.node.id()) =>
                            {
                                let mut c = node.walk();
                                for p in node.named_children(&mut c) {
                                    let id = match p.kind() {
                                        kind::IDENTIFIER => Some(p),
                                        kind::TYPED_PARAMETER => {
                                            let mut c2 = p.walk();
                                            let id = p
                                                .named_children(&mut c2)
                                                .find(|n| n.kind() == kind::IDENTIFIER);
                                            id
                                        }
                                        kind::DEFAULT_PARAMETER | kind::TYPED_DEFAULT_PARAMETER => {
                                            p.child_by_field_name(field::NAME)
                                        }
                                        _ => None,
                                    };
                                    // A parameter's name is part of the interface: a caller
                                    // may pass it by keyword (`f(a=5, b=1)`), so it is neither
                                    // renamed nor treated as a local.
                                    if let Some(id) = id {
                                        s.globals.insert(text(id));
                                        s.py_params.insert(text(id));
                                        let ty = p.child_by_field_name(field::TYPE).map(text);
                                        declare(&mut s, id, fn_end, ty);
                                    }
                                }
                            }
                            kind::ASSIGNMENT
                            | kind::AUGMENTED_ASSIGNMENT
                            | kind::FOR_STATEMENT
                            | kind::FOR_IN_CLAUSE => {
                                if let Some(left) = node.child_by_field_name(field::LEFT) {
                                    for id in target_identifiers(left) {
                                        declare(&mut s, id, fn_end, None);
                                    }
                                }
                            }
                            kind::AS_PATTERN_TARGET | kind::NAMED_EXPRESSION => {
                                let id = if kind == kind::NAMED_EXPRESSION {
                                    node.child_by_field_name(field::NAME)
                                } else {
                                    Some(node)
                                };
                                if let Some(id) = id {
                                    for id in target_identifiers(id) {
                                        declare(&mut s, id, fn_end, None);
                                    }
                                }
                            }
                            kind::EXCEPT_CLAUSE => {
                                // `except E as name`
                                let mut c = node.walk();
                                let kids: Vec<Node<'_>> = node.children(&mut c).collect();
                                for w in kids.windows(2) {
                                    if w[0].kind() == "as" && w[1].kind() == kind::IDENTIFIER {
                                        declare(&mut s, w[1], fn_end, None);
                                    }
                                }
                            }
                            kind::IMPORT_STATEMENT
                            | kind::IMPORT_FROM_STATEMENT
                            | kind::ALIASED_IMPORT => {
                                s.globals.insert(text(node));
                                // Imports bind names; they are left unrenamed (recorded as globals).
                                let mut c = node.walk();
                                for k in node.named_children(&mut c) {
                                    for id in target_identifiers(k) {
                                        s.globals.insert(text(id));
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    if matches!(kind, kind::GLOBAL_STATEMENT | kind::NONLOCAL_STATEMENT) {
                        let mut c = node.walk();
                        for k in node.named_children(&mut c) {
                            s.globals.insert(text(k));
                        }
                    }
                    if kind == kind::IDENTIFIER && !is_member_position(lang, node) {
                        s.uses
                            .entry(text(node))
                            .or_default()
                            .push(node.start_byte());
                    }
                    let mut c = node.walk();
                    let kids: Vec<Node<'_>> = node.children(&mut c).collect();
                    for k in kids.into_iter().rev() {
                        stack.push((k, depth + 1, nested || nested_scope));
                    }
                }
                _ => {
                    match kind {
                        kind::FORMAL_PARAMETER
                        | kind::PARAMETER_DECLARATION
                        | kind::OPTIONAL_PARAMETER_DECLARATION => {
                            let in_sig = node
                                .parent()
                                .and_then(|p| p.parent())
                                .map(|g| {
                                    g.id() == func.node.id()
                                        || g.parent().map(|x| x.id()) == Some(func.node.id())
                                        || g.kind() == kind::FUNCTION_DECLARATOR
                                })
                                .unwrap_or(false);
                            let id = node.child_by_field_name(field::NAME).or_else(|| {
                                node.child_by_field_name(field::DECLARATOR)
                                    .and_then(innermost_id)
                            });
                            if let Some(id) = id {
                                let plain = node.child_by_field_name(field::DIMENSIONS).is_none()
                                    && node
                                        .child_by_field_name(field::DECLARATOR)
                                        .map(|d| d.kind() == kind::IDENTIFIER)
                                        .unwrap_or(true);
                                let ty = node
                                    .child_by_field_name(field::TYPE)
                                    .map(text)
                                    .filter(|_| plain);
                                let scope_end = if in_sig {
                                    fn_end
                                } else {
                                    node.parent().map(|p| p.end_byte()).unwrap_or(fn_end)
                                };
                                declare(&mut s, id, scope_end, ty);
                            }
                        }
                        kind::LOCAL_VARIABLE_DECLARATION | kind::DECLARATION => {
                            let scope_end = node.parent().map(|p| p.end_byte()).unwrap_or(fn_end);
                            let ty = node.child_by_field_name(field::TYPE).map(text);
                            let mut c = node.walk();
                            // `extern int y;` in a block names the global `y`.
                            let external = node.children(&mut c).any(|k| {
                                k.kind() == kind::STORAGE_CLASS_SPECIFIER && text(k) == "extern"
                            });
                            let mut c = node.walk();
                            let decls: Vec<Node<'_>> = node
                                .children_by_field_name(field::DECLARATOR, &mut c)
                                .collect();
                            for d in decls {
                                // So does a block-scope function declaration (`int g(void);`).
                                if external || d.kind() == kind::FUNCTION_DECLARATOR {
                                    if let Some(id) = innermost_id(d) {
                                        s.globals.insert(text(id));
                                    }
                                    continue;
                                }
                                let (id, plain) = match d.kind() {
                                    kind::VARIABLE_DECLARATOR => (
                                        d.child_by_field_name(field::NAME),
                                        d.child_by_field_name(field::DIMENSIONS).is_none(),
                                    ),
                                    kind::IDENTIFIER => (Some(d), true),
                                    kind::INIT_DECLARATOR => {
                                        let inner = d.child_by_field_name(field::DECLARATOR);
                                        (
                                            inner.and_then(innermost_id),
                                            inner
                                                .map(|i| i.kind() == kind::IDENTIFIER)
                                                .unwrap_or(false),
                                        )
                                    }
                                    _ => (innermost_id(d), false),
                                };
                                if let Some(id) = id {
                                    declare(&mut s, id, scope_end, ty.clone().filter(|_| plain));
                                }
                            }
                        }
                        kind::ENHANCED_FOR_STATEMENT
                        | kind::FOR_RANGE_LOOP
                        | kind::CATCH_FORMAL_PARAMETER
                        | kind::RESOURCE => {
                            let id = node.child_by_field_name(field::NAME).or_else(|| {
                                node.child_by_field_name(field::DECLARATOR)
                                    .and_then(innermost_id)
                            });
                            if let Some(id) = id {
                                let scope_end = if kind == kind::CATCH_FORMAL_PARAMETER {
                                    node.parent().map(|p| p.end_byte()).unwrap_or(fn_end)
                                } else {
                                    node.end_byte()
                                };
                                declare(&mut s, id, scope_end, None);
                            }
                        }
                        _ => {}
                    }
                    if kind == kind::IDENTIFIER && !is_member_position(lang, node) {
                        s.uses
                            .entry(text(node))
                            .or_default()
                            .push(node.start_byte());
                    }
                    let mut c = node.walk();
                    let kids: Vec<Node<'_>> = node.children(&mut c).collect();
                    for k in kids.into_iter().rev() {
                        stack.push((k, depth + 1, nested));
                    }
                }
            }
        }
        s
    }

    /// Names that may be renamed (see the module docs).
    fn renamable(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (name, decls) in &self.decls {
            if self.globals.contains(name) {
                continue;
            }
            if self.python {
                out.insert(name.clone());
                continue;
            }
            let covered = self.uses.get(name).map(|uses| {
                uses.iter()
                    .all(|u| decls.iter().any(|(start, end)| start <= u && u < end))
            });
            if covered.unwrap_or(true) {
                out.insert(name.clone());
            }
        }
        out
    }
}

fn innermost_id(node: Node<'_>) -> Option<Node<'_>> {
    let mut cur = node;
    for _ in 0..64 {
        if cur.kind() == kind::IDENTIFIER {
            return Some(cur);
        }
        cur = cur.child_by_field_name(field::DECLARATOR).or_else(|| {
            let mut c = cur.walk();
            let r = cur
                .named_children(&mut c)
                .find(|n| n.kind() == kind::IDENTIFIER || n.kind().ends_with("declarator"));
            r
        })?;
    }
    None
}

/// Identifiers bound by a Python assignment target (names, tuples, lists; not attributes or
/// subscripts).
fn target_identifiers(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![(node, 0usize)];
    while let Some((n, d)) = stack.pop() {
        if d > 64 {
            continue;
        }
        match n.kind() {
            kind::IDENTIFIER => out.push(n),
            kind::PATTERN_LIST
            | kind::TUPLE_PATTERN
            | kind::LIST_PATTERN
            | kind::EXPRESSION_LIST
            | kind::TUPLE
            | kind::LIST
            | kind::LIST_SPLAT_PATTERN
            | kind::AS_PATTERN_TARGET
            | kind::PARENTHESIZED_EXPRESSION => {
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    stack.push((k, d + 1));
                }
            }
            _ => {}
        }
    }
    out
}

/// Identifiers that name members, not variables.
fn is_member_position(lang: Language, node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let is_field = |f: &str| parent.child_by_field_name(f).map(|n| n.id()) == Some(node.id());
    match (lang, parent.kind()) {
        (Language::Python, kind::ATTRIBUTE) => is_field(field::ATTRIBUTE),
        (Language::Python, kind::KEYWORD_ARGUMENT) => is_field(field::NAME),
        (Language::Java, kind::FIELD_ACCESS) => is_field(field::FIELD),
        (Language::Java, kind::METHOD_INVOCATION) => is_field(field::NAME),
        (Language::Java, kind::METHOD_REFERENCE) => true,
        (
            _,
            kind::LABELED_STATEMENT
            | kind::BREAK_STATEMENT
            | kind::CONTINUE_STATEMENT
            | kind::GOTO_STATEMENT,
        ) => true,
        _ => false,
    }
}

struct Ctx {
    lang: Language,
    self_name: String,
    locals: BTreeSet<String>,
    ints: BTreeSet<String>,
    /// Locals whose writes run no user code (C++: built-in scalar types; see [`plain_type`]).
    plain: BTreeSet<String>,
}

/// Whether writing a local declared with type `ty` runs no user code. Always in Python, Java
/// and C (no constructors or assignment operators); in C++ only for a plain name of a built-in
/// arithmetic type (a class type's constructor, assignment operator or destructor may do
/// anything: `Tick t = 5;` may count ticks).
fn plain_type(lang: Language, ty: Option<&str>, hz: &Hazards) -> bool {
    if lang != Language::Cpp {
        return true;
    }
    let Some(t) = ty else { return false };
    !hz.shadows(t)
        && matches!(
            parse_type(lang, t),
            Ty::Int { .. } | Ty::Float { .. } | Ty::Bool | Ty::Char
        )
}

/// The label of an integer literal the normal form writes itself (not a grammar kind).
const INT_LABEL: &str = "$int";

fn member_field(parent: &T, kid: &T, lang: Language) -> bool {
    matches!(
        (lang, parent.kind.as_str(), kid.field),
        (Language::Python, kind::ATTRIBUTE, Some(field::ATTRIBUTE))
            | (Language::Python, kind::KEYWORD_ARGUMENT, Some(field::NAME))
            | (Language::Java, kind::FIELD_ACCESS, Some(field::FIELD))
            | (Language::Java, kind::METHOD_INVOCATION, Some(field::NAME))
            | (Language::Java, kind::METHOD_REFERENCE, _)
            | (
                _,
                kind::LABELED_STATEMENT
                    | kind::BREAK_STATEMENT
                    | kind::CONTINUE_STATEMENT
                    | kind::GOTO_STATEMENT,
                _
            )
    )
}

/// A direct self-call position (`f(...)`, Java `f(...)` without receiver).
fn self_call_field(parent: &T, kid: &T) -> bool {
    match (parent.kind.as_str(), kid.field) {
        (kind::CALL | kind::CALL_EXPRESSION, Some("function")) => true,
        (kind::METHOD_INVOCATION, Some("name")) => parent.field(field::OBJECT).is_none(),
        _ => false,
    }
}

fn ident(t: &T) -> Option<&str> {
    if t.kind == kind::IDENTIFIER {
        t.text.as_deref()
    } else {
        None
    }
}

fn assign_names(t: &T, ctx: &Ctx, map: &mut BTreeMap<String, String>) {
    // Preorder, iterative.
    let mut stack: Vec<(&T, bool)> = vec![(t, false)];
    while let Some((n, member)) = stack.pop() {
        if !member {
            if let Some(name) = ident(n) {
                if ctx.locals.contains(name) && !map.contains_key(name) {
                    let k = map.len();
                    map.insert(name.to_string(), format!("${k}"));
                }
            }
        }
        for k in n.kids.iter().rev() {
            stack.push((k, member_field(n, k, ctx.lang)));
        }
    }
}

fn rename(
    t: &mut T,
    ctx: &Ctx,
    map: &BTreeMap<String, String>,
    parent: Option<(&str, bool, bool)>,
) {
    let (member, self_call) = match parent {
        Some((_, m, s)) => (m, s),
        None => (false, false),
    };
    if t.kind == kind::IDENTIFIER {
        if let Some(name) = t.text.clone() {
            if !member {
                if let Some(new) = map.get(&name) {
                    t.text = Some(new.clone());
                    return;
                }
            }
            if self_call && name == ctx.self_name && !ctx.locals.contains(&name) {
                t.text = Some("$fn".into());
            }
        }
        return;
    }
    let flags: Vec<(bool, bool)> = t
        .kids
        .iter()
        .map(|k| (member_field(t, k, ctx.lang), self_call_field(t, k)))
        .collect();
    let kind = t.kind.clone();
    for (k, (m, s)) in t.kids.iter_mut().zip(flags) {
        rename(k, ctx, map, Some((&kind, m, s)));
    }
}

fn int_literal(t: &T, lang: Language) -> Option<i128> {
    let text = t.text.as_deref()?;
    let ok_kind = match lang {
        Language::Python => t.kind == kind::INTEGER,
        Language::Java => t.kind == kind::DECIMAL_INTEGER_LITERAL,
        _ => t.kind == kind::NUMBER_LITERAL,
    } || t.kind == INT_LABEL;
    if !ok_kind {
        return None;
    }
    let body = text.strip_prefix('-').unwrap_or(text);
    if body.is_empty()
        || !body.bytes().all(|b| b.is_ascii_digit())
        || (body.len() > 1 && body.starts_with('0'))
    {
        return None;
    }
    text.parse::<i128>().ok()
}

fn int_leaf(v: i128) -> T {
    T::leaf(INT_LABEL, v.to_string())
}

fn binary_parts(t: &T) -> Option<(&T, &str, &T)> {
    if !matches!(
        t.kind.as_str(),
        kind::BINARY_EXPRESSION | kind::BINARY_OPERATOR
    ) {
        return None;
    }
    let l = t.field(field::LEFT)?;
    let r = t.field(field::RIGHT)?;
    let op = t.field(field::OPERATOR)?.text.as_deref()?;
    Some((l, op, r))
}

fn fits(v: i128, lang: Language) -> bool {
    match lang {
        Language::Python => i128::from(i64::MIN) <= v && v <= i128::from(i64::MAX),
        _ => i128::from(i32::MIN) <= v && v <= i128::from(i32::MAX),
    }
}

/// Integer-typed and free of side effects.
fn int_pure(t: &T, ctx: &Ctx) -> bool {
    if int_literal(t, ctx.lang).is_some() {
        return true;
    }
    if let Some(name) = ident(t) {
        return ctx.ints.contains(name);
    }
    if let Some((l, op, r)) = binary_parts(t) {
        let ok_op = match ctx.lang {
            Language::Python => matches!(op, "+" | "-" | "*" | "//" | "%"),
            _ => matches!(op, "+" | "-" | "*" | "/" | "%"),
        };
        return ok_op && int_pure(l, ctx) && int_pure(r, ctx);
    }
    if matches!(
        t.kind.as_str(),
        kind::UNARY_EXPRESSION | kind::UNARY_OPERATOR
    ) {
        let op = t.field(field::OPERATOR).and_then(|o| o.text.as_deref());
        let arg = t.field(field::ARGUMENT).or_else(|| t.field(field::OPERAND));
        return op == Some("-") && arg.map(|a| int_pure(a, ctx)).unwrap_or(false);
    }
    false
}

/// Integer arithmetic that can throw or trap: a division or remainder whose divisor is not a
/// literal other than 0 and -1 (Java throws `ArithmeticException`; C traps on zero and on
/// `INT_MIN / -1`). Such a store is observable even when its variable is never read.
fn may_trap(t: &T, lang: Language) -> bool {
    if let Some((l, op, r)) = binary_parts(t) {
        if matches!(op, "/" | "%" | "//") {
            let safe = int_literal(r, lang).is_some_and(|v| v != 0 && v != -1);
            if !safe {
                return true;
            }
        }
        return may_trap(l, lang) || may_trap(r, lang);
    }
    t.kids.iter().any(|k| may_trap(k, lang))
}

/// The name `t` is, through any parentheses.
fn bare_name(t: &T) -> Option<&str> {
    let mut t = t;
    for _ in 0..64 {
        if t.kind != kind::PARENTHESIZED_EXPRESSION {
            return ident(t);
        }
        let mut named = t.named_kids().filter(|k| k.kind != GAP);
        match (named.next(), named.next()) {
            (Some(inner), None) => t = inner,
            _ => return None,
        }
    }
    None
}

/// Bottom-up algebraic simplification; `stmt` marks a discarded-value position.
fn simplify(t: &mut T, ctx: &Ctx, stmt: bool) {
    let kind = t.kind.clone();
    let stmt_kids = kind == kind::EXPRESSION_STATEMENT;
    for k in &mut t.kids {
        let s = stmt_kids || (kind == kind::FOR_STATEMENT && k.field == Some("update"));
        simplify(k, ctx, s);
    }
    // Integer literals in one canonical kind.
    if let Some(v) = int_literal(t, ctx.lang) {
        *t = T {
            field: t.field,
            ..int_leaf(v)
        };
        return;
    }
    // Unary minus on a literal.
    if matches!(kind.as_str(), kind::UNARY_EXPRESSION | kind::UNARY_OPERATOR) {
        let op = t.field(field::OPERATOR).and_then(|o| o.text.clone());
        let arg = t
            .field(field::ARGUMENT)
            .or_else(|| t.field(field::OPERAND))
            .and_then(|a| int_literal(a, ctx.lang));
        if let (Some(op), Some(v)) = (op, arg) {
            if op == "-" && fits(-v, ctx.lang) {
                *t = T {
                    field: t.field,
                    ..int_leaf(-v)
                };
                return;
            }
        }
    }
    if let Some((l, op, r)) = binary_parts(t) {
        let field = t.field;
        // Constant folding.
        if let (Some(x), Some(y)) = (int_literal(l, ctx.lang), int_literal(r, ctx.lang)) {
            let nonneg = x >= 0 && y > 0;
            let v = match (ctx.lang, op) {
                (_, "+") => Some(x + y),
                (_, "-") => Some(x - y),
                (_, "*") => Some(x.saturating_mul(y)),
                (Language::Python, "//") | (Language::Java | Language::C | Language::Cpp, "/")
                    if nonneg =>
                {
                    Some(x / y)
                }
                (_, "%") if nonneg => Some(x % y),
                _ => None,
            };
            if let Some(v) =
                v.filter(|v| fits(*v, ctx.lang) && fits(x, ctx.lang) && fits(y, ctx.lang))
            {
                *t = T {
                    field,
                    ..int_leaf(v)
                };
                return;
            }
        }
        if (op == "+" || op == "*") && int_pure(l, ctx) && int_pure(r, ctx) {
            let unit = if op == "+" { 0 } else { 1 };
            let keep_l = int_literal(r, ctx.lang) == Some(unit);
            let keep_r = !keep_l && int_literal(l, ctx.lang) == Some(unit);
            // `x + 0` is no `x` in Python or C++ when `x` is a name: the sum is a new value
            // (Python's `True + 0` is `1`, an `int` subclass's `__add__` runs) and no lvalue (a
            // C++ reference or `decltype` binds to a temporary). An operand that is itself
            // arithmetic already is such a value; a Java or C integer name (32 bits or more,
            // not boxed: see `Scopes::int_typed`) is its own sum with zero.
            let kept_is_name = bare_name(if keep_l { l } else { r }).is_some()
                && matches!(ctx.lang, Language::Python | Language::Cpp);
            if (keep_l || keep_r) && !kept_is_name {
                let mut kept = if keep_l { l.clone() } else { r.clone() };
                kept.field = field;
                *t = kept;
                return;
            }
            // Commutativity: canonical operand order.
            let (pl, pr) = (l.printed(), r.printed());
            if pl > pr {
                let li = t.kids.iter().position(|k| k.field == Some("left"));
                let ri = t.kids.iter().position(|k| k.field == Some("right"));
                if let (Some(li), Some(ri)) = (li, ri) {
                    t.kids.swap(li, ri);
                    t.kids[li].field = Some("left");
                    t.kids[ri].field = Some("right");
                }
            }
        }
    }
    if stmt {
        if let Some(inc) = increment(t, ctx) {
            *t = inc;
        }
    }
}

/// `i++`, `++i`, `i += 1`, `i = i + 1` (value discarded, `i` an integer) as one form.
fn increment(t: &T, ctx: &Ctx) -> Option<T> {
    let make = |name: &str, up: bool| {
        let mut n = T::leaf(
            "$step",
            format!("{name} {}", if up { "+=1" } else { "-=1" }),
        );
        n.field = t.field;
        n
    };
    match t.kind.as_str() {
        kind::UPDATE_EXPRESSION => {
            let arg = t.named_kids().find(|k| k.kind == kind::IDENTIFIER)?;
            let name = ident(arg)?;
            if !ctx.ints.contains(name) {
                return None;
            }
            let up = t.kids.iter().any(|k| k.text.as_deref() == Some("++"));
            let down = t.kids.iter().any(|k| k.text.as_deref() == Some("--"));
            (up != down).then(|| make(name, up))
        }
        kind::ASSIGNMENT_EXPRESSION | kind::AUGMENTED_ASSIGNMENT | kind::ASSIGNMENT => {
            let left = t.field(field::LEFT)?;
            let name = ident(left)?;
            if !ctx.ints.contains(name) {
                return None;
            }
            let right = t.field(field::RIGHT)?;
            let op = t
                .field(field::OPERATOR)
                .and_then(|o| o.text.as_deref())
                .or_else(|| {
                    t.kids
                        .iter()
                        .find(|k| !k.is_named())
                        .and_then(|k| k.text.as_deref())
                })?;
            match op {
                "+=" | "-=" if int_literal(right, ctx.lang) == Some(1) => {
                    Some(make(name, op == "+="))
                }
                "=" => {
                    let (l, bop, r) = binary_parts(right)?;
                    let one_other = |a: &T, b: &T| {
                        ident(a) == Some(name) && int_literal(b, ctx.lang) == Some(1)
                    };
                    match bop {
                        "+" if one_other(l, r) || one_other(r, l) => Some(make(name, true)),
                        "-" if one_other(l, r) => Some(make(name, false)),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Pure enough to drop when the written variable is never read.
fn pure_value(t: &T, ctx: &Ctx, dead: &BTreeSet<String>) -> bool {
    // A C++ user-defined literal (`5_t`) calls an operator; a C compound literal
    // (`(int[]){f()}`) evaluates its initialisers.
    let literal = (t.kind.contains("literal")
        && !matches!(
            t.kind.as_str(),
            kind::USER_DEFINED_LITERAL | kind::COMPOUND_LITERAL_EXPRESSION
        ))
        || matches!(
            t.kind.as_str(),
            kind::INTEGER
                | kind::FLOAT
                | kind::TRUE
                | kind::FALSE
                | kind::NONE
                | kind::NULL_LITERAL
                | kind::STRING
                | kind::CONCATENATED_STRING
        );
    if ctx.lang == Language::Python {
        // An interpolation anywhere (`"a" f"{10 // x}"` is one string) runs code.
        return literal && !t.kind.contains("f_string") && !has_interpolation(t);
    }
    // A C++ name of a class type may convert through user code (`operator int()`).
    let pure_name = ident(t).is_some_and(|n| ctx.lang != Language::Cpp || ctx.plain.contains(n));
    if literal || pure_name || (int_pure(t, ctx) && !may_trap(t, ctx.lang)) {
        return true;
    }
    // A chained assignment to another dead variable: `x2 = x1 = 10`.
    if t.kind == kind::ASSIGNMENT_EXPRESSION {
        let op = t.field(field::OPERATOR).and_then(|o| o.text.as_deref());
        if let (Some(l), Some(r)) = (t.field(field::LEFT), t.field(field::RIGHT)) {
            return op == Some("=")
                && ident(l).is_some_and(|n| dead.contains(n))
                && pure_value(r, ctx, dead);
        }
    }
    false
}

fn has_interpolation(t: &T) -> bool {
    let mut stack = vec![t];
    while let Some(n) = stack.pop() {
        if n.kind == kind::INTERPOLATION {
            return true;
        }
        stack.extend(n.kids.iter());
    }
    false
}

/// Names never read (only declared or written). An update or compound assignment whose
/// value is used (`return ++n;`, `return n += 1;`) reads its target; one whose value is
/// discarded (a statement, a `for` update) only writes it.
fn dead_names(t: &T, ctx: &Ctx) -> BTreeSet<String> {
    let mut read: BTreeSet<String> = BTreeSet::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    // (node, is a write position, member position, the node's value is discarded)
    let mut stack: Vec<(&T, bool, bool, bool)> = vec![(t, false, false, false)];
    while let Some((n, write, member, discarded)) = stack.pop() {
        if let Some(name) = ident(n) {
            if !member && ctx.locals.contains(name) {
                seen.insert(name.to_string());
                if !write {
                    read.insert(name.to_string());
                }
            }
            continue;
        }
        let compound = matches!(
            n.kind.as_str(),
            kind::ASSIGNMENT_EXPRESSION | kind::ASSIGNMENT | kind::AUGMENTED_ASSIGNMENT
        ) && n
            .field(field::OPERATOR)
            .and_then(|o| o.text.as_deref())
            .is_some_and(|op| op != "=");
        for k in &n.kids {
            let w = match (n.kind.as_str(), k.field) {
                (kind::VARIABLE_DECLARATOR, Some("name")) => true,
                (kind::INIT_DECLARATOR | kind::DECLARATION, Some("declarator")) => true,
                (
                    kind::ASSIGNMENT_EXPRESSION | kind::ASSIGNMENT | kind::AUGMENTED_ASSIGNMENT,
                    Some("left"),
                ) => !compound || discarded,
                (kind::UPDATE_EXPRESSION, _) => discarded,
                // C/C++ parameters and Java formal parameters declare, they do not read.
                (kind::FORMAL_PARAMETER, Some("name"))
                | (kind::PARAMETER_DECLARATION, Some("declarator")) => true,
                (kind::PARAMETERS, _) | (kind::TYPED_PARAMETER, _) => true,
                (kind::DEFAULT_PARAMETER | kind::TYPED_DEFAULT_PARAMETER, Some("name")) => true,
                _ => false,
            };
            // Python augmented assignment may mutate a shared object: count it as a read.
            let w = w && !(ctx.lang == Language::Python && n.kind == kind::AUGMENTED_ASSIGNMENT);
            let kid_discarded = n.kind == kind::EXPRESSION_STATEMENT
                || (n.kind == kind::FOR_STATEMENT && k.field == Some(field::UPDATE))
                || (n.kind == kind::COMMA_EXPRESSION && discarded);
            stack.push((k, w, member_field(n, k, ctx.lang), kid_discarded));
        }
    }
    seen.difference(&read).cloned().collect()
}

fn removable_statement(s: &T, ctx: &Ctx, dead: &BTreeSet<String>) -> bool {
    match s.kind.as_str() {
        kind::EXPRESSION_STATEMENT => {
            let Some(e) = s.named_kids().next() else {
                return false;
            };
            if ctx.lang == Language::Python && e.kind == kind::STRING && s.named_kids().count() == 1
            {
                return true; // docstring or bare string
            }
            match e.kind.as_str() {
                kind::ASSIGNMENT_EXPRESSION | kind::ASSIGNMENT => {
                    let op = e
                        .field(field::OPERATOR)
                        .and_then(|o| o.text.as_deref())
                        .unwrap_or("=");
                    let (Some(l), Some(r)) = (e.field(field::LEFT), e.field(field::RIGHT)) else {
                        return false;
                    };
                    let Some(name) = ident(l) else { return false };
                    if !dead.contains(name) || e.field(field::TYPE).is_some() {
                        return false;
                    }
                    if ctx.lang == Language::Cpp && !ctx.plain.contains(name) {
                        return false; // an assignment operator may run
                    }
                    let op_ok = op == "="
                        || (ctx.lang != Language::Python
                            && matches!(op, "+=" | "-=" | "*=")
                            && ctx.ints.contains(name));
                    op_ok && pure_value(r, ctx, dead)
                }
                kind::UPDATE_EXPRESSION => e
                    .named_kids()
                    .next()
                    .and_then(ident)
                    .is_some_and(|n| dead.contains(n) && ctx.ints.contains(n)),
                _ => false,
            }
        }
        kind::LOCAL_VARIABLE_DECLARATION | kind::DECLARATION => {
            let decls: Vec<&T> = s
                .kids
                .iter()
                .filter(|k| k.field == Some("declarator"))
                .collect();
            !decls.is_empty()
                && decls.iter().all(|d| match d.kind.as_str() {
                    kind::IDENTIFIER => ident(d).is_some_and(|n| {
                        dead.contains(n) && (ctx.lang != Language::Cpp || ctx.plain.contains(n))
                    }),
                    kind::VARIABLE_DECLARATOR | kind::INIT_DECLARATOR => {
                        let name = d
                            .field(field::NAME)
                            .or_else(|| d.field(field::DECLARATOR))
                            .and_then(ident);
                        name.is_some_and(|n| {
                            dead.contains(n) && (ctx.lang != Language::Cpp || ctx.plain.contains(n))
                        }) && d
                            .field(field::VALUE)
                            .map(|v| pure_value(v, ctx, dead))
                            .unwrap_or(true)
                            && d.field(field::DIMENSIONS).is_none()
                    }
                    _ => false,
                })
        }
        _ => false,
    }
}

fn remove_dead_stores(t: &mut T, ctx: &Ctx) {
    let dead = dead_names(t, ctx);
    if dead.is_empty() {
        return;
    }
    remove_in(t, ctx, &dead);
}

fn remove_in(t: &mut T, ctx: &Ctx, dead: &BTreeSet<String>) {
    if matches!(t.kind.as_str(), kind::BLOCK | kind::COMPOUND_STATEMENT) {
        let before = t.kids.len();
        t.kids.retain(|s| !removable_statement(s, ctx, dead));
        if ctx.lang == Language::Python && t.kids.is_empty() && before > 0 {
            t.kids.push(T::leaf(kind::PASS_STATEMENT, "pass".into()));
        }
    }
    for k in &mut t.kids {
        remove_in(k, ctx, dead);
    }
}

/// A C, C++ or Java local's type as the update and comparison rules need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scalar {
    /// A signed (or signedness-unknown) integer.
    Int,
    /// An unsigned integer (C/C++ `unsigned ...`, `size_t`; Java `char`): never negative.
    Unsigned,
    Float,
    /// A plain object pointer (`char *p`, `char **pp`), never an array or a reference.
    Pointer,
}

/// What the update and comparison rules know of a function's locals (C, C++, Java).
#[derive(Debug, Default)]
struct LocalFacts {
    /// Names declared exactly once in the function as a parameter or automatic local of a
    /// built-in scalar type: no `static`, `extern` or `volatile`, no array, no reference.
    scalars: BTreeMap<String, Scalar>,
    /// Names whose address is taken (`&x`): a pointer may read them later.
    addressed: BTreeSet<String>,
    /// A `return` ends every read of a local: C or Java, no `finally` (Java), no `setjmp`.
    return_ends_reads: bool,
    /// Control flows forwards except through loops and nothing reads a local behind its name:
    /// C or Java, no `goto` or labels, no nested function, no `setjmp`.
    forward_only: bool,
}

fn local_facts(file: &ParsedFile, func: &Function<'_>, lang: Language, hz: &Hazards) -> LocalFacts {
    let mut f = LocalFacts {
        return_ends_reads: true,
        forward_only: true,
        ..LocalFacts::default()
    };
    if !matches!(lang, Language::C | Language::Cpp | Language::Java) {
        return f;
    }
    if lang == Language::Cpp {
        // References alias locals without `&` (rule 7 is off); rule 8 reads only the types.
        f.return_ends_reads = false;
        f.forward_only = false;
    }
    let text = |n: Node<'_>| file.node_text(n).to_string();
    if lang != Language::Java && text(func.node).contains("setjmp") {
        f.return_ends_reads = false;
        f.forward_only = false;
    }
    let mut declared: BTreeMap<String, Option<Scalar>> = BTreeMap::new();
    let scalar_of = |ty: &str| -> Option<Scalar> {
        if hz.shadows(ty) {
            return None; // `typedef long size_t;`: not the standard type
        }
        match parse_type(lang, ty) {
            Ty::Int { signed: false, .. } => Some(Scalar::Unsigned),
            Ty::Int { .. } => Some(Scalar::Int),
            Ty::Char if lang == Language::Java => Some(Scalar::Unsigned),
            Ty::Char => Some(Scalar::Int),
            Ty::Float { .. } => Some(Scalar::Float),
            _ => None,
        }
    };
    let mut stack: Vec<(Node<'_>, usize)> = vec![(func.node, 0)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            f.forward_only = false;
            f.return_ends_reads = false;
            continue;
        }
        match node.kind() {
            kind::GOTO_STATEMENT | kind::LABELED_STATEMENT if lang != Language::Java => {
                f.forward_only = false
            }
            // A nested function (a GNU C extension) may read the local when called later.
            kind::FUNCTION_DEFINITION if node.id() != func.node.id() => f.forward_only = false,
            kind::FINALLY_CLAUSE | kind::SEH_FINALLY_CLAUSE => f.return_ends_reads = false,
            kind::POINTER_EXPRESSION => {
                let mut c = node.walk();
                let kids: Vec<Node<'_>> = node.children(&mut c).collect();
                if kids.first().is_some_and(|k| text(*k) == "&") {
                    if let Some(id) = kids.get(1).copied().and_then(innermost_id) {
                        f.addressed.insert(text(id));
                    }
                }
            }
            kind::PARAMETER_DECLARATION
            | kind::OPTIONAL_PARAMETER_DECLARATION
            | kind::DECLARATION
            | kind::FORMAL_PARAMETER
            | kind::LOCAL_VARIABLE_DECLARATION => {
                let mut c = node.walk();
                let kids: Vec<Node<'_>> = node.children(&mut c).collect();
                let storage_ok = kids.iter().all(|k| match k.kind() {
                    kind::STORAGE_CLASS_SPECIFIER => {
                        matches!(text(*k).as_str(), "register" | "auto")
                    }
                    kind::TYPE_QUALIFIER => text(*k) != "volatile",
                    _ => true,
                });
                let ty = node.child_by_field_name(field::TYPE).map(text);
                let mut c = node.walk();
                let mut decls: Vec<Node<'_>> = node
                    .children_by_field_name(field::DECLARATOR, &mut c)
                    .collect();
                if node.kind() == kind::FORMAL_PARAMETER {
                    decls.extend(node.child_by_field_name(field::NAME));
                    if node.child_by_field_name(field::DIMENSIONS).is_some() {
                        decls.clear();
                    }
                }
                for d in decls {
                    let Some(id) = innermost_id(d) else { continue };
                    let scalar = if !storage_ok {
                        None
                    } else {
                        declarator_scalar(d, ty.as_deref(), &scalar_of)
                    };
                    declared
                        .entry(text(id))
                        .and_modify(|s| *s = None)
                        .or_insert(scalar);
                }
            }
            _ => {}
        }
        let mut c = node.walk();
        for k in node.children(&mut c) {
            stack.push((k, depth + 1));
        }
    }
    f.scalars = declared
        .into_iter()
        .filter_map(|(n, s)| Some((n, s?)))
        .collect();
    f
}

/// The scalar a declarator declares: a plain name of a scalar type, or a pointer to anything.
fn declarator_scalar(
    d: Node<'_>,
    ty: Option<&str>,
    scalar_of: &dyn Fn(&str) -> Option<Scalar>,
) -> Option<Scalar> {
    match d.kind() {
        kind::IDENTIFIER => scalar_of(ty?),
        kind::INIT_DECLARATOR => {
            declarator_scalar(d.child_by_field_name(field::DECLARATOR)?, ty, scalar_of)
        }
        kind::VARIABLE_DECLARATOR => {
            if d.child_by_field_name(field::DIMENSIONS).is_some() {
                return None;
            }
            scalar_of(ty?)
        }
        kind::POINTER_DECLARATOR => {
            let mut inner = d.child_by_field_name(field::DECLARATOR)?;
            while inner.kind() == kind::POINTER_DECLARATOR {
                inner = inner.child_by_field_name(field::DECLARATOR)?;
            }
            (inner.kind() == kind::IDENTIFIER).then_some(Scalar::Pointer)
        }
        _ => None,
    }
}

/// Kinds a full expression may sit in whose value a later statement cannot see again, apart
/// from what the function's locals hold afterwards.
fn full_expression_statement(k: &str) -> bool {
    matches!(
        k,
        kind::RETURN_STATEMENT
            | kind::EXPRESSION_STATEMENT
            | kind::DECLARATION
            | kind::LOCAL_VARIABLE_DECLARATION
    )
}

fn is_loop(k: &str) -> bool {
    matches!(
        k,
        kind::FOR_STATEMENT
            | kind::WHILE_STATEMENT
            | kind::DO_STATEMENT
            | kind::ENHANCED_FOR_STATEMENT
            | kind::FOR_RANGE_LOOP
    )
}

/// Stops the search for a full expression's statement: a block, another statement or a body.
fn expression_boundary(k: &str) -> bool {
    k.ends_with("_statement")
        || k.ends_with("_declaration")
        || k.ends_with("_definition")
        || k.ends_with("_clause")
        || matches!(
            k,
            kind::COMPOUND_STATEMENT | kind::BLOCK | kind::LAMBDA_EXPRESSION | kind::SWITCH_BLOCK
        )
}

fn node_at<'a>(t: &'a T, path: &[usize]) -> &'a T {
    path.iter().fold(t, |n, &i| &n.kids[i])
}

fn node_at_mut<'a>(t: &'a mut T, path: &[usize]) -> &'a mut T {
    path.iter().fold(t, |n, &i| &mut n.kids[i])
}

/// Non-member occurrences of `name` in `t`, with their start bytes.
fn occurrences(t: &T, name: &str, lang: Language, out: &mut Vec<usize>) {
    let mut stack: Vec<(&T, bool)> = vec![(t, false)];
    while let Some((n, member)) = stack.pop() {
        if !member && ident(n) == Some(name) {
            out.push(n.start);
        }
        for k in &n.kids {
            stack.push((k, member_field(n, k, lang)));
        }
    }
}

/// Whether `t` evaluates one part after another's side effects are done (`,`, `&&`, `||`,
/// `?:`): a part after the update may be an unseen macro that reads the variable
/// (`return k++, PEEK;`).
fn sequences(t: &T) -> bool {
    let mut stack = vec![t];
    while let Some(n) = stack.pop() {
        let logical = n.kind == kind::BINARY_EXPRESSION
            && n.kids
                .iter()
                .any(|k| matches!(k.text.as_deref(), Some("&&" | "||")) && !k.is_named());
        if logical || n.kind == kind::COMMA_EXPRESSION || n.kind == kind::CONDITIONAL_EXPRESSION {
            return true;
        }
        stack.extend(n.kids.iter());
    }
    false
}

/// The last start byte inside `t`.
fn last_start(t: &T) -> usize {
    let mut m = t.start;
    let mut stack = vec![t];
    while let Some(n) = stack.pop() {
        m = m.max(n.start);
        stack.extend(n.kids.iter());
    }
    m
}

/// Dead post-updates: `x++` or `x--` (postfix: its value is the old `x`) of a scalar local
/// whose new value nothing reads becomes `x`. Nothing reads it when `x` occurs once in the
/// statement (no unsequenced read) and either the statement is a `return` (the local ends
/// with the call) or control only flows forwards from a statement outside every loop after
/// which `x` is never named again. `return p++;`, `savestring(s, end--  - s);` as a last use.
///
/// `header_only`: a project header's macros are not seen, so only a `return` qualifies and no
/// update inside a call's arguments (the callee may be a macro that evaluates them twice),
/// unless the callee is a C standard library function whose header the file includes
/// ([`Hazards::standard_call`]: it evaluates each argument once).
fn drop_dead_post_updates(
    t: &mut T,
    ctx: &Ctx,
    facts: &LocalFacts,
    hz: &Hazards,
    header_only: bool,
) {
    if facts.scalars.is_empty() {
        return;
    }
    let eligible = |name: &str| {
        ctx.locals.contains(name)
            && facts.scalars.contains_key(name)
            && !facts.addressed.contains(name)
    };
    // Paths (child indices from the root) of the updates to drop.
    let mut found: Vec<Vec<usize>> = Vec::new();
    let mut stack: Vec<Vec<usize>> = vec![Vec::new()];
    while let Some(path) = stack.pop() {
        let n = node_at(t, &path);
        for i in 0..n.kids.len() {
            let mut p = path.clone();
            p.push(i);
            stack.push(p);
        }
        if n.kind != kind::UPDATE_EXPRESSION || n.kids.len() != 2 {
            continue;
        }
        // Postfix: the operand first (its value is the old one).
        let (arg, op) = (&n.kids[0], &n.kids[1]);
        if arg.start >= op.start {
            continue;
        }
        let Some(name) = ident(arg) else { continue };
        if !matches!(op.text.as_deref(), Some("++" | "--")) || op.is_named() || !eligible(name) {
            continue;
        }
        // The statement the update's full expression belongs to.
        let mut s_len = None;
        for len in (0..path.len()).rev() {
            let k = node_at(t, &path[..len]).kind.as_str();
            if full_expression_statement(k) {
                s_len = Some(len);
                break;
            }
            if expression_boundary(k) {
                break;
            }
        }
        let Some(s_len) = s_len else { continue };
        let s = node_at(t, &path[..s_len]);
        // Inside the arguments of a call that may be an unseen macro (not the standard
        // library's: those evaluate each argument once).
        let in_macro_args = || {
            (s_len..path.len()).any(|len| {
                let n = node_at(t, &path[..len]);
                n.kind == kind::ARGUMENT_LIST && {
                    let call = node_at(t, &path[..len - 1]);
                    !(call.kind == kind::CALL_EXPRESSION
                        && call
                            .field(field::FUNCTION)
                            .and_then(ident)
                            .is_some_and(|f| !ctx.locals.contains(f) && hz.standard_call(f)))
                }
            })
        };
        if header_only && (s.kind != kind::RETURN_STATEMENT || in_macro_args() || sequences(s)) {
            continue;
        }
        let mut inside = Vec::new();
        occurrences(s, name, ctx.lang, &mut inside);
        if inside.len() != 1 {
            continue;
        }
        let dead = if s.kind == kind::RETURN_STATEMENT {
            facts.return_ends_reads
        } else {
            let end = last_start(s);
            let mut all = Vec::new();
            occurrences(t, name, ctx.lang, &mut all);
            facts.forward_only
                && !(0..s_len).any(|len| is_loop(&node_at(t, &path[..len]).kind))
                && all.iter().all(|&at| at <= end)
        };
        if dead {
            found.push(path);
        }
    }
    for path in found {
        let u = node_at_mut(t, &path);
        let mut arg = u.kids[0].clone();
        arg.field = u.field;
        *u = arg;
    }
}

/// Zero comparisons that cannot see a sign: for an unsigned local (C/C++; Java `char`) or,
/// in C, a pointer (compared as an unsigned address), `x > 0` is `x != 0` and `x <= 0` is
/// `x == 0` (`0 < x`, `0 >= x` alike). The zero is `0`, `'\0'` or (pointers) `NULL`.
///
/// `header_only` (a project header's macros are not seen): not inside a call's arguments,
/// which a macro may stringize. `in_args`: `t` lies inside call arguments.
fn sign_free_comparisons(
    t: &mut T,
    ctx: &Ctx,
    facts: &LocalFacts,
    header_only: bool,
    in_args: bool,
) {
    let in_args = in_args || t.kind == kind::ARGUMENT_LIST;
    for k in &mut t.kids {
        sign_free_comparisons(k, ctx, facts, header_only, in_args);
    }
    if t.kind != kind::BINARY_EXPRESSION || (header_only && in_args) {
        return;
    }
    let (Some(l), Some(r)) = (t.field(field::LEFT), t.field(field::RIGHT)) else {
        return;
    };
    let typed = |e: &T| -> Option<Scalar> {
        let e = match e.kind.as_str() {
            kind::ASSIGNMENT_EXPRESSION
                if e.field(field::OPERATOR).and_then(|o| o.text.as_deref()) == Some("=") =>
            {
                e.field(field::LEFT)?
            }
            _ => e,
        };
        let name = ident(e)?;
        if !ctx.locals.contains(name) {
            return None;
        }
        match facts.scalars.get(name)? {
            Scalar::Unsigned => Some(Scalar::Unsigned),
            Scalar::Pointer if ctx.lang == Language::C => Some(Scalar::Pointer),
            _ => None,
        }
    };
    let zero = |e: &T, s: Scalar| -> bool {
        if e.kind == kind::NULL {
            // `NULL` (a node over its token); C's null pointer constant.
            let token = e
                .text
                .as_deref()
                .or_else(|| e.kids.first()?.text.as_deref());
            return s == Scalar::Pointer && token == Some("NULL");
        }
        let Some(text) = e.text.as_deref() else {
            return false;
        };
        match e.kind.as_str() {
            kind::NUMBER_LITERAL | kind::DECIMAL_INTEGER_LITERAL => {
                text.trim_end_matches(['u', 'U', 'l', 'L']) == "0"
            }
            kind::CHAR_LITERAL | kind::CHARACTER_LITERAL => {
                s == Scalar::Unsigned && matches!(text, "'\\0'" | "'\\u0000'")
            }
            _ => false,
        }
    };
    let new_op = match (typed(l), typed(r)) {
        (Some(s), _) if zero(r, s) => |op: &str| match op {
            ">" => Some("!="),
            "<=" => Some("=="),
            _ => None,
        },
        (_, Some(s)) if zero(l, s) => |op: &str| match op {
            "<" => Some("!="),
            ">=" => Some("=="),
            _ => None,
        },
        _ => return,
    };
    if let Some(op) = t.kids.iter_mut().find(|k| k.field == Some(field::OPERATOR)) {
        if let Some(new) = op.text.as_deref().and_then(new_op) {
            op.text = Some(new.to_string());
            op.kind = new.to_string();
        }
    }
}

/// A normalisation proof for two whole files, seen through their entry functions (`None`: the
/// files are whole programs run from the top). It covers everything the compared code can
/// observe, or it is no proof:
///
/// - **every** named function of each file (not only those the entry calls: a function passed
///   as a value, a constructor or an initialiser the harness runs is code too) has a
///   counterpart with an identical canonical form on the other side, paired by qualified name
///   (the entry functions with each other, whatever their names); a function on one side only
///   voids the proof;
/// - the rest of the file (imports and includes, module-level statements, fields, static
///   blocks, decorators, class headers, macros) is the same syntax tree, comments aside, with
///   each function as a marker in its place; a tree keeps the layout that has meaning (Python
///   indentation) and ignores the layout that has none;
/// - where the entry functions' names or enclosing class names differ, those names are
///   replaced by the same marker on both sides (never in member positions such as `obj.f`).
///
/// Java `package` lines are set aside (the harness compiles both sides in one package).
pub fn prove_program_equivalent(
    a: (&ParsedFile, &Function<'_>),
    b: (&ParsedFile, &Function<'_>),
    cancel: &Cancel,
) -> Result<bool, NormError> {
    prove_files_equivalent((a.0, Some(a.1)), (b.0, Some(b.1)), cancel)
}

/// [`prove_program_equivalent`] for two versions of one file (a program and its mutant):
/// `__FILE__` names the same file on both sides, and `__LINE__` that keeps its line is equal.
pub fn prove_versions_equivalent(
    a: (&ParsedFile, &Function<'_>),
    b: (&ParsedFile, &Function<'_>),
    cancel: &Cancel,
) -> Result<bool, NormError> {
    prove_files_in((a.0, Some(a.1)), (b.0, Some(b.1)), true, cancel)
}

/// [`prove_program_equivalent`] with optional entry functions (whole programs have none).
pub fn prove_files_equivalent(
    a: (&ParsedFile, Option<&Function<'_>>),
    b: (&ParsedFile, Option<&Function<'_>>),
    cancel: &Cancel,
) -> Result<bool, NormError> {
    prove_files_in(a, b, false, cancel)
}

fn prove_files_in(
    a: (&ParsedFile, Option<&Function<'_>>),
    b: (&ParsedFile, Option<&Function<'_>>),
    same_file: bool,
    cancel: &Cancel,
) -> Result<bool, NormError> {
    let lang = a.0.language;
    if lang != b.0.language {
        return Ok(false);
    }
    if a.0.has_errors() || b.0.has_errors() {
        return match (a.1, b.1) {
            (Some(ea), Some(eb)) => prove_in_place((a.0, ea), (b.0, eb), same_file, cancel),
            _ => Err("syntax errors: no proof".into()),
        };
    }
    if lang == Language::Python && !(python_layout_ok(a.0) && python_layout_ok(b.0)) {
        // tree-sitter reads some indentation errors without an error node; Python does not.
        return Err("inconsistent indentation (Python would not run it): no proof".into());
    }
    let hz = checked_pair(a.0, b.0, same_file)?;
    // The entry functions first: the cheap and common refutation.
    if let (Some(ea), Some(eb)) = (a.1, b.1) {
        if !prove_with((a.0, ea), (b.0, eb), &hz, cancel)? {
            return Ok(false);
        }
    }
    let (Some(ma), Some(mb)) = (markers(a.1, b.1, true), markers(a.1, b.1, false)) else {
        return Ok(false);
    };
    let fa = file_form(a.0, a.1, &ma, &hz, cancel)?;
    let fb = file_form(b.0, b.1, &mb, &hz, cancel)?;
    Ok(fa == fb)
}

/// Two files with syntax errors that differ only inside their entry functions (a mutant of a
/// program that does not parse whole: old C, macros, a missing header): the rest is the same
/// text, so whatever it means, it means it on both sides, and equal canonical forms of the two
/// functions prove the programs equivalent. Declined unless both functions parse without
/// error (and, for Python, the layout rule holds).
fn prove_in_place(
    a: (&ParsedFile, &Function<'_>),
    b: (&ParsedFile, &Function<'_>),
    same_file: bool,
    cancel: &Cancel,
) -> Result<bool, NormError> {
    let (ra, rb) = (a.1.node.byte_range(), b.1.node.byte_range());
    let (ta, tb) = (a.0.text.as_str(), b.0.text.as_str());
    let same_rest = ta[..ra.start] == tb[..rb.start] && ta[ra.end..] == tb[rb.end..];
    if !same_rest
        || a.1.node.has_error()
        || b.1.node.has_error()
        || a.0.language == Language::Python
        || a.0.cancelled
        || b.0.cancelled
    {
        return Err("syntax errors: no proof".into());
    }
    let hz = checked_pair(a.0, b.0, same_file)?;
    prove_with(a, b, &hz, cancel)
}

/// Python's own indentation rule, which tree-sitter does not always enforce: module-level
/// statements start in column 0, and the statements of a block share one column, deeper than
/// the statement that opens the block (statements after `;` on the same line aside).
fn python_layout_ok(file: &ParsedFile) -> bool {
    let root = file.tree.root_node();
    let mut stack = vec![(root, 0usize, None::<usize>)];
    while let Some((node, depth, parent_col)) = stack.pop() {
        if depth > MAX_DEPTH {
            return false;
        }
        let is_block = node.kind() == kind::BLOCK || node.id() == root.id();
        if is_block {
            let mut col: Option<usize> = None;
            let mut last_row: Option<usize> = None;
            let mut c = node.walk();
            for k in node.named_children(&mut c) {
                if k.kind().contains(kind::COMMENT) {
                    continue;
                }
                let p = k.start_position();
                if last_row == Some(p.row) {
                    continue;
                }
                last_row = Some(k.end_position().row);
                match col {
                    None => {
                        if node.id() == root.id() && p.column != 0 {
                            return false;
                        }
                        if parent_col.is_some_and(|pc| p.column <= pc) {
                            // A block on its header's line (`if x: return 1`) is fine.
                            if node.start_position().row
                                != node.parent().map_or(0, |x| x.start_position().row)
                            {
                                return false;
                            }
                        }
                        col = Some(p.column);
                    }
                    Some(c0) if c0 != p.column => return false,
                    _ => {}
                }
            }
        }
        let mut c = node.walk();
        // The column of the statement that owns a nested block.
        let own_col = node.start_position().column;
        for k in node.children(&mut c) {
            let pc = if k.kind() == kind::BLOCK {
                Some(own_col)
            } else {
                parent_col
            };
            stack.push((k, depth + 1, pc));
        }
    }
    true
}

/// The names each side replaces by a shared marker: the entry function's simple name and the
/// components of its enclosing class path, where the two sides differ. `None` when the class
/// paths have different depths (no pairing).
fn markers(
    a: Option<&Function<'_>>,
    b: Option<&Function<'_>>,
    left: bool,
) -> Option<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    let (Some(a), Some(b)) = (a, b) else {
        return (a.is_none() && b.is_none()).then_some(map);
    };
    let path = |f: &Function<'_>| -> Vec<String> {
        f.class
            .iter()
            .flat_map(|c| c.split(['.', ':']))
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (pa, pb) = (path(a), path(b));
    if pa.len() != pb.len() {
        return None;
    }
    for (i, (x, y)) in pa.iter().zip(&pb).enumerate() {
        if x != y {
            map.insert(if left { x } else { y }.clone(), format!("$class{i}"));
        }
    }
    if a.simple_name != b.simple_name {
        let own = if left { &a.simple_name } else { &b.simple_name };
        map.insert(own.clone(), "$entry".into());
    }
    // A name that is both a class component and the entry would be marked twice: no pairing.
    if a.simple_name != b.simple_name
        && (pa.contains(&a.simple_name) || pb.contains(&b.simple_name))
    {
        return None;
    }
    Some(map)
}

/// A file's canonical form: its context tree with outermost named functions as markers, then
/// each such function's canonical form under its key (qualified name, markers applied; the
/// entry is `$entry`).
fn file_form(
    file: &ParsedFile,
    entry: Option<&Function<'_>>,
    marks: &BTreeMap<String, String>,
    hz: &Hazards,
    cancel: &Cancel,
) -> Result<String, NormError> {
    use crate::syntax::functions::{collect_functions, FunctionKind};
    let lang = file.language;
    let named: Vec<Function<'_>> = collect_functions(file)
        .into_iter()
        .filter(|f| f.kind != FunctionKind::Lambda)
        .collect();
    // Outermost: not inside another named function (nested ones belong to their parent's form).
    let mut ranges: Vec<(usize, usize)> = named
        .iter()
        .map(|f| (f.node.start_byte(), f.node.end_byte()))
        .collect();
    ranges.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
    let mut outer: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut reach = 0usize;
    for (s, e) in ranges {
        if outer.is_empty() || s >= reach {
            outer.insert((s, e));
            reach = e;
        }
    }
    let key_of = |f: &Function<'_>| -> String {
        if entry.is_some_and(|e| e.node.id() == f.node.id()) {
            return "$entry".into();
        }
        f.name
            .split_inclusive(['.', ':'])
            .map(|part| {
                let bare = part.trim_end_matches(['.', ':']);
                let sep = &part[bare.len()..];
                let bare = marks.get(bare).map(String::as_str).unwrap_or(bare);
                format!("{bare}{sep}")
            })
            .collect()
    };
    let mut cut: BTreeMap<(usize, usize), String> = BTreeMap::new();
    let mut forms: Vec<(String, usize, String)> = Vec::new();
    for f in &named {
        let range = (f.node.start_byte(), f.node.end_byte());
        if !outer.contains(&range) {
            continue;
        }
        if cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        let key = key_of(f);
        let mut tree = canonical_tree(file, f, hz, cancel)?;
        mark_names(&mut tree, marks, lang, false);
        forms.push((key.clone(), range.0, tree.printed()));
        cut.insert(range, key);
    }
    let mut context = build(file, file.tree.root_node(), None, &cut, cancel)?;
    if hz.opacity == Opacity::None {
        drop_parens(&mut context);
    }
    mark_names(&mut context, marks, lang, false);
    // Functions by key, in file order within a key (overloads pair by position).
    forms.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
    let mut out = context.printed();
    for (key, _, form) in forms {
        out.push('\n');
        out.push_str(&key);
        out.push_str(" := ");
        out.push_str(&form);
    }
    Ok(out)
}

/// Replaces the marked names (identifiers and type names, never in member positions).
fn mark_names(t: &mut T, marks: &BTreeMap<String, String>, lang: Language, member: bool) {
    if marks.is_empty() {
        return;
    }
    if t.kids.is_empty() {
        if !member
            && matches!(
                t.kind.as_str(),
                kind::IDENTIFIER | kind::TYPE_IDENTIFIER | kind::NAMESPACE_IDENTIFIER
            )
        {
            if let Some(new) = t.text.as_ref().and_then(|x| marks.get(x)) {
                t.text = Some(new.clone());
            }
        }
        return;
    }
    let flags: Vec<bool> = t.kids.iter().map(|k| member_field(t, k, lang)).collect();
    for (k, m) in t.kids.iter_mut().zip(flags) {
        mark_names(k, marks, lang, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::equiv::types::select_function;

    fn same(lang: Language, a: &str, b: &str) -> bool {
        let fa = ParsedFile::parse(lang, a);
        let fb = ParsedFile::parse(lang, b);
        let ga = select_function(&fa, None).unwrap();
        let gb = select_function(&fb, None).unwrap();
        prove_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never()).unwrap()
    }

    fn program(lang: Language, a: &str, b: &str, entry: &str) -> bool {
        let fa = ParsedFile::parse(lang, a);
        let fb = ParsedFile::parse(lang, b);
        let ga = select_function(&fa, Some(entry)).unwrap();
        let gb = select_function(&fb, Some(entry)).unwrap();
        prove_program_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never()).unwrap()
    }

    /// Proved through the path the CLI takes (a declined proof is no proof).
    fn proved(lang: Language, a: &str, b: &str, entry: &str) -> bool {
        let fa = ParsedFile::parse(lang, a);
        let fb = ParsedFile::parse(lang, b);
        let ga = select_function(&fa, Some(entry)).unwrap();
        let gb = select_function(&fb, Some(entry)).unwrap();
        prove_program_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never()) == Ok(true)
    }

    #[test]
    fn code_that_sees_names_lines_or_hidden_reads_gets_no_proof() {
        // Each pair differs when run (found by an adversarial probe of the proof): Python code
        // that sees names, lines or text (`{x=}`, `locals()`, NFKC identifiers, `eval`,
        // frames); C macros that read a local the rewrites think dead, renamed or not updated,
        // take parentheses or stringize a name; `__func__`, `__LINE__`; a file's own `size_t`;
        // a helper's static local read by its own `++n`; a used compound assignment; C++
        // conversion operators and constructors of unread locals; Java's `\u000a` in a comment.
        let differ: &[(Language, &str, &str)] = &[
            (Language::Python, "def f(x):\n    return f\"{x=}\"\n", "def f(y):\n    return f\"{y=}\"\n"),
            (Language::Python, "def f(x):\n    unused = 1\n    return len(locals()) + x\n", "def f(x):\n    return len(locals()) + x\n"),
            (Language::Python, "def f(x):\n    fi = x\n    \u{fb01} = 2\n    return fi\n", "def f(x):\n    fi = x\n    gi = 2\n    return fi\n"),
            (Language::Python, "def f(x):\n    y = 5\n    return eval(\"y\") + x\n", "def f(x):\n    y = 6\n    return eval(\"y\") + x\n"),
            (Language::Python, "import sys\n\ndef f(x):\n    return x + sys._getframe().f_lineno\n", "import sys\n\n\ndef f(x):\n    return x + sys._getframe().f_lineno\n"),
            (Language::C, "#define R (k * 2)\nint f(int x) { int k = x; return R; }", "#define R (k * 2)\nint f(int x) { int k = 7; return R; }"),
            (Language::C, "int k = 100;\n#define R (k * 2)\nint f(int x) { int k = x; return R; }", "int k = 100;\n#define R (k * 2)\nint f(int x) { int j = x; return R; }"),
            (Language::C, "#define TWICE_X (x * 2)\nint f(int x) { int y = x++; return y + TWICE_X; }", "#define TWICE_X (x * 2)\nint f(int x) { int y = x; return y + TWICE_X; }"),
            (Language::C, "#define SQ(v) v * v\nint f(int a, int b) { return SQ((a + b)); }", "#define SQ(v) v * v\nint f(int a, int b) { return SQ(a + b); }"),
            (Language::C, "#define NAME(v) #v\nint f(int x) { return NAME(x)[0] + x; }", "#define NAME(v) #v\nint f(int y) { return NAME(y)[0] + y; }"),
            (Language::C, "const char *f(int x) { return __func__; }", "const char *f(int y) { return __func__; }"),
            (Language::C, "int f(int x) { return x + __LINE__; }", "\nint f(int x) { return x + __LINE__; }"),
            (Language::C, "typedef long size_t;\nint f(long v) { size_t x = v; return x > 0; }", "typedef long size_t;\nint f(long v) { size_t x = v; return x != 0; }"),
            (Language::C, "static int g(void) { static int n = 0; return ++n; }\nint f(int x) { g(); return g() + x; }", "static int g(void) { int n = 0; return ++n; }\nint f(int x) { g(); return g() + x; }"),
            (Language::C, "int f(int x) { int n = 5; return (n += 1) + x; }", "int f(int x) { int n = 6; return (n += 1) + x; }"),
            (Language::Cpp, "static int counter = 0;\nstruct W { operator int() { counter += 10; return 1; } };\nint f(int x) { W w; int unused = w; return x + counter; }", "static int counter = 0;\nstruct W { operator int() { counter += 10; return 1; } };\nint f(int x) { W w; return x + counter; }"),
            (Language::Cpp, "static int counter = 0;\nstruct Tick { Tick(int v) { counter += v; } };\nint f(int x) { Tick t = 5; return x + counter; }", "static int counter = 0;\nstruct Tick { Tick(int v) { counter += v; } };\nint f(int x) { return x + counter; }"),
            (Language::Java, "class C { static int f(int x) {\n // bump \\u000a x = x + 1;\n return x; } }", "class C { static int f(int x) {\n // bump x = x + 1;\n return x; } }"),
        ];
        for (lang, a, b) in differ {
            assert!(!proved(*lang, a, b, "f"), "{a}\n---\n{b}");
        }
        assert!(proved(
            Language::Cpp,
            "int f(int x) { int t = 5; return x; }",
            "int f(int x) { return x; }",
            "f"
        ));
    }

    #[test]
    fn what_the_compiler_reads_otherwise_than_the_grammar_gets_no_proof() {
        // Each pair differs when run (a second adversarial probe, 346 pairs): a lone carriage
        // return ends a comment for the compiler; a PEP 263 encoding; an f-string inside an
        // implicit concatenation runs code; `extern` in a block names a global; a C++
        // user-defined literal calls an operator; `decltype((y))` is a reference; a macro
        // stringizes its argument's spelling; a trigraph continues a comment; a Python
        // parameter may be passed by keyword.
        let differ: &[(Language, &str, &str)] = &[
            (Language::Python, "def f(x):\n    # note\r    x = x + 1\n    return x\n", "def f(x):\n    # note    x = x + 1\n    return x\n"),
            (Language::C, "int f(int x) {\n    // note\rx = x + 1;\n    return x;\n}\n", "int f(int x) {\n    // note x = x + 1;\n    return x;\n}\n"),
            (Language::Java, "class P { static int f(int x) {\n // a\r x = x * 3;\n return x; } }", "class P { static int f(int x) {\n // a x = x * 5;\n return x; } }"),
            (Language::Python, "# -*- coding: latin-1 -*-\ndef f(x):\n    return len(\"\u{e9}\") + x\n", "def f(x):\n    return len(\"\u{e9}\") + x\n"),
            (Language::Python, "def f(x):\n    y = \"a\" f\"{10 // x}\"\n    return x\n", "def f(x):\n    return x\n"),
            (Language::Python, "def f(x):\n    y = f\"{10 // x}\" \"tail\"\n    return x\n", "def f(x):\n    return x\n"),
            (Language::C, "int y = 1;\nint h(void) { return y; }\nint f(int x) {\n    extern int y;\n    y = 5;\n    return x + h();\n}\n", "int y = 1;\nint h(void) { return y; }\nint f(int x) {\n    extern int y;\n    return x + h();\n}\n"),
            (Language::Cpp, "int g = 0;\nint operator\"\"_t(unsigned long long v) { g += (int)v; return 0; }\nint f(int x) {\n    int y = 5_t;\n    return x + g;\n}\n", "int g = 0;\nint operator\"\"_t(unsigned long long v) { g += (int)v; return 0; }\nint f(int x) {\n    return x + g;\n}\n"),
            (Language::Cpp, "int f(int x) {\n    int y = x;\n    decltype((y)) r = y;\n    r = r + 1;\n    return y;\n}\n", "int f(int x) {\n    int y = x;\n    decltype(y) r = y;\n    r = r + 1;\n    return y;\n}\n"),
            (Language::C, "#include <string.h>\n#define S(e) #e\nint f(int x) {\n    return x + (int)strlen(S(x+1));\n}\n", "#include <string.h>\n#define S(e) #e\nint f(int x) {\n    return x + (int)strlen(S(x + 1));\n}\n"),
            (Language::C, "#define S(e) #e\n#define T(e) S(e)\nint f(int x) {\n    return x + T(x/* c */+1)[1];\n}\n", "#define S(e) #e\n#define T(e) S(e)\nint f(int x) {\n    return x + T(x+1)[1];\n}\n"),
            (Language::C, "int f(int x) {\n    // note ??/\n    x = x + 1;\n    return x;\n}\n", "int f(int x) {\n    // note\n    x = x + 1;\n    return x;\n}\n"),
            (Language::Python, "def f(*, a, b):\n    return a - b\n", "def f(*, b, a):\n    return b - a\n"),
            (Language::Python, "def f(a, b):\n    return a - b\n", "def f(b, a):\n    return b - a\n"),
        ];
        for (lang, a, b) in differ {
            assert!(!proved(*lang, a, b, "f"), "{a}\n---\n{b}");
        }
        // The rules still prove what they proved where none of this is present.
        assert!(proved(
            Language::Python,
            "def f(x):\n    y = \"a\" \"b\"\n    return x\n",
            "def f(x):\n    return x\n",
            "f"
        ));
        assert!(proved(
            Language::C,
            "int f(int x) {\n    int y = 5;\n    return (x + 1);\n}\n",
            "int f(int x) {\n    return x + 1;\n}\n",
            "f"
        ));
        assert!(proved(
            Language::Python,
            "def f(a, b):\n    t = a - b\n    return t\n",
            "def f(a, b):\n    u = a - b\n    return u\n",
            "f"
        ));
    }

    #[test]
    fn an_unseen_macro_after_a_sequence_point_keeps_a_returned_update() {
        // `hdr.h` may hold `#define PEEK (printf("%d", k), 0)`: it reads `k` after `k++`.
        let h = "#include \"hdr.h\"\n";
        for (a, b) in [
            ("return k++, PEEK;", "return k, PEEK;"),
            ("return k++ && PEEK;", "return k && PEEK;"),
            ("return k++ ? PEEK : 0;", "return k ? PEEK : 0;"),
        ] {
            let a = format!("{h}int f(int x) {{ int k = x * 3; {a} }}\n");
            let b = format!("{h}int f(int x) {{ int k = x * 3; {b} }}\n");
            assert!(!proved(Language::C, &a, &b, "f"), "{a}");
        }
        let a = format!("{h}int f(int x) {{ int k = x * 3; return k++ + 1; }}\n");
        let b = format!("{h}int f(int x) {{ int k = x * 3; return k + 1; }}\n");
        assert!(proved(Language::C, &a, &b, "f"));
    }

    #[test]
    fn a_macro_that_reads_names_makes_only_the_functions_that_use_it_opaque() {
        // GNU make's own macros are used all over the file; a mutant of a function that uses
        // none of them is still proved, as a whole program.
        let log = "#define LOG(m) fprintf(stderr, \"%s %d\\n\", m, depth)\nstatic int depth;\nvoid note(const char *m) { LOG(m); }\n";
        let a =
            format!("{log}char *f(char *p, int n) {{ char *r = p + n; note(p); return r--; }}\n");
        let b = format!("{log}char *f(char *p, int n) {{ char *r = p + n; note(p); return r; }}\n");
        assert!(program(Language::C, &a, &b, "f"));
        // The macro used in the compared function: names and updates stay as written.
        let uses = "#define R (k * 2)\n";
        let c = format!("{uses}int f(int x) {{ int k = x; return R + k--; }}\n");
        let d = format!("{uses}int f(int x) {{ int k = x; return R + k; }}\n");
        assert!(!proved(Language::C, &c, &d, "f"));
        // Used in another function only: this one's locals are its own.
        let e = format!(
            "{uses}int g(int k) {{ return R; }}\nint f(int x) {{ int k = x; return k--; }}\n"
        );
        let g = format!(
            "{uses}int g(int k) {{ return R; }}\nint f(int y) {{ int j = y; return j; }}\n"
        );
        assert!(program(Language::C, &e, &g, "f"));
    }

    #[test]
    fn file_and_line_names_are_equal_only_between_versions_of_one_file() {
        let log = "void fatal(const char *m) { printf(\"%s:%d %s\", __FILE__, __LINE__, m); }\n";
        let a = format!("{log}char *f(char *p) {{ return p++; }}\n");
        let b = format!("{log}char *f(char *p) {{ return p; }}\n");
        let moved = format!("\n{log}char *f(char *p) {{ return p; }}\n");
        let parse = |t: &str| ParsedFile::parse(Language::C, t);
        let (fa, fb, fm) = (parse(&a), parse(&b), parse(&moved));
        let ga = select_function(&fa, Some("f")).unwrap();
        let gb = select_function(&fb, Some("f")).unwrap();
        let gm = select_function(&fm, Some("f")).unwrap();
        let never = Cancel::never();
        // A program and its mutant: the same file name, the same lines.
        assert_eq!(
            prove_versions_equivalent((&fa, &ga), (&fb, &gb), &never),
            Ok(true)
        );
        // Two files (`a.c`, `b.c`): `__FILE__` differs; a moved `__LINE__` differs.
        assert!(prove_program_equivalent((&fa, &ga), (&fb, &gb), &never).is_err());
        assert!(prove_versions_equivalent((&fa, &ga), (&fm, &gm), &never).is_err());
    }

    #[test]
    fn an_unseen_project_header_keeps_names_and_arguments_as_written() {
        let h = "#include \"defs.h\"\n";
        let c = |a: &str, b: &str| proved(Language::C, &format!("{h}{a}"), &format!("{h}{b}"), "f");
        // Nothing of the function runs after `return`, and no macro sees a comparison
        // outside call arguments.
        assert!(c(
            "char *f(char *p) { return p++; }",
            "char *f(char *p) { return p; }"
        ));
        assert!(c(
            "int f(char *p) { if (p > 0) return 1; return 0; }",
            "int f(char *p) { if (p != 0) return 1; return 0; }"
        ));
        // A call may be a header macro that evaluates its argument twice; a local may be
        // read by an object-like macro.
        assert!(!c(
            "int f(char *p, char *q) { return g(p++, q); }",
            "int f(char *p, char *q) { return g(p, q); }"
        ));
        assert!(!c(
            "int f(int x) { int k = x; return R; }",
            "int f(int x) { int j = x; return R; }"
        ));
        assert!(!c(
            "int f(int x) { int k = 1; return x; }",
            "int f(int x) { return x; }"
        ));
        // The standard library's functions evaluate each argument once, and an unseen header
        // may not redefine them once their own header is included (C11 7.1.3, 7.1.4).
        let std = |a: &str, b: &str| {
            let h = format!("{h}#include <string.h>\n");
            proved(Language::C, &format!("{h}{a}"), &format!("{h}{b}"), "f")
        };
        assert!(std(
            "int f(char *p, char *q) { return !strcmp(p++, q); }",
            "int f(char *p, char *q) { return !strcmp(p, q); }"
        ));
        // ... not without that header, not where the file defines the name, not for
        // another function, not where the name is read twice, not outside a `return`.
        assert!(!c(
            "int f(char *p, char *q) { return !strcmp(p++, q); }",
            "int f(char *p, char *q) { return !strcmp(p, q); }"
        ));
        assert!(!std(
            "#define strcmp(a, b) my_cmp(a, b, a)\nint f(char *p, char *q) { return !strcmp(p++, q); }",
            "#define strcmp(a, b) my_cmp(a, b, a)\nint f(char *p, char *q) { return !strcmp(p, q); }"
        ));
        assert!(!std(
            "int f(char *p, char *q) { return !strncmp(p++, q, 1) + g(p, q); }",
            "int f(char *p, char *q) { return !strncmp(p, q, 1) + g(p, q); }"
        ));
        assert!(!std(
            "int f(char *p, char *q) { return !g(p++, q); }",
            "int f(char *p, char *q) { return !g(p, q); }"
        ));
        assert!(!std(
            "int f(char *p, char *q) { int r = strcmp(p++, q); return r; }",
            "int f(char *p, char *q) { int r = strcmp(p, q); return r; }"
        ));
        // Without the header, the same pairs are proved.
        let plain = |a: &str, b: &str| proved(Language::C, a, b, "f");
        assert!(plain(
            "int f(int x) { int k = 1; return x; }",
            "int f(int x) { return x; }"
        ));
    }

    #[test]
    fn a_proof_covers_the_helpers_the_entry_calls() {
        // EqBench-style: identical entry functions, different helpers.
        let old = "class OldV { private int lib(int n) { return n + 1; } public int f(int x) { if (x < 5) { return lib(x); } return 0; } }";
        let new = "class NewV { private int lib(int n) { return n + 2; } public int f(int x) { if (x < 5) { return lib(x); } return 0; } }";
        let same_helper = "class NewV { private int lib(int k) { return k + 1; } public int f(int y) { if (y < 5) { return lib(y); } return 0; } }";
        assert!(
            !program(Language::Java, old, new, "f"),
            "the helpers differ"
        );
        assert!(
            program(Language::Java, old, same_helper, "f"),
            "renamed, same helper"
        );
        let c_old = "static int g(int a) { return a * 2; }\nint f(int x) { return g(x) + 1; }\n";
        let c_new = "static int g(int a) { return a * 3; }\nint f(int x) { return g(x) + 1; }\n";
        assert!(!program(Language::C, c_old, c_new, "f"));
        let py_old = "def h(v):\n    return v\n\ndef f(x):\n    return h(x)\n";
        let py_new = "def f(x):\n    return h(x)\n";
        assert!(
            !program(Language::Python, py_old, py_new, "f"),
            "helper on one side only"
        );
    }

    #[test]
    fn a_proof_covers_the_constants_and_fields_the_file_declares() {
        let old = "class A { static final int K = 3; int f(int x) { return x + K; } }";
        let new = "class B { static final int K = 4; int f(int x) { return x + K; } }";
        let same = "class B { static final int K = 3; int f(int y) { return y + K; } }";
        assert!(!program(Language::Java, old, new, "f"));
        assert!(program(Language::Java, old, same, "f"));
        let c_old = "int limit = 10;\nint f(int x) { return x < limit; }\n";
        let c_new = "int limit = 11;\nint f(int x) { return x < limit; }\n";
        assert!(!program(Language::C, c_old, c_new, "f"));
    }

    #[test]
    fn a_post_update_nothing_reads_again_is_dropped() {
        let c =
            |body: &str| format!("char *f(char *s, unsigned n) {{\n    char *r = s;\n{body}\n}}\n");
        // The returned value is the old one; the local ends with the call.
        assert!(same(
            Language::C,
            &c("    return r;"),
            &c("    return r++;")
        ));
        assert!(same(
            Language::C,
            &c("    return r;"),
            &c("    return r--;")
        ));
        // A last use in a call, outside every loop.
        let call = |arg: &str| c(&format!("    g(s, {arg});\n    return s;"));
        assert!(same(Language::C, &call("n + 1"), &call("n++ + 1")));
        // Read again after the statement, read twice in it, in a loop, prefix, address taken,
        // static: all kept.
        assert!(!same(
            Language::C,
            &c("    g(r);\n    return r;"),
            &c("    g(r++);\n    return r;")
        ));
        assert!(!same(
            Language::C,
            &c("    return g(r, r);"),
            &c("    return g(r++, r);")
        ));
        let looped = |arg: &str| {
            c(&format!(
                "    while (n) {{ g({arg}); h(r); }}\n    return s;"
            ))
        };
        assert!(!same(Language::C, &looped("r"), &looped("r++")));
        assert!(!same(
            Language::C,
            &c("    return r;"),
            &c("    return ++r;")
        ));
        let addressed = |ret: &str| c(&format!("    char **q = &r;\n    g(q);\n    {ret}"));
        assert!(!same(
            Language::C,
            &addressed("return g2(r);"),
            &addressed("return g2(r++);")
        ));
        let st = |ret: &str| format!("int f(void) {{\n    static int k = 0;\n    {ret}\n}}\n");
        assert!(!same(Language::C, &st("return k;"), &st("return k++;")));
        // A goto may lead back before the statement.
        let jumps = |arg: &str| {
            c(&format!(
                "again:\n    g({arg});\n    if (n) goto again;\n    return s;"
            ))
        };
        assert!(!same(Language::C, &jumps("n"), &jumps("n--")));
        // Java: `finally` runs after the return value is computed.
        let j = |ret: &str| {
            format!("class A {{ int k; int f(int x) {{ try {{ {ret} }} finally {{ k = x; }} }} }}")
        };
        assert!(!same(Language::Java, &j("return x;"), &j("return x++;")));
        let j2 = |ret: &str| format!("class A {{ int f(int x) {{ {ret} }} }}");
        assert!(same(Language::Java, &j2("return x;"), &j2("return x++;")));
        // C++: a reference parameter outlives the call, and a reference or a constructor taking
        // `int&` aliases a local with no `&` in sight: no C++ at all.
        let r = |ret: &str| format!("int f(int &x) {{\n    {ret}\n}}\n");
        assert!(!same(Language::Cpp, &r("return x;"), &r("return x++;")));
        let alias = |ret: &str| format!("int f(int x) {{\n    Guard g(x);\n    {ret}\n}}\n");
        assert!(!same(
            Language::Cpp,
            &alias("return x;"),
            &alias("return x++;")
        ));
    }

    #[test]
    fn zero_comparisons_of_unsigned_values_and_c_pointers_cannot_see_a_sign() {
        let c = |cond: &str| {
            format!("int f(unsigned n, char *p, int i) {{\n    if ({cond}) return 1;\n    return 0;\n}}\n")
        };
        assert!(same(Language::C, &c("n != 0"), &c("n > 0")));
        assert!(same(Language::C, &c("n == 0"), &c("n <= 0")));
        assert!(same(Language::C, &c("0 != n"), &c("0 < n")));
        assert!(same(Language::C, &c("p != 0"), &c("p > 0")));
        assert!(same(Language::C, &c("p == NULL"), &c("p <= NULL")));
        // A signed value has a sign; `>=` is not `==`.
        assert!(!same(Language::C, &c("i != 0"), &c("i > 0")));
        assert!(!same(Language::C, &c("n == 0"), &c("n >= 0")));
        assert!(!same(Language::C, &c("n != 1"), &c("n > 1")));
        // C++ rejects ordered pointer comparisons with zero: no rewrite there.
        assert!(!same(Language::Cpp, &c("p != 0"), &c("p > 0")));
        assert!(same(Language::Cpp, &c("n != 0"), &c("n > 0")));
        // Java `char` is unsigned.
        let j = |cond: &str| {
            format!("class A {{ int f(char c) {{ if ({cond}) return 1; return 0; }} }}")
        };
        assert!(same(Language::Java, &j("c != 0"), &j("c > 0")));
        let j = |cond: &str| {
            format!("class A {{ int f(int c) {{ if ({cond}) return 1; return 0; }} }}")
        };
        assert!(!same(Language::Java, &j("c != 0"), &j("c > 0")));
    }

    #[test]
    fn a_file_with_syntax_errors_is_proved_through_its_only_changed_function() {
        let file = |ret: &str| {
            format!("#endif\nint g(int);\nint f(int x) {{\n    int y = g(x);\n    {ret}\n}}\n@@@ garbage\n")
        };
        let proved = |a: &str, b: &str| {
            let fa = ParsedFile::parse(Language::C, file(a));
            let fb = ParsedFile::parse(Language::C, file(b));
            let ga = select_function(&fa, Some("f")).unwrap();
            let gb = select_function(&fb, Some("f")).unwrap();
            prove_program_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never())
        };
        assert_eq!(proved("return y;", "return y++;"), Ok(true));
        assert_eq!(proved("return y;", "return y + 1;"), Ok(false));
        // The rest of the text differs: no proof.
        let fa = ParsedFile::parse(Language::C, file("return y;"));
        let fb = ParsedFile::parse(Language::C, file("return y;").replace("@@@", "@@"));
        let ga = select_function(&fa, Some("f")).unwrap();
        let gb = select_function(&fb, Some("f")).unwrap();
        assert!(prove_program_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never()).is_err());
    }

    fn whole(lang: Language, a: &str, b: &str) -> bool {
        let fa = ParsedFile::parse(lang, a);
        let fb = ParsedFile::parse(lang, b);
        prove_files_equivalent((&fa, None), (&fb, None), &Cancel::never()).unwrap()
    }

    #[test]
    fn module_code_keeps_its_layout() {
        // Python indentation is meaning: inside the loop vs after it.
        let inside = "X = 1\nfor i in range(3):\n    X *= 2\n\ndef f(a):\n    return a + X\n";
        let after = "X = 1\nfor i in range(3):\n    pass\nX *= 2\n\ndef f(a):\n    return a + X\n";
        assert!(!program(Language::Python, inside, after, "f"));
        let reflowed =
            "X = 1\nfor i in range(3):\n    X *= 2   # twice\n\n\ndef f(a):\n    return a + X\n";
        assert!(program(Language::Python, inside, reflowed, "f"));
    }

    #[test]
    fn imports_and_includes_are_part_of_the_proof() {
        let a = "import math as m\n\ndef f(x):\n    return m.sqrt(x)\n";
        let b = "import cmath as m\n\ndef f(x):\n    return m.sqrt(x)\n";
        assert!(!program(Language::Python, a, b, "f"));
        let c1 = "#include <stdio.h>\n#define K 3\nint f(int x) { return x * K; }\n";
        let c2 = "#include <stdio.h>\n#define K 4\nint f(int x) { return x * K; }\n";
        assert!(!program(Language::C, c1, c2, "f"));
        let c3 = "#include <stdlib.h>\n#define K 3\nint f(int x) { return x * K; }\n";
        assert!(!program(Language::C, c1, c3, "f"));
        let j1 =
            "import static java.lang.Math.max;\nclass A { int f(int x) { return max(x, 0); } }";
        let j2 =
            "import static java.lang.Math.min;\nclass A { int f(int x) { return max(x, 0); } }";
        assert!(!program(Language::Java, j1, j2, "f"));
    }

    #[test]
    fn constructors_initialisers_and_module_calls_are_compared() {
        let a = "class C:\n    def __init__(self):\n        self.k = 1\n    def f(self, x):\n        return x + self.k\n";
        let b = "class C:\n    def __init__(self):\n        self.k = 2\n    def f(self, x):\n        return x + self.k\n";
        assert!(!program(Language::Python, a, b, "f"));
        let m1 =
            "S = []\ndef setup():\n    S.append(1)\nsetup()\n\ndef f(x):\n    return x + len(S)\n";
        let m2 = "S = []\ndef setup():\n    S.append(2)\n    S.append(2)\nsetup()\n\ndef f(x):\n    return x + len(S)\n";
        assert!(!program(Language::Python, m1, m2, "f"));
        let j1 = "class A { int k; A() { k = 1; } static { System.out.print(1); } int f(int x) { return x + k; } }";
        let j2 = "class A { int k; A() { k = 2; } static { System.out.print(1); } int f(int x) { return x + k; } }";
        let j3 = "class A { int k; A() { k = 1; } static { System.out.print(2); } int f(int x) { return x + k; } }";
        assert!(!program(Language::Java, j1, j2, "f"));
        assert!(!program(Language::Java, j1, j3, "f"));
        assert!(program(Language::Java, j1, j1, "f"));
    }

    #[test]
    fn functions_passed_as_values_are_compared() {
        let a = "def k(v):\n    return v\n\ndef f(xs):\n    return sorted(xs, key=k)\n";
        let b = "def k(v):\n    return -v\n\ndef f(xs):\n    return sorted(xs, key=k)\n";
        assert!(!program(Language::Python, a, b, "f"));
        let p1 = "import functools\ndef g(a, b):\n    return a - b\n\ndef f(x):\n    return functools.partial(g, 1)(x)\n";
        let p2 = "import functools\ndef g(a, b):\n    return b - a\n\ndef f(x):\n    return functools.partial(g, 1)(x)\n";
        assert!(!program(Language::Python, p1, p2, "f"));
        let c1 = "#include <stdlib.h>\nstatic int cmp(const void *a, const void *b) { return *(const int*)a - *(const int*)b; }\nvoid f(int *v, int n) { qsort(v, n, sizeof(int), cmp); }\n";
        let c2 = "#include <stdlib.h>\nstatic int cmp(const void *a, const void *b) { return *(const int*)b - *(const int*)a; }\nvoid f(int *v, int n) { qsort(v, n, sizeof(int), cmp); }\n";
        assert!(!program(Language::C, c1, c2, "f"));
    }

    #[test]
    fn names_inside_f_strings_are_renamed_with_the_locals() {
        // `b` is a local on one side and the global on the other.
        let a = "b = 7\ndef f(a):\n    b = a\n    return f\"{b}\"\n";
        let c = "b = 7\ndef f(a):\n    c = a\n    return f\"{b}\"\n";
        assert!(!program(Language::Python, a, c, "f"));
        let d = "b = 7\ndef f(a):\n    c = a\n    return f\"{c}\"\n";
        assert!(program(Language::Python, a, d, "f"));
        // A store read only by an f-string is not dead.
        assert!(!same(
            Language::Python,
            "def f(a):\n    y = 5\n    return f\"{y}\"\n",
            "def f(a):\n    return f\"{y}\"\n"
        ));
    }

    #[test]
    fn stores_that_can_throw_are_kept() {
        assert!(!same(
            Language::Java,
            "class A { static int f(int a, int b) { int q = a / b; return a; } }",
            "class A { static int f(int a, int b) { return a; } }"
        ));
        assert!(!same(
            Language::C,
            "int f(int a, int b) { int q = a % b; return a; }",
            "int f(int a, int b) { return a; }"
        ));
        assert!(same(
            Language::Java,
            "class A { static int f(int a, int b) { int q = a / 2; return a; } }",
            "class A { static int f(int a, int b) { return a; } }"
        ));
    }

    #[test]
    fn indentation_python_rejects_is_no_proof() {
        let fa = ParsedFile::parse(
            Language::Python,
            "def main():\n    n = int(input())\n    print(n)\n\nmain()\n",
        );
        let fb = ParsedFile::parse(
            Language::Python,
            "def main():\n    n = int(input())\n        print(n)\n\nmain()\n",
        );
        assert!(python_layout_ok(&fa));
        assert!(!python_layout_ok(&fb));
        assert!(prove_files_equivalent((&fa, None), (&fb, None), &Cancel::never()).is_err());
        let top = ParsedFile::parse(Language::Python, "    x = 1\nprint(x)\n");
        assert!(!python_layout_ok(&top));
        let fine = ParsedFile::parse(
            Language::Python,
            "import sys; import os\nif x: y = 1\nclass A:\n  def f(self):\n      return [1,\n   2]\n  # c\n  z = 2\n",
        );
        assert!(python_layout_ok(&fine));
    }

    #[test]
    fn whole_programs_are_compared_from_the_top() {
        let a = "n = int(input())\nprint(n * 2)\n";
        let b = "n = int(input())\nprint(n + n)\n";
        assert!(!whole(Language::Python, a, b));
        let c = "n = int(input())  # read\n\nprint(n * 2)\n";
        assert!(whole(Language::Python, a, c));
        let d = "def main():\n    k = int(input())\n    print(k * 2)\n\nmain()\n";
        let e = "def main():\n    m = int(input())\n    print(m * 2)\n\nmain()\n";
        assert!(whole(Language::Python, d, e));
    }

    #[test]
    fn entry_names_and_class_names_may_differ() {
        let a = "class OldV { int g(int x) { return x; } int f(int x) { return g(x) + 1; } }";
        let b = "class NewV { int g(int y) { return y; } int h(int x) { return g(x) + 1; } }";
        let fa = ParsedFile::parse(Language::Java, a);
        let fb = ParsedFile::parse(Language::Java, b);
        let ga = select_function(&fa, Some("f")).unwrap();
        let gb = select_function(&fb, Some("h")).unwrap();
        assert!(prove_program_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never()).unwrap());
        // A helper on one side only voids the proof, even when nothing calls it.
        let c = "class NewV { int g(int y) { return y; } int unused() { return 0; } int h(int x) { return g(x) + 1; } }";
        let fc = ParsedFile::parse(Language::Java, c);
        let gc = select_function(&fc, Some("h")).unwrap();
        assert!(!prove_program_equivalent((&fa, &ga), (&fc, &gc), &Cancel::never()).unwrap());
    }

    #[test]
    fn alpha_renaming_of_parameters_and_locals() {
        assert!(same(
            Language::Java,
            "class A { int f(int a, int b) { int t = a * 2; return t - b; } }",
            "class B { int g(int x, int y) { int tmp = x * 2; return tmp - y; } }"
        ));
        assert!(same(
            Language::Python,
            "def f(a, b):\n    t = a * 2\n    return t - b\n",
            "def g(a, b):\n    s = a * 2\n    return s - b\n"
        ));
        // A Python parameter's name is seen by a caller that passes it by keyword.
        assert!(!same(
            Language::Python,
            "def f(a, b):\n    t = a * 2\n    return t - b\n",
            "def g(x, y):\n    s = x * 2\n    return s - y\n"
        ));
        assert!(!same(
            Language::Python,
            "def f(a, b):\n    return a - b\n",
            "def g(a, b):\n    return b - a\n"
        ));
    }

    #[test]
    fn for_update_increment_forms_agree_for_integers() {
        let a = "int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }";
        let b = "int f(int n) { int s = 0; for (int i = 0; i < n; i += 1) s += i; return s; }";
        let c = "int f(int n) { int s = 0; for (int i = 0; i < n; ++i) { s += i; } return s; }";
        assert!(same(Language::C, a, b));
        assert!(
            !same(Language::C, a, c),
            "braces differ in structure: no proof, that is fine"
        );
        let d = "int f(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i; return s; }";
        assert!(same(Language::C, a, d));
    }

    #[test]
    fn format_specs_and_sums_with_zero_that_change_the_value_get_no_proof() {
        // The literal text of an f-string's format spec is no child of the grammar's.
        for (x, y) in [
            ("4", "9"),
            ("x", "o"),
            (">4", "<4"),
            (".2f", ".3f"),
            ("4", " 4"),
        ] {
            let a = format!("def f(x):\n    return f\"{{x:{x}}}\"\n");
            let b = format!("def f(x):\n    return f\"{{x:{y}}}\"\n");
            assert!(!same(Language::Python, &a, &b), "{a} {b}");
        }
        // A string part with escapes keeps its text around them.
        assert!(!same(
            Language::Python,
            "def f(x):\n    return f\"ab\\n{x}\"\n",
            "def f(x):\n    return f\"cd\\n{x}\"\n"
        ));
        // Equal specs, renamed locals: still proved.
        assert!(same(
            Language::Python,
            "def f(x):\n    y = x\n    return f\"{y:>4}\"\n",
            "def f(x):\n    z = x\n    return f\"{z:>4}\"\n"
        ));
        // `True + 0` is `1`; a boxed `Integer` unboxes (and `==` compares values, not
        // references); a C++ reference binds to the temporary `y + 0`.
        assert!(!same(
            Language::Python,
            "def f(x: int):\n    return x + 0\n",
            "def f(x: int):\n    return x\n"
        ));
        assert!(!same(
            Language::Java,
            "class A { static boolean f(Integer a, Integer b) { return a + 0 == b + 0; } }",
            "class A { static boolean f(Integer a, Integer b) { return a == b; } }"
        ));
        assert!(!same(
            Language::Cpp,
            "int f(int y) { const int &r = y + 0; y = 7; return r; }",
            "int f(int y) { const int &r = y; y = 7; return r; }"
        ));
        // A C or Java `int` is its own sum with zero; so is an arithmetic operand.
        assert!(same(
            Language::C,
            "int f(int x) { return x + 0; }",
            "int f(int x) { return x; }"
        ));
        assert!(same(
            Language::Python,
            "def f(x: int, y: int):\n    return (x * y) + 0\n",
            "def f(x: int, y: int):\n    return x * y\n"
        ));
    }

    #[test]
    fn integer_identities_only_on_integers() {
        assert!(same(
            Language::Java,
            "class A { static int f(int a, int b) { return a + b * 1; } }",
            "class A { static int f(int a, int b) { return b + 0 + a; } }"
        ));
        // Strings: `s + t` is concatenation, not commutative.
        assert!(!same(
            Language::Java,
            "class A { static String f(String s, String t) { return s + t; } }",
            "class A { static String f(String s, String t) { return t + s; } }"
        ));
        // Floats: x + 0 is not x for -0.0.
        assert!(!same(
            Language::Java,
            "class A { static double f(double x) { return x + 0; } }",
            "class A { static double f(double x) { return x; } }"
        ));
        // Unannotated Python: the operands may be lists or strings.
        assert!(!same(
            Language::Python,
            "def f(a, b):\n    return a + b\n",
            "def f(a, b):\n    return b + a\n"
        ));
        assert!(same(
            Language::Python,
            "def f(a: int, b: int):\n    return a + b\n",
            "def f(a: int, b: int):\n    return b + a\n"
        ));
    }

    #[test]
    fn constant_folding_and_dead_stores() {
        assert!(same(
            Language::C,
            "int f(int x) { int unused = 5; return x * (2 * 3); }",
            "int f(int x) { return x * 6; }"
        ));
        assert!(same(
            Language::Java,
            "class A { double theta(double x1, double x2) { x2 = x1 = 10; return 0.0; } }",
            "class A { double theta(double x1, double x2) { return 0.0; } }"
        ));
        // A store whose value has a side effect is kept.
        assert!(!same(
            Language::C,
            "int f(int x) { int u = g(); return x; }",
            "int f(int x) { return x; }"
        ));
        // Python: only literal stores; `+=` on a possibly shared list is a read.
        assert!(!same(
            Language::Python,
            "def f(xs):\n    y = xs\n    y += [1]\n    return 0\n",
            "def f(xs):\n    return 0\n"
        ));
    }

    #[test]
    fn a_name_used_outside_its_declaring_block_is_not_renamed() {
        // `x` in the return refers to a field in one and a field `y` in the other.
        assert!(!same(
            Language::Java,
            "class A { int x, y; int f() { { int x = 1; } return x; } }",
            "class A { int x, y; int f() { { int y = 1; } return y; } }"
        ));
    }

    #[test]
    fn deep_nesting_gives_no_proof_instead_of_overflowing() {
        let deep = format!(
            "def f(x):\n    return {}x{}\n",
            "(".repeat(400),
            ")".repeat(400)
        );
        let file = ParsedFile::parse(Language::Python, deep.as_str());
        let f = select_function(&file, None).unwrap();
        assert!(canonical(&file, &f, &Cancel::never()).is_err());
        let long = format!("int f(int x) {{ return {}1; }}", "1+".repeat(1_000_000));
        let file = ParsedFile::parse(Language::C, long.as_str());
        if let Ok(f) = select_function(&file, None) {
            assert!(canonical(&file, &f, &Cancel::never()).is_err());
        }
    }
}
