//! Spec: the `crosscheck ask` binary against a mock OpenAI-compatible server. A good answer
//! exits 0 with the cross-check on stdout; garbage, truncated JSON, 429, 500 and a server
//! that never answers each give a clear error on stderr within the configured timeout and
//! exit code 1, never a panic.

use crate::crosscheck_support;

use crosscheck::crosscheck::task::Task;
use crosscheck_support::{fixture_path, perfect_answer, question};
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs the binary with an isolated user config (nothing from the real environment).
fn run_ask(config: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, config).unwrap();
    let file = fixture_path("inventory.py");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
    cmd.args(extra)
        .args(["ask", "--task", "cfg", "--function", "total"])
        .arg(&file)
        .env("CROSSCHECK_CONFIG", &cfg)
        .env("HOME", dir.path())
        // Each run has its own store, so no run is answered from another's cached answer
        // (whatever store the environment names).
        .env("CROSSCHECK_DATA_DIR", dir.path().join("data"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CROSSCHECK_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "CROSSCHECK_LLM_PROVIDER",
        "CROSSCHECK_LLM_BASE_URL",
        "CROSSCHECK_LLM_MODEL",
        "CROSSCHECK_LLM_API_KEY_ENV",
        "CROSSCHECK_LLM_TIMEOUT_SECS",
    ] {
        cmd.env_remove(var);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn crosscheck");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).ok();
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            panic!("crosscheck ask hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
        elapsed: start.elapsed(),
    }
}

fn config(uri: &str) -> String {
    format!(
        "[llm]\nbase_url = \"{uri}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 2\nretries = 1\nbackoff_base_ms = 10\nbackoff_max_ms = 20\n"
    )
}

fn openai(content: &str, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "x",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
    }))
}

async fn server_with(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

async fn ask_against(
    response: ResponseTemplate,
    extra: &'static [&'static str],
) -> (Run, MockServer) {
    let server = server_with(response).await;
    let cfg = config(&server.uri());
    let run = tokio::task::spawn_blocking(move || run_ask(&cfg, extra))
        .await
        .unwrap();
    (run, server)
}

fn assert_clean_failure(run: &Run, needle: &str) {
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("crosscheck: error:") && run.stderr.contains(needle),
        "expected {needle:?} in stderr: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_answer_exits_0_with_the_cross_check_on_stdout() {
    let answer = perfect_answer(&question("inventory.py", Task::Cfg, "total"));
    let (run, server) = ask_against(openai(&answer, "stop"), &["-v"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).expect("JSON on stdout");
    assert_eq!(out["pass"], true);
    assert_eq!(out["tier"], "confirmed");
    assert_eq!(
        out["model"],
        format!("openai:test-model@{}/v1", server.uri())
    );
    assert!(
        run.stderr.contains("cache: total: 0 hit(s), 1 miss(es)"),
        "{}",
        run.stderr
    );
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let body: Value = requests[0].body_json().unwrap();
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert!(body["response_format"]["json_schema"]["schema"]["properties"]["nodes"].is_object());
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("   1 | def total(items):"), "{user}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_body_is_a_clear_error() {
    let (run, _s) = ask_against(
        ResponseTemplate::new(200).set_body_string("<html>gateway says hi</html>"),
        &[],
    )
    .await;
    assert_clean_failure(&run, "cannot read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_json_body_is_a_clear_error() {
    let (run, _s) = ask_against(
        ResponseTemplate::new(200)
            .set_body_string(r#"{"choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"nodes\": [{\"id\""#),
        &[],
    )
    .await;
    assert_clean_failure(&run, "cannot read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_answer_is_a_clear_error() {
    let (run, _s) = ask_against(openai("I am sorry, I cannot draw graphs.", "stop"), &[]).await;
    assert_clean_failure(&run, "no usable answer from the LLM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_cut_off_at_the_token_limit_is_a_clear_error() {
    let (run, _s) = ask_against(
        openai(r#"{"nodes": [{"id": "n0", "type": "ent"#, "length"),
        &[],
    )
    .await;
    assert_clean_failure(&run, "cut off at the token limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limiting_is_a_clear_error() {
    let (run, server) = ask_against(
        ResponseTemplate::new(429).insert_header("retry-after", "0"),
        &[],
    )
    .await;
    assert_clean_failure(&run, "rate limit");
    // One retry is configured: two attempts, then the error.
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_error_is_a_clear_error() {
    let (run, _s) = ask_against(ResponseTemplate::new(500).set_body_string("boom"), &[]).await;
    assert_clean_failure(&run, "HTTP 500");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_fails_within_the_timeout() {
    let answer = perfect_answer(&question("inventory.py", Task::Cfg, "total"));
    let (run, _s) = ask_against(
        openai(&answer, "stop").set_delay(Duration::from_secs(60)),
        &[],
    )
    .await;
    assert_clean_failure(&run, "did not answer within");
    // timeout_secs = 2: well under the 60 s the server would take.
    assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);
}

#[test]
fn no_configured_llm_is_a_clear_error() {
    let run = run_ask("[llm]\nmodel = \"m\"\n", &[]);
    assert_clean_failure(&run, "no LLM is configured");
    let run = run_ask(
        "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n[crosscheck]\nsampels = 2\n",
        &[],
    );
    assert_clean_failure(&run, "sampels");
    assert!(Path::new(&fixture_path("inventory.py")).exists());
}
