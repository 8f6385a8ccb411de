//! Statement walking: finds the declarations, expressions and returns of function bodies and
//! of the global scope, lowers them and generates their constraints. Iterative (explicit
//! stack), so nesting depth is not limited by the call stack.

use super::graph::Gen;
use super::lower::{addr, deref, is_expression_kind, Loc, Lowerer, ObjKey, Val, VarKey, MAX_DEPTH};
use super::model::{declarator_has_pointer, declarator_info, type_key, Wrapper};
use super::PointsToError;
use crate::syntax::functions::Function;
use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, ParsedFile};
use tree_sitter::Node;

/// Reports the first over-deep expression a lowerer met.
fn note_depth(lw: &mut Lowerer<'_>, path: &str, errors: &mut Vec<PointsToError>) {
    if let Some(byte) = lw.too_deep.take() {
        errors.push(PointsToError {
            file: path.to_string(),
            line: lw.file.line_of(byte),
            message: format!(
                "expression nested deeper than {MAX_DEPTH} levels; the deeper part was not analysed"
            ),
        });
    }
}

pub(crate) struct Walker<'g, 'm> {
    pub gen: &'g mut Gen<'m>,
    pub cancel: &'g Cancel,
    pub errors: &'g mut Vec<PointsToError>,
    pub steps: usize,
    pub cancelled: bool,
}

impl Walker<'_, '_> {
    fn poll(&mut self) -> bool {
        self.steps += 1;
        if self.steps.is_multiple_of(256) && self.cancel.is_cancelled() {
            self.cancelled = true;
        }
        self.cancelled
    }

    /// Global declarations with initialisers.
    pub fn globals(&mut self, unit: usize, path: &str, file: &ParsedFile) {
        let model = self.gen.model;
        let mut lw = Lowerer::new(model, unit, file, None);
        let mut stack = vec![file.root()];
        while let Some(node) = stack.pop() {
            if self.poll() {
                return;
            }
            match node.kind() {
                kind::FUNCTION_DEFINITION
                | kind::LAMBDA_EXPRESSION
                | kind::FIELD_DECLARATION_LIST
                | kind::ENUMERATOR_LIST => continue,
                kind::DECLARATION => {
                    self.declaration(&mut lw, node);
                    note_depth(&mut lw, path, self.errors);
                    continue;
                }
                _ => {}
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }

    /// The body of one function.
    pub fn function(&mut self, unit: usize, path: &str, file: &ParsedFile, func: &Function<'_>) {
        let Some(body) = func.body else { return };
        let model = self.gen.model;
        let mut lw = Lowerer::new(model, unit, file, Some(func.name.as_str()));
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if self.poll() {
                return;
            }
            let kind = node.kind();
            match kind {
                kind::FUNCTION_DEFINITION | kind::LAMBDA_EXPRESSION if node.id() != body.id() => {
                    // Separate functions; a lambda used as a value is handled by its parent.
                    continue;
                }
                kind::FIELD_DECLARATION_LIST | kind::ENUMERATOR_LIST | kind::TYPE_DEFINITION => {
                    continue
                }
                kind::DECLARATION => {
                    self.declaration(&mut lw, node);
                }
                kind::RETURN_STATEMENT => {
                    let value = {
                        let mut cursor = node.walk();
                        let found = node
                            .named_children(&mut cursor)
                            .find(|c| c.kind() != kind::COMMENT);
                        found
                    };
                    if let Some(e) = value {
                        let v = lw.init_value(e, 0);
                        self.gen.returns(&func.name, &v);
                    }
                }
                kind::FOR_RANGE_LOOP => {
                    self.range_for(&mut lw, node);
                    if let Some(b) = node.child_by_field_name(field::BODY) {
                        stack.push(b);
                    }
                }
                _ if node.id() != body.id() && is_expression_kind(kind) => {
                    let v = lw.val(node, 0);
                    self.gen.value(&v);
                }
                _ => {
                    let mut cursor = node.walk();
                    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                    stack.extend(children.into_iter().rev());
                }
            }
            note_depth(&mut lw, path, self.errors);
        }
    }

    /// `T *p = e, q[2] = {..}, &r = x;`
    fn declaration(&mut self, lw: &mut Lowerer<'_>, node: Node<'_>) {
        let ty = node
            .child_by_field_name(field::TYPE)
            .and_then(|t| type_key(lw.unit, lw.file, t));
        let mut cursor = node.walk();
        let declarators: Vec<Node<'_>> = node
            .children_by_field_name(field::DECLARATOR, &mut cursor)
            .collect();
        for d in declarators {
            if d.kind() != kind::INIT_DECLARATOR {
                continue;
            }
            let (Some(target), Some(value)) = (
                d.child_by_field_name(field::DECLARATOR),
                d.child_by_field_name(field::VALUE),
            ) else {
                continue;
            };
            let Some((name, wrapper)) = declarator_info(lw.file, target) else {
                continue;
            };
            let key = self.declared_key(lw, &name);
            let loc = Loc::Obj(ObjKey::Var(key));
            let v = match wrapper {
                // Binding a reference: it points to the referent.
                Wrapper::Reference => Val::Assign(Box::new(loc), Box::new(addr(lw.loc(value, 0)))),
                Wrapper::Plain | Wrapper::Array if !declarator_has_pointer(target) => {
                    let layout = ty.clone();
                    Val::Seq(lw.init_into(
                        loc,
                        value,
                        layout.as_deref(),
                        wrapper == Wrapper::Array,
                        0,
                    ))
                }
                _ => Val::Assign(Box::new(loc), Box::new(lw.init_value(value, 0))),
            };
            self.gen.value(&v);
        }
    }

    /// The variable a declaration in the current scope introduces.
    fn declared_key(&self, lw: &Lowerer<'_>, name: &str) -> VarKey {
        let model = self.gen.model;
        match lw.func {
            Some(f)
                if model
                    .scopes
                    .get(f)
                    .is_some_and(|s| s.locals.contains_key(name)) =>
            {
                VarKey {
                    function: Some(f.into()),
                    name: name.into(),
                }
            }
            _ => VarKey {
                function: None,
                name: if lw.file.language == crate::syntax::Language::Cpp {
                    super::model::simple_class_name(name).into()
                } else {
                    name.into()
                },
            },
        }
    }

    /// `for (T *e : range)`: e takes the elements of the range (contents of an array).
    fn range_for(&mut self, lw: &mut Lowerer<'_>, node: Node<'_>) {
        let (Some(d), Some(right)) = (
            node.child_by_field_name(field::DECLARATOR),
            node.child_by_field_name(field::RIGHT),
        ) else {
            return;
        };
        let Some((name, wrapper)) = declarator_info(lw.file, d) else {
            return;
        };
        let key = self.declared_key(lw, &name);
        let range = lw.init_value(right, 0);
        let element = deref(range);
        let rhs = if wrapper == Wrapper::Reference {
            addr(element)
        } else {
            Val::Load(element)
        };
        let v = Val::Assign(Box::new(Loc::Obj(ObjKey::Var(key))), Box::new(rhs));
        self.gen.value(&v);
    }
}
