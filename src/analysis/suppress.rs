//! Inline suppressions: a comment `crosscheck: ignore[rule, ...]` (or `ignore[*]`) on a
//! finding's line or the line above silences it. One implementation for the CLI (`check`) and
//! the language server (diagnostics and the "Suppress" code action).

use crate::syntax::position::LineIndex;
use crate::syntax::Language;

const MARKER: &str = "crosscheck: ignore[";

/// Rule ids listed by a suppression comment on one line of text.
pub fn suppressions_on(line: &str) -> Vec<String> {
    let Some(at) = line.find(MARKER) else {
        return Vec::new();
    };
    let before = &line[..at];
    if !(before.contains('#') || before.contains("//") || before.contains("/*")) {
        return Vec::new();
    }
    let rest = &line[at + MARKER.len()..];
    let Some(close) = rest.find(']') else {
        return Vec::new();
    };
    rest[..close]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// True when a suppression comment on the finding's line or the line above names its rule.
pub fn is_suppressed(text: &str, lines: &LineIndex, rule: &str, line_1based: usize) -> bool {
    let mut candidates = vec![line_1based];
    if line_1based > 1 {
        candidates.push(line_1based - 1);
    }
    candidates.into_iter().any(|l| {
        suppressions_on(lines.line_text(text, l))
            .iter()
            .any(|id| id == rule || id == "*")
    })
}

/// The comment the "Suppress" code action inserts above a line with the given indentation.
pub fn suppression_comment(lang: Option<Language>, rule: &str, indent: &str) -> String {
    let leader = match lang {
        Some(Language::Python) => "#",
        _ => "//",
    };
    format!("{indent}{leader} {MARKER}{rule}]\n")
}

/// The leading whitespace of a 1-based line.
pub fn indentation_of(text: &str, lines: &LineIndex, line_1based: usize) -> String {
    lines
        .line_text(text, line_1based)
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppression_needs_a_comment_leader_and_lists_rules() {
        assert_eq!(
            suppressions_on("x = 1  # crosscheck: ignore[a, b]"),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(suppressions_on("s = 'crosscheck: ignore[a]'").is_empty());
        assert!(suppressions_on("// crosscheck: ignore[a").is_empty());
    }

    #[test]
    fn a_suppression_covers_its_line_and_the_next() {
        let text = "a()\r\n# crosscheck: ignore[r1]\r\nb()\nc()\n";
        let lines = LineIndex::new(text);
        assert!(!is_suppressed(text, &lines, "r1", 1));
        assert!(is_suppressed(text, &lines, "r1", 2));
        assert!(is_suppressed(text, &lines, "r1", 3));
        assert!(!is_suppressed(text, &lines, "r2", 3));
        assert!(!is_suppressed(text, &lines, "r1", 4));
        assert!(!is_suppressed(text, &lines, "r1", 99));
        assert_eq!(
            indentation_of("  \tx\n", &LineIndex::new("  \tx\n"), 1),
            "  \t"
        );
    }
}
