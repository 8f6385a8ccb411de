//! `crosscheck analyze`: the deterministic analyses of files and directories as JSON or text.

use super::inputs::{collect_inputs, InputArgs};
use super::OutputFormat;
use crate::analysis::filerole::RoleReport;
use crate::analysis::report::{build_report, AnalyzeReport};
use crate::syntax::Cancel;
use std::fmt::Write as _;

#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
}

/// Runs the analyses; returns the report and the exit code (0 all analysed, 1 some refused).
pub fn analyze(args: &AnalyzeArgs) -> (AnalyzeReport, i32) {
    let cancel = Cancel::never();
    let inputs = collect_inputs(&args.inputs);
    let roles = inputs.roles();
    let (parsed, refused) = inputs.parse(&cancel);
    let mut report = build_report(&parsed, refused, &cancel);
    // Findings outside the product are notes (the default file-role profile; `check` reads
    // the user's).
    for fr in &mut report.files {
        if let Some(role) = roles.get(&fr.file) {
            fr.set_role(*role, &RoleReport::default());
        }
    }
    let code = if report.files.iter().any(|f| !f.analysed) {
        1
    } else {
        0
    };
    (report, code)
}

pub fn run(args: &AnalyzeArgs) -> anyhow::Result<i32> {
    let (report, code) = analyze(args);
    for f in report.files.iter().filter(|f| !f.analysed) {
        for e in &f.errors {
            eprintln!("crosscheck: {}: {}", f.file, e.message);
        }
    }
    let out = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&report)?,
        OutputFormat::Text => render_text(&report),
    };
    super::print_stdout(&out)?;
    Ok(code)
}

/// A human-readable summary of a report.
pub fn render_text(report: &AnalyzeReport) -> String {
    let mut s = String::new();
    for f in &report.files {
        let lang = f.language.map(|l| l.name()).unwrap_or("unknown");
        let _ = writeln!(
            s,
            "{} ({lang}): {} functions, {} errors{}",
            f.file,
            f.functions.len(),
            f.errors.len(),
            if f.analysed { "" } else { " [not analysed]" }
        );
        for e in &f.errors {
            let _ = writeln!(s, "  error line {}: {}", e.line, e.message);
        }
        for func in &f.functions {
            let _ = writeln!(
                s,
                "  {}{} lines {}-{}: cyclomatic {}, {} nodes, {} edges{}",
                func.name,
                func.signature,
                func.start_line,
                func.end_line,
                func.cyclomatic,
                func.cfg.nodes.len(),
                func.cfg.edges.len(),
                if func.partial { " (partial)" } else { "" }
            );
            for (var, deps) in &func.data_dependencies {
                if !deps.is_empty() {
                    let _ = writeln!(s, "    {var} <- {}", deps.join(", "));
                }
            }
        }
    }
    let _ = writeln!(s, "call graph: {} edges", report.call_graph.len());
    for e in &report.call_graph {
        let callee_file = e.callee.file.as_deref().unwrap_or("external");
        let _ = writeln!(
            s,
            "  {}:{} -> {}:{} (line {})",
            e.caller.file.as_deref().unwrap_or("?"),
            e.caller.name,
            callee_file,
            e.callee.name,
            e.line
        );
    }
    s
}
