//! LLM settings and where they come from.
//!
//! Precedence, lowest to highest:
//! 1. built-in defaults ([`LlmSettings::default`]);
//! 2. the `[llm]` table of the USER's config file: `$CROSSCHECK_CONFIG` if set, else
//!    `$XDG_CONFIG_HOME/crosscheck/config.toml`, else `$HOME/.config/crosscheck/config.toml`;
//! 3. environment overrides `CROSSCHECK_LLM_PROVIDER`, `CROSSCHECK_LLM_BASE_URL`,
//!    `CROSSCHECK_LLM_MODEL`, `CROSSCHECK_LLM_API_KEY_ENV`, `CROSSCHECK_LLM_TIMEOUT_SECS`
//!    (an empty value counts as unset).
//!
//! Trust boundary: settings are NEVER read from files inside an analysed workspace. A hostile
//! repository must not be able to point crosscheck at its own server (leaking code) or make it
//! send a key elsewhere. The key itself is never part of the settings: `api_key_env` holds the
//! NAME of an environment variable, and a config file that contains an `api_key` entry is
//! rejected with an explanation.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The wire protocol spoken to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI-compatible `POST {base_url}/chat/completions`: OpenAI, llama.cpp `llama-server`,
    /// Ollama, vLLM, LM Studio.
    #[default]
    #[serde(alias = "openai-compatible", alias = "openai_compatible")]
    OpenAi,
    /// Anthropic Messages API, `POST {base_url}/messages` (base_url such as
    /// `https://api.anthropic.com/v1`).
    Anthropic,
}

impl Provider {
    pub fn parse(s: &str) -> Option<Provider> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "openai_compatible" => Some(Provider::OpenAi),
            "anthropic" => Some(Provider::Anthropic),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }
}

/// Everything the HTTP client needs, minus the key. `Debug` is safe to log: no secret inside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    pub provider: Provider,
    /// Including the API version path: `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`,
    /// `https://api.anthropic.com/v1`. A trailing `/` is ignored.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable that holds the API key (e.g. `OPENAI_API_KEY`).
    /// `None` sends no key (local servers).
    pub api_key_env: Option<String>,
    /// Default sampling temperature for requests that do not set one. 0 by default: the
    /// research notes report 18% verdict flips across identical runs, so be as stable as we can.
    pub temperature: Option<f32>,
    /// Default seed (OpenAI-compatible only; Anthropic has none).
    pub seed: Option<u64>,
    /// Default completion limit. Anthropic requires one: 4096 is sent when none is set.
    pub max_tokens: Option<u32>,
    /// Bound on one whole call: all attempts, back-off and Retry-After waits.
    pub timeout_secs: u64,
    /// At most this many requests in flight per client (0 is treated as 1).
    pub max_concurrent: u32,
    /// Token-bucket limit on HTTP requests (retries included); 0 = unlimited.
    pub requests_per_minute: u32,
    /// Extra attempts after a retryable failure (429, 500, 502, 503, 504, 529, connect error).
    pub retries: u32,
    /// First back-off delay; doubles per attempt, with jitter, capped by `backoff_max_ms`.
    pub backoff_base_ms: u64,
    pub backoff_max_ms: u64,
    /// Whether to send `temperature` at all (some reasoning models reject it).
    pub send_temperature: bool,
    /// Whether to send `max_tokens` at all (some reasoning models reject it).
    pub send_max_tokens: bool,
    /// Send llama.cpp extensions (`cache_prompt: false`, `grammar`). `None` = automatic: on when
    /// `base_url` points at a loopback host (local llama-server, Ollama, LM Studio), off
    /// otherwise, because api.openai.com rejects unknown request fields.
    pub llama_cpp_compat: Option<bool>,
    /// `anthropic-version` header value.
    pub anthropic_version: String,
    /// Token budgets (prompt + completion); `None` = unlimited.
    pub session_token_budget: Option<u64>,
    pub daily_token_budget: Option<u64>,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            provider: Provider::OpenAi,
            base_url: None,
            model: None,
            api_key_env: None,
            temperature: Some(0.0),
            seed: None,
            max_tokens: Some(2048),
            timeout_secs: 120,
            max_concurrent: 4,
            requests_per_minute: 0,
            retries: 3,
            backoff_base_ms: 500,
            backoff_max_ms: 20_000,
            send_temperature: true,
            send_max_tokens: true,
            llama_cpp_compat: None,
            anthropic_version: "2023-06-01".to_string(),
            session_token_budget: None,
            daily_token_budget: None,
        }
    }
}

impl LlmSettings {
    /// True when a base URL and a model are both set (non-empty).
    pub fn is_configured(&self) -> bool {
        let set = |o: &Option<String>| o.as_deref().is_some_and(|s| !s.trim().is_empty());
        set(&self.base_url) && set(&self.model)
    }

    /// The base URL without trailing slashes (empty when unset).
    pub fn base_url_trimmed(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or("")
            .trim()
            .trim_end_matches('/')
    }

    /// Whether llama.cpp extensions are sent (see [`LlmSettings::llama_cpp_compat`]).
    pub fn llama_cpp_compat_effective(&self) -> bool {
        match self.llama_cpp_compat {
            Some(b) => b,
            None => is_loopback_url(self.base_url_trimmed()),
        }
    }

    /// Loads from the real user config file and process environment.
    pub fn load() -> Result<LlmSettings, SettingsError> {
        let env = |k: &str| std::env::var(k).ok();
        let path = config_path(&env);
        let text = match &path {
            Some(p) => match std::fs::read_to_string(p) {
                Ok(t) => Some(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(SettingsError::Io {
                        path: p.clone(),
                        message: e.to_string(),
                    })
                }
            },
            None => None,
        };
        resolve(text.as_deref(), &env).map_err(|e| e.with_path(path.as_deref()))
    }
}

/// True for `localhost`, `127.0.0.0/8`, `::1` hosts (any scheme/port/path).
pub fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if let Some(stripped) = host_port.strip_prefix('[') {
        stripped.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Why settings could not be loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsError {
    /// The config file is not valid TOML or its `[llm]` table has wrong keys/types.
    Parse {
        path: Option<PathBuf>,
        message: String,
    },
    /// The config file holds a key; keys belong in an environment variable.
    KeyInConfig {
        path: Option<PathBuf>,
    },
    /// An environment override has an unusable value.
    BadEnv {
        var: &'static str,
        message: String,
    },
    Io {
        path: PathBuf,
        message: String,
    },
}

impl SettingsError {
    fn with_path(self, p: Option<&Path>) -> SettingsError {
        match self {
            SettingsError::Parse {
                path: None,
                message,
            } => SettingsError::Parse {
                path: p.map(Path::to_path_buf),
                message,
            },
            SettingsError::KeyInConfig { path: None } => SettingsError::KeyInConfig {
                path: p.map(Path::to_path_buf),
            },
            other => other,
        }
    }
}

fn show(p: &Option<PathBuf>) -> String {
    p.as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the crosscheck config file".to_string())
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingsError::Parse { path, message } => {
                write!(f, "invalid [llm] settings in {}: {message}", show(path))
            }
            SettingsError::KeyInConfig { path } => write!(
                f,
                "{} contains an API key entry; crosscheck never stores keys in files: put the key \
                 in an environment variable and set llm.api_key_env to that variable's name",
                show(path)
            ),
            SettingsError::BadEnv { var, message } => write!(f, "{var}: {message}"),
            SettingsError::Io { path, message } => {
                write!(f, "cannot read {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for SettingsError {}

/// Where the user's config file is, given an environment lookup. Pure.
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if let Some(p) = get("CROSSCHECK_CONFIG") {
        return Some(PathBuf::from(p));
    }
    if let Some(x) = get("XDG_CONFIG_HOME") {
        return Some(Path::new(&x).join("crosscheck").join("config.toml"));
    }
    get("HOME").map(|h| {
        Path::new(&h)
            .join(".config")
            .join("crosscheck")
            .join("config.toml")
    })
}

/// Entries that look like a secret rather than the name of a variable.
const KEY_ENTRIES: [&str; 4] = ["api_key", "apikey", "key", "token"];

/// Builds settings from the config file text (if any) and an environment lookup. Pure.
pub fn resolve(
    file: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LlmSettings, SettingsError> {
    let mut s = match file {
        None => LlmSettings::default(),
        Some(text) => from_file_text(text)?,
    };
    let get = |k: &str| {
        env(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(p) = get("CROSSCHECK_LLM_PROVIDER") {
        s.provider = Provider::parse(&p).ok_or_else(|| SettingsError::BadEnv {
            var: "CROSSCHECK_LLM_PROVIDER",
            message: format!("unknown provider {p:?} (expected \"openai\" or \"anthropic\")"),
        })?;
    }
    if let Some(u) = get("CROSSCHECK_LLM_BASE_URL") {
        s.base_url = Some(u);
    }
    if let Some(m) = get("CROSSCHECK_LLM_MODEL") {
        s.model = Some(m);
    }
    if let Some(k) = get("CROSSCHECK_LLM_API_KEY_ENV") {
        s.api_key_env = Some(k);
    }
    if let Some(t) = get("CROSSCHECK_LLM_TIMEOUT_SECS") {
        s.timeout_secs = match t.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(SettingsError::BadEnv {
                    var: "CROSSCHECK_LLM_TIMEOUT_SECS",
                    message: format!("expected a positive whole number of seconds, got {t:?}"),
                })
            }
        };
    }
    Ok(s)
}

fn from_file_text(text: &str) -> Result<LlmSettings, SettingsError> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| SettingsError::Parse {
        path: None,
        message: e.message().to_string(),
    })?;
    let Some(llm) = doc.get("llm") else {
        return Ok(LlmSettings::default());
    };
    let Some(table) = llm.as_table() else {
        return Err(SettingsError::Parse {
            path: None,
            message: "`llm` must be a table ([llm])".to_string(),
        });
    };
    if table
        .keys()
        .any(|k| KEY_ENTRIES.contains(&k.to_ascii_lowercase().as_str()))
    {
        return Err(SettingsError::KeyInConfig { path: None });
    }
    let s: LlmSettings =
        toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| SettingsError::Parse {
                path: None,
                message: e.message().to_string(),
            })?;
    if s.timeout_secs == 0 {
        return Err(SettingsError::Parse {
            path: None,
            message: "timeout_secs must be at least 1".to_string(),
        });
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_detection() {
        for u in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://[::1]:8000/v1",
            "http://user@127.0.0.2/v1",
            "localhost:1234",
        ] {
            assert!(is_loopback_url(u), "{u}");
        }
        for u in [
            "https://api.openai.com/v1",
            "http://10.0.0.1:8080",
            "http://localhost.evil.com/v1",
            "",
        ] {
            assert!(!is_loopback_url(u), "{u}");
        }
    }

    #[test]
    fn provider_parse_accepts_aliases() {
        assert_eq!(Provider::parse(" OpenAI "), Some(Provider::OpenAi));
        assert_eq!(Provider::parse("openai-compatible"), Some(Provider::OpenAi));
        assert_eq!(Provider::parse("anthropic"), Some(Provider::Anthropic));
        assert_eq!(Provider::parse("gemini"), None);
    }
}
