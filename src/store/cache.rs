//! The persistent LLM answer cache: content-addressed `key -> value` with `created`,
//! `last_used` (seconds since the epoch, from the store's clock) and `size` (bytes of key plus
//! value). Eviction is least recently used first (ties: oldest created, then key order), down
//! to [`Retention::cache_max_bytes`](super::Retention::cache_max_bytes); it runs in
//! [`Store::prune`] and, so a long session stays bounded, every [`CHECK_EVERY`] puts.
//!
//! As a [`CacheBackend`] the store never fails the caller: an error is logged and the lookup is
//! a miss (or the put is dropped). A cache is an optimisation.

use std::sync::atomic::Ordering;

use rusqlite::{params, Connection, OptionalExtension};

use super::{Store, StoreError};
use crate::crosscheck::record::CacheBackend;

/// The cache size is checked against the limit every this many puts.
pub const CHECK_EVERY: u32 = 64;

/// Total bytes (key + value) in the cache.
pub(crate) fn total_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row("SELECT coalesce(sum(size), 0) FROM llm_cache", [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| u64::try_from(n).unwrap_or(0))
}

/// Deletes least recently used entries until the cache holds at most `max_bytes`; returns how
/// many were deleted.
pub(crate) fn evict_to(conn: &Connection, max_bytes: u64) -> rusqlite::Result<u64> {
    let total = total_bytes(conn)?;
    if total <= max_bytes {
        return Ok(0);
    }
    let excess = total - max_bytes;
    let mut victims = Vec::new();
    {
        let mut stmt = conn
            .prepare_cached("SELECT key, size FROM llm_cache ORDER BY last_used, created, key")?;
        let mut rows = stmt.query([])?;
        let mut freed = 0u64;
        while freed < excess {
            let Some(row) = rows.next()? else { break };
            let key: String = row.get(0)?;
            let size: i64 = row.get(1)?;
            freed = freed.saturating_add(u64::try_from(size).unwrap_or(0));
            victims.push(key);
        }
    }
    let mut stmt = conn.prepare_cached("DELETE FROM llm_cache WHERE key = ?1")?;
    for key in &victims {
        stmt.execute([key])?;
    }
    Ok(victims.len() as u64)
}

impl Store {
    /// The cached value of `key`, marking it used now.
    pub fn cache_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        let now = self.now();
        let conn = self.conn();
        let hit: Option<(String, i64)> = super::retry_busy(&self.path, || {
            conn.prepare_cached("SELECT value, last_used FROM llm_cache WHERE key = ?1")?
                .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })?;
        let Some((value, last_used)) = hit else {
            return Ok(None);
        };
        if last_used < now {
            // Best effort: a lost LRU touch only makes eviction slightly less accurate, and a
            // lookup must not wait on other writers' retries.
            let touched = conn
                .prepare_cached(
                    "UPDATE llm_cache SET last_used = ?1 WHERE key = ?2 AND last_used < ?1",
                )
                .and_then(|mut s| s.execute(params![now, key]));
            if let Err(e) = touched {
                tracing::debug!("cache: could not mark {key:?} used: {e}");
            }
        }
        Ok(Some(value))
    }

    /// Stores `value` under `key` (replacing any previous value), then every
    /// [`CHECK_EVERY`] puts evicts down to the size limit.
    pub fn cache_put(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let now = self.now();
        let size = i64::try_from(key.len().saturating_add(value.len())).unwrap_or(i64::MAX);
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO llm_cache (key, value, created, last_used, size) \
                 VALUES (?1, ?2, ?3, ?3, ?4) \
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, \
                 last_used = excluded.last_used, size = excluded.size",
            )?
            .execute(params![key, value, now, size])
            .map(|_| ())
        })?;
        let puts = self.puts_since_check.fetch_add(1, Ordering::Relaxed) + 1;
        if puts >= CHECK_EVERY {
            self.puts_since_check.store(0, Ordering::Relaxed);
            if let Some(max) = self.config.retention.cache_max_bytes {
                self.write(|tx| evict_to(tx, max))?;
            }
        }
        Ok(())
    }

    /// `(entries, bytes)` of the cache.
    pub fn cache_size(&self) -> Result<(u64, u64), StoreError> {
        self.read(|c| {
            let n: i64 = c.query_row("SELECT count(*) FROM llm_cache", [], |r| r.get(0))?;
            Ok((u64::try_from(n).unwrap_or(0), total_bytes(c)?))
        })
    }
}

impl CacheBackend for Store {
    fn get(&self, key: &str) -> Option<String> {
        self.cache_get(key).unwrap_or_else(|e| {
            tracing::warn!("cache lookup failed (treated as a miss): {e}");
            None
        })
    }

    fn put(&self, key: &str, value: &str) {
        if let Err(e) = self.cache_put(key, value) {
            tracing::warn!("cache write failed (answer not cached): {e}");
        }
    }
}
