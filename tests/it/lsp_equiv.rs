//! Spec: the "check equivalence with the version at git HEAD" code action. A temporary git
//! repository holds a committed Python file; the buffer changes one function.
//! * a refactor (commuted integer addition) lists the action, and executing it reports
//!   `equivalent` via the normalisation proof, without running anything;
//! * a mutant (`>` to `>=` with a visible effect) is `not_equivalent` with a counterexample when
//!   the user's own config file enables code execution;
//! * when only the workspace (`crosscheck.toml`) or the editor settings try to enable
//!   execution, nothing runs: the verdict is `unknown` and the message says why;
//! * an unchanged function gets no such action.

use crate::lsp_support;

use crosscheck::lsp::client::LspClient;
use crosscheck::lsp::ServerOptions;
use lsp_support::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const COMMITTED: &str = "\
def add(a: int, b: int) -> int:
    return a + b


def clamp(x: int) -> int:
    if x > 10:
        return 10
    return x
";

const REFACTOR: &str = "\
def add(a: int, b: int) -> int:
    return b + a


def clamp(x: int) -> int:
    if x > 10:
        return 10
    return x
";

const MUTANT: &str = "\
def add(a: int, b: int) -> int:
    return a + b


def clamp(x: int) -> int:
    if x > 10:
        return x
    return x
";

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn repo(workspace_toml: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("calc.py"), COMMITTED).unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "calc.py"]);
    git(dir.path(), &["commit", "-q", "-m", "initial"]);
    if let Some(t) = workspace_toml {
        std::fs::write(dir.path().join("crosscheck.toml"), t).unwrap();
    }
    dir
}

fn options(user_config: Option<&str>) -> ServerOptions {
    ServerOptions {
        user_config: user_config.map(String::from),
        ..no_llm()
    }
}

async fn actions(c: &LspClient, uri: &str, line: u32) -> Vec<Value> {
    c.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": range(line, 4, line, 4),
            "context": {"diagnostics": []}
        }),
    )
    .await
    .expect("codeAction")
    .as_array()
    .cloned()
    .unwrap_or_default()
}

fn equivalence_action(actions: &[Value]) -> Option<&Value> {
    actions
        .iter()
        .find(|a| a["command"] == "crosscheck.checkEquivalence")
}

async fn run_check(c: &LspClient, action: &Value) -> Value {
    let id = c
        .request_start(
            "workspace/executeCommand",
            json!({"command": action["command"], "arguments": action["arguments"]}),
        )
        .await;
    c.response(id, Duration::from_secs(300))
        .await
        .expect("executeCommand")
}

async fn session(
    dir: &Path,
    user_config: Option<&str>,
    init_options: Value,
    buffer: &str,
) -> (LspClient, String) {
    let (c, _server) = start(
        options(user_config),
        init_params(Some(dir), false, init_options),
    )
    .await;
    let uri = file_uri(&dir.join("calc.py"));
    open(&c, &uri, "python", 2, buffer).await;
    diagnostics(&c, &uri, 2).await;
    (c, uri)
}

#[tokio::test]
async fn a_refactor_is_proved_equivalent_without_running_code() {
    let dir = repo(None);
    let (c, uri) = session(dir.path(), None, Value::Null, REFACTOR).await;
    let list = actions(&c, &uri, 1).await;
    let action = equivalence_action(&list).expect("the action on the changed function");
    assert!(
        action["title"].as_str().unwrap().contains("`add`"),
        "{action}"
    );
    let r = run_check(&c, action).await;
    assert_eq!(r["status"], "done", "{r}");
    assert_eq!(r["verdict"], "equivalent", "{r}");
    assert_eq!(r["method"], "normalisation");
    assert_eq!(r["tier"], "confirmed");
    assert_eq!(r["executed"], false, "execution is off by default");
    let (_, msg) = c
        .wait_message("window/showMessage", 0, Duration::from_secs(10), |p| {
            p["message"].as_str().is_some_and(|m| m.contains("`add`"))
        })
        .await
        .expect("a showMessage with the verdict");
    assert!(msg["message"].as_str().unwrap().contains("equivalent"));
}

#[tokio::test]
async fn an_unchanged_function_gets_no_equivalence_action() {
    let dir = repo(None);
    let (c, uri) = session(dir.path(), None, Value::Null, REFACTOR).await;
    assert!(equivalence_action(&actions(&c, &uri, 6).await).is_none());
}

#[tokio::test]
async fn a_mutant_is_refuted_with_a_counterexample_when_the_user_enables_execution() {
    let dir = repo(None);
    let (c, uri) = session(
        dir.path(),
        Some("[lsp]\nallow_code_execution = true\n"),
        Value::Null,
        MUTANT,
    )
    .await;
    let list = actions(&c, &uri, 6).await;
    let action = equivalence_action(&list).expect("the action on clamp");
    let r = run_check(&c, action).await;
    assert_eq!(r["verdict"], "not_equivalent", "{r}");
    // The counterexample ran: from the generated inputs, or the solver's model run first.
    assert!(
        matches!(r["method"].as_str(), Some("differential" | "symbolic")),
        "{r}"
    );
    assert_eq!(r["executed"], true);
    let x = r["counterexample"]["inputs"][0].as_i64().unwrap();
    assert!(x > 10, "{r}");
    assert_eq!(r["counterexample"]["a"], 10);
    assert_eq!(r["counterexample"]["b"], x);
    assert!(r["message"].as_str().unwrap().contains("Counterexample"));
}

#[tokio::test]
async fn workspace_and_editor_settings_cannot_enable_execution() {
    let dir = repo(Some("allow_code_execution = true\n"));
    let (c, uri) = session(
        dir.path(),
        None,
        json!({"allow_code_execution": true}),
        MUTANT,
    )
    .await;
    let list = actions(&c, &uri, 6).await;
    let action = equivalence_action(&list).expect("the action is still offered");
    let r = run_check(&c, action).await;
    assert_eq!(r["executed"], false, "{r}");
    assert_eq!(r["verdict"], "unknown", "no proof and nothing ran: {r}");
    assert_eq!(r["counterexample"], Value::Null);
    let msg = r["message"].as_str().unwrap();
    assert!(msg.contains("allow_code_execution"), "{msg}");
}
