//! Per-language def/use extraction: given a byte range (one CFG node), which variables it
//! defines and which it reads, and which reads flow into which definitions.
//!
//! The walk is a single iterative loop over an explicit stack (no recursion), driven by a
//! *role* per node: `Use` (value read), `Qualifier` (object of `a.f` / `a.m()`), `Def`
//! (written; strong = overwrites the whole variable, weak = field/index/element write that
//! keeps the old value alive; `read` = also reads it, as in `x += 1`), `Declarator` (C/C++
//! declarators), `Param` (parameter declarations) and `Skip`. Assignment-like constructs open
//! a *flow frame*: the uses inside a frame (and its nested frames) flow into the definitions
//! made in that frame, which is how `r = f(a, b)` makes `r` depend on `a` and `b` while, in
//! `int a = b, c = d;`, `a` depends on `b` only.
//!
//! In *shallow* mode (the default, one CFG node) the bodies of compound statements are skipped
//! (the CFG has separate nodes for them); a node that stands for a whole compound statement
//! (the CFG builder collapses over-deep nesting into one node) is walked with its bodies, and
//! its definitions are then weak (they happen conditionally).
//! Nested functions, lambdas and comprehensions are summarised by their free variables, found
//! by a second walk that walks everything and does not summarise again (no recursion).

use crate::syntax::{Cancel, Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use tree_sitter::{Node, TreeCursor};

/// A read of a variable in one CFG node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UseFact {
    pub var: String,
    /// 1-based line of the identifier.
    pub line: usize,
    /// True when every occurrence is in qualifier position (`m` in `m.f` or `m.g()`): such a
    /// name, if the function never defines it, may be a module or class rather than a variable.
    pub qualifier: bool,
}

/// A definition of a variable in one CFG node (at most one per variable and node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefFact {
    pub var: String,
    /// 1-based line of the (first) defining identifier.
    pub line: usize,
    /// Strong definitions kill earlier definitions of the variable; weak ones (field, index and
    /// element writes, mutating calls, possible out-arguments) do not.
    pub strong: bool,
    /// Indices into [`NodeFacts::uses`] of the uses whose values flow into this definition.
    pub sources: Vec<usize>,
}

/// What one CFG node reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeFacts {
    pub defs: Vec<DefFact>,
    pub uses: Vec<UseFact>,
    /// Set when extraction stopped early (cancelled); the facts are then incomplete.
    pub truncated: bool,
    /// Names seen as input readers (`sc` in `sc.nextInt()`, `Scanner sc = new Scanner(..)`).
    pub readers: Vec<String>,
    /// The facts depend on the [`Context`] (a capitalised or module-like call receiver, or
    /// `x.next()` on a possible reader): re-extract once the function's names are known.
    pub context_sensitive: bool,
}

/// What the extractor knows about the whole function (from a first pass).
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Names defined somewhere in the function (parameters included): a receiver with such a
    /// name is a variable, not a class or module.
    pub known: BTreeSet<String>,
    /// Input readers: `x.next()` / `x.hasNext()` on them read input, not `x`.
    pub readers: BTreeSet<String>,
}

impl NodeFacts {
    /// Builds facts by hand (tests, other front ends): `defs` are `(var, line, strong,
    /// sources)` where sources index `uses`.
    pub fn new(defs: Vec<DefFact>, uses: Vec<UseFact>) -> Self {
        NodeFacts {
            defs,
            uses,
            ..NodeFacts::default()
        }
    }
}

/// Methods whose call mutates the receiver (`xs.append(y)` defines `xs`), across languages.
const MUTATING_METHODS: &[&str] = &[
    "add",
    "addAll",
    "addFirst",
    "addLast",
    "append",
    "appendleft",
    "assign",
    "clear",
    "delete",
    "deleteCharAt",
    "discard",
    "emplace",
    "emplace_back",
    "emplace_front",
    "erase",
    "extend",
    "extendleft",
    "fill",
    "insert",
    "offer",
    "offerFirst",
    "offerLast",
    "poll",
    "pollFirst",
    "pollLast",
    "pop",
    "pop_back",
    "pop_front",
    "popitem",
    "popleft",
    "push",
    "push_back",
    "push_front",
    "put",
    "putAll",
    "putIfAbsent",
    "put_nowait",
    "remove",
    "removeAll",
    "removeFirst",
    "removeLast",
    "resize",
    "retainAll",
    "reverse",
    "rotate",
    "set",
    "setCharAt",
    "setLength",
    "setdefault",
    "shift",
    "sort",
    "splice",
    "swap",
    "unshift",
    "update",
];

/// Methods that read input (`sc.nextInt()`, `br.readLine()`): the reader object is an input
/// source, not a variable the result depends on (the CoRe labels never list it).
const INPUT_METHODS: &[&str] = &[
    "nextInt",
    "nextLong",
    "nextDouble",
    "nextFloat",
    "nextLine",
    "nextBoolean",
    "nextShort",
    "nextByte",
    "nextBigInteger",
    "nextBigDecimal",
    "nextToken",
    "nextString",
    "hasNextInt",
    "hasNextLong",
    "hasNextLine",
    "readLine",
    "read",
    "readInt",
    "readLong",
    "ready",
];

/// Input methods shared with iterators: the receiver is a reader only if it is known as one.
const AMBIGUOUS_INPUT_METHODS: &[&str] = &["next", "hasNext"];

/// Type names of input readers (`new Scanner(System.in)`).
fn is_reader_type(t: &str) -> bool {
    ["Scanner", "Reader", "Tokenizer", "InputStream"]
        .iter()
        .any(|k| t.contains(k))
}

/// Functions that mutate their first argument (`heappush(h, x)`, `Arrays.fill(a, 0)`).
const FIRST_ARG_MUTATORS: &[&str] = &[
    "heappush",
    "heappop",
    "heapify",
    "heapreplace",
    "heappushpop",
    "shuffle",
    "fill",
    "sort",
    "reverse",
    "setAll",
    "parallelSort",
    "assign",
];

/// C functions that write their first argument.
const C_FIRST_ARG_WRITTEN: &[&str] = &[
    "gets", "fgets", "strcpy", "strncpy", "strcat", "strncat", "memset", "memcpy", "memmove",
    "sprintf", "snprintf", "qsort",
];

/// Names that are never variables for this analysis (library objects, sinks, constants).
const NOT_VARIABLES: &[&str] = &[
    "endl",
    "cout",
    "cerr",
    "clog",
    "stdout",
    "stderr",
    "console",
    "undefined",
    "NaN",
    "Infinity",
];

/// Fields holding the body of a compound statement (skipped in shallow mode).
const BODY_FIELDS: &[&str] = &["body", "consequence", "alternative", "handler", "finalizer"];

/// Node kinds that never contain variable reads of the enclosing function.
const SKIP_KINDS: &[&str] = &[
    "comment",
    "line_comment",
    "block_comment",
    // types
    "type",
    "type_annotation",
    "type_arguments",
    "type_parameters",
    "type_parameter",
    "type_identifier",
    "type_descriptor",
    "primitive_type",
    "sized_type_specifier",
    "generic_type",
    "scoped_type_identifier",
    "integral_type",
    "floating_point_type",
    "boolean_type",
    "void_type",
    "array_type",
    "catch_type",
    "dimensions",
    "type_name",
    "user_defined_type",
    "predefined_type",
    "template_argument_list",
    "template_function",
    "template_method",
    "struct_specifier",
    "enum_specifier",
    "union_specifier",
    // names that are not variables
    "qualified_identifier",
    "scoped_identifier",
    "namespace_identifier",
    "field_identifier",
    "property_identifier",
    "statement_identifier",
    "dotted_name",
    "decorator",
    "marker_annotation",
    "annotation",
    "modifiers",
    "visibility",
    "state_mutability",
    "modifier_invocation",
    "method_reference",
    "class_literal",
    "super",
    // statements without reads
    "global_statement",
    "nonlocal_statement",
    "pass_statement",
    "break_statement",
    "continue_statement",
    "goto_statement",
    "switch_label",
    "import_declaration",
    "package_declaration",
    "preproc_include",
    "preproc_def",
    "preproc_function_def",
    "preproc_call",
    "gnu_asm_expression",
    // C/C++ operands of `sizeof`/`alignof` are not evaluated
    "sizeof_expression",
    "alignof_expression",
    "offsetof_expression",
    "assembly_statement",
    "jsx_closing_element",
];

/// Compound statements: their bodies are separate CFG nodes.
const COMPOUND_KINDS: &[&str] = &[
    "if_statement",
    "elif_clause",
    "else_clause",
    "for_statement",
    "for_in_statement",
    "enhanced_for_statement",
    "for_range_loop",
    "while_statement",
    "do_statement",
    "do_while_statement",
    "try_statement",
    "try_with_resources_statement",
    "catch_clause",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "with_statement",
    "switch_statement",
    "switch_expression",
    "case_statement",
    "switch_case",
    "switch_default",
    "switch_rule",
    "switch_block_statement_group",
    "match_statement",
    "case_clause",
    "synchronized_statement",
    "unchecked_block",
];

/// Functions, lambdas and comprehensions: summarised by their free variables.
const CLOSURE_KINDS: &[&str] = &[
    "lambda",
    "lambda_expression",
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
    "function_definition",
    "function_declaration",
    "generator_function_declaration",
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
];

const CLASS_KINDS: &[&str] = &[
    "class_definition",
    "class_declaration",
    "class",
    "abstract_class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
];

fn is_statement_like(kind: &str) -> bool {
    kind.ends_with("_statement")
        || kind.ends_with("_declaration")
        || kind.ends_with("_definition")
        || matches!(
            kind,
            "block"
                | "compound_statement"
                | "statement_block"
                | "block_statement"
                | "declaration"
                | "statement"
                | "else_clause"
                | "elif_clause"
                | "except_clause"
                | "except_group_clause"
                | "finally_clause"
                | "catch_clause"
                | "switch_block"
                | "switch_body"
                | "switch_block_statement_group"
                | "switch_rule"
                | "case_clause"
                | "case_statement"
                | "switch_case"
                | "switch_default"
                | "field_declaration_list"
        )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Use,
    Qualifier,
    Def { strong: bool, read: bool },
    Declarator { init: bool },
    Param,
    Skip,
}

const STRONG: Role = Role::Def {
    strong: true,
    read: false,
};
const UPDATE: Role = Role::Def {
    strong: true,
    read: true,
};
const WEAK_RW: Role = Role::Def {
    strong: false,
    read: true,
};
const WEAK_W: Role = Role::Def {
    strong: false,
    read: false,
};

#[derive(Clone, Copy)]
struct Item<'t> {
    node: Node<'t>,
    role: Role,
    frame: u32,
    /// The node only partly lies in the range being analysed: filter its children.
    clip: bool,
}

/// Polling interval (visited nodes) for the cancel flag.
const POLL_EVERY: usize = 4096;
/// Budget for propagating uses through nested flow frames; beyond it every definition of the
/// node depends on every use of the node (coarser but sound).
const FRAME_BUDGET: usize = 1 << 22;

struct Walker<'t, 'c> {
    file: &'t ParsedFile,
    ctx: &'c Context,
    readers: BTreeSet<&'t str>,
    context_sensitive: bool,
    lang: Language,
    /// Walk the bodies of compound statements.
    deep: bool,
    /// Summarise closures by their free variables (false inside the summarising walk).
    summarise: bool,
    range: Range<usize>,
    cancel: &'c Cancel,
    cursor: TreeCursor<'t>,
    stack: Vec<Item<'t>>,
    /// Parent of each frame; frame 0 is the root (its own parent).
    frames: Vec<u32>,
    /// (name, line, frame) -> qualifier-only.
    uses: BTreeMap<(&'t str, usize, u32), bool>,
    /// (name, frame) -> (first line, strong).
    defs: BTreeMap<(&'t str, u32), (usize, bool)>,
    visited: usize,
    truncated: bool,
    /// Statement bodies were walked as part of this node: all its definitions are weak.
    conditional: bool,
}

impl<'t, 'c> Walker<'t, 'c> {
    fn new(
        file: &'t ParsedFile,
        ctx: &'c Context,
        deep: bool,
        range: Range<usize>,
        cancel: &'c Cancel,
    ) -> Self {
        Walker {
            file,
            ctx,
            readers: BTreeSet::new(),
            context_sensitive: false,
            lang: file.language,
            deep,
            summarise: true,
            range,
            cancel,
            cursor: file.root().walk(),
            stack: Vec::new(),
            frames: vec![0],
            uses: BTreeMap::new(),
            defs: BTreeMap::new(),
            visited: 0,
            truncated: false,
            conditional: false,
        }
    }

    fn text(&self, node: Node<'t>) -> &'t str {
        self.file.text.get(node.byte_range()).unwrap_or("")
    }

    fn line(&self, node: Node<'t>) -> usize {
        self.file.line_of(node.start_byte())
    }

    fn new_frame(&mut self, parent: u32) -> u32 {
        let id = u32::try_from(self.frames.len()).unwrap_or(u32::MAX);
        if id == u32::MAX {
            // Absurd number of frames: keep using the parent (coarser, still sound).
            return parent;
        }
        self.frames.push(parent);
        id
    }

    /// Named children with their field names.
    fn children(&mut self, node: Node<'t>) -> Vec<(Option<&'static str>, Node<'t>)> {
        let mut out = Vec::new();
        self.cursor.reset(node);
        if self.cursor.goto_first_child() {
            loop {
                let child = self.cursor.node();
                if child.is_named() && !child.is_extra() {
                    out.push((self.cursor.field_name(), child));
                }
                if !self.cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        out
    }

    fn push(&mut self, parent: &Item<'t>, node: Node<'t>, role: Role, frame: u32) {
        if let Some(item) = child_item(&self.range, parent, node, role, frame) {
            self.stack.push(item);
        }
    }

    fn push_field(&mut self, it: &Item<'t>, field: &str, role: Role, frame: u32) {
        let mut c = it.node.walk();
        let kids: Vec<Node<'t>> = it.node.children_by_field_name(field, &mut c).collect();
        for k in kids {
            if k.is_named() {
                self.push(it, k, role, frame);
            }
        }
    }

    fn record_use(&mut self, node: Node<'t>, name: &'t str, frame: u32, qualifier: bool) {
        let line = self.line(node);
        let e = self.uses.entry((name, line, frame)).or_insert(qualifier);
        *e &= qualifier;
    }

    fn record_def(&mut self, node: Node<'t>, name: &'t str, frame: u32, strong: bool) {
        let line = self.line(node);
        let e = self.defs.entry((name, frame)).or_insert((line, strong));
        e.0 = e.0.min(line);
        e.1 |= strong;
    }

    fn record(&mut self, node: Node<'t>, role: Role, frame: u32) {
        let name = if node.kind() == "this" {
            "this"
        } else {
            self.text(node)
        };
        if name.is_empty() || NOT_VARIABLES.contains(&name) {
            return;
        }
        match role {
            Role::Use => self.record_use(node, name, frame, false),
            Role::Qualifier => self.record_use(node, name, frame, true),
            Role::Def { strong, read } => {
                if read {
                    self.record_use(node, name, frame, false);
                }
                self.record_def(node, name, frame, strong);
            }
            Role::Declarator { init } => {
                if init {
                    self.record_def(node, name, frame, true)
                }
            }
            Role::Param => self.record_def(node, name, frame, true),
            Role::Skip => {}
        }
    }

    fn run(&mut self) {
        while let Some(it) = self.stack.pop() {
            self.visited += 1;
            if self.visited.is_multiple_of(POLL_EVERY) && self.cancel.is_cancelled() {
                self.truncated = true;
                self.stack.clear();
                return;
            }
            self.expand(it);
        }
    }

    fn is_variable_kind(&self, kind: &str) -> bool {
        match kind {
            "identifier" => true,
            "this" => matches!(
                self.lang,
                Language::Java | Language::Cpp | Language::JavaScript | Language::TypeScript
            ),
            "shorthand_property_identifier" | "shorthand_property_identifier_pattern" => true,
            _ => false,
        }
    }

    /// Visits all named children with one role.
    fn all(&mut self, it: &Item<'t>, role: Role, frame: u32) {
        // Hot path (huge expressions): no allocation.
        self.cursor.reset(it.node);
        if !self.cursor.goto_first_child() {
            return;
        }
        loop {
            let c = self.cursor.node();
            if c.is_named() && !c.is_extra() {
                if let Some(item) = child_item(&self.range, it, c, role, frame) {
                    self.stack.push(item);
                }
            }
            if !self.cursor.goto_next_sibling() {
                break;
            }
        }
    }

    /// Visits the children of a compound statement, except the fields in `handled`; bodies
    /// are skipped in shallow mode.
    fn compound_rest(&mut self, it: &Item<'t>, handled: &[&str], frame: u32) {
        for (field, c) in self.children(it.node) {
            if let Some(f) = field {
                if handled.contains(&f) {
                    continue;
                }
            }
            let body = match field {
                Some(f) => BODY_FIELDS.contains(&f),
                None => is_statement_like(c.kind()),
            };
            if body {
                if !self.deep {
                    continue;
                }
                // Bodies walked inside one node run conditionally: their writes are weak.
                self.conditional = self.summarise;
            }
            if it.node.kind() == "except_clause" && field == Some("value") {
                // `except E as e`: `E` names a type; only `e` is a variable.
                if c.kind() == "as_pattern" {
                    self.push_field(&Item { node: c, ..*it }, "alias", STRONG, frame);
                }
                continue;
            }
            let role = match (it.node.kind(), field) {
                (_, Some("alias")) => STRONG,
                ("catch_clause", Some("parameter")) => STRONG,
                ("catch_clause", Some("parameters")) => Role::Param,
                _ => Role::Use,
            };
            self.push(it, c, role, frame);
        }
    }

    fn expand(&mut self, it: Item<'t>) {
        let node = it.node;
        let role = it.role;
        if node.is_missing() || role == Role::Skip {
            return;
        }
        let kind = node.kind();
        if node.is_error() {
            self.all(&it, Role::Use, it.frame);
            return;
        }
        if self.is_variable_kind(kind) {
            self.record(node, role, it.frame);
            return;
        }
        // Fast paths for the bulk of expression nodes.
        if node.named_child_count() == 0 {
            return; // literals and other leaves
        }
        if matches!(role, Role::Use | Role::Qualifier)
            && matches!(
                kind,
                "parenthesized_expression"
                    | "unary_expression"
                    | "comparison_operator"
                    | "boolean_operator"
                    | "not_operator"
                    | "conditional_expression"
                    | "ternary_expression"
                    | "expression"
            )
            || (kind == "binary_operator" && role == Role::Use)
            || (kind == "binary_expression" && role == Role::Use && self.lang != Language::Cpp)
        {
            self.all(&it, Role::Use, it.frame);
            return;
        }
        if SKIP_KINDS.contains(&kind) {
            return;
        }
        // Parameter and declarator contexts.
        match role {
            Role::Param | Role::Declarator { .. } => {
                self.declaration_part(&it);
                return;
            }
            Role::Def { .. } if self.target(&it) => return,
            _ => {}
        }
        if CLOSURE_KINDS.contains(&kind) && !(kind == "function" && self.lang == Language::Solidity)
        {
            self.closure(&it);
            return;
        }
        if CLASS_KINDS.contains(&kind) {
            self.class(&it);
            return;
        }
        let f = it.frame;
        match kind {
            // ---- assignments and declarations ----
            "assignment"
            | "assignment_expression"
            | "augmented_assignment"
            | "augmented_assignment_expression" => self.assignment(&it),
            "named_expression" => {
                let fr = self.new_frame(f);
                self.push_field(&it, "name", STRONG, fr);
                self.push_field(&it, "value", Role::Use, fr);
            }
            "update_expression" => {
                let fr = self.new_frame(f);
                self.all(&it, UPDATE, fr);
            }
            "declaration" => {
                // C/C++ declaration: type skipped; declarators with or without initialisers.
                for (field, c) in self.children(node) {
                    if field == Some("declarator") {
                        if c.kind() == "init_declarator" {
                            self.push(&it, c, Role::Use, f);
                        } else {
                            self.push(&it, c, Role::Declarator { init: false }, f);
                        }
                    } else if field != Some("type") {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            "init_declarator" => {
                let fr = self.new_frame(f);
                self.note_reader(
                    node.child_by_field_name("declarator"),
                    node.child_by_field_name("value"),
                );
                self.push_field(&it, "declarator", Role::Declarator { init: true }, fr);
                self.push_field(&it, "value", Role::Use, fr);
            }
            "local_variable_declaration" | "lexical_declaration" | "variable_declaration"
                if self.lang != Language::Solidity =>
            {
                for (field, c) in self.children(node) {
                    if field != Some("type") && field != Some("kind") {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            "variable_declarator" => {
                let fr = self.new_frame(f);
                let has_value = node.child_by_field_name("value").is_some();
                self.note_reader(
                    node.child_by_field_name("name"),
                    node.child_by_field_name("value"),
                );
                for (field, c) in self.children(node) {
                    match field {
                        Some("name") if has_value => self.push(&it, c, STRONG, fr),
                        Some("value") => self.push(&it, c, Role::Use, fr),
                        _ => {}
                    }
                }
            }
            "variable_declaration_statement" => {
                let fr = self.new_frame(f);
                let has_value = node.child_by_field_name("value").is_some();
                for (field, c) in self.children(node) {
                    if field == Some("value") {
                        self.push(&it, c, Role::Use, fr);
                    } else if has_value {
                        self.push(&it, c, STRONG, fr);
                    }
                }
            }
            "resource" => {
                let fr = self.new_frame(f);
                if node.child_by_field_name("name").is_some() {
                    self.push_field(&it, "name", STRONG, fr);
                    self.push_field(&it, "value", Role::Use, fr);
                } else {
                    self.all(&it, Role::Use, fr);
                }
            }
            "catch_formal_parameter" => self.push_field(&it, "name", STRONG, f),
            "instanceof_expression" => {
                let fr = self.new_frame(f);
                self.push_field(&it, "left", Role::Use, fr);
                self.push_field(&it, "name", STRONG, fr);
                self.push_field(&it, "pattern", STRONG, fr);
            }
            "as_pattern" => {
                let fr = self.new_frame(f);
                for (field, c) in self.children(node) {
                    let r = if field == Some("alias") {
                        STRONG
                    } else {
                        Role::Use
                    };
                    self.push(&it, c, r, fr);
                }
            }
            "import_statement" | "import_from_statement" if self.lang == Language::Python => {
                self.python_import(&it)
            }
            "import_statement" | "export_statement" => {}
            // ---- loops with a definition in the header ----
            "for_statement" if node.child_by_field_name("left").is_some() => {
                self.for_each(&it, &["left"], &["right"])
            }
            "for_in_statement" => self.for_each(&it, &["left"], &["right"]),
            "for_in_clause" => {
                let fr = self.new_frame(f);
                self.push_field(&it, "left", STRONG, fr);
                self.push_field(&it, "right", Role::Use, fr);
            }
            "enhanced_for_statement" => self.for_each(&it, &["name"], &["value"]),
            "for_range_loop" => {
                let fr = self.new_frame(f);
                self.push_field(&it, "declarator", Role::Declarator { init: true }, fr);
                self.push_field(&it, "right", Role::Use, fr);
                self.push_field(&it, "initializer", Role::Use, fr);
                self.compound_rest(&it, &["declarator", "right", "initializer", "type"], fr);
            }
            "labeled_statement" => {
                for (field, c) in self.children(node) {
                    if field != Some("label") && c.kind() != "identifier" {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            k if COMPOUND_KINDS.contains(&k) => self.compound_rest(&it, &[], f),
            // ---- calls ----
            "call" | "call_expression" | "method_invocation" => self.call(&it),
            "new_expression" if self.lang != Language::Cpp => {
                let fr = self.new_frame(f);
                for (field, c) in self.children(node) {
                    if field != Some("constructor") && field != Some("name") {
                        self.push(&it, c, Role::Use, fr);
                    }
                }
            }
            "object_creation_expression" => {
                let fr = self.new_frame(f);
                self.push_field(&it, "arguments", Role::Use, fr);
            }
            "explicit_constructor_invocation" => self.push_field(&it, "arguments", Role::Use, f),
            "keyword_argument" => self.push_field(&it, "value", Role::Use, f),
            "emit_statement" | "revert_statement" => {
                for (field, c) in self.children(node) {
                    if field != Some("name") && field != Some("error") {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            "call_struct_argument" | "struct_field_assignment" => {
                self.push_field(&it, "value", Role::Use, f)
            }
            // ---- accesses ----
            "attribute" | "field_access" | "field_expression" | "member_expression" => {
                if let Some(obj) = access_object(node) {
                    self.push(&it, obj, Role::Qualifier, f);
                }
            }
            "binary_expression" if self.lang == Language::Cpp => {
                if !self.cin_chain(&it) {
                    self.all(&it, Role::Use, f);
                }
            }
            "as_expression" | "satisfies_expression" => {
                if let Some(c) = node.named_child(0) {
                    self.push(&it, c, Role::Use, f);
                }
            }
            "jsx_opening_element" | "jsx_self_closing_element" => {
                for (field, c) in self.children(node) {
                    if field != Some("name") {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            "pair" if self.lang == Language::JavaScript || self.lang == Language::TypeScript => {
                for (field, c) in self.children(node) {
                    if field != Some("key") || c.kind() == "computed_property_name" {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            _ => self.all(&it, Role::Use, f),
        }
    }

    /// A node in write position. Returns false when the node is not a target form (the
    /// caller then treats it as an expression).
    fn target(&mut self, it: &Item<'t>) -> bool {
        let Role::Def { strong, read } = it.role else {
            return false;
        };
        let node = it.node;
        let f = it.frame;
        let weak = Role::Def {
            strong: false,
            read,
        };
        match node.kind() {
            // `a.f = y` is a new version of `a` made from the old one (field-insensitive).
            "attribute" | "field_access" | "field_expression" | "member_expression" => {
                if let Some(obj) = access_object(node) {
                    self.push(it, obj, Role::Def { strong, read: true }, f);
                }
            }
            "subscript" | "array_access" | "subscript_expression" | "slice_access" => {
                let base = ["value", "array", "argument", "object", "base"]
                    .iter()
                    .find_map(|b| node.child_by_field_name(b));
                for (_, c) in self.children(node) {
                    if Some(c) == base {
                        self.push(it, c, weak, f);
                    } else {
                        self.push(it, c, Role::Use, f);
                    }
                }
            }
            "pointer_expression" | "pointer_dereference" => {
                let op = node
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("*");
                let r = if op == "*" { weak } else { Role::Use };
                self.push_field(it, "argument", r, f);
            }
            "parenthesized_expression"
            | "expression"
            | "tuple_expression"
            | "tuple"
            | "tuple_pattern"
            | "pattern_list"
            | "list_pattern"
            | "list"
            | "expression_list"
            | "list_splat_pattern"
            | "list_splat"
            | "as_pattern_target"
            | "array_pattern"
            | "object_pattern"
            | "rest_pattern"
            | "variable_declaration_tuple"
            | "structured_binding_declarator"
            | "array"
            | "parenthesized_pattern"
            | "non_null_expression" => {
                self.all(it, it.role, f);
            }
            "pair_pattern" => {
                self.push_field(it, "value", it.role, f);
            }
            "assignment_pattern" | "object_assignment_pattern" => {
                self.push_field(it, "left", it.role, f);
                self.push_field(it, "right", Role::Use, f);
            }
            "variable_declaration" => {
                // Solidity `uint x` in a declaration statement.
                self.push_field(it, "name", it.role, f);
            }
            "cast_expression" => {
                self.push_field(it, "value", it.role, f);
            }
            // Pointer arithmetic `p + i` as a written location (`scanf("%d", a + i)`).
            "binary_expression"
                if matches!(self.lang, Language::C | Language::Cpp)
                    && matches!(
                        node.child_by_field_name("operator").map(|o| self.text(o)),
                        Some("+" | "-")
                    ) =>
            {
                self.push_field(it, "left", weak, f);
                self.push_field(it, "right", Role::Use, f);
            }
            _ => return false,
        }
        true
    }

    /// Parameter lists and C/C++ declarators.
    fn declaration_part(&mut self, it: &Item<'t>) {
        let node = it.node;
        let f = it.frame;
        let role = it.role;
        match node.kind() {
            // Default values are evaluated by the caller's scope: not reads of this function.
            "default_parameter" | "typed_default_parameter" | "optional_parameter_declaration" => {
                self.push_field(it, "name", role, f);
                self.push_field(it, "declarator", role, f);
            }
            "required_parameter" | "optional_parameter" => {
                self.push_field(it, "pattern", role, f);
            }
            "assignment_pattern" | "object_assignment_pattern" => {
                self.push_field(it, "left", role, f)
            }
            "formal_parameter" | "parameter" | "variable_declaration" => {
                self.push_field(it, "name", role, f)
            }
            "spread_parameter" => {
                for (_, c) in self.children(node) {
                    if c.kind() == "variable_declarator" {
                        if let Some(n) = c.child_by_field_name("name") {
                            self.push(it, n, role, f);
                        }
                    }
                }
            }
            "receiver_parameter" => {}
            "parameter_declaration" | "variadic_parameter_declaration" => {
                self.push_field(it, "declarator", role, f)
            }
            // A prototype in a declaration declares no variable; a lambda's declarator holds
            // its parameters.
            "function_declarator" | "abstract_function_declarator" => {
                if role == Role::Param {
                    self.push_field(it, "parameters", role, f);
                }
            }
            "array_declarator" => {
                self.push_field(it, "declarator", role, f);
                self.push_field(it, "size", Role::Use, f);
            }
            "pair_pattern" => self.push_field(it, "value", role, f),
            "init_declarator" => {
                let fr = self.new_frame(f);
                self.note_reader(
                    node.child_by_field_name("declarator"),
                    node.child_by_field_name("value"),
                );
                self.push_field(it, "declarator", Role::Declarator { init: true }, fr);
                self.push_field(it, "value", Role::Use, fr);
            }
            _ => {
                for (field, c) in self.children(node) {
                    if field == Some("type")
                        || field == Some("value")
                        || field == Some("default_value")
                    {
                        continue;
                    }
                    self.push(it, c, role, f);
                }
            }
        }
    }

    /// `sc = new Scanner(System.in)`: remember `sc` as an input reader.
    fn note_reader(&mut self, name: Option<Node<'t>>, value: Option<Node<'t>>) {
        let (Some(name), Some(value)) = (name, value) else {
            return;
        };
        if name.kind() != "identifier"
            || !matches!(
                value.kind(),
                "object_creation_expression" | "new_expression"
            )
        {
            return;
        }
        let ty = value
            .child_by_field_name("type")
            .or_else(|| value.child_by_field_name("constructor"))
            .map(|t| self.text(t))
            .unwrap_or("");
        if is_reader_type(ty) {
            let n = self.text(name);
            self.readers.insert(n);
        }
    }

    fn assignment(&mut self, it: &Item<'t>) {
        let node = it.node;
        let fr = self.new_frame(it.frame);
        self.note_reader(
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        );
        let op = node
            .child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("=");
        let augmented = node.kind().starts_with("augmented") || op != "=";
        let left = node.child_by_field_name("left").map(unwrap_expression);
        let right = node.child_by_field_name("right").map(unwrap_expression);
        let Some(left) = left else {
            self.all(it, Role::Use, fr);
            return;
        };
        let Some(right) = right else {
            // `x: int` declares without assigning.
            self.push_field(it, "type", Role::Skip, fr);
            return;
        };
        let left_role = if augmented { UPDATE } else { STRONG };
        // Element-wise tuple assignment `a, b = c, d`.
        if !augmented {
            let lk = left.kind();
            let rk = right.kind();
            let tuple_l = matches!(
                lk,
                "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple_expression"
            );
            let tuple_r = matches!(
                rk,
                "expression_list" | "tuple" | "list" | "tuple_expression"
            );
            if tuple_l && tuple_r {
                let ls: Vec<Node<'t>> = self.children(left).into_iter().map(|x| x.1).collect();
                let rs: Vec<Node<'t>> = self.children(right).into_iter().map(|x| x.1).collect();
                let splat = ls
                    .iter()
                    .chain(rs.iter())
                    .any(|n| n.kind().contains("splat") || n.kind().contains("spread"));
                if ls.len() == rs.len() && !splat && !ls.is_empty() {
                    for (l, r) in ls.into_iter().zip(rs) {
                        let pf = self.new_frame(fr);
                        self.push(it, l, left_role, pf);
                        self.push(it, r, Role::Use, pf);
                    }
                    return;
                }
            }
        }
        self.push(it, left, left_role, fr);
        self.push(it, right, Role::Use, fr);
    }

    fn for_each(&mut self, it: &Item<'t>, targets: &[&str], sources: &[&str]) {
        let fr = self.new_frame(it.frame);
        for t in targets {
            self.push_field(it, t, STRONG, fr);
        }
        for s in sources {
            self.push_field(it, s, Role::Use, fr);
        }
        let mut handled: Vec<&str> = targets.iter().chain(sources).copied().collect();
        handled.extend(["type", "dimensions", "kind", "operator"]);
        self.compound_rest(it, &handled, fr);
    }

    fn python_import(&mut self, it: &Item<'t>) {
        for (field, c) in self.children(it.node) {
            if field != Some("name") {
                continue;
            }
            let target = match c.kind() {
                "aliased_import" => c.child_by_field_name("alias"),
                "dotted_name" => c.named_child(if it.node.kind() == "import_statement" {
                    0
                } else {
                    c.named_child_count().saturating_sub(1)
                }),
                _ => None,
            };
            if let Some(t) = target {
                self.record(t, STRONG, it.frame);
            }
        }
    }

    /// `std::cin >> a >> b` defines `a` and `b`. Returns false when `it` is not such a chain.
    fn cin_chain(&mut self, it: &Item<'t>) -> bool {
        let mut rights = Vec::new();
        let mut cur = it.node;
        loop {
            let op = cur
                .child_by_field_name("operator")
                .map(|o| self.text(o))
                .unwrap_or("");
            if cur.kind() != "binary_expression" || op != ">>" {
                break;
            }
            if let Some(r) = cur.child_by_field_name("right") {
                rights.push(r);
            }
            match cur.child_by_field_name("left") {
                Some(l) => cur = l,
                None => return false,
            }
        }
        let t = self.text(cur);
        if rights.is_empty() || !(t == "cin" || t == "std::cin") {
            return false;
        }
        let fr = self.new_frame(it.frame);
        for r in rights {
            self.push(it, r, STRONG, fr);
        }
        true
    }

    fn call(&mut self, it: &Item<'t>) {
        let node = it.node;
        let fr = self.new_frame(it.frame);
        // Callee: (receiver, method or function name).
        let (receiver, name, other_callee): (Option<Node<'t>>, &'t str, Option<Node<'t>>) =
            if node.kind() == "method_invocation" {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or("");
                (node.child_by_field_name("object"), name, None)
            } else {
                match node.child_by_field_name("function").map(unwrap_expression) {
                    Some(callee) => match callee.kind() {
                        "identifier" => (None, self.text(callee), None),
                        "qualified_identifier" | "scoped_identifier" => {
                            let t = self.text(callee);
                            (None, t.rsplit("::").next().unwrap_or(t), None)
                        }
                        "template_function" => {
                            let t = callee
                                .child_by_field_name("name")
                                .map(|n| self.text(n))
                                .unwrap_or("");
                            (None, t.rsplit("::").next().unwrap_or(t), None)
                        }
                        "attribute" | "field_expression" | "member_expression" => {
                            let name = ["attribute", "field", "property"]
                                .iter()
                                .find_map(|f| callee.child_by_field_name(f))
                                .map(|n| self.text(n))
                                .unwrap_or("");
                            (access_object(callee), name, None)
                        }
                        _ => (None, "", Some(callee)),
                    },
                    None => (None, "", None),
                }
            };
        if let Some(c) = other_callee {
            self.push(it, c, Role::Use, fr);
        }
        // `Arrays.fill(a, 0)`, `heapq.heappush(h, x)`: a class or module receiver (one the
        // function does not define).
        let receiver_name = receiver
            .filter(|r| r.kind() == "identifier")
            .map(|r| self.text(r));
        let static_receiver = receiver_name.is_some_and(|t| {
            let looks_static = t.starts_with(|c: char| c.is_ascii_uppercase())
                || matches!(t, "heapq" | "random" | "bisect");
            if looks_static
                && (MUTATING_METHODS.contains(&name) || FIRST_ARG_MUTATORS.contains(&name))
            {
                self.context_sensitive = true;
            }
            looks_static && !self.ctx.known.contains(t)
        });
        let ambiguous_input = AMBIGUOUS_INPUT_METHODS.contains(&name);
        if let Some(t) = receiver_name {
            if INPUT_METHODS.contains(&name) {
                self.readers.insert(t);
            } else if ambiguous_input {
                self.context_sensitive = true;
            }
        }
        if let Some(r) = receiver {
            let reader = receiver_name.is_some_and(|t| {
                INPUT_METHODS.contains(&name) || (ambiguous_input && self.ctx.readers.contains(t))
            });
            let role = if reader {
                Role::Skip
            } else if MUTATING_METHODS.contains(&name) && !static_receiver {
                UPDATE
            } else {
                Role::Qualifier
            };
            self.push(it, r, role, fr);
        }
        // Arguments.
        let mut args: Vec<Node<'t>> = Vec::new();
        if let Some(a) = node.child_by_field_name("arguments") {
            if matches!(a.kind(), "argument_list" | "arguments") {
                args.extend(self.children(a).into_iter().map(|x| x.1));
            } else {
                args.push(a);
            }
        }
        if self.lang == Language::Solidity {
            args.extend(
                self.children(node)
                    .into_iter()
                    .filter(|(_, c)| c.kind() == "call_argument")
                    .map(|x| x.1),
            );
        }
        let c_like = matches!(self.lang, Language::C | Language::Cpp);
        let scanf_from = match name {
            "scanf" | "scanf_s" | "vscanf" => Some(1),
            "fscanf" | "sscanf" | "fscanf_s" | "sscanf_s" => Some(2),
            _ => None,
        };
        for (i, a) in args.into_iter().enumerate() {
            let role = if c_like {
                let addr = address_of(self, a);
                match scanf_from {
                    Some(from) if i >= from => match addr {
                        Some(inner) => {
                            self.push(it, inner, STRONG, fr);
                            continue;
                        }
                        None => WEAK_W,
                    },
                    _ if i == 0 && C_FIRST_ARG_WRITTEN.contains(&name) => {
                        let r = if matches!(name, "strcat" | "strncat" | "qsort") {
                            UPDATE
                        } else {
                            STRONG
                        };
                        match addr {
                            Some(inner) => {
                                self.push(it, inner, r, fr);
                                continue;
                            }
                            None => r,
                        }
                    }
                    _ if i == 1 && name == "getline" => STRONG,
                    _ => match addr {
                        Some(inner) => {
                            self.push(it, inner, WEAK_RW, fr);
                            continue;
                        }
                        None => Role::Use,
                    },
                }
            } else if i == 0
                && FIRST_ARG_MUTATORS.contains(&name)
                && (receiver.is_none() || static_receiver)
            {
                if matches!(name, "fill" | "setAll") {
                    STRONG
                } else {
                    UPDATE
                }
            } else {
                Role::Use
            };
            self.push(it, a, role, fr);
        }
    }

    fn closure(&mut self, it: &Item<'t>) {
        let node = it.node;
        let name = match node.kind() {
            "function_definition" | "function_declaration" | "generator_function_declaration" => {
                node.child_by_field_name("name")
            }
            _ => None,
        };
        if !self.summarise {
            for (field, c) in self.children(node) {
                let role = match field {
                    Some("name") => STRONG,
                    Some("parameters" | "parameter" | "declarator") => Role::Param,
                    Some("return_type" | "type_parameters" | "type") => Role::Skip,
                    _ => Role::Use,
                };
                self.push(it, c, role, it.frame);
            }
            return;
        }
        // Shallow: summarise by free variables (uses not defined inside).
        let mut sub = Walker::new(self.file, self.ctx, true, node.byte_range(), self.cancel);
        sub.summarise = false;
        sub.stack.push(Item {
            node,
            role: Role::Use,
            frame: 0,
            clip: false,
        });
        sub.run();
        self.truncated |= sub.truncated;
        self.context_sensitive |= sub.context_sensitive;
        self.readers.append(&mut sub.readers);
        let defined: BTreeSet<&str> = sub.defs.keys().map(|k| k.0).collect();
        let fr = if name.is_some() {
            self.new_frame(it.frame)
        } else {
            it.frame
        };
        for ((n, line, _), q) in std::mem::take(&mut sub.uses) {
            if !defined.contains(n) {
                let e = self.uses.entry((n, line, fr)).or_insert(q);
                *e &= q;
            }
        }
        if let Some(n) = name {
            self.record(n, STRONG, fr);
        }
    }

    fn class(&mut self, it: &Item<'t>) {
        let fr = self.new_frame(it.frame);
        if let Some(n) = it.node.child_by_field_name("name") {
            self.record(n, STRONG, fr);
        }
        self.push_field(it, "superclasses", Role::Use, fr);
    }

    /// Converts the collected occurrences into facts.
    fn finish(self) -> NodeFacts {
        let mut use_index: BTreeMap<(&str, usize), usize> = BTreeMap::new();
        let mut uses: Vec<UseFact> = Vec::new();
        let nframes = self.frames.len();
        let mut frame_uses: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nframes];
        for (&(name, line, frame), &q) in &self.uses {
            let idx = *use_index.entry((name, line)).or_insert_with(|| {
                uses.push(UseFact {
                    var: name.to_string(),
                    line,
                    qualifier: q,
                });
                uses.len() - 1
            });
            if let Some(u) = uses.get_mut(idx) {
                u.qualifier &= q;
            }
            if let Some(s) = frame_uses.get_mut(frame as usize) {
                s.insert(idx);
            }
        }
        // Propagate uses from nested frames to their parents (children have larger ids).
        let mut budget = FRAME_BUDGET;
        let mut coarse = false;
        for f in (1..nframes).rev() {
            let parent = self.frames.get(f).copied().unwrap_or(0) as usize;
            if parent == f {
                continue;
            }
            let moved = std::mem::take(&mut frame_uses[f]);
            budget = budget.saturating_sub(moved.len());
            if budget == 0 {
                coarse = true;
                break;
            }
            if let Some(p) = frame_uses.get_mut(parent) {
                p.extend(moved.iter().copied());
            }
            frame_uses[f] = moved;
        }
        let all: Vec<usize> = (0..uses.len()).collect();
        let mut defs: BTreeMap<&str, DefFact> = BTreeMap::new();
        for (&(name, frame), &(line, strong)) in &self.defs {
            let strong = strong && !self.conditional;
            let sources: Vec<usize> = if coarse {
                all.clone()
            } else {
                frame_uses
                    .get(frame as usize)
                    .map(|s| s.iter().copied().collect())
                    .unwrap_or_default()
            };
            let e = defs.entry(name).or_insert_with(|| DefFact {
                var: name.to_string(),
                line,
                strong,
                sources: Vec::new(),
            });
            e.line = e.line.min(line);
            e.strong |= strong;
            let mut merged: BTreeSet<usize> = e.sources.iter().copied().collect();
            merged.extend(sources);
            e.sources = merged.into_iter().collect();
        }
        NodeFacts {
            defs: defs.into_values().collect(),
            uses,
            truncated: self.truncated,
            readers: self.readers.iter().map(|r| r.to_string()).collect(),
            context_sensitive: self.context_sensitive,
        }
    }
}

/// The stack item for `node`, a child of `parent`, or `None` when it is skipped or lies outside
/// the analysed range.
fn child_item<'t>(
    range: &Range<usize>,
    parent: &Item<'t>,
    node: Node<'t>,
    role: Role,
    frame: u32,
) -> Option<Item<'t>> {
    if role == Role::Skip {
        return None;
    }
    let clip = if parent.clip {
        let (s, e) = (node.start_byte(), node.end_byte());
        if e <= range.start || s >= range.end {
            return None;
        }
        !(s >= range.start && e <= range.end)
    } else {
        false
    };
    Some(Item {
        node,
        role,
        frame,
        clip,
    })
}

/// Solidity wraps expressions in `expression` nodes: see through them.
fn unwrap_expression(mut node: Node<'_>) -> Node<'_> {
    for _ in 0..64 {
        if node.kind() == "expression" && node.named_child_count() == 1 {
            match node.named_child(0) {
                Some(c) => node = c,
                None => break,
            }
        } else {
            break;
        }
    }
    node
}

/// The object of an attribute/field/member access.
fn access_object(node: Node<'_>) -> Option<Node<'_>> {
    ["object", "argument"]
        .iter()
        .find_map(|f| node.child_by_field_name(f))
}

/// For `&x` (C/C++), the operand.
fn address_of<'t>(w: &Walker<'t, '_>, node: Node<'t>) -> Option<Node<'t>> {
    if node.kind() != "pointer_expression" {
        return None;
    }
    let op = node.child_by_field_name("operator").map(|o| w.text(o))?;
    if op == "&" {
        node.child_by_field_name("argument")
    } else {
        None
    }
}

/// Def/use facts of the statement or header occupying `range` (a CFG node's byte range).
/// Children of the smallest node spanning the range that lie outside it are ignored, so a
/// range covering only a loop header yields the header's facts. Bodies of compound statements
/// are skipped (they are separate CFG nodes).
pub fn extract_range(file: &ParsedFile, range: Range<usize>, cancel: &Cancel) -> NodeFacts {
    extract(file, range, false, &Context::default(), cancel)
}

/// Like [`extract_range`], but a range that is exactly a compound statement is walked with
/// its bodies (for CFG nodes that stand for a whole statement, such as collapsed deep nesting
/// or an unparsed region).
pub fn extract_statement(file: &ParsedFile, range: Range<usize>, cancel: &Cancel) -> NodeFacts {
    extract(file, range, true, &Context::default(), cancel)
}

/// Extraction with knowledge of the whole function; `whole` as in [`extract_statement`].
pub fn extract(
    file: &ParsedFile,
    range: Range<usize>,
    whole: bool,
    ctx: &Context,
    cancel: &Cancel,
) -> NodeFacts {
    let len = file.text.len();
    let start = range.start.min(len);
    let end = range.end.min(len);
    if start >= end {
        return NodeFacts::default();
    }
    let Some(node) = file.root().descendant_for_byte_range(start, end) else {
        return NodeFacts::default();
    };
    let clip = !(node.start_byte() >= start && node.end_byte() <= end);
    let mut w = Walker::new(file, ctx, whole && !clip, start..end, cancel);
    w.stack.push(Item {
        node,
        role: Role::Use,
        frame: 0,
        clip,
    });
    w.run();
    w.finish()
}

/// Definitions made by a function's parameter list (`node` is the list, or for Solidity the
/// function itself, whose `parameter` children are walked).
pub fn extract_parameters(file: &ParsedFile, list: Node<'_>, cancel: &Cancel) -> NodeFacts {
    let ctx = Context::default();
    let mut w = Walker::new(file, &ctx, false, list.byte_range(), cancel);
    if file.language == Language::Solidity && list.kind() != "parameter" {
        let kids: Vec<Node<'_>> = w
            .children(list)
            .into_iter()
            .filter(|(_, c)| c.kind() == "parameter")
            .map(|x| x.1)
            .collect();
        for k in kids.into_iter().rev() {
            w.stack.push(Item {
                node: k,
                role: Role::Param,
                frame: 0,
                clip: false,
            });
        }
    } else {
        w.stack.push(Item {
            node: list,
            role: Role::Param,
            frame: 0,
            clip: false,
        });
    }
    w.run();
    w.finish()
}
