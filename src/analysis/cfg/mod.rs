//! Control-flow graph per function: a syntactic, statement-level CFG built from the
//! tree-sitter tree (Python, Java, C, C++, Solidity, JavaScript and TypeScript).
//!
//! The graph is *syntactic* in McCabe's sense: conditions are never evaluated (`while True`,
//! `while (1)` and `for (;;)` still get their `false` edge), expressions are never split
//! (`&&`, `||`, `?:`, comprehensions, lambdas and Java switch *expressions* add no nodes), and
//! lambdas / nested functions / nested classes are separate functions whose bodies contribute
//! nothing here (a nested `def`/class statement is one `normal` node). The cyclomatic number
//! of a function is `E - N + 2` ([`Cfg::cyclomatic`]).
//!
//! # Graph layout
//!
//! * Node 0 is `entry`, the last node is `exit`; the other nodes are in document order (by
//!   start byte of their range, ties in construction order). Nodes unreachable from entry are
//!   dropped (code after `return`, a C `for` update that no path reaches, ...); entry and exit
//!   always exist, even when exit is unreachable (`L: goto L;`).
//! * Only `exit` has no successor. Parallel edges are kept, never deduplicated.
//! * Ranges: entry = the parameter list (`(a, b)`; an empty range at the function start when
//!   there is none); exit = an empty range at the function end; `branch`/`loop` = the condition
//!   expression with one level of parentheses removed (for-each loops: statement start to body
//!   start, so `for x in xs:` is covered; `for(;;)` without condition: the same header range);
//!   `except` = the clause header (`catch (IOException e)`, `except ValueError as e:`); assert /
//!   require = the statement; every other node = its statement. `line` is the 1-based line of
//!   the range start (entry: the function's first line, exit: its last line); `text` is the
//!   first line of the range, at most 80 characters, trailing whitespace removed.
//!
//! # Conventions (construct -> nodes / edges)
//!
//! | construct | nodes | edges |
//! |---|---|---|
//! | simple statement | one `call` node when its top-level expression (after stripping assignment, declaration, `await` and parentheses) is a call or object creation, else `normal` | `fallthrough` to the next statement |
//! | empty statement `;`, comments, `#define`/`#include`, Solidity `unchecked` keyword | none | - |
//! | plain block, `with` (JS), `synchronized`, `unchecked { }` | their statements inline, in document order | - |
//! | `#if`/`#ifdef` ... `#elif` ... `#else` ... `#endif` in a body | compile-time alternatives: every arm entered from the statement before, all arms' exits joined (without `#else`, also the path around the arms); no branch node | - |
//! | C/C++ iteration macro `FOREACH(x, list) { ... }` (a call missing its `;`, then a block) | a `loop` node for the call, the block as its body (zero or more times; `break`/`continue` its own) | `true`, `false`, `back` |
//! | `case` labels inside `#if` arms of a `switch` body | labels of that switch (their arms are opened into the body's label groups) | `case` |
//! | Python `with` | one `normal`/`call` header node (call when the first item's value is a call), then the body | `fallthrough` |
//! | `if` / `elif` / `else if` / `else` | one `branch` per condition | `true` to the then-part, `false` to the next `elif`/`else` or to the successor; an empty part passes the edge straight to the successor |
//! | `while`, for-each (`for x in`, `for (T x : xs)`, `for (auto x : xs)`, `for (x of xs)`) | `loop` node | `true` into the body, `back` from the body's normal end, `false` to the successor (Python: to the loop's `else:` block, which `break` skips) |
//! | C-style `for (init; cond; update)` | `normal` init node (if any), `loop` node, `normal` update node (if any) | init -> loop; `true` into the body; body end -> update -> `back` -> loop (no update: `back` from the body end); `false` out; `continue` -> update |
//! | `do body while (c)` | body, then a `loop` node for `c` | body end -> loop; `back` from the loop to the body's first node; `false` out; `continue` -> loop node |
//! | `break` / `continue` / `goto` | `jump` node | `jump` edge to the successor of the innermost (or labelled) loop/switch, to the loop node (or update node), to the labelled statement |
//! | C/C++ label `L: stmt` | a `normal` node for `L:`, then the statement | `fallthrough`; every `goto L` -> the label node |
//! | Java/JS label | no node; the label names the loop/switch/block for `break L`/`continue L` | - |
//! | `return` (also `co_return`) | `return` node | `jump` to exit, through `finally` when inside try-finally |
//! | `throw` / `raise` / Solidity `revert` | `jump` node | one `exception` edge: to the matching handler of the innermost try body (see below), else through `finally`, else to exit |
//! | Python/Java `assert`, C/C++ `assert(...)` statement, Solidity `require(...)` statement | `branch` node | `true` continues; `false` to exit (through `finally`) |
//! | switch (C, C++, JS, Java `case X:`) | `branch` node for the discriminant | one `case` edge per label (`default` included) to the first statement executed for it (empty labels fall through, giving parallel edges); groups fall through into the next; `break` -> successor; no `default`: one more `case` edge to the successor |
//! | Java arrow switch `case A, B -> ...` | `branch` node | one `case` edge per rule, no fall-through, `case` edge to the successor without `default` |
//! | Python `match` | `branch` node for the subject | one `case` edge per `case` clause, no fall-through; one `case` edge to the successor unless a clause is irrefutable (`case _:` or a bare capture `case x:`, without guard) |
//! | `try` / `catch` / `except` / `else` / `finally` | `try` node (the statement); Java try-with-resources: a `normal` node for the resource specification after it; one `except` node (clause header) per handler, followed by its body | `fallthrough` into the body; ONE `exception` edge from the try node to each handler; Python `else:` after the body's normal end; see *finally* |
//! | `finally` | built once (an empty finally block is transparent) | normal ends of body/else/handlers and abrupt exits (return, uncaught throw, failed assert, break/continue leaving the try) enter its first node; its last node(s) get one `fallthrough` edge to the normal successor (only if some normal end reached the finally) plus one edge per distinct *destination* of the abrupt exits routed through it (exit, a loop's successor, a loop node, an outer finally, an outer handler): `jump`, or `exception` for throws. A return and an uncaught throw both continue at exit: one edge. A finally that always leaves abruptly itself continues nowhere else |
//! | Solidity modifier placeholder `_;` / `emit` | `normal` / `call` node | `fallthrough` |
//! | ERROR node in a body | one `normal` node for the region; `partial = true`; error `syntax error in function body` | `fallthrough` |
//! | statement nested deeper than [`MAX_DEPTH`] | the whole statement is one `normal` node; `partial = true`; error recorded | `fallthrough` |
//!
//! Throw targets: inside a try *body* with handlers, a throw goes to the first handler whose
//! declared type's simple name equals the thrown type's name (`throw new Foo(..)`,
//! `raise Foo(..)`, `throw ns::Foo(..)`, `revert Foo(..)`), else to the first catch-all handler
//! (`except:`, `except Exception`/`BaseException`, `catch (...)`, Java `catch (Exception|
//! Throwable e)`, any JS catch, Solidity `catch (bytes memory)` / `catch {}`), else to the first
//! handler. A throw in a handler, an `else:` block or a `finally` is not caught by its own try.
//!
//! Edge kinds entering a loop node from the end of its body: `fallthrough` ends become `back`;
//! decision edges (`true`/`false`/`case`) keep their kind. Same for edges leaving a finally
//! towards abrupt continuations (`fallthrough` becomes `jump`/`exception`).
//!
//! Further choices: only Solidity `require(...)` is an assertion (`assert(...)` there is a
//! plain call); a C++ `if`/`switch` init statement is part of the condition node; a
//! `break`/`continue` outside any loop or a `goto` to an unknown label (invalid code) jumps to
//! exit; Java `case A, B:` in the classic form is one label. Hand-counting rule that follows
//! from all this: cyclomatic = 1 + Σ over reachable non-exit nodes of (out-degree - 1), i.e.
//! +1 per branch/loop/assert node, +k-1 per switch/match with k case edges, +h per try with h
//! handlers, +c-1 per last node of a finally with c continuations.
//!
//! # Robustness
//!
//! The builder recurses over statements only, to at most [`MAX_DEPTH`] levels (about 2 KB of
//! stack per level in debug builds); expressions are never recursed into. `else if` chains
//! are walked iteratively and cost no depth. [`Cancel`] is polled once per statement.

mod builder;
#[cfg(test)]
mod tests;

use crate::syntax::functions::Function;
use crate::syntax::parse::SourceError;
use crate::syntax::{Cancel, ParsedFile};
use petgraph::graph::{Graph, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::Serialize;

/// Statements nested deeper than this are collapsed into one `normal` node.
pub const MAX_DEPTH: usize = builder::MAX_DEPTH;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Entry,
    Exit,
    Branch,
    Loop,
    Call,
    Return,
    Try,
    Except,
    Jump,
    Normal,
}

impl NodeKind {
    /// The snake_case name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Entry => "entry",
            NodeKind::Exit => "exit",
            NodeKind::Branch => "branch",
            NodeKind::Loop => "loop",
            NodeKind::Call => "call",
            NodeKind::Return => "return",
            NodeKind::Try => "try",
            NodeKind::Except => "except",
            NodeKind::Jump => "jump",
            NodeKind::Normal => "normal",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    True,
    False,
    Fallthrough,
    Back,
    Exception,
    Jump,
    Case,
}

impl EdgeKind {
    /// The snake_case name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::True => "true",
            EdgeKind::False => "false",
            EdgeKind::Fallthrough => "fallthrough",
            EdgeKind::Back => "back",
            EdgeKind::Exception => "exception",
            EdgeKind::Jump => "jump",
            EdgeKind::Case => "case",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CfgNode {
    pub kind: NodeKind,
    /// 1-based line where the node's statement (or condition) starts.
    pub line: usize,
    /// Byte range of the statement/condition in the file (entry: the parameter list, exit: an
    /// empty range at the function end).
    #[serde(skip)]
    pub range: std::ops::Range<usize>,
    /// Short source text of the node (first line, at most 80 characters).
    pub text: String,
}

/// A function's control-flow graph: exactly one entry and one exit node, every other node
/// reachable from entry.
#[derive(Debug, Clone)]
pub struct Cfg {
    pub graph: Graph<CfgNode, EdgeKind>,
    pub entry: NodeIndex,
    pub exit: NodeIndex,
    /// True when part of the body could not be analysed (syntax errors, depth limit, cancel).
    pub partial: bool,
    pub errors: Vec<SourceError>,
}

impl Cfg {
    /// McCabe's cyclomatic number E - N + 2.
    pub fn cyclomatic(&self) -> i64 {
        self.graph.edge_count() as i64 - self.graph.node_count() as i64 + 2
    }

    /// Outgoing edges of `n` in construction order (the order of the graph's edge indices).
    pub fn successors(&self, n: NodeIndex) -> Vec<(NodeIndex, EdgeKind)> {
        let mut out: Vec<(usize, NodeIndex, EdgeKind)> = self
            .graph
            .edges_directed(n, Direction::Outgoing)
            .map(|e| (e.id().index(), e.target(), *e.weight()))
            .collect();
        out.sort_by_key(|x| x.0);
        out.into_iter().map(|(_, t, k)| (t, k)).collect()
    }

    /// Incoming edges of `n` in construction order.
    pub fn predecessors(&self, n: NodeIndex) -> Vec<(NodeIndex, EdgeKind)> {
        let mut out: Vec<(usize, NodeIndex, EdgeKind)> = self
            .graph
            .edges_directed(n, Direction::Incoming)
            .map(|e| (e.id().index(), e.source(), *e.weight()))
            .collect();
        out.sort_by_key(|x| x.0);
        out.into_iter().map(|(_, s, k)| (s, k)).collect()
    }

    /// True when exit can be reached from entry (false for e.g. `L: goto L;`).
    pub fn exit_reachable(&self) -> bool {
        self.reachable()
            .get(self.exit.index())
            .copied()
            .unwrap_or(false)
    }

    fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.graph.node_count()];
        let mut stack = vec![self.entry];
        while let Some(n) = stack.pop() {
            match seen.get_mut(n.index()) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            stack.extend(self.graph.neighbors_directed(n, Direction::Outgoing));
        }
        seen
    }

    /// Checks the shape invariants and returns every violation found (empty = well-formed):
    /// entry is node 0 and exit the last node, exactly one node of each of those kinds, every
    /// node except exit reachable from entry (exit may be unreachable, e.g. in an endless
    /// loop without exit edge), and only exit without successors.
    pub fn shape_violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let n = self.graph.node_count();
        if n < 2 {
            v.push(format!("only {n} nodes"));
            return v;
        }
        if self.entry.index() != 0 {
            v.push(format!("entry is node {}", self.entry.index()));
        }
        if self.exit.index() != n - 1 {
            v.push(format!("exit is node {} of {n}", self.exit.index()));
        }
        let count = |k: NodeKind| self.graph.node_weights().filter(|w| w.kind == k).count();
        for k in [NodeKind::Entry, NodeKind::Exit] {
            if count(k) != 1 {
                v.push(format!("{} {} nodes", count(k), k.name()));
            }
        }
        let seen = self.reachable();
        for idx in self.graph.node_indices() {
            let w = &self.graph[idx];
            if idx != self.exit && !seen.get(idx.index()).copied().unwrap_or(false) {
                v.push(format!(
                    "node {} ({} line {}) unreachable",
                    idx.index(),
                    w.kind.name(),
                    w.line
                ));
            }
            let out = self.graph.edges_directed(idx, Direction::Outgoing).count();
            if idx != self.exit && out == 0 {
                v.push(format!(
                    "node {} ({} line {}) has no successor",
                    idx.index(),
                    w.kind.name(),
                    w.line
                ));
            }
            if idx == self.exit && out != 0 {
                v.push("exit has successors".to_string());
            }
        }
        v
    }

    /// Graphviz rendering (deterministic: nodes and edges in index order).
    pub fn to_dot(&self) -> String {
        fn esc(s: &str) -> String {
            s.replace('\\', "\\\\").replace('"', "\\\"")
        }
        let mut out = String::from("digraph cfg {\n  node [shape=box, fontname=\"monospace\"];\n");
        for idx in self.graph.node_indices() {
            let w = &self.graph[idx];
            out.push_str(&format!(
                "  n{} [label=\"{} L{}: {}\"];\n",
                idx.index(),
                w.kind.name(),
                w.line,
                esc(&w.text)
            ));
        }
        for e in self.graph.edge_references() {
            out.push_str(&format!(
                "  n{} -> n{} [label=\"{}\"];\n",
                e.source().index(),
                e.target().index(),
                e.weight().name()
            ));
        }
        out.push_str("}\n");
        out
    }
}

/// Builds the CFG of one function. Pure and deterministic; never panics; polls `cancel`
/// once per statement and returns a partial (still well-formed) graph when it is set.
pub fn build_cfg(file: &ParsedFile, func: &Function<'_>, cancel: &Cancel) -> Cfg {
    builder::build(file, func, cancel)
}

/// A statement node the builder made but dropped because no path from entry reaches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreachable {
    /// 1-based first and last line of the node's range.
    pub line: usize,
    pub end_line: usize,
    #[serde(skip)]
    pub range: std::ops::Range<usize>,
    pub kind: NodeKind,
    /// First line of the node's text (as in [`CfgNode::text`]).
    pub text: String,
}

/// [`build_cfg`], plus the statements dropped as unreachable, in document order. Two kinds
/// of dropped nodes are not listed: the update of a C-style `for` whose body never completes
/// (`for (..; ..; i++) { return x; }`), and `break` jumps (the common `return x; break;` in a
/// `switch` case). Nested statements of a dropped compound statement are listed one by one.
pub fn build_cfg_with_unreachable(
    file: &ParsedFile,
    func: &Function<'_>,
    cancel: &Cancel,
) -> (Cfg, Vec<Unreachable>) {
    builder::build_with_unreachable(file, func, cancel)
}
