//! The constraint graph, constraint generation from the lowered IR, and the worklist solver.
//!
//! Nodes are pointer-valued places: variables, function return values, the contents of
//! heap and function objects, and temporaries. Each node carries a points-to set of object
//! ids and four kinds of constraints:
//! base (`n ∋ o`), copy (`a ⊆ b`, an edge), load (`dst ⊇ *n`) and store (`*n ⊇ src`),
//! plus indirect calls whose callee is `n` (every function object reaching `n` gets its
//! parameters and return value bound). Solving is Andersen's inclusion-based fixpoint with
//! difference propagation: a node's set is what it already pushed (`pts`) and what it has not
//! pushed yet (`delta`, disjoint from `pts`); a visit propagates only `delta` and moves it
//! into `pts`, so no node holds its set twice.

use super::bits::Bits;
use super::lower::{address_of_value, CallIr, Callee, FieldFilter, Loc, Name, ObjKey, Val, VarKey};
use super::model::Model;
use super::types::{self, TypeClasses, FILTERS, NO_FILTER, OBJ_FUNC, OBJ_UNKNOWN};
use crate::syntax::Cancel;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

/// A named constraint node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NodeKey {
    Var(VarKey),
    /// A function's return value.
    Ret(super::lower::Name),
    /// The contents of a function or heap object.
    Content(ObjKey),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct NodeData {
    /// The part of the node's points-to set already propagated along edges and through
    /// complex constraints (the whole set once solving is done: see [`Graph::solve`]).
    pub pts: Bits,
    /// The part not propagated yet (disjoint from `pts`); empty unless the node is queued.
    delta: Bits,
    succ: Succ,
    /// The complex constraints, which few nodes have (about one in five on redis): kept out
    /// of line, so a node without them costs one pointer for all five lists.
    complex: Option<Box<Complex>>,
}

/// A node's copy-edge successors, iterated in ascending order: a sorted vector while there
/// are few (most nodes have one or two, and a B-tree node costs 56 bytes however few it
/// holds), a B-tree once there are more than [`Succ::SMALL`] (inserts stay logarithmic).
#[derive(Debug, Clone)]
enum Succ {
    Small(Vec<u32>),
    Large(BTreeSet<u32>),
}

impl Default for Succ {
    fn default() -> Self {
        Succ::Small(Vec::new())
    }
}

impl Succ {
    const SMALL: usize = 32;

    /// Adds `b`; false when it was there.
    fn insert(&mut self, b: u32) -> bool {
        match self {
            Succ::Large(set) => set.insert(b),
            Succ::Small(list) => match list.binary_search(&b) {
                Ok(_) => false,
                Err(at) if list.len() < Self::SMALL => {
                    list.insert(at, b);
                    true
                }
                Err(_) => {
                    let mut set: BTreeSet<u32> = list.drain(..).collect();
                    set.insert(b);
                    *self = Succ::Large(set);
                    true
                }
            },
        }
    }

    /// The successors, ascending.
    fn extend_into(&self, out: &mut Vec<u32>) {
        match self {
            Succ::Small(list) => out.extend_from_slice(list),
            Succ::Large(set) => out.extend(set.iter().copied()),
        }
    }
}

/// The complex constraints of one node (see [`NodeData::complex`]).
#[derive(Debug, Clone, Default)]
struct Complex {
    /// dst nodes of `dst ⊇ *this`.
    loads: Vec<u32>,
    /// src nodes of `*this ⊇ src`.
    stores: Vec<u32>,
    /// Indirect calls through this node.
    icalls: Vec<u32>,
    /// Field addresses `dst ⊇ {o.f | o ∈ pts(this)}`: (dst, field id).
    geps: Vec<(u32, u32)>,
    /// Struct copies this node takes part in (as source or destination address).
    copies: Vec<u32>,
}

/// Deferred work of the field-copy closure (processed by [`Graph::drain`], iteratively):
/// field `fid` of copy-predecessor `pred` flows into the field object `field`. Fields are
/// demanded backwards: a field object exists only where a field is accessed, or where it
/// feeds (through struct copies) a field that is, so copies never invent fields.
#[derive(Debug, Clone, Copy)]
struct Pending {
    pred: u32,
    field: u32,
    fid: u32,
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

/// Propagation work (bit-set words moved, objects paired by struct copies) allowed per byte
/// of source: solving is bounded in proportion to the input, as parsing is, so the analysis
/// stays within a constant factor of parse time on inputs whose points-to sets explode.
pub const WORK_PER_BYTE: u64 = 6;
/// The least work allowed, whatever the input's size (small programs always converge well
/// within it).
pub const MIN_WORK: u64 = 10_000_000;
/// The most work allowed, whatever the input's size.
pub const MAX_WORK: u64 = 200_000_000;

/// The work bound for `source_bytes` of input: [`WORK_PER_BYTE`] per byte, at least
/// [`MIN_WORK`], at most [`MAX_WORK`]. Past it the solver stops and reports a partial result.
pub fn work_budget(source_bytes: usize) -> u64 {
    (source_bytes as u64)
        .saturating_mul(WORK_PER_BYTE)
        .clamp(MIN_WORK, MAX_WORK)
}

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
    /// Interned field names.
    field_names: Vec<String>,
    field_ids: HashMap<String, u32>,
    /// (object, field id) -> the field's object (the object itself where fields collapse).
    field_cache: HashMap<(u32, u32), u32>,
    /// Object -> its field objects created so far: (field id, object).
    fields_of: Vec<Vec<(u32, u32)>>,
    /// Object -> objects whose fields are copied into its fields (struct copies).
    copy_pred: Vec<Vec<u32>>,
    copy_pairs: HashSet<(u32, u32)>,
    /// Struct-copy constraints between two address nodes: (source, destination, hub). Every
    /// source object copies into the hub object and the hub into every destination object,
    /// which costs |src| + |dst| pairs instead of |src| x |dst|.
    copies: Vec<(u32, u32, u32)>,
    pending: Vec<Pending>,
    draining: bool,
    /// Node -> the object whose contents it is.
    owner: Vec<u32>,
    /// Which objects have which fields.
    filter: FieldFilter,
    /// Declared-type classes (see [`types`]).
    classes: TypeClasses,
    /// Node -> its declared-type filter.
    place_filter: Vec<u32>,
    /// Filter -> the objects it refuses (grown as objects are created).
    refused: [Bits; FILTERS],
    /// Reused buffer for a visited node's successors.
    succ_buf: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl NodeData {
    /// The node's complex constraints, made on first use.
    fn complex(&mut self) -> &mut Complex {
        self.complex.get_or_insert_with(Box::default)
    }
}

impl Graph {
    fn new_node(&mut self) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(NodeData::default());
        self.in_worklist.push(false);
        self.owner.push(NONE);
        self.place_filter.push(NO_FILTER);
        id
    }

    /// (object class, place filter) of field `f` of `base`: by the base's declared struct
    /// type when known, else by the field name over all structs.
    fn member_class(&self, base: &ObjKey, f: &str) -> Option<(u32, u32)> {
        let layout = match base {
            ObjKey::Var(v) => self.filter.vars.get(v),
            ObjKey::Field(_, g) => self.filter.fields.get(&**g),
            _ => None,
        };
        layout
            .and_then(|l| self.classes.members.get(&(l.clone(), f.to_string())))
            .or_else(|| self.classes.fields.get(f))
            .copied()
    }

    /// The declared-type filter of a named node.
    fn filter_of(&self, key: &NodeKey) -> u32 {
        match key {
            NodeKey::Var(v) => self.classes.vars.get(v).map_or(NO_FILTER, |c| c.1),
            NodeKey::Ret(f) => self.classes.returns.get(&**f).copied().unwrap_or(NO_FILTER),
            NodeKey::Content(ObjKey::Field(base, f)) => {
                self.member_class(base, f).map_or(NO_FILTER, |c| c.1)
            }
            NodeKey::Content(_) => NO_FILTER,
        }
    }

    /// The class of an object.
    fn class_of(&self, key: &ObjKey) -> u32 {
        match key {
            ObjKey::Var(v) => self.classes.vars.get(v).map_or(OBJ_UNKNOWN, |c| c.0),
            ObjKey::Func(_) => OBJ_FUNC,
            ObjKey::Field(base, f) => self.member_class(base, f).map_or(OBJ_UNKNOWN, |c| c.0),
            ObjKey::Heap(_) | ObjKey::Hub(_) => OBJ_UNKNOWN,
        }
    }

    /// Gives a (fresh) node a declared-type filter.
    fn set_filter(&mut self, n: u32, filter: u32) {
        if let Some(slot) = self.place_filter.get_mut(n as usize) {
            *slot = filter;
        }
    }

    /// Does a place with `filter` take object `o`?
    pub fn admits(&self, filter: u32, o: &ObjKey) -> bool {
        !types::rejects(filter, self.class_of(o))
    }

    /// The objects node `n`'s declared type refuses (`None`: it takes anything). Takes the
    /// two fields it reads, so a node's set can be borrowed mutably beside the result.
    fn refused_by<'g>(
        place_filter: &[u32],
        refused: &'g [Bits; FILTERS],
        n: u32,
    ) -> Option<&'g Bits> {
        let f = place_filter.get(n as usize).copied().unwrap_or(NO_FILTER);
        (f != NO_FILTER)
            .then(|| refused.get(f as usize))
            .flatten()
            .filter(|r| !r.is_empty())
    }

    pub fn node(&mut self, key: NodeKey) -> u32 {
        if let Some(&id) = self.keys.get(&key) {
            return id;
        }
        let id = self.new_node();
        let f = self.filter_of(&key);
        self.set_filter(id, f);
        self.keys.insert(key, id);
        id
    }

    fn var_node(&mut self, function: Option<&str>, name: &str) -> u32 {
        self.node(NodeKey::Var(VarKey {
            function: function.map(super::lower::Name::from),
            name: name.into(),
        }))
    }

    pub fn obj(&mut self, key: ObjKey) -> u32 {
        if let Some(&id) = self.obj_ids.get(&key) {
            return id;
        }
        // A field object registers with its base (created first).
        let base = match &key {
            ObjKey::Field(base, f) => {
                let b = self.obj((**base).clone());
                Some((b, self.field_id(f)))
            }
            _ => None,
        };
        let id = self.objs.len() as u32;
        let content = match &key {
            ObjKey::Var(v) => self.node(NodeKey::Var(v.clone())),
            other => self.node(NodeKey::Content(other.clone())),
        };
        let class = self.class_of(&key);
        for (f, refused) in self.refused.iter_mut().enumerate() {
            if types::rejects(f as u32, class) {
                refused.insert(id);
            }
        }
        self.objs.push(key.clone());
        self.obj_ids.insert(key.clone(), id);
        self.content.push(content);
        self.fields_of.push(Vec::new());
        self.copy_pred.push(Vec::new());
        if let Some(slot) = self.owner.get_mut(content as usize) {
            *slot = id;
        }
        if matches!(key, ObjKey::Func(_)) {
            // In C, `*f` is `f` for a function: its contents point to itself.
            self.add_base(content, id);
        }
        if let Some((b, fid)) = base {
            self.field_cache.insert((b, fid), id);
            if let Some(list) = self.fields_of.get_mut(b as usize) {
                list.push((fid, id));
            }
            let preds = self.copy_pred.get(b as usize).cloned().unwrap_or_default();
            for pred in preds {
                self.pending.push(Pending {
                    pred,
                    field: id,
                    fid,
                });
            }
            self.drain();
        }
        id
    }

    fn field_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.field_ids.get(name) {
            return id;
        }
        let id = self.field_names.len() as u32;
        self.field_names.push(name.to_string());
        self.field_ids.insert(name.to_string(), id);
        id
    }

    /// The object of field `fid` of object `o` (created on first use).
    fn field_obj(&mut self, o: u32, fid: u32) -> u32 {
        if let Some(&f) = self.field_cache.get(&(o, fid)) {
            return f;
        }
        let (Some(base), Some(name)) = (
            self.objs.get(o as usize),
            self.field_names.get(fid as usize),
        ) else {
            return o;
        };
        let key = base.field(name, &self.filter);
        if &key == base {
            self.field_cache.insert((o, fid), o);
            return o;
        }
        self.obj(key)
    }

    /// The object whose contents `node` is, if any.
    pub fn owner_of(&self, node: u32) -> Option<u32> {
        self.owner
            .get(node as usize)
            .copied()
            .filter(|&o| o != NONE)
    }

    /// Per object: what any of its fields (at any depth) may point to, including the fields
    /// of every struct copied into it (through copy hubs too), whether or not a field object
    /// was created on it. Field objects exist only where demanded, so a struct variable's
    /// entry needs this closure; computed once, after solving, as a fixpoint over the copy
    /// graph (no objects are created).
    pub fn field_targets(&self) -> Vec<Bits> {
        let n = self.objs.len();
        // Only objects from which a variable is reached through copies matter: a backward
        // walk from the variables that received copies.
        let mut relevant = vec![false; n];
        let mut stack: Vec<u32> = (0..n as u32)
            .filter(|&o| {
                matches!(self.objs.get(o as usize), Some(ObjKey::Var(_)))
                    && !self.copy_preds(o).is_empty()
            })
            .collect();
        while let Some(o) = stack.pop() {
            match relevant.get_mut(o as usize) {
                Some(r) if !*r => *r = true,
                _ => continue,
            }
            stack.extend(self.copy_preds(o).iter().copied());
        }
        // Their own fields' targets, and every variable's, are needed (with the fields'
        // fields: a field object is created after its base, so an ascending pass closes the
        // set over fields).
        let mut needed = relevant.clone();
        for (o, key) in self.objs.iter().enumerate() {
            if matches!(key, ObjKey::Var(_)) {
                if let Some(slot) = needed.get_mut(o) {
                    *slot = true;
                }
            }
        }
        for o in 0..n {
            if needed.get(o) != Some(&true) {
                continue;
            }
            for &(_, f) in self.fields_of(o as u32) {
                if let Some(slot) = needed.get_mut(f as usize) {
                    *slot = true;
                }
            }
        }
        let mut own: Vec<Bits> = vec![Bits::default(); n];
        // Descending ids see fields before their base.
        for o in (0..n).rev() {
            if needed.get(o) != Some(&true) {
                continue;
            }
            let mut acc = Bits::default();
            for &(_, f) in self.fields_of(o as u32) {
                if let Some(p) = self.content_of(f).and_then(|c| self.pts_of(c)) {
                    acc.union_with(p);
                }
                if let Some(sub) = own.get(f as usize) {
                    let sub = sub.clone();
                    acc.union_with(&sub);
                }
            }
            if let Some(slot) = own.get_mut(o) {
                *slot = acc;
            }
        }
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (o, preds) in self.copy_pred.iter().enumerate() {
            if relevant.get(o) != Some(&true) {
                continue;
            }
            for &p in preds {
                if let Some(list) = succ.get_mut(p as usize) {
                    list.push(o as u32);
                }
            }
        }
        let mut work: VecDeque<u32> = (0..n as u32)
            .filter(|&p| succ.get(p as usize).is_some_and(|l| !l.is_empty()))
            .collect();
        let mut queued = vec![false; n];
        for &p in &work {
            if let Some(q) = queued.get_mut(p as usize) {
                *q = true;
            }
        }
        while let Some(p) = work.pop_front() {
            if let Some(q) = queued.get_mut(p as usize) {
                *q = false;
            }
            if succ.get(p as usize).is_none_or(|l| l.is_empty()) {
                continue;
            }
            let Some(from) = own.get(p as usize).cloned() else {
                continue;
            };
            if from.is_empty() {
                continue;
            }
            for &o in succ.get(p as usize).map(Vec::as_slice).unwrap_or(&[]) {
                let grew = own
                    .get_mut(o as usize)
                    .is_some_and(|slot| slot.union_with(&from));
                if grew && queued.get(o as usize) == Some(&false) {
                    if let Some(q) = queued.get_mut(o as usize) {
                        *q = true;
                    }
                    work.push_back(o);
                }
            }
        }
        own
    }

    /// Objects whose fields are copied into `o`'s (struct copies `o = p`).
    fn copy_preds(&self, o: u32) -> &[u32] {
        self.copy_pred
            .get(o as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Field objects of `o` created so far.
    pub fn fields_of(&self, o: u32) -> &[(u32, u32)] {
        self.fields_of
            .get(o as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Object `a`'s fields flow into the same-named fields of `b` (a struct copy `b = a`).
    pub(crate) fn add_obj_copy(&mut self, a: u32, b: u32) {
        if a == b || !self.copy_pairs.insert((a, b)) {
            return;
        }
        if let Some(list) = self.copy_pred.get_mut(b as usize) {
            list.push(a);
        }
        let fields = self.fields_of(b).to_vec();
        for (fid, fb) in fields {
            self.pending.push(Pending {
                pred: a,
                field: fb,
                fid,
            });
        }
        self.drain();
    }

    /// Runs the deferred field-copy work to completion (iteratively; re-entrant calls only
    /// queue).
    fn drain(&mut self) {
        if self.draining {
            return;
        }
        self.draining = true;
        while let Some(Pending { pred, field, fid }) = self.pending.pop() {
            let fa = self.field_obj(pred, fid);
            if fa == field {
                continue;
            }
            if let (Some(ca), Some(cb)) = (self.content_of(fa), self.content_of(field)) {
                self.add_edge(ca, cb);
            }
            // Nested structs: fields of `pred.f` flow into fields of `field`.
            self.add_obj_copy(fa, field);
        }
        self.draining = false;
    }

    /// A struct copy from the objects `src` points to into the objects `dst` points to:
    /// their fields flow field by field (the whole-object contents flow by an ordinary edge).
    pub(crate) fn add_struct_copy(&mut self, src: u32, dst: u32) {
        if src == dst {
            return;
        }
        let id = self.copies.len() as u32;
        let hub = self.obj(ObjKey::Hub(id));
        self.copies.push((src, dst, hub));
        // Called while generating constraints, before solving: no node has propagated
        // anything yet, so the copy sees every object when its nodes are first visited.
        for n in [src, dst] {
            if let Some(node) = self.nodes.get_mut(n as usize) {
                node.complex().copies.push(id);
            }
        }
    }

    fn add_gep(&mut self, dst: u32, src: u32, fid: u32) {
        if let Some(node) = self.nodes.get_mut(src as usize) {
            node.complex().geps.push((dst, fid));
        }
    }

    pub fn pts_of(&self, node: u32) -> Option<&Bits> {
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
        if Self::refused_by(&self.place_filter, &self.refused, n).is_some_and(|r| r.contains(obj)) {
            return;
        }
        if let Some(node) = self.nodes.get_mut(n as usize) {
            if !node.pts.contains(obj) && node.delta.insert(obj) {
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
        if !node.succ.insert(b) || node.pts.is_empty() {
            return;
        }
        // Lend `a`'s propagated set out for the union (a != b), instead of copying it.
        let moved = std::mem::take(&mut node.pts);
        self.union_into(b, &moved);
        if let Some(node) = self.nodes.get_mut(a as usize) {
            node.pts = moved;
        }
    }

    fn union_into(&mut self, b: u32, objs: &Bits) {
        self.work = self.work.saturating_add(objs.words() as u64);
        // Objects the place's declared type refuses are left out as the union runs.
        let refused = Self::refused_by(&self.place_filter, &self.refused, b);
        let Some(NodeData { pts, delta, .. }) = self.nodes.get_mut(b as usize) else {
            return;
        };
        // What the node already propagated is not new.
        if delta.union_except_both(objs, refused, Some(pts)) {
            self.push(b);
        }
    }

    fn add_load(&mut self, dst: u32, ptr: u32) {
        if let Some(node) = self.nodes.get_mut(ptr as usize) {
            node.complex().loads.push(dst);
        }
    }

    fn add_store(&mut self, ptr: u32, src: u32) {
        if let Some(node) = self.nodes.get_mut(ptr as usize) {
            node.complex().stores.push(src);
        }
    }

    fn add_icall(&mut self, callee: u32, args: Vec<Option<u32>>, result: u32) {
        let id = self.icalls.len() as u32;
        self.icalls.push(ICall { args, result });
        if let Some(node) = self.nodes.get_mut(callee as usize) {
            node.complex().icalls.push(id);
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
            let ret = self.node(NodeKey::Ret(function.into()));
            self.add_edge(ret, res);
        }
    }

    /// Runs the worklist to a fixpoint (or until cancelled / over `budget` units of work).
    /// Either way every node's `pts` is its whole set afterwards (what was not propagated is
    /// merged in), and what only solving reads is freed before the sets are read: edges,
    /// complex constraints, the worklist, the pairs already bound or copied (on redis about a
    /// third of the solver's memory).
    pub fn solve(&mut self, model: &Model, cancel: &Cancel, budget: u64) -> Option<Incomplete> {
        let stopped = self.propagate(model, cancel, budget);
        for node in &mut self.nodes {
            let delta = std::mem::take(&mut node.delta);
            node.pts.union_with(&delta);
            node.succ = Succ::default();
            node.complex = None;
        }
        self.icalls = Vec::new();
        self.bound = BTreeSet::new();
        self.worklist = VecDeque::new();
        self.in_worklist = Vec::new();
        self.field_cache = HashMap::new();
        self.copy_pairs = HashSet::new();
        self.copies = Vec::new();
        self.pending = Vec::new();
        self.addr_temps = BTreeMap::new();
        self.succ_buf = Vec::new();
        stopped
    }

    /// The worklist of [`Graph::solve`].
    fn propagate(&mut self, model: &Model, cancel: &Cancel, budget: u64) -> Option<Incomplete> {
        let mut steps = 0u64;
        while let Some(n) = self.worklist.pop_front() {
            steps += 1;
            if steps.is_multiple_of(1024) && cancel.is_cancelled() {
                return Some(Incomplete::Cancelled);
            }
            if self.work > budget {
                return Some(Incomplete::WorkLimit);
            }
            if let Some(flag) = self.in_worklist.get_mut(n as usize) {
                *flag = false;
            }
            let Some(node) = self.nodes.get_mut(n as usize) else {
                continue;
            };
            let delta_bits = std::mem::take(&mut node.delta);
            if delta_bits.is_empty() {
                continue;
            }
            node.pts.union_with(&delta_bits);
            let delta: Vec<u32> = delta_bits.iter().collect();
            // The node's constraint lists are only added to while generating constraints,
            // never while solving: lend them out for this visit and put them back after.
            let complex = node.complex.take();
            let none = Complex::default();
            let Complex {
                loads,
                stores,
                icalls,
                geps,
                copies,
            } = complex.as_deref().unwrap_or(&none);
            // Successors as they are now (edges added during this visit get the whole set).
            let mut succ = std::mem::take(&mut self.succ_buf);
            succ.clear();
            node.succ.extend_into(&mut succ);
            for &(dst, fid) in geps {
                self.work = self.work.saturating_add(delta.len() as u64);
                for &o in &delta {
                    let f = self.field_obj(o, fid);
                    self.add_base(dst, f);
                }
            }
            for &c in copies {
                let Some(&(src, dst, hub)) = self.copies.get(c as usize) else {
                    continue;
                };
                self.work = self.work.saturating_add(delta.len() as u64);
                for &o in &delta {
                    if matches!(self.objs.get(o as usize), Some(ObjKey::Func(_))) {
                        continue;
                    }
                    if src == n {
                        self.add_obj_copy(o, hub);
                    }
                    if dst == n {
                        self.add_obj_copy(hub, o);
                    }
                }
            }
            for &o in &delta {
                let Some(c) = self.content_of(o) else {
                    continue;
                };
                for &dst in loads {
                    self.add_edge(c, dst);
                }
                let is_func = matches!(self.objs.get(o as usize), Some(ObjKey::Func(_)));
                if !is_func {
                    // A function's code cannot be written through a pointer.
                    for &src in stores {
                        self.add_edge(src, c);
                    }
                }
                if icalls.is_empty() {
                    continue;
                }
                let Some(ObjKey::Func(name)) = self.objs.get(o as usize).cloned() else {
                    continue;
                };
                for &ic in icalls {
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
            for &s in &succ {
                self.union_into(s, &delta_bits);
            }
            self.succ_buf = succ;
            if let Some(node) = self.nodes.get_mut(n as usize) {
                node.complex = complex;
            }
        }
        None
    }
}

/// Materialises lowered IR into constraints.
pub(crate) struct Gen<'m> {
    pub model: &'m Model,
    pub graph: Graph,
    /// Load temporaries: `t ⊇ *p` -> p (the address of the value `t` holds).
    load_src: HashMap<u32, u32>,
    /// Address nodes holding exactly one object (`&x`) -> that object.
    addr_obj: HashMap<u32, u32>,
    /// Field-address nodes (`&p->f`) of fields declared with a struct type by value.
    record_gep: HashSet<u32>,
}

impl<'m> Gen<'m> {
    pub fn new(model: &'m Model) -> Self {
        let graph = Graph {
            filter: model.filter.clone(),
            classes: model.classes.clone(),
            ..Graph::default()
        };
        Gen {
            model,
            graph,
            load_src: HashMap::new(),
            addr_obj: HashMap::new(),
            record_gep: HashSet::new(),
        }
    }

    /// A node holding the address of the object(s) whose value `node` holds, when `node`
    /// is a plain read (`x`, `*p`, `s.f`): the source of a struct copy.
    fn address_of(&mut self, node: u32) -> Option<u32> {
        if let Some(o) = self.graph.owner_of(node) {
            let key = self.graph.objs.get(o as usize)?.clone();
            return Some(self.addr_node(&key));
        }
        self.load_src.get(&node).copied()
    }

    /// Records that `src`'s value is copied into the object(s) `dst_addr` points to. When one
    /// side is statically a struct object (a variable or field declared with a struct type
    /// by value), the fields are copied too, field by field. Copies between two unknown
    /// places (`*p = *q`, `memcpy` through `void *`) copy no fields: pairing every object on
    /// one side with every object on the other is what makes an untyped analysis blow up.
    fn struct_copy(&mut self, src: u32, dst_addr: u32) {
        if let Some(src_addr) = self.address_of(src) {
            self.copy_between(src_addr, dst_addr);
        }
    }

    /// Fields of the objects `src_addr` points to flow into those of `dst_addr`'s objects
    /// (when one side is statically a struct object; see [`Gen::struct_copy`]).
    fn copy_between(&mut self, src_addr: u32, dst_addr: u32) {
        let a = self.static_record(src_addr);
        let b = self.static_record(dst_addr);
        match (a, b) {
            (Some(x), Some(y)) => self.graph.add_obj_copy(x, y),
            _ if a.is_some()
                || b.is_some()
                || self.record_gep.contains(&src_addr)
                || self.record_gep.contains(&dst_addr) =>
            {
                self.graph.add_struct_copy(src_addr, dst_addr)
            }
            _ => {}
        }
    }

    /// The struct object an address node statically holds, if it holds exactly one.
    fn static_record(&self, addr: u32) -> Option<u32> {
        let o = *self.addr_obj.get(&addr)?;
        let key = self.graph.objs.get(o as usize)?;
        self.model.is_record(key).then_some(o)
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
        self.addr_obj.insert(t, o);
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
                self.load_src.insert(t, ptr);
                Some(t)
            }
            Val::Cast(inner, filter) => {
                let n = self.value(inner)?;
                let t = self.temp();
                self.graph.set_filter(t, *filter);
                self.graph.add_edge(n, t);
                Some(t)
            }
            Val::Gep(inner, field) => {
                let base = self.value(inner)?;
                let fid = self.graph.field_id(field);
                let t = self.temp();
                self.graph.add_gep(t, base, fid);
                if self.model.record_fields.contains_key(field.as_str()) {
                    self.record_gep.insert(t);
                }
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
                    let a = self.addr_node(key);
                    self.struct_copy(s, a);
                }
            }
            Loc::Deref(ptr) => {
                let p = self.value(ptr);
                if let (Some(p), Some(s)) = (p, src) {
                    self.graph.add_store(p, s);
                    self.struct_copy(s, p);
                }
            }
        }
    }

    /// Generates `ret(function) ⊇ value`.
    pub fn returns(&mut self, function: &str, v: &Val) {
        if let Some(n) = self.value(v) {
            let ret = self.graph.node(NodeKey::Ret(function.into()));
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
            // Struct arguments passed by value: their fields flow into the parameter's.
            let params: Vec<(usize, String)> = self
                .model
                .defs_of(name)
                .flat_map(|d| {
                    d.params
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| !p.is_empty() && !d.ref_params.contains(*p))
                        .map(|(i, p)| (i, p.clone()))
                        .collect::<Vec<_>>()
                })
                .collect();
            for (i, p) in params {
                if let Some(a) = args.get(i).copied().flatten() {
                    let formal = ObjKey::Var(VarKey {
                        function: Some(name.as_str().into()),
                        name: p.into(),
                    });
                    let f = self.addr_node(&formal);
                    self.struct_copy(a, f);
                }
            }
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
                let h = self.addr_node(&ObjKey::Heap(Name::clone(heap)));
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
                    self.copy_between(s, d);
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
                let h = self.addr_node(&ObjKey::Heap(Name::clone(heap)));
                self.direct_call(ctors, &call.args, Some(h), None);
                Some(h)
            }
        }
    }
}
