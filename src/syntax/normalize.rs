//! The normalised AST ("Layer 1 normalisation" of the research notes, paper 000 appendix B.1).
//!
//! A tree-sitter tree is far more detailed than the AST an LLM writes down: it carries
//! punctuation, comments, parentheses, wrapper nodes (`expression_statement`, body blocks) and
//! grammar-specific node names. To compare the two, both are mapped onto one small vocabulary:
//!
//! * **15 categories** ([`Category`]): FUNCTION, BRANCH, LOOP, CALL, RETURN, ASSIGN, TRY, EXCEPT,
//!   TYPE_DECL, INTERFACE, ENUM, BLOCK, PARAM, LITERAL, IDENT. The first eight form the
//!   **backbone** ([`backbone`]), the control-flow skeleton the structure score compares.
//! * **One declarative table per language** ([`mapping_tables`]): a static slice of
//!   `(node kind, Rule)` pairs. [`Rule::Map`] emits a node of a category, [`Rule::MapIf`] does so
//!   only when the node has a given field (`int x = 1` is an assignment, `int x;` is not),
//!   [`Rule::Flatten`] removes the node but keeps its children (wrappers), [`Rule::Drop`]
//!   removes the node with its whole subtree (comments, imports, modifiers, primitive types).
//!   A key may be qualified by context: `"parameters>identifier"` applies to an `identifier`
//!   whose parent is a `parameters` node, `"arrow_function.parameter>identifier"` to one that
//!   sits in the `parameter` field of an `arrow_function`.
//! * **Defaults**: anonymous nodes (punctuation, operators, keywords) are dropped, MISSING nodes
//!   are dropped, ERROR nodes are flattened (so the parts that parse still appear), any kind
//!   containing `comment` is dropped, and every other named kind not in the table is flattened.
//!
//! Conventions of the normal form (this project's choices, shared with the LLM-answer reader):
//!
//! * Plain blocks (function bodies, `then`/`else` bodies, `{ ... }` scopes) only wrap and are
//!   always flattened; `else` and `else_clause` are flattened too, so a BRANCH's children are its
//!   condition followed by the statements of all its arms. `elif` and `else if` are nested
//!   BRANCH nodes. BLOCK is reserved for block-structured statements that are not control flow:
//!   `with`, `finally`, `synchronized`, `assembly`.
//! * `raise`/`throw`/`revert` map to EXCEPT (the exception family), like `except`/`catch`.
//! * Increments (`i++`) and declarations with an initialiser are ASSIGN.
//! * Labels: FUNCTION/TYPE_DECL/INTERFACE/ENUM carry their name (anonymous functions:
//!   `lambda`); CALL carries the callee when it is a plain (possibly qualified) name such as
//!   `print`, `self.helper` or `std::max` (generic arguments cut off), else the called member's
//!   name, else nothing; PARAM carries the parameter name; ASSIGN its operator (`=`, `+=`,
//!   `++`); BRANCH/LOOP/RETURN/TRY/EXCEPT/BLOCK the keyword (`if`, `elif`, `case`, `for`,
//!   `while`, `return`, `except`, `catch`, `with`, ...); IDENT and LITERAL their source text,
//!   clipped to [`MAX_LABEL_CHARS`]. A name consumed as a label is not repeated as an IDENT child.
//!
//! Construction is iterative (a tree cursor plus explicit stacks): input depth is unbounded
//! (a 4 MB `1+1+...` expression is two million levels deep), the output is at most
//! [`MAX_DEPTH`] levels deep (deeper nodes are attached to the deepest allowed ancestor and an
//! error is recorded) and at most `max_nodes` nodes large (then `truncated` is set). The work
//! polls a [`Cancel`] flag.

use super::cancel::Cancel;
use super::functions::Function;
use super::language::Language;
use super::parse::{ParsedFile, SourceError};
use crate::syntax::lang::{self, field, kind, CallShape};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// Output trees are at most this many levels deep (root = level 1).
pub const MAX_DEPTH: usize = 256;
/// Default cap on the number of nodes of one normalised tree.
pub const DEFAULT_MAX_NODES: usize = 50_000;
/// IDENT and LITERAL labels are clipped to this many characters.
pub const MAX_LABEL_CHARS: usize = 80;
/// At most this many errors are recorded per tree.
const MAX_ERRORS: usize = 100;

/// The 15 unified node categories. The first eight are the backbone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Category {
    Function,
    Branch,
    Loop,
    Call,
    Return,
    Assign,
    Try,
    Except,
    TypeDecl,
    Interface,
    Enum,
    Block,
    Param,
    Literal,
    Ident,
}

impl Category {
    pub const ALL: [Category; 15] = [
        Category::Function,
        Category::Branch,
        Category::Loop,
        Category::Call,
        Category::Return,
        Category::Assign,
        Category::Try,
        Category::Except,
        Category::TypeDecl,
        Category::Interface,
        Category::Enum,
        Category::Block,
        Category::Param,
        Category::Literal,
        Category::Ident,
    ];

    /// The control-flow skeleton categories kept by [`backbone`].
    pub const BACKBONE: [Category; 8] = [
        Category::Function,
        Category::Branch,
        Category::Loop,
        Category::Call,
        Category::Return,
        Category::Assign,
        Category::Try,
        Category::Except,
    ];

    pub fn is_backbone(self) -> bool {
        Self::BACKBONE.contains(&self)
    }

    /// IDENT and LITERAL nodes are leaves of the normal form.
    pub fn is_leaf(self) -> bool {
        matches!(self, Category::Ident | Category::Literal)
    }

    /// The upper-case name used in the compact text and in JSON (`TYPE_DECL`).
    pub fn name(self) -> &'static str {
        match self {
            Category::Function => "FUNCTION",
            Category::Branch => "BRANCH",
            Category::Loop => "LOOP",
            Category::Call => "CALL",
            Category::Return => "RETURN",
            Category::Assign => "ASSIGN",
            Category::Try => "TRY",
            Category::Except => "EXCEPT",
            Category::TypeDecl => "TYPE_DECL",
            Category::Interface => "INTERFACE",
            Category::Enum => "ENUM",
            Category::Block => "BLOCK",
            Category::Param => "PARAM",
            Category::Literal => "LITERAL",
            Category::Ident => "IDENT",
        }
    }

    /// Parses one of the 15 names, case-insensitively (`type_decl`, `TypeDecl` and `TYPEDECL`
    /// are all TYPE_DECL). Synonyms such as `If` are handled by the LLM-answer reader.
    pub fn from_name(name: &str) -> Option<Category> {
        let key: String = name
            .chars()
            .filter(|c| *c != '_' && *c != '-' && *c != ' ')
            .collect::<String>()
            .to_ascii_uppercase();
        Category::ALL
            .into_iter()
            .find(|c| c.name().replace('_', "") == key)
    }

    /// The keywords that name a node of this category, preferred when choosing its label.
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            Category::Branch => &[
                "if", "elif", "elsif", "elseif", "switch", "case", "default", "match", "when",
                "unless", "else",
            ],
            Category::Loop => &["for", "foreach", "while", "do", "loop", "until", "repeat"],
            Category::Return => &["return", "co_return"],
            Category::Try => &["try", "__try"],
            Category::Except => &[
                "except", "catch", "raise", "throw", "revert", "rescue", "__except",
            ],
            Category::Block => &[
                "with",
                "finally",
                "synchronized",
                "unchecked",
                "unsafe",
                "assembly",
                "using",
                "__finally",
                "else",
            ],
            _ => &[],
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One node of a normalised AST.
///
/// Trees built by this crate are at most [`MAX_DEPTH`] levels deep; every traversal in this
/// crate is iterative anyway, and dropping a tree is iterative too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NormNode {
    pub category: Category,
    /// Identifier or literal text, or the construct's keyword; may be empty.
    pub label: String,
    /// 1-based line where the node starts; 0 when unknown (e.g. an LLM answer without lines).
    pub line: usize,
    pub children: Vec<NormNode>,
}

impl Drop for NormNode {
    fn drop(&mut self) {
        // Iterative teardown: a hand-built chain of any depth must not overflow the stack.
        if self.children.iter().all(|c| c.children.is_empty()) {
            return;
        }
        let mut stack = std::mem::take(&mut self.children);
        while let Some(mut node) = stack.pop() {
            stack.append(&mut node.children);
        }
    }
}

impl NormNode {
    /// A childless node at line 0.
    pub fn leaf(category: Category, label: impl Into<String>) -> NormNode {
        NormNode {
            category,
            label: label.into(),
            line: 0,
            children: Vec::new(),
        }
    }

    /// A node at line 0 with the given children.
    pub fn with_children(
        category: Category,
        label: impl Into<String>,
        children: Vec<NormNode>,
    ) -> NormNode {
        NormNode {
            category,
            label: label.into(),
            line: 0,
            children,
        }
    }

    /// All nodes in pre-order (document order), iteratively.
    pub fn preorder(&self) -> Vec<&NormNode> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(n.children.iter().rev());
        }
        out
    }

    /// Number of nodes.
    pub fn size(&self) -> usize {
        let mut count = 0;
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            count += 1;
            stack.extend(n.children.iter());
        }
        count
    }

    /// Number of levels (a single node has depth 1).
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((n, d)) = stack.pop() {
            max = max.max(d);
            stack.extend(n.children.iter().map(|c| (c, d + 1)));
        }
        max
    }

    /// Counts of each category.
    pub fn category_counts(&self) -> BTreeMap<Category, usize> {
        let mut counts = BTreeMap::new();
        for n in self.preorder() {
            *counts.entry(n.category).or_insert(0) += 1;
        }
        counts
    }

    /// The compact S-expression form, e.g. `(FUNCTION f (PARAM a) (RETURN return (IDENT a)))`.
    ///
    /// Grammar: `node := "(" CATEGORY [label] node* ")"`; a label is written bare unless it is
    /// empty-looking or contains whitespace, parentheses, quotes or backslashes, in which case
    /// it is a double-quoted string with `\"`, `\\`, `\n`, `\r`, `\t` escapes. Empty labels are
    /// omitted. Lines are not part of the compact form.
    pub fn compact(&self) -> String {
        let mut out = String::new();
        enum Step<'a> {
            Open(&'a NormNode),
            Close,
        }
        let mut stack = vec![Step::Open(self)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Open(n) => {
                    if !out.is_empty() && !out.ends_with('(') {
                        out.push(' ');
                    }
                    out.push('(');
                    out.push_str(n.category.name());
                    if !n.label.is_empty() {
                        out.push(' ');
                        push_label(&mut out, &n.label);
                    }
                    stack.push(Step::Close);
                    for c in n.children.iter().rev() {
                        stack.push(Step::Open(c));
                    }
                }
                Step::Close => out.push(')'),
            }
        }
        out
    }

    /// The compact form over several lines: one node per line, two spaces of indentation per
    /// level; a node whose children are all leaves stays on one line.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        enum Step<'a> {
            Open(&'a NormNode, usize),
            Close,
        }
        let mut stack = vec![Step::Open(self, 0)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Open(n, indent) => {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.extend(std::iter::repeat_n(' ', indent * 2));
                    if n.children.iter().all(|c| c.children.is_empty()) {
                        out.push_str(&n.compact());
                        continue;
                    }
                    out.push('(');
                    out.push_str(n.category.name());
                    if !n.label.is_empty() {
                        out.push(' ');
                        push_label(&mut out, &n.label);
                    }
                    stack.push(Step::Close);
                    for c in n.children.iter().rev() {
                        stack.push(Step::Open(c, indent + 1));
                    }
                }
                Step::Close => out.push(')'),
            }
        }
        out
    }

    /// Parses the compact form (whitespace, including newlines, is insignificant between
    /// tokens). Category names are matched case-insensitively. Trees deeper than
    /// [`MAX_DEPTH`] are flattened at that depth.
    pub fn parse_compact(text: &str) -> Result<NormNode, String> {
        let mut tokens = CompactTokens { text, pos: 0 };
        let mut builder: Option<TreeBuilder> = None;
        let mut stack: Vec<usize> = Vec::new();
        let mut done = false;
        while let Some(tok) = tokens.next_token()? {
            if done {
                return Err(format!(
                    "unexpected text after the tree at byte {}",
                    tokens.pos
                ));
            }
            match tok {
                Tok::Open => {
                    let cat_tok = tokens.next_token()?;
                    let category = match cat_tok {
                        Some(Tok::Word(w)) => Category::from_name(&w)
                            .ok_or_else(|| format!("unknown category `{w}`"))?,
                        _ => return Err(format!("expected a category at byte {}", tokens.pos)),
                    };
                    let label = tokens.peek_label()?.unwrap_or_default();
                    match (&mut builder, stack.last()) {
                        (None, _) => {
                            builder = Some(TreeBuilder::new(category, label, 0, usize::MAX));
                            stack.push(0);
                        }
                        (Some(b), Some(&parent)) => {
                            let idx = b.add(parent, category, label, 0).unwrap_or(parent);
                            stack.push(idx);
                        }
                        (Some(_), None) => {
                            return Err("more than one tree in the text".to_string());
                        }
                    }
                }
                Tok::Close => {
                    if stack.pop().is_none() {
                        return Err(format!("unbalanced `)` at byte {}", tokens.pos));
                    }
                    if stack.is_empty() {
                        done = true;
                    }
                }
                Tok::Word(w) => {
                    return Err(format!("unexpected `{w}` at byte {}", tokens.pos));
                }
            }
        }
        if !stack.is_empty() {
            return Err("unbalanced `(`: the text ends inside a node".to_string());
        }
        builder
            .map(TreeBuilder::finish)
            .ok_or_else(|| "empty text".to_string())
    }
}

fn label_needs_quotes(label: &str) -> bool {
    label.is_empty()
        || label
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '(' | ')' | '"' | '\\'))
}

fn push_label(out: &mut String, label: &str) {
    if !label_needs_quotes(label) {
        out.push_str(label);
        return;
    }
    out.push('"');
    for c in label.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
}

enum Tok {
    Open,
    Close,
    Word(String),
}

struct CompactTokens<'a> {
    text: &'a str,
    pos: usize,
}

impl CompactTokens<'_> {
    fn skip_ws(&mut self) {
        let rest = &self.text[self.pos..];
        let trimmed = rest.trim_start();
        self.pos += rest.len() - trimmed.len();
    }

    fn next_token(&mut self) -> Result<Option<Tok>, String> {
        self.skip_ws();
        let rest = &self.text[self.pos..];
        let Some(first) = rest.chars().next() else {
            return Ok(None);
        };
        match first {
            '(' => {
                self.pos += 1;
                Ok(Some(Tok::Open))
            }
            ')' => {
                self.pos += 1;
                Ok(Some(Tok::Close))
            }
            '"' => self.quoted().map(|s| Some(Tok::Word(s))),
            _ => {
                let end = rest
                    .char_indices()
                    .find(|(_, c)| c.is_whitespace() || matches!(c, '(' | ')' | '"'))
                    .map_or(rest.len(), |(i, _)| i);
                self.pos += end;
                Ok(Some(Tok::Word(rest[..end].to_string())))
            }
        }
    }

    /// Consumes a label if the next token is a word or a quoted string.
    fn peek_label(&mut self) -> Result<Option<String>, String> {
        self.skip_ws();
        match self.text[self.pos..].chars().next() {
            None | Some('(') | Some(')') => Ok(None),
            Some(_) => match self.next_token()? {
                Some(Tok::Word(w)) => Ok(Some(w)),
                _ => Ok(None),
            },
        }
    }

    fn quoted(&mut self) -> Result<String, String> {
        let start = self.pos;
        let mut out = String::new();
        let mut chars = self.text[self.pos + 1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += 1 + i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, other)) => out.push(other),
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err(format!("unterminated string starting at byte {start}"))
    }
}

/// Builds a [`NormNode`] tree from flat appends, enforcing [`MAX_DEPTH`] and a node cap, and
/// assembling the nested value without recursion.
pub(crate) struct TreeBuilder {
    slots: Vec<Slot>,
    max_nodes: usize,
    /// Set when an append was refused because the node cap was reached.
    pub truncated: bool,
    /// Set when a node was attached higher up because of [`MAX_DEPTH`].
    pub depth_limited: bool,
}

struct Slot {
    category: Category,
    label: String,
    line: usize,
    parent: usize,
    depth: usize,
    children: Vec<usize>,
}

impl TreeBuilder {
    /// Starts a tree with its root (index 0).
    pub(crate) fn new(
        category: Category,
        label: String,
        line: usize,
        max_nodes: usize,
    ) -> TreeBuilder {
        TreeBuilder {
            slots: vec![Slot {
                category,
                label,
                line,
                parent: 0,
                depth: 1,
                children: Vec::new(),
            }],
            max_nodes: max_nodes.max(1),
            truncated: false,
            depth_limited: false,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn category(&self, idx: usize) -> Option<Category> {
        self.slots.get(idx).map(|s| s.category)
    }

    /// Appends a node under `parent` and returns its index; `None` when the cap is reached.
    /// A node that would lie deeper than [`MAX_DEPTH`] becomes a sibling of its parent.
    pub(crate) fn add(
        &mut self,
        parent: usize,
        category: Category,
        label: String,
        line: usize,
    ) -> Option<usize> {
        if self.slots.len() >= self.max_nodes {
            self.truncated = true;
            return None;
        }
        let mut parent = parent.min(self.slots.len() - 1);
        if self.slots[parent].depth >= MAX_DEPTH {
            self.depth_limited = true;
            parent = self.slots[parent].parent;
        }
        let idx = self.slots.len();
        let depth = self.slots[parent].depth + 1;
        self.slots.push(Slot {
            category,
            label,
            line,
            parent,
            depth,
            children: Vec::new(),
        });
        self.slots[parent].children.push(idx);
        Some(idx)
    }

    /// Assembles the tree. Children always have larger indices than their parents, so a
    /// reverse sweep builds every subtree before its parent needs it.
    pub(crate) fn finish(self) -> NormNode {
        let mut built: Vec<Option<NormNode>> = Vec::with_capacity(self.slots.len());
        built.resize_with(self.slots.len(), || None);
        for (i, slot) in self.slots.into_iter().enumerate().rev() {
            let children = slot
                .children
                .iter()
                .filter_map(|&c| built.get_mut(c).and_then(Option::take))
                .collect();
            built[i] = Some(NormNode {
                category: slot.category,
                label: slot.label,
                line: slot.line,
                children,
            });
        }
        built
            .into_iter()
            .next()
            .flatten()
            .unwrap_or_else(|| NormNode::leaf(Category::Block, ""))
    }
}

/// The subtree of backbone nodes (FUNCTION, BRANCH, LOOP, CALL, RETURN, ASSIGN, TRY, EXCEPT)
/// with their ancestor relations: a non-backbone node is removed and its backbone descendants
/// are attached to the nearest backbone ancestor, in document order.
///
/// The root is kept even when it is not a backbone node, except that a non-backbone root
/// wrapping exactly one top-level backbone node (a `Module` around one function) is replaced
/// by that node.
pub fn backbone(node: &NormNode) -> NormNode {
    let mut b = TreeBuilder::new(node.category, node.label.clone(), node.line, usize::MAX);
    let mut stack: Vec<(&NormNode, usize)> = node.children.iter().rev().map(|c| (c, 0)).collect();
    while let Some((n, parent)) = stack.pop() {
        let here = if n.category.is_backbone() {
            b.add(parent, n.category, n.label.clone(), n.line)
                .unwrap_or(parent)
        } else {
            parent
        };
        stack.extend(n.children.iter().rev().map(|c| (c, here)));
    }
    let mut tree = b.finish();
    if !tree.category.is_backbone() && tree.children.len() == 1 {
        if let Some(only) = tree.children.pop() {
            return only;
        }
    }
    tree
}

/// What the mapping table says about one node kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Emit a node of this category.
    Map(Category),
    /// Emit a node of this category when the node has the named field; otherwise flatten.
    MapIf(Category, &'static str),
    /// Remove the node, keep its children (the default for unlisted named kinds).
    Flatten,
    /// Remove the node and its whole subtree.
    Drop,
}

/// The declarative mapping tables: one per language, as `(node kind, rule)` pairs.
pub mod tables {
    use super::Category::*;
    use super::Rule;
    use super::Rule::*;
    use crate::syntax::lang::kind;

    /// Python (tree-sitter-python 0.25).
    pub static PYTHON: &[(&str, Rule)] = &[
        (kind::FUNCTION_DEFINITION, Map(Function)),
        (kind::LAMBDA, Map(Function)),
        (kind::CLASS_DEFINITION, Map(TypeDecl)),
        ("parameters>identifier", Map(Param)),
        ("parameters>list_splat_pattern", Map(Param)),
        ("parameters>dictionary_splat_pattern", Map(Param)),
        ("lambda_parameters>identifier", Map(Param)),
        ("lambda_parameters>list_splat_pattern", Map(Param)),
        ("lambda_parameters>dictionary_splat_pattern", Map(Param)),
        (kind::DEFAULT_PARAMETER, Map(Param)),
        (kind::TYPED_PARAMETER, Map(Param)),
        (kind::TYPED_DEFAULT_PARAMETER, Map(Param)),
        (kind::CALL, Map(Call)),
        (kind::IF_STATEMENT, Map(Branch)),
        (kind::ELIF_CLAUSE, Map(Branch)),
        (kind::CONDITIONAL_EXPRESSION, Map(Branch)),
        (kind::IF_CLAUSE, Map(Branch)),
        (kind::MATCH_STATEMENT, Map(Branch)),
        (kind::CASE_CLAUSE, Map(Branch)),
        (kind::FOR_STATEMENT, Map(Loop)),
        (kind::WHILE_STATEMENT, Map(Loop)),
        (kind::FOR_IN_CLAUSE, Map(Loop)),
        (kind::RETURN_STATEMENT, Map(Return)),
        (kind::ASSIGNMENT, Map(Assign)),
        (kind::AUGMENTED_ASSIGNMENT, Map(Assign)),
        (kind::NAMED_EXPRESSION, Map(Assign)),
        (kind::TRY_STATEMENT, Map(Try)),
        (kind::EXCEPT_CLAUSE, Map(Except)),
        (kind::RAISE_STATEMENT, Map(Except)),
        (kind::FINALLY_CLAUSE, Map(Block)),
        (kind::WITH_STATEMENT, Map(Block)),
        (kind::BLOCK, Flatten),
        (kind::ELSE_CLAUSE, Flatten),
        (kind::INTEGER, Map(Literal)),
        (kind::FLOAT, Map(Literal)),
        (kind::STRING, Map(Literal)),
        (kind::TRUE, Map(Literal)),
        (kind::FALSE, Map(Literal)),
        (kind::NONE, Map(Literal)),
        (kind::ELLIPSIS, Map(Literal)),
        (kind::IDENTIFIER, Map(Ident)),
        (kind::IMPORT_STATEMENT, Drop),
        (kind::IMPORT_FROM_STATEMENT, Drop),
        (kind::FUTURE_IMPORT_STATEMENT, Drop),
        (kind::PASS_STATEMENT, Drop),
    ];

    /// Java (tree-sitter-java 0.23).
    pub static JAVA: &[(&str, Rule)] = &[
        (kind::METHOD_DECLARATION, Map(Function)),
        (kind::CONSTRUCTOR_DECLARATION, Map(Function)),
        (kind::COMPACT_CONSTRUCTOR_DECLARATION, Map(Function)),
        (kind::LAMBDA_EXPRESSION, Map(Function)),
        (kind::CLASS_DECLARATION, Map(TypeDecl)),
        (kind::RECORD_DECLARATION, Map(TypeDecl)),
        (kind::INTERFACE_DECLARATION, Map(Interface)),
        (kind::ANNOTATION_TYPE_DECLARATION, Map(Interface)),
        (kind::ENUM_DECLARATION, Map(Enum)),
        (kind::FORMAL_PARAMETER, Map(Param)),
        (kind::SPREAD_PARAMETER, Map(Param)),
        ("inferred_parameters>identifier", Map(Param)),
        ("lambda_expression.parameters>identifier", Map(Param)),
        (kind::METHOD_INVOCATION, Map(Call)),
        (kind::OBJECT_CREATION_EXPRESSION, Map(Call)),
        (kind::EXPLICIT_CONSTRUCTOR_INVOCATION, Map(Call)),
        (kind::IF_STATEMENT, Map(Branch)),
        (kind::SWITCH_EXPRESSION, Map(Branch)),
        (kind::SWITCH_BLOCK_STATEMENT_GROUP, Map(Branch)),
        (kind::SWITCH_RULE, Map(Branch)),
        (kind::TERNARY_EXPRESSION, Map(Branch)),
        (kind::FOR_STATEMENT, Map(Loop)),
        (kind::ENHANCED_FOR_STATEMENT, Map(Loop)),
        (kind::WHILE_STATEMENT, Map(Loop)),
        (kind::DO_STATEMENT, Map(Loop)),
        (kind::RETURN_STATEMENT, Map(Return)),
        (kind::ASSIGNMENT_EXPRESSION, Map(Assign)),
        (kind::UPDATE_EXPRESSION, Map(Assign)),
        (kind::VARIABLE_DECLARATOR, MapIf(Assign, "value")),
        (kind::TRY_STATEMENT, Map(Try)),
        (kind::TRY_WITH_RESOURCES_STATEMENT, Map(Try)),
        (kind::CATCH_CLAUSE, Map(Except)),
        (kind::THROW_STATEMENT, Map(Except)),
        (kind::FINALLY_CLAUSE, Map(Block)),
        (kind::SYNCHRONIZED_STATEMENT, Map(Block)),
        (kind::BLOCK, Flatten),
        (kind::CONSTRUCTOR_BODY, Flatten),
        (kind::SWITCH_LABEL, Flatten),
        (kind::DECIMAL_INTEGER_LITERAL, Map(Literal)),
        (kind::HEX_INTEGER_LITERAL, Map(Literal)),
        (kind::OCTAL_INTEGER_LITERAL, Map(Literal)),
        (kind::BINARY_INTEGER_LITERAL, Map(Literal)),
        (kind::DECIMAL_FLOATING_POINT_LITERAL, Map(Literal)),
        (kind::HEX_FLOATING_POINT_LITERAL, Map(Literal)),
        (kind::STRING_LITERAL, Map(Literal)),
        (kind::CHARACTER_LITERAL, Map(Literal)),
        (kind::TRUE, Map(Literal)),
        (kind::FALSE, Map(Literal)),
        (kind::NULL_LITERAL, Map(Literal)),
        (kind::IDENTIFIER, Map(Ident)),
        (kind::TYPE_IDENTIFIER, Map(Ident)),
        (kind::THIS, Map(Ident)),
        (kind::SUPER, Map(Ident)),
        (kind::MODIFIERS, Drop),
        (kind::MARKER_ANNOTATION, Drop),
        (kind::ANNOTATION, Drop),
        (kind::INTEGRAL_TYPE, Drop),
        (kind::FLOATING_POINT_TYPE, Drop),
        (kind::BOOLEAN_TYPE, Drop),
        (kind::VOID_TYPE, Drop),
        (kind::TYPE_PARAMETERS, Drop),
        (kind::THROWS, Drop),
        (kind::DIMENSIONS, Drop),
        (kind::IMPORT_DECLARATION, Drop),
        (kind::PACKAGE_DECLARATION, Drop),
    ];

    /// C (tree-sitter-c 0.24); also the base of the C++ table.
    pub static C: &[(&str, Rule)] = &[
        (kind::FUNCTION_DEFINITION, Map(Function)),
        (kind::STRUCT_SPECIFIER, MapIf(TypeDecl, "body")),
        (kind::UNION_SPECIFIER, MapIf(TypeDecl, "body")),
        (kind::ENUM_SPECIFIER, MapIf(Enum, "body")),
        (kind::PARAMETER_DECLARATION, MapIf(Param, "declarator")),
        (kind::CALL_EXPRESSION, Map(Call)),
        (kind::IF_STATEMENT, Map(Branch)),
        (kind::SWITCH_STATEMENT, Map(Branch)),
        (kind::CASE_STATEMENT, Map(Branch)),
        (kind::CONDITIONAL_EXPRESSION, Map(Branch)),
        (kind::FOR_STATEMENT, Map(Loop)),
        (kind::WHILE_STATEMENT, Map(Loop)),
        (kind::DO_STATEMENT, Map(Loop)),
        (kind::RETURN_STATEMENT, Map(Return)),
        (kind::ASSIGNMENT_EXPRESSION, Map(Assign)),
        (kind::UPDATE_EXPRESSION, Map(Assign)),
        (kind::INIT_DECLARATOR, Map(Assign)),
        (kind::SEH_TRY_STATEMENT, Map(Try)),
        (kind::SEH_EXCEPT_CLAUSE, Map(Except)),
        (kind::SEH_FINALLY_CLAUSE, Map(Block)),
        (kind::COMPOUND_STATEMENT, Flatten),
        (kind::ELSE_CLAUSE, Flatten),
        (kind::NUMBER_LITERAL, Map(Literal)),
        (kind::STRING_LITERAL, Map(Literal)),
        (kind::CHAR_LITERAL, Map(Literal)),
        (kind::SYSTEM_LIB_STRING, Map(Literal)),
        (kind::TRUE, Map(Literal)),
        (kind::FALSE, Map(Literal)),
        (kind::NULL, Map(Literal)),
        (kind::IDENTIFIER, Map(Ident)),
        (kind::FIELD_IDENTIFIER, Map(Ident)),
        (kind::TYPE_IDENTIFIER, Map(Ident)),
        (kind::STATEMENT_IDENTIFIER, Map(Ident)),
        (kind::PRIMITIVE_TYPE, Drop),
        (kind::SIZED_TYPE_SPECIFIER, Drop),
        (kind::TYPE_QUALIFIER, Drop),
        (kind::STORAGE_CLASS_SPECIFIER, Drop),
        (kind::ATTRIBUTE_SPECIFIER, Drop),
        (kind::PREPROC_INCLUDE, Drop),
        (kind::PREPROC_DEF, Drop),
        (kind::PREPROC_FUNCTION_DEF, Drop),
        (kind::PREPROC_CALL, Drop),
    ];

    /// C++ additions (tree-sitter-cpp 0.23), applied on top of [`C`].
    pub static CPP_EXTRA: &[(&str, Rule)] = &[
        (kind::LAMBDA_EXPRESSION, Map(Function)),
        (kind::CLASS_SPECIFIER, MapIf(TypeDecl, "body")),
        (kind::OPTIONAL_PARAMETER_DECLARATION, Map(Param)),
        (kind::VARIADIC_PARAMETER_DECLARATION, Map(Param)),
        (kind::NEW_EXPRESSION, Map(Call)),
        (kind::FOR_RANGE_LOOP, Map(Loop)),
        (kind::CO_RETURN_STATEMENT, Map(Return)),
        (kind::FIELD_INITIALIZER, Map(Assign)),
        (kind::TRY_STATEMENT, Map(Try)),
        (kind::CATCH_CLAUSE, Map(Except)),
        (kind::THROW_STATEMENT, Map(Except)),
        (kind::NAMESPACE_DEFINITION, Flatten),
        (kind::RAW_STRING_LITERAL, Map(Literal)),
        (kind::USER_DEFINED_LITERAL, Map(Literal)),
        (kind::NAMESPACE_IDENTIFIER, Map(Ident)),
        (kind::THIS, Map(Ident)),
        (kind::PLACEHOLDER_TYPE_SPECIFIER, Drop),
        (kind::ACCESS_SPECIFIER, Drop),
        (kind::VIRTUAL_SPECIFIER, Drop),
        (kind::EXPLICIT_FUNCTION_SPECIFIER, Drop),
        (kind::TEMPLATE_PARAMETER_LIST, Drop),
        (kind::USING_DECLARATION, Drop),
        (kind::ALIAS_DECLARATION, Drop),
    ];

    /// Solidity (tree-sitter-solidity 1.2).
    pub static SOLIDITY: &[(&str, Rule)] = &[
        (kind::FUNCTION_DEFINITION, Map(Function)),
        (kind::CONSTRUCTOR_DEFINITION, Map(Function)),
        (kind::MODIFIER_DEFINITION, Map(Function)),
        (kind::FALLBACK_RECEIVE_DEFINITION, Map(Function)),
        (kind::YUL_FUNCTION_DEFINITION, Map(Function)),
        (kind::CONTRACT_DECLARATION, Map(TypeDecl)),
        (kind::LIBRARY_DECLARATION, Map(TypeDecl)),
        (kind::STRUCT_DECLARATION, Map(TypeDecl)),
        (kind::EVENT_DEFINITION, Map(TypeDecl)),
        (kind::ERROR_DECLARATION, Map(TypeDecl)),
        (kind::INTERFACE_DECLARATION, Map(Interface)),
        (kind::ENUM_DECLARATION, Map(Enum)),
        (kind::PARAMETER, Map(Param)),
        (kind::CALL_EXPRESSION, Map(Call)),
        (kind::EMIT_STATEMENT, Map(Call)),
        (kind::NEW_EXPRESSION, Map(Call)),
        (kind::MODIFIER_INVOCATION, Map(Call)),
        (kind::YUL_FUNCTION_CALL, Map(Call)),
        (kind::IF_STATEMENT, Map(Branch)),
        (kind::TERNARY_EXPRESSION, Map(Branch)),
        (kind::YUL_IF_STATEMENT, Map(Branch)),
        (kind::YUL_SWITCH_STATEMENT, Map(Branch)),
        (kind::FOR_STATEMENT, Map(Loop)),
        (kind::WHILE_STATEMENT, Map(Loop)),
        (kind::DO_WHILE_STATEMENT, Map(Loop)),
        (kind::YUL_FOR_STATEMENT, Map(Loop)),
        (kind::RETURN_STATEMENT, Map(Return)),
        (kind::ASSIGNMENT_EXPRESSION, Map(Assign)),
        (kind::AUGMENTED_ASSIGNMENT_EXPRESSION, Map(Assign)),
        (kind::UPDATE_EXPRESSION, Map(Assign)),
        (kind::VARIABLE_DECLARATION_STATEMENT, MapIf(Assign, "value")),
        (kind::YUL_ASSIGNMENT, Map(Assign)),
        (kind::TRY_STATEMENT, Map(Try)),
        (kind::CATCH_CLAUSE, Map(Except)),
        (kind::REVERT_STATEMENT, Map(Except)),
        (kind::ASSEMBLY_STATEMENT, Map(Block)),
        (kind::FUNCTION_BODY, Flatten),
        (kind::BLOCK_STATEMENT, Flatten),
        (kind::YUL_BLOCK, Flatten),
        (kind::NUMBER_LITERAL, Map(Literal)),
        (kind::STRING_LITERAL, Map(Literal)),
        (kind::BOOLEAN_LITERAL, Map(Literal)),
        (kind::HEX_STRING_LITERAL, Map(Literal)),
        (kind::UNICODE_STRING_LITERAL, Map(Literal)),
        (kind::YUL_DECIMAL_NUMBER, Map(Literal)),
        (kind::YUL_HEX_NUMBER, Map(Literal)),
        (kind::YUL_STRING_LITERAL, Map(Literal)),
        (kind::YUL_BOOLEAN, Map(Literal)),
        (kind::IDENTIFIER, Map(Ident)),
        (kind::YUL_IDENTIFIER, Map(Ident)),
        (kind::PRIMITIVE_TYPE, Drop),
        (kind::VISIBILITY, Drop),
        (kind::STATE_MUTABILITY, Drop),
        (kind::STATE_LOCATION, Drop),
        (kind::VIRTUAL, Drop),
        (kind::OVERRIDE_SPECIFIER, Drop),
        (kind::RETURN_TYPE_DEFINITION, Drop),
        (kind::PRAGMA_DIRECTIVE, Drop),
        (kind::IMPORT_DIRECTIVE, Drop),
    ];

    /// JavaScript (tree-sitter-javascript 0.25) and TypeScript/TSX (tree-sitter-typescript 0.23).
    pub static JAVASCRIPT: &[(&str, Rule)] = &[
        (kind::FUNCTION_DECLARATION, Map(Function)),
        (kind::FUNCTION_EXPRESSION, Map(Function)),
        (kind::GENERATOR_FUNCTION_DECLARATION, Map(Function)),
        (kind::GENERATOR_FUNCTION, Map(Function)),
        (kind::ARROW_FUNCTION, Map(Function)),
        (kind::METHOD_DEFINITION, Map(Function)),
        (kind::CLASS_DECLARATION, Map(TypeDecl)),
        (kind::CLASS, Map(TypeDecl)),
        (kind::ABSTRACT_CLASS_DECLARATION, Map(TypeDecl)),
        (kind::TYPE_ALIAS_DECLARATION, Map(TypeDecl)),
        (kind::INTERFACE_DECLARATION, Map(Interface)),
        (kind::ENUM_DECLARATION, Map(Enum)),
        ("formal_parameters>identifier", Map(Param)),
        ("formal_parameters>assignment_pattern", Map(Param)),
        ("formal_parameters>rest_pattern", Map(Param)),
        ("arrow_function.parameter>identifier", Map(Param)),
        (kind::REQUIRED_PARAMETER, Map(Param)),
        (kind::OPTIONAL_PARAMETER, Map(Param)),
        (kind::CALL_EXPRESSION, Map(Call)),
        (kind::NEW_EXPRESSION, Map(Call)),
        (kind::IF_STATEMENT, Map(Branch)),
        (kind::SWITCH_STATEMENT, Map(Branch)),
        (kind::SWITCH_CASE, Map(Branch)),
        (kind::SWITCH_DEFAULT, Map(Branch)),
        (kind::TERNARY_EXPRESSION, Map(Branch)),
        (kind::FOR_STATEMENT, Map(Loop)),
        (kind::FOR_IN_STATEMENT, Map(Loop)),
        (kind::WHILE_STATEMENT, Map(Loop)),
        (kind::DO_STATEMENT, Map(Loop)),
        (kind::RETURN_STATEMENT, Map(Return)),
        (kind::ASSIGNMENT_EXPRESSION, Map(Assign)),
        (kind::AUGMENTED_ASSIGNMENT_EXPRESSION, Map(Assign)),
        (kind::UPDATE_EXPRESSION, Map(Assign)),
        (kind::VARIABLE_DECLARATOR, MapIf(Assign, "value")),
        (kind::TRY_STATEMENT, Map(Try)),
        (kind::CATCH_CLAUSE, Map(Except)),
        (kind::THROW_STATEMENT, Map(Except)),
        (kind::FINALLY_CLAUSE, Map(Block)),
        (kind::WITH_STATEMENT, Map(Block)),
        (kind::STATEMENT_BLOCK, Flatten),
        (kind::ELSE_CLAUSE, Flatten),
        (kind::SWITCH_BODY, Flatten),
        (kind::NUMBER, Map(Literal)),
        (kind::STRING, Map(Literal)),
        (kind::TEMPLATE_STRING, Map(Literal)),
        (kind::REGEX, Map(Literal)),
        (kind::TRUE, Map(Literal)),
        (kind::FALSE, Map(Literal)),
        (kind::NULL, Map(Literal)),
        (kind::UNDEFINED, Map(Literal)),
        (kind::IDENTIFIER, Map(Ident)),
        (kind::PROPERTY_IDENTIFIER, Map(Ident)),
        (kind::SHORTHAND_PROPERTY_IDENTIFIER, Map(Ident)),
        (kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN, Map(Ident)),
        (kind::PRIVATE_PROPERTY_IDENTIFIER, Map(Ident)),
        (kind::TYPE_IDENTIFIER, Map(Ident)),
        (kind::THIS, Map(Ident)),
        (kind::SUPER, Map(Ident)),
        (kind::IMPORT_STATEMENT, Drop),
        (kind::PREDEFINED_TYPE, Drop),
        (kind::ACCESSIBILITY_MODIFIER, Drop),
        (kind::OVERRIDE_MODIFIER, Drop),
        (kind::TYPE_PARAMETERS, Drop),
    ];
}

/// The mapping tables of a language, applied in order (a later entry for the same key wins).
pub fn mapping_tables(lang: Language) -> &'static [&'static [(&'static str, Rule)]] {
    type Table = &'static [(&'static str, Rule)];
    static PYTHON: [Table; 1] = [tables::PYTHON];
    static JAVA: [Table; 1] = [tables::JAVA];
    static C: [Table; 1] = [tables::C];
    static CPP: [Table; 2] = [tables::C, tables::CPP_EXTRA];
    static SOLIDITY: [Table; 1] = [tables::SOLIDITY];
    static JAVASCRIPT: [Table; 1] = [tables::JAVASCRIPT];
    match lang {
        Language::Python => &PYTHON,
        Language::Java => &JAVA,
        Language::C => &C,
        Language::Cpp => &CPP,
        Language::Solidity => &SOLIDITY,
        Language::JavaScript | Language::TypeScript => &JAVASCRIPT,
    }
}

/// The tables compiled into lookup maps. Keys: (parent kind, field, kind) with "" for "any".
struct Lookup {
    plain: BTreeMap<&'static str, Rule>,
    contextual: BTreeMap<(&'static str, &'static str, &'static str), Rule>,
    contextual_kinds: BTreeSet<&'static str>,
}

impl Lookup {
    fn new(lang: Language) -> Lookup {
        let mut lookup = Lookup {
            plain: BTreeMap::new(),
            contextual: BTreeMap::new(),
            contextual_kinds: BTreeSet::new(),
        };
        for table in mapping_tables(lang) {
            for &(key, rule) in table.iter() {
                match key.split_once('>') {
                    Some((ctx, kind)) => {
                        let (parent, field) = ctx.split_once('.').unwrap_or((ctx, ""));
                        lookup.contextual.insert((parent, field, kind), rule);
                        lookup.contextual_kinds.insert(kind);
                    }
                    None => {
                        lookup.plain.insert(key, rule);
                    }
                }
            }
        }
        lookup
    }

    fn rule(&self, kind: &str, parent: Option<&'static str>, field: Option<&'static str>) -> Rule {
        if let Some(parent) = parent {
            if self.contextual_kinds.contains(kind) {
                if let Some(field) = field {
                    if let Some(r) = self.contextual.get(&(parent, field, kind)) {
                        return *r;
                    }
                }
                if let Some(r) = self.contextual.get(&(parent, "", kind)) {
                    return *r;
                }
            }
        }
        if let Some(r) = self.plain.get(kind) {
            return *r;
        }
        if kind.contains(kind::COMMENT) {
            Rule::Drop
        } else {
            Rule::Flatten
        }
    }
}

/// A normalised tree with its bookkeeping.
#[derive(Debug, Clone, Serialize)]
pub struct NormTree {
    pub root: NormNode,
    pub node_count: usize,
    /// True when the node cap stopped construction (or it was cancelled); the tree is a prefix
    /// in document order.
    pub truncated: bool,
    /// Syntax errors inside the normalised region, the depth limit, the node cap, cancellation.
    pub errors: Vec<SourceError>,
}

/// Normalises one function (its whole definition; nested functions and lambdas appear as
/// FUNCTION subtrees). An anonymous function takes the name `collect_functions` gave it when
/// that is a real name (`const f = () => ...` is `f`).
pub fn normalize_function(file: &ParsedFile, func: &Function<'_>, cancel: &Cancel) -> NormTree {
    let mut tree = normalize_node_with(file, func.node, DEFAULT_MAX_NODES, cancel);
    if tree.root.category == Category::Function
        && tree.root.label == "lambda"
        && !func.simple_name.starts_with('<')
    {
        tree.root.label = func.simple_name.clone();
    }
    tree
}

/// Normalises any node (a whole file, a class, a statement) with the default node cap. A root
/// that maps to no category becomes a BLOCK with an empty label.
pub fn normalize_node(file: &ParsedFile, node: Node<'_>, cancel: &Cancel) -> NormTree {
    normalize_node_with(file, node, DEFAULT_MAX_NODES, cancel)
}

/// What to do with one node during the walk.
enum Action {
    Skip,
    Flatten,
    Emit(Category),
}

/// Normalises a node with an explicit node cap.
pub fn normalize_node_with(
    file: &ParsedFile,
    node: Node<'_>,
    max_nodes: usize,
    cancel: &Cancel,
) -> NormTree {
    let lookup = Lookup::new(file.language);
    let grammar = file.tree.language();
    let mut errors: Vec<SourceError> = Vec::new();
    let mut skip: BTreeSet<usize> = BTreeSet::new();

    let root_line = file.line_of(node.start_byte());
    let root_action = classify(&lookup, node, None, None);
    let (mut b, root_leaf) = match root_action {
        Action::Emit(cat) => {
            let (label, skips) = label_for(file, node, cat);
            skip.extend(skips);
            (
                TreeBuilder::new(cat, label, root_line, max_nodes),
                cat.is_leaf(),
            )
        }
        Action::Flatten | Action::Skip => (
            TreeBuilder::new(Category::Block, String::new(), root_line, max_nodes),
            matches!(root_action, Action::Skip),
        ),
    };
    if node.is_error() {
        note(&mut errors, root_line, "syntax error".to_string());
    }

    // out: (input depth of the emitting node, builder index); ancestors: kind ids by depth.
    let mut out: Vec<(usize, usize)> = vec![(0, 0)];
    let mut ancestors: Vec<u16> = vec![node.kind_id()];
    let mut cursor = node.walk();
    let mut steps = 0usize;
    let mut cancelled = false;
    if !root_leaf && cursor.goto_first_child() {
        let mut depth = 1usize;
        'walk: loop {
            steps += 1;
            if steps.is_multiple_of(1024) && cancel.is_cancelled() {
                cancelled = true;
                break 'walk;
            }
            let n = cursor.node();
            while out.len() > 1 && out.last().is_some_and(|&(d, _)| d >= depth) {
                out.pop();
            }
            ancestors.truncate(depth);
            let parent_kind = ancestors
                .last()
                .and_then(|&id| grammar.node_kind_for_id(id));
            let action = if skip.contains(&n.id()) {
                Action::Skip
            } else {
                classify(&lookup, n, parent_kind, cursor.field_name())
            };
            if n.is_error() {
                note(
                    &mut errors,
                    file.line_of(n.start_byte()),
                    "syntax error".to_string(),
                );
            }
            let mut descend = false;
            match action {
                Action::Skip => {}
                Action::Flatten => descend = true,
                Action::Emit(cat) => {
                    let parent = out.last().map_or(0, |&(_, i)| i);
                    let (label, skips) = label_for(file, n, cat);
                    match b.add(parent, cat, label, file.line_of(n.start_byte())) {
                        None => break 'walk,
                        Some(idx) => {
                            skip.extend(skips);
                            if !cat.is_leaf() {
                                out.push((depth, idx));
                                descend = true;
                            }
                        }
                    }
                }
            }
            if descend && cursor.goto_first_child() {
                ancestors.push(n.kind_id());
                depth += 1;
                continue 'walk;
            }
            loop {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                depth -= 1;
                if depth == 0 {
                    break 'walk;
                }
            }
        }
    }
    if b.depth_limited {
        note(
            &mut errors,
            root_line,
            format!("nesting deeper than {MAX_DEPTH} levels was flattened"),
        );
    }
    if b.truncated {
        note(
            &mut errors,
            root_line,
            format!("normalised tree truncated at {max_nodes} nodes"),
        );
    }
    if cancelled {
        note(
            &mut errors,
            0,
            "normalisation was cancelled; the tree is partial".to_string(),
        );
    }
    let truncated = b.truncated || cancelled;
    let node_count = b.len();
    NormTree {
        root: b.finish(),
        node_count,
        truncated,
        errors,
    }
}

fn note(errors: &mut Vec<SourceError>, line: usize, message: String) {
    if errors.len() < MAX_ERRORS {
        errors.push(SourceError { line, message });
    }
}

fn classify(
    lookup: &Lookup,
    n: Node<'_>,
    parent_kind: Option<&'static str>,
    field: Option<&'static str>,
) -> Action {
    if n.is_missing() || !n.is_named() {
        return Action::Skip;
    }
    if n.is_error() {
        return Action::Flatten;
    }
    match lookup.rule(n.kind(), parent_kind, field) {
        Rule::Map(c) => Action::Emit(c),
        Rule::MapIf(c, f) => {
            if n.child_by_field_name(f).is_some() {
                Action::Emit(c)
            } else {
                Action::Flatten
            }
        }
        Rule::Flatten => Action::Flatten,
        Rule::Drop => Action::Skip,
    }
}

/// Clips a label to [`MAX_LABEL_CHARS`] characters (on a character boundary).
fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_LABEL_CHARS) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

fn named_children(n: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor).collect()
}

fn all_children(n: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = n.walk();
    n.children(&mut cursor).collect()
}

fn is_identifier_kind(kind: &str) -> bool {
    kind.ends_with(kind::IDENTIFIER) || kind == kind::THIS || kind == kind::SUPER
}

/// A callee written as a plain, possibly qualified, name (`print`, `a.b`, `ns::f`, `p->m`),
/// with generic arguments cut off and whitespace removed.
fn callee_name(text: &str) -> Option<String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let head = compact.split('<').next().unwrap_or("");
    let ok = !head.is_empty()
        && head.chars().count() <= MAX_LABEL_CHARS
        && head
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':' | '-' | '>'))
        && head.chars().next().is_some_and(|c| !c.is_ascii_digit());
    ok.then(|| head.to_string())
}

/// The label of an emitted node and the ids of child nodes consumed by it.
fn label_for(file: &ParsedFile, n: Node<'_>, cat: Category) -> (String, Vec<usize>) {
    match cat {
        Category::Ident | Category::Literal => (clip(file.node_text(n)), Vec::new()),
        Category::Function => function_label(file, n),
        Category::TypeDecl | Category::Interface | Category::Enum => {
            match n.child_by_field_name(field::NAME) {
                Some(name) => (clip(file.node_text(name)), vec![name.id()]),
                None => (String::new(), Vec::new()),
            }
        }
        Category::Call => call_label(file, n),
        Category::Param => match declared_name(n) {
            Some(id) => (clip(file.node_text(id)), vec![id.id()]),
            None => (String::new(), Vec::new()),
        },
        Category::Assign => (assign_label(file, n), Vec::new()),
        Category::Branch
        | Category::Loop
        | Category::Return
        | Category::Try
        | Category::Except
        | Category::Block => (keyword_label(file, n, cat), Vec::new()),
    }
}

fn function_label(file: &ParsedFile, n: Node<'_>) -> (String, Vec<usize>) {
    if let Some(name) = n.child_by_field_name(field::NAME) {
        return (clip(file.node_text(name)), vec![name.id()]);
    }
    // C/C++: the name sits inside (pointer/reference/...) declarators.
    let mut decl = n.child_by_field_name(field::DECLARATOR);
    for _ in 0..64 {
        let Some(d) = decl else { break };
        match d.kind() {
            kind::FUNCTION_DECLARATOR => {
                if let Some(name) = d.child_by_field_name(field::DECLARATOR) {
                    let text: String = file
                        .node_text(name)
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .collect();
                    return (clip(&text), vec![name.id()]);
                }
                break;
            }
            kind::POINTER_DECLARATOR
            | kind::REFERENCE_DECLARATOR
            | kind::PARENTHESIZED_DECLARATOR
            | kind::ATTRIBUTED_DECLARATOR => {
                decl = d
                    .child_by_field_name(field::DECLARATOR)
                    .or_else(|| named_children(d).into_iter().last());
            }
            _ => break,
        }
    }
    match n.kind() {
        kind::CONSTRUCTOR_DEFINITION => ("constructor".to_string(), Vec::new()),
        kind::FALLBACK_RECEIVE_DEFINITION => {
            let kw = all_children(n)
                .into_iter()
                .map(|c| file.node_text(c))
                .find(|t| *t == "fallback" || *t == "receive")
                .unwrap_or("fallback");
            (kw.to_string(), Vec::new())
        }
        _ => ("lambda".to_string(), Vec::new()),
    }
}

fn call_label(file: &ParsedFile, n: Node<'_>) -> (String, Vec<usize>) {
    let call = lang::spec(file.language).call(n);
    // Java `obj.method(...)`: object and name fields.
    if let Some(c) = call.filter(|c| c.shape == CallShape::Method) {
        if let Some(name) = c.name {
            if let Some(obj) = c.receiver {
                let span = file
                    .text
                    .get(obj.start_byte()..name.end_byte())
                    .unwrap_or("");
                if let Some(label) = callee_name(span) {
                    return (label, vec![obj.id(), name.id()]);
                }
            }
            return (clip(file.node_text(name)), vec![name.id()]);
        }
    }
    // The callee, the type of a `new`, `this`/`super` of a constructor call; for nodes the
    // language's spec takes for no call (Solidity `new`, `emit`), the first of these fields.
    let callee = call
        .map(|c| c.function)
        .or_else(|| {
            [
                field::FUNCTION,
                field::CONSTRUCTOR,
                field::NAME,
                field::TYPE,
            ]
            .iter()
            .find_map(|f| n.child_by_field_name(f))
        })
        .or_else(|| {
            named_children(n)
                .into_iter()
                .next()
                .filter(|c| is_identifier_kind(c.kind()))
        });
    let Some(mut callee) = callee else {
        return (String::new(), Vec::new());
    };
    // Unwrap transparent wrappers such as Solidity's `expression` around the real callee.
    for _ in 0..16 {
        let kids = named_children(callee);
        match kids.as_slice() {
            [only] if only.byte_range() == callee.byte_range() => callee = *only,
            _ => break,
        }
    }
    if let Some(label) = callee_name(file.node_text(callee)) {
        return (label, vec![callee.id()]);
    }
    // `a.b().c(...)`: name the call after its member, keep the receiver as children.
    for field in [field::ATTRIBUTE, field::PROPERTY, field::FIELD, field::NAME] {
        if let Some(member) = callee.child_by_field_name(field) {
            if let Some(label) = callee_name(file.node_text(member)) {
                return (label, vec![member.id()]);
            }
        }
    }
    (String::new(), Vec::new())
}

/// The identifier a parameter declares, drilling through declarators, patterns and defaults.
fn declared_name(n: Node<'_>) -> Option<Node<'_>> {
    let mut node = n;
    for _ in 0..32 {
        if is_identifier_kind(node.kind()) {
            return Some(node);
        }
        node = [field::NAME, field::DECLARATOR, field::PATTERN, field::LEFT]
            .iter()
            .find_map(|f| node.child_by_field_name(f))
            .or_else(|| {
                named_children(node).into_iter().find(|c| {
                    let k = c.kind();
                    k == kind::IDENTIFIER
                        || k.ends_with(kind::_DECLARATOR)
                        || k.ends_with("_pattern")
                })
            })?;
    }
    None
}

fn assign_label(file: &ParsedFile, n: Node<'_>) -> String {
    if let Some(op) = n.child_by_field_name(field::OPERATOR) {
        return file.node_text(op).to_string();
    }
    all_children(n)
        .into_iter()
        .filter(|c| !c.is_named())
        .map(|c| file.node_text(c))
        .find(|t| t.ends_with('=') || *t == "++" || *t == "--")
        .unwrap_or("=")
        .to_string()
}

/// The keyword of a control construct: the first anonymous token among the node's children
/// (then its first named child's children) that is one of the category's keywords; else the
/// first alphabetic anonymous child; else the first anonymous child; else nothing.
fn keyword_label(file: &ParsedFile, n: Node<'_>, cat: Category) -> String {
    let direct: Vec<Node<'_>> = all_children(n);
    let mut candidates: Vec<&str> = direct
        .iter()
        .filter(|c| !c.is_named())
        .map(|c| file.node_text(*c))
        .collect();
    let level1 = candidates.len();
    if let Some(first_named) = direct.iter().find(|c| c.is_named()) {
        candidates.extend(
            all_children(*first_named)
                .into_iter()
                .filter(|c| !c.is_named())
                .map(|c| file.node_text(c)),
        );
    }
    let keywords = cat.keywords();
    if let Some(k) = candidates.iter().find(|t| keywords.contains(t)) {
        return (*k).to_string();
    }
    let level1 = &candidates[..level1];
    level1
        .iter()
        .find(|t| !t.is_empty() && t.chars().all(|c| c.is_alphabetic() || c == '_'))
        .or_else(|| level1.first())
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::functions::collect_functions;

    fn norm(lang: Language, src: &str) -> String {
        let file = ParsedFile::parse(lang, src);
        let funcs = collect_functions(&file);
        let f = funcs.first().expect("a function");
        normalize_function(&file, f, &Cancel::never())
            .root
            .compact()
    }

    #[test]
    fn category_names_round_trip_case_insensitively() {
        for c in Category::ALL {
            assert_eq!(Category::from_name(c.name()), Some(c));
            assert_eq!(Category::from_name(&c.name().to_lowercase()), Some(c));
        }
        assert_eq!(Category::from_name("TypeDecl"), Some(Category::TypeDecl));
        assert_eq!(Category::from_name("If"), None);
        assert_eq!(Category::BACKBONE.len(), 8);
        assert!(Category::BACKBONE.iter().all(|c| c.is_backbone()));
        assert!(!Category::Block.is_backbone());
    }

    #[test]
    fn category_serialises_as_upper_snake_case() {
        let n = NormNode::leaf(Category::TypeDecl, "Point");
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(
            json,
            r#"{"category":"TYPE_DECL","label":"Point","line":0,"children":[]}"#
        );
    }

    #[test]
    fn python_function_drops_punctuation_and_flattens_wrappers() {
        let src = "def f(a, b=2):\n    # comment\n    x = (a + b)\n    return x\n";
        assert_eq!(
            norm(Language::Python, src),
            "(FUNCTION f (PARAM a) (PARAM b (LITERAL 2)) (ASSIGN = (IDENT x) (IDENT a) (IDENT b)) (RETURN return (IDENT x)))"
        );
    }

    #[test]
    fn contextual_rule_distinguishes_lambda_parameter_from_body() {
        // Java `x -> x + 1`: the first x is a PARAM (parameters field), the second an IDENT.
        let src = "class A { void m() { f(x -> x + 1); } }";
        assert_eq!(
            norm(Language::Java, src),
            "(FUNCTION m (CALL f (FUNCTION lambda (PARAM x) (IDENT x) (LITERAL 1))))"
        );
    }

    #[test]
    fn compact_text_round_trips_including_quoted_labels() {
        let tree = NormNode::with_children(
            Category::Function,
            "f",
            vec![
                NormNode::leaf(Category::Literal, "\"a b\""),
                NormNode::leaf(Category::Literal, "x\\(y)\n"),
                NormNode::leaf(Category::Return, ""),
            ],
        );
        let text = tree.compact();
        assert_eq!(
            text,
            r#"(FUNCTION f (LITERAL "\"a b\"") (LITERAL "x\\(y)\n") (RETURN))"#
        );
        assert_eq!(NormNode::parse_compact(&text).unwrap(), tree);
        assert_eq!(NormNode::parse_compact(&tree.pretty()).unwrap(), tree);
    }

    #[test]
    fn compact_parser_rejects_malformed_text() {
        for bad in [
            "",
            "(",
            "(FUNCTION f",
            "FUNCTION)",
            "(NOPE x)",
            "(FUNCTION) (FUNCTION)",
            "(LITERAL \"open)",
            "((FUNCTION))",
        ] {
            assert!(NormNode::parse_compact(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn backbone_keeps_control_nodes_and_their_ancestry() {
        let tree = NormNode::parse_compact(
            "(FUNCTION f (PARAM a) (BLOCK with (CALL open (IDENT p)) (BRANCH if (IDENT a) (RETURN return (LITERAL 1)))))",
        )
        .unwrap();
        assert_eq!(
            backbone(&tree).compact(),
            "(FUNCTION f (CALL open) (BRANCH if (RETURN return)))"
        );
        // A non-backbone wrapper of a single backbone node is replaced by it.
        let module = NormNode::parse_compact("(BLOCK (FUNCTION f (IDENT x)))").unwrap();
        assert_eq!(backbone(&module).compact(), "(FUNCTION f)");
        let two = NormNode::parse_compact("(BLOCK (FUNCTION f) (FUNCTION g))").unwrap();
        assert_eq!(
            backbone(&two).compact(),
            "(BLOCK (FUNCTION f) (FUNCTION g))"
        );
    }

    #[test]
    fn builder_caps_depth_and_size() {
        let mut b = TreeBuilder::new(Category::Call, "f".into(), 0, usize::MAX);
        let mut parent = 0;
        for _ in 0..1000 {
            parent = b.add(parent, Category::Call, "f".into(), 0).unwrap();
        }
        assert!(b.depth_limited);
        let t = b.finish();
        assert_eq!(t.depth(), MAX_DEPTH);
        assert_eq!(t.size(), 1001);

        let mut b = TreeBuilder::new(Category::Block, String::new(), 0, 3);
        assert!(b.add(0, Category::Ident, "a".into(), 0).is_some());
        assert!(b.add(0, Category::Ident, "b".into(), 0).is_some());
        assert!(b.add(0, Category::Ident, "c".into(), 0).is_none());
        assert!(b.truncated);
    }

    #[test]
    fn dropping_a_very_deep_hand_built_chain_does_not_overflow() {
        let mut node = NormNode::leaf(Category::Ident, "x");
        for _ in 0..200_000 {
            node = NormNode::with_children(Category::Call, "f", vec![node]);
        }
        assert_eq!(node.depth(), 200_001);
        assert_eq!(backbone(&node).depth(), MAX_DEPTH);
        drop(node);
    }
}
