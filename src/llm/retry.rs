//! Retry policy: which statuses are retried, exponential back-off, `Retry-After` parsing, and
//! detection of "this model does not accept parameter X" rejections.
//!
//! Everything here is pure except [`jitter_fraction`], which draws from the process's
//! randomly seeded hasher (this is the I/O layer; jitter exists to de-synchronise clients).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Statuses retried up to `retries` times. 529 is Anthropic's "overloaded".
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

/// Back-off before retry number `attempt` (0-based): `base * 2^attempt`, capped at `max`, then
/// scaled by `0.5 + 0.5 * jitter` with `jitter` in `[0, 1)` ("equal jitter": never less than half).
pub fn backoff_delay(attempt: u32, base: Duration, max: Duration, jitter: f64) -> Duration {
    let factor = 2u32.saturating_pow(attempt.min(30));
    let raw = base.saturating_mul(factor).min(max);
    let j = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.0
    };
    raw.mul_f64(0.5 + 0.5 * j)
}

/// A fresh value in `[0, 1)`.
pub fn jitter_fraction() -> f64 {
    let h = RandomState::new().hash_one(std::time::Instant::now());
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses a `Retry-After` value: delta-seconds (`"120"`, fractional accepted) or an IMF-fixdate
/// HTTP date (`"Sun, 06 Nov 1994 08:49:37 GMT"`), relative to `now`. A date in the past gives
/// zero. Anything else gives `None` (the caller falls back to its back-off).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Some(Duration::from_secs_f64(secs.min(86_400.0 * 365.0)));
        }
        return None;
    }
    let when = parse_http_date(v)?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// IMF-fixdate (RFC 9110 section 5.6.7), the only format servers may generate.
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    let (_, rest) = s.split_once(", ")?;
    let parts: Vec<&str> = rest.split_ascii_whitespace().collect();
    let [day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if *zone != "GMT" {
        return None;
    }
    let day: u32 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u32
        + 1;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse::<u64>().ok())
        .collect::<Option<Vec<_>>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *sec > 60 || !(1970..=9999).contains(&year)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days.checked_mul(86_400)? + (*h * 3600 + *m * 60 + *sec) as i64;
    let secs = u64::try_from(secs).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A request feature a server refused in a 400 answer, and what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rejected {
    /// Stop sending `temperature` (OpenAI reasoning models accept only the default).
    Temperature,
    /// Stop sending `max_tokens`.
    MaxTokens,
    /// Send `max_completion_tokens` instead of `max_tokens` (the error asked for it).
    MaxTokensRename,
    /// Stop sending `seed`.
    Seed,
    /// Stop sending llama.cpp's `cache_prompt` / `grammar`.
    LlamaExtensions,
    /// `response_format: json_schema` refused: fall back to `json_object`.
    JsonSchema,
    /// `response_format` refused altogether: describe the schema in the prompt only.
    ResponseFormat,
}

/// Reads a 400 body and names the refused request parameter, if it is one this client can drop.
/// `json_object_in_use` tells whether the request already used the `json_object` fallback.
pub fn detect_rejection(status: u16, body: &str, json_object_in_use: bool) -> Option<Rejected> {
    if status != 400 && status != 422 {
        return None;
    }
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let err = parsed.as_ref().map(|v| v.get("error").unwrap_or(v));
    let param = err
        .and_then(|e| e.get("param"))
        .and_then(|p| p.as_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let message = err
        .and_then(|e| e.get("message"))
        .and_then(|p| p.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string())
        .to_ascii_lowercase();
    let refusal = [
        "unsupported",
        "not supported",
        "does not support",
        "unrecognized",
        "unknown",
        "not allowed",
        "not permitted",
        "extra inputs",
        "invalid",
    ]
    .iter()
    .any(|w| message.contains(w));
    let names = |p: &str| param == p || (refusal && mentions(&message, p));
    if names("max_tokens") {
        return Some(if message.contains("max_completion_tokens") {
            Rejected::MaxTokensRename
        } else {
            Rejected::MaxTokens
        });
    }
    if names("temperature") {
        return Some(Rejected::Temperature);
    }
    if names("cache_prompt") || names("grammar") {
        return Some(Rejected::LlamaExtensions);
    }
    if names("seed") {
        return Some(Rejected::Seed);
    }
    if names("response_format") || names("json_schema") || param.starts_with("response_format") {
        return Some(if json_object_in_use {
            Rejected::ResponseFormat
        } else {
            Rejected::JsonSchema
        });
    }
    None
}

/// `name` appears in `text` as a whole identifier (not inside `max_tokens_x`, `seeds`).
fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|t| t.find(name)) {
        let start = from + i;
        let end = start + name.len();
        let before = text.get(..start).and_then(|t| t.chars().next_back());
        let after = text.get(end..).and_then(|t| t.chars().next());
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return true;
        }
        from = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let b = Duration::from_millis(100);
        let m = Duration::from_millis(1000);
        assert_eq!(backoff_delay(0, b, m, 1.0), Duration::from_millis(100));
        assert_eq!(backoff_delay(2, b, m, 1.0), Duration::from_millis(400));
        assert_eq!(backoff_delay(9, b, m, 1.0), Duration::from_millis(1000));
        assert_eq!(
            backoff_delay(u32::MAX, b, m, 0.0),
            Duration::from_millis(500)
        );
        assert_eq!(backoff_delay(1, b, m, f64::NAN), Duration::from_millis(100));
    }

    #[test]
    fn jitter_is_a_fraction() {
        for _ in 0..100 {
            let j = jitter_fraction();
            assert!((0.0..1.0).contains(&j));
        }
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("0.25", now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after("Sat, 05 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 25:49:37 GMT", now),
            None
        );
    }

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn rejections_of_openai_reasoning_models() {
        let t = r#"{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}"#;
        assert_eq!(detect_rejection(400, t, false), Some(Rejected::Temperature));
        let m = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","param":"max_tokens"}}"#;
        assert_eq!(
            detect_rejection(400, m, false),
            Some(Rejected::MaxTokensRename)
        );
        let c = r#"{"error":{"message":"Unrecognized request argument supplied: cache_prompt"}}"#;
        assert_eq!(
            detect_rejection(400, c, false),
            Some(Rejected::LlamaExtensions)
        );
        let r = r#"{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."}}"#;
        assert_eq!(detect_rejection(400, r, false), Some(Rejected::JsonSchema));
        assert_eq!(
            detect_rejection(400, r, true),
            Some(Rejected::ResponseFormat)
        );
    }

    #[test]
    fn unrelated_400s_are_not_rejections() {
        let ctx = r#"{"error":{"message":"This model's maximum context length is 8192 tokens."}}"#;
        assert_eq!(detect_rejection(400, ctx, false), None);
        let t = r#"{"error":{"message":"Unsupported value: 'temperature'","param":"temperature"}}"#;
        assert_eq!(detect_rejection(500, t, false), None);
        assert_eq!(
            detect_rejection(400, "invalid seeds_count", false),
            None,
            "whole identifiers only"
        );
    }
}
