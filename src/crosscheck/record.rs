//! What a cross-check leaves behind: tiers, the record persisted as telemetry, human labels, and
//! the storage traits the `store` layer implements (this layer defines them so it does not depend
//! on the layer above: the front ends wire a store in).
//!
//! Records hold hashes, verdicts and scores, never source text, unless the user opted in
//! (`source_text`), per architecture invariant 6.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How much a finding or claim can be trusted, decided from evidence only (highest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// The analyzer's finding and the LLM agree, or a deterministic proof exists.
    Confirmed,
    /// The analyzer's finding; the LLM disagreed, was unstable, or was not asked.
    AnalyzerOnly,
    /// Only the LLM claims it: unverified.
    LlmOnly,
    /// The LLM claims something the analyzer's definite facts contradict.
    Refuted,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Confirmed => "confirmed",
            Tier::AnalyzerOnly => "analyzer-only",
            Tier::LlmOnly => "llm-only",
            Tier::Refuted => "refuted",
        }
    }
}

/// One LLM sample of a cross-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    /// The normalised answer (structure and verdicts; code-free).
    pub answer: serde_json::Value,
    /// Whether the sample's answer could be parsed.
    pub parsed: bool,
    pub latency_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub from_cache: bool,
}

/// A cross-check as stored in telemetry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossCheckRecord {
    /// Stable identifier: a hash over the cache key and time, set by the producer.
    pub id: String,
    /// Seconds since the Unix epoch (UTC), set by the front end (pure layers have no clock).
    pub timestamp: i64,
    pub task: String,
    pub language: String,
    pub model: String,
    pub template_id: String,
    pub template_version: u32,
    pub strategy: String,
    /// SHA-256 (hex) of the analysed code unit (function text, numbered from 1).
    pub code_hash: String,
    /// The analyzer's answer, normalised and code-free.
    pub analyzer: serde_json::Value,
    pub samples: Vec<SampleRecord>,
    /// Layer-1 scores by name (e.g. `jump_fabrication`), or agreement figures.
    pub scores: BTreeMap<String, f64>,
    pub pass: Option<bool>,
    pub tier: Option<Tier>,
    /// Share of samples disagreeing with the majority (0 for one sample).
    pub instability: f64,
    pub latency_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The source text, only when the user opted in to storing code.
    pub source_text: Option<String>,
}

/// A human verdict on a finding or cross-check ("mark correct / incorrect").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanLabel {
    /// The cross-check record id, or a finding fingerprint.
    pub subject: String,
    pub correct: bool,
    pub timestamp: i64,
    /// Optional free-text note (never code).
    pub note: Option<String>,
}

/// A persistent, content-addressed answer cache (implemented by the store).
pub trait CacheBackend: Send + Sync {
    fn get(&self, key: &str) -> Option<String>;
    fn put(&self, key: &str, value: &str);
}

/// Where cross-check records and labels go (implemented by the store).
pub trait RecordSink: Send + Sync {
    fn record(&self, record: &CrossCheckRecord) -> Result<(), String>;
    fn label(&self, label: &HumanLabel) -> Result<(), String>;
}
