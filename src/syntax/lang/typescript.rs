//! TypeScript (tree-sitter-typescript, the TSX grammar): JavaScript's kinds plus non-null
//! assertions, interfaces, enums and abstract classes.

use super::javascript::{call, DEFINITIONS, SCOPES};
use super::{Class, LangSpec};
use crate::syntax::Language;

const TS_DEFINITIONS: [&str; 12] = {
    let mut out = [""; 12];
    let mut i = 0;
    while i < DEFINITIONS.len() {
        out[i] = DEFINITIONS[i];
        i += 1;
    }
    out[9] = "interface_declaration";
    out[10] = "enum_declaration";
    out[11] = "abstract_class_declaration";
    out
};

const TS_SCOPES: [&str; 9] = {
    let mut out = [""; 9];
    let mut i = 0;
    while i < SCOPES.len() {
        out[i] = SCOPES[i];
        i += 1;
    }
    out[8] = "abstract_class_declaration";
    out
};

pub(super) static SPEC: LangSpec = LangSpec {
    language: Language::TypeScript,
    classes: &[
        (Class::Comment, &["comment"]),
        (Class::Call, &["call_expression"]),
        (Class::New, &["new_expression"]),
        (Class::Arguments, &["arguments"]),
        (Class::Member, &["member_expression"]),
        (Class::Paren, &["parenthesized_expression"]),
        (Class::Await, &["await_expression"]),
        (Class::ExpressionStatement, &["expression_statement"]),
        (Class::NonNull, &["non_null_expression"]),
        (Class::This, &["this"]),
        (Class::Super, &["super"]),
        (Class::Definition, &TS_DEFINITIONS),
        (Class::Scope, &TS_SCOPES),
    ],
    member_fields: &[("member_expression", "object", "property")],
    call,
    nested_function_words: None,
    reparse_top_level_alone: false,
};
