//! Python (tree-sitter-python).

use super::{call_expression, CallSyntax, Class, LangSpec};
use crate::syntax::Language;
use tree_sitter::Node;

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::Python,
    classes: &[
        (Class::Comment, &["comment"]),
        (Class::Call, &["call"]),
        (Class::Arguments, &["argument_list"]),
        (Class::KeywordArgument, &["keyword_argument"]),
        (Class::Member, &["attribute"]),
        (Class::Paren, &["parenthesized_expression"]),
        (Class::Await, &["await"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (
            Class::Definition,
            &[
                "function_definition",
                "decorated_definition",
                "class_definition",
                "lambda",
            ],
        ),
        (
            Class::Scope,
            &["class_definition", "function_definition", "lambda"],
        ),
    ],
    member_fields: &[("attribute", "object", "attribute")],
    call,
    nested_function_words: Some(&["def", "lambda", "class"]),
    reparse_top_level_alone: true,
};

fn call<'t>(spec: &LangSpec, node: Node<'t>) -> Option<CallSyntax<'t>> {
    if !spec.is(node, Class::Call) {
        return None;
    }
    call_expression(node)
}
