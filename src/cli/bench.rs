//! `crosscheck bench`: throughput and peak memory of parsing alone (the reference: bare
//! tree-sitter) and of parsing plus every deterministic analysis, on the same files in the same
//! run, reported with their ratio. Speed claims live here, not in timed unit tests.

use super::inputs::{collect_inputs, InputArgs};
use super::OutputFormat;
use crate::analysis::callgraph::{build_call_graph, SourceUnit};
use crate::analysis::pointsto::analyze_points_to;
use crate::analysis::report::build_report;
use crate::analysis::taint::{analyze_taint, TaintSpecs};
use crate::syntax::{Cancel, Language, ParsedFile};
use serde::Serialize;
use std::time::Instant;

#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Repeat each phase this many times and keep the fastest run.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Which phases to run (run them in separate processes to attribute peak memory).
    #[arg(long, value_enum, default_value_t = Phase::Both)]
    pub phase: Phase,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    Parse,
    Full,
    Both,
}

#[derive(Debug, Serialize)]
pub struct BenchResult {
    pub files: usize,
    pub refused: usize,
    pub lines: usize,
    pub bytes: usize,
    pub functions: usize,
    /// Seconds for bare tree-sitter parsing of every file.
    pub parse_seconds: Option<f64>,
    /// Seconds for parsing plus all analyses (functions, CFG, data dependency, call graph).
    pub full_seconds: Option<f64>,
    pub parse_lines_per_second: Option<f64>,
    pub full_lines_per_second: Option<f64>,
    /// full_seconds / parse_seconds.
    pub ratio: Option<f64>,
    /// Seconds for points-to (C/C++ files) alone, inside the full phase's work.
    pub points_to_seconds: Option<f64>,
    /// Seconds for taint analysis alone (call graph and points-to computed beforehand).
    pub taint_seconds: Option<f64>,
    /// Why points-to stopped short of its fixpoint (work bound, depth limit), if it did: the
    /// time above is for a partial result then.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub points_to_incomplete: Vec<String>,
    /// (points_to_seconds + taint_seconds) / parse_seconds.
    pub taint_points_to_ratio: Option<f64>,
    /// Peak resident set size of this process (VmHWM), in MiB; Linux only.
    pub peak_rss_mib: Option<f64>,
}

/// Peak resident set size of the current process, from /proc/self/status (Linux).
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

pub fn run(args: &BenchArgs) -> anyhow::Result<i32> {
    let inputs = collect_inputs(&args.inputs);
    let refused = inputs.refused.len();
    let sources = inputs.sources;
    let lines: usize = sources.iter().map(|s| s.text.lines().count()).sum();
    let bytes: usize = sources.iter().map(|s| s.text.len()).sum();
    let repeat = args.repeat.max(1);
    let cancel = Cancel::never();

    let mut parse_seconds = None;
    if args.phase != Phase::Full {
        let mut best = f64::INFINITY;
        for _ in 0..repeat {
            let start = Instant::now();
            let mut nodes = 0usize;
            for s in &sources {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&s.language.grammar())?;
                if let Some(tree) = parser.parse(&s.text, None) {
                    nodes += tree.root_node().descendant_count();
                }
            }
            std::hint::black_box(nodes);
            best = best.min(start.elapsed().as_secs_f64());
        }
        parse_seconds = Some(best);
    }

    let mut full_seconds = None;
    let mut functions = 0;
    if args.phase != Phase::Parse {
        let mut best = f64::INFINITY;
        for _ in 0..repeat {
            let start = Instant::now();
            let parsed: Vec<(String, ParsedFile)> = sources
                .iter()
                .map(|s| {
                    (
                        s.path.clone(),
                        ParsedFile::parse(s.language, s.text.clone()),
                    )
                })
                .collect();
            let report = build_report(&parsed, Vec::new(), &cancel);
            functions = report.files.iter().map(|f| f.functions.len()).sum();
            std::hint::black_box(&report);
            best = best.min(start.elapsed().as_secs_f64());
        }
        full_seconds = Some(best);
    }

    // Taint and points-to alone, on files parsed beforehand (their inputs, the call graph
    // included, are not timed).
    let mut points_to_seconds = None;
    let mut taint_seconds = None;
    let mut points_to_incomplete = Vec::new();
    if args.phase != Phase::Parse {
        let parsed: Vec<(String, ParsedFile)> = sources
            .iter()
            .map(|s| {
                (
                    s.path.clone(),
                    ParsedFile::parse(s.language, s.text.clone()),
                )
            })
            .collect();
        let units: Vec<SourceUnit<'_>> = parsed
            .iter()
            .map(|(p, f)| SourceUnit {
                path: p.clone(),
                file: f,
            })
            .collect();
        let c_units: Vec<SourceUnit<'_>> = units
            .iter()
            .filter(|u| matches!(u.file.language, Language::C | Language::Cpp))
            .map(|u| SourceUnit {
                path: u.path.clone(),
                file: u.file,
            })
            .collect();
        let call_graph = build_call_graph(&units, &cancel);
        let specs = TaintSpecs::builtin();
        let (mut best_pt, mut best_taint) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..repeat {
            let start = Instant::now();
            let pt = (!c_units.is_empty()).then(|| analyze_points_to(&c_units, &cancel));
            best_pt = best_pt.min(start.elapsed().as_secs_f64());
            if let Some(pt) = pt.as_ref().filter(|pt| pt.partial) {
                points_to_incomplete = pt.errors.iter().map(|e| e.message.clone()).collect();
            }
            let start = Instant::now();
            let taint = analyze_taint(&units, Some(&call_graph), pt.as_ref(), &specs, &cancel);
            std::hint::black_box(&taint);
            best_taint = best_taint.min(start.elapsed().as_secs_f64());
        }
        points_to_seconds = Some(best_pt);
        taint_seconds = Some(best_taint);
    }

    let per_sec = |s: Option<f64>| s.filter(|&t| t > 0.0).map(|t| lines as f64 / t);
    let result = BenchResult {
        files: sources.len(),
        refused,
        lines,
        bytes,
        functions,
        parse_seconds,
        full_seconds,
        parse_lines_per_second: per_sec(parse_seconds),
        full_lines_per_second: per_sec(full_seconds),
        ratio: match (parse_seconds, full_seconds) {
            (Some(p), Some(f)) if p > 0.0 => Some(f / p),
            _ => None,
        },
        points_to_seconds,
        taint_seconds,
        points_to_incomplete,
        taint_points_to_ratio: match (parse_seconds, points_to_seconds, taint_seconds) {
            (Some(p), Some(a), Some(b)) if p > 0.0 => Some((a + b) / p),
            _ => None,
        },
        peak_rss_mib: peak_rss_mib(),
    };
    let out = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&result)?,
        OutputFormat::Text => {
            let f = |x: Option<f64>, d: usize| {
                x.map(|v| format!("{v:.d$}")).unwrap_or_else(|| "-".into())
            };
            format!(
                "files {} (refused {}), lines {}, bytes {}, functions {}\n\
                 parse (tree-sitter alone): {} s, {} lines/s\n\
                 parse + analyses:          {} s, {} lines/s\n\
                 ratio full/parse: {}\n\
                 points-to alone: {} s, taint alone: {} s, ratio (points-to + taint)/parse: {}\n\
                 {}peak RSS: {} MiB",
                result.files,
                result.refused,
                result.lines,
                result.bytes,
                result.functions,
                f(result.parse_seconds, 3),
                f(result.parse_lines_per_second, 0),
                f(result.full_seconds, 3),
                f(result.full_lines_per_second, 0),
                f(result.ratio, 2),
                f(result.points_to_seconds, 3),
                f(result.taint_seconds, 3),
                f(result.taint_points_to_ratio, 2),
                result
                    .points_to_incomplete
                    .iter()
                    .map(|m| format!("points-to partial: {m}\n"))
                    .collect::<String>(),
                f(result.peak_rss_mib, 1),
            )
        }
    };
    super::print_stdout(&out)?;
    Ok(0)
}
