//! `crosscheck telemetry summary` on a hand-built set whose figures were worked out by hand
//! (the 2x2 tables and coefficients are in the comments).

use crate::store_support;

use std::collections::BTreeMap;

use crosscheck::crosscheck::record::{CrossCheckRecord, HumanLabel, Tier};
use crosscheck::telemetry::summarize_store;
use crosscheck::telemetry::summary::{summarize, AgreementFigures, GroupSummary};
use store_support::{bin, open, record, temp_db, verdict_record};

fn close(actual: Option<f64>, expected: f64, what: &str) {
    let a = actual.unwrap_or_else(|| panic!("{what} is undefined, expected {expected}"));
    assert!(
        (a - expected).abs() < 1e-12,
        "{what}: got {a}, expected {expected}"
    );
}

/// Group `taint / python / model-a`: binary verdicts. LLM (a) against analyzer (b):
/// TP 4, FP 1, FN 2, TN 3 (n = 10), plus a tied LLM vote and a record whose only sample did
/// not parse (both without an LLM verdict).
fn taint_records() -> Vec<CrossCheckRecord> {
    let mut rs = Vec::new();
    let mut add = |analyzer: bool, llm: &[bool]| {
        let i = rs.len();
        rs.push(verdict_record(
            &format!("t{i}"),
            1_000 + i as i64,
            analyzer,
            llm,
        ));
    };
    add(true, &[true]);
    add(true, &[true, true, false]); // majority yes
    add(true, &[true]);
    add(true, &[true]); // TP x4
    add(false, &[true]); // FP
    add(true, &[false]);
    add(true, &[false, false, true]); // FN x2
    add(false, &[false]);
    add(false, &[false]);
    add(false, &[false]); // TN x3
    add(true, &[true, false]); // tie: no LLM verdict
    add(false, &[true]);
    if let Some(last) = rs.last_mut() {
        last.samples[0].parsed = false; // unparsed samples do not vote
    }
    rs[0].tier = Some(Tier::Confirmed);
    rs[4].tier = Some(Tier::LlmOnly);
    rs[5].tier = Some(Tier::AnalyzerOnly);
    rs
}

/// Group `ast / java / model-b`: Layer-1 pass/fail with scores, instability, latency.
fn ast_records() -> Vec<CrossCheckRecord> {
    let pass = [true, true, true, true, false, false];
    let gap = [0.1, 0.2, 0.3, 0.0, 0.5, 0.9];
    let instability = [0.0, 0.0, 1.0 / 3.0, 0.0, 2.0 / 3.0, 0.0];
    let latency = [1000, 2000, 3000, 1000, 2000, 3000];
    (0..6)
        .map(|i| {
            let mut r = record(&format!("a{i}"), 2_000 + i as i64);
            r.language = "java".into();
            r.model = "model-b".into();
            r.pass = Some(pass[i]);
            r.scores = BTreeMap::from([("statement_gap".to_string(), gap[i])]);
            r.instability = instability[i];
            r.latency_ms = latency[i];
            r.samples[0].from_cache = i == 0;
            r.tier = Some(match i {
                4 => Tier::Refuted,
                5 => Tier::LlmOnly,
                _ => Tier::Confirmed,
            });
            r
        })
        .collect()
}

/// Latest human verdicts: pass (a) against human (b) on the ast group is
/// (1,1) x3 [a0 a1 a2], (1,0) [a3], (0,0) [a4], (0,1) [a5]; one taint record is labelled
/// although it has no pass/fail.
fn latest_labels() -> BTreeMap<String, bool> {
    [
        ("a0", true),
        ("a1", true),
        ("a2", true),
        ("a3", false),
        ("a4", false),
        ("a5", true),
        ("t0", true),
        ("finding:not-a-record", false),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn check_llm_vs_analyzer(a: &Option<AgreementFigures>) {
    let a = a.as_ref().expect("paired verdicts");
    assert_eq!(a.n, 10);
    close(a.po, 0.7, "Po");
    // Pe = (5*6 + 5*4) / 100 = 0.5
    close(a.kappa, 0.4, "kappa");
    // pooled: yes 11/20, no 9/20; Pe = 0.55^2 + 0.45^2 = 0.505
    close(a.scott_pi, (0.7 - 0.505) / (1.0 - 0.505), "Scott's pi");
    // Pe = 2 * 0.55 * 0.45 = 0.495
    close(a.ac1, (0.7 - 0.495) / (1.0 - 0.495), "AC1");
    close(a.pabak, 0.4, "PABAK");
    close(a.precision, 0.8, "precision");
    close(a.recall, 4.0 / 6.0, "recall");
    close(a.f1, 8.0 / 11.0, "F1");
    // Acc(neg) = 3/4, Acc(pos) = 4/6
    close(a.gap, 0.75 - 4.0 / 6.0, "gap");
}

fn check_pass_vs_human(a: &Option<AgreementFigures>) {
    let a = a.as_ref().expect("labelled records with pass");
    assert_eq!(a.n, 6);
    close(a.po, 4.0 / 6.0, "Po");
    // marginals: pass 4/2, human 4/2; Pe = (16 + 4) / 36
    close(a.kappa, 0.25, "kappa");
    // pooled yes 8/12: Pe = 2 * 2/3 * 1/3 = 4/9; AC1 = (2/3 - 4/9) / (5/9)
    close(a.ac1, 0.4, "AC1");
    close(a.pabak, 1.0 / 3.0, "PABAK");
    close(a.precision, 0.75, "precision");
    close(a.recall, 0.75, "recall");
    close(a.f1, 0.75, "F1");
}

fn check_ast_group(g: &GroupSummary) {
    assert_eq!(
        (g.task.as_str(), g.language.as_str(), g.model.as_str()),
        ("ast", "java", "model-b")
    );
    assert_eq!(g.records, 6);
    assert_eq!(
        (
            g.tiers.confirmed,
            g.tiers.refuted,
            g.tiers.llm_only,
            g.tiers.untiered
        ),
        (4, 1, 1, 0)
    );
    assert_eq!((g.pass.passed, g.pass.failed, g.pass.unscored), (4, 2, 0));
    close(g.pass.rate, 4.0 / 6.0, "pass rate");
    let s = &g.scores["statement_gap"];
    assert_eq!(s.n, 6);
    assert!((s.mean - 2.0 / 6.0).abs() < 1e-12 && s.min == 0.0 && s.max == 0.9);
    // Within the paper's 0.30 (inclusive): 0.1, 0.2, 0.3, 0.0.
    close(s.pass_rate, 4.0 / 6.0, "statement_gap pass rate");
    assert!(g.llm_vs_analyzer.is_none(), "ASTs carry no binary verdict");
    assert_eq!((g.human.labelled, g.human.correct), (6, 4));
    check_pass_vs_human(&g.pass_vs_human);
    close(g.instability_mean, 1.0 / 6.0, "instability");
    close(g.latency_ms_mean, 2000.0, "latency");
    close(g.prompt_tokens_mean, 400.0, "prompt tokens");
    assert_eq!(
        (g.prompt_tokens_total, g.completion_tokens_total),
        (2400, 720)
    );
    close(g.cache_hit_rate, 1.0 / 6.0, "cache hits");
}

fn check_taint_group(g: &GroupSummary) {
    assert_eq!(
        (g.task.as_str(), g.language.as_str(), g.model.as_str()),
        ("taint", "python", "model-a")
    );
    assert_eq!(g.records, 12);
    check_llm_vs_analyzer(&g.llm_vs_analyzer);
    assert_eq!(g.llm_verdict_missing, 2);
    assert_eq!(
        (
            g.tiers.confirmed,
            g.tiers.llm_only,
            g.tiers.analyzer_only,
            g.tiers.untiered
        ),
        (1, 1, 1, 9)
    );
    assert_eq!((g.pass.passed, g.pass.failed, g.pass.unscored), (0, 0, 12));
    assert_eq!(g.pass.rate, None);
    assert_eq!((g.human.labelled, g.human.correct), (1, 1));
    assert!(
        g.pass_vs_human.is_none(),
        "the labelled record has no pass/fail"
    );
    assert!(g.scores.is_empty());
    // 1+3+1+1+1+1+3+1+1+1+2+1 samples
    assert_eq!(g.samples, 17);
}

#[test]
fn per_group_figures_match_the_hand_computed_tables() {
    let mut all = ast_records();
    all.extend(taint_records());
    let summary = summarize(&all, latest_labels());
    assert_eq!(summary.records, 18);
    assert_eq!(summary.labelled, 7);
    assert_eq!(summary.groups.len(), 2);
    check_ast_group(&summary.groups[0]);
    check_taint_group(&summary.groups[1]);
}

#[test]
fn the_total_pools_every_group() {
    let mut all = taint_records();
    all.extend(ast_records());
    let t = summarize(&all, latest_labels()).total;
    assert_eq!((t.task.as_str(), t.records), ("*", 18));
    check_llm_vs_analyzer(&t.llm_vs_analyzer);
    check_pass_vs_human(&t.pass_vs_human);
    assert_eq!((t.human.labelled, t.human.correct), (7, 5));
    assert_eq!(t.tiers.confirmed, 5);
    close(t.pass.rate, 4.0 / 6.0, "pass rate");
}

#[test]
fn reordering_records_changes_no_count_or_coefficient() {
    let mut all = ast_records();
    all.extend(taint_records());
    let forward = summarize(&all, latest_labels());
    all.reverse();
    let backward = summarize(&all, latest_labels());
    for (f, b) in forward.groups.iter().zip(&backward.groups) {
        // Integer tallies: exactly equal. Float sums: equal up to rounding.
        assert_eq!(f.llm_vs_analyzer, b.llm_vs_analyzer);
        assert_eq!(f.pass_vs_human, b.pass_vs_human);
        assert_eq!((f.tiers, f.pass, f.human), (b.tiers, b.pass, b.human));
        for (name, s) in &f.scores {
            assert!((s.mean - b.scores[name].mean).abs() < 1e-12);
        }
        close(
            b.instability_mean,
            f.instability_mean.unwrap(),
            "instability",
        );
    }
}

#[test]
fn score_pass_rates_use_the_paper_thresholds_of_the_language() {
    let mut rs = Vec::new();
    for (i, lang) in ["c", "python"].iter().enumerate() {
        let mut r = record(&format!("s{i}"), i as i64);
        r.language = lang.to_string();
        r.scores = BTreeMap::from([
            ("statement_gap".to_string(), 0.33), // C: <= 0.35 passes; others: > 0.30 fails
            ("call_fabrication".to_string(), 0.12), // <= 0.12 passes (inclusive)
            ("house_score".to_string(), 0.0),    // no paper threshold
        ]);
        rs.push(r);
    }
    let summary = summarize(&rs, BTreeMap::new());
    let c = &summary.groups[0];
    let python = &summary.groups[1];
    assert_eq!(c.language, "c");
    close(c.scores["statement_gap"].pass_rate, 1.0, "C statement_gap");
    close(
        python.scores["statement_gap"].pass_rate,
        0.0,
        "Python statement_gap",
    );
    close(
        summary.total.scores["statement_gap"].pass_rate,
        0.5,
        "pooled",
    );
    close(
        summary.total.scores["call_fabrication"].pass_rate,
        1.0,
        "call_fabrication",
    );
    assert_eq!(summary.total.scores["house_score"].pass_rate, None);
}

#[test]
fn an_empty_store_summarises_to_nothing_without_failing() {
    let s = summarize(&[], BTreeMap::new());
    assert_eq!((s.records, s.groups.len()), (0, 0));
    assert!(s.total.llm_vs_analyzer.is_none());
    assert_eq!(s.total.latency_ms_mean, None);
    assert_eq!(s.to_text(), "no records\n");
}

#[test]
fn the_store_summary_uses_the_latest_label_of_each_record() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.insert_records(&ast_records()).unwrap();
    store.insert_records(&taint_records()).unwrap();
    for (subject, correct) in latest_labels() {
        let label = HumanLabel {
            subject: subject.clone(),
            correct,
            timestamp: 100,
            note: None,
        };
        store.add_label(&label).unwrap();
        // An older, opposite verdict that the latest one overrides.
        store
            .add_label(&HumanLabel {
                correct: !correct,
                timestamp: 50,
                ..label
            })
            .unwrap();
    }
    let (summary, skipped) = summarize_store(&store, None).unwrap();
    assert_eq!(skipped, 0);
    check_ast_group(&summary.groups[0]);
    check_taint_group(&summary.groups[1]);
    // --since keeps only the ast records (timestamps 2000..2005).
    let (recent, _) = summarize_store(&store, Some(2_000)).unwrap();
    assert_eq!(recent.records, 6);
    assert_eq!(recent.groups.len(), 1);
}

#[test]
fn the_cli_prints_the_summary_as_json_and_text() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.insert_records(&ast_records()).unwrap();
        store.insert_records(&taint_records()).unwrap();
    }
    let run = |format: &str| {
        let out = std::process::Command::new(bin())
            .args(["telemetry", "summary", "--format", format, "--db"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["records"], 18);
    let taint = &json["groups"][1];
    assert_eq!(taint["task"], "taint");
    assert_eq!(taint["llm_vs_analyzer"]["n"], 10);
    assert!((taint["llm_vs_analyzer"]["kappa"].as_f64().unwrap() - 0.4).abs() < 1e-12);
    assert_eq!(json["groups"][0]["tiers"]["llm-only"], 1);
    let text = run("text");
    assert!(
        text.contains("taint / python / model-a: 12 record(s)"),
        "{text}"
    );
    assert!(
        text.contains("LLM vs analyzer (n=10): Po 0.700 kappa 0.400"),
        "{text}"
    );
    assert!(
        text.contains("pass rate: 0.667 (4 passed, 2 failed, 0 unscored)"),
        "{text}"
    );
}
