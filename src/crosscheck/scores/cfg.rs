//! CFG scores: Jump Redundancy, Jump Fabrication and CFG Shape Error (paper 000, section 3.6.1
//! and appendix B.2).
//!
//! The paper describes the three indicators in words; the formulas below are **this project's
//! operationalisation**. Both graphs are [`CfgGraph`]s: the reference from the analyzer's CFG
//! ([`CfgGraph::from_cfg`]), the candidate from the LLM's answer
//! ([`crate::crosscheck::answers::parse_cfg`]). Lines are relative to the function (line 1 is
//! its first line). All scores lie in [0, 1], higher is worse.
//!
//! # Normalisation
//!
//! 1. **Categories.** Every node gets one of ENTRY, EXIT, BRANCH, LOOP, CALL, TRY, EXCEPT,
//!    JUMP, MERGE, NORMAL. Analyzer kinds map one to one, `return` to JUMP. LLM node types map
//!    by keyword ([`category_for`]): merge/join/phi/end-if → MERGE, entry/start/begin → ENTRY,
//!    exit/end/stop → EXIT, except/catch/handler → EXCEPT, try → TRY, loop/for/while/do →
//!    LOOP, if/branch/switch/case/condition/assert → BRANCH, jump/return/break/continue/goto/
//!    throw/raise → JUMP, call/invoke/new → CALL, anything else → NORMAL; a NORMAL node whose
//!    text starts with a jump keyword becomes JUMP, and one whose text is a call statement
//!    (`f(x)`, `x = obj.m(y);`, `new T()`) becomes CALL (the paper's regex heuristics).
//! 2. **Merge nodes are spliced out** (each predecessor is linked to each successor): join
//!    points carry no code and the analyzer never emits them.
//! 3. **Canonicalisation.** When a graph has at least `collapse_min_nodes` (15) nodes and at
//!    least `collapse_aux_share` (80%) of them are auxiliary (NORMAL, MERGE, JUMP), every
//!    maximal chain `u1 → … → uk` of auxiliary nodes in which each `ui` has `u(i+1)` as its
//!    only successor and `u(i+1)` has `ui` as its only predecessor becomes one node with the
//!    union of their lines and the category of `uk`.
//!
//! # Correspondence
//!
//! `cover(m)`, the reference nodes a candidate node `m` stands for: the reference ENTRY
//! (EXIT) for an ENTRY (EXIT) node; else every non-entry/exit reference node with a line in
//! `m`'s lines; for a node without lines, the k-th line-less candidate node of its category
//! stands for the k-th reference node of that category (in line order). A candidate edge
//! `m1 → m2` *corresponds to* a reference edge `r1 → r2` when `r1 ∈ cover(m1)` and
//! `r2 ∈ cover(m2)`.
//!
//! *Jump edges* `J(G)` are the control transfers: edges leaving a BRANCH, LOOP or JUMP node,
//! edges entering an EXCEPT node, and retreating edges (edges to a node on the stack of a
//! depth-first search from ENTRY, successors in edge order; nodes the search does not reach
//! start further searches in index order). Each has a *kind*: `back` (retreating),
//! `exception` (into EXCEPT), `branch`, `loop`, `return` (JUMP → EXIT), `jump` (other JUMP
//! edges), in that precedence. `K(G)` is the set of kinds in `J(G)`.
//!
//! # Jump Redundancy: how many of the model's jump edges are unnecessary?
//!
//! ```text
//! jump_redundancy = |{e ∈ J(M) : e corresponds to no edge of R}| / |J(M)|     (0 if J(M) = ∅)
//! ```
//!
//! # Jump Fabrication: which kinds of jump exist only in the model?
//!
//! ```text
//! jump_fabrication = |K(M) \ K(R)| / |K(M)|                                     (0 if K(M) = ∅)
//! ```
//!
//! # CFG Shape Error: how much of the core shape is lost?
//!
//! With CORE = {ENTRY, EXIT, BRANCH, LOOP}, *coverage* `C` is the share of reference CORE nodes
//! `r` covered by a candidate node of the same category (`r ∈ cover(m)`, `cat(m) = cat(r)`),
//! and *path preservation* `P` the share of reference jump edges `r1 → r2` for which some
//! `m1` with `r1 ∈ cover(m1)` reaches some `m2` with `r2 ∈ cover(m2)` in the candidate graph
//! (a path of zero or more edges: a coarse candidate node may stand for both ends):
//!
//! ```text
//! shape_error = max(1 − C, 1 − P)          (C = 1 without CORE nodes, P = 1 if J(R) = ∅)
//! ```
//!
//! # Pass/fail
//!
//! Pass iff `jump_redundancy ≤ 0.40`, `jump_fabrication ≤ 0.25` and `shape_error ≤ 0.45`
//! (the paper's thresholds, [`CfgThresholds::default`]).
//!
//! # Worked example
//!
//! ```text
//! 1 def f(xs):             reference R: entry → 2(loop) ─true→ 3(branch) ─true→ 4(jump: return)
//! 2     for x in xs:                    3 ─false→ 2 (back)   2 ─false→ 5(jump: return)
//! 3         if x:                       4 → exit   5 → exit
//! 4             return x
//! 5     return None
//! ```
//!
//! `J(R)`: 2→3 (loop), 2→5 (loop), 3→4 (branch), 3→2 (back), 4→exit (return), 5→exit
//! (return); `K(R)` = {loop, branch, back, return}. A candidate that has every node and edge
//! of R, plus a fabricated `3 ─exception→ 5` edge from the branch node and a merge node that
//! it splices to nothing new: `J(M)` has 7 edges, 6 correspond, so
//! `jump_redundancy = 1/7 ≈ 0.14`; the extra edge leaves a BRANCH node so its kind is
//! `branch` (the precedence puts `exception` only on edges into EXCEPT nodes), `K(M) = K(R)`,
//! `jump_fabrication = 0`; all 4 CORE nodes are covered and every reference jump path is
//! preserved, `shape_error = 0`: pass. A candidate without the back edge 3→2 and with the
//! loop node typed "statement" loses one of four CORE nodes (C = 3/4) and the paths 2→3,
//! 2→5 still exist but 3→2 does not (P = 5/6): `shape_error = max(0.25, 0.17) = 0.25`, still
//! within 0.45; the test `worked_example_scores` checks these numbers.

use super::within;
use crate::analysis::cfg::{Cfg, NodeKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many nodes / edges are kept from a candidate graph.
pub const MAX_NODES: usize = 4000;
pub const MAX_EDGES: usize = 16000;
/// Work bound (node visits) for the reachability searches of one scoring.
pub const REACH_BUDGET: u64 = 20_000_000;

/// The ten node categories of the CFG comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CfgCategory {
    Entry,
    Exit,
    Branch,
    Loop,
    Call,
    Try,
    Except,
    Jump,
    Merge,
    Normal,
}

impl CfgCategory {
    /// NORMAL, MERGE and JUMP (the paper's auxiliary categories).
    pub fn is_auxiliary(self) -> bool {
        matches!(
            self,
            CfgCategory::Normal | CfgCategory::Merge | CfgCategory::Jump
        )
    }

    /// ENTRY, EXIT, BRANCH and LOOP (the shape error's coverage set).
    pub fn is_core(self) -> bool {
        matches!(
            self,
            CfgCategory::Entry | CfgCategory::Exit | CfgCategory::Branch | CfgCategory::Loop
        )
    }

    pub fn from_kind(kind: NodeKind) -> CfgCategory {
        match kind {
            NodeKind::Entry => CfgCategory::Entry,
            NodeKind::Exit => CfgCategory::Exit,
            NodeKind::Branch => CfgCategory::Branch,
            NodeKind::Loop => CfgCategory::Loop,
            NodeKind::Call => CfgCategory::Call,
            NodeKind::Return | NodeKind::Jump => CfgCategory::Jump,
            NodeKind::Try => CfgCategory::Try,
            NodeKind::Except => CfgCategory::Except,
            NodeKind::Normal => CfgCategory::Normal,
        }
    }
}

/// One node: its category and the (function-relative) line spans it covers; no spans for
/// entry/exit and for candidate nodes without lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CfgNodeN {
    pub category: CfgCategory,
    pub spans: Vec<(usize, usize)>,
}

impl CfgNodeN {
    fn first_line(&self) -> usize {
        self.spans.iter().map(|s| s.0).min().unwrap_or(0)
    }

    fn overlaps(&self, other: &CfgNodeN) -> bool {
        self.spans
            .iter()
            .any(|a| other.spans.iter().any(|b| a.0 <= b.1 && b.0 <= a.1))
    }
}

/// A comparable CFG: nodes and directed edges (indices into `nodes`; parallel edges merged).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CfgGraph {
    pub nodes: Vec<CfgNodeN>,
    pub edges: Vec<(usize, usize)>,
}

impl CfgGraph {
    /// The analyzer's CFG with lines made relative to `first_line` (the function's first line).
    pub fn from_cfg(cfg: &Cfg, first_line: usize) -> CfgGraph {
        let nodes = cfg
            .graph
            .node_indices()
            .map(|i| {
                let n = &cfg.graph[i];
                let category = CfgCategory::from_kind(n.kind);
                let spans = if matches!(category, CfgCategory::Entry | CfgCategory::Exit) {
                    Vec::new()
                } else {
                    let l = n.line.saturating_sub(first_line) + 1;
                    vec![(l, l)]
                };
                CfgNodeN { category, spans }
            })
            .collect();
        let mut edges: Vec<(usize, usize)> = cfg
            .graph
            .edge_indices()
            .filter_map(|e| cfg.graph.edge_endpoints(e))
            .map(|(a, b)| (a.index(), b.index()))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        CfgGraph { nodes, edges }
    }

    /// Drops edges whose endpoints do not exist and duplicate edges.
    pub fn sanitized(mut self) -> CfgGraph {
        let n = self.nodes.len();
        self.edges.retain(|&(a, b)| a < n && b < n);
        self.edges.sort_unstable();
        self.edges.dedup();
        self
    }

    fn successors(&self) -> Vec<Vec<usize>> {
        let mut succ = vec![Vec::new(); self.nodes.len()];
        for &(a, b) in &self.edges {
            if let Some(s) = succ.get_mut(a) {
                s.push(b);
            }
        }
        succ
    }

    fn predecessors(&self) -> Vec<Vec<usize>> {
        let mut pred = vec![Vec::new(); self.nodes.len()];
        for &(a, b) in &self.edges {
            if let Some(p) = pred.get_mut(b) {
                p.push(a);
            }
        }
        pred
    }

    fn category(&self, i: usize) -> CfgCategory {
        self.nodes
            .get(i)
            .map(|n| n.category)
            .unwrap_or(CfgCategory::Normal)
    }

    fn entry(&self) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.category == CfgCategory::Entry)
    }
}

/// Keyword sets for [`category_for`], in priority order.
const MERGE_WORDS: &[&str] = &[
    "merge", "join", "phi", "endif", "converge", "junction", "endloop",
];
const ENTRY_WORDS: &[&str] = &["entry", "start", "begin", "enter"];
const EXIT_WORDS: &[&str] = &["exit", "end", "stop", "terminal", "finish", "sink"];
const EXCEPT_WORDS: &[&str] = &["except", "catch", "handler", "rescue"];
const LOOP_WORDS: &[&str] = &[
    "loop",
    "for",
    "while",
    "do",
    "foreach",
    "repeat",
    "until",
    "iterate",
    "iteration",
];
const BRANCH_WORDS: &[&str] = &[
    "branch",
    "if",
    "elif",
    "elseif",
    "switch",
    "case",
    "condition",
    "conditional",
    "decision",
    "ternary",
    "assert",
    "predicate",
    "match",
];
const JUMP_WORDS: &[&str] = &[
    "jump", "return", "break", "continue", "goto", "throw", "raise", "revert",
];
const CALL_WORDS: &[&str] = &["call", "invoke", "invocation", "new"];
const CONTROL_WORDS: &[&str] = &["if", "loop", "while", "for", "switch", "try", "block"];

fn type_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in s.split(|c: char| !c.is_alphanumeric()) {
        let mut cur = String::new();
        let mut prev_lower = false;
        for c in part.chars() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.extend(c.to_lowercase());
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// Maps an LLM node type (and the node's code text, for generic types) to a category; see the
/// module docs for the rules.
pub fn category_for(node_type: &str, text: &str) -> CfgCategory {
    let words = type_words(&node_type.chars().take(200).collect::<String>());
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    let category = if has(MERGE_WORDS) || (words.iter().any(|w| w == "end") && has(CONTROL_WORDS)) {
        CfgCategory::Merge
    } else if has(ENTRY_WORDS) {
        CfgCategory::Entry
    } else if has(EXIT_WORDS) {
        CfgCategory::Exit
    } else if has(EXCEPT_WORDS) {
        CfgCategory::Except
    } else if words.iter().any(|w| w == "try") {
        CfgCategory::Try
    } else if has(LOOP_WORDS) {
        CfgCategory::Loop
    } else if has(BRANCH_WORDS) {
        CfgCategory::Branch
    } else if has(JUMP_WORDS) {
        CfgCategory::Jump
    } else if has(CALL_WORDS) {
        CfgCategory::Call
    } else {
        CfgCategory::Normal
    };
    if category == CfgCategory::Normal {
        return category_from_text(text);
    }
    category
}

/// Text heuristics for generic statement nodes.
fn category_from_text(text: &str) -> CfgCategory {
    let t: String = text.trim().chars().take(200).collect();
    let first: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let first = first.to_ascii_lowercase();
    match first.as_str() {
        "return" | "break" | "continue" | "goto" | "throw" | "raise" | "revert" => {
            return CfgCategory::Jump
        }
        "if" | "elif" | "switch" | "assert" => return CfgCategory::Branch,
        "while" | "for" | "do" | "foreach" => return CfgCategory::Loop,
        "try" => return CfgCategory::Try,
        "catch" | "except" => return CfgCategory::Except,
        _ => {}
    }
    if looks_like_call_statement(&t) {
        CfgCategory::Call
    } else {
        CfgCategory::Normal
    }
}

/// `f(x)`, `obj.m(a, b);`, `x = g(y)`, `int n = h();`, `await f()`, `new T(..)`.
fn looks_like_call_statement(t: &str) -> bool {
    let t = t.trim().trim_end_matches(';').trim();
    // Drop an assignment prefix `lhs = ` (not `==`, `<=`, `>=`, `!=`).
    let bytes = t.as_bytes();
    let mut rhs = t;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'=' {
            let prev = if i > 0 {
                bytes.get(i - 1).copied()
            } else {
                None
            };
            let next = bytes.get(i + 1).copied();
            if next != Some(b'=') && !matches!(prev, Some(b'=' | b'!' | b'<' | b'>')) {
                rhs = t.get(i + 1..).unwrap_or("").trim();
                break;
            }
        }
        if b == b'(' {
            break;
        }
    }
    let rhs = rhs.strip_prefix("await ").unwrap_or(rhs).trim();
    if rhs.starts_with("new ") {
        return true;
    }
    let head: String = rhs
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '-' | '>' | '$'))
        .collect();
    if head.is_empty()
        || !head
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
    {
        return false;
    }
    let rest = rhs.get(head.len()..).unwrap_or("").trim_start();
    // The argument list opened right after the callee must close at the very end.
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1 == rest.len();
                }
            }
            _ if i == 0 => return false,
            _ => {}
        }
    }
    false
}

/// Thresholds (inclusive) and canonicalisation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CfgThresholds {
    pub jump_redundancy: f64,
    pub jump_fabrication: f64,
    pub shape_error: f64,
    /// Canonicalisation applies from this many nodes ...
    pub collapse_min_nodes: usize,
    /// ... when at least this share of nodes is auxiliary.
    pub collapse_aux_share: f64,
}

impl Default for CfgThresholds {
    /// The paper's values: 0.40 / 0.25 / 0.45; collapse at ≥ 15 nodes and ≥ 80% auxiliary.
    fn default() -> Self {
        CfgThresholds {
            jump_redundancy: 0.40,
            jump_fabrication: 0.25,
            shape_error: 0.45,
            collapse_min_nodes: 15,
            collapse_aux_share: 0.80,
        }
    }
}

/// What one candidate edge is, judged against the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeJudgement {
    /// Corresponds to a reference edge.
    Matched,
    /// No reference edge corresponds, but the reference does not rule it out either.
    Unmatched,
    /// The reference rules it out: no path leads from any node its source stands for to any
    /// node its target stands for (never said of edges into EXCEPT nodes, whose exceptional
    /// flow the syntactic CFG does not model per call, nor of a partial reference).
    Impossible,
}

/// The three CFG scores, the verdict, and per-edge evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CfgScores {
    pub jump_redundancy: f64,
    pub jump_fabrication: f64,
    pub shape_error: f64,
    pub pass: bool,
    pub thresholds: CfgThresholds,
    /// `C` and `P` of the shape error.
    pub core_coverage: f64,
    pub path_preservation: f64,
    pub reference_collapsed: bool,
    pub candidate_collapsed: bool,
    /// Jump kinds only the candidate has.
    pub fabricated_kinds: Vec<String>,
    /// For each reference edge (in the order of the canonical reference's edges): whether a
    /// candidate edge corresponds to it.
    #[serde(skip)]
    pub reference_edges: Vec<((usize, usize), bool)>,
    /// For each candidate edge (canonical candidate's edges): its judgement.
    #[serde(skip)]
    pub candidate_edges: Vec<((usize, usize), EdgeJudgement)>,
    /// False when a work bound cut the reachability searches short (then nothing more is
    /// judged impossible and path preservation counts unsearched paths as lost).
    pub exact: bool,
}

/// Splices out MERGE nodes: each predecessor gets an edge to each successor (bounded by
/// [`MAX_EDGES`]).
fn splice_merges(g: &CfgGraph) -> CfgGraph {
    let keep: Vec<bool> = g
        .nodes
        .iter()
        .map(|n| n.category != CfgCategory::Merge)
        .collect();
    if keep.iter().all(|k| *k) {
        return g.clone();
    }
    let succ = g.successors();
    // Targets reachable from `n` through merge nodes only (iterative, cycle-safe).
    let resolve = |n: usize| -> Vec<usize> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if keep.get(x).copied().unwrap_or(false) {
                out.insert(x);
            } else if let Some(s) = succ.get(x) {
                stack.extend(s.iter().copied());
            }
        }
        out.into_iter().collect()
    };
    let mut map = vec![usize::MAX; g.nodes.len()];
    let mut nodes = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if keep[i] {
            map[i] = nodes.len();
            nodes.push(n.clone());
        }
    }
    let mut edges = BTreeSet::new();
    for &(a, b) in &g.edges {
        if !keep[a] {
            continue;
        }
        let targets = if keep[b] { vec![b] } else { resolve(b) };
        for t in targets {
            if edges.len() >= MAX_EDGES {
                break;
            }
            edges.insert((map[a], map[t]));
        }
    }
    CfgGraph {
        nodes,
        edges: edges.into_iter().collect(),
    }
}

/// Collapses chains of auxiliary nodes when the graph is large and mostly auxiliary (see the
/// module docs). Returns the graph and whether it collapsed.
pub fn canonicalize(g: &CfgGraph, t: &CfgThresholds) -> (CfgGraph, bool) {
    let n = g.nodes.len();
    let aux = g.nodes.iter().filter(|x| x.category.is_auxiliary()).count();
    if n == 0 || n < t.collapse_min_nodes || (aux as f64) < t.collapse_aux_share * n as f64 - 1e-9 {
        return (g.clone(), false);
    }
    let succ = g.successors();
    let pred = g.predecessors();
    let aux_at = |i: usize| g.category(i).is_auxiliary();
    // `link[i] = Some(j)`: i and its only successor j are chained.
    let link: Vec<Option<usize>> = (0..n)
        .map(|i| match succ[i].as_slice() {
            [j] if *j != i && aux_at(i) && aux_at(*j) && pred[*j].len() == 1 => Some(*j),
            _ => None,
        })
        .collect();
    let mut linked_to = vec![false; n];
    for j in link.iter().flatten() {
        linked_to[*j] = true;
    }
    let mut group = vec![usize::MAX; n];
    let mut nodes: Vec<CfgNodeN> = Vec::new();
    // Chain heads first (nodes nobody links to), then leftover cycles.
    let mut order: Vec<usize> = (0..n).filter(|&i| !linked_to[i]).collect();
    order.extend((0..n).filter(|&i| linked_to[i]));
    for start in order {
        if group[start] != usize::MAX {
            continue;
        }
        let id = nodes.len();
        let mut node = g.nodes[start].clone();
        group[start] = id;
        let mut cur = start;
        while let Some(next) = link[cur] {
            if group[next] != usize::MAX {
                break;
            }
            group[next] = id;
            node.spans.extend(g.nodes[next].spans.iter().copied());
            node.category = g.nodes[next].category;
            cur = next;
        }
        node.spans.sort_unstable();
        node.spans.dedup();
        nodes.push(node);
    }
    let mut edges: Vec<(usize, usize)> = g
        .edges
        .iter()
        .filter(|&&(a, b)| link[a] != Some(b))
        .map(|&(a, b)| (group[a], group[b]))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    (CfgGraph { nodes, edges }, true)
}

/// Jump edges of a graph with their kinds (see the module docs).
pub fn jump_edges(g: &CfgGraph) -> BTreeMap<(usize, usize), &'static str> {
    let retreating = retreating_edges(g);
    let mut out = BTreeMap::new();
    for &(a, b) in &g.edges {
        let (ca, cb) = (g.category(a), g.category(b));
        let kind = if retreating.contains(&(a, b)) {
            "back"
        } else if cb == CfgCategory::Except {
            "exception"
        } else if ca == CfgCategory::Branch {
            "branch"
        } else if ca == CfgCategory::Loop {
            "loop"
        } else if ca == CfgCategory::Jump && cb == CfgCategory::Exit {
            "return"
        } else if ca == CfgCategory::Jump {
            "jump"
        } else {
            continue;
        };
        out.insert((a, b), kind);
    }
    out
}

/// Edges to a node on the DFS stack (iterative DFS from entry, then from unvisited nodes).
fn retreating_edges(g: &CfgGraph) -> BTreeSet<(usize, usize)> {
    let n = g.nodes.len();
    let succ = g.successors();
    // 0 = unvisited, 1 = on stack, 2 = done
    let mut state = vec![0u8; n];
    let mut out = BTreeSet::new();
    let starts = g.entry().into_iter().chain(0..n);
    for s in starts {
        if state[s] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(s, 0)];
        state[s] = 1;
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            if let Some(&w) = succ[v].get(i) {
                top.1 += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        out.insert((v, w));
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    out
}

/// `cover(m)` for every candidate node (see the module docs).
fn covers(reference: &CfgGraph, candidate: &CfgGraph) -> Vec<BTreeSet<usize>> {
    // Reference nodes per category in line order, for line-less candidate nodes.
    let mut by_category: BTreeMap<CfgCategory, Vec<usize>> = BTreeMap::new();
    for (i, r) in reference.nodes.iter().enumerate() {
        by_category.entry(r.category).or_default().push(i);
    }
    for list in by_category.values_mut() {
        list.sort_by_key(|&i| (reference.nodes[i].first_line(), i));
    }
    let mut lineless_seen: BTreeMap<CfgCategory, usize> = BTreeMap::new();
    candidate
        .nodes
        .iter()
        .map(|m| match m.category {
            CfgCategory::Entry | CfgCategory::Exit => reference
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, r)| r.category == m.category)
                .map(|(i, _)| i)
                .collect(),
            _ if m.spans.is_empty() => {
                let k = lineless_seen.entry(m.category).or_insert(0);
                let hit = by_category
                    .get(&m.category)
                    .and_then(|l| l.get(*k))
                    .copied();
                *k += 1;
                hit.into_iter().collect()
            }
            _ => reference
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    !matches!(r.category, CfgCategory::Entry | CfgCategory::Exit) && r.overlaps(m)
                })
                .map(|(i, _)| i)
                .collect(),
        })
        .collect()
}

/// Multi-source reachability with a shared work budget. `min_edges` 0 counts the sources
/// themselves as reached.
fn reaches(
    succ: &[Vec<usize>],
    sources: &BTreeSet<usize>,
    targets: &BTreeSet<usize>,
    min_edges: usize,
    budget: &mut u64,
) -> Option<bool> {
    if sources.is_empty() || targets.is_empty() {
        return Some(false);
    }
    if min_edges == 0 && sources.iter().any(|s| targets.contains(s)) {
        return Some(true);
    }
    let n = succ.len();
    let mut seen = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    for &s in sources {
        for &w in succ.get(s).into_iter().flatten() {
            if w < n && !seen[w] {
                seen[w] = true;
                stack.push(w);
            }
        }
    }
    while let Some(v) = stack.pop() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if targets.contains(&v) {
            return Some(true);
        }
        for &w in succ.get(v).into_iter().flatten() {
            if w < n && !seen[w] {
                seen[w] = true;
                stack.push(w);
            }
        }
    }
    Some(false)
}

/// Scores a candidate CFG against the reference. `reference_partial`: the analyzer's CFG is
/// incomplete (syntax errors, depth limit), so nothing is judged impossible.
pub fn score_cfg(
    reference: &CfgGraph,
    candidate: &CfgGraph,
    reference_partial: bool,
    t: &CfgThresholds,
) -> CfgScores {
    let reference = splice_merges(&reference.clone().sanitized());
    let candidate = splice_merges(&candidate.clone().sanitized());
    let (r, reference_collapsed) = canonicalize(&reference, t);
    let (m, candidate_collapsed) = canonicalize(&candidate, t);
    let cover = covers(&r, &m);
    let empty = BTreeSet::new();
    let cover_of = |i: usize| cover.get(i).unwrap_or(&empty);
    let r_succ = r.successors();
    let m_succ = m.successors();
    let mut budget = REACH_BUDGET;
    let mut exact = true;

    let r_edges: BTreeSet<(usize, usize)> = r.edges.iter().copied().collect();
    let corresponds = |a: usize, b: usize| -> bool {
        let (ca, cb) = (cover_of(a), cover_of(b));
        ca.iter()
            .any(|x| cb.iter().any(|y| r_edges.contains(&(*x, *y))))
    };

    // Candidate edges: matched / unmatched / impossible.
    let mut candidate_edges = Vec::with_capacity(m.edges.len());
    let mut matched_reference: BTreeSet<(usize, usize)> = BTreeSet::new();
    for &(a, b) in &m.edges {
        let (ca, cb) = (cover_of(a), cover_of(b));
        let mut hit = false;
        for x in ca {
            for y in cb {
                if r_edges.contains(&(*x, *y)) {
                    matched_reference.insert((*x, *y));
                    hit = true;
                }
            }
        }
        let judgement = if hit {
            EdgeJudgement::Matched
        } else if reference_partial
            || m.category(b) == CfgCategory::Except
            || ca.is_empty()
            || cb.is_empty()
            || cb.iter().any(|y| r.category(*y) == CfgCategory::Except)
        {
            EdgeJudgement::Unmatched
        } else {
            match reaches(&r_succ, ca, cb, 1, &mut budget) {
                Some(false) => EdgeJudgement::Impossible,
                Some(true) => EdgeJudgement::Unmatched,
                None => {
                    exact = false;
                    EdgeJudgement::Unmatched
                }
            }
        };
        candidate_edges.push(((a, b), judgement));
    }
    let reference_edges: Vec<((usize, usize), bool)> = r
        .edges
        .iter()
        .map(|e| (*e, matched_reference.contains(e)))
        .collect();

    // Jump redundancy.
    let jm = jump_edges(&m);
    let redundant = jm.keys().filter(|(a, b)| !corresponds(*a, *b)).count();
    let jump_redundancy = ratio(redundant, jm.len(), 0.0);

    // Jump fabrication.
    let jr = jump_edges(&r);
    let km: BTreeSet<&str> = jm.values().copied().collect();
    let kr: BTreeSet<&str> = jr.values().copied().collect();
    let fabricated: Vec<String> = km.difference(&kr).map(|s| s.to_string()).collect();
    let jump_fabrication = ratio(fabricated.len(), km.len(), 0.0);

    // Shape error: core coverage and path preservation.
    let core: Vec<usize> = (0..r.nodes.len())
        .filter(|&i| r.category(i).is_core())
        .collect();
    let covered = core
        .iter()
        .filter(|&&ri| {
            m.nodes
                .iter()
                .enumerate()
                .any(|(mi, mn)| mn.category == r.category(ri) && cover_of(mi).contains(&ri))
        })
        .count();
    let core_coverage = 1.0 - ratio(core.len() - covered, core.len(), 0.0);
    // Inverse cover: reference node -> candidate nodes standing for it.
    let mut inverse: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (mi, c) in cover.iter().enumerate() {
        for &ri in c {
            inverse.entry(ri).or_default().insert(mi);
        }
    }
    let mut preserved = 0usize;
    for &(a, b) in jr.keys() {
        let (sa, sb) = (
            inverse.get(&a).unwrap_or(&empty),
            inverse.get(&b).unwrap_or(&empty),
        );
        match reaches(&m_succ, sa, sb, 0, &mut budget) {
            Some(true) => preserved += 1,
            Some(false) => {}
            None => exact = false,
        }
    }
    let path_preservation = 1.0 - ratio(jr.len() - preserved, jr.len(), 0.0);
    let shape_error = (1.0 - core_coverage)
        .max(1.0 - path_preservation)
        .clamp(0.0, 1.0);

    let pass = within(jump_redundancy, t.jump_redundancy)
        && within(jump_fabrication, t.jump_fabrication)
        && within(shape_error, t.shape_error);
    CfgScores {
        jump_redundancy,
        jump_fabrication,
        shape_error,
        pass,
        thresholds: *t,
        core_coverage,
        path_preservation,
        reference_collapsed,
        candidate_collapsed,
        fabricated_kinds: fabricated,
        reference_edges,
        candidate_edges,
        exact,
    }
}

/// `num / den`, or `empty` when `den` is 0.
fn ratio(num: usize, den: usize, empty: f64) -> f64 {
    if den == 0 {
        empty
    } else {
        num as f64 / den as f64
    }
}

/// The graphs as scored (after merge splicing and canonicalisation), for reporting.
pub fn canonical_pair(
    reference: &CfgGraph,
    candidate: &CfgGraph,
    t: &CfgThresholds,
) -> (CfgGraph, CfgGraph) {
    let r = canonicalize(&splice_merges(&reference.clone().sanitized()), t).0;
    let m = canonicalize(&splice_merges(&candidate.clone().sanitized()), t).0;
    (r, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::lang::kind;
    use CfgCategory::*;

    fn node(category: CfgCategory, line: Option<usize>) -> CfgNodeN {
        CfgNodeN {
            category,
            spans: line.map(|l| vec![(l, l)]).unwrap_or_default(),
        }
    }

    fn graph(nodes: &[(CfgCategory, Option<usize>)], edges: &[(usize, usize)]) -> CfgGraph {
        CfgGraph {
            nodes: nodes.iter().map(|&(c, l)| node(c, l)).collect(),
            edges: edges.to_vec(),
        }
    }

    /// The module docs' reference: 0 entry, 1 loop@2, 2 branch@3, 3 jump@4, 4 jump@5, 5 exit.
    fn reference() -> CfgGraph {
        graph(
            &[
                (Entry, None),
                (Loop, Some(2)),
                (Branch, Some(3)),
                (Jump, Some(4)),
                (Jump, Some(5)),
                (Exit, None),
            ],
            &[(0, 1), (1, 2), (1, 4), (2, 3), (2, 1), (3, 5), (4, 5)],
        )
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn identical_graphs_score_zero() {
        let s = score_cfg(&reference(), &reference(), false, &CfgThresholds::default());
        assert_eq!(
            (s.jump_redundancy, s.jump_fabrication, s.shape_error),
            (0.0, 0.0, 0.0)
        );
        assert!(s.pass && s.exact);
        assert!(s.reference_edges.iter().all(|(_, m)| *m));
        assert!(s
            .candidate_edges
            .iter()
            .all(|(_, j)| *j == EdgeJudgement::Matched));
    }

    #[test]
    fn worked_example_scores() {
        // Extra edge branch@3 -> return@5 plus a merge node between the loop and return@5.
        let mut with_extra = reference();
        with_extra.nodes.push(node(Merge, None)); // 6
        with_extra.edges.retain(|e| *e != (1, 4));
        with_extra.edges.extend([(1, 6), (6, 4), (2, 4)]);
        let s = score_cfg(&reference(), &with_extra, false, &CfgThresholds::default());
        assert!(close(s.jump_redundancy, 1.0 / 7.0), "{s:?}");
        assert_eq!(s.jump_fabrication, 0.0);
        assert_eq!(s.shape_error, 0.0);
        assert!(s.pass);
        // The extra edge is possible in the reference (3 reaches 5 through the loop).
        assert!(s
            .candidate_edges
            .iter()
            .any(|(_, j)| *j == EdgeJudgement::Unmatched));

        // No back edge, loop typed as a statement.
        let mut weak = reference();
        weak.nodes[1].category = Normal;
        weak.edges.retain(|e| *e != (2, 1));
        let s = score_cfg(&reference(), &weak, false, &CfgThresholds::default());
        assert!(close(s.core_coverage, 0.75), "{s:?}");
        assert!(close(s.path_preservation, 5.0 / 6.0), "{s:?}");
        assert!(close(s.shape_error, 0.25));
        assert!(s.pass);
    }

    #[test]
    fn fabricated_exception_kind_is_counted() {
        // Candidate adds an except handler reached from the loop: kind `exception` is new.
        let mut m = reference();
        m.nodes.push(node(Except, Some(4))); // 6, shares line 4 with the return
        m.edges.push((1, 6));
        m.edges.push((6, 5));
        let s = score_cfg(&reference(), &m, false, &CfgThresholds::default());
        assert_eq!(s.fabricated_kinds, ["exception"]);
        // K(M) = {loop, branch, back, return, exception}: 1/5.
        assert!(close(s.jump_fabrication, 0.2));
    }

    #[test]
    fn impossible_edges_are_refutable_only_with_a_complete_reference() {
        // Straight line: entry -> 2 -> 3 -> exit. The candidate claims 3 -> 2 (a loop).
        let r = graph(
            &[
                (Entry, None),
                (Normal, Some(2)),
                (Normal, Some(3)),
                (Exit, None),
            ],
            &[(0, 1), (1, 2), (2, 3)],
        );
        let mut m = r.clone();
        m.edges.push((2, 1));
        let s = score_cfg(&r, &m, false, &CfgThresholds::default());
        let back = s
            .candidate_edges
            .iter()
            .find(|(e, _)| *e == (2, 1))
            .map(|(_, j)| *j);
        assert_eq!(back, Some(EdgeJudgement::Impossible));
        // A retreating edge is a jump edge of kind `back`, unknown to the reference.
        assert_eq!(s.fabricated_kinds, ["back"]);
        assert!(close(s.jump_redundancy, 1.0));
        let s = score_cfg(&r, &m, true, &CfgThresholds::default());
        assert!(s
            .candidate_edges
            .iter()
            .all(|(_, j)| *j != EdgeJudgement::Impossible));
    }

    #[test]
    fn missing_branch_breaks_the_shape() {
        let r = graph(
            &[
                (Entry, None),
                (Branch, Some(2)),
                (Normal, Some(3)),
                (Normal, Some(4)),
                (Exit, None),
            ],
            &[(0, 1), (1, 2), (1, 3), (2, 3), (3, 4)],
        );
        let m = graph(
            &[
                (Entry, None),
                (Normal, Some(3)),
                (Normal, Some(4)),
                (Exit, None),
            ],
            &[(0, 1), (1, 2), (2, 3)],
        );
        let s = score_cfg(&r, &m, false, &CfgThresholds::default());
        // Core: entry, branch, exit; the branch is missing: C = 2/3. Jump edges of R: 2->3 and
        // 2->4 from the branch, whose source nothing covers: P = 0.
        assert!(close(s.core_coverage, 2.0 / 3.0));
        assert_eq!(s.path_preservation, 0.0);
        assert_eq!(s.shape_error, 1.0);
        assert!(!s.pass);
    }

    #[test]
    fn lineless_nodes_align_by_category_order() {
        let r = reference();
        let m = graph(
            &[
                (Entry, None),
                (Loop, None),
                (Branch, None),
                (Jump, None),
                (Jump, None),
                (Exit, None),
            ],
            &r.edges,
        );
        let s = score_cfg(&r, &m, false, &CfgThresholds::default());
        assert_eq!(s.jump_redundancy, 0.0);
        assert_eq!(s.shape_error, 0.0);
    }

    #[test]
    fn canonicalisation_collapses_long_auxiliary_chains_only_in_large_graphs() {
        // entry -> 14 normal statements in a row -> exit: 16 nodes, 14/16 auxiliary.
        let mut nodes = vec![(Entry, None)];
        nodes.extend((2..16).map(|l| (Normal, Some(l))));
        nodes.push((Exit, None));
        let edges: Vec<(usize, usize)> = (0..15).map(|i| (i, i + 1)).collect();
        let g = graph(&nodes, &edges);
        let (c, collapsed) = canonicalize(&g, &CfgThresholds::default());
        assert!(collapsed);
        assert_eq!(c.nodes.len(), 3);
        assert_eq!(c.nodes[1].spans.len(), 14);
        // A coarse candidate (one block covering lines 2-15) now matches it exactly.
        let coarse = CfgGraph {
            nodes: vec![
                node(Entry, None),
                CfgNodeN {
                    category: Normal,
                    spans: vec![(2, 15)],
                },
                node(Exit, None),
            ],
            edges: vec![(0, 1), (1, 2)],
        };
        let s = score_cfg(&g, &coarse, false, &CfgThresholds::default());
        assert!(s.reference_collapsed && !s.candidate_collapsed);
        assert!(s.pass);
        // Small graphs stay as they are.
        let (same, collapsed) = canonicalize(&reference(), &CfgThresholds::default());
        assert!(!collapsed);
        assert_eq!(same, reference());
    }

    #[test]
    fn merge_nodes_are_spliced() {
        let g = graph(
            &[
                (Entry, None),
                (Branch, Some(2)),
                (Merge, None),
                (Normal, Some(4)),
                (Exit, None),
            ],
            &[(0, 1), (1, 2), (1, 2), (2, 3), (3, 4)],
        );
        let s = splice_merges(&g.sanitized());
        assert_eq!(s.nodes.len(), 4);
        assert_eq!(s.edges, vec![(0, 1), (1, 2), (2, 3)]);
        // A cycle of merges does not hang.
        let cyc = graph(
            &[(Entry, None), (Merge, None), (Merge, None)],
            &[(0, 1), (1, 2), (2, 1)],
        );
        assert_eq!(splice_merges(&cyc).nodes.len(), 1);
    }

    #[test]
    fn category_keywords_and_text_heuristics() {
        assert_eq!(category_for("entry", ""), Entry);
        assert_eq!(category_for("EndIf", ""), Merge);
        assert_eq!(category_for("end_if", ""), Merge);
        assert_eq!(category_for("end", ""), Exit);
        assert_eq!(category_for("IfStatement", ""), Branch);
        assert_eq!(category_for("ForLoop", ""), Loop);
        assert_eq!(category_for(kind::CATCH_CLAUSE, ""), Except);
        assert_eq!(category_for("TryBlock", ""), Try);
        assert_eq!(category_for("return", ""), Jump);
        assert_eq!(category_for("MethodCall", ""), Call);
        assert_eq!(category_for("statement", "return x;"), Jump);
        assert_eq!(category_for("statement", "x = obj.load(path);"), Call);
        assert_eq!(category_for("statement", "int n = count();"), Call);
        assert_eq!(category_for("statement", "await fetch(url)"), Call);
        assert_eq!(category_for("stmt", "x = y + 1"), Normal);
        assert_eq!(category_for("stmt", "if (a == b) f(x)"), Branch);
        assert_eq!(category_for("", "while (x)"), Loop);
        assert_eq!(category_for("statement", "ok = a == f(b)"), Normal);
        assert_eq!(category_for("statement", "f(a) + g(b)"), Normal);
    }

    #[test]
    fn empty_and_garbage_graphs_do_not_panic() {
        let empty = CfgGraph::default();
        let s = score_cfg(&empty, &empty, false, &CfgThresholds::default());
        assert!(s.pass);
        let s = score_cfg(&reference(), &empty, false, &CfgThresholds::default());
        assert_eq!(s.shape_error, 1.0);
        let garbage = CfgGraph {
            nodes: vec![node(Normal, Some(usize::MAX))],
            edges: vec![(0, 7), (9, 0), (0, 0)],
        };
        let s = score_cfg(&reference(), &garbage, false, &CfgThresholds::default());
        assert!(!s.pass);
    }
}
