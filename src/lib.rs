//! crosscheck: a language server and CLI that cross-checks LLM code analysis against
//! deterministic analysis. See ARCHITECTURE.md for the code map and invariants.
//!
//! Layers depend one way: `syntax` -> `analysis` -> (`llm`, `crosscheck`) -> `telemetry` ->
//! front ends (`lsp`, `cli`) -> `app` (the entry point that dispatches to them).

pub mod analysis;
pub mod app;
pub mod cli;
pub mod crosscheck;
pub mod eval;
pub mod exec;
pub mod llm;
pub mod lsp;
pub mod stats;
pub mod store;
pub mod syntax;
pub mod telemetry;
