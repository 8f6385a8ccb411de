//! [`HttpClient`]: reqwest (rustls) client for OpenAI-compatible servers and Anthropic.
//!
//! Wire conventions (decided here, documented once):
//! - OpenAI-compatible: `POST {base_url}/chat/completions`, `Authorization: Bearer <key>` when a
//!   key is configured, `stream: false`. A schema becomes `response_format: {type: json_schema,
//!   json_schema: {name, schema, strict}}`. `seed`, `temperature`, `max_tokens` are sent when
//!   set (and allowed by `send_temperature` / `send_max_tokens`).
//! - llama.cpp extensions (`cache_prompt: false`, `grammar`) are sent only when
//!   [`LlmSettings::llama_cpp_compat_effective`] holds (explicit setting, else loopback
//!   base URL), because api.openai.com answers 400 to unknown fields. With a grammar,
//!   `response_format` is left out (llama-server refuses both at once).
//! - Anthropic: `POST {base_url}/messages`, `x-api-key`, `anthropic-version`; a schema becomes a
//!   single tool whose `input_schema` is the schema, forced with `tool_choice`; the answer text is
//!   the tool input as JSON. A schema whose top level is not an object is wrapped as
//!   `{"answer": <schema>}` (Anthropic requires object inputs) and unwrapped on return. No seed
//!   (unsupported). `max_tokens` is mandatory there: 4096 when none is set.
//! - A 400 naming a parameter the model refuses (see [`detect_rejection`]) is retried at once
//!   without it; the client remembers the adaptation for its later calls. Adaptation retries do
//!   not count against `retries`.
//! - 429/500/502/503/504/529 and connection errors are retried up to `retries` times with
//!   exponential back-off and jitter; `Retry-After` (seconds or HTTP date) and OpenAI's
//!   `retry-after-ms` are honoured on 429 and 503.
//! - `timeout_secs` bounds everything after admission (concurrency permit + first rate-limit
//!   token): all attempts, back-off and waits. A wait that would overrun it ends the call early.
//! - The key lives only in a sensitive header value; every error body is redacted.

use crate::llm::error::{snippet, LlmError};
use crate::llm::limits::RateLimiter;
use crate::llm::retry::{
    backoff_delay, detect_rejection, is_retryable_status, jitter_fraction, parse_retry_after,
    Rejected,
};
use crate::llm::settings::{is_loopback_url, LlmSettings, Provider};
use crate::llm::{estimate_tokens, BoxFuture, ChatRequest, ChatResponse, LlmClient};
use serde_json::{json, Value};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::Semaphore;

/// Largest response body read (bigger ones are a [`LlmError::BadResponse`]).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
/// `max_tokens` sent to Anthropic when none is configured (the field is mandatory there).
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;
/// At most this many parameter adaptations per call.
const MAX_ADAPTATIONS: u32 = 6;

/// The API key. Never printed: `Debug` shows `ApiKey(***)`.
#[derive(Clone)]
struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Request features switched off after a server refused them (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Adaptations {
    pub no_temperature: bool,
    pub no_max_tokens: bool,
    pub max_completion_tokens: bool,
    pub no_seed: bool,
    pub no_llama_extensions: bool,
    pub json_object: bool,
    pub no_response_format: bool,
}

impl Adaptations {
    /// Applies a rejection; false when it was already applied (so retrying would not help).
    pub fn apply(&mut self, r: Rejected) -> bool {
        let flag = match r {
            Rejected::Temperature => &mut self.no_temperature,
            Rejected::MaxTokens => &mut self.no_max_tokens,
            Rejected::MaxTokensRename => &mut self.max_completion_tokens,
            Rejected::Seed => &mut self.no_seed,
            Rejected::LlamaExtensions => &mut self.no_llama_extensions,
            Rejected::JsonSchema => &mut self.json_object,
            Rejected::ResponseFormat => &mut self.no_response_format,
        };
        !std::mem::replace(flag, true)
    }
}

/// The HTTP implementation of [`LlmClient`].
pub struct HttpClient {
    settings: LlmSettings,
    key: Option<ApiKey>,
    http: reqwest::Client,
    permits: Semaphore,
    limiter: RateLimiter,
    learned: Mutex<Adaptations>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("settings", &self.settings)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// Builds a client, reading the key from the process environment variable named by
    /// `settings.api_key_env`.
    pub fn new(settings: LlmSettings) -> Result<HttpClient, LlmError> {
        HttpClient::with_env(settings, &|k| std::env::var(k).ok())
    }

    /// Like [`HttpClient::new`] with an explicit environment lookup (for tests and embedding).
    pub fn with_env(
        settings: LlmSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<HttpClient, LlmError> {
        if !settings.is_configured() {
            return Err(LlmError::NotConfigured(
                "set llm.base_url and llm.model in the user config \
                 (~/.config/crosscheck/config.toml) or CROSSCHECK_LLM_BASE_URL and \
                 CROSSCHECK_LLM_MODEL"
                    .to_string(),
            ));
        }
        let base = settings.base_url_trimmed();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::NotConfigured(format!(
                "llm.base_url must start with http:// or https://, got {base:?}"
            )));
        }
        let key = match settings
            .api_key_env
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            None => None,
            Some(var) => match env(var) {
                Some(k) if !k.trim().is_empty() => Some(ApiKey(k.trim().to_string())),
                _ => {
                    return Err(LlmError::NotConfigured(format!(
                        "the environment variable {var} (named by llm.api_key_env) is not set"
                    )))
                }
            },
        };
        if let Some(k) = &key {
            if reqwest::header::HeaderValue::from_str(&k.0).is_err() {
                return Err(LlmError::NotConfigured(format!(
                    "the value of {} (named by llm.api_key_env) contains characters that \
                     cannot be sent in an HTTP header",
                    settings.api_key_env.as_deref().unwrap_or("").trim()
                )));
            }
        }
        if key.is_some() && base.starts_with("http://") && !is_loopback_url(base) {
            tracing::warn!(
                base_url = %without_userinfo(base),
                "the API key will be sent over unencrypted http to a non-local host"
            );
        }
        let timeout = Duration::from_secs(settings.timeout_secs.max(1));
        let http = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("crosscheck/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Connect(format!("cannot set up the HTTP client: {e}")))?;
        let permits = Semaphore::new(settings.max_concurrent.max(1) as usize);
        let limiter = RateLimiter::new(settings.requests_per_minute);
        Ok(HttpClient {
            settings,
            key,
            http,
            permits,
            limiter,
            learned: Mutex::new(Adaptations::default()),
        })
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// Adaptations learned so far from parameter rejections.
    pub fn learned_adaptations(&self) -> Adaptations {
        *self.learned.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn secret(&self) -> Option<&str> {
        self.key.as_ref().map(|k| k.0.as_str())
    }

    fn endpoint(&self) -> String {
        let base = self.settings.base_url_trimmed();
        match self.settings.provider {
            Provider::OpenAi => format!("{base}/chat/completions"),
            Provider::Anthropic => format!("{base}/messages"),
        }
    }

    async fn call(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| LlmError::NotConfigured("the client is shutting down".to_string()))?;
        self.limiter.acquire().await;
        let start = Instant::now();
        let timeout = Duration::from_secs(self.settings.timeout_secs.max(1));
        let deadline = tokio::time::Instant::now() + timeout;
        match tokio::time::timeout_at(deadline, self.attempts(&req, deadline, start)).await {
            Ok(result) => result,
            Err(_) => {
                tracing::debug!(model = self.model_name(), "llm call timed out");
                Err(LlmError::Timeout { after: timeout })
            }
        }
    }

    fn model_name(&self) -> &str {
        self.settings.model.as_deref().unwrap_or("")
    }

    async fn attempts(
        &self,
        req: &ChatRequest,
        deadline: tokio::time::Instant,
        start: Instant,
    ) -> Result<ChatResponse, LlmError> {
        let mut adapt = self.learned_adaptations();
        let mut failures = 0u32;
        let mut attempts = 0u32;
        let mut adaptations = 0u32;
        let url = self.endpoint();
        loop {
            if attempts > 0 {
                self.limiter.acquire().await;
            }
            attempts += 1;
            let body = match self.settings.provider {
                Provider::OpenAi => build_openai_body(&self.settings, req, &adapt),
                Provider::Anthropic => build_anthropic_body(&self.settings, req, &adapt),
            };
            let outcome = self.send_once(&url, &body).await;
            let wait = match outcome {
                Ok(raw) if raw.too_large => {
                    return Err(LlmError::BadResponse(format!(
                        "the response body exceeds {} MiB",
                        MAX_BODY_BYTES / (1024 * 1024)
                    )))
                }
                Ok(raw) if (200..300).contains(&raw.status) => {
                    let parsed = match self.settings.provider {
                        Provider::OpenAi => parse_openai_response(&raw.body),
                        Provider::Anthropic => parse_anthropic_response(&raw.body, req),
                    }
                    .map_err(|e| redact_error(e, self.secret()))?;
                    return Ok(self.finish(req, parsed, start, attempts));
                }
                Ok(raw) => {
                    tracing::debug!(status = raw.status, attempt = attempts, "llm http error");
                    if let Some(rejected) =
                        detect_rejection(raw.status, &raw.body, adapt.json_object)
                    {
                        if adaptations < MAX_ADAPTATIONS && adapt.apply(rejected) {
                            adaptations += 1;
                            tracing::info!(
                                ?rejected,
                                model = self.model_name(),
                                "the server refused a request parameter; retrying without it"
                            );
                            self.learned
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .apply(rejected);
                            continue;
                        }
                    }
                    let final_error = if raw.status == 429 {
                        LlmError::RateLimited {
                            retry_after: raw.retry_after,
                        }
                    } else {
                        LlmError::Http {
                            status: raw.status,
                            body_snippet: snippet(&raw.body, self.secret()),
                        }
                    };
                    if !is_retryable_status(raw.status) || failures >= self.settings.retries {
                        return Err(final_error);
                    }
                    let wait = match raw.retry_after {
                        Some(d) if raw.status == 429 || raw.status == 503 => d,
                        _ => self.backoff(failures),
                    };
                    if tokio::time::Instant::now() + wait > deadline {
                        return Err(final_error);
                    }
                    wait
                }
                Err(e) => {
                    if e.is_builder() {
                        return Err(LlmError::NotConfigured(format!(
                            "llm.base_url does not make a usable URL: {}",
                            describe_reqwest(&e, self.secret())
                        )));
                    }
                    let err = LlmError::Connect(describe_reqwest(&e, self.secret()));
                    tracing::debug!(attempt = attempts, error = %err, "llm transport error");
                    if failures >= self.settings.retries {
                        return Err(err);
                    }
                    let wait = self.backoff(failures);
                    if tokio::time::Instant::now() + wait > deadline {
                        return Err(err);
                    }
                    wait
                }
            };
            failures += 1;
            tokio::time::sleep(wait).await;
        }
    }

    fn backoff(&self, failures: u32) -> Duration {
        backoff_delay(
            failures,
            Duration::from_millis(self.settings.backoff_base_ms),
            Duration::from_millis(
                self.settings
                    .backoff_max_ms
                    .max(self.settings.backoff_base_ms),
            ),
            jitter_fraction(),
        )
    }

    async fn send_once(&self, url: &str, body: &Value) -> Result<RawAnswer, reqwest::Error> {
        let mut rb = self.http.post(url).json(body);
        match self.settings.provider {
            Provider::OpenAi => {
                if let Some(k) = &self.key {
                    if let Ok(mut v) =
                        reqwest::header::HeaderValue::from_str(&format!("Bearer {}", k.0))
                    {
                        v.set_sensitive(true);
                        rb = rb.header(reqwest::header::AUTHORIZATION, v);
                    }
                }
            }
            Provider::Anthropic => {
                if let Some(k) = &self.key {
                    if let Ok(mut v) = reqwest::header::HeaderValue::from_str(&k.0) {
                        v.set_sensitive(true);
                        rb = rb.header("x-api-key", v);
                    }
                }
                rb = rb.header(
                    "anthropic-version",
                    self.settings.anthropic_version.as_str(),
                );
            }
        }
        let mut resp = rb.send().await?;
        let status = resp.status().as_u16();
        let retry_after = retry_after_of(resp.headers());
        let mut buf: Vec<u8> = Vec::new();
        while let Some(chunk) = resp.chunk().await? {
            if buf.len().saturating_add(chunk.len()) > MAX_BODY_BYTES {
                return Ok(RawAnswer {
                    status,
                    retry_after,
                    body: String::new(),
                    too_large: true,
                });
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(RawAnswer {
            status,
            retry_after,
            body: String::from_utf8_lossy(&buf).into_owned(),
            too_large: false,
        })
    }

    fn finish(
        &self,
        req: &ChatRequest,
        parsed: ParsedAnswer,
        start: Instant,
        attempts: u32,
    ) -> ChatResponse {
        let mut estimated = false;
        let prompt_tokens = parsed.prompt_tokens.unwrap_or_else(|| {
            estimated = true;
            estimate_tokens(&req.system) + estimate_tokens(&req.user)
        });
        let completion_tokens = parsed.completion_tokens.unwrap_or_else(|| {
            estimated = true;
            estimate_tokens(&parsed.text)
        });
        ChatResponse {
            text: parsed.text,
            model: parsed
                .model
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| self.model_name().to_string()),
            prompt_tokens,
            completion_tokens,
            tokens_estimated: estimated,
            latency_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
            from_cache: false,
            truncated: parsed.truncated,
            attempts,
        }
    }
}

impl LlmClient for HttpClient {
    fn complete(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(self.call(req))
    }

    fn model_id(&self) -> String {
        format!(
            "{}:{}@{}",
            self.settings.provider.as_str(),
            self.model_name(),
            without_userinfo(self.settings.base_url_trimmed())
        )
    }
}

/// The URL without `user:password@` (so it can go into logs, telemetry and cache keys).
pub fn without_userinfo(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (format!("{s}://"), r),
        None => (String::new(), url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    format!("{scheme}{host}{tail}")
}

struct RawAnswer {
    status: u16,
    retry_after: Option<Duration>,
    body: String,
    too_large: bool,
}

/// The server's requested wait: `retry-after-ms`, else `Retry-After` (seconds or an HTTP date).
pub(crate) fn retry_after_of(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms.min(3.6e9) / 1000.0));
    }
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()))
}

fn describe_reqwest(e: &reqwest::Error, secret: Option<&str>) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    let mut depth = 0;
    while let Some(s) = source {
        let part = s.to_string();
        if !msg.contains(&part) {
            msg.push_str(": ");
            msg.push_str(&part);
        }
        source = s.source();
        depth += 1;
        if depth > 8 {
            break;
        }
    }
    snippet(&msg, secret)
}

fn redact_error(e: LlmError, secret: Option<&str>) -> LlmError {
    match e {
        LlmError::BadResponse(m) => LlmError::BadResponse(snippet(&m, secret)),
        other => other,
    }
}

/// What a provider answer boils down to.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedAnswer {
    pub text: String,
    pub model: Option<String>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub truncated: bool,
}

fn schema_instruction(schema: &Value) -> String {
    format!(
        "\n\nAnswer with a single JSON value and nothing else. It must match this JSON Schema:\n{schema}"
    )
}

/// The JSON body of an OpenAI-compatible chat completion request. Pure.
pub fn build_openai_body(settings: &LlmSettings, req: &ChatRequest, adapt: &Adaptations) -> Value {
    let compat = settings.llama_cpp_compat_effective() && !adapt.no_llama_extensions;
    let grammar = req.grammar.as_deref().filter(|_| compat);
    let mut system = req.system.clone();
    let mut response_format = None;
    if let (Some(schema), None) = (&req.json_schema, grammar) {
        if adapt.no_response_format {
            system.push_str(&schema_instruction(schema));
        } else if adapt.json_object {
            system.push_str(&schema_instruction(schema));
            response_format = Some(json!({"type": "json_object"}));
        } else {
            response_format = Some(json!({
                "type": "json_schema",
                "json_schema": {
                    "name": req.schema_name_sanitized(),
                    "schema": schema,
                    "strict": req.strict_schema,
                }
            }));
        }
    }
    let mut messages = Vec::new();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": req.user}));
    let mut body = serde_json::Map::new();
    body.insert(
        "model".into(),
        json!(settings.model.as_deref().unwrap_or("")),
    );
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(false));
    if settings.send_temperature && !adapt.no_temperature {
        if let Some(t) = req.temperature.or(settings.temperature) {
            body.insert("temperature".into(), json!(t));
        }
    }
    if settings.send_max_tokens && !adapt.no_max_tokens {
        if let Some(n) = req.max_tokens.or(settings.max_tokens) {
            let key = if adapt.max_completion_tokens {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), json!(n));
        }
    }
    if !adapt.no_seed {
        if let Some(s) = req.seed.or(settings.seed) {
            body.insert("seed".into(), json!(s));
        }
    }
    if let Some(rf) = response_format {
        body.insert("response_format".into(), rf);
    }
    if compat {
        body.insert("cache_prompt".into(), json!(false));
        if let Some(g) = grammar {
            body.insert("grammar".into(), json!(g));
        }
    }
    Value::Object(body)
}

/// True when a schema can be an Anthropic tool `input_schema` as is (top-level object).
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The JSON body of an Anthropic Messages request. Pure.
pub fn build_anthropic_body(
    settings: &LlmSettings,
    req: &ChatRequest,
    adapt: &Adaptations,
) -> Value {
    let mut body = serde_json::Map::new();
    body.insert(
        "model".into(),
        json!(settings.model.as_deref().unwrap_or("")),
    );
    let max_tokens = if settings.send_max_tokens {
        req.max_tokens.or(settings.max_tokens)
    } else {
        None
    }
    .unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS);
    body.insert("max_tokens".into(), json!(max_tokens));
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": req.user}]),
    );
    if settings.send_temperature && !adapt.no_temperature {
        if let Some(t) = req.temperature.or(settings.temperature) {
            body.insert("temperature".into(), json!(t));
        }
    }
    if let Some(schema) = &req.json_schema {
        let name = req.schema_name_sanitized();
        let input_schema = if is_object_schema(schema) {
            schema.clone()
        } else {
            json!({"type": "object", "properties": {"answer": schema}, "required": ["answer"]})
        };
        body.insert(
            "tools".into(),
            json!([{
                "name": name,
                "description": "Record the answer. Always answer through this tool.",
                "input_schema": input_schema,
            }]),
        );
        body.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
    }
    Value::Object(body)
}

fn u64_at(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn error_message_of(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    Some(
        e.get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string()),
    )
}

/// Reads an OpenAI-compatible chat completion body. Pure.
pub fn parse_openai_response(body: &str) -> Result<ParsedAnswer, LlmError> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        LlmError::BadResponse(format!(
            "not JSON ({e}); body starts: {}",
            snippet(body, None)
        ))
    })?;
    let Some(choice) = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return Err(LlmError::BadResponse(match error_message_of(&v) {
            Some(m) => format!("the server reported an error: {m}"),
            None => "no `choices` in the response".to_string(),
        }));
    };
    let message = choice.get("message").unwrap_or(&Value::Null);
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => {
            return Err(LlmError::BadResponse(
                match message.get("refusal").and_then(Value::as_str) {
                    Some(r) => format!("the model refused: {r}"),
                    None => "the response has no message content".to_string(),
                },
            ))
        }
    };
    let usage = v.get("usage").unwrap_or(&Value::Null);
    Ok(ParsedAnswer {
        text,
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        prompt_tokens: u64_at(usage, "prompt_tokens"),
        completion_tokens: u64_at(usage, "completion_tokens"),
        truncated: choice.get("finish_reason").and_then(Value::as_str) == Some("length"),
    })
}

/// Reads an Anthropic Messages body. With a schema, the forced tool's input is the answer
/// (unwrapped from `{"answer": ...}` when the schema had to be wrapped); text blocks are the
/// fallback. Pure.
pub fn parse_anthropic_response(body: &str, req: &ChatRequest) -> Result<ParsedAnswer, LlmError> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        LlmError::BadResponse(format!(
            "not JSON ({e}); body starts: {}",
            snippet(body, None)
        ))
    })?;
    let Some(blocks) = v.get("content").and_then(Value::as_array) else {
        return Err(LlmError::BadResponse(match error_message_of(&v) {
            Some(m) => format!("the server reported an error: {m}"),
            None => "no `content` in the response".to_string(),
        }));
    };
    let tool_input = req.json_schema.as_ref().and_then(|schema| {
        let name = req.schema_name_sanitized();
        let uses = || {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        };
        let block = uses()
            .find(|b| b.get("name").and_then(Value::as_str) == Some(name.as_str()))
            .or_else(|| uses().next())?;
        let input = block.get("input")?;
        if is_object_schema(schema) {
            Some(input.clone())
        } else {
            Some(
                input
                    .get("answer")
                    .cloned()
                    .unwrap_or_else(|| input.clone()),
            )
        }
    });
    let text = match tool_input {
        Some(input) => input.to_string(),
        None => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
    };
    let usage = v.get("usage").unwrap_or(&Value::Null);
    Ok(ParsedAnswer {
        text,
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
        prompt_tokens: u64_at(usage, "input_tokens"),
        completion_tokens: u64_at(usage, "output_tokens"),
        truncated: v.get("stop_reason").and_then(Value::as_str) == Some("max_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(base: &str) -> LlmSettings {
        LlmSettings {
            base_url: Some(base.to_string()),
            model: Some("m".to_string()),
            ..LlmSettings::default()
        }
    }

    #[test]
    fn llama_extensions_only_for_loopback_by_default() {
        let req = ChatRequest::new("s", "u").with_grammar("root ::= \"x\"");
        let local = build_openai_body(
            &settings("http://127.0.0.1:8080/v1"),
            &req,
            &Adaptations::default(),
        );
        assert_eq!(local["cache_prompt"], json!(false));
        assert_eq!(local["grammar"], json!("root ::= \"x\""));
        let remote = build_openai_body(
            &settings("https://api.openai.com/v1"),
            &req,
            &Adaptations::default(),
        );
        assert!(remote.get("cache_prompt").is_none());
        assert!(remote.get("grammar").is_none());
        let mut forced = settings("https://llm.example.org/v1");
        forced.llama_cpp_compat = Some(true);
        let f = build_openai_body(&forced, &req, &Adaptations::default());
        assert_eq!(f["cache_prompt"], json!(false));
    }

    #[test]
    fn grammar_replaces_response_format_on_llama_cpp() {
        let req = ChatRequest::new("s", "u")
            .with_schema("a", json!({"type": "object"}), true)
            .with_grammar("root ::= \"{}\"");
        let b = build_openai_body(
            &settings("http://localhost:8080/v1"),
            &req,
            &Adaptations::default(),
        );
        assert!(b.get("response_format").is_none());
        assert!(b.get("grammar").is_some());
    }

    #[test]
    fn json_object_fallback_moves_the_schema_into_the_prompt() {
        let req = ChatRequest::new("sys", "u").with_schema("a", json!({"type": "object"}), true);
        let adapt = Adaptations {
            json_object: true,
            ..Adaptations::default()
        };
        let b = build_openai_body(&settings("https://x.org/v1"), &req, &adapt);
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        let sys = b["messages"][0]["content"].as_str().unwrap_or("");
        assert!(
            sys.starts_with("sys") && sys.contains("\"type\":\"object\""),
            "{sys}"
        );
    }

    #[test]
    fn anthropic_wraps_non_object_schemas() {
        let schema = json!({"type": "array", "items": {"type": "string"}});
        let req = ChatRequest::new("s", "u").with_schema("calls", schema.clone(), false);
        let b = build_anthropic_body(&settings("https://a/v1"), &req, &Adaptations::default());
        assert_eq!(
            b["tools"][0]["input_schema"]["properties"]["answer"],
            schema
        );
        let body = r#"{"model":"c","content":[{"type":"tool_use","name":"calls","input":{"answer":["f","g"]}}],"usage":{"input_tokens":3,"output_tokens":4}}"#;
        let p = parse_anthropic_response(body, &req).expect("parses");
        assert_eq!(p.text, r#"["f","g"]"#);
    }

    #[test]
    fn openai_content_parts_are_joined_and_length_flags_truncation() {
        let body = r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"length"}]}"#;
        let p = parse_openai_response(body).expect("parses");
        assert_eq!(p.text, "ab");
        assert!(p.truncated);
        assert_eq!(p.prompt_tokens, None);
    }

    #[test]
    fn openai_refusal_and_error_bodies_are_bad_responses() {
        let r =
            parse_openai_response(r#"{"choices":[{"message":{"content":null,"refusal":"no"}}]}"#);
        assert!(matches!(r, Err(LlmError::BadResponse(m)) if m.contains("refused")));
        let e = parse_openai_response(r#"{"error":{"message":"model not loaded"}}"#);
        assert!(matches!(e, Err(LlmError::BadResponse(m)) if m.contains("model not loaded")));
    }

    #[test]
    fn unconfigured_settings_are_refused() {
        let e = HttpClient::with_env(LlmSettings::default(), &|_| None).unwrap_err();
        assert!(matches!(e, LlmError::NotConfigured(_)));
        let mut s = settings("ftp://x");
        let e = HttpClient::with_env(s.clone(), &|_| None).unwrap_err();
        assert!(e.to_string().contains("http://"), "{e}");
        s.base_url = Some("https://x/v1".into());
        s.api_key_env = Some("MY_KEY".into());
        let e = HttpClient::with_env(s, &|_| None).unwrap_err();
        assert!(e.to_string().contains("MY_KEY"), "{e}");
    }

    #[test]
    fn userinfo_is_stripped_from_identities() {
        assert_eq!(
            without_userinfo("https://u:p@h.org:8/v1?x=@"),
            "https://h.org:8/v1?x=@"
        );
        assert_eq!(
            without_userinfo("http://127.0.0.1/v1"),
            "http://127.0.0.1/v1"
        );
        let c = HttpClient::with_env(settings("https://u:pw@h.org/v1"), &|_| None).expect("client");
        assert_eq!(c.model_id(), "openai:m@https://h.org/v1");
    }

    #[test]
    fn keys_that_cannot_be_headers_are_refused() {
        let mut s = settings("https://x/v1");
        s.api_key_env = Some("K".into());
        let e = HttpClient::with_env(s, &|_| Some("sk-a\nb".to_string())).unwrap_err();
        assert!(
            matches!(e, LlmError::NotConfigured(m) if m.contains("HTTP header") && !m.contains("sk-a"))
        );
    }

    #[test]
    fn debug_output_hides_the_key() {
        let mut s = settings("https://x/v1");
        s.api_key_env = Some("K".into());
        let c = HttpClient::with_env(s, &|_| Some("sk-very-secret".into())).expect("client");
        let d = format!("{c:?}");
        assert!(!d.contains("sk-very-secret") && d.contains("***"), "{d}");
    }
}
