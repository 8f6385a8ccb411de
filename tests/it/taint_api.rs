//! The taint API as a spec: flows with paths, sanitised flows kept apart, tainted variables
//! (with `null` for module code), user specifications extending and overriding built-ins.

use crosscheck::analysis::callgraph::SourceUnit;
use crosscheck::analysis::taint::{
    analyze_taint, Provenance, TaintResult, TaintSpec, TaintSpecs, TaintedVariable,
};
use crosscheck::syntax::{Cancel, Language, ParsedFile};

fn run_with(lang: Language, src: &str, specs: &TaintSpecs) -> TaintResult {
    let file = ParsedFile::parse(lang, src);
    let units = [SourceUnit {
        path: "t".into(),
        file: &file,
    }];
    analyze_taint(&units, None, None, specs, &Cancel::never())
}

fn run(lang: Language, src: &str) -> TaintResult {
    run_with(lang, src, &TaintSpecs::builtin())
}

#[test]
fn a_flow_names_source_sink_and_the_lines_in_between() {
    let src = "import os\n\ndef main():\n    who = input()\n    cmd = 'finger ' + who\n    os.system(cmd)\n";
    let r = run(Language::Python, src);
    assert_eq!(r.flows.len(), 1);
    let f = &r.flows[0];
    assert_eq!(
        (
            f.source.line,
            f.source.text.as_str(),
            f.source.kind.as_str()
        ),
        (4, "input()", "user_input")
    );
    assert_eq!((f.sink.line, f.sink.kind.as_str()), (6, "command"));
    assert_eq!(f.sink.text, "os.system(cmd)");
    assert_eq!(f.path.iter().map(|s| s.line).collect::<Vec<_>>(), vec![5]);
    assert!(!f.sanitized);
    assert_eq!(f.rule, "taint-command");
}

#[test]
fn a_source_inside_an_enclosing_source_is_one_flow() {
    // `request.args` is a source and so is `request.args.get(...)` around it: one flow, named
    // by the outer expression. Two different sources on one line stay two flows.
    let src = "import os\nfrom flask import request\n\ndef h():\n    name = request.args.get('n')\n    os.system(name)\n    both = request.args.get('a') + input()\n    os.system(both)\n";
    let r = run(Language::Python, src);
    let flows: Vec<(usize, &str, usize)> = r
        .flows
        .iter()
        .map(|f| (f.source.line, f.source.text.as_str(), f.sink.line))
        .collect();
    assert_eq!(
        flows,
        vec![
            (5, "request.args.get(...)", 6),
            (7, "input()", 8),
            (7, "request.args.get(...)", 8),
        ]
    );
}

#[test]
fn sanitised_flows_are_kept_apart_and_only_for_the_sanitised_kind() {
    let src =
        "import os, shlex\nx = input()\nos.system('ls ' + shlex.quote(x))\neval(shlex.quote(x))\n";
    let r = run(Language::Python, src);
    assert_eq!(
        r.flows.len(),
        1,
        "quoting for the shell does not protect eval"
    );
    assert_eq!(r.flows[0].sink.line, 4);
    assert_eq!(r.sanitized_flows.len(), 1);
    assert_eq!(r.sanitized_flows[0].sink.line, 3);
    assert!(r.sanitized_flows[0].sanitized);
}

#[test]
fn tainted_variables_name_their_function_or_null_for_module_code() {
    let src = "import sys\nname = sys.argv[1]\n\ndef greet(who):\n    msg = 'hi ' + who\n    return msg\n\ngreet(name)\nsafe = 'x'\n";
    let r = run(Language::Python, src);
    let vars = r.tainted_variables_for("t");
    let expect = |function: Option<&str>, var: &str, line: usize| TaintedVariable {
        function: function.map(str::to_string),
        var: var.to_string(),
        line,
    };
    assert_eq!(
        vars,
        &[
            expect(None, "name", 2),
            expect(Some("greet"), "who", 4),
            expect(Some("greet"), "msg", 5),
        ]
    );
}

#[test]
fn a_user_specification_adds_sources_and_sinks() {
    let user = r#"
language = "java"
[[source]]
id = "acme-config"
kind = "remote_config"
calls = ["RemoteConfig#fetch"]
[[sink]]
id = "acme-script"
kind = "code"
calls = ["ScriptEngine#eval"]
args = [0]
"#;
    let mut specs = TaintSpecs::builtin();
    let spec = TaintSpec::from_toml(user, Provenance::User).unwrap();
    assert!(spec
        .sources
        .iter()
        .all(|s| s.provenance == Provenance::User));
    specs.merge(spec);
    let src = "class A { void f(RemoteConfig rc, ScriptEngine engine) { String s = rc.fetch(\"k\"); engine.eval(s); engine.eval(\"1+1\"); } }";
    let r = run_with(Language::Java, src, &specs);
    assert_eq!(r.flows.len(), 1);
    assert_eq!(r.flows[0].source.kind, "remote_config");
    assert_eq!(r.flows[0].rule, "taint-code");
    let without = run(Language::Java, src);
    assert!(without.flows.is_empty());
}

#[test]
fn a_user_rule_with_a_builtin_id_replaces_it() {
    let src = "import os\nos.system(input())\n";
    assert_eq!(run(Language::Python, src).flows.len(), 1);
    let mut specs = TaintSpecs::builtin();
    specs.merge(
        TaintSpec::from_toml(
            "language = \"python\"\n[[sink]]\nid = \"py-os-system\"\nkind = \"command\"\ncalls = [\"os.popen\"]\n",
            Provenance::LlmSuggested,
        )
        .unwrap(),
    );
    let python = specs.get(Language::Python).unwrap();
    let replaced = python
        .sinks
        .iter()
        .find(|s| s.id == "py-os-system")
        .unwrap();
    assert_eq!(replaced.provenance, Provenance::LlmSuggested);
    assert!(run_with(Language::Python, src, &specs).flows.is_empty());
}

#[test]
fn solidity_public_parameters_are_sources_but_internal_ones_are_not() {
    let src = "contract C {\n function pub(address a) public { payable(a).transfer(1); }\n function inner(address a) internal { payable(a).transfer(1); }\n}\n";
    let r = run(Language::Solidity, src);
    let lines: Vec<usize> = r.flows.iter().map(|f| f.sink.line).collect();
    assert_eq!(lines, vec![2]);
    assert_eq!(r.flows[0].source.kind, "external_input");
}

#[test]
fn c_main_argv_and_out_arguments_are_sources() {
    let src = "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n char b[8];\n system(argv[1]);\n scanf(\"%7s\", b);\n system(b);\n return 0;\n}\n";
    let r = run(Language::C, src);
    let kinds: Vec<(usize, &str)> = r
        .flows
        .iter()
        .map(|f| (f.sink.line, f.source.kind.as_str()))
        .collect();
    assert_eq!(kinds, vec![(5, "command_line"), (7, "user_input")]);
}

#[test]
fn languages_without_a_specification_yield_nothing() {
    let r = run(Language::JavaScript, "eval(location.hash)\n");
    assert!(r.flows.is_empty() && !r.partial);
}
