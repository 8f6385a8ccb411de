//! Spec: hostile code and hostile answers never crash a cross-check. 300-level nesting and a
//! 4 MB one-line expression are prepared and checked for every task on the test thread's
//! ordinary stack; absurd answers (deep nesting, huge lists, wild line numbers, dangling ids)
//! give results or clear errors, quickly.

use crate::crosscheck_support;

use crosscheck::crosscheck::answers::{parse_call_graph, parse_cfg, parse_points_to};
use crosscheck::crosscheck::cache::AnswerCache;
use crosscheck::crosscheck::engine::{normalise, score, CheckSettings, TaskThresholds};
use crosscheck::crosscheck::facts::{prepare, FileFacts, PrepareOptions};
use crosscheck::crosscheck::scores::cfg::{score_cfg, CfgThresholds};
use crosscheck::crosscheck::task::Task;
use crosscheck::syntax::{Cancel, Language, ParsedFile};
use crosscheck_support::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn deep_python(levels: usize) -> String {
    let mut s = String::from("def deep(a):\n");
    for i in 0..levels {
        s.push_str(&" ".repeat(4 * (i + 1)));
        s.push_str(&format!("if a > {i}:\n"));
    }
    s.push_str(&" ".repeat(4 * (levels + 1)));
    s.push_str("a = f(a)\n    return a\n");
    s
}

fn long_expression_c(bytes: usize) -> String {
    let mut s = String::from("int wide(int a) {\n    int *p = &a;\n    int x = 1");
    while s.len() < bytes {
        s.push_str("+1");
    }
    s.push_str(";\n    return x + *p;\n}\n");
    s
}

async fn check_all_tasks(name: &str, lang: Language, text: String, tasks: &[Task]) {
    let file = ParsedFile::parse(lang, text);
    let taint = stand_in_taint();
    for &task in tasks {
        let start = Instant::now();
        let mut facts = FileFacts::new(name, &file);
        assert_eq!(facts.functions.len(), 1, "{name}");
        let q = prepare(
            task,
            &mut facts,
            0,
            Some(&taint),
            &PrepareOptions::default(),
            &Cancel::never(),
        )
        .unwrap_or_else(|e| panic!("{name} {task}: {e}"));
        let answer = perfect_answer(&q);
        let client = answering(answer);
        // A deep perfect AST answer may exceed the JSON nesting limit: an error, not a crash.
        let result = check(
            &q,
            &[dyn_client(&client)],
            &CheckSettings::default(),
            &AnswerCache::default(),
            None,
        )
        .await;
        if let Ok(o) = &result {
            assert_eq!(o.analyzer, q.reference.to_json());
        }
        let empty = answering(empty_answer(task));
        let o = check(
            &q,
            &[dyn_client(&empty)],
            &CheckSettings::default(),
            &AnswerCache::default(),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("{name} {task}: {e}"));
        assert!(matches!(o.tier.name(), "confirmed" | "analyzer-only"));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{name} {task}: {:?}",
            start.elapsed()
        );
    }
}

#[tokio::test]
async fn three_hundred_levels_of_nesting() {
    check_all_tasks(
        "deep.py",
        Language::Python,
        deep_python(300),
        &[
            Task::Ast,
            Task::Cfg,
            Task::CallGraph,
            Task::DataDependency,
            Task::Taint,
        ],
    )
    .await;
}

#[tokio::test]
async fn a_four_megabyte_one_line_expression() {
    check_all_tasks(
        "wide.c",
        Language::C,
        long_expression_c(4 * 1024 * 1024),
        &[
            Task::Ast,
            Task::Cfg,
            Task::CallGraph,
            Task::DataDependency,
            Task::PointsTo,
        ],
    )
    .await;
}

#[test]
fn absurd_answers_are_read_or_refused_without_panicking() {
    let q = question("inventory.py", Task::Cfg, "total");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let wild_lines = json!({
        "nodes": [
            {"id": "a", "type": "entry", "line": -5},
            {"id": "b", "type": "loop", "line": 18446744073709551615u64},
            {"id": "b", "type": "branch", "line": 1e300},
            {"id": "c", "type": {"nested": "object"}, "line": "line 3", "end_line": 1},
            {"id": null, "type": "statement", "lines": [9, 2, 7]},
            {"type": "exit", "line": 0}
        ],
        "edges": [["a", "b"], ["b", "b"], ["c", "zz"], [1, 2, 3], {"from": "c"}, "edge"]
    })
    .to_string();
    let many_nodes = json!({
        "nodes": (0..50_000).map(|i| json!({"id": i, "type": "statement", "line": i % 7 + 1})).collect::<Vec<_>>(),
        "edges": (0..100_000).map(|i| json!({"from": i % 50_000, "to": (i * 7919) % 50_000})).collect::<Vec<_>>(),
    })
    .to_string();
    assert!(many_nodes.len() > 4_000_000);
    let start = Instant::now();
    for text in [
        deep.as_str(),
        wild_lines.as_str(),
        many_nodes.as_str(),
        "",
        "{",
        "null",
        "\u{0}\u{feff}",
    ] {
        if let Ok(a) = normalise(&q.reference, text) {
            let s = score(&q.reference, &a, &TaskThresholds::default());
            assert!(
                s.scores.values().all(|v| (0.0..=1.0).contains(v)),
                "{:?}",
                s.scores
            );
        }
    }
    let g = parse_cfg(&many_nodes).unwrap();
    assert!(g.nodes.len() <= crosscheck::crosscheck::scores::cfg::MAX_NODES);
    assert!(g.edges.len() <= crosscheck::crosscheck::scores::cfg::MAX_EDGES);
    let wild = parse_cfg(&wild_lines).unwrap();
    assert_eq!(wild.nodes[0].spans, []);
    assert_eq!(wild.nodes[1].spans, [], "absurd lines are dropped");
    assert_eq!(wild.nodes[4].spans, [(2, 9)]);
    // Scoring a huge candidate against itself stays bounded and exact enough to pass.
    let s = score_cfg(&g, &g, false, &CfgThresholds::default());
    assert!(s.jump_redundancy <= 1.0);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    // Other normalisers on hostile shapes.
    assert!(parse_call_graph(
        r#"{"calls": [1, null, [], {"callee": 5}, {"callee": {"x": 1}}]}"#,
        Some("f")
    )
    .is_ok());
    assert!(
        parse_points_to(r#"{"points_to": [{"pointer": "***", "targets": [null, 1, "&"]}]}"#)
            .is_ok()
    );
}
