//! Where the store lives by default: the per-user data directory.
//!
//! Resolution order (first that applies):
//! 1. `$CROSSCHECK_DATA_DIR/crosscheck.db`
//! 2. `$XDG_DATA_HOME/crosscheck/crosscheck.db` (only if absolute, as the XDG Base Directory
//!    specification requires: a relative value is ignored)
//! 3. `$HOME/.local/share/crosscheck/crosscheck.db`
//!
//! Empty variables count as unset. The resolver takes the environment as a lookup function so
//! it is pure and testable; [`default_db_path`] passes the process environment.

use std::path::{Path, PathBuf};

use super::StoreError;

/// File name of the database inside the data directory.
pub const DB_FILE_NAME: &str = "crosscheck.db";

/// Resolves the default database path from an environment lookup (see the module docs).
pub fn resolve_db_path(env: impl Fn(&str) -> Option<String>) -> Result<PathBuf, StoreError> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("CROSSCHECK_DATA_DIR") {
        return Ok(PathBuf::from(dir).join(DB_FILE_NAME));
    }
    if let Some(dir) = var("XDG_DATA_HOME") {
        if Path::new(&dir).is_absolute() {
            return Ok(PathBuf::from(dir).join("crosscheck").join(DB_FILE_NAME));
        }
    }
    if let Some(home) = var("HOME") {
        return Ok(PathBuf::from(home)
            .join(".local")
            .join("share")
            .join("crosscheck")
            .join(DB_FILE_NAME));
    }
    Err(StoreError::NoDataDir)
}

/// [`resolve_db_path`] over the process environment.
pub fn default_db_path() -> Result<PathBuf, StoreError> {
    resolve_db_path(|name| std::env::var(name).ok())
}
