//! The constraint graph, constraint generation from the lowered IR, and the worklist solver.
//!
//! Nodes are pointer-valued places: variables, function return values, the contents of
//! heap and function objects, and temporaries. Each node carries a points-to set of object
//! ids and four kinds of constraints:
//! base (`n ∋ o`), copy (`a ⊆ b`, an edge), load (`dst ⊇ *n`) and store (`*n ⊇ src`),
//! plus indirect calls whose callee is `n` (every function object reaching `n` gets its
//! parameters and return value bound). Solving is Andersen's inclusion-based fixpoint with
//! difference propagation: each node remembers what it already pushed (`prop`) and only the
//! new part is propagated.

use super::lower::{address_of_value, CallIr, Callee, Loc, ObjKey, Val, VarKey};
use super::model::Model;
use crate::syntax::Cancel;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A named constraint node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NodeKey {
    Var(VarKey),
    /// A function's return value.
    Ret(String),
    /// The contents of a function or heap object.
    Content(ObjKey),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct NodeData {
    pub pts: BTreeSet<u32>,
    /// The part of `pts` already propagated along edges and through complex constraints.
    prop: BTreeSet<u32>,
    succ: BTreeSet<u32>,
    /// dst nodes of `dst ⊇ *this`.
    loads: Vec<u32>,
    /// src nodes of `*this ⊇ src`.
    stores: Vec<u32>,
    /// Indirect calls through this node.
    icalls: Vec<u32>,
}

#[derive(Debug, Clone)]
struct ICall {
    args: Vec<Option<u32>>,
    result: u32,
}

/// Why solving stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Incomplete {
    Cancelled,
    WorkLimit,
}

/// Upper bound on elementary propagation steps (set elements moved) before the solver gives
/// up and reports a partial result.
pub const MAX_WORK: u64 = 200_000_000;

#[derive(Debug, Clone, Default)]
pub(crate) struct Graph {
    pub nodes: Vec<NodeData>,
    pub keys: BTreeMap<NodeKey, u32>,
    pub objs: Vec<ObjKey>,
    pub obj_ids: BTreeMap<ObjKey, u32>,
    /// Object id -> its content node.
    pub content: Vec<u32>,
    addr_temps: BTreeMap<u32, u32>,
    icalls: Vec<ICall>,
    bound: BTreeSet<(u32, u32)>,
    worklist: VecDeque<u32>,
    in_worklist: Vec<bool>,
    work: u64,
}

impl Graph {
    fn new_node(&mut self) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(NodeData::default());
        self.in_worklist.push(false);
        id
    }

    pub fn node(&mut self, key: NodeKey) -> u32 {
        if let Some(&id) = self.keys.get(&key) {
            return id;
        }
        let id = self.new_node();
        self.keys.insert(key, id);
        id
    }

    fn var_node(&mut self, function: Option<&str>, name: &str) -> u32 {
        self.node(NodeKey::Var(VarKey {
            function: function.map(str::to_string),
            name: name.to_string(),
        }))
    }

    pub fn obj(&mut self, key: ObjKey) -> u32 {
        if let Some(&id) = self.obj_ids.get(&key) {
            return id;
        }
        let id = self.objs.len() as u32;
        let content = match &key {
            ObjKey::Var(v) => self.node(NodeKey::Var(v.clone())),
            other => self.node(NodeKey::Content(other.clone())),
        };
        self.objs.push(key.clone());
        self.obj_ids.insert(key.clone(), id);
        self.content.push(content);
        if matches!(key, ObjKey::Func(_)) {
            // In C, `*f` is `f` for a function: its contents point to itself.
            self.add_base(content, id);
        }
        id
    }

    pub fn pts_of(&self, node: u32) -> Option<&BTreeSet<u32>> {
        self.nodes.get(node as usize).map(|n| &n.pts)
    }

    pub fn content_of(&self, obj: u32) -> Option<u32> {
        self.content.get(obj as usize).copied()
    }

    fn push(&mut self, n: u32) {
        if let Some(flag) = self.in_worklist.get_mut(n as usize) {
            if !*flag {
                *flag = true;
                self.worklist.push_back(n);
            }
        }
    }

    fn add_base(&mut self, n: u32, obj: u32) {
        if let Some(node) = self.nodes.get_mut(n as usize) {
            if node.pts.insert(obj) {
                self.push(n);
            }
        }
    }

    /// Adds `pts(a) ⊆ pts(b)`; what `a` already propagated flows to `b` at once.
    fn add_edge(&mut self, a: u32, b: u32) {
        if a == b {
            return;
        }
        let Some(node) = self.nodes.get_mut(a as usize) else {
            return;
        };
        if !node.succ.insert(b) || node.prop.is_empty() {
            return;
        }
        let moved: Vec<u32> = node.prop.iter().copied().collect();
        self.union_into(b, &moved);
    }

    fn union_into(&mut self, b: u32, objs: &[u32]) {
        self.work = self.work.saturating_add(objs.len() as u64);
        let Some(target) = self.nodes.get_mut(b as usize) else {
            return;
        };
        let mut changed = false;
        for &o in objs {
            changed |= target.pts.insert(o);
        }
        if changed {
            self.push(b);
        }
    }

    fn add_load(&mut self, dst: u32, ptr: u32) {
        if let Some(node) = self.nodes.get_mut(ptr as usize) {
            node.loads.push(dst);
        }
    }

    fn add_store(&mut self, ptr: u32, src: u32) {
        if let Some(node) = self.nodes.get_mut(ptr as usize) {
            node.stores.push(src);
        }
    }

    fn add_icall(&mut self, callee: u32, args: Vec<Option<u32>>, result: u32) {
        let id = self.icalls.len() as u32;
        self.icalls.push(ICall { args, result });
        if let Some(node) = self.nodes.get_mut(callee as usize) {
            node.icalls.push(id);
        }
    }

    /// Binds actual arguments to the parameters of `function` and its return value to
    /// `result` (a direct call, or an indirect call once the target is known).
    fn bind(
        &mut self,
        model: &Model,
        function: &str,
        args: &[Option<u32>],
        ref_args: &[Option<u32>],
        receiver: Option<u32>,
        result: Option<u32>,
    ) {
        let defs: Vec<(Vec<String>, BTreeSet<String>, bool)> = model
            .defs_of(function)
            .map(|d| (d.params.clone(), d.ref_params.clone(), d.has_this))
            .collect();
        for (params, refs, has_this) in defs {
            for (i, p) in params.iter().enumerate() {
                if p.is_empty() {
                    continue;
                }
                let actual = if refs.contains(p) {
                    ref_args.get(i).copied().flatten()
                } else {
                    args.get(i).copied().flatten()
                };
                if let Some(a) = actual {
                    let formal = self.var_node(Some(function), p);
                    self.add_edge(a, formal);
                }
            }
            if let (true, Some(r)) = (has_this, receiver) {
                let this = self.var_node(Some(function), "this");
                self.add_edge(r, this);
            }
        }
        if let Some(res) = result {
            let ret = self.node(NodeKey::Ret(function.to_string()));
            self.add_edge(ret, res);
        }
    }

    /// Runs the worklist to a fixpoint (or until cancelled / over the work bound).
    pub fn solve(&mut self, model: &Model, cancel: &Cancel) -> Option<Incomplete> {
        let mut steps = 0u64;
        while let Some(n) = self.worklist.pop_front() {
            steps += 1;
            if steps.is_multiple_of(1024) && cancel.is_cancelled() {
                return Some(Incomplete::Cancelled);
            }
            if self.work > MAX_WORK {
                return Some(Incomplete::WorkLimit);
            }
            if let Some(flag) = self.in_worklist.get_mut(n as usize) {
                *flag = false;
            }
            let Some(node) = self.nodes.get_mut(n as usize) else {
                continue;
            };
            let delta: Vec<u32> = node.pts.difference(&node.prop).copied().collect();
            if delta.is_empty() {
                continue;
            }
            node.prop.extend(delta.iter().copied());
            let loads = node.loads.clone();
            let stores = node.stores.clone();
            let icalls = node.icalls.clone();
            let succ: Vec<u32> = node.succ.iter().copied().collect();
            for &o in &delta {
                let Some(c) = self.content_of(o) else {
                    continue;
                };
                for &dst in &loads {
                    self.add_edge(c, dst);
                }
                for &src in &stores {
                    self.add_edge(src, c);
                }
                if icalls.is_empty() {
                    continue;
                }
                let Some(ObjKey::Func(name)) = self.objs.get(o as usize).cloned() else {
                    continue;
                };
                for &ic in &icalls {
                    if !self.bound.insert((ic, o)) {
                        continue;
                    }
                    let Some(call) = self.icalls.get(ic as usize).cloned() else {
                        continue;
                    };
                    // Reference parameters through function pointers are bound by value.
                    self.bind(
                        model,
                        &name,
                        &call.args,
                        &call.args,
                        None,
                        Some(call.result),
                    );
                }
            }
            for s in succ {
                self.union_into(s, &delta);
            }
        }
        None
    }
}

/// Materialises lowered IR into constraints.
pub(crate) struct Gen<'m> {
    pub model: &'m Model,
    pub graph: Graph,
}

impl<'m> Gen<'m> {
    pub fn new(model: &'m Model) -> Self {
        Gen {
            model,
            graph: Graph::default(),
        }
    }

    fn temp(&mut self) -> u32 {
        self.graph.new_node()
    }

    /// A node holding exactly `{obj}` (shared per object).
    fn addr_node(&mut self, key: &ObjKey) -> u32 {
        let o = self.graph.obj(key.clone());
        if let Some(&t) = self.graph.addr_temps.get(&o) {
            return t;
        }
        let t = self.temp();
        self.graph.add_base(t, o);
        self.graph.addr_temps.insert(o, t);
        t
    }

    /// Generates the constraints of a value and returns the node holding it (None: no
    /// pointer value).
    pub fn value(&mut self, v: &Val) -> Option<u32> {
        match v {
            Val::Nothing => None,
            Val::Addr(Loc::Obj(key)) => Some(self.addr_node(key)),
            Val::Addr(Loc::Deref(inner)) => self.value(inner),
            Val::Load(Loc::Obj(key)) => {
                let o = self.graph.obj(key.clone());
                self.graph.content_of(o)
            }
            Val::Load(Loc::Deref(inner)) => {
                let ptr = self.value(inner)?;
                let t = self.temp();
                self.graph.add_load(t, ptr);
                Some(t)
            }
            Val::Union(items) => {
                let nodes: Vec<u32> = items.iter().filter_map(|i| self.value(i)).collect();
                match nodes.as_slice() {
                    [] => None,
                    [one] => Some(*one),
                    _ => {
                        let t = self.temp();
                        for n in nodes {
                            self.graph.add_edge(n, t);
                        }
                        Some(t)
                    }
                }
            }
            Val::Seq(items) => {
                let mut last = None;
                for i in items {
                    last = self.value(i);
                }
                last
            }
            Val::Assign(loc, value) => {
                let src = self.value(value);
                self.store(loc, src);
                src
            }
            Val::Call(call) => self.call(call),
        }
    }

    /// Generates `loc := src`.
    pub fn store(&mut self, loc: &Loc, src: Option<u32>) {
        match loc {
            Loc::Obj(key) => {
                let o = self.graph.obj(key.clone());
                if let (Some(s), Some(c)) = (src, self.graph.content_of(o)) {
                    self.graph.add_edge(s, c);
                }
            }
            Loc::Deref(ptr) => {
                let p = self.value(ptr);
                if let (Some(p), Some(s)) = (p, src) {
                    self.graph.add_store(p, s);
                }
            }
        }
    }

    /// Generates `ret(function) ⊇ value`.
    pub fn returns(&mut self, function: &str, v: &Val) {
        if let Some(n) = self.value(v) {
            let ret = self.graph.node(NodeKey::Ret(function.to_string()));
            self.graph.add_edge(n, ret);
        }
    }

    /// Binds a direct call's arguments (by value, or by address for C++ reference
    /// parameters), receiver and result to each of the named functions.
    fn direct_call(
        &mut self,
        names: &[String],
        actuals: &[Val],
        receiver: Option<u32>,
        result: Option<u32>,
    ) {
        let args: Vec<Option<u32>> = actuals.iter().map(|a| self.value(a)).collect();
        let wants_refs = names
            .iter()
            .any(|n| self.model.defs_of(n).any(|d| !d.ref_params.is_empty()));
        let ref_args: Vec<Option<u32>> = if wants_refs {
            actuals
                .iter()
                .map(|a| self.value(&address_of_value(a)))
                .collect()
        } else {
            Vec::new()
        };
        for name in names {
            self.graph
                .bind(self.model, name, &args, &ref_args, receiver, result);
        }
    }

    fn call(&mut self, call: &CallIr) -> Option<u32> {
        match &call.callee {
            Callee::Defined { names, receiver } => {
                let recv = receiver.as_ref().and_then(|r| self.value(r));
                let result = self.temp();
                self.direct_call(names, &call.args, recv, Some(result));
                Some(result)
            }
            Callee::Indirect(callee) => {
                let f = self.value(callee);
                let args: Vec<Option<u32>> = call.args.iter().map(|a| self.value(a)).collect();
                let result = self.temp();
                if let Some(f) = f {
                    self.graph.add_icall(f, args, result);
                }
                Some(result)
            }
            Callee::Alloc { heap, keeps_arg0 } => {
                let args: Vec<Option<u32>> = call.args.iter().map(|a| self.value(a)).collect();
                let h = self.addr_node(&ObjKey::Heap(heap.clone()));
                match (keeps_arg0, args.first().copied().flatten()) {
                    (true, Some(old)) => {
                        let t = self.temp();
                        self.graph.add_edge(h, t);
                        self.graph.add_edge(old, t);
                        Some(t)
                    }
                    _ => Some(h),
                }
            }
            Callee::CopyMem => {
                let args: Vec<Option<u32>> = call.args.iter().map(|a| self.value(a)).collect();
                let dst = args.first().copied().flatten();
                let src = args.get(1).copied().flatten();
                if let (Some(d), Some(s)) = (dst, src) {
                    let t = self.temp();
                    self.graph.add_load(t, s);
                    self.graph.add_store(d, t);
                }
                dst
            }
            Callee::ReturnsArg0 => {
                let args: Vec<Option<u32>> = call.args.iter().map(|a| self.value(a)).collect();
                args.first().copied().flatten()
            }
            Callee::External => {
                for a in &call.args {
                    self.value(a);
                }
                None
            }
            Callee::New { heap, ctors } => {
                let h = self.addr_node(&ObjKey::Heap(heap.clone()));
                self.direct_call(ctors, &call.args, Some(h), None);
                Some(h)
            }
        }
    }
}
