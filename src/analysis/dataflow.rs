//! Reaching definitions, def-use chains and transitive data dependency per function.
//! (Interface fixed; analysis in progress.)

use crate::syntax::functions::Function;
use crate::syntax::parse::SourceError;
use crate::syntax::{Cancel, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};

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

#[derive(Debug, Clone, Default)]
pub struct DataFlow {
    /// Definition -> lines (1-based) of the uses it reaches.
    pub def_use: BTreeMap<Def, BTreeSet<usize>>,
    /// Variable -> every variable it depends on, transitively (`"c": ["a", "b"]`).
    pub dependencies: BTreeMap<String, BTreeSet<String>>,
    pub partial: bool,
    pub errors: Vec<SourceError>,
}

pub fn analyze_data_flow(file: &ParsedFile, func: &Function<'_>, cancel: &Cancel) -> DataFlow {
    let _ = (file, func, cancel);
    unimplemented!("data dependency lands with the foundation work")
}
