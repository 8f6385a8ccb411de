//! "Check equivalence with the version at git HEAD": a refactoring-safety code action on a
//! function whose text differs from the committed one (matched by qualified name).
//!
//! * The action is offered by `textDocument/codeAction` when the function at the cursor exists
//!   at `HEAD` with a different text. Its command `crosscheck.checkEquivalence {uri, line,
//!   character, version}` runs [`crate::exec::equiv::check`] between the `HEAD` version (A) and
//!   the buffer's version (B), each inside its whole file (callees, fields, constants).
//! * The result is shown with `window/showMessage` (verdict, tier, method, counterexample) and
//!   returned as the command's result (`{"status", "verdict", "tier", "method",
//!   "counterexample", "trials", "executed", "message"}`). A message fits an action the user
//!   invoked explicitly; a diagnostic would be replaced by the next analysis of the buffer.
//! * **Running code** (differential testing) happens only when the user's own config file sets
//!   `allow_code_execution = true` in its `[lsp]` table (editor settings and the workspace's
//!   `crosscheck.toml` cannot set it, see `config`), and never when the editor launched the
//!   server for an untrusted workspace (environment variable
//!   `CROSSCHECK_UNTRUSTED_WORKSPACE=1`). Otherwise only the normalisation proof runs and the
//!   message says why nothing was executed. The LLM is not asked from here.
//! * `git` (`cat-file`, no hooks, no textconv, `core.fsmonitor` off) and the harness processes
//!   run on the blocking pool, never on the task that handles text synchronisation; when the
//!   document's version changed meanwhile, the result is dropped (status `stale`).

use crate::exec::equiv::{check, side_from_text, DiffOptions, EquivOptions, EquivReport, Pick};
use crate::exec::sandbox::Limits;
use crate::lsp::config::Settings;
use crate::syntax::functions::collect_functions;
use crate::syntax::{Language, ParsedFile};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a `HEAD` text is reused before git is asked again.
const HEAD_TTL: Duration = Duration::from_secs(3);

/// The text of `path` at `HEAD` (blocking: runs git).
pub fn head_text(path: &Path) -> Result<String, String> {
    let dir = path.parent().ok_or("no parent directory")?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("file name is not UTF-8")?;
    let out = std::process::Command::new("git")
        .args(["-c", "core.fsmonitor=false", "-C"])
        .arg(dir)
        .args(["cat-file", "blob", &format!("HEAD:./{name}")])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "not at git HEAD: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| "the HEAD version is not UTF-8".to_string())
}

type HeadCache = Mutex<BTreeMap<PathBuf, (Instant, Result<String, String>)>>;

/// [`head_text`] on the blocking pool, with a short-lived cache (code actions are requested
/// on every cursor move).
pub async fn head_text_cached(path: &Path) -> Result<String, String> {
    static CACHE: OnceLock<HeadCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(c) = cache.lock() {
        if let Some((at, r)) = c.get(path) {
            if at.elapsed() < HEAD_TTL {
                return r.clone();
            }
        }
    }
    let p = path.to_path_buf();
    let r = tokio::task::spawn_blocking(move || head_text(&p))
        .await
        .unwrap_or_else(|e| Err(format!("git task failed: {e}")));
    if let Ok(mut c) = cache.lock() {
        if c.len() > 256 {
            c.clear();
        }
        c.insert(path.to_path_buf(), (Instant::now(), r.clone()));
    }
    r
}

/// The function of `buffer` spanning 1-based `line` (innermost) whose qualified name exists at
/// `HEAD` with a different text: `(qualified name, start line in the buffer)`.
pub fn changed_function(buffer: &ParsedFile, line: usize, head: &str) -> Option<(String, usize)> {
    if !crate::analysis::equiv::supports(buffer.language) {
        return None;
    }
    let f = crate::exec::equiv::function_at_line(buffer, line)?;
    let old = ParsedFile::parse(buffer.language, head.to_string());
    let before = collect_functions(&old)
        .into_iter()
        .find(|g| g.name == f.name)?;
    let changed = old.node_text(before.node) != buffer.node_text(f.node);
    changed.then(|| (f.name.clone(), f.start_line))
}

/// May the server run the user's code? `Err` says why not.
pub fn execution_allowed(settings: &Settings, untrusted_workspace: bool) -> Result<(), String> {
    if untrusted_workspace {
        return Err("the workspace is not trusted, so no code is run".into());
    }
    if !settings.allow_code_execution {
        return Err("code execution is off: set `allow_code_execution = true` in the [lsp] table of your own config file (~/.config/crosscheck/config.toml); editor and workspace settings cannot enable it".into());
    }
    Ok(())
}

/// Whether the editor launched the server for an untrusted workspace.
pub fn untrusted_workspace_from_env() -> bool {
    std::env::var("CROSSCHECK_UNTRUSTED_WORKSPACE").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The comparison itself (blocking: may compile and run code).
pub fn compare_with_head(
    path: &Path,
    language: Language,
    buffer: String,
    head: String,
    function: &str,
    buffer_line: usize,
    execute: bool,
) -> Result<EquivReport, String> {
    let a = side_from_text(path, language, head, Pick::Name(function))?;
    let b = side_from_text(path, language, buffer, Pick::Line(buffer_line))?;
    let opts = EquivOptions {
        diff: DiffOptions {
            trials: 200,
            seed: 0x5eed,
            limits: Limits {
                wall: Duration::from_secs(30),
                memory_mb: 2048,
            },
            symbolic: Some(crate::analysis::equiv::smt::Bounds::default()),
        },
        execute,
        llm_samples: None,
    };
    Ok(check(&a, &b, &opts))
}

/// One-paragraph summary for `window/showMessage`.
pub fn message(function: &str, r: &EquivReport, not_run: Option<&str>) -> String {
    let mut s = format!(
        "`{function}` vs git HEAD: {} (tier {}, method {}",
        r.verdict.name(),
        r.tier.map(|t| t.name()).unwrap_or("none"),
        r.method
    );
    if r.deterministic.trials > 0 {
        s.push_str(&format!(", {} trials", r.deterministic.trials));
    }
    s.push(')');
    if let Some(c) = &r.deterministic.counterexample {
        s.push_str(&format!(
            ". Counterexample: inputs {} give {} at HEAD and {} now",
            c["inputs"], c["a"], c["b"]
        ));
    }
    if let Some(why) = not_run {
        s.push_str(&format!(". Only the proof ran: {why}"));
    }
    s
}

/// The command's JSON result.
pub fn result_json(function: &str, r: &EquivReport, not_run: Option<&str>) -> Value {
    let mut v = r.to_json();
    v["status"] = json!("done");
    v["function"] = json!(function);
    v["executed"] = json!(not_run.is_none());
    v["notes"] = json!(r.deterministic.notes);
    v["message"] = json!(message(function, r, not_run));
    v
}

/// `crosscheck.checkEquivalence {uri, line, character?, version?}`.
pub async fn execute(
    state: &std::sync::Arc<crate::lsp::server::State>,
    a: &Value,
) -> tower_lsp_server::jsonrpc::Result<Value> {
    use crate::lsp::server::lock;
    use tower_lsp_server::ls_types::MessageType;
    let uri = a
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            tower_lsp_server::jsonrpc::Error::invalid_params(
                "crosscheck.checkEquivalence needs `uri`",
            )
        })?
        .to_string();
    let line0 = a.get("line").and_then(Value::as_u64).unwrap_or(0) as usize;
    let doc = lock(&state.docs)
        .get(&uri)
        .map(|d| (d.version, d.language, d.text().to_string(), d.parsed()));
    let Some((version, Some(language), text, Some(parsed))) = doc else {
        return Ok(
            json!({"status": "failed", "message": "the document is not open or not analysed"}),
        );
    };
    let Some(path) = crate::lsp::workspace::file_path(&uri) else {
        return Ok(json!({"status": "failed", "message": "not a file on disk"}));
    };
    let head = match head_text_cached(&path).await {
        Ok(h) => h,
        Err(e) => return Ok(json!({"status": "failed", "message": e})),
    };
    let Some((function, start_line)) = changed_function(&parsed, line0 + 1, &head) else {
        return Ok(json!({
            "status": "unchanged",
            "message": "no function here differs from its version at git HEAD",
        }));
    };
    let settings = state.settings_for_uri(&uri).1;
    let allowed = execution_allowed(&settings, untrusted_workspace_from_env());
    let execute = allowed.is_ok();
    let (p, f) = (path.clone(), function.clone());
    let report = tokio::task::spawn_blocking(move || {
        compare_with_head(&p, language, text, head, &f, start_line, execute)
    })
    .await
    .unwrap_or_else(|e| Err(format!("equivalence task failed: {e}")));
    // The buffer moved on while the code ran: the verdict is about text that is gone.
    if lock(&state.docs).version(&uri) != Some(version) {
        return Ok(json!({
            "status": "stale",
            "message": "the document changed during the check; run it again",
        }));
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => return Ok(json!({"status": "failed", "message": e})),
    };
    let not_run = allowed.err();
    let v = result_json(&function, &report, not_run.as_deref());
    let typ = if report.verdict == crate::analysis::equiv::Verdict::NotEquivalent {
        MessageType::WARNING
    } else {
        MessageType::INFO
    };
    state
        .client
        .show_message(typ, v["message"].as_str().unwrap_or_default())
        .await;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y\n";

    #[test]
    fn a_changed_function_is_found_by_qualified_name() {
        let buf = ParsedFile::parse(
            Language::Python,
            "def f(x):\n    return 1 + x\n\n\ndef g(y):\n    return y\n",
        );
        assert_eq!(changed_function(&buf, 2, HEAD), Some(("f".into(), 1)));
        assert_eq!(changed_function(&buf, 6, HEAD), None, "g is unchanged");
    }

    #[test]
    fn a_new_function_has_no_head_version() {
        let buf = ParsedFile::parse(Language::Python, "def h(x):\n    return x\n");
        assert_eq!(changed_function(&buf, 1, HEAD), None);
    }

    #[test]
    fn execution_needs_the_user_setting_and_a_trusted_workspace() {
        let mut s = Settings::default();
        assert!(execution_allowed(&s, false)
            .unwrap_err()
            .contains("allow_code_execution"));
        s.allow_code_execution = true;
        assert!(execution_allowed(&s, false).is_ok());
        assert!(execution_allowed(&s, true)
            .unwrap_err()
            .contains("not trusted"));
    }
}
