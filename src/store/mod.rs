//! The store: one embedded SQLite database per user holding the LLM answer cache, cross-check
//! records and human labels. It implements [`CacheBackend`](crate::crosscheck::record::CacheBackend)
//! and [`RecordSink`](crate::crosscheck::record::RecordSink) so the front ends can wire it into
//! the cross-check core.
//!
//! # Where
//!
//! [`path::resolve_db_path`]: `$CROSSCHECK_DATA_DIR/crosscheck.db`, else
//! `$XDG_DATA_HOME/crosscheck/crosscheck.db`, else `~/.local/share/crosscheck/crosscheck.db`.
//! A directory the store creates is made `0700` and a database file it creates `0600` (Unix):
//! records may carry code when the user opted in.
//!
//! # Durability and concurrency
//!
//! * `journal_mode=WAL`: readers never block the writer and a writer never blocks readers;
//!   several processes (language-server instances, CLI runs) share one file.
//! * `synchronous=NORMAL` by default ([`Durability::Normal`]). In WAL mode a transaction is
//!   committed once its frames are `write()`n to the WAL file, which happens before `COMMIT`
//!   returns; the kernel keeps those bytes when the process dies, so **a killed process
//!   (SIGKILL, panic, OOM kill) loses nothing it committed**, and the database is never
//!   corrupted (the WAL's checksummed frames are replayed or ignored whole). What NORMAL gives
//!   up is only the last transactions before an *operating-system* crash or power loss (the
//!   WAL is fsynced at checkpoints, not at every commit). That trade is right for telemetry and
//!   a cache (one record per LLM call; an fsync per record would cost more than the record is
//!   worth); [`Durability::Full`] (`synchronous=FULL`, an fsync per commit) is there for users
//!   who want power-loss durability too. `tests/store_crash.rs` kills a writer with SIGKILL
//!   mid-import and checks integrity and that every reported commit survived.
//! * `busy_timeout` (5 s by default) makes SQLite wait for a lock instead of failing, and
//!   every write runs in a `BEGIN IMMEDIATE` transaction (the write lock is taken up front, so
//!   the busy handler applies and no deferred transaction has to be upgraded) inside a retry
//!   loop with exponential back-off for the `SQLITE_BUSY` cases the handler does not cover.
//!   One record per transaction: a commit is a record.
//! * A [`Store`] holds one connection behind a mutex, so it is `Send + Sync` and can be shared
//!   by threads; separate `Store`s on the same file (threads or processes) coordinate through
//!   SQLite's locks.
//!
//! # What is stored
//!
//! Records: indexed columns `task`, `language`, `model`, `timestamp`, `tier`, `pass`; every
//! other field as JSON in `body` (hashes, normalised code-free answers, scores, verdicts).
//! `source_text` has its own column and is written only when the record carries it (the
//! producer sets it only when the user opted in to storing code). Records are idempotent by
//! id: storing an id that is present keeps the first version. Non-finite numbers (NaN, ±inf)
//! have no JSON form and are refused ([`StoreError::InvalidRecord`]): an undefined score
//! should be absent from `scores`.
//!
//! Labels: every label is kept (a history); the one that counts for a subject is the latest
//! (largest timestamp, then latest inserted). A label identical in subject, timestamp, verdict
//! and note to a stored one is not stored twice (imports are idempotent). An empty note is no
//! note.
//!
//! # Retention
//!
//! [`Retention`] (defaults: records 180 days and at most 1,000,000; labels 730 days; cache
//! entries unused for 90 days, and the cache at most 200 MiB, least recently used evicted
//! first) is applied by [`Store::prune`], which takes `now` (the store reads no clock for
//! retention); the front ends call it at start-up. Freed pages are returned to the file system
//! (`auto_vacuum=INCREMENTAL`).
//!
//! # Failure
//!
//! A store that cannot be opened (read-only or missing directory, a file that is not a
//! database, another application's database, a newer schema) yields a [`StoreError`] whose
//! message names the file and the way out; [`Store::open_optional`] logs it and returns
//! `None`, and callers then continue without a store (no cache, no telemetry).

pub mod cache;
pub mod error;
pub mod path;
pub mod records;
pub mod schema;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use serde::{Deserialize, Serialize};

pub use error::StoreError;
pub use path::{default_db_path, resolve_db_path, DB_FILE_NAME};
pub use records::RecordFilter;
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};

/// Seconds in a day, for the retention ages.
const DAY: i64 = 86_400;

/// How hard a commit is pushed to disk (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// `synchronous=NORMAL`: survives a killed process; the last commits may be lost on an OS
    /// crash or power loss.
    #[default]
    Normal,
    /// `synchronous=FULL`: an fsync per commit; survives power loss.
    Full,
}

/// Retention and size limits applied by [`Store::prune`]. `None` disables a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Retention {
    /// Records older than this many days are deleted.
    pub record_max_age_days: Option<u32>,
    /// At most this many records are kept (the newest).
    pub max_records: Option<u64>,
    /// Labels older than this many days are deleted.
    pub label_max_age_days: Option<u32>,
    /// Cache entries not used for this many days are deleted.
    pub cache_max_age_days: Option<u32>,
    /// The cache is cut to this many bytes (key + value), least recently used first.
    pub cache_max_bytes: Option<u64>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            record_max_age_days: Some(180),
            max_records: Some(1_000_000),
            label_max_age_days: Some(730),
            cache_max_age_days: Some(90),
            cache_max_bytes: Some(200 * 1024 * 1024),
        }
    }
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreConfig {
    pub durability: Durability,
    /// How long SQLite waits for another process's lock before a retry.
    pub busy_timeout_ms: u64,
    pub retention: Retention,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            durability: Durability::Normal,
            busy_timeout_ms: 5_000,
            retention: Retention::default(),
        }
    }
}

/// What [`Store::prune`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PruneReport {
    pub records_expired: u64,
    pub records_over_limit: u64,
    pub labels_expired: u64,
    pub cache_expired: u64,
    pub cache_evicted: u64,
    /// Cache size (bytes) after pruning.
    pub cache_bytes: u64,
}

/// Counts of what the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StoreCounts {
    pub records: u64,
    pub records_with_source: u64,
    pub labels: u64,
    pub cache_entries: u64,
    pub cache_bytes: u64,
}

type Clock = Box<dyn Fn() -> i64 + Send + Sync>;

/// Seconds since the Unix epoch from the system clock (0 if the clock is before 1970).
pub fn system_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// An open store. See the module docs.
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
    config: StoreConfig,
    /// Timestamps of cache entries (`created`, `last_used`); the system clock unless replaced.
    clock: Clock,
    /// Cache puts since the last size check.
    puts_since_check: AtomicU32,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Runs `f`, retrying with exponential back-off (10 ms doubling to 1 s, 12 attempts) while
/// SQLite reports the database busy or locked; other errors are classified at once.
pub(crate) fn retry_busy<T>(
    path: &Path,
    mut f: impl FnMut() -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    const ATTEMPTS: u32 = 12;
    let mut delay = Duration::from_millis(10);
    for attempt in 1..=ATTEMPTS {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if StoreError::is_busy(&e) => {
                if attempt < ATTEMPTS {
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_secs(1));
                }
            }
            Err(e) => return Err(StoreError::sqlite(path, e)),
        }
    }
    Err(StoreError::Busy {
        path: path.to_path_buf(),
        attempts: ATTEMPTS,
    })
}

/// Creates `dir` and its missing parents (mode 0700 on Unix).
fn create_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Creates an empty database file (mode 0600 on Unix) unless one exists.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates it to [`SCHEMA_VERSION`].
    pub fn open(path: &Path, config: StoreConfig) -> Result<Store, StoreError> {
        let open_err = |reason: String| StoreError::Open {
            path: path.to_path_buf(),
            reason,
        };
        if path.is_dir() {
            return Err(open_err("it is a directory".into()));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if parent.exists() && !parent.is_dir() {
                return Err(open_err(format!("{} is not a directory", parent.display())));
            }
            if !parent.is_dir() {
                create_dirs(parent)
                    .map_err(|e| open_err(format!("cannot create {}: {e}", parent.display())))?;
            }
        }
        create_private_file(path).map_err(|e| open_err(e.to_string()))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| StoreError::sqlite(path, e))?;
        Self::configure(&mut conn, path, &config)?;
        schema::migrate(&mut conn, path, schema::MIGRATIONS)?;
        Ok(Store {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
            config,
            clock: Box::new(system_now),
            puts_since_check: AtomicU32::new(0),
        })
    }

    /// Opens the store at the default path of the process environment.
    pub fn open_default(config: StoreConfig) -> Result<Store, StoreError> {
        Self::open(&default_db_path()?, config)
    }

    /// Opens the store, or logs why it cannot be opened and returns `None`: the caller then
    /// continues without a store.
    pub fn open_optional(path: Result<PathBuf, StoreError>, config: StoreConfig) -> Option<Store> {
        match path.and_then(|p| Self::open(&p, config)) {
            Ok(store) => Some(store),
            Err(e) => {
                tracing::warn!("continuing without a store (no cache, no telemetry): {e}");
                None
            }
        }
    }

    fn configure(
        conn: &mut Connection,
        path: &Path,
        config: &StoreConfig,
    ) -> Result<(), StoreError> {
        conn.busy_timeout(Duration::from_millis(config.busy_timeout_ms))
            .map_err(|e| StoreError::sqlite(path, e))?;
        // Reading the page count reads the header: a file that is not a database fails here.
        let pages: i64 = retry_busy(path, || {
            conn.query_row("PRAGMA page_count", [], |r| r.get(0))
        })?;
        if pages == 0 {
            // Only possible before the first table exists.
            retry_busy(path, || {
                conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
            })?;
        }
        let mode: String = retry_busy(path, || {
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        })?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(
                "store {}: the file system does not support WAL (journal mode {mode}); \
                 concurrent writers will wait longer",
                path.display()
            );
        }
        let sync = match config.durability {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        };
        retry_busy(path, || conn.pragma_update(None, "synchronous", sync))?;
        Ok(())
    }

    /// Replaces the clock used for cache timestamps (seconds since the epoch). For tests and
    /// for front ends that keep their own time source.
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    pub(crate) fn now(&self) -> i64 {
        (self.clock)()
    }

    /// The connection; a panic in another thread while it held the lock cannot have left a
    /// transaction open (transactions roll back on drop), so a poisoned lock is still usable.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction, retried while the database is busy.
    pub(crate) fn write<T>(
        &self,
        mut f: impl FnMut(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn();
        retry_busy(&self.path, || {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// Runs a read-only query, retried while the database is busy.
    pub(crate) fn read<T>(
        &self,
        mut f: impl FnMut(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = self.conn();
        retry_busy(&self.path, || f(&conn))
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.read(|c| schema::read_version(c).map(|(_, v)| v))
    }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound database, else the problems found.
    pub fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare("PRAGMA integrity_check")?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect()
        })
    }

    /// How many records, labels and cache entries the store holds.
    pub fn counts(&self) -> Result<StoreCounts, StoreError> {
        self.read(|c| {
            let count = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0));
            Ok(StoreCounts {
                records: count("SELECT count(*) FROM records")? as u64,
                records_with_source: count(
                    "SELECT count(*) FROM records WHERE source_text IS NOT NULL",
                )? as u64,
                labels: count("SELECT count(*) FROM labels")? as u64,
                cache_entries: count("SELECT count(*) FROM llm_cache")? as u64,
                cache_bytes: count("SELECT coalesce(sum(size), 0) FROM llm_cache")? as u64,
            })
        })
    }

    /// Applies the configured [`Retention`] as of `now` (seconds since the epoch), in one
    /// transaction, then returns freed pages to the file system.
    pub fn prune(&self, now: i64) -> Result<PruneReport, StoreError> {
        let r = self.config.retention;
        let cutoff = |days: u32| now.saturating_sub(i64::from(days).saturating_mul(DAY));
        let report = self.write(|tx| {
            let mut report = PruneReport::default();
            if let Some(days) = r.record_max_age_days {
                report.records_expired =
                    tx.execute("DELETE FROM records WHERE timestamp < ?1", [cutoff(days)])? as u64;
            }
            if let Some(max) = r.max_records {
                report.records_over_limit = tx.execute(
                    "DELETE FROM records WHERE id IN (SELECT id FROM records \
                     ORDER BY timestamp DESC, id DESC LIMIT -1 OFFSET ?1)",
                    [i64::try_from(max).unwrap_or(i64::MAX)],
                )? as u64;
            }
            if let Some(days) = r.label_max_age_days {
                report.labels_expired =
                    tx.execute("DELETE FROM labels WHERE timestamp < ?1", [cutoff(days)])? as u64;
            }
            if let Some(days) = r.cache_max_age_days {
                report.cache_expired = tx
                    .execute("DELETE FROM llm_cache WHERE last_used < ?1", [cutoff(days)])?
                    as u64;
            }
            if let Some(max) = r.cache_max_bytes {
                report.cache_evicted = cache::evict_to(tx, max)?;
            }
            report.cache_bytes = cache::total_bytes(tx)?;
            Ok(report)
        })?;
        // Outside the transaction: return free pages to the file system.
        self.read(|c| c.execute_batch("PRAGMA incremental_vacuum"))?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma(store: &Store, name: &str) -> i64 {
        store
            .read(|c| c.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0)))
            .unwrap_or(-1)
    }

    #[test]
    fn connection_settings_follow_the_config() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let normal = Store::open(&dir.path().join("n.db"), StoreConfig::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pragma(&normal, "synchronous"), 1, "NORMAL");
        assert_eq!(pragma(&normal, "busy_timeout"), 5_000);
        let full = Store::open(
            &dir.path().join("f.db"),
            StoreConfig {
                durability: Durability::Full,
                busy_timeout_ms: 250,
                ..StoreConfig::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pragma(&full, "synchronous"), 2, "FULL");
        assert_eq!(pragma(&full, "busy_timeout"), 250);
    }

    #[test]
    fn retry_gives_up_on_persistent_busy_with_a_busy_error() {
        let mut calls = 0;
        let busy = || {
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                None,
            )
        };
        let result: Result<(), _> = retry_busy(Path::new("x.db"), || {
            calls += 1;
            Err(busy())
        });
        assert!(matches!(result, Err(StoreError::Busy { attempts: 12, .. })));
        assert_eq!(calls, 12);
        let mut n = 0;
        let ok = retry_busy(Path::new("x.db"), || {
            n += 1;
            if n < 3 {
                Err(busy())
            } else {
                Ok(n)
            }
        });
        assert_eq!(ok.ok(), Some(3));
    }
}
