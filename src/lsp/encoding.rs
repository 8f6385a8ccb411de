//! Position encoding: negotiation with the client, and the ONE place where LSP positions
//! (zero-based line + column in UTF-8 bytes or UTF-16 code units) are converted to and from
//! byte offsets, the internal currency of every other module.
//!
//! Negotiation (LSP 3.17 `general.positionEncodings`): `utf-8` when the client offers it,
//! else `utf-16`, which every client must support. `utf-32` is never chosen.
//!
//! Conversions use [`LineIndex`] from the syntax layer and are total: positions past the end
//! of a line clamp to the line's end (before its `\r\n` or `\n` terminator), lines past the
//! end clamp to the end of the text, and a column that falls inside a character (between the
//! two UTF-16 surrogates of an emoji, inside a multi-byte UTF-8 sequence) rounds down to the
//! character's start. Line breaks are `\n` and `\r\n`; a lone `\r` is not a line break.

use crate::syntax::position::{ColumnEncoding, LineCol, LineIndex};
use tower_lsp_server::ls_types::{ClientCapabilities, Position, PositionEncodingKind, Range};

/// Picks the encoding from the client's capabilities: UTF-8 when offered, else UTF-16.
pub fn negotiate(caps: &ClientCapabilities) -> ColumnEncoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(list) if list.contains(&PositionEncodingKind::UTF8) => ColumnEncoding::Utf8,
        _ => ColumnEncoding::Utf16,
    }
}

/// The LSP name of an encoding, as announced in the server capabilities.
pub fn kind(enc: ColumnEncoding) -> PositionEncodingKind {
    match enc {
        ColumnEncoding::Utf8 => PositionEncodingKind::UTF8,
        ColumnEncoding::Utf16 => PositionEncodingKind::UTF16,
    }
}

/// Byte offset of an LSP position in `text` (whose index is `lines`).
pub fn offset_of(text: &str, lines: &LineIndex, pos: Position, enc: ColumnEncoding) -> usize {
    let lc = LineCol {
        line: pos.line,
        col: pos.character,
    };
    let mut off = lines.to_offset(text, lc, enc);
    // A column past the end of a CRLF line lands between `\r` and `\n`: move before the `\r`.
    let bytes = text.as_bytes();
    if off > 0
        && bytes.get(off) == Some(&b'\n')
        && bytes.get(off - 1) == Some(&b'\r')
        && lines.line_of(off - 1) == pos.line as usize
    {
        off -= 1;
    }
    off
}

/// LSP position of a byte offset.
pub fn position_of(text: &str, lines: &LineIndex, offset: usize, enc: ColumnEncoding) -> Position {
    let lc = lines.to_line_col(text, offset, enc);
    Position::new(lc.line, lc.col)
}

/// LSP range of a byte range.
pub fn range_of(
    text: &str,
    lines: &LineIndex,
    start: usize,
    end: usize,
    enc: ColumnEncoding,
) -> Range {
    let end = end.max(start);
    Range::new(
        position_of(text, lines, start, enc),
        position_of(text, lines, end, enc),
    )
}

/// Byte range of an LSP range (start clamped to be at most end).
pub fn byte_range(
    text: &str,
    lines: &LineIndex,
    range: Range,
    enc: ColumnEncoding,
) -> (usize, usize) {
    let a = offset_of(text, lines, range.start, enc);
    let b = offset_of(text, lines, range.end, enc);
    (a.min(b), a.max(b))
}

/// Byte range of a 1-based line's content: from its first non-blank character to its end
/// (terminator excluded). An empty or blank line gives its whole (possibly empty) extent;
/// lines past the end give the empty range at the end of the text.
pub fn line_content(text: &str, lines: &LineIndex, line_1based: usize) -> (usize, usize) {
    let line = line_1based.saturating_sub(1);
    let Some(start) = lines.line_start(line) else {
        return (text.len(), text.len());
    };
    let end = lines
        .line_start(line + 1)
        .map(|s| s.saturating_sub(1))
        .unwrap_or(text.len());
    let raw = text.get(start..end).unwrap_or("");
    let body = raw.trim_end_matches('\r');
    let lead = body.len() - body.trim_start().len();
    if body.trim().is_empty() {
        (start, start + body.len())
    } else {
        (start + lead, start + body.len())
    }
}

/// The LSP range of a 1-based line's content (see [`line_content`]).
pub fn line_range(text: &str, lines: &LineIndex, line_1based: usize, enc: ColumnEncoding) -> Range {
    let (a, b) = line_content(text, lines, line_1based);
    range_of(text, lines, a, b, enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_line_end_clamps_before_carriage_return() {
        let text = "ab\r\ncd";
        let lines = LineIndex::new(text);
        let off = offset_of(text, &lines, Position::new(0, 99), ColumnEncoding::Utf16);
        assert_eq!(off, 2);
        assert_eq!(line_content(text, &lines, 1), (0, 2));
    }
}
