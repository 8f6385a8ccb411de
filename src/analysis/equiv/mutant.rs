//! Mutants as pairs of programs, purely: applying a unified diff (MutantBench, cargo-mutants),
//! recovering the original and a mutated function from a mutmut 3 instrumented file, reading a
//! PIT `mutations.xml`, and the summary figures of a classification run (accuracy on
//! equivalent and non-equivalent mutants and the decision gap, research notes section 2).
//! No I/O: the front ends read the files and run the code.

use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use std::collections::BTreeMap;

/// A unified diff applied to a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The patched text.
    pub text: String,
    /// 1-based line of the first change in the original (for an insertion: the line before
    /// which the new lines go, clamped to the text).
    pub first_old: usize,
    /// 1-based line of the first changed line in the patched text.
    pub first_new: usize,
    /// Number of hunks applied.
    pub hunks: usize,
}

#[derive(Debug, Default, Clone)]
struct Hunk {
    old_start: usize,
    /// (tag, text) with tag ' ', '-' or '+'.
    lines: Vec<(char, String)>,
}

/// How far from its stated position a hunk may be found when the line numbers are off.
const FUZZ_WINDOW: usize = 200;

fn parse_hunks(diff: &str) -> Result<Vec<Hunk>, String> {
    let mut hunks: Vec<Hunk> = Vec::new();
    for (i, l) in diff.lines().enumerate() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let old_start = num
                .parse::<usize>()
                .map_err(|_| format!("diff line {}: malformed hunk header `{l}`", i + 1))?;
            hunks.push(Hunk {
                old_start,
                lines: Vec::new(),
            });
            continue;
        }
        let Some(h) = hunks.last_mut() else {
            // Headers (`diff --git`, `---`, `+++`, `index`) before the first hunk.
            continue;
        };
        if l.starts_with("--- ") || l.starts_with("+++ ") {
            // A new file's headers inside a multi-file diff: this module patches one file.
            if l.starts_with("--- ") && !h.lines.is_empty() {
                return Err(format!(
                    "diff line {}: the diff touches several files",
                    i + 1
                ));
            }
            continue;
        }
        if l.starts_with('\\') {
            continue; // "\ No newline at end of file"
        }
        let mut chars = l.chars();
        match chars.next() {
            Some(tag @ (' ' | '-' | '+')) => h.lines.push((tag, chars.as_str().to_string())),
            None => h.lines.push((' ', String::new())),
            Some(_) => return Err(format!("diff line {}: not a hunk line: `{l}`", i + 1)),
        }
    }
    if hunks.is_empty() {
        return Err("no hunk (`@@ -N +M @@`) in the diff".into());
    }
    if hunks.iter().all(|h| h.lines.iter().all(|(t, _)| *t == ' ')) {
        return Err("the diff changes nothing".into());
    }
    Ok(hunks)
}

fn same(a: &str, b: &str) -> bool {
    a.trim_end() == b.trim_end()
}

/// Applies a unified diff with old-file line numbers to `text`. Context and removed lines must
/// match (trailing whitespace aside); a hunk whose stated position does not match is looked
/// for within `FUZZ_WINDOW` lines, nearest first. Errors name the hunk that does not apply.
pub fn apply_unified_diff(text: &str, diff: &str) -> Result<Applied, String> {
    if text.contains('\0') || diff.contains('\0') {
        return Err("binary content".into());
    }
    let hunks = parse_hunks(diff)?;
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // `offset`: lines added minus removed by earlier hunks.
    let mut offset: isize = 0;
    let mut first: Option<(usize, usize)> = None;
    let mut floor = 0usize; // hunks apply in order, never before the previous one's end
    for (k, h) in hunks.iter().enumerate() {
        // The hunk as written, then (when that is not found) with doubled backslashes read
        // as one: MutantBench's C diffs escape `\0` and `\"` a second time.
        let written: Vec<(char, String)> = h.lines.clone();
        let unescaped: Vec<(char, String)> = h
            .lines
            .iter()
            .map(|(t, l)| (*t, l.replace("\\\\", "\\")))
            .collect();
        let mut bodies = vec![&written];
        if unescaped != written {
            bodies.push(&unescaped);
        }
        let mut found = None;
        for body in bodies {
            if found.is_some() {
                break;
            }
            let old: Vec<&str> = body
                .iter()
                .filter(|(t, _)| *t != '+')
                .map(|(_, s)| s.as_str())
                .collect();
            // `@@ -N,0` inserts after line N; otherwise the hunk starts at line N.
            let stated = if old.is_empty() {
                h.old_start
            } else {
                h.old_start.saturating_sub(1)
            };
            let stated = (stated as isize + offset).max(0) as usize;
            let fits = |at: usize| {
                at >= floor
                    && at + old.len() <= lines.len()
                    && old.iter().enumerate().all(|(j, o)| {
                        lines
                            .get(at + j)
                            .is_some_and(|l: &String| same(l.as_str(), o))
                    })
            };
            found = (0..=FUZZ_WINDOW)
                .flat_map(|d| [stated.checked_add(d), stated.checked_sub(d)])
                .flatten()
                .find(|&at| fits(at))
                .map(|at| (at, old.len(), body));
        }
        let (at, n_old, body) = found.ok_or_else(|| {
            format!(
                "hunk {} (at original line {}) does not apply: its lines are not in the file",
                k + 1,
                h.old_start
            )
        })?;
        let new: Vec<String> = body
            .iter()
            .filter(|(t, _)| *t != '-')
            .map(|(_, s)| s.clone())
            .collect();
        // First changed line of this hunk, relative to its start.
        let lead = h.lines.iter().take_while(|(t, _)| *t == ' ').count();
        if first.is_none() {
            // No earlier hunk: the position is in the original numbering.
            first = Some(((at + lead + 1).min(lines.len().max(1)), at + lead + 1));
        }
        let n_new = new.len();
        lines.splice(at..at + n_old, new);
        offset += n_new as isize - n_old as isize;
        floor = at + n_new;
    }
    let (first_old, first_new) = first.unwrap_or((1, 1));
    let mut out = lines.join("\n");
    if text.ends_with('\n') || text.is_empty() {
        out.push('\n');
    }
    Ok(Applied {
        text: out,
        first_old,
        first_new,
        hunks: hunks.len(),
    })
}

/// One mutant of a mutmut 3 instrumented module: the original program and the mutated one,
/// each with the function under its own name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutmutPair {
    /// The function's name in the user's code.
    pub function: String,
    pub original: String,
    pub mutated: String,
}

/// mutmut 3 keys look like `pkg.module.x_func__mutmut_3` (functions) or
/// `pkg.module.xǁClassǁmethod__mutmut_3` (methods). Returns (mangled stem, mutant number).
pub fn parse_mutmut_key(key: &str) -> Option<(String, String)> {
    let last = key.rsplit('.').next()?;
    let (stem, n) = last.rsplit_once("__mutmut_")?;
    if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((stem.to_string(), n.to_string()))
}

/// Rebuilds the original and the mutated program from a mutmut 3 instrumented Python module.
/// mutmut keeps each mutated function as `x_NAME__mutmut_orig` and `x_NAME__mutmut_N` next to a
/// trampoline `NAME`. Both programs get the module's own top-level code (imports, constants,
/// functions mutmut did not touch), every other `x_G__mutmut_orig` renamed back to `G`, and the
/// function under test renamed back to `NAME` (original or mutant `N`). Methods (`xǁClassǁm`)
/// are not supported: the class body would have to be rebuilt.
pub fn mutmut_pair(module: &str, key: &str) -> Result<MutmutPair, String> {
    let (stem, n) = parse_mutmut_key(key).ok_or_else(|| format!("`{key}` is not a mutmut key"))?;
    if stem.contains('ǁ') {
        return Err(format!(
            "`{key}` is a method mutant; only module-level functions are supported"
        ));
    }
    let name = stem
        .strip_prefix("x_")
        .ok_or_else(|| format!("`{key}`: unexpected mangled name"))?
        .to_string();
    let file = ParsedFile::parse(Language::Python, module.to_string());
    let root = file.tree.root_node();
    let mut cursor = root.walk();
    let mut common: Vec<String> = Vec::new();
    let mut origs: BTreeMap<String, String> = BTreeMap::new();
    let mut target_orig: Option<String> = None;
    let mut target_mut: Option<String> = None;
    let orig_name = format!("{stem}__mutmut_orig");
    let mut_name = format!("{stem}__mutmut_{n}");
    for child in root.named_children(&mut cursor) {
        let text = file.node_text(child).to_string();
        let def = if child.kind() == kind::DECORATED_DEFINITION {
            child.child_by_field_name(field::DEFINITION)
        } else {
            Some(child)
        };
        let fname = def
            .filter(|d| d.kind() == kind::FUNCTION_DEFINITION)
            .and_then(|d| d.child_by_field_name(field::NAME))
            .map(|n| file.node_text(n).to_string());
        match fname {
            Some(f) if f == orig_name => target_orig = Some(text),
            Some(f) if f == mut_name => target_mut = Some(text),
            Some(f) if f.ends_with("__mutmut_orig") => {
                let plain = f
                    .trim_end_matches("__mutmut_orig")
                    .trim_start_matches("x_")
                    .to_string();
                if !plain.contains('ǁ') {
                    origs.insert(f.clone(), text);
                }
            }
            Some(_) if text.contains("mutmut") => {} // trampolines and other mutants
            _ if text.contains("mutmut") => {}       // the mutants tables, signatures, imports
            _ => common.push(text),
        }
    }
    let orig = target_orig.ok_or_else(|| format!("`{orig_name}` not found in the module"))?;
    let muta = target_mut.ok_or_else(|| format!("`{mut_name}` not found in the module"))?;
    let rename = |def: &str, from: &str, to: &str| {
        def.replacen(&format!("def {from}("), &format!("def {to}("), 1)
    };
    let build = |target: String, from: &str| {
        let mut parts = common.clone();
        for (f, t) in &origs {
            let plain = f.trim_end_matches("__mutmut_orig").trim_start_matches("x_");
            parts.push(rename(t, f, plain));
        }
        parts.push(rename(&target, from, &name));
        parts.join("\n\n") + "\n"
    };
    Ok(MutmutPair {
        function: name.clone(),
        original: build(orig, &orig_name),
        mutated: build(muta, &mut_name),
    })
}

/// A mutation PIT reports in `mutations.xml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PitMutation {
    pub status: String,
    pub source_file: String,
    pub class: String,
    pub method: String,
    pub line: usize,
    pub mutator: String,
    pub description: String,
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn element<'a>(block: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = block.find(&open)? + open.len();
    let end = start + block.get(start..)?.find(&close)?;
    block.get(start..end)
}

fn attribute<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    for quote in ['\'', '"'] {
        let key = format!("{name}={quote}");
        if let Some(p) = head.find(&key) {
            let rest = head.get(p + key.len()..)?;
            return rest.find(quote).and_then(|e| rest.get(..e));
        }
    }
    None
}

/// Reads PIT's `mutations.xml` (the `<mutation status='...'>` elements). PIT records where and
/// how it mutated the bytecode, never the mutated source, so nothing here can be run.
pub fn parse_pit(xml: &str) -> Vec<PitMutation> {
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(p) = rest.find("<mutation ") {
        let tail = &rest[p..];
        let Some(end) = tail.find("</mutation>") else {
            break;
        };
        let block = &tail[..end];
        let head = block.split('>').next().unwrap_or("");
        let get = |t: &str| element(block, t).map(xml_unescape).unwrap_or_default();
        out.push(PitMutation {
            status: attribute(head, "status").unwrap_or("").to_string(),
            source_file: get("sourceFile"),
            class: get("mutatedClass"),
            method: get("mutatedMethod"),
            line: get("lineNumber").trim().parse().unwrap_or(0),
            mutator: get("mutator"),
            description: get("description"),
        });
        rest = &tail[end + "</mutation>".len()..];
    }
    out
}

/// Right/wrong counts of a classification run against known labels. A verdict is right on an
/// equivalent mutant when it is `equivalent`, `bounded_equivalent` or `likely_equivalent`, on a non-equivalent one
/// when it is `not_equivalent`; `unknown` is wrong on both and also counted on its own.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub eq_right: usize,
    pub eq_total: usize,
    pub neq_right: usize,
    pub neq_total: usize,
    pub unknown: usize,
    /// `equivalent` verdicts (proofs), and how many of them were on non-equivalent mutants.
    pub proved: usize,
    pub proved_wrong: usize,
}

impl Tally {
    /// Adds one labelled verdict (`verdict` is a `Verdict::name()`).
    pub fn add(&mut self, equivalent: bool, verdict: &str) {
        if verdict == "unknown" {
            self.unknown += 1;
        }
        if verdict == "equivalent" {
            self.proved += 1;
            if !equivalent {
                self.proved_wrong += 1;
            }
        }
        if equivalent {
            self.eq_total += 1;
            if matches!(
                verdict,
                "equivalent" | "bounded_equivalent" | "likely_equivalent"
            ) {
                self.eq_right += 1;
            }
        } else {
            self.neq_total += 1;
            if verdict == "not_equivalent" {
                self.neq_right += 1;
            }
        }
    }

    fn ratio(a: usize, b: usize) -> Option<f64> {
        (b > 0).then(|| a as f64 / b as f64)
    }

    pub fn total(&self) -> usize {
        self.eq_total + self.neq_total
    }
    pub fn accuracy(&self) -> Option<f64> {
        Self::ratio(self.eq_right + self.neq_right, self.total())
    }
    pub fn accuracy_equivalent(&self) -> Option<f64> {
        Self::ratio(self.eq_right, self.eq_total)
    }
    pub fn accuracy_non_equivalent(&self) -> Option<f64> {
        Self::ratio(self.neq_right, self.neq_total)
    }
    /// Gap = Acc(non-equivalent) - Acc(equivalent); positive: biased towards "not equivalent".
    pub fn decision_gap(&self) -> Option<f64> {
        Some(self.accuracy_non_equivalent()? - self.accuracy_equivalent()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "int f(int x) {\n    int y = x + 1;\n    return y;\n}\n";

    #[test]
    fn applies_a_mutantbench_hunk_without_counts() {
        let a = apply_unified_diff(
            PROGRAM,
            "@@ -2 +2 @@\n-    int y = x + 1;\n+    int y = x - 1;\n",
        )
        .unwrap();
        assert_eq!(
            a.text,
            "int f(int x) {\n    int y = x - 1;\n    return y;\n}\n"
        );
        assert_eq!((a.first_old, a.first_new, a.hunks), (2, 2, 1));
    }

    #[test]
    fn a_hunk_whose_backslashes_were_escaped_twice_still_applies() {
        // MutantBench writes `'\0'` in C as `'\\0'` in its diffs.
        let text = "int n(char *s) {\n    while (*s != '\\0') s++;\n    return 0;\n}\n";
        let d = "@@ -2 +2 @@\n-    while (*s != '\\\\0') s++;\n+    while (*s > '\\\\0') s++;\n";
        let a = apply_unified_diff(text, d).unwrap();
        assert!(a.text.contains("while (*s > '\\0') s++;"), "{}", a.text);
        // Written once, a doubled backslash is kept: the first reading that applies wins.
        let text2 = "char *q = \"\\\\\";\n";
        let a = apply_unified_diff(
            text2,
            "@@ -1 +1 @@\n-char *q = \"\\\\\";\n+char *q = \"\\\\x\";\n",
        )
        .unwrap();
        assert_eq!(a.text, "char *q = \"\\\\x\";\n");
    }

    #[test]
    fn applies_a_hunk_with_context_and_counts() {
        let d = "--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n int f(int x) {\n-    int y = x + 1;\n+    int y = x + 2;\n     return y;\n";
        let a = apply_unified_diff(PROGRAM, d).unwrap();
        assert!(a.text.contains("x + 2"));
        assert_eq!(a.first_old, 2);
    }

    #[test]
    fn finds_a_hunk_whose_line_number_is_off() {
        let a =
            apply_unified_diff(PROGRAM, "@@ -1 +1 @@\n-    return y;\n+    return -y;\n").unwrap();
        assert!(a.text.contains("return -y;"));
        assert_eq!(a.first_old, 3);
    }

    #[test]
    fn a_diff_that_does_not_apply_is_an_error() {
        let e = apply_unified_diff(PROGRAM, "@@ -2 +2 @@\n-    int z = 7;\n+    int z = 8;\n")
            .unwrap_err();
        assert!(e.contains("does not apply"), "{e}");
    }

    #[test]
    fn garbage_and_binary_diffs_are_errors() {
        assert!(apply_unified_diff(PROGRAM, "not a diff").is_err());
        assert!(apply_unified_diff(PROGRAM, "@@ -x +1 @@\n-a\n+b\n").is_err());
        assert!(apply_unified_diff(PROGRAM, "@@ -1 +1 @@\n-\0\n+b\n").is_err());
        assert!(apply_unified_diff("", "@@ -1 +1 @@\n-a\n+b\n").is_err());
    }

    #[test]
    fn insertion_hunk_goes_after_the_stated_line() {
        let a = apply_unified_diff(PROGRAM, "@@ -2,0 +3 @@\n+    y = y * 1;\n").unwrap();
        let lines: Vec<&str> = a.text.lines().collect();
        assert_eq!(lines[2], "    y = y * 1;");
    }

    const MUTMUT: &str = r#"from inspect import signature as _mutmut_signature
import math

LIMIT = 10

def _mutmut_trampoline(orig, mutants, call_args, call_kwargs, self_arg = None):
    return orig(*call_args, **call_kwargs)

def x_helper__mutmut_orig(a):
    return a * 2

def helper(*args, **kwargs):
    return _mutmut_trampoline(x_helper__mutmut_orig, {}, args, kwargs)

def x_clamp__mutmut_orig(x):
    if x > LIMIT:
        return helper(LIMIT)
    return x

def x_clamp__mutmut_1(x):
    if x >= LIMIT:
        return helper(LIMIT)
    return x

x_clamp__mutmut_mutants = {'x_clamp__mutmut_1': x_clamp__mutmut_1}

def clamp(*args, **kwargs):
    return _mutmut_trampoline(x_clamp__mutmut_orig, x_clamp__mutmut_mutants, args, kwargs)
"#;

    #[test]
    fn mutmut_pair_renames_the_function_and_keeps_helpers_and_constants() {
        let p = mutmut_pair(MUTMUT, "lib.x_clamp__mutmut_1").unwrap();
        assert_eq!(p.function, "clamp");
        assert!(p.original.contains("def clamp(x):\n    if x > LIMIT"));
        assert!(p.mutated.contains("def clamp(x):\n    if x >= LIMIT"));
        for prog in [&p.original, &p.mutated] {
            assert!(prog.contains("def helper(a):"));
            assert!(prog.contains("LIMIT = 10"));
            assert!(prog.contains("import math"));
            assert!(!prog.contains("mutmut"), "{prog}");
        }
    }

    #[test]
    fn mutmut_methods_and_missing_mutants_are_errors() {
        assert!(mutmut_pair(MUTMUT, "lib.xǁCǁm__mutmut_1").is_err());
        assert!(mutmut_pair(MUTMUT, "lib.x_clamp__mutmut_7").is_err());
        assert!(mutmut_pair(MUTMUT, "lib.clamp").is_err());
    }

    #[test]
    fn pit_survivors_are_read_with_their_location() {
        let xml = "<mutations><mutation detected='false' status='SURVIVED' numberOfTestsRun='2'><sourceFile>Calc.java</sourceFile><mutatedClass>com.x.Calc</mutatedClass><mutatedMethod>abs</mutatedMethod><methodDescription>(I)I</methodDescription><lineNumber>7</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.ConditionalsBoundaryMutator</mutator><description>changed conditional boundary &amp; more</description></mutation><mutation detected='true' status='KILLED'><sourceFile>Calc.java</sourceFile><lineNumber>9</lineNumber></mutation></mutations>";
        let m = parse_pit(xml);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].status, "SURVIVED");
        assert_eq!(m[0].method, "abs");
        assert_eq!(m[0].line, 7);
        assert_eq!(m[0].description, "changed conditional boundary & more");
        assert_eq!(m[1].status, "KILLED");
        assert!(parse_pit("<mutation status='x'>unterminated").is_empty());
    }

    #[test]
    fn tally_reports_accuracy_per_class_and_the_gap() {
        let mut t = Tally::default();
        t.add(true, "equivalent");
        t.add(true, "unknown");
        t.add(false, "not_equivalent");
        t.add(false, "likely_equivalent");
        t.add(false, "not_equivalent");
        assert_eq!(t.accuracy_equivalent(), Some(0.5));
        assert!((t.accuracy_non_equivalent().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((t.decision_gap().unwrap() - (2.0 / 3.0 - 0.5)).abs() < 1e-12);
        assert_eq!(t.accuracy(), Some(0.6));
        assert_eq!((t.unknown, t.proved, t.proved_wrong), (1, 1, 0));
        assert_eq!(Tally::default().accuracy(), None);
    }
}
