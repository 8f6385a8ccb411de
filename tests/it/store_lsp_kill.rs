//! Spec: two language servers (the real `crosscheck lsp` binary) write cross-check records to
//! the same per-user store at once; one is killed with SIGKILL while it is writing. The
//! database stays sound (`PRAGMA integrity_check` = ok) and keeps every record either server
//! reported as committed before the kill, plus everything the survivor wrote afterwards.

use crate::lsp_process;

use crosscheck::store::{RecordFilter, Store, StoreConfig};
use serde_json::json;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(60);

/// `n` small functions, each with a command injection (one question, one record each);
/// `tag` keeps two documents' functions distinct (different text, different cache keys).
fn source(tag: &str, n: usize) -> String {
    let mut s = String::from("import os\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "def {tag}_{i}(xs):\n    out = 0\n    for x in xs:\n        if x > {i}:\n            out += x\n    os.system(input() + str(out))\n    return out\n\n"
        );
    }
    s
}

fn recorded(st: &serde_json::Value) -> u64 {
    st["scheduler"]["recorded"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_the_store_and_a_sigkill_loses_no_committed_record() {
    // Slow enough that the kill lands while checks are still being answered and written.
    let answer = json!({"answer": "yes", "reasoning": "input reaches the shell"});
    let server = lsp_process::mock_llm(answer, Duration::from_millis(15), (50, 20)).await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 20\nretries = 0\n\
             [lsp.llm]\ndebounce_ms = 0\n",
            server.uri()
        ),
    )
    .unwrap();
    let n = 60;
    let (text_a, text_b) = (source("alpha", n), source("beta", n));
    let (file_a, file_b) = (dir.path().join("a.py"), dir.path().join("b.py"));
    std::fs::write(&file_a, &text_a).unwrap();
    std::fs::write(&file_b, &text_b).unwrap();
    let uri_a = format!("file://{}", file_a.display());
    let uri_b = format!("file://{}", file_b.display());

    let mut a = lsp_process::start(&config, &data, dir.path()).await;
    let b = lsp_process::start(&config, &data, dir.path()).await;
    lsp_process::open_python(&a.client, &uri_a, &text_a).await;
    lsp_process::open_python(&b.client, &uri_b, &text_b).await;

    // Let A commit some records (both servers are writing now), then SIGKILL it mid-stream.
    let deadline = Instant::now() + T;
    let committed_a = loop {
        let st = lsp_process::status(&a.client).await;
        let r = recorded(&st);
        if r >= 5 {
            break r;
        }
        assert!(Instant::now() < deadline, "server A recorded nothing: {st}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    a.child.kill().expect("SIGKILL server A");
    a.child.wait().expect("reap server A");
    assert!(
        committed_a < n as u64,
        "the kill should land before A finished ({committed_a} of {n})"
    );

    // B carries on to the end and exits cleanly.
    let st_b = lsp_process::wait_idle(&b.client, T).await;
    let committed_b = recorded(&st_b);
    assert_eq!(committed_b, n as u64, "B asked about every finding: {st_b}");
    lsp_process::stop(b, T).await;

    let store = Store::open(&data.join("crosscheck.db"), StoreConfig::default()).expect("reopen");
    assert_eq!(store.integrity_check().unwrap(), vec!["ok".to_string()]);
    let total = store
        .records(&RecordFilter::default())
        .expect("records")
        .len() as u64;
    assert!(
        total >= committed_a + committed_b,
        "lost records: {total} stored, A reported {committed_a} and B {committed_b} committed"
    );
    assert!(
        total <= n as u64 + committed_b,
        "more records than checks: {total}"
    );
}
