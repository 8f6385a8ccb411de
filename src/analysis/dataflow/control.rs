//! Control dependence from post-dominators (Ferrante, Ottenstein and Warren): node `n` is
//! control dependent on branch `b` when `b` has a successor from which every path to the exit
//! passes through `n`, while `n` does not post-dominate `b` itself.
//!
//! Exceptional edges are ignored (a statement after a call is not "controlled" by the call
//! possibly throwing) unless they are a node's only way out; nodes that cannot reach the exit
//! (infinite loops) get a virtual edge to it. Post-dominators use the iterative algorithm of
//! Cooper, Harvey and Kennedy with explicit loops only.

use super::reaching::reverse_postorder;
use crate::analysis::cfg::{Cfg, EdgeKind, NodeKind};
use crate::syntax::Cancel;
use std::collections::BTreeSet;

const UNDEF: usize = usize::MAX;

/// Immediate post-dominator of every node (`usize::MAX` when undefined), computed on the
/// successor lists `succ` towards `exit`.
pub fn post_dominators(succ: &[Vec<usize>], exit: usize, cancel: &Cancel) -> Option<Vec<usize>> {
    let n = succ.len();
    if exit >= n {
        return None;
    }
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (v, ss) in succ.iter().enumerate() {
        for &s in ss {
            if s < n {
                pred[s].push(v);
            }
        }
    }
    // Reverse graph: successors are CFG predecessors.
    let order = reverse_postorder(&pred, exit);
    let mut po = vec![0usize; n];
    for (i, &v) in order.iter().enumerate() {
        po[v] = n - i; // larger = earlier in reverse postorder
    }
    let mut ipdom = vec![UNDEF; n];
    ipdom[exit] = exit;
    let mut changed = true;
    let mut passes = 0usize;
    while changed {
        changed = false;
        passes += 1;
        if passes > n + 2 || cancel.is_cancelled() {
            return None;
        }
        for &b in &order {
            if b == exit {
                continue;
            }
            let mut new = UNDEF;
            for &s in &succ[b] {
                if s >= n || ipdom[s] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    s
                } else {
                    intersect(&ipdom, &po, s, new, n)
                };
            }
            if new != UNDEF && ipdom[b] != new {
                ipdom[b] = new;
                changed = true;
            }
        }
    }
    Some(ipdom)
}

fn intersect(ipdom: &[usize], po: &[usize], mut a: usize, mut b: usize, n: usize) -> usize {
    let mut steps = 0usize;
    while a != b {
        while po[a] < po[b] {
            a = ipdom[a];
            steps += 1;
            if a == UNDEF || steps > 2 * n {
                return b;
            }
        }
        while po[b] < po[a] {
            b = ipdom[b];
            steps += 1;
            if b == UNDEF || steps > 2 * n {
                return a;
            }
        }
    }
    a
}

/// For every node (by index), the branch and loop nodes it is control dependent on. `None`
/// when cancelled.
pub fn control_dependence(cfg: &Cfg, cancel: &Cancel) -> Option<Vec<BTreeSet<usize>>> {
    let g = &cfg.graph;
    let n = g.node_count();
    let exit = cfg.exit.index();
    let mut normal: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut exceptional: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in g.edge_indices() {
        if let (Some((a, b)), Some(kind)) = (g.edge_endpoints(e), g.edge_weight(e)) {
            let list = if *kind == EdgeKind::Exception {
                &mut exceptional
            } else {
                &mut normal
            };
            list[a.index()].push(b.index());
        }
    }
    let mut succ: Vec<Vec<usize>> = normal
        .into_iter()
        .zip(exceptional)
        .map(|(mut nrm, exc)| {
            if nrm.is_empty() {
                nrm = exc;
            }
            nrm.sort_unstable();
            nrm.dedup();
            nrm
        })
        .collect();
    // Virtual exit edges for nodes that cannot reach the exit.
    let mut reaches = vec![false; n];
    if exit < n {
        let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (v, ss) in succ.iter().enumerate() {
            for &s in ss {
                pred[s].push(v);
            }
        }
        let mut stack = vec![exit];
        reaches[exit] = true;
        while let Some(v) = stack.pop() {
            for &p in &pred[v] {
                if !reaches[p] {
                    reaches[p] = true;
                    stack.push(p);
                }
            }
        }
    }
    let real_succ = succ.clone();
    for (v, r) in reaches.iter().enumerate() {
        if !r && v != exit {
            succ[v].push(exit);
        }
    }
    let ipdom = post_dominators(&succ, exit, cancel)?;
    let mut cd: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for a in g.node_indices() {
        if !matches!(g[a].kind, NodeKind::Branch | NodeKind::Loop) {
            continue;
        }
        let ai = a.index();
        let stop = ipdom[ai];
        for &b in &real_succ[ai] {
            let mut runner = b;
            let mut steps = 0usize;
            while runner != stop && runner != UNDEF && steps <= n {
                cd[runner].insert(ai);
                if runner == exit {
                    break;
                }
                runner = ipdom[runner];
                steps += 1;
            }
        }
    }
    Some(cd)
}
