//! Solidity (tree-sitter-solidity).

use super::{call_expression, CallSyntax, Class, LangSpec};
use crate::syntax::Language;
use tree_sitter::Node;

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::Solidity,
    classes: &[
        (Class::Comment, &["comment"]),
        (Class::Call, &["call_expression"]),
        (Class::Member, &["member_expression"]),
        // Solidity wraps expressions in an `expression` node.
        (Class::Paren, &["parenthesized_expression", "expression"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (Class::CallArgument, &["call_argument"]),
        (Class::CallOptions, &["struct_expression"]),
        (Class::CallOption, &["struct_field_assignment"]),
        (
            Class::Definition,
            &[
                "function_definition",
                "interface_declaration",
                "enum_declaration",
                "contract_declaration",
                "modifier_definition",
            ],
        ),
        (
            Class::Scope,
            &[
                "contract_declaration",
                "interface_declaration",
                "library_declaration",
                "function_definition",
                "constructor_definition",
                "modifier_definition",
                "fallback_receive_definition",
            ],
        ),
    ],
    member_fields: &[("member_expression", "object", "property")],
    call,
    nested_function_words: None,
    reparse_top_level_alone: false,
};

/// `f(a)`, `o.f(a)`, `to.call{value: v}(d)`: arguments are `call_argument` children (see
/// `LangSpec::args`), options come from `LangSpec::call_options`.
fn call<'t>(spec: &LangSpec, node: Node<'t>) -> Option<CallSyntax<'t>> {
    if !spec.is(node, Class::Call) {
        return None;
    }
    call_expression(node)
}
