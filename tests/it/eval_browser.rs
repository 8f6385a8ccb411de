//! Spec: the HTML report of `crosscheck eval` opens in headless Chromium (Debian's package)
//! with every chart drawn. The report comes from a hermetic run (our JSONL fixture and a
//! scripted fake LLM); the screenshot must not be blank. Fails, never skips, when chromium is
//! missing (`.ci/run` installs it).

use crate::eval_support;

use crosscheck::crosscheck::engine::CheckSettings;
use crosscheck::crosscheck::prompts::PromptLibrary;
use crosscheck::eval::adapters::parse_jsonl;
use crosscheck::eval::metrics::compute;
use crosscheck::eval::report::{write_reports, ReportInfo, CHART_IDS};
use crosscheck::eval::run::{run_eval, EvalContext, EvalOptions};
use crosscheck::llm::{FakeClient, FakeReply, LlmClient};
use crosscheck::stats::bootstrap::BootstrapOptions;
use crosscheck::syntax::Cancel;
use eval_support::{png_stats, screenshot};
use std::path::Path;
use std::sync::Arc;

#[test]
fn the_html_report_renders_every_chart_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/eval/items.jsonl"),
    )
    .unwrap();
    let mut errors = Vec::new();
    let items = parse_jsonl(&text, &mut errors);
    let client = Arc::new(FakeClient::from_fn(|req| {
        let props = req
            .json_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .cloned()
            .unwrap_or_default();
        if props.get("answers").is_some() {
            FakeReply::text("{\"answers\": [{\"id\": 1, \"verdict\": \"yes\"}, {\"id\": 2, \"verdict\": \"no\"}]}")
        } else if props.get("category").is_some() {
            FakeReply::text("{\"category\": \"async_wait\"}")
        } else {
            FakeReply::text("{\"verdict\": \"no\"}")
        }
    }));
    let prompts = PromptLibrary::builtin();
    let ctx = EvalContext {
        clients: vec![client as Arc<dyn LlmClient>],
        settings: CheckSettings::default(),
        prompts: &prompts,
        backend: None,
        now: 0,
        cancel: Cancel::never(),
        progress: None,
    };
    let summary = run_eval(&items, dir.path(), &EvalOptions::default(), &ctx).unwrap();
    let m = compute(
        &summary.results,
        &BootstrapOptions {
            resamples: 200,
            ..BootstrapOptions::default()
        },
        &Cancel::never(),
    );
    write_reports(dir.path(), &ReportInfo::default(), &m, &summary).unwrap();
    let html_path = dir.path().join("report.html");
    let html = std::fs::read_to_string(&html_path).unwrap();
    for id in CHART_IDS {
        let at = html
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id}"));
        let svg = &html[at..];
        assert!(svg.contains("<svg"), "{id}");
        let end = svg.find("</svg>").unwrap();
        assert!(
            svg[..end].contains("<rect") || svg[..end].contains("<circle"),
            "{id} draws shapes"
        );
    }
    let png = screenshot(&html_path, dir.path());
    let (colours, ink) = png_stats(&png);
    assert!(
        colours >= 20,
        "only {colours} distinct colours: blank page?"
    );
    assert!(ink >= 0.02, "only {:.1}% non-white pixels", ink * 100.0);
}
