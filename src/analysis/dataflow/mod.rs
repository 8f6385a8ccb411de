//! Reaching definitions, def-use chains, direct and transitive data dependency, and control
//! dependence per function.
//!
//! # Pipeline
//!
//! 1. **Def/use extraction** ([`extract`]): for every CFG node, the variables its byte range
//!    defines and reads, and which reads flow into which definitions. The entry node defines
//!    the parameters; the exit node does nothing. A `normal` node spanning a whole compound
//!    statement (the CFG's degraded form for over-deep nesting or unparsed regions) is walked
//!    entirely, with weak definitions: a coarser but sound result.
//! 2. **Reaching definitions** ([`reaching`]): a worklist solver over bit sets, bounded, polling
//!    [`Cancel`]; too-large functions fall back to a flow-insensitive answer (flagged).
//! 3. **Def-use chains** ([`DataFlow::def_use`]): definition -> lines of the uses it reaches.
//! 4. **Direct dependencies** ([`DataFlow::direct_dependencies`]): for a definition `v` at line
//!    `L`, the definitions `(var, line)` that reach the uses flowing into it; and, per use,
//!    the definitions reaching it ([`DataFlow::use_definitions`]). This is the shape of the
//!    CoRe benchmark's `datadep` labels.
//! 5. **Transitive dependencies** ([`DataFlow::dependencies`]): variable -> every *other*
//!    variable it depends on through data flow. A read with no reaching definition inside the
//!    function (a global, an uninitialised local) is a root and appears by name.
//! 6. **Control dependence** ([`DataFlow::control_dependencies`], from post-dominators): per
//!    occurrence `(var, line)`, the lines of the branch/loop conditions it depends on. Not
//!    part of `dependencies`, which is data-only.
//!
//! # Semantics
//!
//! * Definitions: assignments (tuple/destructuring element-wise when both sides have the same
//!   arity, chained `a = b = c`), augmented assignments (`x += y` defines `x`, uses `x`, `y`),
//!   `++`/`--`, declarations **with** initialisers (`int x;` defines nothing), for-each
//!   targets, `with ... as x`, `except E as e` / `catch (E e)`, parameters (at the lines where
//!   they are written), `std::cin >> x`, C/C++ `scanf`-family out-arguments (`&x`, a bare
//!   buffer, `a + i`), `&x` passed to any other call (a weak definition that also reads `x`),
//!   C functions writing their first argument (`memset`, `strcpy`, `fgets`, ...), and calls
//!   of mutating methods on a receiver (`xs.append(y)`, `m.put(k, v)`, `list.add(v)`,
//!   `v.push_back(x)`, also `Collections.sort(l)` / `heapq.heappush(h, x)` on the argument).
//! * Strong and weak definitions. A strong definition kills the variable's earlier
//!   definitions. Mutating calls and field writes (`a.f = y`, field-insensitive) are strong
//!   definitions that also *read* the variable: a new version of `a` made from the old one,
//!   so its earlier values still flow through. Index and element writes (`a[i] = y`) and
//!   possible out-arguments are *weak*: they add a definition without killing the old ones and
//!   do not list the old value as a source (the old contents keep reaching later reads).
//!   These choices follow the CoRe benchmark's human labels (see
//!   `tests/dataflow_core_bench.rs`); `fill`/`memset`-style calls overwrite without reading.
//! * Uses: identifiers read in the node, excluding callee names of plain calls, attribute /
//!   field / member names, type names, keyword-argument names, labels, operands of C
//!   `sizeof`, exception types, and names that are never defined in the function and are
//!   either ALL-CAPS constants (`EOF`, `MAX_N`) or qualifiers that look like classes or
//!   imported modules (`Math.max`, `heapq.heappush`, `System.out`). Well-known non-data
//!   library objects (`cout`, `endl`, `stdout`, `console`) are ignored, and so are input
//!   readers used through reading methods (`sc.nextInt()`, `br.readLine()`, and
//!   `sc.next()` / `sc.hasNext()` when `sc` is known as a reader): the value comes from the
//!   input, not from the reader variable.
//! * Within one CFG node, reads see the definitions reaching the node's entry (so `x = x + 1`
//!   reads the previous `x`). Lines are those of the identifiers.
//! * Nested functions, lambdas and comprehensions are summarised by their free variables,
//!   read where they are written; a named nested function is a definition of its name.
//! * Call arguments flow into the call's value: `r = f(a, b)` makes `r` depend on `a` and `b`
//!   (no interprocedural summaries).
//! * Control dependence ignores exceptional edges and considers branch and loop nodes only;
//!   the relation is the direct one (an `else if` depends on its `if`, not on what controls
//!   the `if`), and early exits (`return`, `break`, `assert`, `require`) create it.
//! * Extraction runs twice when needed: the first pass learns which names the function
//!   defines (so `S.add(x)` mutates a variable `S` while `Arrays.sort(a)` does not define a
//!   class `Arrays`) and which are input readers.
//!
//! Everything is deterministic (ordered maps and sets only), iterative, and never panics;
//! broken syntax yields facts for the parts that parse. Limits: bit sets up to
//! [`reaching::MAX_SET_WORDS`] words (larger functions get a flow-insensitive answer, flagged
//! in `errors`), a worklist budget of [`reaching::VISITS_PER_NODE`] visits per node, and a
//! work budget for the transitive closure.

pub mod control;
pub mod extract;
pub mod reaching;
#[cfg(test)]
mod tests;

use crate::analysis::cfg::{build_cfg, Cfg, NodeKind};
use crate::syntax::functions::Function;
use crate::syntax::lang::{field, kind};
use crate::syntax::parse::SourceError;
use crate::syntax::{Cancel, Language, ParsedFile};
use extract::{DefFact, NodeFacts, UseFact};
use petgraph::graph::NodeIndex;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use tree_sitter::Node;

/// A definition of a variable at a statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Def {
    pub var: String,
    /// 1-based line.
    pub line: usize,
    /// Byte range of the defining statement.
    pub start: usize,
    pub end: usize,
}

/// A variable occurrence key: `(variable, 1-based line)`.
pub type VarLine = (String, usize);

#[derive(Debug, Clone, Default)]
pub struct DataFlow {
    /// Definition -> lines (1-based) of the uses it reaches.
    pub def_use: BTreeMap<Def, BTreeSet<usize>>,
    /// Variable -> every variable it depends on, transitively (`"c": ["a", "b"]`).
    pub dependencies: BTreeMap<String, BTreeSet<String>>,
    /// Definition `(var, line)` -> definitions `(var, line)` reaching the uses that flow into
    /// it. Every definition has a key (an empty set: depends on nothing defined here).
    pub direct: BTreeMap<VarLine, BTreeSet<VarLine>>,
    /// Use `(var, line)` -> definitions `(var, line)` of `var` reaching it.
    pub use_defs: BTreeMap<VarLine, BTreeSet<VarLine>>,
    /// Occurrence `(var, line)` (definition or use) -> lines of the branch/loop conditions it
    /// is control dependent on.
    pub control: BTreeMap<VarLine, BTreeSet<usize>>,
    /// Uses with no reaching definition inside the function (parameters excluded: they are
    /// defined at entry).
    pub roots: BTreeSet<VarLine>,
    pub partial: bool,
    pub errors: Vec<SourceError>,
}

impl DataFlow {
    /// For a definition `v` at line `L`, the definitions `(var, line)` that reach its uses.
    pub fn direct_dependencies(&self) -> &BTreeMap<VarLine, BTreeSet<VarLine>> {
        &self.direct
    }

    /// For a use of `v` at line `L`, the definitions of `v` reaching it.
    pub fn use_definitions(&self) -> &BTreeMap<VarLine, BTreeSet<VarLine>> {
        &self.use_defs
    }

    /// For each occurrence `(var, line)`, the lines of the conditions it is control
    /// dependent on.
    pub fn control_dependencies(&self) -> &BTreeMap<VarLine, BTreeSet<usize>> {
        &self.control
    }

    /// True when `var` depends (transitively, through data) on `on`.
    pub fn depends_on(&self, var: &str, on: &str) -> bool {
        self.dependencies.get(var).is_some_and(|s| s.contains(on))
    }
}

/// Work budget (edge visits) for the transitive closure.
const CLOSURE_BUDGET: usize = 1 << 26;

/// Definition-use pairs materialised for a function at most: 256 Ki plus 16 per variable
/// occurrence (a use in ordinary code has one to three reaching definitions), so memory and
/// time stay linear in the function's length.
pub const PAIRS_FLOOR: usize = 1 << 18;
pub const PAIRS_PER_OCCURRENCE: usize = 16;

fn pair_bound(occurrences: usize) -> usize {
    PAIRS_FLOOR.saturating_add(occurrences.saturating_mul(PAIRS_PER_OCCURRENCE))
}

pub fn analyze_data_flow(file: &ParsedFile, func: &Function<'_>, cancel: &Cancel) -> DataFlow {
    let cfg = build_cfg(file, func, cancel);
    analyze_cfg(file, func, &cfg, cancel)
}

/// Data flow of `func` over a given CFG (whose node ranges index `file`).
pub fn analyze_cfg(file: &ParsedFile, func: &Function<'_>, cfg: &Cfg, cancel: &Cancel) -> DataFlow {
    let n = cfg.graph.node_count();
    let mut facts = vec![NodeFacts::default(); n];
    let mut extra_errors = Vec::new();
    let extract_node = |idx: NodeIndex, ctx: &extract::Context| {
        let node = &cfg.graph[idx];
        if idx == cfg.entry || node.kind == NodeKind::Entry {
            parameter_facts(file, func, node.line, cancel)
        } else if idx == cfg.exit || node.kind == NodeKind::Exit {
            NodeFacts::default()
        } else {
            let whole = node.kind == NodeKind::Normal;
            extract::extract(file, node.range.clone(), whole, ctx, cancel)
        }
    };
    // Pass 1 without context; pass 2 re-extracts the nodes whose facts depend on the
    // function's names (call receivers that may be classes, `x.next()` on readers).
    let empty = extract::Context::default();
    for idx in cfg.graph.node_indices() {
        if cancel.is_cancelled() {
            extra_errors.push(cancelled_error());
            break;
        }
        if let Some(slot) = facts.get_mut(idx.index()) {
            *slot = extract_node(idx, &empty);
        }
    }
    if facts.iter().any(|f| f.context_sensitive) && !cancel.is_cancelled() {
        let ctx = extract::Context {
            known: facts
                .iter()
                .flat_map(|f| f.defs.iter().map(|d| d.var.clone()))
                .collect(),
            readers: facts
                .iter()
                .flat_map(|f| f.readers.iter().cloned())
                .collect(),
        };
        for idx in cfg.graph.node_indices() {
            if let Some(slot) = facts.get_mut(idx.index()) {
                if slot.context_sensitive {
                    *slot = extract_node(idx, &ctx);
                }
            }
        }
    }
    // Computed once per parse and shared by every function of the file (per function it made
    // the analysis of a file quadratic in its number of functions).
    let facts = filter_non_variables(facts, file.imported_names());
    let mut df = analyze_facts(cfg, &facts, cancel);
    if !extra_errors.is_empty() {
        df.partial = true;
        df.errors.extend(extra_errors);
    }
    df
}

fn cancelled_error() -> SourceError {
    SourceError {
        line: 0,
        message: "data-flow analysis was cancelled; results are partial".into(),
    }
}

/// Data flow from per-node facts (indexed like the CFG's nodes).
pub fn analyze_facts(cfg: &Cfg, facts: &[NodeFacts], cancel: &Cancel) -> DataFlow {
    let g = &cfg.graph;
    let n = g.node_count().min(facts.len());
    let mut df = DataFlow {
        partial: cfg.partial,
        errors: cfg.errors.clone(),
        ..DataFlow::default()
    };
    if facts.iter().any(|f| f.truncated) {
        df.partial = true;
    }
    let facts = &facts[..n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in g.edge_indices() {
        if let Some((a, b)) = g.edge_endpoints(e) {
            let (a, b) = (a.index(), b.index());
            if a < n && b < n {
                succ[a].push(b);
                pred[b].push(a);
            }
        }
    }
    for l in succ.iter_mut().chain(pred.iter_mut()) {
        l.sort_unstable();
        l.dedup();
    }
    let mut sol = reaching::solve(&succ, &pred, cfg.entry.index(), facts, cancel);
    // The def-use relation itself can be quadratic in the function's length (every
    // definition of `b` under an `if` reaches every later use of `b`). Past a bound
    // proportional to the function's size, each use keeps only its nearest reaching
    // definitions, and the result says so.
    let occurrences: usize = facts.iter().map(|f| f.defs.len() + f.uses.len()).sum();
    let bound = pair_bound(occurrences);
    let pairs: usize = sol.uses.iter().flatten().map(Vec::len).sum();
    if pairs > bound {
        let uses = sol.uses.iter().map(Vec::len).sum::<usize>().max(1);
        let keep = (bound / uses).max(1);
        for list in sol.uses.iter_mut().flatten() {
            if list.len() > keep {
                // Ids are in program order: the last ones are the nearest definitions.
                list.drain(..list.len() - keep);
            }
        }
        df.partial = true;
        df.errors.push(SourceError {
            line: 0,
            message: format!(
                "function too large for exact def-use chains: {pairs} definition-use pairs \
                 exceed the bound of {bound} for {occurrences} variable occurrences; each use \
                 keeps its {keep} nearest reaching definitions"
            ),
        });
    }
    if sol.flow_insensitive {
        df.partial = true;
        df.errors.push(SourceError {
            line: 0,
            message: "function too large for flow-sensitive data flow; every definition of a \
                      variable is assumed to reach every use of it"
                .into(),
        });
    }
    if sol.cancelled {
        df.partial = true;
        df.errors.push(cancelled_error());
    }
    let range_of = |node: usize| {
        g.node_weight(NodeIndex::new(node))
            .map(|w| w.range.clone())
            .unwrap_or(0..0)
    };
    let def_of = |id: usize| -> Option<(&DefFact, usize)> {
        let site = sol.defs.get(id)?;
        Some((facts.get(site.node)?.defs.get(site.def)?, site.node))
    };
    let key_of = |id: usize| def_of(id).map(|(d, _)| (d.var.clone(), d.line));
    // Def keys, def-use chains.
    let def_keys: Vec<Option<Def>> = (0..sol.defs.len())
        .map(|id| {
            def_of(id).map(|(d, node)| {
                let r = range_of(node);
                Def {
                    var: d.var.clone(),
                    line: d.line,
                    start: r.start,
                    end: r.end,
                }
            })
        })
        .collect();
    for k in def_keys.iter().flatten() {
        df.def_use.entry(k.clone()).or_default();
    }
    // Per use: reaching defs; direct dependencies per def; def graph for the closure.
    let mut def_graph: Vec<Vec<usize>> = vec![Vec::new(); sol.defs.len()];
    let mut def_roots: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); sol.defs.len()];
    let mut id = 0usize;
    for (node, f) in facts.iter().enumerate() {
        let reaching_uses = sol.uses.get(node);
        let reach = |u: usize| -> &[usize] {
            reaching_uses
                .and_then(|r| r.get(u))
                .map(Vec::as_slice)
                .unwrap_or(&[])
        };
        for (ui, u) in f.uses.iter().enumerate() {
            let rs = reach(ui);
            let entry = df.use_defs.entry((u.var.clone(), u.line)).or_default();
            for &r in rs {
                if let Some(k) = key_of(r) {
                    entry.insert(k);
                }
                if let Some(Some(dk)) = def_keys.get(r) {
                    if let Some(lines) = df.def_use.get_mut(dk) {
                        lines.insert(u.line);
                    }
                }
            }
            if rs.is_empty() {
                df.roots.insert((u.var.clone(), u.line));
            }
        }
        for d in &f.defs {
            let entry = df.direct.entry((d.var.clone(), d.line)).or_default();
            for &s in &d.sources {
                let rs = reach(s);
                for &r in rs {
                    if let Some(k) = key_of(r) {
                        entry.insert(k);
                    }
                    if let Some(edges) = def_graph.get_mut(id) {
                        edges.push(r);
                    }
                }
                if rs.is_empty() {
                    if let (Some(roots), Some(u)) = (def_roots.get_mut(id), f.uses.get(s)) {
                        roots.insert(u.var.as_str());
                    }
                }
            }
            id += 1;
        }
    }
    // Transitive dependencies per variable (definition-level closure).
    let mut defs_of_var: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for i in 0..sol.defs.len() {
        if let Some((d, _)) = def_of(i) {
            defs_of_var.entry(d.var.as_str()).or_default().push(i);
        }
    }
    let mut budget = CLOSURE_BUDGET;
    let mut seen = vec![usize::MAX; sol.defs.len()];
    for (round, (var, starts)) in defs_of_var.iter().enumerate() {
        if cancel.is_cancelled() || budget == 0 {
            df.partial = true;
            df.errors.push(if budget == 0 {
                SourceError {
                    line: 0,
                    message: "transitive dependencies truncated (work budget exhausted)".into(),
                }
            } else {
                cancelled_error()
            });
            break;
        }
        let mut deps: BTreeSet<String> = BTreeSet::new();
        let mut queue: VecDeque<usize> = VecDeque::new();
        for &s in starts {
            if seen[s] != round {
                seen[s] = round;
                queue.push_back(s);
            }
        }
        while let Some(d) = queue.pop_front() {
            if let Some((fact, _)) = def_of(d) {
                deps.insert(fact.var.clone());
            }
            if let Some(roots) = def_roots.get(d) {
                deps.extend(roots.iter().map(|r| r.to_string()));
            }
            for &next in def_graph.get(d).map(Vec::as_slice).unwrap_or(&[]) {
                budget = budget.saturating_sub(1);
                if seen[next] != round {
                    seen[next] = round;
                    queue.push_back(next);
                }
            }
        }
        deps.remove(*var);
        df.dependencies.insert(var.to_string(), deps);
    }
    // Control dependence per occurrence.
    match control::control_dependence(cfg, cancel) {
        Some(cd) => {
            for (node, f) in facts.iter().enumerate() {
                let lines: BTreeSet<usize> = cd
                    .get(node)
                    .map(|s| {
                        s.iter()
                            .filter_map(|&b| g.node_weight(NodeIndex::new(b)).map(|w| w.line))
                            .collect()
                    })
                    .unwrap_or_default();
                let occurrences = f
                    .defs
                    .iter()
                    .map(|d| (d.var.clone(), d.line))
                    .chain(f.uses.iter().map(|u| (u.var.clone(), u.line)));
                for k in occurrences {
                    df.control
                        .entry(k)
                        .or_default()
                        .extend(lines.iter().copied());
                }
            }
        }
        None => {
            df.partial = true;
            df.errors.push(SourceError {
                line: 0,
                message: "control dependence not computed (cancelled or did not converge)".into(),
            });
        }
    }
    df
}

/// The parameter list node of a function, if it has one.
fn parameter_list<'t>(file: &ParsedFile, func: &Function<'t>) -> Option<Node<'t>> {
    let node = func.node;
    match file.language {
        Language::Solidity => Some(node),
        Language::C | Language::Cpp => {
            if node.kind() == kind::LAMBDA_EXPRESSION {
                return node
                    .child_by_field_name(field::DECLARATOR)
                    .and_then(|d| d.child_by_field_name(field::PARAMETERS));
            }
            let mut d = node.child_by_field_name(field::DECLARATOR)?;
            for _ in 0..64 {
                if d.kind() == kind::FUNCTION_DECLARATOR {
                    return d.child_by_field_name(field::PARAMETERS);
                }
                d = d.child_by_field_name(field::DECLARATOR)?;
            }
            None
        }
        _ => node
            .child_by_field_name(field::PARAMETERS)
            .or_else(|| node.child_by_field_name(field::PARAMETER)),
    }
}

/// Definitions of the parameters, at the lines where they are written.
pub fn parameter_facts(
    file: &ParsedFile,
    func: &Function<'_>,
    entry_line: usize,
    cancel: &Cancel,
) -> NodeFacts {
    let mut facts = match parameter_list(file, func) {
        Some(list) => extract::extract_parameters(file, list, cancel),
        None => NodeFacts::default(),
    };
    // Parameters the walk missed (unusual grammars) are defined at the entry line.
    let known: BTreeSet<String> = facts.defs.iter().map(|d| d.var.clone()).collect();
    for p in &func.params {
        if !p.is_empty() && !known.contains(p) {
            facts.defs.push(DefFact {
                var: p.clone(),
                line: entry_line.max(func.start_line),
                strong: true,
                sources: Vec::new(),
            });
        }
    }
    facts.uses.clear();
    for d in &mut facts.defs {
        d.sources.clear();
    }
    facts
}

/// ALL-CAPS names (`EOF`, `MAX_N`): constants, not variables, when never assigned.
fn constant_like(name: &str) -> bool {
    name.len() >= 2
        && name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Drops uses of names the function never defines that are constants, classes or imported
/// modules (see the module docs), remapping definition sources.
pub fn filter_non_variables(facts: Vec<NodeFacts>, imported: &BTreeSet<String>) -> Vec<NodeFacts> {
    let defined: BTreeSet<String> = facts
        .iter()
        .flat_map(|f| f.defs.iter().map(|d| d.var.clone()))
        .collect();
    let drop = |u: &UseFact| {
        !defined.contains(&u.var)
            && (constant_like(&u.var)
                || (u.qualifier
                    && (u.var.starts_with(|c: char| c.is_ascii_uppercase())
                        || imported.contains(&u.var))))
    };
    facts
        .into_iter()
        .map(|f| {
            let mut remap: Vec<Option<usize>> = Vec::with_capacity(f.uses.len());
            let mut uses = Vec::new();
            for u in f.uses {
                if drop(&u) {
                    remap.push(None);
                } else {
                    remap.push(Some(uses.len()));
                    uses.push(u);
                }
            }
            let defs = f
                .defs
                .into_iter()
                .map(|mut d| {
                    d.sources = d
                        .sources
                        .iter()
                        .filter_map(|&s| remap.get(s).copied().flatten())
                        .collect();
                    d
                })
                .collect();
            NodeFacts { defs, uses, ..f }
        })
        .collect()
}
