//! Command-line subcommands. Each submodule exposes a `clap::Args` struct and a `run` function
//! returning the process exit code; `main.rs` wires them into the subcommand enum.

pub mod stats;
