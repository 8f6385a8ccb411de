//! Cross-checking an LLM's analysis against the deterministic reference ("Layer 1" of the
//! research notes): the LLM's answer is read into the same normalised form as the reference
//! and scored; the scores decide pass/fail and are reported as telemetry.
//!
//! * [`llm_ast`] reads an LLM's JSON AST answer into a [`NormNode`](crate::syntax::normalize::NormNode).
//! * [`scores`] holds the per-task gap scores ([`scores::ast`] for ASTs).
//!
//! Everything here is pure, synchronous and deterministic, and never panics on any input.

pub mod llm_ast;
pub mod record;
pub mod scores;
