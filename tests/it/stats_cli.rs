//! `crosscheck stats` end to end (in-process through `run_with`): input formats, output
//! formats, the McNemar / instability / Jaccard modes, seeds and declared categories.

use crate::stats_support;

use stats_support::{assert_close, fixture, num, stats, stats_json, temp_file};

const CONTRACT_KEYS: [&str; 9] = [
    "n",
    "po",
    "kappa",
    "scott_pi",
    "ac1",
    "pabak",
    "precision",
    "recall",
    "f1",
];

#[test]
fn json_report_has_every_contract_key() {
    let r = stats_json(&fixture("wikipedia_kappa.csv"), "rater_a", "rater_b", &[]);
    for key in CONTRACT_KEYS {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    for key in [
        "skipped",
        "acc_pos",
        "acc_neg",
        "gap",
        "ci",
        "notes",
        "per_class",
        "macro_f1",
    ] {
        assert!(r.get(key).is_some(), "missing extra {key}");
    }
}

/// Wikipedia table: a's accuracy on b-positive items = 20/30, on b-negative = 15/20,
/// Gap = 0.75 - 2/3 = 1/12.
#[test]
fn decision_gap_is_acc_neg_minus_acc_pos() {
    let r = stats_json(&fixture("wikipedia_kappa.csv"), "rater_a", "rater_b", &[]);
    assert_close(num(&r, "acc_pos"), 2.0 / 3.0, 1e-12, "acc_pos");
    assert_close(num(&r, "acc_neg"), 0.75, 1e-12, "acc_neg");
    assert_close(num(&r, "gap"), 0.75 - 2.0 / 3.0, 1e-12, "gap");
}

/// Swapping --a and --b swaps precision and recall and leaves kappa unchanged.
#[test]
fn reference_column_is_b() {
    let f = fixture("wikipedia_kappa.csv");
    let ab = stats_json(&f, "rater_a", "rater_b", &["--bootstrap", "0"]);
    let ba = stats_json(&f, "rater_b", "rater_a", &["--bootstrap", "0"]);
    assert_eq!(ab["precision"], ba["recall"]);
    assert_eq!(ab["recall"], ba["precision"]);
    assert_eq!(ab["kappa"], ba["kappa"]);
}

/// Three-tier labels (pass / minor / fail), hand-derived (rows a, columns b, order
/// fail/minor/pass): [[2,0,1],[1,1,1],[0,1,3]]; Po = 0.6; kappa = (60-35)/(100-35);
/// Scott = (240-142)/(400-142); AC1 (q=3) = (480-258)/(800-258); PABAK = (18-10)/20;
/// per-class F1: fail 2/3, minor 2/5, pass 2/3; macro F1 = 26/45.
#[test]
fn multiclass_three_tier_coefficients() {
    let r = stats_json(&fixture("three_tier.csv"), "llm", "human", &[]);
    assert_eq!(r["mode"], "multiclass");
    assert_eq!(
        r["categories"],
        serde_json::json!(["fail", "minor", "pass"])
    );
    assert_close(num(&r, "po"), 0.6, 1e-12, "po");
    assert_close(num(&r, "kappa"), 25.0 / 65.0, 1e-12, "kappa");
    assert_close(num(&r, "scott_pi"), 98.0 / 258.0, 1e-12, "scott_pi");
    assert_close(num(&r, "ac1"), 222.0 / 542.0, 1e-12, "ac1");
    assert_close(num(&r, "pabak"), 0.4, 1e-12, "pabak");
    assert_close(num(&r, "macro_f1"), 26.0 / 45.0, 1e-12, "macro_f1");
    assert_close(num(&r, "/per_class/1/f1"), 0.4, 1e-12, "minor f1");
    assert_close(
        num(&r, "/per_class/1/precision"),
        1.0 / 3.0,
        1e-12,
        "minor precision",
    );
    assert_close(num(&r, "/per_class/1/recall"), 0.5, 1e-12, "minor recall");
    for key in ["precision", "recall", "f1", "acc_pos", "acc_neg", "gap"] {
        assert!(r[key].is_null(), "{key} is binary-only");
    }
    assert_eq!(
        r["confusion"]["matrix"],
        serde_json::json!([[2, 0, 1], [1, 1, 1], [0, 1, 3]])
    );
}

/// Declaring an unused fourth category changes q: AC1 = (3·4·10·6 - 258)/(3·400 - 258),
/// PABAK = (4·6 - 10)/(3·10); kappa, Scott's pi and macro F1 do not move.
#[test]
fn declared_categories_set_q_for_ac1_and_pabak_only() {
    let f = fixture("three_tier.csv");
    let base = stats_json(&f, "llm", "human", &["--bootstrap", "0"]);
    let four = stats_json(
        &f,
        "llm",
        "human",
        &["--bootstrap", "0", "--categories", "pass,minor,fail,unsure"],
    );
    assert_eq!(num(&four, "q"), 4.0);
    assert_eq!(
        four["categories"],
        serde_json::json!(["pass", "minor", "fail", "unsure"])
    );
    assert_close(num(&four, "ac1"), 462.0 / 942.0, 1e-12, "ac1 q=4");
    assert_close(num(&four, "pabak"), 14.0 / 30.0, 1e-12, "pabak q=4");
    assert_close(num(&four, "kappa"), num(&base, "kappa"), 1e-15, "kappa");
    assert_close(
        num(&four, "scott_pi"),
        num(&base, "scott_pi"),
        1e-15,
        "scott_pi",
    );
    assert_close(
        num(&four, "macro_f1"),
        num(&base, "macro_f1"),
        1e-15,
        "macro_f1",
    );
}

/// The same labels as CSV, TSV, JSONL and a JSON array give identical coefficients; the
/// format is detected from the extension, else from the content.
#[test]
fn csv_tsv_jsonl_and_json_array_agree() {
    let csv = temp_file("fmt.csv", b"a,b\n1,1\n0,1\n1,0\n0,0\n1,1\n");
    let tsv = temp_file("fmt.tsv", b"a\tb\n1\t1\n0\t1\n1\t0\n0\t0\n1\t1\n");
    let jsonl = temp_file(
        "fmt.data",
        b"{\"a\":1,\"b\":1}\n{\"a\":0,\"b\":1}\n{\"a\":1,\"b\":0}\n{\"a\":0,\"b\":0}\n{\"a\":1,\"b\":1}\n",
    );
    let array = temp_file(
        "fmt.json",
        b"[{\"a\":true,\"b\":true},{\"a\":false,\"b\":true},{\"a\":true,\"b\":false},\n\
          {\"a\":false,\"b\":false},{\"a\":true,\"b\":true}]",
    );
    let reference = stats_json(&csv, "a", "b", &[]);
    for file in [&tsv, &jsonl, &array] {
        let r = stats_json(file, "a", "b", &[]);
        for key in CONTRACT_KEYS {
            assert_eq!(r[key], reference[key], "{key} differs for {file}");
        }
        assert_eq!(r["ci"], reference["ci"], "ci differs for {file}");
    }
}

/// `--input-format` overrides detection.
#[test]
fn input_format_override() {
    let f = temp_file("semicolon.txt", b"a\tb\nyes\tno\nno\tno\n");
    let r = stats_json(&f, "a", "b", &["--input-format", "tsv"]);
    assert_eq!(num(&r, "n"), 2.0);
}

/// The text format is a readable table with the coefficient names, the confusion matrix and
/// the interval column.
#[test]
fn text_format_is_a_readable_table() {
    let out = stats(&[
        "--input",
        &fixture("wikipedia_kappa.csv"),
        "--a",
        "rater_a",
        "--b",
        "rater_b",
    ]);
    assert_eq!(out.code, 0);
    for needle in [
        "confusion (rows: a, columns: b)",
        "Cohen's kappa               0.4000",
        "Gwet's AC1",
        "Scott's pi",
        "PABAK                       0.4000",
        "95% CI (percentile bootstrap, 10000 resamples, seed 0x5eed)",
        "gap = acc(neg) - acc(pos)   0.0833",
    ] {
        assert!(
            out.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            out.stdout
        );
    }
}

/// Same seed → identical intervals; another seed → different ones; intervals bracket the
/// point estimate here.
#[test]
fn bootstrap_is_seeded_and_reproducible() {
    let f = fixture("wikipedia_kappa.csv");
    let one = stats_json(&f, "rater_a", "rater_b", &[]);
    let two = stats_json(&f, "rater_a", "rater_b", &["--seed", "24301"]);
    let other = stats_json(&f, "rater_a", "rater_b", &["--seed", "7"]);
    assert_eq!(one["ci"]["seed"], 0x5eed);
    assert_eq!(one["ci"], two["ci"], "0x5eed == 24301");
    assert_ne!(one["ci"]["kappa"], other["ci"]["kappa"]);
    assert_eq!(one["ci"]["resamples"], 10_000);
    for key in ["kappa", "ac1", "pabak", "f1"] {
        let (lo, hi) = (
            num(&one, &format!("/ci/{key}/lo")),
            num(&one, &format!("/ci/{key}/hi")),
        );
        let point = num(&one, key);
        assert!(
            lo < point && point < hi,
            "{key}: {point} not in [{lo}, {hi}]"
        );
    }
}

#[test]
fn bootstrap_resample_count_is_configurable() {
    let r = stats_json(
        &fixture("wikipedia_kappa.csv"),
        "rater_a",
        "rater_b",
        &["--bootstrap", "200"],
    );
    assert_eq!(r["ci"]["resamples"], 200);
    assert_eq!(r["ci"]["kappa"]["valid"], 200);
}

/// McNemar, exact branch through the CLI. Counted by hand: both correct 2, only a correct 1,
/// only b correct 6, both wrong 1 → exact p = 0.125 (derivation in stats_published).
#[test]
fn mcnemar_exact_via_cli() {
    let mut csv = String::from("a,b,truth\n");
    csv += "1,1,1\n0,0,0\n"; // both correct
    csv += "1,0,1\n"; // only a correct
    for _ in 0..6 {
        csv += "0,1,1\n"; // only b correct
    }
    csv += "1,1,0\n"; // both wrong
    csv += "1,,0\n"; // skipped
    let f = temp_file("mcnemar_exact.csv", csv.as_bytes());
    let out = stats(&[
        "--mcnemar",
        "--input",
        &f,
        "--a",
        "a",
        "--b",
        "b",
        "--truth",
        "truth",
        "--format",
        "json",
    ]);
    let r = out.json();
    assert_eq!(r["n"], 10);
    assert_eq!(r["skipped"], 1);
    assert_eq!(r["both_correct"], 2);
    assert_eq!(r["a_only_correct"], 1);
    assert_eq!(r["b_only_correct"], 6);
    assert_eq!(r["both_wrong"], 1);
    assert_eq!(r["method"], "exact_binomial");
    assert_close(num(&r, "p_value"), 0.125, 1e-12, "p");
    assert_close(num(&r, "acc_a"), 0.3, 1e-12, "acc_a");
    assert_close(num(&r, "acc_b"), 0.8, 1e-12, "acc_b");
    let text = stats(&[
        "--mcnemar",
        "--input",
        &f,
        "--a",
        "a",
        "--b",
        "b",
        "--truth",
        "truth",
    ]);
    assert!(
        text.stdout.contains("exact two-sided binomial"),
        "{}",
        text.stdout
    );
}

/// 24 discordant pairs → exact; 25 → chi-square.
#[test]
fn mcnemar_switches_to_chi_square_at_25_discordant_pairs() {
    for (discordant, method) in [(24, "exact_binomial"), (25, "chi_square_corrected")] {
        let mut csv = String::from("a,b,truth\n");
        for i in 0..discordant {
            csv += if i % 3 == 0 { "1,0,1\n" } else { "0,1,1\n" };
        }
        let f = temp_file(&format!("mcnemar_{discordant}.csv"), csv.as_bytes());
        let r = stats(&[
            "--mcnemar",
            "--input",
            &f,
            "--a",
            "a",
            "--b",
            "b",
            "--truth",
            "truth",
            "--format",
            "json",
        ])
        .json();
        assert_eq!(r["discordant"], discordant);
        assert_eq!(r["method"], method);
    }
}

#[test]
fn mcnemar_requires_truth() {
    let out = stats(&[
        "--mcnemar",
        "--input",
        &fixture("mcnemar_agresti.csv"),
        "--a",
        "model_a",
        "--b",
        "model_b",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--truth"), "{}", out.stderr);
}

/// runs.csv: items 2 and 4 split 2-1, items 1 and 3 unanimous, item 5 incomplete (skipped):
/// unstable share 2/4, mean disagreement (0 + 1/3 + 0 + 1/3)/4 = 1/6.
#[test]
fn instability_over_three_runs() {
    let out = stats(&[
        "--instability",
        "--input",
        &fixture("runs.csv"),
        "--runs",
        "run1,run2,run3",
        "--format",
        "json",
    ]);
    let r = out.json();
    assert_eq!(r["n"], 4);
    assert_eq!(r["runs"], 3);
    assert_eq!(r["skipped"], 1);
    assert_eq!(r["unstable"], 2);
    assert_close(num(&r, "unstable_share"), 0.5, 1e-12, "unstable_share");
    assert_close(
        num(&r, "mean_disagreement"),
        1.0 / 6.0,
        1e-12,
        "mean_disagreement",
    );
    assert_eq!(r["majority_ties"], 0);
    let text = stats(&[
        "--instability",
        "--input",
        &fixture("runs.csv"),
        "--runs",
        "run1,run2,run3",
    ]);
    assert!(
        text.stdout.contains("share not unanimous"),
        "{}",
        text.stdout
    );
}

#[test]
fn instability_needs_two_runs() {
    let out = stats(&[
        "--instability",
        "--input",
        &fixture("runs.csv"),
        "--runs",
        "run1",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("at least two"), "{}", out.stderr);
}

/// sets.jsonl: J = 1, 1/3, undefined (both empty), 0; item 5 skipped (null).
/// mean = (1 + 1/3 + 0)/3 = 4/9; micro = (2+1+0+0)/(2+3+0+2) = 3/7.
#[test]
fn jaccard_over_set_columns_jsonl_and_csv() {
    for file in ["sets.jsonl", "sets.csv"] {
        let out = stats(&[
            "--jaccard",
            "--input",
            &fixture(file),
            "--a",
            "llm",
            "--b",
            "callgraph",
            "--format",
            "json",
        ]);
        let r = out.json();
        assert_eq!(r["n"], 4, "{file}");
        assert_close(num(&r, "mean"), 4.0 / 9.0, 1e-12, "mean");
        assert_close(num(&r, "micro"), 3.0 / 7.0, 1e-12, "micro");
        assert_eq!(r["exact_matches"], 2);
        assert_eq!(r["both_empty"], 1);
    }
    let r = stats(&[
        "--jaccard",
        "--input",
        &fixture("sets.jsonl"),
        "--a",
        "llm",
        "--b",
        "callgraph",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(r["skipped"], 1);
}

/// Mode flags are mutually exclusive at the argument level.
#[test]
fn modes_conflict() {
    use clap::Parser;
    #[derive(Parser)]
    struct W {
        #[command(flatten)]
        args: crosscheck::cli::stats::StatsArgs,
    }
    let err = W::try_parse_from(["stats", "--input", "x", "--mcnemar", "--instability"]);
    assert!(err.is_err());
    let err = W::try_parse_from(["stats", "--input", "x", "--jaccard", "--instability"]);
    assert!(err.is_err());
}
