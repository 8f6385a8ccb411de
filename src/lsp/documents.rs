//! Open documents: text, version, parse, and incremental synchronisation.
//!
//! Edits are applied synchronously by the `didOpen`/`didChange`/`didClose` handlers, in
//! arrival order, before those handlers await anything (see `server.rs`). Each
//! `contentChanges` entry is applied to the text produced by the previous one, as the protocol
//! requires: ranges are converted to byte offsets with [`super::encoding`] against
//! the current text, and the tree-sitter tree is edited and reparsed incrementally.
//!
//! Excluded files and files in unsupported languages are kept as plain text (so later edits
//! still apply) and never parsed.

use super::encoding;
use crate::syntax::position::{ColumnEncoding, LineIndex};
use crate::syntax::{Language, ParsedFile};
use std::collections::BTreeMap;
use std::sync::Arc;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;

/// A document's content: parsed, or plain text when it is not analysed.
#[derive(Clone)]
enum Content {
    Parsed(Arc<ParsedFile>),
    Plain { text: Arc<String>, lines: LineIndex },
}

/// One open document.
#[derive(Clone)]
pub struct Document {
    /// The URI as sent by the client (the key of [`Documents`]).
    pub uri: String,
    pub version: i32,
    pub language_id: String,
    /// The language it is analysed as; `None` when excluded or unsupported.
    pub language: Option<Language>,
    /// True when an exclusion rule matches: never parsed, never sent to an LLM.
    pub excluded: bool,
    content: Content,
}

/// The language of a document: from the file extension, else from the client's language id.
pub fn detect_language(uri: &str, language_id: &str) -> Option<Language> {
    let path_part = uri.split(['?', '#']).next().unwrap_or(uri);
    if let Some(l) = Language::from_path(std::path::Path::new(path_part)) {
        return Some(l);
    }
    match language_id {
        "javascriptreact" => Some(Language::JavaScript),
        "typescriptreact" => Some(Language::TypeScript),
        other => Language::from_name(other),
    }
}

impl Document {
    /// A new document. `analyse_as` is `None` for excluded/unsupported files.
    pub fn open(
        uri: String,
        version: i32,
        language_id: String,
        text: String,
        analyse_as: Option<Language>,
        excluded: bool,
    ) -> Document {
        let content = match analyse_as {
            Some(lang) if !excluded => Content::Parsed(Arc::new(ParsedFile::parse(lang, text))),
            _ => Content::Plain {
                lines: LineIndex::new(&text),
                text: Arc::new(text),
            },
        };
        Document {
            uri,
            version,
            language_id,
            language: if excluded { None } else { analyse_as },
            excluded,
            content,
        }
    }

    pub fn text(&self) -> &str {
        match &self.content {
            Content::Parsed(p) => &p.text,
            Content::Plain { text, .. } => text,
        }
    }

    pub fn lines(&self) -> &LineIndex {
        match &self.content {
            Content::Parsed(p) => &p.lines,
            Content::Plain { lines, .. } => lines,
        }
    }

    /// The parse, when the document is analysed.
    pub fn parsed(&self) -> Option<Arc<ParsedFile>> {
        match &self.content {
            Content::Parsed(p) => Some(Arc::clone(p)),
            Content::Plain { .. } => None,
        }
    }

    /// Applies the changes of one `didChange` in order and sets the new version.
    pub fn apply_changes(
        &mut self,
        changes: Vec<TextDocumentContentChangeEvent>,
        version: i32,
        enc: ColumnEncoding,
    ) {
        for change in changes {
            self.apply_one(change, enc);
        }
        self.version = version;
    }

    fn apply_one(&mut self, change: TextDocumentContentChangeEvent, enc: ColumnEncoding) {
        match &mut self.content {
            Content::Parsed(parsed) => {
                let file = match Arc::get_mut(parsed) {
                    Some(f) => f,
                    None => {
                        *parsed = Arc::new(ParsedFile::clone(parsed));
                        match Arc::get_mut(parsed) {
                            Some(f) => f,
                            None => return,
                        }
                    }
                };
                match change.range {
                    Some(range) => {
                        let (start, end) =
                            encoding::byte_range(&file.text, &file.lines, range, enc);
                        file.edit(start, end, &change.text);
                    }
                    None => {
                        *file = ParsedFile::parse(file.language, change.text);
                    }
                }
            }
            Content::Plain { text, lines } => {
                let new_text = match change.range {
                    Some(range) => {
                        let (start, end) = encoding::byte_range(text, lines, range, enc);
                        let mut s = String::with_capacity(text.len() + change.text.len());
                        s.push_str(text.get(..start).unwrap_or(""));
                        s.push_str(&change.text);
                        s.push_str(text.get(end..).unwrap_or(""));
                        s
                    }
                    None => change.text,
                };
                *lines = LineIndex::new(&new_text);
                *text = Arc::new(new_text);
            }
        }
    }

    /// Re-decides whether the document is analysed (after a configuration change), keeping
    /// its text and version.
    pub fn reclassify(&mut self, analyse_as: Option<Language>, excluded: bool) {
        let same =
            self.excluded == excluded && self.language == if excluded { None } else { analyse_as };
        if same {
            return;
        }
        *self = Document::open(
            self.uri.clone(),
            self.version,
            self.language_id.clone(),
            self.text().to_string(),
            analyse_as,
            excluded,
        );
    }
}

/// All open documents, keyed by URI string.
#[derive(Default)]
pub struct Documents {
    docs: BTreeMap<String, Document>,
}

impl Documents {
    pub fn insert(&mut self, doc: Document) {
        self.docs.insert(doc.uri.clone(), doc);
    }

    pub fn get(&self, uri: &str) -> Option<&Document> {
        self.docs.get(uri)
    }

    pub fn get_mut(&mut self, uri: &str) -> Option<&mut Document> {
        self.docs.get_mut(uri)
    }

    pub fn remove(&mut self, uri: &str) -> Option<Document> {
        self.docs.remove(uri)
    }

    pub fn uris(&self) -> Vec<String> {
        self.docs.keys().cloned().collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Document> {
        self.docs.values()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Document> {
        self.docs.values_mut()
    }

    pub fn version(&self, uri: &str) -> Option<i32> {
        self.docs.get(uri).map(|d| d.version)
    }
}
