//! Precision / recall / F1 of the direct data dependencies against the CoRe benchmark's
//! human labels (`raw_annotation/{C,Java,Python}/{code,label}`), per language.
//!
//! Not run by default: `cargo test --test dataflow_core_bench -- --ignored --nocapture`.
//! Skipped (passes trivially with a notice) when the dataset is not at
//! `../shared/datasets/core_bench` relative to the crate root (or `$CORE_BENCH_DIR`).
//!
//! Each label file lists nodes `var line` with `datadep` sources. A node whose `reset` is
//! false is a *use* (compared with [`DataFlow::use_definitions`]); any other node is a
//! *definition* (compared with [`DataFlow::direct_dependencies`]), unless the analysis only
//! sees a use of that variable on that line (some labels omit `reset: False`). `Null` nodes (conditions
//! without variables) have no data dependencies and are skipped. Scores are micro-averaged
//! over dependency edges of the labelled nodes; a labelled node we do not report counts its
//! labelled edges as misses.

use crosscheck::analysis::dataflow::{analyze_data_flow, DataFlow, VarLine};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The label parser and line helper live in the eval harness's CoRe adapter.
use crosscheck::eval::adapters::{
    core_function_lines as function_lines, parse_core_label as parse_label,
};

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
    nodes: usize,
    exact: usize,
}

impl Counts {
    fn add(&mut self, pred: &BTreeSet<VarLine>, gold: &BTreeSet<VarLine>) {
        self.tp += pred.intersection(gold).count();
        self.fp += pred.difference(gold).count();
        self.fn_ += gold.difference(pred).count();
        self.nodes += 1;
        self.exact += usize::from(pred == gold);
    }
    fn merge(&mut self, o: Counts) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
        self.nodes += o.nodes;
        self.exact += o.exact;
    }
    fn prf(&self) -> (f64, f64, f64) {
        let p = if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        };
        let r = if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        };
        let f = if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        };
        (p, r, f)
    }
}

/// `$CORE_BENCH_DIR` if set, else `../shared/datasets/core_bench` from the crate root.
fn dataset_root() -> PathBuf {
    std::env::var_os("CORE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/core_bench")
        })
        .join("raw_annotation")
}

struct LangScore {
    defs: Counts,
    uses: Counts,
    control: Counts,
    files: usize,
    unmatched: usize,
}

fn score_language(dir: &str, ext: &str, lang: Language, verbose: bool) -> LangScore {
    let root = dataset_root().join(dir);
    let mut names: Vec<PathBuf> = std::fs::read_dir(root.join("label"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names.sort();
    let mut score = LangScore {
        defs: Counts::default(),
        uses: Counts::default(),
        control: Counts::default(),
        files: 0,
        unmatched: 0,
    };
    for label_path in names {
        let Some(stem) = label_path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let code_path = root.join("code").join(format!("{stem}.{ext}"));
        let (Ok(label), Ok(code)) = (
            std::fs::read_to_string(&label_path),
            std::fs::read_to_string(&code_path),
        ) else {
            continue;
        };
        let Some((start, end)) = function_lines(stem) else {
            continue;
        };
        let labels = parse_label(&label);
        let file = ParsedFile::parse(lang, code);
        let funcs = collect_functions(&file);
        // The label names the function's first and last lines (the declaration may start a
        // line earlier, e.g. a C return type on its own line).
        let Some(func) = funcs
            .iter()
            .filter(|f| f.start_line <= start && f.end_line >= end)
            .min_by_key(|f| f.end_line - f.start_line)
        else {
            score.unmatched += 1;
            continue;
        };
        score.files += 1;
        let df: DataFlow = analyze_data_flow(&file, func, &Cancel::never());
        let mut file_counts = (Counts::default(), Counts::default());
        for (key, node) in &labels {
            if key.0 == "Null" {
                continue;
            }
            // Some labels omit `reset: False` on uses: a node we see only as a use is scored
            // as one.
            let as_def = node.reset && df.direct_dependencies().contains_key(key);
            let as_use = !as_def && df.use_definitions().contains_key(key);
            let (pred, counts) = if as_def || (node.reset && !as_use) {
                (df.direct_dependencies().get(key), &mut file_counts.0)
            } else {
                (df.use_definitions().get(key), &mut file_counts.1)
            };
            let pred = pred.cloned().unwrap_or_default();
            if verbose && pred != node.datadep {
                let missing: Vec<_> = node.datadep.difference(&pred).collect();
                let extra: Vec<_> = pred.difference(&node.datadep).collect();
                println!(
                    "  {stem} {}{}@{}: missing {missing:?} extra {extra:?}",
                    if node.reset { "def " } else { "use " },
                    key.0,
                    key.1
                );
            }
            counts.add(&pred, &node.datadep);
            let cd: BTreeSet<VarLine> = df
                .control_dependencies()
                .get(key)
                .map(|s| s.iter().map(|&l| (String::new(), l)).collect())
                .unwrap_or_default();
            let gold_cd: BTreeSet<VarLine> = node
                .controldep_lines
                .iter()
                .map(|&l| (String::new(), l))
                .collect();
            score.control.add(&cd, &gold_cd);
        }
        score.defs.merge(file_counts.0);
        score.uses.merge(file_counts.1);
    }
    score
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn core_bench_direct_data_dependencies() {
    if !dataset_root().is_dir() {
        eprintln!(
            "CoRe dataset not found at {}; skipped",
            dataset_root().display()
        );
        return;
    }
    let verbose = std::env::var_os("CORE_BENCH_VERBOSE").is_some();
    let mut total = Counts::default();
    println!("language  files  defs(P/R/F1, exact)        uses(P/R/F1, exact)        all F1   control F1");
    for (dir, ext, lang) in [
        ("C", "c", Language::C),
        ("Java", "java", Language::Java),
        ("Python", "py", Language::Python),
    ] {
        let s = score_language(dir, ext, lang, verbose);
        let mut all = s.defs;
        all.merge(s.uses);
        total.merge(all);
        let (dp, dr, df) = s.defs.prf();
        let (up, ur, uf) = s.uses.prf();
        let (_, _, af) = all.prf();
        let (_, _, cf) = s.control.prf();
        println!(
            "{dir:<8} {:>3}/{:<3} {dp:.3}/{dr:.3}/{df:.3} {:>3}/{:<3}  {up:.3}/{ur:.3}/{uf:.3} {:>3}/{:<3}  {af:.3}   {cf:.3}",
            s.files,
            s.files + s.unmatched,
            s.defs.exact,
            s.defs.nodes,
            s.uses.exact,
            s.uses.nodes,
        );
        assert_eq!(s.unmatched, 0, "{dir}: every labelled function is found");
        assert!(s.files >= 50, "{dir}: dataset files analysed");
        assert!(af >= 0.75, "{dir}: F1 {af:.3} regressed below 0.75");
    }
    let (p, r, f) = total.prf();
    println!(
        "overall  P {p:.3} R {r:.3} F1 {f:.3} over {} labelled nodes",
        total.nodes
    );
}
