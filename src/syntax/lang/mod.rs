//! One place per language: what each tree-sitter grammar calls its constructs.
//!
//! Each language has one file here with one [`LangSpec`]: a declarative table of kind classes
//! (which node kinds are comments, calls, argument lists, member accesses, wrappers, scopes, ...)
//! and a few functions that take a node apart the same way for every analysis ([`CallSyntax`],
//! [`Member`]). Analyses ask in terms of classes (`spec.is(node, Class::Comment)`) instead of
//! spelling node kinds, so adding a language means adding a file here, not editing every
//! analysis.
//!
//! Kinds an analysis needs by name (a language's own construct, such as Python's
//! `list_comprehension`) are constants of [`kind`] and field names constants of [`field`]: the
//! one place outside this module's language files where a grammar's vocabulary is spelled, each
//! entry listing the grammars that have it. Every kind and field written in this module is
//! validated against its grammars by the unit tests (`id_for_node_kind`, `field_id_for_name`);
//! a misspelt one fails them, and `tests/it/architecture.rs` fails on a kind literal anywhere
//! else in `src/`.

/// Declares each name as a constant and lists them all, with their grammars, in `$table` for
/// the test that checks every one against those grammars.
macro_rules! vocabulary {
    ($table:ident; $($name:ident = $text:literal [$($lang:ident)*];)*) => {
        $(pub const $name: &str = $text;)*
        /// Every name of this module with the grammars that define it.
        pub const $table: &[(&str, &[Language])] = &[$(($text, &[$(Language::$lang),*])),*];
    };
}

mod c;
mod cpp;
pub mod field;
mod java;
mod javascript;
pub mod kind;
mod python;
mod solidity;
mod typescript;

use crate::syntax::Language;
use std::collections::HashMap;
use std::sync::OnceLock;
use tree_sitter::Node;

/// A class of node kinds. A kind may belong to several classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Class {
    /// Comments of every form (line, block, doc).
    Comment,
    /// A call that is not a constructor call: `f(x)`, `o.m(x)`, Java `o.m(x)`.
    Call,
    /// A constructor call: `new T(x)`, Java `new T(x)`, C++ `new T(x)`.
    New,
    /// Java `this(..)` / `super(..)` in a constructor.
    CtorInvocation,
    /// The argument list of a call.
    Arguments,
    /// Python `name=value` in an argument list.
    KeywordArgument,
    /// Member access: Python `o.a`, C/C++ `o.f`/`o->f`, JavaScript/Solidity `o.p`.
    Member,
    /// Parentheses around an expression (and Solidity's `expression` wrapper node).
    Paren,
    /// `await e`.
    Await,
    /// An expression used as a statement.
    ExpressionStatement,
    /// Solidity's wrapper around one call argument.
    CallArgument,
    /// TypeScript `e!`.
    NonNull,
    /// Nested definitions a statement walk never enters: functions, lambdas, classes and
    /// their bodies (they are separate functions, or declarations).
    Definition,
    /// The nodes function discovery opens a scope for: class-likes, namespaces, functions.
    Scope,
    /// `this`.
    This,
    /// `super`.
    Super,
    /// Solidity call options around a callee: `to.call{value: v}` (`type` field: the callee).
    CallOptions,
    /// One `name: value` of Solidity call options.
    CallOption,
}

impl Class {
    pub const ALL: [Class; 18] = [
        Class::Comment,
        Class::Call,
        Class::New,
        Class::CtorInvocation,
        Class::Arguments,
        Class::KeywordArgument,
        Class::Member,
        Class::Paren,
        Class::Await,
        Class::ExpressionStatement,
        Class::CallArgument,
        Class::NonNull,
        Class::Definition,
        Class::Scope,
        Class::This,
        Class::Super,
        Class::CallOptions,
        Class::CallOption,
    ];

    fn bit(self) -> u32 {
        1 << (self as u8)
    }
}

/// What a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// `f(x)`, `o.m(x)`: `function` is the callee expression.
    Call,
    /// Java `o.m(x)` / `m(x)` (`method_invocation`): `receiver` and `name` are given, `function`
    /// is the call node itself.
    Method,
    /// `new T(x)`: `function` is the type (or constructor expression).
    New,
    /// Java `this(x)` in a constructor.
    ThisCtor,
    /// Java `super(x)` in a constructor.
    SuperCtor,
}

/// A call taken apart, the same way for every analysis.
#[derive(Debug, Clone, Copy)]
pub struct CallSyntax<'t> {
    /// The call node.
    pub node: Node<'t>,
    pub shape: CallShape,
    /// The callee expression as written (not unwrapped), the type of a `new`, or the
    /// `method_invocation` node itself.
    pub function: Node<'t>,
    /// The receiver of a [`CallShape::Method`] call (`o` in `o.m(x)`), if written.
    pub receiver: Option<Node<'t>>,
    /// The method name of a [`CallShape::Method`] call.
    pub name: Option<Node<'t>>,
    /// The argument list node, when the call has one (see [`LangSpec::args`]).
    pub arguments: Option<Node<'t>>,
}

/// A member access `object.name`.
#[derive(Debug, Clone, Copy)]
pub struct Member<'t> {
    pub object: Node<'t>,
    pub name: Node<'t>,
}

/// A call's arguments: positional ones (in order) and keyword ones (`name`, `value`).
#[derive(Debug, Clone, Default)]
pub struct Arguments<'t> {
    pub positional: Vec<Node<'t>>,
    pub keyword: Vec<(Node<'t>, Node<'t>)>,
}

/// One language's knowledge: the kind table and the functions that take its nodes apart.
pub struct LangSpec {
    pub language: Language,
    /// The node kinds of each class (named kinds of the language's grammar).
    pub classes: &'static [(Class, &'static [&'static str])],
    /// The field names of a member access node: (object, member name).
    pub member_fields: &'static [(&'static str, &'static str, &'static str)],
    /// Takes a call node of this language apart (`None` for a node that is no call).
    pub call: for<'t> fn(&LangSpec, Node<'t>) -> Option<CallSyntax<'t>>,
    /// Words without one of which the text of a function after its name (or its first token,
    /// for anonymous functions) cannot define a nested function, lambda or class: function
    /// discovery does not descend into a function whose rest has none of them. `None` when
    /// the language can define a function without a keyword (a JavaScript method in an object
    /// literal, a C++ lambda): every node is visited then.
    pub nested_function_words: Option<&'static [&'static str]>,
    /// True when an edit inside one top-level item may be checked by parsing that item alone
    /// (`syntax::splice`): every top-level item starts in the same parser and scanner state
    /// (Python: column 0, no open bracket), and tree-sitter's own incremental reparse of the
    /// language does not reuse the items after the edit. Other languages reparse as usual.
    pub reparse_top_level_alone: bool,
}

impl LangSpec {
    /// The kinds of one class.
    pub fn kinds(&self, class: Class) -> &'static [&'static str] {
        self.classes
            .iter()
            .find(|(c, _)| *c == class)
            .map_or(&[], |(_, k)| *k)
    }

    /// True when `node` (a node of this language's tree) is of `class`. One table lookup by
    /// kind id.
    pub fn is(&self, node: Node<'_>, class: Class) -> bool {
        self.is_id(node.kind_id(), class)
    }

    /// True when the kind with this id is of `class`.
    pub fn is_id(&self, kind_id: u16, class: Class) -> bool {
        id_table(self.language)
            .get(usize::from(kind_id))
            .is_some_and(|bits| bits & class.bit() != 0)
    }

    /// True when the kind named `kind` is of `class` in this language.
    pub fn kind_is(&self, kind: &str, class: Class) -> bool {
        self.kinds(class).contains(&kind)
    }

    /// Named children that are not comments.
    pub fn named_children<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut c = node.walk();
        node.named_children(&mut c)
            .filter(|n| !self.is(*n, Class::Comment))
            .collect()
    }

    /// `object.name` when `node` is a member access.
    pub fn member<'t>(&self, node: Node<'t>) -> Option<Member<'t>> {
        let (_, obj, name) = self
            .member_fields
            .iter()
            .find(|(k, _, _)| *k == node.kind())?;
        Some(Member {
            object: node.child_by_field_name(obj)?,
            name: node.child_by_field_name(name)?,
        })
    }

    /// The arguments in an argument list node; anything else (a Python generator argument, a
    /// JavaScript tagged template) is one positional argument.
    pub fn arguments<'t>(&self, list: Node<'t>) -> Arguments<'t> {
        let mut out = Arguments::default();
        if !self.is(list, Class::Arguments) {
            out.positional.push(list);
            return out;
        }
        for a in self.named_children(list) {
            if self.is(a, Class::KeywordArgument) {
                if let (Some(n), Some(v)) = (
                    a.child_by_field_name("name"),
                    a.child_by_field_name("value"),
                ) {
                    out.keyword.push((n, v));
                }
            } else {
                out.positional.push(a);
            }
        }
        out
    }

    /// A call's arguments: those of its argument list, or (Solidity) its `call_argument`
    /// children.
    pub fn args<'t>(&self, call: &CallSyntax<'t>) -> Arguments<'t> {
        match call.arguments {
            Some(list) => self.arguments(list),
            None => Arguments {
                positional: self
                    .named_children(call.node)
                    .into_iter()
                    .filter(|c| self.is(*c, Class::CallArgument))
                    .collect(),
                keyword: Vec::new(),
            },
        }
    }

    /// Solidity call options: for `to.call{value: v}` the callee `to.call` and the option
    /// values (`v`); `None` when `function` carries no options.
    pub fn call_options<'t>(&self, function: Node<'t>) -> Option<(Node<'t>, Vec<Node<'t>>)> {
        if !self.is(function, Class::CallOptions) {
            return None;
        }
        let values = self
            .named_children(function)
            .into_iter()
            .filter(|c| self.is(*c, Class::CallOption))
            .filter_map(|c| c.child_by_field_name("value"))
            .collect();
        Some((function.child_by_field_name("type")?, values))
    }

    /// Takes a call apart (`None` for a node that is no call this language knows).
    pub fn call<'t>(&self, node: Node<'t>) -> Option<CallSyntax<'t>> {
        (self.call)(self, node)
    }

    /// Strips wrapper nodes of the given classes around a single expression (bounded).
    pub fn unwrap<'t>(&self, mut node: Node<'t>, wrappers: &[Class]) -> Node<'t> {
        for _ in 0..64 {
            if !wrappers.iter().any(|c| self.is(node, *c)) {
                return node;
            }
            let kids = self.named_children(node);
            match kids.as_slice() {
                [only] => node = *only,
                _ => return node,
            }
        }
        node
    }
}

/// The spec of a language.
/// C/C++ nodes whose children are file-scope (namespace-scope) declarations: the file, a
/// namespace, an `extern "C"` block, a preprocessor conditional.
pub fn holds_file_scope(kind: &str) -> bool {
    matches!(
        kind,
        kind::TRANSLATION_UNIT
            | kind::NAMESPACE_DEFINITION
            | kind::DECLARATION_LIST
            | kind::LINKAGE_SPECIFICATION
            | kind::PREPROC_IF
            | kind::PREPROC_IFDEF
            | kind::PREPROC_ELSE
            | kind::PREPROC_ELIF
    )
}

pub fn spec(lang: Language) -> &'static LangSpec {
    match lang {
        Language::Python => &python::SPEC,
        Language::Java => &java::SPEC,
        Language::C => &c::SPEC,
        Language::Cpp => &cpp::SPEC,
        Language::Solidity => &solidity::SPEC,
        Language::JavaScript => &javascript::SPEC,
        Language::TypeScript => &typescript::SPEC,
    }
}

/// True when `kind` is of `class` in any language: for code that looks at kinds without
/// knowing the language (every grammar's kinds of one class, one hash lookup).
pub fn any_is(kind: &str, class: Class) -> bool {
    any_in(kind, &[class])
}

/// Every language's kinds with the classes they have in some language.
fn union_table() -> &'static HashMap<&'static str, u32> {
    static UNION: OnceLock<HashMap<&'static str, u32>> = OnceLock::new();
    UNION.get_or_init(|| {
        let mut m: HashMap<&'static str, u32> = HashMap::new();
        for lang in Language::ALL {
            for (c, kinds) in spec(lang).classes {
                for k in *kinds {
                    *m.entry(k).or_default() |= c.bit();
                }
            }
        }
        m
    })
}

/// True when `kind` is of any of `classes` in any language (one hash lookup).
pub fn any_in(kind: &str, classes: &[Class]) -> bool {
    let want = classes.iter().fold(0, |bits, c| bits | c.bit());
    union_table().get(kind).is_some_and(|bits| bits & want != 0)
}

/// Per language, the classes of every kind id (aliases included: every id whose name is
/// listed), built once.
fn id_table(lang: Language) -> &'static [u32] {
    static TABLES: [OnceLock<Vec<u32>>; Language::ALL.len()] =
        [const { OnceLock::new() }; Language::ALL.len()];
    let i = Language::ALL.iter().position(|l| *l == lang).unwrap_or(0);
    TABLES[i].get_or_init(|| {
        let g = lang.grammar();
        let s = spec(lang);
        (0..g.node_kind_count())
            .map(|id| {
                let Some(name) = u16::try_from(id).ok().and_then(|id| g.node_kind_for_id(id))
                else {
                    return 0;
                };
                s.classes
                    .iter()
                    .filter(|(_, kinds)| kinds.contains(&name))
                    .fold(0, |bits, (c, _)| bits | c.bit())
            })
            .collect()
    })
}

/// The kinds of `table` that are not named kinds of `lang`'s grammar (misspelt, or from another
/// grammar), and the member fields that are not fields of it.
pub fn invalid_kinds(lang: Language, spec: &LangSpec) -> Vec<String> {
    let g = lang.grammar();
    let mut bad = Vec::new();
    for (class, kinds) in spec.classes {
        for k in *kinds {
            if g.id_for_node_kind(k, true) == 0 {
                bad.push(format!("{lang:?} {class:?}: `{k}` is no named kind"));
            }
        }
    }
    for (k, obj, name) in spec.member_fields {
        if g.id_for_node_kind(k, true) == 0 {
            bad.push(format!("{lang:?} member: `{k}` is no named kind"));
        }
        for f in [obj, name] {
            if g.field_id_for_name(f).is_none() {
                bad.push(format!("{lang:?} member: `{f}` is no field"));
            }
        }
    }
    bad
}

/// The entries of the [`kind`] and [`field`] tables that a grammar they list does not define.
pub fn invalid_vocabulary(
    kinds: &[(&str, &[Language])],
    fields: &[(&str, &[Language])],
) -> Vec<String> {
    let mut bad = Vec::new();
    for (k, langs) in kinds {
        for lang in *langs {
            if !is_named_kind(lang.grammar(), k) {
                bad.push(format!("kind `{k}` is no named kind of {lang:?}"));
            }
        }
    }
    for (f, langs) in fields {
        for lang in *langs {
            if lang.grammar().field_id_for_name(f).is_none() {
                bad.push(format!("field `{f}` is no field of {lang:?}"));
            }
        }
    }
    bad
}

/// True when `kind` names a named node kind (or a supertype) of the grammar.
pub fn is_named_kind(g: tree_sitter::Language, kind: &str) -> bool {
    g.id_for_node_kind(kind, true) != 0
}

/// The common shape of `call_expression`-style calls (C, C++, JavaScript, TypeScript,
/// Solidity): `function` and `arguments` fields.
fn call_expression<'t>(node: Node<'t>) -> Option<CallSyntax<'t>> {
    Some(CallSyntax {
        node,
        shape: CallShape::Call,
        function: node.child_by_field_name("function")?,
        receiver: None,
        name: None,
        arguments: node.child_by_field_name("arguments"),
    })
}

/// `new T(x)` with the type in `field`.
fn new_expression<'t>(node: Node<'t>, fields: &[&str]) -> Option<CallSyntax<'t>> {
    Some(CallSyntax {
        node,
        shape: CallShape::New,
        function: fields.iter().find_map(|f| node.child_by_field_name(f))?,
        receiver: None,
        name: None,
        arguments: node.child_by_field_name("arguments"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ParsedFile;

    #[test]
    fn every_kind_and_field_is_of_its_grammar() {
        for lang in Language::ALL {
            let s = spec(lang);
            assert_eq!(s.language, lang);
            let bad = invalid_kinds(lang, s);
            assert!(bad.is_empty(), "{}", bad.join("\n"));
        }
    }

    #[test]
    fn every_named_kind_and_field_is_of_the_grammars_it_lists() {
        let bad = invalid_vocabulary(kind::ALL, field::ALL);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
        assert!(kind::ALL.len() > 300 && field::ALL.len() > 40);
    }

    #[test]
    fn a_misspelt_vocabulary_entry_is_caught() {
        let kinds: &[(&str, &[Language])] = &[
            ("call_expression", &[Language::C, Language::JavaScript]),
            ("call_expresion", &[Language::C]),
            ("method_invocation", &[Language::Java, Language::Python]),
        ];
        let fields: &[(&str, &[Language])] =
            &[("function", &[Language::C]), ("functoin", &[Language::C])];
        let bad = invalid_vocabulary(kinds, fields);
        assert_eq!(bad.len(), 3, "{bad:?}");
        assert!(bad[0].contains("call_expresion"));
        assert!(bad[1].contains("Python") && bad[1].contains("method_invocation"));
        assert!(bad[2].contains("functoin"));
    }

    #[test]
    fn a_misspelt_kind_or_field_is_caught() {
        static BAD: LangSpec = LangSpec {
            language: Language::Python,
            classes: &[(Class::Call, &["calll", "call"])],
            member_fields: &[("attribute", "object", "atribute")],
            call: |_, _| None,
            nested_function_words: None,
            reparse_top_level_alone: false,
        };
        let bad = invalid_kinds(Language::Python, &BAD);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].contains("calll") && bad[1].contains("atribute"));
        // A kind of another grammar is no kind of this one.
        static OTHER: LangSpec = LangSpec {
            language: Language::Python,
            classes: &[(Class::Call, &["method_invocation"])],
            member_fields: &[],
            call: |_, _| None,
            nested_function_words: None,
            reparse_top_level_alone: false,
        };
        assert_eq!(invalid_kinds(Language::Python, &OTHER).len(), 1);
    }

    fn first_call(lang: Language, src: &str) -> (ParsedFile, String) {
        let f = ParsedFile::parse(lang, src);
        let s = spec(lang);
        let mut stack = vec![f.tree.root_node()];
        let mut found = None;
        while let Some(n) = stack.pop() {
            if s.is(n, Class::Call) || s.is(n, Class::New) || s.is(n, Class::CtorInvocation) {
                found = Some(n);
                break;
            }
            let mut c = n.walk();
            let kids: Vec<_> = n.children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
        let n = found.expect("a call");
        let c = s.call(n).expect("call parts");
        let text = |n: Node<'_>| f.node_text(n).to_string();
        let args = s.args(&c);
        let out = format!(
            "{:?} fn={} recv={:?} name={:?} args={:?} kw={:?}",
            c.shape,
            text(c.function),
            c.receiver.map(text),
            c.name.map(text),
            args.positional.iter().map(|a| text(*a)).collect::<Vec<_>>(),
            args.keyword
                .iter()
                .map(|(k, v)| format!("{}={}", text(*k), text(*v)))
                .collect::<Vec<_>>(),
        );
        (f, out)
    }

    #[test]
    fn calls_are_taken_apart_alike_in_every_language() {
        let cases = [
            (
                Language::Python,
                "o.m(1, k=2)\n",
                "Call fn=o.m recv=None name=None args=[\"1\"] kw=[\"k=2\"]",
            ),
            (
                Language::Python,
                "f(x for x in y)\n",
                "Call fn=f recv=None name=None args=[\"(x for x in y)\"] kw=[]",
            ),
            (
                Language::Java,
                "class A { void f() { o.m(1, 2); } }",
                "Method fn=o.m(1, 2) recv=Some(\"o\") name=Some(\"m\") args=[\"1\", \"2\"] kw=[]",
            ),
            (
                Language::Java,
                "class A { void f() { new B(1); } }",
                "New fn=B recv=None name=None args=[\"1\"] kw=[]",
            ),
            (
                Language::Java,
                "class A { A() { super(1); } }",
                "SuperCtor fn=super recv=None name=None args=[\"1\"] kw=[]",
            ),
            (
                Language::C,
                "void f() { g(1, /* c */ 2); }",
                "Call fn=g recv=None name=None args=[\"1\", \"2\"] kw=[]",
            ),
            (
                Language::Cpp,
                "void f() { new T(1); }",
                "New fn=T recv=None name=None args=[\"1\"] kw=[]",
            ),
            (
                Language::JavaScript,
                "o.m(1);",
                "Call fn=o.m recv=None name=None args=[\"1\"] kw=[]",
            ),
            (
                Language::JavaScript,
                "new C(1);",
                "New fn=C recv=None name=None args=[\"1\"] kw=[]",
            ),
            (
                Language::JavaScript,
                "tag`x`;",
                "Call fn=tag recv=None name=None args=[\"`x`\"] kw=[]",
            ),
            (
                Language::TypeScript,
                "o!.m<T>(1);",
                "Call fn=o!.m recv=None name=None args=[\"1\"] kw=[]",
            ),
            (
                Language::Solidity,
                "contract C { function f() public { g(1); } }",
                "Call fn=g recv=None name=None args=[\"1\"] kw=[]",
            ),
        ];
        for (lang, src, want) in cases {
            let (_, got) = first_call(lang, src);
            assert_eq!(got, want, "{lang:?}: {src}");
        }
    }

    #[test]
    fn members_and_wrappers() {
        let f = ParsedFile::parse(Language::Python, "((a.b))\n");
        let s = spec(Language::Python);
        let stmt = f.tree.root_node().named_child(0).unwrap();
        let inner = s.unwrap(stmt, &[Class::ExpressionStatement, Class::Paren]);
        let m = s.member(inner).expect("member");
        assert_eq!(f.node_text(m.object), "a");
        assert_eq!(f.node_text(m.name), "b");
        assert!(any_is("line_comment", Class::Comment));
        assert!(!any_is("line_comment", Class::Call));
        assert!(spec(Language::Java).kind_is("block_comment", Class::Comment));
        assert!(!spec(Language::Python).kind_is("block_comment", Class::Comment));
    }
}
