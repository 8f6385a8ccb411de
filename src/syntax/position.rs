//! Byte offsets are the internal currency; this module converts them to and from
//! line/column pairs in UTF-8 bytes or UTF-16 code units (what LSP clients negotiate).

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnEncoding {
    Utf8,
    Utf16,
}

/// A zero-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// Line start offsets of a text, for O(log n) offset <-> position conversion.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i + 1);
            }
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Zero-based line of a byte offset (offsets past the end clamp to the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        match self.starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        }
    }

    /// Byte offset where a zero-based line starts, if it exists.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    /// The text of a 1-based line of `text` (the text this index was built from), without its
    /// line break (`\n` or `\r\n`); empty for a line that does not exist. The one "text of
    /// line N" helper: findings' evidence, suppression comments and SARIF snippets use it.
    pub fn line_text<'a>(&self, text: &'a str, line_1based: usize) -> &'a str {
        let Some(l) = line_1based.checked_sub(1) else {
            return "";
        };
        let Some(start) = self.line_start(l) else {
            return "";
        };
        let end = self
            .line_start(l + 1)
            .map_or(text.len(), |s| s.saturating_sub(1))
            .max(start);
        let line = text.get(start..end).unwrap_or("");
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// Converts a byte offset to a line/column pair. Offsets inside a multi-byte character are
    /// moved back to the character's start.
    pub fn to_line_col(&self, text: &str, offset: usize, enc: ColumnEncoding) -> LineCol {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_of(offset);
        let start = self.starts[line];
        let col = match enc {
            ColumnEncoding::Utf8 => offset - start,
            ColumnEncoding::Utf16 => text[start..offset].chars().map(char::len_utf16).sum(),
        };
        LineCol {
            line: line as u32,
            col: col as u32,
        }
    }

    /// Converts a line/column pair to a byte offset. Columns past the end of the line clamp to
    /// the line end (before its newline), lines past the end clamp to the text's end, and a
    /// column that falls inside a character (e.g. between UTF-16 surrogates) rounds down.
    pub fn to_offset(&self, text: &str, pos: LineCol, enc: ColumnEncoding) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map(|&s| s - 1)
            .unwrap_or(text.len());
        let line_text = &text[start..end];
        let want = pos.col as usize;
        match enc {
            ColumnEncoding::Utf8 => {
                let mut o = want.min(line_text.len());
                while !line_text.is_char_boundary(o) {
                    o -= 1;
                }
                start + o
            }
            ColumnEncoding::Utf16 => {
                let mut units = 0usize;
                for (i, ch) in line_text.char_indices() {
                    let next = units + ch.len_utf16();
                    if next > want {
                        return start + i;
                    }
                    units = next;
                }
                end
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_ascii_and_astral_text() {
        let text = "ab\nx😀y\né\n";
        let idx = LineIndex::new(text);
        let y = text.find('y').unwrap();
        assert_eq!(
            idx.to_line_col(text, y, ColumnEncoding::Utf16),
            LineCol { line: 1, col: 3 }
        );
        assert_eq!(
            idx.to_line_col(text, y, ColumnEncoding::Utf8),
            LineCol { line: 1, col: 5 }
        );
        for enc in [ColumnEncoding::Utf8, ColumnEncoding::Utf16] {
            for (off, _) in text.char_indices() {
                let lc = idx.to_line_col(text, off, enc);
                assert_eq!(idx.to_offset(text, lc, enc), off, "{enc:?} {off}");
            }
        }
    }

    #[test]
    fn clamps_out_of_range_positions() {
        let text = "a😀\nb";
        let idx = LineIndex::new(text);
        assert_eq!(
            idx.to_offset(text, LineCol { line: 9, col: 0 }, ColumnEncoding::Utf16),
            7
        );
        assert_eq!(
            idx.to_offset(text, LineCol { line: 0, col: 99 }, ColumnEncoding::Utf16),
            5
        );
        // Column 2 is between the surrogates of the emoji: rounds down to its start.
        assert_eq!(
            idx.to_offset(text, LineCol { line: 0, col: 2 }, ColumnEncoding::Utf16),
            1
        );
        assert_eq!(
            idx.to_line_col(text, 2, ColumnEncoding::Utf8),
            LineCol { line: 0, col: 1 }
        );
    }
}
