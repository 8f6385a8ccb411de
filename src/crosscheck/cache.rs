//! The content-addressed answer cache.
//!
//! # Key
//!
//! [`cache_key`] is `cc1:` + SHA-256 over, in this order (each field length-prefixed): the
//! task, the template id and effective version, the template fingerprint (names, versions
//! and bodies of the template files used, and the answer schema), the model identity
//! ([`crate::llm::LlmClient::model_id`]), the sampling parameters (temperature, seed,
//! max_tokens, schema name), the sample index, the hash of every prompt input
//! ([`crate::crosscheck::prompts::PromptInputs::input_hash`]: the function text numbered
//! from 1, the question, the callee summaries) and the hash of the rendered prompt text.
//! Nothing depends on where the function sits in its file, so an unchanged function is never
//! sent again when code above it moves; any change to the function, its question, the
//! template or the model gives a new key.
//!
//! # Layers
//!
//! [`AnswerCache`] keeps answers in memory (a [`DashMap`], at most [`MEMORY_ENTRIES`]
//! entries) in front of an optional persistent [`CacheBackend`] (the store). Reads try memory,
//! then the backend (a backend hit is promoted to memory); writes go to both. Only answers
//! that were read successfully are cached (the engine decides), and a `fresh` run neither
//! reads nor writes.

use super::hash::sha256_fields;
use super::record::CacheBackend;
use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// In-memory entries kept at most (further answers go to the backend only).
pub const MEMORY_ENTRIES: usize = 10_000;

/// Everything that identifies one LLM answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheKeyParts<'a> {
    pub task: &'a str,
    pub template_id: &'a str,
    pub template_version: u32,
    pub template_fingerprint: &'a str,
    pub model: &'a str,
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
    pub schema_name: &'a str,
    pub sample: usize,
    pub input_hash: &'a str,
    pub prompt_hash: &'a str,
}

/// The cache key of one answer (see the module docs).
pub fn cache_key(p: &CacheKeyParts<'_>) -> String {
    let opt = |o: Option<String>| o.unwrap_or_else(|| "-".to_string());
    let fields = [
        p.task.to_string(),
        p.template_id.to_string(),
        p.template_version.to_string(),
        p.template_fingerprint.to_string(),
        p.model.to_string(),
        opt(p.temperature.map(|t| format!("{t:?}"))),
        opt(p.seed.map(|s| s.to_string())),
        opt(p.max_tokens.map(|m| m.to_string())),
        p.schema_name.to_string(),
        p.sample.to_string(),
        p.input_hash.to_string(),
        p.prompt_hash.to_string(),
    ];
    format!("cc1:{}", sha256_fields(fields.iter().map(String::as_str)))
}

/// A cached answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedAnswer {
    pub text: String,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency_ms: u64,
}

/// Memory in front of an optional persistent backend.
pub struct AnswerCache {
    memory: DashMap<String, String>,
    backend: Option<Arc<dyn CacheBackend>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl std::fmt::Debug for AnswerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerCache")
            .field("memory_entries", &self.memory.len())
            .field("backend", &self.backend.is_some())
            .field("hits", &self.hits.load(Ordering::Relaxed))
            .field("misses", &self.misses.load(Ordering::Relaxed))
            .finish()
    }
}

impl Default for AnswerCache {
    fn default() -> Self {
        AnswerCache::new(None)
    }
}

impl AnswerCache {
    pub fn new(backend: Option<Arc<dyn CacheBackend>>) -> AnswerCache {
        AnswerCache {
            memory: DashMap::new(),
            backend,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The cached answer for `key`, counting a hit or a miss. Unreadable entries are misses.
    pub fn get(&self, key: &str) -> Option<CachedAnswer> {
        let raw = match self.memory.get(key) {
            Some(v) => Some(v.value().clone()),
            None => {
                let from_backend = self.backend.as_ref().and_then(|b| b.get(key));
                if let Some(v) = &from_backend {
                    self.remember(key, v);
                }
                from_backend
            }
        };
        match raw.and_then(|r| serde_json::from_str::<CachedAnswer>(&r).ok()) {
            Some(a) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(a)
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Stores an answer in memory and in the backend.
    pub fn put(&self, key: &str, answer: &CachedAnswer) {
        let Ok(text) = serde_json::to_string(answer) else {
            return;
        };
        self.remember(key, &text);
        if let Some(b) = &self.backend {
            b.put(key, &text);
        }
    }

    fn remember(&self, key: &str, value: &str) {
        if self.memory.len() < MEMORY_ENTRIES || self.memory.contains_key(key) {
            self.memory.insert(key.to_string(), value.to_string());
        }
    }

    /// `(hits, misses)` so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crosscheck::memory::MemoryBackend;

    fn parts(sample: usize) -> CacheKeyParts<'static> {
        CacheKeyParts {
            task: "cfg",
            template_id: "cfg/role/zero",
            template_version: 3,
            template_fingerprint: "fp",
            model: "fake:m",
            temperature: None,
            seed: Some(1),
            max_tokens: None,
            schema_name: "cfg",
            sample,
            input_hash: "in",
            prompt_hash: "pr",
        }
    }

    #[test]
    fn every_part_enters_the_key() {
        let base = cache_key(&parts(0));
        assert!(base.starts_with("cc1:") && base.len() == 68);
        assert_eq!(base, cache_key(&parts(0)));
        let variants = [
            CacheKeyParts {
                task: "ast",
                ..parts(0)
            },
            CacheKeyParts {
                template_id: "cfg/cot/zero",
                ..parts(0)
            },
            CacheKeyParts {
                template_version: 4,
                ..parts(0)
            },
            CacheKeyParts {
                template_fingerprint: "fp2",
                ..parts(0)
            },
            CacheKeyParts {
                model: "fake:n",
                ..parts(0)
            },
            CacheKeyParts {
                temperature: Some(0.7),
                ..parts(0)
            },
            CacheKeyParts {
                seed: Some(2),
                ..parts(0)
            },
            CacheKeyParts {
                max_tokens: Some(10),
                ..parts(0)
            },
            CacheKeyParts {
                schema_name: "x",
                ..parts(0)
            },
            parts(1),
            CacheKeyParts {
                input_hash: "in2",
                ..parts(0)
            },
            CacheKeyParts {
                prompt_hash: "pr2",
                ..parts(0)
            },
        ];
        for v in variants {
            assert_ne!(cache_key(&v), base, "{v:?}");
        }
    }

    #[test]
    fn memory_in_front_of_the_backend() {
        let backend = Arc::new(MemoryBackend::default());
        let cache = AnswerCache::new(Some(backend.clone()));
        let a = CachedAnswer {
            text: "{}".into(),
            model: "m".into(),
            prompt_tokens: 1,
            completion_tokens: 2,
            latency_ms: 3,
        };
        assert_eq!(cache.get("k"), None);
        cache.put("k", &a);
        assert_eq!(cache.get("k"), Some(a.clone()));
        assert_eq!(backend.len(), 1);
        // A second cache over the same backend finds it there and promotes it.
        let other = AnswerCache::new(Some(backend.clone()));
        assert_eq!(other.get("k"), Some(a));
        assert_eq!(other.stats(), (1, 0));
        assert_eq!(cache.stats(), (1, 1));
        // Garbage in the backend is a miss, not an error.
        backend.put("bad", "not json");
        assert_eq!(other.get("bad"), None);
    }
}
