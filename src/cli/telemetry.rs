//! `crosscheck telemetry`: export, import, summary, labels, pruning and info over the store
//! (the I/O around [`crate::telemetry`] and [`crate::store`]).
//!
//! Exit codes: 0 success; 1 the store cannot be opened or written, an import rejected lines
//! (the other lines were imported), or an upload batch failed; 2 a usage error (bad `--since`,
//! ambiguous id, no or unusable upload configuration).

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
        /// Only records (and labels) from this time on: `YYYY-MM-DD[THH:MM[:SS]]` (UTC) or Unix
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
    /// Upload records not uploaded before (source text always removed) to the HTTPS URL in
    /// the user config (`[telemetry] upload_url`) or CROSSCHECK_TELEMETRY_UPLOAD_URL. Opt-in:
    /// there is no default endpoint.
    Upload {
        /// Only records from this time on.
        #[arg(long, value_name = "DATE|UNIX")]
        since: Option<String>,
        /// Print the batches that would be sent (JSON Lines on stdout) and send nothing.
        #[arg(long)]
        dry_run: bool,
        /// At most this many records per request.
        #[arg(long, default_value_t = 500, value_name = "N",
              value_parser = clap::value_parser!(u32).range(1..=100_000))]
        batch_size: u32,
    },
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
        TelemetryCommand::Upload {
            since: since_arg,
            dry_run,
            batch_size,
        } => upload::run(args, since(since_arg)?, *dry_run, *batch_size),
    }
}

/// `crosscheck telemetry upload`: streams the JSONL export (records only, `source_text`
/// removed) into batches and posts them with [`crate::llm::upload`].
///
/// The watermark (the newest uploaded record, by the export's order `(timestamp, id)`) is kept
/// per endpoint in `<db>.upload.json` next to the database and advanced after every
/// successful batch, so a rerun uploads only records after it, and a failed batch leaves it at
/// the last batch that went through.
mod upload {
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::path::{Path, PathBuf};

    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    use super::{open_store, Failure, TelemetryArgs};
    use crate::llm::upload::{load_upload_settings, UploadError, UploadSettings, Uploader};
    use crate::telemetry::{export, ExportFormat, ExportOptions, TelemetryError};

    /// The newest record an endpoint has received.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Mark {
        pub timestamp: i64,
        pub id: String,
    }

    /// The watermark file: one mark per endpoint (URL without userinfo).
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Watermarks {
        pub version: u32,
        pub endpoints: BTreeMap<String, Mark>,
    }

    /// `<db>.upload.json`.
    pub fn watermark_path(db: &Path) -> PathBuf {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".upload.json");
        db.with_file_name(name)
    }

    fn read_marks(path: &Path) -> Result<Watermarks, Failure> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                Failure(
                    format!(
                        "the upload watermark {} is unreadable ({e}); delete it to upload every \
                         record again",
                        path.display()
                    ),
                    1,
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Watermarks {
                version: 1,
                ..Watermarks::default()
            }),
            Err(e) => Err(Failure(format!("cannot read {}: {e}", path.display()), 1)),
        }
    }

    /// Replaces the file atomically (write a sibling, then rename).
    fn write_marks(path: &Path, marks: &Watermarks) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(marks).map_err(std::io::Error::other)?;
        let mut tmp = path.as_os_str().to_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, path)
    }

    /// The endpoint batches are posted to, and its watermark.
    struct Sender {
        uploader: Uploader,
        runtime: tokio::runtime::Runtime,
        marks: Watermarks,
        marks_path: PathBuf,
        key: String,
    }

    /// Where complete batches go.
    enum Target {
        /// Printed on stdout, nothing sent.
        DryRun,
        Send(Box<Sender>),
    }

    /// A `Write` that cuts the export into lines and the lines into batches.
    struct Batcher {
        target: Target,
        after: Option<Mark>,
        batch_size: usize,
        partial: Vec<u8>,
        body: Vec<u8>,
        in_body: usize,
        last: Option<Mark>,
        sent_records: u64,
        sent_batches: u64,
        /// Why the run stopped (the export only sees an I/O error).
        failure: Option<String>,
    }

    impl Batcher {
        fn line(&mut self, line: &[u8]) -> std::io::Result<()> {
            let text = String::from_utf8_lossy(line);
            if text.trim().is_empty() {
                return Ok(());
            }
            let mut value: Value = serde_json::from_str(&text).map_err(std::io::Error::other)?;
            let Value::Object(map) = &mut value else {
                return Ok(());
            };
            // Records only: label lines of other subjects carry no record to mark.
            if map.get("kind").and_then(Value::as_str) != Some("record") {
                return Ok(());
            }
            let mark = Mark {
                timestamp: map.get("timestamp").and_then(Value::as_i64).unwrap_or(0),
                id: map
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            };
            if let Some(after) = &self.after {
                if (mark.timestamp, mark.id.as_str()) <= (after.timestamp, after.id.as_str()) {
                    return Ok(());
                }
            }
            // Uploads never carry source text, whatever the store or the export hold.
            map.remove("source_text");
            serde_json::to_writer(&mut self.body, &value).map_err(std::io::Error::other)?;
            self.body.push(b'\n');
            self.in_body += 1;
            self.last = Some(mark);
            if self.in_body >= self.batch_size {
                self.send()?;
            }
            Ok(())
        }

        /// Sends (or prints) the pending batch; on failure records why and returns an error.
        fn send(&mut self) -> std::io::Result<()> {
            if self.in_body == 0 {
                return Ok(());
            }
            let body = std::mem::take(&mut self.body);
            let count = std::mem::take(&mut self.in_body);
            match &mut self.target {
                Target::DryRun => {
                    let text = String::from_utf8_lossy(&body);
                    super::super::print_stdout(&text)?;
                }
                Target::Send(sender) => {
                    let Sender {
                        uploader,
                        runtime,
                        marks,
                        marks_path,
                        key,
                    } = &mut **sender;
                    if let Err(e) = runtime.block_on(uploader.post_jsonl(body)) {
                        self.failure = Some(format!(
                            "batch {} ({count} record(s)) failed: {e}",
                            self.sent_batches + 1
                        ));
                        return Err(std::io::Error::other("upload failed"));
                    }
                    if let Some(last) = &self.last {
                        marks.endpoints.insert(key.clone(), last.clone());
                        if let Err(e) = write_marks(marks_path, marks) {
                            self.failure = Some(format!(
                                "batch {} was uploaded but the watermark {} could not be \
                                 written ({e}); the next run sends it again",
                                self.sent_batches + 1,
                                marks_path.display()
                            ));
                            return Err(std::io::Error::other("watermark not written"));
                        }
                    }
                }
            }
            self.sent_records += count as u64;
            self.sent_batches += 1;
            Ok(())
        }
    }

    impl Write for Batcher {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut rest = buf;
            while let Some(i) = rest.iter().position(|&b| b == b'\n') {
                let (head, tail) = rest.split_at(i);
                if self.partial.is_empty() {
                    self.line(head)?;
                } else {
                    self.partial.extend_from_slice(head);
                    let line = std::mem::take(&mut self.partial);
                    self.line(&line)?;
                }
                rest = tail.get(1..).unwrap_or_default();
            }
            self.partial.extend_from_slice(rest);
            Ok(buf.len())
        }

        /// Batches are sent when full and at the end of the run, not on flush.
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn settings_failure(e: UploadError) -> Failure {
        Failure(format!("upload: {e}"), 2)
    }

    pub(super) fn run(
        args: &TelemetryArgs,
        since: Option<i64>,
        dry_run: bool,
        batch_size: u32,
    ) -> Result<i32, Failure> {
        let settings: Option<UploadSettings> = match load_upload_settings() {
            Ok(s) => Some(s),
            // A dry run shows what would leave the machine even before a URL is set.
            Err(UploadError::NotConfigured) if dry_run => None,
            Err(e) => return Err(settings_failure(e)),
        };
        let key = settings.as_ref().map(UploadSettings::display_url);
        let store = open_store(args)?;
        let marks_path = watermark_path(store.path());
        let marks = read_marks(&marks_path)?;
        let after = key.as_ref().and_then(|k| marks.endpoints.get(k)).cloned();
        let target = match (settings, dry_run) {
            (Some(s), false) => Target::Send(Box::new(Sender {
                uploader: Uploader::new(s).map_err(settings_failure)?,
                runtime: tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Failure(format!("cannot start the HTTP runtime: {e}"), 1))?,
                marks,
                marks_path,
                key: key.clone().unwrap_or_default(),
            })),
            _ => Target::DryRun,
        };
        let options = ExportOptions {
            since: match (since, &after) {
                (Some(s), Some(a)) => Some(s.max(a.timestamp)),
                (s, a) => s.or(a.as_ref().map(|a| a.timestamp)),
            },
            include_source: false,
        };
        let mut batcher = Batcher {
            target,
            after: after.clone(),
            batch_size: batch_size.max(1) as usize,
            partial: Vec::new(),
            body: Vec::new(),
            in_body: 0,
            last: None,
            sent_records: 0,
            sent_batches: 0,
            failure: None,
        };
        let exported = export(&store, ExportFormat::Jsonl, &options, &mut batcher)
            .map(|r| r.skipped)
            .and_then(|skipped| {
                let tail = std::mem::take(&mut batcher.partial);
                batcher.line(&tail)?;
                batcher.send()?;
                Ok(skipped)
            });
        let url = key.unwrap_or_else(|| "(no upload URL is configured)".to_string());
        let done = format!(
            "{} record(s) in {} batch(es)",
            batcher.sent_records, batcher.sent_batches
        );
        match exported {
            Ok(skipped) => {
                if skipped > 0 {
                    eprintln!(
                        "crosscheck telemetry: warning: {skipped} stored row(s) could not be \
                         read and were skipped"
                    );
                }
                if dry_run {
                    eprintln!(
                        "crosscheck telemetry: dry run: {done} would be uploaded to {url} \
                         (source text removed; nothing sent)"
                    );
                } else if batcher.sent_records == 0 {
                    eprintln!("crosscheck telemetry: nothing new to upload to {url}");
                } else {
                    eprintln!("crosscheck telemetry: uploaded {done} to {url}");
                }
                Ok(0)
            }
            Err(TelemetryError::Io(e)) if dry_run && e.kind() == std::io::ErrorKind::BrokenPipe => {
                Ok(0)
            }
            Err(e) => {
                let why = batcher.failure.take().unwrap_or_else(|| e.to_string());
                let resume = match batcher.last_sent() {
                    Some(m) => format!("the next run resumes after record {}", m.id),
                    None => "the next run starts from the same point".to_string(),
                };
                Err(Failure(
                    format!("upload to {url} stopped: {why}; {done} uploaded before it; {resume}"),
                    1,
                ))
            }
        }
    }

    impl Batcher {
        /// The watermark as last saved in this run (or as it was).
        fn last_sent(&self) -> Option<&Mark> {
            match &self.target {
                Target::Send(s) => s.marks.endpoints.get(&s.key),
                Target::DryRun => self.after.as_ref(),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn watermark_file_sits_next_to_the_database() {
            assert_eq!(
                watermark_path(Path::new("/d/crosscheck.db")),
                PathBuf::from("/d/crosscheck.db.upload.json")
            );
        }
    }
}
