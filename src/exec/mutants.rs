//! Surviving mutants classified as equivalent or not, with the evidence chain of `equiv`
//! ([`super::equiv::check`]). Readers for the formats that carry (or do not carry) the mutated
//! source turn each mutant into a [`MutantCase`]; [`classify_mutant`] gives its verdict.
//!
//! | format | what is read | mutated source |
//! |---|---|---|
//! | MutantBench | `mutants.jsonl` (unified diff against `programs/<file>`, label) | diff applied |
//! | EqBench | `Eq`/`Neq` folders with `oldV`/`newV` (or `old`/`new`) `.java` and `.c` | the new version |
//! | cargo-mutants | `outcomes.json`, `MissedMutant` outcomes; the diff inline (`diff`) or in `diff_path` | diff applied; Rust is not supported by the parser and sandbox, so verdicts are `unknown` |
//! | mutmut 3 | `mutants/**/*.py.meta` (`exit_code_by_key`, exit code 0 = survived) next to the instrumented module | `x_f__mutmut_N` renamed back to `f` |
//! | mutmut 2 | `.mutmut-cache` (SQLite: `SourceFile`, `Line`, `Mutant` with status `bad_survived`) | none: only the original line and the index of mutmut's operator are stored, so survivors are listed `unknown` |
//! | PIT | `mutations.xml`, `status='SURVIVED'` | none: PIT mutates bytecode and records only class, method, line, mutator and a description, so survivors are listed `unknown` |

use super::equiv::{check, check_entries_texts, side_from_text, EquivOptions, Pick};
use crate::analysis::equiv::mutant::{apply_unified_diff, mutmut_pair, parse_pit};
use crate::analysis::equiv::Verdict;
use crate::crosscheck::record::Tier;
use crate::syntax::{Language, ParsedFile};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// Which function a mutant changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The only function or the entry point of each program.
    Auto,
    /// By name in both programs.
    Name(String),
    /// The function enclosing the first changed line, in each program's own numbering.
    Lines { original: usize, mutated: usize },
    /// Every entry point of each program, pair by pair (`equiv --all-entries`): a program
    /// whose description names no function it defines.
    AllEntries,
}

/// One mutant: the original program and the mutated one (or why there is none).
#[derive(Debug, Clone)]
pub struct MutantCase {
    pub id: String,
    /// `mutantbench`, `eqbench`, `cargo-mutants`, `mutmut`, `pit`.
    pub format: &'static str,
    /// The program's file (its extension gives the language; also names it in messages).
    pub path: PathBuf,
    pub original: String,
    /// The mutated program, or why it cannot be had.
    pub mutated: Result<String, String>,
    pub target: Target,
    /// The label, when the data set has one (`true` = equivalent).
    pub expected: Option<bool>,
    /// Operator or description, for the report.
    pub description: String,
}

/// The classification of one mutant.
#[derive(Debug, Clone)]
pub struct MutantVerdict {
    pub id: String,
    pub format: &'static str,
    pub file: String,
    pub language: Option<Language>,
    pub function: Option<String>,
    pub expected: Option<bool>,
    /// Proof and differential testing alone.
    pub deterministic: Verdict,
    /// The product's verdict (with the LLM step when it was asked).
    pub verdict: Verdict,
    pub tier: Option<Tier>,
    pub method: &'static str,
    pub counterexample: Option<Json>,
    pub trials: usize,
    pub notes: Vec<String>,
    pub llm: Option<Json>,
}

impl MutantVerdict {
    pub fn to_json(&self) -> Json {
        json!({
            "id": self.id,
            "format": self.format,
            "file": self.file,
            "language": self.language.map(|l| l.name()),
            "function": self.function,
            "expected": self.expected.map(|e| if e { "equivalent" } else { "not_equivalent" }),
            "deterministic": self.deterministic.name(),
            "verdict": self.verdict.name(),
            "tier": self.tier.map(|t| t.name()),
            "method": self.method,
            "counterexample": self.counterexample,
            "trials": self.trials,
            "notes": self.notes,
            "llm": self.llm,
        })
    }

    fn unknown(case: &MutantCase, note: String) -> MutantVerdict {
        MutantVerdict {
            id: case.id.clone(),
            format: case.format,
            file: case.path.display().to_string(),
            language: Language::from_path(&case.path),
            function: None,
            expected: case.expected,
            deterministic: Verdict::Unknown,
            verdict: Verdict::Unknown,
            tier: None,
            method: "none",
            counterexample: None,
            trials: 0,
            notes: vec![note],
            llm: None,
        }
    }
}

/// Classifies one mutant: original and mutated function (each in its whole program, for the
/// callees, fields and constants), then proof, differential testing and the LLM as in `equiv`.
/// Never fails: a mutant that cannot be classified is `unknown` with the reason in `notes`.
pub fn classify_mutant(case: &MutantCase, opts: &EquivOptions) -> MutantVerdict {
    let mut no_proof = None;
    let mut v = classify_mutant_with(case, opts, &mut no_proof);
    // An `unknown` says why the proof, which needs no run, did not decide it either.
    if v.deterministic == Verdict::Unknown {
        if let Some(why) = no_proof {
            if !v.notes.iter().any(|n| n.starts_with("no normalisation")) {
                v.notes.insert(0, format!("no normalisation proof: {why}"));
            }
        }
    }
    v
}

fn classify_mutant_with(
    case: &MutantCase,
    opts: &EquivOptions,
    no_proof: &mut Option<String>,
) -> MutantVerdict {
    let mutated = match &case.mutated {
        Ok(m) => m.clone(),
        Err(why) => return MutantVerdict::unknown(case, why.clone()),
    };
    let Some(language) = Language::from_path(&case.path) else {
        return MutantVerdict::unknown(
            case,
            format!(
                "{}: language not supported by the parser and sandbox",
                case.path.display()
            ),
        );
    };
    if case.original == mutated {
        return MutantVerdict::unknown(case, "the mutant changes nothing".into());
    }
    let (pa, pb) = match &case.target {
        Target::AllEntries => return classify_entries(case, &mutated, language, opts),
        Target::Auto => (Pick::Auto, Pick::Auto),
        Target::Name(n) => (Pick::Name(n), Pick::Name(n)),
        Target::Lines { original, mutated } => (Pick::Line(*original), Pick::Line(*mutated)),
    };
    // The proof first: it runs nothing, and it needs no harness (a function whose parameters
    // none can fill, a program that does not build for want of a header).
    match super::equiv::proof_without_signature(
        language,
        (&case.original, pa),
        (&mutated, pb),
        true,
    ) {
        Ok((report, function)) => {
            let notes = report.deterministic.notes.clone();
            return verdict_of(case, language, Some(function), &report, notes);
        }
        Err(why) => *no_proof = Some(why),
    }
    // A mutant given as a change of a program's lines is a change of that program: it is
    // observed through what `main` calls (whether or not the function can be called alone).
    let mut fallback: Option<(String, MutantVerdict)> = None;
    if let Target::Lines { .. } = case.target {
        if let Some(name) = function_of_change(language, &case.original, &mutated) {
            match through_observers(case, &mutated, language, opts, &name) {
                Some(Observed::Decided(v)) => return v,
                Some(Observed::Fallback(v)) => fallback = Some((name, v)),
                None => {}
            }
        }
    }
    let sides = side_from_text(&case.path, language, case.original.clone(), pa)
        .and_then(|a| side_from_text(&case.path, language, mutated.clone(), pb).map(|b| (a, b)));
    let (a, b) = match sides {
        Ok(s) => s,
        Err(e) => {
            // A function that cannot be called alone is still observable through its program.
            if let Some(v) = as_programs(case, &mutated, language, opts, None, &e) {
                return v;
            }
            if let Some((name, v)) = fallback {
                return fell_back(v, &name, &e);
            }
            let mut v = MutantVerdict::unknown(case, e);
            v.language = Some(language);
            return v;
        }
    };
    // A program's `main`: no parameters, or the command line (`int main(int a, int b)` of
    // a test program is a function like any other).
    let is_main = a.sig.name == "main"
        && a.sig.class.is_none()
        && (a.sig.raw.is_empty() || a.sig.raw.first().is_some_and(|r| r.name == "argc"));
    if is_main {
        if let Some(v) = as_programs(case, &mutated, language, opts, Some("main"), "") {
            return v;
        }
    }
    let mut notes = Vec::new();
    if a.sig.name != b.sig.name {
        notes.push(format!(
            "the mutant renames the function (`{}` -> `{}`)",
            a.sig.name, b.sig.name
        ));
    }
    let report = check(&a, &b, opts);
    if report.deterministic.verdict == Verdict::Unknown {
        let why = format!(
            "`{}` alone: {}",
            a.sig.name,
            report.deterministic.notes.join("; ")
        );
        if let Some(v) = as_programs(case, &mutated, language, opts, None, &why) {
            return v;
        }
        if let Some((name, v)) = fallback {
            return fell_back(v, &name, &why);
        }
    }
    notes.extend(report.deterministic.notes.iter().cloned());
    verdict_of(case, language, Some(qualified_name(&a)), &report, notes)
}

/// `Class.name`, or `name` for a function outside classes.
fn qualified_name(side: &super::equiv::Side) -> String {
    match &side.sig.class {
        Some(c) => format!("{c}.{}", side.sig.name),
        None => side.sig.name.clone(),
    }
}

/// Keeps in `weakest` the weaker verdict of it and `report` (named `name`), a refutation being
/// the weakest; `true` when `report` refutes (nothing weaker can follow).
fn keep_weakest(
    weakest: &mut Option<(String, super::equiv::EquivReport)>,
    name: String,
    report: super::equiv::EquivReport,
) -> bool {
    let v = report.deterministic.verdict;
    if weakest
        .as_ref()
        .is_none_or(|(_, w)| v.strength() < w.deterministic.verdict.strength())
    {
        *weakest = Some((name, report));
    }
    v == Verdict::NotEquivalent
}

/// A C or C++ mutant compared as whole programs (standard input and arguments to standard
/// output and exit status, on inputs shaped by the program's own reads:
/// [`crate::analysis::equiv::reads`]): for a mutant of a program's `main` (no parameters, or
/// `argc` and `argv`; `entry` is `Some("main")`; `None` when the programs give no evidence,
/// so that the function harness tries), and
/// for a mutant of a function that cannot be compared alone (`why` says why) when the
/// program's `main` reads standard input through `scanf` formats. `None` when that does not
/// apply: another language, no `main`, a program that reads nothing through `scanf`, or one
/// that reads its command line in a way the shape does not capture (`argc` tested, `argv`
/// indexed by a variable); it would run on inputs that never reach the mutant.
fn as_programs(
    case: &MutantCase,
    mutated: &str,
    language: Language,
    opts: &EquivOptions,
    entry: Option<&str>,
    why: &str,
) -> Option<MutantVerdict> {
    use super::program::{Program, ProgramOptions};
    use crate::analysis::equiv::program::CompareMode;
    if !matches!(language, Language::C | Language::Cpp) || !opts.execute {
        return None;
    }
    let pa = Program::from_text(&case.path, language, case.original.clone()).ok()?;
    let pb = Program::from_text(&case.path, language, mutated.to_string()).ok()?;
    let reads = &pa.reads;
    // The command line as `main`'s body reads it (`int main(char *argv, int argc)` that
    // never looks at them reads nothing).
    let (file, _) = super::equiv::parse_source(pa.language, pa.text.clone());
    let functions = file.functions();
    let main = functions
        .iter()
        .find(|f| f.simple_name == "main" && f.class.is_none());
    let main_body = main
        .and_then(|f| f.body)
        .map(|b| file.text[b.byte_range()].to_string())
        .unwrap_or_else(|| pa.text.clone());
    // A `main()` (or `main(void)`) has no command line: an `argc` in its body is a local
    // (a self-test that builds its own `argv`).
    let takes_args = main.is_none_or(|f| f.params.iter().any(|p| !p.is_empty()));
    let argc_unknown = takes_args && reads.args.is_empty() && main_body.contains("argc");
    let argv_variable = takes_args && main_body.contains("argv[") && reads.args.is_empty();
    if argc_unknown || argv_variable {
        return None;
    }
    // A `main` that reads nothing is observed better by the function harness (globals after
    // the call, not only the printed text).
    if entry.is_some() && reads.is_empty() {
        return None;
    }
    // Each run of a program gets at most 10 s.
    let limits = super::sandbox::Limits {
        wall: opts
            .diff
            .limits
            .wall
            .min(std::time::Duration::from_secs(10)),
        ..opts.diff.limits
    };
    // A program that reads nothing has one behaviour: its one run is evidence about the
    // mutant only when it calls the mutated function (checked on a marked build).
    let mut reach_note = None;
    if entry.is_none() && reads.is_empty() {
        let line = mutated_line(case, &pa)?;
        if super::program::reaches_function_at(&pa, line, limits) != Ok(true) {
            return None;
        }
        reach_note = Some(
            "the program reads no input: its one run (empty standard input, no arguments) calls the mutated function"
                .to_string(),
        );
    } else if entry.is_none() && reads.stdin.is_empty() {
        return None;
    }
    // The one run of a program that reads nothing is its behaviour, a failing exit included
    // (a self-test that ends with an error status ends so on both sides or not): it counts
    // as a given input, status and all, since the marked build showed it calls the mutant.
    let (inputs, generated) = if reach_note.is_some() {
        (
            vec![(
                "the program's one run (empty standard input)".to_string(),
                String::new(),
            )],
            0,
        )
    } else {
        (Vec::new(), opts.diff.trials.clamp(1, 200))
    };
    let popts = ProgramOptions {
        inputs,
        generated,
        seed: opts.diff.seed,
        compare: CompareMode::Exact,
        limits,
        more_within: None,
    };
    let report = super::equiv::check_programs(&pa, &pb, &popts, opts.llm_samples);
    if reach_note.is_some() && report.deterministic.verdict == Verdict::NotEquivalent {
        // A difference counts only if the original program repeats itself (no clock, no
        // addresses, no uninitialised memory in its output).
        let again = super::program::run_programs(&pa, &pa, &popts);
        if again.verdict != Verdict::Equivalent && again.verdict != Verdict::LikelyEquivalent {
            return None;
        }
    }
    if entry.is_some() && report.deterministic.verdict == Verdict::Unknown {
        // `main` could not be run as a program (it does not build alone, every input was
        // discarded): the function harness tries it.
        return None;
    }
    let mut notes = Vec::new();
    if entry.is_none() {
        notes.push(format!(
            "compared through the whole program: {}",
            why.chars().take(300).collect::<String>()
        ));
    }
    notes.extend(reach_note);
    notes.extend(report.deterministic.notes.iter().cloned());
    Some(verdict_of(
        case,
        language,
        Some("main".into()),
        &report,
        notes,
    ))
}

/// A mutant of `function` compared through the functions its program's `main` calls that
/// reach it ([`program_observers`]), each with the mutated `function` inside: a difference
/// of `function` that no caller lets through is no difference of the program. A C function
/// that nothing reached from `main` calls is never run: the mutant is `equivalent` (method
/// `unreachable`). `None` (the
/// function is compared alone) when there are no such callers, when the mutant changes
/// them, or when any of them cannot be decided. A refutation through any caller is the
/// verdict, else the weakest of their verdicts (`equivalent` or `bounded_equivalent`); when
/// that rests on trials alone (`likely_equivalent`: random inputs of a caller reach fewer of
/// the function's paths than its own) it is only a fallback, the verdict when the function
/// alone gives none.
fn through_observers(
    case: &MutantCase,
    mutated: &str,
    language: Language,
    opts: &EquivOptions,
    function: &str,
) -> Option<Observed> {
    use crate::analysis::equiv::slice::program_observers;
    if language == Language::Java {
        return through_class_methods(case, mutated, opts, function);
    }
    let of = |text: &str| {
        let (file, _) = super::equiv::parse_source(language, text.to_string());
        program_observers(&file, function)
    };
    let observers = of(&case.original)?;
    if of(mutated).as_ref() != Some(&observers) {
        return None;
    }
    if observers.is_empty() {
        // Dead code: the mutant changes nothing the program runs.
        let mut v = MutantVerdict::unknown(
            case,
            format!(
                "`{function}` is never run: no chain of calls from `main` reaches it, and its name is used only in calls"
            ),
        );
        v.language = Some(language);
        v.function = Some(function.to_string());
        v.deterministic = Verdict::Equivalent;
        v.verdict = Verdict::Equivalent;
        v.tier = Some(Tier::Confirmed);
        v.method = "unreachable";
        return Some(Observed::Decided(v));
    }
    let mut weakest: Option<(String, super::equiv::EquivReport)> = None;
    for g in &observers {
        let a = side_from_text(&case.path, language, case.original.clone(), Pick::Name(g)).ok()?;
        let b = side_from_text(&case.path, language, mutated.to_string(), Pick::Name(g)).ok()?;
        let report = check(&a, &b, opts);
        if report.deterministic.verdict == Verdict::Unknown {
            return None;
        }
        if keep_weakest(&mut weakest, g.clone(), report) {
            break;
        }
    }
    let (g, report) = weakest?;
    let mut notes = vec![format!(
        "`{function}` compared through `{g}` (which `main` calls, and which calls `{function}`): {}",
        if observers.len() == 1 {
            "the only way the program reaches it".to_string()
        } else {
            format!("the program reaches it through {}", observers.join(", "))
        }
    )];
    notes.extend(report.deterministic.notes.iter().cloned());
    let v = verdict_of(case, language, Some(g), &report, notes);
    // Trials through a caller reach fewer of the function's paths than trials of the function
    // itself: only a refutation or a symbolic verdict through the callers decides.
    Some(
        if report.deterministic.verdict == Verdict::LikelyEquivalent {
            Observed::Fallback(v)
        } else {
            Observed::Decided(v)
        },
    )
}

/// What comparing a mutant through the callers of its function gave.
enum Observed {
    /// The verdict.
    Decided(MutantVerdict),
    /// Trials alone (`likely_equivalent`): the verdict only when the function compared alone
    /// gives none (every input discarded, no harness for its parameters).
    Fallback(MutantVerdict),
}

/// `fallback` (the callers' trials), noted with why the function alone gave no verdict.
fn fell_back(mut v: MutantVerdict, function: &str, why: &str) -> MutantVerdict {
    v.notes.insert(
        0,
        format!(
            "`{function}` alone gave no verdict ({}): the verdict is that of the trials through its callers",
            why.chars().take(300).collect::<String>()
        ),
    );
    v
}

/// A Java mutant of a `private` method compared through the methods of its class that reach it
/// ([`crate::analysis::equiv::slice::java_private_observers`]), each picked by its line in
/// either text. As for C's callers, only a refutation through one of them, or a symbolic
/// verdict through all of them, decides; a method the harness cannot call can only refute
/// through the others; trials alone are a fallback ([`Observed::Fallback`]). `None` otherwise
/// (the method is then compared alone).
/// The most methods a private method's mutant is compared through (each is a full check); the
/// others can only be missed refutations, so past this bound only a refutation decides.
const MAX_CLASS_OBSERVERS: usize = 4;

fn through_class_methods(
    case: &MutantCase,
    mutated: &str,
    opts: &EquivOptions,
    function: &str,
) -> Option<Observed> {
    use crate::analysis::equiv::slice::java_private_observers;
    let language = Language::Java;
    let of = |text: &str| {
        let (file, _) = super::equiv::parse_source(language, text.to_string());
        java_private_observers(&file, function)
    };
    let ours = of(&case.original)?;
    let theirs = of(mutated)?;
    let names = |v: &[(String, usize)]| v.iter().map(|o| o.0.clone()).collect::<Vec<_>>();
    if names(&ours) != names(&theirs) {
        return None;
    }
    let mut weakest: Option<(String, super::equiv::EquivReport)> = None;
    let mut skipped = Vec::new();
    for (k, ((g, line_a), (_, line_b))) in ours.iter().zip(&theirs).enumerate() {
        if k >= MAX_CLASS_OBSERVERS {
            skipped.push(g.clone());
            continue;
        }
        let sides = side_from_text(
            &case.path,
            language,
            case.original.clone(),
            Pick::Line(*line_a),
        )
        .and_then(|a| {
            side_from_text(
                &case.path,
                language,
                mutated.to_string(),
                Pick::Line(*line_b),
            )
            .map(|b| (a, b))
        });
        let Ok((a, b)) = sides else {
            skipped.push(g.clone());
            continue;
        };
        let report = check(&a, &b, opts);
        if report.deterministic.verdict == Verdict::Unknown {
            skipped.push(g.clone());
        } else if keep_weakest(&mut weakest, qualified_name(&a), report) {
            break;
        }
    }
    let (g, report) = weakest?;
    let all: Vec<String> = names(&ours);
    let mut notes = vec![format!(
        "`{function}` is private: compared through `{g}` (its class reaches it only through {})",
        all.join(", ")
    )];
    notes.extend(report.deterministic.notes.iter().cloned());
    let v = verdict_of(case, language, Some(g), &report, notes);
    match report.deterministic.verdict {
        Verdict::NotEquivalent => Some(Observed::Decided(v)),
        Verdict::LikelyEquivalent => Some(Observed::Fallback(v)),
        _ if skipped.is_empty() => Some(Observed::Decided(v)),
        _ => None,
    }
}

/// The C/C++/Java function (not `main`) that holds every line the mutant changes: the innermost
/// function of the original (read as the harness reads it) around the first and the last
/// line that differ. `None` when the change spans functions or lies outside them.
fn function_of_change(language: Language, original: &str, mutated: &str) -> Option<String> {
    if !matches!(language, Language::C | Language::Cpp | Language::Java) {
        return None;
    }
    let a: Vec<&str> = original.lines().collect();
    let b: Vec<&str> = mutated.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
        .min(a.len().min(b.len()) - prefix);
    // 1-based lines of the original from the first to the last changed one (a pure insertion
    // lies between two lines: both must be inside).
    let first = prefix + 1;
    let last = (a.len() - suffix).max(first);
    let (file, _) = super::equiv::parse_source(language, original.to_string());
    let name = file
        .functions()
        .iter()
        .filter(|f| f.start_line <= first && last <= f.end_line)
        .min_by_key(|f| f.end_line - f.start_line)
        .map(|f| f.simple_name.clone())?;
    (name != "main").then_some(name)
}

/// The line of the original program (as [`super::program::Program`] holds it) inside the
/// mutated function: the first changed line, or the start of the named function.
fn mutated_line(case: &MutantCase, p: &super::program::Program) -> Option<usize> {
    match &case.target {
        Target::Lines { original, .. } => Some(*original),
        Target::Name(n) => {
            let file = ParsedFile::parse(p.language, p.text.clone());
            let found = file
                .functions()
                .iter()
                .find(|f| f.simple_name == *n || f.name == *n)
                .map(|f| f.start_line);
            found
        }
        Target::Auto | Target::AllEntries => None,
    }
}

/// A mutant's verdict from the report on it.
fn verdict_of(
    case: &MutantCase,
    language: Language,
    function: Option<String>,
    report: &super::equiv::EquivReport,
    notes: Vec<String>,
) -> MutantVerdict {
    MutantVerdict {
        id: case.id.clone(),
        format: case.format,
        file: case.path.display().to_string(),
        language: Some(language),
        function,
        expected: case.expected,
        deterministic: report.deterministic.verdict,
        verdict: report.verdict,
        tier: report.tier,
        method: report.method,
        counterexample: report.deterministic.counterexample.clone(),
        trials: report.deterministic.trials,
        notes,
        llm: report.llm.as_ref().map(|l| l.json.clone()),
    }
}

/// [`classify_mutant`] for [`Target::AllEntries`].
fn classify_entries(
    case: &MutantCase,
    mutated: &str,
    language: Language,
    opts: &EquivOptions,
) -> MutantVerdict {
    match check_entries_texts(
        (&case.path, &case.original),
        (&case.path, mutated),
        language,
        opts,
    ) {
        Ok(report) => {
            let notes = report.deterministic.notes.clone();
            verdict_of(case, language, None, &report, notes)
        }
        Err(e) => {
            let mut v = MutantVerdict::unknown(case, e);
            v.language = Some(language);
            v
        }
    }
}

fn read(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.contains(&0) {
        return Err(format!("{}: binary file", path.display()));
    }
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

/// A mutant given as a unified diff against `original`.
fn diff_case(
    id: String,
    format: &'static str,
    path: PathBuf,
    original: Result<String, String>,
    diff: &str,
    expected: Option<bool>,
    description: String,
) -> MutantCase {
    let (original, mutated, target) = match original {
        Err(e) => (String::new(), Err(e), Target::Auto),
        Ok(text) => match apply_unified_diff(&text, diff) {
            Ok(applied) => (
                text,
                Ok(applied.text),
                Target::Lines {
                    original: applied.first_old,
                    mutated: applied.first_new,
                },
            ),
            Err(e) => (
                text,
                Err(format!("the diff does not apply: {e}")),
                Target::Auto,
            ),
        },
    };
    MutantCase {
        id,
        format,
        path,
        original,
        mutated,
        target,
        expected,
        description,
    }
}

/// MutantBench: `DIR/mutants.jsonl` (one JSON object per line: `mutant_id`, `program`,
/// `equivalent`, `difference`, `operator`) and `DIR/programs/<program>`. Lines that are not
/// JSON objects become `unknown` cases named `line N`.
pub fn load_mutantbench(dir: &Path) -> Result<Vec<MutantCase>, String> {
    let text = read(&dir.join("mutants.jsonl"))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let m: Json = match serde_json::from_str(line) {
            Ok(m @ Json::Object(_)) => m,
            _ => {
                out.push(MutantCase {
                    id: format!("line {}", i + 1),
                    format: "mutantbench",
                    path: dir.join("mutants.jsonl"),
                    original: String::new(),
                    mutated: Err(format!("mutants.jsonl line {}: not a JSON object", i + 1)),
                    target: Target::Auto,
                    expected: None,
                    description: String::new(),
                });
                continue;
            }
        };
        let id = m["mutant_id"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| format!("line {}", i + 1));
        let program = m["program"].as_str().unwrap_or("");
        // The program name must stay inside `programs/`.
        let safe = !program.is_empty()
            && Path::new(program)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        let path = dir.join("programs").join(program);
        let original = if safe {
            read(&path)
        } else {
            Err(format!("bad program name `{program}`"))
        };
        out.push(diff_case(
            id,
            "mutantbench",
            path,
            original,
            m["difference"].as_str().unwrap_or(""),
            m["equivalent"].as_bool(),
            m["operator"].as_str().unwrap_or("").to_string(),
        ));
    }
    Ok(out)
}

/// The entry functions an EqBench description names, best first. EqBench labels whole programs:
/// the entry is `program name` (`Add.main`: class `Add`, function `main`; or a bare name such as
/// `rf`); `function name` (C) and `method name` (Java) name the function the change is in,
/// which is the entry only when the program name names no function of the file.
pub fn eqbench_entries(desc: &Path) -> Vec<String> {
    let Some(v) = std::fs::read_to_string(desc)
        .ok()
        .and_then(|t| serde_json::from_str::<Json>(&t).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let program = v["program name"].as_str().unwrap_or("").trim();
    match program.rsplit_once('.') {
        Some((_, f)) if !f.is_empty() => out.push(f.to_string()),
        _ if !program.is_empty() => out.push(program.to_string()),
        _ => {}
    }
    for key in ["function name", "method name"] {
        if let Some(f) = v[key].as_str().map(str::trim).filter(|f| !f.is_empty()) {
            out.push(f.to_string());
        }
    }
    out
}

/// The first of `candidates` that `text` defines as a function (by its parsed name, so
/// `snippet (int x)` written with a space counts), if any.
pub fn first_defined(text: &str, language: Language, candidates: &[String]) -> Option<String> {
    let file = ParsedFile::parse(language, text.to_string());
    let funcs = crate::syntax::functions::collect_functions(&file);
    candidates
        .iter()
        .find(|c| funcs.iter().any(|g| &g.simple_name == *c))
        .cloned()
}

/// The two versions in an EqBench `Eq`/`Neq` folder for extension `ext`: `oldV`/`newV`, or
/// `old`/`new`, each side on its own (one folder has `oldV.c` beside `new.c`).
pub fn eqbench_pair(dir: &Path, ext: &str) -> (PathBuf, PathBuf) {
    let pick = |names: [&str; 2]| {
        names
            .iter()
            .map(|n| dir.join(format!("{n}.{ext}")))
            .find(|f| f.exists())
            .unwrap_or_else(|| dir.join(format!("{}.{ext}", names[0])))
    };
    (pick(["oldV", "old"]), pick(["newV", "new"]))
}

/// EqBench: every `Eq`/`Neq` folder under `DIR` gives a Java and a C case (`oldV`/`newV` or
/// `old`/`new`), the function named by `J-Desc.json`/`C-Desc.json` when the file has it.
pub fn load_eqbench(dir: &Path) -> Result<Vec<MutantCase>, String> {
    if !dir.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    let mut pairs: Vec<(PathBuf, bool)> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if !p.is_dir() || e.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
                continue;
            }
            match p.file_name().and_then(|n| n.to_str()) {
                Some("Eq") => pairs.push((p.clone(), true)),
                Some("Neq") => pairs.push((p.clone(), false)),
                _ => stack.push(p),
            }
        }
    }
    pairs.sort();
    let mut out = Vec::new();
    for (p, eq) in pairs {
        for (ext, desc) in [("java", "J-Desc.json"), ("c", "C-Desc.json")] {
            let (old, new) = eqbench_pair(&p, ext);
            if !old.exists() {
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            let original = read(&old);
            let language = if ext == "java" {
                Language::Java
            } else {
                Language::C
            };
            let candidates = eqbench_entries(&p.join(desc));
            let target = match original
                .as_ref()
                .ok()
                .and_then(|t| first_defined(t, language, &candidates))
            {
                Some(f) => Target::Name(f),
                // A whole program with several entry points (no description names one).
                None => Target::AllEntries,
            };
            out.push(MutantCase {
                id: format!("{rel}:{ext}"),
                format: "eqbench",
                path: old.clone(),
                original: original.clone().unwrap_or_default(),
                mutated: original.and_then(|_| read(&new)),
                target,
                expected: Some(eq),
                description: String::new(),
            });
        }
    }
    Ok(out)
}

/// cargo-mutants' `outcomes.json`: the `MissedMutant` outcomes (survivors). The mutated source
/// is the mutant's diff: inline (`scenario.Mutant.diff`) or the file `diff_path` relative to
/// the folder of `outcomes.json`; the source file is looked up relative to `source_root`
/// (default: the parent of that folder, where cargo-mutants writes `mutants.out/`).
pub fn load_cargo_mutants(
    outcomes: &Path,
    source_root: Option<&Path>,
) -> Result<Vec<MutantCase>, String> {
    let text = read(outcomes)?;
    let v: Json = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not JSON: {e}", outcomes.display()))?;
    let list = v["outcomes"]
        .as_array()
        .ok_or_else(|| format!("{}: no `outcomes` array", outcomes.display()))?;
    let out_dir = outcomes.parent().unwrap_or(Path::new("."));
    let root = source_root
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.parent().unwrap_or(Path::new(".")).to_path_buf());
    let mut cases = Vec::new();
    for (i, o) in list.iter().enumerate() {
        if o["summary"].as_str() != Some("MissedMutant") {
            continue;
        }
        let m = &o["scenario"]["Mutant"];
        let file = m["file"].as_str().unwrap_or("");
        let id = m["name"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| format!("outcome {}", i + 1));
        let description = m["replacement"]
            .as_str()
            .map(|r| format!("replace with {r}"))
            .unwrap_or_default();
        let inside = |p: &str| {
            !p.is_empty()
                && Path::new(p)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        let path = root.join(file);
        let diff = match (m["diff"].as_str(), o["diff_path"].as_str()) {
            (Some(d), _) => Ok(d.to_string()),
            (None, Some(p)) if inside(p) => read(&out_dir.join(p)),
            _ => Err("no diff recorded for this mutant".to_string()),
        };
        let original = if inside(file) {
            read(&path)
        } else {
            Err(format!("bad file name `{file}`"))
        };
        match diff {
            Ok(d) => cases.push(diff_case(
                id,
                "cargo-mutants",
                path,
                original,
                &d,
                None,
                description,
            )),
            Err(e) => cases.push(MutantCase {
                id,
                format: "cargo-mutants",
                path,
                original: original.unwrap_or_default(),
                mutated: Err(e),
                target: Target::Auto,
                expected: None,
                description,
            }),
        }
    }
    Ok(cases)
}

/// mutmut results: a mutmut 3 `.meta` file, a `mutants/` folder holding them, or a mutmut 2
/// `.mutmut-cache` (SQLite).
pub fn load_mutmut(path: &Path) -> Result<Vec<MutantCase>, String> {
    if path.is_dir() {
        let mut metas = Vec::new();
        let mut stack = vec![path.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if e.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
                    continue;
                }
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().ends_with(".py.meta") {
                    metas.push(p);
                }
            }
        }
        metas.sort();
        let mut out = Vec::new();
        for m in metas {
            out.extend(load_mutmut_meta(&m)?);
        }
        return Ok(out);
    }
    let head = std::fs::read(path)
        .map(|b| b.get(..16).map(<[u8]>::to_vec).unwrap_or_default())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if head == b"SQLite format 3\0" {
        return load_mutmut2_cache(path);
    }
    load_mutmut_meta(path)
}

fn load_mutmut_meta(meta: &Path) -> Result<Vec<MutantCase>, String> {
    let v: Json = serde_json::from_str(&read(meta)?)
        .map_err(|e| format!("{}: not JSON: {e}", meta.display()))?;
    let codes = v["exit_code_by_key"]
        .as_object()
        .ok_or_else(|| format!("{}: no `exit_code_by_key`", meta.display()))?;
    let module_path = PathBuf::from(
        meta.to_string_lossy()
            .strip_suffix(".meta")
            .unwrap_or(&meta.to_string_lossy())
            .to_string(),
    );
    let module = read(&module_path);
    let mut out = Vec::new();
    // serde_json's map is ordered by key: deterministic.
    for (key, code) in codes {
        if code.as_i64() != Some(0) {
            continue; // 1 killed, 33 no tests, 34 skipped, null not run
        }
        let (original, mutated, target) = match &module {
            Err(e) => (String::new(), Err(e.clone()), Target::Auto),
            Ok(m) => match mutmut_pair(m, key) {
                Ok(p) => (p.original, Ok(p.mutated), Target::Name(p.function)),
                Err(e) => (String::new(), Err(e), Target::Auto),
            },
        };
        out.push(MutantCase {
            id: key.clone(),
            format: "mutmut",
            path: module_path.clone(),
            original,
            mutated,
            target,
            expected: None,
            description: String::new(),
        });
    }
    Ok(out)
}

fn load_mutmut2_cache(path: &Path) -> Result<Vec<MutantCase>, String> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut stmt = conn
        .prepare(
            "SELECT SourceFile.filename, Line.line_number, Line.line, Mutant.id, Mutant.\"index\" \
             FROM Mutant JOIN Line ON Mutant.line = Line.id \
             JOIN SourceFile ON Line.sourcefile = SourceFile.id \
             WHERE Mutant.status = 'bad_survived' ORDER BY Mutant.id",
        )
        .map_err(|e| format!("{}: not a mutmut 2 cache: {e}", path.display()))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for row in rows {
        let (file, line_number, line, id, index) =
            row.map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(MutantCase {
            id: format!("{id}"),
            format: "mutmut",
            path: PathBuf::from(&file),
            original: String::new(),
            mutated: Err(format!(
                "mutmut 2's cache stores only the original line ({}:{}: `{}`) and the index ({index}) of mutmut's own operator, not the mutated source; run mutmut 3, or `mutmut apply {id}` and compare the files with `crosscheck equiv`",
                file,
                line_number + 1,
                line.trim()
            )),
            target: Target::Auto,
            expected: None,
            description: line.trim().to_string(),
        });
    }
    Ok(out)
}

/// PIT's `mutations.xml`: the survivors, all `unknown` (no mutated source is recorded).
pub fn load_pit(path: &Path) -> Result<Vec<MutantCase>, String> {
    let xml = read(path)?;
    Ok(parse_pit(&xml)
        .into_iter()
        .filter(|m| m.status == "SURVIVED")
        .enumerate()
        .map(|(i, m)| MutantCase {
            id: format!("{}.{}:{}#{}", m.class, m.method, m.line, i + 1),
            format: "pit",
            path: PathBuf::from(&m.source_file),
            original: String::new(),
            mutated: Err(format!(
                "PIT mutates bytecode and mutations.xml records no mutated source (only {}.{} line {}, {}: {}); the mutant cannot be rebuilt or run from this file",
                m.class,
                m.method,
                m.line,
                m.mutator.rsplit('.').next().unwrap_or(&m.mutator),
                m.description
            )),
            target: Target::Auto,
            expected: None,
            description: m.description,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: &str = "int lo(int a) {\n    return a < 3;\n}\n\nint hi(int a) {\n    return a > 3;\n}\n\nint main(void) {\n    return lo(1) + hi(2);\n}\n";

    #[test]
    fn the_function_of_a_change_holds_every_changed_line() {
        let one = PROG.replace("a < 3", "a <= 3");
        assert_eq!(
            function_of_change(Language::C, PROG, &one).as_deref(),
            Some("lo")
        );
        // Two functions changed (a second hunk): no single function.
        let two = one.replace("a > 3", "a >= 3");
        assert_eq!(function_of_change(Language::C, PROG, &two), None);
        // Lines added inside a function, and a change of `main`.
        let added = PROG.replace("    return a > 3;", "    a++;\n    return a > 3;");
        assert_eq!(
            function_of_change(Language::C, PROG, &added).as_deref(),
            Some("hi")
        );
        let in_main = PROG.replace("lo(1)", "lo(2)");
        assert_eq!(function_of_change(Language::C, PROG, &in_main), None);
        assert_eq!(function_of_change(Language::Python, PROG, &one), None);
    }

    #[test]
    fn an_unknown_says_why_the_proof_did_not_decide() {
        // A function no harness can call (an unknown struct, a header that is not there).
        let original = "#include \"absent.h\"\nint f(struct thing *t) {\n    return t->n > 0;\n}\n";
        let case = |mutated: &str, note_of_proof: &str| {
            let case = MutantCase {
                id: "m".into(),
                format: "mutantbench",
                path: PathBuf::from("prog.c"),
                original: original.into(),
                mutated: Ok(mutated.into()),
                target: Target::Lines {
                    original: 3,
                    mutated: 3,
                },
                expected: None,
                description: String::new(),
            };
            let opts = EquivOptions {
                execute: false,
                ..EquivOptions::default()
            };
            let v = classify_mutant(&case, &opts);
            assert_eq!(v.deterministic, Verdict::Unknown, "{:?}", v.notes);
            assert_eq!(v.notes[0], note_of_proof, "{:?}", v.notes);
        };
        case(
            &original.replace("> 0", ">= 0"),
            "no normalisation proof: the two canonical forms differ",
        );
        case(
            &original.replace("> 0", ">= 0 UNKNOWN_MACRO"),
            "no normalisation proof: syntax errors: no proof",
        );
    }
}
