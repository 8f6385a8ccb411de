//! `crosscheck equiv A B`: are two functions equivalent? The evidence chain (proof, sandboxed
//! differential testing, the LLM) is [`crate::exec::equiv::check`]; this file parses the
//! arguments and prints the result.
//!
//! ```text
//! crosscheck equiv A B [--format json|text] [--no-llm] [--trials N] [--seed S]
//! ```
//! `A` and `B` are files holding one function each, or `FILE:function`. JSON output:
//! `{"verdict", "tier", "method", "counterexample": {"inputs", "a", "b"} | null, "trials",
//! "llm": {...} | null}` where `trials` counts the inputs compared (inputs that hit undefined
//! behaviour, a timeout, or fall outside the common domain are discarded and not counted).
//! Exit code 0 whatever the verdict, 1 on errors (unreadable file, unknown function).

use super::OutputFormat;
use crate::analysis::equiv::Verdict;
use crate::exec::equiv::{check, load_side, DiffOptions, EquivOptions, EquivReport};
use crate::exec::sandbox::{self, Limits};
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
    /// Number of inputs for differential testing.
    #[arg(long, default_value_t = 300)]
    pub trials: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Wall-clock limit of one harness run, in seconds.
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
    let mut s = format!(
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
    );
    if let Some(c) = &det.counterexample {
        s.push_str(&format!(
            "  inputs: {}\n  A: {}\n  B: {}\n",
            c["inputs"], c["a"], c["b"]
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

pub fn run(args: &EquivArgs) -> anyhow::Result<i32> {
    let a = load_side(&args.a).map_err(|e| anyhow::anyhow!(e))?;
    let b = load_side(&args.b).map_err(|e| anyhow::anyhow!(e))?;
    if !sandbox::network_isolated() {
        tracing::warn!(
            "unshare is unavailable: the code under test runs without network isolation"
        );
    }
    let opts = EquivOptions {
        diff: DiffOptions {
            trials: args.trials,
            seed: args.seed,
            limits: Limits {
                wall: Duration::from_secs(args.timeout.max(1)),
                memory_mb: args.memory_mb.max(64),
            },
        },
        execute: true,
        llm_samples: (!args.no_llm).then_some(args.samples),
    };
    let report = check(&a, &b, &opts);
    for n in &report.deterministic.notes {
        tracing::info!("equiv: {n}");
    }
    let text = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&report.to_json())?,
        OutputFormat::Text => report_text(&report),
    };
    super::print_stdout(&text)?;
    Ok(0)
}
