//! The per-function abstract interpreter: a forward worklist over the function's CFG whose
//! states map variables to abstract values (taint, constants, tracked collections).
//!
//! Expressions are evaluated recursively up to [`MAX_EXPR_DEPTH`] levels; deeper parts are
//! evaluated coarsely (every variable read below is a possible source of taint) and the result
//! is flagged partial. Statement walks outside the CFG (module top level, collapsed over-deep
//! statements, unparsed regions) are iterative.

use super::engine::{call_names, Env, FnId, FnOut, Matches, Tables, Workspace, VARARGS};
use super::spec::{ArgSel, CallPattern, CallShape, Seg};
use super::syntax::{
    call_parts, callee_path, declarator_name, is_call_kind, is_definition, is_string_kind,
    js_initialised_declarators, js_option, js_pattern_bindings, literal_const, named_children,
    path_of, short_text, simple_type, unwrap, CallParts,
};
use super::value::{
    param_label, Coll, Const, Step, Taint, Val, ALL_KINDS, MAX_COLL, MAX_CONST_STR,
};
use crate::analysis::cfg::{Cfg, EdgeKind, NodeKind};
use crate::syntax::lang::{field, kind};
use crate::syntax::{Cancel, Language, ParsedFile};
use petgraph::graph::NodeIndex;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use tree_sitter::Node;

/// Expressions nested deeper than this are evaluated coarsely.
pub const MAX_EXPR_DEPTH: usize = 160;
/// After this many visits of a CFG node its incoming state is widened.
const WIDEN_AFTER: u32 = 3;
/// Node visits allowed per CFG node (plus a constant) before the function is abandoned as
/// partial.
const VISITS_PER_NODE: usize = 24;
/// Statement walks outside the CFG visit at most this many syntax nodes.
const COARSE_BUDGET: usize = 200_000;

type State = BTreeMap<String, Val>;

/// Which outgoing edges of a node are feasible after it ran.
enum EdgeFilter {
    All,
    Bool(bool),
    /// Only `case` edges whose target starts inside one of these ranges; `outside`: also those
    /// whose target lies outside the switch body (no label matched and no default).
    Cases {
        allowed: Vec<(usize, usize)>,
        outside: Option<(usize, usize)>,
    },
}

/// Per-function context that does not change while interpreting.
pub(super) struct FnCx<'t> {
    pub fid: FnId,
    pub unit: usize,
    pub file: &'t ParsedFile,
    pub lang: Language,
    pub locals: BTreeSet<String>,
    pub types: BTreeMap<String, String>,
    pub fixed_arrays: BTreeSet<String>,
    pub params: Vec<String>,
    pub class: Option<String>,
    /// Module top-level code: every name is global, but tracked flow-sensitively.
    pub is_module: bool,
    pub qualified_name: Option<String>,
    /// Instance method: `this.f`/`self.f` are fields of the receiver (symbolic in summaries).
    pub has_this: bool,
    /// Java: instance fields of the class (bare names refer to `this.f`).
    pub instance_fields: BTreeSet<String>,
}

pub(super) struct Interp<'a, 't> {
    ws: &'a Workspace<'t>,
    tabs: &'a mut Tables,
    env: &'a Env<'a>,
    cx: &'a FnCx<'t>,
    out: &'a mut FnOut,
    cancel: &'a Cancel,
    state: State,
    /// Coarse mode: assignments join instead of replacing.
    weak: bool,
    /// Line of the statement being interpreted.
    line: usize,
    /// Validator calls met while evaluating the current expression: (call start byte,
    /// guarded variable, sanitiser kinds).
    guard_hits: Vec<(usize, String, u64)>,
    /// What the last branch condition proves on its true and its false edge: variables and
    /// the kinds they are sanitised for.
    edge_guards: Option<EdgeGuards>,
    /// JavaScript callbacks being interpreted inline (see `inline_callback`).
    inline_depth: usize,
    /// The element value an array iteration method hands its callback (`xs.forEach(x => ..)`):
    /// set while the callback argument is evaluated, taken by `inline_callback`.
    callback_input: Option<(usize, Val)>,
}

/// JavaScript callbacks nested deeper than this inside one function are not inlined.
const MAX_INLINE_CALLBACKS: usize = 6;

/// True when a program name is a command shell (`sh`, `/bin/bash`, `cmd.exe`, `powershell`).
fn is_shell_program(program: &str) -> bool {
    let base = program
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    matches!(
        base,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "fish" | "cmd" | "powershell" | "pwsh"
    )
}

/// The object pattern a JavaScript route handler destructures its request with
/// (`app.get(p, ({ query }, res) => ..)`): the function is written as an argument of a route
/// registration (`x.get(..)`, `x.post(..)`, `x.use(..)`, ...) and its first parameter is an object
/// pattern (TypeScript: with a type annotation).
pub(super) fn js_request_pattern<'t>(file: &ParsedFile, func: Node<'t>) -> Option<Node<'t>> {
    let registered = func
        .parent()
        .filter(|a| a.kind() == kind::ARGUMENTS)
        .and_then(|a| a.parent())
        .and_then(|call| call_parts(file, call))
        .is_some_and(|c| c.receiver.is_some() && ROUTE_METHODS.contains(&c.name.as_str()));
    if !registered {
        return None;
    }
    let first = func
        .child_by_field_name(field::PARAMETERS)
        .and_then(|ps| named_children(ps).into_iter().next())?;
    let pattern = first.child_by_field_name(field::PATTERN).unwrap_or(first);
    (pattern.kind() == kind::OBJECT_PATTERN).then_some(pattern)
}

/// Methods that register a JavaScript route handler (Express, Koa and Fastify routers).
const ROUTE_METHODS: [&str; 10] = [
    "get", "post", "put", "patch", "delete", "del", "all", "use", "head", "options",
];

/// JavaScript array methods that call their first argument with each element, and the
/// position of the element among the callback's parameters (`reduce((acc, x) => ..)`).
const JS_ITERATION_METHODS: [(&str, usize); 12] = [
    ("forEach", 0),
    ("map", 0),
    ("flatMap", 0),
    ("filter", 0),
    ("find", 0),
    ("findLast", 0),
    ("findIndex", 0),
    ("some", 0),
    ("every", 0),
    ("sort", 0),
    ("reduce", 1),
    ("reduceRight", 1),
];

/// Variables a branch condition validates, per outgoing edge.
#[derive(Default)]
struct EdgeGuards {
    on_true: Vec<(String, u64)>,
    on_false: Vec<(String, u64)>,
}

impl<'a, 't> Interp<'a, 't> {
    pub fn new(
        ws: &'a Workspace<'t>,
        tabs: &'a mut Tables,
        env: &'a Env<'a>,
        cx: &'a FnCx<'t>,
        out: &'a mut FnOut,
        cancel: &'a Cancel,
    ) -> Self {
        Interp {
            ws,
            tabs,
            env,
            cx,
            out,
            cancel,
            state: State::new(),
            weak: false,
            line: 0,
            guard_hits: Vec::new(),
            edge_guards: None,
            inline_depth: 0,
            callback_input: None,
        }
    }

    fn step(&self, line: usize) -> Step {
        Step {
            unit: self.cx.unit as u32,
            line: line as u32,
        }
    }

    fn line_of(&self, n: Node<'_>) -> usize {
        self.cx.file.line_of(n.start_byte())
    }

    fn text(&self, n: Node<'_>) -> &'t str {
        self.cx.file.node_text(n)
    }

    fn note_partial(&mut self, line: usize, message: &str) {
        self.out.partial = true;
        if self.out.errors.len() < 16 && !self.out.errors.iter().any(|(_, m)| m == message) {
            self.out.errors.push((line, message.to_string()));
        }
    }

    // ------------------------------------------------------------------ drivers

    /// Initial state: parameters carry their parameter labels (and source labels when the
    /// spec says the parameter is a source).
    pub fn enter(&mut self, param_lines: &[usize], param_sources: &[(usize, u32)]) {
        for (i, p) in self.cx.params.iter().enumerate() {
            if p.is_empty() {
                continue;
            }
            let mut t = Taint::single(param_label(i), 0);
            for &(pi, label) in param_sources {
                if pi == i {
                    t.join(&Taint::single(label, 0), &self.tabs.trails);
                }
            }
            let line = param_lines.get(i).copied().unwrap_or(0);
            if t.concrete().is_live() {
                self.out
                    .defs
                    .entry((p.clone(), line))
                    .or_default()
                    .join(&t.concrete(), &self.tabs.trails);
            }
            self.state.insert(p.clone(), Val::of_taint(t));
        }
    }

    /// A route handler that destructures its request (`app.get(p, ({ query }, res) => ..)`,
    /// `router.post(p, async ({ body: b }, res) => ..)`): each bound name is what `req.<name>`
    /// (`request.<name>`, Koa's `ctx.<name>`) would be, when a source names that path. Only
    /// for functions written as an argument of a route registration (`x.get(..)`, `x.post(..)`,
    /// `x.use(..)`, ...), so a component's `({ query })` props are not taken for a request;
    /// `pattern` is what [`js_request_pattern`] found.
    pub fn enter_request_pattern(&mut self, pattern: Node<'t>) {
        let line = self.line_of(pattern);
        for (bound, props) in js_pattern_bindings(self.cx.file, pattern) {
            let name = self.cx.file.node_text(bound).to_string();
            // `{ params: { id } }` reads `req.params.id`: the source names `req.params`.
            'found: for root in ["req", "request", "ctx"] {
                let path: Vec<Seg> = std::iter::once(root.to_string())
                    .chain(props.iter().cloned())
                    .map(|name| Seg { name, call: false })
                    .collect();
                for len in (2..=path.len()).rev() {
                    if let Some(v) = self.attr_source(bound, &path[..len]) {
                        self.out
                            .defs
                            .entry((name.clone(), line))
                            .or_default()
                            .join(&v.taint.concrete(), &self.tabs.trails);
                        self.state.insert(name.clone(), v);
                        break 'found;
                    }
                }
            }
        }
    }

    /// Runs the worklist over a CFG; returns false when the work budget ran out.
    pub fn run_cfg(&mut self, cfg: &Cfg) -> bool {
        let n = cfg.graph.node_count();
        if n == 0 {
            return true;
        }
        let order = reverse_postorder(cfg);
        let mut rank = vec![usize::MAX; n];
        for (i, &node) in order.iter().enumerate() {
            if let Some(r) = rank.get_mut(node) {
                *r = i;
            }
        }
        let succs: Vec<Vec<(usize, EdgeKind)>> = (0..n)
            .map(|i| {
                cfg.successors(NodeIndex::new(i))
                    .into_iter()
                    .map(|(t, k)| (t.index(), k))
                    .collect()
            })
            .collect();
        // Widening points: targets of retreating edges (loop heads, backward gotos).
        let mut widen_at = vec![false; n];
        for (u, list) in succs.iter().enumerate() {
            for &(v, _) in list {
                if rank.get(u).copied().unwrap_or(usize::MAX) >= rank.get(v).copied().unwrap_or(0) {
                    if let Some(w) = widen_at.get_mut(v) {
                        *w = true;
                    }
                }
            }
        }
        let mut inputs: Vec<Option<State>> = vec![None; n];
        let mut visits = vec![0u32; n];
        let entry = cfg.entry.index();
        if let Some(slot) = inputs.get_mut(entry) {
            *slot = Some(std::mem::take(&mut self.state));
        }
        let mut work: BTreeSet<(usize, usize)> = BTreeSet::new();
        work.insert((rank.get(entry).copied().unwrap_or(0), entry));
        let budget = n.saturating_mul(VISITS_PER_NODE) + 1000;
        let mut spent = 0usize;
        while let Some((_, node)) = work.pop_first() {
            spent += 1;
            if spent > budget || (spent.is_multiple_of(64) && self.cancel.is_cancelled()) {
                self.note_partial(
                    0,
                    "taint analysis of this function stopped early (work budget or cancel)",
                );
                return false;
            }
            let Some(input) = inputs.get(node).and_then(|s| s.clone()) else {
                continue;
            };
            self.state = input;
            let filter = match cfg.graph.node_weight(NodeIndex::new(node)) {
                Some(w) => self.exec_cfg_node(w.kind, w.range.clone(), w.line),
                None => EdgeFilter::All,
            };
            let out_state = std::mem::take(&mut self.state);
            let guards = self.edge_guards.take();
            for &(target, kind) in succs.get(node).map(Vec::as_slice).unwrap_or(&[]) {
                let target_start = cfg
                    .graph
                    .node_weight(NodeIndex::new(target))
                    .map(|w| w.range.start)
                    .unwrap_or(0);
                if !feasible(&filter, kind, target_start) {
                    continue;
                }
                // A validator in the condition sanitises what it checked on the edge where
                // it held.
                let guarded = guards.as_ref().and_then(|g| match kind {
                    EdgeKind::True if !g.on_true.is_empty() => Some(&g.on_true),
                    EdgeKind::False if !g.on_false.is_empty() => Some(&g.on_false),
                    _ => None,
                });
                let refined;
                let out_state = match guarded {
                    Some(vars) => {
                        let mut st = out_state.clone();
                        for (name, bits) in vars {
                            sanitize_in(&mut st, name, *bits, &self.tabs.trails);
                        }
                        refined = st;
                        &refined
                    }
                    None => &out_state,
                };
                let Some(slot) = inputs.get_mut(target) else {
                    continue;
                };
                let widen = widen_at.get(target).copied().unwrap_or(false)
                    && visits.get(target).copied().unwrap_or(0) >= WIDEN_AFTER;
                let changed = match slot {
                    None => {
                        *slot = Some(out_state.clone());
                        true
                    }
                    Some(old) => {
                        let mut joined = join_states(old, out_state, &self.tabs.trails);
                        if widen {
                            widen_changed(old, &mut joined, &self.tabs.trails);
                        }
                        let changed = !same_states(old, &joined);
                        *old = joined;
                        changed
                    }
                };
                if changed {
                    if let Some(v) = visits.get_mut(target) {
                        *v += 1;
                    }
                    work.insert((rank.get(target).copied().unwrap_or(usize::MAX), target));
                }
            }
            if node == cfg.exit.index() {
                self.state = out_state;
            }
        }
        if let Some(Some(exit)) = inputs.get(cfg.exit.index()) {
            self.state = exit.clone();
        }
        true
    }

    /// Module top level: statements in order (compound statements coarsely).
    pub fn run_module(&mut self, root: Node<'t>) {
        for stmt in named_children(root) {
            if self.cancel.is_cancelled() {
                self.note_partial(0, "taint analysis cancelled");
                return;
            }
            if is_definition(stmt.kind()) {
                continue;
            }
            self.line = self.line_of(stmt);
            if is_simple_statement(stmt.kind()) {
                self.weak = false;
                self.exec_stmt(stmt);
            } else {
                self.weak = true;
                self.coarse_exec(stmt);
                self.weak = false;
            }
        }
    }

    // ------------------------------------------------------------------ CFG nodes

    fn ast_for(&self, range: &std::ops::Range<usize>) -> Option<Node<'t>> {
        let root = self.cx.file.root();
        let mut n = root.descendant_for_byte_range(range.start, range.end.max(range.start))?;
        for _ in 0..64 {
            match n.parent() {
                Some(p)
                    if p.byte_range() == n.byte_range()
                        && matches!(p.kind(), kind::EXPRESSION_STATEMENT | kind::STATEMENT) =>
                {
                    n = p
                }
                _ => break,
            }
        }
        Some(n)
    }

    fn exec_cfg_node(
        &mut self,
        kind: NodeKind,
        range: std::ops::Range<usize>,
        line: usize,
    ) -> EdgeFilter {
        self.line = line;
        self.guard_hits.clear();
        match kind {
            NodeKind::Entry | NodeKind::Exit | NodeKind::Try | NodeKind::Jump => {
                return EdgeFilter::All
            }
            NodeKind::Except => return EdgeFilter::All,
            _ => {}
        }
        let Some(mut node) = self.ast_for(&range) else {
            return EdgeFilter::All;
        };
        let exact = node.byte_range() == range;
        // Solidity wraps every statement in a `statement` node.
        if node.kind() == kind::STATEMENT {
            if let [only] = named_children(node).as_slice() {
                node = *only;
            }
        }
        match kind {
            NodeKind::Return => {
                self.exec_stmt(node);
                EdgeFilter::All
            }
            NodeKind::Loop => {
                if !exact || is_foreach(self.cx.lang, node.kind()) {
                    if is_foreach(self.cx.lang, node.kind()) {
                        self.foreach_header(node);
                    }
                    EdgeFilter::All
                } else {
                    self.condition(node)
                }
            }
            NodeKind::Branch => {
                if !exact {
                    return EdgeFilter::All;
                }
                match node.kind() {
                    kind::ASSERT_STATEMENT => {
                        for c in named_children(node) {
                            self.eval(c, 0);
                        }
                        EdgeFilter::All
                    }
                    kind::EXPRESSION_STATEMENT => {
                        self.exec_stmt(node);
                        EdgeFilter::All
                    }
                    _ => {
                        if let Some(f) = self.switch_filter(node) {
                            return f;
                        }
                        self.condition(node)
                    }
                }
            }
            _ => {
                if !exact {
                    if node.kind() == kind::WITH_STATEMENT {
                        self.with_header(node);
                    } else if is_foreach(self.cx.lang, node.kind()) {
                        self.foreach_header(node);
                    }
                    return EdgeFilter::All;
                }
                if node.is_error() || is_compound(node.kind()) {
                    let was = self.weak;
                    self.weak = true;
                    self.coarse_exec(node);
                    self.weak = was;
                } else {
                    self.exec_stmt(node);
                }
                EdgeFilter::All
            }
        }
    }

    fn condition(&mut self, node: Node<'t>) -> EdgeFilter {
        self.guard_hits.clear();
        let v = self.eval(node, 0);
        let hits = std::mem::take(&mut self.guard_hits);
        let mut guards = EdgeGuards::default();
        for (want, into) in [(true, &mut guards.on_true), (false, &mut guards.on_false)] {
            let mut facts = Vec::new();
            condition_facts(self.cx.file, node, want, &mut facts, 0);
            for fact in facts {
                match fact {
                    CondFact::Call(start, true) => into.extend(
                        hits.iter()
                            .filter(|(s, _, _)| *s == start)
                            .map(|(_, n, b)| (n.clone(), *b)),
                    ),
                    CondFact::Call(_, false) => {}
                    CondFact::Known(name) => into.push((name, ALL_KINDS)),
                }
            }
        }
        if !guards.on_true.is_empty() || !guards.on_false.is_empty() {
            self.edge_guards = Some(guards);
        }
        match v.konst.as_ref().and_then(Const::truthy) {
            Some(b) => EdgeFilter::Bool(b),
            None => EdgeFilter::All,
        }
    }

    /// A switch on a constant: only the matching case (or default) edge is feasible.
    fn switch_filter(&mut self, disc: Node<'t>) -> Option<EdgeFilter> {
        let mut sw = disc.parent()?;
        if sw.kind() == kind::PARENTHESIZED_EXPRESSION {
            sw = sw.parent()?;
        }
        if !matches!(sw.kind(), kind::SWITCH_EXPRESSION | kind::SWITCH_STATEMENT) {
            return None;
        }
        let v = self.eval(disc, 0);
        let value = v.konst?;
        let body = sw.child_by_field_name(field::BODY)?;
        // Groups: (labels, statements); `None` label = default.
        let mut groups: Vec<(Vec<Option<Node<'t>>>, Vec<Node<'t>>)> = Vec::new();
        for g in named_children(body) {
            match g.kind() {
                kind::SWITCH_BLOCK_STATEMENT_GROUP | kind::SWITCH_RULE => {
                    let mut labels = Vec::new();
                    let mut stmts = Vec::new();
                    for c in named_children(g) {
                        if c.kind() == kind::SWITCH_LABEL {
                            let vals = named_children(c);
                            if vals.is_empty() {
                                labels.push(None);
                            } else {
                                labels.extend(vals.into_iter().map(Some));
                            }
                        } else {
                            stmts.push(c);
                        }
                    }
                    groups.push((labels, stmts));
                }
                kind::CASE_STATEMENT => {
                    let value = g.child_by_field_name(field::VALUE);
                    let stmts = named_children(g)
                        .into_iter()
                        .filter(|c| Some(*c) != value)
                        .collect();
                    groups.push((vec![value], stmts));
                }
                _ => return None,
            }
        }
        let mut matched = None;
        let mut default = None;
        for (gi, (labels, _)) in groups.iter().enumerate() {
            for l in labels {
                match l {
                    None => default = default.or(Some(gi)),
                    Some(l) => {
                        let c = literal_const(self.cx.file, *l)?;
                        if consts_equal(&c, &value) {
                            matched = matched.or(Some(gi));
                        }
                    }
                }
            }
        }
        let start = matched.or(default);
        let body_range = (body.start_byte(), body.end_byte());
        let Some(start) = start else {
            return Some(EdgeFilter::Cases {
                allowed: Vec::new(),
                outside: Some(body_range),
            });
        };
        let arrow = groups
            .get(start)
            .and_then(|g| g.1.first())
            .is_some_and(|s| s.parent().is_some_and(|p| p.kind() == kind::SWITCH_RULE));
        let first_stmt = if arrow {
            groups.get(start).and_then(|g| g.1.first()).copied()
        } else {
            groups.iter().skip(start).find_map(|g| g.1.first().copied())
        };
        Some(match first_stmt {
            Some(s) => EdgeFilter::Cases {
                allowed: vec![(s.start_byte(), s.end_byte())],
                outside: None,
            },
            None => EdgeFilter::Cases {
                allowed: Vec::new(),
                outside: Some(body_range),
            },
        })
    }

    fn with_header(&mut self, node: Node<'t>) {
        for clause in named_children(node) {
            if clause.kind() != kind::WITH_CLAUSE {
                continue;
            }
            for item in named_children(clause) {
                let Some(value) = item.child_by_field_name(field::VALUE) else {
                    continue;
                };
                if value.kind() == kind::AS_PATTERN {
                    let kids = named_children(value);
                    if let Some(expr) = kids.first() {
                        let v = self.eval(*expr, 0);
                        if let Some(target) = value.child_by_field_name(field::ALIAS) {
                            for t in named_children(target) {
                                self.assign_to(t, v.clone(), 0);
                            }
                        }
                    }
                } else {
                    self.eval(value, 0);
                }
            }
        }
    }

    fn foreach_header(&mut self, node: Node<'t>) {
        let (target, iter) = match node.kind() {
            // JavaScript `for (const x of xs)` / `for (k in o)`: `left`, `right` as in Python.
            kind::FOR_STATEMENT | kind::FOR_IN_CLAUSE | kind::FOR_IN_STATEMENT => (
                node.child_by_field_name(field::LEFT),
                node.child_by_field_name(field::RIGHT),
            ),
            kind::ENHANCED_FOR_STATEMENT => (
                node.child_by_field_name(field::NAME),
                node.child_by_field_name(field::VALUE),
            ),
            kind::FOR_RANGE_LOOP => (
                node.child_by_field_name(field::DECLARATOR),
                node.child_by_field_name(field::RIGHT),
            ),
            _ => (None, None),
        };
        let Some(iter) = iter else { return };
        let v = self.eval(iter, 0);
        let elem = Val::of_taint(v.flat(&self.tabs.trails));
        if let Some(t) = target {
            let t = if node.kind() == kind::FOR_RANGE_LOOP {
                declarator_name(t).unwrap_or(t)
            } else {
                t
            };
            self.assign_to(t, elem, 0);
        }
    }

    // ------------------------------------------------------------------ statements

    fn exec_stmt(&mut self, node: Node<'t>) {
        let kind = node.kind();
        match kind {
            kind::RETURN_STATEMENT | kind::CO_RETURN_STATEMENT => {
                let mut t = Taint::default();
                for c in named_children(node) {
                    let v = self.eval(c, 0);
                    t.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
                }
                let line = self.line_of(node);
                t.push_step(self.step(line), &mut self.tabs.trails);
                self.out.ret.join(&t, &self.tabs.trails);
            }
            kind::LOCAL_VARIABLE_DECLARATION | kind::FIELD_DECLARATION => {
                let ty = node
                    .child_by_field_name(field::TYPE)
                    .map(|t| simple_type(self.cx.file, t));
                let mut c = node.walk();
                let decls: Vec<Node<'t>> = node
                    .children_by_field_name(field::DECLARATOR, &mut c)
                    .collect();
                for d in decls {
                    let (Some(name), Some(value)) = (
                        d.child_by_field_name(field::NAME),
                        d.child_by_field_name(field::VALUE),
                    ) else {
                        continue;
                    };
                    let v = self.eval_init(value, ty.as_deref());
                    self.assign_to(name, v, 0);
                }
            }
            kind::DECLARATION => {
                let mut c = node.walk();
                let decls: Vec<Node<'t>> = node
                    .children_by_field_name(field::DECLARATOR, &mut c)
                    .collect();
                for d in decls {
                    if d.kind() != kind::INIT_DECLARATOR {
                        continue;
                    }
                    let (Some(target), Some(value)) = (
                        d.child_by_field_name(field::DECLARATOR)
                            .and_then(declarator_name),
                        d.child_by_field_name(field::VALUE),
                    ) else {
                        continue;
                    };
                    let v = if value.kind() == kind::ARGUMENT_LIST {
                        // C++ `std::string s(x)`.
                        self.eval_children_union(value, 0)
                    } else {
                        self.eval(value, 0)
                    };
                    self.assign_to(target, v, 0);
                }
            }
            kind::LEXICAL_DECLARATION | kind::VARIABLE_DECLARATION
                if matches!(self.cx.lang, Language::JavaScript | Language::TypeScript) =>
            {
                for (name, value) in js_initialised_declarators(node) {
                    let v = self.eval(value, 0);
                    self.assign_to(name, v, 0);
                }
            }
            kind::VARIABLE_DECLARATION_STATEMENT => {
                let value = node.child_by_field_name(field::VALUE);
                let v = value.map(|v| self.eval(v, 0)).unwrap_or_default();
                for c in named_children(node) {
                    match c.kind() {
                        kind::VARIABLE_DECLARATION => {
                            if let Some(name) = c.child_by_field_name(field::NAME) {
                                if value.is_some() {
                                    self.assign_to(name, v.clone(), 0);
                                }
                            }
                        }
                        kind::VARIABLE_DECLARATION_TUPLE => {
                            let flat = Val::of_taint(v.flat(&self.tabs.trails));
                            for d in named_children(c) {
                                if let Some(name) = d.child_by_field_name(field::NAME) {
                                    self.assign_to(name, flat.clone(), 0);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            kind::PASS_STATEMENT
            | kind::IMPORT_STATEMENT
            | kind::IMPORT_FROM_STATEMENT
            | kind::GLOBAL_STATEMENT
            | kind::NONLOCAL_STATEMENT
            | kind::BREAK_STATEMENT
            | kind::CONTINUE_STATEMENT
            | kind::LABELED_STATEMENT
            | kind::EMPTY_STATEMENT
            | kind::FUTURE_IMPORT_STATEMENT => {}
            kind::THROW_STATEMENT | kind::RAISE_STATEMENT => {}
            _ if is_definition(kind) => {}
            _ => {
                self.eval(node, 0);
            }
        }
    }

    /// A declaration's initializer; an array initializer `{..}` becomes a tracked list.
    fn eval_init(&mut self, value: Node<'t>, _ty: Option<&str>) -> Val {
        self.eval(value, 0)
    }

    /// A JavaScript function value (`.then(() => exec(cmd))`, `db.query(q, (e, rows) => ..)`)
    /// reads the variables of the function it is written in: its body is interpreted here,
    /// weakly (it may run later, once, or never), with its own parameters unknown. It is
    /// also analysed as a function of its own; this adds what it captures.
    fn inline_callback(&mut self, node: Node<'t>) {
        if self.inline_depth >= MAX_INLINE_CALLBACKS {
            return;
        }
        let input = self.callback_input.take();
        let Some(body) = node.child_by_field_name(field::BODY) else {
            return;
        };
        let (line, weak) = (self.line, self.weak);
        self.inline_depth += 1;
        self.weak = true;
        if let Some((position, element)) = input {
            // `xs.forEach(x => ..)`: the element parameter holds what the array holds.
            let param = match node.child_by_field_name(field::PARAMETER) {
                Some(p) if position == 0 => Some(p),
                Some(_) => None,
                None => node
                    .child_by_field_name(field::PARAMETERS)
                    .and_then(|ps| named_children(ps).into_iter().nth(position)),
            };
            if let Some(param) = param {
                let pattern = param.child_by_field_name(field::PATTERN).unwrap_or(param);
                for (bound, _) in js_pattern_bindings(self.cx.file, pattern) {
                    let name = self.cx.file.node_text(bound).to_string();
                    self.set_var(&name, element.clone(), line, true);
                }
            }
        }
        if body.kind() == kind::STATEMENT_BLOCK {
            self.coarse_exec(body);
        } else {
            self.eval(body, 0);
        }
        self.inline_depth -= 1;
        self.line = line;
        self.weak = weak;
    }

    /// Walks a compound statement (or unparsed region) without a CFG: every simple
    /// statement in document order, assignments weak.
    fn coarse_exec(&mut self, node: Node<'t>) {
        let mut stack = vec![node];
        let mut visited = 0usize;
        while let Some(n) = stack.pop() {
            visited += 1;
            if visited > COARSE_BUDGET
                || (visited.is_multiple_of(256) && self.cancel.is_cancelled())
            {
                self.note_partial(self.line_of(node), "statement walk truncated");
                return;
            }
            let kind = n.kind();
            if n != node && is_definition(kind) {
                continue;
            }
            if is_simple_statement(kind) {
                self.line = self.line_of(n);
                self.exec_stmt(n);
                continue;
            }
            if is_call_kind(kind) || is_assignment_kind(kind) {
                self.eval(n, 0);
                continue;
            }
            if kind == kind::WITH_STATEMENT {
                self.with_header(n);
                if let Some(b) = n.child_by_field_name(field::BODY) {
                    stack.push(b);
                }
                continue;
            }
            if is_foreach(self.cx.lang, kind) {
                self.foreach_header(n);
                if let Some(b) = n.child_by_field_name(field::BODY) {
                    stack.push(b);
                }
                continue;
            }
            let kids = named_children(n);
            stack.extend(kids.into_iter().rev());
        }
    }

    // ------------------------------------------------------------------ variables

    fn is_local(&self, name: &str) -> bool {
        self.cx.is_module
            || self.cx.locals.contains(name)
            || self.cx.params.iter().any(|p| p == name)
            // C/C++: only names declared at file scope are globals (an undeclared name is a
            // macro or a declaration the parser lost).
            || (matches!(self.cx.lang, Language::C | Language::Cpp)
                && !self.ws.c_globals.contains(name))
    }

    /// The store key of a non-local name read or written in this function.
    fn global_key(&self, name: &str) -> String {
        match self.cx.lang {
            Language::Python => format!("{}:{name}", self.cx.unit),
            Language::C => format!("c:{name}"),
            _ => match &self.cx.class {
                Some(c) => format!("{c}.{name}"),
                None => format!("{}:{name}", self.cx.unit),
            },
        }
    }

    fn field_key(&self, field: &str) -> String {
        match &self.cx.class {
            Some(c) => format!("{c}.{field}"),
            None => format!("{}:self.{field}", self.cx.unit),
        }
    }

    fn read_var(&mut self, name: &str) -> Val {
        if self.is_local(name) {
            let mut v = self.state.get(name).cloned().unwrap_or_default();
            if self.cx.is_module && !self.state.contains_key(name) {
                let key = self.global_key(name);
                self.out.store_reads.insert(key.clone());
                if let Some(t) = self.env.store.get(&key) {
                    v = Val::of_taint(t.clone());
                }
            }
            self.alias_taint(name, &mut v);
            return v;
        }
        if self.is_instance_field(name) {
            return self.read_this_field(name);
        }
        let key = self.global_key(name);
        self.read_key(&key)
    }

    /// C/C++: the value of an object-like macro that is not shadowed by a variable and
    /// stands for other names (`#define COMMAND_ARG3 data`): the join of what those names
    /// hold, every `#if` alternative included.
    fn macro_value(&mut self, name: &str) -> Option<Val> {
        let declared = self.cx.locals.contains(name)
            || self.cx.params.iter().any(|p| p == name)
            || self.ws.c_globals.contains(name);
        if declared || self.state.contains_key(name) {
            return None;
        }
        let aliases = self
            .ws
            .units
            .get(self.cx.unit)
            .filter(|u| !u.macros.is_empty())
            .map(|u| u.macros.object_aliases(name))?;
        if aliases.is_empty() {
            return None;
        }
        let mut t = Taint::default();
        for a in &aliases {
            let v = self.read_var(a);
            t.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
        }
        Some(Val::of_taint(t))
    }

    fn is_instance_field(&self, name: &str) -> bool {
        self.cx.has_this && self.cx.instance_fields.contains(name)
    }

    /// `this.f` / `self.f`: the value written earlier in this function, else the receiver's
    /// field as a symbolic parameter (static contexts use the workspace store).
    fn read_this_field(&mut self, f: &str) -> Val {
        if !self.cx.has_this {
            let key = self.field_key(f);
            return self.read_key(&key);
        }
        if let Some(v) = self.state.get(&format!("@this.{f}")) {
            return v.clone();
        }
        let idx = self.tabs.field_param(f);
        Val::of_taint(Taint::single(param_label(idx), 0))
    }

    fn write_this_field(&mut self, f: &str, mut v: Val, line: usize, weak: bool) {
        let weak = weak || self.weak;
        v.taint.push_step(self.step(line), &mut self.tabs.trails);
        let flat = v.flat(&self.tabs.trails);
        if flat.is_live() {
            let recv = if self.cx.lang == Language::Python {
                "self"
            } else {
                "this"
            };
            self.out
                .defs
                .entry((format!("{recv}.{f}"), line))
                .or_default()
                .join(&flat, &self.tabs.trails);
        }
        if !self.cx.has_this {
            let key = self.field_key(f);
            self.record_global_write(&key, &v);
            let new = if weak {
                self.read_key(&key).join(&v, &self.tabs.trails)
            } else {
                v
            };
            self.state.insert(format!("@{key}"), new);
            return;
        }
        if !flat.is_empty() {
            self.out
                .this_writes
                .entry(f.to_string())
                .or_default()
                .join(&flat, &self.tabs.trails);
        }
        let new = if weak {
            self.read_this_field(f).join(&v, &self.tabs.trails)
        } else {
            v
        };
        self.state.insert(format!("@this.{f}"), new);
    }

    fn read_key(&mut self, key: &str) -> Val {
        let local = format!("@{key}");
        if let Some(v) = self.state.get(&local) {
            return v.clone();
        }
        self.out.store_reads.insert(key.to_string());
        match self.env.store.get(key) {
            Some(t) => Val::of_taint(t.clone()),
            None => Val::clean(),
        }
    }

    /// C/C++: a pointer also carries the taint of what it may point to.
    fn alias_taint(&mut self, name: &str, v: &mut Val) {
        if !matches!(self.cx.lang, Language::C | Language::Cpp) {
            return;
        }
        let Some(pt) = self.ws.points_to else { return };
        let Some(func) = self.cx.qualified_name.as_deref() else {
            return;
        };
        let targets = pt.targets(crate::analysis::pointsto::VarRef::local(func, name));
        for t in targets {
            if t.function.as_deref() == Some(func) && t.name != name {
                if let Some(tv) = self.state.get(&t.name) {
                    let flat = tv.flat(&self.tabs.trails);
                    v.taint.join(&flat, &self.tabs.trails);
                }
            }
        }
    }

    /// Assigns to a variable by name (strong unless in coarse mode or `weak`).
    fn set_var(&mut self, name: &str, mut val: Val, line: usize, weak: bool) {
        if !self.is_local(name) && self.is_instance_field(name) {
            self.write_this_field(name, val, line, weak);
            return;
        }
        let weak = weak || self.weak;
        val.taint.push_step(self.step(line), &mut self.tabs.trails);
        let key = if self.is_local(name) {
            name.to_string()
        } else {
            let k = self.global_key(name);
            self.record_global_write(&k, &val);
            format!("@{k}")
        };
        if self.cx.is_module {
            let k = self.global_key(name);
            self.record_global_write(&k, &val);
        }
        let flat = val.flat(&self.tabs.trails);
        if flat.is_live() {
            let def = self.out.defs.entry((name.to_string(), line)).or_default();
            def.join(&flat, &self.tabs.trails);
        }
        let new = match (weak, self.state.get(&key)) {
            (true, Some(old)) => old.join(&val, &self.tabs.trails),
            _ => val,
        };
        self.state.insert(key, new);
    }

    fn record_global_write(&mut self, key: &str, val: &Val) {
        let flat = val.flat(&self.tabs.trails);
        if flat.is_empty() {
            return;
        }
        self.out
            .global_writes
            .entry(key.to_string())
            .or_default()
            .join(&flat, &self.tabs.trails);
    }

    /// Adds taint to an object reached by a mutation (`x.append(t)`, `*p = t`, `a[i] = t`,
    /// `o.f = t`, out-arguments): a weak update of the root variable.
    fn taint_object(&mut self, target: Node<'t>, add: &Taint, line: usize) {
        if add.is_empty() {
            return;
        }
        let Some(root) = self.root_var(target) else {
            return;
        };
        match root {
            Root::Var(name) => {
                if let Some(i) = self.cx.params.iter().position(|p| *p == name) {
                    self.out
                        .param_mut
                        .entry(i)
                        .or_default()
                        .join(add, &self.tabs.trails);
                }
                let mut v = self.read_var(&name);
                v.taint.join(add, &self.tabs.trails);
                self.set_var(&name, v, line, false);
                self.taint_aliases(&name, add, line);
            }
            Root::This(f) => {
                self.write_this_field(&f, Val::of_taint(add.clone()), line, true);
            }
        }
    }

    /// C/C++: writing through a pointer also writes what it may point to.
    fn taint_aliases(&mut self, name: &str, add: &Taint, line: usize) {
        if !matches!(self.cx.lang, Language::C | Language::Cpp) {
            return;
        }
        let Some(pt) = self.ws.points_to else { return };
        let Some(func) = self.cx.qualified_name.clone() else {
            return;
        };
        let targets: Vec<String> = pt
            .targets(crate::analysis::pointsto::VarRef::local(&func, name))
            .filter(|t| t.function.as_deref() == Some(func.as_str()) && t.name != name)
            .map(|t| t.name.clone())
            .collect();
        for t in targets {
            let mut v = self.state.get(&t).cloned().unwrap_or_default();
            v.taint.join(add, &self.tabs.trails);
            self.set_var(&t, v, line, true);
        }
    }

    fn root_var(&self, target: Node<'t>) -> Option<Root> {
        let mut n = unwrap(target);
        for _ in 0..64 {
            match n.kind() {
                kind::IDENTIFIER => return Some(Root::Var(self.text(n).to_string())),
                kind::ATTRIBUTE
                | kind::FIELD_ACCESS
                | kind::MEMBER_EXPRESSION
                | kind::FIELD_EXPRESSION => {
                    let obj = n
                        .child_by_field_name(field::OBJECT)
                        .or_else(|| n.child_by_field_name(field::ARGUMENT))?;
                    let obj = unwrap(obj);
                    if is_self(self.text(obj)) {
                        let f = n
                            .child_by_field_name(field::ATTRIBUTE)
                            .or_else(|| n.child_by_field_name(field::FIELD))
                            .or_else(|| n.child_by_field_name(field::PROPERTY))?;
                        return Some(Root::This(self.text(f).to_string()));
                    }
                    n = obj;
                }
                kind::SUBSCRIPT => n = n.child_by_field_name(field::VALUE)?,
                kind::ARRAY_ACCESS => {
                    n = n
                        .child_by_field_name(field::ARRAY)
                        .or_else(|| n.child_by_field_name(field::BASE))?
                }
                kind::SUBSCRIPT_EXPRESSION | kind::POINTER_EXPRESSION => {
                    n = n.child_by_field_name(field::ARGUMENT)?
                }
                kind::CAST_EXPRESSION => n = n.child_by_field_name(field::VALUE)?,
                // C/C++ pointer arithmetic: a write through `p + len` writes the object of `p`.
                kind::BINARY_EXPRESSION
                    if matches!(self.cx.lang, Language::C | Language::Cpp)
                        && matches!(
                            n.child_by_field_name(field::OPERATOR).map(|o| o.kind()),
                            Some("+" | "-")
                        ) =>
                {
                    let left = unwrap(n.child_by_field_name(field::LEFT)?);
                    n = if left.kind() == kind::NUMBER_LITERAL {
                        n.child_by_field_name(field::RIGHT)?
                    } else {
                        left
                    };
                }
                kind::PARENTHESIZED_EXPRESSION | kind::EXPRESSION | kind::CALL_ARGUMENT => {
                    n = named_children(n).into_iter().next()?
                }
                _ => return None,
            }
        }
        None
    }

    /// Assigns a value to an assignment target.
    fn assign_to(&mut self, target: Node<'t>, val: Val, depth: usize) {
        let target = unwrap(target);
        let line = self.line_of(target);
        match target.kind() {
            kind::IDENTIFIER => {
                let name = self.text(target).to_string();
                self.set_var(&name, val, line, false);
            }
            kind::PATTERN_LIST
            | kind::TUPLE_PATTERN
            | kind::LIST_PATTERN
            | kind::TUPLE
            | kind::LIST
            | kind::EXPRESSION_LIST => {
                let targets = named_children(target);
                let elems: Option<Vec<Val>> = match val.coll.as_deref() {
                    Some(Coll::List(items)) if items.len() == targets.len() => Some(
                        items
                            .iter()
                            .map(|i| {
                                let mut i = i.clone();
                                i.taint.join(&val.taint, &self.tabs.trails);
                                i
                            })
                            .collect(),
                    ),
                    _ => None,
                };
                let flat = Val::of_taint(val.flat(&self.tabs.trails));
                for (i, t) in targets.into_iter().enumerate() {
                    let v = elems
                        .as_ref()
                        .and_then(|e| e.get(i).cloned())
                        .unwrap_or_else(|| flat.clone());
                    if depth < 32 {
                        self.assign_to(t, v, depth + 1);
                    }
                }
            }
            kind::OBJECT_PATTERN | kind::ARRAY_PATTERN | kind::ASSIGNMENT_PATTERN => {
                // JavaScript destructuring: each bound name reads its property of the value.
                for (name, props) in js_pattern_bindings(self.cx.file, target) {
                    let mut v = val.clone();
                    for p in &props {
                        let key = Const::Str(Rc::from(p.as_str()));
                        v = match v.coll.as_deref().and_then(|c| coll_get(c, &key)) {
                            Some(mut x) => {
                                x.taint.join(&v.taint, &self.tabs.trails);
                                x
                            }
                            None => Val::of_taint(v.flat(&self.tabs.trails)),
                        };
                    }
                    if props.is_empty() && target.kind() != kind::ASSIGNMENT_PATTERN {
                        v = Val::of_taint(v.flat(&self.tabs.trails));
                    }
                    let n = self.text(name).to_string();
                    self.set_var(&n, v, line, false);
                }
            }
            kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => {
                let name = self.text(target).to_string();
                self.set_var(&name, val, line, false);
            }
            kind::LIST_SPLAT_PATTERN | kind::AS_PATTERN_TARGET => {
                if let Some(inner) = named_children(target).into_iter().next() {
                    if depth < 32 {
                        self.assign_to(
                            inner,
                            Val::of_taint(val.flat(&self.tabs.trails)),
                            depth + 1,
                        );
                    }
                }
            }
            kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::MEMBER_EXPRESSION
            | kind::FIELD_EXPRESSION => {
                let obj = target
                    .child_by_field_name(field::OBJECT)
                    .or_else(|| target.child_by_field_name(field::ARGUMENT));
                let field = target
                    .child_by_field_name(field::ATTRIBUTE)
                    .or_else(|| target.child_by_field_name(field::FIELD))
                    .or_else(|| target.child_by_field_name(field::PROPERTY));
                if let (Some(obj), Some(field)) = (obj, field) {
                    let objn = unwrap(obj);
                    let fname = self.text(field).to_string();
                    if is_self(self.text(objn)) {
                        self.write_this_field(&fname, val, line, false);
                        return;
                    }
                    if objn.kind() == kind::IDENTIFIER && self.is_local(self.text(objn)) {
                        // A field of a tracked local object: a strong, field-sensitive update.
                        let name = self.text(objn).to_string();
                        let cur = self.read_var(&name);
                        if let Some(Coll::Map(_)) = cur.coll.as_deref() {
                            let key = Const::Str(Rc::from(fname.as_str()));
                            if let Some(updated) = cur
                                .coll
                                .as_deref()
                                .and_then(|c| coll_set(c, key, val.clone()))
                            {
                                let nv = Val {
                                    coll: Some(Rc::new(updated)),
                                    ..cur
                                };
                                self.set_var(&name, nv, line, false);
                                return;
                            }
                        }
                    }
                }
                let flat = val.flat(&self.tabs.trails);
                self.taint_object(target, &flat, line);
            }
            kind::SUBSCRIPT | kind::ARRAY_ACCESS | kind::SUBSCRIPT_EXPRESSION => {
                let (base, index) = match target.kind() {
                    kind::SUBSCRIPT => (
                        target.child_by_field_name(field::VALUE),
                        target.child_by_field_name(field::SUBSCRIPT),
                    ),
                    kind::ARRAY_ACCESS => (
                        target
                            .child_by_field_name(field::ARRAY)
                            .or_else(|| target.child_by_field_name(field::BASE)),
                        target.child_by_field_name(field::INDEX),
                    ),
                    _ => (
                        target
                            .child_by_field_name(field::ARGUMENT)
                            .or_else(|| target.child_by_field_name(field::OBJECT)),
                        target
                            .child_by_field_name(field::INDEX)
                            .or_else(|| target.child_by_field_name(field::INDICES)),
                    ),
                };
                if let (Some(base), Some(index)) = (base.map(unwrap), index) {
                    if base.kind() == kind::IDENTIFIER {
                        let name = self.text(base).to_string();
                        let key = self.eval(index, depth + 1).konst;
                        let cur = self.read_var(&name);
                        if let (Some(coll), Some(key)) = (cur.coll.as_deref(), key) {
                            if let Some(updated) = coll_set(coll, key, val.clone()) {
                                let nv = Val {
                                    coll: Some(Rc::new(updated)),
                                    ..cur.clone()
                                };
                                self.set_var(&name, nv, line, false);
                                return;
                            }
                        }
                    }
                }
                let flat = val.flat(&self.tabs.trails);
                self.taint_object(target, &flat, line);
            }
            kind::POINTER_EXPRESSION => {
                let flat = val.flat(&self.tabs.trails);
                self.taint_object(target, &flat, line);
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------------ expressions

    fn eval_children_union(&mut self, node: Node<'t>, depth: usize) -> Val {
        let mut t = Taint::default();
        for c in named_children(node) {
            let v = self.eval(c, depth + 1);
            t.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
        }
        Val::of_taint(t)
    }

    pub fn eval(&mut self, node: Node<'t>, depth: usize) -> Val {
        if depth >= MAX_EXPR_DEPTH {
            let line = self.line_of(node);
            self.note_partial(
                line,
                "expression nested too deeply; its taint was over-approximated",
            );
            return self.coarse_val(node);
        }
        let node = unwrap(node);
        let kind = node.kind();
        match kind {
            kind::IDENTIFIER => {
                let name = self.text(node);
                if self.cx.lang == Language::Cpp || self.cx.lang == Language::C {
                    let path = [Seg {
                        name: name.to_string(),
                        call: false,
                    }];
                    if let Some(v) = self.attr_source(node, &path) {
                        return v;
                    }
                    if let Some(v) = self.macro_value(name) {
                        return v;
                    }
                }
                self.read_var(name)
            }
            kind::THIS | kind::SUPER | kind::TYPE_IDENTIFIER | kind::PRIMITIVE_TYPE => Val::clean(),
            kind::TRUE
            | kind::FALSE
            | kind::BOOLEAN_LITERAL
            | kind::NONE
            | kind::NULL_LITERAL
            | kind::NULL
            | "nullptr"
            | kind::INTEGER
            | kind::DECIMAL_INTEGER_LITERAL
            | kind::HEX_INTEGER_LITERAL
            | kind::NUMBER_LITERAL
            | kind::NUMBER
            | kind::UNDEFINED
            | kind::CHARACTER_LITERAL
            | kind::CHAR_LITERAL => match literal_const(self.cx.file, node) {
                Some(c) => Val::of_const(c),
                None => Val::clean(),
            },
            kind::FLOAT
            | kind::DECIMAL_FLOATING_POINT_LITERAL
            | kind::OCTAL_INTEGER_LITERAL
            | kind::BINARY_INTEGER_LITERAL
            | kind::CLASS_LITERAL
            | kind::SIZEOF_EXPRESSION
            | kind::METHOD_REFERENCE
            | kind::LAMBDA
            | kind::LAMBDA_EXPRESSION
            | kind::CLASS
            | kind::REGEX
            | kind::INSTANCEOF_EXPRESSION
            | kind::ALIGNOF_EXPRESSION => Val::clean(),
            _ if is_string_kind(kind) => self.eval_string(node, depth),
            kind::BINARY_OPERATOR | kind::BINARY_EXPRESSION | kind::BOOLEAN_OPERATOR => {
                self.eval_binary(node, depth)
            }
            kind::COMPARISON_OPERATOR => self.eval_comparison(node, depth),
            kind::NOT_OPERATOR | kind::UNARY_EXPRESSION | kind::UNARY_OPERATOR => {
                self.eval_unary(node, depth)
            }
            kind::CONDITIONAL_EXPRESSION | kind::TERNARY_EXPRESSION => {
                self.eval_ternary(node, depth)
            }
            kind::ASSIGNMENT
            | kind::ASSIGNMENT_EXPRESSION
            | kind::AUGMENTED_ASSIGNMENT
            | kind::AUGMENTED_ASSIGNMENT_EXPRESSION
            | kind::NAMED_EXPRESSION => self.eval_assign(node, depth),
            kind::CALL
            | kind::METHOD_INVOCATION
            | kind::CALL_EXPRESSION
            | kind::OBJECT_CREATION_EXPRESSION
            | kind::NEW_EXPRESSION => self.eval_call(node, depth),
            kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::MEMBER_EXPRESSION
            | kind::FIELD_EXPRESSION
            | kind::QUALIFIED_IDENTIFIER
            | kind::SCOPED_IDENTIFIER => self.eval_member(node, depth),
            kind::SUBSCRIPT | kind::ARRAY_ACCESS | kind::SUBSCRIPT_EXPRESSION => {
                self.eval_index(node, depth)
            }
            kind::LIST
            | kind::TUPLE
            | kind::SET
            | kind::ARRAY_INITIALIZER
            | kind::INITIALIZER_LIST
            | kind::EXPRESSION_LIST
            | kind::INLINE_ARRAY_EXPRESSION
            | kind::TUPLE_EXPRESSION => self.eval_list(node, depth),
            kind::ARROW_FUNCTION
            | kind::FUNCTION_EXPRESSION
            | "function"
            | kind::GENERATOR_FUNCTION => {
                if matches!(self.cx.lang, Language::JavaScript | Language::TypeScript) {
                    self.inline_callback(node);
                }
                Val::clean()
            }
            kind::DICTIONARY | kind::OBJECT => self.eval_dict(node, depth),
            kind::SHORTHAND_PROPERTY_IDENTIFIER => {
                // `{ cmd }` reads the variable `cmd`.
                let name = self.text(node);
                self.read_var(name)
            }
            kind::AS_EXPRESSION | kind::NON_NULL_EXPRESSION | kind::SATISFIES_EXPRESSION => {
                // TypeScript type assertions: the value of the expression.
                match named_children(node).into_iter().find(|c| {
                    !matches!(
                        c.kind(),
                        kind::TYPE_IDENTIFIER
                            | kind::PREDEFINED_TYPE
                            | kind::GENERIC_TYPE
                            | kind::TYPE_ARGUMENTS
                    )
                }) {
                    Some(e) => self.eval(e, depth + 1),
                    None => Val::clean(),
                }
            }
            kind::ARRAY_CREATION_EXPRESSION => match node.child_by_field_name(field::VALUE) {
                Some(v) => self.eval(v, depth + 1),
                None => {
                    // `new T[n]`: n null elements, tracked when n is a small constant.
                    let size = node
                        .child_by_field_name(field::DIMENSIONS)
                        .and_then(|d| named_children(d).into_iter().next())
                        .and_then(|n| literal_const(self.cx.file, n))
                        .and_then(|c| c.as_int())
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|&n| n <= MAX_COLL);
                    match size {
                        Some(n) => Val {
                            coll: Some(Rc::new(Coll::List(vec![Val::clean(); n]))),
                            ..Val::default()
                        },
                        None => Val::clean(),
                    }
                }
            },
            kind::CAST_EXPRESSION => match node.child_by_field_name(field::VALUE) {
                Some(v) => self.eval(v, depth + 1),
                None => Val::clean(),
            },
            kind::UPDATE_EXPRESSION => self.eval_update(node, depth),
            kind::POINTER_EXPRESSION
            | kind::AWAIT
            | kind::LIST_SPLAT
            | kind::DICTIONARY_SPLAT
            | kind::PARENTHESIZED_EXPRESSION
            | kind::KEYWORD_ARGUMENT
            | kind::PAYABLE_CONVERSION_EXPRESSION
            | kind::STRUCT_EXPRESSION
            | kind::TYPE_CONVERSION
            | kind::YIELD => {
                if kind == kind::YIELD {
                    let v = self.eval_children_union(node, depth);
                    self.out.ret.join(&v.taint, &self.tabs.trails);
                    return Val::clean();
                }
                self.eval_children_union(node, depth)
            }
            _ => self.eval_children_union(node, depth),
        }
    }

    /// Coarse value of an over-deep expression: the taint of every variable and source
    /// attribute in it (iterative walk; calls are not interpreted).
    fn coarse_val(&mut self, node: Node<'t>) -> Val {
        let mut t = Taint::default();
        let mut stack = vec![node];
        let mut seen = BTreeSet::new();
        let mut visited = 0usize;
        while let Some(n) = stack.pop() {
            visited += 1;
            if visited > COARSE_BUDGET {
                break;
            }
            match n.kind() {
                kind::IDENTIFIER => {
                    let name = self.text(n);
                    if seen.insert(name) {
                        let v = self.read_var(name);
                        t.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
                    }
                }
                kind::ATTRIBUTE
                | kind::FIELD_ACCESS
                | kind::MEMBER_EXPRESSION
                | kind::FIELD_EXPRESSION => {
                    let path = path_of(self.cx.file, n);
                    if let Some(v) = self.attr_source(n, &path) {
                        t.join(&v.taint, &self.tabs.trails);
                    }
                    stack.extend(named_children(n));
                }
                kind if is_call_kind(kind) => {
                    // Source calls still count; nothing else about the call is interpreted.
                    if let Some(label) = self.source_call_label(n) {
                        t.join(&Taint::single(label, 0), &self.tabs.trails);
                    }
                    let mut c = n.walk();
                    for k in n.named_children(&mut c) {
                        stack.push(k);
                    }
                }
                _ => {
                    let mut c = n.walk();
                    for k in n.named_children(&mut c) {
                        stack.push(k);
                    }
                }
            }
        }
        Val::of_taint(t)
    }

    fn eval_string(&mut self, node: Node<'t>, depth: usize) -> Val {
        if let Some(c) = literal_const(self.cx.file, node) {
            return Val::of_const(c);
        }
        // f-strings and interpolations: the taint of the interpolated expressions (in order,
        // so that a literal prefix fixing a URL's target keeps what follows from redirecting).
        let mut t = Taint::default();
        let mut stack = named_children(node);
        stack.reverse();
        let mut prefix = String::new();
        let url_kinds = self.tabs.kind_bit("redirect") | self.tabs.kind_bit("ssrf");
        let mut guard = 0;
        while let Some(n) = stack.pop() {
            guard += 1;
            if guard > 10_000 {
                break;
            }
            if matches!(
                n.kind(),
                kind::INTERPOLATION | kind::STRING_INTERPOLATION | kind::TEMPLATE_SUBSTITUTION
            ) {
                for e in named_children(n) {
                    if matches!(e.kind(), kind::FORMAT_SPECIFIER | kind::TYPE_CONVERSION) {
                        continue;
                    }
                    let mut v = self.eval(e, depth + 1).flat(&self.tabs.trails);
                    if fixes_url_target(&prefix) {
                        v.sanitize(url_kinds);
                    }
                    t.join(&v, &self.tabs.trails);
                }
                prefix.push('\u{0}');
            } else if n.kind() == kind::STRING_CONTENT || n.kind() == kind::STRING_FRAGMENT {
                if prefix.len() < 512 {
                    prefix.push_str(self.text(n));
                }
            } else if is_string_kind(n.kind()) {
                let mut inner = named_children(n);
                inner.reverse();
                stack.extend(inner);
            }
        }
        Val::of_taint(t)
    }

    fn eval_binary(&mut self, node: Node<'t>, depth: usize) -> Val {
        let (Some(l), Some(r)) = (
            node.child_by_field_name(field::LEFT),
            node.child_by_field_name(field::RIGHT),
        ) else {
            return self.eval_children_union(node, depth);
        };
        let op = node
            .child_by_field_name(field::OPERATOR)
            .map(|o| self.text(o).to_string())
            .unwrap_or_default();
        let a = self.eval(l, depth + 1);
        // Short-circuit on constants.
        if matches!(op.as_str(), "&&" | "and" | "||" | "or") {
            if let Some(b) = a.konst.as_ref().and_then(Const::truthy) {
                let shortcut = (b && matches!(op.as_str(), "||" | "or"))
                    || (!b && matches!(op.as_str(), "&&" | "and"));
                if shortcut {
                    return Val::of_const(Const::Bool(b));
                }
                let rv = self.eval(r, depth + 1);
                return match rv.konst.as_ref().and_then(Const::truthy) {
                    Some(x) => Val::of_const(Const::Bool(x)),
                    None => Val::clean(),
                };
            }
            let rv = self.eval(r, depth + 1);
            if matches!(self.cx.lang, Language::JavaScript | Language::TypeScript) {
                // JavaScript `a || b` and `a && b` are one of their operands, not a boolean
                // (`req.query.dir || "."`).
                let mut t = a.flat(&self.tabs.trails);
                t.join(&rv.flat(&self.tabs.trails), &self.tabs.trails);
                return Val::of_taint(t);
            }
            return Val::clean();
        }
        // `"%s?%s" % (base, query)`: each value after the literal text that precedes its
        // conversion (a prefix fixing the URL's target keeps the later values from redirecting).
        if let (Some(Const::Str(fmt)), "%", kind::TUPLE) = (&a.konst, op.as_str(), r.kind()) {
            let prefixes = format_prefixes(fmt);
            let url_kinds = self.tabs.kind_bit("redirect") | self.tabs.kind_bit("ssrf");
            let mut t = a.flat(&self.tabs.trails);
            for (i, e) in named_children(r).into_iter().enumerate() {
                let mut v = self.eval(e, depth + 1).flat(&self.tabs.trails);
                if prefixes.get(i).is_some_and(|p| fixes_url_target(p)) {
                    v.sanitize(url_kinds);
                }
                t.join(&v, &self.tabs.trails);
            }
            return Val::of_taint(t);
        }
        let b = self.eval(r, depth + 1);
        if op == ">>" && self.is_input_stream(l) {
            // `std::cin >> x`: the stream's data flows into x.
            let t = a.flat(&self.tabs.trails);
            let line = self.line_of(r);
            self.taint_object(out_arg_target(r), &t, line);
            return Val::of_taint(t);
        }
        let konst = match (&a.konst, &b.konst) {
            (Some(x), Some(y)) => fold_binary(&op, x, y),
            _ => None,
        };
        if is_comparison(&op) {
            return match konst {
                Some(c) => Val::of_const(c),
                None => Val::clean(),
            };
        }
        let mut t = a.flat(&self.tabs.trails);
        let mut tail = b.flat(&self.tabs.trails);
        // `"https://host/path?q=" + x`: a constant prefix that fixes where a URL points keeps
        // what follows from redirecting or fetching elsewhere.
        let fixed = match (&a.konst, op.as_str()) {
            (Some(Const::Str(p)), "+") => fixes_url_target(p),
            // `"/search?q=%s" % q`: the literal text before the first conversion.
            (Some(Const::Str(p)), "%") => fixes_url_target(p.split('%').next().unwrap_or("")),
            _ => false,
        };
        if fixed {
            tail.sanitize(self.tabs.kind_bit("redirect") | self.tabs.kind_bit("ssrf"));
        }
        t.join(&tail, &self.tabs.trails);
        Val {
            taint: t,
            konst,
            coll: None,
        }
    }

    /// The leftmost operand of a `>>` chain is an input stream (`cin`, a `*stream` variable).
    fn is_input_stream(&self, mut n: Node<'t>) -> bool {
        if !matches!(self.cx.lang, Language::C | Language::Cpp) {
            return false;
        }
        for _ in 0..64 {
            n = unwrap(n);
            if n.kind() == kind::BINARY_EXPRESSION {
                match n.child_by_field_name(field::LEFT) {
                    Some(l) => n = l,
                    None => return false,
                }
                continue;
            }
            let t = self.text(n);
            return t.ends_with("cin")
                || self
                    .cx
                    .types
                    .get(t)
                    .is_some_and(|ty| ty.contains("stream") || ty.contains("istream"));
        }
        false
    }

    /// `i++`, `--i`: the variable changes by one (constants follow), taint stays.
    fn eval_update(&mut self, node: Node<'t>, depth: usize) -> Val {
        let Some(arg) = node
            .child_by_field_name(field::ARGUMENT)
            .or_else(|| named_children(node).into_iter().next())
        else {
            return Val::clean();
        };
        let arg = unwrap(arg);
        let old = self.eval(arg, depth + 1);
        if arg.kind() == kind::IDENTIFIER {
            let text = self.text(node);
            let delta = if text.contains("++") { 1 } else { -1 };
            let konst = old
                .konst
                .as_ref()
                .and_then(Const::as_int)
                .and_then(|i| i.checked_add(delta))
                .map(Const::Int);
            let name = self.text(arg).to_string();
            let line = self.line_of(arg);
            let new = Val {
                taint: old.taint.clone(),
                konst,
                coll: None,
            };
            self.set_var(&name, new, line, false);
        }
        Val::of_taint(old.flat(&self.tabs.trails))
    }

    fn eval_comparison(&mut self, node: Node<'t>, depth: usize) -> Val {
        // Python chained comparison: operands are the named children, operators anonymous.
        let operands = named_children(node);
        let mut c = node.walk();
        let ops: Vec<String> = node
            .children_by_field_name(field::OPERATORS, &mut c)
            .map(|o| {
                self.text(o)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let vals: Vec<Val> = operands.iter().map(|o| self.eval(*o, depth + 1)).collect();
        let mut result = Some(true);
        for (i, op) in ops.iter().enumerate() {
            let (Some(a), Some(b)) = (vals.get(i), vals.get(i + 1)) else {
                result = None;
                break;
            };
            let r = match (&a.konst, &b.konst) {
                (Some(x), Some(y)) => fold_binary(op, x, y).and_then(|c| c.truthy()),
                _ => None,
            };
            match r {
                Some(true) => {}
                Some(false) => {
                    result = Some(false);
                    break;
                }
                None => result = None,
            }
        }
        match result {
            Some(b) => Val::of_const(Const::Bool(b)),
            None => Val::clean(),
        }
    }

    fn eval_unary(&mut self, node: Node<'t>, depth: usize) -> Val {
        let arg = node
            .child_by_field_name(field::ARGUMENT)
            .or_else(|| node.child_by_field_name(field::OPERAND));
        let Some(arg) = arg else {
            return self.eval_children_union(node, depth);
        };
        let op = if node.kind() == kind::NOT_OPERATOR {
            "!".to_string()
        } else {
            node.child_by_field_name(field::OPERATOR)
                .map(|o| self.text(o).to_string())
                .unwrap_or_default()
        };
        let v = self.eval(arg, depth + 1);
        let konst = match (op.as_str(), &v.konst) {
            ("!" | "not", Some(c)) => c.truthy().map(|b| Const::Bool(!b)),
            ("-", Some(Const::Int(i))) => i.checked_neg().map(Const::Int),
            ("+", Some(Const::Int(i))) => Some(Const::Int(*i)),
            ("~", Some(Const::Int(i))) => Some(Const::Int(!i)),
            _ => None,
        };
        if op == "!" || op == "not" {
            return match konst {
                Some(c) => Val::of_const(c),
                None => Val::clean(),
            };
        }
        Val {
            taint: v.flat(&self.tabs.trails),
            konst,
            coll: None,
        }
    }

    fn eval_ternary(&mut self, node: Node<'t>, depth: usize) -> Val {
        let (cond, yes, no) =
            if node.kind() == kind::CONDITIONAL_EXPRESSION && self.cx.lang == Language::Python {
                let kids = named_children(node);
                (
                    kids.get(1).copied(),
                    kids.first().copied(),
                    kids.get(2).copied(),
                )
            } else {
                (
                    node.child_by_field_name(field::CONDITION),
                    node.child_by_field_name(field::CONSEQUENCE),
                    node.child_by_field_name(field::ALTERNATIVE),
                )
            };
        let (Some(cond), Some(yes), Some(no)) = (cond, yes, no) else {
            return self.eval_children_union(node, depth);
        };
        let c = self.eval(cond, depth + 1);
        match c.konst.as_ref().and_then(Const::truthy) {
            Some(true) => self.eval(yes, depth + 1),
            Some(false) => self.eval(no, depth + 1),
            None => {
                let a = self.eval(yes, depth + 1);
                let b = self.eval(no, depth + 1);
                a.join(&b, &self.tabs.trails)
            }
        }
    }

    fn eval_assign(&mut self, node: Node<'t>, depth: usize) -> Val {
        let (target, value) = if node.kind() == kind::NAMED_EXPRESSION {
            (
                node.child_by_field_name(field::NAME),
                node.child_by_field_name(field::VALUE),
            )
        } else {
            (
                node.child_by_field_name(field::LEFT),
                node.child_by_field_name(field::RIGHT),
            )
        };
        let (Some(target), Some(value)) = (target, value) else {
            return Val::clean();
        };
        let op = node
            .child_by_field_name(field::OPERATOR)
            .map(|o| self.text(o).to_string())
            .unwrap_or_else(|| "=".to_string());
        let mut v = self.eval(value, depth + 1);
        // A tracked collection copied to a second name: both names lose element tracking
        // (they alias one object).
        let value_u = unwrap(value);
        let destructures = matches!(
            unwrap(target).kind(),
            kind::PATTERN_LIST
                | kind::TUPLE_PATTERN
                | kind::LIST_PATTERN
                | kind::TUPLE
                | kind::LIST
        );
        if v.coll.is_some() && value_u.kind() == kind::IDENTIFIER && !destructures {
            let src = self.text(value_u).to_string();
            v = v.widen(&self.tabs.trails);
            let line = self.line_of(value_u);
            self.set_var(&src, v.clone(), line, false);
        }
        if op != "=" && op != ":=" {
            let old = self.eval(target, depth + 1);
            let bin = op.trim_end_matches('=');
            let konst = match (&old.konst, &v.konst) {
                (Some(x), Some(y)) => fold_binary(bin, x, y),
                _ => None,
            };
            let mut t = old.flat(&self.tabs.trails);
            t.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
            v = Val {
                taint: t,
                konst,
                coll: None,
            };
        }
        self.assign_to(target, v.clone(), depth + 1);
        v
    }

    fn eval_list(&mut self, node: Node<'t>, depth: usize) -> Val {
        let kids = named_children(node);
        let mut items = Vec::with_capacity(kids.len().min(MAX_COLL));
        let mut extra = Taint::default();
        for (i, k) in kids.iter().enumerate() {
            let v = self.eval(*k, depth + 1);
            if i < MAX_COLL && !matches!(k.kind(), kind::LIST_SPLAT | kind::DICTIONARY_SPLAT) {
                items.push(v);
            } else {
                extra.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
            }
        }
        if kids.len() > MAX_COLL || !extra.is_empty() {
            for v in &items {
                extra.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
            }
            return Val::of_taint(extra);
        }
        Val {
            taint: Taint::default(),
            konst: None,
            coll: Some(Rc::new(Coll::List(items))),
        }
    }

    fn eval_dict(&mut self, node: Node<'t>, depth: usize) -> Val {
        let mut map = BTreeMap::new();
        let mut extra = Taint::default();
        for pair in named_children(node) {
            if pair.kind() == kind::SHORTHAND_PROPERTY_IDENTIFIER && map.len() < MAX_COLL {
                let key = Const::Str(Rc::from(self.text(pair)));
                let v = self.eval(pair, depth + 1);
                map.insert(key, v);
                continue;
            }
            if pair.kind() != kind::PAIR {
                let v = self.eval(pair, depth + 1);
                extra.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
                continue;
            }
            let key = pair.child_by_field_name(field::KEY).map(|k| {
                if k.kind() == kind::PROPERTY_IDENTIFIER {
                    // JavaScript `{ name: v }`: the key is the name, not a variable.
                    Val::of_const(Const::Str(Rc::from(self.text(k))))
                } else {
                    self.eval(k, depth + 1)
                }
            });
            let val = pair
                .child_by_field_name(field::VALUE)
                .map(|v| self.eval(v, depth + 1))
                .unwrap_or_default();
            match key.and_then(|k| k.konst) {
                Some(k) if map.len() < MAX_COLL => {
                    map.insert(k, val);
                }
                _ => extra.join(&val.flat(&self.tabs.trails), &self.tabs.trails),
            }
        }
        Val {
            taint: extra,
            konst: None,
            coll: Some(Rc::new(Coll::Map(map))),
        }
    }

    fn eval_index(&mut self, node: Node<'t>, depth: usize) -> Val {
        let (base, index) = match node.kind() {
            kind::SUBSCRIPT => (
                node.child_by_field_name(field::VALUE),
                node.child_by_field_name(field::SUBSCRIPT),
            ),
            kind::ARRAY_ACCESS => (
                node.child_by_field_name(field::ARRAY)
                    .or_else(|| node.child_by_field_name(field::BASE)),
                node.child_by_field_name(field::INDEX),
            ),
            _ => (
                node.child_by_field_name(field::ARGUMENT)
                    .or_else(|| node.child_by_field_name(field::OBJECT)),
                node.child_by_field_name(field::INDEX)
                    .or_else(|| node.child_by_field_name(field::INDICES)),
            ),
        };
        let Some(base) = base else {
            return self.eval_children_union(node, depth);
        };
        let b = self.eval(base, depth + 1);
        let key = index.map(|i| self.eval(i, depth + 1)).and_then(|v| v.konst);
        if let (Some(coll), Some(key)) = (b.coll.as_deref(), &key) {
            if let Some(mut v) = coll_get(coll, key) {
                v.taint.join(&b.taint, &self.tabs.trails);
                return v;
            }
        }
        if let (Some(Const::Str(s)), Some(Const::Int(i))) = (&b.konst, &key) {
            let chars: Vec<char> = s.chars().collect();
            let idx = if *i < 0 { chars.len() as i64 + i } else { *i };
            if let Some(c) = usize::try_from(idx).ok().and_then(|i| chars.get(i)) {
                return Val::of_const(if self.cx.lang == Language::Python {
                    Const::Str(Rc::from(c.to_string().as_str()))
                } else {
                    Const::Char(*c)
                });
            }
        }
        Val::of_taint(b.flat(&self.tabs.trails))
    }

    fn eval_member(&mut self, node: Node<'t>, depth: usize) -> Val {
        let path = path_of(self.cx.file, node);
        if let Some(v) = self.attr_source(node, &path) {
            return v;
        }
        if matches!(
            node.kind(),
            kind::QUALIFIED_IDENTIFIER | kind::SCOPED_IDENTIFIER
        ) {
            return Val::clean();
        }
        let obj = node
            .child_by_field_name(field::OBJECT)
            .or_else(|| node.child_by_field_name(field::ARGUMENT));
        let field = node
            .child_by_field_name(field::ATTRIBUTE)
            .or_else(|| node.child_by_field_name(field::FIELD))
            .or_else(|| node.child_by_field_name(field::PROPERTY));
        let Some(obj) = obj else {
            return Val::clean();
        };
        let objn = unwrap(obj);
        if is_self(self.text(objn)) {
            if let Some(f) = field {
                let f = self.text(f).to_string();
                return self.read_this_field(&f);
            }
        }
        if let (Some(f), kind::IDENTIFIER) = (field, objn.kind()) {
            let name = self.text(objn);
            if self.is_local(name) {
                let v = self.read_var(name);
                if let Some(c @ Coll::Map(_)) = v.coll.as_deref() {
                    let key = Const::Str(Rc::from(self.text(f)));
                    if let Some(mut x) = coll_get(c, &key) {
                        x.taint.join(&v.taint, &self.tabs.trails);
                        return x;
                    }
                }
            }
        }
        if objn.kind() == kind::IDENTIFIER && !self.is_local(self.text(objn)) {
            // `Module.attr` / `Class.FIELD` / `System.out`: a module-level or static name.
            let name = self.text(objn).to_string();
            let key = self.global_key(&name);
            self.out.store_reads.insert(key.clone());
            if self.state.contains_key(&format!("@{key}")) || self.env.store.contains_key(&key) {
                return Val::of_taint(self.read_key(&key).flat(&self.tabs.trails));
            }
            return Val::clean();
        }
        let v = self.eval(obj, depth + 1);
        if let (Some(f), Some(Const::Str(s))) = (field, &v.konst) {
            if self.text(f) == "length" {
                return Val::of_const(Const::Int(s.chars().count() as i64));
            }
        }
        Val::of_taint(v.flat(&self.tabs.trails))
    }

    /// Canonical path: Python import aliases applied to the first segment.
    fn canonical(&self, path: &[Seg]) -> Option<Vec<Seg>> {
        let first = path.first()?;
        if self.cx.lang == Language::Cpp {
            // `std::system` is `system`.
            return (first.name == "std" && path.len() > 1).then(|| path[1..].to_vec());
        }
        if first.call || self.is_local(&first.name) && !self.cx.is_module {
            return None;
        }
        let imports = self.ws.imports(self.cx.unit)?;
        let expansion = imports.get(&first.name)?;
        let mut out = expansion.clone();
        out.extend(path.iter().skip(1).cloned());
        Some(out)
    }

    /// A member read that a source rule names (`sys.argv`, `msg.sender`, `request.args`).
    fn attr_source(&mut self, node: Node<'t>, path: &[Seg]) -> Option<Val> {
        let spec = self.ws.spec(self.cx.unit)?;
        let canon = self.canonical(path);
        let p = canon.as_deref().unwrap_or(path);
        // A local variable shadowing the root is not the module/global it names.
        if let Some(first) = path.first() {
            // JavaScript's request objects are handler parameters by convention (`req`,
            // `request`, Koa's `ctx`): its sources name them, not module-level objects.
            let js = matches!(self.cx.lang, Language::JavaScript | Language::TypeScript);
            if path.len() > 1
                && self.is_local(&first.name)
                && !self.cx.is_module
                && canon.is_none()
                && !js
                && !matches!(first.name.as_str(), "request" | "req")
            {
                return None;
            }
        }
        let rule = spec.attr_source(p).or_else(|| {
            if canon.is_some() {
                spec.attr_source(path)
            } else {
                None
            }
        })?;
        if self.source_excluded(rule) {
            return None;
        }
        let line = self.line_of(node);
        let text = short_text(self.cx.file, node, 60);
        let (kind, trust) = self.ws.rule_kind(self.cx.unit, rule);
        let label = self.tabs.source(self.cx.unit, line, text, kind, trust);
        Some(Val::of_taint(Taint::single(label, 0)))
    }

    /// The label of a call that a source rule (without out-arguments) names.
    fn source_call_label(&mut self, node: Node<'t>) -> Option<u32> {
        let parts = call_parts(self.cx.file, node)?;
        let path = callee_path(self.cx.file, node, &parts);
        let canon = self.canonical(&path);
        let spec = self.ws.spec(self.cx.unit)?;
        let mut m = spec.match_call(
            &parts.name,
            &CallShape {
                path: &path,
                receiver_type: None,
                is_new: parts.is_new,
            },
        );
        if let Some(c) = &canon {
            // Bound under another name: the imported path's last name is the one the spec knows.
            let name = c.last().map_or(parts.name.as_str(), |s| s.name.as_str());
            m.merge(spec.match_call(
                name,
                &CallShape {
                    path: c,
                    receiver_type: None,
                    is_new: parts.is_new,
                },
            ));
        }
        let rule = m.sources.into_iter().find(|&r| {
            spec.spec
                .sources
                .get(r)
                .is_some_and(|s| s.out_args.is_empty())
                && !self.source_excluded(r)
        })?;
        let src = spec.spec.sources.get(rule)?;
        let (kind, trust) = (src.kind.clone(), src.trust);
        let line = self.line_of(node);
        let text = source_text(self.cx.file, node, &parts);
        Some(self.tabs.source(self.cx.unit, line, text, kind, trust))
    }

    /// A source rule that does not apply in this function (`except_in`).
    fn source_excluded(&self, rule: usize) -> bool {
        let Some(simple) = self.ws.fn_info(self.cx.fid).map(|f| f.simple.as_str()) else {
            return false;
        };
        self.ws
            .spec(self.cx.unit)
            .and_then(|s| s.spec.sources.get(rule))
            .is_some_and(|r| r.except_in.iter().any(|e| e == simple))
    }

    // ------------------------------------------------------------------ calls

    fn receiver_type(&self, recv: Node<'t>) -> Option<String> {
        let r = unwrap(recv);
        match r.kind() {
            kind::IDENTIFIER => self.cx.types.get(self.text(r)).cloned(),
            kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION => r
                .child_by_field_name(field::TYPE)
                .or_else(|| r.child_by_field_name(field::CONSTRUCTOR))
                .map(|t| simple_type(self.cx.file, t)),
            kind::CAST_EXPRESSION => r
                .child_by_field_name(field::TYPE)
                .map(|t| simple_type(self.cx.file, t)),
            kind::FIELD_ACCESS => {
                let obj = r.child_by_field_name(field::OBJECT)?;
                if is_self(self.text(obj)) {
                    let f = r.child_by_field_name(field::FIELD)?;
                    self.cx.types.get(self.text(f)).cloned()
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn eval_call(&mut self, node: Node<'t>, depth: usize) -> Val {
        let Some(parts) = call_parts(self.cx.file, node) else {
            return self.eval_children_union(node, depth);
        };
        let recv = parts.receiver.map(|r| self.eval(r, depth + 1));
        let iteration = match (&recv, self.cx.lang) {
            (Some(r), Language::JavaScript | Language::TypeScript) => JS_ITERATION_METHODS
                .iter()
                .find(|(m, _)| *m == parts.name)
                .map(|(_, position)| (*position, Val::of_taint(r.flat(&self.tabs.trails))))
                .filter(|(_, v)| !v.taint.is_empty()),
            _ => None,
        };
        let args: Vec<Val> = parts
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i == 0 {
                    self.callback_input = iteration.clone();
                }
                let v = self.eval(*a, depth + 1);
                self.callback_input = None;
                v
            })
            .collect();
        let kwargs: Vec<(String, Val)> = parts
            .kwargs
            .iter()
            .map(|(k, v)| (k.clone(), self.eval(*v, depth + 1)))
            .collect();
        let options: Vec<Val> = parts
            .options
            .iter()
            .map(|o| self.eval(*o, depth + 1))
            .collect();
        self.finish_call(node, parts, recv, args, kwargs, options)
    }

    /// The part of a call after its operands are evaluated: kept out of [`Self::eval_call`]
    /// so that the recursive frames stay small.
    #[inline(never)]
    fn finish_call(
        &mut self,
        node: Node<'t>,
        parts: CallParts<'t>,
        recv: Option<Val>,
        args: Vec<Val>,
        kwargs: Vec<(String, Val)>,
        options: Vec<Val>,
    ) -> Val {
        let line = self.line_of(node);
        let raw_path = callee_path(self.cx.file, node, &parts);
        let canon = self.canonical(&raw_path);
        let rtype = parts.receiver.and_then(|r| self.receiver_type(r));
        // Known collection and constant-string methods.
        if let Some(v) = self.collection_call(&parts, recv.as_ref(), &args, line) {
            return v;
        }
        if let Some(c) = recv
            .as_ref()
            .and_then(|r| r.konst.as_ref())
            .and_then(|k| fold_method(k, &parts.name, &args))
        {
            return Val::of_const(c);
        }
        if parts.is_new {
            if let Some(v) = new_collection(&parts.name, &args, &self.tabs.trails) {
                return v;
            }
        }
        if parts.receiver.is_none() && !parts.is_new {
            if let Some(v) = self.builtin_collection(&parts.name, &args) {
                return v;
            }
        }
        let mut matches = self
            .call_matches(&parts, &raw_path, canon.as_ref(), rtype.as_deref())
            .unwrap_or_default();
        // Value of the call: summaries of resolved callees, else receiver and arguments (but
        // not the keys of a lookup: what is stored under a tainted key is not tainted by it).
        let callees = self.ws.callees(self.cx.fid, node.end_byte());
        if !callees.is_empty() && !matches.sinks.is_empty() {
            // A call resolved to the workspace's own code is that code, analysed through its
            // body: a sink row that names only a method on any receiver (`*.execute`) is about
            // a library method, not `super.execute(..)` of the project's own class.
            if let Some(spec) = self.ws.spec(self.cx.unit) {
                let shapes: Vec<CallShape<'_>> = std::iter::once(raw_path.as_slice())
                    .chain(canon.as_deref())
                    .map(|path| CallShape {
                        path,
                        receiver_type: rtype.as_deref(),
                        is_new: parts.is_new,
                    })
                    .collect();
                matches.sinks.retain(|&r| {
                    spec.spec.sinks.get(r).is_some_and(|sink| {
                        sink.calls.iter().any(|p| {
                            !matches!(p, CallPattern::AnyReceiver(_))
                                && shapes.iter().any(|sh| p.matches(sh))
                        })
                    })
                });
            }
        }
        let mut result = if callees.is_empty()
            && parts.is_new
            && self.cx.lang == Language::Java
            && self.ws.classes.contains(&parts.name)
        {
            // A workspace class without a constructor: a fresh object with no data.
            Val {
                coll: Some(Rc::new(Coll::Map(BTreeMap::new()))),
                ..Val::default()
            }
        } else if callees.is_empty() {
            let keys: Vec<ArgSel> = self
                .ws
                .spec(self.cx.unit)
                .map(|spec| {
                    matches
                        .lookups
                        .iter()
                        .filter_map(|&r| spec.spec.lookups.get(r))
                        .flat_map(|l| l.keys.iter().copied())
                        .collect()
                })
                .unwrap_or_default();
            let is_key = |i: usize| keys.iter().any(|k| k.selects_arg(i));
            let all_keys = keys.contains(&ArgSel::All);
            let mut t = Taint::default();
            if let Some(r) = &recv {
                if !keys.contains(&ArgSel::Receiver) {
                    t.join(&r.flat(&self.tabs.trails), &self.tabs.trails);
                }
            }
            for (i, a) in args.iter().enumerate() {
                if !is_key(i) {
                    t.join(&a.flat(&self.tabs.trails), &self.tabs.trails);
                }
            }
            if !all_keys && !keys.contains(&ArgSel::Keywords) {
                for (_, a) in &kwargs {
                    t.join(&a.flat(&self.tabs.trails), &self.tabs.trails);
                }
            }
            Val::of_taint(t)
        } else {
            self.apply_summaries(&callees, &parts, recv.as_ref(), &args, &kwargs, line)
        };
        // Arguments that are tracked collections may be changed by the callee.
        for a in &parts.args {
            let a = unwrap(*a);
            if a.kind() == kind::IDENTIFIER {
                let name = self.text(a).to_string();
                if let Some(v) = self.state.get(&name) {
                    if v.coll.is_some() {
                        let w = v.widen(&self.tabs.trails);
                        self.state.insert(name, w);
                    }
                }
            }
        }
        // `va_start(ap, last)`: the list holds the extra arguments (the `...` parameter).
        if matches!(self.cx.lang, Language::C | Language::Cpp)
            && parts.receiver.is_none()
            && parts.name == "va_start"
        {
            if let (Some(ap), Some(rest)) = (parts.args.first(), self.state.get(VARARGS)) {
                let t = rest.flat(&self.tabs.trails);
                self.taint_object(out_arg_target(*ap), &t, line);
            }
        }
        let Some(spec) = self.ws.spec(self.cx.unit) else {
            return result;
        };
        if matches.is_empty() {
            return result;
        }
        let arg_taint = |this: &Self, sel: ArgSel| -> Taint {
            let mut t = Taint::default();
            match sel {
                ArgSel::Receiver => {
                    if let Some(r) = &recv {
                        t.join(&r.flat(&this.tabs.trails), &this.tabs.trails);
                    }
                }
                ArgSel::Return => {}
                _ => {
                    for (i, a) in args.iter().enumerate() {
                        if sel.selects_arg(i) {
                            t.join(&a.flat(&this.tabs.trails), &this.tabs.trails);
                        }
                    }
                    if sel == ArgSel::Keywords {
                        for (_, a) in &kwargs {
                            t.join(&a.flat(&this.tabs.trails), &this.tabs.trails);
                        }
                    }
                    if sel == ArgSel::All {
                        for (_, a) in &kwargs {
                            t.join(&a.flat(&this.tabs.trails), &this.tabs.trails);
                        }
                        for o in &options {
                            t.join(&o.flat(&this.tabs.trails), &this.tabs.trails);
                        }
                    }
                }
            }
            t
        };
        // Propagators (before sanitizers and sources).
        for &rule in &matches.propagators {
            let Some(p) = spec.spec.propagators.get(rule) else {
                continue;
            };
            let mut t = Taint::default();
            for &f in &p.from {
                t.join(&arg_taint(self, f), &self.tabs.trails);
            }
            if t.is_empty() {
                continue;
            }
            for &to in &p.to {
                match to {
                    ArgSel::Return => result.taint.join(&t, &self.tabs.trails),
                    ArgSel::Receiver => {
                        if let Some(r) = parts.receiver {
                            self.taint_object(r, &t, line);
                        }
                    }
                    sel => {
                        let targets: Vec<Node<'t>> = parts
                            .args
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| sel.selects_arg(*i))
                            .map(|(_, a)| *a)
                            .collect();
                        for a in targets {
                            self.taint_object(out_arg_target(a), &t, line);
                        }
                    }
                }
            }
        }
        for &rule in &matches.sanitizers {
            let bits = self.ws.sanitizer_bits(self.cx.unit, rule);
            result.taint.sanitize(bits);
            result.konst = None;
            let Some(san) = spec.spec.sanitizers.get(rule) else {
                continue;
            };
            // A validator: the variables it checks, for the branch condition it may be part
            // of; one that raises on bad input, called as a statement, sanitises them now.
            let mut checked: Vec<Node<'t>> = Vec::new();
            for &sel in &san.guards {
                match sel {
                    ArgSel::Receiver => checked.extend(parts.receiver),
                    ArgSel::Return => {}
                    ArgSel::Keywords => checked.extend(parts.kwargs.iter().map(|(_, v)| *v)),
                    _ => checked.extend(
                        parts
                            .args
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| sel.selects_arg(*i))
                            .map(|(_, a)| *a),
                    ),
                }
            }
            let discarded = node
                .parent()
                .is_some_and(|p| p.kind() == kind::EXPRESSION_STATEMENT);
            for a in checked {
                let a = unwrap(a);
                if a.kind() != kind::IDENTIFIER {
                    continue;
                }
                let name = self.text(a).to_string();
                if san.raises && discarded {
                    if self.is_local(&name) {
                        sanitize_in(&mut self.state, &name, bits, &self.tabs.trails);
                    }
                } else if self.is_local(&name) && self.guard_hits.len() < 64 {
                    self.guard_hits.push((node.start_byte(), name, bits));
                }
            }
        }
        for &rule in &matches.sources {
            let Some(src) = spec.spec.sources.get(rule) else {
                continue;
            };
            if self.source_excluded(rule) {
                continue;
            }
            let text = source_text(self.cx.file, node, &parts);
            let label = self
                .tabs
                .source(self.cx.unit, line, text, src.kind.clone(), src.trust);
            let t = Taint::single(label, 0);
            if src.out_args.is_empty() {
                result.taint.join(&t, &self.tabs.trails);
            } else {
                for &sel in &src.out_args {
                    if sel == ArgSel::Return {
                        result.taint.join(&t, &self.tabs.trails);
                        continue;
                    }
                    if sel == ArgSel::Receiver {
                        if let Some(r) = parts.receiver {
                            self.taint_object(r, &t, line);
                        }
                        continue;
                    }
                    let targets: Vec<Node<'t>> = parts
                        .args
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| sel.selects_arg(*i))
                        .map(|(_, a)| *a)
                        .collect();
                    for a in targets {
                        self.taint_object(out_arg_target(a), &t, line);
                    }
                }
            }
        }
        for &rule in &matches.sinks {
            let Some(sink) = spec.spec.sinks.get(rule) else {
                continue;
            };
            if !self.sink_conditions(sink, &parts) {
                continue;
            }
            let mut t = Taint::default();
            if sink.args.is_empty() {
                t.join(&arg_taint(self, ArgSel::All), &self.tabs.trails);
            }
            for &sel in &sink.args {
                t.join(&arg_taint(self, sel), &self.tabs.trails);
            }
            if t.is_empty() {
                continue;
            }
            let text = short_text(self.cx.file, node, 80);
            let site = self
                .tabs
                .sink(self.cx.unit, line, text, sink.kind.clone(), sink.id.clone());
            self.out
                .sinks
                .entry(site)
                .or_default()
                .join(&t, &self.tabs.trails);
        }
        result
    }

    /// The spec rules a call matches: its written path, its canonical (imported) path and,
    /// for C/C++, the names its macros alias.
    fn call_matches(
        &self,
        parts: &CallParts<'t>,
        raw_path: &[Seg],
        canon: Option<&Vec<Seg>>,
        rtype: Option<&str>,
    ) -> Option<Matches> {
        let spec = self.ws.spec(self.cx.unit)?;
        // Python imports: the written path and the imported one both count (`render` after
        // `from django.shortcuts import render` matches `render` and `django.shortcuts.render`).
        let mut matches = spec.match_call(
            &parts.name,
            &CallShape {
                path: raw_path,
                receiver_type: rtype,
                is_new: parts.is_new,
            },
        );
        if let Some(c) = canon {
            // A binding names the function by its own name (`const { exec: run } = ..`,
            // `const run = util.promisify(exec)`): the imported path's last name is the one
            // the spec knows.
            let name = c.last().map_or(parts.name.as_str(), |s| s.name.as_str());
            let more = spec.match_call(
                name,
                &CallShape {
                    path: c,
                    receiver_type: rtype,
                    is_new: parts.is_new,
                },
            );
            matches.merge(more);
        }
        if let Some(unit) = self.ws.units.get(self.cx.unit) {
            for alias in call_names(unit, parts).into_iter().skip(1) {
                let path = [Seg {
                    name: alias.clone(),
                    call: false,
                }];
                let more = spec.match_call(
                    &alias,
                    &CallShape {
                        path: &path,
                        receiver_type: None,
                        is_new: false,
                    },
                );
                matches.merge(more);
            }
        }
        Some(matches)
    }

    fn sink_conditions(&self, sink: &super::spec::SinkRule, parts: &CallParts<'t>) -> bool {
        for (k, want) in &sink.when_keyword {
            let v = parts
                .kwargs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| *v)
                .or_else(|| {
                    matches!(self.cx.lang, Language::JavaScript | Language::TypeScript)
                        .then(|| js_option(self.cx.file, &parts.args, k))
                        .flatten()
                });
            let Some(v) = v else {
                return false;
            };
            if self.text(v).trim() != want {
                return false;
            }
        }
        for k in &sink.unless_keyword {
            let given = parts.kwargs.iter().any(|(n, _)| n == k)
                || (matches!(self.cx.lang, Language::JavaScript | Language::TypeScript)
                    && js_option(self.cx.file, &parts.args, k).is_some());
            if given {
                return false;
            }
        }
        for r in &sink.requires {
            if r == "arg0_shell" {
                // `spawn("sh", ["-c", line])`, `execFile("cmd.exe", ["/c", line])`: the
                // program is a shell, so its arguments are a command line.
                let program = parts
                    .args
                    .first()
                    .and_then(|a| literal_const(self.cx.file, unwrap(*a)));
                let Some(Const::Str(program)) = program else {
                    return false;
                };
                if !is_shell_program(&program) {
                    return false;
                }
            }
            if r == "arg0_fixed_array" {
                let Some(a) = parts.args.first().map(|a| unwrap(*a)) else {
                    return false;
                };
                if a.kind() != kind::IDENTIFIER || !self.cx.fixed_arrays.contains(self.text(a)) {
                    return false;
                }
            }
        }
        true
    }

    fn apply_summaries(
        &mut self,
        callees: &[FnId],
        parts: &CallParts<'t>,
        recv: Option<&Val>,
        args: &[Val],
        kwargs: &[(String, Val)],
        line: usize,
    ) -> Val {
        let mut result = Taint::default();
        let mut object: Option<BTreeMap<Const, Val>> = None;
        let call_step = self.step(line);
        for &g in callees {
            let Some(info) = self.ws.fn_info(g) else {
                continue;
            };
            let is_ctor = info.kind == Some(crate::syntax::functions::FunctionKind::Constructor);
            let creates = is_ctor && (parts.is_new || parts.receiver.is_none());
            let offset = usize::from(info.self_param && (parts.receiver.is_some() || creates));
            // Actual value of each parameter.
            let mut actuals: BTreeMap<usize, Taint> = BTreeMap::new();
            let mut actual_nodes: BTreeMap<usize, Node<'t>> = BTreeMap::new();
            for (i, pname) in info.params.iter().enumerate() {
                let (v, n) = if i < offset {
                    (recv.map(|r| r.flat(&self.tabs.trails)), parts.receiver)
                } else if let Some(kw) = kwargs.iter().find(|(k, _)| k == pname) {
                    (Some(kw.1.flat(&self.tabs.trails)), None)
                } else if info.variadic && i + 1 == info.params.len() {
                    let mut t = Taint::default();
                    for a in args.iter().skip(i - offset) {
                        t.join(&a.flat(&self.tabs.trails), &self.tabs.trails);
                    }
                    (Some(t), None)
                } else {
                    (
                        args.get(i - offset).map(|a| a.flat(&self.tabs.trails)),
                        parts.args.get(i - offset).copied(),
                    )
                };
                if let Some(t) = v {
                    actuals.insert(i, t);
                }
                if let Some(n) = n {
                    actual_nodes.insert(i, n);
                }
            }
            self.out.used.insert(g);
            let Some(summary) = self.env.summary(g) else {
                // Not analysed (yet): ask for it when data reaches it, and meanwhile use the
                // default propagation.
                let this_tainted = (parts.receiver.is_none()
                    || parts
                        .receiver
                        .is_some_and(|r| is_self(self.text(unwrap(r)))))
                    && self
                        .state
                        .iter()
                        .any(|(k, v)| k.starts_with("@this.") && !v.taint.is_empty());
                let recv_taint = recv.map(|r| r.flat(&self.tabs.trails)).unwrap_or_default();
                if actuals.values().any(|t| !t.is_empty()) || this_tainted || !recv_taint.is_empty()
                {
                    self.out.requested.insert(g);
                    self.out.used_pending = true;
                }
                for t in actuals.values() {
                    result.join(t, &self.tabs.trails);
                }
                result.join(&recv_taint, &self.tabs.trails);
                self.record_call_actuals(g, &mut actuals, call_step);
                continue;
            };
            let fields_used: Vec<usize> = summary.fields_used.iter().copied().collect();
            let ret0 = summary.ret.clone();
            let muts: Vec<(usize, Taint)> = summary
                .param_mut
                .iter()
                .map(|(i, t)| (*i, t.clone()))
                .collect();
            let this_writes: Vec<(String, Taint)> = summary
                .this_writes
                .iter()
                .map(|(f, t)| (f.clone(), t.clone()))
                .collect();
            // Fields of the receiver the callee reads.
            for idx in fields_used {
                let Some(fname) = self.tabs.field_name(idx).map(str::to_string) else {
                    continue;
                };
                let t = if creates {
                    Taint::default()
                } else {
                    self.receiver_field(parts.receiver, recv, &fname)
                };
                actuals.insert(idx, t);
            }
            self.record_call_actuals(g, &mut actuals, call_step);
            let mut ret = ret0;
            ret.push_step(call_step, &mut self.tabs.trails);
            let ret = self.substitute(&ret, &actuals);
            result.join(&ret, &self.tabs.trails);
            for (i, t) in muts {
                let t = self.substitute(&t, &actuals);
                if let Some(n) = actual_nodes.get(&i).copied() {
                    self.taint_object(out_arg_target(n), &t, line);
                }
            }
            for (f, t) in this_writes {
                let t = self.substitute(&t, &actuals);
                if creates {
                    let obj = object.get_or_insert_with(BTreeMap::new);
                    let key = Const::Str(Rc::from(f.as_str()));
                    let old = obj.remove(&key).unwrap_or_default();
                    obj.insert(key, old.join(&Val::of_taint(t), &self.tabs.trails));
                } else {
                    self.write_receiver_field(parts.receiver, &f, t, line);
                }
            }
            if creates && object.is_none() {
                object = Some(BTreeMap::new());
            }
        }
        match object {
            Some(fields) if fields.len() <= MAX_COLL => Val {
                taint: result,
                konst: None,
                coll: Some(Rc::new(Coll::Map(fields))),
            },
            Some(fields) => {
                let mut t = result;
                for v in fields.values() {
                    t.join(&v.flat(&self.tabs.trails), &self.tabs.trails);
                }
                Val::of_taint(t)
            }
            None => Val::of_taint(result),
        }
    }

    /// Records the taint of each actual (with the call line) for the parameter fixpoint.
    fn record_call_actuals(&mut self, g: FnId, actuals: &mut BTreeMap<usize, Taint>, step: Step) {
        for (i, t) in actuals.iter_mut() {
            if t.is_empty() {
                continue;
            }
            t.push_step(step, &mut self.tabs.trails);
            self.out
                .calls
                .entry((g, *i))
                .or_default()
                .join(t, &self.tabs.trails);
        }
    }

    /// The value of field `f` of a call's receiver, as seen by the caller.
    fn receiver_field(&mut self, receiver: Option<Node<'t>>, recv: Option<&Val>, f: &str) -> Taint {
        let r = receiver.map(unwrap);
        match r {
            None => self.read_this_field(f).flat(&self.tabs.trails),
            Some(r) if is_self(self.text(r)) => self.read_this_field(f).flat(&self.tabs.trails),
            Some(r) => {
                let v = if r.kind() == kind::IDENTIFIER {
                    self.read_var(self.text(r))
                } else {
                    recv.cloned().unwrap_or_default()
                };
                if let Some(c @ Coll::Map(_)) = v.coll.as_deref() {
                    if let Some(x) = coll_get(c, &Const::Str(Rc::from(f))) {
                        let mut t = x.flat(&self.tabs.trails);
                        t.join(&v.taint, &self.tabs.trails);
                        return t;
                    }
                }
                v.flat(&self.tabs.trails)
            }
        }
    }

    /// Applies a callee's write of field `f` of its receiver.
    fn write_receiver_field(&mut self, receiver: Option<Node<'t>>, f: &str, t: Taint, line: usize) {
        let r = receiver.map(unwrap);
        match r {
            None => self.write_this_field(f, Val::of_taint(t), line, true),
            Some(r) if is_self(self.text(r)) => {
                self.write_this_field(f, Val::of_taint(t), line, true)
            }
            Some(r) => {
                if r.kind() == kind::IDENTIFIER && self.is_local(self.text(r)) {
                    let name = self.text(r).to_string();
                    let cur = self.read_var(&name);
                    if let Some(c @ Coll::Map(_)) = cur.coll.as_deref() {
                        if let Some(updated) =
                            coll_set(c, Const::Str(Rc::from(f)), Val::of_taint(t.clone()))
                        {
                            let nv = Val {
                                coll: Some(Rc::new(updated)),
                                ..cur
                            };
                            self.set_var(&name, nv, line, false);
                            return;
                        }
                    }
                }
                self.taint_object(r, &t, line);
            }
        }
    }

    /// Replaces parameter labels by the actual arguments' taint.
    fn substitute(&mut self, t: &Taint, actuals: &BTreeMap<usize, Taint>) -> Taint {
        let mut out = Taint::default();
        for e in &t.0 {
            match super::value::as_param(e.label) {
                None => out.join(&Taint(vec![*e]), &self.tabs.trails),
                Some(i) => {
                    if let Some(a) = actuals.get(&i) {
                        let mut entries = Vec::with_capacity(a.0.len());
                        for x in &a.0 {
                            let trail = self.tabs.trails.concat(x.trail, e.trail);
                            entries.push(super::value::Entry {
                                label: x.label,
                                mask: x.mask | e.mask,
                                trail,
                            });
                        }
                        out.join(&Taint(entries), &self.tabs.trails);
                    }
                }
            }
        }
        out
    }

    /// `list()`, `dict()`, `set()` in Python: empty tracked collections.
    fn builtin_collection(&mut self, name: &str, args: &[Val]) -> Option<Val> {
        if self.cx.lang != Language::Python || !args.is_empty() || self.is_local(name) {
            return None;
        }
        let coll = match name {
            "list" => Coll::List(Vec::new()),
            "dict" => Coll::Map(BTreeMap::new()),
            _ => return None,
        };
        Some(Val {
            coll: Some(Rc::new(coll)),
            ..Val::default()
        })
    }

    /// Methods of a tracked local collection (key/index sensitive).
    fn collection_call(
        &mut self,
        parts: &CallParts<'t>,
        recv: Option<&Val>,
        args: &[Val],
        line: usize,
    ) -> Option<Val> {
        let recv_node = unwrap(parts.receiver?);
        let recv = recv?;
        let coll = recv.coll.as_deref()?;
        if recv_node.kind() != kind::IDENTIFIER {
            return None;
        }
        let name = self.text(recv_node).to_string();
        let java = self.cx.lang == Language::Java;
        let key = |i: usize| args.get(i).and_then(|a| a.konst.clone());
        let set = |this: &mut Self, c: Option<Coll>, extra: Option<&Val>| {
            let nv = match c {
                Some(c) if coll_len(&c) <= MAX_COLL => Val {
                    coll: Some(Rc::new(c)),
                    ..recv.clone()
                },
                _ => {
                    let mut w = recv.widen(&this.tabs.trails);
                    if let Some(e) = extra {
                        w.taint.join(&e.flat(&this.tabs.trails), &this.tabs.trails);
                    }
                    w
                }
            };
            this.set_var(&name, nv, line, false);
        };
        let flat_all = || Val::of_taint(recv.flat(&self.tabs.trails));
        let m = parts.name.as_str();
        match (coll, m, args.len()) {
            (
                Coll::List(items),
                "add" | "append" | "push" | "push_back" | "addLast" | "offer",
                1,
            ) => {
                let mut v = items.clone();
                v.push(args[0].clone());
                set(self, Some(Coll::List(v)), Some(&args[0]));
                Some(Val::clean())
            }
            (Coll::List(items), "add" | "insert", 2) => {
                let idx = key(0).and_then(|k| k.as_int());
                let c = idx.and_then(|i| {
                    let i = usize::try_from(i).ok()?;
                    (i <= items.len()).then(|| {
                        let mut v = items.clone();
                        v.insert(i, args[1].clone());
                        Coll::List(v)
                    })
                });
                set(self, c, Some(&args[1]));
                Some(Val::clean())
            }
            (Coll::List(items), "set", 2) => {
                let c =
                    key(0).and_then(|k| coll_set(&Coll::List(items.clone()), k, args[1].clone()));
                set(self, c, Some(&args[1]));
                Some(Val::clean())
            }
            (Coll::List(items), "get", 1) => {
                let v = key(0).and_then(|k| coll_get(coll, &k));
                let _ = items;
                Some(
                    v.map(|mut v| {
                        v.taint.join(&recv.taint, &self.tabs.trails);
                        v
                    })
                    .unwrap_or_else(flat_all),
                )
            }
            (Coll::List(items), "remove" | "pop", 1) => {
                let idx = match key(0) {
                    Some(Const::Int(i)) => Some(i),
                    _ => None,
                };
                match idx.and_then(|i| {
                    let i = if i < 0 { items.len() as i64 + i } else { i };
                    usize::try_from(i).ok().filter(|&i| i < items.len())
                }) {
                    Some(i) => {
                        let mut v = items.clone();
                        let removed = v.remove(i);
                        set(self, Some(Coll::List(v)), None);
                        Some(removed)
                    }
                    None => {
                        if java && !matches!(key(0), Some(Const::Int(_))) {
                            // remove(Object): which element goes is unknown.
                            let w = recv.widen(&self.tabs.trails);
                            self.set_var(&name, w, line, false);
                            return Some(Val::clean());
                        }
                        Some(flat_all())
                    }
                }
            }
            (Coll::List(items), "pop" | "removeLast" | "pollLast", 0) => {
                let mut v = items.clone();
                let last = v.pop();
                set(self, Some(Coll::List(v)), None);
                Some(last.unwrap_or_default())
            }
            (Coll::List(items), "removeFirst" | "poll" | "pollFirst" | "popleft", 0) => {
                let mut v = items.clone();
                let first = (!v.is_empty()).then(|| v.remove(0));
                set(self, Some(Coll::List(v)), None);
                Some(first.unwrap_or_default())
            }
            (Coll::List(_) | Coll::Map(_), "clear", 0) => {
                let empty = match coll {
                    Coll::List(_) => Coll::List(Vec::new()),
                    Coll::Map(_) => Coll::Map(BTreeMap::new()),
                };
                let nv = Val {
                    coll: Some(Rc::new(empty)),
                    ..Val::default()
                };
                self.set_var(&name, nv, line, false);
                Some(Val::clean())
            }
            (Coll::Map(map), "put" | "__setitem__", 2) => {
                let c = key(0).map(|k| {
                    let mut m = map.clone();
                    m.insert(k, args[1].clone());
                    Coll::Map(m)
                });
                let prev = key(0)
                    .and_then(|k| map.get(&k).cloned())
                    .unwrap_or_default();
                set(self, c, Some(&args[1]));
                Some(prev)
            }
            (Coll::Map(map), "get" | "getOrDefault" | "pop" | "remove" | "setdefault", 1 | 2) => {
                let k = key(0);
                let found = k.as_ref().and_then(|k| map.get(k).cloned());
                let result = match (&k, found) {
                    (Some(_), Some(mut v)) => {
                        v.taint.join(&recv.taint, &self.tabs.trails);
                        v
                    }
                    (Some(_), None) => {
                        let mut d = args.get(1).cloned().unwrap_or_default();
                        d.taint.join(&recv.taint, &self.tabs.trails);
                        d
                    }
                    (None, _) => {
                        let mut v = flat_all();
                        if let Some(d) = args.get(1) {
                            v.taint.join(&d.flat(&self.tabs.trails), &self.tabs.trails);
                        }
                        v
                    }
                };
                if matches!(m, "pop" | "remove") {
                    if let Some(k) = k {
                        let mut mm = map.clone();
                        mm.remove(&k);
                        set(self, Some(Coll::Map(mm)), None);
                    }
                }
                Some(result)
            }
            (_, "size" | "length" | "isEmpty" | "containsKey" | "contains" | "__len__", _) => {
                Some(Val::clean())
            }
            _ => None,
        }
    }
}

enum Root {
    Var(String),
    /// A field of the receiver (`this.f`, `self.f`).
    This(String),
}

/// A URL prefix that decides where the URL points: a scheme and host followed by a path or
/// query (`https://api.example.com/`, `http://x?`), or anything with a query already begun
/// (`/search?q=`).
fn fixes_url_target(prefix: &str) -> bool {
    let p = prefix.trim_start();
    if let Some(i) = p.find("://") {
        let rest = &p[i + 3..];
        return rest
            .find(['/', '?', '#'])
            .is_some_and(|j| j > 0 && !rest[..j].contains(['@', '\\']));
    }
    // A path on this site alone (`"/user/" + name`) is not enough: the rest of the path is
    // still the user's (SecuriBench counts it as an unsafe redirect); once the query has
    // begun, what follows is a parameter.
    p.contains('?')
}

/// For each `%` conversion of a printf-style format, the text before it (earlier
/// conversions as a NUL marker; `%%` is a literal percent sign).
fn format_prefixes(fmt: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut prefix = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            prefix.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            prefix.push('%');
            continue;
        }
        out.push(prefix.clone());
        prefix.push('\u{0}');
        // Skip the conversion: a `(name)`, flags, width, precision, up to its letter.
        if chars.peek() == Some(&'(') {
            for n in chars.by_ref() {
                if n == ')' {
                    break;
                }
            }
        }
        while let Some(&n) = chars.peek() {
            chars.next();
            if n.is_ascii_alphabetic() {
                break;
            }
        }
    }
    out
}

/// Makes a variable's value in `state` sanitised for `bits` (a tracked collection becomes
/// its flat taint).
fn sanitize_in(state: &mut State, name: &str, bits: u64, trails: &super::value::Trails) {
    if let Some(v) = state.get_mut(name) {
        let mut t = v.flat(trails);
        t.sanitize(bits);
        *v = Val {
            taint: t,
            konst: v.konst.clone(),
            coll: None,
        };
    }
}

/// What a branch condition shows about its parts on the edge where it evaluates to `want`.
enum CondFact {
    /// The call starting at this byte returned this truth value.
    Call(usize, bool),
    /// The variable holds one of the program's own constants (`x in ALLOWED`, `x == "a"`,
    /// `"a".equals(x)`, `ALLOWED.contains(x)`).
    Known(String),
}

/// The facts a condition proves when it evaluates to `want`: through parentheses, negation,
/// `and` (when true) and `or` (when false).
fn condition_facts(
    file: &ParsedFile,
    node: Node<'_>,
    want: bool,
    out: &mut Vec<CondFact>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    let text = |n: Node<'_>| file.node_text(n);
    let op_text = |n: Node<'_>| {
        n.child_by_field_name(field::OPERATOR)
            .map(|o| file.node_text(o).trim().to_string())
            .unwrap_or_default()
    };
    match node.kind() {
        kind::PARENTHESIZED_EXPRESSION | kind::CONDITION_CLAUSE => {
            if let Some(inner) = named_children(node).into_iter().next_back() {
                condition_facts(file, inner, want, out, depth + 1);
            }
        }
        kind::NOT_OPERATOR => {
            if let Some(a) = node.child_by_field_name(field::ARGUMENT) {
                condition_facts(file, a, !want, out, depth + 1);
            }
        }
        kind::UNARY_EXPRESSION if op_text(node) == "!" => {
            if let Some(a) = node
                .child_by_field_name(field::OPERAND)
                .or_else(|| node.child_by_field_name(field::ARGUMENT))
            {
                condition_facts(file, a, !want, out, depth + 1);
            }
        }
        kind::BOOLEAN_OPERATOR | kind::BINARY_EXPRESSION => {
            let op = op_text(node);
            let both =
                (want && (op == "and" || op == "&&")) || (!want && (op == "or" || op == "||"));
            if both {
                for side in [field::LEFT, field::RIGHT] {
                    if let Some(n) = node.child_by_field_name(side) {
                        condition_facts(file, n, want, out, depth + 1);
                    }
                }
            } else if (want && (op == "==" || op == "==="))
                || (!want && (op == "!=" || op == "!=="))
            {
                if let Some(name) = equality_known(file, node) {
                    out.push(CondFact::Known(name));
                }
            }
        }
        kind::COMPARISON_OPERATOR => {
            // Python: `x in ALLOWED` (true) / `x not in ALLOWED` (false), `x == "a"`.
            let parts = named_children(node);
            let ops: Vec<String> = {
                let mut c = node.walk();
                node.children(&mut c)
                    .filter(|n| !n.is_named())
                    .map(|n| text(n).to_string())
                    .collect()
            };
            if let ([left, right], [op]) = (parts.as_slice(), ops.as_slice()) {
                let holds = match op.as_str() {
                    "in" | "==" => want,
                    "not in" | "!=" => !want,
                    _ => false,
                };
                if holds && left.kind() == kind::IDENTIFIER {
                    let allowed = match op.as_str() {
                        "in" | "not in" => is_allow_list(file, *right),
                        _ => is_constant_expr(*right),
                    };
                    if allowed {
                        out.push(CondFact::Known(text(*left).to_string()));
                    }
                }
            }
        }
        kind::CALL | kind::METHOD_INVOCATION | kind::CALL_EXPRESSION => {
            out.push(CondFact::Call(node.start_byte(), want));
            if want {
                if let Some(name) = allow_list_call(file, node) {
                    out.push(CondFact::Known(name));
                }
            }
        }
        _ => {}
    }
}

/// `x == "a"` / `"a" == x` with a literal on one side: the variable on the other.
fn equality_known(file: &ParsedFile, node: Node<'_>) -> Option<String> {
    let l = node.child_by_field_name(field::LEFT)?;
    let r = node.child_by_field_name(field::RIGHT)?;
    match (l.kind() == kind::IDENTIFIER, r.kind() == kind::IDENTIFIER) {
        (true, false) if is_constant_expr(r) => Some(file.node_text(l).to_string()),
        (false, true) if is_constant_expr(l) => Some(file.node_text(r).to_string()),
        _ => None,
    }
}

/// A literal string, number, or an ALL_CAPS constant name.
fn is_constant_expr(n: Node<'_>) -> bool {
    if n.kind() == kind::TEMPLATE_STRING {
        // A JavaScript template is constant only without `${..}`.
        return named_children(n)
            .iter()
            .all(|c| c.kind() != kind::TEMPLATE_SUBSTITUTION);
    }
    is_string_kind(n.kind())
        || matches!(
            n.kind(),
            kind::INTEGER
                | kind::FLOAT
                | kind::DECIMAL_INTEGER_LITERAL
                | kind::NUMBER_LITERAL
                | kind::NUMBER
                | kind::TRUE
                | kind::FALSE
        )
}

/// An allow-list: a literal collection of constants, or a name spelled as a constant
/// (`ALLOWED`, `settings.ALLOWED_HOSTS`).
fn is_allow_list(file: &ParsedFile, n: Node<'_>) -> bool {
    match n.kind() {
        kind::LIST | kind::TUPLE | kind::SET => {
            named_children(n).iter().all(|c| is_constant_expr(*c))
        }
        kind::IDENTIFIER | kind::ATTRIBUTE | kind::FIELD_ACCESS => {
            let t = file.node_text(n);
            let last = t.rsplit('.').next().unwrap_or(t);
            last.len() > 1
                && last.chars().any(|c| c.is_ascii_uppercase())
                && last
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        }
        _ => false,
    }
}

/// Java: `"a".equals(x)`, `x.equals("a")`, `ALLOWED.contains(x)`: the variable compared with
/// the program's own constants.
fn allow_list_call(file: &ParsedFile, node: Node<'_>) -> Option<String> {
    if node.kind() == kind::CALL_EXPRESSION {
        return js_allow_list_call(file, node);
    }
    let name = node.child_by_field_name(field::NAME)?;
    let object = node.child_by_field_name(field::OBJECT)?;
    let args = node.child_by_field_name(field::ARGUMENTS)?;
    let [arg] = named_children(args).try_into().ok()?;
    let ident = |n: Node<'_>| (n.kind() == kind::IDENTIFIER).then(|| file.node_text(n).to_string());
    match file.node_text(name) {
        "equals" | "equalsIgnoreCase" => {
            if is_constant_expr(object) {
                ident(arg)
            } else if is_constant_expr(arg) {
                ident(object)
            } else {
                None
            }
        }
        "contains" if is_allow_list(file, object) => ident(arg),
        _ => None,
    }
}

/// JavaScript `ALLOWED.includes(x)`, `["a", "b"].includes(x)`, `allowedCommands.has(x)`: the
/// variable is one of the program's own values (a list of literals, a constant-named list, or
/// one its name declares an allow-list).
fn js_allow_list_call(file: &ParsedFile, node: Node<'_>) -> Option<String> {
    let f = node.child_by_field_name(field::FUNCTION)?;
    if f.kind() != kind::MEMBER_EXPRESSION {
        return None;
    }
    let object = f.child_by_field_name(field::OBJECT)?;
    let method = file.node_text(f.child_by_field_name(field::PROPERTY)?);
    if !matches!(method, "includes" | "has") {
        return None;
    }
    let [arg] = named_children(node.child_by_field_name(field::ARGUMENTS)?)
        .try_into()
        .ok()?;
    if arg.kind() != kind::IDENTIFIER {
        return None;
    }
    let listed = match object.kind() {
        kind::ARRAY => named_children(object).iter().all(|c| is_constant_expr(*c)),
        kind::IDENTIFIER | kind::MEMBER_EXPRESSION => {
            let t = file.node_text(object);
            let last = t.rsplit('.').next().unwrap_or(t);
            let lower = last.to_ascii_lowercase();
            is_allow_list(file, object)
                || (last.len() > 1
                    && last
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                || [
                    "allow",
                    "whitelist",
                    "permitted",
                    "valid",
                    "known",
                    "supported",
                ]
                .iter()
                .any(|w| lower.contains(w))
        }
        _ => false,
    };
    listed.then(|| file.node_text(arg).to_string())
}

fn is_self(text: &str) -> bool {
    matches!(text, "self" | "this" | "cls")
}

/// The variable an out-argument writes: `&x` -> `x`.
fn out_arg_target(a: Node<'_>) -> Node<'_> {
    let a = unwrap(a);
    if a.kind() == kind::POINTER_EXPRESSION {
        if let Some(arg) = a.child_by_field_name(field::ARGUMENT) {
            return arg;
        }
    }
    a
}

fn source_text(file: &ParsedFile, node: Node<'_>, parts: &CallParts<'_>) -> String {
    let callee: String = if parts.is_new {
        format!("new {}", file.node_text(parts.callee))
    } else if node.kind() == kind::METHOD_INVOCATION {
        let recv = parts
            .receiver
            .map(|r| format!("{}.", file.node_text(r)))
            .unwrap_or_default();
        format!("{recv}{}", parts.name)
    } else {
        file.node_text(parts.callee).to_string()
    };
    let callee: String = callee.split_whitespace().collect::<Vec<_>>().join(" ");
    let callee: String = callee.chars().take(60).collect();
    if parts.args.is_empty() && parts.kwargs.is_empty() {
        format!("{callee}()")
    } else {
        format!("{callee}(...)")
    }
}

fn is_comparison(op: &str) -> bool {
    matches!(
        op,
        "==" | "!=" | "<" | ">" | "<=" | ">=" | "===" | "!==" | "is" | "is not" | "in" | "not in"
    )
}

fn consts_equal(a: &Const, b: &Const) -> bool {
    match (a, b) {
        (Const::Str(x), Const::Str(y)) => x == y,
        (Const::Null, Const::Null) => true,
        _ => match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// Folds a binary operation on constants.
fn fold_binary(op: &str, a: &Const, b: &Const) -> Option<Const> {
    if is_comparison(op) {
        let r = match op {
            "==" | "===" | "is" => consts_equal(a, b),
            "!=" | "!==" | "is not" => !consts_equal(a, b),
            _ => {
                let (x, y) = (a.as_int()?, b.as_int()?);
                match op {
                    "<" => x < y,
                    ">" => x > y,
                    "<=" => x <= y,
                    ">=" => x >= y,
                    _ => return None,
                }
            }
        };
        return Some(Const::Bool(r));
    }
    if op == "+" {
        if let (Const::Str(_), _) | (_, Const::Str(_)) = (a, b) {
            let s = format!("{}{}", a.to_text()?, b.to_text()?);
            if s.len() > MAX_CONST_STR {
                return None;
            }
            return Some(Const::Str(Rc::from(s.as_str())));
        }
    }
    let (x, y) = (a.as_int()?, b.as_int()?);
    let v = match op {
        "+" => x.checked_add(y)?,
        "-" => x.checked_sub(y)?,
        "*" => x.checked_mul(y)?,
        "/" | "//" => {
            if y == 0 {
                return None;
            }
            x.checked_div(y)?
        }
        "%" => {
            if y == 0 {
                return None;
            }
            x.checked_rem(y)?
        }
        "&" => x & y,
        "|" => x | y,
        "^" => x ^ y,
        "<<" => x.checked_shl(u32::try_from(y).ok()?)?,
        ">>" => x.checked_shr(u32::try_from(y).ok()?)?,
        _ => return None,
    };
    Some(Const::Int(v))
}

/// Folds a method call on a constant receiver (`"ABC".charAt(2)`).
fn fold_method(recv: &Const, name: &str, args: &[Val]) -> Option<Const> {
    let Const::Str(s) = recv else { return None };
    let int = |i: usize| {
        args.get(i)
            .and_then(|a| a.konst.as_ref())
            .and_then(Const::as_int)
    };
    let chars: Vec<char> = s.chars().collect();
    match (name, args.len()) {
        ("charAt", 1) => chars
            .get(usize::try_from(int(0)?).ok()?)
            .map(|c| Const::Char(*c)),
        ("length", 0) => Some(Const::Int(chars.len() as i64)),
        ("isEmpty", 0) => Some(Const::Bool(chars.is_empty())),
        ("equals", 1) => match args[0].konst.as_ref()? {
            Const::Str(o) => Some(Const::Bool(o == s)),
            _ => Some(Const::Bool(false)),
        },
        ("toUpperCase" | "upper", 0) => Some(Const::Str(Rc::from(s.to_uppercase().as_str()))),
        ("toLowerCase" | "lower", 0) => Some(Const::Str(Rc::from(s.to_lowercase().as_str()))),
        ("trim" | "strip", 0) => Some(Const::Str(Rc::from(s.trim()))),
        ("substring", 1 | 2) => {
            let a = usize::try_from(int(0)?).ok()?;
            let b = if args.len() == 2 {
                usize::try_from(int(1)?).ok()?
            } else {
                chars.len()
            };
            (a <= b && b <= chars.len())
                .then(|| Const::Str(Rc::from(chars[a..b].iter().collect::<String>().as_str())))
        }
        _ => None,
    }
}

/// `new ArrayList<>()`, `new HashMap<>()`, `new String[] {..}` etc.: tracked collections.
fn new_collection(class: &str, args: &[Val], trails: &super::value::Trails) -> Option<Val> {
    const LISTS: &[&str] = &[
        "ArrayList",
        "LinkedList",
        "Vector",
        "Stack",
        "ArrayDeque",
        "CopyOnWriteArrayList",
    ];
    const MAPS: &[&str] = &[
        "HashMap",
        "TreeMap",
        "LinkedHashMap",
        "Hashtable",
        "ConcurrentHashMap",
        "Properties",
    ];
    let integer_arg = args.len() == 1 && matches!(args[0].konst, Some(Const::Int(_)));
    if !(args.is_empty() || integer_arg) {
        if LISTS.contains(&class) || MAPS.contains(&class) {
            // A copy of another collection: untracked, carrying its taint.
            let mut t = Taint::default();
            for a in args {
                t.join(&a.flat(trails), trails);
            }
            return Some(Val::of_taint(t));
        }
        return None;
    }
    if LISTS.contains(&class) {
        return Some(Val {
            coll: Some(Rc::new(Coll::List(Vec::new()))),
            ..Val::default()
        });
    }
    if MAPS.contains(&class) {
        return Some(Val {
            coll: Some(Rc::new(Coll::Map(BTreeMap::new()))),
            ..Val::default()
        });
    }
    None
}

fn coll_len(c: &Coll) -> usize {
    match c {
        Coll::List(v) => v.len(),
        Coll::Map(m) => m.len(),
    }
}

fn coll_get(c: &Coll, key: &Const) -> Option<Val> {
    match c {
        Coll::List(items) => {
            let i = match key {
                Const::Int(i) => *i,
                _ => return None,
            };
            let i = if i < 0 { items.len() as i64 + i } else { i };
            // Out of range: the access fails at run time; no data flows.
            Some(
                usize::try_from(i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .cloned()
                    .unwrap_or_default(),
            )
        }
        Coll::Map(m) => Some(m.get(key).cloned().unwrap_or_default()),
    }
}

fn coll_set(c: &Coll, key: Const, val: Val) -> Option<Coll> {
    match c {
        Coll::List(items) => {
            let i = match key {
                Const::Int(i) => i,
                _ => return None,
            };
            let i = if i < 0 { items.len() as i64 + i } else { i };
            let i = usize::try_from(i).ok()?;
            if i >= items.len() {
                return None;
            }
            let mut v = items.clone();
            v[i] = val;
            Some(Coll::List(v))
        }
        Coll::Map(m) => {
            if m.len() >= MAX_COLL && !m.contains_key(&key) {
                return None;
            }
            let mut m = m.clone();
            m.insert(key, val);
            Some(Coll::Map(m))
        }
    }
}

fn feasible(filter: &EdgeFilter, kind: EdgeKind, target_start: usize) -> bool {
    match filter {
        EdgeFilter::All => true,
        EdgeFilter::Bool(b) => match kind {
            EdgeKind::True => *b,
            EdgeKind::False => !*b,
            _ => true,
        },
        EdgeFilter::Cases { allowed, outside } => {
            if kind != EdgeKind::Case {
                return true;
            }
            allowed
                .iter()
                .any(|&(s, e)| target_start >= s && target_start < e)
                || outside.is_some_and(|(s, e)| target_start < s || target_start >= e)
        }
    }
}

fn join_states(a: &State, b: &State, trails: &super::value::Trails) -> State {
    let mut out = a.clone();
    for (k, v) in b {
        let joined = match out.get(k) {
            Some(old) => old.join(v, trails),
            None => v.clone(),
        };
        out.insert(k.clone(), joined);
    }
    out
}

fn same_states(a: &State, b: &State) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.same(v2))
}

/// Widens the variables whose value changed at a loop head (constants and element
/// structure dropped), so loops converge after a few iterations.
fn widen_changed(old: &State, joined: &mut State, trails: &super::value::Trails) {
    for (k, v) in joined.iter_mut() {
        let changed = old.get(k).is_none_or(|o| !o.same(v));
        if changed && (v.konst.is_some() || v.coll.is_some()) {
            *v = v.widen(trails);
        }
    }
}

fn reverse_postorder(cfg: &Cfg) -> Vec<usize> {
    let n = cfg.graph.node_count();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let entry = cfg.entry.index();
    let mut stack: Vec<(usize, usize)> = vec![(entry, 0)];
    if let Some(s) = seen.get_mut(entry) {
        *s = true;
    }
    let succ: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            cfg.successors(NodeIndex::new(i))
                .into_iter()
                .map(|(t, _)| t.index())
                .collect()
        })
        .collect();
    while let Some((node, i)) = stack.pop() {
        match succ.get(node).and_then(|s| s.get(i)) {
            Some(&next) => {
                stack.push((node, i + 1));
                if let Some(s) = seen.get_mut(next) {
                    if !*s {
                        *s = true;
                        stack.push((next, 0));
                    }
                }
            }
            None => post.push(node),
        }
    }
    post.reverse();
    post
}

fn is_foreach(lang: Language, kind: &str) -> bool {
    match kind {
        kind::FOR_STATEMENT => lang == Language::Python,
        kind::ENHANCED_FOR_STATEMENT | kind::FOR_RANGE_LOOP | kind::FOR_IN_STATEMENT => true,
        _ => false,
    }
}

fn is_assignment_kind(kind: &str) -> bool {
    matches!(
        kind,
        kind::ASSIGNMENT
            | kind::ASSIGNMENT_EXPRESSION
            | kind::AUGMENTED_ASSIGNMENT
            | kind::AUGMENTED_ASSIGNMENT_EXPRESSION
            | kind::NAMED_EXPRESSION
    )
}

fn is_simple_statement(kind: &str) -> bool {
    matches!(
        kind,
        kind::EXPRESSION_STATEMENT
            | kind::LOCAL_VARIABLE_DECLARATION
            | kind::DECLARATION
            | kind::VARIABLE_DECLARATION_STATEMENT
            | kind::RETURN_STATEMENT
            | kind::ASSERT_STATEMENT
            | kind::EMIT_STATEMENT
            | kind::DELETE_STATEMENT
            | kind::PRINT_STATEMENT
    )
}

fn is_compound(kind: &str) -> bool {
    matches!(
        kind,
        kind::IF_STATEMENT
            | kind::WHILE_STATEMENT
            | kind::FOR_STATEMENT
            | kind::ENHANCED_FOR_STATEMENT
            | kind::FOR_RANGE_LOOP
            | kind::DO_STATEMENT
            | kind::TRY_STATEMENT
            | kind::TRY_WITH_RESOURCES_STATEMENT
            | kind::SWITCH_STATEMENT
            | kind::SWITCH_EXPRESSION
            | kind::WITH_STATEMENT
            | kind::BLOCK
            | kind::COMPOUND_STATEMENT
            | kind::MATCH_STATEMENT
            | kind::FUNCTION_BODY
            | kind::STATEMENT
            | kind::SYNCHRONIZED_STATEMENT
            | kind::LABELED_STATEMENT
    )
}

#[cfg(test)]
mod tests {
    use super::fixes_url_target;

    #[test]
    fn format_prefixes_name_the_text_before_each_conversion() {
        assert_eq!(
            super::format_prefixes("%s?%s"),
            vec!["".to_string(), "\u{0}?".to_string()]
        );
        assert_eq!(
            super::format_prefixes("100%% of /a?x=%(x)s&y=%5.2f"),
            vec![
                "100% of /a?x=".to_string(),
                "100% of /a?x=\u{0}&y=".to_string()
            ]
        );
    }

    #[test]
    fn a_url_prefix_fixes_the_target_only_once_its_host_or_path_is_closed() {
        for fixed in [
            "https://auth.example.com/authorize?state=",
            "http://x.org/",
            "/search?q=",
            "?next=",
            "mailto:a@b?subject=",
        ] {
            assert!(fixes_url_target(fixed), "{fixed}");
        }
        for open in [
            "https://",
            "/user/",
            "/login",
            "https://example.com",
            "//",
            "/",
            "/\\",
            "https://user@",
            "",
            "http",
        ] {
            assert!(!fixes_url_target(open), "{open}");
        }
    }
}
