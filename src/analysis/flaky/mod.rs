//! Flaky-test root causes from static signals (issue 7).
//!
//! [`analyze_file`] finds the test functions of a Java, Python, JavaScript or TypeScript file ([`discover`]) and, for
//! each one, collects facts from its body ([`facts`]) and from its context (the class's
//! setUp/`@Before*` methods, pytest fixtures it takes as parameters, helper methods of the same
//! file it calls, up to two levels, and the class's field initialisers), fires the signal
//! table of [`rules`] and picks one of the 13 root-cause categories of the research notes,
//! or none when no signal is strong enough (no hint).
//!
//! Pure, synchronous and deterministic: no I/O, no clock; output in document order with
//! sorted evidence; iterative walks only; the [`Cancel`] flag is polled and a cancelled run
//! returns the tests analysed so far with `partial` set. Broken syntax: the functions that
//! parse are analysed.

pub mod discover;
pub mod facts;
pub mod rules;

use crate::syntax::{Cancel, Language, ParsedFile};
use serde::Serialize;
use std::collections::BTreeMap;

/// The 13 root-cause categories (research notes §1), in alphabetical order of their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    AsyncWait,
    Concurrency,
    FloatingPoint,
    Io,
    Network,
    PlatformDependency,
    Randomness,
    ResourceLeak,
    TestCaseTimeout,
    TestOrderDependency,
    Time,
    TooRestrictiveRange,
    UnorderedCollection,
}

impl Category {
    pub const ALL: [Category; 13] = [
        Category::AsyncWait,
        Category::Concurrency,
        Category::FloatingPoint,
        Category::Io,
        Category::Network,
        Category::PlatformDependency,
        Category::Randomness,
        Category::ResourceLeak,
        Category::TestCaseTimeout,
        Category::TestOrderDependency,
        Category::Time,
        Category::TooRestrictiveRange,
        Category::UnorderedCollection,
    ];

    /// The snake_case name (`async_wait`), as in the prompt's answer schema.
    pub fn name(self) -> &'static str {
        match self {
            Category::AsyncWait => "async_wait",
            Category::Concurrency => "concurrency",
            Category::FloatingPoint => "floating_point",
            Category::Io => "io",
            Category::Network => "network",
            Category::PlatformDependency => "platform_dependency",
            Category::Randomness => "randomness",
            Category::ResourceLeak => "resource_leak",
            Category::TestCaseTimeout => "test_case_timeout",
            Category::TestOrderDependency => "test_order_dependency",
            Category::Time => "time",
            Category::TooRestrictiveRange => "too_restrictive_range",
            Category::UnorderedCollection => "unordered_collection",
        }
    }

    /// Reads a category name loosely: case, spaces, `-`/`_` and a plural `s` are ignored
    /// (`"Async Wait"`, `"unordered collections"`, `"floating point operations"`, `"I_O"`).
    pub fn from_name(text: &str) -> Option<Category> {
        let squash: String = text
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let squash = squash.as_str();
        let direct = Category::ALL
            .into_iter()
            .find(|c| c.name().replace('_', "") == squash);
        direct.or(match squash {
            "asyncwait" | "async" => Some(Category::AsyncWait),
            "unorderedcollections" | "unordered" => Some(Category::UnorderedCollection),
            "floatingpointoperations" | "floatingpoint" | "float" => Some(Category::FloatingPoint),
            "io" | "inputoutput" => Some(Category::Io),
            "testorderdependency" | "orderdependency" | "testorder" => {
                Some(Category::TestOrderDependency)
            }
            "timeout" | "testcasetimeout" => Some(Category::TestCaseTimeout),
            "toorestrictiverange" => Some(Category::TooRestrictiveRange),
            "platformdependency" | "platform" => Some(Category::PlatformDependency),
            "resourceleak" => Some(Category::ResourceLeak),
            _ => None,
        })
    }

    /// One sentence: what the cause is.
    pub fn explanation(self) -> &'static str {
        match self {
            Category::AsyncWait => "The test checks the result of an asynchronous operation after a fixed delay (or none); when the operation is slower than the delay, the assertion fails.",
            Category::Concurrency => "Threads interleave in an order the test does not control (races on shared state, atomicity violations, deadlocks).",
            Category::FloatingPoint => "Floating-point results differ in their last bits (rounding, evaluation order, platform), and the test compares them exactly.",
            Category::Io => "The test depends on file-system state (fixed paths, files left behind by other runs, permissions, buffering).",
            Category::Network => "The test depends on the network: ports that may be taken, hosts that may be slow or unreachable, remote services.",
            Category::PlatformDependency => "Behaviour differs across operating systems, JVMs or locales (path separators, line endings, default charsets, number formats).",
            Category::Randomness => "The test uses random values without a fixed seed, so some runs draw values the test does not handle.",
            Category::ResourceLeak => "Resources (streams, connections, threads, off-heap memory) are not released, so later tests or runs exhaust them.",
            Category::TestCaseTimeout => "A test-level time limit is sometimes exceeded on a slow or loaded machine.",
            Category::TestOrderDependency => "The test reads or writes state that outlives it (static fields, system properties, singletons, registries), so the outcome depends on which tests ran before.",
            Category::Time => "The test depends on the current date or time (clock reads, time zones, day boundaries, daylight-saving changes).",
            Category::TooRestrictiveRange => "An assertion bounds a nondeterministic quantity (elapsed time, random values, counts) more tightly than valid runs guarantee.",
            Category::UnorderedCollection => "The test assumes an iteration order of a hash-based collection (or of JSON/reflection output built from one), which is unspecified.",
        }
    }

    /// The usual fix.
    pub fn usual_fix(self) -> &'static str {
        match self {
            Category::AsyncWait => "Wait for the condition itself (a latch, a future, Awaitility's await().until(...), polling with a deadline) instead of sleeping.",
            Category::Concurrency => "Synchronise access to shared state (locks, atomics, thread-safe collections), join or await every thread before asserting, avoid shared mutable state.",
            Category::FloatingPoint => "Compare with a tolerance: assertEquals(expected, actual, delta), closeTo, pytest.approx or math.isclose.",
            Category::Io => "Use a fresh temporary directory per test (TemporaryFolder/@TempDir, tmp_path) and clean up in a finally/tearDown.",
            Category::Network => "Use an ephemeral port (0) and read the bound port back, mock remote services, and retry or wait for readiness with a deadline.",
            Category::PlatformDependency => "Use File.separator/Path APIs, System.lineSeparator(), explicit charsets and Locale.ROOT, or normalise before comparing.",
            Category::Randomness => "Seed the generator (new Random(42), random.seed(0)) or inject it, and log the seed on failure.",
            Category::ResourceLeak => "Close resources in try-with-resources/with blocks or tearDown, and shut down executors and servers.",
            Category::TestCaseTimeout => "Raise the limit or remove it, and make the work deterministic in duration (mock slow dependencies).",
            Category::TestOrderDependency => "Reset shared state in setUp/tearDown (restore system properties, clear registries and static fields), or avoid global state.",
            Category::Time => "Inject a fixed clock (Clock.fixed, freezegun), set the time zone explicitly, and avoid assertions near day boundaries.",
            Category::TooRestrictiveRange => "Widen the bound to what every valid run satisfies, or assert on a deterministic quantity instead.",
            Category::UnorderedCollection => "Compare as sets or sort before comparing; use LinkedHashMap/TreeMap when order matters; compare JSON structurally.",
        }
    }
}

/// Analysis options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlakyOptions {
    /// Treat every named method/function as a test (for corpora of bare test bodies without
    /// annotations, such as FlakyCat).
    pub every_function_is_a_test: bool,
    /// The tests are known to be flaky (CI reruns, a quarantine list, a labelled corpus): the
    /// question is only *why*. The strongest category is reported whenever any signal fired
    /// ([`rules::KNOWN_FLAKY_MIN_SCORE`]), not only when it reaches the hint threshold
    /// [`rules::MIN_SCORE`] that protects ordinary tests from noise.
    pub known_flaky: bool,
}

/// One line of evidence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct EvidenceLine {
    pub line: usize,
    pub why: String,
}

/// One fired signal (for hovers and explanations).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    pub rule: &'static str,
    pub category: Category,
    pub weight: u32,
    pub line: usize,
    pub why: String,
    /// Found in the context (setUp, helper, fixture, field), not in the test body.
    pub context: bool,
}

/// The verdict for one test function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlakyTest {
    /// Qualified name (`Class.method`).
    pub name: String,
    /// First line of the definition (annotations included).
    pub line: usize,
    pub end_line: usize,
    /// The suspected root cause, or `None` (no hint).
    pub category: Option<Category>,
    /// Evidence for the chosen category, sorted by line.
    pub evidence: Vec<EvidenceLine>,
    /// Score per category with any signal.
    pub scores: BTreeMap<Category, u32>,
    /// Every fired signal, sorted by (category, line, rule).
    pub signals: Vec<Signal>,
}

/// The result for one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct FlakyReport {
    pub tests: Vec<FlakyTest>,
    pub errors: Vec<String>,
    /// Cancelled or capped: some tests or facts are missing.
    pub partial: bool,
}

/// The languages whose tests are discovered and analysed: Java (JUnit 4/5, TestNG), Python
/// (pytest, unittest), JavaScript and TypeScript (Jest, Mocha, Vitest, Jasmine). The one list
/// the CLI and the language server consult; the match names every language, so a new one is a
/// decision here, not a silent default.
pub fn supports(language: Language) -> bool {
    match language {
        Language::Java | Language::Python | Language::JavaScript | Language::TypeScript => true,
        Language::C | Language::Cpp | Language::Solidity => false,
    }
}

/// Analyses the tests of a Java, Python, JavaScript or TypeScript file (other languages: no
/// tests).
pub fn analyze_file(file: &ParsedFile, options: &FlakyOptions, cancel: &Cancel) -> FlakyReport {
    let mut report = FlakyReport::default();
    if !supports(file.language) {
        return report;
    }
    if file.has_errors() {
        report.errors.push(format!(
            "{} syntax error(s); tests in the parts that parse are analysed",
            file.errors.len()
        ));
    }
    let index = discover::FileIndex::new(file);
    for (i, name) in index.tests(options) {
        if cancel.is_cancelled() {
            report.partial = true;
            report.errors.push("cancelled; results are partial".into());
            break;
        }
        let t = index.test_facts(i, cancel);
        report.partial |= t.own.truncated || t.context.truncated;
        let hits = rules::fire(&t);
        let min_score = if options.known_flaky {
            rules::KNOWN_FLAKY_MIN_SCORE
        } else {
            rules::MIN_SCORE
        };
        let (scores, category) = rules::decide(&hits, min_score);
        let mut evidence: Vec<EvidenceLine> = hits
            .iter()
            .filter(|h| Some(h.rule.category) == category)
            .map(|h| EvidenceLine {
                line: h.line,
                why: if h.context {
                    format!("{} (in setup/helper code)", h.rule.why)
                } else {
                    h.rule.why.to_string()
                },
            })
            .collect();
        evidence.sort();
        evidence.dedup();
        let signals = hits
            .iter()
            .map(|h| Signal {
                rule: h.rule.id,
                category: h.rule.category,
                weight: rules::effective_weight(h),
                line: h.line,
                why: h.rule.why.to_string(),
                context: h.context,
            })
            .collect();
        let f = &index.functions[i];
        report.tests.push(FlakyTest {
            // JavaScript tests are anonymous callbacks: named by their `describe`/`it` titles.
            name: name.to_string(),
            line: f.start_line,
            end_line: f.end_line,
            category,
            evidence,
            scores,
            signals,
        });
    }
    if report.partial && !report.errors.iter().any(|e| e.contains("partial")) {
        report
            .errors
            .push("very large input: some facts were not collected; results are partial".into());
    }
    report
}

/// Parses and analyses a source text (convenience for tests and the language server).
pub fn analyze_source(
    language: Language,
    text: &str,
    options: &FlakyOptions,
    cancel: &Cancel,
) -> FlakyReport {
    let file = ParsedFile::parse_with_cancel(language, text, cancel);
    analyze_file(&file, options, cancel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_names_round_trip() {
        for c in Category::ALL {
            assert_eq!(Category::from_name(c.name()), Some(c));
        }
        assert_eq!(Category::from_name("Async Wait"), Some(Category::AsyncWait));
        assert_eq!(
            Category::from_name("unordered collections"),
            Some(Category::UnorderedCollection)
        );
        assert_eq!(
            Category::from_name("floating point operations"),
            Some(Category::FloatingPoint)
        );
        assert_eq!(Category::from_name("I_O"), Some(Category::Io));
        assert_eq!(Category::from_name("cosmic rays"), None);
    }
}
