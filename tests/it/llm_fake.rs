//! Spec: the scripted FakeClient and the budget wrapper, as the product's tests will use them.

use crosscheck::llm::{
    Budget, BudgetScope, BudgetedClient, ChatRequest, ChatResponse, FakeClient, FakeReply,
    LlmClient, LlmError,
};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn response(text: &str, prompt: u64, completion: u64) -> ChatResponse {
    ChatResponse {
        text: text.to_string(),
        model: "scripted".to_string(),
        prompt_tokens: prompt,
        completion_tokens: completion,
        tokens_estimated: false,
        latency_ms: 0,
        from_cache: false,
        truncated: false,
        attempts: 1,
    }
}

#[tokio::test]
async fn scripted_replies_come_in_order_and_every_request_is_recorded() {
    let fake = FakeClient::with_replies([FakeReply::text("first"), FakeReply::text("second")]);
    let a = fake
        .complete(ChatRequest::new("sys", "q1").with_tag("cfg"))
        .await
        .expect("a");
    let b = fake
        .complete(ChatRequest::new("sys", "q2"))
        .await
        .expect("b");
    assert_eq!((a.text.as_str(), b.text.as_str()), ("first", "second"));
    assert_eq!(a.model, "fake");
    assert!(a.tokens_estimated);
    assert_eq!(
        a.prompt_tokens, 2,
        "chars/4 of \"sys\" + \"q1\", each rounded up"
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].user, "q1");
    assert_eq!(reqs[0].tag.as_deref(), Some("cfg"));
    assert_eq!(reqs[1].user, "q2");
    assert_eq!(fake.remaining(), 0);
}

#[tokio::test]
async fn running_out_of_script_is_an_error_not_a_hang() {
    let fake = FakeClient::new();
    let e = fake.complete(ChatRequest::new("", "q")).await.unwrap_err();
    assert!(matches!(e, LlmError::BadResponse(m) if m.contains("no scripted reply")));
    assert_eq!(fake.request_count(), 1, "failed calls are recorded too");
}

#[tokio::test]
async fn responder_function_answers_from_the_request() {
    let fake = FakeClient::from_fn(|req| {
        if req.user.contains("taint") {
            FakeReply::text("{\"verdict\": \"Yes\"}")
        } else {
            FakeReply::Error(LlmError::Http {
                status: 500,
                body_snippet: "scripted".into(),
            })
        }
    })
    .with_model("m1");
    fake.push_text("queued first");
    assert_eq!(
        fake.complete(ChatRequest::new("", "taint?"))
            .await
            .expect("q")
            .text,
        "queued first"
    );
    assert_eq!(
        fake.complete(ChatRequest::new("", "taint?"))
            .await
            .expect("f")
            .text,
        "{\"verdict\": \"Yes\"}"
    );
    assert!(fake.complete(ChatRequest::new("", "cfg?")).await.is_err());
    assert_eq!(fake.model_id(), "fake:m1");
}

#[tokio::test]
async fn scripted_errors_and_full_responses_pass_through() {
    let fake = FakeClient::new();
    fake.push_error(LlmError::RateLimited { retry_after: None });
    fake.push(FakeReply::Response(response("exact", 10, 20)));
    assert_eq!(
        fake.complete(ChatRequest::new("", "q")).await,
        Err(LlmError::RateLimited { retry_after: None })
    );
    assert_eq!(
        fake.complete(ChatRequest::new("", "q")).await,
        Ok(response("exact", 10, 20))
    );
}

#[tokio::test]
async fn delayed_replies_wait_and_report_the_delay_as_latency() {
    let fake =
        FakeClient::with_replies([FakeReply::text("slow").delayed(Duration::from_millis(80))]);
    let t0 = Instant::now();
    let r = fake.complete(ChatRequest::new("", "q")).await.expect("r");
    assert!(t0.elapsed() >= Duration::from_millis(80));
    assert_eq!(r.latency_ms, 80);
}

#[tokio::test]
async fn hanging_reply_stays_pending_until_dropped() {
    let fake = FakeClient::with_replies([FakeReply::Hang, FakeReply::text("next")]);
    let r = tokio::time::timeout(
        Duration::from_millis(100),
        fake.complete(ChatRequest::new("", "q")),
    )
    .await;
    assert!(r.is_err(), "never answers");
    assert_eq!(fake.request_count(), 1);
    assert_eq!(
        fake.complete(ChatRequest::new("", "q"))
            .await
            .expect("r")
            .text,
        "next"
    );
}

#[tokio::test]
async fn fake_timeout_turns_hangs_and_long_delays_into_timeout_errors() {
    let t = Duration::from_millis(50);
    let fake = FakeClient::with_replies([
        FakeReply::Hang,
        FakeReply::text("too slow").delayed(Duration::from_secs(60)),
        FakeReply::text("in time").delayed(Duration::from_millis(10)),
    ])
    .with_timeout(t);
    let t0 = Instant::now();
    assert_eq!(
        fake.complete(ChatRequest::new("", "1")).await,
        Err(LlmError::Timeout { after: t })
    );
    assert_eq!(
        fake.complete(ChatRequest::new("", "2")).await,
        Err(LlmError::Timeout { after: t })
    );
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(
        fake.complete(ChatRequest::new("", "3"))
            .await
            .expect("r")
            .text,
        "in time"
    );
}

#[tokio::test]
async fn budgeted_client_refuses_calls_once_the_session_budget_is_spent() {
    let fake = Arc::new(FakeClient::with_replies([
        FakeReply::Response(response("a", 40, 20)),
        FakeReply::Response(response("b", 40, 20)),
        FakeReply::Response(response("c", 1, 1)),
    ]));
    let budget = Arc::new(Mutex::new(Budget::new(Some(100), None)));
    let client = BudgetedClient::new(Arc::clone(&fake), Arc::clone(&budget));
    assert!(client.complete(ChatRequest::new("", "1")).await.is_ok());
    assert!(
        client.complete(ChatRequest::new("", "2")).await.is_ok(),
        "the call that crosses the limit finishes"
    );
    let e = client
        .complete(ChatRequest::new("", "3"))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        LlmError::BudgetExceeded {
            scope: BudgetScope::Session,
            used: 120,
            limit: 100
        }
    );
    assert!(e.to_string().contains("llm.session_token_budget"), "{e}");
    assert_eq!(
        fake.request_count(),
        2,
        "a refused call never reaches the model"
    );
}

static DAY: AtomicI64 = AtomicI64::new(20_000);

fn test_day() -> i64 {
    DAY.load(Ordering::SeqCst)
}

#[tokio::test]
async fn daily_budget_reopens_on_the_next_day_and_failures_cost_nothing() {
    let fake = FakeClient::from_fn(|_| FakeReply::Response(response("x", 5, 5)));
    fake.push_error(LlmError::Connect("down".into()));
    let budget = Arc::new(Mutex::new(Budget::new(None, Some(10))));
    let client: Arc<dyn LlmClient> =
        Arc::new(BudgetedClient::new(fake, Arc::clone(&budget)).with_day_source(test_day));
    assert!(client.complete(ChatRequest::new("", "q")).await.is_err());
    assert_eq!(budget.lock().map(|b| b.session_used()).unwrap_or(99), 0);
    assert!(client.complete(ChatRequest::new("", "q")).await.is_ok());
    let e = client
        .complete(ChatRequest::new("", "q"))
        .await
        .unwrap_err();
    assert!(matches!(
        e,
        LlmError::BudgetExceeded {
            scope: BudgetScope::Day,
            used: 10,
            limit: 10
        }
    ));
    DAY.fetch_add(1, Ordering::SeqCst);
    assert!(client.complete(ChatRequest::new("", "q")).await.is_ok());
}
