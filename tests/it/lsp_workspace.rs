//! Workspace-level behaviour: indexing with `$/progress`, files changed on disk
//! (`didChangeWatchedFiles`), interprocedural findings refreshed in callers when a callee
//! changes (in the editor or on disk), related information pointing into other files.

use crate::lsp_support;

use crosscheck::lsp::findings::{Finding, FindingProvider, Related, Severity, WorkspaceView};
use crosscheck::syntax::functions::collect_functions;
use crosscheck::syntax::Cancel;
use lsp_support::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A stand-in interprocedural analysis: a call, in any file, to a function whose body holds
/// the marker `SOURCE` is reported at the call, with the callee's definition as related
/// information (the shape of a taint path).
struct MarkedCallee;

impl FindingProvider for MarkedCallee {
    fn name(&self) -> &str {
        "marked-callee"
    }
    fn findings(&self, ws: &WorkspaceView<'_>, _: &Cancel) -> BTreeMap<String, Vec<Finding>> {
        let mut marked = Vec::new();
        for u in ws.units {
            for f in collect_functions(u.file) {
                if u.file.node_text(f.node).contains("SOURCE") {
                    marked.push((f.simple_name.clone(), u.path.clone(), f.start_line));
                }
            }
        }
        let mut out: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
        for u in ws.units {
            for (i, line) in u.file.text.lines().enumerate() {
                for (name, file, def_line) in &marked {
                    if *file != u.path && line.contains(&format!("{name}(")) {
                        let mut f = Finding::new(
                            "marked-callee",
                            Severity::Warning,
                            i + 1,
                            format!("calls `{name}`, which reads a source"),
                        );
                        f.related.push(Related {
                            file: file.clone(),
                            line: *def_line,
                            message: format!("`{name}` is defined here"),
                        });
                        out.entry(u.path.clone()).or_default().push(f);
                    }
                }
            }
        }
        out
    }
}

fn opts() -> crosscheck::lsp::ServerOptions {
    let mut o = no_llm();
    o.providers = vec![Arc::new(MarkedCallee)];
    o
}

const CALLER: &str = "from helper import helper\n\ndef main():\n    x = helper()\n    return x\n";
const CLEAN_HELPER: &str = "def helper():\n    return 1\n";
const MARKED_HELPER: &str = "def helper():\n    return SOURCE\n";

#[tokio::test]
async fn indexing_reports_progress_and_reads_files_not_open_in_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        std::fs::write(dir.path().join(format!("m{i}.py")), "def f():\n    pass\n").unwrap();
    }
    std::fs::write(dir.path().join("notes.txt"), "not code").unwrap();
    let (c, _s) = start(opts(), init_params(Some(dir.path()), false, Value::Null)).await;
    c.wait_message("window/workDoneProgress/create", 0, T, |_| true)
        .await
        .expect("progress token created");
    c.wait_message("$/progress", 0, T, |p| p["value"]["kind"] == "begin")
        .await
        .expect("progress begin");
    let (_, end) = c
        .wait_message("$/progress", 0, T, |p| p["value"]["kind"] == "end")
        .await
        .expect("progress end");
    assert_eq!(end["value"]["message"], "3 files");
    assert_eq!(status(&c).await["workspace_files"], 3);
    // The client was asked to watch source files, crosscheck.toml and .gitignore.
    let (_, reg) = c
        .wait_message("client/registerCapability", 0, T, |_| true)
        .await
        .expect("watcher registration");
    assert_eq!(
        reg["registrations"][0]["method"],
        "workspace/didChangeWatchedFiles"
    );
}

#[tokio::test]
async fn a_callee_changed_on_disk_refreshes_its_callers_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let helper = dir.path().join("helper.py");
    std::fs::write(&helper, CLEAN_HELPER).unwrap();
    let (c, _s) = start(opts(), init_params(Some(dir.path()), false, Value::Null)).await;
    c.wait_message("$/progress", 0, T, |p| p["value"]["kind"] == "end")
        .await
        .unwrap();
    let main = file_uri(&dir.path().join("main.py"));
    open(&c, &main, "python", 1, CALLER).await;
    assert!(diagnostics(&c, &main, 1).await.is_empty());
    // The callee changes outside the editor.
    std::fs::write(&helper, MARKED_HELPER).unwrap();
    let from = c.log_len();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&helper), "type": 2}]}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == main.as_str() && p["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
        })
        .await
        .expect("caller republished");
    assert_eq!(p["version"], 1);
    let d = &p["diagnostics"][0];
    assert_eq!(d["code"], "marked-callee");
    assert_eq!(d["range"]["start"]["line"], 3);
    assert_eq!(d["data"]["tier"], "analyzer-only");
    let rel = &d["relatedInformation"][0];
    assert_eq!(rel["location"]["uri"], file_uri(&helper));
    assert_eq!(rel["location"]["range"]["start"]["line"], 0);
    assert_eq!(
        rel["location"]["range"]["end"]["character"], 13,
        "`def helper():`"
    );
    // Deleting the callee file clears the finding.
    std::fs::remove_file(&helper).unwrap();
    let from = c.log_len();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&helper), "type": 3}]}),
    )
    .await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == main.as_str()
        })
        .await
        .unwrap();
    assert!(p["diagnostics"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn editing_a_callee_in_the_editor_refreshes_its_callers_in_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _s) = start(opts(), init_params(Some(dir.path()), false, Value::Null)).await;
    let main = file_uri(&dir.path().join("main.py"));
    let helper = file_uri(&dir.path().join("helper.py"));
    open(&c, &main, "python", 1, CALLER).await;
    open(&c, &helper, "python", 1, MARKED_HELPER).await;
    diagnostics(&c, &helper, 1).await;
    c.wait_message("textDocument/publishDiagnostics", 0, T, |p| {
        p["uri"] == main.as_str() && p["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
    })
    .await
    .expect("caller flagged");
    // Remove the marker from the callee: the caller (another file, not edited) is cleared.
    let from = c.log_len();
    change(
        &c,
        &helper,
        2,
        json!([{"range": range(1, 11, 1, 17), "text": "1"}]),
    )
    .await;
    diagnostics(&c, &helper, 2).await;
    let (_, p) = c
        .wait_message("textDocument/publishDiagnostics", from, T, |p| {
            p["uri"] == main.as_str()
        })
        .await
        .expect("caller refreshed");
    assert!(p["diagnostics"].as_array().unwrap().is_empty(), "{p}");
    assert_eq!(p["version"], 1, "the caller's own version");
}

const LIB: &str = "def helper(x):\n    return x\n";
const APP: &str = "from lib import helper\n\n\ndef main():\n    return helper(1)\n";

async fn wait_call_edges(c: &crosscheck::lsp::client::LspClient, at_least: u64) -> Value {
    let deadline = std::time::Instant::now() + T;
    loop {
        let st = status(c).await;
        if st["call_edges"].as_u64().unwrap_or(0) >= at_least {
            return st;
        }
        assert!(std::time::Instant::now() < deadline, "no call graph: {st}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn hover_lists_callers_and_callees_from_the_workspace_call_graph() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _s) = start(no_llm(), init_params(Some(dir.path()), false, Value::Null)).await;
    let lib = file_uri(&dir.path().join("lib.py"));
    let app = file_uri(&dir.path().join("app.py"));
    open(&c, &lib, "python", 1, LIB).await;
    open(&c, &app, "python", 1, APP).await;
    diagnostics(&c, &app, 1).await;
    wait_call_edges(&c, 1).await;
    let h = hover_text(&c, &lib, 0, 5).await;
    assert!(h.contains("**Callers** (1): `main` (app.py:5)"), "{h}");
    let h = hover_text(&c, &app, 3, 5).await;
    assert!(h.contains("**Callees** (1): `helper`"), "{h}");
    // The call is removed in the caller: the callee's hover follows.
    change(
        &c,
        &app,
        2,
        json!([{"range": range(4, 11, 4, 20), "text": "1"}]),
    )
    .await;
    diagnostics(&c, &app, 2).await;
    let deadline = std::time::Instant::now() + T;
    loop {
        let h = hover_text(&c, &lib, 0, 5).await;
        if h.contains("**Callers** (0): none") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "callers never refreshed: {h}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

fn tagged(fake: &crosscheck::llm::FakeClient, from: usize) -> Vec<String> {
    let mut v: Vec<String> = fake.requests()[from..]
        .iter()
        .map(|r| {
            r.tag
                .clone()
                .unwrap_or_default()
                .rsplit(':')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    v.sort();
    v
}

/// Function tasks follow edits: a changed function is asked about again (its CFG and call
/// graph), its callers in other files are not (their questions do not contain it), and an
/// unchanged function never is.
#[tokio::test]
async fn an_edit_asks_about_the_changed_function_only() {
    let dir = tempfile::tempdir().unwrap();
    let fake = scripted("yes");
    let (c, _s) = start(
        with_fake(fake.clone(), 0),
        init_params(Some(dir.path()), false, Value::Null),
    )
    .await;
    let lib = file_uri(&dir.path().join("lib.py"));
    let app = file_uri(&dir.path().join("app.py"));
    open(&c, &lib, "python", 1, LIB).await;
    open(&c, &app, "python", 1, APP).await;
    diagnostics(&c, &app, 1).await;
    let st = wait_call_edges(&c, 1).await;
    let generation = st["workspace_generation"].as_u64().unwrap();
    wait_llm_idle(&c).await;
    assert_eq!(
        fake.request_count(),
        0,
        "nothing to ask on open: no taint finding, no edit"
    );
    let before = fake.request_count();
    change(
        &c,
        &lib,
        2,
        json!([{"range": range(1, 12, 1, 12), "text": " + 1"}]),
    )
    .await;
    diagnostics(&c, &lib, 2).await;
    wait_generation(&c, generation + 1).await;
    wait_llm_idle(&c).await;
    assert_eq!(tagged(&fake, before), vec!["helper".to_string(); 2]);
    let st = status(&c).await;
    let generation = st["workspace_generation"].as_u64().unwrap();
    let before = fake.request_count();
    change(
        &c,
        &lib,
        3,
        json!([{"range": range(0, 12, 0, 12), "text": ", y=0"}]),
    )
    .await;
    diagnostics(&c, &lib, 3).await;
    wait_generation(&c, generation + 1).await;
    wait_llm_idle(&c).await;
    assert_eq!(tagged(&fake, before), vec!["helper".to_string(); 2]);
}

async fn wait_generation(c: &crosscheck::lsp::client::LspClient, at_least: u64) {
    let deadline = std::time::Instant::now() + T;
    while status(c).await["workspace_generation"]
        .as_u64()
        .unwrap_or(0)
        < at_least
    {
        assert!(
            std::time::Instant::now() < deadline,
            "workspace analysis did not run"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A slow workspace analysis (about two seconds unless cancelled) that records how each run
/// ended and which text of `main.py` it saw.
#[derive(Default)]
struct SlowProvider {
    started: std::sync::atomic::AtomicUsize,
    interrupted: std::sync::atomic::AtomicUsize,
    completed_texts: std::sync::Mutex<Vec<String>>,
}

impl FindingProvider for SlowProvider {
    fn name(&self) -> &str {
        "slow"
    }
    fn findings(&self, ws: &WorkspaceView<'_>, cancel: &Cancel) -> BTreeMap<String, Vec<Finding>> {
        use std::sync::atomic::Ordering;
        self.started.fetch_add(1, Ordering::SeqCst);
        for _ in 0..200 {
            if cancel.is_cancelled() {
                self.interrupted.fetch_add(1, Ordering::SeqCst);
                return BTreeMap::new();
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let text = ws
            .units
            .iter()
            .find(|u| u.path.ends_with("main.py"))
            .map(|u| u.file.text.clone())
            .unwrap_or_default();
        self.completed_texts.lock().unwrap().push(text);
        BTreeMap::new()
    }
}

/// A server whose only workspace analysis is a [`SlowProvider`], with `main.py` (`return 1`)
/// open and published.
async fn slow_server() -> (
    Arc<SlowProvider>,
    crosscheck::lsp::client::LspClient,
    tokio::task::JoinHandle<i32>,
    &'static str,
) {
    let slow = Arc::new(SlowProvider::default());
    let mut o = no_llm();
    o.providers = vec![slow.clone()];
    let (c, s) = start(o, init_params(None, false, Value::Null)).await;
    let main = "file:///ws/main.py";
    open(&c, main, "python", 1, "def f():\n    return 1\n").await;
    diagnostics(&c, main, 1).await;
    (slow, c, s, main)
}

#[tokio::test]
async fn an_edit_interrupts_a_running_workspace_analysis_which_then_settles_on_the_new_text() {
    use std::sync::atomic::Ordering;
    let (slow, c, _s, main) = slow_server().await;
    // Wait until the workspace analysis of version 1 is running, then edit.
    let deadline = std::time::Instant::now() + T;
    while slow.started.load(Ordering::SeqCst) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no workspace analysis"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    change(
        &c,
        main,
        2,
        json!([{"range": range(1, 11, 1, 12), "text": "2"}]),
    )
    .await;
    diagnostics(&c, main, 2).await;
    wait_llm_idle(&c).await;
    assert!(
        slow.interrupted.load(Ordering::SeqCst) >= 1,
        "the stale run went on"
    );
    // The run that completed last saw the edited text.
    let done = slow.completed_texts.lock().unwrap().clone();
    assert_eq!(
        done.last().map(String::as_str),
        Some("def f():\n    return 2\n")
    );
    assert!(!done.iter().any(|t| t.contains("return 1")), "{done:?}");
}

/// A workspace analysis that took longer than the debounce sets the pause in edits the next
/// one waits for: while edits come faster than that, no run starts (none is started only to
/// be interrupted by the next keystroke); once they stop, one run settles on the last text.
#[tokio::test]
async fn a_slow_workspace_analysis_waits_for_a_pause_as_long_as_it_took() {
    use std::sync::atomic::Ordering;
    let (slow, c, _s, main) = slow_server().await;
    // Every run has ended (the first took about two seconds) and none is pending.
    let deadline = std::time::Instant::now() + T;
    loop {
        let ended =
            slow.completed_texts.lock().unwrap().len() + slow.interrupted.load(Ordering::SeqCst);
        let st = status(&c).await;
        if ended >= 1
            && ended == slow.started.load(Ordering::SeqCst)
            && st["workspace_pending"] == false
        {
            assert!(
                st["workspace_quiet_ms"].as_u64().unwrap_or(0) >= 1500,
                "{st}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not settled: {st}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let started = slow.started.load(Ordering::SeqCst);
    let interrupted = slow.interrupted.load(Ordering::SeqCst);
    // Edits 0.3 s apart for about two and a half seconds.
    for v in 2..=9 {
        change(
            &c,
            main,
            v,
            json!([{"range": range(1, 11, 1, 12), "text": v.to_string()}]),
        )
        .await;
        diagnostics(&c, main, v).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    assert_eq!(
        slow.started.load(Ordering::SeqCst),
        started,
        "a workspace analysis started while edits went on"
    );
    assert_eq!(slow.interrupted.load(Ordering::SeqCst), interrupted);
    // Once edits pause, one run settles on the last text.
    let deadline = std::time::Instant::now() + T;
    loop {
        let done = slow.completed_texts.lock().unwrap().clone();
        if done.last().map(String::as_str) == Some("def f():\n    return 9\n") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{done:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(slow.started.load(Ordering::SeqCst), started + 1);
}

/// Waits until indexing and the workspace analysis after it are done.
async fn settled(c: &crosscheck::lsp::client::LspClient, generation_above: u64) -> Value {
    let deadline = std::time::Instant::now() + T;
    loop {
        let st = status(c).await;
        if st["indexing"] == false
            && st["workspace_pending"] == false
            && st["workspace_generation"].as_u64().unwrap_or(0) > generation_above
        {
            return st;
        }
        assert!(std::time::Instant::now() < deadline, "not settled: {st}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Closed files are held as text; their trees (most of the memory) live while their family is
/// analysed and stay only in the families of open documents, without changing any finding.
#[tokio::test]
async fn closed_files_keep_their_trees_only_in_the_families_of_open_documents() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.c"),
        "#include <stdlib.h>\n#include <stdio.h>\nvoid run(char *b) { system(b); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.c"),
        "#include <stdio.h>\nvoid run(char *b);\nint main(void) {\n    char b[64];\n    fgets(b, 64, stdin);\n    run(b);\n    return 0;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("x.py"), "def helper():\n    return 1\n").unwrap();
    std::fs::write(dir.path().join("y.py"), "def other():\n    return 2\n").unwrap();
    let (c, _s) = start(no_llm(), init_params(Some(dir.path()), false, Value::Null)).await;
    let st = settled(&c, 0).await;
    assert_eq!(st["workspace_files"], 4, "{st}");
    assert_eq!(st["workspace_parsed_files"], 0, "no document open: {st}");
    // A Python document opens: the Python files keep their parses, the C files do not.
    let z = file_uri(&dir.path().join("z.py"));
    open(
        &c,
        &z,
        "python",
        1,
        "from x import helper\n\ndef main():\n    return helper()\n",
    )
    .await;
    diagnostics(&c, &z, 1).await;
    let generation = st["workspace_generation"].as_u64().unwrap();
    let st = settled(&c, generation).await;
    assert_eq!(st["workspace_parsed_files"], 2, "x.py and y.py: {st}");
    assert!(st["call_edges"].as_u64().unwrap() >= 1, "{st}");
    // The C document opens: its family's other file is kept too.
    let b = file_uri(&dir.path().join("b.c"));
    open(
        &c,
        &b,
        "c",
        1,
        &std::fs::read_to_string(dir.path().join("b.c")).unwrap(),
    )
    .await;
    let generation = st["workspace_generation"].as_u64().unwrap();
    let st = settled(&c, generation).await;
    assert_eq!(st["workspace_parsed_files"], 3, "x.py, y.py and a.c: {st}");
}

/// Records how many units each workspace analysis saw.
struct CountsUnits(Arc<std::sync::Mutex<Vec<usize>>>);

impl FindingProvider for CountsUnits {
    fn name(&self) -> &str {
        "counts-units"
    }
    fn findings(&self, ws: &WorkspaceView<'_>, _: &Cancel) -> BTreeMap<String, Vec<Finding>> {
        self.0.lock().unwrap().push(ws.units.len());
        BTreeMap::new()
    }
}

/// A document opened while the folder is still being read wakes the workspace analysis, which
/// waits for the reading to end: no run analyses part of the workspace only to be redone whole
/// (on a three-folder workspace that second run was the server's memory peak).
#[tokio::test]
async fn the_workspace_analysis_waits_for_indexing_and_runs_once_over_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = 600;
    for i in 0..files {
        std::fs::write(
            dir.path().join(format!("m{i:03}.py")),
            format!("def f{i}(x):\n    return x + {i}\n"),
        )
        .unwrap();
    }
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut o = no_llm();
    o.providers = vec![Arc::new(CountsUnits(Arc::clone(&seen)))];
    let (c, _s) = start(o, init_params(Some(dir.path()), false, Value::Null)).await;
    // Opened at once, while the files are being read: its analysis wakes the workspace loop.
    let doc = file_uri(&dir.path().join("m000.py"));
    open(&c, &doc, "python", 1, "def f0(x):\n    return x + 0\n").await;
    let st = settled(&c, 0).await;
    assert_eq!(st["workspace_files"], files, "{st}");
    let runs = seen.lock().unwrap().clone();
    assert!(!runs.is_empty(), "{st}");
    assert!(
        runs.iter().all(|&n| n == files),
        "units seen per run: {runs:?}"
    );
}

/// `crosscheck bench-lsp --workspace` end to end on a small workspace: every file indexed and
/// counted, each edit answered, memory read from the process.
#[tokio::test]
async fn the_workspace_benchmark_measures_a_real_folder() {
    use crosscheck::lsp::bench_workspace::{run, WorkspaceBenchOptions};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "import os\n\ndef f(x):\n    os.system(x)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.c"),
        "int g(int x) {\n    return x + 1;\n}\n",
    )
    .unwrap();
    let opts = WorkspaceBenchOptions {
        folders: vec![dir.path().to_path_buf()],
        open: dir.path().join("a.py"),
        edits: 3,
        interval_ms: 10,
        edit_line: None,
    };
    let r = run(&opts).await.unwrap();
    assert_eq!(r.files, 2, "{r:?}");
    assert_eq!(r.lines, 7, "{r:?}");
    assert_eq!(r.edits, 3);
    assert!(
        r.edit_max_ms > 0.0 && r.edit_median_ms <= r.edit_max_ms,
        "{r:?}"
    );
    assert!(r.peak_mib >= r.settled_mib && r.settled_mib > 0.0, "{r:?}");
    assert!(r.to_text().contains("2 files, 7 lines"), "{}", r.to_text());
    // Edits while indexing stop once the server has settled (two files settle quickly).
    assert!(r.indexing_edits <= 3, "{r:?}");
    assert!(r.indexing_edit_median_ms <= r.indexing_edit_max_ms, "{r:?}");
    assert!(r.to_text().contains("while indexing"), "{}", r.to_text());
    // The edit inside the function (line 4), and a line the file does not have.
    let inside = WorkspaceBenchOptions {
        edit_line: Some(4),
        ..opts.clone()
    };
    assert_eq!(run(&inside).await.unwrap().edits, 3);
    let past = WorkspaceBenchOptions {
        edit_line: Some(9),
        ..opts
    };
    let err = run(&past).await.unwrap_err();
    assert!(err.contains("no line 9"), "{err}");
}
