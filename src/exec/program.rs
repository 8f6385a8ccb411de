//! Whole programs compared by behaviour: `crosscheck equiv A B --program`. Each side is built
//! once (Python runs as is; Java through `javac`; C and C++ with AddressSanitizer and
//! UndefinedBehaviorSanitizer), then run once per input in the sandbox with the input on
//! standard input. What is compared is (standard output, exit status).
//!
//! Evidence, cheapest first:
//! 1. the whole-file normalisation proof (same language;
//!    [`crate::analysis::equiv::normal::prove_files_equivalent`]): `equivalent`;
//! 2. the given inputs (`--inputs DIR`, every file, or only the `*.in` files when there are
//!    some), then inputs generated from their shape ([`generate_inputs`]). On a given input any
//!    difference counts, a crash of one side included; on a generated input only two successful
//!    runs whose outputs differ count (an input generated outside what a program accepts may
//!    make either side fail). The first difference is a counterexample: `not_equivalent`.
//!
//! Undefined behaviour is not evidence: in C and C++ an input on which a sanitizer reports, or
//! that kills a side with a signal, is discarded; a counterexample is confirmed by running both
//! sides on it under valgrind's memcheck (which sees reads of uninitialised memory), and an
//! input memcheck complains about is discarded too. Timeouts are discarded.

use super::equiv::{
    first_lines, java_args, javac_args, proof_or, public_class, python_exe, strip_java_package,
    Deterministic,
};
use super::sandbox::{self, Extra, Limits, RunOutput, TempDir};
use crate::analysis::equiv::normal::prove_files_equivalent;
use crate::analysis::equiv::program::{
    generate_inputs, program_entry, same_output, CompareMode, ProgramEntry,
};
use crate::analysis::equiv::reads::{program_reads, shaped_inputs, Reads, ShapedInput as Input};
use crate::analysis::equiv::Verdict;
use crate::syntax::{Cancel, Language, ParsedFile};
use serde_json::{json, Value as Json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One program.
#[derive(Debug, Clone)]
pub struct Program {
    pub path: PathBuf,
    pub text: String,
    pub language: Language,
    pub entry: ProgramEntry,
    /// What the program reads (C/C++ `scanf` formats, `argv` uses), from the one parse of
    /// [`Program::from_text`].
    pub reads: Reads,
}

impl Program {
    /// Reads a file as a program (it must have an entry: top-level code or a `main`).
    pub fn load(path: &Path) -> Result<Program, String> {
        let language = Language::from_path(path)
            .ok_or_else(|| format!("{}: unknown language", path.display()))?;
        if !crate::analysis::equiv::supports(language) {
            return Err(format!(
                "{}: programs are compared in Python, Java, C and C++",
                path.display()
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Program::from_text(path, language, text)
    }

    /// A program from its text. Pre-standard C (`main()` with an implicit `int`, K&R
    /// parameter lists) is rewritten line for line first, as for functions.
    pub fn from_text(path: &Path, language: Language, text: String) -> Result<Program, String> {
        let (file, text) = super::equiv::parse_source(language, text);
        let entry = program_entry(&file).ok_or_else(|| {
            format!(
                "{}: not a program (no top-level code, no `main`)",
                path.display()
            )
        })?;
        Ok(Program {
            path: path.to_path_buf(),
            text,
            language,
            entry,
            reads: program_reads(&file),
        })
    }

    /// `a.py (module, stdin -> stdout and exit status)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({} {}, stdin -> stdout and exit status)",
            self.path.display(),
            self.language.name(),
            self.entry.entry
        )
    }
}

/// Options of a program comparison.
#[derive(Debug, Clone)]
pub struct ProgramOptions {
    /// (name, content) of every given input.
    pub inputs: Vec<(String, String)>,
    /// How many inputs to generate from the given ones' shape.
    pub generated: usize,
    pub seed: u64,
    pub compare: CompareMode,
    pub limits: Limits,
    /// When set, and no input showed a difference, more batches of `generated` inputs run
    /// while the runs so far (and the next batch, at their pace) fit in this time.
    pub more_within: Option<Duration>,
}

/// At most this many extra batches of generated inputs ([`ProgramOptions::more_within`]).
pub const MORE_BATCHES: usize = 3;

/// Reads the given inputs of a directory: its `*.in` files when there are some, else every
/// regular file, in name order.
pub fn read_inputs(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    if files
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "in"))
    {
        files.retain(|p| p.extension().is_some_and(|e| e == "in"));
    }
    let mut out = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        out.push((
            f.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    if out.is_empty() {
        return Err(format!("{}: no input files", dir.display()));
    }
    Ok(out)
}

/// A built program, ready to run.
struct Built {
    dir: TempDir,
    program: String,
    args: Vec<String>,
    asan: bool,
    /// C and C++: the source file name, for the memcheck build.
    source: Option<(String, &'static str, &'static str)>,
}

fn build(p: &Program) -> Result<Built, String> {
    let dir = TempDir::new(p.language.name()).map_err(|e| format!("temporary directory: {e}"))?;
    let d = dir.path().to_path_buf();
    let write = |name: &str, text: &str| {
        std::fs::write(d.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    let compile_limits = Limits {
        wall: Duration::from_secs(180),
        memory_mb: 8192,
    };
    match p.language {
        Language::Python => {
            write("main.py", &p.text)?;
            Ok(Built {
                dir,
                program: python_exe(),
                args: vec!["-I".into(), "main.py".into()],
                asan: false,
                source: None,
            })
        }
        Language::Java => {
            let source = strip_java_package(&p.text);
            let class = p.entry.main_class.clone().ok_or("no class with main")?;
            let file = public_class(&source).unwrap_or_else(|| class.clone());
            write(&format!("{file}.java"), &source)?;
            let out = sandbox::run(
                "javac",
                &javac_args(&[format!("{file}.java")]),
                &d,
                compile_limits,
            )
            .map_err(|e| format!("javac: {e}"))?;
            if out.status != Some(0) {
                return Err(format!(
                    "{}: javac failed: {}",
                    p.path.display(),
                    first_lines(&format!("{}{}", out.stderr, out.stdout), 8)
                ));
            }
            Ok(Built {
                dir,
                program: "java".into(),
                args: java_args(&class),
                asan: false,
                source: None,
            })
        }
        Language::C | Language::Cpp => {
            let cpp = p.language == Language::Cpp;
            let (file, compiler, std) = if cpp {
                ("main.cpp", "g++", "-std=gnu++17")
            } else {
                ("main.c", "gcc", "-std=gnu11")
            };
            write(file, &p.text)?;
            let mut args: Vec<String> = vec![
                std.into(),
                "-O0".into(),
                "-g".into(),
                "-w".into(),
                "-fsanitize=address,undefined".into(),
                "-fno-sanitize-recover=all".into(),
            ];
            args.extend(super::harness::msvc_compat_flags(&p.text));
            args.extend(["-o".into(), "prog".into(), file.into(), "-lm".into()]);
            let out = sandbox::run(compiler, &args, &d, compile_limits)
                .map_err(|e| format!("{compiler}: {e}"))?;
            if out.status != Some(0) {
                return Err(format!(
                    "{}: {compiler} failed: {}",
                    p.path.display(),
                    first_lines(&format!("{}{}", out.stderr, out.stdout), 8)
                ));
            }
            Ok(Built {
                dir,
                program: "./prog".into(),
                args: Vec::new(),
                asan: true,
                source: Some((file.to_string(), compiler, std)),
            })
        }
        other => Err(format!("{} programs are not supported", other.name())),
    }
}

/// What one run showed.
#[derive(Debug, Clone)]
enum Run {
    Ok {
        stdout: String,
        status: i32,
    },
    /// Undefined behaviour (a sanitizer report or a signal in C/C++) or a timeout.
    Discard(String),
}

fn classify(language: Language, out: &RunOutput) -> Run {
    if out.timed_out {
        return Run::Discard("timeout".into());
    }
    let c_family = matches!(language, Language::C | Language::Cpp);
    if language == Language::Java
        && out.status != Some(0)
        && (out
            .stderr
            .contains("Error occurred during initialization of VM")
            || out
                .stdout
                .contains("Error occurred during initialization of VM"))
    {
        // The JVM did not start (memory or thread limits): the program never ran.
        return Run::Discard("the JVM did not start".into());
    }
    match out.status {
        None => Run::Discard("killed by a signal".into()),
        Some(code)
            if c_family
                && (code == sandbox::ASAN_EXIT
                    || code == super::harness::UB_EXIT
                    || out.stderr.contains("runtime error:")
                    || out.stderr.contains("AddressSanitizer")) =>
        {
            Run::Discard("a sanitizer report".into())
        }
        Some(code) => Run::Ok {
            stdout: out.stdout.clone(),
            status: code,
        },
    }
}

/// Runs one side on one input. A C/C++ `void main` has no exit status of its own (it is a
/// register's leftover): it counts as 0 unless a sanitizer or signal ended the run.
fn run_one(p: &Program, b: &Built, input: &Input, limits: Limits) -> Run {
    let run = run_raw(p, b, input, limits);
    match run {
        Run::Ok { stdout, .. } if !p.entry.status_defined => Run::Ok { stdout, status: 0 },
        other => other,
    }
}

fn run_raw(p: &Program, b: &Built, input: &Input, limits: Limits) -> Run {
    let extra = Extra {
        stdin: Some(input.stdin.as_bytes()),
        asan: b.asan,
    };
    let args: Vec<String> = b.args.iter().chain(&input.args).cloned().collect();
    match sandbox::run_with(&b.program, &args, b.dir.path(), limits, &extra) {
        Ok(out) => classify(p.language, &out),
        Err(e) => Run::Discard(format!("{}: {e}", b.program)),
    }
}

/// Runs a C/C++ side on `input` under valgrind's memcheck (a build without sanitizers):
/// `Some(true)` when memcheck reports an error, `None` when it cannot run.
fn memcheck_complains(b: &Built, input: &Input, limits: Limits) -> Option<bool> {
    let (file, compiler, std) = b.source.as_ref()?;
    let d = b.dir.path();
    if !d.join("plain").exists() {
        let source = std::fs::read_to_string(d.join(file)).unwrap_or_default();
        let mut args: Vec<String> = vec![(*std).into(), "-O0".into(), "-g".into(), "-w".into()];
        args.extend(super::harness::msvc_compat_flags(&source));
        args.extend(["-o".into(), "plain".into(), file.clone(), "-lm".into()]);
        let out = sandbox::run(
            compiler,
            &args,
            d,
            Limits {
                wall: Duration::from_secs(180),
                memory_mb: 8192,
            },
        )
        .ok()?;
        if out.status != Some(0) {
            return None;
        }
    }
    let limits = Limits {
        wall: limits.wall * 20,
        memory_mb: limits.memory_mb.max(4096),
    };
    let mut args: Vec<String> = vec![
        "--tool=memcheck".into(),
        "-q".into(),
        "--error-exitcode=88".into(),
        "--undef-value-errors=yes".into(),
        "./plain".into(),
    ];
    args.extend(input.args.iter().cloned());
    let out = sandbox::run_with(
        "valgrind",
        &args,
        d,
        limits,
        // Valgrind runs under the address-space limit (the ASan mode has none).
        &Extra {
            stdin: Some(input.stdin.as_bytes()),
            asan: false,
        },
    )
    .ok()?;
    if out.timed_out {
        return None;
    }
    if out.stderr.contains("valgrind: command not found") || out.status == Some(127) {
        return None;
    }
    Some(out.status == Some(88))
}

fn clip(s: &str) -> String {
    const MAX: usize = 2000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

fn run_json(r: &Run) -> Json {
    match r {
        Run::Ok { stdout, status } => json!({"stdout": clip(stdout), "exit": status}),
        Run::Discard(why) => json!({"discarded": why}),
    }
}

/// The exit status of the marker build of [`reaches_function_at`].
const REACHED_EXIT: i32 = 213;

/// Whether a C or C++ program, run once on empty standard input and without arguments, calls
/// the function whose definition encloses 1-based `line` of its text. The program is built
/// once more with `_exit(213)` as the first statement of that function's body: the run ends
/// with that status exactly when the function is called (a program that exits with 213 by
/// itself first would pass too). `Err` when no function encloses the line, the function is
/// `main`, the marker build fails or its run is discarded (sanitizer report, signal, timeout).
pub fn reaches_function_at(p: &Program, line: usize, limits: Limits) -> Result<bool, String> {
    if !matches!(p.language, Language::C | Language::Cpp) {
        return Err(format!("{}: not C or C++", p.path.display()));
    }
    let file = ParsedFile::parse(p.language, p.text.clone());
    let function = file
        .functions()
        .iter()
        .filter(|f| f.start_line <= line && line <= f.end_line)
        .min_by_key(|f| f.end_line - f.start_line)
        .ok_or_else(|| format!("line {line} is not inside a function"))?;
    if function.simple_name == "main" {
        return Err("the line is in `main`".into());
    }
    let body = function
        .body
        .filter(|b| p.text.as_bytes().get(b.start_byte()) == Some(&b'{'))
        .ok_or_else(|| format!("`{}` has no body", function.name))?;
    let at = body.start_byte() + 1;
    let mut text = p.text.clone();
    text.insert_str(at, &format!(" __builtin__exit({REACHED_EXIT}); "));
    let marked = Program { text, ..p.clone() };
    let built = build(&marked)?;
    let empty = Input {
        stdin: String::new(),
        args: Vec::new(),
    };
    match run_raw(&marked, &built, &empty, limits) {
        Run::Ok { status, .. } => Ok(status == REACHED_EXIT),
        Run::Discard(why) => Err(format!("the marked program's run: {why}")),
    }
}

/// Compares two programs (see the module docs).
pub fn compare_programs(a: &Program, b: &Program, opts: &ProgramOptions) -> Deterministic {
    let notes = vec![format!(
        "compared as programs, outputs by {}",
        if opts.compare == CompareMode::Tokens {
            "whitespace-separated tokens"
        } else {
            "exact bytes"
        }
    )];
    let proof = if a.language == b.language {
        let fa = ParsedFile::parse(a.language, a.text.clone());
        let fb = ParsedFile::parse(b.language, b.text.clone());
        prove_files_equivalent((&fa, None), (&fb, None), &Cancel::never())
    } else {
        Ok(false)
    };
    proof_or(proof, notes, || run_programs(a, b, opts))
}

/// The runs alone (no proof), on the given and generated inputs.
pub fn run_programs(a: &Program, b: &Program, opts: &ProgramOptions) -> Deterministic {
    let mut notes = Vec::new();
    let unknown = |notes: Vec<String>| Deterministic {
        verdict: Verdict::Unknown,
        method: "differential",
        counterexample: None,
        trials: 0,
        notes,
    };
    let (ba, bb) = std::thread::scope(|s| {
        let h = s.spawn(|| build(a));
        let rb = build(b);
        (h.join().unwrap_or_else(|_| Err("build failed".into())), rb)
    });
    let (ba, bb) = match (ba, bb) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            notes.push(e);
            return unknown(notes);
        }
    };
    for (side, p) in [("A", a), ("B", b)] {
        if !p.entry.status_defined {
            notes.push(format!(
                "{side}'s `main` is declared `void`: its exit status is a register's leftover, taken as 0"
            ));
        }
    }
    let samples: Vec<String> = opts.inputs.iter().map(|(_, t)| t.clone()).collect();
    let stdin_only = |t: String| Input {
        stdin: t,
        args: Vec::new(),
    };
    // (name, input, given): given inputs first, then generated ones.
    let mut all: Vec<(String, Input, bool)> = opts
        .inputs
        .iter()
        .map(|(n, t)| (n.clone(), stdin_only(t.clone()), true))
        .collect();
    if opts.inputs.is_empty() {
        // No samples: the programs' own reads (C and C++ `scanf` formats, `argv` uses) shape
        // the inputs, half from each side's reads when they differ.
        let (ra, rb) = (&a.reads, &b.reads);
        let mut shaped = Vec::new();
        let mut from = Vec::new();
        if (ra.stdin == rb.stdin && ra.args == rb.args) || rb.is_empty() {
            // One shape; the values favour both sides' literals.
            shaped = shaped_inputs(&ra.with_literals_of(rb), opts.generated, opts.seed);
            from.push(format!("A's reads ({})", ra.describe()));
        } else if ra.is_empty() {
            shaped = shaped_inputs(rb, opts.generated, opts.seed);
            from.push(format!("B's reads ({})", rb.describe()));
        } else {
            let half = opts.generated.div_ceil(2);
            shaped.extend(shaped_inputs(ra, half, opts.seed));
            shaped.extend(shaped_inputs(rb, half, opts.seed ^ 0x9e37));
            from.push(format!("A's reads ({})", ra.describe()));
            from.push(format!("B's reads ({})", rb.describe()));
        }
        // A program with arguments is not run without them. Empty standard input is the
        // input of a program that reads none; for one that reads it, it is an input we made
        // up (the problem gives it data), so like a generated one it counts only when both
        // sides end normally: two programs that both fail on it showed nothing.
        let needs_args = !ra.args.is_empty() || !rb.args.is_empty();
        if !needs_args {
            let reads_stdin = a.entry.reads_stdin || b.entry.reads_stdin;
            all.push((
                "empty standard input".into(),
                stdin_only(String::new()),
                !reads_stdin,
            ));
        }
        if shaped.is_empty() {
            notes.push(
                "no sample inputs (--inputs DIR): ran once on empty standard input, and generated none"
                    .into(),
            );
        } else {
            notes.push(format!(
                "no sample inputs (--inputs DIR): {} input(s) generated from {}",
                shaped.len(),
                from.join(" and ")
            ));
        }
        all.extend(
            shaped
                .into_iter()
                .enumerate()
                .map(|(i, x)| (format!("read-shaped #{}", i + 1), x, false)),
        );
    } else {
        let generated = generate_inputs(&samples, opts.generated, opts.seed);
        all.extend(
            generated
                .into_iter()
                .enumerate()
                .map(|(i, t)| (format!("generated #{}", i + 1), stdin_only(t), false)),
        );
    }
    let mut trials = 0usize;
    let mut discarded: Vec<String> = Vec::new();
    let n_given = opts.inputs.len();
    let started = std::time::Instant::now();
    // One input run on both sides: `Some(report)` when it shows a difference.
    let mut try_input = |name: &str, input: &Input, is_given: bool| -> Option<Deterministic> {
        let (ra, rb) = std::thread::scope(|s| {
            let h = s.spawn(|| run_one(a, &ba, input, opts.limits));
            let rb = run_one(b, &bb, input, opts.limits);
            (
                h.join()
                    .unwrap_or_else(|_| Run::Discard("runner failed".into())),
                rb,
            )
        });
        let differ = match (&ra, &rb) {
            (Run::Discard(why), _) | (_, Run::Discard(why)) => {
                discarded.push(format!("{name}: {why}"));
                return None;
            }
            (
                Run::Ok {
                    stdout: oa,
                    status: sa,
                },
                Run::Ok {
                    stdout: ob,
                    status: sb,
                },
            ) => {
                if is_given {
                    sa != sb || !same_output(oa, ob, opts.compare)
                } else if *sa != 0 || *sb != 0 {
                    discarded.push(format!("{name}: a side exited with an error"));
                    return None;
                } else {
                    !same_output(oa, ob, opts.compare)
                }
            }
        };
        trials += 1;
        if !differ {
            return None;
        }
        // Undefined behaviour that the sanitizers missed (uninitialised reads) is no
        // evidence either.
        let ub = [(&ba, a), (&bb, b)]
            .into_iter()
            .any(|(built, _)| memcheck_complains(built, input, opts.limits) == Some(true));
        if ub {
            trials -= 1;
            discarded.push(format!("{name}: memcheck reports undefined behaviour"));
            return None;
        }
        Some(Deterministic {
            verdict: Verdict::NotEquivalent,
            method: "differential",
            counterexample: Some(json!({
                "input": clip(&input.stdin),
                "args": input.args,
                "origin": name,
                "a": run_json(&ra),
                "b": run_json(&rb),
            })),
            trials,
            notes: Vec::new(),
        })
    };
    for (name, input, is_given) in &all {
        if let Some(mut found) = try_input(name, input, *is_given) {
            found.notes = notes;
            return found;
        }
    }
    // Cheap programs get more generated inputs (a difference on one input in a few hundred
    // is still a difference): batches of the same size, while the runs so far took less than
    // `more_within`, up to `MORE_BATCHES` more.
    let mut extra = 0usize;
    if let (Some(budget), false) = (opts.more_within, samples.is_empty() || opts.generated == 0) {
        let mut seen: BTreeSet<String> = all.iter().map(|(_, x, _)| x.stdin.clone()).collect();
        for batch in 1..=MORE_BATCHES {
            if started.elapsed() * (batch as u32 + 1) / batch as u32 > budget {
                break;
            }
            let seed = opts.seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(batch as u64));
            for t in generate_inputs(&samples, opts.generated, seed) {
                if !seen.insert(t.clone()) {
                    continue;
                }
                extra += 1;
                let name = format!("generated #{}", opts.generated + extra);
                if let Some(mut found) = try_input(&name, &stdin_only(t), false) {
                    found.notes = notes;
                    return found;
                }
            }
        }
    }
    let n_generated = all.iter().filter(|(_, _, given)| !given).count() + extra;
    if n_given > 0 {
        notes.push(format!(
            "{n_given} given input(s), {n_generated} generated from their shape"
        ));
    }
    if !discarded.is_empty() {
        notes.push(format!(
            "{} input(s) discarded: {}",
            discarded.len(),
            discarded
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    Deterministic::no_difference(trials, notes)
}
