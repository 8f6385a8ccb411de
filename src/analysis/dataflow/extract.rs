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

use crate::syntax::lang::{self, CallShape, Class, LangSpec};
use crate::syntax::lang::{field, kind};
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
const BODY_FIELDS: &[&str] = &[
    field::BODY,
    field::CONSEQUENCE,
    field::ALTERNATIVE,
    field::HANDLER,
    field::FINALIZER,
];

/// Node kinds that never contain variable reads of the enclosing function.
const SKIP_KINDS: &[&str] = &[
    kind::COMMENT,
    kind::LINE_COMMENT,
    kind::BLOCK_COMMENT,
    // types
    kind::TYPE,
    kind::TYPE_ANNOTATION,
    kind::TYPE_ARGUMENTS,
    kind::TYPE_PARAMETERS,
    kind::TYPE_PARAMETER,
    kind::TYPE_IDENTIFIER,
    kind::TYPE_DESCRIPTOR,
    kind::PRIMITIVE_TYPE,
    kind::SIZED_TYPE_SPECIFIER,
    kind::GENERIC_TYPE,
    kind::SCOPED_TYPE_IDENTIFIER,
    kind::INTEGRAL_TYPE,
    kind::FLOATING_POINT_TYPE,
    kind::BOOLEAN_TYPE,
    kind::VOID_TYPE,
    kind::ARRAY_TYPE,
    kind::CATCH_TYPE,
    kind::DIMENSIONS,
    kind::TYPE_NAME,
    kind::USER_DEFINED_TYPE,
    kind::PREDEFINED_TYPE,
    kind::TEMPLATE_ARGUMENT_LIST,
    kind::TEMPLATE_FUNCTION,
    kind::TEMPLATE_METHOD,
    kind::STRUCT_SPECIFIER,
    kind::ENUM_SPECIFIER,
    kind::UNION_SPECIFIER,
    // names that are not variables
    kind::QUALIFIED_IDENTIFIER,
    kind::SCOPED_IDENTIFIER,
    kind::NAMESPACE_IDENTIFIER,
    kind::FIELD_IDENTIFIER,
    kind::PROPERTY_IDENTIFIER,
    kind::STATEMENT_IDENTIFIER,
    kind::DOTTED_NAME,
    kind::DECORATOR,
    kind::MARKER_ANNOTATION,
    kind::ANNOTATION,
    kind::MODIFIERS,
    kind::VISIBILITY,
    kind::STATE_MUTABILITY,
    kind::MODIFIER_INVOCATION,
    kind::METHOD_REFERENCE,
    kind::CLASS_LITERAL,
    kind::SUPER,
    // statements without reads
    kind::GLOBAL_STATEMENT,
    kind::NONLOCAL_STATEMENT,
    kind::PASS_STATEMENT,
    kind::BREAK_STATEMENT,
    kind::CONTINUE_STATEMENT,
    kind::GOTO_STATEMENT,
    kind::SWITCH_LABEL,
    kind::IMPORT_DECLARATION,
    kind::PACKAGE_DECLARATION,
    kind::PREPROC_INCLUDE,
    kind::PREPROC_DEF,
    kind::PREPROC_FUNCTION_DEF,
    kind::PREPROC_CALL,
    kind::GNU_ASM_EXPRESSION,
    // C/C++ operands of `sizeof`/`alignof` are not evaluated
    kind::SIZEOF_EXPRESSION,
    kind::ALIGNOF_EXPRESSION,
    kind::OFFSETOF_EXPRESSION,
    kind::ASSEMBLY_STATEMENT,
    kind::JSX_CLOSING_ELEMENT,
];

/// Compound statements: their bodies are separate CFG nodes.
const COMPOUND_KINDS: &[&str] = &[
    kind::IF_STATEMENT,
    kind::ELIF_CLAUSE,
    kind::ELSE_CLAUSE,
    kind::FOR_STATEMENT,
    kind::FOR_IN_STATEMENT,
    kind::ENHANCED_FOR_STATEMENT,
    kind::FOR_RANGE_LOOP,
    kind::WHILE_STATEMENT,
    kind::DO_STATEMENT,
    kind::DO_WHILE_STATEMENT,
    kind::TRY_STATEMENT,
    kind::TRY_WITH_RESOURCES_STATEMENT,
    kind::CATCH_CLAUSE,
    kind::EXCEPT_CLAUSE,
    "except_group_clause",
    kind::FINALLY_CLAUSE,
    kind::WITH_STATEMENT,
    kind::SWITCH_STATEMENT,
    kind::SWITCH_EXPRESSION,
    kind::CASE_STATEMENT,
    kind::SWITCH_CASE,
    kind::SWITCH_DEFAULT,
    kind::SWITCH_RULE,
    kind::SWITCH_BLOCK_STATEMENT_GROUP,
    kind::MATCH_STATEMENT,
    kind::CASE_CLAUSE,
    kind::SYNCHRONIZED_STATEMENT,
    "unchecked_block",
];

/// Functions, lambdas and comprehensions: summarised by their free variables.
const CLOSURE_KINDS: &[&str] = &[
    kind::LAMBDA,
    kind::LAMBDA_EXPRESSION,
    kind::ARROW_FUNCTION,
    kind::FUNCTION_EXPRESSION,
    "function",
    kind::GENERATOR_FUNCTION,
    kind::FUNCTION_DEFINITION,
    kind::FUNCTION_DECLARATION,
    kind::GENERATOR_FUNCTION_DECLARATION,
    kind::LIST_COMPREHENSION,
    kind::SET_COMPREHENSION,
    kind::DICTIONARY_COMPREHENSION,
    kind::GENERATOR_EXPRESSION,
];

const CLASS_KINDS: &[&str] = &[
    kind::CLASS_DEFINITION,
    kind::CLASS_DECLARATION,
    kind::CLASS,
    kind::ABSTRACT_CLASS_DECLARATION,
    kind::INTERFACE_DECLARATION,
    kind::ENUM_DECLARATION,
    kind::RECORD_DECLARATION,
];

fn is_statement_like(kind: &str) -> bool {
    kind.ends_with("_statement")
        || kind.ends_with("_declaration")
        || kind.ends_with("_definition")
        || matches!(
            kind,
            kind::BLOCK
                | kind::COMPOUND_STATEMENT
                | kind::STATEMENT_BLOCK
                | kind::BLOCK_STATEMENT
                | kind::DECLARATION
                | kind::STATEMENT
                | kind::ELSE_CLAUSE
                | kind::ELIF_CLAUSE
                | kind::EXCEPT_CLAUSE
                | kind::FINALLY_CLAUSE
                | kind::CATCH_CLAUSE
                | kind::SWITCH_BLOCK
                | kind::SWITCH_BODY
                | kind::SWITCH_BLOCK_STATEMENT_GROUP
                | kind::SWITCH_RULE
                | kind::CASE_CLAUSE
                | kind::CASE_STATEMENT
                | kind::SWITCH_CASE
                | kind::SWITCH_DEFAULT
                | kind::FIELD_DECLARATION_LIST
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
    /// What this file's language calls its constructs.
    fn spec(&self) -> &'static LangSpec {
        lang::spec(self.lang)
    }

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
        let name = if node.kind() == kind::THIS {
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
            kind::IDENTIFIER => true,
            kind::THIS => matches!(
                self.lang,
                Language::Java | Language::Cpp | Language::JavaScript | Language::TypeScript
            ),
            kind::SHORTHAND_PROPERTY_IDENTIFIER | kind::SHORTHAND_PROPERTY_IDENTIFIER_PATTERN => {
                true
            }
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
            if it.node.kind() == kind::EXCEPT_CLAUSE && field == Some(field::VALUE) {
                // `except E as e`: `E` names a type; only `e` is a variable.
                if c.kind() == kind::AS_PATTERN {
                    self.push_field(&Item { node: c, ..*it }, field::ALIAS, STRONG, frame);
                }
                continue;
            }
            let role = match (it.node.kind(), field) {
                (_, Some("alias")) => STRONG,
                (kind::CATCH_CLAUSE, Some(kind::PARAMETER)) => STRONG,
                (kind::CATCH_CLAUSE, Some(kind::PARAMETERS)) => Role::Param,
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
                kind::PARENTHESIZED_EXPRESSION
                    | kind::UNARY_EXPRESSION
                    | kind::COMPARISON_OPERATOR
                    | kind::BOOLEAN_OPERATOR
                    | kind::NOT_OPERATOR
                    | kind::CONDITIONAL_EXPRESSION
                    | kind::TERNARY_EXPRESSION
                    | kind::EXPRESSION
            )
            || (kind == kind::BINARY_OPERATOR && role == Role::Use)
            || (kind == kind::BINARY_EXPRESSION && role == Role::Use && self.lang != Language::Cpp)
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
            kind::ASSIGNMENT
            | kind::ASSIGNMENT_EXPRESSION
            | kind::AUGMENTED_ASSIGNMENT
            | kind::AUGMENTED_ASSIGNMENT_EXPRESSION => self.assignment(&it),
            kind::NAMED_EXPRESSION => {
                let fr = self.new_frame(f);
                self.push_field(&it, field::NAME, STRONG, fr);
                self.push_field(&it, field::VALUE, Role::Use, fr);
            }
            kind::UPDATE_EXPRESSION => {
                let fr = self.new_frame(f);
                self.all(&it, UPDATE, fr);
            }
            kind::DECLARATION => {
                // C/C++ declaration: type skipped; declarators with or without initialisers.
                for (field, c) in self.children(node) {
                    if field == Some(field::DECLARATOR) {
                        if c.kind() == kind::INIT_DECLARATOR {
                            self.push(&it, c, Role::Use, f);
                        } else {
                            self.push(&it, c, Role::Declarator { init: false }, f);
                        }
                    } else if field != Some(field::TYPE) {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            kind::INIT_DECLARATOR => {
                let fr = self.new_frame(f);
                self.note_reader(
                    node.child_by_field_name(field::DECLARATOR),
                    node.child_by_field_name(field::VALUE),
                );
                self.push_field(&it, field::DECLARATOR, Role::Declarator { init: true }, fr);
                self.push_field(&it, field::VALUE, Role::Use, fr);
            }
            kind::LOCAL_VARIABLE_DECLARATION
            | kind::LEXICAL_DECLARATION
            | kind::VARIABLE_DECLARATION
                if self.lang != Language::Solidity =>
            {
                for (field, c) in self.children(node) {
                    if field != Some(field::TYPE) && field != Some(field::KIND) {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            kind::VARIABLE_DECLARATOR => {
                let fr = self.new_frame(f);
                let has_value = node.child_by_field_name(field::VALUE).is_some();
                self.note_reader(
                    node.child_by_field_name(field::NAME),
                    node.child_by_field_name(field::VALUE),
                );
                for (field, c) in self.children(node) {
                    match field {
                        Some(field::NAME) if has_value => self.push(&it, c, STRONG, fr),
                        Some(field::VALUE) => self.push(&it, c, Role::Use, fr),
                        _ => {}
                    }
                }
            }
            kind::VARIABLE_DECLARATION_STATEMENT => {
                let fr = self.new_frame(f);
                let has_value = node.child_by_field_name(field::VALUE).is_some();
                for (field, c) in self.children(node) {
                    if field == Some(field::VALUE) {
                        self.push(&it, c, Role::Use, fr);
                    } else if has_value {
                        self.push(&it, c, STRONG, fr);
                    }
                }
            }
            kind::RESOURCE => {
                let fr = self.new_frame(f);
                if node.child_by_field_name(field::NAME).is_some() {
                    self.push_field(&it, field::NAME, STRONG, fr);
                    self.push_field(&it, field::VALUE, Role::Use, fr);
                } else {
                    self.all(&it, Role::Use, fr);
                }
            }
            kind::CATCH_FORMAL_PARAMETER => self.push_field(&it, field::NAME, STRONG, f),
            kind::INSTANCEOF_EXPRESSION => {
                let fr = self.new_frame(f);
                self.push_field(&it, field::LEFT, Role::Use, fr);
                self.push_field(&it, field::NAME, STRONG, fr);
                self.push_field(&it, field::PATTERN, STRONG, fr);
            }
            kind::AS_PATTERN => {
                let fr = self.new_frame(f);
                for (field, c) in self.children(node) {
                    let r = if field == Some(field::ALIAS) {
                        STRONG
                    } else {
                        Role::Use
                    };
                    self.push(&it, c, r, fr);
                }
            }
            kind::IMPORT_STATEMENT | kind::IMPORT_FROM_STATEMENT
                if self.lang == Language::Python =>
            {
                self.python_import(&it)
            }
            kind::IMPORT_STATEMENT | kind::EXPORT_STATEMENT => {}
            // ---- loops with a definition in the header ----
            kind::FOR_STATEMENT if node.child_by_field_name(field::LEFT).is_some() => {
                self.for_each(&it, &[field::LEFT], &[field::RIGHT])
            }
            kind::FOR_IN_STATEMENT => self.for_each(&it, &[field::LEFT], &[field::RIGHT]),
            kind::FOR_IN_CLAUSE => {
                let fr = self.new_frame(f);
                self.push_field(&it, field::LEFT, STRONG, fr);
                self.push_field(&it, field::RIGHT, Role::Use, fr);
            }
            kind::ENHANCED_FOR_STATEMENT => self.for_each(&it, &[field::NAME], &[field::VALUE]),
            kind::FOR_RANGE_LOOP => {
                let fr = self.new_frame(f);
                self.push_field(&it, field::DECLARATOR, Role::Declarator { init: true }, fr);
                self.push_field(&it, field::RIGHT, Role::Use, fr);
                self.push_field(&it, field::INITIALIZER, Role::Use, fr);
                self.compound_rest(
                    &it,
                    &[
                        field::DECLARATOR,
                        field::RIGHT,
                        field::INITIALIZER,
                        field::TYPE,
                    ],
                    fr,
                );
            }
            kind::LABELED_STATEMENT => {
                for (field, c) in self.children(node) {
                    if field != Some(field::LABEL) && c.kind() != kind::IDENTIFIER {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            k if COMPOUND_KINDS.contains(&k) => self.compound_rest(&it, &[], f),
            // ---- calls ----
            _ if self.spec().is(node, Class::Call) => self.call(&it),
            kind::NEW_EXPRESSION if self.lang != Language::Cpp => {
                let fr = self.new_frame(f);
                for (field, c) in self.children(node) {
                    if field != Some(field::CONSTRUCTOR) && field != Some(field::NAME) {
                        self.push(&it, c, Role::Use, fr);
                    }
                }
            }
            kind::OBJECT_CREATION_EXPRESSION => {
                let fr = self.new_frame(f);
                self.push_field(&it, field::ARGUMENTS, Role::Use, fr);
            }
            kind::EXPLICIT_CONSTRUCTOR_INVOCATION => {
                self.push_field(&it, field::ARGUMENTS, Role::Use, f)
            }
            kind::KEYWORD_ARGUMENT => self.push_field(&it, field::VALUE, Role::Use, f),
            kind::EMIT_STATEMENT | kind::REVERT_STATEMENT => {
                for (field, c) in self.children(node) {
                    if field != Some(field::NAME) && field != Some(field::ERROR) {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            kind::CALL_STRUCT_ARGUMENT | kind::STRUCT_FIELD_ASSIGNMENT => {
                self.push_field(&it, field::VALUE, Role::Use, f)
            }
            // ---- accesses ----
            kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::FIELD_EXPRESSION
            | kind::MEMBER_EXPRESSION => {
                if let Some(obj) = access_object(node) {
                    self.push(&it, obj, Role::Qualifier, f);
                }
            }
            kind::BINARY_EXPRESSION if self.lang == Language::Cpp => {
                if !self.cin_chain(&it) {
                    self.all(&it, Role::Use, f);
                }
            }
            kind::AS_EXPRESSION | kind::SATISFIES_EXPRESSION => {
                if let Some(c) = node.named_child(0) {
                    self.push(&it, c, Role::Use, f);
                }
            }
            kind::JSX_OPENING_ELEMENT | kind::JSX_SELF_CLOSING_ELEMENT => {
                for (field, c) in self.children(node) {
                    if field != Some(field::NAME) {
                        self.push(&it, c, Role::Use, f);
                    }
                }
            }
            kind::PAIR
                if self.lang == Language::JavaScript || self.lang == Language::TypeScript =>
            {
                for (field, c) in self.children(node) {
                    if field != Some(field::KEY) || c.kind() == kind::COMPUTED_PROPERTY_NAME {
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
            kind::ATTRIBUTE
            | kind::FIELD_ACCESS
            | kind::FIELD_EXPRESSION
            | kind::MEMBER_EXPRESSION => {
                if let Some(obj) = access_object(node) {
                    self.push(it, obj, Role::Def { strong, read: true }, f);
                }
            }
            kind::SUBSCRIPT
            | kind::ARRAY_ACCESS
            | kind::SUBSCRIPT_EXPRESSION
            | kind::SLICE_ACCESS => {
                let base = [
                    field::VALUE,
                    field::ARRAY,
                    field::ARGUMENT,
                    field::OBJECT,
                    field::BASE,
                ]
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
            kind::POINTER_EXPRESSION => {
                let op = node
                    .child_by_field_name(field::OPERATOR)
                    .map(|o| self.text(o))
                    .unwrap_or("*");
                let r = if op == "*" { weak } else { Role::Use };
                self.push_field(it, field::ARGUMENT, r, f);
            }
            kind::PARENTHESIZED_EXPRESSION
            | kind::EXPRESSION
            | kind::TUPLE_EXPRESSION
            | kind::TUPLE
            | kind::TUPLE_PATTERN
            | kind::PATTERN_LIST
            | kind::LIST_PATTERN
            | kind::LIST
            | kind::EXPRESSION_LIST
            | kind::LIST_SPLAT_PATTERN
            | kind::LIST_SPLAT
            | kind::AS_PATTERN_TARGET
            | kind::ARRAY_PATTERN
            | kind::OBJECT_PATTERN
            | kind::REST_PATTERN
            | kind::VARIABLE_DECLARATION_TUPLE
            | kind::STRUCTURED_BINDING_DECLARATOR
            | kind::ARRAY
            | kind::NON_NULL_EXPRESSION => {
                self.all(it, it.role, f);
            }
            kind::PAIR_PATTERN => {
                self.push_field(it, field::VALUE, it.role, f);
            }
            kind::ASSIGNMENT_PATTERN | kind::OBJECT_ASSIGNMENT_PATTERN => {
                self.push_field(it, field::LEFT, it.role, f);
                self.push_field(it, field::RIGHT, Role::Use, f);
            }
            kind::VARIABLE_DECLARATION => {
                // Solidity `uint x` in a declaration statement.
                self.push_field(it, field::NAME, it.role, f);
            }
            kind::CAST_EXPRESSION => {
                self.push_field(it, field::VALUE, it.role, f);
            }
            // Pointer arithmetic `p + i` as a written location (`scanf("%d", a + i)`).
            kind::BINARY_EXPRESSION
                if matches!(self.lang, Language::C | Language::Cpp)
                    && matches!(
                        node.child_by_field_name(field::OPERATOR)
                            .map(|o| self.text(o)),
                        Some("+" | "-")
                    ) =>
            {
                self.push_field(it, field::LEFT, weak, f);
                self.push_field(it, field::RIGHT, Role::Use, f);
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
            kind::DEFAULT_PARAMETER
            | kind::TYPED_DEFAULT_PARAMETER
            | kind::OPTIONAL_PARAMETER_DECLARATION => {
                self.push_field(it, field::NAME, role, f);
                self.push_field(it, field::DECLARATOR, role, f);
            }
            kind::REQUIRED_PARAMETER | kind::OPTIONAL_PARAMETER => {
                self.push_field(it, field::PATTERN, role, f);
            }
            kind::ASSIGNMENT_PATTERN | kind::OBJECT_ASSIGNMENT_PATTERN => {
                self.push_field(it, field::LEFT, role, f)
            }
            kind::FORMAL_PARAMETER | kind::PARAMETER | kind::VARIABLE_DECLARATION => {
                self.push_field(it, field::NAME, role, f)
            }
            kind::SPREAD_PARAMETER => {
                for (_, c) in self.children(node) {
                    if c.kind() == kind::VARIABLE_DECLARATOR {
                        if let Some(n) = c.child_by_field_name(field::NAME) {
                            self.push(it, n, role, f);
                        }
                    }
                }
            }
            kind::RECEIVER_PARAMETER => {}
            kind::PARAMETER_DECLARATION | kind::VARIADIC_PARAMETER_DECLARATION => {
                self.push_field(it, field::DECLARATOR, role, f)
            }
            // A prototype in a declaration declares no variable; a lambda's declarator holds
            // its parameters.
            kind::FUNCTION_DECLARATOR | kind::ABSTRACT_FUNCTION_DECLARATOR => {
                if role == Role::Param {
                    self.push_field(it, field::PARAMETERS, role, f);
                }
            }
            kind::ARRAY_DECLARATOR => {
                self.push_field(it, field::DECLARATOR, role, f);
                self.push_field(it, field::SIZE, Role::Use, f);
            }
            kind::PAIR_PATTERN => self.push_field(it, field::VALUE, role, f),
            kind::INIT_DECLARATOR => {
                let fr = self.new_frame(f);
                self.note_reader(
                    node.child_by_field_name(field::DECLARATOR),
                    node.child_by_field_name(field::VALUE),
                );
                self.push_field(it, field::DECLARATOR, Role::Declarator { init: true }, fr);
                self.push_field(it, field::VALUE, Role::Use, fr);
            }
            _ => {
                for (field, c) in self.children(node) {
                    if field == Some(field::TYPE)
                        || field == Some(field::VALUE)
                        || field == Some(field::DEFAULT_VALUE)
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
        if name.kind() != kind::IDENTIFIER
            || !matches!(
                value.kind(),
                kind::OBJECT_CREATION_EXPRESSION | kind::NEW_EXPRESSION
            )
        {
            return;
        }
        let ty = value
            .child_by_field_name(field::TYPE)
            .or_else(|| value.child_by_field_name(field::CONSTRUCTOR))
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
            node.child_by_field_name(field::LEFT),
            node.child_by_field_name(field::RIGHT),
        );
        let op = node
            .child_by_field_name(field::OPERATOR)
            .map(|o| self.text(o))
            .unwrap_or("=");
        let augmented = node.kind().starts_with("augmented") || op != "=";
        let left = node.child_by_field_name(field::LEFT).map(unwrap_expression);
        let right = node
            .child_by_field_name(field::RIGHT)
            .map(unwrap_expression);
        let Some(left) = left else {
            self.all(it, Role::Use, fr);
            return;
        };
        let Some(right) = right else {
            // `x: int` declares without assigning.
            self.push_field(it, field::TYPE, Role::Skip, fr);
            return;
        };
        let left_role = if augmented { UPDATE } else { STRONG };
        // Element-wise tuple assignment `a, b = c, d`.
        if !augmented {
            let lk = left.kind();
            let rk = right.kind();
            let tuple_l = matches!(
                lk,
                kind::PATTERN_LIST
                    | kind::TUPLE_PATTERN
                    | kind::LIST_PATTERN
                    | kind::TUPLE_EXPRESSION
            );
            let tuple_r = matches!(
                rk,
                kind::EXPRESSION_LIST | kind::TUPLE | kind::LIST | kind::TUPLE_EXPRESSION
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
        handled.extend([field::TYPE, field::DIMENSIONS, field::KIND, field::OPERATOR]);
        self.compound_rest(it, &handled, fr);
    }

    fn python_import(&mut self, it: &Item<'t>) {
        for (field, c) in self.children(it.node) {
            if field != Some(field::NAME) {
                continue;
            }
            let target = match c.kind() {
                kind::ALIASED_IMPORT => c.child_by_field_name(field::ALIAS),
                kind::DOTTED_NAME => c.named_child(if it.node.kind() == kind::IMPORT_STATEMENT {
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
                .child_by_field_name(field::OPERATOR)
                .map(|o| self.text(o))
                .unwrap_or("");
            if cur.kind() != kind::BINARY_EXPRESSION || op != ">>" {
                break;
            }
            if let Some(r) = cur.child_by_field_name(field::RIGHT) {
                rights.push(r);
            }
            match cur.child_by_field_name(field::LEFT) {
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
        let spec = self.spec();
        let (receiver, name, other_callee): (Option<Node<'t>>, &'t str, Option<Node<'t>>) =
            match spec.call(node) {
                Some(c) if c.shape == CallShape::Method => {
                    (c.receiver, c.name.map(|n| self.text(n)).unwrap_or(""), None)
                }
                Some(c) => {
                    let callee = unwrap_expression(c.function);
                    match (spec.member(callee), callee.kind()) {
                        (Some(m), _) => (Some(m.object), self.text(m.name), None),
                        (None, kind::IDENTIFIER) => (None, self.text(callee), None),
                        (None, kind::QUALIFIED_IDENTIFIER | kind::SCOPED_IDENTIFIER) => {
                            let t = self.text(callee);
                            (None, t.rsplit("::").next().unwrap_or(t), None)
                        }
                        (None, kind::TEMPLATE_FUNCTION) => {
                            let t = callee
                                .child_by_field_name(field::NAME)
                                .map(|n| self.text(n))
                                .unwrap_or("");
                            (None, t.rsplit("::").next().unwrap_or(t), None)
                        }
                        _ => (None, "", Some(callee)),
                    }
                }
                None => (None, "", None),
            };
        if let Some(c) = other_callee {
            self.push(it, c, Role::Use, fr);
        }
        // `Arrays.fill(a, 0)`, `heapq.heappush(h, x)`: a class or module receiver (one the
        // function does not define).
        let receiver_name = receiver
            .filter(|r| r.kind() == kind::IDENTIFIER)
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
        if let Some(a) = node.child_by_field_name(field::ARGUMENTS) {
            if matches!(a.kind(), kind::ARGUMENT_LIST | kind::ARGUMENTS) {
                args.extend(self.children(a).into_iter().map(|x| x.1));
            } else {
                args.push(a);
            }
        }
        if self.lang == Language::Solidity {
            args.extend(
                self.children(node)
                    .into_iter()
                    .filter(|(_, c)| c.kind() == kind::CALL_ARGUMENT)
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
            kind::FUNCTION_DEFINITION
            | kind::FUNCTION_DECLARATION
            | kind::GENERATOR_FUNCTION_DECLARATION => node.child_by_field_name(field::NAME),
            _ => None,
        };
        if !self.summarise {
            for (field, c) in self.children(node) {
                let role = match field {
                    Some(field::NAME) => STRONG,
                    Some(field::PARAMETERS | field::PARAMETER | field::DECLARATOR) => Role::Param,
                    Some(field::RETURN_TYPE | field::TYPE_PARAMETERS | field::TYPE) => Role::Skip,
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
        if let Some(n) = it.node.child_by_field_name(field::NAME) {
            self.record(n, STRONG, fr);
        }
        self.push_field(it, field::SUPERCLASSES, Role::Use, fr);
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
        if node.kind() == kind::EXPRESSION && node.named_child_count() == 1 {
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
    [field::OBJECT, field::ARGUMENT]
        .iter()
        .find_map(|f| node.child_by_field_name(f))
}

/// For `&x` (C/C++), the operand.
fn address_of<'t>(w: &Walker<'t, '_>, node: Node<'t>) -> Option<Node<'t>> {
    if node.kind() != kind::POINTER_EXPRESSION {
        return None;
    }
    let op = node
        .child_by_field_name(field::OPERATOR)
        .map(|o| w.text(o))?;
    if op == "&" {
        node.child_by_field_name(field::ARGUMENT)
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
    if file.language == Language::Solidity && list.kind() != kind::PARAMETER {
        let kids: Vec<Node<'_>> = w
            .children(list)
            .into_iter()
            .filter(|(_, c)| c.kind() == kind::PARAMETER)
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
