//! Spec: an edit checked by parsing one top-level item alone (`syntax::splice`) ends on exactly
//! the tree a fresh parse of the new text gives, node for node (kinds, ranges, points, flags,
//! fields), with the same syntax errors; and the check is actually taken for edits inside a
//! function. Seeded random edits over every Python fixture and a generated 4,000-line file:
//! characters typed and deleted inside identifiers and literals, brackets, quotes,
//! continuation backslashes, indentation, new lines and definitions, at any offset.

use crosscheck::syntax::{Language, ParsedFile};
use std::path::Path;

/// One node of a pre-order walk, everything the analyses can observe of it.
type NodeFacts = (
    u16,
    std::ops::Range<usize>,
    (usize, usize),
    (usize, usize),
    bool,
    bool,
    bool,
    Option<u16>,
);

fn nodes(file: &ParsedFile) -> Vec<NodeFacts> {
    let mut out = Vec::new();
    let mut c = file.tree.walk();
    loop {
        let n = c.node();
        out.push((
            n.kind_id(),
            n.byte_range(),
            (n.start_position().row, n.start_position().column),
            (n.end_position().row, n.end_position().column),
            n.is_named(),
            n.is_extra(),
            n.is_missing(),
            c.field_id().map(|f| f.get()),
        ));
        if c.goto_first_child() {
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return out;
            }
        }
    }
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SNIPPETS: &[&str] = &[
    "x",
    "7",
    " ",
    "\n",
    "(",
    ")",
    ":",
    "'",
    "\"\"\"",
    "#",
    "\\",
    "\t",
    "lambda: 0",
    "\n    y = 2",
    "\ndef g():\n    pass\n",
    "    ",
    "if",
    "else",
    "[",
    "]",
    ",",
    "f\"{x}\"",
    "@d\n",
    "class",
];

fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One random edit: mostly a character of an identifier or number replaced (what typing
/// inside a function does), else a snippet inserted or a few characters deleted.
fn random_edit(rng: &mut Lcg, text: &str) -> (usize, usize, String) {
    let len = text.len().max(1);
    match rng.below(10) {
        0..=4 => {
            // Replace one alphanumeric character by another of the same class.
            for _ in 0..50 {
                let at = boundary(text, rng.below(len));
                if let Some(ch) = text[at..].chars().next() {
                    if ch.is_ascii_alphanumeric() {
                        let pool = if ch.is_ascii_digit() {
                            "0123456789"
                        } else {
                            "abcdefghijklmnopqrstuvwxyz"
                        };
                        let new = pool.as_bytes()[rng.below(pool.len())] as char;
                        return (at, at + 1, new.to_string());
                    }
                }
            }
            (0, 0, String::new())
        }
        5..=7 => {
            let at = boundary(text, rng.below(len + 1));
            (at, at, SNIPPETS[rng.below(SNIPPETS.len())].to_string())
        }
        _ => {
            let at = boundary(text, rng.below(len));
            let end = boundary(text, at + 1 + rng.below(5));
            (at, end, String::new())
        }
    }
}

fn python_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("tests/fixtures"), root.join("examples")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if Language::from_path(&p) == Some(Language::Python) {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    out.push((p.display().to_string(), text));
                }
            }
        }
    }
    out.sort();
    assert!(out.len() > 30, "Python fixtures not found: {}", out.len());
    let (generated, _) = crosscheck::lsp::bench::generate_python(4000);
    out.push(("generated".into(), generated));
    out
}

fn check(
    name: &str,
    file: &mut ParsedFile,
    start: usize,
    end: usize,
    new: &str,
    tally: &mut (usize, usize),
) {
    file.edit(start, end, new);
    tally.0 += 1;
    tally.1 += usize::from(file.item_reparse);
    let fresh = ParsedFile::parse(Language::Python, file.text.clone());
    assert!(
        nodes(file) == nodes(&fresh) && file.errors == fresh.errors,
        "{name}: edit {start}..{end} -> {new:?} (item reparse: {}) differs from a fresh parse",
        file.item_reparse
    );
}

#[test]
fn edits_reparsed_by_item_equal_a_fresh_parse() {
    let (mut tally, mut generated) = ((0usize, 0usize), (0usize, 0usize));
    for (name, text) in python_sources() {
        let tally = if name == "generated" {
            &mut generated
        } else {
            &mut tally
        };
        let mut rng = Lcg(0x5eed ^ text.len() as u64);
        let mut file = ParsedFile::parse(Language::Python, text);
        let rounds = if name == "generated" { 300 } else { 40 };
        for _ in 0..rounds {
            let (start, end, new) = random_edit(&mut rng, &file.text);
            let old = file.text[start..end].to_string();
            check(&name, &mut file, start, end, &new, tally);
            // Broken syntax is mended again (an undo, itself checked), so later edits start
            // from error-free trees, where the item check applies.
            if file.has_errors() {
                check(&name, &mut file, start, start + new.len(), &old, tally);
            }
        }
    }
    // The check is taken often enough to be tested by this: in the fixtures (small files,
    // many of one class) and above all in the generated file of top-level functions.
    eprintln!(
        "reparsed by item: fixtures {tally:?}, generated file {generated:?} (edits, by item)"
    );
    assert!(tally.1 * 10 > tally.0, "fixtures: {tally:?}");
    assert!(
        generated.1 * 4 > generated.0,
        "generated file: {generated:?}"
    );
}

#[test]
fn an_edit_inside_a_top_level_function_reparses_only_that_function() {
    let (text, fns) = crosscheck::lsp::bench::generate_python(2000);
    let mut file = ParsedFile::parse(Language::Python, text);
    // `    return total + 0`: the literal is the function's last character.
    let line = fns[3].1 as usize;
    let at = file.lines.line_start(line).expect("line exists") + 19;
    file.edit(at, at + 1, "5");
    assert!(file.item_reparse);
    assert_eq!(
        nodes(&file),
        nodes(&ParsedFile::parse(Language::Python, file.text.clone()))
    );
    // Text typed right after a function's last character is not inside it: a full reparse.
    file.edit(at + 1, at + 1, "\n    extra = 1");
    assert!(!file.item_reparse);
    assert_eq!(
        nodes(&file),
        nodes(&ParsedFile::parse(Language::Python, file.text.clone()))
    );
    // Indenting a definition's first line joins it to the one before: a full reparse.
    let def_line = fns[5].1 as usize - 9;
    let def_at = file.lines.line_start(def_line).expect("line exists");
    file.edit(def_at, def_at, "    ");
    assert!(!file.item_reparse);
    assert_eq!(
        nodes(&file),
        nodes(&ParsedFile::parse(Language::Python, file.text.clone()))
    );
    // Other languages reparse as tree-sitter does.
    let mut java = ParsedFile::parse(Language::Java, "class A { int f() { return 0; } }");
    java.edit(29, 30, "1");
    assert!(!java.item_reparse);
}
