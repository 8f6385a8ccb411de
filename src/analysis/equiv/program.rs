//! Whole programs (stdin -> stdout, exit status), purely: inputs generated from the shape of
//! sample inputs, and the comparison of two outputs. Running the programs is `exec::program`.
//!
//! **Input shape.** A generated input is a sample input with its values perturbed, never a new
//! layout: the same lines, the same number of fields per line, each field of the same class
//! (integer, decimal, word). Perturbation stays within what the samples show:
//!
//! - an integer that looks structural is kept: it stands alone or in a header of at most three
//!   fields (the first line, a line shaped unlike its neighbours, or the first line of a run
//!   after a line of another shape whose value equals the run's width: `2 6` heading `1 4`,
//!   `2 5`) and equals the number of fields of a later line,
//!   the number of lines after it, or the length of a later word (`n` followed by `n` values, a
//!   grid's `h w`, a string's length);
//! - the other integers of a line take values in the range observed for their group (the
//!   integers of that line, and of the same line and column in every sample); a group with a
//!   single positive value `v`, or a positive integer alone on its line, ranges down to 1
//!   (smaller instances of the same input, which stay valid where the sample was);
//! - digits with a leading zero (`0110`) are a string, and so are the integers other samples
//!   write at that place (`10010`);
//! - a line of integers that is a permutation of `1..=k` in every sample that has the line
//!   stays a permutation (shuffled); a line whose integers are all distinct stays distinct
//!   when the range allows, except in the one input in four made of ties (two or three values
//!   of the range, repeated; a column of a run of records repeating earlier lines' values),
//!   since a sample's few values are distinct by chance as often as by rule (a strictly
//!   increasing line stays strictly increasing); a sorted line stays sorted;
//! - a run of records (two or more `l r` or `u v w` lines; three or more lines of up to eight
//!   integers whose columns hold different kinds of value, `a b c d`) draws each column from
//!   its own range, and keeps every order between two columns that all its lines show
//!   (`l <= r`; `a < b` beside an unordered amount);
//! - a word draws its characters from those observed in its column, and its length from the
//!   lengths observed there, unless an integer before it equals its length (a count) or it is
//!   a row of a grid (a run of words of one length);
//! - a decimal keeps its number of decimal places and its observed range;
//! - a wide range around zero draws zero or a neighbour now and then; a counted list of two
//!   values keeps no order of its own; index columns of a short run of updates keep `l <= r`;
//!   a simple graph whose edge count a count before it gives stays a simple graph.
//!
//! Generation is deterministic: the same samples, count and seed give the same inputs.

use crate::syntax::lang::kind;
use crate::syntax::{Language, ParsedFile};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// How two outputs are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareMode {
    /// Byte for byte.
    Exact,
    /// Whitespace-separated tokens, as most judges compare (decimals within 1e-6).
    Tokens,
}

impl CompareMode {
    pub fn name(self) -> &'static str {
        match self {
            CompareMode::Exact => "exact",
            CompareMode::Tokens => "tokens",
        }
    }
    pub fn parse(s: &str) -> Option<CompareMode> {
        match s {
            "exact" => Some(CompareMode::Exact),
            "tokens" => Some(CompareMode::Tokens),
            _ => None,
        }
    }
}

/// Whether two outputs are the same under `mode`.
pub fn same_output(a: &str, b: &str, mode: CompareMode) -> bool {
    match mode {
        CompareMode::Exact => a == b,
        CompareMode::Tokens => {
            let (ta, tb): (Vec<&str>, Vec<&str>) = (
                a.split_whitespace().collect(),
                b.split_whitespace().collect(),
            );
            ta.len() == tb.len() && ta.iter().zip(&tb).all(|(x, y)| same_token(x, y))
        }
    }
}

/// Equal tokens, or two decimals within the usual judge tolerance (absolute or relative error
/// at most 1e-6) when at least one is written with a fraction or an exponent.
fn same_token(x: &str, y: &str) -> bool {
    if x == y {
        return true;
    }
    let decimal = |t: &str| t.contains(['.', 'e', 'E']);
    if !(decimal(x) || decimal(y)) {
        return false;
    }
    match (x.parse::<f64>(), y.parse::<f64>()) {
        (Ok(a), Ok(b)) if a.is_finite() && b.is_finite() => {
            let d = (a - b).abs();
            d <= 1e-6 || d <= 1e-6 * a.abs().max(b.abs())
        }
        _ => false,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Field {
    Int(i128),
    /// Value and number of decimal places.
    Dec(f64, usize),
    Word(String),
}

fn classify(tok: &str) -> Field {
    if let Ok(v) = tok.parse::<i128>() {
        // Leading zeros ("007") are words: their digits are text.
        let digits = tok.trim_start_matches(['-', '+']);
        if digits.len() == 1 || !digits.starts_with('0') {
            return Field::Int(v);
        }
    }
    if let Some((whole, frac)) = tok.split_once('.') {
        let w = whole.trim_start_matches('-');
        if !w.is_empty()
            && w.bytes().all(|b| b.is_ascii_digit())
            && !frac.is_empty()
            && frac.bytes().all(|b| b.is_ascii_digit())
        {
            if let Ok(v) = tok.parse::<f64>() {
                return Field::Dec(v, frac.len());
            }
        }
    }
    Field::Word(tok.to_string())
}

struct Sample {
    lines: Vec<Vec<Field>>,
    /// Whether the text ended with a newline.
    trailing_newline: bool,
    /// Per line, the first and last line of its run of same-shaped lines (after the first
    /// line; the first line is a run of its own).
    runs: Vec<(usize, usize)>,
    /// Per run (by its first line) and column: the range of its integers, and the characters
    /// of its words. Computed once per sample, not per generated value.
    run_ints: BTreeMap<(usize, usize), (i128, i128)>,
    run_chars: BTreeMap<(usize, usize), BTreeSet<char>>,
    /// Runs (by first line) whose integers are all positive.
    run_positive: BTreeSet<usize>,
    /// Runs (by first line) of records: two or more short lines (`l r`, `u v w`), or three or
    /// more lines of up to eight integers whose columns hold different kinds of value (`a b c d` with
    /// indices `a`, `b` and an amount `d`: one column's values all below another's). Their
    /// columns are drawn each from its own range; other runs (rows of a grid, value lists)
    /// draw a line's values from one range.
    records: BTreeSet<usize>,
    /// Runs of records (by first line) whose first column names a kind of line: three lines or
    /// more whose first integers take two to four values of `0..=4`, some repeated, the
    /// largest given by no short line before the run (`1 x` inserts, `2 x` asks; in `n m`
    /// then `p y` with `p <= n`, `p` indexes). A kind is no index: it keeps its values and is
    /// not stretched to an earlier count as index columns are ([`int_range`]); and the other
    /// columns of such a run (the values inserted and asked for) may repeat in an input made
    /// of ties though the samples show them different ([`keep_distinct_columns`]).
    kinds: BTreeSet<usize>,
    /// Per run (by first line) and column: the shortest and longest word, in characters.
    run_word_len: BTreeMap<(usize, usize), (usize, usize)>,
    /// Runs (by first line) with a line of other than one word.
    run_not_one_word: BTreeSet<usize>,
    /// Per run (by first line) and column: its words (at most [`POOL_WORDS`], each cut to
    /// [`POOL_CHARS`] characters), the pieces new words there are spliced from.
    run_words: BTreeMap<(usize, usize), Vec<String>>,
    /// Run columns (first line, column) of two or more lines where a word repeats: new
    /// inputs repeat words there too.
    run_word_repeats: BTreeSet<(usize, usize)>,
    /// Run columns of three or more lines whose words are all different: new words there
    /// stay different (the words of such a run are often names or keys the problem
    /// guarantees distinct).
    run_word_distinct: BTreeSet<(usize, usize)>,
}

/// The most words kept per place as splicing material, and the most characters of each.
const POOL_WORDS: usize = 32;
const POOL_CHARS: usize = 256;

/// `w` cut to [`POOL_CHARS`] characters.
fn pool_word(w: &str) -> String {
    w.chars().take(POOL_CHARS).collect()
}

/// Places (line, column) where some sample writes digits with a leading zero (`0000`, `0110`):
/// a string of digits, not a number, so the integers other samples write there (`10010`,
/// `1`) are digit strings too. A place also covers the lines next to it with as many fields
/// (a list of binary strings, one per line).
fn digit_word_places(samples: &[String]) -> BTreeSet<(usize, usize)> {
    let mut out = BTreeSet::new();
    for text in samples {
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        for (i, line) in lines.iter().enumerate() {
            for (j, tok) in line.iter().enumerate() {
                let zero_led = tok.len() > 1
                    && tok.starts_with('0')
                    && tok.bytes().all(|b| b.is_ascii_digit());
                if !zero_led {
                    continue;
                }
                let same = |k: usize| lines.get(k).is_some_and(|l| l.len() == line.len());
                let first = (0..i).rev().take_while(|&k| same(k)).last().unwrap_or(i);
                let last = (i + 1..lines.len())
                    .take_while(|&k| same(k))
                    .last()
                    .unwrap_or(i);
                out.extend((first..=last).map(|k| (k, j)));
            }
        }
    }
    out
}

fn parse_sample(text: &str, digit_words: &BTreeSet<(usize, usize)>) -> Sample {
    let lines: Vec<Vec<Field>> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            l.split_whitespace()
                .enumerate()
                .map(|(j, tok)| match classify(tok) {
                    Field::Int(_)
                        if digit_words.contains(&(i, j))
                            && tok.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        Field::Word(tok.to_string())
                    }
                    f => f,
                })
                .collect()
        })
        .collect();
    let shapes: Vec<Vec<u8>> = lines.iter().map(|l| line_shape(l)).collect();
    let mut runs = Vec::with_capacity(lines.len());
    let mut start = 0;
    for i in 0..lines.len() {
        if i <= 1 || shapes[i] != shapes[i - 1] {
            start = i;
        }
        runs.push((start, start));
    }
    // Each run's last line, written back from the end.
    let mut end = lines.len().saturating_sub(1);
    for i in (0..lines.len()).rev() {
        if i + 1 < lines.len() && runs[i + 1].0 != runs[i].0 {
            end = i;
        }
        runs[i].1 = end;
    }
    let mut run_ints: BTreeMap<(usize, usize), (i128, i128)> = BTreeMap::new();
    let mut run_chars: BTreeMap<(usize, usize), BTreeSet<char>> = BTreeMap::new();
    let mut run_positive: BTreeSet<usize> = runs.iter().map(|r| r.0).collect();
    let mut run_word_len: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
    let mut run_not_one_word = BTreeSet::new();
    let mut run_words: BTreeMap<(usize, usize), Vec<String>> = BTreeMap::new();
    let mut run_seen: BTreeMap<(usize, usize), BTreeSet<&str>> = BTreeMap::new();
    let mut run_word_repeats = BTreeSet::new();
    // Per run: the values of its first column (while they are few and small).
    let mut first_column: BTreeMap<usize, Option<BTreeSet<i128>>> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let start = runs[i].0;
        let kinds = first_column
            .entry(start)
            .or_insert_with(|| Some(BTreeSet::new()));
        match (line.first(), kinds.as_mut()) {
            (Some(Field::Int(v @ 0..=4)), Some(set)) => {
                set.insert(*v);
            }
            _ => *kinds = None,
        }
        if line.iter().filter(|f| matches!(f, Field::Word(_))).count() != 1 {
            run_not_one_word.insert(start);
        }
        for (j, f) in line.iter().enumerate() {
            if let Field::Word(w) = f {
                let n = w.chars().count();
                let e = run_word_len.entry((start, j)).or_insert((n, n));
                e.0 = e.0.min(n);
                e.1 = e.1.max(n);
            }
            match f {
                Field::Int(v) => {
                    let e = run_ints.entry((start, j)).or_insert((*v, *v));
                    e.0 = e.0.min(*v);
                    e.1 = e.1.max(*v);
                    if *v < 1 {
                        run_positive.remove(&start);
                    }
                }
                Field::Word(w) => {
                    run_chars.entry((start, j)).or_default().extend(w.chars());
                    let pool = run_words.entry((start, j)).or_default();
                    if pool.len() < POOL_WORDS {
                        pool.push(pool_word(w));
                    }
                    let seen = run_seen.entry((start, j)).or_default();
                    if !seen.insert(w.as_str()) {
                        run_word_repeats.insert((start, j));
                    }
                }
                Field::Dec(..) => {}
            }
        }
    }
    let run_word_distinct = run_seen
        .iter()
        .filter(|(&(start, _), seen)| {
            let lines = runs.get(start).map_or(1, |r| r.1 - r.0 + 1);
            lines >= 3 && seen.len() == lines
        })
        .map(|(k, _)| *k)
        .collect();
    let records = runs
        .iter()
        .filter(|&&(start, end)| is_record_run(&lines, &run_ints, start, end))
        .map(|r| r.0)
        .collect::<BTreeSet<usize>>();
    let kinds = records
        .iter()
        .copied()
        .filter(|start| {
            let height = runs[*start].1 - start + 1;
            let Some(set) = first_column.get(start).and_then(|k| k.as_ref()) else {
                return false;
            };
            // A first column whose largest value a short line before the run gives (`n m`,
            // then `p y` with `p <= n`) indexes something counted there.
            let counted = set.last().is_some_and(|top| {
                lines[..*start]
                    .iter()
                    .filter(|l| l.len() <= 3)
                    .flatten()
                    .any(|f| matches!(f, Field::Int(v) if *v == *top))
            });
            height >= 3 && (2..=4).contains(&set.len()) && set.len() < height && !counted
        })
        .collect();
    Sample {
        lines,
        trailing_newline: text.ends_with('\n'),
        runs,
        run_ints,
        run_chars,
        run_positive,
        records,
        kinds,
        run_word_len,
        run_not_one_word,
        run_words,
        run_word_repeats,
        run_word_distinct,
    }
}

/// Whether lines `start..=end` (one run of same-shaped lines) are records: see
/// [`Sample::records`].
fn is_record_run(
    lines: &[Vec<Field>],
    run_ints: &BTreeMap<(usize, usize), (i128, i128)>,
    start: usize,
    end: usize,
) -> bool {
    let width = lines[start].len();
    if end <= start || width < 2 {
        return false;
    }
    if width <= 3 {
        return true;
    }
    // Wider lines need three of them to tell a record's columns apart.
    if width > 8
        || end < start + 2
        || !lines[start..=end]
            .iter()
            .all(|l| l.iter().all(|f| matches!(f, Field::Int(_))))
    {
        return false;
    }
    let ranges: Vec<(i128, i128)> = (0..width)
        .filter_map(|j| run_ints.get(&(start, j)).copied())
        .collect();
    ranges
        .iter()
        .any(|&(_, hi)| ranges.iter().any(|&(lo, _)| hi < lo))
}

fn line_shape(l: &[Field]) -> Vec<u8> {
    l.iter()
        .map(|f| match f {
            Field::Int(_) => 0,
            Field::Dec(..) => 1,
            Field::Word(_) => 2,
        })
        .collect()
}

/// The first and last line of the run of same-shaped lines (after the first line) that line
/// `i` belongs to.
fn run_of(s: &Sample, i: usize) -> (usize, usize) {
    s.runs.get(i).copied().unwrap_or((i, i))
}

/// Integers of `s` that look structural: (line, column).
fn structural(s: &Sample) -> BTreeSet<(usize, usize)> {
    let mut out = BTreeSet::new();
    let shape = line_shape;
    // The largest integer of each line and every line after it.
    let mut suffix_max: Vec<Option<i128>> = vec![None; s.lines.len() + 1];
    for (i, l) in s.lines.iter().enumerate().rev() {
        let here = l
            .iter()
            .filter_map(|f| match f {
                Field::Int(x) => Some(*x),
                _ => None,
            })
            .max();
        suffix_max[i] = here.max(suffix_max[i + 1]);
    }
    // (shape, column) of short lines whose value there counts the fields of the next line,
    // which has another shape (`3 4` before `1 2 3`).
    let mut count_columns: BTreeSet<(Vec<u8>, usize)> = BTreeSet::new();
    for (line, next) in s.lines.iter().zip(s.lines.iter().skip(1)) {
        if line.len() > 3 || shape(line) == shape(next) {
            continue;
        }
        for (j, f) in line.iter().enumerate() {
            if matches!(f, Field::Int(v) if *v >= 2 && *v == next.len() as i128) {
                count_columns.insert((shape(line), j));
            }
        }
    }
    for (i, line) in s.lines.iter().enumerate() {
        // Counts sit alone or in small headers (`n`, `h w`, `n m q`), not inside value lists,
        // and a header (other than the first line) differs in shape from the lines around it:
        // a run of same-shaped lines (`l r` queries) is data.
        if line.len() > 3 {
            continue;
        }
        let same_as = |j: Option<usize>| {
            j.and_then(|j| s.lines.get(j))
                .is_some_and(|o| shape(o) == shape(line))
        };
        // Except a value that counts the fields of the next line when that line has another
        // shape: the `n` after a test count `t` (`3\n5\n1 -2 3 4 -1\n…`) sits beside `t`.
        let in_run = i > 0 && (same_as(i.checked_sub(1)) || same_as(Some(i + 1)));
        // The first line of a run after a line of another shape may be a header whose count
        // equals the run's width (`n x` then `n` values per line, with `n = 2`: `2 6`, `1 4`,
        // `2 5`), when lines of its shape count the next line elsewhere in the sample (`3 4`
        // before `1 2 3`): an edge `1 2` heading a tree's edges after `5` is data.
        let heads_run = in_run && !same_as(i.checked_sub(1)) && same_as(Some(i + 1));
        let next = s.lines.get(i + 1).filter(|_| !same_as(Some(i + 1)));
        let counts_next = |v: i128| {
            next.is_some_and(|l| {
                (v >= 2 && l.len() as i128 == v)
                    || (l.len() == 1
                        && matches!(&l[0], Field::Word(w) if w.chars().count() as i128 == v))
            })
        };
        for (j, f) in line.iter().enumerate() {
            let Field::Int(v) = f else { continue };
            let v = *v;
            let counts_run =
                heads_run && v == line.len() as i128 && count_columns.contains(&(shape(line), j));
            // A lone count heading the run of one-value lines it counts (`7`, then seven
            // called numbers, after a card of another shape): the run takes it in, being of
            // its shape.
            let (start, end) = run_of(s, i);
            if i > 0 && start == i && line.len() == 1 && v >= 1 && (end - start) as i128 == v {
                out.insert((i, j));
                continue;
            }
            if v < 0 || (in_run && !counts_next(v) && !counts_run) {
                continue;
            }
            let later = &s.lines[i + 1..];
            let rest_lines = later.len() as i128;
            // `n` then `n - 1` lines: a tree's edges; `n m` then edges that name node `n`.
            let later_max = suffix_max.get(i + 1).copied().flatten();
            let hit = v == rest_lines
                || (i == 0 && line.len() == 1 && v == rest_lines + 1)
                || (v >= 2 && later_max == Some(v))
                || later.iter().any(|l| {
                    l.len() as i128 == v
                        || (l.len() == 1
                            && matches!(&l[0], Field::Word(w) if w.chars().count() as i128 == v))
                })
                || (line.len() > 1
                    && later.iter().any(|l| {
                        l.iter()
                            .any(|g| matches!(g, Field::Word(w) if w.chars().count() as i128 == v))
                    }));
            if hit {
                out.insert((i, j));
            }
        }
        // `n q` before `n - 1` edges and `q` queries (or `n m` before `n` values and `m`
        // queries): two counts of a header add up to the lines that follow.
        if i == 0 || !in_run {
            let rest = (s.lines.len() - i - 1) as i128;
            let ints: Vec<(usize, i128)> = line
                .iter()
                .enumerate()
                .filter_map(|(j, f)| match f {
                    Field::Int(v) if *v >= 1 => Some((j, *v)),
                    _ => None,
                })
                .collect();
            for (x, &(ja, a)) in ints.iter().enumerate() {
                for &(jb, b) in &ints[x + 1..] {
                    if a + b == rest || a - 1 + b == rest || a + b - 1 == rest {
                        out.insert((i, ja));
                        out.insert((i, jb));
                    }
                }
            }
        }
    }
    out.extend(
        kind_blocks(s)
            .into_iter()
            .flat_map(|(a, b)| (a..=b).map(|l| (l, 0))),
    );
    out
}

/// Blocks (first and last line) of lines of several kinds (`1 x` inserts, `2 x` deletes, `3`
/// asks for the largest): three or more lines after the first whose first integer (of `0..=4`,
/// some repeated) tells the line's shape, two shapes or more. A kind is no number to draw (`5 5`
/// is no line of the problem): it stays as the sample writes it, though half the inputs take
/// the block's lines in another order ([`generate_inputs`]). Linear in the sample.
fn kind_blocks(s: &Sample) -> Vec<(usize, usize)> {
    let kind = |l: &[Field]| match l.first() {
        Some(Field::Int(v @ 0..=4)) => Some(*v),
        _ => None,
    };
    let mut out = Vec::new();
    let mut i = 1;
    while i < s.lines.len() {
        if kind(&s.lines[i]).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < s.lines.len() && kind(&s.lines[i]).is_some() {
            i += 1;
        }
        let mut shape_of: BTreeMap<i128, Vec<u8>> = BTreeMap::new();
        let consistent = s.lines[start..i].iter().all(|l| {
            let k = kind(l).unwrap_or_default();
            let shape = line_shape(l);
            shape_of.entry(k).or_insert_with(|| shape.clone()) == &shape
        });
        let shapes: BTreeSet<&Vec<u8>> = shape_of.values().collect();
        if consistent && i - start >= 3 && shape_of.len() < i - start && shapes.len() >= 2 {
            out.push((start, i - 1));
        }
    }
    out
}

/// Pairs of columns `(j, k)` with `v[j] <= v[k]` ([`column_orders`]).
type Orders = BTreeSet<(usize, usize)>;

/// Observed facts across all samples, by (line, column) and by line.
#[derive(Default)]
struct Observed {
    int_range: BTreeMap<(usize, usize), (i128, i128)>,
    dec_range: BTreeMap<(usize, usize), (f64, f64)>,
    alphabet: BTreeMap<(usize, usize), BTreeSet<char>>,
    /// The words at each place, over the samples (see [`Sample::run_words`]).
    words: BTreeMap<(usize, usize), Vec<String>>,
    /// Shortest and longest word, in characters.
    word_len: BTreeMap<(usize, usize), (usize, usize)>,
    /// Per run of records (first line, width): the column orders its lines show in every
    /// sample that has one there ([`column_orders`], intersected), and how many lines showed
    /// them.
    run_pairs: BTreeMap<(usize, usize), (Orders, usize)>,
    /// Per single line (not in a run; index, width): the pairs of columns `(j, k)` with
    /// `v[j] <= v[k]` in every sample that has a line of that width there (`a b` with
    /// `a <= b` in every sample, though one sample shows `1 1`).
    line_le: BTreeMap<(usize, usize), Orders>,
    /// Each word position (outside runs of same-shaped lines) mapped to the first position
    /// whose word has the same length in every sample that has both (`S` and `T` of equal
    /// length): tied words get one new length.
    len_tie: BTreeMap<(usize, usize), (usize, usize)>,
    /// Characters that every grid of every sample holds exactly once (`S` and `G` of a maze),
    /// when the samples show two grids or more ([`unique_chars`]).
    unique_chars: BTreeSet<char>,
    /// Whether some sample gives a graph that is not connected ([`forest_or_not`]): the
    /// problem's graphs are general, so a sample tree is a tree by chance and new graphs of
    /// its node and edge counts need not be trees (`m = n - 1` with a cycle and a lone node).
    general_graphs: bool,
    /// Lines that some sample writes with integers that are not a permutation of `1..=k`
    /// (`5` where another sample writes `3 1 4 2`): no permutation is kept there.
    not_permutation: BTreeSet<usize>,
}

/// A grid of a sample ([`grids`]) and how often each character occurs in it.
struct Grid {
    lines: (usize, usize),
    counts: BTreeMap<char, usize>,
}

/// The grids of a sample: runs of two or more lines of one word each, all of one length
/// (first line, last line).
fn grids(s: &Sample) -> Vec<(usize, usize)> {
    let runs: BTreeSet<(usize, usize)> = s.runs.iter().copied().collect();
    runs.into_iter()
        .filter(|&(start, end)| {
            end > start
                && s.lines[start..=end]
                    .iter()
                    .all(|l| matches!(l.as_slice(), [Field::Word(_)]))
                && s.run_word_len
                    .get(&(start, 0))
                    .is_some_and(|&(lo, hi)| lo == hi)
        })
        .collect()
}

/// How often each character occurs in lines `start..=end` of `s` (a grid).
fn char_counts(s: &Sample, (start, end): (usize, usize)) -> BTreeMap<char, usize> {
    let mut counts = BTreeMap::new();
    for l in &s.lines[start..=end] {
        if let [Field::Word(w)] = l.as_slice() {
            for c in w.chars() {
                *counts.entry(c).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// See [`Observed::unique_chars`].
fn unique_chars(facts: &[SampleFacts]) -> BTreeSet<char> {
    let counts: Vec<&BTreeMap<char, usize>> = facts
        .iter()
        .flat_map(|f| f.grids.iter().map(|g| &g.counts))
        .collect();
    if counts.len() < 2 {
        return BTreeSet::new();
    }
    counts[0]
        .keys()
        .copied()
        .filter(|c| counts.iter().all(|m| m.get(c) == Some(&1)))
        .collect()
}

fn observe(samples: &[Sample]) -> Observed {
    let mut o = Observed::default();
    for s in samples {
        for (i, line) in s.lines.iter().enumerate() {
            let mut ints: Vec<i128> = line
                .iter()
                .filter_map(|f| match f {
                    Field::Int(v) => Some(*v),
                    _ => None,
                })
                .collect();
            ints.sort_unstable();
            if !ints.is_empty() && ints.iter().enumerate().any(|(x, v)| *v != x as i128 + 1) {
                o.not_permutation.insert(i);
            }
        }
    }
    for s in samples {
        let runs: BTreeSet<(usize, usize)> = s.runs.iter().copied().collect();
        for (start, end) in runs {
            if end == start || !s.records.contains(&start) {
                continue;
            }
            let pairs = column_orders(s, start, end);
            let lines = end - start + 1;
            o.run_pairs
                .entry((start, s.lines[start].len()))
                .and_modify(|(p, n)| {
                    p.retain(|x| pairs.contains(x));
                    *n += lines;
                })
                .or_insert((pairs, lines));
        }
    }
    for s in samples {
        for (i, line) in s.lines.iter().enumerate() {
            if run_of(s, i) != (i, i) || !(2..=8).contains(&line.len()) {
                continue;
            }
            let int = |j: usize| match line.get(j) {
                Some(Field::Int(v)) => Some(*v),
                _ => None,
            };
            let mut le = Orders::new();
            for j in 0..line.len() {
                for k in 0..line.len() {
                    if let (true, Some(a), Some(b)) = (j != k, int(j), int(k)) {
                        if a <= b {
                            le.insert((j, k));
                        }
                    }
                }
            }
            o.line_le
                .entry((i, line.len()))
                .and_modify(|p| p.retain(|x| le.contains(x)))
                .or_insert(le);
        }
    }
    // Lengths of the words of single lines (not of runs), per sample.
    let lens: Vec<BTreeMap<(usize, usize), usize>> = samples
        .iter()
        .map(|s| {
            let mut m = BTreeMap::new();
            for (i, line) in s.lines.iter().enumerate() {
                if run_of(s, i) != (i, i) {
                    continue;
                }
                for (j, f) in line.iter().enumerate() {
                    if let Field::Word(w) = f {
                        m.insert((i, j), w.chars().count());
                    }
                }
            }
            m
        })
        .collect();
    let positions: BTreeSet<(usize, usize)> = lens.iter().flat_map(|m| m.keys().copied()).collect();
    // Bounded: past 64 word positions lengths are kept (see `word_length`).
    if positions.len() <= 64 {
        for &p in &positions {
            let tie = positions
                .iter()
                .copied()
                .find(|&q| {
                    q == p
                        || lens.iter().all(|m| match (m.get(&p), m.get(&q)) {
                            (Some(a), Some(b)) => a == b,
                            _ => true,
                        })
                })
                .unwrap_or(p);
            o.len_tie.insert(p, tie);
        }
    }
    for s in samples {
        for (i, line) in s.lines.iter().enumerate() {
            for (j, f) in line.iter().enumerate() {
                match f {
                    Field::Int(v) => {
                        let e = o.int_range.entry((i, j)).or_insert((*v, *v));
                        e.0 = e.0.min(*v);
                        e.1 = e.1.max(*v);
                    }
                    Field::Dec(v, _) => {
                        let e = o.dec_range.entry((i, j)).or_insert((*v, *v));
                        e.0 = e.0.min(*v);
                        e.1 = e.1.max(*v);
                    }
                    Field::Word(w) => {
                        o.alphabet.entry((i, j)).or_default().extend(w.chars());
                        let pool = o.words.entry((i, j)).or_default();
                        if pool.len() < POOL_WORDS {
                            pool.push(pool_word(w));
                        }
                        let n = w.chars().count();
                        let e = o.word_len.entry((i, j)).or_insert((n, n));
                        e.0 = e.0.min(n);
                        e.1 = e.1.max(n);
                    }
                }
            }
        }
    }
    o
}

/// Range of a free integer: its line's other free integers and its column across samples.
fn int_range(
    s: &Sample,
    line: &[Field],
    i: usize,
    j: usize,
    fixed: &BTreeSet<(usize, usize)>,
    o: &Observed,
    own_column: bool,
) -> (i128, i128) {
    let mut lo = i128::MAX;
    let mut hi = i128::MIN;
    for (k, f) in line.iter().enumerate() {
        if let Field::Int(v) = f {
            if !fixed.contains(&(i, k)) && (!own_column || k == j) {
                lo = lo.min(*v);
                hi = hi.max(*v);
            }
        }
    }
    // Other samples' values at the same line and column, unless the line is inside a run of
    // same-shaped lines: runs differ in length between samples, so a line index names
    // different things (an edge in one, a query in another).
    let (start, end) = run_of(s, i);
    if end == start {
        if let Some((a, b)) = o.int_range.get(&(i, j)) {
            lo = lo.min(*a);
            hi = hi.max(*b);
        }
    }
    // A run of same-shaped short lines (queries `l r`, edges `u v`) pools its column; when
    // every value is a positive index no larger than a count of an earlier line (`n` of `n q`),
    // the indices range up to that count: the last element is as valid a target as the others.
    if end > start && s.records.contains(&start) {
        if let Some((a, b)) = s.run_ints.get(&(start, j)) {
            lo = lo.min(*a);
            hi = hi.max(*b);
        }
        if s.run_positive.contains(&start) && !(j == 0 && s.kinds.contains(&start)) {
            let count = counts_before(s, fixed, start).filter(|&v| v >= hi).min();
            if let Some(n) = count {
                hi = n;
            }
        }
    }
    // A single positive value, or a line holding one positive integer alone (`w` of "8", "5",
    // "100"), ranges down to 1: smaller instances of the same input, where special cases
    // (`w = 2`) sit.
    if lo > 1 && (lo == hi || line.len() == 1) {
        lo = 1;
    }
    (lo, hi)
}

pub(crate) fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        rng.next_u64() % n
    }
}

pub(crate) fn int_in(rng: &mut ChaCha8Rng, lo: i128, hi: i128) -> i128 {
    if hi <= lo {
        return lo;
    }
    let span = (hi - lo) as u128 + 1;
    let r = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
    lo + (r % span) as i128
}

pub(crate) fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn shuffle<T>(v: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..v.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

fn render(lines: &[Vec<String>], trailing_newline: bool) -> String {
    let mut s = lines
        .iter()
        .map(|l| l.join(" "))
        .collect::<Vec<_>>()
        .join("\n");
    if trailing_newline {
        s.push('\n');
    }
    s
}

/// A value in `lo..=hi`, uniform, or (per input, `skew`) from its lowest or highest quarter:
/// inputs whose values all sit near one end of their range (all negative, all the maximum)
/// are where many wrong answers show, and uniform draws over several values rarely make them.
/// Half the values of a skewed input are one of the three at the very end (`lo`, `lo + 1`,
/// `lo + 2`): an off-by-one at a boundary (`S <= 3` for `S <= 2`, a loop bound that misses
/// `K = 3`) shows on one value of a range of thousands.
fn skewed(rng: &mut ChaCha8Rng, lo: i128, hi: i128, skew: u8) -> i128 {
    let quarter = (hi - lo) / 4;
    let edge = quarter.min(2);
    let at_edge = skew != 0 && below(rng, 2) == 0;
    match (skew, at_edge) {
        (1, true) => int_in(rng, lo, lo + edge),
        (2, true) => int_in(rng, hi - edge, hi),
        (1, false) => int_in(rng, lo, lo + quarter),
        (2, false) => int_in(rng, hi - quarter, hi),
        // Zero and its neighbours inside a wide range that spans them (`-9` .. `123456789`):
        // the special case a uniform draw never reaches.
        _ if lo < 0 && hi > 0 && below(rng, 8) == 0 => int_in(rng, -1, 1),
        _ => wide(rng, lo, hi),
    }
}

/// A value in `lo..=hi`: uniform, or where the range spans three or more orders of magnitude
/// (`4` .. `846264338327950288`) half the time log-uniform, every magnitude as likely, where
/// uniform draws all fall within a factor ten of the top (small divisors with a common
/// factor, short loops).
fn wide(rng: &mut ChaCha8Rng, lo: i128, hi: i128) -> i128 {
    if lo >= 0 && hi / lo.max(1) >= 1000 && below(rng, 2) == 0 {
        let (a, b) = ((lo.max(1) as f64).ln(), ((hi as f64) + 1.0).ln());
        let x = (a + (b - a) * unit(rng)).exp().floor();
        return (x as i128).clamp(lo, hi);
    }
    int_in(rng, lo, hi)
}

/// The characters a word at (line `i`, column `j`) is drawn from: those seen there in every
/// sample and in the same column of its run of same-shaped lines (one test's string per line).
/// Six or more distinct letters, all lower-case (upper-case, either) stand for "lower-case
/// (upper-case, Latin) letters": a sample rarely shows every letter its constraints allow.
/// Fewer letters, or letters mixed with other characters, stay as seen (`ACGT`, `ab`
/// strings, `#.` grids).
fn word_alphabet(s: &Sample, o: &Observed, i: usize, j: usize) -> Vec<char> {
    let mut seen: BTreeSet<char> = o.alphabet.get(&(i, j)).cloned().unwrap_or_default();
    if let Some(chars) = s.run_chars.get(&(run_of(s, i).0, j)) {
        seen.extend(chars.iter().copied());
    }
    if seen.len() >= 6 {
        if seen.iter().all(|c| c.is_ascii_lowercase()) {
            return ('a'..='z').collect();
        }
        if seen.iter().all(|c| c.is_ascii_uppercase()) {
            return ('A'..='Z').collect();
        }
        if seen.iter().all(|c| c.is_ascii_alphabetic()) {
            return ('A'..='Z').chain('a'..='z').collect();
        }
    }
    seen.into_iter().collect()
}

/// The length of a new word for `w` at (line `i`, column `j`), one of the lengths the samples
/// show there (in every sample at that line and column, or along its run of one-word lines).
/// `w`'s own length is kept where a new one could leave the problem's constraints: an integer
/// before it equals it (`n` then a string of length `n`; a grid's `h w`), it is a row of a
/// grid (a run of words of one length) or a line of a run with several words, or the word
/// has no tie entry (more than 64 word positions). No new length falls below a free integer
/// of the input that the word's length holds (an index `k` into the string). Tied words
/// (`len_tie`) take the length drawn for the first of them (`drawn`).
fn word_length(
    s: &Sample,
    o: &Observed,
    facts: &LengthFacts,
    (i, j): (usize, usize),
    w: &str,
    drawn: &mut BTreeMap<(usize, usize), usize>,
    rng: &mut ChaCha8Rng,
) -> usize {
    let n = w.chars().count();
    let counted = facts
        .first_line
        .get(&(n as i128))
        .is_some_and(|&line| line <= i);
    if counted {
        return n;
    }
    let (start, end) = run_of(s, i);
    let (mut lo, mut hi) = (n, n);
    let mut tie = None;
    if end > start {
        if s.run_not_one_word.contains(&start) {
            return n;
        }
        if let Some(&(a, b)) = s.run_word_len.get(&(start, j)) {
            lo = lo.min(a);
            hi = hi.max(b);
        }
        if lo == hi {
            return n;
        }
    } else {
        let Some(&t) = o.len_tie.get(&(i, j)) else {
            return n;
        };
        if let Some(&k) = drawn.get(&t) {
            return k;
        }
        tie = Some(t);
        if let Some(&(a, b)) = o.word_len.get(&(i, j)) {
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    let floor = facts
        .free
        .range(1..=n as i128)
        .next_back()
        .map_or(0, |&v| v as usize);
    let k = int_in(rng, lo.max(floor) as i128, hi as i128) as usize;
    if let Some(t) = tie {
        drawn.insert(t, k);
    }
    k
}

/// What [`word_length`] consults about a sample's integers, gathered once per generated input
/// (so a sample of many words costs time linear in its size).
struct LengthFacts {
    /// Each integer value and the first line it appears on.
    first_line: BTreeMap<i128, usize>,
    /// The values of the free (not structural) integers.
    free: BTreeSet<i128>,
}

fn length_facts(s: &Sample, fixed: &BTreeSet<(usize, usize)>) -> LengthFacts {
    let mut facts = LengthFacts {
        first_line: BTreeMap::new(),
        free: BTreeSet::new(),
    };
    for (i, l) in s.lines.iter().enumerate() {
        for (k, f) in l.iter().enumerate() {
            if let Field::Int(v) = f {
                facts.first_line.entry(*v).or_insert(i);
                if !fixed.contains(&(i, k)) {
                    facts.free.insert(*v);
                }
            }
        }
    }
    facts
}

/// What [`perturb`] reads of one sample that does not change between the inputs drawn from it:
/// its structural fields and its length facts, computed once per sample.
struct SampleFacts {
    fixed: BTreeSet<(usize, usize)>,
    lengths: LengthFacts,
    /// Runs (by first line; a single line is a run of its own) other than records whose
    /// values are mostly values of earlier lines: called numbers of a bingo card, values
    /// looked up in the array given before them.
    refers: BTreeSet<usize>,
    grids: Vec<Grid>,
}

impl SampleFacts {
    fn of(s: &Sample) -> SampleFacts {
        let fixed = structural(s);
        let lengths = length_facts(s, &fixed);
        let refers = referring_runs(s, &fixed);
        let grids = grids(s)
            .into_iter()
            .map(|lines| Grid {
                lines,
                counts: char_counts(s, lines),
            })
            .collect();
        SampleFacts {
            fixed,
            lengths,
            refers,
            grids,
        }
    }
}

/// The free integers of line `i` of `s`.
fn free_ints<'a>(
    s: &'a Sample,
    fixed: &'a BTreeSet<(usize, usize)>,
    i: usize,
) -> impl Iterator<Item = i128> + 'a {
    s.lines[i]
        .iter()
        .enumerate()
        .filter_map(move |(j, f)| match f {
            Field::Int(v) if !fixed.contains(&(i, j)) => Some(*v),
            _ => None,
        })
}

/// See [`SampleFacts::refers`]: at least two values, at least half of them among the free
/// integers of the lines before the run. Linear in the sample (one pass, one set).
fn referring_runs(s: &Sample, fixed: &BTreeSet<(usize, usize)>) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut before: BTreeSet<i128> = BTreeSet::new();
    let mut i = 0;
    while i < s.lines.len() {
        let (start, end) = run_of(s, i);
        let end = end.max(i);
        if !s.records.contains(&start) && !before.is_empty() {
            let (mut values, mut hits) = (0, 0);
            for k in i..=end {
                for v in free_ints(s, fixed, k) {
                    values += 1;
                    hits += usize::from(before.contains(&v));
                }
            }
            if values >= 2 && 2 * hits >= values {
                out.insert(start);
            }
        }
        for k in i..=end {
            before.extend(free_ints(s, fixed, k));
        }
        i = end + 1;
    }
    out
}

fn perturb(s: &Sample, sf: &SampleFacts, o: &Observed, rng: &mut ChaCha8Rng) -> String {
    let fixed = &sf.fixed;
    // Half the inputs draw uniformly, a quarter from the low and a quarter from the high end.
    let skew = match below(rng, 4) {
        0 => 1,
        1 => 2,
        _ => 0,
    };
    // One input in eight writes its words from one or two letters of their alphabets, the
    // same letters wherever two places share an alphabet (`S` and `T`): repeated and
    // overlapping patterns (`aa` in `aaa`, an all-equal string) that uniform letters from a
    // large alphabet almost never make.
    let narrow = (below(rng, 8) == 0).then(|| Narrow {
        letters: 1 + below(rng, 3).min(1) as usize,
        seed: rng.next_u64(),
    });
    // One input in four is made of ties: the free integers of a line (distinct in the sample
    // or not, a permutation aside) take two or three values of their range, and a column of
    // a run of same-shaped lines repeats an earlier line's value half the time. Equal values (`5 5`, a
    // query of a value inserted before) are where wrong answers about ties, duplicates and
    // `<` for `<=` show; distinct draws from a range of thousands never make them.
    let ties = below(rng, 4) == 0;
    let mut run_values: BTreeMap<(usize, usize), Vec<i128>> = BTreeMap::new();
    let mut out: Vec<Vec<String>> = Vec::with_capacity(s.lines.len());
    // The free integers drawn so far, in line order, and where each line's begin: a run that
    // refers to earlier values ([`SampleFacts::refers`]) takes half of its values from them,
    // each at most once per run.
    let mut drawn_ints: Vec<i128> = Vec::new();
    let mut ints_before: Vec<usize> = Vec::with_capacity(s.lines.len());
    let mut referred: BTreeMap<usize, BTreeSet<i128>> = BTreeMap::new();
    let mut drawn = BTreeMap::new();
    let facts = &sf.lengths;
    // The words drawn so far per run column, for repeats and distinctness.
    let mut words_drawn: BTreeMap<(usize, usize), DrawnWords> = BTreeMap::new();
    for (i, line) in s.lines.iter().enumerate() {
        let free: Vec<usize> = line
            .iter()
            .enumerate()
            .filter(|(j, f)| matches!(f, Field::Int(_)) && !fixed.contains(&(i, *j)))
            .map(|(j, _)| j)
            .collect();
        let ints: Vec<i128> = free_ints(s, fixed, i).collect();
        let mut new_ints: Vec<i128> = Vec::new();
        // Drawn value by value from a range (not a permutation, distinct values or a record).
        let mut free_draw = false;
        // Whether the line may take ties across its run (not a permutation, not a strictly
        // increasing line of three values or more).
        let increasing = ints.len() >= 3 && ints.windows(2).all(|w| w[0] < w[1]);
        let mut may_tie = !increasing;
        if ints.len() >= 2 {
            let mut sorted = ints.clone();
            sorted.sort_unstable();
            let k = ints.len() as i128;
            let permutation = sorted.iter().enumerate().all(|(x, v)| *v == x as i128 + 1);
            let distinct = sorted.windows(2).all(|w| w[0] != w[1]);
            let (start, end) = run_of(s, i);
            let record = end > start && s.records.contains(&start);
            // A record that happens to hold `1..=k` (`2 3 1`, an edge `1 2`) is no permutation.
            if permutation && !record && !o.not_permutation.contains(&i) {
                may_tie = false;
                new_ints = (1..=k).collect();
                shuffle(&mut new_ints, rng);
            } else if record {
                // A line of a run of records (`p x` queries, `l r` bounds): each column from
                // its own range (an index and an amount are not drawn alike).
                new_ints = free
                    .iter()
                    .map(|&j| {
                        let (lo, hi) = int_range(s, line, i, j, fixed, o, true);
                        skewed(rng, lo, hi, skew)
                    })
                    .collect();
            } else if ties && !increasing {
                // (A strictly increasing line stays so: `x_1 < x_2 < ...` is a common rule.)
                let (lo, hi) = free
                    .iter()
                    .map(|&j| int_range(s, line, i, j, fixed, o, false))
                    .fold((i128::MAX, i128::MIN), |(a, b), (x, y)| {
                        (a.min(x), b.max(y))
                    });
                let pool: Vec<i128> = (0..2 + below(rng, 2))
                    .map(|_| skewed(rng, lo, hi, skew))
                    .collect();
                new_ints = (0..ints.len())
                    .map(|_| pool[below(rng, pool.len() as u64) as usize])
                    .collect();
                free_draw = true;
            } else {
                let (lo, hi) = free
                    .iter()
                    .map(|&j| int_range(s, line, i, j, fixed, o, false))
                    .fold((i128::MAX, i128::MIN), |(a, b), (x, y)| {
                        (a.min(x), b.max(y))
                    });
                let span = hi - lo + 1;
                if distinct && span >= k {
                    // A skewed input draws from one end when that end holds enough values.
                    let quarter = (hi - lo) / 4;
                    let (lo, hi) = match skew {
                        1 if quarter + 1 >= k => (lo, lo + quarter),
                        2 if quarter + 1 >= k => (hi - quarter, hi),
                        _ => (lo, hi),
                    };
                    let mut seen = BTreeSet::new();
                    let mut guard = 0;
                    while (seen.len() as i128) < k && guard < 10_000 {
                        seen.insert(wide(rng, lo, hi));
                        guard += 1;
                    }
                    if (seen.len() as i128) == k {
                        new_ints = seen.into_iter().collect();
                        shuffle(&mut new_ints, rng);
                    } else {
                        new_ints = ints.clone();
                    }
                } else if distinct {
                    new_ints = ints.clone();
                } else {
                    new_ints = (0..ints.len()).map(|_| skewed(rng, lo, hi, skew)).collect();
                    free_draw = true;
                }
            }
        } else if let [j] = free.as_slice() {
            let (lo, hi) = int_range(s, line, i, *j, fixed, o, false);
            new_ints.push(skewed(rng, lo, hi, skew));
            free_draw = true;
        }
        // Ties across a run of same-shaped lines (queries, records): a column repeats an
        // earlier line's value half the time.
        let (start, end) = run_of(s, i);
        if ties
            && may_tie
            && end > start
            && new_ints.len() == free.len()
            && !sf.refers.contains(&start)
        {
            for (v, &j) in new_ints.iter_mut().zip(&free) {
                let earlier = run_values.entry((start, j)).or_default();
                if !earlier.is_empty() && below(rng, 2) == 0 {
                    *v = earlier[below(rng, earlier.len() as u64) as usize];
                }
                earlier.push(*v);
            }
        }
        ints_before.push(drawn_ints.len());
        if free_draw && sf.refers.contains(&start) {
            let earlier = &drawn_ints[..ints_before[start]];
            let used = referred.entry(start).or_default();
            for v in new_ints.iter_mut() {
                if earlier.is_empty() || below(rng, 2) == 0 {
                    continue;
                }
                for _ in 0..8 {
                    let pick = earlier[below(rng, earlier.len() as u64) as usize];
                    if used.insert(pick) {
                        *v = pick;
                        break;
                    }
                }
            }
        }
        drawn_ints.extend(new_ints.iter().copied());
        let mut next_int = new_ints.into_iter();
        let mut row = Vec::with_capacity(line.len());
        for (j, f) in line.iter().enumerate() {
            row.push(match f {
                Field::Int(v) if fixed.contains(&(i, j)) => v.to_string(),
                Field::Int(v) => next_int.next().unwrap_or(*v).to_string(),
                Field::Dec(v, places) => {
                    let (lo, hi) = o.dec_range.get(&(i, j)).copied().unwrap_or((*v, *v));
                    let (lo, hi) = if lo == hi && lo > 0.0 {
                        (0.0, hi)
                    } else {
                        (lo, hi)
                    };
                    let x = if hi > lo {
                        lo + (hi - lo) * unit(rng)
                    } else {
                        lo
                    };
                    format!("{x:.places$}")
                }
                Field::Word(w) => {
                    let alphabet = word_alphabet(s, o, i, j);
                    if alphabet.len() < 2 || w.chars().any(|c| c.is_whitespace()) {
                        w.clone()
                    } else {
                        let n = word_length(s, o, facts, (i, j), w, &mut drawn, rng);
                        let key = (run_of(s, i).0, j);
                        let few = narrow
                            .as_ref()
                            .filter(|_| alphabet.len() >= 3)
                            .map(|x| x.of(&alphabet));
                        // A column whose words must stay different redraws a narrow word
                        // (up to 32 times) while it repeats one, then draws as usual: `aab`
                        // and `abb` (one letter set, two multisets) are as much a pair of
                        // distinct words as `listen` and `abc`.
                        let distinct = s.run_word_distinct.contains(&key);
                        let narrow_word = few.and_then(|few| {
                            (0..if distinct { 32 } else { 1 }).find_map(|_| {
                                let w: String = (0..n)
                                    .map(|_| few[below(rng, few.len() as u64) as usize])
                                    .collect();
                                let repeats = distinct
                                    && words_drawn.get(&key).is_some_and(|e| e.all.contains(&w));
                                (!repeats).then_some(w)
                            })
                        });
                        let new = match narrow_word {
                            Some(w) => w,
                            None => new_word(s, o, (i, j), key, n, &alphabet, &words_drawn, rng),
                        };
                        words_drawn.entry(key).or_default().add(&new);
                        new
                    }
                }
            });
        }
        out.push(row);
    }
    keep_distinct_columns(s, o, fixed, ties, &mut out, rng);
    keep_unique_chars(s, sf, o, &mut out, rng);
    for (i, row) in out.iter_mut().enumerate() {
        keep_order(&line_order(s, o, i, fixed), row);
    }
    keep_graphs(s, fixed, o.general_graphs, &mut out, rng);
    render(&out, s.trailing_newline)
}

/// A new word of `n` characters at (line `i`, column `j`) of run column `key`: a third of the
/// time spliced from pieces of the words the samples show there (`dream` + `erase` from
/// `dreamerase`: words made of the sample's parts reach the cases random letters miss),
/// otherwise random letters of `alphabet` (which holds every character of those pieces). Where
/// the sample repeats a word along the run, a third of the new words repeat an earlier word of
/// the same length; where its words are all different, a new word is redrawn (up to 32 times)
/// while it repeats one.
#[allow(clippy::too_many_arguments)]
fn new_word(
    s: &Sample,
    o: &Observed,
    (i, j): (usize, usize),
    key: (usize, usize),
    n: usize,
    alphabet: &[char],
    words_drawn: &BTreeMap<(usize, usize), DrawnWords>,
    rng: &mut ChaCha8Rng,
) -> String {
    let earlier = words_drawn.get(&key);
    if s.run_word_repeats.contains(&key) && below(rng, 3) == 0 {
        if let Some(same) = earlier.and_then(|e| e.by_length.get(&n)) {
            return same[below(rng, same.len() as u64) as usize].clone();
        }
    }
    let empty: &[String] = &[];
    let pool = (
        s.run_words.get(&key).map_or(empty, |v| v.as_slice()),
        o.words.get(&(i, j)).map_or(empty, |v| v.as_slice()),
    );
    let distinct = s.run_word_distinct.contains(&key);
    let mut word = String::new();
    for _ in 0..if distinct { 32 } else { 1 } {
        word = if pool.0.len() + pool.1.len() > 0 && below(rng, 3) == 0 {
            splice(pool, n, rng)
        } else {
            (0..n)
                .map(|_| alphabet[below(rng, alphabet.len() as u64) as usize])
                .collect()
        };
        if !distinct || !earlier.is_some_and(|e| e.all.contains(&word)) {
            break;
        }
    }
    word
}

/// The few letters the words of one input are written with ([`perturb`]): of each place's
/// alphabet, the `letters` that rank first in an order fixed by `seed`, so places with one
/// alphabet get the same letters.
struct Narrow {
    letters: usize,
    seed: u64,
}

impl Narrow {
    fn of(&self, alphabet: &[char]) -> Vec<char> {
        let rank = |c: &char| {
            // splitmix64 of the seed and the letter: an order of the letters per input.
            let mut z = self.seed ^ (u64::from(*c)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut v = alphabet.to_vec();
        v.sort_by_key(rank);
        v.truncate(self.letters);
        v
    }
}

/// The words drawn so far along one run column: by length (for repeats) and as a set (for
/// distinctness).
#[derive(Default)]
struct DrawnWords {
    by_length: BTreeMap<usize, Vec<String>>,
    all: BTreeSet<String>,
}

impl DrawnWords {
    fn add(&mut self, w: &str) {
        if self.all.insert(w.to_string()) {
            self.by_length
                .entry(w.chars().count())
                .or_default()
                .push(w.to_string());
        }
    }
}

/// `n` characters made of pieces (substrings) of the words of the two pools (each word at
/// most [`POOL_CHARS`] characters, so a piece costs at most that much).
fn splice(pool: (&[String], &[String]), n: usize, rng: &mut ChaCha8Rng) -> String {
    let count = (pool.0.len() + pool.1.len()) as u64;
    let mut out = String::with_capacity(n);
    let mut len = 0;
    let mut guard = 0;
    while len < n && guard < 4 * n + 16 {
        guard += 1;
        let k = below(rng, count) as usize;
        let w: Vec<char> = pool
            .0
            .get(k)
            .or_else(|| pool.1.get(k - pool.0.len()))
            .map(|w| w.chars().collect())
            .unwrap_or_default();
        if w.is_empty() {
            continue;
        }
        let start = below(rng, w.len() as u64) as usize;
        let most = (w.len() - start).min(n - len);
        let take = 1 + below(rng, most as u64) as usize;
        out.extend(&w[start..start + take]);
        len += take;
    }
    out
}

/// A column of a run of three or more same-shaped lines whose sample values are all different
/// (the years of ABC113 C, ids) stays all different: redrawn where a draw repeats one.
/// Equal values there are often outside the problem's guarantees, and two right answers may
/// differ on them. Not in an input made of `ties` for a run whose lines are of several kinds
/// ([`Sample::kinds`]): asking for a value inserted before is what such queries are for.
fn keep_distinct_columns(
    s: &Sample,
    o: &Observed,
    fixed: &BTreeSet<(usize, usize)>,
    ties: bool,
    out: &mut [Vec<String>],
    rng: &mut ChaCha8Rng,
) {
    let runs: BTreeSet<(usize, usize)> = s.runs.iter().copied().collect();
    for (start, end) in runs {
        if end < start + 2 || !s.records.contains(&start) || (ties && s.kinds.contains(&start)) {
            continue;
        }
        for j in 0..s.lines[start].len() {
            let column: Option<Vec<i128>> = (start..=end)
                .map(|i| match s.lines[i].get(j) {
                    Some(Field::Int(v)) if !fixed.contains(&(i, j)) => Some(*v),
                    _ => None,
                })
                .collect();
            let Some(column) = column else { continue };
            if column.iter().collect::<BTreeSet<_>>().len() != column.len() {
                continue;
            }
            let (lo, hi) = int_range(s, &s.lines[start], start, j, fixed, o, true);
            if hi - lo + 1 < column.len() as i128 {
                continue;
            }
            let mut used: BTreeSet<i128> = BTreeSet::new();
            for row in out[start..=end].iter_mut() {
                let Some(v) = row.get(j).and_then(|t| t.parse::<i128>().ok()) else {
                    continue;
                };
                let mut v = v;
                let mut guard = 0;
                while used.contains(&v) && guard < 1000 {
                    v = int_in(rng, lo, hi);
                    guard += 1;
                }
                used.insert(v);
                row[j] = v.to_string();
            }
        }
    }
}

/// A character every sample grid holds once ([`Observed::unique_chars`]: a maze's `S` and
/// `G`) is held once by each generated grid: where the random cells hold it elsewhere, those
/// cells take one of the grid's other characters, and it goes to its sample cell or (half the
/// time) to a random cell that no other such character holds.
fn keep_unique_chars(
    s: &Sample,
    sf: &SampleFacts,
    o: &Observed,
    out: &mut [Vec<String>],
    rng: &mut ChaCha8Rng,
) {
    if o.unique_chars.is_empty() {
        return;
    }
    for grid in &sf.grids {
        let (start, end) = grid.lines;
        let fillers: Vec<char> = grid
            .counts
            .keys()
            .copied()
            .filter(|c| !o.unique_chars.contains(c))
            .collect();
        if fillers.is_empty() {
            continue;
        }
        let mut rows: Vec<Vec<char>> = out[start..=end]
            .iter()
            .map(|r| r.first().map_or(Vec::new(), |w| w.chars().collect()))
            .collect();
        let width = rows.iter().map(Vec::len).min().unwrap_or(0);
        if width == 0 {
            continue;
        }
        for row in rows.iter_mut() {
            for c in row.iter_mut() {
                if o.unique_chars.contains(c) {
                    *c = fillers[below(rng, fillers.len() as u64) as usize];
                }
            }
        }
        let mut placed: BTreeSet<(usize, usize)> = BTreeSet::new();
        for &u in &o.unique_chars {
            let home =
                s.lines[start..=end]
                    .iter()
                    .enumerate()
                    .find_map(|(r, l)| match l.as_slice() {
                        [Field::Word(w)] => w.chars().position(|c| c == u).map(|k| (r, k)),
                        _ => None,
                    });
            let Some(home) = home else { continue };
            let mut cell = home;
            if below(rng, 2) == 0 || placed.contains(&home) {
                for _ in 0..32 {
                    let r = below(rng, rows.len() as u64) as usize;
                    let k = below(rng, width as u64) as usize;
                    if !placed.contains(&(r, k)) {
                        cell = (r, k);
                        break;
                    }
                }
            }
            if placed.insert(cell) && cell.1 < rows[cell.0].len() {
                rows[cell.0][cell.1] = u;
            }
        }
        for (row, chars) in out[start..=end].iter_mut().zip(rows) {
            if let Some(w) = row.first_mut() {
                *w = chars.into_iter().collect();
            }
        }
    }
}

/// The order a generated line keeps, as its sample line (or run) shows it.
#[derive(Debug, PartialEq)]
enum Order {
    /// Columns `(j, k)` with `v[j] <= v[k]` on every line of a run of records (`l r` queries,
    /// `a b c d` with `a < b`), and some line where they differ: equal values (`3 3`,
    /// `999999 999999`) show no order to keep.
    Pairs(Vec<(usize, usize)>),
    /// A list of values written in order: its free columns, kept ascending (`false`) or
    /// descending (`true`).
    Sorted(Vec<usize>, bool),
    None,
}

/// Pairs of columns `(j, k)` with `v[j] <= v[k]` on every line of lines `start..=end`, and
/// some line where they differ.
fn column_orders(s: &Sample, start: usize, end: usize) -> Orders {
    let width = s.lines[start].len();
    let column = |j: usize| -> Option<Vec<i128>> {
        (start..=end)
            .map(|k| match s.lines[k].get(j) {
                Some(Field::Int(v)) => Some(*v),
                _ => None,
            })
            .collect()
    };
    let columns: Vec<Option<Vec<i128>>> = (0..width).map(column).collect();
    let mut pairs = BTreeSet::new();
    for j in 0..width {
        for k in j + 1..width {
            let (Some(a), Some(b)) = (&columns[j], &columns[k]) else {
                continue;
            };
            let le = a.iter().zip(b).all(|(x, y)| x <= y);
            let ge = a.iter().zip(b).all(|(x, y)| x >= y);
            match (le, ge) {
                (true, false) => {
                    pairs.insert((j, k));
                }
                (false, true) => {
                    pairs.insert((k, j));
                }
                _ => {}
            }
        }
    }
    pairs
}

/// The order line `i` keeps: per pair of columns in a run of records, the orders every
/// sample's run of that width at that line shows (`Observed::run_pairs`); else the line's free
/// integers, ascending or descending as the line itself shows them, unless they are a
/// permutation of `1..=k` (drawn as a random permutation); else, for a line that shows no
/// order of its own (`1 1`, `3 9 2`), the pairs of columns every sample orders alike there
/// (`Observed::line_le`: `a b` is `4 7`, `4 9` and `1 1` in three samples, so `a <= b`).
fn line_order(s: &Sample, o: &Observed, i: usize, fixed: &BTreeSet<(usize, usize)>) -> Order {
    let (start, end) = run_of(s, i);
    let line = &s.lines[i];
    let free: Vec<(usize, i128)> = line
        .iter()
        .enumerate()
        .filter_map(|(j, f)| match f {
            Field::Int(v) if !fixed.contains(&(i, j)) => Some((j, *v)),
            _ => None,
        })
        .collect();
    if free.len() < 2 {
        return Order::None;
    }
    if end > start && s.records.contains(&start) {
        let width = line.len();
        let Some((pairs, lines)) = o.run_pairs.get(&(start, width)) else {
            return Order::None;
        };
        // Two lines of three or more values show many orders by chance: then only a whole
        // line in order (`1 2 5`, `2 3 7`) counts.
        let chain = |up: bool| {
            (0..width - 1).all(|j| pairs.contains(&if up { (j, j + 1) } else { (j + 1, j) }))
        };
        // Except two index columns (positive, up to a count before the run: `l r` of
        // `l r v` updates): an order kept by chance costs variety, `l > r` is outside the
        // problem.
        let count = counts_before(s, fixed, start).max();
        let index = |j: usize| {
            s.run_ints
                .get(&(start, j))
                .is_some_and(|&(lo, hi)| lo >= 1 && count.is_some_and(|n| hi <= n))
        };
        let by_chance = width > 2 && *lines < 3 && !chain(true) && !chain(false);
        let is_free = |j: usize| free.iter().any(|f| f.0 == j);
        let pairs: Vec<(usize, usize)> = pairs
            .iter()
            .copied()
            .filter(|&(j, k)| is_free(j) && is_free(k) && (!by_chance || (index(j) && index(k))))
            .collect();
        return if pairs.is_empty() {
            Order::None
        } else {
            Order::Pairs(pairs)
        };
    }
    let ints: Vec<i128> = free.iter().map(|f| f.1).collect();
    let mut values = ints.clone();
    values.sort_unstable();
    if values.iter().enumerate().all(|(x, v)| *v == x as i128 + 1) {
        return Order::None;
    }
    // A list of two values whose length a count before it gives (`2` then `3 8`) is in order
    // by chance half the time: it keeps none (a list of three or more in order keeps it).
    let counted = i > 0
        && fixed.iter().any(|&(li, k)| {
            li + 1 == i
                && matches!(s.lines[li].get(k), Some(Field::Int(v)) if *v == line.len() as i128)
        });
    if counted && ints.len() == 2 {
        return Order::None;
    }
    let asc = ints.windows(2).all(|w| w[0] <= w[1]);
    let desc = ints.windows(2).all(|w| w[0] >= w[1]);
    let columns: Vec<usize> = free.iter().map(|f| f.0).collect();
    // A line in order in this sample but not in another sample's line at its place (`7 9 10`
    // beside `6 6 2` and `1 10 3`) is in order by chance: only the pairs every sample keeps
    // hold.
    let everywhere = |up: bool| {
        o.line_le.get(&(i, line.len())).is_none_or(|le| {
            columns
                .windows(2)
                .all(|w| le.contains(&if up { (w[0], w[1]) } else { (w[1], w[0]) }))
        })
    };
    match (asc && everywhere(true), desc && everywhere(false)) {
        (true, false) => Order::Sorted(columns, false),
        (false, true) => Order::Sorted(columns, true),
        _ => {
            let Some(le) = o.line_le.get(&(i, line.len())) else {
                return Order::None;
            };
            let is_free = |j: usize| free.iter().any(|f| f.0 == j);
            let pairs: Vec<(usize, usize)> = le
                .iter()
                .copied()
                .filter(|&(j, k)| !le.contains(&(k, j)) && is_free(j) && is_free(k))
                .collect();
            if pairs.is_empty() {
                Order::None
            } else {
                Order::Pairs(pairs)
            }
        }
    }
}

/// Puts a generated row back in the order its sample line keeps (after every redraw).
fn keep_order(order: &Order, row: &mut [String]) {
    let value = |row: &[String], j: usize| row.get(j).and_then(|t| t.parse::<i128>().ok());
    match order {
        Order::None => {}
        Order::Sorted(columns, descending) => {
            let Some(mut v) = columns
                .iter()
                .map(|&j| value(row, j))
                .collect::<Option<Vec<i128>>>()
            else {
                return;
            };
            v.sort_unstable();
            if *descending {
                v.reverse();
            }
            for (&j, x) in columns.iter().zip(v) {
                row[j] = x.to_string();
            }
        }
        Order::Pairs(pairs) => {
            // Swaps until every pair holds: the pairs come from lines that satisfy them all,
            // so they admit an order; the bound only guards against a malformed row.
            for _ in 0..=pairs.len() * pairs.len() {
                let mut swapped = false;
                for &(j, k) in pairs {
                    if let (Some(a), Some(b)) = (value(row, j), value(row, k)) {
                        if a > b {
                            row.swap(j, k);
                            swapped = true;
                        }
                    }
                }
                if !swapped {
                    break;
                }
            }
        }
    }
}

/// Runs of two or more lines of two free positive integers (`u v` edges, `l r` queries):
/// (first line, last line).
fn pair_runs(s: &Sample, fixed: &BTreeSet<(usize, usize)>) -> Vec<(usize, usize)> {
    let pair = |i: usize| {
        let l = &s.lines[i];
        l.len() == 2
            && (0..2).all(|j| matches!(l[j], Field::Int(v) if v >= 1) && !fixed.contains(&(i, j)))
    };
    let mut runs = Vec::new();
    let mut i = 1;
    while i < s.lines.len() {
        if pair(i) {
            let start = i;
            while i + 1 < s.lines.len() && pair(i + 1) {
                i += 1;
            }
            if i > start {
                runs.push((start, i));
            }
        }
        i += 1;
    }
    runs
}

fn pair_of(l: &[Field]) -> (i128, i128) {
    match (&l[0], &l[1]) {
        (Field::Int(a), Field::Int(b)) => (*a, *b),
        _ => (0, 0),
    }
}

/// Whether `edges` join the nodes `1..=n` into one tree.
fn is_tree(edges: &[(i128, i128)], n: i128) -> bool {
    if n < 2 || edges.len() as i128 != n - 1 {
        return false;
    }
    let mut parent: Vec<usize> = (0..=n as usize).collect();
    edges.iter().all(|&(a, b)| {
        if a < 1 || b < 1 || a > n || b > n {
            return false;
        }
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        parent[ra] = rb;
        ra != rb
    })
}

/// The root of `x` in a union-find forest (path halving).
fn root(p: &mut [usize], mut x: usize) -> usize {
    while p[x] != x {
        p[x] = p[p[x]];
        x = p[x];
    }
    x
}

/// Whether `edges` connect every node of `1..=n` (and name no other node).
fn connected(edges: &[(i128, i128)], n: i128) -> bool {
    if n < 1 || edges.iter().any(|&(a, b)| a < 1 || b < 1 || a > n || b > n) {
        return false;
    }
    let mut parent: Vec<usize> = (0..=n as usize).collect();
    let mut parts = n;
    for &(a, b) in edges {
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        if ra != rb {
            parent[ra] = rb;
            parts -= 1;
        }
    }
    parts == 1
}

/// Whether `edges`, read as directed `a -> b` over `1..=n`, have no directed cycle though
/// they close an undirected one (`1 2`, `1 3`, `3 2`): the mark of a DAG, which a forest
/// (acyclic either way) does not show.
fn dag_not_forest(edges: &[(i128, i128)], n: i128) -> bool {
    if n < 1 || edges.iter().any(|&(a, b)| a < 1 || b < 1 || a > n || b > n) {
        return false;
    }
    if !closes_cycle(edges, n) {
        return false;
    }
    let n = n as usize;
    let mut indegree = vec![0usize; n + 1];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for &(a, b) in edges {
        let (a, b) = (a as usize, b as usize);
        out[a].push(b);
        indegree[b] += 1;
    }
    // Kahn: every node leaves the queue iff there is no directed cycle.
    let mut queue: Vec<usize> = (1..=n).filter(|&v| indegree[v] == 0).collect();
    let mut seen = 0;
    while let Some(v) = queue.pop() {
        seen += 1;
        for &w in &out[v] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push(w);
            }
        }
    }
    seen == n
}

/// Whether `edges` (undirected) close a cycle: some edge joins two nodes that the edges
/// before it already connect. False when an edge names a node outside `1..=n`.
fn closes_cycle(edges: &[(i128, i128)], n: i128) -> bool {
    if edges.iter().any(|&(a, b)| a < 1 || b < 1 || a > n || b > n) {
        return false;
    }
    let mut parent: Vec<usize> = (0..=n as usize).collect();
    edges.iter().any(|&(a, b)| {
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        parent[ra] = rb;
        ra == rb
    })
}

/// Whether `edges` name no self-loop and no edge twice (in either direction).
fn is_simple(edges: &[(i128, i128)]) -> bool {
    let mut seen = BTreeSet::new();
    edges
        .iter()
        .all(|&(a, b)| a != b && seen.insert((a.min(b), a.max(b))))
}

/// The structural integers (counts) of the lines before line `start`.
fn counts_before<'a>(
    s: &'a Sample,
    fixed: &'a BTreeSet<(usize, usize)>,
    start: usize,
) -> impl Iterator<Item = i128> + 'a {
    fixed
        .iter()
        .filter(move |(li, _)| *li < start)
        .filter_map(|&(li, k)| match s.lines[li].get(k) {
            Some(Field::Int(v)) => Some(*v),
            _ => None,
        })
}

/// The largest node id of a run of pairs.
fn n_of(edges: &[(i128, i128)]) -> i128 {
    edges.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0)
}

/// A random tree over `1..=n`, as `n - 1` pairs in random order: node k (in a random
/// labelling) hangs off one of the nodes before it. `ascending`: each pair written smaller
/// first (as the sample wrote them), else in a random orientation.
fn random_tree(n: i128, ascending: bool, rng: &mut ChaCha8Rng) -> Vec<(i128, i128)> {
    let mut label: Vec<i128> = (1..=n).collect();
    shuffle(&mut label, rng);
    let mut tree: Vec<(i128, i128)> = (1..n.max(1) as usize)
        .map(|k| {
            let p = below(rng, k as u64) as usize;
            let (a, b) = (label[p], label[k]);
            if ascending || below(rng, 2) == 0 {
                (a.min(b), a.max(b))
            } else {
                (a.max(b), a.min(b))
            }
        })
        .collect();
    shuffle(&mut tree, rng);
    tree
}

/// `m` distinct edges over `1..=n` without self-loops, drawn at random (`m` at most
/// `n (n - 1) / 2`; fewer when the draws run out, which the callers' bounds make rare).
fn random_simple_graph(
    n: i128,
    m: usize,
    ascending: bool,
    rng: &mut ChaCha8Rng,
) -> Vec<(i128, i128)> {
    let mut seen = BTreeSet::new();
    let mut edges = Vec::with_capacity(m);
    let mut guard = 0;
    while edges.len() < m && guard < 64 * (m + 1) && n >= 2 {
        guard += 1;
        let a = int_in(rng, 1, n);
        let b = int_in(rng, 1, n);
        if a == b || !seen.insert((a.min(b), a.max(b))) {
            continue;
        }
        edges.push(if ascending || below(rng, 2) == 0 {
            (a.min(b), a.max(b))
        } else {
            (a.max(b), a.min(b))
        });
    }
    edges
}

/// See [`Observed::general_graphs`]: a run of pairs whose edge count and largest node a count
/// before it give (`5 2`, then `1 2`, `4 5`), a simple graph, not connected.
fn forest_or_not(s: &Sample, fixed: &BTreeSet<(usize, usize)>) -> bool {
    pair_runs(s, fixed).into_iter().any(|(start, end)| {
        let edges: Vec<(i128, i128)> = (start..=end).map(|i| pair_of(&s.lines[i])).collect();
        let n = n_of(&edges);
        let counted = counts_before(s, fixed, start).any(|m| m == edges.len() as i128)
            && counts_before(s, fixed, start).any(|v| v >= n);
        counted && is_simple(&edges) && !connected(&edges, n)
    })
}

/// Graphs stay graphs of the sample's kind. A run of pairs that is a tree over `1..=n` in the
/// sample (`n - 1` edges joining every node) becomes another random tree over `1..=n` (or,
/// when some sample's graph is not connected, a random simple graph of as many edges); a run
/// without self-loops or repeated pairs gets none (a line that would make one keeps the
/// sample's pair). Two right answers for trees may differ on a graph with a cycle, which the
/// problem never gives them.
fn keep_graphs(
    s: &Sample,
    fixed: &BTreeSet<(usize, usize)>,
    general_graphs: bool,
    out: &mut [Vec<String>],
    rng: &mut ChaCha8Rng,
) {
    for (start, end) in pair_runs(s, fixed) {
        let edges: Vec<(i128, i128)> = (start..=end).map(|i| pair_of(&s.lines[i])).collect();
        // `n q`, then `n - 1` edges, then `q` queries of the same shape (`p x`): the run
        // starts with a tree over `1..=n` for a count `n` of an earlier line.
        let tree_prefix = counts_before(s, fixed, start).find(|&n| {
            n >= 2 && (n as usize) <= edges.len() && is_tree(&edges[..n as usize - 1], n)
        });
        // Unless the whole run is a simple graph whose edge count a count before it gives
        // (`3 3`, then the triangle `1 2`, `1 3`, `2 3`: its first two edges are a tree by
        // chance, and the third is no query).
        let counted_graph =
            is_simple(&edges) && counts_before(s, fixed, start).any(|m| m == edges.len() as i128);
        let tree_prefix = tree_prefix.filter(|_| !counted_graph);
        if let (Some(n), false) = (tree_prefix, is_tree(&edges, n_of(&edges))) {
            let m = n as usize - 1;
            let ascending = edges[..m].iter().all(|(a, b)| a < b);
            let tree = random_tree(n, ascending, rng);
            for (row, (a, b)) in out[start..start + m].iter_mut().zip(tree) {
                *row = vec![a.to_string(), b.to_string()];
            }
            continue;
        }
        let ascending = edges.iter().all(|(a, b)| a < b);
        let n = n_of(&edges);
        // Node ids, not values: at most a few per line (a query's `1 1000000000` is no graph).
        if n > 4 * (edges.len() as i128 + 1) {
            continue;
        }
        let orient = |a: i128, b: i128, rng: &mut ChaCha8Rng| {
            if ascending {
                (a.min(b), a.max(b))
            } else if below(rng, 2) == 0 {
                (a, b)
            } else {
                (b, a)
            }
        };
        if is_tree(&edges, n) {
            let graph = if general_graphs {
                random_simple_graph(n, edges.len(), ascending, rng)
            } else {
                random_tree(n, ascending, rng)
            };
            for (row, (a, b)) in out[start..=end].iter_mut().zip(graph) {
                *row = vec![a.to_string(), b.to_string()];
            }
            continue;
        }
        if !is_simple(&edges) {
            continue;
        }
        let generated: Option<Vec<(i128, i128)>> = out[start..=end]
            .iter()
            .map(|row| match row.as_slice() {
                [a, b] => Some((a.parse().ok()?, b.parse().ok()?)),
                _ => None,
            })
            .collect();
        // A connected sample graph stays connected (`n m` and a connected graph: node 1
        // left out is outside the problem).
        let must_connect = connected(&edges, n);
        let still_simple =
            generated.is_some_and(|g| is_simple(&g) && (!must_connect || connected(&g, n)));
        if !still_simple {
            // The sample's graph under a random relabelling of its nodes.
            let mut label: Vec<i128> = (1..=n).collect();
            shuffle(&mut label, rng);
            for (row, &(a, b)) in out[start..=end].iter_mut().zip(&edges) {
                let (a, b) = (label[a as usize - 1], label[b as usize - 1]);
                let (a, b) = orient(a, b, rng);
                *row = vec![a.to_string(), b.to_string()];
            }
        }
        // A DAG stays a DAG: its edges point along a random order of the nodes (a cycle is
        // outside the problem, and a program that walks it may never stop).
        if !ascending && dag_not_forest(&edges, n) {
            let mut rank: Vec<usize> = (0..n as usize).collect();
            shuffle(&mut rank, rng);
            for row in out[start..=end].iter_mut() {
                let pair: Option<(i128, i128)> = match row.as_slice() {
                    [a, b] => a.parse().ok().zip(b.parse().ok()),
                    _ => None,
                };
                if let Some((a, b)) =
                    pair.filter(|&(a, b)| (1..=n).contains(&a) && (1..=n).contains(&b))
                {
                    if rank[a as usize - 1] > rank[b as usize - 1] {
                        *row = vec![b.to_string(), a.to_string()];
                    }
                }
            }
        }
    }
}

/// `text` with the lines of each block (first and last line) in a random order.
fn reorder_blocks(text: &str, blocks: &[(usize, usize)], rng: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    for &(start, end) in blocks {
        if end < lines.len() {
            shuffle(&mut lines[start..=end], rng);
        }
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `count` inputs of the samples' shape (none when there are no samples), without duplicates
/// of each other or of the samples.
pub fn generate_inputs(samples: &[String], count: usize, seed: u64) -> Vec<String> {
    if samples.is_empty() || count == 0 {
        return Vec::new();
    }
    let digit_words = digit_word_places(samples);
    let parsed: Vec<Sample> = samples
        .iter()
        .map(|s| parse_sample(s, &digit_words))
        .collect();
    let facts: Vec<SampleFacts> = parsed.iter().map(SampleFacts::of).collect();
    let mut o = observe(&parsed);
    o.unique_chars = unique_chars(&facts);
    o.general_graphs = parsed
        .iter()
        .zip(&facts)
        .any(|(s, f)| forest_or_not(s, &f.fixed));
    let blocks: Vec<Vec<(usize, usize)>> = parsed.iter().map(kind_blocks).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen: BTreeSet<String> = samples.iter().cloned().collect();
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < count && attempts < count * 20 {
        let k = attempts % parsed.len();
        attempts += 1;
        // Half the inputs of a sample with lines of several kinds take them in another order
        // (a query at an even size, a deletion before the next insertion): the sample's own
        // order is one of many the problem allows. The reordered sample is read afresh, in
        // time linear in it, as the sample itself was.
        let x = if !blocks[k].is_empty() && below(&mut rng, 2) == 0 {
            let text = reorder_blocks(&samples[k], &blocks[k], &mut rng);
            let s = parse_sample(&text, &digit_words);
            let f = SampleFacts::of(&s);
            perturb(&s, &f, &o, &mut rng)
        } else {
            perturb(&parsed[k], &facts[k], &o, &mut rng)
        };
        if seen.insert(x.clone()) {
            out.push(x);
        }
    }
    out
}

/// How a file runs as a whole program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramEntry {
    /// What runs: `module` (Python top-level code), `Main.main`, `main`.
    pub entry: String,
    /// Java: the class whose `main` runs.
    pub main_class: Option<String>,
    /// The program reads standard input.
    pub reads_stdin: bool,
    /// The exit status means something: false for a C/C++ `void main`, whose status is
    /// whatever a register held (it differs between two builds of one program).
    pub status_defined: bool,
}

/// The file as a program: Python with top-level statements that do more than define (calls,
/// loops, `if __name__ == "__main__"`), a Java class with `static void main(String[])`, a C or
/// C++ `main`. `None` for a library file.
pub fn program_entry(file: &ParsedFile) -> Option<ProgramEntry> {
    use crate::syntax::functions::collect_functions;
    let text = file.text.as_str();
    let reads_stdin = reads_stdin(file.language, text);
    match file.language {
        Language::Python => {
            let root = file.tree.root_node();
            let mut c = root.walk();
            let code = root.named_children(&mut c).any(|n| match n.kind() {
                kind::IMPORT_STATEMENT
                | kind::IMPORT_FROM_STATEMENT
                | kind::FUTURE_IMPORT_STATEMENT
                | kind::FUNCTION_DEFINITION
                | kind::CLASS_DEFINITION
                | kind::DECORATED_DEFINITION
                | kind::COMMENT
                | kind::PASS_STATEMENT => false,
                kind::EXPRESSION_STATEMENT => {
                    let mut c2 = n.walk();
                    let kids: Vec<_> = n.named_children(&mut c2).collect();
                    let docstring = kids.len() == 1 && kids[0].kind() == kind::STRING;
                    let definition = kids.iter().all(|k| k.kind() == kind::ASSIGNMENT)
                        && !contains_kind(*kids.first().unwrap_or(&n), kind::CALL, 64);
                    !(docstring || definition)
                }
                _ => true,
            });
            code.then(|| ProgramEntry {
                entry: "module".into(),
                main_class: None,
                reads_stdin,
                status_defined: true,
            })
        }
        Language::Java => collect_functions(file)
            .into_iter()
            .find(|f| {
                f.simple_name == "main"
                    && f.params.len() == 1
                    && f.class.is_some()
                    && file
                        .node_text(f.node)
                        .split('(')
                        .next()
                        .is_some_and(|h| h.split_whitespace().any(|w| w == "static"))
            })
            .map(|f| {
                let class = f.class.clone().unwrap_or_default();
                let outer = class.split('.').next().unwrap_or(&class).to_string();
                ProgramEntry {
                    entry: format!("{class}.main"),
                    main_class: Some(outer),
                    reads_stdin,
                    status_defined: true,
                }
            }),
        Language::C | Language::Cpp => collect_functions(file)
            .into_iter()
            .find(|f| f.simple_name == "main" && f.class.is_none() && f.body.is_some())
            .map(|f| ProgramEntry {
                entry: "main".into(),
                main_class: None,
                reads_stdin,
                status_defined: f
                    .node
                    .child_by_field_name(crate::syntax::lang::field::TYPE)
                    .is_none_or(|t| file.node_text(t).trim() != "void"),
            }),
        _ => None,
    }
}

fn contains_kind(node: tree_sitter::Node<'_>, kind: &str, depth: usize) -> bool {
    if node.kind() == kind {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .any(|k| contains_kind(k, kind, depth - 1));
    found
}

/// Whether the text reads standard input (a textual check on the usual APIs).
fn reads_stdin(language: Language, text: &str) -> bool {
    let needles: &[&str] = match language {
        Language::Python => &["input(", "sys.stdin", "open(0", "fileinput", "stdin.buffer"],
        Language::Java => &["System.in"],
        Language::C => &[
            "scanf(", "getchar(", "fgets(", "getline(", "stdin", "read(0",
        ],
        Language::Cpp => &["cin", "scanf(", "getchar(", "getline(", "stdin", "read(0"],
        _ => &[],
    };
    needles.iter().any(|n| text.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(s: &str) -> Vec<Vec<&'static str>> {
        s.lines()
            .map(|l| {
                l.split_whitespace()
                    .map(|t| match classify(t) {
                        Field::Int(_) => "i",
                        Field::Dec(..) => "d",
                        Field::Word(_) => "w",
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn generated_inputs_keep_the_shape_and_the_counts() {
        let sample = "5\n3 1 4 1 5\nabcab\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 40, 7);
        assert!(gen.len() >= 20, "{gen:?}");
        for g in &gen {
            assert_eq!(shape(g), shape(&sample), "{g}");
            let lines: Vec<&str> = g.lines().collect();
            assert_eq!(lines[0], "5", "the count is structural");
            for v in lines[1].split_whitespace() {
                let v: i128 = v.parse().unwrap();
                assert!((1..=5).contains(&v), "{g}");
            }
            assert!(lines[2].chars().all(|c| "abc".contains(c)) && lines[2].len() == 5);
            assert!(g.ends_with('\n'));
        }
        assert_eq!(gen, generate_inputs(&[sample], 40, 7), "deterministic");
    }

    #[test]
    fn a_count_after_the_test_count_is_structural() {
        // `t`, then per test `n` and `n` values: `n` sits beside `t`, both single numbers.
        let sample = "3\n5\n1 -2 3 4 -1\n3\n2 -1 2\n4\n-3 5 -2 6\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 40, 1);
        assert!(gen.len() >= 20, "{gen:?}");
        for g in &gen {
            let lines: Vec<&str> = g.lines().collect();
            assert_eq!(lines[0], "3", "{g}");
            for k in 0..3 {
                let n: usize = lines[1 + 2 * k].parse().unwrap();
                assert_eq!(lines[2 + 2 * k].split_whitespace().count(), n, "{g}");
            }
        }
        // A run of single numbers that do not count the next line stays data.
        let data = "4\n7\n2\n9\n5\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&data), 20, 2);
        assert!(gen.iter().any(|g| g.lines().nth(2) != Some("2")), "{gen:?}");
    }

    #[test]
    fn permutations_sorted_and_distinct_lines_keep_their_property() {
        let sample = "4\n2 4 1 3\n1 5 9 12\n".to_string();
        for g in generate_inputs(&[sample], 30, 1) {
            let lines: Vec<Vec<i128>> = g
                .lines()
                .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
                .collect();
            let mut p = lines[1].clone();
            p.sort();
            assert_eq!(p, vec![1, 2, 3, 4], "{g}");
            assert!(lines[2].windows(2).all(|w| w[0] < w[1]), "{g}");
        }
    }

    /// The second field of every line after the first (a query's value, a record's amount).
    fn second_fields(g: &str) -> Vec<&str> {
        g.lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1))
            .collect()
    }

    /// The integers of line `n` of a generated input.
    fn ints_of_line(g: &str, n: usize) -> Vec<i128> {
        g.lines()
            .nth(n)
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect()
    }

    #[test]
    fn some_inputs_repeat_values_the_samples_show_distinct() {
        // Found on CP pairs: `>=` for `>` on prefix maxima, duplicates not removed before
        // taking the second largest, a count of `<= x` after inserting `x`: each needs equal
        // values, which the samples (distinct by chance) never show.
        let samples = ["5\n1 3 2 5 4\n".to_string(), "4\n10 9 8 7\n".to_string()];
        let gen = generate_inputs(&samples, 80, 3);
        let repeats = |g: &String| {
            let v: Vec<&str> = g.lines().nth(1).unwrap().split_whitespace().collect();
            let set: BTreeSet<&&str> = v.iter().collect();
            set.len() < v.len()
        };
        assert!(gen.iter().any(repeats), "{gen:?}");
        // Most inputs keep the sample's distinct values.
        assert!(
            gen.iter().filter(|g| !repeats(g)).count() * 2 > gen.len(),
            "{gen:?}"
        );
        // A line that is a permutation in every sample stays one.
        let perms = ["4\n3 1 4 2\n".to_string(), "3\n2 3 1\n".to_string()];
        for g in generate_inputs(&perms, 40, 3) {
            let mut v = ints_of_line(&g, 1);
            v.sort();
            assert!(
                v.iter().enumerate().all(|(x, y)| *y == x as i128 + 1),
                "{g}"
            );
        }
        // A query run: some query repeats a value an earlier line inserted.
        let q = "5\n1 5\n1 3\n2 4\n1 10\n2 100\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&q), 80, 3);
        let repeated = gen.iter().any(|g| {
            let xs = second_fields(g);
            let set: BTreeSet<&&str> = xs.iter().collect();
            set.len() < xs.len()
        });
        assert!(repeated, "{gen:?}");
    }

    #[test]
    fn a_query_kind_keeps_its_values_and_some_query_asks_for_an_inserted_value() {
        // `1 x` inserts, `2 x` counts the values `<= x`: the kind column is no index to
        // stretch up to the count 5 (kinds 3, 4, 5 are outside the problem), and a count of
        // `< x` for `<= x` shows only when a query asks for a value inserted before it.
        let q = "5\n1 5\n1 3\n2 4\n1 10\n2 100\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&q), 120, 7);
        assert!(gen.len() >= 100);
        let mut asks_inserted = 0;
        for g in &gen {
            let mut inserted = BTreeSet::new();
            for l in g.lines().skip(1) {
                let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(v[0] == 1 || v[0] == 2, "{g}");
                if v[0] == 1 {
                    inserted.insert(v[1]);
                } else if inserted.contains(&v[1]) {
                    asks_inserted += 1;
                }
            }
        }
        assert!(asks_inserted >= 5, "{asks_inserted}");
        // Queries `l r` whose first column holds three different values stay indices.
        let lr = "6 3\n1 2 3 4 5 6\n1 3\n2 4\n4 4\n".to_string();
        let top = generate_inputs(std::slice::from_ref(&lr), 60, 4)
            .iter()
            .flat_map(|g| {
                g.lines()
                    .skip(2)
                    .map(|l| ints_of_line(l, 0)[0])
                    .collect::<Vec<_>>()
            })
            .max();
        assert!(top > Some(4), "{top:?}");
    }

    #[test]
    fn distinct_words_are_sometimes_written_with_two_letters_and_stay_distinct() {
        // Anagram checks: `aab abb` (one set of letters, two multisets) tells a comparison
        // of letter sets from one of letter counts; the samples' words are all different
        // (so new words stay different) and are never written with so few letters.
        let sample = "3\nlisten silent\nabc abd\nab ba\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 200, 11);
        let mut same_letters = 0;
        for g in &gen {
            let rows: Vec<Vec<&str>> = g
                .lines()
                .skip(1)
                .map(|l| l.split_whitespace().collect())
                .collect();
            let firsts: BTreeSet<&str> = rows.iter().map(|r| r[0]).collect();
            assert_eq!(firsts.len(), rows.len(), "{g}");
            same_letters += rows
                .iter()
                .filter(|r| {
                    let set = |w: &str| w.chars().collect::<BTreeSet<char>>();
                    let mut a: Vec<char> = r[0].chars().collect();
                    let mut b: Vec<char> = r[1].chars().collect();
                    a.sort_unstable();
                    b.sort_unstable();
                    set(r[0]) == set(r[1]) && a != b
                })
                .count();
        }
        assert!(same_letters >= 1, "{gen:?}");
    }

    #[test]
    fn lines_of_several_kinds_keep_their_kinds_in_some_order() {
        // `1 x` inserts, `2 x` deletes, `3` asks for the largest: a kind drawn as a number
        // (`5 5`) is outside the problem, and two right answers differ on it.
        let samples = [
            "6\n1 5\n1 3\n3\n2 5\n3\n1 7\n".to_string(),
            "5\n3\n1 2\n1 2\n2 2\n3\n".to_string(),
        ];
        let kinds = |g: &str| -> Vec<String> {
            g.lines()
                .skip(1)
                .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
                .collect()
        };
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let gen = generate_inputs(&samples, 60, 5);
        assert!(gen.len() >= 30, "{gen:?}");
        let mut reordered = 0;
        for g in &gen {
            let k = kinds(g);
            assert!(
                sorted(k.clone()) == sorted(kinds(&samples[0]))
                    || sorted(k.clone()) == sorted(kinds(&samples[1])),
                "{g}"
            );
            reordered += usize::from(k != kinds(&samples[0]) && k != kinds(&samples[1]));
            for l in g.lines().skip(1) {
                let width = l.split_whitespace().count();
                assert_eq!(width, if l.starts_with('3') { 1 } else { 2 }, "{g}");
            }
        }
        assert!(reordered >= 10, "{reordered}");
        // The median after an even number of insertions: the samples ask only after odd ones.
        let median = [
            "5\n1 5\n2\n1 1\n1 9\n2\n".to_string(),
            "4\n1 3\n1 8\n1 2\n2\n".to_string(),
        ];
        let even = generate_inputs(&median, 60, 5).iter().any(|g| {
            let mut size = 0;
            g.lines().skip(1).any(|l| {
                size += usize::from(l.starts_with('1'));
                l == "2" && size % 2 == 0 && size > 0
            })
        });
        assert!(even);
        let kinds_of = |text: &str| kind_blocks(&parse_sample(text, &BTreeSet::new()));
        assert_eq!(kinds_of(&samples[1]), vec![(1, 5)]);
        // Counted lists of small numbers (one count, two shapes) and a grid of digits (one
        // shape) are no kinds.
        assert!(kinds_of("3\n2\n1 2\n3\n1 1 2\n2\n2 1\n").is_empty());
        assert!(kinds_of("3 3\n1 0 1\n0 0 1\n1 1 0\n").is_empty());
    }

    #[test]
    fn a_line_in_order_by_chance_in_one_sample_keeps_only_the_order_every_sample_shows() {
        // `a b k` with `a <= b`: `6 6 2` is descending and `7 9 10` ascending by chance.
        let samples = [
            "1 10 3\n".to_string(),
            "6 6 2\n".to_string(),
            "7 9 10\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 90, 2);
        assert!(gen.len() >= 60, "{gen:?}");
        let mut b_above_k = false;
        let mut b_below_k = false;
        for g in &gen {
            let v = ints_of_line(g, 0);
            assert!(v[0] <= v[1], "{g}");
            b_above_k |= v[1] > v[2];
            b_below_k |= v[1] < v[2];
        }
        assert!(b_above_k && b_below_k);
    }

    #[test]
    fn a_sample_tree_need_not_stay_a_tree_when_another_sample_graph_is_not_connected() {
        // Is the graph a tree? `m == n - 1` alone is wrong on a triangle plus a lone node;
        // the samples give a tree, a triangle and a disconnected forest.
        let samples = [
            "4 3\n1 2\n1 3\n3 4\n".to_string(),
            "3 3\n1 2\n2 3\n1 3\n".to_string(),
            "5 2\n1 2\n4 5\n".to_string(),
        ];
        let edges = |g: &str| -> Vec<(i128, i128)> {
            g.lines()
                .skip(1)
                .map(|l| {
                    let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                    (v[0], v[1])
                })
                .collect()
        };
        let gen = generate_inputs(&samples, 90, 8);
        let mut cyclic_n_minus_one = 0;
        for g in gen.iter().filter(|g| g.starts_with("4 3\n")) {
            let e = edges(g);
            assert!(is_simple(&e), "{g}");
            assert!(e
                .iter()
                .all(|&(a, b)| (1..=4).contains(&a) && (1..=4).contains(&b)));
            cyclic_n_minus_one += usize::from(!is_tree(&e, 4));
        }
        assert!(cyclic_n_minus_one >= 1, "{gen:?}");
        // Samples that are all trees or connected keep giving trees.
        let trees = [
            "4 3\n1 2\n1 3\n3 4\n".to_string(),
            "3 3\n1 2\n2 3\n1 3\n".to_string(),
        ];
        for g in generate_inputs(&trees, 40, 8)
            .iter()
            .filter(|g| g.starts_with("4 3\n"))
        {
            assert!(is_tree(&edges(g), 4), "{g}");
        }
    }

    #[test]
    fn query_bounds_keep_their_order() {
        let sample = "5 2\n1 2 3 4 5\n2 4\n1 5\n".to_string();
        for g in generate_inputs(&[sample], 30, 9) {
            for l in g.lines().skip(2) {
                let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(v[0] <= v[1] && v[1] <= 5, "{g}");
            }
        }
    }

    #[test]
    fn indices_of_a_query_run_reach_the_count() {
        // Queries `l r` over 5 values: no sample query ends at 5, yet 5 is a valid bound.
        let sample = "5 3\n1 2 3 4 5\n1 3\n2 4\n4 4\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 60, 4);
        let mut top = 0;
        for g in &gen {
            for l in g.lines().skip(2) {
                let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(1 <= v[0] && v[0] <= v[1] && v[1] <= 5, "{g}");
                top = top.max(v[1]);
            }
        }
        assert_eq!(top, 5, "{gen:?}");
    }

    #[test]
    fn some_inputs_crowd_one_end_of_the_range() {
        // Uniform draws of four values in -8..=7 are all negative one time in sixteen; a wrong
        // answer that starts its maximum at 0 needs exactly that.
        let sample = "4\n3 -8 7 2\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 40, 5);
        let values = |g: &String| -> Vec<i128> {
            g.lines()
                .nth(1)
                .unwrap()
                .split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect()
        };
        assert!(
            gen.iter().any(|g| values(g).iter().all(|v| *v <= -5)),
            "{gen:?}"
        );
        assert!(
            gen.iter().any(|g| values(g).iter().all(|v| *v >= 4)),
            "{gen:?}"
        );
        assert!(gen
            .iter()
            .all(|g| values(g).iter().all(|v| (-8..=7).contains(v))));
    }

    #[test]
    fn words_draw_from_their_letter_class_when_the_samples_show_enough_of_it() {
        // One string per test: the run's strings together show six lower-case letters.
        let sample = "3\nbanana\nabc\nzzzy\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 40, 6);
        let letters: BTreeSet<char> = gen
            .iter()
            .flat_map(|g| g.lines().skip(1))
            .flat_map(|l| l.chars())
            .collect();
        assert!(
            letters.iter().all(|c| c.is_ascii_lowercase()),
            "{letters:?}"
        );
        assert!(letters.len() > 10, "{letters:?}");
        // One string per test: each of the lengths the run shows (3 to 6).
        let mut other_lengths = false;
        for g in &gen {
            let lens: Vec<usize> = g.lines().skip(1).map(str::len).collect();
            assert!(lens.iter().all(|n| (3..=6).contains(n)), "{g}");
            other_lengths |= lens != vec![6, 3, 4];
        }
        assert!(other_lengths);
        // A small alphabet (`ACGT`, a grid's `#.`) is kept as seen.
        let dna = "ACGTTGCA\n".to_string();
        for g in generate_inputs(std::slice::from_ref(&dna), 20, 6) {
            assert!(g.trim().chars().all(|c| "ACGT".contains(c)), "{g}");
        }
        let grid = "2 3\n#.#\n.##\n".to_string();
        for g in generate_inputs(std::slice::from_ref(&grid), 20, 6) {
            assert!(
                g.lines()
                    .skip(1)
                    .all(|l| l.chars().all(|c| c == '#' || c == '.')),
                "{g}"
            );
        }
    }

    #[test]
    fn a_column_of_different_values_stays_different() {
        // ABC113 C: `n m`, then `p y` per city; the years are all different.
        let samples = [
            "2 3\n1 32\n2 63\n1 12\n".to_string(),
            "2 3\n2 55\n2 77\n2 99\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 60, 7);
        assert!(gen.len() >= 20, "{gen:?}");
        for g in &gen {
            let years = second_fields(g);
            let distinct: BTreeSet<&&str> = years.iter().collect();
            assert_eq!(distinct.len(), years.len(), "{g}");
            for l in g.lines().skip(1) {
                let p: i128 = l.split_whitespace().next().unwrap().parse().unwrap();
                assert!((1..=2).contains(&p), "a prefecture among the 2: {g}");
            }
        }
    }

    #[test]
    fn records_of_four_fields_draw_each_column_from_its_own_range_and_keep_pair_orders() {
        // `N M Q`, then Q records `a b c d` with indices `a < b <= N` and an amount `d`.
        let sample = "3 4 3\n1 3 3 100\n1 2 2 10\n2 3 2 10\n".to_string();
        let inputs = generate_inputs(&[sample], 60, 5);
        assert!(inputs.len() >= 30, "{inputs:?}");
        let mut amounts = BTreeSet::new();
        for g in &inputs {
            let lines: Vec<Vec<i128>> = g
                .lines()
                .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
                .collect();
            assert_eq!(lines[0], vec![3, 4, 3], "{g}");
            for r in &lines[1..] {
                assert!(1 <= r[0] && r[0] <= r[1] && r[1] <= 3, "{g}");
                assert!((10..=100).contains(&r[3]), "{g}");
                amounts.insert(r[3]);
            }
        }
        assert!(amounts.len() > 10, "{amounts:?}");
        // Three fields where only `u <= v` holds on every line: the weight keeps no order.
        let weighted = "3\n1 2 5\n2 3 1\n1 3 9\n".to_string();
        let mut weight_below = false;
        for g in generate_inputs(&[weighted], 60, 6) {
            for l in g.lines().skip(1) {
                let r: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(r[0] <= r[1], "{g}");
                weight_below |= r[2] < r[1];
            }
        }
        assert!(weight_below);
        // An order one sample's run shows by chance (`x <= y` on two lines) and another's does
        // not is no order; one both show (`x, y <= t`) is kept.
        let one = "2\n4 1 3\n9 2 2\n".to_string();
        let other = "2\n7 2 2\n8 3 3\n".to_string();
        let mut x_above_y = false;
        for g in generate_inputs(&[one, other], 80, 9) {
            for l in g.lines().skip(1) {
                let r: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(r[1] <= r[0] && r[2] <= r[0], "{g}");
                x_above_y |= r[1] > r[2];
            }
        }
        assert!(x_above_y);
    }

    #[test]
    fn word_lengths_vary_within_the_samples_but_tied_counted_and_indexed_lengths_hold() {
        // `S`, `T` of equal length in every sample, and an index `K` into them.
        let samples = ["abcde\nxyzwv\n2\n".to_string(), "ab\ncd\n1\n".to_string()];
        let gen = generate_inputs(&samples, 60, 7);
        let mut lengths = BTreeSet::new();
        for g in &gen {
            let l: Vec<&str> = g.lines().collect();
            assert_eq!(l[0].len(), l[1].len(), "{g}");
            let k: usize = l[2].parse().unwrap();
            assert!(k <= l[0].len() && (2..=5).contains(&l[0].len()), "{g}");
            lengths.insert(l[0].len());
        }
        assert!(lengths.len() >= 3, "{lengths:?}");
        // A length named by a count, and a grid's rows, keep their length.
        let counted = "4\nabcd\n".to_string();
        let grid = "2\n#..#\n.##.\n".to_string();
        let other = "3\n#.#\n..#\n##.\n".to_string();
        for g in generate_inputs(&[counted, grid, other], 60, 8) {
            let l: Vec<&str> = g.lines().collect();
            let width = l[1].len();
            assert!(width == 3 || width == 4, "{g}");
            assert!(l[1..].iter().all(|r| r.len() == width), "{g}");
        }
    }

    #[test]
    fn words_are_spliced_from_pieces_of_the_sample_words() {
        // ABC049 C: a string made of `dream`, `dreamer`, `erase`, `eraser`. Random letters never
        // spell those parts again; pieces of the samples do.
        let samples = [
            "erasedream\n".to_string(),
            "dreameraser\n".to_string(),
            "dreamerer\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 200, 3);
        let spliced = gen
            .iter()
            .filter(|g| g.contains("dream") || g.contains("erase"))
            .count();
        // (Uniform letters would spell one of them in about one input in a million.)
        assert!(spliced >= 10, "{spliced} of {}", gen.len());
        for g in &gen {
            let w = g.trim_end();
            assert!(
                (9..=11).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()),
                "{g:?}"
            );
        }
    }

    #[test]
    fn run_words_repeat_where_the_sample_repeats_them_and_stay_distinct_where_it_does_not() {
        // ABC251 C: `n`, then `n` lines `S T` where a poem may be submitted again.
        let repeats = "4\nab 1\ncd 2\nab 3\nef 4\n".to_string();
        let words = |g: &str| -> Vec<String> {
            g.lines()
                .skip(1)
                .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
                .collect()
        };
        let repeated = generate_inputs(&[repeats], 100, 5)
            .iter()
            .filter(|g| {
                let w = words(g);
                w.iter().collect::<BTreeSet<_>>().len() < w.len()
            })
            .count();
        assert!(repeated >= 20, "{repeated}");
        // Three names, all different, over three letters: new names stay different.
        let distinct = "3\na 5\nb 7\nc 2\n".to_string();
        let gen = generate_inputs(&[distinct], 50, 6);
        assert!(gen.len() >= 10);
        for g in gen {
            let w = words(&g);
            assert_eq!(w.iter().collect::<BTreeSet<_>>().len(), w.len(), "{g}");
        }
    }

    #[test]
    fn a_tree_before_queries_of_the_same_shape_stays_a_tree() {
        // ABC138 D: `n q`, `n - 1` edges, `q` queries `p x`, all lines of two numbers.
        let samples = [
            "4 3\n1 2\n2 3\n2 4\n2 10\n1 100\n3 1\n".to_string(),
            "6 2\n1 2\n1 3\n2 4\n3 6\n2 5\n1 10\n1 10\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 60, 3);
        assert!(gen.len() >= 30, "{gen:?}");
        for g in &gen {
            let rows: Vec<Vec<i128>> = g
                .lines()
                .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
                .collect();
            let (n, q) = (rows[0][0], rows[0][1]);
            assert_eq!(rows.len() as i128, n - 1 + q + 1, "the counts stay: {g}");
            let edges: Vec<(i128, i128)> =
                rows[1..n as usize].iter().map(|r| (r[0], r[1])).collect();
            assert!(is_tree(&edges, n), "{g}");
        }
    }

    #[test]
    fn equal_values_keep_no_order_and_skewed_inputs_reach_the_ends() {
        let samples = [
            "3 3\n".to_string(),
            "2 2\n".to_string(),
            "999999 999999\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 100, 5);
        let pairs = first_two(&gen);
        assert!(pairs.iter().any(|(x, y)| x > y), "{pairs:?}");
        assert!(pairs.iter().any(|(x, y)| x < y), "{pairs:?}");
        // One value in 2..=1729: the values next to the ends come up.
        let samples = ["7\n".to_string(), "2\n".to_string(), "1729\n".to_string()];
        let gen = generate_inputs(&samples, 100, 5);
        let values: BTreeSet<i128> = gen.iter().map(|g| g.trim().parse().unwrap()).collect();
        assert!(values.contains(&3) && values.contains(&1728), "{values:?}");
    }

    #[test]
    fn a_line_keeps_the_order_every_sample_shows_though_one_shows_equal_values() {
        // CF 791A: `a b` with `1 <= a <= b <= 10`; the third sample is `1 1`, which alone
        // shows no order, and `6 2` would be outside the problem.
        let samples = [
            "4 7\n".to_string(),
            "4 9\n".to_string(),
            "1 1\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 100, 5);
        let pairs = first_two(&gen);
        assert!(pairs.len() >= 30, "{pairs:?}");
        assert!(pairs.iter().all(|(a, b)| a <= b), "{pairs:?}");
        assert!(pairs.iter().any(|(a, b)| a < b), "{pairs:?}");
        // Samples that order the pair both ways keep no order.
        let samples = [
            "4 7\n".to_string(),
            "9 4\n".to_string(),
            "1 1\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 100, 5);
        assert!(first_two(&gen).iter().any(|(a, b)| a > b));
    }

    /// The first two integers of each input.
    fn first_two(inputs: &[String]) -> Vec<(i128, i128)> {
        inputs
            .iter()
            .map(|g| {
                let v: Vec<i128> = g.split_whitespace().map(|t| t.parse().unwrap()).collect();
                (v[0], v[1])
            })
            .collect()
    }

    #[test]
    fn digits_with_a_leading_zero_make_their_place_a_digit_string_in_every_sample() {
        // CF 1398-style binary strings: `0000` is text, so `10010` and `1` are too.
        let samples = [
            "0000\n".to_string(),
            "10010\n".to_string(),
            "1\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 60, 4);
        assert!(gen.len() >= 20, "{gen:?}");
        for g in &gen {
            let w = g.trim();
            assert!(
                (1..=5).contains(&w.len()) && w.bytes().all(|b| b == b'0' || b == b'1'),
                "{g:?}"
            );
        }
    }

    #[test]
    fn a_count_heading_a_run_of_its_own_width_is_kept() {
        // `t`, then per test `n x`, `n` values, `n` values; the second test has `n = 2`, so
        // its header looks like the data lines after it.
        let sample = "2\n3 4\n1 2 3\n1 1 2\n2 6\n1 4\n2 5\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 40, 2);
        assert!(gen.len() >= 10, "{gen:?}");
        for g in &gen {
            let rows: Vec<Vec<i128>> = g
                .lines()
                .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
                .collect();
            assert_eq!(rows[1][0], 3, "{g}");
            assert_eq!(rows[4][0], 2, "{g}");
        }
    }

    #[test]
    fn a_lone_positive_integer_ranges_down_to_one() {
        // CF 4A: `w` alone; the samples show 5..100, and the special case is `w = 2`.
        let samples = ["8\n".to_string(), "5\n".to_string(), "100\n".to_string()];
        let gen = generate_inputs(&samples, 100, 5);
        let values: BTreeSet<i128> = gen.iter().map(|g| g.trim().parse().unwrap()).collect();
        assert!(values.contains(&2), "{values:?}");
        assert!(values.iter().all(|v| (1..=100).contains(v)), "{values:?}");
    }

    #[test]
    fn a_wide_range_around_zero_reaches_zero() {
        // Base -2 of N, `-9`, `123456789`, `-1`: the special case is N = 0.
        let samples = [
            "-9\n".to_string(),
            "123456789\n".to_string(),
            "-1\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 200, 5);
        assert!(gen.iter().any(|g| g.trim() == "0"), "{gen:?}");
    }

    #[test]
    fn a_counted_list_of_two_keeps_no_order_but_index_columns_of_updates_do() {
        // Prices: `n`, then `n` prices; `3 8` is ascending by chance.
        let samples = ["6\n7 1 5 3 6 4\n".to_string(), "2\n3 8\n".to_string()];
        let falling = generate_inputs(&samples, 100, 5)
            .iter()
            .filter(|g| g.lines().count() == 2 && g.starts_with("2\n"))
            .filter(|g| {
                let v: Vec<i128> = g
                    .lines()
                    .nth(1)
                    .unwrap()
                    .split_whitespace()
                    .map(|t| t.parse().unwrap())
                    .collect();
                v[0] > v[1]
            })
            .count();
        assert!(falling > 0);
        // `n q`, the array, `q` updates `l r v` (two lines: few to tell orders from, but `l`
        // and `r` are indices up to `n`).
        let sample = "5 2\n1 2 3 4 5\n1 3 10\n2 5 -1\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&sample), 60, 5);
        assert!(gen.len() >= 20, "{gen:?}");
        for g in &gen {
            for l in g.lines().skip(2) {
                let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(v[0] <= v[1], "{g}");
            }
        }
    }

    #[test]
    fn a_counted_simple_graph_whose_first_edges_are_a_tree_stays_simple_and_connected() {
        // Bridges of a simple connected graph: `3 3` and the triangle; `7 7` and a cycle with
        // tails.
        for sample in [
            "3 3\n1 2\n1 3\n2 3\n",
            "7 7\n1 3\n2 7\n3 4\n4 5\n4 6\n5 6\n6 7\n",
        ] {
            let gen = generate_inputs(&[sample.to_string()], 40, 7);
            assert!(!gen.is_empty());
            for g in &gen {
                let mut seen = BTreeSet::new();
                let mut edges = Vec::new();
                for l in g.lines().skip(1) {
                    let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                    assert!(
                        v[0] != v[1] && seen.insert((v[0].min(v[1]), v[0].max(v[1]))),
                        "{g}"
                    );
                    edges.push((v[0], v[1]));
                }
                assert!(connected(&edges, n_of(&edges)), "{g}");
            }
        }
    }

    #[test]
    fn trees_stay_trees_and_simple_graphs_stay_simple() {
        let tree = "5\n1 2\n1 3\n3 4\n3 5\n".to_string();
        let gen = generate_inputs(std::slice::from_ref(&tree), 30, 8);
        assert!(gen.len() >= 10, "{gen:?}");
        for g in &gen {
            let edges: Vec<(i128, i128)> = g
                .lines()
                .skip(1)
                .map(|l| {
                    let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                    (v[0], v[1])
                })
                .collect();
            assert_eq!(g.lines().next(), Some("5"), "{g}");
            assert!(is_tree(&edges, 5), "{g}");
            assert!(edges.iter().all(|(a, b)| a < b), "{g}");
        }
        // Four edges over five nodes with a cycle: no self-loop, no repeated edge.
        let graph = "5 4\n1 2\n2 3\n3 1\n4 5\n".to_string();
        for g in generate_inputs(std::slice::from_ref(&graph), 30, 8) {
            assert_eq!(
                g.lines().next(),
                Some("5 4"),
                "the node count is structural: {g}"
            );
            let mut seen = BTreeSet::new();
            for l in g.lines().skip(1) {
                let v: Vec<i128> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                assert!(
                    v[0] != v[1] && seen.insert((v[0].min(v[1]), v[0].max(v[1]))),
                    "{g}"
                );
                assert!(v.iter().all(|x| (1..=5).contains(x)), "{g}");
            }
        }
    }

    #[test]
    fn a_lone_number_ranges_over_smaller_instances() {
        let gen = generate_inputs(&["10\n".to_string()], 20, 3);
        assert!(gen.len() >= 5);
        for g in &gen {
            let v: i128 = g.trim().parse().unwrap();
            assert!((1..=10).contains(&v));
        }
        let two = generate_inputs(&["3 7\n".to_string(), "100 2\n".to_string()], 30, 3);
        for g in &two {
            for t in g.split_whitespace() {
                let v: i128 = t.parse().unwrap();
                assert!((2..=100).contains(&v), "{g}");
            }
        }
    }

    #[test]
    fn some_inputs_write_their_words_with_one_or_two_letters() {
        // `S`, then `T`: count the (overlapping) occurrences of `T` in `S`. `aa` occurs twice
        // in `aaa`; random letters of a 26-letter alphabet never make that.
        let samples = [
            "abracadabra\nabra\n".to_string(),
            "hello\nworld\n".to_string(),
            "mississippi\nss\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 200, 3);
        let overlapping = |s: &str, t: &str| {
            let hits: Vec<usize> = (0..s.len()).filter(|&i| s[i..].starts_with(t)).collect();
            hits.windows(2).any(|w| w[1] - w[0] < t.len())
        };
        let few = gen
            .iter()
            .filter(|g| {
                let letters: BTreeSet<char> = g.chars().filter(|c| c.is_alphabetic()).collect();
                letters.len() <= 2
            })
            .count();
        assert!((10..=50).contains(&few), "{few}");
        assert!(gen.iter().any(|g| {
            let l: Vec<&str> = g.lines().collect();
            overlapping(l[0], l[1])
        }));
        // Two-letter alphabets (grids, binary strings) are as before: both letters show.
        let grid = generate_inputs(&["2 6\n#..#.#\n.#.##.\n".to_string()], 50, 3);
        assert!(
            grid.iter().all(|g| g.contains('#') && g.contains('.')),
            "{grid:?}"
        );
    }

    #[test]
    fn a_character_every_sample_grid_holds_once_stays_once() {
        let samples = [
            "3 4\nS..#\n.#..\n..#G\n".to_string(),
            "2 5\nS.#..\n...#G\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 60, 4);
        assert!(gen.len() >= 40);
        let mut moved = 0;
        for g in &gen {
            assert_eq!(g.matches('S').count(), 1, "{g}");
            assert_eq!(g.matches('G').count(), 1, "{g}");
            assert!(g.contains('#') || g.contains('.'), "{g}");
            if !g.lines().nth(1).unwrap().starts_with('S') {
                moved += 1;
            }
        }
        assert!(moved >= 10, "{moved}");
        // One grid is too little to tell: a lone `#` may be chance.
        let one = generate_inputs(&["3 3\n...\n.#.\n...\n".to_string()], 60, 4);
        assert!(one.iter().any(|g| g.matches('#').count() != 1), "{one:?}");
    }

    #[test]
    fn values_that_the_samples_take_from_earlier_lines_are_often_taken_from_them() {
        // ABC157 B: a 3 x 3 card, then `n` called numbers, most of them on the card.
        let samples = [
            "84 97 66\n79 89 11\n61 59 7\n7\n89\n7\n87\n79\n24\n84\n30\n".to_string(),
            "60 88 34\n92 41 43\n65 73 48\n5\n60\n43\n88\n11\n48\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 100, 8);
        let mut on_card = 0;
        let mut called = 0;
        for g in &gen {
            let lines: Vec<Vec<i128>> = g
                .lines()
                .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
                .collect();
            let card: BTreeSet<i128> = lines[..3].iter().flatten().copied().collect();
            let calls: Vec<i128> = lines[4..].iter().flatten().copied().collect();
            assert_eq!(calls.len() as i128, lines[3][0], "{g}");
            let on: Vec<i128> = calls.iter().copied().filter(|c| card.contains(c)).collect();
            // A card value is called at most once by the rule (a random draw may repeat one).
            on_card += on.len();
            called += calls.len();
        }
        assert!(4 * on_card >= called, "{on_card} of {called}");
        // Two permutations: the second holds the first's values but stays a permutation.
        let perms = ["4\n2 4 1 3\n3 1 4 2\n".to_string()];
        for g in generate_inputs(&perms, 20, 8) {
            let mut second = ints_of_line(&g, 2);
            second.sort_unstable();
            assert_eq!(second, vec![1, 2, 3, 4], "{g}");
        }
    }

    #[test]
    fn a_range_of_many_magnitudes_draws_small_values_too() {
        // ABC131 C: `A B C D` up to 10^18: divisors with a common factor are small numbers.
        let samples = [
            "4 9 2 3\n".to_string(),
            "10 40 6 7\n".to_string(),
            "314159265358979323 846264338327950288 419716939 937510583\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 200, 9);
        let values: Vec<i128> = gen
            .iter()
            .flat_map(|g| g.split_whitespace().map(|t| t.parse::<i128>().unwrap()))
            .collect();
        let small = values.iter().filter(|&&v| v < 1_000_000).count();
        let large = values.iter().filter(|&&v| v > 1_000_000_000_000).count();
        assert!(
            10 * small >= values.len() && 5 * large >= values.len(),
            "{small} {large} of {}",
            values.len()
        );
        for g in &gen {
            let v: Vec<i128> = g.split_whitespace().map(|t| t.parse().unwrap()).collect();
            assert!(
                v.iter().all(|&x| (2..=846264338327950288).contains(&x)),
                "{g}"
            );
        }
    }

    #[test]
    fn a_directed_acyclic_sample_graph_stays_acyclic() {
        // Longest path in a DAG: `3 2` is against the labels' order, yet no edge set of the
        // samples closes a directed cycle; generated ones must not either.
        let samples = [
            "4 5\n1 2\n1 3\n3 2\n2 4\n3 4\n".to_string(),
            "6 6\n2 3\n4 5\n5 6\n1 2\n1 6\n4 6\n".to_string(),
        ];
        let gen = generate_inputs(&samples, 80, 10);
        assert!(gen.len() >= 40);
        let mut against = 0;
        for g in &gen {
            let lines: Vec<Vec<i128>> = g
                .lines()
                .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
                .collect();
            let n = lines[0][0];
            let edges: Vec<(i128, i128)> = lines[1..].iter().map(|l| (l[0], l[1])).collect();
            // A forest is acyclic too.
            assert!(
                super::dag_not_forest(&edges, n) || !super::closes_cycle(&edges, n),
                "{g}"
            );
            against += usize::from(edges.iter().any(|&(a, b)| a > b));
        }
        assert!(against >= 10, "{against}");
        assert!(!super::dag_not_forest(&[(1, 2), (2, 3), (3, 1)], 3));
        assert!(!super::dag_not_forest(&[(1, 2), (2, 3)], 3));
    }

    #[test]
    fn programs_are_recognised() {
        let p = |lang, t: &str| program_entry(&ParsedFile::parse(lang, t));
        let script = p(Language::Python, "import sys\nn = int(input())\nprint(n)\n").unwrap();
        assert!(script.reads_stdin && script.entry == "module");
        assert!(p(
            Language::Python,
            "MOD = 10 ** 9\n\ndef f(x):\n    return x % MOD\n"
        )
        .is_none());
        assert!(p(
            Language::Python,
            "def main():\n    print(1)\n\nif __name__ == '__main__':\n    main()\n"
        )
        .is_some());
        let java = p(Language::Java, "import java.util.*;\npublic class Main { public static void main(String[] a) { Scanner s = new Scanner(System.in); } }").unwrap();
        assert_eq!(java.main_class.as_deref(), Some("Main"));
        assert!(java.reads_stdin);
        assert!(p(Language::Java, "class A { int main(int x) { return x; } }").is_none());
        let c = p(
            Language::C,
            "int foo(int a) { return a; }\nint main(void) { return foo(5); }\n",
        )
        .unwrap();
        assert!(!c.reads_stdin && c.status_defined);
        let v = p(Language::C, "void main(void) { puts(\"x\"); }\n").unwrap();
        assert!(
            !v.status_defined,
            "a void main's status is a register's leftover"
        );
        assert!(
            p(
                Language::Cpp,
                "#include <iostream>\nint main() { int n; std::cin >> n; }\n"
            )
            .unwrap()
            .reads_stdin
        );
    }

    #[test]
    fn outputs_compare_by_tokens_or_exactly() {
        assert!(same_output("1 2\n3\n", "1  2 3", CompareMode::Tokens));
        assert!(!same_output("1 2\n3\n", "1  2 3", CompareMode::Exact));
        assert!(!same_output("1 2", "1 2 3", CompareMode::Tokens));
        assert!(same_output(
            "0.3333333333\n",
            "0.333333333333333",
            CompareMode::Tokens
        ));
        assert!(!same_output("0.33\n", "0.34", CompareMode::Tokens));
        assert!(!same_output("10\n", "10.0000001", CompareMode::Exact));
        assert!(!same_output(
            "1000000000000000001",
            "1000000000000000000",
            CompareMode::Tokens
        ));
        assert!(!same_output("nan", "nan.0", CompareMode::Tokens));
        assert!(generate_inputs(&[], 10, 0).is_empty());
    }
}
