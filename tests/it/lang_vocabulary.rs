//! Only `syntax/lang/` spells the grammars' vocabulary (ARCHITECTURE.md, invariant 1).
//!
//! Every source file outside `src/syntax/lang/` is parsed (`syn`), macro bodies included, and
//! three things fail the test:
//! - a string literal that is a named node kind of one of our grammars and has an underscore
//!   (`"call_expression"`), anywhere;
//! - any string compared with a node's kind (`n.kind() == "x"`, `match n.kind() { "x" => .. }`,
//!   `matches!(n.kind(), "x" | "y")`): a kind is written `kind::X`, and a string there that is no
//!   kind of any grammar is reported as misspelt;
//! - a literal field name given to `child_by_field_name` and its kin (written `field::X`).
//!
//! The constants themselves are checked against their grammars by
//! `syntax::lang::tests::every_named_kind_and_field_is_of_the_grammars_it_lists`.

use crate::architecture::rust_files;
use crosscheck::syntax::Language;
use proc_macro2::{TokenStream, TokenTree};
use std::collections::BTreeSet;
use std::path::Path;
use syn::punctuated::Punctuated;
use syn::visit::Visit;

/// Calls whose first argument is a grammar field name.
const FIELD_CALLS: [&str; 3] = [
    "child_by_field_name",
    "children_by_field_name",
    "field_id_for_name",
];

/// A string literal's value and line.
struct Lit {
    value: String,
    line: usize,
}

impl Lit {
    fn of(l: &syn::LitStr) -> Lit {
        Lit {
            value: l.value(),
            line: l.span().start().line,
        }
    }
}

struct Vocabulary {
    /// Named kinds (and supertypes and aliases).
    kinds: BTreeSet<String>,
    /// Anonymous kinds: the tokens themselves (`+`, `function`), which are their own text.
    tokens: BTreeSet<String>,
}

impl Vocabulary {
    fn of_our_grammars() -> Self {
        let mut kinds = BTreeSet::new();
        let mut tokens = BTreeSet::from(["ERROR".to_string()]);
        for lang in Language::ALL {
            let g = lang.grammar();
            for id in 0..g.node_kind_count() {
                let Ok(id) = u16::try_from(id) else { break };
                if let Some(k) = g.node_kind_for_id(id) {
                    if g.node_kind_is_named(id) {
                        kinds.insert(k.to_string());
                    } else {
                        tokens.insert(k.to_string());
                    }
                }
            }
        }
        Vocabulary { kinds, tokens }
    }
}

struct Checker<'v> {
    vocab: &'v Vocabulary,
    rel: String,
    found: Vec<String>,
    /// Whether a variable named `kind` holds a node kind: in files that read node kinds.
    kind_idents: bool,
}

/// True when an expression reads a node kind: `x.kind()`, or (with `idents`, in files that read
/// node kinds at all) a variable named `kind`; elsewhere `kind` is some other kind (of a source,
/// a label).
fn reads_kind(e: &syn::Expr, idents: bool) -> bool {
    struct Mentions(bool, bool);
    impl<'ast> Visit<'ast> for Mentions {
        fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
            if c.method == "kind" {
                self.0 = true;
            }
            syn::visit::visit_expr_method_call(self, c);
        }
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            if i == "kind" && self.1 {
                self.0 = true;
            }
        }
    }
    let mut m = Mentions(false, idents);
    m.visit_expr(e);
    m.0
}

/// The strings of `p` that stand where `scrutinee` reads a node kind: all of them, or for a
/// tuple matched against a tuple, those in the positions that read a kind.
fn kind_strings(scrutinee: &syn::Expr, p: &syn::Pat, idents: bool, out: &mut Vec<Lit>) {
    match (scrutinee, p) {
        (syn::Expr::Tuple(t), syn::Pat::Tuple(pt)) => {
            for (e, q) in t.elems.iter().zip(pt.elems.iter()) {
                kind_strings(e, q, idents, out);
            }
        }
        (_, syn::Pat::Or(o)) => {
            for q in &o.cases {
                kind_strings(scrutinee, q, idents, out);
            }
        }
        (syn::Expr::Paren(e), _) => kind_strings(&e.expr, p, idents, out),
        _ if reads_kind(scrutinee, idents) => pattern_strings(p, out),
        _ => {}
    }
}

fn pattern_strings(p: &syn::Pat, out: &mut Vec<Lit>) {
    struct Lits<'o>(&'o mut Vec<Lit>);
    impl<'ast> Visit<'ast> for Lits<'_> {
        fn visit_lit_str(&mut self, l: &'ast syn::LitStr) {
            self.0.push(Lit::of(l));
        }
    }
    Lits(out).visit_pat(p);
}

impl Checker<'_> {
    fn flag(&mut self, lit: &Lit, what: &str) {
        self.found.push(format!(
            "{}:{}: \"{}\" {what}",
            self.rel, lit.line, lit.value
        ));
    }

    /// A string in a place that holds a node kind.
    fn kind_position(&mut self, lit: &Lit) {
        let v = &lit.value;
        if self.vocab.kinds.contains(v) {
            self.flag(lit, "is a node kind: write it as syntax::lang::kind::*");
        } else if !v.is_empty() && !self.vocab.tokens.contains(v) {
            self.flag(
                lit,
                "is compared with a node kind but is no kind of any grammar",
            );
        }
    }

    fn check_literal(&mut self, lit: &Lit) {
        let v = &lit.value;
        if v.contains('_') && self.vocab.kinds.contains(v) {
            self.flag(lit, "is a node kind: write it as syntax::lang::kind::*");
        }
    }

    fn tokens(&mut self, ts: TokenStream) {
        for tt in ts {
            match tt {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Literal(l) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                        self.check_literal(&Lit::of(&s));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `matches!(scrutinee, pattern [if guard])`.
struct Matches {
    scrutinee: syn::Expr,
    pattern: syn::Pat,
    guard: Option<syn::Expr>,
}

impl syn::parse::Parse for Matches {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let scrutinee = input.parse()?;
        input.parse::<syn::Token![,]>()?;
        let pattern = syn::Pat::parse_multi_with_leading_vert(input)?;
        let guard = if input.peek(syn::Token![if]) {
            input.parse::<syn::Token![if]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        let _ = input.parse::<Option<syn::Token![,]>>()?;
        Ok(Matches {
            scrutinee,
            pattern,
            guard,
        })
    }
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_lit_str(&mut self, l: &'ast syn::LitStr) {
        self.check_literal(&Lit::of(l));
    }

    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if matches!(b.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
            for (side, other) in [(&*b.left, &*b.right), (&*b.right, &*b.left)] {
                if let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = side
                {
                    if reads_kind(other, self.kind_idents) {
                        self.kind_position(&Lit::of(s));
                    }
                }
            }
        }
        syn::visit::visit_expr_binary(self, b);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        for arm in &m.arms {
            let mut lits = Vec::new();
            kind_strings(&m.expr, &arm.pat, self.kind_idents, &mut lits);
            for l in &lits {
                self.kind_position(l);
            }
        }
        syn::visit::visit_expr_match(self, m);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if FIELD_CALLS.iter().any(|f| c.method == f) {
            if let Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })) = c.args.first()
            {
                self.flag(
                    &Lit::of(s),
                    "is a field name: write it as syntax::lang::field::*",
                );
            }
        }
        syn::visit::visit_expr_method_call(self, c);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if name == "matches" {
            if let Ok(mm) = m.parse_body::<Matches>() {
                let mut lits = Vec::new();
                kind_strings(&mm.scrutinee, &mm.pattern, self.kind_idents, &mut lits);
                for l in &lits {
                    self.kind_position(l);
                }
                self.visit_expr(&mm.scrutinee);
                self.visit_pat(&mm.pattern);
                if let Some(g) = &mm.guard {
                    self.visit_expr(g);
                }
                return;
            }
        }
        match m.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated) {
            Ok(args) => {
                for a in &args {
                    self.visit_expr(a);
                }
            }
            Err(_) => self.tokens(m.tokens.clone()),
        }
    }
}

fn check(vocab: &Vocabulary, rel: &str, text: &str) -> Vec<String> {
    let file = match syn::parse_file(text) {
        Ok(f) => f,
        Err(e) => return vec![format!("{rel}: does not parse: {e}")],
    };
    let mut c = Checker {
        vocab,
        rel: rel.to_string(),
        found: Vec::new(),
        kind_idents: text.contains(".kind()"),
    };
    c.visit_file(&file);
    c.found
}

#[test]
fn no_node_kind_or_field_name_is_spelled_outside_syntax_lang() {
    let vocab = Vocabulary::of_our_grammars();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 100, "found only {} source files", files.len());
    let mut found = Vec::new();
    for p in files {
        let rel = p
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("syntax/lang/") {
            continue;
        }
        found.extend(check(&vocab, &rel, &std::fs::read_to_string(&p).unwrap()));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_vocabulary_check_catches_each_form() {
    let vocab = Vocabulary::of_our_grammars();
    let one = |src: &str| check(&vocab, "analysis/a.rs", src);
    // An underscore kind anywhere, in macros too.
    assert_eq!(one("const K: &[&str] = &[\"call_expression\"];").len(), 1);
    assert_eq!(
        one("fn f() { let v = vec![\"method_invocation\"]; }").len(),
        1
    );
    // Compared with a kind: every form, and a misspelt kind is named as such.
    assert_eq!(one("fn f(n: N) -> bool { n.kind() == \"call\" }").len(), 1);
    assert_eq!(
        one("fn f(n: N) -> bool { let kind = n.kind(); \"lambda\" != kind }").len(),
        1
    );
    let misspelt = one("fn f(n: N) -> bool { matches!(n.kind(), \"call_expresion\" | \"call\") }");
    assert_eq!(misspelt.len(), 2, "{misspelt:?}");
    assert!(misspelt[0].contains("no kind of any grammar"));
    assert_eq!(
        one("fn f(n: N) { match n.kind() { \"identifier\" => {}, _ => {} } }").len(),
        1
    );
    // Tuples are matched position by position; tokens are their own text.
    assert_eq!(
        one("fn f(n: N, f: F) -> bool { matches!((n.kind(), f), (\"call\", Some(\"name\"))) }")
            .len(),
        1
    );
    assert!(one("fn f(n: N) -> bool { n.kind() == \"+\" }").is_empty());
    // Field names.
    assert_eq!(
        one("fn f(n: N) { n.child_by_field_name(\"function\"); }").len(),
        1
    );
    // Ordinary words stay words; constants are fine.
    assert!(one("fn f(t: &str) -> bool { t == \"this\" }").is_empty());
    assert!(one("fn f(n: N) -> bool { n.kind() == kind::CALL }").is_empty());
    assert!(one("fn f() { println!(\"{}\", \"some text\"); }").is_empty());
}
