//! The binary's entry point: parses the command line (`cli::Cli`) and hands each command to its
//! front end. The language server's commands (`lsp`, `bench-lsp`, the `lsp-settings` schema) go
//! to `lsp`, every other command to `cli`; the two front ends never borrow from each other.

use crate::cli::{self, Cli, Command, SchemaKind};
use clap::Parser;

/// Runs a parsed command line; returns the process exit code.
pub fn run(args: Cli) -> i32 {
    match &args.command {
        Command::Lsp(_) => {
            cli::init_tracing(args.verbose);
            crate::lsp::run_stdio(crate::lsp::ServerOptions::for_user())
        }
        Command::BenchLsp(a) => {
            cli::init_tracing(args.verbose);
            cli::exit_code(bench_lsp(a))
        }
        Command::Schema {
            which: SchemaKind::LspSettings,
        } => {
            cli::init_tracing(args.verbose);
            cli::exit_code(
                cli::print_stdout(&format!(
                    "{:#}",
                    crate::lsp::settings_schema::editor_settings_schema()
                ))
                .map(|_| 0)
                .map_err(Into::into),
            )
        }
        _ => cli::run(args),
    }
}

fn bench_lsp(args: &cli::lsp::BenchLspArgs) -> anyhow::Result<i32> {
    if let (false, Some(open)) = (args.workspace.is_empty(), &args.open) {
        let opts = crate::lsp::bench_workspace::WorkspaceBenchOptions {
            folders: args.workspace.clone(),
            open: open.clone(),
            edits: args.edits,
            interval_ms: args.interval_ms,
            edit_line: args.edit_line,
        };
        let report =
            crate::lsp::bench_workspace::run_blocking(&opts).map_err(|e| anyhow::anyhow!(e))?;
        let out = match args.format {
            cli::OutputFormat::Json => serde_json::to_string_pretty(&report)?,
            cli::OutputFormat::Text => report.to_text(),
        };
        cli::print_stdout(&out)?;
        return Ok(0);
    }
    let opts = crate::lsp::bench::BenchOptions {
        lines: args.lines,
        edits: args.edits,
        debounce_ms: args.debounce_ms,
    };
    let report = crate::lsp::bench::run_blocking(&opts).map_err(|e| anyhow::anyhow!(e))?;
    let out = match args.format {
        cli::OutputFormat::Json => serde_json::to_string_pretty(&report)?,
        cli::OutputFormat::Text => report.to_text(),
    };
    cli::print_stdout(&out)?;
    Ok(0)
}

/// Entry point of the binary. The work runs on a thread with a large stack as a second line of
/// defence: analyses are iterative or depth-bounded, but hostile input must never crash us.
pub fn main() -> i32 {
    let args = Cli::parse();
    let worker = std::thread::Builder::new()
        .name("crosscheck-main".into())
        .stack_size(256 * 1024 * 1024)
        .spawn(move || run(args));
    match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| {
            eprintln!("crosscheck: internal error (a bug): the analysis thread panicked");
            101
        }),
        Err(e) => {
            eprintln!("crosscheck: cannot start worker thread: {e}");
            1
        }
    }
}
