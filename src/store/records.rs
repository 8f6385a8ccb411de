//! Cross-check records and human labels: encoding, queries, and the
//! [`crate::crosscheck::record::RecordSink`] implementation.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, OptionalExtension, Row};
use serde_json::Value;

use super::{Store, StoreError};
use crate::crosscheck::record::{CrossCheckRecord, HumanLabel, RecordSink, Tier};

/// Record fields kept in their own columns rather than in the JSON `body`.
const COLUMNS: [&str; 8] = [
    "id",
    "timestamp",
    "task",
    "language",
    "model",
    "tier",
    "pass",
    "source_text",
];

const SELECT_RECORD: &str =
    "SELECT id, timestamp, task, language, model, tier, pass, body, source_text FROM records";

/// Which records a query returns. Every set field must match; `since` is inclusive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordFilter {
    /// Only records with `timestamp >= since` (seconds since the epoch).
    pub since: Option<i64>,
    pub task: Option<String>,
    pub language: Option<String>,
    pub model: Option<String>,
}

/// A record split into its indexed columns and the JSON body.
struct Encoded<'a> {
    record: &'a CrossCheckRecord,
    tier: Option<&'static str>,
    body: String,
}

fn invalid(record: &CrossCheckRecord, reason: String) -> StoreError {
    StoreError::InvalidRecord {
        id: record.id.clone(),
        reason,
    }
}

/// Checks what the store refuses and serialises the non-column fields.
fn encode(record: &CrossCheckRecord) -> Result<Encoded<'_>, StoreError> {
    if record.id.trim().is_empty() {
        return Err(invalid(record, "the id is empty".into()));
    }
    if !record.instability.is_finite() {
        return Err(invalid(
            record,
            format!("instability {} is not a finite number", record.instability),
        ));
    }
    if let Some((name, value)) = record.scores.iter().find(|(_, v)| !v.is_finite()) {
        return Err(invalid(
            record,
            format!("score {name:?} = {value} is not a finite number (leave undefined scores out)"),
        ));
    }
    let value = serde_json::to_value(record).map_err(|e| invalid(record, e.to_string()))?;
    let Value::Object(mut map) = value else {
        return Err(invalid(
            record,
            "does not serialise to a JSON object".into(),
        ));
    };
    for column in COLUMNS {
        map.remove(column);
    }
    Ok(Encoded {
        record,
        tier: record.tier.map(Tier::name),
        body: Value::Object(map).to_string(),
    })
}

fn tier_value(name: &str) -> Value {
    Value::String(name.to_string())
}

/// Rebuilds a record from a row of [`SELECT_RECORD`]. A bad row is an error for that row only.
fn decode(row: &Row<'_>) -> rusqlite::Result<Result<CrossCheckRecord, String>> {
    let id: String = row.get(0)?;
    let timestamp: i64 = row.get(1)?;
    let task: String = row.get(2)?;
    let language: String = row.get(3)?;
    let model: String = row.get(4)?;
    let tier: Option<String> = row.get(5)?;
    let pass: Option<bool> = row.get(6)?;
    let body: String = row.get(7)?;
    let source_text: Option<String> = row.get(8)?;
    let mut map = match serde_json::from_str::<Value>(&body) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Ok(Err(format!("record {id:?}: body is not a JSON object"))),
        Err(e) => return Ok(Err(format!("record {id:?}: body is not JSON: {e}"))),
    };
    map.insert("id".into(), Value::String(id.clone()));
    map.insert("timestamp".into(), Value::from(timestamp));
    map.insert("task".into(), Value::String(task));
    map.insert("language".into(), Value::String(language));
    map.insert("model".into(), Value::String(model));
    map.insert(
        "tier".into(),
        tier.as_deref().map_or(Value::Null, tier_value),
    );
    map.insert("pass".into(), pass.map_or(Value::Null, Value::Bool));
    map.insert(
        "source_text".into(),
        source_text.map_or(Value::Null, Value::String),
    );
    Ok(serde_json::from_value(Value::Object(map)).map_err(|e| format!("record {id:?}: {e}")))
}

fn filter_sql(filter: &RecordFilter) -> (String, Vec<SqlValue>) {
    let mut clauses = Vec::new();
    let mut args = Vec::new();
    if let Some(since) = filter.since {
        clauses.push("timestamp >= ?");
        args.push(SqlValue::Integer(since));
    }
    for (clause, value) in [
        ("task = ?", &filter.task),
        ("language = ?", &filter.language),
        ("model = ?", &filter.model),
    ] {
        if let Some(v) = value {
            clauses.push(clause);
            args.push(SqlValue::Text(v.clone()));
        }
    }
    let mut sql = String::from(SELECT_RECORD);
    if !clauses.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&clauses.join(" AND "));
    }
    sql.push_str(" ORDER BY timestamp, id");
    (sql, args)
}

fn label_from_row(row: &Row<'_>) -> rusqlite::Result<HumanLabel> {
    Ok(HumanLabel {
        subject: row.get(0)?,
        correct: row.get(1)?,
        timestamp: row.get(2)?,
        note: row.get(3)?,
    })
}

impl Store {
    /// Stores a record; returns `false` if a record with this id was already present (the
    /// stored one is kept). One record, one transaction.
    pub fn insert_record(&self, record: &CrossCheckRecord) -> Result<bool, StoreError> {
        let e = encode(record)?;
        self.write(|tx| insert_encoded(tx, &e))
    }

    /// Stores many records in one transaction; returns how many were new.
    pub fn insert_records(&self, records: &[CrossCheckRecord]) -> Result<usize, StoreError> {
        let encoded = records.iter().map(encode).collect::<Result<Vec<_>, _>>()?;
        self.write(|tx| {
            let mut new = 0;
            for e in &encoded {
                if insert_encoded(tx, e)? {
                    new += 1;
                }
            }
            Ok(new)
        })
    }

    /// The record with this id.
    pub fn get_record(&self, id: &str) -> Result<Option<CrossCheckRecord>, StoreError> {
        let row = self.read(|c| {
            c.query_row(&format!("{SELECT_RECORD} WHERE id = ?1"), [id], decode)
                .optional()
        })?;
        match row {
            None => Ok(None),
            Some(Ok(record)) => Ok(Some(record)),
            Some(Err(reason)) => Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason,
            }),
        }
    }

    /// Ids of records starting with `prefix` (at most `limit`, sorted).
    pub fn record_ids_with_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|c| {
            // `substr` rather than LIKE: ids may contain `%` or `_`.
            let mut stmt = c.prepare_cached(
                "SELECT id FROM records WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![prefix, limit], |r| r.get::<_, String>(0))?;
            rows.collect()
        })
    }

    /// Calls `f` on every record matching `filter`, oldest first (then by id). A row that
    /// cannot be decoded is passed as an error and the walk goes on; `f` may stop it by
    /// returning `ControlFlow::Break`. Rows are streamed, not collected.
    pub fn for_each_record(
        &self,
        filter: &RecordFilter,
        mut f: impl FnMut(Result<CrossCheckRecord, StoreError>) -> ControlFlow<()>,
    ) -> Result<(), StoreError> {
        let (sql, args) = filter_sql(filter);
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| StoreError::sqlite(&self.path, e))?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(args))
            .map_err(|e| StoreError::sqlite(&self.path, e))?;
        loop {
            let row = match rows.next() {
                Ok(Some(row)) => row,
                Ok(None) => return Ok(()),
                Err(e) => return Err(StoreError::sqlite(&self.path, e)),
            };
            let item = match decode(row) {
                Ok(Ok(record)) => Ok(record),
                Ok(Err(reason)) => Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    reason,
                }),
                Err(e) => Err(StoreError::sqlite(&self.path, e)),
            };
            if f(item).is_break() {
                return Ok(());
            }
        }
    }

    /// Every record matching `filter` (see [`Store::for_each_record`]); rows that cannot be
    /// decoded are an error.
    pub fn records(&self, filter: &RecordFilter) -> Result<Vec<CrossCheckRecord>, StoreError> {
        let mut out = Vec::new();
        let mut first_error = None;
        self.for_each_record(filter, |item| match item {
            Ok(r) => {
                out.push(r);
                ControlFlow::Continue(())
            }
            Err(e) => {
                first_error = Some(e);
                ControlFlow::Break(())
            }
        })?;
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The distinct score names of the records matching `filter`, sorted.
    pub fn score_names(&self, filter: &RecordFilter) -> Result<Vec<String>, StoreError> {
        let mut names = std::collections::BTreeSet::new();
        self.for_each_record(filter, |item| {
            if let Ok(r) = item {
                names.extend(r.scores.into_keys());
            }
            ControlFlow::Continue(())
        })?;
        Ok(names.into_iter().collect())
    }

    /// Deletes the stored source text of every record (the user withdrew the opt-in); returns
    /// how many records had one.
    pub fn forget_source_text(&self) -> Result<u64, StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE records SET source_text = NULL WHERE source_text IS NOT NULL",
                [],
            )
            .map(|n| n as u64)
        })
    }

    /// Stores a human label; returns `false` if an identical label (subject, timestamp,
    /// verdict, note) is already present. An empty note is stored as no note.
    pub fn add_label(&self, label: &HumanLabel) -> Result<bool, StoreError> {
        let note = label.note.as_deref().filter(|n| !n.is_empty());
        self.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "INSERT OR IGNORE INTO labels (subject, correct, timestamp, note) \
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            stmt.execute(params![label.subject, label.correct, label.timestamp, note])
                .map(|n| n == 1)
        })
    }

    /// Every label of `subject`, oldest first.
    pub fn labels_for(&self, subject: &str) -> Result<Vec<HumanLabel>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT subject, correct, timestamp, note FROM labels WHERE subject = ?1 \
                 ORDER BY timestamp, seq",
            )?;
            let rows = stmt.query_map([subject], label_from_row)?;
            rows.collect()
        })
    }

    /// Every label with `timestamp >= since` (all if `None`), by subject, then oldest first.
    pub fn labels(&self, since: Option<i64>) -> Result<Vec<HumanLabel>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT subject, correct, timestamp, note FROM labels WHERE timestamp >= ?1 \
                 ORDER BY subject, timestamp, seq",
            )?;
            let rows = stmt.query_map([since.unwrap_or(i64::MIN)], label_from_row)?;
            rows.collect()
        })
    }

    /// The label that counts for each subject: the latest (largest timestamp, then the one
    /// stored last).
    pub fn latest_labels(&self) -> Result<BTreeMap<String, HumanLabel>, StoreError> {
        let all = self.labels(None)?;
        // Sorted by subject, timestamp, insertion: the last of each subject wins.
        Ok(all.into_iter().map(|l| (l.subject.clone(), l)).collect())
    }
}

fn insert_encoded(tx: &rusqlite::Transaction<'_>, e: &Encoded<'_>) -> rusqlite::Result<bool> {
    let r = e.record;
    let mut stmt = tx.prepare_cached(
        "INSERT OR IGNORE INTO records \
         (id, timestamp, task, language, model, tier, pass, body, source_text) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let n = stmt.execute(params![
        r.id,
        r.timestamp,
        r.task,
        r.language,
        r.model,
        e.tier,
        r.pass,
        e.body,
        r.source_text,
    ])?;
    Ok(n == 1)
}

impl RecordSink for Store {
    fn record(&self, record: &CrossCheckRecord) -> Result<(), String> {
        self.insert_record(record)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn label(&self, label: &HumanLabel) -> Result<(), String> {
        self.add_label(label).map(|_| ()).map_err(|e| e.to_string())
    }
}
