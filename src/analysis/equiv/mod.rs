//! Equivalence of two functions with evidence: a normalisation proof ([`normal`]), inputs for
//! differential testing ([`inputs`], from the signatures in [`types`]) and the comparison of
//! their results ([`value`]); whole programs' inputs and outputs ([`program`]). Running the functions is the front end's job (`cli::equiv`): this
//! module stays pure and deterministic.

mod hazards;
pub mod inputs;
pub mod lower;
pub mod mutant;
pub mod normal;
pub mod oldc;
pub mod program;
pub mod reads;
pub mod slice;
pub mod smt;
pub mod types;
pub mod value;

use crate::syntax::Language;

/// The languages equivalence checks (functions and whole programs): Python, Java, C and C++.
/// The one list the proof, the harness, the program runner and the editor's code action consult;
/// the match names every language, so a new one is a decision here, not a silent default.
pub fn supports(language: Language) -> bool {
    match language {
        Language::Python | Language::Java | Language::C | Language::Cpp => true,
        Language::JavaScript | Language::TypeScript | Language::Solidity => false,
    }
}

use serde::Serialize;

/// The verdict of `crosscheck equiv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Proved (normalisation).
    Equivalent,
    /// Refuted by an executed counterexample.
    NotEquivalent,
    /// The bounded symbolic check found no difference within its bounds (loops unrolled, list
    /// lengths, call depth), and the trials found none either.
    BoundedEquivalent,
    /// Many trials found no difference.
    LikelyEquivalent,
    Unknown,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::NotEquivalent => "not_equivalent",
            Verdict::BoundedEquivalent => "bounded_equivalent",
            Verdict::LikelyEquivalent => "likely_equivalent",
            Verdict::Unknown => "unknown",
        }
    }

    /// How strongly the verdict says "equivalent" (proof 3, bounded 2, trials 1, else 0): the
    /// weakest of several comparisons is the one to report.
    pub fn strength(self) -> u8 {
        match self {
            Verdict::Equivalent => 3,
            Verdict::BoundedEquivalent => 2,
            Verdict::LikelyEquivalent => 1,
            Verdict::NotEquivalent | Verdict::Unknown => 0,
        }
    }
}
