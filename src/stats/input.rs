//! Parsing label tables from text: CSV / TSV with a header row, or JSON Lines (one object per
//! line; a single JSON array of objects is accepted too). Pure: the caller reads the file.
//!
//! Cell conventions: CSV fields are trimmed strings (a missing trailing field is
//! [`Cell::Missing`]). JSON `null` or an absent key is missing; strings are kept; booleans
//! become `"true"`/`"false"`; integral numbers become their integer text (`1.0` → `"1"`);
//! arrays become [`Cell::List`] (used for set-valued columns); objects are kept as compact JSON
//! text.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// Input syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Csv,
    Tsv,
    Jsonl,
}

impl InputFormat {
    /// Chooses the format from the file extension (`csv`, `tsv`, `jsonl`/`ndjson`/`json`), or
    /// else from the content: a first non-blank character `{` or `[` means JSON, else CSV.
    pub fn detect(extension: Option<&str>, text: &str) -> Self {
        match extension.map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => return InputFormat::Csv,
            Some("tsv") | Some("tab") => return InputFormat::Tsv,
            Some("jsonl") | Some("ndjson") | Some("json") => return InputFormat::Jsonl,
            _ => {}
        }
        match strip_bom(text).trim_start().chars().next() {
            Some('{') | Some('[') => InputFormat::Jsonl,
            _ => InputFormat::Csv,
        }
    }
}

/// One table cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    Missing,
    Text(String),
    List(Vec<String>),
}

impl Cell {
    /// The cell as a label: `Ok(None)` if missing or blank, an error for a list.
    pub fn as_label(&self) -> Result<Option<&str>, ListCell> {
        match self {
            Cell::Missing => Ok(None),
            Cell::Text(s) => {
                let t = s.trim();
                Ok(if t.is_empty() { None } else { Some(t) })
            }
            Cell::List(_) => Err(ListCell),
        }
    }

    /// The cell as a set: `None` if missing; text is split on `separator` (blank parts
    /// dropped, so an empty field is the empty set); list items are taken as they are.
    pub fn as_set(&self, separator: &str) -> Option<BTreeSet<String>> {
        match self {
            Cell::Missing => None,
            Cell::Text(s) => {
                let parts: Box<dyn Iterator<Item = &str>> = if separator.is_empty() {
                    Box::new(std::iter::once(s.as_str()))
                } else {
                    Box::new(s.split(separator))
                };
                Some(
                    parts
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(str::to_string)
                        .collect(),
                )
            }
            Cell::List(items) => Some(items.iter().cloned().collect()),
        }
    }
}

/// Error of [`Cell::as_label`]: the cell holds a list, not a single label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCell;

impl fmt::Display for ListCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected one label, found a list")
    }
}

impl std::error::Error for ListCell {}

/// A data row: its 1-based line in the input and one cell per header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub cells: Vec<Cell>,
}

/// A parsed table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Row>,
}

/// Why the input could not be parsed or a column not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// No header and no data at all.
    Empty,
    Syntax {
        line: usize,
        message: String,
    },
    DuplicateColumn(String),
    MissingColumn {
        name: String,
        available: Vec<String>,
    },
    /// A list where a single label was expected.
    NotALabel {
        line: usize,
        column: String,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Empty => write!(f, "input is empty (no header, no rows)"),
            InputError::Syntax { line, message } => write!(f, "line {line}: {message}"),
            InputError::DuplicateColumn(c) => write!(f, "column {c:?} appears twice in the header"),
            InputError::MissingColumn { name, available } => write!(
                f,
                "no column {name:?}; available columns: {}",
                available.join(", ")
            ),
            InputError::NotALabel { line, column } => {
                write!(
                    f,
                    "line {line}: column {column:?} holds a list, expected one label"
                )
            }
        }
    }
}

impl std::error::Error for InputError {}

fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

impl Table {
    /// Parses `text` in the given format.
    pub fn parse(text: &str, format: InputFormat) -> Result<Table, InputError> {
        let text = strip_bom(text);
        if text.trim().is_empty() {
            return Err(InputError::Empty);
        }
        match format {
            InputFormat::Csv => parse_delimited(text, b','),
            InputFormat::Tsv => parse_delimited(text, b'\t'),
            InputFormat::Jsonl => parse_json(text),
        }
    }

    /// The index of a column by exact header name.
    pub fn column_index(&self, name: &str) -> Result<usize, InputError> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| InputError::MissingColumn {
                name: name.to_string(),
                available: self.headers.clone(),
            })
    }

    /// Labels of the named columns, one inner vector per row (see [`Cell::as_label`]).
    pub fn labels(&self, columns: &[&str]) -> Result<Vec<Vec<Option<&str>>>, InputError> {
        let indices = columns
            .iter()
            .map(|c| self.column_index(c))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let mut labels = Vec::with_capacity(indices.len());
            for (&i, name) in indices.iter().zip(columns) {
                let cell = row.cells.get(i).unwrap_or(&Cell::Missing);
                match cell.as_label() {
                    Ok(l) => labels.push(l),
                    Err(ListCell) => {
                        return Err(InputError::NotALabel {
                            line: row.line,
                            column: name.to_string(),
                        })
                    }
                }
            }
            out.push(labels);
        }
        Ok(out)
    }

    /// Sets of the two named columns per row (see [`Cell::as_set`]).
    #[allow(clippy::type_complexity)]
    pub fn sets(
        &self,
        a: &str,
        b: &str,
        separator: &str,
    ) -> Result<Vec<(Option<BTreeSet<String>>, Option<BTreeSet<String>>)>, InputError> {
        let (ia, ib) = (self.column_index(a)?, self.column_index(b)?);
        Ok(self
            .rows
            .iter()
            .map(|row| {
                let get = |i: usize| row.cells.get(i).unwrap_or(&Cell::Missing).as_set(separator);
                (get(ia), get(ib))
            })
            .collect())
    }
}

fn parse_delimited(text: &str, delimiter: u8) -> Result<Table, InputError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(&e, &|_| 1))?
        .iter()
        .map(str::to_string)
        .collect();
    let mut seen = BTreeSet::new();
    for h in &headers {
        if !h.is_empty() && !seen.insert(h.as_str()) {
            return Err(InputError::DuplicateColumn(h.clone()));
        }
    }
    // The reader's own line counter skips blank lines, so lines come from byte offsets.
    let newlines: Vec<usize> = text
        .bytes()
        .enumerate()
        .filter_map(|(i, b)| (b == b'\n').then_some(i))
        .collect();
    // A record's position can point at blank lines skipped before it: step over them.
    let line_of = |byte: u64| {
        let start = usize::try_from(byte).unwrap_or(usize::MAX);
        let skip = text.as_bytes().get(start..).map_or(0, |rest| {
            rest.iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count()
        });
        let byte = start.saturating_add(skip);
        newlines.partition_point(|&nl| nl < byte) + 1
    };
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(&e, &line_of))?;
        let line = record.position().map_or(0, |p| line_of(p.byte()));
        // Blank lines are skipped by the csv reader; a line of only delimiters is kept.
        let cells = record
            .iter()
            .take(headers.len())
            .map(|f| Cell::Text(f.to_string()))
            .collect();
        rows.push(Row { line, cells });
    }
    Ok(Table { headers, rows })
}

fn csv_error(e: &csv::Error, line_of: &dyn Fn(u64) -> usize) -> InputError {
    let line = e.position().map_or(0, |p| line_of(p.byte()));
    InputError::Syntax {
        line,
        message: e.to_string(),
    }
}

fn json_cell(v: &Value) -> Cell {
    match v {
        Value::Null => Cell::Missing,
        Value::Bool(b) => Cell::Text(b.to_string()),
        Value::Number(n) => Cell::Text(number_text(n)),
        Value::String(s) => Cell::Text(s.clone()),
        Value::Array(items) => Cell::List(
            items
                .iter()
                .filter(|i| !i.is_null())
                .map(|i| match i {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => number_text(n),
                    other => other.to_string(),
                })
                .collect(),
        ),
        Value::Object(_) => Cell::Text(v.to_string()),
    }
}

fn number_text(n: &serde_json::Number) -> String {
    if n.is_f64() {
        if let Some(x) = n.as_f64() {
            // Integral floats within the exactly representable range print as integers.
            if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
                return format!("{}", x as i64);
            }
        }
    }
    n.to_string()
}

fn parse_json(text: &str) -> Result<Table, InputError> {
    let mut objects: Vec<(usize, serde_json::Map<String, Value>)> = Vec::new();
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        // Elements of a JSON array are reported at the line where the array starts.
        let first_line = text
            .get(..text.len() - trimmed.len())
            .map_or(1, |p| p.matches('\n').count() + 1);
        let value: Value = serde_json::from_str(text).map_err(|e| InputError::Syntax {
            line: e.line(),
            message: e.to_string(),
        })?;
        let items = match value {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Value::Object(map) => objects.push((first_line, map)),
                _ => {
                    return Err(InputError::Syntax {
                        line: first_line,
                        message: format!("array element {i} is not an object"),
                    })
                }
            }
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line).map_err(|e| InputError::Syntax {
                line: line_no,
                message: e.to_string(),
            })?;
            match value {
                Value::Object(map) => objects.push((line_no, map)),
                _ => {
                    return Err(InputError::Syntax {
                        line: line_no,
                        message: "expected a JSON object".to_string(),
                    })
                }
            }
        }
    }
    // Headers: union of keys in first-seen order.
    let mut headers: Vec<String> = Vec::new();
    let mut position: BTreeMap<String, usize> = BTreeMap::new();
    for (_, map) in &objects {
        for key in map.keys() {
            if !position.contains_key(key) {
                position.insert(key.clone(), headers.len());
                headers.push(key.clone());
            }
        }
    }
    let rows = objects
        .iter()
        .map(|(line, map)| {
            let mut cells = vec![Cell::Missing; headers.len()];
            for (key, value) in map {
                if let Some(cell) = position.get(key).and_then(|&i| cells.get_mut(i)) {
                    *cell = json_cell(value);
                }
            }
            Row { line: *line, cells }
        })
        .collect();
    Ok(Table { headers, rows })
}
