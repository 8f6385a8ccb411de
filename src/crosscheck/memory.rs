//! In-memory implementations of the storage traits, for tests and for runs without a store.

use super::record::{CacheBackend, CrossCheckRecord, HumanLabel, RecordSink};
use std::collections::BTreeMap;
use std::sync::Mutex;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A [`CacheBackend`] over a map.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    entries: Mutex<BTreeMap<String, String>>,
}

impl MemoryBackend {
    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn keys(&self) -> Vec<String> {
        lock(&self.entries).keys().cloned().collect()
    }
}

impl CacheBackend for MemoryBackend {
    fn get(&self, key: &str) -> Option<String> {
        lock(&self.entries).get(key).cloned()
    }

    fn put(&self, key: &str, value: &str) {
        lock(&self.entries).insert(key.to_string(), value.to_string());
    }
}

/// A [`RecordSink`] that keeps everything in memory.
#[derive(Debug, Default)]
pub struct MemorySink {
    records: Mutex<Vec<CrossCheckRecord>>,
    labels: Mutex<Vec<HumanLabel>>,
}

impl MemorySink {
    pub fn records(&self) -> Vec<CrossCheckRecord> {
        lock(&self.records).clone()
    }

    pub fn labels(&self) -> Vec<HumanLabel> {
        lock(&self.labels).clone()
    }
}

impl RecordSink for MemorySink {
    fn record(&self, record: &CrossCheckRecord) -> Result<(), String> {
        lock(&self.records).push(record.clone());
        Ok(())
    }

    fn label(&self, label: &HumanLabel) -> Result<(), String> {
        lock(&self.labels).push(label.clone());
        Ok(())
    }
}
