//! `crosscheck telemetry`: export, import, summary, labels, pruning and info over the store
//! (the I/O around [`crate::telemetry`] and [`crate::store`]).
//!
//! Exit codes: 0 success; 1 the store cannot be opened or written, or an import rejected
//! lines (the other lines were imported); 2 a usage error (bad `--since`, ambiguous id).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::crosscheck::record::HumanLabel;
use crate::store::{default_db_path, system_now, Store, StoreConfig};
use crate::telemetry::{
    export, import_jsonl, summarize_store, time::parse_since, ExportFormat, ExportOptions,
};

/// Arguments of `crosscheck telemetry`.
#[derive(Args, Debug, Clone)]
pub struct TelemetryArgs {
    /// The store. Default: $CROSSCHECK_DATA_DIR/crosscheck.db, else
    /// $XDG_DATA_HOME/crosscheck/crosscheck.db, else ~/.local/share/crosscheck/crosscheck.db.
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: TelemetryCommand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    Jsonl,
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    Text,
    Json,
}

#[derive(Subcommand, Debug, Clone)]
pub enum TelemetryCommand {
    /// Write the store's records for a team's warehouse (every line/row carries schema_version).
    Export {
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Jsonl)]
        format: ExportFormatArg,
        /// Only records (and labels) from this time on: YYYY-MM-DD[THH:MM[:SS]] (UTC) or Unix
        /// seconds.
        #[arg(long, value_name = "DATE|UNIX")]
        since: Option<String>,
        /// Include stored source text (off by default; only records whose user opted in have
        /// any).
        #[arg(long)]
        include_source: bool,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Merge JSONL exports into the store (idempotent by record id). Prints the id of each newly
    /// committed record on stdout as it commits; a summary goes to stderr.
    Import {
        /// JSONL export files (`-` for stdin).
        #[arg(required = true, value_name = "FILE.jsonl")]
        files: Vec<PathBuf>,
    },
    /// Agreement (Po, kappa, AC1, PABAK, F1), pass rates, tiers, instability, latency and
    /// tokens per task, language and model.
    Summary {
        #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
        format: SummaryFormat,
        /// Only records from this time on.
        #[arg(long, value_name = "DATE|UNIX")]
        since: Option<String>,
    },
    /// Record a human verdict on a cross-check record (an id or a unique id prefix) or a
    /// finding fingerprint.
    #[command(group(clap::ArgGroup::new("verdict").required(true).args(["correct", "incorrect"])))]
    Label {
        id: String,
        /// The result was correct.
        #[arg(long)]
        correct: bool,
        /// The result was wrong.
        #[arg(long)]
        incorrect: bool,
        /// A short note (never paste code here).
        #[arg(long)]
        note: Option<String>,
    },
    /// Apply the retention and size limits now.
    Prune,
    /// Show where the store is and what it holds.
    Info,
}

/// A failure: message for stderr and exit code.
struct Failure(String, i32);

fn open_store(args: &TelemetryArgs) -> Result<Store, Failure> {
    let path = match &args.db {
        Some(p) => p.clone(),
        None => default_db_path().map_err(|e| Failure(e.to_string(), 1))?,
    };
    Store::open(&path, StoreConfig::default()).map_err(|e| Failure(e.to_string(), 1))
}

fn since(value: &Option<String>) -> Result<Option<i64>, Failure> {
    value
        .as_deref()
        .map(|s| parse_since(s).map_err(|e| Failure(format!("--since: {e}"), 2)))
        .transpose()
}

/// Runs `crosscheck telemetry`; returns the exit code.
pub fn run(args: &TelemetryArgs) -> anyhow::Result<i32> {
    match execute(args) {
        Ok(code) => Ok(code),
        Err(Failure(message, code)) => {
            eprintln!("crosscheck telemetry: error: {message}");
            Ok(code)
        }
    }
}

fn execute(args: &TelemetryArgs) -> Result<i32, Failure> {
    match &args.command {
        TelemetryCommand::Export {
            format,
            since: since_arg,
            include_source,
            output,
        } => {
            let options = ExportOptions {
                since: since(since_arg)?,
                include_source: *include_source,
            };
            let store = open_store(args)?;
            let format = match format {
                ExportFormatArg::Jsonl => ExportFormat::Jsonl,
                ExportFormatArg::Csv => ExportFormat::Csv,
            };
            let report = match output {
                Some(path) => {
                    let file = std::fs::File::create(path).map_err(|e| {
                        Failure(format!("cannot create {}: {e}", path.display()), 1)
                    })?;
                    let mut out = std::io::BufWriter::new(file);
                    export(&store, format, &options, &mut out)
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut out = std::io::BufWriter::new(stdout.lock());
                    export(&store, format, &options, &mut out)
                }
            };
            match report {
                Ok(r) => {
                    if r.skipped > 0 {
                        eprintln!(
                            "crosscheck telemetry: warning: {} stored row(s) could not be read and were skipped",
                            r.skipped
                        );
                    }
                    Ok(0)
                }
                Err(crate::telemetry::TelemetryError::Io(e))
                    if e.kind() == std::io::ErrorKind::BrokenPipe =>
                {
                    Ok(0)
                }
                Err(e) => Err(Failure(e.to_string(), 1)),
            }
        }
        TelemetryCommand::Import { files } => {
            let store = open_store(args)?;
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            let mut out_open = true;
            let mut code = 0;
            for path in files {
                let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
                    Box::new(BufReader::new(std::io::stdin()))
                } else {
                    let file = std::fs::File::open(path)
                        .map_err(|e| Failure(format!("cannot read {}: {e}", path.display()), 1))?;
                    Box::new(BufReader::new(file))
                };
                let report = import_jsonl(&store, reader, |id| {
                    // Printed and flushed only after the commit: a printed id is durable.
                    if out_open && writeln!(out, "{id}").and_then(|_| out.flush()).is_err() {
                        out_open = false;
                    }
                })
                .map_err(|e| Failure(format!("{}: {e}", path.display()), 1))?;
                eprintln!(
                    "crosscheck telemetry: {}: {} new record(s), {} already present, {} new \
                     label(s), {} rejected line(s)",
                    path.display(),
                    report.records_new,
                    report.records_present,
                    report.labels_new,
                    report.rejected
                );
                for e in &report.errors {
                    eprintln!("crosscheck telemetry: {}: {e}", path.display());
                }
                if report.rejected > 0 {
                    code = 1;
                }
            }
            Ok(code)
        }
        TelemetryCommand::Summary {
            format,
            since: since_arg,
        } => {
            let since = since(since_arg)?;
            let store = open_store(args)?;
            let (summary, skipped) =
                summarize_store(&store, since).map_err(|e| Failure(e.to_string(), 1))?;
            if skipped > 0 {
                eprintln!(
                    "crosscheck telemetry: warning: {skipped} stored row(s) could not be read and were skipped"
                );
            }
            let text = match format {
                SummaryFormat::Text => summary.to_text(),
                SummaryFormat::Json => {
                    serde_json::to_string_pretty(&summary).map_err(|e| Failure(e.to_string(), 1))?
                }
            };
            super::print_stdout(&text).map_err(|e| Failure(e.to_string(), 1))?;
            Ok(0)
        }
        TelemetryCommand::Label {
            id,
            correct,
            incorrect: _,
            note,
        } => {
            let store = open_store(args)?;
            let fail = |e: crate::store::StoreError| Failure(e.to_string(), 1);
            let subject = if store.get_record(id).map_err(fail)?.is_some() {
                id.clone()
            } else {
                let matches = store.record_ids_with_prefix(id, 2).map_err(fail)?;
                match matches.as_slice() {
                    [one] => one.clone(),
                    [] => {
                        eprintln!(
                            "crosscheck telemetry: note: no record {id:?} in {}; the label is \
                             stored for subject {id:?} (a finding fingerprint)",
                            store.path().display()
                        );
                        id.clone()
                    }
                    _ => {
                        return Err(Failure(
                            format!("{id:?} is the prefix of several record ids: give more of it"),
                            2,
                        ))
                    }
                }
            };
            let label = HumanLabel {
                subject: subject.clone(),
                correct: *correct,
                timestamp: system_now(),
                note: note.clone(),
            };
            store.add_label(&label).map_err(fail)?;
            let verdict = if *correct { "correct" } else { "incorrect" };
            super::print_stdout(&format!("labelled {subject} {verdict}"))
                .map_err(|e| Failure(e.to_string(), 1))?;
            Ok(0)
        }
        TelemetryCommand::Prune => {
            let store = open_store(args)?;
            let r = store
                .prune(system_now())
                .map_err(|e| Failure(e.to_string(), 1))?;
            let text = format!(
                "records: {} expired, {} over the count limit\nlabels: {} expired\n\
                 cache: {} expired, {} evicted, {} bytes left",
                r.records_expired,
                r.records_over_limit,
                r.labels_expired,
                r.cache_expired,
                r.cache_evicted,
                r.cache_bytes
            );
            super::print_stdout(&text).map_err(|e| Failure(e.to_string(), 1))?;
            Ok(0)
        }
        TelemetryCommand::Info => {
            let store = open_store(args)?;
            let fail = |e: crate::store::StoreError| Failure(e.to_string(), 1);
            let version = store.schema_version().map_err(fail)?;
            let c = store.counts().map_err(fail)?;
            let text = format!(
                "store: {}\nschema version: {version}\nrecords: {} ({} with source text)\n\
                 labels: {}\ncache: {} entries, {} bytes",
                store.path().display(),
                c.records,
                c.records_with_source,
                c.labels,
                c.cache_entries,
                c.cache_bytes
            );
            super::print_stdout(&text).map_err(|e| Failure(e.to_string(), 1))?;
            Ok(0)
        }
    }
}
