//! JavaScript (tree-sitter-javascript). TypeScript's table (`typescript.rs`) extends this one.

use super::{call_expression, new_expression, CallSyntax, Class, LangSpec};
use crate::syntax::Language;
use tree_sitter::Node;

pub(super) const DEFINITIONS: [&str; 9] = [
    "class_declaration",
    "class_body",
    "arrow_function",
    "function_expression",
    "function_declaration",
    "generator_function",
    "generator_function_declaration",
    "method_definition",
    "class",
];

pub(super) const SCOPES: [&str; 8] = [
    "class_declaration",
    "class",
    "function_declaration",
    "generator_function_declaration",
    "method_definition",
    "arrow_function",
    "function_expression",
    "generator_function",
];

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::JavaScript,
    classes: &[
        (Class::Comment, &["comment"]),
        (Class::Call, &["call_expression"]),
        (Class::New, &["new_expression"]),
        (Class::Arguments, &["arguments"]),
        (Class::Member, &["member_expression"]),
        (Class::Paren, &["parenthesized_expression"]),
        (Class::Await, &["await_expression"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (Class::This, &["this"]),
        (Class::Super, &["super"]),
        (Class::Definition, &DEFINITIONS),
        (Class::Scope, &SCOPES),
    ],
    member_fields: &[("member_expression", "object", "property")],
    call,
    nested_function_words: None,
    reparse_top_level_alone: false,
};

/// Calls of JavaScript and TypeScript.
pub(super) fn call<'t>(spec: &LangSpec, node: Node<'t>) -> Option<CallSyntax<'t>> {
    if spec.is(node, Class::Call) {
        call_expression(node)
    } else if spec.is(node, Class::New) {
        new_expression(node, &["constructor"])
    } else {
        None
    }
}
