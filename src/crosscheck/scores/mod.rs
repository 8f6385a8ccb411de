//! Gap scores comparing an LLM's answer with the deterministic reference. Every score lies in
//! [0, 1], higher is worse, and an answer passes when each score is at most its threshold.
//!
//! The source paper defines its scores in words only; the formulas in the submodules are this
//! project's operationalisation and are documented with worked examples.

pub mod ast;
pub mod callgraph;
pub mod cfg;
pub mod sets;

/// Scores are compared with thresholds with this tolerance, so that a gap that equals the
/// threshold in decimal arithmetic passes despite binary rounding (in floating point,
/// 0.1 + 0.2 is 0.30000000000000004).
pub const THRESHOLD_EPSILON: f64 = 1e-9;

/// `value <= threshold`, tolerant to floating-point rounding.
pub fn within(value: f64, threshold: f64) -> bool {
    value <= threshold + THRESHOLD_EPSILON
}
