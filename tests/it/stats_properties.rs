//! Library-level rules of the `stats` module: determinism, order independence, cancellation,
//! bounded memory for many categories, and the small helpers (percentiles, Jaccard,
//! instability, label tokens, input parsing).

use crate::stats_support;

use std::collections::BTreeSet;

use crosscheck::stats::agreement::{agreement, Tally};
use crosscheck::stats::bootstrap::{bootstrap, percentile, BootstrapOptions};
use crosscheck::stats::input::{Cell, InputFormat, Table};
use crosscheck::stats::instability::instability;
use crosscheck::stats::jaccard::jaccard;
use crosscheck::stats::labels::{binary_token, LabelSpace, LabelledPairs};
use crosscheck::stats::report::{compute, StatsOptions, CONFUSION_LIMIT};
use crosscheck::syntax::Cancel;
use stats_support::pairs_from_matrix;

fn options(resamples: usize, seed: u64) -> StatsOptions {
    StatsOptions {
        bootstrap: BootstrapOptions {
            resamples,
            seed,
            level: 0.95,
        },
    }
}

#[test]
fn binary_tokens_are_case_insensitive_and_trimmed() {
    for t in ["1", "true", "TRUE", " Yes ", "yEs"] {
        assert_eq!(binary_token(t), Some(true), "{t}");
    }
    for t in ["0", "false", "False", "NO", " no"] {
        assert_eq!(binary_token(t), Some(false), "{t}");
    }
    for t in ["", "2", "y", "n", "maybe", "1.5", "-1"] {
        assert_eq!(binary_token(t), None, "{t}");
    }
}

/// Kappa and the other agreement coefficients are symmetric in the two raters.
#[test]
fn agreement_coefficients_are_symmetric() {
    let t = Tally::from_matrix(&[vec![7, 3, 1], vec![2, 9, 4], vec![0, 5, 11]]);
    let transposed = Tally::from_matrix(&[vec![7, 2, 0], vec![3, 9, 5], vec![1, 4, 11]]);
    assert_eq!(agreement(&t), agreement(&transposed));
}

/// Out-of-range category indices are ignored, never a panic.
#[test]
fn tally_ignores_out_of_range_pairs() {
    let mut t = Tally::new(2);
    assert!(t.add(1, 0));
    assert!(!t.add(2, 0));
    assert!(!t.add(0, usize::MAX));
    assert_eq!(t.n(), 1);
    let empty = agreement(&Tally::new(0));
    assert_eq!(empty.po, None);
    assert_eq!(empty.ac1, None);
}

/// The report depends only on the table and the seed, not on the row order.
#[test]
fn report_is_independent_of_row_order() {
    let forward = pairs_from_matrix(LabelSpace::binary(), &[&[30, 4], &[7, 9]]);
    let mut reversed = forward.clone();
    reversed.pairs.reverse();
    // Interleave to make sure it is not just reversal symmetry.
    let mut shuffled = forward.clone();
    let n = shuffled.pairs.len();
    for i in 0..n {
        shuffled.pairs.swap(i, (i * 17 + 5) % n);
    }
    let opts = options(2000, 0x5eed);
    let base = compute(&forward, &opts, &Cancel::never());
    assert_eq!(base, compute(&reversed, &opts, &Cancel::never()));
    assert_eq!(base, compute(&shuffled, &opts, &Cancel::never()));
}

/// Two runs with one seed are identical; the 95% interval of kappa has the point estimate
/// inside and is narrower for a larger sample of the same proportions.
#[test]
fn bootstrap_is_deterministic_and_shrinks_with_n() {
    let small = pairs_from_matrix(LabelSpace::binary(), &[&[20, 5], &[10, 15]]);
    let large = pairs_from_matrix(LabelSpace::binary(), &[&[200, 50], &[100, 150]]);
    let opts = options(2000, 42);
    let a = compute(&small, &opts, &Cancel::never());
    let b = compute(&small, &opts, &Cancel::never());
    assert_eq!(a, b);
    let big = compute(&large, &opts, &Cancel::never());
    let width = |r: &crosscheck::stats::StatsReport| {
        let ci = r.ci.as_ref().expect("ci");
        ci.kappa.hi.unwrap_or(f64::NAN) - ci.kappa.lo.unwrap_or(f64::NAN)
    };
    assert!(
        width(&big) < width(&a) / 2.0,
        "{} vs {}",
        width(&big),
        width(&a)
    );
}

/// A cancelled computation still returns the coefficients, with a partial bootstrap noted.
#[test]
fn cancelled_bootstrap_returns_partial_result_with_note() {
    let pairs = pairs_from_matrix(LabelSpace::binary(), &[&[20, 5], &[10, 15]]);
    let cancel = Cancel::new();
    cancel.cancel();
    let r = compute(&pairs, &options(10_000, 1), &cancel);
    assert_eq!(r.kappa.map(|k| (k * 1e12).round() / 1e12), Some(0.4));
    let ci = r.ci.expect("ci block present");
    assert_eq!(ci.completed, 0);
    assert!(r.notes.iter().any(|n| n.contains("bootstrap cancelled")));
}

/// Statistics undefined on some resamples are dropped and counted.
#[test]
fn undefined_resamples_are_dropped_and_counted() {
    // One disagreement among 20 agreeing positives: many resamples miss it and make every
    // item (1,1), where kappa is undefined.
    let pairs = pairs_from_matrix(LabelSpace::binary(), &[&[0, 0], &[1, 19]]);
    let run = bootstrap(
        2,
        &pairs.pairs,
        &BootstrapOptions {
            resamples: 1000,
            seed: 3,
            level: 0.95,
        },
        |t| [agreement(t).kappa, agreement(t).ac1],
        &Cancel::never(),
    );
    assert_eq!(run.completed, 1000);
    let [kappa, ac1] = run.intervals;
    assert!(
        kappa.valid < 1000 && kappa.valid > 0,
        "valid = {}",
        kappa.valid
    );
    assert_eq!(ac1.valid, 1000);
}

/// Linear-interpolation percentiles match numpy's default (`np.percentile([1,2,3,4], 25)`
/// = 1.75, 97.5th of 1..=5 = 4.9).
#[test]
fn percentile_is_type_7() {
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.25), Some(1.75));
    assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.975), Some(4.9));
    assert_eq!(percentile(&[3.0], 0.025), Some(3.0));
    assert_eq!(percentile(&[], 0.5), None);
}

/// Many distinct labels: memory stays O(q) (no q×q matrix), the confusion matrix is omitted
/// with a note.
#[test]
fn many_categories_do_not_allocate_a_dense_matrix() {
    let q = 50_000;
    let labels: Vec<String> = (0..q).map(|i| format!("c{i}")).collect();
    let space = LabelSpace::multiclass(labels).expect("distinct");
    let pairs: Vec<(usize, usize)> = (0..q).map(|i| (i, (i + i % 2) % q)).collect();
    let r = compute(
        &LabelledPairs::new(space, pairs),
        &options(0, 0),
        &Cancel::never(),
    );
    assert!(r.confusion.is_none());
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains(&format!("> {CONFUSION_LIMIT}"))));
    // Half the items agree.
    assert_eq!(r.po, Some(0.5));
}

#[test]
fn jaccard_of_sets() {
    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        jaccard(&set(&["a", "b"]), &set(&["b", "c"])),
        Some(1.0 / 3.0)
    );
    assert_eq!(jaccard(&set(&["a"]), &set(&["a"])), Some(1.0));
    assert_eq!(jaccard(&set(&["a"]), &set(&[])), Some(0.0));
    assert_eq!(jaccard(&set(&[]), &set(&[])), None);
}

/// Ties: two runs split 1-1 have no strict majority; half the runs disagree with either.
#[test]
fn instability_with_ties_and_unanimity() {
    let r = instability(&[vec![0, 1], vec![2, 2], vec![]]);
    assert_eq!(r.n, 2);
    assert_eq!(r.unstable, 1);
    assert_eq!(r.majority_ties, 1);
    assert_eq!(r.mean_disagreement, Some(0.25));
    let empty = instability(&[]);
    assert_eq!(empty.unstable_share, None);
    assert_eq!(empty.mean_disagreement, None);
}

#[test]
fn format_detection_by_extension_then_content() {
    assert_eq!(InputFormat::detect(Some("CSV"), "{"), InputFormat::Csv);
    assert_eq!(
        InputFormat::detect(Some("jsonl"), "a,b"),
        InputFormat::Jsonl
    );
    assert_eq!(InputFormat::detect(Some("tsv"), ""), InputFormat::Tsv);
    assert_eq!(
        InputFormat::detect(None, "\u{feff}  {\"a\":1}"),
        InputFormat::Jsonl
    );
    assert_eq!(
        InputFormat::detect(Some("txt"), "a,b\n1,0"),
        InputFormat::Csv
    );
}

/// CSV: BOM stripped, fields trimmed, short rows padded with Missing, quoted commas kept.
#[test]
fn csv_cells_and_lines() {
    let t =
        Table::parse("\u{feff}x, y ,z\n1 ,\"a,b\"\n\n2,3,4\n", InputFormat::Csv).expect("parses");
    assert_eq!(t.headers, vec!["x", "y", "z"]);
    assert_eq!(t.rows.len(), 2);
    assert_eq!(
        t.rows[0].cells,
        vec![Cell::Text("1".into()), Cell::Text("a,b".into())]
    );
    assert_eq!(t.rows[1].line, 4);
    let labels = t.labels(&["x", "z"]).expect("columns exist");
    assert_eq!(
        labels,
        vec![vec![Some("1"), None], vec![Some("2"), Some("4")]]
    );
}

/// JSON numbers: integral floats print as integers, other numbers verbatim.
#[test]
fn jsonl_number_cells() {
    let t = Table::parse(
        "{\"a\": 1.0, \"b\": 2.5, \"c\": -0.0, \"d\": {\"k\": 1}}\n",
        InputFormat::Jsonl,
    )
    .expect("parses");
    let cells: Vec<&Cell> = t.rows[0].cells.iter().collect();
    assert_eq!(cells[0], &Cell::Text("1".into()));
    assert_eq!(cells[1], &Cell::Text("2.5".into()));
    assert_eq!(cells[2], &Cell::Text("0".into()));
    assert_eq!(cells[3], &Cell::Text("{\"k\":1}".into()));
}

#[test]
fn jsonl_rejects_non_objects_with_line_numbers() {
    let err =
        Table::parse("{\"a\":1}\n\n[1,2]\n", InputFormat::Jsonl).expect_err("line 3 is an array");
    assert!(err.to_string().starts_with("line 3"), "{err}");
}
