//! Abstract values of the taint engine: taint label sets with sanitisation masks and trails,
//! constants, and small key/index-sensitive collections.

use hashbrown::HashTable;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Labels at or above this value stand for the function's parameters (`PARAM_BASE + i`).
pub(super) const PARAM_BASE: u32 = 1 << 31;
/// A sanitisation mask meaning "sanitised for every kind".
pub(super) const ALL_KINDS: u64 = u64::MAX;
/// Trails longer than this stop growing (the flow is still reported).
pub(super) const MAX_TRAIL: u16 = 32;
/// Collections with more elements than this are no longer tracked element by element.
pub(super) const MAX_COLL: usize = 32;
/// Constant strings longer than this are forgotten.
pub(super) const MAX_CONST_STR: usize = 512;

/// Parameter indices at or above this stand for fields of the receiver (`this.f`), by
/// interned field id: `param_label(FIELD_BASE + id)`.
pub(super) const FIELD_BASE: usize = 1 << 20;

pub(super) fn param_label(i: usize) -> u32 {
    PARAM_BASE.saturating_add(u32::try_from(i).unwrap_or(u32::MAX - PARAM_BASE))
}

pub(super) fn as_param(label: u32) -> Option<usize> {
    (label >= PARAM_BASE).then(|| (label - PARAM_BASE) as usize)
}

/// One step of a trail: a file (unit index) and a 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Step {
    pub unit: u32,
    pub line: u32,
}

/// Interned trails: linked lists of steps (id 0 is the empty trail).
#[derive(Debug, Default)]
pub(super) struct Trails {
    /// (last step, the trail before it, length).
    nodes: Vec<(Step, u32, u16)>,
    /// Node ids, found by (trail before, step) hashed from the node itself: 4 bytes a node
    /// (a map keyed by the pair took about 27; git's family interns millions of nodes).
    index: HashTable<u32>,
}

/// The hash of a trail node's key (the trail before it and its step).
fn node_hash(prev: u32, step: Step) -> u64 {
    // SplitMix64's finaliser over the three fields: every input bit reaches the low bits the
    // table indexes by and the high bits it tags entries with.
    let mut x = (u64::from(prev) << 32 | u64::from(step.unit))
        ^ u64::from(step.line).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Trails {
    pub fn new() -> Self {
        Trails {
            nodes: vec![(
                Step {
                    unit: u32::MAX,
                    line: 0,
                },
                0,
                0,
            )],
            index: HashTable::new(),
        }
    }

    pub fn len(&self, t: u32) -> u16 {
        self.nodes.get(t as usize).map(|n| n.2).unwrap_or(0)
    }

    fn last(&self, t: u32) -> Option<Step> {
        (t != 0).then(|| self.nodes.get(t as usize).map(|n| n.0))?
    }

    /// The trail `t` followed by `step` (unchanged when `step` repeats the last step or the
    /// trail is full).
    pub fn push(&mut self, t: u32, step: Step) -> u32 {
        if self.last(t) == Some(step) || self.len(t) >= MAX_TRAIL {
            return t;
        }
        let hash = node_hash(t, step);
        let Trails { nodes, index } = self;
        let same = |id: &u32| {
            nodes
                .get(*id as usize)
                .is_some_and(|n| n.1 == t && n.0 == step)
        };
        if let Some(&id) = index.find(hash, same) {
            return id;
        }
        let id = u32::try_from(nodes.len()).unwrap_or(0);
        if id == 0 {
            return t;
        }
        let len = nodes.get(t as usize).map(|n| n.2).unwrap_or(0) + 1;
        nodes.push((step, t, len));
        let rehash = |id: &u32| nodes.get(*id as usize).map_or(0, |n| node_hash(n.1, n.0));
        index.insert_unique(hash, id, rehash);
        id
    }

    /// The steps of a trail, first to last.
    pub fn steps(&self, mut t: u32) -> Vec<Step> {
        let mut out = Vec::new();
        while t != 0 {
            match self.nodes.get(t as usize) {
                Some(&(step, prev, _)) => {
                    out.push(step);
                    t = prev;
                }
                None => break,
            }
        }
        out.reverse();
        out
    }

    /// `a` followed by the steps of `b`.
    pub fn concat(&mut self, a: u32, b: u32) -> u32 {
        let mut t = a;
        for s in self.steps(b) {
            t = self.push(t, s);
        }
        t
    }

    /// The better of two trails for the same label: shorter, then the first in step order
    /// read from the last step back. Decided by the steps alone, not by when a trail was
    /// made, so a run that reuses an earlier run's tables ([`super::TaintMemo`]) picks the
    /// trails a fresh run picks.
    pub fn better(&self, a: u32, b: u32) -> u32 {
        if a == b {
            return a;
        }
        match self.len(a).cmp(&self.len(b)) {
            std::cmp::Ordering::Less => return a,
            std::cmp::Ordering::Greater => return b,
            std::cmp::Ordering::Equal => {}
        }
        // Equal lengths: interned trails with the same steps are the same id, so the two
        // differ at some step.
        let (mut x, mut y) = (a, b);
        while x != y {
            let (Some(&(sx, px, _)), Some(&(sy, py, _))) =
                (self.nodes.get(x as usize), self.nodes.get(y as usize))
            else {
                break;
            };
            match sx.cmp(&sy) {
                std::cmp::Ordering::Less => return a,
                std::cmp::Ordering::Greater => return b,
                std::cmp::Ordering::Equal => (x, y) = (px, py),
            }
        }
        a.min(b)
    }

    /// Interned trail nodes (the size of the table).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

/// One label of a taint: where the data came from, for which sink kinds it has been
/// sanitised (bit set), and how it got here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Entry {
    pub label: u32,
    pub mask: u64,
    pub trail: u32,
}

/// The number of distinct labels in two entry lists sorted by label.
fn union_len(a: &[Entry], b: &[Entry]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.label.cmp(&y.label) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
        n += 1;
    }
    n + (a.len() - i) + (b.len() - j)
}

/// A set of entries sorted by label, one per label.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(super) struct Taint(pub Vec<Entry>);

impl Taint {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn single(label: u32, trail: u32) -> Taint {
        Taint(vec![Entry {
            label,
            mask: 0,
            trail,
        }])
    }

    /// Union; a label present on both sides keeps the masks' intersection (sanitised only if
    /// sanitised on every path) and the better trail.
    pub fn join(&mut self, other: &Taint, trails: &Trails) {
        if other.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0 = other.0.clone();
            return;
        }
        let (a, b) = (&self.0, &other.0);
        // Sized exactly (labels present on both sides count once): joined taints are kept in
        // summaries and in the memo's interpretations, and `len + len` left most of them with
        // room for entries that never came.
        let mut out = Vec::with_capacity(union_len(a, b));
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.label == y.label => {
                    out.push(Entry {
                        label: x.label,
                        mask: x.mask & y.mask,
                        trail: trails.better(x.trail, y.trail),
                    });
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x.label < y.label => {
                    out.push(*x);
                    i += 1;
                }
                (Some(_), Some(y)) => {
                    out.push(*y);
                    j += 1;
                }
                (Some(x), None) => {
                    out.push(*x);
                    i += 1;
                }
                (None, Some(y)) => {
                    out.push(*y);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.0 = out;
    }

    /// Same labels and masks (trails ignored): used to detect convergence.
    pub fn same_labels(&self, other: &Taint) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| a.label == b.label && a.mask == b.mask)
    }

    pub fn push_step(&mut self, step: Step, trails: &mut Trails) {
        for e in &mut self.0 {
            e.trail = trails.push(e.trail, step);
        }
    }

    pub fn sanitize(&mut self, kinds: u64) {
        for e in &mut self.0 {
            e.mask |= kinds;
        }
    }

    /// True when some entry is not sanitised for every kind.
    pub fn is_live(&self) -> bool {
        self.0.iter().any(|e| e.mask != ALL_KINDS)
    }

    pub fn concrete(&self) -> Taint {
        Taint(
            self.0
                .iter()
                .copied()
                .filter(|e| e.label < PARAM_BASE)
                .collect(),
        )
    }
}

/// A constant value known at analysis time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Const {
    Int(i64),
    Str(Rc<str>),
    Char(char),
    Bool(bool),
    Null,
}

impl Const {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Const::Int(i) => Some(*i),
            Const::Char(c) => Some(*c as i64),
            Const::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    pub fn truthy(&self) -> Option<bool> {
        match self {
            Const::Bool(b) => Some(*b),
            Const::Int(i) => Some(*i != 0),
            Const::Null => Some(false),
            Const::Str(s) => Some(!s.is_empty()),
            Const::Char(c) => Some(*c != '\0'),
        }
    }

    /// Text used when a constant is concatenated to a string.
    pub fn to_text(&self) -> Option<String> {
        Some(match self {
            Const::Int(i) => i.to_string(),
            Const::Str(s) => s.to_string(),
            Const::Char(c) => c.to_string(),
            Const::Bool(b) => b.to_string(),
            Const::Null => "null".to_string(),
        })
    }
}

/// A key of a tracked map (constants only).
pub(super) type Key = Const;

/// A local collection whose contents are known element by element.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Coll {
    List(Vec<Val>),
    Map(BTreeMap<Key, Val>),
}

/// The abstract value of an expression or variable.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Val {
    pub taint: Taint,
    pub konst: Option<Const>,
    pub coll: Option<Rc<Coll>>,
}

impl Val {
    pub fn clean() -> Val {
        Val::default()
    }

    pub fn of_const(c: Const) -> Val {
        let c = match c {
            Const::Str(s) if s.len() > MAX_CONST_STR => return Val::clean(),
            c => c,
        };
        Val {
            konst: Some(c),
            ..Val::default()
        }
    }

    pub fn of_taint(taint: Taint) -> Val {
        Val {
            taint,
            ..Val::default()
        }
    }

    /// Every label the value carries, its elements included.
    pub fn flat(&self, trails: &Trails) -> Taint {
        let mut t = self.taint.clone();
        if let Some(c) = &self.coll {
            flatten_coll(c, &mut t, trails, 0);
        }
        t
    }

    /// Forgets constants and element structure (keeps every label).
    pub fn widen(&self, trails: &Trails) -> Val {
        Val::of_taint(self.flat(trails))
    }

    /// Least upper bound.
    pub fn join(&self, other: &Val, trails: &Trails) -> Val {
        let mut taint = self.taint.clone();
        taint.join(&other.taint, trails);
        let konst = match (&self.konst, &other.konst) {
            (Some(a), Some(b)) if a == b => Some(a.clone()),
            _ => None,
        };
        let coll = match (&self.coll, &other.coll) {
            (None, None) => None,
            (Some(a), Some(b)) if Rc::ptr_eq(a, b) => Some(a.clone()),
            (Some(a), Some(b)) => match (a.as_ref(), b.as_ref()) {
                (Coll::List(x), Coll::List(y)) if x.len() == y.len() => Some(Rc::new(Coll::List(
                    x.iter().zip(y).map(|(p, q)| p.join(q, trails)).collect(),
                ))),
                (Coll::Map(x), Coll::Map(y)) => {
                    let mut m = x.clone();
                    for (k, v) in y {
                        let joined = match m.get(k) {
                            Some(old) => old.join(v, trails),
                            None => v.clone(),
                        };
                        m.insert(k.clone(), joined);
                    }
                    Some(Rc::new(Coll::Map(m)))
                }
                _ => {
                    flatten_coll(a, &mut taint, trails, 0);
                    flatten_coll(b, &mut taint, trails, 0);
                    None
                }
            },
            (Some(a), None) | (None, Some(a)) => {
                flatten_coll(a, &mut taint, trails, 0);
                None
            }
        };
        Val { taint, konst, coll }
    }

    /// Equality for convergence: same labels, constants and element structure.
    pub fn same(&self, other: &Val) -> bool {
        self.taint.same_labels(&other.taint)
            && self.konst == other.konst
            && match (&self.coll, &other.coll) {
                (None, None) => true,
                (Some(a), Some(b)) => Rc::ptr_eq(a, b) || coll_same(a, b),
                _ => false,
            }
    }
}

fn coll_same(a: &Coll, b: &Coll) -> bool {
    match (a, b) {
        (Coll::List(x), Coll::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same(q))
        }
        (Coll::Map(x), Coll::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.same(v2))
        }
        _ => false,
    }
}

fn flatten_coll(c: &Coll, into: &mut Taint, trails: &Trails, depth: usize) {
    let vals: Vec<&Val> = match c {
        Coll::List(v) => v.iter().collect(),
        Coll::Map(m) => m.values().collect(),
    };
    for v in vals {
        into.join(&v.taint, trails);
        if let Some(inner) = &v.coll {
            if depth < 8 {
                flatten_coll(inner, into, trails, depth + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(line: u32) -> Step {
        Step { unit: 0, line }
    }

    #[test]
    fn a_trail_is_interned_once_and_read_back_whole() {
        let mut tr = Trails::new();
        let mut ids = Vec::new();
        // Many trails sharing prefixes, pushed twice: the second pass makes no new node.
        for pass in 0..2 {
            let before = tr.node_count();
            for a in 0..200u32 {
                let t = tr.push(
                    0,
                    Step {
                        unit: a % 7,
                        line: a,
                    },
                );
                let u = tr.push(t, step(a + 1));
                let v = tr.push(u, Step { unit: 3, line: a });
                if pass == 0 {
                    ids.push((t, u, v));
                } else {
                    assert_eq!(ids[a as usize], (t, u, v));
                    assert_eq!(
                        tr.steps(v),
                        vec![
                            Step {
                                unit: a % 7,
                                line: a
                            },
                            step(a + 1),
                            Step { unit: 3, line: a }
                        ]
                    );
                }
            }
            if pass == 1 {
                assert_eq!(tr.node_count(), before, "nothing new the second time");
            }
        }
        assert_eq!(tr.node_count(), 1 + 3 * 200);
    }

    #[test]
    fn join_intersects_masks_and_keeps_the_shorter_trail() {
        let mut trails = Trails::new();
        let long = trails.push(0, step(1));
        let long = trails.push(long, step(2));
        let short = trails.push(0, step(3));
        let mut a = Taint(vec![Entry {
            label: 1,
            mask: 0b11,
            trail: long,
        }]);
        let b = Taint(vec![
            Entry {
                label: 1,
                mask: 0b01,
                trail: short,
            },
            Entry {
                label: 2,
                mask: 0,
                trail: 0,
            },
        ]);
        a.join(&b, &trails);
        assert_eq!(a.0.len(), 2);
        assert_eq!(a.0[0].mask, 0b01);
        assert_eq!(a.0[0].trail, short);
        assert_eq!(trails.steps(long), vec![step(1), step(2)]);
    }

    #[test]
    fn trails_do_not_repeat_a_step_and_stop_growing() {
        let mut trails = Trails::new();
        let t = trails.push(0, step(5));
        assert_eq!(trails.push(t, step(5)), t);
        let mut u = 0;
        for i in 0..100 {
            u = trails.push(u, step(i));
        }
        assert_eq!(trails.len(u), MAX_TRAIL);
    }

    #[test]
    fn joining_lists_of_different_lengths_flattens_them() {
        let trails = Trails::new();
        let tainted = Val::of_taint(Taint::single(7, 0));
        let a = Val {
            coll: Some(Rc::new(Coll::List(vec![Val::clean(), tainted.clone()]))),
            ..Val::default()
        };
        let b = Val {
            coll: Some(Rc::new(Coll::List(vec![Val::clean()]))),
            ..Val::default()
        };
        let j = a.join(&b, &trails);
        assert!(j.coll.is_none());
        assert_eq!(j.taint.0.len(), 1);
        let same_len = a.join(&a.clone(), &trails);
        assert!(same_len.coll.is_some());
    }

    #[test]
    fn constants_survive_only_when_equal() {
        let trails = Trails::new();
        let a = Val::of_const(Const::Int(3));
        assert_eq!(a.join(&a.clone(), &trails).konst, Some(Const::Int(3)));
        assert_eq!(a.join(&Val::of_const(Const::Int(4)), &trails).konst, None);
    }
}
