//! `crosscheck telemetry summary`: per task, language and model (and over everything), the
//! agreement of the LLM with the analyzer, of the automated pass/fail with human labels, the
//! pass rates and score distributions of the Layer-1 scores, tier counts, and the means of
//! instability, latency and tokens. Pure: records and labels go in, a [`Summary`] comes out,
//! one record at a time so a large store is never held in memory.
//!
//! Per-score pass rates use the paper's thresholds (research notes, Layer 1; inclusive upper
//! bounds, see [`paper_threshold`]) for the score names `statement_gap`, `keyword_gap`,
//! `structure_gap` (C relaxed, from [`crate::crosscheck::scores::ast::Thresholds`]),
//! `jump_redundancy`, `jump_fabrication`, `cfg_shape_error`, `call_redundancy`,
//! `call_fabrication` and `missed_calls`; other scores get their distribution only. The record's
//! own `pass` (all of a task's scores within bounds) gives the overall pass rate.
//!
//! Agreement figures come from [`crate::stats`] (Po, Cohen's kappa, Scott's pi, Gwet's AC1,
//! PABAK, precision / recall / F1 of rater a against reference b, and the decision gap
//! `Acc(neg) - Acc(pos)`), with binary categories (0 = no, 1 = yes):
//! * `llm_vs_analyzer`: a = the LLM's majority verdict, b = the analyzer's verdict, over
//!   every paired verdict ([`super::verdict::verdict_pairs`]): one per record with a single
//!   verdict (a taint flow, an equivalence), one per question of a record that asked several
//!   (a function's variables for taint, variable pairs for data dependency).
//! * `pass_vs_human`: a = the record's automated `pass`, b = the latest human label of the
//!   record (`correct`), over labelled records that have a `pass`. This is the paper's
//!   "automated vs human" comparison: how far Layer 1 can be trusted as a proxy for people.

use std::collections::BTreeMap;

use serde::Serialize;

use super::verdict::{analyzer_verdict, verdict_pairs};
use crate::crosscheck::record::{CrossCheckRecord, Tier};
use crate::crosscheck::scores::ast::Thresholds;
use crate::stats::agreement::{agreement, class_scores, decision_bias, Tally};
use crate::syntax::Language;

/// Version of the summary's JSON shape (keys are only ever added).
pub const SUMMARY_SCHEMA_VERSION: u32 = 1;

/// Agreement of rater a with reference b over `n` paired binary verdicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementFigures {
    pub n: u64,
    pub po: Option<f64>,
    pub kappa: Option<f64>,
    pub scott_pi: Option<f64>,
    pub ac1: Option<f64>,
    pub pabak: Option<f64>,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// `Acc(neg) - Acc(pos)`: positive when a over-rejects.
    pub gap: Option<f64>,
}

impl AgreementFigures {
    fn of(t: &Tally) -> Option<Self> {
        if t.n() == 0 {
            return None;
        }
        let a = agreement(t);
        let positive = class_scores(t, 1, "1");
        Some(AgreementFigures {
            n: t.n(),
            po: a.po,
            kappa: a.kappa,
            scott_pi: a.scott_pi,
            ac1: a.ac1,
            pabak: a.pabak,
            precision: positive.precision,
            recall: positive.recall,
            f1: positive.f1,
            gap: decision_bias(t).gap,
        })
    }
}

/// The paper's pass threshold (inclusive upper bound) of a Layer-1 score for a language, if
/// the score name is one of the paper's.
pub fn paper_threshold(score: &str, language: &str) -> Option<f64> {
    let ast = || {
        Language::from_name(language)
            .map(Thresholds::for_language)
            .unwrap_or_default()
    };
    Some(match score {
        "statement_gap" => ast().statement,
        "keyword_gap" => ast().keyword,
        "structure_gap" => ast().structure,
        "jump_redundancy" => 0.40,
        "jump_fabrication" => 0.25,
        "cfg_shape_error" => 0.45,
        "call_redundancy" => 0.22,
        "call_fabrication" => 0.12,
        "missed_calls" => 0.25,
        _ => return None,
    })
}

/// Distribution of one Layer-1 score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreStats {
    pub n: u64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Share of records within the paper's threshold ([`paper_threshold`]); `null` for
    /// scores without one.
    pub pass_rate: Option<f64>,
}

/// Records by tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TierCounts {
    pub confirmed: u64,
    #[serde(rename = "analyzer-only")]
    pub analyzer_only: u64,
    #[serde(rename = "llm-only")]
    pub llm_only: u64,
    pub refuted: u64,
    pub untiered: u64,
}

/// Layer-1 pass/fail.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct PassCounts {
    pub passed: u64,
    pub failed: u64,
    /// Records without a pass/fail decision.
    pub unscored: u64,
    /// `passed / (passed + failed)`.
    pub rate: Option<f64>,
}

/// Human labels of the group's records (the latest label of each).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct HumanCounts {
    pub labelled: u64,
    pub correct: u64,
    /// `correct / labelled`.
    pub correct_rate: Option<f64>,
}

/// Everything the summary says about one (task, language, model) group, or about all records
/// (`"*"` in all three keys).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSummary {
    pub task: String,
    pub language: String,
    pub model: String,
    pub records: u64,
    pub tiers: TierCounts,
    pub pass: PassCounts,
    pub scores: BTreeMap<String, ScoreStats>,
    pub llm_vs_analyzer: Option<AgreementFigures>,
    /// Records with an analyzer verdict but no LLM majority (a tie or no parsed sample).
    pub llm_verdict_missing: u64,
    pub human: HumanCounts,
    pub pass_vs_human: Option<AgreementFigures>,
    pub instability_mean: Option<f64>,
    pub latency_ms_mean: Option<f64>,
    pub prompt_tokens_mean: Option<f64>,
    pub completion_tokens_mean: Option<f64>,
    pub prompt_tokens_total: u64,
    pub completion_tokens_total: u64,
    pub samples: u64,
    /// Share of samples answered from the cache.
    pub cache_hit_rate: Option<f64>,
}

/// The summary of a store (or a set of records).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub schema_version: u32,
    pub records: u64,
    /// Labelled records (latest label counts).
    pub labelled: u64,
    /// Groups sorted by task, language, model.
    pub groups: Vec<GroupSummary>,
    pub total: GroupSummary,
}

#[derive(Debug, Clone, Default)]
struct ScoreAcc {
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    /// Values within the paper's threshold; `None` once a value had no threshold.
    passed: Option<u64>,
}

#[derive(Debug, Clone)]
struct Acc {
    records: u64,
    tiers: TierCounts,
    passed: u64,
    failed: u64,
    scores: BTreeMap<String, ScoreAcc>,
    llm_vs_analyzer: Tally,
    llm_missing: u64,
    labelled: u64,
    correct: u64,
    pass_vs_human: Tally,
    instability: f64,
    latency: u128,
    prompt: u64,
    completion: u64,
    samples: u64,
    cached: u64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            records: 0,
            tiers: TierCounts::default(),
            passed: 0,
            failed: 0,
            scores: BTreeMap::new(),
            llm_vs_analyzer: Tally::new(2),
            llm_missing: 0,
            labelled: 0,
            correct: 0,
            pass_vs_human: Tally::new(2),
            instability: 0.0,
            latency: 0,
            prompt: 0,
            completion: 0,
            samples: 0,
            cached: 0,
        }
    }
}

fn mean(sum: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| sum / n as f64)
}

impl Acc {
    fn add(&mut self, r: &CrossCheckRecord, label: Option<bool>) {
        self.records += 1;
        match r.tier {
            Some(Tier::Confirmed) => self.tiers.confirmed += 1,
            Some(Tier::AnalyzerOnly) => self.tiers.analyzer_only += 1,
            Some(Tier::LlmOnly) => self.tiers.llm_only += 1,
            Some(Tier::Refuted) => self.tiers.refuted += 1,
            None => self.tiers.untiered += 1,
        }
        match r.pass {
            Some(true) => self.passed += 1,
            Some(false) => self.failed += 1,
            None => {}
        }
        for (name, &value) in r.scores.iter().filter(|(_, v)| v.is_finite()) {
            let s = self.scores.entry(name.clone()).or_default();
            let within = paper_threshold(name, &r.language).map(|t| value <= t + 1e-9);
            if s.n == 0 {
                s.min = value;
                s.max = value;
                s.passed = within.map(u64::from);
            } else {
                s.passed = s.passed.zip(within).map(|(p, w)| p + u64::from(w));
                s.min = s.min.min(value);
                s.max = s.max.max(value);
            }
            s.n += 1;
            s.sum += value;
        }
        let pairs = verdict_pairs(r);
        for (llm, reference) in &pairs {
            self.llm_vs_analyzer
                .add(usize::from(*llm), usize::from(*reference));
        }
        if pairs.is_empty() && analyzer_verdict(r).is_some() {
            self.llm_missing += 1;
        }
        if let Some(correct) = label {
            self.labelled += 1;
            self.correct += u64::from(correct);
            if let Some(pass) = r.pass {
                self.pass_vs_human
                    .add(usize::from(pass), usize::from(correct));
            }
        }
        if r.instability.is_finite() {
            self.instability += r.instability;
        }
        self.latency += u128::from(r.latency_ms);
        self.prompt = self.prompt.saturating_add(r.prompt_tokens);
        self.completion = self.completion.saturating_add(r.completion_tokens);
        self.samples += r.samples.len() as u64;
        self.cached += r.samples.iter().filter(|s| s.from_cache).count() as u64;
    }

    fn finish(self, task: String, language: String, model: String) -> GroupSummary {
        let n = self.records;
        let decided = self.passed + self.failed;
        GroupSummary {
            task,
            language,
            model,
            records: n,
            tiers: self.tiers,
            pass: PassCounts {
                passed: self.passed,
                failed: self.failed,
                unscored: n - decided,
                rate: mean(self.passed as f64, decided),
            },
            scores: self
                .scores
                .into_iter()
                .map(|(name, s)| {
                    let stats = ScoreStats {
                        n: s.n,
                        mean: s.sum / s.n.max(1) as f64,
                        min: s.min,
                        max: s.max,
                        pass_rate: s.passed.and_then(|p| mean(p as f64, s.n)),
                    };
                    (name, stats)
                })
                .collect(),
            llm_vs_analyzer: AgreementFigures::of(&self.llm_vs_analyzer),
            llm_verdict_missing: self.llm_missing,
            human: HumanCounts {
                labelled: self.labelled,
                correct: self.correct,
                correct_rate: mean(self.correct as f64, self.labelled),
            },
            pass_vs_human: AgreementFigures::of(&self.pass_vs_human),
            instability_mean: mean(self.instability, n),
            latency_ms_mean: mean(self.latency as f64, n),
            prompt_tokens_mean: mean(self.prompt as f64, n),
            completion_tokens_mean: mean(self.completion as f64, n),
            prompt_tokens_total: self.prompt,
            completion_tokens_total: self.completion,
            samples: self.samples,
            cache_hit_rate: mean(self.cached as f64, self.samples),
        }
    }
}

/// Accumulates records into a [`Summary`].
#[derive(Debug, Clone, Default)]
pub struct Summarizer {
    labels: BTreeMap<String, bool>,
    groups: BTreeMap<(String, String, String), Acc>,
    total: Acc,
}

impl Summarizer {
    /// `labels`: the latest human verdict (`correct`) of each labelled record id.
    pub fn new(labels: BTreeMap<String, bool>) -> Self {
        Summarizer {
            labels,
            ..Summarizer::default()
        }
    }

    /// Counts one record.
    pub fn add(&mut self, record: &CrossCheckRecord) {
        let label = self.labels.get(&record.id).copied();
        let key = (
            record.task.clone(),
            record.language.clone(),
            record.model.clone(),
        );
        self.groups.entry(key).or_default().add(record, label);
        self.total.add(record, label);
    }

    pub fn finish(self) -> Summary {
        let total = self.total.finish("*".into(), "*".into(), "*".into());
        Summary {
            schema_version: SUMMARY_SCHEMA_VERSION,
            records: total.records,
            labelled: total.human.labelled,
            groups: self
                .groups
                .into_iter()
                .map(|((task, language, model), acc)| acc.finish(task, language, model))
                .collect(),
            total,
        }
    }
}

/// The summary of `records` given the latest label of each record id.
pub fn summarize<'a>(
    records: impl IntoIterator<Item = &'a CrossCheckRecord>,
    labels: BTreeMap<String, bool>,
) -> Summary {
    let mut s = Summarizer::new(labels);
    for r in records {
        s.add(r);
    }
    s.finish()
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.3}"))
}

fn agreement_line(name: &str, a: &Option<AgreementFigures>) -> String {
    match a {
        None => format!("  {name}: no paired verdicts"),
        Some(a) => format!(
            "  {name} (n={}): Po {} kappa {} pi {} AC1 {} PABAK {} | P {} R {} F1 {} | gap {}",
            a.n,
            fmt_opt(a.po),
            fmt_opt(a.kappa),
            fmt_opt(a.scott_pi),
            fmt_opt(a.ac1),
            fmt_opt(a.pabak),
            fmt_opt(a.precision),
            fmt_opt(a.recall),
            fmt_opt(a.f1),
            fmt_opt(a.gap),
        ),
    }
}

fn group_text(g: &GroupSummary, out: &mut String) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "{} / {} / {}: {} record(s)",
        g.task, g.language, g.model, g.records
    );
    let t = &g.tiers;
    let _ = writeln!(
        out,
        "  tiers: confirmed {}, analyzer-only {}, llm-only {}, refuted {}, untiered {}",
        t.confirmed, t.analyzer_only, t.llm_only, t.refuted, t.untiered
    );
    let _ = writeln!(
        out,
        "  pass rate: {} ({} passed, {} failed, {} unscored)",
        fmt_opt(g.pass.rate),
        g.pass.passed,
        g.pass.failed,
        g.pass.unscored
    );
    for (name, s) in &g.scores {
        let _ = writeln!(
            out,
            "  score {name}: mean {:.3} min {:.3} max {:.3} (n={}), pass rate {}",
            s.mean,
            s.min,
            s.max,
            s.n,
            fmt_opt(s.pass_rate)
        );
    }
    let _ = writeln!(
        out,
        "{}",
        agreement_line("LLM vs analyzer", &g.llm_vs_analyzer)
    );
    if g.llm_verdict_missing > 0 {
        let _ = writeln!(
            out,
            "    ({} record(s) with an analyzer verdict but no LLM majority)",
            g.llm_verdict_missing
        );
    }
    let _ = writeln!(
        out,
        "  human labels: {} labelled, {} correct ({})",
        g.human.labelled,
        g.human.correct,
        fmt_opt(g.human.correct_rate)
    );
    let _ = writeln!(out, "{}", agreement_line("pass vs human", &g.pass_vs_human));
    let _ = writeln!(
        out,
        "  means per record: instability {}, latency {} ms, tokens {} prompt + {} completion; \
         cache hits {} of {} sample(s)",
        fmt_opt(g.instability_mean),
        g.latency_ms_mean
            .map_or("n/a".into(), |x| format!("{x:.0}")),
        g.prompt_tokens_mean
            .map_or("n/a".into(), |x| format!("{x:.0}")),
        g.completion_tokens_mean
            .map_or("n/a".into(), |x| format!("{x:.0}")),
        fmt_opt(g.cache_hit_rate),
        g.samples
    );
}

impl Summary {
    /// Human-readable report: one block per group, then the total.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.records == 0 {
            out.push_str("no records\n");
            return out;
        }
        for g in &self.groups {
            group_text(g, &mut out);
            out.push('\n');
        }
        group_text(&self.total, &mut out);
        out
    }
}
