//! The CFG builder: one recursive walk over statements (bounded by [`MAX_DEPTH`]) that threads
//! "pending" edges (a source node and an edge kind whose target is the next node built) and a
//! stack of jump contexts (loops, switches, labelled blocks, try statements).
//!
//! Expressions are never recursed into; the few places that look inside an expression
//! (call classification, thrown type names) use bounded loops.

use super::{Cfg, CfgNode, EdgeKind, NodeKind, Unreachable};
use crate::syntax::functions::Function;
use crate::syntax::lang::{field, kind};
use crate::syntax::parse::SourceError;
use crate::syntax::{Cancel, Language, ParsedFile};
use petgraph::graph::{Graph, NodeIndex};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use tree_sitter::Node;

/// Statement nesting limit (see the module docs).
pub(super) const MAX_DEPTH: usize = 200;

const ENTRY: usize = 0;
const EXIT: usize = 1;
/// Bound for the small loops that walk down wrapper expressions.
const UNWRAP_LIMIT: usize = 32;

pub(super) const SYNTAX_ERROR: &str = "syntax error in function body";
/// At most this many syntax-error lines are reported per function.
const MAX_SYNTAX_ERRORS: usize = 100;

/// An edge whose source is known and whose target is the next node built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    from: usize,
    kind: EdgeKind,
}

fn pend(from: usize, kind: EdgeKind) -> Pending {
    Pending { from, kind }
}

/// An abrupt transfer of control.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Jump {
    Return,
    /// A throw with the simple name of the thrown type, if known.
    Throw(Option<String>),
    AssertFail,
    /// Break out of the context at this stack index.
    Break(usize),
    /// Continue the loop at this stack index.
    Continue(usize),
}

/// Where a jump lands, given the current context stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    Exit,
    Node(usize),
    /// The break list of the context at this stack index.
    Breaks(usize),
    /// The finally block of the try context at this stack index.
    Finally(usize),
}

#[derive(Debug)]
struct Handler {
    node: usize,
    types: Vec<String>,
    catch_all: bool,
}

#[derive(Debug, Default)]
struct FinallyState {
    /// Abrupt exits entering the finally block.
    entries: Vec<Pending>,
    /// Distinct continuations routed through the finally block, in first-seen order.
    jumps: Vec<Jump>,
    /// Each abrupt exit with its own continuation (used when the finally block is empty).
    entry_jumps: Vec<(Pending, Jump)>,
}

#[derive(Debug)]
enum Ctx {
    Loop {
        label: Option<String>,
        cont: usize,
        breaks: Vec<Pending>,
    },
    Switch {
        label: Option<String>,
        breaks: Vec<Pending>,
    },
    /// A labelled non-loop statement (Java/JS `lbl: { ... break lbl; }`).
    Block { label: String, breaks: Vec<Pending> },
    Try {
        handlers: Vec<Handler>,
        in_body: bool,
        finally: Option<FinallyState>,
    },
}

/// A statement builder, as chosen by `Builder::route`.
type StmtFn<'a, 't> = fn(&mut Builder<'a, 't>, Node<'t>, Vec<Pending>) -> Vec<Pending>;

struct Builder<'a, 't> {
    file: &'t ParsedFile,
    lang: Language,
    cancel: &'a Cancel,
    nodes: Vec<CfgNode>,
    edges: Vec<(usize, usize, EdgeKind)>,
    ctx: Vec<Ctx>,
    labels: BTreeMap<String, usize>,
    gotos: Vec<(usize, String)>,
    depth: usize,
    partial: bool,
    errors: Vec<SourceError>,
    cancelled: bool,
    /// Nodes whose unreachability is not worth reporting (C-style `for` updates).
    implicit: BTreeSet<usize>,
}

/// Builds the CFG of `func` (see the module docs for the conventions).
pub(super) fn build(file: &ParsedFile, func: &Function<'_>, cancel: &Cancel) -> Cfg {
    build_with_unreachable(file, func, cancel).0
}

/// Builds the CFG and lists the statements dropped as unreachable (see
/// [`super::build_cfg_with_unreachable`]).
pub(super) fn build_with_unreachable(
    file: &ParsedFile,
    func: &Function<'_>,
    cancel: &Cancel,
) -> (Cfg, Vec<Unreachable>) {
    let mut b = Builder {
        file,
        lang: file.language,
        cancel,
        nodes: Vec::new(),
        edges: Vec::new(),
        ctx: Vec::new(),
        labels: BTreeMap::new(),
        gotos: Vec::new(),
        depth: 0,
        partial: false,
        errors: Vec::new(),
        cancelled: false,
        implicit: BTreeSet::new(),
    };
    let params = params_range(file, func.node);
    b.nodes.push(CfgNode {
        kind: NodeKind::Entry,
        line: func.start_line,
        text: snippet(&file.text, &params),
        range: params,
    });
    let end = func.node.end_byte();
    b.nodes.push(CfgNode {
        kind: NodeKind::Exit,
        line: func.end_line,
        range: end..end,
        text: String::new(),
    });
    let start = vec![pend(ENTRY, EdgeKind::Fallthrough)];
    let out = match func.body {
        Some(body)
            if is_block_kind(body.kind())
                || body.kind() == kind::TRY_STATEMENT
                || body.is_error() =>
        {
            b.stmt(body, start)
        }
        // Expression-bodied lambdas / arrow functions: the expression is one node, even a
        // Java switch expression.
        Some(body) => b.plain(body, start),
        None => start,
    };
    b.connect(&out, EXIT);
    b.resolve_gotos();
    if let Some(body) = func.body {
        b.check_syntax(body);
    }
    if b.cancelled {
        b.partial = true;
        b.errors.push(SourceError {
            line: func.start_line,
            message: "control-flow analysis was cancelled; the graph is partial".into(),
        });
    }
    b.finish()
}

/// First line of a range, at most 80 characters, trailing whitespace removed.
fn snippet(text: &str, range: &Range<usize>) -> String {
    let s = text.get(range.clone()).unwrap_or("");
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if ch == '\n' || i >= 80 {
            break;
        }
        out.push(ch);
    }
    out.trim_end().to_string()
}

fn is_comment(kind: &str) -> bool {
    matches!(
        kind,
        kind::COMMENT | kind::LINE_COMMENT | kind::BLOCK_COMMENT
    )
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| !is_comment(c.kind()))
        .collect()
}

fn first_named(n: Node<'_>) -> Option<Node<'_>> {
    let mut c = n.walk();
    let found = n.named_children(&mut c).find(|c| !is_comment(c.kind()));
    found
}

/// Named, non-comment children with their field names.
fn fields<'t>(n: Node<'t>) -> Vec<(Option<&'static str>, Node<'t>)> {
    let mut out = Vec::new();
    let mut c = n.walk();
    if c.goto_first_child() {
        loop {
            let node = c.node();
            if node.is_named() && !is_comment(node.kind()) {
                out.push((c.field_name(), node));
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Named children for a field that may repeat (`init`, `update`, Solidity `body`).
fn field_all<'t>(n: Node<'t>, name: &str) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.children_by_field_name(name, &mut c)
        .filter(|x| x.is_named() && x.kind() != kind::EMPTY_STATEMENT)
        .collect()
}

fn is_block_kind(kind: &str) -> bool {
    matches!(
        kind,
        kind::BLOCK
            | kind::COMPOUND_STATEMENT
            | kind::STATEMENT_BLOCK
            | kind::BLOCK_STATEMENT
            | kind::FUNCTION_BODY
            | kind::CONSTRUCTOR_BODY
    )
}

fn is_call_kind(kind: &str) -> bool {
    matches!(
        kind,
        kind::CALL
            | kind::CALL_EXPRESSION
            | kind::METHOD_INVOCATION
            | kind::OBJECT_CREATION_EXPRESSION
            | kind::EXPLICIT_CONSTRUCTOR_INVOCATION
            | kind::NEW_EXPRESSION
    )
}

/// `ns::Foo<T>` / `pkg.Foo` -> `Foo`; `None` when the result is not an identifier.
fn simple_name(text: &str) -> Option<String> {
    let base = text.split('<').next().unwrap_or("");
    let last = base.rsplit("::").next().unwrap_or("");
    let last = last.rsplit('.').next().unwrap_or("").trim();
    let ok = !last.is_empty() && last.chars().all(|c| c.is_alphanumeric() || c == '_');
    ok.then(|| last.to_string())
}

/// The byte range of the parameter list of a function node (empty at its start if none).
fn params_range(file: &ParsedFile, node: Node<'_>) -> Range<usize> {
    let empty = node.start_byte()..node.start_byte();
    if let Some(p) = node
        .child_by_field_name(field::PARAMETERS)
        .or_else(|| node.child_by_field_name(field::PARAMETER))
    {
        return p.byte_range();
    }
    // C/C++ functions and C++ lambdas: the parameters sit on the function declarator.
    if let Some(mut d) = node.child_by_field_name(field::DECLARATOR) {
        for _ in 0..UNWRAP_LIMIT {
            if let Some(p) = d.child_by_field_name(field::PARAMETERS) {
                return p.byte_range();
            }
            match d.child_by_field_name(field::DECLARATOR) {
                Some(next) => d = next,
                None => break,
            }
        }
    }
    // Solidity: parameters are direct children between `(` and `)` tokens.
    if file.language == Language::Solidity {
        let mut c = node.walk();
        let mut open = None;
        for child in node.children(&mut c) {
            match (child.kind(), open) {
                ("(", None) => open = Some(child.start_byte()),
                (")", Some(s)) => return s..child.end_byte(),
                _ => {}
            }
            if child.kind() == kind::FUNCTION_BODY {
                break;
            }
        }
    }
    empty
}

impl<'a, 't> Builder<'a, 't> {
    fn text(&self, n: Node<'_>) -> &'t str {
        self.file.node_text(n)
    }

    fn add_node(&mut self, kind: NodeKind, range: Range<usize>) -> usize {
        let line = self.file.line_of(range.start);
        let text = snippet(&self.file.text, &range);
        self.nodes.push(CfgNode {
            kind,
            line,
            range,
            text,
        });
        self.nodes.len() - 1
    }

    fn edge(&mut self, from: usize, to: usize, kind: EdgeKind) {
        self.edges.push((from, to, kind));
    }

    fn connect(&mut self, preds: &[Pending], to: usize) {
        for p in preds {
            self.edge(p.from, to, p.kind);
        }
    }

    /// Connects the normal end of a loop body to its loop node (`fallthrough` becomes `back`).
    fn connect_back(&mut self, preds: &[Pending], to: usize) {
        for p in preds {
            let kind = if p.kind == EdgeKind::Fallthrough {
                EdgeKind::Back
            } else {
                p.kind
            };
            self.edge(p.from, to, kind);
        }
    }

    /// A range from `start` to `end` with trailing whitespace removed (headers).
    fn header(&self, start: usize, end: usize) -> Range<usize> {
        let end = end.max(start);
        let s = self.file.text.get(start..end).unwrap_or("");
        start..start + s.trim_end().len()
    }

    fn record_error(&mut self, line: usize, message: String) {
        self.partial = true;
        self.errors.push(SourceError { line, message });
    }

    // ----- statements -------------------------------------------------------------------
    //
    // The functions on the recursive path (`stmt`, `dispatch`, `seq`, `sub` and the
    // compound-statement builders) keep few locals; the rest of the work happens in
    // `#[inline(never)]` helpers, so a nesting level costs little stack even in debug builds.

    /// Removes statement wrappers (Solidity `statement`, C `attributed_statement`).
    #[inline(never)]
    fn unwrap_stmt(&self, mut node: Node<'t>) -> Node<'t> {
        for _ in 0..UNWRAP_LIMIT {
            let next = match node.kind() {
                kind::STATEMENT if self.lang == Language::Solidity => first_named(node),
                kind::ATTRIBUTED_STATEMENT => named_children(node).into_iter().last(),
                _ => None,
            };
            match next {
                Some(n) if n.kind() != kind::ATTRIBUTE_DECLARATION => node = n,
                _ => break,
            }
        }
        node
    }

    #[inline(never)]
    fn is_skipped(&self, node: Node<'_>) -> bool {
        if !node.is_named() || node.is_missing() {
            return true;
        }
        match node.kind() {
            kind::COMMENT
            | kind::LINE_COMMENT
            | kind::BLOCK_COMMENT
            | kind::EMPTY_STATEMENT
            | kind::PREPROC_INCLUDE
            | kind::PREPROC_DEF
            | kind::PREPROC_FUNCTION_DEF
            | kind::PREPROC_CALL
            | kind::UNCHECKED
            | kind::ATTRIBUTE_DECLARATION => true,
            kind::EXPRESSION_STATEMENT => node.named_child_count() == 0,
            _ => false,
        }
    }

    #[inline(never)]
    fn poll_cancel(&mut self) -> bool {
        if !self.cancelled && self.cancel.is_cancelled() {
            self.cancelled = true;
        }
        self.cancelled
    }

    /// Builds one statement (or block) entered by `preds`; returns its normal exits.
    fn stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let Some((node, build)) = self.route(node) else {
            return preds;
        };
        self.depth += 1;
        let out = build(self, node, preds);
        self.depth -= 1;
        out
    }

    /// Chooses the builder for a statement (`None`: the statement adds nothing). Kept out of
    /// `stmt` so that the recursive frames stay small.
    #[inline(never)]
    fn route(&mut self, node: Node<'t>) -> Option<(Node<'t>, StmtFn<'a, 't>)> {
        let node = self.unwrap_stmt(node);
        if self.is_skipped(node) || self.poll_cancel() {
            return None;
        }
        if node.is_error() || self.depth >= MAX_DEPTH {
            return Some((node, Self::opaque));
        }
        let kind = node.kind();
        if is_block_kind(kind) {
            return Some((node, Self::block));
        }
        if is_labelable(kind) {
            return Some((node, Self::unlabelled));
        }
        let build: StmtFn<'a, 't> = match kind {
            kind::IF_STATEMENT => Self::if_chain,
            kind::TRY_STATEMENT | kind::TRY_WITH_RESOURCES_STATEMENT | kind::SEH_TRY_STATEMENT => {
                Self::try_stmt
            }
            kind::MATCH_STATEMENT => Self::py_match,
            kind::LABELED_STATEMENT => Self::labeled,
            kind::WITH_STATEMENT if self.lang == Language::Python => Self::py_with,
            kind::SYNCHRONIZED_STATEMENT | kind::WITH_STATEMENT => Self::body_field,
            kind::PREPROC_IF
            | kind::PREPROC_IFDEF
            | kind::PREPROC_ELSE
            | kind::PREPROC_ELIF
            | kind::PREPROC_ELIFDEF => Self::preproc,
            // A C case label outside a switch body (e.g. Duff's device): statements inline.
            kind::CASE_STATEMENT => Self::stray_case,
            kind::BREAK_STATEMENT => Self::break_stmt,
            kind::CONTINUE_STATEMENT => Self::continue_stmt,
            kind::GOTO_STATEMENT => Self::goto_stmt,
            kind::THROW_STATEMENT | kind::RAISE_STATEMENT | kind::REVERT_STATEMENT => {
                Self::throw_stmt
            }
            kind::RETURN_STATEMENT | kind::CO_RETURN_STATEMENT => Self::return_stmt,
            kind::ASSERT_STATEMENT => Self::assert_stmt,
            kind::EXPRESSION_STATEMENT if self.is_assert_call(node) => Self::assert_stmt,
            kind::EMIT_STATEMENT => Self::call_stmt,
            _ => Self::plain,
        };
        Some((node, build))
    }

    /// An optional sub-statement; a missing one passes `preds` through.
    fn sub(&mut self, node: Option<Node<'t>>, preds: Vec<Pending>) -> Vec<Pending> {
        match node {
            Some(n) => self.stmt(n, preds),
            None => preds,
        }
    }

    fn seq(&mut self, children: Vec<Node<'t>>, mut preds: Vec<Pending>) -> Vec<Pending> {
        let mut i = 0;
        while i < children.len() {
            let c = children[i];
            if let Some(body) = children.get(i + 1).filter(|b| self.is_macro_loop(c, **b)) {
                // `TAILQ_FOREACH(x, &list, entry) { ... }`: an iteration macro taking a block
                // (parsed as a call missing its `;`, then a block) runs the block zero or more
                // times, with `break`/`continue` of its own.
                let l = self.add_node(NodeKind::Loop, c.byte_range());
                self.connect(&preds, l);
                preds = self.finish_loop(l, Some(*body), None, None);
                i += 2;
                continue;
            }
            preds = self.stmt(c, preds);
            i += 1;
        }
        preds
    }

    /// C/C++: a call statement whose `;` is missing, directly followed by a block.
    fn is_macro_loop(&self, stmt: Node<'t>, next: Node<'t>) -> bool {
        if !matches!(self.lang, Language::C | Language::Cpp)
            || stmt.kind() != kind::EXPRESSION_STATEMENT
            || next.kind() != kind::COMPOUND_STATEMENT
        {
            return false;
        }
        let mut c = stmt.walk();
        let kids: Vec<Node<'t>> = stmt.children(&mut c).collect();
        kids.first()
            .is_some_and(|k| k.kind() == kind::CALL_EXPRESSION)
            && kids.last().is_some_and(|k| k.is_missing())
    }

    /// One `normal` node for an ERROR region or for a statement beyond the depth limit.
    #[inline(never)]
    fn opaque(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let line = self.file.line_of(node.start_byte());
        if node.is_error() {
            self.record_error(line, SYNTAX_ERROR.to_string());
        } else {
            self.record_error(
                line,
                format!("statements nested deeper than {MAX_DEPTH} levels; this one is collapsed into one node"),
            );
        }
        self.simple(node, NodeKind::Normal, preds)
    }

    fn block(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        self.seq(named_children(node), preds)
    }

    fn body_field(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let body = node.child_by_field_name(field::BODY);
        self.sub(body, preds)
    }

    /// `#if`/`#ifdef` with its `#elif`/`#else` chain: compile-time alternatives, each entered
    /// from the statement before (no branch node: nothing is decided at run time). Without an
    /// `#else` the code may be compiled out, so control also passes around it. A `return` in
    /// one arm therefore never makes the other arm unreachable.
    fn preproc(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        // The `#elif` chain is walked in a loop: a long chain costs no stack.
        let mut out = Vec::new();
        let mut arm = Some(node);
        while let Some(a) = arm {
            let body = children_except(a, &[field::CONDITION, field::NAME, field::ALTERNATIVE]);
            out.extend(self.seq(body, preds.clone()));
            arm = a.child_by_field_name(field::ALTERNATIVE);
            if arm.is_none() && a.kind() != kind::PREPROC_ELSE {
                out.extend(preds.iter().copied());
            }
        }
        out
    }

    fn stray_case(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let children = children_except(node, &[field::VALUE]);
        self.seq(children, preds)
    }

    fn unlabelled(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        self.labelable(node, preds, None)
    }

    /// Loops and switches (the statements a label can name).
    fn labelable(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> Vec<Pending> {
        match node.kind() {
            kind::WHILE_STATEMENT => self.while_loop(node, preds, label),
            kind::FOR_STATEMENT if self.lang != Language::Python => self.c_for(node, preds, label),
            kind::DO_STATEMENT | kind::DO_WHILE_STATEMENT => self.do_while(node, preds, label),
            kind::SWITCH_STATEMENT | kind::SWITCH_EXPRESSION => self.switch(node, preds, label),
            _ => self.foreach(node, preds, label),
        }
    }

    #[inline(never)]
    fn call_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        self.simple(node, NodeKind::Call, preds)
    }

    #[inline(never)]
    fn simple(&mut self, node: Node<'t>, kind: NodeKind, preds: Vec<Pending>) -> Vec<Pending> {
        let n = self.add_node(kind, node.byte_range());
        self.connect(&preds, n);
        vec![pend(n, EdgeKind::Fallthrough)]
    }

    /// A statement without control flow of its own: `call` or `normal`.
    #[inline(never)]
    fn plain(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let kind = if self.is_call(node) {
            NodeKind::Call
        } else {
            NodeKind::Normal
        };
        self.simple(node, kind, preds)
    }

    // ----- conditions -------------------------------------------------------------------

    /// The range of a condition with wrappers and one level of parentheses removed.
    fn cond_range(&self, cond: Option<Node<'_>>, fallback: Range<usize>) -> Range<usize> {
        let Some(mut c) = cond else { return fallback };
        let mut parens = 0;
        for _ in 0..UNWRAP_LIMIT {
            let next = match c.kind() {
                kind::PARENTHESIZED_EXPRESSION if parens == 0 => {
                    parens += 1;
                    first_named(c)
                }
                kind::CONDITION_CLAUSE => c
                    .child_by_field_name(field::VALUE)
                    .or_else(|| first_named(c)),
                kind::EXPRESSION | kind::EXPRESSION_STATEMENT => first_named(c),
                _ => None,
            };
            match next {
                Some(n) => c = n,
                None => break,
            }
        }
        c.byte_range()
    }

    /// `else if` chains are walked iteratively, so long chains cost no nesting depth.
    fn if_chain(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let mut out = Vec::new();
        let mut next = Some((node, preds));
        while let Some((cur, preds)) = next {
            next = self.if_step(cur, preds, &mut out);
        }
        out
    }

    /// One `if` of a chain; returns the chain's next `if` with its entry edges.
    fn if_step(
        &mut self,
        cur: Node<'t>,
        preds: Vec<Pending>,
        out: &mut Vec<Pending>,
    ) -> Option<(Node<'t>, Vec<Pending>)> {
        let b = self.branch_for(cur, preds);
        let then = self.then_part(cur);
        let then_out = self.sub(then, vec![pend(b, EdgeKind::True)]);
        out.extend(then_out);
        if self.lang == Language::Python {
            self.py_alternatives(cur, b, out);
            return None;
        }
        let false_p = vec![pend(b, EdgeKind::False)];
        match self.else_part(cur) {
            Some(alt) if alt.kind() == kind::IF_STATEMENT => Some((alt, false_p)),
            Some(alt) => {
                let alt_out = self.stmt(alt, false_p);
                out.extend(alt_out);
                None
            }
            None => {
                out.extend(false_p);
                None
            }
        }
    }

    /// The `branch` node of an `if`/`elif` condition.
    #[inline(never)]
    fn branch_for(&mut self, node: Node<'t>, preds: Vec<Pending>) -> usize {
        let range = self.cond_range(
            node.child_by_field_name(field::CONDITION),
            node.byte_range(),
        );
        let b = self.add_node(NodeKind::Branch, range);
        self.connect(&preds, b);
        b
    }

    #[inline(never)]
    fn then_part(&self, node: Node<'t>) -> Option<Node<'t>> {
        node.child_by_field_name(field::CONSEQUENCE)
            .or_else(|| field_all(node, "body").first().copied())
    }

    /// The statement after `else` (C/JS `else_clause`, Java `alternative`, Solidity's second
    /// `body`), wrappers removed.
    #[inline(never)]
    fn else_part(&self, node: Node<'t>) -> Option<Node<'t>> {
        let alt = match node.child_by_field_name(field::ALTERNATIVE) {
            Some(a) if a.kind() == kind::ELSE_CLAUSE => first_named(a),
            Some(a) => Some(a),
            None if self.lang == Language::Solidity => field_all(node, "body").get(1).copied(),
            None => None,
        };
        alt.map(|a| self.unwrap_stmt(a))
    }

    /// Python `elif` / `else` clauses of an `if` whose branch node is `b`.
    fn py_alternatives(&mut self, node: Node<'t>, b: usize, out: &mut Vec<Pending>) {
        let alts = field_all(node, "alternative");
        let mut false_p = vec![pend(b, EdgeKind::False)];
        for alt in alts {
            if alt.kind() == kind::ELIF_CLAUSE {
                let e = self.branch_for(alt, false_p);
                let then = alt.child_by_field_name(field::CONSEQUENCE);
                let then_out = self.sub(then, vec![pend(e, EdgeKind::True)]);
                out.extend(then_out);
                false_p = vec![pend(e, EdgeKind::False)];
            } else {
                let body = alt.child_by_field_name(field::BODY);
                false_p = self.sub(body, false_p);
            }
        }
        out.extend(false_p);
    }

    #[inline(never)]
    fn assert_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let b = self.add_node(NodeKind::Branch, node.byte_range());
        self.connect(&preds, b);
        self.apply(vec![pend(b, EdgeKind::False)], Jump::AssertFail);
        vec![pend(b, EdgeKind::True)]
    }

    /// C/C++ `assert(...);` and Solidity `require(...);` statements.
    #[inline(never)]
    fn is_assert_call(&self, node: Node<'_>) -> bool {
        let name = match self.lang {
            Language::C | Language::Cpp => "assert",
            Language::Solidity => "require",
            _ => return false,
        };
        let mut e = node;
        for _ in 0..UNWRAP_LIMIT {
            match e.kind() {
                kind::EXPRESSION_STATEMENT | kind::EXPRESSION => match first_named(e) {
                    Some(n) => e = n,
                    None => return false,
                },
                kind::CALL_EXPRESSION => {
                    let mut f = match e.child_by_field_name(field::FUNCTION) {
                        Some(f) => f,
                        None => return false,
                    };
                    if f.kind() == kind::EXPRESSION {
                        match first_named(f) {
                            Some(n) => f = n,
                            None => return false,
                        }
                    }
                    return f.kind() == kind::IDENTIFIER && self.text(f) == name;
                }
                _ => return false,
            }
        }
        false
    }

    /// True when the statement's top-level expression (after stripping assignment,
    /// declaration, `await` and parentheses) is a call or an object creation.
    #[inline(never)]
    fn is_call(&self, node: Node<'_>) -> bool {
        let mut e = node;
        for _ in 0..UNWRAP_LIMIT {
            let next = match e.kind() {
                kind::EXPRESSION_STATEMENT
                | kind::EXPRESSION
                | kind::PARENTHESIZED_EXPRESSION
                | kind::AWAIT
                | kind::AWAIT_EXPRESSION => first_named(e),
                kind::ASSIGNMENT
                | kind::AUGMENTED_ASSIGNMENT
                | kind::ASSIGNMENT_EXPRESSION
                | kind::AUGMENTED_ASSIGNMENT_EXPRESSION => e.child_by_field_name(field::RIGHT),
                kind::LOCAL_VARIABLE_DECLARATION | kind::DECLARATION => {
                    e.child_by_field_name(field::DECLARATOR)
                }
                kind::LEXICAL_DECLARATION | kind::VARIABLE_DECLARATION => named_children(e)
                    .into_iter()
                    .find(|c| c.kind() == kind::VARIABLE_DECLARATOR),
                kind::VARIABLE_DECLARATOR
                | kind::INIT_DECLARATOR
                | kind::VARIABLE_DECLARATION_STATEMENT => e.child_by_field_name(field::VALUE),
                k => return is_call_kind(k),
            };
            match next {
                Some(n) => e = n,
                None => return false,
            }
        }
        false
    }

    // ----- loops ------------------------------------------------------------------------

    /// Python loops' `else:` block, if any.
    fn loop_else(&self, node: Node<'t>) -> Option<Node<'t>> {
        if self.lang != Language::Python {
            return None;
        }
        node.child_by_field_name(field::ALTERNATIVE)
            .and_then(|a| a.child_by_field_name(field::BODY))
    }

    fn push_loop(&mut self, label: Option<String>, cont: usize) {
        self.ctx.push(Ctx::Loop {
            label,
            cont,
            breaks: Vec::new(),
        });
    }

    fn pop_breaks(&mut self) -> Vec<Pending> {
        match self.ctx.pop() {
            Some(
                Ctx::Loop { breaks, .. } | Ctx::Switch { breaks, .. } | Ctx::Block { breaks, .. },
            ) => breaks,
            _ => Vec::new(),
        }
    }

    /// The loop's `false` edge followed by the breaks out of it (pops the loop context).
    fn loop_exit(&mut self, l: usize) -> Vec<Pending> {
        let mut out = vec![pend(l, EdgeKind::False)];
        out.extend(self.pop_breaks());
        out
    }

    /// Body with `true` entry and `back` edge, then the `false` edge (through Python's
    /// `else:`), then the breaks.
    fn finish_loop(
        &mut self,
        l: usize,
        body: Option<Node<'t>>,
        else_block: Option<Node<'t>>,
        label: Option<String>,
    ) -> Vec<Pending> {
        self.push_loop(label, l);
        let body_out = self.sub(body, vec![pend(l, EdgeKind::True)]);
        self.connect_back(&body_out, l);
        let breaks = self.pop_breaks();
        let mut out = self.sub(else_block, vec![pend(l, EdgeKind::False)]);
        out.extend(breaks);
        out
    }

    fn while_loop(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> Vec<Pending> {
        let l = self.loop_node(node, preds, false);
        let body = node.child_by_field_name(field::BODY);
        let else_block = self.loop_else(node);
        self.finish_loop(l, body, else_block, label)
    }

    fn foreach(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> Vec<Pending> {
        let l = self.loop_node(node, preds, true);
        let body = node.child_by_field_name(field::BODY);
        let else_block = self.loop_else(node);
        self.finish_loop(l, body, else_block, label)
    }

    /// The `loop` node of a while (its condition) or a for-each (its header).
    #[inline(never)]
    fn loop_node(&mut self, node: Node<'t>, preds: Vec<Pending>, header: bool) -> usize {
        let range = if header {
            let end = node
                .child_by_field_name(field::BODY)
                .map(|b| b.start_byte())
                .unwrap_or(node.end_byte());
            self.header(node.start_byte(), end)
        } else {
            self.cond_range(
                node.child_by_field_name(field::CONDITION),
                node.byte_range(),
            )
        };
        let l = self.add_node(NodeKind::Loop, range);
        self.connect(&preds, l);
        l
    }

    /// The range covering the named, non-empty nodes of some `for` header fields.
    fn span_of(&self, node: Node<'_>, names: &[&str]) -> Option<Range<usize>> {
        let parts: Vec<Node<'_>> = names
            .iter()
            .flat_map(|n| field_all(node, n))
            .filter(|p| !self.is_skipped(*p))
            .collect();
        let start = parts.iter().map(|p| p.start_byte()).min()?;
        let end = parts.iter().map(|p| p.end_byte()).max()?;
        Some(start..end)
    }

    fn c_for(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> Vec<Pending> {
        let (l, update) = self.c_for_head(node, preds, label);
        let body = node.child_by_field_name(field::BODY);
        let body_out = self.sub(body, vec![pend(l, EdgeKind::True)]);
        match update {
            Some(u) => {
                self.connect(&body_out, u);
                self.edge(u, l, EdgeKind::Back);
            }
            None => self.connect_back(&body_out, l),
        }
        self.loop_exit(l)
    }

    /// Init node, loop node and update node of a C-style `for`; pushes the loop context.
    #[inline(never)]
    fn c_for_head(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> (usize, Option<usize>) {
        let mut preds = preds;
        if let Some(r) = self.span_of(node, &[field::INIT, field::INITIALIZER, field::INITIAL]) {
            let i = self.add_node(NodeKind::Normal, r);
            self.connect(&preds, i);
            preds = vec![pend(i, EdgeKind::Fallthrough)];
        }
        let body_start = node
            .child_by_field_name(field::BODY)
            .map(|b| b.start_byte())
            .unwrap_or(node.end_byte());
        let header = self.header(node.start_byte(), body_start);
        let cond = field_all(node, "condition")
            .into_iter()
            .find(|c| !self.is_skipped(*c));
        let range = self.cond_range(cond, header);
        let l = self.add_node(NodeKind::Loop, range);
        self.connect(&preds, l);
        let update = self
            .span_of(node, &[field::UPDATE, field::INCREMENT])
            .map(|r| self.add_node(NodeKind::Normal, r));
        if let Some(u) = update {
            self.implicit.insert(u);
        }
        self.push_loop(label, update.unwrap_or(l));
        (l, update)
    }

    fn do_while(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> Vec<Pending> {
        let c = self.do_head(node, label);
        // The back edge is a pending edge into the body, so it lands on the body's first node
        // (or on the condition itself when the body is empty).
        let mut entry = preds;
        entry.push(pend(c, EdgeKind::Back));
        let body = node.child_by_field_name(field::BODY);
        let body_out = self.sub(body, entry);
        self.connect(&body_out, c);
        self.loop_exit(c)
    }

    #[inline(never)]
    fn do_head(&mut self, node: Node<'t>, label: Option<String>) -> usize {
        let range = self.cond_range(
            node.child_by_field_name(field::CONDITION),
            node.byte_range(),
        );
        let c = self.add_node(NodeKind::Loop, range);
        self.push_loop(label, c);
        c
    }

    // ----- switch / match -------------------------------------------------------------

    fn switch(
        &mut self,
        node: Node<'t>,
        preds: Vec<Pending>,
        label: Option<String>,
    ) -> Vec<Pending> {
        let b = self.switch_head(node, preds, label);
        let items = self.switch_items(node);
        let mut has_default = false;
        let mut fall: Vec<Pending> = Vec::new();
        let mut out: Vec<Pending> = Vec::new();
        for item in items {
            has_default |= item.is_default;
            let mut entry = std::mem::take(&mut fall);
            if item.arrow {
                // Arrow rules never fall through: only their own case edge enters them.
                out.append(&mut entry);
            }
            entry.extend(std::iter::repeat_n(pend(b, EdgeKind::Case), item.labels));
            fall = self.seq(item.stmts, entry);
        }
        out.extend(fall);
        if !has_default {
            out.push(pend(b, EdgeKind::Case));
        }
        out.extend(self.pop_breaks());
        out
    }

    #[inline(never)]
    fn switch_head(&mut self, node: Node<'t>, preds: Vec<Pending>, label: Option<String>) -> usize {
        let disc = node
            .child_by_field_name(field::CONDITION)
            .or_else(|| node.child_by_field_name(field::VALUE));
        let range = self.cond_range(disc, node.byte_range());
        let b = self.add_node(NodeKind::Branch, range);
        self.connect(&preds, b);
        self.ctx.push(Ctx::Switch {
            label,
            breaks: Vec::new(),
        });
        b
    }

    /// The label groups (or arrow rules) of a switch body.
    #[inline(never)]
    fn switch_items(&self, node: Node<'t>) -> Vec<SwitchItem<'t>> {
        let body = node
            .child_by_field_name(field::BODY)
            .map(named_children)
            .unwrap_or_default();
        // C/C++: `case` labels inside `#if` arms (or after a `#if` inside another case) are
        // labels of this switch; the preprocessor nodes holding them are opened.
        let mut items: Vec<Node<'t>> = Vec::new();
        if matches!(self.lang, Language::C | Language::Cpp) {
            flatten_cases(body, &mut items, 0);
        } else {
            items = body;
        }
        let mut out: Vec<SwitchItem<'t>> = Vec::new();
        for item in items {
            let next = match item.kind() {
                // C/C++ `case X:` / `default:`, JS `case X:` / `default:`. C/C++ statements
                // after an opened `#if` join the group before them.
                kind::CASE_STATEMENT | kind::SWITCH_CASE | kind::SWITCH_DEFAULT => SwitchItem {
                    labels: 1,
                    stmts: if matches!(self.lang, Language::C | Language::Cpp) {
                        Vec::new()
                    } else {
                        children_except(item, &[field::VALUE])
                    },
                    is_default: item.kind() == kind::SWITCH_DEFAULT
                        || (item.kind() == kind::CASE_STATEMENT
                            && item.child_by_field_name(field::VALUE).is_none()),
                    arrow: false,
                },
                _ if matches!(self.lang, Language::C | Language::Cpp) && !out.is_empty() => {
                    if let Some(last) = out.last_mut() {
                        last.stmts.push(item);
                    }
                    continue;
                }
                _ => self.switch_item(item),
            };
            out.push(next);
        }
        out
    }

    fn switch_item(&self, item: Node<'t>) -> SwitchItem<'t> {
        match item.kind() {
            // Java: `case A: case B: stmts` groups and `case A, B -> body` rules.
            kind::SWITCH_BLOCK_STATEMENT_GROUP | kind::SWITCH_RULE => {
                let (labels, stmts): (Vec<Node<'t>>, Vec<Node<'t>>) = named_children(item)
                    .into_iter()
                    .partition(|c| c.kind() == kind::SWITCH_LABEL);
                let arrow = item.kind() == kind::SWITCH_RULE;
                SwitchItem {
                    labels: if arrow { 1 } else { labels.len() },
                    stmts,
                    is_default: labels.iter().any(|l| self.is_default_label(*l)),
                    arrow,
                }
            }
            // A statement before the first label: reachable only through a goto.
            _ => SwitchItem {
                labels: 0,
                stmts: vec![item],
                is_default: false,
                arrow: false,
            },
        }
    }

    fn is_default_label(&self, label: Node<'_>) -> bool {
        let mut c = label.walk();
        let found = label.children(&mut c).any(|x| x.kind() == "default");
        found || self.text(label).trim_start().starts_with("default")
    }

    fn py_match(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let b = self.match_head(node, preds);
        let clauses = self.match_clauses(node);
        let mut out = Vec::new();
        let mut irrefutable = false;
        for (body, irr) in clauses {
            let body_out = self.sub(body, vec![pend(b, EdgeKind::Case)]);
            out.extend(body_out);
            irrefutable |= irr;
        }
        if !irrefutable {
            out.push(pend(b, EdgeKind::Case));
        }
        out
    }

    #[inline(never)]
    fn match_head(&mut self, node: Node<'t>, preds: Vec<Pending>) -> usize {
        let subjects = field_all(node, "subject");
        let range = match (subjects.first(), subjects.last()) {
            (Some(f), Some(l)) => f.start_byte()..l.end_byte(),
            _ => node.byte_range(),
        };
        let b = self.add_node(NodeKind::Branch, range);
        self.connect(&preds, b);
        b
    }

    /// Each `case` clause's body and whether the clause is irrefutable.
    #[inline(never)]
    fn match_clauses(&self, node: Node<'t>) -> Vec<(Option<Node<'t>>, bool)> {
        let clauses = node
            .child_by_field_name(field::BODY)
            .map(named_children)
            .unwrap_or_default();
        clauses
            .into_iter()
            .filter(|c| c.kind() == kind::CASE_CLAUSE)
            .map(|c| {
                (
                    c.child_by_field_name(field::CONSEQUENCE),
                    self.is_irrefutable(c),
                )
            })
            .collect()
    }

    /// `case _:` or a bare capture `case name:`, without guard.
    fn is_irrefutable(&self, clause: Node<'_>) -> bool {
        if clause.child_by_field_name(field::GUARD).is_some() {
            return false;
        }
        let patterns: Vec<Node<'_>> = named_children(clause)
            .into_iter()
            .filter(|c| c.kind() == kind::CASE_PATTERN)
            .collect();
        let [pattern] = patterns.as_slice() else {
            return false;
        };
        let inner = named_children(*pattern);
        match inner.as_slice() {
            [] => self.text(*pattern).trim() == "_",
            [one] => one.kind() == kind::DOTTED_NAME && one.named_child_count() == 1,
            _ => false,
        }
    }

    // ----- labels and jumps -----------------------------------------------------------

    fn labeled(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let (name, inner) = self.label_parts(node);
        if matches!(self.lang, Language::C | Language::Cpp) {
            let l = self.label_node(node, inner, name, preds);
            return self.sub(inner, vec![pend(l, EdgeKind::Fallthrough)]);
        }
        let Some(inner) = inner else { return preds };
        let inner = self.unwrap_stmt(inner);
        if is_labelable(inner.kind()) {
            return self.labelable(inner, preds, Some(name));
        }
        self.ctx.push(Ctx::Block {
            label: name,
            breaks: Vec::new(),
        });
        let mut out = self.stmt(inner, preds);
        out.extend(self.pop_breaks());
        out
    }

    /// The label's name and the labelled statement.
    #[inline(never)]
    fn label_parts(&self, node: Node<'t>) -> (String, Option<Node<'t>>) {
        let parts = fields(node);
        let label_node = parts
            .iter()
            .find(|(f, n)| *f == Some("label") || n.kind() == kind::IDENTIFIER)
            .map(|(_, n)| *n);
        let name = label_node
            .map(|l| self.text(l).to_string())
            .unwrap_or_default();
        let inner = parts
            .iter()
            .find(|(f, n)| *f != Some("label") && Some(*n) != label_node)
            .map(|(_, n)| *n);
        (name, inner)
    }

    /// The `normal` node of a C label (`L:`), registered as goto target.
    #[inline(never)]
    fn label_node(
        &mut self,
        node: Node<'t>,
        inner: Option<Node<'t>>,
        name: String,
        preds: Vec<Pending>,
    ) -> usize {
        let end = inner.map(|i| i.start_byte()).unwrap_or(node.end_byte());
        let range = self.header(node.start_byte(), end);
        let l = self.add_node(NodeKind::Normal, range);
        self.connect(&preds, l);
        self.labels.entry(name).or_insert(l);
        l
    }

    fn jump_label(&self, node: Node<'_>) -> Option<String> {
        node.child_by_field_name(field::LABEL)
            .or_else(|| {
                named_children(node)
                    .into_iter()
                    .find(|c| c.kind() == kind::IDENTIFIER)
            })
            .map(|l| self.text(l).to_string())
    }

    #[inline(never)]
    fn break_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let j = self.add_node(NodeKind::Jump, node.byte_range());
        self.connect(&preds, j);
        let label = self.jump_label(node);
        let target = self.ctx.iter().rposition(|c| match (c, label.as_deref()) {
            (Ctx::Loop { .. } | Ctx::Switch { .. }, None) => true,
            (Ctx::Loop { label: Some(l), .. } | Ctx::Switch { label: Some(l), .. }, Some(want)) => {
                l == want
            }
            (Ctx::Block { label: l, .. }, Some(want)) => l == want,
            _ => false,
        });
        match target {
            Some(i) => self.apply(vec![pend(j, EdgeKind::Jump)], Jump::Break(i)),
            // `break` outside any loop/switch (invalid code): leave the function.
            None => self.edge(j, EXIT, EdgeKind::Jump),
        }
        Vec::new()
    }

    #[inline(never)]
    fn continue_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let j = self.add_node(NodeKind::Jump, node.byte_range());
        self.connect(&preds, j);
        let label = self.jump_label(node);
        let target = self.ctx.iter().rposition(|c| match (c, label.as_deref()) {
            (Ctx::Loop { .. }, None) => true,
            (Ctx::Loop { label: Some(l), .. }, Some(want)) => l == want,
            _ => false,
        });
        match target {
            Some(i) => self.apply(vec![pend(j, EdgeKind::Jump)], Jump::Continue(i)),
            None => self.edge(j, EXIT, EdgeKind::Jump),
        }
        Vec::new()
    }

    #[inline(never)]
    fn goto_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let j = self.add_node(NodeKind::Jump, node.byte_range());
        self.connect(&preds, j);
        let label = node
            .child_by_field_name(field::LABEL)
            .map(|l| self.text(l).to_string())
            .unwrap_or_default();
        self.gotos.push((j, label));
        Vec::new()
    }

    #[inline(never)]
    fn throw_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let j = self.add_node(NodeKind::Jump, node.byte_range());
        self.connect(&preds, j);
        let ty = self.thrown_type(node);
        self.apply(vec![pend(j, EdgeKind::Exception)], Jump::Throw(ty));
        Vec::new()
    }

    #[inline(never)]
    fn return_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let r = self.add_node(NodeKind::Return, node.byte_range());
        self.connect(&preds, r);
        self.apply(vec![pend(r, EdgeKind::Jump)], Jump::Return);
        Vec::new()
    }

    fn resolve_gotos(&mut self) {
        for (j, label) in std::mem::take(&mut self.gotos) {
            // A goto to an unknown label (invalid code) leaves the function.
            let target = self.labels.get(&label).copied().unwrap_or(EXIT);
            self.edge(j, target, EdgeKind::Jump);
        }
    }

    /// Where `jump` lands from the current position.
    fn resolve(&self, jump: &Jump) -> Dest {
        for (i, c) in self.ctx.iter().enumerate().rev() {
            match c {
                Ctx::Try {
                    handlers,
                    in_body,
                    finally,
                } => {
                    if let Jump::Throw(ty) = jump {
                        if *in_body {
                            if let Some(h) = pick_handler(handlers, ty.as_deref()) {
                                return Dest::Node(h);
                            }
                        }
                    }
                    if finally.is_some() {
                        return Dest::Finally(i);
                    }
                }
                Ctx::Loop { cont, .. } => match jump {
                    Jump::Break(t) if *t == i => return Dest::Breaks(i),
                    Jump::Continue(t) if *t == i => return Dest::Node(*cont),
                    _ => {}
                },
                Ctx::Switch { .. } | Ctx::Block { .. } => {
                    if *jump == Jump::Break(i) {
                        return Dest::Breaks(i);
                    }
                }
            }
        }
        Dest::Exit
    }

    fn apply(&mut self, preds: Vec<Pending>, jump: Jump) {
        let dest = self.resolve(&jump);
        self.apply_dest(preds, dest, jump);
    }

    fn apply_dest(&mut self, preds: Vec<Pending>, dest: Dest, jump: Jump) {
        match dest {
            Dest::Exit => self.connect(&preds, EXIT),
            Dest::Node(n) => self.connect(&preds, n),
            Dest::Breaks(i) => match self.ctx.get_mut(i) {
                Some(
                    Ctx::Loop { breaks, .. }
                    | Ctx::Switch { breaks, .. }
                    | Ctx::Block { breaks, .. },
                ) => breaks.extend(preds),
                _ => self.connect(&preds, EXIT),
            },
            Dest::Finally(i) => match self.ctx.get_mut(i) {
                Some(Ctx::Try {
                    finally: Some(fs), ..
                }) => {
                    fs.entries.extend(preds.iter().copied());
                    fs.entry_jumps
                        .extend(preds.iter().map(|p| (*p, jump.clone())));
                    if !fs.jumps.contains(&jump) {
                        fs.jumps.push(jump);
                    }
                }
                _ => self.connect(&preds, EXIT),
            },
        }
    }

    // ----- try --------------------------------------------------------------------------

    fn try_stmt(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let parts = self.try_head(node, preds);
        let mut normal = self.sub(parts.body, parts.entry);
        if let Some(Ctx::Try { in_body, .. }) = self.ctx.last_mut() {
            *in_body = false;
        }
        normal = self.sub(parts.else_block, normal);
        for (id, body) in parts.handlers {
            let handler_out = self.sub(body, vec![pend(id, EdgeKind::Fallthrough)]);
            normal.extend(handler_out);
        }
        let fs = match self.ctx.pop() {
            Some(Ctx::Try { finally, .. }) => finally,
            _ => None,
        };
        match (fs, parts.finally_block) {
            (Some(fs), Some(fb)) => self.finish_finally(fb, normal, fs),
            _ => normal,
        }
    }

    /// The try node, the resource node, the except nodes with their exception edges, and the
    /// try context (pushed).
    #[inline(never)]
    fn try_head(&mut self, node: Node<'t>, preds: Vec<Pending>) -> TryParts<'t> {
        let t = self.add_node(NodeKind::Try, node.byte_range());
        self.connect(&preds, t);
        let mut entry = vec![pend(t, EdgeKind::Fallthrough)];
        if let Some(res) = node.child_by_field_name(field::RESOURCES) {
            let r = self.add_node(NodeKind::Normal, res.byte_range());
            self.connect(&entry, r);
            entry = vec![pend(r, EdgeKind::Fallthrough)];
        }
        let mut parts = TryParts {
            entry,
            body: node.child_by_field_name(field::BODY),
            else_block: None,
            finally_block: None,
            handlers: Vec::new(),
        };
        let mut clauses = Vec::new();
        for c in named_children(node) {
            match c.kind() {
                kind::EXCEPT_CLAUSE | kind::CATCH_CLAUSE | kind::SEH_EXCEPT_CLAUSE => {
                    clauses.push(c)
                }
                kind::ELSE_CLAUSE => parts.else_block = clause_body(c),
                kind::FINALLY_CLAUSE | kind::SEH_FINALLY_CLAUSE => {
                    parts.finally_block = clause_body(c)
                }
                _ => {}
            }
        }
        let mut handlers = Vec::new();
        for h in clauses {
            let body = clause_body(h);
            let end = body.map(|b| b.start_byte()).unwrap_or(h.end_byte());
            let range = self.header(h.start_byte(), end);
            let id = self.add_node(NodeKind::Except, range);
            self.edge(t, id, EdgeKind::Exception);
            let (types, catch_all) = self.handler_types(h);
            handlers.push(Handler {
                node: id,
                types,
                catch_all,
            });
            parts.handlers.push((id, body));
        }
        self.ctx.push(Ctx::Try {
            handlers,
            in_body: true,
            finally: parts.finally_block.map(|_| FinallyState::default()),
        });
        parts
    }

    /// Builds the finally block once and routes its end to every continuation that entered it.
    fn finish_finally(
        &mut self,
        fb: Node<'t>,
        normal: Vec<Pending>,
        fs: FinallyState,
    ) -> Vec<Pending> {
        let before = self.nodes.len();
        let mut preds = normal.clone();
        preds.extend_from_slice(&fs.entries);
        let out = self.stmt(fb, preds);
        self.route_finally(before, normal, fs, out)
    }

    #[inline(never)]
    fn route_finally(
        &mut self,
        before: usize,
        normal: Vec<Pending>,
        fs: FinallyState,
        out: Vec<Pending>,
    ) -> Vec<Pending> {
        if self.nodes.len() == before {
            // An empty finally block: every exit goes on to its own continuation directly.
            for (p, j) in fs.entry_jumps {
                self.apply(vec![p], j);
            }
            return normal;
        }
        if out.is_empty() {
            // The finally block itself always leaves abruptly: nothing continues past it.
            return Vec::new();
        }
        let mut seen: Vec<Dest> = Vec::new();
        for j in fs.jumps {
            let dest = self.resolve(&j);
            let kind = if matches!(j, Jump::Throw(_)) {
                EdgeKind::Exception
            } else {
                EdgeKind::Jump
            };
            let preds = if seen.contains(&dest) {
                // Same destination: no second edge, but an outer finally still learns the jump.
                Vec::new()
            } else {
                seen.push(dest);
                out.iter()
                    .map(|p| {
                        pend(
                            p.from,
                            if p.kind == EdgeKind::Fallthrough {
                                kind
                            } else {
                                p.kind
                            },
                        )
                    })
                    .collect()
            };
            self.apply_dest(preds, dest, j);
        }
        if normal.is_empty() {
            Vec::new()
        } else {
            out
        }
    }

    /// Declared type names of a handler and whether it catches everything.
    fn handler_types(&self, h: Node<'_>) -> (Vec<String>, bool) {
        match h.kind() {
            kind::EXCEPT_CLAUSE => {
                let value = h.child_by_field_name(field::VALUE).or_else(|| {
                    named_children(h)
                        .into_iter()
                        .find(|c| !is_block_kind(c.kind()) && c.kind() != kind::AS_PATTERN_TARGET)
                });
                let Some(mut v) = value else {
                    return (Vec::new(), true);
                };
                if v.kind() == kind::AS_PATTERN {
                    if let Some(inner) = first_named(v) {
                        v = inner;
                    }
                }
                let parts = match v.kind() {
                    kind::TUPLE
                    | kind::PARENTHESIZED_EXPRESSION
                    | kind::EXPRESSION_LIST
                    | kind::PATTERN_LIST => named_children(v),
                    _ => vec![v],
                };
                let types: Vec<String> = parts
                    .iter()
                    .filter_map(|p| simple_name(self.text(*p)))
                    .collect();
                let all = types
                    .iter()
                    .any(|t| t == "Exception" || t == "BaseException");
                (types, all)
            }
            kind::CATCH_CLAUSE => match self.lang {
                Language::Java => {
                    let ty = named_children(h)
                        .into_iter()
                        .find(|c| c.kind() == kind::CATCH_FORMAL_PARAMETER)
                        .and_then(|p| {
                            named_children(p)
                                .into_iter()
                                .find(|c| c.kind() == kind::CATCH_TYPE)
                        });
                    let Some(ty) = ty else {
                        return (Vec::new(), true);
                    };
                    let types: Vec<String> = named_children(ty)
                        .iter()
                        .filter_map(|t| simple_name(self.text(*t)))
                        .collect();
                    let all = types.iter().any(|t| t == "Exception" || t == "Throwable");
                    (types, all)
                }
                Language::C | Language::Cpp => {
                    let Some(params) = h.child_by_field_name(field::PARAMETERS) else {
                        return (Vec::new(), true);
                    };
                    if self.text(params).contains("...") {
                        return (Vec::new(), true);
                    }
                    let types = named_children(params)
                        .into_iter()
                        .filter_map(|p| p.child_by_field_name(field::TYPE))
                        .filter_map(|t| simple_name(self.text(t)))
                        .collect();
                    (types, false)
                }
                Language::Solidity => {
                    match named_children(h)
                        .into_iter()
                        .find(|c| c.kind() == kind::IDENTIFIER)
                    {
                        Some(id) => (vec![self.text(id).to_string()], false),
                        None => (Vec::new(), true),
                    }
                }
                _ => (Vec::new(), true),
            },
            _ => (Vec::new(), true),
        }
    }

    /// The simple type name of what a throw/raise/revert statement throws, when visible.
    fn thrown_type(&self, node: Node<'_>) -> Option<String> {
        let expr = match node.kind() {
            kind::RAISE_STATEMENT => fields(node)
                .into_iter()
                .find(|(f, _)| *f != Some("cause"))
                .map(|(_, n)| n),
            kind::REVERT_STATEMENT => {
                let mut e = node.child_by_field_name(field::ERROR)?;
                if e.kind() == kind::EXPRESSION {
                    e = first_named(e)?;
                }
                if e.kind() == kind::PARENTHESIZED_EXPRESSION {
                    return None;
                }
                Some(e)
            }
            _ => first_named(node),
        }?;
        let mut e = expr;
        for _ in 0..UNWRAP_LIMIT {
            let next = match e.kind() {
                kind::EXPRESSION => first_named(e),
                kind::CALL | kind::CALL_EXPRESSION => e.child_by_field_name(field::FUNCTION),
                kind::OBJECT_CREATION_EXPRESSION | kind::COMPOUND_LITERAL_EXPRESSION => {
                    e.child_by_field_name(field::TYPE)
                }
                kind::NEW_EXPRESSION => e
                    .child_by_field_name(field::CONSTRUCTOR)
                    .or_else(|| e.child_by_field_name(field::TYPE)),
                kind::IDENTIFIER
                | kind::TYPE_IDENTIFIER
                | kind::ATTRIBUTE
                | kind::MEMBER_EXPRESSION
                | kind::QUALIFIED_IDENTIFIER
                | kind::SCOPED_IDENTIFIER
                | kind::SCOPED_TYPE_IDENTIFIER
                | kind::FIELD_EXPRESSION
                | kind::GENERIC_TYPE
                | kind::TEMPLATE_TYPE
                | kind::TEMPLATE_FUNCTION
                | kind::DOTTED_NAME => return simple_name(self.text(e)),
                _ => None,
            };
            e = next?;
        }
        None
    }

    // ----- with -------------------------------------------------------------------------

    fn py_with(&mut self, node: Node<'t>, preds: Vec<Pending>) -> Vec<Pending> {
        let h = self.with_header(node, preds);
        let body = node.child_by_field_name(field::BODY);
        self.sub(body, vec![pend(h, EdgeKind::Fallthrough)])
    }

    /// Python `with` header node: `call` when the first item's value is a call.
    #[inline(never)]
    fn with_header(&mut self, node: Node<'t>, preds: Vec<Pending>) -> usize {
        let end = node
            .child_by_field_name(field::BODY)
            .map(|b| b.start_byte())
            .unwrap_or(node.end_byte());
        let range = self.header(node.start_byte(), end);
        let value = named_children(node)
            .into_iter()
            .find(|c| c.kind() == kind::WITH_CLAUSE)
            .and_then(|c| {
                named_children(c)
                    .into_iter()
                    .find(|i| i.kind() == kind::WITH_ITEM)
            })
            .and_then(|i| i.child_by_field_name(field::VALUE))
            .map(|v| {
                if v.kind() == kind::AS_PATTERN {
                    first_named(v).unwrap_or(v)
                } else {
                    v
                }
            });
        let kind = match value {
            Some(v) if self.is_call(v) => NodeKind::Call,
            _ => NodeKind::Normal,
        };
        let h = self.add_node(kind, range);
        self.connect(&preds, h);
        h
    }

    // ----- finishing --------------------------------------------------------------------

    /// Records one error per line holding ERROR/MISSING nodes in the body that was not
    /// already reported as an ERROR statement (walks only subtrees containing errors;
    /// iterative; at most [`MAX_SYNTAX_ERRORS`] lines).
    fn check_syntax(&mut self, body: Node<'_>) {
        if !body.has_error() {
            return;
        }
        let mut lines: BTreeSet<usize> = self
            .errors
            .iter()
            .filter(|e| e.message == SYNTAX_ERROR)
            .map(|e| e.line)
            .collect();
        let mut cursor = body.walk();
        let mut steps = 0usize;
        'walk: loop {
            steps += 1;
            if steps.is_multiple_of(4096) && self.poll_cancel() {
                break;
            }
            let n = cursor.node();
            let is_error = n.is_error() || n.is_missing();
            if is_error {
                let line = self.file.line_of(n.start_byte());
                if lines.len() >= MAX_SYNTAX_ERRORS {
                    break;
                }
                if lines.insert(line) {
                    self.record_error(line, SYNTAX_ERROR.to_string());
                }
            }
            if !is_error && n.has_error() && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node() == body {
                    break 'walk;
                }
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        self.errors.sort_by_key(|e| e.line);
    }

    /// Drops unreachable nodes and lays the graph out: entry, the rest in document order, exit.
    fn finish(self) -> (Cfg, Vec<Unreachable>) {
        let n = self.nodes.len();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(f, t, _) in &self.edges {
            if let Some(a) = adj.get_mut(f) {
                a.push(t);
            }
        }
        let mut reachable = vec![false; n];
        let mut stack = vec![ENTRY];
        while let Some(i) = stack.pop() {
            match reachable.get_mut(i) {
                Some(r) if !*r => *r = true,
                _ => continue,
            }
            if let Some(next) = adj.get(i) {
                stack.extend(next.iter().copied());
            }
        }
        let mut unreachable: Vec<Unreachable> = (EXIT + 1..n)
            .filter(|&i| !reachable[i] && !self.implicit.contains(&i))
            .filter_map(|i| self.nodes.get(i))
            .filter(|w| !(w.kind == NodeKind::Jump && w.text.trim_start().starts_with("break")))
            .map(|w| Unreachable {
                line: w.line,
                end_line: self
                    .file
                    .line_of(w.range.end.saturating_sub(1).max(w.range.start)),
                range: w.range.clone(),
                kind: w.kind,
                text: w.text.clone(),
            })
            .collect();
        unreachable.sort_by_key(|u| (u.range.start, u.range.end));
        let mut order: Vec<usize> = (EXIT + 1..n).filter(|&i| reachable[i]).collect();
        order.sort_by_key(|&i| (self.nodes[i].range.start, i));
        let mut layout = Vec::with_capacity(order.len() + 2);
        layout.push(ENTRY);
        layout.extend(order);
        layout.push(EXIT);
        let mut graph: Graph<CfgNode, EdgeKind> =
            Graph::with_capacity(layout.len(), self.edges.len());
        let mut index: Vec<Option<NodeIndex>> = vec![None; n];
        let mut nodes: Vec<Option<CfgNode>> = self.nodes.into_iter().map(Some).collect();
        for i in layout {
            if let Some(w) = nodes.get_mut(i).and_then(Option::take) {
                index[i] = Some(graph.add_node(w));
            }
        }
        for &(f, t, k) in &self.edges {
            if !reachable.get(f).copied().unwrap_or(false) {
                continue;
            }
            if let (Some(Some(a)), Some(Some(b))) = (index.get(f), index.get(t)) {
                graph.add_edge(*a, *b, k);
            }
        }
        let exit = NodeIndex::new(graph.node_count().saturating_sub(1));
        let cfg = Cfg {
            graph,
            entry: NodeIndex::new(0),
            exit,
            partial: self.partial,
            errors: self.errors,
        };
        (cfg, unreachable)
    }
}

/// The body block of a catch/except/finally/else clause.
fn clause_body(clause: Node<'_>) -> Option<Node<'_>> {
    clause.child_by_field_name(field::BODY).or_else(|| {
        named_children(clause)
            .into_iter()
            .rev()
            .find(|c| is_block_kind(c.kind()))
    })
}

/// Matching handler by simple type name, else the first catch-all, else the first handler.
fn pick_handler(handlers: &[Handler], ty: Option<&str>) -> Option<usize> {
    if let Some(ty) = ty {
        if let Some(h) = handlers.iter().find(|h| h.types.iter().any(|t| t == ty)) {
            return Some(h.node);
        }
    }
    handlers
        .iter()
        .find(|h| h.catch_all)
        .or_else(|| handlers.first())
        .map(|h| h.node)
}

/// Loops and switches: the statements a label can name.
fn is_labelable(kind: &str) -> bool {
    matches!(
        kind,
        kind::WHILE_STATEMENT
            | kind::FOR_STATEMENT
            | kind::ENHANCED_FOR_STATEMENT
            | kind::FOR_RANGE_LOOP
            | kind::FOR_IN_STATEMENT
            | kind::DO_STATEMENT
            | kind::DO_WHILE_STATEMENT
            | kind::SWITCH_STATEMENT
            | kind::SWITCH_EXPRESSION
    )
}

fn is_preproc_arm(kind: &str) -> bool {
    matches!(
        kind,
        kind::PREPROC_IF
            | kind::PREPROC_IFDEF
            | kind::PREPROC_ELSE
            | kind::PREPROC_ELIF
            | kind::PREPROC_ELIFDEF
    )
}

/// True when a preprocessor arm holds a `case` label of the enclosing switch (directly or in
/// a nested arm or case).
fn holds_case(node: Node<'_>, depth: usize) -> bool {
    depth < 32
        && named_children(node).into_iter().any(|c| {
            c.kind() == kind::CASE_STATEMENT
                || (is_preproc_arm(c.kind()) && holds_case(c, depth + 1))
        })
}

/// C/C++ switch bodies as a flat list: each `case_statement` (its statements after it), and
/// the contents of preprocessor arms that hold labels, in document order.
fn flatten_cases<'t>(nodes: Vec<Node<'t>>, out: &mut Vec<Node<'t>>, depth: usize) {
    for n in nodes {
        if n.kind() == kind::CASE_STATEMENT && depth < 32 {
            out.push(n);
            flatten_cases(children_except(n, &[field::VALUE]), out, depth + 1);
        } else if is_preproc_arm(n.kind()) && depth < 32 && holds_case(n, 0) {
            flatten_cases(
                children_except(n, &[field::CONDITION, field::NAME]),
                out,
                depth + 1,
            );
        } else {
            out.push(n);
        }
    }
}

/// Named, non-comment children except those in the given fields.
fn children_except<'t>(node: Node<'t>, skip: &[&str]) -> Vec<Node<'t>> {
    fields(node)
        .into_iter()
        .filter(|(f, _)| !f.is_some_and(|f| skip.contains(&f)))
        .map(|(_, n)| n)
        .collect()
}

/// One label group of a switch (or one Java arrow rule).
struct SwitchItem<'t> {
    /// Number of `case` edges into the group.
    labels: usize,
    stmts: Vec<Node<'t>>,
    is_default: bool,
    /// Java `case X -> ...` rule: no fall-through into or out of it.
    arrow: bool,
}

/// The pieces of a try statement, gathered before its parts are built.
struct TryParts<'t> {
    entry: Vec<Pending>,
    body: Option<Node<'t>>,
    else_block: Option<Node<'t>>,
    finally_block: Option<Node<'t>>,
    handlers: Vec<(usize, Option<Node<'t>>)>,
}
