//! The paper's metrics over per-item results, for the three columns, with agreement
//! coefficients (bootstrap intervals) and strategy ablations (McNemar). Every statistic comes
//! from [`crate::stats`].
//!
//! | task | metric (`TaskMetrics::metric`) |
//! |---|---|
//! | ast, cfg, call_graph | pass rate |
//! | data_dependency, taint (analyzer as reference) | per-project macro F1 (F1 of the summed counts per project, averaged over projects) |
//! | taint, per-test verdicts (OWASP) | Youden's index TPR − FPR of the pooled counts (extra: TPR, FPR, precision, F1; counts per category) |
//! | taint, marked sink lines (SecuriBench) | F1 over the marked sink lines (extra: TPR, FPR, precision, Youden; counts per group) |
//! | taint, vulnerability counts (PyT) | share of files whose count matches exactly (extra: summed found and expected, count recall and precision) |
//! | points_to (analyzer as reference) | mean per-program Jaccard |
//! | points_to, alias assertions (PTABen) | share of assertions satisfied (extra: per oracle kind) |
//! | equivalent_mutant | accuracy (extra: accuracy on equivalent / non-equivalent items, gap) |
//! | equivalence | accuracy, accuracy by label and the decision gap `Acc(neq) - Acc(eq)` |
//! | flaky_root_cause | accuracy (extra: macro F1 over the 13 categories) |
//!
//! "No answer" (no static category, no proof, an unreadable reply) counts as wrong. Each
//! group says what it is scored against ([`TaskMetrics::reference`]): the data set's labels,
//! or our analyzer (then the analyzer column is 1 by construction and has no agreement row).

use super::labels::{AliasKind, BinaryCounts};
use super::run::{f1_of, Column, ItemResult, NOT_VULNERABLE, VULNERABLE};
use super::{not_run_reason, EQUIVALENT, NOT_EQUIVALENT, REFERENCE_ANALYZER, REFERENCE_LABELS};
use crate::analysis::flaky::Category;
use crate::crosscheck::task::Task;
use crate::stats::agreement::{agreement, decision_bias, macro_f1, Confusion, Tally};
use crate::stats::bootstrap::{bootstrap, BootstrapOptions};
use crate::stats::mcnemar::mcnemar;
use crate::syntax::Cancel;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The three columns, in display order.
pub const COLUMNS: [&str; 3] = ["analyzer", "llm", "hybrid"];

/// Figures of one (dataset, task, strategy, shots, model) group; `[analyzer, llm, hybrid]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskMetrics {
    pub dataset: String,
    pub task: Task,
    pub strategy: String,
    pub shots: String,
    pub model: String,
    /// Items scored.
    pub n: usize,
    /// Items that could not be asked (not scored).
    pub not_applicable: usize,
    pub metric: &'static str,
    pub values: [Option<f64>; 3],
    /// Secondary figures by name (`acc_eq`, `acc_neq`, `gap`, `macro_f1`).
    pub extra: BTreeMap<String, [Option<f64>; 3]>,
    /// Per-project F1 (data_dependency, taint).
    pub per_project: BTreeMap<String, [Option<f64>; 3]>,
    /// What the numbers are scored against: "the data set's labels" or "our analyzer".
    pub reference: &'static str,
    /// Confusion counts against yes/no labels, pooled (`all`) and per project (OWASP
    /// category, SecuriBench group); alias assertions with "alias" as the positive class.
    pub counts: BTreeMap<String, [Option<BinaryCounts>; 3]>,
}

/// How the rows of a group are scored, from their `gold` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GoldKind {
    /// Our analyzer is the reference.
    Analyzer,
    /// Taint verdicts per test (OWASP).
    Verdict,
    /// Marked sink lines (SecuriBench).
    SinkLines,
    /// Vulnerability counts (PyT).
    Count,
    /// Alias assertions (PTABen).
    Alias,
    /// Dependencies and class labels.
    Other,
}

fn gold_kind(task: Task, rows: &[&ItemResult]) -> GoldKind {
    let kind = |r: &ItemResult| {
        let g = r.gold.as_deref().unwrap_or("");
        match g {
            "analyzer" => GoldKind::Analyzer,
            VULNERABLE | NOT_VULNERABLE if task == Task::Taint => GoldKind::Verdict,
            _ if g.starts_with("sink_lines") => GoldKind::SinkLines,
            _ if g.starts_with("vuln_count") => GoldKind::Count,
            _ if g.starts_with("alias_assertions") => GoldKind::Alias,
            _ => GoldKind::Other,
        }
    };
    let first = rows.first().map_or(GoldKind::Other, |r| kind(r));
    if rows.iter().all(|r| kind(r) == first) {
        first
    } else {
        GoldKind::Other
    }
}

fn binary_counts(c: &Column) -> BinaryCounts {
    BinaryCounts {
        tp: c.tp,
        fp: c.fp,
        fn_: c.fn_,
        tn: c.tn,
    }
}

/// A coefficient with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WithCi {
    pub value: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// Agreement of one column with the gold labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementRow {
    pub dataset: String,
    pub task: Task,
    pub column: &'static str,
    pub n: u64,
    pub kappa: WithCi,
    pub ac1: WithCi,
    pub pabak: WithCi,
}

/// One strategy/shots combination of the LLM column, compared with the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AblationRow {
    pub dataset: String,
    pub task: Task,
    pub model: String,
    pub strategy: String,
    pub shots: String,
    pub n: usize,
    /// Share of items the LLM got right (pass / correct label), with a bootstrap interval.
    pub accuracy: WithCi,
    /// McNemar's test against the baseline (the first combination) on the shared items;
    /// `None` for the baseline itself.
    pub p_value: Option<f64>,
    pub baseline: String,
}

/// A confusion matrix of one column against gold (rows: predicted, columns: gold).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfusionTable {
    pub dataset: String,
    pub task: Task,
    pub column: &'static str,
    pub confusion: Confusion,
}

/// Everything the reports show.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Metrics {
    pub tasks: Vec<TaskMetrics>,
    pub agreement: Vec<AgreementRow>,
    pub ablation: Vec<AblationRow>,
    pub confusion: Vec<ConfusionTable>,
    /// Tasks not run, with the reason.
    pub not_run: Vec<(String, String)>,
}

fn col(r: &ItemResult, k: usize) -> Option<&Column> {
    match k {
        0 => Some(&r.analyzer),
        1 => r.llm.as_ref(),
        _ => r.hybrid.as_ref(),
    }
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn label_metric_name(kind: GoldKind) -> Option<&'static str> {
    match kind {
        GoldKind::Verdict => Some("Youden (TPR − FPR)"),
        GoldKind::SinkLines => Some("F1 over marked sink lines"),
        GoldKind::Count => Some("exact-count rate"),
        GoldKind::Alias => Some("share of assertions satisfied"),
        _ => None,
    }
}

/// The metric name of a task.
pub fn metric_name(task: Task) -> &'static str {
    match task {
        Task::DataDependency | Task::Taint => "per-project macro F1",
        Task::PointsTo => "mean Jaccard",
        Task::EquivalentMutant | Task::Equivalence | Task::FlakyRootCause => "accuracy",
        _ => "pass rate",
    }
}

fn correct(c: &Column) -> bool {
    c.pass == Some(true)
}

fn label_space(task: Task) -> Vec<String> {
    let mut v: Vec<String> = match task {
        Task::FlakyRootCause => Category::ALL.iter().map(|c| c.name().to_string()).collect(),
        _ => vec![NOT_EQUIVALENT.to_string(), EQUIVALENT.to_string()],
    };
    v.push("none".to_string());
    v
}

fn label_pairs(rows: &[&ItemResult], k: usize, space: &[String]) -> Vec<(usize, usize)> {
    let index = |l: Option<&str>| {
        let l = l.unwrap_or("none");
        space
            .iter()
            .position(|s| s == l)
            .unwrap_or(space.len().saturating_sub(1))
    };
    rows.iter()
        .filter_map(|r| {
            let c = col(r, k)?;
            Some((index(c.label.as_deref()), index(r.gold.as_deref())))
        })
        .collect()
}

fn count_pairs(rows: &[&ItemResult], k: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for r in rows {
        if let Some(c) = col(r, k) {
            for (n, p) in [
                (c.tp, (1, 1)),
                (c.fp, (1, 0)),
                (c.fn_, (0, 1)),
                (c.tn, (0, 0)),
            ] {
                pairs.extend(std::iter::repeat_n(p, n as usize));
            }
        }
    }
    pairs
}

fn with_ci(
    q: usize,
    pairs: &[(usize, usize)],
    opts: &BootstrapOptions,
    cancel: &Cancel,
) -> [WithCi; 3] {
    let t = Tally::from_pairs(q, pairs);
    let a = agreement(&t);
    let run = bootstrap::<3, _>(
        q,
        pairs,
        opts,
        |t| {
            let a = agreement(t);
            [a.kappa, a.ac1, a.pabak]
        },
        cancel,
    );
    let values = [a.kappa, a.ac1, a.pabak];
    let mut out = [WithCi {
        value: None,
        lo: None,
        hi: None,
    }; 3];
    for (i, o) in out.iter_mut().enumerate() {
        o.value = values[i];
        o.lo = run.intervals[i].lo;
        o.hi = run.intervals[i].hi;
    }
    out
}

fn accuracy_ci(correct: &[bool], opts: &BootstrapOptions, cancel: &Cancel) -> WithCi {
    let pairs: Vec<(usize, usize)> = correct.iter().map(|&c| (usize::from(c), 1)).collect();
    let t = Tally::from_pairs(2, &pairs);
    let run = bootstrap::<1, _>(2, &pairs, opts, |t| [agreement(t).po], cancel);
    WithCi {
        value: agreement(&t).po,
        lo: run.intervals[0].lo,
        hi: run.intervals[0].hi,
    }
}

/// The figures of a group scored against the data set's labels, for column `k`: fills
/// `counts` and `extra`, returns the headline value.
fn label_figures(
    tm: &mut TaskMetrics,
    kind: GoldKind,
    k: usize,
    cols: &[(&ItemResult, &Column)],
) -> Option<f64> {
    let mut all = BinaryCounts::default();
    let mut per: BTreeMap<&str, BinaryCounts> = BTreeMap::new();
    let mut parts: BTreeMap<&str, u64> = BTreeMap::new();
    for (r, c) in cols {
        let b = binary_counts(c);
        all.merge(&b);
        per.entry(r.project.as_str()).or_default().merge(&b);
        for (name, v) in &c.parts {
            *parts.entry(name.as_str()).or_default() += v;
        }
    }
    let mut extra = |name: &str, v: Option<f64>| {
        tm.extra.entry(name.to_string()).or_insert([None; 3])[k] = v;
    };
    match kind {
        GoldKind::Verdict | GoldKind::SinkLines => {
            extra("TPR (recall)", all.tpr());
            extra("FPR", all.fpr());
            extra("precision", all.precision());
            if kind == GoldKind::Verdict {
                extra("F1", all.f1());
            } else {
                extra("Youden (TPR − FPR)", all.youden());
                extra(
                    "flagged unmarked lines (in FP)",
                    Some(parts.get("unmarked").copied().unwrap_or(0) as f64),
                );
            }
            tm.counts.entry("all".to_string()).or_insert([None; 3])[k] = Some(all);
            for (p, b) in &per {
                tm.counts.entry(p.to_string()).or_insert([None; 3])[k] = Some(*b);
                tm.per_project.entry(p.to_string()).or_insert([None; 3])[k] = b.f1();
            }
            if kind == GoldKind::Verdict {
                all.youden()
            } else {
                all.f1()
            }
        }
        GoldKind::Count => {
            let exact = cols.iter().filter(|(_, c)| correct(c)).count();
            extra(
                "found (sum)",
                Some(parts.get("found").copied().unwrap_or(0) as f64),
            );
            extra(
                "expected (sum)",
                Some(parts.get("expected").copied().unwrap_or(0) as f64),
            );
            extra("count recall", all.tpr());
            extra("count precision", all.precision());
            Some(exact as f64 / cols.len() as f64)
        }
        GoldKind::Alias => {
            for kind in AliasKind::ALL {
                let total = parts
                    .get(format!("{} total", kind.name()).as_str())
                    .copied()
                    .unwrap_or(0);
                let ok = parts
                    .get(format!("{} satisfied", kind.name()).as_str())
                    .copied()
                    .unwrap_or(0);
                if total > 0 {
                    extra(
                        &format!("{} satisfied ({total})", kind.name()),
                        Some(ok as f64 / total as f64),
                    );
                }
            }
            tm.counts.entry("all".to_string()).or_insert([None; 3])[k] = Some(all);
            all.accuracy()
        }
        _ => None,
    }
}

/// Computes every figure of the reports from the results (pure, deterministic).
pub fn compute(results: &[ItemResult], opts: &BootstrapOptions, cancel: &Cancel) -> Metrics {
    let mut m = Metrics::default();
    type Key = (String, Task, String, String, String);
    let mut groups: BTreeMap<Key, Vec<&ItemResult>> = BTreeMap::new();
    for r in results {
        groups
            .entry((
                r.dataset.clone(),
                r.task,
                r.strategy.clone(),
                r.shots.clone(),
                r.model.clone(),
            ))
            .or_default()
            .push(r);
    }
    for ((dataset, task, strategy, shots, model), rows) in &groups {
        let scored: Vec<&ItemResult> = rows.iter().copied().filter(|r| r.scored()).collect();
        let kind = gold_kind(*task, &scored);
        let mut tm = TaskMetrics {
            dataset: dataset.clone(),
            task: *task,
            strategy: strategy.clone(),
            shots: shots.clone(),
            model: model.clone(),
            n: scored.len(),
            not_applicable: rows.len() - scored.len(),
            metric: label_metric_name(kind).unwrap_or(metric_name(*task)),
            values: [None; 3],
            extra: BTreeMap::new(),
            per_project: BTreeMap::new(),
            reference: if kind == GoldKind::Analyzer {
                REFERENCE_ANALYZER
            } else {
                REFERENCE_LABELS
            },
            counts: BTreeMap::new(),
        };
        for k in 0..3 {
            let cols: Vec<(&ItemResult, &Column)> = scored
                .iter()
                .filter_map(|r| col(r, k).map(|c| (*r, c)))
                .collect();
            if cols.is_empty() {
                continue;
            }
            if label_metric_name(kind).is_some() {
                tm.values[k] = label_figures(&mut tm, kind, k, &cols);
                continue;
            }
            tm.values[k] = match task {
                Task::DataDependency | Task::Taint => {
                    let mut per: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
                    for (r, c) in &cols {
                        let e = per.entry(r.project.as_str()).or_default();
                        e.0 += c.tp;
                        e.1 += c.fp;
                        e.2 += c.fn_;
                    }
                    for (p, (tp, fp, fn_)) in &per {
                        tm.per_project.entry(p.to_string()).or_insert([None; 3])[k] =
                            Some(f1_of(*tp, *fp, *fn_));
                    }
                    mean(per.values().map(|(tp, fp, fn_)| f1_of(*tp, *fp, *fn_)))
                }
                Task::PointsTo => mean(cols.iter().map(|(_, c)| c.score.unwrap_or(0.0))),
                _ => mean(cols.iter().map(|(_, c)| if correct(c) { 1.0 } else { 0.0 })),
            };
            if matches!(task, Task::Equivalence | Task::EquivalentMutant) {
                // Binary tally over (predicted, gold) with "no verdict" counted as the wrong
                // answer for the item's gold label.
                let pairs: Vec<(usize, usize)> = cols
                    .iter()
                    .map(|(r, c)| {
                        let gold = usize::from(r.gold.as_deref() == Some(EQUIVALENT));
                        let pred = match c.label.as_deref() {
                            Some(l) if l == EQUIVALENT => 1,
                            Some(_) => 0,
                            None => 1 - gold,
                        };
                        (pred, gold)
                    })
                    .collect();
                let bias = decision_bias(&Tally::from_pairs(2, &pairs));
                for (name, v) in [
                    ("acc_eq", bias.acc_pos),
                    ("acc_neq", bias.acc_neg),
                    ("gap", bias.gap),
                ] {
                    tm.extra.entry(name.to_string()).or_insert([None; 3])[k] = v;
                }
            }
            if *task == Task::FlakyRootCause {
                let space = label_space(*task);
                let refs: Vec<&ItemResult> = cols.iter().map(|(r, _)| *r).collect();
                let pairs = label_pairs(&refs, k, &space);
                let t = Tally::from_pairs(space.len(), &pairs);
                tm.extra.entry("macro_f1".to_string()).or_insert([None; 3])[k] = macro_f1(&t);
            }
        }
        m.tasks.push(tm);
    }

    // Agreement with gold and confusion matrices: per (dataset, task, model), default
    // strategy group first in order (the first group seen).
    let mut seen: BTreeSet<(String, Task)> = BTreeSet::new();
    for ((dataset, task, _, _, _), rows) in &groups {
        if !seen.insert((dataset.clone(), *task)) {
            continue;
        }
        let scored: Vec<&ItemResult> = rows.iter().copied().filter(|r| r.scored()).collect();
        let label_task = matches!(
            task,
            Task::FlakyRootCause | Task::Equivalence | Task::EquivalentMutant
        );
        let kind = gold_kind(*task, &scored);
        // Count labels have no paired negatives: no agreement coefficients for them.
        let yes_no = (matches!(task, Task::DataDependency | Task::Taint)
            && kind != GoldKind::Count)
            || kind == GoldKind::Alias;
        if !label_task && !yes_no {
            continue;
        }
        let space = label_space(*task);
        let analyzer_is_reference = kind == GoldKind::Analyzer;
        for (k, name) in COLUMNS.iter().enumerate() {
            // Where our analyzer is the reference, its own agreement is 1 by construction.
            if scored.iter().all(|r| col(r, k).is_none()) || (k == 0 && analyzer_is_reference) {
                continue;
            }
            let (q, pairs) = if label_task {
                (space.len(), label_pairs(&scored, k, &space))
            } else {
                (2, count_pairs(&scored, k))
            };
            if pairs.is_empty() {
                continue;
            }
            let [kappa, ac1, pabak] = with_ci(q, &pairs, opts, cancel);
            m.agreement.push(AgreementRow {
                dataset: dataset.clone(),
                task: *task,
                column: name,
                n: pairs.len() as u64,
                kappa,
                ac1,
                pabak,
            });
            if *task == Task::FlakyRootCause {
                m.confusion.push(ConfusionTable {
                    dataset: dataset.clone(),
                    task: *task,
                    column: name,
                    confusion: Confusion::from_pairs(&space, &pairs),
                });
            }
        }
    }

    // Strategy ablation of the LLM column.
    type Combos<'k> = Vec<(&'k Key, &'k Vec<&'k ItemResult>)>;
    let mut by_model: BTreeMap<(String, Task, String), Combos<'_>> = BTreeMap::new();
    for (key, rows) in &groups {
        if rows.iter().any(|r| r.llm.is_some()) {
            by_model
                .entry((key.0.clone(), key.1, key.4.clone()))
                .or_default()
                .push((key, rows));
        }
    }
    for ((dataset, task, model), combos) in by_model {
        let outcome = |rows: &Vec<&ItemResult>| -> BTreeMap<String, bool> {
            rows.iter()
                .filter(|r| r.scored())
                .filter_map(|r| r.llm.as_ref().map(|c| (r.id.clone(), correct(c))))
                .collect()
        };
        let Some((base_key, base_rows)) = combos.first() else {
            continue;
        };
        let base = outcome(base_rows);
        let base_name = format!("{}/{}", base_key.2, base_key.3);
        for (i, (key, rows)) in combos.iter().enumerate() {
            let mine = outcome(rows);
            let flags: Vec<bool> = mine.values().copied().collect();
            let p_value = (i > 0).then(|| {
                let paired: Vec<(bool, bool)> = mine
                    .iter()
                    .filter_map(|(id, c)| base.get(id).map(|b| (*b, *c)))
                    .collect();
                mcnemar(&paired).p_value
            });
            m.ablation.push(AblationRow {
                dataset: dataset.clone(),
                task,
                model: model.clone(),
                strategy: key.2.clone(),
                shots: key.3.clone(),
                n: flags.len(),
                accuracy: accuracy_ci(&flags, opts, cancel),
                p_value,
                baseline: base_name.clone(),
            });
        }
    }

    for t in Task::ALL {
        if let Some(why) = not_run_reason(t) {
            m.not_run.push((t.name().to_string(), why.to_string()));
        }
    }
    if results.iter().all(|r| r.llm.is_none()) {
        m.not_run.push((
            "LLM and hybrid columns".to_string(),
            "run with --no-llm or without a configured LLM".to_string(),
        ));
    }
    m
}
