//! `crosscheck equiv A B`: are two functions equivalent? Evidence, cheapest first:
//!
//! 1. a normalisation proof (same language; [`crate::analysis::equiv::normal`]): verdict
//!    `equivalent`, tier `confirmed`, method `normalisation`;
//! 2. differential testing in a sandbox ([`sandbox`], harnesses from [`harness`], inputs from
//!    [`crate::analysis::equiv::inputs`]): the first counterexample gives `not_equivalent`,
//!    tier `confirmed`, method `differential`; no difference after the trials gives
//!    `likely_equivalent` (tier `analyzer-only` unless a stable LLM majority agrees);
//! 3. the LLM (unless `--no-llm` or not configured): self-consistency samples of the
//!    `equivalence` / `equivalence_cross_language` prompts. It never overrides a proof or a
//!    counterexample; an LLM `not_equivalent` without a counterexample is `llm-only`.
//!
//! ```text
//! crosscheck equiv A B [--format json|text] [--no-llm] [--trials N] [--seed S]
//! ```
//! `A` and `B` are files holding one function each, or `FILE:function`. JSON output:
//! `{"verdict", "tier", "method", "counterexample": {"inputs", "a", "b"} | null, "trials",
//! "llm": {...} | null}` where `trials` counts the inputs compared (inputs that hit undefined
//! behaviour, a timeout, or fall outside the common domain are discarded and not counted).
//! Exit code 0 whatever the verdict, 1 on errors (unreadable file, unknown function).

pub mod harness;
pub mod sandbox;

use super::OutputFormat;
use crate::analysis::equiv::inputs::generate;
use crate::analysis::equiv::normal::prove_program_equivalent;
use crate::analysis::equiv::types::{common_domain, select_function, signature, Signature};
use crate::analysis::equiv::value::{compare, Cmp, Outcome, Sides, Value};
use crate::analysis::equiv::Verdict;
use crate::crosscheck::record::Tier;
use crate::crosscheck::tier::{decide_tier, Evidence, LlmStance, Origin};
use crate::syntax::{Cancel, Language, ParsedFile};
use sandbox::{Limits, TempDir};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct EquivArgs {
    /// The first function: FILE (one function) or FILE:function.
    pub a: String,
    /// The second function: FILE (one function) or FILE:function.
    pub b: String,
    #[arg(long, value_enum, default_value = "json")]
    pub format: OutputFormat,
    /// Deterministic evidence only (no LLM call).
    #[arg(long)]
    pub no_llm: bool,
    /// Number of inputs for differential testing.
    #[arg(long, default_value_t = 300)]
    pub trials: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Wall-clock limit of one harness run, in seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Address-space limit of the code under test, in MB.
    #[arg(long, default_value_t = 2048)]
    pub memory_mb: u64,
    /// LLM samples (self-consistency).
    #[arg(long, default_value_t = 3)]
    pub samples: usize,
}

/// One side of the comparison.
pub struct Side {
    pub path: PathBuf,
    pub text: String,
    pub language: Language,
    pub sig: Signature,
    /// The function's own text (for the LLM).
    pub function_text: String,
}

/// Splits `FILE:function` (when FILE exists) from a plain file.
fn split_spec(spec: &str) -> (PathBuf, Option<String>) {
    if Path::new(spec).exists() {
        return (PathBuf::from(spec), None);
    }
    match spec.rsplit_once(':') {
        Some((file, func)) if !func.is_empty() && !func.contains('/') => {
            (PathBuf::from(file), Some(func.to_string()))
        }
        _ => (PathBuf::from(spec), None),
    }
}

/// Loads one side: reads the file, picks the function, reads its signature.
pub fn load_side(spec: &str) -> Result<Side, String> {
    let (path, func) = split_spec(spec);
    let language = Language::from_path(&path)
        .ok_or_else(|| format!("{}: unknown language", path.display()))?;
    if !matches!(
        language,
        Language::Python | Language::Java | Language::C | Language::Cpp
    ) {
        return Err(format!(
            "{}: equiv supports Python, Java, C and C++",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = ParsedFile::parse(language, text.clone());
    let f =
        select_function(&file, func.as_deref()).map_err(|e| format!("{}: {e}", path.display()))?;
    let sig = signature(&file, &f).map_err(|e| format!("{}: {e}", path.display()))?;
    let function_text = file.node_text(f.node).to_string();
    Ok(Side {
        path,
        text,
        language,
        sig,
        function_text,
    })
}

/// The deterministic result.
#[derive(Debug, Clone)]
pub struct Deterministic {
    pub verdict: Verdict,
    pub method: &'static str,
    pub counterexample: Option<Json>,
    pub trials: usize,
    /// Why the verdict is `unknown`, or notes on the run.
    pub notes: Vec<String>,
}

/// Options of the differential run.
#[derive(Debug, Clone, Copy)]
pub struct DiffOptions {
    pub trials: usize,
    pub seed: u64,
    pub limits: Limits,
}

/// Proof first, then differential testing.
pub fn deterministic(a: &Side, b: &Side, opts: DiffOptions) -> Deterministic {
    let mut notes = Vec::new();
    if a.language == b.language {
        let fa = ParsedFile::parse(a.language, a.text.clone());
        let fb = ParsedFile::parse(b.language, b.text.clone());
        let ga = select_function(&fa, Some(&a.sig.name));
        let gb = select_function(&fb, Some(&b.sig.name));
        if let (Ok(ga), Ok(gb)) = (ga, gb) {
            match prove_program_equivalent((&fa, &ga), (&fb, &gb), &Cancel::never()) {
                Ok(true) => {
                    return Deterministic {
                        verdict: Verdict::Equivalent,
                        method: "normalisation",
                        counterexample: None,
                        trials: 0,
                        notes,
                    }
                }
                Ok(false) => {}
                Err(e) => notes.push(format!("no normalisation: {e}")),
            }
        }
    }
    let doms = match common_domain(&a.sig, &b.sig) {
        Ok(d) => d,
        Err(e) => {
            notes.push(e);
            return Deterministic {
                verdict: Verdict::Unknown,
                method: "none",
                counterexample: None,
                trials: 0,
                notes,
            };
        }
    };
    let inputs = generate(&doms, opts.trials.max(1), opts.seed);
    let (oa, ob) = std::thread::scope(|s| {
        let ha = s.spawn(|| run_side(a, &inputs, opts.limits));
        let rb = run_side(b, &inputs, opts.limits);
        let ra = ha
            .join()
            .unwrap_or_else(|_| Err("harness thread failed".into()));
        (ra, rb)
    });
    let (oa, ob) = match (oa, ob) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            notes.push(e);
            return Deterministic {
                verdict: Verdict::Unknown,
                method: "differential",
                counterexample: None,
                trials: 0,
                notes,
            };
        }
    };
    let sides = Sides {
        cross_language: a.language != b.language,
        ret_a: &a.sig.ret,
        ret_b: &b.sig.ret,
    };
    let mut trials = 0;
    let mut discarded = 0;
    for (i, inp) in inputs.iter().enumerate() {
        let x = oa.get(i).unwrap_or(&Outcome::Missing);
        let y = ob.get(i).unwrap_or(&Outcome::Missing);
        match compare(x, y, sides) {
            Cmp::Equal => trials += 1,
            Cmp::Discard => discarded += 1,
            Cmp::Differ => {
                trials += 1;
                return Deterministic {
                    verdict: Verdict::NotEquivalent,
                    method: "differential",
                    counterexample: Some(json!({
                        "inputs": inp.iter().map(Value::to_json).collect::<Vec<_>>(),
                        "a": x.to_json(),
                        "b": y.to_json(),
                    })),
                    trials,
                    notes,
                };
            }
        }
    }
    if discarded > 0 {
        notes.push(format!("{discarded} input(s) discarded (undefined behaviour, timeout, crash of the harness or outside the common domain)"));
    }
    Deterministic {
        verdict: if trials > 0 {
            Verdict::LikelyEquivalent
        } else {
            Verdict::Unknown
        },
        method: "differential",
        counterexample: None,
        trials,
        notes,
    }
}

fn python_exe() -> String {
    static EXE: OnceLock<String> = OnceLock::new();
    EXE.get_or_init(|| {
        std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "python3".into())
    })
    .clone()
}

/// Blanks a Java `package` declaration (keeping line numbers) so the class lives in the default
/// package next to the harness.
fn strip_java_package(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("package ") {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn public_class(text: &str) -> Option<String> {
    for l in text.lines() {
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("public ") {
            let mut words = rest
                .split_whitespace()
                .skip_while(|w| matches!(*w, "final" | "abstract" | "static"));
            if matches!(
                words.next(),
                Some("class" | "interface" | "enum" | "record")
            ) {
                if let Some(name) = words.next() {
                    let name: String = name
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                        .collect();
                    return Some(name);
                }
            }
        }
    }
    None
}

/// Compiles and runs one side's harness on all inputs; resumes after inputs that kill it.
pub fn run_side(
    side: &Side,
    inputs: &[Vec<Value>],
    limits: Limits,
) -> Result<Vec<Outcome>, String> {
    let dir =
        TempDir::new(side.language.name()).map_err(|e| format!("temporary directory: {e}"))?;
    let d = dir.path();
    let write = |name: &str, text: &str| {
        std::fs::write(d.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    let compile_limits = Limits {
        wall: Duration::from_secs(180),
        memory_mb: limits.memory_mb.max(8192),
    };
    let (program, mut base_args): (String, Vec<String>) = match side.language {
        Language::Python => {
            write("user.py", &side.text)?;
            write("harness.py", &harness::python(&side.sig, inputs))?;
            (python_exe(), vec!["-I".into(), "harness.py".into()])
        }
        Language::Java => {
            let (source, class) = match &side.sig.class {
                Some(c) => (strip_java_package(&side.text), c.replace('.', "$")),
                None => (
                    format!("class CcUser {{\n{}\n}}\n", strip_java_package(&side.text)),
                    "CcUser".to_string(),
                ),
            };
            let file = public_class(&source).unwrap_or_else(|| "CcUserFile".into());
            write(&format!("{file}.java"), &source)?;
            write("CcHarness.java", &harness::java(&side.sig, &class, inputs))?;
            let out = sandbox::run(
                "javac",
                &[
                    "-J-Xmx768m".into(),
                    "-J-XX:+UseSerialGC".into(),
                    "-J-XX:TieredStopAtLevel=1".into(),
                    "-J-XX:CompressedClassSpaceSize=128m".into(),
                    "-nowarn".into(),
                    "-encoding".into(),
                    "UTF-8".into(),
                    "-d".into(),
                    ".".into(),
                    format!("{file}.java"),
                    "CcHarness.java".into(),
                ],
                d,
                compile_limits,
            )
            .map_err(|e| format!("javac: {e}"))?;
            if out.status != Some(0) {
                return Err(format!(
                    "javac failed: {}",
                    first_lines(&format!("{}{}", out.stderr, out.stdout), 8)
                ));
            }
            (
                "java".into(),
                vec![
                    "-Xmx512m".into(),
                    "-Xss16m".into(),
                    "-XX:+UseSerialGC".into(),
                    "-XX:TieredStopAtLevel=1".into(),
                    "-XX:CompressedClassSpaceSize=64m".into(),
                    "-XX:ReservedCodeCacheSize=64m".into(),
                    "-Xshare:auto".into(),
                    "-cp".into(),
                    ".".into(),
                    "CcHarness".into(),
                ],
            )
        }
        Language::C | Language::Cpp => {
            let cpp = side.language == Language::Cpp;
            let (user, h, compiler, std) = if cpp {
                ("user.cpp", "harness.cpp", "g++", "-std=gnu++17")
            } else {
                ("user.c", "harness.c", "gcc", "-std=gnu11")
            };
            write(user, &side.text)?;
            write(h, &harness::c_family(&side.sig, cpp, &side.text, inputs)?)?;
            let out = sandbox::run(
                compiler,
                &[
                    std.into(),
                    "-O0".into(),
                    "-w".into(),
                    "-fsanitize=undefined".into(),
                    "-fno-sanitize-recover=all".into(),
                    "-o".into(),
                    "harness".into(),
                    h.into(),
                    "-lm".into(),
                ],
                d,
                compile_limits,
            )
            .map_err(|e| format!("{compiler}: {e}"))?;
            if out.status != Some(0) {
                return Err(format!(
                    "{compiler} failed: {}",
                    first_lines(&format!("{}{}", out.stderr, out.stdout), 8)
                ));
            }
            ("./harness".into(), Vec::new())
        }
        other => return Err(format!("{} is not supported", other.name())),
    };
    let n = inputs.len();
    let mut outcomes = vec![Outcome::Missing; n];
    let mut start = 0usize;
    let mut restarts = 0;
    while start < n {
        let mut args = base_args.clone();
        args.push(start.to_string());
        let out =
            sandbox::run(&program, &args, d, limits).map_err(|e| format!("{program}: {e}"))?;
        let mut done = false;
        let mut last_seen: Option<usize> = None;
        for line in out.stdout.lines() {
            let Some(pos) = line.find(harness::MARK) else {
                continue;
            };
            let payload = &line[pos + harness::MARK.len()..];
            if payload.contains("\"done\"") {
                done = true;
                continue;
            }
            if payload.contains("\"load_error\"") {
                return Err(format!(
                    "{}: cannot load the function: {}",
                    side.path.display(),
                    payload
                ));
            }
            if let Some((i, o)) = Outcome::from_line(payload) {
                if let Some(slot) = outcomes.get_mut(i) {
                    *slot = o;
                    last_seen = Some(last_seen.map_or(i, |l| l.max(i)));
                }
            }
        }
        if done {
            break;
        }
        let next = last_seen.map_or(start, |l| l + 1);
        if out.status == Some(harness::RESUME_EXIT) && last_seen.is_some() {
            start = next;
        } else {
            if next >= n {
                break;
            }
            if start == 0
                && last_seen.is_none()
                && !out.timed_out
                && restarts == 0
                && out.status != Some(0)
            {
                // Died before the first input: a load failure, not an input's fault.
                let msg = first_lines(&out.stderr, 6);
                if !msg.trim().is_empty()
                    && outcomes.iter().all(|o| *o == Outcome::Missing)
                    && side.language != Language::C
                    && side.language != Language::Cpp
                {
                    return Err(format!("{}: harness failed: {msg}", side.path.display()));
                }
            }
            outcomes[next] = if out.timed_out {
                Outcome::Timeout
            } else {
                Outcome::Crash(format!("exit {:?}", out.status))
            };
            start = next + 1;
        }
        restarts += 1;
        if restarts > 25 {
            break;
        }
    }
    // `base_args` is reused across restarts; keep the borrow checker honest about it.
    base_args.clear();
    Ok(outcomes)
}

fn first_lines(s: &str, n: usize) -> String {
    s.lines().take(n).collect::<Vec<_>>().join(" | ")
}

/// The LLM's say, if asked.
#[derive(Debug, Clone)]
pub struct LlmResult {
    pub json: Json,
    /// The majority says equivalent (`Some(true)`), not equivalent (`Some(false)`), or nothing.
    pub majority: Option<bool>,
    pub stable: bool,
    pub failed: bool,
}

fn ask_llm(a: &Side, b: &Side, samples: usize) -> Option<LlmResult> {
    use crate::crosscheck::prompts::{CodeUnit, PromptInputs, PromptLibrary};
    use crate::crosscheck::task::{Shots, Strategy, Task};
    use crate::llm::{ChatRequest, HttpClient, LlmClient, LlmSettings};
    let settings = LlmSettings::load().ok()?;
    if !settings.is_configured() {
        return None;
    }
    let client = match HttpClient::new(settings) {
        Ok(c) => c,
        Err(e) => {
            return Some(LlmResult {
                json: json!({"error": e.to_string()}),
                majority: None,
                stable: false,
                failed: true,
            })
        }
    };
    let task = if a.language == b.language {
        Task::Equivalence
    } else {
        Task::EquivalenceCrossLanguage
    };
    let inputs = PromptInputs {
        task,
        language: a.language,
        function: None,
        code: vec![
            CodeUnit {
                label: "program A".into(),
                language: a.language,
                text: a.function_text.clone(),
            },
            CodeUnit {
                label: "program B".into(),
                language: b.language,
                text: b.function_text.clone(),
            },
        ],
        question: Json::Null,
        context: Vec::new(),
    };
    let rendered = match PromptLibrary::builtin().render(&inputs, Strategy::Normal, Shots::Zero) {
        Ok(r) => r,
        Err(e) => {
            return Some(LlmResult {
                json: json!({"error": e.to_string()}),
                majority: None,
                stable: false,
                failed: true,
            })
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let mut verdicts: Vec<Option<bool>> = Vec::new();
    let mut errors = Vec::new();
    let model = client.model_id();
    for k in 0..samples.max(1) {
        let req = ChatRequest::new(rendered.system.clone(), rendered.user.clone())
            .with_temperature(if k == 0 { 0.0 } else { 0.7 })
            .with_seed(k as u64)
            .with_tag("equivalence");
        match rt.block_on(client.complete(req)) {
            Ok(resp) => {
                let v = crate::llm::answer::parse_verdict(&resp.text);
                verdicts.push(match v {
                    crate::llm::answer::Verdict::Yes => Some(true),
                    crate::llm::answer::Verdict::No => Some(false),
                    crate::llm::answer::Verdict::Unknown => None,
                });
            }
            Err(e) => {
                errors.push(e.to_string());
                break;
            }
        }
    }
    let keys: Vec<bool> = verdicts.iter().flatten().copied().collect();
    let unread = verdicts.len() - keys.len();
    let (majority, instability) =
        crate::crosscheck::consistency::majority(&keys, unread + errors.len());
    let stable = instability <= 1.0 / 3.0 + 1e-9 && majority.is_some();
    let name = |v: &Option<bool>| match v {
        Some(true) => "equivalent",
        Some(false) => "not_equivalent",
        None => "unknown",
    };
    Some(LlmResult {
        json: json!({
            "model": model,
            "task": task.name(),
            "samples": verdicts.iter().map(name).collect::<Vec<_>>(),
            "majority": name(&majority),
            "instability": instability,
            "errors": errors,
        }),
        majority,
        stable,
        failed: verdicts.is_empty(),
    })
}

/// Combines deterministic evidence and the LLM into verdict, tier and method.
pub fn decide(
    det: &Deterministic,
    llm: Option<&LlmResult>,
) -> (Verdict, Option<Tier>, &'static str) {
    let stance = match llm {
        None => LlmStance::NotAsked,
        Some(l) if l.failed => LlmStance::Failed,
        Some(l) if !l.stable => LlmStance::Unstable,
        Some(l) => match (l.majority, det.verdict) {
            (Some(true), Verdict::Equivalent | Verdict::LikelyEquivalent) => LlmStance::Agrees,
            (Some(false), Verdict::NotEquivalent) => LlmStance::Agrees,
            (None, _) => LlmStance::Failed,
            _ => LlmStance::Disagrees,
        },
    };
    match det.verdict {
        Verdict::Equivalent | Verdict::NotEquivalent => {
            let t = decide_tier(&Evidence {
                origin: Origin::Proof,
                llm: stance,
                contradicted: false,
            });
            (det.verdict, Some(t), det.method)
        }
        Verdict::LikelyEquivalent => {
            let t = decide_tier(&Evidence {
                origin: Origin::Analyzer,
                llm: stance,
                contradicted: false,
            });
            (det.verdict, Some(t), det.method)
        }
        Verdict::Unknown => match llm.and_then(|l| l.majority.filter(|_| l.stable)) {
            Some(eq) => {
                let t = decide_tier(&Evidence {
                    origin: Origin::Llm,
                    llm: stance,
                    contradicted: false,
                });
                (
                    if eq {
                        Verdict::LikelyEquivalent
                    } else {
                        Verdict::NotEquivalent
                    },
                    Some(t),
                    "llm",
                )
            }
            None => (Verdict::Unknown, None, det.method),
        },
    }
}

pub fn run(args: &EquivArgs) -> anyhow::Result<i32> {
    let a = load_side(&args.a).map_err(|e| anyhow::anyhow!(e))?;
    let b = load_side(&args.b).map_err(|e| anyhow::anyhow!(e))?;
    if !sandbox::network_isolated() {
        tracing::warn!(
            "unshare is unavailable: the code under test runs without network isolation"
        );
    }
    let det = deterministic(
        &a,
        &b,
        DiffOptions {
            trials: args.trials,
            seed: args.seed,
            limits: Limits {
                wall: Duration::from_secs(args.timeout.max(1)),
                memory_mb: args.memory_mb.max(64),
            },
        },
    );
    for n in &det.notes {
        tracing::info!("equiv: {n}");
    }
    let llm = if args.no_llm {
        None
    } else {
        ask_llm(&a, &b, args.samples)
    };
    let (verdict, tier, method) = decide(&det, llm.as_ref());
    let out = json!({
        "verdict": verdict.name(),
        "tier": tier.map(|t| t.name()),
        "method": method,
        "counterexample": det.counterexample.clone(),
        "trials": det.trials,
        "llm": llm.as_ref().map(|l| l.json.clone()),
    });
    let text = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&out)?,
        OutputFormat::Text => {
            let mut s = format!(
                "{}: {} (tier {}, method {}, {} trial(s))\n",
                if verdict == Verdict::NotEquivalent {
                    "NOT EQUIVALENT"
                } else {
                    verdict.name()
                },
                verdict.name(),
                tier.map(|t| t.name()).unwrap_or("none"),
                method,
                det.trials
            );
            if let Some(c) = &det.counterexample {
                s.push_str(&format!(
                    "  inputs: {}\n  A: {}\n  B: {}\n",
                    c["inputs"], c["a"], c["b"]
                ));
            }
            for n in &det.notes {
                s.push_str(&format!("  note: {n}\n"));
            }
            if let Some(l) = &llm {
                s.push_str(&format!("  llm: {}\n", l.json));
            }
            s
        }
    };
    super::print_stdout(&text)?;
    Ok(0)
}
