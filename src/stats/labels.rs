//! Label normalisation: deciding between a binary and a multi-class label space, mapping label
//! strings to category indices, and skipping rows with missing labels.
//!
//! Conventions:
//! * Labels are trimmed; an empty label is *missing*, and a row with a missing label in any of
//!   the columns involved is skipped (and counted).
//! * Binary tokens are `0/1`, `false/true`, `no/yes`, case-insensitive; `1`/`true`/`yes` is the
//!   positive class. Without declared categories a table is binary when every present label is
//!   a binary token; then `q = 2` even if only one class occurs.
//! * Otherwise the table is multi-class. Labels are compared as exact (trimmed, case-sensitive)
//!   strings; the categories are the declared ones in declared order, or else the sorted union
//!   of the observed labels.
//! * Declared categories that are exactly two binary tokens of opposite polarity (e.g.
//!   `no,yes`) select the binary space. A label outside the declared categories is an error.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

/// Parses a binary token: `Some(true)` for 1/true/yes, `Some(false)` for 0/false/no
/// (case-insensitive, surrounding whitespace ignored), `None` for anything else.
pub fn binary_token(s: &str) -> Option<bool> {
    let t = s.trim();
    if t == "1" || t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("yes") {
        Some(true)
    } else if t == "0" || t.eq_ignore_ascii_case("false") || t.eq_ignore_ascii_case("no") {
        Some(false)
    } else {
        None
    }
}

/// The categories that labels are mapped to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelSpace {
    /// Category names in index order. Binary spaces are `["0", "1"]` (negative, positive).
    pub categories: Vec<String>,
    /// Whether labels are binary tokens (index 1 = positive).
    pub binary: bool,
    #[serde(skip)]
    index: BTreeMap<String, usize>,
}

impl LabelSpace {
    /// The binary space `["0", "1"]`.
    pub fn binary() -> Self {
        LabelSpace {
            categories: vec!["0".to_string(), "1".to_string()],
            binary: true,
            index: BTreeMap::new(),
        }
    }

    /// A multi-class space over the given distinct categories, in the given order.
    pub fn multiclass(categories: Vec<String>) -> Result<Self, LabelError> {
        let mut index = BTreeMap::new();
        for (i, c) in categories.iter().enumerate() {
            if index.insert(c.clone(), i).is_some() {
                return Err(LabelError::DuplicateCategory(c.clone()));
            }
        }
        Ok(LabelSpace {
            categories,
            binary: false,
            index,
        })
    }

    /// Number of categories `q`.
    pub fn q(&self) -> usize {
        self.categories.len()
    }

    /// The category index of a (trimmed) label, if it belongs to this space.
    pub fn index_of(&self, label: &str) -> Option<usize> {
        if self.binary {
            binary_token(label).map(usize::from)
        } else {
            self.index.get(label.trim()).copied()
        }
    }

    /// Chooses the label space from the observed labels and the declared categories (see the
    /// module docs). Also returns explanatory notes.
    pub fn resolve<'a>(
        observed: impl IntoIterator<Item = &'a str>,
        declared: Option<&[String]>,
    ) -> Result<(Self, Vec<String>), LabelError> {
        let mut notes = Vec::new();
        if let Some(declared) = declared {
            let cats: Vec<String> = declared
                .iter()
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
            if cats.is_empty() {
                return Err(LabelError::EmptyCategories);
            }
            if let [x, y] = cats.as_slice() {
                if let (Some(bx), Some(by)) = (binary_token(x), binary_token(y)) {
                    if bx != by {
                        return Ok((LabelSpace::binary(), notes));
                    }
                }
            }
            return Ok((LabelSpace::multiclass(cats)?, notes));
        }
        let mut distinct = BTreeSet::new();
        let mut non_binary: Option<String> = None;
        for label in observed {
            let t = label.trim();
            if t.is_empty() {
                continue;
            }
            if non_binary.is_none() && binary_token(t).is_none() {
                non_binary = Some(t.to_string());
            }
            distinct.insert(t.to_string());
        }
        match non_binary {
            None => Ok((LabelSpace::binary(), notes)),
            Some(example) => {
                let space = LabelSpace::multiclass(distinct.into_iter().collect())?;
                notes.push(format!(
                    "labels are not all binary (e.g. {:?}): treated as multi-class with \
                     q = {} observed categories; use --categories to declare them",
                    super::short_label(&example),
                    space.q()
                ));
                Ok((space, notes))
            }
        }
    }
}

/// Why labels could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelError {
    /// `--categories` was given but named no category.
    EmptyCategories,
    /// A declared category appears twice.
    DuplicateCategory(String),
    /// A label outside the declared categories, at 0-based input row `row` and 0-based column
    /// position `column` (in the order the columns were passed).
    Undeclared {
        label: String,
        row: usize,
        column: usize,
    },
}

impl fmt::Display for LabelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabelError::EmptyCategories => write!(f, "no categories declared"),
            LabelError::DuplicateCategory(c) => {
                write!(f, "category {:?} declared twice", super::short_label(c))
            }
            LabelError::Undeclared { label, row, column } => write!(
                f,
                "label {:?} (row {row}, column {column}) is not one of the declared categories",
                super::short_label(label)
            ),
        }
    }
}

impl std::error::Error for LabelError {}

/// Rows of category indices, one index per column, after skipping incomplete rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelledRows {
    pub space: LabelSpace,
    /// Complete rows, each with one category index per column.
    pub rows: Vec<Vec<usize>>,
    /// For each kept row, its 0-based index in the input.
    pub source_rows: Vec<usize>,
    /// Rows skipped because a label was missing or empty.
    pub skipped: usize,
    pub notes: Vec<String>,
}

fn present<'a>(label: &Option<&'a str>) -> Option<&'a str> {
    label.map(str::trim).filter(|l| !l.is_empty())
}

/// Maps rows of raw labels (one per column; `None` or blank = missing) into a common label
/// space. Rows with any missing label are skipped.
pub fn label_rows(
    rows: &[Vec<Option<&str>>],
    declared: Option<&[String]>,
) -> Result<LabelledRows, LabelError> {
    let complete =
        |row: &Vec<Option<&str>>| !row.is_empty() && row.iter().all(|l| present(l).is_some());
    let observed = rows
        .iter()
        .filter(|r| complete(r))
        .flat_map(|r| r.iter().filter_map(present));
    let (space, notes) = LabelSpace::resolve(observed, declared)?;
    let mut out = Vec::new();
    let mut source_rows = Vec::new();
    let mut skipped = 0;
    for (i, row) in rows.iter().enumerate() {
        if !complete(row) {
            skipped += 1;
            continue;
        }
        let mut indices = Vec::with_capacity(row.len());
        for (column, label) in row.iter().enumerate() {
            let label = present(label).unwrap_or("");
            match space.index_of(label) {
                Some(k) => indices.push(k),
                None => {
                    return Err(LabelError::Undeclared {
                        label: label.to_string(),
                        row: i,
                        column,
                    })
                }
            }
        }
        out.push(indices);
        source_rows.push(i);
    }
    Ok(LabelledRows {
        space,
        rows: out,
        source_rows,
        skipped,
        notes,
    })
}

/// Two-rater labels: `(a, b)` category-index pairs, b being the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelledPairs {
    pub space: LabelSpace,
    pub pairs: Vec<(usize, usize)>,
    pub skipped: usize,
    pub notes: Vec<String>,
}

impl LabelledPairs {
    /// Pairs already mapped to `space` (for callers that build tables programmatically).
    pub fn new(space: LabelSpace, pairs: Vec<(usize, usize)>) -> Self {
        LabelledPairs {
            space,
            pairs,
            skipped: 0,
            notes: Vec::new(),
        }
    }

    /// Maps raw `(a, b)` labels; see [`label_rows`].
    pub fn from_labels(
        a: &[Option<&str>],
        b: &[Option<&str>],
        declared: Option<&[String]>,
    ) -> Result<Self, LabelError> {
        let rows: Vec<Vec<Option<&str>>> = a.iter().zip(b).map(|(x, y)| vec![*x, *y]).collect();
        let labelled = label_rows(&rows, declared)?;
        let pairs = labelled
            .rows
            .iter()
            .filter_map(|r| match r.as_slice() {
                [x, y] => Some((*x, *y)),
                _ => None,
            })
            .collect();
        Ok(LabelledPairs {
            space: labelled.space,
            pairs,
            skipped: labelled.skipped + a.len().abs_diff(b.len()),
            notes: labelled.notes,
        })
    }
}
