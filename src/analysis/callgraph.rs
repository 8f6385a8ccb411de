//! Call graphs over one file or a workspace of files. (Interface fixed; builder in progress.)

use crate::syntax::{Cancel, ParsedFile};
use serde::Serialize;

/// A function as a call-graph endpoint. `file` is `None` for external (unresolved) callees.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FunctionRef {
    pub file: Option<String>,
    /// Qualified name (see `syntax::functions`), or the callee expression's name when external.
    pub name: String,
    /// Signature, to tell overloads apart; `None` for external callees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CallEdge {
    pub caller: FunctionRef,
    pub callee: FunctionRef,
    /// 1-based line of the call site.
    pub line: usize,
}

/// One input file of a call graph: its display path and parse.
pub struct SourceUnit<'a> {
    pub path: String,
    pub file: &'a ParsedFile,
}

/// Builds the call graph over all functions of the given files; edges sorted, deduplicated.
pub fn build_call_graph(units: &[SourceUnit<'_>], cancel: &Cancel) -> Vec<CallEdge> {
    let _ = (units, cancel);
    unimplemented!("call graph lands with the foundation work")
}
