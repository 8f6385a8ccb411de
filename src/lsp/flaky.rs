//! Flaky-test hints in the editor: the deterministic flaky-test analysis
//! (`analysis::flaky`) on an open document, shaped for code lenses, hovers and code actions.
//!
//! The server shows only the static verdict (tier `analyzer-only`): tests with no signal get
//! no hint, and nothing the LLM could say creates one (the CLI's `crosscheck flaky` asks the
//! LLM as a second opinion; an LLM-only category is never a hint there either).

use crate::analysis::flaky::{analyze_file, Category, FlakyOptions, FlakyTest};
use crate::crosscheck::record::Tier;
use crate::syntax::{Cancel, ParsedFile};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

/// The tier of every hint the server shows: static evidence, no LLM agreement asked for.
pub const HINT_TIER: Tier = Tier::AnalyzerOnly;

/// Tests of a Java, Python, JavaScript or TypeScript document with a suspected root cause, in line order.
pub fn suspected(parsed: &ParsedFile, cancel: &Cancel) -> Vec<FlakyTest> {
    if !crate::analysis::flaky::supports(parsed.language) {
        return Vec::new();
    }
    let mut tests: Vec<FlakyTest> = analyze_file(parsed, &FlakyOptions::default(), cancel)
        .tests
        .into_iter()
        .filter(|t| t.category.is_some())
        .collect();
    tests.sort_by_key(|t| t.line);
    tests
}

/// A parse (weakly held) and the hints computed from it.
type HintEntry = (Weak<ParsedFile>, Arc<Vec<FlakyTest>>);

/// Hints per document, computed once per parse: every edit produces a new parse, so the parse's
/// identity is the version key. Code lens, hover, code action and the explain command share
/// one analysis instead of re-running it per request. Holds only a weak reference to the
/// parse (an old version is freed when the document moves on; while the weak reference lives
/// the allocation is not reused, so a pointer match cannot be a different parse).
#[derive(Default)]
pub struct HintCache {
    entries: Mutex<BTreeMap<String, HintEntry>>,
}

impl HintCache {
    /// The suspected tests of `uri` at this parse, computed on first use.
    pub fn get(&self, uri: &str, parsed: &Arc<ParsedFile>) -> Arc<Vec<FlakyTest>> {
        if let Some((weak, tests)) = self
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(uri)
        {
            if std::ptr::eq(weak.as_ptr(), Arc::as_ptr(parsed)) {
                return Arc::clone(tests);
            }
        }
        let tests = Arc::new(suspected(parsed, &Cancel::never()));
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                uri.to_string(),
                (Arc::downgrade(parsed), Arc::clone(&tests)),
            );
        tests
    }

    /// Drops a closed document's entry.
    pub fn forget(&self, uri: &str) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uri);
    }
}

/// The test whose definition spans 1-based `line`, if it has a suspected cause.
pub fn at_line(tests: &[FlakyTest], line: usize) -> Option<&FlakyTest> {
    crate::syntax::functions::innermost(tests, line, |t| (t.line, t.end_line))
}

/// The code lens title: `flaky? <category> (analyzer-only)`.
pub fn lens_title(t: &FlakyTest) -> String {
    format!(
        "flaky? {} ({})",
        t.category.map(Category::name).unwrap_or("unknown"),
        HINT_TIER.name()
    )
}

/// Markdown for a hover: the category, its tier and the evidence lines.
pub fn hover_markdown(t: &FlakyTest) -> String {
    let Some(c) = t.category else {
        return String::new();
    };
    let mut md = format!(
        "**Flaky test?** suspected root cause `{}` (tier: {})\n\n",
        c.name(),
        HINT_TIER.name()
    );
    for e in &t.evidence {
        md.push_str(&format!("- line {}: {}\n", e.line, e.why));
    }
    md
}

/// The explanation a command returns: cause, usual fix and evidence.
pub fn explanation(t: &FlakyTest) -> Value {
    let c = t.category;
    json!({
        "test": t.name,
        "line": t.line,
        "category": c.map(Category::name),
        "tier": HINT_TIER.name(),
        "explanation": c.map(Category::explanation),
        "usual_fix": c.map(Category::usual_fix),
        "evidence": t.evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Language;

    const PY: &str = "import time\n\n\ndef test_eventually_ready():\n    start_job()\n    time.sleep(2)\n    assert job_done()\n\n\ndef test_sum():\n    assert 1 + 1 == 2\n";

    #[test]
    fn a_sleep_before_an_assertion_is_a_hint_and_a_plain_test_is_not() {
        let parsed = ParsedFile::parse(Language::Python, PY.to_string());
        let tests = suspected(&parsed, &Cancel::never());
        assert_eq!(tests.len(), 1, "{tests:?}");
        assert_eq!(tests[0].name, "test_eventually_ready");
        assert!(lens_title(&tests[0]).starts_with("flaky? "));
        assert!(lens_title(&tests[0]).ends_with("(analyzer-only)"));
        assert!(at_line(&tests, 6).is_some());
        assert!(at_line(&tests, 11).is_none());
        assert!(hover_markdown(&tests[0]).contains("line 6"));
    }

    #[test]
    fn other_languages_get_no_hints() {
        let parsed = ParsedFile::parse(Language::C, "void test_x(void) { sleep(1); }".to_string());
        assert!(suspected(&parsed, &Cancel::never()).is_empty());
    }

    #[test]
    fn hints_are_computed_once_per_parse() {
        let cache = HintCache::default();
        let text =
            "import time\n\ndef test_waits():\n    start()\n    time.sleep(2)\n    assert done()\n";
        let parsed = Arc::new(ParsedFile::parse(Language::Python, text.to_string()));
        let first = cache.get("file:///t.py", &parsed);
        assert_eq!(first.len(), 1);
        assert!(Arc::ptr_eq(&first, &cache.get("file:///t.py", &parsed)));
        // A new parse (an edit) is analysed again, even with the same text.
        let edited = Arc::new(ParsedFile::parse(Language::Python, text.to_string()));
        let second = cache.get("file:///t.py", &edited);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(*first, *second);
        cache.forget("file:///t.py");
        assert!(!Arc::ptr_eq(&second, &cache.get("file:///t.py", &edited)));
    }
}
