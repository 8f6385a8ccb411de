//! The command-line front end: argument parsing, input collection, output. Calls the same core
//! as the language server.

pub mod analyze;
pub mod ask;
pub mod bench;
pub mod check;
pub mod equiv;
pub mod eval;
pub mod flaky;
pub mod inputs;
pub mod lsp;
pub mod mutants;
pub mod stats;
pub mod telemetry;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Json,
    Text,
}

/// crosscheck: deterministic code analysis, cross-checked LLM judgments, agreement telemetry.
#[derive(Debug, Parser)]
#[command(name = "crosscheck", version, about, propagate_version = true)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace). CROSSCHECK_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse files and run the deterministic analyses (CFG, call graph, data dependency).
    Analyze(analyze::AnalyzeArgs),
    /// Ask the configured LLM about a file or function and cross-check its answer against the
    /// deterministic analysis (tiers, Layer-1 scores, instability).
    Ask(ask::AskArgs),
    /// Measure parsing and analysis throughput and peak memory on a corpus.
    Bench(bench::BenchArgs),
    /// Findings for CI as SARIF 2.1.0, JSON or text, with exit codes to gate on and a baseline.
    Check(check::CheckArgs),
    /// Suspected root causes of flaky tests (Java, Python): static signals, then the LLM.
    Flaky(flaky::FlakyArgs),
    /// Are two functions equivalent? Normalisation proof, differential testing, then the LLM.
    Equiv(equiv::EquivArgs),
    /// Evaluate analyzer, LLM and hybrid on data sets: reports (Markdown, HTML, CSV).
    Eval(eval::EvalArgs),
    /// Are the surviving mutants equivalent? MutantBench, EqBench, cargo-mutants, mutmut, PIT.
    Mutants(mutants::MutantsArgs),
    /// Agreement statistics over paired labels (kappa, Scott's pi, AC1, PABAK, F1, McNemar, ...).
    Stats(stats::StatsArgs),
    /// The telemetry store: export, import, summary, labels, pruning.
    Telemetry(telemetry::TelemetryArgs),
    /// Run the language server on stdin/stdout.
    Lsp(lsp::LspArgs),
    /// Measure didChange -> publishDiagnostics latency and LLM requests per edit.
    BenchLsp(lsp::BenchLspArgs),
    /// Print a JSON Schema of an output contract.
    Schema {
        /// Which contract.
        #[arg(value_enum)]
        which: SchemaKind,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SchemaKind {
    Analyze,
    /// The settings an editor may send to `crosscheck lsp` (VS Code `contributes.configuration`).
    LspSettings,
    /// One line of `crosscheck eval --jsonl` input.
    EvalItem,
}

/// Writes to stdout, treating a closed pipe (`crosscheck analyze x | head`) as success.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let res = out
        .write_all(text.as_bytes())
        .and_then(|_| {
            if text.ends_with('\n') {
                Ok(())
            } else {
                out.write_all(b"\n")
            }
        })
        .and_then(|_| out.flush());
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

pub fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CROSSCHECK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Logs always go to stderr: stdout carries data (and the protocol in `lsp` mode). Colour
    // only when stderr is a terminal and NO_COLOR is unset: editors log the server's stderr as
    // text, where escape codes are noise (Neovim files them at ERROR).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(stderr_wants_colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        ))
        .try_init();
}

/// Colour codes in logs: only on a terminal, and never when `NO_COLOR` is set.
fn stderr_wants_colour(is_terminal: bool, no_color: bool) -> bool {
    is_terminal && !no_color
}

/// Runs a parsed command line of the CLI front end (every command but the language server's,
/// which `app::run` runs); returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    init_tracing(cli.verbose);
    let result = match &cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Ask(args) => ask::run(args, cli.verbose),
        Command::Bench(args) => bench::run(args),
        Command::Check(args) => check::run(args),
        Command::Flaky(args) => flaky::run(args),
        Command::Equiv(args) => equiv::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Mutants(args) => mutants::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Telemetry(args) => telemetry::run(args),
        Command::Lsp(_) | Command::BenchLsp(_) => Err(anyhow::anyhow!(
            "the language-server commands are run by `app::run`, not the CLI front end"
        )),
        Command::Schema { which } => match which {
            SchemaKind::Analyze => print_stdout(crate::analysis::report::ANALYZE_SCHEMA)
                .map(|_| 0)
                .map_err(Into::into),
            SchemaKind::EvalItem => print_stdout(crate::eval::adapters::EVAL_ITEM_SCHEMA)
                .map(|_| 0)
                .map_err(Into::into),
            SchemaKind::LspSettings => Err(anyhow::anyhow!(
                "the language server's settings schema is printed by `app::run`"
            )),
        },
    };
    exit_code(result)
}

/// The exit code of a command's result; an error is printed on stderr.
pub fn exit_code(result: anyhow::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("crosscheck: error: {e:#}");
            1
        }
    }
}
