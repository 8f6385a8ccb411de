//! Supported languages, detection from file names, and the tree-sitter grammars.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A language crosscheck can parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Java,
    C,
    Cpp,
    Solidity,
    JavaScript,
    TypeScript,
}

impl Language {
    pub const ALL: [Language; 7] = [
        Language::Python,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Solidity,
        Language::JavaScript,
        Language::TypeScript,
    ];

    /// The stable name used in JSON output and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Solidity => "solidity",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
        }
    }

    /// The languages whose code can call each other's functions, named by one member: C and
    /// C++ (headers are shared), JavaScript and TypeScript; every other language alone.
    /// Workspace analyses (call graph, taint) never link code of different families.
    pub fn family(self) -> Language {
        match self {
            Language::C | Language::Cpp => Language::C,
            Language::JavaScript | Language::TypeScript => Language::JavaScript,
            Language::Python => Language::Python,
            Language::Java => Language::Java,
            Language::Solidity => Language::Solidity,
        }
    }

    /// Parses a language name as given to `--lang` (case-insensitive, with common aliases).
    pub fn from_name(name: &str) -> Option<Language> {
        match name.to_ascii_lowercase().as_str() {
            "python" | "py" => Some(Language::Python),
            "java" => Some(Language::Java),
            "c" => Some(Language::C),
            "cpp" | "c++" | "cxx" | "cc" => Some(Language::Cpp),
            "solidity" | "sol" => Some(Language::Solidity),
            "javascript" | "js" => Some(Language::JavaScript),
            "typescript" | "ts" => Some(Language::TypeScript),
            _ => None,
        }
    }

    /// Detects the language from a file extension. `.h` is treated as C.
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" | "pyi" | "pyw" => Language::Python,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" => {
                Language::Cpp
            }
            "sol" => Language::Solidity,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" | "tsx" => Language::TypeScript,
            _ => return None,
        })
    }

    /// The tree-sitter grammar for this language.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::Solidity => tree_sitter_solidity::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TSX.into(),
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_languages_from_extensions() {
        assert_eq!(
            Language::from_path(Path::new("a/b.py")),
            Some(Language::Python)
        );
        assert_eq!(
            Language::from_path(Path::new("X.JAVA")),
            Some(Language::Java)
        );
        assert_eq!(Language::from_path(Path::new("x.h")), Some(Language::C));
        assert_eq!(Language::from_path(Path::new("x.hpp")), Some(Language::Cpp));
        assert_eq!(
            Language::from_path(Path::new("t.sol")),
            Some(Language::Solidity)
        );
        assert_eq!(Language::from_path(Path::new("README")), None);
        assert_eq!(Language::from_path(Path::new("a.txt")), None);
    }

    #[test]
    fn every_grammar_loads() {
        for lang in Language::ALL {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&lang.grammar())
                .expect("grammar ABI compatible");
            assert_eq!(Language::from_name(lang.name()), Some(lang));
        }
    }
}
