//! The analysis tasks an LLM can be asked about, and the prompt strategies (research notes §1,
//! "Prompts").
//!
//! Syntax and static tasks use role-based prompts (`You are a [LANG] [ROLE] ...`); dynamic
//! tasks use instruction-based prompts with domain knowledge. Which of the four strategies
//! (normal, chain-of-thought, role, role + chain-of-thought) works best is model-specific,
//! so it is a per-call choice; [`Task::default_strategy`] follows the paper's defaults.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One analysis task with its own prompt template, answer schema and normaliser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    Ast,
    ExpressionMatch,
    Cfg,
    CallGraph,
    DataDependency,
    Taint,
    PointsTo,
    Equivalence,
    EquivalenceCrossLanguage,
    EquivalentMutant,
    FlakyRootCause,
    ExplainFinding,
}

/// The research notes' capability layers: syntax > static > dynamic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskLayer {
    Syntax,
    Static,
    Dynamic,
}

impl Task {
    pub const ALL: [Task; 12] = [
        Task::Ast,
        Task::ExpressionMatch,
        Task::Cfg,
        Task::CallGraph,
        Task::DataDependency,
        Task::Taint,
        Task::PointsTo,
        Task::Equivalence,
        Task::EquivalenceCrossLanguage,
        Task::EquivalentMutant,
        Task::FlakyRootCause,
        Task::ExplainFinding,
    ];

    /// The tasks whose answer is scored against a deterministic analysis of one function.
    pub const ANALYZER_BACKED: [Task; 6] = [
        Task::Ast,
        Task::Cfg,
        Task::CallGraph,
        Task::DataDependency,
        Task::Taint,
        Task::PointsTo,
    ];

    /// The snake_case name used in file names, JSON and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Task::Ast => "ast",
            Task::ExpressionMatch => "expression_match",
            Task::Cfg => "cfg",
            Task::CallGraph => "call_graph",
            Task::DataDependency => "data_dependency",
            Task::Taint => "taint",
            Task::PointsTo => "points_to",
            Task::Equivalence => "equivalence",
            Task::EquivalenceCrossLanguage => "equivalence_cross_language",
            Task::EquivalentMutant => "equivalent_mutant",
            Task::FlakyRootCause => "flaky_root_cause",
            Task::ExplainFinding => "explain_finding",
        }
    }

    /// Parses a task name (`call_graph`, also `call-graph` and `callgraph`).
    pub fn from_name(name: &str) -> Option<Task> {
        let squashed: String = name
            .trim()
            .chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        Task::ALL
            .into_iter()
            .find(|t| t.name().replace('_', "") == squashed)
    }

    pub fn layer(self) -> TaskLayer {
        match self {
            Task::Ast | Task::ExpressionMatch => TaskLayer::Syntax,
            Task::Cfg | Task::CallGraph | Task::DataDependency | Task::Taint | Task::PointsTo => {
                TaskLayer::Static
            }
            _ => TaskLayer::Dynamic,
        }
    }

    /// Role-based prompts for syntax and static tasks, instruction-based for dynamic ones
    /// (paper 000, section 3.3).
    pub fn default_strategy(self) -> Strategy {
        match self.layer() {
            TaskLayer::Syntax | TaskLayer::Static => Strategy::Role,
            TaskLayer::Dynamic => Strategy::Normal,
        }
    }

    /// True when the answer can be scored against the analyzer (Layer 1).
    pub fn analyzer_backed(self) -> bool {
        Task::ANALYZER_BACKED.contains(&self)
    }
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A prompt strategy (paper 000, section 3.3 "Prompt Strategy Ablation").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Plain instructions, no persona, no reasoning scaffold.
    Normal,
    /// Instructions plus explicit step-by-step reasoning before the answer.
    Cot,
    /// A persona ("You are a Python CFG analyzer").
    #[default]
    Role,
    /// Persona plus step-by-step reasoning.
    RoleCot,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Normal,
        Strategy::Cot,
        Strategy::Role,
        Strategy::RoleCot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Normal => "normal",
            Strategy::Cot => "cot",
            Strategy::Role => "role",
            Strategy::RoleCot => "role_cot",
        }
    }

    /// Parses `normal`, `cot`, `role`, `role_cot` (also `role-cot`, `role+cot`).
    pub fn from_name(name: &str) -> Option<Strategy> {
        let n = name.trim().to_ascii_lowercase().replace(['-', '+'], "_");
        Strategy::ALL.into_iter().find(|s| s.name() == n)
    }

    pub fn uses_role(self) -> bool {
        matches!(self, Strategy::Role | Strategy::RoleCot)
    }

    pub fn uses_cot(self) -> bool {
        matches!(self, Strategy::Cot | Strategy::RoleCot)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Zero-shot or few-shot (the examples live in their own template files).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Shots {
    #[default]
    Zero,
    Few,
}

impl Shots {
    pub fn name(self) -> &'static str {
        match self {
            Shots::Zero => "zero",
            Shots::Few => "few",
        }
    }

    pub fn from_name(name: &str) -> Option<Shots> {
        match name.trim().to_ascii_lowercase().as_str() {
            "zero" | "zero_shot" | "zero-shot" | "0" => Some(Shots::Zero),
            "few" | "few_shot" | "few-shot" => Some(Shots::Few),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Task::ALL {
            assert_eq!(Task::from_name(t.name()), Some(t));
        }
        assert_eq!(Task::from_name("call-graph"), Some(Task::CallGraph));
        assert_eq!(Task::from_name("CallGraph"), Some(Task::CallGraph));
        assert_eq!(Task::from_name("graph"), None);
        for s in Strategy::ALL {
            assert_eq!(Strategy::from_name(s.name()), Some(s));
        }
        assert_eq!(Strategy::from_name("role+cot"), Some(Strategy::RoleCot));
        assert_eq!(Shots::from_name("few-shot"), Some(Shots::Few));
    }

    #[test]
    fn static_tasks_are_role_based_and_dynamic_ones_instruction_based() {
        assert_eq!(Task::Cfg.default_strategy(), Strategy::Role);
        assert_eq!(Task::Ast.default_strategy(), Strategy::Role);
        assert_eq!(Task::FlakyRootCause.default_strategy(), Strategy::Normal);
        assert_eq!(Task::EquivalentMutant.default_strategy(), Strategy::Normal);
        assert!(Task::PointsTo.analyzer_backed());
        assert!(!Task::Equivalence.analyzer_backed());
    }
}
