//! Contingency tallies and the agreement / classification coefficients computed from them.
//! See the [module docs](super) for the formulas.

use serde::Serialize;

use super::{ratio, ratio_u};

/// Sufficient statistics of a two-rater table over `q` categories: the diagonal and both
/// marginals. Memory is O(q), not O(q²), so a table with many distinct labels stays cheap; the
/// full matrix (when wanted for display) is kept separately by [`Confusion`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    n: u64,
    diag: Vec<u64>,
    /// Rater a's marginal counts `r_k`.
    row: Vec<u64>,
    /// Reference b's marginal counts `c_k`.
    col: Vec<u64>,
}

impl Tally {
    /// An empty tally over `q` categories.
    pub fn new(q: usize) -> Self {
        Tally {
            n: 0,
            diag: vec![0; q],
            row: vec![0; q],
            col: vec![0; q],
        }
    }

    /// A tally of `(a, b)` category-index pairs. Pairs with an index `>= q` are ignored.
    pub fn from_pairs(q: usize, pairs: &[(usize, usize)]) -> Self {
        let mut t = Tally::new(q);
        for &(a, b) in pairs {
            t.add(a, b);
        }
        t
    }

    /// A tally from a dense `q × q` matrix, `matrix[k][l]` = items a put in `k` and b in `l`.
    /// Rows shorter or longer than the number of rows are truncated / padded with zeros.
    pub fn from_matrix(matrix: &[Vec<u64>]) -> Self {
        let q = matrix.len();
        let mut t = Tally::new(q);
        for (k, row) in matrix.iter().enumerate() {
            for (l, &count) in row.iter().take(q).enumerate() {
                t.add_many(k, l, count);
            }
        }
        t
    }

    /// Counts one item that a put in category `a` and b in `b`. Returns false (and counts
    /// nothing) if either index is out of range.
    pub fn add(&mut self, a: usize, b: usize) -> bool {
        self.add_many(a, b, 1)
    }

    /// Counts `count` items at once; same range rule as [`Tally::add`].
    pub fn add_many(&mut self, a: usize, b: usize, count: u64) -> bool {
        let q = self.q();
        if a >= q || b >= q {
            return false;
        }
        // Indices checked above; the adds saturate so hostile counts cannot overflow.
        if let (Some(r), Some(c)) = (self.row.get_mut(a), self.col.get_mut(b)) {
            *r = r.saturating_add(count);
            *c = c.saturating_add(count);
        }
        if a == b {
            if let Some(d) = self.diag.get_mut(a) {
                *d = d.saturating_add(count);
            }
        }
        self.n = self.n.saturating_add(count);
        true
    }

    /// Resets all counts to zero, keeping `q`.
    pub fn clear(&mut self) {
        self.n = 0;
        self.diag.iter_mut().for_each(|x| *x = 0);
        self.row.iter_mut().for_each(|x| *x = 0);
        self.col.iter_mut().for_each(|x| *x = 0);
    }

    /// Number of categories.
    pub fn q(&self) -> usize {
        self.diag.len()
    }

    /// Number of items.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Number of items on which the raters agree.
    pub fn agreements(&self) -> u64 {
        self.diag.iter().sum()
    }

    /// `n_kk`.
    pub fn diag(&self) -> &[u64] {
        &self.diag
    }

    /// Rater a's marginal counts.
    pub fn row_totals(&self) -> &[u64] {
        &self.row
    }

    /// Reference b's marginal counts.
    pub fn col_totals(&self) -> &[u64] {
        &self.col
    }
}

/// The chance-corrected agreement coefficients of a [`Tally`]. `None` = denominator 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Agreement {
    pub po: Option<f64>,
    pub kappa: Option<f64>,
    pub scott_pi: Option<f64>,
    pub ac1: Option<f64>,
    pub pabak: Option<f64>,
}

/// `num / den` from exact integer arithmetic; `None` when `den == 0` or on (practically
/// unreachable) i128 overflow.
fn exact_ratio(num: Option<i128>, den: Option<i128>) -> Option<f64> {
    match (num, den) {
        (Some(num), Some(den)) if den != 0 => Some(num as f64 / den as f64),
        _ => None,
    }
}

/// Computes Po, Cohen's kappa, Scott's pi, Gwet's AC1 and PABAK.
pub fn agreement(t: &Tally) -> Agreement {
    let n = i128::from(t.n);
    let d = i128::from(t.agreements());
    let q = t.q() as i128;
    // Σ r_k c_k, Σ m_k², Σ m_k (2n - m_k) with m_k = r_k + c_k.
    let mut sum_rc: Option<i128> = Some(0);
    let mut sum_m2: Option<i128> = Some(0);
    let mut sum_m_rest: Option<i128> = Some(0);
    for (&r, &c) in t.row.iter().zip(&t.col) {
        let (r, c) = (i128::from(r), i128::from(c));
        let m = r + c;
        sum_rc = sum_rc.and_then(|s| s.checked_add(r.checked_mul(c)?));
        sum_m2 = sum_m2.and_then(|s| s.checked_add(m.checked_mul(m)?));
        sum_m_rest = sum_m_rest.and_then(|s| s.checked_add(m.checked_mul(2 * n - m)?));
    }
    let n2 = n.checked_mul(n);
    let po = if n == 0 {
        None
    } else {
        Some(d as f64 / n as f64)
    };
    let valid = n > 0;
    // κ = (n·d - Σ r_k c_k) / (n² - Σ r_k c_k)
    let kappa = if valid {
        exact_ratio(
            n.checked_mul(d).zip(sum_rc).map(|(a, b)| a - b),
            n2.zip(sum_rc).map(|(a, b)| a - b),
        )
    } else {
        None
    };
    // π = (4n·d - Σ m_k²) / (4n² - Σ m_k²)
    let scott_pi = if valid {
        exact_ratio(
            n.checked_mul(4 * d).zip(sum_m2).map(|(a, b)| a - b),
            n2.and_then(|x| x.checked_mul(4))
                .zip(sum_m2)
                .map(|(a, b)| a - b),
        )
    } else {
        None
    };
    // AC1 = ((q-1)·4n·d - S) / ((q-1)·4n² - S), S = Σ m_k (2n - m_k)
    let ac1 = if valid && q >= 2 {
        exact_ratio(
            (q - 1)
                .checked_mul(4)
                .and_then(|x| x.checked_mul(n))
                .and_then(|x| x.checked_mul(d))
                .zip(sum_m_rest)
                .map(|(a, b)| a - b),
            (q - 1)
                .checked_mul(4)
                .zip(n2)
                .and_then(|(x, y)| x.checked_mul(y))
                .zip(sum_m_rest)
                .map(|(a, b)| a - b),
        )
    } else {
        None
    };
    // PABAK = (q·d - n) / ((q-1)·n)
    let pabak = if valid && q >= 2 {
        exact_ratio(q.checked_mul(d).map(|x| x - n), (q - 1).checked_mul(n))
    } else {
        None
    };
    Agreement {
        po,
        kappa,
        scott_pi,
        ac1,
        pabak,
    }
}

/// One-vs-rest scores of rater a for one category, against reference b.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassScores {
    pub label: String,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// Items that the reference b puts in this class (`TP + FN`).
    pub support: u64,
    /// Items that rater a puts in this class (`TP + FP`).
    pub predicted: u64,
}

/// Precision, recall and F1 of category `k` (one-vs-rest). Out-of-range `k` gives all `None`.
pub fn class_scores(t: &Tally, k: usize, label: &str) -> ClassScores {
    let tp = t.diag.get(k).copied().unwrap_or(0);
    let predicted = t.row.get(k).copied().unwrap_or(0);
    let support = t.col.get(k).copied().unwrap_or(0);
    let fp = predicted.saturating_sub(tp);
    let fn_ = support.saturating_sub(tp);
    let f1_den = (2 * tp as u128) + fp as u128 + fn_ as u128;
    ClassScores {
        label: label.to_string(),
        precision: ratio_u(tp, predicted),
        recall: ratio_u(tp, support),
        f1: ratio(2.0 * tp as f64, f1_den as f64),
        support,
        predicted,
    }
}

/// Per-class scores for every category, in category order.
pub fn per_class(t: &Tally, categories: &[String]) -> Vec<ClassScores> {
    categories
        .iter()
        .enumerate()
        .map(|(k, label)| class_scores(t, k, label))
        .collect()
}

/// Macro averages over the classes whose score is defined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MacroScores {
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

fn mean_defined(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let (sum, count) = values
        .flatten()
        .fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    ratio(sum, count as f64)
}

/// Macro-averaged precision, recall and F1 (undefined classes excluded).
pub fn macro_scores(classes: &[ClassScores]) -> MacroScores {
    MacroScores {
        precision: mean_defined(classes.iter().map(|c| c.precision)),
        recall: mean_defined(classes.iter().map(|c| c.recall)),
        f1: mean_defined(classes.iter().map(|c| c.f1)),
    }
}

/// Macro F1 straight from a tally (used by the bootstrap; no label strings).
pub fn macro_f1(t: &Tally) -> Option<f64> {
    mean_defined((0..t.q()).map(|k| class_scores(t, k, "").f1))
}

/// Binary decision-bias figures: accuracy on reference-positive and reference-negative items
/// and `Gap = Acc(neg) - Acc(pos)`. Category 0 is negative, 1 is positive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DecisionBias {
    pub acc_pos: Option<f64>,
    pub acc_neg: Option<f64>,
    pub gap: Option<f64>,
}

/// Decision bias of a binary tally (`None` everywhere if the tally is not binary).
pub fn decision_bias(t: &Tally) -> DecisionBias {
    if t.q() != 2 {
        return DecisionBias {
            acc_pos: None,
            acc_neg: None,
            gap: None,
        };
    }
    let acc_pos = class_scores(t, 1, "").recall;
    let acc_neg = class_scores(t, 0, "").recall;
    DecisionBias {
        acc_pos,
        acc_neg,
        gap: acc_neg.zip(acc_pos).map(|(neg, pos)| neg - pos),
    }
}

/// The full `q × q` matrix for display, `matrix[k][l]` = a said `k`, b said `l`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// Category labels, indexing both rows (rater a) and columns (reference b).
    pub labels: Vec<String>,
    pub matrix: Vec<Vec<u64>>,
}

impl Confusion {
    /// Builds the dense matrix from category-index pairs (out-of-range pairs are ignored).
    pub fn from_pairs(labels: &[String], pairs: &[(usize, usize)]) -> Self {
        let q = labels.len();
        let mut matrix = vec![vec![0u64; q]; q];
        for &(a, b) in pairs {
            if let Some(cell) = matrix.get_mut(a).and_then(|row| row.get_mut(b)) {
                *cell += 1;
            }
        }
        Confusion {
            labels: labels.to_vec(),
            matrix,
        }
    }
}
