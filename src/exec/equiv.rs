//! Are two functions equivalent? The orchestration shared by `crosscheck equiv`,
//! `crosscheck mutants` and the language server's equivalence code action ([`check`]).
//! Evidence, cheapest first:
//!
//! 1. a normalisation proof (same language; [`crate::analysis::equiv::normal`]): verdict
//!    `equivalent`, tier `confirmed`, method `normalisation`;
//! 2. a bounded symbolic check ([`crate::analysis::equiv::smt`], Z3): its candidate
//!    counterexample is the first input executed in step 3 (method `symbolic` when it is the
//!    one that differs); "no difference within the bounds" together with no difference in the
//!    trials gives `bounded_equivalent`, tier `analyzer-only`, method `bounded_smt`, with the
//!    bounds in the notes. Without execution the solver's answer is a note, or
//!    `bounded_equivalent`;
//! 3. differential testing in a sandbox ([`sandbox`], harnesses from [`harness`], inputs from
//!    [`crate::analysis::equiv::inputs`]): the first counterexample gives `not_equivalent`,
//!    tier `confirmed`, method `differential`; no difference after the trials gives
//!    `likely_equivalent` (tier `analyzer-only` unless a stable LLM majority agrees);
//! 4. the LLM (unless `--no-llm` or not configured): self-consistency samples of the
//!    `equivalence` / `equivalence_cross_language` prompts. It never overrides a proof or a
//!    counterexample; an LLM `not_equivalent` without a counterexample is `llm-only`.
//!
//! JSON form of an [`EquivReport`]:
//! `{"verdict", "tier", "method", "counterexample": {"inputs", "a", "b"} | null, "trials",
//! "llm": {...} | null}` where `trials` counts the inputs compared (inputs that hit undefined
//! behaviour, a timeout, or fall outside the common domain are discarded and not counted).
//! With [`EquivOptions::execute`] off (the language server without the user's consent) only the
//! proof runs and a failed proof is `unknown`.

use super::harness;
use super::sandbox::{self, Limits, TempDir};
use crate::analysis::equiv::inputs::{default_value, generate_hinted, Hints};
use crate::analysis::equiv::normal::{prove_program_equivalent, prove_versions_equivalent};
use crate::analysis::equiv::slice::{java_missing_type_stubs, java_reachable};
use crate::analysis::equiv::smt::{self, Bounds, Symbolic};
use crate::analysis::equiv::types::{
    common_domain, global_inputs, select_function, signature, Dom, Signature, Ty,
};
use crate::analysis::equiv::value::{compare, Cmp, Outcome, Sides, Value};
use crate::analysis::equiv::Verdict;
use crate::crosscheck::record::Tier;
use crate::crosscheck::tier::{decide_tier, Evidence, LlmStance, Origin};
use crate::syntax::functions::collect_functions;
use crate::syntax::{Cancel, Language, ParsedFile};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// One side of the comparison.
pub struct Side {
    pub path: PathBuf,
    pub text: String,
    pub language: Language,
    pub sig: Signature,
    /// The function's own text (for the LLM).
    pub function_text: String,
}

impl Side {
    /// `path: Class.name (lines 3-9)`.
    pub fn describe(&self) -> String {
        let name = match &self.sig.class {
            Some(c) => format!("{c}.{}", self.sig.name),
            None => self.sig.name.clone(),
        };
        format!(
            "{}: function {name} (line {})",
            self.path.display(),
            self.sig.start_line
        )
    }
}

/// Splits `FILE:function` (when FILE exists) from a plain file.
pub fn split_spec(spec: &str) -> (PathBuf, Option<String>) {
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

/// Which function of a file is meant.
#[derive(Debug, Clone, Copy)]
pub enum Pick<'a> {
    /// The only function, or the one entry point nothing else calls.
    Auto,
    /// By simple or qualified name.
    Name(&'a str),
    /// The innermost function whose definition spans this 1-based line.
    Line(usize),
}

/// Loads one side: reads the file, picks the function, reads its signature.
pub fn load_side(spec: &str) -> Result<Side, String> {
    let (path, language, text, func) = read_spec(spec)?;
    side_from_text(&path, language, text, pick_of(func.as_deref()))
}

/// A spec's file, language, text and `:function` (or `:LINE`) part.
fn read_spec(spec: &str) -> Result<(PathBuf, Language, String, Option<String>), String> {
    let (path, func) = split_spec(spec);
    let language = Language::from_path(&path)
        .ok_or_else(|| format!("{}: unknown language", path.display()))?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, language, text, func))
}

/// The function a spec's `:function` or `:LINE` names (`FILE:LINE` picks the function defined
/// around that line: one overload among several).
fn pick_of(func: Option<&str>) -> Pick<'_> {
    match func {
        Some(f) => match f.parse::<usize>() {
            Ok(line) => Pick::Line(line),
            Err(_) => Pick::Name(f),
        },
        None => Pick::Auto,
    }
}

/// The normalisation proof for two sides given as specs (`FILE`, `FILE:function`,
/// `FILE:LINE`) that cannot both be loaded to run (a parameter type no harness fills, a
/// variadic function): a proof needs no signature. `None` when there is no proof.
pub fn proof_of_specs(a: &str, b: &str) -> Option<EquivReport> {
    let ((path_a, la, ta, fa), (path_b, lb, tb, fb)) = (read_spec(a).ok()?, read_spec(b).ok()?);
    if la != lb {
        return None;
    }
    let (pa, pb) = (pick_of(fa.as_deref()), pick_of(fb.as_deref()));
    let (mut report, _) = proof_without_signature(la, (&ta, pa), (&tb, pb), false).ok()?;
    // The files too, as `check` names them.
    for (key, path) in [("a", &path_a), ("b", &path_b)] {
        if let Some(what) = report.compared.get(key).and_then(|w| w.as_str()) {
            report.compared[key] = json!(format!("{}: {what}", path.display()));
        }
    }
    Some(report)
}

/// One side from text in memory (`label` names it in messages and chooses nothing else).
/// Parses a side's text. C with pre-standard definitions (K&R parameter declarations, an
/// implicit `int`) is rewritten line for line into the form the parser takes
/// ([`crate::analysis::equiv::oldc`]) when that leaves fewer syntax errors; the rewritten text
/// is then the one compiled too.
pub(crate) fn parse_source(language: Language, text: String) -> (ParsedFile, String) {
    let file = ParsedFile::parse(language, text.clone());
    if language != Language::C || misread(&file) == 0 {
        return (file, text);
    }
    if let Some(new) = crate::analysis::equiv::oldc::modernise(&text) {
        let rewritten = ParsedFile::parse(language, new.clone());
        if misread(&rewritten) < misread(&file) {
            return (rewritten, new);
        }
    }
    (file, text)
}

/// How much of a C file the parser misread: its error nodes (not regions: a file whose root
/// did not parse is one region either way) and its bodies outside any function. A K&R
/// definition with a pointer result or a single parameter (`char *xmalloc (size) unsigned
/// size; { ... }`) parses without an error, as a prototype followed by a block at file
/// level, which C never allows.
fn misread(file: &ParsedFile) -> usize {
    let root = file.root();
    let mut c = root.walk();
    let stray = root
        .named_children(&mut c)
        .filter(|n| n.kind() == crate::syntax::lang::kind::COMPOUND_STATEMENT)
        .count();
    file.error_nodes() + stray
}

pub fn side_from_text(
    label: &Path,
    language: Language,
    text: String,
    pick: Pick<'_>,
) -> Result<Side, String> {
    if !crate::analysis::equiv::supports(language) {
        return Err(format!(
            "{}: equiv supports Python, Java, C and C++",
            label.display()
        ));
    }
    let (file, text) = parse_source(language, text);
    let f = picked(&file, pick).map_err(|e| format!("{}: {e}", label.display()))?;
    let sig = signature(&file, &f).map_err(|e| format!("{}: {e}", label.display()))?;
    let function_text = file.node_text(f.node).to_string();
    Ok(Side {
        path: label.to_path_buf(),
        text,
        language,
        sig,
        function_text,
    })
}

/// The normalisation proof of two sides; `versions`: they are two versions of one file (a
/// program and its mutant), so `__FILE__` names the same file on both sides and a `__LINE__`
/// that keeps its line is equal.
fn prove_sides(
    a: (&ParsedFile, &crate::syntax::functions::Function<'_>),
    b: (&ParsedFile, &crate::syntax::functions::Function<'_>),
    versions: bool,
) -> Result<bool, String> {
    if versions {
        prove_versions_equivalent(a, b, &Cancel::never())
    } else {
        prove_program_equivalent(a, b, &Cancel::never())
    }
}

/// The normalisation proof for two texts whose functions are picked as `side_from_text` picks
/// them, without the signature a run needs (a function whose parameters no harness can fill,
/// or a program that does not build, may still be proved equal to its mutant). `Ok(report)`
/// only when proved, with the (qualified) name of the first side's function; otherwise why
/// there is no proof. `versions` as for [`prove_sides`].
pub fn proof_without_signature(
    language: Language,
    a: (&str, Pick<'_>),
    b: (&str, Pick<'_>),
    versions: bool,
) -> Result<(EquivReport, String), String> {
    if !crate::analysis::equiv::supports(language) {
        return Err(format!("no proof for {}", language.name()));
    }
    let (fa, _) = parse_source(language, a.0.to_string());
    let (fb, _) = parse_source(language, b.0.to_string());
    let (ga, gb) = (picked(&fa, a.1)?, picked(&fb, b.1)?);
    match prove_sides((&fa, &ga), (&fb, &gb), versions) {
        Ok(true) => {}
        Ok(false) => return Err("the two canonical forms differ".into()),
        Err(why) => return Err(why),
    }
    Ok({
        let det = Deterministic {
            verdict: Verdict::Equivalent,
            method: "normalisation",
            counterexample: None,
            trials: 0,
            notes: vec!["proved by normalisation; nothing was run".into()],
        };
        let describe = |f: &crate::syntax::functions::Function<'_>| {
            format!("function {} (line {})", f.name, f.start_line)
        };
        let compared = json!({"a": describe(&ga), "b": describe(&gb)});
        (report(det, None, compared), ga.name.clone())
    })
}

/// The function of `file` that `pick` names.
fn picked<'t>(
    file: &'t ParsedFile,
    pick: Pick<'_>,
) -> Result<crate::syntax::functions::Function<'t>, String> {
    match pick {
        Pick::Auto => select_function(file, None),
        Pick::Name(n) => select_function(file, Some(n)),
        Pick::Line(line) => function_at_line(file, line)
            .ok_or_else(|| format!("line {line} is not inside a function")),
    }
}

/// The innermost named function (not a lambda) with a body whose definition spans `line`.
pub fn function_at_line<'t>(
    file: &'t ParsedFile,
    line: usize,
) -> Option<crate::syntax::functions::Function<'t>> {
    use crate::syntax::functions::FunctionKind;
    crate::syntax::functions::innermost(
        collect_functions(file)
            .into_iter()
            .filter(|f| f.kind != FunctionKind::Lambda && f.body.is_some()),
        line,
        |f| (f.start_line, f.end_line),
    )
}

/// The function of `file` that `sig` was read from (same start line), else by name.
fn reselect<'t>(
    file: &'t ParsedFile,
    sig: &Signature,
) -> Result<crate::syntax::functions::Function<'t>, String> {
    match function_at_line(file, sig.start_line) {
        Some(f) if f.start_line == sig.start_line && f.simple_name == sig.name => Ok(f),
        _ => select_function(file, Some(&sig.name)),
    }
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

impl Deterministic {
    /// No difference after `trials` compared inputs: `likely_equivalent`, or `unknown` when no
    /// input could be compared.
    pub fn no_difference(trials: usize, notes: Vec<String>) -> Deterministic {
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
}

/// Options of the differential run.
#[derive(Debug, Clone, Copy)]
pub struct DiffOptions {
    pub trials: usize,
    pub seed: u64,
    pub limits: Limits,
    /// The bounded symbolic check's bounds; `None` skips it (`--no-smt`).
    pub symbolic: Option<Bounds>,
}

/// Proof first, then differential testing.
pub fn deterministic(a: &Side, b: &Side, opts: DiffOptions) -> Deterministic {
    let notes = Vec::new();
    if a.language == b.language {
        let fa = ParsedFile::parse(a.language, a.text.clone());
        let fb = ParsedFile::parse(b.language, b.text.clone());
        let ga = reselect(&fa, &a.sig);
        let gb = reselect(&fb, &b.sig);
        if let (Ok(ga), Ok(gb)) = (ga, gb) {
            // Sides read from one path are versions of one file (a program and its mutant).
            let proof = prove_sides((&fa, &ga), (&fb, &gb), a.path == b.path);
            return proof_or(proof, notes, || differential(a, b, opts));
        }
    }
    proof_or(Ok(false), notes, || differential(a, b, opts))
}

/// A proof's outcome (`equivalent` by normalisation), else the executed evidence `rest`, with
/// the notes of both.
pub(crate) fn proof_or(
    proof: Result<bool, String>,
    mut notes: Vec<String>,
    rest: impl FnOnce() -> Deterministic,
) -> Deterministic {
    match proof {
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
    let mut d = rest();
    notes.append(&mut d.notes);
    d.notes = notes;
    d
}

/// Differential testing alone (no proof): the first counterexample gives `not_equivalent`, no
/// difference after the trials `likely_equivalent`. Used after a failed proof, and by the
/// property test that checks every proof against execution.
/// Java arrays and strings may be null, and code that tests for it (`if (array == null)`) runs
/// only for such an argument: each array or string parameter is null in two inputs (the first
/// two tuples with it replaced), placed right after those, so that any trial budget runs them.
fn add_null_references(doms: &[Dom], inputs: &mut Vec<Vec<Value>>) {
    let mut extra: Vec<Vec<Value>> = Vec::new();
    for (i, d) in doms.iter().enumerate() {
        if !matches!(d, Dom::List(_) | Dom::Str { .. }) {
            continue;
        }
        for t in inputs.iter().take(2) {
            let mut t = t.clone();
            if let Some(slot) = t.get_mut(i) {
                *slot = Value::None;
            }
            if !inputs.contains(&t) && !extra.contains(&t) {
                extra.push(t);
            }
        }
    }
    let at = inputs.len().min(2);
    inputs.splice(at..at, extra);
}

/// Whether two Python sides differ when their integer parameters are given bools (a subtype
/// of `int` that the symbolic integers do not model): every integer parameter `True`, every
/// one `False`, and each alone `True` in the first input. A difference voids a bounded claim;
/// it is no counterexample (the code was written for integers).
fn differs_on_bools(
    a: &Side,
    b: &Side,
    doms: &[Dom],
    inputs: &[Vec<Value>],
    limits: Limits,
    sides: Sides<'_>,
) -> bool {
    if a.language != Language::Python || b.language != Language::Python {
        return false;
    }
    let ints: Vec<usize> = (0..doms.len())
        .filter(|&i| matches!(doms[i], Dom::Int { .. }))
        .collect();
    let Some(first) = inputs.first().filter(|_| !ints.is_empty()) else {
        return false;
    };
    let with = |slots: &[usize], v: bool| {
        let mut t = first.clone();
        for &i in slots {
            if let Some(x) = t.get_mut(i) {
                *x = Value::Bool(v);
            }
        }
        t
    };
    let mut probes = vec![with(&ints, true), with(&ints, false)];
    if ints.len() > 1 {
        probes.extend(ints.iter().map(|&i| with(&[i], true)));
    }
    // The harness writes a bool for an `int` parameter as `1`: declared `bool` there, it
    // writes `True`.
    let boolish = |side: &Side| {
        let mut sig = side.sig.clone();
        for &i in &ints {
            if let Some(p) = sig.params.get_mut(i) {
                p.ty = Ty::Bool;
            }
        }
        Side {
            path: side.path.clone(),
            text: side.text.clone(),
            language: side.language,
            sig,
            function_text: side.function_text.clone(),
        }
    };
    match (
        run_side(&boolish(a), &probes, limits),
        run_side(&boolish(b), &probes, limits),
    ) {
        (Ok(x), Ok(y)) => x
            .iter()
            .zip(&y)
            .any(|(p, q)| compare(p, q, sides) == Cmp::Differ),
        _ => false,
    }
}

pub fn differential(a: &Side, b: &Side, opts: DiffOptions) -> Deterministic {
    let mut notes = Vec::new();
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
    // C globals that functions assign are state a call starts from: inputs too, after the
    // parameters (the harness sets them before the call).
    let globals = global_inputs(&a.sig, &b.sig);
    let symbolic = match opts.symbolic {
        Some(bounds) => symbolic(a, b, &doms, &globals, bounds),
        None => Symbolic::Unknown("not asked for".into()),
    };
    let mut all_doms = doms.clone();
    all_doms.extend(globals.iter().map(|(_, d)| d.clone()));
    if !globals.is_empty() {
        let names: Vec<&str> = globals.iter().map(|(n, _)| n.as_str()).collect();
        notes.push(format!(
            "global variables set before each call, as inputs after the parameters: {}",
            names.join(", ")
        ));
    }
    // Random integers favour the constants of both sides (their whole files: `#define`d
    // thresholds and callees' constants count).
    let hints = Hints::from_texts(&[&a.text, &b.text]);
    let mut inputs = generate_hinted(&all_doms, opts.trials.max(1), opts.seed, &hints);
    if a.language == Language::Java && b.language == Language::Java {
        add_null_references(&doms, &mut inputs);
    }
    // The solver's candidate counterexample runs first; it counts only if execution confirms it.
    // It gives the globals set before the call too (those the lowered code never reads have
    // plain values of their domains).
    let smt_input = match &symbolic {
        Symbolic::Counterexample(v, _) => {
            let mut v = v.clone();
            let given = v.len().saturating_sub(doms.len());
            v.extend(globals.iter().skip(given).map(|(_, d)| default_value(d)));
            inputs.retain(|x| *x != v);
            inputs.insert(0, v);
            Some(0)
        }
        Symbolic::Bounded(..) => None,
        Symbolic::Unknown(why) => {
            notes.push(format!("no bounded symbolic check: {why}"));
            None
        }
    };
    let (oa, ob) = std::thread::scope(|s| {
        let ha = s.spawn(|| run_side_cached(a, &inputs, opts.limits));
        let rb = run_side_cached(b, &inputs, opts.limits);
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
    // In C and C++ a process killed by a signal (SIGSEGV, SIGBUS, SIGABRT from the stack
    // protector or the allocator) almost always hit undefined behaviour that the sanitizers
    // did not report (a wild pointer far outside any buffer, a stack overflow), so
    // such inputs are discarded like UBSan reports, never counted as counterexamples.
    let ub_crashes = |side: &Side, mut o: Vec<Outcome>| {
        if matches!(side.language, Language::C | Language::Cpp) {
            for x in &mut o {
                if matches!(x, Outcome::Crash(c) if c.starts_with("signal")) {
                    *x = Outcome::Undefined;
                }
            }
        }
        o
    };
    let (oa, ob) = (ub_crashes(a, oa), ub_crashes(b, ob));
    let sides = Sides {
        cross_language: a.language != b.language,
        ret_a: &a.sig.ret,
        ret_b: &b.sig.ret,
    };
    let mut trials = 0;
    let mut discarded = 0;
    let mut ub_inputs = 0;
    let mut confirmations = 0;
    for (i, inp) in inputs.iter().enumerate() {
        let x = oa.get(i).unwrap_or(&Outcome::Missing);
        let y = ob.get(i).unwrap_or(&Outcome::Missing);
        // The solver showed that one side's loop never ends on its input (the loop state
        // repeats): running past the time limit there, while the other side ends, confirms it.
        let never_ends = match (&symbolic, smt_input == Some(i)) {
            (Symbolic::Counterexample(_, [da, db]), true) => {
                let ended =
                    |o: &Outcome| matches!(o, Outcome::Value { .. } | Outcome::Exception(_));
                (*da && !*db && *x == Outcome::Timeout && ended(y))
                    || (*db && !*da && *y == Outcome::Timeout && ended(x))
            }
            _ => false,
        };
        let mut cmp = if never_ends {
            Cmp::Differ
        } else {
            compare(x, y, sides)
        };
        // One side ran past the per-input limit while the other ended: run that side again
        // on this input alone with a limit ten times as long. Still running then, it is
        // taken as a difference (a mutant that never ends is observable; PIT counts such
        // mutants as killed). Twice per pair at most: each costs up to the longer limit.
        let mut slow_side = None;
        if cmp == Cmp::Discard && confirmations < MAX_TIMEOUT_CONFIRMATIONS {
            let ended = |o: &Outcome| matches!(o, Outcome::Value { .. } | Outcome::Exception(_));
            let side = match (x, y) {
                (Outcome::Timeout, o) if ended(o) => Some(a),
                (o, Outcome::Timeout) if ended(o) => Some(b),
                _ => None,
            };
            if let Some(side) = side {
                confirmations += 1;
                let again = run_side_limited(
                    side,
                    std::slice::from_ref(inp),
                    Limits {
                        wall: opts
                            .limits
                            .wall
                            .max(Duration::from_secs(u64::from(CONFIRM_SECONDS) * 2)),
                        ..opts.limits
                    },
                    CONFIRM_SECONDS,
                );
                if matches!(again.as_deref(), Ok([Outcome::Timeout])) {
                    cmp = Cmp::Differ;
                    slow_side = Some(if std::ptr::eq(side, a) {
                        "first"
                    } else {
                        "second"
                    });
                }
            }
        }
        match cmp {
            Cmp::Equal => trials += 1,
            Cmp::Discard => discarded += 1,
            Cmp::Differ => {
                // Undefined behaviour the sanitizer missed (an uninitialised read) is no
                // evidence: such an input is discarded. (A side that never ends is not run
                // again: the solver's model has no undefined behaviour.)
                if !never_ends
                    && [a, b]
                        .iter()
                        .any(|s| memcheck_reports(s, inp, opts.limits) == Some(true))
                {
                    discarded += 1;
                    ub_inputs += 1;
                    continue;
                }
                if never_ends {
                    notes.push("on this input one side's loop never ends (the solver found its state repeating) and it ran past the time limit, while the other side returned".into());
                }
                if let Some(which) = slow_side {
                    notes.push(format!(
                        "on this input the {which} side did not end within {CONFIRM_SECONDS} s (run twice), while the other ended within {} s",
                        harness::INPUT_SECONDS
                    ));
                }
                // Python and Java sides run every input in one process: a difference may
                // come from state an earlier call left (a mutable default, a static field).
                // Run this input alone on both sides; if they agree there, say so.
                if i > 0 && !never_ends && slow_side.is_none() && !fresh_process_per_input(a, b) {
                    let alone = |side: &Side| {
                        run_side_limited(
                            side,
                            std::slice::from_ref(inp),
                            opts.limits,
                            harness::INPUT_SECONDS,
                        )
                    };
                    if let (Ok(fa), Ok(fb)) = (alone(a), alone(b)) {
                        if let (Some(fx), Some(fy)) = (fa.first(), fb.first()) {
                            if compare(fx, fy, sides) != Cmp::Differ {
                                notes.push(format!(
                                    "this difference shows only after the {i} earlier call(s) of the run in the same process (state kept between calls: a mutable default, a static or global); run alone on this input, the sides agree"
                                ));
                            }
                        }
                    }
                }
                trials += 1;
                let from_solver = smt_input == Some(i);
                return Deterministic {
                    verdict: Verdict::NotEquivalent,
                    method: if from_solver {
                        "symbolic"
                    } else {
                        "differential"
                    },
                    counterexample: Some({
                        let mut c = json!({
                            "inputs": inp
                                .iter()
                                .take(doms.len())
                                .zip(&a.sig.params)
                                .map(|(v, p)| v.to_json_typed(&p.ty))
                                .collect::<Vec<_>>(),
                            "a": x.to_json(),
                            "b": y.to_json(),
                            "origin": if from_solver { "smt" } else { "generated" },
                        });
                        if !globals.is_empty() {
                            c["globals"] = globals
                                .iter()
                                .zip(inp.iter().skip(doms.len()))
                                .map(|((n, _), v)| (n.clone(), v.to_json()))
                                .collect::<serde_json::Map<_, _>>()
                                .into();
                        }
                        c
                    }),
                    trials,
                    notes,
                };
            }
        }
    }
    if discarded > 0 {
        notes.push(format!("{discarded} input(s) discarded (undefined behaviour, timeout, crash of the harness or outside the common domain)"));
    }
    if ub_inputs > 0 {
        notes.push(format!(
            "{ub_inputs} input(s) on which the sides differed were discarded: valgrind's memcheck reports undefined behaviour"
        ));
    }
    match symbolic {
        Symbolic::Bounded(..)
            if trials > 0 && differs_on_bools(a, b, &doms, &inputs, opts.limits, sides) =>
        {
            notes.push("a bool argument where an int is declared (Python's bool is an int) gives different results on the two sides (`True + 0` is `1`, not `True`); no bounded verdict".into());
            Deterministic::no_difference(trials, notes)
        }
        Symbolic::Bounded(bounds, complete) if trials > 0 => {
            notes.push(bounded_note(bounds, complete));
            Deterministic {
                verdict: Verdict::BoundedEquivalent,
                method: "bounded_smt",
                counterexample: None,
                trials,
                notes,
            }
        }
        Symbolic::Counterexample(..) => {
            notes.push("the solver's candidate counterexample gave the same result when executed (a construct the symbolic model does not capture); no bounded verdict".into());
            Deterministic::no_difference(trials, notes)
        }
        _ => Deterministic::no_difference(trials, notes),
    }
}

/// What a bounded verdict covers, in words.
fn bounded_note(b: Bounds, complete: bool) -> String {
    if complete {
        format!(
            "bounded check (Z3): no difference for any input whose lists have at most {} elements (no input runs a loop more than {} times or nests calls more than {} deep); machine integers at their real width",
            b.max_len, b.unroll, b.depth
        )
    } else {
        format!(
            "bounded check (Z3): no difference for any input whose loops run at most {} iterations, whose calls nest at most {} deep and whose lists have at most {} elements; machine integers at their real width",
            b.unroll, b.depth, b.max_len
        )
    }
}

/// The bounded symbolic check of the two sides ([`crate::analysis::equiv::smt`]).
fn symbolic(
    a: &Side,
    b: &Side,
    doms: &[crate::analysis::equiv::types::Dom],
    globals: &[(String, crate::analysis::equiv::types::Dom)],
    bounds: Bounds,
) -> Symbolic {
    let fa = ParsedFile::parse(a.language, a.text.clone());
    let fb = ParsedFile::parse(b.language, b.text.clone());
    match (reselect(&fa, &a.sig), reselect(&fb, &b.sig)) {
        (Ok(ga), Ok(gb)) => smt::check(
            (&fa, &ga, &a.sig),
            (&fb, &gb, &b.sig),
            doms,
            globals,
            bounds,
        ),
        (Err(e), _) | (_, Err(e)) => Symbolic::Unknown(e),
    }
}

pub(crate) fn python_exe() -> String {
    static EXE: OnceLock<String> = OnceLock::new();
    EXE.get_or_init(|| {
        // As `nobody` (see `sandbox`), an interpreter under root's home is out of reach: take
        // the system one.
        if sandbox::processes_limited() && Path::new("/usr/bin/python3").exists() {
            return "/usr/bin/python3".into();
        }
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
pub(crate) fn strip_java_package(text: &str) -> String {
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

pub(crate) fn public_class(text: &str) -> Option<String> {
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

type RunCache = std::sync::Mutex<Vec<(u64, Vec<Outcome>)>>;

/// [`run_side`] with an in-process memo of recent runs: classifying many mutants of one
/// program runs the original once per function instead of once per mutant. The key covers the
/// program text, the function, the inputs and the limits; failed runs are not kept.
pub fn run_side_cached(
    side: &Side,
    inputs: &[Vec<Value>],
    limits: Limits,
) -> Result<Vec<Outcome>, String> {
    use std::hash::{Hash, Hasher};
    const KEEP: usize = 64;
    static CACHE: OnceLock<RunCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    // SipHash with fixed keys: the same key in every run.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    side.language.name().hash(&mut h);
    side.text.hash(&mut h);
    side.sig.name.hash(&mut h);
    side.sig.start_line.hash(&mut h);
    for row in inputs {
        for v in row {
            v.to_json().to_string().hash(&mut h);
        }
        0xffu8.hash(&mut h);
    }
    limits.wall.hash(&mut h);
    limits.memory_mb.hash(&mut h);
    let key = h.finish();
    if let Ok(c) = cache.lock() {
        if let Some((_, o)) = c.iter().find(|(k, _)| *k == key) {
            return Ok(o.clone());
        }
    }
    let out = run_side(side, inputs, limits)?;
    if let Ok(mut c) = cache.lock() {
        if c.len() >= KEEP {
            c.remove(0);
        }
        c.push((key, out.clone()));
    }
    Ok(out)
}

/// Compiles and runs one side's harness on all inputs; resumes after inputs that kill it.
pub fn run_side(
    side: &Side,
    inputs: &[Vec<Value>],
    limits: Limits,
) -> Result<Vec<Outcome>, String> {
    run_side_limited(side, inputs, limits, harness::INPUT_SECONDS)
}

/// Whether each input runs in a fresh process on both sides (C and C++ fork per input), so a
/// difference never depends on earlier calls.
fn fresh_process_per_input(a: &Side, b: &Side) -> bool {
    [a, b]
        .iter()
        .all(|s| matches!(s.language, Language::C | Language::Cpp))
}

/// Per-input time limit, in seconds, of the second run that confirms a side never ends.
const CONFIRM_SECONDS: u32 = 10;
/// Such confirmations per compared pair, at most.
const MAX_TIMEOUT_CONFIRMATIONS: u32 = 2;

/// [`run_side`] with a per-input time limit of `per_input` seconds.
fn run_side_limited(
    side: &Side,
    inputs: &[Vec<Value>],
    limits: Limits,
    per_input: u32,
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
            let javac = |extra: &[String]| {
                let mut files = vec![format!("{file}.java"), "CcHarness.java".into()];
                files.extend(extra.iter().cloned());
                sandbox::run("javac", &javac_args(&files), d, compile_limits)
                    .map_err(|e| format!("javac: {e}"))
            };
            let out = javac(&[])?;
            if out.status != Some(0) {
                let failed = format!(
                    "javac failed: {}",
                    first_lines(&format!("{}{}", out.stderr, out.stdout), 8)
                );
                // A class that does not compile alone (its imports name libraries that are
                // not here) may still compile without the methods the entry cannot reach,
                // and then with stand-ins for the missing types it only implements or throws.
                let cut = java_reachable(&source, &side.sig.name);
                let mut built = false;
                if let Some((text, n)) = &cut {
                    write(&format!("{file}.java"), text)?;
                    built = javac(&[])?.status == Some(0);
                    if built {
                        tracing::info!(
                            "{}: compiled without {n} method(s) that `{}` cannot reach ({failed})",
                            side.path.display(),
                            side.sig.name
                        );
                    }
                }
                if !built {
                    let text = cut.as_ref().map_or(source.as_str(), |(t, _)| t.as_str());
                    if let Some(stubs) = java_missing_type_stubs(text).filter(|s| !s.is_empty()) {
                        write(&format!("{file}.java"), text)?;
                        let mut paths = Vec::new();
                        for (name, body) in &stubs {
                            if d.join(name).exists() {
                                return Err(failed);
                            }
                            write(name, body)?;
                            paths.push(name.clone());
                        }
                        built = javac(&paths)?.status == Some(0);
                        if built {
                            tracing::info!(
                                "{}: compiled with stand-ins for {} missing imported type(s) ({failed})",
                                side.path.display(),
                                stubs.len()
                            );
                        }
                    }
                }
                if !built {
                    return Err(failed);
                }
            }
            ("java".into(), java_args("CcHarness"))
        }
        Language::C | Language::Cpp => {
            build_c_harness(side, inputs, d, compile_limits, true)?;
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
        args.push(per_input.to_string());
        // C/C++: the resident-memory limit the driver holds each forked child to.
        args.push(limits.memory_mb.to_string());
        let extra = sandbox::Extra {
            stdin: None,
            asan: matches!(side.language, Language::C | Language::Cpp),
        };
        let out = sandbox::run_with(&program, &args, d, limits, &extra)
            .map_err(|e| format!("{program}: {e}"))?;
        let mut done = false;
        let mut last_seen: Option<usize> = None;
        let printed = if matches!(side.language, Language::C | Language::Cpp) {
            printed_by_case(&out.stdout)
        } else {
            std::collections::HashMap::new()
        };
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
                let o = match printed.get(&i) {
                    Some(text) => o.with_printed(text),
                    None => o,
                };
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

/// The text each input's call printed in a C/C++ harness's output: what lies between the
/// case's `{"i":N,"begin":true}` line and the next marked line (whose leading newline is the
/// harness's own). Capped at 64 KB per input.
fn printed_by_case(stdout: &str) -> std::collections::HashMap<usize, String> {
    let mut out = std::collections::HashMap::new();
    let mark = harness::MARK;
    let mut at = 0;
    while let Some(pos) = stdout[at..].find(mark) {
        let start = at + pos + mark.len();
        let line_end = stdout[start..]
            .find('\n')
            .map_or(stdout.len(), |e| start + e);
        at = line_end;
        let payload = &stdout[start..line_end];
        if !payload.contains("\"begin\"") {
            continue;
        }
        let Some(i) = serde_json::from_str::<Json>(payload)
            .ok()
            .and_then(|j| j.get("i").and_then(Json::as_u64))
        else {
            continue;
        };
        let body_start = (line_end + 1).min(stdout.len());
        let body_end = stdout[body_start..]
            .find(mark)
            .map_or(stdout.len(), |e| body_start + e);
        let mut text = &stdout[body_start..body_end];
        text = text.strip_suffix('\n').unwrap_or(text);
        let mut cut = text.len().min(65536);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        out.insert(i as usize, text[..cut].to_string());
    }
    out
}

/// Writes and compiles a C/C++ harness for `inputs` into `d` as `./harness` (with UBSan when
/// `sanitize`; without, for valgrind).
fn build_c_harness(
    side: &Side,
    inputs: &[Vec<Value>],
    d: &Path,
    compile_limits: Limits,
    sanitize: bool,
) -> Result<(), String> {
    let write = |name: &str, text: &str| {
        std::fs::write(d.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    let cpp = side.language == Language::Cpp;
    let (user, h, compiler, std) = if cpp {
        ("user.cpp", "harness.cpp", "g++", "-std=gnu++17")
    } else {
        ("user.c", "harness.c", "gcc", "-std=gnu11")
    };
    write(user, &side.text)?;
    write(h, &harness::c_family(&side.sig, cpp, &side.text, inputs)?)?;
    let mut args: Vec<String> = vec![std.into(), "-O0".into(), "-g".into(), "-w".into()];
    if sanitize {
        // AddressSanitizer catches out-of-bounds reads and writes of the arguments' buffers
        // (a mutant that indexes past a string), UBSan the rest it can: such an input is
        // discarded, never a counterexample. The run then has ASan's memory limit instead of
        // `ulimit -v` ([`sandbox::Extra::asan`]).
        args.extend([
            "-fsanitize=address,undefined".into(),
            "-fno-sanitize-recover=all".into(),
        ]);
    }
    args.extend(harness::msvc_compat_flags(&side.text));
    args.push("-I.".into());
    // The project's own headers (`#include "linenoise.h"` beside the file) are found where
    // the file is, for quoted includes only (a file there never hides a system header).
    if let Some(dir) = side
        .path
        .parent()
        .and_then(|p| {
            std::fs::canonicalize(if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            })
            .ok()
        })
        .filter(|p| p.is_dir())
    {
        args.push("-iquote".into());
        args.push(dir.to_string_lossy().into_owned());
    }
    args.extend(["-o".into(), "harness".into(), h.into(), "-lm".into()]);
    // A header the file includes but this machine lacks (`conio.h` of old DOS compilers, a
    // project header not given) is replaced by an empty one, at most four of them: the build
    // then succeeds only if the file uses nothing such a header declares.
    let mut stand_ins = Vec::new();
    let mut first_failure: Option<String> = None;
    loop {
        let out = sandbox::run(compiler, &args, d, compile_limits)
            .map_err(|e| format!("{compiler}: {e}"))?;
        if out.status == Some(0) {
            if !stand_ins.is_empty() {
                tracing::info!(
                    "{}: compiled with empty stand-ins for the missing header(s) {}",
                    side.path.display(),
                    stand_ins.join(", ")
                );
            }
            return Ok(());
        }
        let failed = || {
            format!(
                "{compiler} failed: {}",
                first_lines(&format!("{}{}", out.stderr, out.stdout), 8)
            )
        };
        // After stand-ins, the first failure (the missing header) says more than the
        // undeclared names that follow from it.
        let first = first_failure.get_or_insert_with(failed).clone();
        let Some(header) = missing_header(&out.stderr, &side.text) else {
            if stand_ins.is_empty() {
                return Err(first);
            }
            // And the error the build stopped at with the stand-ins (an undeclared name the
            // header held, or an error of the file's own: `%` on a `double`).
            let error = out
                .stderr
                .lines()
                .find(|l| l.contains("error:"))
                .unwrap_or("")
                .trim();
            return Err(format!(
                "{first} | with an empty stand-in for {}: {error}",
                stand_ins.join(", ")
            ));
        };
        if stand_ins.len() >= 4 || stand_ins.contains(&header) {
            return Err(first);
        }
        let path = d.join(&header);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{header}: {e}"))?;
        }
        write(&header, "")?;
        stand_ins.push(header);
    }
}

/// The header of a `fatal error: NAME: No such file or directory` that the user's file itself
/// includes, when NAME is a relative path inside the build folder.
fn missing_header(stderr: &str, user_text: &str) -> Option<String> {
    let line = stderr
        .lines()
        .find(|l| l.contains("fatal error:") && l.ends_with("No such file or directory"))?;
    let (_, rest) = line.split_once("fatal error: ")?;
    let name = rest.strip_suffix(": No such file or directory")?.trim();
    let safe = !name.is_empty()
        && !name.starts_with('/')
        && !name.split('/').any(|c| c == ".." || c.is_empty())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    let included = user_text.lines().any(|l| {
        let t = l.trim_start().trim_start_matches('#').trim_start();
        t.strip_prefix("include").is_some_and(|r| {
            let r = r.trim();
            r == format!("\"{name}\"")
                || r == format!("<{name}>")
                || r.starts_with(&format!("\"{name}\" "))
                || r.starts_with(&format!("<{name}> "))
        })
    });
    (safe && included).then(|| name.to_string())
}

/// Runs a C/C++ side's harness on one input under valgrind's memcheck (which sees reads of
/// uninitialised memory that UBSan does not): `Some(true)` when memcheck reports an error,
/// `None` when it cannot tell (no valgrind, a build failure, a timeout).
pub fn memcheck_reports(side: &Side, input: &[Value], limits: Limits) -> Option<bool> {
    if !matches!(side.language, Language::C | Language::Cpp) {
        return Some(false);
    }
    let dir = TempDir::new("memcheck").ok()?;
    let d = dir.path();
    let compile_limits = Limits {
        wall: Duration::from_secs(180),
        memory_mb: limits.memory_mb.max(8192),
    };
    build_c_harness(side, &[input.to_vec()], d, compile_limits, false).ok()?;
    let out = sandbox::run_with(
        "valgrind",
        &[
            "--tool=memcheck".into(),
            "-q".into(),
            "--error-exitcode=88".into(),
            "./harness".into(),
            "0".into(),
        ],
        d,
        Limits {
            wall: limits.wall * 20,
            memory_mb: limits.memory_mb.max(4096),
        },
        // Not the ASan mode: valgrind runs under the address-space limit like any other code
        // under test (without one, a side that allocates without end took the machine's
        // memory, and every process with it).
        &sandbox::Extra {
            stdin: None,
            asan: false,
        },
    )
    .ok()?;
    if out.timed_out || out.status == Some(127) {
        return None;
    }
    // The harness runs the input in a forked child: memcheck reports the child's errors on
    // stderr ("Conditional jump or move depends on uninitialised value(s)", "Invalid read").
    let reported = out.status == Some(88)
        || out.stderr.lines().any(|l| {
            l.starts_with("==")
                && (l.contains("uninitialised")
                    || l.contains("Invalid read")
                    || l.contains("Invalid write")
                    || l.contains("Invalid free"))
        });
    Some(reported)
}

/// `javac` arguments (a small, single-threaded compiler JVM) for `files`, output in `.`.
pub(crate) fn javac_args(files: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "-J-Xmx768m",
        "-J-XX:+UseSerialGC",
        "-J-XX:TieredStopAtLevel=1",
        "-J-XX:CompressedClassSpaceSize=128m",
        "-nowarn",
        "-encoding",
        "UTF-8",
        "-d",
        ".",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(files.iter().cloned());
    args
}

/// `java` arguments (a small JVM that fits the sandbox's memory limit) running `main_class`.
pub(crate) fn java_args(main_class: &str) -> Vec<String> {
    [
        "-Xmx512m",
        "-Xss16m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:CompressedClassSpaceSize=64m",
        "-XX:ReservedCodeCacheSize=64m",
        "-Xshare:auto",
        "-cp",
        ".",
        main_class,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

pub(crate) fn first_lines(s: &str, n: usize) -> String {
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

pub fn ask_llm(a: &Side, b: &Side, samples: usize) -> Option<LlmResult> {
    ask_llm_texts(
        (a.language, &a.function_text),
        (b.language, &b.function_text),
        samples,
    )
}

/// [`ask_llm`] on two texts (functions or whole programs).
pub fn ask_llm_texts(
    a: (Language, &str),
    b: (Language, &str),
    samples: usize,
) -> Option<LlmResult> {
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
    let task = if a.0 == b.0 {
        Task::Equivalence
    } else {
        Task::EquivalenceCrossLanguage
    };
    let inputs = PromptInputs {
        task,
        language: a.0,
        function: None,
        code: vec![
            CodeUnit {
                label: "program A".into(),
                language: a.0,
                text: a.1.to_string(),
            },
            CodeUnit {
                label: "program B".into(),
                language: b.0,
                text: b.1.to_string(),
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
            (
                Some(true),
                Verdict::Equivalent | Verdict::BoundedEquivalent | Verdict::LikelyEquivalent,
            ) => LlmStance::Agrees,
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
        Verdict::BoundedEquivalent | Verdict::LikelyEquivalent => {
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

/// Options of [`check`].
#[derive(Debug, Clone, Copy)]
pub struct EquivOptions {
    pub diff: DiffOptions,
    /// Run the code (differential testing). Off: the proof alone.
    pub execute: bool,
    /// Ask the configured LLM (when one is configured), with this many samples.
    pub llm_samples: Option<usize>,
}

impl Default for EquivOptions {
    fn default() -> Self {
        EquivOptions {
            diff: DiffOptions {
                trials: 300,
                seed: 0x5eed,
                limits: Limits {
                    wall: Duration::from_secs(60),
                    memory_mb: 2048,
                },
                symbolic: Some(Bounds::default()),
            },
            execute: true,
            llm_samples: None,
        }
    }
}

/// The outcome of [`check`]: the deterministic evidence and the product's verdict.
#[derive(Debug, Clone)]
pub struct EquivReport {
    pub deterministic: Deterministic,
    pub llm: Option<LlmResult>,
    /// The product's verdict (deterministic evidence first, the LLM only where it has none).
    pub verdict: Verdict,
    pub tier: Option<Tier>,
    pub method: &'static str,
    /// What was compared: `{"a": .., "b": ..}` (function or program descriptions).
    pub compared: Json,
}

impl EquivReport {
    /// `{"verdict", "tier", "method", "compared", "counterexample", "trials", "notes", "llm"}`.
    pub fn to_json(&self) -> Json {
        json!({
            "verdict": self.verdict.name(),
            "compared": self.compared.clone(),
            "notes": self.deterministic.notes.clone(),
            "tier": self.tier.map(|t| t.name()),
            "method": self.method,
            "counterexample": self.deterministic.counterexample.clone(),
            "trials": self.deterministic.trials,
            "llm": self.llm.as_ref().map(|l| l.json.clone()),
        })
    }
}

/// The whole evidence chain: proof, differential testing (if `execute`), the LLM (if asked).
pub fn check(a: &Side, b: &Side, opts: &EquivOptions) -> EquivReport {
    let det = if opts.execute {
        deterministic(a, b, opts.diff)
    } else {
        proof_only(a, b)
    };
    let llm = opts.llm_samples.and_then(|n| ask_llm(a, b, n));
    report(det, llm, json!({"a": a.describe(), "b": b.describe()}))
}

fn report(det: Deterministic, llm: Option<LlmResult>, compared: Json) -> EquivReport {
    let (verdict, tier, method) = decide(&det, llm.as_ref());
    EquivReport {
        deterministic: det,
        llm,
        verdict,
        tier,
        method,
        compared,
    }
}

/// The evidence chain for two whole programs: proof, runs on the given and generated inputs
/// ([`super::program::compare_programs`]), the LLM (if asked).
pub fn check_programs(
    a: &super::program::Program,
    b: &super::program::Program,
    opts: &super::program::ProgramOptions,
    llm_samples: Option<usize>,
) -> EquivReport {
    let det = super::program::compare_programs(a, b, opts);
    let llm =
        llm_samples.and_then(|n| ask_llm_texts((a.language, &a.text), (b.language, &b.text), n));
    report(
        det,
        llm,
        json!({"a": a.describe(), "b": b.describe(), "outputs": opts.compare.name()}),
    )
}

/// How one entry's function is keyed across the two files: name, parameters a caller passes,
/// and its class; a top-level class the other file does not define is the file's own class
/// under another name (`oldV` / `newV`) and keys as `*`.
fn entry_key(
    f: &crate::syntax::functions::Function<'_>,
    other_classes: &std::collections::HashSet<&str>,
) -> String {
    let class = f.class.as_deref().map(|c| {
        let (first, rest) = c.split_once('.').unwrap_or((c, ""));
        let first = if other_classes.contains(first) {
            first
        } else {
            "*"
        };
        if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        }
    });
    let simple = match (&f.class, f.kind) {
        // A constructor is named after its class, which may be the renamed one.
        (Some(_), crate::syntax::functions::FunctionKind::Constructor) => "<init>".to_string(),
        _ => f.simple_name.clone(),
    };
    format!(
        "{}{simple}/{}",
        class.map(|c| format!("{c}.")).unwrap_or_default(),
        f.call_arity()
    )
}

/// Compares two files entry point by entry point ([`entry_points`] of either file, paired by
/// [`entry_key`]), each pair through the whole chain of [`check`]. `not_equivalent` as soon
/// as a pair is refuted (the report names that pair and its counterexample); otherwise the
/// weakest verdict of the pairs, `unknown` when an entry has no counterpart or a pair cannot
/// be compared. `compared.pairs` lists every pair with its verdict.
///
/// [`entry_points`]: crate::analysis::equiv::types::entry_points
pub fn check_entries(a: &Path, b: &Path, opts: &EquivOptions) -> Result<EquivReport, String> {
    let read = |p: &Path| -> Result<(Language, String), String> {
        let lang =
            Language::from_path(p).ok_or_else(|| format!("{}: unknown language", p.display()))?;
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok((lang, text))
    };
    let (la, ta) = read(a)?;
    let (lb, tb) = read(b)?;
    if la != lb {
        return Err("entry-by-entry comparison needs two files of one language".into());
    }
    check_entries_texts((a, &ta), (b, &tb), la, opts)
}

/// [`check_entries`] on texts in memory (`label`s name them in reports).
pub fn check_entries_texts(
    (a, ta): (&Path, &str),
    (b, tb): (&Path, &str),
    lang: Language,
    opts: &EquivOptions,
) -> Result<EquivReport, String> {
    use crate::analysis::equiv::types::entry_points;
    if !crate::analysis::equiv::supports(lang) {
        return Err(format!(
            "{}: equiv supports Python, Java, C and C++",
            a.display()
        ));
    }
    let (fa, ta) = parse_source(lang, ta.to_string());
    let (fb, tb) = parse_source(lang, tb.to_string());
    let (ta, tb) = (ta.as_str(), tb.as_str());
    let all_a = collect_functions(&fa);
    let all_b = collect_functions(&fb);
    let ea = entry_points(&fa);
    let eb = entry_points(&fb);
    if ea.is_empty() && eb.is_empty() {
        return Err(format!("{}: no function found", a.display()));
    }
    // Every entry of either side, with the counterpart of the same key on the other side
    // (an entry of one side may be a helper of the other).
    let mut pairs: Vec<(String, Option<usize>, Option<usize>)> = Vec::new();
    // The top-level classes each file defines (a function's class, first segment), once.
    let top = |fs: &[crate::syntax::functions::Function<'_>]| {
        fs.iter()
            .filter_map(|g| g.class.as_deref()?.split('.').next())
            .map(String::from)
            .collect::<std::collections::HashSet<String>>()
    };
    let (top_a, top_b) = (top(&all_a), top(&all_b));
    let classes_a: std::collections::HashSet<&str> = top_a.iter().map(String::as_str).collect();
    let classes_b: std::collections::HashSet<&str> = top_b.iter().map(String::as_str).collect();
    let key_a: Vec<String> = all_a.iter().map(|f| entry_key(f, &classes_b)).collect();
    let key_b: Vec<String> = all_b.iter().map(|f| entry_key(f, &classes_a)).collect();
    let named = |fs: &[crate::syntax::functions::Function<'_>],
                 f: &crate::syntax::functions::Function<'_>| {
        fs.iter().position(|g| g.node.id() == f.node.id())
    };
    for e in &ea {
        if let Some(i) = named(&all_a, e) {
            if pairs.iter().any(|(k, _, _)| *k == key_a[i]) {
                continue;
            }
            let j = key_b.iter().position(|k| *k == key_a[i]);
            pairs.push((key_a[i].clone(), Some(i), j));
        }
    }
    for e in &eb {
        if let Some(j) = named(&all_b, e) {
            if !pairs.iter().any(|(k, _, _)| *k == key_b[j]) {
                let i = key_a.iter().position(|k| *k == key_b[j]);
                pairs.push((key_b[j].clone(), i, Some(j)));
            }
        }
    }
    let mut listed: Vec<Json> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut weakest: Option<EquivReport> = None;
    let mut trials = 0usize;
    let mut missing = false;
    let no_llm = EquivOptions {
        llm_samples: None,
        ..*opts
    };
    // Keys that two functions of one side share (overloads of one arity): which is whose
    // counterpart is not guessed.
    let shared = |keys: &[String]| {
        let mut seen = std::collections::HashSet::new();
        keys.iter()
            .filter(|k| !seen.insert(k.as_str()))
            .cloned()
            .collect::<std::collections::HashSet<String>>()
    };
    let (shared_a, shared_b) = (shared(&key_a), shared(&key_b));
    for (key, i, j) in &pairs {
        if shared_a.contains(key) || shared_b.contains(key) {
            missing = true;
            let side = if shared_a.contains(key) { "A" } else { "B" };
            let note = format!(
                "{key}: several functions of {side} have this name, class and number of \
                 parameters; they are not paired"
            );
            listed.push(json!({"entry": key, "verdict": "unknown", "note": note}));
            notes.push(note);
            continue;
        }
        let (Some(i), Some(j)) = (i, j) else {
            missing = true;
            let side = if i.is_some() { "B" } else { "A" };
            notes.push(format!("{key}: no counterpart in {side}"));
            listed.push(
                json!({"entry": key, "verdict": "unknown", "note": format!("not in {side}")}),
            );
            continue;
        };
        let load = |label: &Path, lang, text: &str, line: usize| {
            side_from_text(label, lang, text.to_string(), Pick::Line(line))
        };
        let (sa, sb) = match (
            load(a, lang, ta, all_a[*i].start_line),
            load(b, lang, tb, all_b[*j].start_line),
        ) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) | (_, Err(e)) => {
                missing = true;
                notes.push(format!("{key}: {e}"));
                listed.push(json!({"entry": key, "verdict": "unknown", "note": e}));
                continue;
            }
        };
        let r = check(&sa, &sb, &no_llm);
        trials += r.deterministic.trials;
        listed.push(json!({
            "entry": key,
            "a": sa.describe(),
            "b": sb.describe(),
            "verdict": r.verdict.name(),
            "method": r.method,
        }));
        if r.verdict == Verdict::NotEquivalent && r.deterministic.counterexample.is_some() {
            let mut r = r;
            r.compared = json!({"a": sa.describe(), "b": sb.describe(), "pairs": listed});
            r.deterministic.notes.insert(
                0,
                format!("entry by entry: {key} differs (the other entries were not all compared)"),
            );
            return Ok(r);
        }
        for n in &r.deterministic.notes {
            notes.push(format!("{key}: {n}"));
        }
        if weakest
            .as_ref()
            .is_none_or(|w| r.verdict.strength() < w.verdict.strength())
        {
            weakest = Some(r);
        }
    }
    let describe = |p: &Path, es: &[crate::syntax::functions::Function<'_>]| {
        format!(
            "{}: entry points {}",
            p.display(),
            es.iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let compared = json!({"a": describe(a, &ea), "b": describe(b, &eb), "pairs": listed});
    let mut det = match weakest {
        Some(w) if !missing => w.deterministic,
        _ => Deterministic {
            verdict: Verdict::Unknown,
            method: "none",
            counterexample: None,
            trials: 0,
            notes: Vec::new(),
        },
    };
    det.trials = trials;
    det.notes = notes;
    det.notes
        .insert(0, format!("entry by entry: {} pair(s)", pairs.len()));
    let llm = opts
        .llm_samples
        .and_then(|n| ask_llm_texts((lang, ta), (lang, tb), n));
    Ok(report(det, llm, compared))
}

/// The normalisation proof alone (nothing runs): `equivalent` or `unknown`.
pub fn proof_only(a: &Side, b: &Side) -> Deterministic {
    let mut notes = Vec::new();
    let mut verdict = Verdict::Unknown;
    if a.language != b.language {
        notes.push("no proof across languages".to_string());
    } else {
        let fa = ParsedFile::parse(a.language, a.text.clone());
        let fb = ParsedFile::parse(b.language, b.text.clone());
        match (reselect(&fa, &a.sig), reselect(&fb, &b.sig)) {
            (Ok(ga), Ok(gb)) => match prove_sides((&fa, &ga), (&fb, &gb), a.path == b.path) {
                Ok(true) => verdict = Verdict::Equivalent,
                Ok(false) => notes.push("the normalised forms differ".to_string()),
                Err(e) => notes.push(format!("no normalisation: {e}")),
            },
            (Err(e), _) | (_, Err(e)) => notes.push(e),
        }
    }
    let mut method = if verdict == Verdict::Equivalent {
        "normalisation"
    } else {
        "none"
    };
    if verdict == Verdict::Unknown {
        // The bounded symbolic check runs nothing, so it may answer without consent to execute;
        // its counterexample cannot be confirmed here and stays a note.
        let globals = global_inputs(&a.sig, &b.sig);
        match common_domain(&a.sig, &b.sig).map(|d| symbolic(a, b, &d, &globals, Bounds::default()))
        {
            Ok(Symbolic::Bounded(bounds, complete)) => {
                verdict = Verdict::BoundedEquivalent;
                method = "bounded_smt";
                notes.push(bounded_note(bounds, complete));
            }
            Ok(Symbolic::Counterexample(v, _)) => notes.push(format!(
                "the bounded check (Z3) found a candidate counterexample, not executed: inputs {}",
                Json::Array(v.iter().map(Value::to_json).collect())
            )),
            Ok(Symbolic::Unknown(why)) => notes.push(format!("no bounded symbolic check: {why}")),
            Err(e) => notes.push(e),
        }
    }
    notes.push("differential testing not run (execution disabled)".to_string());
    Deterministic {
        verdict,
        method,
        counterexample: None,
        trials: 0,
        notes,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn old_style_definitions_that_parse_without_an_error_are_rewritten_too() {
        use crate::syntax::Language;
        // GNU make's `xmalloc`: tree-sitter-c reads a prototype and a block at file level.
        let text = "#include <stdlib.h>\nchar *\nxmalloc (size)\n     unsigned int size;\n{\n  return malloc (size);\n}\n";
        let (file, rewritten) = super::parse_source(Language::C, text.to_string());
        let names: Vec<String> = file.functions().iter().map(|f| f.name.clone()).collect();
        assert_eq!(names, ["xmalloc"]);
        assert!(rewritten.contains("xmalloc (unsigned int size)"));
        assert_eq!(rewritten.lines().count(), text.lines().count());
        // Standard C is left as written.
        let ansi = "int f(int a) {\n  return a;\n}\n";
        assert_eq!(super::parse_source(Language::C, ansi.to_string()).1, ansi);
    }

    #[test]
    fn only_headers_the_file_includes_get_stand_ins() {
        let err = "In file included from harness.c:8:\nuser.c:2:10: fatal error: conio.h: No such file or directory";
        assert_eq!(
            super::missing_header(err, "#include \"stdio.h\"\n#include \"conio.h\"\n"),
            Some("conio.h".to_string())
        );
        assert_eq!(
            super::missing_header(err, "# include <conio.h>\n"),
            Some("conio.h".to_string())
        );
        // Not included by the file itself, or a path outside the build folder: no stand-in.
        assert_eq!(super::missing_header(err, "#include <stdio.h>\n"), None);
        let up = "user.c:1:10: fatal error: ../x.h: No such file or directory";
        assert_eq!(super::missing_header(up, "#include \"../x.h\"\n"), None);
        assert_eq!(
            super::missing_header("user.c: error: expected ';'", "#include \"conio.h\"\n"),
            None
        );
    }
}
