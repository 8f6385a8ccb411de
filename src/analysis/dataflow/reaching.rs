//! Reaching definitions over a CFG: a bounded worklist solver over bit sets, polling the
//! cancel flag. Falls back to a flow-insensitive answer (every definition of a variable
//! reaches every use of it) when the function is too large for bit sets or the iteration
//! budget runs out; the result then says so.

use super::extract::NodeFacts;
use crate::syntax::Cancel;
use std::collections::{BTreeMap, VecDeque};

/// Ceiling on `nodes x words-per-set` (64-bit words) for the flow-sensitive solver (32 MiB).
pub const MAX_SET_WORDS: usize = 1 << 22;
/// Worklist visits allowed per node before giving up on convergence.
pub const VISITS_PER_NODE: usize = 64;

/// A definition site: node index and index into that node's `defs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DefSite {
    pub node: usize,
    pub def: usize,
}

/// Result of the solver.
#[derive(Debug, Clone, Default)]
pub struct Reaching {
    /// All definition sites, numbered.
    pub defs: Vec<DefSite>,
    /// `uses[node][use]`: ids (into `defs`) of the definitions reaching that use, ascending.
    pub uses: Vec<Vec<Vec<usize>>>,
    /// True when the answer is flow-insensitive (too large, budget exhausted).
    pub flow_insensitive: bool,
    /// True when cancelled: the answer is incomplete.
    pub cancelled: bool,
}

#[derive(Clone)]
struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    fn new(bits: usize) -> Self {
        BitSet {
            words: vec![0; bits.div_ceil(64)],
        }
    }
    fn insert(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
    fn remove(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    fn union_with(&mut self, other: &BitSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
    }
    fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
}

/// Reverse postorder from `entry` (iterative DFS), followed by nodes not reached from it.
pub fn reverse_postorder(succ: &[Vec<usize>], entry: usize) -> Vec<usize> {
    let n = succ.len();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut roots: Vec<usize> = Vec::with_capacity(n);
    if entry < n {
        roots.push(entry);
    }
    roots.extend((0..n).filter(|&i| i != entry));
    for root in roots {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            match succ[v].get(i) {
                Some(&w) => {
                    top.1 += 1;
                    if w < n && !seen[w] {
                        seen[w] = true;
                        stack.push((w, 0));
                    }
                }
                None => {
                    post.push(v);
                    stack.pop();
                }
            }
        }
    }
    post.reverse();
    post
}

/// Solves reaching definitions. `succ`/`pred` are adjacency lists over node indices
/// `0..facts.len()`; `entry` has an empty IN set.
pub fn solve(
    succ: &[Vec<usize>],
    pred: &[Vec<usize>],
    entry: usize,
    facts: &[NodeFacts],
    cancel: &Cancel,
) -> Reaching {
    let n = facts.len();
    // Adjacency of exactly `n` nodes, dropping out-of-range entries (robust to callers).
    let fit = |lists: &[Vec<usize>]| -> Vec<Vec<usize>> {
        (0..n)
            .map(|v| {
                lists
                    .get(v)
                    .map(|l| l.iter().copied().filter(|&w| w < n).collect())
                    .unwrap_or_default()
            })
            .collect()
    };
    let (succ, pred) = (&fit(succ), &fit(pred));
    let mut defs = Vec::new();
    // var -> ids of its definitions
    let mut by_var: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (node, f) in facts.iter().enumerate() {
        for (i, d) in f.defs.iter().enumerate() {
            by_var.entry(d.var.as_str()).or_default().push(defs.len());
            defs.push(DefSite { node, def: i });
        }
    }
    let d = defs.len();
    let words = d.div_ceil(64).max(1);
    let mut out = Reaching {
        defs,
        uses: Vec::with_capacity(n),
        flow_insensitive: false,
        cancelled: false,
    };
    let insensitive = |out: &mut Reaching| {
        out.flow_insensitive = true;
        out.uses = facts
            .iter()
            .map(|f| {
                f.uses
                    .iter()
                    .map(|u| by_var.get(u.var.as_str()).cloned().unwrap_or_default())
                    .collect()
            })
            .collect();
    };
    if n.saturating_mul(words) > MAX_SET_WORDS {
        insensitive(&mut out);
        return out;
    }
    // First def id of each node (defs are numbered node by node).
    let mut first = vec![0usize; n + 1];
    for (node, f) in facts.iter().enumerate() {
        first[node + 1] = first[node] + f.defs.len();
    }
    let transfer = |node: usize, inset: &BitSet, res: &mut BitSet| {
        res.words.copy_from_slice(&inset.words);
        for dfact in &facts[node].defs {
            if dfact.strong {
                if let Some(ids) = by_var.get(dfact.var.as_str()) {
                    for &id in ids {
                        res.remove(id);
                    }
                }
            }
        }
        for id in first[node]..first[node + 1] {
            res.insert(id);
        }
    };
    let mut outs: Vec<BitSet> = vec![BitSet::new(d.max(1)); n];
    let order = reverse_postorder(succ, entry);
    let mut queued = vec![true; n];
    let mut work: VecDeque<usize> = order.iter().copied().collect();
    let mut inset = BitSet::new(d.max(1));
    let mut res = BitSet::new(d.max(1));
    let budget = n.saturating_mul(VISITS_PER_NODE).saturating_add(1024);
    let mut visits = 0usize;
    while let Some(v) = work.pop_front() {
        queued[v] = false;
        visits += 1;
        if visits.is_multiple_of(256) && cancel.is_cancelled() {
            out.cancelled = true;
            break;
        }
        if visits > budget {
            insensitive(&mut out);
            return out;
        }
        inset.clear();
        if v != entry {
            for &p in &pred[v] {
                if let Some(o) = outs.get(p) {
                    inset.union_with(o);
                }
            }
        }
        transfer(v, &inset, &mut res);
        if res.words != outs[v].words {
            std::mem::swap(&mut outs[v], &mut res);
            for &s in &succ[v] {
                if s < n && !queued[s] {
                    queued[s] = true;
                    work.push_back(s);
                }
            }
        }
    }
    for (v, f) in facts.iter().enumerate() {
        inset.clear();
        if v != entry {
            for &p in &pred[v] {
                if let Some(o) = outs.get(p) {
                    inset.union_with(o);
                }
            }
        }
        let per_use = f
            .uses
            .iter()
            .map(|u| {
                by_var
                    .get(u.var.as_str())
                    .map(|ids| {
                        ids.iter()
                            .copied()
                            .filter(|&id| inset.contains(id))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        out.uses.push(per_use);
    }
    out
}
