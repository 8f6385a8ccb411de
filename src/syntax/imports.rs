//! Names bound by a file's top-level imports: a per-file fact, computed once per parse
//! ([`ParsedFile::imported_names`]) and shared by every analysis of every function.

use super::{Language, ParsedFile};
use crate::syntax::lang::{field, kind};
use std::collections::BTreeSet;

/// Names bound by top-level imports (modules and classes), for the qualifier filter.
pub(crate) fn imported_names(file: &ParsedFile) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Only Python and Java bind qualifiers by import; skip the top-level scan elsewhere (a C
    // amalgamation has tens of thousands of top-level items).
    if !matches!(file.language, Language::Python | Language::Java) {
        return out;
    }
    let root = file.root();
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        match (file.language, item.kind()) {
            (Language::Python, kind::IMPORT_STATEMENT | kind::IMPORT_FROM_STATEMENT) => {
                let mut c = item.walk();
                for name in item.children_by_field_name(field::NAME, &mut c) {
                    let bound = match name.kind() {
                        kind::ALIASED_IMPORT => name.child_by_field_name(field::ALIAS),
                        kind::DOTTED_NAME if item.kind() == kind::IMPORT_STATEMENT => {
                            name.named_child(0)
                        }
                        kind::DOTTED_NAME => {
                            name.named_child(name.named_child_count().saturating_sub(1))
                        }
                        _ => None,
                    };
                    if let Some(b) = bound {
                        out.insert(file.node_text(b).to_string());
                    }
                }
            }
            (Language::Java, kind::IMPORT_DECLARATION) => {
                let t = file.node_text(item);
                let t = t
                    .trim_start_matches("import")
                    .trim()
                    .trim_end_matches(';')
                    .trim();
                if let Some(last) = t.rsplit('.').next() {
                    out.insert(last.to_string());
                }
            }
            _ => {}
        }
    }
    out
}
