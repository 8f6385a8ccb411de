//! C++ (tree-sitter-cpp): C's kinds plus classes, namespaces, lambdas and `new`.

use super::{call_expression, new_expression, CallSyntax, Class, LangSpec};
use crate::syntax::Language;
use tree_sitter::Node;

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::Cpp,
    classes: &[
        (Class::Comment, &["comment"]),
        (Class::Call, &["call_expression"]),
        (Class::New, &["new_expression"]),
        (Class::Arguments, &["argument_list"]),
        (Class::Member, &["field_expression"]),
        (Class::Paren, &["parenthesized_expression"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (Class::This, &["this"]),
        (
            Class::Definition,
            &[
                "function_definition",
                "lambda_expression",
                "struct_specifier",
                "class_specifier",
            ],
        ),
        (
            Class::Scope,
            &[
                "class_specifier",
                "struct_specifier",
                "union_specifier",
                "namespace_definition",
                "function_definition",
                "lambda_expression",
            ],
        ),
    ],
    member_fields: &[("field_expression", "argument", "field")],
    call,
    nested_function_words: None,
    reparse_top_level_alone: false,
};

fn call<'t>(spec: &LangSpec, node: Node<'t>) -> Option<CallSyntax<'t>> {
    if spec.is(node, Class::Call) {
        call_expression(node)
    } else if spec.is(node, Class::New) {
        new_expression(node, &["type"])
    } else {
        None
    }
}
