//! Call-graph scores: Call Redundancy, Call Fabrication and Missed Calls (paper 000, section
//! 3.6.2 and appendix B.3).
//!
//! The paper describes the indicators in words; the formulas below are **this project's
//! operationalisation**. A call graph is a set of `(caller, callee)` name pairs. The
//! reference comes from the analyzer ([`crate::analysis::callgraph`]); the candidate from the
//! LLM's answer. All scores lie in [0, 1], higher is worse.
//!
//! # Normalisation
//!
//! 1. **Wrapper collapse.** A *thin wrapper* is a function defined in the analysed code with
//!    exactly one caller and exactly one callee, that callee being a library (undefined)
//!    function (`def log(m): print(m)`). Human annotators accept either the wrapper or what it
//!    wraps, so in both graphs every name matching a wrapper (similarity ≥ τ) is replaced by
//!    the wrapped callee, and the wrapper's own edge is dropped. Wrappers are found in the
//!    reference graph ([`CallGraphFacts::new`]); chains are followed up to 8 steps.
//! 2. **Identifier normalisation** ([`crate::crosscheck::names`]): tokenisation, synonym
//!    families, lambda grouping; edges with the same token keys merge.
//! 3. **Matching.** Names match when their similarity is at least τ (`match_threshold`,
//!    default 0.8: the method names must agree). An edge matches another when both callers and
//!    both callees match.
//!
//! # Formulas
//!
//! With `E_M` the candidate edges, `E_R` the reference edges, and `N_R` every name of the
//! reference (callers, callees, defined functions):
//!
//! ```text
//! call_redundancy  = |{e ∈ E_M : e matches no edge of E_R}| / |E_M|                 (0 if E_M = ∅)
//! call_fabrication = |{e ∈ E_M : e matches no edge, and its caller or its callee
//!                                matches no name of N_R}| / |E_M|                  (0 if E_M = ∅)
//! missed_calls     = |{r ∈ E_R : no edge of E_M matches r}| / |E_R|                 (0 if E_R = ∅)
//! ```
//!
//! Redundancy counts every invented edge; fabrication only those that invent a function or
//! call that exists nowhere in the reference (a non-existent interprocedural path), so it is
//! at most the redundancy, and its threshold is stricter. Pass iff `call_redundancy ≤ 0.22`,
//! `call_fabrication ≤ 0.12` and `missed_calls ≤ 0.25` ([`CgThresholds::default`]).
//!
//! # Worked example
//!
//! Reference (function `main` of a file that also defines `load`, `log` and `Report.render`):
//! `main → load`, `main → log`, `main → Report.render`, `main → len`, `log → print`. `log` is a
//! thin wrapper of `print` (one caller, one library callee): after collapse the reference is
//! `main → load`, `main → print`, `main → Report.render`, `main → len`.
//!
//! Candidate: `main → load`, `main → System.out.println` (println is in the print family: it
//! matches `print` with similarity 0.8), `main → self.render` (`render` matches
//! `Report.render`, 0.8), `main → validate` (exists nowhere: fabricated). `E_M` has 4 edges,
//! 3 match: `call_redundancy = 1/4 = 0.25` (fails, > 0.22), `call_fabrication = 1/4 = 0.25`
//! (fails); `len` is missed: `missed_calls = 1/4 = 0.25` (passes). Dropping `validate` gives
//! 0 / 0 / 0.25: pass.

use super::within;
use crate::crosscheck::names::{similarity, tokens};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Wrapper chains are followed at most this far.
const MAX_WRAPPER_STEPS: usize = 8;
/// At most this many candidate edges are scored.
pub const MAX_EDGES: usize = 4000;

/// Thresholds (inclusive) and the name-match threshold τ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgThresholds {
    pub call_redundancy: f64,
    pub call_fabrication: f64,
    pub missed_calls: f64,
    pub match_threshold: f64,
}

impl Default for CgThresholds {
    /// The paper's values: 0.22 / 0.12 / 0.25; names match from similarity 0.8.
    fn default() -> Self {
        CgThresholds {
            call_redundancy: 0.22,
            call_fabrication: 0.12,
            missed_calls: 0.25,
            match_threshold: 0.8,
        }
    }
}

/// The analyzer's call graph as names, with what wrapper collapse needs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CallGraphFacts {
    pub edges: BTreeSet<(String, String)>,
    /// Functions defined in the analysed code.
    pub defined: BTreeSet<String>,
    /// Thin wrapper -> the library function it wraps.
    pub wrappers: BTreeMap<String, String>,
}

impl CallGraphFacts {
    /// Builds the facts and detects thin wrappers over `whole_graph` (the file's or the
    /// workspace's edges, so that in- and out-degrees are complete); `edges` is the part being
    /// compared (e.g. one function's outgoing edges).
    pub fn new(
        edges: BTreeSet<(String, String)>,
        defined: BTreeSet<String>,
        whole_graph: &BTreeSet<(String, String)>,
    ) -> CallGraphFacts {
        let mut callers: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut callees: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (a, b) in whole_graph {
            callees.entry(a).or_default().insert(b);
            callers.entry(b).or_default().insert(a);
        }
        let mut wrappers = BTreeMap::new();
        for w in &defined {
            let (Some(out), Some(inn)) = (callees.get(w.as_str()), callers.get(w.as_str())) else {
                continue;
            };
            if out.len() == 1 && inn.len() == 1 {
                if let Some(target) = out.iter().next() {
                    if !defined.contains(*target) && *target != w.as_str() {
                        wrappers.insert(w.clone(), target.to_string());
                    }
                }
            }
        }
        CallGraphFacts {
            edges,
            defined,
            wrappers,
        }
    }
}

/// What one candidate edge is, judged against the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallJudgement {
    Matched,
    /// Matches no reference edge, but both ends exist somewhere in the reference.
    Unmatched,
    /// Matches no reference edge and names a function or call the reference does not have.
    Fabricated,
    /// The caller's code never mentions the callee: syntax rules the call out
    /// (see [`mentions`]).
    Impossible,
}

/// The three call-graph scores, the verdict and per-edge evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CgScores {
    pub call_redundancy: f64,
    pub call_fabrication: f64,
    pub missed_calls: f64,
    pub pass: bool,
    pub thresholds: CgThresholds,
    /// Reference edges (after collapse, by their first name) and whether they were found.
    pub reference_edges: Vec<((String, String), bool)>,
    /// Candidate edges (after collapse) and their judgements.
    pub candidate_edges: Vec<((String, String), CallJudgement)>,
    /// Wrappers collapsed (wrapper -> wrapped).
    pub collapsed_wrappers: BTreeMap<String, String>,
}

struct Named {
    name: String,
    tokens: Vec<String>,
}

fn named(name: &str) -> Named {
    Named {
        name: name.to_string(),
        tokens: tokens(name),
    }
}

/// Applies wrapper collapse to a name: the wrapped library function when the name matches a
/// wrapper, else the name itself.
fn collapse(name: &str, wrappers: &[(Vec<String>, String)], tau: f64) -> Option<String> {
    let mut cur = name.to_string();
    let mut changed = false;
    for _ in 0..MAX_WRAPPER_STEPS {
        let t = tokens(&cur);
        let hit = wrappers
            .iter()
            .filter(|(wt, _)| similarity(&t, wt) >= tau)
            .max_by(|a, b| {
                similarity(&t, &a.0)
                    .total_cmp(&similarity(&t, &b.0))
                    .then_with(|| b.1.cmp(&a.1))
            });
        match hit {
            Some((_, target)) if *target != cur => {
                cur = target.clone();
                changed = true;
            }
            _ => break,
        }
    }
    changed.then_some(cur)
}

/// The edges after wrapper collapse, merged by token keys (first name in order kept).
fn normalise(
    edges: &BTreeSet<(String, String)>,
    wrappers: &[(Vec<String>, String)],
    tau: f64,
) -> Vec<(Named, Named)> {
    let mut seen: BTreeSet<(Vec<String>, Vec<String>)> = BTreeSet::new();
    let mut out = Vec::new();
    for (a, b) in edges.iter().take(MAX_EDGES) {
        // The wrapper's own edge disappears with the wrapper.
        if collapse(a, wrappers, tau).is_some() {
            continue;
        }
        let b = collapse(b, wrappers, tau).unwrap_or_else(|| b.clone());
        let (na, nb) = (named(a), named(&b));
        if na.tokens.is_empty() || nb.tokens.is_empty() {
            continue;
        }
        if seen.insert((na.tokens.clone(), nb.tokens.clone())) {
            out.push((na, nb));
        }
    }
    out
}

/// Tokens that are no evidence of a syntactic mention (implicit or generic names).
const GENERIC_TOKENS: [&str; 8] = [
    "init", "lambda", "new", "call", "apply", "operator", "invoke", "run",
];

/// True when `callee` could be called from code whose identifier tokens are `code_tokens`:
/// the last non-generic token of its name (its own name, after synonym mapping) occurs in
/// the code, or the name is implicit (dunder methods, operators, destructors) or consists of
/// generic tokens only. A call whose name the code never mentions is ruled out by syntax.
pub fn mentions(callee: &str, code_tokens: &BTreeSet<String>) -> bool {
    let trimmed = callee.trim();
    let last = trimmed
        .rsplit(['.', ':', '>'])
        .next()
        .unwrap_or(trimmed)
        .trim();
    if last.starts_with("__") || last.starts_with('~') || last.starts_with("operator") {
        return true;
    }
    // The callee's own name (its last specific token) must occur: `obj.save()` mentions
    // `save`, `fp = helper; fp()` mentions `helper`.
    match tokens(callee)
        .iter()
        .rev()
        .find(|x| !GENERIC_TOKENS.contains(&x.as_str()))
    {
        Some(name) => code_tokens.contains(name),
        None => true,
    }
}

/// The identifier tokens of a piece of code (every word, normalised like names).
pub fn code_tokens(code: &str) -> BTreeSet<String> {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
        .take(200_000)
        .flat_map(tokens)
        .collect()
}

/// Scores a candidate call graph against the reference. `caller_code_tokens`: the identifier
/// tokens of the caller's code when every candidate edge has that one caller (a per-function
/// question); unmatched edges to callees it never mentions are then judged impossible, unless
/// `reference_partial`.
pub fn score_call_graph(
    reference: &CallGraphFacts,
    candidate: &BTreeSet<(String, String)>,
    caller_code_tokens: Option<&BTreeSet<String>>,
    reference_partial: bool,
    t: &CgThresholds,
) -> CgScores {
    let tau = t.match_threshold;
    let wrappers: Vec<(Vec<String>, String)> = reference
        .wrappers
        .iter()
        .map(|(w, x)| (tokens(w), x.clone()))
        .collect();
    let r = normalise(&reference.edges, &wrappers, tau);
    let m = normalise(candidate, &wrappers, tau);

    let mut universe: Vec<Vec<String>> = Vec::new();
    let mut seen_names = BTreeSet::new();
    for (a, b) in &r {
        for n in [a, b] {
            if seen_names.insert(n.tokens.clone()) {
                universe.push(n.tokens.clone());
            }
        }
    }
    for d in &reference.defined {
        if reference.wrappers.contains_key(d) {
            continue;
        }
        let tk = tokens(d);
        if !tk.is_empty() && seen_names.insert(tk.clone()) {
            universe.push(tk);
        }
    }

    let mut memo: BTreeMap<(Vec<String>, Vec<String>), bool> = BTreeMap::new();
    let mut matches = |x: &[String], y: &[String]| -> bool {
        let k = (x.to_vec(), y.to_vec());
        if let Some(v) = memo.get(&k) {
            return *v;
        }
        let v = similarity(x, y) >= tau;
        memo.insert(k, v);
        v
    };

    let mut found = vec![false; r.len()];
    let mut candidate_edges = Vec::with_capacity(m.len());
    let (mut unmatched, mut fabricated) = (0usize, 0usize);
    for (a, b) in &m {
        let mut hit = false;
        for (i, (c, d)) in r.iter().enumerate() {
            if matches(&a.tokens, &c.tokens) && matches(&b.tokens, &d.tokens) {
                hit = true;
                if let Some(f) = found.get_mut(i) {
                    *f = true;
                }
            }
        }
        let judgement = if hit {
            CallJudgement::Matched
        } else {
            unmatched += 1;
            let known = |n: &Named, memo: &mut dyn FnMut(&[String], &[String]) -> bool| {
                universe.iter().any(|u| memo(&n.tokens, u))
            };
            let invented = !known(a, &mut matches) || !known(b, &mut matches);
            if invented {
                fabricated += 1;
            }
            let impossible =
                !reference_partial && caller_code_tokens.is_some_and(|ct| !mentions(&b.name, ct));
            if impossible {
                CallJudgement::Impossible
            } else if invented {
                CallJudgement::Fabricated
            } else {
                CallJudgement::Unmatched
            }
        };
        candidate_edges.push(((a.name.clone(), b.name.clone()), judgement));
    }
    let missed = found.iter().filter(|f| !**f).count();
    let call_redundancy = ratio(unmatched, m.len());
    let call_fabrication = ratio(fabricated, m.len());
    let missed_calls = ratio(missed, r.len());
    let pass = within(call_redundancy, t.call_redundancy)
        && within(call_fabrication, t.call_fabrication)
        && within(missed_calls, t.missed_calls);
    CgScores {
        call_redundancy,
        call_fabrication,
        missed_calls,
        pass,
        thresholds: *t,
        reference_edges: r
            .iter()
            .zip(found)
            .map(|((a, b), f)| ((a.name.clone(), b.name.clone()), f))
            .collect(),
        candidate_edges,
        collapsed_wrappers: reference.wrappers.clone(),
    }
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn set(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn worked_reference() -> CallGraphFacts {
        let whole = edges(&[
            ("main", "load"),
            ("main", "log"),
            ("main", "Report.render"),
            ("main", "len"),
            ("log", "print"),
        ]);
        let main_edges = edges(&[
            ("main", "load"),
            ("main", "log"),
            ("main", "Report.render"),
            ("main", "len"),
        ]);
        CallGraphFacts::new(
            main_edges,
            set(&["main", "load", "log", "Report.render"]),
            &whole,
        )
    }

    #[test]
    fn thin_wrappers_are_detected() {
        let r = worked_reference();
        assert_eq!(
            r.wrappers,
            BTreeMap::from([("log".to_string(), "print".to_string())])
        );
    }

    #[test]
    fn worked_example_scores() {
        let r = worked_reference();
        let m = edges(&[
            ("main", "load"),
            ("main", "System.out.println"),
            ("main", "self.render"),
            ("main", "validate"),
        ]);
        let s = score_call_graph(&r, &m, None, false, &CgThresholds::default());
        assert_eq!(
            (s.call_redundancy, s.call_fabrication, s.missed_calls),
            (0.25, 0.25, 0.25),
            "{s:#?}"
        );
        assert!(!s.pass);
        let missed: Vec<_> = s
            .reference_edges
            .iter()
            .filter(|(_, f)| !f)
            .map(|(e, _)| e.1.as_str())
            .collect();
        assert_eq!(missed, ["len"]);
        let m = edges(&[
            ("main", "load"),
            ("main", "System.out.println"),
            ("main", "self.render"),
        ]);
        let s = score_call_graph(&r, &m, None, false, &CgThresholds::default());
        assert_eq!(
            (s.call_redundancy, s.call_fabrication, s.missed_calls),
            (0.0, 0.0, 0.25)
        );
        assert!(s.pass);
    }

    #[test]
    fn naming_the_wrapper_itself_is_also_accepted() {
        let r = worked_reference();
        let m = edges(&[
            ("main", "load"),
            ("main", "log"),
            ("main", "Report.render"),
            ("main", "len"),
        ]);
        let s = score_call_graph(&r, &m, None, false, &CgThresholds::default());
        assert_eq!(
            (s.call_redundancy, s.call_fabrication, s.missed_calls),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn redundant_but_not_fabricated_edges() {
        // `load` exists (called by main) but main does not call it from `helper`.
        let whole = edges(&[("main", "load"), ("helper", "save")]);
        let r = CallGraphFacts::new(
            whole.clone(),
            set(&["main", "helper", "load", "save"]),
            &whole,
        );
        let m = edges(&[("main", "load"), ("helper", "save"), ("helper", "load")]);
        let s = score_call_graph(&r, &m, None, false, &CgThresholds::default());
        assert!((s.call_redundancy - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.call_fabrication, 0.0);
        assert_eq!(s.missed_calls, 0.0);
    }

    #[test]
    fn lambda_variants_merge() {
        let whole = edges(&[("main.<lambda@3>", "print"), ("main", "map")]);
        let r = CallGraphFacts::new(whole.clone(), set(&["main", "main.<lambda@3>"]), &whole);
        let m = edges(&[
            ("main.lambda$0", "print"),
            ("main.lambda$1", "print"),
            ("main", "map"),
        ]);
        let s = score_call_graph(&r, &m, None, false, &CgThresholds::default());
        assert_eq!(s.candidate_edges.len(), 2, "{s:#?}");
        assert_eq!(
            (s.call_redundancy, s.call_fabrication, s.missed_calls),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn unmentioned_callees_are_impossible() {
        let r = worked_reference();
        let code = code_tokens("def main():\n    load()\n    log(len(x))\n    Report().render()\n");
        let m = edges(&[
            ("main", "load"),
            ("main", "delete_everything"),
            ("main", "len.__call__"),
        ]);
        let s = score_call_graph(&r, &m, Some(&code), false, &CgThresholds::default());
        let judged: BTreeMap<&str, CallJudgement> = s
            .candidate_edges
            .iter()
            .map(|((_, b), j)| (b.as_str(), *j))
            .collect();
        assert_eq!(judged["load"], CallJudgement::Matched);
        assert_eq!(judged["delete_everything"], CallJudgement::Impossible);
        assert_eq!(judged["len.__call__"], CallJudgement::Fabricated);
        let s = score_call_graph(&r, &m, Some(&code), true, &CgThresholds::default());
        assert!(s
            .candidate_edges
            .iter()
            .all(|(_, j)| *j != CallJudgement::Impossible));
    }

    #[test]
    fn mention_rule() {
        let code = code_tokens("x = a.size(); obj.~Foo(); printf(\"%d\", n);");
        assert!(mentions("size", &code));
        assert!(mentions("length", &code)); // size family
        assert!(mentions("println", &code)); // print family
        assert!(mentions("Foo.__enter__", &code));
        assert!(mentions("operator+", &code));
        assert!(mentions("<lambda>", &code));
        assert!(!mentions("system", &code));
        // The callee's own name must occur, not just some word of it.
        assert!(!mentions("obj.send", &code));
        assert!(mentions("os.size", &code));
    }

    #[test]
    fn empty_graphs() {
        let empty = CallGraphFacts::default();
        let s = score_call_graph(
            &empty,
            &BTreeSet::new(),
            None,
            false,
            &CgThresholds::default(),
        );
        assert!(s.pass);
        let r = worked_reference();
        let s = score_call_graph(&r, &BTreeSet::new(), None, false, &CgThresholds::default());
        assert_eq!(s.missed_calls, 1.0);
        assert!(!s.pass);
        let s = score_call_graph(
            &empty,
            &edges(&[("a", "b")]),
            None,
            false,
            &CgThresholds::default(),
        );
        assert_eq!((s.call_redundancy, s.call_fabrication), (1.0, 1.0));
    }
}
