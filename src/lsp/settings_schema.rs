//! The editor settings schema: every key an editor may send in `initializationOptions` or
//! `workspace/didChangeConfiguration` (see [`super::config`]), as a JSON Schema whose
//! `properties` use the flattened `crosscheck.<table>.<key>` names VS Code uses in
//! `contributes.configuration`. `crosscheck schema lsp-settings` prints it, and a test below
//! keeps `editors/vscode/package.json` identical to it (the way rust-analyzer keeps its
//! `package.json` in sync from Rust).
//!
//! Keys are spelled exactly as in `crosscheck.toml`. Restricted keys (LLM endpoint, templates,
//! code execution, ...) are absent on purpose: the server ignores them from an editor.
//! Defaults come from [`Settings::default`], so they cannot drift from the server's.
//!
//! Namespaces `crosscheck.server.*`, `crosscheck.client.*` and `crosscheck.trace.*` belong to
//! the editor extensions themselves (binary path, presentation, protocol tracing); the server
//! never defines keys there.

use super::config::{Presentation, Settings};
use crate::crosscheck::record::Tier;
use serde_json::{json, Map, Value};

/// Setting-name prefixes reserved for the editor extensions' own settings.
pub const CLIENT_NAMESPACES: [&str; 3] = [
    "crosscheck.server.",
    "crosscheck.client.",
    "crosscheck.trace.",
];

const TIERS: [(Tier, &str); 4] = [
    (Tier::Confirmed, "the analyzer and the LLM agree"),
    (
        Tier::AnalyzerOnly,
        "only the deterministic analysis reports it; the LLM disagreed, was unstable or was not asked",
    ),
    (Tier::LlmOnly, "only the LLM claims it; unverified"),
    (
        Tier::Refuted,
        "the LLM claims something the analysis contradicts",
    ),
];

fn presentation_name(p: Presentation) -> &'static str {
    match p {
        Presentation::Show => "show",
        Presentation::Hint => "hint",
        Presentation::Hidden => "hidden",
    }
}

/// The JSON Schema of the editor settings (VS Code `contributes.configuration` shape).
pub fn editor_settings_schema() -> Value {
    let d = Settings::default();
    let mut props = Map::new();
    let mut put = |key: &str, v: Value| {
        props.insert(format!("crosscheck.{key}"), v);
    };
    put(
        "files.exclude",
        json!({
            "type": "array",
            "items": {"type": "string"},
            "default": d.exclude,
            "description": "Files never analysed and never sent to an LLM: gitignore-syntax patterns relative to the workspace folder (e.g. \"vendor/\", \"*.min.js\"). A workspace crosscheck.toml can only add to this list.",
        }),
    );
    put(
        "files.respect_gitignore",
        json!({
            "type": "boolean",
            "default": d.respect_gitignore,
            "description": "Also exclude files matched by .gitignore.",
        }),
    );
    put(
        "files.max_file_bytes",
        json!({
            "type": "integer",
            "minimum": 0,
            "default": d.max_file_bytes,
            "description": "Files larger than this many bytes are not analysed.",
        }),
    );
    put(
        "rules.disable",
        json!({
            "type": "array",
            "items": {"type": "string"},
            "default": d.disabled_rules.iter().collect::<Vec<_>>(),
            "description": "Rule ids whose diagnostics are not shown (e.g. \"analysis-partial\").",
        }),
    );
    put(
        "files.report",
        json!({
            "type": "array",
            "items": {"type": "string", "enum": ["test", "example", "script", "build", "vendored", "generated", "minified"]},
            "uniqueItems": true,
            "default": d.files_report.0.iter().map(|r| r.name()).collect::<Vec<_>>(),
            "description": "File roles besides the product whose findings are shown at the rule's severity. A file's role comes from its path below the workspace folder (tests, examples, scripts, build tooling, vendored folders) and its text (minified or generated files). Findings in files of other roles are shown as information; minified and generated files also skip unreachable-code. A workspace crosscheck.toml `[files] report` replaces this list.",
        }),
    );
    put(
        "taint.report",
        json!({
            "type": "array",
            "items": {"type": "string", "enum": ["remote", "stored", "local"]},
            "default": d.taint_report.0.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "description": "Source trust classes whose taint flows are shown at the rule's severity: remote (HTTP requests, sockets), stored (database rows: second-order input), local (environment, argv, stdin, files, configuration). Flows whose sources are all of other classes are shown as information. A workspace crosscheck.toml `[taint] report` replaces this list.",
        }),
    );
    for (tier, meaning) in TIERS {
        put(
            &format!("tiers.{}", tier.name()),
            json!({
                "type": "string",
                "enum": ["show", "hint", "hidden"],
                "enumDescriptions": [
                    "shown with the rule's own severity",
                    "shown as a hint",
                    "not shown",
                ],
                "default": presentation_name(d.tiers.get(tier)),
                "description": format!(
                    "Presentation of `{}` findings: {meaning}.",
                    tier.name()
                ),
            }),
        );
    }
    put(
        "llm.enabled",
        json!({
            "type": "boolean",
            "default": d.llm_enabled,
            "description": "Run LLM cross-checks in the background when an LLM is configured in ~/.config/crosscheck/config.toml (the endpoint can only be set there).",
        }),
    );
    put(
        "llm.debounce_ms",
        json!({
            "type": "integer",
            "minimum": 0,
            "default": d.llm_debounce_ms,
            "description": "Quiet time in milliseconds before a changed function is sent to the LLM.",
        }),
    );
    put(
        "llm.tasks",
        json!({
            "type": "array",
            "items": {"type": "string", "enum": ["cfg", "call_graph", "data_dependency", "taint", "ast", "points_to"]},
            "uniqueItems": true,
            "default": d.llm_tasks.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "description": "Function tasks the LLM is asked about, scored against the analyzer (Layer 1). Every taint finding also gets its own question.",
        }),
    );
    put(
        "llm.function_checks",
        json!({
            "type": "string",
            "enum": ["edited", "all", "off"],
            "enumDescriptions": [
                "functions changed since the document was opened",
                "every function of an open document",
                "none: only taint findings are asked about",
            ],
            "default": d.llm_function_checks.name(),
            "description": "Which functions the function tasks are asked about.",
        }),
    );
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "crosscheck",
        "description": format!(
            "Settings of the crosscheck language server (schema version {}) that an editor may send.",
            super::config::SCHEMA_VERSION
        ),
        "type": "object",
        "properties": Value::Object(props),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::config::{parse_editor_settings, resolve, ConfigSources, Layer, Source};

    /// Turns flattened `crosscheck.table.key` names and values into the nested object the
    /// server reads (the schema has top-level tables only).
    fn nest(flat: &[(String, Value)]) -> Value {
        let mut root = Map::new();
        for (name, v) in flat {
            let rest = name.strip_prefix("crosscheck.").unwrap_or(name);
            match rest.split_once('.') {
                Some((table, key)) => {
                    let t = root
                        .entry(table.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                    t.as_object_mut()
                        .expect("tables are objects")
                        .insert(key.to_string(), v.clone());
                }
                None => {
                    root.insert(rest.to_string(), v.clone());
                }
            }
        }
        Value::Object(root)
    }

    fn properties() -> Map<String, Value> {
        editor_settings_schema()["properties"]
            .as_object()
            .cloned()
            .expect("properties object")
    }

    /// A value of the property's type that differs from its default.
    fn non_default(prop: &Value) -> Value {
        match prop["type"].as_str() {
            Some("boolean") => Value::Bool(!prop["default"].as_bool().expect("bool default")),
            Some("integer") => json!(prop["default"].as_u64().expect("int default") + 7),
            Some("array") => match prop["items"]["enum"].as_array() {
                Some(values) => json!([values.last().expect("an enum value")]),
                None => json!(["some/pattern"]),
            },
            Some("string") => {
                let d = prop["default"].as_str().expect("string default");
                let other = prop["enum"]
                    .as_array()
                    .expect("enum")
                    .iter()
                    .filter_map(Value::as_str)
                    .find(|s| *s != d)
                    .expect("a second enum value");
                json!(other)
            }
            other => panic!("unexpected type {other:?}"),
        }
    }

    #[test]
    fn every_key_is_accepted_from_an_editor_without_warnings() {
        for (key, prop) in properties() {
            let settings = nest(&[(key.clone(), non_default(&prop))]);
            let parsed = parse_editor_settings(Source::InitializationOptions, &settings);
            assert!(parsed.warnings.is_empty(), "{key}: {:?}", parsed.warnings);
            assert_ne!(parsed.layer, Layer::default(), "{key} set nothing");
        }
    }

    #[test]
    fn the_wrapped_form_is_accepted_too() {
        let settings =
            json!({"crosscheck": nest(&[("crosscheck.llm.enabled".into(), json!(false))])});
        let parsed = parse_editor_settings(Source::DidChangeConfiguration, &settings);
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        assert_eq!(parsed.layer.llm_enabled, Some(false));
    }

    #[test]
    fn defaults_are_the_server_defaults() {
        let flat: Vec<(String, Value)> = properties()
            .into_iter()
            .map(|(k, p)| (k, p["default"].clone()))
            .collect();
        let parsed = parse_editor_settings(Source::InitializationOptions, &nest(&flat));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let sources = ConfigSources {
            init: parsed.layer,
            ..Default::default()
        };
        assert_eq!(resolve(&sources, None).0, Settings::default());
    }

    #[test]
    fn every_editor_settable_key_is_in_the_schema() {
        let flat: Vec<(String, Value)> = properties()
            .into_iter()
            .map(|(k, p)| {
                let v = non_default(&p);
                (k, v)
            })
            .collect();
        let parsed = parse_editor_settings(Source::InitializationOptions, &nest(&flat));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        // No `..`: a new Layer field fails to compile here until it is classified.
        let Layer {
            exclude,
            respect_gitignore,
            max_file_bytes,
            disabled_rules,
            tiers,
            llm_enabled,
            llm_debounce_ms,
            llm_tasks,
            llm_function_checks,
            templates_dir,
            allow_code_execution,
            taint_report,
            files_report,
        } = parsed.layer;
        assert!(exclude.is_some() && respect_gitignore.is_some() && max_file_bytes.is_some());
        assert!(disabled_rules.is_some() && llm_enabled.is_some() && llm_debounce_ms.is_some());
        assert!(llm_tasks.is_some() && llm_function_checks.is_some() && taint_report.is_some());
        assert!(files_report.is_some());
        assert_eq!(tiers.len(), TIERS.len());
        // Restricted: the user's config file only, so never offered to editors.
        assert!(templates_dir.is_none() && allow_code_execution.is_none());
    }

    #[test]
    fn restricted_keys_are_not_offered() {
        for key in properties().keys() {
            for bad in [
                "llm.base_url",
                "llm.model",
                "templates_dir",
                "allow_code_execution",
            ] {
                assert_ne!(key, &format!("crosscheck.{bad}"));
            }
            assert!(
                !CLIENT_NAMESPACES.iter().any(|ns| key.starts_with(ns)),
                "{key} is in a client namespace"
            );
        }
    }

    #[test]
    fn nest_builds_tables() {
        let v = nest(&[
            ("crosscheck.tiers.llm-only".into(), json!("hidden")),
            ("crosscheck.tiers.refuted".into(), json!("hint")),
            ("crosscheck.llm.enabled".into(), json!(true)),
        ]);
        assert_eq!(
            v,
            json!({"tiers": {"llm-only": "hidden", "refuted": "hint"}, "llm": {"enabled": true}})
        );
    }

    /// `editors/vscode/package.json` contributes exactly these settings (plus the extension's
    /// own, in [`CLIENT_NAMESPACES`]).
    #[test]
    fn vscode_package_json_contributes_exactly_these_settings() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode/package.json");
        let text = std::fs::read_to_string(&path).expect("editors/vscode/package.json");
        let pkg: Value = serde_json::from_str(&text).expect("package.json is JSON");
        let contributed = pkg["contributes"]["configuration"]["properties"]
            .as_object()
            .expect("contributes.configuration.properties");
        let server: Map<String, Value> = contributed
            .iter()
            .filter(|(k, _)| !CLIENT_NAMESPACES.iter().any(|ns| k.starts_with(ns)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let expected = properties();
        let missing: Vec<&String> = expected
            .keys()
            .filter(|k| !server.contains_key(*k))
            .collect();
        let extra: Vec<&String> = server
            .keys()
            .filter(|k| !expected.contains_key(*k))
            .collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "package.json is out of sync (run `crosscheck schema lsp-settings`): missing {missing:?}, extra {extra:?}"
        );
        for (k, v) in &expected {
            assert_eq!(Some(v), server.get(k), "package.json differs at {k}");
        }
    }
}
