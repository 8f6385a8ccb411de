//! Spec: the editor's workspace analysis updated from the previous one after an edit (the call
//! graph resolving again only the edited file's call sites when the other files can read
//! nothing new from it; the taint analysis reusing the scans of functions whose text and call
//! edges are unchanged) equals a fresh analysis of the same texts: the same call edges, the
//! same findings per file, the same text hashes. Seeded random edits over a workspace of every
//! call-graph and taint fixture (all languages at once): lines inserted, deleted and
//! duplicated, comments added, identifiers renamed to other names of the file or extended,
//! and texts restored. The test also requires that the partial update is actually taken.

use crosscheck::lsp::findings::{FindingProvider, TaintProvider};
use crosscheck::lsp::workspace::{compute_interproc, Interproc, InterprocCache};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn sources(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if Language::from_path(&p).is_some() {
            out.push(p);
        }
    }
}

/// Seeded randomness: `below(n)` in `0..n`.
struct Rng(ChaCha8Rng);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n.max(1))
    }
}

fn identifiers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i <= text.len())
        .collect()
}

/// One random edit of `text` (`original` is what a restore goes back to).
fn edit(rng: &mut Rng, text: &str, original: &str, lang: Language) -> String {
    let lines = line_starts(text);
    let at = lines[rng.below(lines.len())];
    let line_end = text[at..]
        .find('\n')
        .map(|i| at + i + 1)
        .unwrap_or(text.len());
    let ids = identifiers(text);
    match rng.below(8) {
        0 => format!("{}\n{}", &text[..at], &text[at..]),
        1 => {
            let comment = if lang == Language::Python {
                "# note\n"
            } else {
                "// note\n"
            };
            format!("{}{comment}{}", &text[..at], &text[at..])
        }
        2 if !ids.is_empty() => {
            let (s, e) = ids[rng.below(ids.len())];
            let (s2, e2) = ids[rng.below(ids.len())];
            format!("{}{}{}", &text[..s], &text[s2..e2], &text[e..])
        }
        3 => format!("{}{}", &text[..at], &text[line_end..]),
        4 => format!(
            "{}{}{}",
            &text[..line_end],
            &text[at..line_end],
            &text[line_end..]
        ),
        5 if !ids.is_empty() => {
            let (_, e) = ids[rng.below(ids.len())];
            format!("{}x{}", &text[..e], &text[e..])
        }
        6 => original.to_string(),
        _ => {
            // Typing a character inside a line (a call argument, a string, an operator).
            let pos = at + rng.below(line_end - at);
            let pos = (0..=pos)
                .rev()
                .find(|&p| text.is_char_boundary(p))
                .unwrap_or(0);
            format!(
                "{}{}{}",
                &text[..pos],
                ["1", "a", " ", ")", "("][rng.below(5)],
                &text[pos..]
            )
        }
    }
}

fn edges(ip: &Interproc) -> Vec<String> {
    let mut v: Vec<String> = ip.edges().iter().map(|e| format!("{e:?}")).collect();
    v.sort();
    v
}

#[test]
fn workspace_updates_after_random_edits_equal_a_fresh_analysis() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths = Vec::new();
    sources(&root.join("callgraph"), &mut paths);
    sources(&root.join("taint"), &mut paths);
    assert!(paths.len() > 40, "fixtures missing: {}", paths.len());
    let originals: Vec<(String, Language, String)> = paths
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            Some((
                p.to_string_lossy().into_owned(),
                Language::from_path(p)?,
                text,
            ))
        })
        .collect();
    let mut units: Vec<(String, Arc<ParsedFile>)> = originals
        .iter()
        .map(|(p, l, t)| (p.clone(), Arc::new(ParsedFile::parse(*l, t.clone()))))
        .collect();
    let providers: Vec<Arc<dyn FindingProvider>> = vec![Arc::new(TaintProvider)];
    let cancel = Cancel::never();
    let mut cache = InterprocCache::default();
    compute_interproc(0, &units, &providers, &mut cache, &cancel);
    let mut rng = Rng(ChaCha8Rng::seed_from_u64(0x5EED_1234_ABCD_0001));
    let (mut partial, mut edits) = (0, 0);
    let mut changed_findings = 0;
    let mut previous: Option<Interproc> = None;
    for round in 1..=400u64 {
        // Mostly one file edited at a time (the editor's case), sometimes two.
        let mut edited = Vec::new();
        for _ in 0..1 + usize::from(rng.below(5) == 0) {
            let i = rng.below(units.len());
            let (path, lang, original) = &originals[i];
            let new = edit(&mut rng, &units[i].1.text, original, *lang);
            units[i] = (path.clone(), Arc::new(ParsedFile::parse(*lang, new)));
            edited.push(*lang);
        }
        edits += 1;
        let updated = compute_interproc(round, &units, &providers, &mut cache, &cancel);
        if let [lang] = edited.as_slice() {
            let family = units
                .iter()
                .filter(|(_, f)| f.language.family() == lang.family())
                .count();
            if cache.computed == 1 && cache.resolved_units < family {
                partial += 1;
            }
        }
        let fresh = compute_interproc(
            round,
            &units,
            &providers,
            &mut InterprocCache::default(),
            &cancel,
        );
        assert_eq!(
            edges(&updated),
            edges(&fresh),
            "call edges differ after edit {round}"
        );
        assert_eq!(
            updated.findings, fresh.findings,
            "findings differ after edit {round}"
        );
        assert_eq!(updated.unit_hashes, fresh.unit_hashes);
        if previous
            .as_ref()
            .is_some_and(|p| p.findings != updated.findings)
        {
            changed_findings += 1;
        }
        previous = Some(updated);
    }
    eprintln!(
        "{edits} edits: {partial} partial updates, findings changed {changed_findings} times"
    );
    // The partial update must be exercised, and the edits must matter to the findings.
    assert!(
        partial * 4 >= edits,
        "partial updates: {partial} of {edits}"
    );
    assert!(
        changed_findings >= 5,
        "findings changed {changed_findings} times"
    );
}

/// A field whose type comes from a local of the method that assigns it: editing that local in
/// one file changes which method a call in another file reaches.
#[test]
fn a_field_typed_through_a_local_of_another_file_follows_its_edits() {
    let b = |class: &str| {
        format!(
            "class Runner:\n    def run(self):\n        pass\n\nclass Walker:\n    def run(self):\n        pass\n\n\
             class Holder:\n    def __init__(self):\n        h = {class}()\n        self.helper = h\n"
        )
    };
    let a = "from b import Holder\n\ndef main():\n    x = Holder()\n    x.helper.run()\n";
    let unit = |path: &str, text: String| {
        (
            path.to_string(),
            Arc::new(ParsedFile::parse(Language::Python, text)),
        )
    };
    let providers: Vec<Arc<dyn FindingProvider>> = vec![Arc::new(TaintProvider)];
    let cancel = Cancel::never();
    let mut cache = InterprocCache::default();
    let a = unit("/w/a.py", a.to_string());
    let first = compute_interproc(
        1,
        &[a.clone(), unit("/w/b.py", b("Runner"))],
        &providers,
        &mut cache,
        &cancel,
    );
    let calls = |ip: &Interproc| {
        ip.edges()
            .iter()
            .filter(|e| e.caller.name == "main" && e.callee.name.ends_with(".run"))
            .map(|e| e.callee.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(calls(&first), ["Runner.run"]);
    let units = [a, unit("/w/b.py", b("Walker"))];
    let second = compute_interproc(2, &units, &providers, &mut cache, &cancel);
    assert_eq!(calls(&second), ["Walker.run"]);
    // A comment in `b.py` leaves `a.py`'s sites as they were: only `b.py` is resolved again.
    let units = [
        units[0].clone(),
        unit("/w/b.py", format!("# edited\n{}", b("Walker"))),
    ];
    let third = compute_interproc(3, &units, &providers, &mut cache, &cancel);
    assert_eq!(calls(&third), ["Walker.run"]);
    assert_eq!(cache.resolved_units, 1);
}

/// A new line above a lambda renames it (`<lambda@7>` -> `<lambda@8>`): when no other file
/// reaches the lambda, only the edited file is resolved again; when another file calls it,
/// that file's edge follows the new name.
#[test]
fn lambdas_renamed_by_a_new_line_are_followed_where_other_files_call_them() {
    let unit = |path: &str, text: &str| {
        (
            path.to_string(),
            Arc::new(ParsedFile::parse(Language::Python, text.to_string())),
        )
    };
    let providers: Vec<Arc<dyn FindingProvider>> = vec![Arc::new(TaintProvider)];
    let cancel = Cancel::never();
    let b =
        "def helper(xs):\n    return sorted(xs, key=lambda x: -x)\n\nshout = lambda s: s.upper()\n";
    let a = unit(
        "/w/a.py",
        "from b import shout, helper\n\ndef main():\n    helper([1])\n    return shout('x')\n",
    );
    let c = unit("/w/c.py", "def other():\n    return 1\n");
    let mut cache = InterprocCache::default();
    compute_interproc(
        1,
        &[a.clone(), unit("/w/b.py", b), c.clone()],
        &providers,
        &mut cache,
        &cancel,
    );
    let check = |units: &[(String, Arc<ParsedFile>)], cache: &mut InterprocCache, round| {
        let updated = compute_interproc(round, units, &providers, cache, &cancel);
        let fresh = compute_interproc(
            round,
            units,
            &providers,
            &mut InterprocCache::default(),
            &cancel,
        );
        assert_eq!(edges(&updated), edges(&fresh));
        edges(&updated)
    };
    // `shout` is called from `a.py`: a line above it renames it, and `a.py` follows.
    let moved = format!("\n{b}");
    let e = check(
        &[a.clone(), unit("/w/b.py", &moved), c.clone()],
        &mut cache,
        2,
    );
    assert!(
        e.iter()
            .any(|x| x.contains("<lambda@5>") && x.contains("/w/a.py")),
        "{e:#?}"
    );
    // Without the module-level lambda, only the nested one moves: `b.py` alone is resolved.
    let b2 =
        "def helper(xs):\n    return sorted(xs, key=lambda x: -x)\n\ndef shout(s):\n    return s\n";
    check(&[a.clone(), unit("/w/b.py", b2), c.clone()], &mut cache, 3);
    let moved2 = b2.replacen("    return sorted", "\n    return sorted", 1);
    let e = check(&[a, unit("/w/b.py", &moved2), c], &mut cache, 4);
    assert_eq!(cache.resolved_units, 1, "{e:#?}");
}

/// The taint analysis keeps each function's interpretation with what it read (callee
/// summaries, store entries, its local aliases); an edit re-interprets only the functions
/// whose text or position changed and those whose inputs changed with them, and the result
/// (flows with their paths, tainted variables, errors) is a fresh run's. Per language family
/// (the memo serves one family), over every taint and call-graph fixture of the family.
#[test]
fn taint_interpretations_are_reused_after_edits_and_equal_a_fresh_run() {
    use crosscheck::analysis::callgraph::{build_call_graph, EdgeView, SourceUnit};
    use crosscheck::analysis::pointsto::analyze_points_to;
    use crosscheck::analysis::taint::{analyze_taint_with, TaintMemo, TaintResult, TaintSpecs};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths = Vec::new();
    sources(&root.join("callgraph"), &mut paths);
    sources(&root.join("taint"), &mut paths);
    let cancel = Cancel::never();
    let run = |units: &[(String, ParsedFile)], memo: Option<&mut TaintMemo>| -> String {
        let su: Vec<SourceUnit<'_>> = units
            .iter()
            .map(|(p, f)| SourceUnit {
                path: p.clone(),
                file: f,
            })
            .collect();
        let edges = build_call_graph(&su, &cancel);
        let c = matches!(su[0].file.language, Language::C | Language::Cpp);
        let pt = c.then(|| analyze_points_to(&su, &cancel).without_solver_state());
        let r: TaintResult = analyze_taint_with(
            &su,
            Some(EdgeView::from(edges.as_slice())),
            pt.as_ref(),
            TaintSpecs::builtin_shared(),
            memo,
            &cancel,
        );
        format!(
            "{:#?}\n{:#?}\n{:#?}\n{:#?}\n{}",
            r.flows, r.sanitized_flows, r.tainted_variables, r.errors, r.partial
        )
    };
    for (tried, family) in [
        Language::C,
        Language::Python,
        Language::Java,
        Language::JavaScript,
    ]
    .into_iter()
    .enumerate()
    {
        let mut units: Vec<(String, ParsedFile)> = paths
            .iter()
            .filter_map(|p| {
                let lang = Language::from_path(p)?;
                (lang.family() == family).then(|| {
                    let text = std::fs::read_to_string(p).unwrap_or_default();
                    (
                        p.to_string_lossy().into_owned(),
                        ParsedFile::parse(lang, text),
                    )
                })
            })
            .collect();
        assert!(units.len() >= 4, "{family:?} fixtures missing");
        let mut memo = TaintMemo::default();
        let first = run(&units, Some(&mut memo));
        assert_eq!(first, run(&units, None));
        assert!(first.contains("TaintFlow"), "{family:?}: no flow at all");
        let total = memo.analyses_run;
        assert!(total > 0 && memo.analyses_reused == 0);
        let mut rng = Rng(ChaCha8Rng::seed_from_u64(0xC0FF_EE00 + tried as u64));
        let mut reused_somewhere = false;
        for round in 0..40 {
            let i = rng.below(units.len());
            let lang = units[i].1.language;
            let text = units[i].1.text.clone();
            // A comment after the last line, a blank line at the top, or a random edit.
            let new = match round % 3 {
                0 => format!("{text}\n"),
                1 => format!("\n{text}"),
                _ => {
                    let original = std::fs::read_to_string(&units[i].0).unwrap_or_default();
                    edit(&mut rng, &text, &original, lang)
                }
            };
            units[i].1 = ParsedFile::parse(lang, new);
            let updated = run(&units, Some(&mut memo));
            assert_eq!(
                updated,
                run(&units, None),
                "{family:?}: edit {round} of {} differs from a fresh run",
                units[i].0
            );
            if memo.analyses_reused > 0 && memo.analyses_run < total {
                reused_somewhere = true;
            }
        }
        assert!(reused_somewhere, "{family:?}: no interpretation was reused");
    }
}
