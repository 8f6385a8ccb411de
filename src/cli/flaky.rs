//! `crosscheck flaky`: suspected root causes of flaky tests (Java, Python, JavaScript and TypeScript), from static
//! signals first and the LLM second.
//!
//! ```text
//! crosscheck flaky PATH... [--format json|text] [--no-llm] [--known-flaky] [--fresh] [--lang LANG]
//! ```
//!
//! # Output (JSON)
//!
//! ```text
//! {"tests": [{"name", "file", "line", "category": "<category>"|null, "tier", "evidence":
//!   [{"line", "why"}], "llm": {"category", "model", "agrees", "samples", "cached", "error"}|null,
//!   "scores": {"<category>": n}, "signals": [{"rule", "category", "line", "why", "context"}]}],
//!  "errors": [...]}
//! ```
//!
//! Tests in file order, files in path order. `category` is always the deterministic one
//! ([`crate::analysis::flaky`]); the LLM never changes it, so the hybrid cannot do worse than
//! `--no-llm`. `tier` comes from [`decide_tier`]:
//!
//! | static category | LLM answer | tier |
//! |---|---|---|
//! | C | C | `confirmed` |
//! | C | other, none, failed, not asked | `analyzer-only` |
//! | none (weak signals only) | D | `llm-only` (`category` stays null: never a hint) |
//! | none | none / failed / not asked | null |
//!
//! The LLM (settings as for `ask`: the user config and `CROSSCHECK_LLM_*`; samples, strategy
//! and shots from the `[crosscheck]` table) is asked, with the `flaky_root_cause` prompt, only
//! about suspected tests: some category scores at least [`ASK_MIN_SCORE`]; tests without
//! such a signal are never sent, except with `--known-flaky` (every test is then asked, and
//! any signal names a static category: the question is why, not whether).
//! Answers are cached in the per-user store exactly as `ask` caches them (same key scheme).
//! Without a configured LLM the deterministic results are printed with a note on stderr.
//! After a failed call (timeout, unreachable server) the remaining tests are not asked.
//!
//! # Exit codes
//!
//! 0 when every input file was read (whatever the verdicts and LLM failures), 1 when a path
//! could not be read or no Java/Python/JavaScript/TypeScript file was found.

use super::inputs::{collect_inputs, parse_language, InputArgs};
use super::OutputFormat;
use crate::analysis::flaky::{analyze_file, Category, FlakyOptions, FlakyTest};
use crate::crosscheck::answers::parse_flaky_category;
use crate::crosscheck::cache::{AnswerCache, CachedAnswer};
use crate::crosscheck::consistency::plurality;
use crate::crosscheck::engine::CheckSettings;
use crate::crosscheck::facts::function_text;
use crate::crosscheck::prompts::{load_override_dir, CodeUnit, FunctionInfo, PromptInputs};
use crate::crosscheck::prompts::{PromptLibrary, RenderedPrompt};
use crate::crosscheck::record::{CacheBackend, Tier};
use crate::crosscheck::sampling::{Drawn, Sampler};
use crate::crosscheck::task::Task;
use crate::crosscheck::tier::{decide_tier, Evidence, LlmStance, Origin};
use crate::llm::{HttpClient, LlmClient, LlmSettings};
use crate::syntax::functions::collect_functions;
use crate::syntax::parse::DEFAULT_MAX_FILE_BYTES;
use crate::syntax::{Cancel, Language, ParsedFile};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A test is sent to the LLM when some category scores at least this much (a single
/// weight-1 hint is not a suspicion).
pub const ASK_MIN_SCORE: u32 = 2;

#[derive(Debug, Clone, clap::Args)]
pub struct FlakyArgs {
    /// Test files or directories (Java, Python, JavaScript and TypeScript files are analysed).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// The deterministic analysis only (no LLM call).
    #[arg(long)]
    pub no_llm: bool,
    /// The tests are known to be flaky (CI reruns, a quarantine list): name the strongest
    /// suspected cause even from weak signals, and ask the LLM about every test.
    #[arg(long)]
    pub known_flaky: bool,
    /// Bypass the answer cache (neither read nor written).
    #[arg(long)]
    pub fresh: bool,
    /// Force the language (java or python).
    #[arg(long, value_name = "LANG", value_parser = parse_language)]
    pub lang: Option<Language>,
    /// Files larger than this many bytes are refused.
    #[arg(long, default_value_t = DEFAULT_MAX_FILE_BYTES, value_name = "BYTES")]
    pub max_file_size: usize,
}

/// What the hybrid needs besides the arguments (tests pass fake clients).
pub struct FlakyContext {
    /// `None`: deterministic only.
    pub client: Option<Arc<dyn LlmClient>>,
    pub settings: CheckSettings,
    pub prompts: PromptLibrary,
    pub backend: Option<Arc<dyn CacheBackend>>,
    pub cancel: Cancel,
}

/// The LLM's side for one test.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmView {
    pub category: Option<Category>,
    pub model: String,
    pub samples: usize,
    pub cached: bool,
    pub stance: LlmStance,
    pub error: Option<String>,
}

/// One test of the output.
#[derive(Debug, Clone, PartialEq)]
pub struct FlakyRow {
    pub file: String,
    pub test: FlakyTest,
    pub tier: Option<Tier>,
    pub llm: Option<LlmView>,
}

/// The whole result.
#[derive(Debug, Clone, Default)]
pub struct FlakyOutput {
    pub rows: Vec<FlakyRow>,
    pub errors: Vec<String>,
    pub exit_code: i32,
}

impl FlakyOutput {
    /// The JSON document of the module docs.
    pub fn to_json(&self) -> Value {
        let tests: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let llm = r.llm.as_ref().map(|l| {
                    json!({
                        "category": l.category.map(Category::name),
                        "model": l.model,
                        "agrees": l.stance == LlmStance::Agrees,
                        "samples": l.samples,
                        "cached": l.cached,
                        "error": l.error,
                    })
                });
                let scores: BTreeMap<&str, u32> =
                    r.test.scores.iter().map(|(c, s)| (c.name(), *s)).collect();
                let signals: Vec<Value> = r
                    .test
                    .signals
                    .iter()
                    .map(|s| {
                        json!({"rule": s.rule, "category": s.category.name(), "line": s.line,
                               "why": s.why, "weight": s.weight, "context": s.context})
                    })
                    .collect();
                json!({
                    "name": r.test.name,
                    "file": r.file,
                    "line": r.test.line,
                    "category": r.test.category.map(Category::name),
                    "tier": r.tier.map(Tier::name),
                    "evidence": r.test.evidence,
                    "llm": llm,
                    "scores": scores,
                    "signals": signals,
                })
            })
            .collect();
        json!({"tests": tests, "errors": self.errors})
    }

    /// A human-readable rendering.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for r in &self.rows {
            let Some(c) = r.test.category else {
                if let Some(l) = r.llm.as_ref().and_then(|l| l.category) {
                    let _ = writeln!(
                        s,
                        "{}:{}: {}: no static cause (LLM suggests {}, llm-only)",
                        r.file,
                        r.test.line,
                        r.test.name,
                        l.name()
                    );
                }
                continue;
            };
            let tier = r.tier.map(Tier::name).unwrap_or("analyzer-only");
            let _ = writeln!(
                s,
                "{}:{}: {}: flaky? {} ({tier})",
                r.file,
                r.test.line,
                r.test.name,
                c.name()
            );
            for e in &r.test.evidence {
                let _ = writeln!(s, "    line {}: {}", e.line, e.why);
            }
            if let Some(l) = &r.llm {
                match (&l.category, &l.error) {
                    (_, Some(e)) => {
                        let _ = writeln!(s, "    llm: failed ({e})");
                    }
                    (Some(lc), None) => {
                        let _ = writeln!(s, "    llm ({}): {}", l.model, lc.name());
                    }
                    (None, None) => {
                        let _ = writeln!(s, "    llm ({}): no category", l.model);
                    }
                }
            }
            let _ = writeln!(s, "    fix: {}", c.usual_fix());
        }
        let flagged = self
            .rows
            .iter()
            .filter(|r| r.test.category.is_some())
            .count();
        let _ = writeln!(
            s,
            "{} test(s), {} with a suspected root cause",
            self.rows.len(),
            flagged
        );
        for e in &self.errors {
            let _ = writeln!(s, "error: {e}");
        }
        s
    }
}

/// Runs the analysis (and the LLM when the context has a client).
pub fn flaky(args: &FlakyArgs, ctx: &FlakyContext) -> FlakyOutput {
    let mut out = FlakyOutput::default();
    let inputs = collect_inputs(&InputArgs {
        paths: args.paths.clone(),
        lang: args.lang,
        max_file_size: args.max_file_size,
    });
    for r in &inputs.refused {
        let why = r
            .errors
            .first()
            .map(|e| e.message.clone())
            .unwrap_or_else(|| "cannot read the file".into());
        out.errors.push(format!("{}: {why}", r.file));
    }
    let mut any = false;
    let runtime = match ctx.client {
        Some(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                out.errors
                    .push(format!("cannot start the async runtime: {e}"))
            })
            .ok(),
        None => None,
    };
    let cache = AnswerCache::new(if ctx.settings.fresh || args.fresh {
        None
    } else {
        ctx.backend.clone()
    });
    let mut llm_down: Option<String> = None;
    for source in inputs.sources {
        if !crate::analysis::flaky::supports(source.language) {
            continue;
        }
        any = true;
        let parsed = ParsedFile::parse_with_cancel(source.language, source.text, &ctx.cancel);
        let options = FlakyOptions {
            known_flaky: args.known_flaky,
            ..FlakyOptions::default()
        };
        let report = analyze_file(&parsed, &options, &ctx.cancel);
        for e in &report.errors {
            out.errors.push(format!("{}: {e}", source.path));
        }
        let functions = collect_functions(&parsed);
        for test in report.tests {
            let mut row = FlakyRow {
                file: source.path.clone(),
                tier: test.category.map(|_| {
                    decide_tier(&Evidence {
                        origin: Origin::Analyzer,
                        llm: LlmStance::NotAsked,
                        contradicted: false,
                    })
                }),
                test,
                llm: None,
            };
            let suspected =
                args.known_flaky || row.test.scores.values().any(|s| *s >= ASK_MIN_SCORE);
            if let (Some(client), Some(rt), true) = (&ctx.client, &runtime, suspected) {
                let view = match &llm_down {
                    Some(e) => LlmView {
                        category: None,
                        model: client.model_id(),
                        samples: 0,
                        cached: false,
                        stance: LlmStance::Failed,
                        error: Some(format!("not asked after an earlier failure: {e}")),
                    },
                    None => {
                        let code = functions
                            .iter()
                            .find(|f| f.name == row.test.name && f.start_line == row.test.line)
                            .map(|f| (function_text(&parsed, f), f.params.clone()))
                            .unwrap_or_default();
                        let v = rt.block_on(ask_llm(
                            client.as_ref(),
                            ctx,
                            &cache,
                            args.fresh,
                            source.language,
                            &row.test,
                            &code.0,
                            &code.1,
                        ));
                        if let Some(e) = &v.error {
                            if v.samples == 0 {
                                llm_down = Some(e.clone());
                                out.errors.push(format!(
                                    "{}: {}: LLM call failed: {e}",
                                    source.path, row.test.name
                                ));
                            }
                        }
                        v
                    }
                };
                row.tier = tier_for(row.test.category, &view);
                row.llm = Some(view);
            }
            out.rows.push(row);
        }
    }
    if !any && inputs.refused.is_empty() {
        out.errors
            .push("no Java, Python, JavaScript or TypeScript file found in the given paths".into());
    }
    out.exit_code = i32::from(!inputs.refused.is_empty() || !any);
    out
}

/// The tier of a test from its static category and the LLM's view (module docs table).
pub fn tier_for(static_category: Option<Category>, view: &LlmView) -> Option<Tier> {
    match static_category {
        Some(c) => {
            let llm = match (view.stance, view.category) {
                (LlmStance::Failed | LlmStance::Unstable, _) => view.stance,
                (_, Some(l)) if l == c => LlmStance::Agrees,
                _ => LlmStance::Disagrees,
            };
            Some(decide_tier(&Evidence {
                origin: Origin::Analyzer,
                llm,
                contradicted: false,
            }))
        }
        None => view.category.map(|_| {
            decide_tier(&Evidence {
                origin: Origin::Llm,
                llm: LlmStance::Agrees,
                contradicted: false,
            })
        }),
    }
}

fn inputs_for(language: Language, test: &FlakyTest, code: &str, params: &[String]) -> PromptInputs {
    PromptInputs {
        task: Task::FlakyRootCause,
        language,
        function: Some(FunctionInfo {
            name: test.name.clone(),
            kind: "test".into(),
            params: params.to_vec(),
        }),
        code: vec![CodeUnit {
            label: "test".into(),
            language,
            text: code.to_string(),
        }],
        question: json!({}),
        context: Vec::new(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn ask_llm(
    client: &dyn LlmClient,
    ctx: &FlakyContext,
    cache: &AnswerCache,
    fresh: bool,
    language: Language,
    test: &FlakyTest,
    code: &str,
    params: &[String],
) -> LlmView {
    let task = Task::FlakyRootCause;
    let settings = &ctx.settings;
    let model = client.model_id();
    let failed = |e: String, samples: usize| LlmView {
        category: None,
        model: model.clone(),
        samples,
        cached: false,
        stance: LlmStance::Failed,
        error: Some(e),
    };
    let inputs = inputs_for(language, test, code, params);
    let prompt: RenderedPrompt =
        match ctx
            .prompts
            .render(&inputs, settings.strategy_for(task), settings.shots)
        {
            Ok(p) => p,
            Err(e) => return failed(format!("prompt: {e}"), 1),
        };
    let input_hash = inputs.input_hash();
    let sampler = Sampler::new(
        client,
        settings,
        cache,
        &prompt,
        task,
        &input_hash,
        fresh,
        format!("{} {}", task.name(), test.name),
    );
    let mut answers: Vec<Option<Category>> = Vec::new();
    let mut all_cached = true;
    for i in 0..sampler.samples() {
        let text = match sampler.draw(i).await {
            Ok(Drawn::Cached(c)) => c.text,
            Ok(Drawn::Answered(resp)) => {
                all_cached = false;
                if parse_flaky_category(&resp.text).is_some() {
                    sampler.remember(i, &CachedAnswer::from_response(&resp));
                }
                resp.text
            }
            Err(e) => return failed(e.to_string(), i),
        };
        answers.push(parse_flaky_category(&text).and_then(Category::from_name));
    }
    // Majority over the samples; unstable when the majority is below 1 - max_instability.
    let (majority, votes) = plurality(&answers).unwrap_or((None, 0));
    let share = votes as f64 / answers.len().max(1) as f64;
    let stance = if share < 1.0 - settings.max_instability {
        LlmStance::Unstable
    } else if majority.is_some() && majority == test.category {
        LlmStance::Agrees
    } else {
        LlmStance::Disagrees
    };
    LlmView {
        category: majority,
        model,
        samples: answers.len(),
        cached: all_cached,
        stance,
        error: majority
            .is_none()
            .then(|| "the answer names none of the 13 categories".to_string()),
    }
}

/// The binary's entry: settings as for `ask`, the per-user store as cache.
pub fn run(args: &FlakyArgs) -> anyhow::Result<i32> {
    let mut settings = super::ask::load_check_settings()?;
    let mut client: Option<Arc<dyn LlmClient>> = None;
    let mut backend = None;
    if !args.no_llm {
        match LlmSettings::load()
            .map_err(|e| e.to_string())
            .and_then(|s| {
                HttpClient::new(s.clone())
                    .map(|c| (s, c))
                    .map_err(|e| e.to_string())
            }) {
            Ok((llm, c)) => {
                settings.call_timeout = Some(Duration::from_secs(llm.timeout_secs.max(1) + 2));
                client = Some(Arc::new(c));
                backend = crate::store::Store::open_optional(
                    crate::store::default_db_path(),
                    crate::store::StoreConfig::default(),
                )
                .map(|s| Arc::new(s) as Arc<dyn CacheBackend>);
            }
            Err(e) => {
                eprintln!("crosscheck: no LLM ({e}); deterministic results only (use --no-llm to silence)");
            }
        }
    }
    let prompts = match &settings.prompts_dir {
        Some(dir) => {
            let overrides = load_override_dir(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            PromptLibrary::with_overrides(overrides).map_err(|e| anyhow::anyhow!("{e}"))?
        }
        None => PromptLibrary::builtin(),
    };
    let ctx = FlakyContext {
        client,
        settings,
        prompts,
        backend,
        cancel: Cancel::never(),
    };
    let out = flaky(args, &ctx);
    for e in &out.errors {
        eprintln!("crosscheck: {e}");
    }
    let text = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&out.to_json())?,
        OutputFormat::Text => out.to_text(),
    };
    super::print_stdout(&text)?;
    Ok(out.exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(category: Option<Category>, stance: LlmStance) -> LlmView {
        LlmView {
            category,
            model: "m".into(),
            samples: 1,
            cached: false,
            stance,
            error: None,
        }
    }

    #[test]
    fn tiers_from_agreement() {
        let c = Some(Category::Time);
        assert_eq!(
            tier_for(c, &view(c, LlmStance::Agrees)),
            Some(Tier::Confirmed)
        );
        assert_eq!(
            tier_for(c, &view(Some(Category::Io), LlmStance::Disagrees)),
            Some(Tier::AnalyzerOnly)
        );
        assert_eq!(
            tier_for(c, &view(None, LlmStance::Failed)),
            Some(Tier::AnalyzerOnly)
        );
        assert_eq!(
            tier_for(None, &view(Some(Category::Io), LlmStance::Disagrees)),
            Some(Tier::LlmOnly)
        );
        assert_eq!(tier_for(None, &view(None, LlmStance::Failed)), None);
    }
}
