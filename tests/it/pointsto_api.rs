//! The public API: JSON contract, alias queries, expression evaluation, multi-file analysis.

use crosscheck::analysis::pointsto::{
    analyze_file, analyze_points_to, sets_may_alias, SourceUnit, Target, VarRef,
};
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use serde_json::json;
use tree_sitter::Node;

#[test]
fn json_output_matches_the_analyze_contract() {
    let src = "\
struct node { struct node *next; };
int x;
int *gp = &x;
void link_nodes(struct node *s, struct node *t) { s->next = t; }
int main(void) { struct node a, b; link_nodes(&a, &b); int *h = malloc(4); return 0; }
";
    let file = ParsedFile::parse(Language::C, src);
    let r = analyze_file("contract.c", &file, &Cancel::never());
    let var = |name: &str, f: Option<&str>| json!({"kind": "var", "name": name, "function": f});
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"points_to": [
            {"function": null, "var": "gp", "targets": [var("x", None)]},
            {"function": "link_nodes", "var": "s", "targets": [var("a", Some("main"))]},
            {"function": "link_nodes", "var": "t", "targets": [var("b", Some("main"))]},
            {"function": "main", "var": "a", "targets": [var("b", Some("main"))]},
            {"function": "main", "var": "h", "targets": [
                {"kind": "heap", "name": "malloc@contract.c:5:65", "function": null}
            ]},
        ]})
    );
}

#[test]
fn may_alias_means_a_shared_target() {
    let src = "int a, b; int *p = &a, *q, *r = &b, *none;\nvoid f(void) { q = p; q = r; }\n";
    let file = ParsedFile::parse(Language::C, src);
    let r = analyze_file("alias.c", &file, &Cancel::never());
    let g = VarRef::global;
    assert!(r.may_alias(g("p"), g("q")));
    assert!(r.may_alias(g("q"), g("r")));
    assert!(!r.may_alias(g("p"), g("r")));
    // A variable with no targets aliases nothing, itself included.
    assert!(!r.may_alias(g("none"), g("none")));
    assert!(!r.may_alias(g("p"), g("undeclared")));
    assert_eq!(
        r.targets(g("q")),
        [Target::var(None, "a"), Target::var(None, "b")].as_slice()
    );
    assert!(r.targets(VarRef::local("f", "q")).is_empty());
}

fn find<'t>(file: &'t ParsedFile, text: &str) -> Node<'t> {
    let mut stack = vec![file.root()];
    while let Some(n) = stack.pop() {
        if file.node_text(n) == text && n.kind() != "expression_statement" {
            return n;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    panic!("no node {text:?}");
}

#[test]
fn expressions_are_evaluated_against_the_solved_sets() {
    let src = "\
struct node { int *data; struct node *next; };
int x, y;
int *arr[3];
void build(void) {
    struct node *head = malloc(sizeof *head);
    struct node *n = malloc(sizeof *n);
    n->data = &x;
    head->next = n;
    arr[0] = &y;
    int **pp = &arr[2];
    check(head->next->data, &arr[2], *pp);
}
";
    let file = ParsedFile::parse(Language::C, src);
    let r = analyze_file("eval.c", &file, &Cancel::never());
    let eval = |text: &str| r.eval_expr("eval.c", &file, Some("build"), find(&file, text));
    let node = Target::heap("malloc@eval.c:6:22");
    // head's object holds n's object; n's object holds &x.
    assert_eq!(
        eval("head->next->data").into_iter().collect::<Vec<_>>(),
        vec![Target::var(None, "x")]
    );
    assert_eq!(
        eval("head->next").into_iter().collect::<Vec<_>>(),
        vec![node.clone()]
    );
    assert_eq!(eval("n").into_iter().collect::<Vec<_>>(), vec![node]);
    assert_eq!(
        eval("&arr[2]").into_iter().collect::<Vec<_>>(),
        vec![Target::var(None, "arr")]
    );
    assert_eq!(
        eval("*pp").into_iter().collect::<Vec<_>>(),
        vec![Target::var(None, "y")]
    );
    assert!(sets_may_alias(&eval("&arr[2]"), &eval("pp")));
    assert!(!sets_may_alias(&eval("*pp"), &eval("n")));
}

#[test]
fn heap_objects_flow_into_parameters_and_stores_through_them() {
    let src = "\
struct node { struct node *next; };
void push(struct node *head, struct node *item) { head->next = item; }
int main(void) { struct node *h = malloc(8); struct node *i = malloc(8); push(h, i); return 0; }
";
    let file = ParsedFile::parse(Language::C, src);
    let r = analyze_file("list.c", &file, &Cancel::never());
    let h = Target::heap("malloc@list.c:3:35");
    let i = Target::heap("malloc@list.c:3:63");
    assert_eq!(
        r.targets(VarRef::local("push", "head")),
        [h.clone()].as_slice()
    );
    assert_eq!(
        r.targets(VarRef::local("push", "item")),
        [i.clone()].as_slice()
    );
    // The store `head->next = item` lands in h's object.
    let stored = r.eval_expr("list.c", &file, Some("push"), find(&file, "head->next"));
    assert_eq!(stored.into_iter().collect::<Vec<_>>(), vec![i]);
    let call = r.eval_expr("list.c", &file, Some("main"), find(&file, "push(h, i)"));
    assert!(call.is_empty(), "push returns nothing");
}

#[test]
fn multi_file_analysis_shares_globals_and_functions() {
    let a = ParsedFile::parse(
        Language::C,
        "int *shared;\nvoid set(int *p) { shared = p; }\n",
    );
    let b = ParsedFile::parse(
        Language::C,
        "extern int *shared;\nvoid set(int *p);\nint main(void) { int x; set(&x); int *r = shared; return 0; }\n",
    );
    let r = analyze_points_to(
        &[
            SourceUnit {
                path: "a.c".into(),
                file: &a,
            },
            SourceUnit {
                path: "b.c".into(),
                file: &b,
            },
        ],
        &Cancel::never(),
    );
    let x = [Target::var(Some("main"), "x")];
    assert_eq!(r.targets(VarRef::global("shared")), x.as_slice());
    assert_eq!(r.targets(VarRef::local("set", "p")), x.as_slice());
    assert_eq!(r.targets(VarRef::local("main", "r")), x.as_slice());
    let names = |path: &str| {
        r.entries_for_file(path)
            .into_iter()
            .map(|e| format!("{}/{}", e.function.unwrap_or_default(), e.var))
            .collect::<Vec<_>>()
    };
    assert_eq!(names("a.c"), vec!["/shared", "set/p"]);
    assert_eq!(names("b.c"), vec!["/shared", "main/r"]);
    assert!(names("missing.c").is_empty());
}

#[test]
fn units_in_other_languages_are_skipped_with_an_error() {
    let py = ParsedFile::parse(Language::Python, "p = [1]\n");
    let c = ParsedFile::parse(Language::C, "int x; int *p = &x;\n");
    let r = analyze_points_to(
        &[
            SourceUnit {
                path: "a.py".into(),
                file: &py,
            },
            SourceUnit {
                path: "b.c".into(),
                file: &c,
            },
        ],
        &Cancel::never(),
    );
    assert_eq!(
        r.targets(VarRef::global("p")),
        [Target::var(None, "x")].as_slice()
    );
    assert_eq!(r.errors.len(), 1);
    assert_eq!(r.errors[0].file, "a.py");
    assert!(r.errors[0].message.contains("C and C++ only"));
    assert!(!r.partial);
}
