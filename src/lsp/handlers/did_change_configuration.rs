//! `workspace/didChangeConfiguration`: the pushed settings, or (when the push is empty and the
//! client supports it) the `crosscheck` section pulled with `workspace/configuration`.

use crate::lsp::config::{self, Source};
use crate::lsp::server::{lock, State};
use std::sync::Arc;
use tower_lsp_server::ls_types::{ConfigurationItem, DidChangeConfigurationParams, MessageType};

pub async fn handle(state: &Arc<State>, params: DidChangeConfigurationParams) {
    let empty =
        params.settings.is_null() || params.settings.as_object().is_some_and(|o| o.is_empty());
    let value = if empty && lock(&state.caps).configuration {
        let item = ConfigurationItem {
            scope_uri: None,
            section: Some("crosscheck".to_string()),
        };
        match state.client.configuration(vec![item]).await {
            Ok(mut v) if !v.is_empty() => v.remove(0),
            _ => serde_json::Value::Null,
        }
    } else {
        params.settings
    };
    let parsed = config::parse_editor_settings(Source::DidChangeConfiguration, &value);
    {
        let mut c = lock(&state.config);
        c.sources.changed = config::merge_changed(&c.sources.changed, &parsed.layer);
    }
    for w in parsed.warnings {
        state.log(MessageType::WARNING, w).await;
    }
    state.reconfigure().await;
}
