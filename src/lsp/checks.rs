//! [`EngineChecker`]: the server's [`Checker`]. Every background question goes through the
//! one cross-check engine (`crosscheck::engine::Engine`): prompts as data (`prompts/`),
//! samples and self-consistency, the jury of the configured models, the answer cache keyed as
//! in `crosscheck ask`, Layer-1 scores, tiers and telemetry records. Nothing here reads an
//! answer or decides a tier itself: it converts the engine's outcome into what the server
//! keeps ([`CheckOutcome`]).
//!
//! [`EngineChecker::cached`] runs the same check against cache-only stand-ins of the models:
//! when every sample is in the answer cache the engine completes without a request (polled
//! once, it never waits), so a restart or an unchanged question costs nothing and shows at
//! once.

use super::scheduler::{BoxFuture, CheckError, CheckJob, CheckOutcome, Checker, ModelVerdict};
use crate::crosscheck::cache::AnswerCache;
use crate::crosscheck::engine::{
    CheckError as EngineError, CheckOutcome as EngineOutcome, CheckSettings, Engine, FLOW_FACT,
};
use crate::crosscheck::facts::Reference;
use crate::crosscheck::prompts::PromptLibrary;
use crate::crosscheck::record::{CacheBackend, Tier};
use crate::crosscheck::tier::LlmStance;
use crate::llm::{ChatRequest, ChatResponse, LlmClient, LlmError};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// At most this many missed facts are kept per outcome.
const MAX_MISSED: usize = 50;

/// The cross-check engine as the server's checker.
pub struct EngineChecker {
    clients: Vec<Arc<dyn LlmClient>>,
    /// Cache-only stand-ins with the same model ids (see the module docs).
    probes: Vec<Arc<dyn LlmClient>>,
    prompts: Arc<PromptLibrary>,
    cache: Arc<AnswerCache>,
    settings: Arc<CheckSettings>,
}

impl EngineChecker {
    /// `clients`: one model, or several for a jury. `backend`: the persistent answer cache
    /// (the store), shared with `crosscheck ask`.
    pub fn new(
        clients: Vec<Arc<dyn LlmClient>>,
        prompts: PromptLibrary,
        backend: Option<Arc<dyn CacheBackend>>,
        settings: CheckSettings,
    ) -> EngineChecker {
        let probes = clients
            .iter()
            .map(|c| {
                Arc::new(CacheOnly {
                    model: c.model_id(),
                }) as Arc<dyn LlmClient>
            })
            .collect();
        let mut settings = settings;
        // The editor never bypasses the cache: `fresh` is for measuring instability.
        settings.fresh = false;
        EngineChecker {
            clients,
            probes,
            prompts: Arc::new(prompts),
            cache: Arc::new(AnswerCache::new(backend)),
            settings: Arc::new(settings),
        }
    }
}

/// A model that answers nothing: any request fails at once.
struct CacheOnly {
    model: String,
}

impl LlmClient for CacheOnly {
    fn complete(
        &self,
        _req: ChatRequest,
    ) -> crate::llm::BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async { Err(LlmError::NotConfigured("not in the answer cache".into())) })
    }

    fn model_id(&self) -> String {
        self.model.clone()
    }
}

/// Polls a future once; `None` when it is not ready.
fn poll_once<F: Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

fn map_error(e: EngineError) -> CheckError {
    match e {
        EngineError::Llm(e) => match e {
            LlmError::NotConfigured(m) => CheckError::NotConfigured(m),
            e @ LlmError::Connect(_) => CheckError::Unreachable(e.to_string()),
            e @ LlmError::Timeout { .. } => CheckError::Slow(e.to_string()),
            e if e.is_transient() => CheckError::Transient(e.to_string()),
            other => CheckError::Failed(other.to_string()),
        },
        other => CheckError::Failed(other.to_string()),
    }
}

fn verdict_word(llm: &Value) -> Option<String> {
    llm.get("verdict")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// What the server keeps of an engine outcome (pure).
pub fn convert(o: EngineOutcome, flow: bool) -> CheckOutcome {
    let models: Vec<ModelVerdict> = o
        .models
        .iter()
        .map(|m| ModelVerdict {
            model: m.model.clone(),
            verdict: if flow {
                verdict_word(&m.llm).unwrap_or_else(|| "unknown".to_string())
            } else if m.pass {
                "pass".to_string()
            } else {
                "fail".to_string()
            },
            stable: m.stable,
            samples: m.samples,
            instability: m.instability,
            reasoning: m.reasoning.clone(),
            errors: m.errors.clone(),
        })
        .collect();
    let stance = if flow {
        o.facts
            .iter()
            .find(|f| f.fact == FLOW_FACT)
            .map_or(LlmStance::Failed, |f| f.llm)
    } else if o.tier == Tier::Confirmed {
        LlmStance::Agrees
    } else if models.iter().all(|m| !m.stable) {
        LlmStance::Unstable
    } else {
        LlmStance::Disagrees
    };
    let verdict = if flow {
        if stance == LlmStance::Agrees {
            "yes".to_string()
        } else {
            // The first stable model's answer (no or unknown), else unknown.
            models
                .iter()
                .find(|m| m.stable)
                .map_or("unknown".to_string(), |m| m.verdict.clone())
        }
    } else if o.pass {
        "pass".to_string()
    } else {
        "fail".to_string()
    };
    let tier = if flow {
        o.facts
            .iter()
            .find(|f| f.fact == FLOW_FACT)
            .map_or(Tier::AnalyzerOnly, |f| f.tier)
    } else {
        o.tier
    };
    let template = format!(
        "{}@{}",
        o.template.get("id").and_then(Value::as_str).unwrap_or("?"),
        o.template
            .get("version")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    );
    let cached = o.cache.get("misses").and_then(Value::as_u64) == Some(0);
    CheckOutcome {
        task: o.task.name().to_string(),
        verdict,
        stance,
        tier,
        model: o.model.clone(),
        samples: o.samples,
        instability: o.instability,
        models,
        template,
        cached,
        scores: o.scores.clone(),
        missed: o
            .facts
            .iter()
            .filter(|f| f.tier != Tier::Confirmed)
            .take(MAX_MISSED)
            .map(|f| f.fact.clone())
            .collect(),
        claims: o.claims.iter().map(|c| (c.claim.clone(), c.tier)).collect(),
        errors: o.errors.clone(),
        records: o.records,
    }
}

/// The outcome of a question whose answers could not be read: the finding or facts stay
/// analyzer-only (stance `failed`), and the failure is recorded.
fn unanswered(
    job: &CheckJob,
    message: String,
    records: Vec<crate::crosscheck::record::CrossCheckRecord>,
    clients: &[Arc<dyn LlmClient>],
) -> CheckOutcome {
    let models: Vec<String> = clients.iter().map(|c| c.model_id()).collect();
    CheckOutcome {
        task: job.task().name().to_string(),
        verdict: "unknown".to_string(),
        stance: LlmStance::Failed,
        tier: Tier::AnalyzerOnly,
        model: if models.len() == 1 {
            models[0].clone()
        } else {
            format!("jury({})", models.join(", "))
        },
        samples: records.iter().map(|r| r.samples.len()).max().unwrap_or(0),
        instability: 1.0,
        models: Vec::new(),
        template: String::new(),
        cached: false,
        scores: Default::default(),
        missed: Vec::new(),
        claims: Vec::new(),
        errors: vec![format!("no usable answer from the LLM: {message}")],
        records,
    }
}

impl Checker for EngineChecker {
    fn id(&self) -> String {
        let models: Vec<String> = self.clients.iter().map(|c| c.model_id()).collect();
        format!("engine|{}", models.join(","))
    }

    fn cached(&self, job: &CheckJob) -> Option<CheckOutcome> {
        let engine = Engine {
            prompts: &self.prompts,
            cache: &self.cache,
            settings: &self.settings,
            sink: None,
        };
        let flow = matches!(job.question.reference, Reference::Flow { .. });
        let outcome = poll_once(engine.check(&self.probes, &job.question, 0))?.ok()?;
        let complete = outcome.cache.get("misses").and_then(Value::as_u64) == Some(0)
            && outcome.models.iter().all(|m| m.errors.is_empty());
        if !complete {
            return None;
        }
        let mut o = convert(outcome, flow);
        // A cached answer is not a new cross-check: it leaves no record.
        o.records.clear();
        Some(o)
    }

    fn check(&self, job: CheckJob) -> BoxFuture<Result<CheckOutcome, CheckError>> {
        let clients = self.clients.clone();
        let prompts = Arc::clone(&self.prompts);
        let cache = Arc::clone(&self.cache);
        let settings = Arc::clone(&self.settings);
        Box::pin(async move {
            let engine = Engine {
                prompts: &prompts,
                cache: &cache,
                settings: &settings,
                sink: None,
            };
            let flow = matches!(job.question.reference, Reference::Flow { .. });
            match engine.check(&clients, &job.question, 0).await {
                Ok(outcome) => Ok(convert(outcome, flow)),
                // Answered, but unreadably: an outcome that confirms nothing, recorded.
                Err(EngineError::Unreadable { message, records }) => {
                    Ok(unanswered(&job, message, records, &clients))
                }
                Err(e) => Err(map_error(e)),
            }
        })
    }
}
