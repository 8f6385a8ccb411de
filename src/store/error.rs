//! Errors of the store, worded for the user: each names the database file and what to do.

use std::fmt;
use std::path::PathBuf;

use rusqlite::ErrorCode;

/// Why the store could not be opened, read or written.
#[derive(Debug)]
pub enum StoreError {
    /// No data directory could be determined (no `CROSSCHECK_DATA_DIR`, `XDG_DATA_HOME` or
    /// `HOME`).
    NoDataDir,
    /// The file (or its directory) could not be created or opened.
    Open { path: PathBuf, reason: String },
    /// The file exists but is not an SQLite database (or is damaged beyond reading).
    NotADatabase { path: PathBuf, reason: String },
    /// The file is an SQLite database of another application.
    Foreign { path: PathBuf, reason: String },
    /// The database was written by a newer crosscheck with a schema this one does not know.
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// A schema migration failed (it was rolled back; the store is at `from`).
    Migration {
        path: PathBuf,
        from: u32,
        to: u32,
        reason: String,
    },
    /// The database stayed locked by other processes beyond the retry budget.
    Busy { path: PathBuf, attempts: u32 },
    /// A record the store refuses (e.g. an empty id or a non-finite score).
    InvalidRecord { id: String, reason: String },
    /// A stored row that cannot be decoded.
    Corrupt { path: PathBuf, reason: String },
    /// Any other SQLite failure.
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Classifies a SQLite error raised while working on `path`.
    pub(crate) fn sqlite(path: &std::path::Path, source: rusqlite::Error) -> Self {
        let path = path.to_path_buf();
        match source.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => {
                StoreError::NotADatabase {
                    path,
                    reason: source.to_string(),
                }
            }
            Some(ErrorCode::CannotOpen)
            | Some(ErrorCode::PermissionDenied)
            | Some(ErrorCode::ReadOnly)
            | Some(ErrorCode::SystemIoFailure)
            | Some(ErrorCode::DiskFull) => StoreError::Open {
                path,
                reason: source.to_string(),
            },
            _ => StoreError::Sqlite { path, source },
        }
    }

    /// Whether the error is transient lock contention worth retrying.
    pub(crate) fn is_busy(source: &rusqlite::Error) -> bool {
        matches!(
            source.sqlite_error_code(),
            Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
        )
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NoDataDir => write!(
                f,
                "no data directory: set CROSSCHECK_DATA_DIR (or XDG_DATA_HOME or HOME), or pass --db"
            ),
            StoreError::Open { path, reason } => write!(
                f,
                "cannot open the store at {}: {reason} (check that the directory exists and is \
                 writable, or pass another --db / CROSSCHECK_DATA_DIR)",
                path.display()
            ),
            StoreError::NotADatabase { path, reason } => write!(
                f,
                "the store at {} is not a readable SQLite database ({reason}); move it aside to \
                 start a new store",
                path.display()
            ),
            StoreError::Foreign { path, reason } => write!(
                f,
                "{} is an SQLite database of another application ({reason}); crosscheck will not \
                 modify it: pass another --db",
                path.display()
            ),
            StoreError::NewerSchema {
                path,
                found,
                supported,
            } => write!(
                f,
                "the store at {} has schema version {found}, newer than this crosscheck supports \
                 ({supported}); upgrade crosscheck or pass another --db",
                path.display()
            ),
            StoreError::Migration {
                path,
                from,
                to,
                reason,
            } => write!(
                f,
                "migrating the store at {} from schema version {from} to {to} failed and was \
                 rolled back: {reason}",
                path.display()
            ),
            StoreError::Busy { path, attempts } => write!(
                f,
                "the store at {} stayed locked by other processes ({attempts} attempts)",
                path.display()
            ),
            StoreError::InvalidRecord { id, reason } => {
                write!(f, "record {id:?} cannot be stored: {reason}")
            }
            StoreError::Corrupt { path, reason } => {
                write!(f, "the store at {} holds a bad row: {reason}", path.display())
            }
            StoreError::Sqlite { path, source } => {
                write!(f, "store {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Sqlite { source, .. } => Some(source),
            _ => None,
        }
    }
}
