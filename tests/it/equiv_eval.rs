//! Evaluation of `crosscheck equiv --no-llm` on EqBench and MutantBench (ignored: minutes of
//! compiling and running). The data is read at run time from
//! `CARGO_MANIFEST_DIR/../shared/datasets` (or `EQUIV_DATASETS`); nothing is copied.
//!
//! ```text
//! cargo test --test it equiv_eval:: -- --ignored --nocapture
//! EQUIV_EVAL_LIMIT=100 EQUIV_EVAL_TRIALS=100 cargo test --test it equiv_eval::eqbench -- --ignored --nocapture
//! EQUIV_EVAL_LANG=c EQUIV_EVAL_VERBOSE=1 cargo test --test it equiv_eval::eqbench -- --ignored --nocapture
//! ```
//!
//! Printed per benchmark and language: accuracy overall, on equivalent pairs (`equivalent`,
//! `bounded_equivalent` or `likely_equivalent` is right), on non-equivalent pairs (`not_equivalent` is right), the
//! decision gap `Acc(non-equivalent) - Acc(equivalent)` (research notes, section 2), and how
//! many verdicts were `unknown` (counted as wrong).

use crosscheck::exec::mutants::{eqbench_entries, eqbench_pair, first_defined};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::{Language, ParsedFile};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn datasets() -> PathBuf {
    std::env::var("EQUIV_DATASETS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run_equiv(a: &str, b: &str, trials: usize) -> String {
    // A file named without a function is a program whose description names none of its
    // functions: it is compared entry point by entry point.
    let whole = !a.contains(".java:") && !a.contains(".c:");
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json", "--timeout", "60"])
        .args(["--trials", &trials.to_string()])
        .args(whole.then_some("--all-entries"))
        .arg(a)
        .arg(b)
        .output();
    match out {
        Ok(o) if o.status.success() => serde_json::from_slice::<Value>(&o.stdout)
            .ok()
            .and_then(|v| v["verdict"].as_str().map(String::from))
            .unwrap_or_else(|| "unknown".into()),
        _ => "error".into(),
    }
}

#[derive(Default, Debug)]
struct Tally {
    eq_right: usize,
    eq_total: usize,
    neq_right: usize,
    neq_total: usize,
    unknown: usize,
    proved: usize,
}

impl Tally {
    fn add(&mut self, equivalent: bool, verdict: &str) {
        if verdict == "unknown" || verdict == "error" {
            self.unknown += 1;
        }
        if verdict == "equivalent" {
            self.proved += 1;
        }
        if equivalent {
            self.eq_total += 1;
            if matches!(
                verdict,
                "equivalent" | "bounded_equivalent" | "likely_equivalent"
            ) {
                self.eq_right += 1;
            }
        } else {
            self.neq_total += 1;
            if verdict == "not_equivalent" {
                self.neq_right += 1;
            }
        }
    }
    fn report(&self, name: &str) {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        let acc_eq = pct(self.eq_right, self.eq_total);
        let acc_neq = pct(self.neq_right, self.neq_total);
        println!(
            "{name}: n={} accuracy {:.1}% | equivalent {:.1}% ({}/{}) | non-equivalent {:.1}% ({}/{}) | gap {:+.1} pts | unknown {} | proved {}",
            self.eq_total + self.neq_total,
            pct(self.eq_right + self.neq_right, self.eq_total + self.neq_total),
            acc_eq,
            self.eq_right,
            self.eq_total,
            acc_neq,
            self.neq_right,
            self.neq_total,
            acc_neq - acc_eq,
            self.unknown,
            self.proved
        );
    }
}

/// Runs jobs on two workers and returns their results in order.
fn parallel<T: Send + Sync, R: Send>(jobs: Vec<T>, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = env_usize("EQUIV_EVAL_WORKERS", 2).max(1);
    let indexed: Vec<(usize, T)> = jobs.into_iter().enumerate().collect();
    let mut buckets: Vec<Vec<&(usize, T)>> = (0..workers).map(|_| Vec::new()).collect();
    for (k, j) in indexed.iter().enumerate() {
        buckets[k % workers].push(j);
    }
    let mut out: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = buckets
            .iter()
            .map(|b| {
                let f = &f;
                s.spawn(move || b.iter().map(|(i, j)| (*i, f(j))).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// `FILE:function` for the first entry the description names that the file defines (the one
/// rule `crosscheck mutants --eqbench` uses), else the bare file (compared entry point by entry
/// point, as `crosscheck mutants --eqbench` does).
fn with_function(path: &Path, lang: Language, desc: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match first_defined(&text, lang, &eqbench_entries(desc)) {
        Some(f) => format!("{}:{f}", path.display()),
        None => path.display().to_string(),
    }
}

#[test]
#[ignore]
fn eqbench() {
    let root = datasets().join("eqbench/benchmarks");
    assert!(root.is_dir(), "EqBench not found at {}", root.display());
    let mut pairs: Vec<(PathBuf, bool)> = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if name == "Eq" || name == "Neq" {
                    pairs.push((p.clone(), name == "Eq"));
                } else {
                    stack.push(p);
                }
            }
        }
    }
    pairs.sort();
    let limit = env_usize("EQUIV_EVAL_LIMIT", pairs.len());
    let trials = env_usize("EQUIV_EVAL_TRIALS", 200);
    // An even spread over the benchmark when limited.
    let step = (pairs.len() / limit.max(1)).max(1);
    let pairs: Vec<(PathBuf, bool)> = pairs.into_iter().step_by(step).take(limit).collect();
    for (lang, ext, desc) in [
        (Language::Java, "java", "J-Desc.json"),
        (Language::C, "c", "C-Desc.json"),
    ] {
        // `EQUIV_EVAL_LANG=c` (or `java`) evaluates one language only.
        if std::env::var("EQUIV_EVAL_LANG").is_ok_and(|l| l != ext) {
            continue;
        }
        let verdicts = parallel(pairs.clone(), |(dir, _)| {
            let (old, new) = eqbench_pair(dir, ext);
            run_equiv(
                &with_function(&old, lang, &dir.join(desc)),
                &with_function(&new, lang, &dir.join(desc)),
                trials,
            )
        });
        let mut t = Tally::default();
        for ((dir, eq), v) in pairs.iter().zip(&verdicts) {
            t.add(*eq, v);
            if std::env::var("EQUIV_EVAL_VERBOSE").is_ok() {
                println!(
                    "  {} {} -> {v}",
                    dir.display(),
                    if *eq { "Eq" } else { "Neq" }
                );
            }
        }
        t.report(&format!("EqBench {ext}"));
    }
}

/// Applies a unified diff (hunks with old-file line numbers) to a text.
fn apply_diff(text: &str, diff: &str) -> Option<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut offset: isize = 0;
    let mut hunk_start: Option<usize> = None;
    let mut removed: Vec<String> = Vec::new();
    let mut added: Vec<String> = Vec::new();
    let mut hunks: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    for l in diff.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            if let Some(s) = hunk_start.take() {
                hunks.push((s, std::mem::take(&mut removed), std::mem::take(&mut added)));
            }
            let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            hunk_start = Some(num.parse().ok()?);
        } else if let Some(r) = l.strip_prefix('-') {
            removed.push(r.to_string());
        } else if let Some(a) = l.strip_prefix('+') {
            added.push(a.to_string());
        }
    }
    if let Some(s) = hunk_start {
        hunks.push((s, removed, added));
    }
    for (start, rem, add) in hunks {
        let at = (start as isize - 1 + offset) as usize;
        let at = if rem.is_empty() { at + 1 } else { at };
        if at > lines.len() || at + rem.len() > lines.len() {
            return None;
        }
        for (k, r) in rem.iter().enumerate() {
            if lines[at + k].trim_end() != r.trim_end() {
                return None;
            }
        }
        lines.splice(at..at + rem.len(), add.iter().cloned());
        offset += add.len() as isize - rem.len() as isize;
    }
    Some(lines.join("\n") + "\n")
}

#[test]
#[ignore]
fn mutantbench() {
    let root = datasets().join("mutantbench");
    let text = std::fs::read_to_string(root.join("mutants.jsonl")).expect("mutants.jsonl");
    let mut mutants: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    mutants.sort_by(|a, b| a["mutant_id"].as_str().cmp(&b["mutant_id"].as_str()));
    let limit = env_usize("EQUIV_EVAL_LIMIT", 200);
    let trials = env_usize("EQUIV_EVAL_TRIALS", 200);
    // Balanced sample: the first `limit/2` equivalent and non-equivalent mutants by id.
    let mut sample: Vec<Value> = Vec::new();
    for want in [true, false] {
        sample.extend(
            mutants
                .iter()
                .filter(|m| m["equivalent"].as_bool() == Some(want))
                .take(limit / 2)
                .cloned(),
        );
    }
    let work = std::env::temp_dir().join(format!("crosscheck-mutantbench-{}", std::process::id()));
    let verdicts = parallel(sample.clone(), |m| {
        let program = m["program"].as_str().unwrap_or("");
        let lang = if program.ends_with(".java") {
            Language::Java
        } else {
            Language::C
        };
        let orig_path = root.join("programs").join(program);
        let orig = std::fs::read_to_string(&orig_path).unwrap_or_default();
        let Some(mutated) = apply_diff(&orig, m["difference"].as_str().unwrap_or("")) else {
            return "error".to_string();
        };
        let dir = work.join(m["mutant_id"].as_str().unwrap_or("x"));
        let _ = std::fs::create_dir_all(&dir);
        let mpath = dir.join(program);
        if std::fs::write(&mpath, &mutated).is_err() {
            return "error".into();
        }
        // The function around the first changed line.
        let line: usize = m["difference"]
            .as_str()
            .and_then(|d| d.strip_prefix("@@ -"))
            .map(|r| {
                r.chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect::<String>()
            })
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let file = ParsedFile::parse(lang, orig.clone());
        let func = collect_functions(&file)
            .into_iter()
            .filter(|f| f.start_line <= line && line <= f.end_line)
            .min_by_key(|f| f.end_line - f.start_line)
            .map(|f| f.simple_name);
        let Some(func) = func else {
            return "unknown".into();
        };
        run_equiv(
            &format!("{}:{func}", orig_path.display()),
            &format!("{}:{func}", mpath.display()),
            trials,
        )
    });
    let _ = std::fs::remove_dir_all(&work);
    for lang in ["java", "c", "all"] {
        let mut t = Tally::default();
        for (m, v) in sample.iter().zip(&verdicts) {
            if lang == "all" || m["language"].as_str() == Some(lang) {
                t.add(m["equivalent"].as_bool().unwrap_or(false), v);
            }
        }
        t.report(&format!("MutantBench {lang}"));
    }
}
