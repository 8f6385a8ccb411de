//! Field names of the grammars, each spelled once, with the grammars that define it.
//!
//! `node.child_by_field_name(field::FUNCTION)`; this module's test checks every entry against each
//! grammar it lists (`tree_sitter::Language::field_id_for_name`).

use crate::syntax::Language;

vocabulary! {
    ALL;
    ALIAS = "alias" [Python JavaScript TypeScript Solidity];
    ALTERNATIVE = "alternative" [Python Java C Cpp JavaScript TypeScript];
    ANCESTOR = "ancestor" [Solidity];
    ANCESTOR_ARGUMENTS = "ancestor_arguments" [Solidity];
    ARGUMENT = "argument" [Python C Cpp JavaScript TypeScript Solidity];
    ARGUMENTS = "arguments" [Python Java C Cpp JavaScript TypeScript];
    ARRAY = "array" [Java];
    ATTRIBUTE = "attribute" [Python JavaScript TypeScript];
    BASE = "base" [Cpp Solidity];
    BODY = "body" [Python Java C Cpp JavaScript TypeScript Solidity];
    CAUSE = "cause" [Python];
    CONDITION = "condition" [Python Java C Cpp JavaScript TypeScript Solidity];
    CONSEQUENCE = "consequence" [Python Java C Cpp JavaScript TypeScript];
    CONSTRUCTOR = "constructor" [Java JavaScript TypeScript];
    DECLARATOR = "declarator" [Java C Cpp];
    DEFAULT_VALUE = "default_value" [Cpp];
    DEFINITION = "definition" [Python];
    DESIGNATOR = "designator" [C Cpp];
    DIMENSIONS = "dimensions" [Java];
    END = "end" [C Cpp];
    ERROR = "error" [Solidity];
    FIELD = "field" [Java C Cpp];
    FINALIZER = "finalizer" [JavaScript TypeScript];
    FUNCTION = "function" [Python C Cpp JavaScript TypeScript Solidity];
    GUARD = "guard" [Python];
    HANDLER = "handler" [JavaScript TypeScript];
    INCREMENT = "increment" [JavaScript TypeScript];
    INDEX = "index" [Java C JavaScript TypeScript Solidity];
    INDICES = "indices" [Cpp];
    INIT = "init" [Java];
    INITIAL = "initial" [Solidity];
    INITIALIZER = "initializer" [C Cpp JavaScript TypeScript];
    INTERFACES = "interfaces" [Java];
    KEY = "key" [Python Java JavaScript TypeScript];
    KIND = "kind" [JavaScript TypeScript];
    LABEL = "label" [C Cpp JavaScript TypeScript];
    LEFT = "left" [Python Java C Cpp JavaScript TypeScript Solidity];
    MODULE_NAME = "module_name" [Python];
    NAME = "name" [Python Java C Cpp JavaScript TypeScript Solidity];
    OBJECT = "object" [Python Java JavaScript TypeScript Solidity];
    OPERAND = "operand" [Java C Cpp];
    OPERATOR = "operator" [Python Java C Cpp JavaScript TypeScript Solidity];
    OPERATORS = "operators" [Python];
    PARAMETER = "parameter" [JavaScript TypeScript];
    PARAMETERS = "parameters" [Python Java C Cpp JavaScript TypeScript Solidity];
    PATH = "path" [C Cpp];
    PATTERN = "pattern" [Java Cpp JavaScript TypeScript];
    PLACEMENT = "placement" [Cpp];
    PROPERTY = "property" [JavaScript TypeScript Solidity];
    RESOURCES = "resources" [Java];
    RETURN_TYPE = "return_type" [Python TypeScript Solidity];
    RIGHT = "right" [Python Java C Cpp JavaScript TypeScript Solidity];
    SIZE = "size" [C Cpp];
    SOURCE = "source" [JavaScript TypeScript Solidity];
    SUBSCRIPT = "subscript" [Python];
    SUPERCLASS = "superclass" [Java];
    SUPERCLASSES = "superclasses" [Python];
    TYPE = "type" [Python Java C Cpp TypeScript Solidity];
    TYPE_PARAMETERS = "type_parameters" [Python Java TypeScript];
    UPDATE = "update" [Java C Cpp Solidity];
    VALUE = "value" [Python Java C Cpp JavaScript TypeScript Solidity];
}
