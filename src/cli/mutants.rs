//! `crosscheck mutants`: are the surviving mutants equivalent? Reads MutantBench, EqBench,
//! cargo-mutants, mutmut or PIT results ([`crate::exec::mutants`]), classifies each mutant with
//! the evidence chain of `equiv` and prints per-mutant verdicts and a summary: accuracy,
//! accuracy on equivalent and on non-equivalent mutants and the decision gap
//! (`Acc(non-equivalent) - Acc(equivalent)`), unknown counts, for the deterministic evidence
//! alone and, unless `--no-llm`, for the hybrid (the product's verdict with the LLM step).
//!
//! ```text
//! crosscheck mutants (--mutantbench DIR | --eqbench DIR | --cargo-mutants outcomes.json
//!                     | --mutmut FILE|DIR | --pit mutations.xml)
//!                    [--limit N] [--sample N --seed S] [--language java|c|...] [--no-llm]
//!                    [--trials N] [--jobs N] [--format json|text]
//! ```
//! JSON: `{"mutants": [{"id", "format", "file", "language", "function", "expected",
//! "deterministic", "verdict", "tier", "method", "counterexample", "trials", "notes", "llm"}],
//! "summary": {"count", "seconds", "mutants_per_minute", "verdicts", "deterministic",
//! "hybrid", "by_language"}}`. Exit code 0 whatever the verdicts, 1 when the input cannot be read.

use super::OutputFormat;
use crate::analysis::equiv::mutant::Tally;
use crate::analysis::equiv::smt::Bounds;
use crate::exec::equiv::{DiffOptions, EquivOptions};
use crate::exec::mutants::{
    classify_mutant, load_cargo_mutants, load_eqbench, load_mutantbench, load_mutmut, load_pit,
    MutantCase, MutantVerdict,
};
use crate::exec::sandbox::{self, Limits};
use crate::syntax::Language;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(
    ["mutantbench", "eqbench", "cargo_mutants", "mutmut", "pit"]
)))]
pub struct MutantsArgs {
    /// A MutantBench folder (mutants.jsonl + programs/).
    #[arg(long)]
    pub mutantbench: Option<PathBuf>,
    /// An EqBench folder (benchmarks/**/Eq|Neq).
    #[arg(long)]
    pub eqbench: Option<PathBuf>,
    /// cargo-mutants' outcomes.json (survivors = MissedMutant).
    #[arg(long)]
    pub cargo_mutants: Option<PathBuf>,
    /// Where the sources of a cargo-mutants run are (default: the parent of mutants.out/).
    #[arg(long, requires = "cargo_mutants")]
    pub source_root: Option<PathBuf>,
    /// mutmut results: a mutmut 3 `mutants/` folder or `.py.meta` file, or a mutmut 2 `.mutmut-cache`.
    #[arg(long)]
    pub mutmut: Option<PathBuf>,
    /// PIT's mutations.xml (lists the survivors; no mutated source, so no verdict).
    #[arg(long)]
    pub pit: Option<PathBuf>,
    /// Only mutants of this language.
    #[arg(long)]
    pub language: Option<String>,
    /// A random sample of N mutants (see --seed), in input order.
    #[arg(long)]
    pub sample: Option<usize>,
    /// Seed of --sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// At most N mutants (after --sample).
    #[arg(long)]
    pub limit: Option<usize>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: OutputFormat,
    /// Deterministic evidence only (no LLM call).
    #[arg(long)]
    pub no_llm: bool,
    /// Skip the bounded symbolic check (Z3): no `bounded_equivalent` verdict, no solver-found
    /// counterexample.
    #[arg(long)]
    pub no_smt: bool,
    /// Number of inputs for differential testing per mutant.
    #[arg(long, default_value_t = 200)]
    pub trials: usize,
    /// Seed of the random test inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub input_seed: u64,
    /// Wall-clock limit of one harness run, in seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Address-space limit of the code under test, in MB.
    #[arg(long, default_value_t = 2048)]
    pub memory_mb: u64,
    /// LLM samples per mutant (self-consistency).
    #[arg(long, default_value_t = 3)]
    pub samples: usize,
    /// Mutants classified at once (each runs its two programs in parallel already).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
}

fn load(args: &MutantsArgs) -> Result<Vec<MutantCase>, String> {
    if let Some(d) = &args.mutantbench {
        return load_mutantbench(d);
    }
    if let Some(d) = &args.eqbench {
        return load_eqbench(d);
    }
    if let Some(f) = &args.cargo_mutants {
        return load_cargo_mutants(f, args.source_root.as_deref());
    }
    if let Some(f) = &args.mutmut {
        return load_mutmut(f);
    }
    if let Some(f) = &args.pit {
        return load_pit(f);
    }
    Err("no input given".into())
}

/// A seeded sample of `n` items, kept in input order.
fn sample<T>(items: Vec<T>, n: usize, seed: u64) -> Vec<T> {
    let mut idx: Vec<usize> = (0..items.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in (1..idx.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    let mut keep: Vec<usize> = idx.into_iter().take(n).collect();
    keep.sort_unstable();
    let mut keep = keep.into_iter().peekable();
    items
        .into_iter()
        .enumerate()
        .filter_map(|(i, x)| {
            if keep.peek() == Some(&i) {
                keep.next();
                Some(x)
            } else {
                None
            }
        })
        .collect()
}

fn tally_json(t: &Tally) -> Json {
    json!({
        "labelled": t.total(),
        "accuracy": t.accuracy(),
        "accuracy_equivalent": t.accuracy_equivalent(),
        "accuracy_non_equivalent": t.accuracy_non_equivalent(),
        "decision_gap": t.decision_gap(),
        "equivalent": {"right": t.eq_right, "total": t.eq_total},
        "non_equivalent": {"right": t.neq_right, "total": t.neq_total},
        "unknown": t.unknown,
        "proved": t.proved,
        "proved_on_non_equivalent": t.proved_wrong,
    })
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v))
        .unwrap_or_else(|| "n/a".into())
}

fn tally_text(name: &str, t: &Tally) -> String {
    format!(
        "{name}: n={} accuracy {} | equivalent {} ({}/{}) | non-equivalent {} ({}/{}) | gap {} | unknown {} | proved {} ({} on non-equivalent)\n",
        t.total(),
        pct(t.accuracy()),
        pct(t.accuracy_equivalent()),
        t.eq_right,
        t.eq_total,
        pct(t.accuracy_non_equivalent()),
        t.neq_right,
        t.neq_total,
        t.decision_gap()
            .map(|g| format!("{:+.1} pts", 100.0 * g))
            .unwrap_or_else(|| "n/a".into()),
        t.unknown,
        t.proved,
        t.proved_wrong
    )
}

/// Classifies on `jobs` workers; results in input order.
fn classify_all(cases: &[MutantCase], opts: &EquivOptions, jobs: usize) -> Vec<MutantVerdict> {
    let jobs = jobs.clamp(1, 16);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<MutantVerdict>>> =
        std::sync::Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(case) = cases.get(i) else { break };
                let v = classify_mutant(case, opts);
                tracing::info!(
                    "mutants: {}/{} {} -> {}",
                    i + 1,
                    cases.len(),
                    case.id,
                    v.verdict.name()
                );
                if let Ok(mut r) = results.lock() {
                    if let Some(slot) = r.get_mut(i) {
                        *slot = Some(v);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .zip(cases)
        .map(|(v, c)| {
            v.unwrap_or_else(|| {
                classify_mutant(
                    &MutantCase {
                        mutated: Err("the worker failed".into()),
                        ..c.clone()
                    },
                    opts,
                )
            })
        })
        .collect()
}

pub fn run(args: &MutantsArgs) -> anyhow::Result<i32> {
    let mut cases = load(args).map_err(|e| anyhow::anyhow!(e))?;
    if let Some(lang) = &args.language {
        let want = Language::from_name(lang)
            .ok_or_else(|| anyhow::anyhow!("unknown language `{lang}`"))?;
        cases.retain(|c| Language::from_path(&c.path) == Some(want));
    }
    if let Some(n) = args.sample {
        cases = sample(cases, n, args.seed);
    }
    if let Some(n) = args.limit {
        cases.truncate(n);
    }
    if !sandbox::network_isolated() {
        tracing::warn!(
            "unshare is unavailable: the code under test runs without network isolation"
        );
    }
    let opts = EquivOptions {
        diff: DiffOptions {
            trials: args.trials,
            seed: args.input_seed,
            limits: Limits {
                wall: Duration::from_secs(args.timeout.max(1)),
                memory_mb: args.memory_mb.max(64),
            },
            symbolic: (!args.no_smt).then(Bounds::default),
        },
        execute: true,
        llm_samples: (!args.no_llm).then_some(args.samples),
    };
    let started = Instant::now();
    let verdicts = classify_all(&cases, &opts, args.jobs);
    let seconds = started.elapsed().as_secs_f64();
    let mut det = Tally::default();
    let mut hybrid = Tally::default();
    let mut by_lang: BTreeMap<String, (Tally, Tally)> = BTreeMap::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &verdicts {
        *counts.entry(v.verdict.name()).or_default() += 1;
        if let Some(e) = v.expected {
            det.add(e, v.deterministic.name());
            hybrid.add(e, v.verdict.name());
            let l = by_lang
                .entry(
                    v.language
                        .map(|l| l.name())
                        .unwrap_or("unknown")
                        .to_string(),
                )
                .or_default();
            l.0.add(e, v.deterministic.name());
            l.1.add(e, v.verdict.name());
        }
    }
    let per_minute = if seconds > 0.0 {
        verdicts.len() as f64 * 60.0 / seconds
    } else {
        0.0
    };
    let text = match args.format {
        OutputFormat::Json => serde_json::to_string_pretty(&json!({
            "mutants": verdicts.iter().map(MutantVerdict::to_json).collect::<Vec<_>>(),
            "summary": {
                "count": verdicts.len(),
                "seconds": (seconds * 10.0).round() / 10.0,
                "mutants_per_minute": (per_minute * 10.0).round() / 10.0,
                "verdicts": counts,
                "deterministic": tally_json(&det),
                "hybrid": (!args.no_llm).then(|| tally_json(&hybrid)),
                "by_language": by_lang.iter().map(|(k, (d, h))| (k.clone(), json!({
                    "deterministic": tally_json(d),
                    "hybrid": (!args.no_llm).then(|| tally_json(h)),
                }))).collect::<BTreeMap<_, _>>(),
            }
        }))?,
        OutputFormat::Text => {
            let mut s = String::new();
            for v in &verdicts {
                s.push_str(&format!(
                    "{} {} {}{}: {} (deterministic {}, method {}, {} trial(s)){}\n",
                    v.format,
                    v.id,
                    v.file,
                    v.function
                        .as_ref()
                        .map(|f| format!(":{f}"))
                        .unwrap_or_default(),
                    v.verdict.name(),
                    v.deterministic.name(),
                    v.method,
                    v.trials,
                    v.expected
                        .map(|e| format!(
                            " expected {}",
                            if e { "equivalent" } else { "not_equivalent" }
                        ))
                        .unwrap_or_default()
                ));
                if let Some(c) = &v.counterexample {
                    s.push_str(&format!(
                        "  inputs: {}  original: {}  mutant: {}\n",
                        c["inputs"], c["a"], c["b"]
                    ));
                }
                for n in &v.notes {
                    s.push_str(&format!("  note: {n}\n"));
                }
            }
            s.push_str(&format!(
                "\n{} mutant(s) in {:.1} s ({:.1} per minute); verdicts {:?}\n",
                verdicts.len(),
                seconds,
                per_minute,
                counts
            ));
            if det.total() > 0 {
                s.push_str(&tally_text("deterministic", &det));
                if !args.no_llm {
                    s.push_str(&tally_text("hybrid", &hybrid));
                }
                for (lang, (d, h)) in &by_lang {
                    s.push_str(&tally_text(&format!("  {lang} deterministic"), d));
                    if !args.no_llm {
                        s.push_str(&tally_text(&format!("  {lang} hybrid"), h));
                    }
                }
            }
            s
        }
    };
    super::print_stdout(&text)?;
    Ok(0)
}
