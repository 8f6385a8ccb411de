//! The LLM client layer: the only module that speaks HTTP.
//!
//! It deals in prompts, strings and JSON, and knows nothing of the analyses or the syntax layer.
//!
//! - [`LlmSettings`] / [`resolve`]: configuration from the user's config file and environment,
//!   never from an analysed workspace (see [`settings`]).
//! - [`LlmClient`]: an object-safe async trait; [`HttpClient`] implements it for
//!   OpenAI-compatible servers and Anthropic; [`FakeClient`] is a scripted stand-in for tests.
//! - [`answer`]: defensive extraction of JSON answers and yes/no/unknown verdicts from model text.
//! - [`Budget`]: token accounting per session and per day.
//! - [`upload`]: opt-in `POST` of telemetry JSON Lines batches to a user-configured HTTPS URL.
//!
//! Cancellation: every future returned by [`LlmClient::complete`] owns its request; dropping
//! it (for example when an LSP request is cancelled, or via `tokio::time::timeout`) aborts the
//! HTTP exchange and closes its connection. No task is spawned behind the caller's back.

pub mod answer;
pub mod budget;
pub mod error;
pub mod fake;
pub mod http;
pub mod limits;
pub mod retry;
pub mod settings;
pub mod upload;

pub use answer::{extract_json, parse_verdict, AnswerError, JsonAnswer, Verdict};
pub use budget::{Budget, BudgetedClient};
pub use error::{BudgetScope, LlmError};
pub use fake::{FakeClient, FakeReply};
pub use http::HttpClient;
pub use settings::{resolve, LlmSettings, Provider, SettingsError};
pub use upload::{UploadError, UploadSettings, Uploader};

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, `Send` future (keeps [`LlmClient`] object safe without extra crates).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One chat completion: a system prompt and a single user turn.
///
/// `None` sampling fields fall back to the client's [`LlmSettings`] defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ChatRequest {
    pub system: String,
    pub user: String,
    /// JSON Schema of the expected answer. OpenAI-compatible: `response_format: json_schema`;
    /// Anthropic: a forced tool whose `input_schema` is this schema.
    pub json_schema: Option<serde_json::Value>,
    /// Name given to the schema / tool (`[A-Za-z0-9_-]`, default `"answer"`).
    pub schema_name: Option<String>,
    /// Ask OpenAI for strict schema adherence (the schema must then meet OpenAI's strict rules).
    pub strict_schema: bool,
    /// A llama.cpp GBNF grammar; sent only when llama.cpp extensions are on, and then instead
    /// of `response_format` (llama-server refuses both at once).
    pub grammar: Option<String>,
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
    /// Free-form label for logs and telemetry (task name, file); never sent to the server.
    pub tag: Option<String>,
}

impl ChatRequest {
    pub fn new(system: impl Into<String>, user: impl Into<String>) -> ChatRequest {
        ChatRequest {
            system: system.into(),
            user: user.into(),
            ..ChatRequest::default()
        }
    }

    pub fn with_schema(mut self, name: &str, schema: serde_json::Value, strict: bool) -> Self {
        self.schema_name = Some(name.to_string());
        self.json_schema = Some(schema);
        self.strict_schema = strict;
        self
    }

    pub fn with_grammar(mut self, grammar: impl Into<String>) -> Self {
        self.grammar = Some(grammar.into());
        self
    }

    pub fn with_temperature(mut self, t: f32) -> Self {
        self.temperature = Some(t);
        self
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    pub fn with_max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    /// The schema/tool name actually sent: `schema_name` reduced to `[A-Za-z0-9_-]`, at most 64
    /// characters, `"answer"` when empty.
    pub fn schema_name_sanitized(&self) -> String {
        let name: String = self
            .schema_name
            .as_deref()
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .take(64)
            .collect();
        if name.is_empty() {
            "answer".to_string()
        } else {
            name
        }
    }
}

/// A completed chat call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The answer text. For an Anthropic forced tool call: the tool input serialised as JSON.
    pub text: String,
    /// The model that answered (as reported by the server, else the configured one).
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// True when the server reported no usage and the counts are `chars / 4` estimates.
    pub tokens_estimated: bool,
    /// Wall time of the whole call, retries included.
    pub latency_ms: u64,
    /// Always false here; a cache layer sets it when it serves a stored answer.
    pub from_cache: bool,
    /// The server stopped because of the token limit (`finish_reason: length`,
    /// `stop_reason: max_tokens`): the text is probably cut off.
    pub truncated: bool,
    /// HTTP attempts made (1 = no retry).
    pub attempts: u32,
}

impl ChatResponse {
    pub fn total_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

/// Token count estimate used when a provider reports none: characters / 4, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// An LLM backend. Object safe: hold it as `Arc<dyn LlmClient>`.
pub trait LlmClient: Send + Sync {
    /// Runs one chat completion. Dropping the returned future aborts the call.
    fn complete(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>>;

    /// A stable identity for cache keys and telemetry, e.g. `openai:gpt-4o-mini@https://...`.
    fn model_id(&self) -> String;
}

impl<T: LlmClient + ?Sized> LlmClient for Arc<T> {
    fn complete(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        (**self).complete(req)
    }

    fn model_id(&self) -> String {
        (**self).model_id()
    }
}

impl<T: LlmClient + ?Sized> LlmClient for Box<T> {
    fn complete(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        (**self).complete(req)
    }

    fn model_id(&self) -> String {
        (**self).model_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_sanitised() {
        let r = ChatRequest::new("", "").with_schema("cfg edges!", serde_json::json!({}), true);
        assert_eq!(r.schema_name_sanitized(), "cfgedges");
        assert_eq!(ChatRequest::new("", "").schema_name_sanitized(), "answer");
    }

    #[test]
    fn token_estimate_rounds_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("ééé"), 1, "counts characters, not bytes");
    }

    #[test]
    fn client_trait_is_object_safe() {
        let c: Arc<dyn LlmClient> = Arc::new(FakeClient::new());
        assert_eq!(c.model_id(), "fake:fake");
    }
}
