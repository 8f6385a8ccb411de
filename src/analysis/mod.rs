//! Deterministic analyses over the syntax layer: control-flow graphs, call graphs and data
//! dependency. Pure, synchronous and deterministic (architecture invariant 2): no I/O, no
//! clock, no randomness; long loops poll a [`Cancel`](crate::syntax::Cancel) flag; broken or
//! hostile input yields partial results plus errors, never a panic.

pub mod callgraph;
pub mod cfg;
pub mod constfmt;
pub mod dataflow;
pub mod equiv;
pub mod filerole;
pub mod findings;
pub mod flaky;
pub mod pointsto;
pub mod report;
pub mod rules;
pub mod sarif;
pub mod suppress;
pub mod taint;
