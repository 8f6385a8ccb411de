//! [`FakeClient`]: a scripted [`LlmClient`] for tests of the whole product.
//!
//! Replies come from a FIFO queue first, then from an optional responder function, else the
//! call fails with a [`LlmError::BadResponse`] saying the script ran out. Every request is
//! recorded (in call order) before it is answered. Replies can be delayed, fail, or never
//! come; an optional timeout turns waits longer than it into [`LlmError::Timeout`], like the
//! real client. Responses are deterministic: `latency_ms` is the scripted delay, token counts
//! are `chars / 4` estimates (flagged) unless a full [`ChatResponse`] is scripted.

use crate::llm::{estimate_tokens, BoxFuture, ChatRequest, ChatResponse, LlmClient, LlmError};
use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

/// One scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum FakeReply {
    /// Answer with this text.
    Text(String),
    /// Answer with this exact response.
    Response(ChatResponse),
    /// Fail with this error.
    Error(LlmError),
    /// Wait, then give the inner reply.
    Delayed(Duration, Box<FakeReply>),
    /// Never answer (the future stays pending until dropped or timed out).
    Hang,
}

impl FakeReply {
    pub fn text(t: impl Into<String>) -> FakeReply {
        FakeReply::Text(t.into())
    }

    pub fn delayed(self, d: Duration) -> FakeReply {
        FakeReply::Delayed(d, Box::new(self))
    }
}

type Responder = dyn Fn(&ChatRequest) -> FakeReply + Send + Sync;

/// The scripted client. Cheap to share behind an `Arc`.
pub struct FakeClient {
    queue: Mutex<VecDeque<FakeReply>>,
    responder: Option<Box<Responder>>,
    requests: Mutex<Vec<ChatRequest>>,
    model: String,
    timeout: Option<Duration>,
}

impl fmt::Debug for FakeClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeClient")
            .field("model", &self.model)
            .field("queued", &lock(&self.queue).len())
            .field("requests", &lock(&self.requests).len())
            .finish_non_exhaustive()
    }
}

impl Default for FakeClient {
    fn default() -> Self {
        FakeClient::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl FakeClient {
    /// An empty script: every call fails until replies are pushed.
    pub fn new() -> FakeClient {
        FakeClient {
            queue: Mutex::new(VecDeque::new()),
            responder: None,
            requests: Mutex::new(Vec::new()),
            model: "fake".to_string(),
            timeout: None,
        }
    }

    /// Replies given in order.
    pub fn with_replies(replies: impl IntoIterator<Item = FakeReply>) -> FakeClient {
        let c = FakeClient::new();
        lock(&c.queue).extend(replies);
        c
    }

    /// Answers every call not covered by the queue with `f(request)`.
    pub fn from_fn(f: impl Fn(&ChatRequest) -> FakeReply + Send + Sync + 'static) -> FakeClient {
        FakeClient {
            responder: Some(Box::new(f)),
            ..FakeClient::new()
        }
    }

    /// The model name reported in responses and in [`LlmClient::model_id`].
    pub fn with_model(mut self, model: impl Into<String>) -> FakeClient {
        self.model = model.into();
        self
    }

    /// Calls whose scripted wait exceeds `d` (or that hang) fail with [`LlmError::Timeout`]
    /// after `d`.
    pub fn with_timeout(mut self, d: Duration) -> FakeClient {
        self.timeout = Some(d);
        self
    }

    pub fn push(&self, reply: FakeReply) {
        lock(&self.queue).push_back(reply);
    }

    pub fn push_text(&self, text: impl Into<String>) {
        self.push(FakeReply::Text(text.into()));
    }

    pub fn push_error(&self, e: LlmError) {
        self.push(FakeReply::Error(e));
    }

    /// Every request received so far, in call order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        lock(&self.requests).clone()
    }

    pub fn request_count(&self) -> usize {
        lock(&self.requests).len()
    }

    /// Replies still queued.
    pub fn remaining(&self) -> usize {
        lock(&self.queue).len()
    }

    fn next_reply(&self, req: &ChatRequest) -> FakeReply {
        if let Some(r) = lock(&self.queue).pop_front() {
            return r;
        }
        match &self.responder {
            Some(f) => f(req),
            None => FakeReply::Error(LlmError::BadResponse(
                "fake client: no scripted reply left".to_string(),
            )),
        }
    }

    async fn play(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        lock(&self.requests).push(req.clone());
        let mut reply = self.next_reply(&req);
        let mut waited = Duration::ZERO;
        // Flatten nested delays iteratively (a script may nest them arbitrarily deep).
        loop {
            match reply {
                FakeReply::Delayed(d, inner) => {
                    waited = waited.saturating_add(d);
                    reply = *inner;
                }
                FakeReply::Hang => {
                    return match self.timeout {
                        Some(t) => {
                            tokio::time::sleep(t).await;
                            Err(LlmError::Timeout { after: t })
                        }
                        None => std::future::pending().await,
                    };
                }
                other => {
                    reply = other;
                    break;
                }
            }
        }
        if let Some(t) = self.timeout {
            if waited > t {
                tokio::time::sleep(t).await;
                return Err(LlmError::Timeout { after: t });
            }
        }
        if !waited.is_zero() {
            tokio::time::sleep(waited).await;
        }
        let latency_ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
        match reply {
            FakeReply::Text(text) => Ok(ChatResponse {
                prompt_tokens: estimate_tokens(&req.system) + estimate_tokens(&req.user),
                completion_tokens: estimate_tokens(&text),
                tokens_estimated: true,
                model: self.model.clone(),
                text,
                latency_ms,
                from_cache: false,
                truncated: false,
                attempts: 1,
            }),
            FakeReply::Response(r) => Ok(r),
            FakeReply::Error(e) => Err(e),
            FakeReply::Delayed(..) | FakeReply::Hang => Err(LlmError::BadResponse(
                "fake client: unreachable script state".to_string(),
            )),
        }
    }
}

impl LlmClient for FakeClient {
    fn complete(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(self.play(req))
    }

    fn model_id(&self) -> String {
        format!("fake:{}", self.model)
    }
}
