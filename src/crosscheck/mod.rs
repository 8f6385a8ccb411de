//! Cross-checking an LLM's analysis against the deterministic reference ("Layer 1" of the
//! research notes): the LLM's answer is read into the same normalised form as the reference
//! and scored; the scores decide pass/fail and are reported as telemetry.
//!
//! * [`llm_ast`] reads an LLM's JSON AST answer into a [`NormNode`](crate::syntax::normalize::NormNode).
//! * [`scores`] holds the per-task gap scores ([`scores::ast`] for ASTs).
//!
//! Everything here is pure, synchronous and deterministic, and never panics on any input.

pub mod answers;
pub mod cache;
pub mod consistency;
pub mod engine;
pub mod facts;
pub mod hash;
pub mod llm_ast;
pub mod memory;
pub mod names;
pub mod prompts;
pub mod record;
pub mod scores;
pub mod task;
pub mod tier;
