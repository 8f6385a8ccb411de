//! Spec: facts computed once per parse and results reused across parses change nothing.
//!
//! The function list (`ParsedFile::functions`, a filtered cursor walk) equals the reference
//! walk's on every fixture. The per-function memo of `analysis::report::analyze_parsed_with` (used by the
//! language server between edits) never changes a result. On every fixture, an analysis that
//! reuses the memo equals a fresh analysis of the same text: re-analysing the same text, after
//! moving every function down, and along seeded random edit sequences (characters typed and
//! deleted, lines added and removed, syntax broken and mended).

use crosscheck::analysis::report::{analyze_parsed, analyze_parsed_with, FunctionMemo};
use crosscheck::analysis::taint::{analyze_file_with, TaintMemo};
use crosscheck::syntax::functions::{reference_functions, Function};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<(PathBuf, Language, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("tests/fixtures"), root.join("examples")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(lang) = Language::from_path(&p) {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    out.push((p, lang, text));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() > 100, "fixtures not found: {}", out.len());
    out
}

#[test]
fn the_function_list_is_the_reference_walks() {
    let show = |fs: &[Function<'_>]| {
        fs.iter()
            .map(|f| {
                format!(
                    "{} {:?} {} {:?} {:?} {:?} {:?}",
                    f.name, f.kind, f.signature, f.params, f.class, f.container, f.node
                )
            })
            .collect::<Vec<_>>()
    };
    let mut found = 0;
    for (path, lang, text) in fixtures() {
        let file = ParsedFile::parse(lang, text);
        let reference = reference_functions(&file);
        assert_eq!(
            show(file.functions()),
            show(&reference),
            "{}",
            path.display()
        );
        found += reference.len();
    }
    assert!(found > 500, "{found} functions");
}

fn json(file: &ParsedFile, memo: Option<&mut FunctionMemo>) -> String {
    let report = match memo {
        Some(m) => analyze_parsed_with("/f", file, &Cancel::never(), Some(m)),
        None => analyze_parsed("/f", file, &Cancel::never()),
    };
    serde_json::to_string_pretty(&report).unwrap()
}

/// A fixed-seed xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn same_text_reuses_every_function_and_gives_the_same_report() {
    let mut reused_any = 0usize;
    for (path, lang, text) in fixtures() {
        let file = ParsedFile::parse(lang, text.clone());
        let mut memo = FunctionMemo::default();
        let first = json(&file, Some(&mut memo));
        assert_eq!(first, json(&file, None), "{}", path.display());
        assert_eq!(memo.reused, 0);
        let again = ParsedFile::parse(lang, text);
        let second = json(&again, Some(&mut memo));
        assert_eq!(second, first, "{}", path.display());
        // Syntax errors included: the same text parses to the same shapes.
        assert_eq!(memo.analysed, 0, "{}: nothing changed", path.display());
        reused_any += memo.reused;
    }
    assert!(reused_any > 500, "the memo was hardly used: {reused_any}");
}

/// Real C is full of macros the grammar cannot know (`int f(void *p UNUSED)` does not parse):
/// one such error must not make every edit re-analyse the whole file.
#[test]
fn a_syntax_error_in_one_function_leaves_the_others_reusable() {
    let text = "#define UNUSED __attribute__((unused))\n\
                static int f(void *p UNUSED)\n{\n    return 1;\n}\n\n\
                int g(int a)\n{\n    int b = a + 1;\n    return b;\n}\n\n\
                int h(int *q)\n{\n    return *q;\n}\n";
    let file = ParsedFile::parse(Language::C, text);
    assert!(file.has_errors(), "the macro was expected not to parse");
    let mut memo = FunctionMemo::default();
    json(&file, Some(&mut memo));
    let edited = text.replace("a + 1", "a + 2");
    let file = ParsedFile::parse(Language::C, edited.clone());
    let with_memo = json(&file, Some(&mut memo));
    assert_eq!(
        with_memo,
        json(&ParsedFile::parse(Language::C, edited), None)
    );
    assert_eq!(memo.analysed, 1, "only `g` changed");
    assert!(memo.reused >= 2, "reused {}", memo.reused);
    // The function with the error itself is reused while its text and shape stay.
    let again = ParsedFile::parse(Language::C, file.text.clone());
    json(&again, Some(&mut memo));
    assert_eq!(memo.analysed, 0);
}

#[test]
fn moved_functions_keep_their_results_with_their_new_lines() {
    let mut moved = 0usize;
    for (path, lang, text) in fixtures() {
        let file = ParsedFile::parse(lang, text.clone());
        let mut memo = FunctionMemo::default();
        json(&file, Some(&mut memo));
        let shifted = ParsedFile::parse(lang, format!("\n\n\n{text}"));
        let with_memo = json(&shifted, Some(&mut memo));
        assert_eq!(with_memo, json(&shifted, None), "{}", path.display());
        moved += memo.reused;
    }
    assert!(
        moved > 300,
        "moved functions were analysed again: {moved} reused"
    );
}

#[test]
fn random_edit_sequences_settle_on_the_fresh_report() {
    const PIECES: [&str; 10] = ["x", " ", "\n", "(", ")", "{", "}", ":", ";", "1"];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (path, lang, text) in fixtures() {
        if text.len() > 40_000 {
            continue;
        }
        let mut file = ParsedFile::parse(lang, text);
        let mut memo = FunctionMemo::default();
        json(&file, Some(&mut memo));
        for step in 0..12 {
            let len = file.text.len();
            let start = rng.below(len + 1);
            let del = if rng.below(3) == 0 { rng.below(4) } else { 0 };
            let piece = PIECES[rng.below(PIECES.len())];
            file.edit(start, start + del, piece);
            let fresh = ParsedFile::parse(lang, file.text.clone());
            assert_eq!(
                json(&file, Some(&mut memo)),
                json(&fresh, None),
                "{} after edit {step} at byte {start}",
                path.display()
            );
        }
    }
}

fn taint_json(file: &ParsedFile, memo: Option<&mut TaintMemo>) -> String {
    let r = analyze_file_with("/f", file, memo, &Cancel::never());
    serde_json::to_string_pretty(&r).unwrap()
}

#[test]
fn the_taint_memo_reuses_unchanged_functions_and_changes_no_result() {
    let (mut reused, mut moved) = (0usize, 0usize);
    for (path, lang, text) in fixtures() {
        let file = ParsedFile::parse(lang, text.clone());
        let mut memo = TaintMemo::default();
        let first = taint_json(&file, Some(&mut memo));
        assert_eq!(first, taint_json(&file, None), "{}", path.display());
        let again = ParsedFile::parse(lang, text.clone());
        assert_eq!(
            taint_json(&again, Some(&mut memo)),
            first,
            "{}",
            path.display()
        );
        if !file.has_errors() {
            assert_eq!(memo.scanned, 0, "{}: nothing changed", path.display());
            reused += memo.reused;
        }
        // Moved down: offsets and lines change, scans are reused.
        let shifted = ParsedFile::parse(lang, format!("\n\n\n{text}"));
        assert_eq!(
            taint_json(&shifted, Some(&mut memo)),
            taint_json(&shifted, None),
            "{} moved",
            path.display()
        );
        moved += memo.reused;
    }
    assert!(reused > 500, "the taint memo was hardly used: {reused}");
    assert!(moved > 300, "moved functions were scanned again: {moved}");
}

#[test]
fn taint_with_the_memo_settles_on_the_fresh_result_along_random_edits() {
    // Mostly edits that keep the file parsing (the memo serves error-free parses): a letter
    // added to an identifier (a rename: new names, new call targets, sources gained or
    // lost), a blank line (everything below moves); and some that break and mend it.
    const PIECES: [&str; 6] = ["x", "\n", "(", ")", ":", ";"];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut reused = 0usize;
    for (path, lang, text) in fixtures() {
        if text.len() > 40_000 {
            continue;
        }
        let mut file = ParsedFile::parse(lang, text);
        let mut memo = TaintMemo::default();
        taint_json(&file, Some(&mut memo));
        for step in 0..10 {
            let bytes = file.text.as_bytes();
            let (start, piece) = match rng.below(4) {
                0 | 1 => {
                    // After a letter of some identifier.
                    let letters: Vec<usize> = (0..bytes.len())
                        .filter(|&i| bytes[i].is_ascii_alphabetic())
                        .collect();
                    match letters.get(rng.below(letters.len())) {
                        Some(&i) => (i + 1, "x"),
                        None => continue,
                    }
                }
                2 => {
                    let newlines: Vec<usize> =
                        (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
                    match newlines.get(rng.below(newlines.len())) {
                        Some(&i) => (i + 1, "\n"),
                        None => continue,
                    }
                }
                _ => (rng.below(bytes.len() + 1), PIECES[rng.below(PIECES.len())]),
            };
            file.edit(start, start, piece);
            let fresh = ParsedFile::parse(lang, file.text.clone());
            assert_eq!(
                taint_json(&file, Some(&mut memo)),
                taint_json(&fresh, None),
                "{} after edit {step} at byte {start}",
                path.display()
            );
            reused += memo.reused;
        }
    }
    assert!(reused > 1000, "edits rescanned everything: {reused} reused");
}
