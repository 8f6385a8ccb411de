//! `crosscheck equiv --no-llm` on the pairs in `tests/fixtures/equiv/`, through the real binary.
//!
//! Each fixture directory is named `<expected verdict>--<what it is>` and holds `a.<ext>` and
//! `b.<ext>` (one function each, or the function a file `entry` names). The rules, as judged:
//! * `not_equivalent--*`: refuted with an executed counterexample (verdict `not_equivalent`,
//!   tier `confirmed`, method `differential`, a counterexample whose A and B outcomes differ);
//! * `equivalent--*`: proved by normalisation (verdict `equivalent`, tier `confirmed`);
//! * `likely_equivalent--*`: never refuted; verdict `likely_equivalent` after differential
//!   trials (or `equivalent` if a proof exists), tier `analyzer-only`;
//! * `bounded_equivalent--*`: the bounded symbolic check (Z3) finds no difference and the trials
//!   none either: verdict `bounded_equivalent`, tier `analyzer-only`, method `bounded_smt`, the
//!   bounds named in a note.
//!
//! A `not_equivalent` counterexample may come from the generated inputs (method `differential`)
//! or from the solver's model (method `symbolic`); either way it was executed.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/equiv");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixture directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn side(dir: &Path, stem: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_stem().and_then(|s| s.to_str()) == Some(stem))
        .collect();
    found.sort();
    assert_eq!(
        found.len(),
        1,
        "{}: exactly one {stem}.* expected",
        dir.display()
    );
    found.remove(0)
}

fn equiv(a: &Path, b: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json", "--trials", "200"])
        .arg(a)
        .arg(b)
        .env("CROSSCHECK_LLM_BASE_URL", "http://127.0.0.1:9")
        .output()
        .expect("run crosscheck");
    assert!(
        out.status.success(),
        "{} {}: exit {:?}: {}",
        a.display(),
        b.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn check(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let expected = name.split("--").next().unwrap_or("").to_string();
    let (mut a, mut b) = (side(dir, "a"), side(dir, "b"));
    // A file `entry` names the function to compare when the file has several entry points.
    if let Ok(entry) = std::fs::read_to_string(dir.join("entry")) {
        a = PathBuf::from(format!("{}:{}", a.display(), entry.trim()));
        b = PathBuf::from(format!("{}:{}", b.display(), entry.trim()));
    }
    let v = equiv(&a, &b);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    if sorted
        != [
            "compared",
            "counterexample",
            "llm",
            "method",
            "notes",
            "tier",
            "trials",
            "verdict",
        ]
    {
        return Err(format!("{name}: unexpected keys {keys:?}"));
    }
    // The report always names the functions it compared.
    for side in ["a", "b"] {
        let said = v["compared"][side].as_str().unwrap_or("");
        if !said.contains(": function ") {
            return Err(format!("{name}: `compared.{side}` names no function: {v}"));
        }
    }
    if !v["llm"].is_null() {
        return Err(format!("{name}: --no-llm must give llm: null"));
    }
    let verdict = v["verdict"].as_str().unwrap_or("");
    let tier = v["tier"].as_str().unwrap_or("");
    let ok = match expected.as_str() {
        "not_equivalent" => {
            let c = &v["counterexample"];
            verdict == "not_equivalent"
                && tier == "confirmed"
                && (v["method"] == "differential" || v["method"] == "symbolic")
                && c["inputs"].is_array()
                && c["a"] != c["b"]
        }
        "bounded_equivalent" => {
            verdict == "bounded_equivalent"
                && tier == "analyzer-only"
                && v["method"] == "bounded_smt"
                && v["trials"].as_u64().unwrap_or(0) >= 20
                && v["notes"].as_array().is_some_and(|n| {
                    n.iter()
                        .any(|n| n.as_str().is_some_and(|t| t.contains("lists have at most")))
                })
        }
        "equivalent" => {
            verdict == "equivalent" && tier == "confirmed" && v["method"] == "normalisation"
        }
        "likely_equivalent" => {
            (verdict == "likely_equivalent"
                && tier == "analyzer-only"
                && v["trials"].as_u64().unwrap_or(0) >= 20)
                || (verdict == "equivalent" && tier == "confirmed")
        }
        other => return Err(format!("{name}: unknown expectation `{other}`")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{name}: expected {expected}, got {v}"))
    }
}

#[test]
fn every_fixture_pair_gets_its_expected_verdict() {
    let dirs = fixtures();
    assert!(dirs.len() >= 20, "the fixture set is incomplete");
    // Three workers: javac dominates, and the machine is shared.
    let failures = failures_in_parallel(&dirs, 3, |d| check(d));
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Runs `f` over `items` on `workers` threads and collects the errors.
fn failures_in_parallel<T: Sync>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> Result<(), String> + Sync,
) -> Vec<String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let f = &f;
                s.spawn(move || {
                    items
                        .iter()
                        .skip(w)
                        .step_by(workers)
                        .filter_map(|d| f(d).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

#[test]
fn file_colon_function_selects_a_function_and_text_output_names_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("m.py");
    std::fs::write(
        &a,
        "def inc(x: int) -> int:\n    return x + 1\n\ndef dec(x: int) -> int:\n    return x - 1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "text", "--trials", "50"])
        .arg(format!("{}:inc", a.display()))
        .arg(format!("{}:dec", a.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not_equivalent"), "{text}");
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--trials", "50"])
        .arg(format!("{}:inc", a.display()))
        .arg(format!("{}:nosuch", a.display()))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unknown function is an error"
    );
}

/// Whole programs (`tests/fixtures/equiv_programs/<expected>--<what>/`: `a.*`, `b.*` and an
/// `inputs/` directory of sample inputs, or none: then the inputs follow the programs' own
/// `scanf` formats), compared by `crosscheck equiv --program`:
/// * `not_equivalent--*`: a counterexample that names its input's origin, with both sides'
///   outputs;
/// * `equivalent--*`: proved by the whole-file normalisation;
/// * `likely_equivalent--*`: never refuted after at least 20 inputs;
/// * `unknown--*`: no evidence (every input discarded), never `not_equivalent`.
#[test]
fn every_program_pair_gets_its_expected_verdict() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/equiv_programs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("program fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 8, "the program fixture set is incomplete");
    let check = |dir: &PathBuf| -> Result<(), String> {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let expected = name.split("--").next().unwrap_or("");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosscheck"));
        cmd.args(["equiv", "--no-llm", "--format", "json", "--program"])
            .args(["--trials", "30"]);
        // Without sample inputs, the inputs follow the programs' own reads.
        if dir.join("inputs").is_dir() {
            cmd.arg("--inputs").arg(dir.join("inputs"));
        }
        let out = cmd
            .arg(side(dir, "a"))
            .arg(side(dir, "b"))
            .env("CROSSCHECK_LLM_BASE_URL", "http://127.0.0.1:9")
            .output()
            .map_err(|e| e.to_string())?;
        let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
            format!(
                "{name}: not JSON ({e}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        let verdict = v["verdict"].as_str().unwrap_or("");
        let said = v["compared"]["a"].as_str().unwrap_or("");
        if !said.contains("stdin -> stdout and exit status") {
            return Err(format!("{name}: `compared` does not say what ran: {v}"));
        }
        let ok = match expected {
            "not_equivalent" => {
                let c = &v["counterexample"];
                verdict == "not_equivalent"
                    && v["tier"] == "confirmed"
                    && c["origin"].is_string()
                    && c["input"].is_string()
                    && c["a"] != c["b"]
            }
            "equivalent" => verdict == "equivalent" && v["method"] == "normalisation",
            "likely_equivalent" => {
                verdict == "likely_equivalent" && v["trials"].as_u64().unwrap_or(0) >= 20
            }
            "unknown" => verdict == "unknown",
            other => return Err(format!("{name}: unknown expectation `{other}`")),
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{name}: expected {expected}, got {v}"))
        }
    };
    let failures = failures_in_parallel(&dirs, 2, check);
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A script that reads standard input is compared as a program without `--program`; a named
/// function is not; several candidate entry functions are refused, naming them.
#[test]
fn programs_are_detected_and_entry_points_never_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.py");
    let b = dir.path().join("b.py");
    std::fs::write(&a, "n = int(input())\nprint(n * 2)\n").unwrap();
    std::fs::write(&b, "n = int(input())\nprint(n + n)\n").unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    std::fs::write(inputs.join("1.in"), "21\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json", "--trials", "10"])
        .arg("--inputs")
        .arg(&inputs)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "likely_equivalent", "{v}");
    assert!(
        v["compared"]["a"].as_str().unwrap().contains("module"),
        "{v}"
    );

    let lib = dir.path().join("lib.py");
    std::fs::write(
        &lib,
        "def inc(x: int) -> int:\n    return x + 1\n\ndef dec(x: int) -> int:\n    return x - 1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--trials", "10"])
        .arg(&lib)
        .arg(&lib)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("inc") && err.contains("dec") && err.contains("FILE:function"),
        "{err}"
    );
}

/// Text mutations of a program, each with a name: operator flips, literal changes, deleted,
/// duplicated, swapped and re-indented lines (which change meaning, almost always), and
/// comment insertions and consistent renames (which do not).
fn mutations(text: &str, comment: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let join = |ls: &[String]| ls.join("\n") + "\n";
    let owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut out = Vec::new();
    let flips: [(&str, &str); 9] = [
        (" + ", " - "),
        (" - ", " + "),
        (" < ", " <= "),
        (" * ", " + "),
        (" == ", " != "),
        (" and ", " or "),
        (" && ", " || "),
        (" > ", " >= "),
        (" / ", " * "),
    ];
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.is_empty() {
            continue;
        }
        for (from, to) in flips {
            if line.contains(from) {
                let mut m = owned.clone();
                m[i] = line.replacen(from, to, 1);
                out.push((format!("line {}: `{from}` -> `{to}`", i + 1), join(&m)));
            }
        }
        // MutantBench's operators that are often equivalent: a zero comparison made ordered
        // (ROR) and a post-update of a name (AOIU) in a `return` or as a call's argument.
        for (from, to) in [(" != 0", " > 0"), (" == 0", " <= 0"), (" != 0", " >= 0")] {
            if line.contains(from) {
                let mut m = owned.clone();
                m[i] = line.replacen(from, to, 1);
                out.push((
                    format!("line {}: zero comparison made `{to}`", i + 1),
                    join(&m),
                ));
            }
        }
        for (k, _) in line.match_indices(['(', ' ']) {
            let rest = &line[k + 1..];
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..name_len];
            let after = rest[name_len..].chars().next();
            let first_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
            let return_value = line[..=k].trim_start() == "return " && after == Some(';');
            let argument = line[..=k].ends_with('(') && matches!(after, Some(',' | ')'));
            if first_ok && name != "return" && (return_value || argument) {
                for op in ["++", "--"] {
                    let mut m = owned.clone();
                    let at = k + 1 + name_len;
                    m[i] = format!("{}{op}{}", &line[..at], &line[at..]);
                    out.push((
                        format!("line {}: post-update `{name}{op}`", i + 1),
                        join(&m),
                    ));
                }
            }
        }
        if let Some(pos) = line.find(|c: char| c.is_ascii_digit()) {
            let end = line[pos..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(line.len(), |e| pos + e);
            if let Ok(v) = line[pos..end].parse::<u64>() {
                let mut m = owned.clone();
                m[i] = format!("{}{}{}", &line[..pos], v + 1, &line[end..]);
                out.push((format!("line {}: literal + 1", i + 1), join(&m)));
            }
        }
        let header = ["def ", "class ", "public ", "static ", "int ", "}", "{"]
            .iter()
            .any(|h| t.starts_with(h));
        // Removing, repeating or exchanging comment lines keeps the meaning: named apart, so
        // they do not count as changes of meaning.
        let is_comment = |t: &str| {
            let t = t.trim_start();
            t.starts_with(comment) || t.starts_with("/*") || t.starts_with("* ") || t == "*/"
        };
        let (gone, again, swapped) = if is_comment(t) {
            ("comment line removed", "comment line repeated", "exchanged")
        } else {
            ("deleted", "duplicated", "swapped")
        };
        if !header {
            let mut m = owned.clone();
            m.remove(i);
            out.push((format!("line {} {gone}", i + 1), join(&m)));
            let mut m = owned.clone();
            m.insert(i, line.to_string());
            out.push((format!("line {} {again}", i + 1), join(&m)));
            if i + 1 < lines.len() {
                let mut m = owned.clone();
                m.swap(i, i + 1);
                let both = if is_comment(lines[i + 1]) {
                    swapped
                } else {
                    "swapped"
                };
                out.push((format!("lines {} and {} {both}", i + 1, i + 2), join(&m)));
            }
            for indent in ["    ", ""] {
                let mut m = owned.clone();
                m[i] = if indent.is_empty() {
                    line.strip_prefix("    ").unwrap_or(line).to_string()
                } else {
                    format!("{indent}{line}")
                };
                if m[i] != *line {
                    out.push((format!("line {} re-indented", i + 1), join(&m)));
                }
            }
        }
        let mut m = owned.clone();
        m.insert(
            i,
            format!("{}{comment} note", &line[..line.len() - t.len()]),
        );
        out.push((format!("comment before line {}", i + 1), join(&m)));
    }
    // A consistent rename of a short name that is not a keyword-like word.
    for name in ["x", "n", "s", "i", "total", "count", "result"] {
        let re = |s: &str| {
            let mut o = String::new();
            let b = s.as_bytes();
            let mut k = 0;
            while k < s.len() {
                let word = s[k..].starts_with(name)
                    && (k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_'))
                    && s[k + name.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
                if word {
                    o.push_str("renamed_v");
                    k += name.len();
                } else {
                    let c = s[k..].chars().next().unwrap();
                    o.push(c);
                    k += c.len_utf8();
                }
            }
            o
        };
        if text.contains(name) {
            out.push((format!("`{name}` renamed"), re(text)));
        }
    }
    out
}

/// Operator flips, literal changes, deleted, duplicated and swapped lines: mutations that change
/// meaning almost always.
fn changes_meaning(what: &str) -> bool {
    ["->", "literal", "deleted", "duplicated", "swapped"]
        .iter()
        .any(|k| what.contains(k))
}

/// The proof is checked against execution: mutants of every fixture are compared with their
/// original by the proof, and every pair it calls `equivalent` is executed (differential
/// testing without the proof) and must show no difference. The mutations include changes of
/// meaning, so the test also checks that the proof turns those down.
#[test]
fn every_proof_survives_execution_of_mutated_pairs() {
    use crosscheck::analysis::equiv::normal::prove_files_equivalent;
    use crosscheck::analysis::equiv::program::CompareMode;
    use crosscheck::exec::equiv::{differential, side_from_text, DiffOptions, Pick};
    use crosscheck::exec::program::{read_inputs, run_programs, Program, ProgramOptions};
    use crosscheck::exec::sandbox::Limits;
    use crosscheck::syntax::{Cancel, Language, ParsedFile};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/equiv");
    let mut files: Vec<PathBuf> = fixtures()
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(d)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
        })
        .filter(|p| Language::from_path(p).is_some())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{}", root.display());
    let mut proved: Vec<(String, Language, String, String)> = Vec::new();
    let (mut total, mut refused, mut risky_total) = (0usize, 0usize, 0usize);
    for f in &files {
        let lang = Language::from_path(f).unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        let comment = if lang == Language::Python { "#" } else { "//" };
        let original = ParsedFile::parse(lang, text.as_str());
        for (what, mutant) in mutations(&text, comment) {
            let m = ParsedFile::parse(lang, mutant.as_str());
            if m.has_errors() || mutant == text {
                continue;
            }
            total += 1;
            if changes_meaning(&what) {
                risky_total += 1;
            }
            match prove_files_equivalent((&original, None), (&m, None), &Cancel::never()) {
                Ok(true) => proved.push((
                    format!("{}: {what}", f.display()),
                    lang,
                    text.clone(),
                    mutant,
                )),
                _ => refused += 1,
            }
        }
    }
    assert!(total >= 500, "too few mutants: {total}");
    // Operator flips, literal changes, deleted, duplicated and swapped lines change meaning
    // almost always: the proof must turn most of them down.
    let risky_proved = proved.iter().filter(|p| changes_meaning(&p.0)).count();
    assert!(
        risky_proved * 10 < risky_total,
        "the proof accepts {risky_proved} of {risky_total} changes of meaning"
    );
    // Changes of meaning that the proof accepted are the bugs this test exists for; run every
    // proved pair whose mutation is not a comment (those are cheap to trust), and a sample of
    // the comments.
    let limits = Limits {
        wall: std::time::Duration::from_secs(60),
        memory_mb: 2048,
    };
    // The proof is what is tested: the symbolic check is not asked.
    let opts = DiffOptions {
        trials: 40,
        seed: 7,
        limits,
        symbolic: None,
    };
    let mut comments = 0usize;
    let mut executed = 0usize;
    let mut wrong = Vec::new();
    for (what, lang, a, b) in &proved {
        let layout_only = what.contains("comment before")
            || (*lang != Language::Python && what.contains("re-indented"));
        if layout_only {
            comments += 1;
            if comments % 12 != 1 {
                continue;
            }
        }
        let path = Path::new("mutant");
        let (Ok(sa), Ok(sb)) = (
            side_from_text(path, *lang, a.clone(), Pick::Auto),
            side_from_text(path, *lang, b.clone(), Pick::Auto),
        ) else {
            continue;
        };
        executed += 1;
        let d = differential(&sa, &sb, opts);
        if d.verdict == crosscheck::analysis::equiv::Verdict::NotEquivalent {
            wrong.push(format!("{what}: {:?}", d.counterexample));
        }
    }
    // Whole programs (Python layout at module level matters most here), run on their inputs.
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/equiv_programs");
    let mut program_dirs: Vec<PathBuf> = std::fs::read_dir(&programs)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    program_dirs.sort();
    let mut program_proved = 0usize;
    for dir in &program_dirs {
        // No `inputs/`: the programs' own reads shape the generated inputs.
        let inputs = if dir.join("inputs").is_dir() {
            read_inputs(&dir.join("inputs")).unwrap()
        } else {
            Vec::new()
        };
        for stem in ["a", "b"] {
            let f = side(dir, stem);
            let lang = Language::from_path(&f).unwrap();
            let text = std::fs::read_to_string(&f).unwrap();
            let comment = if lang == Language::Python { "#" } else { "//" };
            let original = ParsedFile::parse(lang, text.as_str());
            for (what, mutant) in mutations(&text, comment) {
                let m = ParsedFile::parse(lang, mutant.as_str());
                if m.has_errors() || mutant == text {
                    continue;
                }
                total += 1;
                if prove_files_equivalent((&original, None), (&m, None), &Cancel::never())
                    != Ok(true)
                {
                    continue;
                }
                program_proved += 1;
                if what.contains("comment before") && program_proved % 4 != 1 {
                    continue;
                }
                let (Ok(pa), Ok(pb)) = (
                    Program::from_text(&f, lang, text.clone()),
                    Program::from_text(&f, lang, mutant.clone()),
                ) else {
                    continue;
                };
                executed += 1;
                let d = run_programs(
                    &pa,
                    &pb,
                    &ProgramOptions {
                        inputs: inputs.clone(),
                        generated: 15,
                        seed: 3,
                        compare: CompareMode::Exact,
                        limits,
                        more_within: None,
                    },
                );
                if d.verdict == crosscheck::analysis::equiv::Verdict::NotEquivalent {
                    wrong.push(format!("{}: {what}: {:?}", f.display(), d.counterexample));
                }
            }
        }
    }
    eprintln!(
        "{total} mutants, {refused} function-fixture mutants refused, {} + {program_proved} proved, {executed} proved pairs executed",
        proved.len()
    );
    assert!(wrong.is_empty(), "wrong proofs:\n{}", wrong.join("\n"));
}

/// Undefined behaviour is not evidence: memcheck sees the uninitialised read that UBSan does
/// not, on exactly the input that takes the uninitialised path.
#[test]
fn memcheck_sees_uninitialised_reads_in_c_functions() {
    use crosscheck::analysis::equiv::value::Value;
    use crosscheck::exec::equiv::{memcheck_reports, side_from_text, Pick};
    use crosscheck::exec::sandbox::Limits;
    use crosscheck::syntax::Language;
    let text = "int f(int x) {\n    int y;\n    if (x > 0) y = x;\n    if (y > 3) return 1;\n    return 0;\n}\n";
    let side = side_from_text(Path::new("u.c"), Language::C, text.to_string(), Pick::Auto).unwrap();
    let limits = Limits {
        wall: std::time::Duration::from_secs(30),
        memory_mb: 2048,
    };
    let Some(bad) = memcheck_reports(&side, &[Value::Int(-1)], limits) else {
        panic!("valgrind is needed for this test (.ci/run installs it)");
    };
    assert!(bad, "the uninitialised read on x = -1 is reported");
    assert_eq!(
        memcheck_reports(&side, &[Value::Int(5)], limits),
        Some(false),
        "x = 5 initialises y"
    );
}

/// A missing header is replaced by an empty one; when the build then fails on an error of the
/// file's own (`%` on a `double`, as MutantBench's Profit mutants write), the report names that
/// error, not only the missing header.
#[test]
fn a_build_that_fails_past_a_missing_header_names_its_own_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.c");
    let b = dir.path().join("b.c");
    std::fs::write(
        &a,
        "#include \"conio.h\"\ndouble f(double i) { return (i - 6) * 0.5; }\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "#include \"conio.h\"\ndouble f(double i) { return (i % 6) * 0.5; }\n",
    )
    .unwrap();
    let v = equiv(&a, &b);
    assert_eq!(v["verdict"], "unknown", "{v}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("conio.h"), "{notes}");
    assert!(
        notes.contains("with an empty stand-in for conio.h") && notes.contains("invalid operands"),
        "{notes}"
    );
}

/// A function no harness can call (a variadic one, a parameter of a type the harness does not
/// build) is still proved equal when the proof applies, and still refused when it does not.
#[test]
fn a_function_no_harness_can_call_is_still_proved() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.c");
    let b = dir.path().join("b.c");
    let c = dir.path().join("c.c");
    let f = |ret: &str| {
        format!(
            "#include <stdarg.h>\nint total(int n, ...) {{\n  va_list ap;\n  int t = 0;\n  va_start(ap, n);\n  for (int i = 0; i < n; i++) t += va_arg(ap, int);\n  va_end(ap);\n  return {ret};\n}}\n"
        )
    };
    std::fs::write(&a, f("t")).unwrap();
    std::fs::write(&b, f("t++")).unwrap();
    std::fs::write(&c, f("t + 1")).unwrap();
    let v = equiv(&a, &b);
    assert_eq!(v["verdict"], "equivalent", "{v}");
    assert_eq!(v["method"], "normalisation", "{v}");
    assert!(v["compared"].to_string().contains("total"), "{v}");
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json"])
        .arg(&a)
        .arg(&c)
        .output()
        .expect("crosscheck runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("variadic"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A difference that the generated inputs almost never reach (one input in billions) is found by
/// the bounded symbolic check's model, then confirmed by running both sides on it.
#[test]
fn a_difference_random_inputs_miss_is_found_by_the_solver() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/equiv/not_equivalent--java-magic-input");
    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json"])
        .arg(dir.join("a.java"))
        .arg(dir.join("b.java"))
        .output()
        .expect("crosscheck runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(v["verdict"], "not_equivalent", "{v}");
    assert_eq!(v["method"], "symbolic", "{v}");
    let c = &v["counterexample"];
    assert_eq!(c["origin"], "smt", "{v}");
    let code = c["inputs"][0].as_i64().expect("an integer input");
    let level = c["inputs"][1].as_i64().expect("an integer input");
    assert_eq!(
        (code as i32).wrapping_mul(31).wrapping_add(level as i32),
        1234567,
        "the model's input takes the special case: {v}"
    );
    assert_eq!(c["b"], -1, "{v}");
}

/// C differences behind state the random inputs do not reach are found by the solver: a global
/// that another function sets (an input of the call, given by the model), and a threshold read
/// from a table local to a helper (the tcas shape).
#[test]
fn c_globals_and_local_tables_are_modelled_by_the_solver() {
    for (fixture, entry) in [
        (
            "not_equivalent--c-global-state-only-the-solver-reaches",
            "route",
        ),
        ("not_equivalent--c-local-threshold-table", "separated"),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/equiv")
            .join(fixture);
        let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
            .args(["equiv", "--no-llm", "--format", "json"])
            .arg(format!("{}:{entry}", dir.join("a.c").display()))
            .arg(format!("{}:{entry}", dir.join("b.c").display()))
            .output()
            .expect("crosscheck runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json report");
        assert_eq!(v["verdict"], "not_equivalent", "{fixture}: {v}");
        assert_eq!(v["counterexample"]["origin"], "smt", "{fixture}: {v}");
        assert_ne!(
            v["counterexample"]["a"], v["counterexample"]["b"],
            "{fixture}: {v}"
        );
    }
}

/// Two files with several entry points: refused without `--all-entries` (naming the flag),
/// compared pair by pair with it (the constructor, which `scaled` calls, is no entry; the
/// receivers are built through it). A difference in the constructor alone refutes the files,
/// and a constructor named as the function is compared by the new object's fields.
#[test]
fn several_entry_points_are_compared_pair_by_pair_with_all_entries() {
    let dir = tempfile::tempdir().unwrap();
    let class = |ctor_body: &str, scale_body: &str| {
        format!(
            "class Vec2 {{\n    double x;\n    double y;\n\n    Vec2(double x, double y) {{\n{ctor_body}\n    }}\n\n    Vec2 scaled(double k) {{\n{scale_body}\n    }}\n\n    double dot(Vec2 o) {{\n        return x * o.x + y * o.y;\n    }}\n}}\n"
        )
    };
    let ctor = "        this.x = x;\n        this.y = y;";
    let scale = "        return new Vec2(x * k, y * k);";
    let a = dir.path().join("a.java");
    let same = dir.path().join("same.java");
    let ctor_changed = dir.path().join("ctor.java");
    std::fs::write(&a, class(ctor, scale)).unwrap();
    std::fs::write(
        &same,
        class(
            "        this.y = y;\n        this.x = x;",
            "        double nx = k * x;\n        return new Vec2(nx, k * y);",
        ),
    )
    .unwrap();
    std::fs::write(
        &ctor_changed,
        class("        this.x = x;\n        this.y = Math.abs(y);", scale),
    )
    .unwrap();
    let run = |extra: &[&str], b: &Path| {
        Command::new(env!("CARGO_BIN_EXE_crosscheck"))
            .args(["equiv", "--no-llm", "--format", "json", "--trials", "100"])
            .args(extra)
            .arg(&a)
            .arg(b)
            .output()
            .unwrap()
    };
    let refused = run(&[], &same);
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("scaled") && err.contains("dot") && err.contains("--all-entries"),
        "{err}"
    );

    let out = run(&["--all-entries"], &same);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "likely_equivalent", "{v}");
    let pairs = v["compared"]["pairs"].as_array().unwrap();
    let entries: Vec<&str> = pairs.iter().filter_map(|p| p["entry"].as_str()).collect();
    assert_eq!(entries, ["Vec2.scaled/1", "Vec2.dot/1"], "{v}");
    assert!(pairs.iter().all(|p| p["verdict"] != "unknown"), "{v}");

    let out = run(&["--all-entries"], &ctor_changed);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "not_equivalent", "{v}");
    let c = &v["counterexample"];
    assert_ne!(c["a"], c["b"], "{v}");

    let out = Command::new(env!("CARGO_BIN_EXE_crosscheck"))
        .args(["equiv", "--no-llm", "--format", "json", "--trials", "100"])
        .arg(format!("{}:Vec2", a.display()))
        .arg(format!("{}:Vec2", ctor_changed.display()))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "not_equivalent", "{v}");
    assert!(
        v["compared"]["a"].as_str().unwrap().contains("Vec2.Vec2"),
        "{v}"
    );
    // The new objects' fields differ: y against |y|.
    let c = &v["counterexample"];
    assert_ne!(c["a"], c["b"], "{v}");
}

/// Program inputs generated from a large sample cost time linear in its size: 60,000 one-word
/// lines of different lengths and as many records. A quadratic step (a scan of the sample per
/// word or per value) takes minutes here.
#[test]
fn program_inputs_from_a_large_sample_take_time_linear_in_its_size() {
    use crosscheck::analysis::equiv::program::generate_inputs;
    let mut words = String::from("60000\n");
    for k in 0..60_000 {
        words.push_str(&"ab".repeat(1 + k % 7));
        words.push('\n');
    }
    let records: String = std::iter::once("3 60000\n".to_string())
        .chain((0..60_000).map(|k| format!("{} {} {}\n", 1 + k % 3, 1 + k % 2, 10 + k)))
        .collect();
    let t = std::time::Instant::now();
    let inputs = generate_inputs(&[words, records], 4, 1);
    assert_eq!(inputs.len(), 4);
    assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
}
