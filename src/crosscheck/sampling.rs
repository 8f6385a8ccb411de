//! One LLM sample, drawn the same way by the cross-check engine (`check`, `ask`, the
//! evaluation's engine tasks), `flaky` and `eval`'s label questions. (`equiv`'s own sampling
//! in `exec` and the language server's function check build their requests themselves.)
//!
//! Sample `i` of a rendered prompt has a content-addressed cache key: task, template id,
//! version and fingerprint, model, temperature, seed, token limit, schema name, sample index,
//! input hash and prompt hash. Unless fresh answers are asked for, a cached answer is served.
//! Otherwise the request carries the schema (strict or not), seed `settings.seed + i`, a
//! temperature (at least 0.01) only when several samples are drawn, the token limit and the
//! caller's tag, and the call runs within the per-call timeout. Callers decide which fresh
//! answers are worth caching (readable ones) and [`Sampler::remember`] them, so an unreadable
//! answer is asked again next time.

use super::cache::{cache_key, AnswerCache, CacheKeyParts, CachedAnswer};
use super::engine::CheckSettings;
use super::prompts::RenderedPrompt;
use super::task::Task;
use crate::llm::{ChatRequest, ChatResponse, LlmClient, LlmError};

/// What [`Sampler::draw`] got for one sample.
#[derive(Debug, Clone)]
pub enum Drawn {
    /// Served from the answer cache (no request made).
    Cached(CachedAnswer),
    /// A fresh answer from the model.
    Answered(ChatResponse),
}

/// Draws the samples of one prompt from one client.
pub struct Sampler<'a> {
    client: &'a dyn LlmClient,
    settings: &'a CheckSettings,
    cache: &'a AnswerCache,
    prompt: &'a RenderedPrompt,
    task: Task,
    input_hash: &'a str,
    prompt_hash: String,
    model: String,
    fresh: bool,
    tag: String,
}

impl<'a> Sampler<'a> {
    /// `fresh`: bypass the cache for reading and writing (on top of `settings.fresh`); `tag`
    /// labels the requests in logs and usage records.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        client: &'a dyn LlmClient,
        settings: &'a CheckSettings,
        cache: &'a AnswerCache,
        prompt: &'a RenderedPrompt,
        task: Task,
        input_hash: &'a str,
        fresh: bool,
        tag: String,
    ) -> Self {
        Sampler {
            client,
            settings,
            cache,
            prompt,
            task,
            input_hash,
            prompt_hash: prompt.text_hash(),
            model: client.model_id(),
            fresh: fresh || settings.fresh,
            tag,
        }
    }

    /// How many samples the settings ask for (at least one).
    pub fn samples(&self) -> usize {
        self.settings.samples_for(self.task)
    }

    /// The client's model id.
    pub fn model(&self) -> &str {
        &self.model
    }

    fn temperature(&self) -> Option<f32> {
        (self.samples() > 1).then_some(self.settings.sample_temperature.max(0.01))
    }

    fn seed(&self, i: usize) -> u64 {
        self.settings.seed.wrapping_add(i as u64)
    }

    fn key(&self, i: usize) -> String {
        cache_key(&CacheKeyParts {
            task: self.task.name(),
            template_id: &self.prompt.template_id,
            template_version: self.prompt.template_version,
            template_fingerprint: &self.prompt.fingerprint,
            model: &self.model,
            temperature: self.temperature(),
            seed: Some(self.seed(i)),
            max_tokens: self.settings.max_tokens,
            schema_name: &self.prompt.schema_name,
            sample: i,
            input_hash: self.input_hash,
            prompt_hash: &self.prompt_hash,
        })
    }

    /// Sample `i`: from the cache unless fresh, else asked of the model (within the per-call
    /// timeout).
    pub async fn draw(&self, i: usize) -> Result<Drawn, LlmError> {
        if !self.fresh {
            let cached = self.cache.get(&self.key(i));
            tracing::debug!(task = self.task.name(), model = %self.model, sample = i, hit = cached.is_some(), "llm cache lookup");
            if let Some(c) = cached {
                return Ok(Drawn::Cached(c));
            }
        }
        let prompt = self.prompt;
        let mut req = ChatRequest::new(prompt.system.clone(), prompt.user.clone())
            .with_schema(
                &prompt.schema_name,
                prompt.schema.clone(),
                self.settings.strict_schema,
            )
            .with_seed(self.seed(i))
            .with_tag(self.tag.clone());
        if let Some(t) = self.temperature() {
            req = req.with_temperature(t);
        }
        if let Some(m) = self.settings.max_tokens {
            req = req.with_max_tokens(m);
        }
        let resp = match self.settings.call_timeout {
            Some(d) => match tokio::time::timeout(d, self.client.complete(req)).await {
                Ok(r) => r,
                Err(_) => Err(LlmError::Timeout { after: d }),
            },
            None => self.client.complete(req).await,
        }?;
        Ok(Drawn::Answered(resp))
    }

    /// Stores an answer to sample `i` in the cache. Callers pass answers the model just gave
    /// (a [`Drawn::Answered`]); nothing is stored when the cache is bypassed (`fresh`).
    pub fn remember(&self, i: usize, answer: &CachedAnswer) {
        if !self.fresh {
            self.cache.put(&self.key(i), answer);
        }
    }
}

impl CachedAnswer {
    /// The cacheable part of a model's response.
    pub fn from_response(resp: &ChatResponse) -> Self {
        CachedAnswer {
            text: resp.text.clone(),
            model: resp.model.clone(),
            prompt_tokens: resp.prompt_tokens,
            completion_tokens: resp.completion_tokens,
            latency_ms: resp.latency_ms,
        }
    }
}
