//! Telemetry: exporting the store for a team's own warehouse, importing teammates' exports,
//! and summarising agreement, pass rates, tiers, instability, latency and tokens.
//!
//! * [`exchange`]: `crosscheck telemetry export --format jsonl|csv [--since DATE|UNIX]` and
//!   `crosscheck telemetry import FILE.jsonl...`.
//! * [`summary`]: `crosscheck telemetry summary [--format text|json]` (pure).
//! * [`verdict`]: which records carry binary verdicts, and the LLM's majority verdict.
//! * [`time`]: `--since` parsing and UTC formatting (pure).
//!
//! Nothing here uploads anything: an opt-in upload to an HTTPS endpoint would belong to the
//! `llm` layer (the only one allowed HTTP) and is not implemented. Exports are files the user
//! moves themselves.
//!
//! # Export format (`schema_version` 1)
//!
//! JSON Lines, one object per line, every line with `"schema_version": 1` and a `"kind"`:
//! * `"record"`: every field of a cross-check record (`id`, `timestamp`, `task`, `language`,
//!   `model`, `template_id`, `template_version`, `strategy`, `code_hash`, `analyzer`,
//!   `samples`, `scores`, `pass`, `tier`, `instability`, `latency_ms`, `prompt_tokens`,
//!   `completion_tokens`, `source_text`), plus derived fields for warehouses and
//!   `crosscheck stats`: `time_utc` (ISO 8601), `analyzer_verdict` and `llm_verdict` (binary
//!   verdicts, `null` when the task has none, see [`verdict`]), `label_correct` (the latest
//!   human label, or `null`) and `labels` (every human label of the record:
//!   `{correct, timestamp, note}`). `source_text` is `null` unless `--include-source` is given
//!   (the user's opt-in to store code covered the local store, not exports).
//! * `"label"`: a human label whose subject is not an exported record (e.g. a finding
//!   fingerprint): `subject`, `correct`, `timestamp`, `note`, `time_utc`.
//!
//! CSV: one row per record, columns [`exchange::CSV_COLUMNS`] (booleans as `1`/`0`, empty for
//! none, so `crosscheck stats` reads them as binary labels), then one `score_NAME` column per
//! Layer-1 score name present in the export. Nested answers (`analyzer`, `samples`) are JSONL
//! only.
//!
//! Import reads JSONL only (it is the lossless format), refuses lines with a newer or missing
//! `schema_version`, and is idempotent: records by id (a present id keeps the stored version),
//! labels by (subject, timestamp, verdict, note). Keys are only ever added to the format and
//! an importer ignores keys it does not know, so an older crosscheck reads a newer export of
//! the same `schema_version`; a change of meaning would bump `schema_version`.
//!
//! # Aggregating a team's exports
//!
//! Each developer runs `crosscheck telemetry export --format jsonl > alice.jsonl` (add
//! `--since 2024-05-01` for increments). Two ways to pool them:
//!
//! **In crosscheck.** `crosscheck telemetry --db team.db import alice.jsonl bob.jsonl ...`
//! merges them into one store (re-importing overlapping exports is harmless), then
//! `crosscheck telemetry --db team.db summary --format json` gives the per task / language /
//! model figures over the whole team.
//!
//! **In a warehouse.** Load the JSONL, keep one row per record `id` (overlapping exports
//! repeat records), and compute what you need in SQL; for the agreement coefficients, export
//! the paired verdict columns and run `crosscheck stats` over them, which adds bootstrap
//! confidence intervals, per-class scores and the decision gap:
//!
//! DuckDB:
//! ```sql
//! CREATE TABLE xc AS
//!   SELECT * FROM read_json_auto('exports/*.jsonl', format = 'newline_delimited',
//!                                union_by_name = true)
//!   WHERE kind = 'record'
//!   QUALIFY row_number() OVER (PARTITION BY id ORDER BY timestamp) = 1;
//! SELECT task, language, model, count(*) AS records,
//!        avg(pass::int) AS pass_rate, avg(instability) AS instability,
//!        avg(latency_ms) AS latency_ms, sum(prompt_tokens + completion_tokens) AS tokens
//! FROM xc GROUP BY ALL ORDER BY ALL;
//! COPY (SELECT llm_verdict, analyzer_verdict, pass, label_correct FROM xc
//!       WHERE task = 'data_dependency' AND language = 'java') TO 'dd_java.csv' (HEADER);
//! ```
//!
//! PostgreSQL (one `jsonb` column; the CSV quote/delimiter trick keeps `\copy` from
//! interpreting backslashes in the JSON):
//! ```sql
//! CREATE TABLE xc_raw (line jsonb);
//! \copy xc_raw (line) FROM 'alice.jsonl' WITH (FORMAT csv, QUOTE e'\x01', DELIMITER e'\x02')
//! CREATE VIEW xc AS
//!   SELECT DISTINCT ON (line->>'id')
//!          line->>'id' AS id, (line->>'timestamp')::bigint AS ts,
//!          line->>'task' AS task, line->>'language' AS language, line->>'model' AS model,
//!          (line->>'pass')::boolean::int AS pass,
//!          (line->>'llm_verdict')::boolean::int AS llm_verdict,
//!          (line->>'analyzer_verdict')::boolean::int AS analyzer_verdict,
//!          (line->>'label_correct')::boolean::int AS label_correct,
//!          (line->>'instability')::float8 AS instability, line->'scores' AS scores
//!   FROM xc_raw WHERE line->>'kind' = 'record' ORDER BY line->>'id', ts;
//! \copy (SELECT llm_verdict, analyzer_verdict FROM xc WHERE task = 'taint') TO 'taint.csv' CSV HEADER
//! ```
//! (cast booleans to `int`: PostgreSQL writes `t`/`f`, which `crosscheck stats` does not read
//! as binary labels; `true`/`false`, `1`/`0`, `yes`/`no` are fine).
//!
//! BigQuery: load with an explicit schema in which the nested fields are `JSON`, then
//! deduplicate in a view:
//! ```sh
//! bq load --source_format=NEWLINE_DELIMITED_JSON --ignore_unknown_values team.xc_raw \
//!   'gs://BUCKET/crosscheck/*.jsonl' \
//!   schema_version:INTEGER,kind:STRING,id:STRING,timestamp:INTEGER,task:STRING,language:STRING,model:STRING,tier:STRING,pass:BOOLEAN,instability:FLOAT,latency_ms:INTEGER,prompt_tokens:INTEGER,completion_tokens:INTEGER,analyzer_verdict:BOOLEAN,llm_verdict:BOOLEAN,label_correct:BOOLEAN,scores:JSON
//! ```
//! ```sql
//! SELECT * FROM team.xc_raw WHERE kind = 'record'
//! QUALIFY ROW_NUMBER() OVER (PARTITION BY id ORDER BY timestamp) = 1
//! ```
//! (`LAX_FLOAT64(scores.jump_fabrication)` reads one score).
//!
//! Then, on the exported pairs:
//! ```sh
//! crosscheck stats --input dd_java.csv --a llm_verdict --b analyzer_verdict  # LLM vs analyzer
//! crosscheck stats --input dd_java.csv --a pass --b label_correct            # automated vs human
//! ```
//! `crosscheck stats` skips rows where either column is empty, exactly as the summary pairs
//! only records that carry both verdicts. A store's own JSONL export can be given to
//! `crosscheck stats --input` directly (the same columns are top-level keys).

pub mod exchange;
pub mod summary;
pub mod time;
pub mod verdict;

pub use exchange::{
    export, import_jsonl, ExportFormat, ExportOptions, ExportReport, ImportReport, TelemetryError,
    EXPORT_SCHEMA_VERSION,
};
pub use summary::{summarize, Summarizer, Summary};

use std::ops::ControlFlow;

use crate::store::{RecordFilter, Store, StoreError};

/// The summary of the store's records with `timestamp >= since` (all if `None`). Rows that
/// cannot be decoded are skipped and counted in the second value.
pub fn summarize_store(store: &Store, since: Option<i64>) -> Result<(Summary, u64), StoreError> {
    let labels = store
        .latest_labels()?
        .into_iter()
        .map(|(subject, l)| (subject, l.correct))
        .collect();
    let mut summarizer = Summarizer::new(labels);
    let mut skipped = 0;
    let filter = RecordFilter {
        since,
        ..RecordFilter::default()
    };
    store.for_each_record(&filter, |item| {
        match item {
            Ok(r) => summarizer.add(&r),
            Err(_) => skipped += 1,
        }
        ControlFlow::Continue(())
    })?;
    Ok((summarizer.finish(), skipped))
}
