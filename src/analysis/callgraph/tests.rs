//! One test per resolution rule (see the module docs).

use super::*;
use crate::syntax::Language;

/// Edges of a one-file program as `caller -> callee` strings (externals as `caller -> ?name`).
fn edges(lang: Language, src: &str) -> Vec<String> {
    let file = ParsedFile::parse(lang, src);
    let units = [SourceUnit {
        path: "main".into(),
        file: &file,
    }];
    render(&build_call_graph(&units, &Cancel::never()))
}

fn render(es: &[CallEdge]) -> Vec<String> {
    let mut v: Vec<String> = es
        .iter()
        .map(|e| {
            let callee = if e.callee.is_external() {
                format!("?{}", e.callee.name)
            } else {
                e.callee.name.clone()
            };
            format!("{} -> {}", e.caller.name, callee)
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn has(v: &[String], edge: &str) -> bool {
    v.iter().any(|e| e == edge)
}

fn workspace(files: &[(&str, Language, &str)]) -> Vec<CallEdge> {
    let parsed: Vec<(String, ParsedFile)> = files
        .iter()
        .map(|(p, l, s)| (p.to_string(), ParsedFile::parse(*l, *s)))
        .collect();
    let units: Vec<SourceUnit<'_>> = parsed
        .iter()
        .map(|(p, f)| SourceUnit {
            path: p.clone(),
            file: f,
        })
        .collect();
    build_call_graph(&units, &Cancel::never())
}

#[test]
fn calls_in_nested_functions_and_lambdas_belong_to_them() {
    let src = "def outer():\n    def inner():\n        helper()\n    f = lambda: helper()\n    inner()\n\ndef helper():\n    pass\n\nhelper()\n";
    let v = edges(Language::Python, src);
    assert_eq!(
        v,
        vec![
            "outer -> outer.inner",
            "outer.<lambda@4> -> helper",
            "outer.inner -> helper",
        ]
    );
}

#[test]
fn module_level_calls_have_no_caller_but_provide_facts() {
    let src = "class Db:\n    def query(self):\n        pass\n\ndb = Db()\n\ndef main():\n    db.query()\n";
    assert_eq!(edges(Language::Python, src), vec!["main -> Db.query"]);
}

#[test]
fn python_self_and_inherited_methods() {
    let src = "class A:\n    def base(self):\n        pass\n\nclass B(A):\n    def run(self):\n        self.base()\n        self.own()\n    def own(self):\n        pass\n";
    assert_eq!(
        edges(Language::Python, src),
        vec!["B.run -> A.base", "B.run -> B.own"]
    );
}

#[test]
fn python_super_goes_to_the_base_only() {
    let src = "class A:\n    def __init__(self):\n        pass\n    def m(self):\n        pass\nclass B(A):\n    def __init__(self):\n        super().__init__()\n    def m(self):\n        super().m()\n";
    assert_eq!(
        edges(Language::Python, src),
        vec!["B.__init__ -> A.__init__", "B.m -> A.m"]
    );
}

#[test]
fn python_receiver_types_from_local_facts() {
    let src = "class Repo:\n    def get(self):\n        pass\nclass Cache:\n    def get(self):\n        pass\ndef use(r: Repo, c: 'Cache'):\n    x = Repo()\n    x.get()\n    r.get()\n    c.get()\n    unknown.get()\n";
    let v = edges(Language::Python, src);
    assert_eq!(
        v,
        vec![
            "use -> ?unknown.get",
            "use -> Cache.get",
            "use -> Repo.Repo",
            "use -> Repo.get"
        ]
        .into_iter()
        .filter(|e| !e.contains("Repo.Repo"))
        .chain(["use -> ?Repo"])
        .map(String::from)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
}

#[test]
fn python_conflicting_assignments_leave_the_receiver_unknown() {
    let src = "class A:\n    def go(self):\n        pass\nclass B:\n    def go(self):\n        pass\ndef f(flag):\n    x = A()\n    if flag:\n        x = B()\n    x.go()\n";
    let v = edges(Language::Python, src);
    assert!(has(&v, "f -> ?x.go"), "{v:?}");
    assert!(!has(&v, "f -> A.go") && !has(&v, "f -> B.go"), "{v:?}");
}

#[test]
fn python_fields_assigned_in_init() {
    let src = "class Engine:\n    def start(self):\n        pass\nclass Car:\n    def __init__(self):\n        self.engine = Engine()\n    def drive(self):\n        self.engine.start()\n";
    let v = edges(Language::Python, src);
    assert!(has(&v, "Car.drive -> Engine.start"), "{v:?}");
    assert!(has(&v, "Car.__init__ -> ?Engine"), "{v:?}");
}

#[test]
fn python_constructor_is_init_when_defined() {
    let src = "class P:\n    def __init__(self, x):\n        pass\nclass Q(P):\n    pass\nclass R:\n    pass\ndef make():\n    P(1)\n    Q(2)\n    R()\n";
    assert_eq!(
        edges(Language::Python, src),
        vec!["make -> ?R", "make -> P.__init__"]
    );
}

#[test]
fn python_class_and_static_method_calls() {
    let src = "class U:\n    @staticmethod\n    def s():\n        pass\n    @classmethod\n    def c(cls):\n        cls.s()\ndef f():\n    U.s()\n    U.c()\n";
    assert_eq!(
        edges(Language::Python, src),
        vec!["U.c -> U.s", "f -> U.c", "f -> U.s"]
    );
}

#[test]
fn python_lambda_bound_to_a_name_and_immediately_invoked() {
    let src = "square = lambda x: x * x\ndef f():\n    g = lambda: 1\n    g()\n    (lambda: 2)()\n    square(3)\n";
    assert_eq!(
        edges(Language::Python, src),
        vec!["f -> <lambda@1>", "f -> f.<lambda@3>", "f -> f.<lambda@5>"]
    );
}

#[test]
fn parameters_shadow_functions_and_callbacks_stay_external() {
    let src = "def fn():\n    pass\ndef apply(fn, x):\n    return fn(x)\n";
    assert_eq!(edges(Language::Python, src), vec!["apply -> ?fn"]);
}

#[test]
fn python_imports_across_files() {
    let es = workspace(&[
        ("app/main.py", Language::Python, "from app.util import helper as h\nfrom .models import User\nimport app.util as u\nimport app.util\ndef main():\n    h()\n    User().save()\n    u.helper()\n    app.util.helper()\n"),
        ("app/util.py", Language::Python, "def helper():\n    pass\n"),
        ("app/models.py", Language::Python, "class User:\n    def save(self):\n        pass\n"),
    ]);
    let v = render(&es);
    assert!(has(&v, "main -> helper"), "{v:?}");
    assert!(has(&v, "main -> User.save"), "{v:?}");
    let helper_edges: Vec<_> = es.iter().filter(|e| e.callee.name == "helper").collect();
    assert_eq!(helper_edges.len(), 3, "{helper_edges:?}");
    assert!(helper_edges
        .iter()
        .all(|e| e.callee.file.as_deref() == Some("app/util.py")));
}

#[test]
fn java_this_fields_locals_and_statics() {
    let src = r#"
class Repo { void save(int x) {} static Repo open() { return new Repo(); } }
class Service {
    private Repo repo = new Repo();
    Service() { init(); }
    void init() {}
    void run(Repo p) {
        this.repo.save(1);
        repo.save(2);
        p.save(3);
        Repo local = Repo.open();
        local.save(4);
        var v = new Repo();
        v.save(5);
        this.init();
        list.add(1);
    }
}"#;
    let v = edges(Language::Java, src);
    for e in [
        "Service.Service -> Service.init",
        "Service.run -> Repo.save",
        "Service.run -> Repo.open",
        "Service.run -> Service.init",
        "Service.run -> ?list.add",
        "Repo.open -> ?Repo",
    ] {
        assert!(has(&v, e), "missing {e}: {v:?}");
    }
}

#[test]
fn java_overloads_by_arity_and_literal_type() {
    let src = r#"
class P {
    void log(int a) {}
    void log(String s) {}
    void log(int a, int b) {}
    void run() { log(1); log("x"); log(1, 2); }
}"#;
    let file = ParsedFile::parse(Language::Java, src);
    let units = [SourceUnit {
        path: "P.java".into(),
        file: &file,
    }];
    let es = build_call_graph(&units, &Cancel::never());
    let got: Vec<(usize, String)> = es
        .iter()
        .filter(|e| e.caller.name == "P.run")
        .map(|e| (e.line, e.callee.signature.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        got,
        vec![
            (6, "(String s)".to_string()),
            (6, "(int a)".to_string()),
            (6, "(int a, int b)".to_string())
        ]
    );
    // Each call picked exactly one overload: three distinct call texts, three edges.
    assert_eq!(es.iter().filter(|e| e.caller.name == "P.run").count(), 3);
}

#[test]
fn java_ambiguous_overloads_keep_every_candidate() {
    let src =
        "class P { void f(int a) {} void f(long a) {} void g(Object o) { f(o.hashCode()); } }";
    let file = ParsedFile::parse(Language::Java, src);
    let units = [SourceUnit {
        path: "P.java".into(),
        file: &file,
    }];
    let es = build_call_graph(&units, &Cancel::never());
    assert_eq!(es.iter().filter(|e| e.callee.name == "P.f").count(), 2);
}

#[test]
fn java_super_and_constructor_chaining() {
    let src = r#"
class A { A(int x) {} void m() {} }
class B extends A {
    B() { super(1); }
    B(int y) { this(); }
    void m() { super.m(); }
}"#;
    let v = edges(Language::Java, src);
    assert_eq!(v, vec!["B.B -> A.A", "B.B -> B.B", "B.m -> A.m"]);
}

#[test]
fn java_inherited_implicit_this_and_outer_class_methods() {
    let src = r#"
class Base { void helper() {} }
class Outer extends Base {
    void top() {}
    class Inner { void go() { top(); helper(); } }
    void m() { new Thread() { public void run() { top(); } }; }
}"#;
    let v = edges(Language::Java, src);
    assert!(has(&v, "Outer.Inner.go -> Outer.top"), "{v:?}");
    assert!(has(&v, "Outer.Inner.go -> Base.helper"), "{v:?}");
    assert!(
        has(&v, "Outer.m.<anonymous Thread@6>.run -> Outer.top"),
        "{v:?}"
    );
    assert!(has(&v, "Outer.m -> ?Thread"), "{v:?}");
}

#[test]
fn java_static_imports_and_classes_across_files() {
    let es = workspace(&[
        ("src/a/Main.java", Language::Java, "package a;\nimport static b.Util.twice;\nimport b.Util;\nclass Main { void run() { twice(1); Util.once(); new Helper().go(); } }\n"),
        ("src/b/Util.java", Language::Java, "package b;\npublic class Util { public static int twice(int x) { return x; } public static void once() {} }\n"),
        ("src/a/Helper.java", Language::Java, "package a;\nclass Helper { void go() {} }\n"),
    ]);
    let v = render(&es);
    assert_eq!(
        v,
        vec![
            "Main.run -> ?Helper",
            "Main.run -> Helper.go",
            "Main.run -> Util.once",
            "Main.run -> Util.twice"
        ]
    );
}

#[test]
fn c_functions_across_files_respect_static() {
    let es = workspace(&[
        ("main.c", Language::C, "#include \"util.h\"\nstatic int local(void) { return 1; }\nint main(void) { local(); util(); hidden(); printf(\"x\"); return 0; }\n"),
        ("util.c", Language::C, "int util(void) { return 2; }\nstatic int hidden(void) { return 3; }\n"),
    ]);
    let v = render(&es);
    assert_eq!(
        v,
        vec![
            "main -> ?hidden",
            "main -> ?printf",
            "main -> local",
            "main -> util"
        ]
    );
}

#[test]
fn c_function_pointers_resolve_only_through_known_function_values() {
    // A local pointer given only function names calls those functions; a parameter, or a
    // local given anything else (a table entry, another call's result), stays unresolved.
    let src = "int add(int a, int b) { return a + b; }\nint sub(int a, int b) { return a - b; }\nint (*table[2])(int, int);\nint apply(int (*op)(int, int)) { return op(1, 2); }\nint main(int c) { int (*fp)(int, int) = add; if (c) fp = &sub; fp(1, 2); int (*gp)(int, int) = table[c]; gp(1, 2); return apply(add); }\n";
    let v = edges(Language::C, src);
    assert_eq!(
        v,
        vec![
            "apply -> ?op",
            "main -> ?gp",
            "main -> add",
            "main -> apply",
            "main -> sub"
        ]
    );
}

#[test]
fn cpp_methods_namespaces_and_qualified_calls() {
    let src = r#"
namespace geo {
int area(int w) { return w; }
class Shape {
public:
    virtual int size() { return area(1); }
    int twice() { return this->size() * 2 + size(); }
};
class Square : public Shape {
public:
    int size() override { return Shape::size() + geo::area(2); }
};
}
int main() {
    geo::Square sq;
    geo::Shape *p = new geo::Square();
    sq.twice();
    p->size();
    return geo::area(3);
}"#;
    let v = edges(Language::Cpp, src);
    let want = [
        "geo::Shape::size -> geo::area",
        "geo::Shape::twice -> geo::Shape::size",
        "geo::Square::size -> geo::Shape::size",
        "geo::Square::size -> geo::area",
        "main -> ?Square",
        "main -> geo::Shape::twice",
        "main -> geo::Square::size",
        "main -> geo::area",
    ];
    assert_eq!(v, want, "{v:#?}");
}

#[test]
fn cpp_constructors_declarations_and_initializers() {
    let src = r#"
struct Base { Base(int x) {} };
struct Part { Part() {} Part(int a, int b) {} void use() {} };
struct Whole : Base {
    Part part;
    Whole() : Base(1), part(2, 3) { }
};
void f() {
    Part a;
    Part b(1, 2);
    Part c{1, 2};
    Part *d = new Part();
    Part(1, 2).use();
    Whole w;
    int n(3);
}"#;
    let v = edges(Language::Cpp, src);
    let want = [
        "Whole::Whole -> Base::Base",
        "Whole::Whole -> Part::Part",
        "f -> Part::Part",
        "f -> Part::use",
        "f -> Whole::Whole",
    ];
    assert_eq!(v, want, "{v:#?}");
}

#[test]
fn cpp_overloads_by_argument_type() {
    let src = "void put(int x) {}\nvoid put(const char *s) {}\nvoid put(double d, int n = 1) {}\nint main() {\n  put(1);\n  put(\"s\");\n  put(2.5);\n  return 0;\n}\n";
    let file = ParsedFile::parse(Language::Cpp, src);
    let units = [SourceUnit {
        path: "m.cpp".into(),
        file: &file,
    }];
    let es = build_call_graph(&units, &Cancel::never());
    let got: Vec<(usize, String)> = es
        .iter()
        .filter_map(|e| e.callee.signature.clone().map(|s| (e.line, s)))
        .collect();
    let mut want = vec![
        (5, "(int x)".to_string()),
        (6, "(const char *s)".to_string()),
        (7, "(double d, int n = 1)".to_string()),
    ];
    want.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(got, want);
}

#[test]
fn java_overloads_on_array_parameter_types() {
    let src = "class U {\n  static boolean isEmpty(Object[] a) { return a == null; }\n  static boolean isEmpty(long[] a) { return a == null; }\n  static boolean isEmpty(int[] a) { return a == null; }\n  static int f(long[] xs, String[] ss) {\n    isEmpty(xs);\n    isEmpty(ss);\n    isEmpty(null);\n    return 0;\n  }\n}\n";
    let file = ParsedFile::parse(Language::Java, src);
    let units = [SourceUnit {
        path: "U.java".into(),
        file: &file,
    }];
    let es = build_call_graph(&units, &Cancel::never());
    let got: Vec<(usize, String)> = es
        .iter()
        .filter_map(|e| e.callee.signature.clone().map(|s| (e.line, s)))
        .collect();
    assert_eq!(
        got,
        vec![
            (7, "(Object[] a)".to_string()),
            (8, "(Object[] a)".to_string()),
            (6, "(int[] a)".to_string()),
            (8, "(int[] a)".to_string()),
            (6, "(long[] a)".to_string()),
            (8, "(long[] a)".to_string()),
        ]
        .into_iter()
        .filter(|(l, s)| *l != 6 || s == "(long[] a)")
        .collect::<Vec<_>>()
    );
}

#[test]
fn cpp_out_of_class_definitions_and_using_namespace() {
    let es = workspace(&[
        ("shape.hpp", Language::Cpp, "namespace g { class Shape { public: int size(); int twice(); }; int helper(); }\n"),
        ("shape.cpp", Language::Cpp, "#include \"shape.hpp\"\nusing namespace g;\nint Shape::size() { return helper(); }\nint Shape::twice() { return size() * 2; }\nint g::helper() { return 1; }\n"),
        ("main.cpp", Language::Cpp, "#include \"shape.hpp\"\nint main() { g::Shape s; return s.twice(); }\n"),
    ]);
    let v = render(&es);
    assert_eq!(
        v,
        vec![
            "Shape::size -> g::helper",
            "Shape::twice -> Shape::size",
            "main -> Shape::twice"
        ],
        "{v:#?}"
    );
}

#[test]
fn cpp_lambdas_and_smart_pointers() {
    let src = r#"
#include <memory>
struct W { void go() {} };
int main() {
    auto f = [](int x) { return x; };
    f(1);
    [] { }();
    std::unique_ptr<W> w = std::make_unique<W>();
    w->go();
    return 0;
}"#;
    let v = edges(Language::Cpp, src);
    assert!(has(&v, "main -> main::<lambda@5>"), "{v:?}");
    assert!(has(&v, "main -> main::<lambda@7>"), "{v:?}");
    assert!(has(&v, "main -> W::go"), "{v:?}");
    assert!(has(&v, "main -> ?std::make_unique<W>"), "{v:?}");
}

#[test]
fn solidity_modifiers_bases_state_variables_and_libraries() {
    let src = r#"
pragma solidity ^0.8.0;
library Math { function add(uint a, uint b) internal pure returns (uint) { return a + b; } }
contract Token { function transfer(address to, uint v) public {} }
contract Owned {
    address owner;
    constructor(address o) { owner = o; }
    modifier onlyOwner() { require(msg.sender == owner); _; }
    function check() internal view {}
}
contract Vault is Owned(msg.sender) {
    using Math for uint;
    Token token;
    constructor() { setup(); }
    function setup() internal {}
    function pay(address to, uint v) public onlyOwner {
        token.transfer(to, v.add(1));
        this.setup2();
        check();
        super.check();
        Token(to).transfer(to, 1);
        Math.add(1, 2);
    }
    function setup2() external {}
}"#;
    let v = edges(Language::Solidity, src);
    let want = [
        "Owned.onlyOwner -> ?require",
        "Vault.constructor -> Owned.constructor",
        "Vault.constructor -> Vault.setup",
        "Vault.pay -> Math.add",
        "Vault.pay -> Owned.check",
        "Vault.pay -> Owned.onlyOwner",
        "Vault.pay -> Token.transfer",
        "Vault.pay -> Vault.setup2",
    ];
    assert_eq!(v, want, "{v:#?}");
}

#[test]
fn solidity_new_and_constructor_header_base_calls() {
    let src = "contract A { constructor(uint x) {} }\ncontract C {}\ncontract B is A { constructor() A(1) {} function make() public { new C(); new B(); } }\n";
    let v = edges(Language::Solidity, src);
    assert_eq!(
        v,
        vec![
            "B.constructor -> A.constructor",
            "B.make -> ?C",
            "B.make -> B.constructor"
        ]
    );
}

#[test]
fn javascript_classes_imports_and_no_implicit_this() {
    let es = workspace(&[
        ("src/app.js", Language::JavaScript, "import { load as ld } from './io';\nimport * as io from './io';\nfunction render() {}\nclass View extends Base {\n  constructor() { super(); this.model = new Model(); }\n  render() { render(); this.model.fetch(); ld(); io.save(); }\n}\nclass Base { constructor() {} }\nclass Model { fetch() {} }\n"),
        ("src/io.js", Language::JavaScript, "export function load() {}\nexport function save() {}\n"),
    ]);
    let v = render(&es);
    let want = [
        "View.constructor -> Base.constructor",
        "View.constructor -> ?Model",
        "View.render -> Model.fetch",
        "View.render -> load",
        "View.render -> render",
        "View.render -> save",
    ];
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(v, want);
}

#[test]
fn typescript_annotations_type_receivers() {
    let src = "class Svc { go(): void {} }\nclass A {\n  private s: Svc;\n  run(p: Svc): Svc { this.s.go(); p.go(); const q: Svc = make(); q.go(); return p; }\n}\nfunction make(): Svc { return new Svc(); }\n";
    let v = edges(Language::TypeScript, src);
    assert!(has(&v, "A.run -> Svc.go"), "{v:?}");
    assert!(has(&v, "A.run -> make"), "{v:?}");
    assert!(
        !v.iter().any(|e| e.contains("?") && e.contains(".go")),
        "{v:?}"
    );
}

#[test]
fn lines_are_call_starts_and_edges_are_sorted_and_unique() {
    let src = "def f():\n    pass\ndef g():\n    f(); f()\n    f(\n      1)\n";
    let file = ParsedFile::parse(Language::Python, src);
    let units = [SourceUnit {
        path: "x.py".into(),
        file: &file,
    }];
    let es = build_call_graph(&units, &Cancel::never());
    let lines: Vec<usize> = es.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![4, 5]);
    let mut sorted = es.clone();
    sorted.sort();
    assert_eq!(sorted, es);
}

#[test]
fn hostile_input_does_not_panic() {
    let deep = format!(
        "def f(x):\n    return {}x{}\n",
        "f(".repeat(300),
        ")".repeat(300)
    );
    let v = edges(Language::Python, &deep);
    assert_eq!(v, vec!["f -> f"]);
    let long = format!("int g(int x) {{ return {}1; }}\n", "1+".repeat(500_000));
    let file = ParsedFile::parse(Language::C, long);
    let units = [SourceUnit {
        path: "l.c".into(),
        file: &file,
    }];
    assert!(build_call_graph(&units, &Cancel::never()).is_empty());
    let chain = format!(
        "class A:\n    def m(self):\n        return self{}\n",
        ".a".repeat(2000) + ".m()"
    );
    let _ = edges(Language::Python, &chain);
    for lang in Language::ALL {
        let broken =
            "def f(:\n  g(\nclass { void h( { f(); int x = ; }\ncontract C { function k( { k(); }";
        let _ = edges(lang, broken);
    }
}

#[test]
fn broken_syntax_keeps_the_parts_that_parse() {
    let src = "def ok():\n    helper()\n\ndef helper():\n    pass\n\ndef bad(:\n    pass\n";
    let v = edges(Language::Python, src);
    assert!(has(&v, "ok -> helper"), "{v:?}");
}

#[test]
fn cancelled_build_returns_partial_result() {
    let cancel = Cancel::new();
    cancel.cancel();
    let file = ParsedFile::parse(Language::Python, "def f():\n    f()\n".repeat(5000));
    let units = [SourceUnit {
        path: "c.py".into(),
        file: &file,
    }];
    let g = analyze_call_graph(&units, &cancel);
    assert!(g.partial);
    assert!(g.edges.len() < 5000);
}

#[test]
fn callee_and_caller_indexes() {
    let src = "def a():\n    b()\n    print(1)\ndef b():\n    pass\n";
    let file = ParsedFile::parse(Language::Python, src);
    let units = [SourceUnit {
        path: "i.py".into(),
        file: &file,
    }];
    let g = analyze_call_graph(&units, &Cancel::never());
    let callees = g.callees();
    let (caller, set) = callees.iter().next().expect("a has callees");
    assert_eq!(caller.name, "a");
    assert_eq!(
        set.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        vec!["b"]
    );
    assert_eq!(g.callers().len(), 1);
}

#[test]
fn java_enum_constants_are_instances_of_their_enum() {
    let src = "enum Color { RED, GREEN; String label() { return name(); } }\nclass U { void f() { Color.RED.label(); } }\n";
    let v = edges(Language::Java, src);
    assert!(has(&v, "U.f -> Color.label"), "{v:?}");
}

#[test]
fn cpp_range_for_delegating_constructors_and_template_members() {
    let src = r#"
struct Item { void use() {} };
template <typename T> struct Box { Box() : Box(0) {} Box(int n) {} void put(T x); };
template <typename T> void Box<T>::put(T x) { helper(); }
void helper() {}
void f(std::vector<Item> &items) {
    for (Item &it : items) it.use();
    for (auto &a : items) a.use();
}"#;
    let v = edges(Language::Cpp, src);
    assert!(has(&v, "f -> Item::use"), "{v:?}");
    assert!(has(&v, "f -> ?a.use"), "{v:?}");
    assert!(has(&v, "Box::Box -> Box::Box"), "{v:?}");
    assert!(has(&v, "Box<T>::put -> helper"), "{v:?}");
}

#[test]
fn cpp_std_function_bound_to_a_lambda_calls_the_lambda() {
    let src =
        "int main() {\n  std::function<int(int)> f = [](int x) { return x; };\n  return f(1);\n}\n";
    assert_eq!(edges(Language::Cpp, src), vec!["main -> main::<lambda@2>"]);
}

#[test]
fn python_default_values_belong_to_the_defining_scope() {
    let src = "def default():\n    return 1\ndef outer():\n    def inner(x=default()):\n        return x\n    return inner()\ndef top(y=default()):\n    return y\n";
    assert_eq!(
        edges(Language::Python, src),
        vec!["outer -> default", "outer -> outer.inner"]
    );
}

#[test]
fn python_lookup_follows_c3_linearisation() {
    // D(B, C), B(A), C(A): C3 order is D B C A, so C.m shadows A.m.
    let src = "class A:\n    def m(self):\n        pass\nclass B(A):\n    pass\nclass C(A):\n    def m(self):\n        pass\nclass D(B, C):\n    def run(self):\n        self.m()\n";
    assert_eq!(edges(Language::Python, src), vec!["D.run -> C.m"]);
}

#[test]
fn solidity_super_follows_linearisation() {
    // `is A, B`: B is the most derived base, so super.f() from C reaches B.f.
    let src = "contract A { function f() public virtual {} }\ncontract B { function f() public virtual {} }\ncontract C is A, B { function f() public override(A, B) { super.f(); } }\n";
    assert_eq!(edges(Language::Solidity, src), vec!["C.f -> B.f"]);
}

#[test]
fn c_headers_next_to_cpp_sources_are_read_as_cpp() {
    let es = workspace(&[
        ("counter.h", Language::C, "class Counter {\npublic:\n    void inc() { n++; }\n    int get() const;\nprivate:\n    int n = 0;\n};\n"),
        ("main.cpp", Language::Cpp, "#include \"counter.h\"\nint Counter::get() const { return n; }\nint main() { Counter c; c.inc(); return c.get(); }\n"),
    ]);
    let v = render(&es);
    assert_eq!(v, vec!["main -> Counter::get", "main -> Counter::inc"]);
}

#[test]
fn loop_and_with_targets_shadow_module_facts() {
    let src = "class Item:\n    def m(self):\n        pass\nitem = Item()\ndef f(xs):\n    for item in xs:\n        item.m()\ndef g():\n    item.m()\ndef h(p):\n    with open(p) as item:\n        item.m()\n";
    let v = edges(Language::Python, src);
    assert!(has(&v, "f -> ?item.m"), "{v:?}");
    assert!(has(&v, "g -> Item.m"), "{v:?}");
    assert!(has(&v, "h -> ?item.m"), "{v:?}");
    assert!(!has(&v, "f -> Item.m") && !has(&v, "h -> Item.m"), "{v:?}");
}

#[test]
fn javascript_commonjs_require() {
    let es = workspace(&[
        ("lib/math.js", Language::JavaScript, "function add(a, b) { return a + b; }\nfunction sub(a, b) { return a - b; }\nmodule.exports = { add, sub };\n"),
        ("app.js", Language::JavaScript, "const math = require('./lib/math');\nconst { add, sub: minus } = require('./lib/math.js');\nfunction main() { math.add(1, 2); add(3, 4); minus(5, 6); }\n"),
    ]);
    let v = render(&es);
    assert_eq!(v, vec!["main -> add", "main -> sub"]);
}

#[test]
fn empty_workspace_has_no_edges() {
    let g = analyze_call_graph(&[], &Cancel::never());
    assert!(g.edges.is_empty() && !g.partial);
}

#[test]
fn python_re_exports_through_package_init() {
    let es = workspace(&[
        ("pkg/__init__.py", Language::Python, "from .core import run\nfrom .models import *\n"),
        ("pkg/core.py", Language::Python, "def run():\n    pass\n"),
        ("pkg/models.py", Language::Python, "class Thing:\n    def __init__(self):\n        pass\n    def go(self):\n        pass\n"),
        ("app.py", Language::Python, "import pkg\nfrom pkg import run, Thing\ndef main():\n    run()\n    pkg.run()\n    Thing()\n    t = pkg.Thing()\n    t.go()\n"),
    ]);
    let v = render(&es);
    assert_eq!(
        v,
        vec!["main -> Thing.__init__", "main -> Thing.go", "main -> run"]
    );
    assert_eq!(es.len(), 5);
}

#[test]
fn java_casts_select_overloads() {
    let src = "class U {\n  static Object remove(Object a, int i) { return a; }\n  static int[] remove(int[] a, int i) { return (int[]) remove((Object) a, i); }\n}\n";
    let file = ParsedFile::parse(Language::Java, src);
    let units = [SourceUnit {
        path: "U.java".into(),
        file: &file,
    }];
    let es = build_call_graph(&units, &Cancel::never());
    let sigs: Vec<String> = es
        .iter()
        .filter_map(|e| e.callee.signature.clone())
        .collect();
    assert_eq!(sigs, vec!["(Object a, int i)"]);
}

#[test]
fn java_same_named_classes_are_told_apart_by_imports_or_left_alone() {
    let files = [
        (
            "a/Util.java",
            Language::Java,
            "package a;\npublic class Util { public static void go() {} }\n",
        ),
        (
            "b/Util.java",
            Language::Java,
            "package b;\npublic class Util { public static void go() {} }\n",
        ),
        (
            "c/Main.java",
            Language::Java,
            "package c;\nimport b.Util;\nclass Main { void run() { Util.go(); } }\n",
        ),
        (
            "d/Other.java",
            Language::Java,
            "package d;\nclass Other { void run() { Util.go(); } }\n",
        ),
    ];
    let es = workspace(&files);
    let got: Vec<(String, Option<String>)> = es
        .iter()
        .map(|e| (e.caller.name.clone(), e.callee.file.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("Main.run".to_string(), Some("b/Util.java".to_string())),
            ("Other.run".to_string(), None)
        ]
    );
}

#[test]
fn cpp_variadic_functions_take_any_number_of_extra_arguments() {
    // C++ spells `...` as an anonymous token of the parameter list (C as a named node).
    let src = "namespace n {\nstatic void sink(char * data, ...) {}\nvoid bad() {\n    char * d = 0;\n    sink(d, d);\n}\n}\n";
    assert!(
        has(&edges(Language::Cpp, src), "n::bad -> n::sink"),
        "{:?}",
        edges(Language::Cpp, src)
    );
    let c = "static void sink(char * data, ...) {}\nvoid bad(void) {\n    sink(0, 1, 2);\n}\n";
    assert!(has(&edges(Language::C, c), "bad -> sink"));
}

#[test]
fn calls_never_resolve_into_another_language_family() {
    // A C++ class and a Python class of the same name: each language's calls stay in it.
    let es = workspace(&[
        (
            "shapes.py",
            Language::Python,
            "class Square:\n    def __init__(self, s):\n        self.s = s\n    def area(self):\n        return self.s\n",
        ),
        (
            "main.cpp",
            Language::Cpp,
            "int main() { Square sq(2); return sq.area(); }\n",
        ),
        (
            "use.py",
            Language::Python,
            "from shapes import Square\n\ndef f():\n    return Square(2).area()\n",
        ),
    ]);
    let cross: Vec<String> = es
        .iter()
        .filter(|e| e.caller.file.as_deref() == Some("main.cpp"))
        .filter(|e| e.callee.file.as_deref() == Some("shapes.py"))
        .map(|e| format!("{} -> {}", e.caller.name, e.callee.name))
        .collect();
    assert!(cross.is_empty(), "{cross:?}");
    // The Python caller still reaches the Python class.
    assert!(es.iter().any(|e| e.caller.file.as_deref() == Some("use.py")
        && e.callee.file.as_deref() == Some("shapes.py")
        && e.callee.name == "Square.area"));
}
