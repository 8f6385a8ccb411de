//! The versioned schema and its migrations.
//!
//! The schema version is SQLite's `PRAGMA user_version`; `PRAGMA application_id` marks the file
//! as a crosscheck store ([`APPLICATION_ID`]) so that another application's database given by
//! mistake is refused rather than modified. Each migration runs in its own `BEGIN IMMEDIATE`
//! transaction together with the `user_version` bump (both are transactional, as the header is
//! part of page 1), and re-reads the version inside the transaction, so two processes opening a
//! fresh store at once migrate it exactly once, and a failing migration leaves the store at the
//! previous version. A store whose version is newer than [`SCHEMA_VERSION`] is refused with
//! [`StoreError::NewerSchema`]: an older crosscheck never writes a schema it does not know.
//!
//! History (never edit a released migration; append a new one):
//! * 1: cross-check records (indexed columns for task, language, model, timestamp, tier and
//!   pass; every other field as JSON in `body`; `source_text` only when the user opted in) and
//!   human labels (deduplicated on subject, timestamp, verdict and note, so imports are
//!   idempotent).
//! * 2: the LLM answer cache (key, value, created, last used, size), with an index for LRU
//!   eviction.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{retry_busy, StoreError};

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: u32 = 2;

/// `PRAGMA application_id` of a crosscheck store: "CrCk".
pub const APPLICATION_ID: i32 = 0x4372_436b;

/// One schema step: the SQL that takes the store from `version - 1` to `version`.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub description: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "cross-check records and human labels",
        sql: "
            CREATE TABLE records (
                id          TEXT PRIMARY KEY NOT NULL,
                timestamp   INTEGER NOT NULL,
                task        TEXT NOT NULL,
                language    TEXT NOT NULL,
                model       TEXT NOT NULL,
                tier        TEXT,
                pass        INTEGER CHECK (pass IN (0, 1)),
                body        TEXT NOT NULL,
                source_text TEXT
            ) STRICT;
            CREATE INDEX records_timestamp ON records(timestamp);
            CREATE INDEX records_group ON records(task, language, model);
            CREATE INDEX records_language ON records(language);
            CREATE INDEX records_model ON records(model);
            CREATE INDEX records_tier ON records(tier);
            CREATE INDEX records_pass ON records(pass);
            CREATE TABLE labels (
                seq       INTEGER PRIMARY KEY,
                subject   TEXT NOT NULL,
                correct   INTEGER NOT NULL CHECK (correct IN (0, 1)),
                timestamp INTEGER NOT NULL,
                note      TEXT
            ) STRICT;
            CREATE UNIQUE INDEX labels_identity
                ON labels(subject, timestamp, correct, coalesce(note, ''));
            CREATE INDEX labels_timestamp ON labels(timestamp);
        ",
    },
    Migration {
        version: 2,
        description: "LLM answer cache",
        sql: "
            CREATE TABLE llm_cache (
                key       TEXT PRIMARY KEY NOT NULL,
                value     TEXT NOT NULL,
                created   INTEGER NOT NULL,
                last_used INTEGER NOT NULL,
                size      INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX llm_cache_lru ON llm_cache(last_used, created, key);
        ",
    },
];

/// The store's `(application_id, user_version)`.
pub fn read_version(conn: &Connection) -> rusqlite::Result<(i32, u32)> {
    let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok((app, u32::try_from(version).unwrap_or(u32::MAX)))
}

/// Number of user tables (not SQLite's own).
fn user_tables(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        [],
        |r| r.get(0),
    )
}

/// Checks that the file is a crosscheck store (or empty) and not newer than `migrations`
/// know; returns its version.
pub fn check(conn: &Connection, path: &Path, migrations: &[Migration]) -> Result<u32, StoreError> {
    // One read snapshot for the header and the table count: read one statement at a time, a
    // first open in another process could commit its migration between them, and the file
    // would look like tables without a crosscheck application_id.
    let (app, version, tables) = (|| {
        let tx = conn.unchecked_transaction()?;
        let (app, version) = read_version(&tx)?;
        let tables = if app == 0 { user_tables(&tx)? } else { 0 };
        tx.commit()?;
        Ok((app, version, tables))
    })()
    .map_err(|e| StoreError::sqlite(path, e))?;
    if app != 0 && app != APPLICATION_ID {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            reason: format!("application_id is {app:#x}"),
        });
    }
    if app == 0 && (tables > 0 || version != 0) {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            reason: format!(
                "it has {tables} table(s) and user_version {version} but no crosscheck \
                 application_id"
            ),
        });
    }
    let latest = migrations.last().map_or(0, |m| m.version);
    if version > latest {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            supported: latest,
        });
    }
    Ok(version)
}

/// Applies the migrations of `migrations` that are newer than the store, each in its own
/// immediate transaction (see the module docs). Returns the final version.
pub fn migrate(
    conn: &mut Connection,
    path: &Path,
    migrations: &[Migration],
) -> Result<u32, StoreError> {
    let mut version = check(conn, path, migrations)?;
    let mut previous = 0;
    for m in migrations {
        if m.version != previous + 1 {
            return Err(StoreError::Migration {
                path: path.to_path_buf(),
                from: version,
                to: m.version,
                reason: format!(
                    "migration versions must be 1, 2, 3, ... (found {previous} then {})",
                    m.version
                ),
            });
        }
        previous = m.version;
        if m.version <= version {
            continue;
        }
        let from = version;
        let fail = |reason: String| StoreError::Migration {
            path: path.to_path_buf(),
            from,
            to: m.version,
            reason,
        };
        version = retry_busy(path, || {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Another process may have migrated while we waited for the lock.
            let (_, current) = read_version(&tx)?;
            if current >= m.version {
                tx.commit()?;
                return Ok(Ok(current));
            }
            if let Err(e) = tx.execute_batch(m.sql) {
                if StoreError::is_busy(&e) {
                    return Err(e);
                }
                return Ok(Err(e.to_string()));
            }
            tx.pragma_update(None, "application_id", APPLICATION_ID)?;
            tx.pragma_update(None, "user_version", m.version)?;
            tx.commit()?;
            Ok(Ok(m.version))
        })
        .map_err(|e| match e {
            StoreError::Busy { .. } => e,
            other => fail(other.to_string()),
        })?
        .map_err(|reason| fail(format!("{} ({reason})", m.description)))?;
    }
    Ok(version)
}
