//! Reparsing one top-level item instead of the file.
//!
//! tree-sitter reuses the old tree after an edit only where the grammar lets it. Python's does
//! not after the edited statement: every top-level definition starts, padding included, where
//! the zero-width `_newline`/`_dedent` tokens of the one before it are still to be lexed, so
//! the external scanner's state never matches the old tree's and the whole rest of the file is
//! lexed and parsed again (an edit near the top of a 5,000-line file costs a full parse).
//!
//! For a language whose [`LangSpec::reparse_top_level_alone`](super::lang::LangSpec) is set,
//! an edit that lies inside one top-level item (after its first token, so the item cannot
//! join the one before it) is checked by parsing that item's text alone (the parser's included
//! range is the item: positions stay those of the whole text). When that parse has no error,
//! is one item, and has exactly the nodes of the edited old tree's item (kinds, byte ranges,
//! points, named/extra/missing flags, node for node), the edited old tree *is* the parse of
//! the new text: everything before and after the item is the same text parsed from the same
//! state, and the item parses as it did in place. Anything else (an error, an item that now
//! ends earlier or differs in any node, an old tree with errors) answers `None` and the caller
//! reparses the file. Parsing an item alone starts in the state a top-level item starts in
//! only for grammars where every top-level item begins in that same state with the same scanner
//! state; the flag is set per language for that reason (Python: column 0, no open bracket).

use super::lang::spec;
use super::Language;
use tree_sitter::{Node, Parser, Range, Tree};

/// Items larger than this are not parsed alone (the file's own reparse is then no dearer).
const MAX_ITEM_BYTES: usize = 256 * 1024;

/// `edited` is the old tree after `Tree::edit` with an edit whose new text spans
/// `start..new_end` of `text`. Returns true when `edited` is exactly the parse of `text`
/// (see the module docs); false when the file must be reparsed.
pub(crate) fn edited_tree_is_parse(
    language: Language,
    parser: &mut Parser,
    text: &str,
    edited: &Tree,
    start: usize,
    new_end: usize,
) -> bool {
    if !spec(language).reparse_top_level_alone {
        return false;
    }
    let root = edited.root_node();
    if root.has_error() {
        return false;
    }
    let Some(item) = item_around(root, start, new_end) else {
        return false;
    };
    if item.byte_range().len() > MAX_ITEM_BYTES || item.byte_range().len() * 2 > text.len() {
        return false;
    }
    // The edit must leave the item's first token alone: a changed first token could make
    // the item part of the one before it (an indented `def` in Python).
    match first_leaf(item) {
        Some(leaf) if leaf.end_byte() <= start => {}
        _ => return false,
    }
    let range = Range {
        start_byte: item.start_byte(),
        end_byte: item.end_byte(),
        start_point: item.start_position(),
        end_point: item.end_position(),
    };
    if parser.set_included_ranges(&[range]).is_err() {
        return false;
    }
    let alone = parser.parse(text, None);
    // The parser is the caller's: leave it parsing whole texts.
    let _ = parser.set_included_ranges(&[]);
    let Some(alone) = alone else {
        return false;
    };
    let alone_root = alone.root_node();
    if alone_root.has_error() || alone_root.child_count() != 1 {
        return false;
    }
    match alone_root.child(0) {
        Some(only) => same_nodes(only, item),
        None => false,
    }
}

/// The top-level item (child of the root) whose edited span holds the edit's new text.
fn item_around(root: Node<'_>, start: usize, end: usize) -> Option<Node<'_>> {
    let mut cursor = root.walk();
    if !cursor.goto_first_child() {
        return None;
    }
    loop {
        let n = cursor.node();
        if n.start_byte() > start {
            return None;
        }
        // The edit starts inside the item and its new text ends within the item's edited
        // span (text inserted right at the item's end belongs to no node yet: excluded).
        if n.start_byte() < start && start < n.end_byte() && end <= n.end_byte() {
            return (!n.is_extra() && !n.is_error() && !n.is_missing()).then_some(n);
        }
        if !cursor.goto_next_sibling() {
            return None;
        }
    }
}

fn first_leaf(node: Node<'_>) -> Option<Node<'_>> {
    let mut n = node;
    let mut steps = 0usize;
    while n.child_count() > 0 {
        n = n.child(0)?;
        steps += 1;
        if steps > 100_000 {
            return None;
        }
    }
    Some(n)
}

/// Node for node the same: kind, byte range, points, flags, children (pre-order, both trees
/// walked in lockstep with one cursor each).
fn same_nodes(a: Node<'_>, b: Node<'_>) -> bool {
    let (mut ca, mut cb) = (a.walk(), b.walk());
    loop {
        let (x, y) = (ca.node(), cb.node());
        if x.kind_id() != y.kind_id()
            || x.byte_range() != y.byte_range()
            || x.start_position() != y.start_position()
            || x.end_position() != y.end_position()
            || x.is_named() != y.is_named()
            || x.is_extra() != y.is_extra()
            || x.is_missing() != y.is_missing()
            || x.child_count() != y.child_count()
            || ca.field_id() != cb.field_id()
        {
            return false;
        }
        if ca.goto_first_child() {
            if !cb.goto_first_child() {
                return false;
            }
            continue;
        }
        loop {
            if ca.goto_next_sibling() {
                if !cb.goto_next_sibling() {
                    return false;
                }
                break;
            }
            // Both walks are at the same depth (child counts matched all the way down).
            let (up_a, up_b) = (ca.goto_parent(), cb.goto_parent());
            if up_a != up_b {
                return false;
            }
            if !up_a || ca.node() == a {
                return true;
            }
        }
    }
}
