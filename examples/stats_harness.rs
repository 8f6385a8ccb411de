//! Temporary stand-in for the `crosscheck` binary until `main.rs` wires the `stats`
//! subcommand: `cargo build --example stats_harness`, then
//! `CROSSCHECK_BIN=target/debug/examples/stats_harness pytest tests/python`.
//! Accepts exactly `stats_harness stats <StatsArgs>`.

use clap::{Parser, Subcommand};
use crosscheck::cli::stats::{run, StatsArgs};

#[derive(Parser)]
#[command(name = "crosscheck")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Agreement statistics over a label table.
    Stats(StatsArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Stats(args) => match run(args) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("crosscheck stats: error: {e:#}");
                2
            }
        },
    };
    std::process::exit(code);
}
