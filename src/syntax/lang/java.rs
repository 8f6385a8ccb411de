//! Java (tree-sitter-java).

use super::{new_expression, CallShape, CallSyntax, Class, LangSpec};
use crate::syntax::Language;
use tree_sitter::Node;

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::Java,
    classes: &[
        (Class::Comment, &["line_comment", "block_comment"]),
        (Class::Call, &["method_invocation"]),
        (Class::New, &["object_creation_expression"]),
        (Class::CtorInvocation, &["explicit_constructor_invocation"]),
        (Class::Arguments, &["argument_list"]),
        (Class::Member, &["field_access"]),
        (Class::Paren, &["parenthesized_expression"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (Class::This, &["this"]),
        (Class::Super, &["super"]),
        (
            Class::Definition,
            &[
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "method_declaration",
                "constructor_declaration",
                "lambda_expression",
                "class_body",
            ],
        ),
        (
            Class::Scope,
            &[
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
                "class_body",
                "method_declaration",
                "constructor_declaration",
                "compact_constructor_declaration",
                "lambda_expression",
            ],
        ),
    ],
    member_fields: &[("field_access", "object", "field")],
    call,
    nested_function_words: Some(&["->", "class", "new", "interface", "enum", "record"]),
    reparse_top_level_alone: false,
};

fn call<'t>(spec: &LangSpec, node: Node<'t>) -> Option<CallSyntax<'t>> {
    if spec.is(node, Class::Call) {
        return Some(CallSyntax {
            node,
            shape: CallShape::Method,
            function: node,
            receiver: node.child_by_field_name("object"),
            name: Some(node.child_by_field_name("name")?),
            arguments: node.child_by_field_name("arguments"),
        });
    }
    if spec.is(node, Class::New) {
        return new_expression(node, &["type"]);
    }
    if spec.is(node, Class::CtorInvocation) {
        let ctor = node.child_by_field_name("constructor")?;
        let shape = if spec.is(ctor, Class::This) {
            CallShape::ThisCtor
        } else if spec.is(ctor, Class::Super) {
            CallShape::SuperCtor
        } else {
            return None;
        };
        return Some(CallSyntax {
            node,
            shape,
            function: ctor,
            receiver: None,
            name: None,
            arguments: node.child_by_field_name("arguments"),
        });
    }
    None
}
