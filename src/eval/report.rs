//! The reports written to the output directory: `report.md`, `report.html` (self-contained:
//! inline SVG charts, inline CSS, no script, no external URL) and `results.csv` (one row per
//! item and strategy).
//!
//! Charts (each an `<svg>` inside `<figure id="chart-...">`):
//! `chart-pass-rates` (each task's metric for the three columns beside the paper's best),
//! `chart-project-f1` (per-project F1 spread of data dependency and taint),
//! `chart-flaky-confusion` (flaky categories, LLM against gold),
//! `chart-agreement` (kappa, AC1 and PABAK of each column against gold, bootstrap 95% intervals),
//! `chart-ablation` (LLM accuracy per strategy/shots with intervals; McNemar p-values in the table).

use super::charts::{escape, grouped_bars, heatmap, intervals, COLUMN_COLOURS};
use super::metrics::{metric_name, Metrics, COLUMNS};
use super::paper::paper_figure;
use super::run::{Column, ItemResult, RunSummary};
use super::{REFERENCE_ANALYZER, REFERENCE_LABELS};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The ids of the HTML report's charts.
pub const CHART_IDS: [&str; 5] = [
    "chart-pass-rates",
    "chart-project-f1",
    "chart-flaky-confusion",
    "chart-agreement",
    "chart-ablation",
];

/// Context shown at the top of the reports.
#[derive(Debug, Clone, Default)]
pub struct ReportInfo {
    /// The command line that produced the run.
    pub command: String,
    pub datasets: String,
}

fn f(v: Option<f64>) -> String {
    v.map_or("–".to_string(), |v| format!("{v:.3}"))
}

fn ci(v: &super::metrics::WithCi) -> String {
    match (v.value, v.lo, v.hi) {
        (Some(x), Some(lo), Some(hi)) => format!("{x:.3} [{lo:.3}, {hi:.3}]"),
        (Some(x), _, _) => format!("{x:.3}"),
        _ => "–".to_string(),
    }
}

/// The paper's best figure, when this row's metric is the paper's (a Youden index or an
/// assertion share is not comparable with the paper's F1 or Jaccard).
fn paper_for(t: &super::metrics::TaskMetrics) -> Option<super::paper::PaperFigure> {
    (t.metric == metric_name(t.task))
        .then(|| paper_figure(t.task))
        .flatten()
}

fn group_name(t: &super::metrics::TaskMetrics) -> String {
    format!(
        "{} {} ({}/{})",
        t.dataset,
        t.task.name(),
        t.strategy,
        t.shots
    )
}

fn run_lines(summary: &RunSummary) -> Vec<String> {
    let mut v = vec![
        format!("items answered in this run: {}", summary.fresh_items),
        format!("items resumed from results.jsonl: {}", summary.resumed),
        format!(
            "LLM requests sent: {}, tokens: {}",
            summary.requests, summary.tokens
        ),
    ];
    if summary.skipped_budget > 0 {
        v.push(format!(
            "items skipped because the token budget was spent: {}",
            summary.skipped_budget
        ));
    }
    if summary.skipped_failure > 0 {
        v.push(format!(
            "items skipped after an LLM failure: {}",
            summary.skipped_failure
        ));
    }
    for e in summary.errors.iter().take(20) {
        v.push(format!("error: {e}"));
    }
    v
}

/// The Markdown report.
pub fn markdown(info: &ReportInfo, m: &Metrics, summary: &RunSummary) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# crosscheck eval report\n");
    let _ = writeln!(s, "Command: `{}`  ", info.command);
    let _ = writeln!(s, "Data sets: `{}`\n", info.datasets);
    let _ = writeln!(s, "## Results\n");
    let _ = writeln!(
        s,
        "Columns: analyzer alone, LLM alone, hybrid (the product's rule: the LLM never confirms alone). \
         \"Scored against\" names each row's reference: {REFERENCE_LABELS} (OWASP verdicts, \
         SecuriBench sink lines, PyT counts, PTABen alias assertions, CoRe, MutantBench, EqBench, \
         FlakyCat), or {REFERENCE_ANALYZER} (cfg, call_graph, ast), where the analyzer column is 1 \
         by construction. On taint labels the LLM judges the analyzer's findings (the flow \
         question of `crosscheck check --llm`); it is not asked to find flows of its own.\n"
    );
    let _ = writeln!(
        s,
        "| data set | task | strategy/shots | model | n | scored against | metric | analyzer | LLM | hybrid | paper best |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    for t in &m.tasks {
        let paper = paper_for(t).map_or("–".to_string(), |p| p.text.to_string());
        let _ = writeln!(
            s,
            "| {} | {} | {}/{} | {} | {}{} | {} | {} | {} | {} | {} | {} |",
            t.dataset,
            t.task.name(),
            t.strategy,
            t.shots,
            t.model,
            t.n,
            if t.not_applicable > 0 {
                format!(" (+{} n/a)", t.not_applicable)
            } else {
                String::new()
            },
            t.reference,
            t.metric,
            f(t.values[0]),
            f(t.values[1]),
            f(t.values[2]),
            paper
        );
        for (name, v) in &t.extra {
            let _ = writeln!(
                s,
                "| | | | | | | {name} | {} | {} | {} | |",
                f(v[0]),
                f(v[1]),
                f(v[2])
            );
        }
    }
    let with_projects: Vec<_> = m
        .tasks
        .iter()
        .filter(|t| !t.per_project.is_empty())
        .collect();
    if !with_projects.is_empty() {
        let _ = writeln!(s, "\n## Per-project F1\n");
        let _ = writeln!(
            s,
            "| group | project | analyzer | LLM | hybrid |\n|---|---|---|---|---|"
        );
        for t in with_projects {
            for (p, v) in &t.per_project {
                let _ = writeln!(
                    s,
                    "| {} | {p} | {} | {} | {} |",
                    group_name(t),
                    f(v[0]),
                    f(v[1]),
                    f(v[2])
                );
            }
        }
    }
    let with_counts: Vec<_> = m.tasks.iter().filter(|t| !t.counts.is_empty()).collect();
    if !with_counts.is_empty() {
        let _ = writeln!(s, "\n## Confusion counts against the data sets' labels\n");
        let _ = writeln!(
            s,
            "OWASP: one test case per row of `expectedresults-1.2.csv` (positive: a real \
             vulnerability of its category). SecuriBench: one marked sink line (positive: \
             `/* BAD */`, negative: `/* OK */`; flagged unmarked lines are FPs). PTABen: one \
             assertion (positive: MUSTALIAS/MAYALIAS, negative: NOALIAS; TP+TN = satisfied).\n"
        );
        let _ = writeln!(
            s,
            "| group | part | column | TP | FP | FN | TN | TPR | FPR | precision | F1 | Youden |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for t in with_counts {
            for (part, cols) in &t.counts {
                for (k, name) in COLUMNS.iter().enumerate() {
                    let Some(c) = cols[k] else { continue };
                    let _ = writeln!(
                        s,
                        "| {} | {part} | {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                        group_name(t),
                        c.tp,
                        c.fp,
                        c.fn_,
                        c.tn,
                        f(c.tpr()),
                        f(c.fpr()),
                        f(c.precision()),
                        f(c.f1()),
                        f(c.youden())
                    );
                }
            }
        }
    }
    let _ = writeln!(s, "\n## Agreement with gold (95% bootstrap intervals)\n");
    if m.agreement.is_empty() {
        let _ = writeln!(s, "No task with gold labels was scored.");
    } else {
        let _ = writeln!(
            s,
            "| data set | task | column | n | kappa | AC1 | PABAK |\n|---|---|---|---|---|---|---|"
        );
        for a in &m.agreement {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                a.dataset,
                a.task.name(),
                a.column,
                a.n,
                ci(&a.kappa),
                ci(&a.ac1),
                ci(&a.pabak)
            );
        }
    }
    let _ = writeln!(s, "\n## Strategy ablation (LLM column)\n");
    if m.ablation.is_empty() {
        let _ = writeln!(s, "No LLM results.");
    } else {
        let _ = writeln!(s, "| data set | task | model | strategy/shots | n | accuracy [95% CI] | McNemar p vs baseline |\n|---|---|---|---|---|---|---|");
        for a in &m.ablation {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {}/{} | {} | {} | {} |",
                a.dataset,
                a.task.name(),
                a.model,
                a.strategy,
                a.shots,
                a.n,
                ci(&a.accuracy),
                a.p_value
                    .map_or(format!("baseline ({})", a.baseline), |p| format!("{p:.4}"))
            );
        }
    }
    let _ = writeln!(s, "\n## Not run\n");
    for (task, why) in &m.not_run {
        let _ = writeln!(s, "- **{task}**: {why}");
    }
    let _ = writeln!(s, "\n## Run\n");
    for l in run_lines(summary) {
        let _ = writeln!(s, "- {l}");
    }
    s
}

/// The charts, as `(id, title, svg)`.
pub fn charts(m: &Metrics) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    // 1. Each task's metric, three columns and the paper's best.
    let cats: Vec<String> = m
        .tasks
        .iter()
        .map(|t| format!("{} {}", t.dataset, t.task.name()))
        .collect();
    let mut series: Vec<(&str, plotters::style::RGBColor, Vec<Option<f64>>)> = COLUMNS
        .iter()
        .enumerate()
        .map(|(k, name)| {
            (
                *name,
                COLUMN_COLOURS[k],
                m.tasks.iter().map(|t| t.values[k]).collect(),
            )
        })
        .collect();
    series.push((
        "paper best",
        plotters::style::RGBColor(150, 150, 150),
        m.tasks
            .iter()
            .map(|t| paper_for(t).and_then(|p| p.value))
            .collect(),
    ));
    let title = "Per-task metric (pass rate, macro F1, Jaccard or accuracy)".to_string();
    out.push((
        CHART_IDS[0],
        title.clone(),
        grouped_bars(&title, "metric", &cats, &series),
    ));

    // 2. Per-project F1 spread.
    let mut cats = Vec::new();
    let mut cols: [Vec<Option<f64>>; 3] = Default::default();
    for t in m.tasks.iter().filter(|t| !t.per_project.is_empty()) {
        for (p, v) in &t.per_project {
            cats.push(format!("{} {}", t.task.name(), p));
            for k in 0..3 {
                cols[k].push(v[k]);
            }
        }
    }
    let series: Vec<_> = COLUMNS
        .iter()
        .enumerate()
        .map(|(k, name)| (*name, COLUMN_COLOURS[k], cols[k].clone()))
        .collect();
    let title = "Per-project F1 (data dependency, taint)".to_string();
    out.push((
        CHART_IDS[1],
        title.clone(),
        grouped_bars(&title, "F1", &cats, &series),
    ));

    // 3. Flaky confusion: the LLM's if there is one, else the analyzer's.
    let table = m
        .confusion
        .iter()
        .find(|c| c.column == "llm")
        .or_else(|| m.confusion.first());
    let (title, svg) = match table {
        Some(c) => {
            let title = format!(
                "Flaky categories: {} against gold ({})",
                c.column, c.dataset
            );
            let svg = heatmap(&title, &c.confusion.labels, &c.confusion.matrix);
            (title, svg)
        }
        None => {
            let title = "Flaky categories: no flaky-test results".to_string();
            (title.clone(), heatmap(&title, &[], &[]))
        }
    };
    out.push((CHART_IDS[2], title, svg));

    // 4. Agreement coefficients with intervals.
    let mut rows = Vec::new();
    for a in &m.agreement {
        let colour = COLUMNS
            .iter()
            .position(|c| *c == a.column)
            .map_or(COLUMN_COLOURS[0], |k| COLUMN_COLOURS[k]);
        for (name, v) in [("κ", a.kappa), ("AC1", a.ac1), ("PABAK", a.pabak)] {
            rows.push((
                format!("{} {} {} {name}", a.dataset, a.task.name(), a.column),
                v.value,
                v.lo,
                v.hi,
                colour,
            ));
        }
    }
    let title = "Agreement with gold: kappa, AC1, PABAK (95% bootstrap)".to_string();
    out.push((
        CHART_IDS[3],
        title.clone(),
        intervals(&title, "coefficient", (-1.0, 1.0), &rows),
    ));

    // 5. Strategy ablation.
    let rows: Vec<_> = m
        .ablation
        .iter()
        .map(|a| {
            (
                format!(
                    "{} {} {}/{}{}",
                    a.dataset,
                    a.task.name(),
                    a.strategy,
                    a.shots,
                    a.p_value.map_or(String::new(), |p| format!(" p={p:.3}"))
                ),
                a.accuracy.value,
                a.accuracy.lo,
                a.accuracy.hi,
                COLUMN_COLOURS[1],
            )
        })
        .collect();
    let title =
        "Strategy ablation: LLM accuracy (95% bootstrap), McNemar p vs baseline".to_string();
    out.push((
        CHART_IDS[4],
        title.clone(),
        intervals(&title, "accuracy", (0.0, 1.0), &rows),
    ));
    out
}

/// The self-contained HTML report.
pub fn html(info: &ReportInfo, m: &Metrics, summary: &RunSummary) -> String {
    let md = markdown(info, m, summary);
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>crosscheck eval report</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}figure{margin:1.5em 0;border:1px solid #ddd;padding:8px}figcaption{font-weight:bold;margin-bottom:6px}</style></head><body>\n");
    s.push_str("<h1>crosscheck eval report</h1>\n");
    for (id, title, svg) in charts(m) {
        let _ = writeln!(
            s,
            "<figure id=\"{id}\"><figcaption>{}</figcaption>{svg}</figure>",
            escape(&title)
        );
    }
    // The tables, from the Markdown (pipe tables and lists; everything else as paragraphs).
    let mut in_table = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with('|') {
            if t.starts_with("|---") {
                continue;
            }
            if !in_table {
                s.push_str("<table>\n");
                in_table = true;
            }
            let cells: Vec<&str> = t.trim_matches('|').split('|').collect();
            s.push_str("<tr>");
            for c in cells {
                let _ = write!(s, "<td>{}</td>", escape(c.trim()));
            }
            s.push_str("</tr>\n");
            continue;
        }
        if in_table {
            s.push_str("</table>\n");
            in_table = false;
        }
        if let Some(h) = t.strip_prefix("## ") {
            let _ = writeln!(s, "<h2>{}</h2>", escape(h));
        } else if t.starts_with("# ") || t.is_empty() {
            continue;
        } else if let Some(li) = t.strip_prefix("- ") {
            let _ = writeln!(s, "<p>• {}</p>", escape(&li.replace("**", "")));
        } else {
            let _ = writeln!(s, "<p>{}</p>", escape(&t.replace('`', "")));
        }
    }
    if in_table {
        s.push_str("</table>\n");
    }
    s.push_str("</body></html>\n");
    s
}

fn column_cells(c: Option<&Column>) -> [String; 7] {
    match c {
        None => Default::default(),
        Some(c) => [
            c.label.clone().unwrap_or_default(),
            c.pass.map_or(String::new(), |p| p.to_string()),
            c.tp.to_string(),
            c.fp.to_string(),
            c.fn_.to_string(),
            c.tn.to_string(),
            c.score.map_or(String::new(), |v| format!("{v:.4}")),
        ],
    }
}

/// The raw per-item rows as CSV.
pub fn csv(results: &[ItemResult]) -> Result<String, String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "dataset",
        "id",
        "task",
        "project",
        "language",
        "strategy",
        "shots",
        "model",
        "status",
        "gold",
        "scored_against",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for c in COLUMNS {
        for f in ["label", "pass", "tp", "fp", "fn", "tn", "score"] {
            header.push(format!("{c}_{f}"));
        }
    }
    for h in ["prompt_tokens", "completion_tokens", "requests", "error"] {
        header.push(h.to_string());
    }
    w.write_record(&header).map_err(|e| e.to_string())?;
    for r in results {
        let mut row = vec![
            r.dataset.clone(),
            r.id.clone(),
            r.task.name().to_string(),
            r.project.clone(),
            r.language.clone(),
            r.strategy.clone(),
            r.shots.clone(),
            r.model.clone(),
            r.status.clone(),
            r.gold.clone().unwrap_or_default(),
            if r.gold.as_deref() == Some("analyzer") {
                REFERENCE_ANALYZER
            } else {
                REFERENCE_LABELS
            }
            .to_string(),
        ];
        for c in [Some(&r.analyzer), r.llm.as_ref(), r.hybrid.as_ref()] {
            row.extend(column_cells(c));
        }
        row.push(r.prompt_tokens.to_string());
        row.push(r.completion_tokens.to_string());
        row.push(r.requests.to_string());
        row.push(r.error.clone().unwrap_or_default());
        w.write_record(&row).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// Writes `report.md`, `report.html` and `results.csv` into `out`; returns their paths.
pub fn write_reports(
    out: &Path,
    info: &ReportInfo,
    m: &Metrics,
    summary: &RunSummary,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out)?;
    let md = out.join("report.md");
    std::fs::write(&md, markdown(info, m, summary))?;
    let h = out.join("report.html");
    std::fs::write(&h, html(info, m, summary))?;
    let c = out.join("results.csv");
    let text = csv(&summary.results).map_err(std::io::Error::other)?;
    std::fs::write(&c, text)?;
    // The metrics as JSON, for scripts.
    let j = out.join("metrics.json");
    std::fs::write(
        &j,
        serde_json::to_string_pretty(m).map_err(std::io::Error::other)?,
    )?;
    Ok(vec![md, h, c, j])
}
