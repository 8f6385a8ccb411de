//! Evaluation of lowered expressions against a solved graph, without generating constraints:
//! "what may this expression point to / designate?" Used to answer questions about arbitrary
//! expressions (alias assertions, claims about `s->next->data`) after the analysis.

use super::graph::{Graph, NodeKey};
use super::lower::{Callee, Loc, Name, ObjKey, Val};
use super::model::Model;
use std::collections::BTreeSet;

pub(crate) struct Eval<'a> {
    pub graph: &'a Graph,
    pub model: &'a Model,
}

impl Eval<'_> {
    fn node_pts(&self, node: Option<u32>) -> BTreeSet<ObjKey> {
        node.and_then(|n| self.graph.pts_of(n))
            .into_iter()
            .flat_map(|p| p.iter())
            .filter_map(|o| self.graph.objs.get(o as usize).cloned())
            .collect()
    }

    /// The points-to set of an object's contents.
    fn contents(&self, obj: &ObjKey) -> BTreeSet<ObjKey> {
        let node = self
            .graph
            .obj_ids
            .get(obj)
            .and_then(|&o| self.graph.content_of(o));
        self.node_pts(node)
    }

    fn ret(&self, function: &str) -> BTreeSet<ObjKey> {
        let node = self.graph.keys.get(&NodeKey::Ret(function.into())).copied();
        self.node_pts(node)
    }

    /// The objects an lvalue may designate.
    pub fn loc(&self, l: &Loc) -> BTreeSet<ObjKey> {
        match l {
            Loc::Obj(key) => BTreeSet::from([key.clone()]),
            Loc::Deref(v) => self.val(v),
        }
    }

    /// The objects an rvalue may point to.
    pub fn val(&self, v: &Val) -> BTreeSet<ObjKey> {
        match v {
            Val::Nothing => BTreeSet::new(),
            Val::Addr(l) => self.loc(l),
            Val::Load(l) => self.loc(l).iter().flat_map(|o| self.contents(o)).collect(),
            Val::Union(items) => items.iter().flat_map(|i| self.val(i)).collect(),
            Val::Seq(items) => items.last().map(|i| self.val(i)).unwrap_or_default(),
            Val::Assign(_, value) => self.val(value),
            Val::Cast(inner, filter) => self
                .val(inner)
                .into_iter()
                .filter(|o| self.graph.admits(*filter, o))
                .collect(),
            Val::Gep(inner, field) => self
                .val(inner)
                .iter()
                .map(|o| o.field(field, &self.model.filter))
                .collect(),
            Val::Call(call) => match &call.callee {
                Callee::Defined { names, .. } => names.iter().flat_map(|n| self.ret(n)).collect(),
                Callee::Indirect(f) => self
                    .val(f)
                    .into_iter()
                    .filter_map(|o| match o {
                        ObjKey::Func(name) => Some(self.ret(&name)),
                        _ => None,
                    })
                    .flatten()
                    .collect(),
                Callee::Alloc { heap, keeps_arg0 } => {
                    let mut out = BTreeSet::from([ObjKey::Heap(Name::clone(heap))]);
                    if *keeps_arg0 {
                        if let Some(a) = call.args.first() {
                            out.extend(self.val(a));
                        }
                    }
                    out
                }
                Callee::New { heap, .. } => BTreeSet::from([ObjKey::Heap(Name::clone(heap))]),
                Callee::CopyMem | Callee::ReturnsArg0 => {
                    call.args.first().map(|a| self.val(a)).unwrap_or_default()
                }
                Callee::External => BTreeSet::new(),
            },
        }
    }
}
