//! Function-name normalisation for call-graph comparison (paper 000, appendix B.3; this
//! project's operationalisation).
//!
//! # Tokenisation ([`tokens`])
//!
//! 1. Generic arguments and parameter lists are dropped: everything inside `<...>`, `(...)`
//!    and `[...]` (`List<String>.add(int)` gives `List.add`; nested brackets are balanced;
//!    an unbalanced opener drops the rest).
//! 2. The name is split at qualifiers and punctuation (`.`, `::`, `->`, `/`, `#`, `$`,
//!    spaces, ...), then at snake_case underscores, camelCase humps (`parseHTTPHeader` gives
//!    `parse`, `http`, `header`) and letter/digit boundaries; tokens are lower-cased.
//! 3. Receiver words `self`, `this`, `cls`, `super` and the empty/ordinal tokens left by
//!    compiler-generated names (`1` in `Lambda$1`) are dropped.
//! 4. Synonym families map to one representative: `print`, `println`, `printf`, `format` →
//!    `print`; `init`, `initialize`, `setup`, `constructor`, `ctor` → `init` (so Python's
//!    `__init__` and Java's `<init>` agree with them); `length`, `size`, `len` → `size`.
//! 5. Lambda grouping (variant keys): a name containing a lambda marker (`lambda`,
//!    `<lambda@12>`, `Lambda$1.apply`, `anonymous`, `<anonymous>`, `arrow`, `closure`) keeps
//!    only the tokens before the marker followed by the single token `lambda`, so
//!    `Foo.<lambda@3>`, `Foo.lambda$0` and `Foo$Lambda$2.apply` all become `foo lambda`.
//!
//! # Similarity ([`similarity`])
//!
//! For token sequences `A` and `B` (both non-empty):
//!
//! ```text
//! sim(A, B) = 1                                   if A = B
//!           = max(J, 0.9)                          if the last two tokens agree (|A|, |B| ≥ 2)
//!           = max(J, 0.8)                          if the last tokens agree
//!           = J = |set(A) ∩ set(B)| / |set(A) ∪ set(B)|   otherwise
//! ```
//!
//! Two names match when `sim ≥ τ` (the call-graph scorer's `match_threshold`, default 0.8:
//! at least the method name must agree).
//!
//! *Worked example.* `com.shop.Cart.addItem` gives `com shop cart add item`; `cart.add_item`
//! gives `cart add item`: the last two tokens (`add item`) agree, J = 3/5 = 0.6, so
//! sim = 0.9. `self.render` (`render`) against `Report.render` (`report render`): last token
//! agrees, J = 1/2, sim = 0.8. `System.out.println` against `print`: the synonym family makes
//! both end in `print`, sim = 0.8. `save` against `load`: J = 0, sim = 0.

/// Receiver words dropped from qualified names.
const RECEIVERS: [&str; 4] = ["self", "this", "cls", "super"];

/// Synonym families: every listed token maps to the first of its family.
const SYNONYMS: [&[&str]; 3] = [
    &["print", "println", "printf", "format"],
    &["init", "initialize", "setup", "constructor", "ctor"],
    &["size", "length", "len"],
];

/// Markers of anonymous functions in a token sequence.
const LAMBDA_MARKERS: [&str; 5] = ["lambda", "anonymous", "arrow", "closure", "anon"];

/// Longest name considered (longer names are cut first).
const MAX_NAME_CHARS: usize = 512;

/// The normalised token sequence of a function name (see the module docs).
pub fn tokens(name: &str) -> Vec<String> {
    let name: String = name.chars().take(MAX_NAME_CHARS).collect();
    let stripped = strip_brackets(&name);
    let mut out: Vec<String> = Vec::new();
    for part in stripped.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        for word in part.split('_') {
            for t in split_camel(word) {
                out.push(t);
            }
        }
    }
    out.retain(|t| {
        !t.is_empty() && !RECEIVERS.contains(&t.as_str()) && !t.chars().all(|c| c.is_ascii_digit())
    });
    for t in out.iter_mut() {
        if let Some(family) = SYNONYMS.iter().find(|f| f.contains(&t.as_str())) {
            *t = family[0].to_string();
        }
    }
    if let Some(pos) = out
        .iter()
        .position(|t| LAMBDA_MARKERS.contains(&t.as_str()))
    {
        out.truncate(pos);
        out.push("lambda".to_string());
    }
    out
}

/// The token sequence joined by spaces: the variant key two names share when they are the
/// same after normalisation.
pub fn key(name: &str) -> String {
    tokens(name).join(" ")
}

/// Drops `<...>`, `(...)` and `[...]` contents, balancing nesting. `<lambda@3>` keeps its
/// inside (a marker, not a generic argument) because it starts with a letter run that is a
/// lambda marker.
fn strip_brackets(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '<' if depth == 0 && marker_follows(&chars, i + 1) => {
                // `<lambda@12>` / `<anonymous>`: keep the word, drop the rest.
                out.push(' ');
                let mut j = i + 1;
                while let Some(&d) = chars.get(j) {
                    if !d.is_alphabetic() {
                        break;
                    }
                    out.push(d);
                    j += 1;
                }
                while let Some(&d) = chars.get(j) {
                    j += 1;
                    if d == '>' {
                        break;
                    }
                }
                out.push(' ');
                i = j;
                continue;
            }
            '<' if depth == 0 && chars.get(i + 1).is_some_and(|n| *n == 'i') && {
                // `<init>` / `<clinit>`
                let rest: String = chars.iter().skip(i + 1).take(5).collect();
                rest.starts_with("init>")
            } =>
            {
                out.push_str(" init ");
                i += 6;
                continue;
            }
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => {
                if depth > 0 {
                    depth -= 1;
                } else if c == '>' {
                    // `->` qualifier or a stray `>`: a separator.
                    out.push(' ');
                }
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        i += 1;
    }
    out
}

fn marker_follows(chars: &[char], from: usize) -> bool {
    let word: String = chars
        .iter()
        .skip(from)
        .take_while(|c| c.is_alphabetic())
        .flat_map(|c| c.to_lowercase())
        .collect();
    LAMBDA_MARKERS.contains(&word.as_str())
}

/// `parseHTTPHeader2x` gives `parse`, `http`, `header`, `2`, `x`.
fn split_camel(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = if i > 0 {
            chars.get(i - 1).copied()
        } else {
            None
        };
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) => {
                (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() && c.is_ascii_digit())
                    || (p.is_ascii_digit() && c.is_alphabetic())
                    || (p.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(char::is_lowercase))
            }
            None => false,
        };
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Similarity of two token sequences (see the module docs); 0 when either is empty.
pub fn similarity(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    let sa: std::collections::BTreeSet<&String> = a.iter().collect();
    let sb: std::collections::BTreeSet<&String> = b.iter().collect();
    let inter = sa.intersection(&sb).count();
    let union = sa.union(&sb).count().max(1);
    let j = inter as f64 / union as f64;
    let last_two = a.len() >= 2 && b.len() >= 2 && a[a.len() - 2..] == b[b.len() - 2..];
    if last_two {
        return j.max(0.9);
    }
    if a.last() == b.last() {
        return j.max(0.8);
    }
    j
}

/// Similarity of two names (tokenised first).
pub fn name_similarity(a: &str, b: &str) -> f64 {
    similarity(&tokens(a), &tokens(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<String> {
        tokens(s)
    }

    #[test]
    fn tokenisation_splits_qualifiers_cases_and_drops_signatures() {
        assert_eq!(
            t("com.shop.Cart.addItem"),
            ["com", "shop", "cart", "add", "item"]
        );
        assert_eq!(t("cart.add_item"), ["cart", "add", "item"]);
        assert_eq!(
            t("ns::Parser::parseHTTPHeader"),
            ["ns", "parser", "parse", "http", "header"]
        );
        assert_eq!(t("List<String>.add(int, String)"), ["list", "add"]);
        assert_eq!(t("self.render"), ["render"]);
        assert_eq!(t("this->run"), ["run"]);
        assert_eq!(t("Foo[bar].baz"), ["foo", "baz"]);
        assert_eq!(t(""), Vec::<String>::new());
        assert_eq!(t("((("), Vec::<String>::new());
    }

    #[test]
    fn synonym_families_share_one_token() {
        assert_eq!(t("System.out.println"), ["system", "out", "print"]);
        assert_eq!(t("printf"), ["print"]);
        assert_eq!(t("String.format"), ["string", "print"]);
        assert_eq!(t("Foo.__init__"), ["foo", "init"]);
        assert_eq!(t("Foo.<init>"), ["foo", "init"]);
        assert_eq!(t("Widget.setup"), ["widget", "init"]);
        assert_eq!(t("Widget.initialize"), ["widget", "init"]);
        assert_eq!(t("items.length"), ["items", "size"]);
        assert_eq!(t("len"), ["size"]);
    }

    #[test]
    fn lambda_variants_group() {
        assert_eq!(key("Foo.<lambda@3>"), "foo lambda");
        assert_eq!(key("Foo.lambda$0"), "foo lambda");
        assert_eq!(key("Foo$Lambda$2.apply"), "foo lambda");
        assert_eq!(key("<anonymous>"), "lambda");
        assert_eq!(key("main.<lambda@12>"), key("main.<lambda@40>"));
    }

    #[test]
    fn similarity_worked_examples() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(
            name_similarity("com.shop.Cart.addItem", "cart.add_item"),
            0.9
        ));
        assert!(close(name_similarity("self.render", "Report.render"), 0.8));
        assert!(close(name_similarity("System.out.println", "print"), 0.8));
        assert!(close(name_similarity("save", "load"), 0.0));
        assert!(close(name_similarity("helper", "helper"), 1.0));
        // Plain Jaccard when the ends differ: {a, b} vs {b, c}.
        assert!(close(name_similarity("a.b", "b.c"), 1.0 / 3.0));
        assert_eq!(name_similarity("", "x"), 0.0);
    }
}
