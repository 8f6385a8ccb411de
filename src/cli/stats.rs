//! `crosscheck stats`: agreement statistics over a label table (the only I/O around the pure
//! [`crate::stats`] module).
//!
//! Modes (mutually exclusive):
//! * default: `--a COL --b COL` — Po, Cohen's kappa, Scott's pi, Gwet's AC1, PABAK, precision /
//!   recall / F1 of a against reference b, decision gap, per-class scores, bootstrap CIs.
//! * `--mcnemar --a COL --b COL --truth COL` — McNemar's test of a's and b's accuracy.
//! * `--instability --runs C1,C2,...` — run-to-run instability of repeated verdicts.
//! * `--jaccard --a COL --b COL` — Jaccard similarity of set-valued columns.
//!
//! Exit codes: 0 on success, 2 on a usage or input error (message on stderr).

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use crate::stats::bootstrap::{BootstrapOptions, DEFAULT_RESAMPLES};
use crate::stats::input::{InputError, InputFormat, Table};
use crate::stats::instability::{instability, Instability};
use crate::stats::jaccard::{jaccard_summary, JaccardSummary};
use crate::stats::labels::{label_rows, LabelError, LabelledPairs, LabelledRows};
use crate::stats::mcnemar::{mcnemar, McNemar, McNemarMethod};
use crate::stats::report::{compute, StatsOptions, StatsReport};
use crate::stats::short_label;
use crate::syntax::Cancel;

/// Output syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

/// Input syntax override (default: by extension, then by content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormatArg {
    Csv,
    Tsv,
    Jsonl,
}

/// Arguments of `crosscheck stats`.
#[derive(clap::Args, Debug, Clone)]
pub struct StatsArgs {
    /// Label table: CSV/TSV with a header row, or JSON Lines (one object per line).
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// Column of the rater under evaluation (e.g. the LLM).
    #[arg(long, value_name = "COL")]
    pub a: Option<String>,
    /// Column of the reference rater (precision and recall are a's against b).
    #[arg(long, value_name = "COL")]
    pub b: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Declared categories (comma-separated); sets q for AC1 and PABAK.
    /// Default: 2 for binary labels, else the observed labels.
    #[arg(long, value_delimiter = ',', value_name = "A,B,C")]
    pub categories: Option<Vec<String>>,
    /// Bootstrap seed (decimal or 0x-prefixed hex).
    #[arg(long, value_parser = parse_seed, default_value = "0x5eed", value_name = "SEED")]
    pub seed: u64,
    /// Bootstrap resamples (0 disables the confidence intervals).
    #[arg(long, default_value_t = DEFAULT_RESAMPLES, value_name = "N")]
    pub bootstrap: usize,
    /// McNemar's test of a against b, both scored against --truth.
    #[arg(long, conflicts_with_all = ["instability", "jaccard"])]
    pub mcnemar: bool,
    /// Ground-truth column for --mcnemar.
    #[arg(long, value_name = "COL")]
    pub truth: Option<String>,
    /// Run-to-run instability over the --runs columns.
    #[arg(long, conflicts_with = "jaccard")]
    pub instability: bool,
    /// Columns holding the verdicts of repeated runs (comma-separated, at least 2).
    #[arg(long, value_delimiter = ',', value_name = "COL1,COL2,...")]
    pub runs: Option<Vec<String>>,
    /// Jaccard similarity of the sets in columns --a and --b.
    #[arg(long)]
    pub jaccard: bool,
    /// Separator of set items inside a CSV cell (JSON arrays need none).
    #[arg(long, default_value = ";", value_name = "SEP")]
    pub set_separator: String,
    /// Input format (default: by extension, then by content).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_format: Option<InputFormatArg>,
}

fn parse_seed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    parsed.map_err(|e| format!("invalid seed {s:?}: {e}"))
}

/// Runs `crosscheck stats`, printing to stdout / stderr. Returns the exit code.
pub fn run(args: &StatsArgs) -> anyhow::Result<i32> {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run_with(args, &mut stdout.lock(), &mut stderr.lock())
}

/// A user-facing failure: message for stderr, exit code 2.
struct Failure(String);

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        Failure(e.to_string())
    }
}

/// Like [`run`], writing the report to `out` and errors to `err`.
pub fn run_with(args: &StatsArgs, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    match execute(args) {
        Ok(text) => {
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                out.write_all(b"\n")?;
            }
            out.flush()?;
            Ok(0)
        }
        Err(Failure(message)) => {
            writeln!(err, "crosscheck stats: error: {message}")?;
            Ok(2)
        }
    }
}

fn required<'a>(value: &'a Option<String>, flag: &str, mode: &str) -> Result<&'a str, Failure> {
    value
        .as_deref()
        .ok_or_else(|| Failure(format!("{mode} needs {flag} COL")))
}

fn execute(args: &StatsArgs) -> Result<String, Failure> {
    let bytes = std::fs::read(&args.input)
        .map_err(|e| Failure(format!("cannot read {}: {e}", args.input.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    let format = match args.input_format {
        Some(InputFormatArg::Csv) => InputFormat::Csv,
        Some(InputFormatArg::Tsv) => InputFormat::Tsv,
        Some(InputFormatArg::Jsonl) => InputFormat::Jsonl,
        None => InputFormat::detect(args.input.extension().and_then(|e| e.to_str()), &text),
    };
    let table = Table::parse(&text, format).map_err(|e| match e {
        InputError::Empty => Failure(format!(
            "{} is empty: no header, no rows",
            args.input.display()
        )),
        other => Failure(format!("{}: {other}", args.input.display())),
    })?;
    if table.rows.is_empty() {
        return Err(Failure(format!(
            "{} has no data rows",
            args.input.display()
        )));
    }
    let declared = args.categories.as_deref();
    if args.instability {
        run_instability(args, &table, declared)
    } else if args.mcnemar {
        run_mcnemar(args, &table, declared)
    } else if args.jaccard {
        run_jaccard(args, &table)
    } else {
        run_agreement(args, &table, declared)
    }
}

/// Labels of `columns`, mapped to a common label space, with errors located by line.
fn labelled(
    table: &Table,
    columns: &[&str],
    declared: Option<&[String]>,
) -> Result<LabelledRows, Failure> {
    let raw = table.labels(columns)?;
    label_rows(&raw, declared).map_err(|e| match e {
        LabelError::Undeclared { label, row, column } => {
            let line = table.rows.get(row).map_or(0, |r| r.line);
            let col = columns.get(column).copied().unwrap_or("?");
            Failure(format!(
                "line {line}: label {:?} in column {col:?} is not one of the declared \
                 categories ({})",
                short_label(&label),
                declared.unwrap_or_default().join(", ")
            ))
        }
        other => Failure(format!("--categories: {other}")),
    })
}

fn no_items(skipped: usize, what: &str) -> Failure {
    Failure(format!(
        "no item has {what} ({skipped} row(s) skipped for a missing or empty label)"
    ))
}

fn to_json<T: Serialize>(value: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(value).map_err(|e| Failure(format!("cannot encode JSON: {e}")))
}

fn run_agreement(
    args: &StatsArgs,
    table: &Table,
    declared: Option<&[String]>,
) -> Result<String, Failure> {
    let a = required(&args.a, "--a", "stats")?;
    let b = required(&args.b, "--b", "stats")?;
    let rows = labelled(table, &[a, b], declared)?;
    if rows.rows.is_empty() {
        return Err(no_items(rows.skipped, "labels in both --a and --b"));
    }
    let pairs = LabelledPairs {
        pairs: rows
            .rows
            .iter()
            .filter_map(|r| match r.as_slice() {
                [x, y] => Some((*x, *y)),
                _ => None,
            })
            .collect(),
        space: rows.space,
        skipped: rows.skipped,
        notes: rows.notes,
    };
    let options = StatsOptions {
        bootstrap: BootstrapOptions {
            resamples: args.bootstrap,
            seed: args.seed,
            ..BootstrapOptions::default()
        },
    };
    let report = compute(&pairs, &options, &Cancel::never());
    match args.format {
        OutputFormat::Json => to_json(&report),
        OutputFormat::Text => Ok(render_agreement(a, b, &report)),
    }
}

#[derive(Serialize)]
struct McNemarOutput<'a> {
    #[serde(flatten)]
    test: &'a McNemar,
    skipped: usize,
    mode: &'static str,
    categories: &'a [String],
    notes: &'a [String],
}

fn run_mcnemar(
    args: &StatsArgs,
    table: &Table,
    declared: Option<&[String]>,
) -> Result<String, Failure> {
    let a = required(&args.a, "--a", "--mcnemar")?;
    let b = required(&args.b, "--b", "--mcnemar")?;
    let truth = required(&args.truth, "--truth", "--mcnemar")?;
    let rows = labelled(table, &[a, b, truth], declared)?;
    if rows.rows.is_empty() {
        return Err(no_items(
            rows.skipped,
            "labels in all of --a, --b and --truth",
        ));
    }
    let outcomes: Vec<(bool, bool)> = rows
        .rows
        .iter()
        .filter_map(|r| match r.as_slice() {
            [x, y, t] => Some((x == t, y == t)),
            _ => None,
        })
        .collect();
    let test = mcnemar(&outcomes);
    match args.format {
        OutputFormat::Json => to_json(&McNemarOutput {
            test: &test,
            skipped: rows.skipped,
            mode: if rows.space.binary {
                "binary"
            } else {
                "multiclass"
            },
            categories: &rows.space.categories,
            notes: &rows.notes,
        }),
        OutputFormat::Text => Ok(render_mcnemar(
            a,
            b,
            truth,
            &test,
            rows.skipped,
            &rows.notes,
        )),
    }
}

#[derive(Serialize)]
struct InstabilityOutput<'a> {
    #[serde(flatten)]
    result: &'a Instability,
    columns: &'a [String],
    skipped: usize,
    mode: &'static str,
    categories: &'a [String],
    notes: &'a [String],
}

fn run_instability(
    args: &StatsArgs,
    table: &Table,
    declared: Option<&[String]>,
) -> Result<String, Failure> {
    let runs: Vec<String> = args
        .runs
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .collect();
    if runs.len() < 2 {
        return Err(Failure(
            "--instability needs --runs COL1,COL2[,...] with at least two columns".to_string(),
        ));
    }
    let columns: Vec<&str> = runs.iter().map(String::as_str).collect();
    let rows = labelled(table, &columns, declared)?;
    if rows.rows.is_empty() {
        return Err(no_items(rows.skipped, "a verdict in every --runs column"));
    }
    let result = instability(&rows.rows);
    match args.format {
        OutputFormat::Json => to_json(&InstabilityOutput {
            result: &result,
            columns: &runs,
            skipped: rows.skipped,
            mode: if rows.space.binary {
                "binary"
            } else {
                "multiclass"
            },
            categories: &rows.space.categories,
            notes: &rows.notes,
        }),
        OutputFormat::Text => Ok(render_instability(
            &runs,
            &result,
            rows.skipped,
            &rows.notes,
        )),
    }
}

#[derive(Serialize)]
struct JaccardOutput<'a> {
    #[serde(flatten)]
    summary: &'a JaccardSummary,
    skipped: usize,
    notes: Vec<String>,
}

fn run_jaccard(args: &StatsArgs, table: &Table) -> Result<String, Failure> {
    let a = required(&args.a, "--a", "--jaccard")?;
    let b = required(&args.b, "--b", "--jaccard")?;
    let cells = table.sets(a, b, &args.set_separator)?;
    let mut skipped = 0;
    let mut items = Vec::with_capacity(cells.len());
    for pair in cells {
        match pair {
            (Some(x), Some(y)) => items.push((x, y)),
            _ => skipped += 1,
        }
    }
    if items.is_empty() {
        return Err(Failure(format!(
            "no item has sets in both --a and --b ({skipped} row(s) skipped for a missing cell)"
        )));
    }
    let summary = jaccard_summary(&items);
    let mut notes = Vec::new();
    if summary.both_empty > 0 {
        notes.push(format!(
            "{} item(s) with two empty sets have no Jaccard value and are excluded from mean",
            summary.both_empty
        ));
    }
    match args.format {
        OutputFormat::Json => to_json(&JaccardOutput {
            summary: &summary,
            skipped,
            notes,
        }),
        OutputFormat::Text => Ok(render_jaccard(a, b, &summary, skipped, &notes)),
    }
}

// ---------------------------------------------------------------------------------------------
// Text rendering.

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.4}"))
}

/// A label shortened for table display (at most 20 characters).
fn short(label: &str) -> String {
    const MAX: usize = 20;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let head: String = label.chars().take(MAX - 1).collect();
        format!("{head}…")
    }
}

fn push_notes(s: &mut String, notes: &[String]) {
    if !notes.is_empty() {
        s.push_str("\nnotes:\n");
        for n in notes {
            s.push_str(&format!("  - {n}\n"));
        }
    }
}

fn render_agreement(a: &str, b: &str, r: &StatsReport) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "agreement of a = {a:?} with reference b = {b:?}\n\
         items: {} (skipped {})   labels: {}, q = {} [{}]\n",
        r.n,
        r.skipped,
        r.mode,
        r.q,
        r.categories
            .iter()
            .map(|c| short(c))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if let Some(c) = &r.confusion {
        s.push_str("\nconfusion (rows: a, columns: b)\n");
        let width = c
            .labels
            .iter()
            .map(|l| short(l).chars().count() + 2)
            .chain(c.matrix.iter().flatten().map(|x| x.to_string().len()))
            .max()
            .unwrap_or(1)
            .max(5);
        s.push_str(&format!("{:>width$}", ""));
        for l in &c.labels {
            s.push_str(&format!(" {:>width$}", format!("b={}", short(l))));
        }
        s.push('\n');
        for (l, row) in c.labels.iter().zip(&c.matrix) {
            s.push_str(&format!("{:>width$}", format!("a={}", short(l))));
            for x in row {
                s.push_str(&format!(" {x:>width$}"));
            }
            s.push('\n');
        }
    }
    let ci_for = |name: &str| -> String {
        let Some(ci) = &r.ci else {
            return String::new();
        };
        let interval = match name {
            "kappa" => ci.kappa,
            "ac1" => ci.ac1,
            "pabak" => ci.pabak,
            "f1" => ci.f1,
            _ => return String::new(),
        };
        match (interval.lo, interval.hi) {
            (Some(lo), Some(hi)) => format!("[{lo:.4}, {hi:.4}]"),
            _ => "n/a".to_string(),
        }
    };
    s.push('\n');
    match &r.ci {
        Some(ci) => s.push_str(&format!(
            "{:<26}{:>8}   {:.0}% CI (percentile bootstrap, {} resamples, seed {:#x})\n",
            "coefficient",
            "value",
            ci.level * 100.0,
            ci.completed,
            ci.seed
        )),
        None => s.push_str(&format!("{:<26}{:>8}\n", "coefficient", "value")),
    }
    let mut lines: Vec<(&str, Option<f64>, String)> = vec![
        ("observed agreement Po", r.po, String::new()),
        ("Cohen's kappa", r.kappa, ci_for("kappa")),
        ("Scott's pi", r.scott_pi, String::new()),
        ("Gwet's AC1", r.ac1, ci_for("ac1")),
        ("PABAK", r.pabak, ci_for("pabak")),
    ];
    if r.mode == "binary" {
        lines.extend([
            ("precision (a vs b)", r.precision, String::new()),
            ("recall (a vs b)", r.recall, String::new()),
            ("F1", r.f1, ci_for("f1")),
            ("accuracy on b-positive", r.acc_pos, String::new()),
            ("accuracy on b-negative", r.acc_neg, String::new()),
            ("gap = acc(neg) - acc(pos)", r.gap, String::new()),
            ("macro F1", r.macro_f1, String::new()),
        ]);
    } else {
        lines.extend([
            ("macro precision", r.macro_precision, String::new()),
            ("macro recall", r.macro_recall, String::new()),
            ("macro F1", r.macro_f1, ci_for("f1")),
        ]);
    }
    for (name, value, ci) in lines {
        let line = format!("{name:<26}{:>8}   {ci}", num(value));
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s.push_str(&format!(
        "\n{:<21}{:>10}{:>10}{:>10}{:>9}{:>11}\n",
        "class", "precision", "recall", "F1", "support", "predicted"
    ));
    for c in &r.per_class {
        s.push_str(&format!(
            "{:<21}{:>10}{:>10}{:>10}{:>9}{:>11}\n",
            short(&c.label),
            num(c.precision),
            num(c.recall),
            num(c.f1),
            c.support,
            c.predicted
        ));
    }
    push_notes(&mut s, &r.notes);
    s
}

fn render_mcnemar(
    a: &str,
    b: &str,
    truth: &str,
    t: &McNemar,
    skipped: usize,
    notes: &[String],
) -> String {
    let mut s = format!(
        "McNemar's test: a = {a:?} vs b = {b:?}, both scored against {truth:?}\n\
         items: {} (skipped {skipped})\n\n\
         {:<12}{:>12}{:>10}\n{:<12}{:>12}{:>10}\n{:<12}{:>12}{:>10}\n\n",
        t.n,
        "",
        "b correct",
        "b wrong",
        "a correct",
        t.both_correct,
        t.a_only_correct,
        "a wrong",
        t.b_only_correct,
        t.both_wrong,
    );
    s.push_str(&format!(
        "accuracy a: {}   accuracy b: {}\n",
        num(t.acc_a),
        num(t.acc_b)
    ));
    let method = match t.method {
        McNemarMethod::ExactBinomial => "exact two-sided binomial test (statistic = min(b, c))",
        McNemarMethod::ChiSquareCorrected => {
            "chi-square with continuity correction, 1 df (statistic = (|b-c|-1)^2/(b+c))"
        }
    };
    s.push_str(&format!(
        "discordant pairs: {} -> {method}\nstatistic: {:.6}   p-value: {:.6}\n",
        t.discordant, t.statistic, t.p_value
    ));
    push_notes(&mut s, notes);
    s
}

fn render_instability(
    runs: &[String],
    r: &Instability,
    skipped: usize,
    notes: &[String],
) -> String {
    let mut s = format!(
        "run-to-run instability over {} runs ({})\nitems: {} (skipped {skipped})\n\n",
        r.runs,
        runs.join(", "),
        r.n
    );
    s.push_str(&format!(
        "{:<36}{:>8}\n{:<36}{:>8}\n{:<36}{:>8}\n{:<36}{:>8}\n",
        "items not unanimous",
        r.unstable,
        "share not unanimous",
        num(r.unstable_share),
        "mean share disagreeing with majority",
        num(r.mean_disagreement),
        "items with a tied majority",
        r.majority_ties
    ));
    push_notes(&mut s, notes);
    s
}

fn render_jaccard(
    a: &str,
    b: &str,
    r: &JaccardSummary,
    skipped: usize,
    notes: &[String],
) -> String {
    let mut s = format!(
        "Jaccard similarity of sets a = {a:?} and b = {b:?}\nitems: {} (skipped {skipped})\n\n",
        r.n
    );
    s.push_str(&format!(
        "{:<28}{:>8}\n{:<28}{:>8}\n{:<28}{:>8}\n{:<28}{:>8}\n",
        "mean Jaccard per item",
        num(r.mean),
        "pooled (micro) Jaccard",
        num(r.micro),
        "items with equal sets",
        r.exact_matches,
        "items with two empty sets",
        r.both_empty
    ));
    push_notes(&mut s, notes);
    s
}
