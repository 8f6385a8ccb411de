//! The cross-check engine: ask one or more LLMs a prepared [`Question`], normalise and score
//! their answers against the analyzer's reference, decide tiers, and emit records.
//!
//! # One check
//!
//! 1. The prompt is rendered from the task's template ([`PromptLibrary::render`]).
//! 2. Each model ("juror") is asked `n` times (`samples`, per task configurable). Sample `i`
//!    uses seed `seed + i`; with `n > 1` every sample uses `sample_temperature` (> 0) so the
//!    samples can differ, with `n = 1` the client's default temperature (0) applies. Samples
//!    run one after another.
//! 3. Each sample is looked up in the [`AnswerCache`] first (unless `fresh`); answers that
//!    were read successfully are stored. A failed call (timeout, rate limit, HTTP error)
//!    ends that model's sampling; an unreadable answer, one cut off at the token limit
//!    (`truncated`) or one whose JSON had to be repaired counts as a failed sample.
//! 4. Per model: structured answers (ast, cfg, call_graph, points_to) are scored per sample
//!    and the majority pass/fail verdict wins; its first sample is the representative
//!    answer. Yes/no answers (data_dependency, taint) are combined per question by majority
//!    and the combination is scored. Instability follows
//!    [`crate::crosscheck::consistency`]; a model is *stable* when its instability is at most
//!    `max_instability` and a majority exists.
//! 5. With several models, a jury ([`JuryRule`]) combines their pass verdicts and, per fact,
//!    their agreement (and, per extra claim, whether they make it); unstable models abstain.
//!    The outcome's instability is then the mean of the models' instabilities, and every
//!    model's own result is kept in [`CheckOutcome::models`].
//! 6. Tiers ([`tier_all`]): every analyzer fact is `confirmed` when the (jury's) stable
//!    answer contains it, else `analyzer-only`; the LLM's extra claims are `llm-only`, or
//!    `refuted` when the analyzer rules them out (CFG edges between statements that cannot
//!    follow each other, calls of functions the code never mentions). The check as a whole
//!    is `confirmed` when the answer passes the Layer-1 thresholds stably, else
//!    `analyzer-only`.
//! 7. One [`CrossCheckRecord`] per model (plus one for the jury when there are several) goes
//!    to the [`RecordSink`], without source text unless `store_source` is set.

use super::answers::{
    parse_ast, parse_call_graph, parse_cfg, parse_flow_answer, parse_points_to,
    parse_question_answers, NormaliseError,
};
use super::cache::{AnswerCache, CachedAnswer};
use super::consistency::{item_majority, jury, majority, JuryRule};
use super::facts::{Question, Reference};
use super::hash::sha256_fields;
use super::prompts::{PromptError, PromptLibrary, RenderedPrompt};
use super::record::{CrossCheckRecord, RecordSink, SampleRecord, Tier};
use super::sampling::{Drawn, Sampler};
use super::scores::ast::{score_ast_with, Thresholds as AstThresholds};
use super::scores::callgraph::{score_call_graph, CallJudgement, CgThresholds};
use super::scores::cfg::{canonical_pair, score_cfg, CfgGraph, CfgThresholds, EdgeJudgement};
use super::scores::sets::{score_points_to, score_verdicts, PointsToMap, SetThresholds};
use super::task::{Shots, Strategy, Task};
use super::tier::{decide_tier, tier_all, Claim, Evidence, LlmStance, Origin};
use crate::llm::{LlmClient, LlmError, Verdict};
use crate::syntax::normalize::NormNode;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// At most this many samples per question and model.
pub const MAX_SAMPLES: usize = 32;
/// At most this many facts and claims are listed in an outcome.
pub const MAX_LISTED: usize = 500;

/// Layer-1 thresholds of every task.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskThresholds {
    /// `None`: the paper's per-language AST thresholds.
    pub ast: Option<AstThresholds>,
    pub cfg: CfgThresholds,
    pub call_graph: CgThresholds,
    pub sets: SetThresholds,
}

/// How checks are run. Deserialisable from the user's config (`[crosscheck]` table); every
/// field has a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckSettings {
    /// `None`: the task's default (role for syntax/static tasks, normal for dynamic ones).
    pub strategy: Option<Strategy>,
    pub shots: Shots,
    /// Samples per question and model.
    pub samples: usize,
    /// Per-task sample counts (task name → n), overriding `samples`.
    pub samples_per_task: BTreeMap<String, usize>,
    /// Temperature of every sample when more than one is drawn (must be > 0).
    pub sample_temperature: f32,
    /// Base seed: sample `i` uses `seed + i`.
    pub seed: u64,
    pub max_tokens: Option<u32>,
    /// A model whose instability exceeds this is unstable (its answer confirms nothing).
    pub max_instability: f64,
    pub jury_rule: JuryRule,
    pub thresholds: TaskThresholds,
    /// Ask providers for strict schema adherence (OpenAI `strict: true`).
    pub strict_schema: bool,
    /// Keep the function's source text in records (off: hashes only).
    pub store_source: bool,
    /// Bypass the cache (neither read nor written), e.g. to measure instability.
    pub fresh: bool,
    /// Cap on yes/no questions per prompt.
    pub max_questions: usize,
    /// Directory of prompt overrides (from the user's config only).
    pub prompts_dir: Option<std::path::PathBuf>,
    /// Bound on one LLM call, on top of the client's own timeout.
    #[serde(skip)]
    pub call_timeout: Option<Duration>,
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings {
            strategy: None,
            shots: Shots::Zero,
            samples: 1,
            samples_per_task: BTreeMap::new(),
            sample_temperature: 0.7,
            seed: 0,
            max_tokens: None,
            max_instability: 0.25,
            jury_rule: JuryRule::Majority,
            thresholds: TaskThresholds::default(),
            strict_schema: false,
            store_source: false,
            fresh: false,
            max_questions: super::facts::DEFAULT_MAX_QUESTIONS,
            prompts_dir: None,
            call_timeout: None,
        }
    }
}

impl CheckSettings {
    /// Samples for a task, between 1 and [`MAX_SAMPLES`].
    pub fn samples_for(&self, task: Task) -> usize {
        self.samples_per_task
            .get(task.name())
            .copied()
            .unwrap_or(self.samples)
            .clamp(1, MAX_SAMPLES)
    }

    pub fn strategy_for(&self, task: Task) -> Strategy {
        self.strategy.unwrap_or(task.default_strategy())
    }
}

/// Parses the `[crosscheck]` table of a user config file's text (defaults when absent). The
/// one reader of these settings for every front end (`ask`, `eval`, `flaky`, the server).
pub fn check_settings_from_toml(text: &str) -> Result<CheckSettings, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
    match doc.get("crosscheck") {
        None => Ok(CheckSettings::default()),
        Some(v) => v
            .clone()
            .try_into::<CheckSettings>()
            .map_err(|e| e.message().to_string()),
    }
}

/// Why a check produced no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckError {
    Prompt(PromptError),
    /// Every model's calls failed; the first error.
    Llm(LlmError),
    /// Answers came back but none could be read (cut off at the token limit, malformed,
    /// off-schema). `records` are the telemetry records of the failed samples (already given
    /// to the engine's sink, if any): a failure is recorded for the function it is about.
    Unreadable {
        message: String,
        records: Vec<CrossCheckRecord>,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Prompt(e) => e.fmt(f),
            CheckError::Llm(e) => e.fmt(f),
            CheckError::Unreadable { message, .. } => {
                write!(f, "no usable answer from the LLM: {message}")
            }
        }
    }
}

impl std::error::Error for CheckError {}

/// A normalised LLM answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Ast(NormNode),
    Cfg(CfgGraph),
    Calls(BTreeSet<(String, String)>),
    Items(BTreeMap<u64, Verdict>),
    PointsTo(PointsToMap),
    /// A yes/no/unknown answer to one question (a taint flow), with the model's reasoning
    /// (unverified free text: shown escaped, never stored in records).
    Verdict {
        verdict: Verdict,
        reasoning: Option<String>,
    },
}

/// The model's reasoning is cut at this many characters.
pub const MAX_REASONING_CHARS: usize = 2000;

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Yes => "yes",
        Verdict::No => "no",
        Verdict::Unknown => "unknown",
    }
}

impl Answer {
    /// Code-free JSON of the answer.
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Ast(n) => json!({ "ast": n.compact() }),
            Answer::Cfg(g) => json!({ "cfg": g }),
            Answer::Calls(c) => json!({ "calls": c.iter().map(|(_, b)| b).collect::<Vec<_>>() }),
            Answer::Items(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.to_string(), json!(verdict_name(*v))))
                    .collect(),
            ),
            Answer::PointsTo(p) => json!({ "points_to": p }),
            Answer::Verdict { verdict, .. } => json!({ "verdict": verdict_name(*verdict) }),
        }
    }
}

/// Reads an answer for the reference's task.
pub fn normalise(reference: &Reference, text: &str) -> Result<Answer, NormaliseError> {
    match reference {
        Reference::Ast { .. } => parse_ast(text).map(Answer::Ast),
        Reference::Cfg { .. } => parse_cfg(text).map(Answer::Cfg),
        Reference::CallGraph { caller, .. } => {
            parse_call_graph(text, Some(caller)).map(Answer::Calls)
        }
        Reference::DataDependency { .. } => parse_question_answers(
            text,
            &["answers", "questions", "results"],
            &["verdict", "answer", "dependent"],
            &BTreeMap::new(),
        )
        .map(Answer::Items),
        Reference::Taint { questions, .. } => {
            let names = questions.iter().map(|q| (q.target.clone(), q.id)).collect();
            parse_question_answers(
                text,
                &["variables", "answers", "results"],
                &["tainted", "verdict", "answer"],
                &names,
            )
            .map(Answer::Items)
        }
        Reference::PointsTo { .. } => parse_points_to(text).map(Answer::PointsTo),
        Reference::Flow { .. } => {
            let (verdict, reasoning) = parse_flow_answer(text)?;
            Ok(Answer::Verdict { verdict, reasoning })
        }
    }
}

/// An answer scored against the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub scores: BTreeMap<String, f64>,
    pub detail: Value,
    pub pass: bool,
    /// Keys of the analyzer facts the answer contains.
    pub agreed: BTreeSet<String>,
    /// The answer's claims beyond the analyzer's facts.
    pub claims: Vec<Claim>,
}

fn lines_label(spans: &[(usize, usize)]) -> String {
    spans
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn cfg_node_label(g: &CfgGraph, i: usize) -> String {
    match g.nodes.get(i) {
        Some(n) if n.spans.is_empty() => format!("{:?}", n.category).to_uppercase(),
        Some(n) => format!(
            "{}@{}",
            format!("{:?}", n.category).to_uppercase(),
            lines_label(&n.spans)
        ),
        None => "?".to_string(),
    }
}

/// The analyzer's facts as tiering keys, in a deterministic order.
pub fn fact_keys(reference: &Reference, t: &TaskThresholds) -> Vec<String> {
    match reference {
        Reference::Ast { .. } => vec!["ast".to_string()],
        Reference::Cfg { graph, .. } => {
            let (r, _) = canonical_pair(graph, &CfgGraph::default(), &t.cfg);
            r.edges
                .iter()
                .map(|&(a, b)| {
                    format!(
                        "edge n{a}:{} -> n{b}:{}",
                        cfg_node_label(&r, a),
                        cfg_node_label(&r, b)
                    )
                })
                .collect()
        }
        Reference::CallGraph { facts, .. } => {
            let s = score_call_graph(facts, &BTreeSet::new(), None, false, &t.call_graph);
            s.reference_edges
                .iter()
                .map(|((a, b), _)| format!("call {a} -> {b}"))
                .collect()
        }
        Reference::DataDependency { questions, .. } => questions
            .iter()
            .filter(|q| q.expected)
            .map(|q| format!("dep {} <- {}", q.target, q.source))
            .collect(),
        Reference::Taint { questions, .. } => questions
            .iter()
            .filter(|q| q.expected)
            .map(|q| format!("tainted {}", q.target))
            .collect(),
        Reference::PointsTo { map, .. } => map
            .iter()
            .flat_map(|(p, ts)| ts.iter().map(move |t| format!("pts {p} -> {t}")))
            .collect(),
        Reference::Flow { .. } => vec![FLOW_FACT.to_string()],
    }
}

/// The fact key of a flow question: the flow the analyzer reports.
pub const FLOW_FACT: &str = "flow";

fn insert_opt(m: &mut BTreeMap<String, f64>, k: &str, v: Option<f64>) {
    if let Some(v) = v {
        m.insert(k.to_string(), v);
    }
}

/// Scores an answer against the reference (pure).
pub fn score(reference: &Reference, answer: &Answer, t: &TaskThresholds) -> Scored {
    let mut scores = BTreeMap::new();
    let mut agreed = BTreeSet::new();
    let mut claims = Vec::new();
    let keys = fact_keys(reference, t);
    let (detail, pass) = match (reference, answer) {
        (Reference::Ast { tree, language }, Answer::Ast(candidate)) => {
            let th = t
                .ast
                .unwrap_or_else(|| AstThresholds::for_language(*language));
            let s = score_ast_with(tree, candidate, &th);
            scores.insert("statement_gap".into(), s.statement_gap);
            scores.insert("keyword_gap".into(), s.keyword_gap);
            scores.insert("structure_gap".into(), s.structure_gap);
            if s.pass {
                agreed.insert("ast".to_string());
            }
            (serde_json::to_value(&s).unwrap_or(Value::Null), s.pass)
        }
        (Reference::Cfg { graph, partial }, Answer::Cfg(candidate)) => {
            let s = score_cfg(graph, candidate, *partial, &t.cfg);
            scores.insert("jump_redundancy".into(), s.jump_redundancy);
            scores.insert("jump_fabrication".into(), s.jump_fabrication);
            scores.insert("shape_error".into(), s.shape_error);
            scores.insert("core_coverage".into(), s.core_coverage);
            scores.insert("path_preservation".into(), s.path_preservation);
            for (i, (_, found)) in s.reference_edges.iter().enumerate() {
                if *found {
                    if let Some(k) = keys.get(i) {
                        agreed.insert(k.clone());
                    }
                }
            }
            let (_, m) = canonical_pair(graph, candidate, &t.cfg);
            for ((a, b), j) in &s.candidate_edges {
                if *j != EdgeJudgement::Matched {
                    claims.push(Claim {
                        key: format!(
                            "edge {} -> {}",
                            cfg_node_label(&m, *a),
                            cfg_node_label(&m, *b)
                        ),
                        contradicted: *j == EdgeJudgement::Impossible,
                    });
                }
            }
            (serde_json::to_value(&s).unwrap_or(Value::Null), s.pass)
        }
        (
            Reference::CallGraph {
                facts,
                code_tokens,
                partial,
                ..
            },
            Answer::Calls(candidate),
        ) => {
            let s = score_call_graph(facts, candidate, Some(code_tokens), *partial, &t.call_graph);
            scores.insert("call_redundancy".into(), s.call_redundancy);
            scores.insert("call_fabrication".into(), s.call_fabrication);
            scores.insert("missed_calls".into(), s.missed_calls);
            for ((a, b), found) in &s.reference_edges {
                if *found {
                    agreed.insert(format!("call {a} -> {b}"));
                }
            }
            for ((a, b), j) in &s.candidate_edges {
                if *j != CallJudgement::Matched {
                    claims.push(Claim {
                        key: format!("call {a} -> {b} (llm)"),
                        contradicted: *j == CallJudgement::Impossible,
                    });
                }
            }
            let mut detail = serde_json::to_value(&s).unwrap_or(Value::Null);
            if let Value::Object(o) = &mut detail {
                o.insert(
                    "missed".into(),
                    json!(s
                        .reference_edges
                        .iter()
                        .filter(|(_, f)| !f)
                        .map(|((_, b), _)| b)
                        .collect::<Vec<_>>()),
                );
                o.insert(
                    "unmatched".into(),
                    json!(s
                        .candidate_edges
                        .iter()
                        .filter(|(_, j)| *j != CallJudgement::Matched)
                        .map(|((_, b), j)| json!({"callee": b, "judgement": j}))
                        .collect::<Vec<_>>()),
                );
            }
            (detail, s.pass)
        }
        (Reference::DataDependency { questions, .. }, Answer::Items(items))
        | (Reference::Taint { questions, .. }, Answer::Items(items)) => {
            let is_taint = matches!(reference, Reference::Taint { .. });
            let pairs: Vec<(bool, Verdict)> = questions
                .iter()
                .map(|q| {
                    (
                        q.expected,
                        items.get(&q.id).copied().unwrap_or(Verdict::Unknown),
                    )
                })
                .collect();
            let s = score_verdicts(&pairs, t.sets.f1);
            scores.insert("f1".into(), s.f1);
            scores.insert("accuracy".into(), s.accuracy);
            insert_opt(&mut scores, "precision", s.precision);
            insert_opt(&mut scores, "recall", s.recall);
            for (q, (_, v)) in questions.iter().zip(&pairs) {
                let key = if is_taint {
                    format!("tainted {}", q.target)
                } else {
                    format!("dep {} <- {}", q.target, q.source)
                };
                if v.is_positive() {
                    if q.expected {
                        agreed.insert(key);
                    } else {
                        claims.push(Claim {
                            key,
                            contradicted: false,
                        });
                    }
                }
            }
            (serde_json::to_value(&s).unwrap_or(Value::Null), s.pass)
        }
        (Reference::PointsTo { map, .. }, Answer::PointsTo(candidate)) => {
            let s = score_points_to(map, candidate, t.sets.jaccard);
            scores.insert("jaccard".into(), s.jaccard);
            scores.insert("mean_pointer_jaccard".into(), s.mean_pointer_jaccard);
            for (p, ts) in candidate {
                for target in ts {
                    let key = format!("pts {p} -> {target}");
                    if map.get(p).is_some_and(|r| r.contains(target)) {
                        agreed.insert(key);
                    } else {
                        claims.push(Claim {
                            key,
                            contradicted: false,
                        });
                    }
                }
            }
            (serde_json::to_value(&s).unwrap_or(Value::Null), s.pass)
        }
        (Reference::Flow { .. }, Answer::Verdict { verdict, .. }) => {
            // The analyzer reports the flow, so only "yes" agrees; "unknown" counts as no.
            let agrees = verdict.is_positive();
            scores.insert("agreement".into(), if agrees { 1.0 } else { 0.0 });
            if agrees {
                agreed.insert(FLOW_FACT.to_string());
            }
            (json!({ "verdict": verdict_name(*verdict) }), agrees)
        }
        _ => (json!({"error": "answer does not fit the task"}), false),
    };
    Scored {
        scores,
        detail,
        pass,
        agreed,
        claims,
    }
}

/// One sample as drawn.
#[derive(Debug, Clone)]
struct Sample {
    answer: Option<Answer>,
    error: Option<String>,
    latency_ms: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    from_cache: bool,
}

/// One model's result.
#[derive(Debug, Clone, Serialize)]
pub struct ModelOutcome {
    pub model: String,
    pub samples: usize,
    pub failed_samples: usize,
    /// The majority verdict exists and the instability is within the limit.
    pub stable: bool,
    pub instability: f64,
    pub pass: bool,
    pub scores: BTreeMap<String, f64>,
    pub llm: Value,
    /// The representative answer's reasoning (yes/no questions; unverified text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    pub errors: Vec<String>,
    #[serde(skip)]
    scored: Option<Scored>,
    #[serde(skip)]
    sample_records: Vec<SampleRecord>,
}

/// A fact with its tier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactTier {
    pub fact: String,
    pub tier: Tier,
    pub llm: LlmStance,
}

/// A claim with its tier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimTier {
    pub claim: String,
    pub tier: Tier,
}

/// The result of one cross-check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckOutcome {
    pub task: Task,
    pub file: String,
    pub function: String,
    pub language: String,
    /// The model id, or `jury(a, b, ...)`.
    pub model: String,
    pub template: Value,
    pub strategy: Strategy,
    pub shots: Shots,
    /// The (representative / combined) normalised answer of the first model.
    pub llm: Value,
    pub analyzer: Value,
    pub scores: BTreeMap<String, f64>,
    pub score_details: Value,
    pub pass: bool,
    pub tier: Tier,
    pub samples: usize,
    pub instability: f64,
    pub models: Vec<ModelOutcome>,
    pub facts: Vec<FactTier>,
    pub claims: Vec<ClaimTier>,
    /// True when `facts` or `claims` were cut at [`MAX_LISTED`].
    pub truncated: bool,
    pub cache: Value,
    pub errors: Vec<String>,
    #[serde(skip)]
    pub records: Vec<CrossCheckRecord>,
}

/// Runs cross-checks with shared prompts, cache and settings.
pub struct Engine<'a> {
    pub prompts: &'a PromptLibrary,
    pub cache: &'a AnswerCache,
    pub settings: &'a CheckSettings,
    pub sink: Option<&'a dyn RecordSink>,
}

impl Engine<'_> {
    /// Asks every client (a jury when more than one) about the question. `now`: seconds
    /// since the epoch, for records (this layer has no clock).
    pub async fn check(
        &self,
        clients: &[Arc<dyn LlmClient>],
        question: &Question,
        now: i64,
    ) -> Result<CheckOutcome, CheckError> {
        let task = question.inputs.task;
        let strategy = self.settings.strategy_for(task);
        let shots = self.settings.shots;
        let prompt = self
            .prompts
            .render(&question.inputs, strategy, shots)
            .map_err(CheckError::Prompt)?;
        let input_hash = question.inputs.input_hash();
        let t = &self.settings.thresholds;
        let mut models = Vec::new();
        let mut first_llm_error: Option<LlmError> = None;
        let mut first_read_error: Option<String> = None;
        for client in clients {
            let (outcome, llm_error) = self
                .ask_model(client.as_ref(), question, &prompt, &input_hash)
                .await;
            if let Some(e) = llm_error {
                first_llm_error.get_or_insert(e);
            }
            if outcome.scored.is_none() {
                if let Some(e) = outcome.errors.first() {
                    first_read_error.get_or_insert(e.clone());
                }
            }
            models.push(outcome);
        }
        if models.iter().all(|m| m.scored.is_none()) {
            return Err(match (first_llm_error, first_read_error) {
                (Some(e), _) => CheckError::Llm(e),
                (None, message) => {
                    // The models answered, unreadably: one record per model that drew
                    // samples, with no pass and no tier.
                    let records: Vec<CrossCheckRecord> = models
                        .iter()
                        .filter(|m| !m.sample_records.is_empty())
                        .map(|m| {
                            self.record(
                                question,
                                &prompt,
                                &input_hash,
                                now,
                                &m.model,
                                m.sample_records.clone(),
                                (BTreeMap::new(), None, None, m.instability),
                            )
                        })
                        .collect();
                    if let Some(sink) = self.sink {
                        for r in &records {
                            if let Err(e) = sink.record(r) {
                                tracing::warn!("the record could not be stored: {e}");
                            }
                        }
                    }
                    CheckError::Unreadable {
                        message: message.unwrap_or_else(|| "no model was asked".into()),
                        records,
                    }
                }
            });
        }

        // Jury (or the single model).
        let verdicts: Vec<Option<bool>> = models
            .iter()
            .map(|m| (m.stable && m.scored.is_some()).then_some(m.pass))
            .collect();
        let rule = self.settings.jury_rule;
        let pass = jury(&verdicts, rule).unwrap_or(false);
        let stable_any = verdicts.iter().any(Option::is_some);
        let keys = fact_keys(&question.reference, t);
        let mut stances = BTreeMap::new();
        for k in &keys {
            let votes: Vec<Option<bool>> = models
                .iter()
                .map(|m| match (&m.scored, m.stable) {
                    (Some(s), true) => Some(s.agreed.contains(k)),
                    _ => None,
                })
                .collect();
            let stance = if !stable_any {
                if models.iter().any(|m| m.scored.is_some()) {
                    LlmStance::Unstable
                } else {
                    LlmStance::Failed
                }
            } else if jury(&votes, rule) == Some(true) {
                LlmStance::Agrees
            } else {
                LlmStance::Disagrees
            };
            stances.insert(k.clone(), stance);
        }
        // Claims the jury makes: per key, the rule over "this model claims it".
        let mut claim_contradicted: BTreeMap<String, bool> = BTreeMap::new();
        for m in &models {
            if let Some(s) = &m.scored {
                for c in &s.claims {
                    *claim_contradicted.entry(c.key.clone()).or_insert(false) |= c.contradicted;
                }
            }
        }
        let mut claims = Vec::new();
        for (key, contradicted) in &claim_contradicted {
            let votes: Vec<Option<bool>> = models
                .iter()
                .map(|m| {
                    m.scored
                        .as_ref()
                        .map(|s| s.claims.iter().any(|c| &c.key == key))
                })
                .collect();
            let made = if models.len() == 1 {
                votes.first().copied().flatten() == Some(true)
            } else {
                jury(&votes, rule) == Some(true)
            };
            if made {
                claims.push(Claim {
                    key: key.clone(),
                    contradicted: *contradicted,
                });
            }
        }
        let findings: Vec<(String, String, bool)> =
            keys.iter().map(|k| (k.clone(), k.clone(), false)).collect();
        let tiered = tier_all(&findings, &stances, &claims);
        let overall_stance = if !stable_any {
            LlmStance::Unstable
        } else if pass {
            LlmStance::Agrees
        } else {
            LlmStance::Disagrees
        };
        let tier = decide_tier(&Evidence {
            origin: Origin::Analyzer,
            llm: overall_stance,
            contradicted: false,
        });

        let first = models.iter().find(|m| m.scored.is_some());
        let (scores, score_details, llm) = match first {
            Some(m) => (
                m.scores.clone(),
                m.scored
                    .as_ref()
                    .map(|s| s.detail.clone())
                    .unwrap_or(Value::Null),
                m.llm.clone(),
            ),
            None => (BTreeMap::new(), Value::Null, Value::Null),
        };
        let instability = if models.is_empty() {
            0.0
        } else {
            models.iter().map(|m| m.instability).sum::<f64>() / models.len() as f64
        };
        let model_name = if models.len() == 1 {
            models[0].model.clone()
        } else {
            format!(
                "jury({})",
                models
                    .iter()
                    .map(|m| m.model.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let analyzer = question.reference.to_json();
        let hits = models
            .iter()
            .flat_map(|m| &m.sample_records)
            .filter(|s| s.from_cache)
            .count();
        let misses = if self.settings.fresh {
            0
        } else {
            models
                .iter()
                .map(|m| m.sample_records.iter().filter(|s| !s.from_cache).count())
                .sum::<usize>()
        };
        let mut errors: Vec<String> = models
            .iter()
            .flat_map(|m| m.errors.iter().map(move |e| format!("{}: {e}", m.model)))
            .collect();

        // Records: one per model, plus the jury's.
        let mut records = Vec::new();
        let record_for = |model: &str,
                          samples: Vec<SampleRecord>,
                          scores: BTreeMap<String, f64>,
                          pass: Option<bool>,
                          tier: Option<Tier>,
                          instability: f64|
         -> CrossCheckRecord {
            self.record(
                question,
                &prompt,
                &input_hash,
                now,
                model,
                samples,
                (scores, pass, tier, instability),
            )
        };
        for m in &models {
            let m_tier = m.scored.as_ref().map(|_| {
                decide_tier(&Evidence {
                    origin: Origin::Analyzer,
                    llm: if !m.stable {
                        LlmStance::Unstable
                    } else if m.pass {
                        LlmStance::Agrees
                    } else {
                        LlmStance::Disagrees
                    },
                    contradicted: false,
                })
            });
            records.push(record_for(
                &m.model,
                m.sample_records.clone(),
                m.scores.clone(),
                m.scored.as_ref().map(|_| m.pass),
                m_tier,
                m.instability,
            ));
        }
        if models.len() > 1 {
            let samples = models
                .iter()
                .flat_map(|m| m.sample_records.iter().cloned())
                .collect();
            records.push(record_for(
                &model_name,
                samples,
                scores.clone(),
                Some(pass),
                Some(tier),
                instability,
            ));
        }
        if let Some(sink) = self.sink {
            for r in &records {
                if let Err(e) = sink.record(r) {
                    errors.push(format!("the record could not be stored: {e}"));
                }
            }
        }

        let truncated = tiered.findings.len() > MAX_LISTED || tiered.claims.len() > MAX_LISTED;
        Ok(CheckOutcome {
            task,
            file: question.file.clone(),
            function: question.function.clone(),
            language: question.inputs.language.name().to_string(),
            model: model_name,
            template: json!({
                "id": prompt.template_id,
                "version": prompt.template_version,
                "files": prompt.files,
            }),
            strategy,
            shots,
            llm,
            analyzer,
            scores,
            score_details,
            pass,
            tier,
            samples: models.iter().map(|m| m.samples).max().unwrap_or(0),
            instability,
            models,
            facts: tiered
                .findings
                .into_iter()
                .take(MAX_LISTED)
                .map(|f| FactTier {
                    fact: f.key,
                    tier: f.tier,
                    llm: f.llm,
                })
                .collect(),
            claims: tiered
                .claims
                .into_iter()
                .take(MAX_LISTED)
                .map(|c| ClaimTier {
                    claim: c.key,
                    tier: c.tier,
                })
                .collect(),
            truncated,
            cache: json!({"hits": hits, "misses": misses, "fresh": self.settings.fresh}),
            errors,
            records,
        })
    }

    /// One telemetry record (code-free unless `store_source`). `outcome`: scores, pass, tier,
    /// instability.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        question: &Question,
        prompt: &RenderedPrompt,
        input_hash: &str,
        now: i64,
        model: &str,
        samples: Vec<SampleRecord>,
        outcome: (BTreeMap<String, f64>, Option<bool>, Option<Tier>, f64),
    ) -> CrossCheckRecord {
        let (scores, pass, tier, instability) = outcome;
        let task = question.inputs.task;
        let latency_ms = samples.iter().map(|s| s.latency_ms).sum();
        let prompt_tokens = samples.iter().map(|s| s.prompt_tokens).sum();
        let completion_tokens = samples.iter().map(|s| s.completion_tokens).sum();
        CrossCheckRecord {
            id: sha256_fields([
                input_hash,
                prompt.fingerprint.as_str(),
                model,
                &now.to_string(),
            ]),
            timestamp: now,
            task: task.name().to_string(),
            language: question.inputs.language.name().to_string(),
            model: model.to_string(),
            template_id: prompt.template_id.clone(),
            template_version: prompt.template_version,
            strategy: self.settings.strategy_for(task).name().to_string(),
            code_hash: question.inputs.code_hash(),
            analyzer: question.reference.to_json(),
            samples,
            scores,
            pass,
            tier,
            instability,
            latency_ms,
            prompt_tokens,
            completion_tokens,
            source_text: self.settings.store_source.then(|| {
                question
                    .inputs
                    .code
                    .iter()
                    .map(|c| c.text.clone())
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        }
    }

    /// Draws the samples of one model and evaluates them. Returns the outcome and the first
    /// call error, if any.
    async fn ask_model(
        &self,
        client: &dyn LlmClient,
        question: &Question,
        prompt: &RenderedPrompt,
        input_hash: &str,
    ) -> (ModelOutcome, Option<LlmError>) {
        let task = question.inputs.task;
        let sampler = Sampler::new(
            client,
            self.settings,
            self.cache,
            prompt,
            task,
            input_hash,
            false,
            format!("{} {}:{}", task.name(), question.file, question.function),
        );
        let n = sampler.samples();
        let model = sampler.model().to_string();
        let mut samples: Vec<Sample> = Vec::new();
        let mut errors = Vec::new();
        let mut call_error = None;
        for i in 0..n {
            let (text, latency_ms, prompt_tokens, completion_tokens, from_cache) =
                match sampler.draw(i).await {
                    Ok(Drawn::Cached(c)) => (c.text, 0, 0, 0, true),
                    Ok(Drawn::Answered(resp)) if resp.truncated => {
                        errors.push(format!(
                        "sample {i}: the answer was cut off at the token limit (raise max_tokens)"
                    ));
                        samples.push(Sample {
                            answer: None,
                            error: Some("truncated".into()),
                            latency_ms: resp.latency_ms,
                            prompt_tokens: resp.prompt_tokens,
                            completion_tokens: resp.completion_tokens,
                            from_cache: false,
                        });
                        continue;
                    }
                    Ok(Drawn::Answered(resp)) => (
                        resp.text,
                        resp.latency_ms,
                        resp.prompt_tokens,
                        resp.completion_tokens,
                        false,
                    ),
                    Err(e) => {
                        errors.push(format!("sample {i}: {e}"));
                        call_error = Some(e);
                        break;
                    }
                };
            let repaired = crate::llm::answer::extract_json(&text)
                .map(|a| a.repaired)
                .unwrap_or(false);
            let normalised = if repaired {
                Err("the model's JSON answer was incomplete or malformed and had to be repaired; it was not used".to_string())
            } else {
                normalise(&question.reference, &text).map_err(|e| e.to_string())
            };
            match normalised {
                Ok(answer) => {
                    if !from_cache {
                        sampler.remember(
                            i,
                            &CachedAnswer {
                                text,
                                model: model.clone(),
                                prompt_tokens,
                                completion_tokens,
                                latency_ms,
                            },
                        );
                    }
                    samples.push(Sample {
                        answer: Some(answer),
                        error: None,
                        latency_ms,
                        prompt_tokens,
                        completion_tokens,
                        from_cache,
                    });
                }
                Err(e) => {
                    errors.push(format!("sample {i}: {e}"));
                    samples.push(Sample {
                        answer: None,
                        error: Some(e),
                        latency_ms,
                        prompt_tokens,
                        completion_tokens,
                        from_cache,
                    });
                }
            }
        }
        let outcome = self.evaluate(&model, question, samples, n, errors);
        (outcome, call_error)
    }

    fn evaluate(
        &self,
        model: &str,
        question: &Question,
        samples: Vec<Sample>,
        asked: usize,
        errors: Vec<String>,
    ) -> ModelOutcome {
        let t = &self.settings.thresholds;
        let reference = &question.reference;
        let ok: Vec<&Answer> = samples.iter().filter_map(|s| s.answer.as_ref()).collect();
        // Samples never drawn (a call failed) count as failed.
        let failed = asked.saturating_sub(ok.len());
        let per_sample: Vec<Scored> = ok.iter().map(|a| score(reference, a, t)).collect();
        let sample_records: Vec<SampleRecord> = {
            let mut scored = per_sample.iter();
            samples
                .iter()
                .map(|s| {
                    let answer = match &s.answer {
                        Some(a) => {
                            let _ = scored.next();
                            a.to_json()
                        }
                        None => json!({ "error": s.error }),
                    };
                    SampleRecord {
                        answer,
                        parsed: s.answer.is_some(),
                        latency_ms: s.latency_ms,
                        prompt_tokens: s.prompt_tokens,
                        completion_tokens: s.completion_tokens,
                        from_cache: s.from_cache,
                    }
                })
                .collect()
        };
        let mut outcome = ModelOutcome {
            model: model.to_string(),
            samples: asked,
            failed_samples: failed,
            stable: false,
            instability: 0.0,
            pass: false,
            scores: BTreeMap::new(),
            llm: Value::Null,
            reasoning: None,
            errors,
            scored: None,
            sample_records,
        };
        if ok.is_empty() {
            outcome.instability = if asked > 0 { 1.0 } else { 0.0 };
            return outcome;
        }
        let item_task = matches!(
            reference,
            Reference::DataDependency { .. } | Reference::Taint { .. }
        );
        let (scored, llm, has_majority, instability) = if item_task {
            let maps: Vec<BTreeMap<u64, Verdict>> = ok
                .iter()
                .filter_map(|a| match a {
                    Answer::Items(m) => Some(m.clone()),
                    _ => None,
                })
                .collect();
            let ids: Vec<u64> = match reference {
                Reference::DataDependency { questions, .. }
                | Reference::Taint { questions, .. } => questions.iter().map(|q| q.id).collect(),
                _ => Vec::new(),
            };
            let (combined, instability) = item_majority(&maps, &ids, failed);
            let answer = Answer::Items(combined);
            let s = score(reference, &answer, t);
            // A majority exists unless more than half the samples failed.
            let has_majority = ok.len() * 2 > asked;
            (s, answer.to_json(), has_majority, instability)
        } else {
            let passes: Vec<bool> = per_sample.iter().map(|s| s.pass).collect();
            let (maj, instability) = majority(&passes, failed);
            let idx = maj
                .and_then(|m| passes.iter().position(|p| *p == m))
                .unwrap_or(0);
            let s = per_sample.get(idx).cloned().unwrap_or_else(|| Scored {
                scores: BTreeMap::new(),
                detail: Value::Null,
                pass: false,
                agreed: BTreeSet::new(),
                claims: Vec::new(),
            });
            let llm = ok.get(idx).map(|a| a.to_json()).unwrap_or(Value::Null);
            if let Some(Answer::Verdict { reasoning, .. }) = ok.get(idx) {
                outcome.reasoning = reasoning.clone();
            }
            (s, llm, maj.is_some(), instability)
        };
        outcome.stable = has_majority
            && instability <= self.settings.max_instability + super::scores::THRESHOLD_EPSILON;
        outcome.instability = instability;
        outcome.pass = scored.pass && has_majority;
        outcome.scores = scored.scores.clone();
        outcome.llm = llm;
        outcome.scored = Some(scored);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crosscheck::facts::ItemQuestion;

    fn dd_reference() -> Reference {
        let q = |id, t: &str, s: &str, e| ItemQuestion {
            id,
            target: t.into(),
            source: s.into(),
            expected: e,
        };
        Reference::DataDependency {
            questions: vec![
                q(1, "b", "a", true),
                q(2, "c", "a", true),
                q(3, "a", "c", false),
            ],
            partial: false,
        }
    }

    #[test]
    fn item_answers_score_and_split_into_agreement_and_claims() {
        let r = dd_reference();
        let a = normalise(
            &r,
            r#"{"answers": [{"id": 1, "verdict": "yes"}, {"id": 2, "verdict": "no"}, {"id": 3, "verdict": "yes"}]}"#,
        )
        .unwrap();
        let s = score(&r, &a, &TaskThresholds::default());
        assert_eq!(s.scores["f1"], 0.5);
        assert!(!s.pass);
        assert_eq!(
            s.agreed.iter().map(String::as_str).collect::<Vec<_>>(),
            ["dep b <- a"]
        );
        assert_eq!(s.claims.len(), 1);
        assert_eq!(s.claims[0].key, "dep a <- c");
        assert!(!s.claims[0].contradicted);
    }

    #[test]
    fn mismatched_answer_kinds_fail_without_panicking() {
        let r = dd_reference();
        let s = score(
            &r,
            &Answer::Cfg(CfgGraph::default()),
            &TaskThresholds::default(),
        );
        assert!(!s.pass);
    }

    #[test]
    fn settings_clamp_samples_and_pick_default_strategies() {
        let mut s = CheckSettings {
            samples: 0,
            ..CheckSettings::default()
        };
        assert_eq!(s.samples_for(Task::Cfg), 1);
        s.samples_per_task.insert("cfg".into(), 1000);
        assert_eq!(s.samples_for(Task::Cfg), MAX_SAMPLES);
        assert_eq!(s.strategy_for(Task::Cfg), Strategy::Role);
        assert_eq!(s.strategy_for(Task::FlakyRootCause), Strategy::Normal);
        let parsed: CheckSettings = toml::from_str(
            "samples = 3\nstrategy = \"role_cot\"\n[thresholds.cfg]\nshape_error = 0.5\n",
        )
        .unwrap();
        assert_eq!(parsed.samples, 3);
        assert_eq!(parsed.strategy, Some(Strategy::RoleCot));
        assert_eq!(parsed.thresholds.cfg.shape_error, 0.5);
        assert_eq!(parsed.thresholds.cfg.jump_redundancy, 0.40);
    }
}
