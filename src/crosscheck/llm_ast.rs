//! Reading an LLM's AST answer (JSON) into the normalised AST ([`NormNode`]).
//!
//! LLMs write ASTs in many dialects: Python's `ast` module (`FunctionDef`, `If`, `Call` with
//! `func`/`args`/`body`/`orelse`), ESTree (`IfStatement`, `CallExpression`), tree-sitter-like
//! snake case (`if_statement`), Clang-like (`IfStmt`), or the 15 category names themselves.
//! The reader is deliberately tolerant; it never panics and never fails on a valid JSON value
//! that contains at least one recognisable node.
//!
//! **Finding the JSON.** The whole answer is tried first; otherwise the first JSON value
//! starting at one of the first 16 `{` or `[` characters (so Markdown fences and prose around
//! the JSON are ignored). serde_json's nesting limit (128) applies; deeper JSON is an error.
//! Object member order is kept (sibling order matters to the structure score).
//!
//! **Objects.** A node's type is the first string among the members `category`, `type`,
//! `node_type`/`nodeType`, `kind`, `node_kind`, `node`, `ast_type` (member names compared
//! case-insensitively, ignoring `_`, `-` and spaces). The type maps to a category by
//! [`category_for_llm_type`]; an object without a type, or with an unknown type, is flattened:
//! its children are attached to its parent. Every other member is a child, in order: objects
//! and arrays of objects recursively; strings are split into identifier tokens (IDENT) and
//! numbers (LITERAL), skipping control keywords; numbers and booleans become LITERALs.
//! Members that carry metadata (`line`, `col`, `end_lineno`, `loc`, `range`, `source`, `code`,
//! `description`, `comment`, `docstring`, `ctx`, ...) are ignored; `line`/`lineno`/
//! `start_line` sets the node's line.
//!
//! **Labels.** FUNCTION, CALL, PARAM, IDENT, LITERAL, TYPE_DECL, INTERFACE and ENUM take the
//! first scalar among `label`, `name`, `id`, `identifier`, `value`, `text`, `callee`, `func`,
//! `function`, `method`, `arg`, `attr`, `attribute`, `n`, `s`, `token`. A control node
//! (BRANCH, LOOP, RETURN, TRY, EXCEPT, BLOCK) takes its keyword: an explicit `label`/`keyword`
//! that is one of the category's keywords or has no letters or digits (`?`, or empty), else
//! the keyword named by its type (`IfStatement` gives `if`, `ForEach` gives `for`,
//! `ExceptHandler` gives `except`), else the category's canonical keyword where there is one
//! (`if`, `return`, `try`), else nothing; ternaries (`Ternary`, `ConditionalExpression`) are
//! labelled `?`. Any other explicit label is read as code (its names become IDENT children). ASSIGN takes its operator from
//! `op`/`operator`/`label` when that is punctuation (`+=`), else `=`. A FUNCTION without a
//! name whose type mentions `lambda`/`arrow`/`anonymous` is labelled `lambda`.
//! Strings in an array under `args`/`params`/`parameters`/`arguments` directly below a
//! FUNCTION are PARAMs. A `finalbody`/`finalizer` member (Python `ast`, ESTree) becomes a
//! BLOCK `finally` holding its statements, as the reference has it.
//!
//! The output is capped at [`DEFAULT_MAX_NODES`] nodes (`truncated`) and [`MAX_DEPTH`] levels.

use crate::syntax::normalize::{Category, NormNode, TreeBuilder, DEFAULT_MAX_NODES, MAX_DEPTH};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;
use std::collections::BTreeMap;

/// An LLM's AST answer as a normalised tree.
#[derive(Debug, Clone, Serialize)]
pub struct LlmAst {
    pub root: NormNode,
    pub node_count: usize,
    /// True when the node cap was reached; the tree is a document-order prefix.
    pub truncated: bool,
    /// True when nesting deeper than [`MAX_DEPTH`] was flattened.
    pub depth_limited: bool,
    /// Type names that mapped to no category (flattened), with counts; at most 64 names.
    pub unknown_types: BTreeMap<String, usize>,
}

/// Why an answer could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmAstError {
    /// No `{` or `[` in the answer.
    NoJson,
    /// JSON-looking text that does not parse (includes nesting deeper than 128).
    InvalidJson(String),
    /// Valid JSON with no recognisable AST node in it.
    NoTree,
}

impl std::fmt::Display for LlmAstError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmAstError::NoJson => write!(f, "the answer contains no JSON"),
            LlmAstError::InvalidJson(e) => write!(f, "the answer's JSON does not parse: {e}"),
            LlmAstError::NoTree => write!(f, "the answer's JSON contains no recognisable AST node"),
        }
    }
}

impl std::error::Error for LlmAstError {}

/// A JSON value that keeps object members in document order.
#[derive(Debug)]
enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

struct JVisitor;

impl<'de> Visitor<'de> for JVisitor {
    type Value = J;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J, E> {
        Ok(J::Num(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J, E> {
        Ok(J::Num(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J, E> {
        Ok(J::Num(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<J, E> {
        Ok(J::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<J, E> {
        Ok(J::Str(v))
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_none<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        J::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<J>()? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, J>()? {
            members.push((k, v));
        }
        Ok(J::Obj(members))
    }
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        d.deserialize_any(JVisitor)
    }
}

fn extract_json(text: &str) -> Result<J, LlmAstError> {
    if let Ok(j) = serde_json::from_str::<J>(text.trim()) {
        return Ok(j);
    }
    let mut last_error = None;
    for (i, _) in text
        .char_indices()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .take(16)
    {
        let mut de = serde_json::Deserializer::from_str(&text[i..]);
        match J::deserialize(&mut de) {
            Ok(j) => return Ok(j),
            Err(e) => last_error = Some(e.to_string()),
        }
    }
    Err(match last_error {
        Some(e) => LlmAstError::InvalidJson(e),
        None => LlmAstError::NoJson,
    })
}

/// Lower-case alphanumerics only: `node_type`, `nodeType` and `Node-Type` all give `nodetype`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Splits `ForEachStatement`, `for_each_statement`, `IfStmt2` into lower-case words.
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        let boundary = match prev {
            Some(p) => {
                (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() && c.is_ascii_digit())
                    || (p.is_ascii_digit() && c.is_alphabetic())
                    // `IFStatement`: an upper-case run ends before its last letter.
                    || (p.is_uppercase()
                        && c.is_uppercase()
                        && chars.get(i + 1).is_some_and(|n| n.is_lowercase()))
            }
            None => false,
        };
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Irregular names, compared after [`squash`]. `None` marks a known wrapper (flattened).
static SYNONYMS: &[(&str, Option<Category>)] = {
    use Category::*;
    &[
        ("def", Some(Function)),
        ("asyncfunctiondef", Some(Function)),
        ("classdef", Some(TypeDecl)),
        ("arg", Some(Param)),
        ("ifexp", Some(Branch)),
        ("comprehension", Some(Loop)),
        ("augassign", Some(Assign)),
        ("annassign", Some(Assign)),
        ("namedexpr", Some(Assign)),
        ("variabledeclaration", Some(Assign)),
        ("localvariabledeclaration", Some(Assign)),
        ("variabledeclarationstatement", Some(Assign)),
        ("vardecl", Some(Assign)),
        ("declstmt", Some(Assign)),
        ("declaration", Some(Assign)),
        ("nameconstant", Some(Literal)),
        ("default", Some(Branch)),
        ("defaultcase", Some(Branch)),
        ("excepthandler", Some(Except)),
        ("with", Some(Block)),
        ("asyncwith", Some(Block)),
        ("finalbody", Some(Block)),
        ("finally", Some(Block)),
        ("finallyclause", Some(Block)),
        // Wrappers whose words would otherwise suggest a category.
        ("functionbody", None),
        ("classbody", None),
        ("loopbody", None),
        ("parameterlist", None),
        ("returntype", None),
        ("returns", None),
        ("else", None),
        ("orelse", None),
        ("elseclause", None),
        ("callarguments", None),
        ("keyword", None),
    ]
};

/// Word lists in priority order: control flow before packaging (`FunctionCall` is a CALL,
/// `ReturnStatement` never a FUNCTION).
static WORD_RULES: &[(Category, &[&str])] = &[
    (Category::Return, &["return"]),
    (
        Category::Except,
        &[
            "except", "catch", "raise", "throw", "revert", "handler", "rescue",
        ],
    ),
    (Category::Try, &["try"]),
    (
        Category::Loop,
        &["for", "foreach", "while", "loop", "do", "repeat", "until"],
    ),
    (
        Category::Branch,
        &[
            "if",
            "elif",
            "elseif",
            "switch",
            "case",
            "ternary",
            "conditional",
            "match",
        ],
    ),
    (
        Category::Call,
        &[
            "call",
            "invocation",
            "invoke",
            "new",
            "creation",
            "instantiation",
            "emit",
        ],
    ),
    (
        Category::Assign,
        &[
            "assign",
            "assignment",
            "declarator",
            "increment",
            "decrement",
            "update",
            "walrus",
        ],
    ),
    (
        Category::Function,
        &[
            "function",
            "method",
            "lambda",
            "constructor",
            "func",
            "procedure",
            "closure",
            "arrow",
            "modifier",
            "fn",
            "subroutine",
            "def",
        ],
    ),
    (Category::Enum, &["enum", "enumeration"]),
    (Category::Interface, &["interface", "trait", "protocol"]),
    (
        Category::TypeDecl,
        &[
            "class", "struct", "record", "contract", "union", "typedef", "library",
        ],
    ),
    (Category::Param, &["param", "parameter", "arg"]),
    (
        Category::Literal,
        &[
            "literal", "constant", "num", "number", "str", "string", "int", "integer", "float",
            "double", "bool", "boolean", "char", "null", "nil", "none", "true", "false", "bytes",
        ],
    ),
    (
        Category::Ident,
        &[
            "name",
            "identifier",
            "ident",
            "id",
            "variable",
            "var",
            "symbol",
        ],
    ),
    (
        Category::Block,
        &[
            "with",
            "finally",
            "synchronized",
            "unchecked",
            "unsafe",
            "assembly",
        ],
    ),
];

/// A type whose last word is one of these names a part of a construct, not the construct
/// (`FunctionBody`, `ParameterList`, `ReturnType`, `IfCondition`): flattened.
static PART_SUFFIXES: &[&str] = &[
    "body",
    "list",
    "type",
    "types",
    "args",
    "arguments",
    "parameters",
    "params",
    "init",
    "initializer",
    "condition",
    "test",
    "targets",
    "annotation",
    "modifiers",
    "statements",
    "stmts",
    "operator",
    "op",
    "label",
    "context",
    "ctx",
    "specifiers",
];

/// Maps an LLM node type to a category: the 15 names (any case, `TYPE_DECL`/`TypeDecl`), a
/// table of irregular synonyms (`FunctionDef`... via words, `ClassDef`, `arg`, `IfExp`,
/// `AugAssign`, `ExceptHandler`, `With`), then word rules in priority order over the type
/// split into words (`if_statement`, `IfStmt`, `ForEachStatement`, `MethodInvocation`,
/// `CatchClause`). `None` means "not an AST category": the node is flattened.
pub fn category_for_llm_type(name: &str) -> Option<Category> {
    if let Some(c) = Category::from_name(name) {
        return Some(c);
    }
    let key = squash(name);
    if let Some((_, c)) = SYNONYMS.iter().find(|(k, _)| *k == key) {
        return *c;
    }
    let ws = words(name);
    let last = ws.last()?;
    if PART_SUFFIXES.contains(&last.as_str()) {
        return None;
    }
    if matches!(last.as_str(), "name" | "identifier" | "id") {
        return Some(Category::Ident);
    }
    WORD_RULES
        .iter()
        .find(|(_, list)| ws.iter().any(|w| list.contains(&w.as_str())))
        .map(|(c, _)| *c)
}

/// The keyword a control node's type names (`WhileStmt` gives `while`), if any.
fn keyword_from_type(cat: Category, type_name: &str) -> Option<&'static str> {
    let ws = words(type_name);
    cat.keywords()
        .iter()
        .copied()
        .find(|k| ws.iter().any(|w| w == k))
        .or_else(|| {
            // `ForEach`/`foreach` and `DoWhile` name a loop keyword through a compound word.
            let key = squash(type_name);
            match cat {
                Category::Loop if key.starts_with("for") => Some("for"),
                Category::Loop if key.starts_with("do") => Some("do"),
                Category::Loop if key.starts_with("while") => Some("while"),
                _ => None,
            }
        })
}

fn is_control(cat: Category) -> bool {
    matches!(
        cat,
        Category::Branch
            | Category::Loop
            | Category::Return
            | Category::Try
            | Category::Except
            | Category::Block
    )
}

const TYPE_KEYS: &[&str] = &[
    "category",
    "type",
    "nodetype",
    "kind",
    "nodekind",
    "node",
    "asttype",
    "astnodetype",
];
const NAME_KEYS: &[&str] = &[
    "label",
    "name",
    "id",
    "identifier",
    "value",
    "text",
    "callee",
    "func",
    "function",
    "method",
    "arg",
    "attr",
    "attribute",
    "n",
    "s",
    "token",
];
const KEYWORD_KEYS: &[&str] = &["label", "keyword"];
const OPERATOR_KEYS: &[&str] = &["op", "operator", "label"];
const LINE_KEYS: &[&str] = &[
    "line",
    "lineno",
    "linenumber",
    "startline",
    "beginline",
    "row",
];
const META_KEYS: &[&str] = &[
    "col",
    "column",
    "coloffset",
    "endcoloffset",
    "endlineno",
    "endline",
    "endcolumn",
    "end",
    "start",
    "range",
    "loc",
    "location",
    "position",
    "pos",
    "span",
    "source",
    "code",
    "snippet",
    "comment",
    "comments",
    "description",
    "desc",
    "doc",
    "docstring",
    "explanation",
    "note",
    "notes",
    "summary",
    "ctx",
    "context",
    "file",
    "path",
    "language",
    "lang",
    "typecomment",
    "startcol",
    "endpos",
    "startpos",
    "children_count",
    "childcount",
    "depth",
    "level",
];
const PARAM_LIST_KEYS: &[&str] = &[
    "args",
    "params",
    "parameters",
    "arguments",
    "formalparameters",
];

/// Words that are syntax, not identifiers, when splitting code-like strings.
fn is_code_keyword(word: &str) -> bool {
    Category::ALL.iter().any(|c| c.keywords().contains(&word))
        || matches!(
            word,
            "and"
                | "or"
                | "not"
                | "in"
                | "is"
                | "lambda"
                | "def"
                | "function"
                | "new"
                | "var"
                | "let"
                | "const"
        )
}

fn scalar_text(j: &J) -> Option<String> {
    match j {
        J::Str(s) => Some(s.clone()),
        J::Num(n) => Some(n.clone()),
        J::Bool(b) => Some(b.to_string()),
        J::Null => Some("null".to_string()),
        J::Arr(_) | J::Obj(_) => None,
    }
}

fn line_of(j: &J) -> Option<usize> {
    match j {
        J::Num(n) => n.parse::<usize>().ok(),
        J::Str(s) => s.trim().parse::<usize>().ok(),
        _ => None,
    }
}

/// Leaves for a string found where a node was expected: identifier-like words become IDENT,
/// numbers LITERAL; control keywords are skipped. Strings over 200 characters are ignored.
fn string_leaves(s: &str) -> Vec<(Category, String)> {
    if s.chars().count() > 200 {
        return Vec::new();
    }
    s.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .flat_map(|chunk| {
            // Keep `1.5` whole, split `a.b` into `a` and `b`.
            if chunk.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                vec![chunk]
            } else {
                chunk.split('.').collect()
            }
        })
        .filter(|w| !w.is_empty())
        .filter_map(|w| {
            if w.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                Some((Category::Literal, w.to_string()))
            } else if is_code_keyword(w) || w.chars().all(|c| c == '.') {
                None
            } else {
                Some((Category::Ident, w.to_string()))
            }
        })
        .collect()
}

struct Reader {
    builder: TreeBuilder,
    unknown: BTreeMap<String, usize>,
}

impl Reader {
    fn leaf(&mut self, parent: usize, cat: Category, label: String) -> bool {
        self.builder.add(parent, cat, label, 0).is_some()
    }

    fn note_unknown(&mut self, name: &str) {
        if self.unknown.len() < 64 || self.unknown.contains_key(name) {
            *self.unknown.entry(name.to_string()).or_insert(0) += 1;
        }
    }
}

/// One pending piece of JSON: a value, the member name it was found under, and the index of
/// the output node it belongs to.
struct Pending<'a> {
    value: &'a J,
    key: Option<String>,
    parent: usize,
    /// Create this node first and attach the value under it (`finalbody` -> BLOCK finally).
    wrap: Option<(Category, &'static str)>,
}

/// Members whose value is a construct that the dialect names only by the member: Python's
/// `finalbody` and ESTree's `finalizer` hold the body of a `finally` block.
fn implicit_wrapper(key: &str) -> Option<(Category, &'static str)> {
    match squash(key).as_str() {
        "finalbody" | "finalizer" | "finally" => Some((Category::Block, "finally")),
        _ => None,
    }
}

/// Reads an LLM answer containing a JSON AST.
pub fn parse_llm_ast(text: &str) -> Result<LlmAst, LlmAstError> {
    let json = extract_json(text)?;
    if !matches!(json, J::Obj(_) | J::Arr(_)) {
        return Err(LlmAstError::NoTree);
    }
    let mut reader = Reader {
        builder: TreeBuilder::new(Category::Block, String::new(), 0, DEFAULT_MAX_NODES),
        unknown: BTreeMap::new(),
    };
    let mut stack = vec![Pending {
        value: &json,
        key: None,
        parent: 0,
        wrap: None,
    }];
    'work: while let Some(mut item) = stack.pop() {
        if let Some((cat, label)) = item.wrap.take() {
            let Some(idx) = reader.builder.add(item.parent, cat, label.to_string(), 0) else {
                break 'work;
            };
            item.parent = idx;
        }
        match item.value {
            J::Arr(items) => {
                stack.extend(items.iter().rev().map(|v| Pending {
                    value: v,
                    key: item.key.clone(),
                    parent: item.parent,
                    wrap: None,
                }));
            }
            J::Obj(members) => {
                let Some((here, consumed)) = read_object(&mut reader, members, item.parent) else {
                    break 'work;
                };
                for (i, (k, v)) in members.iter().enumerate().rev() {
                    if !consumed.contains(&i) {
                        let structured = matches!(v, J::Obj(_) | J::Arr(_));
                        stack.push(Pending {
                            value: v,
                            key: Some(k.clone()),
                            parent: here,
                            wrap: implicit_wrapper(k).filter(|_| structured),
                        });
                    }
                }
            }
            J::Null | J::Bool(_) | J::Num(_) => {
                if let Some(text) = scalar_text(item.value) {
                    if !matches!(item.value, J::Null)
                        && !reader.leaf(item.parent, Category::Literal, text)
                    {
                        break 'work;
                    }
                }
            }
            J::Str(s) => {
                let key = item.key.as_deref().map(squash).unwrap_or_default();
                let parent_is_function =
                    reader.builder.category(item.parent) == Some(Category::Function);
                if parent_is_function && PARAM_LIST_KEYS.contains(&key.as_str()) {
                    if !reader.leaf(item.parent, Category::Param, s.trim().to_string()) {
                        break 'work;
                    }
                    continue;
                }
                for (cat, label) in string_leaves(s) {
                    if !reader.leaf(item.parent, cat, label) {
                        break 'work;
                    }
                }
            }
        }
    }
    let truncated = reader.builder.truncated;
    let depth_limited = reader.builder.depth_limited;
    let node_count = reader.builder.len();
    let mut root = reader.builder.finish();
    if root.children.is_empty() {
        return Err(LlmAstError::NoTree);
    }
    let node_count = if root.children.len() == 1 {
        match root.children.pop() {
            Some(only) => {
                root = only;
                node_count - 1
            }
            None => node_count,
        }
    } else {
        node_count
    };
    Ok(LlmAst {
        root,
        node_count,
        truncated,
        depth_limited,
        unknown_types: reader.unknown,
    })
}

/// Creates the node for one JSON object (or flattens it). Returns the index children attach
/// to and the positions of members the object consumed itself; `None` when the cap is reached.
fn read_object(
    reader: &mut Reader,
    members: &[(String, J)],
    parent: usize,
) -> Option<(usize, Vec<usize>)> {
    let keys: Vec<String> = members.iter().map(|(k, _)| squash(k)).collect();
    let mut consumed: Vec<usize> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        if META_KEYS.contains(&k.as_str()) || LINE_KEYS.contains(&k.as_str()) {
            consumed.push(i);
        }
    }
    let line = keys
        .iter()
        .zip(members)
        .find(|(k, _)| LINE_KEYS.contains(&k.as_str()))
        .and_then(|(_, (_, v))| line_of(v))
        .unwrap_or(0);
    let type_member = TYPE_KEYS.iter().find_map(|tk| {
        keys.iter()
            .position(|k| k == tk)
            .and_then(|i| match &members[i].1 {
                J::Str(s) => Some((i, s.as_str())),
                _ => None,
            })
    });
    // Non-string scalars under type members are never data (`"type": 42`); a second string
    // type member (Python's ExceptHandler `"type": "OSError"` next to `"_type"`) is.
    for (i, k) in keys.iter().enumerate() {
        if TYPE_KEYS.contains(&k.as_str())
            && matches!(members[i].1, J::Num(_) | J::Bool(_) | J::Null)
        {
            consumed.push(i);
        }
    }
    let category = match type_member {
        Some((i, type_name)) => {
            consumed.push(i);
            let c = category_for_llm_type(type_name);
            if c.is_none() {
                reader.note_unknown(type_name);
            }
            c
        }
        None => None,
    };
    let Some(cat) = category else {
        // No type, or an unknown one: flatten. A type-less object that is only a name or a
        // value (`{"name": "x"}`) becomes a leaf.
        let has_structure = members
            .iter()
            .any(|(_, v)| matches!(v, J::Obj(_) | J::Arr(_)));
        if type_member.is_none() && !has_structure {
            if let Some(i) = keys.iter().position(|k| NAME_KEYS.contains(&k.as_str())) {
                if let Some(text) = scalar_text(&members[i].1) {
                    let cat = if matches!(members[i].1, J::Str(_))
                        && !text.chars().next().is_some_and(|c| c.is_ascii_digit())
                    {
                        Category::Ident
                    } else {
                        Category::Literal
                    };
                    reader.builder.add(parent, cat, text, line)?;
                    return Some((parent, (0..members.len()).collect()));
                }
            }
        }
        return Some((parent, consumed));
    };
    let type_name = type_member.map(|(_, t)| t).unwrap_or("");
    let find_scalar = |list: &[&str]| -> Option<(usize, String)> {
        list.iter().find_map(|lk| {
            keys.iter()
                .enumerate()
                .find(|(i, k)| *k == lk && !consumed.contains(i))
                .and_then(|(i, _)| scalar_text(&members[i].1).map(|t| (i, t)))
        })
    };
    let label = if is_control(cat) {
        // An explicit keyword, or an explicit empty/punctuation label (`?` for a ternary).
        let explicit = find_scalar(KEYWORD_KEYS).filter(|(_, t)| {
            let t = t.trim();
            cat.keywords().contains(&t.to_lowercase().as_str())
                || !t.chars().any(char::is_alphanumeric)
        });
        match explicit {
            Some((i, t)) => {
                consumed.push(i);
                t.trim().to_lowercase()
            }
            None => {
                let ws = words(type_name);
                if cat == Category::Branch
                    && ws.iter().any(|w| w == "ternary" || w == "conditional")
                    && !ws.iter().any(|w| w == "if")
                {
                    "?".to_string()
                } else {
                    keyword_from_type(cat, type_name)
                        .or(match cat {
                            Category::Branch => Some("if"),
                            Category::Return => Some("return"),
                            Category::Try => Some("try"),
                            _ => None,
                        })
                        .unwrap_or("")
                        .to_string()
                }
            }
        }
    } else if cat == Category::Assign {
        find_scalar(OPERATOR_KEYS)
            .map(|(_, t)| t)
            .filter(|t| {
                !t.is_empty() && !t.chars().any(|c| c.is_alphanumeric() || c.is_whitespace())
            })
            .unwrap_or_else(|| "=".to_string())
    } else {
        match find_scalar(NAME_KEYS) {
            Some((i, t)) => {
                consumed.push(i);
                t
            }
            None if cat == Category::Function => {
                let ws = words(type_name);
                if ws
                    .iter()
                    .any(|w| matches!(w.as_str(), "lambda" | "arrow" | "anonymous"))
                {
                    "lambda".to_string()
                } else {
                    String::new()
                }
            }
            None => String::new(),
        }
    };
    // Operators are never children: `"op": "Add"` is not an identifier.
    for (i, k) in keys.iter().enumerate() {
        if matches!(k.as_str(), "op" | "operator") && scalar_text(&members[i].1).is_some() {
            consumed.push(i);
        }
    }
    let idx = reader.builder.add(parent, cat, label, line)?;
    Some((idx, consumed))
}

/// Guard against accidental recursion limits drifting apart: the reader relies on serde_json
/// refusing input nested deeper than this, far below [`MAX_DEPTH`].
const _: () = assert!(128 < MAX_DEPTH);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::lang::kind;

    fn read(text: &str) -> String {
        parse_llm_ast(text).expect("readable").root.compact()
    }

    #[test]
    fn splits_type_names_into_words() {
        assert_eq!(words("ForEachStatement"), ["for", "each", "statement"]);
        assert_eq!(words(kind::IF_STATEMENT), ["if", "statement"]);
        assert_eq!(words("IFStatement"), ["if", "statement"]);
        assert_eq!(words("IfStmt2"), ["if", "stmt", "2"]);
        assert_eq!(words("  "), Vec::<String>::new());
    }

    #[test]
    fn maps_common_synonyms_case_insensitively() {
        use Category::*;
        let cases = [
            ("If", Branch),
            (kind::IF_STATEMENT, Branch),
            ("IfStmt", Branch),
            ("IfExp", Branch),
            ("ConditionalExpression", Branch),
            ("SwitchCase", Branch),
            ("While", Loop),
            ("For", Loop),
            ("ForEachStatement", Loop),
            (kind::ENHANCED_FOR_STATEMENT, Loop),
            ("DoWhile", Loop),
            ("comprehension", Loop),
            ("FunctionDef", Function),
            ("AsyncFunctionDef", Function),
            ("MethodDeclaration", Function),
            ("Lambda", Function),
            ("ArrowFunctionExpression", Function),
            ("Call", Call),
            ("FunctionCall", Call),
            ("MethodInvocation", Call),
            ("NewExpression", Call),
            ("Return", Return),
            ("ReturnStatement", Return),
            ("Assign", Assign),
            ("AugAssign", Assign),
            ("VariableDeclaration", Assign),
            ("UpdateExpression", Assign),
            ("Try", Try),
            ("ExceptHandler", Except),
            ("CatchClause", Except),
            ("Raise", Except),
            ("ThrowStatement", Except),
            ("ClassDef", TypeDecl),
            ("StructDeclaration", TypeDecl),
            ("InterfaceDeclaration", Interface),
            ("EnumDeclaration", Enum),
            ("With", Block),
            ("Finally", Block),
            ("arg", Param),
            ("FormalParameter", Param),
            ("Constant", Literal),
            ("StringLiteral", Literal),
            ("Name", Ident),
            ("Identifier", Ident),
            ("FunctionName", Ident),
            ("type_decl", TypeDecl),
            ("branch", Branch),
        ];
        for (name, want) in cases {
            assert_eq!(category_for_llm_type(name), Some(want), "{name}");
        }
        // A category name wins over the wrapper reading: "Block" is BLOCK (not a backbone
        // category, so it does not change the backbone either way).
        assert_eq!(category_for_llm_type("Block"), Some(Block));
        for wrapper in [
            "Module",
            "Expr",
            "ExpressionStatement",
            "BinOp",
            "Attribute",
            "Body",
            "FunctionBody",
            "ParameterList",
            "ReturnType",
            "arguments",
            "Else",
            "orelse",
            "Load",
            "",
            "???",
        ] {
            assert_eq!(category_for_llm_type(wrapper), None, "{wrapper}");
        }
    }

    #[test]
    fn reads_python_ast_style_json_in_member_order() {
        let answer = r#"{"_type": "FunctionDef", "name": "check", "lineno": 1,
            "args": {"_type": "arguments", "args": [{"_type": "arg", "arg": "n"}]},
            "body": [
              {"_type": "If", "lineno": 2,
               "test": {"_type": "Compare", "left": {"_type": "Name", "id": "n", "ctx": {"_type": "Load"}},
                        "ops": [{"_type": "Lt"}], "comparators": [{"_type": "Constant", "value": 0}]},
               "body": [{"_type": "Return", "value": {"_type": "Constant", "value": false}}],
               "orelse": [{"_type": "Expr", "value": {"_type": "Call",
                            "func": {"_type": "Name", "id": "print"}, "args": [{"_type": "Name", "id": "n"}]}}]}
            ]}"#;
        let ast = parse_llm_ast(answer).unwrap();
        assert_eq!(
            ast.root.compact(),
            "(FUNCTION check (PARAM n) (BRANCH if (IDENT n) (LITERAL 0) (RETURN return (LITERAL false)) (CALL (IDENT print) (IDENT n))))"
        );
        assert_eq!(ast.root.line, 1);
        assert_eq!(ast.root.children[1].line, 2);
        assert_eq!(ast.unknown_types.get("Compare"), Some(&1));
        assert_eq!(ast.unknown_types.get("Lt"), Some(&1));
        assert_eq!(ast.unknown_types.get("Expr"), Some(&1));
        // `ctx` is metadata: its `Load` is never read.
        assert_eq!(ast.unknown_types.get("Load"), None);
    }

    #[test]
    fn reads_category_named_json_with_code_strings() {
        let answer = r#"Here is the AST:
```json
{"category": "FUNCTION", "label": "add", "children": [
  {"category": "PARAM", "label": "a"}, {"category": "PARAM", "label": "b"},
  {"category": "RETURN", "children": ["a + b"]}
]}
```
Hope this helps."#;
        assert_eq!(
            read(answer),
            "(FUNCTION add (PARAM a) (PARAM b) (RETURN return (IDENT a) (IDENT b)))"
        );
    }

    #[test]
    fn control_labels_come_from_keywords_types_or_defaults() {
        assert_eq!(read(r#"{"type": "WhileStatement"}"#), "(LOOP while)");
        assert_eq!(read(r#"{"type": "ForEach"}"#), "(LOOP for)");
        assert_eq!(
            read(r#"{"type": "BRANCH", "label": "elif"}"#),
            "(BRANCH elif)"
        );
        assert_eq!(
            read(r#"{"type": "BRANCH", "label": "x > 0"}"#),
            "(BRANCH if (IDENT x) (LITERAL 0))"
        );
        assert_eq!(read(r#"{"type": "TernaryExpression"}"#), "(BRANCH ?)");
        assert_eq!(
            read(r#"{"category": "BRANCH", "label": "?"}"#),
            "(BRANCH ?)"
        );
        assert_eq!(read(r#"{"category": "BRANCH", "label": ""}"#), "(BRANCH)");
        assert_eq!(read(r#"{"type": "CatchClause"}"#), "(EXCEPT catch)");
        assert_eq!(
            read(r#"{"type": "AugAssign", "op": "+=", "target": "total"}"#),
            "(ASSIGN += (IDENT total))"
        );
        assert_eq!(read(r#"{"type": "Assign", "op": "Add"}"#), "(ASSIGN =)");
        assert_eq!(read(r#"{"type": "ArrowFunction"}"#), "(FUNCTION lambda)");
        assert_eq!(
            read(r#"{"type": "FunctionDeclaration", "name": "f", "params": ["a", "b"]}"#),
            "(FUNCTION f (PARAM a) (PARAM b))"
        );
    }

    #[test]
    fn finally_members_become_finally_blocks() {
        assert_eq!(
            read(
                r#"{"type": "Try", "body": [{"type": "Call", "func": "a"}], "handlers": [], "finalbody": [{"type": "Call", "func": "b"}]}"#
            ),
            "(TRY try (CALL a) (BLOCK finally (CALL b)))"
        );
    }

    #[test]
    fn tolerates_missing_fields_and_unknown_types() {
        // Unknown wrapper types are flattened; type-less name objects become leaves.
        assert_eq!(
            read(
                r#"{"type": "Program", "body": [{"type": "Mystery", "children": [{"type": "Call", "name": "go"}]}, {"name": "x"}]}"#
            ),
            "(BLOCK (CALL go) (IDENT x))"
        );
        assert_eq!(
            read(r#"[{"type": "Return"}, {"type": "Return"}]"#),
            "(BLOCK (RETURN return) (RETURN return))"
        );
        assert_eq!(
            read(r#"{"type": "If", "children": null, "line": "x"}"#),
            "(BRANCH if)"
        );
        assert_eq!(
            read(r#"{"type": 42, "children": [{"type": "Call"}]}"#),
            "(CALL)"
        );
    }

    #[test]
    fn unreadable_answers_are_errors_not_panics() {
        assert_eq!(
            parse_llm_ast("no json here").unwrap_err(),
            LlmAstError::NoJson
        );
        assert!(matches!(
            parse_llm_ast("{\"type\": "),
            Err(LlmAstError::InvalidJson(_))
        ));
        assert_eq!(parse_llm_ast("{}").unwrap_err(), LlmAstError::NoTree);
        assert_eq!(
            parse_llm_ast("\"just a string\"").unwrap_err(),
            LlmAstError::NoTree
        );
        assert_eq!(
            parse_llm_ast("[1, {\"type\": \"Load\"}]").map(|a| a.root.compact()),
            Ok("(LITERAL 1)".to_string())
        );
        // Nesting beyond serde_json's limit is reported, not overflowed.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            parse_llm_ast(&deep),
            Err(LlmAstError::InvalidJson(_))
        ));
        let deep_objects = format!(
            "{}{{\"type\":\"Call\"}}{}",
            "{\"type\":\"Call\",\"children\":[".repeat(5000),
            "]}".repeat(5000)
        );
        assert!(matches!(
            parse_llm_ast(&deep_objects),
            Err(LlmAstError::InvalidJson(_))
        ));
    }

    #[test]
    fn large_answers_are_capped() {
        let many = format!(
            "[{}]",
            vec![r#"{"type":"Call","name":"f"}"#; DEFAULT_MAX_NODES + 10].join(",")
        );
        let ast = parse_llm_ast(&many).unwrap();
        assert!(ast.truncated);
        assert_eq!(ast.root.size(), DEFAULT_MAX_NODES);
        let nested = format!(
            "{}{}",
            r#"{"type":"Call","args":["#.repeat(60),
            "]}".repeat(60)
        );
        let ast = parse_llm_ast(&nested).unwrap();
        assert_eq!(ast.root.depth(), 60);
        assert!(!ast.depth_limited);
    }
}
