//! Opt-in upload of telemetry batches: `POST` a JSON Lines body to an HTTPS endpoint the USER
//! configured, with retries, back-off and timeouts. Generic: the caller builds the batch (see
//! `crosscheck telemetry upload`); this module only knows bytes, URLs and tokens.
//!
//! # Configuration
//!
//! There is no default endpoint. The URL comes only from the user's own config file (the file
//! of [`crate::llm::settings`]: `$CROSSCHECK_CONFIG`, else
//! `$XDG_CONFIG_HOME/crosscheck/config.toml`, else `~/.config/crosscheck/config.toml`), never
//! from an analysed workspace:
//!
//! ```toml
//! [telemetry]
//! upload_url = "https://telemetry.example.org/crosscheck"
//! upload_token_env = "CROSSCHECK_UPLOAD_TOKEN"  # NAME of the variable holding a bearer token
//! upload_timeout_secs = 60                      # per attempt
//! upload_retries = 3                            # extra attempts after a retryable failure
//! upload_backoff_ms = 500                       # first back-off; doubles, at most 20 s
//! ```
//!
//! or the environment: `CROSSCHECK_TELEMETRY_UPLOAD_URL`, `CROSSCHECK_TELEMETRY_UPLOAD_TOKEN_ENV`
//! (they override the file; empty counts as unset). A token written into the file
//! (`upload_token`, `token`, `api_key`, ...) is refused: tokens live in environment variables.
//!
//! `https://` is required; plain `http://` is accepted only for loopback hosts (local
//! collectors, tests). Other keys of `[telemetry]` are left to whoever owns them.
//!
//! # Wire
//!
//! `POST <url>` with `Content-Type: application/x-ndjson`, `Authorization: Bearer <token>`
//! when a token is configured, redirects not followed (a 3xx is a failure: a redirect could
//! downgrade to http or move the token to another host). Any 2xx is success. 429, 500, 502,
//! 503, 504, 529 and transport errors are retried with exponential back-off and jitter;
//! `Retry-After` / `retry-after-ms` are honoured on 429 and 503 up to [`MAX_RETRY_AFTER`].
//! Delivery is at least once: a batch whose response was lost is sent again, so receivers
//! should deduplicate (records carry a unique `id`).
//!
//! # Secrecy
//!
//! The token lives in a sensitive header value only. Error messages are redacted (the token is
//! replaced by `[redacted]`, URLs lose their `user:password@` part) and `Debug` hides it.

use crate::llm::error::{redact, snippet};
use crate::llm::http::{retry_after_of, without_userinfo};
use crate::llm::retry::{backoff_delay, is_retryable_status, jitter_fraction};
use crate::llm::settings::{config_path, is_loopback_url};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Content type of an upload body.
pub const NDJSON: &str = "application/x-ndjson";
/// Longest `Retry-After` the uploader waits for; a longer one fails the batch.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Largest response body read (the rest is ignored; only the status matters).
const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// Config entries that look like a secret rather than the name of a variable.
const SECRET_ENTRIES: [&str; 6] = [
    "upload_token",
    "upload_api_key",
    "upload_key",
    "token",
    "api_key",
    "key",
];

/// Where and how to upload. `Debug` is safe to log: the token is not in here, only the name of
/// its variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadSettings {
    pub url: String,
    /// Name of the environment variable holding the bearer token.
    pub token_env: Option<String>,
    /// Bound on one attempt (connect, send, response).
    pub timeout_secs: u64,
    pub retries: u32,
    pub backoff_base_ms: u64,
    pub backoff_max_ms: u64,
}

impl UploadSettings {
    /// Settings for `url` with the default timeout (60 s), retries (3) and back-off (0.5 s
    /// doubling to 20 s).
    pub fn new(url: impl Into<String>) -> UploadSettings {
        UploadSettings {
            url: url.into(),
            token_env: None,
            timeout_secs: 60,
            retries: 3,
            backoff_base_ms: 500,
            backoff_max_ms: 20_000,
        }
    }

    /// The URL without `user:password@`, for messages and watermark keys.
    pub fn display_url(&self) -> String {
        without_userinfo(self.url.trim())
    }
}

/// Why an upload could not be configured or did not go through. Messages never contain the
/// token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadError {
    /// No upload URL anywhere (there is no default).
    NotConfigured,
    /// The configuration is unusable (bad URL scheme, token in the file, unset variable, ...).
    BadConfig(String),
    /// The server answered a non-success status (after the retries, if retryable).
    Http {
        status: u16,
        body_snippet: String,
        attempts: u32,
    },
    /// The server could not be reached or did not answer in time (after the retries).
    Transport { message: String, attempts: u32 },
    /// The server asked to wait longer than [`MAX_RETRY_AFTER`].
    RetryAfterTooLong { wait: Duration, attempts: u32 },
}

impl fmt::Display for UploadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UploadError::NotConfigured => write!(
                f,
                "no telemetry upload URL is configured, and there is no default: set \
                 [telemetry] upload_url = \"https://...\" in the user config \
                 (~/.config/crosscheck/config.toml, or the file named by CROSSCHECK_CONFIG) or \
                 CROSSCHECK_TELEMETRY_UPLOAD_URL"
            ),
            UploadError::BadConfig(m) => write!(f, "{m}"),
            UploadError::Http {
                status,
                body_snippet,
                attempts,
            } => {
                write!(
                    f,
                    "the upload server answered HTTP {status} (after {attempts} attempt(s))"
                )?;
                match status {
                    401 | 403 => write!(
                        f,
                        " (check the token in the variable named by telemetry.upload_token_env)"
                    )?,
                    300..=399 => {
                        write!(f, " (redirects are not followed: configure the final URL)")?
                    }
                    _ => {}
                }
                if !body_snippet.is_empty() {
                    write!(f, ": {body_snippet}")?;
                }
                Ok(())
            }
            UploadError::Transport { message, attempts } => write!(
                f,
                "cannot reach the upload server (after {attempts} attempt(s)): {message}"
            ),
            UploadError::RetryAfterTooLong { wait, attempts } => write!(
                f,
                "the upload server asks to retry after {:.0} s (after {attempts} attempt(s)); \
                 try again later",
                wait.as_secs_f64()
            ),
        }
    }
}

impl std::error::Error for UploadError {}

/// Checks an upload URL: `https://`, or `http://` to a loopback host only.
pub fn check_upload_url(url: &str) -> Result<(), UploadError> {
    let u = url.trim();
    let lower = u.to_ascii_lowercase();
    if lower.starts_with("https://") && u.len() > "https://".len() {
        return Ok(());
    }
    if lower.starts_with("http://") {
        if is_loopback_url(u) {
            return Ok(());
        }
        return Err(UploadError::BadConfig(format!(
            "the telemetry upload URL {} uses plain http://; uploads require https:// \
             (http:// is accepted only for localhost / 127.0.0.1 / ::1)",
            without_userinfo(u)
        )));
    }
    Err(UploadError::BadConfig(format!(
        "the telemetry upload URL must start with https://, got {:?}",
        without_userinfo(u)
    )))
}

fn bad(path: Option<&PathBuf>, message: impl fmt::Display) -> UploadError {
    let at = path
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the crosscheck config file".to_string());
    UploadError::BadConfig(format!("invalid [telemetry] settings in {at}: {message}"))
}

/// Builds upload settings from the user config text (if any) and an environment lookup.
/// `path` only names the file in messages. Pure.
pub fn resolve_upload(
    file: Option<&str>,
    path: Option<&PathBuf>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<UploadSettings, UploadError> {
    let mut url = None;
    let mut s = UploadSettings::new("");
    if let Some(text) = file {
        let doc: toml::Table = toml::from_str(text).map_err(|e| bad(path, e.message()))?;
        if let Some(t) = doc.get("telemetry") {
            let table = t
                .as_table()
                .ok_or_else(|| bad(path, "`telemetry` must be a table ([telemetry])"))?;
            if let Some(k) = table
                .keys()
                .find(|k| SECRET_ENTRIES.contains(&k.to_ascii_lowercase().as_str()))
            {
                return Err(bad(
                    path,
                    format!(
                        "`{k}` looks like a token; crosscheck never reads tokens from files: put \
                         it in an environment variable and set upload_token_env to that \
                         variable's name"
                    ),
                ));
            }
            let string = |key: &str| -> Result<Option<String>, UploadError> {
                match table.get(key) {
                    None => Ok(None),
                    Some(toml::Value::String(v)) => {
                        Ok(Some(v.trim().to_string()).filter(|v| !v.is_empty()))
                    }
                    Some(_) => Err(bad(path, format!("{key} must be a string"))),
                }
            };
            let number = |key: &str, min: i64| -> Result<Option<u64>, UploadError> {
                match table.get(key) {
                    None => Ok(None),
                    Some(toml::Value::Integer(n)) if *n >= min => Ok(u64::try_from(*n).ok()),
                    Some(_) => Err(bad(
                        path,
                        format!("{key} must be a whole number of at least {min}"),
                    )),
                }
            };
            url = string("upload_url")?;
            s.token_env = string("upload_token_env")?;
            if let Some(n) = number("upload_timeout_secs", 1)? {
                s.timeout_secs = n;
            }
            if let Some(n) = number("upload_retries", 0)? {
                s.retries = u32::try_from(n.min(20)).unwrap_or(20);
            }
            if let Some(n) = number("upload_backoff_ms", 0)? {
                s.backoff_base_ms = n;
            }
        }
    }
    let get = |k: &str| {
        env(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(u) = get("CROSSCHECK_TELEMETRY_UPLOAD_URL") {
        url = Some(u);
    }
    if let Some(t) = get("CROSSCHECK_TELEMETRY_UPLOAD_TOKEN_ENV") {
        s.token_env = Some(t);
    }
    s.url = url.ok_or(UploadError::NotConfigured)?;
    check_upload_url(&s.url)?;
    Ok(s)
}

/// [`resolve_upload`] over the real user config file and process environment.
pub fn load_upload_settings() -> Result<UploadSettings, UploadError> {
    let env = |k: &str| std::env::var(k).ok();
    let path = config_path(&env);
    let text = match &path {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(UploadError::BadConfig(format!(
                    "cannot read {}: {e}",
                    p.display()
                )))
            }
        },
        None => None,
    };
    resolve_upload(text.as_deref(), path.as_ref(), &env)
}

/// The bearer token. Never printed: `Debug` shows `Token(***)`.
#[derive(Clone)]
struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// A successful upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadReceipt {
    pub status: u16,
    /// HTTP attempts made (1 = no retry).
    pub attempts: u32,
}

/// Posts JSON Lines batches to one configured endpoint.
pub struct Uploader {
    settings: UploadSettings,
    token: Option<Token>,
    http: reqwest::Client,
}

impl fmt::Debug for Uploader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Uploader")
            .field("url", &self.settings.display_url())
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl Uploader {
    /// Builds an uploader, reading the token from the process environment variable named by
    /// `settings.token_env`.
    pub fn new(settings: UploadSettings) -> Result<Uploader, UploadError> {
        Uploader::with_env(settings, &|k| std::env::var(k).ok())
    }

    /// Like [`Uploader::new`] with an explicit environment lookup.
    pub fn with_env(
        settings: UploadSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Uploader, UploadError> {
        check_upload_url(&settings.url)?;
        let token = match settings.token_env.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(var) => match env(var) {
                Some(t) if !t.trim().is_empty() => Some(Token(t.trim().to_string())),
                _ => {
                    return Err(UploadError::BadConfig(format!(
                        "the environment variable {var} (named by telemetry.upload_token_env) \
                         is not set"
                    )))
                }
            },
        };
        if let Some(t) = &token {
            if reqwest::header::HeaderValue::from_str(&format!("Bearer {}", t.0)).is_err() {
                return Err(UploadError::BadConfig(format!(
                    "the value of {} (named by telemetry.upload_token_env) contains characters \
                     that cannot be sent in an HTTP header",
                    settings.token_env.as_deref().unwrap_or("").trim()
                )));
            }
        }
        let timeout = Duration::from_secs(settings.timeout_secs.max(1));
        let http = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("crosscheck/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| UploadError::BadConfig(format!("cannot set up the HTTP client: {e}")))?;
        Ok(Uploader {
            settings,
            token,
            http,
        })
    }

    pub fn settings(&self) -> &UploadSettings {
        &self.settings
    }

    fn secret(&self) -> Option<&str> {
        self.token.as_ref().map(|t| t.0.as_str())
    }

    /// Posts one JSON Lines body (`application/x-ndjson`), retrying transient failures (see
    /// the module docs). Dropping the future aborts the upload.
    pub async fn post_jsonl(&self, body: Vec<u8>) -> Result<UploadReceipt, UploadError> {
        let url = self.settings.url.trim();
        let mut failures = 0u32;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let wait = match self.send_once(url, body.clone()).await {
                Ok((status, _)) if (200..300).contains(&status) => {
                    return Ok(UploadReceipt { status, attempts })
                }
                Ok((status, answer)) => {
                    tracing::debug!(status, attempt = attempts, "telemetry upload http error");
                    let error = UploadError::Http {
                        status,
                        body_snippet: snippet(&answer.body, self.secret()),
                        attempts,
                    };
                    if !is_retryable_status(status) || failures >= self.settings.retries {
                        return Err(error);
                    }
                    match answer.retry_after {
                        Some(d) if status == 429 || status == 503 => {
                            if d > MAX_RETRY_AFTER {
                                return Err(UploadError::RetryAfterTooLong { wait: d, attempts });
                            }
                            d
                        }
                        _ => self.backoff(failures),
                    }
                }
                Err(e) => {
                    let message = describe(&e, self.secret());
                    if e.is_builder() {
                        return Err(UploadError::BadConfig(format!(
                            "the telemetry upload URL is not usable: {message}"
                        )));
                    }
                    tracing::debug!(attempt = attempts, error = %message, "telemetry upload transport error");
                    if failures >= self.settings.retries {
                        return Err(UploadError::Transport { message, attempts });
                    }
                    self.backoff(failures)
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

    async fn send_once(&self, url: &str, body: Vec<u8>) -> Result<(u16, Answer), reqwest::Error> {
        let mut rb = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, NDJSON)
            .body(body);
        if let Some(t) = &self.token {
            if let Ok(mut v) = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", t.0)) {
                v.set_sensitive(true);
                rb = rb.header(reqwest::header::AUTHORIZATION, v);
            }
        }
        let mut resp = rb.send().await?;
        let status = resp.status().as_u16();
        let retry_after = retry_after_of(resp.headers());
        let mut buf: Vec<u8> = Vec::new();
        while buf.len() < MAX_RESPONSE_BYTES {
            match resp.chunk().await {
                Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
                // The status decides; a body cut off or unreadable is only a poorer message.
                Ok(None) | Err(_) => break,
            }
        }
        buf.truncate(MAX_RESPONSE_BYTES);
        Ok((
            status,
            Answer {
                retry_after,
                body: String::from_utf8_lossy(&buf).into_owned(),
            },
        ))
    }
}

struct Answer {
    retry_after: Option<Duration>,
    body: String,
}

/// A transport error as one line, without the URL (it may hold userinfo) and the token.
fn describe(e: &reqwest::Error, secret: Option<&str>) -> String {
    let mut msg = if e.is_timeout() {
        "timed out".to_string()
    } else {
        String::new()
    };
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut depth = 0;
    while let Some(s) = source {
        let part = s.to_string();
        if !msg.contains(&part) {
            if !msg.is_empty() {
                msg.push_str(": ");
            }
            msg.push_str(&part);
        }
        source = s.source();
        depth += 1;
        if depth > 8 {
            break;
        }
    }
    if msg.is_empty() {
        msg = redact(&e.to_string(), secret);
    }
    snippet(&msg, secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn no_url_anywhere_is_not_configured() {
        assert_eq!(
            resolve_upload(None, None, &env_none),
            Err(UploadError::NotConfigured)
        );
        let text = "[llm]\nmodel = \"m\"\n[telemetry]\nupload_token_env = \"T\"\n";
        assert_eq!(
            resolve_upload(Some(text), None, &env_none),
            Err(UploadError::NotConfigured)
        );
        assert!(UploadError::NotConfigured
            .to_string()
            .contains("no default"));
    }

    #[test]
    fn file_settings_are_read_and_env_overrides_them() {
        let text = "[telemetry]\nupload_url = \"https://a.example/x\"\nupload_token_env = \"T\"\n\
                    upload_retries = 1\nupload_backoff_ms = 7\nupload_timeout_secs = 9\n\
                    retention_days = 3\n";
        let s = resolve_upload(Some(text), None, &env_none).expect("valid");
        assert_eq!(s.url, "https://a.example/x");
        assert_eq!(s.token_env.as_deref(), Some("T"));
        assert_eq!((s.retries, s.backoff_base_ms, s.timeout_secs), (1, 7, 9));
        let env = |k: &str| (k == "CROSSCHECK_TELEMETRY_UPLOAD_URL").then(|| "https://b/".into());
        let s = resolve_upload(Some(text), None, &env).expect("valid");
        assert_eq!(s.url, "https://b/");
    }

    #[test]
    fn only_https_or_loopback_http_is_accepted() {
        for ok in [
            "https://t.example.org/in",
            "HTTPS://t.example.org",
            "http://127.0.0.1:9000/in",
            "http://localhost/in",
            "http://[::1]:1/",
        ] {
            assert!(check_upload_url(ok).is_ok(), "{ok}");
        }
        for no in [
            "http://t.example.org/in",
            "http://10.0.0.1/in",
            "http://localhost.evil.org/",
            "ftp://t.example.org",
            "t.example.org",
            "https://",
            "",
        ] {
            assert!(
                matches!(check_upload_url(no), Err(UploadError::BadConfig(_))),
                "{no}"
            );
        }
    }

    #[test]
    fn tokens_in_the_file_are_refused() {
        let text = "[telemetry]\nupload_url = \"https://a/\"\nupload_token = \"s3cret\"\n";
        let e = resolve_upload(Some(text), None, &env_none).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("upload_token_env") && !m.contains("s3cret"),
            "{m}"
        );
    }

    #[test]
    fn refused_urls_lose_their_userinfo_in_messages() {
        let e = check_upload_url("http://user:pw@t.example.org/").unwrap_err();
        assert!(!e.to_string().contains("pw"), "{e}");
    }

    #[test]
    fn unset_token_variable_is_a_config_error_and_debug_hides_the_token() {
        let mut s = UploadSettings::new("https://t.example.org/");
        s.token_env = Some("UP_TOKEN".into());
        let e = Uploader::with_env(s.clone(), &env_none).unwrap_err();
        assert!(e.to_string().contains("UP_TOKEN"), "{e}");
        let u = Uploader::with_env(s, &|_| Some("tok-very-secret".into())).expect("uploader");
        let d = format!("{u:?}");
        assert!(!d.contains("tok-very-secret") && d.contains("***"), "{d}");
    }
}
