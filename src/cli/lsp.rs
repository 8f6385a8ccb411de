//! The arguments of `crosscheck lsp` (the language server on stdin/stdout) and `crosscheck
//! bench-lsp` (the didChange -> publishDiagnostics latency benchmark). The two front ends do not
//! borrow from each other: `app` runs these commands with the `lsp` module.

use clap::Args;

#[derive(Debug, Args)]
pub struct LspArgs {
    /// Talk LSP over stdin/stdout (the default and only transport; accepted for editors that
    /// pass it).
    #[arg(long)]
    pub stdio: bool,
}

#[derive(Debug, Args)]
pub struct BenchLspArgs {
    /// Lines of the generated Python file.
    #[arg(long, default_value_t = 5000)]
    pub lines: usize,
    /// Number of edits measured.
    #[arg(long, default_value_t = 200)]
    pub edits: usize,
    /// LLM debounce used by the scheduler during the run (milliseconds).
    #[arg(long, default_value_t = 30)]
    pub debounce_ms: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = super::OutputFormat::Text)]
    pub format: super::OutputFormat,
    /// Workspace mode: these folders (comma-separated) are indexed and analysed, `--open`
    /// is opened and `--edits` trailing-comment edits are made `--interval-ms` apart;
    /// reports times, CPU per edit and resident memory against every file parsed and held.
    #[arg(long, value_delimiter = ',', requires = "open")]
    pub workspace: Vec<std::path::PathBuf>,
    /// Workspace mode: the file opened and edited.
    #[arg(long)]
    pub open: Option<std::path::PathBuf>,
    /// Workspace mode: pause after each edit (milliseconds).
    #[arg(long, default_value_t = 2000)]
    pub interval_ms: u64,
    /// Workspace mode: the comment is toggled at the end of this 1-based line (inside a
    /// function, as typing there would) instead of after the last line.
    #[arg(long)]
    pub edit_line: Option<usize>,
}
