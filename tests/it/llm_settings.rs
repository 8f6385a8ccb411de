//! Spec: where LLM settings come from, one test per precedence rule.

use crosscheck::llm::settings::{config_path, resolve, LlmSettings, Provider, SettingsError};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

const FILE: &str = r#"
[ui]
theme = "dark"

[llm]
provider = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "qwen2.5-coder-7b"
api_key_env = "FILE_KEY_VAR"
temperature = 0.3
seed = 42
max_tokens = 512
timeout_secs = 30
max_concurrent = 2
requests_per_minute = 60
retries = 5
send_temperature = false
"#;

#[test]
fn defaults_apply_without_file_or_environment() {
    let s = resolve(None, &env_of(&[])).expect("defaults");
    assert_eq!(s, LlmSettings::default());
    assert_eq!(s.provider, Provider::OpenAi);
    assert!(!s.is_configured());
    assert_eq!(s.temperature, Some(0.0));
    assert_eq!(s.timeout_secs, 120);
}

#[test]
fn file_values_override_defaults() {
    let s = resolve(Some(FILE), &env_of(&[])).expect("file");
    assert_eq!(s.base_url.as_deref(), Some("http://127.0.0.1:8080/v1"));
    assert_eq!(s.model.as_deref(), Some("qwen2.5-coder-7b"));
    assert_eq!(s.api_key_env.as_deref(), Some("FILE_KEY_VAR"));
    assert_eq!(s.temperature, Some(0.3));
    assert_eq!(s.seed, Some(42));
    assert_eq!(s.max_tokens, Some(512));
    assert_eq!(s.timeout_secs, 30);
    assert_eq!(s.max_concurrent, 2);
    assert_eq!(s.requests_per_minute, 60);
    assert_eq!(s.retries, 5);
    assert!(!s.send_temperature);
    assert!(s.send_max_tokens, "unset keys keep their defaults");
    assert!(s.is_configured());
}

#[test]
fn file_without_llm_table_gives_defaults() {
    let s = resolve(Some("[ui]\ntheme = \"x\"\n"), &env_of(&[])).expect("no [llm]");
    assert_eq!(s, LlmSettings::default());
}

#[test]
fn env_provider_overrides_file() {
    let s = resolve(
        Some(FILE),
        &env_of(&[("CROSSCHECK_LLM_PROVIDER", "Anthropic")]),
    )
    .expect("ok");
    assert_eq!(s.provider, Provider::Anthropic);
}

#[test]
fn env_base_url_overrides_file() {
    let s = resolve(
        Some(FILE),
        &env_of(&[("CROSSCHECK_LLM_BASE_URL", "https://api.openai.com/v1")]),
    )
    .expect("ok");
    assert_eq!(s.base_url.as_deref(), Some("https://api.openai.com/v1"));
    assert_eq!(
        s.model.as_deref(),
        Some("qwen2.5-coder-7b"),
        "others untouched"
    );
}

#[test]
fn env_model_overrides_file() {
    let s = resolve(
        Some(FILE),
        &env_of(&[("CROSSCHECK_LLM_MODEL", "gpt-4o-mini")]),
    )
    .expect("ok");
    assert_eq!(s.model.as_deref(), Some("gpt-4o-mini"));
}

#[test]
fn env_api_key_env_overrides_file() {
    let s = resolve(
        Some(FILE),
        &env_of(&[("CROSSCHECK_LLM_API_KEY_ENV", "OPENAI_API_KEY")]),
    )
    .expect("ok");
    assert_eq!(s.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
}

#[test]
fn env_timeout_overrides_file() {
    let s = resolve(Some(FILE), &env_of(&[("CROSSCHECK_LLM_TIMEOUT_SECS", "7")])).expect("ok");
    assert_eq!(s.timeout_secs, 7);
}

#[test]
fn env_overrides_apply_without_a_file() {
    let s = resolve(
        None,
        &env_of(&[
            ("CROSSCHECK_LLM_BASE_URL", "http://localhost:11434/v1"),
            ("CROSSCHECK_LLM_MODEL", "llama3"),
        ]),
    )
    .expect("ok");
    assert!(s.is_configured());
}

#[test]
fn empty_env_values_count_as_unset() {
    let s = resolve(
        Some(FILE),
        &env_of(&[
            ("CROSSCHECK_LLM_MODEL", ""),
            ("CROSSCHECK_LLM_BASE_URL", "   "),
            ("CROSSCHECK_LLM_PROVIDER", ""),
        ]),
    )
    .expect("ok");
    assert_eq!(s.model.as_deref(), Some("qwen2.5-coder-7b"));
    assert_eq!(s.base_url.as_deref(), Some("http://127.0.0.1:8080/v1"));
}

#[test]
fn unknown_env_provider_is_an_error() {
    let e = resolve(None, &env_of(&[("CROSSCHECK_LLM_PROVIDER", "gemini")])).unwrap_err();
    assert!(matches!(
        e,
        SettingsError::BadEnv {
            var: "CROSSCHECK_LLM_PROVIDER",
            ..
        }
    ));
    assert!(e.to_string().contains("gemini"));
}

#[test]
fn non_numeric_env_timeout_is_an_error() {
    for bad in ["soon", "0", "-1"] {
        let e = resolve(None, &env_of(&[("CROSSCHECK_LLM_TIMEOUT_SECS", bad)])).unwrap_err();
        assert!(
            matches!(
                e,
                SettingsError::BadEnv {
                    var: "CROSSCHECK_LLM_TIMEOUT_SECS",
                    ..
                }
            ),
            "{bad}"
        );
    }
}

#[test]
fn config_path_prefers_crosscheck_config() {
    let env = env_of(&[
        ("CROSSCHECK_CONFIG", "/etc/cc.toml"),
        ("XDG_CONFIG_HOME", "/x"),
        ("HOME", "/home/u"),
    ]);
    assert_eq!(config_path(&env), Some(PathBuf::from("/etc/cc.toml")));
}

#[test]
fn config_path_falls_back_to_xdg_config_home() {
    let env = env_of(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/home/u")]);
    assert_eq!(
        config_path(&env),
        Some(PathBuf::from("/x/crosscheck/config.toml"))
    );
}

#[test]
fn config_path_falls_back_to_home_dot_config() {
    let env = env_of(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "")]);
    assert_eq!(
        config_path(&env),
        Some(PathBuf::from("/home/u/.config/crosscheck/config.toml"))
    );
}

#[test]
fn config_path_is_none_without_any_hint() {
    assert_eq!(config_path(&env_of(&[])), None);
}

#[test]
fn api_key_in_config_file_is_rejected_without_echoing_it() {
    let text = "[llm]\nmodel = \"m\"\napi_key = \"sk-live-DO-NOT-PRINT\"\n";
    let e = resolve(Some(text), &env_of(&[])).unwrap_err();
    assert!(matches!(e, SettingsError::KeyInConfig { .. }));
    let msg = e.to_string();
    assert!(msg.contains("api_key_env"), "{msg}");
    assert!(!msg.contains("DO-NOT-PRINT") && !format!("{e:?}").contains("DO-NOT-PRINT"));
}

#[test]
fn misspelt_setting_is_an_error_naming_it() {
    let e = resolve(Some("[llm]\nmodle = \"m\"\n"), &env_of(&[])).unwrap_err();
    assert!(matches!(e, SettingsError::Parse { .. }));
    assert!(e.to_string().contains("modle"), "{e}");
}

#[test]
fn invalid_toml_and_wrong_types_are_errors() {
    assert!(resolve(Some("[llm\nmodel ="), &env_of(&[])).is_err());
    assert!(resolve(Some("[llm]\ntimeout_secs = \"ten\"\n"), &env_of(&[])).is_err());
    assert!(resolve(Some("llm = 3\n"), &env_of(&[])).is_err());
    assert!(resolve(Some("[llm]\ntimeout_secs = 0\n"), &env_of(&[])).is_err());
}

#[test]
fn anthropic_provider_from_file() {
    let s = resolve(
        Some("[llm]\nprovider = \"anthropic\"\nbase_url = \"https://api.anthropic.com/v1\"\nmodel = \"claude\"\n"),
        &env_of(&[]),
    )
    .expect("ok");
    assert_eq!(s.provider, Provider::Anthropic);
    assert!(s.is_configured());
}

#[test]
fn is_configured_needs_both_base_url_and_model() {
    let only_url = LlmSettings {
        base_url: Some("http://localhost/v1".into()),
        ..LlmSettings::default()
    };
    assert!(!only_url.is_configured());
    let blank_model = LlmSettings {
        model: Some(" ".into()),
        ..only_url.clone()
    };
    assert!(!blank_model.is_configured());
    let both = LlmSettings {
        model: Some("m".into()),
        ..only_url
    };
    assert!(both.is_configured());
}
