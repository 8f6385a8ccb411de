//! Running user code on the user's behalf, below both front ends: the sandbox ([`sandbox`]),
//! per-language harnesses ([`harness`]), the equivalence evidence chain ([`equiv`]), whole
//! programs run on standard input ([`program`]) and the
//! classification of surviving mutants ([`mutants`]). The pure parts (normalisation, inputs,
//! value comparison, diffs) live in `analysis::equiv`; this layer spawns compilers and
//! interpreters, so it is never called from a pure layer. Whether running code is allowed at
//! all is the caller's decision (the CLI: the user asked; the language server: only with the
//! user's own setting in a trusted workspace).

pub mod equiv;
pub mod harness;
pub mod mutants;
pub mod program;
pub mod sandbox;
