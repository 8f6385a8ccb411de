//! Cross-checking an LLM's analysis against the deterministic reference ("Layer 1" of the
//! research notes): the LLM's answer is read into the same normalised form as the reference
//! and scored; the scores decide pass/fail, tiers say how far each fact can be trusted, and
//! records carry the outcome to telemetry. An LLM verdict alone is never a confirmed fact.
//!
//! * [`task`]: the twelve tasks and the four prompt strategies.
//! * [`prompts`]: prompt templates as data (top-level `prompts/`, embedded, user-overridable),
//!   line-numbered and delimited code, answer schemas.
//! * [`facts`]: the analyzer's side of a question (prompt inputs and reference facts per task),
//!   with the [`facts::TaintOracle`] plug-in for the taint analysis.
//! * [`answers`] (and [`llm_ast`]): normalisers from each task's LLM answer to the comparable
//!   form.
//! * [`scores`]: Layer-1 scores with exact formulas and worked examples ([`scores::ast`],
//!   [`scores::cfg`], [`scores::callgraph`], [`scores::sets`]), on top of [`names`] (identifier
//!   normalisation for call graphs).
//! * [`tier`]: the one pure function that decides tiers, and its application to findings.
//! * [`consistency`]: majority verdicts and pluralities, instability, juries.
//! * [`cache`] (with [`hash`]): the content-addressed answer cache in front of a
//!   [`record::CacheBackend`]; [`memory`]: in-memory backend and record sink.
//! * [`engine`]: one cross-check end to end (prompt, samples, cache, normalise, score, tiers,
//!   records).
//! * [`sampling`]: one LLM sample as every front end draws it (cache key, request, timeout).
//! * [`record`]: tiers, records, labels and the storage traits the store implements.
//!
//! Scoring, normalising, tiering and question preparation are pure, synchronous and
//! deterministic and never panic on any input. [`engine`] is async (it awaits an
//! [`crate::llm::LlmClient`]) and [`prompts::load_override_dir`] reads the user's override
//! directory; nothing here reads the analysed workspace's configuration.

pub mod answers;
pub mod cache;
pub mod consistency;
pub mod engine;
pub mod facts;
pub mod hash;
pub mod llm_ast;
pub mod memory;
pub mod names;
pub mod prompts;
pub mod record;
pub mod sampling;
pub mod scores;
pub mod taint_oracle;
pub mod task;
pub mod tier;
