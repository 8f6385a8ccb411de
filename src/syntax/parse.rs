//! Parsing with tree-sitter: source validation, error regions, and incremental reparsing.

use super::cancel::Cancel;
use super::functions::Function;
use super::language::Language;
use super::position::{ColumnEncoding, LineCol, LineIndex};
use serde::Serialize;
use std::collections::BTreeSet;
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

/// Default ceiling on a file's size; larger files are refused with a per-file error.
pub const DEFAULT_MAX_FILE_BYTES: usize = 16 * 1024 * 1024;
/// At most this many syntax-error regions are reported per file.
pub const MAX_REPORTED_ERRORS: usize = 100;

/// A problem with one file: unreadable, binary, not UTF-8, too large, or syntax errors.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SourceError {
    /// 1-based line, 0 when the error concerns the whole file.
    pub line: usize,
    pub message: String,
}

/// A part of a file that did not parse: an ERROR node (lines `line..=end_line` not parsed)
/// or a MISSING token the parser assumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxErrorRegion {
    /// 1-based first line.
    pub line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// The kind of the token that is missing, for a MISSING node.
    pub missing: Option<String>,
}

impl SyntaxErrorRegion {
    /// The message `analyze` reports (`syntax error`, `syntax error (lines 3-9 not parsed)`,
    /// ``syntax error: missing `;` ``).
    pub fn message(&self) -> String {
        match &self.missing {
            Some(kind) => format!("syntax error: missing `{kind}`"),
            None if self.end_line > self.line => {
                format!(
                    "syntax error (lines {}-{} not parsed)",
                    self.line, self.end_line
                )
            }
            None => "syntax error".to_string(),
        }
    }
}

/// Why a file could not be turned into text for parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    Binary,
    NotUtf8 { byte_offset: usize, line: usize },
    TooLarge { bytes: usize, limit: usize },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Binary => write!(f, "binary file (contains NUL bytes); not analysed"),
            DecodeError::NotUtf8 { byte_offset, line } => write!(
                f,
                "not valid UTF-8 (first invalid byte at offset {byte_offset}, line {line}); not analysed"
            ),
            DecodeError::TooLarge { bytes, limit } => {
                write!(f, "file is {bytes} bytes, over the {limit}-byte limit; not analysed")
            }
        }
    }
}

/// Validates raw bytes as analysable source text.
pub fn decode_source(bytes: &[u8], max_bytes: usize) -> Result<&str, DecodeError> {
    if bytes.len() > max_bytes {
        return Err(DecodeError::TooLarge {
            bytes: bytes.len(),
            limit: max_bytes,
        });
    }
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Err(DecodeError::Binary);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            if s.contains('\0') {
                Err(DecodeError::Binary)
            } else {
                Ok(s)
            }
        }
        Err(e) => {
            let off = e.valid_up_to();
            let line = bytes[..off].iter().filter(|&&b| b == b'\n').count() + 1;
            Err(DecodeError::NotUtf8 {
                byte_offset: off,
                line,
            })
        }
    }
}

/// One parsed source file. Owns its text and tree; byte offsets index into `text`.
pub struct ParsedFile {
    pub language: Language,
    pub text: String,
    pub tree: Tree,
    pub lines: LineIndex,
    /// Syntax-error regions (ERROR and MISSING nodes), in document order.
    pub errors: Vec<SourceError>,
    /// True when parsing stopped early (cancelled); the tree is then absent-or-partial.
    pub cancelled: bool,
    /// True when the last edit was checked by parsing only the top-level item it lies in
    /// (the edited old tree was the new parse; see `syntax::splice`).
    pub item_reparse: bool,
    /// Per-file facts computed at most once per parse (see [`ParsedFile::imported_names`]).
    imports: std::sync::OnceLock<BTreeSet<String>>,
    /// The file's functions, found at most once per parse (see [`ParsedFile::functions`]).
    functions: std::sync::OnceLock<FunctionCell>,
}

/// The functions of a parse, borrowing the nodes of a copy of its tree (a tree-sitter tree
/// copy shares the syntax nodes; it only adds a reference). Owning the copy keeps the cell
/// valid whatever later happens to the `ParsedFile`'s own `tree` field.
type FunctionList<'t> = Vec<Function<'t>>;

self_cell::self_cell!(
    struct FunctionCell {
        owner: Tree,
        #[covariant]
        dependent: FunctionList,
    }
);

impl Clone for ParsedFile {
    fn clone(&self) -> Self {
        ParsedFile {
            language: self.language,
            text: self.text.clone(),
            tree: self.tree.clone(),
            lines: self.lines.clone(),
            errors: self.errors.clone(),
            cancelled: self.cancelled,
            item_reparse: self.item_reparse,
            imports: self.imports.clone(),
            // The copy's functions are found again on first use (they would borrow the
            // original's tree copy).
            functions: std::sync::OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for ParsedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParsedFile")
            .field("language", &self.language)
            .field("bytes", &self.text.len())
            .field("errors", &self.errors)
            .finish()
    }
}

fn new_parser(language: Language) -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .expect("bundled grammars are ABI compatible (checked by tests)");
    parser
}

fn run_parser(
    parser: &mut Parser,
    text: &str,
    old: Option<&Tree>,
    cancel: &Cancel,
) -> Option<Tree> {
    let bytes = text.as_bytes();
    let mut progress = |_: &tree_sitter::ParseState| {
        // Returning true asks tree-sitter to stop.
        cancel.is_cancelled()
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    parser.parse_with_options(
        &mut |i, _| if i < bytes.len() { &bytes[i..] } else { &[] },
        old,
        Some(options),
    )
}

impl ParsedFile {
    /// Parses a text. Never panics; syntax errors are collected in `errors`.
    pub fn parse(language: Language, text: impl Into<String>) -> ParsedFile {
        Self::parse_with_cancel(language, text, &Cancel::never())
    }

    pub fn parse_with_cancel(
        language: Language,
        text: impl Into<String>,
        cancel: &Cancel,
    ) -> ParsedFile {
        let text = text.into();
        let mut parser = new_parser(language);
        let tree = run_parser(&mut parser, &text, None, cancel);
        Self::from_tree(language, text, tree)
    }

    fn from_tree(language: Language, text: String, tree: Option<Tree>) -> ParsedFile {
        let lines = LineIndex::new(&text);
        let (tree, cancelled) = match tree {
            Some(t) => (t, false),
            None => {
                // Cancelled: keep an empty tree so callers still have a valid value.
                let mut p = new_parser(language);
                (p.parse("", None).expect("empty parse succeeds"), true)
            }
        };
        let mut file = ParsedFile {
            language,
            text,
            tree,
            lines,
            errors: Vec::new(),
            cancelled,
            item_reparse: false,
            imports: std::sync::OnceLock::new(),
            functions: std::sync::OnceLock::new(),
        };
        file.errors = file.collect_errors();
        if cancelled {
            file.errors.push(SourceError {
                line: 0,
                message: "parsing was cancelled; results are partial".into(),
            });
        }
        file
    }

    /// Applies one edit (replace `start..old_end` bytes by `new_text`) and reparses
    /// incrementally, reusing the old tree. Out-of-range or non-boundary offsets are clamped
    /// to character boundaries.
    pub fn edit(&mut self, start: usize, old_end: usize, new_text: &str) {
        let clamp = |t: &str, mut o: usize| {
            o = o.min(t.len());
            while !t.is_char_boundary(o) {
                o -= 1;
            }
            o
        };
        let start = clamp(&self.text, start);
        let old_end = clamp(&self.text, old_end.max(start));
        let start_position = self.point_at(start);
        let old_end_position = self.point_at(old_end);
        let mut text = String::with_capacity(self.text.len() + new_text.len());
        text.push_str(&self.text[..start]);
        text.push_str(new_text);
        text.push_str(&self.text[old_end..]);
        let new_end = start + new_text.len();
        // Where the inserted text ends, from the start position and the text itself (the new
        // text's line index is built once, by `from_tree`).
        let new_end_position = match new_text.rfind('\n') {
            Some(last) => Point::new(
                start_position.row + new_text.matches('\n').count(),
                new_text.len() - last - 1,
            ),
            None => Point::new(start_position.row, start_position.column + new_text.len()),
        };
        self.tree.edit(&InputEdit {
            start_byte: start,
            old_end_byte: old_end,
            new_end_byte: new_end,
            start_position,
            old_end_position,
            new_end_position,
        });
        let mut parser = new_parser(self.language);
        // An edit inside one top-level item, checked by parsing that item alone: the edited
        // tree is then the new parse (see `splice`), at the cost of the item, not the file.
        if !self.cancelled
            && super::splice::edited_tree_is_parse(
                self.language,
                &mut parser,
                &text,
                &self.tree,
                start,
                new_end,
            )
        {
            let tree = self.tree.clone();
            *self = Self::from_tree(self.language, text, Some(tree));
            self.item_reparse = true;
            return;
        }
        let old = if self.cancelled {
            None
        } else {
            Some(&self.tree)
        };
        let tree = run_parser(&mut parser, &text, old, &Cancel::never());
        // Error recovery depends on the old tree: an incremental reparse that ends with errors
        // can differ from a fresh parse of the same text (a different ERROR region, a node
        // kept from before the edit). A tree with errors is therefore rebuilt from scratch, so
        // the result of any sequence of edits is the fresh parse of its text whenever either
        // could differ.
        let tree = match tree {
            Some(t) if t.root_node().has_error() => {
                run_parser(&mut parser, &text, None, &Cancel::never()).or(Some(t))
            }
            other => other,
        };
        *self = Self::from_tree(self.language, text, tree);
    }

    fn point_at(&self, offset: usize) -> Point {
        let lc = self
            .lines
            .to_line_col(&self.text, offset, ColumnEncoding::Utf8);
        Point::new(lc.line as usize, lc.col as usize)
    }

    /// Names bound by the file's top-level imports (Python and Java), computed on first use
    /// and kept for the life of this parse.
    pub fn imported_names(&self) -> &BTreeSet<String> {
        self.imports
            .get_or_init(|| super::imports::imported_names(self))
    }

    /// Every function of the file in document order, found on first use and kept for the
    /// life of this parse (every analysis of the parse shares one list).
    pub fn functions(&self) -> &[Function<'_>] {
        self.functions
            .get_or_init(|| {
                FunctionCell::new(self.tree.clone(), |tree| {
                    super::functions::find_functions(self, tree.root_node())
                })
            })
            .borrow_dependent()
    }

    pub fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }

    /// The text of a node.
    pub fn node_text(&self, node: Node<'_>) -> &str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.lines.line_of(offset) + 1
    }

    /// Line/column of a byte offset in the requested encoding.
    pub fn position(&self, offset: usize, enc: ColumnEncoding) -> LineCol {
        self.lines.to_line_col(&self.text, offset, enc)
    }

    pub fn has_errors(&self) -> bool {
        self.root().has_error() || self.cancelled
    }

    /// Feeds `state` the shape of the subtree under `node`: every node's kind, field name,
    /// whether it is an ERROR or MISSING node, and its byte range relative to `node`. Two
    /// subtrees with the same text and shape are the same tree: error recovery can shape the
    /// same text differently, and this tells them apart. Iterative, linear in the subtree.
    pub fn hash_shape<H: std::hash::Hasher>(&self, node: Node<'_>, h: &mut H) {
        use std::hash::Hash;
        let base = node.start_byte();
        let mut cursor = node.walk();
        let mut depth = 0usize;
        loop {
            let n = cursor.node();
            (
                depth,
                n.kind_id(),
                cursor.field_id(),
                n.is_error(),
                n.is_missing(),
                n.start_byte() - base,
                n.end_byte() - base,
            )
                .hash(h);
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                cursor.goto_parent();
                depth -= 1;
            }
        }
    }

    /// Every ERROR and MISSING node of the tree, nested ones included (where
    /// [`ParsedFile::syntax_error_regions`] counts outermost regions: a file whose root is an
    /// ERROR node is one region however much of it parsed). Iterative.
    pub fn error_nodes(&self) -> usize {
        let root = self.root();
        if !root.has_error() {
            return 0;
        }
        let mut n = 0;
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if node.is_error() || node.is_missing() {
                n += 1;
            }
            if node.has_error() {
                let mut c = node.walk();
                stack.extend(node.children(&mut c));
            }
        }
        n
    }

    /// The regions that did not parse (ERROR nodes) and the tokens the parser had to assume
    /// (MISSING nodes), in document order, at most [`MAX_REPORTED_ERRORS`] of them, with the
    /// total count. Iterative (no recursion: safe on deep trees).
    pub fn syntax_error_regions(&self) -> (Vec<SyntaxErrorRegion>, usize) {
        let mut out = Vec::new();
        let root = self.root();
        if !root.has_error() {
            return (out, 0);
        }
        let mut cursor = root.walk();
        let mut total = 0usize;
        'walk: loop {
            let node = cursor.node();
            let mut descend = node.has_error();
            if node.is_error() || node.is_missing() {
                total += 1;
                if out.len() < MAX_REPORTED_ERRORS {
                    out.push(SyntaxErrorRegion {
                        line: self.line_of(node.start_byte()),
                        end_line: self.line_of(node.end_byte()),
                        missing: node.is_missing().then(|| node.kind().to_string()),
                    });
                }
                descend = false;
            }
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        (out, total)
    }

    /// The syntax errors as messages, one per region, plus a count of those not listed.
    fn collect_errors(&self) -> Vec<SourceError> {
        let (regions, total) = self.syntax_error_regions();
        let mut out: Vec<SourceError> = regions
            .iter()
            .map(|r| SourceError {
                line: r.line,
                message: r.message(),
            })
            .collect();
        if total > out.len() {
            out.push(SourceError {
                line: 0,
                message: format!("{} more syntax errors not listed", total - out.len()),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_error_regions_and_keeps_parsing() {
        let f = ParsedFile::parse(
            Language::Python,
            "def ok():\n    return 1\n\ndef bad(:\n    pass\n",
        );
        assert!(f.has_errors());
        assert!(!f.errors.is_empty());
        assert!(
            f.errors.iter().all(|e| e.line >= 4 || e.line == 0),
            "{:?}",
            f.errors
        );
    }

    #[test]
    fn refuses_binary_non_utf8_and_oversized_input() {
        assert_eq!(decode_source(b"a\0b", 100), Err(DecodeError::Binary));
        assert_eq!(
            decode_source(b"x = 1\ny = '\xe9'\n", 100),
            Err(DecodeError::NotUtf8 {
                byte_offset: 11,
                line: 2
            })
        );
        assert!(matches!(
            decode_source(&[b'a'; 10], 5),
            Err(DecodeError::TooLarge { .. })
        ));
        assert_eq!(decode_source(b"", 5), Ok(""));
    }

    #[test]
    fn incremental_edit_matches_fresh_parse() {
        let mut f = ParsedFile::parse(Language::C, "int f(int a) { return a; }\n");
        let at = f.text.find("return a").unwrap() + "return ".len();
        f.edit(at, at + 1, "a + 1");
        let fresh = ParsedFile::parse(Language::C, f.text.clone());
        assert_eq!(f.text, "int f(int a) { return a + 1; }\n");
        assert_eq!(f.root().to_sexp(), fresh.root().to_sexp());
        // Clamped, out-of-range edit does not panic.
        f.edit(10_000, 20_000, "\n// tail");
        assert!(f.text.ends_with("// tail"));
    }

    #[test]
    fn cancelled_parse_yields_partial_result() {
        let cancel = Cancel::new();
        cancel.cancel();
        let big = "x = 1\n".repeat(50_000);
        let f = ParsedFile::parse_with_cancel(Language::Python, big, &cancel);
        assert!(f.cancelled);
        assert!(f.errors.iter().any(|e| e.message.contains("cancelled")));
    }

    /// Random edit scripts (inserts, deletions, replacements with bracket and keyword pieces)
    /// over small programs: after every edit the tree and its error regions equal a fresh parse
    /// of the same text. Error recovery is where incremental and fresh parses part ways.
    #[test]
    fn random_edit_sequences_always_equal_a_fresh_parse() {
        let programs = [
            (
                Language::Java,
                "class A {\n  int f(int x) {\n    switch (x) {\n      case 1: return 2;\n      case 2: { int y = x; return y; }\n      default: return 3;\n    }\n  }\n  void g() { for (int i = 0; i < 3; i++) { f(i); } }\n}\n",
                &[
                    "switch (x) {", "case 2:", "}", "{", ";", "break;", "default:", "int y = 1", ")",
                    "\n", "(", "case 3: return 4;", "x", "->", "yield 1;",
                ][..],
            ),
            (
                Language::Python,
                "def f(a):\n    if a:\n        return 1\n    for i in a:\n        pass\n    return a\n",
                &["def g(", ":", "\n    ", "(", ")", "else:", "x = [", "]", "'", "\n"][..],
            ),
            (
                Language::C,
                "int f(int a) {\n  switch (a) {\n  case 1: return 2;\n  }\n  return a;\n}\n",
                &["{", "}", "case 3:", ";", "#if X\n", "#endif\n", "(", "int *p = ", "\n"][..],
            ),
        ];
        for (lang, base, pieces) in programs {
            for seed in 1..=8u64 {
                let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                let mut next = |n: usize| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % n.max(1) as u64) as usize
                };
                let mut f = ParsedFile::parse(lang, base);
                for step in 0..300 {
                    let len = f.text.len();
                    let a = next(len + 1);
                    let b = (a + if next(3) == 0 { next(8) } else { 0 }).min(len);
                    let piece = if next(4) == 0 {
                        ""
                    } else {
                        pieces[next(pieces.len())]
                    };
                    f.edit(a, b, piece);
                    let fresh = ParsedFile::parse(lang, f.text.clone());
                    assert_eq!(
                        (f.root().to_sexp(), &f.errors),
                        (fresh.root().to_sexp(), &fresh.errors),
                        "{lang:?} seed {seed} step {step}, text:\n{}",
                        f.text
                    );
                }
            }
        }
    }
}
