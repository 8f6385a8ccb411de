//! The papers' best figures, for comparison beside ours. Source:
//! `shared/docs/research-notes.md` §1 (paper 000, "Exploring Code Analysis: Zero-Shot
//! Insights on Syntax and Semantics with LLMs", best LLM result per task) and §2 (paper 001,
//! "Evaluating Language Models on Cross-Language Code Functional Equivalence").

use crate::crosscheck::task::Task;

/// One published figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperFigure {
    pub task: Task,
    pub metric: &'static str,
    /// The figure as a number in `[0, 1]` (for charts), when it is one.
    pub value: Option<f64>,
    /// As the paper states it.
    pub text: &'static str,
    pub citation: &'static str,
}

const P000: &str = "paper 000 (research notes §1)";

/// The best LLM figures per task.
pub const PAPER_BEST: [PaperFigure; 9] = [
    PaperFigure {
        task: Task::Ast,
        metric: "pass rate",
        value: Some(0.90),
        text: "90%+ pass; 97% under human consensus",
        citation: P000,
    },
    PaperFigure {
        task: Task::ExpressionMatch,
        metric: "Hit@5/10/20",
        value: None,
        text: "32/32",
        citation: P000,
    },
    PaperFigure {
        task: Task::Cfg,
        metric: "pass rate",
        value: Some(68.0 / 75.0),
        text: "68/75 automated, 97% human",
        citation: P000,
    },
    PaperFigure {
        task: Task::CallGraph,
        metric: "pass rate",
        value: Some(54.0 / 75.0),
        text: "51-54/75 automated, 96% human",
        citation: P000,
    },
    PaperFigure {
        task: Task::DataDependency,
        metric: "per-project macro F1",
        value: Some(0.898),
        text: "0.898",
        citation: P000,
    },
    PaperFigure {
        task: Task::Taint,
        metric: "per-project macro F1",
        value: Some(0.761),
        text: "0.761",
        citation: P000,
    },
    PaperFigure {
        task: Task::PointsTo,
        metric: "mean Jaccard",
        value: Some(0.552),
        text: "0.552",
        citation: P000,
    },
    PaperFigure {
        task: Task::EquivalentMutant,
        metric: "F1 (balanced 100/100)",
        value: Some(0.925),
        text: "0.925 F1 few-shot",
        citation: P000,
    },
    PaperFigure {
        task: Task::FlakyRootCause,
        metric: "accuracy and macro F1",
        value: Some(0.43),
        text: "0.43",
        citation: P000,
    },
];

/// Paper 001's figures on functional equivalence (accuracy of the best model per benchmark).
pub const PAPER_EQUIVALENCE: PaperFigure = PaperFigure {
    task: Task::Equivalence,
    metric: "accuracy",
    value: Some(0.82),
    text: "GPT-o4-mini: 0.97 SeqCoBench, 0.91 EquiBench OJ-V, 0.82 OJ-A, 0.80-0.93 PolyHuman; every model shows a decision gap",
    citation: "paper 001 (research notes §2)",
};

/// The paper's figure for a task.
pub fn paper_figure(task: Task) -> Option<PaperFigure> {
    if task == Task::Equivalence {
        return Some(PAPER_EQUIVALENCE);
    }
    PAPER_BEST.iter().copied().find(|f| f.task == task)
}
