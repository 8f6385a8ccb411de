//! Equivalence of two functions with evidence: a normalisation proof ([`normal`]), inputs for
//! differential testing ([`inputs`], from the signatures in [`types`]) and the comparison of
//! their results ([`value`]); whole programs' inputs and outputs ([`program`]). Running the functions is the front end's job (`cli::equiv`): this
//! module stays pure and deterministic.

pub mod inputs;
pub mod mutant;
pub mod normal;
pub mod program;
pub mod types;
pub mod value;

use serde::Serialize;

/// The verdict of `crosscheck equiv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Proved (normalisation).
    Equivalent,
    /// Refuted by an executed counterexample.
    NotEquivalent,
    /// Many trials found no difference.
    LikelyEquivalent,
    Unknown,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::NotEquivalent => "not_equivalent",
            Verdict::LikelyEquivalent => "likely_equivalent",
            Verdict::Unknown => "unknown",
        }
    }
}
