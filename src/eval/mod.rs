//! The evaluation harness behind `crosscheck eval`: the research notes' analysis tasks run over
//! public data sets (and a documented JSONL format of our own), with the paper's metrics for
//! three columns side by side: the deterministic analyzer alone, the LLM alone, and the hybrid
//! (the product's rule: an LLM answer never confirms anything on its own).
//!
//! - [`adapters`]: one reader per data set, each producing [`EvalItem`]s with gold labels.
//! - [`labels`]: the data sets' own labels (OWASP verdicts, SecuriBench sink lines, PyT
//!   counts, PTABen alias assertions) and how answers are scored against them.
//! - [`run`]: asks the configured client(s) through the cross-check [`Engine`] (cache, samples,
//!   tiers), with a worker pool, a token budget, and resumable per-item results
//!   (`OUT/results.jsonl`, one flushed line per item).
//! - [`metrics`]: per task and column, the paper's metric (pass rate, per-project macro F1,
//!   mean Jaccard, accuracy, macro F1, accuracy split by label with the decision gap), agreement
//!   coefficients with bootstrap intervals and strategy ablations with McNemar's test, all from
//!   [`crate::stats`].
//! - [`report`]: `report.md`, a self-contained `report.html` with inline SVG charts drawn with
//!   `plotters`, and `results.csv`.
//! - [`paper`]: the papers' best figures, shown beside ours.
//!
//! This module reads files and writes the output directory; it never speaks HTTP itself (it
//! is handed `Arc<dyn LlmClient>`s) and never prints to stdout.
//!
//! [`Engine`]: crate::crosscheck::engine::Engine

pub mod adapters;
pub mod charts;
pub mod labels;
pub mod metrics;
pub mod paper;
pub mod report;
pub mod run;

use crate::crosscheck::task::Task;
use crate::syntax::Language;
use serde::{Deserialize, Serialize};

/// What an item's answers are compared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Gold {
    /// The reference is our deterministic analyzer (cfg, call_graph, ast, and taint /
    /// points_to items without labels of their own: the paper's protocol, with our analyzer in
    /// the place of Joern/Soot/Frama-C). The analyzer column is 1 by construction.
    Analyzer,
    /// Data dependency: the positive `(target, source)` variable pairs ("target is
    /// data-dependent on source", transitively); every other pair of the function's variables
    /// that is asked about is negative.
    Dependencies { pairs: Vec<(String, String)> },
    /// A class label: a flaky-test category (`async_wait`, ...), or `equivalent` /
    /// `not_equivalent` for the equivalence tasks.
    Label { label: String },
    /// Taint, one test case (OWASP Benchmark): is the program a real vulnerability of
    /// `category` (an OWASP category such as `sqli`, or a sink kind such as `sql`)?
    TaintVerdict { category: String, vulnerable: bool },
    /// Taint, marked sink lines (SecuriBench Micro): `bad` lines are vulnerable sinks, `ok`
    /// lines safe ones (1-based).
    SinkLines { bad: Vec<usize>, ok: Vec<usize> },
    /// Taint, the number of vulnerabilities in the file (PyT's expected count).
    VulnCount { count: usize },
    /// Points-to, the alias assertions inside the asked function (PTABen).
    AliasAssertions {
        assertions: Vec<labels::AliasAssertion>,
    },
}

impl Gold {
    /// What the item's answers are scored against, for the reports.
    pub fn reference(&self) -> &'static str {
        match self {
            Gold::Analyzer => REFERENCE_ANALYZER,
            _ => REFERENCE_LABELS,
        }
    }
}

/// The reference of [`Gold::Analyzer`] items, as the reports name it.
pub const REFERENCE_ANALYZER: &str = "our analyzer";
/// The reference of every other item.
pub const REFERENCE_LABELS: &str = "the data set's labels";

/// One data-set item: a program (or a pair), the task to run on it and its gold label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalItem {
    /// The data set's name (`core`, `owasp`, ..., or the JSONL file's `dataset` field).
    pub dataset: String,
    /// Unique within the data set and task.
    pub id: String,
    pub task: Task,
    pub language: Language,
    /// The project the item belongs to (for per-project macro F1).
    pub project: String,
    /// The source file's text (the original program for equivalence tasks).
    pub code: String,
    /// The second program (the mutant, or program B) for equivalence tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_b: Option<String>,
    /// The function asked about (qualified or simple name); `None`: the first named function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    pub gold: Gold,
}

/// The tasks the harness can run, and those it reports as not run (with the reason).
pub const RUNNABLE_TASKS: [Task; 9] = [
    Task::Ast,
    Task::Cfg,
    Task::CallGraph,
    Task::DataDependency,
    Task::Taint,
    Task::PointsTo,
    Task::EquivalentMutant,
    Task::Equivalence,
    Task::FlakyRootCause,
];

/// Why a task cannot be run here.
pub fn not_run_reason(task: Task) -> Option<&'static str> {
    match task {
        Task::ExpressionMatch => Some(
            "needs CodeBERT similarity as the ground-truth tool (paper 000); no model weights here",
        ),
        Task::EquivalenceCrossLanguage => Some(
            "no cross-language data set with non-equivalent pairs here (EqBench's Java and C \
             versions of a program are equivalent by construction)",
        ),
        Task::ExplainFinding => {
            Some("no gold labels: explanations are judged by people (Layer 2), not by a metric")
        }
        _ => None,
    }
}

/// Label names of the equivalence tasks.
pub const EQUIVALENT: &str = "equivalent";
pub const NOT_EQUIVALENT: &str = "not_equivalent";
