//! Data-set readers: each turns a public benchmark (read in place under the directory given on
//! the command line, never copied) into [`EvalItem`]s, plus our own JSONL format.
//!
//! | name | folder | task(s) | gold |
//! |---|---|---|---|
//! | `core` | `core_bench/` | data_dependency; cfg, call_graph, ast on the same functions | CoRe labels (data dependency), our analyzer (graphs) |
//! | `owasp` | `owasp_benchmark_java/` | taint (the test file) | `expectedresults-1.2.csv`: real vulnerability of the test's category, true/false |
//! | `securibench` | `securibench_micro/` | taint (the servlet file) | the `/* BAD */` and `/* OK */` sink lines |
//! | `pyt` | `pyt_examples/` | taint (the example file) | PyT's expected vulnerability count (default trigger words) |
//! | `ptaben` | `ptaben/src/basic_c_tests/` | points_to (each function with alias assertions) | its `MUSTALIAS`/`MAYALIAS`/`NOALIAS` assertions |
//! | `mutantbench` | `mutantbench/` | equivalent_mutant | `equivalent` per mutant |
//! | `eqbench` | `eqbench/` | equivalence (Java `oldV`/`newV`) | the `Eq`/`Neq` folder |
//! | `flakycat` | `flakycat/` | flaky_root_cause | the expert category |
//!
//! Items come out sorted by (task, id) so `--limit` and `--sample` are reproducible.
//!
//! # Our JSONL format (`--jsonl FILE`)
//!
//! One JSON object per line (blank lines and lines starting with `#` are skipped):
//!
//! ```text
//! {"id": "abs-1", "task": "data_dependency", "language": "python",
//!  "code": "def f(a):\n    b = a + 1\n    return b\n", "function": "f",
//!  "gold": {"kind": "dependencies", "pairs": [["b", "a"]]},
//!  "dataset": "mine", "project": "demo"}
//! ```
//!
//! `id`, `task`, `language`, `code` and `gold` are required; `dataset` defaults to `jsonl`,
//! `project` to the dataset; `function` names the function to ask about (default: the first
//! named one); `code_b` is the second program of `equivalence` / `equivalent_mutant` items.
//! `gold` is `{"kind": "analyzer"}` (our analyzer is the reference: cfg, call_graph, ast,
//! taint, points_to), `{"kind": "dependencies", "pairs": [[target, source], ...]}` (the
//! positive pairs; other asked pairs are negative), `{"kind": "label", "label": L}` with a
//! flaky category (`async_wait`, ...) or `equivalent` / `not_equivalent`, or one of the taint
//! and points-to labels of [`super::labels`]: `{"kind": "taint_verdict", "category": C,
//! "vulnerable": B}`, `{"kind": "sink_lines", "bad": [L, ...], "ok": [L, ...]}`,
//! `{"kind": "vuln_count", "count": N}`, `{"kind": "alias_assertions", "assertions":
//! [{"line": L, "kind": "MAYALIAS", "a": "p", "b": "q"}, ...]}`. `crosscheck schema
//! eval-item` prints the JSON Schema ([`EVAL_ITEM_SCHEMA`]).

use super::{labels, EvalItem, Gold, EQUIVALENT, NOT_EQUIVALENT};
use crate::analysis::flaky::Category;
use crate::crosscheck::task::Task;
use crate::syntax::functions::collect_functions;
use crate::syntax::{Language, ParsedFile};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The data sets this module reads: (name, folder under the data-set directory).
pub const DATASETS: [(&str, &str); 8] = [
    ("core", "core_bench"),
    ("owasp", "owasp_benchmark_java"),
    ("securibench", "securibench_micro"),
    ("pyt", "pyt_examples"),
    ("ptaben", "ptaben"),
    ("mutantbench", "mutantbench"),
    ("eqbench", "eqbench"),
    ("flakycat", "flakycat"),
];

/// Source files larger than this are skipped (an LLM prompt could not hold them anyway).
pub const MAX_ITEM_BYTES: usize = 200_000;

/// The JSON Schema of one line of our JSONL format.
pub const EVAL_ITEM_SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "crosscheck eval item",
  "type": "object",
  "required": ["id", "task", "language", "code", "gold"],
  "properties": {
    "id": {"type": "string"},
    "dataset": {"type": "string"},
    "project": {"type": "string"},
    "task": {"enum": ["ast", "cfg", "call_graph", "data_dependency", "taint", "points_to",
                      "equivalent_mutant", "equivalence", "flaky_root_cause"]},
    "language": {"enum": ["python", "java", "c", "cpp", "javascript", "typescript", "solidity"]},
    "code": {"type": "string"},
    "code_b": {"type": "string"},
    "function": {"type": "string"},
    "gold": {
      "oneOf": [
        {"type": "object", "required": ["kind"], "properties": {"kind": {"const": "analyzer"}}},
        {"type": "object", "required": ["kind", "pairs"], "properties": {
          "kind": {"const": "dependencies"},
          "pairs": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
                                                "minItems": 2, "maxItems": 2}}}},
        {"type": "object", "required": ["kind", "label"], "properties": {
          "kind": {"const": "label"}, "label": {"type": "string"}}},
        {"type": "object", "required": ["kind", "category", "vulnerable"], "properties": {
          "kind": {"const": "taint_verdict"}, "category": {"type": "string"},
          "vulnerable": {"type": "boolean"}}},
        {"type": "object", "required": ["kind", "bad", "ok"], "properties": {
          "kind": {"const": "sink_lines"},
          "bad": {"type": "array", "items": {"type": "integer", "minimum": 1}},
          "ok": {"type": "array", "items": {"type": "integer", "minimum": 1}}}},
        {"type": "object", "required": ["kind", "count"], "properties": {
          "kind": {"const": "vuln_count"}, "count": {"type": "integer", "minimum": 0}}},
        {"type": "object", "required": ["kind", "assertions"], "properties": {
          "kind": {"const": "alias_assertions"},
          "assertions": {"type": "array", "items": {"type": "object",
            "required": ["line", "kind", "a", "b"], "properties": {
              "line": {"type": "integer", "minimum": 1},
              "kind": {"enum": ["MUSTALIAS", "MAYALIAS", "NOALIAS"]},
              "a": {"type": "string"}, "b": {"type": "string"}}}}}}
      ]
    }
  }
}
"#;

fn read(path: &Path, errors: &mut Vec<String>) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() as usize > MAX_ITEM_BYTES => {
            errors.push(format!(
                "{}: larger than {MAX_ITEM_BYTES} bytes; skipped",
                path.display()
            ));
            return None;
        }
        _ => {}
    }
    match std::fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => {
            errors.push(format!("{}: {e}", path.display()));
            None
        }
    }
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Reads the named data sets (all of them when `names` is empty) from `root`. Missing data
/// sets are reported in `errors` and skipped.
pub fn load_datasets(root: &Path, names: &[String], errors: &mut Vec<String>) -> Vec<EvalItem> {
    let mut items = Vec::new();
    for (name, folder) in DATASETS {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        let dir = root.join(folder);
        if !dir.is_dir() {
            errors.push(format!("{name}: not found at {}; skipped", dir.display()));
            continue;
        }
        let mut got = match name {
            "core" => read_core(&dir, errors),
            "owasp" => read_owasp(&dir, errors),
            "securibench" => read_securibench(&dir, errors),
            "pyt" => read_pyt(&dir, errors),
            "ptaben" => read_ptaben(&dir, errors),
            "mutantbench" => read_mutantbench(&dir, errors),
            "eqbench" => read_eqbench(&dir, errors),
            _ => read_flakycat(&dir, errors),
        };
        got.sort_by(|a, b| (a.task, &a.id).cmp(&(b.task, &b.id)));
        items.extend(got);
    }
    for n in names {
        if !DATASETS.iter().any(|(d, _)| d == n) {
            errors.push(format!(
                "unknown data set `{n}` (known: {})",
                DATASETS.map(|d| d.0).join(", ")
            ));
        }
    }
    items
}

#[derive(Deserialize)]
struct JsonlItem {
    id: String,
    task: String,
    language: String,
    code: String,
    gold: Gold,
    #[serde(default)]
    dataset: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    code_b: Option<String>,
    #[serde(default)]
    function: Option<String>,
}

/// Parses our JSONL format (module docs). Bad lines are reported with their line number and
/// skipped.
pub fn parse_jsonl(text: &str, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let raw: JsonlItem = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                errors.push(format!("line {}: {e}", i + 1));
                continue;
            }
        };
        let Some(task) = Task::from_name(&raw.task) else {
            errors.push(format!("line {}: unknown task `{}`", i + 1, raw.task));
            continue;
        };
        if !super::RUNNABLE_TASKS.contains(&task) {
            errors.push(format!(
                "line {}: task `{}` cannot be evaluated",
                i + 1,
                raw.task
            ));
            continue;
        }
        let Some(language) = Language::from_name(&raw.language) else {
            errors.push(format!(
                "line {}: unknown language `{}`",
                i + 1,
                raw.language
            ));
            continue;
        };
        let dataset = raw.dataset.unwrap_or_else(|| "jsonl".to_string());
        items.push(EvalItem {
            project: raw.project.unwrap_or_else(|| dataset.clone()),
            dataset,
            id: raw.id,
            task,
            language,
            code: raw.code,
            code_b: raw.code_b,
            function: raw.function,
            gold: raw.gold,
        });
    }
    items
}

// ---------------------------------------------------------------------------------------------
// CoRe (data dependency)

pub use crate::analysis::dataflow::VarLine;

/// One labelled node of a CoRe label file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CoreNode {
    /// False for a use (`reset: False`), true for a definition.
    pub reset: bool,
    pub datadep: BTreeSet<VarLine>,
    pub controldep_lines: BTreeSet<usize>,
}

fn parse_var_line(s: &str) -> Option<VarLine> {
    let mut it = s.split_whitespace();
    let var = it.next()?.trim_end_matches(':');
    let line = it.next()?.trim_end_matches(':').parse().ok()?;
    Some((var.to_string(), line))
}

/// Parses the small YAML subset of CoRe's label files (`variables:` with per-node `datadep`,
/// `controldep` and `reset`).
pub fn parse_core_label(text: &str) -> BTreeMap<VarLine, CoreNode> {
    let mut out: BTreeMap<VarLine, CoreNode> = BTreeMap::new();
    let mut in_vars = false;
    let mut current: Option<VarLine> = None;
    let mut section = "";
    for raw in text.lines() {
        let indent = raw.len() - raw.trim_start().len();
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if indent == 0 {
            in_vars = line.starts_with("variables:");
            current = None;
            continue;
        }
        if !in_vars {
            continue;
        }
        if let Some(item) = line.strip_prefix("- ") {
            if let (Some(cur), Some(dep)) = (&current, parse_var_line(item)) {
                let node = out.entry(cur.clone()).or_default();
                match section {
                    "datadep" => {
                        node.datadep.insert(dep);
                    }
                    "controldep" => {
                        node.controldep_lines.insert(dep.1);
                    }
                    _ => {}
                }
            }
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            match key.trim() {
                "datadep" => section = "datadep",
                "controldep" => section = "controldep",
                "reset" => {
                    if let Some(cur) = &current {
                        out.entry(cur.clone()).or_default().reset = value.trim() != "False";
                    }
                    section = "";
                }
                k => {
                    if let Some(vl) = parse_var_line(k) {
                        out.entry(vl.clone()).or_default().reset = true;
                        current = Some(vl);
                        section = "";
                    }
                }
            }
        }
    }
    out
}

/// `codenet_p00127_s030774702_ope_line_5_39` -> (5, 39): the labelled function's lines.
pub fn core_function_lines(stem: &str) -> Option<(usize, usize)> {
    let mut parts = stem.rsplitn(3, '_');
    let end = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    Some((start, end))
}

/// The variable-level transitive relation of CoRe's direct labels: `(T, S)` when some labelled
/// node of `T` reaches a node of `S` through `datadep` edges (`Null` nodes ignored, `T != S`).
/// Only variables with a labelled node are targets. Iterative (no recursion).
pub fn core_transitive_pairs(labels: &BTreeMap<VarLine, CoreNode>) -> BTreeSet<(String, String)> {
    let mut pairs = BTreeSet::new();
    for start in labels.keys() {
        if start.0 == "Null" {
            continue;
        }
        let mut seen: BTreeSet<&VarLine> = BTreeSet::new();
        let mut stack: Vec<&VarLine> = vec![start];
        while let Some(n) = stack.pop() {
            if let Some(node) = labels.get(n) {
                for d in &node.datadep {
                    if d.0 != "Null" && seen.insert(d) {
                        stack.push(d);
                    }
                }
            }
        }
        for s in seen {
            if s.0 != start.0 {
                pairs.insert((start.0.clone(), s.0.clone()));
            }
        }
    }
    pairs
}

/// The variables CoRe labels as targets (any node), for restricting questions.
pub fn core_targets(labels: &BTreeMap<VarLine, CoreNode>) -> BTreeSet<String> {
    labels
        .keys()
        .filter(|k| k.0 != "Null")
        .map(|k| k.0.clone())
        .collect()
}

fn read_core(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let mut items = Vec::new();
    for (sub, ext, lang) in [
        ("C", "c", Language::C),
        ("Java", "java", Language::Java),
        ("Python", "py", Language::Python),
    ] {
        let root = dir.join("raw_annotation").join(sub);
        for label_path in sorted_dir(&root.join("label")) {
            let Some(stem) = label_path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let Some((start, end)) = core_function_lines(stem) else {
                continue;
            };
            let code_path = root.join("code").join(format!("{stem}.{ext}"));
            let (Some(label), Some(code)) = (read(&label_path, errors), read(&code_path, errors))
            else {
                continue;
            };
            let labels = parse_core_label(&label);
            // The label names the function's first and last lines (a C return type may sit on
            // the line before).
            let file = ParsedFile::parse(lang, code.clone());
            let function = collect_functions(&file)
                .iter()
                .filter(|f| f.start_line <= start && f.end_line >= end)
                .min_by_key(|f| f.end_line - f.start_line)
                .map(|f| f.name.clone());
            let Some(function) = function else {
                errors.push(format!("core: {stem}: labelled function not found"));
                continue;
            };
            let pairs: Vec<(String, String)> = core_transitive_pairs(&labels).into_iter().collect();
            let base = EvalItem {
                dataset: "core".into(),
                id: format!("{sub}/{stem}"),
                task: Task::DataDependency,
                language: lang,
                project: sub.to_string(),
                code,
                code_b: None,
                function: Some(function),
                gold: Gold::Dependencies { pairs },
            };
            for task in [Task::Cfg, Task::CallGraph, Task::Ast] {
                items.push(EvalItem {
                    task,
                    gold: Gold::Analyzer,
                    ..base.clone()
                });
            }
            items.push(base);
        }
    }
    items
}

// ---------------------------------------------------------------------------------------------
// Taint: OWASP Benchmark, SecuriBench Micro, PyT examples (scored against their own labels)

fn taint_item(
    dataset: &str,
    id: String,
    project: String,
    lang: Language,
    code: String,
    gold: Gold,
) -> EvalItem {
    EvalItem {
        dataset: dataset.into(),
        id,
        task: Task::Taint,
        language: lang,
        project,
        code,
        code_b: None,
        function: None,
        gold,
    }
}

fn read_owasp(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let Some(csv) = read(&dir.join("expectedresults-1.2.csv"), errors) else {
        return Vec::new();
    };
    let mut items = Vec::new();
    for case in labels::parse_owasp_expected(&csv) {
        let path = dir.join("testcode").join(format!("{}.java", case.name));
        if let Some(code) = read(&path, errors) {
            items.push(taint_item(
                "owasp",
                case.name,
                case.category.clone(),
                Language::Java,
                code,
                Gold::TaintVerdict {
                    category: case.category,
                    vulnerable: case.vulnerable,
                },
            ));
        }
    }
    items
}

fn read_securibench(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let Some(csv) = read(&dir.join("testcases.csv"), errors) else {
        return Vec::new();
    };
    let mut items = Vec::new();
    for line in csv.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        let (Some(file), Some(group)) = (cols.first(), cols.get(1)) else {
            continue;
        };
        if let Some(code) = read(&dir.join(file), errors) {
            let id = Path::new(file)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or(file)
                .to_string();
            let marks = labels::sink_line_labels(&code);
            items.push(taint_item(
                "securibench",
                id,
                group.to_string(),
                Language::Java,
                code,
                Gold::SinkLines {
                    bad: marks.bad.into_iter().collect(),
                    ok: marks.ok.into_iter().collect(),
                },
            ));
        }
    }
    items
}

fn read_pyt(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let Some(csv) = read(&dir.join("expected_vulnerability_counts.csv"), errors) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::new();
    let mut items = Vec::new();
    // The counts of PyT's position test use another trigger-word file: not ours to match.
    for case in labels::parse_pyt_counts(&csv)
        .into_iter()
        .filter(|c| c.class != labels::PYT_POSITION_CLASS)
    {
        if !seen.insert(case.file.clone()) {
            continue;
        }
        if let Some(code) = read(&dir.join(&case.file), errors) {
            let project = Path::new(&case.file)
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|s| s.to_str())
                .unwrap_or("examples")
                .to_string();
            items.push(taint_item(
                "pyt",
                case.file,
                project,
                Language::Python,
                code,
                Gold::VulnCount { count: case.count },
            ));
        }
    }
    items
}

// ---------------------------------------------------------------------------------------------
// PTABen (points-to, Andersen's basic_c_tests)

fn read_ptaben(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let mut by_file: BTreeMap<String, Vec<labels::AliasAssertion>> = BTreeMap::new();
    if let Some(csv) = read_unbounded(&dir.join("alias_assertions.csv"), errors) {
        for (file, a) in labels::parse_alias_assertions(&csv) {
            by_file.entry(file).or_default().push(a);
        }
    }
    let mut items = Vec::new();
    for path in sorted_dir(&dir.join("src").join("basic_c_tests")) {
        if path.extension().is_none_or(|e| e != "c") {
            continue;
        }
        let Some(name) = path.file_name().and_then(|s| s.to_str()) else {
            continue;
        };
        let Some(rows) = by_file.get(&format!("src/basic_c_tests/{name}")) else {
            continue;
        };
        let Some(code) = read(&path, errors) else {
            continue;
        };
        let file = ParsedFile::parse(Language::C, code.clone());
        // One item per function holding assertions (the points-to question is about one
        // function); rows outside every function (prototypes) are not assertions.
        let mut per_function: BTreeMap<String, Vec<labels::AliasAssertion>> = BTreeMap::new();
        for call in labels::alias_calls(&file) {
            let Some(function) = call.function else {
                continue;
            };
            if let Some(row) = rows
                .iter()
                .find(|r| r.line == call.line && r.kind == call.kind)
            {
                per_function.entry(function).or_default().push(row.clone());
            }
        }
        for (function, mut assertions) in per_function {
            assertions.sort();
            items.push(EvalItem {
                dataset: "ptaben".into(),
                id: format!("{name}:{function}"),
                task: Task::PointsTo,
                language: Language::C,
                project: "basic_c_tests".into(),
                code: code.clone(),
                code_b: None,
                function: Some(function),
                gold: Gold::AliasAssertions { assertions },
            });
        }
    }
    items
}

// ---------------------------------------------------------------------------------------------
// MutantBench (equivalent mutants)

/// Applies a unified diff (hunks `@@ -a[,b] +c[,d] @@` with ` `, `-`, `+` lines) to `text`.
/// Like `patch`, a hunk whose old lines are not at the stated line is looked for up to
/// [`DIFF_FUZZ`] lines away (some MutantBench diffs are off by one). `None` when a hunk fits
/// nowhere.
pub fn apply_unified_diff(text: &str, diff: &str) -> Option<String> {
    let old: Vec<&str> = text.lines().collect();
    // (0-based start, [(op, line)])
    let mut hunks: Vec<(usize, Vec<(char, &str)>)> = Vec::new();
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("@@ -") {
            let start: usize = header.split([',', ' ']).next()?.parse().ok()?;
            hunks.push((start.saturating_sub(1), Vec::new()));
        } else if let Some((_, body)) = hunks.last_mut() {
            let mut chars = line.chars();
            match chars.next() {
                Some(op @ ('+' | '-' | ' ')) => body.push((op, chars.as_str())),
                Some('\\') | None => {}
                Some(_) => return None,
            }
        }
    }
    let mut out: Vec<String> = Vec::with_capacity(old.len() + 4);
    let mut cursor = 0usize; // next old line (0-based) not yet copied
    for (start, body) in &hunks {
        let olds: Vec<&str> = body
            .iter()
            .filter(|(op, _)| *op != '+')
            .map(|(_, l)| l.trim_end())
            .collect();
        let fits = |at: usize| {
            at >= cursor
                && olds
                    .iter()
                    .enumerate()
                    .all(|(i, l)| old.get(at + i).map(|o| o.trim_end()) == Some(*l))
        };
        let at = (0..=DIFF_FUZZ)
            .flat_map(|d| [start.checked_add(d), start.checked_sub(d)])
            .flatten()
            .find(|&at| fits(at))?;
        out.extend(old.get(cursor..at)?.iter().map(|s| s.to_string()));
        cursor = at;
        for (op, l) in body {
            match op {
                '+' => out.push(l.to_string()),
                '-' => cursor += 1,
                _ => {
                    out.push(l.to_string());
                    cursor += 1;
                }
            }
        }
    }
    out.extend(old.get(cursor..)?.iter().map(|s| s.to_string()));
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Some(s)
}

/// How far (in lines) a diff hunk may be from its stated line.
pub const DIFF_FUZZ: usize = 3;

fn read_mutantbench(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let Some(text) = read_unbounded(&dir.join("mutants.jsonl"), errors) else {
        return Vec::new();
    };
    let mut programs: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut items = Vec::new();
    let mut misfits: Vec<String> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(id), Some(program), Some(lang), Some(eq), Some(diff)) = (
            v["mutant_id"].as_str(),
            v["program"].as_str(),
            v["language"].as_str().and_then(Language::from_name),
            v["equivalent"].as_bool(),
            v["difference"].as_str(),
        ) else {
            continue;
        };
        let original = programs
            .entry(program.to_string())
            .or_insert_with(|| read(&dir.join("programs").join(program), errors))
            .clone();
        let Some(original) = original else {
            continue;
        };
        let Some(mutant) = apply_unified_diff(&original, diff) else {
            misfits.push(format!("{id} ({program})"));
            continue;
        };
        items.push(EvalItem {
            dataset: "mutantbench".into(),
            id: id.to_string(),
            task: Task::EquivalentMutant,
            language: lang,
            project: program.to_string(),
            code: original,
            code_b: Some(mutant),
            function: None,
            gold: Gold::Label {
                label: if eq { EQUIVALENT } else { NOT_EQUIVALENT }.to_string(),
            },
        });
    }
    if let Some(first) = misfits.first() {
        errors.push(format!(
            "mutantbench: {} mutant diff(s) do not apply to their program; skipped (first: {first})",
            misfits.len()
        ));
    }
    items
}

fn read_unbounded(path: &Path, errors: &mut Vec<String>) -> Option<String> {
    match std::fs::read(path) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(e) => {
            errors.push(format!("{}: {e}", path.display()));
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// EqBench (equivalence, Java versions)

fn read_eqbench(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let mut items = Vec::new();
    let root = dir.join("benchmarks");
    for bench in sorted_dir(&root) {
        for program in sorted_dir(&bench) {
            for verdict in ["Eq", "Neq"] {
                let d = program.join(verdict);
                let (a, b) = (d.join("oldV.java"), d.join("newV.java"));
                if !a.is_file() || !b.is_file() {
                    continue;
                }
                let (Some(code), Some(code_b)) = (read(&a, errors), read(&b, errors)) else {
                    continue;
                };
                let name = |p: &Path| {
                    p.file_name()
                        .and_then(|s| s.to_str())
                        .unwrap_or("?")
                        .to_string()
                };
                items.push(EvalItem {
                    dataset: "eqbench".into(),
                    id: format!("{}/{}/{verdict}", name(&bench), name(&program)),
                    task: Task::Equivalence,
                    language: Language::Java,
                    project: name(&bench),
                    code,
                    code_b: Some(code_b),
                    function: None,
                    gold: Gold::Label {
                        label: if verdict == "Eq" {
                            EQUIVALENT
                        } else {
                            NOT_EQUIVALENT
                        }
                        .to_string(),
                    },
                });
            }
        }
    }
    items
}

// ---------------------------------------------------------------------------------------------
// FlakyCat (flaky-test root cause)

/// Wraps a FlakyCat test body in a class so it parses as Java (as `tests/flaky_flakycat.rs`
/// does).
pub fn wrap_flakycat(code: &str) -> String {
    format!("class FlakyCatCase {{\n{code}\n}}\n")
}

fn read_flakycat(dir: &Path, errors: &mut Vec<String>) -> Vec<EvalItem> {
    let Some(text) = read_unbounded(&dir.join("flakycat_v0.jsonl"), errors) else {
        return Vec::new();
    };
    let mut items = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(id), Some(cat), Some(code)) = (
            v["test_id"].as_str(),
            v["category"].as_str().and_then(Category::from_name),
            v["code"].as_str(),
        ) else {
            continue;
        };
        items.push(EvalItem {
            dataset: "flakycat".into(),
            id: id.to_string(),
            task: Task::FlakyRootCause,
            language: Language::Java,
            project: v["project"].as_str().unwrap_or("flakycat").to_string(),
            code: wrap_flakycat(code),
            code_b: None,
            function: None,
            gold: Gold::Label {
                label: cat.name().to_string(),
            },
        });
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_core_label_files() {
        let text = "target_var: dy 23\nvariables:\n  dy 23:\n    datadep:\n      - flog 11\n      - i 21\n    controldep:\n      - Null 21\n  wfs 10:\n    reset: False\n    datadep:\n      - wfs 9 \n    controldep: Null\n  wfs 9:\n    datadep: Null\n    controldep: Null\n";
        let l = parse_core_label(text);
        assert_eq!(l.len(), 3);
        let dy = &l[&("dy".to_string(), 23)];
        assert!(dy.reset);
        assert_eq!(dy.datadep.len(), 2);
        assert_eq!(dy.controldep_lines, [21].into());
        assert!(!l[&("wfs".to_string(), 10)].reset);
        assert!(l[&("wfs".to_string(), 9)].datadep.is_empty());
        assert_eq!(
            core_function_lines("codenet_p00127_s030774702_ope_line_5_39"),
            Some((5, 39))
        );
    }

    #[test]
    fn core_gold_is_transitive_over_variables() {
        // c 5 <- b 4 <- a 3: c depends on b and (transitively) on a.
        let text = "variables:\n  c 5:\n    datadep:\n      - b 4\n  b 4:\n    datadep:\n      - a 3\n  a 3:\n    datadep: Null\n";
        let pairs = core_transitive_pairs(&parse_core_label(text));
        let want: BTreeSet<(String, String)> = [("b", "a"), ("c", "a"), ("c", "b")]
            .iter()
            .map(|(x, y)| (x.to_string(), y.to_string()))
            .collect();
        assert_eq!(pairs, want);
    }

    #[test]
    fn unified_diffs_apply_and_misfits_are_refused() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(
            apply_unified_diff(text, "@@ -2 +2 @@\n-b\n+B\n").as_deref(),
            Some("a\nB\nc\nd\n")
        );
        assert_eq!(
            apply_unified_diff(text, "@@ -2,2 +2,3 @@\n b\n-c\n+x\n+y\n").as_deref(),
            Some("a\nb\nx\ny\nd\n")
        );
        assert_eq!(apply_unified_diff(text, "@@ -2 +2 @@\n-z\n+B\n"), None);
        assert_eq!(apply_unified_diff(text, "@@ -9 +9 @@\n-z\n"), None);
        // Off by one, as some MutantBench diffs are: found one line away.
        assert_eq!(
            apply_unified_diff(text, "@@ -3 +3 @@\n-b\n+B\n").as_deref(),
            Some("a\nB\nc\nd\n")
        );
    }

    #[test]
    fn jsonl_lines_are_read_and_bad_ones_reported() {
        let text = concat!(
            "# a comment\n",
            r#"{"id":"1","task":"flaky_root_cause","language":"java","code":"class A{}","gold":{"kind":"label","label":"time"}}"#,
            "\n",
            r#"{"id":"2","task":"expression_match","language":"java","code":"","gold":{"kind":"analyzer"}}"#,
            "\n",
            "not json\n",
        );
        let mut errors = Vec::new();
        let items = parse_jsonl(text, &mut errors);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].dataset, "jsonl");
        assert_eq!(items[0].project, "jsonl");
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("line 3"), "{errors:?}");
    }
}
