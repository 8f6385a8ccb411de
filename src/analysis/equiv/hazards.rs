//! What the normalisation proof cannot see, read once per file before any rewrite.
//!
//! The proof's rewrites (renaming locals, removing dead stores and dead post-updates, dropping
//! parentheses, trusting a type's name) assume that a local is read only where its name is
//! written in the function, that a name means what the language's standard says, and that the
//! text is what the compiler reads. Code that breaks those assumptions is found here:
//!
//! - **declined** (no proof at all): code that can see names, lines or the function's own text —
//!   Python `locals()`, `vars()`, `eval`, `exec`, `globals()`, frames (`sys._getframe`,
//!   `f_lineno`, `inspect`, `traceback`), `__code__`, `__qualname__`, an f-string's
//!   self-documenting `{x=}`, non-ASCII identifiers (Python folds them to NFKC, so `ﬁ` is `fi`);
//!   C/C++ `__LINE__`, `__FILE__`, `__func__` and the other predefined names that spell a position
//!   or a name, `typeid`; Java stack traces and reflection (`getStackTrace`, `StackWalker`,
//!   `getClass`, class literals, `getDeclared*`), and `\uXXXX` escapes outside string literals
//!   (Java translates them before it reads comments: `// \u000a x++;` is code);
//! - **opaque names** (C/C++), two degrees:
//!   - *strict*: a macro that can read a local or take its argument's tokens — a function-like
//!     macro, or an object-like macro whose replacement names anything but a type keyword — is
//!     used in the file. No rewrite but dropping comments and layout applies to a function
//!     whose text names such a macro ([`Hazards::in_function`]: a macro expands where it is
//!     written, so one used elsewhere cannot see this function's locals or tokens), nor to the
//!     code outside functions;
//!   - *header*: the file includes a project header (`#include "x.h"`), whose macros are not
//!     seen: any call may be a macro that takes its arguments' tokens or evaluates them twice,
//!     and any name may be read by an object-like macro. Names, stores, parentheses and
//!     constants stay as written; zero comparisons without a sign (rule 8) are rewritten
//!     outside call arguments, and dead post-updates (rule 7) only in a `return` (nothing of
//!     the function runs after it), outside the arguments of calls other than the standard
//!     library's. Standard library macros evaluate each argument once (C11 7.1.4), and a
//!     program may not define a standard function's name as a macro once its header is
//!     included (7.1.3), so system headers (`<x.h>`) bring no such hazard;
//! - **shadowed type names**: names the file defines as a type or macro (`typedef long size_t;`),
//!   whose standard meaning the rewrites must not assume.
//!
//! Macros are read from the text as the compiler reads them
//! ([`crate::syntax::preproc::define_directives`]: lines joined at a backslash, comments as
//! one space), not from the grammar's tree, which can misread a directive (GNU make's
//! `ADD_BLOCK` came out of it as a macro named `if`, and every function with an `if` lost its
//! rewrites).

use crate::syntax::lang::{field, kind};
use crate::syntax::{Language, ParsedFile};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// How far macros may hide reads of names (see the module docs).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Opacity {
    #[default]
    None,
    /// A project header's macros are not seen.
    Header,
    /// A macro the file defines may read names or tokens, and it is used.
    Strict,
}

/// What [`scan`] found in one file.
#[derive(Debug, Default, Clone)]
pub(super) struct Hazards {
    /// Why no proof may be given (`None`: a proof may be tried).
    pub decline: Option<String>,
    /// Whether names may be read where they are not written (macros), file-wide.
    pub opacity: Opacity,
    /// The opacity of code that names none of `reading_macros` (a project header's unseen
    /// macros stay possible there).
    pub below_strict: Opacity,
    /// Macros the file defines that may read names or take tokens (see the module docs),
    /// with what they read.
    pub reading_macros: BTreeMap<String, MacroReads>,
    /// Type (and macro) names the file defines itself.
    pub shadowed_types: BTreeSet<String>,
    /// C/C++ `__FILE__`, `__LINE__` (and kin) by occurrence: (name, line, inside a macro
    /// definition). Their values depend on the file's name and the line of use, so a proof
    /// stands only between two versions of one file where each sits on the same line.
    pub positional: Vec<(String, usize, bool)>,
    /// C/C++ standard headers the file includes (`<string.h>`, as written between the
    /// brackets).
    pub system_headers: BTreeSet<String>,
    /// C++ with `decltype`: `decltype((x))` is a reference where `decltype(x)` is not, and
    /// `decltype(auto)` deduces from `return (x);` likewise, so parentheses stay as written.
    pub keep_parens: bool,
}

impl Hazards {
    /// Both sides' hazards: a decline of either declines, names are opaque if either's are.
    pub fn join(mut self, other: &Hazards) -> Hazards {
        if self.decline.is_none() {
            self.decline = other.decline.clone();
        }
        self.opacity = self.opacity.max(other.opacity);
        self.below_strict = self.below_strict.max(other.below_strict);
        // A name the standard reserves is reserved if either side includes its header.
        self.system_headers
            .extend(other.system_headers.iter().cloned());
        for (name, m) in &other.reading_macros {
            merge_macro(&mut self.reading_macros, name, m.clone());
        }
        if self.decline.is_none()
            && !self.positional.is_empty()
            && self.positional != other.positional
        {
            self.decline = Some(format!(
                "`{}` stands on other lines in the two files",
                self.positional[0].0
            ));
        }
        if self.decline.is_none() && self.positional.is_empty() && !other.positional.is_empty() {
            self.decline = Some(format!("`{}` is in one file only", other.positional[0].0));
        }
        self.shadowed_types
            .extend(other.shadowed_types.iter().cloned());
        self.keep_parens |= other.keep_parens;
        self
    }

    /// The opacity of the code `text` (a function's). A macro expands where it is written, so
    /// a macro used elsewhere cannot see this code's names. Where the text names macros of
    /// the file that may read names, the names they read (through the macros they use in
    /// turn) are known: strict only when one of them is a word of the text (a local, or a
    /// name the code also uses), or a macro pastes or stringizes tokens; otherwise as opaque
    /// as an unseen header's macro (a call may evaluate its arguments twice). Every word of
    /// the text counts, those in comments and literals too.
    pub fn in_function(&self, text: &str) -> Opacity {
        if self.opacity != Opacity::Strict {
            return self.opacity;
        }
        let words = text_words(text);
        let mut named = false;
        let strict = self.macros_reached(&words, |m| {
            named = true;
            // A word that is itself a macro is followed, not read.
            m.tokens
                || m.words
                    .iter()
                    .any(|w| !self.reading_macros.contains_key(w) && words.contains(w.as_str()))
        });
        if strict {
            Opacity::Strict
        } else if named {
            self.below_strict.max(Opacity::Header)
        } else {
            self.below_strict
        }
    }

    /// Whether code whose text is `text` names a macro of the file that stringizes an argument
    /// (`#e`), directly or through the macros it uses: the argument's spelling, a space between
    /// two tokens or a comment included, is then a value the program sees.
    pub fn stringizes_in(&self, text: &str) -> bool {
        let words = text_words(text);
        self.macros_reached(&words, |m| m.stringizes)
    }

    /// Visits the macros of the file that `words` name and, in turn, those their replacements
    /// name; true as soon as `stop` is.
    fn macros_reached(
        &self,
        words: &BTreeSet<&str>,
        mut stop: impl FnMut(&MacroReads) -> bool,
    ) -> bool {
        let mut todo: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| self.reading_macros.contains_key(*w))
            .collect();
        let mut seen: BTreeSet<&str> = todo.iter().copied().collect();
        while let Some(name) = todo.pop() {
            let Some(m) = self.reading_macros.get(name) else {
                continue;
            };
            if stop(m) {
                return true;
            }
            for w in &m.words {
                if self.reading_macros.contains_key(w) && seen.insert(w) {
                    todo.push(w);
                }
            }
        }
        false
    }

    /// Whether a type spelled `ty` may mean something else than its standard meaning here.
    pub fn shadows(&self, ty: &str) -> bool {
        !self.shadowed_types.is_empty()
            && ty
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| self.shadowed_types.contains(w))
    }
}

/// What a macro of the file may read where it is used.
#[derive(Debug, Default, Clone)]
pub(super) struct MacroReads {
    /// The names its replacement holds (its own parameters aside).
    pub words: BTreeSet<String>,
    /// It pastes or stringizes tokens (`##`, `#`).
    pub tokens: bool,
    /// It stringizes (`#`, not `##`).
    pub stringizes: bool,
}

/// Records macro `name` (a name defined twice, under `#if` branches, reads what either reads).
fn merge_macro(map: &mut BTreeMap<String, MacroReads>, name: &str, m: MacroReads) {
    let e = map.entry(name.to_string()).or_default();
    e.words.extend(m.words);
    e.tokens |= m.tokens;
    e.stringizes |= m.stringizes;
}

/// Whether a macro replacement stringizes (a `#` outside literals that is not part of `##`).
fn stringizes(body: &str) -> bool {
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'#' if b.get(i + 1) == Some(&b'#') => i += 2,
            b'#' => return true,
            _ => i += 1,
        }
    }
    false
}

/// The identifier-like words of a text.
fn text_words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Python names whose call sees the caller's names or code (bare names only: `re.compile` is
/// not `compile`).
const PY_BARE: &[&str] = &[
    "locals",
    "vars",
    "eval",
    "exec",
    "globals",
    "compile",
    "__import__",
    "breakpoint",
    "dir",
    "inspect",
    "traceback",
    "__file__",
    "__builtins__",
];

/// Python names that see frames, code objects or qualified names wherever they appear.
const PY_ANY: &[&str] = &[
    "_getframe",
    "currentframe",
    "f_lineno",
    "f_locals",
    "f_globals",
    "f_back",
    "f_code",
    "f_lasti",
    "tb_lineno",
    "tb_frame",
    "__code__",
    "__qualname__",
    "__annotations__",
    "co_varnames",
    "co_names",
    "co_name",
    "co_firstlineno",
    "co_consts",
    "settrace",
    "setprofile",
];

/// C and C++ names that spell a position, a file or the function's own name.
const C_PREDEFINED: &[&str] = &[
    "__LINE__",
    "__FILE__",
    "__FILE_NAME__",
    "__BASE_FILE__",
    "__func__",
    "__FUNCTION__",
    "__PRETTY_FUNCTION__",
    "__COUNTER__",
    "__DATE__",
    "__TIME__",
    "__TIMESTAMP__",
    "__builtin_FILE",
    "__builtin_LINE",
    "__builtin_FUNCTION",
    "typeid",
    "source_location",
];

/// Of [`C_PREDEFINED`], those whose value depends only on the file's name and the line of use:
/// equal between two versions of one file where each occurrence keeps its line
/// ([`Hazards::join`]); the caller declines them for two files of different names.
const C_POSITIONAL: &[&str] = &["__LINE__", "__FILE__", "__FILE_NAME__", "__BASE_FILE__"];

/// Java names that see stack frames, line numbers or class names.
const JAVA_REFLECT: &[&str] = &[
    "getStackTrace",
    "printStackTrace",
    "StackWalker",
    "getLineNumber",
    "getClass",
    "getEnclosingMethod",
    "getEnclosingClass",
    "getDeclaredFields",
    "getDeclaredField",
    "getDeclaredMethods",
    "getDeclaredMethod",
    "getDeclaredConstructors",
    "getSimpleName",
    "getCanonicalName",
];

/// Words a C macro's replacement may hold without reading anything: type keywords.
const C_TYPE_WORDS: &[&str] = &[
    "int", "char", "short", "long", "signed", "unsigned", "float", "double", "void", "const",
    "_Bool", "bool",
];

/// Reads the hazards of one file (a linear walk of its tree; deeper than the proof's depth
/// limit declines).
pub(super) fn scan(file: &ParsedFile) -> Hazards {
    let mut h = Hazards::default();
    let lang = file.language;
    if let Some(why) = lone_carriage_return(&file.text) {
        h.decline = Some(why);
        return h;
    }
    if lang == Language::Python {
        if let Some(why) = python_source_encoding(&file.text) {
            h.decline = Some(why);
            return h;
        }
    }
    if lang == Language::Cpp {
        h.keep_parens = !super::slice::word_positions(&file.text, "decltype").is_empty();
    }
    if matches!(lang, Language::C | Language::Cpp) && has_trigraph(&file.text) {
        // `??/` is a backslash in ISO C (and C++ before 17): at a line's end it continues a
        // `//` comment over the next line. Whether a compiler replaces trigraphs depends on
        // its mode (`-std=c11` does, GNU C does not).
        h.decline =
            Some("the file has a trigraph (`??/` and kin), read by some compiler modes".into());
        return h;
    }
    if lang == Language::Java {
        if let Some(why) = java_unicode_escape(file) {
            h.decline = Some(why);
            return h;
        }
    }
    // C/C++ directives as the compiler reads them (not as the grammar may misread them).
    let directives = matches!(lang, Language::C | Language::Cpp)
        .then(|| crate::syntax::preproc::define_directives(&file.text));
    if let Some(d) = &directives {
        let mut lines = None;
        for w in C_PREDEFINED {
            let positional = C_POSITIONAL.contains(w);
            for at in super::slice::word_positions(&file.text, w) {
                if !positional {
                    h.decline = Some(format!(
                        "the file uses `{w}`, which differs between the two files or functions"
                    ));
                    return h;
                }
                let line = lines
                    .get_or_insert_with(|| crate::syntax::position::LineIndex::new(&file.text))
                    .line_of(at)
                    + 1;
                // Spans are in text order: the last one starting at or before `at`.
                let k = d.defines.partition_point(|def| def.span.start <= at);
                let in_macro = k > 0 && d.defines[k - 1].span.contains(&at);
                h.positional.push((w.to_string(), line, in_macro));
            }
        }
        if h.positional.iter().any(|p| p.2) {
            h.decline = Some("a macro expands `__FILE__` or `__LINE__` where it is used".into());
            return h;
        }
    }
    // C/C++ macros that may read locals or tokens, and whether their names are used.
    let mut reading_macros: BTreeMap<String, MacroReads> = BTreeMap::new();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let root = file.tree.root_node();
    let mut stack: Vec<(Node<'_>, usize)> = vec![(root, 0)];
    while let Some((node, depth)) = stack.pop() {
        if depth > super::normal::MAX_DEPTH {
            h.decline = Some(format!("nesting deeper than {}", super::normal::MAX_DEPTH));
            return h;
        }
        if let Some(why) = node_hazard(file, lang, node, &mut h) {
            h.decline = Some(why);
            return h;
        }
        let k = node.kind();
        if k == kind::PREPROC_DEF || k == kind::PREPROC_FUNCTION_DEF {
            continue;
        }
        let mut c = node.walk();
        for kid in node.children(&mut c) {
            stack.push((kid, depth + 1));
        }
    }
    if let Some(d) = &directives {
        for def in &d.defines {
            let mut words = body_words(&def.body);
            if let Some(params) = &def.params {
                words.retain(|w| !params.contains(w));
            }
            // An object-like macro of literals and type keywords reads nothing.
            if def.params.is_some() || !words.is_empty() {
                let tokens = def.body.contains('#');
                let stringizes = stringizes(&def.body);
                merge_macro(
                    &mut reading_macros,
                    &def.name,
                    MacroReads {
                        words,
                        tokens,
                        stringizes,
                    },
                );
            }
            h.shadowed_types.insert(def.name.clone());
        }
        // Uses: the names of every other logical line (a macro's own definition is no use).
        for line in &d.code {
            used.extend(body_words(line));
        }
        for include in &d.includes {
            if include.system {
                h.system_headers.insert(include.path.clone());
            } else {
                // A project header: its macros are not seen here.
                h.opacity = h.opacity.max(Opacity::Header);
            }
        }
    }
    h.below_strict = h.opacity;
    if reading_macros.keys().any(|m| used.contains(m)) {
        h.opacity = Opacity::Strict;
    }
    h.reading_macros = reading_macros;
    h
}

/// The hazard one node brings (a reason to decline), recording macro facts on the way.
fn node_hazard(
    file: &ParsedFile,
    lang: Language,
    node: Node<'_>,
    h: &mut Hazards,
) -> Option<String> {
    let k = node.kind();
    let text = |n: Node<'_>| file.node_text(n);
    match lang {
        Language::Python => {
            if k == kind::IDENTIFIER {
                let name = text(node);
                if !name.is_ascii() {
                    return Some(format!(
                        "the identifier `{name}` is not ASCII (Python folds identifiers to NFKC)"
                    ));
                }
                let attribute = node.parent().is_some_and(|p| {
                    p.kind() == kind::ATTRIBUTE
                        && p.child_by_field_name(field::ATTRIBUTE)
                            .is_some_and(|a| a.id() == node.id())
                });
                if PY_ANY.contains(&name) || (!attribute && PY_BARE.contains(&name)) {
                    return Some(format!(
                        "the code uses `{name}`, which sees names, lines or code the proof rewrites"
                    ));
                }
                if attribute && name == "__name__" {
                    return Some(
                        "the code reads a `__name__` attribute, which sees the names the proof pairs"
                            .into(),
                    );
                }
            }
            if k == kind::INTERPOLATION {
                let mut c = node.walk();
                let self_documenting = node
                    .children(&mut c)
                    .any(|kid| !kid.is_named() && text(kid) == "=");
                if self_documenting {
                    return Some(
                        "an f-string's `{x=}` prints the expression's own text".to_string(),
                    );
                }
            }
        }
        Language::Java => {
            if k == kind::CLASS_LITERAL {
                return Some("a class literal sees the class's name".into());
            }
            if k == kind::IDENTIFIER && JAVA_REFLECT.contains(&text(node)) {
                return Some(format!(
                    "the code uses `{}`, which sees names or line numbers",
                    text(node)
                ));
            }
        }
        Language::C | Language::Cpp => match k {
            kind::TYPE_DEFINITION | kind::ALIAS_DECLARATION => {
                let mut c = node.walk();
                let mut names: Vec<Node<'_>> = node
                    .children_by_field_name(field::DECLARATOR, &mut c)
                    .collect();
                names.extend(node.child_by_field_name(field::NAME));
                for d in names {
                    if let Some(id) = innermost_type_name(d) {
                        h.shadowed_types.insert(text(id).to_string());
                    }
                }
            }
            _ => {}
        },
        _ => {}
    }
    None
}

/// The type name a typedef declarator declares (`size_t` in `typedef long size_t;`,
/// `*fp` -> `fp`).
fn innermost_type_name(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..64 {
        // tree-sitter-c reads `size_t`, `int8_t`, ... as primitive types.
        if matches!(
            d.kind(),
            kind::TYPE_IDENTIFIER | kind::IDENTIFIER | kind::PRIMITIVE_TYPE
        ) {
            return Some(d);
        }
        d = d
            .child_by_field_name(field::DECLARATOR)
            .or_else(|| d.named_child(0))?;
    }
    None
}

/// The names a macro replacement holds other than type keywords (names it could read at the
/// place of use), string and character literals and numbers skipped.
fn body_words(body: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' || b == b'\'' {
            // Skip a string or character literal.
            let q = b;
            i += 1;
            while i < bytes.len() && bytes[i] != q {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if b.is_ascii_digit() {
            // A number with its suffix or exponent (`10UL`, `0x1F`, `1e5`).
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
            {
                i += 1;
            }
            let word = &body[start..i];
            if !C_TYPE_WORDS.contains(&word) {
                out.insert(word.to_string());
            }
            continue;
        }
        i += 1;
    }
    out
}

/// C standard library functions whose every invocation evaluates each argument exactly once
/// even where the library implements them as macros (C11 7.1.4; `getc` and `putc`, which may
/// evaluate their stream twice, are not here), with the header that declares them. Once that
/// header is included, a program that defines one of these names as a macro of its own has
/// undefined behaviour (C11 7.1.3), so an unseen project header cannot make them evaluate an
/// argument twice.
const C_STD_FUNCTIONS: &[(&str, &[&str])] = &[
    (
        "string.h",
        &[
            "memchr", "memcmp", "memcpy", "memmove", "memset", "strcat", "strchr", "strcmp",
            "strcoll", "strcpy", "strcspn", "strerror", "strlen", "strncat", "strncmp", "strncpy",
            "strpbrk", "strrchr", "strspn", "strstr", "strxfrm",
        ],
    ),
    (
        "stdlib.h",
        &[
            "abs", "atof", "atoi", "atol", "atoll", "calloc", "free", "getenv", "labs", "llabs",
            "malloc", "realloc", "strtod", "strtol", "strtoll", "strtoul", "strtoull",
        ],
    ),
    (
        "ctype.h",
        &[
            "isalnum", "isalpha", "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct",
            "isspace", "isupper", "isxdigit", "tolower", "toupper",
        ],
    ),
    (
        "stdio.h",
        &[
            "fputs", "printf", "fprintf", "puts", "putchar", "sprintf", "snprintf",
        ],
    ),
];

impl Hazards {
    /// Whether a call of `name` is the C standard library's function, which evaluates each
    /// argument once ([`C_STD_FUNCTIONS`]): its header is included, and the file does not
    /// define the name itself (`shadowed_types` holds every macro and type name it defines).
    pub fn standard_call(&self, name: &str) -> bool {
        !self.shadowed_types.contains(name)
            && C_STD_FUNCTIONS
                .iter()
                .any(|(h, names)| names.contains(&name) && self.system_headers.contains(*h))
    }
}

fn has_trigraph(text: &str) -> bool {
    text.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'?' && w[1] == b'?' && b"=/'()!<>-".contains(&w[2]))
}

/// A carriage return not followed by a line feed. Python, Java, C and C++ end a line there (a
/// `//` or `#` comment ends with it), while the grammar reads on: code after it inside a
/// comment would be set aside by the proof though the compiler runs it.
fn lone_carriage_return(text: &str) -> Option<String> {
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'\r' && b.get(i + 1) != Some(&b'\n'))
        .then(|| {
            "the file has a carriage return without a line feed, a line break to the compiler \
             but not to the parser"
                .to_string()
        })
}

/// A Python source-encoding declaration (PEP 263: a comment on line 1 or 2 matching
/// `coding[:=]\s*([-\w.]+)`) naming another encoding than UTF-8: the interpreter reads the
/// bytes in that encoding (a string's length, a name's spelling) and the proof reads UTF-8.
fn python_source_encoding(text: &str) -> Option<String> {
    for line in text.lines().take(2) {
        let t = line.trim_start();
        if !t.starts_with('#') {
            continue;
        }
        let Some(at) = t.find("coding") else {
            continue;
        };
        let rest = &t[at + "coding".len()..];
        let Some(rest) = rest.strip_prefix([':', '=']) else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        let norm = name.to_ascii_lowercase().replace('_', "-");
        if !name.is_empty() && !matches!(norm.as_str(), "utf-8" | "utf8") {
            return Some(format!(
                "the file declares the source encoding `{name}`, which the proof does not read"
            ));
        }
    }
    None
}

/// A Java `\uXXXX` escape the proof cannot read as tree-sitter does: any outside a string or
/// character literal (Java translates escapes before it finds comments and tokens), or one
/// inside a literal that stands for a quote, a backslash or a line break.
fn java_unicode_escape(file: &ParsedFile) -> Option<String> {
    let t = file.text.as_bytes();
    let mut i = 0;
    while i < t.len() {
        if t[i] != b'\\' {
            i += 1;
            continue;
        }
        // Count the run of backslashes: an escape starts at a backslash preceded by an even
        // number of backslashes.
        let run_start = i;
        while i < t.len() && t[i] == b'\\' {
            i += 1;
        }
        let last = i - 1;
        if (last - run_start) % 2 == 1 {
            continue; // `\\u...`: the last backslash is escaped
        }
        let mut j = i;
        while j < t.len() && t[j] == b'u' {
            j += 1;
        }
        if j == i || j + 4 > t.len() {
            continue;
        }
        let hex = &file.text[j..j + 4];
        let Ok(code) = u32::from_str_radix(hex, 16) else {
            continue;
        };
        let root = file.tree.root_node();
        let in_literal = root
            .descendant_for_byte_range(last, last + 1)
            .is_some_and(|n| {
                let mut cur = Some(n);
                while let Some(c) = cur {
                    let k = c.kind();
                    if k == kind::STRING_LITERAL || k == kind::CHARACTER_LITERAL {
                        return true;
                    }
                    cur = c.parent();
                }
                false
            });
        let special = matches!(code, 0x22 | 0x27 | 0x5c | 0x0a | 0x0d);
        if !in_literal || special {
            return Some(format!(
                "a `\\u{hex}` escape {} (Java reads escapes before comments and tokens)",
                if in_literal {
                    "in a literal stands for a quote, backslash or line break"
                } else {
                    "outside a string literal"
                }
            ));
        }
        i = j + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(lang: Language, src: &str) -> Hazards {
        scan(&ParsedFile::parse(lang, src))
    }

    #[test]
    fn macros_are_read_from_the_text_not_from_a_misread_tree() {
        // GNU make's ADD_BLOCK: its comment holds a line continuation, and the grammar reads
        // a macro named `if` out of the body. The compiler reads one macro, ADD_BLOCK.
        let src = "# define ADD_BLOCK(list, addr) \\\n  do { \\\n    /* If we cannot get a block\t \\\n       we stop.  */ \\\n    if (p != NULL) { \\\n      (list) = p; \\\n    } \\\n  } while (0)\n\
                   void g(void *a) { ADD_BLOCK(a, a); }\n\
                   int f(int x) { if (x > 0) return 1; return 0; }\n";
        let h = scanned(Language::C, src);
        assert!(h.decline.is_none());
        assert_eq!(
            h.reading_macros.keys().collect::<Vec<_>>(),
            ["ADD_BLOCK"],
            "one macro, named as the compiler names it"
        );
        // ADD_BLOCK is used, so the file is strict; `f` names no reading macro.
        assert_eq!(h.opacity, Opacity::Strict);
        assert_eq!(
            h.in_function("int f(int x) { if (x > 0) return 1; return 0; }"),
            Opacity::None
        );
        assert_eq!(
            h.in_function("void g(void *p) { ADD_BLOCK(p, p); }"),
            Opacity::Strict
        );
        // A `__LINE__` inside a continued macro body is inside the macro.
        let line = scanned(
            Language::C,
            "#define WHERE(x) \\\n  log(x, \\\n  __LINE__)\nint f(int x) { WHERE(x); return x; }\n",
        );
        assert!(line.decline.is_some_and(|d| d.contains("macro expands")));
        // Comment words are not names the macro reads.
        let commented = scanned(
            Language::C,
            "#define K 3 /* the count of x */\nint f(int x) { return x + K; }\n",
        );
        assert!(commented.reading_macros.is_empty());
    }

    #[test]
    fn reflection_and_self_documenting_strings_decline() {
        for src in [
            "def f(x):\n    y = 1\n    return len(locals())\n",
            "def f(x):\n    return f'{x=}'\n",
            "def f(x):\n    return eval('x')\n",
            "import sys\ndef f(x):\n    return sys._getframe().f_lineno\n",
            "def f(x):\n    \u{fb01} = 2\n    return x\n",
        ] {
            assert!(scanned(Language::Python, src).decline.is_some(), "{src}");
        }
        for src in [
            "import re\ndef f(x):\n    return re.compile(x)\n",
            "def f(x):\n    return f'{x}!'\n",
            "if __name__ == '__main__':\n    print(1)\n",
        ] {
            assert!(scanned(Language::Python, src).decline.is_none(), "{src}");
        }
        let line = scanned(Language::C, "int f(void) { return __LINE__; }");
        assert!(line.decline.is_none() && line.positional.len() == 1);
        let moved = scanned(Language::C, "\nint f(void) { return __LINE__; }");
        assert!(line.clone().join(&moved).decline.is_some(), "another line");
        assert!(line.clone().join(&line).decline.is_none(), "the same line");
        assert!(
            scanned(Language::C, "#define L __LINE__\nint f(void) { return L; }")
                .decline
                .is_some()
        );
        assert!(
            scanned(Language::C, "const char *f(void) { return __func__; }")
                .decline
                .is_some()
        );
        assert!(scanned(Language::C, "int f(int x) { return x__LINE__x; }")
            .decline
            .is_none());
    }

    #[test]
    fn java_unicode_escapes_outside_literals_decline() {
        let code = "class A { int f(int x) { // bump \\u000a x = x + 1;\n return x; } }";
        assert!(scanned(Language::Java, code).decline.is_some());
        let quote = "class A { String f() { return \"\\u0022\"; } }";
        assert!(scanned(Language::Java, quote).decline.is_some());
        let plain = "class A { String f() { return \"caf\\u00e9\"; } }";
        assert!(scanned(Language::Java, plain).decline.is_none());
        let escaped = "class A { String f() { return \"\\\\u000a\"; } }";
        assert!(scanned(Language::Java, escaped).decline.is_none());
        let reflect = "class A { String f() { return getClass().getName(); } }";
        assert!(scanned(Language::Java, reflect).decline.is_some());
    }

    #[test]
    fn a_stringizing_macro_is_told_from_pasting_and_from_a_hash_in_a_string() {
        assert!(stringizes("#e"));
        assert!(stringizes("f(# e, 1)"));
        assert!(!stringizes("a ## b"));
        assert!(!stringizes(
            "printf( \"#define yy%s %s%s\\n\", name, prefix, name )"
        ));
        assert!(!stringizes("'#'"));
    }

    #[test]
    fn macros_that_can_read_locals_make_names_opaque() {
        let opacity = |src: &str| scanned(Language::C, src).opacity;
        let reads = "#define R (k*2)\nint f(int x) { int k = x; return R; }";
        assert_eq!(opacity(reads), Opacity::Strict);
        let func = "#define SQ(v) v*v\nint f(int a) { return SQ(a+1); }";
        assert_eq!(opacity(func), Opacity::Strict);
        let unused = "#define SQ(v) v*v\nint f(int a) { return a; }";
        assert_eq!(opacity(unused), Opacity::None);
        let constant =
            "#define N 10UL\n#define E '\\0'\n#define B int\nint f(int a) { return a + N; }";
        assert_eq!(opacity(constant), Opacity::None);
        let header = "#include \"defs.h\"\nint f(int a) { return a; }";
        assert_eq!(opacity(header), Opacity::Header);
        let both = "#include \"defs.h\"\n#define R (k*2)\nint f(int k) { return R; }";
        assert_eq!(opacity(both), Opacity::Strict);
        let system = "#include <stdio.h>\nint f(int a) { return a; }";
        assert_eq!(opacity(system), Opacity::None);
        // Per function: strict only where the text names such a macro.
        let h = scanned(Language::C, both);
        assert_eq!(h.in_function("int f(int k) { return R; }"), Opacity::Strict);
        assert_eq!(h.in_function("int g(int k) { return k; }"), Opacity::Header);
        let h = scanned(Language::C, reads);
        assert_eq!(h.in_function("int g(int Rx) { return Rx; }"), Opacity::None);
        // A macro that reads no name of the function (through the macros it uses): as an
        // unseen header's; one that pastes tokens stays strict.
        let log = "#define OUT stdout\n#define LOG(m) fprintf(OUT, \"%s\", m)\n#define CAT(a, b) a##b\nint f(int a) { LOG(\"x\"); return CAT(a, 1); }";
        let h = scanned(Language::C, log);
        assert_eq!(
            h.in_function("int g(int a) { LOG(\"x\"); return a; }"),
            Opacity::Header
        );
        assert_eq!(
            h.in_function("int g(int stdout) { LOG(\"x\"); return stdout; }"),
            Opacity::Strict
        );
        assert_eq!(
            h.in_function("int g(int a) { return CAT(a, 1); }"),
            Opacity::Strict
        );
        let joined = scanned(Language::C, system).join(&scanned(Language::C, reads));
        assert_eq!(
            joined.in_function("int g(int k) { return R; }"),
            Opacity::Strict
        );
    }

    #[test]
    fn typedefs_and_macros_shadow_standard_type_names() {
        let h = scanned(
            Language::C,
            "typedef long size_t;\n#define uint unsigned\nint f(size_t x) { return x > 0; }",
        );
        assert!(h.shadows("size_t"));
        assert!(h.shadows("const uint"));
        assert!(!h.shadows("unsigned int"));
    }
}
