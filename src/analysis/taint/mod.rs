//! Taint analysis: can data from a *source* (user input, the network, the environment,
//! transaction data) reach a *sink* (a shell, a SQL statement, a file path, an HTML response,
//! an ether transfer) without passing a *sanitizer*? Interprocedural, over one file or a
//! workspace of files, for Python, Java, C, C++ and Solidity.
//!
//! # Specifications
//!
//! Sources, sinks, sanitizers and propagators are data ([`spec`]): one TOML file per
//! language, bundled in `specs/`, extended with [`TaintSpec::from_toml`] and
//! [`TaintSpec::merge`] (each rule keeps its [`Provenance`]).
//!
//! # Engine
//!
//! * **Per function**, a forward abstract interpretation over the function's CFG
//!   ([`crate::analysis::cfg`]): the state maps variables to abstract values made of a
//!   taint (a set of labels, each with the sink kinds it was sanitised for and a trail of the
//!   lines it passed), a constant (integers, characters, strings, booleans, null) and, for
//!   local collections created in the function, their elements by constant index or key.
//!   Locals are updated strongly; branches whose condition folds to a constant
//!   (`if ((7 * 42) - num > 200)`), ternaries and `switch` on a constant only follow the
//!   feasible arm; `list.get(1)` after `list.remove(0)` and `map.get("keyB")` read the
//!   element actually stored. After a few visits of a loop head, states are widened
//!   (constants and element structure dropped), so the fixpoint is reached quickly.
//! * **Values flow** through assignments (tuple-wise when shapes agree), string building
//!   (`+`, f-strings, `%`, `format`, `StringBuilder.append`), containers (untracked containers
//!   are field- and index-insensitive), returns, parameters and out-arguments. A call to a
//!   function outside the workspace returns the taint of its receiver and arguments, unless
//!   a sanitizer says otherwise; propagators add flows into receivers and arguments
//!   (`list.add(x)`, `strcpy(dst, src)`). Comparisons and boolean operators yield clean
//!   values (implicit flows are not tracked).
//! * **Fields and globals**: `self.f`/`this.f`, Java/C++/Solidity fields, Python module
//!   variables and C globals live in a workspace store keyed by class (or file) and name,
//!   flow-insensitively across functions (strong updates within one function). When the
//!   store changes, the functions that read it are analysed again (a few rounds at most).
//! * **Interprocedural**: each function gets a summary computed with symbolic labels for its
//!   parameters: the return value, the parameters it mutates (C out-parameters, appended
//!   lists), global writes, sink hits and calls. Callers substitute their arguments into
//!   callee summaries (callees are analysed first; recursion is iterated). The concrete taint
//!   of every parameter is then propagated over the call sites to a fixpoint, which turns
//!   symbolic sink hits into flows and yields the tainted variables of callees. Calls are
//!   resolved with the workspace call graph when one is given, otherwise (and for module
//!   top-level code) by name: same class, same file, Python imports, declared receiver types.
//! * **Demand**: only functions that mention a source (a quick token scan), have source
//!   parameters (C `main`, public/external Solidity functions), or call such functions
//!   transitively, plus their callees, are interpreted.
//! * **C/C++ pointers**: when a points-to result is given, reading a pointer includes the
//!   taint of the local variables it may point to, and writing through it taints them.
//!
//! # Output
//!
//! A [`TaintFlow`] per (source, sink) pair, with the intermediate lines it passed; flows whose
//! every path is sanitised for the sink's kind are kept apart in
//! [`TaintResult::sanitized_flows`] (the `analyze` report lists unsanitised flows only), and
//! the tainted variables of each file.
//!
//! # Limits
//!
//! Expressions nested deeper than [`MAX_EXPR_DEPTH`] are evaluated coarsely; each function
//! has a work budget; walks outside CFGs are iterative and bounded; [`Cancel`] is polled.
//! Everything is ordered (`BTreeMap`/`BTreeSet`), so output is deterministic. Not modelled:
//! implicit flows, reflection, aliasing between Java/Python objects other than through
//! fields, path-sensitive correlations between non-constant conditions, and the contents of
//! library code.

mod engine;
mod interp;
pub mod spec;
mod syntax;
mod value;

pub use engine::TaintMemo;
pub use interp::MAX_EXPR_DEPTH;
pub use spec::{Provenance, SpecError, TaintSpec, TaintSpecs, Trust};

use crate::analysis::callgraph::{CallEdge, EdgeView, SourceUnit};
use crate::analysis::pointsto::PointsTo;
use crate::syntax::Cancel;
use serde::Serialize;
use std::collections::BTreeMap;

/// One end of a flow.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct FlowEnd {
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// Source: the call or member (`input(...)`, `msg.sender`); sink: the call's first line.
    pub text: String,
    /// Source kind (`user_input`, `web_request`, ...) or sink kind (`sql`, `command`, ...).
    pub kind: String,
}

/// An intermediate line a flow passed (assignment, call, return).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PathStep {
    pub file: String,
    pub line: usize,
}

/// Tainted data from `source` reaching `sink`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaintFlow {
    pub source: FlowEnd,
    pub sink: FlowEnd,
    /// Intermediate steps in order (source and sink lines excluded).
    pub path: Vec<PathStep>,
    /// True when every path is sanitised for the sink's kind.
    pub sanitized: bool,
    /// Rule id in [`crate::analysis::rules`].
    pub rule: String,
    /// The trust class of the source's spec row.
    pub trust: Trust,
}

/// A variable holding tainted data after an assignment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct TaintedVariable {
    /// Qualified function name; `None` for module-level (global) code.
    pub function: Option<String>,
    pub var: String,
    pub line: usize,
}

/// A problem met while analysing (depth limit, budget, cancellation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaintError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// The result of a taint analysis run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TaintResult {
    /// Unsanitised flows, sorted by sink then source.
    pub flows: Vec<TaintFlow>,
    /// Flows sanitised for their sink's kind on every path.
    pub sanitized_flows: Vec<TaintFlow>,
    /// File -> tainted variables, sorted by line.
    pub tainted_variables: BTreeMap<String, Vec<TaintedVariable>>,
    pub partial: bool,
    pub errors: Vec<TaintError>,
    /// How much work the run did.
    #[serde(skip)]
    pub stats: TaintStats,
}

/// Work counters of one run (for benchmarks and tests of the demand-driven strategy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaintStats {
    /// Functions (and module bodies) in units with a specification.
    pub functions: usize,
    /// Functions that mention a source or have source parameters.
    pub seeds: usize,
    /// Function interpretations performed (all rounds and passes).
    pub function_analyses: usize,
    /// Rounds over the global store.
    pub rounds: usize,
}

impl TaintResult {
    /// Tainted variables of one file.
    pub fn tainted_variables_for(&self, file: &str) -> &[TaintedVariable] {
        self.tainted_variables
            .get(file)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Analyses a workspace. `call_graph` (edges from [`crate::analysis::callgraph`]) resolves
/// calls inside functions when given; `points_to` adds C/C++ pointer aliasing.
pub fn analyze_taint(
    units: &[SourceUnit<'_>],
    call_graph: Option<&[CallEdge]>,
    points_to: Option<&PointsTo>,
    specs: &TaintSpecs,
    cancel: &Cancel,
) -> TaintResult {
    analyze_taint_with(
        units,
        call_graph.map(EdgeView::from),
        points_to,
        specs,
        None,
        cancel,
    )
}

/// [`analyze_taint`] over a call graph in chunks, reusing the per-function scans of the
/// previous run that `memo` kept (the editor's workspace analysis after an edit); the result
/// is the same as without the memo.
pub fn analyze_taint_with(
    units: &[SourceUnit<'_>],
    call_graph: Option<EdgeView<'_>>,
    points_to: Option<&PointsTo>,
    specs: &TaintSpecs,
    memo: Option<&mut TaintMemo>,
    cancel: &Cancel,
) -> TaintResult {
    engine::run(units, call_graph, points_to, specs, memo, cancel)
}

/// Convenience: one file with the built-in specifications, no call graph.
pub fn analyze_file(path: &str, file: &crate::syntax::ParsedFile, cancel: &Cancel) -> TaintResult {
    analyze_file_with(path, file, None, cancel)
}

/// [`analyze_file`] reusing the per-function scans of the previous run over the same file
/// (the editor's per-edit analysis); the result is the same as without the memo.
pub fn analyze_file_with(
    path: &str,
    file: &crate::syntax::ParsedFile,
    memo: Option<&mut TaintMemo>,
    cancel: &Cancel,
) -> TaintResult {
    let units = [SourceUnit {
        path: path.to_string(),
        file,
    }];
    engine::run(
        &units,
        None,
        None,
        TaintSpecs::builtin_shared(),
        memo,
        cancel,
    )
}
