//! `crosscheck equiv A B`: are two functions equivalent? The evidence chain (proof, sandboxed
//! differential testing, the LLM) is [`crate::exec::equiv::check`]; this file parses the
//! arguments and prints the result.
//!
//! ```text
//! crosscheck equiv A B [--format json|text] [--no-llm] [--trials N] [--seed S]
//!                      [--program [--inputs DIR] [--compare exact|tokens]] [--all-entries]
//! ```
//! `A` and `B` are files holding one function each, or `FILE:function`. With `--program` (and
//! automatically when no function is named and a file is a program that reads standard input,
//! or a program with no single entry function) the two files are compared as whole programs:
//! standard input -> (standard output, exit status) on the files of `--inputs` and on inputs
//! generated from their shape (`exec::program`). With `--all-entries` two files are compared
//! entry point by entry point (`exec::equiv::check_entries`; `compared.pairs` lists each pair
//! and its verdict). JSON output:
//! `{"verdict", "tier", "method", "compared": {"a", "b"}, "counterexample" | null, "trials",
//! "notes", "llm": {...} | null}` where `trials` counts the inputs compared (inputs that hit
//! undefined behaviour, a timeout, or fall outside the common domain are discarded and not
//! counted). A function counterexample is `{"inputs", "a", "b"}`; a program counterexample is
//! `{"input", "origin", "a": {"stdout", "exit"}, "b": ..}`. Exit code 0 whatever the verdict, 1
//! on errors (unreadable file, unknown function, several candidate entry functions).

use super::OutputFormat;
use crate::analysis::equiv::program::{program_entry, CompareMode};
use crate::analysis::equiv::smt::Bounds;
use crate::analysis::equiv::types::select_function;
use crate::analysis::equiv::Verdict;
use crate::exec::equiv::{
    check, check_entries, check_programs, load_side, split_spec, DiffOptions, EquivOptions,
    EquivReport,
};
use crate::exec::program::{read_inputs, Program, ProgramOptions};
use crate::exec::sandbox::{self, Limits};
use crate::syntax::{Language, ParsedFile};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct EquivArgs {
    /// The first function: FILE (one function) or FILE:function.
    pub a: String,
    /// The second function: FILE (one function) or FILE:function.
    pub b: String,
    #[arg(long, value_enum, default_value = "json")]
    pub format: OutputFormat,
    /// Deterministic evidence only (no LLM call).
    #[arg(long)]
    pub no_llm: bool,
    /// Skip the bounded symbolic check (Z3): no `bounded_equivalent` verdict, no solver-found
    /// counterexample.
    #[arg(long)]
    pub no_smt: bool,
    /// Number of inputs for differential testing (programs: inputs generated from the given
    /// ones; default 300 for functions, 100 for programs, and for programs up to three more
    /// batches of 100 while the runs so far take under 12 s).
    #[arg(long)]
    pub trials: Option<usize>,
    /// Compare the files as whole programs (stdin -> stdout and exit status).
    #[arg(long)]
    pub program: bool,
    /// Compare the two files entry point by entry point: every function that nothing else in
    /// its file calls (constructors and `main` included), paired by class, name and number of
    /// parameters. Not equivalent when a pair is refuted; otherwise the weakest pair's verdict.
    #[arg(long, conflicts_with = "program")]
    pub all_entries: bool,
    /// Sample inputs of the programs: every file of DIR (only its `*.in` files if it has any).
    #[arg(long, value_name = "DIR")]
    pub inputs: Option<std::path::PathBuf>,
    /// How program outputs are compared: `tokens` (whitespace-separated, as judges do) or
    /// `exact`.
    #[arg(long, default_value = "tokens", value_parser = ["tokens", "exact"])]
    pub compare: String,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Wall-clock limit of one harness run, in seconds (programs: of one run on one input, at
    /// most 10 s).
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Address-space limit of the code under test, in MB.
    #[arg(long, default_value_t = 2048)]
    pub memory_mb: u64,
    /// LLM samples (self-consistency).
    #[arg(long, default_value_t = 3)]
    pub samples: usize,
}

/// The text form of one report (shared with `crosscheck mutants`).
pub fn report_text(r: &EquivReport) -> String {
    let det = &r.deterministic;
    let mut s = String::new();
    for side in ["a", "b"] {
        if let Some(d) = r.compared.get(side).and_then(|v| v.as_str()) {
            s.push_str(&format!("{}: {d}\n", side.to_uppercase()));
        }
    }
    s.push_str(&format!(
        "{}: {} (tier {}, method {}, {} trial(s))\n",
        if r.verdict == Verdict::NotEquivalent {
            "NOT EQUIVALENT"
        } else {
            r.verdict.name()
        },
        r.verdict.name(),
        r.tier.map(|t| t.name()).unwrap_or("none"),
        r.method,
        det.trials
    ));
    if let Some(c) = &det.counterexample {
        let inputs = c.get("inputs").or_else(|| c.get("input")).cloned();
        if let Some(origin) = c.get("origin") {
            s.push_str(&format!("  input from: {origin}\n"));
        }
        s.push_str(&format!(
            "  inputs: {}\n  A: {}\n  B: {}\n",
            inputs.unwrap_or_default(),
            c["a"],
            c["b"]
        ));
    }
    for n in &det.notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    if let Some(l) = &r.llm {
        s.push_str(&format!("  llm: {}\n", l.json));
    }
    s
}

/// Whether a side given without a function name is best compared as a program: it is one
/// (top-level code or `main`) and either reads standard input or has no single entry function.
fn looks_like_program(spec: &str) -> bool {
    let (path, func) = split_spec(spec);
    if func.is_some() {
        return false;
    }
    let Some(language) = Language::from_path(&path) else {
        return false;
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return false;
    };
    let file = ParsedFile::parse(language, text);
    match program_entry(&file) {
        Some(entry) => entry.reads_stdin || select_function(&file, None).is_err(),
        None => false,
    }
}

fn print_report(args: &EquivArgs, report: &EquivReport) -> anyhow::Result<()> {
    for n in &report.deterministic.notes {
        tracing::info!("equiv: {n}");
    }
    let text = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&report.to_json())?,
        OutputFormat::Text => report_text(report),
    };
    super::print_stdout(&text)?;
    Ok(())
}

fn run_programs(args: &EquivArgs, limits: Limits) -> anyhow::Result<i32> {
    let load = |spec: &str| {
        let (path, func) = split_spec(spec);
        if let Some(f) = func {
            return Err(anyhow::anyhow!(
                "{spec}: a program is a whole file; drop `:{f}` or leave out --program"
            ));
        }
        Program::load(&path).map_err(|e| anyhow::anyhow!(e))
    };
    let a = load(&args.a)?;
    let b = load(&args.b)?;
    let inputs = match &args.inputs {
        Some(dir) => read_inputs(dir).map_err(|e| anyhow::anyhow!(e))?,
        None => Vec::new(),
    };
    let opts = ProgramOptions {
        inputs,
        generated: args.trials.unwrap_or(100),
        seed: args.seed,
        compare: CompareMode::parse(&args.compare).unwrap_or(CompareMode::Tokens),
        limits: Limits {
            wall: limits.wall.min(Duration::from_secs(10)),
            ..limits
        },
        // Without `--trials`, cheap programs get up to three more batches within 12 s.
        more_within: args.trials.is_none().then_some(Duration::from_secs(12)),
    };
    let report = check_programs(&a, &b, &opts, (!args.no_llm).then_some(args.samples));
    print_report(args, &report)?;
    Ok(0)
}

pub fn run(args: &EquivArgs) -> anyhow::Result<i32> {
    if !sandbox::network_isolated() {
        tracing::warn!(
            "unshare is unavailable: the code under test runs without network isolation"
        );
    }
    let limits = Limits {
        wall: Duration::from_secs(args.timeout.max(1)),
        memory_mb: args.memory_mb.max(64),
    };
    if args.all_entries {
        return run_entries(args, limits);
    }
    if args.program || looks_like_program(&args.a) || looks_like_program(&args.b) {
        return run_programs(args, limits);
    }
    if args.inputs.is_some() {
        anyhow::bail!(
            "--inputs applies to programs (--program); functions get generated arguments"
        );
    }
    let several = |e: String| {
        if e.contains("several functions could be the entry point") {
            anyhow::anyhow!("{e}, or compare every entry point with --all-entries")
        } else {
            anyhow::anyhow!(e)
        }
    };
    let (a, b) = match load_side(&args.a).and_then(|a| load_side(&args.b).map(|b| (a, b))) {
        Ok(sides) => sides,
        Err(e) => {
            // A function no harness can call (a parameter of an unsupported type, a variadic
            // one) may still be proved: the proof runs nothing.
            if let Some(report) = crate::exec::equiv::proof_of_specs(&args.a, &args.b) {
                print_report(args, &report)?;
                return Ok(0);
            }
            return Err(several(e));
        }
    };
    let opts = function_options(args, limits);
    let report = check(&a, &b, &opts);
    print_report(args, &report)?;
    Ok(0)
}

fn function_options(args: &EquivArgs, limits: Limits) -> EquivOptions {
    EquivOptions {
        diff: DiffOptions {
            trials: args.trials.unwrap_or(300),
            seed: args.seed,
            limits,
            symbolic: (!args.no_smt).then(Bounds::default),
        },
        execute: true,
        llm_samples: (!args.no_llm).then_some(args.samples),
    }
}

fn run_entries(args: &EquivArgs, limits: Limits) -> anyhow::Result<i32> {
    for spec in [&args.a, &args.b] {
        if let (_, Some(f)) = split_spec(spec) {
            anyhow::bail!("{spec}: --all-entries compares whole files; drop `:{f}`");
        }
    }
    if args.inputs.is_some() {
        anyhow::bail!("--inputs applies to programs (--program)");
    }
    let opts = function_options(args, limits);
    let report = check_entries(
        std::path::Path::new(&args.a),
        std::path::Path::new(&args.b),
        &opts,
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    print_report(args, &report)?;
    Ok(0)
}
