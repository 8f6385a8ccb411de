//! C (tree-sitter-c).

use super::{call_expression, CallSyntax, Class, LangSpec};
use crate::syntax::Language;
use tree_sitter::Node;

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::C,
    classes: &[
        (Class::Comment, &["comment"]),
        (Class::Call, &["call_expression"]),
        (Class::Arguments, &["argument_list"]),
        (Class::Member, &["field_expression"]),
        (Class::Paren, &["parenthesized_expression"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (
            Class::Definition,
            &["function_definition", "struct_specifier"],
        ),
        (Class::Scope, &["function_definition"]),
    ],
    member_fields: &[("field_expression", "argument", "field")],
    call,
    nested_function_words: None,
    reparse_top_level_alone: false,
};

fn call<'t>(spec: &LangSpec, node: Node<'t>) -> Option<CallSyntax<'t>> {
    if !spec.is(node, Class::Call) {
        return None;
    }
    call_expression(node)
}
