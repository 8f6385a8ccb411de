//! Spec: the HTTP client against mock servers (request shapes, retries, timeouts, secrecy).

use crosscheck::llm::answer::extract_json;
use crosscheck::llm::{ChatRequest, HttpClient, LlmClient, LlmError, LlmSettings, Provider};
use serde_json::{json, Value};
use std::io::Read;
use std::time::{Duration, Instant};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-test-0123456789abcdefSECRET";
const KEY_VAR: &str = "CROSSCHECK_TEST_KEY";

fn settings(base: &str, provider: Provider) -> LlmSettings {
    LlmSettings {
        provider,
        base_url: Some(format!("{base}/v1")),
        model: Some("test-model".to_string()),
        api_key_env: Some(KEY_VAR.to_string()),
        timeout_secs: 5,
        retries: 3,
        backoff_base_ms: 10,
        backoff_max_ms: 40,
        ..LlmSettings::default()
    }
}

fn client(s: LlmSettings) -> HttpClient {
    HttpClient::with_env(s, &|k| (k == KEY_VAR).then(|| KEY.to_string())).expect("client")
}

fn openai_ok(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "x",
        "model": "served-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    }))
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r: &Request| r.body_json::<Value>().unwrap_or(Value::Null))
        .collect()
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["Yes", "No"]}},
        "required": ["verdict"],
        "additionalProperties": false
    })
}

#[tokio::test]
async fn openai_request_carries_schema_seed_temperature_max_tokens_and_cache_prompt() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(openai_ok("{\"verdict\": \"Yes\"}"))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(settings(&server.uri(), Provider::OpenAi));
    let req = ChatRequest::new(
        "You are a Java static analyzer.",
        "Is b data-dependent on a?",
    )
    .with_schema("verdict", schema(), true)
    .with_seed(7)
    .with_temperature(0.25)
    .with_max_tokens(99);
    let resp = c.complete(req).await.expect("answer");
    assert_eq!(resp.text, "{\"verdict\": \"Yes\"}");
    assert_eq!(resp.model, "served-model");
    assert_eq!((resp.prompt_tokens, resp.completion_tokens), (11, 5));
    assert!(!resp.tokens_estimated && !resp.from_cache && !resp.truncated);
    assert_eq!(resp.attempts, 1);

    let sent = bodies(&server).await;
    let b = &sent[0];
    assert_eq!(b["model"], json!("test-model"));
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": "You are a Java static analyzer."})
    );
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": "Is b data-dependent on a?"})
    );
    assert_eq!(b["seed"], json!(7));
    assert_eq!(b["temperature"], json!(0.25));
    assert_eq!(b["max_tokens"], json!(99));
    assert_eq!(b["stream"], json!(false));
    assert_eq!(
        b["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema(), "strict": true}})
    );
    assert_eq!(
        b["cache_prompt"],
        json!(false),
        "loopback server: llama.cpp extensions on"
    );
}

#[tokio::test]
async fn settings_defaults_fill_unset_request_fields() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("ok"))
        .mount(&server)
        .await;
    let mut s = settings(&server.uri(), Provider::OpenAi);
    s.seed = Some(3);
    s.temperature = Some(0.5);
    s.max_tokens = Some(64);
    s.send_max_tokens = false;
    s.llama_cpp_compat = Some(false);
    client(s)
        .complete(ChatRequest::new("", "hi"))
        .await
        .expect("answer");
    let b = &bodies(&server).await[0];
    assert_eq!(b["seed"], json!(3));
    assert_eq!(b["temperature"], json!(0.5));
    assert!(b.get("max_tokens").is_none(), "send_max_tokens = false");
    assert!(b.get("cache_prompt").is_none(), "llama_cpp_compat = false");
    assert!(
        b.get("response_format").is_none(),
        "no schema, no response_format"
    );
    assert_eq!(
        b["messages"].as_array().map(Vec::len),
        Some(1),
        "empty system prompt omitted"
    );
}

#[tokio::test]
async fn missing_usage_is_estimated_and_flagged() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"choices": [{"message": {"content": "abcdefgh"}}]})),
        )
        .mount(&server)
        .await;
    let resp = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("1234", "5678"))
        .await
        .expect("answer");
    assert!(resp.tokens_estimated);
    assert_eq!((resp.prompt_tokens, resp.completion_tokens), (2, 2));
    assert_eq!(
        resp.model, "test-model",
        "falls back to the configured model"
    );
}

#[tokio::test]
async fn anthropic_request_uses_a_forced_tool_and_no_seed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [
                {"type": "text", "text": "Recording the answer."},
                {"type": "tool_use", "id": "tu_1", "name": "verdict", "input": {"verdict": "No"}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 20, "output_tokens": 9}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let mut s = settings(&server.uri(), Provider::Anthropic);
    s.seed = Some(99);
    let resp = client(s)
        .complete(
            ChatRequest::new("You are a C analyst.", "Are these equivalent?")
                .with_schema("verdict", schema(), true)
                .with_seed(5)
                .with_temperature(0.0)
                .with_max_tokens(300),
        )
        .await
        .expect("answer");
    assert_eq!(
        resp.text, r#"{"verdict":"No"}"#,
        "the tool input is the answer"
    );
    assert_eq!(resp.model, "claude-x");
    assert_eq!((resp.prompt_tokens, resp.completion_tokens), (20, 9));
    assert_eq!(
        extract_json(&resp.text).expect("json").value,
        json!({"verdict": "No"})
    );

    let b = &bodies(&server).await[0];
    assert_eq!(b["system"], json!("You are a C analyst."));
    assert_eq!(
        b["messages"],
        json!([{"role": "user", "content": "Are these equivalent?"}])
    );
    assert_eq!(b["max_tokens"], json!(300));
    assert_eq!(b["temperature"], json!(0.0));
    assert_eq!(b["tools"][0]["name"], json!("verdict"));
    assert_eq!(b["tools"][0]["input_schema"], schema());
    assert_eq!(b["tool_choice"], json!({"type": "tool", "name": "verdict"}));
    assert!(b.get("seed").is_none(), "Anthropic has no seed");
    assert!(b.get("cache_prompt").is_none() && b.get("response_format").is_none());
}

#[tokio::test]
async fn anthropic_plain_text_answer_and_mandatory_max_tokens() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "claude-x",
            "content": [{"type": "text", "text": "Yes."}, {"type": "text", "text": " Line 3."}],
            "stop_reason": "max_tokens",
            "usage": {"input_tokens": 1, "output_tokens": 2}
        })))
        .mount(&server)
        .await;
    let mut s = settings(&server.uri(), Provider::Anthropic);
    s.max_tokens = None;
    let resp = client(s)
        .complete(ChatRequest::new("", "q"))
        .await
        .expect("answer");
    assert_eq!(resp.text, "Yes. Line 3.");
    assert!(resp.truncated);
    let b = &bodies(&server).await[0];
    assert_eq!(b["max_tokens"], json!(4096));
    assert!(b.get("system").is_none() && b.get("tools").is_none());
}

#[tokio::test]
async fn rate_limit_429_honours_retry_after_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("fine"))
        .with_priority(2)
        .mount(&server)
        .await;
    let t0 = Instant::now();
    let resp = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .expect("answer after waiting");
    assert!(
        t0.elapsed() >= Duration::from_millis(950),
        "waited {:?}",
        t0.elapsed()
    );
    assert_eq!(resp.text, "fine");
    assert_eq!(resp.attempts, 2);
}

#[tokio::test]
async fn persistent_429_ends_as_rate_limited_after_the_retries() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .expect(3)
        .mount(&server)
        .await;
    let mut s = settings(&server.uri(), Provider::OpenAi);
    s.retries = 2;
    let e = client(s)
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        LlmError::RateLimited {
            retry_after: Some(Duration::ZERO)
        }
    );
}

#[tokio::test]
async fn retry_after_beyond_the_timeout_fails_at_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "3600"))
        .expect(1)
        .mount(&server)
        .await;
    let t0 = Instant::now();
    let e = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(
        e,
        LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(3600))
        }
    );
    assert!(e.to_string().contains("3600"), "{e}");
}

#[tokio::test]
async fn server_error_500_is_retried_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("recovered"))
        .with_priority(2)
        .mount(&server)
        .await;
    let resp = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .expect("answer");
    assert_eq!(resp.text, "recovered");
    assert_eq!(resp.attempts, 2);
}

#[tokio::test]
async fn persistent_503_gives_up_after_retries_with_the_status() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .expect(4)
        .mount(&server)
        .await;
    let e = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        LlmError::Http {
            status: 503,
            body_snippet: "overloaded".into()
        }
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_string("model not found"))
        .expect(1)
        .mount(&server)
        .await;
    let e = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert!(matches!(e, LlmError::Http { status: 404, .. }));
    assert!(e.to_string().contains("llm.base_url or llm.model"), "{e}");
}

#[tokio::test]
async fn garbage_body_is_a_bad_response() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>gateway</html>"))
        .expect(1)
        .mount(&server)
        .await;
    let e = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LlmError::BadResponse(m) if m.contains("<html>")),
        "{e:?}"
    );
    let e2 = {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"object": "list"})))
            .mount(&server)
            .await;
        client(settings(&server.uri(), Provider::OpenAi))
            .complete(ChatRequest::new("", "q"))
            .await
            .unwrap_err()
    };
    assert!(
        matches!(&e2, LlmError::BadResponse(m) if m.contains("choices")),
        "{e2:?}"
    );
}

#[tokio::test]
async fn truncated_json_answer_is_flagged_and_repaired() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"content": "```json\n{\"calls\": [\"parse\", \"emi"}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2048}
        })))
        .mount(&server)
        .await;
    let resp = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "list the calls"))
        .await
        .expect("answer");
    assert!(resp.truncated);
    let a = extract_json(&resp.text).expect("repairable");
    assert!(a.repaired);
    assert_eq!(a.value, json!({"calls": ["parse", "emi"]}));
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_within_timeout_plus_one_second() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("late").set_delay(Duration::from_secs(30)))
        .mount(&server)
        .await;
    let mut s = settings(&server.uri(), Provider::OpenAi);
    s.timeout_secs = 1;
    let t0 = Instant::now();
    let e = client(s)
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    let took = t0.elapsed();
    assert_eq!(
        e,
        LlmError::Timeout {
            after: Duration::from_secs(1)
        }
    );
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[tokio::test]
async fn the_api_key_never_appears_in_errors() {
    let server = MockServer::start().await;
    let echo = format!("{{\"error\": {{\"message\": \"Incorrect API key provided: {KEY}\"}}}}");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_string(echo.clone()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_string(echo))
        .mount(&server)
        .await;
    let mut errors = Vec::new();
    for p in [Provider::OpenAi, Provider::Anthropic] {
        let c = client(settings(&server.uri(), p));
        assert!(!format!("{c:?}").contains(KEY));
        errors.push(c.complete(ChatRequest::new("", "q")).await.unwrap_err());
    }
    // Unreachable server: the connection error text must not carry it either.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let mut s = settings(&format!("http://127.0.0.1:{dead}"), Provider::OpenAi);
    s.retries = 1;
    errors.push(
        client(s)
            .complete(ChatRequest::new("", "q"))
            .await
            .unwrap_err(),
    );
    assert!(matches!(errors[0], LlmError::Http { status: 401, .. }));
    assert!(matches!(errors[1], LlmError::BadResponse(_)));
    assert!(matches!(errors[2], LlmError::Connect(_)), "{:?}", errors[2]);
    for e in &errors {
        for text in [e.to_string(), format!("{e:?}")] {
            assert!(!text.contains(KEY), "key leaked: {text}");
            assert!(!text.contains("SECRET"), "part of the key leaked: {text}");
        }
    }
    assert!(errors[0].to_string().contains("[redacted]"));
}

#[tokio::test]
async fn reasoning_model_rejecting_temperature_is_retried_without_it_and_remembered() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"temperature": 0.0})))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
            "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"
        }})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("ok"))
        .expect(2)
        .mount(&server)
        .await;
    let c = client(settings(&server.uri(), Provider::OpenAi));
    let first = c.complete(ChatRequest::new("", "q")).await.expect("answer");
    assert_eq!(first.attempts, 2);
    let second = c
        .complete(ChatRequest::new("", "q2"))
        .await
        .expect("answer");
    assert_eq!(second.attempts, 1, "the adaptation is remembered");
    let sent = bodies(&server).await;
    assert!(sent[0].get("temperature").is_some());
    assert!(sent[1].get("temperature").is_none());
    assert!(sent[2].get("temperature").is_none());
    assert!(c.learned_adaptations().no_temperature);
}

#[tokio::test]
async fn max_tokens_rejection_switches_to_max_completion_tokens() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"max_tokens": 2048})))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            "param": "max_tokens", "code": "unsupported_parameter"
        }})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("ok"))
        .mount(&server)
        .await;
    client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .expect("answer");
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    assert!(sent[1].get("max_tokens").is_none());
    assert_eq!(sent[1]["max_completion_tokens"], json!(2048));
}

#[tokio::test]
async fn json_schema_rejection_falls_back_to_json_object() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(json!({"response_format": {"type": "json_schema"}})))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."
        }})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("{\"verdict\": \"No\"}"))
        .mount(&server)
        .await;
    let resp = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("sys", "q").with_schema("v", schema(), true))
        .await
        .expect("answer");
    assert_eq!(resp.attempts, 2);
    let sent = bodies(&server).await;
    assert_eq!(sent[1]["response_format"], json!({"type": "json_object"}));
    let system = sent[1]["messages"][0]["content"].as_str().unwrap_or("");
    assert!(
        system.contains("JSON Schema") && system.contains("\"enum\""),
        "{system}"
    );
}

#[tokio::test]
async fn an_unhelpful_400_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "This model's maximum context length is 8192 tokens."}}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let e = client(settings(&server.uri(), Provider::OpenAi))
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LlmError::Http { status: 400, body_snippet } if body_snippet.contains("8192"))
    );
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let mut s = settings(&format!("http://127.0.0.1:{port}"), Provider::OpenAi);
    s.retries = 2;
    s.api_key_env = None;
    let t0 = Instant::now();
    let e = HttpClient::with_env(s, &|_| None)
        .expect("client")
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert!(matches!(&e, LlmError::Connect(_)), "{e:?}");
    assert!(e.is_transient());
    assert!(
        e.to_string().starts_with("cannot reach the LLM server"),
        "{e}"
    );
    assert!(t0.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn max_concurrent_one_serialises_requests() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(openai_ok("x").set_delay(Duration::from_millis(200)))
        .mount(&server)
        .await;
    let mut s = settings(&server.uri(), Provider::OpenAi);
    s.max_concurrent = 1;
    let c = client(s);
    let t0 = Instant::now();
    let (a, b, d) = tokio::join!(
        c.complete(ChatRequest::new("", "1")),
        c.complete(ChatRequest::new("", "2")),
        c.complete(ChatRequest::new("", "3"))
    );
    assert!(a.is_ok() && b.is_ok() && d.is_ok());
    assert!(
        t0.elapsed() >= Duration::from_millis(590),
        "{:?}",
        t0.elapsed()
    );

    let mut s2 = settings(&server.uri(), Provider::OpenAi);
    s2.max_concurrent = 3;
    let c2 = client(s2);
    let t1 = Instant::now();
    let (a, b, d) = tokio::join!(
        c2.complete(ChatRequest::new("", "1")),
        c2.complete(ChatRequest::new("", "2")),
        c2.complete(ChatRequest::new("", "3"))
    );
    assert!(a.is_ok() && b.is_ok() && d.is_ok());
    assert!(
        t1.elapsed() < Duration::from_millis(590),
        "{:?}",
        t1.elapsed()
    );
}

/// Dropping the future must abort the exchange: the server sees the connection close.
#[tokio::test]
async fn dropping_the_future_closes_the_connection() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (tx, rx) = std::sync::mpsc::channel::<bool>();
    std::thread::spawn(move || {
        let Ok((mut sock, _)) = listener.accept() else {
            let _ = tx.send(false);
            return;
        };
        let _ = sock.set_read_timeout(Some(Duration::from_secs(5)));
        let mut buf = [0u8; 4096];
        // Read the request, never answer, and report whether the client hung up.
        let closed = loop {
            match sock.read(&mut buf) {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(_) => break false,
            }
        };
        let _ = tx.send(closed);
    });
    let mut s = settings(&format!("http://127.0.0.1:{port}"), Provider::OpenAi);
    s.timeout_secs = 30;
    let c = client(s);
    let outcome = tokio::time::timeout(
        Duration::from_millis(300),
        c.complete(ChatRequest::new("", "q")),
    )
    .await;
    assert!(
        outcome.is_err(),
        "the call was still pending and got dropped"
    );
    let closed = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(4)))
        .await
        .expect("join");
    assert_eq!(closed, Ok(true), "the server saw the connection close");
}

#[test]
fn unconfigured_client_is_refused_with_guidance() {
    let e = HttpClient::with_env(LlmSettings::default(), &|_| None).unwrap_err();
    assert!(matches!(e, LlmError::NotConfigured(_)));
    assert!(e.to_string().contains("CROSSCHECK_LLM_BASE_URL"), "{e}");
}
