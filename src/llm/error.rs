//! The error type of the LLM client layer.
//!
//! Every message is meant to be shown to a user as is. No variant ever carries the API key:
//! server bodies are passed through [`redact`] before they are stored, and the key itself is
//! only ever placed in a request header.

use std::fmt;
use std::time::Duration;

/// Which budget ran out (see [`crate::llm::Budget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BudgetScope {
    /// The tokens spent since this process (language-server session, CLI run) started.
    Session,
    /// The tokens spent on the current UTC day.
    Day,
}

/// A failed LLM call.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    /// The whole call (all attempts and back-off) did not finish within `timeout_secs`.
    Timeout { after: Duration },
    /// The provider kept answering 429 (or asked to wait longer than the time left).
    RateLimited { retry_after: Option<Duration> },
    /// A non-success HTTP status that was not retried, or still failed after the retries.
    /// `body_snippet` is the start of the body, with the API key redacted.
    Http { status: u16, body_snippet: String },
    /// The server could not be reached (DNS, refused connection, TLS, reset).
    Connect(String),
    /// The server answered 2xx but the body is not the expected response shape.
    BadResponse(String),
    /// No usable LLM configuration (no base URL or model, or the API key variable is unset).
    NotConfigured(String),
    /// A token budget is spent.
    BudgetExceeded {
        scope: BudgetScope,
        used: u64,
        limit: u64,
    },
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Timeout { after } => write!(
                f,
                "the LLM did not answer within {:.1} s (raise llm.timeout_secs or check the server)",
                after.as_secs_f64()
            ),
            LlmError::RateLimited {
                retry_after: Some(d),
            } => write!(
                f,
                "the LLM provider is rate limiting requests; it asks to retry after {:.1} s \
                 (lower llm.requests_per_minute or llm.max_concurrent)",
                d.as_secs_f64()
            ),
            LlmError::RateLimited { retry_after: None } => write!(
                f,
                "the LLM provider is rate limiting requests \
                 (lower llm.requests_per_minute or llm.max_concurrent)"
            ),
            LlmError::Http {
                status,
                body_snippet,
            } => {
                write!(f, "the LLM server answered HTTP {status}")?;
                if let Some(hint) = status_hint(*status) {
                    write!(f, " ({hint})")?;
                }
                if !body_snippet.is_empty() {
                    write!(f, ": {body_snippet}")?;
                }
                Ok(())
            }
            LlmError::Connect(msg) => write!(f, "cannot reach the LLM server: {msg}"),
            LlmError::BadResponse(msg) => {
                write!(f, "the LLM server sent a response crosscheck cannot read: {msg}")
            }
            LlmError::NotConfigured(msg) => write!(f, "no LLM is configured: {msg}"),
            LlmError::BudgetExceeded { scope, used, limit } => {
                let (what, key) = match scope {
                    BudgetScope::Session => ("this session", "llm.session_token_budget"),
                    BudgetScope::Day => ("today", "llm.daily_token_budget"),
                };
                write!(
                    f,
                    "the LLM token budget for {what} is spent ({used} of {limit} tokens); \
                     raise {key} in the user config to continue"
                )
            }
        }
    }
}

impl std::error::Error for LlmError {}

impl LlmError {
    /// True for errors a later identical call might not hit (timeouts, rate limits, 5xx,
    /// connection failures). Callers use this to decide whether to record a permanent failure.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Timeout { .. } | LlmError::RateLimited { .. } | LlmError::Connect(_) => true,
            LlmError::Http { status, .. } => matches!(status, 429 | 500 | 502 | 503 | 504 | 529),
            _ => false,
        }
    }
}

fn status_hint(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "the server rejected the request",
        401 => "the API key is missing or wrong; check the variable named by llm.api_key_env",
        403 => "the API key may not use this model",
        404 => "wrong llm.base_url or llm.model",
        413 => "the prompt is too large",
        429 => "rate limited",
        500..=599 => "server error",
        _ => return None,
    })
}

/// The longest body excerpt kept in [`LlmError::Http`] and [`LlmError::BadResponse`].
pub const SNIPPET_CHARS: usize = 300;

/// Replaces every occurrence of `secret` in `text` with `[redacted]` (no-op for an empty or
/// absent secret).
pub fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "[redacted]"),
        _ => text.to_string(),
    }
}

/// The first [`SNIPPET_CHARS`] characters of a body, single-lined, with the secret redacted.
/// The secret is redacted before truncation so a cut cannot leave a recognisable prefix of it.
pub fn snippet(body: &str, secret: Option<&str>) -> String {
    let redacted = redact(body, secret);
    let mut out: String = redacted
        .chars()
        .take(SNIPPET_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if redacted.chars().nth(SNIPPET_CHARS).is_some() {
        out.push('…');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_redacts_before_truncating() {
        let key = "sk-secret-0123456789";
        let body = format!("{}{}", "x".repeat(SNIPPET_CHARS - 5), key);
        let s = snippet(&body, Some(key));
        assert!(!s.contains("sk-secr"), "{s}");
        assert!(s.ends_with('…'));
    }

    #[test]
    fn snippet_flattens_control_characters() {
        assert_eq!(snippet("a\nb\tc", None), "a b c");
    }

    #[test]
    fn budget_message_names_the_setting() {
        let e = LlmError::BudgetExceeded {
            scope: BudgetScope::Day,
            used: 12,
            limit: 10,
        };
        let m = e.to_string();
        assert!(
            m.contains("today") && m.contains("llm.daily_token_budget"),
            "{m}"
        );
    }

    #[test]
    fn transient_classification() {
        assert!(LlmError::Connect("x".into()).is_transient());
        assert!(!LlmError::BadResponse("x".into()).is_transient());
        assert!(!LlmError::Http {
            status: 400,
            body_snippet: String::new()
        }
        .is_transient());
    }
}
